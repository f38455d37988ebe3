/* core/tune/measurer.h - measuring configs of one task: the target's setup,
 * the runner, the builds and the isolated runs (or the replay's answers).
 * heron_tune's rounds and the public heron_measurer (heron/tune.h) are both
 * this.  Internal to libheron. */
#ifndef HERON_CORE_TUNE_MEASURER_H
#define HERON_CORE_TUNE_MEASURER_H

#include <signal.h>
#include <stdio.h>

#include "core/measure/measure.h"
#include "core/targets/replay/replay.h"
#include "core/targets/target.h"
#include "heron/tune.h"

struct heron_measurer {
  const heron_task *task;
  heron_measure_options mo;
  int nvars;
  /* The target that measures (core/targets/target.h): the task's, or for a
   * task without kernels or logs (a T1 space without its T4 file) the
   * default target, and what its measure_setup settled. */
  const heron__target *tg;
  heron__measure_plan plan;
  int compile_only; /* build, never run */
  int emulate;      /* cuda kernels checked on the CPU */
  int replay;       /* the task holds recorded logs: answered, not measured */
  heron__replay *rp;
  heron__bench bench;
  int bench_ready;
  /* Read between candidates: once non-zero the round ends early. */
  const volatile sig_atomic_t *stop;
};

/* Settles the flags (compile_only, emulate, replay, tg) without starting
 * anything: what a run measured elsewhere needs to know. */
void heron__measurer_flags(heron_measurer *ms, const heron_task *t,
                           const heron_measure_options *mo);

/* Flags, then the target's measure_setup (printing the device line to
 * `progress`, may be NULL), then the replay's logs (seed for its surrogate)
 * or the runner and the toolchain check.  On failure what was started is
 * stopped again (heron__measurer_fini is safe either way). */
int heron__measurer_init(heron_measurer *ms, const heron_task *t,
                         const heron_measure_options *mo, uint64_t seed,
                         FILE *progress, heron_error *err);
void heron__measurer_fini(heron_measurer *ms);

/* Generates, builds and runs configs cfgs[0..n), filling out[i] (its
 * config pointing into cfgs) for each done[i] = 1; errors[i] gets the
 * failure text.  A stop request leaves the rest of the round undone.
 * env[i] = 1 marks a failure that was the environment's; *env_why then
 * says what is wrong.  costs (may be NULL) gets each replay answer's
 * simulated seconds. */
int heron__measurer_round(heron_measurer *ms, const int64_t *cfgs, int n,
                          heron_measurement *out, char **errors, int *done,
                          int *env, char *env_why, size_t why_cap,
                          double *costs, heron_error *err);

#endif
