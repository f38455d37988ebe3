/* tests/space/test_uniform.c - the uniform sampler (HERON_SAMPLER_UNIFORM,
 * core/space/uniform.c) against enumeration.
 *
 * Each space is enumerated by the solver's exact walk (heron__enumerate,
 * which shares no code with the uniform sampler's counts), then sampled
 * with a fixed seed, and a chi-square test compares the draws with the
 * uniform distribution over the enumerated configs: over whole configs
 * when there are few enough for every one to be expected 10 times, else
 * per knob (each knob's value shares against the enumeration's, the family
 * held at 1% by Bonferroni).  The test passes when p >= 0.01.  The same
 * test fails for the default sampler (heron) on dedispersion: that is the
 * bias the uniform mode exists to remove.
 *
 * Spaces: the two T1 spaces of the benchmark hub (configs/suites/
 * benchmark-hub.json's five tasks are convolution on three GPUs and
 * dedispersion on two: the space is the T1 file's, the T4 file only
 * answers measurements), a small cpu GEMM, and a small cuda GEMM (a tiny
 * GPU description, tests/space/data/hw-cuda-tiny.json, keeps it small).
 */
#include "core/space/space_impl.h"
#include "core/task/task.h"
#include "test.h"

#define HUB HERON_SOURCE_DIR "/configs/datasets/benchmark_hub"

/* Every valid config (all its variables: a cuda space has auxiliary
 * variables that the knobs leave free, so knob keys are not enough). */
typedef struct enumerated {
  const heron_space *sp;
  int nk, nv;
  int64_t *knobs; /* n * nk */
  int64_t *cfgs;  /* n * nv, sorted (cmp_cfg) once enumerated */
  size_t n, cap;
} enumerated;

static int cmp_nv; /* qsort and bsearch take no context */
static int cmp_cfg(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  for (int i = 0; i < cmp_nv; i++)
    if (x[i] != y[i])
      return x[i] < y[i] ? -1 : 1;
  return 0;
}

static void each(const int64_t *cfg, void *ctx) {
  enumerated *e = ctx;
  if (e->n == e->cap) {
    e->cap = e->cap ? 2 * e->cap : 1024;
    e->knobs = realloc(e->knobs, e->cap * (size_t)e->nk * sizeof *e->knobs);
    e->cfgs = realloc(e->cfgs, e->cap * (size_t)e->nv * sizeof *e->cfgs);
    if (!e->knobs || !e->cfgs)
      abort();
  }
  for (int i = 0; i < e->nk; i++)
    e->knobs[e->n * (size_t)e->nk + (size_t)i] =
        cfg[heron_space_knob(e->sp, i)];
  memcpy(e->cfgs + e->n * (size_t)e->nv, cfg, (size_t)e->nv * sizeof *cfg);
  e->n++;
}

/* Q(a, x), the regularized upper incomplete gamma function: the p-value
 * of a chi-square statistic x2 with df degrees of freedom is
 * Q(df / 2, x2 / 2).  Series below a + 1, continued fraction above
 * (Numerical Recipes' gser and gcf). */
static double gamma_q(double a, double x) {
  if (x <= 0)
    return 1;
  double lg = lgamma(a);
  if (x < a + 1) {
    double ap = a, del = 1 / a, sum = del;
    for (int n = 0; n < 1000000 && fabs(del) > fabs(sum) * 1e-15; n++) {
      ap += 1;
      del *= x / ap;
      sum += del;
    }
    return 1 - sum * exp(-x + a * log(x) - lg);
  }
  double b = x + 1 - a, c = 1 / 1e-300, d = 1 / b, h = d;
  for (int i = 1; i < 1000000; i++) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    d = fabs(d) < 1e-300 ? 1e-300 : d;
    c = b + an / c;
    c = fabs(c) < 1e-300 ? 1e-300 : c;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < 1e-15)
      break;
  }
  return exp(-x + a * log(x) - lg) * h;
}

/* Chi-square p of observed counts obs[k] against expected exp[k]. */
static double chi2_p(const double *obs, const double *expct, int k) {
  double x2 = 0;
  int df = -1;
  for (int i = 0; i < k; i++) {
    if (expct[i] <= 0)
      continue;
    x2 += (obs[i] - expct[i]) * (obs[i] - expct[i]) / expct[i];
    df++;
  }
  return df > 0 ? gamma_q(df / 2.0, x2 / 2) : 1;
}

/* The slot of value v in a knob's domain: its index in the value list
 * vals[nvals], or its distance from lo in a range. */
static int value_slot(const int64_t *vals, int nvals, int64_t lo, int64_t v) {
  return vals ? heron__vals_lower(vals, nvals, v) : (int)(v - lo);
}

/* The p-value of n draws of sp against the enumeration e: whole configs
 * when every one is expected >= 10 times, else the smallest knob p times
 * the number of knobs tested (Bonferroni), at most 1.  Every draw must be
 * one of the enumerated configs. */
static void draw_p(const heron_space *sp, const enumerated *e, long n,
                   uint64_t seed, int joint, double *pout) {
  int nv = heron_space_nvars(sp), nk = e->nk;
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  double *obs = calloc(e->n, sizeof *obs), *expct = calloc(e->n, sizeof *obs);
  int64_t *drawn = malloc((size_t)n * (size_t)nk * sizeof *drawn);
  heron_rng rng;
  heron_rng_seed(&rng, seed);
  heron_error err;
  heron_error_clear(&err);
  for (long i = 0; i < n; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, &err), &err);
    CHECK_EQ(heron_space_violations(sp, cfg, NULL, 0), 0);
    cmp_nv = nv;
    const int64_t *hit =
        bsearch(cfg, e->cfgs, e->n, (size_t)nv * sizeof *cfg, cmp_cfg);
    CHECK_MSG(hit != NULL, "draw %ld is not an enumerated config", i);
    if (hit)
      obs[(hit - e->cfgs) / nv] += 1;
    for (int k = 0; k < nk; k++)
      drawn[i * nk + k] = cfg[heron_space_knob(sp, k)];
  }
  double p = 1;
  if (joint) {
    for (size_t i = 0; i < e->n; i++)
      expct[i] = (double)n / (double)e->n;
    p = chi2_p(obs, expct, (int)e->n);
  } else {
    int tested = 0;
    double minp = 1;
    for (int k = 0; k < nk; k++) {
      const int64_t *vals;
      int nvals = 0;
      int64_t lo, hi;
      heron_space_var_domain(sp, heron_space_knob(sp, k), &lo, &hi, &vals,
                             &nvals);
      int m = vals ? nvals : (int)(hi - lo + 1);
      if (m < 2 || m > 100000)
        continue;
      double *o = calloc((size_t)m, sizeof *o),
             *x = calloc((size_t)m, sizeof *x);
      for (size_t i = 0; i < e->n; i++)
        x[value_slot(vals, nvals, lo, e->knobs[i * (size_t)nk + (size_t)k])] +=
            1;
      for (long i = 0; i < n; i++)
        o[value_slot(vals, nvals, lo, drawn[i * nk + k])] += 1;
      for (int j = 0; j < m; j++)
        x[j] *= (double)n / (double)e->n;
      double pk = chi2_p(o, x, m);
      tested++;
      minp = pk < minp ? pk : minp;
      free(o);
      free(x);
    }
    p = minp * tested < 1 ? minp * tested : 1;
  }
  free(cfg);
  free(obs);
  free(expct);
  free(drawn);
  *pout = p;
}

/* Builds the task, enumerates its space, sets the sampler mode and
 * returns the draws' p (see draw_p): n draws, or 10 per config when the
 * test is over whole configs (at most `joint_max` configs). */
static void run(const heron_task_spec *spec0, heron_sampler mode,
                long expect_count, size_t joint_max, long n, double *p) {
  heron_task_spec spec = *spec0;
  spec.sampler = mode;
  heron_task *t = NULL;
  heron_error err;
  heron_error_clear(&err);
  *p = -1;
  CHECK_OK(heron_task_create(&spec, &t, &err), &err);
  const heron_space *sp = heron_task_space(t);
  enumerated e = {
      .sp = sp, .nk = heron_space_nknobs(sp), .nv = heron_space_nvars(sp)};
  double count = 0;
  int complete = 0;
  CHECK_OK(heron__enumerate(sp, 1e6, each, &e, &count, &complete, &err), &err);
  CHECK(complete);
  if (expect_count)
    CHECK_EQ((long)e.n, expect_count);
  cmp_nv = e.nv;
  qsort(e.cfgs, e.n, (size_t)e.nv * sizeof *e.cfgs, cmp_cfg);
  for (size_t i = 1; i < e.n; i++)
    CHECK_MSG(cmp_cfg(e.cfgs + (i - 1) * e.nv, e.cfgs + i * e.nv) != 0,
              "a config enumerated twice");
  int exact = 0;
  double ucount = -1;
  CHECK_EQ((int)heron_space_sampler(sp, &exact, &ucount), (int)mode);
  if (mode == HERON_SAMPLER_UNIFORM) {
    CHECK(exact);
    CHECK_EQ((long)ucount, (long)e.n);
  }
  int joint = e.n <= joint_max;
  draw_p(sp, &e, joint ? 10 * (long)e.n : n, 42, joint, p);
  printf("%s, sampler %s: %zu configs, %s chi-square p = %.3g\n",
         heron_task_key(t), heron_sampler_name(mode), e.n,
         joint ? "whole-config" : "per-knob (Bonferroni)", *p);
  free(e.knobs);
  free(e.cfgs);
  heron_task_free(t);
}

static const heron_task_spec conv = {.t1 = HUB "/convolution/T1.json"};
static const heron_task_spec dedisp = {.t1 = HUB "/dedispersion/T1.json"};
static const heron_task_spec cpu_gemm = {.op = "gemm",
                                         .shape = (const int64_t[]){8, 8, 8},
                                         .nshape = 3,
                                         .target = "cpu",
                                         .hw = "cpu-avx512"};
static const heron_task_spec cuda_gemm = {
    .op = "gemm",
    .shape = (const int64_t[]){16, 16, 16},
    .nshape = 3,
    .target = "cuda",
    .hw = HERON_SOURCE_DIR "/tests/space/data/hw-cuda-tiny.json"};

TEST(uniform_matches_enumeration_on_t1_convolution) {
  double p;
  run(&conv, HERON_SAMPLER_UNIFORM, 4362, 5000, 0, &p);
  CHECK(p >= 0.01);
}

TEST(uniform_matches_enumeration_on_t1_dedispersion) {
  double p;
  run(&dedisp, HERON_SAMPLER_UNIFORM, 11130, 5000, 40000, &p);
  CHECK(p >= 0.01);
}

TEST(uniform_matches_enumeration_on_cpu_gemm) {
  double p;
  run(&cpu_gemm, HERON_SAMPLER_UNIFORM, 0, 5000, 0, &p);
  CHECK(p >= 0.01);
}

TEST(uniform_matches_enumeration_on_cuda_gemm) {
  double p;
  run(&cuda_gemm, HERON_SAMPLER_UNIFORM, 0, 5000, 40000, &p);
  CHECK(p >= 0.01);
}

/* The break-once evidence kept as a test: the same test rejects the
 * default sampler where it is biased. */
TEST(heron_sampler_fails_the_uniform_test_on_dedispersion) {
  double p;
  run(&dedisp, HERON_SAMPLER_HERON, 11130, 5000, 40000, &p);
  CHECK(p >= 0 && p < 0.01);
}

TEST(sampler_names_and_modes) {
  CHECK_EQ(heron_sampler_parse("uniform"), (int)HERON_SAMPLER_UNIFORM);
  CHECK_EQ(heron_sampler_parse("heron"), (int)HERON_SAMPLER_HERON);
  CHECK_EQ(heron_sampler_parse("Uniform"), HERON_EINVAL);
  CHECK_EQ(heron_sampler_parse(NULL), HERON_EINVAL);
  CHECK(heron_sampler_name((heron_sampler)7) == NULL);
  heron_task *t = NULL;
  heron_error err;
  heron_error_clear(&err);
  CHECK_OK(heron_task_create(&cpu_gemm, &t, &err), &err);
  heron_space *sp = t->space;
  int exact = 1;
  CHECK_EQ((int)heron_space_sampler(sp, &exact, NULL), HERON_SAMPLER_HERON);
  CHECK_EQ(exact, 0);
  CHECK_EQ(heron_space_set_sampler(sp, (heron_sampler)7, &err), HERON_EINVAL);
  CHECK_OK(heron_space_set_sampler(sp, HERON_SAMPLER_UNIFORM, &err), &err);
  CHECK_EQ((int)heron_space_sampler(sp, &exact, NULL), HERON_SAMPLER_UNIFORM);
  CHECK_EQ(exact, 1);
  CHECK_OK(heron_space_set_sampler(sp, HERON_SAMPLER_HERON, &err), &err);
  CHECK_EQ((int)heron_space_sampler(sp, &exact, NULL), HERON_SAMPLER_HERON);
  heron_task_free(t);
}

/* A space too large for the walk's budget draws by estimated counts: not
 * exact, and every draw still valid. */
TEST(uniform_past_its_budget_draws_by_estimates) {
  heron_task *t = NULL;
  heron_error err;
  heron_error_clear(&err);
  CHECK_OK(heron_task_create(&cpu_gemm, &t, &err), &err);
  heron__uniform *u = NULL;
  CHECK_OK(heron__uniform_build(t->space, 10, &u, &err), &err);
  double count = 0;
  CHECK_EQ(heron__uniform_exact(u, &count), 0);
  CHECK_EQ(count, -1);
  int nv = heron_space_nvars(t->space);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 3);
  for (int i = 0; i < 200; i++) {
    CHECK_OK(heron__uniform_sample(t->space, u, &rng, cfg, &err), &err);
    CHECK_EQ(heron_space_violations(t->space, cfg, NULL, 0), 0);
  }
  free(cfg);
  heron__uniform_free(u);
  heron_task_free(t);
}
