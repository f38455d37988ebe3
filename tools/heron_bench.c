/* tools/heron_bench.c - heron-bench: compare search strategies on a suite.
 *
 *     heron-bench --suite configs/suites/cpu.json \
 *                 --strategies random,genetic,becbo --model xgb \
 *                 --trials 300 --seeds 1,2,3 --out runs/bench
 *     heron-bench --out runs/bench --report-only
 *     heron-bench --export-t4 runs/bench/logs/GEMM__random__s1.jsonl \
 *                 --t4-out gemm-random.t4.json
 *
 * Every strategy runs on every task of the suite for every seed with the
 * same budget.  Each run is one heron_tune call in a forked child process
 * with its own JSON Lines log, DIR/logs/<task>__<strategy>__s<seed>.jsonl:
 * the tuner forks workers, and a cost model may start an OpenMP pool, and a
 * process that forks after a pool started inherits a pool that does not
 * exist.  So this process never loads a plugin (it only resolves the names)
 * and never tunes; a crashing plugin also takes only its own run down.
 *
 * A complete log is skipped and a partial one resumed, so a killed bench
 * continues where it stopped.  After the runs the report is rebuilt from
 * every log in DIR/logs: runs.csv (one row per trial), summary.md (per task
 * and strategy: best GFLOP/s over seeds, trials and time to 95% of the best
 * any strategy found, failure share) and convergence plots drawn by
 * gnuplot.  --report-only does just that part.
 *
 * Names from the user go into those file names as they are, so they follow
 * one rule (CLI_NAME_RULE in cli.h): a suite's task names are checked when the
 * suite is loaded, a plugin's name (its file name without ".so") when the
 * list is read, and a log name when the report reads it back.
 *
 * A SIGINT or SIGTERM stops the comparison in order (cli_stop_on_signals):
 * the run in flight ends after its candidate with its log kept, no other
 * run starts, the report is written from the logs there are, and the exit
 * status is 128 + the signal.  The same command again resumes it.
 *
 * Exit status: 0 every run finished (or was already complete); 1 a run or
 * the report failed (the other runs still ran); 2 a usage error; 130 / 143
 * stopped by SIGINT / SIGTERM.
 */
/* fopencookie, timegm, getline. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_score.h"
#include "cli.h"
#include "ranks.h"
#include "timing.h"

enum { MAX_DIMS = 32 };

enum {
  OPT_SUITE = CLI_OPT_MEASURE_END,
  OPT_TASKS,
  OPT_STRATEGIES,
  OPT_MODELS,
  OPT_MODEL,
  OPT_PARAM,
  OPT_MODEL_PARAM,
  OPT_TRIALS,
  OPT_SEEDS,
  OPT_OUT,
  OPT_BATCH,
  OPT_TIME_LIMIT,
  OPT_REPORT_ONLY,
  OPT_EXPORT_T4,
  OPT_T4_OUT,
  OPT_QUIET,
  OPT_VERBOSE,
  OPT_ALLOW_MIXED,
  OPT_HELP,
  OPT_VERSION
};

/* The task flags apply to every task of the suite, so --op and --shape
 * (which the suite gives per task) are not among them. */
static cli_option options[] = {
    {OPT_SUITE, "suite", "FILE",
     "operator suite (JSON, see configs/suites/); needed unless "
     "--report-only or --export-t4",
     ""},
    {OPT_TASKS, "tasks", "NAME,...", "only these tasks of the suite", "all"},
    {OPT_STRATEGIES, "strategies", "A,B,...",
     "strategy plugins to compare (names or paths)", ""},
    {OPT_MODELS, "models", "M1,M2,...",
     "one cost-model plugin per strategy, in the same order ('none' for "
     "none)",
     ""},
    {OPT_MODEL, "model", "NAME|PATH",
     "one cost-model plugin for every strategy", "none"},
    {OPT_PARAM, "param", "NAME:KEY=VALUE",
     "a parameter of strategy NAME (as listed in --strategies) for all its "
     "runs; repeatable",
     ""},
    {OPT_MODEL_PARAM, "model-param", "NAME:KEY=VALUE",
     "a parameter of cost model NAME for all runs that use it; repeatable", ""},
    {OPT_TRIALS, "trials", "N", "trials of every run (resumed ones included)",
     ""},
    {OPT_SEEDS, "seeds", "S1,S2,...",
     "seeds, or ranges A-B; every strategy runs once per seed", "1,2,3"},
    {OPT_OUT, "out", "DIR",
     "logs/, runs.csv, summary.md, plots/ and plot.gp go here", ""},
    {CLI_OPT_DTYPE, "dtype", "TYPE",
     "element type of every task, over the suite's: fp32, fp16, int8 or "
     "bf16",
     "the suite's"},
    {CLI_OPT_TARGET, "target", "NAME",
     "target of every task, over the suite's: cpu, cuda, or replay (answers "
     "from the --replay logs; no hardware)",
     "the suite's"},
    {CLI_OPT_REPLAY, "replay", "LOG",
     "target replay: a recorded log (.jsonl or .jsonl.gz) of the task; "
     "repeatable",
     ""},
    {CLI_OPT_HW, "hw", "NAME|FILE",
     "hardware description in configs/hw/ or a JSON file",
     "this machine / its GPU"},
    {CLI_OPT_EPILOGUE, "epilogue", "LIST",
     "fused epilogue of every task: bias, relu or bias,relu", "none"},
    {CLI_OPT_PREPACK, "prepack", "LIST",
     "inputs every task holds constant (weight, B, ...), packed once ahead "
     "of the calls by configs that pack them (cpu)",
     "none"},
    {CLI_OPT_SM, "sm", "N", "cuda: compute capability x 10 to compile for",
     "the GPU's, else 80"},
    {OPT_BATCH, "batch", "N", "configs measured per round", ""},
    {OPT_TIME_LIMIT, "time-limit", "SECONDS",
     "wall-clock budget of every run, 0 for none", ""},
    CLI_MEASURE_OPTIONS,
    {OPT_REPORT_ONLY, "report-only", NULL,
     "rebuild runs.csv, summary.md and the plots from the logs in --out "
     "without running anything",
     ""},
    {OPT_EXPORT_T4, "export-t4", "LOG",
     "convert one heron log to the T4 results format (Kernel Tuner, KTT) "
     "and exit; needs --t4-out",
     ""},
    {OPT_T4_OUT, "t4-out", "FILE", "where --export-t4 writes", ""},
    {OPT_QUIET, "quiet", NULL, "no progress lines on stderr", ""},
    {OPT_VERBOSE, "verbose", NULL,
     "also show each run's own progress on stderr", ""},
    {OPT_ALLOW_MIXED, "allow-mixed", NULL,
     "under mpirun: let ranks whose CPU or GPU differs from rank 0's run "
     "(refused by default; needs a build with MPI)",
     ""},
    {OPT_HELP, "help", NULL, "print this help and exit", ""},
    {OPT_VERSION, "version", NULL, "print the version and exit", ""},
    {0, NULL, NULL, NULL, ""}};

/* ---- Settings ------------------------------------------------------------ */

/* Arrays that live until exit, freed by keep_free_all (the strings live in
 * cli's list): a tool's parse results need no finer ownership. */
static void **kept_arrays;
static size_t nkept_arrays;

static void *keep_array(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  void **grown =
      p ? realloc(kept_arrays, (nkept_arrays + 1) * sizeof *grown) : NULL;
  if (!grown) {
    free(p);
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  kept_arrays = grown;
  kept_arrays[nkept_arrays++] = p;
  return p;
}

static void keep_free_all(void) {
  for (size_t i = 0; i < nkept_arrays; i++)
    free(kept_arrays[i]);
  free(kept_arrays);
  kept_arrays = NULL;
  nkept_arrays = 0;
  cli_free_all();
}

typedef struct suite_task {
  const char *name; /* as the suite writes it, following CLI_NAME_RULE */
  cli_task_args args;
} suite_task;

/* One --param or --model-param: the plugin it is for and the parameter. */
typedef struct plugin_param {
  const char *plugin; /* as written before the ':' */
  heron_param p;
} plugin_param;

typedef struct settings {
  const char *suite_path;
  const char *tasks;
  const char *strategies_text, *models_text, *model;
  const char *seeds_text;
  const char *out;
  const char *export_t4, *t4_out;
  cli_task_args task; /* the flags given; the suite fills the rest */
  heron_tune_options o;
  int report_only, quiet, verbose;
  int allow_mixed; /* --allow-mixed */
  /* Derived. */
  const char **strategies, **models, **labels;
  int nstrategies;
  uint64_t *seeds;
  int nseeds;
  suite_task *st;
  int ntasks;
  plugin_param *pp; /* every --param and --model-param, in order */
  int *pp_model;    /* 1 for a --model-param */
  int npp;
  /* Per strategy: its own parameters and its model's, from pp. */
  heron_param **sparams, **mparams;
  int *nsparams, *nmparams;
} settings;

static void usage(FILE *out) {
  heron_tune_options d;
  heron_tune_options_init(&d);
  cli_set_default(options, "trials", "%d", d.trials);
  cli_set_default(options, "batch", "%d", d.batch);
  cli_set_default(options, "time-limit", "%g", d.time_limit_s);
  cli_measure_defaults(options, &d.measure);
  fprintf(
      out,
      "Usage: heron-bench --suite FILE --strategies A,B,... --out DIR "
      "[options]\n"
      "       heron-bench --out DIR --report-only\n"
      "       heron-bench --export-t4 LOG --t4-out FILE\n"
      "\n"
      "Compares search strategies on the tasks of an operator suite: "
      "every strategy\n"
      "runs on every task for every seed with the same budget, each run "
      "in its own\n"
      "process with its own log DIR/logs/<task>__<strategy>__s<seed>.jsonl "
      "(a complete\n"
      "log is skipped, a partial one resumed).  Then DIR/runs.csv, "
      "DIR/summary.md and\n"
      "DIR/plots/<task>-{trials,time}.{svg,png} are rebuilt from every log "
      "in DIR/logs\n"
      "(plots need gnuplot).  A strategy with a model is labelled "
      "strategy+model.\n"
      "\n"
      "A suite task is {\"name\", \"op\", \"shape\"}, or {\"name\", \"t1\", "
      "\"t4\"}: a space of the\nauto-tuning community's T1 input file "
      "answered from its brute-forced T4 file\n(paths relative to the "
      "suite; configs/suites/benchmark-hub.json).  Runs on such\na space "
      "get the methodology's time budget (unless --time-limit; --trials "
      "does not\napply, the space bounds them) and are scored as in "
      "Willemsen et al., FGCS\n2024: best-so-far standardised "
      "between random search (0) and the optimum\n(1), mean and 95%% "
      "interval per strategy, in summary.md, DIR/scores.csv,\n"
      "DIR/score_aggregates.csv and plots/score.svg.\n"
      "\n"
      "Task names and plugin names (a plugin's file name without .so) "
      "go into the file\nnames, so each must be 1 to 64 letters, "
      "digits, '.', '_' or '-', beginning with\na letter or a digit, "
      "without \"__\".\n"
      "\n"
      "Ctrl-C (SIGINT) or SIGTERM stops the comparison in order: the run "
      "in flight\nends with its log kept, no other starts, and the "
      "report covers the logs there\nare.  The same command again "
      "resumes it.  A second signal ends it at once.\n"
      "\n"
      "Options (--flag VALUE and --flag=VALUE both work):\n");
  cli_print_options(out, options);
  fprintf(out, "\nExit status: 0 every run finished; 1 a run or the report "
               "failed (the other\nruns still ran); 2 a usage error; 130 / "
               "143 stopped by SIGINT / SIGTERM.\n");
}

/* Splits "a,b,c" into fresh strings; an empty item is a usage error. */
static const char **split_list(const char *flag, const char *text, int *n) {
  int cap = 1;
  for (const char *c = text; *c; c++)
    cap += *c == ',';
  const char **v = keep_array((size_t)cap, sizeof *v);
  *n = 0;
  for (const char *p = text;;) {
    size_t len = strcspn(p, ",");
    if (len == 0)
      cli_usage("%s: '%s' has an empty item (expected a comma-separated "
                "list)",
                flag, text);
    v[(*n)++] = cli_printf("%.*s", (int)len, p);
    if (p[len] == '\0')
      break;
    p += len + 1;
  }
  return v;
}

/* ---- Names ---------------------------------------------------------------
 * Every name from the user that becomes part of a file name follows one
 * rule, checked where the name comes in (a suite's task names at suite
 * load, the strategies' and models' short names with --strategies) and
 * again where the report reads a log name back.  So a name is never a path
 * ('/'), a hidden file or ".." (it begins with a letter or digit), never
 * splits the log name <task>__<label>__s<seed>.jsonl ("__") or the label
 * <strategy>+<model> ('+'), and needs no quoting in runs.csv, summary.md
 * or plot.gp (CLI_NAME_RULE). */

/* "genetic" for "plugins/genetic.so": the name a plugin goes by in labels
 * and log names (the file's base name without ".so"); a usage error naming
 * `flag` when it breaks CLI_NAME_RULE. */
static const char *plugin_short(const char *flag, const char *name) {
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  size_t len = strlen(base);
  if (len > 3 && !strcmp(base + len - 3, ".so"))
    len -= 3;
  if (!cli_name_ok(base, len))
    cli_usage("%s: '%s': the plugin's name '%.*s' (its file name without "
              "\".so\") goes into the log names, so it must be %s",
              flag, name, (int)len, base, CLI_NAME_RULE);
  return cli_printf("%.*s", (int)len, base);
}

static void resolve_plugin(const char *flag, const char *name,
                           const char *kind) {
  heron_error err;
  char path[4096];
  heron_error_clear(&err);
  /* Only the file is looked up: loading it here could start a model's
   * threads in the process that forks the runs (see the top). */
  int rc = heron_plugin_resolve(name, kind, path, sizeof path, &err);
  if (rc != HERON_OK)
    cli_die(CLI_EXIT_USAGE, rc, &err, "%s: no %s plugin '%s'", flag, kind,
            name);
}

/* Records "NAME:KEY=VALUE" of --param / --model-param; which plugin NAME
 * is gets checked once the strategy and model lists are known. */
static void push_plugin_param(settings *s, const char *flag, const char *val,
                              int model) {
  const char *colon = strchr(val, ':');
  const char *eq = strchr(val, '=');
  if (!colon || colon == val || (eq && eq < colon))
    cli_usage("%s: '%s' is not NAME:KEY=VALUE (NAME: the %s it is for)", flag,
              val, model ? "cost model" : "strategy");
  s->pp[s->npp].plugin = cli_printf("%.*s", (int)(colon - val), val);
  s->pp[s->npp].p = cli_param(flag, colon + 1);
  s->pp_model[s->npp++] = model;
}

/* 1 when `name` (from --param) names plugin `given` (as listed): the name
 * as listed, or its short name ("genetic" for "plugins/genetic.so"). */
static int names_plugin(const char *name, const char *given, int model) {
  return given &&
         (!strcmp(name, given) ||
          !strcmp(name,
                  plugin_short(model ? "--models" : "--strategies", given)));
}

/* Hands every --param / --model-param to the strategies it names; a NAME
 * that names none is a usage error. */
static void assign_plugin_params(settings *s) {
  int n = s->nstrategies;
  s->sparams = keep_array((size_t)n, sizeof *s->sparams);
  s->mparams = keep_array((size_t)n, sizeof *s->mparams);
  s->nsparams = keep_array((size_t)n, sizeof *s->nsparams);
  s->nmparams = keep_array((size_t)n, sizeof *s->nmparams);
  for (int i = 0; i < n; i++) {
    s->sparams[i] = keep_array((size_t)s->npp, sizeof **s->sparams);
    s->mparams[i] = keep_array((size_t)s->npp, sizeof **s->mparams);
  }
  for (int k = 0; k < s->npp; k++) {
    int used = 0, model = s->pp_model[k];
    for (int i = 0; i < n; i++) {
      const char *given = model ? s->models[i] : s->strategies[i];
      if (!names_plugin(s->pp[k].plugin, given, model))
        continue;
      if (model)
        s->mparams[i][s->nmparams[i]++] = s->pp[k].p;
      else
        s->sparams[i][s->nsparams[i]++] = s->pp[k].p;
      used = 1;
    }
    if (!used)
      cli_usage("%s: '%s' is not %s of this comparison",
                model ? "--model-param" : "--param", s->pp[k].plugin,
                model ? "a cost model" : "one of the --strategies");
  }
}

static void parse_args(settings *s, int argc, char **argv) {
  cli_parser p;
  const char *val;
  const cli_option *o;
  int id;
  heron_measure_options *m = &s->o.measure;
  /* No more parameters than arguments. */
  s->pp = keep_array((size_t)argc, sizeof *s->pp);
  s->pp_model = keep_array((size_t)argc, sizeof *s->pp_model);
  cli_parser_init(&p, options, argc, argv);
  while ((id = cli_next(&p, &val, &o)) != 0) {
    const char *flag = cli_printf("--%s", o->name);
    if (cli_task_flag(&s->task, id, val))
      continue;
    if (cli_measure_flag(m, id, flag, val))
      continue;
    switch (id) {
    case OPT_HELP:
      usage(stdout);
      exit(CLI_EXIT_OK);
    case OPT_VERSION:
      printf("heron-bench (Heron-C) %s\n", HERON_VERSION_STRING);
      exit(CLI_EXIT_OK);
    case OPT_SUITE:
      s->suite_path = val;
      break;
    case OPT_TASKS:
      s->tasks = val;
      break;
    case OPT_STRATEGIES:
      s->strategies_text = val;
      break;
    case OPT_MODELS:
      s->models_text = val;
      break;
    case OPT_MODEL:
      s->model = val;
      break;
    case OPT_PARAM:
    case OPT_MODEL_PARAM:
      push_plugin_param(s, flag, val, id == OPT_MODEL_PARAM);
      break;
    case OPT_TRIALS:
      s->o.trials = (int)cli_int(flag, val, 1, INT_MAX);
      break;
    case OPT_SEEDS:
      s->seeds_text = val;
      break;
    case OPT_OUT:
      /* "" would put logs/, runs.csv and the rest at the root, "/". */
      if (!*val)
        cli_usage("--out: an empty folder name (give a folder, such as "
                  "runs/bench)");
      s->out = val;
      break;
    case OPT_BATCH:
      s->o.batch = (int)cli_int(flag, val, 1, INT_MAX);
      break;
    case OPT_TIME_LIMIT:
      s->o.time_limit_s = cli_double(flag, val, 0, INFINITY);
      break;
    case OPT_REPORT_ONLY:
      s->report_only = 1;
      break;
    case OPT_EXPORT_T4:
      s->export_t4 = val;
      break;
    case OPT_T4_OUT:
      if (!*val)
        cli_usage("--t4-out: an empty file name");
      s->t4_out = val;
      break;
    case OPT_QUIET:
      s->quiet = 1;
      break;
    case OPT_VERBOSE:
      s->verbose = 1;
      break;
    case OPT_ALLOW_MIXED:
      if (!cli_mpi_built())
        cli_usage("--allow-mixed needs a heron-bench built with MPI (install "
                  "OpenMPI with tools/setup.sh and build again)");
      s->allow_mixed = 1;
      break;
    default:
      break;
    }
  }
}

/* Checks the plugin and seed lists and builds the run labels. */
static void check_runs(settings *s) {
  if (!s->strategies_text)
    cli_usage("--strategies is required (e.g. random,genetic,becbo)");
  s->strategies =
      split_list("--strategies", s->strategies_text, &s->nstrategies);
  if (s->models_text && s->model)
    cli_usage("--models and --model exclude each other: give one model per "
              "strategy or one for all");
  int nmodels = 0;
  if (s->models_text) {
    s->models = split_list("--models", s->models_text, &nmodels);
    if (nmodels != s->nstrategies)
      cli_usage("--models: '%s' names %d models for %d strategies (one per "
                "strategy, 'none' for none)",
                s->models_text, nmodels, s->nstrategies);
  }
  s->labels = keep_array((size_t)s->nstrategies, sizeof *s->labels);
  const char **models = keep_array((size_t)s->nstrategies, sizeof *models);
  for (int i = 0; i < s->nstrategies; i++) {
    const char *mdl = s->models ? s->models[i] : s->model;
    if (mdl && !strcmp(mdl, "none"))
      mdl = NULL;
    models[i] = mdl;
    resolve_plugin("--strategies", s->strategies[i], "strategy");
    if (mdl)
      resolve_plugin(s->models ? "--models" : "--model", mdl, "model");
    const char *sname = plugin_short("--strategies", s->strategies[i]);
    s->labels[i] =
        mdl ? cli_printf("%s+%s", sname,
                         plugin_short(s->models ? "--models" : "--model", mdl))
            : sname;
    for (int k = 0; k < i; k++)
      if (!strcmp(s->labels[k], s->labels[i]))
        cli_usage("--strategies: '%s' is listed twice (as %s)",
                  s->strategies[i], s->labels[i]);
  }
  s->models = models;
  int nseeds = 0;
  const char **seeds =
      split_list("--seeds", s->seeds_text ? s->seeds_text : "1,2,3", &nseeds);
  /* Each item is a seed or a range "A-B" (A <= B, at most 10000 seeds). */
  uint64_t *lo = keep_array((size_t)nseeds, sizeof *lo);
  uint64_t *hi = keep_array((size_t)nseeds, sizeof *hi);
  uint64_t total = 0;
  for (int i = 0; i < nseeds; i++) {
    const char *dash = strchr(seeds[i], '-');
    if (dash && dash != seeds[i]) {
      lo[i] = cli_u64("--seeds",
                      cli_printf("%.*s", (int)(dash - seeds[i]), seeds[i]));
      hi[i] = cli_u64("--seeds", dash + 1);
      if (hi[i] < lo[i])
        cli_usage("--seeds: range '%s' runs backwards", seeds[i]);
    } else {
      lo[i] = hi[i] = cli_u64("--seeds", seeds[i]);
    }
    total += hi[i] - lo[i] + 1;
    if (total > 10000)
      cli_usage("--seeds: more than 10000 seeds");
  }
  s->seeds = keep_array((size_t)total, sizeof *s->seeds);
  s->nseeds = 0;
  for (int i = 0; i < nseeds; i++)
    for (uint64_t v = lo[i]; v <= hi[i]; v++) {
      for (int k = 0; k < s->nseeds; k++)
        if (s->seeds[k] == v)
          cli_usage("--seeds: seed %llu is listed twice",
                    (unsigned long long)v);
      s->seeds[s->nseeds++] = v;
    }
  assign_plugin_params(s);
}

/* ---- The suite ------------------------------------------------------------
 * {"name", "dtype", "target", "tasks": [{"name", "op", "shape": {named
 * dimensions}}]}; the shape may also be an array in the op's order. */

static const char *suite_str(const settings *s, json_t *o, const char *key,
                             const char *where) {
  json_t *v = json_object_get(o, key);
  if (!v)
    return NULL;
  if (!json_is_string(v))
    cli_usage("--suite %s: %s\"%s\" must be a string", s->suite_path, where,
              key);
  return cli_strdup(json_string_value(v));
}

/* The shape in --shape order ("1024,1024,1024"); the op checks the values
 * when the task is created. */
static const char *suite_shape(const settings *s, const char *name,
                               const char *op, json_t *shape) {
  const char *const *names;
  int nd = 0;
  char dims[256];
  cli_check_op(op);
  heron_op_dims(op, &names, &nd, NULL);
  cli_op_dims_text(op, dims, sizeof dims);
  json_t *vals[MAX_DIMS] = {0};
  if (json_is_array(shape)) {
    if ((int)json_array_size(shape) > nd)
      cli_usage("--suite %s: task %s: %s has %d dimensions (%s), the shape "
                "gives %zu",
                s->suite_path, name, op, nd, dims, json_array_size(shape));
    for (size_t d = 0; d < json_array_size(shape); d++)
      vals[d] = json_array_get(shape, d);
  } else if (json_is_object(shape)) {
    const char *key;
    json_t *v;
    json_object_foreach(shape, key, v) {
      int d = 0;
      while (d < nd && strcmp(names[d], key))
        d++;
      if (d == nd)
        cli_usage("--suite %s: task %s: %s has no dimension '%s' (it has %s)",
                  s->suite_path, name, op, key, dims);
      vals[d] = v;
    }
  } else {
    cli_usage("--suite %s: task %s: \"shape\" must be an object of named "
              "dimensions (%s)",
              s->suite_path, name, dims);
  }
  char *text = cli_strdup("");
  int gap = -1;
  for (int d = 0; d < nd && d < MAX_DIMS; d++) {
    if (!vals[d]) {
      if (gap < 0)
        gap = d;
      continue;
    }
    if (gap >= 0)
      cli_usage("--suite %s: task %s: dimension %s is missing before %s (only "
                "trailing dimensions may be left out; %s has %s)",
                s->suite_path, name, names[gap], names[d], op, dims);
    if (!json_is_integer(vals[d]))
      cli_usage("--suite %s: task %s: dimension %s must be an integer",
                s->suite_path, name, names[d]);
    text = cli_printf("%s%s%lld", text, d ? "," : "",
                      (long long)json_integer_value(vals[d]));
  }
  return text;
}

static int name_listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (len == n && !strncasecmp(p, name, n))
      return 1;
    p += len + (p[len] == ',');
  }
  return 0;
}

/* A path the suite file gives: relative to the suite file's folder. */
static const char *suite_path(const settings *s, const char *p) {
  if (p[0] == '/')
    return p;
  const char *slash = strrchr(s->suite_path, '/');
  if (!slash)
    return p;
  return cli_printf("%.*s/%s", (int)(slash - s->suite_path), s->suite_path, p);
}

/* A suite of several tasks replayed from several logs: each task keeps the
 * logs recorded for it (configs/datasets/cuda-h200/ holds one log per task
 * of the tensorcore suite), so one --replay list serves the whole suite.
 * Whose a log is, the library says: creating the task with that log alone
 * is HERON_ETASK when it recorded another task.  A log refused for another
 * reason stays, so cli_make_task reports it; a task no log recorded is a
 * usage error naming it. */
static void replay_logs_per_task(settings *s) {
  if (s->ntasks < 2 || s->task.nreplay < 2 || !s->task.target ||
      strcmp(s->task.target, "replay"))
    return;
  for (int i = 0; i < s->ntasks; i++) {
    cli_task_args *a = &s->st[i].args;
    if (a->t1)
      continue;
    int keep = 0;
    for (int k = 0; k < s->task.nreplay; k++) {
      cli_task_args one = *a;
      one.replay[0] = s->task.replay[k];
      one.nreplay = 1;
      heron_task *t = NULL;
      heron_error err;
      if (cli_try_task(&one, &t, &err) != HERON_ETASK)
        a->replay[keep++] = s->task.replay[k];
      heron_task_free(t);
    }
    if (!keep)
      cli_usage("--replay: none of the %d logs records task %s (%s %s)",
                s->task.nreplay, s->st[i].name, a->op, a->shape);
    a->nreplay = keep;
  }
}

/* A suite's keys, and a task's: any other is refused, naming the file,
 * the task and the key (a misspelt key would silently fall back to a
 * default: "dtpye" running fp32). */
static const char *const suite_keys[] = {"name",   "description", "dtype",
                                         "target", "tasks",       NULL};
static const char *const task_keys[] = {"name", "op", "shape",
                                        "t1",   "t4", NULL};

static void check_suite_keys(const settings *s, json_t *root) {
  const char *key = cli_json_unknown_key(root, suite_keys);
  if (key)
    cli_usage("--suite %s: unknown key \"%s\" (a suite has \"name\", "
              "\"description\", \"dtype\", \"target\" and \"tasks\")",
              s->suite_path, key);
}

/* `who` names the task: its name, or tasks[i] without one. */
static void check_task_keys(const settings *s, json_t *jt, const char *who) {
  const char *key = cli_json_unknown_key(jt, task_keys);
  if (!key)
    return;
  if (!strcmp(key, "dtype") || !strcmp(key, "target"))
    cli_usage("--suite %s: task %s: unknown key \"%s\": \"%s\" belongs to "
              "the whole suite (its top level; or --%s for every task), "
              "not to one task",
              s->suite_path, who, key, key, key);
  cli_usage("--suite %s: task %s: unknown key \"%s\" (a task has \"name\", "
            "\"op\" and \"shape\", or \"name\", \"t1\" and \"t4\")",
            s->suite_path, who, key);
}

static void load_suite(settings *s) {
  json_t *root = cli_json_load("--suite", s->suite_path);
  json_t *tasks = json_object_get(root, "tasks");
  if (!json_is_object(root) || !json_is_array(tasks) ||
      json_array_size(tasks) == 0)
    cli_usage("--suite %s: expected an object with a non-empty \"tasks\" "
              "array",
              s->suite_path);
  check_suite_keys(s, root);
  const char *dtype = suite_str(s, root, "dtype", "");
  const char *target = suite_str(s, root, "target", "");
  s->st = keep_array(json_array_size(tasks), sizeof *s->st);
  const char **names = keep_array(json_array_size(tasks), sizeof *names);
  s->ntasks = 0;
  const char *all = "";
  size_t i;
  json_t *jt;
  json_array_foreach(tasks, i, jt) {
    const char *where = cli_printf("tasks[%zu]: ", i);
    if (!json_is_object(jt))
      cli_usage("--suite %s: %sexpected an object", s->suite_path, where);
    suite_task t;
    memset(&t, 0, sizeof t);
    t.name = suite_str(s, jt, "name", where);
    check_task_keys(s, jt,
                    t.name && t.name[0] ? t.name : cli_printf("tasks[%zu]", i));
    const char *op = suite_str(s, jt, "op", where);
    const char *t1 = suite_str(s, jt, "t1", where);
    const char *t4 = suite_str(s, jt, "t4", where);
    if (!t.name || !t.name[0] || (!op && !t1))
      cli_usage("--suite %s: %s\"name\" and \"op\" (or \"t1\" and \"t4\") "
                "are required",
                s->suite_path, where);
    json_t *shape = json_object_get(jt, "shape");
    if (t1 && (op || shape || !t4))
      cli_usage("--suite %s: task %s: a \"t1\" task takes a \"t4\" and no "
                "\"op\" or \"shape\" (its space is the T1 file's)",
                s->suite_path, t.name);
    if (t4 && !t1)
      cli_usage("--suite %s: task %s: \"t4\" goes with a \"t1\" (an op "
                "task has \"op\" and \"shape\")",
                s->suite_path, t.name);
    if (!shape && !t1)
      cli_usage("--suite %s: task %s: \"shape\" is required", s->suite_path,
                t.name);
    /* The name goes into the log and plot file names as it is. */
    if (!cli_name_ok(t.name, strlen(t.name)))
      cli_usage(
          "--suite %s: %stask name '%s' cannot go into file names: a task "
          "name must be %s",
          s->suite_path, where, t.name, CLI_NAME_RULE);
    /* --tasks picks names case-blind, and a case-blind file system would
     * give two such tasks one log. */
    for (size_t k = 0; k < i; k++)
      if (!strcasecmp(names[k], t.name))
        cli_usage("--suite %s: %stask name '%s' is used before, by tasks[%zu] "
                  "('%s'); task names must differ in more than case",
                  s->suite_path, where, t.name, k, names[k]);
    names[i] = t.name;
    t.args = s->task;
    if (t1) {
      /* A space of the community's formats: paths relative to the suite. */
      t.args.t1 = suite_path(s, t1);
      t.args.t4 = suite_path(s, t4);
    } else {
      t.args.op = op;
      t.args.shape = suite_shape(s, t.name, op, shape);
    }
    if (!t.args.dtype)
      t.args.dtype = dtype;
    if (!t.args.target)
      t.args.target = target;
    all = cli_printf("%s%s%s", all, i ? ", " : "", t.name);
    if (s->tasks && !name_listed(s->tasks, t.name))
      continue;
    s->st[s->ntasks++] = t;
  }
  json_decref(root);
  /* A typo in --tasks would silently leave a task out. */
  if (s->tasks) {
    int n = 0;
    const char **want = split_list("--tasks", s->tasks, &n);
    for (int k = 0; k < n; k++) {
      int found = 0;
      for (int j = 0; j < s->ntasks; j++)
        found |= !strcasecmp(s->st[j].name, want[k]);
      if (!found)
        cli_usage("--tasks: no task '%s' in %s (it has %s)", want[k],
                  s->suite_path, all);
    }
  }
}

/* ---- Files --------------------------------------------------------------- */

/* Lines holding a measurement (non-blank) in a log, 0 when it is absent;
 * with last_elapsed, also the "elapsed" of the last such line (0 when it
 * has none), read in the same pass. */
static int log_lines(const char *path, double *last_elapsed) {
  if (last_elapsed)
    *last_elapsed = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  char *line = NULL, *last = NULL;
  size_t cap = 0, lastcap = 0;
  ssize_t len;
  int n = 0;
  while ((len = getline(&line, &cap, f)) > 0) {
    if (strspn(line, " \r\t\n") == (size_t)len)
      continue;
    n++;
    /* Keep the line by swapping buffers: the next one reads into the
     * other. */
    char *t = last;
    size_t tc = lastcap;
    last = line, lastcap = cap;
    line = t, cap = tc;
  }
  free(line);
  fclose(f);
  if (last && last_elapsed) {
    json_t *o = json_loads(last, 0, NULL);
    json_t *e = o ? json_object_get(o, "elapsed") : NULL;
    if (json_is_number(e))
      *last_elapsed = json_number_value(e);
    json_decref(o);
  }
  free(last);
  return n;
}

/* ---- Spaces of the community's formats ----------------------------------
 * A T1/T4 task is scored by the methodology of Willemsen et al. (FGCS 2024;
 * tools/bench_score.h) against its whole recorded space, and its runs get
 * that methodology's budget: the simulated seconds random search needs to
 * reach the cutoff, plus the margin, unless --time-limit is given. */

typedef struct task_budget {
  int scored;     /* a T1/T4 task */
  double seconds; /* the run's time limit */
  int trials;     /* the whole space: time is the budget */
} task_budget;

/* The baseline of T1 task t; 0, or -1 when the space cannot be read
 * (said). */
static int task_baseline(const heron_task *t, bench_score_baseline *b) {
  double *obj = NULL, *cost = NULL;
  int n = 0;
  heron_error err;
  heron_error_clear(&err);
  int rc = heron_task_recorded_space(t, &obj, &cost, &n, &err);
  if (rc == HERON_OK) {
    bench_score_space sp = {.n = (size_t)n, .objective = obj, .cost = cost};
    bench_score_settings st;
    bench_score_settings_default(&st);
    rc = bench_score_baseline_init(b, &sp, &st, &err);
  }
  heron_free(obj);
  heron_free(cost);
  if (rc != HERON_OK) {
    cli_report(rc, &err, "the recorded space of %s", heron_task_key(t));
    return -1;
  }
  return 0;
}

static void task_budget_of(const settings *s, const heron_task *t,
                           task_budget *bud) {
  memset(bud, 0, sizeof *bud);
  bench_score_baseline b;
  memset(&b, 0, sizeof b);
  if (strncmp(heron_task_key(t), "t1/", 3) != 0 || task_baseline(t, &b) != 0)
    return;
  bud->scored = 1;
  bud->seconds = s->o.time_limit_s > 0 ? s->o.time_limit_s : b.budget_seconds;
  bud->trials = (int)b.n;
  bench_score_baseline_free(&b);
}

/* Where a scored task's T1 and T4 files are recorded for the report:
 * DIR/spaces/<task>.json, absolute paths, so --report-only finds them. */
static void record_space(const settings *s, const suite_task *st) {
  const char *dir = cli_printf("%s/spaces", s->out);
  if (cli_make_dirs(dir) != 0)
    return;
  char a1[PATH_MAX], a4[PATH_MAX];
  if (!realpath(st->args.t1, a1) || !realpath(st->args.t4, a4))
    return;
  json_t *o = json_pack("{s:s, s:s}", "t1", a1, "t4", a4);
  if (o)
    json_dump_file(o, cli_printf("%s/%s.json", dir, st->name), JSON_INDENT(1));
  json_decref(o);
}

/* ---- Running ------------------------------------------------------------- */

/* Runs one (task, strategy, seed) in a child process (cli_tune_in_child)
 * and fills *rep; returns 0 when the child reported. */
static int run_one(const settings *s, const heron_task *t, int strat,
                   uint64_t seed, const char *log, const char *name, int resume,
                   const task_budget *bud, cli_tune_report *rep) {
  heron_tune_options o = s->o;
  if (bud->scored) {
    o.trials = bud->trials;
    o.time_limit_s = bud->seconds;
  }
  o.strategy = s->strategies[strat];
  o.strategy_params = s->sparams[strat];
  o.n_strategy_params = s->nsparams[strat];
  o.model = s->models[strat];
  o.model_params = s->mparams[strat];
  o.n_model_params = s->nmparams[strat];
  o.seed = seed;
  o.log_path = log;
  o.resume_path = resume ? log : NULL;
  o.verbose = 0;
  o.progress = NULL;
  return cli_tune_in_child(
      t, &o, s->verbose ? cli_printf("  [%s] ", name) : NULL, rep);
}

/* What run_all did. */
typedef struct tally {
  int total;    /* runs of the comparison */
  int complete; /* logs at their budget: run now or before */
  int failed;   /* runs that failed */
  int stopped;  /* the signal that stopped the comparison, or 0 */
} tally;

/* Prints how one run went, under its "[k/N] name" prefix. */
static void say_run(const settings *s, const char *at, int bad,
                    const cli_tune_report *rep) {
  const heron_tune_result *r = &rep->res;
  if (bad || rep->rc != HERON_OK) {
    fprintf(stderr, "%s: FAILED: %s: %s\n", at, heron_err_name(rep->rc),
            rep->err.text[0] ? rep->err.text : heron_strerror(rep->rc));
    return;
  }
  if (s->quiet && !r->stopped)
    return;
  const char *resumed =
      r->resumed ? cli_printf(" (%d resumed)", r->resumed) : "";
  const char *end =
      r->stopped ? cli_printf("; stopped by %s, its log is kept to resume",
                              cli_signal_name(r->stopped))
                 : "";
  if (r->best_trial > 0)
    fprintf(stderr,
            "%s: best %.1f GFLOP/s at trial %d, %.1f s, %d trials%s%s\n", at,
            r->best_gflops, r->best_trial, r->elapsed_s, r->trials, resumed,
            end);
  else
    fprintf(stderr, "%s: no trial succeeded, %.1f s, %d trials%s%s\n", at,
            r->elapsed_s, r->trials, resumed, end);
}

/* The claim file of a run under mpirun (see run_all). */
static const char *claim_path(const char *logdir, const char *task,
                              const char *label, uint64_t seed) {
  return cli_printf("%s/.claim-%s__%s__s%llu", logdir, task, label,
                    (unsigned long long)seed);
}

/* 1 when this rank won the run (made its claim file), 0 when another did. */
static int claim(const char *logdir, const char *task, const char *label,
                 uint64_t seed) {
  int fd = open(claim_path(logdir, task, label, seed),
                O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0 && errno != EEXIST)
    cli_usage("--out: cannot make a claim file in '%s': %s", logdir,
              strerror(errno));
  if (fd >= 0)
    close(fd);
  return fd >= 0;
}

/* Removes every claim file in logdir (those of an earlier job, and at the
 * end this job's). */
static void clear_claims(const char *logdir) {
  DIR *d = opendir(logdir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (!strncmp(e->d_name, ".claim-", 7))
      unlink(cli_printf("%s/%s", logdir, e->d_name));
  if (d)
    closedir(d);
}

/* Runs every run whose log is short of the budget, one at a time, until
 * all are done or a SIGINT / SIGTERM came (cli_stop_on_signals): the run
 * in flight then ends in order (its log kept, a valid partial one) and no
 * other starts. */
static void run_all(const settings *s, tally *tl) {
  memset(tl, 0, sizeof *tl);
  tl->total = s->ntasks * s->nstrategies * s->nseeds;
  int k = 0;
  const char *logdir = cli_printf("%s/logs", s->out);
  int e = cli_make_dirs(logdir);
  if (e)
    cli_usage("--out: cannot make '%s': %s", logdir, strerror(e));
  /* Under mpirun the ranks take runs as they come free: a rank claims run
   * k by creating its claim file (O_EXCL, so one rank wins), and claims
   * left by an earlier job are cleared by rank 0 first. */
  int ranks = cli_mpi_size();
  if (ranks > 1) {
    if (cli_mpi_rank() == 0)
      clear_claims(logdir);
    cli_mpi_barrier();
  }
  for (int ti = 0; ti < s->ntasks && !tl->stopped; ti++) {
    const suite_task *st = &s->st[ti];
    heron_task *t = cli_make_task(&st->args);
    task_budget bud;
    task_budget_of(s, t, &bud);
    /* Under mpirun rank 0 alone records the spaces and writes the
     * report. */
    if (bud.scored && cli_mpi_rank() == 0) {
      record_space(s, st);
      if (!s->quiet)
        fprintf(stderr,
                "%s: scored by the methodology: each run gets %.1f simulated "
                "seconds%s\n",
                st->name, bud.seconds,
                s->o.time_limit_s > 0 ? " (--time-limit)"
                                      : " (the random-search cutoff + 10%)");
    }
    for (int si = 0; si < s->nstrategies && !tl->stopped; si++) {
      for (int di = 0; di < s->nseeds && !tl->stopped; di++) {
        uint64_t seed = s->seeds[di];
        const char *log = cli_printf("%s/%s__%s__s%llu.jsonl", logdir, st->name,
                                     s->labels[si], (unsigned long long)seed);
        const char *name = cli_printf("%s %s seed %llu", st->name,
                                      s->labels[si], (unsigned long long)seed);
        const char *at = cli_printf("[%d/%d] %s", ++k, tl->total, name);
        if (ranks > 1 && !claim(logdir, st->name, s->labels[si], seed))
          continue;
        double spent = 0;
        int have = log_lines(log, bud.scored ? &spent : NULL);
        /* A scored run ends at its time budget, a plain one at --trials. */
        if (bud.scored
                ? have > 0 && (have >= bud.trials || spent >= bud.seconds)
                : have >= s->o.trials) {
          tl->complete++;
          if (!s->quiet)
            fprintf(stderr, "%s: complete (%d trials in %s), skipped\n", at,
                    have, log);
          continue;
        }
        /* A signal between two runs starts no new one. */
        if ((tl->stopped = cli_stop_signal()) != 0)
          break;
        cli_tune_report rep;
        int bad = run_one(s, t, si, seed, log, name, have > 0, &bud, &rep);
        tl->stopped = cli_stop_signal();
        if (tl->stopped && (bad || rep.rc != HERON_OK)) {
          /* A run that could not end in order (it died of the signal):
           * what its log holds is kept and resumed like any other. */
          fprintf(stderr, "%s: interrupted by %s: %s\n", at,
                  cli_signal_name(tl->stopped),
                  rep.err.text[0] ? rep.err.text : heron_strerror(rep.rc));
          continue;
        }
        say_run(s, at, bad, &rep);
        if (bad || rep.rc != HERON_OK)
          tl->failed++;
        else if (!rep.res.stopped)
          tl->complete++;
      }
    }
    heron_task_free(t);
  }
}

/* ---- Reading logs -------------------------------------------------------- */

typedef struct rec {
  int trial;
  int ok;
  const char *status;
  double gflops, best, elapsed;
  double seconds; /* the measured time; NaN for a failed trial */
  int simulated;
} rec;

typedef struct logrun {
  const char *task, *label, *strategy, *model;
  uint64_t seed;
  rec *r;
  int n;
  double best;
} logrun;

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
static double best_at_trial(const logrun *lr, int t) {
  double b = 0;
  for (int i = 0; i < lr->n && lr->r[i].trial <= t; i++)
    b = lr->r[i].best;
  return b;
}

static double best_at_time(const logrun *lr, double x) {
  double b = 0;
  for (int i = 0; i < lr->n; i++)
    if (lr->r[i].elapsed <= x && lr->r[i].best > b)
      b = lr->r[i].best;
  return b;
}

/* ---- Report -------------------------------------------------------------- */

static void write_csv(FILE *f, const logrun *runs, int n) {
  fprintf(f, "task,strategy,model,seed,trial,status,gflops,best_gflops_so_far,"
             "elapsed_s,simulated\n");
  for (int i = 0; i < n; i++) {
    const logrun *lr = &runs[i];
    for (int k = 0; k < lr->n; k++) {
      const rec *r = &lr->r[k];
      fprintf(f, "%s,%s,%s,%llu,%d,%s,%.9g,%.9g,%.6f,%d\n", lr->task,
              lr->strategy, lr->model, (unsigned long long)lr->seed, r->trial,
              r->status, r->gflops, r->best, r->elapsed, r->simulated);
    }
  }
}

/* Names the runs of a task with fewer trials than its longest run: the
 * partial log of an interrupted or failed run (resumed by the same command
 * again), or a search that ran out of candidates.  Their figures are those
 * of the trials they have. */
static void write_short_runs(FILE *f, const logrun *runs, int lo, int hi) {
  int most = 0, nshort = 0;
  for (int i = lo; i < hi; i++)
    most = runs[i].n > most ? runs[i].n : most;
  for (int i = lo; i < hi; i++) {
    if (runs[i].n == most)
      continue;
    if (!nshort++)
      fprintf(f, "Runs with fewer trials than the task's longest (%d): ", most);
    else
      fprintf(f, ", ");
    fprintf(f, "%s seed %llu (%d)", runs[i].label,
            (unsigned long long)runs[i].seed, runs[i].n);
  }
  if (nshort)
    fprintf(f, ". Interrupted, failed or out of candidates; their figures "
               "are those of the trials they have.\n\n");
}

/* One task's table: runs[lo, hi) are its runs, sorted by label and seed. */
static void write_task_summary(FILE *f, const logrun *runs, int lo, int hi) {
  double top = 0;
  for (int i = lo; i < hi; i++)
    if (runs[i].best > top)
      top = runs[i].best;
  double target = 0.95 * top;
  fprintf(f, "## %s\n\n", runs[lo].task);
  fprintf(
      f, "Best any strategy found: %.3f GFLOP/s; 95%% of it: %.3f GFLOP/s.\n\n",
      top, target);
  fprintf(f, "| strategy | seeds | best GFLOP/s mean | min | max | stddev | "
             "median trials to 95%% | median time to 95%% (s) | seeds "
             "reaching 95%% | failure share |\n");
  fprintf(f, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
             "---: |\n");
  for (int a = lo; a < hi;) {
    int b = a;
    while (b < hi && !strcmp(runs[b].label, runs[a].label))
      b++;
    int ns = b - a, reached = 0, trials = 0, fails = 0;
    double sum = 0, mn = INFINITY, mx = 0;
    double *tt = calloc((size_t)ns, sizeof *tt);
    double *ts = calloc((size_t)ns, sizeof *ts);
    for (int i = a; i < b; i++) {
      const logrun *lr = &runs[i];
      sum += lr->best;
      mn = fmin(mn, lr->best);
      mx = fmax(mx, lr->best);
      trials += lr->n;
      for (int k = 0; k < lr->n; k++)
        fails += !lr->r[k].ok;
      for (int k = 0; k < lr->n; k++)
        if (top > 0 && lr->r[k].best >= target) {
          tt[reached] = lr->r[k].trial;
          ts[reached] = lr->r[k].elapsed;
          reached++;
          break;
        }
    }
    double mean = sum / ns, var = 0;
    for (int i = a; i < b; i++)
      var += (runs[i].best - mean) * (runs[i].best - mean);
    double sd = ns > 1 ? sqrt(var / (ns - 1)) : 0;
    fprintf(f, "| %s | %d | %.3f | %.3f | %.3f | %.3f | ", runs[a].label, ns,
            mean, mn, mx, sd);
    if (reached)
      fprintf(f, "%.1f | %.2f | ", cli_median(tt, reached),
              cli_median(ts, reached));
    else
      fprintf(f, "- | - | ");
    fprintf(f, "%d/%d | %.1f%% |\n", reached, ns,
            trials ? 100.0 * fails / trials : 0.0);
    free(tt);
    free(ts);
    a = b;
  }
  fprintf(f, "\n");
  write_short_runs(f, runs, lo, hi);
}

/* Writes the convergence data of one task: per strategy (gnuplot index
 * blocks, in label order) x, mean, min, max of the best so far over
 * seeds. */
static int write_plot_data(const char *path, const logrun *runs, int lo, int hi,
                           int by_time) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  int block = 0;
  for (int a = lo; a < hi;) {
    int b = a;
    while (b < hi && !strcmp(runs[b].label, runs[a].label))
      b++;
    fprintf(f, "%s# %s\n", block ? "\n\n" : "", runs[a].label);
    /* The x values: trials 1..max, or every elapsed time any seed has. */
    int nx = 0;
    for (int i = a; i < b; i++)
      nx += runs[i].n;
    double *xs = calloc((size_t)nx + 1, sizeof *xs);
    int m = 0;
    for (int i = a; i < b; i++)
      for (int k = 0; k < runs[i].n; k++)
        xs[m++] = by_time ? runs[i].r[k].elapsed : runs[i].r[k].trial;
    qsort(xs, (size_t)m, sizeof *xs, cli_cmp_double);
    for (int j = 0; j < m; j++) {
      if (j > 0 && xs[j] == xs[j - 1])
        continue;
      double sum = 0, mn = INFINITY, mx = 0;
      for (int i = a; i < b; i++) {
        double v = by_time ? best_at_time(&runs[i], xs[j])
                           : best_at_trial(&runs[i], (int)xs[j]);
        sum += v;
        mn = fmin(mn, v);
        mx = fmax(mx, v);
      }
      fprintf(f, "%.6g %.6g %.6g %.6g\n", xs[j], sum / (b - a), mn, mx);
    }
    free(xs);
    block++;
    a = b;
  }
  return fclose(f) == 0 ? 0 : -1;
}

/* gnuplot string literal in single quotes: a quote is doubled. */
static const char *gp_quote(const char *s) {
  char *out = keep_array(2 * strlen(s) + 3, 1);
  char *o = out;
  *o++ = '\'';
  for (; *s; s++) {
    if (*s == '\'')
      *o++ = '\'';
    *o++ = *s;
  }
  *o++ = '\'';
  *o = '\0';
  return out;
}

static void gp_plot(FILE *g, const char *data, const char *out_base,
                    const char *title, const char *xlabel, const logrun *runs,
                    int lo, int hi) {
  static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                 "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  fprintf(g, "set title %s\nset xlabel %s\nset ylabel 'best GFLOP/s so far'\n",
          gp_quote(title), gp_quote(xlabel));
  fprintf(g,
          "set terminal svg size 800,500 noenhanced background rgb "
          "'white'\nset output %s\n",
          gp_quote(cli_printf("%s.svg", out_base)));
  fprintf(g, "plot ");
  int block = 0;
  for (int a = lo; a < hi;) {
    int b = a;
    while (b < hi && !strcmp(runs[b].label, runs[a].label))
      b++;
    const char *c = colors[block % 8];
    fprintf(g,
            "%s%s index %d using 1:3:4 with filledcurves fc rgb '%s' fs "
            "transparent solid 0.2 noborder notitle, \\\n  %s index %d using "
            "1:2 with lines lw 2 lc rgb '%s' title %s",
            block ? ", \\\n  " : "", gp_quote(data), block, c, gp_quote(data),
            block, c, gp_quote(runs[a].label));
    block++;
    a = b;
  }
  fprintf(g, "\n");
  /* pngcairo draws the translucent bands; plain png is the fallback of a
   * gnuplot built without cairo. */
  fprintf(g,
          "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "  set terminal pngcairo size 800,500 noenhanced\n"
          "} else {\n"
          "  set terminal png size 800,500 noenhanced\n"
          "}\n"
          "set output %s\nreplot\nunset output\n\n",
          gp_quote(cli_printf("%s.png", out_base)));
}

/* Is `prog` an executable file in a folder of $PATH? */
static int on_path(const char *prog) {
  const char *path = getenv("PATH");
  if (!path)
    return 0;
  for (const char *p = path; *p;) {
    size_t len = strcspn(p, ":");
    const char *full = cli_printf("%.*s/%s", (int)len, len ? p : ".", prog);
    if (access(full, X_OK) == 0)
      return 1;
    p += len + (p[len] == ':');
  }
  return 0;
}

static int run_gnuplot(const char *script) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int wst = 0;
  if (pid < 0)
    return -1;
  /* A SIGINT handled by cli_stop_on_signals interrupts the wait. */
  while (waitpid(pid, &wst, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(wst) && WEXITSTATUS(wst) == 0 ? 0 : -1;
}

static int read_all_logs(const char *out, logrun **runs_out, int *n_out) {
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

/* ---- The methodology's score ----------------------------------------------
 * Runs of tasks with a recorded space (DIR/spaces/<task>.json, written
 * when the comparison ran) are scored against it: the best-so-far over
 * simulated time, standardised between random search (0) and the optimum
 * (1) over the cutoff window (tools/bench_score.h). */

typedef struct scoring {
  bench_score_table *all;  /* every scored run */
  bench_score_table **per; /* one table per scored task */
  const char **task;
  int ntasks;
  int points;
} scoring;

static void scoring_free(scoring *sc) {
  bench_score_table_free(sc->all);
  for (int i = 0; i < sc->ntasks; i++)
    bench_score_table_free(sc->per[i]);
  free(sc->per);
  free(sc->task);
  memset(sc, 0, sizeof *sc);
}

/* Scores runs[lo, hi), the runs of one task, when its space is recorded;
 * 0, or -1 on failure (said). */
static int score_task(const char *out, const logrun *runs, int lo, int hi,
                      scoring *sc) {
  const char *task = runs[lo].task;
  const char *path = cli_printf("%s/spaces/%s.json", out, task);
  if (access(path, R_OK) != 0)
    return 0;
  json_t *o = json_load_file(path, 0, NULL);
  const char *t1 = json_string_value(json_object_get(o, "t1"));
  const char *t4 = json_string_value(json_object_get(o, "t4"));
  heron_task_spec spec = {.t1 = t1, .t4 = t4};
  heron_task *t = NULL;
  heron_error err;
  heron_error_clear(&err);
  int rc = t1 && t4 ? heron_task_create(&spec, &t, &err)
                    : heron_error_set(&err, HERON_EPARSE,
                                      "%s: no \"t1\" and \"t4\" paths", path);
  bench_score_baseline b;
  memset(&b, 0, sizeof b);
  if (rc != HERON_OK)
    cli_report(rc, &err, "scoring %s", task);
  int status = rc == HERON_OK && task_baseline(t, &b) == 0 ? 0 : -1;
  heron_task_free(t);
  json_decref(o);
  if (status)
    return -1;
  if (!sc->all)
    sc->all = bench_score_table_new(b.points);
  bench_score_table *mine = bench_score_table_new(b.points);
  sc->per = realloc(sc->per, (size_t)(sc->ntasks + 1) * sizeof *sc->per);
  sc->task = realloc(sc->task, (size_t)(sc->ntasks + 1) * sizeof *sc->task);
  if (!sc->all || !mine || !sc->per || !sc->task) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  sc->per[sc->ntasks] = mine;
  sc->task[sc->ntasks++] = task;
  sc->points = b.points;
  double *curve = malloc((size_t)b.points * sizeof *curve);
  for (int i = lo; i < hi && curve; i++) {
    const logrun *lr = &runs[i];
    bench_score_trial *tr =
        malloc((size_t)(lr->n > 0 ? lr->n : 1) * sizeof *tr);
    if (!tr)
      break;
    /* The log's order is the trials' (read_log sorts by trial); elapsed
     * can only grow along it, a resumed run continuing the clock. */
    double x = 0;
    for (int k = 0; k < lr->n; k++) {
      x = fmax(x, lr->r[k].elapsed);
      tr[k] = (bench_score_trial){.x = x, .objective = lr->r[k].seconds};
    }
    double score = 0;
    heron_error_clear(&err);
    rc = bench_score_run(&b, tr, (size_t)lr->n, curve, &score, &err);
    if (rc == HERON_OK)
      rc = bench_score_table_add(sc->all, task, lr->label, (long long)lr->seed,
                                 score, curve, &err);
    if (rc == HERON_OK)
      rc = bench_score_table_add(mine, task, lr->label, (long long)lr->seed,
                                 score, curve, &err);
    if (rc != HERON_OK) {
      cli_report(rc, &err, "scoring %s %s seed %llu", task, lr->label,
                 (unsigned long long)lr->seed);
      status = -1;
    }
    free(tr);
  }
  free(curve);
  bench_score_baseline_free(&b);
  return status;
}

/* The score section of summary.md. */
static void write_score_section(FILE *f, const scoring *sc) {
  fprintf(f, "## Score (the methodology of Willemsen et al., FGCS 2024)\n\n"
             "Each run's best-so-far time against simulated seconds, "
             "standardised between the calculated\nrandom-search baseline (0) "
             "and the space's optimum (1) over the window from the\n50th to "
             "the 95th percentile cutoff, averaged over the window; per "
             "strategy the mean over\nspaces of the mean over seeds, with its "
             "95%% confidence interval (Student's t).\nSpaces: ");
  for (int i = 0; i < sc->ntasks; i++)
    fprintf(f, "%s%s", i ? ", " : "", sc->task[i]);
  fprintf(f, ".\n\n");
  bench_score_write_markdown(sc->all, f);
  for (int i = 0; sc->ntasks > 1 && i < sc->ntasks; i++) {
    fprintf(f, "\n### %s\n\n", sc->task[i]);
    bench_score_write_markdown(sc->per[i], f);
  }
  fprintf(f, "\n");
}

/* scores.csv, score_aggregates.csv and the standardised-curve plot;
 * 0 or -1 (said). */
static int write_score_files(const char *out, const scoring *sc, FILE *g) {
  int status = 0;
  const char *runs_csv = cli_printf("%s/scores.csv", out);
  const char *agg_csv = cli_printf("%s/score_aggregates.csv", out);
  FILE *f = fopen(runs_csv, "w");
  if (!f || bench_score_write_runs_csv(sc->all, f) != HERON_OK)
    status = -1;
  if (f && fclose(f) != 0)
    status = -1;
  f = fopen(agg_csv, "w");
  if (!f || bench_score_write_aggregates_csv(sc->all, f) != HERON_OK)
    status = -1;
  if (f && fclose(f) != 0)
    status = -1;
  if (!g)
    return status;
  const char *dat = cli_printf("%s/plots/score.dat", out);
  f = fopen(dat, "w");
  if (!f || bench_score_write_gnuplot(sc->all, f, NULL) != HERON_OK)
    status = -1;
  if (f && fclose(f) != 0)
    status = -1;
  int na = bench_score_table_aggregates(sc->all, NULL, 0);
  bench_score_agg *ag = na > 0 ? calloc((size_t)na, sizeof *ag) : NULL;
  if (ag)
    bench_score_table_aggregates(sc->all, ag, na);
  fprintf(g,
          "set title 'standardised best-so-far over the cutoff window "
          "(0: random search, 1: optimum)'\nset xlabel 'fraction of the "
          "time budget'\nset ylabel 'score'\n"
          "set terminal svg size 800,500 noenhanced background rgb 'white'\n"
          "set output %s\nplot ",
          gp_quote(cli_printf("%s/plots/score.svg", out)));
  for (int i = 0; i < na && ag; i++)
    fprintf(g,
            "%s%s index %d using 1:3:4 with filledcurves fs transparent solid "
            "0.2 noborder notitle, \\\n  %s index %d using 1:2 with lines lw "
            "2 title %s",
            i ? ", \\\n  " : "", gp_quote(dat), i, gp_quote(dat), i,
            gp_quote(ag[i].strategy));
  fprintf(g, "\nunset output\n\n");
  free(ag);
  if (status)
    fprintf(stderr, "%s: cannot write the score files in '%s'\n", cli_prog(),
            out);
  return status;
}

/* Rebuilds runs.csv, summary.md and the plots; returns 0 or -1 (said). */
static int report(const char *out, int quiet) {
  logrun *runs = NULL;
  int n = 0;
  int status = read_all_logs(out, &runs, &n);
  if (n == 0) {
    fprintf(stderr,
            "%s: no logs named <task>__<strategy>__s<seed>.jsonl in "
            "'%s/logs'\n",
            cli_prog(), out);
    free(runs);
    return -1;
  }
  scoring sc;
  memset(&sc, 0, sizeof sc);
  for (int lo = 0; lo < n;) {
    int hi = lo;
    while (hi < n && !strcmp(runs[hi].task, runs[lo].task))
      hi++;
    if (score_task(out, runs, lo, hi, &sc) != 0)
      status = -1;
    lo = hi;
  }
  const char *csv = cli_printf("%s/runs.csv", out);
  const char *md = cli_printf("%s/summary.md", out);
  FILE *f = fopen(csv, "w");
  if (f) {
    write_csv(f, runs, n);
    if (fclose(f) != 0)
      f = NULL;
  }
  if (!f) {
    fprintf(stderr, "%s: cannot write '%s': %s\n", cli_prog(), csv,
            strerror(errno));
    status = -1;
  }
  f = fopen(md, "w");
  if (f) {
    fprintf(f, "# heron-bench summary\n\n"
               "Per task and strategy over seeds: the best GFLOP/s a run "
               "reached (mean, min, max,\nsample stddev), the median trial "
               "and elapsed time at which a run's best first\nreached 95%% "
               "of the best any strategy found on the task (over the seeds "
               "that\nreached it), and the share of trials that failed.\n\n");
    for (int lo = 0; lo < n;) {
      int hi = lo;
      while (hi < n && !strcmp(runs[hi].task, runs[lo].task))
        hi++;
      write_task_summary(f, runs, lo, hi);
      lo = hi;
    }
    if (sc.all)
      write_score_section(f, &sc);
    if (fclose(f) != 0)
      f = NULL;
  }
  if (!f) {
    fprintf(stderr, "%s: cannot write '%s': %s\n", cli_prog(), md,
            strerror(errno));
    status = -1;
  }

  /* Plots. */
  int plotted = 0;
  if (!on_path("gnuplot")) {
    fprintf(stderr,
            "%s: gnuplot is not on PATH; plots skipped (install "
            "gnuplot-nox, see tools/setup.sh)\n",
            cli_prog());
  } else {
    const char *pdir = cli_printf("%s/plots", out);
    const char *script = cli_printf("%s/plot.gp", out);
    int e = cli_make_dirs(pdir);
    FILE *g = e ? NULL : fopen(script, "w");
    if (!g) {
      fprintf(stderr, "%s: cannot write '%s': %s\n", cli_prog(), script,
              strerror(e ? e : errno));
      status = -1;
    } else {
      fprintf(g,
              "# written by heron-bench; run with: gnuplot %s\n"
              "set key bottom right\nset grid\n\n",
              script);
      for (int lo = 0; lo < n;) {
        int hi = lo;
        while (hi < n && !strcmp(runs[hi].task, runs[lo].task))
          hi++;
        const char *base = cli_printf("%s/%s", pdir, runs[lo].task);
        const char *dt = cli_printf("%s-trials.dat", base);
        const char *dx = cli_printf("%s-time.dat", base);
        if (write_plot_data(dt, runs, lo, hi, 0) ||
            write_plot_data(dx, runs, lo, hi, 1)) {
          fprintf(stderr, "%s: cannot write the plot data of %s in '%s'\n",
                  cli_prog(), runs[lo].task, pdir);
          status = -1;
        }
        gp_plot(g, dt, cli_printf("%s-trials", base),
                cli_printf("%s: best so far against trials (mean over seeds, "
                           "band min..max)",
                           runs[lo].task),
                "trial", runs, lo, hi);
        gp_plot(g, dx, cli_printf("%s-time", base),
                cli_printf("%s: best so far against time (mean over seeds, "
                           "band min..max)",
                           runs[lo].task),
                "elapsed seconds", runs, lo, hi);
        lo = hi;
      }
      if (sc.all && write_score_files(out, &sc, g) != 0)
        status = -1;
      if (fclose(g) != 0 || run_gnuplot(script) != 0) {
        fprintf(stderr, "%s: gnuplot failed on '%s'\n", cli_prog(), script);
        status = -1;
      } else {
        plotted = 1;
      }
    }
  }
  /* Without gnuplot the score's CSV files are still written. */
  if (sc.all && !plotted && !on_path("gnuplot") &&
      write_score_files(out, &sc, NULL) != 0)
    status = -1;
  if (!quiet && status == 0)
    fprintf(stderr, "%s: report of %d run%s in %s (runs.csv, summary.md%s%s)\n",
            cli_prog(), n, n == 1 ? "" : "s", out,
            sc.all ? ", scores.csv, score_aggregates.csv" : "",
            plotted ? ", plots/" : "");
  scoring_free(&sc);
  for (int i = 0; i < n; i++)
    free(runs[i].r);
  free(runs);
  return status;
}

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

static int export_t4(const char *log, const char *out) {
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

/* Under mpirun every rank runs kernels of its own runs: the ranks' CPUs
 * (for tasks on the cpu or amx target) and GPUs (for a GPU target) must
 * agree, as each detects them whatever --hw says (tools/ranks.h).  A T1
 * task and the replay target measure nothing on the ranks' machines. */
static void check_rank_machines(const settings *s) {
  int cpu = 0, gpu = 0;
  for (int i = 0; i < s->ntasks; i++) {
    const cli_task_args *a = &s->st[i].args;
    const char *target = a->target ? a->target : "cpu";
    if (a->t1 || !strcmp(target, "replay"))
      continue;
    if (heron_target_is_gpu(target))
      gpu = 1;
    else
      cpu = 1;
  }
  cli_mpi_check_machines(cpu, gpu, s->allow_mixed);
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv) {
  settings s;
  memset(&s, 0, sizeof s);
  cli_set_prog("heron-bench");
  /* Under mpirun with several ranks the runs are shared out (run k is rank
   * k mod N's) and rank 0 writes the report once all have ended. */
  int rank = 0;
  int nranks = cli_mpi_start(&argc, &argv, &rank);
  heron_tune_options_init(&s.o);
  parse_args(&s, argc, argv);
  if (nranks > 1 && (s.export_t4 || s.report_only))
    cli_usage("--export-t4 and --report-only run on one process: no mpirun");

  if (s.export_t4 || s.t4_out) {
    if (!s.export_t4 || !s.t4_out)
      cli_usage("--export-t4 LOG and --t4-out FILE go together");
    int rc = export_t4(s.export_t4, s.t4_out);
    keep_free_all();
    return rc;
  }
  if (!s.out)
    cli_usage("--out is required (the folder for logs, runs.csv, summary.md "
              "and plots)");
  if (s.report_only) {
    int rc = report(s.out, s.quiet);
    keep_free_all();
    return rc ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
  }
  if (!s.suite_path)
    cli_usage("--suite is required (e.g. configs/suites/cpu.json)");
  check_runs(&s);
  load_suite(&s);
  replay_logs_per_task(&s);
  if (nranks > 1)
    check_rank_machines(&s);
  /* From here a SIGINT or SIGTERM ends the comparison in order (the run in
   * flight stopped and its log kept, the report written); a second one
   * ends it at once. */
  s.o.stop = cli_stop_on_signals();
  tally tl;
  run_all(&s, &tl);
  if (nranks > 1) {
    cli_mpi_bench_gather(&tl.complete, &tl.failed, &tl.stopped);
    if (rank > 0) {
      keep_free_all();
      return CLI_EXIT_OK;
    }
  }
  if (nranks > 1)
    clear_claims(cli_printf("%s/logs", s.out));
  int rep = report(s.out, s.quiet);
  cli_mpi_end();
  if (tl.failed)
    fprintf(stderr, "%s: %d run%s failed\n", cli_prog(), tl.failed,
            tl.failed > 1 ? "s" : "");
  /* A signal during the report counts too: its files may be unfinished. */
  int sig = tl.stopped ? tl.stopped : cli_stop_signal();
  if (sig) {
    fprintf(stderr,
            "%s: the comparison was interrupted by %s with %d of %d runs "
            "complete; the report covers the logs so far, partial ones "
            "included.  Run the same command again to resume it (complete "
            "logs are skipped, partial ones resumed).\n",
            cli_prog(), cli_signal_name(sig), tl.complete, tl.total);
    keep_free_all();
    return cli_stop_status(sig);
  }
  keep_free_all();
  return tl.failed || rep ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
