/* plugins/strategies/greedy_ils/greedy_ils.c - greedy iterated local
 * search, after Kernel Tuner's "greedy_ils" strategy (see README.md for
 * where it departs).
 *
 * Each iteration hill-climbs from the candidate (with restart=true, the
 * default, one first-improvement move: the first neighbour in random order
 * that beats the candidate), then perturbs the result by a random walk of
 * max(1, int(random_walk * knobs)) random Hamming neighbours.  After
 * no_improvement iterations without a new best, the candidate is a random
 * config instead.  Measured configs answer from the table of costs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "local_search.h"

static const heron_param_spec gils_params[] = {
    {.key = "neighbor",
     .kind = HERON_PARAM_CHOICE,
     .choices = "Hamming|adjacent",
     .default_value = "Hamming",
     .help = "neighbourhood of the hill climb: Hamming (any one knob "
             "changed) or adjacent (one knob moved to its nearest valid "
             "value)"},
    {.key = "restart",
     .kind = HERON_PARAM_BOOL,
     .default_value = "true",
     .help = "first improvement: each climb makes at most one move (false: "
             "best improvement to a local optimum)"},
    {.key = "no_improvement",
     .kind = HERON_PARAM_INT,
     .default_value = "50",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1e9,
     .help = "iterations without a new best before the candidate is a random "
             "config"},
    {.key = "random_walk",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.3",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help = "share of the knobs: the perturbation is that many random "
             "Hamming moves (at least one)"},
    {.key = NULL},
};

typedef struct gils {
  ls_base b;
  ls_climb climb;
  int64_t *cand; /* the next climb's start */
  int have_cand, climbing, perm_size;
  int64_t no_improvement;
  long last_improvement;
  double best;
  long iterations;
} gils;

static void gils_destroy(void *self) {
  gils *s = self;
  if (!s)
    return;
  s->b.env->log(s->b.env, HERON_LOG_DEBUG, "%ld iterations, %ld moves",
                s->iterations, s->climb.moves);
  ls_climb_free(&s->climb);
  ls_free(&s->b);
  free(s->cand);
  free(s);
}

static int gils_create(const heron_strategy_env *env, const heron_param *params,
                       int nparams, void **self, heron_error *err) {
  gils *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "greedy_ils: out of memory");
  int rc = ls_init(&s->b, env, "greedy_ils", err);
  if (rc) {
    free(s);
    return rc;
  }
  s->cand = malloc((size_t)(s->b.nv ? s->b.nv : 1) * sizeof *s->cand);
  rc = ls_climb_init(&s->climb, &s->b, ls_neighbourhood(params, nparams),
                     (int)heron_param_int_value(params, nparams, "restart", 1),
                     1);
  if (rc || !s->cand) {
    gils_destroy(s);
    return heron_error_set(err, HERON_ENOMEM, "greedy_ils: out of memory");
  }
  s->no_improvement =
      heron_param_int_value(params, nparams, "no_improvement", 50);
  double walk = heron_param_double_value(params, nparams, "random_walk", 0.3);
  s->perm_size = (int)(walk * s->b.nk);
  if (s->perm_size == 0)
    s->perm_size = 1;
  s->best = INFINITY;
  *self = s;
  return HERON_OK;
}

/* The next candidate: a random config after no_improvement iterations
 * without a new best, else perm_size random Hamming moves from the climb's
 * end.  1 when set, 0 when no config was found, or a negative status. */
static int gils_perturb(gils *s, heron_error *err) {
  if (s->last_improvement >= s->no_improvement)
    return ls_sample(&s->b, s->cand, 0, err);
  memcpy(s->cand, s->climb.cur, (size_t)s->b.nv * sizeof *s->cand);
  for (int i = 0; i < s->perm_size; i++) {
    int r = ls_random_neighbour(&s->b, s->cand, HERON_NEIGHBOURS_HAMMING,
                                s->cand, err);
    if (r < 0)
      return r;
  }
  return 1;
}

static int gils_propose(void *self, int want, int64_t *out, int *got,
                        heron_error *err) {
  gils *s = self;
  ls_round(&s->b, out, want);
  for (long step = 0; step < LS_MAX_STEPS && !ls_full(&s->b); step++) {
    if (!s->climbing) {
      double cost;
      if (!s->have_cand) {
        int r = ls_sample(&s->b, s->cand, 0, err);
        if (r < 0)
          return r;
        if (r == 0)
          break;
        s->have_cand = 1;
      }
      if (!ls_known(&s->b, s->cand, &cost)) {
        ls_propose(&s->b, s->cand);
        break;
      }
      ls_climb_start(&s->climb, &s->b, s->cand, cost);
      s->climbing = 1;
    }
    int r = ls_climb_run(&s->b, &s->climb, err);
    if (r < 0)
      return r;
    if (r == LS_CLIMB_WAIT)
      break;
    s->climbing = 0;
    s->iterations++;
    if (s->climb.cur_cost < s->best) {
      s->best = s->climb.cur_cost;
      s->last_improvement = 0;
    } else {
      s->last_improvement++;
    }
    r = gils_perturb(s, err);
    if (r < 0)
      return r;
    s->have_cand = r > 0;
  }
  if (s->b.got == 0 && !s->climbing) {
    /* Only measured configs within reach: a random unmeasured candidate. */
    int r = ls_sample(&s->b, s->cand, 1, err);
    if (r < 0)
      return r;
    if (r > 0) {
      s->have_cand = 1;
      ls_propose(&s->b, s->cand);
    }
  }
  *got = s->b.got;
  return HERON_OK;
}

static int gils_observe(void *self, const heron_measurement *results, int n,
                        heron_error *err) {
  gils *s = self;
  return ls_observe(&s->b, results, n, err);
}

static const heron_strategy_plugin gils_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "greedy_ils",
    .summary = "greedy iterated local search (Kernel Tuner's greedy_ils): "
               "climb, then perturb by a random walk",
    HERON_PARAM_SPECS(gils_params),
    .create = gils_create,
    .propose = gils_propose,
    .observe = gils_observe,
    .destroy = gils_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &gils_plugin;
}
