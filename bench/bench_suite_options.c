/* bench/bench_suite_options.c - bench_suite's command line: the option
 * table (also its --help) and the settings it gives (bench_suite.h). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_suite.h"

#ifndef HERON_SOURCE_DIR
#define HERON_SOURCE_DIR "."
#endif

/* ---- Options --------------------------------------------------------------
 * The measuring defaults are those of tools/strategies.sh: fast but honest
 * (every candidate is still checked); the final comparison
 * (bench_suite_compare.c) times the winner and the baselines with their
 * own, longer repeats. */

enum {
  OPT_SUITE = 1,
  OPT_TASKS,
  OPT_TRIALS,
  OPT_STRATEGY,
  OPT_PARAM,
  OPT_MODEL,
  OPT_MODEL_PARAM,
  OPT_THREADS,
  OPT_SEED,
  OPT_OUT,
  OPT_EPILOGUE,
  OPT_NUMBER,
  OPT_REPEAT,
  OPT_MIN_REPEAT_MS,
  OPT_TIMEOUT,
  OPT_BATCH,
  OPT_COMPARE_REPEAT,
  OPT_COMPARE_MS,
  OPT_NO_TUNE,
  OPT_QUIET,
  OPT_PREPACK_WEIGHTS,
  OPT_FP32_DIR,
  OPT_HELP
};

static cli_option options[] = {
    {OPT_SUITE, "suite", "FILE", "suite file (JSON)",
     "configs/suites/cpu.json"},
    {OPT_TASKS, "tasks", "NAME,...", "only these tasks of the suite", "all"},
    {OPT_TRIALS, "trials", "N", "trials per task and thread count", "300"},
    {OPT_STRATEGY, "strategy", "NAME|PATH", "search strategy plugin", "becbo"},
    {OPT_PARAM, "param", "KEY=VALUE", "strategy parameter; repeatable", ""},
    {OPT_MODEL, "model", "NAME|PATH", "cost-model plugin", "none"},
    {OPT_MODEL_PARAM, "model-param", "KEY=VALUE",
     "cost-model parameter; repeatable", ""},
    {OPT_THREADS, "threads", "LIST",
     "thread counts to tune and compare with, e.g. 1,8", "1,<cores>"},
    {OPT_SEED, "seed", "N", "random seed of the strategy", "1"},
    {OPT_OUT, "out", "DIR",
     "logs, emitted kernels, results.csv and results.md go here",
     "runs/bench-suite"},
    {OPT_EPILOGUE, "epilogue", "LIST",
     "fused epilogue of every task: bias, relu or bias,relu", "none"},
    {OPT_NUMBER, "number", "N", "tuning: runs averaged per repeat", "1"},
    {OPT_REPEAT, "repeat", "N", "tuning: repeats per measurement", "2"},
    {OPT_MIN_REPEAT_MS, "min-repeat-ms", "MS",
     "tuning: grow --number until a repeat lasts this long", "50"},
    {OPT_TIMEOUT, "timeout", "SECONDS", "tuning: limit per build and per run",
     "3"},
    {OPT_BATCH, "batch", "N", "tuning: configs measured per round", "10"},
    {OPT_COMPARE_REPEAT, "compare-repeat", "N",
     "comparison: repeats per kernel and baseline; the median counts", "7"},
    {OPT_COMPARE_MS, "compare-ms", "MS",
     "comparison: each repeat calls the kernel for at least this long", "50"},
    {OPT_NO_TUNE, "no-tune", NULL,
     "search nothing: compare the kernels already emitted in --out", ""},
    {OPT_PREPACK_WEIGHTS, "prepack-weights", NULL,
     "the convolutions' weights (in int8 and bf16 suites also the matrix "
     "ops': B, gemv's A) are constant (inference): a kernel that packs them "
     "packs them once, untimed, as the oneDNN baseline reorders its weights "
     "untimed (heron-search --prepack weight)",
     ""},
    {OPT_FP32_DIR, "fp32-dir", "DIR",
     "int8 and bf16 suites: the --out folder of an fp32 run of the same task "
     "names (configs/suites/cpu.json); its kernels are timed in this run too, "
     "for the speedup over Heron-C's own fp32 kernel",
     "none"},
    {OPT_QUIET, "quiet", NULL, "no tuning progress (the per-step lines remain)",
     ""},
    {OPT_HELP, "help", NULL, "print this help and exit", ""},
    {0, NULL, NULL, NULL, ""}};

static void usage(FILE *out) {
  fprintf(out,
          "usage: bench_suite [options]\n\n"
          "Tunes every task of an operator suite with Heron-C and compares "
          "the best kernel\nwith OpenBLAS or oneDNN on the same inputs, on "
          "each thread count.  Prints a\nMarkdown table (also written to "
          "DIR/results.md and DIR/results.csv); the ratio\nis Heron-C's "
          "GFLOP/s over the baseline's (above 1: Heron-C is faster).\n\n"
          "Suite file (shapes name the op's dimensions; trailing ones may be "
          "left out;\ntask names go into file names: 1 to 64 letters, "
          "digits, '.', '_' or '-',\nbeginning with a letter or a digit, "
          "without \"__\"):\n"
          "  {\"name\": ..., \"dtype\": \"fp32\" | \"int8\" | \"bf16\",\n"
          "   \"target\": \"cpu\" | \"amx\" (int8 and bf16 only),\n"
          "   \"tasks\": [{\"name\": \"GEMM\", \"op\": \"gemm\",\n"
          "              \"shape\": {\"M\": 1024, \"N\": 1024, \"K\": 1024}}, "
          "...]}\n\n"
          "options:\n");
  cli_print_options(out, options);
  fprintf(out, "\nA SIGINT or SIGTERM (Ctrl-C) stops the tuning run in "
               "flight in order, keeping\nits log; the rows that finished "
               "are compared and written, and the same\ncommand again "
               "resumes the rest.  A second signal ends it at once.\n"
               "\nExit status: 0 when every task was compared and agreed "
               "with its baseline;\n1 when a task failed or MISMATCHed (the "
               "others still run); 2 on a usage error;\n130 / 143 when a "
               "SIGINT / SIGTERM interrupted it.\n");
}

int cpu_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

static void parse_threads(settings *s, const char *text) {
  s->nthreads = 0;
  char *copy = cli_strdup(text), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (s->nthreads == MAX_THREADS)
      cli_usage("--threads: at most %d thread counts", MAX_THREADS);
    s->threads[s->nthreads++] = (int)cli_int("--threads", tok, 1, 4096);
  }
  if (s->nthreads == 0)
    cli_usage("--threads: '%s' names no thread count", text);
}

/* The same items heron_task_create accepts; checked here so that a typo
 * stops the benchmark before the first hour of tuning, not per task. */
static void parse_epilogue(settings *s, const char *text) {
  s->bias = s->relu = 0;
  if (!*text || !strcmp(text, "none"))
    return;
  char *copy = cli_strdup(text), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (!strcmp(tok, "bias") && !s->bias)
      s->bias = 1;
    else if (!strcmp(tok, "relu") && !s->relu)
      s->relu = 1;
    else
      cli_usage("--epilogue: '%s' in '%s' is not expected (a list of bias, "
                "relu; or none)",
                tok, text);
  }
}

void parse_args(settings *s, int argc, char **argv) {
  memset(s, 0, sizeof *s);
  s->suite = NULL;
  s->out = "runs/bench-suite";
  s->epilogue = "";
  s->strategy = "becbo";
  s->trials = 300;
  s->batch = 10;
  s->number = 1;
  s->repeat = 2;
  s->min_repeat_ms = 50;
  s->timeout = 3;
  s->compare_repeat = 7;
  s->compare_ms = 50;
  s->seed = 1;
  int cores = cpu_count();
  s->nthreads = 1;
  s->threads[0] = 1;
  if (cores > 1)
    s->threads[s->nthreads++] = cores;
  cli_parser p;
  cli_parser_init(&p, options, argc, argv);
  const char *v;
  int id;
  while ((id = cli_next(&p, &v, NULL)) != 0) {
    switch (id) {
    case OPT_SUITE:
      s->suite = v;
      break;
    case OPT_TASKS:
      s->tasks = v;
      break;
    case OPT_TRIALS:
      s->trials = (int)cli_int("--trials", v, 1, 1000000);
      break;
    case OPT_STRATEGY:
      s->strategy = v;
      break;
    case OPT_PARAM:
      if (s->nsparams == 64)
        cli_usage("--param: at most 64");
      s->sparams[s->nsparams++] = cli_param("--param", v);
      break;
    case OPT_MODEL:
      s->model = strcmp(v, "none") ? v : NULL;
      break;
    case OPT_MODEL_PARAM:
      if (s->nmparams == 64)
        cli_usage("--model-param: at most 64");
      s->mparams[s->nmparams++] = cli_param("--model-param", v);
      break;
    case OPT_THREADS:
      parse_threads(s, v);
      break;
    case OPT_SEED:
      s->seed = cli_u64("--seed", v);
      break;
    case OPT_OUT:
      if (!*v)
        cli_usage("--out: empty folder name");
      s->out = v;
      break;
    case OPT_EPILOGUE:
      s->epilogue = v;
      parse_epilogue(s, v);
      break;
    case OPT_NUMBER:
      s->number = (int)cli_int("--number", v, 1, 1000000);
      break;
    case OPT_REPEAT:
      s->repeat = (int)cli_int("--repeat", v, 1, 1000);
      break;
    case OPT_MIN_REPEAT_MS:
      s->min_repeat_ms = cli_double("--min-repeat-ms", v, 0, 1e6);
      break;
    case OPT_TIMEOUT:
      s->timeout = cli_double("--timeout", v, 0.001, 1e6);
      break;
    case OPT_BATCH:
      s->batch = (int)cli_int("--batch", v, 1, 100000);
      break;
    case OPT_COMPARE_REPEAT:
      s->compare_repeat = (int)cli_int("--compare-repeat", v, 1, 99);
      break;
    case OPT_COMPARE_MS:
      s->compare_ms = cli_double("--compare-ms", v, 0, 1e5);
      break;
    case OPT_NO_TUNE:
      s->no_tune = 1;
      break;
    case OPT_PREPACK_WEIGHTS:
      s->prepack_weights = 1;
      break;
    case OPT_QUIET:
      s->quiet = 1;
      break;
    case OPT_FP32_DIR:
      s->fp32_dir = strcmp(v, "none") ? v : NULL;
      break;
    case OPT_HELP:
      usage(stdout);
      exit(CLI_EXIT_OK);
    }
  }
  if (!s->suite) {
    /* The default names the source tree's suite, found from the current
     * folder or, failing that, from the tree this program was built in. */
    s->suite = "configs/suites/cpu.json";
    if (access(s->suite, R_OK) != 0)
      s->suite = HERON_SOURCE_DIR "/configs/suites/cpu.json";
  }
  /* A misspelt plugin is a usage error now, not a failed row per task. */
  char path[4096];
  heron_error err;
  heron_error_clear(&err);
  if (!s->no_tune &&
      heron_plugin_resolve(s->strategy, "strategy", path, sizeof path, &err))
    cli_usage("--strategy: %s", err.text);
  heron_error_clear(&err);
  if (!s->no_tune && s->model &&
      heron_plugin_resolve(s->model, "model", path, sizeof path, &err))
    cli_usage("--model: %s", err.text);
  /* Cost-model parameters without a cost model would be dropped unread. */
  if (s->nmparams && !s->model)
    cli_usage("--model-param %s=%s: no --model to give it to (a cost-model "
              "parameter needs a cost-model plugin: --model NAME)",
              s->mparams[0].key, s->mparams[0].value);
}
