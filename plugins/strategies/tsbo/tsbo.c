/* plugins/strategies/tsbo/tsbo.c - Thompson-sampling Bayesian optimisation
 * in a trust region around the incumbent (after TuRBO, Eriksson et al.
 * 2019, and its constrained form SCBO, Eriksson & Poloczek 2021).
 *
 * Coordinates.  Every knob gets a position in [0, 1]: its value's rank in
 * its sorted candidate list (tile factors, vector widths: the divisors of an
 * extent are powers of two, so the rank is the log2 position), or for a
 * plain range [lo, hi] its place in log2(1 + x) when the range spans more
 * than two orders of magnitude, else linearly.  The trust region is the box
 * of side L centred on the incumbent in these coordinates: a config lies
 * inside when every knob is within L / 2 of the incumbent's.
 *
 * Each round:
 *   1. the incumbent is the fastest config measured since the last restart;
 *      until `init` configs have been measured since then (or while fewer
 *      than 2 configs succeeded at all) the round is constrained random, the
 *      new region's initial design;
 *   2. a GP (plugins/common/gp.h) is fitted to the successful configs, at
 *      most `max_train` of them (half the best, half the most recent),
 *      y = log GFLOP/s; failed configs are not in the GP;
 *   3. candidates: chains of 1..k mutations of the incumbent
 *      (heron_space_mutate; k grows with L) plus CSP samples, every one
 *      valid by construction, kept when unmeasured and inside the box, up to
 *      `candidates` of them.  When the box holds fewer than twice the batch
 *      (a small L on a discrete space admits only the incumbent's nearest
 *      neighbours), the nearest outside configs by box distance top it up;
 *   4. per proposal, ONE joint posterior sample over all the candidates
 *      (gp_joint_*: Cholesky of the posterior covariance) and its argmax,
 *      skipping candidates already picked.
 *
 * After the round (observe): a round is a success when some config beats
 * the region's incumbent by 0.1 % (1e-3 in log GFLOP/s), else a failure;
 * failed configs count as non-improving.  `succ_tol` successes in a row
 * double L (up to `length_max`), `fail_tol` failures in a row halve it; when
 * L falls below `length_min` the region restarts: L = `length_init`, a new
 * random initial design, a new incumbent (the history and the GP's data are
 * kept).
 *
 * State (save_state): L, the counters, the restart point and the region's
 * incumbent value, so a resumed run keeps its region.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bo_util.h"
#include "gp.h"
#include "heron/strategy.h"
#include "plugin_util.h"

static const heron_param_spec tsbo_params[] = {
    {.key = "init",
     .kind = HERON_PARAM_INT,
     .default_value = "8",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1000000,
     .help = "random configs measured at the start and after every restart"},
    {.key = "candidates",
     .kind = HERON_PARAM_INT,
     .default_value = "1000",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 10,
     .hi = 5000,
     .help =
         "candidate configs in the trust region that one joint sample covers"},
    {.key = "length_init",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.8",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1e-06,
     .hi = 100,
     .help = "initial side of the trust region (knob positions in [0, 1])"},
    {.key = "length_min",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.0078125",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1e-09,
     .hi = 100,
     .help = "restart when the side falls below this (0.5^7)"},
    {.key = "length_max",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "1.6",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1e-06,
     .hi = 100,
     .help = "largest side"},
    {.key = "succ_tol",
     .kind = HERON_PARAM_INT,
     .default_value = "3",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1000,
     .help = "improving rounds in a row before the region doubles"},
    {.key = "fail_tol",
     .kind = HERON_PARAM_INT,
     .default_value = "0",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000,
     .help = "non-improving rounds in a row before it halves; 0: ceil(max(4, "
             "knobs) / batch)"},
    {.key = "max_train",
     .kind = HERON_PARAM_INT,
     .default_value = "300",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 10,
     .hi = 5000,
     .help = "most successful configs the GP is trained on"},
    {.key = NULL},
};

/* A round counts as improving when it beats the incumbent by this much in
 * log GFLOP/s (0.1 %), as TuRBO's 1e-3 relative margin. */
#define TSBO_MARGIN 1e-3

/* What the last propose() did, so observe() knows whether the results
 * judge the region. */
enum { TSBO_NONE = 0, TSBO_RANDOM = 1, TSBO_REGION = 2 };

typedef struct tsbo {
  const heron_strategy_env *env;
  int nvars, nfeat, nknobs;
  int *knobs; /* variable index per knob */
  /* per knob: candidate list (may be NULL), its length, range, log flag */
  const int64_t **vals;
  int *nvals;
  int64_t *lo, *hi;
  char *logscale;
  /* parameters */
  int init, candidates, succ_tol, fail_tol, max_train;
  double length_init, length_min, length_max;
  /* state */
  double length;
  int succ, fail, restarts, rounds;
  int restart_at; /* history count when the current region began */
  double best_y;  /* the region's incumbent, log GFLOP/s; -inf: none */
  int last_mode;  /* TSBO_* of the last propose */
} tsbo;

/* ---- Knob coordinates -------------------------------------------------------
 */

/* Position of value x of knob k in [0, 1] (0 for a knob with one value). */
static double tsbo_coord(const tsbo *s, int k, int64_t x) {
  if (s->vals[k] && s->nvals[k] > 1) {
    /* Rank in the sorted list (lower bound for a value not listed). */
    int a = 0, b = s->nvals[k];
    while (a < b) {
      int mid = (a + b) / 2;
      if (s->vals[k][mid] < x)
        a = mid + 1;
      else
        b = mid;
    }
    return (double)a / (s->nvals[k] - 1);
  }
  if (s->hi[k] <= s->lo[k])
    return 0;
  double u;
  if (s->logscale[k])
    u = (log2(1.0 + (double)x) - log2(1.0 + (double)s->lo[k])) /
        (log2(1.0 + (double)s->hi[k]) - log2(1.0 + (double)s->lo[k]));
  else
    u = (double)(x - s->lo[k]) / (double)(s->hi[k] - s->lo[k]);
  return fmin(1.0, fmax(0.0, u));
}

/* Box distance of cfg from the centre: the largest knob offset. */
static double tsbo_distance(const tsbo *s, const int64_t *center,
                            const int64_t *cfg) {
  double d = 0;
  for (int k = 0; k < s->nknobs; k++) {
    int v = s->knobs[k];
    double t = fabs(tsbo_coord(s, k, cfg[v]) - tsbo_coord(s, k, center[v]));
    if (t > d)
      d = t;
  }
  return d;
}

static int tsbo_setup_knobs(tsbo *s) {
  const heron_space *sp = s->env->space;
  size_t n = (size_t)s->nknobs + 1;
  s->knobs = malloc(n * sizeof *s->knobs);
  s->vals = malloc(n * sizeof *s->vals);
  s->nvals = malloc(n * sizeof *s->nvals);
  s->lo = malloc(n * sizeof *s->lo);
  s->hi = malloc(n * sizeof *s->hi);
  s->logscale = malloc(n);
  if (!s->knobs || !s->vals || !s->nvals || !s->lo || !s->hi || !s->logscale)
    return -1;
  for (int k = 0; k < s->nknobs; k++) {
    int v = heron_space_knob(sp, k);
    s->knobs[k] = v;
    s->vals[k] = NULL;
    s->nvals[k] = 0;
    s->lo[k] = s->hi[k] = 0;
    heron_space_var_domain(sp, v, &s->lo[k], &s->hi[k], &s->vals[k],
                           &s->nvals[k]);
    s->logscale[k] =
        s->lo[k] >= 0 && (double)s->hi[k] + 1 > 100.0 * ((double)s->lo[k] + 1);
  }
  return 0;
}

/* ---- create / destroy -------------------------------------------------------
 */

static void tsbo_destroy(void *self) {
  tsbo *s = self;
  if (!s)
    return;
  free(s->knobs);
  free(s->vals);
  free(s->nvals);
  free(s->lo);
  free(s->hi);
  free(s->logscale);
  free(s);
}

static int tsbo_read_params(tsbo *s, const heron_param *p, int n,
                            heron_error *err) {
  int64_t init, cand, succ, fail, max_train;
  int rc = heron_param_int(p, n, "init", 8, 1, 1000000, &init, err);
  if (!rc)
    rc = heron_param_int(p, n, "candidates", 1000, 10, 5000, &cand, err);
  if (!rc)
    rc = heron_param_double(p, n, "length_init", 0.8, 1e-6, 100,
                            &s->length_init, err);
  if (!rc)
    rc = heron_param_double(p, n, "length_min", 0.0078125, 1e-9, 100,
                            &s->length_min, err);
  if (!rc)
    rc = heron_param_double(p, n, "length_max", 1.6, 1e-6, 100, &s->length_max,
                            err);
  if (!rc)
    rc = heron_param_int(p, n, "succ_tol", 3, 1, 1000, &succ, err);
  if (!rc)
    rc = heron_param_int(p, n, "fail_tol", 0, 0, 1000, &fail, err);
  if (!rc)
    rc = heron_param_int(p, n, "max_train", 300, 10, 5000, &max_train, err);
  if (rc)
    return rc;
  if (!(s->length_min < s->length_init && s->length_init <= s->length_max))
    return heron_error_set(err, HERON_EINVAL,
                           "tsbo: need length_min < length_init <= "
                           "length_max (got length_min=%g, length_init=%g, "
                           "length_max=%g)",
                           s->length_min, s->length_init, s->length_max);
  s->init = (int)init;
  s->candidates = (int)cand;
  s->succ_tol = (int)succ;
  s->fail_tol = (int)fail;
  s->max_train = (int)max_train;
  return HERON_OK;
}

static int tsbo_create(const heron_strategy_env *env, const heron_param *params,
                       int nparams, void **self, heron_error *err) {
  if (!env || !env->space || !env->rng || !env->log || !self)
    return heron_error_set(err, HERON_EINVAL,
                           "tsbo: env without a space, an rng or a logger");
  /* Unknown keys and out-of-range values were refused by the host against
   * tsbo_params; the reads below cannot fail. */
  int rc;
  tsbo *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "tsbo: out of memory");
  rc = tsbo_read_params(s, params, nparams, err);
  if (rc) {
    free(s);
    return rc;
  }
  s->env = env;
  s->nvars = heron_space_nvars(env->space);
  s->nfeat = heron_space_nfeatures(env->space);
  s->nknobs = heron_space_nknobs(env->space);
  if (tsbo_setup_knobs(s) != 0) {
    tsbo_destroy(s);
    return heron_error_set(err, HERON_ENOMEM, "tsbo: out of memory");
  }
  if (s->fail_tol == 0) {
    /* TuRBO's rule: ceil(max(4 / q, d / q)) for batch q and d knobs. */
    int q = env->batch > 0 ? env->batch : 1;
    int d = s->nknobs > 4 ? s->nknobs : 4;
    s->fail_tol = (d + q - 1) / q;
  }
  s->length = s->length_init;
  s->best_y = -INFINITY;
  env->log(env, HERON_LOG_DEBUG,
           "init=%d candidates=%d length %g [%g, %g] succ_tol=%d "
           "fail_tol=%d max_train=%d, %d knobs",
           s->init, s->candidates, s->length_init, s->length_min, s->length_max,
           s->succ_tol, s->fail_tol, s->max_train, s->nknobs);
  *self = s;
  return HERON_OK;
}

/* ---- The region's incumbent and the GP
 * ------------------------------------------ */

/* History index of the fastest success since the restart, or -1. */
static int tsbo_incumbent(const tsbo *s) {
  const heron_history *h = s->env->history;
  int best = -1, n = h ? heron_history_count(h) : 0;
  for (int i = s->restart_at; i < n; i++) {
    const heron_measurement *m = heron_history_get(h, i);
    if (bo_is_success(m) &&
        (best < 0 || m->gflops > heron_history_get(h, best)->gflops))
      best = i;
  }
  return best;
}

static int tsbo_fit(tsbo *s, gp **out, int *ntrain, heron_error *err) {
  const heron_history *h = s->env->history;
  int *idx = malloc((size_t)s->max_train * sizeof *idx);
  int n = idx ? bo_select_successes(h, 0, s->max_train, idx) : -1;
  double *X = n >= 0 ? malloc(((size_t)n * s->nfeat + 1) * sizeof *X) : NULL;
  double *y = n >= 0 ? malloc(((size_t)n + 1) * sizeof *y) : NULL;
  int rc = (idx && X && y)
               ? HERON_OK
               : heron_error_set(err, HERON_ENOMEM, "tsbo: out of memory");
  for (int i = 0; rc == HERON_OK && i < n; i++) {
    const heron_measurement *m = heron_history_get(h, idx[i]);
    heron_space_features(s->env->space, m->config, X + (size_t)i * s->nfeat);
    y[i] = log(m->gflops);
  }
  if (rc == HERON_OK) {
    heron_error e;
    heron_error_clear(&e);
    rc = gp_fit(X, y, n, s->nfeat, NULL, out, &e);
    if (rc)
      heron_error_set(err, rc, "tsbo: GP: %s", e.text);
  }
  *ntrain = n;
  free(idx);
  free(X);
  free(y);
  return rc;
}

/* ---- Candidates in the region
 * ------------------------------------------------------ */

/* Configs outside the box, kept with their distance to top the box up. */
typedef struct tsbo_outside {
  bo_pool pool;
  double *dist;
} tsbo_outside;

/* Offers cfg: into `in` when inside the box, else into `out`. */
static int tsbo_offer(tsbo *s, const int64_t *center, const int64_t *cfg,
                      bo_pool *in, tsbo_outside *out, int origin) {
  double d = tsbo_distance(s, center, cfg);
  if (d <= 0.5 * s->length + 1e-12)
    return bo_pool_add(in, s->env, cfg, origin);
  int at = out->pool.n;
  int rc = bo_pool_add(&out->pool, s->env, cfg, origin);
  if (rc == 1)
    out->dist[at] = d;
  return rc;
}

/* A chain of 1..k mutations of the centre; k grows with the region. */
static int tsbo_mutant(tsbo *s, const int64_t *center, int64_t *tmp,
                       int64_t *out, heron_error *err) {
  const heron_strategy_env *env = s->env;
  int kmax = (int)ceil(0.5 * s->length * s->nknobs);
  kmax = kmax < 1 ? 1 : kmax;
  int steps = 1 + (int)heron_rng_below(env->rng, (uint64_t)kmax);
  memcpy(tmp, center, (size_t)s->nvars * sizeof *tmp);
  for (int k = 0; k < steps; k++) {
    heron_error e;
    heron_error_clear(&e);
    int rc = heron_space_mutate(env->space, env->rng, tmp, NULL, 0, out, &e);
    if (rc == HERON_EUNSAT)
      return k > 0 ? HERON_OK : HERON_EUNSAT;
    if (rc)
      return heron_error_set(err, rc, "tsbo: mutate: %s", e.text);
    memcpy(tmp, out, (size_t)s->nvars * sizeof *tmp);
  }
  return HERON_OK;
}

static int tsbo_cmp_dist(const void *a, const void *b) {
  const double *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Moves the nearest outside configs into `in` until it holds `need`. */
static int tsbo_top_up(tsbo *s, bo_pool *in, tsbo_outside *out, int need) {
  int n = out->pool.n;
  double(*order)[2] = malloc(((size_t)n + 1) * sizeof *order);
  if (!order)
    return -1;
  for (int i = 0; i < n; i++) {
    order[i][0] = out->dist[i];
    order[i][1] = i;
  }
  qsort(order, (size_t)n, sizeof *order, tsbo_cmp_dist);
  for (int i = 0; i < n && in->n < need; i++) {
    int j = (int)order[i][1];
    if (bo_pool_add(in, s->env, out->pool.cfg + (size_t)j * s->nvars,
                    out->pool.origin[j]) < 0) {
      free(order);
      return -1;
    }
  }
  free(order);
  return 0;
}

static int tsbo_candidates(tsbo *s, const int64_t *center, int want,
                           bo_pool *in, int *inside, heron_error *err) {
  const heron_strategy_env *env = s->env;
  tsbo_outside out;
  memset(&out, 0, sizeof out);
  int64_t *tmp = malloc((size_t)s->nvars * 2 * sizeof *tmp);
  out.dist = malloc((size_t)s->candidates * sizeof *out.dist);
  int rc = HERON_OK;
  if (!tmp || !out.dist || bo_pool_init(in, env->space, s->candidates) != 0 ||
      bo_pool_init(&out.pool, env->space, s->candidates) != 0)
    rc = heron_error_set(err, HERON_ENOMEM, "tsbo: out of memory");
  /* Mutants of the centre make most of the region; samples land in a
   * large box now and then and keep the pool from collapsing onto one
   * neighbourhood. */
  for (int t = 0;
       rc == HERON_OK && in->n < s->candidates && t < 4 * s->candidates; t++) {
    int m;
    if (t % 4 == 3) {
      heron_error e;
      heron_error_clear(&e);
      m = heron_space_sample(env->space, env->rng, tmp + s->nvars, &e);
      if (m != HERON_OK && m != HERON_EUNSAT)
        rc = heron_error_set(err, m, "tsbo: sample: %s", e.text);
    } else {
      m = tsbo_mutant(s, center, tmp, tmp + s->nvars, err);
      if (m != HERON_OK && m != HERON_EUNSAT)
        rc = m;
    }
    if (rc == HERON_OK && m == HERON_OK &&
        tsbo_offer(s, center, tmp + s->nvars, in, &out, t % 4 == 3) < 0)
      rc = heron_error_set(err, HERON_ENOMEM, "tsbo: out of memory");
  }
  *inside = in->n;
  int need = 2 * want < s->candidates ? 2 * want : s->candidates;
  if (rc == HERON_OK && in->n < need && tsbo_top_up(s, in, &out, need) != 0)
    rc = heron_error_set(err, HERON_ENOMEM, "tsbo: out of memory");
  bo_pool_free(&out.pool);
  free(out.dist);
  free(tmp);
  return rc;
}

/* ---- propose
 * ------------------------------------------------------------------------ */

static int tsbo_random_round(tsbo *s, int want, int64_t *out, int *got,
                             const char *why, heron_error *err) {
  bo_keyset taken;
  if (bo_keyset_init(&taken, (size_t)want) != 0)
    return heron_error_set(err, HERON_ENOMEM, "tsbo: out of memory");
  heron_error e;
  heron_error_clear(&e);
  int rc =
      bo_propose_random(s->env, want, out, got, &taken, 100 + 10 * want, &e);
  bo_keyset_free(&taken);
  if (rc)
    return heron_error_set(err, rc, "tsbo: random proposals: %s", e.text);
  s->last_mode = TSBO_RANDOM;
  s->env->log(s->env, HERON_LOG_INFO, "round %d: %d random configs (%s)",
              s->rounds, *got, why);
  return HERON_OK;
}

/* Thompson sampling: one joint draw per proposal, its argmax. */
static void tsbo_thompson(tsbo *s, const gp_joint *j, const bo_pool *pool,
                          int want, int64_t *out, int *got, double *f,
                          char *taken) {
  int n = 0;
  while (n < want && n < pool->n) {
    gp_joint_sample(j, s->env->rng, f);
    int best = -1;
    for (int a = 0; a < pool->n; a++)
      if (!taken[a] && (best < 0 || f[a] > f[best]))
        best = a;
    taken[best] = 1;
    memcpy(out + (size_t)n * s->nvars, pool->cfg + (size_t)best * s->nvars,
           (size_t)s->nvars * sizeof *out);
    n++;
  }
  *got = n;
}

static int tsbo_region_round(tsbo *s, int inc, int want, int64_t *out, int *got,
                             heron_error *err) {
  const heron_strategy_env *env = s->env;
  const heron_measurement *center = heron_history_get(env->history, inc);
  double t0 = plugin_now();
  gp *g = NULL;
  gp_joint *j = NULL;
  bo_pool pool;
  memset(&pool, 0, sizeof pool);
  int ntrain = 0, inside = 0;
  int rc = tsbo_fit(s, &g, &ntrain, err);
  double t1 = plugin_now();
  if (rc == HERON_OK)
    rc = tsbo_candidates(s, center->config, want, &pool, &inside, err);
  double t2 = plugin_now();
  if (rc == HERON_OK && pool.n == 0) {
    gp_free(g);
    bo_pool_free(&pool);
    return tsbo_random_round(s, want, out, got, "no unmeasured candidate", err);
  }
  heron_error e;
  heron_error_clear(&e);
  if (rc == HERON_OK &&
      (rc = gp_joint_prepare(g, pool.feat, pool.n, &j, &e)) != HERON_OK)
    heron_error_set(err, rc, "tsbo: joint posterior: %s", e.text);
  double *f = malloc(((size_t)pool.n + 1) * sizeof *f);
  char *taken = calloc((size_t)pool.n + 1, 1);
  if (rc == HERON_OK && (!f || !taken))
    rc = heron_error_set(err, HERON_ENOMEM, "tsbo: out of memory");
  if (rc == HERON_OK)
    tsbo_thompson(s, j, &pool, want, out, got, f, taken);
  double t3 = plugin_now();
  if (rc == HERON_OK) {
    s->last_mode = TSBO_REGION;
    env->log(env, HERON_LOG_INFO,
             "round %d: %d proposals, region L=%.4g (%d of %d "
             "candidates inside), incumbent %.3g GFLOP/s",
             s->rounds, *got, s->length, inside, pool.n, center->gflops);
    env->log(env, HERON_LOG_DEBUG,
             "GP on %d successes: lengthscale %.3g, noise %.2g, %d "
             "active features; jitter %.2g; fit %.3f s, candidates %.3f s, "
             "sampling %.3f s",
             ntrain, gp_lengthscale(g), gp_noise(g), gp_active_dims(g),
             gp_joint_jitter(j), t1 - t0, t2 - t1, t3 - t2);
  }
  free(f);
  free(taken);
  gp_joint_free(j);
  gp_free(g);
  bo_pool_free(&pool);
  return rc;
}

static int tsbo_propose(void *self, int want, int64_t *out, int *got,
                        heron_error *err) {
  tsbo *s = self;
  *got = 0;
  s->last_mode = TSBO_NONE;
  if (want <= 0)
    return HERON_OK;
  s->rounds++;
  const heron_history *h = s->env->history;
  int measured = h ? heron_history_count(h) : 0, ok = 0;
  bo_count(h, 0, &ok, NULL);
  int inc = tsbo_incumbent(s);
  if (measured - s->restart_at < s->init)
    return tsbo_random_round(
        s, want, out, got,
        s->restarts ? "initial design after a restart" : "initial design", err);
  if (ok < 2 || inc < 0)
    return tsbo_random_round(s, want, out, got,
                             "no successful config in the region yet", err);
  return tsbo_region_round(s, inc, want, out, got, err);
}

/* ---- observe: the region's size
 * ------------------------------------------------------ */

static void tsbo_restart(tsbo *s) {
  s->restarts++;
  s->restart_at = s->env->history ? heron_history_count(s->env->history) : 0;
  s->length = s->length_init;
  s->succ = s->fail = 0;
  s->best_y = -INFINITY;
  s->env->log(s->env, HERON_LOG_INFO,
              "region collapsed; restart %d from random configs", s->restarts);
}

static int tsbo_observe(void *self, const heron_measurement *results, int n,
                        heron_error *err) {
  tsbo *s = self;
  double round_best = -INFINITY;
  for (int i = 0; i < n; i++)
    if (bo_is_success(&results[i]) && log(results[i].gflops) > round_best)
      round_best = log(results[i].gflops);
  int judged = s->last_mode == TSBO_REGION;
  int improved = round_best > s->best_y + TSBO_MARGIN;
  if (round_best > s->best_y)
    s->best_y = round_best;
  s->last_mode = TSBO_NONE;
  /* Random rounds (initial designs, resumed history) only set the
   * incumbent; the region is judged by its own proposals. */
  if (!judged)
    return HERON_OK;
  if (improved) {
    s->succ++;
    s->fail = 0;
  } else {
    s->fail++;
    s->succ = 0;
  }
  double old = s->length;
  if (s->succ >= s->succ_tol) {
    s->length = fmin(2.0 * s->length, s->length_max);
    s->succ = 0;
  } else if (s->fail >= s->fail_tol) {
    s->length *= 0.5;
    s->fail = 0;
  }
  if (s->length != old)
    s->env->log(s->env, HERON_LOG_INFO, "region %s: L %.4g -> %.4g",
                s->length > old ? "grows" : "shrinks", old, s->length);
  else
    s->env->log(s->env, HERON_LOG_DEBUG,
                "round %s; %d successes, %d failures in a row",
                improved ? "improved" : "did not improve", s->succ, s->fail);
  if (s->length < s->length_min)
    tsbo_restart(s);
  return HERON_OK;
}

/* ---- State
 * ----------------------------------------------------------------------------
 */

static int tsbo_save_state(void *self, const char *path, heron_error *err) {
  tsbo *s = self;
  FILE *f = fopen(path, "w");
  if (!f)
    return heron_error_set(err, HERON_EIO, "tsbo: cannot write %s", path);
  fprintf(f,
          "heron-tsbo-state 1\nlength %.17g\nsucc %d\nfail %d\nrestarts "
          "%d\nrestart_at %d\nrounds %d\nbest_y %.17g\n",
          s->length, s->succ, s->fail, s->restarts, s->restart_at, s->rounds,
          isfinite(s->best_y) ? s->best_y : -1e300);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad)
    return heron_error_set(err, HERON_EIO, "tsbo: cannot write %s", path);
  return HERON_OK;
}

static int tsbo_load_state(void *self, const char *path, heron_error *err) {
  tsbo *s = self;
  FILE *f = fopen(path, "r");
  if (!f)
    return heron_error_set(err, HERON_EIO, "tsbo: cannot read %s", path);
  int version = 0, succ = 0, fail = 0, restarts = 0, restart_at = 0, rounds = 0;
  double length = 0, best_y = 0;
  int ok = fscanf(f,
                  "heron-tsbo-state %d length %lg succ %d fail %d restarts %d "
                  "restart_at %d rounds %d best_y %lg",
                  &version, &length, &succ, &fail, &restarts, &restart_at,
                  &rounds, &best_y) == 8;
  fclose(f);
  if (!ok || version != 1)
    return heron_error_set(err, HERON_EPARSE,
                           "tsbo: %s is not a tsbo state file (version 1)",
                           path);
  int measured = s->env->history ? heron_history_count(s->env->history) : 0;
  if (!(length > 0 && length <= s->length_max) || succ < 0 || fail < 0 ||
      restarts < 0 || restart_at < 0 || restart_at > measured || rounds < 0)
    return heron_error_set(err, HERON_EPARSE,
                           "tsbo: %s: length %g outside (0, %g], or a "
                           "counter out of range (restart_at %d of %d "
                           "measured)",
                           path, length, s->length_max, restart_at, measured);
  s->length = length;
  s->succ = succ;
  s->fail = fail;
  s->restarts = restarts;
  s->restart_at = restart_at;
  s->rounds = rounds;
  s->best_y = best_y <= -1e299 ? -INFINITY : best_y;
  return HERON_OK;
}

static const heron_strategy_plugin tsbo_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "tsbo",
    .summary = "Thompson-sampling Bayesian optimisation in a trust region "
               "around the incumbent (TuRBO/SCBO style)",
    HERON_PARAM_SPECS(tsbo_params),
    .create = tsbo_create,
    .propose = tsbo_propose,
    .observe = tsbo_observe,
    .destroy = tsbo_destroy,
    .save_state = tsbo_save_state,
    .load_state = tsbo_load_state,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &tsbo_plugin;
}
