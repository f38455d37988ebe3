/* core/replay/replay.c - the store of recorded measurements (replay.h):
 * its table of answers, opening it (the logs and T4 files read, the
 * surrogate fitted), looking configs up, and freeing it.  Its parts are
 * listed in store.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/measure/timing.h"
#include "core/plugin/plugin.h"
#include "core/record/record.h"
#include "core/replay/store.h"
#include "core/task/task.h"
#include "core/util/util.h"

/* ---- The table of recorded answers ------------------------------------- */

answer *heron__replay_slot(heron__replay *rp, uint64_t key) {
  key = key ? key : 1; /* 0 marks an empty slot */
  size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull) & (rp->cap - 1);
  while (rp->slots[i].key && rp->slots[i].key != key)
    i = (i + 1) & (rp->cap - 1);
  return &rp->slots[i];
}

int heron__replay_grow(heron__replay *rp) {
  if ((rp->used + 1) * 2 <= rp->cap)
    return HERON_OK;
  size_t oldcap = rp->cap;
  answer *old = rp->slots;
  rp->cap = oldcap ? oldcap * 2 : 1024;
  rp->slots = calloc(rp->cap, sizeof *rp->slots);
  if (!rp->slots) {
    rp->slots = old;
    rp->cap = oldcap;
    return HERON_ENOMEM;
  }
  for (size_t i = 0; i < oldcap; i++)
    if (old[i].key)
      *heron__replay_slot(rp, old[i].key) = old[i];
  free(old);
  return HERON_OK;
}

/* Takes record m of config key k: the first record of a key, replaced
 * once by the first ok one when the first was a failure. */
int heron__replay_take(heron__replay *rp, uint64_t k,
                       const heron_measurement *m, double cost) {
  if (heron__replay_grow(rp) != HERON_OK)
    return HERON_ENOMEM;
  answer *a = heron__replay_slot(rp, k);
  k = k ? k : 1;
  if (a->key && (a->m.status == HERON_MEAS_OK || m->status != HERON_MEAS_OK))
    return HERON_OK;
  char *e = strdup(m->error ? m->error : "");
  if (!e)
    return HERON_ENOMEM;
  if (a->key)
    free((char *)a->m.error);
  else
    rp->used++;
  a->key = k;
  a->m = *m;
  a->cost = cost;
  a->m.config = NULL;
  a->m.simulated = 0;
  a->m.error = e;
  return HERON_OK;
}

int heron__replay_open(const heron_task *t, uint64_t seed, heron__replay **out,
                       heron__replay_stats *stats, heron_error *err) {
  return heron__replay_open_store(t, seed, 0, out, stats, err);
}

int heron__replay_open_store(const heron_task *t, uint64_t seed, int collect,
                             heron__replay **out, heron__replay_stats *stats,
                             heron_error *err) {
  *out = NULL;
  memset(stats, 0, sizeof *stats);
  if (t->nrecorded < 1)
    return heron_error_set(err, HERON_EINVAL,
                           "target replay needs --replay LOG");
  heron__replay *rp = calloc(1, sizeof *rp);
  if (!rp)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  rp->task = t;
  rp->collect = collect;
  rp->sp = heron_task_space(t);
  rp->nvars = heron_space_nvars(rp->sp);
  rp->nfeat = heron_space_nfeatures(rp->sp);
  /* Completing a record's knobs must not depend on anything but the seed. */
  heron_rng rng;
  heron_rng_seed(&rng, seed);
  train tr;
  memset(&tr, 0, sizeof tr);
  /* A T1 task's T4 file holds the whole space: answers, never guesses. */
  rp->full = t->t1 != NULL;
  rp->full_path = t->nrecorded > 0 ? t->recorded[0] : "";
  /* The model is opened before the (slow) reading, so a missing plugin
   * fails at once. */
  int rc = rp->full ? HERON_OK : heron__replay_open_model(rp, seed, err);
  for (int i = 0; !rc && i < t->nrecorded; i++, stats->logs++)
    rc =
        heron__replay_is_t4(t->recorded[i])
            ? heron__replay_read_t4(rp, t->recorded[i], &tr, stats, err)
            : heron__replay_read_log(rp, t->recorded[i], &rng, &tr, stats, err);
  stats->distinct = (int)rp->used;
  stats->ok = tr.n;
  if (!rc && rp->full && rp->used == 0)
    rc = heron_error_set(err, HERON_EINVAL,
                         "T4 file %s holds no config of the T1 space",
                         rp->full_path);
  if (!rc && !rp->full && tr.n < 2)
    rc = heron_error_set(err, HERON_EINVAL,
                         "target replay: the logs hold %d ok record%s valid "
                         "in this space (%d read, %d skipped); the surrogate "
                         "model needs at least 2",
                         tr.n, tr.n == 1 ? "" : "s", stats->records,
                         stats->skipped);
  if (!rc && tr.nb > 0) {
    rp->median_build_s = heron__median(tr.build, tr.nb);
    stats->median_build_s = rp->median_build_s;
  }
  /* A whole measured space needs no surrogate. */
  if (!rc && !rp->full)
    rc = heron__model_fit(rp->model, tr.X, tr.y, tr.n, rp->nfeat, err);
  free(tr.X);
  free(tr.y);
  free(tr.build);
  if (rc) {
    heron__replay_free(rp);
    return rc;
  }
  *out = rp;
  return HERON_OK;
}

/* "{a=1, b=2}": the knobs of cfg, for messages. */
void heron__replay_config_text(const heron_space *sp, const int64_t *cfg,
                               char *buf, size_t cap) {
  heron__buf b = {0};
  for (int k = 0; k < heron_space_nknobs(sp); k++) {
    int v = heron_space_knob(sp, k);
    heron__buf_printf(&b, "%s%s=%lld", k ? ", " : "{",
                      heron_space_var_name(sp, v), (long long)cfg[v]);
  }
  snprintf(buf, cap, "%s}", b.data ? b.data : "{");
  heron__buf_free(&b);
}

int heron__replay_measure(heron__replay *rp, const int64_t *cfgs, int n,
                          heron_measurement *out, char **errors, double *costs,
                          heron_error *err) {
  /* Recorded configs first; the others are predicted in one call. */
  int *miss = malloc((size_t)(n > 0 ? n : 1) * sizeof *miss);
  if (!miss)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  int nmiss = 0;
  for (int i = 0; i < n; i++) {
    const int64_t *cfg = cfgs + (size_t)i * (size_t)rp->nvars;
    answer *a = heron__replay_slot(rp, heron__config_key(rp->sp, cfg));
    errors[i] = NULL;
    if (!a->key && rp->full) {
      char text[200];
      heron__replay_config_text(rp->sp, cfg, text, sizeof text);
      free(miss);
      for (int j = 0; j < i; j++) {
        free(errors[j]);
        errors[j] = NULL;
      }
      return heron_error_set(err, HERON_ENOTFOUND,
                             "config %s of the T1 space is not in the T4 "
                             "file %s",
                             text, rp->full_path);
    }
    if (!a->key) {
      miss[nmiss++] = i;
      continue;
    }
    if (costs)
      costs[i] = a->cost;
    out[i] = a->m;
    out[i].config = cfg;
    errors[i] = a->m.error[0] ? strdup(a->m.error) : NULL;
  }
  int rc = heron__replay_predict(rp, cfgs, miss, nmiss, out, costs, err);
  free(miss);
  return rc;
}

void heron__replay_free(heron__replay *rp) {
  if (!rp)
    return;
  for (size_t i = 0; i < rp->cap; i++)
    if (rp->slots[i].key)
      free((char *)rp->slots[i].m.error);
  free(rp->slots);
  heron__model_close(rp->model);
  heron__buf_free(&rp->outside);
  free(rp->X);
  free(rp);
}
