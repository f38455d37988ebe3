/* plugins/strategies/genetic/genetic.h - what the genetic strategy's files
 * share: its pools of configs and sets of keys (pool.c), its state, and the
 * two kinds of round (round.c) that genetic.c's propose runs.
 */
#ifndef HERON_GENETIC_GENETIC_H
#define HERON_GENETIC_GENETIC_H

#include <stddef.h>
#include <stdint.h>

#include "heron/strategy.h"

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

int genetic_pool_init(genetic_pool *p, int cap, int nv);
void genetic_pool_free(genetic_pool *p);

static inline int64_t *genetic_pool_cfg(const genetic_pool *p, int i) {
  return p->cfg + (size_t)i * (size_t)p->nv;
}

/* Appends a copy of cfg (no-op when the pool is full). */
void genetic_pool_push(genetic_pool *p, const int64_t *cfg, uint64_t key,
                       double score);

/* ---- A set of config keys -----------------------------------------------
 *
 * Open addressing over the 64-bit keys of heron_space_key; slot value 0
 * means empty, so the key 0 itself is tracked by a flag. */
typedef struct genetic_set {
  uint64_t *slot;
  size_t mask;
  int has_zero;
} genetic_set;

/* A set sized for max_items keys between clears; HERON_OK or HERON_ENOMEM. */
int genetic_set_init(genetic_set *s, int max_items);
void genetic_set_clear(genetic_set *s);
int genetic_set_has(const genetic_set *s, uint64_t key);
/* Adds key; returns 1 when it was new, 0 when already there. */
int genetic_set_add(genetic_set *s, uint64_t key);

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

/* 1 when the config of that key was measured (the history holds it). */
int genetic_measured(const genetic *g, uint64_t key);

/* ---- round.c ------------------------------------------------------------- */

/* One round with a trained model: seed the population, breed iter_walks
 * generations on predictions, pick the batch (epsilon-greedy, roulette),
 * fill it with random configs.  Appends to out[*n * nvars...] up to want. */
int genetic_round_model(genetic *g, int want, int64_t *out, int *n,
                        heron_error *err);

/* One round without a model: children of the best measured configs, with
 * measured GFLOP/s as fitness; random configs fill the rest. */
int genetic_round_measured(genetic *g, int want, int64_t *out, int *n,
                           heron_error *err);

#endif /* HERON_GENETIC_GENETIC_H */
