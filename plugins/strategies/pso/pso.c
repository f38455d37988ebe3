/* plugins/strategies/pso/pso.c - particle swarm optimisation, after Kernel
 * Tuner's `pso` strategy (kernel_tuner/strategies/pso.py).
 *
 * Each particle has a position and a velocity in Kernel Tuner's scaled
 * coordinates (popsearch.h: knob k's value index i at eps * (i + 0.5)).
 * The swarm starts at random valid configs with velocities uniform in
 * [-1, 1].  An iteration evaluates every position (the nearest valid
 * config of it: snap to the nearest index, then heron_space_repair), keeps
 * each particle's best position and the swarm's, then
 *
 *     v = w v + c1 r1 (best_p - x) + c2 r2 (best_g - x),  x = clip(x + v)
 *
 * with r1, r2 uniform in [0, 1) per particle.  One iteration's positions
 * are one generation, proposed as rounds of the engine's batch; configs
 * measured before are answered from the cache, as Kernel Tuner's runner
 * does.  After `maxiter` iterations (where Kernel Tuner stops) the swarm
 * starts afresh, as it does after POP_STALL_RESTART iterations that found
 * nothing new to measure, so the budget is spent.  See README.md.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "popsearch.h"

static const heron_param_spec pso_params[] = {
    {.key = "popsize",
     .kind = HERON_PARAM_INT,
     .default_value = "50",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 100000,
     .help = "particles in the swarm (at most half the space)"},
    {.key = "maxiter",
     .kind = HERON_PARAM_INT,
     .default_value = "190",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 1e9,
     .help = "iterations before the swarm starts afresh"},
    {.key = "w",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.5",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 100,
     .help = "inertia weight constant"},
    {.key = "c1",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "3.5",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 100,
     .help = "cognitive constant (pull toward the particle's best)"},
    {.key = "c2",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "1.0",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 100,
     .help = "social constant (pull toward the swarm's best)"},
    {.key = NULL},
};

typedef struct pso {
  const heron_strategy_env *env;
  pop_run run;
  pop_coords pc;
  int nk, np, maxiter, iter;
  double w, c1, c2, eps;
  double *pos, *vel, *pbest, *pscore; /* np x nk, pscore np */
  double *gbest, gscore;
  double *idx;
  int64_t *cfg;
} pso;

static void pso_destroy(void *self) {
  pso *p = self;
  if (!p)
    return;
  p->env->log(p->env, HERON_LOG_DEBUG,
              "%ld iterations, %ld restarts, %zu configs measured",
              p->run.generations, p->run.restarts, p->run.cache.n);
  pop_run_free(&p->run);
  pop_coords_free(&p->pc);
  free(p->pos);
  free(p->vel);
  free(p->pbest);
  free(p->pscore);
  free(p->gbest);
  free(p->idx);
  free(p->cfg);
  free(p);
}

/* Adds particle i's position (as the nearest valid config) to the
 * generation. */
static int pso_add(pso *p, int i, heron_error *err) {
  int rc =
      pop_coords_scaled_config(&p->pc, p->env->rng, p->pos + (size_t)i * p->nk,
                               p->eps, p->idx, p->cfg, err);
  if (rc == HERON_OK && pop_add(&p->run, p->cfg) < 0)
    rc = heron_error_set(err, HERON_ENOMEM, "pso: out of memory");
  return rc;
}

/* A fresh swarm: random valid configs, velocities uniform in [-1, 1]. */
static int pso_start(pso *p, heron_error *err) {
  p->iter = 0;
  p->gscore = DBL_MAX;
  pop_gen_clear(&p->run.gen);
  for (int i = 0; i < p->np; i++) {
    double *x = p->pos + (size_t)i * p->nk, *v = p->vel + (size_t)i * p->nk;
    for (int k = 0; k < p->nk; k++)
      v[k] = pop_uniform(p->env->rng, -1, 1);
    int rc = pop_sample(p->env, p->cfg, err);
    if (rc != HERON_OK)
      return rc;
    pop_coords_scale(&p->pc, p->cfg, p->eps, x);
    memcpy(p->pbest + (size_t)i * p->nk, x, (size_t)p->nk * sizeof *x);
    p->pscore[i] = DBL_MAX;
    if ((rc = pso_add(p, i, err)) != HERON_OK)
      return rc;
  }
  return HERON_OK;
}

static int pso_step(void *self, int restart, heron_error *err) {
  pso *p = self;
  if (restart)
    return pso_start(p, err);
  const pop_gen *g = &p->run.gen;
  size_t row = (size_t)p->nk * sizeof *p->pos;
  for (int i = 0; i < p->np; i++) {
    double score = g->cost[i];
    double *x = p->pos + (size_t)i * p->nk;
    if (score < p->pscore[i]) {
      p->pscore[i] = score;
      memcpy(p->pbest + (size_t)i * p->nk, x, row);
    }
    if (score <= p->gscore) {
      p->gscore = score;
      memcpy(p->gbest, x, row);
    }
  }
  if (++p->iter >= p->maxiter) {
    p->env->log(p->env, HERON_LOG_DEBUG, "%d iterations done: a fresh swarm",
                p->iter);
    return pso_start(p, err);
  }
  pop_gen_clear(&p->run.gen);
  for (int i = 0; i < p->np; i++) {
    double *x = p->pos + (size_t)i * p->nk, *v = p->vel + (size_t)i * p->nk;
    const double *b = p->pbest + (size_t)i * p->nk;
    double r1 = heron_rng_uniform(p->env->rng);
    double r2 = heron_rng_uniform(p->env->rng);
    for (int k = 0; k < p->nk; k++) {
      v[k] = p->w * v[k] + p->c1 * r1 * (b[k] - x[k]) +
             p->c2 * r2 * (p->gbest[k] - x[k]);
      double hi = p->eps * (double)p->pc.len[k];
      x[k] = fmax(0.0, fmin(x[k] + v[k], hi));
    }
    int rc = pso_add(p, i, err);
    if (rc != HERON_OK)
      return rc;
  }
  return HERON_OK;
}

static int pso_create(const heron_strategy_env *env, const heron_param *params,
                      int nparams, void **self, heron_error *err) {
  if (!env || !env->space || !env->rng || !env->log || !self)
    return heron_error_set(err, HERON_EINVAL,
                           "pso: env without a space, an rng or a logger");
  pso *p = calloc(1, sizeof *p);
  if (!p)
    return heron_error_set(err, HERON_ENOMEM, "pso: out of memory");
  p->env = env;
  int popsize = (int)heron_param_int_value(params, nparams, "popsize", 50);
  p->maxiter = (int)heron_param_int_value(params, nparams, "maxiter", 190);
  p->w = heron_param_double_value(params, nparams, "w", 0.5);
  p->c1 = heron_param_double_value(params, nparams, "c1", 3.5);
  p->c2 = heron_param_double_value(params, nparams, "c2", 1.0);
  /* Kernel Tuner: num_particles = min(round(size / 2), popsize). */
  double half = nearbyint(pop_space_size(env) / 2);
  p->np = half < popsize ? (int)half : popsize;
  if (p->np < 1)
    p->np = 1;
  int rc = pop_run_init(&p->run, env, "pso");
  if (rc == HERON_OK)
    rc = pop_coords_init(&p->pc, env->space);
  p->nk = p->pc.nknobs;
  size_t cells = (size_t)p->np * (size_t)p->nk + 1;
  p->pos = malloc(cells * sizeof *p->pos);
  p->vel = malloc(cells * sizeof *p->vel);
  p->pbest = malloc(cells * sizeof *p->pbest);
  p->pscore = malloc(((size_t)p->np + 1) * sizeof *p->pscore);
  p->gbest = calloc((size_t)p->nk + 1, sizeof *p->gbest);
  p->idx = malloc(((size_t)p->nk + 1) * sizeof *p->idx);
  p->cfg = malloc(((size_t)heron_space_nvars(env->space) + 1) * sizeof *p->cfg);
  if (rc != HERON_OK || !p->pos || !p->vel || !p->pbest || !p->pscore ||
      !p->gbest || !p->idx || !p->cfg) {
    pso_destroy(p);
    return heron_error_set(err, HERON_ENOMEM, "pso: out of memory");
  }
  p->eps = pop_coords_eps(&p->pc);
  env->log(env, HERON_LOG_DEBUG,
           "popsize=%d (%d particles) maxiter=%d w=%g c1=%g c2=%g, %d knobs",
           popsize, p->np, p->maxiter, p->w, p->c1, p->c2, p->nk);
  *self = p;
  return HERON_OK;
}

static int pso_propose(void *self, int want, int64_t *out, int *got,
                       heron_error *err) {
  pso *p = self;
  return pop_run_propose(&p->run, want, out, got, pso_step, p, err);
}

static int pso_observe(void *self, const heron_measurement *results, int n,
                       heron_error *err) {
  pso *p = self;
  return pop_run_observe(&p->run, results, n, err);
}

static const heron_strategy_plugin pso_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "pso",
    .summary = "Kernel Tuner's particle swarm optimisation over knob indices, "
               "repaired to valid configs",
    HERON_PARAM_SPECS(pso_params),
    .create = pso_create,
    .propose = pso_propose,
    .observe = pso_observe,
    .destroy = pso_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &pso_plugin;
}
