/* bench/bench_space.c - constrained random sampling throughput.
 *
 * Draws N samples of a task's space on one thread, reports valid samples per
 * second, and checks every sample with a checker written here, independent
 * of the solver: it evaluates each constraint from the raw operands
 * (heron__space_constraint) with its own arithmetic, and checks every value
 * against its variable's declared domain.
 *
 *   bench_space [--op gemm] [--shape 1024,1024,1024] [--samples 100000]
 *               [--seed 1]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/op/task.h"
#include "core/space/builder.h"
#include "core/util/util.h"
#include "heron/heron.h"

/* Multiplies with saturation: the checker must not overflow either. */
static __int128 mul_sat(__int128 a, __int128 b) {
  __int128 lim = (__int128)1 << 100;
  __int128 p = a * b;
  return p > lim ? lim : (p < -lim ? -lim : p);
}

static int in_domain(const heron_space *sp, int v, int64_t x) {
  int64_t lo, hi;
  const int64_t *vals;
  int n;
  heron_space_var_domain(sp, v, &lo, &hi, &vals, &n);
  if (x < lo || x > hi)
    return 0;
  if (!vals)
    return 1;
  for (int i = 0; i < n; i++)
    if (vals[i] == x)
      return 1;
  return 0;
}

static int holds(const heron_space *sp, int c, const int64_t *cfg) {
  int kind, z, nx, cond, nvals;
  const int *xs;
  const int64_t *vals;
  heron__space_constraint(sp, c, &kind, &z, &xs, &nx, &cond, &vals, &nvals);
  if (cond >= 0 && cfg[cond] == 0)
    return 1;
  __int128 acc;
  switch (kind) {
  case HERON_C_PROD:
    acc = 1;
    for (int i = 0; i < nx; i++)
      acc = mul_sat(acc, cfg[xs[i]]);
    return acc == cfg[z];
  case HERON_C_SUM:
    acc = 0;
    for (int i = 0; i < nx; i++)
      acc += cfg[xs[i]];
    return acc == cfg[z];
  case HERON_C_EQ: return cfg[z] == cfg[xs[0]];
  case HERON_C_NE: return cfg[z] != cfg[xs[0]];
  case HERON_C_LE: return cfg[z] <= cfg[xs[0]];
  case HERON_C_LT: return cfg[z] < cfg[xs[0]];
  case HERON_C_IN:
    for (int i = 0; i < nvals; i++)
      if (vals[i] == cfg[z])
        return 1;
    return 0;
  case HERON_C_SELECT: {
    int64_t s = cfg[xs[0]];
    return s >= 0 && s < nx - 1 && cfg[z] == cfg[xs[1 + s]];
  }
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *op = "gemm", *shape_text = "1024,1024,1024";
  long samples = 100000;
  uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--op")) op = argv[i + 1];
    else if (!strcmp(argv[i], "--shape")) shape_text = argv[i + 1];
    else if (!strcmp(argv[i], "--samples")) samples = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 10);
    else {
      fprintf(stderr, "bench_space: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  heron_error err;
  heron_error_clear(&err);
  int64_t shape[16];
  int n;
  heron_task *t = NULL;
  if (heron_parse_shape(op, shape_text, shape, 16, &n, &err) ||
      heron_task_create(&(heron_task_spec){.op = op, .shape = shape, .nshape = n},
                        &t, &err)) {
    fprintf(stderr, "bench_space: %s\n", err.text);
    return 1;
  }
  const heron_space *sp = heron_task_space(t);
  int nv = heron_space_nvars(sp), nc = heron_space_nconstraints(sp);
  int64_t *cfgs = malloc((size_t)samples * (size_t)nv * sizeof *cfgs);
  heron_rng rng;
  heron_rng_seed(&rng, seed);
  long ok = 0, failed = 0;
  double t0 = heron__now();
  for (long i = 0; i < samples; i++) {
    if (heron_space_sample(sp, &rng, cfgs + (size_t)ok * (size_t)nv, NULL) ==
        HERON_OK)
      ok++;
    else
      failed++;
  }
  double secs = heron__now() - t0;
  long pass = 0;
  for (long i = 0; i < ok; i++) {
    const int64_t *cfg = cfgs + (size_t)i * (size_t)nv;
    int good = 1;
    for (int v = 0; v < nv && good; v++)
      good = in_domain(sp, v, cfg[v]);
    for (int c = 0; c < nc && good; c++)
      good = holds(sp, c, cfg);
    pass += good;
  }
  printf("task %s: %d variables (%d knobs), %d constraints\n",
         heron_task_key(t), nv, heron_space_nknobs(sp), nc);
  printf("sampled %ld in %.3f s on one core: %.0f valid samples/s "
         "(%ld sampling failures)\n",
         ok, secs, ok / secs, failed);
  printf("independent checker: %ld / %ld samples satisfy every constraint "
         "and domain (%.2f%%)\n",
         pass, ok, ok ? 100.0 * pass / ok : 0.0);
  free(cfgs);
  heron_task_free(t);
  return pass == ok && ok > 0 ? 0 : 1;
}
