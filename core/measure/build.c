/* core/measure/build.c - compiling candidates into shared objects.
 *
 * Each candidate's source is written to <work_dir>/k<seq>.c and compiled
 * with `<cc> <cflags> -o k<seq>.so k<seq>.c`, its diagnostics going to
 * k<seq>.log.  Up to build_jobs compilers run at once: a small pool of
 * threads takes candidates from a shared counter, and each thread
 * posix_spawns the compiler in its own process group and polls it until it
 * exits or the timeout passes, when the whole group (the compiler driver and
 * the cc1/as/ld it started) is killed.  A failing candidate never fails the
 * batch; only the machinery (writing files) does.  Every thread is joined
 * before heron__build_all returns, because the runs that follow fork and
 * must do so from a single-threaded process.
 *
 * A cuda bench (cuda_sm > 0) writes k<seq>.cu instead and its threads
 * compile in-process with NVRTC (nvrtc.c) into k<seq>.cubin; the pool, the
 * numbering and the statuses are the same.
 */
#include "core/measure/measure.h"

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

/* Spawns the compiler for candidate `c` (source `src`, log `logp`) and waits
 * for it with the timeout; fills status, error and build_seconds. */
static void compile_one(const heron__bench *b, heron__candidate *c,
                        const char *src, const char *logp) {
  double t0 = heron__now();
  char store[4096];
  size_t used = 0;
  char *argv[MAX_ARGS];
  int argc = split_words(b->opts.cc, store, sizeof store, &used, argv, 0);
  if (argc > 0)
    argc = split_words(b->cflags, store, sizeof store, &used, argv, argc);
  if (argc <= 0) {
    set_error(c, HERON_MEAS_COMPILE_ERROR,
              "compiler command too long or empty: '%s' '%s'", b->opts.cc,
              b->cflags);
    c->build_seconds = heron__now() - t0;
    return;
  }
  argv[argc++] = "-o";
  argv[argc++] = c->so_path;
  argv[argc++] = (char *)src;
  argv[argc] = NULL;

  /* The compiler reads nothing, writes its diagnostics to the log, gets a
   * process group of its own (so a timeout kills its sub-processes too) and
   * starts with default signal handling and an empty signal mask, whatever
   * the host application has set up. */
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
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
  if (rc != 0) {
    char ebuf[128];
    set_error(c, HERON_MEAS_COMPILE_ERROR, "cannot run the compiler '%s': %s",
              argv[0], strerror_r(rc, ebuf, sizeof ebuf));
    c->build_seconds = heron__now() - t0;
    return;
  }

  /* Poll rather than block, so the timeout needs no signals or extra
   * threads; the pause grows from 1 ms to 20 ms, which costs nothing next
   * to a compile and keeps short builds from waiting long. */
  double deadline = t0 + b->opts.timeout_s, pause = 1;
  int st = 0, timed_out = 0;
  for (;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid)
      break;
    if (w < 0 && errno != EINTR) {
      st = 0;
      set_error(c, HERON_MEAS_COMPILE_ERROR, "lost the compiler process");
      c->build_seconds = heron__now() - t0;
      return;
    }
    if (heron__now() >= deadline) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
      timed_out = 1;
      break;
    }
    sleep_ms(pause);
    if (pause < 20)
      pause *= 1.5;
  }
  c->build_seconds = heron__now() - t0;

  if (timed_out) {
    set_error(c, HERON_MEAS_TIMEOUT, "build exceeded the %.1f s timeout",
              b->opts.timeout_s);
    return;
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
    c->status = HERON_MEAS_OK;
    return;
  }
  char *tail = log_tail(logp);
  if (tail) {
    c->status = HERON_MEAS_COMPILE_ERROR;
    free(c->error);
    c->error = tail;
  } else if (WIFEXITED(st)) {
    set_error(c, HERON_MEAS_COMPILE_ERROR,
              "the compiler exited with status %d and printed nothing",
              WEXITSTATUS(st));
  } else {
    set_error(c, HERON_MEAS_COMPILE_ERROR,
              "the compiler was killed by signal %d", WTERMSIG(st));
  }
}

/* Derives the candidate's file names from its output path (k<seq>.so or
 * k<seq>.cubin). */
static void sibling_path(const char *so, const char *ext, char *out,
                         size_t cap) {
  size_t n = strlen(so);
  if (n >= 3 && strcmp(so + n - 3, ".so") == 0)
    n -= 3;
  else if (n >= 6 && strcmp(so + n - 6, ".cubin") == 0)
    n -= 6;
  snprintf(out, cap, "%.*s%s", (int)n, so, ext);
}

/* The source's extension: NVRTC reads CUDA C++, the C compiler C. */
static const char *source_ext(const heron__bench *b) {
  return b->cuda_sm > 0 ? ".cu" : ".c";
}

/* One pool thread: takes candidates until none are left. */
static void *build_worker(void *arg) {
  build_pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    int i = p->next < p->n ? p->next++ : -1;
    pthread_mutex_unlock(&p->lock);
    if (i < 0)
      return NULL;
    heron__candidate *c = &p->c[i];
    char src[620], logp[620];
    sibling_path(c->so_path, source_ext(p->b), src, sizeof src);
    sibling_path(c->so_path, ".log", logp, sizeof logp);
    if (p->b->cuda_sm > 0)
      heron__nvrtc_build_one(p->b, c, logp);
    else
      compile_one(p->b, c, src, logp);
  }
}

int heron__build_all(heron__bench *b, heron__candidate *c, int n,
                     heron_error *err) {
  /* Sources are written here, on the calling thread, so that file-name
   * numbering stays in candidate order and write errors stop the batch
   * before any compiler starts. */
  for (int i = 0; i < n; i++) {
    /* Until its compiler reports, a candidate counts as not built. */
    c[i].status = HERON_MEAS_COMPILE_ERROR;
    c[i].build_seconds = 0;
    c[i].error = NULL;
    c[i].so_path[0] = '\0';
    memset(&c[i].launch, 0, sizeof c[i].launch);
    c[i].entry[0] = '\0';
    c[i].regs = c[i].spill_bytes = 0;
    c[i].smem_bytes = 0;
  }
  for (int i = 0; i < n; i++) {
    int seq = b->seq++;
    char src[620];
    snprintf(c[i].so_path, sizeof c[i].so_path, "%s/k%d%s", b->work_dir, seq,
             b->cuda_sm > 0 ? ".cubin" : ".so");
    snprintf(src, sizeof src, "%s/k%d%s", b->work_dir, seq, source_ext(b));
    /* A shared object left by an earlier batch in a reused work dir must
     * not pass for this candidate's when its compiler fails silently. */
    unlink(c[i].so_path);
    const char *text = c[i].source ? c[i].source : "";
    int rc = heron__write_file(src, text, strlen(text), err);
    if (rc != HERON_OK)
      return rc;
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
