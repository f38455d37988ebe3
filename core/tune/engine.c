/* core/tune/engine.c - the tuning loop:
 *
 *   propose -> drop invalid / duplicate -> generate and build in parallel ->
 *   run one at a time in a worker -> record and log (flushed per round) ->
 *   fit the model -> observe
 *
 * The engine alone enforces the budget (trials, wall time), so every
 * strategy is judged under the same rules.
 *
 * A round is measured by the meter the task gets (core/measure/meter.h):
 * here, by building and running each kernel; from recorded measurements;
 * or elsewhere, by o->remote.  The engine does not ask which.  It asks the
 * meter's properties: on a simulated clock (HERON__METER_SIMULATED) each
 * answer costs the seconds the meter reports, what measuring it would have
 * taken, and the log's "elapsed" and the time limit count real time
 * (strategy and model work) plus those costs, so strategies compared on
 * records spend the budget a real run would.  Every run logs "elapsed",
 * continued across --resume. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/measure/meter.h"
#include "core/plugin/guard.h"
#include "core/plugin/param_table.h"
#include "core/plugin/plugin.h"
#include "core/record/record.h"
#include "core/targets/hw.h"
#include "core/task/task.h"
#include "core/util/util.h"
#include "heron/tune.h"

/* A round that brings nothing new this many times in a row ends the run:
 * the strategy (or the space) has run out of unmeasured configs. */
#define MAX_EMPTY_ROUNDS 8
/* Seconds a plugin call may go on after a SIGINT / SIGTERM before the
 * guard ends the run without it (heron__guard_watch_stop): long enough for
 * a call that was about to return, short enough for a Ctrl-C to work. */
#define STOP_GRACE_S 2.0

HERON_API void heron_tune_options_init(heron_tune_options *o) {
  memset(o, 0, sizeof *o);
  o->strategy = "random";
  o->trials = 200;
  o->seed = 1;
  o->batch = 16;
  o->measure.number = 3;
  o->measure.repeat = 3;
  o->measure.min_repeat_ms = 100;
  o->measure.timeout_s = 30;
}

/* Everything one run holds; torn down by run_free in reverse order. */
typedef struct run {
  const heron_task *task;
  const heron_tune_options *o;
  const heron_space *sp;
  int nvars;
  heron_history hist;
  heron_rng rng;
  heron__plugin strat_lib;
  const heron_strategy_plugin *strat;
  void *strat_self;
  heron_strategy_env env;
  heron_model *model;
  /* What measures the rounds (core/measure/meter.h). */
  heron__meter *meter;
  FILE *log;
  int log_fd; /* the log, open and locked (flock) from before the resume
                 until the end, or -1 */
  heron__log_ctx log_ctx;
  heron__guard *guard; /* contains crashes and hangs of plugin calls */
  /* Resumed configs to measure again before the strategy is asked
   * (heron__log_retry): retry[retry_next..nretry). */
  int64_t *retry;
  int nretry, retry_next;
  /* The last trial number given: the highest in the resumed log (whose
   * records set aside to measure again are in the log, not the history),
   * then one more per new record. */
  int trial_last;
  char strategy_name[64];
  double t0;
  heron_tune_result *res;
  int compile_only; /* build, never run (o->measure.compile_only) */
  int emulate;      /* kernels checked once, untimed (o->measure.emulate) */
  int simulated;    /* the meter's clock is simulated (meter.h) */
  /* "elapsed" of each history record (by history index); elapsed_base is
   * the last resumed one, sim_s the simulated measuring time so far. */
  double *elapsed;
  int elapsed_cap;
  double elapsed_base;
  double sim_s;
  double *costs; /* simulated seconds of each answer of a round (0 on a
                    real clock) */
  /* The round in flight, for candidates recorded as they arrive from a
   * remote measurement (o->remote's `arrived`): its arrays, indexed as
   * the remote function's, and pre[i], the stored record of candidate i
   * once recorded (NULL before). */
  struct {
    heron_measurement *ms;
    char **errors;
    const uint64_t *keys;
    const int *env;
    const heron_measurement **pre;
    int rc;
    heron_error *err;
  } rd;
} run;

/* Seconds since the run started as the log counts them (DESIGN: the
 * convergence against wall time): real time plus, on a simulated clock,
 * the simulated measuring time, continuing a resumed log's. */
static double run_elapsed(const run *r) {
  return r->elapsed_base + (heron__now() - r->t0) + r->sim_s;
}

/* Stores the elapsed time of history record i. */
static int set_elapsed(run *r, int i, double el, heron_error *err) {
  if (i >= r->elapsed_cap) {
    int nc = r->elapsed_cap ? r->elapsed_cap * 2 : 256;
    while (nc <= i)
      nc *= 2;
    double *na = realloc(r->elapsed, (size_t)nc * sizeof *na);
    if (!na)
      return heron_error_set(err, HERON_ENOMEM, "out of memory");
    r->elapsed = na;
    r->elapsed_cap = nc;
  }
  r->elapsed[i] = el;
  return HERON_OK;
}

static void progress(const run *r, const char *fmt, ...) HERON_PRINTF(2, 3);
static void progress(const run *r, const char *fmt, ...) {
  if (!r->o->progress)
    return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(r->o->progress, fmt, ap);
  va_end(ap);
  fflush(r->o->progress);
}

/* The env's logger: plugins never write to stdout, they come here. */
static void env_log(const heron_strategy_env *env, int level, const char *fmt,
                    ...) {
  const run *r = env->host;
  if (!r->o->progress || (level >= 2 && !r->o->verbose))
    return;
  fprintf(r->o->progress, "[%s]%s ", r->strategy_name,
          level == 1 ? " warning:" : "");
  va_list ap;
  va_start(ap, fmt);
  vfprintf(r->o->progress, fmt, ap);
  va_end(ap);
  fputc('\n', r->o->progress);
}

/* 1 once the tool's signal handler asked the run to stop (o->stop). */
static int stopping(const run *r) { return r->o->stop && *r->o->stop; }

/* Seconds a plugin call may take: the plugin timeout, and, for a run on
 * real time, never past the end of the time limit (at least a second, so a
 * call made just before it still gets to return). */
static double call_limit(const run *r) {
  double lim = r->o->plugin_timeout_s > 0 ? r->o->plugin_timeout_s
                                          : HERON_PLUGIN_TIMEOUT_DEFAULT;
  /* A budget of simulated time is checked between rounds: a strategy call
   * that runs past it only overshoots by that call (and a scorer reads the
   * run up to the budget), so it is not killed for it, as a slow Python
   * strategy near the end of a heron-bench budget would be. */
  if (r->o->time_limit_s > 0 && !r->simulated) {
    double left = r->o->time_limit_s - (heron__now() - r->t0 + r->sim_s);
    if (left < 1)
      left = 1;
    if (left < lim)
      lim = left;
  }
  return lim;
}

/* Brackets each call into the strategy: a crash or a hang inside it ends
 * the process with a message naming the plugin file and `fn`. */
static void enter(const run *r, const char *fn) {
  heron__guard_enter(r->guard, "strategy", r->strat_lib.path, fn,
                     call_limit(r));
}

static void leave(const run *r) { heron__guard_leave(r->guard); }

static int check_options(const heron_tune_options *o, heron_error *err) {
  if (o->trials < 1)
    return heron_error_set(err, HERON_EINVAL,
                           "trials must be at least 1 (got %d)", o->trials);
  if (o->batch < 1)
    return heron_error_set(err, HERON_EINVAL,
                           "batch must be at least 1 (got %d)", o->batch);
  if (o->time_limit_s < 0)
    return heron_error_set(err, HERON_EINVAL, "time limit must be >= 0");
  if (!o->strategy || !*o->strategy)
    return heron_error_set(err, HERON_EINVAL, "no strategy given");
  if (o->plugin_timeout_s < 0)
    return heron_error_set(err, HERON_EINVAL,
                           "plugin timeout must be >= 0 (got %g)",
                           o->plugin_timeout_s);
  if (o->measure.compile_only && o->measure.emulate)
    return heron_error_set(err, HERON_EINVAL,
                           "compile-only and emulate exclude each other: one "
                           "builds without running, the other runs on the "
                           "CPU");
  return HERON_OK;
}

/* Moves an existing, non-empty log aside instead of overwriting it, so a
 * log already written is never lost. */
static int set_aside(const char *path, run *r, heron_error *err) {
  struct stat st;
  if (stat(path, &st) != 0 || st.st_size == 0)
    return HERON_OK;
  char aside[4200];
  for (int i = 1; i < 10000; i++) {
    snprintf(aside, sizeof aside, "%s.%d", path, i);
    if (access(aside, F_OK) != 0)
      break;
  }
  if (rename(path, aside) != 0)
    return heron_error_set(err, HERON_EIO,
                           "cannot move the old log %s aside: %s", path,
                           strerror(errno));
  progress(r,
           "note: %s existed; moved it to %s (use --resume to continue a "
           "log)\n",
           path, aside);
  return HERON_OK;
}

/* The process that holds a flock on the file of inode `ino`, from
 * /proc/locks ("1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"), or 0
 * when it cannot be told. */
static long lock_holder(ino_t ino) {
  FILE *f = fopen("/proc/locks", "r");
  if (!f)
    return 0;
  char line[256];
  long pid = 0;
  while (!pid && fgets(line, sizeof line, f)) {
    char kind[16], mode[16], dev[64];
    long p = 0;
    unsigned long long lino = 0;
    const char *c = strchr(line, ':');
    if (!c || sscanf(c + 1, "%15s %*s %15s %ld %63s", kind, mode, &p, dev) != 4)
      continue;
    const char *last = strrchr(dev, ':');
    if (last && sscanf(last + 1, "%llu", &lino) == 1 &&
        lino == (unsigned long long)ino && !strcmp(kind, "FLOCK"))
      pid = p;
  }
  fclose(f);
  return pid;
}

/* "process 4242 (heron-search)", or "another process". */
static void describe_process(long pid, char *buf, size_t cap) {
  if (pid <= 0) {
    snprintf(buf, cap, "another process");
    return;
  }
  char path[64], comm[64] = "";
  snprintf(path, sizeof path, "/proc/%ld/comm", pid);
  FILE *f = fopen(path, "r");
  if (f) {
    if (fgets(comm, sizeof comm, f))
      comm[strcspn(comm, "\n")] = '\0';
    fclose(f);
  }
  if (comm[0])
    snprintf(buf, cap, "process %ld (%s)", pid, comm);
  else
    snprintf(buf, cap, "process %ld", pid);
}

/* Opens `path` (created if missing) and takes an exclusive flock on it
 * without waiting.  A file another live run holds is refused, naming that
 * process.  The lock is checked to be on the file the path names now (a
 * run that just moved the file aside may have locked the old one).  *fd
 * gets the descriptor, open for appending. */
static int lock_file(const char *path, int *fd, heron_error *err) {
  for (int tries = 0; tries < 100; tries++) {
    /* O_NONBLOCK: a FIFO at the path must not block the open (a FIFO
     * without a reader fails with ENXIO); whatever is not a regular file
     * is refused, for every caller of the library, not only the tools. */
    int f = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK,
                 0666);
    if (f < 0)
      return heron_error_set(err, HERON_EIO, "cannot open log %s: %s", path,
                             errno == ENXIO ? "it is a FIFO, not a file"
                                            : strerror(errno));
    struct stat held, named;
    if (fstat(f, &held) == 0 && !S_ISREG(held.st_mode)) {
      close(f);
      return heron_error_set(err, HERON_EIO, "log %s is not a regular file",
                             path);
    }
    fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
      int e = errno;
      char who[128];
      describe_process(fstat(f, &held) == 0 ? lock_holder(held.st_ino) : 0, who,
                       sizeof who);
      close(f);
      if (e == EWOULDBLOCK)
        return heron_error_set(err, HERON_EIO,
                               "log %s is in use by %s, another tuning run; "
                               "wait for it to end, or give another --log",
                               path, who);
      return heron_error_set(err, HERON_EIO, "cannot lock log %s: %s", path,
                             strerror(e));
    }
    if (fstat(f, &held) == 0 && stat(path, &named) == 0 &&
        held.st_ino == named.st_ino && held.st_dev == named.st_dev) {
      *fd = f;
      return HERON_OK;
    }
    close(f); /* moved or removed since it was opened: again */
  }
  return heron_error_set(err, HERON_EIO,
                         "cannot lock log %s: it keeps being replaced", path);
}

/* Takes the log for this run before anything reads or writes it: locked,
 * so that two runs never write one log, and an older log moved aside (when
 * the run does not resume it) so that it is never overwritten.  A dry run
 * only checks that no other run holds it, and creates nothing. */
static int claim_log(run *r, heron_error *err) {
  const heron_tune_options *o = r->o;
  r->log_fd = -1;
  if (!o->log_path)
    return HERON_OK;
  if (o->dry_run) {
    if (access(o->log_path, F_OK) != 0)
      return HERON_OK;
    int rc = lock_file(o->log_path, &r->log_fd, err);
    if (rc == HERON_OK) {
      close(r->log_fd);
      r->log_fd = -1;
    }
    return rc;
  }
  int rc = lock_file(o->log_path, &r->log_fd, err);
  int same = o->resume_path && !strcmp(o->resume_path, o->log_path);
  struct stat st;
  if (rc || same || fstat(r->log_fd, &st) != 0 || st.st_size == 0)
    return rc;
  /* Held by this run now, so moving it aside races with nobody. */
  rc = set_aside(o->log_path, r, err);
  close(r->log_fd);
  r->log_fd = -1;
  return rc ? rc : lock_file(o->log_path, &r->log_fd, err);
}

/* Starts writing the claimed log: a fresh one gets the resumed history
 * first; a resumed one already holds it. */
static int open_log(run *r, heron_error *err) {
  const heron_tune_options *o = r->o;
  if (r->log_fd < 0)
    return HERON_OK;
  int same = o->resume_path && !strcmp(o->resume_path, o->log_path);
  /* The stream gets a descriptor of its own, so that closing it leaves the
   * lock, held by log_fd, in place until the run ends.  Close-on-exec like
   * log_fd: a compiler started by this run must not inherit the file (and
   * with it the lock, which would outlive a killed run). */
  int fd = fcntl(r->log_fd, F_DUPFD_CLOEXEC, 0);
  r->log = fd >= 0 ? fdopen(fd, "a") : NULL;
  if (!r->log) {
    if (fd >= 0)
      close(fd);
    return heron_error_set(err, HERON_EIO, "cannot open log %s: %s",
                           o->log_path, strerror(errno));
  }
  if (same)
    return HERON_OK;
  for (int i = 0; i < r->hist.n; i++) {
    r->log_ctx.elapsed = r->elapsed ? r->elapsed[i] : 0;
    int rc =
        heron__log_write(r->log, r->sp, &r->log_ctx, r->hist.items[i], err);
    if (rc)
      return rc;
  }
  if (fflush(r->log) != 0)
    return heron_error_set(err, HERON_EIO, "cannot write log %s: %s",
                           o->log_path, strerror(errno));
  return HERON_OK;
}

/* The highest "trial" of the log at `path` (0 when none): its lines that
 * are not JSON objects with an integer trial are left to the reader, which
 * has accepted the log already. */
static int log_last_trial(const char *path, int *last, heron_error *err) {
  char *text = NULL;
  size_t len = 0;
  *last = 0;
  int rc = heron__read_file(path, &text, &len, err);
  if (rc)
    return rc;
  for (char *line = text; line < text + len;) {
    char *nl = memchr(line, '\n', (size_t)(text + len - line));
    size_t n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
    json_t *o = json_loadb(line, n, 0, NULL);
    json_t *trial = json_object_get(o, "trial");
    if (json_is_integer(trial) && json_integer_value(trial) > *last &&
        json_integer_value(trial) < INT_MAX / 2)
      *last = (int)json_integer_value(trial);
    json_decref(o);
    line += n + 1;
  }
  free(text);
  return HERON_OK;
}

/* Reads the log to resume from, cutting a half-written last line off the
 * file so appends continue a well-formed log. */
static int resume(run *r, heron_error *err) {
  const char *path = r->o->resume_path;
  if (!path)
    return HERON_OK;
  int dropped = 0;
  long valid = 0;
  /* A timed run measures again what was only built or emulated; every run
   * measures again what the environment failed. */
  heron__log_retry retry = {.untimed = !r->compile_only && !r->emulate};
  int rc = heron__log_read_resume(path, r->sp, heron_task_key(r->task),
                                  &r->hist, &r->rng, &dropped, &valid,
                                  &r->elapsed, &retry, err);
  if (rc)
    return rc;
  r->retry = retry.cfgs;
  r->nretry = retry.n;
  /* New trials are numbered after every record of the log, those set
   * aside to measure again included: a number is never given twice. */
  rc = log_last_trial(path, &r->trial_last, err);
  if (rc)
    return rc;
  if (r->trial_last < r->hist.n)
    r->trial_last = r->hist.n;
  /* New trials continue the resumed log's clock. */
  r->elapsed_cap = r->hist.n;
  for (int i = 0; i < r->hist.n; i++)
    if (r->elapsed[i] > r->elapsed_base)
      r->elapsed_base = r->elapsed[i];
  if (dropped) {
    progress(r,
             "note: %s ended with a half-written line (a killed run); "
             "dropped it\n",
             path);
    if (r->o->log_path && !strcmp(r->o->log_path, path) && !r->o->dry_run &&
        truncate(path, valid) != 0)
      return heron_error_set(err, HERON_EIO, "cannot repair %s: %s", path,
                             strerror(errno));
  }
  /* A last line cut before its newline parses but must not run into the
   * next record. */
  if (r->o->log_path && !strcmp(r->o->log_path, path) && !r->o->dry_run &&
      valid > 0) {
    FILE *f = fopen(path, "r+");
    if (f && fseek(f, valid - 1, SEEK_SET) == 0 && fgetc(f) != '\n') {
      fseek(f, 0, SEEK_END);
      fputc('\n', f);
    }
    if (f)
      fclose(f);
  }
  r->res->resumed = r->hist.n;
  progress(r, "resumed %d trials from %s\n", r->hist.n, path);
  if (r->nretry)
    progress(r,
             "note: %d resumed config%s will be measured again first "
             "(untimed by --compile-only or --emulate, or failed by the "
             "environment)\n",
             r->nretry, r->nretry > 1 ? "s" : "");
  return HERON_OK;
}

static void strip_so(const char *name, char *out, size_t cap) {
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  snprintf(out, cap, "%s", base);
  size_t n = strlen(out);
  if (n > 3 && !strcmp(out + n - 3, ".so"))
    out[n - 3] = '\0';
}

static int open_strategy(run *r, heron_error *err) {
  const heron_tune_options *o = r->o;
  int rc = heron__plugin_load_strategy(o->strategy, &r->strat_lib, err);
  if (rc)
    return rc;
  r->strat = r->strat_lib.desc;
  snprintf(r->strategy_name, sizeof r->strategy_name, "%s",
           r->strat->name ? r->strat->name : "strategy");
  /* Unknown keys and, for typed declarations, bad values stop the run
   * here (a dry run too), before create() sees anything. */
  heron__param_table pt = heron__strategy_param_table(r->strat);
  char who[96];
  snprintf(who, sizeof who, "strategy %s", r->strategy_name);
  heron_param *params = NULL;
  int nparams = 0;
  rc = heron__param_table_apply(&pt, o->strategy_params, o->n_strategy_params,
                                who, &params, &nparams, err);
  if (rc)
    return rc;
  r->env.abi_version = HERON_STRATEGY_ABI_VERSION;
  r->env.struct_size = sizeof r->env;
  r->env.space = r->sp;
  r->env.rng = &r->rng;
  r->env.model = r->model;
  r->env.history = &r->hist;
  r->env.task_key = heron_task_key(r->task);
  r->env.batch = o->batch;
  r->env.log = env_log;
  r->env.host = r;
  heron_error perr;
  heron_error_clear(&perr);
  enter(r, "create");
  rc = r->strat->create(&r->env, params, nparams, &r->strat_self, &perr);
  leave(r);
  free(params);
  if (rc)
    return heron_error_set(err,
                           rc == HERON_EINVAL ? HERON_EINVAL : HERON_EPLUGIN,
                           "strategy %s: create failed: %s", r->strategy_name,
                           perr.text[0] ? perr.text : heron_strerror(rc));
  return HERON_OK;
}

/* Fits the model on every successful measurement: features of the config,
 * target log(GFLOP/s). */
static int fit_model(run *r, heron_error *err) {
  if (!r->model)
    return HERON_OK;
  int d = heron_space_nfeatures(r->sp), n = 0;
  double *X = malloc((size_t)r->hist.n * (size_t)d * sizeof *X);
  double *y = malloc((size_t)r->hist.n * sizeof *y);
  int rc = HERON_OK;
  if (!X || !y)
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory fitting the model");
  for (int i = 0; rc == HERON_OK && i < r->hist.n; i++) {
    const heron_measurement *m = r->hist.items[i];
    if (m->status != HERON_MEAS_OK || m->gflops <= 0)
      continue;
    heron_space_features(r->sp, m->config, X + (size_t)n * (size_t)d);
    y[n++] = log(m->gflops);
  }
  if (rc == HERON_OK && n >= 2) {
    heron_error merr;
    heron_error_clear(&merr);
    if (heron__model_fit(r->model, X, y, n, d, &merr) != HERON_OK)
      progress(r, "warning: model fit failed: %s\n", merr.text);
  }
  free(X);
  free(y);
  return rc;
}

static int observe(run *r, const heron_measurement *res, int n,
                   heron_error *err) {
  if (n == 0)
    return HERON_OK;
  heron_error perr;
  heron_error_clear(&perr);
  enter(r, "observe");
  int rc = r->strat->observe(r->strat_self, res, n, &perr);
  leave(r);
  if (rc)
    return heron_error_set(err, HERON_EPLUGIN,
                           "strategy %s: observe failed: %s", r->strategy_name,
                           perr.text[0] ? perr.text : heron_strerror(rc));
  return HERON_OK;
}

/* Takes records recs[0..n) of the history into account, whether just
 * measured or resumed: counts them, refits the model on the whole history
 * and tells the strategy (observe gets a contiguous copy, as its contract
 * wants an array). */
static int learn(run *r, const heron_measurement *const *recs, int n,
                 heron_error *err) {
  for (int i = 0; i < n; i++)
    if (recs[i]->status == HERON_MEAS_OK)
      r->res->ok++;
    else
      r->res->failed++;
  int rc = fit_model(r, err);
  if (rc)
    return rc;
  heron_measurement *view = malloc((size_t)n * sizeof *view);
  if (!view)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  for (int i = 0; i < n; i++)
    view[i] = *recs[i];
  rc = observe(r, view, n, err);
  free(view);
  return rc;
}

/* Keeps the proposals that are valid and new; counts the others. */
static int filter(run *r, int64_t *props, int got, uint64_t *keys) {
  int keep = 0, invalid = 0, dup = 0;
  for (int i = 0; i < got; i++) {
    int64_t *c = props + (size_t)i * (size_t)r->nvars;
    if (heron_space_violations(r->sp, c, NULL, 0) != 0) {
      invalid++;
      continue;
    }
    uint64_t k = heron__config_key(r->sp, c);
    int seen = heron__history_has(&r->hist, k);
    for (int j = 0; j < keep && !seen; j++)
      seen = keys[j] == k;
    if (seen) {
      dup++;
      continue;
    }
    if (keep != i)
      memcpy(props + (size_t)keep * (size_t)r->nvars, c,
             (size_t)r->nvars * sizeof *c);
    keys[keep++] = k;
  }
  r->res->dropped_invalid += invalid;
  r->res->dropped_duplicate += dup;
  if (invalid)
    progress(r, "warning: strategy %s proposed %d invalid config%s; dropped\n",
             r->strategy_name, invalid, invalid > 1 ? "s" : "");
  if (dup && r->o->verbose)
    progress(r, "note: dropped %d already-measured proposal%s\n", dup,
             dup > 1 ? "s" : "");
  return keep;
}

static void arrived(void *engine, int i);

/* Measures configs cfgs[0..n) with the meter: done[i], env[i] and
 * *env_why as heron__meter_ops.round says.  A candidate the remote meter
 * reported as it arrived is recorded already; a failure to record it ends
 * the run. */
static int measure_round(run *r, const int64_t *cfgs, int n,
                         heron_measurement *out, char **errors, int *done,
                         int *env, char *env_why, size_t why_cap,
                         heron_error *err) {
  int rc = heron__meter_round(r->meter, cfgs, n, out, errors, done, env,
                              env_why, why_cap, r->costs, err);
  if (rc == HERON_OK && r->rd.rc)
    rc = r->rd.rc;
  return rc;
}

static void print_progress(run *r, int round_ok, int round_failed) {
  double el = heron__now() - r->t0 + r->sim_s;
  const heron_measurement *best = heron_history_best(&r->hist);
  int done = r->hist.n, total = r->o->trials;
  int measured = r->res->measured;
  double eta = measured > 0 ? el / measured * (total - done) : 0;
  if (r->o->time_limit_s > 0 && eta > r->o->time_limit_s - el)
    eta = r->o->time_limit_s - el;
  /* Neither a build nor an emulation has a time worth a GFLOP/s figure:
   * those runs count what passed.  (res->ok does not hold this round's
   * trials yet: learn() adds them after this line.) */
  if (r->compile_only || r->emulate)
    progress(r,
             "[%4d/%d] %s %d ok  round: %d ok, %d failed  elapsed %.1f s  "
             "ETA %.0f s\n",
             done, total, r->compile_only ? "compiled" : "emulated",
             r->res->ok + round_ok, round_ok, round_failed, el,
             eta > 0 ? eta : 0);
  else if (best)
    progress(r,
             "[%4d/%d] best %.2f GFLOP/s (trial %d)  round: %d ok, %d "
             "failed  elapsed %.1f s  ETA %.0f s\n",
             done, total, best->gflops, best->trial, round_ok, round_failed, el,
             eta > 0 ? eta : 0);
  else
    progress(r,
             "[%4d/%d] no successful kernel yet  round: %d ok, %d failed  "
             "elapsed %.1f s\n",
             done, total, round_ok, round_failed, el);
}

/* Records a round's measurements: history, log (flushed), counters. */
/* Records one measurement: into the history (the next trial number, after
 * every one of a resumed log), its elapsed time (cost: its simulated
 * seconds, 0 on a real clock), the verbose line and the log line (not
 * flushed).  *stored gets the history's record. */
static int record_one(run *r, heron_measurement *m, char *error, uint64_t key,
                      int env, double cost, const heron_measurement **stored,
                      heron_error *err) {
  m->trial = ++r->trial_last;
  m->error = error ? error : "";
  *stored = heron__history_add(&r->hist, m, key);
  if (!*stored)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  r->res->measured++;
  /* On a simulated clock answering the trial stands for measuring it, as
   * long as the meter says that took. */
  r->sim_s += cost;
  int erc = set_elapsed(r, r->hist.n - 1, run_elapsed(r), err);
  if (erc)
    return erc;
  r->log_ctx.elapsed = r->elapsed[r->hist.n - 1];
  if (r->o->verbose && r->compile_only)
    progress(r,
             "  trial %d: %s build %.2f s regs %d spill %d B smem %lld B "
             "%s\n",
             m->trial, heron_meas_status_name(m->status), m->build_seconds,
             m->regs, m->spill_bytes, (long long)m->smem_bytes, m->error);
  else if (r->o->verbose)
    progress(r, "  trial %d: %s %.3f ms %.2f GFLOP/s%s %s\n", m->trial,
             heron_meas_status_name(m->status), m->seconds * 1e3, m->gflops,
             m->simulated ? " (simulated)" : "", m->error);
  if (r->log) {
    r->log_ctx.env_failure = env != 0;
    return heron__log_write(r->log, r->sp, &r->log_ctx, *stored, err);
  }
  return HERON_OK;
}

static int flush_log(run *r, heron_error *err) {
  if (r->log && fflush(r->log) != 0)
    return heron_error_set(err, HERON_EIO, "cannot write log %s: %s",
                           r->o->log_path, strerror(errno));
  return HERON_OK;
}

/* Records the round's measurements ms[0..n) (those pre[i] says were
 * recorded as they arrived are only taken over), flushes the log and
 * prints the round's progress line. */
static int record_round(run *r, heron_measurement *ms, char **errors, int n,
                        const uint64_t *keys, const int *env,
                        const heron_measurement **pre,
                        const heron_measurement **stored, heron_error *err) {
  int ok = 0;
  for (int i = 0; i < n; i++) {
    if (pre[i])
      stored[i] = pre[i];
    else {
      int rc = record_one(r, &ms[i], errors[i], keys[i], env[i], r->costs[i],
                          &stored[i], err);
      if (rc)
        return rc;
    }
    if (stored[i]->status == HERON_MEAS_OK)
      ok++;
  }
  int rc = flush_log(r, err);
  if (rc)
    return rc;
  print_progress(r, ok, n - ok);
  return HERON_OK;
}

/* o->remote's `arrived`: candidate i of the round in flight is measured;
 * record and log it now, so a job killed before the round ends keeps it. */
static void arrived(void *engine, int i) {
  run *r = engine;
  if (r->rd.rc || r->rd.pre[i])
    return;
  r->rd.rc = record_one(r, &r->rd.ms[i], r->rd.errors[i], r->rd.keys[i],
                        r->rd.env[i], 0, &r->rd.pre[i], r->rd.err);
  if (!r->rd.rc)
    r->rd.rc = flush_log(r, r->rd.err);
}

static int state_path(const run *r, char *buf, size_t cap) {
  if (!r->o->log_path)
    return 0;
  snprintf(buf, cap, "%s.state", r->o->log_path);
  return 1;
}

/* Asks the strategy for up to `want` configs, or takes them from the
 * resumed configs to measure again, which come first. */
static int propose(run *r, int want, int64_t *props, int *got,
                   heron_error *err) {
  if (r->retry_next < r->nretry) {
    int k = r->nretry - r->retry_next;
    if (k > want)
      k = want;
    memcpy(props, r->retry + (size_t)r->retry_next * (size_t)r->nvars,
           (size_t)k * (size_t)r->nvars * sizeof *props);
    r->retry_next += k;
    r->res->retried += k;
    *got = k;
    return HERON_OK;
  }
  heron_error perr;
  heron_error_clear(&perr);
  *got = 0;
  enter(r, "propose");
  int rc = r->strat->propose(r->strat_self, want, props, got, &perr);
  leave(r);
  if (rc)
    return heron_error_set(err, HERON_EPLUGIN,
                           "strategy %s: propose failed: %s", r->strategy_name,
                           perr.text[0] ? perr.text : heron_strerror(rc));
  if (*got < 0 || *got > want)
    return heron_error_set(err, HERON_EPLUGIN,
                           "strategy %s: propose returned %d configs for %d "
                           "wanted",
                           r->strategy_name, *got, want);
  return HERON_OK;
}

/* Keeps the entries i of a round with done[i], in order; returns how many
 * (the keys, errors and env flags move with their measurements). */
static int keep_done(heron_measurement *ms, char **errors, uint64_t *keys,
                     int *env, const heron_measurement **pre, const int *done,
                     int n) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (!done[i]) {
      free(errors[i]);
      errors[i] = NULL;
      continue;
    }
    ms[k] = ms[i];
    errors[k] = errors[i];
    keys[k] = keys[i];
    env[k] = env[i];
    pre[k] = pre[i];
    if (k != i)
      errors[i] = NULL;
    k++;
  }
  return k;
}

static int run_round(run *r, int64_t *props, uint64_t *keys,
                     heron_measurement *ms, char **errors, int *done, int *env,
                     const heron_measurement **stored, int *got_new,
                     heron_error *err) {
  int want = r->o->trials - r->hist.n;
  if (want > r->o->batch)
    want = r->o->batch;
  int got = 0;
  int rc = propose(r, want, props, &got, err);
  if (rc)
    return rc;
  int n = filter(r, props, got, keys);
  *got_new = n;
  if (n == 0)
    return HERON_OK;
  memset(errors, 0, (size_t)n * sizeof *errors);
  const heron_measurement **pre = r->rd.pre;
  memset(pre, 0, (size_t)n * sizeof *pre);
  r->rd.ms = ms;
  r->rd.errors = errors;
  r->rd.keys = keys;
  r->rd.env = env;
  r->rd.rc = HERON_OK;
  r->rd.err = err;
  char env_why[512] = "";
  rc = measure_round(r, props, n, ms, errors, done, env, env_why,
                     sizeof env_why, err);
  n = keep_done(ms, errors, keys, env, pre, done, n);
  /* A build failure that was the environment's stops the run; a
   * candidate lost with a remote process (env 2) does not. */
  int nenv = 0;
  for (int i = 0; i < n; i++)
    nenv += env[i] == 1;
  if (rc == HERON_OK && n > 0)
    rc = record_round(r, ms, errors, n, keys, env, pre, stored, err);
  for (int i = 0; i < n; i++)
    free(errors[i]);
  if (rc)
    return rc;
  if (nenv)
    return heron_error_set(err, HERON_EIO,
                           "builds fail for a reason that is not the config: "
                           "%s; the run stops (%d trial%s of this round "
                           "recorded as failed by the environment, measured "
                           "again on --resume)",
                           env_why[0] ? env_why : "the toolchain is broken",
                           nenv, nenv > 1 ? "s" : "");
  rc = n > 0 ? learn(r, stored, n, err) : HERON_OK;
  char sp[4200];
  if (rc == HERON_OK && n > 0 && HERON__PLUGIN_HAS(r->strat, save_state) &&
      state_path(r, sp, sizeof sp)) {
    heron_error serr;
    heron_error_clear(&serr);
    enter(r, "save_state");
    int src = r->strat->save_state(r->strat_self, sp, &serr);
    leave(r);
    if (src != HERON_OK)
      progress(r, "warning: strategy %s could not save its state: %s\n",
               r->strategy_name, serr.text);
  }
  return rc;
}

static int tune_loop(run *r, heron_error *err) {
  size_t nv = (size_t)r->nvars, b = (size_t)r->o->batch;
  int64_t *props = malloc(b * nv * sizeof *props);
  uint64_t *keys = malloc(b * sizeof *keys);
  heron_measurement *ms = malloc(b * sizeof *ms);
  char **errors = calloc(b, sizeof *errors);
  const heron_measurement **stored = malloc(b * sizeof *stored);
  int *done = malloc(b * sizeof *done);
  int *env = malloc(b * sizeof *env);
  free(r->costs);
  r->costs = calloc(b, sizeof *r->costs);
  free(r->rd.pre);
  r->rd.pre = calloc(b, sizeof *r->rd.pre);
  int rc = (props && keys && ms && errors && stored && done && env &&
            r->costs && r->rd.pre)
               ? HERON_OK
               : heron_error_set(err, HERON_ENOMEM, "out of memory");
  int empty = 0;
  while (rc == HERON_OK && r->hist.n < r->o->trials && !stopping(r)) {
    /* Real time, plus the simulated measuring time on a simulated clock.
     * Such a run's budget is its simulated clock, which a resumed run
     * continues: resuming one must not grant a second budget (heron-bench
     * scores T1/T4 runs against exactly that clock). */
    double spent = r->simulated ? run_elapsed(r) : heron__now() - r->t0;
    if (r->o->time_limit_s > 0 && spent >= r->o->time_limit_s) {
      progress(r, "time limit of %.0f s reached\n", r->o->time_limit_s);
      break;
    }
    int got_new = 0;
    /* The model's calls get the limit the strategy's get, time limit
     * included. */
    if (r->model)
      heron__model_set_guard(r->model, r->guard, call_limit(r));
    rc =
        run_round(r, props, keys, ms, errors, done, env, stored, &got_new, err);
    empty = got_new ? 0 : empty + 1;
    if (empty >= MAX_EMPTY_ROUNDS) {
      progress(r,
               "warning: strategy %s proposed nothing new in %d rounds; "
               "stopping (the space may be exhausted)\n",
               r->strategy_name, empty);
      break;
    }
  }
  free(props);
  free(keys);
  free(ms);
  free(errors);
  free(stored);
  free(done);
  free(env);
  if (rc == HERON_OK && stopping(r)) {
    r->res->stopped = (int)*r->o->stop;
    progress(r,
             "stopped by signal %d with %d trials%s%s; --resume continues "
             "the run\n",
             r->res->stopped, r->hist.n, r->o->log_path ? " in " : "",
             r->o->log_path ? r->o->log_path : "");
  }
  return rc;
}

/* Gives a resumed history to the model and the strategy before new rounds,
 * and lets a strategy that saved its state pick it up. */
static int warm_start(run *r, heron_error *err) {
  if (r->hist.n == 0)
    return HERON_OK;
  /* The strategy's generator would otherwise repeat the stream that
   * produced the resumed trials, and a strategy that draws from it (random
   * sampling above all) would propose them all again: every one a dropped
   * duplicate, round after round, until the run gives up.  Mixing in the
   * number of resumed trials gives a fresh stream that is still a pure
   * function of --seed and the log. */
  heron_rng_seed(&r->rng,
                 r->o->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)r->hist.n));
  int rc =
      learn(r, (const heron_measurement *const *)r->hist.items, r->hist.n, err);
  /* The state was saved beside the log being resumed, which need not be
   * the log this run writes (--resume A --log B): read A.state, and save
   * to B.state from the next round on. */
  char sp[4200];
  int have_state = 0;
  if (rc == HERON_OK && HERON__PLUGIN_HAS(r->strat, load_state) &&
      r->o->resume_path) {
    snprintf(sp, sizeof sp, "%s.state", r->o->resume_path);
    have_state = access(sp, R_OK) == 0;
    if (!have_state)
      progress(r,
               "note: no saved state %s; strategy %s continues from the "
               "resumed history alone\n",
               sp, r->strategy_name);
  }
  if (have_state) {
    heron_error serr;
    heron_error_clear(&serr);
    enter(r, "load_state");
    int lrc = r->strat->load_state(r->strat_self, sp, &serr);
    leave(r);
    if (lrc != HERON_OK)
      progress(r, "warning: strategy %s could not load %s: %s\n",
               r->strategy_name, sp, serr.text);
  }
  return rc;
}

int heron__emit(const heron_task *t, const heron_history *h, const char *dir,
                heron_error *err);

static void summarize(run *r) {
  heron_tune_result *res = r->res;
  const heron_measurement *best = heron_history_best(&r->hist);
  res->trials = r->hist.n;
  res->elapsed_s = heron__now() - r->t0;
  if (best) {
    res->best_trial = best->trial;
    res->best_seconds = best->seconds;
    res->best_gflops = best->gflops;
    heron_space_key(r->sp, best->config, res->best_key, sizeof res->best_key);
  }
}

static void run_free(run *r) {
  if (r->strat_self && r->strat) {
    enter(r, "destroy");
    r->strat->destroy(r->strat_self);
    leave(r);
  }
  heron__plugin_close(&r->strat_lib);
  heron__model_close(r->model);
  heron__guard_close(r->guard);
  free(r->retry);
  heron__meter_close(r->meter);
  free(r->costs);
  free(r->rd.pre);
  free(r->elapsed);
  if (r->log)
    fclose(r->log);
  /* The lock goes last: the log is whole by now. */
  if (r->log_fd >= 0)
    close(r->log_fd);
  heron__history_free(&r->hist);
}

HERON_API int heron_tune(const heron_task *t, const heron_tune_options *o,
                         heron_tune_result *res, heron_error *err) {
  heron_tune_result dummy;
  if (!res)
    res = &dummy;
  memset(res, 0, sizeof *res);
  int rc = check_options(o, err);
  if (rc)
    return rc;
  run r;
  memset(&r, 0, sizeof r);
  r.log_fd = -1;
  r.task = t;
  r.o = o;
  r.res = res;
  r.sp = heron_task_space(t);
  r.nvars = heron_space_nvars(r.sp);
  r.t0 = heron__now();
  heron_rng_seed(&r.rng, o->seed);
  heron__history_init(&r.hist, r.nvars);
  char sname[64];
  strip_so(o->strategy, sname, sizeof sname);
  r.log_ctx.task_key = heron_task_key(t);
  r.log_ctx.strategy = sname;
  r.log_ctx.seed = o->seed;
  /* The meter opens before anything is forked or loaded: a target whose
   * device is missing stops here, and a device probe's child is forked
   * from a thread-free process.  The measurement runner is forked first,
   * while this process has no threads: a model plugin may start a thread
   * pool as soon as it is loaded or fitted, and workers must not be forked
   * from such a process (core/measure/measure.h).  It costs a fork; the
   * inputs and reference are only computed when the first kernel is run.
   * A meter that measures elsewhere or answers from records starts none
   * of it. */
  heron__meter_options mo = {.measure = &o->measure,
                             .seed = o->seed,
                             .progress = o->progress,
                             .stop = o->stop,
                             .remote = o->remote,
                             .remote_ctx = o->remote_ctx,
                             .arrived = arrived,
                             .engine = &r};
  rc = heron__meter_open(t, &mo, &r.meter, err);
  r.compile_only = o->measure.compile_only != 0;
  r.emulate = o->measure.emulate != 0;
  r.log_ctx.untimed = r.compile_only || r.emulate;
  if (r.meter) {
    r.simulated = (r.meter->props & HERON__METER_SIMULATED) != 0;
    r.log_ctx.build_stats = (r.meter->props & HERON__METER_BUILD_STATS) != 0;
  }
  /* Crashes and hangs in plugin calls end the run with their name.  The
   * guard's watchdog is a thread, so it starts after the runner's fork. */
  {
    char where[4200];
    if (o->log_path && !o->dry_run)
      snprintf(where, sizeof where,
               "The log %s holds every trial measured before this round.",
               o->log_path);
    else
      snprintf(where, sizeof where, "No log was being written.");
    if (!rc)
      rc = heron__guard_open(&r.guard, STDERR_FILENO, where, err);
    /* A Ctrl-C while a plugin call hangs ends the run at once. */
    if (!rc)
      heron__guard_watch_stop(r.guard, o->stop, STOP_GRACE_S);
  }
  /* Everything that can be wrong with the input is checked before the
   * first (slow) measurement: plugins, parameters, logs. */
  if (!rc && o->model) {
    rc = heron__model_open_guarded(o->model, o->model_params, o->n_model_params,
                                   heron_space_nfeatures(r.sp), o->seed,
                                   r.guard, call_limit(&r), &r.model, err);
  }
  if (!rc)
    rc = open_strategy(&r, err);
  if (!rc)
    rc = claim_log(&r, err);
  if (!rc)
    rc = resume(&r, err);
  if (!rc && o->dry_run) {
    summarize(&r);
    run_free(&r);
    return HERON_OK;
  }
  if (!rc)
    rc = open_log(&r, err);
  if (!rc && o->emit_dir)
    rc = heron__mkdirs(o->emit_dir, err);
  if (!rc) {
    progress(&r, "tuning %s with %s%s%s: %d trials, batch %d, seed %llu\n",
             heron_task_key(t), r.strategy_name, o->model ? " + " : "",
             o->model ? o->model : "", o->trials, o->batch,
             (unsigned long long)o->seed);
    if (r.compile_only)
      progress(&r, "%s", r.meter->compile_only);
    else if (r.emulate)
      progress(&r, "emulate: each kernel checked once on the CPU, not "
                   "timed\n");
    rc = warm_start(&r, err);
  }
  if (!rc)
    rc = tune_loop(&r, err);
  summarize(&r);
  if (!rc && o->emit_dir && heron_history_best(&r.hist))
    rc = heron__emit(t, &r.hist, o->emit_dir, err);
  run_free(&r);
  return rc;
}
