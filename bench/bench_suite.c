/* bench/bench_suite.c - the best kernel Heron-C finds for each task of an
 * operator suite, against the library a user would otherwise call, both
 * measured in this run on the same inputs, on one thread and on all cores.
 *
 *   bench_suite [--suite configs/suites/cpu.json] [--tasks GEMM,C2D]
 *               [--trials 300] [--strategy becbo] [--model NAME]
 *               [--threads 1,<cores>] [--out runs/bench-suite] [--no-tune]
 *
 * The run has two phases.  First every (task, thread count) pair is tuned
 * with heron_tune, each in a child process, with its own JSON Lines log
 * (resumed when it exists, so a killed benchmark continues and a complete
 * one is not searched again) and its best kernel emitted into its own
 * folder.  Then, in this process, each emitted kernel is compiled, loaded
 * and timed against its baselines back to back on the same inputs, the
 * outputs are compared, and the table of ratios is printed and written to
 * results.md and results.csv.
 *
 * A SIGINT or SIGTERM (cli_stop_on_signals) stops the tuning run in flight
 * in order, its log kept; no other row is tuned, the rows tuned before it
 * are compared, the others are written as interrupted, and the exit status
 * is 128 + the signal.  The same command again resumes the logs.  Task
 * names go into file names, so they follow heron-bench's rule (CLI_NAME_RULE).
 *
 * The two phases, and the child processes, exist because of fork: the
 * tuner forks a runner that forks a worker per kernel, and a fork of a
 * process whose OpenMP runtime has started its thread pool inherits a pool
 * that does not exist, so the kernel's first parallel region in the worker
 * waits forever.  This process starts OpenMP (our kernels, oneDNN, the
 * baselines' epilogue loops) only after the last tuning has ended, and a
 * cost model's OpenMP pool lives and dies in its own child.
 *
 * Baselines: OpenBLAS for the matrix ops (gemm: sgemm, and for M or N of 1
 * also sgemv, the faster counting; bmm: sgemm per batch entry; gemv:
 * sgemv; scan: sgemm with the triangular matrix, and a plain prefix-sum
 * loop as a second figure).  fp32 gemm, bmm and gemv also time oneDNN's
 * fp32 matmul, and on an AVX-512 CPU OpenBLAS's SkylakeX kernels as well
 * as the ones it chose itself (in a child process: see "OpenBLAS's kernel
 * sets"); the fastest of these is the baseline, the other library the
 * second figure.  oneDNN for the convolutions
 * (c1d, c2d, dil, c3d: convolution; t2d: deconvolution), once on the plain
 * layouts the user's tensors are in and once on oneDNN's preferred blocked
 * layouts with the reorders left out of the timing; the ratio uses the
 * stronger one.  FLOPs are heron_task_flops for every figure.
 */
#include <cblas.h>
#include <ctype.h>
#include <dlfcn.h>
#include <dnnl.h>
#include <dnnl_debug.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <omp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "heron/heron.h"
#include "timing.h"

/* OpenBLAS's thread control and the name of the kernel set it chose when
 * it loaded; not in cblas.h on every distribution. */
void openblas_set_num_threads(int);
char *openblas_get_corename(void);

#ifndef HERON_SOURCE_DIR
#define HERON_SOURCE_DIR "."
#endif

enum { MAX_TASKS = 256, MAX_THREADS = 16, MAX_DIMS = 16 };

/* ---- Options --------------------------------------------------------------
 * The measuring defaults are those of bench/strategies.sh: fast but honest
 * (every candidate is still checked); the final comparison below times the
 * winner and the baselines with their own, longer repeats. */

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

typedef struct settings {
  const char *suite, *tasks, *out, *epilogue, *strategy, *model;
  const char *fp32_dir; /* --fp32-dir */
  int trials, batch, number, repeat, compare_repeat, no_tune, quiet;
  int prepack_weights; /* --prepack-weights */
  double min_repeat_ms, timeout, compare_ms;
  uint64_t seed;
  heron_param sparams[64], mparams[64];
  int nsparams, nmparams;
  int threads[MAX_THREADS], nthreads;
  int bias, relu;                    /* from --epilogue */
  const volatile sig_atomic_t *stop; /* cli_stop_on_signals's flag */
} settings;

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

static int cpu_count(void) {
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

static void parse_args(settings *s, int argc, char **argv) {
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

/* ---- The suite ----------------------------------------------------------- */

typedef struct suite_task {
  const char *name;
  const char *op;
  int64_t shape[MAX_DIMS];
  int nshape;
  const char *error; /* why the task cannot even be created (unknown op) */
} suite_task;

typedef struct suite {
  const char *name;
  const char *dtype;  /* fp32 (default), int8 or bf16 */
  const char *target; /* cpu (default) or amx */
  suite_task tasks[MAX_TASKS];
  int ntasks;
} suite;

/* Turns the shape object {"M": 1024, ...} into the op's --shape order.
 * Trailing dimensions may be left out (the op's defaults fill them); one
 * left out before a given one, or a name the op does not have, is a usage
 * error naming both. */
static void suite_shape(const char *file, suite_task *t, json_t *shape) {
  const char *const *names;
  int nd;
  heron_error err;
  heron_error_clear(&err);
  if (heron_op_dims(t->op, &names, &nd, &err)) {
    /* An op this build does not have yet fails its rows, not the run. */
    t->error = cli_printf("%s", err.text);
    return;
  }
  int64_t vals[MAX_DIMS] = {0};
  int have[MAX_DIMS] = {0}, last = -1;
  char known[256];
  size_t len = 0;
  known[0] = '\0';
  for (int d = 0; d < nd && len < sizeof known; d++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s",
                            d ? ", " : "", names[d]);
  if (json_is_array(shape)) {
    /* Also accepted: the values in --shape order. */
    if ((int)json_array_size(shape) > nd)
      cli_usage("--suite %s: task %s: %s takes at most %d dimensions (%s)",
                file, t->name, t->op, nd, known);
    for (int d = 0; d < (int)json_array_size(shape); d++) {
      json_t *v = json_array_get(shape, (size_t)d);
      if (!json_is_integer(v) || json_integer_value(v) < 0)
        cli_usage("--suite %s: task %s: dimension %s is not a non-negative "
                  "integer",
                  file, t->name, names[d]);
      vals[d] = json_integer_value(v);
      have[d] = 1;
      last = d;
    }
  } else if (json_is_object(shape)) {
    const char *key;
    json_t *v;
    json_object_foreach(shape, key, v) {
      int d = -1;
      for (int i = 0; i < nd && d < 0; i++)
        if (!strcmp(names[i], key))
          d = i;
      for (int i = 0; i < nd && d < 0; i++)
        if (!strcasecmp(names[i], key))
          d = i;
      if (d < 0)
        cli_usage("--suite %s: task %s: %s has no dimension '%s' (it has %s)",
                  file, t->name, t->op, key, known);
      if (!json_is_integer(v) || json_integer_value(v) < 0)
        cli_usage("--suite %s: task %s: dimension %s is not a non-negative "
                  "integer",
                  file, t->name, key);
      vals[d] = json_integer_value(v);
      have[d] = 1;
      if (d > last)
        last = d;
    }
  } else {
    cli_usage("--suite %s: task %s: \"shape\" must be an object of named "
              "dimensions",
              file, t->name);
  }
  char text[512];
  len = 0;
  text[0] = '\0';
  for (int d = 0; d <= last; d++) {
    if (!have[d])
      cli_usage("--suite %s: task %s: dimension %s of %s is missing (only "
                "trailing dimensions may be left out; %s has %s)",
                file, t->name, names[d], t->op, t->op, known);
    len += (size_t)snprintf(text + len, sizeof text - len, "%s%lld",
                            d ? "," : "", (long long)vals[d]);
  }
  if (heron_parse_shape(t->op, text, t->shape, MAX_DIMS, &t->nshape, &err))
    cli_usage("--suite %s: task %s: %s", file, t->name, err.text);
}

static const char *json_str(const char *file, json_t *o, const char *key,
                            const char *what) {
  json_t *v = json_object_get(o, key);
  if (!v)
    return NULL;
  if (!json_is_string(v))
    cli_usage("--suite %s: %s\"%s\" must be a string", file, what, key);
  return cli_strdup(json_string_value(v));
}

static int name_listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && !strncasecmp(p, name, n))
      return 1;
    p = end ? end + 1 : p + len;
  }
  return 0;
}

/* A suite's keys and a task's (the format in --help): any other is
 * refused, naming the file, the task and the key, as a misspelt or
 * misplaced key would silently fall back to a default ("dtype" in a task
 * running the suite's fp32). */
static const char *const suite_keys[] = {"name",   "description", "dtype",
                                         "target", "tasks",       NULL};
static const char *const task_keys[] = {"name", "op", "shape", NULL};

/* `who` names the task: its name, or tasks[i] without one. */
static void check_task_keys(const char *file, json_t *jt, const char *who) {
  const char *key = cli_json_unknown_key(jt, task_keys);
  if (!key)
    return;
  if (!strcmp(key, "dtype") || !strcmp(key, "target"))
    cli_usage("--suite %s: task %s: unknown key \"%s\": \"%s\" belongs to "
              "the whole suite (its top level: bench_suite compares one "
              "dtype and target per suite), not to one task",
              file, who, key, key);
  if (!strcmp(key, "t1") || !strcmp(key, "t4"))
    cli_usage("--suite %s: task %s: unknown key \"%s\": spaces of T1 "
              "files have no library to compare with (heron-bench runs "
              "them)",
              file, who, key);
  cli_usage("--suite %s: task %s: unknown key \"%s\" (a task has "
            "\"name\", \"op\" and \"shape\")",
            file, who, key);
}

static void load_suite(const settings *s, suite *su) {
  json_t *root = cli_json_load("--suite", s->suite);
  if (!json_is_object(root))
    cli_usage("--suite %s: expected a JSON object with \"tasks\"", s->suite);
  const char *key = cli_json_unknown_key(root, suite_keys);
  if (key)
    cli_usage("--suite %s: unknown key \"%s\" (a suite has \"name\", "
              "\"description\", \"dtype\", \"target\" and \"tasks\")",
              s->suite, key);
  su->name = json_str(s->suite, root, "name", "");
  if (!su->name)
    su->name = cli_strdup(s->suite);
  const char *dtype = json_str(s->suite, root, "dtype", "");
  const char *target = json_str(s->suite, root, "target", "");
  su->dtype = dtype ? dtype : "fp32";
  su->target = target ? target : "cpu";
  /* The baselines are CPU libraries: OpenBLAS and oneDNN in fp32, oneDNN
   * in int8 and bf16. */
  if (strcmp(su->dtype, "fp32") && strcmp(su->dtype, "int8") &&
      strcmp(su->dtype, "bf16"))
    cli_usage("--suite %s: dtype '%s': bench_suite compares fp32, int8 or "
              "bf16",
              s->suite, su->dtype);
  if (strcmp(su->target, "cpu") && strcmp(su->target, "amx"))
    cli_usage("--suite %s: target '%s': bench_suite compares the cpu and amx "
              "targets only",
              s->suite, su->target);
  if (!strcmp(su->target, "amx") && !strcmp(su->dtype, "fp32"))
    cli_usage("--suite %s: the amx target takes int8 or bf16, not fp32",
              s->suite);
  if (strcmp(su->dtype, "fp32") && (s->bias || s->relu))
    cli_usage("--epilogue: the %s suite %s is compared without an epilogue",
              su->dtype, s->suite);
  if (s->fp32_dir && !strcmp(su->dtype, "fp32"))
    cli_usage("--fp32-dir: the suite %s is fp32 already", s->suite);
  json_t *tasks = json_object_get(root, "tasks");
  if (!json_is_array(tasks) || json_array_size(tasks) == 0)
    cli_usage("--suite %s: \"tasks\" must be a non-empty array", s->suite);
  size_t i;
  json_t *jt;
  char all[1024];
  size_t len = 0;
  all[0] = '\0';
  su->ntasks = 0;
  json_array_foreach(tasks, i, jt) {
    char what[64];
    snprintf(what, sizeof what, "tasks[%zu]: ", i);
    if (!json_is_object(jt))
      cli_usage("--suite %s: %sexpected an object", s->suite, what);
    suite_task t = {0};
    t.name = json_str(s->suite, jt, "name", what);
    check_task_keys(s->suite, jt,
                    t.name && *t.name ? t.name : cli_printf("tasks[%zu]", i));
    t.op = json_str(s->suite, jt, "op", what);
    if (!t.name || !*t.name || !t.op)
      cli_usage("--suite %s: %s\"name\" and \"op\" are required", s->suite,
                what);
    if (!cli_name_ok(t.name, strlen(t.name)))
      cli_usage("--suite %s: %stask name '%s' cannot go into file names: a "
                "task name must be %s",
                s->suite, what, t.name, CLI_NAME_RULE);
    for (int k = 0; k < su->ntasks; k++)
      if (!strcasecmp(su->tasks[k].name, t.name))
        cli_usage("--suite %s: task name '%s' is used twice", s->suite, t.name);
    json_t *shape = json_object_get(jt, "shape");
    if (!shape)
      cli_usage("--suite %s: task %s: \"shape\" is required", s->suite, t.name);
    suite_shape(s->suite, &t, shape);
    if (len < sizeof all)
      len += (size_t)snprintf(all + len, sizeof all - len, "%s%s",
                              i ? ", " : "", t.name);
    if (s->tasks && !name_listed(s->tasks, t.name))
      continue;
    if (su->ntasks == MAX_TASKS)
      cli_usage("--suite %s: more than %d tasks", s->suite, MAX_TASKS);
    su->tasks[su->ntasks++] = t;
  }
  json_decref(root);
  /* Every name in --tasks must exist: a typo would silently skip a task. */
  if (s->tasks) {
    char *copy = cli_strdup(s->tasks), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
      int found = 0;
      for (int k = 0; k < su->ntasks; k++)
        found |= !strcasecmp(su->tasks[k].name, tok);
      if (!found)
        cli_usage("--tasks: no task '%s' in %s (it has %s)", tok, s->suite,
                  all);
    }
    if (su->ntasks == 0)
      cli_usage("--tasks: '%s' selects no task", s->tasks);
  }
}

/* ---- Geometry of a task ---------------------------------------------------
 * What the buffers and the baselines need, read from the task's key (whose
 * shape has the defaults filled in) and the op's dimension names. */

enum { FAM_NONE, FAM_GEMM, FAM_BMM, FAM_GEMV, FAM_SCAN, FAM_CONV, FAM_DECONV };

typedef struct geom {
  int fam;
  int64_t M, N, K, B; /* matrix ops */
  int sp;             /* convolutions: spatial rank */
  int cl;             /* convolutions: channels last (NWC, NHWC, NDHWC) */
  int64_t n, ci, co, in[3], k[3], out[3], stride, pad, dil, opad;
  int64_t in_elems[2], out_elems;
  int64_t nch, inner; /* bias of output element i: bias[(i / inner) % nch] */
  double red;         /* reduction length: terms per output element */
} geom;

static const struct {
  const char *op;
  int fam, sp, cl;
} families[] = {{"gemm", FAM_GEMM, 0, 0},     {"bmm", FAM_BMM, 0, 0},
                {"gemv", FAM_GEMV, 0, 0},     {"scan", FAM_SCAN, 0, 0},
                {"c1d", FAM_CONV, 1, 0},      {"c2d", FAM_CONV, 2, 0},
                {"dil", FAM_CONV, 2, 0},      {"c3d", FAM_CONV, 3, 0},
                {"t2d", FAM_DECONV, 2, 0},    {"c1d_nwc", FAM_CONV, 1, 1},
                {"c2d_nhwc", FAM_CONV, 2, 1}, {"c3d_ndhwc", FAM_CONV, 3, 1}};

/* Value of dimension `name` of the task, or -1 when the op has none. */
static int64_t dim(const char *const *names, int nd, const int64_t *s, int ns,
                   const char *name) {
  for (int d = 0; d < nd && d < ns; d++)
    if (!strcmp(names[d], name))
      return s[d];
  return -1;
}

static int make_geom(const heron_task *t, geom *g, char *why, size_t cap) {
  memset(g, 0, sizeof *g);
  const char *op = heron_task_op(t);
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    if (!strcmp(families[i].op, op)) {
      g->fam = families[i].fam;
      g->sp = families[i].sp;
      g->cl = families[i].cl;
    }
  if (g->fam == FAM_NONE)
    return snprintf(why, cap, "no baseline for op %s", op), -1;
  /* The key is "op/d1,d2,.../dtype/target[/epilogue]". */
  const char *p = strchr(heron_task_key(t), '/');
  int64_t s[MAX_DIMS];
  int ns = 0;
  while (p && (*p == '/' || *p == ',') && ns < MAX_DIMS) {
    char *end;
    s[ns++] = strtoll(p + 1, &end, 10);
    p = *end == ',' ? end : NULL;
  }
  const char *const *names;
  int nd;
  if (heron_op_dims(op, &names, &nd, NULL) || ns != nd)
    return snprintf(why, cap, "cannot read the shape of %s", heron_task_key(t)),
           -1;
#define D(name) dim(names, nd, s, ns, name)
  switch (g->fam) {
  case FAM_GEMM:
  case FAM_SCAN:
    g->B = 1, g->M = D("M"), g->N = D("N"), g->K = D("K");
    break;
  case FAM_BMM:
    g->B = D("B"), g->M = D("M"), g->N = D("N"), g->K = D("K");
    break;
  case FAM_GEMV:
    g->B = 1, g->M = D("M"), g->N = 1, g->K = D("K");
    break;
  default: {
    static const char *const sp_names[3][3] = {
        {"W"}, {"H", "W"}, {"D", "H", "W"}};
    static const char *const k_names[3][3] = {
        {"KW"}, {"KH", "KW"}, {"KD", "KH", "KW"}};
    g->n = D("N"), g->ci = D("CI"), g->co = D("CO");
    g->stride = D("stride"), g->pad = D("pad"), g->dil = D("dilation");
    g->opad = g->fam == FAM_DECONV ? D("output_padding") : 0;
    int64_t sane = g->n | g->ci | g->co | g->stride | g->pad | g->dil | g->opad;
    for (int i = 0; i < g->sp; i++) {
      g->in[i] = D(sp_names[g->sp - 1][i]);
      g->k[i] = D(k_names[g->sp - 1][i]);
      sane |= g->in[i] | g->k[i];
      g->out[i] = g->fam == FAM_DECONV
                      ? (g->in[i] - 1) * g->stride - 2 * g->pad +
                            g->dil * (g->k[i] - 1) + g->opad + 1
                      : (g->in[i] + 2 * g->pad - g->dil * (g->k[i] - 1) - 1) /
                                g->stride +
                            1;
    }
    if (sane < 0)
      return snprintf(why, cap, "%s lacks a dimension the baseline needs", op),
             -1;
  }
  }
#undef D
  if (g->fam <= FAM_SCAN) {
    if ((g->M | g->N | g->K | g->B) < 0)
      return snprintf(why, cap, "%s lacks a dimension the baseline needs", op),
             -1;
    g->in_elems[0] = g->B * g->M * g->K;
    g->in_elems[1] = g->fam == FAM_GEMV ? g->K : g->B * g->K * g->N;
    g->out_elems = g->B * g->M * g->N;
    /* The channel (bias) axis is the output's last dimension: the column
     * of gemm and bmm, the row of gemv. */
    g->nch = g->fam == FAM_GEMV ? g->M : g->N;
    g->inner = 1;
  } else {
    int64_t in = 1, k = 1, out = 1;
    for (int i = 0; i < g->sp; i++)
      in *= g->in[i], k *= g->k[i], out *= g->out[i];
    g->in_elems[0] = g->n * g->ci * in;
    g->in_elems[1] = g->co * g->ci * k;
    g->out_elems = g->n * g->co * out;
    g->nch = g->co;
    g->inner = g->cl ? 1 : out;
  }
  g->red = heron_task_flops(t) / 2 / (double)g->out_elems;
  return 0;
}

/* ---- Buffers ------------------------------------------------------------- */

/* 64-byte-aligned memory for `bytes` bytes; exits when out of memory. */
static void *balloc(int64_t bytes) {
  size_t n = ((size_t)(bytes > 0 ? bytes : 1) + 63) / 64 * 64;
  void *p = aligned_alloc(64, n);
  if (!p) {
    fprintf(stderr, "bench_suite: out of memory (%zu bytes)\n", n);
    exit(CLI_EXIT_FAILURE);
  }
  return p;
}

static float *falloc(int64_t n) { return balloc(n * (int64_t)sizeof(float)); }

/* The next value of the xorshift64* stream in *x. */
static uint64_t next_random(uint64_t *x) {
  *x ^= *x >> 12, *x ^= *x << 25, *x ^= *x >> 27;
  return *x * 0x2545F4914F6CDD1Dull;
}

/* Deterministic values in [-1, 1], the same on every run. */
static void fill_random(float *p, int64_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < n; i++)
    p[i] = (float)((double)(next_random(&x) >> 11) * 0x1p-52 - 1);
}

static void fill_nan(float *p, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    p[i] = NAN;
}

/* ---- Heron-C's kernel ---------------------------------------------------- */

typedef void (*kernel_fn)(void *const *);

typedef struct heron_ctx {
  kernel_fn k;
  void *bufs[4];
} heron_ctx;

static void heron_call(void *p) {
  heron_ctx *c = p;
  c->k(c->bufs);
}

/* Single quotes for sh, with any single quote in s escaped. */
static void shell_quote(char *out, size_t cap, const char *s) {
  size_t len = 0;
  if (cap < 3)
    return;
  out[len++] = '\'';
  for (; *s && len + 6 < cap; s++) {
    if (*s == '\'') {
      memcpy(out + len, "'\\''", 4);
      len += 4;
    } else {
      out[len++] = *s;
    }
  }
  out[len++] = '\'';
  out[len] = '\0';
}

/* Compiles dir/kernel.c into dir/kernel.so with the flags the tuner used
 * and loads it. */
static kernel_fn load_kernel(const char *dir, const char *cflags, void **dl,
                             char *why, size_t cap) {
  char src[4200], so[4200], log[4200], qsrc[8600], qso[8600], qlog[8600];
  snprintf(src, sizeof src, "%s/kernel.c", dir);
  snprintf(so, sizeof so, "%s/kernel.so", dir);
  snprintf(log, sizeof log, "%s/kernel-build.log", dir);
  if (access(src, R_OK) != 0) {
    snprintf(why, cap, "no emitted kernel %.300s%s", src,
             " (run without --no-tune first)");
    return NULL;
  }
  shell_quote(qsrc, sizeof qsrc, src);
  shell_quote(qso, sizeof qso, so);
  shell_quote(qlog, sizeof qlog, log);
  const char *cc = getenv("CC");
  char cmd[30000];
  snprintf(cmd, sizeof cmd, "%s %s -o %s %s 2>%s", cc && *cc ? cc : "cc",
           cflags, qso, qsrc, qlog);
  if (system(cmd) != 0) {
    snprintf(why, cap, "cannot build the emitted kernel (see %.300s)", log);
    return NULL;
  }
  /* dlopen needs a slash to take the name as a path. */
  char path[4300];
  snprintf(path, sizeof path, "%s%s", so[0] == '/' ? "" : "./", so);
  *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  kernel_fn k = NULL;
  if (*dl) {
    void *sym = dlsym(*dl, "heron_kernel");
    memcpy(&k, &sym, sizeof k);
  }
  if (!k) {
    snprintf(why, cap, "cannot load %.200s: %.160s", so, dlerror());
    if (*dl)
      dlclose(*dl);
    *dl = NULL;
  }
  return k;
}

/* When the kernel exports heron_prepack (a task with prepacked inputs):
 * packs each input it takes packed into a new buffer, packed[i], of
 * heron_prepacked_elems(i) elements of esize[i] bytes (the input's own
 * type), and puts that in bufs[i]. */
static void prepack_inputs(void *dl, void **bufs, void **packed,
                           const int esize[2]) {
  void *pe = dlsym(dl, "heron_prepacked_elems");
  void *pk = dlsym(dl, "heron_prepack");
  if (!pe || !pk)
    return;
  int64_t (*elems)(int);
  void (*pack)(int, const void *, void *);
  memcpy(&elems, &pe, sizeof elems);
  memcpy(&pack, &pk, sizeof pack);
  for (int i = 0; i < 2; i++) {
    int64_t n = elems(i);
    if (n <= 0)
      continue;
    packed[i] = balloc(n * esize[i]); /* exits when out of memory */
    pack(i, bufs[i], packed[i]);
    bufs[i] = packed[i];
  }
}

/* ---- OpenBLAS baselines -------------------------------------------------- */

typedef struct blas_ctx {
  const geom *g;
  const float *a, *b, *bias;
  float *out;
  int relu;
} blas_ctx;

/* What a user of BLAS writes after the call: one pass adding the bias of
 * each output element's channel and clamping at zero. */
static void epilogue_pass(const blas_ctx *c) {
  const geom *g = c->g;
  if (!c->bias && !c->relu)
    return;
  float *out = c->out;
  const float *bias = c->bias;
  int relu = c->relu;
  int64_t n = g->out_elems, nch = g->nch;
  /* One parallel region, each thread a contiguous range: a region per row
   * would cost more than the pass itself on small outputs. */
#pragma omp parallel if (n >= 16384)
  {
    int nt = omp_get_num_threads(), id = omp_get_thread_num();
    int64_t lo = n * id / nt, hi = n * (id + 1) / nt, j = lo % nch;
    for (int64_t i = lo; i < hi; i++) {
      float v = out[i] + (bias ? bias[j] : 0.0f);
      out[i] = relu && !(v > 0) ? 0.0f : v;
      if (++j == nch)
        j = 0;
    }
  }
}

static void blas_call(void *p) {
  blas_ctx *c = p;
  const geom *g = c->g;
  int M = (int)g->M, N = (int)g->N, K = (int)g->K;
  switch (g->fam) {
  case FAM_GEMM:
  case FAM_SCAN:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, c->a,
                K, c->b, N, 0.0f, c->out, N);
    break;
  case FAM_BMM:
    for (int64_t i = 0; i < g->B; i++)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f,
                  c->a + i * M * K, K, c->b + i * K * N, N, 0.0f,
                  c->out + i * M * N, N);
    break;
  case FAM_GEMV:
    cblas_sgemv(CblasRowMajor, CblasNoTrans, M, K, 1.0f, c->a, K, c->b, 1, 0.0f,
                c->out, 1);
    break;
  }
  epilogue_pass(c);
}

/* A GEMM with M or N of 1 as the matrix-vector product it is:
 * C[1,N] = A[1,K] * B[K,N] is y = B^T x, C[M,1] = A[M,K] * B[K,1] is y =
 * A x.  A user picks whichever of sgemm and sgemv is faster. */
static void blas_gemv_call(void *p) {
  blas_ctx *c = p;
  const geom *g = c->g;
  int M = (int)g->M, N = (int)g->N, K = (int)g->K;
  if (M == 1)
    cblas_sgemv(CblasRowMajor, CblasTrans, K, N, 1.0f, c->b, N, c->a, 1, 0.0f,
                c->out, 1);
  else
    cblas_sgemv(CblasRowMajor, CblasNoTrans, M, K, 1.0f, c->a, K, c->b, 1, 0.0f,
                c->out, 1);
  epilogue_pass(c);
}

/* A STREAM-like copy, c[i] = a[i] over n floats on the row's threads: the
 * bandwidth a memory-bound kernel can hope for, timed beside it. */
typedef struct copy_ctx {
  const float *a;
  float *c;
  int64_t n;
} copy_ctx;

static void copy_call(void *p) {
  copy_ctx *c = p;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < c->n; i++)
    c->c[i] = c->a[i];
}

/* SCAN as a user writes it without a library: a running sum per row, the
 * rows shared among the threads. */
static void prefix_call(void *p) {
  blas_ctx *c = p;
  const geom *g = c->g;
  int64_t M = g->M, N = g->N, K = g->K;
  const float *a = c->a;
  float *out = c->out;
  int relu = c->relu;
#pragma omp parallel for schedule(static) if (M * N >= 16384)
  for (int64_t m = 0; m < M; m++) {
    float sum = 0;
    for (int64_t n = 0; n < N; n++) {
      if (n < K)
        sum += a[m * K + n];
      out[m * N + n] = relu && !(sum > 0) ? 0.0f : sum;
    }
  }
}

/* ---- oneDNN baselines ---------------------------------------------------- */

static dnnl_engine_t dnn_engine;
static dnnl_stream_t dnn_stream;

typedef struct dnn_ctx {
  dnnl_primitive_t prim;
  dnnl_memory_t mem[4]; /* src, weights, bias, dst; NULL when unused */
  dnnl_exec_arg_t args[4];
  int nargs;
  /* ReLU as a second primitive, in place on dst (relu mode DNN_RELU_APART),
   * or NULL. */
  dnnl_primitive_t relu;
  dnnl_exec_arg_t relu_args[2];
  /* With dnn_reorder_in_call: the reorders of the plain user source into
   * the primitive's layout (pre) and of its output back into the plain
   * user destination (post), run in every call, or NULL. */
  dnnl_primitive_t pre, post;
  dnnl_exec_arg_t pre_args[2], post_args[2];
  dnnl_memory_t user[2]; /* the plain source and destination they use */
  char impl[40];         /* oneDNN's implementation ("jit:avx2", "ref:any") */
} dnn_ctx;

/* How a ReLU epilogue reaches oneDNN: as a post-op of the convolution, or
 * as an eltwise primitive after it.  The post-op is what oneDNN advises,
 * but some of its implementations apply post-ops on a slow path (the
 * gemm-based deconvolution, for one), so the bench takes the faster. */
enum { DNN_RELU_NONE, DNN_RELU_FUSED, DNN_RELU_APART };

static void dnn_call(void *p) {
  dnn_ctx *c = p;
  if (c->pre)
    dnnl_primitive_execute(c->pre, dnn_stream, 2, c->pre_args);
  dnnl_primitive_execute(c->prim, dnn_stream, c->nargs, c->args);
  if (c->relu)
    dnnl_primitive_execute(c->relu, dnn_stream, 2, c->relu_args);
  if (c->post)
    dnnl_primitive_execute(c->post, dnn_stream, 2, c->post_args);
  dnnl_stream_wait(dnn_stream);
}

static void dnn_free(dnn_ctx *c) {
  if (c->pre)
    dnnl_primitive_destroy(c->pre);
  if (c->post)
    dnnl_primitive_destroy(c->post);
  for (int i = 0; i < 2; i++)
    if (c->user[i])
      dnnl_memory_destroy(c->user[i]);
  if (c->relu)
    dnnl_primitive_destroy(c->relu);
  if (c->prim)
    dnnl_primitive_destroy(c->prim);
  for (int i = 0; i < 4; i++)
    if (c->mem[i])
      dnnl_memory_destroy(c->mem[i]);
  memset(c, 0, sizeof *c);
}

#define DNN_TRY(call)                                                          \
  do {                                                                         \
    dnnl_status_t st_ = (call);                                                \
    if (st_ != dnnl_success) {                                                 \
      snprintf(why, cap, "oneDNN: %s failed: %s", #call,                       \
               dnnl_status2str(st_));                                          \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

/* The row-major tag of rank nd (NCW, NCHW, NCDHW; a convolution's plain
 * weights OIW, OIHW, OIDHW), and the activations' and outputs' plain
 * layout of g: those, or with the channels last NWC, NHWC, NDHWC. */
static dnnl_format_tag_t dnn_nc_tag(int nd) {
  return nd == 3 ? dnnl_abc : nd == 4 ? dnnl_abcd : dnnl_abcde;
}

static dnnl_format_tag_t dnn_act_tag(const geom *g) {
  int nd = g->sp + 2;
  if (g->cl)
    return nd == 3 ? dnnl_acb : nd == 4 ? dnnl_acdb : dnnl_acdeb;
  return dnn_nc_tag(nd);
}

/* The plain descriptor of g's source (dst = 0) or destination (dst = 1)
 * in type dt. */
static dnnl_status_t dnn_plain_md(const geom *g, int dst, dnnl_data_type_t dt,
                                  dnnl_memory_desc_t *md) {
  int nd = g->sp + 2;
  dnnl_dims_t d = {g->n, dst ? g->co : g->ci};
  for (int i = 0; i < g->sp; i++)
    d[2 + i] = dst ? g->out[i] : g->in[i];
  return dnnl_memory_desc_init_by_tag(md, nd, d, dt, dnn_act_tag(g));
}

/* A reorder primitive from memory `from` to memory `to`. */
static dnnl_status_t dnn_reorder_prim(dnnl_memory_t from, dnnl_memory_t to,
                                      dnnl_primitive_t *out) {
  const dnnl_memory_desc_t *fmd, *tmd;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_status_t st = dnnl_memory_get_memory_desc(from, &fmd);
  if (st == dnnl_success)
    st = dnnl_memory_get_memory_desc(to, &tmd);
  if (st == dnnl_success)
    st = dnnl_reorder_primitive_desc_create(&pd, fmd, dnn_engine, tmd,
                                            dnn_engine, NULL);
  if (st == dnnl_success)
    st = dnnl_primitive_create(out, pd);
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  return st;
}

/* Copies memory `from` into `to` (a layout change), outside any timing. */
static dnnl_status_t dnn_reorder(dnnl_memory_t from, dnnl_memory_t to) {
  dnnl_primitive_t r = NULL;
  dnnl_status_t st = dnn_reorder_prim(from, to, &r);
  if (st == dnnl_success) {
    dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    st = dnnl_primitive_execute(r, dnn_stream, 2, a);
    if (st == dnnl_success)
      st = dnnl_stream_wait(dnn_stream);
  }
  if (r)
    dnnl_primitive_destroy(r);
  return st;
}

/* A memory object in layout `want` holding the plain user tensor `user`
 * described by `plain`: the user's pointer itself when the layouts agree,
 * else a reordered copy. */
static dnnl_status_t dnn_memory_for(const dnnl_memory_desc_t *want,
                                    const dnnl_memory_desc_t *plain, void *user,
                                    dnnl_memory_t *out) {
  *out = NULL;
  if (dnnl_memory_desc_equal(want, plain))
    return dnnl_memory_create(out, plain, dnn_engine, user);
  dnnl_memory_t u = NULL;
  dnnl_status_t st = dnnl_memory_create(&u, plain, dnn_engine, user);
  if (st == dnnl_success)
    st = dnnl_memory_create(out, want, dnn_engine, DNNL_MEMORY_ALLOCATE);
  if (st == dnnl_success)
    st = dnn_reorder(u, *out);
  if (u)
    dnnl_memory_destroy(u);
  return st;
}

/* Sets up the convolution (or deconvolution) of g on the plain layouts
 * (any = 0) or on oneDNN's preferred ones (any = 1), with a bias when bias
 * is not NULL and a ReLU as `relu` (DNN_RELU_*) says.  The primitive is made
 * after the thread count is set: oneDNN picks its kernel and blocking for
 * the threads it will have. */
static int dnn_setup(dnn_ctx *c, const geom *g, int any,
                     const dnnl_data_type_t ty[3], void *data, void *weight,
                     float *bias, int relu, char *why, size_t cap) {
  memset(c, 0, sizeof *c);
  int nd = g->sp + 2;
  dnnl_dims_t sd = {g->n, g->ci}, wd = {g->co, g->ci}, dd = {g->n, g->co},
              bd = {g->co};
  dnnl_dims_t strides, dil, pl, pr;
  for (int i = 0; i < g->sp; i++) {
    sd[2 + i] = g->in[i];
    wd[2 + i] = g->k[i];
    dd[2 + i] = g->out[i];
    strides[i] = g->stride;
    dil[i] = g->dil - 1; /* oneDNN counts the taps skipped: 0 is none */
    pl[i] = g->pad;
    /* A deconvolution's output padding is less padding on the far side. */
    pr[i] = g->pad - (g->fam == FAM_DECONV ? g->opad : 0);
  }
  dnnl_format_tag_t act = dnn_act_tag(g);
  /* Deconvolution weights are [CI, CO, ...] (PyTorch's ConvTranspose), the
   * logical {CO, CI, ...} of oneDNN with the first two swapped: iohw. */
  dnnl_format_tag_t wtag = g->fam != FAM_DECONV ? dnn_nc_tag(nd)
                           : nd == 3            ? dnnl_bac
                           : nd == 4            ? dnnl_bacd
                                                : dnnl_bacde;
  dnnl_format_tag_t pick = dnnl_format_tag_any;
  dnnl_memory_desc_t smd, wmd, dmd, bmd, psmd, pwmd;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t po = NULL;
  dnnl_primitive_desc_t pd = NULL, rpd = NULL;
  DNN_TRY(dnnl_memory_desc_init_by_tag(&psmd, nd, sd, ty[0], act));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&pwmd, nd, wd, ty[1], wtag));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&smd, nd, sd, ty[0], any ? pick : act));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&wmd, nd, wd, ty[1], any ? pick : wtag));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&dmd, nd, dd, ty[2], any ? pick : act));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_a));
  DNN_TRY(dnnl_primitive_attr_create(&attr));
  if (relu == DNN_RELU_FUSED) {
    DNN_TRY(dnnl_post_ops_create(&po));
    DNN_TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0, 0));
    DNN_TRY(dnnl_primitive_attr_set_post_ops(attr, po));
  }
  if (g->fam == FAM_DECONV) {
    dnnl_deconvolution_desc_t d;
    DNN_TRY(dnnl_dilated_deconvolution_forward_desc_init(
        &d, dnnl_forward_inference, dnnl_deconvolution_direct, &smd, &wmd,
        bias ? &bmd : NULL, &dmd, strides, dil, pl, pr));
    DNN_TRY(dnnl_primitive_desc_create(&pd, &d, attr, dnn_engine, NULL));
  } else {
    /* auto: oneDNN may choose Winograd where it judges it faster. */
    dnnl_convolution_desc_t d;
    DNN_TRY(dnnl_dilated_convolution_forward_desc_init(
        &d, dnnl_forward_inference, dnnl_convolution_auto, &smd, &wmd,
        bias ? &bmd : NULL, &dmd, strides, dil, pl, pr));
    DNN_TRY(dnnl_primitive_desc_create(&pd, &d, attr, dnn_engine, NULL));
  }
  DNN_TRY(dnnl_primitive_create(&c->prim, pd));
  /* The implementation goes into the table: a "ref" one (oneDNN's slow
   * fallback, for a combination it has no fast kernel for) explains a
   * weak baseline. */
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) ==
          dnnl_success &&
      impl)
    snprintf(c->impl, sizeof c->impl, "%s", impl);
  DNN_TRY(dnn_memory_for(dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                         &psmd, data, &c->mem[0]));
  DNN_TRY(
      dnn_memory_for(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                     &pwmd, weight, &c->mem[1]));
  if (bias)
    DNN_TRY(dnnl_memory_create(&c->mem[2], &bmd, dnn_engine, bias));
  DNN_TRY(dnnl_memory_create(
      &c->mem[3], dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
      dnn_engine, DNNL_MEMORY_ALLOCATE));
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, c->mem[0]};
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, c->mem[1]};
  if (bias)
    c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, c->mem[2]};
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, c->mem[3]};
  if (relu == DNN_RELU_APART) {
    dnnl_eltwise_desc_t ed;
    DNN_TRY(dnnl_eltwise_forward_desc_init(
        &ed, dnnl_forward_inference, dnnl_eltwise_relu,
        dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), 0, 0));
    DNN_TRY(dnnl_primitive_desc_create(&rpd, &ed, NULL, dnn_engine, NULL));
    DNN_TRY(dnnl_primitive_create(&c->relu, rpd));
    dnnl_primitive_desc_destroy(rpd);
    rpd = NULL;
    c->relu_args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, c->mem[3]};
    c->relu_args[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, c->mem[3]};
  }
  dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  if (po)
    dnnl_post_ops_destroy(po);
  return 0;
fail:
  if (rpd)
    dnnl_primitive_desc_destroy(rpd);
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  if (po)
    dnnl_post_ops_destroy(po);
  dnn_free(c);
  return -1;
}

/* dnn_setup with the faster of the two ReLU modes when there is a ReLU,
 * decided by a short timing of both; *how says which won. */
static int dnn_setup_best(dnn_ctx *c, const geom *g, int any,
                          const dnnl_data_type_t ty[3], void *data,
                          void *weight, float *bias, int relu, int threads,
                          const char **how, char *why, size_t cap) {
  *how = "";
  if (!relu)
    return dnn_setup(c, g, any, ty, data, weight, bias, DNN_RELU_NONE, why,
                     cap);
  dnn_ctx apart;
  if (dnn_setup(&apart, g, any, ty, data, weight, bias, DNN_RELU_APART, why,
                cap))
    return -1;
  char ignored[160];
  if (dnn_setup(c, g, any, ty, data, weight, bias, DNN_RELU_FUSED, ignored,
                sizeof ignored)) {
    *c = apart;
    *how = ", relu apart";
    return 0;
  }
  cli_runner rs[2] = {{.call = dnn_call, .self = c},
                      {.call = dnn_call, .self = &apart}};
  cli_time_runners(rs, 2, 3, 0.01, threads);
  if (rs[1].seconds < rs[0].seconds) {
    dnn_free(c);
    *c = apart;
    *how = ", relu apart";
  } else {
    dnn_free(&apart);
  }
  return 0;
}

/* Makes every call of the convolution c (set up on oneDNN's layouts) take
 * the plain user source `data` and give its output in the plain layout
 * (in `out` when it needed a reorder, c->post; else dnn_result reads it),
 * as a user holding NCHW tensors would call it: the source reordered into
 * the primitive's layout and the output back, timed with the primitive
 * (the weights stay reordered once, as prepacked weights are).  A layout
 * that is plain already needs no reorder. */
static int dnn_reorder_in_call(dnn_ctx *c, const geom *g,
                               const dnnl_data_type_t ty[3], void *data,
                               void *out, char *why, size_t cap) {
  dnnl_memory_desc_t psmd, pdmd;
  const dnnl_memory_desc_t *md;
  DNN_TRY(dnn_plain_md(g, 0, ty[0], &psmd));
  DNN_TRY(dnn_plain_md(g, 1, ty[2], &pdmd));
  DNN_TRY(dnnl_memory_create(&c->user[0], &psmd, dnn_engine, data));
  DNN_TRY(dnnl_memory_create(&c->user[1], &pdmd, dnn_engine, out));
  DNN_TRY(dnnl_memory_get_memory_desc(c->mem[0], &md));
  if (!dnnl_memory_desc_equal(md, &psmd)) {
    DNN_TRY(dnn_reorder_prim(c->user[0], c->mem[0], &c->pre));
    c->pre_args[0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, c->user[0]};
    c->pre_args[1] = (dnnl_exec_arg_t){DNNL_ARG_TO, c->mem[0]};
  }
  DNN_TRY(dnnl_memory_get_memory_desc(c->mem[3], &md));
  if (!dnnl_memory_desc_equal(md, &pdmd)) {
    DNN_TRY(dnn_reorder_prim(c->mem[3], c->user[1], &c->post));
    c->post_args[0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, c->mem[3]};
    c->post_args[1] = (dnnl_exec_arg_t){DNNL_ARG_TO, c->user[1]};
  }
  return 0;
fail:
  return -1;
}

/* The primitive's output in the plain layout, into out. */
static int dnn_result(dnn_ctx *c, const geom *g, dnnl_data_type_t dt, void *out,
                      char *why, size_t cap) {
  dnnl_memory_desc_t plain;
  dnnl_memory_t m = NULL;
  DNN_TRY(dnn_plain_md(g, 1, dt, &plain));
  DNN_TRY(dnnl_memory_create(&m, &plain, dnn_engine, out));
  DNN_TRY(dnn_reorder(c->mem[3], m));
  dnnl_memory_destroy(m);
  return 0;
fail:
  if (m)
    dnnl_memory_destroy(m);
  return -1;
}

/* The matrix ops in int8 or bf16 as oneDNN's matmul primitive: OpenBLAS
 * has no integer GEMM, and oneDNN's matmul is what its users call for one
 * (u8 x s8 -> s32 with VNNI, bf16 x bf16 -> f32 with AVX512-BF16).  The
 * user's row-major tensors are a (the left operand) and b; for GEMV,
 * `vec_left` says the vector is the left operand (y^T = x^T A^T: src {1,K},
 * weights A read transposed through its strides), else the matrix is
 * (src A {M,K}, weights x {K,1}).  With any = 1 the weights go into the
 * layout oneDNN prefers, reordered untimed as prepacked weights would be;
 * dst is the user's plain out, written in place. */
static int dnn_matmul_setup(dnn_ctx *c, const geom *g, int any, int vec_left,
                            const dnnl_data_type_t ty[3], void *a, void *b,
                            void *out, char *why, size_t cap) {
  memset(c, 0, sizeof *c);
  int nd = g->fam == FAM_BMM ? 3 : 2;
  dnnl_dims_t sd, wd, dd;
  dnnl_format_tag_t stag = nd == 3 ? dnnl_abc : dnnl_ab, wtag = stag;
  if (g->fam == FAM_BMM) {
    sd[0] = wd[0] = dd[0] = g->B;
    sd[1] = g->M, sd[2] = g->K, wd[1] = g->K, wd[2] = g->N;
    dd[1] = g->M, dd[2] = g->N;
  } else if (g->fam == FAM_GEMV && vec_left) {
    sd[0] = 1, sd[1] = g->K, wd[0] = g->K, wd[1] = g->M;
    dd[0] = 1, dd[1] = g->M;
    wtag = dnnl_ba; /* A is [M][K]: as a K x M matrix, column-major */
  } else {
    sd[0] = g->M, sd[1] = g->K, wd[0] = g->K, wd[1] = g->N;
    dd[0] = g->M, dd[1] = g->N;
  }
  void *src = g->fam == FAM_GEMV && vec_left ? b : a;
  void *wei = g->fam == FAM_GEMV && vec_left ? a : b;
  dnnl_memory_desc_t smd, wmd, pwmd, dmd;
  dnnl_primitive_desc_t pd = NULL;
  DNN_TRY(dnnl_memory_desc_init_by_tag(&smd, nd, sd, ty[0], stag));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&pwmd, nd, wd, ty[1], wtag));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&wmd, nd, wd, ty[1],
                                       any ? dnnl_format_tag_any : wtag));
  DNN_TRY(dnnl_memory_desc_init_by_tag(&dmd, nd, dd, ty[2], stag));
  dnnl_matmul_desc_t d;
  DNN_TRY(dnnl_matmul_desc_init(&d, &smd, &wmd, NULL, &dmd));
  DNN_TRY(dnnl_primitive_desc_create(&pd, &d, NULL, dnn_engine, NULL));
  DNN_TRY(dnnl_primitive_create(&c->prim, pd));
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) ==
          dnnl_success &&
      impl)
    snprintf(c->impl, sizeof c->impl, "%s", impl);
  DNN_TRY(dnnl_memory_create(&c->mem[0], &smd, dnn_engine, src));
  DNN_TRY(
      dnn_memory_for(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                     &pwmd, wei, &c->mem[1]));
  DNN_TRY(dnnl_memory_create(&c->mem[3], &dmd, dnn_engine, out));
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, c->mem[0]};
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, c->mem[1]};
  c->args[c->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, c->mem[3]};
  dnnl_primitive_desc_destroy(pd);
  return 0;
fail:
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  dnn_free(c);
  return -1;
}

/* ---- One comparison ------------------------------------------------------ */

/* ROW_INTERRUPTED: a SIGINT / SIGTERM ended the benchmark before the row
 * was tuned to its budget or compared; the same command again resumes it. */
enum { ROW_OK, ROW_MISMATCH, ROW_FAILED, ROW_INTERRUPTED };

typedef struct row {
  const suite_task *task;
  heron_task *ht;
  int threads;
  char file[200]; /* base name of the log and the kernel folder */
  char shape[160];
  int status;
  char error[400];
  int trials, best_trial;
  char strategy[64]; /* as the log records it (--no-tune), else "" */
  double tune_gflops, tune_seconds;
  double heron_gflops;
  char base[160], base2[160];
  double base_gflops, base2_gflops;
  /* fp32 gemm, bmm and gemv: the kernel set of the OpenBLAS figure that
   * counted ("SkylakeX", "default: Haswell"), OpenBLAS's GFLOP/s with the
   * kernels it chose itself and with SkylakeX's (0: not timed), and
   * oneDNN's fp32 matmul's (0: not timed); "" and 0 on other rows. */
  char blas_kernels[64];
  double blas_default_gflops, blas_avx512_gflops, dnn_mm_gflops;
  double max_err;
  /* Memory-bound rows (gemv, a gemm with M or N of 1): the bytes the op
   * must move (its inputs and output once), Heron-C's and the baseline's
   * GB/s at that, and a STREAM-like copy's GB/s timed in the same run; 0
   * on other rows. */
  double bytes, heron_gbs, base_gbs, copy_gbs;
  /* int8 and bf16 rows with --fp32-dir: our fp32 kernel of the same task
   * timed in this run (0 without one), and its error over the fp32
   * tolerance against this row's output on the same values. */
  double fp32_gflops, fp32_err;
} row;

/* Largest error of out against ref, relative to a tolerance that grows with
 * the reduction length: both sides sum in fp32, in different orders, so
 * they may differ by a few roundings of partial sums of up to `red` terms
 * of size <= 1, while a wrong kernel is off by whole terms.  Returns the
 * ratio error / tolerance (a match when <= 1; NaN counts as infinite). */
static double compare(const float *out, const float *ref, int64_t n,
                      double red) {
  double atol = 1e-5 + 1e-6 * red, rtol = 1e-4, worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)out[i] - (double)ref[i]);
    double q = d / (atol + rtol * fabs((double)ref[i]));
    if (isnan(q))
      return INFINITY;
    if (q > worst)
      worst = q;
  }
  return worst;
}

static void set_threads(int t) {
  omp_set_num_threads(t);
  openblas_set_num_threads(t);
}

/* ---- OpenBLAS's kernel sets ------------------------------------------------
 * OpenBLAS built with DYNAMIC_ARCH picks its kernel set (its "core") once,
 * when the library loads, from the CPU's model or from OPENBLAS_CORETYPE;
 * it cannot change in a running process.  Its own choice is not always its
 * fastest: it takes the Haswell (AVX2) kernels on CPUs it does not know as
 * AVX-512 ones (AMD Zen 4 and Zen 5), and SSE3's (Prescott) where the CPU
 * model is hidden (virtual machines).  So on an AVX-512 CPU, unless this
 * process already runs SkylakeX's kernels, bench_suite times OpenBLAS a
 * second time with OPENBLAS_CORETYPE=SkylakeX in a child process: itself,
 * executed again (/proc/self/exe) with the hidden first argument
 * --internal-openblas-child and the row's op, shape, threads, epilogue and
 * timing settings.  The child makes the same inputs (same fills, same
 * seeds), times sgemm (and sgemv where it is a candidate) with the same
 * cli_time_runners, prints its core and the seconds per call on stdout and
 * writes its output into a file that this process compares like every
 * other baseline's.  A re-execution rather than a fork: the library is
 * linked in and already loaded, and a fork of this process (OpenMP's and
 * OpenBLAS's thread pools started) could not reload it. */

static char self_exe[4096]; /* this program, for the child; "" if unknown */

/* The kernel set this process's OpenBLAS runs ("Haswell", "SkylakeX"). */
static const char *blas_core(void) {
  const char *c = openblas_get_corename();
  return c && *c ? c : "unknown";
}

/* Whether SkylakeX's kernels are to be timed: the CPU (and the OS) run the
 * AVX-512 subsets they use (F, BW, DQ and VL), and HERON_CPU_ISA does not
 * cap this run below AVX-512 (avxvnni, avx2, sse: a smaller CPU emulated,
 * OpenBLAS then held to its own or OPENBLAS_CORETYPE's kernels).  Else 0
 * with the reason, for the table, in why. */
static int cpu_avx512(char *why, size_t cap) {
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl")))
    return snprintf(why, cap, "no AVX-512"), 0;
  const char *isa = getenv("HERON_CPU_ISA");
  char v[16] = "";
  size_t n = 0;
  for (; isa && *isa && n + 1 < sizeof v; isa++)
    if (!isspace((unsigned char)*isa))
      v[n++] = (char)tolower((unsigned char)*isa);
  v[n] = '\0';
  if (!strcmp(v, "avxvnni") || !strcmp(v, "avx2") || !strcmp(v, "sse"))
    return snprintf(why, cap, "AVX-512 capped by HERON_CPU_ISA=%s", v), 0;
  return 1;
}

/* Deterministic inputs of a matrix op: A from seed 1, B (or x) from seed 2,
 * the bias from seed 3; the same in the child. */
static void fill_matrix_inputs(const geom *g, float *in0, float *in1,
                               float *bias) {
  fill_random(in0, g->in_elems[0], 1);
  fill_random(in1, g->in_elems[1], 2);
  if (bias)
    fill_random(bias, g->nch, 3);
}

/* The geometry of a matrix op from its family and extents (the child has
 * no task), as make_geom makes it. */
static void matrix_geom(geom *g, int fam, int64_t B, int64_t M, int64_t N,
                        int64_t K) {
  memset(g, 0, sizeof *g);
  g->fam = fam, g->B = B, g->M = M, g->N = N, g->K = K;
  g->in_elems[0] = B * M * K;
  g->in_elems[1] = fam == FAM_GEMV ? K : B * K * N;
  g->out_elems = B * M * N;
  g->nch = fam == FAM_GEMV ? M : N;
  g->inner = 1;
  g->red = (double)K;
}

/* Whether a GEMM row also times sgemv (M or N of 1). */
static int gemm_as_gemv(const geom *g) {
  return g->fam == FAM_GEMM && (g->M == 1 || g->N == 1) && g->B <= 1;
}

/* bench_suite --internal-openblas-child FAM B M N K THREADS REPEATS US
 *   BIAS RELU OUTFILE (US: --compare-ms in microseconds): the OpenBLAS half of
 * a row, in a process whose OpenBLAS loaded with the caller's
 * OPENBLAS_CORETYPE.  Prints "core NAME" and "sgemm SECONDS" (and "sgemv
 * SECONDS") on stdout, writes sgemm's output into OUTFILE; exit status 0, or 1
 * with the reason on stderr. */
static int openblas_child(int argc, char **argv) {
  if (argc != 13) {
    fprintf(stderr,
            "bench_suite: --internal-openblas-child: %d arguments, "
            "want 11\n",
            argc - 2);
    return CLI_EXIT_FAILURE;
  }
  long long v[10];
  for (int i = 0; i < 10; i++) {
    char *end;
    v[i] = strtoll(argv[2 + i], &end, 10);
    if (*end || v[i] < 0) {
      fprintf(stderr,
              "bench_suite: --internal-openblas-child: bad argument "
              "'%s'\n",
              argv[2 + i]);
      return CLI_EXIT_FAILURE;
    }
  }
  int fam = (int)v[0], threads = (int)v[5], reps = (int)v[6];
  if ((fam != FAM_GEMM && fam != FAM_BMM && fam != FAM_GEMV) || threads < 1 ||
      reps < 1 || reps > 100 || v[1] < 1 || v[2] < 1 || v[3] < 1 || v[4] < 1) {
    fprintf(stderr, "bench_suite: --internal-openblas-child: bad row\n");
    return CLI_EXIT_FAILURE;
  }
  geom g;
  matrix_geom(&g, fam, v[1], v[2], v[3], v[4]);
  set_threads(threads);
  float *in0 = falloc(g.in_elems[0]), *in1 = falloc(g.in_elems[1]);
  float *bias = v[8] ? falloc(g.nch) : NULL;
  float *out = falloc(g.out_elems), *out2 = falloc(g.out_elems);
  fill_matrix_inputs(&g, in0, in1, bias);
  blas_ctx bc = {&g, in0, in1, bias, out, (int)v[9]};
  blas_ctx vc = {&g, in0, in1, bias, out2, (int)v[9]};
  cli_runner rs[2];
  memset(rs, 0, sizeof rs);
  int nr = 0;
  rs[nr].call = blas_call, rs[nr].spins = 1, rs[nr++].self = &bc;
  if (gemm_as_gemv(&g))
    rs[nr].call = blas_gemv_call, rs[nr].spins = 1, rs[nr++].self = &vc;
  fill_nan(out, g.out_elems);
  blas_call(&bc);
  FILE *f = fopen(argv[12], "wb");
  if (!f ||
      fwrite(out, sizeof *out, (size_t)g.out_elems, f) != (size_t)g.out_elems) {
    fprintf(stderr,
            "bench_suite: --internal-openblas-child: cannot write "
            "%s: %s\n",
            argv[12], strerror(errno));
    if (f)
      fclose(f);
    return CLI_EXIT_FAILURE;
  }
  if (fclose(f) != 0) {
    fprintf(stderr,
            "bench_suite: --internal-openblas-child: cannot write "
            "%s\n",
            argv[12]);
    return CLI_EXIT_FAILURE;
  }
  cli_time_runners(rs, nr, reps, (double)v[7] / 1e6, threads); /* v[7]: us */
  printf("core %s\n", blas_core());
  printf("sgemm %.9g\n", rs[0].seconds);
  if (nr > 1)
    printf("sgemv %.9g\n", rs[1].seconds);
  free(in0);
  free(in1);
  free(bias);
  free(out);
  free(out2);
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

/* Runs the OpenBLAS half of the row in a child with OPENBLAS_CORETYPE =
 * `core` (see above): sec[0] gets sgemm's seconds per call, sec[1]
 * sgemv's (0 when not timed), got the core the child reports, out its
 * sgemm output.  0, or -1 with the reason in why. */
static int openblas_child_run(const settings *s, const geom *g, int threads,
                              const char *core, const char *dir, double sec[2],
                              char *got, size_t gotcap, float *out, char *why,
                              size_t cap) {
  sec[0] = sec[1] = 0;
  got[0] = '\0';
  if (!self_exe[0])
    return snprintf(why, cap, "cannot find this program (/proc/self/exe)"), -1;
  char file[4300], qexe[8300], qfile[8700], cmd[20000];
  snprintf(file, sizeof file, "%s/openblas-%s.out", dir, core);
  shell_quote(qexe, sizeof qexe, self_exe);
  shell_quote(qfile, sizeof qfile, file);
  snprintf(cmd, sizeof cmd,
           "OPENBLAS_CORETYPE=%s exec %s --internal-openblas-child %d %lld "
           "%lld %lld %lld %d %d %.0f %d %d %s",
           core, qexe, g->fam, (long long)g->B, (long long)g->M,
           (long long)g->N, (long long)g->K, threads, s->compare_repeat,
           s->compare_ms * 1e3, s->bias, s->relu, qfile);
  fflush(stdout);
  fflush(stderr);
  FILE *p = popen(cmd, "r");
  if (!p)
    return snprintf(why, cap, "cannot start it: %s", strerror(errno)), -1;
  char line[256];
  while (fgets(line, sizeof line, p)) {
    char word[64];
    double x;
    if (sscanf(line, "core %63s", word) == 1)
      snprintf(got, gotcap, "%s", word);
    else if (sscanf(line, "sgemm %lf", &x) == 1)
      sec[0] = x;
    else if (sscanf(line, "sgemv %lf", &x) == 1)
      sec[1] = x;
  }
  int st = pclose(p);
  int rc = -1;
  if (st != 0)
    snprintf(why, cap, "the child exited with status %d (its reason above)",
             WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  else if (!(sec[0] > 0) || !got[0])
    snprintf(why, cap, "the child printed no timing");
  else {
    FILE *f = fopen(file, "rb");
    if (!f || fread(out, sizeof *out, (size_t)g->out_elems, f) !=
                  (size_t)g->out_elems)
      snprintf(why, cap, "cannot read its output %.300s", file);
    else
      rc = 0;
    if (f)
      fclose(f);
  }
  remove(file);
  return rc;
}

/* oneDNN's fp32 matmul on the plain row-major tensors, then the same
 * epilogue pass a BLAS user writes (e). */
typedef struct dnn_mm_ctx {
  dnn_ctx d;
  blas_ctx e;
} dnn_mm_ctx;

static void dnn_mm_call(void *p) {
  dnn_mm_ctx *c = p;
  dnn_call(&c->d);
  epilogue_pass(&c->e);
}

/* fp32 gemm, bmm and gemv, after cli_time_runners: puts the strongest baseline
 * in rs[1] and the other library's figure in rs[2] (*nr becomes 3, or 2
 * without a oneDNN figure).  The OpenBLAS figure is the fastest of its
 * calls (sgemm, and sgemv at ig > 0) with its own kernel set and, on an
 * AVX-512 CPU whose OpenBLAS did not choose SkylakeX itself, with
 * SkylakeX's in a child process (openblas_child_run), its output checked
 * against ours (out) like the others'; its name says which kernel set it
 * was and what the other one reached.  oneDNN's matmul is rs[im] (im > 0).
 * A failed child leaves the row with the in-process figure and says why on
 * stderr. */
static void strongest_baseline(const settings *s, const geom *g, row *r,
                               const char *dir, const char *own, cli_runner *rs,
                               int *nr, int ig, int im, const float *out,
                               float *out_x, double flops) {
  cli_runner blas = rs[1], dnn = im > 0 ? rs[im] : rs[0];
  if (ig > 0 && rs[ig].seconds < blas.seconds)
    blas = rs[ig];
  double own_s = blas.seconds, avx_s = 0;
  const char *avx_fn = rs[1].name, *core = blas_core();
  char note[160] = "";
  const char *ts = r->threads > 1 ? "s" : "";
  char no512[64];
  if (!cpu_avx512(no512, sizeof no512)) {
    snprintf(note, sizeof note, "; %s: SkylakeX not timed", no512);
  } else if (strcasecmp(core, "SkylakeX") != 0) {
    /* Our OpenBLAS threads spin for a while after their last call. */
    if (r->threads > 1)
      usleep(100000);
    double sec[2];
    char got[64], why[400];
    if (openblas_child_run(s, g, r->threads, "SkylakeX", dir, sec, got,
                           sizeof got, out_x, why, sizeof why)) {
      fprintf(stderr,
              "bench_suite: %s, %d thread%s: OpenBLAS with "
              "OPENBLAS_CORETYPE=SkylakeX failed: %s; the row keeps "
              "OpenBLAS's own kernel set (%s)\n",
              r->task->name, r->threads, ts, why, core);
      snprintf(note, sizeof note, "; SkylakeX run failed");
    } else if (strcasecmp(got, "SkylakeX") != 0) {
      fprintf(stderr,
              "bench_suite: %s, %d thread%s: OpenBLAS ignored "
              "OPENBLAS_CORETYPE=SkylakeX (it ran %s: a build without "
              "DYNAMIC_ARCH?); the row keeps its own kernel set (%s)\n",
              r->task->name, r->threads, ts, got, core);
      snprintf(note, sizeof note, "; SkylakeX unavailable, got %.40s", got);
    } else {
      avx_s = sec[0];
      if (sec[1] > 0 && sec[1] < sec[0])
        avx_s = sec[1], avx_fn = "OpenBLAS sgemv";
      double e = compare(out, out_x, g->out_elems, g->red);
      r->max_err = fmax(r->max_err, e);
      if (e > 1)
        r->status = ROW_MISMATCH;
    }
  }
  r->blas_default_gflops = flops / own_s / 1e9;
  r->blas_avx512_gflops = avx_s > 0 ? flops / avx_s / 1e9 : 0;
  cli_runner best = blas;
  if (avx_s > 0 && avx_s < own_s) {
    best.seconds = avx_s;
    snprintf(best.name, sizeof best.name,
             "%.40s (SkylakeX; %.60s at %.1f GFLOP/s)", avx_fn, own,
             r->blas_default_gflops);
    snprintf(r->blas_kernels, sizeof r->blas_kernels, "SkylakeX");
  } else if (avx_s > 0) {
    snprintf(best.name, sizeof best.name,
             "%.40s (%.60s; SkylakeX at %.1f GFLOP/s)", blas.name, own,
             r->blas_avx512_gflops);
    snprintf(r->blas_kernels, sizeof r->blas_kernels, "%s", own);
  } else {
    snprintf(best.name, sizeof best.name, "%.40s (%.40s%.75s)", blas.name, own,
             note);
    snprintf(r->blas_kernels, sizeof r->blas_kernels, "%s", own);
  }
  r->dnn_mm_gflops = im > 0 ? flops / dnn.seconds / 1e9 : 0;
  if (im > 0 && dnn.seconds < best.seconds) {
    rs[1] = dnn;
    rs[2] = best;
  } else {
    rs[1] = best;
    if (im > 0)
      rs[2] = dnn;
  }
  *nr = im > 0 ? 3 : 2;
}

static void compare_row(const settings *s, row *r) {
  geom g;
  if (make_geom(r->ht, &g, r->error, sizeof r->error)) {
    r->status = ROW_FAILED;
    return;
  }
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/%s", s->out, r->file);
  void *dl = NULL;
  heron_ctx hc = {0};
  hc.k = load_kernel(dir, heron_task_cflags(r->ht), &dl, r->error,
                     sizeof r->error);
  if (!hc.k) {
    r->status = ROW_FAILED;
    return;
  }
  set_threads(r->threads);
  float *in0 = falloc(g.in_elems[0]), *in1 = falloc(g.in_elems[1]);
  float *bias = s->bias ? falloc(g.nch) : NULL;
  float *out = falloc(g.out_elems), *out_b = falloc(g.out_elems);
  float *out_b2 = falloc(g.out_elems);
  float *out_mm = falloc(g.out_elems), *out_x = falloc(g.out_elems);
  fill_matrix_inputs(&g, in0, in1, bias);
  if (g.fam == FAM_SCAN) {
    /* SCAN's second input is part of the op: T[k][n] = 1 when k <= n. */
    for (int64_t k = 0; k < g.K; k++)
      for (int64_t n = 0; n < g.N; n++)
        in1[k * g.N + n] = k <= n ? 1.0f : 0.0f;
  }
  hc.bufs[0] = in0;
  hc.bufs[1] = in1;
  hc.bufs[2] = out;
  hc.bufs[3] = bias;

  cli_runner rs[5];
  int nr = 0;
  memset(rs, 0, sizeof rs);
  snprintf(rs[nr].name, sizeof rs[nr].name, "Heron-C");
  rs[nr].call = heron_call;
  rs[nr++].self = &hc;
  blas_ctx bc = {&g, in0, in1, bias, out_b, s->relu};
  blas_ctx pc = {&g, in0, in1, bias, out_b2, s->relu};
  static const dnnl_data_type_t f32s[3] = {dnnl_f32, dnnl_f32, dnnl_f32};
  dnn_ctx plain = {0}, blocked = {0};
  dnn_mm_ctx mm = {.e = {&g, in0, in1, bias, out_mm, s->relu}};
  /* fp32 gemm, bmm and gemv: OpenBLAS with its own kernel set, the
   * sgemv runner (ig: its index, or -1), oneDNN's matmul (im, or -1); the
   * SkylakeX kernel set runs after these, in a child. */
  int strong = g.fam == FAM_GEMM || g.fam == FAM_BMM || g.fam == FAM_GEMV;
  int ig = -1, im = -1;
  const char *env_core = getenv("OPENBLAS_CORETYPE");
  char own[64];
  if (env_core && *env_core)
    snprintf(own, sizeof own, "%s, from OPENBLAS_CORETYPE", blas_core());
  else
    snprintf(own, sizeof own, "default: %s", blas_core());
  /* Inputs the kernel takes packed ahead (--prepack-weights): packed once
   * here, untimed, as the blocked baseline's weights are reordered. */
  void *packed[2] = {NULL, NULL};
  prepack_inputs(dl, hc.bufs, packed, (const int[2]){4, 4});
  int is_dnn = g.fam == FAM_CONV || g.fam == FAM_DECONV;
  const char *lib = g.fam == FAM_DECONV ? "oneDNN deconv" : "oneDNN conv";
  if (is_dnn) {
    /* The stronger baseline, oneDNN's own layouts, comes first: it is the
     * one the ratio uses. */
    const char *how_b, *how_p;
    if (dnn_setup_best(&blocked, &g, 1, f32s, in0, in1, bias, s->relu,
                       r->threads, &how_b, r->error, sizeof r->error) ||
        dnn_setup_best(&plain, &g, 0, f32s, in0, in1, bias, s->relu, r->threads,
                       &how_p, r->error, sizeof r->error)) {
      r->status = ROW_FAILED;
      goto done;
    }
    snprintf(rs[nr].name, sizeof rs[nr].name, "%s (blocked, %s%s)", lib,
             blocked.impl, how_b);
    rs[nr].call = dnn_call;
    rs[nr++].self = &blocked;
    snprintf(rs[nr].name, sizeof rs[nr].name, "%s (plain, %s%s)", lib,
             plain.impl, how_p);
    rs[nr].call = dnn_call;
    rs[nr++].self = &plain;
  } else {
    static const char *const names[] = {[FAM_GEMM] = "OpenBLAS sgemm",
                                        [FAM_BMM] = "OpenBLAS sgemm loop",
                                        [FAM_GEMV] = "OpenBLAS sgemv",
                                        [FAM_SCAN] = "OpenBLAS sgemm"};
    snprintf(rs[nr].name, sizeof rs[nr].name, "%s", names[g.fam]);
    rs[nr].call = blas_call;
    rs[nr].spins = 1;
    rs[nr++].self = &bc;
    if (g.fam == FAM_SCAN) {
      snprintf(rs[nr].name, sizeof rs[nr].name, "C prefix-sum loop");
      rs[nr].call = prefix_call;
      rs[nr++].self = &pc;
    }
    if (gemm_as_gemv(&g)) {
      ig = nr;
      snprintf(rs[nr].name, sizeof rs[nr].name, "OpenBLAS sgemv");
      rs[nr].call = blas_gemv_call;
      rs[nr].spins = 1;
      rs[nr++].self = &pc;
    }
    /* oneDNN's fp32 matmul on the same plain tensors: a second library
     * for the matrix ops; where it cannot be set up the row goes on with
     * OpenBLAS alone, the reason on stderr. */
    char mwhy[300];
    if (strong && dnn_matmul_setup(&mm.d, &g, 0, 0, f32s, in0, in1, out_mm,
                                   mwhy, sizeof mwhy) == 0) {
      im = nr;
      snprintf(rs[nr].name, sizeof rs[nr].name, "oneDNN matmul f32 (plain, %s)",
               mm.d.impl);
      rs[nr].call = dnn_mm_call;
      rs[nr++].self = &mm;
    } else if (strong) {
      fprintf(stderr,
              "bench_suite: %s, %d thread%s: no oneDNN matmul baseline: %s\n",
              r->task->name, r->threads, r->threads > 1 ? "s" : "", mwhy);
    }
  }

  /* Check first: one call each on outputs poisoned with NaN, so an element
   * our kernel fails to write is a mismatch, not a leftover. */
  fill_nan(out, g.out_elems);
  fill_nan(out_b, g.out_elems);
  fill_nan(out_b2, g.out_elems);
  fill_nan(out_mm, g.out_elems);
  for (int i = 0; i < nr; i++)
    rs[i].call(rs[i].self);
  if (is_dnn &&
      (dnn_result(&blocked, &g, dnnl_f32, out_b, r->error, sizeof r->error) ||
       dnn_result(&plain, &g, dnnl_f32, out_b2, r->error, sizeof r->error))) {
    r->status = ROW_FAILED;
    goto done;
  }
  r->max_err = compare(out, out_b, g.out_elems, g.red);
  if (is_dnn || g.fam == FAM_SCAN || ig > 0)
    r->max_err = fmax(r->max_err, compare(out, out_b2, g.out_elems, g.red));
  if (im > 0)
    r->max_err = fmax(r->max_err, compare(out, out_mm, g.out_elems, g.red));
  r->status = r->max_err <= 1 ? ROW_OK : ROW_MISMATCH;

  cli_time_runners(rs, nr, s->compare_repeat, s->compare_ms / 1e3, r->threads);
  double flops = heron_task_flops(r->ht);
  if (strong)
    strongest_baseline(s, &g, r, dir, own, rs, &nr, ig, im, out, out_x, flops);
  if (g.fam == FAM_GEMV ||
      (g.fam == FAM_GEMM && (g.M == 1 || g.N == 1) && g.B <= 1)) {
    r->bytes = 4.0 * (double)(g.in_elems[0] + g.in_elems[1] + g.out_elems);
    int64_t n = g.in_elems[0] > g.in_elems[1] ? g.in_elems[0] : g.in_elems[1];
    float *src = malloc((size_t)n * sizeof *src);
    float *dst = malloc((size_t)n * sizeof *dst);
    if (src && dst) {
      fill_random(src, n, 4);
      copy_ctx cc = {src, dst, n};
      cli_runner copy = {.call = copy_call, .self = &cc};
      snprintf(copy.name, sizeof copy.name, "STREAM copy");
      cli_time_runners(&copy, 1, s->compare_repeat, s->compare_ms / 1e3,
                       r->threads);
      /* STREAM counts the bytes read and written. */
      r->copy_gbs = 8.0 * (double)n / copy.seconds / 1e9;
    }
    free(src);
    free(dst);
    r->heron_gbs = r->bytes / rs[0].seconds / 1e9;
    r->base_gbs = r->bytes / rs[1].seconds / 1e9;
  }
  r->heron_gflops = flops / rs[0].seconds / 1e9;
  snprintf(r->base, sizeof r->base, "%s", rs[1].name);
  r->base_gflops = flops / rs[1].seconds / 1e9;
  if (nr > 2) {
    snprintf(r->base2, sizeof r->base2, "%s", rs[2].name);
    r->base2_gflops = flops / rs[2].seconds / 1e9;
  }
done:
  free(packed[0]);
  free(packed[1]);
  dnn_free(&blocked);
  dnn_free(&plain);
  free(in0);
  free(in1);
  free(bias);
  free(out);
  free(out_b);
  free(out_b2);
  free(out_mm);
  free(out_x);
  dnn_free(&mm.d);
  dlclose(dl);
}

/* ---- int8 and bf16 rows ---------------------------------------------------
 * A suite of dtype int8 (u8 activations x s8 weights -> s32, as VNNI and
 * oneDNN define it) or bf16 (bf16 x bf16 -> fp32) compares with oneDNN on
 * both sides: its matmul for the matrix ops, its convolution and
 * deconvolution for the others, on the same integer or bf16 inputs.  The
 * activation is the unsigned input: A of gemm and bmm, the data of a
 * convolution, and the vector x of gemv (whose matrix is the weights). */

/* Index of the op's unsigned (activation) input. */
static int act_input(const geom *g) { return g->fam == FAM_GEMV ? 1 : 0; }

/* Deterministic bytes over the whole range of u8 or s8: the kernels must
 * be exact there, saturating paths included. */
static void fill_bytes(uint8_t *p, int64_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < n; i++)
    p[i] = (uint8_t)(next_random(&x) >> 56);
}

/* fp32 to bf16, rounding to nearest even (the values are finite). */
static uint16_t bf16_from(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

static float bf16_to(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* The inputs as the fp32 values they stand for, for our fp32 kernel of the
 * same shape (--fp32-dir): the two kernels then compute the same sums. */
static void widen(const void *in, int kind, int64_t n, float *out) {
  for (int64_t i = 0; i < n; i++)
    out[i] = kind == 'u'   ? (float)((const uint8_t *)in)[i]
             : kind == 's' ? (float)((const int8_t *)in)[i]
                           : bf16_to(((const uint16_t *)in)[i]);
}

/* The largest |out - ref| of two s32 outputs (0: identical). */
static double int_diff(const int32_t *out, const int32_t *ref, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)out[i] - (double)ref[i]);
    if (d > worst)
      worst = d;
  }
  return worst;
}

static void compare_row_lowp(const settings *s, const suite *su, row *r) {
  geom g;
  if (make_geom(r->ht, &g, r->error, sizeof r->error)) {
    r->status = ROW_FAILED;
    return;
  }
  if (g.fam == FAM_SCAN) {
    r->status = ROW_FAILED;
    snprintf(r->error, sizeof r->error,
             "no %s baseline for scan (oneDNN has none)", su->dtype);
    return;
  }
  int int8 = !strcmp(su->dtype, "int8");
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/%s", s->out, r->file);
  void *dl = NULL, *dl32 = NULL;
  heron_ctx hc = {0}, h32 = {0};
  hc.k = load_kernel(dir, heron_task_cflags(r->ht), &dl, r->error,
                     sizeof r->error);
  if (!hc.k) {
    r->status = ROW_FAILED;
    return;
  }
  set_threads(r->threads);
  int act = act_input(&g);
  int esize = int8 ? 1 : 2;
  void *in[2];
  for (int i = 0; i < 2; i++) {
    in[i] = balloc(g.in_elems[i] * esize);
    if (int8) {
      fill_bytes(in[i], g.in_elems[i], (uint64_t)i + 1);
    } else {
      float *tmp = falloc(g.in_elems[i]);
      fill_random(tmp, g.in_elems[i], (uint64_t)i + 1);
      for (int64_t e = 0; e < g.in_elems[i]; e++)
        ((uint16_t *)in[i])[e] = bf16_from(tmp[e]);
      free(tmp);
    }
  }
  /* Both outputs are 4-byte elements: s32 for int8, fp32 for bf16. */
  void *out = balloc(g.out_elems * 4), *out_b = balloc(g.out_elems * 4);
  void *out_b2 = balloc(g.out_elems * 4), *out32 = NULL;
  void *out_b3 = balloc(g.out_elems * 4);
  float *in32[2] = {NULL, NULL};
  hc.bufs[0] = in[0];
  hc.bufs[1] = in[1];
  hc.bufs[2] = out;
  /* The weights the kernel takes packed ahead (--prepack-weights): packed
   * once here, untimed, as oneDNN's blocked weights are reordered. */
  void *packed[2] = {NULL, NULL};
  prepack_inputs(dl, hc.bufs, packed, (const int[2]){esize, esize});

  cli_runner rs[4];
  int nr = 0;
  memset(rs, 0, sizeof rs);
  snprintf(rs[nr].name, sizeof rs[nr].name, "Heron-C");
  rs[nr].call = heron_call;
  rs[nr++].self = &hc;
  dnnl_data_type_t ty[3];
  /* oneDNN's source is always the activation (for gemv, the vector). */
  ty[0] = int8 ? dnnl_u8 : dnnl_bf16;
  ty[1] = int8 ? dnnl_s8 : dnnl_bf16;
  ty[2] = int8 ? dnnl_s32 : dnnl_f32;
  dnn_ctx blocked = {0}, plain = {0}, inplain = {0};
  int is_dnn = g.fam == FAM_CONV || g.fam == FAM_DECONV;
  const char *lib = g.fam == FAM_DECONV ? "oneDNN deconv"
                    : is_dnn            ? "oneDNN conv"
                                        : "oneDNN matmul";
  const char *how = "";
  int rc;
  if (is_dnn)
    rc = dnn_setup_best(&blocked, &g, 1, ty, in[0], in[1], NULL, 0, r->threads,
                        &how, r->error, sizeof r->error) ||
         dnn_setup_best(&plain, &g, 0, ty, in[0], in[1], NULL, 0, r->threads,
                        &how, r->error, sizeof r->error);
  else
    rc = dnn_matmul_setup(&blocked, &g, 1, act == 1, ty, in[0], in[1], out_b,
                          r->error, sizeof r->error) ||
         dnn_matmul_setup(&plain, &g, 0, act == 1, ty, in[0], in[1], out_b2,
                          r->error, sizeof r->error);
  if (rc) {
    r->status = ROW_FAILED;
    goto done;
  }
  snprintf(rs[nr].name, sizeof rs[nr].name, "%s %s (blocked, %s)", lib,
           su->dtype, blocked.impl);
  rs[nr].call = dnn_call;
  rs[nr++].self = &blocked;
  /* On the plain layouts oneDNN may have only its reference kernel for
   * this dtype (int8 convolutions on NCHW): seconds a call, no baseline
   * anyone would use, so it is checked but not timed. */
  int ip = -1, i32 = -1;
  if (strncmp(plain.impl, "ref", 3) != 0) {
    ip = nr;
    snprintf(rs[nr].name, sizeof rs[nr].name, "%s %s (plain, %s)", lib,
             su->dtype, plain.impl);
    rs[nr].call = dnn_call;
    rs[nr++].self = &plain;
  } else if (is_dnn) {
    /* What a caller with the same plain tensors pays for oneDNN's fast
     * kernel instead: its blocked convolution with the activations
     * reordered in and out in the call (weights reordered once). */
    if (dnn_setup_best(&inplain, &g, 1, ty, in[0], in[1], NULL, 0, r->threads,
                       &how, r->error, sizeof r->error) ||
        dnn_reorder_in_call(&inplain, &g, ty, in[0], out_b3, r->error,
                            sizeof r->error)) {
      r->status = ROW_FAILED;
      goto done;
    }
    ip = nr;
    snprintf(rs[nr].name, sizeof rs[nr].name, "%s %s (plain in/out, %s)", lib,
             su->dtype, inplain.impl);
    rs[nr].call = dnn_call;
    rs[nr++].self = &inplain;
  }
  /* Our own fp32 kernel of the same task, from an fp32 run's folder, on
   * the same values widened to fp32. */
  if (s->fp32_dir) {
    char dir32[4200];
    snprintf(dir32, sizeof dir32, "%s/%s", s->fp32_dir, r->file);
    heron_task *t32 = NULL;
    heron_error err;
    heron_error_clear(&err);
    heron_task_spec spec = {.op = r->task->op,
                            .shape = r->task->shape,
                            .nshape = r->task->nshape,
                            .dtype = "fp32",
                            .target = "cpu"};
    char why[400] = "";
    if (heron_task_create(&spec, &t32, &err) == HERON_OK)
      h32.k =
          load_kernel(dir32, heron_task_cflags(t32), &dl32, why, sizeof why);
    else
      snprintf(why, sizeof why, "%s", err.text);
    heron_task_free(t32);
    if (!h32.k) {
      fprintf(stderr, "bench_suite: %s: no fp32 kernel to compare: %s\n",
              r->file, why);
    } else {
      for (int i = 0; i < 2; i++) {
        in32[i] = falloc(g.in_elems[i]);
        widen(in[i], int8 ? (i == act ? 'u' : 's') : 'b', g.in_elems[i],
              in32[i]);
      }
      out32 = falloc(g.out_elems);
      h32.bufs[0] = in32[0];
      h32.bufs[1] = in32[1];
      h32.bufs[2] = out32;
      i32 = nr;
      snprintf(rs[nr].name, sizeof rs[nr].name, "Heron-C fp32");
      rs[nr].call = heron_call;
      rs[nr++].self = &h32;
    }
  }

  /* Check first, one call each, on outputs poisoned with a pattern no sum
   * of these inputs makes in every element. */
  memset(out, 0xA5, (size_t)g.out_elems * 4);
  memset(out_b, 0x5A, (size_t)g.out_elems * 4);
  memset(out_b2, 0x3C, (size_t)g.out_elems * 4);
  memset(out_b3, 0xC3, (size_t)g.out_elems * 4);
  for (int i = 0; i < nr; i++)
    rs[i].call(rs[i].self);
  if (ip < 0 || inplain.prim) /* plain is checked but not timed */
    dnn_call(&plain);
  if (is_dnn &&
      (dnn_result(&blocked, &g, ty[2], out_b, r->error, sizeof r->error) ||
       dnn_result(&plain, &g, ty[2], out_b2, r->error, sizeof r->error) ||
       (inplain.prim && !inplain.post &&
        dnn_result(&inplain, &g, ty[2], out_b3, r->error, sizeof r->error)))) {
    r->status = ROW_FAILED;
    goto done;
  }
  if (int8) {
    /* Integer sums are exact: any difference is a wrong kernel. */
    r->max_err = fmax(int_diff(out, out_b, g.out_elems),
                      int_diff(out, out_b2, g.out_elems));
    if (inplain.prim)
      r->max_err = fmax(r->max_err, int_diff(out, out_b3, g.out_elems));
  } else {
    r->max_err = fmax(compare(out, out_b, g.out_elems, g.red),
                      compare(out, out_b2, g.out_elems, g.red));
    if (inplain.prim)
      r->max_err = fmax(r->max_err, compare(out, out_b3, g.out_elems, g.red));
  }
  if (out32) {
    /* The fp32 kernel sums the same values in fp32: within the fp32
     * tolerance of the exact (int8) or fp32-accumulated (bf16) result. */
    float *want = out;
    float *conv = NULL;
    if (int8) {
      conv = falloc(g.out_elems);
      for (int64_t i = 0; i < g.out_elems; i++)
        conv[i] = (float)((const int32_t *)out)[i];
      want = conv;
    }
    double scale = int8 ? 255.0 * 128.0 : 1.0;
    r->fp32_err = compare(out32, want, g.out_elems, g.red * scale);
    free(conv);
  }
  r->status = r->max_err <= (int8 ? 0 : 1) ? ROW_OK : ROW_MISMATCH;

  cli_time_runners(rs, nr, s->compare_repeat, s->compare_ms / 1e3, r->threads);
  double flops = heron_task_flops(r->ht);
  r->heron_gflops = flops / rs[0].seconds / 1e9;
  /* The stronger of oneDNN's two figures is the baseline. */
  int best = ip >= 0 && rs[ip].seconds < rs[1].seconds ? ip : 1;
  int other = best == 1 ? ip : 1;
  snprintf(r->base, sizeof r->base, "%s", rs[best].name);
  r->base_gflops = flops / rs[best].seconds / 1e9;
  if (other >= 0) {
    snprintf(r->base2, sizeof r->base2, "%s", rs[other].name);
    r->base2_gflops = flops / rs[other].seconds / 1e9;
  }
  if (i32 >= 0)
    r->fp32_gflops = flops / rs[i32].seconds / 1e9;
done:
  free(packed[0]);
  free(packed[1]);
  dnn_free(&blocked);
  dnn_free(&plain);
  dnn_free(&inplain);
  free(in[0]);
  free(in[1]);
  free(in32[0]);
  free(in32[1]);
  free(out);
  free(out_b);
  free(out_b2);
  free(out_b3);
  free(out32);
  if (dl32)
    dlclose(dl32);
  dlclose(dl);
}

/* ---- Tuning -------------------------------------------------------------- */

/* Marks a row the signal kept from being tuned or compared. */
static void interrupt_row(row *r, const char *before) {
  r->status = ROW_INTERRUPTED;
  snprintf(r->error, sizeof r->error, "interrupted by %s before %s",
           cli_signal_name(cli_stop_signal()), before);
}

/* Tunes row r in a child process (cli_tune_in_child; see the top of the
 * file) and records the outcome; a child that dies is a failed row, not a
 * failed benchmark. */
static void tune_row(const settings *s, row *r) {
  char log[4200], dir[4200];
  snprintf(log, sizeof log, "%s/%s.jsonl", s->out, r->file);
  snprintf(dir, sizeof dir, "%s/%s", s->out, r->file);
  heron_tune_options o;
  heron_tune_options_init(&o);
  o.strategy = s->strategy;
  o.strategy_params = s->sparams;
  o.n_strategy_params = s->nsparams;
  o.model = s->model;
  o.model_params = s->mparams;
  o.n_model_params = s->nmparams;
  o.trials = s->trials;
  o.seed = s->seed;
  o.batch = s->batch;
  o.log_path = log;
  struct stat st;
  /* An existing log is continued: a killed benchmark picks up where it
   * stopped, and a complete one only re-emits its best kernel. */
  if (stat(log, &st) == 0 && st.st_size > 0)
    o.resume_path = log;
  o.emit_dir = dir;
  o.measure.number = s->number;
  o.measure.repeat = s->repeat;
  o.measure.min_repeat_ms = s->min_repeat_ms;
  o.measure.timeout_s = s->timeout;
  o.measure.threads = r->threads;
  o.stop = s->stop;
  const char *prefix = s->quiet
                           ? NULL
                           : cli_printf("  [%s, %d thread%s] ", r->task->name,
                                        r->threads, r->threads > 1 ? "s" : "");
  cli_tune_report rep;
  int died = cli_tune_in_child(r->ht, &o, prefix, &rep) != 0;
  int sig = cli_stop_signal();
  if (sig && (died || rep.rc != HERON_OK || rep.res.stopped)) {
    /* Stopped in order (the log holds what was measured), or killed by
     * the signal: either way the log is resumed next time. */
    r->status = ROW_INTERRUPTED;
    snprintf(r->error, sizeof r->error,
             "tuning stopped by %s after %d of %d trials", cli_signal_name(sig),
             died ? 0 : rep.res.trials, s->trials);
    if (died || rep.rc != HERON_OK)
      snprintf(r->error, sizeof r->error, "tuning interrupted by %s: %s",
               cli_signal_name(sig), rep.err.text);
    return;
  }
  if (died) {
    r->status = ROW_FAILED;
    snprintf(r->error, sizeof r->error, "%s", rep.err.text);
    return;
  }
  r->trials = rep.res.trials;
  r->best_trial = rep.res.best_trial;
  r->tune_gflops = rep.res.best_gflops;
  r->tune_seconds = rep.res.elapsed_s;
  if (rep.rc != HERON_OK) {
    r->status = ROW_FAILED;
    snprintf(r->error, sizeof r->error, "tuning failed: %s: %s",
             heron_err_name(rep.rc), rep.err.text);
  } else if (rep.res.best_trial == 0) {
    r->status = ROW_FAILED;
    snprintf(r->error, sizeof r->error,
             "no kernel passed its check in %d trials", rep.res.trials);
  }
}

/* For --no-tune: what the emitted config says about the search. */
static void read_emitted(const settings *s, row *r) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s/config.json", s->out, r->file);
  json_t *o = json_load_file(path, 0, NULL);
  if (o) {
    r->best_trial = (int)json_integer_value(json_object_get(o, "trial"));
    r->tune_gflops = json_number_value(json_object_get(o, "gflops"));
    json_decref(o);
  }
  snprintf(path, sizeof path, "%s/%s.jsonl", s->out, r->file);
  FILE *f = fopen(path, "r");
  if (f) {
    /* The first record names the strategy that wrote the log. */
    char line[8192];
    if (fgets(line, sizeof line, f)) {
      json_t *m = json_loads(line, 0, NULL);
      const char *st = json_string_value(json_object_get(m, "strategy"));
      if (st)
        snprintf(r->strategy, sizeof r->strategy, "%s", st);
      json_decref(m);
      rewind(f);
    }
    int c, lines = 0;
    while ((c = fgetc(f)) != EOF)
      lines += c == '\n';
    fclose(f);
    r->trials = lines;
  }
}

/* ---- Results ------------------------------------------------------------- */

static void fmt_gflops(char *buf, size_t cap, double v) {
  if (v >= 100)
    snprintf(buf, cap, "%.0f", v);
  else if (v >= 10)
    snprintf(buf, cap, "%.1f", v);
  else
    snprintf(buf, cap, "%.2f", v);
}

/* Two decimals, or two significant digits below 0.1 so that a tiny ratio
 * does not read as zero. */
static void fmt_ratio(char *buf, size_t cap, double v) {
  snprintf(buf, cap, v >= 0.1 ? "%.2f" : "%.2g", v);
}

static void write_markdown(FILE *f, const settings *s, const suite *su,
                           const row *rows, int n) {
  char cpu[256], stamp[64];
  cli_detected_cpu(cpu, sizeof cpu, NULL, 0);
  time_t t = time(NULL);
  strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M", localtime(&t));
  fprintf(f, "# Heron-C against vendor libraries: %s\n\n", su->name);
  fprintf(f, "%s, %s, %d cores; ", stamp, cpu, cpu_count());
  if (s->no_tune)
    fprintf(f, "kernels emitted by an earlier run (strategy and trials in "
               "results.csv)");
  else
    fprintf(f,
            "tuned in this run with %s%s%s, %d trials per task and thread "
            "count, seed %llu",
            s->strategy, s->model ? " + " : "", s->model ? s->model : "",
            s->trials, (unsigned long long)s->seed);
  fprintf(f, "; epilogue %s%s.\n\n", *s->epilogue ? s->epilogue : "none",
          !s->prepack_weights ? ""
          : strcmp(su->dtype, "fp32")
              ? "; weights (convolutions' and matrix ops') packed once "
                "ahead, untimed (--prepack-weights)"
              : "; convolution weights packed once ahead, untimed "
                "(--prepack-weights)");
  fprintf(f,
          "Ratio = Heron-C GFLOP/s / baseline GFLOP/s (above 1: Heron-C "
          "is faster). Both are timed in this process on the same inputs, "
          "back to back, median of %d repeats of at least %.0f ms; FLOPs "
          "= 2 x the product of all loop extents for every figure. "
          "oneDNN (blocked) runs on its preferred layouts with the "
          "reorders not timed; oneDNN (plain) runs on the NCHW-style "
          "layouts Heron-C reads and writes.\n\n",
          s->compare_repeat, s->compare_ms);
  int lowp = strcmp(su->dtype, "fp32") != 0;
  int matrix = 0;
  for (int i = 0; i < n; i++)
    matrix |= !strcmp(rows[i].task->op, "gemm") ||
              !strcmp(rows[i].task->op, "bmm") ||
              !strcmp(rows[i].task->op, "gemv");
  if (!lowp && matrix) {
    const char *env_core = getenv("OPENBLAS_CORETYPE");
    fprintf(f,
            "Matrix ops (gemm, bmm, gemv): the baseline is the faster of "
            "OpenBLAS and oneDNN's fp32 matmul (plain row-major, the same "
            "threads), the other is the second baseline. OpenBLAS here "
            "chose the %s kernels%s%s%s; ",
            blas_core(), env_core && *env_core ? " (OPENBLAS_CORETYPE=" : "",
            env_core && *env_core ? env_core : "",
            env_core && *env_core ? ")" : "");
    char no512[64];
    if (!cpu_avx512(no512, sizeof no512))
      fprintf(f,
              "**%s: only those were timed, not its AVX-512 (SkylakeX) "
              "kernels**.\n\n",
              no512);
    else if (!strcasecmp(blas_core(), "SkylakeX"))
      fprintf(f, "those are its AVX-512 (SkylakeX) kernels.\n\n");
    else
      fprintf(f,
              "on this AVX-512 CPU its SkylakeX kernels were timed too, in "
              "a child process with OPENBLAS_CORETYPE=SkylakeX (same inputs, "
              "same repeats, not interleaved with the others), and the "
              "faster kernel set counts: the baseline's name says which, "
              "and what the other reached.\n\n");
  }
  if (lowp)
    fprintf(f,
            "dtype %s on target %s (%s); GFLOP/s counts integer operations "
            "alike. The baselines are oneDNN's in the same dtype (matmul for "
            "the matrix ops); the check is %s. Heron-C fp32 is our own fp32 "
            "kernel of the same task (from --fp32-dir) on the same values, "
            "timed in this run; the last column is %s over it.\n\n",
            su->dtype, su->target,
            !strcmp(su->dtype, "int8") ? "u8 activations x s8 weights -> s32"
                                       : "bf16 x bf16 -> fp32",
            !strcmp(su->dtype, "int8") ? "exact equality"
                                       : "the fp32 tolerance",
            su->dtype);
  fprintf(f,
          "| task | shape | threads | Heron-C GFLOP/s | baseline | "
          "baseline GFLOP/s | ratio | second baseline | its GFLOP/s "
          "(ratio) | check |%s\n",
          lowp ? " Heron-C fp32 GFLOP/s | speedup over fp32 |" : "");
  fprintf(f, "|---|---|---:|---:|---|---:|---:|---|---:|---|%s\n",
          lowp ? "---:|---:|" : "");
  double logsum[MAX_THREADS] = {0};
  int counted[MAX_THREADS] = {0};
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (r->status == ROW_FAILED || r->status == ROW_INTERRUPTED) {
      /* An interrupted row's error says so itself ("tuning stopped by
       * SIGINT after 4 of 300 trials"). */
      int failed = r->status == ROW_FAILED;
      fprintf(f, "| %s | %s | %d | %s | - | - | - | - | - | %s%s |%s\n",
              r->task->name, r->shape, r->threads,
              failed ? "failed" : "interrupted", failed ? "failed: " : "",
              r->error, lowp ? " - | - |" : "");
      continue;
    }
    char h[32], b[32], q[32], b2[80] = "-";
    fmt_gflops(h, sizeof h, r->heron_gflops);
    fmt_gflops(b, sizeof b, r->base_gflops);
    fmt_ratio(q, sizeof q, r->heron_gflops / r->base_gflops);
    if (r->base2[0]) {
      char v[32], q2[32];
      fmt_gflops(v, sizeof v, r->base2_gflops);
      fmt_ratio(q2, sizeof q2, r->heron_gflops / r->base2_gflops);
      snprintf(b2, sizeof b2, "%s (%s)", v, q2);
    }
    char check[96];
    if (r->status == ROW_MISMATCH && !strcmp(su->dtype, "int8"))
      snprintf(check, sizeof check, "**MISMATCH** (off by up to %.0f)",
               r->max_err);
    else if (r->status == ROW_MISMATCH)
      snprintf(check, sizeof check, "**MISMATCH** (error %.3g x tolerance)",
               r->max_err);
    else
      snprintf(check, sizeof check, "ok");
    if (r->fp32_gflops > 0 && r->fp32_err > 1)
      snprintf(check + strlen(check), sizeof check - strlen(check),
               "; fp32 kernel **MISMATCH**");
    char lp[96] = "";
    if (lowp && r->fp32_gflops > 0) {
      char v[32], q3[32];
      fmt_gflops(v, sizeof v, r->fp32_gflops);
      fmt_ratio(q3, sizeof q3, r->heron_gflops / r->fp32_gflops);
      snprintf(lp, sizeof lp, " %s | %s |", v, q3);
    } else if (lowp) {
      snprintf(lp, sizeof lp, " - | - |");
    }
    fprintf(f, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |%s\n",
            r->task->name, r->shape, r->threads, h, r->base, b, q,
            r->base2[0] ? r->base2 : "-", b2, check, lp);
    for (int k = 0; k < s->nthreads; k++)
      if (s->threads[k] == r->threads && r->status == ROW_OK) {
        logsum[k] += log(r->heron_gflops / r->base_gflops);
        counted[k]++;
      }
  }
  fprintf(f, "\nGeometric mean of the ratio:");
  for (int k = 0; k < s->nthreads; k++)
    if (counted[k])
      fprintf(f, " %d thread%s %.2f (%d task%s);", s->threads[k],
              s->threads[k] > 1 ? "s" : "", exp(logsum[k] / counted[k]),
              counted[k], counted[k] > 1 ? "s" : "");
    else
      fprintf(f, " %d thread%s -;", s->threads[k],
              s->threads[k] > 1 ? "s" : "");
  fprintf(f, "\n");
  int membound = 0;
  for (int i = 0; i < n; i++)
    membound |= rows[i].bytes > 0 && rows[i].status == ROW_OK;
  if (!membound)
    return;
  fprintf(f, "\nMemory-bound tasks: the bandwidth each kernel reaches on the "
             "bytes the op must move (inputs and output once), against a "
             "STREAM-like copy (c[i] = a[i] on the same threads, read + "
             "written bytes) timed in the same run.\n\n");
  fprintf(f, "| task | threads | MB moved | Heron-C GB/s | baseline GB/s | "
             "STREAM copy GB/s | Heron-C / copy |\n");
  fprintf(f, "|---|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (r->bytes <= 0 || r->status != ROW_OK)
      continue;
    fprintf(f, "| %s | %d | %.1f | %.1f | %.1f | %.1f | %.2f |\n",
            r->task->name, r->threads, r->bytes / 1e6, r->heron_gbs,
            r->base_gbs, r->copy_gbs,
            r->copy_gbs > 0 ? r->heron_gbs / r->copy_gbs : 0.0);
  }
}

/* CSV field: quoted when it holds a comma, a quote or a newline. */
static void csv_field(FILE *f, const char *v, int last) {
  if (strpbrk(v, ",\"\n")) {
    fputc('"', f);
    for (; *v; v++) {
      if (*v == '"')
        fputc('"', f);
      fputc(*v, f);
    }
    fputc('"', f);
  } else {
    fputs(v, f);
  }
  fputc(last ? '\n' : ',', f);
}

static void write_csv(FILE *f, const settings *s, const suite *su,
                      const row *rows, int n) {
  fprintf(f, "task,op,shape,epilogue,threads,strategy,trials,best_trial,"
             "tune_gflops,tune_seconds,heron_gflops,baseline,baseline_gflops,"
             "ratio,baseline2,baseline2_gflops,ratio2,max_err_over_tol,"
             "dtype,fp32_gflops,status,error,openblas_kernels,"
             "openblas_default_gflops,openblas_avx512_gflops,"
             "onednn_matmul_gflops\n");
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    char num[64];
    csv_field(f, r->task->name, 0);
    csv_field(f, r->task->op, 0);
    csv_field(f, r->shape, 0);
    csv_field(f, *s->epilogue ? s->epilogue : "none", 0);
    fprintf(f, "%d,", r->threads);
    csv_field(f, r->strategy[0] ? r->strategy : s->strategy, 0);
    fprintf(f, "%d,%d,%.4g,%.1f,", r->trials, r->best_trial, r->tune_gflops,
            r->tune_seconds);
    if (r->status == ROW_FAILED || r->status == ROW_INTERRUPTED) {
      fprintf(f, ",,,,,,,,%s,,%s,", su->dtype,
              r->status == ROW_FAILED ? "failed" : "interrupted");
      csv_field(f, r->error, 0);
      fprintf(f, ",,,\n");
      continue;
    }
    fprintf(f, "%.4g,", r->heron_gflops);
    csv_field(f, r->base, 0);
    fprintf(f, "%.4g,%.4g,", r->base_gflops, r->heron_gflops / r->base_gflops);
    csv_field(f, r->base2, 0);
    if (r->base2[0])
      fprintf(f, "%.4g,%.4g,", r->base2_gflops,
              r->heron_gflops / r->base2_gflops);
    else
      fprintf(f, ",,");
    snprintf(num, sizeof num, "%.3g", r->max_err);
    csv_field(f, num, 0);
    csv_field(f, su->dtype, 0);
    if (r->fp32_gflops > 0)
      fprintf(f, "%.4g,", r->fp32_gflops);
    else
      fprintf(f, ",");
    csv_field(f, r->status == ROW_OK ? "ok" : "MISMATCH", 0);
    csv_field(f, "", 0);
    /* Added after "error", so that the older columns keep their places. */
    csv_field(f, r->blas_kernels, 0);
    const double extra[3] = {r->blas_default_gflops, r->blas_avx512_gflops,
                             r->dnn_mm_gflops};
    for (int k = 0; k < 3; k++) {
      if (extra[k] > 0)
        fprintf(f, "%.4g", extra[k]);
      fputc(k < 2 ? ',' : '\n', f);
    }
  }
}

/* ---- main ---------------------------------------------------------------- */

/* The weights --prepack-weights prepacks in op (the task option prepack),
 * NULL for none: a convolution's weight; in int8 and bf16 also the
 * matrix ops' weights (B; gemv's A, whose vector is the activation), as
 * oneDNN's blocked matmul reorders them untimed.  fp32 GEMM keeps its B
 * in the call: its OpenBLAS baseline packs per call. */
static const char *prepacked_weights(const settings *s, const suite *su,
                                     const char *op) {
  if (!s->prepack_weights || !op)
    return NULL;
  int lowp = strcmp(su->dtype, "fp32") != 0;
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
    if (strcmp(families[i].op, op))
      continue;
    switch (families[i].fam) {
    case FAM_CONV:
    case FAM_DECONV:
      return "weight";
    case FAM_GEMM:
    case FAM_BMM:
      return lowp ? "B" : NULL;
    case FAM_GEMV:
      return lowp ? "A" : NULL;
    default:
      return NULL;
    }
  }
  return NULL;
}

/* The row's file name: the task name (CLI_NAME_RULE), the epilogue and
 * prepacking (a task with another epilogue or prepacked inputs is another
 * task, with its own log) and the thread count. */
static void row_file(const settings *s, const suite *su, row *r) {
  char epi[48] = "";
  int pre = prepacked_weights(s, su, r->task->op) != NULL;
  snprintf(epi, sizeof epi, "%s%s%s", s->bias ? "+bias" : "",
           s->relu ? "+relu" : "", pre ? "+prepack" : "");
  snprintf(r->file, sizeof r->file, "%s%s-t%d", r->task->name, epi, r->threads);
}

static void step(const row *r, int i, int n, const char *fmt, ...)
    HERON_PRINTF(4, 5);
static void step(const row *r, int i, int n, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "[%d/%d %s, %d thread%s] ", i + 1, n, r->task->name,
          r->threads, r->threads > 1 ? "s" : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int main(int argc, char **argv) {
  cli_set_prog("bench_suite");
  /* The OpenBLAS half of a row with another kernel set, in a child (see
   * openblas_child_run); not an option a user gives. */
  if (argc > 1 && !strcmp(argv[1], "--internal-openblas-child"))
    return openblas_child(argc, argv);
  ssize_t self_len = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
  self_exe[self_len > 0 ? self_len : 0] = '\0';
  static settings s;
  parse_args(&s, argc, argv);
  static suite su;
  load_suite(&s, &su);
  int e = cli_make_dirs(s.out);
  if (e)
    cli_usage("--out: cannot create '%s': %s", s.out, strerror(e));
  /* From here a SIGINT or SIGTERM ends the benchmark in order: the tuning
   * run in flight stops with its log kept, no other row is tuned, the rows
   * tuned before it are compared (a signal while comparing stops that
   * too), and the results are written; a second signal ends it at once. */
  s.stop = cli_stop_on_signals();

  int n = su.ntasks * s.nthreads;
  row *rows = calloc((size_t)n, sizeof *rows);
  if (!rows)
    return CLI_EXIT_FAILURE;
  for (int i = 0; i < n; i++) {
    row *r = &rows[i];
    r->task = &su.tasks[i / s.nthreads];
    r->threads = s.threads[i % s.nthreads];
    row_file(&s, &su, r);
    snprintf(r->shape, sizeof r->shape, "-");
    if (r->task->error) {
      r->status = ROW_FAILED;
      snprintf(r->error, sizeof r->error, "%s", r->task->error);
      continue;
    }
    heron_error err;
    heron_error_clear(&err);
    heron_task_spec spec = {.op = r->task->op,
                            .shape = r->task->shape,
                            .nshape = r->task->nshape,
                            .dtype = su.dtype,
                            .target = su.target,
                            .epilogue = s.epilogue,
                            .prepack = prepacked_weights(&s, &su, r->task->op)};
    if (heron_task_create(&spec, &r->ht, &err)) {
      r->status = ROW_FAILED;
      snprintf(r->error, sizeof r->error, "%s: %s", heron_err_name(err.code),
               err.text);
      continue;
    }
    /* The shape column shows every dimension, defaults included, as the
     * task key has them. */
    const char *key = strchr(heron_task_key(r->ht), '/');
    snprintf(r->shape, sizeof r->shape, "%.*s", (int)strcspn(key + 1, "/"),
             key + 1);
  }

  /* Phase 1: tune everything (no OpenMP in this process until it ends). */
  for (int i = 0; i < n && !s.no_tune; i++) {
    row *r = &rows[i];
    if (r->status == ROW_FAILED) {
      step(r, i, n, "skipped: %s", r->error);
      continue;
    }
    if (cli_stop_signal()) {
      interrupt_row(r, "tuning");
      continue;
    }
    step(r, i, n, "tuning %s: %d trials with %s%s%s", heron_task_key(r->ht),
         s.trials, s.strategy, s.model ? " + " : "", s.model ? s.model : "");
    tune_row(&s, r);
    if (r->status == ROW_FAILED)
      step(r, i, n, "FAILED: %s", r->error);
    else if (r->status == ROW_INTERRUPTED)
      step(r, i, n, "%s; its log is kept and resumed next time", r->error);
    else
      step(r, i, n, "tuned: best %.2f GFLOP/s at trial %d of %d (%.0f s)",
           r->tune_gflops, r->best_trial, r->trials, r->tune_seconds);
  }

  /* Phase 2: compare, in this process: after a signal in phase 1, the rows
   * tuned to their budget before it (what finished); a signal in phase 2
   * stops the comparisons that are left. */
  int tune_sig = cli_stop_signal();
  if (dnnl_engine_create(&dnn_engine, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&dnn_stream, dnn_engine, dnnl_stream_default_flags) !=
          dnnl_success) {
    fprintf(stderr, "bench_suite: cannot create a oneDNN CPU engine\n");
    return CLI_EXIT_FAILURE;
  }
  int bad = 0;
  for (int i = 0; i < n; i++) {
    row *r = &rows[i];
    if (r->status == ROW_OK && !tune_sig && cli_stop_signal())
      interrupt_row(r, "the comparison");
    if (r->status == ROW_INTERRUPTED) {
      bad = 1;
      continue;
    }
    if (r->status != ROW_FAILED) {
      if (s.no_tune)
        read_emitted(&s, r);
      step(r, i, n, "comparing with the baselines");
      if (strcmp(su.dtype, "fp32"))
        compare_row_lowp(&s, &su, r);
      else
        compare_row(&s, r);
    }
    if (r->status == ROW_FAILED) {
      step(r, i, n, "FAILED: %s", r->error);
      bad = 1;
      continue;
    }
    step(r, i, n, "Heron-C %.3g GFLOP/s, %s %.3g GFLOP/s, ratio %.3g%s%s",
         r->heron_gflops, r->base, r->base_gflops,
         r->heron_gflops / r->base_gflops,
         r->status == ROW_MISMATCH ? "; MISMATCH: outputs differ" : "",
         r->status == ROW_OK ? "; outputs agree" : "");
    if (r->bytes > 0)
      step(r, i, n,
           "memory-bound: Heron-C %.1f GB/s, %s %.1f GB/s, STREAM copy %.1f "
           "GB/s",
           r->heron_gbs, r->base, r->base_gbs, r->copy_gbs);
    bad |= r->status != ROW_OK;
  }
  set_threads(cpu_count());

  char path[4200];
  snprintf(path, sizeof path, "%s/results.md", s.out);
  FILE *md = fopen(path, "w");
  snprintf(path, sizeof path, "%s/results.csv", s.out);
  FILE *csv = fopen(path, "w");
  if (!md || !csv) {
    fprintf(stderr, "bench_suite: cannot write the results into %s: %s\n",
            s.out, strerror(errno));
    return CLI_EXIT_FAILURE;
  }
  printf("\n");
  write_markdown(stdout, &s, &su, rows, n);
  write_markdown(md, &s, &su, rows, n);
  write_csv(csv, &s, &su, rows, n);
  int werr = fclose(md) != 0;
  werr |= fclose(csv) != 0;
  if (werr)
    fprintf(stderr, "bench_suite: error writing the results into %s\n", s.out);
  fprintf(stderr, "bench_suite: results in %s/results.md and results.csv\n",
          s.out);
  int sig = cli_stop_signal();
  if (sig) {
    int done = 0;
    for (int i = 0; i < n; i++)
      done += rows[i].status == ROW_OK || rows[i].status == ROW_MISMATCH;
    fprintf(stderr,
            "bench_suite: the benchmark was interrupted by %s with %d of %d "
            "rows compared; the results hold those.  Run the same command "
            "again to resume it (complete logs are not searched again, "
            "partial ones are resumed).\n",
            cli_signal_name(sig), done, n);
  }

  for (int i = 0; i < n; i++)
    heron_task_free(rows[i].ht);
  free(rows);
  dnnl_stream_destroy(dnn_stream);
  dnnl_engine_destroy(dnn_engine);
  cli_free_all();
  if (sig)
    return cli_stop_status(sig);
  return bad || werr ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
