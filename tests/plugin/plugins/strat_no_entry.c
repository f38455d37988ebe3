/* A shared object that exports something, but not the entry symbol (a typo
 * in the name, or a forgotten HERON_PLUGIN_EXPORT). */
#include "heron/strategy.h"

HERON_PLUGIN_EXPORT int heron_strategy_plugin_v1_typo(void);
HERON_PLUGIN_EXPORT int heron_strategy_plugin_v1_typo(void) { return 1; }
