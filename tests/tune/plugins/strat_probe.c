/* A strategy that probes the engine: every round it proposes one valid
 * sample, a duplicate of it and an invalid config (a split knob changed
 * after sampling, so its product breaks), then fills the rest with
 * samples.  It writes what it saw of the env to
 * the file named by its `report` parameter when destroyed:
 *     model <0|1> trained <0|1> observed <n> history <n>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heron/strategy.h"

typedef struct probe {
  const heron_strategy_env *env;
  char report[512];
  int observed, trained_seen, nvars;
} probe;

static const heron_param_doc probe_params[] = {
    {"report", "", "file to write the probe's findings to"},
    {NULL, NULL, NULL},
};

static int probe_create(const heron_strategy_env *env, const heron_param *p,
                        int n, void **self, heron_error *err) {
  probe *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  s->env = env;
  s->nvars = heron_space_nvars(env->space);
  snprintf(s->report, sizeof s->report, "%s",
           heron_param_get(p, n, "report", ""));
  *self = s;
  return HERON_OK;
}

static int probe_propose(void *self, int want, int64_t *out, int *got,
                         heron_error *err) {
  probe *s = self;
  const heron_space *sp = s->env->space;
  size_t nv = (size_t)s->nvars;
  if (s->env->model && heron_model_trained(s->env->model))
    s->trained_seen = 1;
  *got = 0;
  for (int i = 0; i < want; i++) {
    int64_t *c = out + (size_t)i * nv;
    if (i == 1 && want > 2) {
      memcpy(c, out, nv * sizeof *c); /* a duplicate of the first */
    } else {
      int rc = heron_space_sample(sp, s->env->rng, c, err);
      if (rc)
        return rc;
      /* Break the first knob's split product: the first knob is a tile
       * level whose product with the other levels must equal the sampled
       * cover, so any other value of it fails.  A fixed value would not
       * do: one in the knob's domain is the sampled value now and then,
       * which would leave the config valid. */
      if (i == 2) {
        int64_t *k0 = &c[heron_space_knob(sp, 0)];
        *k0 = *k0 == 2 ? 4 : 2;
      }
    }
    (*got)++;
  }
  return HERON_OK;
}

static int probe_observe(void *self, const heron_measurement *r, int n,
                         heron_error *err) {
  probe *s = self;
  s->observed += n;
  return HERON_OK;
}

static void probe_destroy(void *self) {
  probe *s = self;
  FILE *f = s->report[0] ? fopen(s->report, "w") : NULL;
  if (f) {
    fprintf(f, "model %d trained %d observed %d history %d\n",
            s->env->model != NULL, s->trained_seen, s->observed,
            heron_history_count(s->env->history));
    fclose(f);
  }
  free(s);
}

static const heron_strategy_plugin probe_desc = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "probe",
    .summary = "engine probe for tests",
    .params = probe_params,
    .create = probe_create,
    .propose = probe_propose,
    .observe = probe_observe,
    .destroy = probe_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *heron_strategy_plugin_v1(void);
HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &probe_desc;
}
