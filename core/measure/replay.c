/* core/measure/replay.c - the replay target: answers measurements from
 * recorded logs, and from a surrogate model fitted on them for configs no
 * log holds (core/measure/replay.h). */
#include "core/measure/replay.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/op/task.h"
#include "core/plugin/param_table.h"
#include "core/plugin/plugin.h"
#include "core/tune/tune_internal.h"
#include "core/util/util.h"

/* One answer a log gives: the chosen record of a config key. */
typedef struct answer {
  uint64_t key;        /* heron__config_key; 0 marks an empty slot */
  heron_measurement m; /* config NULL; error owned (malloc'ed) */
} answer;

struct heron__replay {
  const heron_task *task;
  const heron_space *sp;
  int nvars, nfeat;
  answer *slots; /* open-addressing table, a power of two in size */
  size_t cap, used;
  heron_model *model;
  double median_build_s;
  double *X; /* scratch rows for predictions */
  int xcap;
};

/* ---- Reading lines, plain or gzip -------------------------------------- */

/* Reads the next line of f into *buf (grown as needed), without its
 * newline.  Returns 1 with a line, 0 at the end; *terminated says whether
 * the line ended with a newline (a killed writer leaves one without).
 * -1 when out of memory. */
static int read_line(gzFile f, char **buf, size_t *cap, int *terminated) {
  size_t len = 0;
  if (!*buf) {
    *cap = 4096;
    if (!(*buf = malloc(*cap)))
      return -1;
  }
  for (;;) {
    if (!gzgets(f, *buf + len, (int)(*cap - len))) {
      (*buf)[len] = '\0';
      *terminated = 0;
      return len > 0;
    }
    len += strlen(*buf + len);
    if (len > 0 && (*buf)[len - 1] == '\n') {
      (*buf)[len - 1] = '\0';
      *terminated = 1;
      return 1;
    }
    if (len + 1 < *cap) { /* the end of the file, without a newline */
      *terminated = 0;
      return 1;
    }
    char *nb = realloc(*buf, *cap * 2);
    if (!nb)
      return -1;
    *buf = nb;
    *cap *= 2;
  }
}

static int open_log(const char *path, gzFile *f, heron_error *err) {
  *f = gzopen(path, "rb");
  if (!*f)
    return heron_error_set(err,
                           errno == ENOMEM ? HERON_ENOMEM : HERON_ENOTFOUND,
                           "replay log %s: cannot open: %s", path,
                           errno ? strerror(errno) : "zlib failed");
  return HERON_OK;
}

static int blank(const char *s) { return s[strspn(s, " \t\r")] == '\0'; }

int heron__replay_first_key(const char *path, char *key, size_t cap,
                            heron_error *err) {
  gzFile f;
  int rc = open_log(path, &f, err);
  if (rc)
    return rc;
  char *line = NULL;
  size_t lcap = 0;
  int term = 0, got, lineno = 0;
  rc =
      heron_error_set(err, HERON_EPARSE, "replay log %s holds no record", path);
  while ((got = read_line(f, &line, &lcap, &term)) > 0) {
    lineno++;
    if (blank(line))
      continue;
    json_error_t jerr;
    json_t *o = json_loads(line, 0, &jerr);
    const char *task = json_string_value(json_object_get(o, "task"));
    heron_error_clear(err);
    if (!json_is_object(o))
      rc = heron_error_set(err, HERON_EPARSE, "%s:%d: not a JSON object: %s",
                           path, lineno, o ? "not an object" : jerr.text);
    else if (!task)
      rc = heron_error_set(err, HERON_EPARSE,
                           "%s:%d: the record has no \"task\" string", path,
                           lineno);
    else {
      snprintf(key, cap, "%s", task);
      rc = HERON_OK;
    }
    json_decref(o);
    break;
  }
  if (got < 0)
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory reading %s", path);
  free(line);
  gzclose(f);
  return rc;
}

void heron__replay_sidecar(const char *log, char *out, size_t cap) {
  char base[4096];
  snprintf(base, sizeof base, "%s", log);
  size_t n = strlen(base);
  if (n > 3 && !strcmp(base + n - 3, ".gz"))
    base[n -= 3] = '\0';
  if (n > 6 && !strcmp(base + n - 6, ".jsonl"))
    base[n - 6] = '\0';
  snprintf(out, cap, "%s.hw.json", base);
}

/* ---- The table of recorded answers ------------------------------------- */

static answer *slot(heron__replay *rp, uint64_t key) {
  key = key ? key : 1; /* 0 marks an empty slot */
  size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull) & (rp->cap - 1);
  while (rp->slots[i].key && rp->slots[i].key != key)
    i = (i + 1) & (rp->cap - 1);
  return &rp->slots[i];
}

static int grow(heron__replay *rp) {
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
      *slot(rp, old[i].key) = old[i];
  free(old);
  return HERON_OK;
}

/* Takes record m of config key k: the first record of a key, replaced
 * once by the first ok one when the first was a failure. */
static int take(heron__replay *rp, uint64_t k, const heron_measurement *m) {
  if (grow(rp) != HERON_OK)
    return HERON_ENOMEM;
  answer *a = slot(rp, k);
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
  a->m.config = NULL;
  a->m.simulated = 0;
  a->m.error = e;
  return HERON_OK;
}

/* Growing training set of the surrogate: features -> ln(GFLOP/s). */
typedef struct train {
  double *X, *y, *build;
  int n, cap, nb, bcap;
} train;

static int push_train(train *tr, const heron_space *sp, int d,
                      const heron_measurement *m) {
  if (tr->nb == tr->bcap) {
    int nc = tr->bcap ? tr->bcap * 2 : 256;
    double *nb = realloc(tr->build, (size_t)nc * sizeof *nb);
    if (!nb)
      return HERON_ENOMEM;
    tr->build = nb;
    tr->bcap = nc;
  }
  if (m->status != HERON_MEAS_OK || !(m->gflops > 0))
    return HERON_OK;
  tr->build[tr->nb++] = m->build_seconds;
  if (tr->n == tr->cap) {
    int nc = tr->cap ? tr->cap * 2 : 256;
    double *nx = realloc(tr->X, (size_t)nc * (size_t)d * sizeof *nx);
    if (nx)
      tr->X = nx;
    double *ny = nx ? realloc(tr->y, (size_t)nc * sizeof *ny) : NULL;
    if (!ny)
      return HERON_ENOMEM;
    tr->y = ny;
    tr->cap = nc;
  }
  heron_space_features(sp, m->config, tr->X + (size_t)tr->n * (size_t)d);
  tr->y[tr->n++] = log(m->gflops);
  return HERON_OK;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Reads every record of one log into the table and the training set. */
static int read_log(heron__replay *rp, const char *path, heron_rng *rng,
                    train *tr, heron__replay_stats *st, heron_error *err) {
  gzFile f;
  int rc = open_log(path, &f, err);
  if (rc)
    return rc;
  char *line = NULL;
  size_t lcap = 0;
  int term = 0, got, lineno = 0;
  int64_t *cfg = malloc((size_t)rp->nvars * sizeof *cfg);
  if (!cfg)
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  while (!rc && (got = read_line(f, &line, &lcap, &term)) > 0) {
    lineno++;
    if (blank(line))
      continue;
    json_error_t jerr;
    json_t *o = json_loads(line, 0, &jerr);
    if (!json_is_object(o)) {
      json_decref(o);
      /* An unterminated last line is the trace of a killed writer. */
      if (!term)
        break;
      rc = heron_error_set(err, HERON_EPARSE, "%s:%d: not a JSON object: %s",
                           path, lineno, o ? "not an object" : jerr.text);
      break;
    }
    heron_measurement m;
    int valid = 0;
    rc = heron__log_parse(o, rp->sp, rp->task->replay_key, rng, &m, cfg, &valid,
                          NULL, lineno, path, err);
    st->records += rc == HERON_OK;
    /* An untimed record (compile-only, emulated) or one the environment
     * failed says nothing of the config: not an answer to replay. */
    if (rc == HERON_OK && (!valid || heron__log_flags(o, &m) != 0))
      st->skipped++;
    else if (rc == HERON_OK) {
      m.config = cfg;
      if (take(rp, heron__config_key(rp->sp, cfg), &m) != HERON_OK ||
          push_train(tr, rp->sp, rp->nfeat, &m) != HERON_OK)
        rc = heron_error_set(err, HERON_ENOMEM, "out of memory reading %s",
                             path);
    }
    json_decref(o);
  }
  if (!rc && got < 0)
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory reading %s", path);
  free(cfg);
  free(line);
  gzclose(f);
  return rc;
}

/* Opens the xgb plugin with the run's seed and one thread (when it takes
 * those parameters), so its fit and predictions are deterministic.  It is
 * fitted once, so it gets more, smaller steps than the tuner's model:
 * 300 rounds at eta 0.1 rank the held-out fifth of the shipped dataset
 * with Spearman's rho 0.81, against 0.78 for xgb's defaults (80 at 0.3),
 * for about a second more at start-up. */
static int open_model(heron__replay *rp, uint64_t seed, heron_error *err) {
  heron__plugin lib;
  memset(&lib, 0, sizeof lib);
  heron_error lerr;
  heron_error_clear(&lerr);
  int rc = heron__plugin_load_model(HERON__REPLAY_MODEL, &lib, &lerr);
  if (rc)
    return heron_error_set(err, rc,
                           "target replay: the surrogate model plugin '%s' "
                           "is needed for configs no log holds: %s",
                           HERON__REPLAY_MODEL, lerr.text);
  const heron_model_plugin *desc = lib.desc;
  heron__param_table pt = heron__model_param_table(desc);
  int has_seed = heron__param_table_has(&pt, "seed");
  int has_threads = heron__param_table_has(&pt, "nthread");
  int has_rounds = heron__param_table_has(&pt, "rounds");
  heron__plugin_close(&lib);
  char seedtext[32];
  snprintf(seedtext, sizeof seedtext, "%llu",
           (unsigned long long)(seed % 2147483648ull));
  heron_param params[4];
  int np = 0;
  if (has_rounds) {
    params[np++] = (heron_param){"rounds", "300"};
    params[np++] = (heron_param){"eta", "0.1"};
  }
  if (has_seed)
    params[np++] = (heron_param){"seed", seedtext};
  if (has_threads)
    params[np++] = (heron_param){"nthread", "1"};
  return heron__model_open(HERON__REPLAY_MODEL, params, np, rp->nfeat, seed,
                           &rp->model, err);
}

int heron__replay_open(const heron_task *t, uint64_t seed, heron__replay **out,
                       heron__replay_stats *stats, heron_error *err) {
  *out = NULL;
  memset(stats, 0, sizeof *stats);
  if (t->nreplay < 1)
    return heron_error_set(err, HERON_EINVAL,
                           "target replay needs --replay LOG");
  heron__replay *rp = calloc(1, sizeof *rp);
  if (!rp)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  rp->task = t;
  rp->sp = heron_task_space(t);
  rp->nvars = heron_space_nvars(rp->sp);
  rp->nfeat = heron_space_nfeatures(rp->sp);
  /* Completing a record's knobs must not depend on anything but the seed. */
  heron_rng rng;
  heron_rng_seed(&rng, seed);
  train tr;
  memset(&tr, 0, sizeof tr);
  /* The model is opened before the (slow) reading, so a missing plugin
   * fails at once. */
  int rc = open_model(rp, seed, err);
  for (int i = 0; !rc && i < t->nreplay; i++, stats->logs++)
    rc = read_log(rp, t->replay[i], &rng, &tr, stats, err);
  stats->distinct = (int)rp->used;
  stats->ok = tr.n;
  if (!rc && tr.n < 2)
    rc = heron_error_set(err, HERON_EINVAL,
                         "target replay: the logs hold %d ok record%s valid "
                         "in this space (%d read, %d skipped); the surrogate "
                         "model needs at least 2",
                         tr.n, tr.n == 1 ? "" : "s", stats->records,
                         stats->skipped);
  if (!rc) {
    qsort(tr.build, (size_t)tr.nb, sizeof *tr.build, cmp_double);
    rp->median_build_s =
        tr.nb % 2 ? tr.build[tr.nb / 2]
                  : 0.5 * (tr.build[tr.nb / 2 - 1] + tr.build[tr.nb / 2]);
    stats->median_build_s = rp->median_build_s;
    rc = heron__model_fit(rp->model, tr.X, tr.y, tr.n, rp->nfeat, err);
  }
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

int heron__replay_measure(heron__replay *rp, const int64_t *cfgs, int n,
                          heron_measurement *out, char **errors,
                          heron_error *err) {
  /* Recorded configs first; the others are predicted in one call. */
  int *miss = malloc((size_t)(n > 0 ? n : 1) * sizeof *miss);
  if (!miss)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  int nmiss = 0;
  for (int i = 0; i < n; i++) {
    const int64_t *cfg = cfgs + (size_t)i * (size_t)rp->nvars;
    answer *a = slot(rp, heron__config_key(rp->sp, cfg));
    errors[i] = NULL;
    if (!a->key) {
      miss[nmiss++] = i;
      continue;
    }
    out[i] = a->m;
    out[i].config = cfg;
    errors[i] = a->m.error[0] ? strdup(a->m.error) : NULL;
  }
  int rc = HERON_OK;
  if (nmiss > rp->xcap) {
    double *nx = realloc(rp->X, (size_t)nmiss * (size_t)rp->nfeat * sizeof *nx);
    if (!nx)
      rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
    else {
      rp->X = nx;
      rp->xcap = nmiss;
    }
  }
  double *pred =
      rc ? NULL : malloc((size_t)(nmiss > 0 ? nmiss : 1) * sizeof *pred);
  if (!rc && !pred)
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  for (int j = 0; !rc && j < nmiss; j++)
    heron_space_features(rp->sp, cfgs + (size_t)miss[j] * (size_t)rp->nvars,
                         rp->X + (size_t)j * (size_t)rp->nfeat);
  if (!rc && nmiss > 0)
    rc = heron_model_predict(rp->model, rp->X, nmiss, rp->nfeat, pred, err);
  double flops = heron_task_flops(rp->task);
  for (int j = 0; !rc && j < nmiss; j++) {
    heron_measurement *m = &out[miss[j]];
    memset(m, 0, sizeof *m);
    m->config = cfgs + (size_t)miss[j] * (size_t)rp->nvars;
    m->status = HERON_MEAS_OK;
    m->gflops = exp(pred[j]);
    /* A prediction out of any sane range would poison the history. */
    if (!isfinite(m->gflops) || m->gflops <= 0)
      m->gflops = 1e-9;
    m->seconds = flops / (m->gflops * 1e9);
    m->build_seconds = rp->median_build_s;
    m->simulated = 1;
  }
  free(pred);
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
  free(rp->X);
  free(rp);
}
