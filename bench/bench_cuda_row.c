/* bench/bench_cuda_row.c - one row of bench_cuda: our kernel, the
 * library and cuDNN's graph API on the same buffers, compared and timed. */
#include <stdlib.h>
#include <string.h>

#include "bench_cuda.h"

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

void run_task(bench_task *bt, int repeat, double min_ms,
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
