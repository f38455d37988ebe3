/* core/measure/build.c - building candidates, and the host toolchain's
 * builds: compiling C into shared objects.
 *
 * Each candidate's source is written to <work_dir>/k<seq> with the
 * toolchain's source extension and built by the toolchain into k<seq> with
 * its artifact extension, its diagnostics going to k<seq>.log.  Up to
 * build_jobs builds run at once: a small pool of threads takes candidates
 * from a shared counter.  A failing candidate never fails the batch, and
 * neither does the machinery: a source or log that cannot be written is
 * that candidate's failure.  Every thread is joined before heron__build_all
 * returns, because the runs that follow fork and must do so from a
 * single-threaded process.
 *
 * The host toolchain compiles k<seq>.c with `<cc> <cflags> -o k<seq>.so
 * k<seq>.c`: each build thread posix_spawns the compiler in its own
 * process group and polls it until it exits or the timeout passes, when the
 * whole group (the compiler driver and the cc1/as/ld it started) is killed.
 *
 * A failure that says nothing about the config - the compiler cannot be
 * started, a file cannot be written, the compiler's diagnostics blame the
 * disk or its temporary files - marks the candidate env_failure, so the
 * engine does not teach the strategy and the model that the config is bad.
 * heron__bench_check_toolchain builds a trivial kernel the same way, to
 * tell before the first trial (and after a round of compile errors) that
 * the toolchain works at all.
 */
#include "core/measure/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util/util.h"

extern char **environ;

/* How much of the compiler's log a failed candidate keeps: the end, where
 * the first fatal error and the summary usually are, is what people read. */
#define LOG_TAIL_BYTES 2048
#define MAX_ARGS 128

/* The toolchain check's files, <work_dir>/toolchain-check-<pid><ext>. */
#define CHECK_NAME "toolchain-check"

/* The host check's kernel: the smallest one the host worker could load,
 * with a prototype so that strict warning flags in the template's cflags
 * pass. */
static const char check_c_source[] =
    "/* heron toolchain check: a trivial kernel, built as candidates are */\n"
    "void heron_kernel(void *const *bufs);\n"
    "void heron_kernel(void *const *bufs) { (void)bufs; }\n";

/* Phrases of a compiler's diagnostics that blame the machine rather than
 * the source: a full disk or quota, a read-only or forbidden folder,
 * temporary files, missing parts of the toolchain (headers, libraries,
 * cc1), exhausted processes or descriptors.  A generated source never
 * names files or libraries of its own, so none of these can come from a
 * config. */
static const char *const env_phrases[] = {
    "No space left on device",
    "Disk quota exceeded",
    "Read-only file system",
    "Permission denied",
    "annot create temporary file", /* gcc capitalises it, others do not */
    "cannot open output file",
    "error writing to",
    "Input/output error",
    "Too many open files",
    "Resource temporarily unavailable",
    "cannot execute '",
    "No such file or directory",
    "cannot find -l",
    "cannot open source file",
};

/* Shared by the pool's threads: the work list and the next index to take. */
typedef struct build_pool {
  heron__bench *b;
  heron__candidate *c;
  int n;
  int next;
  pthread_mutex_t lock;
} build_pool;

/* Splits a command fragment on white space into argv entries (no quoting:
 * compiler paths and flags with spaces are not supported).  `store` holds
 * the copied words.  Returns the new argc, or -1 when out of room. */
static int split_words(const char *s, char *store, size_t cap, size_t *used,
                       char **argv, int argc) {
  while (*s) {
    while (*s == ' ' || *s == '\t' || *s == '\n')
      s++;
    if (!*s)
      break;
    const char *start = s;
    while (*s && *s != ' ' && *s != '\t' && *s != '\n')
      s++;
    size_t len = (size_t)(s - start);
    if (argc >= MAX_ARGS - 4 || *used + len + 1 > cap)
      return -1;
    memcpy(store + *used, start, len);
    store[*used + len] = '\0';
    argv[argc++] = store + *used;
    *used += len + 1;
  }
  return argc;
}

/* Sleeps for `ms` milliseconds (restarting after signals). */
static void sleep_ms(double ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms * 1e6) % 1000000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* Reads the last LOG_TAIL_BYTES of the compiler log into a malloc'ed
 * string, starting at a line boundary when the log was cut.  NULL when the
 * log is empty or unreadable. */
static char *log_tail(const char *path) {
  FILE *f = fopen(path, "re");
  if (!f)
    return NULL;
  long size = 0;
  if (fseek(f, 0, SEEK_END) == 0)
    size = ftell(f);
  long start = size > LOG_TAIL_BYTES ? size - LOG_TAIL_BYTES : 0;
  char *text = NULL;
  if (size > 0 && fseek(f, start, SEEK_SET) == 0) {
    text = malloc((size_t)(size - start) + 1);
    if (text) {
      size_t got = fread(text, 1, (size_t)(size - start), f);
      text[got] = '\0';
      if (start > 0) {
        char *nl = strchr(text, '\n');
        if (nl && nl[1])
          memmove(text, nl + 1, strlen(nl + 1) + 1);
      }
    }
  }
  fclose(f);
  if (text && !text[0]) {
    free(text);
    text = NULL;
  }
  return text;
}

const char *heron__env_diagnostic(const char *log) {
  if (!log)
    return NULL;
  for (size_t i = 0; i < sizeof env_phrases / sizeof env_phrases[0]; i++)
    if (strstr(log, env_phrases[i]))
      return env_phrases[i];
  return NULL;
}

/* Writes `len` bytes to `path` (created or truncated, mode 0644).  Returns
 * 0, or the errno of the first failure, close's included (a quota or a
 * network file system may only report there); unlike heron__write_file it
 * keeps the errno, which tells the environment's failures apart. */
static int write_all(const char *path, const void *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno;
  const char *p = data;
  int e = 0;
  while (len > 0 && !e) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      e = w < 0 ? errno : EIO;
      break;
    }
    p += w;
    len -= (size_t)w;
  }
  if (close(fd) != 0 && !e && errno != EINTR)
    e = errno;
  return e;
}

/* "cannot write in work folder D: <reason> (F)" for file `path` of the
 * work dir and errno `e`. */
static void work_dir_error(const heron__bench *b, const char *path, int e,
                           char *out, size_t cap) {
  const char *slash = strrchr(path, '/');
  char ebuf[128];
  /* The precisions only keep the compiler's truncation check quiet: the
   * text is cut to fit either way. */
  snprintf(out, cap, "cannot write in work folder %.400s: %.100s (%.100s)",
           b->work_dir, strerror_r(e, ebuf, sizeof ebuf),
           slash ? slash + 1 : path);
}

int heron__work_write(const heron__bench *b, const char *path, const void *data,
                      size_t len, char *why, size_t cap) {
  int e = write_all(path, data, len);
  if (e != 0)
    work_dir_error(b, path, e, why, cap);
  return e;
}

/* Records a failure message for candidate `c` (malloc'ed; on allocation
 * failure the status alone has to do). */
static void set_error(heron__candidate *c, int status, const char *fmt, ...)
    HERON_PRINTF(3, 4);
static void set_error(heron__candidate *c, int status, const char *fmt, ...) {
  c->status = status;
  free(c->error);
  heron__buf buf = {0};
  va_list ap;
  va_start(ap, fmt);
  heron__buf_vprintf(&buf, fmt, ap);
  va_end(ap);
  c->error = heron__buf_take(&buf);
}

/* How one compiler process ended, or why it never ran. */
enum cc_end {
  CC_EXITED,     /* code: its exit status */
  CC_SIGNALED,   /* code: the signal that ended it */
  CC_TIMED_OUT,  /* killed (with its process group) at the timeout */
  CC_NO_COMMAND, /* opts.cc and cflags make no argv (empty or too long) */
  CC_NO_LOG,     /* code: the errno of creating the log */
  CC_NO_START,   /* code: the errno of starting the compiler (exec) */
  CC_LOST        /* code: the errno of waitpid */
};

typedef struct cc_run {
  int end;         /* enum cc_end */
  int code;        /* see enum cc_end */
  char argv0[256]; /* the program started: opts.cc's first word */
  double seconds;  /* wall time, start to end */
} cc_run;

/* Spawns `<cc> <cflags> -o out src` with its output in `logp` and waits
 * for it with the timeout; fills *r. */
static void run_compiler(const heron__bench *b, const char *src,
                         const char *out, const char *logp, cc_run *r) {
  memset(r, 0, sizeof *r);
  double t0 = heron__now();
  char store[4096];
  size_t used = 0;
  char *argv[MAX_ARGS];
  int argc = split_words(b->opts.cc, store, sizeof store, &used, argv, 0);
  if (argc > 0)
    argc = split_words(b->tc.cflags, store, sizeof store, &used, argv, argc);
  if (argc <= 0) {
    r->end = CC_NO_COMMAND;
    r->seconds = heron__now() - t0;
    return;
  }
  snprintf(r->argv0, sizeof r->argv0, "%s", argv[0]);
  argv[argc++] = "-o";
  argv[argc++] = (char *)out;
  argv[argc++] = (char *)src;
  argv[argc] = NULL;

  /* The log is opened here rather than by the spawn, so that a log that
   * cannot be created (a full or read-only disk) is not mistaken for a
   * compiler that cannot be executed: posix_spawn reports both alike.
   * O_CLOEXEC keeps it out of the compilers other build threads start. */
  int logfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (logfd < 0) {
    r->end = CC_NO_LOG;
    r->code = errno;
    r->seconds = heron__now() - t0;
    return;
  }

  /* The compiler reads nothing, writes its diagnostics to the log, gets a
   * process group of its own (so a timeout kills its sub-processes too) and
   * starts with default signal handling and an empty signal mask, whatever
   * the host application has set up. */
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, logfd, 1);
  posix_spawn_file_actions_adddup2(&fa, logfd, 2);
  posix_spawnattr_init(&attr);
  sigset_t none, dfl;
  sigemptyset(&none);
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE);
  sigaddset(&dfl, SIGINT);
  sigaddset(&dfl, SIGTERM);
  sigaddset(&dfl, SIGCHLD);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dfl);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(logfd);
  if (rc != 0) {
    r->end = CC_NO_START;
    r->code = rc;
    r->seconds = heron__now() - t0;
    return;
  }

  /* Poll rather than block, so the timeout needs no signals or extra
   * threads; the pause grows from 1 ms to 20 ms, which costs nothing next
   * to a compile and keeps short builds from waiting long. */
  double deadline = t0 + b->opts.timeout_s, pause = 1;
  int st = 0;
  for (;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid)
      break;
    if (w < 0 && errno != EINTR) {
      r->end = CC_LOST;
      r->code = errno;
      r->seconds = heron__now() - t0;
      return;
    }
    if (heron__now() >= deadline) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
      r->end = CC_TIMED_OUT;
      r->seconds = heron__now() - t0;
      return;
    }
    sleep_ms(pause);
    if (pause < 20)
      pause *= 1.5;
  }
  r->seconds = heron__now() - t0;
  if (WIFEXITED(st)) {
    r->end = CC_EXITED;
    r->code = WEXITSTATUS(st);
  } else {
    r->end = CC_SIGNALED;
    r->code = WTERMSIG(st);
  }
}

/* Why a compiler never ran (r->end is CC_NO_COMMAND, _NO_LOG, _NO_START or
 * _LOST), in words naming the compiler as given. */
static void no_run_reason(const heron__bench *b, const cc_run *r,
                          const char *logp, char *out, size_t cap) {
  char ebuf[128];
  const char *why = strerror_r(r->code, ebuf, sizeof ebuf);
  switch (r->end) {
  case CC_NO_COMMAND:
    snprintf(out, cap, "compiler command too long or empty: '%s' '%s'",
             b->opts.cc, b->tc.cflags);
    return;
  case CC_NO_LOG:
    work_dir_error(b, logp, r->code, out, cap);
    return;
  case CC_NO_START:
    if (r->code == ENOENT && !strchr(r->argv0, '/'))
      snprintf(out, cap, "compiler '%s' not found in PATH", r->argv0);
    else if (r->code == ENOENT && access(r->argv0, F_OK) != 0)
      snprintf(out, cap, "compiler '%s' not found", r->argv0);
    else if (r->code == ENOENT) /* there, but its interpreter is not */
      snprintf(out, cap,
               "cannot run the compiler '%s': %s (its interpreter or "
               "loader is missing)",
               r->argv0, why);
    else if (r->code == EACCES)
      snprintf(out, cap, "compiler '%s' is not executable (%s)", r->argv0, why);
    else
      snprintf(out, cap, "cannot run the compiler '%s': %s", r->argv0, why);
    return;
  default:
    snprintf(out, cap, "lost the compiler process '%s': %s", r->argv0, why);
    return;
  }
}

/* 1 when `path` exists. */
static int exists(const char *path) { return access(path, F_OK) == 0; }

/* 1 when the file `path` still holds exactly `text` (a compiler wrapper
 * may have edited it). */
static int source_unchanged(const char *path, const char *text) {
  char *data = NULL;
  size_t len = 0;
  heron_error err = {0};
  if (heron__read_file(path, &data, &len, &err) != HERON_OK)
    return 0;
  int same = len == strlen(text) && memcmp(data, text, len) == 0;
  free(data);
  return same;
}

/* The host toolchain's build: compiles candidate `c` (source `src`, log
 * `logp`) into c->art.path; fills status, error, build_seconds and
 * env_failure. */
static void host_build(const heron__bench *b, heron__candidate *c,
                       const char *src, const char *logp) {
  /* The build cache (measure.h): a hit is a build that succeeded. */
  const char *cache = heron__build_cache_dir();
  heron__buf key = {0};
  if (cache && c->source) {
    double t0 = heron__now();
    char command[4096];
    snprintf(command, sizeof command, "%s %s", b->opts.cc, b->tc.cflags);
    if (heron__build_cache_key(command, c->source, strlen(c->source), &key) !=
        0)
      cache = NULL;
    else if (heron__build_cache_fetch(cache, &key, c->art.path)) {
      c->build_seconds = heron__now() - t0;
      c->status = HERON_MEAS_OK;
      heron__buf_free(&key);
      return;
    }
  }
  cc_run r;
  run_compiler(b, src, c->art.path, logp, &r);
  c->build_seconds = r.seconds;
  if (cache && c->source && r.end == CC_EXITED && r.code == 0 &&
      exists(c->art.path) && source_unchanged(src, c->source))
    heron__build_cache_store(cache, &key, c->art.path);
  heron__buf_free(&key);
  if (r.end == CC_TIMED_OUT) {
    set_error(c, HERON_MEAS_TIMEOUT, "build exceeded the %.1f s timeout",
              b->opts.timeout_s);
    return;
  }
  if (r.end != CC_EXITED && r.end != CC_SIGNALED) {
    char why[768];
    no_run_reason(b, &r, logp, why, sizeof why);
    set_error(c, HERON_MEAS_COMPILE_ERROR, "%s", why);
    c->env_failure = 1;
    return;
  }
  if (r.end == CC_EXITED && r.code == 0) {
    if (exists(c->art.path)) {
      c->status = HERON_MEAS_OK;
      return;
    }
    set_error(c, HERON_MEAS_COMPILE_ERROR,
              "the compiler '%s' exited with status 0 but wrote no %s", r.argv0,
              c->art.path);
    c->env_failure = 1;
    return;
  }
  char *tail = log_tail(logp);
  if (tail) {
    c->status = HERON_MEAS_COMPILE_ERROR;
    free(c->error);
    c->error = tail;
    c->env_failure = heron__env_diagnostic(tail) != NULL;
    return;
  }
  /* A compiler rejects a bad source with a message; failing without one
   * means its log could not be written or something outside killed it. */
  if (r.end == CC_EXITED)
    set_error(c, HERON_MEAS_COMPILE_ERROR,
              "the compiler exited with status %d and printed nothing", r.code);
  else
    set_error(c, HERON_MEAS_COMPILE_ERROR,
              "the compiler was killed by signal %d", r.code);
  c->env_failure = 1;
}

/* Derives a candidate's file names from its artifact's path (k<seq> and
 * the toolchain's artifact extension). */
static void sibling_path(const heron__bench *b, const char *art,
                         const char *ext, char *out, size_t cap) {
  size_t n = strlen(art), e = strlen(b->tc.ops->artifact_ext);
  if (n >= e && strcmp(art + n - e, b->tc.ops->artifact_ext) == 0)
    n -= e;
  snprintf(out, cap, "%.*s%s", (int)n, art, ext);
}

/* One pool thread: takes candidates until none are left.  A candidate
 * whose source could not be written (env_failure already set) is skipped. */
static void *build_worker(void *arg) {
  build_pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    int i = p->next < p->n ? p->next++ : -1;
    pthread_mutex_unlock(&p->lock);
    if (i < 0)
      return NULL;
    heron__candidate *c = &p->c[i];
    if (c->env_failure)
      continue;
    char src[620], logp[620];
    sibling_path(p->b, c->art.path, p->b->tc.ops->source_ext, src, sizeof src);
    sibling_path(p->b, c->art.path, ".log", logp, sizeof logp);
    p->b->tc.ops->build(p->b, c, src, logp);
  }
}

int heron__build_all(heron__bench *b, heron__candidate *c, int n,
                     heron_error *err) {
  /* Every failure is a candidate's own now (measure.h), so err stays
   * untouched; the parameter stays for callers written against the older
   * contract. */
  (void)err;
  for (int i = 0; i < n; i++) {
    /* Until its compiler reports, a candidate counts as not built. */
    c[i].status = HERON_MEAS_COMPILE_ERROR;
    c[i].build_seconds = 0;
    c[i].error = NULL;
    c[i].env_failure = 0;
    memset(&c[i].art, 0, sizeof c[i].art);
    c[i].regs = c[i].spill_bytes = 0;
    c[i].smem_bytes = 0;
  }
  /* Sources are written here, on the calling thread, so that file-name
   * numbering stays in candidate order.  A source that cannot be written
   * (a full or read-only disk) fails its candidate as the environment's,
   * and the others still get their chance. */
  for (int i = 0; i < n; i++) {
    int seq = b->seq++;
    char src[620];
    snprintf(c[i].art.path, sizeof c[i].art.path, "%s/k%d%s", b->work_dir, seq,
             b->tc.ops->artifact_ext);
    snprintf(src, sizeof src, "%s/k%d%s", b->work_dir, seq,
             b->tc.ops->source_ext);
    /* An artifact left by an earlier batch in a reused work dir must not
     * pass for this candidate's when its compiler fails silently. */
    unlink(c[i].art.path);
    const char *text = c[i].source ? c[i].source : "";
    char why[768];
    if (heron__work_write(b, src, text, strlen(text), why, sizeof why) != 0) {
      set_error(&c[i], HERON_MEAS_COMPILE_ERROR, "%s", why);
      c[i].env_failure = 1;
    }
  }
  if (n <= 0)
    return HERON_OK;

  build_pool pool = {.b = b, .c = c, .n = n, .next = 0};
  pthread_mutex_init(&pool.lock, NULL);
  int want = b->opts.build_jobs < n ? b->opts.build_jobs : n;
  if (want < 1)
    want = 1;
  if (want > 256)
    want = 256;
  pthread_t tids[256];
  int started = 0;
  for (; started < want; started++)
    if (pthread_create(&tids[started], NULL, build_worker, &pool) != 0)
      break;
  /* With no thread at all (resource limits), the caller's thread does the
   * work itself, one compile at a time, rather than giving up. */
  if (started == 0)
    build_worker(&pool);
  for (int t = 0; t < started; t++)
    pthread_join(tids[t], NULL);
  pthread_mutex_destroy(&pool.lock);
  return HERON_OK;
}

/* ---- the toolchain check ------------------------------------------------ */

void heron__check_path(const heron__bench *b, const char *ext, char *out,
                       size_t cap) {
  snprintf(out, cap, "%s/" CHECK_NAME "-%ld%s", b->work_dir, (long)getpid(),
           ext);
}

void heron__telling_line(const char *log, char *out, size_t cap) {
  out[0] = '\0';
  if (!log)
    return;
  const char *p = heron__env_diagnostic(log);
  p = p ? strstr(log, p) : strstr(log, "error");
  if (!p) {
    p = log;
    while (*p == '\n' || *p == ' ' || *p == '\t')
      p++;
  }
  while (p > log && p[-1] != '\n')
    p--;
  size_t n = strcspn(p, "\n");
  if (n >= cap)
    n = cap - 1;
  memcpy(out, p, n);
  out[n] = '\0';
}

/* The host toolchain's check; fills why[] on failure and returns 1 when the
 * trivial kernel built. */
static int host_check(const heron__bench *b, char *why, size_t cap) {
  char src[600], so[600], logp[600];
  heron__check_path(b, ".c", src, sizeof src);
  heron__check_path(b, ".so", so, sizeof so);
  heron__check_path(b, ".log", logp, sizeof logp);
  unlink(so);
  if (heron__work_write(b, src, check_c_source, strlen(check_c_source), why,
                        cap) != 0)
    return 0;
  cc_run r;
  run_compiler(b, src, so, logp, &r);
  int ok = 0;
  if (r.end == CC_EXITED && r.code == 0) {
    ok = exists(so);
    if (!ok)
      snprintf(why, cap, "compiler '%s' exited with status 0 but wrote no %s",
               b->opts.cc, so);
  } else if (r.end == CC_EXITED) {
    char *tail = log_tail(logp);
    char line[400];
    heron__telling_line(tail, line, sizeof line);
    free(tail);
    if (line[0])
      snprintf(why, cap, "compiler '%s' cannot build a trivial kernel: %s",
               b->opts.cc, line);
    else
      snprintf(why, cap,
               "compiler '%s' exited with status %d on a trivial kernel and "
               "printed nothing",
               b->opts.cc, r.code);
  } else if (r.end == CC_SIGNALED) {
    snprintf(why, cap,
             "compiler '%s' was killed by signal %d building a trivial kernel",
             b->opts.cc, r.code);
  } else if (r.end == CC_TIMED_OUT) {
    snprintf(why, cap,
             "compiler '%s' did not build a trivial kernel within the %.1f s "
             "timeout",
             b->opts.cc, b->opts.timeout_s);
  } else {
    no_run_reason(b, &r, logp, why, cap);
  }
  if (!b->opts.keep_files) {
    unlink(src);
    unlink(so);
    unlink(logp);
  }
  return ok;
}

int heron__bench_check_toolchain(heron__bench *b, heron_error *err) {
  if (!b || !b->op || !b->work_dir[0])
    return heron_error_set(err, HERON_EINVAL,
                           "toolchain check: the bench is not initialised");
  char why[768];
  why[0] = '\0';
  int ok = b->tc.ops->check(b, why, sizeof why);
  return ok ? HERON_OK : heron_error_set(err, HERON_EBUILD, "%s", why);
}

/* ---- the host toolchain ------------------------------------------------- */

/* Flags used when the target gives none: a position-independent shared
 * object with OpenMP, optimised for this machine. */
#define HOST_DEFAULT_CFLAGS "-O3 -march=native -fopenmp -fPIC -shared"

const heron__toolchain_ops heron__host_cc = {
    .source_ext = ".c",
    .artifact_ext = ".so",
    .build = host_build,
    .check = host_check,
    .run = heron__host_run,
};

heron__toolchain heron__toolchain_host(const char *cflags) {
  return (heron__toolchain){.ops = &heron__host_cc,
                            .cflags = cflags && *cflags ? cflags
                                                        : HOST_DEFAULT_CFLAGS};
}
