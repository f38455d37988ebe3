/* core/measure/meter.c - the one factory of meters (meter.h) and the public
 * heron_measurer, which is a meter: what the processes measuring for a
 * distributed search open. */
#include "core/measure/meter.h"

#include <stdlib.h>
#include <string.h>

#include "core/task/task.h"

void heron__meter_base(heron__meter *m, const heron__meter_ops *ops,
                       const heron_task *t) {
  m->ops = ops;
  m->task = t;
  m->nvars = heron_space_nvars(heron_task_space(t));
  m->props = 0;
  m->compile_only[0] = '\0';
}

int heron__meter_open(const heron_task *t, const heron__meter_options *o,
                      heron__meter **out, heron_error *err) {
  *out = NULL;
  /* Recorded answers stand for measuring, on the clock of what measuring
   * them took; a remote meter keeps that clock (meter.h). */
  int recorded = t->nrecorded > 0;
  unsigned props = recorded ? HERON__METER_SIMULATED : 0;
  if (t->base && (t->base->flags & HERON__TARGET_BUILD_STATS))
    props |= HERON__METER_BUILD_STATS;
  int rc = o->remote  ? heron__meter_open_remote(t, o, out, err)
           : recorded ? heron__meter_open_recorded(t, o, out, err)
                      : heron__meter_open_local(t, o, out, err);
  if (rc == HERON_OK)
    (*out)->props = props;
  return rc;
}

int heron__meter_round(heron__meter *m, const int64_t *cfgs, int n,
                       heron_measurement *out, char **errors, int *done,
                       int *env, char *env_why, size_t why_cap, double *costs,
                       heron_error *err) {
  for (int i = 0; i < n; i++)
    done[i] = env[i] = 0;
  if (n <= 0)
    return HERON_OK;
  return m->ops->round(m, cfgs, n, out, errors, done, env, env_why, why_cap,
                       costs, err);
}

void heron__meter_close(heron__meter *m) {
  if (m)
    m->ops->close(m);
}

/* ---- The public measurer ------------------------------------------------- */

struct heron_measurer {
  heron__meter *meter;
};

HERON_API int heron_measurer_open(const heron_task *t,
                                  const heron_measure_options *m, uint64_t seed,
                                  heron_measurer **out, heron_error *err) {
  *out = NULL;
  heron_tune_options defaults;
  heron_tune_options_init(&defaults);
  heron_measurer *ms = calloc(1, sizeof *ms);
  if (!ms)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  heron__meter_options mo = {.measure = m ? m : &defaults.measure,
                             .seed = seed};
  int rc = heron__meter_open(t, &mo, &ms->meter, err);
  if (rc) {
    free(ms);
    return rc;
  }
  *out = ms;
  return HERON_OK;
}

HERON_API int heron_measurer_run(heron_measurer *ms, const int64_t *cfgs, int n,
                                 heron_measurement *out, char **errors,
                                 int *env, heron_error *err) {
  int *done = calloc((size_t)(n > 0 ? n : 1), sizeof *done);
  if (!done)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  for (int i = 0; i < n; i++)
    errors[i] = NULL;
  char why[512] = "";
  int rc = heron__meter_round(ms->meter, cfgs, n, out, errors, done, env, why,
                              sizeof why, NULL, err);
  for (int i = 0; i < n; i++) {
    out[i].config = cfgs + (size_t)i * (size_t)ms->meter->nvars;
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
  heron__meter_close(ms->meter);
  free(ms);
}
