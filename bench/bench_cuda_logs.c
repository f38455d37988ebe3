/* bench/bench_cuda_logs.c - the tasks of bench_cuda's logs: each log's
 * task, its fastest timed config, rebuilt with NVRTC (bench_cuda.h). */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "bench_cuda.h"

/* ---- The tasks of the logs ----------------------------------------------- */

bench_task tasks[MAX_TASKS];
int ntasks;

static void add_log(const char *path) {
  char key[256];
  heron_error err = {0};
  if (heron__replay_first_key(path, key, sizeof key, &err) != HERON_OK) {
    if (err.code != HERON_EPARSE || !strstr(err.text, "holds no record"))
      fprintf(stderr, "%s: %s (left out)\n", cli_prog(), err.text);
    return;
  }
  bench_task *bt = NULL;
  for (int i = 0; i < ntasks && !bt; i++)
    if (!strcmp(tasks[i].key, key))
      bt = &tasks[i];
  if (!bt) {
    if (ntasks == MAX_TASKS)
      cli_usage("more than %d tasks in the logs", MAX_TASKS);
    bt = &tasks[ntasks++];
    snprintf(bt->key, sizeof bt->key, "%s", key);
  }
  if (bt->nlogs == MAX_LOGS)
    cli_usage("more than %d logs of task %s", MAX_LOGS, key);
  bt->logs[bt->nlogs++] = cli_strdup(path);
}

static int is_log_name(const char *n) {
  size_t len = strlen(n);
  return (len > 6 && !strcmp(n + len - 6, ".jsonl")) ||
         (len > 9 && !strcmp(n + len - 9, ".jsonl.gz"));
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

void add_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0)
    cli_usage("--log %s: no such file or folder", path);
  if (!S_ISDIR(st.st_mode)) {
    add_log(path);
    return;
  }
  struct dirent **ents;
  int n = scandir(path, &ents, NULL, by_name);
  if (n < 0)
    cli_usage("--log %s: cannot read the folder", path);
  for (int i = 0; i < n; i++) {
    if (is_log_name(ents[i]->d_name))
      add_log(cli_printf("%s/%s", path, ents[i]->d_name));
    free(ents[i]);
  }
  free(ents);
}

/* Builds the task of bt->key ("op/shape/dtype/target[/epilogue]"). */
void make_task(bench_task *bt, const char *hw) {
  char op[64], shape[160], dtype[16], target[16], epi[64] = "";
  int n = sscanf(bt->key, "%63[^/]/%159[^/]/%15[^/]/%15[^/]/%63s", op, shape,
                 dtype, target, epi);
  if (n < 4 || strcmp(target, "cuda")) {
    bt->error = "not a cuda task";
    return;
  }
  int64_t dims[16];
  int nd = 0;
  heron_error err = {0};
  if (heron_parse_shape(op, shape, dims, 16, &nd, &err) != HERON_OK) {
    bt->error = cli_printf("%s", err.text);
    return;
  }
  heron_task_spec spec = {.op = op,
                          .shape = dims,
                          .nshape = nd,
                          .dtype = dtype,
                          .target = "cuda",
                          .hw = hw,
                          .epilogue = epi[0] ? epi : NULL};
  if (heron_task_create(&spec, &bt->t, &err) != HERON_OK) {
    bt->error = cli_printf("%s", err.text);
    return;
  }
}

/* Reads every log of the task (with the tuner's own line parser) and keeps
 * its fastest timed ok config that is valid in this task's space. */
void find_best(bench_task *bt) {
  const heron_space *sp = heron_task_space(bt->t);
  int nv = heron_space_nvars(sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  char *line = NULL;
  size_t cap = 0;
  for (int i = 0; i < bt->nlogs; i++) {
    gzFile f = gzopen(bt->logs[i], "rb");
    int term;
    for (int lineno = 1; f && heron__log_gets(f, &line, &cap, &term) > 0;
         lineno++) {
      json_t *o = json_loads(line, 0, NULL);
      heron_measurement m;
      heron_error err = {0};
      int complete = 0;
      if (o && heron__log_parse(o, sp, bt->key, &rng, &m, cfg, &complete, NULL,
                                lineno, bt->logs[i], &err) == HERON_OK) {
        bt->trials++;
        if (complete && m.status == HERON_MEAS_OK && m.seconds > 0 &&
            !(heron__log_flags(o, &m) & HERON__REC_UNTIMED) &&
            (!bt->cfg || m.seconds < bt->tuned_seconds)) {
          if (!bt->cfg)
            bt->cfg = malloc((size_t)nv * sizeof *bt->cfg);
          memcpy(bt->cfg, cfg, (size_t)nv * sizeof *cfg);
          bt->tuned_seconds = m.seconds;
        }
      }
      json_decref(o);
    }
    if (f)
      gzclose(f);
  }
  free(line);
  free(cfg);
  if (!bt->cfg)
    bt->error = "no timed ok record in its logs";
}

void build_best(bench_task *bt, int sm) {
  char *src = NULL;
  heron_error err = {0};
  if (heron_task_source(bt->t, bt->cfg, &src, &err) != HERON_OK) {
    bt->error = cli_printf("source: %s", err.text);
    return;
  }
  if (heron__nvrtc_compile(src, sm, &bt->build, &err) != HERON_OK)
    bt->error = cli_printf("NVRTC: %s", err.text);
  heron_free(src);
}
