/* tests/op/op_catalog.c - the operator catalogue, --shape parsing, shape
 * validation in build, FLOP counts and the shape of each description. */
#include "core/op/op.h"
#include "test.h"

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

TEST(catalogue_lists_gemm_bmm_gemv_c2d_in_order) {
  static const char *const want[] = {"gemm", "bmm", "gemv", "c2d"};
  CHECK_EQ(heron_op_count(), 4);
  CHECK_EQ(heron__op_kind_count(), 4);
  for (int i = 0; i < 4; i++) {
    CHECK(!strcmp(heron_op_name(i), want[i]));
    CHECK(heron__op_kind_find(want[i]) == heron__op_kind_at(i));
    CHECK(heron_op_summary(want[i]) && strlen(heron_op_summary(want[i])) > 10);
  }
  CHECK(heron_op_name(4) == NULL);
  CHECK(heron_op_name(-1) == NULL);
  CHECK(heron_op_summary("conv9d") == NULL);
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
  CHECK_STR_CONTAINS(err.text, "gemm, bmm, gemv, c2d");
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
    int64_t shape[10];
  } good[] = {{"gemm", 3, {4, 5, 6}},
              {"bmm", 4, {2, 4, 5, 6}},
              {"gemv", 2, {4, 6}},
              {"c2d", 10, {1, 8, 8, 3, 4, 3, 3, 1, 1, 1}}};
  for (int c = 0; c < 4; c++) {
    const heron__op_kind *k = heron__op_kind_find(good[c].op);
    CHECK(k != NULL);
    for (int d = 0; d < good[c].n; d++) {
      int64_t s[10];
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

TEST(build_rejects_int8_as_unsupported_and_accepts_fp16) {
  int64_t s[3] = {4, 4, 4};
  heron__op op;
  heron_error err = {0};
  CHECK_EQ(heron__op_build("gemm", s, 3, HERON__INT8, &op, &err),
           HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "int8");
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
    int64_t shape[10];
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
