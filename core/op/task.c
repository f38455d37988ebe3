/* core/op/task.c - tasks: validation of the spec, the memory check, and the
 * hand-over to the target's rules that build the template and space. */
#include "core/op/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    double n = heron__dtype_size(t < op->ninputs ? op->dtype : op->out_dtype);
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
  heron__buf_printf(&b, "/%s/%s", heron__dtype_name(t->op.dtype), t->target);
  if (t->op.epilogue)
    heron__buf_printf(&b, "/%s", heron__epilogue_name(t->op.epilogue));
  snprintf(t->key, sizeof t->key, "%s", b.data ? b.data : "");
  heron__buf_free(&b);
}

static int resolve_target(const char *target, heron_error *err) {
  if (!strcmp(target, "cpu") || !strcmp(target, "cuda"))
    return HERON_OK;
  return heron_error_set(err, HERON_ENOTFOUND,
                         "unknown target '%s'; available: cpu, cuda", target);
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

HERON_API int heron_task_create(const heron_task_spec *spec, heron_task **out,
                                heron_error *err) {
  if (!spec || !spec->op || !out)
    return heron_error_set(err, HERON_EINVAL, "task: no op given");
  const char *target = spec->target ? spec->target : "cpu";
  int rc = resolve_target(target, err);
  if (rc)
    return rc;
  /* Tensor Cores take fp16: that is the cuda target's default dtype. */
  const char *dflt = strcmp(target, "cuda") ? "fp32" : "fp16";
  int dtype = heron__dtype_parse(spec->dtype ? spec->dtype : dflt);
  if (dtype < 0)
    return heron_error_set(err, HERON_EINVAL,
                           "unknown dtype '%s'; expected fp32, fp16 or int8",
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
  return t->target;
}

HERON_API int heron_task_describe(const heron_task *t, char **text,
                                  heron_error *err) {
  heron__buf b = {0};
  heron__buf_printf(&b, "hardware: %s\n", t->hw.name);
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
