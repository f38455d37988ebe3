/* core/op/interpret.c - evaluating an op straight from its description.
 *
 * This walks every point of the loop nest, computes each tensor's element
 * from the affine index maps and accumulates the products into the output.
 * It is slow (tens of nanoseconds per point) and exists to check
 * descriptions: tests compare it with each op's hand-written reference, and a
 * new op's description can be checked the same way before any schedule rule
 * or code generator sees it. */
#include <math.h>
#include <stdlib.h>

#include "core/op/op.h"

/* Row-major offset of tensor t at the loop point idx; 0 when some index
 * falls outside its dimension or, for a divided index, when the expression
 * is not a multiple of its divisor. */
static int offset_at(const heron__tensor *t, int naxes, const int64_t *idx,
                     int64_t *off) {
  int64_t o = 0;
  for (int d = 0; d < t->ndim; d++) {
    const heron__affine *f = &t->index[d];
    int64_t v = f->offset;
    for (int a = 0; a < naxes; a++)
      v += f->coef[a] * idx[a];
    if (f->div > 1) {
      /* The expression is often negative (a transposed convolution's
       * oh + pad - kh*dil), where C's % truncates towards zero; the
       * remainder is brought into [0, div) before the test so the check
       * reads as the floor-based definition.  An exact multiple divides
       * exactly whatever the rounding, so v / div is then right too. */
      int64_t r = v % f->div;
      if (r < 0)
        r += f->div;
      if (r != 0)
        return 0;
      v /= f->div;
    }
    if (v < 0 || v >= t->dims[d])
      return 0;
    o = o * t->dims[d] + v;
  }
  *off = o;
  return 1;
}

void heron__op_interpret(const heron__op *op, void *const *bufs) {
  int64_t nout = heron__tensor_elems(&op->out);
  void *out = bufs[op->ninputs];
  double *acc = calloc((size_t)nout, sizeof *acc);
  int broken = acc == NULL;
  int64_t idx[HERON__MAX_AXES] = {0};
  while (!broken) {
    int64_t o;
    if (!offset_at(&op->out, op->naxes, idx, &o)) {
      broken = 1; /* The output map itself leaves the output. */
      break;
    }
    double prod = 1;
    for (int t = 0; t < op->ninputs; t++) {
      int64_t off;
      if (offset_at(&op->in[t], op->naxes, idx, &off)) {
        prod *= heron__elem_get(bufs[t], heron__op_buf_dtype(op, t), off);
      } else {
        /* Padding reads zero, but only where the description says an index
         * may leave the tensor; anywhere else it is a bug in the
         * description, and NaN makes every comparison with it fail. */
        prod = op->in[t].bounded ? 0 : NAN;
        if (!op->in[t].bounded)
          break;
      }
    }
    acc[o] += prod;
    /* Odometer step over the axes, last axis fastest. */
    int a = op->naxes - 1;
    while (a >= 0 && ++idx[a] == op->axes[a].extent) {
      idx[a] = 0;
      a--;
    }
    if (a < 0)
      break;
  }
  for (int64_t i = 0; i < nout; i++)
    heron__elem_set(out, op->out_dtype, i, broken ? NAN : acc[i]);
  /* The epilogue comes after the plain op, as for the references.  ReLU
   * turns NaN into 0, which would hide a broken description, so the
   * poisoned elements are poisoned again afterwards. */
  heron__op_apply_epilogue(op, bufs);
  for (int64_t i = 0; i < nout; i++)
    if (broken || isnan(acc[i]))
      heron__elem_set(out, op->out_dtype, i, NAN);
  free(acc);
}
