/* plugins/strategies/becbo/becbo.c - boundary-exploration constrained
 * Bayesian optimisation (after BE-CBO, Tian et al., ICML 2024).
 *
 * The known constraints of a kernel are the space's CSP, and every
 * candidate comes from the CSP (heron_space_sample, heron_space_mutate), so
 * those always hold.  The unknown constraints are what only a build or a
 * run reveals: compile errors, crashes, timeouts, wrong results.  BE-CBO
 * learns both sides:
 *
 *   objective     a GP (plugins/common/gp.h) on the features of the
 *                 successful configs, y = log GFLOP/s;
 *   feasibility   a GP classifier (gp_feas.h) on every measured config,
 *                 ok = feasible, the four failure statuses = infeasible.
 *
 * Each round draws a pool of `candidates` configs: CSP samples plus
 * mutations of the `top` best configs, minus everything measured.  Most of
 * the batch maximises EI x P(feasible) (expected improvement weighted by
 * the chance the config works at all) over the candidates estimated
 * feasible, P(feasible) >= tau.  A share `boundary` of the batch is
 * spent on the estimated feasibility boundary: candidates whose P(feasible)
 * lies within `band` of a dynamic threshold tau and whose EI is at least the
 * pool's median.  (The feasible-side restriction matters: with EI x P
 * alone, the large EI of regions where nothing ever succeeded, where the
 * objective GP has no data, outweighs a P of a few percent; all candidates
 * compete only when none clears tau.)  The fastest kernels often sit right at a
 * resource limit (registers, cache, shared memory), so that is where an EI x P
 * rule alone, which shies away from P = 0.5, under-explores.
 *
 * The threshold is the "dynamic lower bound": tau is the classifier output
 * at which a config should fail half the time.  After each round the
 * boundary picks' observed failure share f moves it, tau += 0.2 (f - 0.5),
 * within [0.05, 0.95]: picks that fail more than half the time mean the
 * classifier is optimistic there, so the band moves to safer ground, and
 * the other way round.  Within a batch, picks are spread out by local
 * penalisation: every candidate's score is multiplied by 1 - k(x, pick),
 * the objective GP's correlation with each config already picked.
 *
 * Until `init` configs are measured, or while fewer than 2 succeeded, the
 * rounds are constrained random.  The GP training sets are capped at
 * `max_train` (half the best, half the most recent) so rounds stay fast.
 *
 * State (save_state): tau, the round count and the boundary statistics.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bo_util.h"
#include "gp.h"
#include "gp_feas.h"
#include "heron/strategy.h"
#include "plugin_util.h"

/* The feasibility threshold tau moves within these bounds. */
#define BECBO_TAU_MIN 0.05
#define BECBO_TAU_MAX 0.95

static const heron_param_spec becbo_params[] = {
    {.key = "init",
     .kind = HERON_PARAM_INT,
     .default_value = "16",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1000000,
     .help = "constrained random configs measured before the models take over"},
    {.key = "candidates",
     .kind = HERON_PARAM_INT,
     .default_value = "1000",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 10,
     .hi = 100000,
     .help = "candidate configs scored per round"},
    {.key = "mutate_share",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.5",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help = "share of the candidates made by mutating the best configs (the "
             "rest are CSP samples)"},
    {.key = "top",
     .kind = HERON_PARAM_INT,
     .default_value = "8",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 100000,
     .help = "best configs the mutations start from"},
    {.key = "boundary",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.25",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help =
         "share of each batch chosen near the estimated feasibility boundary"},
    {.key = "band",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.15",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0.01,
     .hi = 0.5,
     .help = "half-width, in P(feasible), of the boundary band around the "
             "threshold"},
    {.key = "tau",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.5",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = BECBO_TAU_MIN,
     .hi = BECBO_TAU_MAX,
     .help = "initial feasibility threshold (adapted every round)"},
    {.key = "xi",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.01",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 10,
     .help = "expected-improvement margin, in log(GFLOP/s)"},
    {.key = "max_train",
     .kind = HERON_PARAM_INT,
     .default_value = "300",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 10,
     .hi = 5000,
     .help = "most measurements each GP is trained on"},
    {.key = NULL},
};

/* Where a candidate came from, for the logs. */
enum { BECBO_SAMPLED = 0, BECBO_MUTATED = 1 };

#define BECBO_TAU_STEP 0.2

typedef struct becbo {
  const heron_strategy_env *env;
  int nvars, nfeat;
  /* parameters */
  int init, candidates, top, max_train;
  double mutate_share, boundary, band, xi;
  /* state */
  double tau;
  int rounds;
  long boundary_tried, boundary_failed;
  bo_keyset boundary_keys; /* the last round's boundary picks */
} becbo;

/* Everything one model round computes, freed together. */
typedef struct becbo_round {
  gp *obj;
  gp_feas *feas;
  double best_y;
  bo_pool pool;
  double *ei, *pf, *pen;
  char *taken;
  int ntrain, nfail;
} becbo_round;

static void becbo_round_free(becbo_round *r) {
  gp_free(r->obj);
  gp_feas_free(r->feas);
  bo_pool_free(&r->pool);
  free(r->ei);
  free(r->pf);
  free(r->pen);
  free(r->taken);
}

/* ---- create / destroy ------------------------------------------------------
 */

static int becbo_read_params(becbo *s, const heron_param *p, int n,
                             heron_error *err) {
  int64_t init, cand, top, max_train;
  double tau;
  int rc = heron_param_int(p, n, "init", 16, 1, 1000000, &init, err);
  if (!rc)
    rc = heron_param_int(p, n, "candidates", 1000, 10, 100000, &cand, err);
  if (!rc)
    rc = heron_param_double(p, n, "mutate_share", 0.5, 0, 1, &s->mutate_share,
                            err);
  if (!rc)
    rc = heron_param_int(p, n, "top", 8, 1, 100000, &top, err);
  if (!rc)
    rc = heron_param_double(p, n, "boundary", 0.25, 0, 1, &s->boundary, err);
  if (!rc)
    rc = heron_param_double(p, n, "band", 0.15, 0.01, 0.5, &s->band, err);
  if (!rc)
    rc = heron_param_double(p, n, "tau", 0.5, BECBO_TAU_MIN, BECBO_TAU_MAX,
                            &tau, err);
  if (!rc)
    rc = heron_param_double(p, n, "xi", 0.01, 0, 10, &s->xi, err);
  if (!rc)
    rc = heron_param_int(p, n, "max_train", 300, 10, 5000, &max_train, err);
  if (rc)
    return rc;
  s->init = (int)init;
  s->candidates = (int)cand;
  s->top = (int)top;
  s->max_train = (int)max_train;
  s->tau = tau;
  return HERON_OK;
}

static int becbo_create(const heron_strategy_env *env,
                        const heron_param *params, int nparams, void **self,
                        heron_error *err) {
  if (!env || !env->space || !env->rng || !env->log || !self)
    return heron_error_set(err, HERON_EINVAL,
                           "becbo: env without a space, an rng or a logger");
  /* Unknown keys and out-of-range values were refused by the host against
   * becbo_params; the reads below cannot fail. */
  int rc;
  becbo *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  rc = becbo_read_params(s, params, nparams, err);
  if (rc) {
    free(s);
    return rc;
  }
  if (bo_keyset_init(&s->boundary_keys, 64) != 0) {
    free(s);
    return heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  }
  s->env = env;
  s->nvars = heron_space_nvars(env->space);
  s->nfeat = heron_space_nfeatures(env->space);
  env->log(env, HERON_LOG_DEBUG,
           "init=%d candidates=%d mutate_share=%g top=%d boundary=%g "
           "band=%g tau=%g xi=%g max_train=%d",
           s->init, s->candidates, s->mutate_share, s->top, s->boundary,
           s->band, s->tau, s->xi, s->max_train);
  *self = s;
  return HERON_OK;
}

static void becbo_destroy(void *self) {
  becbo *s = self;
  if (!s)
    return;
  bo_keyset_free(&s->boundary_keys);
  free(s);
}

/* ---- The models ------------------------------------------------------------
 */

/* Feature rows of the history entries idx[0..n) into X[n * nfeat]. */
static void becbo_features(const becbo *s, const int *idx, int n, double *X) {
  for (int i = 0; i < n; i++)
    heron_space_features(s->env->space,
                         heron_history_get(s->env->history, idx[i])->config,
                         X + (size_t)i * s->nfeat);
}

/* Fits the objective GP on the capped successes; sets r->best_y and
 * writes the chosen indices to idx (max_train entries). */
static int becbo_fit_objective(becbo *s, becbo_round *r, int *idx,
                               heron_error *err) {
  const heron_history *h = s->env->history;
  int n = bo_select_successes(h, 0, s->max_train, idx);
  if (n < 0)
    return heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  double *X = malloc(((size_t)n * s->nfeat + 1) * sizeof *X);
  double *y = malloc(((size_t)n + 1) * sizeof *y);
  int rc = (X && y)
               ? HERON_OK
               : heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  if (rc == HERON_OK) {
    becbo_features(s, idx, n, X);
    r->best_y = -INFINITY;
    for (int i = 0; i < n; i++) {
      y[i] = log(heron_history_get(h, idx[i])->gflops);
      if (y[i] > r->best_y)
        r->best_y = y[i];
    }
    heron_error e;
    heron_error_clear(&e);
    rc = gp_fit(X, y, n, s->nfeat, NULL, &r->obj, &e);
    if (rc)
      heron_error_set(err, rc, "becbo: objective model: %s", e.text);
  }
  r->ntrain = n;
  free(X);
  free(y);
  return rc;
}

/* Fits the feasibility classifier on the most recent failures (up to half
 * the cap) plus successes; leaves r->feas NULL when nothing failed yet. */
static int becbo_fit_feasibility(becbo *s, becbo_round *r, heron_error *err) {
  const heron_history *h = s->env->history;
  int cap = s->max_train;
  int *idx = malloc(((size_t)cap * 2 + 1) * sizeof *idx);
  if (!idx)
    return heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  int nf = bo_select_failures(h, 0, cap / 2, idx);
  r->nfail = nf;
  if (nf == 0) {
    free(idx);
    return HERON_OK;
  }
  int ns = bo_select_successes(h, 0, cap - nf, idx + nf);
  if (ns < 0) {
    free(idx);
    return heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  }
  int n = nf + ns;
  double *X = malloc(((size_t)n * s->nfeat + 1) * sizeof *X);
  int *ok = malloc((size_t)n * sizeof *ok);
  int rc = (X && ok)
               ? HERON_OK
               : heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  if (rc == HERON_OK) {
    becbo_features(s, idx, n, X);
    for (int i = 0; i < n; i++)
      ok[i] = i >= nf;
    heron_error e;
    heron_error_clear(&e);
    rc = gp_feas_fit(X, ok, n, s->nfeat, &r->feas, &e);
    if (rc)
      heron_error_set(err, rc, "becbo: feasibility model: %s", e.text);
  }
  free(X);
  free(ok);
  free(idx);
  return rc;
}

/* ---- The candidate pool
 * ------------------------------------------------------- */

/* A mutation of one of the best configs: 1 to 3 knobs changed in a chain,
 * parents drawn with a bias towards the very best. */
static int becbo_mutant(becbo *s, const int *best, int nbest, int64_t *tmp,
                        int64_t *out, heron_error *err) {
  const heron_strategy_env *env = s->env;
  double u = heron_rng_uniform(env->rng);
  int parent = best[(int)(u * u * nbest)];
  memcpy(tmp, heron_history_get(env->history, parent)->config,
         (size_t)s->nvars * sizeof *tmp);
  int steps = 1 + (int)heron_rng_below(env->rng, 3);
  for (int k = 0; k < steps; k++) {
    heron_error e;
    heron_error_clear(&e);
    int rc = heron_space_mutate(env->space, env->rng, tmp, NULL, 0, out, &e);
    if (rc == HERON_EUNSAT)
      return k > 0 ? HERON_OK : HERON_EUNSAT;
    if (rc)
      return heron_error_set(err, rc, "becbo: mutate: %s", e.text);
    memcpy(tmp, out, (size_t)s->nvars * sizeof *tmp);
  }
  return HERON_OK;
}

/* The history indices of the `top` fastest successes, fastest first. */
static int becbo_top(becbo *s, int *out) {
  const heron_history *h = s->env->history;
  int n = 0, total = heron_history_count(h);
  for (int i = 0; i < total; i++) {
    const heron_measurement *m = heron_history_get(h, i);
    if (!bo_is_success(m))
      continue;
    /* Insertion into a short sorted list. */
    int at = n < s->top ? n++ : s->top;
    while (at > 0 && heron_history_get(h, out[at - 1])->gflops < m->gflops) {
      if (at < s->top)
        out[at] = out[at - 1];
      at--;
    }
    if (at < s->top)
      out[at] = i;
  }
  return n;
}

static int becbo_build_pool(becbo *s, becbo_round *r, heron_error *err) {
  const heron_strategy_env *env = s->env;
  if (bo_pool_init(&r->pool, env->space, s->candidates) != 0)
    return heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  int *best = malloc((size_t)s->top * sizeof *best);
  int64_t *tmp = malloc((size_t)s->nvars * 2 * sizeof *tmp);
  if (!best || !tmp) {
    free(best);
    free(tmp);
    return heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  }
  int nbest = becbo_top(s, best), rc = HERON_OK;
  int want_mut = (int)(s->candidates * s->mutate_share + 0.5);
  /* Mutants first, then samples fill the pool; each source gets a bounded
   * number of tries so a small space cannot loop forever. */
  for (int t = 0;
       rc == HERON_OK && nbest > 0 && r->pool.n < want_mut && t < 3 * want_mut;
       t++) {
    int m = becbo_mutant(s, best, nbest, tmp, tmp + s->nvars, err);
    if (m == HERON_EUNSAT)
      continue;
    if (m != HERON_OK)
      rc = m;
    else if (bo_pool_add(&r->pool, env, tmp + s->nvars, BECBO_MUTATED) < 0)
      rc = heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  }
  for (int t = 0;
       rc == HERON_OK && r->pool.n < s->candidates && t < 3 * s->candidates;
       t++) {
    heron_error e;
    heron_error_clear(&e);
    int m = heron_space_sample(env->space, env->rng, tmp, &e);
    if (m == HERON_EUNSAT)
      continue;
    if (m != HERON_OK)
      rc = heron_error_set(err, m, "becbo: sample: %s", e.text);
    else if (bo_pool_add(&r->pool, env, tmp, BECBO_SAMPLED) < 0)
      rc = heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  }
  free(best);
  free(tmp);
  return rc;
}

/* ---- Scoring and picking
 * ------------------------------------------------------- */

static int becbo_score(becbo *s, becbo_round *r, heron_error *err) {
  int m = r->pool.n;
  double *mean = malloc((size_t)m * sizeof *mean);
  double *var = malloc((size_t)m * sizeof *var);
  r->ei = malloc((size_t)m * sizeof *r->ei);
  r->pf = malloc((size_t)m * sizeof *r->pf);
  r->pen = malloc((size_t)m * sizeof *r->pen);
  r->taken = calloc((size_t)m, 1);
  int rc = (mean && var && r->ei && r->pf && r->pen && r->taken)
               ? HERON_OK
               : heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  heron_error e;
  heron_error_clear(&e);
  if (rc == HERON_OK &&
      (rc = gp_predict(r->obj, r->pool.feat, m, mean, var, &e)) != HERON_OK)
    heron_error_set(err, rc, "becbo: objective model: %s", e.text);
  if (rc == HERON_OK && r->feas &&
      (rc = gp_feas_prob(r->feas, r->pool.feat, m, r->pf, &e)) != HERON_OK)
    heron_error_set(err, rc, "becbo: feasibility model: %s", e.text);
  for (int j = 0; rc == HERON_OK && j < m; j++) {
    r->ei[j] = gp_ei(mean[j], sqrt(var[j]), r->best_y, s->xi);
    if (!r->feas)
      r->pf[j] = 1.0;
    r->pen[j] = 1.0;
  }
  free(mean);
  free(var);
  return rc;
}

/* Marks pick j and penalises every candidate by its correlation with j. */
static void becbo_take(becbo_round *r, int j) {
  const bo_pool *p = &r->pool;
  r->taken[j] = 1;
  for (int l = 0; l < p->n; l++)
    if (!r->taken[l])
      r->pen[l] *= 1.0 - gp_correlation(r->obj, p->feat + (size_t)l * p->nfeat,
                                        p->feat + (size_t)j * p->nfeat);
}

/* The best untaken candidate by EI x P(feasible) x penalty among those
 * with P(feasible) >= floor, or -1. */
static int becbo_pick_main(const becbo_round *r, double floor_p) {
  int best = -1;
  double bv = -1;
  for (int j = 0; j < r->pool.n; j++) {
    double v = r->ei[j] * r->pf[j] * r->pen[j];
    if (!r->taken[j] && r->pf[j] >= floor_p && v > bv) {
      bv = v;
      best = j;
    }
  }
  return best;
}

/* The median EI of the pool (the bar a boundary pick must clear). */
static double becbo_median_ei(const becbo_round *r) {
  int m = r->pool.n;
  double *v = malloc((size_t)m * sizeof *v);
  if (!v)
    return 0;
  memcpy(v, r->ei, (size_t)m * sizeof *v);
  qsort(v, (size_t)m, sizeof *v, plugin_cmp_double);
  double med = v[m / 2];
  free(v);
  return med;
}

/* The best untaken candidate inside the boundary band with EI at least
 * `min_ei`, scored by EI x closeness to tau x penalty; -1 when none. */
static int becbo_pick_boundary(const becbo *s, const becbo_round *r,
                               double min_ei) {
  int best = -1;
  double bv = -1;
  for (int j = 0; j < r->pool.n; j++) {
    double gap = fabs(r->pf[j] - s->tau);
    if (r->taken[j] || gap > s->band || r->ei[j] < min_ei)
      continue;
    double v = r->ei[j] * (1.0 - gap / s->band) * r->pen[j];
    if (v > bv) {
      bv = v;
      best = j;
    }
  }
  return best;
}

/* Picks the batch: boundary share first from the band (when the classifier
 * exists), the rest by EI x P; copies configs to out.  Returns how many. */
static int becbo_pick(becbo *s, becbo_round *r, int want, int64_t *out,
                      int *nboundary) {
  int nb = r->feas ? (int)floor(s->boundary * want + 0.5) : 0;
  int n = 0, b = 0;
  double min_ei = nb > 0 ? becbo_median_ei(r) : 0;
  bo_keyset_clear(&s->boundary_keys);
  while (n < want) {
    int j = -1, at_boundary = 0;
    /* Interleave: main picks first, so the batch's best guess is never
     * crowded out by the boundary share. */
    if (b < nb && n >= want - nb) {
      j = becbo_pick_boundary(s, r, min_ei);
      at_boundary = j >= 0;
    }
    /* Main picks stay on the side of the threshold estimated feasible:
     * EI x P alone lets the huge EI of never-measured infeasible regions
     * (where the objective GP has no data) outweigh a P of a few percent. */
    if (j < 0)
      j = becbo_pick_main(r, s->tau);
    if (j < 0)
      j = becbo_pick_main(r, 0.0);
    if (j < 0)
      break;
    becbo_take(r, j);
    s->env->log(s->env, HERON_LOG_DEBUG, "  pick %s: EI %.3g P(feasible) %.3f",
                at_boundary ? "boundary" : "main", r->ei[j], r->pf[j]);
    memcpy(out + (size_t)n * s->nvars, r->pool.cfg + (size_t)j * s->nvars,
           (size_t)s->nvars * sizeof *out);
    if (at_boundary) {
      b++;
      bo_keyset_add(
          &s->boundary_keys,
          plugin_config_key(s->env->space, r->pool.cfg + (size_t)j * s->nvars));
    }
    n++;
  }
  *nboundary = b;
  return n;
}

/* ---- propose
 * ------------------------------------------------------------------- */

static int becbo_random_round(becbo *s, int want, int64_t *out, int *got,
                              const char *why, heron_error *err) {
  bo_keyset taken;
  if (bo_keyset_init(&taken, (size_t)want) != 0)
    return heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  heron_error e;
  heron_error_clear(&e);
  int rc =
      bo_propose_random(s->env, want, out, got, &taken, 100 + 10 * want, &e);
  bo_keyset_free(&taken);
  bo_keyset_clear(&s->boundary_keys);
  if (rc)
    return heron_error_set(err, rc, "becbo: random proposals: %s", e.text);
  s->env->log(s->env, HERON_LOG_INFO, "round %d: %d random configs (%s)",
              s->rounds, *got, why);
  return HERON_OK;
}

static int becbo_model_round(becbo *s, int want, int64_t *out, int *got,
                             heron_error *err) {
  const heron_strategy_env *env = s->env;
  becbo_round r;
  memset(&r, 0, sizeof r);
  double t0 = plugin_now();
  int *idx = malloc((size_t)s->max_train * sizeof *idx);
  int rc = idx ? HERON_OK
               : heron_error_set(err, HERON_ENOMEM, "becbo: out of memory");
  if (rc == HERON_OK)
    rc = becbo_fit_objective(s, &r, idx, err);
  if (rc == HERON_OK)
    rc = becbo_fit_feasibility(s, &r, err);
  double t1 = plugin_now();
  if (rc == HERON_OK)
    rc = becbo_build_pool(s, &r, err);
  double t2 = plugin_now();
  if (rc == HERON_OK && r.pool.n == 0) {
    free(idx);
    becbo_round_free(&r);
    return becbo_random_round(s, want, out, got, "no unmeasured candidate",
                              err);
  }
  if (rc == HERON_OK)
    rc = becbo_score(s, &r, err);
  int nb = 0;
  if (rc == HERON_OK)
    *got = becbo_pick(s, &r, want, out, &nb);
  double t3 = plugin_now();
  if (rc == HERON_OK) {
    env->log(env, HERON_LOG_INFO,
             "round %d: %d proposals (%d at the boundary, tau %.2f) "
             "from %d candidates; best %.3g GFLOP/s",
             s->rounds, *got, nb, s->tau, r.pool.n, exp(r.best_y));
    env->log(env, HERON_LOG_DEBUG,
             "objective GP on %d successes: lengthscale %.3g, noise "
             "%.2g, %d active features; classifier on %d failures%s%.3g; "
             "fit %.3f s, pool %.3f s, score %.3f s",
             r.ntrain, gp_lengthscale(r.obj), gp_noise(r.obj),
             gp_active_dims(r.obj), r.nfail,
             r.feas ? ", lengthscale " : " (none)",
             r.feas ? gp_lengthscale(gp_feas_model(r.feas)) : 0.0, t1 - t0,
             t2 - t1, t3 - t2);
  }
  free(idx);
  becbo_round_free(&r);
  return rc;
}

static int becbo_propose(void *self, int want, int64_t *out, int *got,
                         heron_error *err) {
  becbo *s = self;
  *got = 0;
  if (want <= 0)
    return HERON_OK;
  s->rounds++;
  int measured = s->env->history ? heron_history_count(s->env->history) : 0;
  int ok = 0;
  bo_count(s->env->history, 0, &ok, NULL);
  if (measured < s->init)
    return becbo_random_round(s, want, out, got, "initial design", err);
  if (ok < 2)
    return becbo_random_round(s, want, out, got,
                              "fewer than 2 successful configs", err);
  return becbo_model_round(s, want, out, got, err);
}

/* ---- observe: the dynamic threshold
 * ---------------------------------------------- */

static int becbo_observe(void *self, const heron_measurement *results, int n,
                         heron_error *err) {
  becbo *s = self;
  int tried = 0, failed = 0;
  for (int i = 0; i < n; i++) {
    const heron_measurement *m = &results[i];
    if (!m->config || s->boundary_keys.n == 0 ||
        !bo_keyset_has(&s->boundary_keys,
                       plugin_config_key(s->env->space, m->config)))
      continue;
    tried++;
    failed += bo_is_failure(m);
  }
  bo_keyset_clear(&s->boundary_keys);
  if (tried == 0)
    return HERON_OK;
  s->boundary_tried += tried;
  s->boundary_failed += failed;
  double old = s->tau, f = (double)failed / tried;
  s->tau = fmin(BECBO_TAU_MAX,
                fmax(BECBO_TAU_MIN, s->tau + BECBO_TAU_STEP * (f - 0.5)));
  s->env->log(s->env, HERON_LOG_DEBUG,
              "%d of %d boundary picks failed; tau %.3f -> %.3f", failed, tried,
              old, s->tau);
  return HERON_OK;
}

/* ---- State
 * ------------------------------------------------------------------------- */

static int becbo_save_state(void *self, const char *path, heron_error *err) {
  becbo *s = self;
  FILE *f = fopen(path, "w");
  if (!f)
    return heron_error_set(err, HERON_EIO, "becbo: cannot write %s", path);
  fprintf(f, "heron-becbo-state 1\ntau %.17g\nrounds %d\nboundary %ld %ld\n",
          s->tau, s->rounds, s->boundary_tried, s->boundary_failed);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad)
    return heron_error_set(err, HERON_EIO, "becbo: cannot write %s", path);
  return HERON_OK;
}

static int becbo_load_state(void *self, const char *path, heron_error *err) {
  becbo *s = self;
  FILE *f = fopen(path, "r");
  if (!f)
    return heron_error_set(err, HERON_EIO, "becbo: cannot read %s", path);
  int version = 0, rounds = 0;
  double tau = 0;
  long tried = 0, failed = 0;
  int ok = fscanf(f, "heron-becbo-state %d tau %lg rounds %d boundary %ld %ld",
                  &version, &tau, &rounds, &tried, &failed) == 5;
  fclose(f);
  if (!ok || version != 1)
    return heron_error_set(err, HERON_EPARSE,
                           "becbo: %s is not a becbo state file (version 1)",
                           path);
  if (!(tau >= BECBO_TAU_MIN && tau <= BECBO_TAU_MAX) || rounds < 0 ||
      tried < 0 || failed < 0 || failed > tried)
    return heron_error_set(err, HERON_EPARSE,
                           "becbo: %s: tau %g outside [%g, %g] or bad "
                           "counters",
                           path, tau, BECBO_TAU_MIN, BECBO_TAU_MAX);
  s->tau = tau;
  s->rounds = rounds;
  s->boundary_tried = tried;
  s->boundary_failed = failed;
  return HERON_OK;
}

static const heron_strategy_plugin becbo_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "becbo",
    .summary = "constrained Bayesian optimisation exploring the feasibility "
               "boundary (GP objective x GP classifier)",
    HERON_PARAM_SPECS(becbo_params),
    .create = becbo_create,
    .propose = becbo_propose,
    .observe = becbo_observe,
    .destroy = becbo_destroy,
    .save_state = becbo_save_state,
    .load_state = becbo_load_state,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &becbo_plugin;
}
