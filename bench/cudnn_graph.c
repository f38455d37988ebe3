/* bench/cudnn_graph.c - a convolution through cuDNN's graph (backend) API;
 * see cudnn_graph.h. */
#include "cudnn_graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cudnn_graph_conv_init(cudnn_graph_conv *g, const char *op, int64_t n,
                          int64_t ci, int64_t co, const int64_t in[3],
                          const int64_t k[3], const int64_t out[3],
                          int64_t stride, int64_t pad, int64_t dilation) {
  int t2d = !strcmp(op, "t2d"), c3d = !strcmp(op, "c3d"),
      c1d = !strcmp(op, "c1d");
  if (!t2d && !c3d && !c1d && strcmp(op, "c2d") && strcmp(op, "dil"))
    return 0;
  if (n < 1 || ci < 1 || co < 1 || stride < 1 || pad < 0 || dilation < 1)
    return 0;
  cudnn_graph_conv r;
  memset(&r, 0, sizeof r);
  r.backward_data = t2d;
  r.spatial = c3d ? 3 : 2;
  r.nd = r.spatial + 2;
  r.x[0] = r.y[0] = n;
  r.x[1] = ci;
  r.y[1] = co;
  /* The filter is K x C x ...: K the forward convolution's output
   * channels.  For t2d the forward convolution maps the op's output
   * (co channels) to its input (ci channels). */
  r.w[0] = t2d ? ci : co;
  r.w[1] = t2d ? co : ci;
  for (int i = 0; i < r.spatial; i++) {
    int a = c3d ? i : i + 1; /* 2-D: H and W of D, H, W */
    int one = c1d && i == 0; /* c1d: the height of 1 */
    r.x[2 + i] = one ? 1 : in[a];
    r.w[2 + i] = one ? 1 : k[a];
    r.y[2 + i] = one ? 1 : out[a];
    r.pad[i] = one ? 0 : pad;
    r.stride[i] = one ? 1 : stride;
    r.dilation[i] = one ? 1 : dilation;
    if (r.x[2 + i] < 1 || r.w[2 + i] < 1 || r.y[2 + i] < 1)
      return 0;
  }
  r.xs[r.nd - 1] = r.ws[r.nd - 1] = r.ys[r.nd - 1] = 1;
  for (int i = r.nd - 2; i >= 0; i--) {
    r.xs[i] = r.xs[i + 1] * r.x[i + 1];
    r.ws[i] = r.ws[i + 1] * r.w[i + 1];
    r.ys[i] = r.ys[i + 1] * r.y[i + 1];
  }
  *g = r;
  return 1;
}

/* ---- Checked calls --------------------------------------------------------
 */

/* A cuDNN status: 1 on success, else 0 with the one-line report in err. */
static int ok(cudnnStatus_t s, const char *call, char *err, size_t errcap) {
  if (s == CUDNN_STATUS_SUCCESS)
    return 1;
  snprintf(err, errcap, "cuDNN graph API: %s failed: %s/%d", call,
           cudnnGetErrorString(s), (int)s);
  return 0;
}

/* The checked cudnnBackend* calls, named in the report. */
#define CHECK(call, name) ok((call), (name), err, errcap)
#define SET(d, attr, type, n, v)                                               \
  CHECK(cudnnBackendSetAttribute((d), (attr), (type), (n), (v)),               \
        "cudnnBackendSetAttribute(" #attr ")")
#define CREATE(type, d)                                                        \
  CHECK(cudnnBackendCreateDescriptor((type), (d)),                             \
        "cudnnBackendCreateDescriptor(" #type ")")
#define FINALIZE(d, what)                                                      \
  CHECK(cudnnBackendFinalize(d), "cudnnBackendFinalize(" what ")")

static void destroy(cudnnBackendDescriptor_t *d) {
  if (*d)
    cudnnBackendDestroyDescriptor(*d);
  *d = NULL;
}

/* An fp16 tensor of rank nd, 16-byte aligned (cuMemAlloc's buffers are
 * aligned to 256 bytes). */
static int tensor(cudnnBackendDescriptor_t *d, int64_t uid, int nd,
                  const int64_t *dims, const int64_t *strides, char *err,
                  size_t errcap) {
  cudnnDataType_t half = CUDNN_DATA_HALF;
  int64_t align = 16;
  return CREATE(CUDNN_BACKEND_TENSOR_DESCRIPTOR, d) &&
         SET(*d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &half) &&
         SET(*d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, nd, dims) &&
         SET(*d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, nd, strides) &&
         SET(*d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid) &&
         SET(*d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1,
             &align) &&
         FINALIZE(*d, "CUDNN_BACKEND_TENSOR_DESCRIPTOR");
}

int cudnn_graph_op(cudnn_graph *cg, const cudnn_graph_conv *g, char *err,
                   size_t errcap) {
  memset(cg, 0, sizeof *cg);
  if (!tensor(&cg->x, CUDNN_GRAPH_UID_X, g->nd, g->x, g->xs, err, errcap) ||
      !tensor(&cg->w, CUDNN_GRAPH_UID_W, g->nd, g->w, g->ws, err, errcap) ||
      !tensor(&cg->y, CUDNN_GRAPH_UID_Y, g->nd, g->y, g->ys, err, errcap))
    return 0;
  cudnnDataType_t fp32 = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  int64_t sp = g->spatial;
  if (!CREATE(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &cg->conv) ||
      !SET(cg->conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
           &fp32) ||
      !SET(cg->conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
           CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode) ||
      !SET(cg->conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1,
           &sp) ||
      !SET(cg->conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, sp,
           g->pad) ||
      !SET(cg->conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, sp,
           g->pad) ||
      !SET(cg->conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64,
           sp, g->stride) ||
      !SET(cg->conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, sp,
           g->dilation) ||
      !FINALIZE(cg->conv, "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR"))
    return 0;
  float alpha = 1.0f, beta = 0.0f;
  cudnnBackendDescriptor_t d = NULL;
  if (!g->backward_data) {
    if (!CREATE(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                &cg->op))
      return 0;
    d = cg->op;
    return SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->x) &&
           SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->w) &&
           SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->y) &&
           SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->conv) &&
           SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
               CUDNN_TYPE_FLOAT, 1, &alpha) &&
           SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
               CUDNN_TYPE_FLOAT, 1, &beta) &&
           FINALIZE(d, "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_"
                       "DESCRIPTOR");
  }
  /* Backward data: dy (the op's input x) and w -> dx (the op's output y). */
  if (!CREATE(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              &cg->op))
    return 0;
  d = cg->op;
  return SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->x) &&
         SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->w) &&
         SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->y) &&
         SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->conv) &&
         SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
             CUDNN_TYPE_FLOAT, 1, &alpha) &&
         SET(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
             CUDNN_TYPE_FLOAT, 1, &beta) &&
         FINALIZE(d, "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_"
                     "DESCRIPTOR");
}

int cudnn_graph_open(cudnn_graph *cg, cudnnHandle_t h,
                     const cudnn_graph_conv *g, char *err, size_t errcap) {
  if (!cudnn_graph_op(cg, g, err, errcap))
    return 0;
  cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  if (!CREATE(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &cg->graph) ||
      !SET(cg->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
           &h) ||
      !SET(cg->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->op) ||
      !FINALIZE(cg->graph, "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR") ||
      !CREATE(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &cg->heur) ||
      !SET(cg->heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->graph) ||
      !SET(cg->heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
           &mode) ||
      !FINALIZE(cg->heur, "CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR"))
    return 0;
  /* How many configs there are, then that many (at most the cap) into
   * descriptors made for them. */
  int64_t count = 0;
  if (!CHECK(cudnnBackendGetAttribute(cg->heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                      NULL),
             "cudnnBackendGetAttribute(CUDNN_ATTR_ENGINEHEUR_RESULTS, count)"))
    return 0;
  cg->offered = count;
  if (count < 1) {
    snprintf(err, errcap,
             "cuDNN graph API: the heuristics (mode A) offered no engine "
             "config");
    return 0;
  }
  int64_t want =
      count < CUDNN_GRAPH_MAX_CONFIGS ? count : CUDNN_GRAPH_MAX_CONFIGS;
  for (int64_t i = 0; i < want; i++)
    if (!CREATE(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cg->cfg[i]))
      return 0;
  int64_t got = 0;
  if (!CHECK(cudnnBackendGetAttribute(cg->heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, want, &got,
                                      cg->cfg),
             "cudnnBackendGetAttribute(CUDNN_ATTR_ENGINEHEUR_RESULTS)"))
    return 0;
  cg->ncfg = (int)(got < want ? got : want);
  if (cg->ncfg < 1) {
    snprintf(err, errcap,
             "cuDNN graph API: the heuristics (mode A) returned no engine "
             "config");
    return 0;
  }
  return 1;
}

int cudnn_graph_plan_make(cudnn_graph_plan *p, const cudnn_graph *cg,
                          cudnnHandle_t h, int i, void *x, void *w, void *y,
                          void *workspace, size_t workspace_bytes, char *err,
                          size_t errcap) {
  memset(p, 0, sizeof *p);
  p->index = i;
  int64_t got = 0;
  if (i < 0 || i >= cg->ncfg) {
    snprintf(err, errcap, "cuDNN graph API: no engine config %d", i);
    return 0;
  }
  if (!CREATE(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &p->plan) ||
      !SET(p->plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
           &h) ||
      !SET(p->plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cg->cfg[i]) ||
      !FINALIZE(p->plan, "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR") ||
      !CHECK(cudnnBackendGetAttribute(p->plan,
                                      CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                      CUDNN_TYPE_INT64, 1, &got, &p->workspace),
             "cudnnBackendGetAttribute(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_"
             "SIZE)"))
    goto fail;
  if (p->workspace < 0 || (uint64_t)p->workspace > workspace_bytes) {
    snprintf(err, errcap,
             "cuDNN graph API: engine config %d needs %lld bytes of "
             "workspace, more than the %zu there are",
             i, (long long)p->workspace, workspace_bytes);
    goto fail;
  }
  int64_t uids[3] = {CUDNN_GRAPH_UID_X, CUDNN_GRAPH_UID_W, CUDNN_GRAPH_UID_Y};
  void *ptrs[3] = {x, w, y};
  if (!CREATE(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &p->pack) ||
      !SET(p->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3,
           uids) ||
      !SET(p->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           3, ptrs) ||
      !SET(p->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
           &workspace) ||
      !FINALIZE(p->pack, "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR"))
    goto fail;
  return 1;
fail:
  cudnn_graph_plan_free(p);
  p->index = i;
  return 0;
}

int cudnn_graph_plan_run(const cudnn_graph_plan *p, cudnnHandle_t h, char *err,
                         size_t errcap) {
  return CHECK(cudnnBackendExecute(h, p->plan, p->pack), "cudnnBackendExecute");
}

void cudnn_graph_plan_free(cudnn_graph_plan *p) {
  destroy(&p->pack);
  destroy(&p->plan);
  p->workspace = 0;
}

void cudnn_graph_close(cudnn_graph *cg) {
  for (int i = 0; i < CUDNN_GRAPH_MAX_CONFIGS; i++)
    destroy(&cg->cfg[i]);
  destroy(&cg->heur);
  destroy(&cg->graph);
  destroy(&cg->op);
  destroy(&cg->conv);
  destroy(&cg->y);
  destroy(&cg->w);
  destroy(&cg->x);
  cg->ncfg = 0;
}
