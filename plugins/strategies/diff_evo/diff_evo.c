/* plugins/strategies/diff_evo/diff_evo.c - differential evolution, after
 * Kernel Tuner's `diff_evo` strategy (kernel_tuner/strategies/diff_evo.py).
 *
 * Individuals are valid configs; the algorithm works on the vector of
 * their knobs' value indices (popsearch.h).  The population (popsize, times
 * the number of knobs with more than one value when popsize_times_dimensions
 * is on) starts from a Latin hypercube sample of index vectors, each moved
 * to the nearest valid config, duplicates replaced by random samples, the
 * first individual a random sample.  A generation builds one trial per
 * individual i:
 *
 *   - mutation, by `method` (<base><n><crossover>): a donor index vector
 *     best1: best + F (b - c)          rand1: a + F (b - c)
 *     best2: best + F (b + c - d - e)  rand2: a + F (b + c - d - e)
 *     currenttobest1: x_i + F (best - x_i + b - c)
 *     randtobest1:    a + F (best - a + b - c)
 *     with a..e drawn from the other individuals (without replacement
 *     while there are enough), rounded (half to even) and clipped;
 *   - crossover with x_i: bin takes each index from the donor with
 *     probability CR (at least one), exp a cyclic run of them starting at a
 *     random knob, continued while a draw is below CR;
 *   - the trial is moved to the nearest valid config (heron_space_repair;
 *     Kernel Tuner picks a random config among those closest in the sum of
 *     index differences), kept when it is not in the trial population
 *     already; 20 misses in a row add a random sample instead.
 *
 * The trials are one generation, proposed as rounds of the engine's batch
 * (configs measured before answered from the cache, as Kernel Tuner's
 * runner does).  Selection: a trial at least as fast as x_i replaces it
 * unless it is in the population already; once three generations have
 * changed nothing, every later generation is a fresh Latin hypercube
 * sample (as Kernel Tuner does).  After maxiter generations (at most the
 * space's size), or POP_STALL_RESTART generations with nothing new to
 * measure, the algorithm starts afresh.  See README.md.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_util.h"
#include "popsearch.h"

#define DE_METHODS                                                             \
  "best1bin|rand1bin|best2bin|rand2bin|best1exp|rand1exp|best2exp|rand2exp|"   \
  "currenttobest1bin|currenttobest1exp|randtobest1bin|randtobest1exp"

static const heron_param_spec de_params[] = {
    {.key = "popsize",
     .kind = HERON_PARAM_INT,
     .default_value = "16",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 100000,
     .help = "population size (times the knobs, see popsize_times_"
             "dimensions)"},
    {.key = "popsize_times_dimensions",
     .kind = HERON_PARAM_BOOL,
     .default_value = "true",
     .help = "multiply popsize by the number of knobs with more than one "
             "value"},
    {.key = "maxiter",
     .kind = HERON_PARAM_INT,
     .default_value = "1000000000000000",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1e15,
     .help = "generations (at most the space's size) before starting afresh"},
    {.key = "F",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.7",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 2,
     .help = "mutation factor (differential weight)"},
    {.key = "CR",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.6",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help = "crossover rate"},
    {.key = "method",
     .kind = HERON_PARAM_CHOICE,
     .choices = DE_METHODS,
     .default_value = "best1bin",
     .help = "mutation base, number of differences and crossover"},
    {.key = NULL},
};

enum de_kind { DE_BEST, DE_RAND, DE_CURRENTTOBEST, DE_RANDTOBEST };

typedef struct diff_evo {
  const heron_strategy_env *env;
  pop_run run;
  pop_coords pc;
  int nk, nv, popsize, np; /* np: the population actually built */
  int64_t maxiter, gen;
  double F, CR;
  int kind, ndiff, exp_cross; /* the method */
  int trials;                 /* the generation is trials, not a population */
  int stabilized;
  int64_t *pop;   /* np x nv */
  uint64_t *key;  /* np */
  double *popidx; /* np x nk */
  double *cost;   /* np */
  double *best;   /* nk: the best individual's indices */
  double best_cost;
  double *donor, *trial, *u; /* nk each; u: LHS strata (popsize x nk) */
  int *idxs, *perm;          /* np, popsize */
  int64_t *cfg;
} diff_evo;

static void de_destroy(void *self) {
  diff_evo *d = self;
  if (!d)
    return;
  d->env->log(d->env, HERON_LOG_DEBUG,
              "%ld generations, %ld restarts, %zu configs measured",
              d->run.generations, d->run.restarts, d->run.cache.n);
  pop_run_free(&d->run);
  pop_coords_free(&d->pc);
  free(d->pop);
  free(d->key);
  free(d->popidx);
  free(d->cost);
  free(d->best);
  free(d->donor);
  free(d->trial);
  free(d->u);
  free(d->idxs);
  free(d->perm);
  free(d->cfg);
  free(d);
}

static int de_oom(heron_error *err) {
  return heron_error_set(err, HERON_ENOMEM, "diff_evo: out of memory");
}

static int de_add(diff_evo *d, const int64_t *cfg, heron_error *err) {
  return pop_add(&d->run, cfg) < 0 ? de_oom(err) : HERON_OK;
}

/* 1 when key is one of the first n entries of the generation. */
static int de_in_gen(const diff_evo *d, uint64_t key, int n) {
  for (int i = 0; i < n; i++)
    if (d->run.gen.key[i] == key)
      return 1;
  return 0;
}

/* Adds to the generation a Latin hypercube sample of n index vectors, each
 * as its nearest valid config, duplicates (of anything in the generation)
 * replaced by random samples, as Kernel Tuner's get_LHS_sample does.  Adds
 * fewer only when the space runs out of configs. */
static int de_lhs(diff_evo *d, int n, heron_error *err) {
  for (int k = 0; k < d->nk; k++) {
    for (int i = 0; i < n; i++)
      d->perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
      int j = (int)heron_rng_below(d->env->rng, (uint64_t)i + 1);
      int t = d->perm[i];
      d->perm[i] = d->perm[j];
      d->perm[j] = t;
    }
    for (int i = 0; i < n; i++)
      d->u[(size_t)i * d->nk + k] =
          (d->perm[i] + heron_rng_uniform(d->env->rng)) / n;
  }
  int base = d->run.gen.n, misses = 0, rc = HERON_OK;
  for (int i = 0; i < n && rc == HERON_OK; i++) {
    for (int k = 0; k < d->nk; k++)
      d->donor[k] = floor(d->u[(size_t)i * d->nk + k] * (double)d->pc.len[k]);
    rc = pop_coords_config(&d->pc, d->env->rng, d->donor, d->cfg, err);
    if (rc == HERON_OK &&
        !de_in_gen(d, plugin_config_key(d->env->space, d->cfg), d->run.gen.n))
      rc = de_add(d, d->cfg, err);
  }
  while (rc == HERON_OK && d->run.gen.n - base < n && misses < 100 * n) {
    rc = pop_sample(d->env, d->cfg, err);
    if (rc != HERON_OK)
      break;
    if (de_in_gen(d, plugin_config_key(d->env->space, d->cfg), d->run.gen.n))
      misses++;
    else
      rc = de_add(d, d->cfg, err);
  }
  return rc;
}

/* A fresh population: a random sample first (Kernel Tuner's start
 * position, which replaces its first Latin hypercube individual), then a
 * Latin hypercube sample for the others. */
static int de_start(diff_evo *d, heron_error *err) {
  d->gen = 0;
  d->stabilized = 0;
  d->trials = 0;
  pop_gen_clear(&d->run.gen);
  int rc = pop_sample(d->env, d->cfg, err);
  if (rc == HERON_OK)
    rc = de_add(d, d->cfg, err);
  if (rc == HERON_OK && d->popsize > 1)
    rc = de_lhs(d, d->popsize - 1, err);
  d->np = d->run.gen.n;
  return rc;
}

/* Takes the finished generation as the population (the initial one). */
static void de_take_population(diff_evo *d) {
  const pop_gen *g = &d->run.gen;
  int bi = 0;
  for (int i = 0; i < d->np; i++) {
    memcpy(d->pop + (size_t)i * d->nv, g->cfg + (size_t)i * (size_t)(d->nv + 1),
           (size_t)d->nv * sizeof *d->pop);
    d->key[i] = g->key[i];
    d->cost[i] = g->cost[i];
    pop_coords_of(&d->pc, d->pop + (size_t)i * d->nv,
                  d->popidx + (size_t)i * d->nk);
    if (d->cost[i] < d->cost[bi])
      bi = i;
  }
  d->best_cost = d->cost[bi];
  memcpy(d->best, d->popidx + (size_t)bi * d->nk,
         (size_t)d->nk * sizeof *d->best);
}

/* Selection: trial i replaces individual i when at least as fast and not
 * in the population already.  Returns 1 when the population changed. */
static int de_select(diff_evo *d) {
  const pop_gen *g = &d->run.gen;
  int changed = 0;
  for (int i = 0; i < d->np && i < g->n; i++) {
    double c = g->cost[i];
    if (!(c <= d->cost[i]))
      continue;
    int present = 0;
    for (int j = 0; j < d->np && !present; j++)
      present = d->key[j] == g->key[i];
    const int64_t *cfg = g->cfg + (size_t)i * (size_t)(d->nv + 1);
    if (!present) {
      memcpy(d->pop + (size_t)i * d->nv, cfg, (size_t)d->nv * sizeof *cfg);
      d->key[i] = g->key[i];
      d->cost[i] = c;
      pop_coords_of(&d->pc, cfg, d->popidx + (size_t)i * d->nk);
      changed = 1;
    }
    if (c < d->best_cost) {
      d->best_cost = c;
      pop_coords_of(&d->pc, cfg, d->best);
    }
  }
  return changed;
}

/* The donor of individual i: the method's mutation on the index vectors,
 * rounded (half to even) and clipped. */
static void de_donor(diff_evo *d, int i) {
  int others = 0;
  for (int j = 0; j < d->np; j++)
    if (j != i)
      d->idxs[others++] = j;
  if (others == 0) /* a population of one: itself */
    d->idxs[others++] = i;
  int draw = 2 * d->ndiff + 1 - (d->kind == DE_BEST);
  int r[5];
  if (draw >= others) { /* with replacement */
    for (int t = 0; t < draw; t++)
      r[t] = d->idxs[heron_rng_below(d->env->rng, (uint64_t)others)];
  } else {
    for (int t = 0; t < draw; t++) {
      int j = t + (int)heron_rng_below(d->env->rng, (uint64_t)(others - t));
      int s = d->idxs[t];
      d->idxs[t] = d->idxs[j];
      d->idxs[j] = s;
      r[t] = d->idxs[t];
    }
  }
  if (d->kind == DE_CURRENTTOBEST)
    r[0] = i;
#define X(t) (d->popidx + (size_t)r[t] * d->nk)
  for (int k = 0; k < d->nk; k++) {
    double v;
    if (d->kind == DE_CURRENTTOBEST || d->kind == DE_RANDTOBEST)
      v = X(0)[k] + d->F * (d->best[k] - X(0)[k] + X(1)[k] - X(2)[k]);
    else if (d->ndiff == 1)
      v = d->kind == DE_BEST ? d->best[k] + d->F * (X(0)[k] - X(1)[k])
                             : X(0)[k] + d->F * (X(1)[k] - X(2)[k]);
    else
      v = d->kind == DE_BEST
              ? d->best[k] + d->F * (X(0)[k] + X(1)[k] - X(2)[k] - X(3)[k])
              : X(0)[k] + d->F * (X(1)[k] + X(2)[k] - X(3)[k] - X(4)[k]);
    v = nearbyint(v);
    d->donor[k] = fmax(0.0, fmin(v, (double)(d->pc.len[k] - 1)));
  }
#undef X
}

/* The trial of individual i: crossover of the donor with it. */
static void de_crossover(diff_evo *d, int i) {
  heron_rng *rng = d->env->rng;
  memcpy(d->trial, d->popidx + (size_t)i * d->nk,
         (size_t)d->nk * sizeof *d->trial);
  if (d->nk == 0)
    return;
  if (!d->exp_cross) {
    int any = 0;
    for (int k = 0; k < d->nk; k++) {
      int take = heron_rng_uniform(rng) < d->CR;
      if (take)
        d->trial[k] = d->donor[k];
      any |= take;
    }
    if (!any) {
      int k = (int)heron_rng_below(rng, (uint64_t)d->nk);
      d->trial[k] = d->donor[k];
    }
    return;
  }
  int start = (int)heron_rng_below(rng, (uint64_t)d->nk);
  for (int l = 0; l < d->nk && heron_rng_uniform(rng) < d->CR; l++)
    d->trial[(start + l) % d->nk] = d->donor[(start + l) % d->nk];
}

/* The next generation's trials. */
static int de_trials(diff_evo *d, heron_error *err) {
  pop_gen_clear(&d->run.gen);
  d->trials = 1;
  if (d->stabilized > 2) { /* nothing changed for long: a fresh sample */
    return de_lhs(d, d->np, err);
  }
  int i = 0, stuck = 0;
  while (d->run.gen.n < d->np) {
    de_donor(d, i);
    de_crossover(d, i);
    int rc = pop_coords_config(&d->pc, d->env->rng, d->trial, d->cfg, err);
    if (rc != HERON_OK)
      return rc;
    uint64_t key = plugin_config_key(d->env->space, d->cfg);
    if (!de_in_gen(d, key, d->run.gen.n)) {
      if ((rc = de_add(d, d->cfg, err)) != HERON_OK)
        return rc;
      i++;
      stuck = 0;
    } else if (++stuck >= 20) {
      if ((rc = pop_sample(d->env, d->cfg, err)) != HERON_OK ||
          (rc = de_add(d, d->cfg, err)) != HERON_OK)
        return rc;
      i++;
      stuck = 0;
    }
  }
  return HERON_OK;
}

static int de_step(void *self, int restart, heron_error *err) {
  diff_evo *d = self;
  if (restart)
    return de_start(d, err);
  if (!d->trials) {
    de_take_population(d);
  } else {
    if (!de_select(d))
      d->stabilized++;
    if (++d->gen >= d->maxiter) {
      d->env->log(d->env, HERON_LOG_DEBUG,
                  "%lld generations done: a fresh population",
                  (long long)d->gen);
      return de_start(d, err);
    }
  }
  return de_trials(d, err);
}

static int de_create(const heron_strategy_env *env, const heron_param *params,
                     int nparams, void **self, heron_error *err) {
  if (!env || !env->space || !env->rng || !env->log || !self)
    return heron_error_set(err, HERON_EINVAL,
                           "diff_evo: env without a space, an rng or a logger");
  diff_evo *d = calloc(1, sizeof *d);
  if (!d)
    return de_oom(err);
  d->env = env;
  d->nv = heron_space_nvars(env->space);
  int64_t popsize = heron_param_int_value(params, nparams, "popsize", 16);
  int times = (int)heron_param_int_value(params, nparams,
                                         "popsize_times_dimensions", 1);
  d->maxiter = heron_param_int_value(params, nparams, "maxiter", 1000000000);
  d->F = heron_param_double_value(params, nparams, "F", 0.7);
  d->CR = heron_param_double_value(params, nparams, "CR", 0.6);
  const char *method = heron_param_get(params, nparams, "method", "best1bin");
  d->kind = !strncmp(method, "currenttobest", 13) ? DE_CURRENTTOBEST
            : !strncmp(method, "randtobest", 10)  ? DE_RANDTOBEST
            : !strncmp(method, "best", 4)         ? DE_BEST
                                                  : DE_RAND;
  d->ndiff = strchr(method, '2') ? 2 : 1;
  d->exp_cross = strstr(method, "exp") != NULL;
  int rc = pop_run_init(&d->run, env, "diff_evo");
  if (rc == HERON_OK)
    rc = pop_coords_init(&d->pc, env->space);
  d->nk = d->pc.nknobs;
  /* Kernel Tuner: popsize *= min(true tunable parameters, size); maxiter =
   * min(maxiter, size). */
  double size = pop_space_size(env);
  int dims = 0;
  for (int k = 0; k < d->nk; k++)
    dims += d->pc.len[k] > 1;
  if (times)
    popsize *= (int64_t)fmin((double)dims, size);
  popsize = (int64_t)fmax(1.0, fmin((double)popsize, size));
  d->popsize = popsize > 1000000 ? 1000000 : (int)popsize;
  if ((double)d->maxiter > size)
    d->maxiter = (int64_t)size;
  size_t np = (size_t)d->popsize + 1, nk = (size_t)d->nk + 1;
  d->pop = malloc(np * (size_t)(d->nv + 1) * sizeof *d->pop);
  d->key = malloc(np * sizeof *d->key);
  d->popidx = malloc(np * nk * sizeof *d->popidx);
  d->cost = malloc(np * sizeof *d->cost);
  d->best = calloc(nk, sizeof *d->best);
  d->donor = malloc(nk * sizeof *d->donor);
  d->trial = malloc(nk * sizeof *d->trial);
  d->u = malloc(np * nk * sizeof *d->u);
  d->idxs = malloc(np * sizeof *d->idxs);
  d->perm = malloc(np * sizeof *d->perm);
  d->cfg = malloc(((size_t)d->nv + 1) * sizeof *d->cfg);
  if (rc != HERON_OK || !d->pop || !d->key || !d->popidx || !d->cost ||
      !d->best || !d->donor || !d->trial || !d->u || !d->idxs || !d->perm ||
      !d->cfg) {
    de_destroy(d);
    return de_oom(err);
  }
  env->log(env, HERON_LOG_DEBUG,
           "popsize=%d (%d knobs that vary) maxiter=%lld F=%g CR=%g "
           "method=%s",
           d->popsize, dims, (long long)d->maxiter, d->F, d->CR, method);
  *self = d;
  return HERON_OK;
}

static int de_propose(void *self, int want, int64_t *out, int *got,
                      heron_error *err) {
  diff_evo *d = self;
  return pop_run_propose(&d->run, want, out, got, de_step, d, err);
}

static int de_observe(void *self, const heron_measurement *results, int n,
                      heron_error *err) {
  diff_evo *d = self;
  return pop_run_observe(&d->run, results, n, err);
}

static const heron_strategy_plugin de_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "diff_evo",
    .summary = "Kernel Tuner's differential evolution over knob indices, "
               "repaired to valid configs",
    HERON_PARAM_SPECS(de_params),
    .create = de_create,
    .propose = de_propose,
    .observe = de_observe,
    .destroy = de_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &de_plugin;
}
