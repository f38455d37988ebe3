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
 *
 * This file holds the flags, --help, the output and main; the config file
 * and the checks before a run are the tool's other files (heron_search.h).
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heron_search.h"
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

void param_push(param_list *l, heron_param p) {
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
      /* Read by the measuring code of every rank (core/replay/meter.c). */
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
