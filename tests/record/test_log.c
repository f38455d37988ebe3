/* tests/record/test_log.c - the JSON Lines log's cuda fields: lines of a cuda
 * task carry the ptxas statistics ("regs", "spill_bytes", "smem_bytes") and
 * a resumed history gets them back; cpu lines stay without them; a bad
 * value is a parse error naming the field. */
#include <sys/stat.h>
#include <unistd.h>

#include "core/record/record.h"
#include "core/util/util.h"
#include "heron/heron.h"
#include "test.h"

/* Any task gives the log a space to name knobs in; the log does not look
 * at the target, only at heron__log_ctx.build_stats. */
static heron_task *small_task(void) {
  heron_task *t = NULL;
  int64_t shape[3] = {32, 32, 32};
  heron_task_spec spec = {.op = "gemm", .shape = shape, .nshape = 3};
  return heron_task_create(&spec, &t, NULL) == HERON_OK ? t : NULL;
}

/* Writes n records with distinct statistics through the log writer. */
static int write_log(const char *path, const heron_space *sp,
                     const heron__log_ctx *ctx, int64_t *cfgs, int n) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  heron_rng rng;
  heron_rng_seed(&rng, 7);
  int nv = heron_space_nvars(sp), rc = HERON_OK;
  for (int i = 0; i < n && rc == HERON_OK; i++) {
    int64_t *cfg = cfgs + (size_t)i * (size_t)nv;
    rc = heron_space_sample(sp, &rng, cfg, NULL);
    heron_measurement m;
    memset(&m, 0, sizeof m);
    m.trial = i + 1;
    m.status = i == 1 ? HERON_MEAS_COMPILE_ERROR : HERON_MEAS_OK;
    m.config = cfg;
    m.build_seconds = 0.25 * (i + 1);
    m.error = i == 1 ? "kernel.cu(3): error: x" : "";
    m.regs = i == 1 ? 0 : 40 + i;
    m.spill_bytes = 8 * i;
    m.smem_bytes = (int64_t)(1 << 16) * (i + 1) + 3; /* > 16 bits */
    if (rc == HERON_OK)
      rc = heron__log_write(f, sp, ctx, &m, NULL);
  }
  fclose(f);
  return rc;
}

TEST(cuda_log_lines_carry_ptxas_statistics_and_resume_reads_them_back) {
  heron_task *t = small_task();
  CHECK(t);
  const heron_space *sp = heron_task_space(t);
  char path[] = "/tmp/heron-log-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  int nv = heron_space_nvars(sp);
  int64_t *cfgs = malloc(3 * (size_t)nv * sizeof *cfgs);
  heron__log_ctx ctx = {.task_key = heron_task_key(t),
                        .strategy = "random",
                        .seed = 1,
                        .build_stats = 1};
  CHECK_EQ(write_log(path, sp, &ctx, cfgs, 3), HERON_OK);
  char *text = NULL;
  size_t len = 0;
  CHECK_OK(heron__read_file(path, &text, &len, NULL), NULL);
  CHECK_STR_CONTAINS(text, "\"regs\":42");
  CHECK_STR_CONTAINS(text, "\"spill_bytes\":16");
  CHECK_STR_CONTAINS(text, "\"smem_bytes\":196611");
  free(text);

  heron_history h;
  heron__history_init(&h, nv);
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  int dropped = -1;
  long valid = 0;
  heron_error err = {0};
  int rc = heron__log_read(path, sp, heron_task_key(t), &h, &rng, &dropped,
                           &valid, &err);
  unlink(path);
  free(cfgs);
  CHECK_OK(rc, &err);
  CHECK_EQ(h.n, 3);
  CHECK_EQ(dropped, 0);
  for (int i = 0; i < 3; i++) {
    const heron_measurement *m = heron_history_get(&h, i);
    CHECK_EQ(m->regs, i == 1 ? 0 : 40 + i);
    CHECK_EQ(m->spill_bytes, 8 * i);
    CHECK_EQ(m->smem_bytes, (int64_t)(1 << 16) * (i + 1) + 3);
    CHECK(fabs(m->build_seconds - 0.25 * (i + 1)) < 1e-12);
  }
  CHECK_EQ(heron_history_get(&h, 1)->status, HERON_MEAS_COMPILE_ERROR);
  CHECK(!strcmp(heron_history_get(&h, 1)->error, "kernel.cu(3): error: x"));
  heron__history_free(&h);
  heron_task_free(t);
}

TEST(cpu_log_lines_have_no_statistics_and_read_back_as_zero) {
  heron_task *t = small_task();
  CHECK(t);
  const heron_space *sp = heron_task_space(t);
  char path[] = "/tmp/heron-log-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  int nv = heron_space_nvars(sp);
  int64_t *cfgs = malloc(2 * (size_t)nv * sizeof *cfgs);
  heron__log_ctx ctx = {
      .task_key = heron_task_key(t), .strategy = "random", .seed = 1};
  CHECK_EQ(write_log(path, sp, &ctx, cfgs, 2), HERON_OK);
  char *text = NULL;
  size_t len = 0;
  CHECK_OK(heron__read_file(path, &text, &len, NULL), NULL);
  int has = strstr(text, "regs") || strstr(text, "smem_bytes");
  free(text);
  CHECK_EQ(has, 0);
  heron_history h;
  heron__history_init(&h, nv);
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  int dropped = 0;
  long valid = 0;
  heron_error err = {0};
  int rc = heron__log_read(path, sp, heron_task_key(t), &h, &rng, &dropped,
                           &valid, &err);
  unlink(path);
  free(cfgs);
  CHECK_OK(rc, &err);
  CHECK_EQ(h.n, 2);
  CHECK_EQ(heron_history_get(&h, 0)->regs, 0);
  CHECK_EQ(heron_history_get(&h, 0)->smem_bytes, 0);
  heron__history_free(&h);
  heron_task_free(t);
}

TEST(log_statistic_that_is_not_a_non_negative_integer_is_eparse_naming_it) {
  heron_task *t = small_task();
  CHECK(t);
  const heron_space *sp = heron_task_space(t);
  const char *bad[3] = {"\"regs\":-1", "\"spill_bytes\":\"many\"",
                        "\"smem_bytes\":1.5"};
  const char *name[3] = {"regs", "spill_bytes", "smem_bytes"};
  for (int i = 0; i < 3; i++) {
    char path[] = "/tmp/heron-log-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    char line[400];
    int n = snprintf(line, sizeof line,
                     "{\"task\":\"%s\",\"trial\":1,\"config\":{},"
                     "\"status\":\"ok\",%s}\n",
                     heron_task_key(t), bad[i]);
    CHECK(write(fd, line, (size_t)n) == n);
    close(fd);
    heron_history h;
    heron__history_init(&h, heron_space_nvars(sp));
    heron_rng rng;
    heron_rng_seed(&rng, 1);
    int dropped = 0;
    long valid = 0;
    heron_error err = {0};
    int rc = heron__log_read(path, sp, heron_task_key(t), &h, &rng, &dropped,
                             &valid, &err);
    unlink(path);
    heron__history_free(&h);
    CHECK_EQ(rc, HERON_EPARSE);
    CHECK_STR_CONTAINS(err.text, name[i]);
    CHECK_STR_CONTAINS(err.text, ":1");
  }
  heron_task_free(t);
}

/* Issue 30: --resume /dev/zero grew without bound and a FIFO blocked; a
 * resumed log is a regular file within the input limits (record.h), and
 * the errors name the file and the limit. */
TEST(resume_refuses_devices_fifos_folders_and_logs_past_the_limits) {
  heron_task *t = small_task();
  CHECK(t);
  const heron_space *sp = heron_task_space(t);
  char dir[] = "/tmp/heron-log-XXXXXX";
  CHECK(mkdtemp(dir));
  char fifo[128], folder[128], big[128], longl[128];
  snprintf(fifo, sizeof fifo, "%s/fifo.jsonl", dir);
  snprintf(folder, sizeof folder, "%s/folder.jsonl", dir);
  snprintf(big, sizeof big, "%s/big.jsonl", dir);
  snprintf(longl, sizeof longl, "%s/long.jsonl", dir);
  CHECK(mkfifo(fifo, 0600) == 0);
  CHECK(mkdir(folder, 0700) == 0);
  alarm(20); /* a FIFO or device that blocks fails the test, not hangs it */
  static const struct {
    const char *kind;
  } kinds[] = {{"is a character device, not a file"},
               {"is a FIFO, not a file"},
               {"is a directory, not a file"}};
  const char *paths[] = {"/dev/zero", fifo, folder};
  for (int k = 0; k < 3; k++) {
    heron_history h;
    heron__history_init(&h, heron_space_nvars(sp));
    heron_rng rng;
    heron_rng_seed(&rng, 1);
    int dropped = 0;
    long valid = 0;
    heron_error err;
    heron_error_clear(&err);
    CHECK_EQ(heron__log_read(paths[k], sp, heron_task_key(t), &h, &rng,
                             &dropped, &valid, &err),
             HERON_EINVAL);
    char want[200];
    snprintf(want, sizeof want, "log %s %s", paths[k], kinds[k].kind);
    CHECK_STR_CONTAINS(err.text, want);
    heron__history_free(&h);
  }
  alarm(0);
  /* 2 MiB of blank lines past a 1 MiB limit; a 2 MiB line past a 1 MiB
   * line limit (a blank-padded object: well formed but for its length). */
  setenv("HERON_MAX_INPUT_MB", "1", 1);
  FILE *f = fopen(big, "w");
  CHECK(f);
  for (int i = 0; i < (2 << 20) / 8; i++)
    fputs("       \n", f);
  fclose(f);
  f = fopen(longl, "w");
  CHECK(f);
  fputs("\n{", f);
  for (int i = 0; i < (2 << 20); i++)
    fputc(' ', f);
  fputs("}\n", f);
  fclose(f);
  heron_history h;
  heron__history_init(&h, heron_space_nvars(sp));
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  int dropped = 0;
  long valid = 0;
  heron_error err;
  heron_error_clear(&err);
  CHECK_EQ(heron__log_read(big, sp, heron_task_key(t), &h, &rng, &dropped,
                           &valid, &err),
           HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, big);
  CHECK_STR_CONTAINS(err.text,
                     "larger than the limit of 1 MiB (HERON_MAX_INPUT_MB)");
  setenv("HERON_MAX_INPUT_MB", "8", 1);
  setenv("HERON_MAX_LINE_MB", "1", 1);
  heron_error_clear(&err);
  CHECK_EQ(heron__log_read(longl, sp, heron_task_key(t), &h, &rng, &dropped,
                           &valid, &err),
           HERON_EINVAL);
  char want[300];
  snprintf(want, sizeof want,
           "%s:2: a line longer than the limit of 1 MiB (HERON_MAX_LINE_MB)",
           longl);
  CHECK_STR_CONTAINS(err.text, want);
  unsetenv("HERON_MAX_INPUT_MB");
  unsetenv("HERON_MAX_LINE_MB");
  heron__history_free(&h);
  heron_task_free(t);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
}
