/* bench/bench_suite_file.c - the suite file bench_suite compares: its
 * format is in --help (bench_suite_options.c), its checks here. */
#include <jansson.h>
#include <string.h>
#include <strings.h>

#include "bench_suite.h"

/* ---- The suite ----------------------------------------------------------- */

/* Turns the shape object {"M": 1024, ...} into the op's --shape order.
 * Trailing dimensions may be left out (the op's defaults fill them); one
 * left out before a given one, or a name the op does not have, is a usage
 * error naming both. */
static void suite_shape(const char *file, suite_task *t, json_t *shape) {
  const char *const *names;
  int nd;
  heron_error err;
  heron_error_clear(&err);
  if (heron_op_dims(t->op, &names, &nd, &err)) {
    /* An op this build does not have yet fails its rows, not the run. */
    t->error = cli_printf("%s", err.text);
    return;
  }
  int64_t vals[MAX_DIMS] = {0};
  int have[MAX_DIMS] = {0}, last = -1;
  char known[256];
  size_t len = 0;
  known[0] = '\0';
  for (int d = 0; d < nd && len < sizeof known; d++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s",
                            d ? ", " : "", names[d]);
  if (json_is_array(shape)) {
    /* Also accepted: the values in --shape order. */
    if ((int)json_array_size(shape) > nd)
      cli_usage("--suite %s: task %s: %s takes at most %d dimensions (%s)",
                file, t->name, t->op, nd, known);
    for (int d = 0; d < (int)json_array_size(shape); d++) {
      json_t *v = json_array_get(shape, (size_t)d);
      if (!json_is_integer(v) || json_integer_value(v) < 0)
        cli_usage("--suite %s: task %s: dimension %s is not a non-negative "
                  "integer",
                  file, t->name, names[d]);
      vals[d] = json_integer_value(v);
      have[d] = 1;
      last = d;
    }
  } else if (json_is_object(shape)) {
    const char *key;
    json_t *v;
    json_object_foreach(shape, key, v) {
      int d = -1;
      for (int i = 0; i < nd && d < 0; i++)
        if (!strcmp(names[i], key))
          d = i;
      for (int i = 0; i < nd && d < 0; i++)
        if (!strcasecmp(names[i], key))
          d = i;
      if (d < 0)
        cli_usage("--suite %s: task %s: %s has no dimension '%s' (it has %s)",
                  file, t->name, t->op, key, known);
      if (!json_is_integer(v) || json_integer_value(v) < 0)
        cli_usage("--suite %s: task %s: dimension %s is not a non-negative "
                  "integer",
                  file, t->name, key);
      vals[d] = json_integer_value(v);
      have[d] = 1;
      if (d > last)
        last = d;
    }
  } else {
    cli_usage("--suite %s: task %s: \"shape\" must be an object of named "
              "dimensions",
              file, t->name);
  }
  char text[512];
  len = 0;
  text[0] = '\0';
  for (int d = 0; d <= last; d++) {
    if (!have[d])
      cli_usage("--suite %s: task %s: dimension %s of %s is missing (only "
                "trailing dimensions may be left out; %s has %s)",
                file, t->name, names[d], t->op, t->op, known);
    len += (size_t)snprintf(text + len, sizeof text - len, "%s%lld",
                            d ? "," : "", (long long)vals[d]);
  }
  if (heron_parse_shape(t->op, text, t->shape, MAX_DIMS, &t->nshape, &err))
    cli_usage("--suite %s: task %s: %s", file, t->name, err.text);
}

static const char *json_str(const char *file, json_t *o, const char *key,
                            const char *what) {
  json_t *v = json_object_get(o, key);
  if (!v)
    return NULL;
  if (!json_is_string(v))
    cli_usage("--suite %s: %s\"%s\" must be a string", file, what, key);
  return cli_strdup(json_string_value(v));
}

static int name_listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && !strncasecmp(p, name, n))
      return 1;
    p = end ? end + 1 : p + len;
  }
  return 0;
}

/* A suite's keys and a task's (the format in --help): any other is
 * refused, naming the file, the task and the key, as a misspelt or
 * misplaced key would silently fall back to a default ("dtype" in a task
 * running the suite's fp32). */
static const char *const suite_keys[] = {"name",   "description", "dtype",
                                         "target", "tasks",       NULL};
static const char *const task_keys[] = {"name", "op", "shape", NULL};

/* `who` names the task: its name, or tasks[i] without one. */
static void check_task_keys(const char *file, json_t *jt, const char *who) {
  const char *key = cli_json_unknown_key(jt, task_keys);
  if (!key)
    return;
  if (!strcmp(key, "dtype") || !strcmp(key, "target"))
    cli_usage("--suite %s: task %s: unknown key \"%s\": \"%s\" belongs to "
              "the whole suite (its top level: bench_suite compares one "
              "dtype and target per suite), not to one task",
              file, who, key, key);
  if (!strcmp(key, "t1") || !strcmp(key, "t4"))
    cli_usage("--suite %s: task %s: unknown key \"%s\": spaces of T1 "
              "files have no library to compare with (heron-bench runs "
              "them)",
              file, who, key);
  cli_usage("--suite %s: task %s: unknown key \"%s\" (a task has "
            "\"name\", \"op\" and \"shape\")",
            file, who, key);
}

void load_suite(const settings *s, suite *su) {
  json_t *root = cli_json_load("--suite", s->suite);
  if (!json_is_object(root))
    cli_usage("--suite %s: expected a JSON object with \"tasks\"", s->suite);
  const char *key = cli_json_unknown_key(root, suite_keys);
  if (key)
    cli_usage("--suite %s: unknown key \"%s\" (a suite has \"name\", "
              "\"description\", \"dtype\", \"target\" and \"tasks\")",
              s->suite, key);
  su->name = json_str(s->suite, root, "name", "");
  if (!su->name)
    su->name = cli_strdup(s->suite);
  const char *dtype = json_str(s->suite, root, "dtype", "");
  const char *target = json_str(s->suite, root, "target", "");
  su->dtype = dtype ? dtype : "fp32";
  su->target = target ? target : "cpu";
  /* The baselines are CPU libraries: OpenBLAS and oneDNN in fp32, oneDNN
   * in int8 and bf16. */
  if (strcmp(su->dtype, "fp32") && strcmp(su->dtype, "int8") &&
      strcmp(su->dtype, "bf16"))
    cli_usage("--suite %s: dtype '%s': bench_suite compares fp32, int8 or "
              "bf16",
              s->suite, su->dtype);
  if (strcmp(su->target, "cpu") && strcmp(su->target, "amx"))
    cli_usage("--suite %s: target '%s': bench_suite compares the cpu and amx "
              "targets only",
              s->suite, su->target);
  if (!strcmp(su->target, "amx") && !strcmp(su->dtype, "fp32"))
    cli_usage("--suite %s: the amx target takes int8 or bf16, not fp32",
              s->suite);
  if (strcmp(su->dtype, "fp32") && (s->bias || s->relu))
    cli_usage("--epilogue: the %s suite %s is compared without an epilogue",
              su->dtype, s->suite);
  if (s->fp32_dir && !strcmp(su->dtype, "fp32"))
    cli_usage("--fp32-dir: the suite %s is fp32 already", s->suite);
  json_t *tasks = json_object_get(root, "tasks");
  if (!json_is_array(tasks) || json_array_size(tasks) == 0)
    cli_usage("--suite %s: \"tasks\" must be a non-empty array", s->suite);
  size_t i;
  json_t *jt;
  char all[1024];
  size_t len = 0;
  all[0] = '\0';
  su->ntasks = 0;
  json_array_foreach(tasks, i, jt) {
    char what[64];
    snprintf(what, sizeof what, "tasks[%zu]: ", i);
    if (!json_is_object(jt))
      cli_usage("--suite %s: %sexpected an object", s->suite, what);
    suite_task t = {0};
    t.name = json_str(s->suite, jt, "name", what);
    check_task_keys(s->suite, jt,
                    t.name && *t.name ? t.name : cli_printf("tasks[%zu]", i));
    t.op = json_str(s->suite, jt, "op", what);
    if (!t.name || !*t.name || !t.op)
      cli_usage("--suite %s: %s\"name\" and \"op\" are required", s->suite,
                what);
    if (!cli_name_ok(t.name, strlen(t.name)))
      cli_usage("--suite %s: %stask name '%s' cannot go into file names: a "
                "task name must be %s",
                s->suite, what, t.name, CLI_NAME_RULE);
    for (int k = 0; k < su->ntasks; k++)
      if (!strcasecmp(su->tasks[k].name, t.name))
        cli_usage("--suite %s: task name '%s' is used twice", s->suite, t.name);
    json_t *shape = json_object_get(jt, "shape");
    if (!shape)
      cli_usage("--suite %s: task %s: \"shape\" is required", s->suite, t.name);
    suite_shape(s->suite, &t, shape);
    if (len < sizeof all)
      len += (size_t)snprintf(all + len, sizeof all - len, "%s%s",
                              i ? ", " : "", t.name);
    if (s->tasks && !name_listed(s->tasks, t.name))
      continue;
    if (su->ntasks == MAX_TASKS)
      cli_usage("--suite %s: more than %d tasks", s->suite, MAX_TASKS);
    su->tasks[su->ntasks++] = t;
  }
  json_decref(root);
  /* Every name in --tasks must exist: a typo would silently skip a task. */
  if (s->tasks) {
    char *copy = cli_strdup(s->tasks), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
      int found = 0;
      for (int k = 0; k < su->ntasks; k++)
        found |= !strcasecmp(su->tasks[k].name, tok);
      if (!found)
        cli_usage("--tasks: no task '%s' in %s (it has %s)", tok, s->suite,
                  all);
    }
    if (su->ntasks == 0)
      cli_usage("--tasks: '%s' selects no task", s->tasks);
  }
}
