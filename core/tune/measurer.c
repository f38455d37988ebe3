/* core/tune/measurer.c - measuring configs of one task (measurer.h): what
 * heron_tune's rounds do between proposing and recording, and the public
 * heron_measurer the processes measuring for a distributed search use. */
#include "core/tune/measurer.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/task/task.h"
#include "core/util/util.h"

void heron__measurer_flags(heron_measurer *ms, const heron_task *t,
                           const heron_measure_options *mo) {
  ms->task = t;
  ms->mo = *mo;
  ms->nvars = heron_space_nvars(heron_task_space(t));
  ms->replay = t->nreplay > 0;
  ms->tg = ms->replay ? t->target : t->base ? t->base : heron__target_find(NULL);
  ms->compile_only = mo->compile_only != 0;
  ms->emulate = mo->emulate != 0;
}

/* Reads the replay logs and fits the surrogate: before the strategy, so a
 * bad log or a missing xgb plugin stops the run at once. */
static int open_replay(heron_measurer *ms, uint64_t seed, FILE *progress,
                       heron_error *err) {
  heron__replay_stats st;
  int rc = heron__replay_open(ms->task, seed, &ms->rp, &st, err);
  if (rc || !progress)
    return rc;
  fprintf(progress,
          "replay: %d records from %d log%s of %s: %d distinct configs "
          "answered as recorded, %d skipped (config not valid in this "
          "space); other configs answered by the %s surrogate fitted on %d "
          "ok records (simulated, build %.2f s)\n",
          st.records, st.logs, st.logs > 1 ? "s" : "", ms->task->replay_key,
          st.distinct, st.skipped, HERON__REPLAY_MODEL, st.ok,
          st.median_build_s);
  fflush(progress);
  return HERON_OK;
}

int heron__measurer_init(heron_measurer *ms, const heron_task *t,
                         const heron_measure_options *mo, uint64_t seed,
                         FILE *progress, heron_error *err) {
  heron__measurer_flags(ms, t, mo);
  /* The target refuses options that do not apply and probes the device
   * (for cuda in a child process: no GPU stops here with what to do
   * instead). */
  int rc = ms->tg->measure_setup
               ? ms->tg->measure_setup(t, mo, &ms->plan, err)
               : HERON_OK;
  if (!rc && ms->plan.device[0] && progress) {
    fprintf(progress, "%s", ms->plan.device);
    fflush(progress);
  }
  /* The runner is forked now, while the caller has no threads (core/
   * measure/measure.h says why); the inputs and reference are computed
   * when the first kernel runs. */
  if (!rc && ms->replay)
    rc = open_replay(ms, seed, progress, err);
  else if (!rc) {
    rc = heron__bench_init(&ms->bench, &t->op, &ms->plan.toolchain, mo, err);
    ms->bench_ready = rc == HERON_OK;
  }
  /* The toolchain is not the config: a compiler that cannot build a
   * trivial kernel stops here, before any config is blamed. */
  if (!rc && !ms->replay)
    rc = heron__bench_check_toolchain(&ms->bench, err);
  return rc;
}

void heron__measurer_fini(heron_measurer *ms) {
  if (ms->bench_ready)
    heron__bench_free(&ms->bench);
  ms->bench_ready = 0;
  heron__replay_free(ms->rp);
  ms->rp = NULL;
}

static int stopping(const heron_measurer *ms) { return ms->stop && *ms->stop; }

/* After a round's builds: when some failed, asks whether the toolchain
 * still builds a trivial kernel.  If it does not (the compiler gone, the
 * disk full), those failures were the environment's, not the configs':
 * they are marked, and *why says what is wrong. */
static void blame_environment(heron_measurer *ms, heron__candidate *c, int nb,
                              char *why, size_t cap) {
  int failed = 0, env = 0;
  for (int b = 0; b < nb; b++) {
    failed += c[b].status == HERON_MEAS_COMPILE_ERROR;
    if (c[b].env_failure && !env++)
      snprintf(why, cap, "%s", c[b].error ? c[b].error : "");
  }
  if (!failed || env)
    return;
  heron_error terr;
  heron_error_clear(&terr);
  if (heron__bench_check_toolchain(&ms->bench, &terr) == HERON_OK)
    return;
  snprintf(why, cap, "%s", terr.text);
  for (int b = 0; b < nb; b++)
    if (c[b].status == HERON_MEAS_COMPILE_ERROR)
      c[b].env_failure = 1;
}

int heron__measurer_round(heron_measurer *ms, const int64_t *cfgs, int n,
                          heron_measurement *out, char **errors, int *done,
                          int *env, char *env_why, size_t why_cap,
                          double *costs, heron_error *err) {
  for (int i = 0; i < n; i++)
    done[i] = env[i] = 0;
  if (n <= 0)
    return HERON_OK;
  if (ms->replay) {
    double *c = costs ? costs : calloc((size_t)n, sizeof *c);
    int rc = c ? heron__replay_measure(ms->rp, cfgs, n, out, errors, c, err)
               : heron_error_set(err, HERON_ENOMEM, "out of memory");
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
    if (c != costs)
      free(c);
    return rc;
  }
  heron__candidate *c = calloc((size_t)n, sizeof *c);
  char **srcs = calloc((size_t)n, sizeof *srcs);
  int rc = (c && srcs) ? HERON_OK
                       : heron_error_set(err, HERON_ENOMEM, "out of memory");
  for (int i = 0; rc == HERON_OK && i < n; i++) {
    heron_error gerr;
    heron_error_clear(&gerr);
    const int64_t *cfg = cfgs + (size_t)i * (size_t)ms->nvars;
    memset(&out[i], 0, sizeof out[i]);
    out[i].config = cfg;
    if (heron_task_source(ms->task, cfg, &srcs[i], &gerr) != HERON_OK) {
      out[i].status = HERON_MEAS_COMPILE_ERROR;
      errors[i] = strdup(gerr.text);
      done[i] = 1;
      continue;
    }
    c[i].source = srcs[i];
  }
  /* Candidates whose source failed are skipped by giving them no source:
   * build only the others, in one parallel batch. */
  int nb = 0;
  int *idx = rc == HERON_OK ? malloc((size_t)n * sizeof *idx) : NULL;
  for (int i = 0; idx && i < n; i++)
    if (c[i].source) {
      if (nb != i)
        c[nb] = c[i];
      idx[nb++] = i;
    }
  if (rc == HERON_OK && !idx)
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  if (rc == HERON_OK && nb > 0)
    rc = heron__build_all(&ms->bench, c, nb, err);
  if (rc == HERON_OK && nb > 0)
    blame_environment(ms, c, nb, env_why, why_cap);
  for (int b = 0; rc == HERON_OK && b < nb && !stopping(ms); b++) {
    heron_measurement *m = &out[idx[b]];
    m->build_seconds = c[b].build_seconds;
    m->regs = c[b].regs;
    m->spill_bytes = c[b].spill_bytes;
    m->smem_bytes = c[b].smem_bytes;
    done[idx[b]] = 1;
    env[idx[b]] = c[b].env_failure;
    if (c[b].status != HERON_MEAS_OK || ms->compile_only) {
      /* A compile-only trial is its build: ok (with the statistics) or
       * the build's failure; seconds and gflops stay 0. */
      m->status = c[b].status;
      errors[idx[b]] = c[b].error;
      c[b].error = NULL;
      if (c[b].status == HERON_MEAS_OK && !ms->mo.keep_files)
        unlink(c[b].art.path);
      continue;
    }
    char *rerr = NULL;
    rc = heron__run_candidate(&ms->bench, &c[b], heron_task_flops(ms->task),
                              m, &rerr, err);
    errors[idx[b]] = rerr;
    if (!ms->mo.keep_files)
      unlink(c[b].art.path);
  }
  for (int b = 0; c && b < nb; b++) {
    free(c[b].error);
    if (!done[idx[b]] && !ms->mo.keep_files)
      unlink(c[b].art.path);
  }
  for (int i = 0; srcs && i < n; i++)
    free(srcs[i]);
  free(idx);
  free(srcs);
  free(c);
  return rc;
}

/* ---- The public measurer ---------------------------------------------------- */

HERON_API int heron_measurer_open(const heron_task *t,
                                  const heron_measure_options *m,
                                  uint64_t seed, heron_measurer **out,
                                  heron_error *err) {
  *out = NULL;
  heron_tune_options defaults;
  heron_tune_options_init(&defaults);
  heron_measurer *ms = calloc(1, sizeof *ms);
  if (!ms)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  int rc = heron__measurer_init(ms, t, m ? m : &defaults.measure, seed, NULL,
                                err);
  if (rc) {
    heron__measurer_fini(ms);
    free(ms);
    return rc;
  }
  *out = ms;
  return HERON_OK;
}

HERON_API int heron_measurer_run(heron_measurer *ms, const int64_t *cfgs,
                                 int n, heron_measurement *out, char **errors,
                                 int *env, heron_error *err) {
  int *done = calloc((size_t)(n > 0 ? n : 1), sizeof *done);
  if (!done)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  for (int i = 0; i < n; i++)
    errors[i] = NULL;
  char why[512] = "";
  int rc = heron__measurer_round(ms, cfgs, n, out, errors, done, env, why,
                                 sizeof why, NULL, err);
  for (int i = 0; i < n; i++) {
    out[i].config = cfgs + (size_t)i * (size_t)ms->nvars;
    if (!out[i].error)
      out[i].error = "";
    if (!done[i] && rc == HERON_OK) {
      out[i].status = HERON_MEAS_RUNTIME_ERROR;
      errors[i] = strdup("not measured");
    }
  }
  free(done);
  return rc;
}

HERON_API void heron_measurer_close(heron_measurer *ms) {
  if (!ms)
    return;
  heron__measurer_fini(ms);
  free(ms);
}
