/* A strategy with a correct header but no propose(): a required member is
 * NULL, and the loader must name it. */
#include "heron/strategy.h"

static int create(const heron_strategy_env *env, const heron_param *params,
                  int n, void **self, heron_error *err) {
  return HERON_EINTERNAL;
}
static int observe(void *self, const heron_measurement *r, int n,
                   heron_error *err) {
  return HERON_EINTERNAL;
}
static void destroy(void *self) {}

static const heron_strategy_plugin desc = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "strat_null_member",
    .summary = "broken on purpose: propose is NULL",
    .create = create,
    .observe = observe,
    .destroy = destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &desc;
}
