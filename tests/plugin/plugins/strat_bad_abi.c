/* A strategy built against a future ABI (version 7): the loader must refuse
 * it with "ABI version 7, expected 1" rather than call into it. */
#include "heron/strategy.h"

static int create(const heron_strategy_env *env, const heron_param *params,
                  int n, void **self, heron_error *err) {
  return HERON_EINTERNAL; /* never reached: the loader rejects the version */
}
static int propose(void *self, int want, int64_t *out, int *got,
                   heron_error *err) {
  return HERON_EINTERNAL;
}
static int observe(void *self, const heron_measurement *r, int n,
                   heron_error *err) {
  return HERON_EINTERNAL;
}
static void destroy(void *self) {}

static const heron_strategy_plugin desc = {
    .abi_version = 7,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "strat_bad_abi",
    .summary = "broken on purpose: wrong abi_version",
    .create = create,
    .propose = propose,
    .observe = observe,
    .destroy = destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &desc;
}
