/* tests/op/op_cross_checks.c - checks of the suite's ops against facts that
 * do not come from their own definitions: a transposed convolution with
 * stride 1 is a convolution with the kernel flipped and transposed, a scan
 * is a cumulative sum, SCAN's constant matrix is filled as defined, and the
 * fused epilogue (bias, ReLU) gives the same result from the interpreter as
 * from the reference followed by heron__op_apply_epilogue. */
#include <stdint.h>

#include "core/op/op.h"
#include "test.h"

/* Builds an fp32 op and allocates and fills its buffers; 0 on success. */
static int setup(const char *name, const int64_t *shape, int n, heron__op *op,
                 void **bufs, uint64_t seed) {
  heron_error err = {0};
  if (heron__op_build(name, shape, n, HERON__FP32, op, &err) ||
      heron__op_alloc_buffers(op, bufs, &err)) {
    fprintf(stderr, "%s: %s\n", name, err.text);
    return 1;
  }
  heron__op_fill_inputs(op, bufs, seed);
  return 0;
}

/* Largest |a - b| / (|b| + 1e-6) over n floats; NaN counts as infinite. */
static double worst_rel(const float *a, const float *b, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - b[i]) / (fabs(b[i]) + 1e-6);
    if (!(d <= worst))
      worst = isnan(d) ? INFINITY : d;
  }
  return worst;
}

/* ---- T2D with stride 1 is C2D with the kernel flipped ------------------ */

/* Runs T2D at (N,H,W,CI,CO,K,K,1,pad,dil,0) and C2D on the same data with
 * weight'[co,ci,kh,kw] = weight[ci,co,K-1-kh,K-1-kw] and padding
 * dil*(K-1) - pad; returns the largest relative difference (or -1 when
 * something could not be set up). */
static double t2d_vs_flipped_c2d(int64_t N, int64_t H, int64_t W, int64_t CI,
                                 int64_t CO, int64_t K, int64_t pad,
                                 int64_t dil) {
  heron__op t, c;
  void *tb[3], *cb[3];
  if (setup("t2d", (int64_t[]){N, H, W, CI, CO, K, K, 1, pad, dil, 0}, 11, &t,
            tb, 3))
    return -1;
  int64_t cpad = dil * (K - 1) - pad;
  if (setup("c2d", (int64_t[]){N, H, W, CI, CO, K, K, 1, cpad, dil}, 10, &c, cb,
            4)) {
    heron__op_free_buffers(&t, tb);
    return -1;
  }
  memcpy(cb[0], tb[0], (size_t)heron__tensor_elems(&t.in[0]) * sizeof(float));
  const float *w = tb[1];
  float *cw = cb[1];
  for (int64_t ci = 0; ci < CI; ci++)
    for (int64_t co = 0; co < CO; co++)
      for (int64_t kh = 0; kh < K; kh++)
        for (int64_t kw = 0; kw < K; kw++)
          cw[((co * CI + ci) * K + kh) * K + kw] =
              w[((ci * CO + co) * K + (K - 1 - kh)) * K + (K - 1 - kw)];
  t.reference(&t, tb);
  c.reference(&c, cb);
  double worst = -1;
  if (heron__tensor_elems(&t.out) == heron__tensor_elems(&c.out) &&
      t.out.dims[2] == c.out.dims[2] && t.out.dims[3] == c.out.dims[3])
    worst = worst_rel(tb[2], cb[2], heron__tensor_elems(&t.out));
  heron__op_free_buffers(&t, tb);
  heron__op_free_buffers(&c, cb);
  return worst;
}

TEST(t2d_stride_1_equals_c2d_with_flipped_transposed_kernel) {
  static const int64_t cases[][8] = {
      /* N, H, W, CI, CO, K, pad, dil */
      {2, 6, 7, 3, 2, 3, 1, 1}, {1, 5, 5, 2, 3, 3, 0, 1},
      {1, 7, 4, 3, 2, 5, 2, 1}, {1, 6, 9, 2, 2, 3, 1, 2},
      {1, 5, 6, 3, 4, 2, 1, 1}, {2, 3, 3, 1, 1, 1, 0, 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const int64_t *s = cases[c];
    double worst =
        t2d_vs_flipped_c2d(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    CHECK_MSG(worst >= 0 && worst <= 1e-6, "case %zu: worst %g", c, worst);
  }
}

/* ---- SCAN is a cumulative sum ------------------------------------------ */

/* Compares the reference and the interpreted description (which multiplies
 * by the filled triangular matrix) with a running sum along each row of A
 * computed here; returns the larger of the two relative differences. */
static double scan_vs_cumsum(int64_t M, int64_t N, int64_t K) {
  heron__op op;
  void *bufs[3];
  if (setup("scan", (int64_t[]){M, N, K}, 3, &op, bufs, 9))
    return -1;
  const float *A = bufs[0];
  float *want = malloc((size_t)(M * N) * sizeof *want);
  float *ref = malloc((size_t)(M * N) * sizeof *ref);
  for (int64_t m = 0; m < M; m++) {
    double sum = 0;
    for (int64_t n = 0; n < N; n++) {
      /* Columns past K add nothing: there are only K values per row. */
      sum += n < K ? A[m * K + n] : 0.0;
      want[m * N + n] = (float)sum;
    }
  }
  op.reference(&op, bufs);
  memcpy(ref, bufs[2], (size_t)(M * N) * sizeof *ref);
  heron__op_interpret(&op, bufs);
  double a = worst_rel(ref, want, M * N), b = worst_rel(bufs[2], want, M * N);
  free(want);
  free(ref);
  heron__op_free_buffers(&op, bufs);
  return a > b ? a : b;
}

TEST(scan_equals_a_cumulative_sum_of_each_row) {
  static const int64_t cases[][3] = {
      {1, 1, 1}, {3, 8, 8}, {2, 13, 5}, {4, 5, 11}, {5, 32, 32}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double worst = scan_vs_cumsum(cases[c][0], cases[c][1], cases[c][2]);
    CHECK_MSG(worst >= 0 && worst <= 1e-6, "case %zu: worst %g", c, worst);
  }
}

TEST(fill_inputs_writes_scan_upper_triangle_and_random_data) {
  for (int dt = 0; dt < 2; dt++) {
    int dtype = dt ? HERON__FP16 : HERON__FP32;
    heron__op op;
    heron_error err = {0};
    void *bufs[3];
    /* K = 4 rows, N = 6 columns: T[k][n] = 1 exactly when k <= n. */
    CHECK_OK(heron__op_build("scan", (int64_t[]){3, 6, 4}, 3, dtype, &op, &err),
             &err);
    CHECK_OK(heron__op_alloc_buffers(&op, bufs, &err), &err);
    heron__op_fill_inputs(&op, bufs, 17);
    int bad = 0, distinct = 0;
    for (int k = 0; k < 4; k++)
      for (int n = 0; n < 6; n++)
        bad += heron__elem_get(bufs[1], dtype, k * 6 + n) != (k <= n ? 1 : 0);
    /* A is data, not a constant pattern. */
    for (int i = 1; i < 12; i++)
      distinct += heron__elem_get(bufs[0], dtype, i) !=
                  heron__elem_get(bufs[0], dtype, 0);
    heron__op_free_buffers(&op, bufs);
    CHECK_EQ(bad, 0);
    CHECK(distinct > 8);
  }
}

/* ---- Epilogues ----------------------------------------------------------- */

/* With `flags` set on the op, the interpreter's output equals the
 * reference's followed by heron__op_apply_epilogue, and with ReLU no output
 * is negative.  Returns 0 on success. */
static int epilogue_matches(const char *name, const int64_t *shape, int n,
                            int flags) {
  heron__op op;
  heron_error err = {0};
  void *bufs[HERON__MAX_TENSORS + 2];
  if (heron__op_build(name, shape, n, HERON__FP32, &op, &err) ||
      heron__op_set_epilogue(&op, flags, &err) ||
      heron__op_alloc_buffers(&op, bufs, &err)) {
    fprintf(stderr, "%s: %s\n", name, err.text);
    return 1;
  }
  heron__op_fill_inputs(&op, bufs, 23);
  int64_t nout = heron__tensor_elems(&op.out);
  float *plain = malloc((size_t)nout * sizeof *plain);
  float *want = malloc((size_t)nout * sizeof *want);
  float *out = bufs[op.ninputs];
  op.reference(&op, bufs);
  memcpy(plain, out, (size_t)nout * sizeof *plain);
  heron__op_apply_epilogue(&op, bufs);
  memcpy(want, out, (size_t)nout * sizeof *want);
  memset(out, 0, (size_t)nout * sizeof *out);
  heron__op_interpret(&op, bufs);
  double worst = worst_rel(out, want, nout);
  int negative = 0, changed = 0, clipped = 0;
  for (int64_t i = 0; i < nout; i++) {
    negative += out[i] < 0;
    changed += out[i] != plain[i];
    clipped += plain[i] < 0 && out[i] == 0;
  }
  int rc = 0;
  /* The epilogue must have done something, or the test proves nothing. */
  if (!(worst <= 1e-6) || changed == 0 ||
      ((flags & HERON__EPI_RELU) && (negative || clipped == 0))) {
    fprintf(stderr, "%s %s: worst %g, %d changed, %d negative, %d clipped\n",
            name, heron__epilogue_name(flags), worst, changed, negative,
            clipped);
    rc = 1;
  }
  free(plain);
  free(want);
  heron__op_free_buffers(&op, bufs);
  return rc;
}

TEST(interpreter_applies_bias_relu_like_reference_then_epilogue) {
  int both = HERON__EPI_BIAS | HERON__EPI_RELU;
  CHECK(epilogue_matches("gemm", (int64_t[]){7, 13, 5}, 3, both) == 0);
  CHECK(epilogue_matches("c2d", (int64_t[]){2, 7, 9, 3, 5, 3, 3, 1, 1, 1}, 10,
                         both) == 0);
  CHECK(epilogue_matches("gemm", (int64_t[]){5, 3, 9}, 3, HERON__EPI_BIAS) ==
        0);
  CHECK(epilogue_matches("c2d", (int64_t[]){1, 6, 5, 2, 3, 3, 3, 2, 1, 1}, 10,
                         HERON__EPI_RELU) == 0);
}

TEST(new_ops_apply_bias_relu_along_their_channel_axis) {
  int both = HERON__EPI_BIAS | HERON__EPI_RELU;
  CHECK(epilogue_matches("bmm", (int64_t[]){2, 3, 5, 7}, 4, both) == 0);
  CHECK(epilogue_matches("gemv", (int64_t[]){13, 7}, 2, both) == 0);
  CHECK(epilogue_matches("c1d", (int64_t[]){2, 11, 3, 4, 3, 1, 1, 1}, 8,
                         both) == 0);
  CHECK(epilogue_matches("c3d", (int64_t[]){1, 4, 5, 6, 2, 3, 3, 3, 3, 1, 1, 1},
                         12, both) == 0);
  CHECK(epilogue_matches("dil", (int64_t[]){1, 9, 9, 2, 3, 3, 3}, 7, both) ==
        0);
  CHECK(epilogue_matches("t2d", (int64_t[]){1, 5, 6, 2, 3, 3, 3, 2, 1, 1, 1},
                         11, both) == 0);
  CHECK(epilogue_matches("scan", (int64_t[]){3, 9, 7}, 3, HERON__EPI_RELU) ==
        0);
}

TEST(interpreter_keeps_a_broken_description_visible_under_relu) {
  /* ReLU maps NaN to 0; the interpreter must not let it hide the poison of
   * an index that leaves an unbounded tensor. */
  heron__op op;
  heron_error err = {0};
  void *bufs[3];
  CHECK_OK(
      heron__op_build("gemm", (int64_t[]){4, 4, 4}, 3, HERON__FP32, &op, &err),
      &err);
  CHECK_OK(heron__op_set_epilogue(&op, HERON__EPI_RELU, &err), &err);
  CHECK_OK(heron__op_alloc_buffers(&op, bufs, &err), &err);
  heron__op_fill_inputs(&op, bufs, 1);
  op.in[0].index[1].offset = 1;
  heron__op_interpret(&op, bufs);
  int nans = 0;
  for (int i = 0; i < 16; i++)
    nans += isnan(((float *)bufs[2])[i]);
  heron__op_free_buffers(&op, bufs);
  CHECK(nans > 0);
}
