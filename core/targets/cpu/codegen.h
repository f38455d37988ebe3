/* core/targets/cpu/codegen.h - what the parts of the cpu generator share:
 * the state of one generation (gen), the few one-line queries on it, and
 * the functions one part calls in another.  Internal to the codegen*.c
 * files of core/targets/cpu/; the generator's entry point,
 * heron__cpu_codegen, is declared in template.h.
 *
 *   codegen.c          the kernel: header, parallel loop, the whole nest
 *   codegen_expr.c     element addresses, guards and input values
 *   codegen_tiles.c    the register tile: multiply-adds, stores, edges
 *   codegen_loops.c    the loops of one tiling level, origins, indices
 *   codegen_packs.c    packs (Add-Multi-Level-SPM) and kept buffers
 *   codegen_halo.c     the zero-haloed copies of padded inputs
 *   codegen_prepack.c  inputs packed ahead of the calls
 *   codegen_driver.c   the standalone driver of an emitted kernel
 */
#ifndef HERON_CORE_TARGETS_CPU_CODEGEN_H
#define HERON_CORE_TARGETS_CPU_CODEGEN_H

#include "core/targets/cpu/region.h"
#include "core/targets/cpu/template.h"

/* The state of generating one config's source. */
typedef struct gen {
  const heron__template *t;
  const heron__cpu_sched *s; /* t's cpu schedule */
  const heron__op *op;
  const int64_t *cfg;
  heron__buf *o;
  int64_t len[HERON__MAX_AXES][HERON__CPU_SPATIAL_LEVELS]; /* loop lengths */
  int64_t reg[HERON__MAX_AXES]; /* register tile extent per axis */
  int vec;                      /* vector width, 1 = scalar code */
  int vaxis;                    /* the vectorized axis or -1 */
  int acc_at;
  int reg_from; /* first spatial level inside the register tile: 3 or 2 */
  int unroll;
  /* Software prefetch distance in steps of the innermost reduction-inner
   * loop (axis pf_axis; -1 when no such loop), 0 for none. */
  int prefetch, pf_axis;
  int fma; /* 1: FMA intrinsics for this vector width */
  /* Ragged axes (the tiles sweep past the extent), which axes' indices the
   * reads being generated must check against the extent (the edge copy of
   * the micro-kernel: the ragged spatial axes; a pack: every ragged axis),
   * and whether the reduction-inner loops stop at the extent. */
  int ragged[HERON__MAX_AXES];
  int64_t cover[HERON__MAX_AXES]; /* product of every level's length */
  int guard_axis[HERON__MAX_AXES];
  int bound_reduce;
  /* Lanes along the (only) reduction axis vaxis (gemv): accumulators are
   * vectors of partial sums, h_hsum'd at the store; with a ragged axis the
   * steps past the last whole vector go to scalar accumulators h_s<p>. */
  int rvec;
  int in_store; /* the stores of an rvec tile: scalar code */
  /* Masked edges: the vector axis is ragged and the ISA's own vectors are
   * in use (AVX2 vmaskmovps, AVX-512 mask registers), so the edge copy
   * loads and stores the lanes of a vector that lie inside the extent with
   * one masked instruction (h_ldm, h_stm) instead of lane by lane. */
  int masked;
  /* Broadcasts of in-place and packed scalars through h_bcv, a volatile
   * vbroadcastss GCC may neither merge nor move (see bcast_pinned). */
  int bcv;
  /* The multiply-add as inline assembly (h_fma): AVX2 kernels only.  With
   * AVX-512 GCC folds each broadcast into its multiply-add as an embedded
   * broadcast ({1to16}), which the assembly would prevent (a GEMM kernel
   * went from 97 to 74 GFLOP/s), and 32 registers leave room to spare. */
  int fma_asm;
  /* AVX-512: a broadcast scalar read unguarded is not loaded into a
   * register but passed by address to h_fmab, one vfmadd231ps with an
   * embedded broadcast ({1to16}) per multiply-add.  GCC does this itself
   * until the unrolled steps of a convolution read the same scalar twice
   * (output column x at kernel column k+1 is x+1 at k); it then shares
   * the broadcast in a register, and a tile that fills the register file
   * spills (a 28-accumulator 3-D convolution tile: 87 GFLOP/s shared, 112
   * embedded). */
  int fmab;
  /* Per buffer (inputs, the output at index ninputs, the bias after it):
   * the linear coefficient of every axis, the constant offset, which
   * dimensions need a guard (range or divisibility), and whether some
   * dimension is divided, which makes the address non-linear. */
  int64_t lin[HERON__MAX_TENSORS + 2][HERON__MAX_AXES];
  int64_t lin0[HERON__MAX_TENSORS + 2];
  int guard[HERON__MAX_TENSORS + 2][HERON__MAX_DIMS];
  int divided[HERON__MAX_TENSORS + 2];
  /* Packing (Add-Multi-Level-SPM) per input: on or off, the points of its
   * register tile (product over the spatial axes it reads), and each such
   * axis' stride inside that tile (the vector axis innermost). */
  int packed[HERON__MAX_TENSORS];
  /* A packed input the task holds constant (op->prepack): packed once by
   * heron_prepack, ahead of the calls, for the whole tensor; the kernel
   * takes that copy in the input's place and points into it. */
  int prepacked[HERON__MAX_TENSORS];
  /* The input read from its region (the knob X.region, region.h): at
   * each reduction-outer step the part of it that the thread tile and the
   * slice read is copied, channels innermost and zeros outside the input,
   * into the per-thread buffer h_pk<rg.act>, which the micro-kernel reads
   * through h_q<rg.act> at constant offsets with no checks. */
  int region;
  heron__cpu_region rg;
  /* An unpacked input whose reads leave its dimensions (a padded
   * convolution's data): the kernel first copies it into a zero-haloed
   * buffer h_hc<ti> wide enough for every index its tiles reach, past the
   * edges of ragged tiles too, and reads that copy with no range checks
   * (lin, lin0 and guard describe the copy).  hdims: the copy's
   * dimensions; hshift: where the input's element 0 sits in each. */
  int halo[HERON__MAX_TENSORS];
  int64_t hdims[HERON__MAX_TENSORS][HERON__MAX_DIMS];
  int64_t hshift[HERON__MAX_TENSORS][HERON__MAX_DIMS];
  int64_t helems[HERON__MAX_TENSORS];
  /* The output's stage (out.stage): the partial sums of the reduction-
   * outer steps before the last go to the per-thread buffer h_stg, one
   * block of npts * vec floats per register tile of the thread's tile. */
  int stage;
  /* The output's transposed store (<out>.transpose): the non-edge stores
   * transpose every vec accumulators consecutive along tr_axis (the
   * output's contiguous axis) in registers with h_tr, and store each
   * channel's lanes as one vector along tr_axis. */
  int transpose, tr_axis;
  int64_t rp[HERON__MAX_TENSORS];
  int64_t rstride[HERON__MAX_TENSORS][HERON__MAX_AXES];
  int rorder[HERON__MAX_TENSORS][HERON__MAX_AXES]; /* those axes, outermost
                                                      first */
  int nrorder[HERON__MAX_TENSORS];
  int64_t ki; /* reduction-inner steps: product of every reduction t1 */
  /* Loads of the current reduction step, deduplicated by expression. */
  char **load_expr;
  int nloads, cap_loads;
} gen;

/* The tensor of buffer ti: an input, the output (ninputs) or the bias
 * (ninputs + 1). */
static inline const heron__tensor *tensor_at(const gen *g, int ti) {
  if (ti < g->op->ninputs)
    return &g->op->in[ti];
  return ti == g->op->ninputs ? &g->op->out : &g->op->bias;
}

/* Indents the next line written to depth levels of two spaces. */
static inline void indent(const gen *g, int depth) {
  heron__buf_printf(g->o, "%*s", 2 * depth, "");
}

/* What heron__cpu_input_value wrote: a scalar, a vector, or (AVX-512, fmab)
 * the address of a scalar that h_fmab broadcasts. */
enum { VAL_SCALAR, VAL_VEC, VAL_ADDR };

/* Whether flag[ti] is set for some input. */
static inline int any_input(const gen *g, const int *flag) {
  for (int ti = 0; ti < g->op->ninputs; ti++)
    if (flag[ti])
      return 1;
  return 0;
}

/* Whether some input is packed. */
static inline int any_packed(const gen *g) { return any_input(g, g->packed); }

/* Whether input ti is read from its region. */
static inline int is_region(const gen *g, int ti) {
  return g->region && ti == g->rg.act;
}

/* Whether the kernel has per-thread buffers: packs made in the call, a
 * region (in its input's slot of h_keep) or the output's stage (slot
 * ninputs). */
static inline int any_buffer(const gen *g) {
  for (int ti = 0; ti < g->op->ninputs; ti++)
    if (g->packed[ti] && !g->prepacked[ti])
      return 1;
  return g->region || g->stage;
}

/* Whether some input is packed ahead of the calls. */
static inline int any_prepacked(const gen *g) {
  return any_input(g, g->prepacked);
}

/* Whether some input is read through a zero-haloed copy. */
static inline int any_halo(const gen *g) { return any_input(g, g->halo); }

/* Whether the kernel keeps buffers across calls (per-thread packs and
 * stage, haloed copies), which a call owns through h_busy. */
static inline int any_kept(const gen *g) {
  return any_buffer(g) || any_halo(g);
}

/* ---- codegen_expr.c ---------------------------------------------------- */

/* The least and greatest value of index map ix while every axis a runs
 * over 0..last[a]. */
void heron__cpu_index_bounds(const heron__op *op, const heron__affine *ix,
                             const int64_t *last, int64_t *lo, int64_t *hi);
/* Fills g's linear coefficients and guarded dimensions of every tensor. */
void heron__cpu_index_maps(gen *g);
/* Appends sum over axes of k[a] * index(a) + c at tile offset off. */
void heron__cpu_linear_text(const gen *g, const int64_t *k, int64_t c,
                            const int64_t *off, heron__buf *b);
/* Appends to cond the check that axis a's index at off is below its
 * extent. */
void heron__cpu_below_extent(const gen *g, int a, const int64_t *off,
                             heron__buf *cond);
/* Appends the count of the vector's lanes at off inside the vector axis. */
void heron__cpu_lanes_left_text(const gen *g, const int64_t *off,
                                heron__buf *b);
/* Appends one scalar element of tensor ti at off, guarded where needed. */
void heron__cpu_scalar_elem(const gen *g, int ti, const int64_t *off,
                            heron__buf *b);
/* The offset of register-tile point off in packed input ti's step block. */
int64_t heron__cpu_packed_pos(const gen *g, int ti, const int64_t *off);
/* Appends input ti's value at off for one reduction step; returns the
 * VAL_* kind written. */
int heron__cpu_input_value(gen *g, int ti, const int64_t *off, heron__buf *b);
/* The number of the local holding expr in this reduction step, emitted on
 * first use; -1 out of memory. */
int heron__cpu_load_local(gen *g, const char *expr, int kind, int depth);
/* Forgets the reduction step's locals. */
void heron__cpu_free_loads(gen *g);

/* ---- codegen_tiles.c --------------------------------------------------- */

/* Point p's offsets of the register tile into off (when not NULL); returns
 * the number of points. */
int heron__cpu_tile_points(const gen *g, int p, int64_t *off);
/* The register tiles at origins <a>_b, with their edge copies. */
int heron__cpu_emit_tiles(gen *g, int npts, int d, int has_first);

/* ---- codegen_loops.c --------------------------------------------------- */

/* Opens the loops of one level for the axes of `kind`; returns how many. */
int heron__cpu_open_loops(gen *g, int kind, int level, int depth, int pragma);
/* Closes n loops opened at depth. */
void heron__cpu_close_loops(gen *g, int n, int depth);
/* Appends the origin of axis a's register tile from the outer loops
 * ("0" when none moves it). */
void heron__cpu_origin_text(const gen *g, int a, heron__buf *b);
/* The same from the loops of levels from..: inside the thread tile with
 * from 1 (the region pack's origin), nothing when none moves it. */
void heron__cpu_origin_text_from(const gen *g, int a, int from, heron__buf *b);
/* Emits <a>_b, the origin of axis a's register tile. */
void heron__cpu_tile_origin(gen *g, int a, int depth);
/* Emits the full index of every reduction axis. */
void heron__cpu_reduce_indices(gen *g, int depth);
/* Emits <r>_n, the steps of a ragged reduction slice inside the extent. */
void heron__cpu_reduce_bounds(gen *g, int depth);

/* ---- codegen_packs.c --------------------------------------------------- */

/* Fills the packed inputs' register layout and the reduction-inner step
 * count. */
void heron__cpu_setup_packing(gen *g);
/* The axes and levels of input ti's pack blocks; returns their count. */
int heron__cpu_block_loops(const gen *g, int ti, int *axis, int *level);
/* Emits the copy of input ti's tile into dst. */
void heron__cpu_emit_pack(gen *g, int ti, int depth, const char *dst);
/* Appends the offset of the current block of tensor ti's per-thread
 * buffer, blocks of `block` floats. */
void heron__cpu_block_offset_text(const gen *g, int ti, int64_t block,
                                  heron__buf *b);
/* Plans the region of the input whose knob X.region is on (g->region,
 * g->rg); HERON_EINVAL when region.h finds none. */
int heron__cpu_setup_region(gen *g);
/* Emits the copy of the region into h_pk<rg.act>. */
void heron__cpu_emit_region(gen *g, int depth);
/* Emits h_q<ti>, the register tile's block of every packed input and its
 * origin in the region. */
void heron__cpu_emit_pack_pointers(gen *g, int depth);
/* Emits h_k, the flattened reduction-inner step. */
void heron__cpu_emit_step_index(gen *g, int depth);
/* Emits the taking of every per-thread buffer. */
void heron__cpu_emit_pack_alloc(gen *g, int depth);
/* Emits the release of the per-thread buffers a call allocated. */
void heron__cpu_emit_pack_free(gen *g, int depth);
/* Emits the storage of the kept buffers, their release and h_take. */
void heron__cpu_emit_pack_keep(gen *g);

/* ---- codegen_halo.c ---------------------------------------------------- */

/* Picks the inputs read through a zero-haloed copy and redoes their maps. */
void heron__cpu_setup_halo(gen *g);
/* Emits the haloed copies of the inputs. */
void heron__cpu_emit_halo(gen *g);

/* ---- codegen_prepack.c ------------------------------------------------- */

/* Appends the offset of the current block in input ti's packed copy. */
void heron__cpu_prepacked_offset_text(const gen *g, int ti, heron__buf *b);
/* Emits heron_prepacked_elems and heron_prepack when an input is
 * prepacked. */
void heron__cpu_emit_prepack(gen *g);

#endif
