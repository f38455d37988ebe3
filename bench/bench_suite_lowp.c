/* bench/bench_suite_lowp.c - one row of an int8 or bf16 suite, against
 * oneDNN in the same dtype. */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_suite.h"

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

void compare_row_lowp(const settings *s, const suite *su, row *r) {
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
  char dir[CLI_PATH_BUF];
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
    char dir32[CLI_PATH_BUF];
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
