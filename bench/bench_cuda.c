/* bench/bench_cuda.c - the best Tensor Core kernel of each tuned task
 * against the vendor libraries, on the GPU, in one run:
 *
 *   bench_cuda --log runs/tc/logs [--log gemm4096.jsonl ...] [--out FILE]
 *
 * Every log (a file, or a folder of .jsonl / .jsonl.gz files, as heron-bench
 * writes them) is read; its records are grouped by task key
 * ("gemm/1024,1024,1024/fp16/cuda") and the fastest timed ok record of each
 * task is rebuilt: the same config through the same code generator and NVRTC
 * as the tuner used.  On the same inputs (heron__op_fill_inputs, seed 1) the
 * library a user would otherwise call runs beside it:
 *
 *   gemm, bmm, gemv, scan   cuBLAS cublasGemmEx / cublasGemmStridedBatchedEx,
 *                           fp16 in and out, fp32 accumulation
 *                           (CUBLAS_COMPUTE_32F), Tensor Cores on; scan as
 *                           the product with its triangular matrix, the
 *                           op's own definition
 *   c1d, c2d, dil, c3d      cuDNN cudnnConvolutionForward, NCHW / NCDHW
 *                           fp16, fp32 accumulation, Tensor Core math, the
 *                           fastest algorithm cudnnFind...AlgorithmEx
 *                           measures on these very buffers
 *   t2d                     cuDNN cudnnConvolutionBackwardData (a transposed
 *                           convolution is the data gradient of the
 *                           convolution it transposes), same choice
 *
 * The convolutions also run through cuDNN's graph (backend) API, the way
 * frameworks call it (bench/cudnn_graph.c): one operation graph on the same
 * NCHW fp16 tensors with fp32 compute, the engine configs of heuristics
 * mode A each finalized into a plan (those that do not finalize skipped),
 * each plan run a few times on the same buffers and the fastest kept (for
 * at most --graph-seconds per task once one plan ran).  Any failure there
 * prints one line to stderr ("cuDNN graph API: <call> failed: ...") and
 * leaves n/a in the table's graph column; it never fails the row.
 *
 * Each library's output is compared with ours with the op's tolerance
 * (heron__op_check, the library's output in the reference's place); where
 * one differs, ours and each differing one are checked against the op's
 * reference to say which is off.  Then all are timed by CUDA events in the
 * same process, one after the other (ours, the library, cuDNN's graph
 * plan, ours again, the better of our two counting): warm-up, `number`
 * grown until a repeat lasts --min-repeat-ms, --repeat repeats, the median
 * per call.  The table gives microseconds, TFLOP/s and the ratio library
 * time / our time (above 1: ours is faster) for each library.
 *
 * Tasks with a fused epilogue and ops outside the list above are listed
 * without a baseline.  Needs an NVIDIA GPU; without one it says so and exits
 * 1.  The driver is loaded as the tuner loads it (core/targets/cuda/driver.c);
 * cuBLAS and cuDNN share its primary context.
 */
#include <cublas_v2.h>
#include <cudnn.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "cli.h"
#include "core/measure/measure.h"
#include "core/measure/worker.h"
#include "core/record/record.h"
#include "core/targets/cuda/driver.h"
#include "core/targets/replay/replay.h"
#include "core/task/task.h"
#include "core/util/util.h"
#include "cudnn_graph.h"
#include "heron/heron.h"
#include "timing.h"

enum { MAX_LOGS = 256, MAX_TASKS = 64 };
/* cuDNN's algorithm search may use this much workspace. */
#define WORKSPACE_BYTES ((size_t)1 << 30)

/* ---- Options ------------------------------------------------------------- */

enum {
  OPT_LOG = 1,
  OPT_OUT,
  OPT_REPEAT,
  OPT_MIN_REPEAT_MS,
  OPT_HW,
  OPT_DRY_RUN,
  OPT_GRAPH_SECONDS,
  OPT_HELP
};

static const cli_option options[] = {
    {OPT_LOG, "log", "FILE|DIR",
     "a heron-search / heron-bench log, or a folder of them (.jsonl, "
     ".jsonl.gz); repeatable",
     ""},
    {OPT_OUT, "out", "FILE", "also write the table (Markdown) here", "none"},
    {OPT_REPEAT, "repeat", "N", "timed repeats of each side; the median counts",
     "7"},
    {OPT_MIN_REPEAT_MS, "min-repeat-ms", "MS",
     "grow the calls per repeat until a repeat lasts this long", "20"},
    {OPT_HW, "hw", "NAME|FILE",
     "hardware description the tasks are built for (configs/hw/)", "the GPU's"},
    {OPT_DRY_RUN, "dry-run", NULL,
     "find each task's best config and build it with NVRTC, print them and "
     "stop (no GPU needed; give --hw)",
     ""},
    {OPT_GRAPH_SECONDS, "graph-seconds", "S",
     "cuDNN graph API: stop trying further engine configs of a task after "
     "this long, once one plan ran",
     "10"},
    {OPT_HELP, "help", NULL, "print this help and exit", ""},
    {0, NULL, NULL, NULL, ""}};

static void usage(FILE *out) {
  fprintf(out,
          "usage: bench_cuda --log FILE|DIR [--log ...] [options]\n\n"
          "The fastest timed kernel of each task in the logs, rebuilt and "
          "run on the GPU\nagainst cuBLAS (gemm, bmm, gemv, scan) or cuDNN "
          "(c1d, c2d, dil, c3d, t2d; its legacy API and its graph API)\non the "
          "same inputs: outputs compared, all timed in the same run.\n\n"
          "options:\n");
  cli_print_options(out, options);
  fprintf(out, "\nWhere a library's output differs from ours beyond the "
               "op's tolerance, both are\nchecked against the op's reference "
               "(plain loops in double) and the table says\nwhich is off.  A "
               "failure of cuDNN's graph API leaves n/a in its column and\n"
               "fails nothing.\n\nExit status: "
               "0 every task ran and our kernels were right; 1 no GPU, a "
               "task\nfailed, or one of our kernels was off the reference; 2 "
               "a usage error.\n");
}

/* ---- The tasks of the logs ----------------------------------------------- */

typedef struct bench_task {
  char key[256];
  const char *logs[MAX_LOGS]; /* the files holding this task */
  int nlogs;
  heron_task *t;
  int64_t *cfg; /* the best config, NULL when none was timed */
  double tuned_seconds;
  int trials;
  heron__nvrtc_result build;
  const char *error; /* why the row has no result */
  /* results */
  double ours_s, lib_s, max_err;
  const char *lib_name;
  int compared, match;
  /* When the outputs differ: each against the op's reference (computed
   * only then: judged is 1). */
  int judged, ours_ok, lib_ok;
  double ours_err, lib_err;
  /* cuDNN's graph API (convolutions): its time, the comparison with ours
   * and, when judged and they differ, against the reference; graph_error
   * says why there is no time (n/a). */
  int graph_tried; /* a convolution with a cuDNN baseline */
  double graph_s, graph_max_err, graph_ref_err;
  int graph_compared, graph_match, graph_ref_ok;
  const char *graph_error;
  int graph_cfg, graph_ncfg, graph_finalized; /* the plan kept, of how many */
  long long graph_offered;
} bench_task;

static bench_task tasks[MAX_TASKS];
static int ntasks;

static void add_log(const char *path) {
  char key[256];
  heron_error err = {0};
  if (heron__replay_first_key(path, key, sizeof key, &err) != HERON_OK) {
    if (err.code != HERON_EPARSE || !strstr(err.text, "holds no record"))
      fprintf(stderr, "%s: %s (left out)\n", cli_prog(), err.text);
    return;
  }
  bench_task *bt = NULL;
  for (int i = 0; i < ntasks && !bt; i++)
    if (!strcmp(tasks[i].key, key))
      bt = &tasks[i];
  if (!bt) {
    if (ntasks == MAX_TASKS)
      cli_usage("more than %d tasks in the logs", MAX_TASKS);
    bt = &tasks[ntasks++];
    snprintf(bt->key, sizeof bt->key, "%s", key);
  }
  if (bt->nlogs == MAX_LOGS)
    cli_usage("more than %d logs of task %s", MAX_LOGS, key);
  bt->logs[bt->nlogs++] = cli_strdup(path);
}

static int is_log_name(const char *n) {
  size_t len = strlen(n);
  return (len > 6 && !strcmp(n + len - 6, ".jsonl")) ||
         (len > 9 && !strcmp(n + len - 9, ".jsonl.gz"));
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static void add_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0)
    cli_usage("--log %s: no such file or folder", path);
  if (!S_ISDIR(st.st_mode)) {
    add_log(path);
    return;
  }
  struct dirent **ents;
  int n = scandir(path, &ents, NULL, by_name);
  if (n < 0)
    cli_usage("--log %s: cannot read the folder", path);
  for (int i = 0; i < n; i++) {
    if (is_log_name(ents[i]->d_name))
      add_log(cli_printf("%s/%s", path, ents[i]->d_name));
    free(ents[i]);
  }
  free(ents);
}

/* Builds the task of bt->key ("op/shape/dtype/target[/epilogue]"). */
static void make_task(bench_task *bt, const char *hw) {
  char op[64], shape[160], dtype[16], target[16], epi[64] = "";
  int n = sscanf(bt->key, "%63[^/]/%159[^/]/%15[^/]/%15[^/]/%63s", op, shape,
                 dtype, target, epi);
  if (n < 4 || strcmp(target, "cuda")) {
    bt->error = "not a cuda task";
    return;
  }
  int64_t dims[16];
  int nd = 0;
  heron_error err = {0};
  if (heron_parse_shape(op, shape, dims, 16, &nd, &err) != HERON_OK) {
    bt->error = cli_printf("%s", err.text);
    return;
  }
  heron_task_spec spec = {.op = op,
                          .shape = dims,
                          .nshape = nd,
                          .dtype = dtype,
                          .target = "cuda",
                          .hw = hw,
                          .epilogue = epi[0] ? epi : NULL};
  if (heron_task_create(&spec, &bt->t, &err) != HERON_OK) {
    bt->error = cli_printf("%s", err.text);
    return;
  }
}

/* Reads every log of the task (with the tuner's own line parser) and keeps
 * its fastest timed ok config that is valid in this task's space. */
static void find_best(bench_task *bt) {
  const heron_space *sp = heron_task_space(bt->t);
  int nv = heron_space_nvars(sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  char *line = NULL;
  size_t cap = 0;
  for (int i = 0; i < bt->nlogs; i++) {
    gzFile f = gzopen(bt->logs[i], "rb");
    int term;
    for (int lineno = 1; f && heron__log_gets(f, &line, &cap, &term) > 0;
         lineno++) {
      json_t *o = json_loads(line, 0, NULL);
      heron_measurement m;
      heron_error err = {0};
      int complete = 0;
      if (o && heron__log_parse(o, sp, bt->key, &rng, &m, cfg, &complete, NULL,
                                lineno, bt->logs[i], &err) == HERON_OK) {
        bt->trials++;
        if (complete && m.status == HERON_MEAS_OK && m.seconds > 0 &&
            !(heron__log_flags(o, &m) & HERON__REC_UNTIMED) &&
            (!bt->cfg || m.seconds < bt->tuned_seconds)) {
          if (!bt->cfg)
            bt->cfg = malloc((size_t)nv * sizeof *bt->cfg);
          memcpy(bt->cfg, cfg, (size_t)nv * sizeof *cfg);
          bt->tuned_seconds = m.seconds;
        }
      }
      json_decref(o);
    }
    if (f)
      gzclose(f);
  }
  free(line);
  free(cfg);
  if (!bt->cfg)
    bt->error = "no timed ok record in its logs";
}

static void build_best(bench_task *bt, int sm) {
  char *src = NULL;
  heron_error err = {0};
  if (heron_task_source(bt->t, bt->cfg, &src, &err) != HERON_OK) {
    bt->error = cli_printf("source: %s", err.text);
    return;
  }
  if (heron__nvrtc_compile(src, sm, &bt->build, &err) != HERON_OK)
    bt->error = cli_printf("NVRTC: %s", err.text);
  heron_free(src);
}

/* ---- The GPU ------------------------------------------------------------- */

static heron__cuda_driver drv;
static heron__cu_event ev0, ev1;
static cublasHandle_t blas;
static cudnnHandle_t dnn;
static heron__cu_deviceptr workspace;

/* A failed call ends the row with its text (set by the check macros). */
static const char *row_error;

static int cu_ok(heron__cu_result e, const char *call) {
  if (e == 0)
    return 1;
  char text[200];
  row_error = cli_printf("%s: %s", call,
                         heron__cuda_error_text(&drv, e, text, sizeof text));
  return 0;
}
#define CU(call) cu_ok((call), #call)

static int blas_ok(cublasStatus_t s, const char *call) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return 1;
  row_error = cli_printf("%s: %s", call, cublasGetStatusString(s));
  return 0;
}

static int dnn_ok(cudnnStatus_t s, const char *call) {
  if (s == CUDNN_STATUS_SUCCESS)
    return 1;
  row_error = cli_printf("%s: %s", call, cudnnGetErrorString(s));
  return 0;
}
#define DNN(call) dnn_ok((call), #call)

static void gpu_open(void) {
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

/* One side of the comparison: a call issued on the default stream. */
typedef struct side {
  int (*call)(struct side *s); /* 1 when issued */
  /* ours */
  heron__cu_function fn;
  heron__cuda_launch launch;
  void *params[4];
  heron__cu_deviceptr args[4];
  /* the library */
  int kind; /* LIB_GEMM, LIB_CONV, LIB_CONV_BWD_DATA */
  long long m, n, k, batch, lda, ldb, ldc, sa, sb, sc;
  heron__cu_deviceptr a, b, c;
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  int algo;
  size_t ws;
  cudnn_graph_conv geo; /* the convolution, for both cuDNN APIs */
  /* cuDNN's graph API: the plan being timed */
  const cudnn_graph_plan *plan;
} side;

enum { LIB_GEMM = 1, LIB_CONV, LIB_CONV_BWD_DATA };

static int call_ours(side *s) {
  const heron__cuda_launch *l = &s->launch;
  return CU(drv.LaunchKernel(s->fn, (unsigned)l->grid[0], (unsigned)l->grid[1],
                             (unsigned)l->grid[2], (unsigned)l->block[0],
                             (unsigned)l->block[1], (unsigned)l->block[2],
                             (unsigned)l->smem_bytes, NULL, s->params, NULL));
}

/* Row-major out[m,n] = A[m,k] B[k,n] as cuBLAS's column-major
 * out^T = B^T A^T, batched with strides. */
static int call_lib(side *s) {
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
static int call_graph(side *s) {
  char err[512];
  if (cudnn_graph_plan_run(s->plan, dnn, err, sizeof err))
    return 1;
  row_error = cli_printf("%s", err);
  return 0;
}

/* Seconds of `number` calls of side s between two events, or -1 on an
 * error (a cli_runner's clock). */
static double timed(void *self, long long number) {
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

/* The median seconds per call (see the top of the file, and
 * tools/timing.h), -1 on an error. */
static double time_side(side *s, int repeat, double min_ms) {
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

static int set_gemm(side *s, const heron__op *op) {
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
static int set_conv(side *s, const heron__op *op) {
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
static int pick_algo(side *s) {
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
static const char *library_of(const heron__op *op) {
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

/* ---- cuDNN's graph API --------------------------------------------------- */

/* Plans every engine config of heuristics mode A for the convolution geo
 * on the buffers x, w, y, runs each a few times (one warm-up call, then the
 * best of three timings of three calls) and keeps the fastest in *best.
 * After budget_s seconds no further config is tried once one plan ran
 * (after twice that, none at all).  Returns 1, or 0 with the one-line
 * reason in bt->graph_error; a config that does not finalize or fails to
 * run is skipped. */
static int graph_pick(bench_task *bt, cudnn_graph *cg, cudnn_graph_plan *best,
                      const cudnn_graph_conv *geo, heron__cu_deviceptr x,
                      heron__cu_deviceptr w, heron__cu_deviceptr y,
                      double budget_s) {
  char err[512] = "", last[512] = "";
  memset(best, 0, sizeof *best);
  if (!cudnn_graph_open(cg, dnn, geo, err, sizeof err)) {
    bt->graph_error = cli_printf("%s", err);
    return 0;
  }
  bt->graph_offered = cg->offered;
  bt->graph_ncfg = cg->ncfg;
  double start = cli_now(), best_s = -1;
  int have = 0;
  for (int i = 0; i < cg->ncfg; i++) {
    double spent = cli_now() - start;
    if ((have && spent > budget_s) || spent > 2 * budget_s)
      break;
    cudnn_graph_plan p;
    if (!cudnn_graph_plan_make(&p, cg, dnn, i, (void *)(uintptr_t)x,
                               (void *)(uintptr_t)w, (void *)(uintptr_t)y,
                               (void *)(uintptr_t)workspace, WORKSPACE_BYTES,
                               last, sizeof last))
      continue;
    bt->graph_finalized++;
    side s = {.call = call_graph, .plan = &p};
    const char *saved = row_error;
    row_error = NULL;
    double t = timed(&s, 1) < 0 ? -1 : 1e30;
    for (int r = 0; t > 0 && r < 3; r++) {
      double u = timed(&s, 3);
      t = u < 0 ? -1 : u / 3 < t ? u / 3 : t;
    }
    if (t < 0) {
      snprintf(last, sizeof last, "%s",
               row_error ? row_error : "a plan failed to run");
      row_error = saved;
      cudnn_graph_plan_free(&p);
      continue;
    }
    row_error = saved;
    if (!have || t < best_s) {
      if (have)
        cudnn_graph_plan_free(best);
      *best = p;
      best_s = t;
      have = 1;
    } else {
      cudnn_graph_plan_free(&p);
    }
  }
  if (!have) {
    /* The last failure's text without its "cuDNN graph API: " head. */
    const char *why = last;
    if (!strncmp(why, "cuDNN graph API: ", 17))
      why += 17;
    bt->graph_error = cli_printf(
        "cuDNN graph API: no engine config ran (%lld offered by heuristics "
        "mode A, %d finalized); the last failure: %s",
        (long long)cg->offered, bt->graph_finalized,
        why[0] ? why : "none tried");
    return 0;
  }
  bt->graph_cfg = best->index;
  return 1;
}

/* The graph baseline of a convolution row: picks the plan and times it on
 * the same buffers (the output in out).  Returns 1 when graph_s is set;
 * on any failure prints the one line to stderr, sets graph_error and
 * leaves the row's own state (row_error) as it was. */
static int run_graph(bench_task *bt, const cudnn_graph_conv *geo,
                     heron__cu_deviceptr x, heron__cu_deviceptr w,
                     heron__cu_deviceptr out, int repeat, double min_ms,
                     double budget_s) {
  cudnn_graph cg;
  cudnn_graph_plan best;
  memset(&cg, 0, sizeof cg);
  memset(&best, 0, sizeof best);
  bt->graph_tried = 1;
  const char *saved = row_error;
  row_error = NULL;
  int ok = graph_pick(bt, &cg, &best, geo, x, w, out, budget_s);
  if (ok) {
    side s = {.call = call_graph, .plan = &best};
    bt->graph_s = time_side(&s, repeat, min_ms);
    ok = bt->graph_s > 0;
    if (!ok) {
      bt->graph_s = 0;
      const char *why = row_error ? row_error : "timing the plan failed";
      bt->graph_error = strncmp(why, "cuDNN graph API: ", 17)
                            ? cli_printf("cuDNN graph API: %s", why)
                            : why;
    }
  }
  if (ok)
    fprintf(stderr,
            "  cuDNN graph API: engine config %d of %d kept (%d finalized, "
            "%lld offered by heuristics mode A)\n",
            bt->graph_cfg, bt->graph_ncfg, bt->graph_finalized,
            bt->graph_offered);
  else
    fprintf(stderr, "%s: %s: %s\n", cli_prog(), bt->key, bt->graph_error);
  cudnn_graph_plan_free(&best);
  cudnn_graph_close(&cg);
  row_error = saved;
  return ok;
}

/* ---- One row ------------------------------------------------------------- */

/* A library and ours disagree: which one is off?  Ours and each library
 * whose output differs from ours (lib_out, graph_out: NULL when it agreed
 * or did not run) against the op's reference (the plain C loops in
 * double, as the tuner checks with; slow for the large convolutions, so
 * computed only here). */
static void judge(bench_task *bt, void *const *host, const void *lib_out,
                  const void *graph_out) {
  const heron__op *op = &bt->t->op;
  void *ref[HERON__MAX_TENSORS + 2] = {0};
  for (int i = 0; i < op->ninputs; i++)
    ref[i] = host[i];
  size_t bytes = heron__buffer_bytes(op, op->ninputs);
  ref[op->ninputs] = malloc(bytes);
  if (!ref[op->ninputs])
    return;
  fprintf(stderr, "  the outputs differ: computing the reference ...\n");
  heron__op_reference_full(op, ref);
  int64_t bad;
  bt->judged = 1;
  bt->ours_ok = heron__op_check(op, host[op->ninputs], ref[op->ninputs],
                                &bt->ours_err, &bad);
  if (lib_out)
    bt->lib_ok =
        heron__op_check(op, lib_out, ref[op->ninputs], &bt->lib_err, &bad);
  if (graph_out)
    bt->graph_ref_ok = heron__op_check(op, graph_out, ref[op->ninputs],
                                       &bt->graph_ref_err, &bad);
  free(ref[op->ninputs]);
}

static void run_task(bench_task *bt, int repeat, double min_ms,
                     double graph_budget_s) {
  const heron__op *op = &bt->t->op;
  bt->lib_name = library_of(op);
  void *host[HERON__MAX_TENSORS + 2] = {0};
  heron_error err = {0};
  if (heron__op_alloc_buffers(op, host, &err) != HERON_OK) {
    bt->error = cli_printf("%s", err.text);
    return;
  }
  heron__op_fill_inputs(op, host, 1);
  heron__cu_deviceptr dev[HERON__MAX_TENSORS + 2] = {0}, lib_out = 0,
                                               graph_out = 0;
  size_t out_bytes = heron__buffer_bytes(op, op->ninputs);
  void *lib_host = malloc(out_bytes), *graph_host = malloc(out_bytes);
  side ours = {.call = call_ours}, lib = {.call = call_lib};
  heron__cu_module mod = NULL;
  row_error = NULL;
  int ok = lib_host != NULL && graph_host != NULL;
  for (int i = 0; ok && i <= op->ninputs; i++) {
    size_t bytes = heron__buffer_bytes(op, i);
    ok = CU(drv.MemAlloc(&dev[i], bytes ? bytes : 1)) &&
         (i == op->ninputs ? CU(drv.MemsetD8(dev[i], 0xff, bytes))
                           : CU(drv.MemcpyHtoD(dev[i], host[i], bytes)));
  }
  ok = ok && CU(drv.MemAlloc(&lib_out, out_bytes)) &&
       CU(drv.MemsetD8(lib_out, 0xff, out_bytes)) &&
       CU(drv.ModuleLoadData(&mod, bt->build.cubin)) &&
       CU(drv.ModuleGetFunction(&ours.fn, mod, bt->build.entry));
  ours.launch = bt->build.launch;
  if (ok && ours.launch.smem_bytes > HERON__CUDA_SMEM_DEFAULT_LIMIT)
    ok = CU(drv.FuncSetAttribute(
        ours.fn, HERON__CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        (int)ours.launch.smem_bytes));
  ours.args[0] = dev[0];
  ours.args[1] = op->ninputs > 1 ? dev[1] : 0;
  ours.args[2] = dev[op->ninputs];
  ours.args[3] = 0;
  for (int i = 0; i < 4; i++)
    ours.params[i] = &ours.args[i];
  if (ok) {
    bt->ours_s = time_side(&ours, repeat, min_ms);
    ok = bt->ours_s > 0;
  }
  if (ok && bt->lib_name) {
    lib.a = dev[0];
    lib.b = op->ninputs > 1 ? dev[1] : 0;
    lib.c = lib_out;
    int is_blas = !strcmp(bt->lib_name, "cuBLAS");
    int lib_ran =
        is_blas ? set_gemm(&lib, op) : (set_conv(&lib, op) && pick_algo(&lib));
    if (lib_ran) {
      bt->lib_s = time_side(&lib, repeat, min_ms);
      lib_ran = bt->lib_s > 0;
    }
    const char *lib_error = lib_ran ? NULL : row_error;
    /* cuDNN's graph API on the same inputs, into its own output buffer;
     * whatever happens there leaves the row as it was. */
    int graph_ran = 0;
    if (!is_blas && lib.geo.nd) {
      const char *saved = row_error;
      if (CU(drv.MemAlloc(&graph_out, out_bytes)) &&
          CU(drv.MemsetD8(graph_out, 0xff, out_bytes)))
        graph_ran = run_graph(bt, &lib.geo, dev[0], lib.b, graph_out, repeat,
                              min_ms, graph_budget_s);
      else {
        bt->graph_tried = 1;
        bt->graph_error =
            cli_printf("cuDNN graph API: no output buffer: %s", row_error);
        fprintf(stderr, "%s: %s: %s\n", cli_prog(), bt->key, bt->graph_error);
      }
      row_error = saved;
    } else if (!is_blas) {
      bt->graph_tried = 1;
      bt->graph_error = "cuDNN graph API: not tried (the convolution's "
                        "geometry failed)";
    }
    /* Ours again after the libraries: the ratio uses the better of the
     * two timings of our side, so neither side profits from going
     * second. */
    double again = time_side(&ours, repeat, min_ms);
    if (again > 0 && again < bt->ours_s)
      bt->ours_s = again;
    void *ours_host = host[op->ninputs];
    ok = again > 0 && CU(drv.CtxSynchronize()) &&
         CU(drv.MemcpyDtoH(ours_host, dev[op->ninputs], out_bytes)) &&
         (!lib_ran || CU(drv.MemcpyDtoH(lib_host, lib_out, out_bytes)));
    if (ok && graph_ran &&
        !CU(drv.MemcpyDtoH(graph_host, graph_out, out_bytes))) {
      ok = 0; /* the context is broken: the row fails */
    }
    if (ok) {
      int64_t bad = -1;
      if (lib_ran) {
        bt->compared = 1;
        bt->match =
            heron__op_check(op, ours_host, lib_host, &bt->max_err, &bad);
      }
      if (graph_ran) {
        bt->graph_compared = 1;
        bt->graph_match = heron__op_check(op, ours_host, graph_host,
                                          &bt->graph_max_err, &bad);
      }
      if ((lib_ran && !bt->match) || (graph_ran && !bt->graph_match))
        judge(bt, host, lib_ran && !bt->match ? lib_host : NULL,
              graph_ran && !bt->graph_match ? graph_host : NULL);
    }
    /* A legacy library that failed fails the row, as before the graph
     * column existed; the row still shows ours and the graph column. */
    if (ok && !lib_ran) {
      ok = 0;
      row_error = lib_error;
    }
  }
  if (!ok)
    bt->error = row_error ? row_error : "out of memory";
  if (lib.kind == LIB_CONV || lib.kind == LIB_CONV_BWD_DATA) {
    cudnnDestroyTensorDescriptor(lib.xd);
    cudnnDestroyTensorDescriptor(lib.yd);
    cudnnDestroyFilterDescriptor(lib.wd);
    cudnnDestroyConvolutionDescriptor(lib.cd);
  }
  if (mod)
    drv.ModuleUnload(mod);
  for (int i = 0; i <= op->ninputs; i++)
    if (dev[i])
      drv.MemFree(dev[i]);
  if (lib_out)
    drv.MemFree(lib_out);
  if (graph_out)
    drv.MemFree(graph_out);
  free(lib_host);
  free(graph_host);
  heron__op_free_buffers(op, host);
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
static const char *dry_conv(const bench_task *bt, int *bad) {
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

/* ---- The table ----------------------------------------------------------- */

/* Whether a check against the reference passed, in the table's words. */
static const char *verdict(int ok, int ours) {
  return ok ? "within tolerance" : ours ? "WRONG" : "outside it";
}

/* The outputs column: each library against ours, and where one differs,
 * against the reference. */
static const char *outputs_text(const bench_task *bt) {
  const char *t;
  if (bt->compared)
    t = cli_printf("%s: %s (max rel. diff %.2g)", bt->lib_name,
                   bt->match ? "match" : "differ", bt->max_err);
  else
    t = cli_printf("%s: %s", bt->lib_name ? bt->lib_name : "none",
                   bt->error ? bt->error : "no baseline for this op");
  if (bt->graph_compared)
    t = cli_printf("%s; cuDNN graph: %s (max rel. diff %.2g)", t,
                   bt->graph_match ? "match" : "differ", bt->graph_max_err);
  else if (bt->graph_tried)
    t = cli_printf("%s; cuDNN graph: n/a (%s)", t,
                   bt->graph_error ? bt->graph_error : "did not run");
  if (bt->judged) {
    t = cli_printf("%s; against the reference: Heron-C %s (%.2g)", t,
                   verdict(bt->ours_ok, 1), bt->ours_err);
    if (bt->compared && !bt->match)
      t = cli_printf("%s, %s %s (%.2g)", t, bt->lib_name,
                     verdict(bt->lib_ok, 0), bt->lib_err);
    if (bt->graph_compared && !bt->graph_match)
      t = cli_printf("%s, cuDNN graph %s (%.2g)", t,
                     verdict(bt->graph_ref_ok, 0), bt->graph_ref_err);
  }
  return t;
}

static void print_table(FILE *f, const char *gpu) {
  fprintf(f, "| task | trials | Heron-C us | TFLOP/s | library | library us "
             "| TFLOP/s | library / Heron-C | cuDNN graph us | TFLOP/s | "
             "graph / Heron-C | outputs |\n");
  fprintf(f, "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (int i = 0; i < ntasks; i++) {
    bench_task *bt = &tasks[i];
    if (bt->error && bt->ours_s <= 0) {
      fprintf(f, "| %s | %d | | | | | | | | | | %s |\n", bt->key, bt->trials,
              bt->error);
      continue;
    }
    double fl = heron_task_flops(bt->t);
    fprintf(f, "| %s | %d | %.2f | %.1f | %s |", bt->key, bt->trials,
            bt->ours_s * 1e6, fl / bt->ours_s / 1e12,
            bt->lib_name ? bt->lib_name : "none");
    if (bt->lib_s > 0)
      fprintf(f, " %.2f | %.1f | %.2f |", bt->lib_s * 1e6,
              fl / bt->lib_s / 1e12, bt->lib_s / bt->ours_s);
    else
      fprintf(f, " | | |");
    if (bt->graph_s > 0)
      fprintf(f, " %.2f | %.1f | %.2f |", bt->graph_s * 1e6,
              fl / bt->graph_s / 1e12, bt->graph_s / bt->ours_s);
    else if (bt->graph_tried)
      fprintf(f, " n/a | | n/a |");
    else
      fprintf(f, " | | |");
    fprintf(f, " %s |\n", outputs_text(bt));
  }
  fprintf(f,
          "\nlibrary: cuBLAS, or cuDNN legacy: cuDNN's legacy API "
          "(cudnnFind...AlgorithmEx's fastest); cuDNN graph: its graph "
          "(backend) API, the fastest engine config of heuristics mode A.\n");
  fprintf(f, "\n%s; cuBLAS %d, cuDNN %zu.\n", gpu, (int)CUBLAS_VERSION,
          cudnnGetVersion());
}

int main(int argc, char **argv) {
  cli_set_prog("bench_cuda");
  const char *out = NULL, *hw = NULL;
  int repeat = 7, nlog = 0, dry = 0;
  double min_ms = 20, graph_s = 10;
  cli_parser p;
  cli_parser_init(&p, options, argc, argv);
  const char *v;
  int id;
  while ((id = cli_next(&p, &v, NULL)) != 0) {
    switch (id) {
    case OPT_LOG:
      add_path(v);
      nlog++;
      break;
    case OPT_OUT:
      out = v;
      break;
    case OPT_REPEAT:
      repeat = (int)cli_int("--repeat", v, 1, 63);
      break;
    case OPT_MIN_REPEAT_MS:
      min_ms = cli_double("--min-repeat-ms", v, 0, 10000);
      break;
    case OPT_HW:
      hw = v;
      break;
    case OPT_DRY_RUN:
      dry = 1;
      break;
    case OPT_GRAPH_SECONDS:
      graph_s = cli_double("--graph-seconds", v, 0, 3600);
      break;
    case OPT_HELP:
      usage(stdout);
      return CLI_EXIT_OK;
    }
  }
  if (!nlog)
    cli_usage("no --log given (a log or a folder of logs)");
  if (!ntasks)
    cli_usage("no records in the logs given");
  if (!heron__nvrtc_available()) {
    fprintf(stderr, "%s: libheron was built without NVRTC\n", cli_prog());
    return CLI_EXIT_FAILURE;
  }
  /* Tasks first: creating one probes the GPU in a child process, which
   * must happen before this process initialises the driver. */
  int sm = 0;
  char gpu[300] = "no GPU";
  for (int i = 0; i < ntasks; i++) {
    bench_task *bt = &tasks[i];
    make_task(bt, hw);
    if (bt->error && strstr(bt->error, "no GPU")) {
      fprintf(stderr, "%s: %s: %s\n", cli_prog(), bt->key, bt->error);
      fprintf(stderr,
              "%s: needs an NVIDIA GPU (and its driver, "
              "libcuda.so.1)\n",
              cli_prog());
      return CLI_EXIT_FAILURE;
    }
    if (bt->error)
      continue;
    sm = bt->t->hw.sm;
    snprintf(gpu, sizeof gpu, "%s (sm_%d, %d SMs)", bt->t->hw.name,
             bt->t->hw.sm, bt->t->hw.sm_count);
    find_best(bt);
    if (!bt->error)
      build_best(bt, sm);
  }
  int failed = 0;
  if (dry) {
    printf("%s\n", gpu);
    for (int i = 0; i < ntasks; i++) {
      bench_task *bt = &tasks[i];
      if (bt->error)
        printf("%s: %d records; %s\n", bt->key, bt->trials, bt->error);
      else
        printf("%s: %d records; best %.2f us as tuned; built for sm_%d (%d "
               "registers, %lld bytes of shared memory)\n",
               bt->key, bt->trials, bt->tuned_seconds * 1e6, sm, bt->build.regs,
               (long long)bt->build.smem_bytes);
      failed += bt->error != NULL;
      const char *lib_name = bt->t ? library_of(&bt->t->op) : NULL;
      if (lib_name && !strcmp(lib_name, "cuDNN legacy")) {
        int bad = 0;
        printf("%s: %s\n", bt->key, dry_conv(bt, &bad));
        failed += bad;
      }
    }
    return failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
  }
  gpu_open();
  for (int i = 0; i < ntasks; i++) {
    bench_task *bt = &tasks[i];
    if (!bt->error) {
      fprintf(stderr, "[%d/%d] %s ...\n", i + 1, ntasks, bt->key);
      run_task(bt, repeat, min_ms, graph_s);
    }
    /* A row fails when ours is wrong (checked against the reference
     * whenever a library's output differed); a library less exact than
     * the tolerance is reported, not failed, and so is any failure of
     * cuDNN's graph API. */
    failed += bt->error != NULL || (bt->judged && !bt->ours_ok) ||
              (((bt->compared && !bt->match) ||
                (bt->graph_compared && !bt->graph_match)) &&
               !bt->judged);
  }
  print_table(stdout, gpu);
  if (out) {
    FILE *f = fopen(out, "w");
    if (!f) {
      fprintf(stderr, "%s: cannot write %s\n", cli_prog(), out);
      return CLI_EXIT_FAILURE;
    }
    print_table(f, gpu);
    fclose(f);
  }
  return failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
