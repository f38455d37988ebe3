/* tools/timing.c - the clock, the median and the timing loop (timing.h). */
#include "timing.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

double cli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cli_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double cli_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cli_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Seconds of `number` calls of r, < 0 on an error. */
static double run(const cli_runner *r, long long number) {
  if (r->timed)
    return r->timed(r->self, number);
  double t0 = cli_now();
  for (long long c = 0; c < number; c++)
    r->call(r->self);
  return cli_now() - t0;
}

/* The calls per repeat of r: grown until a repeat lasts min_s; < 0 on an
 * error. */
static long long calls_per_repeat(const cli_runner *r, double min_s) {
  const long long most = 1LL << 20;
  if (run(r, 1) < 0)
    return -1;
  long long number = 1;
  for (;;) {
    double t = run(r, number);
    if (t < 0)
      return -1;
    if (t >= min_s || number >= most)
      return number;
    long long grow = t > 0 ? (long long)(min_s / t * 1.2) + 1 : 16;
    number *= grow < 2 ? 2 : grow > 16 ? 16 : grow;
    if (number > most)
      number = most;
  }
}

int cli_time_runners(cli_runner *rs, int n, int reps, double min_s,
                     int threads) {
  if (n < 1 || n > CLI_TIME_MAX_RUNNERS || reps < 1 ||
      reps > CLI_TIME_MAX_REPEATS)
    return -1;
  long long number[CLI_TIME_MAX_RUNNERS];
  double ts[CLI_TIME_MAX_RUNNERS][CLI_TIME_MAX_REPEATS];
  for (int i = 0; i < n; i++)
    if ((number[i] = calls_per_repeat(&rs[i], min_s)) < 0)
      return -1;
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < n; i++) {
      int prev = (i + n - 1) % n;
      if (threads > 1 && prev != i && (r > 0 || i > 0) && rs[prev].spins)
        usleep(100000);
      if (number[i] > 1 && run(&rs[i], 1) < 0)
        return -1;
      double t = run(&rs[i], number[i]);
      if (t < 0)
        return -1;
      ts[i][r] = t / (double)number[i];
    }
  for (int i = 0; i < n; i++) {
    double q[CLI_TIME_MAX_REPEATS];
    for (int r = 0; r < reps; r++)
      q[r] = ts[0][r] > 0 ? ts[i][r] / ts[0][r] : 1;
    qsort(q, (size_t)reps, sizeof q[0], cli_cmp_double);
    rs[i].paired = q[reps / 2];
    rs[i].paired_q1 = q[reps / 4];
    rs[i].paired_q3 = q[(3 * reps) / 4];
  }
  for (int i = 0; i < n; i++) {
    qsort(ts[i], (size_t)reps, sizeof ts[i][0], cli_cmp_double);
    rs[i].seconds = ts[i][reps / 2];
  }
  return 0;
}
