/* bench/bench_suite_results.c - the table of the rows: results.md (also
 * printed) and results.csv. */
#include <math.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bench_suite.h"

/* ---- Results ------------------------------------------------------------- */

static void fmt_gflops(char *buf, size_t cap, double v) {
  if (v >= 100)
    snprintf(buf, cap, "%.0f", v);
  else if (v >= 10)
    snprintf(buf, cap, "%.1f", v);
  else
    snprintf(buf, cap, "%.2f", v);
}

/* Two decimals, or two significant digits below 0.1 so that a tiny ratio
 * does not read as zero. */
static void fmt_ratio(char *buf, size_t cap, double v) {
  snprintf(buf, cap, v >= 0.1 ? "%.2f" : "%.2g", v);
}

void write_markdown(FILE *f, const settings *s, const suite *su,
                    const row *rows, int n) {
  char cpu[256], stamp[64];
  cli_detected_cpu(cpu, sizeof cpu, NULL, 0);
  time_t t = time(NULL);
  strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M", localtime(&t));
  fprintf(f, "# Heron-C against vendor libraries: %s\n\n", su->name);
  fprintf(f, "%s, %s, %d cores; ", stamp, cpu, cpu_count());
  if (s->no_tune)
    fprintf(f, "kernels emitted by an earlier run (strategy and trials in "
               "results.csv)");
  else
    fprintf(f,
            "tuned in this run with %s%s%s, %d trials per task and thread "
            "count, seed %llu",
            s->strategy, s->model ? " + " : "", s->model ? s->model : "",
            s->trials, (unsigned long long)s->seed);
  fprintf(f, "; epilogue %s%s.\n\n", *s->epilogue ? s->epilogue : "none",
          !s->prepack_weights ? ""
          : strcmp(su->dtype, "fp32")
              ? "; weights (convolutions' and matrix ops') packed once "
                "ahead, untimed (--prepack-weights)"
              : "; convolution weights packed once ahead, untimed "
                "(--prepack-weights)");
  fprintf(f,
          "Ratio = Heron-C GFLOP/s / baseline GFLOP/s (above 1: Heron-C "
          "is faster). Both are timed in this process on the same inputs, "
          "back to back, median of %d repeats of at least %.0f ms; FLOPs "
          "= 2 x the product of all loop extents for every figure. "
          "oneDNN (blocked) runs on its preferred layouts with the "
          "reorders not timed; oneDNN (plain) runs on the NCHW-style "
          "layouts Heron-C reads and writes.\n\n",
          s->compare_repeat, s->compare_ms);
  int blocked = 0;
  for (int i = 0; i < n; i++)
    blocked |= op_block(rows[i].task->op) > 0;
  if (blocked)
    fprintf(f, "Blocked convolutions (c1d_ncw16c, c2d_nchw16c, c1d_ncw8c, "
               "c2d_nchw8c): their tensors are in oneDNN's blocked layouts "
               "already (nCw16c/nChw16c and OIw16i16o/OIhw16i16o, or 8c), "
               "so the baseline is oneDNN on exactly those tensors, nothing "
               "converted (\"as given\"); the second baseline is oneDNN on "
               "the layouts it prefers, its reorders not timed.\n\n");
  int lowp = strcmp(su->dtype, "fp32") != 0;
  int matrix = 0;
  for (int i = 0; i < n; i++)
    matrix |= !strcmp(rows[i].task->op, "gemm") ||
              !strcmp(rows[i].task->op, "bmm") ||
              !strcmp(rows[i].task->op, "gemv");
  if (!lowp && matrix) {
    const char *env_core = getenv("OPENBLAS_CORETYPE");
    fprintf(f,
            "Matrix ops (gemm, bmm, gemv): the baseline is the faster of "
            "OpenBLAS and oneDNN's fp32 matmul (plain row-major, the same "
            "threads), the other is the second baseline. OpenBLAS here "
            "chose the %s kernels%s%s%s; ",
            blas_core(), env_core && *env_core ? " (OPENBLAS_CORETYPE=" : "",
            env_core && *env_core ? env_core : "",
            env_core && *env_core ? ")" : "");
    char no512[64];
    if (!cpu_avx512(no512, sizeof no512))
      fprintf(f,
              "**%s: only those were timed, not its AVX-512 (SkylakeX) "
              "kernels**.\n\n",
              no512);
    else if (!strcasecmp(blas_core(), "SkylakeX"))
      fprintf(f, "those are its AVX-512 (SkylakeX) kernels.\n\n");
    else
      fprintf(f,
              "on this AVX-512 CPU its SkylakeX kernels were timed too, in "
              "a child process with OPENBLAS_CORETYPE=SkylakeX (same inputs, "
              "same repeats, not interleaved with the others), and the "
              "faster kernel set counts: the baseline's name says which, "
              "and what the other reached.\n\n");
  }
  if (lowp)
    fprintf(f,
            "dtype %s on target %s (%s); GFLOP/s counts integer operations "
            "alike. The baselines are oneDNN's in the same dtype (matmul for "
            "the matrix ops); the check is %s. Heron-C fp32 is our own fp32 "
            "kernel of the same task (from --fp32-dir) on the same values, "
            "timed in this run; the last column is %s over it.\n\n",
            su->dtype, su->target,
            !strcmp(su->dtype, "int8") ? "u8 activations x s8 weights -> s32"
                                       : "bf16 x bf16 -> fp32",
            !strcmp(su->dtype, "int8") ? "exact equality"
                                       : "the fp32 tolerance",
            su->dtype);
  fprintf(f,
          "| task | shape | threads | Heron-C GFLOP/s | baseline | "
          "baseline GFLOP/s | ratio | second baseline | its GFLOP/s "
          "(ratio) | check |%s\n",
          lowp ? " Heron-C fp32 GFLOP/s | speedup over fp32 |" : "");
  fprintf(f, "|---|---|---:|---:|---|---:|---:|---|---:|---|%s\n",
          lowp ? "---:|---:|" : "");
  double logsum[MAX_THREADS] = {0};
  int counted[MAX_THREADS] = {0};
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (r->status == ROW_FAILED || r->status == ROW_INTERRUPTED) {
      /* An interrupted row's error says so itself ("tuning stopped by
       * SIGINT after 4 of 300 trials"). */
      int failed = r->status == ROW_FAILED;
      fprintf(f, "| %s | %s | %d | %s | - | - | - | - | - | %s%s |%s\n",
              r->task->name, r->shape, r->threads,
              failed ? "failed" : "interrupted", failed ? "failed: " : "",
              r->error, lowp ? " - | - |" : "");
      continue;
    }
    char h[32], b[32], q[32], b2[80] = "-";
    fmt_gflops(h, sizeof h, r->heron_gflops);
    fmt_gflops(b, sizeof b, r->base_gflops);
    fmt_ratio(q, sizeof q, r->heron_gflops / r->base_gflops);
    if (r->base2[0]) {
      char v[32], q2[32];
      fmt_gflops(v, sizeof v, r->base2_gflops);
      fmt_ratio(q2, sizeof q2, r->heron_gflops / r->base2_gflops);
      snprintf(b2, sizeof b2, "%s (%s)", v, q2);
    }
    char check[96];
    if (r->status == ROW_MISMATCH && !strcmp(su->dtype, "int8"))
      snprintf(check, sizeof check, "**MISMATCH** (off by up to %.0f)",
               r->max_err);
    else if (r->status == ROW_MISMATCH)
      snprintf(check, sizeof check, "**MISMATCH** (error %.3g x tolerance)",
               r->max_err);
    else
      snprintf(check, sizeof check, "ok");
    if (r->fp32_gflops > 0 && r->fp32_err > 1)
      snprintf(check + strlen(check), sizeof check - strlen(check),
               "; fp32 kernel **MISMATCH**");
    char lp[96] = "";
    if (lowp && r->fp32_gflops > 0) {
      char v[32], q3[32];
      fmt_gflops(v, sizeof v, r->fp32_gflops);
      fmt_ratio(q3, sizeof q3, r->heron_gflops / r->fp32_gflops);
      snprintf(lp, sizeof lp, " %s | %s |", v, q3);
    } else if (lowp) {
      snprintf(lp, sizeof lp, " - | - |");
    }
    fprintf(f, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |%s\n",
            r->task->name, r->shape, r->threads, h, r->base, b, q,
            r->base2[0] ? r->base2 : "-", b2, check, lp);
    for (int k = 0; k < s->nthreads; k++)
      if (s->threads[k] == r->threads && r->status == ROW_OK) {
        logsum[k] += log(r->heron_gflops / r->base_gflops);
        counted[k]++;
      }
  }
  fprintf(f, "\nGeometric mean of the ratio:");
  for (int k = 0; k < s->nthreads; k++)
    if (counted[k])
      fprintf(f, " %d thread%s %.2f (%d task%s);", s->threads[k],
              s->threads[k] > 1 ? "s" : "", exp(logsum[k] / counted[k]),
              counted[k], counted[k] > 1 ? "s" : "");
    else
      fprintf(f, " %d thread%s -;", s->threads[k],
              s->threads[k] > 1 ? "s" : "");
  fprintf(f, "\n");
  int membound = 0;
  for (int i = 0; i < n; i++)
    membound |= rows[i].bytes > 0 && rows[i].status == ROW_OK;
  if (!membound)
    return;
  fprintf(f, "\nMemory-bound tasks: the bandwidth each kernel reaches on the "
             "bytes the op must move (inputs and output once), against a "
             "STREAM-like copy (c[i] = a[i] on the same threads, read + "
             "written bytes) timed in the same run.\n\n");
  fprintf(f, "| task | threads | MB moved | Heron-C GB/s | baseline GB/s | "
             "STREAM copy GB/s | Heron-C / copy |\n");
  fprintf(f, "|---|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    if (r->bytes <= 0 || r->status != ROW_OK)
      continue;
    fprintf(f, "| %s | %d | %.1f | %.1f | %.1f | %.1f | %.2f |\n",
            r->task->name, r->threads, r->bytes / 1e6, r->heron_gbs,
            r->base_gbs, r->copy_gbs,
            r->copy_gbs > 0 ? r->heron_gbs / r->copy_gbs : 0.0);
  }
}

/* CSV field: quoted when it holds a comma, a quote or a newline. */
static void csv_field(FILE *f, const char *v, int last) {
  if (strpbrk(v, ",\"\n")) {
    fputc('"', f);
    for (; *v; v++) {
      if (*v == '"')
        fputc('"', f);
      fputc(*v, f);
    }
    fputc('"', f);
  } else {
    fputs(v, f);
  }
  fputc(last ? '\n' : ',', f);
}

void write_csv(FILE *f, const settings *s, const suite *su, const row *rows,
               int n) {
  fprintf(f, "task,op,shape,epilogue,threads,strategy,trials,best_trial,"
             "tune_gflops,tune_seconds,heron_gflops,baseline,baseline_gflops,"
             "ratio,baseline2,baseline2_gflops,ratio2,max_err_over_tol,"
             "dtype,fp32_gflops,status,error,openblas_kernels,"
             "openblas_default_gflops,openblas_avx512_gflops,"
             "onednn_matmul_gflops\n");
  for (int i = 0; i < n; i++) {
    const row *r = &rows[i];
    char num[64];
    csv_field(f, r->task->name, 0);
    csv_field(f, r->task->op, 0);
    csv_field(f, r->shape, 0);
    csv_field(f, *s->epilogue ? s->epilogue : "none", 0);
    fprintf(f, "%d,", r->threads);
    csv_field(f, r->strategy[0] ? r->strategy : s->strategy, 0);
    fprintf(f, "%d,%d,%.4g,%.1f,", r->trials, r->best_trial, r->tune_gflops,
            r->tune_seconds);
    if (r->status == ROW_FAILED || r->status == ROW_INTERRUPTED) {
      fprintf(f, ",,,,,,,,%s,,%s,", su->dtype,
              r->status == ROW_FAILED ? "failed" : "interrupted");
      csv_field(f, r->error, 0);
      fprintf(f, ",,,\n");
      continue;
    }
    fprintf(f, "%.4g,", r->heron_gflops);
    csv_field(f, r->base, 0);
    fprintf(f, "%.4g,%.4g,", r->base_gflops, r->heron_gflops / r->base_gflops);
    csv_field(f, r->base2, 0);
    if (r->base2[0])
      fprintf(f, "%.4g,%.4g,", r->base2_gflops,
              r->heron_gflops / r->base2_gflops);
    else
      fprintf(f, ",,");
    snprintf(num, sizeof num, "%.3g", r->max_err);
    csv_field(f, num, 0);
    csv_field(f, su->dtype, 0);
    if (r->fp32_gflops > 0)
      fprintf(f, "%.4g,", r->fp32_gflops);
    else
      fprintf(f, ",");
    csv_field(f, r->status == ROW_OK ? "ok" : "MISMATCH", 0);
    csv_field(f, "", 0);
    /* Added after "error", so that the older columns keep their places. */
    csv_field(f, r->blas_kernels, 0);
    const double extra[3] = {r->blas_default_gflops, r->blas_avx512_gflops,
                             r->dnn_mm_gflops};
    for (int k = 0; k < 3; k++) {
      if (extra[k] > 0)
        fprintf(f, "%.4g", extra[k]);
      fputc(k < 2 ? ',' : '\n', f);
    }
  }
}
