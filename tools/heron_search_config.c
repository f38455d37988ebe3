/* tools/heron_search_config.c - heron-search --config: the settings of a
 * JSON file, laid down before the flags (its format is in --help). */
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heron_search.h"

/* ---- Config file --------------------------------------------------------- */

static const char *json_kind(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return "object";
  case JSON_ARRAY:
    return "array";
  case JSON_STRING:
    return "string";
  case JSON_INTEGER:
    return "integer";
  case JSON_REAL:
    return "number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "boolean";
  default:
    return "null";
  }
}

static const char *shortest_double(double x);

/* "got string", or the number itself when the type was right but the
 * value was not. */
static const char *got_text(const json_t *v) {
  if (json_is_integer(v))
    return cli_printf("%lld", (long long)json_integer_value(v));
  if (json_is_real(v)) {
    /* 16.0 stays "16.0": a number written with a point is no integer. */
    const char *t = shortest_double(json_real_value(v));
    return strpbrk(t, ".eEn") ? t : cli_printf("%s.0", t);
  }
  return json_kind(v);
}

static void cfg_fail(const settings *s, const char *key, const char *expected,
                     const json_t *v) {
  cli_usage("config %s: key '%s' must be %s, got %s", s->config_path, key,
            expected, got_text(v));
}

static const char *cfg_string(const settings *s, const char *key,
                              const json_t *v) {
  if (!json_is_string(v))
    cfg_fail(s, key, "a string", v);
  return json_string_value(v);
}

static long long cfg_int(const settings *s, const char *key, const json_t *v,
                         long long lo, long long hi) {
  char what[64];
  cli_int_range_text(lo, hi, what, sizeof what);
  if (!json_is_integer(v))
    cfg_fail(s, key, what, v);
  long long x = json_integer_value(v);
  if (x < lo || x > hi)
    cfg_fail(s, key, what, v);
  return x;
}

static double cfg_double(const settings *s, const char *key, const json_t *v,
                         double lo, double hi) {
  char what[64];
  cli_double_range_text(lo, hi, what, sizeof what);
  if (!json_is_number(v))
    cfg_fail(s, key, what, v);
  double x = json_number_value(v);
  if (!(x >= lo && x <= hi))
    cfg_fail(s, key, what, v);
  return x;
}

static int cfg_bool(const settings *s, const char *key, const json_t *v) {
  if (json_is_boolean(v))
    return json_is_true(v);
  if (json_is_integer(v) &&
      (json_integer_value(v) == 0 || json_integer_value(v) == 1))
    return (int)json_integer_value(v);
  cfg_fail(s, key, "true or false", v);
  return 0;
}

/* The shortest text that reads back as exactly `x` (0.1, not
 * 0.10000000000000001), as a plugin would expect to see it. */
static const char *shortest_double(double x) {
  for (int prec = 1; prec < 17; prec++) {
    const char *t = cli_printf("%.*g", prec, x);
    if (strtod(t, NULL) == x)
      return t;
  }
  return cli_printf("%.17g", x);
}

static void cfg_params(const settings *s, const char *key, const json_t *v,
                       param_list *out) {
  const char *k;
  json_t *x;
  if (!json_is_object(v))
    cfg_fail(s, key, "an object of parameter names to values", v);
  json_object_foreach((json_t *)v, k, x) {
    heron_param p = {cli_strdup(k), NULL};
    if (json_is_string(x))
      p.value = cli_strdup(json_string_value(x));
    else if (json_is_integer(x))
      p.value = cli_printf("%lld", (long long)json_integer_value(x));
    else if (json_is_real(x))
      p.value = shortest_double(json_real_value(x));
    else
      cfg_fail(s, cli_printf("%s.%s", key, k), "a string or a number", x);
    param_push(out, p);
  }
}

static const char *cfg_shape_array(const settings *s, const json_t *v) {
  size_t i;
  json_t *x;
  char *text = cli_strdup("");
  if (json_array_size(v) == 0)
    cfg_fail(s, "shape", "a non-empty array of positive integers", v);
  json_array_foreach(v, i, x) {
    long long d = cfg_int(s, cli_printf("shape[%zu]", i), x, 1, LLONG_MAX);
    text = cli_printf("%s%s%lld", text, i ? "," : "", d);
  }
  return text;
}

static void cfg_measure(settings *s, const json_t *m) {
  static const char known[] = "number, repeat, min_repeat_ms, timeout, "
                              "flush_cache, build_jobs, threads, cc, "
                              "work_dir, keep_files, compile_only, emulate";
  heron_measure_options *mo = &s->o.measure;
  const char *k;
  json_t *v;
  if (!json_is_object(m))
    cfg_fail(s, "measure", "an object", m);
  json_object_foreach((json_t *)m, k, v) {
    const char *key = cli_printf("measure.%s", k);
    if (!strcmp(k, "number"))
      mo->number = (int)cfg_int(s, key, v, 1, INT_MAX);
    else if (!strcmp(k, "repeat"))
      mo->repeat = (int)cfg_int(s, key, v, 1, INT_MAX);
    else if (!strcmp(k, "min_repeat_ms"))
      mo->min_repeat_ms = cfg_double(s, key, v, 0, INFINITY);
    else if (!strcmp(k, "timeout"))
      mo->timeout_s = cfg_double(s, key, v, DBL_MIN, INFINITY);
    else if (!strcmp(k, "flush_cache"))
      mo->flush_cache = cfg_bool(s, key, v);
    else if (!strcmp(k, "build_jobs"))
      mo->build_jobs = (int)cfg_int(s, key, v, 0, INT_MAX);
    else if (!strcmp(k, "threads"))
      mo->threads = (int)cfg_int(s, key, v, 0, INT_MAX);
    else if (!strcmp(k, "cc"))
      mo->cc = cfg_string(s, key, v);
    else if (!strcmp(k, "work_dir"))
      mo->work_dir = cfg_string(s, key, v);
    else if (!strcmp(k, "keep_files"))
      mo->keep_files = cfg_bool(s, key, v);
    else if (!strcmp(k, "compile_only"))
      mo->compile_only = cfg_bool(s, key, v);
    else if (!strcmp(k, "emulate"))
      mo->emulate = cfg_bool(s, key, v);
    else
      cli_usage("config %s: unknown key '%s' (known in measure: %s)",
                s->config_path, key, known);
  }
}

/* "replay": one log as a string, or an array of them. */
static void cfg_replay(settings *s, const char *k, json_t *v) {
  if (json_is_string(v)) {
    s->task.replay[0] = json_string_value(v);
    s->task.nreplay = 1;
    return;
  }
  if (!json_is_array(v) || json_array_size(v) == 0 ||
      json_array_size(v) > CLI_MAX_REPLAY)
    cfg_fail(s, k, "a log file name or a non-empty array of them", v);
  size_t i;
  json_t *x;
  s->task.nreplay = 0;
  json_array_foreach(v, i, x) {
    if (!json_is_string(x))
      cfg_fail(s, k, "a log file name or a non-empty array of them", v);
    s->task.replay[s->task.nreplay++] = json_string_value(x);
  }
}

void load_config(settings *s) {
  static const char known[] =
      "op, shape, dtype, target, hw, epilogue, prepack, sm, replay, "
      "strategy, "
      "strategy_params, "
      "model, "
      "model_params, trials, time_limit, plugin_timeout, seed, batch, log, "
      "resume, emit, measure";
  s->config = cli_json_load("--config", s->config_path);
  if (!json_is_object(s->config))
    cli_usage("config %s: the top level must be an object, got %s",
              s->config_path, json_kind(s->config));
  const char *k;
  json_t *v;
  json_object_foreach(s->config, k, v) {
    if (!strcmp(k, "op"))
      s->task.op = cfg_string(s, k, v);
    else if (!strcmp(k, "shape")) {
      if (json_is_string(v))
        s->task.shape = json_string_value(v);
      else if (json_is_array(v))
        s->task.shape = cfg_shape_array(s, v);
      else if (json_is_object(v))
        s->shape_object = v;
      else
        cfg_fail(s, k,
                 "an array of integers, a \"D1,D2,...\" string or an object "
                 "of named dimensions",
                 v);
    } else if (!strcmp(k, "dtype"))
      s->task.dtype = cfg_string(s, k, v);
    else if (!strcmp(k, "target"))
      s->task.target = cfg_string(s, k, v);
    else if (!strcmp(k, "hw"))
      s->task.hw = cfg_string(s, k, v);
    else if (!strcmp(k, "epilogue"))
      s->task.epilogue = cfg_string(s, k, v);
    else if (!strcmp(k, "prepack"))
      s->task.prepack = cfg_string(s, k, v);
    else if (!strcmp(k, "sm"))
      s->task.sm = cli_printf("%lld", (long long)cfg_int(s, k, v, 1, 1000));
    else if (!strcmp(k, "replay"))
      cfg_replay(s, k, v);
    else if (!strcmp(k, "strategy"))
      s->o.strategy = cfg_string(s, k, v);
    else if (!strcmp(k, "strategy_params"))
      cfg_params(s, k, v, &s->sparams);
    else if (!strcmp(k, "model"))
      s->o.model = cfg_string(s, k, v);
    else if (!strcmp(k, "model_params"))
      cfg_params(s, k, v, &s->mparams);
    else if (!strcmp(k, "trials"))
      s->o.trials = (int)cfg_int(s, k, v, 1, INT_MAX);
    else if (!strcmp(k, "time_limit"))
      s->o.time_limit_s = cfg_double(s, k, v, 0, INFINITY);
    else if (!strcmp(k, "plugin_timeout"))
      s->o.plugin_timeout_s = cfg_double(s, k, v, DBL_MIN, INFINITY);
    else if (!strcmp(k, "seed"))
      s->o.seed = (uint64_t)cfg_int(s, k, v, 0, LLONG_MAX);
    else if (!strcmp(k, "batch"))
      s->o.batch = (int)cfg_int(s, k, v, 1, INT_MAX);
    else if (!strcmp(k, "log"))
      s->o.log_path = cfg_string(s, k, v);
    else if (!strcmp(k, "resume"))
      s->o.resume_path = cfg_string(s, k, v);
    else if (!strcmp(k, "emit"))
      s->o.emit_dir = cfg_string(s, k, v);
    else if (!strcmp(k, "measure"))
      cfg_measure(s, v);
    else
      cli_usage("config %s: unknown key '%s' (known: %s)", s->config_path, k,
                known);
  }
}

/* A config shape written as named dimensions becomes "D1,D2,..." in the op's
 * order; heron_parse_shape then checks it like a --shape. */
const char *shape_from_object(const settings *s) {
  const char *const *names;
  int n = 0;
  char dims[256];
  const char *op = s->task.op;
  heron_op_dims(op, &names, &n, NULL);
  cli_op_dims_text(op, dims, sizeof dims);
  const char *k;
  json_t *v;
  json_object_foreach(s->shape_object, k, v) {
    int i = 0;
    while (i < n && strcmp(names[i], k))
      i++;
    if (i == n)
      cli_usage("config %s: key 'shape.%s' is not a dimension of %s (%s)",
                s->config_path, k, op, dims);
    /* Only the type is checked here: the value ranges (pad may be 0) are
     * the op's to judge, through heron_parse_shape below. */
    cfg_int(s, cli_printf("shape.%s", k), v, LLONG_MIN, LLONG_MAX);
  }
  char *text = cli_strdup("");
  int missing = -1;
  for (int i = 0; i < n; i++) {
    json_t *x = json_object_get(s->shape_object, names[i]);
    if (!x) {
      if (missing < 0)
        missing = i;
      continue;
    }
    if (missing >= 0)
      cli_usage("config %s: shape gives '%s' but not '%s' (%s dimensions in "
                "order: %s)",
                s->config_path, names[i], names[missing], op, dims);
    text = cli_printf("%s%s%lld", text, i ? "," : "",
                      (long long)json_integer_value(x));
  }
  return text;
}
