/* plugins/strategies/firefly_algorithm/firefly_algorithm.c - the firefly
 * algorithm, after Kernel Tuner's `firefly_algorithm` strategy
 * (kernel_tuner/strategies/firefly_algorithm.py).
 *
 * Fireflies sit at positions in Kernel Tuner's scaled coordinates
 * (popsearch.h); a firefly's intensity is minus its cost.  The swarm starts
 * at random valid configs, all evaluated.  In an iteration every firefly i
 * moves toward every brighter firefly j, in swarm order:
 *
 *     x_i += B0 exp(-gamma |x_i - x_j|^2) (x_j - x_i) + alpha (u - 0.5)
 *
 * (u uniform in [0, 1) per knob), clipped into the bounds, and every
 * position it moves to is evaluated (the nearest valid config of it); its
 * new intensity is that of its last position.  Then the swarm is sorted by
 * cost.  Departure (the batch): Kernel Tuner evaluates each move before the
 * next comparison, so a firefly's intensity and the positions of fireflies
 * moved earlier in the iteration change as it goes; here the comparisons
 * and the targets x_j are those of the iteration's start, so that one
 * iteration's moves are one generation, proposed as rounds of the
 * engine's batch.  Configs measured before are answered from the cache.
 * After `maxiter` iterations (where Kernel Tuner stops), or
 * POP_STALL_RESTART iterations that found nothing new to measure, the
 * swarm starts afresh.  See README.md.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "popsearch.h"

static const heron_param_spec firefly_params[] = {
    {.key = "popsize",
     .kind = HERON_PARAM_INT,
     .default_value = "20",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 10000,
     .help = "fireflies in the swarm"},
    {.key = "maxiter",
     .kind = HERON_PARAM_INT,
     .default_value = "100",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1e9,
     .help = "iterations before the swarm starts afresh"},
    {.key = "B0",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "1.0",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 100,
     .help = "maximum attractiveness"},
    {.key = "gamma",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "1.0",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1e6,
     .help = "light absorption coefficient"},
    {.key = "alpha",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.2",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 100,
     .help = "randomization parameter (size of the random step)"},
    {.key = NULL},
};

typedef struct firefly {
  const heron_strategy_env *env;
  pop_run run;
  pop_coords pc;
  int nk, np, maxiter, iter;
  int moved; /* the generation is an iteration's moves, not a new swarm */
  double b0, gamma, alpha, eps;
  double *pos, *start, *score, *tmp; /* np x nk (pos, start); np; nk */
  int *last;  /* generation entry of firefly i's last move, -1: none */
  int *order; /* np, for sorting */
  double *idx;
  int64_t *cfg;
} firefly;

static void firefly_destroy(void *self) {
  firefly *f = self;
  if (!f)
    return;
  f->env->log(f->env, HERON_LOG_DEBUG,
              "%ld iterations, %ld restarts, %zu configs measured",
              f->run.generations, f->run.restarts, f->run.cache.n);
  pop_run_free(&f->run);
  pop_coords_free(&f->pc);
  free(f->pos);
  free(f->start);
  free(f->score);
  free(f->tmp);
  free(f->last);
  free(f->order);
  free(f->idx);
  free(f->cfg);
  free(f);
}

/* Adds firefly i's position (as the nearest valid config) to the
 * generation and remembers the entry. */
static int firefly_add(firefly *f, int i, heron_error *err) {
  int rc =
      pop_coords_scaled_config(&f->pc, f->env->rng, f->pos + (size_t)i * f->nk,
                               f->eps, f->idx, f->cfg, err);
  if (rc != HERON_OK)
    return rc;
  f->last[i] = pop_add(&f->run, f->cfg);
  if (f->last[i] < 0)
    return heron_error_set(err, HERON_ENOMEM,
                           "firefly_algorithm: out of "
                           "memory");
  return HERON_OK;
}

/* A fresh swarm at random valid configs, all to be evaluated. */
static int firefly_start(firefly *f, heron_error *err) {
  f->iter = 0;
  f->moved = 0;
  pop_gen_clear(&f->run.gen);
  for (int i = 0; i < f->np; i++) {
    int rc = pop_sample(f->env, f->cfg, err);
    if (rc != HERON_OK)
      return rc;
    pop_coords_scale(&f->pc, f->cfg, f->eps, f->pos + (size_t)i * f->nk);
    f->score[i] = DBL_MAX;
    if ((rc = firefly_add(f, i, err)) != HERON_OK)
      return rc;
  }
  return HERON_OK;
}

/* Sorts the swarm by cost, ascending, keeping the order of equal costs (as
 * Python's sort does). */
static void firefly_sort(firefly *f) {
  for (int i = 0; i < f->np; i++)
    f->order[i] = i;
  for (int i = 1; i < f->np; i++)
    for (int j = i; j > 0 && f->score[f->order[j]] < f->score[f->order[j - 1]];
         j--) {
      int t = f->order[j];
      f->order[j] = f->order[j - 1];
      f->order[j - 1] = t;
    }
  size_t row = (size_t)f->nk * sizeof *f->pos;
  for (int i = 0; i < f->np; i++) {
    memcpy(f->start + (size_t)i * f->nk, f->pos + (size_t)f->order[i] * f->nk,
           row);
    f->tmp[i] = f->score[f->order[i]];
  }
  memcpy(f->pos, f->start, (size_t)f->np * row);
  memcpy(f->score, f->tmp, (size_t)f->np * sizeof *f->score);
}

static int firefly_step(void *self, int restart, heron_error *err) {
  firefly *f = self;
  if (restart)
    return firefly_start(f, err);
  const pop_gen *g = &f->run.gen;
  for (int i = 0; i < f->np; i++)
    if (f->last[i] >= 0)
      f->score[i] = g->cost[f->last[i]];
  if (f->moved) {
    firefly_sort(f);
    if (++f->iter >= f->maxiter) {
      f->env->log(f->env, HERON_LOG_DEBUG, "%d iterations done: a fresh swarm",
                  f->iter);
      return firefly_start(f, err);
    }
  }
  f->moved = 1;
  /* The next iteration's moves, against the swarm as it is now. */
  size_t row = (size_t)f->nk * sizeof *f->pos;
  memcpy(f->start, f->pos, (size_t)f->np * row);
  pop_gen_clear(&f->run.gen);
  for (int i = 0; i < f->np; i++) {
    double *x = f->pos + (size_t)i * f->nk;
    f->last[i] = -1;
    for (int j = 0; j < f->np; j++) {
      if (!(f->score[i] > f->score[j])) /* j is not brighter than i */
        continue;
      const double *y = f->start + (size_t)j * f->nk;
      double d2 = 0;
      for (int k = 0; k < f->nk; k++)
        d2 += (x[k] - y[k]) * (x[k] - y[k]);
      double beta = f->b0 * exp(-f->gamma * d2);
      for (int k = 0; k < f->nk; k++)
        x[k] += beta * (y[k] - x[k]);
      for (int k = 0; k < f->nk; k++) {
        x[k] += f->alpha * pop_uniform(f->env->rng, -0.5, 0.5);
        double hi = f->eps * (double)f->pc.len[k];
        x[k] = fmax(0.0, fmin(x[k], hi));
      }
      int rc = firefly_add(f, i, err);
      if (rc != HERON_OK)
        return rc;
    }
  }
  return HERON_OK;
}

static int firefly_create(const heron_strategy_env *env,
                          const heron_param *params, int nparams, void **self,
                          heron_error *err) {
  if (!env || !env->space || !env->rng || !env->log || !self)
    return heron_error_set(err, HERON_EINVAL,
                           "firefly_algorithm: env without a space, an rng or "
                           "a logger");
  firefly *f = calloc(1, sizeof *f);
  if (!f)
    return heron_error_set(err, HERON_ENOMEM,
                           "firefly_algorithm: out of "
                           "memory");
  f->env = env;
  f->np = (int)heron_param_int_value(params, nparams, "popsize", 20);
  f->maxiter = (int)heron_param_int_value(params, nparams, "maxiter", 100);
  f->b0 = heron_param_double_value(params, nparams, "B0", 1.0);
  f->gamma = heron_param_double_value(params, nparams, "gamma", 1.0);
  f->alpha = heron_param_double_value(params, nparams, "alpha", 0.2);
  int rc = pop_run_init(&f->run, env, "firefly_algorithm");
  if (rc == HERON_OK)
    rc = pop_coords_init(&f->pc, env->space);
  f->nk = f->pc.nknobs;
  size_t cells = (size_t)f->np * (size_t)f->nk + 1, np = (size_t)f->np + 1;
  f->pos = malloc(cells * sizeof *f->pos);
  f->start = malloc(cells * sizeof *f->start);
  f->score = malloc(np * sizeof *f->score);
  f->tmp = malloc(np * sizeof *f->tmp);
  f->last = malloc(np * sizeof *f->last);
  f->order = malloc(np * sizeof *f->order);
  f->idx = malloc(((size_t)f->nk + 1) * sizeof *f->idx);
  f->cfg = malloc(((size_t)heron_space_nvars(env->space) + 1) * sizeof *f->cfg);
  if (rc != HERON_OK || !f->pos || !f->start || !f->score || !f->tmp ||
      !f->last || !f->order || !f->idx || !f->cfg) {
    firefly_destroy(f);
    return heron_error_set(err, HERON_ENOMEM,
                           "firefly_algorithm: out of "
                           "memory");
  }
  f->eps = pop_coords_eps(&f->pc);
  env->log(env, HERON_LOG_DEBUG,
           "popsize=%d maxiter=%d B0=%g gamma=%g alpha=%g, %d knobs", f->np,
           f->maxiter, f->b0, f->gamma, f->alpha, f->nk);
  *self = f;
  return HERON_OK;
}

static int firefly_propose(void *self, int want, int64_t *out, int *got,
                           heron_error *err) {
  firefly *f = self;
  return pop_run_propose(&f->run, want, out, got, firefly_step, f, err);
}

static int firefly_observe(void *self, const heron_measurement *results, int n,
                           heron_error *err) {
  firefly *f = self;
  return pop_run_observe(&f->run, results, n, err);
}

static const heron_strategy_plugin firefly_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "firefly_algorithm",
    .summary = "Kernel Tuner's firefly algorithm over knob indices, repaired "
               "to valid configs",
    HERON_PARAM_SPECS(firefly_params),
    .create = firefly_create,
    .propose = firefly_propose,
    .observe = firefly_observe,
    .destroy = firefly_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &firefly_plugin;
}
