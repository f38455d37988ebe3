/* plugins/strategies/best_first/best_first.c - best-first neighbourhood
 * search over the measured configs.
 *
 * The first `init` trials are uniform random configs
 * (heron_space_sample).  From then on every round ranks the configs
 * measured so far (the history, resumed trials included) by time and
 * proposes the unmeasured one-knob neighbours (Hamming,
 * heron_space_neighbours) of the fastest, in random order; when those are
 * all measured or in the round, of the second fastest, and so on.  Each
 * proposal is, with probability `explore`, an unmeasured random config
 * instead.  A config whose neighbours are all measured is marked and not
 * listed again.
 *
 * Why this shape (docs/results/2026-11-28-strategy-campaign.md has the
 * figures): on the community's spaces a one-knob neighbourhood has few
 * local optima (9 to 24 of 4,362 and 11,130 configs) and most of them are
 * good, so climbing from the best is what finds the optimum quickly; but a
 * climb from one start (mls, greedy_ils) pays for a whole neighbourhood of
 * mediocre configs at every start and restarts from scratch.  Expanding
 * the best measured config, then the next best, never measures a config
 * twice and never leaves the good region to restart: a local optimum
 * leads to the neighbours of its best neighbours (two- and three-knob
 * moves from the optimum found so far).  The random share lets the search
 * find a better basin; the random start (`init`) keeps a short budget
 * (convolution-W6600's 16 trials) from being spent on the slow neighbours
 * of one slow first config, which is where the local searches lose there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "local_search.h"

static const heron_param_spec best_first_params[] = {
    {.key = "init",
     .kind = HERON_PARAM_INT,
     .default_value = "8",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1000000,
     .help = "random configs measured before the search expands the best"},
    {.key = "explore",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.1",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help = "probability that a proposal is an unmeasured random config "
             "instead of a neighbour"},
    {.key = NULL},
};

typedef struct best_first {
  ls_base b;
  int init;
  double explore;
  struct ranked {
    double seconds;
    int trial;             /* history index */
  } * order;               /* OK trials not finished, fastest first */
  unsigned char *finished; /* by history index: every neighbour measured */
  int cap;                 /* of order and finished */
  long expanded, randoms;
} best_first;

static void best_first_destroy(void *self) {
  best_first *s = self;
  if (!s)
    return;
  s->b.env->log(s->b.env, HERON_LOG_DEBUG,
                "%ld configs expanded, %ld random proposals", s->expanded,
                s->randoms);
  ls_free(&s->b);
  free(s->order);
  free(s->finished);
  free(s);
}

static int best_first_create(const heron_strategy_env *env,
                             const heron_param *params, int nparams,
                             void **self, heron_error *err) {
  best_first *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "best_first: out of memory");
  int rc = ls_init(&s->b, env, "best_first", err);
  if (rc) {
    free(s);
    return rc;
  }
  s->init = (int)heron_param_int_value(params, nparams, "init", 8);
  s->explore = heron_param_double_value(params, nparams, "explore", 0.1);
  /* A resumed run's trials are in the history: they count as measured. */
  int n = env->history ? heron_history_count(env->history) : 0;
  for (int i = 0; i < n && rc == HERON_OK; i++)
    rc = ls_observe(&s->b, heron_history_get(env->history, i), 1, err);
  if (rc) {
    best_first_destroy(s);
    return rc;
  }
  env->log(env, HERON_LOG_DEBUG, "init=%d explore=%g", s->init, s->explore);
  *self = s;
  return HERON_OK;
}

/* Room for n history indices in order and finished. */
static int best_first_reserve(best_first *s, int n) {
  if (n <= s->cap)
    return HERON_OK;
  int cap = s->cap ? s->cap : 256;
  while (cap < n)
    cap *= 2;
  struct ranked *o = realloc(s->order, (size_t)cap * sizeof *o);
  if (o)
    s->order = o;
  unsigned char *f = realloc(s->finished, (size_t)cap);
  if (f) {
    memset(f + s->cap, 0, (size_t)(cap - s->cap));
    s->finished = f;
  }
  if (!o || !f)
    return HERON_ENOMEM;
  s->cap = cap;
  return HERON_OK;
}

static int rank_cmp(const void *pa, const void *pb) {
  const struct ranked *a = pa, *b = pb;
  if (a->seconds != b->seconds)
    return a->seconds < b->seconds ? -1 : 1;
  return (a->trial > b->trial) - (a->trial < b->trial); /* earlier first */
}

/* The OK trials not marked finished, fastest first, into s->order;
 * returns their count. */
static int best_first_rank(best_first *s, int n) {
  const heron_history *h = s->b.env->history;
  int k = 0;
  for (int i = 0; i < n; i++) {
    const heron_measurement *m = heron_history_get(h, i);
    if (!s->finished[i] && m->config && ls_objective(m) < INFINITY)
      s->order[k++] = (struct ranked){m->seconds, i};
  }
  qsort(s->order, (size_t)k, sizeof *s->order, rank_cmp);
  return k;
}

/* Adds an unmeasured random config to the round: 1 when added, 0 when none
 * was found, or a negative status. */
static int best_first_random(best_first *s, heron_error *err) {
  int64_t *cfg = s->b.out + (size_t)s->b.got * s->b.nv;
  int r = ls_sample(&s->b, cfg, 1, err);
  if (r == 1) {
    ls_propose(&s->b, cfg);
    s->randoms++;
  }
  return r;
}

/* Proposes the unmeasured neighbours of the trial `i` in random order (each
 * one, with probability explore, replaced by a random config) until the
 * round is full; marks i finished when every neighbour is measured. */
static int best_first_expand(best_first *s, int i, heron_error *err) {
  ls_base *b = &s->b;
  const heron_measurement *m = heron_history_get(b->env->history, i);
  int nn = ls_neighbours(b, m->config, HERON_NEIGHBOURS_HAMMING, err);
  if (nn < 0)
    return nn;
  int open = 0; /* neighbours not measured yet */
  for (int j = 0; j < nn; j++) {
    /* a random unvisited neighbour next: partial Fisher-Yates */
    int k = j + (int)heron_rng_below(b->env->rng, (uint64_t)(nn - j));
    int64_t *nj = b->nb + (size_t)j * b->nv, *nk = b->nb + (size_t)k * b->nv;
    for (int v = 0; v < b->nv; v++) {
      int64_t t = nj[v];
      nj[v] = nk[v];
      nk[v] = t;
    }
    double c;
    if (ls_known(b, nj, &c))
      continue;
    open++;
    if (ls_full(b))
      continue;
    if (s->explore > 0 && heron_rng_uniform(b->env->rng) < s->explore) {
      int r = best_first_random(s, err);
      if (r < 0)
        return r;
      if (r == 1)
        continue;
    }
    ls_propose(b, nj);
  }
  if (open == 0)
    s->finished[i] = 1;
  else
    s->expanded++;
  return HERON_OK;
}

static int best_first_propose(void *self, int want, int64_t *out, int *got,
                              heron_error *err) {
  best_first *s = self;
  ls_base *b = &s->b;
  const heron_history *h = b->env->history;
  int n = h ? heron_history_count(h) : 0;
  ls_round(b, out, want);
  if (best_first_reserve(s, n) != HERON_OK)
    return heron_error_set(err, HERON_ENOMEM, "best_first: out of memory");
  if (n >= s->init) {
    int k = best_first_rank(s, n);
    for (int r = 0; r < k && !ls_full(b); r++) {
      int rc = best_first_expand(s, s->order[r].trial, err);
      if (rc < 0)
        return rc;
    }
  }
  /* Before `init` trials, or with every measured config's neighbourhood
   * measured: random configs. */
  while (!ls_full(b)) {
    int r = best_first_random(s, err);
    if (r < 0)
      return r;
    if (r == 0)
      break;
  }
  *got = b->got;
  return HERON_OK;
}

static int best_first_observe(void *self, const heron_measurement *results,
                              int n, heron_error *err) {
  best_first *s = self;
  return ls_observe(&s->b, results, n, err);
}

static const heron_strategy_plugin best_first_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "best_first",
    .summary = "best-first search: the unmeasured one-knob neighbours of the "
               "fastest measured configs, after a few random ones",
    HERON_PARAM_SPECS(best_first_params),
    .create = best_first_create,
    .propose = best_first_propose,
    .observe = best_first_observe,
    .destroy = best_first_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &best_first_plugin;
}
