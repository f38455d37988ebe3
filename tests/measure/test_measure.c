/* tests/measure/test_measure.c - building and running candidates.
 *
 * Every test measures hand-written kernels for a small fp32 GEMM.  The
 * correct kernel is generated from the op's own description (its axes and
 * affine index maps), so the tests hold whatever tensor layout the op
 * module chooses; the broken kernels are that kernel with one thing wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/measure/measure.h"
#include "core/op/op.h"
#include "core/util/util.h"
#include "test.h"

/* Fast flags: the tests check behaviour, not speed.  OpenMP stays in so the
 * worker's OMP_NUM_THREADS handling and libgomp loading are exercised. */
#define TEST_CFLAGS "-O1 -fopenmp -fPIC -shared"

/* What to break in the generated kernel. */
enum variant {
  GOOD,        /* correct */
  WRONG_VALUE, /* one element off by one */
  NO_WRITE,    /* returns without touching the output */
  SEGFAULT,    /* writes through a NULL pointer */
  HANG,        /* never returns */
  SLOW,        /* correct, but each call sleeps 0.6 s */
  LATE_BREAK,  /* correct on the first call only */
  NO_SYMBOL,   /* exports the kernel under another name */
  NO_COMPILE,  /* not C */
  PRINT_LINE,  /* correct, and prints one short line on its first call */
  PRINT_WRONG, /* prints a line with a tab, a control byte and quotes on its
                  first call, and writes one value wrong */
  PRINT_FLOOD, /* correct, and writes 45 MiB to stdout on its first call */
  PREPACKED,   /* takes input 1 packed ahead (negated by heron_prepack) */
  PREPACK_HALF /* exports heron_prepack without heron_prepacked_elems */
};

/* What PRINT_LINE prints, and the size of PRINT_FLOOD's output. */
#define PRINTED_LINE "heron says hi\n"
#define FLOOD_BYTES (45LL << 20)

static int make_gemm(heron__op *op) {
  const int64_t shape[3] = {64, 48, 32};
  heron_error err = {0};
  int rc = heron__op_build("gemm", shape, 3, HERON__FP32, op, &err);
  if (rc != HERON_OK)
    fprintf(stderr, "gemm: %s\n", err.text);
  return rc;
}

/* The flat offset of tensor `t` at the loop point, as C source. */
static void index_expr(heron__buf *s, const heron__op *op,
                       const heron__tensor *t) {
  heron__buf_puts(s, "0");
  int64_t stride = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    heron__buf_printf(s, " + %lldL * (%lld", (long long)stride,
                      (long long)t->index[d].offset);
    for (int a = 0; a < op->naxes; a++)
      if (t->index[d].coef[a])
        heron__buf_printf(s, " + %lldL * a%d", (long long)t->index[d].coef[a],
                          a);
    heron__buf_puts(s, ")");
    stride *= t->dims[d];
  }
}

/* A naive fp32 kernel for `op`, broken as `v` says.  Free the result. */
static char *kernel_source(const heron__op *op, enum variant v) {
  heron__buf s = {0};
  if (v == NO_COMPILE) {
    heron__buf_puts(&s,
                    "this is not C;\n"
                    "int heron_kernel(void) { return undeclared_thing; }\n");
    return heron__buf_take(&s);
  }
  if (v == PRINT_LINE || v == PRINT_WRONG || v == PRINT_FLOOD)
    heron__buf_puts(&s, "#include <stdio.h>\n#include <string.h>\n");
  heron__buf_printf(&s, "void %s(void *const *bufs) {\n",
                    v == NO_SYMBOL ? "other_kernel" : "heron_kernel");
  heron__buf_printf(&s, "  float *out = bufs[%d];\n", op->ninputs);
  for (int i = 0; i < op->ninputs; i++)
    heron__buf_printf(&s, "  const float *in%d = bufs[%d];\n", i, i);
  if (v == NO_WRITE)
    heron__buf_puts(&s, "  (void)out;\n  return;\n");
  if (v == SEGFAULT)
    heron__buf_puts(&s, "  *(volatile float *)0 = 1.0f;\n");
  if (v == HANG)
    heron__buf_puts(&s, "  for (volatile int spin = 1; spin;) {}\n");
  if (v == SLOW)
    heron__buf_puts(&s, "  extern int usleep(unsigned);\n  usleep(600000);\n");
  heron__buf_printf(&s,
                    "  #pragma omp parallel for\n"
                    "  for (long o = 0; o < %lldL; o++) out[o] = 0;\n",
                    (long long)heron__tensor_elems(&op->out));
  /* The first (spatial, output-indexing) axis is split among threads, so
   * no two threads ever add into the same output element. */
  heron__buf_puts(&s, "  #pragma omp parallel for\n");
  for (int a = 0; a < op->naxes; a++)
    heron__buf_printf(&s, "  for (long a%d = 0; a%d < %lldL; a%d++)\n", a, a,
                      (long long)op->axes[a].extent, a);
  heron__buf_puts(&s, "  {\n    float p = 1.0f;\n");
  for (int i = 0; i < op->ninputs; i++) {
    /* The packed copy of input 1 holds its values negated. */
    heron__buf_printf(&s, "    p *= %sin%d[",
                      v == PREPACKED && i == 1 ? "-" : "", i);
    index_expr(&s, op, &op->in[i]);
    heron__buf_puts(&s, "];\n");
  }
  heron__buf_puts(&s, "    out[");
  index_expr(&s, op, &op->out);
  heron__buf_puts(&s, "] += p;\n  }\n");
  if (v == WRONG_VALUE || v == PRINT_WRONG)
    heron__buf_puts(&s, "  out[3] += 1.0f;\n");
  /* The output goes through stdio, as a kernel's debugging printf would:
   * the worker must flush it before it reports. */
  if (v == PRINT_LINE)
    heron__buf_puts(&s,
                    "  static int said;\n"
                    "  if (!said++) printf(\"%s\", \"heron says hi\\n\");\n");
  if (v == PRINT_WRONG)
    heron__buf_puts(&s, "  static int said;\n"
                        "  if (!said++) printf(\"tab\\there \\001'q'\\n\");\n");
  if (v == PRINT_FLOOD)
    heron__buf_printf(&s,
                      "  static int said;\n"
                      "  static char line[1 << 20];\n"
                      "  if (!said++) {\n"
                      "    memset(line, 'x', sizeof line);\n"
                      "    for (long i = 0; i < %lldL; i += sizeof line)\n"
                      "      fwrite(line, 1, sizeof line, stdout);\n"
                      "  }\n",
                      FLOOD_BYTES);
  if (v == LATE_BREAK)
    heron__buf_puts(&s, "  static int calls;\n"
                        "  if (++calls > 1) out[0] = 42.0f;\n");
  heron__buf_puts(&s, "}\n");
  long long n1 = heron__tensor_elems(&op->in[1]);
  if (v == PREPACKED)
    heron__buf_printf(&s,
                      "long long heron_prepacked_elems(int input) {\n"
                      "  return input == 1 ? %lldLL : 0;\n}\n",
                      n1);
  if (v == PREPACKED || v == PREPACK_HALF)
    heron__buf_printf(&s,
                      "void heron_prepack(int input, const void *src, "
                      "void *dst) {\n"
                      "  for (long i = 0; input == 1 && i < %lldL; i++)\n"
                      "    ((float *)dst)[i] = -((const float *)src)[i];\n}\n",
                      n1);
  return heron__buf_take(&s);
}

/* Options that keep each test short. */
static heron_measure_options quick_options(void) {
  heron_measure_options o;
  memset(&o, 0, sizeof o);
  o.number = 1;
  o.repeat = 3;
  o.min_repeat_ms = 2;
  o.timeout_s = 20;
  o.threads = 2;
  return o;
}

/* Builds kernel variants v[0..n) into c[0..n) (sources owned by `src`). */
static int build_variants(heron__bench *b, const enum variant *v, int n,
                          heron__candidate *c, char **src) {
  heron_error err = {0};
  for (int i = 0; i < n; i++) {
    src[i] = kernel_source(b->op, v[i]);
    memset(&c[i], 0, sizeof c[i]);
    c[i].source = src[i];
  }
  int rc = heron__build_all(b, c, n, &err);
  if (rc != HERON_OK)
    fprintf(stderr, "build_all: %s\n", err.text);
  return rc;
}

static void free_variants(heron__candidate *c, char **src, int n) {
  for (int i = 0; i < n; i++) {
    free(c[i].error);
    free(src[i]);
  }
}

/* What became of one variant: its build and, when it built, its run. */
typedef struct outcome {
  int build_status;
  char *build_error;
  heron_measurement m;
  char *run_error;
  double run_wall_s;
} outcome;

static int measure_variant(heron__bench *b, enum variant v, outcome *out) {
  memset(out, 0, sizeof *out);
  heron__candidate c;
  char *src;
  int rc = build_variants(b, &v, 1, &c, &src);
  free(src);
  if (rc != HERON_OK)
    return rc;
  out->build_status = c.status;
  out->build_error = c.error;
  if (c.status != HERON_MEAS_OK)
    return HERON_OK;
  heron_error err = {0};
  double t0 = heron__now();
  rc = heron__run_one(b, c.art.path, b->op->flops, &out->m, &out->run_error,
                      &err);
  out->run_wall_s = heron__now() - t0;
  if (rc != HERON_OK)
    fprintf(stderr, "run_one: %s\n", err.text);
  return rc;
}

static void outcome_free(outcome *o) {
  free(o->build_error);
  free(o->run_error);
}

static int bench_up(heron__bench *b, heron__op *op,
                    const heron_measure_options *o) {
  heron_error err = {0};
  if (make_gemm(op) != HERON_OK)
    return HERON_EINVAL;
  heron__toolchain tc = heron__toolchain_host(TEST_CFLAGS);
  int rc = heron__bench_init(b, op, &tc, o, &err);
  if (rc != HERON_OK)
    fprintf(stderr, "bench_init: %s\n", err.text);
  return rc;
}

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The number that follows `prefix` in `text`, or -1 when there is none.
 * Time bounds read the figures the runner reports (how long after the
 * worker started it was killed, how far into its run it stopped): they
 * measure the detection itself, where a wall time around the call would
 * also hold whatever a busy machine adds to the rest of the run. */
static double number_after(const char *text, const char *prefix) {
  const char *p = text ? strstr(text, prefix) : NULL;
  if (!p)
    return -1;
  char *end;
  double v = strtod(p + strlen(prefix), &end);
  return end == p + strlen(prefix) ? -1 : v;
}

TEST(defaults_fill_only_unset_fields) {
  heron_measure_options o;
  memset(&o, 0, sizeof o);
  o.repeat = 7;
  o.cc = "mycc";
  heron__measure_defaults(&o);
  CHECK_EQ(o.number, 3);
  CHECK_EQ(o.repeat, 7);
  CHECK(o.min_repeat_ms == 100);
  CHECK(o.timeout_s == 30);
  CHECK_EQ(o.build_jobs, heron__ncores());
  CHECK_EQ(o.threads, heron__ncores());
  CHECK(strcmp(o.cc, "mycc") == 0);
  CHECK_EQ(o.flush_cache, 0);

  memset(&o, 0, sizeof o);
  heron__measure_defaults(&o);
  const char *env = getenv("CC");
  CHECK(strcmp(o.cc, env && *env ? env : "cc") == 0);
}

TEST(temp_work_dir_is_removed_at_free_unless_keep_files) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  char dir[512];
  const char *dirp = dir;
  snprintf(dir, sizeof dir, "%s", b.work_dir);
  CHECK(is_dir(dir));
  CHECK_STR_CONTAINS(dirp, "heron-");
  heron__bench_free(&b);
  CHECK(!is_dir(dir));

  o.keep_files = 1;
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  snprintf(dir, sizeof dir, "%s", b.work_dir);
  heron__bench_free(&b);
  CHECK(is_dir(dir));
  heron__rmtree(dir);
}

TEST(correct_kernel_measures_ok_with_consistent_gflops) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  o.flush_cache = 1;
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, GOOD, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_MSG(r.build_status == HERON_MEAS_OK, "%s", r.build_error);
  CHECK_MSG(r.m.status == HERON_MEAS_OK, "%s", r.run_error);
  CHECK(r.run_error == NULL);
  CHECK(strcmp(r.m.error, "") == 0);
  CHECK(r.m.seconds > 0);
  CHECK(r.m.max_error >= 0 && r.m.max_error < 1e-3);
  double expect = op.flops / r.m.seconds / 1e9;
  CHECK_MSG(fabs(r.m.gflops - expect) <= 1e-9 * expect, "%g vs %g", r.m.gflops,
            expect);
  outcome_free(&r);
}

/* A kernel that takes an input packed ahead (prepack) gets the copy
 * heron_prepack made, untimed, and is checked as any other: here the copy
 * holds the input negated, which only the copy's reader gets right. */
TEST(kernel_taking_an_input_packed_ahead_gets_the_packed_copy) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, PREPACKED, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_MSG(r.build_status == HERON_MEAS_OK, "%s", r.build_error);
  CHECK_MSG(r.m.status == HERON_MEAS_OK, "%s", r.run_error);
  CHECK(r.m.seconds > 0 && r.m.max_error < 1e-3);
  outcome_free(&r);
}

TEST(kernel_exporting_half_of_the_prepack_interface_is_runtime_error) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, PREPACK_HALF, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_EQ(r.m.status, HERON_MEAS_RUNTIME_ERROR);
  CHECK_STR_CONTAINS(r.run_error,
                     "exports heron_prepack without heron_prepacked_elems");
  outcome_free(&r);
}

TEST(kernel_writing_a_wrong_value_is_wrong_result) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, WRONG_VALUE, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_EQ(r.build_status, HERON_MEAS_OK);
  CHECK_EQ(r.m.status, HERON_MEAS_WRONG_RESULT);
  CHECK(r.m.seconds == 0 && r.m.gflops == 0);
  CHECK(r.m.max_error > 0);
  CHECK_STR_CONTAINS(r.run_error, "wrong result");
  CHECK_STR_CONTAINS(r.run_error, "element 3");
  CHECK(r.m.error == r.run_error);
  outcome_free(&r);
}

TEST(kernel_writing_nothing_is_wrong_result_with_finite_error) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, NO_WRITE, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_EQ(r.build_status, HERON_MEAS_OK);
  CHECK_EQ(r.m.status, HERON_MEAS_WRONG_RESULT);
  CHECK_STR_CONTAINS(r.run_error, "element 0");
  /* The output was left NaN; the error must still be writable as JSON. */
  CHECK(isfinite(r.m.max_error) && r.m.max_error == DBL_MAX);
  outcome_free(&r);
}

TEST(kernel_correct_only_on_first_call_is_caught_after_timing) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, LATE_BREAK, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_EQ(r.m.status, HERON_MEAS_WRONG_RESULT);
  CHECK_STR_CONTAINS(r.run_error, "after timing");
  outcome_free(&r);
}

TEST(crashing_kernel_is_runtime_error_naming_sigsegv_and_next_still_runs) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  enum variant v[2] = {SEGFAULT, GOOD};
  heron__candidate c[2];
  char *src[2];
  int rc = build_variants(&b, v, 2, c, src);
  heron_measurement m[2];
  char *e[2] = {NULL, NULL};
  heron_error err = {0}, *ep = &err;
  int rc0 = HERON_EINTERNAL, rc1 = HERON_EINTERNAL;
  if (rc == HERON_OK && c[0].status == HERON_MEAS_OK &&
      c[1].status == HERON_MEAS_OK) {
    rc0 = heron__run_one(&b, c[0].art.path, op.flops, &m[0], &e[0], &err);
    rc1 = heron__run_one(&b, c[1].art.path, op.flops, &m[1], &e[1], &err);
  }
  free_variants(c, src, 2);
  heron__bench_free(&b);
  CHECK_OK(rc0, ep);
  CHECK_OK(rc1, ep);
  CHECK_EQ(m[0].status, HERON_MEAS_RUNTIME_ERROR);
  CHECK_STR_CONTAINS(e[0], "kernel crashed with SIGSEGV (signal 11)");
  CHECK_MSG(m[1].status == HERON_MEAS_OK, "%s", e[1]);
  CHECK(m[1].seconds > 0);
  free(e[0]);
  free(e[1]);
}

TEST(hanging_kernel_times_out_within_the_limit) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  o.timeout_s = 1;
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, HANG, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_MSG(r.build_status == HERON_MEAS_OK, "%s", r.build_error);
  CHECK_EQ(r.m.status, HERON_MEAS_TIMEOUT);
  CHECK_STR_CONTAINS(r.run_error, "run exceeded the 1.0 s timeout");
  /* Killed at the deadline: the runner's own figure, from the fork to the
   * kill, is the timeout plus how late the runner woke for it (under a
   * second even on a loaded machine; the poll sleeps until the deadline).
   * The wall time around the call only has to hold that, and is bounded
   * at 10x the timeout against a kill that never comes. */
  double killed = number_after(r.run_error, "(killed ");
  fprintf(stderr, "killed %.2f s after the start; the call took %.2f s\n",
          killed, r.run_wall_s);
  CHECK_MSG(killed >= 1.0 && killed < 2.0, "killed %.2f s after the start: %s",
            killed, r.run_error);
  /* (killed is printed to 0.01 s.) */
  CHECK_MSG(r.run_wall_s + 0.005 >= killed && r.run_wall_s < 10.0,
            "took %.2f s", r.run_wall_s);
  outcome_free(&r);
}

TEST(kernel_too_slow_for_the_timeout_is_stopped_after_one_call) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  o.timeout_s = 2; /* 3 timed calls of 0.6 s cannot fit after the first */
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, SLOW, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_EQ(r.m.status, HERON_MEAS_TIMEOUT);
  CHECK_STR_CONTAINS(r.run_error, "run would exceed the 2.0 s timeout");
  /* After one call: the worker stopped (by its own clock) after the 0.6 s
   * call it reports and before a second one could have ended.  Both times
   * come from the worker, so load stretches them alike. */
  double call = number_after(r.run_error, "one call takes ");
  double stopped = number_after(r.run_error, "(stopped ");
  fprintf(stderr, "one call %.2f s, stopped %.2f s into the run\n", call,
          stopped);
  CHECK_MSG(call >= 0.6, "%s", r.run_error);
  /* (stopped is printed to 0.01 s, the call to 3 digits.) */
  CHECK_MSG(stopped + 0.005 >= call && stopped < 2 * call, "%s", r.run_error);
  outcome_free(&r);
}

TEST(uncompilable_source_is_compile_error_with_the_compiler_message) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, NO_COMPILE, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_EQ(r.build_status, HERON_MEAS_COMPILE_ERROR);
  CHECK_STR_CONTAINS(r.build_error, "undeclared_thing");
  CHECK_STR_CONTAINS(r.build_error, "error");
  outcome_free(&r);
}

TEST(missing_kernel_symbol_is_runtime_error_naming_the_symbol) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, NO_SYMBOL, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_EQ(r.build_status, HERON_MEAS_OK);
  CHECK_EQ(r.m.status, HERON_MEAS_RUNTIME_ERROR);
  CHECK_STR_CONTAINS(r.run_error, "heron_kernel");
  outcome_free(&r);
}

TEST(missing_shared_object_is_runtime_error_with_the_loader_message) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  heron_measurement m;
  char *e = NULL;
  heron_error err = {0}, *ep = &err;
  char path[600];
  snprintf(path, sizeof path, "%s/absent.so", b.work_dir);
  int rc = heron__run_one(&b, path, op.flops, &m, &e, &err);
  heron__bench_free(&b);
  CHECK_OK(rc, ep);
  CHECK_EQ(m.status, HERON_MEAS_RUNTIME_ERROR);
  CHECK_STR_CONTAINS(e, "cannot load the kernel");
  CHECK_STR_CONTAINS(e, "absent.so");
  free(e);
}

TEST(parallel_build_gives_each_candidate_its_own_status) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  o.build_jobs = 3;
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  enum variant v[6] = {GOOD,       NO_COMPILE, WRONG_VALUE,
                       NO_COMPILE, NO_SYMBOL,  GOOD};
  const int want_build[6] = {HERON_MEAS_OK, HERON_MEAS_COMPILE_ERROR,
                             HERON_MEAS_OK, HERON_MEAS_COMPILE_ERROR,
                             HERON_MEAS_OK, HERON_MEAS_OK};
  const int want_run[6] = {
      HERON_MEAS_OK, -1, HERON_MEAS_WRONG_RESULT, -1, HERON_MEAS_RUNTIME_ERROR,
      HERON_MEAS_OK};
  heron__candidate c[6];
  char *src[6];
  int rc = build_variants(&b, v, 6, c, src);
  int build_status[6], run_status[6], distinct = 1;
  double bsec[6];
  heron_error err = {0}, *ep = &err;
  int run_rc = HERON_OK;
  for (int i = 0; i < 6; i++) {
    build_status[i] = c[i].status;
    bsec[i] = c[i].build_seconds;
    run_status[i] = -1;
    for (int j = 0; j < i; j++)
      distinct &= strcmp(c[i].art.path, c[j].art.path) != 0;
    if (rc == HERON_OK && c[i].status == HERON_MEAS_OK && run_rc == HERON_OK) {
      heron_measurement m;
      char *e = NULL;
      run_rc = heron__run_one(&b, c[i].art.path, op.flops, &m, &e, &err);
      run_status[i] = m.status;
      free(e);
    }
  }
  free_variants(c, src, 6);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_OK(run_rc, ep);
  CHECK(distinct);
  for (int i = 0; i < 6; i++) {
    CHECK_MSG(build_status[i] == want_build[i], "candidate %d built %d", i,
              build_status[i]);
    CHECK_MSG(run_status[i] == want_run[i], "candidate %d ran %d", i,
              run_status[i]);
    CHECK(bsec[i] > 0);
  }
}

/* 1 when process `pid` exists and is not a zombie (a killed child of a
 * killed shell may wait a moment for init to reap it). */
static int process_running(int pid) {
  char path[64], stat[512];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t n = fread(stat, 1, sizeof stat - 1, f);
  fclose(f);
  stat[n] = '\0';
  const char *close = strrchr(stat, ')');
  return close && close[1] == ' ' && close[2] != 'Z' && close[2] != 'X';
}

TEST(hanging_compiler_is_build_timeout) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  o.timeout_s = 1;
  o.build_jobs = 2;
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  /* A "compiler" that never finishes: the timeout must kill it and the
   * sleep it started, which shares its process group.  Each writes its
   * pid to `pids`, so the test can see both gone. */
  char cc[600], pids[600], script[1400];
  snprintf(cc, sizeof cc, "%s/slow-cc.sh", b.work_dir);
  snprintf(pids, sizeof pids, "%s/slow-cc.pids", b.work_dir);
  snprintf(script, sizeof script,
           "#!/bin/sh\necho $$ >>'%s'\nsleep 30 &\necho $! >>'%s'\nwait\n",
           pids, pids);
  heron_error err = {0}, *ep = &err;
  int wrc = heron__write_file(cc, script, strlen(script), &err);
  if (wrc == HERON_OK)
    chmod(cc, 0755);
  b.opts.cc = cc;
  heron__candidate c[2];
  char *src[2];
  enum variant v[2] = {GOOD, GOOD};
  double t0 = heron__now();
  int rc = wrc == HERON_OK ? build_variants(&b, v, 2, c, src) : wrc;
  double wall = heron__now() - t0;
  int st0 = rc == HERON_OK ? c[0].status : -1;
  int st1 = rc == HERON_OK ? c[1].status : -1;
  char msg[200] = "";
  if (rc == HERON_OK && c[0].error)
    snprintf(msg, sizeof msg, "%s", c[0].error);
  if (rc == HERON_OK)
    free_variants(c, src, 2);
  /* Two builds, each a shell and its sleep: four processes, all gone.  A
   * SIGKILLed process still has to be scheduled to exit, which takes a
   * moment on a busy machine: they are given up to 10 s (a third of the
   * sleep a process that was never killed would still be in). */
  int npids = 0, alive = 0, pid[8];
  FILE *f = fopen(pids, "r");
  while (f && npids < 8 && fscanf(f, "%d", &pid[npids]) == 1)
    npids++;
  if (f)
    fclose(f);
  for (double until = heron__now() + 10.0;;) {
    alive = 0;
    for (int i = 0; i < npids; i++)
      alive += process_running(pid[i]);
    if (!alive || heron__now() > until)
      break;
    usleep(10000);
  }
  heron__bench_free(&b);
  CHECK_OK(rc, ep);
  CHECK_EQ(st0, HERON_MEAS_TIMEOUT);
  CHECK_EQ(st1, HERON_MEAS_TIMEOUT);
  const char *text = msg;
  CHECK_STR_CONTAINS(text, "build exceeded the 1.0 s timeout");
  fprintf(stderr, "both builds stopped after %.2f s\n", wall);
  CHECK_EQ(npids, 4);
  CHECK_MSG(alive == 0, "%d of the compilers' processes still run", alive);
  /* Killed at the timeout, not after the 30 s sleep: at least the 1 s
   * limit, and at most 10x it (a safety bound a loaded machine keeps; the
   * kill itself is what the process check above shows). */
  CHECK_MSG(wall >= 1.0 && wall < 10.0, "took %.2f s", wall);
}

TEST(missing_compiler_is_compile_error_naming_it) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  o.cc = "/nonexistent/heron-cc";
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  outcome r;
  int rc = measure_variant(&b, GOOD, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_EQ(r.build_status, HERON_MEAS_COMPILE_ERROR);
  CHECK_STR_CONTAINS(r.build_error, "/nonexistent/heron-cc");
  outcome_free(&r);
}

TEST(runner_process_ends_when_the_bench_is_freed) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  pid_t pid = b.runner_pid;
  CHECK(pid > 0);
  CHECK_EQ(kill(pid, 0), 0);
  heron__bench_free(&b);
  /* Reaped by bench_free: the pid no longer names our child. */
  CHECK(waitpid(pid, NULL, WNOHANG) < 0);
}

TEST(dead_runner_is_a_machinery_error_not_a_crash) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  kill(b.runner_pid, SIGKILL);
  waitpid(b.runner_pid, NULL, 0);
  b.runner_pid = 0;
  heron_measurement m;
  memset(&m, 0, sizeof m);
  char *text = NULL;
  heron_error err = {0};
  int rc = heron__run_one(&b, "/nonexistent.so", 1.0, &m, &text, &err);
  heron__bench_free(&b);
  CHECK_EQ(rc, HERON_ERUN);
  CHECK_STR_CONTAINS(err.text, "runner");
  free(text);
}

/* ---- the toolchain check and environment failures ----------------------- */

/* Writes an executable "compiler" script (mode `mode`) at `path`. */
static int write_script(const char *path, const char *text, mode_t mode) {
  if (heron__write_file(path, text, strlen(text), NULL) != HERON_OK)
    return -1;
  return chmod(path, mode);
}

/* A compiler that fails as gcc does when the disk is full. */
static const char full_disk_cc[] =
    "#!/bin/sh\n"
    "echo 'cc1: fatal error: error writing to /tmp/ccX.s: No space left on "
    "device' >&2\n"
    "echo 'No space left on device'\n"
    "exit 1\n";

/* 1 when `dir` holds a file whose name starts with `prefix`. */
static int has_file_starting(const char *dir, const char *prefix) {
  char cmd[800];
  snprintf(cmd, sizeof cmd, "ls '%s' | grep -q '^%s'", dir, prefix);
  return system(cmd) == 0;
}

TEST(toolchain_check_passes_with_the_system_compiler_and_leaves_no_files) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  /* The baseline: one candidate built, the way the check builds its
   * trivial kernel, here and now (a loaded machine slows both alike),
   * compiled rather than copied from a build cache tools/test.sh set. */
  unsetenv("HERON_BUILD_CACHE");
  heron__candidate c;
  char *src;
  double t0 = heron__now();
  int brc = build_variants(&b, (enum variant[]){GOOD}, 1, &c, &src);
  double build = heron__now() - t0;
  if (brc == HERON_OK)
    free_variants(&c, &src, 1);
  int seq0 = b.seq;
  heron_error err = {0}, *ep = &err;
  t0 = heron__now();
  int rc = heron__bench_check_toolchain(&b, &err);
  double wall = heron__now() - t0;
  int seq = b.seq;
  int left = has_file_starting(b.work_dir, "toolchain-check");
  heron__bench_free(&b);
  CHECK_OK(brc, NULL);
  CHECK_OK(rc, ep);
  fprintf(stderr, "check %.2f s, one build %.2f s\n", wall, build);
  /* The check costs about one build: bounded at 5x the baseline. */
  CHECK_MSG(wall < 5 * build, "took %.2f s, one build %.2f s", wall, build);
  seq -= seq0;
  CHECK_EQ(seq, 0); /* the candidates' numbering is untouched */
  CHECK(!left);
}

TEST(toolchain_check_fails_naming_a_missing_compiler) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  o.cc = "/nonexistent/gcc";
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  heron_error err = {0};
  int rc = heron__bench_check_toolchain(&b, &err);
  heron_error err2 = {0};
  b.opts.cc = "heron-no-such-compiler";
  int rc2 = heron__bench_check_toolchain(&b, &err2);
  heron__bench_free(&b);
  CHECK_EQ(rc, HERON_EBUILD);
  CHECK_STR_CONTAINS(err.text, "compiler '/nonexistent/gcc' not found");
  CHECK_EQ(rc2, HERON_EBUILD);
  CHECK_STR_CONTAINS(err2.text,
                     "compiler 'heron-no-such-compiler' not found in PATH");
}

TEST(toolchain_check_fails_on_a_compiler_reporting_a_full_disk) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  char cc[600];
  snprintf(cc, sizeof cc, "%s/full-disk-cc.sh", b.work_dir);
  int wrc = write_script(cc, full_disk_cc, 0755);
  b.opts.cc = cc;
  heron_error err = {0};
  int rc = wrc == 0 ? heron__bench_check_toolchain(&b, &err) : HERON_EIO;
  heron__bench_free(&b);
  CHECK_EQ(rc, HERON_EBUILD);
  CHECK_STR_CONTAINS(err.text,
                     "full-disk-cc.sh' cannot build a trivial kernel");
  CHECK_STR_CONTAINS(err.text, "No space left on device");
}

TEST(toolchain_check_fails_on_a_compiler_that_is_not_executable) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  char cc[600];
  snprintf(cc, sizeof cc, "%s/plain-file-cc", b.work_dir);
  /* No execute bit at all: exec refuses it even to root. */
  int wrc = write_script(cc, "#!/bin/sh\nexit 0\n", 0644);
  b.opts.cc = cc;
  heron_error err = {0};
  int rc = wrc == 0 ? heron__bench_check_toolchain(&b, &err) : HERON_EIO;
  heron__bench_free(&b);
  CHECK_EQ(rc, HERON_EBUILD);
  CHECK_STR_CONTAINS(err.text, "plain-file-cc' is not executable");
}

TEST(toolchain_check_fails_when_the_work_folder_is_full) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  /* /dev/full opens fine and fails every write with ENOSPC: the check's
   * source file, linked to it, is a file on a full disk. */
  char src[600];
  snprintf(src, sizeof src, "%s/toolchain-check-%ld.c", b.work_dir,
           (long)getpid());
  int lrc = symlink("/dev/full", src);
  heron_error err = {0};
  int rc = lrc == 0 ? heron__bench_check_toolchain(&b, &err) : HERON_EIO;
  char want[600];
  snprintf(want, sizeof want, "cannot write in work folder %s: ", b.work_dir);
  heron__bench_free(&b);
  CHECK_EQ(rc, HERON_EBUILD);
  CHECK_STR_CONTAINS(err.text, want);
  char file[64];
  snprintf(file, sizeof file, "No space left on device (toolchain-check-%ld.c)",
           (long)getpid());
  CHECK_STR_CONTAINS(err.text, file);
}

/* Builds variants with the bench's compiler and copies out what the tests
 * below look at. */
typedef struct built {
  int rc, status, env_failure;
  char error[600];
} built;

static void build_and_keep(heron__bench *b, const enum variant *v, int n,
                           built *out) {
  heron__candidate c[4];
  char *src[4];
  int rc = build_variants(b, v, n, c, src);
  for (int i = 0; i < n; i++) {
    out[i].rc = rc;
    out[i].status = c[i].status;
    out[i].env_failure = c[i].env_failure;
    snprintf(out[i].error, sizeof out[i].error, "%s",
             c[i].error ? c[i].error : "");
  }
  free_variants(c, src, n);
}

TEST(build_with_a_missing_compiler_is_an_environment_failure) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  o.cc = "/nonexistent/gcc";
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  enum variant v = GOOD;
  built r;
  build_and_keep(&b, &v, 1, &r);
  heron__bench_free(&b);
  CHECK_OK(r.rc, NULL);
  CHECK_EQ(r.status, HERON_MEAS_COMPILE_ERROR);
  CHECK_EQ(r.env_failure, 1);
  const char *e = r.error;
  CHECK_STR_CONTAINS(e, "compiler '/nonexistent/gcc' not found");
}

TEST(build_with_a_compiler_reporting_a_full_disk_is_an_environment_failure) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  char cc[600];
  snprintf(cc, sizeof cc, "%s/full-disk-cc.sh", b.work_dir);
  int wrc = write_script(cc, full_disk_cc, 0755);
  b.opts.cc = cc;
  enum variant v[2] = {GOOD, NO_COMPILE};
  built r[2];
  if (wrc == 0)
    build_and_keep(&b, v, 2, r);
  heron__bench_free(&b);
  CHECK_EQ(wrc, 0);
  for (int i = 0; i < 2; i++) {
    CHECK_OK(r[i].rc, NULL);
    CHECK_EQ(r[i].status, HERON_MEAS_COMPILE_ERROR);
    CHECK_EQ(r[i].env_failure, 1);
    const char *e = r[i].error;
    CHECK_STR_CONTAINS(e, "No space left on device");
  }
}

TEST(bad_source_with_a_working_compiler_is_not_an_environment_failure) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  enum variant v[2] = {NO_COMPILE, GOOD};
  built r[2];
  build_and_keep(&b, v, 2, r);
  heron__bench_free(&b);
  CHECK_OK(r[0].rc, NULL);
  CHECK_EQ(r[0].status, HERON_MEAS_COMPILE_ERROR);
  CHECK_EQ(r[0].env_failure, 0);
  const char *e = r[0].error;
  CHECK_STR_CONTAINS(e, "undeclared_thing");
  CHECK_EQ(r[1].status, HERON_MEAS_OK);
  CHECK_EQ(r[1].env_failure, 0);
}

TEST(unwritable_source_fails_only_its_candidate_as_an_environment_failure) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  /* The next candidate's source lands on a full disk (/dev/full). */
  char src[600];
  snprintf(src, sizeof src, "%s/k%d.c", b.work_dir, b.seq);
  int lrc = symlink("/dev/full", src);
  enum variant v[2] = {GOOD, GOOD};
  built r[2];
  if (lrc == 0)
    build_and_keep(&b, v, 2, r);
  heron__bench_free(&b);
  CHECK_EQ(lrc, 0);
  CHECK_OK(r[0].rc, NULL); /* the batch goes on: no HERON_EIO any more */
  CHECK_EQ(r[0].status, HERON_MEAS_COMPILE_ERROR);
  CHECK_EQ(r[0].env_failure, 1);
  const char *e = r[0].error;
  CHECK_STR_CONTAINS(e, "cannot write in work folder");
  CHECK_STR_CONTAINS(e, "No space left on device (k0.c)");
  CHECK_MSG(r[1].status == HERON_MEAS_OK, "%s", r[1].error);
  CHECK_EQ(r[1].env_failure, 0);
}

/* ---- what a kernel prints ------------------------------------------------ */

/* This process's stdout sent to a file while a test measures: the runner,
 * forked at bench_init, inherits it, so anything a worker lets through
 * lands in the file.  No CHECK may run between trap and release (a failed
 * CHECK returns and would leave stdout redirected). */
typedef struct stdout_trap {
  int saved;
  char path[64];
} stdout_trap;

static int stdout_trap_set(stdout_trap *t) {
  fflush(stdout);
  snprintf(t->path, sizeof t->path, "/tmp/heron-test-stdout-%d", (int)getpid());
  int fd = open(t->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  t->saved = fd >= 0 ? dup(STDOUT_FILENO) : -1;
  if (t->saved < 0 || dup2(fd, STDOUT_FILENO) < 0) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  close(fd);
  return 0;
}

/* Restores stdout; returns the bytes that reached the trap. */
static long stdout_trap_release(stdout_trap *t) {
  fflush(stdout);
  dup2(t->saved, STDOUT_FILENO);
  close(t->saved);
  struct stat st;
  long n = stat(t->path, &st) == 0 ? (long)st.st_size : -1;
  unlink(t->path);
  return n;
}

/* Measures variant `v` with stdout trapped; `leaked` gets what reached the
 * test's stdout. */
static int measure_trapped(enum variant v, outcome *r, long *leaked) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  stdout_trap t;
  memset(r, 0, sizeof *r);
  if (stdout_trap_set(&t) != 0)
    return HERON_EIO;
  int rc = bench_up(&b, &op, &o);
  if (rc == HERON_OK) {
    rc = measure_variant(&b, v, r);
    heron__bench_free(&b);
  }
  *leaked = stdout_trap_release(&t);
  return rc;
}

TEST(kernel_printing_a_line_is_ok_with_its_output_in_the_error_text) {
  outcome r;
  long leaked = -1;
  int rc = measure_trapped(PRINT_LINE, &r, &leaked);
  CHECK_OK(rc, NULL);
  CHECK_EQ(leaked, 0);
  CHECK_MSG(r.m.status == HERON_MEAS_OK, "%s", r.run_error);
  CHECK(r.m.seconds > 0);
  CHECK(r.m.max_error >= 0 && r.m.max_error < 1e-3);
  CHECK_STR_CONTAINS(r.run_error, "stdout: 14 bytes: 'heron says hi\\n'");
  CHECK(strcmp(r.m.error, r.run_error) == 0);
  outcome_free(&r);
}

TEST(kernel_output_follows_the_failure_text_with_odd_bytes_escaped) {
  outcome r;
  long leaked = -1;
  int rc = measure_trapped(PRINT_WRONG, &r, &leaked);
  CHECK_OK(rc, NULL);
  CHECK_EQ(leaked, 0);
  CHECK_EQ(r.m.status, HERON_MEAS_WRONG_RESULT);
  CHECK_STR_CONTAINS(r.run_error, "wrong result after the first call");
  CHECK_STR_CONTAINS(r.run_error,
                     "; stdout: 14 bytes: 'tab\\there \\x01\\'q\\'\\n'");
  outcome_free(&r);
}

/* Seconds to move FLOOD_BYTES through a pipe from a forked child that
 * writes them as PRINT_FLOOD does (fwrite of 1 MiB blocks) to this
 * process reading them, the pipe widened as the runner widens its own:
 * what draining a flood costs on this machine now.  -1 on failure. */
static double pipe_baseline(void) {
  int p[2];
  if (pipe(p) != 0)
    return -1;
#ifdef F_SETPIPE_SZ
  fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
#endif
  double t0 = heron__now();
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    close(p[0]);
    FILE *f = fdopen(p[1], "w");
    static char line[1 << 20];
    memset(line, 'x', sizeof line);
    for (long long i = 0; f && i < FLOOD_BYTES; i += (long long)sizeof line)
      fwrite(line, 1, sizeof line, f);
    if (f)
      fclose(f);
    _exit(0);
  }
  close(p[1]);
  static char buf[1 << 16];
  long long got = 0;
  for (ssize_t n; (n = read(p[0], buf, sizeof buf)) != 0;)
    if (n > 0)
      got += n;
    else if (errno != EINTR)
      break;
  close(p[0]);
  waitpid(pid, NULL, 0);
  return got == FLOOD_BYTES ? heron__now() - t0 : -1;
}

TEST(kernel_printing_45_mib_is_drained_counted_and_not_slowed) {
  outcome good, r;
  long leaked_good = -1, leaked = -1;
  int rc_good = measure_trapped(GOOD, &good, &leaked_good);
  double pipe_s = pipe_baseline();
  int rc = measure_trapped(PRINT_FLOOD, &r, &leaked);
  CHECK_OK(rc_good, NULL);
  CHECK_OK(rc, NULL);
  CHECK_EQ(leaked_good, 0);
  CHECK_EQ(leaked, 0);
  CHECK_MSG(r.m.status == HERON_MEAS_OK, "%s", r.run_error);
  CHECK(r.m.max_error >= 0 && r.m.max_error < 1e-3);
  char want[96];
  snprintf(want, sizeof want, "stdout: %lld bytes (dropped): 'xxxxxxxx",
           FLOOD_BYTES);
  CHECK_STR_CONTAINS(r.run_error, want);
  CHECK_STR_CONTAINS(r.run_error, "xxx...'");
  CHECK_MSG(strlen(r.run_error) < 200, "%zu bytes of error text",
            strlen(r.run_error));
  /* Not slowed: the flood's run costs at most a quiet kernel's run plus
   * what moving 45 MiB through a pipe costs here and now (both measured in
   * this test, so a busy machine stretches the bound with the run), each
   * with a 4x margin. */
  fprintf(stderr, "flood run %.2f s, quiet run %.2f s, pipe %.2f s\n",
          r.run_wall_s, good.run_wall_s, pipe_s);
  CHECK_MSG(pipe_s > 0, "the pipe baseline failed");
  CHECK_MSG(r.run_wall_s < 4 * (good.run_wall_s + pipe_s),
            "%.2f s against %.2f s quiet and %.2f s through a pipe",
            r.run_wall_s, good.run_wall_s, pipe_s);
  outcome_free(&good);
  outcome_free(&r);
}

/* ---- last: OpenMP in the tuner ------------------------------------------ */

/* This test stays last in the file: once it has run, libgomp in this
 * process has a thread pool, and a bench made afterwards would fork its
 * runner from a process with threads, which is exactly what the engine
 * must never do (measure.h).  ctest runs each test alone; the file run as
 * one program needs the order. */

/* Runs a parallel region in this (the tuner's) process, as XGBoost does
 * when the engine fits it: afterwards libgomp believes its thread pool
 * exists, and a worker forked from this process would wait forever in its
 * first parallel region.  Workers come from the runner, forked at
 * bench_init while the process was single-threaded, so they must not. */
static double spin_up_openmp(void) {
  double s = 0;
#pragma omp parallel for reduction(+ : s) num_threads(2)
  for (int i = 0; i < 100000; i++)
    s += i;
  return s;
}

TEST(kernel_runs_after_the_tuner_started_openmp_threads) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  o.timeout_s = 10;
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  CHECK(spin_up_openmp() > 0);
  outcome r;
  int rc = measure_variant(&b, GOOD, &r);
  heron__bench_free(&b);
  CHECK_OK(rc, NULL);
  CHECK_MSG(r.m.status == HERON_MEAS_OK, "%s", r.run_error);
  outcome_free(&r);
}

/* ---- The build cache (HERON_BUILD_CACHE) -------------------------------- */

/* Lines in a file (0 when it does not exist). */
static int count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  int n = 0, ch;
  while (f && (ch = fgetc(f)) != EOF)
    n += ch == '\n';
  if (f)
    fclose(f);
  return n;
}

/* Builds variant v with the bench's compiler and runs it; the build's and
 * the run's status. */
static void build_and_run(heron__bench *b, enum variant v, int *bst, int *ran) {
  outcome r;
  *bst = *ran = -1;
  if (measure_variant(b, v, &r) == HERON_OK) {
    *bst = r.build_status;
    *ran = r.m.status;
  }
  outcome_free(&r);
}

/* A compiler is run once per source, command and machine: the second build
 * of the same source is copied from the cache (and still run and checked:
 * a cached wrong kernel is still wrong), another source or other flags
 * compile again, a compiler that edits the source is never cached, a
 * damaged entry is a miss, and a cache folder that cannot be made is no
 * error.  The compiler is a script that counts its runs. */
TEST(build_cache_compiles_each_source_once_and_only_what_it_can_trust) {
  heron__op op;
  heron__bench b;
  heron_measure_options o = quick_options();
  CHECK_OK(bench_up(&b, &op, &o), NULL);
  const char *old = getenv("HERON_BUILD_CACHE");
  char saved[1024] = "";
  if (old)
    snprintf(saved, sizeof saved, "%s", old);
  char cache[600], count[600], cc[600], editor[600], body[1400];
  snprintf(cache, sizeof cache, "%s/cache", b.work_dir);
  snprintf(count, sizeof count, "%s/count", b.work_dir);
  setenv("HERON_BUILD_CACHE", cache, 1);
  snprintf(body, sizeof body, "#!/bin/sh\necho run >>'%s'\nexec cc \"$@\"\n",
           count);
  snprintf(cc, sizeof cc, "%s/count-cc.sh", b.work_dir);
  snprintf(editor, sizeof editor, "%s/edit-cc.sh", b.work_dir);
  int ok = write_script(cc, body, 0755) == 0;
  /* A fault injector: appends to the source it compiles. */
  snprintf(body, sizeof body,
           "#!/bin/sh\necho run >>'%s'\nfor a; do case $a in *.c) echo "
           "'/* edited */' >>\"$a\";; esac; done\nexec cc \"$@\"\n",
           count);
  ok = ok && write_script(editor, body, 0755) == 0;
  int bst[8], ran[8], runs[8];
  b.opts.cc = cc;
  build_and_run(&b, GOOD, &bst[0], &ran[0]);
  runs[0] = count_lines(count);
  build_and_run(&b, GOOD, &bst[1], &ran[1]);
  runs[1] = count_lines(count);
  build_and_run(&b, WRONG_VALUE, &bst[2], &ran[2]);
  build_and_run(&b, WRONG_VALUE, &bst[3], &ran[3]);
  runs[3] = count_lines(count);
  /* Other flags: a miss. */
  const char *flags = b.tc.cflags;
  b.tc.cflags = "-O2 -fopenmp -fPIC -shared";
  build_and_run(&b, GOOD, &bst[4], &ran[4]);
  runs[4] = count_lines(count);
  b.tc.cflags = flags;
  /* Every entry damaged: a miss, rebuilt. */
  char cmd[1400];
  snprintf(
      cmd, sizeof cmd,
      "for f in '%s'/*.hbc; do printf 'HERONBC1\\n9999\\ngarbage' >\"$f\"; "
      "done",
      cache);
  ok = ok && system(cmd) == 0;
  build_and_run(&b, GOOD, &bst[5], &ran[5]);
  runs[5] = count_lines(count);
  /* The editing compiler: compiled every time. */
  b.opts.cc = editor;
  build_and_run(&b, GOOD, &bst[6], &ran[6]);
  build_and_run(&b, GOOD, &bst[7], &ran[7]);
  int edited_runs = count_lines(count) - runs[5];
  /* A cache folder that cannot be made (under a file): built as usual. */
  char bad[700];
  snprintf(bad, sizeof bad, "%s/count/cache", b.work_dir);
  setenv("HERON_BUILD_CACHE", bad, 1);
  b.opts.cc = cc;
  int bad_built, bad_ran;
  build_and_run(&b, GOOD, &bad_built, &bad_ran);
  if (saved[0])
    setenv("HERON_BUILD_CACHE", saved, 1);
  else
    unsetenv("HERON_BUILD_CACHE");
  heron__bench_free(&b);
  CHECK(ok);
  for (int i = 0; i < 8; i++) {
    CHECK_EQ(bst[i], HERON_MEAS_OK);
    CHECK_EQ(ran[i],
             i == 2 || i == 3 ? HERON_MEAS_WRONG_RESULT : HERON_MEAS_OK);
  }
  CHECK_EQ(runs[0], 1);
  CHECK_MSG(runs[1] == 1, "the same source was compiled again (%d runs)",
            runs[1]);
  CHECK_MSG(runs[3] == 2, "another source: %d compiler runs, not 2", runs[3]);
  CHECK_MSG(runs[4] == 3, "other flags: %d compiler runs, not 3", runs[4]);
  CHECK_MSG(runs[5] == 4, "a damaged entry: %d compiler runs, not 4", runs[5]);
  CHECK_MSG(edited_runs == 2, "the editing compiler ran %d times, not 2",
            edited_runs);
  CHECK_EQ(bad_built, HERON_MEAS_OK);
  CHECK_EQ(bad_ran, HERON_MEAS_OK);
}
