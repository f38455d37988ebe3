/* core/measure/local.c - the local meter (meter.h): measures a round here.
 * Each config's kernel source comes from the task's template, the builds
 * run in parallel with the toolchain the target's measure_setup picked, and
 * each built kernel runs in a worker of the runner (measure.h). */
#include "core/measure/meter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/measure/measure.h"
#include "core/task/task.h"
#include "core/util/util.h"

typedef struct local_meter {
  heron__meter base;
  heron_measure_options mo;
  heron__bench bench;
  int bench_ready;
  const volatile sig_atomic_t *stop;
} local_meter;

static int stopping(const local_meter *lm) { return lm->stop && *lm->stop; }

/* After a round's builds: when some failed, asks whether the toolchain
 * still builds a trivial kernel.  If it does not (the compiler gone, the
 * disk full), those failures were the environment's, not the configs':
 * they are marked, and *why says what is wrong. */
static void blame_environment(local_meter *lm, heron__candidate *c, int nb,
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
  if (heron__bench_check_toolchain(&lm->bench, &terr) == HERON_OK)
    return;
  snprintf(why, cap, "%s", terr.text);
  for (int b = 0; b < nb; b++)
    if (c[b].status == HERON_MEAS_COMPILE_ERROR)
      c[b].env_failure = 1;
}

static int local_round(heron__meter *m, const int64_t *cfgs, int n,
                       heron_measurement *out, char **errors, int *done,
                       int *env, char *env_why, size_t why_cap, double *costs,
                       heron_error *err) {
  local_meter *lm = (local_meter *)m;
  const heron_task *task = m->task;
  for (int i = 0; costs && i < n; i++)
    costs[i] = 0;
  heron__candidate *c = calloc((size_t)n, sizeof *c);
  char **srcs = calloc((size_t)n, sizeof *srcs);
  int rc = (c && srcs) ? HERON_OK
                       : heron_error_set(err, HERON_ENOMEM, "out of memory");
  for (int i = 0; rc == HERON_OK && i < n; i++) {
    heron_error gerr;
    heron_error_clear(&gerr);
    const int64_t *cfg = cfgs + (size_t)i * (size_t)m->nvars;
    memset(&out[i], 0, sizeof out[i]);
    out[i].config = cfg;
    if (heron_task_source(task, cfg, &srcs[i], &gerr) != HERON_OK) {
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
    rc = heron__build_all(&lm->bench, c, nb, err);
  if (rc == HERON_OK && nb > 0)
    blame_environment(lm, c, nb, env_why, why_cap);
  for (int b = 0; rc == HERON_OK && b < nb && !stopping(lm); b++) {
    heron_measurement *ms = &out[idx[b]];
    ms->build_seconds = c[b].build_seconds;
    ms->regs = c[b].regs;
    ms->spill_bytes = c[b].spill_bytes;
    ms->smem_bytes = c[b].smem_bytes;
    done[idx[b]] = 1;
    env[idx[b]] = c[b].env_failure;
    if (c[b].status != HERON_MEAS_OK || lm->mo.compile_only) {
      /* A compile-only trial is its build: ok (with the statistics) or
       * the build's failure; seconds and gflops stay 0. */
      ms->status = c[b].status;
      errors[idx[b]] = c[b].error;
      c[b].error = NULL;
      if (c[b].status == HERON_MEAS_OK && !lm->mo.keep_files)
        unlink(c[b].art.path);
      continue;
    }
    char *rerr = NULL;
    rc = heron__run_candidate(&lm->bench, &c[b], heron_task_flops(task), ms,
                              &rerr, err);
    errors[idx[b]] = rerr;
    if (!lm->mo.keep_files)
      unlink(c[b].art.path);
  }
  for (int b = 0; c && b < nb; b++) {
    free(c[b].error);
    if (!done[idx[b]] && !lm->mo.keep_files)
      unlink(c[b].art.path);
  }
  for (int i = 0; srcs && i < n; i++)
    free(srcs[i]);
  free(idx);
  free(srcs);
  free(c);
  return rc;
}

static void local_close(heron__meter *m) {
  local_meter *lm = (local_meter *)m;
  if (lm->bench_ready)
    heron__bench_free(&lm->bench);
  free(lm);
}

static const heron__meter_ops local_ops = {
    .round = local_round,
    .close = local_close,
};

int heron__meter_open_local(const heron_task *t, const heron__meter_options *o,
                            heron__meter **out, heron_error *err) {
  *out = NULL;
  local_meter *lm = calloc(1, sizeof *lm);
  if (!lm)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  heron__meter_base(&lm->base, &local_ops, t);
  lm->mo = *o->measure;
  lm->stop = o->stop;
  /* The target that measures (core/targets/target.h): the task's, or for
   * a task without kernels or records (a T1 space without its T4 file)
   * the default target.  It refuses options that do not apply, probes the
   * device (in a child process: a missing GPU stops here with what to do
   * instead) and picks the toolchain. */
  const heron__target *tg = t->base ? t->base : heron__target_find(NULL);
  heron__measure_plan plan;
  memset(&plan, 0, sizeof plan);
  int rc = tg->measure_setup(t, o->measure, &plan, err);
  if (!rc && plan.device[0] && o->progress) {
    fprintf(o->progress, "%s", plan.device);
    fflush(o->progress);
  }
  /* The runner is forked now, while the caller has no threads (measure.h
   * says why); the inputs and reference are computed when the first kernel
   * runs. */
  if (!rc) {
    rc =
        heron__bench_init(&lm->bench, &t->op, &plan.toolchain, o->measure, err);
    lm->bench_ready = rc == HERON_OK;
  }
  /* The toolchain is not the config: a compiler that cannot build a
   * trivial kernel stops here, before any config is blamed. */
  if (!rc)
    rc = heron__bench_check_toolchain(&lm->bench, err);
  if (rc) {
    local_close(&lm->base);
    return rc;
  }
  snprintf(lm->base.compile_only, sizeof lm->base.compile_only, "%s",
           plan.compile_only);
  *out = &lm->base;
  return HERON_OK;
}
