/* A strategy whose struct_size (24) stops short of the version-1 layout, as
 * a plugin built against a truncated or foreign header would: the loader
 * must refuse it before reading any member beyond the first 24 bytes. */
#include "heron/strategy.h"

static const heron_strategy_plugin desc = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = 24,
    .name = "strat_short_size",
    .summary = "broken on purpose: struct_size 24",
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &desc;
}
