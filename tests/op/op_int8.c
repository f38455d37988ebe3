/* tests/op/op_int8.c - the int8 (u8 x s8 -> s32) and bf16 (-> fp32) op
 * layer: which input is unsigned, the exact integer references against the
 * interpreted descriptions for every op, the saturation corners of VNNI's
 * operands, the exact check, the fills and the bfloat16 rounding. */
#include <stdint.h>

#include "core/op/op.h"
#include "test.h"

/* Builds op `name` at shape in dtype, fills its inputs, and requires the
 * reference and the interpreter to agree exactly (int8) or to the last
 * bits of fp32 (bf16), with some output nonzero. */
static int ref_matches_interpreter(const char *name, const int64_t *shape,
                                   int n, int dtype) {
  heron__op op;
  heron_error err = {0};
  void *bufs[HERON__MAX_TENSORS + 2];
  if (heron__op_build(name, shape, n, dtype, &op, &err) ||
      heron__op_alloc_buffers(&op, bufs, &err)) {
    fprintf(stderr, "%s: %s\n", name, err.text);
    return 1;
  }
  heron__op_fill_inputs(&op, bufs, 7);
  int64_t nout = heron__tensor_elems(&op.out);
  size_t bytes = (size_t)nout * 4;
  void *ref = malloc(bytes);
  op.reference(&op, bufs);
  memcpy(ref, bufs[op.ninputs], bytes);
  memset(bufs[op.ninputs], 0, bytes);
  heron__op_interpret(&op, bufs);
  int ok = heron__op_check(&op, bufs[op.ninputs], ref, NULL, NULL);
  int same = !memcmp(bufs[op.ninputs], ref, bytes), nonzero = 0;
  for (int64_t i = 0; i < nout; i++)
    nonzero += heron__elem_get(ref, op.out_dtype, i) != 0;
  int rc = 0;
  if (!ok || (dtype == HERON__INT8 && !same) || !nonzero) {
    fprintf(stderr, "%s %s: check=%d same=%d nonzero=%d\n", name,
            heron__dtype_name(dtype), ok, same, nonzero);
    rc = 1;
  }
  free(ref);
  heron__op_free_buffers(&op, bufs);
  return rc;
}

/* One odd shape per op, with padding, strides and dilations where the op
 * has them. */
static const struct {
  const char *op;
  int n;
  int64_t shape[12];
} cases[] = {
    {"gemm", 3, {7, 13, 37}},
    {"bmm", 4, {3, 5, 7, 11}},
    {"gemv", 2, {13, 29}},
    {"c1d", 8, {2, 17, 3, 5, 3, 2, 2, 1}},
    {"c2d", 10, {1, 11, 13, 3, 2, 3, 5, 2, 2, 1}},
    {"dil", 10, {1, 9, 8, 3, 3, 3, 3, 1, 2, 2}},
    {"c3d", 12, {1, 5, 6, 7, 3, 2, 3, 3, 3, 1, 1, 1}},
    {"t2d", 11, {1, 5, 6, 3, 2, 3, 3, 2, 1, 1, 1}},
    {"scan", 3, {5, 9, 7}},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

TEST(int8_references_match_the_interpreter_exactly_for_every_op) {
  for (int c = 0; c < NCASES; c++)
    CHECK_MSG(ref_matches_interpreter(cases[c].op, cases[c].shape, cases[c].n,
                                      HERON__INT8) == 0,
              "%s", cases[c].op);
}

TEST(bf16_references_match_the_interpreter_for_every_op) {
  for (int c = 0; c < NCASES; c++)
    CHECK_MSG(ref_matches_interpreter(cases[c].op, cases[c].shape, cases[c].n,
                                      HERON__BF16) == 0,
              "%s", cases[c].op);
}

TEST(the_activation_input_is_unsigned_and_the_weights_signed) {
  heron__op op;
  heron_error err = {0};
  CHECK_OK(
      heron__op_build("gemv", (int64_t[]){4, 8}, 2, HERON__INT8, &op, &err),
      &err);
  CHECK_EQ(op.act_input, 1);
  CHECK_EQ(heron__op_buf_dtype(&op, 0), HERON__S8);
  CHECK_EQ(heron__op_buf_dtype(&op, 1), HERON__U8);
  CHECK_EQ(heron__op_buf_dtype(&op, 2), HERON__S32);
  CHECK_OK(heron__op_build("c2d", (int64_t[]){1, 4, 4, 2, 2, 3, 3}, 7,
                           HERON__INT8, &op, &err),
           &err);
  CHECK(!strcmp(op.in[op.act_input].name, "data"));
}

/* All-255 activations with all-127 and all-(-128) weights: the largest
 * products of either sign, summed over the longest allowed reduction,
 * are exact in the reference, and one unit off fails the check. */
TEST(saturation_corners_are_exact_up_to_the_longest_reduction) {
  static const int w[2] = {127, -128};
  for (int s = 0; s < 2; s++) {
    heron__op op;
    heron_error err = {0};
    int64_t K = HERON__INT8_MAX_REDUCE;
    CHECK_OK(heron__op_build("gemm", (int64_t[]){2, 3, K}, 3, HERON__INT8, &op,
                             &err),
             &err);
    void *bufs[4];
    CHECK_OK(heron__op_alloc_buffers(&op, bufs, &err), &err);
    memset(bufs[0], 255, (size_t)(2 * K));
    memset(bufs[1], w[s], (size_t)(3 * K));
    op.reference(&op, bufs);
    int32_t *c = bufs[2];
    for (int i = 0; i < 6; i++)
      CHECK_EQ((int64_t)c[i], 255LL * w[s] * K);
    int32_t ref[6];
    memcpy(ref, c, sizeof ref);
    CHECK(heron__op_check(&op, c, ref, NULL, NULL));
    c[5] += 1;
    int64_t bad = -1;
    CHECK(!heron__op_check(&op, c, ref, NULL, &bad));
    CHECK_EQ(bad, 5);
    heron__op_free_buffers(&op, bufs);
  }
}

TEST(int8_rejects_reductions_whose_s32_sums_could_overflow) {
  heron__op op;
  heron_error err = {0};
  CHECK_EQ(heron__op_build("gemm",
                           (int64_t[]){1, 1, HERON__INT8_MAX_REDUCE + 1}, 3,
                           HERON__INT8, &op, &err),
           HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "s32");
  /* fp32 has no such bound. */
  CHECK_OK(heron__op_build("gemm",
                           (int64_t[]){1, 1, HERON__INT8_MAX_REDUCE + 1}, 3,
                           HERON__FP32, &op, &err),
           &err);
}

TEST(int8_fill_covers_the_full_ranges_and_the_bias_is_s32) {
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("gemm", (int64_t[]){64, 64, 64}, 3, HERON__INT8, &op,
                           &err),
           &err);
  CHECK_OK(heron__op_set_epilogue(&op, HERON__EPI_BIAS | HERON__EPI_RELU, &err),
           &err);
  void *bufs[4];
  CHECK_OK(heron__op_alloc_buffers(&op, bufs, &err), &err);
  heron__op_fill_inputs(&op, bufs, 3);
  int amin = 255, amax = 0, bmin = 127, bmax = -128;
  for (int i = 0; i < 64 * 64; i++) {
    int a = ((uint8_t *)bufs[0])[i], b = ((int8_t *)bufs[1])[i];
    amin = a < amin ? a : amin;
    amax = a > amax ? a : amax;
    bmin = b < bmin ? b : bmin;
    bmax = b > bmax ? b : bmax;
  }
  CHECK_EQ(amin, 0);
  CHECK_EQ(amax, 255);
  CHECK_EQ(bmin, -128);
  CHECK_EQ(bmax, 127);
  int nonzero = 0;
  for (int i = 0; i < 64; i++) {
    int32_t v = ((int32_t *)bufs[3])[i];
    CHECK(v >= -32768 && v <= 32768);
    nonzero += v != 0;
  }
  CHECK(nonzero > 32);
  /* The full reference applies the s32 bias and ReLU exactly. */
  heron__op plain = op;
  plain.epilogue = 0;
  int32_t *sum = malloc(64 * 64 * 4);
  void *pb[3] = {bufs[0], bufs[1], sum};
  plain.reference(&plain, pb);
  heron__op_reference_full(&op, bufs);
  for (int i = 0; i < 64 * 64; i++) {
    int64_t v = (int64_t)sum[i] + ((int32_t *)bufs[3])[i % 64];
    CHECK_EQ((int64_t)((int32_t *)bufs[2])[i], v > 0 ? v : 0);
  }
  free(sum);
  heron__op_free_buffers(&op, bufs);
}

TEST(bf16_rounds_to_nearest_even_and_keeps_nan_quiet) {
  /* 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties to even, 1. */
  CHECK_EQ(heron__bf16_from_float(1.0f + 0x1p-8f), 0x3f80);
  /* 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even. */
  CHECK_EQ(heron__bf16_from_float(1.0f + 3 * 0x1p-8f), 0x3f82);
  CHECK_EQ(heron__bf16_from_float(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  CHECK_EQ(heron__bf16_from_float(-2.0f), 0xc000);
  CHECK(heron__bf16_to_float(0x3f81) == 1.0f + 0x1p-7f);
  uint16_t nan = heron__bf16_from_float(NAN);
  CHECK((nan & 0x7f80) == 0x7f80 && (nan & 0x7f) != 0);
  /* The largest finite fp32 rounds up to infinity, as IEEE rounding does. */
  CHECK_EQ(heron__bf16_from_float(3.4028235e38f), 0x7f80);
}
