/* plugins/common/popsearch.c - coordinates, cost cache and generation
 * driver of the population strategies (popsearch.h). */
#include "popsearch.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_util.h"

/* ---- Coordinates --------------------------------------------------------- */
int pop_coords_init(pop_coords *pc, const heron_space *sp) {
  memset(pc, 0, sizeof *pc);
  pc->sp = sp;
  pc->nvars = heron_space_nvars(sp);
  pc->nknobs = heron_space_nknobs(sp);
  size_t nk = (size_t)pc->nknobs + 1;
  pc->knob = malloc(nk * sizeof *pc->knob);
  pc->len = malloc(nk * sizeof *pc->len);
  pc->lo = malloc(nk * sizeof *pc->lo);
  pc->vals = malloc(nk * sizeof *pc->vals);
  pc->tmp = malloc(((size_t)pc->nvars + 1) * sizeof *pc->tmp);
  if (!pc->knob || !pc->len || !pc->lo || !pc->vals || !pc->tmp)
    return HERON_ENOMEM;
  for (int k = 0; k < pc->nknobs; k++) {
    int v = heron_space_knob(sp, k), nvals = 0;
    int64_t lo = 0, hi = 0;
    const int64_t *vals = NULL;
    heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals);
    pc->knob[k] = v;
    pc->lo[k] = lo;
    pc->vals[k] = nvals > 0 ? vals : NULL;
    pc->len[k] = nvals > 0 ? nvals : (hi >= lo ? hi - lo + 1 : 1);
  }
  return HERON_OK;
}

void pop_coords_free(pop_coords *pc) {
  free(pc->knob);
  free(pc->len);
  free(pc->lo);
  free(pc->vals);
  free(pc->tmp);
  memset(pc, 0, sizeof *pc);
}

/* The index of value x in knob k's domain: the nearest value's. */
static double pop_index(const pop_coords *pc, int k, int64_t x) {
  const int64_t *vals = pc->vals[k];
  int64_t n = pc->len[k];
  if (!vals) {
    int64_t i = x - pc->lo[k];
    return (double)(i < 0 ? 0 : i >= n ? n - 1 : i);
  }
  int64_t a = 0, b = n - 1;
  while (a < b) { /* first value >= x */
    int64_t m = a + (b - a) / 2;
    if (vals[m] < x)
      a = m + 1;
    else
      b = m;
  }
  if (a > 0 && (vals[a] < x || x - vals[a - 1] < vals[a] - x))
    a--;
  return (double)a;
}

void pop_coords_of(const pop_coords *pc, const int64_t *cfg, double *idx) {
  for (int k = 0; k < pc->nknobs; k++)
    idx[k] = pop_index(pc, k, cfg[pc->knob[k]]);
}

int pop_coords_config(const pop_coords *pc, heron_rng *rng, const double *idx,
                      int64_t *cfg, heron_error *err) {
  for (int v = 0; v < pc->nvars; v++)
    pc->tmp[v] = HERON_UNSET;
  for (int k = 0; k < pc->nknobs; k++) {
    double r = nearbyint(idx[k]); /* half to even, as numpy's round */
    int64_t i = r < 0                          ? 0
                : r > (double)(pc->len[k] - 1) ? pc->len[k] - 1
                                               : (int64_t)r;
    pc->tmp[pc->knob[k]] = pc->vals[k] ? pc->vals[k][i] : pc->lo[k] + i;
  }
  return heron_space_repair(pc->sp, rng, pc->tmp, cfg, err);
}

double pop_coords_eps(const pop_coords *pc) {
  double eps = 1.0;
  for (int k = 0; k < pc->nknobs; k++)
    if (1.0 / (double)pc->len[k] < eps)
      eps = 1.0 / (double)pc->len[k];
  return eps;
}

void pop_coords_scale(const pop_coords *pc, const int64_t *cfg, double eps,
                      double *x) {
  pop_coords_of(pc, cfg, x);
  for (int k = 0; k < pc->nknobs; k++)
    x[k] = eps * (x[k] + 0.5);
}

int pop_coords_scaled_config(const pop_coords *pc, heron_rng *rng,
                             const double *x, double eps, double *idx,
                             int64_t *cfg, heron_error *err) {
  for (int k = 0; k < pc->nknobs; k++)
    idx[k] = x[k] / eps - 0.5;
  return pop_coords_config(pc, rng, idx, cfg, err);
}

/* ---- Costs and their cache ----------------------------------------------- */
double pop_cost(const heron_measurement *m) {
  return m->status == HERON_MEAS_OK && m->seconds > 0 ? m->seconds : DBL_MAX;
}

static size_t pop_slot(const pop_cache *c, uint64_t key) {
  size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull) & c->mask;
  while (c->used[i] && c->key[i] != key)
    i = (i + 1) & c->mask;
  return i;
}

int pop_cache_get(const pop_cache *c, uint64_t key, double *cost) {
  if (!c->used)
    return 0;
  size_t i = pop_slot(c, key);
  if (!c->used[i])
    return 0;
  *cost = c->cost[i];
  return 1;
}

static int pop_cache_grow(pop_cache *c) {
  size_t cap = c->used ? 2 * (c->mask + 1) : 1024;
  pop_cache n = {.key = malloc(cap * sizeof *n.key),
                 .cost = malloc(cap * sizeof *n.cost),
                 .used = calloc(cap, 1),
                 .mask = cap - 1};
  if (!n.key || !n.cost || !n.used) {
    free(n.key);
    free(n.cost);
    free(n.used);
    return HERON_ENOMEM;
  }
  for (size_t i = 0; c->used && i <= c->mask; i++)
    if (c->used[i]) {
      size_t j = pop_slot(&n, c->key[i]);
      n.used[j] = 1;
      n.key[j] = c->key[i];
      n.cost[j] = c->cost[i];
      n.n++;
    }
  free(c->key);
  free(c->cost);
  free(c->used);
  *c = n;
  return HERON_OK;
}

int pop_cache_put(pop_cache *c, uint64_t key, double cost) {
  if ((!c->used || 2 * (c->n + 1) > c->mask + 1) && pop_cache_grow(c))
    return HERON_ENOMEM;
  size_t i = pop_slot(c, key);
  if (!c->used[i]) {
    c->used[i] = 1;
    c->key[i] = key;
    c->cost[i] = cost;
    c->n++;
  }
  return HERON_OK;
}

void pop_cache_free(pop_cache *c) {
  free(c->key);
  free(c->cost);
  free(c->used);
  memset(c, 0, sizeof *c);
}

/* ---- A generation and the driver ----------------------------------------- */
int pop_run_init(pop_run *r, const heron_strategy_env *env, const char *who) {
  memset(r, 0, sizeof *r);
  r->env = env;
  r->who = who;
  r->gen.nvars = heron_space_nvars(env->space);
  return pop_cache_grow(&r->cache);
}

void pop_run_free(pop_run *r) {
  pop_cache_free(&r->cache);
  free(r->gen.cfg);
  free(r->gen.key);
  free(r->gen.cost);
  free(r->gen.state);
  memset(r, 0, sizeof *r);
}

void pop_gen_clear(pop_gen *g) {
  g->n = 0;
  g->fresh = 0;
}

int pop_add(pop_run *r, const int64_t *cfg) {
  pop_gen *g = &r->gen;
  if (g->n == g->cap) {
    int cap = g->cap ? 2 * g->cap : 64;
    size_t nv = (size_t)g->nvars + 1;
    int64_t *c = realloc(g->cfg, (size_t)cap * nv * sizeof *c);
    if (c)
      g->cfg = c;
    uint64_t *k = realloc(g->key, (size_t)cap * sizeof *k);
    if (k)
      g->key = k;
    double *co = realloc(g->cost, (size_t)cap * sizeof *co);
    if (co)
      g->cost = co;
    unsigned char *s = realloc(g->state, (size_t)cap);
    if (s)
      g->state = s;
    if (!c || !k || !co || !s)
      return -1;
    g->cap = cap;
  }
  int i = g->n++;
  memcpy(g->cfg + (size_t)i * (size_t)(g->nvars + 1), cfg,
         (size_t)g->nvars * sizeof *cfg);
  g->key[i] = plugin_config_key(r->env->space, cfg);
  g->cost[i] = DBL_MAX;
  if (pop_cache_get(&r->cache, g->key[i], &g->cost[i])) {
    g->state[i] = POP_KNOWN;
    return i;
  }
  g->state[i] = POP_TODO;
  for (int j = 0; j < i; j++)
    if (g->key[j] == g->key[i] && g->state[j] != POP_KNOWN) {
      g->state[i] = POP_SAME;
      return i;
    }
  g->fresh++;
  return i;
}

/* After a round: entries answered by observe take their cost; entries
 * handed out but never answered were dropped by the engine (they cannot
 * have been measured before, so the engine found them invalid) and count
 * as failed, as Kernel Tuner counts an invalid config; duplicates follow
 * their first entry. */
static void pop_gen_resolve(pop_run *r) {
  pop_gen *g = &r->gen;
  for (int i = 0; i < g->n; i++) {
    if (g->state[i] != POP_OUT && g->state[i] != POP_SAME)
      continue;
    if (pop_cache_get(&r->cache, g->key[i], &g->cost[i])) {
      g->state[i] = POP_KNOWN;
    } else if (g->state[i] == POP_OUT) {
      g->cost[i] = DBL_MAX;
      g->state[i] = POP_KNOWN;
    } else {
      for (int j = 0; j < i; j++)
        if (g->key[j] == g->key[i] && g->state[j] == POP_KNOWN) {
          g->cost[i] = g->cost[j];
          g->state[i] = POP_KNOWN;
          break;
        }
    }
  }
}

/* Generations asked for in one propose call before it gives up for this
 * round: enough for several restarts on a space measured through. */
#define POP_STEPS_PER_ROUND (8 * POP_STALL_RESTART)

int pop_run_propose(pop_run *r, int want, int64_t *out, int *got,
                    pop_step_fn step, void *self, heron_error *err) {
  pop_gen *g = &r->gen;
  int nv = g->nvars;
  *got = 0;
  if (want <= 0)
    return HERON_OK;
  pop_gen_resolve(r);
  for (int steps = 0; steps <= POP_STEPS_PER_ROUND; steps++) {
    for (int i = 0; i < g->n && *got < want; i++)
      if (g->state[i] == POP_TODO) {
        memcpy(out + (size_t)*got * (size_t)nv,
               g->cfg + (size_t)i * (size_t)(nv + 1), (size_t)nv * sizeof *out);
        g->state[i] = POP_OUT;
        (*got)++;
      }
    if (*got > 0)
      return HERON_OK;
    /* Every entry is known, SAME ones included, once TODO and OUT are
     * gone: the generation is finished. */
    pop_gen_resolve(r);
    int restart = !r->started;
    if (r->started) {
      r->generations++;
      r->stalls = g->fresh ? 0 : r->stalls + 1;
      if (r->stalls >= POP_STALL_RESTART) {
        restart = 1;
        r->restarts++;
        r->env->log(r->env, HERON_LOG_DEBUG,
                    "%d generations in a row found nothing new to measure: "
                    "a fresh population (restart %ld)",
                    r->stalls, r->restarts);
        r->stalls = 0;
      }
    }
    r->started = 1;
    int rc = step(self, restart, err);
    if (rc != HERON_OK)
      return rc;
  }
  r->env->log(r->env, HERON_LOG_INFO,
              "found no unmeasured config in %d generations (the space may "
              "be exhausted)",
              POP_STEPS_PER_ROUND);
  return HERON_OK;
}

int pop_run_observe(pop_run *r, const heron_measurement *results, int n,
                    heron_error *err) {
  for (int i = 0; i < n; i++) {
    if (!results[i].config)
      continue;
    uint64_t key = plugin_config_key(r->env->space, results[i].config);
    if (pop_cache_put(&r->cache, key, pop_cost(&results[i])) != HERON_OK)
      return heron_error_set(err, HERON_ENOMEM, "%s: out of memory", r->who);
  }
  return HERON_OK;
}

/* ---- Helpers ------------------------------------------------------------- */
int pop_sample(const heron_strategy_env *env, int64_t *cfg, heron_error *err) {
  int rc = HERON_EUNSAT;
  for (int tries = 0; tries < 100 && rc == HERON_EUNSAT; tries++) {
    heron_error_clear(err);
    rc = heron_space_sample(env->space, env->rng, cfg, err);
  }
  return rc;
}

double pop_space_size(const heron_strategy_env *env) {
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  double count = 0;
  int exact = 0;
  heron_error e;
  heron_error_clear(&e);
  if (heron_space_count(env->space, &rng, 1e6, &count, &exact, &e) != HERON_OK)
    return 1e6;
  return count;
}

double pop_uniform(heron_rng *rng, double lo, double hi) {
  return lo + (hi - lo) * heron_rng_uniform(rng);
}
