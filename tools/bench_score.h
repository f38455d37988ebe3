/* tools/bench_score.h - the score of "A methodology for comparing
 * optimization algorithms for auto-tuning" (Willemsen, van Nieuwpoort, van
 * Werkhoven; Future Generation Computer Systems 2024,
 * doi 10.1016/j.future.2024.05.021) for heron-bench.
 *
 * What the score says.  On a search space whose every configuration was
 * measured once (the "full space", brute forced), random search without
 * replacement has an expected best-so-far curve that can be calculated
 * exactly.  A run of a strategy is scored by how far its own best-so-far
 * curve lies between that random-search curve and the optimum of the space,
 * over a budget window fixed by the space alone:
 *
 *     s(x) = (baseline(x) - run(x)) / (baseline(x) - optimum)
 *
 * so 0 is "as good as random search", 1 is "had the optimum all along",
 * and a run worse than random search scores below 0.  A run's score is the
 * mean of s over the window; a strategy's score is the mean over its runs.
 *
 * Sources.  The definitions follow the methodology's reference code,
 * github.com/AutoTuningAssociation/autotuning_methodology (package
 * src/autotuning_methodology/), as cited at each item below.  Facts were
 * taken from it, no code.  Where this module departs from it, it says so
 * and why ("CHOSEN").
 *
 *  - Minimisation: the objective is a time, lower is better
 *    (experiments_defaults.json, statistics_settings.minimization = true).
 *  - Optimum: the lowest valid objective of the full space
 *    (searchspace_statistics.py, total_performance_absolute_optimum).
 *  - Baseline: "RandomSearchCalculatedBaseline" (baseline.py).  The
 *    reference code does not use the expected best value: it takes the
 *    value at the expected rank of the best of M draws from N,
 *    round(M (N + 1) / (M + 1)) (baseline.py, _redwhite_index; the paper's
 *    eq. 6 per a comment in searchspace_statistics.py, cutoff_point).
 *    CHOSEN: this module uses the exact expected best-so-far value after k
 *    draws without replacement (bench_score_expected_best), so that a
 *    simulated random-search run scores 0 in expectation; the rank
 *    formula only approximates that and is biased on skewed spaces.
 *    The random search this baseline stands for draws the space's N
 *    configs uniformly without replacement: that is the `random` strategy
 *    under the uniform sampler (--sampler uniform, HERON_SAMPLER_UNIFORM in
 *    heron/space.h: every valid config equally likely, and the engine never
 *    measures a key twice).  The default sampler (heron) is not uniform,
 *    so `random` with it need not score 0.
 *  - Failures: the reference code drops invalid configurations from the
 *    baseline by default (include_nan=False) but counts them with their
 *    time in the time per evaluation (total_time_mean_per_feval).  CHOSEN:
 *    here a failed configuration is drawn like any other (it is one of the
 *    N), costs its seconds and yields no objective, which is what a random
 *    search over the space really meets.
 *  - Nothing valid yet: before a run (or a random draw) has met a valid
 *    configuration its best-so-far is undefined; the reference code leaves
 *    NaN there.  CHOSEN: it counts as the worst valid objective of the
 *    space, in the baseline and in runs alike.  So a run of failures only
 *    has a defined score (negative once the baseline has improved).
 *  - Time axis: the reference code's aggregate score is taken over time
 *    (report_experiments.py, get_strategies_aggregated_performance calls
 *    get_curve_over_time), and it maps seconds to draws with one mean time
 *    per evaluation (baseline.py, time_to_fevals, rounding).  CHOSEN: the
 *    baseline over time is the expected best-so-far at each second of
 *    uniform random search without replacement itself, its trials taking
 *    their own costs, as heron-bench's runs do: by simulation, 4,000
 *    searches with a fixed seed (bench_score_expected_best_at), not a
 *    formula.  Mapping seconds to draws through the mean cost is not that
 *    expectation when costs vary and go with the objective: the draws done
 *    by a time are a random number, the expected best is convex in it, and
 *    slow configs hold a run up.  On convolution-W6600 (a window of 3 to
 *    12 mean costs, costs 0.9 to 17 s) a simulated uniform random search
 *    scored -0.68 on average against the mapping, where it must score 0;
 *    against the simulation it scores 0 within the simulation's error on
 *    every shipped space.  A draws axis (the reference code's "fevals")
 *    is offered too, with the exact baseline.
 *  - Cutoff: the objective value to reach is
 *    optimum + (median - optimum) * (1 - cutoff_percentile) with the median
 *    of the valid objectives (searchspace_statistics.py,
 *    objective_performance_at_cutoff_point); defaults cutoff_percentile
 *    0.95 and cutoff_percentile_start 0.5 (experiments_defaults.json).  The
 *    budget is the number of draws at which the random-search baseline
 *    first reaches that value: the reference code inverts its rank formula
 *    (ceil(i / (N + 1 - i)), searchspace_statistics.py, cutoff_point);
 *    CHOSEN: here it is the first k whose expected best is at or below the
 *    value, the same rule applied to this module's baseline, and on the
 *    time axis the first second at which the simulated baseline is (the
 *    reference code turns draws into seconds with the median time per
 *    configuration, cutoff_point_fevals_time).
 *  - Run budget: the strategies get 10% more than the cutoff
 *    (experiments.py, calculate_budget, cutoff_margin 0.1: max_fevals =
 *    min(ceil(draws * 1.1), N), time limit = seconds * 1.1); the scoring
 *    window itself has no margin (report_experiments.py,
 *    get_aggregation_data: time_range = linspace(start, cutoff,
 *    resolution)).
 *  - Points: 1000 equally spaced points over [start, cutoff]
 *    (experiments_defaults.json, visualization_settings.resolution).
 *  - Runs shorter than the window hold their last best-so-far (curves.py,
 *    get_curve_over_fevals: "take the last non-NaN value and overwrite the
 *    curves up to the target index").
 *  - Aggregate: the reference code standardises the median curve over
 *    repeats, averages the standardised curves over search spaces with
 *    equal weight, and reports the mean over time as "score" and the
 *    standard deviation over time as "error" (report_experiments.py,
 *    get_strategy_scores).  CHOSEN: every run is standardised and scored on
 *    its own; a strategy's score is the mean over spaces (equal weight, as
 *    there) of the mean over its runs in that space, and its 95%
 *    confidence interval is Student's t on that stratified mean: the
 *    standard error is sqrt(sum_s var_s / n_s) / S and the degrees of
 *    freedom Welch-Satterthwaite's.  A space with one run borrows the
 *    pooled within-space variance of the others; with one run per space
 *    everywhere, the runs' plain sample variance is used (df = runs - 1);
 *    with a single run the half-width is NaN.  The variance is over seeds:
 *    the set of spaces is fixed, the seeds are the sample.
 *  - Degenerate points: where the baseline already stands at the optimum
 *    (all valid objectives equal, a space of one configuration), s is 0/0;
 *    CHOSEN: such a point counts as 0 - no strategy can beat random search
 *    there, and none can lose to it.
 *  - No clamping: a run that reports a value below the space's optimum
 *    (a re-measurement) scores above 1 there, as in the reference code.
 *
 * Usage (the integrator's order):
 *
 *     bench_score_space sp = {n, objective, cost};   // one per task
 *     bench_score_settings st;
 *     bench_score_settings_default(&st);
 *     bench_score_baseline b;
 *     bench_score_baseline_init(&b, &sp, &st, &err);  // window, budget
 *     bench_score_table *t = bench_score_table_new(st.points);
 *     for each run:  // trials in order: seconds since start, objective/NaN
 *       bench_score_run(&b, trials, ntrials, curve, &score, &err);
 *       bench_score_table_add(t, task, strategy, seed, score, curve, &err);
 *     bench_score_baseline_free(&b);
 *     bench_score_write_runs_csv(t, f); ..._aggregates_csv(t, f);
 *     bench_score_write_markdown(t, f); bench_score_write_gnuplot(t, f, 0);
 *     bench_score_table_free(t);
 *
 * Errors: functions that can fail return HERON_OK or a negative heron_status
 * (heron/status.h) and put the detail in the caller's heron_error (NULL
 * accepted).  Nothing here keeps global state; every object is the
 * caller's to free with the matching _free.
 */
#ifndef HERON_TOOLS_BENCH_SCORE_H
#define HERON_TOOLS_BENCH_SCORE_H

#include <stddef.h>
#include <stdio.h>

#include "heron/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The full space of one task: every configuration, measured once.
 * objective[i] is config i's objective (seconds, lower is better), NaN (or
 * any non-finite value) when it failed; cost[i] is what evaluating it took
 * in seconds - compile, framework and the runs, failures included - finite
 * and >= 0.  Both arrays hold n values and stay the caller's; the baseline
 * copies what it needs. */
typedef struct bench_score_space {
  size_t n;
  const double *objective;
  const double *cost;
} bench_score_space;

/* The x axis runs are scored over. */
typedef enum bench_score_axis {
  /* Simulated seconds since the run started (the reference's default for
   * the aggregate score).  A trial's x is the cumulative cost when its
   * result is known. */
  BENCH_SCORE_AXIS_TIME = 0,
  /* Number of configurations evaluated ("fevals"); a trial's x is ignored
   * and its position (1-based) counts. */
  BENCH_SCORE_AXIS_DRAWS = 1
} bench_score_axis;

/* Settings; bench_score_settings_default gives the methodology's. */
typedef struct bench_score_settings {
  double cutoff_percentile;       /* 0.95; in (0, 1] */
  double cutoff_percentile_start; /* 0.5; in [0, cutoff_percentile] */
  double cutoff_margin;           /* 0.1: run budget = cutoff * (1 + it) */
  int points;                     /* 1000 points over the window; >= 1 */
  bench_score_axis axis;          /* BENCH_SCORE_AXIS_TIME */
} bench_score_settings;

void bench_score_settings_default(bench_score_settings *st);

/* The calculated random-search baseline of one space and its window.  Filled
 * by bench_score_baseline_init; the members are read-only for the caller.
 * Owns `sorted`, `x` and `curve`. */
typedef struct bench_score_baseline {
  bench_score_settings settings;
  size_t n;         /* configurations, failed included: the N of draws */
  size_t valid;     /* configurations with an objective */
  double *sorted;   /* [valid] the valid objectives, ascending */
  double optimum;   /* sorted[0] */
  double worst;     /* sorted[valid - 1]: best-so-far before any valid */
  double median;    /* median of the valid objectives */
  double mean_cost; /* seconds per draw: the mean of all n costs */
  double cutoff_value, start_value; /* objective the baseline must reach */
  size_t cutoff_draws, start_draws; /* first k with E[best_k] <= value */
  /* The first seconds at which the time axis's baseline is at or below
   * the values (0 when every config costs 0 s). */
  double cutoff_seconds, start_seconds;
  size_t budget_draws;   /* min(ceil(cutoff_draws * (1 + margin)), n) */
  double budget_seconds; /* cutoff_seconds * (1 + margin) */
  int points;            /* settings.points */
  double *x;             /* [points] the window's points on the axis */
  double *curve;         /* [points] the baseline at x */
  /* The time axis's baseline: the mean best-so-far of sim_runs simulated
   * uniform random searches at 0, time_step, ..., (time_points - 1) *
   * time_step seconds; NULL when every config costs 0 s. */
  int sim_runs, time_points;
  double time_step;
  double *time_curve;
} bench_score_baseline;

/* Builds the baseline of `sp` under `st` (NULL: the defaults) into `b`.
 * Copies and sorts the valid objectives and simulates the time axis's
 * baseline (4,000 searches up to past the cutoff: a fraction of a second on
 * the shipped spaces); O(points * valid) at worst for the rest.
 * Returns HERON_OK; HERON_EINVAL (n == 0, a cost negative or not finite,
 * settings out of range), HERON_EUNSAT (no valid configuration: nothing to
 * score against) or HERON_ENOMEM, leaving `b` empty (safe to free). */
int bench_score_baseline_init(bench_score_baseline *b,
                              const bench_score_space *sp,
                              const bench_score_settings *st, heron_error *err);

/* Frees what init allocated; zeroes `b`.  NULL and an empty b are fine. */
void bench_score_baseline_free(bench_score_baseline *b);

/* Expected best-so-far objective of random search without replacement
 * after k draws, k = 0..n (k > n is taken as n).  With the valid values
 * ascending v_1..v_V among N configurations,
 *
 *     E[best_k] = v_1 + sum_{j=2..V} (v_j - v_{j-1}) * S_j(k),
 *     S_j(k) = P(none of the j-1 best drawn) = C(N-j+1, k) / C(N, k)
 *            = prod_{i=0..j-2} (N - k - i) / (N - i),
 *
 * the tail sum of P(best >= v_j), with "nothing valid drawn" counted as
 * v_V.  Equivalently P(best is v_j) = C(N-j, k-1) / C(N, k).  The product is
 * of factors in [0, 1], so it cannot overflow, and it stops once it falls
 * below 1e-18.  k = 0 gives v_V. */
double bench_score_expected_best(const bench_score_baseline *b, size_t k);

/* Expected best-so-far objective of uniform random search without
 * replacement `seconds` into the search, each config taking its cost (the
 * worst valid objective before any result): the simulated curve, linear
 * between its points, and its last value past them.  The worst when
 * every config costs 0 s. */
double bench_score_expected_best_at(const bench_score_baseline *b,
                                    double seconds);

/* One evaluation of a run, in the order the run made them. */
typedef struct bench_score_trial {
  double x;         /* time axis: seconds since the start when the result
                     * was known, non-decreasing; draws axis: ignored */
  double objective; /* NaN (non-finite) when the config failed */
} bench_score_trial;

/* Simulated trace of a run that evaluated configs idx[0..n) of `sp` in that
 * order: out[i].x = cost[idx[0]] + ... + cost[idx[i]], out[i].objective =
 * objective[idx[i]].  out has room for n; every idx < sp->n. */
void bench_score_trace(const bench_score_space *sp, const size_t *idx, size_t n,
                       bench_score_trial *out);

/* Scores one run against `b`: its best-so-far at each of b->x (trials with
 * x at or before the point, or the first floor(point) trials on the draws
 * axis; the worst valid objective before any valid trial; the last best
 * held past the run's end), standardised against b->curve.  Writes the
 * standardised curve to curve[b->points] when curve is not NULL, and its
 * mean to *score.  n may be 0 (a run with nothing: it stays at the worst).
 * Returns HERON_OK or HERON_EINVAL (time axis: x not finite or
 * decreasing). */
int bench_score_run(const bench_score_baseline *b,
                    const bench_score_trial *trials, size_t n, double *curve,
                    double *score, heron_error *err);

/* Collects scored runs for the aggregates and the writers.  Opaque; every
 * name is copied. */
typedef struct bench_score_table bench_score_table;

/* A table for runs whose curves have `points` values (the baseline's
 * points); NULL when points < 1 or out of memory. */
bench_score_table *bench_score_table_new(int points);
void bench_score_table_free(bench_score_table *t);

/* Adds the run of `strategy` with `seed` on space `space`.  curve is the
 * run's standardised curve from bench_score_run (points values, copied),
 * or NULL to leave the run out of the curve means.  Returns HERON_OK,
 * HERON_EINVAL (a NULL name, score not finite) or HERON_ENOMEM. */
int bench_score_table_add(bench_score_table *t, const char *space,
                          const char *strategy, long long seed, double score,
                          const double *curve, heron_error *err);

/* One strategy's aggregate over spaces and seeds. */
typedef struct bench_score_agg {
  const char *strategy; /* owned by the table */
  int runs, spaces;
  double score;      /* mean over spaces of the mean over runs */
  double half_width; /* 95% CI half-width; NaN when it cannot be known */
  double lo, hi;     /* score -/+ half_width */
  double df;         /* the t distribution's degrees of freedom */
} bench_score_agg;

/* Strategies in the order they were first added: fills out[0..cap) and
 * returns how many there are (call with cap 0 to size the buffer), or -1
 * when out of memory. */
int bench_score_table_aggregates(const bench_score_table *t,
                                 bench_score_agg *out, int cap);

/* The two-sided 95% quantile of Student's t with df degrees of freedom
 * (df > 0, real; 12.706 for 1, 1.960 as df grows); NaN for df <= 0. */
double bench_score_t975(double df);

/* "0.512 ± 0.034" (or "0.512 ± n/a") into buf[cap]; returns buf. */
const char *bench_score_format(const bench_score_agg *a, char *buf, size_t cap);

/* Writers; each returns HERON_OK or HERON_EIO (a write failed).
 *
 * runs CSV:       space,strategy,seed,score            one row per run
 * aggregates CSV: strategy,runs,spaces,score,ci_low,ci_high,half_width,df
 * markdown:       "| strategy | runs | spaces | score |" and a row per
 *                 strategy, score as bench_score_format; a fragment for
 *                 summary.md, no heading.
 * gnuplot:        per strategy a block "# <strategy>" then rows
 *                 "x mean lo hi": x the normalised budget 0..1 over the
 *                 window, mean the aggregated standardised curve (same
 *                 weighting as the score), lo/hi its pointwise 95% CI
 *                 (mean where unknown); blocks separated by two blank
 *                 lines (gnuplot's `index`), as heron-bench's plot data.
 *                 With datablock_name (an identifier) it is wrapped as
 *                 "$name << EOD ... EOD" to inline in a script.
 * Names are written as given; heron-bench's names follow CLI_NAME_RULE, so
 * they need no CSV quoting. */
int bench_score_write_runs_csv(const bench_score_table *t, FILE *f);
int bench_score_write_aggregates_csv(const bench_score_table *t, FILE *f);
int bench_score_write_markdown(const bench_score_table *t, FILE *f);
int bench_score_write_gnuplot(const bench_score_table *t, FILE *f,
                              const char *datablock_name);

#ifdef __cplusplus
}
#endif
#endif /* HERON_TOOLS_BENCH_SCORE_H */
