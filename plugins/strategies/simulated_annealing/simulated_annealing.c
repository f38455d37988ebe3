/* plugins/strategies/simulated_annealing/simulated_annealing.c - simulated
 * annealing, after Kernel Tuner's "simulated_annealing" strategy in its
 * constraint-aware form (see README.md for where it departs).
 *
 * From a random valid config, each step moves to a random neighbour: for
 * every knob, with probability 0.2, a random Hamming neighbour; then a
 * random adjacent neighbour (heron_space_neighbours).  The move is accepted
 * when it is faster, never when it failed, always from a failed config, and
 * otherwise with probability exp(rel / T), rel = (old - new) / |old| the
 * relative slowdown.  After maxiter steps the temperature follows the
 * schedule T = T0 * alpha^(max_iter / max_fevals * c), c the configs
 * measured, max_iter = ceil(log(T_min) / log(alpha)); a walk that measures
 * nothing new for 100 steps jumps to a random config.  One step proposes
 * at most one config, so a round holds one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "local_search.h"

static const heron_param_spec sa_params[] = {
    {.key = "T",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.1",
     .flags = HERON_PARAM_MIN_OPEN,
     .lo = 0,
     .help = "starting temperature"},
    {.key = "T_min",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.0001",
     .flags = HERON_PARAM_MIN_OPEN,
     .lo = 0,
     .help = "end temperature"},
    {.key = "alpha",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.9975",
     .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX_OPEN,
     .lo = 0,
     .hi = 1,
     .help = "cooling factor per measured config, in (0, 1)"},
    {.key = "maxiter",
     .kind = HERON_PARAM_INT,
     .default_value = "1",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1e6,
     .help = "steps per temperature"},
    {.key = "max_fevals",
     .kind = HERON_PARAM_INT,
     .default_value = "0",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1e9,
     .help = "measurements the schedule is stretched over (0: its own "
             "length, ceil(log(T_min) / log(alpha)))"},
    {.key = NULL},
};

typedef struct sa {
  ls_base b;
  double T0, T, T_min, alpha, max_iter, max_fevals;
  int niter, inner, have_pos, pending;
  int64_t *pos, *next;
  double old_cost;
  size_t c_old;
  long stuck, iteration, anneals;
} sa;

static void sa_destroy(void *self) {
  sa *s = self;
  if (!s)
    return;
  s->b.env->log(s->b.env, HERON_LOG_DEBUG, "%ld anneals, T %g", s->anneals,
                s->T);
  ls_free(&s->b);
  free(s->pos);
  free(s->next);
  free(s);
}

static int sa_create(const heron_strategy_env *env, const heron_param *params,
                     int nparams, void **self, heron_error *err) {
  sa *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM,
                           "simulated_annealing: out of memory");
  int rc = ls_init(&s->b, env, "simulated_annealing", err);
  if (rc) {
    free(s);
    return rc;
  }
  s->pos = malloc((size_t)(s->b.nv ? s->b.nv : 1) * sizeof *s->pos);
  s->next = malloc((size_t)(s->b.nv ? s->b.nv : 1) * sizeof *s->next);
  if (!s->pos || !s->next) {
    sa_destroy(s);
    return heron_error_set(err, HERON_ENOMEM,
                           "simulated_annealing: out of memory");
  }
  s->T0 = s->T = heron_param_double_value(params, nparams, "T", 0.1);
  s->T_min = heron_param_double_value(params, nparams, "T_min", 1e-4);
  s->alpha = heron_param_double_value(params, nparams, "alpha", 0.9975);
  s->niter = (int)heron_param_int_value(params, nparams, "maxiter", 1);
  s->max_iter = ceil(log(s->T_min) / log(s->alpha));
  if (s->max_iter < 1)
    s->max_iter = 1;
  int64_t mf = heron_param_int_value(params, nparams, "max_fevals", 0);
  s->max_fevals = mf > 0 ? (double)mf : s->max_iter;
  *self = s;
  return HERON_OK;
}

/* Kernel Tuner's acceptance probability of moving from old to new. */
static double sa_accept(double old_cost, double new_cost, double T) {
  if (isinf(old_cost))
    return 1;
  if (isinf(new_cost))
    return 0;
  if (new_cost < old_cost)
    return 1;
  double rel = (old_cost - new_cost) / (old_cost != 0 ? fabs(old_cost) : 1e-20);
  return exp(rel / T);
}

/* A random neighbour of pos into s->next, constraint-aware. */
static int sa_neighbour(sa *s, heron_error *err) {
  memcpy(s->next, s->pos, (size_t)s->b.nv * sizeof *s->next);
  for (int i = 0; i < s->b.nk; i++)
    if (heron_rng_uniform(s->b.env->rng) < 0.2) {
      int r = ls_random_neighbour(&s->b, s->next, HERON_NEIGHBOURS_HAMMING,
                                  s->next, err);
      if (r < 0)
        return r;
    }
  int r = ls_random_neighbour(&s->b, s->next, HERON_NEIGHBOURS_ADJACENT,
                              s->next, err);
  return r < 0 ? r : HERON_OK;
}

/* Starts an anneal (again) at a random config: the first, and one after
 * the schedule ran out. */
static void sa_restart(sa *s) {
  s->have_pos = 0;
  s->pending = 0;
  s->T = s->T0;
  s->iteration = 0;
  s->inner = 0;
  s->stuck = 0;
  s->anneals++;
}

/* The end of one temperature's steps: cool, and jump away when stuck. */
static int sa_cool(sa *s, heron_error *err) {
  size_t c = s->b.cache.n;
  s->T = s->T0 * pow(s->alpha, s->max_iter / s->max_fevals * (double)c);
  s->stuck = c == s->c_old ? s->stuck + 1 : 0;
  s->c_old = c;
  s->iteration++;
  if (s->stuck > 100) {
    int r = ls_sample(&s->b, s->pos, 0, err);
    if (r < 0)
      return r;
    s->stuck = 0;
  }
  if (!(s->T > s->T_min) || s->iteration > 10 * s->max_iter)
    sa_restart(s);
  return HERON_OK;
}

static int sa_propose(void *self, int want, int64_t *out, int *got,
                      heron_error *err) {
  sa *s = self;
  ls_round(&s->b, out, want);
  for (long step = 0; step < LS_MAX_STEPS && !ls_full(&s->b); step++) {
    double cost;
    if (!s->have_pos) {
      if (!s->pending) {
        int r = ls_sample(&s->b, s->pos, 0, err);
        if (r < 0)
          return r;
        if (r == 0)
          break;
        s->pending = 1;
      }
      if (!ls_known(&s->b, s->pos, &cost)) {
        ls_propose(&s->b, s->pos);
        break;
      }
      s->old_cost = cost;
      s->have_pos = 1;
      s->pending = 0;
      s->c_old = s->b.cache.n;
    }
    if (!s->pending) {
      int r = sa_neighbour(s, err);
      if (r < 0)
        return r;
      s->pending = 1;
    }
    if (!ls_known(&s->b, s->next, &cost)) {
      ls_propose(&s->b, s->next);
      break;
    }
    s->pending = 0;
    if (sa_accept(s->old_cost, cost, s->T) > heron_rng_uniform(s->b.env->rng)) {
      memcpy(s->pos, s->next, (size_t)s->b.nv * sizeof *s->pos);
      s->old_cost = cost;
    }
    if (++s->inner >= s->niter) {
      s->inner = 0;
      int r = sa_cool(s, err);
      if (r < 0)
        return r;
    }
  }
  if (s->b.got == 0) {
    /* Only measured configs within reach: anneal again from an unmeasured
     * random config. */
    sa_restart(s);
    int r = ls_sample(&s->b, s->pos, 1, err);
    if (r < 0)
      return r;
    if (r > 0) {
      s->pending = 1;
      ls_propose(&s->b, s->pos);
    }
  }
  *got = s->b.got;
  return HERON_OK;
}

static int sa_observe(void *self, const heron_measurement *results, int n,
                      heron_error *err) {
  sa *s = self;
  return ls_observe(&s->b, results, n, err);
}

static const heron_strategy_plugin sa_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "simulated_annealing",
    .summary = "simulated annealing (Kernel Tuner's simulated_annealing, "
               "constraint-aware): one random neighbour per step",
    HERON_PARAM_SPECS(sa_params),
    .create = sa_create,
    .propose = sa_propose,
    .observe = sa_observe,
    .destroy = sa_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &sa_plugin;
}
