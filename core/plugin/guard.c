/* core/plugin/guard.c - plugin faults are contained and named.
 *
 * Three parties share a guard: the threads that call plugins (enter and
 * leave, on every call, so they must be cheap), the fatal-signal handler
 * (which may run in any thread, at any instruction, and may only use
 * async-signal-safe calls) and the watchdog thread (which looks for calls
 * past their time limit).  They meet in a fixed table of frames, one per
 * active call, made of atomics only: a frame is claimed with a
 * compare-and-swap, filled, then published; a reader takes a consistent
 * snapshot of it with the frame's generation counter, as with a seqlock.
 * Nothing locks, so the handler can never deadlock on a lock the faulting
 * thread held.
 *
 * Each thread keeps the index of its innermost frame in a thread-local, so
 * enter and leave find their frame in O(1).  A frame whose thread has
 * entered an inner call is "covered": the watchdog times only uncovered
 * frames, so an inner call is timed against its own limit, and its outer
 * call again once it has returned.
 */
#include "core/plugin/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NFRAMES 64
#define WATCH_MS 100 /* how often the watchdog looks */
/* Bytes of the alternate signal stack, when the thread has none. */
#define ALTSTACK_MIN 65536u

_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2 && ATOMIC_LLONG_LOCK_FREE == 2 &&
                   ATOMIC_INT_LOCK_FREE == 2,
               "the signal handler needs lock-free atomics");

/* The signals a crashing plugin raises; their previous dispositions are
 * kept in the same order. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NSIGNALS ((int)(sizeof fatal_signals / sizeof fatal_signals[0]))

enum { FRAME_FREE, FRAME_FILLING, FRAME_ACTIVE };

/* One active guarded call.  Everything another thread reads is atomic;
 * `parent` is only touched by the owning thread. */
typedef struct frame {
  _Atomic int state;
  _Atomic unsigned gen; /* bumped before every refill */
  _Atomic uint64_t seq; /* process-wide order of entry: later is larger */
  _Atomic(const char *) kind;
  _Atomic(const char *) path;
  _Atomic(const char *) fn;
  _Atomic int64_t start_ns;
  _Atomic int64_t limit_ns; /* 0: no limit */
  _Atomic uintptr_t owner;  /* pthread_self() of the caller */
  _Atomic int covered;      /* the owner is in an inner guarded call */
  int parent;               /* the owner's enclosing frame, or -1 */
} frame;

/* A consistent copy of a frame, taken by the handler or the watchdog. */
typedef struct view {
  const char *kind, *path, *fn;
  int64_t start_ns, limit_ns;
  uintptr_t owner;
  uint64_t seq;
  int covered;
} view;

struct heron__guard {
  frame frames[NFRAMES];
  _Atomic uint64_t seq;
  _Atomic int dying; /* set by whoever writes the last message */
  /* The tool's stop flag (heron__guard_watch_stop), or NULL; the time the
   * watchdog first saw it set, 0 before. */
  _Atomic(const volatile sig_atomic_t *) stop;
  int64_t stop_grace_ns;
  int64_t stop_seen_ns; /* the watchdog's own */
  int out_fd;
  char *where;
  struct sigaction old[NSIGNALS];
  int installed; /* handlers set so far */
  void *altstack;
  pthread_t opener;
  int wake[2]; /* written once by close to stop the watchdog */
  pthread_t watchdog;
  int watching;
};

/* The open guard: the one process-wide variable (see guard.h). */
static _Atomic(heron__guard *) the_guard;

/* The calling thread's innermost frame and the guarded calls it entered
 * when the table was full (those are always its innermost ones). */
static _Thread_local heron__guard *tls_guard;
static _Thread_local int tls_top = -1;
static _Thread_local int tls_lost;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- messages, async-signal-safe ----------------------------------------
 * No stdio, no malloc: bytes are gathered in a buffer on the stack and
 * written with write(2), numbers formatted by hand. */

typedef struct msg {
  int fd;
  size_t n;
  char buf[1024];
} msg;

static void msg_flush(msg *m) {
  size_t off = 0;
  while (off < m->n) {
    ssize_t w = write(m->fd, m->buf + off, m->n - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    off += (size_t)w;
  }
  m->n = 0;
}

static void msg_put(msg *m, const char *s) {
  for (; s && *s; s++) {
    if (m->n == sizeof m->buf)
      msg_flush(m);
    m->buf[m->n++] = *s;
  }
}

static void msg_uint(msg *m, uint64_t v) {
  char d[24];
  int i = (int)sizeof d;
  d[--i] = '\0';
  do
    d[--i] = (char)('0' + v % 10);
  while ((v /= 10) && i > 0);
  msg_put(m, d + i);
}

/* Seconds to a tenth: "10", "2.5". */
static void msg_seconds(msg *m, int64_t ns) {
  uint64_t tenths = (uint64_t)((ns + 50000000) / 100000000);
  msg_uint(m, tenths / 10);
  if (tenths % 10) {
    char t[3] = {'.', (char)('0' + tenths % 10), '\0'};
    msg_put(m, t);
  }
}

static void msg_signal(msg *m, int sig) {
  switch (sig) {
  case SIGSEGV:
    msg_put(m, "SIGSEGV");
    return;
  case SIGBUS:
    msg_put(m, "SIGBUS");
    return;
  case SIGFPE:
    msg_put(m, "SIGFPE");
    return;
  case SIGILL:
    msg_put(m, "SIGILL");
    return;
  case SIGABRT:
    msg_put(m, "SIGABRT");
    return;
  case SIGINT:
    msg_put(m, "SIGINT");
    return;
  case SIGTERM:
    msg_put(m, "SIGTERM");
    return;
  default:
    msg_put(m, "signal ");
    msg_uint(m, (uint64_t)sig);
  }
}

/* Why die() ends the process. */
enum { DIE_CRASH, DIE_LIMIT, DIE_STOP };

/* Writes the message for call `v` and ends the process: crashed with
 * signal `sig` (DIE_CRASH) or past its limit (DIE_LIMIT), status 1; still
 * running when the tool's stop signal `sig` came (DIE_STOP), status 128 +
 * sig.  `ran_ns` is how long the call had run when this was found (the
 * watchdog's cases), `since_ns` how long ago the stop signal was seen.
 * Only the first of several threads to get here speaks; the others wait
 * for the _exit. */
_Noreturn static void die(heron__guard *g, const view *v, int why, int sig,
                          int64_t ran_ns, int64_t since_ns) {
  if (atomic_exchange(&g->dying, 1))
    for (;;)
      pause();
  msg m = {.fd = g->out_fd, .n = 0};
  msg_put(&m, "heron: ");
  if (why == DIE_STOP) {
    msg_signal(&m, sig);
    msg_put(&m, ": the ");
  }
  msg_put(&m, v->kind);
  msg_put(&m, " plugin ");
  msg_put(&m, v->path);
  if (why == DIE_CRASH) {
    msg_put(&m, " crashed in ");
    msg_put(&m, v->fn);
    msg_put(&m, " (");
    msg_signal(&m, sig);
    msg_put(&m, ")");
  } else if (why == DIE_LIMIT) {
    msg_put(&m, " did not return from ");
    msg_put(&m, v->fn);
    msg_put(&m, " within ");
    msg_seconds(&m, v->limit_ns);
    msg_put(&m, " s (--plugin-timeout / --time-limit; found ");
    msg_seconds(&m, ran_ns);
    msg_put(&m, " s into the call)");
  } else {
    msg_put(&m, " is blocked in ");
    msg_put(&m, v->fn);
    msg_put(&m, " (for ");
    msg_seconds(&m, ran_ns);
    msg_put(&m, " s; still ");
    msg_seconds(&m, since_ns);
    msg_put(&m, " s after the signal); the run stops without waiting for "
                "it (exit status ");
    msg_uint(&m, (uint64_t)(128 + sig));
    msg_put(&m, ").");
  }
  if (why != DIE_STOP)
    msg_put(&m, "; the run stops.");
  if (g->where && g->where[0]) {
    msg_put(&m, " ");
    msg_put(&m, g->where);
  }
  msg_put(&m, "\n");
  msg_flush(&m);
  _exit(why == DIE_STOP ? 128 + sig : 1);
}

/* ---- reading frames ------------------------------------------------------ */

/* Copies frame f into v if it is active and was not refilled meanwhile;
 * 0 otherwise. */
static int snapshot(frame *f, view *v) {
  unsigned gen = atomic_load_explicit(&f->gen, memory_order_acquire);
  if (atomic_load_explicit(&f->state, memory_order_acquire) != FRAME_ACTIVE)
    return 0;
  v->kind = atomic_load_explicit(&f->kind, memory_order_relaxed);
  v->path = atomic_load_explicit(&f->path, memory_order_relaxed);
  v->fn = atomic_load_explicit(&f->fn, memory_order_relaxed);
  v->start_ns = atomic_load_explicit(&f->start_ns, memory_order_relaxed);
  v->limit_ns = atomic_load_explicit(&f->limit_ns, memory_order_relaxed);
  v->owner = atomic_load_explicit(&f->owner, memory_order_relaxed);
  v->seq = atomic_load_explicit(&f->seq, memory_order_relaxed);
  v->covered = atomic_load_explicit(&f->covered, memory_order_relaxed);
  atomic_thread_fence(memory_order_acquire);
  return atomic_load_explicit(&f->state, memory_order_relaxed) ==
             FRAME_ACTIVE &&
         atomic_load_explicit(&f->gen, memory_order_relaxed) == gen;
}

/* The call to blame for a fault in thread `self`: its own latest active
 * call (its innermost), else the latest active call of the process. */
static int blame(heron__guard *g, uintptr_t self, view *out) {
  int own = 0, any = 0;
  view v, other = {0};
  for (int i = 0; i < NFRAMES; i++) {
    if (!snapshot(&g->frames[i], &v))
      continue;
    if (v.owner == self && (!own || v.seq > out->seq)) {
      *out = v;
      own = 1;
    }
    if (!any || v.seq > other.seq) {
      other = v;
      any = 1;
    }
  }
  if (!own && any)
    *out = other;
  return own || any;
}

/* ---- the signal handler -------------------------------------------------- */

static int signal_index(int sig) {
  for (int i = 0; i < NSIGNALS; i++)
    if (fatal_signals[i] == sig)
      return i;
  return -1;
}

static void on_fatal(int sig, siginfo_t *si, void *uc) {
  int saved_errno = errno;
  heron__guard *g = atomic_load(&the_guard);
  view v;
  if (g && blame(g, (uintptr_t)pthread_self(), &v))
    die(g, &v, DIE_CRASH, sig, 0, 0);
  /* Not a plugin's fault: give the signal back to whoever had it before
   * (the default action, a sanitizer, the host).  A fault raised by an
   * instruction recurs when the handler returns and the instruction runs
   * again; a signal sent with raise, abort or kill is sent once more. */
  int i = signal_index(sig);
  if (g && i >= 0 && i < g->installed) {
    sigaction(sig, &g->old[i], NULL);
  } else {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
  }
  if (!si || si->si_code <= 0)
    raise(sig);
  errno = saved_errno;
}

/* ---- the watchdog -------------------------------------------------------- */

static void *watch(void *arg) {
  heron__guard *g = arg;
  struct pollfd p = {.fd = g->wake[0], .events = POLLIN, .revents = 0};
  for (;;) {
    int r = poll(&p, 1, WATCH_MS);
    if (r > 0)
      return NULL; /* heron__guard_close */
    if (r < 0 && errno != EINTR)
      return NULL;
    int64_t now = now_ns();
    const volatile sig_atomic_t *stop = atomic_load(&g->stop);
    int sig = stop ? (int)*stop : 0;
    if (sig && !g->stop_seen_ns)
      g->stop_seen_ns = now;
    view v;
    for (int i = 0; i < NFRAMES; i++) {
      if (!snapshot(&g->frames[i], &v) || v.covered)
        continue;
      if (v.limit_ns > 0 && now - v.start_ns > v.limit_ns)
        die(g, &v, DIE_LIMIT, 0, now - v.start_ns, 0);
      /* A stop signal: a call that began before it (or after it) gets the
       * grace from the later of the two to return, so that the engine
       * can end the run in order; one that is still running then is
       * blocked, and waiting for its limit would make Ctrl-C useless. */
      if (sig) {
        int64_t from =
            v.start_ns > g->stop_seen_ns ? v.start_ns : g->stop_seen_ns;
        if (now - from > g->stop_grace_ns)
          die(g, &v, DIE_STOP, sig, now - v.start_ns, now - g->stop_seen_ns);
      }
    }
  }
}

/* Starts the watchdog with every signal blocked, so that signals meant for
 * the process are never handled in it. */
static int start_watchdog(heron__guard *g) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&g->watchdog, NULL, watch, g);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc == 0)
    g->watching = 1;
  return rc;
}

/* ---- open and close ------------------------------------------------------ */

/* Gives the calling thread an alternate signal stack unless it has one
 * (AddressSanitizer sets its own), so a stack overflow in a plugin still
 * reaches the handler. */
static int set_altstack(heron__guard *g) {
  stack_t cur;
  if (sigaltstack(NULL, &cur) != 0)
    return -1;
  if (!(cur.ss_flags & SS_DISABLE))
    return 0;
  size_t size = SIGSTKSZ > ALTSTACK_MIN ? (size_t)SIGSTKSZ : ALTSTACK_MIN;
  g->altstack = malloc(size);
  if (!g->altstack)
    return -1;
  stack_t ss = {.ss_sp = g->altstack, .ss_size = size, .ss_flags = 0};
  if (sigaltstack(&ss, NULL) != 0) {
    free(g->altstack);
    g->altstack = NULL;
    return -1;
  }
  return 0;
}

static void unset_altstack(heron__guard *g) {
  if (!g->altstack)
    return;
  /* Only the thread that set it can take it back; from another thread
   * the stack stays in place (and allocated) rather than dangle. */
  if (!pthread_equal(pthread_self(), g->opener))
    return;
  stack_t ss = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
  sigaltstack(&ss, NULL);
  free(g->altstack);
  g->altstack = NULL;
}

static int install_handlers(heron__guard *g) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  /* Everything else waits while the message is written. */
  sigfillset(&sa.sa_mask);
  for (; g->installed < NSIGNALS; g->installed++)
    if (sigaction(fatal_signals[g->installed], &sa, &g->old[g->installed]))
      return -1;
  return 0;
}

static void restore_handlers(heron__guard *g) {
  while (g->installed > 0) {
    g->installed--;
    sigaction(fatal_signals[g->installed], &g->old[g->installed], NULL);
  }
}

/* Undoes whatever open got done; also the end of close. */
static void teardown(heron__guard *g) {
  if (g->watching) {
    ssize_t w;
    do
      w = write(g->wake[1], "x", 1);
    while (w < 0 && errno == EINTR);
    pthread_join(g->watchdog, NULL);
    g->watching = 0;
  }
  restore_handlers(g);
  unset_altstack(g);
  heron__guard *self = g;
  atomic_compare_exchange_strong(&the_guard, &self, NULL);
  for (int i = 0; i < 2; i++)
    if (g->wake[i] >= 0)
      close(g->wake[i]);
  free(g->where);
  free(g);
}

int heron__guard_open(heron__guard **out, int out_fd, const char *where,
                      heron_error *err) {
  if (!out)
    return heron_error_set(err, HERON_EINVAL,
                           "heron__guard_open: bad arguments");
  *out = NULL;
  heron__guard *g = calloc(1, sizeof *g);
  if (!g)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  g->out_fd = out_fd;
  g->wake[0] = g->wake[1] = -1;
  g->opener = pthread_self();
  for (int i = 0; i < NFRAMES; i++)
    g->frames[i].parent = -1;
  g->where = strdup(where ? where : "");
  if (!g->where) {
    free(g);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  heron__guard *none = NULL;
  if (!atomic_compare_exchange_strong(&the_guard, &none, g)) {
    free(g->where);
    free(g);
    return heron_error_set(err, HERON_EINVAL,
                           "a plugin guard is already open in this process "
                           "(one tuning run at a time per process)");
  }
  const char *what = NULL;
  if (pipe2(g->wake, O_CLOEXEC) != 0)
    what = "pipe";
  else if (set_altstack(g) != 0)
    what = "sigaltstack";
  else if (install_handlers(g) != 0)
    what = "sigaction";
  else if ((errno = start_watchdog(g)) != 0)
    what = "pthread_create";
  if (what) {
    int e = errno;
    teardown(g);
    return heron_error_set(err, HERON_EIO, "cannot guard plugin calls: %s: %s",
                           what, strerror(e));
  }
  *out = g;
  return HERON_OK;
}

void heron__guard_watch_stop(heron__guard *g, const volatile sig_atomic_t *stop,
                             double grace_s) {
  if (!g)
    return;
  g->stop_grace_ns = grace_s > 0 ? (int64_t)(grace_s * 1e9) : 0;
  atomic_store(&g->stop, stop);
}

void heron__guard_close(heron__guard *g) {
  if (g)
    teardown(g);
}

/* ---- enter and leave ----------------------------------------------------- */

/* Claims a free frame, starting after the thread's innermost one (usually
 * free when one thread nests); -1 when all are taken. */
static int claim(heron__guard *g) {
  int start = tls_top + 1;
  for (int k = 0; k < NFRAMES; k++) {
    int i = (start + k) % NFRAMES;
    int expect = FRAME_FREE;
    if (atomic_load_explicit(&g->frames[i].state, memory_order_relaxed) ==
            FRAME_FREE &&
        atomic_compare_exchange_strong(&g->frames[i].state, &expect,
                                       FRAME_FILLING))
      return i;
  }
  return -1;
}

void heron__guard_enter(heron__guard *g, const char *kind, const char *path,
                        const char *fn, double limit_s) {
  if (!g)
    return;
  if (tls_guard != g) {
    /* First call of this thread under this guard. */
    tls_guard = g;
    tls_top = -1;
    tls_lost = 0;
  }
  /* Below a call that found the table full, every call is unguarded, so
   * that the lost ones are always the innermost and leave can pair them. */
  int i = tls_lost ? -1 : claim(g);
  if (i < 0) {
    tls_lost++;
    return;
  }
  frame *f = &g->frames[i];
  atomic_fetch_add_explicit(&f->gen, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&f->kind, kind ? kind : "plugin", memory_order_relaxed);
  atomic_store_explicit(&f->path, path ? path : "(unknown)",
                        memory_order_relaxed);
  atomic_store_explicit(&f->fn, fn ? fn : "(unknown)", memory_order_relaxed);
  int64_t limit = 0;
  if (limit_s > 0)
    limit = limit_s > 1e9 ? (int64_t)1e18 : (int64_t)(limit_s * 1e9);
  atomic_store_explicit(&f->limit_ns, limit, memory_order_relaxed);
  atomic_store_explicit(&f->owner, (uintptr_t)pthread_self(),
                        memory_order_relaxed);
  atomic_store_explicit(&f->covered, 0, memory_order_relaxed);
  atomic_store_explicit(&f->seq, atomic_fetch_add(&g->seq, 1) + 1,
                        memory_order_relaxed);
  atomic_store_explicit(&f->start_ns, now_ns(), memory_order_relaxed);
  f->parent = tls_top;
  atomic_store_explicit(&f->state, FRAME_ACTIVE, memory_order_release);
  /* The outer call now waits on this one: only this one is timed. */
  if (tls_top >= 0)
    atomic_store(&g->frames[tls_top].covered, 1);
  tls_top = i;
}

void heron__guard_leave(heron__guard *g) {
  if (!g || tls_guard != g)
    return;
  if (tls_lost) {
    tls_lost--;
    return;
  }
  if (tls_top < 0)
    return; /* unpaired leave: nothing to end */
  frame *f = &g->frames[tls_top];
  int parent = f->parent;
  tls_top = parent;
  /* The outer call is timed again, from its own start. */
  if (parent >= 0)
    atomic_store(&g->frames[parent].covered, 0);
  atomic_store_explicit(&f->state, FRAME_FREE, memory_order_release);
}
