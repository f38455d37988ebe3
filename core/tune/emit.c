/* core/tune/emit.c - --emit DIR: the best kernel's config, then what its
 * target writes (heron__target.emit): the kernel's source and what builds
 * and runs it without libheron (a standalone driver and build script, or
 * how to launch it). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/record/record.h"
#include "core/task/task.h"
#include "core/util/util.h"

int heron__emit(const heron_task *t, const heron_history *h, const char *dir,
                heron_error *err);

/* DIR/NAME, however long DIR is (a path the system refuses as too long is
 * its error, with the reason, never a shortened path written instead). */
static int write_in(const char *dir, const char *name, const char *text,
                    heron_error *err) {
  size_t cap = strlen(dir) + 1 + strlen(name) + 1;
  char *path = malloc(cap);
  if (!path)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  snprintf(path, cap, "%s/%s", dir, name);
  int rc = heron__write_file(path, text, strlen(text), err);
  free(path);
  return rc;
}

static char *config_json(const heron_task *t, const heron_measurement *best) {
  const heron_space *sp = t->space;
  json_t *knobs = json_object();
  for (int i = 0; i < heron_space_nknobs(sp); i++) {
    int v = heron_space_knob(sp, i);
    json_object_set_new(knobs, heron_space_var_name(sp, v),
                        json_integer((json_int_t)best->config[v]));
  }
  char key[32] = "";
  heron_space_key(sp, best->config, key, sizeof key);
  json_t *o = json_object();
  json_object_set_new(o, "task", json_string(t->key));
  json_object_set_new(o, "trial", json_integer(best->trial));
  json_object_set_new(o, "key", json_string(key));
  json_object_set_new(o, "seconds", json_real(best->seconds));
  json_object_set_new(o, "gflops", json_real(best->gflops));
  json_object_set_new(o, "hardware", json_string(t->hw.name));
  json_object_set_new(o, "config", knobs);
  char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(o);
  return s;
}

int heron__emit(const heron_task *t, const heron_history *h, const char *dir,
                heron_error *err) {
  const heron_measurement *best = heron_history_best(h);
  if (!best)
    return HERON_OK;
  /* config.json for every target, then the target's own files: the
   * kernel's source and how to build and run it (core/targets/target.h).
   * A T1 space has no kernel to write: its best config is the result. */
  int rc = heron__mkdirs(dir, err);
  char *cfg = rc ? NULL : config_json(t, best);
  if (!rc)
    rc = cfg ? write_in(dir, "config.json", cfg, err)
             : heron_error_set(err, HERON_ENOMEM, "out of memory");
  free(cfg);
  const heron__target *tg = t->base ? t->base : t->target;
  if (!rc && tg->emit)
    rc = tg->emit(t, best, dir, err);
  return rc;
}
