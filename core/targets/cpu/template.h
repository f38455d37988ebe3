/* core/targets/cpu/template.h - the cpu schedule template, shared by the
 * rules that build it (core/targets/cpu/rules.c) and the C code generator
 * (core/targets/cpu/codegen.c).  Internal to libheron.
 *
 * The template is one compute stage (the op's single reduction) with a
 * local accumulator stage attached to it.  Its loop nest, outermost first:
 *
 *   parallel for f < fused            (fused = product of every spatial t0;
 *                                      t0 = ceil(extent / tile): the last
 *                                      tile of an axis may be cut short)
 *     for every reduction axis r: r.0 < r.t0      (reduction outer)
 *       pack every input whose pack knob is 1    (Add-Multi-Level-SPM: the
 *                                                 thread's tile of it for
 *                                                 this reduction slice,
 *                                                 copied contiguous in the
 *                                                 order the micro-kernel
 *                                                 reads it)
 *       for every spatial axis s: s.1 < s.t1      (cache tiles)
 *         for every spatial axis s: s.2 < s.t2    (register tiles;   only
 *                                                   when acc_at == 0)
 *           acc[...] = 0                          (local accumulator)
 *           for every reduction axis r: r.1 < r.t1  (#pragma GCC unroll)
 *             acc[...] += in0[...] * in1[...]     (fully unrolled register
 *                                                   tile, vectorized along
 *                                                   the vector axis)
 *             prefetch what the vector loads read `prefetch` steps ahead
 *           out[...] = acc (first reduction-outer step) or += acc (later),
 *                      then the epilogue (bias, relu) on the last step;
 *                      with out.stage, the steps before the last keep the
 *                      sums in a per-thread buffer instead (vector loads
 *                      and stores), and the last step adds it and stores
 *
 * The register tile is the micro-kernel (Tensorize): rows of broadcast
 * scalars times vectors of the output-contiguous axis, one FMA intrinsic
 * (_mm512_fmadd_ps / _mm256_fmadd_ps) per accumulator and step; its shape
 * is the t3 (and, with acc_at 1, t2) knobs, and the register rule bounds
 * accumulators + loaded vectors + one broadcast by the register file.
 *
 * Every loop length is a CSP variable: `tile[a][l]` holds the variable
 * index of level l of op axis a (a constant variable of value 1 for the
 * levels of extent-1 axes, which get no knobs).  A config gives each
 * variable its value, so the generator reads cfg[tile[a][l]] and never
 * needs to know which variables are knobs.
 */
#ifndef HERON_CORE_CODEGEN_CPU_TEMPLATE_H
#define HERON_CORE_CODEGEN_CPU_TEMPLATE_H

#include "core/sched/template.h"

/* The micro-kernel variants of int8 and bf16 (heron__cpu_sched.dot).  Every
 * one has the same packs and scalar code at vec 1; the instructions at vec
 * 16 (zmm) and 8 (ymm):
 *   VNNI       AVX512-VNNI: _mm512_dpbusd_epi32, _mm256_dpbusd_epi32 (VL)
 *   AVX_VNNI   AVX-VNNI (VEX): _mm256_dpbusd_avx_epi32, vec 8 only
 *   I8_AVX2    AVX2: the s8 weights widened to s16 (_mm256_cvtepi8_epi16),
 *              the activations packed as s16 pairs, _mm256_madd_epi16 and
 *              _mm256_add_epi32: every product and pair sum is exact in
 *              its 16- and 32-bit lanes, so unlike vpmaddubsw (whose
 *              16-bit pair sums saturate at 255 * 127 * 2 > 32767) no
 *              input can change a result; vec 8 only
 *   BF16       AVX512-BF16: _mm512_dpbf16_ps, _mm256_dpbf16_ps (VL)
 *   BF16_AVX2  AVX2 and FMA: bf16 pairs widened to fp32 by shifts and two
 *              _mm256_fmadd_ps, odd element first as vdpbf16ps does (the
 *              products are exact, so the sums round alike); vec 8 only
 *   SCALAR     no AVX2: vec 1 only */
enum {
  HERON__DOT_NONE = 0,
  HERON__DOT_VNNI,
  HERON__DOT_AVX_VNNI,
  HERON__DOT_I8_AVX2,
  HERON__DOT_BF16,
  HERON__DOT_BF16_AVX2,
  HERON__DOT_SCALAR
};

/* Spatial axes are split into these four levels, reductions into two. */
#define HERON__CPU_SPATIAL_LEVELS 4
#define HERON__CPU_REDUCE_LEVELS 2

/* The cpu target's schedule: its extension of the template
 * (core/sched/template.h), which the cpu rules allocate into t->sched and
 * the descriptor's free_sched frees (core/targets/cpu/target.c).  Read it
 * with heron__cpu_sched_of. */
typedef struct heron__cpu_sched {
  /* tile[a][l]: variable index of loop level l of op axis a. */
  int tile[HERON__MAX_AXES][HERON__CPU_SPATIAL_LEVELS];
  int has_knobs[HERON__MAX_AXES]; /* 0 for extent-1 axes (all levels 1) */
  /* Tiles need not divide their axis: level 0 is the rounded-up count of
   * tiles, cover[a] the aux product of all levels (>= the extent; the
   * generator handles the edge tiles of an axis whose cover exceeds its
   * extent), padded the aux product of every cover, bounded by
   * max_padded_work_pct of the real product. */
  int cover[HERON__MAX_AXES];
  int padded;
  int64_t padded_limit;

  int fused; /* aux: product of the spatial level-0 lengths */
  /* pack[i]: knob (0/1) of input i: copy its tile into a contiguous
   * per-thread buffer at each reduction-outer step (Add-Multi-Level-SPM),
   * or a constant 0 when packing cannot help (no reuse to gain). */
  int pack[HERON__MAX_TENSORS];
  int pack_elems[HERON__MAX_TENSORS]; /* aux: elements of the packed tile */
  int64_t pack_limit;                 /* elements all packs may take */
  /* stage: knob (0/1) of the output, or -1: the thread's output tile is
   * accumulated across the reduction-outer steps in a contiguous
   * per-thread buffer, register tile by register tile in the
   * accumulators' own layout, and written to the output once, at the last
   * step.  Only where the output's lanes lie a stride apart (a convolution
   * vectorized along its channels: every partial sum would otherwise be
   * stored and reloaded lane by lane) and the reduction is split (a
   * constraint).  stage_elems: aux, the buffer's elements (0 when off). */
  int stage;
  int stage_elems;
  /* region: knob (0/1) of the activation input (op.act_input), or -1:
   * instead of its pack, the part of it the thread tile and the
   * reduction slice read, each element once with the channels innermost
   * (core/targets/cpu/region.h, the pack the int8 and bf16 kernels take
   * where it is smaller), copied at each reduction-outer step into a
   * per-thread buffer.  fp32 convolutions only (a kernel window over a
   * channel axis; the input broadcast, not read along the vector axis);
   * pack + region <= 1; absent value 0, so configs recorded before the
   * knob read as the kernels they were.  region_elems: aux, the buffer's
   * elements (0 when off), counted with the packs toward the cache
   * share. */
  int region;
  int region_elems;
  /* transpose: knob (0/1) of the output, or -1: where its lanes lie a
   * stride apart (vectorized along the channels of an NCHW output) and the
   * output has a contiguous axis (tr_axis, the output's last dimension),
   * groups of vec accumulators consecutive along tr_axis are transposed
   * in registers at the store, so each channel's vec outputs are one
   * contiguous vector store instead of vec scalar ones (a group cut short
   * by the register tile's end: fewer lanes, under a mask).  Only with the
   * ISA's own vectors (vec 8 or 16, a constraint); the edge copy of a tile
   * stores lane by lane as before.  Absent value 0. */
  int transpose;
  int tr_axis;
  int regs_need; /* aux: vector registers the micro-kernel needs */
  /* int8 and bf16 (Tensorize with a dot-product instruction; fp32 has
   * HERON__DOT_NONE and none of what follows).  Each 32-bit accumulator
   * lane sums dot_group consecutive reduction steps at once: 4 u8 x s8
   * products for vpdpbusd, 2 for the AVX2 int8 form (exact 16-bit
   * products, vpmovsxbw + vpmaddwd) and for bf16's pairs.  Both inputs are
   * always packed, at every reduction-outer step: the weights (dot_weight,
   * the input that reads the vector axis) as [point][k / group][lanes]
   * [group], group consecutive reduction steps per 32-bit lane as the
   * instructions read them, the activations (dot_act, broadcast one
   * 32-bit group at a time) as [point][k], or a convolution's as the
   * region of the input its tile reads (core/targets/cpu/dot.c); both
   * zero-filled past every edge and up to a whole group, so no constraint
   * ties the reduction tiles to the group. */
  int dot;           /* HERON__DOT_*, from the description's ISA flags */
  int dot_group;     /* reduction steps per 32-bit lane: 4 or 2 */
  int dot_act;       /* the activation input (op.act_input) */
  int dot_weight;    /* the weight input */
  int fma_isa;       /* 512: _mm512 intrinsics for vec 16; 256: _mm256 for
                        vec 8 (with FMA); 0: vector extensions only */
  int acc_at;        /* knob: 0 = register-inner tile, 1 = levels 2 and 3 */
  int unroll;        /* knob: 0..5, max unroll step max(1, 4 * v) */
  int prefetch;      /* knob: software prefetch distance in reduction-inner
                        steps (0: none) of every vector load that moves
                        with the innermost reduction loop; a constant 0
                        when the lanes run along the reduction */
  int vec;           /* knob: vector width (a constant 1 without an axis) */
  int vec_axis;      /* the op axis vectorized, or -1 */
  int vec_reduce;    /* 1 when vec_axis is a reduction axis (gemv): each
                        accumulator is a vector of partial sums over vec
                        consecutive reduction steps, summed across its
                        lanes at the store; no input is packed */
  int acc_floats;    /* aux: accumulator elements at the chosen position */
  int acc_vecs;      /* aux: accumulator vector registers */
  int acc_vec_limit; /* the register-file bound on acc_vecs */
  int64_t l1_limit;  /* element bounds of the two working sets */
  int64_t l2_limit;
} heron__cpu_sched;

/* The cpu schedule of a template the cpu rules built. */
static inline heron__cpu_sched *heron__cpu_sched_of(const heron__template *t) {
  return (heron__cpu_sched *)t->sched;
}

/* The value of loop level l of axis a in config cfg. */
static inline int64_t heron__cpu_tile(const heron__cpu_sched *s,
                                      const int64_t *cfg, int a, int l) {
  return cfg[s->tile[a][l]];
}

/* Number of loop levels of axis a (4 spatial, 2 reduction). */
static inline int heron__cpu_levels(const heron__template *t, int a) {
  return t->op.axes[a].kind == HERON__SPATIAL ? HERON__CPU_SPATIAL_LEVELS
                                              : HERON__CPU_REDUCE_LEVELS;
}

/* The cpu rules (core/targets/cpu/rules.c): hangs a heron__cpu_sched on
 * t->sched, fills it and t's notes (t's op, hw and elem_bytes are set), and
 * posts its variables and constraints into sp. */
int heron__cpu_rules_apply(heron__template *t, heron_space *sp,
                           heron_error *err);

/* The cpu generator (core/targets/cpu/codegen.c). */
int heron__cpu_codegen(const heron__template *t, const heron_space *sp,
                       const int64_t *cfg, heron__buf *out, heron_error *err);

/* The int8 and bf16 generator (core/targets/cpu/dot.c), which
 * heron__cpu_codegen calls for templates whose cpu schedule has dot set.  Its
 * source builds natively with the template's flags, or anywhere with
 * -DHERON_EMULATE_ISA, where scalar C definitions of every intrinsic it
 * uses replace <immintrin.h> (the same kernel, emulated).  A prelude
 * (includes and those definitions) comes first under an include guard, so
 * several kernels' sources may be concatenated into one file, each
 * renamed with "#define heron_kernel heron_kernel_<n>". */
int heron__cpu_dot_codegen(const heron__template *t, const heron_space *sp,
                           const int64_t *cfg, heron__buf *out,
                           heron_error *err);

/* The scalar C definitions of the intrinsics the int8 and bf16 kernels
 * use, as C source (static, NUL-terminated). */
extern const char heron__cpu_isa_emulation[];

#endif
