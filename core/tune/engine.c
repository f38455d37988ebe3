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
 * taken, and the log's "elapsed" and the time limit count the process's
 * CPU time (strategy and model work, on every thread) plus those costs, so
 * strategies compared on records spend the budget a real run would.  CPU
 * time, not wall time: on a shared machine wall time stretched a run's own
 * work by the load (a 1.5 CPU-second run took 79 s at a load of 14 on 2
 * cores), and the scores with it.  A pipe strategy's program is another
 * process, whose time is its own and not counted.  Every run logs
 * "elapsed", continued across --resume.
 *
 * This file sets a run up (options, the meter, the guard, the strategy)
 * and tears it down; engine_log.c claims, resumes and writes its log,
 * engine_round.c runs its rounds (engine.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/measure/meter.h"
#include "core/plugin/guard.h"
#include "core/plugin/param_table.h"
#include "core/plugin/plugin.h"
#include "core/tune/engine.h"
#include "core/util/util.h"

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

/* Seconds since the run started as the log counts them (DESIGN: the
 * convergence against wall time): real time plus, on a simulated clock,
 * the simulated measuring time, continuing a resumed log's. */
double heron__tune_elapsed(const run *r) {
  return r->elapsed_base + (heron__tune_clock(r) - r->clock0) + r->sim_s;
}

double heron__tune_clock(const run *r) {
  return r->simulated ? heron__cpu_now() : heron__now();
}

/* The mean simulated cost of a config of a recorded (T1/T4) task, what a
 * trial is expected to cost before any was measured; 0 for other tasks. */
static double recorded_mean_cost(const heron_task *t) {
  double *secs = NULL, *cost = NULL, sum = 0;
  int n = 0;
  heron_error e;
  heron_error_clear(&e);
  if (heron_task_recorded_space(t, &secs, &cost, &n, &e) != HERON_OK)
    return 0;
  for (int i = 0; i < n; i++)
    sum += cost[i];
  heron_free(secs);
  heron_free(cost);
  return n > 0 ? sum / n : 0;
}

/* Stores the elapsed time of history record i. */
int heron__tune_set_elapsed(run *r, int i, double el, heron_error *err) {
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

void heron__tune_progress(const run *r, const char *fmt, ...) {
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
int heron__tune_stopping(const run *r) { return r->o->stop && *r->o->stop; }

/* Seconds a plugin call may take: the plugin timeout, and, for a run on
 * real time, never past the end of the time limit (at least a second, so a
 * call made just before it still gets to return). */
double heron__tune_call_limit(const run *r) {
  double lim = r->o->plugin_timeout_s > 0 ? r->o->plugin_timeout_s
                                          : HERON_PLUGIN_TIMEOUT_DEFAULT;
  /* A budget of simulated time is checked between rounds: a strategy call
   * that runs past it only overshoots by that call (and a scorer reads the
   * run up to the budget), so it is not killed for it, as a slow Python
   * strategy near the end of a heron-bench budget would be. */
  if (r->o->time_limit_s > 0 && !r->simulated) {
    double left = r->o->time_limit_s - (heron__now() - r->clock0);
    if (left < 1)
      left = 1;
    if (left < lim)
      lim = left;
  }
  return lim;
}

/* Brackets each call into the strategy: a crash or a hang inside it ends
 * the process with a message naming the plugin file and `fn`. */
void heron__tune_enter(const run *r, const char *fn) {
  heron__guard_enter(r->guard, "strategy", r->strat_lib.path, fn,
                     heron__tune_call_limit(r));
}

void heron__tune_leave(const run *r) { heron__guard_leave(r->guard); }

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
  heron__tune_enter(r, "create");
  rc = r->strat->create(&r->env, params, nparams, &r->strat_self, &perr);
  heron__tune_leave(r);
  free(params);
  if (rc)
    return heron_error_set(err,
                           rc == HERON_EINVAL ? HERON_EINVAL : HERON_EPLUGIN,
                           "strategy %s: create failed: %s", r->strategy_name,
                           perr.text[0] ? perr.text : heron_strerror(rc));
  return HERON_OK;
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
    heron__tune_enter(r, "destroy");
    r->strat->destroy(r->strat_self);
    heron__tune_leave(r);
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
  r.t0 = r.clock0 = heron__now();
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
                             .arrived = heron__tune_arrived,
                             .engine = &r};
  rc = heron__meter_open(t, &mo, &r.meter, err);
  r.compile_only = o->measure.compile_only != 0;
  r.emulate = o->measure.emulate != 0;
  r.log_ctx.untimed = r.compile_only || r.emulate;
  if (r.meter) {
    r.simulated = (r.meter->props & HERON__METER_SIMULATED) != 0;
    r.log_ctx.build_stats = (r.meter->props & HERON__METER_BUILD_STATS) != 0;
  }
  if (r.simulated && o->time_limit_s > 0)
    r.prior_cost = recorded_mean_cost(t);
  /* A simulated clock counts the strategy's and the model's time and the
   * answers' costs, from here: opening the meter read and indexed the
   * records (a T4 file: up to 14 s of convolution-W6600's 58 s budget on
   * a loaded machine, before). */
  if (r.simulated)
    r.clock0 = heron__tune_clock(&r);
  /* Crashes and hangs in plugin calls end the run with their name.  The
   * guard's watchdog is a thread, so it starts after the runner's fork. */
  {
    char where[HERON__PATH_BUF];
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
    rc =
        heron__model_open_guarded(o->model, o->model_params, o->n_model_params,
                                  heron_space_nfeatures(r.sp), o->seed, r.guard,
                                  heron__tune_call_limit(&r), &r.model, err);
  }
  if (!rc)
    rc = open_strategy(&r, err);
  if (!rc)
    rc = heron__tune_claim_log(&r, err);
  if (!rc)
    rc = heron__tune_resume(&r, err);
  if (!rc && o->dry_run) {
    summarize(&r);
    run_free(&r);
    return HERON_OK;
  }
  if (!rc)
    rc = heron__tune_open_log(&r, err);
  if (!rc && o->emit_dir)
    rc = heron__mkdirs(o->emit_dir, err);
  if (!rc) {
    heron__tune_progress(
        &r, "tuning %s with %s%s%s: %d trials, batch %d, seed %llu\n",
        heron_task_key(t), r.strategy_name, o->model ? " + " : "",
        o->model ? o->model : "", o->trials, o->batch,
        (unsigned long long)o->seed);
    if (r.compile_only)
      heron__tune_progress(&r, "%s", r.meter->compile_only);
    else if (r.emulate)
      heron__tune_progress(&r,
                           "emulate: each kernel checked once on the CPU, not "
                           "timed\n");
    rc = heron__tune_warm_start(&r, err);
  }
  if (!rc)
    rc = heron__tune_loop(&r, err);
  summarize(&r);
  if (!rc && o->emit_dir && heron_history_best(&r.hist))
    rc = heron__emit(t, &r.hist, o->emit_dir, err);
  run_free(&r);
  return rc;
}
