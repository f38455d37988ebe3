/* core/measure/timing.c - the one timing loop and median of every runner
 * (see timing.h). */
#include "core/measure/timing.h"

#include <stdlib.h>

/* qsort's comparison of two doubles, ascending. */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double heron__median(double *v, int n) {
  if (n <= 0)
    return 0;
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double heron__time_repeats(const heron_measure_options *o,
                           heron__timed_calls_fn calls,
                           heron__before_repeat_fn before, void *ctx,
                           double *per_call) {
  double min_s = o->min_repeat_ms / 1000.0;
  long long number = o->number;
  for (int r = 0; r < o->repeat;) {
    if (before)
      before(ctx, r);
    double t = calls(ctx, number);
    if (t < min_s && number < HERON__NUMBER_MAX) {
      double grow = t > 0 ? min_s / t * 1.1 : 10;
      if (grow < 1.6)
        grow = 1.6;
      double next = (double)number * grow + 1;
      number = next > (double)HERON__NUMBER_MAX ? HERON__NUMBER_MAX
                                                : (long long)next;
      continue;
    }
    per_call[r++] = t / (double)number;
  }
  return heron__median(per_call, o->repeat);
}
