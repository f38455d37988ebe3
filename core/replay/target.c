/* core/replay/target.c - the replay target's descriptor: the public name
 * (--target replay) of a task that makes no kernels and measures nothing
 * itself.  The recorded meter (meter.c) answers its configs from the
 * recorded logs of a cpu or cuda run (replay.c), or from a T4 file of a T1
 * space (core/space/t1.c), so strategies can be compared without the
 * hardware.  Its template and space are the recorded target's, rebuilt
 * from the spec (prepare names that target, finish checks the rebuilt key
 * against the recorded one); a T1 task's space comes from its file.  The
 * registry (core/targets/registry.c) lists it with the targets. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/replay/replay.h"
#include "core/space/t1.h"
#include "core/targets/target.h"
#include "core/task/task.h"

/* Checks the logs, reads the recorded task key of the first and names its
 * target (the fourth part of the key) as the base target; the key's other
 * parts are compared with the spec once the op is built (finish).  The
 * hardware is spec->hw, else the sidecar description next to the first
 * log, else what the recorded target would detect. */
static int replay_prepare(const heron_task_spec *spec, heron__task_draft *d,
                          heron_error *err) {
  if (!spec->replay || spec->nreplay < 1)
    return heron_error_set(err, HERON_EINVAL,
                           "target replay needs --replay LOG");
  for (int i = 0; i < spec->nreplay; i++)
    if (!spec->replay[i] || access(spec->replay[i], R_OK) != 0)
      return heron_error_set(
          err, HERON_ENOTFOUND, "replay log %s cannot be read: %s",
          spec->replay[i] ? spec->replay[i] : "(null)", strerror(errno));
  /* A T4 file heron-bench exported names its task in its metadata. */
  char *key = d->key;
  size_t cap = sizeof d->key;
  int rc = heron__replay_is_t4(spec->replay[0])
               ? heron__replay_t4_task(spec->replay[0], key, cap, err)
               : heron__replay_first_key(spec->replay[0], key, cap, err);
  if (rc)
    return rc;
  /* "op/shape/dtype/target[/epilogue]": the fourth part is the target, one
   * whose tasks are measured (not replay itself). */
  const char *p = key;
  for (int i = 0; i < 3 && p; i++)
    p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL;
  size_t n = p ? strcspn(p, "/") : 0;
  char base[32] = "";
  if (p && n < sizeof base)
    snprintf(base, sizeof base, "%.*s", (int)n, p);
  const heron__target *tg = heron__target_find(p ? base : "");
  if (!tg || !(tg->flags & HERON__TARGET_HW_FILE)) {
    char names[64];
    heron__target_names(HERON__TARGET_HW_FILE, 0, ", ", " or ", NULL, names,
                        sizeof names);
    return heron_error_set(err, HERON_ETASK,
                           "replay log %s holds task '%s': not a task of the "
                           "%s target, so it cannot be replayed",
                           spec->replay[0], key, names);
  }
  d->base = tg;
  if (spec->hw) {
    d->hw = spec->hw;
  } else {
    heron__replay_sidecar(spec->replay[0], d->side, sizeof d->side);
    d->hw = access(d->side, R_OK) == 0 ? d->side : NULL;
  }
  return HERON_OK;
}

/* The rebuilt task's key (t->key, made with the recorded target's name)
 * must be the log's; then the task keeps copies of the logs. */
static int replay_finish(heron_task *t, const heron_task_spec *spec,
                         const heron__task_draft *d, heron_error *err) {
  if (strcmp(t->key, d->key) != 0)
    /* The file first, the keys last: a long path is what gets shortened. */
    return heron_error_set(err, HERON_ETASK,
                           "replay log %s: the recorded task is '%s', not "
                           "the spec's '%s'",
                           spec->replay[0], d->key, t->key);
  t->recorded = calloc((size_t)spec->nreplay, sizeof *t->recorded);
  if (!t->recorded)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  t->nrecorded = spec->nreplay;
  for (int i = 0; i < spec->nreplay; i++)
    if (!(t->recorded[i] = strdup(spec->replay[i])))
      return heron_error_set(err, HERON_ENOMEM, "out of memory");
  snprintf(t->recorded_key, sizeof t->recorded_key, "%s", d->key);
  return HERON_OK;
}

/* The base name of a T4 file without ".gz" and ".json" ("A100_T4"). */
static void t4_stem(const char *path, char *out, size_t cap) {
  const char *b = strrchr(path, '/');
  snprintf(out, cap, "%s", b ? b + 1 : path);
  size_t n = strlen(out);
  if (n > 3 && !strcmp(out + n - 3, ".gz"))
    out[n -= 3] = '\0';
  if (n > 5 && !strcmp(out + n - 5, ".json"))
    out[n - 5] = '\0';
}

/* A task whose space comes from a T1 file (spec->t1) and whose
 * measurements, when tuned, come from the T4 file spec->t4. */
static int replay_t1_task(const heron_task_spec *spec, heron_task **out,
                          heron_error *err) {
  const heron__target *self = heron__target_replay();
  const char *bad = spec->op                            ? "an op"
                    : spec->nshape > 0                  ? "a shape"
                    : spec->dtype                       ? "a dtype"
                    : spec->nreplay > 0                 ? "--replay logs"
                    : spec->sm                          ? "an sm"
                    : spec->epilogue && *spec->epilogue ? "an epilogue"
                    : spec->prepack && *spec->prepack   ? "--prepack"
                    : spec->target && heron__target_find(spec->target) != self
                        ? "a target"
                        : NULL;
  if (bad)
    return heron_error_set(err, HERON_EINVAL,
                           "a T1 file (%s) gives the whole space: %s does "
                           "not apply to it",
                           spec->t1, bad);
  heron_task *t = calloc(1, sizeof *t);
  if (!t)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  int rc = heron__t1_load(spec->t1, &t->t1, &t->space, err);
  /* The T1 file first: its errors say more than a T4 file's absence. */
  if (!rc && spec->t4 && access(spec->t4, R_OK) != 0)
    rc = heron_error_set(err, HERON_ENOTFOUND, "T4 file %s cannot be read: %s",
                         spec->t4, strerror(errno));
  if (!rc) {
    /* No kernels of its own: base stays NULL. */
    t->target = self;
    t->op.name = "t1";
    t->op.flops = 1e9;
    heron__hw_detect_cpu(&t->hw);
    char stem[128] = "none";
    if (spec->t4)
      t4_stem(spec->t4, stem, sizeof stem);
    snprintf(t->key, sizeof t->key, "t1/%.100s/%.100s/%s", t->t1->name, stem,
             self->name);
    snprintf(t->recorded_key, sizeof t->recorded_key, "%s", t->key);
    /* The hardware is whatever measured the T4 file: named after it. */
    snprintf(t->hw.name, sizeof t->hw.name, "recorded in %.48s", stem);
  }
  if (!rc && spec->t4) {
    t->recorded = calloc(1, sizeof *t->recorded);
    if (!t->recorded || !(t->recorded[0] = strdup(spec->t4)))
      rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
    else
      t->nrecorded = 1;
  }
  if (rc) {
    heron_task_free(t);
    return rc;
  }
  *out = t;
  return HERON_OK;
}

static const heron__target replay_target = {
    .name = "replay",
    .summary = "answers measurements from recorded logs or a T4 file; no "
               "hardware, deterministic for a seed",
    .default_dtype = NULL,
    .dtypes = "the recorded target's",
    .flags = HERON__TARGET_RECORDED | HERON__TARGET_T1,
    .prepare = replay_prepare,
    .finish = replay_finish,
    .t1_task = replay_t1_task,
};

const heron__target *heron__target_replay(void) { return &replay_target; }
