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
 * any strategy found, failure share), report.html (the same and more on
 * one self-contained page) and convergence plots drawn by gnuplot.
 * --report-only does just that part.
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
 *
 * This file holds the command line and main; the tool's other parts, one
 * a file, are listed in heron_bench.h.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heron_bench.h"
#include "ranks.h"

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
     "logs/, runs.csv, summary.md, report.html, plots/ and plot.gp go "
     "here",
     ""},
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
    CLI_SAMPLER_OPTION,
    {OPT_BATCH, "batch", "N", "configs measured per round", ""},
    {OPT_TIME_LIMIT, "time-limit", "SECONDS",
     "wall-clock budget of every run, 0 for none", ""},
    CLI_MEASURE_OPTIONS,
    {OPT_REPORT_ONLY, "report-only", NULL,
     "rebuild runs.csv, summary.md, report.html and the plots from the logs "
     "in --out without running anything",
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

void *keep_array(size_t n, size_t size) {
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
      "DIR/summary.md,\n"
      "DIR/report.html (one self-contained page: tables, charts, failures, "
      "best\n"
      "configs) and DIR/plots/<task>-{trials,time}.{svg,png} are rebuilt "
      "from every\n"
      "log in DIR/logs (plots need gnuplot).  A strategy with a model is "
      "labelled\n"
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
      "DIR/score_aggregates.csv and plots/score.svg.  A budget shorter than "
      "one\n--batch (convolution-W6600's, about 13 trials) is spent one config "
      "per round,\neach chosen after every measurement before it.\n"
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
const char **split_list(const char *flag, const char *text, int *n) {
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
    cli_usage("--out is required (the folder for logs, runs.csv, summary.md, "
              "report.html and plots)");
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
