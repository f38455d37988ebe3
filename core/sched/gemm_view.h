/* core/sched/gemm_view.h - the implicit-GEMM view of an op, shared by the
 * targets that put an op on matrix units (the cuda Tensor Core template,
 * core/targets/cuda/template.h, and the amx template, core/targets/amx/
 * amx_template.h).  Internal to libheron.
 *
 * Every op is read as a batched GEMM C = A * B whose operands are two of
 * its inputs, addressed through the op's index maps.  Each op axis goes
 * into one group:
 *
 *   batch  the spatial axes both A and B read (bmm's b)
 *   M      the spatial axes only A reads (gemm's i; a convolution's n, oh,
 *          ow when A is its data)
 *   N      the spatial axes only B reads (gemm's j; a convolution's co)
 *   K      every reduction axis (a convolution's ci, kh, kw)
 *
 * Each group is one fused loop whose extent is the product of its axes';
 * the generators split the fused index back into the op's axes (div / mod
 * by their extents, innermost axis last) where a tensor is addressed.
 * Which inputs are A and B is the target's choice: cuda takes inputs 0
 * and 1, amx the activation input (op->act_input) as A.
 */
#ifndef HERON_CORE_SCHED_GEMM_VIEW_H
#define HERON_CORE_SCHED_GEMM_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "core/op/op.h"

/* The groups, in the order the targets' schedules index them. */
enum { HERON__GB = 0, HERON__GM, HERON__GN, HERON__GK, HERON__NGROUPS };

/* One fused group of op axes. */
typedef struct heron__gemm_group {
  int naxes;
  int axes[HERON__MAX_AXES]; /* op axes, outermost (slowest) first */
  int64_t extent;            /* product of their extents (1 when empty) */
} heron__gemm_group;

/* Sorts the axes of op into g[HERON__NGROUPS] (overwritten), with inputs
 * ia and ib as A and B, and sets every group's extent. */
void heron__gemm_view_group(const heron__op *op, int ia, int ib,
                            heron__gemm_group g[HERON__NGROUPS]);

/* The group's axis names joined by '*' ("n*oh*ow"), "1" when it has none;
 * truncated to buf[cap]. */
void heron__gemm_group_names(const heron__op *op, const heron__gemm_group *g,
                             char *buf, size_t cap);

/* Flat (row-major) coefficient of every op axis in tensor ts (fc has
 * HERON__MAX_AXES entries) and the flat offset: the index maps are affine,
 * so an element's address is sum(fc[a] * a) + off wherever no dimension is
 * divided or bounded. */
void heron__flat_coefs(const heron__op *op, const heron__tensor *ts,
                       int64_t *fc, int64_t *off);

/* 1 when some dimension of ts is divided (a transposed convolution's
 * input, read only where the index is a multiple of the divisor). */
int heron__gemm_divided(const heron__tensor *ts);

/* x rounded up to a multiple of m (> 0). */
static inline int64_t heron__round_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

#endif
