/* core/tune/engine.h - what the parts of the engine (heron_tune) share:
 * the state of one run and the functions one part calls in another.
 * Internal to the engine*.c files of core/tune/.
 *
 *   engine.c        options, the run's setup and teardown, heron_tune,
 *                   the run's clock, progress lines and guarded plugin calls
 *   engine_log.c    the log: locked, set aside, resumed, written
 *   engine_round.c  the rounds: propose, filter, measure, record, learn
 */
#ifndef HERON_CORE_TUNE_ENGINE_H
#define HERON_CORE_TUNE_ENGINE_H

#include <stdint.h>
#include <stdio.h>

#include "core/measure/meter.h"
#include "core/plugin/guard.h"
#include "core/plugin/plugin.h"
#include "core/record/record.h"
#include "heron/tune.h"

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
  /* Where the clock of "elapsed" and of the time limit starts
   * (heron__tune_clock): t0, or on a simulated clock the CPU time once the
   * meter is open, since reading the records is nobody's search time. */
  double clock0;
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
  /* The expected cost of one trial before any was measured: a recorded
   * (T1/T4) task's mean cost per config, else 0 (engine_round.c,
   * round_size). */
  double prior_cost;
  int one_by_one; /* the budget left holds less than a batch (said once) */
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

/* engine.c */

/* Seconds since the run started as the log counts them. */
double heron__tune_elapsed(const run *r);
/* The run's own clock: wall seconds, or on a simulated clock the CPU
 * seconds of this process (engine.c says why). */
double heron__tune_clock(const run *r);
/* Stores the elapsed time of history record i. */
int heron__tune_set_elapsed(run *r, int i, double el, heron_error *err);
/* A line to o->progress (none without it), flushed. */
void heron__tune_progress(const run *r, const char *fmt, ...)
    HERON_PRINTF(2, 3);
/* 1 once the tool's signal handler asked the run to stop (o->stop). */
int heron__tune_stopping(const run *r);
/* Seconds a plugin call may take. */
double heron__tune_call_limit(const run *r);
/* Bracket each call into the strategy (the guard). */
void heron__tune_enter(const run *r, const char *fn);
void heron__tune_leave(const run *r);

/* engine_log.c */

/* Locks the log (moving an older one aside) before anything reads it. */
int heron__tune_claim_log(run *r, heron_error *err);
/* Reads the log to resume from, repairing a half-written last line. */
int heron__tune_resume(run *r, heron_error *err);
/* Starts writing the claimed log. */
int heron__tune_open_log(run *r, heron_error *err);
/* Flushes the log, when there is one. */
int heron__tune_flush_log(run *r, heron_error *err);

/* engine_round.c */

/* Gives a resumed history to the model and the strategy. */
int heron__tune_warm_start(run *r, heron_error *err);
/* Runs rounds until the budget is spent, the run is stopped or the
 * strategy runs dry. */
int heron__tune_loop(run *r, heron_error *err);
/* The meter's `arrived` callback (heron__meter_options): records candidate
 * i of the round in flight. */
void heron__tune_arrived(void *engine, int i);

#endif
