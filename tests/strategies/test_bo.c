/* tests/strategies/test_bo.c - becbo.so and tsbo.so through their plugin
 * descriptors, on the real GEMM 1024^3 space (cpu, configs/hw/cpu-avx512),
 * with measurements answered by synthetic objectives and fed back through
 * the engine's history and observe(), as heron_tune does. */
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#include "core/plugin/param_table.h"
#include "core/plugin/plugin.h"
#include "core/record/record.h"

/* ---- The harness
 * ------------------------------------------------------------- */

/* Answers one measurement: status and GFLOP/s of cfg. */
typedef void (*oracle_fn)(const heron_space *sp, const int64_t *cfg, int trial,
                          heron_measurement *m);

typedef struct harness {
  heron_task *task;
  const heron_space *sp;
  int nvars;
  heron_history hist;
  heron_rng rng;
  heron_strategy_env env;
  heron__plugin lib;
  const heron_strategy_plugin *desc;
  void *self;
  /* statistics over the rounds run */
  int proposed, failed, invalid, duplicate, remeasured;
  /* log capture: lines containing "grows" / "shrinks" / "restart" */
  int grows, shrinks, restarts_logged;
  int tau_moved; /* becbo logs "tau A -> B" with A != B */
  char last_log[400];
} harness;

static void harness_log(const heron_strategy_env *env, int level,
                        const char *fmt, ...) {
  harness *h = env->host;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->last_log, sizeof h->last_log, fmt, ap);
  va_end(ap);
  h->grows += strstr(h->last_log, "region grows") != NULL;
  h->shrinks += strstr(h->last_log, "region shrinks") != NULL;
  h->restarts_logged += strstr(h->last_log, "restart ") != NULL;
  const char *t = strstr(h->last_log, "; tau ");
  double a, b;
  if (t && sscanf(t, "; tau %lf -> %lf", &a, &b) == 2 && a != b)
    h->tau_moved++;
  if (getenv("HERON_TEST_VERBOSE") || level == 1)
    fprintf(stderr, "  [log %d] %s\n", level, h->last_log);
}

static int harness_task(harness *h, heron_error *err) {
  static const int64_t shape[3] = {1024, 1024, 1024};
  heron_task_spec spec = {.op = "gemm",
                          .shape = shape,
                          .nshape = 3,
                          .dtype = "fp32",
                          .target = "cpu",
                          .hw = "cpu-avx512"};
  int rc = heron_task_create(&spec, &h->task, err);
  if (rc)
    return rc;
  h->sp = heron_task_space(h->task);
  h->nvars = heron_space_nvars(h->sp);
  heron__history_init(&h->hist, h->nvars);
  return HERON_OK;
}

/* Loads the plugin at `path` and creates it with params; the harness
 * itself must be zeroed first. */
static int harness_open(harness *h, const char *path, const heron_param *params,
                        int nparams, uint64_t seed, int batch,
                        heron_error *err) {
  int rc = harness_task(h, err);
  if (rc)
    return rc;
  heron_rng_seed(&h->rng, seed);
  rc = heron__plugin_load_strategy(path, &h->lib, err);
  if (rc)
    return rc;
  h->desc = h->lib.desc;
  h->env = (heron_strategy_env){.abi_version = HERON_STRATEGY_ABI_VERSION,
                                .struct_size = sizeof h->env,
                                .space = h->sp,
                                .rng = &h->rng,
                                .history = &h->hist,
                                .task_key = heron_task_key(h->task),
                                .batch = batch,
                                .log = harness_log,
                                .host = h};
  /* As the engine does: the host checks the values against the typed
   * declarations and fills in the defaults before create() sees them. */
  heron__param_table pt = heron__strategy_param_table(h->desc);
  heron_param *checked = NULL;
  int nchecked = 0;
  rc = heron__param_table_apply(&pt, params, nparams, h->desc->name, &checked,
                                &nchecked, err);
  if (rc)
    return rc;
  rc = h->desc->create(&h->env, checked, nchecked, &h->self, err);
  free(checked);
  return rc;
}

static void harness_close(harness *h) {
  if (h->desc && h->self)
    h->desc->destroy(h->self);
  heron__plugin_close(&h->lib);
  heron__history_free(&h->hist);
  heron_task_free(h->task);
  memset(h, 0, sizeof *h);
}

/* One round: propose `want`, check every proposal (valid, new, unique in
 * the batch), measure with the oracle, record in the history, observe.
 * Returns the number measured or a negative status. */
static int harness_round(harness *h, int want, oracle_fn oracle,
                         heron_error *err) {
  int64_t *props = malloc((size_t)want * h->nvars * sizeof *props);
  heron_measurement *ms = calloc((size_t)want, sizeof *ms);
  uint64_t *keys = malloc((size_t)want * sizeof *keys);
  int got = 0, rc = props && ms && keys ? HERON_OK : HERON_ENOMEM;
  if (rc == HERON_OK)
    rc = h->desc->propose(h->self, want, props, &got, err);
  int n = 0;
  for (int i = 0; rc == HERON_OK && i < got; i++) {
    const int64_t *c = props + (size_t)i * h->nvars;
    uint64_t k = heron__config_key(h->sp, c);
    int dup = 0;
    for (int j = 0; j < n; j++)
      dup |= keys[j] == k;
    h->invalid += heron_space_violations(h->sp, c, NULL, 0) != 0;
    h->remeasured += heron__history_has(&h->hist, k);
    h->duplicate += dup;
    if (dup || heron__history_has(&h->hist, k))
      continue; /* the engine would drop it too */
    keys[n] = k;
    ms[n].config = c;
    ms[n].error = "";
    oracle(h->sp, c, h->hist.n + n + 1, &ms[n]);
    n++;
  }
  const heron_measurement **stored = malloc(((size_t)n + 1) * sizeof *stored);
  for (int i = 0; rc == HERON_OK && i < n; i++) {
    ms[i].trial = h->hist.n + 1;
    stored[i] = heron__history_add(&h->hist, &ms[i], keys[i]);
    h->proposed++;
    h->failed += ms[i].status != HERON_MEAS_OK;
  }
  if (getenv("HERON_TEST_VERBOSE")) {
    int f = 0;
    for (int i = 0; i < n; i++)
      f += ms[i].status != HERON_MEAS_OK;
    fprintf(stderr, "  [round] %d measured, %d failed\n", n, f);
  }
  /* observe gets the history's copies, as the engine passes them. */
  heron_measurement *view = malloc(((size_t)n + 1) * sizeof *view);
  for (int i = 0; rc == HERON_OK && i < n; i++)
    view[i] = *stored[i];
  if (rc == HERON_OK && n > 0)
    rc = h->desc->observe(h->self, view, n, err);
  free(view);
  free(stored);
  free(props);
  free(ms);
  free(keys);
  return rc == HERON_OK ? n : rc;
}

/* Runs rounds of `batch` until `trials` are measured. */
static int harness_run(harness *h, int trials, int batch, oracle_fn oracle,
                       heron_error *err) {
  int empty = 0;
  while (h->hist.n < trials && empty < 3) {
    int want = trials - h->hist.n < batch ? trials - h->hist.n : batch;
    int n = harness_round(h, want, oracle, err);
    if (n < 0)
      return n;
    empty = n ? 0 : empty + 1;
  }
  return HERON_OK;
}

static double harness_best(const harness *h) {
  const heron_measurement *b = heron_history_best(&h->hist);
  return b ? b->gflops : 0;
}

/* ---- Synthetic objectives
 * ------------------------------------------------------ */

#define GEMM_FLOPS (2.0 * 1024 * 1024 * 1024)

static int64_t knob(const heron_space *sp, const int64_t *cfg,
                    const char *name) {
  int v = heron_space_find_var(sp, name);
  return v >= 0 ? cfg[v] : 0;
}

/* A smooth peak in log2 tile space (the optimum is a valid config): what a
 * cost landscape of tile factors looks like from far away. */
static double synthetic_gflops(const heron_space *sp, const int64_t *cfg) {
  static const struct {
    const char *name;
    double target, width;
  } terms[] = {
      {"i.t0", 4, 2.5}, {"i.t1", 2, 2.5}, {"i.t2", 1, 2.5}, {"i.t3", 3, 2.5},
      {"j.t0", 3, 2.5}, {"j.t1", 1, 2.5}, {"j.t2", 2, 2.5}, {"j.t3", 4, 2.5},
      {"k.t0", 6, 2.5}, {"k.t1", 4, 2.5}, {"vec", 4, 1.5},
  };
  double e = 0;
  for (size_t t = 0; t < sizeof terms / sizeof terms[0]; t++) {
    double x = log2((double)knob(sp, cfg, terms[t].name));
    double z = (x - terms[t].target) / terms[t].width;
    e += z * z;
  }
  double u = ((double)knob(sp, cfg, "unroll") - 3.5) / 1.5;
  e += u * u;
  double g = 1.0 + 200.0 * exp(-0.5 * e);
  return knob(sp, cfg, "acc_at") ? 0.8 * g : g;
}

static void set_ok(heron_measurement *m, double gflops) {
  m->status = HERON_MEAS_OK;
  m->gflops = gflops;
  m->seconds = GEMM_FLOPS / (gflops * 1e9);
}

static void set_failed(heron_measurement *m) {
  m->status = HERON_MEAS_RUNTIME_ERROR;
  m->gflops = 0;
  m->seconds = 0;
  m->error = "synthetic failure";
}

static void oracle_smooth(const heron_space *sp, const int64_t *cfg, int trial,
                          heron_measurement *m) {
  set_ok(m, synthetic_gflops(sp, cfg));
}

/* The unknown constraint: too much unrolling "overflows the instruction
 * cache and times out": unroll above 3 fails, though the CSP allows it.
 * The smooth objective peaks at unroll 3.5, so the best feasible configs
 * sit right at the boundary, and constrained random (unroll uniform in
 * 0..5) fails about a third of the time. */
static int constrained_ok(const heron_space *sp, const int64_t *cfg) {
  return knob(sp, cfg, "unroll") <= 3;
}

static void oracle_constrained(const heron_space *sp, const int64_t *cfg,
                               int trial, heron_measurement *m) {
  if (constrained_ok(sp, cfg))
    set_ok(m, synthetic_gflops(sp, cfg));
  else
    set_failed(m);
}

/* The first 8 trials succeed (a slow baseline); every later one fails. */
static void oracle_fail_after_init(const heron_space *sp, const int64_t *cfg,
                                   int trial, heron_measurement *m) {
  if (trial <= 8)
    set_ok(m, 1.0 + trial);
  else
    set_failed(m);
}

/* Every trial is faster than all before it: every round improves. */
static void oracle_always_better(const heron_space *sp, const int64_t *cfg,
                                 int trial, heron_measurement *m) {
  set_ok(m, 10.0 * pow(1.1, trial));
}

static const char *plugin_path(int which) {
  return which == 0 ? HERON_TEST_BECBO : HERON_TEST_TSBO;
}

static const char *plugin_name(int which) {
  return which == 0 ? "becbo" : "tsbo";
}

/* Parameters that keep the test rounds fast (fewer candidates) without
 * changing what the strategies do. */
static const heron_param FAST_BECBO[] = {{"candidates", "400"}};
static const heron_param FAST_TSBO[] = {{"candidates", "300"}};

static const heron_param *fast_params(int which) {
  return which == 0 ? FAST_BECBO : FAST_TSBO;
}

/* ---- Tests
 * ------------------------------------------------------------------------ */

TEST(every_proposal_is_valid_unique_and_new) {
  for (int which = 0; which < 2; which++) {
    harness h;
    memset(&h, 0, sizeof h);
    heron_error err = {0};
    CHECK_OK(harness_open(&h, plugin_path(which), fast_params(which), 1, 11, 8,
                          &err),
             &err);
    CHECK_OK(harness_run(&h, 96, 8, oracle_constrained, &err), &err);
    CHECK_MSG(h.proposed == 96, "%s measured %d of 96", plugin_name(which),
              h.proposed);
    CHECK_MSG(h.invalid == 0, "%s proposed %d invalid configs",
              plugin_name(which), h.invalid);
    CHECK_MSG(h.duplicate == 0, "%s repeated %d configs in a batch",
              plugin_name(which), h.duplicate);
    CHECK_MSG(h.remeasured == 0, "%s proposed %d measured configs",
              plugin_name(which), h.remeasured);
    harness_close(&h);
  }
}

/* Mean best GFLOP/s over seeds after `trials` trials. */
static int mean_best(const char *path, const heron_param *params, int np,
                     oracle_fn oracle, int trials, double *mean,
                     double *fail_share, heron_error *err) {
  static const uint64_t seeds[] = {1, 2, 3};
  double sum = 0, fails = 0;
  for (int s = 0; s < 3; s++) {
    harness h;
    memset(&h, 0, sizeof h);
    int rc = harness_open(&h, path, params, np, seeds[s], 8, err);
    if (rc == HERON_OK)
      rc = harness_run(&h, trials, 8, oracle, err);
    sum += harness_best(&h);
    fails += h.proposed ? (double)h.failed / h.proposed : 0;
    harness_close(&h);
    if (rc)
      return rc;
  }
  *mean = sum / 3;
  if (fail_share)
    *fail_share = fails / 3;
  return HERON_OK;
}

TEST(both_strategies_beat_constrained_random_on_a_smooth_objective) {
  heron_error err = {0};
  double rnd = 0, bo[2] = {0, 0};
  CHECK_OK(mean_best(HERON_TEST_RANDOM, NULL, 0, oracle_smooth, 120, &rnd, NULL,
                     &err),
           &err);
  for (int which = 0; which < 2; which++) {
    CHECK_OK(mean_best(plugin_path(which), fast_params(which), 1, oracle_smooth,
                       120, &bo[which], NULL, &err),
             &err);
    fprintf(stderr,
            "  120 trials, mean best of 3 seeds: random %.1f, %s %.1f\n", rnd,
            plugin_name(which), bo[which]);
    CHECK_MSG(bo[which] > 1.25 * rnd, "%s %.2f vs random %.2f GFLOP/s",
              plugin_name(which), bo[which], rnd);
  }
}

TEST(becbo_learns_to_avoid_an_unknown_constraint) {
  heron_error err = {0};
  double rnd = 0, rnd_fail = 0, be = 0, be_fail = 0;
  CHECK_OK(mean_best(HERON_TEST_RANDOM, NULL, 0, oracle_constrained, 160, &rnd,
                     &rnd_fail, &err),
           &err);
  CHECK_OK(mean_best(HERON_TEST_BECBO, FAST_BECBO, 1, oracle_constrained, 160,
                     &be, &be_fail, &err),
           &err);
  fprintf(stderr,
          "  160 trials, 3 seeds: random fails %.0f%% best %.1f; becbo fails "
          "%.0f%% best %.1f\n",
          100 * rnd_fail, rnd, 100 * be_fail, be);
  /* Random fails at the constraint's base rate; BE-CBO, after its random
   * initial design, must fail clearly less often and still find faster
   * feasible kernels. */
  CHECK_MSG(rnd_fail > 0.2, "the synthetic constraint is too loose (%.2f)",
            rnd_fail);
  CHECK_MSG(be_fail < 0.75 * rnd_fail, "becbo fails %.2f, random %.2f", be_fail,
            rnd_fail);
  CHECK_MSG(be > 1.25 * rnd, "becbo best %.2f vs random %.2f", be, rnd);
}

TEST(becbo_feasibility_threshold_adapts_and_survives_save_load) {
  harness h;
  memset(&h, 0, sizeof h);
  heron_error err = {0};
  CHECK_OK(harness_open(&h, HERON_TEST_BECBO, FAST_BECBO, 1, 5, 8, &err), &err);
  CHECK_OK(harness_run(&h, 96, 8, oracle_constrained, &err), &err);
  char path[256];
  snprintf(path, sizeof path, "/tmp/heron-test-becbo-%d.state", (int)getpid());
  CHECK_OK(h.desc->save_state(h.self, path, &err), &err);
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  double tau = 0;
  int rounds = 0;
  long tried = 0, failed = 0;
  int ok = fscanf(f, "heron-becbo-state 1 tau %lg rounds %d boundary %ld %ld",
                  &tau, &rounds, &tried, &failed) == 4;
  fclose(f);
  CHECK(ok);
  CHECK_EQ(rounds, 12);
  /* Boundary picks were made and judged, and tau moved with them. */
  CHECK_MSG(tried > 0, "no boundary pick was measured");
  CHECK_MSG(h.tau_moved > 0, "tau never moved in %d rounds", rounds);
  CHECK(tau >= 0.05 && tau <= 0.95);
  /* A fresh instance picks the state up; a bad file is refused. */
  void *other = NULL;
  CHECK_OK(h.desc->create(&h.env, NULL, 0, &other, &err), &err);
  CHECK_OK(h.desc->load_state(other, path, &err), &err);
  char path2[280];
  snprintf(path2, sizeof path2, "%s.2", path);
  CHECK_OK(h.desc->save_state(other, path2, &err), &err);
  f = fopen(path2, "r");
  double tau2 = 0;
  CHECK(f && fscanf(f, "heron-becbo-state 1 tau %lg", &tau2) == 1);
  fclose(f);
  CHECK(tau2 == tau);
  f = fopen(path2, "w");
  fputs("heron-tsbo-state 1\n", f);
  fclose(f);
  heron_error_clear(&err);
  CHECK_EQ(h.desc->load_state(other, path2, &err), HERON_EPARSE);
  CHECK_STR_CONTAINS(err.text, path2);
  h.desc->destroy(other);
  unlink(path);
  unlink(path2);
  harness_close(&h);
}

/* Reads L, the restart count and restart_at from a saved tsbo state. */
static int tsbo_state(harness *h, double *length, int *restarts,
                      int *restart_at) {
  char path[256];
  heron_error err = {0};
  snprintf(path, sizeof path, "/tmp/heron-test-tsbo-%d.state", (int)getpid());
  if (h->desc->save_state(h->self, path, &err) != HERON_OK)
    return -1;
  FILE *f = fopen(path, "r");
  int succ, fail, rounds;
  int ok =
      f && fscanf(f,
                  "heron-tsbo-state 1 length %lg succ %d fail %d "
                  "restarts %d restart_at %d rounds %d",
                  length, &succ, &fail, restarts, restart_at, &rounds) == 6;
  if (f)
    fclose(f);
  unlink(path);
  return ok ? 0 : -1;
}

TEST(tsbo_region_shrinks_after_failures_and_restarts_when_too_small) {
  static const heron_param p[] = {
      {"candidates", "200"}, {"fail_tol", "1"}, {"length_min", "0.1"}};
  harness h;
  memset(&h, 0, sizeof h);
  heron_error err = {0};
  CHECK_OK(harness_open(&h, HERON_TEST_TSBO, p, 3, 9, 8, &err), &err);
  double L;
  int restarts, restart_at;
  /* Round 1: the initial design (8 random configs that succeed). */
  CHECK(harness_round(&h, 8, oracle_fail_after_init, &err) == 8);
  CHECK(tsbo_state(&h, &L, &restarts, &restart_at) == 0);
  CHECK(L == 0.8);
  /* Every region round fails: L halves each time (fail_tol 1). */
  static const double want[] = {0.4, 0.2, 0.1};
  for (int r = 0; r < 3; r++) {
    CHECK(harness_round(&h, 8, oracle_fail_after_init, &err) == 8);
    CHECK(tsbo_state(&h, &L, &restarts, &restart_at) == 0);
    CHECK_MSG(fabs(L - want[r]) < 1e-12, "round %d: L %g, want %g", r, L,
              want[r]);
    CHECK_EQ(restarts, 0);
  }
  CHECK_EQ(h.shrinks, 3);
  /* One more failure: 0.05 < length_min, so the region restarts. */
  CHECK(harness_round(&h, 8, oracle_fail_after_init, &err) == 8);
  CHECK(tsbo_state(&h, &L, &restarts, &restart_at) == 0);
  CHECK_EQ(restarts, 1);
  CHECK(L == 0.8);
  CHECK_EQ(restart_at, h.hist.n);
  CHECK(h.restarts_logged >= 1);
  /* The next round is the new region's random initial design. */
  CHECK(harness_round(&h, 8, oracle_fail_after_init, &err) == 8);
  CHECK_STR_CONTAINS(h.last_log, "random");
  harness_close(&h);
}

TEST(tsbo_region_grows_after_successes_up_to_length_max) {
  static const heron_param p[] = {{"candidates", "200"}, {"succ_tol", "1"}};
  harness h;
  memset(&h, 0, sizeof h);
  heron_error err = {0};
  CHECK_OK(harness_open(&h, HERON_TEST_TSBO, p, 2, 4, 8, &err), &err);
  double L;
  int restarts, restart_at;
  CHECK(harness_round(&h, 8, oracle_always_better, &err) == 8);
  CHECK(tsbo_state(&h, &L, &restarts, &restart_at) == 0);
  CHECK(L == 0.8);
  CHECK(harness_round(&h, 8, oracle_always_better, &err) == 8);
  CHECK(tsbo_state(&h, &L, &restarts, &restart_at) == 0);
  CHECK_MSG(L == 1.6, "L %g after an improving round", L);
  CHECK(harness_round(&h, 8, oracle_always_better, &err) == 8);
  CHECK(tsbo_state(&h, &L, &restarts, &restart_at) == 0);
  CHECK_MSG(L == 1.6, "L %g must stop at length_max", L);
  CHECK_EQ(h.grows, 1);
  harness_close(&h);
}

TEST(tsbo_state_round_trips_and_bad_files_are_refused) {
  static const heron_param p[] = {{"candidates", "200"}, {"fail_tol", "1"}};
  harness h;
  memset(&h, 0, sizeof h);
  heron_error err = {0};
  CHECK_OK(harness_open(&h, HERON_TEST_TSBO, p, 2, 6, 8, &err), &err);
  for (int r = 0; r < 3; r++)
    CHECK(harness_round(&h, 8, oracle_fail_after_init, &err) == 8);
  char path[256];
  snprintf(path, sizeof path, "/tmp/heron-test-tsbo-rt-%d.state",
           (int)getpid());
  CHECK_OK(h.desc->save_state(h.self, path, &err), &err);
  void *other = NULL;
  CHECK_OK(h.desc->create(&h.env, p, 2, &other, &err), &err);
  CHECK_OK(h.desc->load_state(other, path, &err), &err);
  /* The loaded instance continues the same region: L 0.2 after two
   * failing region rounds, one more failure makes it 0.1. */
  void *orig = h.self;
  h.self = other;
  double L;
  int restarts, restart_at;
  CHECK(tsbo_state(&h, &L, &restarts, &restart_at) == 0);
  CHECK_MSG(fabs(L - 0.2) < 1e-12, "loaded L %g", L);
  CHECK(harness_round(&h, 8, oracle_fail_after_init, &err) == 8);
  CHECK(tsbo_state(&h, &L, &restarts, &restart_at) == 0);
  CHECK_MSG(fabs(L - 0.1) < 1e-12, "continued L %g", L);
  h.self = orig;
  FILE *f = fopen(path, "w");
  fputs("heron-tsbo-state 1\nlength -3\n", f);
  fclose(f);
  heron_error_clear(&err);
  CHECK_EQ(h.desc->load_state(other, path, &err), HERON_EPARSE);
  CHECK_STR_CONTAINS(err.text, path);
  h.desc->destroy(other);
  unlink(path);
  harness_close(&h);
}

TEST(bad_parameters_are_rejected_by_name) {
  static const struct {
    int which;
    heron_param p;
    const char *needle;
  } cases[] = {
      {0, {"candidates", "5"}, "candidates"},
      {0, {"boundary", "1.5"}, "boundary"},
      {0, {"tau", "abc"}, "tau"},
      {0, {"bogus", "1"}, "bogus"},
      {1, {"length_init", "0"}, "length_init"},
      {1, {"length_min", "0.9"}, "length_min"},
      {1, {"succ_tol", "-1"}, "succ_tol"},
      {1, {"fancy", "2"}, "fancy"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    harness h;
    memset(&h, 0, sizeof h);
    heron_error err = {0};
    int rc = harness_open(&h, plugin_path(cases[i].which), &cases[i].p, 1, 1, 8,
                          &err);
    CHECK_MSG(rc == HERON_EINVAL, "%s %s=%s gave %s",
              plugin_name(cases[i].which), cases[i].p.key, cases[i].p.value,
              heron_err_name(rc));
    CHECK_STR_CONTAINS(err.text, cases[i].needle);
    CHECK(h.self == NULL);
    harness_close(&h);
  }
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

TEST(propose_with_200_measured_configs_fills_the_batch) {
  /* Default parameters on the full GEMM 1024^3 space with 200 measured
   * configs (some failing): a full batch of new, valid configs.  The time
   * is printed for the README, not asserted. */
  for (int which = 0; which < 2; which++) {
    harness h;
    memset(&h, 0, sizeof h);
    heron_error err = {0};
    CHECK_OK(harness_task(&h, &err), &err);
    heron_rng_seed(&h.rng, 21);
    int64_t *cfg = malloc((size_t)h.nvars * sizeof *cfg);
    while (h.hist.n < 200) {
      CHECK_OK(heron_space_sample(h.sp, &h.rng, cfg, &err), &err);
      uint64_t k = heron__config_key(h.sp, cfg);
      if (heron__history_has(&h.hist, k))
        continue;
      heron_measurement m = {.trial = h.hist.n + 1, .config = cfg, .error = ""};
      oracle_constrained(h.sp, cfg, m.trial, &m);
      CHECK(heron__history_add(&h.hist, &m, k) != NULL);
    }
    free(cfg);
    heron_task_free(h.task);
    h.task = NULL;
    /* harness_open makes its own task: keep the history, reopen. */
    heron_history keep = h.hist;
    memset(&h, 0, sizeof h);
    CHECK_OK(harness_open(&h, plugin_path(which), NULL, 0, 21, 8, &err), &err);
    heron__history_free(&h.hist);
    h.hist = keep;
    /* Tell the strategy about the history, as a resumed run does. */
    heron_measurement *view = malloc(200 * sizeof *view);
    for (int i = 0; i < 200; i++)
      view[i] = *h.hist.items[i];
    CHECK_OK(h.desc->observe(h.self, view, 200, &err), &err);
    free(view);
    double t0 = now_s();
    int n = harness_round(&h, 8, oracle_constrained, &err);
    double t1 = now_s();
    CHECK_MSG(n == 8, "%s proposed %d new configs: %s", plugin_name(which), n,
              err.text);
    CHECK_EQ(h.invalid + h.duplicate + h.remeasured, 0);
    fprintf(stderr,
            "  %s: propose+observe of 8 with 200 measured (defaults): %.3f s\n",
            plugin_name(which), t1 - t0);
    harness_close(&h);
  }
}
