/* bench/bench_suite.c - the best kernel Heron-C finds for each task of an
 * operator suite, against the library a user would otherwise call, both
 * measured in this run on the same inputs, on one thread and on all cores.
 *
 *   bench_suite [--suite configs/suites/cpu.json] [--tasks GEMM,C2D]
 *               [--trials 300] [--strategy becbo] [--model NAME]
 *               [--threads 1,<cores>] [--out runs/bench-suite] [--no-tune]
 *
 * The run has two phases.  First every (task, thread count) pair is tuned
 * with heron_tune, each in a child process, with its own JSON Lines log
 * (resumed when it exists, so a killed benchmark continues and a complete
 * one is not searched again) and its best kernel emitted into its own
 * folder.  Then, in this process, each emitted kernel is compiled, loaded
 * and timed against its baselines back to back on the same inputs, the
 * outputs are compared, and the table of ratios is printed and written to
 * results.md and results.csv.
 *
 * A SIGINT or SIGTERM (cli_stop_on_signals) stops the tuning run in flight
 * in order, its log kept; no other row is tuned, the rows tuned before it
 * are compared, the others are written as interrupted, and the exit status
 * is 128 + the signal.  The same command again resumes the logs.  Task
 * names go into file names, so they follow heron-bench's rule (CLI_NAME_RULE).
 *
 * The two phases, and the child processes, exist because of fork: the
 * tuner forks a runner that forks a worker per kernel, and a fork of a
 * process whose OpenMP runtime has started its thread pool inherits a pool
 * that does not exist, so the kernel's first parallel region in the worker
 * waits forever.  This process starts OpenMP (our kernels, oneDNN, the
 * baselines' epilogue loops) only after the last tuning has ended, and a
 * cost model's OpenMP pool lives and dies in its own child.
 *
 * Baselines: OpenBLAS for the matrix ops (gemm: sgemm, and for M or N of 1
 * also sgemv, the faster counting; bmm: sgemm per batch entry; gemv:
 * sgemv; scan: sgemm with the triangular matrix, and a plain prefix-sum
 * loop as a second figure).  fp32 gemm, bmm and gemv also time oneDNN's
 * fp32 matmul, and on an AVX-512 CPU OpenBLAS's SkylakeX kernels as well
 * as the ones it chose itself (in a child process: see "OpenBLAS's kernel
 * sets" in bench_suite_blas.c); the fastest of these is the baseline, the
 * other library the second figure.  oneDNN for the convolutions
 * (c1d, c2d, dil, c3d: convolution; t2d: deconvolution), once on the plain
 * layouts the user's tensors are in and once on oneDNN's preferred blocked
 * layouts with the reorders left out of the timing; the ratio uses the
 * stronger one.  FLOPs are heron_task_flops for every figure.
 *
 * This file holds main, the two phases and the tuning of a row; the other
 * files of the program, one part each, are listed in bench_suite.h.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_suite.h"

/* ---- Tuning -------------------------------------------------------------- */

/* Marks a row the signal kept from being tuned or compared. */
static void interrupt_row(row *r, const char *before) {
  r->status = ROW_INTERRUPTED;
  snprintf(r->error, sizeof r->error, "interrupted by %s before %s",
           cli_signal_name(cli_stop_signal()), before);
}

/* Tunes row r in a child process (cli_tune_in_child; see the top of the
 * file) and records the outcome; a child that dies is a failed row, not a
 * failed benchmark. */
static void tune_row(const settings *s, row *r) {
  char log[CLI_PATH_BUF], dir[CLI_PATH_BUF];
  snprintf(log, sizeof log, "%s/%s.jsonl", s->out, r->file);
  snprintf(dir, sizeof dir, "%s/%s", s->out, r->file);
  heron_tune_options o;
  heron_tune_options_init(&o);
  o.strategy = s->strategy;
  o.strategy_params = s->sparams;
  o.n_strategy_params = s->nsparams;
  o.model = s->model;
  o.model_params = s->mparams;
  o.n_model_params = s->nmparams;
  o.trials = s->trials;
  o.seed = s->seed;
  o.batch = s->batch;
  o.log_path = log;
  struct stat st;
  /* An existing log is continued: a killed benchmark picks up where it
   * stopped, and a complete one only re-emits its best kernel. */
  if (stat(log, &st) == 0 && st.st_size > 0)
    o.resume_path = log;
  o.emit_dir = dir;
  o.measure.number = s->number;
  o.measure.repeat = s->repeat;
  o.measure.min_repeat_ms = s->min_repeat_ms;
  o.measure.timeout_s = s->timeout;
  o.measure.threads = r->threads;
  o.stop = s->stop;
  const char *prefix = s->quiet
                           ? NULL
                           : cli_printf("  [%s, %d thread%s] ", r->task->name,
                                        r->threads, r->threads > 1 ? "s" : "");
  cli_tune_report rep;
  int died = cli_tune_in_child(r->ht, &o, prefix, &rep) != 0;
  int sig = cli_stop_signal();
  if (sig && (died || rep.rc != HERON_OK || rep.res.stopped)) {
    /* Stopped in order (the log holds what was measured), or killed by
     * the signal: either way the log is resumed next time. */
    r->status = ROW_INTERRUPTED;
    snprintf(r->error, sizeof r->error,
             "tuning stopped by %s after %d of %d trials", cli_signal_name(sig),
             died ? 0 : rep.res.trials, s->trials);
    if (died || rep.rc != HERON_OK)
      snprintf(r->error, sizeof r->error, "tuning interrupted by %s: %s",
               cli_signal_name(sig), rep.err.text);
    return;
  }
  if (died) {
    r->status = ROW_FAILED;
    snprintf(r->error, sizeof r->error, "%s", rep.err.text);
    return;
  }
  r->trials = rep.res.trials;
  r->best_trial = rep.res.best_trial;
  r->tune_gflops = rep.res.best_gflops;
  r->tune_seconds = rep.res.elapsed_s;
  if (rep.rc != HERON_OK) {
    r->status = ROW_FAILED;
    snprintf(r->error, sizeof r->error, "tuning failed: %s: %s",
             heron_err_name(rep.rc), rep.err.text);
  } else if (rep.res.best_trial == 0) {
    r->status = ROW_FAILED;
    snprintf(r->error, sizeof r->error,
             "no kernel passed its check in %d trials", rep.res.trials);
  }
}

/* For --no-tune: what the emitted config says about the search. */
static void read_emitted(const settings *s, row *r) {
  char path[CLI_PATH_BUF];
  snprintf(path, sizeof path, "%s/%s/config.json", s->out, r->file);
  json_t *o = json_load_file(path, 0, NULL);
  if (o) {
    r->best_trial = (int)json_integer_value(json_object_get(o, "trial"));
    r->tune_gflops = json_number_value(json_object_get(o, "gflops"));
    json_decref(o);
  }
  snprintf(path, sizeof path, "%s/%s.jsonl", s->out, r->file);
  FILE *f = fopen(path, "r");
  if (f) {
    /* The first record names the strategy that wrote the log. */
    char line[8192];
    if (fgets(line, sizeof line, f)) {
      json_t *m = json_loads(line, 0, NULL);
      const char *st = json_string_value(json_object_get(m, "strategy"));
      if (st)
        snprintf(r->strategy, sizeof r->strategy, "%s", st);
      json_decref(m);
      rewind(f);
    }
    int c, lines = 0;
    while ((c = fgetc(f)) != EOF)
      lines += c == '\n';
    fclose(f);
    r->trials = lines;
  }
}

/* ---- main ---------------------------------------------------------------- */

/* The weights --prepack-weights prepacks in op (the task option prepack),
 * NULL for none: a convolution's weight; in int8 and bf16 also the
 * matrix ops' weights (B; gemv's A, whose vector is the activation), as
 * oneDNN's blocked matmul reorders them untimed.  fp32 GEMM keeps its B
 * in the call: its OpenBLAS baseline packs per call. */
static const char *prepacked_weights(const settings *s, const suite *su,
                                     const char *op) {
  if (!s->prepack_weights || !op)
    return NULL;
  int lowp = strcmp(su->dtype, "fp32") != 0;
  switch (op_family(op)) {
  case FAM_CONV:
  case FAM_DECONV:
    return "weight";
  case FAM_GEMM:
  case FAM_BMM:
    return lowp ? "B" : NULL;
  case FAM_GEMV:
    return lowp ? "A" : NULL;
  default:
    return NULL;
  }
}

/* The row's file name: the task name (CLI_NAME_RULE), the epilogue and
 * prepacking (a task with another epilogue or prepacked inputs is another
 * task, with its own log) and the thread count. */
static void row_file(const settings *s, const suite *su, row *r) {
  char epi[48] = "";
  int pre = prepacked_weights(s, su, r->task->op) != NULL;
  snprintf(epi, sizeof epi, "%s%s%s", s->bias ? "+bias" : "",
           s->relu ? "+relu" : "", pre ? "+prepack" : "");
  snprintf(r->file, sizeof r->file, "%s%s-t%d", r->task->name, epi, r->threads);
}

static void step(const row *r, int i, int n, const char *fmt, ...)
    HERON_PRINTF(4, 5);
static void step(const row *r, int i, int n, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "[%d/%d %s, %d thread%s] ", i + 1, n, r->task->name,
          r->threads, r->threads > 1 ? "s" : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int main(int argc, char **argv) {
  cli_set_prog("bench_suite");
  /* The OpenBLAS half of a row with another kernel set, in a child (see
   * openblas_child_run); not an option a user gives. */
  if (argc > 1 && !strcmp(argv[1], "--internal-openblas-child"))
    return openblas_child(argc, argv);
  blas_find_self();
  static settings s;
  parse_args(&s, argc, argv);
  static suite su;
  load_suite(&s, &su);
  int e = cli_make_dirs(s.out);
  if (e)
    cli_usage("--out: cannot create '%s': %s", s.out, strerror(e));
  /* From here a SIGINT or SIGTERM ends the benchmark in order: the tuning
   * run in flight stops with its log kept, no other row is tuned, the rows
   * tuned before it are compared (a signal while comparing stops that
   * too), and the results are written; a second signal ends it at once. */
  s.stop = cli_stop_on_signals();

  int n = su.ntasks * s.nthreads;
  row *rows = calloc((size_t)n, sizeof *rows);
  if (!rows)
    return CLI_EXIT_FAILURE;
  for (int i = 0; i < n; i++) {
    row *r = &rows[i];
    r->task = &su.tasks[i / s.nthreads];
    r->threads = s.threads[i % s.nthreads];
    row_file(&s, &su, r);
    snprintf(r->shape, sizeof r->shape, "-");
    if (r->task->error) {
      r->status = ROW_FAILED;
      snprintf(r->error, sizeof r->error, "%s", r->task->error);
      continue;
    }
    heron_error err;
    heron_error_clear(&err);
    heron_task_spec spec = {.op = r->task->op,
                            .shape = r->task->shape,
                            .nshape = r->task->nshape,
                            .dtype = su.dtype,
                            .target = su.target,
                            .epilogue = s.epilogue,
                            .prepack = prepacked_weights(&s, &su, r->task->op)};
    if (heron_task_create(&spec, &r->ht, &err)) {
      r->status = ROW_FAILED;
      snprintf(r->error, sizeof r->error, "%s: %s", heron_err_name(err.code),
               err.text);
      continue;
    }
    /* The shape column shows every dimension, defaults included, as the
     * task key has them. */
    const char *key = strchr(heron_task_key(r->ht), '/');
    snprintf(r->shape, sizeof r->shape, "%.*s", (int)strcspn(key + 1, "/"),
             key + 1);
  }

  /* Phase 1: tune everything (no OpenMP in this process until it ends). */
  for (int i = 0; i < n && !s.no_tune; i++) {
    row *r = &rows[i];
    if (r->status == ROW_FAILED) {
      step(r, i, n, "skipped: %s", r->error);
      continue;
    }
    if (cli_stop_signal()) {
      interrupt_row(r, "tuning");
      continue;
    }
    step(r, i, n, "tuning %s: %d trials with %s%s%s", heron_task_key(r->ht),
         s.trials, s.strategy, s.model ? " + " : "", s.model ? s.model : "");
    tune_row(&s, r);
    if (r->status == ROW_FAILED)
      step(r, i, n, "FAILED: %s", r->error);
    else if (r->status == ROW_INTERRUPTED)
      step(r, i, n, "%s; its log is kept and resumed next time", r->error);
    else
      step(r, i, n, "tuned: best %.2f GFLOP/s at trial %d of %d (%.0f s)",
           r->tune_gflops, r->best_trial, r->trials, r->tune_seconds);
  }

  /* Phase 2: compare, in this process: after a signal in phase 1, the rows
   * tuned to their budget before it (what finished); a signal in phase 2
   * stops the comparisons that are left. */
  int tune_sig = cli_stop_signal();
  if (dnn_start() != 0) {
    fprintf(stderr, "bench_suite: cannot create a oneDNN CPU engine\n");
    return CLI_EXIT_FAILURE;
  }
  int bad = 0;
  for (int i = 0; i < n; i++) {
    row *r = &rows[i];
    if (r->status == ROW_OK && !tune_sig && cli_stop_signal())
      interrupt_row(r, "the comparison");
    if (r->status == ROW_INTERRUPTED) {
      bad = 1;
      continue;
    }
    if (r->status != ROW_FAILED) {
      if (s.no_tune)
        read_emitted(&s, r);
      step(r, i, n, "comparing with the baselines");
      if (strcmp(su.dtype, "fp32"))
        compare_row_lowp(&s, &su, r);
      else
        compare_row(&s, r);
    }
    if (r->status == ROW_FAILED) {
      step(r, i, n, "FAILED: %s", r->error);
      bad = 1;
      continue;
    }
    step(r, i, n, "Heron-C %.3g GFLOP/s, %s %.3g GFLOP/s, ratio %.3g%s%s",
         r->heron_gflops, r->base, r->base_gflops,
         r->heron_gflops / r->base_gflops,
         r->status == ROW_MISMATCH ? "; MISMATCH: outputs differ" : "",
         r->status == ROW_OK ? "; outputs agree" : "");
    if (r->bytes > 0)
      step(r, i, n,
           "memory-bound: Heron-C %.1f GB/s, %s %.1f GB/s, STREAM copy %.1f "
           "GB/s",
           r->heron_gbs, r->base, r->base_gbs, r->copy_gbs);
    bad |= r->status != ROW_OK;
  }
  set_threads(cpu_count());

  char path[CLI_PATH_BUF];
  snprintf(path, sizeof path, "%s/results.md", s.out);
  FILE *md = fopen(path, "w");
  snprintf(path, sizeof path, "%s/results.csv", s.out);
  FILE *csv = fopen(path, "w");
  if (!md || !csv) {
    fprintf(stderr, "bench_suite: cannot write the results into %s: %s\n",
            s.out, strerror(errno));
    return CLI_EXIT_FAILURE;
  }
  printf("\n");
  write_markdown(stdout, &s, &su, rows, n);
  write_markdown(md, &s, &su, rows, n);
  write_csv(csv, &s, &su, rows, n);
  int werr = fclose(md) != 0;
  werr |= fclose(csv) != 0;
  if (werr)
    fprintf(stderr, "bench_suite: error writing the results into %s\n", s.out);
  fprintf(stderr, "bench_suite: results in %s/results.md and results.csv\n",
          s.out);
  int sig = cli_stop_signal();
  if (sig) {
    int done = 0;
    for (int i = 0; i < n; i++)
      done += rows[i].status == ROW_OK || rows[i].status == ROW_MISMATCH;
    fprintf(stderr,
            "bench_suite: the benchmark was interrupted by %s with %d of %d "
            "rows compared; the results hold those.  Run the same command "
            "again to resume it (complete logs are not searched again, "
            "partial ones are resumed).\n",
            cli_signal_name(sig), done, n);
  }

  for (int i = 0; i < n; i++)
    heron_task_free(rows[i].ht);
  free(rows);
  dnn_stop();
  cli_free_all();
  if (sig)
    return cli_stop_status(sig);
  return bad || werr ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
