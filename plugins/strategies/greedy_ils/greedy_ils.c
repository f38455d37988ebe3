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
  ls_starts st; /* st.start: the next climb's start, the candidate */
  int perm_size;
  int64_t no_improvement;
  long last_improvement;
  double best;
  long iterations;
} gils;

static void gils_destroy(void *self) {
  gils *s = self;
  if (!s)
    return;
  if (s->st.b.env)
    s->st.b.env->log(s->st.b.env, HERON_LOG_DEBUG, "%ld iterations",
                     s->iterations);
  ls_starts_free(&s->st);
  free(s);
}

static int gils_create(const heron_strategy_env *env, const heron_param *params,
                       int nparams, void **self, heron_error *err) {
  gils *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "greedy_ils: out of memory");
  int rc =
      ls_starts_init(&s->st, env, "greedy_ils", params, nparams, 1, 1, err);
  if (rc) {
    free(s);
    return rc;
  }
  s->no_improvement =
      heron_param_int_value(params, nparams, "no_improvement", 50);
  double walk = heron_param_double_value(params, nparams, "random_walk", 0.3);
  s->perm_size = (int)(walk * s->st.b.nk);
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
  ls_starts *st = &s->st;
  if (s->last_improvement >= s->no_improvement)
    return ls_sample(&st->b, st->start, 0, err);
  memcpy(st->start, st->climb.cur, (size_t)st->b.nv * sizeof *st->start);
  for (int i = 0; i < s->perm_size; i++) {
    int r = ls_random_neighbour(&st->b, st->start, HERON_NEIGHBOURS_HAMMING,
                                st->start, err);
    if (r < 0)
      return r;
  }
  return 1;
}

static int gils_propose(void *self, int want, int64_t *out, int *got,
                        heron_error *err) {
  gils *s = self;
  ls_starts *st = &s->st;
  ls_round(&st->b, out, want);
  for (long step = 0; step < LS_MAX_STEPS && !ls_full(&st->b); step++) {
    int r = ls_starts_begin(st, err);
    if (r <= 0) {
      if (r < 0)
        return r;
      break;
    }
    r = ls_climb_run(&st->b, &st->climb, err);
    if (r < 0)
      return r;
    if (r == LS_CLIMB_WAIT)
      break;
    st->climbing = 0;
    s->iterations++;
    if (st->climb.cur_cost < s->best) {
      s->best = st->climb.cur_cost;
      s->last_improvement = 0;
    } else {
      s->last_improvement++;
    }
    r = gils_perturb(s, err);
    if (r < 0)
      return r;
    st->have_start = r > 0;
  }
  int rc = ls_starts_fresh(st, err);
  if (rc < 0)
    return rc;
  *got = st->b.got;
  return HERON_OK;
}

static int gils_observe(void *self, const heron_measurement *results, int n,
                        heron_error *err) {
  gils *s = self;
  return ls_observe(&s->st.b, results, n, err);
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
