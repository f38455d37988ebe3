/* plugins/common/local_search.c - the local-search strategies' shared
 * parts: the table of measured costs, the round, neighbours, random starts
 * and the hill climber (see local_search.h). */
#include "local_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_util.h"

/* ---- The table of measured costs ----------------------------------------- */

/* Records the cost of key. */
static int ls_put(ls_base *b, uint64_t key, double cost) {
  return pop_cache_put(&b->cache, key, cost);
}

static int ls_get(const ls_base *b, uint64_t key, double *cost) {
  return pop_cache_get(&b->cache, key, cost);
}

int ls_init(ls_base *b, const heron_strategy_env *env, const char *who,
            heron_error *err) {
  memset(b, 0, sizeof *b);
  b->env = env;
  b->sp = env->space;
  b->who = who;
  b->nv = heron_space_nvars(b->sp);
  b->nk = heron_space_nknobs(b->sp);
  b->knobs = malloc((size_t)(b->nk ? b->nk : 1) * sizeof *b->knobs);
  b->round_cap = env->batch > 0 ? env->batch : 1;
  b->round_keys = malloc((size_t)b->round_cap * sizeof *b->round_keys);
  if (pop_coords_init(&b->coords, b->sp) != HERON_OK || !b->knobs ||
      !b->round_keys) {
    ls_free(b);
    return heron_error_set(err, HERON_ENOMEM, "%s: out of memory", who);
  }
  for (int i = 0; i < b->nk; i++)
    b->knobs[i] = heron_space_knob(b->sp, i);
  return HERON_OK;
}

void ls_free(ls_base *b) {
  pop_cache_free(&b->cache);
  pop_coords_free(&b->coords);
  free(b->knobs);
  free(b->round_keys);
  free(b->nb);
  memset(b, 0, sizeof *b);
}

double ls_objective(const heron_measurement *m) {
  if (m->status != HERON_MEAS_OK || !(m->seconds > 0))
    return INFINITY;
  return m->seconds * 1e3;
}

int ls_observe(ls_base *b, const heron_measurement *r, int n,
               heron_error *err) {
  for (int i = 0; i < n; i++) {
    b->observed++;
    if (!r[i].config)
      continue;
    if (ls_put(b, plugin_config_key(b->sp, r[i].config), ls_objective(&r[i])) !=
        HERON_OK)
      return heron_error_set(err, HERON_ENOMEM, "%s: out of memory", b->who);
  }
  return HERON_OK;
}

int ls_known(const ls_base *b, const int64_t *cfg, double *cost) {
  return ls_get(b, plugin_config_key(b->sp, cfg), cost);
}

/* ---- The round ----------------------------------------------------------- */

void ls_round(ls_base *b, int64_t *out, int want) {
  b->out = out;
  b->want = want;
  b->got = 0;
}

int ls_full(const ls_base *b) { return b->got >= b->want; }

static int ls_in_round(const ls_base *b, uint64_t key) {
  for (int i = 0; i < b->got; i++)
    if (b->round_keys[i] == key)
      return 1;
  return 0;
}

int ls_propose(ls_base *b, const int64_t *cfg) {
  uint64_t key = plugin_config_key(b->sp, cfg);
  double c;
  if (ls_get(b, key, &c) || ls_in_round(b, key))
    return 0;
  if (ls_full(b))
    return -1;
  if (b->got == b->round_cap) {
    int cap = 2 * b->round_cap;
    uint64_t *k = realloc(b->round_keys, (size_t)cap * sizeof *k);
    if (!k)
      return -1;
    b->round_keys = k;
    b->round_cap = cap;
  }
  memcpy(b->out + (size_t)b->got * b->nv, cfg, (size_t)b->nv * sizeof *cfg);
  b->round_keys[b->got++] = key;
  return 1;
}

int ls_sample(ls_base *b, int64_t *cfg, int fresh, heron_error *err) {
  for (int tries = 0; tries < 1000; tries++) {
    heron_error e;
    heron_error_clear(&e);
    int rc = heron_space_sample(b->sp, b->env->rng, cfg, &e);
    if (rc == HERON_EUNSAT)
      continue;
    if (rc != HERON_OK)
      return heron_error_set(err, rc, "%s: sampling failed: %s", b->who,
                             e.text);
    uint64_t key = plugin_config_key(b->sp, cfg);
    double c;
    if (!fresh || (!ls_get(b, key, &c) && !ls_in_round(b, key)))
      return 1;
  }
  return 0;
}

/* ---- Neighbours ---------------------------------------------------------- */

int ls_neighbours(ls_base *b, const int64_t *cfg, int kind, heron_error *err) {
  heron_error e;
  heron_error_clear(&e);
  int n = heron_space_neighbours(b->sp, b->env->rng, cfg, kind, b->nb, b->nbcap,
                                 &e);
  if (n > b->nbcap) {
    int64_t *nb = realloc(b->nb, (size_t)n * (size_t)b->nv * sizeof *nb);
    if (!nb)
      return heron_error_set(err, HERON_ENOMEM, "%s: out of memory", b->who);
    b->nb = nb;
    b->nbcap = n;
    n = heron_space_neighbours(b->sp, b->env->rng, cfg, kind, b->nb, b->nbcap,
                               &e);
  }
  if (n < 0)
    return heron_error_set(err, n, "%s: %s", b->who, e.text);
  b->nn = n;
  return n;
}

int ls_random_neighbour(ls_base *b, const int64_t *cfg, int kind, int64_t *out,
                        heron_error *err) {
  int n = ls_neighbours(b, cfg, kind, err);
  if (n <= 0)
    return n;
  int i = (int)heron_rng_below(b->env->rng, (uint64_t)n);
  memcpy(out, b->nb + (size_t)i * b->nv, (size_t)b->nv * sizeof *out);
  return 1;
}

int ls_neighbourhood(const heron_param *params, int n) {
  const char *v = heron_param_get(params, n, "neighbor", "Hamming");
  return strcmp(v, "adjacent") == 0 ? HERON_NEIGHBOURS_ADJACENT
                                    : HERON_NEIGHBOURS_HAMMING;
}

int ls_config_at(ls_base *b, const double *idx, int64_t *cfg,
                 heron_error *err) {
  heron_error e;
  heron_error_clear(&e);
  int rc = pop_coords_config(&b->coords, b->env->rng, idx, cfg, &e);
  if (rc == HERON_EUNSAT)
    return 0;
  if (rc != HERON_OK)
    return heron_error_set(err, rc, "%s: %s", b->who, e.text);
  return 1;
}

/* ---- The hill climber ---------------------------------------------------- */

int ls_climb_init(ls_climb *c, const ls_base *b, int kind, int first,
                  int randomize) {
  memset(c, 0, sizeof *c);
  c->kind = kind;
  c->first = first;
  c->randomize = randomize;
  c->cur = malloc((size_t)(b->nv ? b->nv : 1) * sizeof *c->cur);
  return c->cur ? HERON_OK : HERON_ENOMEM;
}

void ls_climb_free(ls_climb *c) {
  free(c->cur);
  free(c->order);
  memset(c, 0, sizeof *c);
}

void ls_climb_start(ls_climb *c, const ls_base *b, const int64_t *cfg,
                    double cost) {
  memmove(c->cur, cfg, (size_t)b->nv * sizeof *cfg);
  c->cur_cost = cost;
  c->listed = 0;
}

static void ls_shuffle(heron_rng *rng, int *a, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)heron_rng_below(rng, (uint64_t)i + 1);
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

/* Lists cur's neighbours in visiting order: knob by knob, the knobs (and
 * each knob's values) shuffled when randomize is set. */
static int ls_climb_list(ls_base *b, ls_climb *c, heron_error *err) {
  int n = ls_neighbours(b, c->cur, c->kind, err);
  if (n < 0)
    return n;
  if (n > c->cap) {
    int64_t *o = realloc(c->order, (size_t)n * (size_t)b->nv * sizeof *o);
    if (!o)
      return heron_error_set(err, HERON_ENOMEM, "%s: out of memory", b->who);
    c->order = o;
    c->cap = n;
  }
  int nk = b->nk ? b->nk : 1;
  int *perm = malloc((size_t)nk * sizeof *perm),
      *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
  if (!perm || !idx) {
    free(perm);
    free(idx);
    return heron_error_set(err, HERON_ENOMEM, "%s: out of memory", b->who);
  }
  for (int i = 0; i < b->nk; i++)
    perm[i] = i;
  if (c->randomize)
    ls_shuffle(b->env->rng, perm, b->nk);
  int m = 0;
  for (int p = 0; p < b->nk; p++) {
    int v = b->knobs[perm[p]], from = m;
    for (int i = 0; i < n; i++)
      if (b->nb[(size_t)i * b->nv + v] != c->cur[v])
        idx[m++] = i;
    if (c->randomize)
      ls_shuffle(b->env->rng, idx + from, m - from);
  }
  for (int i = 0; i < m; i++)
    memcpy(c->order + (size_t)i * b->nv, b->nb + (size_t)idx[i] * b->nv,
           (size_t)b->nv * sizeof *c->order);
  free(perm);
  free(idx);
  c->n = m;
  c->listed = 1;
  return HERON_OK;
}

int ls_climb_run(ls_base *b, ls_climb *c, heron_error *err) {
  for (;;) {
    if (!c->listed) {
      int rc = ls_climb_list(b, c, err);
      if (rc < 0)
        return rc;
    }
    int best = -1, waiting = 0;
    double best_cost = c->cur_cost;
    for (int i = 0; i < c->n; i++) {
      const int64_t *cfg = c->order + (size_t)i * b->nv;
      double cost;
      if (!ls_known(b, cfg, &cost)) {
        waiting = 1;
        if (ls_propose(b, cfg) < 0)
          break;
        continue;
      }
      if (waiting || !(cost < best_cost))
        continue;
      best = i;
      best_cost = cost;
      if (c->first)
        break;
    }
    if (waiting && !(c->first && best >= 0))
      return LS_CLIMB_WAIT;
    if (best < 0)
      return LS_CLIMB_DONE;
    ls_climb_start(c, b, c->order + (size_t)best * b->nv, best_cost);
    c->moves++;
    if (c->first)
      return LS_CLIMB_DONE;
  }
}

/* ---- Climbs from starts -------------------------------------------------- */

int ls_starts_init(ls_starts *s, const heron_strategy_env *env, const char *who,
                   const heron_param *params, int nparams, int first_default,
                   int randomize, heron_error *err) {
  memset(s, 0, sizeof *s);
  int rc = ls_init(&s->b, env, who, err);
  if (rc)
    return rc;
  s->start = malloc((size_t)(s->b.nv ? s->b.nv : 1) * sizeof *s->start);
  int first =
      (int)heron_param_int_value(params, nparams, "restart", first_default);
  rc = ls_climb_init(&s->climb, &s->b, ls_neighbourhood(params, nparams), first,
                     randomize);
  if (rc || !s->start) {
    ls_starts_free(s);
    return heron_error_set(err, HERON_ENOMEM, "%s: out of memory", who);
  }
  return HERON_OK;
}

void ls_starts_free(ls_starts *s) {
  if (s->b.env)
    s->b.env->log(s->b.env, HERON_LOG_DEBUG, "%ld random starts, %ld moves",
                  s->starts, s->climb.moves);
  ls_climb_free(&s->climb);
  ls_free(&s->b);
  free(s->start);
  memset(s, 0, sizeof *s);
}

int ls_starts_begin(ls_starts *s, heron_error *err) {
  if (s->climbing)
    return 1;
  if (!s->have_start) {
    int r = ls_sample(&s->b, s->start, 0, err);
    if (r <= 0)
      return r;
    s->have_start = 1;
    s->starts++;
  }
  double cost;
  if (!ls_known(&s->b, s->start, &cost)) {
    ls_propose(&s->b, s->start);
    return 0;
  }
  ls_climb_start(&s->climb, &s->b, s->start, cost);
  s->have_start = 0;
  s->climbing = 1;
  return 1;
}

int ls_starts_fresh(ls_starts *s, heron_error *err) {
  if (s->b.got > 0 || s->climbing)
    return HERON_OK;
  int r = ls_sample(&s->b, s->start, 1, err);
  if (r < 0)
    return r;
  if (r > 0) {
    s->have_start = 1;
    s->starts++;
    ls_propose(&s->b, s->start);
  }
  return HERON_OK;
}
