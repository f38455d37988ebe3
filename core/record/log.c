/* core/record/log.c - the JSON Lines log: one measurement per line, written
 * with jansson, and read back for --resume. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/record/record.h"
#include "core/space/builder.h"
#include "core/util/util.h"

static const char *const status_names[] = {
    "ok",      "compile_error", "runtime_error",
    "timeout", "wrong_result",  "invalid"};
#define NSTATUS ((int)(sizeof status_names / sizeof status_names[0]))

HERON_API const char *heron_meas_status_name(int status) {
  return (status >= 0 && status < NSTATUS) ? status_names[status] : "unknown";
}

HERON_API int heron_meas_status_parse(const char *name) {
  for (int i = 0; name && i < NSTATUS; i++)
    if (!strcmp(name, status_names[i]))
      return i;
  return HERON_EPARSE;
}

/* JSON has no NaN or infinity: a non-finite figure is written as 0. */
static double finite_or_zero(double x) { return isfinite(x) ? x : 0.0; }

int heron__log_write(FILE *f, const heron_space *sp, const heron__log_ctx *c,
                     const heron_measurement *m, heron_error *err) {
  json_t *cfg = json_object();
  for (int i = 0; i < heron_space_nknobs(sp); i++) {
    int v = heron_space_knob(sp, i);
    json_object_set_new(cfg, heron_space_var_name(sp, v),
                        json_integer((json_int_t)m->config[v]));
  }
  char key[32] = "", when[32];
  heron_space_key(sp, m->config, key, sizeof key);
  heron__iso_time(when, sizeof when);
  json_t *o = json_object();
  json_object_set_new(o, "task", json_string(c->task_key));
  json_object_set_new(o, "trial", json_integer(m->trial));
  json_object_set_new(o, "config", cfg);
  json_object_set_new(o, "key", json_string(key));
  json_object_set_new(o, "status",
                      json_string(heron_meas_status_name(m->status)));
  json_object_set_new(o, "seconds", json_real(finite_or_zero(m->seconds)));
  json_object_set_new(o, "gflops", json_real(finite_or_zero(m->gflops)));
  json_object_set_new(o, "build_seconds",
                      json_real(finite_or_zero(m->build_seconds)));
  json_object_set_new(o, "max_error", json_real(finite_or_zero(m->max_error)));
  json_object_set_new(o, "error", json_string(m->error ? m->error : ""));
  json_object_set_new(o, "strategy", json_string(c->strategy));
  json_object_set_new(o, "seed", json_integer((json_int_t)c->seed));
  json_object_set_new(o, "simulated", json_boolean(m->simulated));
  /* Only where they hold, so ordinary lines stay as they were. */
  if (heron_space_sampler(sp, NULL, NULL) == HERON_SAMPLER_UNIFORM)
    json_object_set_new(o, "sampler", json_string("uniform"));
  if (c->untimed && m->status == HERON_MEAS_OK)
    json_object_set_new(o, "untimed", json_true());
  if (c->env_failure)
    json_object_set_new(o, "cause", json_string("environment"));
  /* ptxas statistics exist only for cuda builds; cpu lines stay as they
   * were, so their logs do not change. */
  if (c->build_stats) {
    json_object_set_new(o, "regs", json_integer(m->regs));
    json_object_set_new(o, "spill_bytes", json_integer(m->spill_bytes));
    json_object_set_new(o, "smem_bytes",
                        json_integer((json_int_t)m->smem_bytes));
  }
  if (c->hardware)
    json_object_set_new(o, "hardware", json_string(c->hardware));
  /* Seconds since the run started (simulated for a replay run): what
   * convergence against wall time is plotted from. */
  json_object_set_new(o, "elapsed", json_real(finite_or_zero(c->elapsed)));
  json_object_set_new(o, "time", json_string(when));
  char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  if (!line)
    return heron_error_set(err, HERON_ENOMEM, "out of memory writing the log");
  int bad = fputs(line, f) < 0 || fputc('\n', f) == EOF;
  free(line);
  if (bad)
    return heron_error_set(err, HERON_EIO, "cannot write the log: %s",
                           strerror(errno));
  return HERON_OK;
}

/* Fills a measurement from one parsed line.  The config object names knobs;
 * auxiliary variables are recomputed by completing the knob values. */
int heron__log_parse(json_t *o, const heron_space *sp, const char *task_key,
                     heron_rng *rng, heron_measurement *m, int64_t *cfg,
                     int *complete, double *elapsed, int lineno,
                     const char *path, heron_error *err) {
  int ok_knobs = 1;
  const char *task = json_string_value(json_object_get(o, "task"));
  json_t *config = json_object_get(o, "config");
  json_t *trial = json_object_get(o, "trial");
  const char *status = json_string_value(json_object_get(o, "status"));
  if (!task || !json_is_object(config) || !json_is_integer(trial) || !status)
    return heron_error_set(err, HERON_EPARSE,
                           "%s:%d: a log line needs task, trial, config and "
                           "status",
                           path, lineno);
  if (strcmp(task, task_key) != 0)
    return heron_error_set(err, HERON_ETASK,
                           "%s:%d holds task '%s', but this run tunes '%s'",
                           path, lineno, task, task_key);
  int st = heron_meas_status_parse(status);
  if (st < 0)
    return heron_error_set(err, HERON_EPARSE, "%s:%d: unknown status '%s'",
                           path, lineno, status);
  int nvars = heron_space_nvars(sp);
  for (int v = 0; v < nvars; v++)
    cfg[v] = HERON_UNSET;
  const char *name;
  json_t *val;
  json_object_foreach(config, name, val) {
    int v = heron_space_find_var(sp, name);
    if ((v < 0 || !json_is_integer(val)) && complete) {
      /* A caller that can skip records (replay) counts this one as a
       * config that is not valid here. */
      ok_knobs = 0;
      continue;
    }
    if (v < 0 || !json_is_integer(val))
      return heron_error_set(err, HERON_EPARSE,
                             "%s:%d: config knob '%s' is not a knob of this "
                             "task's space or not an integer",
                             path, lineno, name);
    cfg[v] = (int64_t)json_integer_value(val);
  }
  /* A knob the line does not name was added after it was written: the
   * config takes the value that means the kernel it measured. */
  for (int k = 0; k < heron_space_nknobs(sp); k++) {
    int v = heron_space_knob(sp, k);
    int64_t absent;
    if (cfg[v] == HERON_UNSET && heron__space_absent(sp, v, &absent))
      cfg[v] = absent;
  }
  /* A config that no longer completes (another hardware description, say)
   * keeps its knob values; its aux variables stay unset and it is never
   * fed to a model because it cannot be valid here. */
  int64_t *full = malloc((size_t)nvars * sizeof *full);
  int valid = 0;
  if (full && ok_knobs &&
      heron_space_validate(sp, rng, cfg, full, NULL) == HERON_OK) {
    memcpy(cfg, full, (size_t)nvars * sizeof *cfg);
    valid = 1;
  }
  free(full);
  if (complete)
    *complete = valid;
  /* Optional: logs written before the field existed have none. */
  json_t *el = json_object_get(o, "elapsed");
  if (el && !json_is_number(el))
    return heron_error_set(err, HERON_EPARSE,
                           "%s:%d: \"elapsed\" must be a number of seconds",
                           path, lineno);
  if (elapsed)
    *elapsed = el ? json_number_value(el) : 0.0;
  memset(m, 0, sizeof *m);
  m->trial = (int)json_integer_value(trial);
  m->status = st;
  m->config = cfg;
  m->seconds = json_number_value(json_object_get(o, "seconds"));
  m->gflops = json_number_value(json_object_get(o, "gflops"));
  m->build_seconds = json_number_value(json_object_get(o, "build_seconds"));
  m->max_error = json_number_value(json_object_get(o, "max_error"));
  m->error = json_string_value(json_object_get(o, "error"));
  if (!m->error)
    m->error = "";
  m->simulated = json_is_true(json_object_get(o, "simulated"));
  /* Optional: absent from cpu lines and from logs older than the cuda
   * target; a present one must be a non-negative integer. */
  static const char *const stats[] = {"regs", "spill_bytes", "smem_bytes"};
  json_int_t sv[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    json_t *v = json_object_get(o, stats[i]);
    if (!v)
      continue;
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        (i < 2 && json_integer_value(v) > 0x7fffffff))
      return heron_error_set(err, HERON_EPARSE,
                             "%s:%d: \"%s\" must be a non-negative integer",
                             path, lineno, stats[i]);
    sv[i] = json_integer_value(v);
  }
  m->regs = (int)sv[0];
  m->spill_bytes = (int)sv[1];
  m->smem_bytes = (int64_t)sv[2];
  return HERON_OK;
}

int heron__log_flags(json_t *o, const heron_measurement *m) {
  int f = 0;
  /* An ok line without a time is untimed even without the field: logs of
   * compile-only runs older than it have such lines. */
  if (m->status == HERON_MEAS_OK &&
      (json_is_true(json_object_get(o, "untimed")) || !(m->seconds > 0)))
    f |= HERON__REC_UNTIMED;
  const char *cause = json_string_value(json_object_get(o, "cause"));
  if (cause && !strcmp(cause, "environment"))
    f |= HERON__REC_ENV;
  return f;
}

int heron__log_read(const char *path, const heron_space *sp,
                    const char *task_key, heron_history *h, heron_rng *rng,
                    int *dropped_tail, long *valid_bytes, heron_error *err) {
  return heron__log_read_resume(path, sp, task_key, h, rng, dropped_tail,
                                valid_bytes, NULL, NULL, err);
}

/* Appends x to the growing array *a of *n entries. */
static int push_double(double **a, int *n, int *cap, double x) {
  if (*n == *cap) {
    int nc = *cap ? *cap * 2 : 256;
    double *na = realloc(*a, (size_t)nc * sizeof *na);
    if (!na)
      return HERON_ENOMEM;
    *a = na;
    *cap = nc;
  }
  (*a)[(*n)++] = x;
  return HERON_OK;
}

/* Sets cfg aside in retry, once per config. */
static int set_aside_cfg(heron__log_retry *retry, const int64_t *cfg,
                         int nvars) {
  for (int i = 0; i < retry->n; i++)
    if (!memcmp(retry->cfgs + (size_t)i * (size_t)nvars, cfg,
                (size_t)nvars * sizeof *cfg))
      return HERON_OK;
  int64_t *grown = realloc(retry->cfgs, (size_t)(retry->n + 1) * (size_t)nvars *
                                            sizeof *grown);
  if (!grown)
    return HERON_ENOMEM;
  retry->cfgs = grown;
  memcpy(grown + (size_t)retry->n * (size_t)nvars, cfg,
         (size_t)nvars * sizeof *cfg);
  retry->n++;
  return HERON_OK;
}

/* Drops the configs set aside that the history measured after all. */
static void drop_measured(heron__log_retry *retry, const heron_space *sp,
                          const heron_history *h) {
  int nvars = heron_space_nvars(sp), keep = 0;
  for (int i = 0; i < retry->n; i++) {
    const int64_t *c = retry->cfgs + (size_t)i * (size_t)nvars;
    if (heron__history_has(h, heron__config_key(sp, c)))
      continue;
    memmove(retry->cfgs + (size_t)keep * (size_t)nvars, c,
            (size_t)nvars * sizeof *c);
    keep++;
  }
  retry->n = keep;
}

int heron__log_read_resume(const char *path, const heron_space *sp,
                           const char *task_key, heron_history *h,
                           heron_rng *rng, int *dropped_tail, long *valid_bytes,
                           double **elapsed, heron__log_retry *retry,
                           heron_error *err) {
  if (retry) {
    retry->cfgs = NULL;
    retry->n = 0;
  }
  int nel = 0, capel = 0;
  if (elapsed)
    *elapsed = NULL;
  char *text = NULL;
  size_t len = 0;
  int rc = heron__input_read(path, "log", &text, &len, err);
  if (rc)
    return rc;
  size_t maxline = heron__max_line_bytes();
  *dropped_tail = 0;
  *valid_bytes = 0;
  int64_t *cfg = malloc((size_t)heron_space_nvars(sp) * sizeof *cfg);
  if (!cfg) {
    free(text);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  char *line = text;
  for (int lineno = 1; rc == HERON_OK && *line; lineno++) {
    char *nl = strchr(line, '\n');
    int last = nl == NULL;
    if (nl)
      *nl = '\0';
    char *next = nl ? nl + 1 : line + strlen(line);
    if ((size_t)(next - line) > maxline) {
      rc = heron_error_set(err, HERON_EINVAL,
                           "%s:%d: a line longer than the limit of %zu MiB "
                           "(HERON_MAX_LINE_MB)",
                           path, lineno, maxline >> 20);
      break;
    }
    if (line[strspn(line, " \t\r")] == '\0') {
      line = next;
      *valid_bytes = (long)(next - text);
      continue;
    }
    json_error_t jerr;
    json_t *o = json_loads(line, 0, &jerr);
    if (!o || !json_is_object(o)) {
      json_decref(o);
      /* Only an unterminated last line can be the trace of a killed write. */
      if (last) {
        *dropped_tail = 1;
        break;
      }
      rc = heron_error_set(err, HERON_EPARSE, "%s:%d: not a JSON object: %s",
                           path, lineno, o ? "not an object" : jerr.text);
      break;
    }
    heron_measurement m;
    double el = 0;
    rc = heron__log_parse(o, sp, task_key, rng, &m, cfg, NULL, &el, lineno,
                          path, err);
    int flags = rc == HERON_OK ? heron__log_flags(o, &m) : 0;
    if (rc == HERON_OK && retry &&
        ((flags & HERON__REC_ENV) ||
         (retry->untimed && (flags & HERON__REC_UNTIMED)))) {
      if (set_aside_cfg(retry, cfg, heron_space_nvars(sp)) != HERON_OK)
        rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
    } else if (rc == HERON_OK) {
      /* m.trial stays the log's: with records set aside above, h->n + 1
       * would renumber the history, and the best trial a run reports would
       * not be the one its log holds. */
      if (!heron__history_add(h, &m, heron__config_key(sp, cfg)) ||
          (elapsed && push_double(elapsed, &nel, &capel, el) != HERON_OK))
        rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
    }
    json_decref(o);
    line = next;
    if (rc == HERON_OK)
      *valid_bytes = (long)(next - text);
  }
  free(cfg);
  free(text);
  if (rc && elapsed) {
    free(*elapsed);
    *elapsed = NULL;
  }
  if (rc && retry) {
    free(retry->cfgs);
    retry->cfgs = NULL;
    retry->n = 0;
  } else if (retry) {
    drop_measured(retry, sp, h);
  }
  return rc;
}

/* Log lines from a gzFile (record.h). */
int heron__log_gets(gzFile f, char **buf, size_t *cap, int *terminated) {
  size_t len = 0, maxline = heron__max_line_bytes();
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
    if ((size_t)gztell(f) > heron__max_input_bytes())
      return HERON__TOO_BIG;
    if (len > 0 && (*buf)[len - 1] == '\n') {
      (*buf)[len - 1] = '\0';
      *terminated = 1;
      return 1;
    }
    if (len + 1 < *cap) { /* the end of the file, without a newline */
      *terminated = 0;
      return 1;
    }
    if (len >= maxline)
      return HERON__LONG_LINE;
    char *nb = realloc(*buf, *cap * 2);
    if (!nb)
      return -1;
    *buf = nb;
    *cap *= 2;
  }
}

/* ---- Limits on input files (record.h) ------------------------------------ */

/* A limit in MiB from the environment variable `var`, else dflt. */
static size_t limit_mb(const char *var, size_t dflt) {
  const char *v = getenv(var);
  char *end;
  if (v && *v) {
    errno = 0;
    unsigned long long mb = strtoull(v, &end, 10);
    if (!errno && !*end && mb >= 1 && mb <= ((size_t)-1 >> 21))
      return (size_t)mb << 20;
  }
  return dflt << 20;
}

size_t heron__max_input_bytes(void) {
  return limit_mb("HERON_MAX_INPUT_MB", HERON__MAX_INPUT_MB);
}

size_t heron__max_line_bytes(void) {
  return limit_mb("HERON_MAX_LINE_MB", HERON__MAX_LINE_MB);
}

int heron__input_check(const char *path, const char *what, heron_error *err) {
  struct stat st;
  if (stat(path, &st) != 0)
    return heron_error_set(err, errno == ENOENT ? HERON_ENOTFOUND : HERON_EIO,
                           "%s %s: cannot open: %s", what, path,
                           strerror(errno));
  if (S_ISREG(st.st_mode))
    return HERON_OK;
  const char *kind = S_ISFIFO(st.st_mode)   ? "a FIFO"
                     : S_ISDIR(st.st_mode)  ? "a directory"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  return heron_error_set(err, HERON_EINVAL, "%s %s is %s, not a file", what,
                         path, kind);
}

int heron__input_read(const char *path, const char *what, char **text,
                      size_t *len, heron_error *err) {
  *text = NULL;
  *len = 0;
  int rc = heron__input_check(path, what, err);
  if (rc)
    return rc;
  FILE *f = fopen(path, "rb");
  if (!f)
    return heron_error_set(err, errno == ENOENT ? HERON_ENOTFOUND : HERON_EIO,
                           "%s %s: cannot open: %s", what, path,
                           strerror(errno));
  size_t max = heron__max_input_bytes(), cap = 4096, n = 0;
  char *buf = malloc(cap);
  /* Reads at most max + 1 bytes: one past the limit tells it is passed. */
  while (buf) {
    size_t want = cap - n - 1;
    if (want > max + 1 - n)
      want = max + 1 - n;
    size_t r = fread(buf + n, 1, want, f);
    n += r;
    if (r < want || n > max)
      break;
    char *p = realloc(buf, cap * 2);
    if (!p) {
      free(buf);
      buf = NULL;
    }
    buf = p;
    cap *= 2;
  }
  int ioerr = ferror(f);
  fclose(f);
  if (!buf)
    return heron_error_set(err, HERON_ENOMEM, "out of memory reading %s %s",
                           what, path);
  if (ioerr || n > max) {
    free(buf);
    if (ioerr)
      return heron_error_set(err, HERON_EIO, "%s %s: read error", what, path);
    return heron_error_set(err, HERON_EINVAL,
                           "%s %s is larger than the limit of %zu MiB "
                           "(HERON_MAX_INPUT_MB)",
                           what, path, max >> 20);
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return HERON_OK;
}
