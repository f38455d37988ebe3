/* plugins/strategies/random/random.c - constrained random search.
 *
 * The baseline every other strategy is compared with: each proposal is an
 * independent draw of heron_space_sample, which picks every knob from what
 * constraint propagation leaves possible, so every proposal is valid.  The
 * strategy keeps no history of its own (the engine drops configs that were
 * already measured); it only counts what it proposed and observed, for its
 * closing log line.
 *
 * Parameters (see README.md):
 *   retries  sampling failures tolerated in one propose() call (default 100)
 */
#include <stdlib.h>
#include <string.h>

#include "heron/strategy.h"

typedef struct random_state {
  const heron_strategy_env *env;
  int nvars;
  int64_t retries;
  long proposed;
  long observed;
  long failures;
} random_state;

static const heron_param_spec random_params[] = {
    {.key = "retries",
     .kind = HERON_PARAM_INT,
     .default_value = "100",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1000000,
     .help = "sampling failures tolerated in one round before proposing fewer "
             "configs"},
    {.key = NULL},
};

static int random_create(const heron_strategy_env *env,
                         const heron_param *params, int nparams, void **self,
                         heron_error *err) {
  if (!env || !env->space || !env->rng || !self)
    return heron_error_set(err, HERON_EINVAL,
                           "random: env without a space or an rng");
  /* The host checked the value against random_params and filled in the
   * default, so reading it cannot fail. */
  int64_t retries = heron_param_int_value(params, nparams, "retries", 100);
  random_state *st = calloc(1, sizeof *st);
  if (!st)
    return heron_error_set(err, HERON_ENOMEM, "random: out of memory");
  st->env = env;
  st->nvars = heron_space_nvars(env->space);
  st->retries = retries;
  *self = st;
  return HERON_OK;
}

static int random_propose(void *self, int want, int64_t *out, int *got,
                          heron_error *err) {
  random_state *st = self;
  const heron_strategy_env *env = st->env;
  int n = 0;
  int64_t failures = 0;
  heron_error last = {0};
  *got = 0;
  while (n < want) {
    heron_error e = {0};
    int rc = heron_space_sample(env->space, env->rng,
                                out + (size_t)n * st->nvars, &e);
    if (rc == HERON_OK) {
      n++;
      continue;
    }
    /* Only "nothing found this time" is worth retrying; anything else (bad
     * arguments, no memory) will not get better. */
    if (rc != HERON_EUNSAT)
      return heron_error_set(err, rc, "random: sampling failed: %s", e.text);
    st->failures++;
    last = e;
    if (++failures >= st->retries)
      break;
  }
  st->proposed += n;
  *got = n;
  if (n == 0 && want > 0)
    /* Not one config in `retries` draws: the space is most likely empty, and
     * proposing nothing forever would only spin the engine. */
    return heron_error_set(err, HERON_EUNSAT,
                           "random: no valid config in %lld attempts: %s",
                           (long long)failures, last.text);
  if (n < want)
    env->log(env, HERON_LOG_WARN,
             "proposing %d of %d configs after %lld failed "
             "samples (%s)",
             n, want, (long long)failures, last.text);
  return HERON_OK;
}

static int random_observe(void *self, const heron_measurement *results, int n,
                          heron_error *err) {
  random_state *st = self;
  st->observed += n;
  return HERON_OK;
}

static void random_destroy(void *self) {
  random_state *st = self;
  if (!st)
    return;
  st->env->log(st->env, HERON_LOG_DEBUG,
               "proposed %ld, observed %ld, %ld failed "
               "samples",
               st->proposed, st->observed, st->failures);
  free(st);
}

static const heron_strategy_plugin random_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "random",
    .summary = "constrained random sampling: independent valid configs",
    HERON_PARAM_SPECS(random_params),
    .create = random_create,
    .propose = random_propose,
    .observe = random_observe,
    .destroy = random_destroy,
    /* No save_state / load_state: there is no state worth resuming. */
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &random_plugin;
}
