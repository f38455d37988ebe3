/* tools/heron_bench_suite.c - the suite heron-bench compares on: its file
 * read into the settings' tasks (heron_bench.h). */
#include <jansson.h>
#include <string.h>
#include <strings.h>

#include "heron_bench.h"

enum { MAX_DIMS = 32 };

/* ---- The suite ------------------------------------------------------------
 * {"name", "dtype", "target", "tasks": [{"name", "op", "shape": {named
 * dimensions}}]}; the shape may also be an array in the op's order. */

static const char *suite_str(const settings *s, json_t *o, const char *key,
                             const char *where) {
  json_t *v = json_object_get(o, key);
  if (!v)
    return NULL;
  if (!json_is_string(v))
    cli_usage("--suite %s: %s\"%s\" must be a string", s->suite_path, where,
              key);
  return cli_strdup(json_string_value(v));
}

/* The shape in --shape order ("1024,1024,1024"); the op checks the values
 * when the task is created. */
static const char *suite_shape(const settings *s, const char *name,
                               const char *op, json_t *shape) {
  const char *const *names;
  int nd = 0;
  char dims[256];
  cli_check_op(op);
  heron_op_dims(op, &names, &nd, NULL);
  cli_op_dims_text(op, dims, sizeof dims);
  json_t *vals[MAX_DIMS] = {0};
  if (json_is_array(shape)) {
    if ((int)json_array_size(shape) > nd)
      cli_usage("--suite %s: task %s: %s has %d dimensions (%s), the shape "
                "gives %zu",
                s->suite_path, name, op, nd, dims, json_array_size(shape));
    for (size_t d = 0; d < json_array_size(shape); d++)
      vals[d] = json_array_get(shape, d);
  } else if (json_is_object(shape)) {
    const char *key;
    json_t *v;
    json_object_foreach(shape, key, v) {
      int d = 0;
      while (d < nd && strcmp(names[d], key))
        d++;
      if (d == nd)
        cli_usage("--suite %s: task %s: %s has no dimension '%s' (it has %s)",
                  s->suite_path, name, op, key, dims);
      vals[d] = v;
    }
  } else {
    cli_usage("--suite %s: task %s: \"shape\" must be an object of named "
              "dimensions (%s)",
              s->suite_path, name, dims);
  }
  char *text = cli_strdup("");
  int gap = -1;
  for (int d = 0; d < nd && d < MAX_DIMS; d++) {
    if (!vals[d]) {
      if (gap < 0)
        gap = d;
      continue;
    }
    if (gap >= 0)
      cli_usage("--suite %s: task %s: dimension %s is missing before %s (only "
                "trailing dimensions may be left out; %s has %s)",
                s->suite_path, name, names[gap], names[d], op, dims);
    if (!json_is_integer(vals[d]))
      cli_usage("--suite %s: task %s: dimension %s must be an integer",
                s->suite_path, name, names[d]);
    text = cli_printf("%s%s%lld", text, d ? "," : "",
                      (long long)json_integer_value(vals[d]));
  }
  return text;
}

static int name_listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (len == n && !strncasecmp(p, name, n))
      return 1;
    p += len + (p[len] == ',');
  }
  return 0;
}

/* A path the suite file gives: relative to the suite file's folder. */
static const char *suite_path(const settings *s, const char *p) {
  if (p[0] == '/')
    return p;
  const char *slash = strrchr(s->suite_path, '/');
  if (!slash)
    return p;
  return cli_printf("%.*s/%s", (int)(slash - s->suite_path), s->suite_path, p);
}

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

/* A suite's keys, and a task's: any other is refused, naming the file,
 * the task and the key (a misspelt key would silently fall back to a
 * default: "dtpye" running fp32). */
static const char *const suite_keys[] = {"name",   "description", "dtype",
                                         "target", "tasks",       NULL};
static const char *const task_keys[] = {"name", "op", "shape",
                                        "t1",   "t4", NULL};

static void check_suite_keys(const settings *s, json_t *root) {
  const char *key = cli_json_unknown_key(root, suite_keys);
  if (key)
    cli_usage("--suite %s: unknown key \"%s\" (a suite has \"name\", "
              "\"description\", \"dtype\", \"target\" and \"tasks\")",
              s->suite_path, key);
}

/* `who` names the task: its name, or tasks[i] without one. */
static void check_task_keys(const settings *s, json_t *jt, const char *who) {
  const char *key = cli_json_unknown_key(jt, task_keys);
  if (!key)
    return;
  if (!strcmp(key, "dtype") || !strcmp(key, "target"))
    cli_usage("--suite %s: task %s: unknown key \"%s\": \"%s\" belongs to "
              "the whole suite (its top level; or --%s for every task), "
              "not to one task",
              s->suite_path, who, key, key, key);
  cli_usage("--suite %s: task %s: unknown key \"%s\" (a task has \"name\", "
            "\"op\" and \"shape\", or \"name\", \"t1\" and \"t4\")",
            s->suite_path, who, key);
}

void load_suite(settings *s) {
  json_t *root = cli_json_load("--suite", s->suite_path);
  json_t *tasks = json_object_get(root, "tasks");
  if (!json_is_object(root) || !json_is_array(tasks) ||
      json_array_size(tasks) == 0)
    cli_usage("--suite %s: expected an object with a non-empty \"tasks\" "
              "array",
              s->suite_path);
  check_suite_keys(s, root);
  const char *dtype = suite_str(s, root, "dtype", "");
  const char *target = suite_str(s, root, "target", "");
  s->st = keep_array(json_array_size(tasks), sizeof *s->st);
  const char **names = keep_array(json_array_size(tasks), sizeof *names);
  s->ntasks = 0;
  const char *all = "";
  size_t i;
  json_t *jt;
  json_array_foreach(tasks, i, jt) {
    const char *where = cli_printf("tasks[%zu]: ", i);
    if (!json_is_object(jt))
      cli_usage("--suite %s: %sexpected an object", s->suite_path, where);
    suite_task t;
    memset(&t, 0, sizeof t);
    t.name = suite_str(s, jt, "name", where);
    check_task_keys(s, jt,
                    t.name && t.name[0] ? t.name : cli_printf("tasks[%zu]", i));
    const char *op = suite_str(s, jt, "op", where);
    const char *t1 = suite_str(s, jt, "t1", where);
    const char *t4 = suite_str(s, jt, "t4", where);
    if (!t.name || !t.name[0] || (!op && !t1))
      cli_usage("--suite %s: %s\"name\" and \"op\" (or \"t1\" and \"t4\") "
                "are required",
                s->suite_path, where);
    json_t *shape = json_object_get(jt, "shape");
    if (t1 && (op || shape || !t4))
      cli_usage("--suite %s: task %s: a \"t1\" task takes a \"t4\" and no "
                "\"op\" or \"shape\" (its space is the T1 file's)",
                s->suite_path, t.name);
    if (t4 && !t1)
      cli_usage("--suite %s: task %s: \"t4\" goes with a \"t1\" (an op "
                "task has \"op\" and \"shape\")",
                s->suite_path, t.name);
    if (!shape && !t1)
      cli_usage("--suite %s: task %s: \"shape\" is required", s->suite_path,
                t.name);
    /* The name goes into the log and plot file names as it is. */
    if (!cli_name_ok(t.name, strlen(t.name)))
      cli_usage(
          "--suite %s: %stask name '%s' cannot go into file names: a task "
          "name must be %s",
          s->suite_path, where, t.name, CLI_NAME_RULE);
    /* --tasks picks names case-blind, and a case-blind file system would
     * give two such tasks one log. */
    for (size_t k = 0; k < i; k++)
      if (!strcasecmp(names[k], t.name))
        cli_usage("--suite %s: %stask name '%s' is used before, by tasks[%zu] "
                  "('%s'); task names must differ in more than case",
                  s->suite_path, where, t.name, k, names[k]);
    names[i] = t.name;
    t.args = s->task;
    if (t1) {
      /* A space of the community's formats: paths relative to the suite. */
      t.args.t1 = suite_path(s, t1);
      t.args.t4 = suite_path(s, t4);
    } else {
      t.args.op = op;
      t.args.shape = suite_shape(s, t.name, op, shape);
    }
    if (!t.args.dtype)
      t.args.dtype = dtype;
    if (!t.args.target)
      t.args.target = target;
    all = cli_printf("%s%s%s", all, i ? ", " : "", t.name);
    if (s->tasks && !name_listed(s->tasks, t.name))
      continue;
    s->st[s->ntasks++] = t;
  }
  json_decref(root);
  /* A typo in --tasks would silently leave a task out. */
  if (s->tasks) {
    int n = 0;
    const char **want = split_list("--tasks", s->tasks, &n);
    for (int k = 0; k < n; k++) {
      int found = 0;
      for (int j = 0; j < s->ntasks; j++)
        found |= !strcasecmp(s->st[j].name, want[k]);
      if (!found)
        cli_usage("--tasks: no task '%s' in %s (it has %s)", want[k],
                  s->suite_path, all);
    }
  }
}
