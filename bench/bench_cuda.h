/* bench/bench_cuda.h - what the files of bench_cuda share (bench_cuda.c
 * says what the program does; each file says what it holds):
 *
 *   bench_cuda.c       the command line, the table, main
 *   bench_cuda_logs.c  the tasks of the logs and their best configs, rebuilt
 *   bench_cuda_gpu.c   the GPU, the sides' calls and timing, the libraries'
 *                      setup for an op, --dry-run's checks
 *   bench_cuda_row.c   one row: cuDNN's graph API picked, all compared and
 *                      timed
 */
#ifndef HERON_BENCH_CUDA_H
#define HERON_BENCH_CUDA_H

#include <cublas_v2.h>
#include <cudnn.h>
#include <stdint.h>

#include "cli.h"
#include "core/measure/worker.h"
#include "core/record/record.h"
#include "core/replay/replay.h"
#include "core/targets/cuda/driver.h"
#include "core/targets/cuda/toolchain.h"
#include "core/task/task.h"
#include "core/util/util.h"
#include "cudnn_graph.h"
#include "heron/heron.h"
#include "timing.h"

enum { MAX_LOGS = 256, MAX_TASKS = 64 };
/* cuDNN's algorithm search may use this much workspace. */
#define WORKSPACE_BYTES ((size_t)1 << 30)

/* ---- The tasks of the logs (bench_cuda_logs.c) --------------------------- */

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

/* The tasks of every log given, in the order first seen. */
extern bench_task tasks[MAX_TASKS];
extern int ntasks;

/* --log PATH: a log, or every .jsonl / .jsonl.gz of a folder, each added
 * to the task its first record names. */
void add_path(const char *path);

/* Builds the task of bt->key for hardware hw (NULL: the GPU's). */
void make_task(bench_task *bt, const char *hw);

/* Keeps the fastest timed ok config of bt's logs in bt->cfg. */
void find_best(bench_task *bt);

/* Compiles bt's best config with NVRTC for sm. */
void build_best(bench_task *bt, int sm);

/* ---- The GPU (bench_cuda_gpu.c) ------------------------------------------ */

extern heron__cuda_driver drv;
extern cudnnHandle_t dnn;
extern heron__cu_deviceptr workspace; /* WORKSPACE_BYTES for cuDNN */

/* A failed call ends the row with its text (set by the check macros). */
extern const char *row_error;

/* 1 when the driver / cuBLAS / cuDNN call succeeded, else 0 with the call
 * and the error's text in row_error. */
int cu_ok(heron__cu_result e, const char *call);
int dnn_ok(cudnnStatus_t s, const char *call);
#define CU(call) cu_ok((call), #call)

#define DNN(call) dnn_ok((call), #call)

/* Opens the driver, the primary context, cuBLAS and cuDNN; exits 1 when
 * there is no GPU or a call fails. */
void gpu_open(void);

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

/* The calls of each side (a side's call): our kernel's launch, the
 * library's (cuBLAS's GEMM or cuDNN's convolution), cuDNN graph's plan. */
int call_ours(side *s);
int call_lib(side *s);
int call_graph(side *s);

/* Seconds of `number` calls of side self between two events, -1 on an
 * error (a cli_runner's clock). */
double timed(void *self, long long number);

/* The median seconds per call of side s (tools/timing.h), -1 on an error. */
double time_side(side *s, int repeat, double min_ms);

/* The library side of op: cuBLAS's GEMM, or cuDNN's legacy descriptors;
 * the fastest algorithm cuDNN measures on the side's buffers.  1, or 0
 * with row_error. */
int set_gemm(side *s, const heron__op *op);
int set_conv(side *s, const heron__op *op);
int pick_algo(side *s);

/* The library for op ("cuBLAS", "cuDNN legacy"), or NULL when there is
 * none to compare with. */
const char *library_of(const heron__op *op);

/* --dry-run: what can be checked of a convolution's two cuDNN baselines
 * without a GPU; the line to print, *bad set when a check failed. */
const char *dry_conv(const bench_task *bt, int *bad);

/* ---- One row (bench_cuda_row.c) ------------------------------------------ */

/* Runs, compares and times bt's kernel and its libraries. */
void run_task(bench_task *bt, int repeat, double min_ms, double graph_budget_s);

#endif /* HERON_BENCH_CUDA_H */
