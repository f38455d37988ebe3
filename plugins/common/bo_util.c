/* plugins/common/bo_util.c - keys, training-set selection, candidate pools
 * and random proposals shared by becbo and tsbo (see bo_util.h). */
#include "bo_util.h"

#include <stdlib.h>
#include <string.h>

#include "plugin_util.h"

/* ---- Keys -----------------------------------------------------------------
 */

/* 1 when cfg was measured already (heron_history_contains); 0 without a
 * history. */
static int bo_measured(const heron_strategy_env *env, const int64_t *cfg) {
  char buf[32];
  if (!env->history || heron_space_key(env->space, cfg, buf, sizeof buf))
    return 0;
  return heron_history_contains(env->history, buf);
}

int bo_keyset_init(bo_keyset *s, size_t expect) {
  size_t cap = 64;
  while (cap < 2 * expect + 2)
    cap *= 2;
  s->slot = calloc(cap, sizeof *s->slot);
  s->cap = s->slot ? cap : 0;
  s->n = 0;
  return s->slot ? 0 : -1;
}

static size_t bo_keyset_find(const bo_keyset *s, uint64_t key) {
  size_t i = (size_t)(key % s->cap);
  while (s->slot[i] && s->slot[i] != key)
    i = (i + 1) % s->cap;
  return i;
}

static int bo_keyset_grow(bo_keyset *s) {
  bo_keyset bigger;
  if (bo_keyset_init(&bigger, s->cap) != 0)
    return -1;
  for (size_t i = 0; i < s->cap; i++)
    if (s->slot[i])
      bigger.slot[bo_keyset_find(&bigger, s->slot[i])] = s->slot[i];
  bigger.n = s->n;
  free(s->slot);
  *s = bigger;
  return 0;
}

int bo_keyset_add(bo_keyset *s, uint64_t key) {
  key = key ? key : 1;
  /* At most half full, so probes stay short. */
  if ((s->n + 1) * 2 > s->cap && bo_keyset_grow(s) != 0)
    return -1;
  size_t i = bo_keyset_find(s, key);
  if (s->slot[i])
    return 0;
  s->slot[i] = key;
  s->n++;
  return 1;
}

int bo_keyset_has(const bo_keyset *s, uint64_t key) {
  key = key ? key : 1;
  return s->cap > 0 && s->slot[bo_keyset_find(s, key)] == key;
}

void bo_keyset_clear(bo_keyset *s) {
  if (s->slot)
    memset(s->slot, 0, s->cap * sizeof *s->slot);
  s->n = 0;
}

void bo_keyset_free(bo_keyset *s) {
  free(s->slot);
  memset(s, 0, sizeof *s);
}

/* ---- Training data ----------------------------------------------------------
 */

int bo_is_success(const heron_measurement *m) {
  return m && m->status == HERON_MEAS_OK && m->gflops > 0;
}

int bo_is_failure(const heron_measurement *m) {
  return m && (m->status == HERON_MEAS_COMPILE_ERROR ||
               m->status == HERON_MEAS_RUNTIME_ERROR ||
               m->status == HERON_MEAS_TIMEOUT ||
               m->status == HERON_MEAS_WRONG_RESULT);
}

void bo_count(const heron_history *h, int from, int *ok, int *failed) {
  int a = 0, b = 0, n = h ? heron_history_count(h) : 0;
  for (int i = from < 0 ? 0 : from; i < n; i++) {
    const heron_measurement *m = heron_history_get(h, i);
    a += bo_is_success(m);
    b += bo_is_failure(m);
  }
  if (ok)
    *ok = a;
  if (failed)
    *failed = b;
}

static int bo_cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Sorting context-free: each entry carries its own GFLOP/s. */
typedef struct bo_ranked {
  double gflops;
  int idx;
} bo_ranked;

static int bo_cmp_ranked(const void *a, const void *b) {
  const bo_ranked *x = a, *y = b;
  if (x->gflops != y->gflops)
    return x->gflops < y->gflops ? 1 : -1; /* fastest first */
  return (x->idx > y->idx) - (x->idx < y->idx);
}

int bo_select_successes(const heron_history *h, int from, int cap, int *idx) {
  int total = h ? heron_history_count(h) : 0, n = 0;
  from = from < 0 ? 0 : from;
  if (cap <= 0 || from >= total)
    return 0;
  bo_ranked *r = malloc((size_t)(total - from) * sizeof *r);
  char *chosen = calloc((size_t)(total - from), 1);
  if (!r || !chosen) {
    free(r);
    free(chosen);
    return -1;
  }
  for (int i = from; i < total; i++) {
    const heron_measurement *m = heron_history_get(h, i);
    if (bo_is_success(m))
      r[n++] = (bo_ranked){m->gflops, i};
  }
  int k = 0;
  if (n <= cap) {
    for (int i = 0; i < n; i++)
      idx[k++] = r[i].idx;
  } else {
    qsort(r, (size_t)n, sizeof *r, bo_cmp_ranked);
    for (int i = 0; i < cap / 2; i++) {
      idx[k++] = r[i].idx;
      chosen[r[i].idx - from] = 1;
    }
    /* The most recent successes fill the rest. */
    for (int i = total - 1; i >= from && k < cap; i--)
      if (!chosen[i - from] && bo_is_success(heron_history_get(h, i)))
        idx[k++] = i;
    qsort(idx, (size_t)k, sizeof *idx, bo_cmp_int);
  }
  free(r);
  free(chosen);
  return k;
}

int bo_select_failures(const heron_history *h, int from, int cap, int *idx) {
  int total = h ? heron_history_count(h) : 0, k = 0;
  from = from < 0 ? 0 : from;
  for (int i = total - 1; i >= from && k < cap; i--)
    if (bo_is_failure(heron_history_get(h, i)))
      idx[k++] = i;
  qsort(idx, (size_t)k, sizeof *idx, bo_cmp_int);
  return k;
}

/* ---- Candidate pool
 * ----------------------------------------------------------- */

int bo_pool_init(bo_pool *p, const heron_space *sp, int cap) {
  memset(p, 0, sizeof *p);
  p->nvars = heron_space_nvars(sp);
  p->nfeat = heron_space_nfeatures(sp);
  p->cap = cap > 0 ? cap : 1;
  p->cfg = malloc((size_t)p->cap * (size_t)p->nvars * sizeof *p->cfg);
  p->feat = malloc((size_t)p->cap * ((size_t)p->nfeat + 1) * sizeof *p->feat);
  p->origin = malloc((size_t)p->cap * sizeof *p->origin);
  if (!p->cfg || !p->feat || !p->origin ||
      bo_keyset_init(&p->keys, (size_t)p->cap) != 0) {
    bo_pool_free(p);
    return -1;
  }
  return 0;
}

int bo_pool_add(bo_pool *p, const heron_strategy_env *env, const int64_t *cfg,
                int origin) {
  if (p->n >= p->cap)
    return 0;
  uint64_t key = plugin_config_key(env->space, cfg);
  if (bo_keyset_has(&p->keys, key) || bo_measured(env, cfg))
    return 0;
  if (bo_keyset_add(&p->keys, key) < 0)
    return -1;
  memcpy(p->cfg + (size_t)p->n * p->nvars, cfg, (size_t)p->nvars * sizeof *cfg);
  heron_space_features(env->space, cfg, p->feat + (size_t)p->n * p->nfeat);
  p->origin[p->n] = origin;
  p->n++;
  return 1;
}

void bo_pool_free(bo_pool *p) {
  free(p->cfg);
  free(p->feat);
  free(p->origin);
  bo_keyset_free(&p->keys);
  memset(p, 0, sizeof *p);
}

/* ---- Random proposals
 * ----------------------------------------------------------- */

int bo_propose_random(const heron_strategy_env *env, int want, int64_t *out,
                      int *got, bo_keyset *taken, int retries,
                      heron_error *err) {
  int nvars = heron_space_nvars(env->space), n = 0, misses = 0;
  heron_error last;
  heron_error_clear(&last);
  *got = 0;
  while (n < want && misses < retries) {
    int64_t *cfg = out + (size_t)n * nvars;
    heron_error e;
    heron_error_clear(&e);
    int rc = heron_space_sample(env->space, env->rng, cfg, &e);
    if (rc == HERON_EUNSAT) {
      misses++;
      last = e;
      continue;
    }
    if (rc != HERON_OK)
      return heron_error_set(err, rc, "%s", e.text);
    /* Measured or already in this batch: draw again. */
    if (bo_measured(env, cfg)) {
      misses++;
      continue;
    }
    int fresh = bo_keyset_add(taken, plugin_config_key(env->space, cfg));
    if (fresh < 0)
      return heron_error_set(err, HERON_ENOMEM, "out of memory");
    if (fresh == 0) {
      misses++;
      continue;
    }
    n++;
  }
  *got = n;
  if (n == 0 && want > 0 && last.code)
    return heron_error_set(err, HERON_EUNSAT, "%s", last.text);
  return HERON_OK;
}
