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
 *
 * This file is the plugin: parameters, create / destroy, propose /
 * observe, the state file.  round.c runs the rounds (selection, key
 * variables, breeding, predictions), pool.c holds the pools of configs and
 * the sets of keys; genetic.h is what they share.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genetic.h"
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
      genetic_pool_push(p, cfg, plugin_config_key(g->sp, cfg), 0);
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
