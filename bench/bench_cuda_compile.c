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
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/measure/measure.h"
#include "core/util/util.h"
#include "heron/heron.h"

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
      cfg[v] = vals ? vals[heron_rng_below(&rng, (uint64_t)n)]
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
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help")) {
      printf("usage: %s [--op NAME] [--shape D1,D2,...] [--hw GPU] "
             "[--kernels N] [--samples N]\n",
             argv[0]);
      return 0;
    }
    if (!v) {
      fprintf(stderr, "%s: %s needs a value\n", argv[0], a);
      return 2;
    }
    if (!strcmp(a, "--op"))
      op = v;
    else if (!strcmp(a, "--shape"))
      shape = v;
    else if (!strcmp(a, "--hw"))
      hw = v;
    else if (!strcmp(a, "--kernels"))
      kernels = atoi(v);
    else if (!strcmp(a, "--samples"))
      samples = atoi(v);
    else {
      fprintf(stderr, "%s: unknown flag %s (see --help)\n", argv[0], a);
      return 2;
    }
    i++;
  }
  if (kernels < 1 || samples < 1) {
    fprintf(stderr, "%s: --kernels and --samples must be positive\n", argv[0]);
    return 2;
  }
  if (!heron__nvrtc_available()) {
    fprintf(stderr, "%s: libheron was built without NVRTC\n", argv[0]);
    return 1;
  }
  heron_error err = {0};
  int64_t dims[16];
  int nd = 0;
  if (heron_parse_shape(op, shape, dims, 16, &nd, &err) != HERON_OK) {
    fprintf(stderr, "%s: --shape: %s\n", argv[0], err.text);
    return 2;
  }
  heron_task_spec spec = {.op = op, .shape = dims, .nshape = nd,
                          .dtype = "fp16", .target = "cuda", .hw = hw};
  heron_task *t = NULL;
  if (heron_task_create(&spec, &t, &err) != HERON_OK) {
    fprintf(stderr, "%s: %s\n", argv[0], err.text);
    return 2;
  }
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
      fprintf(stderr, "%s: sample: %s\n", argv[0], err.text);
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
      fprintf(stderr, "%s: source: %s\n", argv[0], err.text);
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
