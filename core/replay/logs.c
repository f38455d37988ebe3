/* core/replay/logs.c - reading the store's JSON Lines logs, plain or
 * gzip-compressed (store.h), and what replay.h offers of them alone: the
 * first record's task key, the sidecar hardware description. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/record/record.h"
#include "core/replay/store.h"
#include "core/task/task.h"
#include "core/util/util.h"

/* ---- Reading lines, plain or gzip -------------------------------------- */

/* Opens a log or T4 file (`what` names it in errors): a regular file only,
 * so a FIFO never blocks and a device never streams (record.h). */
int heron__replay_open_file(const char *path, const char *what, gzFile *f,
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
  int rc = heron__replay_open_file(path, "replay log", &f, err);
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

/* Reads every record of one log into the table and the training set. */
int heron__replay_read_log(heron__replay *rp, const char *path, heron_rng *rng,
                           train *tr, heron__replay_stats *st,
                           heron_error *err) {
  gzFile f;
  int rc = heron__replay_open_file(path, "replay log", &f, err);
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
      if (heron__replay_take(rp, heron__config_key(rp->sp, cfg), &m, cost) !=
              HERON_OK ||
          heron__replay_train_push(tr, rp->sp, rp->nfeat, &m) != HERON_OK)
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
