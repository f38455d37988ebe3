/* tests/plugin/test_guard.c - plugin faults are contained and named
 * (core/plugin/guard.h).
 *
 * Every case runs in a forked child whose stderr goes into a pipe: the
 * child opens a guard, loads a deliberately faulty plugin from
 * tests/plugin/plugins/, enters the call and makes it; the parent checks
 * that the child ended with status 1 and that its message names the
 * plugin file, the function and the signal (or the time limit).  The
 * opposite cases check that what is not a plugin's fault is left alone: a
 * crash after leave dies of its signal (or, under AddressSanitizer, is
 * reported by it), and a call that returns within its limit is not
 * stopped.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/plugin/guard.h"
#include "core/plugin/plugin.h"
#include "core/util/util.h"
#include "test.h"

#define TPLUG(name) HERON_TEST_PLUGIN_DIR "/" name ".so"
#define WHERE                                                                  \
  "the log runs/x.jsonl holds every trial measured before this round"

/* ---- helpers ------------------------------------------------------------- */

/* How a child ended: its wait status and its stderr. */
typedef struct child {
  int status;
  char err[16384];
} child;

/* Runs fn in a forked child with stderr into a pipe; fn should not return
 * (a child that returns exits with status 0).  An alarm ends a child that
 * the guard fails to stop. */
static void run_child(void (*fn)(void), child *c) {
  memset(c, 0, sizeof *c);
  int fds[2];
  if (pipe(fds) != 0) {
    c->status = -1;
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    close(fds[1]);
    alarm(30);
    fn();
    _exit(0);
  }
  close(fds[1]);
  size_t n = 0;
  for (;;) {
    ssize_t r = read(fds[0], c->err + n, sizeof c->err - 1 - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    n += (size_t)r;
    if (n == sizeof c->err - 1)
      break;
  }
  c->err[n] = '\0';
  close(fds[0]);
  c->status = -1;
  if (pid > 0)
    while (waitpid(pid, &c->status, 0) < 0 && errno == EINTR)
      ;
}

/* The number of seconds that follows `before` in s (the guard's own
 * measure of a time, "found 1.1 s into the call"), or -1. */
static double seconds_after(const char *s, const char *before) {
  const char *p = strstr(s, before);
  double x = -1;
  if (!p || sscanf(p + strlen(before), "%lf s", &x) != 1)
    return -1;
  return x;
}

/* In a child: reports a failed setup step as exit status 3. */
static void must(int ok, const char *what, const heron_error *err) {
  if (!ok) {
    fprintf(stderr, "child setup failed: %s: %s\n", what, err ? err->text : "");
    _exit(3);
  }
}

static heron__guard *open_guard(void) {
  heron__guard *g = NULL;
  heron_error err = {0};
  must(heron__guard_open(&g, 2, WHERE, &err) == HERON_OK, "guard_open", &err);
  return g;
}

/* Loads strategy `path` and creates it with an env that has nothing in it
 * (the faulty test strategies need nothing). */
static heron__plugin strat_lib;
static const heron_strategy_plugin *strat;
static void *strat_self;
static heron_strategy_env strat_env;
static void load_strategy(const char *path) {
  heron_error err = {0};
  must(heron__plugin_load_strategy(path, &strat_lib, &err) == HERON_OK,
       "load strategy", &err);
  strat = strat_lib.desc;
  strat_env.abi_version = HERON_STRATEGY_ABI_VERSION;
  strat_env.struct_size = sizeof strat_env;
  must(strat->create(&strat_env, NULL, 0, &strat_self, &err) == HERON_OK,
       "create", &err);
}

/* Opens model_crash_fit with crash=<member>, guarded from the start. */
static heron_model *open_crash_model(heron__guard *g, const char *member) {
  heron_param p[] = {{"crash", member}};
  heron_model *m = NULL;
  heron_error err = {0};
  must(heron__model_open_guarded(TPLUG("model_crash_fit"), p, 1, 2, 1, g, 0, &m,
                                 &err) == HERON_OK,
       "model open", &err);
  return m;
}

static void fit_ok(heron_model *m) {
  double X[4] = {1, 2, 3, 4}, y[2] = {1, 2};
  heron_error err = {0};
  must(heron__model_fit(m, X, y, 2, 2, &err) == HERON_OK, "fit", &err);
}

/* A fault the compiler cannot prove or drop, and UBSan does not check. */
__attribute__((noinline, no_sanitize("undefined"))) static void segv_now(void) {
  volatile int *volatile p = NULL;
  *p = 1;
}

/* Checks that child c ended with exit status 1 and said `needle`s. */
#define CHECK_STOPPED(c)                                                       \
  do {                                                                         \
    CHECK_MSG(WIFEXITED((c).status) && WEXITSTATUS((c).status) == 1,           \
              "status 0x%x, stderr: %s", (unsigned)(c).status, (c).err);       \
    CHECK_STR_CONTAINS((c).err, "; the run stops. " WHERE "\n");               \
  } while (0)

/* ---- strategy faults ----------------------------------------------------- */

static void child_strategy_crash(void) {
  heron__guard *g = open_guard();
  load_strategy(TPLUG("strat_crash_propose"));
  int64_t out[4];
  int got = 0;
  heron_error err = {0};
  heron__guard_enter(g, "strategy", strat_lib.path, "propose", 10);
  strat->propose(strat_self, 1, out, &got, &err);
  heron__guard_leave(g);
}

TEST(strategy_crash_in_propose_exits_1_naming_file_function_and_signal) {
  child c;
  run_child(child_strategy_crash, &c);
  CHECK_STOPPED(c);
  CHECK_STR_CONTAINS(c.err, "heron: strategy plugin " TPLUG(
                                "strat_crash_propose") " crashed in propose "
                                                       "(SIGSEGV)");
}

static void child_strategy_hang(void) {
  heron__guard *g = open_guard();
  load_strategy(TPLUG("strat_hang_propose"));
  int64_t out[4];
  int got = 0;
  heron_error err = {0};
  heron__guard_enter(g, "strategy", strat_lib.path, "propose", 1);
  strat->propose(strat_self, 1, out, &got, &err);
  heron__guard_leave(g);
}

TEST(strategy_hang_in_propose_is_stopped_after_its_limit) {
  child c;
  run_child(child_strategy_hang, &c);
  CHECK_STOPPED(c);
  CHECK_STR_CONTAINS(c.err, "heron: strategy plugin " TPLUG(
                                "strat_hang_propose") " did not return from "
                                                      "propose within 1 s "
                                                      "(--plugin-timeout / "
                                                      "--time-limit; found ");
  /* The limit is 1 s and the watchdog looks ten times a second: it finds
   * the call past its limit, by its own clock, well within a second more
   * (what a loaded machine adds to the child's start is not counted). */
  double found = seconds_after(c.err, "--time-limit; found ");
  CHECK_MSG(found >= 1.0 && found < 2.0, "found %.1f s into the call: %s",
            found, c.err);
}

/* ---- a stop signal (SIGINT / SIGTERM) while a call hangs ----------------
 * The tool's handler sets a flag to the signal's number; the guard watches
 * it (heron__guard_watch_stop). */

static volatile sig_atomic_t stop_flag;
static void on_stop(int sig) { stop_flag = sig; }

/* Opens a guard that watches stop_flag with a grace of grace_s and
 * installs on_stop for SIGINT and SIGTERM. */
static heron__guard *open_stop_guard(double grace_s) {
  heron__guard *g = open_guard();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  heron__guard_watch_stop(g, &stop_flag, grace_s);
  return g;
}

/* The hanging propose, with a limit far away (600 s); the signal comes
 * while it runs (raised in the call, as a Ctrl-C would come). */
static void child_stop_in_hang(int sig) {
  heron__guard *g = open_stop_guard(0.5);
  load_strategy(TPLUG("strat_hang_propose"));
  int64_t out[4];
  int got = 0;
  heron_error err = {0};
  heron__guard_enter(g, "strategy", strat_lib.path, "propose", 600);
  raise(sig);
  strat->propose(strat_self, 1, out, &got, &err);
  heron__guard_leave(g);
}
static void child_sigint_in_hang(void) { child_stop_in_hang(SIGINT); }
static void child_sigterm_in_hang(void) { child_stop_in_hang(SIGTERM); }

/* Checks that child c ended with 128 + sig, naming the blocked call and
 * the signal, found by the guard's clock within a second of the grace
 * (0.5 s) after the signal: not at the call's 600 s limit, which the
 * child's alarm (30 s) would cut short with another status. */
#define CHECK_STOPPED_BY(c, sig, name)                                         \
  do {                                                                         \
    CHECK_MSG(WIFEXITED((c).status) && WEXITSTATUS((c).status) == 128 + sig,   \
              "status 0x%x, stderr: %s", (unsigned)(c).status, (c).err);       \
    CHECK_STR_CONTAINS((c).err,                                                \
                       "heron: " name ": the strategy plugin " TPLUG(          \
                           "strat_hang_propose") " is blocked in propose");    \
    char want_[64];                                                            \
    snprintf(want_, sizeof want_,                                              \
             "the run stops without waiting for it (exit status %d). ",        \
             128 + sig);                                                       \
    CHECK_STR_CONTAINS((c).err, want_);                                        \
    CHECK_STR_CONTAINS((c).err, WHERE "\n");                                   \
    double after_ = seconds_after((c).err, "; still ");                        \
    CHECK_MSG(after_ >= 0.5 && after_ < 1.5, "%.1f s after the signal: %s",    \
              after_, (c).err);                                                \
  } while (0)

TEST(sigint_while_a_call_hangs_ends_the_run_with_130_naming_the_call) {
  child c;
  run_child(child_sigint_in_hang, &c);
  CHECK_STOPPED_BY(c, SIGINT, "SIGINT");
}

TEST(sigterm_while_a_call_hangs_ends_the_run_with_143_naming_the_call) {
  child c;
  run_child(child_sigterm_in_hang, &c);
  CHECK_STOPPED_BY(c, SIGTERM, "SIGTERM");
}

/* A call that returns within the grace after the signal is left to
 * return, and so is one that starts after the signal (the engine's last
 * calls as it ends the run in order): the grace counts from the later of
 * the signal and the call's start.  Nothing is said; the child exits 0. */
static void child_stop_calls_that_return(void) {
  heron__guard *g = open_stop_guard(2);
  heron__guard_enter(g, "strategy", "/plugins/slow.so", "propose", 600);
  raise(SIGINT);
  usleep(300000);
  heron__guard_leave(g);
  usleep(2500000); /* past the grace since the signal */
  heron__guard_enter(g, "strategy", "/plugins/slow.so", "observe", 600);
  usleep(300000);
  heron__guard_leave(g);
  heron__guard_close(g);
  _exit(stop_flag == SIGINT ? 0 : 4);
}

TEST(calls_that_return_within_the_grace_after_a_stop_signal_are_not_ended) {
  child c;
  run_child(child_stop_calls_that_return, &c);
  CHECK_MSG(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0,
            "status 0x%x, stderr: %s", (unsigned)c.status, c.err);
  CHECK_EQ(c.err[0], '\0');
}

/* ---- model faults, through the model host (core/plugin/model.c) ---------- */

static void child_model_crash_fit(void) {
  heron__guard *g = open_guard();
  heron_param p[] = {{"crash", "fit"}};
  heron_model *m = NULL;
  heron_error err = {0};
  must(heron__model_open(TPLUG("model_crash_fit"), p, 1, 2, 1, &m, &err) ==
           HERON_OK,
       "model open", &err);
  heron__model_set_guard(m, g, 10);
  fit_ok(m);
}

TEST(model_crash_in_fit_exits_1_naming_file_function_and_signal) {
  child c;
  run_child(child_model_crash_fit, &c);
  CHECK_STOPPED(c);
  CHECK_STR_CONTAINS(
      c.err, "heron: model plugin " TPLUG("model_crash_fit") " crashed in fit "
                                                             "(SIGSEGV)");
}

/* Which member the next child crashes in, and how it gets there. */
static const char *crash_member;
static void child_model_crash_member(void) {
  heron__guard *g = open_guard();
  heron_model *m = open_crash_model(g, crash_member);
  heron_error err = {0};
  double X[2] = {1, 2}, out[2];
  if (!strcmp(crash_member, "save") || !strcmp(crash_member, "load")) {
    if (!strcmp(crash_member, "save"))
      heron__model_save(m, "/nonexistent/m", &err);
    else
      heron__model_load(m, "/nonexistent/m", &err);
    _exit(0);
  }
  fit_ok(m);
  if (!strcmp(crash_member, "predict"))
    heron_model_predict(m, X, 1, 2, out, &err);
  else if (!strcmp(crash_member, "importance"))
    heron_model_importance(m, out, 2, &err);
  heron__model_close(m);
}

TEST(model_crash_in_each_member_names_that_member) {
  static const char *const members[] = {
      "create", "fit", "predict", "importance", "save", "load", "destroy"};
  for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
    crash_member = members[i];
    child c;
    run_child(child_model_crash_member, &c);
    CHECK_STOPPED(c);
    char want[512];
    snprintf(want, sizeof want,
             "heron: model plugin %s crashed in %s (SIGSEGV)",
             TPLUG("model_crash_fit"), members[i]);
    CHECK_STR_CONTAINS(c.err, want);
  }
}

/* ---- nesting and threads ------------------------------------------------- */

/* propose -> predict, predict crashes: the inner call is named. */
static void child_nested_inner(void) {
  heron__guard *g = open_guard();
  load_strategy(TPLUG("strat_crash_propose"));
  heron_model *m = open_crash_model(g, "predict");
  fit_ok(m);
  heron__guard_enter(g, "strategy", strat_lib.path, "propose", 10);
  double X[2] = {1, 2}, out[1];
  heron_error err = {0};
  heron_model_predict(m, X, 1, 2, out, &err);
}

TEST(nested_crash_names_the_inner_call) {
  child c;
  run_child(child_nested_inner, &c);
  CHECK_STOPPED(c);
  CHECK_STR_CONTAINS(c.err, "heron: model plugin " TPLUG(
                                "model_crash_fit") " crashed in predict "
                                                   "(SIGSEGV)");
}

/* propose -> fit returns -> propose crashes: the outer call is named
 * again once the inner one has left. */
static void child_nested_outer(void) {
  heron__guard *g = open_guard();
  load_strategy(TPLUG("strat_crash_propose"));
  heron_model *m = open_crash_model(g, "none");
  int64_t out[4];
  int got = 0;
  heron_error err = {0};
  heron__guard_enter(g, "strategy", strat_lib.path, "propose", 10);
  fit_ok(m);
  strat->propose(strat_self, 1, out, &got, &err);
}

TEST(nested_crash_after_inner_leave_names_the_outer_call) {
  child c;
  run_child(child_nested_outer, &c);
  CHECK_STOPPED(c);
  CHECK_STR_CONTAINS(c.err, "heron: strategy plugin " TPLUG(
                                "strat_crash_propose") " crashed in propose "
                                                       "(SIGSEGV)");
}

/* A thread started inside the call (as a model's OpenMP workers are)
 * crashes: the call is still named. */
static void *crash_thread(void *arg) {
  segv_now();
  return arg;
}
static void child_other_thread(void) {
  heron__guard *g = open_guard();
  heron__guard_enter(g, "model", "/plugins/threads.so", "fit", 10);
  pthread_t t;
  if (pthread_create(&t, NULL, crash_thread, NULL) == 0)
    pthread_join(t, NULL);
}

TEST(crash_in_another_thread_names_the_active_call) {
  child c;
  run_child(child_other_thread, &c);
  CHECK_STOPPED(c);
  CHECK_STR_CONTAINS(c.err, "heron: model plugin /plugins/threads.so crashed "
                            "in fit (SIGSEGV)");
}

static void child_abort(void) {
  heron__guard *g = open_guard();
  heron__guard_enter(g, "strategy", "/plugins/aborts.so", "observe", 0);
  abort();
}

TEST(abort_in_a_call_is_named_sigabrt) {
  child c;
  run_child(child_abort, &c);
  CHECK_STOPPED(c);
  CHECK_STR_CONTAINS(c.err, "heron: strategy plugin /plugins/aborts.so "
                            "crashed in observe (SIGABRT)");
}

static volatile int recurse_limit = 1 << 30;
__attribute__((noinline)) static int recurse(volatile char *prev, int depth) {
  volatile char buf[2048];
  buf[0] = (char)depth;
  buf[sizeof buf - 1] = prev ? prev[0] : 0;
  if (depth > recurse_limit)
    return buf[0];
  return recurse(buf, depth + 1) + buf[1];
}
static void child_stack_overflow(void) {
  heron__guard *g = open_guard();
  heron__guard_enter(g, "strategy", "/plugins/deep.so", "load_state", 0);
  recurse(NULL, 0);
}

TEST(stack_overflow_in_a_call_is_caught_on_the_alternate_stack) {
  child c;
  run_child(child_stack_overflow, &c);
  CHECK_STOPPED(c);
  CHECK_STR_CONTAINS(c.err, "heron: strategy plugin /plugins/deep.so crashed "
                            "in load_state (SIGSEGV)");
}

/* ---- what is not a plugin's fault is left alone -------------------------- */

static void child_crash_after_leave(void) {
  heron__guard *g = open_guard();
  heron__guard_enter(g, "strategy", "/plugins/fine.so", "propose", 10);
  heron__guard_leave(g);
  segv_now();
}

TEST(crash_with_no_call_active_is_not_caught) {
  child c;
  run_child(child_crash_after_leave, &c);
  CHECK_MSG(!strstr(c.err, "heron:"), "the guard spoke: %s", c.err);
#if defined(__SANITIZE_ADDRESS__)
  /* The previous disposition is AddressSanitizer's: it reports the fault. */
  CHECK_STR_CONTAINS(c.err, "AddressSanitizer: SEGV");
  CHECK_MSG(!(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0), "status 0x%x",
            (unsigned)c.status);
#else
  CHECK_MSG(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGSEGV,
            "status 0x%x, stderr: %s", (unsigned)c.status, c.err);
#endif
}

static void child_crash_after_close(void) {
  heron__guard_close(open_guard());
  raise(SIGSEGV);
}

TEST(crash_after_close_is_not_caught) {
  child c;
  run_child(child_crash_after_close, &c);
  CHECK_MSG(!strstr(c.err, "heron:"), "the guard spoke: %s", c.err);
  CHECK_MSG(!(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0), "status 0x%x",
            (unsigned)c.status);
}

/* A call that returns within its limit, then a long time with no call
 * active: nothing is stopped. */
static void child_within_limit(void) {
  heron__guard *g = open_guard();
  /* Limits with seconds to spare: a loaded machine may oversleep. */
  heron__guard_enter(g, "strategy", "/plugins/slow.so", "propose", 3);
  heron__guard_enter(g, "model", "/plugins/slow_model.so", "predict", 3);
  usleep(600000);
  heron__guard_leave(g);
  usleep(300000);
  heron__guard_leave(g);
  usleep(1500000);
  heron__guard_close(g);
  _exit(0);
}

TEST(calls_within_their_limit_are_not_stopped) {
  child c;
  run_child(child_within_limit, &c);
  CHECK_MSG(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0,
            "status 0x%x, stderr: %s", (unsigned)c.status, c.err);
  CHECK_EQ(c.err[0], '\0');
}

/* The outer call is timed from its own start once the inner one returns:
 * 0.7 s inside predict and 0.6 s more in propose pass propose's 1 s. */
static void child_outer_limit(void) {
  heron__guard *g = open_guard();
  heron__guard_enter(g, "strategy", "/plugins/slow.so", "propose", 1);
  heron__guard_enter(g, "model", "/plugins/slow_model.so", "predict", 1);
  usleep(700000);
  heron__guard_leave(g);
  usleep(600000);
  heron__guard_leave(g);
  _exit(0);
}

TEST(outer_call_is_timed_from_its_own_start) {
  child c;
  run_child(child_outer_limit, &c);
  CHECK_STOPPED(c);
  CHECK_STR_CONTAINS(c.err, "heron: strategy plugin /plugins/slow.so did not "
                            "return from propose within 1 s");
}

/* ---- the guard itself ---------------------------------------------------- */

TEST(only_one_guard_open_at_a_time) {
  heron__guard *a = NULL, *b = NULL;
  heron_error err = {0};
  CHECK_OK(heron__guard_open(&a, 2, NULL, &err), &err);
  heron_error_clear(&err);
  int rc = heron__guard_open(&b, 2, NULL, &err);
  heron__guard_close(a);
  CHECK_EQ(rc, HERON_EINVAL);
  CHECK(b == NULL);
  CHECK_STR_CONTAINS(err.text, "already open");
  /* Closed, it can be opened again. */
  heron_error_clear(&err);
  CHECK_OK(heron__guard_open(&b, 2, NULL, &err), &err);
  heron__guard_close(b);
  heron__guard_close(NULL);
  /* NULL makes enter and leave no-ops. */
  heron__guard_enter(NULL, "strategy", "x.so", "propose", 1);
  heron__guard_leave(NULL);
}

/* Unguarded models behave as before, and a guard that is open but unused
 * adds nothing to a working model's calls. */
TEST(guarded_model_calls_work_as_before) {
  heron__guard *g = NULL;
  heron_error err = {0};
  CHECK_OK(heron__guard_open(&g, 2, WHERE, &err), &err);
  heron_param p[] = {{"crash", "none"}};
  heron_model *m = NULL;
  CHECK_OK(heron__model_open_guarded(TPLUG("model_crash_fit"), p, 1, 2, 1, g, 5,
                                     &m, &err),
           &err);
  CHECK(m->guard == g);
  double X[4] = {1, 2, 3, 4}, y[2] = {1, 3}, out[2], imp[2];
  CHECK_OK(heron__model_fit(m, X, y, 2, 2, &err), &err);
  CHECK_OK(heron_model_predict(m, X, 2, 2, out, &err), &err);
  CHECK(fabs(out[0] - 2) < 1e-12 && fabs(out[1] - 2) < 1e-12);
  CHECK_OK(heron_model_importance(m, imp, 2, &err), &err);
  /* The stub save fails: the failure passes through the guard unchanged. */
  CHECK_EQ(heron__model_save(m, "/nonexistent/m", &err), HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "save failed");
  heron__model_set_guard(m, NULL, 5);
  CHECK(m->guard == NULL && m->guard_limit_s == 0);
  heron__model_close(m);
  heron__guard_close(g);
  heron__model_set_guard(NULL, NULL, 0);
}
