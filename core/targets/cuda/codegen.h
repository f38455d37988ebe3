/* core/targets/cuda/codegen.h - what the parts of the cuda generator
 * share: the config's numbers (knobs), the state of one generation (gen),
 * the few one-line queries on them, and the functions one part calls in
 * the other.  Internal to the codegen*.c files of core/targets/cuda/; the
 * generator's entry point, heron__cuda_codegen, is declared in template.h.
 *
 *   codegen.c        the kernel: header, shared-memory plan, main loop or
 *                    pipeline, fragments, the store to the output
 *   codegen_igemm.c  the implicit-GEMM addressing of A (the knob igemm):
 *                    the row table A.rows, the per-row / per-k addresses
 *                    and guards, the K order of channels-last data
 *   codegen_wgmma.c  the sm_90a kernel of mma 2: wgmma on stages that TMA
 *                    fills (mbarriers), its tensor maps and plan
 */
#ifndef HERON_CORE_TARGETS_CUDA_CODEGEN_H
#define HERON_CORE_TARGETS_CUDA_CODEGEN_H

#include <stdarg.h>

#include "core/targets/cuda/template.h"

/* The config's numbers, read once. */
typedef struct knobs {
  int64_t wm, wn, wk;
  int64_t sp[3][3]; /* M: b w f, N: b w f, K: o m f */
  int64_t bm, bn, kc0, kc1, warps, threads;
  int64_t at[2], pad[2], vec[2], kc[2], ld[2], bytes[2];
  int64_t swz[2]; /* 1: the operand's tile is XOR-swizzled (heron__swz) */
  int64_t cpad, ldc, cbytes, ovec, unroll;
  int64_t stages; /* pipeline: buffers of A.shared and B.shared each */
  int64_t mma;    /* 0: wmma, 1: mma.sync m16n8k16 with ldmatrix */
  int64_t bswz;   /* block_swz: rows of M tiles per group of blocks */
  int64_t igemm;  /* 1: A through the per-block row table (A.rows) */
  int64_t splitk; /* split_k: blocks (blockIdx.z) per output tile's K */
  int64_t kper;   /* k.o chunks per split: k.o / split_k */
  int64_t rbytes; /* bytes of A.rows (0 without igemm) */
  int m_inner;    /* C.shared is M-inner */
  /* What the tiles sweep of M, N and K (b * w * f * wmma; >= the padded
   * extent: tiles need not divide it, the last ones are cut short by the
   * guards). */
  int64_t cover[3];
} knobs;

/* What the tiles sweep of group q (HERON__GM, GN or GK). */
static inline int64_t cover_of(const knobs *k, int q) {
  return q == HERON__GM   ? k->cover[0]
         : q == HERON__GN ? k->cover[1]
                          : k->cover[2];
}

/* The state of generating one config's source. */
typedef struct gen {
  const heron__template *t;
  const heron__op *op;
  const heron__cuda_sched *s;
  knobs k;
  heron__buf *out;
  const char *it;    /* index type: "int" or "long long" */
  int64_t regs_free; /* registers per thread left beside the fragments */
} gen;

/* Writes one line of the kernel at depth levels of two spaces. */
static inline void emit(gen *g, int depth, const char *fmt, ...)
    HERON_PRINTF(3, 4);
static inline void emit(gen *g, int depth, const char *fmt, ...) {
  for (int i = 0; i < depth; i++)
    heron__buf_puts(g->out, "  ");
  va_list ap;
  va_start(ap, fmt);
  heron__buf_vprintf(g->out, fmt, ap);
  va_end(ap);
  heron__buf_puts(g->out, "\n");
}

/* Whether op axis a is a reduction (K) axis of the GEMM view. */
static inline int k_axis(const gen *g, int a) {
  const heron__gemm_group *gk = &g->s->g[HERON__GK];
  for (int i = 0; i < gk->naxes; i++)
    if (gk->axes[i] == a)
      return 1;
  return 0;
}

/* Marks the axes tensor ts reads. */
static inline void reads(const heron__op *op, const heron__tensor *ts,
                         int *need) {
  for (int a = 0; a < op->naxes; a++)
    need[a] = heron__tensor_reads(ts, a);
}

/* Which terms of an index expression heron__cuda_affine_part writes. */
enum { ALL_TERMS, M_TERMS, K_TERMS };

/* ---- codegen.c --------------------------------------------------------- */

/* Reads the config's knobs (and what follows from them) into k. */
void heron__cuda_read_knobs(const heron__template *t, const int64_t *cfg,
                            knobs *k);
/* Writes the source's head: the launch line (and the tensor maps' line),
 * the includes, the plan's comment, the #defines and the preludes. */
void heron__cuda_emit_header(gen *g, const int64_t *cfg);
/* Declares the block's tile origin m0, n0 (block_swz's order) and the
 * batch axes of blockIdx.y, at depth 1. */
void heron__cuda_emit_origin(gen *g);
/* The store of C.shared (Cs) to the output with the epilogue, guarded
 * where the tiles pass M and N. */
void heron__cuda_emit_store(gen *g, int depth);

/* Declares `ax_<name>` for every axis of group grp that `need` marks,
 * splitting the fused index expression `fused` (outermost axis first; K
 * in heron__cuda_k_order's order). */
void heron__cuda_split_group(gen *g, int depth, int grp, const char *fused,
                             const int *need);
/* Appends "c1*ax_a + c2*ax_b + off" for one index expression: all its
 * terms, or only those of the M and batch axes and the offset (M_TERMS),
 * or only those of the K axes (K_TERMS, "0" when it has none). */
void heron__cuda_affine_part(gen *g, const heron__affine *ix, int which,
                             heron__buf *b);
/* Appends to `cond` (" && ..." terms) the guards of the coordinate named
 * `var` (cap bytes) of tensor ts's dimension d: a divided index (a
 * transposed convolution's stride) must divide evenly, and `var` becomes
 * the quotient's expression; a bounded tensor's coordinate must lie in
 * [0, dims[d]).  Shared by the per-element index (tensor_index) and the
 * implicit-GEMM rows (codegen_igemm.c). */
void heron__cuda_coord_guards(heron__buf *cond, char *var, size_t cap,
                              const heron__tensor *ts, int d);
/* Opens a cooperative loop over `total` elements, v per thread and step:
 * a constant trip count (so the unroll pragma unrolls exactly, never a
 * remainder loop of unknown length), `e` the thread's first element of
 * the step, and a guard when the last step is partial.  Returns the depth
 * of the body. */
int heron__cuda_coop_loop(gen *g, int depth, int64_t total, int64_t v);
/* Closes the loop heron__cuda_coop_loop opened at depth. */
void heron__cuda_coop_loop_end(gen *g, int depth, int64_t total, int64_t v);

/* ---- codegen_igemm.c --------------------------------------------------- */

/* The K group in the order the kernel splits k: the view's, or with igemm
 * 1 its own (heron__cuda_igemm.gk: channels-last data, ci innermost). */
const heron__gemm_group *heron__cuda_k_order(const gen *g);
/* Emits the fill of the row table A.rows, once per block before the k
 * loop (igemm 1). */
void heron__cuda_emit_rows_table(gen *g, int depth);
/* Emits the body of A's cooperative load with igemm 1: at tile position
 * (o, q), K index gk, into dst; `async` as the caller's. */
void heron__cuda_emit_load_rows(gen *g, int d, int async);

/* ---- codegen_wgmma.c --------------------------------------------------- */

/* mma 2: adds the mbarriers to the plan p (A, B and C set). */
void heron__cuda_wgmma_plan(const knobs *k, heron__cuda_smem_plan *p);
/* mma 2: the launch's two tensor maps. */
void heron__cuda_wgmma_tmaps(const heron__template *t, const knobs *k,
                             heron__cuda_launch *l);
/* mma 2: the #defines the wgmma prelude reads (HERON_WG_N, _TRANS_B,
 * HERON_TMAP_A / _B). */
void heron__cuda_wgmma_defines(gen *g, const heron__cuda_launch *l);
/* mma 2: the kernel after the header. */
void heron__cuda_emit_wgmma(gen *g, const int64_t *cfg);

#endif
