/* plugins/common/plugin_util.h - small helpers any shipped plugin may use:
 * the monotonic clock and a qsort comparator for doubles.
 *
 * They live in heron_plugin_util, a static library without dependencies
 * (plugins/common/CMakeLists.txt) that a plugin links privately: each .so
 * keeps its own hidden copy, and libheron's ABI (include/heron/) is not
 * touched.
 */
#ifndef HERON_PLUGIN_COMMON_PLUGIN_UTIL_H
#define HERON_PLUGIN_COMMON_PLUGIN_UTIL_H

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for durations and
 * deadlines, never for the time of day. */
double plugin_now(void);

/* qsort's comparator for doubles, ascending (NaNs compare equal to
 * everything, as with < and >). */
int plugin_cmp_double(const void *a, const void *b);

#ifdef __cplusplus
}
#endif

#endif /* HERON_PLUGIN_COMMON_PLUGIN_UTIL_H */
