/* A strategy with one malformed typed parameter declaration, built once per
 * fault (BAD_SPEC selects it): the loader must refuse each at load time,
 * naming the parameter and the field, before create() could ever see a
 * value.  Otherwise a working random-sampling strategy, so only the
 * declaration is at fault. */
#include <stdint.h>

#include "heron/strategy.h"

#if BAD_SPEC == 1 /* a default outside its own range */
#define SPEC                                                                   \
  {.key = "pop", .kind = HERON_PARAM_INT, .default_value = "3",                \
   .flags = HERON_PARAM_MIN | HERON_PARAM_MAX, .lo = 4, .hi = 100}
#elif BAD_SPEC == 2 /* an empty range */
#define SPEC                                                                   \
  {.key = "rate", .kind = HERON_PARAM_FLOAT,                                   \
   .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX, .lo = 1, .hi = 1}
#elif BAD_SPEC == 3 /* a choice without words */
#define SPEC {.key = "mode", .kind = HERON_PARAM_CHOICE, .choices = ""}
#elif BAD_SPEC == 4 /* a kind this host does not know */
#define SPEC {.key = "odd", .kind = (heron_param_kind)9}
#else /* the same key twice */
#define SPEC                                                                   \
  {.key = "seed", .kind = HERON_PARAM_INT}, {                                  \
    .key = "seed", .kind = HERON_PARAM_STRING                                  \
  }
#endif

static const heron_param_spec bad_params[] = {SPEC, {.key = NULL}};

static int bad_create(const heron_strategy_env *env, const heron_param *params,
                      int nparams, void **self, heron_error *err) {
  *self = (void *)env;
  return HERON_OK;
}

static int bad_propose(void *self, int want, int64_t *out, int *got,
                       heron_error *err) {
  *got = 0;
  return HERON_OK;
}

static int bad_observe(void *self, const heron_measurement *results, int n,
                       heron_error *err) {
  return HERON_OK;
}

static void bad_destroy(void *self) {}

static const heron_strategy_plugin desc = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "strat_bad_spec",
    .summary = "broken on purpose: a malformed parameter declaration",
    .create = bad_create,
    .propose = bad_propose,
    .observe = bad_observe,
    .destroy = bad_destroy,
    HERON_PARAM_SPECS(bad_params),
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &desc;
}
