/* tools/timing.h - the clock, the ordering of doubles, the median and the
 * timing loop that the tools and the benchmarks share (tools/timing.c), one
 * copy each, in the heron_cli library with cli.h.
 *
 * The timing loop is the benchmarks' (bench_suite, bench_gemm, bench_cuda):
 * each thing timed, a runner, is called once to warm up, then the calls per
 * repeat (`number`) grow until one repeat lasts min_s; then the runners are
 * timed interleaved, repeat by repeat, so that a slow phase of the machine
 * (another process, a frequency change) hits all of them alike, and the
 * median repeat counts.  A runner is timed by this clock around its calls,
 * or by its own clock (a GPU's events) when it has one.
 */
#ifndef HERON_TOOLS_TIMING_H
#define HERON_TOOLS_TIMING_H

/* Seconds on the monotonic clock: for intervals only. */
double cli_now(void);

/* qsort's comparison of two doubles, ascending. */
int cli_cmp_double(const void *a, const void *b);

/* The median of v[0, n), n >= 1, which it sorts: the middle value, or the
 * mean of the two middle ones when n is even. */
double cli_median(double *v, int n);

/* The most runners and repeats one cli_time_runners call takes. */
enum { CLI_TIME_MAX_RUNNERS = 8, CLI_TIME_MAX_REPEATS = 100 };

/* One thing timed: a kernel or a baseline. */
typedef struct cli_runner {
  char name[160]; /* for the caller's table; not read here */
  /* One call, timed on cli_now's clock around `number` of them; or NULL
   * when `timed` is given. */
  void (*call)(void *self);
  /* Or the seconds `number` calls take by the runner's own clock (a GPU's
   * events around calls issued asynchronously), < 0 on an error. */
  double (*timed)(void *self, long long number);
  void *self;
  /* 1 for a library whose idle threads spin for a while after a call
   * (OpenBLAS): with several threads the next runner waits 0.1 s, so that
   * they do not steal its cores. */
  int spins;
  double seconds; /* out: the median seconds per call */
  /* out: this runner against rs[0] round by round: the median and the
   * quartiles over the rounds of (its repeat's seconds per call) / (rs[0]'s
   * in the same round); 1 for rs[0].  Two runners timed back to back share
   * the machine's state of that moment, so on a loaded machine the paired
   * ratio is steadier than the ratio of the two medians. */
  double paired, paired_q1, paired_q3;
} cli_runner;

/* Times rs[0, n) interleaved (the top of the file): after one untimed
 * call, the calls per repeat of each runner grow (at most 16-fold a step,
 * up to 2^20) until one repeat lasts min_s; then `reps` rounds time one
 * repeat of each runner in turn, a repeat of several calls preceded by one
 * untimed call (the other runners have evicted its data), and
 * rs[i].seconds gets its median repeat's seconds per call (the upper
 * middle one of an even count) and rs[i].paired its ratio to rs[0].  `threads`:
 * the threads the runners use (for `spins`).  Returns 0, or -1 when a runner's
 * `timed` failed or n or reps is out of range (1 to CLI_TIME_MAX_RUNNERS, 1 to
 * CLI_TIME_MAX_REPEATS). */
int cli_time_runners(cli_runner *rs, int n, int reps, double min_s,
                     int threads);

#endif /* HERON_TOOLS_TIMING_H */
