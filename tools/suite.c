/* tools/suite.c - the suite file the tools read (suite.h). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "suite.h"

enum { MAX_DIMS = 32 };

static const char *suite_str(const char *flag, const char *path, json_t *o,
                             const char *key, const char *where) {
  json_t *v = json_object_get(o, key);
  if (!v)
    return NULL;
  if (!json_is_string(v))
    cli_usage("%s %s: %s\"%s\" must be a string", flag, path, where, key);
  return cli_strdup(json_string_value(v));
}

/* The shape in --shape order ("1024,1024,1024"); the op checks the values
 * when the task is created. */
static const char *suite_shape(const char *flag, const char *path,
                               const char *name, const char *op,
                               json_t *shape) {
  const char *const *names;
  int nd = 0;
  char dims[256];
  cli_check_op(op);
  heron_op_dims(op, &names, &nd, NULL);
  cli_op_dims_text(op, dims, sizeof dims);
  json_t *vals[MAX_DIMS] = {0};
  if (json_is_array(shape)) {
    if ((int)json_array_size(shape) > nd)
      cli_usage("%s %s: task %s: %s has %d dimensions (%s), the shape "
                "gives %zu",
                flag, path, name, op, nd, dims, json_array_size(shape));
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
        cli_usage("%s %s: task %s: %s has no dimension '%s' (it has %s)", flag,
                  path, name, op, key, dims);
      vals[d] = v;
    }
  } else {
    cli_usage("%s %s: task %s: \"shape\" must be an object of named "
              "dimensions (%s)",
              flag, path, name, dims);
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
      cli_usage("%s %s: task %s: dimension %s is missing before %s (only "
                "trailing dimensions may be left out; %s has %s)",
                flag, path, name, names[gap], names[d], op, dims);
    if (!json_is_integer(vals[d]))
      cli_usage("%s %s: task %s: dimension %s must be an integer", flag, path,
                name, names[d]);
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
static const char *suite_path(const char *path, const char *p) {
  if (p[0] == '/')
    return p;
  const char *slash = strrchr(path, '/');
  if (!slash)
    return p;
  return cli_printf("%.*s/%s", (int)(slash - path), path, p);
}

/* A suite's keys, and a task's: any other is refused, naming the file,
 * the task and the key (a misspelt key would silently fall back to a
 * default: "dtpye" running fp32). */
static const char *const suite_keys[] = {"name",   "description", "dtype",
                                         "target", "tasks",       NULL};
static const char *const task_keys[] = {"name", "op", "shape", "epilogue",
                                        "t1",   "t4", NULL};

static void check_suite_keys(const char *flag, const char *path, json_t *root) {
  const char *key = cli_json_unknown_key(root, suite_keys);
  if (key)
    cli_usage("%s %s: unknown key \"%s\" (a suite has \"name\", "
              "\"description\", \"dtype\", \"target\" and \"tasks\")",
              flag, path, key);
}

/* `who` names the task: its name, or tasks[i] without one. */
static void check_task_keys(const char *flag, const char *path, json_t *jt,
                            const char *who) {
  const char *key = cli_json_unknown_key(jt, task_keys);
  if (!key)
    return;
  if (!strcmp(key, "dtype") || !strcmp(key, "target"))
    cli_usage("%s %s: task %s: unknown key \"%s\": \"%s\" belongs to "
              "the whole suite (its top level; or --%s for every task), "
              "not to one task",
              flag, path, who, key, key, key);
  cli_usage(
      "%s %s: task %s: unknown key \"%s\" (a task has \"name\", "
      "\"op\", \"shape\" and \"epilogue\", or \"name\", \"t1\" and \"t4\")",
      flag, path, who, key);
}

cli_suite_task *cli_suite_load(const char *flag, const char *path,
                               const cli_task_args *flags, const char *select,
                               int *n) {
  json_t *root = cli_json_load(flag, path);
  json_t *tasks = json_object_get(root, "tasks");
  if (!json_is_object(root) || !json_is_array(tasks) ||
      json_array_size(tasks) == 0)
    cli_usage("%s %s: expected an object with a non-empty \"tasks\" "
              "array",
              flag, path);
  check_suite_keys(flag, path, root);
  const char *dtype = suite_str(flag, path, root, "dtype", "");
  const char *target = suite_str(flag, path, root, "target", "");
  size_t cap = json_array_size(tasks);
  cli_suite_task *st = calloc(cap, sizeof *st);
  const char **names = calloc(cap, sizeof *names);
  if (!st || !names) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  int ntasks = 0;
  const char *all = "";
  size_t i;
  json_t *jt;
  json_array_foreach(tasks, i, jt) {
    const char *where = cli_printf("tasks[%zu]: ", i);
    if (!json_is_object(jt))
      cli_usage("%s %s: %sexpected an object", flag, path, where);
    cli_suite_task t;
    memset(&t, 0, sizeof t);
    t.name = suite_str(flag, path, jt, "name", where);
    check_task_keys(flag, path, jt,
                    t.name && t.name[0] ? t.name : cli_printf("tasks[%zu]", i));
    const char *op = suite_str(flag, path, jt, "op", where);
    const char *t1 = suite_str(flag, path, jt, "t1", where);
    const char *t4 = suite_str(flag, path, jt, "t4", where);
    const char *epilogue = suite_str(flag, path, jt, "epilogue", where);
    if (epilogue && t1)
      cli_usage("%s %s: %sa \"t1\" task has no \"epilogue\"", flag, path,
                where);
    if (!t.name || !t.name[0] || (!op && !t1))
      cli_usage("%s %s: %s\"name\" and \"op\" (or \"t1\" and \"t4\") "
                "are required",
                flag, path, where);
    json_t *shape = json_object_get(jt, "shape");
    if (t1 && (op || shape || !t4))
      cli_usage("%s %s: task %s: a \"t1\" task takes a \"t4\" and no "
                "\"op\" or \"shape\" (its space is the T1 file's)",
                flag, path, t.name);
    if (t4 && !t1)
      cli_usage("%s %s: task %s: \"t4\" goes with a \"t1\" (an op "
                "task has \"op\" and \"shape\")",
                flag, path, t.name);
    if (!shape && !t1)
      cli_usage("%s %s: task %s: \"shape\" is required", flag, path, t.name);
    /* The name goes into the log and plot file names as it is. */
    if (!cli_name_ok(t.name, strlen(t.name)))
      cli_usage("%s %s: %stask name '%s' cannot go into file names: a task "
                "name must be %s",
                flag, path, where, t.name, CLI_NAME_RULE);
    /* --tasks picks names case-blind, and a case-blind file system would
     * give two such tasks one log. */
    for (size_t k = 0; k < i; k++)
      if (!strcasecmp(names[k], t.name))
        cli_usage("%s %s: %stask name '%s' is used before, by tasks[%zu] "
                  "('%s'); task names must differ in more than case",
                  flag, path, where, t.name, k, names[k]);
    names[i] = t.name;
    t.args = *flags;
    if (t1) {
      /* A space of the community's formats: paths relative to the suite. */
      t.args.t1 = suite_path(path, t1);
      t.args.t4 = suite_path(path, t4);
    } else {
      t.args.op = op;
      t.args.shape = suite_shape(flag, path, t.name, op, shape);
      if (epilogue)
        t.args.epilogue = epilogue;
    }
    if (!t.args.dtype)
      t.args.dtype = dtype;
    if (!t.args.target)
      t.args.target = target;
    all = cli_printf("%s%s%s", all, i ? ", " : "", t.name);
    if (select && !name_listed(select, t.name))
      continue;
    st[ntasks++] = t;
  }
  json_decref(root);
  /* A typo in --tasks would silently leave a task out. */
  for (const char *p = select; p && *p;) {
    size_t len = strcspn(p, ",");
    if (len == 0)
      cli_usage("--tasks: '%s' has an empty item (expected a "
                "comma-separated list)",
                select);
    int found = 0;
    for (int j = 0; j < ntasks; j++)
      found |= strlen(st[j].name) == len && !strncasecmp(st[j].name, p, len);
    if (!found)
      cli_usage("--tasks: no task '%.*s' in %s (it has %s)", (int)len, p, path,
                all);
    p += len + (p[len] == ',');
  }
  free(names);
  *n = ntasks;
  return st;
}
