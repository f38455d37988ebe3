/* core/measure/remote.c - the remote meter (meter.h): a round measured
 * elsewhere, by heron_tune_options.remote (heron-search under mpirun:
 * tools/ranks.c, whose measuring processes open heron_measurer).  Nothing
 * is started here: no runner, no device probe, no toolchain check. */
#include "core/measure/meter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct remote_meter {
  heron__meter base;
  int (*remote)(void *remote_ctx, const int64_t *cfgs, int n,
                heron_measurement *out, char **errors, int *done, int *env,
                void (*arrived)(void *engine, int i), void *engine,
                heron_error *err);
  void *remote_ctx;
  void (*arrived)(void *engine, int i);
  void *engine;
} remote_meter;

static int remote_round(heron__meter *m, const int64_t *cfgs, int n,
                        heron_measurement *out, char **errors, int *done,
                        int *env, char *env_why, size_t why_cap, double *costs,
                        heron_error *err) {
  remote_meter *rm = (remote_meter *)m;
  for (int i = 0; i < n; i++) {
    memset(&out[i], 0, sizeof out[i]);
    out[i].config = cfgs + (size_t)i * (size_t)m->nvars;
    if (costs)
      costs[i] = 0; /* a remote answer counts real time only */
  }
  int rc = rm->remote(rm->remote_ctx, cfgs, n, out, errors, done, env,
                      rm->arrived, rm->engine, err);
  for (int i = 0; i < n; i++)
    if (done[i] && env[i] == 1 && !env_why[0])
      snprintf(env_why, why_cap, "%s", errors[i] ? errors[i] : "");
  return rc;
}

static void remote_close(heron__meter *m) { free(m); }

static const heron__meter_ops remote_ops = {
    .round = remote_round,
    .close = remote_close,
};

int heron__meter_open_remote(const heron_task *t, const heron__meter_options *o,
                             heron__meter **out, heron_error *err) {
  *out = NULL;
  remote_meter *rm = calloc(1, sizeof *rm);
  if (!rm)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  heron__meter_base(&rm->base, &remote_ops, t);
  rm->remote = o->remote;
  rm->remote_ctx = o->remote_ctx;
  rm->arrived = o->arrived;
  rm->engine = o->engine;
  *out = &rm->base;
  return HERON_OK;
}
