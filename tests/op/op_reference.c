/* tests/op/op_reference.c - the references agree with the descriptions, the
 * output check accepts every correct summation order and rejects wrong
 * outputs, and the buffer helpers do what they say. */
#include <stdint.h>

#include "core/op/op.h"
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
