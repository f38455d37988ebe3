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
 * The two outputs are compared with the op's tolerance (heron__op_check, the
 * library's output in the reference's place); where they differ, both are
 * checked against the op's reference to say which is off.  Then both are
 * timed by CUDA
 * events in the same process, alternately: warm-up, `number` grown until a
 * repeat lasts --min-repeat-ms, --repeat repeats, the median per call.  The
 * table gives microseconds, TFLOP/s and the ratio library time / our time
 * (above 1: ours is faster).
 *
 * Tasks with a fused epilogue and ops outside the list above are listed
 * without a baseline.  Needs an NVIDIA GPU; without one it says so and exits
 * 1.  The driver is loaded as the tuner loads it (core/target/cuda/driver.c);
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
#include "core/target/replay/replay.h"
#include "core/target/cuda/driver.h"
#include "core/task/task.h"
#include "core/util/util.h"
#include "heron/heron.h"

enum { MAX_LOGS = 256, MAX_TASKS = 64 };
/* cuDNN's algorithm search may use this much workspace. */
#define WORKSPACE_BYTES ((size_t)1 << 30)

/* ---- Options ------------------------------------------------------------ */

enum {
  OPT_LOG = 1,
  OPT_OUT,
  OPT_REPEAT,
  OPT_MIN_REPEAT_MS,
  OPT_HW,
  OPT_DRY_RUN,
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
     "hardware description the tasks are built for (configs/hw/)",
     "the GPU's"},
    {OPT_DRY_RUN, "dry-run", NULL,
     "find each task's best config and build it with NVRTC, print them and "
     "stop (no GPU needed; give --hw)",
     ""},
    {OPT_HELP, "help", NULL, "print this help and exit", ""},
    {0, NULL, NULL, NULL, ""}};

static void usage(FILE *out) {
  fprintf(out,
          "usage: bench_cuda --log FILE|DIR [--log ...] [options]\n\n"
          "The fastest timed kernel of each task in the logs, rebuilt and "
          "run on the GPU\nagainst cuBLAS (gemm, bmm, gemv, scan) or cuDNN "
          "(c1d, c2d, dil, c3d, t2d)\non the same inputs: outputs compared, "
          "both timed in the same run.\n\noptions:\n");
  cli_print_options(out, options);
  fprintf(out, "\nWhere the two outputs differ beyond the op's tolerance, "
               "both are checked against\nthe op's reference (plain loops "
               "in double) and the table says which is off.\n\nExit status: "
               "0 every task ran and our kernels were right; 1 no GPU, a "
               "task\nfailed, or one of our kernels was off the reference; 2 "
               "a usage error.\n");
}

/* ---- The tasks of the logs ------------------------------------------------ */

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
   * only then; -1 when not computed). */
  int ours_ok, lib_ok;
  double ours_err, lib_err;
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

/* ---- The GPU ---------------------------------------------------------------- */

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
} side;

enum { LIB_GEMM = 1, LIB_CONV, LIB_CONV_BWD_DATA };

static int call_ours(side *s) {
  const heron__cuda_launch *l = &s->launch;
  return CU(drv.LaunchKernel(
      s->fn, (unsigned)l->grid[0], (unsigned)l->grid[1], (unsigned)l->grid[2],
      (unsigned)l->block[0], (unsigned)l->block[1], (unsigned)l->block[2],
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
            &one, (const void *)(uintptr_t)s->b, CUDA_R_16F, (int)s->ldb,
            s->sb, (const void *)(uintptr_t)s->a, CUDA_R_16F, (int)s->lda,
            s->sa, &zero, (void *)(uintptr_t)s->c, CUDA_R_16F, (int)s->ldc,
            s->sc, (int)s->batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
  if (s->kind == LIB_CONV)
    return DNN(cudnnConvolutionForward(
        dnn, &one, s->xd, (const void *)(uintptr_t)s->a, s->wd,
        (const void *)(uintptr_t)s->b, s->cd,
        (cudnnConvolutionFwdAlgo_t)s->algo, (void *)(uintptr_t)workspace,
        s->ws, &zero, s->yd, (void *)(uintptr_t)s->c));
  return DNN(cudnnConvolutionBackwardData(
      dnn, &one, s->wd, (const void *)(uintptr_t)s->b, s->xd,
      (const void *)(uintptr_t)s->a, s->cd,
      (cudnnConvolutionBwdDataAlgo_t)s->algo, (void *)(uintptr_t)workspace,
      s->ws, &zero, s->yd, (void *)(uintptr_t)s->c));
}

/* Seconds of `number` calls between two events, or -1 on an error. */
static double timed(side *s, long long number) {
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

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median seconds per call (see the top of the file), -1 on an error. */
static double time_side(side *s, int repeat, double min_ms) {
  if (timed(s, 3) < 0)
    return -1;
  long long number = 1;
  for (;;) {
    double t = timed(s, number);
    if (t < 0)
      return -1;
    if (t * 1e3 >= min_ms || number >= (1LL << 20))
      break;
    long long grow = t > 0 ? (long long)(min_ms / 1e3 / t * 1.2) + 1 : 16;
    number *= grow < 2 ? 2 : grow > 16 ? 16 : grow;
  }
  double per[64];
  int r = repeat < 64 ? repeat : 64;
  for (int i = 0; i < r; i++) {
    double t = timed(s, number);
    if (t < 0)
      return -1;
    per[i] = t / (double)number;
  }
  qsort(per, (size_t)r, sizeof *per, cmp_double);
  return per[r / 2];
}

/* ---- The library side of each op ------------------------------------------- */

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

/* cuDNN descriptors of a convolution: x the data, w the weight, y the
 * output, all NCHW (c1d as a 2-D convolution of height 1, c3d NCDHW).  For
 * t2d x is the incoming gradient (the op's data) and y the data gradient
 * (the op's output) of the forward convolution it transposes. */
static int set_conv(side *s, const heron__op *op) {
  const char *o = op->name;
  int t2d = !strcmp(o, "t2d"), c3d = !strcmp(o, "c3d"), c1d = !strcmp(o, "c1d");
  int sp = c3d ? 3 : 2, nd = sp + 2;
  long long N = dim(op, "N"), CI = dim(op, "CI"), CO = dim(op, "CO");
  long long st = dim(op, "stride"), pd = dim(op, "pad"),
            dl = dim(op, "dilation");
  const char *in_axes[3] = {"D", "H", "W"}, *k_axes[3] = {"KD", "KH", "KW"};
  int xd[5], wd[5], yd[5], pads[3], strides[3], dils[3];
  xd[0] = (int)N;
  xd[1] = (int)CI;
  wd[0] = (int)(t2d ? CI : CO);
  wd[1] = (int)(t2d ? CO : CI);
  for (int i = 0; i < sp; i++) {
    int a = c3d ? i : i + 1; /* 2-D: H and W */
    int one = c1d && i == 0; /* c1d: the height of 1 */
    xd[2 + i] = one ? 1 : (int)dim(op, in_axes[a]);
    wd[2 + i] = one ? 1 : (int)dim(op, k_axes[a]);
    pads[i] = one ? 0 : (int)pd;
    strides[i] = one ? 1 : (int)st;
    dils[i] = one ? 1 : (int)dl;
  }
  /* The output's dimensions are the op's own: its out tensor. */
  const heron__tensor *out = &op->out;
  yd[0] = (int)N;
  yd[1] = (int)CO;
  for (int i = 0; i < sp; i++)
    yd[2 + i] = c1d && i == 0 ? 1 : (int)out->dims[out->ndim - sp + i];
  int xs[5], ys[5];
  xs[nd - 1] = ys[nd - 1] = 1;
  for (int i = nd - 2; i >= 0; i--) {
    xs[i] = xs[i + 1] * xd[i + 1];
    ys[i] = ys[i + 1] * yd[i + 1];
  }
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
    if (!DNN(cudnnFindConvolutionForwardAlgorithmEx(
            dnn, s->xd, x, s->wd, w, s->cd, s->yd, y, 16, &got, perf, ws,
            WORKSPACE_BYTES)))
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
      return "cuDNN";
  return NULL;
}

/* ---- One row ---------------------------------------------------------------- */

/* Ours and the library disagree: which one is off?  Both against the op's
 * reference (the plain C loops in double, as the tuner checks with; slow
 * for the large convolutions, so computed only here). */
static void judge(bench_task *bt, void *const *host, const void *lib_out) {
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
  bt->ours_ok = heron__op_check(op, host[op->ninputs], ref[op->ninputs],
                                &bt->ours_err, &bad);
  bt->lib_ok = heron__op_check(op, lib_out, ref[op->ninputs], &bt->lib_err,
                               &bad);
  free(ref[op->ninputs]);
}

static void run_task(bench_task *bt, int repeat, double min_ms) {
  const heron__op *op = &bt->t->op;
  bt->lib_name = library_of(op);
  void *host[HERON__MAX_TENSORS + 2] = {0};
  heron_error err = {0};
  if (heron__op_alloc_buffers(op, host, &err) != HERON_OK) {
    bt->error = cli_printf("%s", err.text);
    return;
  }
  heron__op_fill_inputs(op, host, 1);
  heron__cu_deviceptr dev[HERON__MAX_TENSORS + 2] = {0}, lib_out = 0;
  size_t out_bytes = heron__buffer_bytes(op, op->ninputs);
  void *lib_host = malloc(out_bytes);
  side ours = {.call = call_ours}, lib = {.call = call_lib};
  heron__cu_module mod = NULL;
  row_error = NULL;
  int ok = lib_host != NULL;
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
    ok = is_blas ? set_gemm(&lib, op) : (set_conv(&lib, op) && pick_algo(&lib));
    if (ok) {
      bt->lib_s = time_side(&lib, repeat, min_ms);
      ok = bt->lib_s > 0;
    }
    /* Ours again after the library: the ratio uses the better of the two
     * timings of our side, so neither side profits from going second. */
    double again = ok ? time_side(&ours, repeat, min_ms) : -1;
    if (again > 0 && again < bt->ours_s)
      bt->ours_s = again;
    void *ours_host = host[op->ninputs];
    ok = ok && CU(drv.CtxSynchronize()) &&
         CU(drv.MemcpyDtoH(ours_host, dev[op->ninputs], out_bytes)) &&
         CU(drv.MemcpyDtoH(lib_host, lib_out, out_bytes));
    if (ok) {
      int64_t bad = -1;
      bt->compared = 1;
      bt->match = heron__op_check(op, ours_host, lib_host, &bt->max_err, &bad);
      if (!bt->match)
        judge(bt, host, lib_host);
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
  free(lib_host);
  heron__op_free_buffers(op, host);
}

/* ---- The table -------------------------------------------------------------- */

static void print_table(FILE *f, const char *gpu) {
  fprintf(f, "| task | trials | Heron-C us | TFLOP/s | library | library us "
             "| TFLOP/s | library / Heron-C | outputs |\n");
  fprintf(f, "|---|---:|---:|---:|---|---:|---:|---:|---|\n");
  for (int i = 0; i < ntasks; i++) {
    bench_task *bt = &tasks[i];
    if (bt->error && bt->ours_s <= 0) {
      fprintf(f, "| %s | %d | | | | | | | %s |\n", bt->key, bt->trials,
              bt->error);
      continue;
    }
    double fl = heron_task_flops(bt->t);
    fprintf(f, "| %s | %d | %.2f | %.1f |", bt->key, bt->trials,
            bt->ours_s * 1e6, fl / bt->ours_s / 1e12);
    if (bt->lib_s > 0 && bt->match)
      fprintf(f, " %s | %.2f | %.1f | %.2f | match (max rel. diff %.2g) |\n",
              bt->lib_name, bt->lib_s * 1e6, fl / bt->lib_s / 1e12,
              bt->lib_s / bt->ours_s, bt->max_err);
    else if (bt->lib_s > 0)
      fprintf(f,
              " %s | %.2f | %.1f | %.2f | differ (max rel. diff %.2g); "
              "against the reference: Heron-C %s (%.2g), %s %s (%.2g) |\n",
              bt->lib_name, bt->lib_s * 1e6, fl / bt->lib_s / 1e12,
              bt->lib_s / bt->ours_s, bt->max_err,
              bt->ours_ok ? "within tolerance" : "WRONG", bt->ours_err,
              bt->lib_name, bt->lib_ok ? "within tolerance" : "outside it",
              bt->lib_err);
    else
      fprintf(f, " %s | | | | %s |\n", bt->lib_name ? bt->lib_name : "none",
              bt->error ? bt->error : "no baseline for this op");
  }
  fprintf(f, "\n%s; cuBLAS %d, cuDNN %zu.\n", gpu, (int)CUBLAS_VERSION,
          cudnnGetVersion());
}

int main(int argc, char **argv) {
  cli_set_prog("bench_cuda");
  const char *out = NULL, *hw = NULL;
  int repeat = 7, nlog = 0, dry = 0;
  double min_ms = 20;
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
      fprintf(stderr, "%s: needs an NVIDIA GPU (and its driver, "
                      "libcuda.so.1)\n", cli_prog());
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
               bt->key, bt->trials, bt->tuned_seconds * 1e6, sm,
               bt->build.regs, (long long)bt->build.smem_bytes);
      failed += bt->error != NULL;
    }
    return failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
  }
  gpu_open();
  for (int i = 0; i < ntasks; i++) {
    bench_task *bt = &tasks[i];
    if (!bt->error) {
      fprintf(stderr, "[%d/%d] %s ...\n", i + 1, ntasks, bt->key);
      run_task(bt, repeat, min_ms);
    }
    /* A row fails when ours is wrong; a library less exact than the
     * tolerance is reported, not failed. */
    failed += bt->error != NULL || (bt->compared && !bt->match && !bt->ours_ok);
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
