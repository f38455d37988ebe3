/* plugins/strategies/basinhopping/basinhopping.c - basin hopping, after
 * Kernel Tuner's "basinhopping" strategy (scipy.optimize.basinhopping on a
 * continuous relaxation), carried over to the discrete constrained space
 * (see README.md for where it departs).
 *
 * Minimise locally from a random config; then, for niter hops: perturb the
 * current minimum (each knob moves one position in its domain order with
 * probability 1/2, up or down, the displacement of scipy's step of one
 * value; heron_space_repair makes it valid), minimise locally from there,
 * and accept the new minimum by the Metropolis criterion at temperature T
 * (always when faster, else with probability exp(-(new - old) / T), times
 * in ms as in Kernel Tuner).  The local minimisation is a best-improvement
 * climb over the neighbourhood `neighbor`.  After niter hops the search
 * starts over from a new random config.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "local_search.h"

static const heron_param_spec bh_params[] = {
    {.key = "T",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "1.0",
     .flags = HERON_PARAM_MIN_OPEN,
     .lo = 0,
     .help = "temperature of the accept-or-reject criterion, in ms of "
             "kernel time"},
    {.key = "niter",
     .kind = HERON_PARAM_INT,
     .default_value = "100",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1e9,
     .help = "hops before starting over from a random config (scipy's "
             "niter)"},
    {.key = "neighbor",
     .kind = HERON_PARAM_CHOICE,
     .choices = "Hamming|adjacent",
     .default_value = "adjacent",
     .help = "neighbourhood of the local minimisation: adjacent (one knob "
             "moved to its nearest valid value) or Hamming (any one knob "
             "changed)"},
    {.key = NULL},
};

enum { BH_START, BH_MIN0, BH_HOP, BH_MIN };

typedef struct bh {
  ls_base b;
  ls_climb climb;
  double T;
  int64_t niter, hops;
  int phase, have_next;
  int64_t *x, *next; /* the current minimum, the perturbed config */
  double *idx;       /* knob positions of the perturbation */
  double fx;
  long starts, accepted;
} bh;

static void bh_destroy(void *self) {
  bh *s = self;
  if (!s)
    return;
  s->b.env->log(s->b.env, HERON_LOG_DEBUG, "%ld starts, %ld hops accepted",
                s->starts, s->accepted);
  ls_climb_free(&s->climb);
  ls_free(&s->b);
  free(s->x);
  free(s->next);
  free(s->idx);
  free(s);
}

static int bh_create(const heron_strategy_env *env, const heron_param *params,
                     int nparams, void **self, heron_error *err) {
  bh *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "basinhopping: out of memory");
  int rc = ls_init(&s->b, env, "basinhopping", err);
  if (rc) {
    free(s);
    return rc;
  }
  s->x = malloc((size_t)(s->b.nv ? s->b.nv : 1) * sizeof *s->x);
  s->next = malloc((size_t)(s->b.nv ? s->b.nv : 1) * sizeof *s->next);
  s->idx = malloc((size_t)(s->b.nk ? s->b.nk : 1) * sizeof *s->idx);
  const char *nb = heron_param_get(params, nparams, "neighbor", "adjacent");
  rc = ls_climb_init(&s->climb, &s->b,
                     strcmp(nb, "Hamming") == 0 ? HERON_NEIGHBOURS_HAMMING
                                                : HERON_NEIGHBOURS_ADJACENT,
                     0, 1);
  if (rc || !s->x || !s->next || !s->idx) {
    bh_destroy(s);
    return heron_error_set(err, HERON_ENOMEM, "basinhopping: out of memory");
  }
  s->T = heron_param_double_value(params, nparams, "T", 1.0);
  s->niter = heron_param_int_value(params, nparams, "niter", 100);
  *self = s;
  return HERON_OK;
}

/* The perturbed copy of the current minimum, made valid, into s->next. */
static int bh_perturb(bh *s, heron_error *err) {
  heron_rng *rng = s->b.env->rng;
  pop_coords_of(&s->b.coords, s->x, s->idx);
  for (int i = 0; i < s->b.nk; i++)
    if (heron_rng_uniform(rng) < 0.5)
      s->idx[i] += heron_rng_uniform(rng) < 0.5 ? -1 : 1;
  return ls_config_at(&s->b, s->idx, s->next, err);
}

/* Metropolis: accept a new minimum of cost f over the current one. */
static int bh_accept(bh *s, double f) {
  if (f < s->fx || isinf(s->fx))
    return 1;
  if (isinf(f))
    return 0;
  return heron_rng_uniform(s->b.env->rng) < exp(-(f - s->fx) / s->T);
}

static int bh_propose(void *self, int want, int64_t *out, int *got,
                      heron_error *err) {
  bh *s = self;
  ls_round(&s->b, out, want);
  for (long step = 0; step < LS_MAX_STEPS && !ls_full(&s->b); step++) {
    double cost;
    if (s->phase == BH_START || s->phase == BH_HOP) {
      if (!s->have_next) {
        int r = s->phase == BH_START ? ls_sample(&s->b, s->next, 0, err)
                                     : bh_perturb(s, err);
        if (r < 0)
          return r;
        if (r == 0)
          break;
        s->have_next = 1;
        s->starts += s->phase == BH_START;
      }
      if (!ls_known(&s->b, s->next, &cost)) {
        ls_propose(&s->b, s->next);
        break;
      }
      s->have_next = 0;
      ls_climb_start(&s->climb, &s->b, s->next, cost);
      s->phase = s->phase == BH_START ? BH_MIN0 : BH_MIN;
    }
    int r = ls_climb_run(&s->b, &s->climb, err);
    if (r < 0)
      return r;
    if (r == LS_CLIMB_WAIT)
      break;
    if (s->phase == BH_MIN0 || bh_accept(s, s->climb.cur_cost)) {
      memcpy(s->x, s->climb.cur, (size_t)s->b.nv * sizeof *s->x);
      s->fx = s->climb.cur_cost;
      s->accepted += s->phase == BH_MIN;
    }
    if (s->phase == BH_MIN0) {
      s->hops = 0;
      s->phase = BH_HOP;
    } else {
      s->phase = ++s->hops >= s->niter ? BH_START : BH_HOP;
    }
  }
  if (s->b.got == 0) {
    /* Only measured configs within reach: start over from an unmeasured
     * random config. */
    int r = ls_sample(&s->b, s->next, 1, err);
    if (r < 0)
      return r;
    if (r > 0) {
      s->phase = BH_START;
      s->have_next = 1;
      s->starts++;
      ls_propose(&s->b, s->next);
    }
  }
  *got = s->b.got;
  return HERON_OK;
}

static int bh_observe(void *self, const heron_measurement *results, int n,
                      heron_error *err) {
  bh *s = self;
  return ls_observe(&s->b, results, n, err);
}

static const heron_strategy_plugin bh_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "basinhopping",
    .summary = "basin hopping (Kernel Tuner's basinhopping) on the discrete "
               "space: perturb, minimise locally, Metropolis acceptance",
    HERON_PARAM_SPECS(bh_params),
    .create = bh_create,
    .propose = bh_propose,
    .observe = bh_observe,
    .destroy = bh_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &bh_plugin;
}
