/* core/task/task.c - task assembly: the spec validated, the op built, the
 * target found in the registry and asked (core/targets/target.h) for its
 * spec checks, hardware, rules and, for replay, its recorded task; the
 * memory check; the task's key and its public accessors. */
#include "core/task/task.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/space/builder.h"
#include "core/space/t1.h"
#include "core/util/util.h"

/* The measuring process holds the inputs, an output scratch, the reference
 * output and (in the forked worker) a copy-on-write output: three copies of
 * the output.  While the reference runs it also holds a double copy of
 * every data input and a double output (heron__op_run_ref: 8 bytes per
 * element, twice an fp32 tensor, four times an fp16 or bf16 one, eight
 * times an int8 one).  A task whose tensors with these could not fit in
 * half of the machine's memory is refused. */
static int check_memory(const heron__op *op, heron_error *err) {
  double bytes = 0;
  for (int t = 0; t <= op->ninputs; t++) {
    const heron__tensor *ts = t < op->ninputs ? &op->in[t] : &op->out;
    double n = 1;
    for (int d = 0; d < ts->ndim; d++)
      n *= (double)ts->dims[d];
    /* The bias is one small vector; the output's share covers it. */
    double size = heron__dtype_size(heron__op_buf_dtype(op, t));
    int copied = t == op->ninputs || ts->fill == HERON__FILL_RANDOM;
    bytes += n * ((t < op->ninputs ? 1.0 : 3.0) * size +
                  (copied ? (double)sizeof(double) : 0.0));
  }
  double have = (double)heron__phys_mem();
  if (have > 0 && bytes > have / 2)
    return heron_error_set(err, HERON_ERANGE,
                           "%s tensors need %.1f GiB to measure; this machine "
                           "has %.1f GiB of memory",
                           op->name, bytes / 1073741824.0, have / 1073741824.0);
  return HERON_OK;
}

/* The key "op/shape/dtype/<target>[/epilogue][/prepack=...]": the
 * target's name is the base's until a replay task holds its logs (so the
 * rebuilt task's key can be compared with the recorded one), then the
 * task's own. */
static void make_key(heron_task *t) {
  const heron__target *named = t->nrecorded ? t->target : t->base;
  heron__buf b = {0};
  heron__buf_printf(&b, "%s/", t->op.name);
  for (int i = 0; i < t->op.nshape; i++)
    heron__buf_printf(&b, "%s%lld", i ? "," : "", (long long)t->op.shape[i]);
  heron__buf_printf(&b, "/%s/%s", heron__dtype_name(t->op.dtype), named->name);
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

/* The target that builds T1 tasks (replay). */
static const heron__target *t1_target(void) {
  for (int i = 0; i < heron__target_count(); i++)
    if (heron__target_at(i)->flags & HERON__TARGET_T1)
      return heron__target_at(i);
  return NULL;
}

/* Builds the op, its epilogue and prepacked inputs, and lets the base
 * target check the options only some targets take. */
static int build_op(heron_task *t, const heron_task_spec *spec, int dtype,
                    heron_error *err) {
  int rc =
      heron__op_build(spec->op, spec->shape, spec->nshape, dtype, &t->op, err);
  int epi = 0;
  if (!rc)
    rc = heron__epilogue_parse(spec->epilogue, &epi, err);
  if (!rc)
    rc = heron__op_set_epilogue(&t->op, epi, err);
  if (!rc)
    rc = heron__op_set_prepack(&t->op, spec->prepack, err);
  if (!rc && t->base->check_spec)
    rc = t->base->check_spec(spec, &t->op, err);
  return rc;
}

/* Gives the new task *out the spec's sampler mode (heron_space_set_sampler);
 * on failure frees it. */
static int set_sampler(const heron_task_spec *spec, heron_task **out, int rc,
                       heron_error *err) {
  if (!rc && spec->sampler != HERON_SAMPLER_HERON)
    rc = heron_space_set_sampler((*out)->space, spec->sampler, err);
  if (rc && *out) {
    heron_task_free(*out);
    *out = NULL;
  }
  return rc;
}

HERON_API int heron_task_create(const heron_task_spec *spec, heron_task **out,
                                heron_error *err) {
  if (spec && spec->t1 && out) {
    const heron__target *tg = t1_target();
    *out = NULL;
    return set_sampler(spec, out, tg->t1_task(spec, out, err), err);
  }
  if (spec && spec->t4)
    return heron_error_set(err, HERON_EINVAL,
                           "a T4 file (%s) needs the T1 file of its space",
                           spec->t4);
  if (!spec || !spec->op || !out)
    return heron_error_set(err, HERON_EINVAL, "task: no op given");
  const heron__target *tg = NULL;
  int rc = heron__target_lookup(spec->target, &tg, err);
  if (rc)
    return rc;
  if (!(tg->flags & HERON__TARGET_RECORDED) && spec->nreplay > 0) {
    char rec[64];
    heron__target_names(HERON__TARGET_RECORDED, 0, ", ", " or ", NULL, rec,
                        sizeof rec);
    return heron_error_set(
        err, HERON_EINVAL,
        "replay logs (%s) apply to the %s target "
        "only, not %s",
        spec->replay && spec->replay[0] ? spec->replay[0] : "?", rec, tg->name);
  }
  /* A replay target names the recorded target: from here on the task is
   * built as one of it, on the hardware prepare picked. */
  heron__task_draft *d = calloc(1, sizeof *d);
  if (!d)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  if (tg->prepare)
    rc = tg->prepare(spec, d, err);
  const heron__target *base = d->base ? d->base : tg;
  heron_task_spec rspec = *spec;
  if (tg->prepare)
    rspec.hw = d->hw;
  spec = &rspec;
  heron_task *t = NULL;
  if (!rc) {
    const char *dt = spec->dtype ? spec->dtype : base->default_dtype;
    int dtype = heron__dtype_parse(dt ? dt : "fp32");
    if (dtype < 0)
      rc = heron_error_set(err, HERON_EINVAL,
                           "unknown dtype '%s'; expected " HERON__DTYPE_LIST,
                           spec->dtype);
    else if (!(t = calloc(1, sizeof *t)))
      rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
    else {
      t->target = tg;
      t->base = base;
      rc = build_op(t, spec, dtype, err);
    }
  }
  /* A recorded task measures nothing, so its tensors need no memory. */
  if (!rc && !(tg->flags & HERON__TARGET_RECORDED))
    rc = check_memory(&t->op, err);
  if (!rc) {
    heron__hw_detect_cpu(&t->hw);
    if (base->resolve_hw)
      rc = base->resolve_hw(spec, &t->hw, err);
  }
  if (!rc)
    rc = heron__template_build_for(&t->op, &t->hw, base, &t->tmpl, &t->space,
                                   err);
  if (!rc && tg->finish) {
    /* The key rebuilt from the spec, with the base's name, for finish to
     * compare with the recorded one. */
    make_key(t);
    rc = tg->finish(t, spec, d, err);
  }
  free(d);
  if (rc) {
    heron_task_free(t);
    return rc;
  }
  make_key(t);
  *out = t;
  return set_sampler(spec, out, HERON_OK, err);
}

HERON_API void heron_task_free(heron_task *t) {
  if (!t)
    return;
  heron__template_free(t->tmpl);
  heron__space_free(t->space);
  heron__t1_free(t->t1);
  for (int i = 0; t->recorded && i < t->nrecorded; i++)
    free(t->recorded[i]);
  free(t->recorded);
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
  return t->target->name;
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
    heron__buf_printf(b, "]%s\n",
                      p->coded ? " (knob values are positions)" : "");
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

/* ---- A kernel's interface ------------------------------------------------ */

HERON_API int heron_task_shape(const heron_task *t, const int64_t **shape) {
  if (!t || !t->tmpl) {
    if (shape)
      *shape = NULL;
    return 0;
  }
  if (shape)
    *shape = t->op.shape;
  return t->op.nshape;
}

HERON_API const char *heron_task_epilogue(const heron_task *t) {
  return t && t->tmpl ? heron__epilogue_name(t->op.epilogue) : "";
}

HERON_API const char *heron_task_prepack(const heron_task *t) {
  const char *p = t ? strstr(t->key, "/prepack=") : NULL;
  return p ? p + strlen("/prepack=") : "";
}

HERON_API int heron_task_nbuffers(const heron_task *t) {
  return t && t->tmpl ? heron__op_nbufs(&t->op) : 0;
}

HERON_API int heron_task_buffer_info(const heron_task *t, int i,
                                     heron_task_buffer *b, heron_error *err) {
  int n = heron_task_nbuffers(t);
  if (i < 0 || i >= n || !b)
    return heron_error_set(err, HERON_ERANGE,
                           "buffer %d of a task with %d buffers", i, n);
  const heron__op *op = &t->op;
  const heron__tensor *ts = i < op->ninputs    ? &op->in[i]
                            : i == op->ninputs ? &op->out
                                               : &op->bias;
  int dt = heron__op_buf_dtype(op, i);
  b->name = ts->name;
  b->dtype = heron__dtype_name(dt);
  b->elem_bytes = heron__dtype_size(dt);
  b->output = i == op->ninputs;
  b->ndim = ts->ndim;
  b->dims = ts->dims;
  return HERON_OK;
}
