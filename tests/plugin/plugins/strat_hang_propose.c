/* A strategy whose propose() never returns: it spins on a volatile
 * counter, burning CPU, so only the guard's watchdog can stop it.  The
 * run must end with status 1 and a message naming this file, "propose"
 * and the time limit. */
#include <stdlib.h>

#include "heron/strategy.h"

typedef struct hang_state {
  const heron_strategy_env *env;
} hang_state;

static int hang_create(const heron_strategy_env *env, const heron_param *params,
                       int nparams, void **self, heron_error *err) {
  hang_state *st = calloc(1, sizeof *st);
  if (!st)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  st->env = env;
  *self = st;
  return HERON_OK;
}

static int hang_propose(void *self, int want, int64_t *out, int *got,
                        heron_error *err) {
  /* The volatile keeps the loop from being judged side-effect free. */
  volatile unsigned long spins = 0;
  for (;;)
    spins++;
  return HERON_OK;
}

static int hang_observe(void *self, const heron_measurement *results, int n,
                        heron_error *err) {
  return HERON_OK;
}

static void hang_destroy(void *self) { free(self); }

static const heron_strategy_plugin hang_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "hang_propose",
    .summary = "test: never returns from propose",
    .create = hang_create,
    .propose = hang_propose,
    .observe = hang_observe,
    .destroy = hang_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &hang_plugin;
}
