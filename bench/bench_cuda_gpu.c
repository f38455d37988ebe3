/* bench/bench_cuda_gpu.c - the GPU side of bench_cuda: the driver and
 * the libraries' handles, the calls of each side (ours, cuBLAS, cuDNN's
 * legacy and graph APIs) and their timing, the libraries' setup for an op,
 * and what of it can be checked without a GPU (--dry-run). */
#include <stdlib.h>
#include <string.h>

#include "bench_cuda.h"

/* ---- The GPU ------------------------------------------------------------- */

heron__cuda_driver drv;
cudnnHandle_t dnn;
heron__cu_deviceptr workspace;
const char *row_error;

static heron__cu_event ev0, ev1;
static cublasHandle_t blas;

int cu_ok(heron__cu_result e, const char *call) {
  if (e == 0)
    return 1;
  char text[200];
  row_error = cli_printf("%s: %s", call,
                         heron__cuda_error_text(&drv, e, text, sizeof text));
  return 0;
}
static int blas_ok(cublasStatus_t s, const char *call) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return 1;
  row_error = cli_printf("%s: %s", call, cublasGetStatusString(s));
  return 0;
}

int dnn_ok(cudnnStatus_t s, const char *call) {
  if (s == CUDNN_STATUS_SUCCESS)
    return 1;
  row_error = cli_printf("%s: %s", call, cudnnGetErrorString(s));
  return 0;
}
void gpu_open(void) {
  heron_error err = {0};
  if (heron__cuda_driver_open(&drv, &err) != HERON_OK)
    cli_die(CLI_EXIT_FAILURE, HERON_ENOTFOUND, &err, "needs an NVIDIA GPU");
  heron__cu_device dev;
  heron__cu_context ctx;
  if (!CU(drv.Init(0)) || !CU(drv.DeviceGet(&dev, 0)) ||
      !CU(drv.DevicePrimaryCtxRetain(&ctx, dev)) ||
      !CU(drv.CtxSetCurrent(ctx)) || !CU(drv.EventCreate(&ev0, 0)) ||
      !CU(drv.EventCreate(&ev1, 0)) ||
      !CU(drv.MemAlloc(&workspace, WORKSPACE_BYTES))) {
    fprintf(stderr, "%s: %s\n", cli_prog(), row_error);
    exit(CLI_EXIT_FAILURE);
  }
  if (!blas_ok(cublasCreate(&blas), "cublasCreate") ||
      !DNN(cudnnCreate(&dnn))) {
    fprintf(stderr, "%s: %s\n", cli_prog(), row_error);
    exit(CLI_EXIT_FAILURE);
  }
}

int call_ours(side *s) {
  const heron__cuda_launch *l = &s->launch;
  return CU(drv.LaunchKernel(s->fn, (unsigned)l->grid[0], (unsigned)l->grid[1],
                             (unsigned)l->grid[2], (unsigned)l->block[0],
                             (unsigned)l->block[1], (unsigned)l->block[2],
                             (unsigned)l->smem_bytes, NULL, s->params, NULL));
}

/* Row-major out[m,n] = A[m,k] B[k,n] as cuBLAS's column-major
 * out^T = B^T A^T, batched with strides. */
int call_lib(side *s) {
  const float one = 1.0f, zero = 0.0f;
  if (s->kind == LIB_GEMM)
    return blas_ok(
        cublasGemmStridedBatchedEx(
            blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)s->n, (int)s->m, (int)s->k,
            &one, (const void *)(uintptr_t)s->b, CUDA_R_16F, (int)s->ldb, s->sb,
            (const void *)(uintptr_t)s->a, CUDA_R_16F, (int)s->lda, s->sa,
            &zero, (void *)(uintptr_t)s->c, CUDA_R_16F, (int)s->ldc, s->sc,
            (int)s->batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
  if (s->kind == LIB_CONV)
    return DNN(cudnnConvolutionForward(
        dnn, &one, s->xd, (const void *)(uintptr_t)s->a, s->wd,
        (const void *)(uintptr_t)s->b, s->cd,
        (cudnnConvolutionFwdAlgo_t)s->algo, (void *)(uintptr_t)workspace, s->ws,
        &zero, s->yd, (void *)(uintptr_t)s->c));
  return DNN(cudnnConvolutionBackwardData(
      dnn, &one, s->wd, (const void *)(uintptr_t)s->b, s->xd,
      (const void *)(uintptr_t)s->a, s->cd,
      (cudnnConvolutionBwdDataAlgo_t)s->algo, (void *)(uintptr_t)workspace,
      s->ws, &zero, s->yd, (void *)(uintptr_t)s->c));
}

/* cuDNN's graph API: the plan of s (its variant pack holds the buffers). */
int call_graph(side *s) {
  char err[512];
  if (cudnn_graph_plan_run(s->plan, dnn, err, sizeof err))
    return 1;
  row_error = cli_printf("%s", err);
  return 0;
}

/* Seconds of `number` calls of side s between two events, or -1 on an
 * error (a cli_runner's clock). */
double timed(void *self, long long number) {
  side *s = self;
  if (!CU(drv.EventRecord(ev0, NULL)))
    return -1;
  for (long long i = 0; i < number; i++)
    if (!s->call(s))
      return -1;
  float ms = 0;
  if (!CU(drv.EventRecord(ev1, NULL)) || !CU(drv.EventSynchronize(ev1)) ||
      !CU(drv.EventElapsedTime(&ms, ev0, ev1)))
    return -1;
  return ms / 1e3;
}

/* The median seconds per call (see the top of bench_cuda.c, and
 * tools/timing.h), -1 on an error. */
double time_side(side *s, int repeat, double min_ms) {
  cli_runner r = {.timed = timed, .self = s};
  return cli_time_runners(&r, 1, repeat, min_ms / 1e3, 1) ? -1 : r.seconds;
}

/* ---- The library side of each op ----------------------------------------- */

/* The shape value named `name` (an op dimension), -1 when absent. */
static long long dim(const heron__op *op, const char *name) {
  const char *const *names;
  int n;
  heron_error err = {0};
  if (heron_op_dims(op->name, &names, &n, &err) != HERON_OK)
    return -1;
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], name))
      return (long long)op->shape[i];
  return -1;
}

int set_gemm(side *s, const heron__op *op) {
  const char *o = op->name;
  s->kind = LIB_GEMM;
  s->batch = !strcmp(o, "bmm") ? dim(op, "B") : 1;
  s->m = dim(op, "M");
  s->k = dim(op, "K");
  s->n = !strcmp(o, "gemv") ? 1 : dim(op, "N");
  s->lda = s->k;
  s->ldb = s->n;
  s->ldc = s->n;
  s->sa = s->m * s->k;
  s->sb = s->k * s->n;
  s->sc = s->m * s->n;
  return 1;
}

/* The geometry of a convolution op (cudnn_graph_conv_init): x the data, w
 * the weight, y the output, all NCHW (c1d as a 2-D convolution of height
 * 1, c3d NCDHW).  For t2d x is the incoming gradient (the op's data) and y
 * the data gradient (the op's output) of the forward convolution it
 * transposes.  The output's extents are the op's own: its out tensor. */
static int conv_geometry(cudnn_graph_conv *g, const heron__op *op) {
  const char *o = op->name;
  int nsp = !strcmp(o, "c3d") ? 3 : !strcmp(o, "c1d") ? 1 : 2;
  const char *in_axes[3] = {"D", "H", "W"}, *k_axes[3] = {"KD", "KH", "KW"};
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, outd[3] = {1, 1, 1};
  for (int a = 3 - nsp; a < 3; a++) {
    in[a] = dim(op, in_axes[a]);
    k[a] = dim(op, k_axes[a]);
  }
  const heron__tensor *out = &op->out;
  for (int i = 0; i < nsp && i < out->ndim; i++)
    outd[2 - i] = out->dims[out->ndim - 1 - i];
  if (cudnn_graph_conv_init(g, o, dim(op, "N"), dim(op, "CI"), dim(op, "CO"),
                            in, k, outd, dim(op, "stride"), dim(op, "pad"),
                            dim(op, "dilation")))
    return 1;
  row_error = cli_printf("no cuDNN convolution for %s", o);
  return 0;
}

/* Narrows a cudnn_graph_conv array to the legacy API's int. */
static void to_int(int *dst, const int64_t *src, int n) {
  for (int i = 0; i < n; i++)
    dst[i] = (int)src[i];
}

/* The legacy API's descriptors of the convolution (conv_geometry). */
int set_conv(side *s, const heron__op *op) {
  if (!conv_geometry(&s->geo, op))
    return 0;
  const cudnn_graph_conv *g = &s->geo;
  int t2d = g->backward_data, sp = g->spatial, nd = g->nd;
  int xd[5], wd[5], yd[5], xs[5], ys[5], pads[3], strides[3], dils[3];
  to_int(xd, g->x, nd);
  to_int(wd, g->w, nd);
  to_int(yd, g->y, nd);
  to_int(xs, g->xs, nd);
  to_int(ys, g->ys, nd);
  to_int(pads, g->pad, sp);
  to_int(strides, g->stride, sp);
  to_int(dils, g->dilation, sp);
  s->kind = t2d ? LIB_CONV_BWD_DATA : LIB_CONV;
  return DNN(cudnnCreateTensorDescriptor(&s->xd)) &&
         DNN(cudnnCreateTensorDescriptor(&s->yd)) &&
         DNN(cudnnCreateFilterDescriptor(&s->wd)) &&
         DNN(cudnnCreateConvolutionDescriptor(&s->cd)) &&
         DNN(cudnnSetTensorNdDescriptor(s->xd, CUDNN_DATA_HALF, nd, xd, xs)) &&
         DNN(cudnnSetTensorNdDescriptor(s->yd, CUDNN_DATA_HALF, nd, yd, ys)) &&
         DNN(cudnnSetFilterNdDescriptor(s->wd, CUDNN_DATA_HALF,
                                        CUDNN_TENSOR_NCHW, nd, wd)) &&
         DNN(cudnnSetConvolutionNdDescriptor(s->cd, sp, pads, strides, dils,
                                             CUDNN_CROSS_CORRELATION,
                                             CUDNN_DATA_FLOAT)) &&
         DNN(cudnnSetConvolutionMathType(s->cd, CUDNN_TENSOR_OP_MATH));
}

/* Takes the first (fastest) algorithm of a cuDNN Find result that ran:
 * the forward and backward-data results are different types with the same
 * members. */
#define TAKE_FASTEST(s, perf, got)                                             \
  for (int i_ = 0; i_ < (got); i_++)                                           \
    if ((perf)[i_].status == CUDNN_STATUS_SUCCESS) {                           \
      (s)->algo = (int)(perf)[i_].algo;                                        \
      (s)->ws = (perf)[i_].memory;                                             \
      return 1;                                                                \
    }

/* The fastest algorithm cuDNN measures on these buffers. */
int pick_algo(side *s) {
  int got = 0;
  void *x = (void *)(uintptr_t)s->a, *w = (void *)(uintptr_t)s->b,
       *y = (void *)(uintptr_t)s->c, *ws = (void *)(uintptr_t)workspace;
  if (s->kind == LIB_CONV) {
    cudnnConvolutionFwdAlgoPerf_t perf[16];
    if (!DNN(cudnnFindConvolutionForwardAlgorithmEx(dnn, s->xd, x, s->wd, w,
                                                    s->cd, s->yd, y, 16, &got,
                                                    perf, ws, WORKSPACE_BYTES)))
      return 0;
    TAKE_FASTEST(s, perf, got);
  } else {
    cudnnConvolutionBwdDataAlgoPerf_t perf[16];
    if (!DNN(cudnnFindConvolutionBackwardDataAlgorithmEx(
            dnn, s->wd, w, s->xd, x, s->cd, s->yd, y, 16, &got, perf, ws,
            WORKSPACE_BYTES)))
      return 0;
    TAKE_FASTEST(s, perf, got);
  }
  row_error = "cuDNN found no algorithm for this convolution";
  return 0;
}

/* The library for op, or NULL when there is none to compare with. */
const char *library_of(const heron__op *op) {
  static const char *const blas_ops[] = {"gemm", "bmm", "gemv", "scan"};
  static const char *const dnn_ops[] = {"c1d", "c2d", "dil", "c3d", "t2d"};
  if (op->epilogue)
    return NULL;
  for (size_t i = 0; i < sizeof blas_ops / sizeof *blas_ops; i++)
    if (!strcmp(op->name, blas_ops[i]))
      return "cuBLAS";
  for (size_t i = 0; i < sizeof dnn_ops / sizeof *dnn_ops; i++)
    if (!strcmp(op->name, dnn_ops[i]))
      return "cuDNN legacy";
  return NULL;
}

/* ---- Without a GPU (--dry-run) ------------------------------------------- */

static const char *dims_text(const int64_t *d, int n) {
  const char *t = cli_printf("%lld", (long long)d[0]);
  for (int i = 1; i < n; i++)
    t = cli_printf("%sx%lld", t, (long long)d[i]);
  return t;
}

/* What can be checked of a convolution's two cuDNN baselines without a
 * GPU: the legacy API's descriptors (the forward output extents they give
 * must be the op's; for t2d, the forward convolution of its output must
 * give its input) and the graph API's tensor, convolution and operation
 * descriptors, finalized by cuDNN.  Returns the line to print; *bad is set
 * when a check failed. */
const char *dry_conv(const bench_task *bt, int *bad) {
  side lib = {.call = call_lib};
  const char *t;
  row_error = NULL;
  *bad = 1;
  if (!set_conv(&lib, &bt->t->op)) {
    t = cli_printf("cuDNN legacy API: %s",
                   row_error ? row_error : "no descriptors");
  } else {
    const cudnn_graph_conv *g = &lib.geo;
    int od[5] = {0};
    const int64_t *want = g->backward_data ? g->x : g->y;
    cudnnTensorDescriptor_t in = g->backward_data ? lib.yd : lib.xd;
    int same = DNN(
        cudnnGetConvolutionNdForwardOutputDim(lib.cd, in, lib.wd, g->nd, od));
    for (int i = 0; same && i < g->nd; i++)
      same = od[i] == want[i];
    char err[512];
    cudnn_graph cg;
    memset(&cg, 0, sizeof cg);
    if (row_error)
      t = cli_printf("cuDNN legacy API: %s", row_error);
    else if (!same)
      t = cli_printf(
          "cuDNN legacy API: the forward convolution gives %s, "
          "not %s",
          dims_text((int64_t[]){od[0], od[1], od[2], od[3], od[4]}, g->nd),
          dims_text(want, g->nd));
    else if (!cudnn_graph_op(&cg, g, err, sizeof err))
      t = cli_printf("%s", err);
    else {
      t = cli_printf("cuDNN %s, x %s, w %s, y %s: the legacy descriptors "
                     "agree, the graph operation finalized",
                     g->backward_data ? "backward data" : "forward",
                     dims_text(g->x, g->nd), dims_text(g->w, g->nd),
                     dims_text(g->y, g->nd));
      *bad = 0;
    }
    cudnn_graph_close(&cg);
  }
  if (lib.xd)
    cudnnDestroyTensorDescriptor(lib.xd);
  if (lib.yd)
    cudnnDestroyTensorDescriptor(lib.yd);
  if (lib.wd)
    cudnnDestroyFilterDescriptor(lib.wd);
  if (lib.cd)
    cudnnDestroyConvolutionDescriptor(lib.cd);
  return t;
}
