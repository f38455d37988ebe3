/* core/targets/cpu/region.h - the region pack, which both cpu generators
 * call: the fp32 one (codegen.c, the knob X.region) and the int8 and bf16
 * one (dot.c, wherever it packs fewer elements than the rows).  Internal
 * to core/targets/cpu/.
 *
 * A region is the slice of an input tensor (a convolution's data) that a
 * thread tile and a reduction-inner slice read, each element once, in the
 * tensor's own dimension order with the dimension of the channel axis cax
 * (the reduction axis the weights read and the input reads in a dimension
 * of its own, as itself) moved innermost, rounded up to cgp positions.
 * Instead of one row of k per point of the tile (im2col, which copies a
 * convolution's input KH x KW times), a point reads its reduction step at
 * a constant offset: the sum over axes of heron__cpu_region_coef times the
 * axis' position in the tile, plus the region's origin.  Positions
 * outside the tensor and past cax's tile are zeros, so no read of the
 * region needs a check. */
#ifndef HERON_CORE_TARGETS_CPU_REGION_H
#define HERON_CORE_TARGETS_CPU_REGION_H

#include "core/sched/template.h"

typedef struct heron__cpu_region {
  int act;       /* the input packed */
  int cax, cdim; /* the channel axis and the dimension it indexes */
  int64_t clen;  /* cax's inner tile */
  int64_t cgp;   /* clen rounded up to a whole group */
  int64_t rip;   /* reduction-inner steps in the region's order: cgp times
                    the other reduction axes' inner tiles */
  int64_t span[HERON__MAX_DIMS]; /* positions of each other dimension */
  int64_t neg[HERON__MAX_DIMS];  /* position of the local origin (> 0 where
                                    a coefficient is negative) */
  int64_t rstr[HERON__MAX_DIMS]; /* their strides in the region (cdim: 1) */
  int64_t elems;                 /* elements of the region */
  int64_t origin; /* where the element at the tile's and the slice's
                     origin lies in the region */
} heron__cpu_region;

/* The channel axis of input act that a region pack would put innermost,
 * and in *cdim its dimension: every dimension of act an affine index with
 * no divisor (a transposed convolution's has one at strides above 1), and
 * a reduction axis that input wt reads and act reads in one dimension of
 * its own, as itself (the innermost such dimension where there are
 * several: a blocked input's lanes, not its blocks).  Axes of extent 1
 * take no part.  -1 when there is
 * none (act of rank below 2 included). */
int heron__cpu_region_axis(const heron__op *op, int act, int wt, int *cdim);

/* Plans the region of input act read by a thread tile of tile[a] positions
 * of every spatial axis a and a reduction slice of tile[a] steps of every
 * reduction axis a, cax's rounded up to a multiple of group.  Returns 0
 * when heron__cpu_region_axis finds no channel axis. */
int heron__cpu_region_plan(const heron__op *op, int act, int wt,
                           const int64_t *tile, int64_t group,
                           heron__cpu_region *r);

/* How far one step of axis a moves in the region. */
int64_t heron__cpu_region_coef(const heron__op *op, const heron__cpu_region *r,
                               int a);

/* Emits, at indent depth, the copy of the region into the buffer dst (of
 * C type `type` elements, each converted from the input's) from the input
 * tensor src.  The generated code reads the thread tile's origin o_<a> of
 * every spatial axis and the slice's first step b_<r> of every reduction
 * axis that the input reads, which the caller defines. */
void heron__cpu_region_emit(heron__buf *o, const heron__op *op,
                            const heron__cpu_region *r, int depth,
                            const char *dst, const char *src, const char *type);

#endif
