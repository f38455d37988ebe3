/* core/measure/run.c - running one built kernel in an isolated worker.
 *
 * The parent forks a worker for every run, which runs the toolchain's run
 * function (toolchain.h).  The host toolchain's worker loads the kernel
 * with dlopen, fills the output with NaN (so a kernel that writes nothing
 * fails the check), warms up once, checks the output against the reference,
 * times `repeat` repeats of `number` calls (growing `number` until a repeat
 * lasts min_repeat_ms, as TVM does), checks the output again, sends a small
 * fixed-size report through a pipe and leaves with _exit.  The parent waits
 * on the pipe with the timeout and then collects the worker: a crash or a
 * hang costs only this candidate, never the tuner.
 *
 * The worker is a fork of the parent, so it sees the inputs and the
 * reference without copying them, and writes the output into its own
 * copy-on-write copy of the scratch buffer.  For that to be safe the parent
 * must have no other threads: the parent is the runner (runner.c), which
 * never starts one, and the reference is computed without OpenMP.
 *
 * The parent side below serves every toolchain's worker.  An emulated
 * kernel (opts.emulate) is run by the host worker, but only once: its time
 * means nothing, so it is checked and reported without timing.
 *
 * A worker's stdout is a second pipe, which the parent drains whenever it
 * waits (for the report, for the worker's exit), so a kernel that prints -
 * even tens of megabytes - never blocks on a full pipe and never writes
 * into the tuner's output.  The parent keeps the first HERON__STDOUT_KEEP
 * bytes, counts the rest and notes both in the error text.
 */
#include "core/measure/worker.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util/util.h"

/* The one symbol every generated CPU kernel exports. */
#define KERNEL_SYMBOL "heron_kernel"
typedef void (*kernel_fn)(void *const *bufs);

/* Caches are flushed by writing through a buffer at least this large, or
 * twice the last-level cache when the machine reports a bigger one. */
#define FLUSH_BYTES_MIN (64u << 20)

typedef heron__run_report run_report;

/* ---- worker side --------------------------------------------------------- */

/* Reads output element i as a double, for error messages, the way the op
 * module stores elements of the output's dtype. */
static double elem_value(const heron__op *op, const void *p, int64_t i) {
  return heron__elem_get(p, op->out_dtype, i);
}

/* `when` tells whether this is the check after warm-up or the one after
 * timing. */
int heron__worker_check(const heron__bench *b, const void *out,
                        const char *when, run_report *r) {
  double max_err = 0;
  int64_t bad = -1;
  int ok = heron__op_check(b->op, out, b->ref, &max_err, &bad);
  /* NaN or infinite errors (a NaN output) are reported as the largest
   * double: the measurement ends up in a JSON log, where only finite
   * numbers can be written. */
  if (!isfinite(max_err))
    max_err = DBL_MAX;
  if (max_err > r->max_error)
    r->max_error = max_err;
  if (ok)
    return 1;
  r->status = HERON_MEAS_WRONG_RESULT;
  if (bad >= 0)
    snprintf(r->text, sizeof r->text,
             "wrong result %s: first bad element %lld is %g, expected %g; "
             "max relative error %.3g",
             when, (long long)bad, elem_value(b->op, out, bad),
             elem_value(b->op, b->ref, bad), max_err);
  else
    snprintf(r->text, sizeof r->text,
             "wrong result %s: max relative error %.3g", when, max_err);
  return 0;
}

/* Evicts the caches by writing one byte per 64-byte line of `buf`; the
 * volatile stores cannot be optimised away. */
static void flush_caches(volatile unsigned char *buf, size_t n,
                         unsigned char v) {
  for (size_t i = 0; i < n; i += 64)
    buf[i] = v;
}

/* What the timing loop (core/measure/timing.h) calls back. */
typedef struct timed {
  kernel_fn fn;
  void *const *bufs;
  unsigned char *flush;
  size_t flush_n;
} timed;

static double time_calls(void *ctx, long long number) {
  const timed *c = ctx;
  double t0 = heron__now();
  for (long long i = 0; i < number; i++)
    c->fn(c->bufs);
  return heron__now() - t0;
}

static void before_repeat(void *ctx, int r) {
  const timed *c = ctx;
  flush_caches(c->flush, c->flush_n, (unsigned char)r);
}

size_t heron__buffer_bytes(const heron__op *op, int i) {
  /* The bias has the output's element type, an int8 op's inputs u8 and s8
   * (core/op/dtype.c). */
  const heron__tensor *t = i < op->ninputs    ? &op->in[i]
                           : i == op->ninputs ? &op->out
                                              : &op->bias;
  int dtype = heron__op_buf_dtype(op, i);
  return (size_t)heron__tensor_elems(t) * (size_t)heron__dtype_size(dtype);
}

/* Times the kernel: `repeat` repeats of `number` calls, each preceded by a
 * cache flush when asked.  A repeat shorter than min_repeat_ms does not
 * count; `number` grows (to what the last repeat suggests, at least 1.6x)
 * and the repeat is run again.  Returns the median seconds per call, or a
 * negative value when out of memory. */
static double time_kernel(const heron__bench *b, kernel_fn fn,
                          void *const *bufs) {
  const heron_measure_options *o = &b->opts;
  double *per_call = malloc(sizeof(double) * (size_t)o->repeat);
  unsigned char *flush = NULL;
  size_t flush_n = FLUSH_BYTES_MIN;
  if (o->flush_cache) {
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc > 0 && (size_t)llc * 2 > flush_n)
      flush_n = (size_t)llc * 2;
    flush = malloc(flush_n);
  }
  if (!per_call || (o->flush_cache && !flush)) {
    free(per_call);
    free(flush);
    return -1;
  }
  timed c = {fn, bufs, flush, flush_n};
  double median = heron__time_repeats(
      o, time_calls, flush ? before_repeat : NULL, &c, per_call);
  free(per_call);
  free(flush);
  return median;
}

/* Makes crashes in the worker end it by the signal itself: no core files,
 * and default dispositions for the fatal signals, because a host's (or
 * AddressSanitizer's) handler would otherwise turn a SIGSEGV into an
 * ordinary exit and hide which signal it was. */
void heron__worker_prepare(heron__bench *b) {
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  static const int fatal[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL,
                              SIGABRT, SIGTRAP, SIGSYS};
  sigset_t set;
  sigemptyset(&set);
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
    signal(fatal[i], SIG_DFL);
    sigaddset(&set, fatal[i]);
  }
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  if (b->runner_fd >= 0)
    close(b->runner_fd);
}

void heron__worker_finish(int fd, const run_report *r) {
  /* What the kernel printed through stdio goes down the stdout pipe before
   * the report, so the parent has all of it once the report arrives; the
   * buffer holds only the worker's own output (the parent flushed its
   * stdio before forking). */
  fflush(stdout);
  ssize_t w;
  do
    w = write(fd, r, sizeof *r);
  while (w < 0 && errno == EINTR);
  _exit(0);
}

/* When the kernel exports heron_prepack: replaces each input it takes
 * packed (heron_prepacked_elems > 0, counted in elements of the input's
 * own type: floats in fp32, s8 weights in int8, bf16 in bf16) in kbufs
 * with a packed copy.  Returns
 * 0 with r filled in when the copy cannot be made.  The copies live until
 * the worker exits. */
static int prepack_inputs(void *lib, const heron__op *op, void **kbufs,
                          run_report *r) {
  void *pe = dlsym(lib, "heron_prepacked_elems");
  void *pk = dlsym(lib, "heron_prepack");
  if (!pe && !pk)
    return 1;
  if (!pe || !pk) {
    r->status = HERON_MEAS_RUNTIME_ERROR;
    snprintf(r->text, sizeof r->text, "the kernel exports %s without %s",
             pe ? "heron_prepacked_elems" : "heron_prepack",
             pe ? "heron_prepack" : "heron_prepacked_elems");
    return 0;
  }
  int64_t (*elems)(int);
  void (*pack)(int, const void *, void *);
  memcpy(&elems, &pe, sizeof elems);
  memcpy(&pack, &pk, sizeof pack);
  for (int i = 0; i < op->ninputs; i++) {
    int64_t n = elems(i);
    if (n <= 0)
      continue;
    size_t esize = (size_t)heron__dtype_size(heron__op_buf_dtype(op, i));
    size_t bytes = ((size_t)n * esize + 63) / 64 * 64;
    void *copy = aligned_alloc(64, bytes);
    if (!copy) {
      r->status = HERON_MEAS_RUNTIME_ERROR;
      snprintf(r->text, sizeof r->text,
               "worker out of memory for the packed copy of %s (%lld "
               "elements)",
               op->in[i].name, (long long)n);
      return 0;
    }
    pack(i, kbufs[i], copy);
    kbufs[i] = copy;
  }
  return 1;
}

/* The host worker's whole life (worker.h); never returns. */
void heron__host_run(heron__bench *b, const heron__artifact *a, int fd) {
  const char *so_path = a->path;
  double t_start = heron__now();
  run_report r;
  memset(&r, 0, sizeof r);
  r.status = HERON_MEAS_OK;
  heron__worker_prepare(b);

  /* libgomp reads OMP_NUM_THREADS when it is loaded, which happens inside
   * dlopen, so the variable must be set before. */
  char threads[32];
  snprintf(threads, sizeof threads, "%d", b->opts.threads);
  setenv("OMP_NUM_THREADS", threads, 1);

  void *lib = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    r.status = HERON_MEAS_RUNTIME_ERROR;
    /* The precision only keeps the compiler's truncation check quiet: the
     * text is cut to fit the report either way. */
    snprintf(r.text, sizeof r.text, "cannot load the kernel: %.350s",
             e ? e : so_path);
    heron__worker_finish(fd, &r);
  }
  dlerror();
  void *sym = dlsym(lib, KERNEL_SYMBOL);
  if (!sym) {
    const char *e = dlerror();
    r.status = HERON_MEAS_RUNTIME_ERROR;
    /* dlerror already names the file and the symbol. */
    snprintf(r.text, sizeof r.text,
             "kernel symbol " KERNEL_SYMBOL " not found: %s",
             e ? e : "the symbol's address is NULL");
    heron__worker_finish(fd, &r);
  }
  kernel_fn fn;
  memcpy(&fn, &sym, sizeof fn);

  /* Should libgomp have been initialised before the variable was set (a
   * host that had already loaded it), its thread count is set directly
   * too; dlsym on the kernel's handle also searches its dependencies. */
  void *set_threads = dlsym(lib, "omp_set_num_threads");
  if (set_threads) {
    void (*omp_set)(int);
    memcpy(&omp_set, &set_threads, sizeof omp_set);
    omp_set(b->opts.threads);
  }

  const heron__op *op = b->op;
  /* Inputs the kernel takes packed ahead of the calls (prepack): packed
   * once here, untimed, as a program would at load time; the kernel reads
   * the copies, and its output is checked as any other's. */
  void *kbufs[HERON__MAX_TENSORS + 2];
  memcpy(kbufs, b->bufs, sizeof(void *) * (size_t)heron__op_nbufs(op));
  if (!prepack_inputs(lib, op, kbufs, &r))
    heron__worker_finish(fd, &r);
  void *out = b->bufs[op->ninputs];
  size_t out_n = heron__buffer_bytes(op, op->ninputs);
  /* All-ones bytes are NaN in fp32 and fp16 and -1 in integer types: a
   * value no correct kernel leaves behind by accident. */
  memset(out, 0xff, out_n);

  double t_call = heron__now();
  fn(kbufs);
  t_call = heron__now() - t_call;
  if (!heron__worker_check(b, out, "after the first call", &r))
    heron__worker_finish(fd, &r);
  /* An emulated kernel is checked, never timed (seconds stay 0). */
  if (b->opts.emulate)
    heron__worker_finish(fd, &r);
  /* A kernel so slow that the timed repeats cannot end within the timeout
   * would be killed at the deadline anyway; saying so now saves the rest
   * of the wait (seconds per slow candidate, most of a random search's
   * time on big shapes).  The warm-up call is what the estimate rests on.
   * The text says how far into the worker's life it stopped, so that a
   * test can tell "after one call" from the worker's own clock rather
   * than from a wall time that a busy machine stretches. */
  double ran = heron__now() - t_start;
  double left = b->opts.timeout_s - ran;
  double need = t_call * (double)b->opts.repeat * (double)b->opts.number;
  if (need > left) {
    r.status = HERON_MEAS_TIMEOUT;
    snprintf(r.text, sizeof r.text,
             "run would exceed the %.1f s timeout: one call takes %.3g s and "
             "%d x %d timed calls remain (stopped %.2f s into the run)",
             b->opts.timeout_s, t_call, b->opts.repeat, b->opts.number, ran);
    heron__worker_finish(fd, &r);
  }

  double sec = time_kernel(b, fn, kbufs);
  if (sec < 0) {
    r.status = HERON_MEAS_RUNTIME_ERROR;
    snprintf(r.text, sizeof r.text, "worker out of memory for timing");
    heron__worker_finish(fd, &r);
  }
  /* Checked again: a kernel that reads its own output (accumulating
   * without clearing) or changes behaviour between calls is wrong too. */
  if (!heron__worker_check(b, out, "after timing", &r))
    heron__worker_finish(fd, &r);
  r.seconds = sec;
  heron__worker_finish(fd, &r);
}

/* ---- parent side --------------------------------------------------------- */

/* "SIGSEGV" for the signals kernels die of; NULL for others. */
static const char *signal_name(int sig) {
  switch (sig) {
  case SIGSEGV:
    return "SIGSEGV";
  case SIGBUS:
    return "SIGBUS";
  case SIGFPE:
    return "SIGFPE";
  case SIGILL:
    return "SIGILL";
  case SIGABRT:
    return "SIGABRT";
  case SIGTRAP:
    return "SIGTRAP";
  case SIGSYS:
    return "SIGSYS";
  case SIGKILL:
    return "SIGKILL";
  case SIGTERM:
    return "SIGTERM";
  case SIGXCPU:
    return "SIGXCPU";
  case SIGPIPE:
    return "SIGPIPE";
  case SIGINT:
    return "SIGINT";
  default:
    return NULL;
  }
}

static char *format_error(const char *fmt, ...) HERON_PRINTF(1, 2);
static char *format_error(const char *fmt, ...) {
  heron__buf buf = {0};
  va_list ap;
  va_start(ap, fmt);
  heron__buf_vprintf(&buf, fmt, ap);
  va_end(ap);
  return heron__buf_take(&buf);
}

/* The worker's stdout as the parent sees it: the pipe's read end, the
 * first bytes and the count of all. */
typedef struct out_capture {
  int fd;                        /* non-blocking read end; -1 at its end */
  char head[HERON__STDOUT_KEEP]; /* the first bytes printed */
  size_t kept;                   /* bytes in head */
  unsigned long long total;      /* bytes printed in all */
} out_capture;

/* One read from the stdout pipe (it never blocks): keeps what fits in the
 * head and counts everything.  Closes the pipe at end of file or on an
 * error; returns the bytes read (0 when there was nothing). */
static size_t capture_read(out_capture *c) {
  char buf[65536];
  if (c->fd < 0)
    return 0;
  ssize_t n;
  do
    n = read(c->fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return 0;
  if (n <= 0) {
    close(c->fd);
    c->fd = -1;
    return 0;
  }
  size_t room = sizeof c->head - c->kept;
  size_t keep = (size_t)n < room ? (size_t)n : room;
  memcpy(c->head + c->kept, buf, keep);
  c->kept += keep;
  c->total += (unsigned long long)n;
  return (size_t)n;
}

/* Drains what is left in the stdout pipe once the worker is gone: until
 * end of file, or until it is empty when something the kernel started
 * still holds it open, for at most a short while if that keeps writing. */
static void capture_finish(out_capture *c) {
  double until = heron__now() + 0.2;
  while (c->fd >= 0 && capture_read(c) > 0 && heron__now() < until)
    ;
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
}

/* Waits up to `ms` milliseconds for the stdout pipe, or simply sleeps
 * when it is closed (poll ignores a negative fd), and reads once if it has
 * data.  A kernel that prints is thus drained while the parent waits. */
static void capture_wait(out_capture *c, int ms) {
  struct pollfd p = {.fd = c->fd, .events = POLLIN};
  if (poll(&p, 1, ms) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)))
    capture_read(c);
}

/* Reads the report until it is complete, the worker closes the pipe, or
 * the deadline passes, draining the worker's stdout meanwhile.  Returns
 * the number of bytes of the report read. */
static size_t read_report(int fd, run_report *r, double deadline,
                          out_capture *out) {
  size_t got = 0;
  while (got < sizeof *r) {
    double left = deadline - heron__now();
    if (left <= 0)
      break;
    struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
                          {.fd = out->fd, .events = POLLIN}};
    int ms = (int)(left * 1000) + 1;
    int pr = poll(p, 2, ms);
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr <= 0)
      continue; /* timed out: the loop head sees the deadline */
    if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
      capture_read(out);
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
      continue;
    ssize_t n = read(fd, (char *)r + got, sizeof *r - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; /* end of file: the worker is gone */
    got += (size_t)n;
  }
  return got;
}

/* Waits for the worker to exit until the deadline, then kills it, draining
 * its stdout meanwhile (a worker flushing a full stdio buffer must not
 * block on the pipe).  Returns 1 when it had to be killed. */
static int reap_worker(pid_t pid, int *st, double deadline, out_capture *out) {
  double pause = 0.5;
  for (;;) {
    pid_t w = waitpid(pid, st, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR))
      return 0;
    if (heron__now() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, st, 0) < 0 && errno == EINTR)
        ;
      return 1;
    }
    capture_wait(out, (int)pause + 1);
    if (pause < 20)
      pause *= 1.5;
  }
}

/* Appends `n` bytes of `s` to `b` inside single quotes, escaped so that
 * the text stays one printable line: \n \r \t \\ \' and \xNN for other
 * bytes outside printable ASCII.  The quote ends in "..." when the escaped
 * text would pass `max` characters or when `cut` says the bytes are only
 * the start of the output. */
static void put_quoted(heron__buf *b, const char *s, size_t n, size_t max,
                       int cut) {
  heron__buf_puts(b, "'");
  size_t len = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    char e[8];
    if (ch == '\n' || ch == '\r' || ch == '\t')
      snprintf(e, sizeof e, "\\%c", ch == '\n' ? 'n' : ch == '\r' ? 'r' : 't');
    else if (ch == '\\' || ch == '\'')
      snprintf(e, sizeof e, "\\%c", ch);
    else if (ch < 0x20 || ch >= 0x7f)
      snprintf(e, sizeof e, "\\x%02x", ch);
    else
      snprintf(e, sizeof e, "%c", ch);
    size_t el = strlen(e);
    if (len + el > max) {
      cut = 1;
      break;
    }
    heron__buf_puts(b, e);
    len += el;
  }
  heron__buf_puts(b, cut ? "...'" : "'");
}

/* How much of a kernel's output the error text quotes: all of it (escaped,
 * up to OUT_QUOTE_MAX characters) when it fits in the kept head, else the
 * first OUT_EXCERPT bytes.  With the report's text (under 384 bytes) the
 * whole stays well inside the runner's 1024-byte reply. */
#define OUT_QUOTE_MAX 240
#define OUT_EXCERPT 64

/* Returns the error text with the note on the kernel's stdout appended
 * ("stdout: N bytes: '...'"), freeing `error`; `error` itself when the
 * kernel printed nothing or memory is short. */
static char *with_stdout_note(char *error, const out_capture *c) {
  if (c->total == 0)
    return error;
  heron__buf b = {0};
  if (error && *error)
    heron__buf_printf(&b, "%s; ", error);
  heron__buf_printf(&b, "stdout: %llu bytes", c->total);
  if (c->total <= sizeof c->head) {
    heron__buf_puts(&b, ": ");
    put_quoted(&b, c->head, c->kept, OUT_QUOTE_MAX, 0);
  } else {
    heron__buf_puts(&b, " (dropped): ");
    put_quoted(&b, c->head, c->kept < OUT_EXCERPT ? c->kept : OUT_EXCERPT,
               OUT_QUOTE_MAX, 1);
  }
  char *text = heron__buf_take(&b);
  if (!text)
    return error;
  free(error);
  return text;
}

/* Makes the stdout pipe: out[0] the parent's non-blocking read end, out[1]
 * the worker's write end, both close-on-exec.  The pipe is widened where
 * the system allows, so a chatty kernel wakes the parent less often. */
static int stdout_pipe(int out[2]) {
  if (pipe2(out, O_CLOEXEC) != 0)
    return -1;
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
#ifdef F_SETPIPE_SZ
  fcntl(out[0], F_SETPIPE_SZ, 1 << 20); /* best effort */
#endif
  return 0;
}

/* In the freshly forked worker: makes the stdout pipe its fd 1 (dup2
 * clears close-on-exec on the copy) and closes the rest.  `report` is the
 * report pipe's write end, moved off fd 1 should the parent's stdout have
 * been closed and the pipe taken that number.  Returns the report fd. */
static int worker_stdout(int report, const int out[2]) {
  if (report == STDOUT_FILENO)
    report = fcntl(report, F_DUPFD_CLOEXEC, 3);
  if (out[0] != STDOUT_FILENO)
    close(out[0]);
  if (out[1] != STDOUT_FILENO) {
    dup2(out[1], STDOUT_FILENO);
    close(out[1]);
  } else {
    fcntl(STDOUT_FILENO, F_SETFD, 0);
  }
  return report;
}

int heron__run_in_worker(heron__bench *b, const heron__artifact *a,
                         double flops, heron_measurement *m, char **error,
                         heron_error *err) {
  m->status = HERON_MEAS_RUNTIME_ERROR;
  m->seconds = m->gflops = m->max_error = 0;
  m->error = "";
  m->simulated = 0;
  *error = NULL;

  int fds[2], out[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return heron_error_set(err, HERON_ERUN, "cannot create a pipe: %s",
                           strerror(errno));
  if (stdout_pipe(out) != 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return heron_error_set(err, HERON_ERUN, "cannot create a pipe: %s",
                           strerror(e));
  }
  /* Anything buffered in stdio now would otherwise be printed twice if the
   * worker flushed it; the worker uses _exit, but a kernel may call exit. */
  fflush(NULL);
  double t0 = heron__now();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    close(out[0]);
    close(out[1]);
    return heron_error_set(err, HERON_ERUN, "cannot fork a worker: %s",
                           strerror(e));
  }
  if (pid == 0) {
    close(fds[0]);
    int report = worker_stdout(fds[1], out);
    b->tc.ops->run(b, a, report);
    _exit(127); /* not reached */
  }
  close(fds[1]);
  close(out[1]);

  out_capture cap;
  memset(&cap, 0, sizeof cap);
  cap.fd = out[0];
  double deadline = t0 + b->opts.timeout_s;
  run_report r;
  memset(&r, 0, sizeof r);
  size_t got = read_report(fds[0], &r, deadline, &cap);
  close(fds[0]);
  int st = 0;
  int killed = reap_worker(
      pid, &st, got == sizeof r ? heron__now() + 1.0 : deadline, &cap);
  /* When the worker was killed, measured from the fork: the timeout plus
   * however late this process woke for the deadline.  The text says it, so
   * that a test bounds the detection itself, not a wall time that a busy
   * machine stretches with everything around the run. */
  double killed_after = heron__now() - t0;
  capture_finish(&cap);

  if (killed && got < sizeof r) {
    m->status = HERON_MEAS_TIMEOUT;
    *error = format_error("run exceeded the %.1f s timeout (killed %.2f s "
                          "after the worker started)",
                          b->opts.timeout_s, killed_after);
  } else if (!killed && WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    const char *name = signal_name(sig);
    m->status = HERON_MEAS_RUNTIME_ERROR;
    *error = name
                 ? format_error("kernel crashed with %s (signal %d)", name, sig)
                 : format_error("kernel crashed with signal %d (%s)", sig,
                                strsignal(sig));
  } else if (got < sizeof r) {
    m->status = HERON_MEAS_RUNTIME_ERROR;
    *error = WIFEXITED(st) && WEXITSTATUS(st) != 0
                 ? format_error("worker exited with status %d before "
                                "reporting a result",
                                WEXITSTATUS(st))
                 : format_error("worker ended without a result (%zu of %zu "
                                "bytes)",
                                got, sizeof r);
  } else {
    r.text[sizeof r.text - 1] = '\0';
    m->status = r.status;
    m->max_error = r.max_error;
    if (r.status == HERON_MEAS_OK) {
      m->seconds = r.seconds;
      m->gflops = r.seconds > 0 ? flops / r.seconds / 1e9 : 0;
    } else {
      *error = format_error("%s", r.text);
    }
  }
  *error = with_stdout_note(*error, &cap);
  if (*error)
    m->error = *error;
  return HERON_OK;
}
