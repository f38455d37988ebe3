/* plugins/strategies/genetic_algorithm/genetic_algorithm.c - Kernel
 * Tuner's genetic algorithm (kernel_tuner/strategies/genetic_algorithm.py);
 * Heron's own, model-guided GA is the `genetic` plugin.
 *
 * A DNA is the vector of a config's knob value indices (popsearch.h).  The
 * population (popsize, reduced on small spaces as Kernel Tuner does)
 * starts as distinct random valid configs.  Each generation is evaluated,
 * sorted by cost (stable), and the next one is bred: two distinct parents
 * drawn at index int(Beta(1, 2.5) * n) of the sorted population (the head
 * is likelier), crossed over by `method` (single_point, two_point, uniform,
 * disruptive_uniform) into two children, each moved to the nearest valid
 * config (heron_space_repair; Kernel Tuner picks a random valid neighbour,
 * strictly adjacent, then adjacent, then at Hamming distance 1), then
 * mutated with chance 1 / mutation_chance into a valid config that differs
 * in a knob (heron_space_mutate; Kernel Tuner: a random valid neighbour at
 * Hamming distance 1), and kept when not in the new population already,
 * until it holds popsize or the space would be exhausted.
 *
 * A generation is proposed as rounds of the engine's batch; configs
 * measured before are answered from the cache, as Kernel Tuner's runner
 * does.  Departures: after maxiter generations (where Kernel Tuner stops),
 * after POP_STALL_RESTART generations with nothing new to measure, or when
 * no child can be bred, the algorithm starts afresh; breeding that finds
 * no new child in 100 x popsize tries fills the population with random
 * samples (Kernel Tuner would loop on).  See README.md.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_util.h"
#include "popsearch.h"

static const heron_param_spec ga_params[] = {
    {.key = "popsize",
     .kind = HERON_PARAM_INT,
     .default_value = "26",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 100000,
     .help = "population size (reduced on small spaces)"},
    {.key = "maxiter",
     .kind = HERON_PARAM_INT,
     .default_value = "90",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1e9,
     .help = "generations before starting afresh"},
    {.key = "method",
     .kind = HERON_PARAM_CHOICE,
     .choices = "single_point|two_point|uniform|disruptive_uniform",
     .default_value = "single_point",
     .help = "crossover method"},
    {.key = "mutation_chance",
     .kind = HERON_PARAM_INT,
     .default_value = "55",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1e9,
     .help = "a child mutates with chance 1 in mutation_chance"},
    {.key = NULL},
};

enum ga_method { GA_SINGLE, GA_TWO, GA_UNIFORM, GA_DISRUPTIVE };

typedef struct ga {
  const heron_strategy_env *env;
  pop_run run;
  pop_coords pc;
  int nk, nv, popsize, maxiter, method, generation;
  int64_t mutation_chance;
  double size, evaluated; /* Kernel Tuner's num_evaluated */
  int np;                 /* the sorted population */
  double *dna, *cost;     /* np x nk, np: sorted by cost */
  int *order;
  double *child[2];
  int64_t *cfg, *mut;
} ga;

static void ga_destroy(void *self) {
  ga *g = self;
  if (!g)
    return;
  g->env->log(g->env, HERON_LOG_DEBUG,
              "%ld generations, %ld restarts, %zu configs measured",
              g->run.generations, g->run.restarts, g->run.cache.n);
  pop_run_free(&g->run);
  pop_coords_free(&g->pc);
  free(g->dna);
  free(g->cost);
  free(g->order);
  free(g->child[0]);
  free(g->child[1]);
  free(g->cfg);
  free(g->mut);
  free(g);
}

static int ga_oom(heron_error *err) {
  return heron_error_set(err, HERON_ENOMEM,
                         "genetic_algorithm: out of "
                         "memory");
}

/* 1 when cfg is in the generation being built. */
static int ga_in_gen(const ga *g, const int64_t *cfg) {
  uint64_t key = plugin_config_key(g->env->space, cfg);
  for (int i = 0; i < g->run.gen.n; i++)
    if (g->run.gen.key[i] == key)
      return 1;
  return 0;
}

/* Adds random valid configs not in the generation yet until it holds n
 * (fewer when the space runs out of them). */
static int ga_fill_random(ga *g, int n, heron_error *err) {
  for (int misses = 0; g->run.gen.n < n && misses < 100 * n;) {
    int rc = pop_sample(g->env, g->cfg, err);
    if (rc != HERON_OK)
      return rc;
    if (ga_in_gen(g, g->cfg))
      misses++;
    else if (pop_add(&g->run, g->cfg) < 0)
      return ga_oom(err);
  }
  return HERON_OK;
}

static int ga_start(ga *g, heron_error *err) {
  g->generation = 0;
  g->evaluated = 0;
  pop_gen_clear(&g->run.gen);
  return ga_fill_random(g, g->popsize, err);
}

/* A parent's index in the sorted population: int(Beta(1, 2.5) * n). */
static int ga_parent(ga *g) {
  double u = heron_rng_uniform(g->env->rng);
  int i = (int)((1.0 - pow(1.0 - u, 1.0 / 2.5)) * g->np);
  return i < g->np ? i : g->np - 1;
}

static void ga_crossover(ga *g, const double *a, const double *b) {
  double *c1 = g->child[0], *c2 = g->child[1];
  heron_rng *rng = g->env->rng;
  int n = g->nk;
  size_t row = (size_t)n * sizeof *c1;
  memcpy(c1, a, row);
  memcpy(c2, b, row);
  if (g->method == GA_SINGLE) {
    int pos = (int)(heron_rng_uniform(rng) * n);
    for (int k = pos; k < n; k++)
      c1[k] = b[k], c2[k] = a[k];
  } else if (g->method == GA_TWO) {
    int start = n < 5 ? 0 : 1, end = n < 5 ? n : n - 1;
    if (end - start < 2)
      return; /* no two cut points: the parents as they are */
    int p1 = start + (int)heron_rng_below(rng, (uint64_t)(end - start));
    int p2 = start + (int)heron_rng_below(rng, (uint64_t)(end - start - 1));
    if (p2 >= p1)
      p2++;
    if (p2 < p1) {
      int t = p1;
      p1 = p2;
      p2 = t;
    }
    for (int k = p1; k < p2; k++)
      c1[k] = b[k], c2[k] = a[k];
  } else if (g->method == GA_UNIFORM) {
    for (int k = 0; k < n; k++)
      if (!(heron_rng_uniform(rng) > 0.5))
        c1[k] = b[k], c2[k] = a[k];
  } else {
    int diff = 0, swaps = 0;
    for (int k = 0; k < n; k++)
      diff += a[k] != b[k];
    while (swaps < (diff + 1) / 2)
      for (int k = 0; k < n; k++)
        if (a[k] != b[k] && c1[k] != b[k] && heron_rng_uniform(rng) < 0.5 &&
            swaps < (diff + 1) / 2) {
          c1[k] = b[k];
          c2[k] = a[k];
          swaps++;
        }
  }
}

/* Child c as a valid config, mutated with chance 1 / mutation_chance, into
 * g->cfg. */
static int ga_child(ga *g, int c, heron_error *err) {
  int rc = pop_coords_config(&g->pc, g->env->rng, g->child[c], g->cfg, err);
  if (rc != HERON_OK)
    return rc;
  if ((int64_t)(heron_rng_uniform(g->env->rng) * (double)g->mutation_chance) ==
      0) {
    heron_error e;
    heron_error_clear(&e);
    rc = heron_space_mutate(g->env->space, g->env->rng, g->cfg, NULL, 0, g->mut,
                            &e);
    if (rc == HERON_OK)
      memcpy(g->cfg, g->mut, (size_t)g->nv * sizeof *g->cfg);
    else if (rc != HERON_EUNSAT) /* EUNSAT: no neighbour, keep the child */
      return heron_error_set(err, rc, "genetic_algorithm: %s", e.text);
  }
  return HERON_OK;
}

/* Sorts the finished generation by cost (stable) into dna / cost. */
static void ga_sort(ga *g) {
  const pop_gen *gen = &g->run.gen;
  g->np = gen->n;
  for (int i = 0; i < g->np; i++)
    g->order[i] = i;
  for (int i = 1; i < g->np; i++)
    for (int j = i;
         j > 0 && gen->cost[g->order[j]] < gen->cost[g->order[j - 1]]; j--) {
      int t = g->order[j];
      g->order[j] = g->order[j - 1];
      g->order[j - 1] = t;
    }
  for (int i = 0; i < g->np; i++) {
    int s = g->order[i];
    pop_coords_of(&g->pc, gen->cfg + (size_t)s * (size_t)(g->nv + 1),
                  g->dna + (size_t)i * g->nk);
    g->cost[i] = gen->cost[s];
  }
}

static int ga_step(void *self, int restart, heron_error *err) {
  ga *g = self;
  if (restart)
    return ga_start(g, err);
  g->evaluated += g->run.gen.n;
  ga_sort(g);
  if (++g->generation >= g->maxiter || g->np == 0) {
    g->env->log(g->env, HERON_LOG_DEBUG,
                "%d generations done: a fresh population", g->generation);
    return ga_start(g, err);
  }
  pop_gen_clear(&g->run.gen);
  long tries = 0;
  while (g->run.gen.n < g->popsize && g->size > g->evaluated + g->run.gen.n) {
    if (tries++ >= 100L * g->popsize)
      return ga_fill_random(g, g->popsize, err);
    int a = ga_parent(g), b = ga_parent(g);
    while (g->np > 1 && b == a)
      b = ga_parent(g);
    ga_crossover(g, g->dna + (size_t)a * g->nk, g->dna + (size_t)b * g->nk);
    for (int c = 0; c < 2 && g->run.gen.n < g->popsize; c++) {
      int rc = ga_child(g, c, err);
      if (rc != HERON_OK)
        return rc;
      if (!ga_in_gen(g, g->cfg) && pop_add(&g->run, g->cfg) < 0)
        return ga_oom(err);
    }
  }
  if (g->run.gen.n == 0) /* the space is (nearly) measured through */
    return ga_start(g, err);
  return HERON_OK;
}

static int ga_create(const heron_strategy_env *env, const heron_param *params,
                     int nparams, void **self, heron_error *err) {
  if (!env || !env->space || !env->rng || !env->log || !self)
    return heron_error_set(err, HERON_EINVAL,
                           "genetic_algorithm: env without a space, an rng or "
                           "a logger");
  ga *g = calloc(1, sizeof *g);
  if (!g)
    return ga_oom(err);
  g->env = env;
  g->nv = heron_space_nvars(env->space);
  g->popsize = (int)heron_param_int_value(params, nparams, "popsize", 26);
  g->maxiter = (int)heron_param_int_value(params, nparams, "maxiter", 90);
  g->mutation_chance =
      heron_param_int_value(params, nparams, "mutation_chance", 55);
  const char *m = heron_param_get(params, nparams, "method", "single_point");
  g->method = !strcmp(m, "two_point")            ? GA_TWO
              : !strcmp(m, "uniform")            ? GA_UNIFORM
              : !strcmp(m, "disruptive_uniform") ? GA_DISRUPTIVE
                                                 : GA_SINGLE;
  /* Kernel Tuner: if pop_size < 2 or pop_size > floor(size / 2):
   * pop_size = min(max(round(size / maxiter * 3), 2), pop_size). */
  g->size = pop_space_size(env);
  if (g->popsize < 2 || g->popsize > floor(g->size / 2)) {
    double p = fmax(nearbyint(g->size / g->maxiter * 3), 2);
    g->popsize = p < g->popsize ? (int)p : g->popsize;
  }
  int rc = pop_run_init(&g->run, env, "genetic_algorithm");
  if (rc == HERON_OK)
    rc = pop_coords_init(&g->pc, env->space);
  g->nk = g->pc.nknobs;
  size_t np = (size_t)g->popsize + 1, nk = (size_t)g->nk + 1;
  g->dna = malloc(np * nk * sizeof *g->dna);
  g->cost = malloc(np * sizeof *g->cost);
  g->order = malloc(np * sizeof *g->order);
  g->child[0] = malloc(nk * sizeof *g->child[0]);
  g->child[1] = malloc(nk * sizeof *g->child[1]);
  g->cfg = malloc(((size_t)g->nv + 1) * sizeof *g->cfg);
  g->mut = malloc(((size_t)g->nv + 1) * sizeof *g->mut);
  if (rc != HERON_OK || !g->dna || !g->cost || !g->order || !g->child[0] ||
      !g->child[1] || !g->cfg || !g->mut) {
    ga_destroy(g);
    return ga_oom(err);
  }
  env->log(env, HERON_LOG_DEBUG,
           "popsize=%d maxiter=%d method=%s mutation_chance=%lld, %d knobs",
           g->popsize, g->maxiter, m, (long long)g->mutation_chance, g->nk);
  *self = g;
  return HERON_OK;
}

static int ga_propose(void *self, int want, int64_t *out, int *got,
                      heron_error *err) {
  ga *g = self;
  return pop_run_propose(&g->run, want, out, got, ga_step, g, err);
}

static int ga_observe(void *self, const heron_measurement *results, int n,
                      heron_error *err) {
  ga *g = self;
  return pop_run_observe(&g->run, results, n, err);
}

static const heron_strategy_plugin ga_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "genetic_algorithm",
    .summary = "Kernel Tuner's genetic algorithm over knob indices, repaired "
               "to valid configs",
    HERON_PARAM_SPECS(ga_params),
    .create = ga_create,
    .propose = ga_propose,
    .observe = ga_observe,
    .destroy = ga_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &ga_plugin;
}
