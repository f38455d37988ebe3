/* tests/tune/test_tune.c - the engine's contract with plugins: the budget,
 * the filtering of invalid and duplicate proposals (counted, never
 * measured), the model fitted between rounds and handed to the strategy,
 * and the log and history it leaves. */
#include <unistd.h>

#include <dirent.h>
#include <sys/stat.h>

#include "test.h"

static heron_task *small_gemm(void) {
  heron_task *t = NULL;
  int64_t shape[3] = {32, 32, 32};
  heron_task_spec spec = {.op = "gemm", .shape = shape, .nshape = 3};
  if (heron_task_create(&spec, &t, NULL) != HERON_OK)
    return NULL;
  return t;
}

static void fast(heron_tune_options *o, const char *work) {
  o->measure.number = 1;
  o->measure.repeat = 1;
  o->measure.min_repeat_ms = 1;
  o->measure.work_dir = work;
}

static int count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  int n = 0, ch;
  if (!f)
    return -1;
  while ((ch = fgetc(f)) != EOF)
    n += ch == '\n';
  fclose(f);
  return n;
}

TEST(invalid_and_duplicate_proposals_are_dropped_counted_and_never_measured) {
  char dir[] = "/tmp/heron-tune-XXXXXX";
  CHECK(mkdtemp(dir));
  char report[600], log[600];
  snprintf(report, sizeof report, "%s/report.txt", dir);
  snprintf(log, sizeof log, "%s/log.jsonl", dir);
  heron_task *t = small_gemm();
  CHECK(t);
  heron_param params[] = {{"report", report}};
  heron_tune_options o;
  heron_tune_options_init(&o);
  o.strategy = HERON_TEST_PLUGIN_DIR "/strat_probe.so";
  o.strategy_params = params;
  o.n_strategy_params = 1;
  o.model = HERON_TEST_MODEL_PLUGIN;
  o.trials = 8;
  o.batch = 4;
  o.log_path = log;
  fast(&o, dir);
  heron_tune_result res;
  heron_error err;
  heron_error_clear(&err);
  int rc = heron_tune(t, &o, &res, &err);
  heron_task_free(t);
  CHECK_OK(rc, &err);
  /* Rounds asking for 4 carry one duplicate and one invalid and measure 2
   * (rounds 1-3); the last asks for the 2 trials left and gets 2 samples. */
  CHECK_EQ(res.trials, 8);
  CHECK_EQ(res.measured, 8);
  CHECK_EQ(res.dropped_invalid, 3);
  CHECK(res.dropped_duplicate >= 3); /* a sample may also repeat a trial */
  CHECK_EQ(count_lines(log), 8);
  FILE *f = fopen(report, "r");
  CHECK(f);
  int model = 0, trained = 0, observed = 0, history = 0;
  int got = fscanf(f, "model %d trained %d observed %d history %d", &model,
                   &trained, &observed, &history);
  fclose(f);
  CHECK_EQ(got, 4);
  CHECK_EQ(model, 1);   /* the env carries the model */
  CHECK_EQ(trained, 1); /* fitted by the engine after a round */
  CHECK_EQ(observed, 8);
  CHECK_EQ(history, 8);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK_EQ(system(cmd), 0);
}

TEST(a_run_without_a_model_gives_the_strategy_a_null_model) {
  char dir[] = "/tmp/heron-tune-XXXXXX";
  CHECK(mkdtemp(dir));
  char report[600];
  snprintf(report, sizeof report, "%s/report.txt", dir);
  heron_task *t = small_gemm();
  CHECK(t);
  heron_param params[] = {{"report", report}};
  heron_tune_options o;
  heron_tune_options_init(&o);
  o.strategy = HERON_TEST_PLUGIN_DIR "/strat_probe.so";
  o.strategy_params = params;
  o.n_strategy_params = 1;
  o.trials = 4;
  o.batch = 4;
  fast(&o, dir);
  heron_error err;
  heron_error_clear(&err);
  heron_tune_result res;
  int rc = heron_tune(t, &o, &res, &err);
  heron_task_free(t);
  CHECK_OK(rc, &err);
  FILE *f = fopen(report, "r");
  CHECK(f);
  int model = -1, trained = -1;
  CHECK_EQ(fscanf(f, "model %d trained %d", &model, &trained), 2);
  fclose(f);
  CHECK_EQ(model, 0);
  CHECK_EQ(trained, 0);
  CHECK_EQ(res.best_trial > 0, 1);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK_EQ(system(cmd), 0);
}

TEST(options_with_zero_trials_or_batch_are_rejected_before_any_work) {
  heron_task *t = small_gemm();
  CHECK(t);
  heron_tune_options o;
  heron_tune_options_init(&o);
  o.trials = 0;
  heron_error err;
  heron_error_clear(&err);
  int rc = heron_tune(t, &o, NULL, &err);
  CHECK_EQ(rc, HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "trials");
  heron_tune_options_init(&o);
  o.batch = 0;
  heron_error_clear(&err);
  rc = heron_tune(t, &o, NULL, &err);
  heron_task_free(t);
  CHECK_EQ(rc, HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "batch");
}

/* heron_measurer (what the measuring ranks of an MPI job run): sampled
 * configs of a small gemm measured without a search, each ok, checked,
 * timed and reported with its config; an invalid (all-unset) config is a
 * failed measurement, not an error of the measurer. */
TEST(measurer_measures_configs_without_a_search) {
  char dir[] = "/tmp/heron-measurer-XXXXXX";
  CHECK(mkdtemp(dir));
  heron_task *t = small_gemm();
  CHECK(t);
  const heron_space *sp = heron_task_space(t);
  int nv = heron_space_nvars(sp);
  int64_t *cfgs = malloc(3 * (size_t)nv * sizeof *cfgs);
  CHECK(cfgs);
  heron_rng rng;
  heron_rng_seed(&rng, 5);
  heron_error err = {0};
  for (int i = 0; i < 2; i++)
    CHECK_OK(heron_space_sample(sp, &rng, cfgs + (size_t)i * (size_t)nv, &err),
             &err);
  for (int v = 0; v < nv; v++)
    cfgs[2 * (size_t)nv + (size_t)v] = HERON_UNSET;
  heron_tune_options d;
  heron_tune_options_init(&d);
  fast(&d, dir);
  heron_measurer *ms = NULL;
  CHECK_OK(heron_measurer_open(t, &d.measure, 1, &ms, &err), &err);
  heron_measurement out[3];
  char *errors[3];
  int env[3];
  CHECK_OK(heron_measurer_run(ms, cfgs, 3, out, errors, env, &err), &err);
  for (int i = 0; i < 2; i++) {
    CHECK_EQ(out[i].status, HERON_MEAS_OK);
    CHECK(out[i].seconds > 0);
    CHECK(out[i].gflops > 0);
    CHECK(out[i].config == cfgs + (size_t)i * (size_t)nv);
    CHECK(errors[i] == NULL);
    CHECK_EQ(env[i], 0);
  }
  CHECK(out[2].status != HERON_MEAS_OK);
  CHECK(errors[2] != NULL);
  for (int i = 0; i < 3; i++)
    free(errors[i]);
  heron_measurer_close(ms);
  heron_task_free(t);
  free(cfgs);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK_EQ(system(cmd), 0);
}

/* The inodes of the sockets process `pid` holds ("socket:[N]" under
 * /proc/PID/fd), into ino[cap]; returns how many. */
static int socket_inodes(long pid, unsigned long *ino, int cap) {
  char dir[64], path[400], link[64];
  snprintf(dir, sizeof dir, "/proc/%ld/fd", pid);
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) && n < cap) {
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    ssize_t len = readlink(path, link, sizeof link - 1);
    if (len <= 0)
      continue;
    link[len] = '\0';
    if (sscanf(link, "socket:[%lu]", &ino[n]) == 1)
      n++;
  }
  if (d)
    closedir(d);
  return n;
}

/* The pids of this process's children, into pids[cap]; returns how many. */
static int children(long *pids, int cap) {
  DIR *d = opendir("/proc");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) && n < cap) {
    char path[300], buf[512];
    long pid = strtol(e->d_name, NULL, 10), ppid = 0;
    if (pid <= 0)
      continue;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    /* pid (comm) state ppid: the comm may hold spaces, so after the ')'. */
    if (fgets(buf, sizeof buf, f)) {
      char *r = strrchr(buf, ')');
      if (r && sscanf(r + 1, " %*c %ld", &ppid) == 1 && ppid == getpid())
        pids[n++] = pid;
    }
    fclose(f);
  }
  if (d)
    closedir(d);
  return n;
}

/* Two measurers open at once (heron-bench and bench_lib hold one a task):
 * the second one's runner must not hold the first one's socket, else
 * closing the first would wait for ever for a runner that never sees its
 * end of file.  Checked on the processes themselves (no child of this one
 * holds a tuner-side socket of a runner), then by closing them first to
 * last. */
TEST(measurers_open_together_hold_no_socket_of_each_other) {
  char dir[] = "/tmp/heron-measurers-XXXXXX";
  CHECK(mkdtemp(dir));
  heron_task *t = small_gemm();
  CHECK(t);
  heron_tune_options d;
  heron_tune_options_init(&d);
  fast(&d, dir);
  heron_error err = {0};
  unsigned long before[64], after[64];
  int nb = socket_inodes(getpid(), before, 64);
  heron_measurer *ms[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++)
    CHECK_OK(heron_measurer_open(t, &d.measure, 1, &ms[i], &err), &err);
  /* The tuner's ends: the sockets this process gained. */
  int na = socket_inodes(getpid(), after, 64);
  unsigned long mine[64];
  int nm = 0;
  for (int i = 0; i < na; i++) {
    int old = 0;
    for (int j = 0; j < nb; j++)
      old |= after[i] == before[j];
    if (!old)
      mine[nm++] = after[i];
  }
  CHECK_EQ(nm, 3);
  long kids[16];
  int nk = children(kids, 16);
  CHECK(nk >= 3);
  for (int k = 0; k < nk; k++) {
    unsigned long held[64];
    int nh = socket_inodes(kids[k], held, 64);
    for (int h = 0; h < nh; h++)
      for (int m = 0; m < nm; m++)
        CHECK_MSG(held[h] != mine[m],
                  "child %ld holds socket:[%lu], a tuner end", kids[k],
                  held[h]);
  }
  for (int i = 0; i < 3; i++)
    heron_measurer_close(ms[i]);
  heron_task_free(t);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK_EQ(system(cmd), 0);
}

/* The "trial" numbers of the log at path, in line order, into t[cap];
 * returns how many lines (-1 when one has none). */
static int log_trials(const char *path, int *t, int cap) {
  FILE *f = fopen(path, "r");
  char line[8192];
  int n = 0;
  if (!f)
    return -1;
  while (fgets(line, sizeof line, f)) {
    const char *p = strstr(line, "\"trial\":");
    if (!p || n == cap) {
      fclose(f);
      return -1;
    }
    t[n++] = atoi(p + strlen("\"trial\":"));
  }
  fclose(f);
  return n;
}

/* A resume that measures configs again (here: compile-only records, which
 * a timed run measures again first) numbers its new trials after the
 * highest of the log: the records set aside are in the log, not in the
 * history, and their numbers are never given twice. */
TEST(a_resume_that_measures_configs_again_numbers_trials_after_the_log) {
  char dir[] = "/tmp/heron-tune-XXXXXX";
  CHECK(mkdtemp(dir));
  char report[600], log[600];
  snprintf(report, sizeof report, "%s/report.txt", dir);
  snprintf(log, sizeof log, "%s/log.jsonl", dir);
  heron_task *t = small_gemm();
  CHECK(t);
  heron_param params[] = {{"report", report}};
  heron_tune_options o;
  heron_tune_options_init(&o);
  o.strategy = HERON_TEST_PLUGIN_DIR "/strat_probe.so";
  o.strategy_params = params;
  o.n_strategy_params = 1;
  o.trials = 4;
  o.batch = 4;
  o.log_path = log;
  o.measure.compile_only = 1;
  fast(&o, dir);
  heron_tune_result res;
  heron_error err;
  heron_error_clear(&err);
  CHECK_OK(heron_tune(t, &o, &res, &err), &err);
  int trials[32];
  CHECK_EQ(log_trials(log, trials, 32), 4);

  /* Timed now: the 4 untimed records are measured again, first. */
  o.measure.compile_only = 0;
  o.resume_path = log;
  o.trials = 6;
  heron_error_clear(&err);
  int rc = heron_tune(t, &o, &res, &err);
  heron_task_free(t);
  CHECK_OK(rc, &err);
  CHECK_EQ(res.retried, 4);
  int n = log_trials(log, trials, 32);
  CHECK_EQ(n, 10);
  for (int i = 0; i < n; i++)
    CHECK_MSG(trials[i] == i + 1, "line %d of the log is trial %d", i + 1,
              trials[i]);

  /* Resumed once more, the history keeps the log's trial numbers (the 4
   * untimed records are set aside again, so numbering the history from 1
   * gave trial 5 the number 1): the best trial reported is the log line
   * of the best key. */
  heron_task *t2 = small_gemm();
  CHECK(t2);
  o.trials = 10;
  heron_error_clear(&err);
  rc = heron_tune(t2, &o, &res, &err);
  heron_task_free(t2);
  CHECK_OK(rc, &err);
  CHECK(res.best_trial > 0);
  char want[64], line[4096];
  snprintf(want, sizeof want, "\"trial\":%d,", res.best_trial);
  FILE *f = fopen(log, "r");
  CHECK(f);
  int found = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, want))
      found = strstr(line, res.best_key) && strstr(line, "\"status\":\"ok\"") &&
              !strstr(line, "\"untimed\":true");
  fclose(f);
  CHECK_MSG(found, "the log's trial %d is not the timed best config %s",
            res.best_trial, res.best_key);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK_EQ(system(cmd), 0);
}

/* A FIFO as the log blocked heron_tune's open forever (no reader); the
 * library refuses it, for callers other than the tools too, and a folder
 * or a device likewise. */
TEST(a_log_that_is_not_a_regular_file_is_refused_without_blocking) {
  char dir[] = "/tmp/heron-tune-XXXXXX";
  CHECK(mkdtemp(dir));
  char fifo[600];
  snprintf(fifo, sizeof fifo, "%s/log.fifo", dir);
  CHECK_EQ(mkfifo(fifo, 0600), 0);
  const char *paths[] = {fifo, "/dev/null", dir};
  for (int i = 0; i < 3; i++) {
    heron_task *t = small_gemm();
    CHECK(t);
    heron_tune_options o;
    heron_tune_options_init(&o);
    o.trials = 1;
    o.batch = 1;
    o.log_path = paths[i];
    fast(&o, dir);
    heron_tune_result res;
    heron_error err;
    heron_error_clear(&err);
    int rc = heron_tune(t, &o, &res, &err);
    heron_task_free(t);
    CHECK_MSG(rc == HERON_EIO, "%s: %s", paths[i], heron_err_name(rc));
    CHECK_STR_CONTAINS(err.text, paths[i]);
  }
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK_EQ(system(cmd), 0);
}
