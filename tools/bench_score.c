/* tools/bench_score.c - the methodology score (see bench_score.h for the
 * definitions, their sources and the choices made here).
 *
 * The file has four parts: the baseline of one space (expected best of
 * random search without replacement, and the window it sets), scoring one
 * run against it, the statistics over runs (Student's t, the stratified
 * mean), and the table of runs with its writers.
 */
#include "bench_score.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heron/rng.h"
#include "timing.h"

/* Below this, P(none of the j-1 best drawn) adds at most 1e-18 of the
 * objective range to the expectation: the sum stops there. */
#define TAIL_EPS 1e-18
/* Points on the draws axis are real (a linspace); this keeps 4.9999999 from
 * becoming 4 draws. */
#define FLOOR_EPS 1e-9
/* The time axis's baseline: uniform random searches simulated, and the
 * points of the grid their mean best-so-far is kept on (see "Time axis" in
 * bench_score.h).  The seed is fixed, so a space has one baseline. */
#define SIM_RUNS 4000
#define SIM_GRID 4096
#define SIM_SEED 0x5eed5c0ce5ull

void bench_score_settings_default(bench_score_settings *st) {
  /* experiments_defaults.json: statistics_settings and
   * visualization_settings.resolution; experiments.py: cutoff_margin. */
  st->cutoff_percentile = 0.95;
  st->cutoff_percentile_start = 0.5;
  st->cutoff_margin = 0.1;
  st->points = 1000;
  st->axis = BENCH_SCORE_AXIS_TIME;
}

/* ---- the baseline ------------------------------------------------------- */

double bench_score_expected_best(const bench_score_baseline *b, size_t k) {
  if (k == 0)
    return b->worst;
  if (k > b->n)
    k = b->n;
  /* E[best_k] = v_1 + sum_j (v_j - v_{j-1}) P(best >= v_j), and best >= v_j
   * exactly when none of the j-1 lowest values was among the k draws:
   * C(N-j+1, k) / C(N, k), built one factor (N-k-i)/(N-i) at a time. */
  double N = (double)b->n, K = (double)k;
  double e = b->sorted[0], s = 1.0;
  for (size_t j = 2; j <= b->valid; j++) {
    double i = (double)(j - 2);
    double num = N - K - i;
    if (num <= 0)
      break; /* k draws cannot all miss j-1 configs: the rest is 0 */
    s *= num / (N - i);
    if (s < TAIL_EPS)
      break;
    e += (b->sorted[j - 1] - b->sorted[j - 2]) * s;
  }
  return e;
}

/* The baseline at a point of the axis.  Draws axis: E[best_floor(x)], as a
 * run is sampled after floor(x) trials.  Time axis: the simulated expected
 * best-so-far at x seconds. */
static double baseline_at(const bench_score_baseline *b, double x) {
  if (b->settings.axis == BENCH_SCORE_AXIS_DRAWS) {
    double d = floor(x + FLOOR_EPS);
    return bench_score_expected_best(b, d <= 0 ? 0 : (size_t)fmin(d, b->n));
  }
  return bench_score_expected_best_at(b, x);
}

double bench_score_expected_best_at(const bench_score_baseline *b,
                                    double seconds) {
  if (!b->time_curve || !(seconds > 0))
    return b->worst;
  double g = seconds / b->time_step;
  if (g >= (double)(b->time_points - 1))
    return b->time_curve[b->time_points - 1];
  size_t g0 = (size_t)floor(g);
  double f = g - (double)g0;
  return b->time_curve[g0] + f * (b->time_curve[g0 + 1] - b->time_curve[g0]);
}

/* The first number of draws whose expected best is at or below `value`.
 * E[best_k] does not increase with k and E[best_n] is the optimum, which
 * is at or below every value asked for, so a binary search finds it. */
static size_t first_draws_reaching(const bench_score_baseline *b,
                                   double value) {
  size_t lo = 1, hi = b->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (bench_score_expected_best(b, mid) <= value)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

static int check_settings(const bench_score_settings *st, heron_error *err) {
  if (!(st->cutoff_percentile > 0 && st->cutoff_percentile <= 1))
    return heron_error_set(err, HERON_EINVAL,
                           "cutoff_percentile %g is not in (0, 1]",
                           st->cutoff_percentile);
  if (!(st->cutoff_percentile_start >= 0 &&
        st->cutoff_percentile_start <= st->cutoff_percentile))
    return heron_error_set(err, HERON_EINVAL,
                           "cutoff_percentile_start %g is not in [0, %g]",
                           st->cutoff_percentile_start, st->cutoff_percentile);
  if (!(st->cutoff_margin >= 0 && isfinite(st->cutoff_margin)))
    return heron_error_set(err, HERON_EINVAL, "cutoff_margin %g is negative",
                           st->cutoff_margin);
  if (st->points < 1)
    return heron_error_set(err, HERON_EINVAL, "points %d is not >= 1",
                           st->points);
  if (st->axis != BENCH_SCORE_AXIS_TIME && st->axis != BENCH_SCORE_AXIS_DRAWS)
    return heron_error_set(err, HERON_EINVAL, "unknown axis %d", (int)st->axis);
  return HERON_OK;
}

/* Copies the valid objectives of `sp`, sorted, and the space's figures. */
static int load_space(bench_score_baseline *b, const bench_score_space *sp,
                      heron_error *err) {
  if (!sp || sp->n == 0 || !sp->objective || !sp->cost)
    return heron_error_set(err, HERON_EINVAL,
                           "the space is empty or lacks its arrays");
  double cost_sum = 0;
  for (size_t i = 0; i < sp->n; i++) {
    if (!(isfinite(sp->cost[i]) && sp->cost[i] >= 0))
      return heron_error_set(err, HERON_EINVAL,
                             "config %zu has cost %g (need finite, >= 0)", i,
                             sp->cost[i]);
    cost_sum += sp->cost[i];
    b->valid += isfinite(sp->objective[i]) != 0;
  }
  if (b->valid == 0)
    return heron_error_set(err, HERON_EUNSAT,
                           "none of the %zu configs has an objective", sp->n);
  b->sorted = malloc(b->valid * sizeof *b->sorted);
  if (!b->sorted)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  size_t m = 0;
  for (size_t i = 0; i < sp->n; i++)
    if (isfinite(sp->objective[i]))
      b->sorted[m++] = sp->objective[i];
  qsort(b->sorted, b->valid, sizeof *b->sorted, cli_cmp_double);
  b->n = sp->n;
  b->optimum = b->sorted[0];
  b->worst = b->sorted[b->valid - 1];
  /* numpy's median, as searchspace_statistics.py takes it: the middle
   * value, or the mean of the two middle ones. */
  size_t h = b->valid / 2;
  b->median =
      b->valid % 2 ? b->sorted[h] : 0.5 * (b->sorted[h - 1] + b->sorted[h]);
  /* The exact expected cost of a draw without replacement. */
  b->mean_cost = cost_sum / (double)sp->n;
  return HERON_OK;
}

/* The time axis's baseline (bench_score.h, "Time axis"): SIM_RUNS uniform
 * random searches without replacement over the space, each drawing configs
 * until its clock passes the horizon, and their mean best-so-far at
 * SIM_GRID points from 0 to the horizon; a trial counts at a point once its
 * result is known (its clock at or before the point), as in
 * bench_score_run.  The horizon starts at twice the draws axis's cutoff in
 * mean costs and doubles until the mean reaches the cutoff value there,
 * which it does at the latest when the horizon holds every config.  Each
 * run is a partial Fisher-Yates shuffle of one array, which a shuffle
 * leaves a permutation, so every run draws uniformly without replacement.
 * Returns 0, or -1 when out of memory. */
static int simulate_time(bench_score_baseline *b, const bench_score_space *sp) {
  size_t n = sp->n;
  size_t *perm = malloc(n * sizeof *perm);
  double *acc = malloc(SIM_GRID * sizeof *acc);
  if (!perm || !acc) {
    free(perm);
    free(acc);
    return -1;
  }
  double total = 0;
  for (size_t i = 0; i < n; i++) {
    perm[i] = i;
    total += sp->cost[i];
  }
  /* Summed in another order a run's clock may pass `total` by a rounding
   * error: a horizon of every config is a little longer. */
  double all = total * (1 + 1e-9);
  double horizon = 2.0 * (double)b->cutoff_draws * b->mean_cost;
  for (;;) {
    if (!(horizon < all))
      horizon = all;
    double step = horizon / (SIM_GRID - 1);
    memset(acc, 0, SIM_GRID * sizeof *acc);
    heron_rng rng;
    heron_rng_seed(&rng, SIM_SEED);
    for (int r = 0; r < SIM_RUNS; r++) {
      double t = 0, best = b->worst;
      int g = 0;
      for (size_t k = 0; k < n && g < SIM_GRID; k++) {
        size_t j = k + (size_t)heron_rng_below(&rng, n - k);
        size_t c = perm[j];
        perm[j] = perm[k];
        perm[k] = c;
        t += sp->cost[c];
        while (g < SIM_GRID && (double)g * step < t)
          acc[g++] += best;
        if (isfinite(sp->objective[c]) && sp->objective[c] < best)
          best = sp->objective[c];
      }
      for (; g < SIM_GRID; g++)
        acc[g] += best;
    }
    for (int g = 0; g < SIM_GRID; g++)
      acc[g] /= SIM_RUNS;
    if (acc[SIM_GRID - 1] <= b->cutoff_value || horizon >= all) {
      b->time_step = step;
      break;
    }
    horizon *= 2;
  }
  free(perm);
  b->time_curve = acc;
  b->time_points = SIM_GRID;
  b->sim_runs = SIM_RUNS;
  return 0;
}

/* The first time the time axis's baseline is at or below `value`: the
 * crossing of its line between the grid points around it (the curve does
 * not increase: every simulated run's best-so-far does not). */
static double first_seconds_reaching(const bench_score_baseline *b,
                                     double value) {
  const double *c = b->time_curve;
  if (c[0] <= value)
    return 0;
  int g = 1;
  while (g < b->time_points - 1 && c[g] > value)
    g++;
  double drop = c[g - 1] - c[g];
  double f = drop > 0 ? (c[g - 1] - value) / drop : 1;
  return b->time_step * ((double)(g - 1) + fmin(f, 1.0));
}

/* The window: objective values to reach (searchspace_statistics.py,
 * objective_performance_at_cutoff_point), the draws and the seconds at
 * which the baseline reaches them, the run budget with its margin
 * (experiments.py, calculate_budget), and the points over it.  Returns 0,
 * or -1 when out of memory. */
static int set_window(bench_score_baseline *b, const bench_score_space *sp) {
  const bench_score_settings *st = &b->settings;
  double span = b->median - b->optimum;
  b->cutoff_value = b->optimum + span * (1 - st->cutoff_percentile);
  b->start_value = b->optimum + span * (1 - st->cutoff_percentile_start);
  b->cutoff_draws = first_draws_reaching(b, b->cutoff_value);
  b->start_draws = first_draws_reaching(b, b->start_value);
  double budget = ceil((double)b->cutoff_draws * (1 + st->cutoff_margin));
  b->budget_draws = budget >= (double)b->n ? b->n : (size_t)budget;
  if (b->mean_cost > 0) {
    if (simulate_time(b, sp) != 0)
      return -1;
    b->cutoff_seconds = first_seconds_reaching(b, b->cutoff_value);
    b->start_seconds = first_seconds_reaching(b, b->start_value);
  }
  b->budget_seconds = b->cutoff_seconds * (1 + st->cutoff_margin);

  int time = st->axis == BENCH_SCORE_AXIS_TIME;
  double lo = time ? b->start_seconds : (double)b->start_draws;
  double hi = time ? b->cutoff_seconds : (double)b->cutoff_draws;
  for (int i = 0; i < b->points; i++)
    b->x[i] = b->points == 1 ? hi : lo + (hi - lo) * i / (b->points - 1);
  b->x[b->points - 1] = hi; /* exactly, whatever the rounding */
  for (int i = 0; i < b->points; i++)
    b->curve[i] = baseline_at(b, b->x[i]);
  return 0;
}

int bench_score_baseline_init(bench_score_baseline *b,
                              const bench_score_space *sp,
                              const bench_score_settings *st,
                              heron_error *err) {
  memset(b, 0, sizeof *b);
  if (st)
    b->settings = *st;
  else
    bench_score_settings_default(&b->settings);
  int rc = check_settings(&b->settings, err);
  if (rc == HERON_OK)
    rc = load_space(b, sp, err);
  if (rc == HERON_OK && b->settings.axis == BENCH_SCORE_AXIS_TIME &&
      !(b->mean_cost > 0))
    rc = heron_error_set(err, HERON_EINVAL,
                         "every config costs 0 s: there is no time axis "
                         "(score over draws instead)");
  if (rc == HERON_OK) {
    b->points = b->settings.points;
    b->x = malloc((size_t)b->points * sizeof *b->x);
    b->curve = malloc((size_t)b->points * sizeof *b->curve);
    if (!b->x || !b->curve)
      rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  if (rc != HERON_OK) {
    bench_score_baseline_free(b);
    return rc;
  }
  if (set_window(b, sp) != 0) {
    bench_score_baseline_free(b);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  return HERON_OK;
}

void bench_score_baseline_free(bench_score_baseline *b) {
  if (!b)
    return;
  free(b->sorted);
  free(b->x);
  free(b->curve);
  free(b->time_curve);
  memset(b, 0, sizeof *b);
}

/* ---- one run ------------------------------------------------------------ */

void bench_score_trace(const bench_score_space *sp, const size_t *idx, size_t n,
                       bench_score_trial *out) {
  double t = 0;
  for (size_t i = 0; i < n; i++) {
    t += sp->cost[idx[i]];
    out[i].x = t;
    out[i].objective = sp->objective[idx[i]];
  }
}

/* (baseline - run) / (baseline - optimum), 0 where the baseline stands at
 * the optimum already (see "Degenerate points" in the header). */
static double standardise(const bench_score_baseline *b, double base,
                          double run) {
  double den = base - b->optimum;
  if (den <= 1e-12 * (b->worst - b->optimum))
    return 0;
  return (base - run) / den;
}

int bench_score_run(const bench_score_baseline *b,
                    const bench_score_trial *trials, size_t n, double *curve,
                    double *score, heron_error *err) {
  int time = b->settings.axis == BENCH_SCORE_AXIS_TIME;
  if (time)
    for (size_t j = 0; j < n; j++)
      if (!isfinite(trials[j].x) || (j > 0 && trials[j].x < trials[j - 1].x))
        return heron_error_set(err, HERON_EINVAL,
                               "trial %zu: x %g is not finite or goes back "
                               "in time",
                               j, trials[j].x);
  /* The points increase, so one pass over the trials serves them all. */
  size_t j = 0;
  int have = 0;
  double best = b->worst, sum = 0;
  for (int i = 0; i < b->points; i++) {
    double xi = b->x[i];
    double upto = time ? 0 : floor(xi + FLOOR_EPS);
    while (j < n && (time ? trials[j].x <= xi : (double)j < upto)) {
      double y = trials[j].objective;
      if (isfinite(y) && (!have || y < best)) {
        best = y;
        have = 1;
      }
      j++;
    }
    double s = standardise(b, b->curve[i], best);
    if (curve)
      curve[i] = s;
    sum += s;
  }
  *score = sum / b->points;
  return HERON_OK;
}

/* ---- statistics --------------------------------------------------------- */

/* The regularised incomplete beta function I_x(a, b) by its continued
 * fraction (DLMF 8.17.22), evaluated with the modified Lentz method; the
 * fraction converges fast for x < (a + 1) / (a + b + 2), and the symmetry
 * I_x(a, b) = 1 - I_{1-x}(b, a) covers the rest. */
static double inc_beta_cf(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (fabs(d) < tiny)
    d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 500; m++) {
    double m2 = 2.0 * m;
    double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    d = fabs(d) < tiny ? 1 / tiny : 1 / d;
    c = 1 + num / c;
    if (fabs(c) < tiny)
      c = tiny;
    h *= d * c;
    num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    d = fabs(d) < tiny ? 1 / tiny : 1 / d;
    c = 1 + num / c;
    if (fabs(c) < tiny)
      c = tiny;
    double step = d * c;
    h *= step;
    if (fabs(step - 1) < 1e-15)
      break;
  }
  return h;
}

static double inc_beta(double a, double b, double x) {
  if (x <= 0)
    return 0;
  if (x >= 1)
    return 1;
  double front =
      exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
  if (x < (a + 1) / (a + b + 2))
    return front * inc_beta_cf(a, b, x) / a;
  return 1 - front * inc_beta_cf(b, a, 1 - x) / b;
}

double bench_score_t975(double df) {
  if (!(df > 0))
    return NAN;
  if (df > 1e7)
    return 1.959963984540054; /* the normal quantile; t differs by < 1e-7 */
  /* P(|T| > t) = I_{df/(df+t^2)}(df/2, 1/2): find the x where that is 0.05
   * by bisection (I grows with x), then t = sqrt(df (1 - x) / x). */
  double lo = 0, hi = 1;
  for (int it = 0; it < 200 && hi - lo > 1e-17; it++) {
    double mid = 0.5 * (lo + hi);
    if (inc_beta(0.5 * df, 0.5, mid) < 0.05)
      lo = mid;
    else
      hi = mid;
  }
  double x = 0.5 * (lo + hi);
  return sqrt(df * (1 - x) / x);
}

typedef struct stats {
  double mean, half, df;
  int spaces;
} stats;

/* The stratified mean of val[0..n) over the spaces space[0..n) names
 * (small integers below nspaces), with its 95% t interval - the
 * "Aggregate" item of the header.  Scratch holds 3 * nspaces doubles. */
static stats stratified(const double *val, const int *space, int n, int nspaces,
                        double *scratch) {
  stats r = {NAN, NAN, NAN, 0};
  double *cnt = scratch, *mean = scratch + nspaces, *m2 = mean + nspaces;
  for (int s = 0; s < nspaces; s++)
    cnt[s] = mean[s] = m2[s] = 0;
  /* Welford's update per space, stable for values close together. */
  for (int i = 0; i < n; i++) {
    int s = space[i];
    cnt[s] += 1;
    double d = val[i] - mean[s];
    mean[s] += d / cnt[s];
    m2[s] += d * (val[i] - mean[s]);
  }
  double sum_means = 0, pooled_m2 = 0, pooled_df = 0;
  for (int s = 0; s < nspaces; s++) {
    if (cnt[s] == 0)
      continue;
    r.spaces++;
    sum_means += mean[s];
    if (cnt[s] >= 2) {
      pooled_m2 += m2[s];
      pooled_df += cnt[s] - 1;
    }
  }
  if (r.spaces == 0)
    return r;
  double S = r.spaces;
  r.mean = sum_means / S;
  if (pooled_df == 0) {
    /* One run per space: the runs' plain sample variance. */
    if (n < 2)
      return r;
    double mu = 0, ss = 0;
    for (int i = 0; i < n; i++)
      mu += val[i];
    mu /= n;
    for (int i = 0; i < n; i++)
      ss += (val[i] - mu) * (val[i] - mu);
    r.df = n - 1;
    r.half = bench_score_t975(r.df) * sqrt(ss / (n - 1) / n);
    return r;
  }
  double pooled_var = pooled_m2 / pooled_df;
  double se2 = 0, dfden = 0;
  for (int s = 0; s < nspaces; s++) {
    if (cnt[s] == 0)
      continue;
    int own = cnt[s] >= 2;
    double var = own ? m2[s] / (cnt[s] - 1) : pooled_var;
    double term = var / cnt[s];
    se2 += term;
    dfden += term * term / (own ? cnt[s] - 1 : pooled_df);
  }
  /* Welch-Satterthwaite: (sum of terms)^2 / sum of term^2 / df_s. */
  r.df = dfden > 0 ? se2 * se2 / dfden : pooled_df;
  r.half = se2 > 0 ? bench_score_t975(r.df) * sqrt(se2) / S : 0;
  return r;
}

/* ---- the table ---------------------------------------------------------- */

typedef struct run_rec {
  int space, strategy; /* indices into the table's name lists */
  long long seed;
  double score;
  double *curve; /* [points] or NULL */
} run_rec;

struct bench_score_table {
  int points;
  run_rec *runs;
  int nruns, caprun;
  char **spaces, **strategies;
  int nspaces, capspaces, nstrategies, capstrategies;
};

bench_score_table *bench_score_table_new(int points) {
  if (points < 1)
    return NULL;
  bench_score_table *t = calloc(1, sizeof *t);
  if (t)
    t->points = points;
  return t;
}

void bench_score_table_free(bench_score_table *t) {
  if (!t)
    return;
  for (int i = 0; i < t->nruns; i++)
    free(t->runs[i].curve);
  for (int i = 0; i < t->nspaces; i++)
    free(t->spaces[i]);
  for (int i = 0; i < t->nstrategies; i++)
    free(t->strategies[i]);
  free(t->runs);
  free(t->spaces);
  free(t->strategies);
  free(t);
}

/* Grows *arr (of *cap elements of `size`) to hold one more than n. */
static int grow(void **arr, int *cap, int n, size_t size) {
  if (n < *cap)
    return 0;
  int nc = *cap ? 2 * *cap : 16;
  void *p = realloc(*arr, (size_t)nc * size);
  if (!p)
    return -1;
  *arr = p;
  *cap = nc;
  return 0;
}

/* The index of `name` in list[0..*n), added (copied) when missing; -1 when
 * out of memory. */
static int intern(char ***list, int *n, int *cap, const char *name) {
  for (int i = 0; i < *n; i++)
    if (!strcmp((*list)[i], name))
      return i;
  /* strdup is POSIX, not C11: copied by hand so the file builds in strict
   * C11 as well. */
  size_t len = strlen(name) + 1;
  char *copy = malloc(len);
  if (copy)
    memcpy(copy, name, len);
  if (!copy || grow((void **)list, cap, *n, sizeof **list) != 0) {
    free(copy);
    return -1;
  }
  (*list)[*n] = copy;
  return (*n)++;
}

int bench_score_table_add(bench_score_table *t, const char *space,
                          const char *strategy, long long seed, double score,
                          const double *curve, heron_error *err) {
  if (!t || !space || !strategy)
    return heron_error_set(err, HERON_EINVAL, "a NULL table or name");
  if (!isfinite(score))
    return heron_error_set(err, HERON_EINVAL,
                           "the score of %s on %s (seed %lld) is %g", strategy,
                           space, seed, score);
  run_rec r = {0, 0, seed, score, NULL};
  r.space = intern(&t->spaces, &t->nspaces, &t->capspaces, space);
  r.strategy =
      intern(&t->strategies, &t->nstrategies, &t->capstrategies, strategy);
  if (r.space < 0 || r.strategy < 0 ||
      grow((void **)&t->runs, &t->caprun, t->nruns, sizeof *t->runs) != 0)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  if (curve) {
    r.curve = malloc((size_t)t->points * sizeof *r.curve);
    if (!r.curve)
      return heron_error_set(err, HERON_ENOMEM, "out of memory");
    memcpy(r.curve, curve, (size_t)t->points * sizeof *r.curve);
  }
  t->runs[t->nruns++] = r;
  return HERON_OK;
}

/* Scratch for one strategy's statistics: values and spaces of its runs. */
typedef struct scratch {
  double *val, *tmp;
  int *space;
} scratch;

static int scratch_new(const bench_score_table *t, scratch *s) {
  size_t n = t->nruns ? (size_t)t->nruns : 1;
  size_t m = t->nspaces ? (size_t)t->nspaces : 1;
  s->val = malloc(n * sizeof *s->val);
  s->space = malloc(n * sizeof *s->space);
  s->tmp = malloc(3 * m * sizeof *s->tmp);
  return s->val && s->space && s->tmp ? 0 : -1;
}

static void scratch_free(scratch *s) {
  free(s->val);
  free(s->space);
  free(s->tmp);
}

/* Statistics of strategy k: of the scores (point < 0) or of the curves at
 * `point` (runs without a curve left out). */
static stats strategy_stats(const bench_score_table *t, int k, int point,
                            scratch *s) {
  int n = 0;
  for (int i = 0; i < t->nruns; i++) {
    const run_rec *r = &t->runs[i];
    if (r->strategy != k || (point >= 0 && !r->curve))
      continue;
    s->val[n] = point >= 0 ? r->curve[point] : r->score;
    s->space[n++] = r->space;
  }
  return stratified(s->val, s->space, n, t->nspaces, s->tmp);
}

int bench_score_table_aggregates(const bench_score_table *t,
                                 bench_score_agg *out, int cap) {
  if (!t)
    return 0;
  scratch s;
  if (cap > 0 && scratch_new(t, &s) != 0) {
    scratch_free(&s);
    return -1;
  }
  for (int k = 0; k < t->nstrategies && k < cap; k++) {
    stats st = strategy_stats(t, k, -1, &s);
    bench_score_agg *a = &out[k];
    a->strategy = t->strategies[k];
    a->runs = 0;
    for (int i = 0; i < t->nruns; i++)
      a->runs += t->runs[i].strategy == k;
    a->spaces = st.spaces;
    a->score = st.mean;
    a->half_width = st.half;
    a->lo = st.mean - st.half;
    a->hi = st.mean + st.half;
    a->df = st.df;
  }
  if (cap > 0)
    scratch_free(&s);
  return t->nstrategies;
}

const char *bench_score_format(const bench_score_agg *a, char *buf,
                               size_t cap) {
  if (isfinite(a->half_width))
    snprintf(buf, cap, "%.3f \u00b1 %.3f", a->score, a->half_width);
  else
    snprintf(buf, cap, "%.3f \u00b1 n/a", a->score);
  return buf;
}

/* The aggregates in a fresh array (count in *n); NULL when out of memory
 * or empty. */
static bench_score_agg *all_aggregates(const bench_score_table *t, int *n) {
  *n = t->nstrategies;
  if (*n == 0)
    return NULL;
  bench_score_agg *a = calloc((size_t)*n, sizeof *a);
  if (a && bench_score_table_aggregates(t, a, *n) < 0) {
    free(a);
    a = NULL;
  }
  return a;
}

static int finish(FILE *f) {
  return ferror(f) || fflush(f) != 0 ? HERON_EIO : HERON_OK;
}

int bench_score_write_runs_csv(const bench_score_table *t, FILE *f) {
  fprintf(f, "space,strategy,seed,score\n");
  for (int i = 0; i < t->nruns; i++) {
    const run_rec *r = &t->runs[i];
    fprintf(f, "%s,%s,%lld,%.9g\n", t->spaces[r->space],
            t->strategies[r->strategy], r->seed, r->score);
  }
  return finish(f);
}

int bench_score_write_aggregates_csv(const bench_score_table *t, FILE *f) {
  int n;
  bench_score_agg *a = all_aggregates(t, &n);
  if (n > 0 && !a)
    return HERON_ENOMEM;
  fprintf(f, "strategy,runs,spaces,score,ci_low,ci_high,half_width,df\n");
  for (int k = 0; k < n; k++)
    fprintf(f, "%s,%d,%d,%.9g,%.9g,%.9g,%.9g,%.6g\n", a[k].strategy, a[k].runs,
            a[k].spaces, a[k].score, a[k].lo, a[k].hi, a[k].half_width,
            a[k].df);
  free(a);
  return finish(f);
}

int bench_score_write_markdown(const bench_score_table *t, FILE *f) {
  int n;
  bench_score_agg *a = all_aggregates(t, &n);
  if (n > 0 && !a)
    return HERON_ENOMEM;
  fprintf(f, "| strategy | runs | spaces | score |\n"
             "| --- | ---: | ---: | ---: |\n");
  char cell[64];
  for (int k = 0; k < n; k++)
    fprintf(f, "| %s | %d | %d | %s |\n", a[k].strategy, a[k].runs, a[k].spaces,
            bench_score_format(&a[k], cell, sizeof cell));
  free(a);
  return finish(f);
}

static int is_identifier(const char *s) {
  if (!s ||
      !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
    return 0;
  for (; *s; s++)
    if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
          (*s >= '0' && *s <= '9')))
      return 0;
  return 1;
}

int bench_score_write_gnuplot(const bench_score_table *t, FILE *f,
                              const char *datablock_name) {
  if (datablock_name && !is_identifier(datablock_name))
    return HERON_EINVAL;
  scratch s;
  if (scratch_new(t, &s) != 0) {
    scratch_free(&s);
    return HERON_ENOMEM;
  }
  if (datablock_name)
    fprintf(f, "$%s << EOD\n", datablock_name);
  for (int k = 0; k < t->nstrategies; k++) {
    fprintf(f, "%s# %s\n", k ? "\n\n" : "", t->strategies[k]);
    for (int i = 0; i < t->points; i++) {
      stats st = strategy_stats(t, k, i, &s);
      if (st.spaces == 0)
        break; /* no run of this strategy kept its curve */
      double half = isfinite(st.half) ? st.half : 0;
      double x = t->points == 1 ? 1.0 : (double)i / (t->points - 1);
      fprintf(f, "%.6g %.6g %.6g %.6g\n", x, st.mean, st.mean - half,
              st.mean + half);
    }
  }
  if (datablock_name)
    fprintf(f, "EOD\n");
  scratch_free(&s);
  return finish(f);
}
