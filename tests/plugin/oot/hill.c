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
  double restart; /* probability of a fresh random sample per config */
} hill;

/* Typed parameters: the host checks values and fills the default before
 * create(), and --help-plugin prints "restart (float in [0, 1], ...)". */
static const heron_param_spec hill_params[] = {
    {.key = "restart",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.1",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help = "probability of a random config instead of a mutation"},
    {.key = NULL},
};

static int hill_create(const heron_strategy_env *env, const heron_param *params,
                       int nparams, void **self, heron_error *err) {
  hill *h = calloc(1, sizeof *h);
  if (!h)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  h->env = env;
  h->nvars = heron_space_nvars(env->space);
  h->restart = heron_param_double_value(params, nparams, "restart", 0.1);
  *self = h;
  return HERON_OK;
}

static int hill_propose(void *self, int want, int64_t *out, int *got,
                        heron_error *err) {
  hill *h = self;
  const heron_measurement *best = heron_history_best(h->env->history);
  heron_error last;
  heron_error_clear(&last);
  int last_rc = HERON_OK;
  *got = 0;
  for (int i = 0; i < want; i++) {
    int64_t *cfg = out + (size_t)*got * (size_t)h->nvars;
    /* Each attempt gets its own error: a failed mutation must not leave
     * its message in the run's err when a later config succeeds. */
    heron_error e;
    heron_error_clear(&e);
    int fresh = !best || heron_rng_uniform(h->env->rng) < h->restart;
    int rc = fresh ? heron_space_sample(h->env->space, h->env->rng, cfg, &e)
                   : heron_space_mutate(h->env->space, h->env->rng,
                                        best->config, NULL, 0, cfg, &e);
    if (rc == HERON_OK)
      (*got)++;
    else
      last_rc = rc, last = e;
  }
  /* Fewer configs than asked for is fine; none at all with a failure is an
   * error the run should report. */
  if (*got == 0 && last_rc != HERON_OK)
    return heron_error_set(err, last_rc, "no config proposed: %s", last.text);
  h->env->log(h->env, HERON_LOG_DEBUG, "proposed %d of %d", *got, want);
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
    HERON_PARAM_SPECS(hill_params),
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
