/* core/replay/t4.c - reading T4 results files and Kernel Tuner cache
 * files into the store (store.h): records mapped onto the space by
 * parameter name, their simulated cost every time they list. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/record/record.h"
#include "core/replay/store.h"
#include "core/space/t1.h"
#include "core/task/task.h"
#include "core/util/util.h"

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
  if (heron__replay_open_file(path, "T4 file", &fd.f, err))
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
      heron__replay_config_text(rp->sp, cfg, text, sizeof text);
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
  if (heron__replay_grow(rp) != HERON_OK) {
    free(full);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  const answer *dup = heron__replay_slot(rp, key);
  if (dup->key) {
    free(full);
    return heron_error_set(err, HERON_EPARSE,
                           "%s repeats record %d's configuration (each "
                           "must be listed once)",
                           what, dup->rec);
  }
  rc = heron__replay_take(rp, key, &m, cost);
  if (rc == HERON_OK)
    heron__replay_slot(rp, key)->rec = rec;
  /* A whole measured space trains no surrogate. */
  if (rc == HERON_OK && !rp->full)
    rc = heron__replay_train_push(tr, rp->sp, rp->nfeat, &m);
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
int heron__replay_read_t4(heron__replay *rp, const char *path, train *tr,
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
      char what[HERON__PATH_BUF];
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
      char what[HERON__PATH_BUF];
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
