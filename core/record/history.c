/* core/record/history.c - the task's measurements and the set of measured
 * config keys used to drop duplicates. */
#include <stdlib.h>
#include <string.h>

#include "core/record/record.h"
#include "core/util/util.h"

void heron__history_init(heron_history *h, int nvars) {
  memset(h, 0, sizeof *h);
  h->nvars = nvars;
  h->best = -1;
}

void heron__history_free(heron_history *h) {
  for (int i = 0; i < h->n; i++) {
    free((void *)h->items[i]->config);
    free((void *)h->items[i]->error);
    free(h->items[i]);
  }
  free(h->items);
  free(h->keys);
  memset(h, 0, sizeof *h);
  h->best = -1;
}

/* Key 0 marks an empty slot, so a (rare) zero hash is stored as 1. */
static uint64_t slot_key(uint64_t key) { return key ? key : 1; }

static int keys_insert(uint64_t *keys, size_t cap, uint64_t key) {
  size_t i = (size_t)(key % cap);
  while (keys[i] && keys[i] != key)
    i = (i + 1) % cap;
  int fresh = keys[i] == 0;
  keys[i] = key;
  return fresh;
}

static int keys_grow(heron_history *h) {
  size_t cap = h->keys_cap ? h->keys_cap * 2 : 1024;
  uint64_t *keys = calloc(cap, sizeof *keys);
  if (!keys)
    return -1;
  for (size_t i = 0; i < h->keys_cap; i++)
    if (h->keys[i])
      keys_insert(keys, cap, h->keys[i]);
  free(h->keys);
  h->keys = keys;
  h->keys_cap = cap;
  return 0;
}

int heron__history_has(const heron_history *h, uint64_t key) {
  if (!h->keys_cap)
    return 0;
  key = slot_key(key);
  size_t i = (size_t)(key % h->keys_cap);
  while (h->keys[i]) {
    if (h->keys[i] == key)
      return 1;
    i = (i + 1) % h->keys_cap;
  }
  return 0;
}

const heron_measurement *
heron__history_add(heron_history *h, const heron_measurement *m, uint64_t key) {
  if (h->n == h->cap) {
    int cap = h->cap ? h->cap * 2 : 64;
    heron_measurement **items = realloc(h->items, (size_t)cap * sizeof *items);
    if (!items)
      return NULL;
    h->items = items;
    h->cap = cap;
  }
  /* Keep the key table at most half full so probes stay short. */
  if ((size_t)(h->n + 1) * 2 > h->keys_cap && keys_grow(h) != 0)
    return NULL;
  heron_measurement *r = malloc(sizeof *r);
  int64_t *cfg = malloc((size_t)h->nvars * sizeof *cfg);
  char *error = strdup(m->error ? m->error : "");
  if (!r || !cfg || !error) {
    free(r);
    free(cfg);
    free(error);
    return NULL;
  }
  *r = *m;
  memcpy(cfg, m->config, (size_t)h->nvars * sizeof *cfg);
  r->config = cfg;
  r->error = error;
  h->items[h->n] = r;
  keys_insert(h->keys, h->keys_cap, slot_key(key));
  if (r->status == HERON_MEAS_OK && r->seconds > 0 &&
      (h->best < 0 || r->seconds < h->items[h->best]->seconds))
    h->best = h->n;
  h->n++;
  return r;
}

uint64_t heron__config_key(const heron_space *sp, const int64_t *cfg) {
  char buf[32];
  if (heron_space_key(sp, cfg, buf, sizeof buf) != HERON_OK)
    return 0;
  return strtoull(buf, NULL, 16);
}

HERON_API int heron_history_count(const heron_history *h) { return h->n; }

HERON_API const heron_measurement *heron_history_get(const heron_history *h,
                                                     int i) {
  return (i >= 0 && i < h->n) ? h->items[i] : NULL;
}

HERON_API const heron_measurement *heron_history_best(const heron_history *h) {
  return h->best >= 0 ? h->items[h->best] : NULL;
}

HERON_API int heron_history_contains(const heron_history *h, const char *key) {
  return key ? heron__history_has(h, strtoull(key, NULL, 16)) : 0;
}
