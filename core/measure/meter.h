/* core/measure/meter.h - the meter: what measures a round of configs of
 * one task.  Internal to libheron.
 *
 * heron_tune's rounds (core/tune/engine_round.c) and the public heron_measurer
 * (heron/tune.h, meter.c) measure through one interface, whatever does the
 * measuring:
 *
 *   local     (local.c) generates each config's kernel, builds it with the
 *             toolchain the task's target picks (toolchain.h) and runs it
 *             in a worker of the runner (measure.h);
 *   recorded  (core/replay/meter.c) answers each config from the task's
 *             recorded measurements (logs of earlier runs, a T4 file) or a
 *             surrogate model fitted on them, on a simulated clock;
 *   remote    (remote.c) hands the round to heron_tune_options.remote,
 *             which measures elsewhere (the ranks of an MPI job).
 *
 * heron__meter_open picks one: remote when the options carry the callback,
 * recorded when the task holds recorded measurements, local otherwise.
 * Whoever measures through a meter never asks which it got: what differs
 * and matters to the engine is a property of the meter (props,
 * compile_only) or of its answers (costs).
 */
#ifndef HERON_CORE_MEASURE_METER_H
#define HERON_CORE_MEASURE_METER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heron/record.h"
#include "heron/task.h"
#include "heron/tune.h"

/* What a meter is, as flags (heron__meter.props). */
enum {
  /* Its clock is simulated: an answer stands for measuring, and costs[i]
   * of a round says how long that would have taken.  The run's clock (the
   * log's "elapsed") and its time limit count real time plus those costs
   * and continue a resumed log's; the limit is checked between rounds, so
   * a plugin call is not cut short at it.  A remote meter keeps the clock
   * of the meter at the other end, but its answers cost 0: a remote answer
   * counts real time only. */
  HERON__METER_SIMULATED = 1u << 0,
  /* Its measurements are of builds that report statistics (registers,
   * spill and shared-memory bytes: HERON__TARGET_BUILD_STATS of the task's
   * target), which log lines then carry. */
  HERON__METER_BUILD_STATS = 1u << 1,
};

typedef struct heron__meter heron__meter;

typedef struct heron__meter_ops {
  /* Measures configs cfgs[0..n) (each nvars values, valid in the task's
   * space) into out[i] (its config pointing into cfgs) for each done[i] it
   * sets to 1; errors[i] gets the malloc'ed failure text or NULL (the
   * caller frees it).  env[i] = 1 marks a failure that was the
   * environment's, not the config's (*env_why[why_cap] then says what is
   * wrong), 2 a candidate lost with a process measuring elsewhere.  costs
   * (may be NULL) gets each answer's simulated seconds (0 on a real
   * clock).  A stop request leaves the rest of the round undone (done 0).
   * A non-OK status is the meter's own failure (no memory, its runner
   * gone), not a config's. */
  int (*round)(heron__meter *m, const int64_t *cfgs, int n,
               heron_measurement *out, char **errors, int *done, int *env,
               char *env_why, size_t why_cap, double *costs, heron_error *err);
  /* Stops what the meter started and frees it (the heron__meter too). */
  void (*close)(heron__meter *m);
} heron__meter_ops;

/* Every meter begins with this (each implementation embeds it first). */
struct heron__meter {
  const heron__meter_ops *ops;
  const heron_task *task;
  int nvars;      /* of the task's space */
  unsigned props; /* HERON__METER_* */
  /* The line that says what --compile-only does here (ends in a newline;
   * "" when the meter has none to say), printed after a run's first line
   * when compile-only is on. */
  char compile_only[160];
};

/* What opening a meter takes. */
typedef struct heron__meter_options {
  const heron_measure_options *measure; /* not NULL; read at open */
  uint64_t seed; /* the recorded meter's surrogate (heron_tune's seed) */
  /* Lines at open (the device found, what the recorded measurements
   * hold); NULL: silent. */
  FILE *progress;
  /* Read between candidates: once non-zero the round ends early. */
  const volatile sig_atomic_t *stop;
  /* heron_tune_options.remote and remote_ctx: when remote is not NULL the
   * round goes there (the remote meter), with `arrived` and `engine`
   * passed on as its own arguments. */
  int (*remote)(void *remote_ctx, const int64_t *cfgs, int n,
                heron_measurement *out, char **errors, int *done, int *env,
                void (*arrived)(void *engine, int i), void *engine,
                heron_error *err);
  void *remote_ctx;
  void (*arrived)(void *engine, int i);
  void *engine;
} heron__meter_options;

/* Opens the meter task t is measured by (see above) into *out, which
 * heron__meter_close frees.  Opening checks before anything is measured
 * what would fail every config: the local meter runs the target's
 * measure_setup (a task whose device is missing stops here), forks the runner
 * (call it while the process has no threads) and checks the toolchain;
 * the recorded meter reads the recorded measurements and fits its
 * surrogate.  On failure nothing stays started and *out is NULL. */
int heron__meter_open(const heron_task *t, const heron__meter_options *o,
                      heron__meter **out, heron_error *err);

/* m->ops->round (see heron__meter_ops), with done[] and env[] cleared
 * first; n <= 0 measures nothing. */
int heron__meter_round(heron__meter *m, const int64_t *cfgs, int n,
                       heron_measurement *out, char **errors, int *done,
                       int *env, char *env_why, size_t why_cap, double *costs,
                       heron_error *err);

/* Closes m; NULL is a no-op. */
void heron__meter_close(heron__meter *m);

/* ---- the meters heron__meter_open picks from ------------------------------
 * Each allocates its meter, fills the base but its props (which
 * heron__meter_open sets) and returns HERON_OK, or fails with nothing left
 * started and *out NULL. */
int heron__meter_open_local(const heron_task *t, const heron__meter_options *o,
                            heron__meter **out, heron_error *err);
int heron__meter_open_recorded(const heron_task *t,
                               const heron__meter_options *o,
                               heron__meter **out, heron_error *err);
int heron__meter_open_remote(const heron_task *t, const heron__meter_options *o,
                             heron__meter **out, heron_error *err);

/* Fills the base of a meter being opened: ops, task, nvars, props 0,
 * compile_only "". */
void heron__meter_base(heron__meter *m, const heron__meter_ops *ops,
                       const heron_task *t);

#endif
