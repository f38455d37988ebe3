/* plugins/strategies/genetic/genetic.c - Heron's constraint-based genetic
 * algorithm (CGA).
 *
 * Every round, with a trained cost model:
 *
 *   1. population = `pop` constrained random samples + the `history_topk`
 *      best measured configs + last round's population, each predicted by
 *      the model; the best `pop` of them survive;
 *   2. `iter_walks` generations: pick key variables (crossover_key_ratio of
 *      all variables, half the model's most important features, half at
 *      random), roulette-select `select_num` parents, breed `children`
 *      children that each take every key variable from one of two parents
 *      except one key that mutates; the CSP solver completes the rest, so
 *      every child is valid by construction; predict the children; the new
 *      population is the children plus the `elite` best of the old one;
 *   3. epsilon-greedy pick of the batch: epsilon * want best predicted, the
 *      rest by roulette wheel, skipping configs already measured and
 *      duplicates; constrained random samples fill any shortfall.
 *
 * Without a model (or before it is trained, once something ran) the same
 * constrained crossover and mutation run on the measured configs, with
 * measured GFLOP/s as fitness (failures 0) and random key variables:
 * fallback_key_ratio of them, by default all, since no prediction screens
 * the children and a child that re-draws most variables at random is
 * little better than a random sample.  With nothing measured yet, a round
 * is pure constrained random sampling.
 *
 * The population carries over between rounds (and across --resume, through
 * save_state / load_state); everything else is re-derived from the history
 * and the model each round.  See README.md for the parameters.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heron/strategy.h"
#include "plugin_util.h"

static const heron_param_spec genetic_params[] = {
    {.key = "pop",
     .kind = HERON_PARAM_INT,
     .default_value = "200",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1000000,
     .help = "population kept between generations (Heron's pop_num)"},
    {.key = "iter_walks",
     .kind = HERON_PARAM_INT,
     .default_value = "5",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000000,
     .help = "generations bred per round"},
    {.key = "history_topk",
     .kind = HERON_PARAM_INT,
     .default_value = "32",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000000,
     .help = "best measured configs added to the population each round"},
    {.key = "select_num",
     .kind = HERON_PARAM_INT,
     .default_value = "100",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1000000,
     .help = "parents roulette-selected per generation"},
    {.key = "children",
     .kind = HERON_PARAM_INT,
     .default_value = "200",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1000000,
     .help = "children bred per generation"},
    {.key = "elite",
     .kind = HERON_PARAM_INT,
     .default_value = "20",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000000,
     .help = "best configs of a generation kept into the next"},
    {.key = "crossover_key_ratio",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.2",
     .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help = "key variables per generation as a share of all variables (a "
             "crossover needs some)"},
    {.key = "epsilon",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.6",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help =
         "share of the batch taken by best prediction; the rest by roulette"},
    {.key = "fallback_key_ratio",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "1",
     .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help =
         "without a model: key variables per child as a share of all variables "
         "(1: each variable from either parent, a uniform crossover)"},
    {.key = "temperature",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.25",
     .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000000.0,
     .help = "roulette wheel: weight exp((s - 1) / temperature) on scores s "
             "normalised to [0, 1] (0 would be a plain argmax)"},
    {.key = NULL},
};

/* ---- Pools of configs ---------------------------------------------------
 *
 * A pool is a flat array of configs with a score (predicted, or measured
 * GFLOP/s) and a dedup key per config; capacities are fixed at create(), so
 * a round allocates nothing. */
typedef struct genetic_pool {
  int n, cap, nv;
  int64_t *cfg; /* cap * nv */
  double *score;
  uint64_t *key;
} genetic_pool;

static int genetic_pool_init(genetic_pool *p, int cap, int nv) {
  p->n = 0;
  p->cap = cap;
  p->nv = nv;
  p->cfg = malloc((size_t)cap * (size_t)nv * sizeof *p->cfg + 1);
  p->score = malloc((size_t)cap * sizeof *p->score + 1);
  p->key = malloc((size_t)cap * sizeof *p->key + 1);
  return p->cfg && p->score && p->key ? HERON_OK : HERON_ENOMEM;
}

static void genetic_pool_free(genetic_pool *p) {
  free(p->cfg);
  free(p->score);
  free(p->key);
}

static int64_t *genetic_pool_cfg(const genetic_pool *p, int i) {
  return p->cfg + (size_t)i * (size_t)p->nv;
}

/* Appends a copy of cfg (no-op when the pool is full). */
static void genetic_pool_push(genetic_pool *p, const int64_t *cfg, uint64_t key,
                              double score) {
  if (p->n >= p->cap)
    return;
  if (cfg != genetic_pool_cfg(p, p->n))
    memcpy(genetic_pool_cfg(p, p->n), cfg, (size_t)p->nv * sizeof *cfg);
  p->key[p->n] = key;
  p->score[p->n] = score;
  p->n++;
}

/* ---- A set of config keys -----------------------------------------------
 *
 * Open addressing over the 64-bit keys of heron_space_key; slot value 0
 * means empty, so the key 0 itself is tracked by a flag. */
typedef struct genetic_set {
  uint64_t *slot;
  size_t mask;
  int has_zero;
} genetic_set;

static int genetic_set_init(genetic_set *s, int max_items) {
  size_t cap = 16;
  while (cap < 2 * (size_t)max_items)
    cap *= 2;
  s->slot = calloc(cap, sizeof *s->slot);
  s->mask = s->slot ? cap - 1 : 0; /* 0: the next propose retries */
  s->has_zero = 0;
  return s->slot ? HERON_OK : HERON_ENOMEM;
}

static void genetic_set_clear(genetic_set *s) {
  if (s->slot)
    memset(s->slot, 0, (s->mask + 1) * sizeof *s->slot);
  s->has_zero = 0;
}

/* Finds key's slot: the one holding it or the empty one where it belongs.
 * The set never fills (capacity is twice what it is sized for, and the
 * callers add at most that many keys between clears). */
static size_t genetic_set_find(const genetic_set *s, uint64_t key) {
  size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & s->mask;
  while (s->slot[i] && s->slot[i] != key)
    i = (i + 1) & s->mask;
  return i;
}

static int genetic_set_has(const genetic_set *s, uint64_t key) {
  return key ? s->slot[genetic_set_find(s, key)] == key : s->has_zero;
}

/* Adds key; returns 1 when it was new, 0 when already there. */
static int genetic_set_add(genetic_set *s, uint64_t key) {
  if (!key) {
    int was = s->has_zero;
    s->has_zero = 1;
    return !was;
  }
  size_t i = genetic_set_find(s, key);
  if (s->slot[i])
    return 0;
  s->slot[i] = key;
  return 1;
}

/* ---- State --------------------------------------------------------------- */
typedef struct genetic_rank {
  double score;
  uint64_t tie; /* random, so equal scores come out in random order */
  int idx;
} genetic_rank;

typedef struct genetic {
  const heron_strategy_env *env;
  const heron_space *sp;
  int nvars, nf;
  /* parameters */
  int pop, iter_walks, history_topk, select_num, children, elite;
  double key_ratio, fallback_ratio, epsilon, temperature;
  /* key variables: the candidates are the variables that can take more
   * than one value (constants carry no information and cannot mutate);
   * rank lists them by importance when the model reports it (has_rank),
   * else in index order. */
  int ncand, nkeys, nkeys_fallback, has_rank;
  int nk; /* keys in g->keys now: nkeys or nkeys_fallback */
  int *cand, *rank, *pick, *keys;
  char *knob; /* per variable: 1 for a knob */
  /* the population (kept between rounds), the next generation and the
   * round's candidates */
  genetic_pool popl, next, work;
  genetic_set seen, batch;
  /* scratch */
  double *X, *imp, *w;
  genetic_rank *order;
  int *sel;
  int64_t *tmp;
  int round;
  int empty; /* rounds in a row that found nothing new to propose */
  long observed;
} genetic;

/* The numeric form of heron_space_key, the same number the history keeps. */
static uint64_t genetic_key(const genetic *g, const int64_t *cfg) {
  char buf[32];
  if (heron_space_key(g->sp, cfg, buf, sizeof buf) != HERON_OK)
    return 0;
  return strtoull(buf, NULL, 16);
}

static int genetic_measured(const genetic *g, uint64_t key) {
  if (!g->env->history)
    return 0;
  char buf[32];
  snprintf(buf, sizeof buf, "%016" PRIx64, key);
  return heron_history_contains(g->env->history, buf);
}

/* ---- Parameters ---------------------------------------------------------- */
static int genetic_int(const heron_param *params, int n, const char *key,
                       int64_t def, int64_t lo, int *out, heron_error *err) {
  int64_t v;
  int rc = heron_param_int(params, n, key, def, lo, 1000000, &v, err);
  if (rc == HERON_OK)
    *out = (int)v;
  return rc;
}

/* A double in (0, hi]: heron_param_double checks [0, hi], zero is refused
 * here with the reason. */
static int genetic_positive(const heron_param *params, int n, const char *key,
                            double def, double hi, const char *why, double *out,
                            heron_error *err) {
  int rc = heron_param_double(params, n, key, def, 0.0, hi, out, err);
  if (rc == HERON_OK && !(*out > 0.0))
    rc = heron_error_set(err, HERON_EINVAL,
                         "parameter %s = %s is outside (0, %g]: %s", key,
                         heron_param_get(params, n, key, "?"), hi, why);
  return rc;
}

static int genetic_read_params(genetic *g, const heron_param *p, int n,
                               heron_error *err) {
  int rc = genetic_int(p, n, "pop", 200, 1, &g->pop, err);
  if (rc == HERON_OK)
    rc = genetic_int(p, n, "iter_walks", 5, 0, &g->iter_walks, err);
  if (rc == HERON_OK)
    rc = genetic_int(p, n, "history_topk", 32, 0, &g->history_topk, err);
  if (rc == HERON_OK)
    rc = genetic_int(p, n, "select_num", 100, 1, &g->select_num, err);
  if (rc == HERON_OK)
    rc = genetic_int(p, n, "children", 200, 1, &g->children, err);
  if (rc == HERON_OK)
    rc = genetic_int(p, n, "elite", 20, 0, &g->elite, err);
  if (rc == HERON_OK)
    rc =
        genetic_positive(p, n, "crossover_key_ratio", 0.2, 1.0,
                         "a crossover needs key variables", &g->key_ratio, err);
  if (rc == HERON_OK)
    rc = genetic_positive(p, n, "fallback_key_ratio", 1.0, 1.0,
                          "a crossover needs key variables", &g->fallback_ratio,
                          err);
  if (rc == HERON_OK)
    rc = heron_param_double(p, n, "epsilon", 0.6, 0.0, 1.0, &g->epsilon, err);
  if (rc == HERON_OK)
    rc = genetic_positive(p, n, "temperature", 0.25, 1e6,
                          "0 would make the roulette wheel a plain argmax",
                          &g->temperature, err);
  return rc;
}

/* ---- create / destroy ---------------------------------------------------- */
static void genetic_destroy(void *self) {
  genetic *g = self;
  if (!g)
    return;
  genetic_pool_free(&g->popl);
  genetic_pool_free(&g->next);
  genetic_pool_free(&g->work);
  free(g->seen.slot);
  free(g->batch.slot);
  free(g->cand);
  free(g->rank);
  free(g->pick);
  free(g->keys);
  free(g->knob);
  free(g->X);
  free(g->imp);
  free(g->w);
  free(g->order);
  free(g->sel);
  free(g->tmp);
  free(g);
}

/* ratio * (number of variables) keys, at least 1, at most the candidates. */
static int genetic_nkeys(const genetic *g, double ratio) {
  long k = lround(ratio * g->nf);
  k = k < 1 ? 1 : k;
  return (int)(k > g->ncand ? g->ncand : k);
}

/* Lists the key candidates (variables whose domain holds more than one
 * value) and derives the number of keys per generation. */
static void genetic_find_candidates(genetic *g) {
  g->ncand = 0;
  for (int v = 0; v < g->nvars; v++) {
    g->knob[v] = heron_space_var_is_knob(g->sp, v) == 1;
    int64_t lo = 0, hi = 0;
    if (heron_space_var_domain(g->sp, v, &lo, &hi, NULL, NULL) == HERON_OK &&
        lo < hi)
      g->cand[g->ncand++] = v;
  }
  memcpy(g->rank, g->cand, (size_t)g->ncand * sizeof *g->rank);
  g->nkeys = genetic_nkeys(g, g->key_ratio);
  g->nkeys_fallback = genetic_nkeys(g, g->fallback_ratio);
}

static int genetic_alloc(genetic *g) {
  size_t nv = (size_t)g->nvars + 1;
  /* The population holds `pop` after seeding and children + elite after a
   * generation; the candidates are pop samples + topk + last population. */
  int popcap =
      g->pop > g->children + g->elite ? g->pop : g->children + g->elite;
  int workcap = g->pop + g->history_topk + popcap;
  int rc = genetic_pool_init(&g->popl, popcap, g->nvars);
  if (rc == HERON_OK)
    rc = genetic_pool_init(&g->next, popcap, g->nvars);
  if (rc == HERON_OK)
    rc = genetic_pool_init(&g->work, workcap, g->nvars);
  if (rc == HERON_OK)
    rc = genetic_set_init(&g->seen, workcap);
  if (rc == HERON_OK)
    rc = genetic_set_init(&g->batch, popcap + 1024);
  g->cand = malloc(nv * sizeof *g->cand);
  g->rank = malloc(nv * sizeof *g->rank);
  g->pick = malloc(nv * sizeof *g->pick);
  g->keys = malloc(nv * sizeof *g->keys);
  g->knob = calloc(nv, sizeof *g->knob);
  g->X = malloc((size_t)workcap * (size_t)g->nf * sizeof *g->X + 1);
  g->imp = malloc(((size_t)g->nf + 1) * sizeof *g->imp);
  /* w and order also rank the variables (genetic_rank_keys). */
  size_t nw = (size_t)workcap > nv ? (size_t)workcap : nv;
  g->w = malloc(nw * sizeof *g->w);
  g->order = malloc(nw * sizeof *g->order);
  g->sel = malloc((size_t)g->select_num * sizeof *g->sel);
  g->tmp = malloc(nv * sizeof *g->tmp);
  if (rc == HERON_OK &&
      !(g->cand && g->rank && g->pick && g->keys && g->knob && g->X && g->imp &&
        g->w && g->order && g->sel && g->tmp))
    rc = HERON_ENOMEM;
  return rc;
}

static int genetic_create(const heron_strategy_env *env,
                          const heron_param *params, int nparams, void **self,
                          heron_error *err) {
  if (!env || !env->space || !env->rng || !env->log || !self)
    return heron_error_set(err, HERON_EINVAL,
                           "genetic: env without a space, an rng or a logger");
  genetic *g = calloc(1, sizeof *g);
  if (!g)
    return heron_error_set(err, HERON_ENOMEM, "genetic: out of memory");
  g->env = env;
  g->sp = env->space;
  g->nvars = heron_space_nvars(env->space);
  g->nf = heron_space_nfeatures(env->space);
  int rc = genetic_read_params(g, params, nparams, err);
  if (rc == HERON_OK && genetic_alloc(g) != HERON_OK)
    rc = heron_error_set(err, HERON_ENOMEM, "genetic: out of memory");
  if (rc != HERON_OK) {
    genetic_destroy(g);
    return rc;
  }
  genetic_find_candidates(g);
  env->log(env, HERON_LOG_DEBUG,
           "pop=%d iter_walks=%d history_topk=%d select_num=%d "
           "children=%d elite=%d crossover_key_ratio=%g (%d keys of %d "
           "variables) fallback_key_ratio=%g (%d keys) epsilon=%g "
           "temperature=%g",
           g->pop, g->iter_walks, g->history_topk, g->select_num, g->children,
           g->elite, g->key_ratio, g->nkeys, g->nvars, g->fallback_ratio,
           g->nkeys_fallback, g->epsilon, g->temperature);
  *self = g;
  return HERON_OK;
}

/* ---- Selection ----------------------------------------------------------- */
static int genetic_rank_cmp(const void *a, const void *b) {
  const genetic_rank *x = a, *y = b;
  if (x->score != y->score)
    return x->score > y->score ? -1 : 1;
  return x->tie < y->tie ? -1 : x->tie > y->tie;
}

/* Sorts score[0..n) best first into g->order (ties in random order). */
static void genetic_sort(genetic *g, const double *score, int n) {
  for (int i = 0; i < n; i++)
    g->order[i] =
        (genetic_rank){.score = isnan(score[i]) ? -HUGE_VAL : score[i],
                       .tie = heron_rng_next(g->env->rng),
                       .idx = i};
  qsort(g->order, (size_t)n, sizeof *g->order, genetic_rank_cmp);
}

/* Roulette-wheel weights: scores normalised to [0, 1] by the pool's range,
 * weight exp((s - 1) / temperature), so the best config weighs 1 and the
 * worst exp(-1 / temperature), whatever the scale of the scores (log
 * GFLOP/s predictions or measured GFLOP/s).  Equal scores weigh alike. */
static void genetic_weights(const genetic *g, const double *score, int n,
                            double *w) {
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (int i = 0; i < n; i++) {
    if (isnan(score[i]))
      continue;
    lo = score[i] < lo ? score[i] : lo;
    hi = score[i] > hi ? score[i] : hi;
  }
  double range = hi - lo;
  for (int i = 0; i < n; i++) {
    double s = isnan(score[i]) ? 0.0 : range > 0 ? (score[i] - lo) / range : 1;
    w[i] = exp((s - 1.0) / g->temperature);
  }
}

/* Spins the wheel over w[0..n): an index with probability w[i] / sum, or
 * -1 when every weight is 0. */
static int genetic_spin(heron_rng *rng, const double *w, int n) {
  double total = 0;
  for (int i = 0; i < n; i++)
    total += w[i];
  if (!(total > 0))
    return -1;
  double x = heron_rng_uniform(rng) * total;
  for (int i = 0; i < n; i++) {
    x -= w[i];
    if (x < 0 && w[i] > 0)
      return i;
  }
  for (int i = n - 1; i >= 0; i--) /* rounding left x >= 0 */
    if (w[i] > 0)
      return i;
  return -1;
}

/* ---- Key variables ------------------------------------------------------- */

/* Ranks the key candidates by the model's feature importance (features are
 * the variables, in order), best first; without importance the rank stays
 * as it is and every key is drawn at random. */
static void genetic_rank_keys(genetic *g) {
  const heron_model *m = g->env->model;
  g->has_rank = 0;
  heron_error e = {0};
  if (!m || g->nf != g->nvars ||
      heron_model_importance(m, g->imp, g->nf, &e) != HERON_OK) {
    g->env->log(g->env, HERON_LOG_DEBUG,
                "no feature importance (%s): all key "
                "variables are random",
                m ? e.text : "no model");
    return;
  }
  for (int i = 0; i < g->ncand; i++)
    g->w[i] = g->imp[g->cand[i]];
  genetic_sort(g, g->w, g->ncand);
  for (int i = 0; i < g->ncand; i++)
    g->rank[i] = g->cand[g->order[i].idx];
  g->has_rank = 1;
}

/* Chooses n key variables into g->keys: the top half (rounded up) of the
 * importance rank when there is one, the rest drawn at random from the
 * remaining candidates. */
static void genetic_choose_keys(genetic *g, int n) {
  int ntop = g->has_rank ? (n + 1) / 2 : 0;
  memcpy(g->pick, g->rank, (size_t)g->ncand * sizeof *g->pick);
  for (int i = ntop; i < n; i++) {
    int j = i + (int)heron_rng_below(g->env->rng, (uint64_t)(g->ncand - i));
    int t = g->pick[i];
    g->pick[i] = g->pick[j];
    g->pick[j] = t;
  }
  memcpy(g->keys, g->pick, (size_t)n * sizeof *g->keys);
  g->nk = n;
}

/* Writes the key variables' names into buf, comma-separated, for the log. */
static void genetic_key_names(const genetic *g, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < g->nk && at < cap; i++) {
    int n = snprintf(buf + at, cap - at, "%s%s", i ? "," : "",
                     heron_space_var_name(g->sp, g->keys[i]));
    at += n > 0 ? (size_t)n : 0;
  }
}

/* ---- Breeding ------------------------------------------------------------ */

/* One child of pa and pb: every key variable but one from either parent
 * (heron_space_crossover, which re-solves the other variables), then the
 * remaining key mutated (heron_space_mutate keeps the other knobs where it
 * can).  The key that mutates is a knob: an auxiliary variable (a product
 * of tiles, a buffer size) follows from the knobs, and asking the solver
 * for another value of one with a wide interval domain sends it searching
 * that whole interval.  Keys without a knob are all crossed over and one
 * random knob mutates.  When the parents' keys admit no child the first
 * parent is mutated instead.  Returns HERON_OK, HERON_EUNSAT (no child this
 * time) or a real error. */
static int genetic_child(genetic *g, const int64_t *pa, const int64_t *pb,
                         int64_t *child, heron_error *err) {
  heron_rng *rng = g->env->rng;
  int nk = g->nk, *keys = g->keys, nknob = 0;
  if (nk == 0) /* a space of one config: nothing to inherit */
    return heron_space_sample(g->sp, rng, child, err);
  for (int i = 0; i < nk; i++)
    nknob += g->knob[keys[i]];
  if (nknob > 0) { /* move a random knob key to the end */
    int m = (int)heron_rng_below(rng, (uint64_t)nknob);
    for (int i = 0; i < nk; i++)
      if (g->knob[keys[i]] && m-- == 0) {
        int t = keys[i];
        keys[i] = keys[nk - 1];
        keys[nk - 1] = t;
        break;
      }
  }
  int ncross = nknob > 0 ? nk - 1 : nk;
  heron_error e = {0};
  int rc = heron_space_crossover(g->sp, rng, pa, pb, keys, ncross, child, &e);
  if (rc == HERON_EUNSAT) {
    memcpy(child, pa, (size_t)g->nvars * sizeof *child);
    rc = HERON_OK;
  }
  if (rc != HERON_OK)
    return heron_error_set(err, rc, "genetic: crossover failed: %s", e.text);
  heron_error_clear(&e);
  rc = heron_space_mutate(g->sp, rng, child, keys + ncross, nk - ncross, g->tmp,
                          &e);
  if (rc == HERON_OK)
    memcpy(child, g->tmp, (size_t)g->nvars * sizeof *child);
  else if (rc != HERON_EUNSAT) /* EUNSAT: the key has one legal value */
    return heron_error_set(err, rc, "genetic: mutation failed: %s", e.text);
  return HERON_OK;
}

/* ---- Predictions --------------------------------------------------------- */

/* Predicts p's configs [from, p->n) into their scores. */
static int genetic_predict(genetic *g, genetic_pool *p, int from,
                           heron_error *err) {
  int n = p->n - from;
  if (n <= 0)
    return HERON_OK;
  for (int i = 0; i < n; i++)
    heron_space_features(g->sp, genetic_pool_cfg(p, from + i),
                         g->X + (size_t)i * (size_t)g->nf);
  return heron_model_predict(g->env->model, g->X, n, g->nf, p->score + from,
                             err);
}

/* Draws up to `n` constrained random configs into pool p (new keys only,
 * tracked in g->seen).  Returns HERON_OK or a real error. */
static int genetic_add_samples(genetic *g, genetic_pool *p, int n,
                               heron_error *err) {
  int fails = 0;
  for (int i = 0; i < n && p->n < p->cap && fails < 16 + n; i++) {
    int64_t *cfg = genetic_pool_cfg(p, p->n);
    heron_error e = {0};
    int rc = heron_space_sample(g->sp, g->env->rng, cfg, &e);
    if (rc == HERON_EUNSAT) {
      fails++;
      continue;
    }
    if (rc != HERON_OK)
      return heron_error_set(err, rc, "genetic: sampling failed: %s", e.text);
    uint64_t key = genetic_key(g, cfg);
    if (genetic_set_add(&g->seen, key))
      genetic_pool_push(p, cfg, key, 0);
  }
  return HERON_OK;
}

/* The history indices of its best `k` measurements (ok ones by GFLOP/s,
 * then failures as 0 when with_failures), best first, into *idx (malloc'ed,
 * the caller frees it); returns how many, or an error. */
static int genetic_history_top(genetic *g, int k, int with_failures, int **idx,
                               heron_error *err) {
  const heron_history *h = g->env->history;
  int total = h ? heron_history_count(h) : 0;
  *idx = NULL;
  if (total == 0 || k == 0)
    return 0;
  genetic_rank *r = malloc((size_t)total * sizeof *r);
  int *out = malloc((size_t)total * sizeof *out);
  if (!r || !out) {
    free(r);
    free(out);
    return heron_error_set(err, HERON_ENOMEM, "genetic: out of memory");
  }
  int n = 0;
  for (int i = 0; i < total; i++) {
    const heron_measurement *m = heron_history_get(h, i);
    int ok = m && m->config && m->status == HERON_MEAS_OK;
    if (m && m->config && (ok || with_failures))
      r[n++] = (genetic_rank){
          .score = ok ? m->gflops : 0.0, .tie = (uint64_t)i, .idx = i};
  }
  qsort(r, (size_t)n, sizeof *r, genetic_rank_cmp);
  if (n > k)
    n = k;
  for (int i = 0; i < n; i++)
    out[i] = r[i].idx;
  free(r);
  *idx = out;
  return n;
}

/* ---- The model-guided round ---------------------------------------------- */

/* Step 1: the round's population, the best `pop` of random samples, the
 * best measured and last round's population, by predicted score. */
static int genetic_seed_population(genetic *g, heron_error *err) {
  genetic_pool *w = &g->work;
  w->n = 0;
  genetic_set_clear(&g->seen);
  int rc = genetic_add_samples(g, w, g->pop, err);
  int *top = NULL;
  int ntop = rc == HERON_OK
                 ? genetic_history_top(g, g->history_topk, 0, &top, err)
                 : 0;
  if (ntop < 0)
    return ntop;
  for (int i = 0; i < ntop; i++) {
    const int64_t *cfg = heron_history_get(g->env->history, top[i])->config;
    uint64_t key = genetic_key(g, cfg);
    if (genetic_set_add(&g->seen, key))
      genetic_pool_push(w, cfg, key, 0);
  }
  free(top);
  for (int i = 0; i < g->popl.n; i++)
    if (genetic_set_add(&g->seen, g->popl.key[i]))
      genetic_pool_push(w, genetic_pool_cfg(&g->popl, i), g->popl.key[i], 0);
  if (rc == HERON_OK)
    rc = genetic_predict(g, w, 0, err);
  if (rc != HERON_OK)
    return rc;
  genetic_sort(g, w->score, w->n);
  g->popl.n = 0;
  for (int i = 0; i < w->n && g->popl.n < g->pop; i++) {
    int j = g->order[i].idx;
    genetic_pool_push(&g->popl, genetic_pool_cfg(w, j), w->key[j], w->score[j]);
  }
  return HERON_OK;
}

/* Step 2, one generation: new keys, select_num roulette-selected parents,
 * `children` children predicted, then population = children + elite. */
static int genetic_generation(genetic *g, int gen, heron_error *err) {
  genetic_pool *pop = &g->popl, *next = &g->next;
  heron_rng *rng = g->env->rng;
  genetic_choose_keys(g, g->nkeys);
  genetic_weights(g, pop->score, pop->n, g->w);
  for (int s = 0; s < g->select_num; s++)
    g->sel[s] = genetic_spin(rng, g->w, pop->n);
  next->n = 0;
  genetic_set_clear(&g->seen);
  for (int c = 0; c < g->children && next->n < next->cap; c++) {
    int a = g->sel[heron_rng_below(rng, (uint64_t)g->select_num)];
    int b = g->sel[heron_rng_below(rng, (uint64_t)g->select_num)];
    int64_t *child = genetic_pool_cfg(next, next->n);
    int rc = genetic_child(g, genetic_pool_cfg(pop, a),
                           genetic_pool_cfg(pop, b), child, err);
    if (rc == HERON_EUNSAT)
      continue;
    if (rc != HERON_OK)
      return rc;
    uint64_t key = genetic_key(g, child);
    if (genetic_set_add(&g->seen, key))
      genetic_pool_push(next, child, key, 0);
  }
  int nchildren = next->n;
  int rc = genetic_predict(g, next, 0, err);
  if (rc != HERON_OK)
    return rc;
  double best_child = -HUGE_VAL;
  for (int i = 0; i < nchildren; i++)
    best_child = next->score[i] > best_child ? next->score[i] : best_child;
  genetic_sort(g, pop->score, pop->n);
  for (int i = 0, kept = 0; i < pop->n && kept < g->elite; i++) {
    int j = g->order[i].idx;
    if (genetic_set_add(&g->seen, pop->key[j])) {
      genetic_pool_push(next, genetic_pool_cfg(pop, j), pop->key[j],
                        pop->score[j]);
      kept++;
    }
  }
  genetic_pool t = *pop;
  *pop = *next;
  *next = t;
  char names[512];
  genetic_key_names(g, names, sizeof names);
  g->env->log(g->env, HERON_LOG_DEBUG,
              "generation %d/%d: keys [%s]; %d children, best child "
              "%.4g, population %d",
              gen + 1, g->iter_walks, names, nchildren, best_child, pop->n);
  return HERON_OK;
}

/* Copies pool config i into the batch when it is neither measured nor
 * already in it.  Returns 1 when taken. */
static int genetic_take(genetic *g, const genetic_pool *p, int i, int64_t *out,
                        int *n) {
  if (genetic_set_has(&g->batch, p->key[i]) || genetic_measured(g, p->key[i]))
    return 0;
  genetic_set_add(&g->batch, p->key[i]);
  memcpy(out + (size_t)*n * (size_t)g->nvars, genetic_pool_cfg(p, i),
         (size_t)g->nvars * sizeof *out);
  (*n)++;
  return 1;
}

/* Step 3: epsilon * want by best prediction, the rest by roulette wheel over
 * what is left.  Writes how many each way took. */
static void genetic_pick(genetic *g, int want, int64_t *out, int *n,
                         int *by_best, int *by_wheel) {
  genetic_pool *pop = &g->popl;
  int nbest = (int)lround(g->epsilon * want);
  genetic_sort(g, pop->score, pop->n);
  for (int i = 0; i < pop->n && *n < nbest; i++)
    *by_best += genetic_take(g, pop, g->order[i].idx, out, n);
  /* The wheel spins over what is still eligible; a drawn entry's weight
   * drops to 0, so every spin takes a new config. */
  genetic_weights(g, pop->score, pop->n, g->w);
  for (int i = 0; i < pop->n; i++)
    if (genetic_set_has(&g->batch, pop->key[i]) ||
        genetic_measured(g, pop->key[i]))
      g->w[i] = 0;
  while (*n < want) {
    int i = genetic_spin(g->env->rng, g->w, pop->n);
    if (i < 0)
      break;
    g->w[i] = 0;
    *by_wheel += genetic_take(g, pop, i, out, n);
  }
}

/* Fills the batch up to `want` with constrained random configs that are
 * neither measured nor already in it.  Returns HERON_OK or a real error. */
static int genetic_fill_random(genetic *g, int want, int64_t *out, int *n,
                               heron_error *err) {
  int fails = 0, limit = 64 + 8 * want;
  while (*n < want && fails < limit) {
    int64_t *cfg = out + (size_t)*n * (size_t)g->nvars;
    heron_error e = {0};
    int rc = heron_space_sample(g->sp, g->env->rng, cfg, &e);
    if (rc != HERON_OK && rc != HERON_EUNSAT)
      return heron_error_set(err, rc, "genetic: sampling failed: %s", e.text);
    uint64_t key = rc == HERON_OK ? genetic_key(g, cfg) : 0;
    if (rc != HERON_OK || genetic_measured(g, key) ||
        !genetic_set_add(&g->batch, key)) {
      fails++;
      continue;
    }
    (*n)++;
  }
  return HERON_OK;
}

static int genetic_round_model(genetic *g, int want, int64_t *out, int *n,
                               heron_error *err) {
  int rc = genetic_seed_population(g, err);
  if (rc != HERON_OK)
    return rc;
  genetic_rank_keys(g);
  /* An empty population (no sample found, nothing measured) breeds
   * nothing; the random fill below has the last word. */
  for (int gen = 0; rc == HERON_OK && g->popl.n > 0 && gen < g->iter_walks;
       gen++)
    rc = genetic_generation(g, gen, err);
  if (rc != HERON_OK)
    return rc;
  int by_best = 0, by_wheel = 0;
  genetic_pick(g, want, out, n, &by_best, &by_wheel);
  double best = -HUGE_VAL;
  for (int i = 0; i < g->popl.n; i++)
    best = g->popl.score[i] > best ? g->popl.score[i] : best;
  rc = genetic_fill_random(g, want, out, n, err);
  g->env->log(g->env, HERON_LOG_INFO,
              "round %d: population %d, %d generations, best "
              "predicted %.4g; proposing %d (%d best predicted, %d roulette, "
              "%d random)",
              g->round, g->popl.n, g->iter_walks, best, *n, by_best, by_wheel,
              *n - by_best - by_wheel);
  return rc;
}

/* ---- The measured-fitness round (no model) ------------------------------- */

/* The population = the best `pop` measurements (GFLOP/s, failures 0).
 * Returns how many succeeded among them, or an error. */
static int genetic_population_from_history(genetic *g, heron_error *err) {
  int *top = NULL;
  int n = genetic_history_top(g, g->pop, 1, &top, err);
  if (n < 0)
    return n;
  int ok = 0;
  g->popl.n = 0;
  for (int i = 0; i < n; i++) {
    const heron_measurement *m = heron_history_get(g->env->history, top[i]);
    int good = m->status == HERON_MEAS_OK;
    ok += good;
    genetic_pool_push(&g->popl, m->config, genetic_key(g, m->config),
                      good ? m->gflops : 0.0);
  }
  free(top);
  return ok;
}

static int genetic_round_measured(genetic *g, int want, int64_t *out, int *n,
                                  heron_error *err) {
  int ok = genetic_population_from_history(g, err);
  if (ok < 0)
    return ok;
  int children = 0;
  if (ok > 0) {
    genetic_pool *pop = &g->popl;
    g->has_rank = 0;
    memcpy(g->rank, g->cand, (size_t)g->ncand * sizeof *g->rank);
    genetic_weights(g, pop->score, pop->n, g->w);
    for (int tries = 0; *n < want && tries < 16 + 8 * want; tries++) {
      int a = genetic_spin(g->env->rng, g->w, pop->n);
      int b = genetic_spin(g->env->rng, g->w, pop->n);
      int64_t *child = out + (size_t)*n * (size_t)g->nvars;
      genetic_choose_keys(g, g->nkeys_fallback); /* no importance here */
      int rc = genetic_child(g, genetic_pool_cfg(pop, a),
                             genetic_pool_cfg(pop, b), child, err);
      if (rc == HERON_EUNSAT)
        continue;
      if (rc != HERON_OK)
        return rc;
      uint64_t key = genetic_key(g, child);
      if (genetic_measured(g, key) || !genetic_set_add(&g->batch, key))
        continue;
      (*n)++;
      children++;
    }
  }
  int rc = genetic_fill_random(g, want, out, n, err);
  if (ok > 0)
    g->env->log(g->env, HERON_LOG_INFO,
                "round %d: no model: population %d measured (best "
                "%.4g GFLOP/s); proposing %d (%d children, %d random)",
                g->round, g->popl.n, g->popl.score[0], *n, children,
                *n - children);
  else
    g->env->log(g->env, HERON_LOG_INFO,
                "round %d: nothing measured ran yet: proposing %d "
                "constrained random configs",
                g->round, *n);
  return rc;
}

/* ---- propose / observe --------------------------------------------------- */
static int genetic_propose(void *self, int want, int64_t *out, int *got,
                           heron_error *err) {
  genetic *g = self;
  double t0 = plugin_now();
  int n = 0, rc = HERON_OK;
  *got = 0;
  if (want <= 0)
    return HERON_OK;
  g->round++;
  if (2 * (size_t)want > g->batch.mask + 1) {
    free(g->batch.slot);
    if (genetic_set_init(&g->batch, want) != HERON_OK)
      return heron_error_set(err, HERON_ENOMEM, "genetic: out of memory");
  }
  genetic_set_clear(&g->batch);
  const heron_model *m = g->env->model;
  if (m && heron_model_trained(m)) {
    heron_error e = {0};
    rc = genetic_round_model(g, want, out, &n, &e);
    /* A model that fails to predict leaves the measured GA, not a dead run:
     * the engine stops on any error propose returns. */
    if (rc != HERON_OK && rc != HERON_ENOMEM) {
      g->env->log(g->env, HERON_LOG_WARN,
                  "%s; this round uses measured fitness", e.text);
      n = 0;
      genetic_set_clear(&g->batch);
      rc = genetic_round_measured(g, want, out, &n, err);
    } else if (rc != HERON_OK) {
      heron_error_set(err, rc, "%s", e.text);
    }
  } else {
    rc = genetic_round_measured(g, want, out, &n, err);
  }
  if (rc != HERON_OK)
    return rc;
  *got = n;
  g->env->log(g->env, HERON_LOG_DEBUG, "round %d: propose took %.1f ms",
              g->round, 1e3 * (plugin_now() - t0));
  /* Nothing new found (a small space measured through, or one this round's
   * search and random draws missed): propose nothing, as the other
   * strategies do; the engine ends the run cleanly (status 0) after 8 such
   * rounds in a row, saying the space may be exhausted.  An error here
   * would end it as a plugin failure. */
  if (n == 0 && g->empty++ == 0)
    g->env->log(g->env, HERON_LOG_INFO,
                "round %d: found no unmeasured valid config to propose (the "
                "space may be exhausted)",
                g->round);
  if (n > 0)
    g->empty = 0;
  return HERON_OK;
}

/* Everything measured is in the history, which every round reads, so
 * observe only counts. */
static int genetic_observe(void *self, const heron_measurement *results, int n,
                           heron_error *err) {
  genetic *g = self;
  g->observed += n;
  return HERON_OK;
}

/* ---- save_state / load_state ----------------------------------------------
 *
 * The state is the population, which is all that carries over between
 * rounds; its scores are re-predicted by the next round, so only configs
 * are saved:
 *
 *     heron-genetic-state 1
 *     <nvars> <population size> <round>
 *     <nvars integers per config, one config a line>
 */
static int genetic_save_state(void *self, const char *path, heron_error *err) {
  genetic *g = self;
  FILE *f = fopen(path, "w");
  if (!f)
    return heron_error_set(err, HERON_EIO, "genetic: cannot write %s", path);
  fprintf(f, "heron-genetic-state 1\n%d %d %d\n", g->nvars, g->popl.n,
          g->round);
  for (int i = 0; i < g->popl.n; i++) {
    const int64_t *cfg = genetic_pool_cfg(&g->popl, i);
    for (int v = 0; v < g->nvars; v++)
      fprintf(f, "%" PRId64 "%c", cfg[v], v + 1 < g->nvars ? ' ' : '\n');
  }
  int bad = ferror(f);
  if (fclose(f) != 0 || bad)
    return heron_error_set(err, HERON_EIO, "genetic: cannot write %s", path);
  return HERON_OK;
}

/* Reads the population into g->next (so a bad file leaves the state as it
 * was) and swaps it in when every config is valid in this space. */
static int genetic_load_state(void *self, const char *path, heron_error *err) {
  genetic *g = self;
  FILE *f = fopen(path, "r");
  if (!f)
    return heron_error_set(err, HERON_EIO, "genetic: cannot read %s", path);
  int version = 0, nvars = 0, npop = 0, round = 0;
  const char *why = NULL;
  if (fscanf(f, "heron-genetic-state %d %d %d %d", &version, &nvars, &npop,
             &round) != 4 ||
      version != 1)
    why = "no heron-genetic-state 1 header";
  else if (nvars != g->nvars)
    why = "it has another number of variables";
  else if (npop < 0 || npop > g->next.cap)
    why = "its population size is out of range";
  genetic_pool *p = &g->next;
  p->n = 0;
  for (int i = 0; !why && i < npop; i++) {
    int64_t *cfg = genetic_pool_cfg(p, i);
    for (int v = 0; !why && v < nvars; v++)
      if (fscanf(f, "%" SCNd64, &cfg[v]) != 1)
        why = "a config is truncated or not numeric";
    if (!why && heron_space_violations(g->sp, cfg, NULL, 0) != 0)
      why = "a config violates this space's constraints";
    if (!why)
      genetic_pool_push(p, cfg, genetic_key(g, cfg), 0);
  }
  fclose(f);
  if (why) {
    p->n = 0;
    return heron_error_set(err, HERON_EPARSE,
                           "genetic: %s is not a state file for this space: "
                           "%s",
                           path, why);
  }
  genetic_pool t = g->popl;
  g->popl = g->next;
  g->next = t;
  g->round = round;
  g->env->log(g->env, HERON_LOG_DEBUG, "resumed a population of %d at round %d",
              g->popl.n, g->round);
  return HERON_OK;
}

static const heron_strategy_plugin genetic_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "genetic",
    .summary = "Heron's constraint-based genetic algorithm guided by the "
               "cost model",
    HERON_PARAM_SPECS(genetic_params),
    .create = genetic_create,
    .propose = genetic_propose,
    .observe = genetic_observe,
    .destroy = genetic_destroy,
    .save_state = genetic_save_state,
    .load_state = genetic_load_state,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &genetic_plugin;
}
