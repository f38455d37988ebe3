/* tests/cudnn_graph/test_cudnn_graph.c - bench_cuda's cuDNN graph API
 * baseline (bench/cudnn_graph.c) where no GPU is needed: the NCHW geometry
 * of each convolution op in cuDNN's terms, and the tensor, convolution and
 * operation descriptors that cuDNN's backend finalizes (or refuses, with
 * the one-line report) without a device. */
#include "test.h"

#include "bench/cudnn_graph.h"

/* Reports a failure and marks the test failed, without returning (for
 * helpers that return a value). */
#define NOTE_FAIL(...)                                                         \
  do {                                                                         \
    fprintf(stderr, __VA_ARGS__);                                              \
    fputc('\n', stderr);                                                       \
    heron_test_failed = 1;                                                     \
  } while (0)

static void expect_dims(const char *what, const int64_t *got,
                        const int64_t *want, int n) {
  for (int i = 0; i < n; i++)
    if (got[i] != want[i])
      NOTE_FAIL("%s[%d] = %lld, want %lld", what, i, (long long)got[i],
                (long long)want[i]);
}

/* in/k/out as D, H, W. */
static cudnn_graph_conv geometry(const char *op, int64_t n, int64_t ci,
                                 int64_t co, int64_t d, int64_t h, int64_t w,
                                 int64_t kd, int64_t kh, int64_t kw, int64_t od,
                                 int64_t oh, int64_t ow, int64_t st,
                                 int64_t pad, int64_t dil) {
  cudnn_graph_conv g;
  memset(&g, 0x5a, sizeof g);
  int64_t in[3] = {d, h, w}, k[3] = {kd, kh, kw}, out[3] = {od, oh, ow};
  if (!cudnn_graph_conv_init(&g, op, n, ci, co, in, k, out, st, pad, dil))
    NOTE_FAIL("%s: cudnn_graph_conv_init refused a valid convolution", op);
  return g;
}

TEST(c2d_is_nchw_packed_with_the_ops_stride_pad_and_dilation) {
  /* ResNet's 3x3: 16x64x56x56 -> 64, stride 1, pad 1, dilation 1;
   * D and KD are not read for a 2-D op. */
  cudnn_graph_conv g =
      geometry("c2d", 16, 64, 32, 99, 56, 56, 99, 3, 3, 99, 56, 56, 1, 1, 1);
  CHECK(g.nd == 4 && g.spatial == 2 && !g.backward_data);
  expect_dims("x", g.x, (int64_t[]){16, 64, 56, 56}, 4);
  expect_dims("w", g.w, (int64_t[]){32, 64, 3, 3}, 4);
  expect_dims("y", g.y, (int64_t[]){16, 32, 56, 56}, 4);
  expect_dims("xs", g.xs, (int64_t[]){64 * 56 * 56, 56 * 56, 56, 1}, 4);
  expect_dims("ws", g.ws, (int64_t[]){64 * 9, 9, 3, 1}, 4);
  expect_dims("ys", g.ys, (int64_t[]){32 * 56 * 56, 56 * 56, 56, 1}, 4);
  expect_dims("pad", g.pad, (int64_t[]){1, 1}, 2);
  expect_dims("stride", g.stride, (int64_t[]){1, 1}, 2);
  expect_dims("dilation", g.dilation, (int64_t[]){1, 1}, 2);
  cudnn_graph_conv d =
      geometry("dil", 2, 8, 8, 0, 20, 20, 0, 3, 3, 0, 18, 18, 1, 1, 2);
  expect_dims("dil dilation", d.dilation, (int64_t[]){2, 2}, 2);
}

TEST(c1d_is_2d_of_height_1_with_nothing_on_the_height) {
  cudnn_graph_conv g =
      geometry("c1d", 16, 892, 512, 0, 7, 512, 0, 7, 3, 0, 7, 255, 2, 1, 2);
  CHECK(g.nd == 4 && g.spatial == 2);
  expect_dims("x", g.x, (int64_t[]){16, 892, 1, 512}, 4);
  expect_dims("w", g.w, (int64_t[]){512, 892, 1, 3}, 4);
  expect_dims("y", g.y, (int64_t[]){16, 512, 1, 255}, 4);
  expect_dims("pad", g.pad, (int64_t[]){0, 1}, 2);
  expect_dims("stride", g.stride, (int64_t[]){1, 2}, 2);
  expect_dims("dilation", g.dilation, (int64_t[]){1, 2}, 2);
  expect_dims("xs", g.xs, (int64_t[]){892 * 512, 512, 512, 1}, 4);
}

TEST(c3d_is_ncdhw) {
  cudnn_graph_conv g =
      geometry("c3d", 2, 4, 6, 8, 10, 12, 3, 3, 3, 8, 10, 12, 1, 1, 1);
  CHECK(g.nd == 5 && g.spatial == 3);
  expect_dims("x", g.x, (int64_t[]){2, 4, 8, 10, 12}, 5);
  expect_dims("w", g.w, (int64_t[]){6, 4, 3, 3, 3}, 5);
  expect_dims("y", g.y, (int64_t[]){2, 6, 8, 10, 12}, 5);
  expect_dims("ws", g.ws, (int64_t[]){4 * 27, 27, 9, 3, 1}, 5);
  expect_dims("pad", g.pad, (int64_t[]){1, 1, 1}, 3);
}

TEST(t2d_is_backward_data_of_the_convolution_it_transposes) {
  /* The op maps ci = 64 channels of 28x28 to co = 32 of 56x56 (stride 2):
   * the forward convolution it transposes maps 32 channels to 64, so the
   * filter is K = 64 x C = 32. */
  cudnn_graph_conv g =
      geometry("t2d", 16, 64, 32, 0, 28, 28, 0, 4, 4, 0, 56, 56, 2, 1, 1);
  CHECK(g.backward_data && g.nd == 4);
  expect_dims("x (dy)", g.x, (int64_t[]){16, 64, 28, 28}, 4);
  expect_dims("w", g.w, (int64_t[]){64, 32, 4, 4}, 4);
  expect_dims("y (dx)", g.y, (int64_t[]){16, 32, 56, 56}, 4);
  expect_dims("stride", g.stride, (int64_t[]){2, 2}, 2);
}

TEST(other_ops_and_bad_dimensions_are_refused) {
  cudnn_graph_conv g;
  memset(&g, 0, sizeof g);
  int64_t in[3] = {1, 8, 8}, k[3] = {1, 3, 3}, out[3] = {1, 8, 8},
          zero[3] = {1, 0, 8};
  CHECK(!cudnn_graph_conv_init(&g, "gemm", 1, 4, 4, in, k, out, 1, 1, 1));
  CHECK(!cudnn_graph_conv_init(&g, "c2d", 0, 4, 4, in, k, out, 1, 1, 1));
  CHECK(!cudnn_graph_conv_init(&g, "c2d", 1, 4, 4, in, k, zero, 1, 1, 1));
  CHECK(!cudnn_graph_conv_init(&g, "c2d", 1, 4, 4, in, k, out, 1, -1, 1));
  CHECK(g.nd == 0); /* untouched */
  CHECK(cudnn_graph_conv_init(&g, "c2d", 1, 4, 4, in, k, out, 1, 1, 1));
}

/* cudnn_graph_op on g: 1 when every descriptor finalized; err holds the
 * report otherwise. */
static int build_op(const cudnn_graph_conv *g, char *err, size_t cap) {
  cudnn_graph cg;
  err[0] = 0;
  int ok = cudnn_graph_op(&cg, g, err, cap);
  cudnn_graph_close(&cg);
  return ok;
}

TEST(the_operation_descriptors_finalize_for_every_op) {
  const cudnn_graph_conv gs[] = {
      geometry("c2d", 16, 64, 64, 0, 56, 56, 0, 3, 3, 0, 56, 56, 1, 1, 1),
      geometry("dil", 16, 64, 64, 0, 56, 56, 0, 3, 3, 0, 54, 54, 1, 1, 2),
      geometry("c1d", 16, 892, 512, 0, 0, 512, 0, 0, 3, 0, 0, 512, 1, 1, 1),
      geometry("c3d", 16, 64, 64, 8, 56, 56, 3, 3, 3, 8, 56, 56, 1, 1, 1),
      geometry("t2d", 16, 64, 32, 0, 28, 28, 0, 4, 4, 0, 56, 56, 2, 1, 1)};
  char err[512];
  for (size_t i = 0; i < sizeof gs / sizeof *gs; i++)
    if (!build_op(&gs[i], err, sizeof err))
      NOTE_FAIL("convolution %zu: %s", i, err);
}

TEST(an_output_of_the_wrong_size_is_refused_with_the_one_line_report) {
  /* 56x56 with a 3x3 kernel, pad 1, stride 1 gives 56x56; say 55. */
  cudnn_graph_conv g =
      geometry("c2d", 1, 8, 8, 0, 56, 56, 0, 3, 3, 0, 55, 56, 1, 1, 1);
  char err[512];
  CHECK_MSG(!build_op(&g, err, sizeof err),
            "cuDNN finalized a forward convolution with a 55-row output");
  CHECK_MSG(!strncmp(err, "cuDNN graph API: cudnnBackendFinalize(", 38) &&
                strstr(err, " failed: "),
            "the report is '%s'", err);
}
