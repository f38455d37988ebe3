/* core/targets/cuda/template.h - the Tensor Core (cuda) schedule template,
 * shared by its rules (core/targets/cuda/rules.c) and the CUDA code generator
 * (core/targets/cuda/codegen.c; its parts, codegen_*.c, are listed in
 * codegen.h).  Internal to libheron.
 *
 * The implicit-GEMM view (docs/targets/cuda.md, core/sched/gemm_view.h)
 * with input 0 as A and input 1 as B:
 *
 *   batch  the spatial axes both inputs read (bmm's b)
 *   M      the spatial axes only input 0 reads (gemm i; a convolution's
 *          n, oh, ow, as input 0 is its data)
 *   N      the spatial axes only input 1 reads (gemm j; a convolution's co)
 *   K      every reduction axis (a convolution's ci, kh, kw)
 *
 * Each group is one fused loop whose index is split back into the op's axes
 * (div / mod by their extents) where a tensor is addressed.  M, N and K are
 * padded up to the Tensor Core granule (16, or 8 for a group of at most 8,
 * as GEMV's N is padded to the wmma width); padded rows and columns read as
 * zero and are never stored.
 *
 * The memory hierarchy (Heron's: global -> shared -> wmma.matrix_a /
 * matrix_b -> mma -> wmma.accumulator -> shared -> global) and the loop
 * nest of one block, outermost first:
 *
 *   block (blockIdx.x = bi * j.b + bj, blockIdx.y = batch index)
 *     warps (threadIdx.y = wi * j.w + wj), threads (threadIdx.x, one warp)
 *     acc[i.f][j.f] = 0                         wmma.accumulator fragments
 *     for ko < k.o                              reduction outer
 *       A.shared / B.shared at position 0: the chunk of k.m * k.f * wmma_k
 *       for km < k.m   (unrolled when k.m <= 4^unroll)
 *         A.shared / B.shared at position 1: the chunk of k.f * wmma_k
 *         for kf < k.f, i < i.f, j < j.f        fully unrolled
 *           load matrix_a / matrix_b fragments, mma_sync
 *     acc -> C.shared (reusing the A/B space) -> vectorized, guarded,
 *     cooperative store to global with the fused epilogue
 *
 * With the pipeline knob at S > 1 (both operands at one position p),
 * A.shared and B.shared are rings of S chunk buffers and the loop at p
 * carries a software pipeline over its chunks c (k.o chunks at p 0,
 * k.o * k.m at p 1):
 *
 *     issue chunks 0 .. S-2 into slots 0 .. S-2 (HERON_CP_ASYNC), one
 *     commit each
 *     for each chunk c
 *       wait until at most S-2 of this thread's groups are pending (chunk
 *       c's copies are done); barrier (chunk c complete in every thread,
 *       every warp done with chunk c - 1)
 *       if c + S - 1 exists: issue it into slot (c + S - 1) mod S
 *       commit (S > 2: every chunk, empty past the last; S == 2: only
 *       after an issue, as wait_group 0 drains all)
 *       mma on slot c mod S
 *
 * so the copies of the next S - 1 chunks run beside the Tensor Core work
 * of this one.  Copies of single halves (vec 1) are plain loads and
 * stores into their slot (cp.async moves at least 4 bytes).  On the
 * mma.sync path a chunk of 2..16 k-steps ping-pongs between two register
 * fragment sets: step kf + 1 is loaded before step kf's mma.sync.
 *
 * The block tile is BM = i.w * i.f * wmma_m by BN = j.w * j.f * wmma_n;
 * M = i.b * BM, N = j.b * BN, K = k.o * k.m * k.f * wmma_k (padded).
 *
 * Shared layouts follow global contiguity: an operand whose tensor is
 * contiguous along K is kept K-inner (matrix_a row_major, matrix_b
 * col_major), otherwise M- or N-inner, so the cooperative loads read
 * consecutive addresses.  C.shared is M-inner when the output's contiguous
 * axis is in M (convolutions), N-inner otherwise.
 *
 * With the knob X.shared_swz = 1 (mma path only, pad 0, a row pitch of
 * 16, 32 or a multiple of 64 halves) the tile X.shared is XOR-swizzled:
 * element (row, col) lies in the 16-byte chunk (col / 8) ^ key of its row
 * (heron__swz in the mma prelude, core/targets/cuda/prelude_mma.c), which the
 * cooperative stores and the ldmatrix row addresses both use, so that an
 * ldmatrix phase (8 rows at one chunk) and a phase of 16-byte stores (8
 * consecutive chunks) each cover the 32 banks once.
 *
 * With the knob block_swz = G > 1 the blocks of one batch index walk the
 * grid of block tiles in groups of G rows of M tiles: block b of the group
 * q = b / (G * j.b) takes M tile q * G + r % g and N tile r / g, with
 * r = b - q * G * j.b and g = min(G, i.b - q * G) the rows of that group,
 * so blocks launched together share G rows of A and few columns of B in
 * L2 instead of one row of A and every column of B.
 *
 * With the knob split_k = S > 1 (split-K, for grids that leave SMs idle)
 * the k.o loop is shared by S blocks, blockIdx.z = z taking its chunks
 * [z * k.o / S, (z + 1) * k.o / S); each block writes its fp32 partial
 * tile from C.shared to a workspace in global memory (a __device__ array
 * of the module), and the block that arrives last at the tile (a counter
 * per tile, atomicAdd after a fence) sums the S partials in the order
 * z = 0 .. S - 1 into C.shared, resets the counter and stores the tile
 * with the epilogue: one kernel, one launch, a deterministic sum.
 *
 * With the knob igemm = 1 (ops whose A has a sliding window: the
 * convolutions) A is read as a real implicit GEMM: before the k loop the
 * block fills the table A.rows (heron__cuda_igemm below) with each M
 * row's base offset and guarded coordinates, the only place where the
 * fused M index is split; A's loads in the k loop add the K part to the
 * row's entries, and its vectors beyond the index map's widest are copied
 * whole where both ends pass the guards at an aligned address, element by
 * element elsewhere.
 */
#ifndef HERON_CORE_CODEGEN_CUDA_TEMPLATE_H
#define HERON_CORE_CODEGEN_CUDA_TEMPLATE_H

#include "core/sched/gemm_view.h"
#include "core/sched/template.h"
#include "core/targets/cuda/kernel.h"

/* An operand of the GEMM view: A (input 0, M x K) or B (input 1, K x N). */
typedef struct heron__cuda_operand {
  int tensor;      /* op input index (0 or 1) */
  int group;       /* its spatial group: HERON__GM for A, HERON__GN for B */
  int k_inner;     /* 1: shared tile is K-contiguous, 0: M/N-contiguous */
  int at;          /* knob: compute-at position 0 (k.o loop) or 1 (k.m) */
  int pad;         /* knob: storage-align offset in elements */
  int vec;         /* knob: halves per cooperative load (1, 2, 4, 8) */
  int swz;         /* knob: 1 XOR-swizzles the tile's 16-byte chunks (mma
                      only, pad 0), 0 none; -1 in a space without it */
  int pitch;       /* aux: row pitch in elements (inner extent + pad) */
  int kc;          /* aux: K extent of the shared chunk */
  int bytes;       /* aux: bytes of the shared buffer */
  int64_t vec_max; /* widest vector the index map allows */
} heron__cuda_operand;

/* The shared-memory plan of one config: where each buffer lives and in
 * which phase it is live.  Buffers of the same phase never overlap; the
 * plan's total is the dynamic shared memory of the launch. */
typedef struct heron__cuda_smem_buf {
  const char *name; /* "A.shared", "B.shared", "C.shared", "A.rows" */
  int phase;        /* 0: main loop, 1: accumulator store */
  int64_t offset;   /* bytes from the 128-byte aligned base */
  int64_t bytes;
} heron__cuda_smem_buf;

typedef struct heron__cuda_smem_plan {
  int nbufs;
  heron__cuda_smem_buf buf[4]; /* the 4th, A.rows, only with igemm 1 */
  int64_t total;               /* max over phases of the end of their buffers */
} heron__cuda_smem_plan;

/* The implicit-GEMM addressing of A (the knob igemm, issue 32 step 4),
 * read off the index map of input 0 once by the rules.  With igemm 1 the
 * kernel fills, once per block before the k loop, a table in shared
 * memory ("A.rows", column-major: entry (c, r) at [c * BM + r]) of every
 * row r of the block's M tile: column 0 its base, the flat offset of the
 * M and batch parts of every dimension that is not a coordinate column;
 * then the coordinate columns, the M and batch part plus the offset of
 * each dimension whose index also has a K part and needs a guard (padding
 * bounds or, for the transposed convolution, a divisor); and, when there
 * is no coordinate column, a 0 / 1 column that says whether the row is
 * valid.  A row outside M, or outside a guarded dimension of its own,
 * holds `sentinel` in the first coordinate column, so that every k fails
 * that column's guard.  In the k loop each element adds only the K part
 * (the fused k split into the reduction axes) to the row's entries: no
 * division of the fused M index there. */
typedef struct heron__cuda_igemm {
  int fits;                 /* 1: some dimension of A mixes M and K axes
                               (a sliding window): the knob exists */
  int ncols;                /* table columns */
  int col[HERON__MAX_DIMS]; /* coordinate column of each dimension of A,
                               or -1 */
  int ok_col;               /* the validity column, or -1 */
  int64_t sentinel;         /* the first coordinate of an invalid row */
  int64_t vec_max;          /* widest vector of the checked interior
                               loads (1: none beyond the operand's vec_max) */
  int elem_bytes;           /* bytes per table entry: 4 or 8 */
  /* The K order of igemm 1: A's contiguous axis innermost when it is a K
   * axis (channels-last data: ci), so that consecutive k are consecutive
   * channels; both operands split k in this order.  reorder 0: the
   * view's order. */
  int reorder;
  heron__gemm_group gk;
  int64_t a_vec, b_vec; /* the widest vectors of A and B in that order
                           that are copied whole, guarded as one element:
                           the index maps', and A's along an unguarded,
                           aligned channel */
} heron__cuda_igemm;

typedef struct heron__cuda_sched {
  heron__gemm_group g[HERON__NGROUPS];
  int64_t padded[HERON__NGROUPS]; /* each extent rounded up to the granule */
  heron__cuda_operand op[2];      /* A, B */
  int out_group;                  /* HERON__GM or HERON__GN: C.shared inner */
  int out_inner_axis;             /* the output's contiguous op axis, or -1 */
  int wm, wn, wk;                 /* knobs: the wmma shape */
  int split[3][3];                /* knobs: M: i.b i.w i.f; N: j.b j.w j.f;
                                     K: k.o k.m k.f */
  int bm, bn;                     /* aux: block tile */
  int kc0, kc1;                   /* aux: K chunk at position 0 and 1 */
  int warps, threads;             /* aux: threadIdx.y and the block size */
  int regs;                       /* aux: registers per thread, estimated */
  int c_pad;                      /* knob: C.shared storage-align offset */
  int c_bytes;                    /* aux: bytes of C.shared */
  int ab_bytes;                   /* aux: pipeline * (A.shared +
                                     B.shared), S stages */
  int out_vec;                    /* knob: halves per vectorized store */
  int64_t out_vec_max;
  int unroll;    /* knob: 0..5, unroll loops of <= 4^v steps */
  int pipeline;  /* knob: 1..4 stages of A.shared / B.shared */
  int mma;       /* knob: 0 wmma, 1 mma.sync m16n8k16 + ldmatrix,
                    2 wgmma + TMA (sm_90, ops that fit: wg) */
  int wg;        /* 1: the space has mma 2 (heron__cuda_wgmma_fits) */
  int block_swz; /* knob: 1, 2, 4 or 8 rows of blocks per group of
                    the block order (1: row-major); -1 in a space
                    without it */
  int split_k;   /* knob: 1, 2, 4, 8 or 16 blocks share each output
                    tile's K (blockIdx.z); -1 when K is too short
                    for a split (or in a space without it) */
  int igemm;     /* knob: 1 addresses A through the per-block row
                    table (heron__cuda_igemm), 0 through the index
                    map per element; -1 when the op has no sliding
                    window (or in a space without it) */
  int small_idx; /* 1: 32-bit indices suffice in the kernel */
  heron__cuda_igemm ig;
  int64_t smem_limit; /* bytes per block the plan may use */
  int64_t regs_limit; /* registers per block */
} heron__cuda_sched;

/* Whether dimension d of ts needs a guard in the kernel: a divisor, or
 * padding bounds that its index can leave (a bounded tensor's dimension
 * read as exactly one axis of its extent, such as a channel, cannot). */
static inline int heron__cuda_dim_guarded(const heron__op *op,
                                          const heron__tensor *ts, int d) {
  const heron__affine *ix = &ts->index[d];
  if (heron__affine_div(ix) > 1)
    return 1;
  if (!ts->bounded)
    return 0;
  int n = 0, a1 = -1;
  for (int a = 0; a < op->naxes; a++)
    if (ix->coef[a]) {
      n++;
      a1 = a;
    }
  return !(n == 1 && ix->coef[a1] == 1 && ix->offset == 0 &&
           op->axes[a1].extent == ts->dims[d]);
}

/* The cuda schedule of a template the cuda rules built (t->sched). */
static inline heron__cuda_sched *
heron__cuda_sched_of(const heron__template *t) {
  return (heron__cuda_sched *)t->sched;
}

/* The rule of the knob mma (core/targets/cuda/rules_mma.c), after the
 * tiling, threads and shared-memory rules. */
struct heron__rules;
void heron__cuda_rule_mma(heron__template *t, struct heron__rules *r,
                          heron__cuda_sched *s);

/* The sm_90a path (mma 2; core/targets/cuda/rules_mma.c): whether the
 * op fits it (plain 2-D operands, A = [M, K], B = [K, N] or [N, K], no
 * batch, K and an MN-major B's N multiples of 8), and the rules that bind
 * the other knobs when mma == 2.  The plan keeps HERON__CUDA_WG_SLACK
 * bytes beside the buffers: the alignment of its base to 1024 bytes and
 * an mbarrier per stage. */
#define HERON__CUDA_WG_SLACK (1024 + 8 * 4)
int heron__cuda_wgmma_fits(const heron__op *op, const heron__cuda_sched *s);
void heron__cuda_rules_wgmma(struct heron__rules *r, heron__cuda_sched *s);

/* The swizzle span (bytes) of a wgmma operand whose box rows hold
 * `halves` elements: the widest of 128, 64, 32 dividing its row bytes
 * (the rows are multiples of 16 halves, so 32 at least). */
static inline int heron__cuda_wg_span(int64_t halves) {
  return halves % 64 == 0 ? 128 : halves % 32 == 0 ? 64 : 32;
}

/* The cuda rules: hang a heron__cuda_sched on t->sched, fill it (t's op and
 * hw are set) and post the space.  HERON_EUNSUPPORTED for an op outside the
 * implicit-GEMM view. */
int heron__cuda_rules_apply(heron__template *t, heron_space *sp,
                            heron_error *err);

/* The CUDA generator: one self-contained source (core/targets/
 * cuda/kernel.h) for a valid config. */
int heron__cuda_codegen(const heron__template *t, const heron_space *sp,
                        const int64_t *cfg, heron__buf *out, heron_error *err);

/* The launch geometry and shared-memory plan of a config. */
void heron__cuda_launch_of(const heron__template *t, const int64_t *cfg,
                           heron__cuda_launch *l);
void heron__cuda_smem_plan_of(const heron__template *t, const int64_t *cfg,
                              heron__cuda_smem_plan *p);

/* Describe: the cuda template's loop nest and rules
 * (core/targets/cuda/describe.c). */
void heron__cuda_describe(const heron__template *t, heron__buf *out);

#endif
