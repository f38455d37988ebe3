/* core/op/task.c - tasks: validation of the spec, the memory check, and the
 * hand-over to the target's rules that build the template and space. */
#include "core/op/task.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/measure/replay.h"
#include "core/space/t1.h"
#include "core/space/builder.h"
#include "core/target/cuda_driver.h"
#include "core/util/util.h"

/* The measuring process holds the inputs, an output scratch, the reference
 * output and (in the forked worker) a copy-on-write output: budget three
 * copies of every tensor plus one more output, and refuse a task whose
 * tensors could not fit in half of the machine's memory. */
static int check_memory(const heron__op *op, heron_error *err) {
  double bytes = 0;
  for (int t = 0; t <= op->ninputs; t++) {
    const heron__tensor *ts = t < op->ninputs ? &op->in[t] : &op->out;
    /* The bias is one small vector; the output's share covers it. */
    double n = heron__dtype_size(heron__op_buf_dtype(op, t));
    for (int d = 0; d < ts->ndim; d++)
      n *= (double)ts->dims[d];
    bytes += n * (t < op->ninputs ? 1.0 : 3.0);
  }
  double have = (double)heron__phys_mem();
  if (have > 0 && bytes > have / 2)
    return heron_error_set(err, HERON_ERANGE,
                           "%s tensors need %.1f GiB to measure; this machine "
                           "has %.1f GiB of memory",
                           op->name, bytes / 1073741824.0, have / 1073741824.0);
  return HERON_OK;
}

static void make_key(heron_task *t) {
  heron__buf b = {0};
  heron__buf_printf(&b, "%s/", t->op.name);
  for (int i = 0; i < t->op.nshape; i++)
    heron__buf_printf(&b, "%s%lld", i ? "," : "", (long long)t->op.shape[i]);
  heron__buf_printf(&b, "/%s/%s", heron__dtype_name(t->op.dtype),
                    t->nreplay ? "replay" : t->target);
  if (t->op.epilogue)
    heron__buf_printf(&b, "/%s", heron__epilogue_name(t->op.epilogue));
  if (t->op.prepack) {
    char names[128];
    heron__buf_printf(&b, "/prepack=%s",
                      heron__prepack_name(&t->op, names, sizeof names));
  }
  snprintf(t->key, sizeof t->key, "%s", b.data ? b.data : "");
  heron__buf_free(&b);
}

static int resolve_target(const char *target, heron_error *err) {
  if (!strcmp(target, "cpu") || !strcmp(target, "cuda") ||
      !strcmp(target, "amx") || !strcmp(target, "replay"))
    return HERON_OK;
  return heron_error_set(err, HERON_ENOTFOUND,
                         "unknown target '%s'; available: cpu, cuda, amx, "
                         "replay",
                         target);
}

/* A replay task: checks the logs, reads the recorded task key of the first
 * and writes the recorded target (cpu or cuda) into base[16].  The key's
 * other parts are compared with the spec once the op is built. */
static int replay_prepare(const heron_task_spec *spec, char *key, size_t cap,
                          char *base, heron_error *err) {
  if (!spec->replay || spec->nreplay < 1)
    return heron_error_set(err, HERON_EINVAL,
                           "target replay needs --replay LOG");
  for (int i = 0; i < spec->nreplay; i++)
    if (!spec->replay[i] || access(spec->replay[i], R_OK) != 0)
      return heron_error_set(
          err, HERON_ENOTFOUND, "replay log %s cannot be read: %s",
          spec->replay[i] ? spec->replay[i] : "(null)", strerror(errno));
  /* A T4 file heron-bench exported names its task in its metadata. */
  int rc = heron__replay_is_t4(spec->replay[0])
               ? heron__replay_t4_task(spec->replay[0], key, cap, err)
               : heron__replay_first_key(spec->replay[0], key, cap, err);
  if (rc)
    return rc;
  /* "op/shape/dtype/target[/epilogue]": the fourth part is the target. */
  const char *p = key;
  for (int i = 0; i < 3 && p; i++)
    p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL;
  size_t n = p ? strcspn(p, "/") : 0;
  if (!p || !((n == 3 && !strncmp(p, "cpu", 3)) ||
              (n == 4 && !strncmp(p, "cuda", 4))))
    return heron_error_set(err, HERON_ETASK,
                           "replay log %s holds task '%s': not a task of the "
                           "cpu or cuda target, so it cannot be replayed",
                           spec->replay[0], key);
  snprintf(base, 16, "%.*s", (int)n, p);
  return HERON_OK;
}

/* The replay task's hardware: spec->hw, else the sidecar description next
 * to the first log, else what the recorded target would detect.  The
 * returned name is spec->hw, the sidecar (in side[cap]) or NULL. */
static const char *replay_hw(const heron_task_spec *spec, char *side,
                             size_t cap) {
  if (spec->hw)
    return spec->hw;
  heron__replay_sidecar(spec->replay[0], side, cap);
  return access(side, R_OK) == 0 ? side : NULL;
}

/* Keeps copies of the replay logs in the task. */
static int replay_keep(heron_task *t, const heron_task_spec *spec,
                       const char *key, heron_error *err) {
  t->replay = calloc((size_t)spec->nreplay, sizeof *t->replay);
  if (!t->replay)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  t->nreplay = spec->nreplay;
  for (int i = 0; i < spec->nreplay; i++)
    if (!(t->replay[i] = strdup(spec->replay[i])))
      return heron_error_set(err, HERON_ENOMEM, "out of memory");
  snprintf(t->replay_key, sizeof t->replay_key, "%s", key);
  return HERON_OK;
}

/* The description a compute capability picks when there is no GPU to ask
 * and no --hw: the shipped GPU of that architecture. */
static const char *hw_for_sm(int sm) {
  switch (sm) {
  case 80:
    return "a100";
  case 86:
    return "rtx3080";
  case 90:
    return "h100";
  default:
    return NULL;
  }
}

/* The cuda target's hardware: the named description when spec->hw is
 * given, else the GPU (probed in a child process), else the description
 * spec->sm picks.  spec->sm then overrides the architecture compiled for. */
static int resolve_cuda_hw(const heron_task_spec *spec, heron__hw *hw,
                           heron_error *err) {
  if (spec->sm && (spec->sm < 70 || spec->sm > 129))
    return heron_error_set(err, HERON_EINVAL,
                           "sm %d is not a Tensor Core architecture; "
                           "expected 70..129 (e.g. 80 for A100, 90 for H100)",
                           spec->sm);
  int rc = HERON_OK;
  if (spec->hw) {
    rc = heron__hw_load(spec->hw, hw, err);
    if (!rc && strcmp(hw->target, "cuda") != 0)
      rc = heron_error_set(err, HERON_EINVAL,
                           "hardware description '%s' is for the %s target, "
                           "not cuda; use a GPU description (a100, h100, "
                           "h200, rtx3080)",
                           spec->hw, hw->target);
  } else {
    heron_error perr;
    heron_error_clear(&perr);
    if (heron__cuda_probe_isolated(hw, 60, &perr) != HERON_OK) {
      /* No GPU: compile for the architecture asked for, or for the A100
       * description, and say so in the hardware's name. */
      const char *name = spec->sm ? hw_for_sm(spec->sm) : "a100";
      if (!name)
        return heron_error_set(
            err, HERON_ENOTFOUND,
            "target cuda: %s, and no shipped description for sm %d; name "
            "one with --hw (a100, h100, h200, rtx3080, or a JSON file)",
            perr.text[0] ? perr.text : "no GPU", spec->sm);
      rc = heron__hw_load(name, hw, err);
      if (!rc) {
        char named[sizeof hw->name];
        snprintf(named, sizeof named, "%s", hw->name);
        snprintf(hw->name, sizeof hw->name, "%.40s (no GPU here)", named);
      }
    }
  }
  if (!rc && spec->sm)
    hw->sm = spec->sm;
  return rc;
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
static int t1_task_create(const heron_task_spec *spec, heron_task **out,
                          heron_error *err) {
  const char *bad = spec->op                              ? "an op"
                    : spec->nshape > 0                    ? "a shape"
                    : spec->dtype                         ? "a dtype"
                    : spec->nreplay > 0                   ? "--replay logs"
                    : spec->sm                            ? "an sm"
                    : spec->epilogue && *spec->epilogue   ? "an epilogue"
                    : spec->prepack && *spec->prepack     ? "--prepack"
                    : spec->target && strcmp(spec->target, "replay") ? "a target"
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
    snprintf(t->target, sizeof t->target, "replay");
    t->op.name = "t1";
    t->op.flops = 1e9;
    heron__hw_detect_cpu(&t->hw);
    char stem[128] = "none";
    if (spec->t4)
      t4_stem(spec->t4, stem, sizeof stem);
    snprintf(t->key, sizeof t->key, "t1/%.100s/%.100s/replay", t->t1->name,
             stem);
    snprintf(t->replay_key, sizeof t->replay_key, "%s", t->key);
    /* The hardware is whatever measured the T4 file: named after it. */
    snprintf(t->hw.name, sizeof t->hw.name, "recorded in %.48s", stem);
  }
  if (!rc && spec->t4) {
    t->replay = calloc(1, sizeof *t->replay);
    if (!t->replay || !(t->replay[0] = strdup(spec->t4)))
      rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
    else
      t->nreplay = 1;
  }
  if (rc) {
    heron_task_free(t);
    return rc;
  }
  *out = t;
  return HERON_OK;
}

HERON_API int heron_task_create(const heron_task_spec *spec, heron_task **out,
                                heron_error *err) {
  if (spec && spec->t1 && out)
    return t1_task_create(spec, out, err);
  if (spec && spec->t4)
    return heron_error_set(err, HERON_EINVAL,
                           "a T4 file (%s) needs the T1 file of its space",
                           spec->t4);
  if (!spec || !spec->op || !out)
    return heron_error_set(err, HERON_EINVAL, "task: no op given");
  const char *target = spec->target ? spec->target : "cpu";
  int rc = resolve_target(target, err);
  if (rc)
    return rc;
  int replay = !strcmp(target, "replay");
  char rkey[256] = "", base[16] = "", side[4200];
  if (!replay && spec->nreplay > 0)
    return heron_error_set(
        err, HERON_EINVAL,
        "replay logs (%s) apply to the replay target "
        "only, not %s",
        spec->replay && spec->replay[0] ? spec->replay[0] : "?", target);
  if (replay) {
    rc = replay_prepare(spec, rkey, sizeof rkey, base, err);
    if (rc)
      return rc;
    /* From here on the task is built as one of the recorded target. */
    target = base;
  }
  heron_task_spec rspec = *spec;
  if (replay)
    rspec.hw = replay_hw(spec, side, sizeof side);
  spec = &rspec;
  /* Tensor Cores take fp16: that is the cuda target's default dtype; AMX
   * tiles take int8 (or bf16). */
  const char *dflt = !strcmp(target, "cuda")  ? "fp16"
                     : !strcmp(target, "amx") ? "int8"
                                              : "fp32";
  int dtype = heron__dtype_parse(spec->dtype ? spec->dtype : dflt);
  if (dtype < 0)
    return heron_error_set(err, HERON_EINVAL,
                           "unknown dtype '%s'; expected " HERON__DTYPE_LIST,
                           spec->dtype);
  heron_task *t = calloc(1, sizeof *t);
  if (!t)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  snprintf(t->target, sizeof t->target, "%s", target);
  rc = heron__op_build(spec->op, spec->shape, spec->nshape, dtype, &t->op, err);
  int epi = 0;
  if (!rc)
    rc = heron__epilogue_parse(spec->epilogue, &epi, err);
  if (!rc)
    rc = heron__op_set_epilogue(&t->op, epi, err);
  if (!rc)
    rc = heron__op_set_prepack(&t->op, spec->prepack, err);
  if (!rc && t->op.prepack && !strcmp(target, "cuda"))
    rc = heron_error_set(err, HERON_EINVAL,
                         "--prepack applies to the cpu target only, not cuda");
  /* A replay task measures nothing, so its tensors need no memory. */
  if (!rc && !replay)
    rc = check_memory(&t->op, err);
  if (!rc && spec->sm && strcmp(target, "cuda") != 0)
    rc = heron_error_set(err, HERON_EINVAL,
                         "sm %d applies to the cuda target only, not %s",
                         spec->sm, target);
  if (!rc) {
    heron__hw_detect_cpu(&t->hw);
    if (!strcmp(target, "cuda"))
      rc = resolve_cuda_hw(spec, &t->hw, err);
    else if (spec->hw)
      rc = heron__hw_load(spec->hw, &t->hw, err);
  }
  if (!rc)
    rc = heron__template_build(&t->op, &t->hw, t->target, &t->tmpl, &t->space,
                               err);
  if (!rc && replay) {
    /* The recorded key, rebuilt from the spec, must be the log's. */
    make_key(t);
    if (strcmp(t->key, rkey) != 0)
      rc = heron_error_set(err, HERON_ETASK,
                           "the spec's task '%s' is not '%s', the task "
                           "recorded in %s",
                           t->key, rkey, spec->replay[0]);
    if (!rc)
      rc = replay_keep(t, spec, rkey, err);
  }
  if (rc) {
    heron_task_free(t);
    return rc;
  }
  make_key(t);
  *out = t;
  return HERON_OK;
}

HERON_API void heron_task_free(heron_task *t) {
  if (!t)
    return;
  heron__template_free(t->tmpl);
  heron__space_free(t->space);
  heron__t1_free(t->t1);
  for (int i = 0; t->replay && i < t->nreplay; i++)
    free(t->replay[i]);
  free(t->replay);
  free(t);
}

HERON_API const char *heron_task_key(const heron_task *t) { return t->key; }
HERON_API double heron_task_flops(const heron_task *t) { return t->op.flops; }
HERON_API const heron_space *heron_task_space(const heron_task *t) {
  return t->space;
}
HERON_API const char *heron_task_op(const heron_task *t) { return t->op.name; }
HERON_API const char *heron_task_dtype(const heron_task *t) {
  return heron__dtype_name(t->op.dtype);
}
HERON_API const char *heron_task_target(const heron_task *t) {
  return t->nreplay ? "replay" : t->target;
}

/* A T1 task: its parameters with their values and its restrictions. */
static void describe_t1(const heron_task *t, heron__buf *b) {
  const heron__t1 *t1 = t->t1;
  heron__buf_printf(b, "T1 space %s: %d parameters, %d restrictions\n",
                    t1->name, t1->nparams, t1->nconds);
  for (int i = 0; i < t1->nparams; i++) {
    const heron__t1_param *p = &t1->params[i];
    heron__buf_printf(b, "  %s in [", p->name);
    for (int k = 0; k < p->nvals; k++) {
      json_t *v = heron__t1_value(t1, i, p->coded ? k : p->vals[k].i);
      char *txt = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
      heron__buf_printf(b, "%s%s", k ? ", " : "", txt ? txt : "?");
      free(txt);
      json_decref(v);
    }
    heron__buf_printf(b, "]%s\n", p->coded ? " (knob values are positions)"
                                            : "");
  }
  int nc = heron_space_nconstraints(t->space);
  for (int c = 0; c < nc; c++) {
    char text[512];
    heron_space_constraint_str(t->space, c, text, sizeof text);
    heron__buf_printf(b, "  restriction %d: %s\n", c + 1, text);
  }
}

HERON_API int heron_task_describe(const heron_task *t, char **text,
                                  heron_error *err) {
  heron__buf b = {0};
  heron__buf_printf(&b, "hardware: %s\n", t->hw.name);
  if (t->t1)
    describe_t1(t, &b);
  else
    heron__template_describe(t->tmpl, t->space, &b);
  *text = heron__buf_take(&b);
  if (!*text)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  return HERON_OK;
}

HERON_API int heron_task_source(const heron_task *t, const int64_t *cfg,
                                char **src, heron_error *err) {
  int which = -1;
  if (heron_space_violations(t->space, cfg, &which, 1) != 0) {
    char c[200] = "";
    heron_space_constraint_str(t->space, which, c, sizeof c);
    return heron_error_set(err, HERON_EINVAL,
                           "config violates constraint %d: %s", which, c);
  }
  if (!t->tmpl)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "task %s has no kernel source: its space comes "
                           "from a T1 file",
                           t->key);
  heron__buf b = {0};
  int rc = heron__codegen(t->tmpl, t->space, cfg, &b, err);
  if (rc) {
    heron__buf_free(&b);
    return rc;
  }
  *src = heron__buf_take(&b);
  if (!*src)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  return HERON_OK;
}

HERON_API const char *heron_task_cflags(const heron_task *t) {
  return heron__template_cflags(t ? t->tmpl : NULL);
}
