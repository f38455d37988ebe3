/* core/replay/replay.c - the store of recorded measurements: answers from
 * recorded logs, and from a surrogate model fitted on them for configs no
 * log holds (replay.h). */
#include "core/replay/replay.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/measure/timing.h"
#include "core/plugin/param_table.h"
#include "core/plugin/plugin.h"
#include "core/record/record.h"
#include "core/space/t1.h"
#include "core/task/task.h"
#include "core/util/util.h"

/* One answer a log gives: the chosen record of a config key. */
typedef struct answer {
  uint64_t key;        /* heron__config_key; 0 marks an empty slot */
  heron_measurement m; /* config NULL; error owned (malloc'ed) */
  double cost;         /* simulated seconds that measuring it took */
  int rec;             /* T4 and cache files: the record's number (1-based) */
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
  /* A T1 task's T4 file measured the whole space: no surrogate, and a
   * config it lacks is an error naming the file. */
  int full;
  const char *full_path;
  /* Comparing a T1 space with its T4 file: the records whose config is not
   * in the space, counted, the first few written out. */
  int collect;
  long long noutside;
  heron__buf outside;
};

static void config_text(const heron_space *sp, const int64_t *cfg, char *buf,
                        size_t cap);

/* ---- Reading lines, plain or gzip -------------------------------------- */

/* Opens a log or T4 file (`what` names it in errors): a regular file only,
 * so a FIFO never blocks and a device never streams (record.h). */
static int open_log(const char *path, const char *what, gzFile *f,
                    heron_error *err) {
  *f = NULL;
  int rc = heron__input_check(path, what, err);
  if (rc)
    return rc;
  errno = 0;
  *f = gzopen(path, "rb");
  if (!*f)
    return heron_error_set(err,
                           errno == ENOMEM ? HERON_ENOMEM : HERON_ENOTFOUND,
                           "%s %s: cannot open: %s", what, path,
                           errno ? strerror(errno) : "zlib failed");
  return HERON_OK;
}

/* The error of heron__log_gets's result got (< 0) reading `path`. */
static int gets_error(int got, const char *path, int lineno, heron_error *err) {
  if (got == HERON__LONG_LINE)
    return heron_error_set(err, HERON_EINVAL,
                           "%s:%d: a line longer than the limit of %zu MiB "
                           "(HERON_MAX_LINE_MB)",
                           path, lineno + 1, heron__max_line_bytes() >> 20);
  if (got == HERON__TOO_BIG)
    return heron_error_set(err, HERON_EINVAL,
                           "replay log %s holds (inflates to) more than the "
                           "limit of %zu MiB (HERON_MAX_INPUT_MB)",
                           path, heron__max_input_bytes() >> 20);
  return heron_error_set(err, HERON_ENOMEM, "out of memory reading %s", path);
}

static int blank(const char *s) { return s[strspn(s, " \t\r")] == '\0'; }

int heron__replay_first_key(const char *path, char *key, size_t cap,
                            heron_error *err) {
  gzFile f;
  int rc = open_log(path, "replay log", &f, err);
  if (rc)
    return rc;
  char *line = NULL;
  size_t lcap = 0;
  int term = 0, got, lineno = 0;
  rc =
      heron_error_set(err, HERON_EPARSE, "replay log %s holds no record", path);
  while ((got = heron__log_gets(f, &line, &lcap, &term)) > 0) {
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
  if (got < 0) {
    heron_error_clear(err);
    rc = gets_error(got, path, lineno, err);
  }
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
static int take(heron__replay *rp, uint64_t k, const heron_measurement *m,
                double cost) {
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
  a->cost = cost;
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

/* Reads every record of one log into the table and the training set. */
static int read_log(heron__replay *rp, const char *path, heron_rng *rng,
                    train *tr, heron__replay_stats *st, heron_error *err) {
  gzFile f;
  int rc = open_log(path, "replay log", &f, err);
  if (rc)
    return rc;
  char *line = NULL;
  size_t lcap = 0;
  int term = 0, got = 0, lineno = 0;
  int64_t *cfg = malloc((size_t)rp->nvars * sizeof *cfg);
  if (!cfg)
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  while (!rc && (got = heron__log_gets(f, &line, &lcap, &term)) > 0) {
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
    rc = heron__log_parse(o, rp->sp, rp->task->recorded_key, rng, &m, cfg,
                          &valid, NULL, lineno, path, err);
    st->records += rc == HERON_OK;
    /* An untimed record (compile-only, emulated) or one the environment
     * failed says nothing of the config: not an answer to replay. */
    if (rc == HERON_OK && (!valid || heron__log_flags(o, &m) != 0))
      st->skipped++;
    else if (rc == HERON_OK) {
      m.config = cfg;
      /* Answering stands for building it and running it (number x repeat
       * is 3 x 3 by default; a median over 3 repeats is the reported time,
       * so 3 x seconds is what its runs take). */
      double cost = m.build_seconds + 3.0 * m.seconds;
      if (take(rp, heron__config_key(rp->sp, cfg), &m, cost) != HERON_OK ||
          push_train(tr, rp->sp, rp->nfeat, &m) != HERON_OK)
        rc = heron_error_set(err, HERON_ENOMEM, "out of memory reading %s",
                             path);
    }
    json_decref(o);
  }
  if (!rc && got < 0)
    rc = gets_error(got, path, lineno, err);
  free(cfg);
  free(line);
  gzclose(f);
  return rc;
}

/* ---- T4 results and Kernel Tuner cache files --------------------------- */

/* 1 when `path` names a JSON document (".json" or ".json.gz": a T4 results
 * file or a Kernel Tuner cache file) rather than a JSON Lines log. */
int heron__replay_is_t4(const char *path) {
  size_t n = strlen(path);
  if (n > 3 && !strcmp(path + n - 3, ".gz"))
    n -= 3;
  return n > 5 && !strncmp(path + n - 5, ".json", 5);
}

/* jansson's reader callback over a gzFile: the document is parsed as it is
 * inflated, never held whole.  What it hands over is counted and scanned:
 * past heron__max_input_bytes() of text, or a string longer than
 * heron__max_line_bytes(), it stops with an error (record.h), so a
 * decompression bomb or one endless string costs no more than the limit. */
typedef struct feed {
  gzFile f;
  size_t total, max_total;
  size_t str, max_str; /* the length of the string being read */
  int in_str, esc;
  int over; /* 1: too much text, 2: a string too long */
} feed;

static size_t gz_feed(void *buf, size_t len, void *ctx) {
  feed *fd = ctx;
  if (len > (1u << 20))
    len = 1u << 20;
  int n = gzread(fd->f, buf, (unsigned)len);
  if (n < 0)
    return (size_t)-1;
  fd->total += (size_t)n;
  if (fd->total > fd->max_total) {
    fd->over = 1;
    return (size_t)-1;
  }
  const unsigned char *b = buf;
  for (int i = 0; i < n; i++) {
    if (!fd->in_str) {
      if (b[i] == '"') {
        fd->in_str = 1;
        fd->str = 0;
      }
    } else if (fd->esc) {
      fd->esc = 0;
    } else if (b[i] == '\\') {
      fd->esc = 1;
    } else if (b[i] == '"') {
      fd->in_str = 0;
    }
    if (fd->in_str && ++fd->str > fd->max_str) {
      fd->over = 2;
      return (size_t)-1;
    }
  }
  return (size_t)n;
}

/* Reads a whole file, plain or gzip-compressed, and parses it as JSON. */
static json_t *load_json_gz(const char *path, heron_error *err) {
  feed fd = {.max_total = heron__max_input_bytes(),
             .max_str = heron__max_line_bytes()};
  if (open_log(path, "T4 file", &fd.f, err))
    return NULL;
  json_error_t jerr;
  json_t *root = json_load_callback(gz_feed, &fd, 0, &jerr);
  int zerr = 0;
  const char *zmsg = gzerror(fd.f, &zerr);
  /* A limit passed is ours to tell; a read error zlib's (its message names
   * the file); a document that does not parse, jansson's. */
  if (!root && fd.over == 1)
    heron_error_set(err, HERON_EINVAL,
                    "T4 file %s holds (inflates to) more than the limit of "
                    "%zu MiB (HERON_MAX_INPUT_MB)",
                    path, fd.max_total >> 20);
  else if (!root && fd.over == 2)
    heron_error_set(err, HERON_EINVAL,
                    "T4 file %s: a string longer than the limit of %zu MiB "
                    "(HERON_MAX_LINE_MB), at byte %zu",
                    path, fd.max_str >> 20, fd.total);
  else if (!root && zerr < 0)
    heron_error_set(err, HERON_EPARSE, "T4 file %s: %s", path,
                    zmsg && *zmsg ? zmsg : "cannot inflate");
  else if (!root)
    heron_error_set(err, HERON_EPARSE, "%s: line %d, column %d: %s", path,
                    jerr.line, jerr.column,
                    jerr.text[0] ? jerr.text : "not a JSON document");
  gzclose(fd.f);
  return root;
}

int heron__replay_t4_task(const char *path, char *key, size_t cap,
                          heron_error *err) {
  json_t *root = load_json_gz(path, err);
  if (!root)
    return err ? err->code : HERON_EPARSE;
  const char *task = json_string_value(
      json_object_get(json_object_get(root, "metadata"), "task"));
  int rc = HERON_OK;
  if (task)
    snprintf(key, cap, "%s", task);
  else
    rc = heron_error_set(err, HERON_EPARSE,
                         "%s names no heron task (metadata.task): a T4 file "
                         "of another tuner is replayed with the T1 file of "
                         "its space (--t1 T1.json --t4 %s)",
                         path, path);
  json_decref(root);
  return rc;
}

/* Milliseconds per unit of a time unit's name; 0 for a name it does not
 * know.  T4 files write milliseconds unless they say otherwise (Kernel
 * Tuner writes "miliseconds", a spelling kept); the T4 schema itself names
 * no unit, so these are the ones accepted, and anything else ("hours", a
 * typo) is refused rather than read as milliseconds. */
static double ms_per_unit(const char *u) {
  static const struct {
    const char *name;
    double ms;
  } units[] = {{"milliseconds", 1}, {"miliseconds", 1},
               {"ms", 1},           {"seconds", 1e3},
               {"s", 1e3},          {"microseconds", 1e-3},
               {"us", 1e-3},        {"nanoseconds", 1e-6},
               {"ns", 1e-6}};
  for (size_t i = 0; i < sizeof units / sizeof *units; i++)
    if (!strcmp(u, units[i].name))
      return units[i].ms;
  return 0;
}

#define KNOWN_UNITS "ms, s, us, ns, or spelt out"

/* *ms: milliseconds per unit of the file's metadata.timeunit (1 when it
 * has none); an error naming the file for a unit it does not know. */
static int t4_ms_per_unit(const json_t *root, const char *path, double *ms,
                          heron_error *err) {
  const json_t *u =
      json_object_get(json_object_get(root, "metadata"), "timeunit");
  *ms = 1.0;
  if (!u)
    return HERON_OK;
  if (json_is_string(u) && (*ms = ms_per_unit(json_string_value(u))) > 0)
    return HERON_OK;
  int str = json_is_string(u);
  return heron_error_set(err, HERON_EPARSE,
                         "T4 file %s: metadata.timeunit %s%.40s%s is not a "
                         "time unit it knows (" KNOWN_UNITS ")",
                         path, str ? "\"" : "",
                         str ? json_string_value(u) : "(not a string)",
                         str ? "\"" : "");
}

/* A recorded time: *out the member `key` of o (0 when absent); an error
 * naming the record when it is there but not a finite number >= 0 (a
 * negative compile time would make the run's elapsed time go backwards). */
static int time_value(const json_t *j, const char *what, const char *key,
                      double *out, heron_error *err) {
  *out = 0;
  if (!j)
    return HERON_OK;
  if (json_is_number(j) && isfinite(json_number_value(j)) &&
      json_number_value(j) >= 0) {
    *out = json_number_value(j);
    return HERON_OK;
  }
  char *txt = json_dumps(j, JSON_ENCODE_ANY);
  heron_error_set(err, HERON_EPARSE,
                  "%s: %s is %.30s, not a time (a finite number >= 0)", what,
                  key, txt ? txt : "?");
  free(txt);
  return HERON_EPARSE;
}

static int get_time(const json_t *o, const char *key, const char *what,
                    double *out, heron_error *err) {
  return time_value(json_object_get(o, key), what, key, out, err);
}

/* A recorded failure, T4's "invalidity" or a Kernel Tuner cache's error
 * string, as a status; -1 for a config the restrictions exclude (not an
 * answer: the space never proposes it). */
static int failure_status(const char *what) {
  if (!strcmp(what, "compile") || !strcmp(what, "CompilationFailedConfig"))
    return HERON_MEAS_COMPILE_ERROR;
  if (!strcmp(what, "timeout"))
    return HERON_MEAS_TIMEOUT;
  if (!strcmp(what, "correctness") || !strcmp(what, "incorrect"))
    return HERON_MEAS_WRONG_RESULT;
  if (!strcmp(what, "constraints") || !strcmp(what, "InvalidConfig"))
    return -1;
  return HERON_MEAS_RUNTIME_ERROR;
}

/* The config of a record's parameter object: through the T1 file's
 * parameters for a T1 task, else by the space's knob names (a T4 file heron
 * exported: every knob named, values integers).  0 with the record skipped
 * (*skip) when it does not map; a T1 task's record that does not map is
 * an error, since its file must be the space's. */
static int record_config(heron__replay *rp, const json_t *conf,
                         const char *what, int64_t *cfg, int *skip,
                         heron_error *err) {
  *skip = 0;
  const heron__t1 *t1 = rp->task->t1;
  if (t1)
    return heron__t1_config(t1, rp->sp, conf, cfg, what, err);
  for (int v = 0; v < rp->nvars; v++) {
    const json_t *j = json_object_get(conf, heron_space_var_name(rp->sp, v));
    cfg[v] = json_is_integer(j) ? json_integer_value(j) : HERON_UNSET;
    if (heron_space_var_is_knob(rp->sp, v) && cfg[v] == HERON_UNSET) {
      *skip = 1;
      return HERON_OK;
    }
  }
  return HERON_OK;
}

/* Takes one record: cfg, its status, objective in ms (ok only), compile
 * and overhead ms; the cost counts all of them, as the methodology's
 * simulated time does. */
static int take_t4(heron__replay *rp, int64_t *cfg, int status, double obj_ms,
                   double compile_ms, double other_ms, const char *error,
                   int rec, const char *what, train *tr,
                   heron__replay_stats *st, heron_error *err) {
  /* The remaining auxiliary variables are completed by validation, which
   * must not move a knob. */
  int64_t *full = malloc((size_t)rp->nvars * sizeof *full);
  if (!full)
    return HERON_ENOMEM;
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  heron_error verr;
  heron_error_clear(&verr);
  int rc = heron_space_validate(rp->sp, &rng, cfg, full, &verr);
  int moved = 0;
  for (int v = 0; rc == HERON_OK && v < rp->nvars; v++)
    moved |= heron_space_var_is_knob(rp->sp, v) && full[v] != cfg[v];
  if (rc != HERON_OK || moved) {
    if (rp->collect && rp->noutside++ < 10) {
      char text[400];
      config_text(rp->sp, cfg, text, sizeof text);
      heron__buf_printf(&rp->outside,
                        "  in the T4 file, not in the space: %s\n", text);
    }
    free(full);
    st->skipped++;
    return HERON_OK;
  }
  heron_measurement m;
  memset(&m, 0, sizeof m);
  m.config = full;
  m.status = status;
  m.error = error;
  m.build_seconds = compile_ms * 1e-3;
  if (status == HERON_MEAS_OK) {
    m.seconds = obj_ms * 1e-3;
    m.gflops =
        m.seconds > 0 ? heron_task_flops(rp->task) / m.seconds * 1e-9 : 0;
  }
  double cost = (compile_ms + other_ms) * 1e-3;
  /* A file lists each configuration once (a tuner measures a config once
   * and answers it again from its cache): two records of one config, say
   * a failure and a 0.001 ms success, leave no way to tell which is true,
   * so the file is refused naming both. */
  uint64_t key = heron__config_key(rp->sp, full);
  if (grow(rp) != HERON_OK) {
    free(full);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  const answer *dup = slot(rp, key);
  if (dup->key) {
    free(full);
    return heron_error_set(err, HERON_EPARSE,
                           "%s repeats record %d's configuration (each "
                           "must be listed once)",
                           what, dup->rec);
  }
  rc = take(rp, key, &m, cost);
  if (rc == HERON_OK)
    slot(rp, key)->rec = rec;
  /* A whole measured space trains no surrogate. */
  if (rc == HERON_OK && !rp->full)
    rc = push_train(tr, rp->sp, rp->nfeat, &m);
  free(full);
  if (rc)
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  return rc;
}

/* T4 (results[]: configuration, times{compilation, framework,
 * search_algorithm, validation, runtimes[]}, invalidity, measurements[]
 * with the "time" objective) or a Kernel Tuner cache file (cache{key:
 * {params..., time, times[], compile_time, benchmark_time, framework_time,
 * verification_time}}; failures as strings in "time"). */
static int read_t4(heron__replay *rp, const char *path, train *tr,
                   heron__replay_stats *st, heron_error *err) {
  json_t *root = load_json_gz(path, err);
  if (!root)
    return err ? err->code : HERON_EPARSE;
  const json_t *results = json_object_get(root, "results");
  const json_t *cache = json_object_get(root, "cache");
  int rc = HERON_OK;
  int64_t *cfg = malloc((size_t)rp->nvars * sizeof *cfg);
  if (!cfg)
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  else if (!json_is_array(results) && !json_is_object(cache))
    rc = heron_error_set(err, HERON_EPARSE,
                         "%s is neither a T4 results file (\"results\") nor "
                         "a Kernel Tuner cache file (\"cache\")",
                         path);
  double unit = 1;
  if (!rc && json_is_array(results))
    rc = t4_ms_per_unit(root, path, &unit, err);
  size_t i;
  const json_t *r;
  if (!rc && json_is_array(results))
    json_array_foreach(results, i, r) {
      char what[4200];
      snprintf(what, sizeof what, "%s: result %zu", path, i + 1);
      st->records++;
      int skip;
      rc = record_config(rp, json_object_get(r, "configuration"), what, cfg,
                         &skip, err);
      if (rc)
        break;
      if (skip) {
        st->skipped++;
        continue;
      }
      const json_t *times = json_object_get(r, "times");
      const char *inv = json_string_value(json_object_get(r, "invalidity"));
      int status =
          !inv || !strcmp(inv, "correct") ? HERON_MEAS_OK : failure_status(inv);
      if (status < 0) {
        st->skipped++;
        continue;
      }
      /* The objective: the "time" measurement (in its own unit when it
       * names one), else the runtimes' mean.  Every time must be a finite
       * number >= 0; a failure's "time" measurement may be its reason. */
      double obj = NAN, obj_unit = unit, bench = 0, rt;
      const json_t *rts = json_object_get(times, "runtimes");
      size_t k;
      const json_t *x;
      int nrt = 0;
      char twhat[4300];
      if (rts && !json_is_array(rts)) {
        rc = heron_error_set(err, HERON_EPARSE,
                             "%s: times.runtimes is not a list", what);
        break;
      }
      json_array_foreach(rts, k, x) {
        char key[48];
        snprintf(key, sizeof key, "times.runtimes[%zu]", k);
        if ((rc = time_value(x, what, key, &rt, err)) != HERON_OK)
          break;
        bench += rt;
        nrt++;
      }
      if (rc)
        break;
      json_array_foreach(json_object_get(r, "measurements"), k, x) {
        const char *name = json_string_value(json_object_get(x, "name"));
        if (!name || strcmp(name, "time") != 0)
          continue;
        const json_t *v = json_object_get(x, "value");
        const char *u = json_string_value(json_object_get(x, "unit"));
        if (status != HERON_MEAS_OK && !json_is_number(v))
          continue;
        snprintf(twhat, sizeof twhat, "%s: measurement \"time\"", what);
        if ((rc = get_time(x, "value", twhat, &obj, err)) != HERON_OK)
          break;
        if (u && *u && !(obj_unit = ms_per_unit(u))) {
          rc = heron_error_set(err, HERON_EPARSE,
                               "%s: unit \"%.30s\" is not a time unit it "
                               "knows (" KNOWN_UNITS ")",
                               twhat, u);
          break;
        }
        if (!json_is_number(v))
          obj = NAN;
      }
      if (rc)
        break;
      if (!isfinite(obj) && nrt > 0) {
        obj = bench / nrt;
        obj_unit = unit;
      }
      if (status == HERON_MEAS_OK && !(isfinite(obj) && obj > 0)) {
        rc = heron_error_set(err, HERON_EPARSE,
                             "%s: a correct result without a positive time",
                             what);
        break;
      }
      double compile, fw, sa, val;
      if ((rc = time_value(json_object_get(times, "compilation"), what,
                           "times.compilation", &compile, err)) ||
          (rc = time_value(json_object_get(times, "framework"), what,
                           "times.framework", &fw, err)) ||
          (rc = time_value(json_object_get(times, "search_algorithm"), what,
                           "times.search_algorithm", &sa, err)) ||
          (rc = time_value(json_object_get(times, "validation"), what,
                           "times.validation", &val, err)))
        break;
      double other = fw + sa + val + bench;
      rc = take_t4(rp, cfg, status, obj * obj_unit, compile * unit,
                   other * unit, status == HERON_MEAS_OK ? "" : inv, (int)i + 1,
                   what, tr, st, err);
      if (rc)
        break;
    }
  const char *ckey;
  int ncache = 0;
  if (!rc && json_is_object(cache))
    json_object_foreach((json_t *)cache, ckey, r) {
      char what[4200];
      snprintf(what, sizeof what, "%s: cache entry \"%.60s\"", path, ckey);
      st->records++;
      ncache++;
      int skip;
      rc = record_config(rp, r, what, cfg, &skip, err);
      if (rc)
        break;
      if (skip) {
        st->skipped++;
        continue;
      }
      const json_t *t = json_object_get(r, "time");
      int status = json_is_number(t)   ? HERON_MEAS_OK
                   : json_is_string(t) ? failure_status(json_string_value(t))
                                       : HERON_MEAS_RUNTIME_ERROR;
      if (status < 0) {
        st->skipped++;
        continue;
      }
      /* A Kernel Tuner cache file's times are milliseconds; each must be
       * a finite number >= 0, an ok "time" above 0. */
      double obj = 0, compile, bt, ft, vt, stt;
      if (status == HERON_MEAS_OK &&
          ((rc = get_time(r, "time", what, &obj, err)) != HERON_OK ||
           !(obj > 0))) {
        if (!rc)
          rc = heron_error_set(err, HERON_EPARSE,
                               "%s: a correct result without a positive time",
                               what);
        break;
      }
      if ((rc = get_time(r, "compile_time", what, &compile, err)) ||
          (rc = get_time(r, "benchmark_time", what, &bt, err)) ||
          (rc = get_time(r, "framework_time", what, &ft, err)) ||
          (rc = get_time(r, "verification_time", what, &vt, err)) ||
          (rc = get_time(r, "strategy_time", what, &stt, err)))
        break;
      rc = take_t4(rp, cfg, status, obj, compile, bt + ft + vt + stt,
                   json_is_string(t) ? json_string_value(t) : "", ncache, what,
                   tr, st, err);
      if (rc)
        break;
    }
  free(cfg);
  json_decref(root);
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

static int open_store(const heron_task *t, uint64_t seed, int collect,
                      heron__replay **out, heron__replay_stats *stats,
                      heron_error *err);

int heron__replay_open(const heron_task *t, uint64_t seed, heron__replay **out,
                       heron__replay_stats *stats, heron_error *err) {
  return open_store(t, seed, 0, out, stats, err);
}

static int open_store(const heron_task *t, uint64_t seed, int collect,
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
  int rc = rp->full ? HERON_OK : open_model(rp, seed, err);
  for (int i = 0; !rc && i < t->nrecorded; i++, stats->logs++)
    rc = heron__replay_is_t4(t->recorded[i])
             ? read_t4(rp, t->recorded[i], &tr, stats, err)
             : read_log(rp, t->recorded[i], &rng, &tr, stats, err);
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
static void config_text(const heron_space *sp, const int64_t *cfg, char *buf,
                        size_t cap) {
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
    answer *a = slot(rp, heron__config_key(rp->sp, cfg));
    errors[i] = NULL;
    if (!a->key && rp->full) {
      char text[200];
      config_text(rp->sp, cfg, text, sizeof text);
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
    if (costs)
      costs[miss[j]] = m->build_seconds + 3.0 * m->seconds;
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
  heron__buf_free(&rp->outside);
  free(rp->X);
  free(rp);
}

HERON_API int heron_task_recorded_space(const heron_task *t, double **seconds,
                                        double **cost, int *n,
                                        heron_error *err) {
  *seconds = *cost = NULL;
  *n = 0;
  if (!t || !t->t1 || t->nrecorded < 1)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "task %s has no whole recorded space: only a T1 "
                           "task with its T4 file has",
                           t ? heron_task_key(t) : "(null)");
  heron__replay *rp = NULL;
  heron__replay_stats st;
  memset(&st, 0, sizeof st);
  int rc = heron__replay_open(t, 0, &rp, &st, err);
  if (rc)
    return rc;
  double *s = malloc((rp->used > 0 ? rp->used : 1) * sizeof *s);
  double *c = malloc((rp->used > 0 ? rp->used : 1) * sizeof *c);
  if (!s || !c) {
    free(s);
    free(c);
    heron__replay_free(rp);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  int k = 0;
  for (size_t i = 0; i < rp->cap; i++) {
    const answer *a = &rp->slots[i];
    if (!a->key)
      continue;
    s[k] = a->m.status == HERON_MEAS_OK ? a->m.seconds : NAN;
    c[k++] = a->cost;
  }
  heron__replay_free(rp);
  *seconds = s;
  *cost = c;
  *n = k;
  return HERON_OK;
}

/* Visits every combination of the T1 parameters' values (an odometer over
 * their lists) and sorts the valid ones into those the store answers and
 * those it lacks. */
static int compare_space(heron__replay *rp, long long *both,
                         long long *only_space, heron__buf *out,
                         heron_error *err) {
  const heron__t1 *t1 = rp->task->t1;
  double total = 1;
  for (int i = 0; i < t1->nparams; i++)
    total *= t1->params[i].nvals;
  if (total > 5e7)
    return heron_error_set(err, HERON_ERANGE,
                           "the T1 space has %.3g value combinations, too "
                           "many to enumerate (at most 5e7)",
                           total);
  int *pos = calloc((size_t)t1->nparams, sizeof *pos);
  int64_t *cfg = malloc((size_t)rp->nvars * sizeof *cfg);
  if (!pos || !cfg) {
    free(pos);
    free(cfg);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  for (;;) {
    for (int i = 0; i < t1->nparams; i++) {
      const heron__t1_param *p = &t1->params[i];
      cfg[p->var] = p->coded ? pos[i] : p->vals[pos[i]].i;
    }
    if (heron_space_violations(rp->sp, cfg, NULL, 0) == 0) {
      if (slot(rp, heron__config_key(rp->sp, cfg))->key) {
        (*both)++;
      } else if ((*only_space)++ < 10) {
        char text[400];
        config_text(rp->sp, cfg, text, sizeof text);
        heron__buf_printf(out, "  in the space, not in the T4 file: %s\n",
                          text);
      }
    }
    int i = t1->nparams - 1;
    while (i >= 0 && ++pos[i] == t1->params[i].nvals)
      pos[i--] = 0;
    if (i < 0)
      break;
  }
  free(pos);
  free(cfg);
  return HERON_OK;
}

HERON_API int heron_task_compare_recorded(const heron_task *t, long long *both,
                                          long long *only_space,
                                          long long *only_file, char **report,
                                          heron_error *err) {
  *both = *only_space = *only_file = 0;
  *report = NULL;
  if (!t || !t->t1 || t->nrecorded < 1)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "only a T1 task with its T4 file can be compared");
  heron__replay *rp = NULL;
  heron__replay_stats st;
  memset(&st, 0, sizeof st);
  int rc = open_store(t, 0, 1, &rp, &st, err);
  if (rc)
    return rc;
  heron__buf out = {0};
  rc = compare_space(rp, both, only_space, &out, err);
  *only_file = rp->noutside;
  if (!rc) {
    if (*only_space > 10)
      heron__buf_printf(&out, "  ... %lld more in the space only\n",
                        *only_space - 10);
    if (rp->outside.data)
      heron__buf_puts(&out, rp->outside.data);
    if (*only_file > 10)
      heron__buf_printf(&out, "  ... %lld more in the T4 file only\n",
                        *only_file - 10);
    *report = heron__buf_take(&out);
    if (!*report && !(*report = strdup("")))
      rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  heron__buf_free(&out);
  heron__replay_free(rp);
  return rc;
}
