/* tools/heron_bench_t4.c - heron-bench --export-t4: one log in the T4
 * results format. */
#include <errno.h>
#include <string.h>

#include "heron_bench.h"

/* ---- T4 export ------------------------------------------------------------
 * The T4 results format (schema_version 1.0.0) of the auto-tuning community's
 * TuningSchema, which Kernel Tuner and KTT read. */

static const char *t4_invalidity(const char *status) {
  static const char *const map[][2] = {{"ok", "correct"},
                                       {"compile_error", "compile"},
                                       {"runtime_error", "runtime"},
                                       {"wrong_result", "correctness"},
                                       {"timeout", "timeout"},
                                       {"invalid", "constraints"}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (!strcmp(status, map[i][0]))
      return map[i][1];
  return NULL;
}

int export_t4(const char *log, const char *out) {
  FILE *f = fopen(log, "r");
  if (!f) {
    fprintf(stderr, "%s: --export-t4: cannot read '%s': %s\n", cli_prog(), log,
            strerror(errno));
    return CLI_EXIT_FAILURE;
  }
  json_t *results = json_array();
  char *line = NULL;
  size_t cap = 0;
  int lineno = 0, status = CLI_EXIT_OK;
  const char *task_key = NULL;
  while (getline(&line, &cap, f) > 0) {
    lineno++;
    if (strspn(line, " \t\r\n") == strlen(line))
      continue;
    json_error_t jerr;
    json_t *o = json_loads(line, 0, &jerr);
    json_t *cfg = o ? json_object_get(o, "config") : NULL;
    const char *st = o ? json_string_value(json_object_get(o, "status")) : NULL;
    const char *inv = st ? t4_invalidity(st) : NULL;
    if (!o || !json_is_object(cfg) || !inv) {
      fprintf(stderr, "%s: --export-t4: %s line %d: %s\n", cli_prog(), log,
              lineno,
              !o ? jerr.text
              : !json_is_object(cfg)
                  ? "no \"config\" object"
                  : "no \"status\" of ok, compile_error, runtime_error, "
                    "wrong_result, timeout or invalid");
      json_decref(o);
      status = CLI_EXIT_FAILURE;
      break;
    }
    int ok = !strcmp(st, "ok");
    double ms = 1e3 * json_number_value(json_object_get(o, "seconds"));
    double gflops = json_number_value(json_object_get(o, "gflops"));
    json_t *r = json_object();
    const char *when = json_string_value(json_object_get(o, "time"));
    json_object_set_new(r, "timestamp", json_string(when ? when : ""));
    json_object_set(r, "configuration", cfg);
    /* The heron task the log is of: replaying this file as a heron task
     * (--target replay --replay FILE) checks it, as it checks a log's. */
    const char *task = json_string_value(json_object_get(o, "task"));
    if (task && !task_key)
      task_key = cli_strdup(task);
    json_t *times = json_object();
    json_object_set_new(times, "compilation",
                        json_real(1e3 * json_number_value(json_object_get(
                                            o, "build_seconds"))));
    json_t *runtimes = json_array();
    if (ok)
      json_array_append_new(runtimes, json_real(ms));
    json_object_set_new(times, "runtimes", runtimes);
    json_object_set_new(r, "times", times);
    json_object_set_new(r, "invalidity", json_string(inv));
    json_object_set_new(r, "correctness", json_integer(ok));
    json_t *meas = json_array();
    json_t *mt = json_object(), *mg = json_object();
    json_object_set_new(mt, "name", json_string("time"));
    json_object_set_new(mt, "value", json_real(ok ? ms : 0));
    json_object_set_new(mt, "unit", json_string("ms"));
    json_object_set_new(mg, "name", json_string("gflops"));
    json_object_set_new(mg, "value", json_real(ok ? gflops : 0));
    json_object_set_new(mg, "unit", json_string("GFLOP/s"));
    json_array_append_new(meas, mt);
    json_array_append_new(meas, mg);
    json_object_set_new(r, "measurements", meas);
    json_t *obj = json_array();
    json_array_append_new(obj, json_string("time"));
    json_object_set_new(r, "objectives", obj);
    json_array_append_new(results, r);
    json_decref(o);
  }
  free(line);
  fclose(f);
  if (status == CLI_EXIT_OK) {
    json_t *root = json_object();
    json_object_set_new(root, "schema_version", json_string("1.0.0"));
    json_object_set_new(root, "metadata",
                        json_pack("{s:s, s:s}", "timeunit", "milliseconds",
                                  "task", task_key ? task_key : ""));
    json_object_set_new(root, "results", results);
    results = NULL;
    if (json_dump_file(root, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0) {
      fprintf(stderr, "%s: --t4-out: cannot write '%s'\n", cli_prog(), out);
      status = CLI_EXIT_FAILURE;
    }
    json_decref(root);
  }
  json_decref(results);
  return status;
}
