/* tools/heron_bench_logs.c - the logs of a comparison read back for the
 * report: their records, their names and the best so far. */
/* timegm. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heron_bench.h"

/* ---- Reading logs -------------------------------------------------------- */

static int parse_iso(const char *s, double *out) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  double frac = 0;
  int y, mo, d, h, mi;
  double sec;
  if (!s || sscanf(s, "%d-%d-%dT%d:%d:%lf", &y, &mo, &d, &h, &mi, &sec) != 6)
    return -1;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = (int)sec;
  frac = sec - (int)sec;
  *out = (double)timegm(&tm) + frac;
  return 0;
}

/* Is (g, t) ahead of top config c: more GFLOP/s, or as many from an
 * earlier trial? */
static int ahead_of(double g, int t, const top_config *c) {
  return g > c->gflops || (g == c->gflops && t < c->trial);
}

/* Counts config (compact JSON, malloc'd: taken over or freed) measured ok
 * at g GFLOP/s in trial t among lr's best distinct configs. */
static void keep_top(logrun *lr, char *config, double g, int t) {
  int at = 0;
  while (at < lr->ntop && strcmp(lr->top[at].config, config))
    at++;
  if (at < lr->ntop) { /* measured before: its best measurement counts */
    if (!ahead_of(g, t, &lr->top[at])) {
      free(config);
      return;
    }
    free(lr->top[at].config);
    memmove(&lr->top[at], &lr->top[at + 1],
            (size_t)(lr->ntop - at - 1) * sizeof *lr->top);
    lr->ntop--;
  }
  int pos = lr->ntop;
  while (pos > 0 && ahead_of(g, t, &lr->top[pos - 1]))
    pos--;
  if (pos == TOP_CONFIGS) {
    free(config);
    return;
  }
  if (lr->ntop == TOP_CONFIGS)
    free(lr->top[--lr->ntop].config);
  memmove(&lr->top[pos + 1], &lr->top[pos],
          (size_t)(lr->ntop - pos) * sizeof *lr->top);
  lr->top[pos] = (top_config){.config = config, .gflops = g, .trial = t};
  lr->ntop++;
}

static int cmp_rec(const void *a, const void *b) {
  const rec *x = a, *y = b;
  return (x->trial > y->trial) - (x->trial < y->trial);
}

/* Reads one log.  Elapsed time is the log's "elapsed" (seconds since the
 * run started) when it has one, else the distance of its "time" from the
 * first line's, which is as coarse as "time" (seconds, and a round's
 * lines share one). */
static int read_log(const char *path, logrun *lr, heron_error *err) {
  FILE *f = fopen(path, "r");
  if (!f)
    return heron_error_set(err, HERON_EIO, "cannot read '%s': %s", path,
                           strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  int lineno = 0, ncap = 0;
  double t0 = NAN;
  lr->n = 0;
  lr->r = NULL;
  lr->best = 0;
  lr->ntop = 0;
  lr->sampler = "heron";
  while (getline(&line, &cap, f) > 0) {
    lineno++;
    if (strspn(line, " \t\r\n") == strlen(line))
      continue;
    json_error_t jerr;
    json_t *o = json_loads(line, 0, &jerr);
    json_t *trial = o ? json_object_get(o, "trial") : NULL;
    json_t *status = o ? json_object_get(o, "status") : NULL;
    if (!o || !json_is_integer(trial) || !json_is_string(status)) {
      json_decref(o);
      free(line);
      fclose(f);
      return heron_error_set(err, HERON_EPARSE, "%s line %d: %s", path, lineno,
                             o ? "no integer \"trial\" or string \"status\""
                               : jerr.text);
    }
    if (lr->n == ncap) {
      ncap = ncap ? 2 * ncap : 64;
      lr->r = realloc(lr->r, (size_t)ncap * sizeof *lr->r);
      if (!lr->r) {
        json_decref(o);
        free(line);
        fclose(f);
        return heron_error_set(err, HERON_ENOMEM, "out of memory");
      }
    }
    rec *r = &lr->r[lr->n++];
    r->trial = (int)json_integer_value(trial);
    r->status = cli_strdup(json_string_value(status));
    r->ok = !strcmp(r->status, "ok");
    r->gflops = json_number_value(json_object_get(o, "gflops"));
    if (!r->ok || !isfinite(r->gflops))
      r->gflops = 0;
    r->seconds = r->ok ? json_number_value(json_object_get(o, "seconds")) : NAN;
    r->simulated = json_is_true(json_object_get(o, "simulated"));
    json_t *cfg = json_object_get(o, "config");
    char *cfg_text = r->ok && json_is_object(cfg)
                         ? json_dumps(cfg, JSON_COMPACT | JSON_ENCODE_ANY)
                         : NULL;
    if (cfg_text)
      keep_top(lr, cfg_text, r->gflops, r->trial);
    /* Written only for the uniform sampler (heron/space.h). */
    const char *smp = json_string_value(json_object_get(o, "sampler"));
    if (smp && !strcmp(smp, "uniform"))
      lr->sampler = "uniform";
    json_t *el = json_object_get(o, "elapsed");
    double when = 0;
    if (json_is_number(el)) {
      r->elapsed = json_number_value(el);
    } else if (parse_iso(json_string_value(json_object_get(o, "time")),
                         &when) == 0) {
      if (isnan(t0))
        t0 = when;
      r->elapsed = when - t0;
    } else {
      r->elapsed = 0;
    }
    json_decref(o);
  }
  free(line);
  fclose(f);
  qsort(lr->r, (size_t)lr->n, sizeof *lr->r, cmp_rec);
  double best = 0;
  for (int i = 0; i < lr->n; i++) {
    if (lr->r[i].gflops > best)
      best = lr->r[i].gflops;
    lr->r[i].best = best;
  }
  lr->best = best;
  return HERON_OK;
}

/* Splits "<task>__<strategy>[+<model>]__s<seed>.jsonl", each name
 * following CLI_NAME_RULE (as heron-bench writes them); 0 when the name fits.
 */
static int parse_log_name(const char *fname, logrun *lr) {
  size_t len = strlen(fname);
  if (len < 7 || strcmp(fname + len - 6, ".jsonl"))
    return -1;
  char *base = cli_printf("%.*s", (int)(len - 6), fname);
  /* A name holds no "__", so the first one ends the task and the next
   * the label. */
  char *ss = strstr(base, "__");
  char *last = ss ? strstr(ss + 2, "__") : NULL;
  if (!last || strstr(last + 2, "__") || last[2] != 's')
    return -1;
  char *end = NULL;
  errno = 0;
  unsigned long long seed = strtoull(last + 3, &end, 10);
  if (errno || !end || *end || !isdigit((unsigned char)last[3]))
    return -1;
  *ss = '\0';
  *last = '\0';
  const char *label = ss + 2;
  const char *plus = strchr(label, '+');
  size_t slen = plus ? (size_t)(plus - label) : strlen(label);
  if (!cli_name_ok(base, strlen(base)) || !cli_name_ok(label, slen) ||
      (plus && !cli_name_ok(plus + 1, strlen(plus + 1))))
    return -1;
  lr->task = base;
  lr->label = label;
  lr->seed = seed;
  lr->strategy = plus ? cli_printf("%.*s", (int)slen, label) : label;
  lr->model = plus ? plus + 1 : "none";
  return 0;
}

static int cmp_logrun(const void *a, const void *b) {
  const logrun *x = a, *y = b;
  int c = strcmp(x->task, y->task);
  if (!c)
    c = strcmp(x->label, y->label);
  if (!c)
    c = (x->seed > y->seed) - (x->seed < y->seed);
  return c;
}

/* ---- Statistics ---------------------------------------------------------- */

/* The best a run had reached by trial t / by elapsed time x. */
double best_at_trial(const logrun *lr, int t) {
  double b = 0;
  for (int i = 0; i < lr->n && lr->r[i].trial <= t; i++)
    b = lr->r[i].best;
  return b;
}

double best_at_time(const logrun *lr, double x) {
  double b = 0;
  for (int i = 0; i < lr->n; i++)
    if (lr->r[i].elapsed <= x && lr->r[i].best > b)
      b = lr->r[i].best;
  return b;
}

static void free_run(logrun *lr) {
  free(lr->r);
  for (int k = 0; k < lr->ntop; k++)
    free(lr->top[k].config);
}

void free_logs(logrun *runs, int n) {
  for (int i = 0; i < n; i++)
    free_run(&runs[i]);
  free(runs);
}

int read_all_logs(const char *out, logrun **runs_out, int *n_out) {
  const char *logdir = cli_printf("%s/logs", out);
  DIR *d = opendir(logdir);
  if (!d) {
    fprintf(stderr, "%s: --out: cannot read '%s': %s\n", cli_prog(), logdir,
            strerror(errno));
    return -1;
  }
  logrun *runs = NULL;
  int n = 0, cap = 0, bad = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    logrun lr;
    memset(&lr, 0, sizeof lr);
    size_t len = strlen(de->d_name);
    if (len < 6 || strcmp(de->d_name + len - 6, ".jsonl"))
      continue; /* not a log: "." and "..", a plot, an editor's file */
    if (parse_log_name(de->d_name, &lr) != 0) {
      /* Said, not silently left out of the comparison. */
      fprintf(stderr,
              "%s: '%s/%s' is left out of the report: a log is named "
              "<task>__<strategy>[+<model>]__s<seed>.jsonl, each name %s\n",
              cli_prog(), logdir, de->d_name, CLI_NAME_RULE);
      continue;
    }
    heron_error err;
    heron_error_clear(&err);
    int rc = read_log(cli_printf("%s/%s", logdir, de->d_name), &lr, &err);
    if (rc != HERON_OK) {
      cli_report(rc, &err, NULL);
      free_run(&lr);
      bad = 1;
      continue;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      logrun *grown = realloc(runs, (size_t)cap * sizeof *runs);
      if (!grown) {
        fprintf(stderr, "%s: out of memory\n", cli_prog());
        exit(CLI_EXIT_FAILURE);
      }
      runs = grown;
    }
    runs[n++] = lr;
  }
  closedir(d);
  qsort(runs, (size_t)n, sizeof *runs, cmp_logrun);
  *runs_out = runs;
  *n_out = n;
  return bad ? -1 : 0;
}
