/* plugins/common/popsearch.h - what the population strategies after Kernel
 * Tuner's (pso, firefly_algorithm, diff_evo, genetic_algorithm) share:
 *
 *   - coordinates: a knob's coordinate is the index of its value in the
 *     knob's domain (Kernel Tuner works on the index of each parameter's
 *     value); a vector of (real) indices maps back to a valid config by
 *     rounding, clipping and heron_space_repair (the nearest valid config);
 *   - a cache of measured costs by config key: Kernel Tuner's runner
 *     answers a config it measured before from its cache without measuring
 *     it again, and so do these strategies, with what observe() saw;
 *   - a generation (the configs one step of the algorithm evaluates)
 *     handed to the engine as one or more rounds of at most `want` configs,
 *     the cached ones answered at once, and the driver that asks the
 *     strategy for its next generation once every cost of this one is known.
 *
 * The coordinates and the cache serve the local searches after Kernel
 * Tuner's too (local_search.h).
 *
 * The cost of a measurement is its time in seconds, as Kernel Tuner
 * minimises time; a failed trial costs DBL_MAX (Kernel Tuner's invalid
 * value, sys.float_info.max).  Nothing here writes to stdout.
 */
#ifndef HERON_PLUGIN_COMMON_POPSEARCH_H
#define HERON_PLUGIN_COMMON_POPSEARCH_H

#include <stdint.h>

#include "heron/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Coordinates --------------------------------------------------------- */
typedef struct pop_coords {
  const heron_space *sp;
  int nvars, nknobs;
  int *knob;            /* variable index of the k-th knob */
  int64_t *len;         /* number of values of knob k (>= 1) */
  int64_t *lo;          /* lowest value of knob k */
  const int64_t **vals; /* knob k's sorted values, or NULL: lo + index */
  int64_t *tmp;         /* nvars scratch values */
} pop_coords;

int pop_coords_init(pop_coords *pc, const heron_space *sp);
void pop_coords_free(pop_coords *pc);

/* The index vector of a config: idx[k] is the index of knob k's value (the
 * nearest value's index for one outside the domain). */
void pop_coords_of(const pop_coords *pc, const int64_t *cfg, double *idx);

/* The valid config nearest to the index vector idx[nknobs]: each index is
 * rounded (half to even, as numpy's round) and clipped into its knob's
 * range, the knobs take those values, the auxiliary variables are left
 * free, and heron_space_repair moves the result to the nearest valid
 * config (a no-op for one that is valid).  HERON_EUNSAT when the space is
 * empty. */
int pop_coords_config(const pop_coords *pc, heron_rng *rng, const double *idx,
                      int64_t *cfg, heron_error *err);

/* Kernel Tuner's scaled coordinates (pso, firefly_algorithm): knob k's
 * index i sits at eps * (i + 0.5) in [0, eps * len[k]], with eps = the
 * smallest 1 / len[k], so one index step is eps long on every knob. */
double pop_coords_eps(const pop_coords *pc);
void pop_coords_scale(const pop_coords *pc, const int64_t *cfg, double eps,
                      double *x);
/* The valid config nearest to scaled position x (snap to the nearest
 * index, then pop_coords_config); idx is nknobs scratch. */
int pop_coords_scaled_config(const pop_coords *pc, heron_rng *rng,
                             const double *x, double eps, double *idx,
                             int64_t *cfg, heron_error *err);

/* ---- Costs and their cache ----------------------------------------------- */
double pop_cost(const heron_measurement *m);

typedef struct pop_cache {
  uint64_t *key;
  double *cost;
  unsigned char *used;
  size_t mask, n;
} pop_cache;

/* 1 with *cost set when `key` was measured, else 0. */
int pop_cache_get(const pop_cache *c, uint64_t key, double *cost);
/* Records the first cost seen for `key` (a config is measured once); an
 * empty (zeroed) cache grows on the first call.  HERON_OK or
 * HERON_ENOMEM. */
int pop_cache_put(pop_cache *c, uint64_t key, double cost);
void pop_cache_free(pop_cache *c);

/* ---- A generation and the driver ----------------------------------------- */
enum pop_state {
  POP_KNOWN = 0, /* cost known (cached, measured, or dropped: DBL_MAX) */
  POP_TODO,      /* to be measured */
  POP_OUT,       /* handed to the engine, result not seen yet */
  POP_SAME       /* an earlier entry of the generation has the same config */
};

typedef struct pop_gen {
  int n, cap, nvars;
  int fresh; /* entries that needed measuring when added */
  int64_t *cfg;
  uint64_t *key;
  double *cost;
  unsigned char *state;
} pop_gen;

/* A strategy's step: with restart = 1, start the algorithm afresh (the
 * first call, after maxiter generations, or when generations in a row
 * found nothing to measure); otherwise read the costs of the finished
 * generation run->gen.cost[0..n) (in the order the entries were added) and
 * build the next.  Either way it empties run->gen (pop_gen_clear) and adds
 * the configs to evaluate with pop_add. */
typedef int (*pop_step_fn)(void *self, int restart, heron_error *err);

typedef struct pop_run {
  const heron_strategy_env *env;
  const char *who; /* the plugin's name, for messages */
  pop_cache cache;
  pop_gen gen;
  int started;
  int stalls; /* finished generations in a row with nothing to measure */
  long generations, restarts;
} pop_run;

/* Generations in a row with nothing new to measure before the population
 * is re-seeded with fresh samples. */
#define POP_STALL_RESTART 10

int pop_run_init(pop_run *r, const heron_strategy_env *env, const char *who);
void pop_run_free(pop_run *r);

void pop_gen_clear(pop_gen *g);
/* Adds cfg (valid) to the generation; returns its index or -1 without
 * memory. */
int pop_add(pop_run *r, const int64_t *cfg);

/* propose / observe of a population strategy: hands out the generation's
 * configs still to measure, at most `want`, asking `step` for generations
 * until one has some (restarting the algorithm after POP_STALL_RESTART
 * generations with none); proposes nothing only when fresh populations
 * keep finding nothing new (a space measured through). */
int pop_run_propose(pop_run *r, int want, int64_t *out, int *got,
                    pop_step_fn step, void *self, heron_error *err);
/* Caches the cost of every result (a resumed history included). */
int pop_run_observe(pop_run *r, const heron_measurement *results, int n,
                    heron_error *err);

/* ---- Helpers ------------------------------------------------------------- */
/* A random valid config (heron_space_sample, retried on EUNSAT). */
int pop_sample(const heron_strategy_env *env, int64_t *cfg, heron_error *err);

/* The number of valid configs (exact up to 1e6, else the estimate). */
double pop_space_size(const heron_strategy_env *env);

/* A uniform double in [lo, hi). */
double pop_uniform(heron_rng *rng, double lo, double hi);

#ifdef __cplusplus
}
#endif

#endif /* HERON_PLUGIN_COMMON_POPSEARCH_H */
