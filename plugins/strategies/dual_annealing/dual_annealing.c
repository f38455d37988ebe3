/* plugins/strategies/dual_annealing/dual_annealing.c - dual annealing,
 * after Kernel Tuner's "dual_annealing" strategy (scipy.optimize.
 * dual_annealing on a continuous relaxation), carried over to the discrete
 * constrained space (see README.md for where it departs).
 *
 * The relaxation is Kernel Tuner's: knob i is a coordinate in
 * [0, eps * n_i), n_i its number of values and eps = min 1 / n_i, each
 * value a cell of width eps.  A point decodes to the config of its cells,
 * made valid by heron_space_repair; its energy is that config's time in
 * ms.  The search is scipy's generalized simulated annealing: iteration i
 * runs at the visiting temperature T = T0 (2^(qv-1) - 1) / ((i+2)^(qv-1)
 * - 1) a strategy chain of 2 * knobs visits (the first half moving every
 * coordinate, the second one coordinate each) drawn from the distorted
 * Cauchy-Lorentz visiting distribution of parameter qv and wrapped into
 * the bounds, each accepted when better or with the generalized Metropolis
 * probability of parameter qa at T / (i+1); then a local search (a
 * best-improvement climb over the adjacent neighbourhood) from the best
 * point when the chain improved it, or from the chain's minimum after too
 * long without improvement.  Below T0 * restart_temp_ratio the annealing
 * restarts at a random point; after maxiter iterations the whole search
 * starts over.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "local_search.h"

static const heron_param_spec da_params[] = {
    {.key = "maxiter",
     .kind = HERON_PARAM_INT,
     .default_value = "1000",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1e9,
     .help = "global iterations before the search starts over (scipy's "
             "maxiter)"},
    {.key = "initial_temp",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "5230",
     .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX,
     .lo = 0.01,
     .hi = 5e4,
     .help = "initial visiting temperature"},
    {.key = "restart_temp_ratio",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "2e-5",
     .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX_OPEN,
     .lo = 0,
     .hi = 1,
     .help = "the annealing restarts when the temperature falls below "
             "initial_temp times this"},
    {.key = "visit",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "2.62",
     .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX_OPEN,
     .lo = 1,
     .hi = 3,
     .help = "visiting distribution parameter qv, in (1, 3)"},
    {.key = "accept",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "-5.0",
     .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX,
     .lo = -1e4,
     .hi = -5,
     .help = "acceptance distribution parameter qa, in (-1e4, -5]"},
    {.key = "no_local_search",
     .kind = HERON_PARAM_BOOL,
     .default_value = "false",
     .help = "classical generalized simulated annealing, without local "
             "searches"},
    {.key = NULL},
};

/* What the search waits for. */
enum {
  DA_INIT,  /* the energy of the first point */
  DA_RESET, /* the energy of a reset point */
  DA_ITER,  /* the start of iteration i */
  DA_VISIT, /* the energy of visit j of the chain */
  DA_LS1,   /* the local search from the best point */
  DA_LS2    /* the local search from the chain's minimum */
};

typedef struct da_point {
  double *x;    /* the relaxed coordinates, one per knob */
  int64_t *cfg; /* the config it stands for */
  double e;     /* its energy */
} da_point;

typedef struct da {
  ls_base b;
  ls_climb climb;
  /* parameters */
  int64_t maxiter;
  double T0, restart_ratio, qv, qa;
  int local_search;
  /* the relaxation */
  double eps, *range, *idx;
  /* the visiting distribution's constants */
  double factor4_p, factor6;
  /* the state */
  int phase, dim;
  int64_t i, iteration;
  int j, improved;
  int cur_drawn, visit_drawn; /* a point drawn whose energy is pending */
  int reinit;                 /* reset points drawn with a failed energy */
  long not_improved, not_improved_max, resets;
  double temperature, temp_step;
  da_point cur, best, min, visit;
} da;

static int da_point_init(da_point *p, int dim, int nv) {
  p->x = malloc((size_t)(dim ? dim : 1) * sizeof *p->x);
  p->cfg = malloc((size_t)(nv ? nv : 1) * sizeof *p->cfg);
  return p->x && p->cfg ? HERON_OK : HERON_ENOMEM;
}

static void da_point_copy(const da *s, da_point *to, const da_point *from) {
  memcpy(to->x, from->x, (size_t)s->dim * sizeof *to->x);
  memcpy(to->cfg, from->cfg, (size_t)s->b.nv * sizeof *to->cfg);
  to->e = from->e;
}

static void da_destroy(void *self) {
  da *s = self;
  if (!s)
    return;
  s->b.env->log(s->b.env, HERON_LOG_DEBUG, "%lld iterations, %ld resets",
                (long long)s->iteration, s->resets);
  da_point *pts[] = {&s->cur, &s->best, &s->min, &s->visit};
  for (int k = 0; k < 4; k++) {
    free(pts[k]->x);
    free(pts[k]->cfg);
  }
  free(s->range);
  free(s->idx);
  ls_climb_free(&s->climb);
  ls_free(&s->b);
  free(s);
}

static int da_create(const heron_strategy_env *env, const heron_param *params,
                     int nparams, void **self, heron_error *err) {
  da *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "dual_annealing: out of memory");
  int rc = ls_init(&s->b, env, "dual_annealing", err);
  if (rc) {
    free(s);
    return rc;
  }
  s->dim = s->b.nk;
  s->range = malloc((size_t)(s->dim ? s->dim : 1) * sizeof *s->range);
  s->idx = malloc((size_t)(s->dim ? s->dim : 1) * sizeof *s->idx);
  rc = ls_climb_init(&s->climb, &s->b, HERON_NEIGHBOURS_ADJACENT, 0, 1);
  da_point *pts[] = {&s->cur, &s->best, &s->min, &s->visit};
  for (int k = 0; k < 4 && rc == HERON_OK; k++)
    rc = da_point_init(pts[k], s->dim, s->b.nv);
  if (rc || !s->range || !s->idx) {
    da_destroy(s);
    return heron_error_set(err, HERON_ENOMEM, "dual_annealing: out of memory");
  }
  s->maxiter = heron_param_int_value(params, nparams, "maxiter", 1000);
  s->T0 = heron_param_double_value(params, nparams, "initial_temp", 5230);
  s->restart_ratio =
      heron_param_double_value(params, nparams, "restart_temp_ratio", 2e-5);
  s->qv = heron_param_double_value(params, nparams, "visit", 2.62);
  s->qa = heron_param_double_value(params, nparams, "accept", -5.0);
  s->local_search =
      !heron_param_int_value(params, nparams, "no_local_search", 0);
  s->eps = pop_coords_eps(&s->b.coords);
  for (int i = 0; i < s->dim; i++)
    s->range[i] = s->eps * (double)s->b.coords.len[i];
  /* scipy's VisitingDistribution constants. */
  double qv = s->qv, pi = acos(-1.0);
  double factor2 = exp((4.0 - qv) * log(qv - 1.0));
  double factor3 = exp((2.0 - qv) * log(2.0) / (qv - 1.0));
  s->factor4_p = sqrt(pi) * factor2 / (factor3 * (3.0 - qv));
  double factor5 = 1.0 / (qv - 1.0) - 0.5;
  double d1 = 2.0 - factor5;
  s->factor6 =
      pi * (1.0 - factor5) / sin(pi * (1.0 - factor5)) / exp(lgamma(d1));
  s->phase = DA_INIT;
  *self = s;
  return HERON_OK;
}

/* ---- The relaxation ------------------------------------------------------ */

/* Decodes p->x into p->cfg (valid): the config of its cells.  1, 0 (no
 * valid config), or < 0. */
static int da_decode(da *s, da_point *p, heron_error *err) {
  for (int i = 0; i < s->dim; i++)
    s->idx[i] = p->x[i] / s->eps - 0.5;
  return ls_config_at(&s->b, s->idx, p->cfg, err);
}

/* Sets p->x to the centres of the cells of p->cfg. */
static void da_encode(da *s, da_point *p) {
  pop_coords_scale(&s->b.coords, p->cfg, s->eps, p->x);
}

/* A point drawn uniformly within the bounds. */
static int da_uniform(da *s, da_point *p, heron_error *err) {
  for (int i = 0; i < s->dim; i++)
    p->x[i] = heron_rng_uniform(s->b.env->rng) * s->range[i];
  return da_decode(s, p, err);
}

/* ---- scipy's visiting distribution --------------------------------------- */

static double da_visit_fn(da *s, double temperature) {
  heron_rng *rng = s->b.env->rng;
  double x = heron_rng_normal(rng), y = heron_rng_normal(rng);
  double qv = s->qv;
  double factor1 = exp(log(temperature) / (qv - 1.0));
  double factor4 = s->factor4_p * factor1;
  x *= exp(-(qv - 1.0) * log(s->factor6 / factor4) / (3.0 - qv));
  double den = exp((qv - 1.0) * log(fabs(y)) / (3.0 - qv));
  return x / den;
}

static double da_wrap(double x, double range) {
  double b = fmod(x, range) + range;
  return fmod(b, range);
}

/* Visit j of the chain from the current point into s->visit. */
static int da_visiting(da *s, heron_error *err) {
  const double tail = 1e8;
  heron_rng *rng = s->b.env->rng;
  memcpy(s->visit.x, s->cur.x, (size_t)s->dim * sizeof *s->visit.x);
  if (s->j < s->dim) {
    double upper = heron_rng_uniform(rng), lower = heron_rng_uniform(rng);
    for (int i = 0; i < s->dim; i++) {
      double v = da_visit_fn(s, s->temperature);
      if (v > tail)
        v = tail * upper;
      else if (v < -tail)
        v = -tail * lower;
      s->visit.x[i] = da_wrap(v + s->cur.x[i], s->range[i]);
    }
  } else {
    int i = s->j - s->dim;
    double v = da_visit_fn(s, s->temperature);
    if (v > tail)
      v = tail * heron_rng_uniform(rng);
    else if (v < -tail)
      v = -tail * heron_rng_uniform(rng);
    s->visit.x[i] = da_wrap(v + s->cur.x[i], s->range[i]);
  }
  return da_decode(s, &s->visit, err);
}

/* ---- The strategy chain and its local searches --------------------------- */

/* scipy's accept_reject for a visit no better than the current point. */
static void da_accept_reject(da *s) {
  double r = heron_rng_uniform(s->b.env->rng);
  double t = 1.0 - (1.0 - s->qa) * (s->visit.e - s->cur.e) / s->temp_step;
  double pqv = t > 0 ? exp(log(t) / (1.0 - s->qa)) : 0;
  if (r <= pqv) {
    da_point_copy(s, &s->cur, &s->visit);
    da_point_copy(s, &s->min, &s->cur);
  }
  if (s->not_improved >= s->not_improved_max &&
      (s->j == 0 || s->cur.e < s->min.e))
    da_point_copy(s, &s->min, &s->cur);
}

/* The visit's energy is known: scipy's chain step. */
static void da_chain_step(da *s) {
  if (s->visit.e < s->cur.e) {
    da_point_copy(s, &s->cur, &s->visit);
    if (s->visit.e < s->best.e) {
      da_point_copy(s, &s->best, &s->visit);
      s->improved = 1;
      s->not_improved = 0;
    }
  } else {
    da_accept_reject(s);
  }
}

/* Starts a fresh energy state at s->cur (known): best and min follow. */
static void da_fresh(da *s, int first) {
  if (first)
    da_point_copy(s, &s->best, &s->cur);
  da_point_copy(s, &s->min, &s->cur);
  s->not_improved = 0;
  s->not_improved_max = 1000;
  s->i = 0;
  s->phase = DA_ITER;
}

/* The end of a local search: its result as a point. */
static void da_ls_result(da *s, da_point *p) {
  memcpy(p->cfg, s->climb.cur, (size_t)s->b.nv * sizeof *p->cfg);
  p->e = s->climb.cur_cost;
  da_encode(s, p);
}

/* Starts the local search from p, or skips to the next phase. */
static void da_ls_start(da *s, const da_point *p, int phase) {
  ls_climb_start(&s->climb, &s->b, p->cfg, p->e);
  s->phase = phase;
}

/* After the chain: the local searches scipy would run, then the next
 * iteration. */
static void da_after_chain(da *s) {
  if (s->local_search && s->improved) {
    da_ls_start(s, &s->best, DA_LS1);
    return;
  }
  if (s->local_search && s->not_improved >= s->not_improved_max) {
    da_ls_start(s, &s->min, DA_LS2);
    return;
  }
  s->iteration++;
  s->i++;
  s->phase = DA_ITER;
}

static int da_propose(void *self, int want, int64_t *out, int *got,
                      heron_error *err) {
  da *s = self;
  ls_round(&s->b, out, want);
  for (long step = 0; step < LS_MAX_STEPS && !ls_full(&s->b); step++) {
    double cost;
    int r;
    switch (s->phase) {
    case DA_INIT:
    case DA_RESET:
      if (!s->cur_drawn) {
        r = s->phase == DA_INIT ? ls_sample(&s->b, s->cur.cfg, 0, err)
                                : da_uniform(s, &s->cur, err);
        if (r < 0)
          return r;
        if (r == 0)
          goto out;
        if (s->phase == DA_INIT)
          da_encode(s, &s->cur);
        s->cur_drawn = 1;
      }
      if (!ls_known(&s->b, s->cur.cfg, &cost)) {
        ls_propose(&s->b, s->cur.cfg);
        goto out;
      }
      s->cur.e = cost;
      s->cur_drawn = 0;
      if (s->phase == DA_INIT) {
        s->iteration = 0;
        da_fresh(s, 1);
      } else if (isinf(cost) && ++s->reinit < 1000) {
        /* scipy draws again until the energy is finite, 1000 times */
      } else {
        s->reinit = 0;
        da_fresh(s, 0);
      }
      break;
    case DA_ITER: {
      if (s->iteration >= s->maxiter) {
        s->phase = DA_INIT;
        break;
      }
      double t1 = exp((s->qv - 1.0) * log(2.0)) - 1.0;
      double t2 = exp((s->qv - 1.0) * log((double)s->i + 2.0)) - 1.0;
      s->temperature = s->T0 * t1 / t2;
      if (s->temperature < s->T0 * s->restart_ratio) {
        s->resets++;
        s->phase = DA_RESET;
        break;
      }
      s->temp_step = s->temperature / ((double)s->i + 1.0);
      s->not_improved++;
      s->improved = s->i == 0;
      s->j = 0;
      s->phase = DA_VISIT;
      break;
    }
    case DA_VISIT:
      if (s->dim == 0) { /* no knobs: no chain */
        da_after_chain(s);
        break;
      }
      if (!s->visit_drawn) {
        r = da_visiting(s, err);
        if (r < 0)
          return r;
        if (r == 0)
          goto out;
        s->visit_drawn = 1;
      }
      if (!ls_known(&s->b, s->visit.cfg, &cost)) {
        ls_propose(&s->b, s->visit.cfg);
        goto out;
      }
      s->visit.e = cost;
      s->visit_drawn = 0;
      da_chain_step(s);
      if (++s->j >= 2 * s->dim)
        da_after_chain(s);
      break;
    case DA_LS1:
    case DA_LS2:
      r = ls_climb_run(&s->b, &s->climb, err);
      if (r < 0)
        return r;
      if (r == LS_CLIMB_WAIT)
        goto out;
      if (s->phase == DA_LS1) {
        if (s->climb.cur_cost < s->best.e) {
          s->not_improved = 0;
          da_ls_result(s, &s->best);
          da_point_copy(s, &s->cur, &s->best);
        }
        if (s->not_improved >= s->not_improved_max) {
          da_ls_start(s, &s->min, DA_LS2);
          break;
        }
      } else {
        da_ls_result(s, &s->min);
        s->not_improved = 0;
        s->not_improved_max = s->dim;
        if (s->min.e < s->best.e) {
          da_point_copy(s, &s->best, &s->min);
          da_point_copy(s, &s->cur, &s->min);
        }
      }
      s->iteration++;
      s->i++;
      s->phase = DA_ITER;
      break;
    }
  }
out:
  if (s->b.got == 0) {
    /* Only measured configs within reach: start over from an unmeasured
     * random config. */
    int r = ls_sample(&s->b, s->cur.cfg, 1, err);
    if (r < 0)
      return r;
    if (r > 0) {
      da_encode(s, &s->cur);
      s->cur_drawn = 1;
      s->phase = DA_INIT;
      ls_propose(&s->b, s->cur.cfg);
    }
  }
  *got = s->b.got;
  return HERON_OK;
}

static int da_observe(void *self, const heron_measurement *results, int n,
                      heron_error *err) {
  da *s = self;
  return ls_observe(&s->b, results, n, err);
}

static const heron_strategy_plugin da_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "dual_annealing",
    .summary = "dual annealing (Kernel Tuner's dual_annealing) on the "
               "discrete space: generalized simulated annealing with local "
               "searches",
    HERON_PARAM_SPECS(da_params),
    .create = da_create,
    .propose = da_propose,
    .observe = da_observe,
    .destroy = da_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &da_plugin;
}
