/* core/op/epilogue.c - fused epilogues: a per-channel bias add and ReLU
 * after the op's reduction (the Always-Inline rule fuses them into the
 * kernel's final store).  The op description carries the flags and the
 * bias tensor; references and the interpreter compute the plain op and then
 * apply the epilogue here, so every op gets it the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/op/op.h"

static const struct {
  const char *name;
  int flag;
} items[] = {{"bias", HERON__EPI_BIAS}, {"relu", HERON__EPI_RELU}};
enum { NITEMS = sizeof items / sizeof items[0] };

int heron__epilogue_parse(const char *text, int *flags, heron_error *err) {
  *flags = 0;
  if (!text || !*text || !strcmp(text, "none"))
    return HERON_OK;
  const char *p = text;
  for (;;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    int found = 0;
    for (int i = 0; i < NITEMS; i++)
      if (strlen(items[i].name) == len && !strncmp(items[i].name, p, len)) {
        if (*flags & items[i].flag)
          return heron_error_set(err, HERON_EINVAL,
                                 "--epilogue: '%s' is given twice in '%s'",
                                 items[i].name, text);
        *flags |= items[i].flag;
        found = 1;
      }
    if (!found)
      return heron_error_set(err, HERON_EINVAL,
                             "--epilogue: unknown item '%.*s' in '%s' "
                             "(expected a list of bias, relu; or none)",
                             (int)len, p, text);
    if (!end)
      return HERON_OK;
    p = end + 1;
  }
}

const char *heron__epilogue_name(int flags) {
  switch (flags & (HERON__EPI_BIAS | HERON__EPI_RELU)) {
  case HERON__EPI_BIAS:
    return "bias";
  case HERON__EPI_RELU:
    return "relu";
  case HERON__EPI_BIAS | HERON__EPI_RELU:
    return "bias,relu";
  default:
    return "";
  }
}

int heron__op_set_epilogue(heron__op *op, int flags, heron_error *err) {
  if ((flags & HERON__EPI_BIAS) && op->channel_axis < 0)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "--epilogue bias: %s has no channel axis to add a "
                           "bias along (relu alone is allowed)",
                           op->name);
  op->epilogue = flags;
  memset(&op->bias, 0, sizeof op->bias);
  if (flags & HERON__EPI_BIAS) {
    int c = op->channel_axis;
    heron__tensor_init(&op->bias, "bias", 1, (int64_t[]){op->axes[c].extent});
    op->bias.index[0].coef[c] = 1;
  }
  return HERON_OK;
}

/* Applies the epilogue to the plain op's output `src` (of dtype src_dtype),
 * writing the result to `dst` in the op's output dtype (dst may be src when
 * the dtypes agree). */
static void epilogue_into(const heron__op *op, const void *src, int src_dtype,
                          const void *bias, void *dst) {
  const heron__tensor *o = &op->out;
  int c = op->channel_axis;
  /* The bias index of output element i: the output dimension indexed by
   * the channel axis alone, read off the row-major position. */
  int cdim = -1;
  for (int d = 0; d < o->ndim && c >= 0; d++)
    if (o->index[d].coef[c] != 0)
      cdim = d;
  int64_t inner = 1;
  for (int d = cdim + 1; d < o->ndim && cdim >= 0; d++)
    inner *= o->dims[d];
  int64_t n = heron__tensor_elems(o);
  for (int64_t i = 0; i < n; i++) {
    double v = heron__elem_get(src, src_dtype, i);
    if (bias && cdim >= 0)
      v += heron__elem_get(bias, op->out_dtype, (i / inner) % o->dims[cdim]);
    if ((op->epilogue & HERON__EPI_RELU) && !(v > 0))
      v = 0;
    heron__elem_set(dst, op->out_dtype, i, v);
  }
}

void heron__op_apply_epilogue(const heron__op *op, void *const *bufs) {
  if (!op->epilogue)
    return;
  const void *bias =
      (op->epilogue & HERON__EPI_BIAS) ? bufs[op->ninputs + 1] : NULL;
  epilogue_into(op, bufs[op->ninputs], op->out_dtype, bias, bufs[op->ninputs]);
}

/* Only an fp16 output rounds between the op and its epilogue; fp32 and s32
 * outputs (int8's exact sums plus an s32 bias) take the epilogue in place. */
void heron__op_reference_full(const heron__op *op, void *const *bufs) {
  int64_t n = heron__tensor_elems(&op->out);
  float *wide_out = NULL;
  if (op->epilogue && op->out_dtype == HERON__FP16)
    wide_out = malloc((size_t)n * sizeof *wide_out);
  if (!wide_out) {
    op->reference(op, bufs);
    heron__op_apply_epilogue(op, bufs);
    return;
  }
  /* The plain op into an fp32 output, then the epilogue in double, then one
   * rounding to the output dtype: what a fused kernel computes. */
  heron__op wide = *op;
  wide.out_dtype = HERON__FP32;
  wide.epilogue = 0;
  void *wb[HERON__MAX_TENSORS + 2];
  for (int i = 0; i < heron__op_nbufs(op); i++)
    wb[i] = bufs[i];
  wb[op->ninputs] = wide_out;
  op->reference(&wide, wb);
  const void *bias =
      (op->epilogue & HERON__EPI_BIAS) ? bufs[op->ninputs + 1] : NULL;
  epilogue_into(op, wide_out, HERON__FP32, bias, bufs[op->ninputs]);
  free(wide_out);
}
