/* core/measure/timing.h - the timing loop and the median every runner
 * shares: the host worker (run.c), a toolchain's own worker and the
 * recorded meter's build-time median (core/replay/replay.c).  Internal to
 * libheron. */
#ifndef HERON_CORE_MEASURE_TIMING_H
#define HERON_CORE_MEASURE_TIMING_H

#include "heron/tune.h"

/* `number` never grows past this, so a kernel that the clock cannot see
 * (an empty function) still ends its calibration. */
#define HERON__NUMBER_MAX 1000000000LL

/* Seconds that `number` back-to-back calls of the kernel took (the runner's
 * own clock: wall time, or the events of a device).  ctx is the
 * caller's. */
typedef double (*heron__timed_calls_fn)(void *ctx, long long number);

/* Called before each repeat (r: the repeats counted so far), e.g. to
 * flush the caches; not part of the time. */
typedef void (*heron__before_repeat_fn)(void *ctx, int r);

/* Times the kernel as TVM's time_evaluator does: o->repeat repeats of
 * `number` calls (o->number to start with), each preceded by before()
 * when it is not NULL.  A repeat shorter than o->min_repeat_ms does not
 * count: `number` grows (to what that repeat suggests, at least 1.6x, at
 * most HERON__NUMBER_MAX) and the repeat runs again.  per_call[o->repeat]
 * is the caller's scratch; returns the median seconds per call. */
double heron__time_repeats(const heron_measure_options *o,
                           heron__timed_calls_fn calls,
                           heron__before_repeat_fn before, void *ctx,
                           double *per_call);

/* The median of v[0..n) (sorts v); 0 for n <= 0. */
double heron__median(double *v, int n);

#endif
