/* bench/bench_suite_compare.c - one row of an fp32 suite: the emitted
 * kernel against its baselines, outputs checked, all timed in turn. */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bench_suite.h"

/* ---- One comparison ------------------------------------------------------ */

/* Largest error of out against ref, relative to a tolerance that grows with
 * the reduction length: both sides sum in fp32, in different orders, so
 * they may differ by a few roundings of partial sums of up to `red` terms
 * of size <= 1, while a wrong kernel is off by whole terms.  Returns the
 * ratio error / tolerance (a match when <= 1; NaN counts as infinite). */
double compare(const float *out, const float *ref, int64_t n, double red) {
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

void compare_row(const settings *s, row *r) {
  geom g;
  if (make_geom(r->ht, &g, r->error, sizeof r->error)) {
    r->status = ROW_FAILED;
    return;
  }
  char dir[CLI_PATH_BUF];
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
  zero_block_padding(&g, in0, in1);
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
    /* A blocked op's tensors are in oneDNN's blocked layout already: the
     * baseline is oneDNN on that layout, nothing converted ("plain" is
     * the user's layout here), its own choice second. */
    char lay[32] = "";
    if (g.blk)
      snprintf(lay, sizeof lay, "%s%dc as given", g.sp == 1 ? "nCw" : "nChw",
               g.blk);
    dnn_ctx *first = g.blk ? &plain : &blocked;
    dnn_ctx *second = g.blk ? &blocked : &plain;
    snprintf(rs[nr].name, sizeof rs[nr].name, "%s (%s, %s%s)", lib,
             g.blk ? lay : "blocked", first->impl, g.blk ? how_p : how_b);
    rs[nr].call = dnn_call;
    rs[nr++].self = first;
    snprintf(rs[nr].name, sizeof rs[nr].name, "%s (%s, %s%s)", lib,
             g.blk ? "its own layouts" : "plain", second->impl,
             g.blk ? how_b : how_p);
    rs[nr].call = dnn_call;
    rs[nr++].self = second;
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
