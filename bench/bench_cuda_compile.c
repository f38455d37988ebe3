/* bench/bench_cuda_compile.c - how fast the cuda target turns configs into
 * kernels without a GPU, on the GEMM 1024^3 fp16 Tensor Core template (or
 * any op given):
 *
 *   sampler    valid configs per second from heron_space_sample (one
 *              core), against a rejection-sampling baseline measured in the
 *              same run: every knob drawn uniformly from its domain, the
 *              rest completed by heron_space_validate, kept when valid;
 *   NVRTC      generated kernels compiled to cubins per second on 1 and on
 *              2 threads (the same kernels both times), with the mean ptxas
 *              statistics.
 *
 * usage: bench_cuda_compile [--op gemm] [--shape 1024,1024,1024]
 *                           [--hw a100] [--kernels 40] [--samples 20000]
 *        bench_cuda_compile --help
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/targets/cuda/toolchain.h"
#include "core/util/util.h"
#include "heron/heron.h"

/* ---- Options --------------------------------------------------------------
 * One table gives the parser and --help (tools/cli.h). */

enum { OPT_OP = 1, OPT_SHAPE, OPT_HW, OPT_KERNELS, OPT_SAMPLES, OPT_HELP };

static const cli_option options[] = {
    {OPT_OP, "op", "NAME", "operator whose fp16 cuda template is used", "gemm"},
    {OPT_SHAPE, "shape", "D1,D2,...",
     "the op's dimensions in their order (heron-space --op NAME --describe)",
     "1024,1024,1024"},
    {OPT_HW, "hw", "NAME|FILE",
     "GPU description in configs/hw/ (a100, h100, h200, rtx3080, ...) or a "
     "JSON file",
     "a100"},
    {OPT_KERNELS, "kernels", "N", "sampled configs compiled with NVRTC", "40"},
    {OPT_SAMPLES, "samples", "N", "configs drawn to time the sampler", "20000"},
    {OPT_HELP, "help", NULL, "print this help and exit", ""},
    {0, NULL, NULL, NULL, ""}};

static void usage(FILE *out) {
  fprintf(out, "usage: bench_cuda_compile [options]\n\n"
               "How fast the cuda target turns configs into kernels without "
               "a GPU: valid\nconfigs per second from the sampler against "
               "rejection sampling, and kernels\ncompiled per second by "
               "NVRTC on 1 and 2 threads.\n\noptions:\n");
  cli_print_options(out, options);
  fprintf(out, "\nExit status: 0 every kernel compiled; 1 a sample, a "
               "source or a compile failed,\nor no NVRTC; 2 a usage "
               "error.\n");
}

typedef struct pool {
  char **src;
  heron__nvrtc_result *res;
  int n, next, sm, failed;
  pthread_mutex_t mu;
} pool;

static void *compile_worker(void *arg) {
  pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    int i = p->next++;
    pthread_mutex_unlock(&p->mu);
    if (i >= p->n)
      return NULL;
    heron_error err = {0};
    if (heron__nvrtc_compile(p->src[i], p->sm, &p->res[i], &err) != HERON_OK) {
      pthread_mutex_lock(&p->mu);
      if (!p->failed++)
        fprintf(stderr, "compile failed: %s\n", err.text);
      pthread_mutex_unlock(&p->mu);
    }
  }
}

/* Compiles every source on `threads` threads; returns kernels per second. */
static double compile_all(char **src, int n, int sm, int threads,
                          double *regs_mean, int *failed) {
  pool p = {.src = src, .n = n, .sm = sm};
  p.res = calloc((size_t)n, sizeof *p.res);
  pthread_mutex_init(&p.mu, NULL);
  pthread_t th[16];
  double t0 = heron__now();
  for (int i = 0; i < threads; i++)
    pthread_create(&th[i], NULL, compile_worker, &p);
  for (int i = 0; i < threads; i++)
    pthread_join(th[i], NULL);
  double secs = heron__now() - t0;
  double regs = 0;
  for (int i = 0; i < n; i++) {
    regs += p.res[i].regs;
    heron__nvrtc_result_free(&p.res[i]);
  }
  free(p.res);
  pthread_mutex_destroy(&p.mu);
  *regs_mean = regs / n;
  *failed = p.failed;
  return n / secs;
}

/* Rejection sampling: uniform knobs, completed by validate. */
static double rejection_rate(const heron_space *sp, double seconds,
                             int *valid_out, int *tried_out) {
  heron_rng rng;
  heron_rng_seed(&rng, 99);
  int nv = heron_space_nvars(sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int valid = 0, tried = 0;
  double t0 = heron__now(), el = 0;
  while ((el = heron__now() - t0) < seconds) {
    for (int v = 0; v < nv; v++)
      cfg[v] = HERON_UNSET;
    for (int k = 0; k < heron_space_nknobs(sp); k++) {
      int v = heron_space_knob(sp, k);
      int64_t lo, hi;
      const int64_t *vals;
      int n;
      heron_space_var_domain(sp, v, &lo, &hi, &vals, &n);
      cfg[v] =
          vals ? vals[heron_rng_below(&rng, (uint64_t)n)]
               : lo + (int64_t)heron_rng_below(&rng, (uint64_t)(hi - lo + 1));
    }
    tried++;
    if (heron_space_validate(sp, &rng, cfg, cfg, NULL) == HERON_OK)
      valid++;
  }
  free(cfg);
  *valid_out = valid;
  *tried_out = tried;
  return valid / el;
}

int main(int argc, char **argv) {
  const char *op = "gemm", *shape = "1024,1024,1024", *hw = "a100";
  int kernels = 40, samples = 20000;
  cli_set_prog("bench_cuda_compile");
  cli_parser p;
  cli_parser_init(&p, options, argc, argv);
  const char *v;
  int id;
  while ((id = cli_next(&p, &v, NULL)) != 0) {
    switch (id) {
    case OPT_OP:
      op = v;
      break;
    case OPT_SHAPE:
      shape = v;
      break;
    case OPT_HW:
      hw = v;
      break;
    case OPT_KERNELS:
      kernels = (int)cli_int("--kernels", v, 1, 1000000);
      break;
    case OPT_SAMPLES:
      samples = (int)cli_int("--samples", v, 1, 100000000);
      break;
    case OPT_HELP:
      usage(stdout);
      return CLI_EXIT_OK;
    }
  }
  cli_check_op(op);
  heron_error err = {0};
  int64_t dims[16];
  int nd = 0;
  /* The library's message names --shape itself. */
  if (heron_parse_shape(op, shape, dims, 16, &nd, &err) != HERON_OK)
    cli_usage("%s", err.text);
  if (!heron__nvrtc_available()) {
    fprintf(stderr, "%s: libheron was built without NVRTC\n", cli_prog());
    return CLI_EXIT_FAILURE;
  }
  heron_task_spec spec = {.op = op,
                          .shape = dims,
                          .nshape = nd,
                          .dtype = "fp16",
                          .target = "cuda",
                          .hw = hw};
  heron_task *t = NULL;
  if (heron_task_create(&spec, &t, &err) != HERON_OK)
    cli_usage("--op %s --shape %s --hw %s: %s", op, shape, hw, err.text);
  const heron_space *sp = heron_task_space(t);
  int nv = heron_space_nvars(sp);
  printf("task %s on %s: %d knobs, %d variables, %d constraints\n",
         heron_task_key(t), hw, heron_space_nknobs(sp), nv,
         heron_space_nconstraints(sp));

  /* Sampler against rejection sampling. */
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  int64_t *cfgs = malloc((size_t)samples * (size_t)nv * sizeof *cfgs);
  double t0 = heron__now();
  for (int i = 0; i < samples; i++)
    if (heron_space_sample(sp, &rng, cfgs + (size_t)i * (size_t)nv, &err)) {
      fprintf(stderr, "%s: sample: %s\n", cli_prog(), err.text);
      return 1;
    }
  double ours = samples / (heron__now() - t0);
  int valid, tried;
  double rej = rejection_rate(sp, 3.0, &valid, &tried);
  if (valid > 0)
    printf("sampler: %.0f valid samples/s (one core); rejection sampling: "
           "%.1f valid/s (%d of %d uniform draws valid); ratio %.0fx\n",
           ours, rej, valid, tried, ours / rej);
  else
    printf("sampler: %.0f valid samples/s (one core); rejection sampling: "
           "0 valid of %d uniform draws in 3 s (< 0.33 valid/s), so the "
           "solver is more than %.0fx faster\n",
           ours, tried, ours * 3.0);

  /* NVRTC throughput on the first `kernels` sampled configs. */
  if (kernels > samples)
    kernels = samples;
  char **src = calloc((size_t)kernels, sizeof *src);
  for (int i = 0; i < kernels; i++)
    if (heron_task_source(t, cfgs + (size_t)i * (size_t)nv, &src[i], &err)) {
      fprintf(stderr, "%s: source: %s\n", cli_prog(), err.text);
      return 1;
    }
  heron__cuda_launch l;
  heron__cuda_launch_parse(src[0], &l);
  int sm = 80;
  double r1, r2;
  int f1, f2;
  double k1 = compile_all(src, kernels, sm, 1, &r1, &f1);
  double k2 = compile_all(src, kernels, sm, 2, &r2, &f2);
  printf("NVRTC sm_%d: %.2f kernels/s on 1 thread, %.2f kernels/s on 2 "
         "threads (ratio %.2f), %d kernels, %d failed, mean %.0f registers\n",
         sm, k1, k2, k2 / k1, kernels, f1 + f2, r1);
  for (int i = 0; i < kernels; i++)
    heron_free(src[i]);
  free(src);
  free(cfgs);
  heron_task_free(t);
  return f1 + f2 ? 1 : 0;
}
