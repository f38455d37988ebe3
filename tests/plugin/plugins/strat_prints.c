/* A strategy that breaks the rule "no plugin writes to stdout": it
 * printf's a line in create, propose and observe.  Otherwise it is a
 * plain random search (independent heron_space_sample draws), so a run
 * with it measures real configs; the host must keep its own stdout (a
 * report, a table) free of these lines. */
#include <stdio.h>
#include <stdlib.h>

#include "heron/strategy.h"

typedef struct prints_state {
  const heron_strategy_env *env;
  int nvars;
  long proposed, observed;
} prints_state;

static int prints_create(const heron_strategy_env *env,
                         const heron_param *params, int nparams, void **self,
                         heron_error *err) {
  if (!env || !env->space || !env->rng)
    return heron_error_set(err, HERON_EINVAL,
                           "prints: env without a space or an rng");
  prints_state *st = calloc(1, sizeof *st);
  if (!st)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  st->env = env;
  st->nvars = heron_space_nvars(env->space);
  printf("strat_prints: create (stdout)\n");
  *self = st;
  return HERON_OK;
}

static int prints_propose(void *self, int want, int64_t *out, int *got,
                          heron_error *err) {
  prints_state *st = self;
  int n = 0, failures = 0;
  while (n < want && failures < 100) {
    heron_error e = {0};
    if (heron_space_sample(st->env->space, st->env->rng,
                           out + (size_t)n * (size_t)st->nvars, &e) == HERON_OK)
      n++;
    else
      failures++;
  }
  st->proposed += n;
  *got = n;
  printf("strat_prints: propose %d of %d (stdout)\n", n, want);
  return HERON_OK;
}

static int prints_observe(void *self, const heron_measurement *results, int n,
                          heron_error *err) {
  prints_state *st = self;
  st->observed += n;
  printf("strat_prints: observe %d (stdout)\n", n);
  return HERON_OK;
}

static void prints_destroy(void *self) { free(self); }

static const heron_strategy_plugin prints_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "prints",
    .summary = "test: random search that printf's to stdout",
    .create = prints_create,
    .propose = prints_propose,
    .observe = prints_observe,
    .destroy = prints_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &prints_plugin;
}
