/* tools/heron_search.c - heron-search: tune one task from the command line.
 *
 *     heron-search --op gemm --shape 1024,1024,1024 --strategy random \
 *                  --trials 200 --log runs/gemm.jsonl --emit runs/gemm-best
 *     heron-search --config configs/tune/quick_start.json --trials 64
 *
 * The flow is: read the arguments (a --config file first, as defaults, then
 * every explicit flag over it), create the task, check that the plugins load,
 * run heron_tune with progress on stderr, and print a summary on stdout.
 * Exit status: 0 when the run finished, 1 when the library failed during the
 * run, 2 for usage errors (see usage() for the exact rule).
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ranks.h"

enum {
  OPT_STRATEGY = CLI_OPT_MEASURE_END,
  OPT_PARAM,
  OPT_MODEL,
  OPT_MODEL_PARAM,
  OPT_TRIALS,
  OPT_TIME_LIMIT,
  OPT_PLUGIN_TIMEOUT,
  OPT_SEED,
  OPT_BATCH,
  OPT_LOG,
  OPT_RESUME,
  OPT_EMIT,
  OPT_WORK_DIR,
  OPT_KEEP_FILES,
  OPT_COMPILE_ONLY,
  OPT_EMULATE,
  OPT_ALLOW_MIXED,
  OPT_RANK_TIMEOUT,
  OPT_REPLAY_DELAY,
  OPT_CONFIG,
  OPT_DRY_RUN,
  OPT_QUIET,
  OPT_VERBOSE,
  OPT_HELP,
  OPT_HELP_PLUGIN,
  OPT_LIST_PLUGINS,
  OPT_VERSION
};

/* The one table of flags: the parser reads it and --help prints it.  The
 * defaults of the tuning and measuring flags are filled in by
 * fill_defaults() from heron_tune_options_init, so --help shows what the
 * library really uses. */
static cli_option options[] = {
    CLI_TASK_OPTIONS(
        "operator to tune (listed below)",
        "the op's dimensions in order (heron-space --op NAME --describe)"),
    {OPT_STRATEGY, "strategy", "NAME|PATH", "search strategy plugin", "random"},
    {OPT_PARAM, "param", "KEY=VALUE",
     "strategy parameter; repeatable (--help-plugin NAME lists them)", ""},
    {OPT_MODEL, "model", "NAME|PATH", "cost-model plugin", "none"},
    {OPT_MODEL_PARAM, "model-param", "KEY=VALUE",
     "cost-model parameter; repeatable; needs --model", ""},
    {OPT_TRIALS, "trials", "N", "total trials, resumed ones included", ""},
    {OPT_TIME_LIMIT, "time-limit", "SECONDS",
     "wall-clock budget of the search, 0 for none", ""},
    {OPT_PLUGIN_TIMEOUT, "plugin-timeout", "SECONDS",
     "limit on each call into a strategy or model plugin; a call that "
     "outlasts it (or the time limit, but for replay) ends the run, naming "
     "the plugin",
     ""},
    {OPT_SEED, "seed", "N", "random seed of the strategy", ""},
    {OPT_BATCH, "batch", "N", "configs measured per round", ""},
    {OPT_LOG, "log", "FILE",
     "JSON Lines log, one measurement per line (parent folders are "
     "created); a regular file or a new name: a FIFO or a device such as "
     "/dev/null is refused (leave --log out to keep no log)",
     "none"},
    {OPT_RESUME, "resume", "FILE",
     "continue the search recorded in this log without re-measuring; new "
     "trials are appended to it unless --log names another file",
     "none"},
    {OPT_EMIT, "emit", "DIR",
     "write the best kernel's source, config and a driver here", "none"},
    CLI_MEASURE_OPTIONS,
    {OPT_WORK_DIR, "work-dir", "DIR", "where kernel sources and .so files go",
     "a temporary folder"},
    {OPT_KEEP_FILES, "keep-files", NULL, "leave the work folder in place", ""},
    {OPT_COMPILE_ONLY, "compile-only", NULL,
     "cuda: build every kernel with NVRTC and record its ptxas statistics "
     "(registers, spills, shared memory) without running it; needs no GPU",
     ""},
    {OPT_EMULATE, "emulate", NULL,
     "cuda: check every kernel on the CPU instead of a GPU (blocks and "
     "threads run one by one, wmma in scalar code); amx: with the tile "
     "instructions emulated in scalar C, on any x86-64 CPU; cpu int8 and "
     "bf16: with the dot-product instructions emulated; no timings",
     ""},
    {OPT_ALLOW_MIXED, "allow-mixed", NULL,
     "under mpirun: let ranks whose hardware differs from rank 0's measure "
     "(refused by default; needs a build with MPI)",
     ""},
    {OPT_RANK_TIMEOUT, "rank-timeout", "SECONDS",
     "under mpirun: a measuring rank that gives no result for a candidate "
     "within this time is lost; its candidate is recorded as failed (measured "
     "again on --resume) and the others go on (needs a build with MPI)",
     "600"},
    {OPT_REPLAY_DELAY, "replay-delay", "MS",
     "target replay: each answer takes this long in real time, standing in "
     "for a measurement (to study how a search scales over mpirun ranks on "
     "a small machine)",
     "0"},
    {OPT_CONFIG, "config", "FILE",
     "JSON file of settings; explicit flags override its values", "none"},
    {OPT_DRY_RUN, "dry-run", NULL,
     "check everything a run checks before its first trial (plugins and "
     "their parameters, the compiler, the resume log, the log free of "
     "other runs; making the --log and --emit parent folders), print the "
     "settings, and stop before tuning",
     ""},
    {OPT_QUIET, "quiet", NULL, "no progress lines on stderr", ""},
    {OPT_VERBOSE, "verbose", NULL, "also print every measurement on stderr",
     ""},
    {OPT_HELP, "help", NULL, "print this help and exit", ""},
    {OPT_HELP_PLUGIN, "help-plugin", "NAME",
     "describe a strategy or model plugin and its parameters, then exit", ""},
    {OPT_LIST_PLUGINS, "list-plugins", NULL,
     "list every strategy and model plugin found by name, folder by folder "
     "in search order (shadowed files and files that are not plugins "
     "marked), then exit",
     ""},
    {OPT_VERSION, "version", NULL, "print the version and exit", ""},
    {0, NULL, NULL, NULL, ""}};

/* A growable list of plugin parameters. */
typedef struct param_list {
  heron_param *v;
  int n, cap;
} param_list;

static void param_push(param_list *l, heron_param p) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
    heron_param *grown = realloc(l->v, (size_t)cap * sizeof *grown);
    if (!grown) {
      fprintf(stderr, "%s: out of memory\n", cli_prog());
      exit(CLI_EXIT_FAILURE);
    }
    l->v = grown;
    l->cap = cap;
  }
  l->v[l->n++] = p;
}

/* Everything the command line and the config file decide. */
typedef struct settings {
  cli_task_args task;
  heron_tune_options o;
  param_list sparams, mparams;
  int quiet, verbose, dry_run;
  int allow_mixed;     /* --allow-mixed */
  double rank_timeout; /* --rank-timeout, 0 for the default */
  const char *config_path;
  json_t *config;       /* the parsed config file; its strings are borrowed */
  json_t *shape_object; /* a config shape of named dimensions, resolved once
                           the op is final */
} settings;

/* ---- Help ---------------------------------------------------------------- */

static void fill_defaults(void) {
  heron_tune_options d;
  heron_tune_options_init(&d);
  cli_set_default(options, "trials", "%d", d.trials);
  cli_set_default(options, "time-limit", "%g", d.time_limit_s);
  cli_set_default(options, "plugin-timeout", "%g",
                  HERON_PLUGIN_TIMEOUT_DEFAULT);
  cli_set_default(options, "seed", "%llu", (unsigned long long)d.seed);
  cli_set_default(options, "batch", "%d", d.batch);
  cli_measure_defaults(options, &d.measure);
  cli_set_default(options, "flush-cache", "%s",
                  d.measure.flush_cache ? "on" : "off");
  cli_set_default(options, "keep-files", "%s",
                  d.measure.keep_files ? "on" : "off");
}

static void usage(FILE *out) {
  fprintf(out, "Usage: heron-search --op NAME --shape D1,D2,... [options]\n"
               "       heron-search --config FILE [options]\n"
               "\n"
               "Tunes one operator at one shape: a search strategy proposes "
               "configs of the\n"
               "task's constrained space; each is generated, compiled, run, "
               "checked against a\n"
               "reference and timed.  Progress goes to stderr, a summary to "
               "stdout.\n"
               "\n"
               "Options (--flag VALUE and --flag=VALUE both work):\n");
  cli_print_options(out, options);
  fprintf(out, "\nOperators:\n");
  for (int i = 0; i < heron_op_count(); i++) {
    const char *op = heron_op_name(i);
    char dims[256];
    const char *summary = heron_op_summary(op);
    fprintf(out, "  %-6s  ", op);
    cli_print_wrapped(out,
                      cli_printf("%s (--shape %s)", summary ? summary : "",
                                 cli_op_dims_text(op, dims, sizeof dims)),
                      10, 10);
  }
  fprintf(out,
          "\n"
          "Config file: a JSON object whose keys give the flags' defaults:\n"
          "  op, shape (array of integers, \"D1,D2,...\", or an object of "
          "named\n"
          "  dimensions such as {\"M\":1024,\"N\":1024,\"K\":1024}), dtype, "
          "target, hw,\n"
          "  epilogue, prepack, sm, strategy, strategy_params (object), "
          "model, "
          "model_params (object),\n"
          "  trials, time_limit, plugin_timeout, seed, batch, log, resume, "
          "emit, and\n"
          "  measure:\n"
          "  {number, repeat, min_repeat_ms, timeout, flush_cache, build_jobs, "
          "threads,\n"
          "  cc, work_dir, keep_files, compile_only, emulate}.  Unknown keys "
          "and wrongly typed "
          "values are errors.\n"
          "  Flags given on the command line win over the file, wherever "
          "they stand;\n"
          "  --param and --model-param are added after the file's parameters "
          "(the last\n"
          "  value of a key wins).\n"
          "\n"
          "Plugins: a name without '/' is looked up in $HERON_PLUGIN_PATH, "
          "then in\n"
          "libheron's plugin folder (build/plugins in a build tree, "
          "<prefix>/lib/heron/\n"
          "plugins when installed); a name with '/' is a path. "
          "--list-plugins shows what\n"
          "is found.  Typed plugin parameters are checked before the run "
          "(--dry-run too).\n"
          "\n"
          "Signals: the first SIGINT (Ctrl-C) or SIGTERM ends the run in "
          "order: the\n"
          "kernel being run finishes, the rest of the round is abandoned, "
          "the log is\n"
          "written, the summary printed and --emit written; a second one "
          "exits at once.\n"
          "\n"
          "Exit status: 0 the search ran to its budget; 1 it failed while "
          "running\n"
          "(I/O, builds failing for a reason that is not the config, a "
          "plugin failure,\n"
          "crash or hang, a resume log of another task, a log another run "
          "holds); 2 a\n"
          "usage error: an unknown or malformed flag, a bad config file, a "
          "compiler that\n"
          "cannot build a trivial kernel, or a value the library rejects "
          "before measuring\n"
          "(op, shape, dtype, target, hw, plugin, plugin parameter); 130 / "
          "143 stopped by\n"
          "SIGINT / SIGTERM (the log and the summary are whole).\n");
}

static void help_plugin(const char *name) {
  heron_error serr, merr;
  heron_error_clear(&serr);
  heron_error_clear(&merr);
  /* The name does not say its kind, so both are tried, strategy first. */
  int rc = heron_plugin_describe(name, "strategy", stdout, &serr);
  if (rc == HERON_OK)
    exit(CLI_EXIT_OK);
  int mrc = heron_plugin_describe(name, "model", stdout, &merr);
  if (mrc == HERON_OK)
    exit(CLI_EXIT_OK);
  cli_report(rc, &serr, "--help-plugin: '%s' as a strategy", name);
  cli_die(CLI_EXIT_USAGE, mrc, &merr, "--help-plugin: '%s' as a model", name);
}

/* Every plugin the search finds, folder by folder; a broken file is a line
 * of the listing, so only a failed write makes this fail. */
static void list_plugins(void) {
  heron_error err;
  heron_error_clear(&err);
  int rc = heron_plugin_list(stdout, &err);
  if (rc != HERON_OK)
    cli_die(CLI_EXIT_FAILURE, rc, &err, "--list-plugins");
  exit(CLI_EXIT_OK);
}

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

static void load_config(settings *s) {
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
static const char *shape_from_object(const settings *s) {
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

/* ---- Command line -------------------------------------------------------- */

/* The first pass handles what ends the program at once (--help, --version,
 * --help-plugin, --list-plugins) and finds --config, so that the file's
 * values can be laid down before the flags, whatever their order. */
static void first_pass(int argc, char **argv, settings *s) {
  cli_parser p;
  const char *val;
  int id;
  cli_parser_init(&p, options, argc, argv);
  while ((id = cli_next(&p, &val, NULL)) != 0) {
    switch (id) {
    case OPT_HELP:
      fill_defaults();
      usage(stdout);
      exit(CLI_EXIT_OK);
    case OPT_VERSION:
      printf("heron-search (Heron-C) %s\n", HERON_VERSION_STRING);
      exit(CLI_EXIT_OK);
    case OPT_HELP_PLUGIN:
      help_plugin(val);
      break;
    case OPT_LIST_PLUGINS:
      list_plugins();
      break;
    case OPT_CONFIG:
      if (s->config_path)
        cli_usage("--config: given twice ('%s' and '%s'); give one file",
                  s->config_path, val);
      s->config_path = val;
      break;
    default:
      break;
    }
  }
}

static void apply_flags(int argc, char **argv, settings *s) {
  cli_parser p;
  const char *val;
  const cli_option *o;
  int id;
  heron_measure_options *m = &s->o.measure;
  cli_parser_init(&p, options, argc, argv);
  while ((id = cli_next(&p, &val, &o)) != 0) {
    const char *flag = cli_printf("--%s", o->name);
    if (id != CLI_OPT_SHAPE && cli_task_flag(&s->task, id, val))
      continue;
    if (cli_measure_flag(m, id, flag, val))
      continue;
    switch (id) {
    case CLI_OPT_SHAPE:
      /* A --shape flag replaces a config file's named-dimension shape. */
      s->task.shape = val;
      s->shape_object = NULL;
      break;
    case OPT_STRATEGY:
      s->o.strategy = val;
      break;
    case OPT_PARAM:
      param_push(&s->sparams, cli_param(flag, val));
      break;
    case OPT_MODEL:
      s->o.model = val;
      break;
    case OPT_MODEL_PARAM:
      param_push(&s->mparams, cli_param(flag, val));
      break;
    case OPT_TRIALS:
      s->o.trials = (int)cli_int(flag, val, 1, INT_MAX);
      break;
    case OPT_TIME_LIMIT:
      s->o.time_limit_s = cli_double(flag, val, 0, INFINITY);
      break;
    case OPT_PLUGIN_TIMEOUT:
      s->o.plugin_timeout_s = cli_double(flag, val, DBL_MIN, INFINITY);
      break;
    case OPT_SEED:
      s->o.seed = cli_u64(flag, val);
      break;
    case OPT_BATCH:
      s->o.batch = (int)cli_int(flag, val, 1, INT_MAX);
      break;
    case OPT_LOG:
      s->o.log_path = val;
      break;
    case OPT_RESUME:
      s->o.resume_path = val;
      break;
    case OPT_EMIT:
      s->o.emit_dir = val;
      break;
    case OPT_WORK_DIR:
      m->work_dir = val;
      break;
    case OPT_KEEP_FILES:
      m->keep_files = 1;
      break;
    case OPT_COMPILE_ONLY:
      m->compile_only = 1;
      break;
    case OPT_EMULATE:
      m->emulate = 1;
      break;
    case OPT_ALLOW_MIXED:
    case OPT_RANK_TIMEOUT:
      if (!cli_mpi_built())
        cli_usage("--%s needs a heron-search built with MPI (install "
                  "OpenMPI with tools/setup.sh and build again)",
                  id == OPT_ALLOW_MIXED ? "allow-mixed" : "rank-timeout");
      if (id == OPT_ALLOW_MIXED)
        s->allow_mixed = 1;
      else
        s->rank_timeout = cli_double("--rank-timeout", val, 1, 1e7);
      break;
    case OPT_REPLAY_DELAY:
      /* Read by the measuring code of every rank (core/tune/measurer.c). */
      setenv("HERON_REPLAY_DELAY_MS",
             cli_printf("%g", cli_double("--replay-delay", val, 0, 1e7)), 1);
      break;
    case OPT_DRY_RUN:
      s->dry_run = 1;
      break;
    case OPT_QUIET:
      s->quiet = 1;
      break;
    case OPT_VERBOSE:
      s->verbose = 1;
      break;
    default: /* handled by first_pass */
      break;
    }
  }
}

/* ---- Checks before tuning ------------------------------------------------ */

/* What an existing path is, for messages. */
static const char *file_kind(mode_t m) {
  return S_ISREG(m)    ? "a file"
         : S_ISDIR(m)  ? "a folder"
         : S_ISFIFO(m) ? "a FIFO (named pipe)"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
                       : "not a regular file";
}

/* Resolves and loads a plugin once before the task's long setup, so that a
 * wrong name or a broken file is reported against its flag.  A path (a
 * name with '/') is looked at here first, so that its reason is named
 * whatever the path's length. */
static void check_plugin(const char *flag, const char *name, const char *kind) {
  heron_error err;
  char path[4096];
  struct stat st;
  if (strchr(name, '/') && stat(name, &st) != 0)
    cli_usage("%s: cannot read the %s plugin '%s': %s", flag, kind, name,
              strerror(errno));
  if (strchr(name, '/') && !S_ISREG(st.st_mode))
    cli_usage("%s: '%s' is %s, not a %s plugin (a .so file)", flag, name,
              file_kind(st.st_mode), kind);
  heron_error_clear(&err);
  int rc = heron_plugin_resolve(name, kind, path, sizeof path, &err);
  if (rc != HERON_OK)
    cli_die(CLI_EXIT_USAGE, rc, &err, "%s: no %s plugin '%s'", flag, kind,
            name);
  FILE *sink = fopen("/dev/null", "w");
  heron_error_clear(&err);
  rc = heron_plugin_describe(path, kind, sink ? sink : stderr, &err);
  if (sink)
    fclose(sink);
  if (rc != HERON_OK)
    cli_die(CLI_EXIT_USAGE, rc, &err, "%s: '%s' is not a usable %s plugin",
            flag, path, kind);
}

static const char *parent_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    return ".";
  if (slash == path)
    return "/";
  return cli_printf("%.*s", (int)(slash - path), path);
}

/* Checks that a file of that name can be created in `dir`, without
 * creating it: the name's length against the file system's limits, then a
 * uniquely named probe file made and removed again (a read-only file
 * system, a folder without write permission, no inodes left).  Returns 0
 * or an errno. */
static int can_create_in(const char *dir, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  long name_max = pathconf(dir, _PC_NAME_MAX);
  if (strlen(path) >= PATH_MAX ||
      (name_max > 0 && strlen(base) > (size_t)name_max))
    return ENAMETOOLONG;
  char *probe = cli_printf("%s/.heron-probe-XXXXXX", dir);
  int fd = mkstemp(probe);
  if (fd < 0)
    return errno;
  close(fd);
  unlink(probe);
  return 0;
}

/* --log (or the log --resume appends to) is checked, and its folders made,
 * before tuning starts, so a typo costs nothing rather than a task setup
 * and a round of builds, and every reason is named whatever the path's
 * length.  A log must be a regular file, or a name where one can be
 * created: a run locks it, appends to it and moves an older one aside, and
 * --resume reads it back.  A FIFO (which would block the run), a device
 * (/dev/null, /dev/full) or a folder is refused; leaving --log out keeps no
 * log.  Nothing is created but the folders. */
static void prepare_log(const char *path) {
  if (!path[0])
    cli_usage("--log: the file name is empty (leave --log out to keep no "
              "log)");
  const char *base = strrchr(path, '/');
  if (base && !base[1])
    cli_usage("--log: '%s' ends in '/': give a file name, such as '%srun."
              "jsonl'",
              path, path);
  const char *dir = parent_dir(path);
  int e = cli_make_dirs(dir);
  if (e)
    cli_usage("--log: cannot write '%s': folder '%s': %s", path, dir,
              strerror(e));
  struct stat st;
  if (stat(path, &st) == 0) {
    if (!S_ISREG(st.st_mode))
      cli_usage("--log: '%s' is %s, not a regular file: a log is locked, "
                "appended to and read back by --resume (leave --log out to "
                "keep no log)",
                path, file_kind(st.st_mode));
    /* O_NONBLOCK: should the path become a FIFO since stat, this fails
     * instead of waiting for a reader. */
    int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
      cli_usage("--log: cannot write '%s': %s", path, strerror(errno));
    close(fd);
    return;
  }
  if (errno != ENOENT)
    cli_usage("--log: cannot write '%s': %s", path, strerror(errno));
  if (lstat(path, &st) == 0)
    cli_usage("--log: '%s' is a symbolic link to a file that does not exist",
              path);
  e = can_create_in(dir, path);
  if (e)
    cli_usage("--log: cannot create '%s': %s", path, strerror(e));
}

/* --emit names a folder: an existing one must be a folder this run can
 * write in; a new one's parent folders are made now. */
static void prepare_emit(const char *dir) {
  if (!dir[0])
    cli_usage("--emit: the folder name is empty (leave --emit out to write "
              "no kernel)");
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      cli_usage("--emit: '%s' is %s, not a folder", dir, file_kind(st.st_mode));
    if (access(dir, W_OK | X_OK) != 0)
      cli_usage("--emit: cannot write in '%s': %s", dir, strerror(errno));
    return;
  }
  if (errno != ENOENT)
    cli_usage("--emit: cannot use '%s': %s", dir, strerror(errno));
  const char *parent = parent_dir(dir);
  int e = cli_make_dirs(parent);
  if (e)
    cli_usage("--emit: cannot write '%s': folder '%s': %s", dir, parent,
              strerror(e));
  e = can_create_in(parent, dir);
  if (e)
    cli_usage("--emit: cannot create '%s': %s", dir, strerror(e));
}

/* --resume reads a log: a regular file (a FIFO would block the run, a
 * device such as /dev/zero never ends). */
static void check_resume(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || access(path, R_OK) != 0)
    cli_usage("--resume: cannot read '%s': %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    cli_usage("--resume: '%s' is %s, not a log file", path,
              file_kind(st.st_mode));
}

/* ---- Output --------------------------------------------------------------
 * stdout is the summary's alone: summary_stream() keeps it for the summary
 * and points file descriptor 1 at stderr, so whatever a plugin or library
 * prints with printf during the run lands among the progress lines. */

static FILE *summary_stream(void) {
  fflush(stdout);
  int fd = dup(STDOUT_FILENO);
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!out) {
    if (fd >= 0)
      close(fd);
    return stdout;
  }
  dup2(STDERR_FILENO, STDOUT_FILENO);
  return out;
}

static void print_params(FILE *out, const char *label, const param_list *l) {
  if (!l->n)
    return;
  fprintf(out, "%-10s ", label);
  for (int i = 0; i < l->n; i++)
    fprintf(out, "%s%s=%s", i ? " " : "", l->v[i].key, l->v[i].value);
  fprintf(out, "\n");
}

static void print_settings(FILE *out, const settings *s, const heron_task *t) {
  const heron_measure_options *m = &s->o.measure;
  fprintf(out, "task       %s\n", heron_task_key(t));
  fprintf(out, "strategy   %s (seed %llu)\n", s->o.strategy,
          (unsigned long long)s->o.seed);
  print_params(out, "params", &s->sparams);
  fprintf(out, "model      %s\n", s->o.model ? s->o.model : "none");
  print_params(out, "model-params", &s->mparams);
  fprintf(out, "budget     %d trials, batch %d, time limit %s\n", s->o.trials,
          s->o.batch,
          s->o.time_limit_s > 0 ? cli_printf("%g s", s->o.time_limit_s)
                                : "none");
  fprintf(out, "plugins    each call limited to %g s\n",
          s->o.plugin_timeout_s > 0 ? s->o.plugin_timeout_s
                                    : HERON_PLUGIN_TIMEOUT_DEFAULT);
  fprintf(out,
          "measure    number %d, repeat %d, min-repeat-ms %g, timeout %g s, "
          "flush-cache %s, build-jobs %d, threads %d\n",
          m->number, m->repeat, m->min_repeat_ms, m->timeout_s,
          m->flush_cache ? "on" : "off", m->build_jobs, m->threads);
  fprintf(out, "log        %s\n", s->o.log_path ? s->o.log_path : "none");
  fprintf(out, "resume     %s\n", s->o.resume_path ? s->o.resume_path : "none");
  fprintf(out, "emit       %s\n", s->o.emit_dir ? s->o.emit_dir : "none");
}

/* rc and err: heron_tune's outcome.  The emit is the run's last step, so a
 * failed run has not written it whole, whichever step failed. */
static void print_summary(FILE *out, const settings *s, const heron_task *t,
                          const heron_tune_result *r, int rc,
                          const heron_error *err) {
  fprintf(out, "task       %s\n", heron_task_key(t));
  fprintf(out, "strategy   %s (seed %llu)\n", s->o.strategy,
          (unsigned long long)s->o.seed);
  fprintf(out,
          "trials     %d (measured %d, resumed %d; ok %d, failed %d; dropped "
          "%d invalid, %d duplicate proposals)\n",
          r->trials, r->measured, r->resumed, r->ok, r->failed,
          r->dropped_invalid, r->dropped_duplicate);
  const heron_measure_options *m = &s->o.measure;
  if (m->compile_only || m->emulate) {
    fprintf(out, "best       none timed (%s: %d of %d kernels %s)\n",
            m->compile_only ? "--compile-only" : "--emulate", r->ok, r->trials,
            m->compile_only ? "compiled" : "matched the reference on the CPU");
  } else if (r->best_trial > 0) {
    fprintf(out, "best       %.3f GFLOP/s, %.6g s, trial %d, config %s\n",
            r->best_gflops, r->best_seconds, r->best_trial, r->best_key);
  } else {
    fprintf(out, "best       none (no trial succeeded)\n");
  }
  fprintf(out, "elapsed    %.1f s\n", r->elapsed_s);
  if (r->retried)
    fprintf(out,
            "retried    %d resumed configs measured again (untimed, or "
            "failed by the environment)\n",
            r->retried);
  if (r->stopped)
    fprintf(out,
            "stopped    by %s before the budget was spent; --resume %s "
            "continues\n",
            cli_signal_name(r->stopped), s->o.log_path ? s->o.log_path : "LOG");
  fprintf(out, "log        %s\n", s->o.log_path ? s->o.log_path : "none");
  if (s->o.emit_dir && r->best_trial <= 0)
    /* Untimed kernels are never emitted as the best (heron-space --source
     * prints any config's source). */
    fprintf(out, "emit       nothing written to %s: no timed kernel\n",
            s->o.emit_dir);
  else if (s->o.emit_dir && rc != HERON_OK) {
    fprintf(out, "emit       FAILED: %s not written whole (%s: %s)\n",
            s->o.emit_dir, heron_err_name(rc),
            err->text[0] ? err->text : heron_strerror(rc));
    if (s->o.log_path)
      fprintf(out, "           --resume %s --emit %s writes it from the log\n",
              s->o.log_path, s->o.emit_dir);
  } else
    fprintf(out, "emit       %s\n", s->o.emit_dir ? s->o.emit_dir : "none");
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv) {
  settings s;
  memset(&s, 0, sizeof s);
  cli_set_prog("heron-search");
  /* Under mpirun with several ranks: rank 0 searches, the others measure
   * (tools/ranks.h); otherwise nothing changes. */
  int rank = 0;
  int nranks = cli_mpi_start(&argc, &argv, &rank);
  heron_tune_options_init(&s.o);

  first_pass(argc, argv, &s);
  if (s.config_path)
    load_config(&s);
  int config_mparams = s.mparams.n;
  apply_flags(argc, argv, &s);
  /* Cost-model parameters without a cost model would be dropped unread. */
  if (s.mparams.n && !s.o.model) {
    if (s.mparams.n > config_mparams)
      cli_usage("--model-param %s=%s: no --model to give it to (a "
                "cost-model parameter needs a cost-model plugin: --model "
                "NAME; --help-plugin NAME lists its parameters)",
                s.mparams.v[config_mparams].key,
                s.mparams.v[config_mparams].value);
    cli_usage("config %s: key 'model_params' without 'model' (a cost-model "
              "parameter needs a cost-model plugin: give 'model' or "
              "--model NAME)",
              s.config_path);
  }

  if (!s.o.strategy)
    s.o.strategy = "random";
  cli_check_task(&s.task);
  if (s.shape_object)
    s.task.shape = shape_from_object(&s);
  heron_task *t = cli_make_task(&s.task);
  if (nranks > 1) {
    cli_mpi_check_hardware(t, s.allow_mixed);
    if (rank > 0) {
      int st = cli_mpi_measure_for_rank0(t, &s.o.measure, s.o.seed);
      heron_task_free(t);
      return st;
    }
  }

  check_plugin("--strategy", s.o.strategy, "strategy");
  if (s.o.model)
    check_plugin("--model", s.o.model, "model");
  if (s.o.resume_path)
    check_resume(s.o.resume_path);
  /* A resumed run goes on appending to the log it resumes. */
  if (s.o.resume_path && !s.o.log_path)
    s.o.log_path = s.o.resume_path;
  if (s.o.log_path)
    prepare_log(s.o.log_path);
  if (s.o.emit_dir)
    prepare_emit(s.o.emit_dir);

  s.o.strategy_params = s.sparams.v;
  s.o.n_strategy_params = s.sparams.n;
  s.o.model_params = s.mparams.v;
  s.o.n_model_params = s.mparams.n;
  s.o.progress = s.quiet ? NULL : stderr;
  s.o.verbose = s.verbose;

  FILE *out = summary_stream();
  s.o.dry_run = s.dry_run;
  s.o.stop = cli_stop_on_signals();

  if (nranks > 1)
    cli_mpi_search_on_ranks(&s.o, t, s.rank_timeout);

  heron_tune_result res;
  heron_error err;
  memset(&res, 0, sizeof res);
  heron_error_clear(&err);
  int rc = heron_tune(t, &s.o, &res, &err);
  int status = CLI_EXIT_OK;
  if (rc != HERON_OK) {
    /* Before anything was measured, the library refusing an option, a
     * plugin parameter or the compiler is the user's to fix.  Everything
     * else, and any failure after measuring began, is a failed run. */
    int usage_error =
        res.measured == 0 && (rc == HERON_EINVAL || rc == HERON_ENOTFOUND ||
                              rc == HERON_EABI || rc == HERON_EBUILD);
    status = usage_error ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
    cli_report(rc, &err, NULL);
  } else if (res.stopped) {
    status = cli_stop_status(res.stopped);
  }
  if (rc == HERON_OK && s.dry_run)
    print_settings(out, &s, t);
  else if (rc == HERON_OK || res.trials > 0)
    print_summary(out, &s, t, &res, rc, &err);
  if (out != stdout)
    fclose(out);

  /* A run that lost a rank ends the job here with MPI_Abort. */
  if (nranks > 1)
    cli_mpi_finish(status);
  heron_task_free(t);
  json_decref(s.config);
  free(s.sparams.v);
  free(s.mparams.v);
  cli_free_all();
  return status;
}
