/* plugins/strategies/genetic/pool.c - the genetic strategy's containers
 * (genetic.h): pools of configs with their scores and keys, sets of keys,
 * and a config's key.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genetic.h"

int genetic_pool_init(genetic_pool *p, int cap, int nv) {
  p->n = 0;
  p->cap = cap;
  p->nv = nv;
  p->cfg = malloc((size_t)cap * (size_t)nv * sizeof *p->cfg + 1);
  p->score = malloc((size_t)cap * sizeof *p->score + 1);
  p->key = malloc((size_t)cap * sizeof *p->key + 1);
  return p->cfg && p->score && p->key ? HERON_OK : HERON_ENOMEM;
}

void genetic_pool_free(genetic_pool *p) {
  free(p->cfg);
  free(p->score);
  free(p->key);
}

void genetic_pool_push(genetic_pool *p, const int64_t *cfg, uint64_t key,
                       double score) {
  if (p->n >= p->cap)
    return;
  if (cfg != genetic_pool_cfg(p, p->n))
    memcpy(genetic_pool_cfg(p, p->n), cfg, (size_t)p->nv * sizeof *cfg);
  p->key[p->n] = key;
  p->score[p->n] = score;
  p->n++;
}

int genetic_set_init(genetic_set *s, int max_items) {
  size_t cap = 16;
  while (cap < 2 * (size_t)max_items)
    cap *= 2;
  s->slot = calloc(cap, sizeof *s->slot);
  s->mask = s->slot ? cap - 1 : 0; /* 0: the next propose retries */
  s->has_zero = 0;
  return s->slot ? HERON_OK : HERON_ENOMEM;
}

void genetic_set_clear(genetic_set *s) {
  if (s->slot)
    memset(s->slot, 0, (s->mask + 1) * sizeof *s->slot);
  s->has_zero = 0;
}

/* Finds key's slot: the one holding it or the empty one where it belongs.
 * The set never fills (capacity is twice what it is sized for, and the
 * callers add at most that many keys between clears). */
static size_t genetic_set_find(const genetic_set *s, uint64_t key) {
  size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & s->mask;
  while (s->slot[i] && s->slot[i] != key)
    i = (i + 1) & s->mask;
  return i;
}

int genetic_set_has(const genetic_set *s, uint64_t key) {
  return key ? s->slot[genetic_set_find(s, key)] == key : s->has_zero;
}

int genetic_set_add(genetic_set *s, uint64_t key) {
  if (!key) {
    int was = s->has_zero;
    s->has_zero = 1;
    return !was;
  }
  size_t i = genetic_set_find(s, key);
  if (s->slot[i])
    return 0;
  s->slot[i] = key;
  return 1;
}

int genetic_measured(const genetic *g, uint64_t key) {
  if (!g->env->history)
    return 0;
  char buf[32];
  snprintf(buf, sizeof buf, "%016" PRIx64, key);
  return heron_history_contains(g->env->history, buf);
}
