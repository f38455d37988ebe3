/* core/replay/meter.c - the recorded meter (core/measure/meter.h): a task
 * holding recorded measurements (a replay task's logs, a T1 task's T4
 * file) is measured by nobody.  Each config is answered from the store
 * (replay.c) with its recorded result, or the surrogate's prediction
 * marked simulated, without a runner or a compiler.  Its clock is
 * simulated: an answer costs what measuring it took (a log record's
 * build_seconds + 3 x seconds; a T4 record's compilation, framework and
 * run times), so strategies compared on records spend the budget a real
 * run would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/measure/meter.h"
#include "core/replay/replay.h"
#include "core/task/task.h"

typedef struct recorded_meter {
  heron__meter base;
  heron__replay *rp;
} recorded_meter;

static int recorded_round(heron__meter *m, const int64_t *cfgs, int n,
                          heron_measurement *out, char **errors, int *done,
                          int *env, char *env_why, size_t why_cap,
                          double *costs, heron_error *err) {
  (void)env;
  (void)env_why;
  (void)why_cap;
  recorded_meter *rm = (recorded_meter *)m;
  int rc = heron__replay_measure(rm->rp, cfgs, n, out, errors, costs, err);
  /* $HERON_REPLAY_DELAY_MS (heron-search --replay-delay): each answer
   * takes that long in real time, a stand-in for measuring, so scaling
   * over processes shows on a small machine. */
  const char *delay = getenv("HERON_REPLAY_DELAY_MS");
  double ms_each = delay ? atof(delay) : 0;
  if (rc == HERON_OK && ms_each > 0) {
    double s = ms_each * n / 1e3;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
      ;
  }
  for (int i = 0; rc == HERON_OK && i < n; i++)
    done[i] = 1;
  return rc;
}

static void recorded_close(heron__meter *m) {
  recorded_meter *rm = (recorded_meter *)m;
  heron__replay_free(rm->rp);
  free(rm);
}

static const heron__meter_ops recorded_ops = {
    .round = recorded_round,
    .close = recorded_close,
};

/* Recorded measurements were timed once, on their hardware: building only
 * or emulating has nothing to do here.  The records are read and the
 * surrogate fitted now, before the strategy, so a bad log or a missing xgb
 * plugin stops the run at once. */
int heron__meter_open_recorded(const heron_task *t,
                               const heron__meter_options *o,
                               heron__meter **out, heron_error *err) {
  *out = NULL;
  const heron_measure_options *mo = o->measure;
  if (mo->compile_only || mo->emulate)
    return heron_error_set(err, HERON_EINVAL,
                           "%s applies to measured targets; task %s is "
                           "answered from recorded logs",
                           mo->compile_only ? "compile-only" : "emulate",
                           heron_task_key(t));
  recorded_meter *rm = calloc(1, sizeof *rm);
  if (!rm)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  heron__meter_base(&rm->base, &recorded_ops, t);
  heron__replay_stats st;
  int rc = heron__replay_open(t, o->seed, &rm->rp, &st, err);
  if (rc) {
    free(rm);
    return rc;
  }
  if (o->progress) {
    fprintf(o->progress,
            "replay: %d records from %d log%s of %s: %d distinct configs "
            "answered as recorded, %d skipped (config not valid in this "
            "space); other configs answered by the %s surrogate fitted on "
            "%d ok records (simulated, build %.2f s)\n",
            st.records, st.logs, st.logs > 1 ? "s" : "", t->recorded_key,
            st.distinct, st.skipped, HERON__REPLAY_MODEL, st.ok,
            st.median_build_s);
    fflush(o->progress);
  }
  *out = &rm->base;
  return HERON_OK;
}
