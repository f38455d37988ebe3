/* core/op/layout.c - channels-last convolutions: the same ops with the
 * activations and the output in NWC, NHWC or NDHWC order (c1d_nwc,
 * c2d_nhwc, c3d_ndhwc), the layouts int8 inference uses (oneDNN's fast
 * int8 convolutions read and write exactly these).  The weights keep their
 * [CO][CI][K...] order.
 *
 * Nothing downstream knows layouts: a tensor's description (dimensions and
 * an affine index per dimension) is all the templates, the interpreter
 * and the checks read, so moving the channel dimension to the end of the
 * description is the whole of the op.  The spatial axes are reordered to
 * follow the new output order (op.h: spatial axes in output order).  The
 * reference is the channels-first one, run on transposed copies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/op/op.h"

/* Moves dimension 1 of ts to the end: [d0, d1, d2..] -> [d0, d2.., d1]. */
static void channel_dim_last(heron__tensor *ts) {
  int n = ts->ndim;
  int64_t dim = ts->dims[1];
  heron__affine ix = ts->index[1];
  for (int d = 1; d < n - 1; d++) {
    ts->dims[d] = ts->dims[d + 1];
    ts->index[d] = ts->index[d + 1];
  }
  ts->dims[n - 1] = dim;
  ts->index[n - 1] = ix;
}

/* Copies a channels-last tensor (whose description is ts) to its
 * channels-first order (to_first = 1) or back, es bytes an element. */
static void transpose(const heron__tensor *ts, size_t es, const void *src,
                      void *dst, int to_first) {
  int64_t N = ts->dims[0], C = ts->dims[ts->ndim - 1], S = 1;
  for (int d = 1; d < ts->ndim - 1; d++)
    S *= ts->dims[d];
  const char *s = src;
  char *t = dst;
  for (int64_t n = 0; n < N; n++)
    for (int64_t p = 0; p < S; p++)
      for (int64_t c = 0; c < C; c++) {
        int64_t last = (n * S + p) * C + c, first = (n * C + c) * S + p;
        if (to_first)
          memcpy(t + first * es, s + last * es, es);
        else
          memcpy(t + last * es, s + first * es, es);
      }
}

/* The reference of a channels-last op: the channels-first reference on
 * transposed copies of the activations and the output.  Like every
 * reference it cannot fail; out of memory it leaves NaN (INT32_MIN for
 * s32), which no check accepts. */
static void channels_last_ref(const heron__op *op, void *const *bufs) {
  int a = op->act_input, o = op->ninputs;
  size_t ea = (size_t)heron__dtype_size(heron__op_buf_dtype(op, a));
  size_t eo = (size_t)heron__dtype_size(heron__op_buf_dtype(op, o));
  int64_t na = heron__tensor_elems(&op->in[a]);
  int64_t no = heron__tensor_elems(&op->out);
  void *tmp[HERON__MAX_TENSORS + 2];
  for (int i = 0; i < heron__op_nbufs(op); i++)
    tmp[i] = bufs[i];
  tmp[a] = malloc((size_t)na * ea);
  tmp[o] = malloc((size_t)no * eo);
  if (!tmp[a] || !tmp[o]) {
    for (int64_t i = 0; i < no; i++)
      heron__elem_set(bufs[o], heron__op_buf_dtype(op, o), i, NAN);
  } else {
    transpose(&op->in[a], ea, bufs[a], tmp[a], 1);
    op->reference_cf(op, tmp);
    transpose(&op->out, eo, tmp[o], bufs[o], 0);
  }
  free(tmp[a]);
  free(tmp[o]);
}

int heron__op_channels_last(heron__op *op, const char *name,
                            heron_error *err) {
  heron__tensor *act = &op->in[op->act_input];
  if (act->ndim < 3 || op->out.ndim != act->ndim || op->channel_axis < 0)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "%s: no channel dimension to move last", name);
  channel_dim_last(act);
  channel_dim_last(&op->out);
  /* New axis order: the output's dimensions' axes, then the others. */
  int order[HERON__MAX_AXES], n = 0, used[HERON__MAX_AXES] = {0};
  for (int d = 0; d < op->out.ndim; d++)
    for (int x = 0; x < op->naxes; x++)
      if (op->out.index[d].coef[x] != 0 && !used[x]) {
        order[n++] = x;
        used[x] = 1;
      }
  for (int x = 0; x < op->naxes; x++)
    if (!used[x])
      order[n++] = x;
  heron__axis axes[HERON__MAX_AXES];
  int where[HERON__MAX_AXES];
  for (int i = 0; i < n; i++) {
    axes[i] = op->axes[order[i]];
    where[order[i]] = i;
  }
  memcpy(op->axes, axes, sizeof axes[0] * (size_t)n);
  heron__tensor *ts[HERON__MAX_TENSORS + 1];
  int nt = 0;
  for (int i = 0; i < op->ninputs; i++)
    ts[nt++] = &op->in[i];
  ts[nt++] = &op->out;
  for (int i = 0; i < nt; i++)
    for (int d = 0; d < ts[i]->ndim; d++) {
      int64_t coef[HERON__MAX_AXES] = {0};
      for (int x = 0; x < n; x++)
        coef[where[x]] = ts[i]->index[d].coef[x];
      memcpy(ts[i]->index[d].coef, coef, sizeof coef);
    }
  op->channel_axis = where[op->channel_axis];
  op->name = name;
  op->reference_cf = op->reference;
  op->reference = channels_last_ref;
  return HERON_OK;
}
