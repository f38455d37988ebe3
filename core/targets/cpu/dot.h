/* core/targets/cpu/dot.h - what the parts of the int8 and bf16 generator
 * share: the state of one generation (dgen), its small queries, and the
 * functions one part calls in another.  Internal to the dot*.c files of
 * core/targets/cpu/; the generator's entry point, heron__cpu_dot_codegen,
 * is declared in template.h.
 *
 *   dot.c          the kernel: prelude, parallel loop, the whole nest
 *   dot_packs.c    the activation (row or region) and weight packs
 *   dot_tiles.c    the register tile: group loop and stores
 *   dot_prepack.c  weights packed ahead of the calls
 */
#ifndef HERON_CORE_TARGETS_CPU_DOT_H
#define HERON_CORE_TARGETS_CPU_DOT_H

#include "core/targets/cpu/region.h"
#include "core/targets/cpu/template.h"

/* A cap on the accumulators of one register tile, as MAX_POINTS in
 * codegen.c: the register rule keeps real tiles far below it. */
#define MAX_ACC 4096

/* The state of generating one config's source. */
typedef struct dgen {
  const heron__template *t;
  const heron__cpu_sched *s; /* t's cpu schedule */
  const heron__op *op;
  heron__buf *o;
  int64_t len[HERON__MAX_AXES][HERON__CPU_SPATIAL_LEVELS];
  int64_t thr[HERON__MAX_AXES]; /* thread tile: spatial levels 1..3, or a
                                   reduction's inner tile */
  int64_t reg[HERON__MAX_AXES]; /* register tile of a spatial axis */
  int ragged[HERON__MAX_AXES];
  int vec, group, vaxis, act, wt;
  int int8;            /* 1 for int8, 0 for bf16 */
  int unroll;          /* #pragma GCC unroll of the group loop */
  int64_t ri, rip, ng; /* reduction-inner steps, rounded up, groups */
  int64_t tv;          /* lanes of the thread's vector-axis tile */
  int64_t pa_pts, pw_pts;
  int has_outer; /* some reduction axis has outer steps */
  /* The weights are packed once, ahead of the calls (op->prepack): the
   * kernel points h_pw into the copy heron_prepack made instead of
   * packing them at every reduction-outer step. */
  int prepacked;
  /* The activations packed as a region (heron__cpu_dot_plan_region,
   * region.h: rg): the slice of the activation tensor the thread tile and
   * the reduction-inner slice touch, each element once, with the group
   * axis rg.cax innermost and rounded up to rg.cgp (a whole number of
   * groups), instead of one row of k per point (im2col, which copies a
   * convolution's input KH x KW times).  The reduction order is then the
   * other reduction axes (axis order), then rg.cax; group h_g of a row
   * starts at h_go[h_g] in it. */
  int region;
  heron__cpu_region rg;
  int64_t pa_elems; /* elements of the activation pack */
} dgen;

/* Indents the next line written to depth levels of two spaces. */
static inline void ind(dgen *g, int depth) {
  for (int i = 0; i < depth; i++)
    heron__buf_puts(g->o, "  ");
}

/* Whether axis a takes part in loops and indices (extent > 1). */
static inline int live(const dgen *g, int a) {
  return g->op->axes[a].extent > 1;
}

/* The tensor of buffer ti: an input, the output (ninputs) or the bias
 * (ninputs + 1). */
static inline const heron__tensor *buf_tensor(const heron__op *op, int ti) {
  if (ti < op->ninputs)
    return &op->in[ti];
  return ti == op->ninputs ? &op->out : &op->bias;
}

/* The C element type of buffer ti. */
static inline const char *ctype(const heron__op *op, int ti) {
  switch (heron__op_buf_dtype(op, ti)) {
  case HERON__U8:
    return "uint8_t";
  case HERON__S8:
    return "int8_t";
  case HERON__S32:
    return "int32_t";
  case HERON__BF16:
    return "uint16_t";
  default:
    return "float";
  }
}

/* The element type of the activation pack: the AVX2 int8 form reads s16
 * pairs, the others the input's own elements. */
static inline const char *act_pack_type(const dgen *g) {
  if (g->s->dot == HERON__DOT_I8_AVX2)
    return "int16_t";
  return ctype(g->op, g->act);
}

/* Closes n loops opened at depth. */
static inline void close_n(dgen *g, int n, int depth) {
  for (int i = n - 1; i >= 0; i--) {
    ind(g, depth + i);
    heron__buf_puts(g->o, "}\n");
  }
}

/* ---- dot_packs.c ------------------------------------------------------- */

/* Appends the read of tensor ti at the global coordinates g_<axis>: its
 * checks to cond ("1" when none), its offset to off. */
void heron__cpu_dot_element_text(const dgen *g, int ti, heron__buf *cond,
                                 heron__buf *off);
/* Emits the row pack of the activations into h_pa. */
void heron__cpu_dot_emit_pack_act(dgen *g, int depth);
/* Emits the weight pack into h_pw. */
void heron__cpu_dot_emit_pack_weight(dgen *g, int depth);
/* Chooses the region pack of the activations where it applies (g->region
 * and g->rg). */
void heron__cpu_dot_plan_region(dgen *g);
/* Emits the region pack of the activations into h_pa. */
void heron__cpu_dot_emit_pack_region(dgen *g, int depth);

/* ---- dot_tiles.c ------------------------------------------------------- */

/* The rows of the register tile. */
int64_t heron__cpu_dot_count_rows(const dgen *g);
/* Emits the group loop of the register tile (accumulators h_c<r>_<j>). */
void heron__cpu_dot_emit_dot_loop(dgen *g, int depth, int64_t rows,
                                  int64_t nvec);
/* Emits the stores of the register tile's lanes inside the extent. */
void heron__cpu_dot_emit_store(dgen *g, int depth, int64_t rows, int64_t nvec);

/* ---- dot_prepack.c ----------------------------------------------------- */

/* Appends the offset of the current block in the prepacked weights. */
void heron__cpu_dot_prepacked_offset_text(const dgen *g, heron__buf *b);
/* Emits heron_prepacked_elems and heron_prepack when the weights are
 * prepacked. */
void heron__cpu_dot_emit_prepack(dgen *g);

#endif
