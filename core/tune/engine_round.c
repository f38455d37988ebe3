/* core/tune/engine_round.c - the engine's rounds (engine.h): propose ->
 * drop invalid / duplicate -> measure with the meter -> record and log ->
 * fit the model -> observe, until the budget is spent; and the warm start
 * of a resumed run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/measure/meter.h"
#include "core/plugin/plugin.h"
#include "core/record/record.h"
#include "core/tune/engine.h"
#include "core/util/util.h"

/* A round that brings nothing new this many times in a row ends the run:
 * the strategy (or the space) has run out of unmeasured configs. */
#define MAX_EMPTY_ROUNDS 8

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
      heron__tune_progress(r, "warning: model fit failed: %s\n", merr.text);
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
  heron__tune_enter(r, "observe");
  int rc = r->strat->observe(r->strat_self, res, n, &perr);
  heron__tune_leave(r);
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
    heron__tune_progress(
        r, "warning: strategy %s proposed %d invalid config%s; dropped\n",
        r->strategy_name, invalid, invalid > 1 ? "s" : "");
  if (dup && r->o->verbose)
    heron__tune_progress(r, "note: dropped %d already-measured proposal%s\n",
                         dup, dup > 1 ? "s" : "");
  return keep;
}

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
  double el = heron__tune_clock(r) - r->clock0 + r->sim_s;
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
    heron__tune_progress(
        r,
        "[%4d/%d] %s %d ok  round: %d ok, %d failed  elapsed %.1f s  "
        "ETA %.0f s\n",
        done, total, r->compile_only ? "compiled" : "emulated",
        r->res->ok + round_ok, round_ok, round_failed, el, eta > 0 ? eta : 0);
  else if (best)
    heron__tune_progress(
        r,
        "[%4d/%d] best %.2f GFLOP/s (trial %d)  round: %d ok, %d "
        "failed  elapsed %.1f s  ETA %.0f s\n",
        done, total, best->gflops, best->trial, round_ok, round_failed, el,
        eta > 0 ? eta : 0);
  else
    heron__tune_progress(
        r,
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
  int erc =
      heron__tune_set_elapsed(r, r->hist.n - 1, heron__tune_elapsed(r), err);
  if (erc)
    return erc;
  r->log_ctx.elapsed = r->elapsed[r->hist.n - 1];
  if (r->o->verbose && r->compile_only)
    heron__tune_progress(
        r,
        "  trial %d: %s build %.2f s regs %d spill %d B smem %lld B "
        "%s\n",
        m->trial, heron_meas_status_name(m->status), m->build_seconds, m->regs,
        m->spill_bytes, (long long)m->smem_bytes, m->error);
  else if (r->o->verbose)
    heron__tune_progress(r, "  trial %d: %s %.3f ms %.2f GFLOP/s%s %s\n",
                         m->trial, heron_meas_status_name(m->status),
                         m->seconds * 1e3, m->gflops,
                         m->simulated ? " (simulated)" : "", m->error);
  if (r->log) {
    r->log_ctx.env_failure = env != 0;
    return heron__log_write(r->log, r->sp, &r->log_ctx, *stored, err);
  }
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
  int rc = heron__tune_flush_log(r, err);
  if (rc)
    return rc;
  print_progress(r, ok, n - ok);
  return HERON_OK;
}

/* o->remote's `arrived`: candidate i of the round in flight is measured;
 * record and log it now, so a job killed before the round ends keeps it. */
void heron__tune_arrived(void *engine, int i) {
  run *r = engine;
  if (r->rd.rc || r->rd.pre[i])
    return;
  r->rd.rc = record_one(r, &r->rd.ms[i], r->rd.errors[i], r->rd.keys[i],
                        r->rd.env[i], 0, &r->rd.pre[i], r->rd.err);
  if (!r->rd.rc)
    r->rd.rc = heron__tune_flush_log(r, r->rd.err);
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
  heron__tune_enter(r, "propose");
  int rc = r->strat->propose(r->strat_self, want, props, got, &perr);
  heron__tune_leave(r);
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

/* The budget spent so far: real time, plus the simulated measuring time on
 * a simulated clock (the budget of such a run is its simulated clock,
 * which a resumed run continues). */
static double spent_s(const run *r) {
  return r->simulated ? heron__tune_elapsed(r) : heron__now() - r->clock0;
}

/* How many configs to ask the strategy for: a batch, or the trials left
 * when fewer; and one at a time once the time left (--time-limit, real or
 * simulated) is expected to hold fewer trials than that, so that a budget
 * shorter than a batch is spent on configs chosen one after another, each
 * with every measurement before it, not on one batch proposed blind (a
 * T1/T4 run's budget of 13 trials got one batch of 16 before).  A trial's
 * expected cost is the run's mean so far, or before any trial a recorded
 * task's mean cost per config (run.prior_cost); unknown, a round is
 * whole. */
static int round_size(run *r) {
  int want = r->o->trials - r->hist.n;
  if (want > r->o->batch)
    want = r->o->batch;
  double limit = r->o->time_limit_s, spent = spent_s(r);
  if (limit <= 0 || want <= 1)
    return want;
  int measured = r->hist.n - r->res->resumed;
  double cost =
      measured > 0 ? (r->simulated ? spent - r->elapsed_base : spent) / measured
                   : r->prior_cost;
  if (cost <= 0 || limit - spent >= want * cost)
    return want;
  if (!r->one_by_one)
    heron__tune_progress(r,
                         "%.3g s of the time limit left, about %.1f trials: "
                         "measuring one config per round\n",
                         limit - spent, (limit - spent) / cost);
  r->one_by_one = 1;
  return 1;
}

/* One round; `empty` rounds in a row brought nothing new before it. */
static int run_round(run *r, int64_t *props, uint64_t *keys,
                     heron_measurement *ms, char **errors, int *done, int *env,
                     const heron_measurement **stored, int *got_new, int empty,
                     heron_error *err) {
  int most = round_size(r), want = most;
  /* One at a time, a strategy whose one proposal was measured already
   * leaves the round empty (and MAX_EMPTY_ROUNDS of those end the run):
   * after such a round it is asked for a batch again, and the first new
   * config of it is measured. */
  if (r->one_by_one && empty > 0) {
    want = r->o->trials - r->hist.n;
    if (want > r->o->batch)
      want = r->o->batch;
  }
  int got = 0;
  int rc = propose(r, want, props, &got, err);
  if (rc)
    return rc;
  int n = filter(r, props, got, keys);
  if (n > most)
    n = most;
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
  char sp[HERON__PATH_BUF];
  if (rc == HERON_OK && n > 0 && HERON__PLUGIN_HAS(r->strat, save_state) &&
      state_path(r, sp, sizeof sp)) {
    heron_error serr;
    heron_error_clear(&serr);
    heron__tune_enter(r, "save_state");
    int src = r->strat->save_state(r->strat_self, sp, &serr);
    heron__tune_leave(r);
    if (src != HERON_OK)
      heron__tune_progress(
          r, "warning: strategy %s could not save its state: %s\n",
          r->strategy_name, serr.text);
  }
  return rc;
}

int heron__tune_loop(run *r, heron_error *err) {
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
  while (rc == HERON_OK && r->hist.n < r->o->trials &&
         !heron__tune_stopping(r)) {
    /* Resuming a simulated run must not grant a second budget
     * (heron-bench scores T1/T4 runs against exactly that clock). */
    double spent = spent_s(r);
    if (r->o->time_limit_s > 0 && spent >= r->o->time_limit_s) {
      heron__tune_progress(r, "time limit of %.0f s reached\n",
                           r->o->time_limit_s);
      break;
    }
    int got_new = 0;
    /* The model's calls get the limit the strategy's get, time limit
     * included. */
    if (r->model)
      heron__model_set_guard(r->model, r->guard, heron__tune_call_limit(r));
    rc = run_round(r, props, keys, ms, errors, done, env, stored, &got_new,
                   empty, err);
    empty = got_new ? 0 : empty + 1;
    if (empty >= MAX_EMPTY_ROUNDS) {
      heron__tune_progress(
          r,
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
  if (rc == HERON_OK && heron__tune_stopping(r)) {
    r->res->stopped = (int)*r->o->stop;
    heron__tune_progress(
        r,
        "stopped by signal %d with %d trials%s%s; --resume continues "
        "the run\n",
        r->res->stopped, r->hist.n, r->o->log_path ? " in " : "",
        r->o->log_path ? r->o->log_path : "");
  }
  return rc;
}

/* Gives a resumed history to the model and the strategy before new rounds,
 * and lets a strategy that saved its state pick it up. */
int heron__tune_warm_start(run *r, heron_error *err) {
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
  char sp[HERON__PATH_BUF];
  int have_state = 0;
  if (rc == HERON_OK && HERON__PLUGIN_HAS(r->strat, load_state) &&
      r->o->resume_path) {
    snprintf(sp, sizeof sp, "%s.state", r->o->resume_path);
    have_state = access(sp, R_OK) == 0;
    if (!have_state)
      heron__tune_progress(
          r,
          "note: no saved state %s; strategy %s continues from the "
          "resumed history alone\n",
          sp, r->strategy_name);
  }
  if (have_state) {
    heron_error serr;
    heron_error_clear(&serr);
    heron__tune_enter(r, "load_state");
    int lrc = r->strat->load_state(r->strat_self, sp, &serr);
    heron__tune_leave(r);
    if (lrc != HERON_OK)
      heron__tune_progress(r, "warning: strategy %s could not load %s: %s\n",
                           r->strategy_name, sp, serr.text);
  }
  return rc;
}
