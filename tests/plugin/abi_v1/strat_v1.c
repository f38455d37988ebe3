/* A strategy built against the plugin headers as they were before typed
 * parameters (a snapshot in tests/plugin/abi_v1/heron/, never edited): the
 * first descriptor layout, text-only parameter docs, parameters read with
 * heron_param_int.  strat_v1.so beside this file is this source prebuilt
 * from that snapshot and committed, so the test also covers a binary that
 * no build of today's tree produced:
 *
 *   cc -std=c11 -O2 -fPIC -shared -fvisibility=hidden \
 *      -Itests/plugin/abi_v1 -o tests/plugin/abi_v1/strat_v1.so \
 *      tests/plugin/abi_v1/strat_v1.c
 *
 * (no -lheron: the host has libheron loaded when it opens the plugin).
 * The search: random valid samples, `step` of them skipped between
 * proposals, so a bad value of step shows in create's error. */
#include <stdlib.h>

#include "heron/strategy.h"

typedef struct v1 {
  const heron_strategy_env *env;
  int nvars;
  int64_t step;
} v1;

static const heron_param_doc v1_params[] = {
    {"step", "1", "samples drawn per proposal, 1 to 8"},
    {NULL, NULL, NULL},
};

static int v1_create(const heron_strategy_env *env, const heron_param *params,
                     int nparams, void **self, heron_error *err) {
  int64_t step;
  int rc = heron_param_int(params, nparams, "step", 1, 1, 8, &step, err);
  if (rc != HERON_OK)
    return rc;
  v1 *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  s->env = env;
  s->nvars = heron_space_nvars(env->space);
  s->step = step;
  *self = s;
  env->log(env, 0, "v1 plugin created with step %lld", (long long)step);
  return HERON_OK;
}

static int v1_propose(void *self, int want, int64_t *out, int *got,
                      heron_error *err) {
  v1 *s = self;
  *got = 0;
  for (int i = 0; i < want; i++) {
    int rc = HERON_OK;
    for (int64_t k = 0; k < s->step && rc == HERON_OK; k++)
      rc = heron_space_sample(s->env->space, s->env->rng,
                              out + (size_t)*got * (size_t)s->nvars, err);
    if (rc != HERON_OK)
      return *got > 0 ? HERON_OK : rc;
    (*got)++;
  }
  return HERON_OK;
}

static int v1_observe(void *self, const heron_measurement *results, int n,
                      heron_error *err) {
  return HERON_OK;
}

static void v1_destroy(void *self) { free(self); }

static const heron_strategy_plugin desc = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "strat_v1",
    .summary = "built against the first plugin headers (text parameters)",
    .params = v1_params,
    .create = v1_create,
    .propose = v1_propose,
    .observe = v1_observe,
    .destroy = v1_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &desc;
}
