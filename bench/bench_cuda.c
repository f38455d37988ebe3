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
 *
 * This file holds the command line, the table and main; the program's other
 * parts, one a file, are listed in bench_cuda.h.
 */
#include <stdio.h>
#include <string.h>

#include "bench_cuda.h"

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
