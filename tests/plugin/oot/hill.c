/* tests/plugin/oot/hill.c - a strategy written outside the tree.
 *
 * The out-of-tree test compiles this file against the *installed* headers
 * only (cc -I<prefix>/include ... -lheron) and runs it with the installed
 * heron-search, proving a researcher needs nothing but the install.
 *
 * Hill climbing: random samples until something succeeds, then mutations
 * of the best measured config.
 */
#include <stdlib.h>
#include <string.h>

#include <heron/heron.h>

typedef struct hill {
  const heron_strategy_env *env;
  int nvars;
} hill;

static const heron_param_doc hill_params[] = {{NULL, NULL, NULL}};

static int hill_create(const heron_strategy_env *env, const heron_param *params,
                       int nparams, void **self, heron_error *err) {
  (void)params;
  (void)nparams;
  hill *h = calloc(1, sizeof *h);
  if (!h)
    return heron_error_set(err, HERON_ENOMEM, "hill: out of memory");
  h->env = env;
  h->nvars = heron_space_nvars(env->space);
  *self = h;
  return HERON_OK;
}

static int hill_propose(void *self, int want, int64_t *out, int *got,
                        heron_error *err) {
  hill *h = self;
  const heron_measurement *best = heron_history_best(h->env->history);
  *got = 0;
  for (int i = 0; i < want; i++) {
    int64_t *cfg = out + (size_t)*got * (size_t)h->nvars;
    int rc = best ? heron_space_mutate(h->env->space, h->env->rng, best->config,
                                       NULL, 0, cfg, err)
                  : heron_space_sample(h->env->space, h->env->rng, cfg, err);
    if (rc == HERON_OK)
      (*got)++;
  }
  h->env->log(h->env, 2, "hill: proposed %d", *got);
  return HERON_OK;
}

static int hill_observe(void *self, const heron_measurement *results, int n,
                        heron_error *err) {
  (void)self;
  (void)results;
  (void)n;
  (void)err;
  return HERON_OK; /* the history in the env already holds everything */
}

static void hill_destroy(void *self) { free(self); }

static const heron_strategy_plugin hill_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "hill",
    .summary = "hill climbing from the best measured config (out-of-tree test)",
    .params = hill_params,
    .create = hill_create,
    .propose = hill_propose,
    .observe = hill_observe,
    .destroy = hill_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *heron_strategy_plugin_v1(void);
HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &hill_plugin;
}
