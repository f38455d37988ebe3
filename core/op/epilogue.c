/* core/op/epilogue.c - fused epilogues: a per-channel bias add and ReLU
 * after the op's reduction (the Always-Inline rule fuses them into the
 * kernel's final store).  The op description carries the flags and the
 * bias tensor; references and the interpreter compute the plain op and then
 * apply the epilogue here, so every op gets it the same way. */
#include <stdio.h>
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

void heron__op_apply_epilogue(const heron__op *op, void *const *bufs) {
  if (!op->epilogue)
    return;
  void *out = bufs[op->ninputs];
  const void *bias =
      (op->epilogue & HERON__EPI_BIAS) ? bufs[op->ninputs + 1] : NULL;
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
    double v = heron__elem_get(out, op->out_dtype, i);
    if (bias && cdim >= 0)
      v += heron__elem_get(bias, op->out_dtype, (i / inner) % o->dims[cdim]);
    if ((op->epilogue & HERON__EPI_RELU) && !(v > 0))
      v = 0;
    heron__elem_set(out, op->out_dtype, i, v);
  }
}
