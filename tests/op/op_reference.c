/* tests/op/op_reference.c - the references agree with the descriptions, the
 * output check accepts every correct summation order and rejects wrong
 * outputs, the buffer helpers do what they say, and the threaded references
 * give the same bits at every thread count. */
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "core/op/op.h"
#include "core/util/util.h"
#include "test.h"

/* Builds op at shape, fills inputs, runs the reference and the interpreter
 * and requires them to agree.  Returns 0 on success so callers can CHECK. */
static int ref_matches_interpreter(const char *name, const int64_t *shape,
                                   int n, int dtype) {
  heron__op op;
  heron_error err = {0};
  void *bufs[HERON__MAX_TENSORS + 1];
  if (heron__op_build(name, shape, n, dtype, &op, &err)) {
    fprintf(stderr, "build %s: %s\n", name, err.text);
    return 1;
  }
  if (heron__op_alloc_buffers(&op, bufs, &err)) {
    fprintf(stderr, "alloc: %s\n", err.text);
    return 1;
  }
  heron__op_fill_inputs(&op, bufs, 42);
  int64_t nout = heron__tensor_elems(&op.out);
  size_t bytes = (size_t)nout * (size_t)heron__dtype_size(op.out_dtype);
  void *ref = malloc(bytes);
  op.reference(&op, bufs);
  memcpy(ref, bufs[op.ninputs], bytes);
  memset(bufs[op.ninputs], 0, bytes);
  heron__op_interpret(&op, bufs);
  double max_err = -1;
  int64_t bad = -2;
  int ok = heron__op_check(&op, bufs[op.ninputs], ref, &max_err, &bad);
  /* Both sum in double, so they agree to the output's rounding: far tighter
   * than the check's tolerance, which would hide a small index slip. */
  int nonzero = 0;
  double worst = 0;
  for (int64_t i = 0; i < nout; i++) {
    double a = heron__elem_get(bufs[op.ninputs], op.out_dtype, i);
    double b = heron__elem_get(ref, op.out_dtype, i);
    double d = fabs(a - b) / (fabs(b) + 1e-6);
    if (!(d <= worst))
      worst = isnan(d) ? INFINITY : d;
    nonzero += b != 0;
  }
  double tight = dtype == HERON__FP16 ? 1e-3 : 1e-6;
  int rc = 0;
  if (!ok || bad != -1 || !(worst <= tight) || nonzero == 0) {
    fprintf(stderr,
            "%s %s: check=%d bad=%" PRId64 " max_err=%g worst=%g nonzero=%d\n",
            name, heron__dtype_name(dtype), ok, bad, max_err, worst, nonzero);
    rc = 1;
  }
  free(ref);
  heron__op_free_buffers(&op, bufs);
  return rc;
}

TEST(gemm_reference_matches_interpreted_description) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {17, 3, 31}};
  for (int c = 0; c < 3; c++)
    CHECK(ref_matches_interpreter("gemm", shapes[c], 3, HERON__FP32) == 0);
}

TEST(bmm_reference_matches_interpreted_description) {
  static const int64_t shapes[][4] = {
      {3, 5, 7, 11}, {1, 2, 3, 4}, {2, 1, 13, 1}};
  for (int c = 0; c < 3; c++)
    CHECK(ref_matches_interpreter("bmm", shapes[c], 4, HERON__FP32) == 0);
}

TEST(gemv_reference_matches_interpreted_description) {
  static const int64_t shapes[][2] = {{13, 29}, {1, 7}, {31, 1}};
  for (int c = 0; c < 3; c++)
    CHECK(ref_matches_interpreter("gemv", shapes[c], 2, HERON__FP32) == 0);
}

TEST(c2d_reference_matches_interpreter_with_padding_stride_dilation) {
  static const int64_t shapes[][10] = {
      {2, 7, 9, 3, 5, 3, 3, 1, 1, 1},   /* padding 1 */
      {1, 11, 13, 3, 2, 3, 5, 2, 2, 1}, /* stride 2, wide kernel */
      {2, 9, 8, 2, 3, 3, 3, 1, 2, 2},   /* dilation 2 */
      {1, 13, 11, 3, 2, 3, 2, 2, 3, 2}, /* stride 2, dilation 2, pad 3 */
      {1, 5, 5, 2, 2, 5, 1, 1, 0, 1},   /* no padding, kernel = input height */
      {1, 10, 10, 2, 3, 1, 1, 3, 0, 1}, /* 1x1, stride 3 */
      {1, 3, 3, 1, 1, 1, 1, 1, 2, 1},   /* padding wider than the kernel */
      {1, 7, 7, 2, 2, 3, 3, 3, 1, 3},   /* stride 3, dilation 3 */
  };
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
    CHECK_MSG(ref_matches_interpreter("c2d", shapes[c], 10, HERON__FP32) == 0,
              "case %zu", c);
}

/* The blocked forms' references (the plain op at padded channel counts on
 * unblocked copies) agree with their descriptions: channel counts below,
 * at and past a block, prime extents, padding, strides and dilations. */
TEST(blocked_references_match_interpreter_with_padded_channels) {
  static const struct {
    const char *name;
    int n;
    int64_t shape[10];
  } cases[] = {
      {"c2d_nchw16c", 10, {2, 7, 9, 3, 5, 3, 3, 1, 1, 1}},
      {"c2d_nchw16c", 10, {1, 11, 13, 17, 19, 3, 5, 2, 2, 1}},
      {"c2d_nchw16c", 10, {1, 7, 7, 16, 32, 3, 3, 3, 1, 3}},
      {"c2d_nchw8c", 10, {2, 9, 8, 13, 7, 3, 3, 1, 2, 2}},
      {"c2d_nchw8c", 10, {1, 10, 10, 8, 24, 1, 1, 3, 0, 1}},
      {"c1d_ncw16c", 8, {2, 31, 7, 21, 3, 2, 1, 1}},
      {"c1d_ncw8c", 8, {1, 29, 9, 5, 5, 1, 2, 2}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    CHECK_MSG(ref_matches_interpreter(cases[c].name, cases[c].shape, cases[c].n,
                                      HERON__FP32) == 0,
              "case %zu (%s)", c, cases[c].name);
}

TEST(fp16_references_match_interpreted_descriptions) {
  CHECK(ref_matches_interpreter("gemm", (int64_t[]){7, 13, 5}, 3,
                                HERON__FP16) == 0);
  CHECK(ref_matches_interpreter("bmm", (int64_t[]){3, 5, 7, 11}, 4,
                                HERON__FP16) == 0);
  CHECK(ref_matches_interpreter("gemv", (int64_t[]){13, 29}, 2, HERON__FP16) ==
        0);
  CHECK(ref_matches_interpreter("c2d",
                                (int64_t[]){1, 11, 13, 3, 2, 3, 5, 2, 2, 2}, 10,
                                HERON__FP16) == 0);
}

TEST(c1d_reference_matches_interpreter_with_padding_stride_dilation) {
  static const int64_t shapes[][8] = {
      {2, 13, 3, 5, 3, 1, 1, 1}, /* padding 1 */
      {1, 17, 2, 3, 5, 2, 2, 1}, /* stride 2 */
      {2, 11, 3, 2, 3, 3, 0, 1}, /* stride 3 with a tail of input */
      {1, 19, 2, 3, 3, 1, 4, 2}, /* dilation 2, padding 4 */
      {1, 7, 3, 2, 7, 1, 0, 1},  /* kernel = input */
      {1, 5, 1, 1, 1, 1, 3, 1},  /* padding wider than the kernel */
      {1, 23, 2, 3, 3, 3, 2, 3}, /* stride 3, dilation 3 */
      {3, 31, 5, 7, 2, 2, 1, 1}, /* primes, stride 2 */
  };
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
    CHECK_MSG(ref_matches_interpreter("c1d", shapes[c], 8, HERON__FP32) == 0,
              "case %zu", c);
}

TEST(c3d_reference_matches_interpreter_with_padding_stride_dilation) {
  static const int64_t shapes[][12] = {
      {1, 5, 6, 7, 2, 3, 3, 3, 3, 1, 1, 1},   /* padding 1 */
      {2, 7, 5, 9, 2, 2, 3, 1, 3, 2, 1, 1},   /* stride 2, flat kernel */
      {1, 9, 7, 7, 1, 2, 3, 3, 2, 1, 2, 2},   /* dilation 2, padding 2 */
      {1, 11, 7, 10, 2, 1, 1, 3, 2, 3, 0, 1}, /* stride 3, tails */
      {1, 3, 3, 3, 1, 1, 3, 3, 3, 1, 0, 1},   /* kernel = input */
      {1, 5, 7, 5, 2, 3, 3, 3, 3, 3, 1, 2},   /* stride 3, dilation 2 */
  };
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
    CHECK_MSG(ref_matches_interpreter("c3d", shapes[c], 12, HERON__FP32) == 0,
              "case %zu", c);
}

TEST(dil_reference_matches_interpreter_at_default_and_given_dilation) {
  CHECK(ref_matches_interpreter("dil", (int64_t[]){2, 9, 11, 3, 4, 3, 3}, 7,
                                HERON__FP32) == 0);
  CHECK(ref_matches_interpreter("dil", (int64_t[]){1, 13, 11, 2, 3, 3, 3, 2, 2},
                                9, HERON__FP32) == 0);
  CHECK(ref_matches_interpreter("dil",
                                (int64_t[]){1, 13, 13, 2, 2, 3, 3, 1, 1, 3}, 10,
                                HERON__FP32) == 0);
}

TEST(t2d_reference_matches_interpreter_with_stride_padding_output_padding) {
  static const int64_t shapes[][11] = {
      {2, 5, 7, 3, 4, 3, 3, 1, 1, 1, 0}, /* stride 1, padding 1 */
      {1, 5, 6, 2, 3, 3, 3, 2, 1, 1, 1}, /* stride 2, output_padding 1 */
      {1, 4, 5, 3, 2, 3, 2, 3, 0, 1, 2}, /* stride 3, output_padding 2 */
      {1, 7, 5, 2, 2, 3, 3, 1, 2, 2, 1}, /* dilation 2, output_padding 1 */
      {2, 3, 4, 2, 3, 1, 1, 2, 0, 1, 1}, /* 1x1, stride 2: gaps of zeros */
      {1, 6, 5, 3, 2, 5, 4, 2, 3, 2, 0}, /* stride 2, dilation 2, pad 3 */
      {1, 7, 7, 2, 2, 3, 3, 1, 0, 1, 0}, /* no padding: output grows */
      {1, 5, 5, 2, 3, 1, 1, 1, 0, 1, 0}, /* 1x1 stride 1: unbounded */
      {1, 9, 8, 2, 2, 3, 3, 1, 3, 1, 0}, /* padding beyond the kernel crops */
      {1, 5, 7, 3, 5, 2, 3, 3, 2, 1, 1}, /* primes, even kernel, stride 3 */
  };
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
    CHECK_MSG(ref_matches_interpreter("t2d", shapes[c], 11, HERON__FP32) == 0,
              "case %zu", c);
}

TEST(scan_reference_matches_interpreted_triangular_product) {
  static const int64_t shapes[][3] = {
      {1, 1, 1},
      {5, 7, 7},
      {3, 13, 5}, /* N > K: the row sum repeats */
      {4, 5, 11}, /* N < K: only the first sums */
      {7, 17, 31}};
  for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
    CHECK_MSG(ref_matches_interpreter("scan", shapes[c], 3, HERON__FP32) == 0,
              "case %zu", c);
}

TEST(fp16_references_of_new_ops_match_interpreted_descriptions) {
  CHECK(ref_matches_interpreter("c1d", (int64_t[]){1, 17, 2, 3, 5, 2, 2, 1}, 8,
                                HERON__FP16) == 0);
  CHECK(ref_matches_interpreter("c3d",
                                (int64_t[]){1, 5, 6, 7, 2, 3, 3, 3, 3, 1, 1, 1},
                                12, HERON__FP16) == 0);
  CHECK(ref_matches_interpreter("dil", (int64_t[]){2, 9, 11, 3, 4, 3, 3}, 7,
                                HERON__FP16) == 0);
  CHECK(ref_matches_interpreter("t2d",
                                (int64_t[]){1, 5, 6, 2, 3, 3, 3, 2, 1, 1, 1},
                                11, HERON__FP16) == 0);
  CHECK(ref_matches_interpreter("scan", (int64_t[]){3, 13, 5}, 3,
                                HERON__FP16) == 0);
}

TEST(interpreter_reads_divided_index_only_at_exact_multiples) {
  /* A hand-made 1-D op: out[o] = sum over k of x[(o - k) / 2] * w[k], with
   * o - k negative for some points.  Only even o - k in [0, 6) name an
   * element; without the exact-multiple test, C's truncating division
   * would take o - k = -1 as element 0 (-1 / 2 == 0) and change out[0],
   * and o - k = 1 as element 0 too. */
  heron__op op;
  heron_error err = {0};
  CHECK_OK(
      heron__op_build("gemv", (int64_t[]){7, 3}, 2, HERON__FP32, &op, &err),
      &err);
  /* Reuse GEMV's shell with new tensors: axes i (o, 7) and k (3). */
  heron__tensor_init(&op.in[0], "x", 1, (int64_t[]){3});
  op.in[0].index[0].coef[0] = 1;
  op.in[0].index[0].coef[1] = -1;
  op.in[0].index[0].div = 2;
  op.in[0].bounded = 1;
  heron__tensor_init(&op.in[1], "w", 1, (int64_t[]){3});
  op.in[1].index[0].coef[1] = 1;
  float x[3] = {1, 10, 100}, w[3] = {1, 2, 4}, out[7];
  void *bufs[3] = {x, w, out};
  heron__op_interpret(&op, bufs);
  /* By hand: out[o] = sum over k, (o-k) even, 0 <= (o-k)/2 < 3. */
  for (int o = 0; o < 7; o++) {
    double want = 0;
    for (int k = 0; k < 3; k++) {
      int e = o - k;
      if (e >= 0 && e % 2 == 0 && e / 2 < 3)
        want += x[e / 2] * w[k];
    }
    CHECK_MSG(out[o] == (float)want, "out[%d] = %g, want %g", o, out[o], want);
  }
  CHECK(out[0] == 1.0f);
}

TEST(interpreter_exposes_a_wrong_description) {
  /* Shift A's column index by one: unbounded, the interpreter poisons the
   * output; marked bounded, it computes something the reference rejects.
   * Either way the cross-check fails, which is what it is for. */
  heron__op op;
  heron_error err = {0};
  void *bufs[3];
  CHECK_OK(
      heron__op_build("gemm", (int64_t[]){5, 6, 7}, 3, HERON__FP32, &op, &err),
      &err);
  CHECK_OK(heron__op_alloc_buffers(&op, bufs, &err), &err);
  heron__op_fill_inputs(&op, bufs, 3);
  float ref[30];
  op.reference(&op, bufs);
  memcpy(ref, bufs[2], sizeof ref);
  op.in[0].index[1].offset = 1;
  heron__op_interpret(&op, bufs);
  double max_err;
  int64_t bad;
  CHECK(heron__op_check(&op, bufs[2], ref, &max_err, &bad) == 0);
  CHECK(isnan(((float *)bufs[2])[0]));
  op.in[0].bounded = 1;
  heron__op_interpret(&op, bufs);
  CHECK(heron__op_check(&op, bufs[2], ref, &max_err, &bad) == 0);
  CHECK_EQ(bad, 0);
  heron__op_free_buffers(&op, bufs);
}

/* ---- The output check -----------------------------------------------------
 */

/* A GEMM of 8x8 outputs over a long reduction, as a kernel would compute it
 * in fp32 with the given summation order. */
enum { CM = 8, CN = 8, CK = 4096 };
enum { FORWARD, REVERSE, PAIRWISE, BLOCKED, MISSING_TAIL, OFF_BY_ONE };

static float pairwise(const float *v, int n) {
  if (n == 1)
    return v[0];
  return pairwise(v, n / 2) + pairwise(v + n / 2, n - n / 2);
}

static void fp32_gemm(const float *A, const float *B, float *C, int order) {
  static float terms[CK];
  for (int i = 0; i < CM; i++)
    for (int j = 0; j < CN; j++) {
      for (int k = 0; k < CK; k++) {
        int kk = order == OFF_BY_ONE ? (k + 1) % CK : k;
        terms[k] = A[i * CK + kk] * B[k * CN + j];
      }
      float s = 0;
      if (order == FORWARD || order == OFF_BY_ONE)
        for (int k = 0; k < CK; k++)
          s += terms[k];
      else if (order == MISSING_TAIL)
        for (int k = 0; k < CK - 1; k++)
          s += terms[k];
      else if (order == REVERSE)
        for (int k = CK - 1; k >= 0; k--)
          s += terms[k];
      else if (order == PAIRWISE)
        s = pairwise(terms, CK);
      else
        for (int k0 = 0; k0 < CK; k0 += 64) {
          float part = 0;
          for (int k = k0; k < k0 + 64; k++)
            part += terms[k];
          s += part;
        }
      C[i * CN + j] = s;
    }
}

/* Runs the check of `order` against the reference; returns its verdict. */
static int check_order(int order, int64_t *bad) {
  heron__op op;
  heron_error err = {0};
  void *bufs[3];
  if (heron__op_build("gemm", (int64_t[]){CM, CN, CK}, 3, HERON__FP32, &op,
                      &err) ||
      heron__op_alloc_buffers(&op, bufs, &err))
    return -1;
  heron__op_fill_inputs(&op, bufs, 7);
  op.reference(&op, bufs);
  float out[CM * CN];
  fp32_gemm(bufs[0], bufs[1], out, order);
  double max_err;
  int ok = heron__op_check(&op, out, bufs[2], &max_err, bad);
  heron__op_free_buffers(&op, bufs);
  return ok;
}

TEST(check_accepts_any_fp32_summation_order) {
  int64_t bad;
  CHECK_EQ(check_order(FORWARD, &bad), 1);
  CHECK_EQ(bad, -1);
  CHECK_EQ(check_order(REVERSE, &bad), 1);
  CHECK_EQ(check_order(PAIRWISE, &bad), 1);
  CHECK_EQ(check_order(BLOCKED, &bad), 1);
}

TEST(check_rejects_missing_tail_and_off_by_one_index) {
  int64_t bad;
  CHECK_EQ(check_order(MISSING_TAIL, &bad), 0);
  CHECK(bad >= 0);
  CHECK_EQ(check_order(OFF_BY_ONE, &bad), 0);
  CHECK_EQ(bad, 0);
}

TEST(check_tolerance_scales_with_long_reduction_yet_catches_one_term) {
  /* GEMV with K = 2^18: the tolerance grows with K, yet dropping a single
   * term still shows on some of the 16 outputs. */
  enum { M = 16, K = 1 << 18 };
  heron__op op;
  heron_error err = {0};
  void *bufs[3];
  CHECK_OK(
      heron__op_build("gemv", (int64_t[]){M, K}, 2, HERON__FP32, &op, &err),
      &err);
  CHECK_OK(heron__op_alloc_buffers(&op, bufs, &err), &err);
  heron__op_fill_inputs(&op, bufs, 11);
  op.reference(&op, bufs);
  const float *A = bufs[0], *x = bufs[1];
  float full[M], less[M];
  for (int i = 0; i < M; i++) {
    float s = 0;
    for (int k = 0; k < K; k++)
      s += A[(int64_t)i * K + k] * x[k];
    full[i] = s;
    less[i] = s - A[(int64_t)i * K + K - 1] * x[K - 1];
  }
  double max_err;
  int64_t bad;
  int ok_full = heron__op_check(&op, full, bufs[2], &max_err, &bad);
  int ok_less = heron__op_check(&op, less, bufs[2], &max_err, &bad);
  heron__op_free_buffers(&op, bufs);
  CHECK_EQ(ok_full, 1);
  CHECK_EQ(ok_less, 0);
}

TEST(check_rejects_one_perturbed_element_and_names_it) {
  heron__op op;
  heron_error err = {0};
  void *bufs[3];
  CHECK_OK(heron__op_build("c2d", (int64_t[]){1, 8, 8, 16, 4, 3, 3, 1, 1, 1},
                           10, HERON__FP32, &op, &err),
           &err);
  CHECK_OK(heron__op_alloc_buffers(&op, bufs, &err), &err);
  heron__op_fill_inputs(&op, bufs, 5);
  op.reference(&op, bufs);
  int64_t n = heron__tensor_elems(&op.out);
  float *out = malloc((size_t)n * sizeof *out);
  memcpy(out, bufs[2], (size_t)n * sizeof *out);
  double max_err;
  int64_t bad;
  CHECK_EQ(heron__op_check(&op, out, bufs[2], &max_err, &bad), 1);
  CHECK(max_err == 0);
  out[37] += 0.01f;
  int ok = heron__op_check(&op, out, bufs[2], &max_err, &bad);
  free(out);
  heron__op_free_buffers(&op, bufs);
  CHECK_EQ(ok, 0);
  CHECK_EQ(bad, 37);
  CHECK(max_err > 1e-4);
}

TEST(check_rejects_nan_in_output) {
  heron__op op;
  heron_error err = {0};
  void *bufs[3];
  CHECK_OK(
      heron__op_build("gemm", (int64_t[]){4, 4, 4}, 3, HERON__FP32, &op, &err),
      &err);
  CHECK_OK(heron__op_alloc_buffers(&op, bufs, &err), &err);
  heron__op_fill_inputs(&op, bufs, 5);
  op.reference(&op, bufs);
  float out[16];
  memcpy(out, bufs[2], sizeof out);
  out[5] = NAN;
  double max_err;
  int64_t bad;
  int ok = heron__op_check(&op, out, bufs[2], &max_err, &bad);
  heron__op_free_buffers(&op, bufs);
  CHECK_EQ(ok, 0);
  CHECK_EQ(bad, 5);
  CHECK(isinf(max_err));
}

/* ---- Buffers, inputs and half precision ---------------------------------- */

TEST(fill_inputs_is_deterministic_in_range_and_seed_dependent) {
  heron__op op;
  heron_error err = {0};
  void *a[3], *b[3];
  CHECK_OK(heron__op_build("gemm", (int64_t[]){9, 10, 11}, 3, HERON__FP32, &op,
                           &err),
           &err);
  CHECK_OK(heron__op_alloc_buffers(&op, a, &err), &err);
  CHECK_OK(heron__op_alloc_buffers(&op, b, &err), &err);
  heron__op_fill_inputs(&op, a, 99);
  heron__op_fill_inputs(&op, b, 99);
  int same = !memcmp(a[0], b[0], 99 * 4) && !memcmp(a[1], b[1], 110 * 4);
  heron__op_fill_inputs(&op, b, 100);
  int differs = memcmp(a[0], b[0], 99 * 4) != 0;
  int in_range = 1, distinct = memcmp(a[0], a[1], 99 * 4) != 0;
  for (int i = 0; i < 99; i++)
    in_range &= fabsf(((float *)a[0])[i]) <= 1.0f;
  heron__op_free_buffers(&op, a);
  heron__op_free_buffers(&op, b);
  CHECK(same);
  CHECK(differs);
  CHECK(in_range);
  CHECK(distinct);
}

TEST(alloc_buffers_are_aligned_zeroed_and_sized) {
  heron__op op;
  heron_error err = {0};
  void *bufs[3];
  CHECK_OK(
      heron__op_build("gemv", (int64_t[]){3, 5}, 2, HERON__FP32, &op, &err),
      &err);
  CHECK_EQ(heron__op_bytes(&op), (15 + 5 + 3) * 4);
  CHECK_OK(heron__op_alloc_buffers(&op, bufs, &err), &err);
  for (int t = 0; t < 3; t++) {
    CHECK_EQ((uintptr_t)bufs[t] % 64, 0);
    for (int i = 0; i < 3; i++)
      CHECK(((float *)bufs[t])[i] == 0.0f);
  }
  heron__op_free_buffers(&op, bufs);
  CHECK(bufs[0] == NULL && bufs[2] == NULL);
}

TEST(build_rejects_tensors_too_large_to_index) {
  heron__op op;
  heron_error err = {0};
  int rc =
      heron__op_build("gemm", (int64_t[]){2147483647, 2147483647, 2147483647},
                      3, HERON__FP32, &op, &err);
  CHECK_EQ(rc, HERON_ERANGE);
  CHECK_STR_CONTAINS(err.text, "tensor A");
}

TEST(alloc_buffers_reports_enomem_with_sizes) {
  /* 2^20 x 2^20 floats is 4 TiB: no machine running the tests has that.
   * AddressSanitizer aborts on such requests instead of returning NULL, so
   * there the test has nothing to check. */
#if !defined(__SANITIZE_ADDRESS__)
  heron__op op;
  heron_error err = {0};
  void *bufs[3];
  CHECK_OK(heron__op_build("gemm", (int64_t[]){1 << 20, 1 << 20, 1}, 3,
                           HERON__FP32, &op, &err),
           &err);
  heron_error e2 = {0};
  CHECK_EQ(heron__op_alloc_buffers(&op, bufs, &e2), HERON_ENOMEM);
  CHECK_STR_CONTAINS(e2.text, "4398046511104 bytes for tensor C");
  CHECK(bufs[0] == NULL && bufs[2] == NULL);
#endif
}

TEST(half_conversion_rounds_to_nearest_even) {
  CHECK_EQ(heron__half_from_float(1.0f), 0x3c00);
  CHECK_EQ(heron__half_from_float(-2.0f), 0xc000);
  CHECK_EQ(heron__half_from_float(0.0f), 0x0000);
  CHECK_EQ(heron__half_from_float(65504.0f), 0x7bff);
  CHECK_EQ(heron__half_from_float(65520.0f), 0x7c00);   /* rounds to Inf */
  CHECK_EQ(heron__half_from_float(0x1p-24f), 0x0001);   /* least subnormal */
  CHECK_EQ(heron__half_from_float(0x1p-25f), 0x0000);   /* tie to even: 0 */
  CHECK_EQ(heron__half_from_float(0x1.8p-24f), 0x0002); /* tie to even: 2 */
  CHECK_EQ(heron__half_from_float(1.0f + 0x1p-11f), 0x3c00); /* tie, even */
  CHECK_EQ(heron__half_from_float(1.0f + 0x1.8p-10f), 0x3c02);
  CHECK_EQ(heron__half_from_float(0x1p-14f), 0x0400); /* least normal */
  CHECK(heron__half_to_float(0x3555) == 0x1.554p-2f);
  CHECK(heron__half_to_float(0x0001) == 0x1p-24f);
  CHECK(isinf(heron__half_to_float(0xfc00)) &&
        heron__half_to_float(0xfc00) < 0);
  CHECK(isnan(heron__half_to_float(heron__half_from_float(NAN))));
  /* Every finite half survives a round trip through float. */
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00)
      continue;
    CHECK_EQ(heron__half_from_float(heron__half_to_float((uint16_t)h)), h);
  }
}

/* ---- Threaded references -----------------------------------------------
 * Every reference splits its outer rows among threads (heron__par_for);
 * the output must not depend on how many. */

/* Runs op's reference with HERON_REF_THREADS set to `threads` (NULL: unset)
 * into out (the output's bytes). */
static void run_ref_with_threads(heron__op *op, void **bufs,
                                 const char *threads, void *out, size_t bytes) {
  if (threads)
    setenv("HERON_REF_THREADS", threads, 1);
  else
    unsetenv("HERON_REF_THREADS");
  memset(bufs[op->ninputs], 0xa5, bytes);
  op->reference(op, bufs);
  memcpy(out, bufs[op->ninputs], bytes);
  unsetenv("HERON_REF_THREADS");
}

/* Builds name at shape, runs its reference on 1 thread and on several
 * (counts that do not divide its rows), and requires the same bytes.
 * Returns 0 when they all agree. */
static int ref_threads_agree(const char *name, const int64_t *shape, int n,
                             int dtype) {
  heron__op op;
  heron_error err = {0};
  void *bufs[HERON__MAX_TENSORS + 1];
  if (heron__op_build(name, shape, n, dtype, &op, &err) ||
      heron__op_alloc_buffers(&op, bufs, &err)) {
    fprintf(stderr, "%s: %s\n", name, err.text);
    return 1;
  }
  heron__op_fill_inputs(&op, bufs, 7);
  int64_t nout = heron__tensor_elems(&op.out);
  size_t bytes = (size_t)nout * (size_t)heron__dtype_size(op.out_dtype);
  unsigned char *one = malloc(bytes), *many = malloc(bytes);
  run_ref_with_threads(&op, bufs, "1", one, bytes);
  int rc = 0, nonzero = 0;
  for (int64_t i = 0; i < nout; i++)
    nonzero += heron__elem_get(one, op.out_dtype, i) != 0;
  if (nonzero < nout / 2) {
    fprintf(stderr, "%s: only %d of %" PRId64 " outputs nonzero\n", name,
            nonzero, nout);
    rc = 1;
  }
  static const char *const counts[] = {"2", "3", "4", "7", "64"};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    /* A run on other inputs first, so a row the threaded run skips shows
     * those (in a reused heap block) or garbage, never the right values. */
    heron__op_fill_inputs(&op, bufs, 8 + (uint64_t)c);
    run_ref_with_threads(&op, bufs, "1", many, bytes);
    heron__op_fill_inputs(&op, bufs, 7);
    run_ref_with_threads(&op, bufs, counts[c], many, bytes);
    if (memcmp(one, many, bytes) != 0) {
      size_t at = 0;
      while (at < bytes && one[at] == many[at])
        at++;
      fprintf(stderr, "%s %s: %s threads differ from 1 at byte %zu of %zu\n",
              name, heron__dtype_name(dtype), counts[c], at, bytes);
      rc = 1;
    }
  }
  free(one);
  free(many);
  heron__op_free_buffers(&op, bufs);
  return rc;
}

/* One shape per op of the catalogue, each with more outer rows than the
 * largest thread count but not a multiple of it, with padding, strides and
 * dilations where the op has them. */
static const struct {
  const char *name;
  int n;
  int64_t shape[12];
} thread_cases[] = {
    {"gemm", 3, {37, 19, 23}},
    {"bmm", 4, {3, 11, 9, 7}},
    {"gemv", 2, {41, 17}},
    {"c1d", 8, {3, 30, 3, 5, 3, 2, 1, 1}},
    {"c2d", 10, {2, 9, 8, 3, 5, 3, 3, 1, 1, 1}},
    {"c3d", 12, {2, 5, 6, 7, 2, 3, 3, 3, 3, 1, 1, 1}},
    {"dil", 7, {1, 11, 10, 2, 4, 3, 3}},
    {"t2d", 11, {3, 5, 6, 3, 5, 3, 3, 2, 1, 1, 1}},
    {"scan", 3, {29, 13, 11}},
    {"c1d_nwc", 8, {3, 30, 3, 5, 3, 2, 1, 1}},
    {"c2d_nhwc", 10, {2, 9, 8, 3, 5, 3, 3, 1, 1, 1}},
    {"c3d_ndhwc", 12, {2, 5, 6, 7, 2, 3, 3, 3, 3, 1, 1, 1}},
    {"c1d_ncw16c", 8, {3, 30, 3, 17, 3, 2, 1, 1}},
    {"c2d_nchw16c", 10, {2, 9, 8, 3, 5, 3, 3, 1, 1, 1}},
    {"c1d_ncw8c", 8, {3, 30, 3, 5, 3, 2, 1, 1}},
    {"c2d_nchw8c", 10, {2, 9, 8, 11, 5, 3, 3, 1, 1, 1}},
};

/* The blocked ops are fp32 only (core/op/blocked.c). */
static int fp32_only(const char *name) {
  return strstr(name, "16c") || strstr(name, "8c");
}

TEST(every_reference_is_bit_identical_at_any_thread_count) {
  size_t ncases = sizeof thread_cases / sizeof thread_cases[0];
  /* Every op of the catalogue has a case. */
  for (int k = 0; k < heron__op_kind_count(); k++) {
    const char *kind = heron__op_kind_at(k)->name;
    int found = 0;
    for (size_t c = 0; c < ncases; c++)
      found |= !strcmp(thread_cases[c].name, kind);
    CHECK_MSG(found, "no threaded-reference case for %s", kind);
  }
  static const int dtypes[] = {HERON__FP32, HERON__FP16, HERON__INT8};
  int failed = 0;
  for (size_t c = 0; c < ncases; c++)
    for (int d = 0; d < (fp32_only(thread_cases[c].name) ? 1 : 3); d++)
      failed += ref_threads_agree(thread_cases[c].name, thread_cases[c].shape,
                                  thread_cases[c].n, dtypes[d]);
  CHECK_MSG(failed == 0, "%d of %zu op and dtype cases differ", failed,
            3 * ncases);
}

/* Records which chunk of heron__par_for handled each index. */
typedef struct par_probe {
  int hits[1000];
  int64_t lo[HERON__PAR_MAX_THREADS];
  int64_t hi[HERON__PAR_MAX_THREADS];
  int calls;
  pthread_mutex_t mu;
} par_probe;

static void par_probe_fn(void *ctx, int64_t lo, int64_t hi) {
  par_probe *p = ctx;
  for (int64_t i = lo; i < hi; i++)
    p->hits[i]++; /* indices are disjoint across chunks */
  pthread_mutex_lock(&p->mu);
  if (p->calls < HERON__PAR_MAX_THREADS) {
    p->lo[p->calls] = lo;
    p->hi[p->calls] = hi;
  }
  p->calls++;
  pthread_mutex_unlock(&p->mu);
}

/* Runs heron__par_for over n indices with `work` and HERON_REF_THREADS =
 * threads (NULL: unset); requires every index once, in `want` contiguous
 * chunks of sizes differing by at most one. */
static int par_for_covers(int64_t n, double work, const char *threads,
                          int want) {
  static par_probe p;
  memset(&p, 0, sizeof p);
  pthread_mutex_init(&p.mu, NULL);
  if (threads)
    setenv("HERON_REF_THREADS", threads, 1);
  else
    unsetenv("HERON_REF_THREADS");
  int t = heron__par_threads(n, work);
  heron__par_for(n, work, par_probe_fn, &p);
  unsetenv("HERON_REF_THREADS");
  pthread_mutex_destroy(&p.mu);
  int rc = 0;
  for (int64_t i = 0; i < n; i++)
    if (p.hits[i] != 1) {
      fprintf(stderr, "n=%" PRId64 " T=%s: index %" PRId64 " run %d times\n", n,
              threads ? threads : "-", i, p.hits[i]);
      rc = 1;
      break;
    }
  if (t != want || p.calls != (n > 0 ? want : 0)) {
    fprintf(stderr, "n=%" PRId64 " T=%s: %d threads, %d chunks, want %d\n", n,
            threads ? threads : "-", t, p.calls, want);
    return 1;
  }
  int64_t smallest = n, largest = 0;
  for (int c = 0; c < p.calls; c++) {
    int64_t len = p.hi[c] - p.lo[c];
    smallest = len < smallest ? len : smallest;
    largest = len > largest ? len : largest;
  }
  if (n > 0 && largest - smallest > 1) {
    fprintf(stderr,
            "n=%" PRId64 " T=%s: chunks of %" PRId64 " to %" PRId64
            " indices\n",
            n, threads ? threads : "-", smallest, largest);
    rc = 1;
  }
  return rc;
}

TEST(par_for_runs_every_index_once_in_even_chunks) {
  int cores = heron__ncores();
  int capped = cores < HERON__PAR_MAX_THREADS ? cores : HERON__PAR_MAX_THREADS;
  /* HERON_REF_THREADS fixes the count whatever the work, capped by n. */
  CHECK(par_for_covers(1000, 0, "1", 1) == 0);
  CHECK(par_for_covers(1000, 0, "3", 3) == 0);
  CHECK(par_for_covers(1000, 0, "7", 7) == 0);
  CHECK(par_for_covers(10, 0, "16", 10) == 0);
  CHECK(par_for_covers(999, 0, "1000", HERON__PAR_MAX_THREADS) == 0);
  CHECK(par_for_covers(1, 0, "4", 1) == 0);
  CHECK(par_for_covers(0, 0, "4", 1) == 0); /* and fn is never called */
  /* Unset (or not a positive number): small work runs inline, large work
   * on every core. */
  CHECK(par_for_covers(1000, HERON__PAR_MIN_WORK / 2, NULL, 1) == 0);
  CHECK(par_for_covers(1000, HERON__PAR_MIN_WORK, NULL, capped) == 0);
  CHECK(par_for_covers(1000, HERON__PAR_MIN_WORK, "zero", capped) == 0);
  CHECK(par_for_covers(1000, HERON__PAR_MIN_WORK, "0", capped) == 0);
}

TEST(large_reference_uses_the_cores_and_matches_one_thread) {
  /* 512 x 256 x 513 multiply-adds pass the threshold with no setting, so
   * this runs on every core (2 here) as a measurement would. */
  static const int64_t shape[] = {512, 256, 513};
  heron__op op;
  heron_error err = {0};
  void *bufs[HERON__MAX_TENSORS + 1];
  CHECK_OK(heron__op_build("gemm", shape, 3, HERON__FP16, &op, &err), &err);
  CHECK(op.flops / 2 >= HERON__PAR_MIN_WORK);
  unsetenv("HERON_REF_THREADS");
  int cores = heron__ncores();
  CHECK(heron__par_threads(512, op.flops / 2) ==
        (cores < HERON__PAR_MAX_THREADS ? cores : HERON__PAR_MAX_THREADS));
  CHECK_OK(heron__op_alloc_buffers(&op, bufs, &err), &err);
  heron__op_fill_inputs(&op, bufs, 3);
  size_t bytes = (size_t)heron__tensor_elems(&op.out) *
                 (size_t)heron__dtype_size(op.out_dtype);
  void *one = malloc(bytes), *all = malloc(bytes);
  run_ref_with_threads(&op, bufs, "1", one, bytes);
  /* Other inputs in between, as in ref_threads_agree. */
  heron__op_fill_inputs(&op, bufs, 4);
  run_ref_with_threads(&op, bufs, "1", all, bytes);
  heron__op_fill_inputs(&op, bufs, 3);
  run_ref_with_threads(&op, bufs, NULL, all, bytes);
  CHECK(memcmp(one, all, bytes) == 0);
  free(one);
  free(all);
  heron__op_free_buffers(&op, bufs);
}

static void *idle_thread(void *arg) { return arg; }

/* The child half of the next test, in a freshly executed process: glibc
 * keeps the stacks of joined threads for reuse, and a thread on a cached
 * stack needs no new memory, so the limit only bites where no thread has
 * run yet.  Exits 0 when every index ran once, 3 when a thread could start
 * anyway, 77 when the limit cannot be set. */
static void par_for_under_limit_child(void) {
  long pages = 0, size = sysconf(_SC_PAGESIZE);
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f || fscanf(f, "%ld", &pages) != 1)
    _exit(77);
  fclose(f);
  rlim_t cap = (rlim_t)(pages * size) + (4 << 20);
  struct rlimit lim = {cap, cap};
  if (setrlimit(RLIMIT_AS, &lim) != 0)
    _exit(77);
  /* The limit bites: a thread cannot start. */
  pthread_t t;
  if (pthread_create(&t, NULL, idle_thread, NULL) == 0) {
    pthread_join(t, NULL);
    _exit(3);
  }
  _exit(par_for_covers(1000, 0, "4", 4) == 0 ? 0 : 1);
}

TEST(par_for_runs_chunks_inline_when_threads_cannot_start) {
  /* An address-space limit just above what the process maps leaves no room
   * for a new thread's stack, so pthread_create fails; par_for must still
   * run every index once.  In a child that runs this test alone. */
  if (getenv("HERON_TEST_PAR_LIMIT_CHILD"))
    par_for_under_limit_child();
  if (HERON_TEST_SANITIZED)
    SKIP("a sanitizer's shadow memory does not run under an address-space "
         "limit; the release build runs this");
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    setenv("HERON_TEST_PAR_LIMIT_CHILD", "1", 1);
    execl("/proc/self/exe", "test_op_reference",
          "par_for_runs_chunks_inline_when_threads_cannot_start", (char *)NULL);
    _exit(77);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK_MSG(WIFEXITED(status), "child ended by signal %d",
            WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  if (WEXITSTATUS(status) == 77)
    SKIP("cannot run this test alone in a child or set RLIMIT_AS there");
  CHECK_MSG(WEXITSTATUS(status) != 3,
            "a thread started under the limit: the test proves nothing");
  CHECK_MSG(WEXITSTATUS(status) == 0, "child exited %d", WEXITSTATUS(status));
}
