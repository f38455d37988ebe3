/* An entry point that returns NULL instead of a descriptor. */
#include <stddef.h>

#include "heron/strategy.h"

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return NULL;
}
