/* core/op/check.c - comparing a kernel's output with the reference.
 *
 * The tolerance has to accept every correct kernel, whatever order it sums
 * in, and reject every wrong one.  It rests on three facts:
 *
 *  - The inputs come from heron__op_fill_inputs, uniform in [-1, 1], so each
 *    product has magnitude <= 1 and an output is a sum of R = (product of the
 *    reduction extents) such terms, of typical size sqrt(R)/3.
 *  - The reference accumulates in double and is exact to the output's last
 *    bit, so all the error is the kernel's.  A kernel summing in fp32, in any
 *    order (sequential, blocked, split, tree), makes one rounding of at most
 *    u = 2^-24 times a partial sum per addition; the partial sums are about
 *    sqrt(k)/3 in size and the roundings are unbiased, so the error is about
 *    u * R / 4 in standard deviation (6e-5 for R = 4096).
 *  - A wrong kernel is wrong by at least one whole term on many elements:
 *    an off-by-one index changes a sum by about sqrt(R)/3, a missing tail by
 *    the missing terms, each typically 1/4.
 *
 * So for fp32, atol = 1e-6 + 2e-7 * R, which is more than ten standard
 * deviations of the summation error (no correct kernel fails even on 16M
 * elements) and still a small fraction of one term up to R in the hundreds
 * of thousands, plus rtol = 1e-5 (about 80 ulp) for the final rounding of
 * large outputs.  For fp16 outputs rtol = 2^-10 (twice the half rounding of
 * the result) on top of the same atol: this assumes fp32 accumulation, as
 * cuBLAS and Tensor Core kernels with fp32 accumulators do.  A kernel that
 * accumulates in fp16 has errors of order 1e-4 * R and needs a target-level
 * decision, not a looser check for everyone.  bf16 inputs multiply exactly
 * in fp32 and their kernels sum in fp32, so they take fp32's tolerance;
 * int8's s32 outputs are compared exactly.  The reference of an op with
 * an epilogue rounds once, after it (heron__op_reference_full), as a fused
 * kernel does.
 */
#include <math.h>

#include "core/op/op.h"

static void tolerance(const heron__op *op, double *atol, double *rtol) {
  /* Integer outputs (int8's s32 sums) are exact in every correct kernel,
   * whatever order it sums in, and so is the reference. */
  if (heron__op_exact(op)) {
    *atol = *rtol = 0;
    return;
  }
  double r = (double)heron__op_reduce_len(op);
  *atol = 1e-6 + 2e-7 * r;
  *rtol = op->out_dtype == HERON__FP16 ? 0x1p-10 : 1e-5;
}

int heron__op_check(const heron__op *op, const void *out, const void *ref,
                    double *max_err, int64_t *bad) {
  double atol, rtol;
  tolerance(op, &atol, &rtol);
  int64_t n = heron__tensor_elems(&op->out);
  int64_t first_bad = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double o = heron__elem_get(out, op->out_dtype, i);
    double r = heron__elem_get(ref, op->out_dtype, i);
    double diff = fabs(o - r);
    /* Written so that a NaN on either side fails the comparison: a NaN in
     * the output is never a match. */
    int ok = diff <= atol + rtol * fabs(r);
    double rel = isnan(diff) ? INFINITY : diff / (fabs(r) + atol);
    if (rel > worst)
      worst = rel;
    if (!ok && first_bad < 0)
      first_bad = i;
  }
  if (max_err)
    *max_err = worst;
  if (bad)
    *bad = first_bad;
  return first_bad < 0;
}
