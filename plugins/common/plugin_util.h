/* plugins/common/plugin_util.h - small helpers any shipped plugin may use:
 * the monotonic clock, a qsort comparator for doubles and a config's key
 * as a number.
 *
 * They live in heron_plugin_util, a static library that depends on nothing
 * but libheron's public API, which every plugin links already
 * (plugins/common/CMakeLists.txt); a plugin links it privately: each .so
 * keeps its own hidden copy, and libheron's ABI (include/heron/) is not
 * touched.
 */
#ifndef HERON_PLUGIN_COMMON_PLUGIN_UTIL_H
#define HERON_PLUGIN_COMMON_PLUGIN_UTIL_H

#include <stdint.h>

#include "heron/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for durations and
 * deadlines, never for the time of day. */
double plugin_now(void);

/* qsort's comparator for doubles, ascending (NaNs compare equal to
 * everything, as with < and >). */
int plugin_cmp_double(const void *a, const void *b);

/* heron_space_key of cfg as a number, the same number the history keeps
 * (0 when the space refuses the config). */
uint64_t plugin_config_key(const heron_space *sp, const int64_t *cfg);

#ifdef __cplusplus
}
#endif

#endif /* HERON_PLUGIN_COMMON_PLUGIN_UTIL_H */
