/* tests/bench_tool/test_score.c - tools/bench_score.c, the methodology
 * score: the calculated random-search baseline against simulation, the
 * score's fixed points (optimum first = 1, random search = 0, worst first
 * < 0), the confidence interval, the edge cases the header documents and
 * the writers. */
#include "test.h"

#include "tools/bench_score.h"

/* splitmix64: a small, seedable generator for the simulations. */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) {
  return (double)(next_u64(s) >> 11) * (1.0 / 9007199254740992.0);
}

static size_t below(uint64_t *s, size_t n) {
  return (size_t)(uniform(s) * (double)n);
}

/* A space of n configs: objectives 1 + 2u (u uniform), a `fail` share
 * failed; costs 0.5..1.5 s, or 1 s each when `flat`. */
typedef struct space {
  size_t n;
  double *obj, *cost;
} space;

static space make_space(size_t n, double fail, int flat, uint64_t seed) {
  space s = {n, calloc(n, sizeof(double)), calloc(n, sizeof(double))};
  for (size_t i = 0; i < n; i++) {
    s.obj[i] = uniform(&seed) < fail ? NAN : 1 + 2 * uniform(&seed);
    s.cost[i] = flat ? 1.0 : 0.5 + uniform(&seed);
  }
  return s;
}

static void free_space(space *s) {
  free(s->obj);
  free(s->cost);
}

static bench_score_space view(const space *s) {
  bench_score_space v = {s->n, s->obj, s->cost};
  return v;
}

static void shuffle(size_t *idx, size_t n, uint64_t *rng) {
  for (size_t i = 0; i < n; i++)
    idx[i] = i;
  for (size_t i = n - 1; i > 0; i--) {
    size_t j = below(rng, i + 1);
    size_t t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
}

/* Scores the run that evaluates idx[0..n) of s in that order. */
static double score_order(const bench_score_baseline *b, const space *s,
                          const size_t *idx, size_t n, double *curve) {
  bench_score_space v = view(s);
  bench_score_trial *tr = calloc(n ? n : 1, sizeof *tr);
  bench_score_trace(&v, idx, n, tr);
  double score = NAN;
  heron_error err = {0};
  int rc = bench_score_run(b, tr, n, curve, &score, &err);
  free(tr);
  return rc == HERON_OK ? score : NAN;
}

static int settings_axis(bench_score_settings *st, bench_score_axis axis) {
  bench_score_settings_default(st);
  st->axis = axis;
  return 0;
}

TEST(
    closed_form_baseline_matches_a_simulation_of_random_search_without_replacement) {
  /* 500 configs, a fifth failed; 20,000 simulated searches. */
  space s = make_space(500, 0.2, 0, 11);
  bench_score_space v = view(&s);
  bench_score_baseline b;
  heron_error err = {0};
  CHECK_OK(bench_score_baseline_init(&b, &v, NULL, &err), &err);
  static const size_t ks[] = {1, 2, 3, 5, 10, 25, 60, 150, 400};
  enum { NK = sizeof ks / sizeof ks[0], RUNS = 20000 };
  double sum[NK] = {0};
  size_t *idx = calloc(s.n, sizeof *idx);
  uint64_t rng = 5;
  for (int r = 0; r < RUNS; r++) {
    shuffle(idx, s.n, &rng);
    double best = b.worst; /* nothing valid yet counts as the worst */
    int have = 0;
    size_t k = 0;
    for (int q = 0; q < NK; q++) {
      for (; k < ks[q]; k++)
        if (isfinite(s.obj[idx[k]]) && (!have || s.obj[idx[k]] < best)) {
          best = s.obj[idx[k]];
          have = 1;
        }
      sum[q] += best;
    }
  }
  for (int q = 0; q < NK; q++) {
    double sim = sum[q] / RUNS, exact = bench_score_expected_best(&b, ks[q]);
    CHECK_MSG(fabs(sim - exact) <= 0.01 * exact,
              "k=%zu simulated %.6f, "
              "closed form %.6f",
              ks[q], sim, exact);
  }
  CHECK(bench_score_expected_best(&b, 0) == b.worst);
  CHECK(bench_score_expected_best(&b, s.n) == b.optimum);
  CHECK(bench_score_expected_best(&b, 10 * s.n) == b.optimum);
  free(idx);
  bench_score_baseline_free(&b);
  free_space(&s);
}

TEST(
    closed_form_baseline_equals_the_enumeration_of_every_draw_on_a_tiny_space) {
  /* 6 configs, one failed, one tie: average the best (worst valid when
   * only the failure was drawn) over every k-subset. */
  double obj[6] = {4, NAN, 1, 3, 3, 7}, cost[6] = {1, 1, 1, 1, 1, 1};
  bench_score_space v = {6, obj, cost};
  bench_score_baseline b;
  heron_error err = {0};
  CHECK_OK(bench_score_baseline_init(&b, &v, NULL, &err), &err);
  for (size_t k = 1; k <= 6; k++) {
    double total = 0;
    int count = 0;
    for (unsigned mask = 0; mask < 64; mask++) {
      if ((size_t)__builtin_popcount(mask) != k)
        continue;
      double best = 7;
      for (int i = 0; i < 6; i++)
        if ((mask >> i & 1) && isfinite(obj[i]) && obj[i] < best)
          best = obj[i];
      total += best;
      count++;
    }
    double exact = bench_score_expected_best(&b, k);
    CHECK_MSG(fabs(exact - total / count) < 1e-12, "k=%zu: %.15g vs %.15g", k,
              exact, total / count);
  }
  bench_score_baseline_free(&b);
}

TEST(window_follows_the_cutoff_percentiles_and_the_budget_has_the_margin) {
  space s = make_space(400, 0.1, 0, 3);
  bench_score_space v = view(&s);
  bench_score_baseline b;
  heron_error err = {0};
  CHECK_OK(bench_score_baseline_init(&b, &v, NULL, &err), &err);
  double span = b.median - b.optimum;
  CHECK(fabs(b.cutoff_value - (b.optimum + 0.05 * span)) < 1e-12);
  CHECK(fabs(b.start_value - (b.optimum + 0.5 * span)) < 1e-12);
  /* The first k reaching the value, and not one before. */
  CHECK(bench_score_expected_best(&b, b.cutoff_draws) <= b.cutoff_value);
  CHECK(bench_score_expected_best(&b, b.cutoff_draws - 1) > b.cutoff_value);
  CHECK(bench_score_expected_best(&b, b.start_draws) <= b.start_value);
  CHECK(b.start_draws >= 1 && b.start_draws < b.cutoff_draws);
  /* Over time, the first second the simulated baseline reaches the value. */
  CHECK(bench_score_expected_best_at(&b, b.cutoff_seconds) <=
        b.cutoff_value + 1e-12);
  CHECK(bench_score_expected_best_at(&b, 0.999 * b.cutoff_seconds) >
        b.cutoff_value);
  CHECK(bench_score_expected_best_at(&b, b.start_seconds) <=
        b.start_value + 1e-12);
  CHECK(b.budget_draws == (size_t)ceil(b.cutoff_draws * 1.1));
  CHECK(fabs(b.budget_seconds - 1.1 * b.cutoff_seconds) < 1e-9);
  CHECK(b.points == 1000);
  CHECK(b.x[0] == b.start_seconds && b.x[999] == b.cutoff_seconds);
  for (int i = 1; i < b.points; i++)
    CHECK(b.curve[i] <= b.curve[i - 1] + 1e-12);
  bench_score_baseline_free(&b);
  free_space(&s);
}

/* A space like convolution-W6600: objectives spread over two orders of
 * magnitude (e^5u), each config costing 0.5 s plus its objective, and a
 * window of a dozen draws.  The baseline over time must be what uniform
 * random search reaches in that time; seconds mapped to draws through the
 * mean cost (the baseline before) lie above it by up to a fifth of the
 * span to the optimum here, and a simulated random search scored -1.7
 * against them. */
TEST(time_baseline_is_the_best_so_far_random_search_reaches_in_that_time) {
  space s = make_space(1000, 0, 1, 5);
  uint64_t seed = 5;
  for (size_t i = 0; i < s.n; i++) {
    s.obj[i] = exp(5 * uniform(&seed));
    s.cost[i] = 0.5 + s.obj[i];
  }
  bench_score_space v = view(&s);
  bench_score_baseline b;
  heron_error err = {0};
  CHECK_OK(bench_score_baseline_init(&b, &v, NULL, &err), &err);
  CHECK(b.cutoff_draws < 20);
  /* Independent searches (this file's generator), their mean best-so-far
   * at 11 points of the window and its standard error. */
  enum { RUNS = 3000, PTS = 11 };
  double x[PTS], sum[PTS] = {0}, sum2[PTS] = {0};
  for (int q = 0; q < PTS; q++)
    x[q] = b.start_seconds + (b.cutoff_seconds - b.start_seconds) * q / 10;
  size_t *idx = calloc(s.n, sizeof *idx);
  for (uint64_t r = 1; r <= RUNS; r++) {
    uint64_t rng = r * 104729;
    shuffle(idx, s.n, &rng);
    double t = 0, best = b.worst;
    int q = 0;
    for (size_t k = 0; k < s.n && q < PTS; k++) {
      t += s.cost[idx[k]];
      for (; q < PTS && x[q] < t; q++) {
        sum[q] += best;
        sum2[q] += best * best;
      }
      if (s.obj[idx[k]] < best)
        best = s.obj[idx[k]];
    }
    for (; q < PTS; q++) {
      sum[q] += best;
      sum2[q] += best * best;
    }
  }
  for (int q = 0; q < PTS; q++) {
    double mean = sum[q] / RUNS;
    double se = sqrt(fmax(sum2[q] / RUNS - mean * mean, 0) / RUNS);
    double at = bench_score_expected_best_at(&b, x[q]);
    CHECK_MSG(fabs(at - mean) <= 4 * se + 1e-3 * (b.worst - b.optimum),
              "at %.2f s: baseline %.4f, simulated %.4f +- %.4f", x[q], at,
              mean, se);
  }
  free(idx);
  bench_score_baseline_free(&b);
  free_space(&s);
}

/* The optimum first, then the rest worst first: 1 over the whole window. */
static void check_optimum_first(bench_score_axis axis) {
  space s = make_space(300, 0.15, 0, 21);
  size_t opt = 0;
  for (size_t i = 0; i < s.n; i++)
    if (isfinite(s.obj[i]) && (!isfinite(s.obj[opt]) || s.obj[i] < s.obj[opt]))
      opt = i;
  s.cost[opt] = 0.5; /* known before the window opens at >= 1 draw */
  bench_score_space v = view(&s);
  bench_score_settings st;
  settings_axis(&st, axis);
  bench_score_baseline b;
  heron_error err = {0};
  CHECK_OK(bench_score_baseline_init(&b, &v, &st, &err), &err);
  size_t *idx = calloc(s.n, sizeof *idx);
  idx[0] = opt;
  for (size_t i = 0, m = 1; i < s.n; i++)
    if (i != opt)
      idx[m++] = i;
  double *curve = calloc((size_t)b.points, sizeof *curve);
  double score = score_order(&b, &s, idx, s.n, curve);
  CHECK_MSG(fabs(score - 1) < 1e-9, "score %.12f", score);
  for (int i = 0; i < b.points; i++)
    CHECK(fabs(curve[i] - 1) < 1e-9);
  /* Stopping right after the optimum holds it to the end. */
  CHECK(fabs(score_order(&b, &s, idx, 1, NULL) - 1) < 1e-9);
  free(curve);
  free(idx);
  bench_score_baseline_free(&b);
  free_space(&s);
}

TEST(strategy_proposing_the_optimum_first_scores_one_over_time) {
  check_optimum_first(BENCH_SCORE_AXIS_TIME);
}

TEST(strategy_proposing_the_optimum_first_scores_one_over_draws) {
  check_optimum_first(BENCH_SCORE_AXIS_DRAWS);
}

/* Mean score of `seeds` random searches over two spaces. */
static void check_random_is_zero(bench_score_axis axis) {
  bench_score_settings st;
  settings_axis(&st, axis);
  double total = 0;
  int runs = 0;
  for (int sp = 0; sp < 2; sp++) {
    space s = make_space(sp ? 1000 : 300, sp ? 0.3 : 0.05, 0, 100 + sp);
    bench_score_space v = view(&s);
    bench_score_baseline b;
    heron_error err = {0};
    CHECK_OK(bench_score_baseline_init(&b, &v, &st, &err), &err);
    size_t *idx = calloc(s.n, sizeof *idx);
    for (uint64_t seed = 1; seed <= 200; seed++) {
      uint64_t rng = seed * 7919;
      shuffle(idx, s.n, &rng);
      double score = score_order(&b, &s, idx, s.n, NULL);
      CHECK(isfinite(score));
      total += score;
      runs++;
    }
    free(idx);
    bench_score_baseline_free(&b);
    free_space(&s);
  }
  double mean = total / runs;
  printf("random search: mean score %.4f over %d runs\n", mean, runs);
  CHECK_MSG(fabs(mean) <= 0.05, "mean score %.4f", mean);
}

TEST(simulated_random_search_scores_about_zero_over_time) {
  check_random_is_zero(BENCH_SCORE_AXIS_TIME);
}

TEST(simulated_random_search_scores_about_zero_over_draws) {
  check_random_is_zero(BENCH_SCORE_AXIS_DRAWS);
}

static int by_objective_desc(const void *a, const void *b, void *ctx) {
  const double *o = ctx;
  double x = o[*(const size_t *)a], y = o[*(const size_t *)b];
  /* Failures last, then the worst first. */
  int fx = !isfinite(x), fy = !isfinite(y);
  if (fx || fy)
    return fx - fy;
  return (x < y) - (x > y);
}

TEST(strategy_proposing_the_worst_configs_scores_negative) {
  space s = make_space(300, 0.1, 0, 33);
  bench_score_space v = view(&s);
  bench_score_baseline b;
  heron_error err = {0};
  CHECK_OK(bench_score_baseline_init(&b, &v, NULL, &err), &err);
  size_t *idx = calloc(s.n, sizeof *idx);
  for (size_t i = 0; i < s.n; i++)
    idx[i] = i;
  qsort_r(idx, s.n, sizeof *idx, by_objective_desc, s.obj);
  double score = score_order(&b, &s, idx, s.n, NULL);
  printf("worst first: score %.4f\n", score);
  CHECK(score < -0.5);
  free(idx);
  bench_score_baseline_free(&b);
  free_space(&s);
}

TEST(student_t_quantiles_match_the_tables) {
  CHECK(fabs(bench_score_t975(1) - 12.7062) < 1e-3);
  CHECK(fabs(bench_score_t975(2) - 4.3027) < 1e-3);
  CHECK(fabs(bench_score_t975(4) - 2.7764) < 1e-3);
  CHECK(fabs(bench_score_t975(10) - 2.2281) < 1e-3);
  CHECK(fabs(bench_score_t975(30) - 2.0423) < 1e-3);
  CHECK(fabs(bench_score_t975(1e9) - 1.9600) < 1e-3);
  /* A real df (Welch): 2.65891, checked by integrating the density. */
  CHECK(fabs(bench_score_t975(4.5) - 2.65891) < 1e-4);
  CHECK(isnan(bench_score_t975(0)));
}

/* Aggregate of `per_space` random runs on each of three spaces. */
static bench_score_agg random_aggregate(int per_space) {
  bench_score_agg a = {0};
  a.half_width = NAN;
  bench_score_table *t = bench_score_table_new(1000);
  for (int sp = 0; sp < 3; sp++) {
    space s = make_space(200, 0.1, 0, 40 + sp);
    bench_score_space v = view(&s);
    bench_score_baseline b;
    heron_error err = {0};
    if (bench_score_baseline_init(&b, &v, NULL, &err) != HERON_OK)
      break;
    size_t *idx = calloc(s.n, sizeof *idx);
    for (int seed = 1; seed <= per_space; seed++) {
      uint64_t rng = (uint64_t)seed * 104729 + (uint64_t)sp;
      shuffle(idx, s.n, &rng);
      double score = score_order(&b, &s, idx, s.n, NULL);
      char name[32];
      snprintf(name, sizeof name, "space%d", sp);
      bench_score_table_add(t, name, "random", seed, score, NULL, &err);
    }
    free(idx);
    bench_score_baseline_free(&b);
    free_space(&s);
  }
  bench_score_table_aggregates(t, &a, 1);
  bench_score_table_free(t);
  return a;
}

TEST(confidence_interval_shrinks_with_more_runs) {
  bench_score_agg few = random_aggregate(5), many = random_aggregate(80);
  printf("5 seeds: %.4f +- %.4f (df %.1f); 80 seeds: %.4f +- %.4f (df %.1f)\n",
         few.score, few.half_width, few.df, many.score, many.half_width,
         many.df);
  CHECK(few.runs == 15 && few.spaces == 3 && many.runs == 240);
  CHECK(isfinite(few.half_width) && isfinite(many.half_width));
  CHECK(many.half_width < 0.5 * few.half_width);
  CHECK(many.lo < many.score && many.score < many.hi);
  CHECK(many.lo <= 0 + 0.05 && many.hi >= 0 - 0.05);
}

TEST(aggregate_is_the_mean_over_spaces_with_stratified_interval) {
  /* Space a: runs 0.2, 0.4 (var 0.02); space b: 0.6, 0.8, 1.0 (var 0.04).
   * Mean over spaces (0.3 + 0.8) / 2 = 0.55, not the run mean 0.6.
   * se^2 = (0.02/2 + 0.04/3) / 4; Welch df = (0.01 + 0.01333)^2 /
   * (0.01^2/1 + 0.01333^2/2). */
  bench_score_table *t = bench_score_table_new(1);
  heron_error err = {0};
  static const double a[] = {0.2, 0.4}, b[] = {0.6, 0.8, 1.0};
  for (int i = 0; i < 2; i++)
    CHECK_OK(bench_score_table_add(t, "a", "s", i, a[i], NULL, &err), &err);
  for (int i = 0; i < 3; i++)
    CHECK_OK(bench_score_table_add(t, "b", "s", i, b[i], NULL, &err), &err);
  bench_score_agg g;
  CHECK(bench_score_table_aggregates(t, &g, 1) == 1);
  double t1 = 0.02 / 2, t2 = 0.04 / 3;
  double df = (t1 + t2) * (t1 + t2) / (t1 * t1 / 1 + t2 * t2 / 2);
  CHECK(fabs(g.score - 0.55) < 1e-12);
  CHECK(fabs(g.df - df) < 1e-9);
  CHECK(fabs(g.half_width - bench_score_t975(df) * sqrt(t1 + t2) / 2) < 1e-9);
  /* One run per space: the plain sample interval over runs. */
  bench_score_table *u = bench_score_table_new(1);
  CHECK_OK(bench_score_table_add(u, "a", "s", 1, 0.1, NULL, &err), &err);
  CHECK_OK(bench_score_table_add(u, "b", "s", 1, 0.3, NULL, &err), &err);
  CHECK(bench_score_table_aggregates(u, &g, 1) == 1);
  CHECK(fabs(g.score - 0.2) < 1e-12 && g.df == 1);
  CHECK(fabs(g.half_width - 12.7062 * sqrt(0.02 / 2)) < 1e-3);
  /* A single run: no interval. */
  bench_score_table *w = bench_score_table_new(1);
  CHECK_OK(bench_score_table_add(w, "a", "s", 1, 0.1, NULL, &err), &err);
  CHECK(bench_score_table_aggregates(w, &g, 1) == 1);
  CHECK(g.score == 0.1 && isnan(g.half_width));
  char cell[64];
  CHECK(!strcmp(bench_score_format(&g, cell, sizeof cell), "0.100 \u00b1 n/a"));
  CHECK(bench_score_table_add(w, "a", "s", 2, NAN, NULL, &err) == HERON_EINVAL);
  bench_score_table_free(t);
  bench_score_table_free(u);
  bench_score_table_free(w);
}

TEST(space_of_one_config_scores_zero) {
  double obj[1] = {2.5}, cost[1] = {1};
  bench_score_space v = {1, obj, cost};
  bench_score_baseline b;
  heron_error err = {0};
  CHECK_OK(bench_score_baseline_init(&b, &v, NULL, &err), &err);
  CHECK(b.cutoff_draws == 1 && b.start_draws == 1 && b.budget_draws == 1);
  bench_score_trial tr = {1, 2.5};
  double score = NAN;
  CHECK_OK(bench_score_run(&b, &tr, 1, NULL, &score, &err), &err);
  CHECK(score == 0);
  CHECK_OK(bench_score_run(&b, &tr, 0, NULL, &score, &err), &err);
  CHECK(score == 0);
  bench_score_baseline_free(&b);
}

TEST(space_of_equal_objectives_scores_zero_for_every_run) {
  space s = make_space(50, 0.2, 1, 9);
  for (size_t i = 0; i < s.n; i++)
    if (isfinite(s.obj[i]))
      s.obj[i] = 2.0;
  bench_score_space v = view(&s);
  bench_score_baseline b;
  heron_error err = {0};
  CHECK_OK(bench_score_baseline_init(&b, &v, NULL, &err), &err);
  size_t *idx = calloc(s.n, sizeof *idx);
  uint64_t rng = 1;
  shuffle(idx, s.n, &rng);
  CHECK(score_order(&b, &s, idx, s.n, NULL) == 0);
  CHECK(score_order(&b, &s, idx, 0, NULL) == 0);
  free(idx);
  bench_score_baseline_free(&b);
  free_space(&s);
}

TEST(run_of_failures_only_scores_like_a_run_that_found_nothing) {
  space s = make_space(300, 0.3, 0, 17);
  bench_score_space v = view(&s);
  bench_score_baseline b;
  heron_error err = {0};
  CHECK_OK(bench_score_baseline_init(&b, &v, NULL, &err), &err);
  size_t *idx = calloc(s.n, sizeof *idx);
  size_t nf = 0;
  for (size_t i = 0; i < s.n; i++)
    if (!isfinite(s.obj[i]))
      idx[nf++] = i;
  double fails = score_order(&b, &s, idx, nf, NULL);
  double nothing = score_order(&b, &s, idx, 0, NULL);
  printf("failures only: %.4f\n", fails);
  CHECK(isfinite(fails) && fails < 0);
  CHECK(fails == nothing);
  free(idx);
  bench_score_baseline_free(&b);
  free_space(&s);
}

TEST(run_shorter_than_the_budget_holds_its_best_so_far) {
  bench_score_settings st;
  settings_axis(&st, BENCH_SCORE_AXIS_DRAWS);
  space s = make_space(300, 0.1, 1, 55);
  bench_score_space v = view(&s);
  bench_score_baseline b;
  heron_error err = {0};
  CHECK_OK(bench_score_baseline_init(&b, &v, &st, &err), &err);
  size_t *idx = calloc(s.n, sizeof *idx);
  uint64_t rng = 3;
  shuffle(idx, s.n, &rng);
  /* The same 3 trials, then failures to the end of the space: equal. */
  size_t n = 3;
  bench_score_trial *tr = calloc(s.n, sizeof *tr);
  bench_score_trace(&v, idx, n, tr);
  double *c1 = calloc((size_t)b.points, sizeof *c1);
  double *c2 = calloc((size_t)b.points, sizeof *c2);
  double short_score, long_score;
  CHECK_OK(bench_score_run(&b, tr, n, c1, &short_score, &err), &err);
  for (size_t i = n; i < s.n; i++)
    tr[i] = (bench_score_trial){tr[n - 1].x + (double)(i - n + 1), NAN};
  CHECK_OK(bench_score_run(&b, tr, s.n, c2, &long_score, &err), &err);
  CHECK(short_score == long_score);
  for (int i = 0; i < b.points; i++)
    CHECK(c1[i] == c2[i]);
  CHECK(b.cutoff_draws > n);
  free(c1);
  free(c2);
  free(tr);
  free(idx);
  bench_score_baseline_free(&b);
  free_space(&s);
}

TEST(rejects_spaces_without_valid_configs_bad_costs_and_backward_time) {
  double obj[3] = {NAN, NAN, NAN}, cost[3] = {1, 1, 1};
  bench_score_space v = {3, obj, cost};
  bench_score_baseline b;
  heron_error err = {0};
  CHECK(bench_score_baseline_init(&b, &v, NULL, &err) == HERON_EUNSAT);
  CHECK_STR_CONTAINS(err.text, "none of the 3");
  bench_score_baseline_free(&b); /* an empty baseline frees */
  obj[0] = 1;
  cost[1] = -1;
  heron_error_clear(&err);
  CHECK(bench_score_baseline_init(&b, &v, NULL, &err) == HERON_EINVAL);
  cost[1] = 0;
  cost[0] = cost[2] = 0;
  heron_error_clear(&err);
  CHECK(bench_score_baseline_init(&b, &v, NULL, &err) == HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "costs 0 s");
  cost[0] = cost[1] = cost[2] = 1;
  obj[1] = 2;
  heron_error_clear(&err);
  CHECK_OK(bench_score_baseline_init(&b, &v, NULL, &err), &err);
  bench_score_trial tr[2] = {{2, 1}, {1, 2}};
  double score;
  CHECK(bench_score_run(&b, tr, 2, NULL, &score, &err) == HERON_EINVAL);
  bench_score_baseline_free(&b);
  bench_score_settings st;
  bench_score_settings_default(&st);
  st.cutoff_percentile = 1.5;
  heron_error_clear(&err);
  CHECK(bench_score_baseline_init(&b, &v, &st, &err) == HERON_EINVAL);
}

/* The whole of a tmpfile as a string (caller frees). */
static char *slurp(FILE *f) {
  long n = ftell(f);
  rewind(f);
  char *s = calloc((size_t)n + 1, 1);
  if (fread(s, 1, (size_t)n, f) != (size_t)n)
    s[0] = '\0';
  fclose(f);
  return s;
}

TEST(writers_give_csv_markdown_and_gnuplot_blocks) {
  bench_score_table *t = bench_score_table_new(3);
  heron_error err = {0};
  const double c1[3] = {0, 0.5, 1}, c2[3] = {0.2, 0.5, 0.8};
  CHECK_OK(bench_score_table_add(t, "GEMM", "random", 1, 0.5, c1, &err), &err);
  CHECK_OK(bench_score_table_add(t, "GEMM", "random", 2, 0.5, c2, &err), &err);
  CHECK_OK(bench_score_table_add(t, "GEMM", "genetic+xgb", 1, 0.9, NULL, &err),
           &err);
  FILE *f = tmpfile();
  CHECK_OK(bench_score_write_runs_csv(t, f), NULL);
  char *s = slurp(f);
  CHECK(!strcmp(s, "space,strategy,seed,score\nGEMM,random,1,0.5\n"
                   "GEMM,random,2,0.5\nGEMM,genetic+xgb,1,0.9\n"));
  free(s);
  f = tmpfile();
  CHECK_OK(bench_score_write_aggregates_csv(t, f), NULL);
  s = slurp(f);
  CHECK_STR_CONTAINS(s, "strategy,runs,spaces,score,ci_low,ci_high,"
                        "half_width,df\nrandom,2,1,0.5,0.5,0.5,0,1\n");
  CHECK_STR_CONTAINS(s, "genetic+xgb,1,1,0.9,nan,nan,nan,nan\n");
  free(s);
  f = tmpfile();
  CHECK_OK(bench_score_write_markdown(t, f), NULL);
  s = slurp(f);
  CHECK(!strcmp(s, "| strategy | runs | spaces | score |\n"
                   "| --- | ---: | ---: | ---: |\n"
                   "| random | 2 | 1 | 0.500 \u00b1 0.000 |\n"
                   "| genetic+xgb | 1 | 1 | 0.900 \u00b1 n/a |\n"));
  free(s);
  f = tmpfile();
  CHECK_OK(bench_score_write_gnuplot(t, f, "score"), NULL);
  s = slurp(f);
  /* Pointwise mean of the two curves; x the normalised budget; the
   * strategy without curves has an empty block. */
  CHECK_STR_CONTAINS(s, "$score << EOD\n# random\n0 0.1 ");
  CHECK_STR_CONTAINS(s, "\n0.5 0.5 0.5 0.5\n1 0.9 ");
  CHECK_STR_CONTAINS(s, "\n\n\n# genetic+xgb\nEOD\n");
  free(s);
  CHECK(bench_score_write_gnuplot(t, stdout, "not a name") == HERON_EINVAL);
  bench_score_table_free(t);
}
