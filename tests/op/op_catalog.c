/* tests/op/op_catalog.c - the operator catalogue, --shape parsing, shape
 * validation in build, FLOP counts and the shape of each description. */
#include <string.h>

#include "core/op/op.h"
#include "test.h"

/* Heron's operator suite, in the catalogue's order. */
static const char *const suite_ops[] = {"gemm", "bmm", "gemv", "c1d", "c2d",
                                        "c3d",  "dil", "t2d",  "scan"};

/* Builds an op at shape_[n_] in fp32, expecting failure with `code_` and a
 * message containing `needle_`. */
#define CHECK_BUILD_FAILS(opname_, shape_, n_, code_, needle_)                 \
  do {                                                                         \
    heron__op op_;                                                             \
    heron_error e_ = {0};                                                      \
    int rc_ = heron__op_build(opname_, shape_, n_, HERON__FP32, &op_, &e_);    \
    CHECK_MSG(rc_ == (code_), "%s: got %s (%s)", #shape_, heron_err_name(rc_), \
              e_.text);                                                        \
    CHECK_STR_CONTAINS(e_.text, needle_);                                      \
  } while (0)

/* Parses `text_` for an op, expecting HERON_EINVAL and `needle_` in the
 * message. */
#define CHECK_PARSE_FAILS(opname_, text_, needle_)                             \
  do {                                                                         \
    int64_t s_[16];                                                            \
    int n_ = -1;                                                               \
    heron_error e_ = {0};                                                      \
    int rc_ = heron_parse_shape(opname_, text_, s_, 16, &n_, &e_);             \
    CHECK_MSG(rc_ == HERON_EINVAL, "'%s': got %s", text_,                      \
              heron_err_name(rc_));                                            \
    CHECK_STR_CONTAINS(e_.text, needle_);                                      \
  } while (0)

/* Heron's nine suite ops first, in its order, then the channels-last
 * forms of the convolutions, then the blocked ones. */
TEST(catalogue_lists_the_nine_suite_ops_in_order_then_the_layout_forms) {
  static const char *const layout_ops[] = {
      "c1d_nwc",     "c2d_nhwc",  "c3d_ndhwc", "c1d_ncw16c",
      "c2d_nchw16c", "c1d_ncw8c", "c2d_nchw8c"};
  CHECK_EQ(heron_op_count(), 16);
  CHECK_EQ(heron__op_kind_count(), 16);
  for (int i = 0; i < 16; i++) {
    const char *want = i < 9 ? suite_ops[i] : layout_ops[i - 9];
    CHECK(!strcmp(heron_op_name(i), want));
    CHECK(heron__op_kind_find(want) == heron__op_kind_at(i));
    CHECK(heron_op_summary(want) && strlen(heron_op_summary(want)) > 10);
  }
  CHECK(heron_op_name(16) == NULL);
  CHECK(heron_op_name(-1) == NULL);
  CHECK(heron_op_summary("conv9d") == NULL);
}

/* A blocked convolution holds the channels in blocks of 16 (or 8), padded
 * up to the block, the weights as [CO/B][CI/B][KH][KW][B i][B o]; its
 * reference on tensors whose padded lanes hold zeros is the plain
 * convolution of the real channels, and its output's padded lanes are
 * zeros.  Only fp32; no bias (relu is allowed). */
TEST(blocked_convolutions_block_and_pad_the_channels) {
  static const struct {
    const char *name;
    int64_t b;
  } ops[] = {{"c2d_nchw16c", 16}, {"c2d_nchw8c", 8}};
  /* N=2, 5x4 input, CI=3, CO=11 (CO > 8: two blocks of 8), 3x2 kernel, pad 1 */
  int64_t shape[] = {2, 5, 4, 3, 11, 3, 2, 1, 1, 1};
  for (int k = 0; k < 2; k++) {
    heron__op pl, bl;
    heron_error err = {0};
    int64_t B = ops[k].b, CIB = 1, COB = (11 + B - 1) / B;
    CHECK_OK(heron__op_build("c2d", shape, 10, HERON__FP32, &pl, &err), &err);
    CHECK_OK(heron__op_build(ops[k].name, shape, 10, HERON__FP32, &bl, &err),
             &err);
    CHECK(!strcmp(bl.name, ops[k].name));
    int64_t HO = pl.out.dims[2], WO = pl.out.dims[3];
    int64_t want_data[] = {2, CIB, 5, 4, B}, want_out[] = {2, COB, HO, WO, B};
    int64_t want_wt[] = {COB, CIB, 3, 2, B, B};
    CHECK_EQ(bl.in[0].ndim, 5);
    CHECK_EQ(bl.in[1].ndim, 6);
    for (int d = 0; d < 5; d++) {
      CHECK_EQ(bl.in[0].dims[d], want_data[d]);
      CHECK_EQ(bl.out.dims[d], want_out[d]);
    }
    for (int d = 0; d < 6; d++)
      CHECK_EQ(bl.in[1].dims[d], want_wt[d]);
    /* Spatial axes in the output's order, then the reductions, the lanes
     * last of each. */
    static const char *const names[] = {"n",   "cob", "oh", "ow", "coi",
                                        "cib", "kh",  "kw", "cii"};
    CHECK_EQ(bl.naxes, 9);
    for (int x = 0; x < 9; x++)
      CHECK_MSG(!strcmp(bl.axes[x].name, names[x]), "axis %d is %s", x,
                bl.axes[x].name);
    CHECK_EQ(bl.channel_axis, -1);
    CHECK_EQ(bl.flops, 2.0 * 2 * COB * B * HO * WO * CIB * B * 3 * 2);
    void *bp[4], *bb[4];
    CHECK_OK(heron__op_alloc_buffers(&pl, bp, &err), &err);
    CHECK_OK(heron__op_alloc_buffers(&bl, bb, &err), &err);
    heron__op_fill_inputs(&pl, bp, 5);
    /* The plain tensors blocked by hand; the padded lanes stay zero. */
    const float *dp = bp[0], *wp = bp[1];
    float *db = bb[0], *wb = bb[1];
    for (int64_t n = 0; n < 2; n++)
      for (int64_t c = 0; c < 3; c++)
        for (int64_t p = 0; p < 20; p++)
          db[((n * CIB + c / B) * 20 + p) * B + c % B] =
              dp[(n * 3 + c) * 20 + p];
    for (int64_t o = 0; o < 11; o++)
      for (int64_t i = 0; i < 3; i++)
        for (int64_t kk = 0; kk < 6; kk++)
          wb[(((o / B * CIB + i / B) * 6 + kk) * B + i % B) * B + o % B] =
              wp[(o * 3 + i) * 6 + kk];
    heron__op_reference_full(&pl, bp);
    heron__op_reference_full(&bl, bb);
    const float *op_ = bp[2], *ob = bb[2];
    int64_t hw = HO * WO;
    for (int64_t n = 0; n < 2; n++)
      for (int64_t c = 0; c < COB * B; c++)
        for (int64_t p = 0; p < hw; p++) {
          float got = ob[((n * COB + c / B) * hw + p) * B + c % B];
          float want = c < 11 ? op_[(n * 11 + c) * hw + p] : 0.0f;
          CHECK_MSG(got == want, "%s n=%lld c=%lld p=%lld: %g, want %g",
                    ops[k].name, (long long)n, (long long)c, (long long)p, got,
                    want);
        }
    heron__op_free_buffers(&pl, bp);
    heron__op_free_buffers(&bl, bb);
    heron__op bad;
    CHECK_EQ(heron__op_build(ops[k].name, shape, 10, HERON__FP16, &bad, &err),
             HERON_EUNSUPPORTED);
    CHECK_STR_CONTAINS(err.text, "fp32 only");
    CHECK_EQ(heron__op_set_epilogue(&bl, HERON__EPI_BIAS, &err),
             HERON_EUNSUPPORTED);
    CHECK_OK(heron__op_set_epilogue(&bl, HERON__EPI_RELU, &err), &err);
  }
}

/* A channels-last convolution is its channels-first op with the
 * activations' and the output's channel dimension last and the spatial
 * axes in the output's order; its reference equals the channels-first
 * one's on transposed tensors. */
TEST(channels_last_convolutions_move_the_channel_dimension_last) {
  heron__op cf, cl;
  heron_error err = {0};
  int64_t shape[] = {2, 5, 4, 3, 6, 3, 2, 1, 1, 1};
  CHECK_OK(heron__op_build("c2d", shape, 10, HERON__FP32, &cf, &err), &err);
  CHECK_OK(heron__op_build("c2d_nhwc", shape, 10, HERON__FP32, &cl, &err),
           &err);
  CHECK(!strcmp(cl.name, "c2d_nhwc"));
  int64_t want_data[] = {2, 5, 4, 3}, want_out[] = {2, 5, 5, 6};
  for (int d = 0; d < 4; d++) {
    CHECK_EQ(cl.in[0].dims[d], want_data[d]);
    CHECK_EQ(cl.out.dims[d], want_out[d]);
    CHECK_EQ(cl.in[1].dims[d], cf.in[1].dims[d]);
  }
  CHECK(!strcmp(cl.axes[3].name, "co") && !strcmp(cl.axes[1].name, "oh"));
  CHECK(!strcmp(cl.axes[cl.channel_axis].name, "co"));
  CHECK_EQ(cl.flops, cf.flops);
  void *bcf[4], *bcl[4];
  CHECK_OK(heron__op_alloc_buffers(&cf, bcf, &err), &err);
  CHECK_OK(heron__op_alloc_buffers(&cl, bcl, &err), &err);
  heron__op_fill_inputs(&cf, bcf, 3);
  /* The same values in NHWC order, the same weights. */
  const float *dcf = bcf[0];
  float *dcl = bcl[0];
  for (int64_t n = 0; n < 2; n++)
    for (int64_t c = 0; c < 3; c++)
      for (int64_t p = 0; p < 20; p++)
        dcl[(n * 20 + p) * 3 + c] = dcf[(n * 3 + c) * 20 + p];
  memcpy(bcl[1], bcf[1], (size_t)heron__tensor_elems(&cf.in[1]) * 4);
  heron__op_reference_full(&cf, bcf);
  heron__op_reference_full(&cl, bcl);
  const float *ocf = bcf[2], *ocl = bcl[2];
  int64_t hw = cf.out.dims[2] * cf.out.dims[3];
  for (int64_t n = 0; n < 2; n++)
    for (int64_t c = 0; c < 6; c++)
      for (int64_t p = 0; p < hw; p++)
        CHECK(ocl[(n * hw + p) * 6 + c] == ocf[(n * 6 + c) * hw + p]);
  heron__op_free_buffers(&cf, bcf);
  heron__op_free_buffers(&cl, bcl);
}

TEST(op_dims_gives_names_in_shape_order) {
  const char *const *names;
  int n;
  heron_error err = {0};
  CHECK_OK(heron_op_dims("gemm", &names, &n, &err), &err);
  CHECK_EQ(n, 3);
  CHECK(!strcmp(names[0], "M") && !strcmp(names[1], "N") &&
        !strcmp(names[2], "K"));
  CHECK_OK(heron_op_dims("bmm", &names, &n, &err), &err);
  CHECK_EQ(n, 4);
  CHECK(!strcmp(names[0], "B") && !strcmp(names[3], "K"));
  CHECK_OK(heron_op_dims("c2d", &names, &n, &err), &err);
  CHECK_EQ(n, 10);
  static const char *const c2d[] = {"N",  "H",  "W",      "CI",  "CO",
                                    "KH", "KW", "stride", "pad", "dilation"};
  for (int i = 0; i < 10; i++)
    CHECK(!strcmp(names[i], c2d[i]));
}

TEST(unknown_op_is_notfound_and_lists_known_ops) {
  const char *const *names;
  int n;
  heron_error err = {0};
  CHECK_EQ(heron_op_dims("conv9d", &names, &n, &err), HERON_ENOTFOUND);
  CHECK_STR_CONTAINS(err.text, "conv9d");
  CHECK_STR_CONTAINS(err.text,
                     "gemm, bmm, gemv, c1d, c2d, c3d, dil, t2d, scan");
  int64_t shape[3] = {4, 4, 4};
  CHECK_BUILD_FAILS("conv9d", shape, 3, HERON_ENOTFOUND, "known: gemm");
  heron_error e2 = {0};
  int64_t s[4];
  CHECK_EQ(heron_parse_shape("nope", "1,2", s, 4, &n, &e2), HERON_ENOTFOUND);
  CHECK_STR_CONTAINS(e2.text, "c2d");
}

TEST(parse_shape_accepts_full_and_defaulted_shapes) {
  int64_t s[16];
  int n = 0;
  heron_error err = {0};
  CHECK_OK(heron_parse_shape("gemm", "1024,512,7", s, 16, &n, &err), &err);
  CHECK_EQ(n, 3);
  CHECK(s[0] == 1024 && s[1] == 512 && s[2] == 7);
  CHECK_OK(heron_parse_shape("c2d", "16,56,56,64,64,3,3", s, 16, &n, &err),
           &err);
  CHECK_EQ(n, 7);
  CHECK_OK(
      heron_parse_shape("c2d", "16,56,56,64,64,3,3,2,0,2", s, 16, &n, &err),
      &err);
  CHECK_EQ(n, 10);
  CHECK(s[7] == 2 && s[8] == 0 && s[9] == 2);
  CHECK_OK(heron_parse_shape("gemv", "2147483647,007", s, 16, &n, &err), &err);
  CHECK(s[0] == 2147483647LL && s[1] == 7);
}

TEST(parse_shape_rejects_missing_dimension_naming_it) {
  CHECK_PARSE_FAILS("gemm", "1024,1024",
                    "--shape: dimension K of gemm is missing (expected M,N,K)");
  CHECK_PARSE_FAILS("gemm", "", "dimension M of gemm is missing");
  CHECK_PARSE_FAILS("c2d", "1,8,8,3,3,3", "dimension KW of c2d is missing");
  CHECK_PARSE_FAILS("c2d", "1,8,8", "[,stride,pad,dilation]");
}

TEST(parse_shape_rejects_extra_dimensions) {
  CHECK_PARSE_FAILS("gemm", "1,2,3,4", "at most 3 dimensions (M,N,K)");
  CHECK_PARSE_FAILS("c2d", "1,8,8,3,3,3,3,1,0,1,5", "at most 10");
  CHECK_PARSE_FAILS("gemm", "1,2,3,", "trailing ','");
}

TEST(parse_shape_rejects_bad_values_naming_the_dimension) {
  CHECK_PARSE_FAILS("gemm", "1024,-3,5",
                    "dimension N = '-3' is not a positive integer");
  CHECK_PARSE_FAILS("gemm", "1024,0,5", "dimension N = '0' is not a positive");
  CHECK_PARSE_FAILS("gemm", "12abc,4,5", "dimension M = '12abc'");
  CHECK_PARSE_FAILS("gemm", "abc,4,5", "dimension M = 'abc'");
  CHECK_PARSE_FAILS("gemm", "4,4,1.5", "dimension K = '1.5'");
  CHECK_PARSE_FAILS("gemm", " 4,4,4", "dimension M = ' 4'");
  CHECK_PARSE_FAILS("gemm", "+4,4,4", "dimension M = '+4'");
  CHECK_PARSE_FAILS("gemm", "0x10,4,4", "dimension M = '0x10'");
  CHECK_PARSE_FAILS("gemm", "4,,4", "dimension N of gemm is empty");
  CHECK_PARSE_FAILS("gemm", "4,4,99999999999999999999999",
                    "dimension K = '99999999999999999999999' is too large");
  CHECK_PARSE_FAILS("gemm", "4,4,2147483648", "is too large");
  CHECK_PARSE_FAILS("c2d", "1,8,8,3,3,3,3,1,-1,1",
                    "dimension pad = '-1' is not a non-negative integer");
  CHECK_PARSE_FAILS("c2d", "1,8,8,3,3,3,3,0,0,1",
                    "dimension stride = '0' is not a positive integer");
  CHECK_PARSE_FAILS("c2d", "1,8,8,3,3,3,3,1,0,0", "dimension dilation = '0'");
}

TEST(build_rejects_zero_or_negative_in_every_dimension_naming_it) {
  static const struct {
    const char *op;
    int n;
    int64_t shape[12];
  } good[] = {{"gemm", 3, {4, 5, 6}},
              {"bmm", 4, {2, 4, 5, 6}},
              {"gemv", 2, {4, 6}},
              {"c1d", 8, {1, 8, 3, 4, 3, 1, 1, 1}},
              {"c2d", 10, {1, 8, 8, 3, 4, 3, 3, 1, 1, 1}},
              {"c3d", 12, {1, 4, 8, 8, 3, 4, 3, 3, 3, 1, 1, 1}},
              {"dil", 10, {1, 8, 8, 3, 4, 3, 3, 1, 1, 2}},
              {"t2d", 11, {1, 8, 8, 3, 4, 3, 3, 2, 1, 1, 1}},
              {"scan", 3, {4, 5, 6}}};
  for (size_t c = 0; c < sizeof good / sizeof good[0]; c++) {
    const heron__op_kind *k = heron__op_kind_find(good[c].op);
    CHECK(k != NULL);
    heron__op ok_op;
    heron_error ok_err = {0};
    CHECK_OK(heron__op_build(good[c].op, good[c].shape, good[c].n, HERON__FP32,
                             &ok_op, &ok_err),
             &ok_err);
    for (int d = 0; d < good[c].n; d++) {
      int64_t s[12];
      memcpy(s, good[c].shape, sizeof s);
      /* Padding may be zero; one below each dimension's minimum fails. */
      s[d] = k->mins ? k->mins[d] - 1 : 0;
      char needle[48];
      snprintf(needle, sizeof needle, "%s=%lld must be", k->dims[d],
               (long long)s[d]);
      CHECK_BUILD_FAILS(good[c].op, s, good[c].n, HERON_EINVAL, needle);
      s[d] = -7;
      snprintf(needle, sizeof needle, "%s=-7 must be", k->dims[d]);
      CHECK_BUILD_FAILS(good[c].op, s, good[c].n, HERON_EINVAL, needle);
    }
  }
}

TEST(build_rejects_missing_and_extra_dimensions) {
  int64_t s[11] = {4, 4, 4, 4, 4, 4, 4, 1, 0, 1, 1};
  CHECK_BUILD_FAILS("gemm", s, 2, HERON_EINVAL,
                    "GEMM takes 3 dimensions (M,N,K), got 2");
  CHECK_BUILD_FAILS("gemm", s, 4, HERON_EINVAL, "got 4");
  CHECK_BUILD_FAILS("bmm", s, 3, HERON_EINVAL, "(B,M,N,K)");
  CHECK_BUILD_FAILS("c2d", s, 6, HERON_EINVAL, "C2D takes 7 to 10 dimensions");
  CHECK_BUILD_FAILS("c2d", s, 11, HERON_EINVAL, "got 11");
  CHECK_BUILD_FAILS("gemm", s, 0, HERON_EINVAL, "got 0");
}

TEST(build_rejects_kernel_larger_than_padded_input) {
  int64_t s[10] = {1, 3, 8, 2, 2, 9, 3, 1, 1, 1};
  CHECK_BUILD_FAILS("c2d", s, 10, HERON_EINVAL,
                    "C2D: KH=9 with dilation 1 exceeds padded input height 5");
  /* Dilation 3 stretches a 3-wide kernel to 7 columns; 6 do not hold it. */
  int64_t w[10] = {1, 8, 6, 2, 2, 3, 3, 1, 0, 3};
  CHECK_BUILD_FAILS("c2d", w, 10, HERON_EINVAL,
                    "C2D: KW=3 with dilation 3 exceeds padded input width 6");
  /* Exactly fitting is fine and gives a 1x1 output. */
  int64_t f[10] = {1, 7, 7, 2, 2, 3, 3, 1, 0, 3};
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("c2d", f, 10, HERON__FP32, &op, &err), &err);
  CHECK_EQ(op.out.dims[2], 1);
  CHECK_EQ(op.out.dims[3], 1);
}

TEST(build_accepts_fp16_int8_and_bf16_with_their_output_types) {
  int64_t s[3] = {4, 4, 4};
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("gemm", s, 3, HERON__INT8, &op, &err), &err);
  CHECK_EQ(op.out_dtype, HERON__S32);
  CHECK_EQ(heron__op_buf_dtype(&op, 0), HERON__U8);
  CHECK_EQ(heron__op_buf_dtype(&op, 1), HERON__S8);
  CHECK_EQ(heron__op_bytes(&op), 16 + 16 + 16 * 4);
  CHECK_OK(heron__op_build("gemm", s, 3, HERON__BF16, &op, &err), &err);
  CHECK_EQ(op.out_dtype, HERON__FP32);
  CHECK_EQ(heron__op_bytes(&op), 32 + 32 + 16 * 4);
  heron_error e2 = {0};
  CHECK_OK(heron__op_build("gemm", s, 3, HERON__FP16, &op, &e2), &e2);
  CHECK_EQ(op.dtype, HERON__FP16);
  CHECK_EQ(op.out_dtype, HERON__FP16);
  CHECK_EQ(heron__op_bytes(&op), 3 * 16 * 2);
}

TEST(dtype_names_parse_and_sizes) {
  CHECK_EQ(heron__dtype_parse("fp32"), HERON__FP32);
  CHECK_EQ(heron__dtype_parse("fp16"), HERON__FP16);
  CHECK_EQ(heron__dtype_parse("int8"), HERON__INT8);
  CHECK_EQ(heron__dtype_parse("bf16"), HERON__BF16);
  CHECK_EQ(heron__dtype_parse("s32"), HERON_EINVAL);
  CHECK(!strcmp(heron__dtype_name(HERON__S32), "s32"));
  CHECK_EQ(heron__dtype_size(HERON__BF16), 2);
  CHECK_EQ(heron__dtype_size(HERON__S32), 4);
  CHECK_EQ(heron__dtype_parse("float"), HERON_EINVAL);
  CHECK_EQ(heron__dtype_parse(NULL), HERON_EINVAL);
  CHECK(!strcmp(heron__dtype_name(HERON__FP16), "fp16"));
  CHECK_EQ(heron__dtype_size(HERON__FP32), 4);
  CHECK_EQ(heron__dtype_size(HERON__FP16), 2);
  CHECK_EQ(heron__dtype_size(HERON__INT8), 1);
}

TEST(c2d_fills_default_stride_pad_dilation_into_the_shape) {
  int64_t s[7] = {16, 56, 56, 64, 64, 3, 3};
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("c2d", s, 7, HERON__FP32, &op, &err), &err);
  CHECK_EQ(op.nshape, 10);
  CHECK(op.shape[7] == 1 && op.shape[8] == 0 && op.shape[9] == 1);
  /* No padding: the 3x3 kernel shrinks 56 to 54. */
  CHECK_EQ(op.out.dims[2], 54);
  CHECK_EQ(op.in[0].bounded, 0);
}

TEST(flops_are_exact_for_known_shapes) {
  static const struct {
    const char *op;
    int n;
    int64_t shape[12];
    double flops;
  } cases[] = {
      {"gemm", 3, {1024, 1024, 1024}, 2.0 * 1024 * 1024 * 1024},
      {"gemm", 3, {32, 1000, 2048}, 2.0 * 32 * 1000 * 2048},
      {"bmm", 4, {12, 512, 64, 512}, 2.0 * 12 * 512 * 64 * 512},
      {"gemv", 2, {1024, 256}, 2.0 * 1024 * 256},
      /* Output 56x56 with padding 1. */
      {"c2d",
       10,
       {16, 56, 56, 64, 64, 3, 3, 1, 1, 1},
       2.0 * 16 * 64 * 56 * 56 * 64 * 3 * 3},
      /* 1x1 stride 2: 28 -> 14. */
      {"c2d",
       10,
       {16, 28, 28, 128, 256, 1, 1, 2, 0, 1},
       2.0 * 16 * 256 * 14 * 14 * 128},
      /* Dilation 2 with padding 1: (56 + 2 - 4 - 1) / 1 + 1 = 54. */
      {"c2d",
       10,
       {16, 56, 56, 64, 64, 3, 3, 1, 1, 2},
       2.0 * 16 * 64 * 54 * 54 * 64 * 9},
      /* DIL's default dilation is 2: the same count as the case above. */
      {"dil",
       9,
       {16, 56, 56, 64, 64, 3, 3, 1, 1},
       2.0 * 16 * 64 * 54 * 54 * 64 * 9},
      /* Pad 4 widens 892 to 900; the 3-tap kernel leaves 898. */
      {"c1d",
       8,
       {16, 892, 512, 512, 3, 1, 4, 1},
       2.0 * 16 * 512 * 898 * 512 * 3},
      {"c3d",
       12,
       {8, 8, 56, 56, 64, 64, 3, 3, 3, 1, 1, 1},
       2.0 * 8 * 64 * 8 * 56 * 56 * 64 * 27},
      /* 1x1x1 stride 2: 8 -> 4, 56 -> 28. */
      {"c3d",
       12,
       {8, 8, 56, 56, 64, 128, 1, 1, 1, 2, 0, 1},
       2.0 * 8 * 128 * 4 * 28 * 28 * 64},
      /* Stride 1, pad 1, 3x3: (56-1) - 2 + 2 + 0 + 1 = 56; the gather nest
       * counts every output pixel times every tap. */
      {"t2d",
       11,
       {16, 56, 56, 64, 64, 3, 3, 1, 1, 1, 0},
       2.0 * 16 * 64 * 56 * 56 * 64 * 9},
      /* 1x1 stride 2 output_padding 1: (28-1)*2 + 0 + 1 + 1 = 56. */
      {"t2d",
       11,
       {16, 28, 28, 128, 256, 1, 1, 2, 0, 1, 1},
       2.0 * 16 * 256 * 56 * 56 * 128},
      {"scan", 3, {16, 512, 128}, 2.0 * 16 * 512 * 128},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    heron__op op;
    heron_error err = {0};
    CHECK_OK(heron__op_build(cases[c].op, cases[c].shape, cases[c].n,
                             HERON__FP32, &op, &err),
             &err);
    CHECK_MSG(op.flops == cases[c].flops, "case %zu: %.0f != %.0f", c, op.flops,
              cases[c].flops);
  }
}

TEST(gemm_description_has_ij_spatial_k_reduce_and_row_major_maps) {
  int64_t s[3] = {5, 7, 11};
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("gemm", s, 3, HERON__FP32, &op, &err), &err);
  CHECK(!strcmp(op.name, "gemm"));
  CHECK_EQ(op.naxes, 3);
  CHECK(!strcmp(op.axes[0].name, "i") && op.axes[0].kind == HERON__SPATIAL &&
        op.axes[0].extent == 5);
  CHECK(!strcmp(op.axes[1].name, "j") && op.axes[1].extent == 7);
  CHECK(!strcmp(op.axes[2].name, "k") && op.axes[2].kind == HERON__REDUCE &&
        op.axes[2].extent == 11);
  CHECK_EQ(op.ninputs, 2);
  CHECK(op.in[0].dims[0] == 5 && op.in[0].dims[1] == 11);
  CHECK(op.in[0].index[1].coef[2] == 1 && op.in[0].index[1].coef[0] == 0);
  CHECK(op.in[1].dims[0] == 11 && op.in[1].dims[1] == 7);
  CHECK(op.out.dims[0] == 5 && op.out.dims[1] == 7);
  CHECK(op.reference != NULL);
  CHECK_EQ(heron__op_reduce_len(&op), 11);
}

TEST(c2d_description_has_strided_dilated_padded_data_index) {
  int64_t s[10] = {2, 9, 10, 3, 4, 3, 2, 2, 1, 2};
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("c2d", s, 10, HERON__FP32, &op, &err), &err);
  static const char *const names[] = {"n", "co", "oh", "ow", "ci", "kh", "kw"};
  CHECK_EQ(op.naxes, 7);
  for (int a = 0; a < 7; a++) {
    CHECK(!strcmp(op.axes[a].name, names[a]));
    CHECK_EQ(op.axes[a].kind, a < 4 ? HERON__SPATIAL : HERON__REDUCE);
  }
  /* HO = (9 + 2 - 2*2 - 1)/2 + 1 = 4, WO = (10 + 2 - 2 - 1)/2 + 1 = 5. */
  CHECK_EQ(op.axes[2].extent, 4);
  CHECK_EQ(op.axes[3].extent, 5);
  const heron__tensor *d = &op.in[0];
  CHECK(!strcmp(d->name, "data") && d->bounded == 1);
  CHECK(d->index[2].coef[2] == 2 && d->index[2].coef[5] == 2 &&
        d->index[2].offset == -1);
  CHECK(d->index[3].coef[3] == 2 && d->index[3].coef[6] == 2 &&
        d->index[3].offset == -1);
  CHECK(!strcmp(op.in[1].name, "weight") && op.in[1].bounded == 0);
  CHECK(op.out.dims[1] == 4 && op.out.dims[2] == 4 && op.out.dims[3] == 5);
  CHECK_EQ(heron__op_reduce_len(&op), 3 * 3 * 2);
}

/* ---- The rest of the suite ---------------------------------------------- */

TEST(new_ops_give_dimension_names_in_shape_order) {
  static const struct {
    const char *op;
    int n;
    const char *dims;
  } want[] = {
      {"c1d", 8, "N,W,CI,CO,KW,stride,pad,dilation"},
      {"c3d", 12, "N,D,H,W,CI,CO,KD,KH,KW,stride,pad,dilation"},
      {"dil", 10, "N,H,W,CI,CO,KH,KW,stride,pad,dilation"},
      {"t2d", 11, "N,H,W,CI,CO,KH,KW,stride,pad,dilation,output_padding"},
      {"scan", 3, "M,N,K"},
  };
  for (size_t c = 0; c < sizeof want / sizeof want[0]; c++) {
    const char *const *names;
    int n;
    heron_error err = {0};
    CHECK_OK(heron_op_dims(want[c].op, &names, &n, &err), &err);
    CHECK_EQ(n, want[c].n);
    char joined[128] = "";
    for (int i = 0; i < n; i++) {
      strcat(joined, i ? "," : "");
      strcat(joined, names[i]);
    }
    CHECK_MSG(!strcmp(joined, want[c].dims), "%s: %s", want[c].op, joined);
  }
}

TEST(parse_shape_of_new_ops_names_their_optional_dimensions) {
  int64_t s[16];
  int n = 0;
  heron_error err = {0};
  CHECK_OK(
      heron_parse_shape("t2d", "16,56,56,64,64,3,3,1,1,1,0", s, 16, &n, &err),
      &err);
  CHECK_EQ(n, 11);
  CHECK_PARSE_FAILS("t2d", "1,8,8,3", "[,stride,pad,dilation,output_padding]");
  CHECK_PARSE_FAILS("t2d", "1,8,8,3,3,3,3,1,0,1,-1",
                    "dimension output_padding = '-1'");
  CHECK_PARSE_FAILS("c1d", "1,8,3,3", "dimension KW of c1d is missing");
  CHECK_PARSE_FAILS("c3d", "1,4,8,8,3,3,3,3", "dimension KW of c3d is missing");
  CHECK_PARSE_FAILS("scan", "16,512", "dimension K of scan is missing");
}

TEST(defaults_fill_dil_dilation_2_and_t2d_output_padding_0) {
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("dil", (int64_t[]){1, 9, 9, 2, 2, 3, 3}, 7,
                           HERON__FP32, &op, &err),
           &err);
  CHECK(op.nshape == 10 && op.shape[7] == 1 && op.shape[8] == 0 &&
        op.shape[9] == 2);
  /* 9 - 2*2 = 5 outputs per dimension. */
  CHECK_EQ(op.out.dims[2], 5);
  CHECK(!strcmp(op.name, "dil"));
  CHECK_STR_CONTAINS(heron_op_summary("dil"), "dilation defaulting to 2");
  CHECK_OK(heron__op_build("t2d", (int64_t[]){1, 5, 6, 2, 3, 3, 3}, 7,
                           HERON__FP32, &op, &err),
           &err);
  CHECK(op.nshape == 11 && op.shape[7] == 1 && op.shape[8] == 0 &&
        op.shape[9] == 1 && op.shape[10] == 0);
  /* Stride 1, no padding: each dimension grows by KH - 1. */
  CHECK(op.out.dims[2] == 7 && op.out.dims[3] == 8);
  CHECK_OK(heron__op_build("c1d", (int64_t[]){1, 9, 2, 2, 3}, 5, HERON__FP32,
                           &op, &err),
           &err);
  CHECK(op.nshape == 8 && op.out.dims[2] == 7);
  CHECK_OK(heron__op_build("c3d", (int64_t[]){1, 4, 5, 6, 2, 2, 3, 3, 3}, 9,
                           HERON__FP32, &op, &err),
           &err);
  CHECK(op.nshape == 12 && op.out.dims[2] == 2 && op.out.dims[3] == 3 &&
        op.out.dims[4] == 4);
}

TEST(new_convs_reject_kernel_larger_than_padded_input_naming_it) {
  CHECK_BUILD_FAILS("c1d", ((int64_t[]){1, 4, 2, 2, 7, 1, 1, 1}), 8,
                    HERON_EINVAL,
                    "C1D: KW=7 with dilation 1 exceeds padded input width 6");
  CHECK_BUILD_FAILS("c1d", ((int64_t[]){1, 8, 2, 2, 3, 1, 0, 4}), 8,
                    HERON_EINVAL, "KW=3 with dilation 4 exceeds");
  CHECK_BUILD_FAILS("c3d", ((int64_t[]){1, 2, 8, 8, 2, 2, 3, 3, 3, 1, 0, 1}),
                    12, HERON_EINVAL,
                    "C3D: KD=3 with dilation 1 exceeds padded input depth 2");
  CHECK_BUILD_FAILS("c3d", ((int64_t[]){1, 4, 8, 3, 2, 2, 3, 3, 3, 1, 0, 2}),
                    12, HERON_EINVAL, "C3D: KD=3 with dilation 2");
  CHECK_BUILD_FAILS("c3d", ((int64_t[]){1, 8, 8, 3, 2, 2, 3, 3, 5, 1, 0, 1}),
                    12, HERON_EINVAL,
                    "KW=5 with dilation 1 exceeds padded "
                    "input width 3");
  /* DIL's default dilation stretches a 3x3 kernel to 5x5. */
  CHECK_BUILD_FAILS("dil", ((int64_t[]){1, 4, 8, 2, 2, 3, 3}), 7, HERON_EINVAL,
                    "DIL: KH=3 with dilation 2 exceeds padded input height 4");
}

TEST(t2d_rejects_output_padding_not_below_stride_or_dilation) {
  CHECK_BUILD_FAILS("t2d", ((int64_t[]){1, 5, 5, 2, 2, 3, 3, 1, 0, 1, 1}), 11,
                    HERON_EINVAL,
                    "T2D: output_padding=1 must be smaller than stride 1 or "
                    "dilation 1");
  CHECK_BUILD_FAILS("t2d", ((int64_t[]){1, 5, 5, 2, 2, 3, 3, 2, 0, 3, 3}), 11,
                    HERON_EINVAL, "output_padding=3 must be smaller");
  /* Either a stride or a dilation above it allows it. */
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("t2d", (int64_t[]){1, 5, 5, 2, 2, 3, 3, 2, 0, 1, 1},
                           11, HERON__FP32, &op, &err),
           &err);
  CHECK_OK(heron__op_build("t2d", (int64_t[]){1, 5, 5, 2, 2, 3, 3, 1, 0, 3, 2},
                           11, HERON__FP32, &op, &err),
           &err);
}

TEST(t2d_rejects_padding_that_leaves_no_output) {
  /* (1-1)*1 - 2*1 + 0 + 0 + 1 = -1. */
  CHECK_BUILD_FAILS("t2d", ((int64_t[]){1, 1, 4, 2, 2, 1, 3, 1, 1, 1, 0}), 11,
                    HERON_EINVAL,
                    "T2D: output height (H-1)*stride - 2*pad + "
                    "dilation*(KH-1) + output_padding + 1 = -1 is less than 1 "
                    "(pad=1 is too large)");
  CHECK_BUILD_FAILS("t2d", ((int64_t[]){1, 6, 2, 2, 2, 3, 3, 1, 2, 1, 0}), 11,
                    HERON_EINVAL, "output width (W-1)*stride");
  /* Output extent exactly 1 is fine. */
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("t2d", (int64_t[]){1, 1, 1, 2, 2, 3, 3, 1, 1, 1, 0},
                           11, HERON__FP32, &op, &err),
           &err);
  CHECK(op.out.dims[2] == 1 && op.out.dims[3] == 1);
}

TEST(every_op_sets_its_channel_axis) {
  static const struct {
    const char *op;
    int n;
    int64_t shape[12];
    const char *axis; /* NULL: no channel axis */
  } cases[] = {{"gemm", 3, {4, 5, 6}, "j"},
               {"bmm", 4, {2, 4, 5, 6}, "j"},
               {"gemv", 2, {4, 6}, "i"},
               {"c1d", 5, {1, 8, 3, 4, 3}, "co"},
               {"c2d", 7, {1, 8, 8, 3, 4, 3, 3}, "co"},
               {"c3d", 9, {1, 4, 8, 8, 3, 4, 3, 3, 3}, "co"},
               {"dil", 7, {1, 8, 8, 3, 4, 3, 3}, "co"},
               {"t2d", 7, {1, 8, 8, 3, 4, 3, 3}, "co"},
               {"scan", 3, {4, 5, 6}, NULL}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    heron__op op;
    heron_error err = {0};
    CHECK_OK(heron__op_build(cases[c].op, cases[c].shape, cases[c].n,
                             HERON__FP32, &op, &err),
             &err);
    if (!cases[c].axis) {
      CHECK_EQ(op.channel_axis, -1);
      continue;
    }
    CHECK_MSG(op.channel_axis >= 0 && op.channel_axis < op.naxes &&
                  !strcmp(op.axes[op.channel_axis].name, cases[c].axis) &&
                  op.axes[op.channel_axis].kind == HERON__SPATIAL,
              "%s: channel axis %d", cases[c].op, op.channel_axis);
  }
}

TEST(scan_refuses_a_bias_epilogue_but_takes_relu) {
  heron__op op;
  heron_error err = {0};
  CHECK_OK(
      heron__op_build("scan", (int64_t[]){4, 5, 6}, 3, HERON__FP32, &op, &err),
      &err);
  CHECK_EQ(heron__op_set_epilogue(&op, HERON__EPI_BIAS | HERON__EPI_RELU, &err),
           HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "scan has no channel axis");
  heron_error e2 = {0};
  CHECK_OK(heron__op_set_epilogue(&op, HERON__EPI_RELU, &e2), &e2);
}

TEST(c1d_and_c3d_descriptions_have_windowed_data_indices) {
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("c1d", (int64_t[]){2, 11, 3, 4, 3, 2, 1, 2}, 8,
                           HERON__FP32, &op, &err),
           &err);
  static const char *const n1[] = {"n", "co", "ow", "ci", "kw"};
  CHECK_EQ(op.naxes, 5);
  for (int a = 0; a < 5; a++) {
    CHECK(!strcmp(op.axes[a].name, n1[a]));
    CHECK_EQ(op.axes[a].kind, a < 3 ? HERON__SPATIAL : HERON__REDUCE);
  }
  /* WO = (11 + 2 - 4 - 1)/2 + 1 = 5. */
  CHECK_EQ(op.axes[2].extent, 5);
  CHECK(op.in[0].index[2].coef[2] == 2 && op.in[0].index[2].coef[4] == 2 &&
        op.in[0].index[2].offset == -1 && op.in[0].bounded == 1);
  CHECK(op.in[1].ndim == 3 && op.in[1].dims[0] == 4 && op.in[1].dims[2] == 3);
  CHECK_EQ(heron__op_reduce_len(&op), 9);

  CHECK_OK(heron__op_build("c3d",
                           (int64_t[]){1, 6, 7, 8, 2, 3, 3, 3, 3, 1, 0, 1}, 12,
                           HERON__FP32, &op, &err),
           &err);
  static const char *const n3[] = {"n",  "co", "od", "oh", "ow",
                                   "ci", "kd", "kh", "kw"};
  CHECK_EQ(op.naxes, 9);
  for (int a = 0; a < 9; a++) {
    CHECK(!strcmp(op.axes[a].name, n3[a]));
    CHECK_EQ(op.axes[a].kind, a < 5 ? HERON__SPATIAL : HERON__REDUCE);
  }
  CHECK(op.out.dims[2] == 4 && op.out.dims[3] == 5 && op.out.dims[4] == 6);
  CHECK(op.in[0].index[2].coef[2] == 1 && op.in[0].index[2].coef[6] == 1);
  CHECK_EQ(op.in[0].bounded, 0);
  CHECK_EQ(op.in[1].ndim, 5);
}

TEST(t2d_description_gathers_through_a_divided_index) {
  heron__op op;
  heron_error err = {0};
  /* H=5, W=6, stride 2, pad 1, dilation 2, output_padding 1:
   * HO = 4*2 - 2 + 4 + 1 + 1 = 12, WO = 5*2 - 2 + 4 + 1 + 1 = 14. */
  CHECK_OK(heron__op_build("t2d", (int64_t[]){2, 5, 6, 3, 4, 3, 3, 2, 1, 2, 1},
                           11, HERON__FP32, &op, &err),
           &err);
  static const char *const names[] = {"n", "co", "oh", "ow", "ci", "kh", "kw"};
  CHECK_EQ(op.naxes, 7);
  for (int a = 0; a < 7; a++)
    CHECK(!strcmp(op.axes[a].name, names[a]));
  CHECK(op.out.dims[2] == 12 && op.out.dims[3] == 14);
  const heron__tensor *d = &op.in[0];
  CHECK(d->bounded == 1);
  CHECK(d->index[2].coef[2] == 1 && d->index[2].coef[5] == -2 &&
        d->index[2].offset == 1 && d->index[2].div == 2);
  CHECK(d->index[3].coef[3] == 1 && d->index[3].coef[6] == -2 &&
        d->index[3].offset == 1 && d->index[3].div == 2);
  /* The weight is [CI, CO, KH, KW]. */
  CHECK(op.in[1].dims[0] == 3 && op.in[1].dims[1] == 4);
  CHECK(op.in[1].index[0].coef[4] == 1 && op.in[1].index[1].coef[1] == 1);
  /* Stride 1 needs no division; a 1x1 kernel without padding stays in
   * range and needs no bounds either. */
  CHECK_OK(heron__op_build("t2d", (int64_t[]){1, 5, 5, 2, 3, 1, 1}, 7,
                           HERON__FP32, &op, &err),
           &err);
  CHECK(op.in[0].index[2].div <= 1 && op.in[0].bounded == 0);
}

TEST(scan_description_is_a_gemm_with_a_constant_upper_triangle) {
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("scan", (int64_t[]){16, 512, 128}, 3, HERON__FP32,
                           &op, &err),
           &err);
  CHECK_EQ(op.naxes, 3);
  CHECK(!strcmp(op.axes[0].name, "m") && op.axes[0].extent == 16);
  CHECK(!strcmp(op.axes[1].name, "n") && op.axes[1].extent == 512);
  CHECK(!strcmp(op.axes[2].name, "k") && op.axes[2].kind == HERON__REDUCE &&
        op.axes[2].extent == 128);
  CHECK(op.in[0].dims[0] == 16 && op.in[0].dims[1] == 128 &&
        op.in[0].fill == HERON__FILL_RANDOM);
  CHECK(op.in[1].dims[0] == 128 && op.in[1].dims[1] == 512 &&
        op.in[1].fill == HERON__FILL_UPPER);
  CHECK(op.in[1].index[0].coef[2] == 1 && op.in[1].index[1].coef[1] == 1);
  CHECK(op.out.dims[0] == 16 && op.out.dims[1] == 512);
  CHECK_STR_CONTAINS(heron_op_summary("scan"), "prefix sum");
}
