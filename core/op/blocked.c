/* core/op/blocked.c - blocked convolutions: the same ops with the
 * activations and the output blocked by channels, nCw16c / nChw16c (and
 * 8c), and the weights in the matching OIw16i16o / OIhw16i16o form, the
 * layouts oneDNN's fp32 direct convolutions read and write (c1d_ncw16c,
 * c2d_nchw16c, c1d_ncw8c, c2d_nchw8c).
 *
 * A channel c lives in block c / B at lane c % B (B the block, 16 or 8),
 * the lanes innermost:
 *
 *   data   [N][ceil(CI/B)][spatial...][B]
 *   weight [ceil(CO/B)][ceil(CI/B)][K...][B (ci lane)][B (co lane)]
 *   out    [N][ceil(CO/B)][spatial out...][B]
 *
 * Channel counts that are no multiple of the block are padded up to it,
 * as oneDNN pads them: the padded lanes exist in every tensor and the op
 * sums over them as over any channel.  A caller whose padded lanes of the
 * data (or of the weights' ci lanes) hold zeros gets the convolution of
 * its CI channels; the output's padded lanes are then the sums of zero
 * weights (oneDNN keeps them zero).
 *
 * As with the channels-last ops (layout.c), nothing downstream knows
 * layouts: the description is the whole of the op.  The channel axes are
 * split, co into cob (spatial, in the output's block order) and coi (the
 * lanes, the last spatial axis), ci into cib and cii (the last reduction
 * axis), so that every tensor dimension stays one affine index.  The
 * reference is the channels-first op at the padded channel counts, run on
 * unblocked copies. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/op/op.h"

/* Appends a dimension of `extent` indexed by axis a alone. */
static void append_dim(heron__tensor *ts, int64_t extent, int a) {
  int d = ts->ndim++;
  ts->dims[d] = extent;
  memset(&ts->index[d], 0, sizeof ts->index[d]);
  ts->index[d].coef[a] = 1;
}

/* Whether dimension d of ts is indexed by axis a alone, with coefficient 1
 * and no offset. */
static int indexed_by(const heron__op *op, const heron__tensor *ts, int d,
                      int a) {
  const heron__affine *ix = &ts->index[d];
  if (ix->offset || heron__affine_div(ix) > 1)
    return 0;
  for (int x = 0; x < op->naxes; x++)
    if (ix->coef[x] != (x == a))
      return 0;
  return 1;
}

int heron__op_blocked(heron__op *op, int64_t block, const char *name,
                      heron_error *err) {
  if (op->dtype != HERON__FP32)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "%s: blocked layouts are fp32 only (got %s)", name,
                           heron__dtype_name(op->dtype));
  heron__tensor *act = &op->in[op->act_input];
  heron__tensor *wt = &op->in[1 - op->act_input];
  int co = op->channel_axis, ci = -1;
  for (int x = 0; x < op->naxes && act->ndim >= 3; x++)
    if (op->axes[x].kind == HERON__REDUCE && act->index[1].coef[x])
      ci = x;
  if (op->ninputs != 2 || co < 0 || ci < 0 || act->ndim + 1 > HERON__MAX_DIMS ||
      wt->ndim + 2 > HERON__MAX_DIMS || !indexed_by(op, act, 1, ci) ||
      !indexed_by(op, &op->out, 1, co) || !indexed_by(op, wt, 0, co) ||
      !indexed_by(op, wt, 1, ci))
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "%s: no channel dimensions to block", name);
  /* New axis order: the spatial axes (co as its block cob), coi, the
   * reductions (ci as its block cib), cii. */
  heron__axis axes[HERON__MAX_AXES];
  int where[HERON__MAX_AXES], n = 0, coi = -1, cii = -1;
  if (op->naxes + 2 > HERON__MAX_AXES)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "%s: too many axes to block", name);
  for (int kind = HERON__SPATIAL; kind <= HERON__REDUCE; kind++) {
    for (int x = 0; x < op->naxes; x++)
      if (op->axes[x].kind == kind) {
        axes[n] = op->axes[x];
        where[x] = n++;
      }
    int split = kind == HERON__SPATIAL ? co : ci;
    axes[where[split]].extent = (op->axes[split].extent + block - 1) / block;
    snprintf(axes[where[split]].name, sizeof axes[0].name, "%sb",
             op->axes[split].name);
    axes[n] = op->axes[split];
    axes[n].extent = block;
    snprintf(axes[n].name, sizeof axes[0].name, "%si", op->axes[split].name);
    *(kind == HERON__SPATIAL ? &coi : &cii) = n++;
  }
  heron__tensor *ts[] = {&op->in[0], &op->in[1], &op->out};
  for (int i = 0; i < 3; i++)
    for (int d = 0; d < ts[i]->ndim; d++) {
      int64_t coef[HERON__MAX_AXES] = {0};
      for (int x = 0; x < op->naxes; x++)
        coef[where[x]] = ts[i]->index[d].coef[x];
      memcpy(ts[i]->index[d].coef, coef, sizeof coef);
    }
  op->naxes = n;
  memcpy(op->axes, axes, sizeof axes[0] * (size_t)n);
  act->dims[1] = op->axes[where[ci]].extent;
  append_dim(act, block, cii);
  op->out.dims[1] = op->axes[where[co]].extent;
  append_dim(&op->out, block, coi);
  wt->dims[0] = op->axes[where[co]].extent;
  wt->dims[1] = op->axes[where[ci]].extent;
  append_dim(wt, block, cii);
  append_dim(wt, block, coi);
  /* A bias would run along two axes (cob * B + coi); blocked ops take
   * none. */
  op->channel_axis = -1;
  op->block = block;
  op->name = name;
  return heron__op_finish(op, err);
}

/* Copies a blocked activation or output tensor ts ([N][CB][S...][B]) to
 * its plain form [N][CB * B][S...] (to_plain = 1) or back, es bytes an
 * element. */
static void unblock_act(const heron__tensor *ts, size_t es, const char *src,
                        char *dst, int to_plain) {
  int64_t N = ts->dims[0], CB = ts->dims[1], B = ts->dims[ts->ndim - 1], S = 1;
  for (int d = 2; d < ts->ndim - 1; d++)
    S *= ts->dims[d];
  for (int64_t n = 0; n < N; n++)
    for (int64_t cb = 0; cb < CB; cb++)
      for (int64_t p = 0; p < S; p++)
        for (int64_t b = 0; b < B; b++) {
          int64_t blk = ((n * CB + cb) * S + p) * B + b;
          int64_t pl = (n * CB * B + cb * B + b) * S + p;
          if (to_plain)
            memcpy(dst + pl * es, src + blk * es, es);
          else
            memcpy(dst + blk * es, src + pl * es, es);
        }
}

/* Copies blocked weights ([OB][IB][K...][B (i)][B (o)]) to their plain
 * form [OB * B][IB * B][K...]. */
static void unblock_weight(const heron__tensor *ts, size_t es, const char *src,
                           char *dst) {
  int64_t OB = ts->dims[0], IB = ts->dims[1], B = ts->dims[ts->ndim - 1], K = 1;
  for (int d = 2; d < ts->ndim - 2; d++)
    K *= ts->dims[d];
  for (int64_t ob = 0; ob < OB; ob++)
    for (int64_t ib = 0; ib < IB; ib++)
      for (int64_t k = 0; k < K; k++)
        for (int64_t i = 0; i < B; i++)
          for (int64_t o = 0; o < B; o++) {
            int64_t blk = (((ob * IB + ib) * K + k) * B + i) * B + o;
            int64_t pl = ((ob * B + o) * IB * B + ib * B + i) * K + k;
            memcpy(dst + pl * es, src + blk * es, es);
          }
}

void heron__op_blocked_ref(const heron__op *op, void *const *bufs,
                           const heron__op_kind *plain_kind, int ci_dim,
                           int co_dim) {
  int64_t B = op->block, shape[HERON__MAX_SHAPE];
  memcpy(shape, op->shape, sizeof shape);
  shape[ci_dim] = (shape[ci_dim] + B - 1) / B * B;
  shape[co_dim] = (shape[co_dim] + B - 1) / B * B;
  heron__op plain;
  heron_error err = {0};
  int a = op->act_input, w = 1 - a, o = op->ninputs;
  int ok = !plain_kind->build(shape, op->nshape, op->dtype, &plain, &err);
  void *tmp[HERON__MAX_TENSORS + 2] = {0};
  size_t es[3];
  for (int i = 0; i <= o; i++) {
    const heron__tensor *ts = i < o ? &op->in[i] : &op->out;
    es[i] = (size_t)heron__dtype_size(heron__op_buf_dtype(op, i));
    tmp[i] = malloc((size_t)heron__tensor_elems(ts) * es[i]);
    ok &= tmp[i] != NULL;
  }
  if (ok) {
    unblock_act(&op->in[a], es[a], bufs[a], tmp[a], 1);
    unblock_weight(&op->in[w], es[w], bufs[w], tmp[w]);
    plain.reference(&plain, tmp);
    unblock_act(&op->out, es[o], tmp[o], bufs[o], 0);
  } else {
    for (int64_t i = 0; i < heron__tensor_elems(&op->out); i++)
      heron__elem_set(bufs[o], heron__op_buf_dtype(op, o), i, NAN);
  }
  for (int i = 0; i <= o; i++)
    free(tmp[i]);
}
