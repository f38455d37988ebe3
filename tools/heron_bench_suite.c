/* tools/heron_bench_suite.c - the suite heron-bench compares on: its file
 * read into the settings' tasks (heron_bench.h). */
#include <jansson.h>
#include <string.h>
#include <strings.h>

#include "heron_bench.h"
#include "suite.h"

/* A suite of several tasks replayed from several logs: each task keeps the
 * logs recorded for it (configs/datasets/cuda-h200/ holds one log per task
 * of the tensorcore suite), so one --replay list serves the whole suite.
 * Whose a log is, the library says: creating the task with that log alone
 * is HERON_ETASK when it recorded another task.  A log refused for another
 * reason stays, so cli_make_task reports it; a task no log recorded is a
 * usage error naming it. */
void replay_logs_per_task(settings *s) {
  if (s->ntasks < 2 || s->task.nreplay < 2 || !s->task.target ||
      strcmp(s->task.target, "replay"))
    return;
  for (int i = 0; i < s->ntasks; i++) {
    cli_task_args *a = &s->st[i].args;
    if (a->t1)
      continue;
    int keep = 0;
    for (int k = 0; k < s->task.nreplay; k++) {
      cli_task_args one = *a;
      one.replay[0] = s->task.replay[k];
      one.nreplay = 1;
      heron_task *t = NULL;
      heron_error err;
      if (cli_try_task(&one, &t, &err) != HERON_ETASK)
        a->replay[keep++] = s->task.replay[k];
      heron_task_free(t);
    }
    if (!keep)
      cli_usage("--replay: none of the %d logs records task %s (%s %s)",
                s->task.nreplay, s->st[i].name, a->op, a->shape);
    a->nreplay = keep;
  }
}

void load_suite(settings *s) {
  int n = 0;
  cli_suite_task *st =
      cli_suite_load("--suite", s->suite_path, &s->task, s->tasks, &n);
  s->st = keep_array((size_t)n, sizeof *s->st);
  memcpy(s->st, st, (size_t)n * sizeof *st);
  s->ntasks = n;
  free(st);
}
