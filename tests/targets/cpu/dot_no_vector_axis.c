/* tests/targets/cpu/dot_no_vector_axis.c - an int8 or bf16 task the cpu
 * template's dot-product kernels cannot vectorize (gemm with N = 1, a
 * convolution with CO = 1) is refused with a message that says what the
 * kernels need, which axis is too short, and what to use instead; and what
 * it suggests works.
 *
 * The kernels broadcast a group of activations against a vector of weight
 * groups along an output axis that the weights read and the activations do
 * not (gemm's j, a convolution's co); with that axis of extent 1 there is
 * nothing to vectorize.  A gemm with N = 1 is the matrix-vector product
 * gemv (vectorized along M), whose int8 form takes the matrix as the s8
 * operand and the vector as the u8 one; other ops go to fp32.  The message
 * fits heron_error's 159 characters whole (a longer one is shortened). */
#include "test.h"

#include "core/op/op.h"
#include "core/sched/sched.h"
#include "core/space/builder.h"
#include "core/targets/hw.h"

/* Builds the cpu template of op at shape in dtype on cpu-zen4 (an AVX-512
 * VNNI and BF16 description, so the result is the same on every machine);
 * returns its status, the message in err. */
static int build(const char *opname, const int64_t *shape, int n, int dtype,
                 heron__op *op, heron_error *err) {
  heron__hw desc;
  heron__template *t = NULL;
  heron_space *sp = NULL;
  heron__hw_detect_cpu(&desc);
  int rc = heron__hw_load("cpu-zen4", &desc, err);
  if (!rc)
    rc = heron__op_build(opname, shape, n, dtype, op, err);
  if (!rc)
    rc = heron__template_build(op, &desc, "cpu", &t, &sp, err);
  heron__template_free(t);
  heron__space_free(sp);
  return rc;
}

/* The part of the message that says what the kernels need (tests/cli's
 * int8_with_an_output_dimension_of_1_names_that_dimension expects it). */
#define NEEDS                                                                  \
  "needs an output axis the weights read and the activations do not, for "     \
  "its vectors"

TEST(gemm_with_n_1_names_j_and_points_to_gemv_which_builds) {
  heron__op op;
  heron_error err = {0};
  static const struct {
    int dtype;
    const char *want;
  } c[] = {
      {HERON__INT8, "cpu template: gemm int8 " NEEDS
                    ": j is 1; use --op gemv --shape 64,48 (A s8, x u8)"},
      {HERON__BF16, "cpu template: gemm bf16 " NEEDS
                    ": j is 1; use --op gemv --shape 64,48"},
  };
  for (int i = 0; i < 2; i++) {
    heron_error_clear(&err);
    int rc = build("gemm", (int64_t[]){64, 1, 48}, 3, c[i].dtype, &op, &err);
    CHECK_EQ(rc, HERON_EUNSUPPORTED);
    CHECK_MSG(strcmp(err.text, c[i].want) == 0, "said \"%s\"\nwant \"%s\"",
              err.text, c[i].want);
    /* Whole: heron_error shortens what does not fit in 159 characters. */
    CHECK(strlen(c[i].want) <= 159);
    /* What it suggests builds, with the operands it names. */
    heron_error_clear(&err);
    CHECK_OK(build("gemv", (int64_t[]){64, 48}, 2, c[i].dtype, &op, &err),
             &err);
    if (c[i].dtype == HERON__INT8) {
      CHECK_EQ(heron__op_buf_dtype(&op, 0), HERON__S8); /* A */
      CHECK_EQ(heron__op_buf_dtype(&op, 1), HERON__U8); /* x */
    }
  }
}

TEST(without_a_longer_axis_to_use_instead_the_message_points_to_fp32) {
  heron__op op;
  heron_error err = {0};
  static const struct {
    const char *op;
    int n;
    int64_t shape[10];
    int dtype;
    const char *want;
  } c[] = {
      /* M = 1 too: gemv 1,64 has no vector axis either. */
      {"gemm",
       3,
       {1, 1, 64},
       HERON__INT8,
       "cpu template: gemm int8 " NEEDS ": j is 1; use --dtype fp32"},
      {"bmm",
       4,
       {2, 4, 1, 8},
       HERON__BF16,
       "cpu template: bmm bf16 " NEEDS ": j is 1; use --dtype fp32"},
      {"gemv",
       2,
       {1, 64},
       HERON__INT8,
       "cpu template: gemv int8 " NEEDS ": i is 1; use --dtype fp32"},
      {"c2d",
       10,
       {1, 8, 8, 8, 1, 3, 3, 1, 0, 1},
       HERON__INT8,
       "cpu template: c2d int8 " NEEDS ": co is 1; use --dtype fp32"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    heron_error_clear(&err);
    CHECK_EQ(build(c[i].op, c[i].shape, c[i].n, c[i].dtype, &op, &err),
             HERON_EUNSUPPORTED);
    CHECK_MSG(strcmp(err.text, c[i].want) == 0, "said \"%s\"\nwant \"%s\"",
              err.text, c[i].want);
    /* fp32 takes the same shape. */
    heron_error_clear(&err);
    CHECK_OK(build(c[i].op, c[i].shape, c[i].n, HERON__FP32, &op, &err), &err);
  }
}
