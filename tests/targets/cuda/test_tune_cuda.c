/* tests/targets/cuda/test_tune_cuda.c - the engine on the cuda target without a
 * GPU: a run that needs one stops at once and says what to use instead;
 * compile-only records NVRTC builds with their statistics (log, progress,
 * emit); emulate checks kernels on the CPU; and the options are refused
 * where they make no sense. */
#include <unistd.h>

#include "test.h"

static heron_task *cuda_gemm(int64_t n) {
  heron_task *t = NULL;
  int64_t shape[3] = {n, n, n};
  heron_task_spec spec = {.op = "gemm",
                          .shape = shape,
                          .nshape = 3,
                          .target = "cuda",
                          .hw = "a100"};
  heron_error err = {0};
  if (heron_task_create(&spec, &t, &err) != HERON_OK) {
    fprintf(stderr, "cuda task: %s\n", err.text);
    return NULL;
  }
  return t;
}

static void options(heron_tune_options *o, const char *dir, int trials) {
  heron_tune_options_init(o);
  o->strategy = HERON_BUILD_PLUGIN_DIR "/random.so";
  o->trials = trials;
  o->batch = trials;
  o->measure.number = 1;
  o->measure.repeat = 1;
  o->measure.min_repeat_ms = 1;
  o->measure.build_jobs = 2;
  o->measure.work_dir = dir;
}

/* The whole content of a file (or of what was written to `f`). */
static char *slurp(FILE *f) {
  fflush(f);
  long n = ftell(f);
  char *s = malloc((size_t)n + 1);
  if (!s)
    return NULL;
  rewind(f);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = '\0';
  return s;
}

static char *read_path(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  char *s = slurp(f);
  fclose(f);
  return s;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay ? strstr(hay, needle) : NULL; p;
       p = strstr(p + 1, needle))
    n++;
  return n;
}

static void rm_rf(const char *dir) {
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
}

TEST(cuda_run_without_a_gpu_fails_at_once_naming_the_alternatives) {
  heron_task *t = cuda_gemm(64);
  CHECK(t);
  char dir[] = "/tmp/heron-tune-cuda-XXXXXX";
  CHECK(mkdtemp(dir));
  char log[600];
  snprintf(log, sizeof log, "%s/log.jsonl", dir);
  heron_tune_options o;
  options(&o, dir, 4);
  o.log_path = log;
  setenv("HERON_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  heron_tune_result res;
  heron_error err = {0};
  int rc = heron_tune(t, &o, &res, &err);
  unsetenv("HERON_LIBCUDA");
  heron_task_free(t);
  int log_exists = access(log, F_OK) == 0;
  rm_rf(dir);
  CHECK_EQ(rc, HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "target cuda: no GPU (no CUDA driver: ");
  CHECK_STR_CONTAINS(err.text, "libcuda.so.1");
  CHECK_STR_CONTAINS(err.text, "--compile-only");
  CHECK_STR_CONTAINS(err.text, "--emulate");
  CHECK_EQ(res.measured, 0);
  CHECK_EQ(log_exists, 0); /* it stopped before opening anything */
}

TEST(compile_only_records_nvrtc_builds_with_statistics_and_no_timing) {
  heron_task *t = cuda_gemm(64);
  CHECK(t);
  char dir[] = "/tmp/heron-tune-cuda-XXXXXX";
  CHECK(mkdtemp(dir));
  char log[600], emit[600];
  snprintf(log, sizeof log, "%s/log.jsonl", dir);
  snprintf(emit, sizeof emit, "%s/best", dir);
  heron_tune_options o;
  options(&o, dir, 4);
  o.measure.compile_only = 1;
  o.log_path = log;
  o.emit_dir = emit;
  FILE *progress = tmpfile();
  CHECK(progress);
  o.progress = progress;
  /* No driver anywhere: compile-only must not even look for one. */
  setenv("HERON_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  heron_tune_result res;
  heron_error err = {0};
  int rc = heron_tune(t, &o, &res, &err);
  unsetenv("HERON_LIBCUDA");
  char *out = slurp(progress);
  fclose(progress);
  char *text = read_path(log);
  char path[700];
  snprintf(path, sizeof path, "%s/kernel.cu", emit);
  char *kernel = read_path(path);
  snprintf(path, sizeof path, "%s/README.txt", emit);
  char *readme = read_path(path);
  snprintf(path, sizeof path, "%s/config.json", emit);
  int has_config = access(path, F_OK) == 0;
  snprintf(path, sizeof path, "%s/driver.c", emit);
  int has_driver = access(path, F_OK) == 0;
  heron_task_free(t);
  rm_rf(dir);
#ifndef HERON_HAVE_NVRTC
  /* Without the toolkit the run stops before its first trial, at the
   * toolchain check, saying why; nothing is logged or emitted. */
  free(out);
  free(kernel);
  free(readme);
  CHECK_EQ(rc, HERON_EBUILD);
  CHECK_STR_CONTAINS(err.text, "libheron was built without NVRTC");
  CHECK_MSG(text == NULL || count(text, "\"trial\"") == 0, "%s", text);
  free(text);
  SKIP("libheron was built without NVRTC: only checked that the run stops "
       "saying so; the builds' statistics and the emit rules did not run");
#endif
  CHECK_OK(rc, &err);
  CHECK_EQ(res.trials, 4);
  CHECK_MSG(res.ok >= 1, "progress:\n%s\nlog:\n%s", out, text);
  CHECK_EQ(res.best_gflops, 0);
  CHECK_EQ(count(text, "\"regs\":"), 4);
  CHECK_EQ(count(text, "\"spill_bytes\":"), 4);
  CHECK_EQ(count(text, "\"smem_bytes\":"), 4);
  CHECK_EQ(count(text, "\"seconds\":0.0,"), 4);
  /* Every ok build has its registers; only failed ones may lack them. */
  CHECK_EQ(count(text, "\"status\":\"ok\""), res.ok);
  CHECK(count(text, "\"regs\":0,") <= 4 - res.ok);
  CHECK_STR_CONTAINS(out, "compile only: NVRTC builds for sm_80");
  CHECK_STR_CONTAINS(out, "compiled");
  CHECK_MSG(count(out, "GFLOP/s") == 0, "%s", out);
  /* An untimed kernel is never emitted as the best. */
  CHECK(kernel == NULL);
  CHECK(readme == NULL);
  CHECK_EQ(has_config, 0);
  CHECK_EQ(has_driver, 0);
  free(out);
  free(text);
  free(kernel);
  free(readme);
}

TEST(emulate_checks_each_kernel_on_the_cpu_without_timing) {
  heron_task *t = cuda_gemm(32);
  CHECK(t);
  char dir[] = "/tmp/heron-tune-cuda-XXXXXX";
  CHECK(mkdtemp(dir));
  char log[600];
  snprintf(log, sizeof log, "%s/log.jsonl", dir);
  heron_tune_options o;
  options(&o, dir, 2);
  o.measure.emulate = 1;
  o.measure.timeout_s = 120;
  o.log_path = log;
  FILE *progress = tmpfile();
  CHECK(progress);
  o.progress = progress;
  setenv("HERON_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  heron_tune_result res;
  heron_error err = {0};
  int rc = heron_tune(t, &o, &res, &err);
  unsetenv("HERON_LIBCUDA");
  char *out = slurp(progress);
  fclose(progress);
  char *text = read_path(log);
  heron_task_free(t);
  rm_rf(dir);
  CHECK_OK(rc, &err);
  CHECK_EQ(res.trials, 2);
  CHECK_MSG(res.ok == 2, "log:\n%s", text);
  CHECK_EQ(count(text, "\"gflops\":0.0,"), 2);
  CHECK_STR_CONTAINS(out, "emulated 2 ok");
  CHECK_MSG(count(out, "GFLOP/s") == 0, "%s", out);
  free(out);
  free(text);
}

TEST(emulate_on_cpu_and_compile_only_with_emulate_are_einval) {
  heron_task *t = NULL;
  int64_t shape[3] = {32, 32, 32};
  heron_task_spec spec = {.op = "gemm", .shape = shape, .nshape = 3};
  CHECK_OK(heron_task_create(&spec, &t, NULL), NULL);
  heron_tune_options o;
  options(&o, NULL, 2);
  o.measure.emulate = 1;
  heron_error err = {0};
  int rc = heron_tune(t, &o, NULL, &err);
  CHECK_EQ(rc, HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "int8 and bf16 kernels, not fp32");
  o.measure.compile_only = 1;
  heron_error_clear(&err);
  rc = heron_tune(t, &o, NULL, &err);
  heron_task_free(t);
  CHECK_EQ(rc, HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "exclude each other");
}

TEST(compile_only_on_cpu_builds_every_kernel_and_runs_none) {
  heron_task *t = NULL;
  int64_t shape[3] = {32, 32, 32};
  heron_task_spec spec = {.op = "gemm", .shape = shape, .nshape = 3};
  CHECK_OK(heron_task_create(&spec, &t, NULL), NULL);
  char dir[] = "/tmp/heron-tune-cuda-XXXXXX";
  CHECK(mkdtemp(dir));
  heron_tune_options o;
  options(&o, dir, 2);
  o.measure.compile_only = 1;
  heron_tune_result res;
  heron_error err = {0};
  int rc = heron_tune(t, &o, &res, &err);
  heron_task_free(t);
  rm_rf(dir);
  CHECK_OK(rc, &err);
  CHECK_EQ(res.ok, 2);
  CHECK_EQ(res.best_seconds, 0);
  CHECK_EQ(res.best_gflops, 0);
}
