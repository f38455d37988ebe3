/* bench/cudnn_graph.h - bench_cuda's second cuDNN baseline: a convolution
 * through cuDNN's graph (backend) API, the way frameworks call it.
 *
 * The convolution is one operation graph (CONVOLUTION_FORWARD, or
 * CONVOLUTION_BACKWARD_DATA for a transposed convolution) on fp16 tensors in
 * packed NCHW / NCDHW order with fp32 compute; the engine heuristics
 * (CUDNN_HEUR_MODE_A) list engine configs, each is finalized into an
 * execution plan (those that fail to finalize are skipped), and the caller
 * times the plans and keeps the fastest.  The legacy API's descriptors in
 * bench_cuda.c are made from the same geometry (cudnn_graph_conv_init), so
 * both columns run one convolution.
 *
 * Every cuDNN call's status is checked; a failure writes one line,
 * "cuDNN graph API: <call> failed: <cudnnGetErrorString>/<status>", into
 * the caller's error buffer and returns 0.
 */
#ifndef HERON_BENCH_CUDNN_GRAPH_H
#define HERON_BENCH_CUDNN_GRAPH_H

#include <cudnn.h>
#include <stddef.h>
#include <stdint.h>

/* The geometry of one convolution in cuDNN's terms.  x is the op's data
 * input, w its weight, y its output: for a forward convolution x, w -> y;
 * for a transposed one (backward data) x is the incoming gradient dy of
 * the forward convolution it transposes and y the data gradient dx.  1-D
 * convolutions are 2-D ones of height 1 (cuDNN wants 4 or more dims). */
typedef struct cudnn_graph_conv {
  int backward_data;           /* 0: forward, 1: backward data (t2d) */
  int nd;                      /* tensor rank: 4 (NCHW) or 5 (NCDHW) */
  int spatial;                 /* nd - 2 */
  int64_t x[5], w[5], y[5];    /* dimensions, N C spatial... (w: K C R S) */
  int64_t xs[5], ws[5], ys[5]; /* packed strides of each */
  int64_t pad[3], stride[3], dilation[3]; /* per spatial dimension */
} cudnn_graph_conv;

/* Fills g for the op named `op` (c1d, c2d, dil, c3d or t2d): n the batch,
 * ci and co the op's input and output channels, in/k/out the op's input,
 * kernel and output extents as D, H, W (D read only for c3d, H not for
 * c1d), and the op's stride, pad and dilation (the same on every spatial
 * dimension; c1d's height gets stride 1, pad 0, dilation 1).  Returns 1,
 * or 0 (g untouched) for another op or a dimension below 1. */
int cudnn_graph_conv_init(cudnn_graph_conv *g, const char *op, int64_t n,
                          int64_t ci, int64_t co, const int64_t in[3],
                          const int64_t k[3], const int64_t out[3],
                          int64_t stride, int64_t pad, int64_t dilation);

/* The unique ids of the three tensors in the graph and its variant pack. */
enum {
  CUDNN_GRAPH_UID_X = 'x',
  CUDNN_GRAPH_UID_W = 'w',
  CUDNN_GRAPH_UID_Y = 'y'
};

/* The most engine configs taken from the heuristics. */
enum { CUDNN_GRAPH_MAX_CONFIGS = 64 };

/* A convolution's operation and, once cudnn_graph_open has run, its
 * graph and the engine configs the heuristics offer for it. */
typedef struct cudnn_graph {
  cudnnBackendDescriptor_t x, w, y, conv, op;
  cudnnBackendDescriptor_t graph, heur;
  cudnnBackendDescriptor_t cfg[CUDNN_GRAPH_MAX_CONFIGS];
  int ncfg;        /* configs taken (at most CUDNN_GRAPH_MAX_CONFIGS) */
  int64_t offered; /* configs the heuristics offered */
} cudnn_graph;

/* One finalized execution plan with its variant pack. */
typedef struct cudnn_graph_plan {
  cudnnBackendDescriptor_t plan, pack;
  int64_t workspace; /* bytes the plan needs */
  int index;         /* which config of the graph's list */
} cudnn_graph_plan;

/* Builds and finalizes the tensor, convolution and operation descriptors
 * of g into *cg (zeroed first); needs no GPU.  Returns 1, or 0 with the
 * failing call in err (then cudnn_graph_close frees what was made). */
int cudnn_graph_op(cudnn_graph *cg, const cudnn_graph_conv *g, char *err,
                   size_t errcap);

/* cudnn_graph_op, then the operation graph on handle h and the engine
 * configs of heuristics mode A.  Returns 1 with cg->ncfg >= 1, or 0 with
 * the reason in err. */
int cudnn_graph_open(cudnn_graph *cg, cudnnHandle_t h,
                     const cudnn_graph_conv *g, char *err, size_t errcap);

/* Finalizes the plan of config i of cg on handle h and, when it needs at
 * most workspace_bytes, its variant pack on the buffers x, w, y (the
 * op's input, weight and output, as in cudnn_graph_conv) and workspace.
 * Returns 1, or 0 (p freed) with the reason in err: a config that does not
 * finalize or needs more workspace is skipped by the caller. */
int cudnn_graph_plan_make(cudnn_graph_plan *p, const cudnn_graph *cg,
                          cudnnHandle_t h, int i, void *x, void *w, void *y,
                          void *workspace, size_t workspace_bytes, char *err,
                          size_t errcap);

/* Issues the plan on h's stream.  Returns 1, or 0 with the reason in err. */
int cudnn_graph_plan_run(const cudnn_graph_plan *p, cudnnHandle_t h, char *err,
                         size_t errcap);

/* Frees what p / cg hold (safe on zeroed or partly built ones). */
void cudnn_graph_plan_free(cudnn_graph_plan *p);
void cudnn_graph_close(cudnn_graph *cg);

#endif
