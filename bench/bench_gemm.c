/* bench/bench_gemm.c - the best tuned fp32 GEMM against OpenBLAS sgemm,
 * both measured in this run, on one thread and on all cores.
 *
 *   bench_gemm [--size 1024] [--trials 200] [--strategy random] [--seed 1]
 *              [--log FILE] [--resume FILE] [--number 1] [--timeout 10]
 *   bench_gemm --help
 *
 * Tunes (or resumes) gemm SIZE^3 fp32 with heron_tune, emits the best
 * kernel, compiles it into a shared object, then times it and
 * cblas_sgemm on the same inputs with 1 and with all threads, checks that
 * the two outputs agree, and prints the ratios.
 */
#include <cblas.h>
#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "heron/heron.h"
#include "timing.h"

void openblas_set_num_threads(int);

/* ---- Options --------------------------------------------------------------
 * One table gives the parser and --help (tools/cli.h), so the help cannot
 * drift from what is accepted. */

enum {
  OPT_SIZE = 1,
  OPT_TRIALS,
  OPT_STRATEGY,
  OPT_SEED,
  OPT_LOG,
  OPT_RESUME,
  OPT_NUMBER,
  OPT_TIMEOUT,
  OPT_HELP
};

/* One call per repeat (grown to 50 ms for fast kernels) keeps the 200
 * trials of a 1024^3 search to minutes; the final comparison below times
 * the winner and OpenBLAS with their own, longer repeats. */
static const cli_option options[] = {
    {OPT_SIZE, "size", "N", "tune and compare GEMM N x N x N (M = N = K)",
     "1024"},
    {OPT_TRIALS, "trials", "N", "trials of the search", "200"},
    {OPT_STRATEGY, "strategy", "NAME|PATH", "search strategy plugin", "random"},
    {OPT_SEED, "seed", "N", "random seed of the strategy", "1"},
    {OPT_LOG, "log", "FILE", "write the search's JSON Lines log here", "none"},
    {OPT_RESUME, "resume", "LOG", "continue the search recorded in LOG",
     "none"},
    {OPT_NUMBER, "number", "N", "tuning: runs averaged per repeat", "1"},
    {OPT_TIMEOUT, "timeout", "SECONDS", "tuning: limit per build and per run",
     "10"},
    {OPT_HELP, "help", NULL, "print this help and exit", ""},
    {0, NULL, NULL, NULL, ""}};

typedef struct settings {
  int size, trials, number;
  const char *strategy, *log, *resume;
  uint64_t seed;
  double timeout;
} settings;

static void usage(FILE *out) {
  fprintf(out, "usage: bench_gemm [options]\n\n"
               "Tunes fp32 GEMM N x N x N with Heron-C (or resumes a "
               "search), compiles the best\nkernel, and times it against "
               "OpenBLAS sgemm on the same inputs, on one thread\nand on "
               "all cores; prints the ratios and checks the outputs "
               "agree.\n\noptions:\n");
  cli_print_options(out, options);
  fprintf(out, "\nExit status: 0 the outputs agree; 1 the search, the "
               "build or the check failed;\n2 a usage error.\n");
}

static void parse_args(settings *s, int argc, char **argv) {
  s->size = 1024;
  s->trials = 200;
  s->strategy = "random";
  s->seed = 1;
  s->log = s->resume = NULL;
  s->number = 1;
  s->timeout = 10;
  cli_parser p;
  cli_parser_init(&p, options, argc, argv);
  const char *v;
  int id;
  while ((id = cli_next(&p, &v, NULL)) != 0) {
    switch (id) {
    case OPT_SIZE:
      s->size = (int)cli_int("--size", v, 1, 65536);
      break;
    case OPT_TRIALS:
      s->trials = (int)cli_int("--trials", v, 1, INT_MAX);
      break;
    case OPT_STRATEGY:
      s->strategy = v;
      break;
    case OPT_SEED:
      s->seed = cli_u64("--seed", v);
      break;
    case OPT_LOG:
      s->log = v;
      break;
    case OPT_RESUME:
      s->resume = v;
      break;
    case OPT_NUMBER:
      s->number = (int)cli_int("--number", v, 1, INT_MAX);
      break;
    case OPT_TIMEOUT:
      s->timeout = cli_double("--timeout", v, DBL_MIN, INFINITY);
      break;
    case OPT_HELP:
      usage(stdout);
      exit(CLI_EXIT_OK);
    }
  }
}

typedef void (*kernel_fn)(void *const *);

/* Seconds per call of f(ctx): the median of `reps` repeats of at least
 * 50 ms each (tools/timing.h). */
static double time_median(void (*f)(void *ctx), void *ctx, int reps) {
  cli_runner r = {.call = f, .self = ctx};
  cli_time_runners(&r, 1, reps, 0.05, 1);
  return r.seconds;
}

typedef struct ctx {
  int n;
  float *A, *B, *C;
  kernel_fn k;
} ctx;

static void call_blas(void *p) {
  ctx *c = p;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->n, c->n, c->n, 1.0f,
              c->A, c->n, c->B, c->n, 0.0f, c->C, c->n);
}

static void call_heron(void *p) {
  ctx *c = p;
  void *bufs[3] = {c->A, c->B, c->C};
  c->k(bufs);
}

int main(int argc, char **argv) {
  cli_set_prog("bench_gemm");
  settings s;
  parse_args(&s, argc, argv);
  int size = s.size;
  /* A misspelt strategy is a usage error now, not after the tuner set up. */
  char path[4096];
  heron_error err;
  heron_error_clear(&err);
  if (heron_plugin_resolve(s.strategy, "strategy", path, sizeof path, &err))
    cli_usage("--strategy: %s", err.text);
  char dir[] = "/tmp/heron-bench-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("bench_gemm: mkdtemp");
    return 1;
  }
  heron_error_clear(&err);
  int64_t shape[3] = {size, size, size};
  heron_task *t = NULL;
  if (heron_task_create(
          &(heron_task_spec){.op = "gemm", .shape = shape, .nshape = 3}, &t,
          &err)) {
    fprintf(stderr, "bench_gemm: %s\n", err.text);
    return 1;
  }
  heron_tune_options o;
  heron_tune_options_init(&o);
  o.strategy = s.strategy;
  o.trials = s.trials;
  o.seed = s.seed;
  o.log_path = s.log;
  o.resume_path = s.resume;
  o.emit_dir = dir;
  o.measure.number = s.number;
  o.measure.repeat = 3;
  o.measure.min_repeat_ms = 50;
  o.measure.timeout_s = s.timeout;
  o.progress = stderr;
  heron_tune_result res;
  if (heron_tune(t, &o, &res, &err)) {
    fprintf(stderr, "bench_gemm: %s: %s\n", heron_err_name(err.code), err.text);
    return 1;
  }
  if (res.best_trial == 0) {
    fprintf(stderr, "bench_gemm: no kernel succeeded\n");
    return 1;
  }
  char cmd[8192], so[CLI_PATH_BUF];
  snprintf(so, sizeof so, "%s/kernel.so", dir);
  snprintf(cmd, sizeof cmd,
           "cc -O3 -march=native -fopenmp -fPIC -shared -o %s %s/kernel.c", so,
           dir);
  if (system(cmd) != 0) {
    fprintf(stderr, "bench_gemm: cannot build the emitted kernel\n");
    return 1;
  }
  void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  kernel_fn k = dl ? (kernel_fn)(uintptr_t)dlsym(dl, "heron_kernel") : NULL;
  if (!k) {
    fprintf(stderr, "bench_gemm: %s\n", dlerror());
    return 1;
  }
  size_t nn = (size_t)size * (size_t)size;
  ctx c = {size, aligned_alloc(64, nn * 4), aligned_alloc(64, nn * 4),
           aligned_alloc(64, nn * 4), k};
  float *ref = malloc(nn * 4);
  srand(7);
  for (size_t i = 0; i < nn; i++) {
    c.A[i] = (float)rand() / RAND_MAX * 2 - 1;
    c.B[i] = (float)rand() / RAND_MAX * 2 - 1;
  }
  call_blas(&c);
  memcpy(ref, c.C, nn * 4);
  memset(c.C, 0, nn * 4);
  call_heron(&c);
  double maxerr = 0;
  for (size_t i = 0; i < nn; i++)
    maxerr = fmax(maxerr, fabs(c.C[i] - ref[i]) / (fabs(ref[i]) + 1e-3));
  double flops = 2.0 * size * size * size;
  int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  printf("\nGEMM %dx%dx%d fp32, best of %d trials (%s), trial %d\n", size, size,
         size, res.trials, s.strategy, res.best_trial);
  printf("output check against OpenBLAS: max relative error %.2e (%s)\n",
         maxerr, maxerr < 1e-2 ? "ok" : "MISMATCH");
  printf("| threads | Heron-C GFLOP/s | OpenBLAS GFLOP/s | ratio |\n");
  printf("|---|---|---|---|\n");
  int counts[2] = {1, cores};
  for (int i = 0; i < (cores > 1 ? 2 : 1); i++) {
    omp_set_num_threads(counts[i]);
    openblas_set_num_threads(counts[i]);
    double th = time_median(call_heron, &c, 7);
    double tb = time_median(call_blas, &c, 7);
    printf("| %d | %.1f | %.1f | %.2f |\n", counts[i], flops / th / 1e9,
           flops / tb / 1e9, tb / th);
  }
  dlclose(dl);
  free(c.A);
  free(c.B);
  free(c.C);
  free(ref);
  heron_task_free(t);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "bench_gemm: could not remove %s\n", dir);
  return maxerr < 1e-2 ? 0 : 1;
}
