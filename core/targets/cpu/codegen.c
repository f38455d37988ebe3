/* core/targets/cpu/codegen.c - C source for one config of the cpu template,
 * and the standalone driver that times an emitted kernel.
 *
 * The kernel follows the loop nest of core/targets/cpu/template.h.  Every
 * loop length is a number by the time we generate, so the register tile is
 * written out statement by statement: one named accumulator per vector
 * (or scalar) of the tile, the input elements of one reduction step loaded
 * once each into named locals, and one multiply-add per accumulator.  That
 * keeps the accumulator in registers without relying on the compiler's
 * scalar replacement of arrays, and the vectors are GCC vector extensions,
 * so vectorization does not depend on the auto-vectorizer either.
 *
 * Element addresses come from the op's affine index maps: the offset of a
 * tensor element is sum over axes of L[a] * index(a) + const, with
 * L[a] = sum over dims of stride(d) * coef(d, a).  Dimensions whose index
 * can leave [0, dim) (padding) read as zero outside: an unpacked input is
 * read from a zero-haloed copy made at each call (setup_halo), a packed
 * one is zero-filled by its pack, and only a transposed convolution's
 * divided dimensions are guarded where they are read.
 *
 * Tiles need not divide their axes (t0 = ceil(extent / tile)).  An axis
 * whose tiles sweep past its extent is "ragged", and then: a register tile
 * that starts past the extent is skipped; one that lies inside runs the
 * micro-kernel, unchanged; one that crosses the edge runs an edge copy of
 * it whose loads of unpacked inputs are guarded (read as zero past the
 * edge; a haloed copy needs no guard) and whose stores are made element by
 * element inside the
 * extent; across a ragged vector axis, contiguous lanes are loaded and
 * stored with masks (maskload/maskstore on AVX2, k-masks on AVX-512) where
 * the kernel uses the ISA's vectors.  Packs are zero-filled past every
 * edge.  A ragged reduction axis bounds its inner loop by what is left of
 * the extent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/targets/cpu/template.h"

/* A sanity cap on the statements of one register tile.  The register
 * limit rule keeps real tiles far below it; it only guards against a
 * space built with different limits producing a giant file. */
#define MAX_POINTS 4096
#define MAX_LOADS 8192

typedef struct gen {
  const heron__template *t;
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

static const heron__tensor *tensor_at(const gen *g, int ti) {
  if (ti < g->op->ninputs)
    return &g->op->in[ti];
  return ti == g->op->ninputs ? &g->op->out : &g->op->bias;
}

/* The least and greatest value of index map ix (before any division)
 * while every axis a runs over 0..last[a]. */
static void index_bounds(const heron__op *op, const heron__affine *ix,
                         const int64_t *last, int64_t *lo, int64_t *hi) {
  *lo = *hi = ix->offset;
  for (int a = 0; a < op->naxes; a++) {
    int64_t span = ix->coef[a] * last[a];
    if (span < 0)
      *lo += span;
    else
      *hi += span;
  }
}

/* Row-major strides, the linear coefficients and the guarded dimensions of
 * every tensor. */
static void index_maps(gen *g) {
  const heron__op *op = g->op;
  int64_t last[HERON__MAX_AXES];
  for (int a = 0; a < op->naxes; a++)
    last[a] = op->axes[a].extent - 1;
  for (int ti = 0; ti < heron__op_nbufs(op); ti++) {
    const heron__tensor *ts = tensor_at(g, ti);
    int64_t stride = 1;
    memset(g->lin[ti], 0, sizeof g->lin[ti]);
    g->lin0[ti] = 0;
    for (int d = ts->ndim - 1; d >= 0; d--) {
      const heron__affine *ix = &ts->index[d];
      int64_t lo, hi;
      index_bounds(op, ix, last, &lo, &hi);
      for (int a = 0; a < op->naxes; a++)
        g->lin[ti][a] += stride * ix->coef[a];
      g->lin0[ti] += stride * ix->offset;
      int64_t div = heron__affine_div(ix);
      g->guard[ti][d] =
          div > 1 || (ts->bounded && (lo < 0 || hi >= ts->dims[d]));
      g->divided[ti] |= div > 1;
      stride *= ts->dims[d];
    }
  }
}

/* ---- expressions ----------------------------------------------------------
 */

/* sum over axes of k[a] * index(a) + c, folding the constant tile offsets
 * into c.  Extent-1 axes have index 0 and drop out. */
static void linear_text(const gen *g, const int64_t *k, int64_t c,
                        const int64_t *off, heron__buf *b) {
  const heron__op *op = g->op;
  int any = 0;
  for (int a = 0; a < op->naxes; a++) {
    if (k[a] == 0 || op->axes[a].extent == 1)
      continue;
    if (op->axes[a].kind == HERON__SPATIAL)
      c += k[a] * off[a];
    const char *name = op->axes[a].name;
    const char *suffix = op->axes[a].kind == HERON__SPATIAL ? "_b" : "";
    const char *sep = any ? " + " : "";
    if (k[a] == 1)
      heron__buf_printf(b, "%s%s%s", sep, name, suffix);
    else
      heron__buf_printf(b, "%s%lld * %s%s", sep, (long long)k[a], name, suffix);
    any = 1;
  }
  if (!any)
    heron__buf_printf(b, "%lld", (long long)c);
  else if (c)
    heron__buf_printf(b, " + %lld", (long long)c);
}

/* Appends to `cond` the check that axis a's index at tile offset off lies
 * below its extent ("(i_b + 3) < 383"), joined with " && ". */
static void below_extent(const gen *g, int a, const int64_t *off,
                         heron__buf *cond) {
  int64_t k[HERON__MAX_AXES] = {0};
  k[a] = 1;
  heron__buf e = {0};
  linear_text(g, k, 0, off, &e);
  heron__buf_printf(cond, "%s(%s) < %lld", cond->len ? " && " : "", e.data,
                    (long long)g->op->axes[a].extent);
  heron__buf_free(&e);
}

/* "(41 - (j_b + 8))": the lanes of the vector at tile offset off that lie
 * inside the vector axis' extent (<= 0 or >= vec at times: h_mask clamps). */
static void lanes_left_text(const gen *g, const int64_t *off,
                            heron__buf *b) {
  int64_t k[HERON__MAX_AXES] = {0};
  k[g->vaxis] = 1;
  heron__buf e = {0};
  linear_text(g, k, 0, off, &e);
  heron__buf_printf(b, "(%lld - (%s))",
                    (long long)g->op->axes[g->vaxis].extent, e.data);
  heron__buf_free(&e);
}

/* Appends to `cond` the range checks of tensor ti's padded dimensions at
 * tile offset off ("(h) >= 0 && (h) < 9 && ..."); nothing when the tensor
 * needs no guard there. */
static void guard_text(const gen *g, int ti, const int64_t *off,
                       heron__buf *cond) {
  const heron__tensor *ts = tensor_at(g, ti);
  for (int d = 0; d < ts->ndim; d++) {
    if (!g->guard[ti][d])
      continue;
    heron__buf e = {0};
    linear_text(g, ts->index[d].coef, ts->index[d].offset, off, &e);
    int64_t div = heron__affine_div(&ts->index[d]);
    heron__buf_printf(cond, "%s(%s) >= 0 && (%s) < %lld",
                      cond->len ? " && " : "", e.data, e.data,
                      (long long)(ts->dims[d] * div));
    if (div > 1)
      heron__buf_printf(cond, " && (%s) %% %lld == 0", e.data, (long long)div);
    heron__buf_free(&e);
  }
  const heron__op *op = g->op;
  if (ti < op->ninputs && g->halo[ti])
    return; /* the halo holds zeros past the edges of ragged tiles too */
  for (int a = 0; a < op->naxes; a++) {
    if (!g->guard_axis[a] || !heron__tensor_reads(ts, a))
      continue;
    below_extent(g, a, off, cond);
  }
}

/* The element offset of tensor ti at tile offset off: the linear form, or
 * for a tensor with a divided dimension, the row-major sum of the
 * dimensions' indices, each divided where its map says so. */
static void address_text(const gen *g, int ti, const int64_t *off,
                         heron__buf *b) {
  if (!g->divided[ti]) {
    linear_text(g, g->lin[ti], g->lin0[ti], off, b);
    return;
  }
  const heron__tensor *ts = tensor_at(g, ti);
  int64_t stride = 1;
  for (int d = ts->ndim - 1; d >= 0; d--) {
    heron__buf e = {0};
    linear_text(g, ts->index[d].coef, ts->index[d].offset, off, &e);
    int64_t div = heron__affine_div(&ts->index[d]);
    heron__buf_printf(b, "%s%lld * ((%s) / %lld)",
                      d < ts->ndim - 1 ? " + " : "", (long long)stride, e.data,
                      (long long)div);
    heron__buf_free(&e);
    stride *= ts->dims[d];
  }
}

/* Appends `open` tensor[index] `close` for tensor ti at tile offset off,
 * wrapped as "(guards ? read : zero)" when a padded dimension needs a range
 * check: the one shape of every input read, scalar or vector. */
static void guarded_read(const gen *g, int ti, const int64_t *off,
                         const char *open, const char *close, const char *zero,
                         heron__buf *b) {
  heron__buf cond = {0};
  guard_text(g, ti, off, &cond);
  if (cond.len)
    heron__buf_printf(b, "(%s ? ", cond.data);
  heron__buf_printf(b, "%s%s[", open, tensor_at(g, ti)->name);
  address_text(g, ti, off, b);
  heron__buf_printf(b, "]%s", close);
  if (cond.len)
    heron__buf_printf(b, " : %s)", zero);
  heron__buf_free(&cond);
}

/* One scalar element of tensor ti at tile offset off: "A[1024 * i_b + k]",
 * guarded as "(h >= 0 && h < 9 ? data[...] : 0.0f)" where needed. */
static void scalar_elem(const gen *g, int ti, const int64_t *off,
                        heron__buf *b) {
  guarded_read(g, ti, off, "", "", "0.0f", b);
}

/* Whether tensor ti's vec-axis lanes are consecutive elements that a plain
 * vector load can read: linear coefficient 1 and no guard that depends on
 * the lane. */
static int contiguous_lanes(const gen *g, int ti) {
  if (g->lin[ti][g->vaxis] != 1)
    return 0;
  const heron__tensor *ts = tensor_at(g, ti);
  for (int d = 0; d < ts->ndim; d++)
    if (g->guard[ti][d] && ts->index[d].coef[g->vaxis] != 0)
      return 0;
  return (ti < g->op->ninputs && g->halo[ti]) || !g->guard_axis[g->vaxis];
}

/* What input_value wrote: a scalar, a vector, or (AVX-512, fmab) the
 * address of a scalar that h_fmab broadcasts. */
enum { VAL_SCALAR, VAL_VEC, VAL_ADDR };

/* The offset of register-tile point off in packed input ti's block of one
 * reduction step (its register layout, the vector axis innermost). */
static int64_t packed_pos(const gen *g, int ti, const int64_t *off) {
  int64_t pos = 0;
  for (int a = 0; a < g->op->naxes; a++)
    if (g->op->axes[a].kind == HERON__SPATIAL)
      pos += off[a] * g->rstride[ti][a];
  return pos;
}

/* The value of packed input ti at register-tile point off: its position
 * in the pack is the step's block (h_k * points) plus the point's offset
 * in the tensor's register layout, whose vector axis is innermost, so a
 * vector of lanes is one unit-stride load. */
static int packed_value(const gen *g, int ti, const int64_t *off,
                        heron__buf *b) {
  int64_t pos = packed_pos(g, ti, off);
  int is_vec = g->vec > 1 && g->rstride[ti][g->vaxis] != 0;
  heron__buf idx = {0};
  if (g->ki > 1)
    heron__buf_printf(&idx, "h_k * %lld + %lld", (long long)g->rp[ti],
                      (long long)pos);
  else
    heron__buf_printf(&idx, "%lld", (long long)pos);
  if (is_vec)
    heron__buf_printf(b, "h_ld(&h_q%d[%s])", ti, idx.data);
  else if (g->fmab) {
    heron__buf_printf(b, "&h_q%d[%s]", ti, idx.data);
    heron__buf_free(&idx);
    return VAL_ADDR;
  } else if (g->bcv)
    heron__buf_printf(b, "h_bcv(&h_q%d[%s])", ti, idx.data);
  else if (g->vec > 1)
    heron__buf_printf(b, "h_set1(h_q%d[%s])", ti, idx.data);
  else
    heron__buf_printf(b, "h_q%d[%s]", ti, idx.data);
  heron__buf_free(&idx);
  return g->vec > 1 ? VAL_VEC : VAL_SCALAR;
}

/* The value of input ti at tile offset off for one reduction step: from
 * its pack, or read in place as a broadcast scalar (when the tensor does
 * not depend on the vector axis), a vector load, or a gather of the
 * lanes.  With vectors every value is a vector, so the micro-kernel's
 * multiply-adds all take vector operands, but for the AVX-512 broadcasts
 * passed by address to h_fmab.  Returns the VAL_* kind it wrote. */
static int input_value(gen *g, int ti, const int64_t *off, heron__buf *b) {
  if (g->packed[ti])
    return packed_value(g, ti, off, b);
  int depends_vec = g->vec > 1 && g->lin[ti][g->vaxis] != 0;
  if (!depends_vec) {
    if (g->fmab) {
      heron__buf cond = {0};
      guard_text(g, ti, off, &cond);
      int plain = !cond.len;
      heron__buf_free(&cond);
      if (plain) {
        guarded_read(g, ti, off, "&", "", "", b);
        return VAL_ADDR;
      }
    }
    if (g->bcv) {
      guarded_read(g, ti, off, "h_bcv(&", ")", "h_zero", b);
      return VAL_VEC;
    }
    if (g->vec > 1)
      heron__buf_puts(b, "h_set1(");
    scalar_elem(g, ti, off, b);
    if (g->vec > 1)
      heron__buf_puts(b, ")");
    return g->vec > 1 ? VAL_VEC : VAL_SCALAR;
  }
  if (contiguous_lanes(g, ti)) {
    guarded_read(g, ti, off, "h_ld(&", ")", "h_zero", b);
    return VAL_VEC;
  }
  if (g->masked && g->guard_axis[g->vaxis]) {
    /* The edge copy: the lanes inside the extent by one masked load. */
    g->guard_axis[g->vaxis] = 0;
    int contiguous = contiguous_lanes(g, ti);
    if (contiguous) {
      heron__buf close = {0};
      heron__buf_puts(&close, ", ");
      lanes_left_text(g, off, &close);
      heron__buf_puts(&close, ")");
      guarded_read(g, ti, off, "h_ldm(&", close.data, "h_zero", b);
      heron__buf_free(&close);
    }
    g->guard_axis[g->vaxis] = 1;
    if (contiguous)
      return VAL_VEC;
  }
  int64_t lane[HERON__MAX_AXES];
  memcpy(lane, off, sizeof lane);
  heron__buf_puts(b, "(h_vt){");
  for (int l = 0; l < g->vec; l++) {
    lane[g->vaxis] = off[g->vaxis] + l;
    if (l)
      heron__buf_puts(b, ", ");
    scalar_elem(g, ti, lane, b);
  }
  heron__buf_puts(b, "}");
  return VAL_VEC;
}

/* The local holding an expression of this reduction step, creating and
 * emitting it on first use: returns its number, or -1 out of memory. */
static int load_local(gen *g, const char *expr, int kind, int depth) {
  for (int i = 0; i < g->nloads; i++)
    if (strcmp(g->load_expr[i], expr) == 0)
      return i;
  if (g->nloads == g->cap_loads) {
    int cap = g->cap_loads ? 2 * g->cap_loads : 64;
    char **p = realloc(g->load_expr, (size_t)cap * sizeof *p);
    if (!p)
      return -1;
    g->load_expr = p;
    g->cap_loads = cap;
  }
  char *copy = strdup(expr);
  if (!copy)
    return -1;
  g->load_expr[g->nloads] = copy;
  heron__buf_printf(g->o, "%*sconst %s h_l%d = %s;\n", 2 * depth, "",
                    kind == VAL_ADDR  ? "float *const"
                    : kind == VAL_VEC ? "h_vt"
                                      : "float",
                    g->nloads, expr);
  return g->nloads++;
}

static void free_loads(gen *g) {
  for (int i = 0; i < g->nloads; i++)
    free(g->load_expr[i]);
  free(g->load_expr);
  g->load_expr = NULL;
  g->nloads = g->cap_loads = 0;
}

/* ---- the register tile ----------------------------------------------------
 */

/* Enumerates the points of the register tile (one per accumulator):
 * point p's offsets into off[].  The vector axis steps by vec.  Returns the
 * number of points. */
static int tile_points(const gen *g, int p, int64_t *off) {
  const heron__op *op = g->op;
  int count = 1;
  if (off)
    for (int a = 0; a < op->naxes; a++)
      off[a] = 0;
  /* The vector axis varies fastest, so the points of one row share every
   * other coordinate: a broadcast operand is used by one row of FMAs and
   * dies, as the register rule counts. */
  for (int i = -1; i < op->naxes; i++) {
    int a = i < 0 ? g->vaxis : op->naxes - 1 - i;
    if (a < 0 || (i >= 0 && a == g->vaxis) ||
        op->axes[a].kind != HERON__SPATIAL)
      continue;
    int64_t step = a == g->vaxis ? g->vec : 1;
    int64_t n = g->reg[a] / step;
    if (off)
      off[a] = (p % n) * step;
    p /= (int)n;
    count *= (int)n;
  }
  return count;
}

static void indent(const gen *g, int depth) {
  heron__buf_printf(g->o, "%*s", 2 * depth, "");
}

/* The constant element offsets already prefetched in one reduction step,
 * per input: a load within a cache line (64 bytes) of one of them is
 * covered by its prefetch. */
#define MAX_PREFETCH 64
typedef struct prefetched {
  int64_t at[HERON__MAX_TENSORS][MAX_PREFETCH];
  int n[HERON__MAX_TENSORS];
} prefetched;

/* After the load of input ti at tile point off: a prefetch of the address
 * that load reads `prefetch` steps of the innermost reduction loop later,
 * unless a prefetch of this step already covers its cache line or the
 * stream moves less than a line a step.  A packed
 * input's stream moves by its register block (rp elements) a step; one
 * read in place by its linear coefficient along the loop's axis.  The
 * address is integer arithmetic: past the edge of a tensor it is a
 * harmless prefetch (the instruction does not fault), never an invalid
 * pointer. */
static void emit_prefetch(gen *g, int ti, const int64_t *off, int depth,
                          prefetched *pf) {
  const heron__op *op = g->op;
  if (g->prefetch <= 0 || g->pf_axis < 0 || g->divided[ti])
    return;
  int64_t c, step;
  if (g->packed[ti]) {
    c = packed_pos(g, ti, off);
    step = g->rp[ti];
  } else {
    c = g->lin0[ti];
    for (int a = 0; a < op->naxes; a++)
      if (op->axes[a].kind == HERON__SPATIAL && op->axes[a].extent > 1)
        c += off[a] * g->lin[ti][a];
    step = g->lin[ti][g->pf_axis];
  }
  /* A stream that stays within a cache line for several steps (a packed
   * broadcast of 3 floats a step, a row read along the reduction) is
   * sequential, which hardware prefetchers follow; a prefetch every step
   * would only take load slots from the micro-kernel. */
  int64_t line = 64 / g->t->elem_bytes;
  if (step < line && step > -line)
    return;
  for (int i = 0; i < pf->n[ti]; i++)
    if (c - pf->at[ti][i] < line && pf->at[ti][i] - c < line)
      return;
  if (pf->n[ti] == MAX_PREFETCH)
    return;
  pf->at[ti][pf->n[ti]++] = c;
  long long bytes = (long long)(g->prefetch * step * g->t->elem_bytes);
  indent(g, depth);
  if (g->packed[ti]) {
    heron__buf_printf(g->o,
                      "__builtin_prefetch((const void *)((uintptr_t)(h_q%d + "
                      "h_k * %lld + %lld) + %lld));\n",
                      ti, (long long)g->rp[ti], (long long)c, bytes);
    return;
  }
  heron__buf e = {0};
  linear_text(g, g->lin[ti], g->lin0[ti], off, &e);
  heron__buf_printf(g->o,
                    "__builtin_prefetch((const void *)((uintptr_t)%s + "
                    "(uintptr_t)(%d * (%s) + %lld)));\n",
                    op->in[ti].name, g->t->elem_bytes, e.data, bytes);
  heron__buf_free(&e);
}

/* One reduction step: loads, then one multiply-add per accumulator
 * (h_a<p>, or h_s<p> for the scalar tail of an rvec tile). */
static int emit_step_into(gen *g, int npts, int depth, const char *acc) {
  const heron__op *op = g->op;
  int rc = HERON_OK;
  prefetched pf;
  memset(pf.n, 0, sizeof pf.n);
  /* Each value is loaded right before its first use: the vectors of the
   * first row stay live for the later rows, each row's broadcast dies with
   * its row. */
  for (int p = 0; p < npts && rc == HERON_OK; p++) {
    int64_t off[HERON__MAX_AXES];
    tile_points(g, p, off);
    int v[HERON__MAX_TENSORS], kind[HERON__MAX_TENSORS];
    for (int ti = 0; ti < op->ninputs; ti++) {
      heron__buf e = {0};
      kind[ti] = input_value(g, ti, off, &e);
      v[ti] = e.failed ? -1 : load_local(g, e.data, kind[ti], depth);
      heron__buf_free(&e);
      if (v[ti] < 0 || g->nloads > MAX_LOADS) {
        rc = HERON_ENOMEM;
        break;
      }
      emit_prefetch(g, ti, off, depth, &pf);
    }
    if (rc != HERON_OK)
      break;
    indent(g, depth);
    if (g->vec > 1 && op->ninputs == 2) {
      /* The micro-kernel's instruction: one fused multiply-add (a
       * broadcast passed by address: h_fmab, the vector first). */
      int b = kind[0] == VAL_ADDR ? 0 : kind[1] == VAL_ADDR ? 1 : -1;
      if (b >= 0)
        heron__buf_printf(g->o, "%s%d = h_fmab(h_l%d, h_l%d, %s%d);\n", acc, p,
                          v[1 - b], v[b], acc, p);
      else
        heron__buf_printf(g->o, "%s%d = h_fma(h_l%d, h_l%d, %s%d);\n", acc, p,
                          v[0], v[1], acc, p);
      continue;
    }
    heron__buf_printf(g->o, "%s%d +=", acc, p);
    for (int ti = 0; ti < op->ninputs; ti++)
      heron__buf_printf(g->o, "%s h_l%d", ti ? " *" : "", v[ti]);
    heron__buf_puts(g->o, ";\n");
  }
  free_loads(g);
  return rc;
}

static int emit_step(gen *g, int npts, int depth) {
  return emit_step_into(g, npts, depth, "h_a");
}

/* How a register tile reaches the output: the first reduction-outer step
 * stores, later ones add onto what earlier steps wrote, and the last one
 * (or the only one) also applies the fused epilogue. */
enum { ST_SET, ST_ADD, ST_ADD_EPI, ST_SET_EPI };

/* The epilogue of value `x` at tile point off: "+ bias" and ReLU; a bias
 * vector along the vector axis is loaded masked to `left` lanes when left
 * is given (a masked edge store). */
static void epilogue_text(const gen *g, const int64_t *off, const char *x,
                          const char *left, heron__buf *b) {
  const heron__op *op = g->op;
  heron__buf v = {0};
  heron__buf_printf(&v, "(%s)", x);
  if (op->epilogue & HERON__EPI_BIAS) {
    int bi = op->ninputs + 1;
    heron__buf e = {0};
    heron__buf_puts(&e, "bias[");
    linear_text(g, g->lin[bi], g->lin0[bi], off, &e);
    heron__buf_puts(&e, "]");
    heron__buf w = {0};
    if (g->vec > 1 && g->lin[bi][g->vaxis] != 0 && left)
      heron__buf_printf(&w, "(%s + h_ldm(&%s, %s))", v.data, e.data, left);
    else if (g->vec > 1 && g->lin[bi][g->vaxis] != 0)
      heron__buf_printf(&w, "(%s + h_ld(&%s))", v.data, e.data);
    else if (g->vec > 1)
      heron__buf_printf(&w, "(%s + h_set1(%s))", v.data, e.data);
    else
      heron__buf_printf(&w, "(%s + %s)", v.data, e.data);
    heron__buf_free(&e);
    heron__buf_free(&v);
    v = w;
  }
  if (op->epilogue & HERON__EPI_RELU)
    heron__buf_printf(b, g->vec > 1 ? "h_relu(%s)" : "h_relus(%s)", v.data);
  else
    heron__buf_puts(b, v.data);
  heron__buf_free(&v);
}

/* Output element text "C[...]" at tile point off, lane `lane` of it. */
static void out_elem(const gen *g, const int64_t *off, int lane,
                     heron__buf *b) {
  const int out = g->op->ninputs;
  int64_t o[HERON__MAX_AXES];
  memcpy(o, off, sizeof o);
  if (g->vaxis >= 0)
    o[g->vaxis] += lane;
  heron__buf_printf(b, "%s[", g->op->out.name);
  linear_text(g, g->lin[out], g->lin0[out], o, b);
  heron__buf_puts(b, "]");
}

/* The stores of register-tile points [from, to). */
static void emit_points(gen *g, int from, int to, int depth, int mode) {
  const int out = g->op->ninputs;
  /* Lanes along an axis that is not the output's contiguous one (a
   * convolution vectorized along its channels) lie a stride apart: they
   * are read as a gather and written lane by lane from a spill. */
  int strided = g->vec > 1 && g->lin[out][g->vaxis] != 1;
  for (int p = from; p < to; p++) {
    int64_t off[HERON__MAX_AXES];
    tile_points(g, p, off);
    heron__buf elem = {0}, prev = {0};
    out_elem(g, off, 0, &elem);
    if (!strided && g->vec > 1) {
      heron__buf_printf(&prev, "h_ld(&%s)", elem.data);
    } else if (!strided) {
      heron__buf_puts(&prev, elem.data);
    } else {
      heron__buf_puts(&prev, "(h_vt){");
      for (int l = 0; l < g->vec; l++) {
        if (l)
          heron__buf_puts(&prev, ", ");
        out_elem(g, off, l, &prev);
      }
      heron__buf_puts(&prev, "}");
    }
    heron__buf val = {0}, acc = {0};
    if (g->rvec && g->ragged[g->vaxis])
      heron__buf_printf(&acc, "(h_hsum(h_a%d) + h_s%d)", p, p);
    else if (g->rvec)
      heron__buf_printf(&acc, "h_hsum(h_a%d)", p);
    else
      heron__buf_printf(&acc, "h_a%d", p);
    if (mode == ST_ADD || mode == ST_ADD_EPI)
      heron__buf_printf(&acc, " + %s", prev.data);
    if (mode == ST_ADD_EPI || mode == ST_SET_EPI)
      epilogue_text(g, off, acc.data, NULL, &val);
    else
      heron__buf_puts(&val, acc.data);
    indent(g, depth);
    if (strided) {
      heron__buf_printf(g->o, "{\n");
      indent(g, depth + 1);
      heron__buf_printf(g->o, "float h_t[%d];\n", g->vec);
      indent(g, depth + 1);
      heron__buf_printf(g->o, "h_st(h_t, %s);\n", val.data);
      for (int l = 0; l < g->vec; l++) {
        heron__buf e = {0};
        out_elem(g, off, l, &e);
        indent(g, depth + 1);
        heron__buf_printf(g->o, "%s = h_t[%d];\n", e.data, l);
        heron__buf_free(&e);
      }
      indent(g, depth);
      heron__buf_puts(g->o, "}\n");
    } else if (g->vec > 1) {
      heron__buf_printf(g->o, "h_st(&%s, %s);\n", elem.data, val.data);
    } else {
      heron__buf_printf(g->o, "%s = %s;\n", elem.data, val.data);
    }
    heron__buf_free(&elem);
    heron__buf_free(&prev);
    heron__buf_free(&val);
    heron__buf_free(&acc);
  }
}

static void emit_store_edge(gen *g, int npts, int depth, int mode);

/* The stores of the register tile: every point, or in the edge copy only
 * those inside the extents. */
static void emit_store(gen *g, int npts, int depth, int mode, int edge) {
  /* An rvec tile's sums are scalars by the store. */
  int vec = g->vec;
  if (g->rvec)
    g->vec = 1;
  if (edge)
    emit_store_edge(g, npts, depth, mode);
  else
    emit_points(g, 0, npts, depth, mode);
  g->vec = vec;
}

/* The checks, against their extents, of the ragged spatial axes at tile
 * point off ("(i_b + 3) < 383 && ..."), the vector axis left out when
 * skip_vaxis: "" when the point lies inside on every ragged axis. */
static void inside_text(const gen *g, const int64_t *off, int skip_vaxis,
                        heron__buf *cond) {
  const heron__op *op = g->op;
  for (int a = 0; a < op->naxes; a++) {
    if (!g->ragged[a] || op->axes[a].kind != HERON__SPATIAL ||
        (skip_vaxis && a == g->vaxis))
      continue;
    below_extent(g, a, off, cond);
  }
}

/* One output element's new value in scalar code at tile point off:
 * x, then "+ previous" and the epilogue as `mode` says. */
static void scalar_value(const gen *g, const int64_t *off, const char *x,
                         int mode, heron__buf *b) {
  const heron__op *op = g->op;
  heron__buf v = {0};
  heron__buf_printf(&v, "(%s)", x);
  if (mode == ST_ADD || mode == ST_ADD_EPI) {
    heron__buf_puts(&v, " + ");
    out_elem(g, off, 0, &v);
  }
  int epi = mode == ST_ADD_EPI || mode == ST_SET_EPI;
  if (epi && (op->epilogue & HERON__EPI_BIAS)) {
    int bi = op->ninputs + 1;
    heron__buf_puts(&v, " + bias[");
    linear_text(g, g->lin[bi], g->lin0[bi], off, &v);
    heron__buf_puts(&v, "]");
  }
  if (epi && (op->epilogue & HERON__EPI_RELU))
    heron__buf_printf(b, "h_relus(%s)", v.data);
  else
    heron__buf_puts(b, v.data);
  heron__buf_free(&v);
}

/* The masked store of edge point p (at tile offset off) across the ragged
 * vector axis, the output's lanes contiguous: the previous value and a
 * bias along the vector axis are loaded under the same mask. */
static void emit_masked_point(gen *g, int p, const int64_t *off, int depth,
                              int mode) {
  heron__buf left = {0}, elem = {0}, acc = {0}, val = {0};
  lanes_left_text(g, off, &left);
  out_elem(g, off, 0, &elem);
  heron__buf_printf(&acc, "h_a%d", p);
  if (mode == ST_ADD || mode == ST_ADD_EPI)
    heron__buf_printf(&acc, " + h_ldm(&%s, %s)", elem.data, left.data);
  if (mode == ST_ADD_EPI || mode == ST_SET_EPI)
    epilogue_text(g, off, acc.data, left.data, &val);
  else
    heron__buf_puts(&val, acc.data);
  indent(g, depth);
  heron__buf_printf(g->o, "h_stm(&%s, %s, %s);\n", elem.data, val.data,
                    left.data);
  heron__buf_free(&left);
  heron__buf_free(&elem);
  heron__buf_free(&acc);
  heron__buf_free(&val);
}

/* The stores of an edge register tile: a point inside the extent of every
 * ragged axis but the vector one is stored as usual; across a ragged
 * vector axis the lanes inside the extent are stored with a mask where the
 * output's lanes are contiguous and the kernel has masks, else the
 * accumulator is spilled and they are stored one by one.  Points past an
 * edge are not stored. */
static void emit_store_edge(gen *g, int npts, int depth, int mode) {
  int lanes = g->vec > 1 && g->ragged[g->vaxis];
  int masked = lanes && g->masked && g->lin[g->op->ninputs][g->vaxis] == 1;
  for (int p = 0; p < npts; p++) {
    int64_t off[HERON__MAX_AXES];
    tile_points(g, p, off);
    heron__buf cond = {0};
    inside_text(g, off, lanes, &cond);
    int d = depth;
    if (cond.len) {
      indent(g, d++);
      heron__buf_printf(g->o, "if (%s) {\n", cond.data);
    }
    if (!lanes) {
      emit_points(g, p, p + 1, d, mode);
    } else if (masked) {
      emit_masked_point(g, p, off, d, mode);
    } else {
      indent(g, d);
      heron__buf_printf(g->o, "{\n");
      indent(g, d + 1);
      heron__buf_printf(g->o, "float h_t[%d];\n", g->vec);
      indent(g, d + 1);
      heron__buf_printf(g->o, "h_st(h_t, h_a%d);\n", p);
      for (int l = 0; l < g->vec; l++) {
        int64_t lane[HERON__MAX_AXES];
        memcpy(lane, off, sizeof lane);
        lane[g->vaxis] += l;
        heron__buf in = {0}, x = {0}, val = {0}, e = {0};
        int64_t k[HERON__MAX_AXES] = {0};
        k[g->vaxis] = 1;
        linear_text(g, k, 0, lane, &in);
        heron__buf_printf(&x, "h_t[%d]", l);
        scalar_value(g, lane, x.data, mode, &val);
        out_elem(g, lane, 0, &e);
        indent(g, d + 1);
        heron__buf_printf(g->o, "if ((%s) < %lld)\n", in.data,
                          (long long)g->op->axes[g->vaxis].extent);
        indent(g, d + 2);
        heron__buf_printf(g->o, "%s = %s;\n", e.data, val.data);
        heron__buf_free(&in);
        heron__buf_free(&x);
        heron__buf_free(&val);
        heron__buf_free(&e);
      }
      indent(g, d);
      heron__buf_puts(g->o, "}\n");
    }
    if (cond.len) {
      indent(g, depth);
      heron__buf_puts(g->o, "}\n");
    }
    heron__buf_free(&cond);
  }
}

/* ---- the loop nest --------------------------------------------------------
 */

/* Opens the loops of one level for the axes of `kind` (lengths > 1 only);
 * returns how many were opened. */
static int open_loops(gen *g, int kind, int level, int depth, int pragma) {
  const heron__op *op = g->op;
  int opened = 0, last = -1;
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == kind && g->len[a][level] > 1)
      last = a;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != kind || g->len[a][level] <= 1)
      continue;
    if (pragma && a == last) {
      indent(g, depth + opened);
      heron__buf_printf(g->o, "#pragma GCC unroll %d\n", pragma);
    }
    indent(g, depth + opened);
    const char *nm = op->axes[a].name;
    if (kind == HERON__REDUCE && level == 1 && g->bound_reduce &&
        g->ragged[a])
      /* What is left of the extent in this slice (reduce_bounds). */
      heron__buf_printf(g->o,
                        "for (int64_t %s_1 = 0; %s_1 < %s_n; %s_1++) {\n", nm,
                        nm, nm, nm);
    else
      heron__buf_printf(g->o,
                        "for (int64_t %s_%d = 0; %s_%d < %lld; %s_%d++) {\n",
                        nm, level, nm, level, (long long)g->len[a][level], nm,
                        level);
    opened++;
  }
  return opened;
}

static void close_loops(gen *g, int n, int depth) {
  for (int i = n - 1; i >= 0; i--) {
    indent(g, depth + i);
    heron__buf_puts(g->o, "}\n");
  }
}

/* "i_0 * 512 + i_1 * 64": the origin of axis a's register tile, from the
 * loop indices of the levels outside it. */
static void origin_text(const gen *g, int a, heron__buf *b) {
  size_t start = b->len;
  for (int l = 0; l < g->reg_from; l++) {
    if (g->len[a][l] <= 1)
      continue;
    int64_t stride = 1;
    for (int m = l + 1; m < HERON__CPU_SPATIAL_LEVELS; m++)
      stride *= g->len[a][m];
    heron__buf_printf(b, "%s%s_%d", b->len > start ? " + " : "",
                      g->op->axes[a].name, l);
    if (stride > 1)
      heron__buf_printf(b, " * %lld", (long long)stride);
  }
  if (b->len == start)
    heron__buf_puts(b, "0");
}

static void tile_origin(gen *g, int a, int depth) {
  heron__buf b = {0};
  origin_text(g, a, &b);
  indent(g, depth);
  heron__buf_printf(g->o, "const int64_t %s_b = %s;\n", g->op->axes[a].name,
                    b.data);
  heron__buf_free(&b);
}

/* The full index of every reduction axis inside the reduction-inner
 * loops. */
static void reduce_indices(gen *g, int depth) {
  const heron__op *op = g->op;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__REDUCE || op->axes[a].extent == 1)
      continue;
    const char *n = op->axes[a].name;
    int64_t inner = g->len[a][1];
    indent(g, depth);
    if (g->len[a][0] > 1 && inner > 1)
      heron__buf_printf(g->o, "const int64_t %s = %s_0 * %lld + %s_1;\n", n, n,
                        (long long)inner, n);
    else if (g->len[a][0] > 1)
      heron__buf_printf(g->o, "const int64_t %s = %s_0;\n", n, n);
    else
      heron__buf_printf(g->o, "const int64_t %s = %s_1;\n", n, n);
  }
}

/* In the reduction-outer loops: <r>_n, the steps of a ragged reduction
 * axis' slice that lie inside its extent (all but the last slice's are
 * full). */
static void reduce_bounds(gen *g, int depth) {
  const heron__op *op = g->op;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__REDUCE || !g->ragged[a])
      continue;
    const char *n = op->axes[a].name;
    int64_t inner = g->len[a][1], outer = g->len[a][0];
    int64_t last = op->axes[a].extent - (outer - 1) * inner;
    indent(g, depth);
    if (outer > 1)
      heron__buf_printf(g->o,
                        "const int64_t %s_n = %s_0 < %lld ? %lld : %lld;\n", n,
                        n, (long long)(outer - 1), (long long)inner,
                        (long long)last);
    else
      heron__buf_printf(g->o, "const int64_t %s_n = %lld;\n", n,
                        (long long)last);
  }
}

/* ---- packing (Add-Multi-Level-SPM) ---------------------------------------
 *
 * A packed input is copied, at each step of the reduction-outer loops, for
 * the thread's whole tile into a per-thread buffer laid out as
 *
 *   [level-1 (and, at acc_at 0, level-2) tile indices of the spatial axes
 *    it reads] [reduction-inner step] [register-tile point]
 *
 * so the micro-kernel reads it with one pointer per register tile (h_q),
 * one step counter (h_k) and constant offsets. */

/* The register layout of every packed input and the reduction-inner step
 * count. */
static void setup_packing(gen *g) {
  const heron__op *op = g->op;
  g->ki = 1;
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == HERON__REDUCE)
      g->ki *= g->len[a][1];
  for (int ti = 0; ti < op->ninputs; ti++) {
    g->packed[ti] = (int)g->cfg[g->t->pack[ti]];
    g->prepacked[ti] = g->packed[ti] && (op->prepack >> ti & 1u);
    memset(g->rstride[ti], 0, sizeof g->rstride[ti]);
    const heron__tensor *ts = &op->in[ti];
    int *order = g->rorder[ti], n = 0;
    for (int a = 0; a < op->naxes; a++)
      if (op->axes[a].kind == HERON__SPATIAL && op->axes[a].extent > 1 &&
          heron__tensor_reads(ts, a) && a != g->vaxis)
        order[n++] = a;
    if (g->vaxis >= 0 && heron__tensor_reads(ts, g->vaxis))
      order[n++] = g->vaxis;
    int64_t stride = 1;
    for (int i = n - 1; i >= 0; i--) {
      g->rstride[ti][order[i]] = stride;
      stride *= g->reg[order[i]];
    }
    g->nrorder[ti] = n;
    g->rp[ti] = stride;
  }
}

/* Whether flag[ti] is set for some input. */
static int any_input(const gen *g, const int *flag) {
  for (int ti = 0; ti < g->op->ninputs; ti++)
    if (flag[ti])
      return 1;
  return 0;
}

static int any_packed(const gen *g) { return any_input(g, g->packed); }

/* Whether the kernel has per-thread buffers: packs made in the call or
 * the output's stage (slot ninputs of h_keep). */
static int any_buffer(const gen *g) {
  for (int ti = 0; ti < g->op->ninputs; ti++)
    if (g->packed[ti] && !g->prepacked[ti])
      return 1;
  return g->stage;
}

/* Whether some input is packed ahead of the calls. */
static int any_prepacked(const gen *g) { return any_input(g, g->prepacked); }

/* ---- the zero halo ---------------------------------------------------
 *
 * A padded convolution's border tiles read outside the input, and so do
 * the cut-short tiles of a ragged axis.  Read in place, each such read
 * needs a range check, and every tile touching a border (half the tiles
 * of a 3-D convolution over 8 x 56 x 56 with 8-wide tiles) would run a
 * guarded copy of the micro-kernel, 0.8x the speed of the plain one.  An
 * unpacked input with range-checked dimensions is copied, at each call,
 * into a buffer whose every dimension is widened to the indices the tiles
 * reach (over the rounded-up covers of all axes), zeros outside the
 * input: the zeros are written once, when the buffer is made (it is kept
 * across calls, as the packs are), each call copies the input's rows in.
 * Every read is then in range and unguarded.  A transposed convolution's
 * divided dimensions keep their checks (no halo). */
static void setup_halo(gen *g) {
  const heron__op *op = g->op;
  int64_t last[HERON__MAX_AXES];
  for (int a = 0; a < op->naxes; a++)
    last[a] = g->cover[a] - 1;
  for (int ti = 0; ti < op->ninputs; ti++) {
    const heron__tensor *ts = &op->in[ti];
    int any = 0;
    for (int d = 0; d < ts->ndim; d++)
      any |= g->guard[ti][d];
    g->halo[ti] = 0;
    if (!any || g->packed[ti] || g->divided[ti] || !ts->bounded)
      continue;
    g->halo[ti] = 1;
    int64_t stride = 1;
    memset(g->lin[ti], 0, sizeof g->lin[ti]);
    g->lin0[ti] = 0;
    for (int d = ts->ndim - 1; d >= 0; d--) {
      const heron__affine *ix = &ts->index[d];
      int64_t lo, hi;
      index_bounds(op, ix, last, &lo, &hi);
      if (lo > 0)
        lo = 0;
      if (hi < ts->dims[d] - 1)
        hi = ts->dims[d] - 1;
      g->hshift[ti][d] = -lo;
      g->hdims[ti][d] = hi - lo + 1;
      for (int a = 0; a < op->naxes; a++)
        g->lin[ti][a] += stride * ix->coef[a];
      g->lin0[ti] += stride * (ix->offset - lo);
      g->guard[ti][d] = 0;
      stride *= g->hdims[ti][d];
    }
    g->helems[ti] = stride;
  }
}

static int any_halo(const gen *g) { return any_input(g, g->halo); }

/* Whether the kernel keeps buffers across calls (per-thread packs and
 * stage, haloed copies), which a call owns through h_busy. */
static int any_kept(const gen *g) { return any_buffer(g) || any_halo(g); }

/* Emits the haloed copies: h_hc<ti> (kept, its zeros written when made)
 * gets the input's rows, in parallel, and the input's name then points at
 * it. */
static void emit_halo(gen *g) {
  const heron__op *op = g->op;
  for (int ti = 0; ti < op->ninputs; ti++) {
    if (!g->halo[ti])
      continue;
    const heron__tensor *ts = &op->in[ti];
    int nd = ts->ndim;
    int64_t row = ts->dims[nd - 1], rows = 1;
    for (int d = 0; d < nd - 1; d++)
      rows *= ts->dims[d];
    int64_t bytes = (g->helems[ti] * 4 + 63) / 64 * 64;
    heron__buf_printf(g->o,
                      "  float *restrict h_hc%d = h_halo(h_own ? "
                      "&h_halo_keep[%d] : 0, %lld);\n"
                      "  if (!h_hc%d)\n    __builtin_trap();\n"
                      "#pragma omp parallel for schedule(static)\n"
                      "  for (int64_t h_r = 0; h_r < %lld; h_r++) {\n"
                      "    int64_t h_x = h_r, h_o = %lld;\n",
                      ti, ti, (long long)bytes, ti, (long long)rows,
                      (long long)g->hshift[ti][nd - 1]);
    int64_t stride = g->hdims[ti][nd - 1];
    for (int d = nd - 2; d >= 0; d--) {
      heron__buf_printf(g->o,
                        "    h_o += (h_x %% %lld + %lld) * %lld;\n"
                        "    h_x /= %lld;\n",
                        (long long)ts->dims[d], (long long)g->hshift[ti][d],
                        (long long)stride, (long long)ts->dims[d]);
      stride *= g->hdims[ti][d];
    }
    heron__buf_printf(
        g->o,
        "    __builtin_memcpy(h_hc%d + h_o, h_src%d + h_r * %lld, "
        "%lld);\n  }\n"
        "  const float *restrict %s = h_hc%d;\n",
        ti, ti, (long long)row, (long long)(row * 4), ts->name, ti);
  }
}

/* The spatial axes of input ti's pack blocks, with their levels, in the
 * order of the compute loops (level-major, then op order): their loop
 * indices number the blocks. */
static int block_loops(const gen *g, int ti, int *axis, int *level) {
  const heron__op *op = g->op;
  int n = 0;
  for (int l = 1; l < g->reg_from; l++)
    for (int a = 0; a < op->naxes; a++)
      if (op->axes[a].kind == HERON__SPATIAL && g->len[a][l] > 1 &&
          heron__tensor_reads(tensor_at(g, ti), a)) {
        axis[n] = a;
        level[n] = l;
        n++;
      }
  return n;
}

/* Emits the copy of input ti's tile into `dst` (inside the
 * reduction-outer loops): h_pk<ti> in the kernel, the tile's block of the
 * whole packed tensor in heron_prepack. */
static void emit_pack(gen *g, int ti, int depth, const char *dst) {
  const heron__op *op = g->op;
  const heron__tensor *ts = &op->in[ti];
  indent(g, depth);
  heron__buf_printf(g->o, "{ /* pack %s */\n", ts->name);
  int d = depth + 1;
  indent(g, d);
  heron__buf_printf(g->o, "float *restrict h_p = %s;\n", dst);
  int axis[2 * HERON__MAX_AXES], level[2 * HERON__MAX_AXES];
  int nb = block_loops(g, ti, axis, level);
  for (int i = 0; i < nb; i++) {
    const char *nm = op->axes[axis[i]].name;
    int l = level[i];
    indent(g, d++);
    heron__buf_printf(g->o,
                      "for (int64_t %s_%d = 0; %s_%d < %lld; %s_%d++) {\n", nm,
                      l, nm, l, (long long)g->len[axis[i]][l], nm, l);
  }
  int nr = open_loops(g, HERON__REDUCE, 1, d, 0);
  d += nr;
  reduce_indices(g, d);
  /* The register-tile points, vector axis innermost (rstride order). */
  const int *order = g->rorder[ti];
  int n = g->nrorder[ti];
  int nreg = 0;
  for (int i = 0; i < n; i++) {
    const char *nm = op->axes[order[i]].name;
    if (g->reg[order[i]] <= 1)
      continue;
    indent(g, d + nreg);
    heron__buf_printf(g->o, "for (int64_t %s_r = 0; %s_r < %lld; %s_r++) {\n",
                      nm, nm, (long long)g->reg[order[i]], nm);
    nreg++;
  }
  d += nreg;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__SPATIAL || op->axes[a].extent == 1 ||
        !heron__tensor_reads(ts, a))
      continue;
    heron__buf o = {0};
    origin_text(g, a, &o);
    if (g->reg[a] > 1)
      heron__buf_printf(&o, " + %s_r", op->axes[a].name);
    indent(g, d);
    heron__buf_printf(g->o, "const int64_t %s_b = %s;\n", op->axes[a].name,
                      o.data);
    heron__buf_free(&o);
  }
  /* Zeros past the edge of every ragged axis. */
  int64_t zero[HERON__MAX_AXES] = {0};
  memcpy(g->guard_axis, g->ragged, sizeof g->guard_axis);
  indent(g, d);
  heron__buf_puts(g->o, "*h_p++ = ");
  scalar_elem(g, ti, zero, g->o);
  heron__buf_puts(g->o, ";\n");
  memset(g->guard_axis, 0, sizeof g->guard_axis);
  d -= nreg;
  close_loops(g, nreg, d);
  d -= nr;
  close_loops(g, nr, d);
  for (int i = nb - 1; i >= 0; i--) {
    indent(g, --d);
    heron__buf_puts(g->o, "}\n");
  }
  indent(g, depth);
  heron__buf_puts(g->o, "}\n");
}

/* " + j_1 * 4608 + ...": the offset of the current block of tensor ti's
 * per-thread buffer (a pack, or the output's stage), numbered by the block
 * loops' indices, blocks of `block` floats. */
static void block_offset_text(const gen *g, int ti, int64_t block,
                              heron__buf *b) {
  int axis[2 * HERON__MAX_AXES], level[2 * HERON__MAX_AXES];
  int nb = block_loops(g, ti, axis, level);
  int64_t stride = block;
  for (int i = nb - 1; i >= 0; i--) {
    heron__buf_printf(b, " + %s_%d * %lld", g->op->axes[axis[i]].name,
                      level[i], (long long)stride);
    stride *= g->len[axis[i]][level[i]];
  }
}

/* In the compute nest, at a register tile: h_q<ti> points at the tile's
 * block of every packed input. */
static void emit_pack_pointers(gen *g, int depth) {
  const heron__op *op = g->op;
  for (int ti = 0; ti < op->ninputs; ti++) {
    if (!g->packed[ti])
      continue;
    heron__buf b = {0};
    block_offset_text(g, ti, g->ki * g->rp[ti], &b);
    indent(g, depth);
    heron__buf_printf(g->o, "const float *restrict h_q%d = h_pk%d%s;\n", ti, ti,
                      b.len ? b.data : "");
    heron__buf_free(&b);
  }
}

/* Inside the reduction-inner loops: h_k, the flattened step. */
static void emit_step_index(gen *g, int depth) {
  const heron__op *op = g->op;
  if (g->ki <= 1 || !any_packed(g))
    return;
  heron__buf b = {0};
  int64_t stride = 1;
  for (int a = op->naxes - 1; a >= 0; a--) {
    if (op->axes[a].kind != HERON__REDUCE || g->len[a][1] <= 1)
      continue;
    heron__buf_printf(&b, "%s%s_1", b.len ? " + " : "", op->axes[a].name);
    if (stride > 1)
      heron__buf_printf(&b, " * %lld", (long long)stride);
    stride *= g->len[a][1];
  }
  indent(g, depth);
  heron__buf_printf(g->o, "const int64_t h_k = %s;\n", b.data);
  heron__buf_free(&b);
}

/* float *restrict <name> = the kept buffer of h_keep slot `slot` (made on
 * first use) or a new one, of `elems` floats rounded up to 64 bytes; a
 * failed allocation traps. */
static void emit_take(gen *g, int depth, const char *name, int slot,
                      int64_t elems) {
  int64_t bytes = (elems * 4 + 63) / 64 * 64;
  indent(g, depth);
  heron__buf_printf(g->o,
                    "float *restrict %s = h_take(h_kept ? "
                    "&h_keep[%d][h_tn] : 0, %lld);\n",
                    name, slot, (long long)(bytes ? bytes : 64));
  indent(g, depth);
  heron__buf_printf(g->o, "if (!%s)\n", name);
  indent(g, depth + 1);
  heron__buf_puts(g->o, "__builtin_trap();\n");
}

/* Frees buffer <name> when it was not a kept one. */
static void emit_release(gen *g, int depth, const char *name) {
  indent(g, depth);
  heron__buf_puts(g->o, "if (!h_kept)\n");
  indent(g, depth + 1);
  heron__buf_printf(g->o, "free(%s);\n", name);
}

/* Per-thread pack buffers, kept across calls: each OpenMP thread (up to
 * H_KEEP of them) takes its buffer from h_keep, made on its first call and
 * freed when the kernel is unloaded, so that a call no longer allocates and
 * page-faults its packs.  A call made while another is running (from
 * another host thread) does not own the kept buffers and allocates its own
 * (h_own).  A failed allocation traps, which the harness records as a
 * runtime error. */
static void emit_pack_alloc(gen *g, int depth) {
  if (!any_buffer(g))
    return;
  indent(g, depth);
  heron__buf_puts(g->o, "const int h_tn = omp_get_thread_num();\n");
  indent(g, depth);
  heron__buf_puts(g->o, "const int h_kept = h_own && h_tn < H_KEEP;\n");
  for (int ti = 0; ti < g->op->ninputs; ti++) {
    if (!g->packed[ti] || g->prepacked[ti])
      continue;
    char name[16];
    snprintf(name, sizeof name, "h_pk%d", ti);
    emit_take(g, depth, name, ti, g->cfg[g->t->pack_elems[ti]]);
  }
  if (g->stage)
    emit_take(g, depth, "h_stg", g->op->ninputs, g->cfg[g->t->stage_elems]);
}

static void emit_pack_free(gen *g, int depth) {
  for (int ti = 0; ti < g->op->ninputs; ti++)
    if (g->packed[ti] && !g->prepacked[ti]) {
      char name[16];
      snprintf(name, sizeof name, "h_pk%d", ti);
      emit_release(g, depth, name);
    }
  if (g->stage)
    emit_release(g, depth, "h_stg");
}

/* The kept pack buffers' storage, their release at unload, and h_take. */
static void emit_pack_keep(gen *g) {
  if (!any_kept(g))
    return;
  heron__buf_puts(g->o, "static int h_busy; /* a call owns the kept buffers "
                        "*/\n");
  if (any_buffer(g)) {
    int slots = g->op->ninputs + (g->stage ? 1 : 0);
    heron__buf_printf(
        g->o,
        "/* Pack buffers kept across calls, per input and OpenMP thread. */\n"
        "#define H_KEEP 256\n"
        "static float *h_keep[%d][H_KEEP];\n"
        "__attribute__((destructor)) static void h_release(void) {\n"
        "  for (int i = 0; i < %d; i++)\n"
        "    for (int t = 0; t < H_KEEP; t++)\n"
        "      free(h_keep[i][t]);\n}\n"
        "/* The kept buffer of *slot (made on first use), or a new one when\n"
        " * slot is NULL. */\n"
        "static float *h_take(float **slot, size_t bytes) {\n"
        "  if (!slot)\n    return aligned_alloc(64, bytes);\n"
        "  if (!*slot)\n    *slot = aligned_alloc(64, bytes);\n"
        "  return *slot;\n}\n\n",
        slots, slots);
  }
  if (any_halo(g))
    heron__buf_printf(
        g->o,
        "/* Zero-haloed input copies kept across calls, per input. */\n"
        "static float *h_halo_keep[%d];\n"
        "__attribute__((destructor)) static void h_halo_release(void) {\n"
        "  for (int i = 0; i < %d; i++)\n"
        "    free(h_halo_keep[i]);\n}\n"
        "/* The kept copy of *slot, or a new one when slot is NULL; zeroed\n"
        " * when made (the halo stays zero: calls copy only the input). */\n"
        "static float *h_halo(float **slot, size_t bytes) {\n"
        "  if (slot && *slot)\n    return *slot;\n"
        "  float *p = aligned_alloc(64, bytes);\n"
        "  if (p)\n    __builtin_memset(p, 0, bytes);\n"
        "  if (slot)\n    *slot = p;\n"
        "  return p;\n}\n\n",
        g->op->ninputs, g->op->ninputs);
}

/* ---- inputs packed ahead of the calls (prepack) -------------------------
 *
 * A prepacked input's whole packed copy is the per-call packs of every
 * thread tile and reduction-outer step laid end to end:
 *
 *   [level-0 index of each spatial axis it reads] [reduction-outer step]
 *   [the pack block the kernel would have made there]
 *
 * heron_prepack writes it once with the kernel's own pack loops; the
 * kernel points h_pk<ti> at the block of its tile and step. */

/* The loops numbering input ti's blocks, outermost first: the level-0
 * loops of the spatial axes it reads, then the reduction-outer loops
 * (only those longer than 1).  Their count. */
static int prepack_loops(const gen *g, int ti, int *axis) {
  const heron__op *op = g->op;
  int n = 0;
  for (int k = 0; k < 2; k++)
    for (int a = 0; a < op->naxes; a++) {
      int spatial = op->axes[a].kind == HERON__SPATIAL;
      if (spatial != (k == 0) || g->len[a][0] <= 1 ||
          (spatial && !heron__tensor_reads(tensor_at(g, ti), a)))
        continue;
      axis[n++] = a;
    }
  return n;
}

/* Floats in one pack block of input ti: the block loops' tiles times the
 * reduction-inner steps times the register tile's points. */
static int64_t pack_block(const gen *g, int ti) {
  int axis[2 * HERON__MAX_AXES], level[2 * HERON__MAX_AXES];
  int nb = block_loops(g, ti, axis, level);
  int64_t n = g->ki * g->rp[ti];
  for (int i = 0; i < nb; i++)
    n *= g->len[axis[i]][level[i]];
  return n;
}

/* Floats in input ti's whole packed copy. */
static int64_t prepacked_elems(const gen *g, int ti) {
  int axis[2 * HERON__MAX_AXES];
  int n = prepack_loops(g, ti, axis);
  int64_t e = pack_block(g, ti);
  for (int i = 0; i < n; i++)
    e *= g->len[axis[i]][0];
  return e;
}

/* " + (co_0 * 6 + ci_0) * 73728": the offset of the current block in input
 * ti's packed copy (nothing when it has one block). */
static void prepacked_offset_text(const gen *g, int ti, heron__buf *b) {
  int axis[2 * HERON__MAX_AXES];
  int n = prepack_loops(g, ti, axis);
  if (!n)
    return;
  /* Horner's rule, outermost loop first: ((a_0 * L + b_0) * M + c_0). */
  heron__buf_puts(b, " + ");
  for (int i = 1; i < n; i++)
    heron__buf_puts(b, "(");
  for (int i = 0; i < n; i++) {
    const char *nm = g->op->axes[axis[i]].name;
    if (i == 0)
      heron__buf_printf(b, "%s_0", nm);
    else
      heron__buf_printf(b, " * %lld + %s_0)", (long long)g->len[axis[i]][0],
                        nm);
  }
  heron__buf_printf(b, " * %lld", (long long)pack_block(g, ti));
}

/* heron_prepacked_elems and heron_prepack, after the kernel, when some
 * input is prepacked. */
static void emit_prepack(gen *g) {
  if (!any_prepacked(g))
    return;
  const heron__op *op = g->op;
  heron__buf_puts(g->o,
                  "\n/* Inputs packed once, ahead of the calls (prepack): "
                  "heron_kernel takes\n"
                  " * input i as heron_prepack(i, input, copy) left it, in a "
                  "buffer of\n"
                  " * heron_prepacked_elems(i) floats; 0 for an input taken "
                  "as it is. */\n"
                  "int64_t heron_prepacked_elems(int input);\n"
                  "int64_t heron_prepacked_elems(int input) {\n"
                  "  switch (input) {\n");
  for (int ti = 0; ti < op->ninputs; ti++)
    if (g->prepacked[ti])
      heron__buf_printf(g->o, "  case %d:\n    return %lldLL;\n", ti,
                        (long long)prepacked_elems(g, ti));
  heron__buf_puts(g->o, "  default:\n    return 0;\n  }\n}\n\n"
                        "void heron_prepack(int input, const void *src, "
                        "void *dst);\n"
                        "void heron_prepack(int input, const void *src, "
                        "void *dst) {\n");
  for (int ti = 0; ti < op->ninputs; ti++) {
    if (!g->prepacked[ti])
      continue;
    const char *nm = op->in[ti].name;
    heron__buf_printf(g->o,
                      "  if (input == %d) {\n"
                      "    const float *restrict %s = (const float *)src;\n"
                      "    float *restrict h_dst = (float *)dst;\n",
                      ti, nm);
    int axis[2 * HERON__MAX_AXES];
    int n = prepack_loops(g, ti, axis);
    int d = 2;
    for (int i = 0; i < n; i++) {
      const char *an = op->axes[axis[i]].name;
      indent(g, d++);
      heron__buf_printf(g->o,
                        "for (int64_t %s_0 = 0; %s_0 < %lld; %s_0++) {\n", an,
                        an, (long long)g->len[axis[i]][0], an);
    }
    heron__buf b = {0};
    heron__buf_puts(&b, "h_dst");
    prepacked_offset_text(g, ti, &b);
    emit_pack(g, ti, d, b.data ? b.data : "h_dst");
    heron__buf_free(&b);
    for (int i = n - 1; i >= 0; i--) {
      indent(g, --d);
      heron__buf_puts(g->o, "}\n");
    }
    heron__buf_puts(g->o, "  }\n");
  }
  heron__buf_puts(g->o, "}\n");
}

static void emit_header(gen *g, const heron_space *sp) {
  const heron__op *op = g->op;
  heron__buf *o = g->o;
  heron__buf_printf(o, "/* Generated by Heron-C: %s (", op->name);
  for (int i = 0; i < op->nshape; i++)
    heron__buf_printf(o, "%s%lld", i ? "," : "", (long long)op->shape[i]);
  heron__buf_puts(o, ") fp32, cpu template.\n * config:");
  for (int i = 0; i < heron_space_nknobs(sp); i++) {
    int v = heron_space_knob(sp, i);
    heron__buf_printf(o, "%s %s = %lld", i ? "," : "",
                      heron_space_var_name(sp, v), (long long)g->cfg[v]);
  }
  heron__buf_printf(o,
                    "\n * derived: fused = %lld, acc.floats = %lld, "
                    "acc.vecs = %lld\n */\n",
                    (long long)g->cfg[g->t->fused],
                    (long long)g->cfg[g->t->acc_floats],
                    (long long)g->cfg[g->t->acc_vecs]);
  heron__buf_puts(o, "#include <stdint.h>\n#include <stdlib.h>\n");
  if (any_buffer(g))
    heron__buf_puts(o, "#include <omp.h>\n");
  if (g->vec > 1 && g->fma)
    heron__buf_puts(o, "#include <immintrin.h>\n");
  heron__buf_puts(o, "\n");
  if (g->vec > 1) {
    /* The micro-kernel's types: the ISA's own vector type and FMA
     * intrinsic where there is one (Tensorize), GCC vector extensions
     * otherwise.  Loads and stores go through memcpy, which compiles to
     * unaligned vector moves. */
    if (g->fma) {
      const char *w = g->vec == 16 ? "512" : "256";
      if (g->fma_asm)
        /* AVX2: the multiply-add as one instruction on its accumulator's
         * own register ("+v": GCC neither picks the 132/213 forms that
         * move accumulators between registers nor folds a weight load
         * into every use), and the pinned broadcast (bcast_pinned). */
        heron__buf_printf(
            o,
            "typedef __m256 h_vt;\n"
            "static inline h_vt h_fma(h_vt a, h_vt b, h_vt c) {\n"
            "  __asm__(\"vfmadd231ps %%2, %%1, %%0\" : \"+v\"(c) : \"v\"(a), "
            "\"v\"(b));\n"
            "  return c;\n}\n"
            "static inline h_vt h_bcv(const float *p) {\n"
            "  h_vt r;\n"
            "  __asm__ volatile(\"vbroadcastss %%1, %%0\" : \"=v\"(r) : "
            "\"m\"(*p));\n"
            "  return r;\n}\n"
            "#define h_set1(x) _mm256_set1_ps(x)\n");
      else
        heron__buf_printf(o,
                          "typedef __m%s h_vt;\n"
                          "#define h_fma(a, b, c) _mm%s_fmadd_ps(a, b, c)\n"
                          "#define h_set1(x) _mm%s_set1_ps(x)\n",
                          w, w, w);
      if (g->fmab)
        heron__buf_puts(
            o, "/* c + w * (*p in every lane): the broadcast embedded. */\n"
               "static inline h_vt h_fmab(h_vt w, const float *p, h_vt c) {\n"
               "  __asm__(\"vfmadd231ps %2%{1to16%}, %1, %0\" : \"+v\"(c) : "
               "\"v\"(w), \"m\"(*p));\n"
               "  return c;\n}\n");
    } else {
      heron__buf_printf(o,
                        "typedef float h_vt __attribute__((vector_size(%d)));\n"
                        "#define h_fma(a, b, c) ((a) * (b) + (c))\n"
                        "#define h_set1(x) (h_zero + (x))\n",
                        4 * g->vec);
    }
    heron__buf_printf(
        o,
        "typedef int32_t h_it __attribute__((vector_size(%d)));\n"
        "static const h_vt h_zero = {0};\n"
        "static inline h_vt h_ld(const float *p) {\n"
        "  h_vt v;\n  __builtin_memcpy(&v, p, sizeof v);\n"
        "  return v;\n}\n"
        "static inline void h_st(float *p, h_vt v) {\n"
        "  __builtin_memcpy(p, &v, sizeof v);\n}\n"
        "/* ReLU lane by lane: the lanes where v > 0 keep their bits. */\n"
        "static inline h_vt h_relu(h_vt v) {\n"
        "  return (h_vt)((h_it)(v > h_zero) & (h_it)v);\n}\n\n",
        4 * g->vec);
    if (g->fma && !g->rvec && g->vec == 16)
      heron__buf_puts(
          o, "/* The first n lanes (none for n <= 0, all for n >= 16). */\n"
             "static inline __mmask16 h_mask(int64_t n) {\n"
             "  return n >= 16 ? (__mmask16)0xffff\n"
             "         : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);\n"
             "}\n"
             "static inline h_vt h_ldm(const float *p, int64_t n) {\n"
             "  return _mm512_maskz_loadu_ps(h_mask(n), p);\n}\n"
             "static inline void h_stm(float *p, h_vt v, int64_t n) {\n"
             "  _mm512_mask_storeu_ps(p, h_mask(n), v);\n}\n\n");
    else if (g->fma && !g->rvec)
      heron__buf_puts(
          o, "/* The first n lanes (none for n <= 0, all for n >= 8); masked\n"
             " * lanes are neither read nor written, so never fault. */\n"
             "static inline __m256i h_mask(int64_t n) {\n"
             "  const int c = n < 0 ? 0 : n > 8 ? 8 : (int)n;\n"
             "  return _mm256_cmpgt_epi32(_mm256_set1_epi32(c),\n"
             "                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, "
             "6, 7));\n}\n"
             "static inline h_vt h_ldm(const float *p, int64_t n) {\n"
             "  return _mm256_maskload_ps(p, h_mask(n));\n}\n"
             "static inline void h_stm(float *p, h_vt v, int64_t n) {\n"
             "  _mm256_maskstore_ps(p, h_mask(n), v);\n}\n\n");
    if (g->rvec)
      heron__buf_printf(o,
                        "/* The sum of a vector's lanes. */\n"
                        "static inline float h_hsum(h_vt v) {\n"
                        "  float t[%d], s = 0.0f;\n"
                        "  __builtin_memcpy(t, &v, sizeof t);\n"
                        "  for (int l = 0; l < %d; l++)\n"
                        "    s += t[l];\n"
                        "  return s;\n}\n\n",
                        g->vec, g->vec);
  }
  if (g->op->epilogue & HERON__EPI_RELU)
    heron__buf_puts(o, "static inline float h_relus(float v) {\n"
                       "  return v > 0.0f ? v : 0.0f;\n}\n\n");
  emit_pack_keep(g);
  heron__buf_puts(o, "void heron_kernel(void *const *bufs);\n"
                     "void heron_kernel(void *const *bufs) {\n");
  if (any_kept(g))
    heron__buf_puts(o, "  const int h_own = !__atomic_exchange_n(&h_busy, 1, "
                       "__ATOMIC_ACQUIRE);\n");
  for (int ti = 0; ti < heron__op_nbufs(op); ti++) {
    const heron__tensor *ts = tensor_at(g, ti);
    const char *cst = ti != op->ninputs ? "const " : "";
    if (ti < op->ninputs && g->halo[ti])
      heron__buf_printf(o,
                        "  const float *restrict h_src%d = (const float "
                        "*)bufs[%d];\n",
                        ti, ti);
    else
      heron__buf_printf(o, "  %sfloat *restrict %s = (%sfloat *)bufs[%d];\n",
                        cst, ts->name, cst, ti);
  }
  emit_halo(g);
}

/* The parallel loop over the fused level-0 tiles, decomposed row-major into
 * the level-0 index of every spatial axis. */
/* The parallel loop over the fused level-0 tiles, decomposed row-major into
 * the level-0 index of every spatial axis.  With packs the parallel region
 * opens first, so each thread allocates its buffers once.  Returns the
 * number of braces to close. */
static int emit_parallel(gen *g, int depth) {
  const heron__op *op = g->op;
  int64_t fused = g->cfg[g->t->fused];
  int packs = any_buffer(g);
  if (fused <= 1) {
    emit_pack_alloc(g, depth);
    return 0;
  }
  if (packs) {
    heron__buf_puts(g->o, "#pragma omp parallel\n");
    indent(g, depth);
    heron__buf_puts(g->o, "{\n");
    emit_pack_alloc(g, depth + 1);
    heron__buf_puts(g->o, "#pragma omp for schedule(static)\n");
    depth++;
  } else {
    heron__buf_puts(g->o, "#pragma omp parallel for schedule(static)\n");
  }
  indent(g, depth);
  heron__buf_printf(g->o, "for (int64_t h_f = 0; h_f < %lld; h_f++) {\n",
                    (long long)fused);
  indent(g, depth + 1);
  heron__buf_puts(g->o, "int64_t h_r = h_f;\n");
  for (int a = op->naxes - 1; a >= 0; a--) {
    if (op->axes[a].kind != HERON__SPATIAL || g->len[a][0] <= 1)
      continue;
    indent(g, depth + 1);
    heron__buf_printf(g->o, "const int64_t %s_0 = h_r %% %lld;\n",
                      op->axes[a].name, (long long)g->len[a][0]);
    indent(g, depth + 1);
    heron__buf_printf(g->o, "h_r /= %lld;\n", (long long)g->len[a][0]);
  }
  indent(g, depth + 1);
  heron__buf_puts(g->o, "(void)h_r;\n");
  return packs ? 2 : 1;
}

/* Closes what emit_parallel opened and frees the packs. */
static void close_parallel(gen *g, int opened, int depth) {
  if (opened == 2) {
    indent(g, depth + 1);
    heron__buf_puts(g->o, "}\n");
    emit_pack_free(g, depth + 1);
    indent(g, depth);
    heron__buf_puts(g->o, "}\n");
  } else if (opened == 1) {
    indent(g, depth);
    heron__buf_puts(g->o, "}\n");
  } else {
    emit_pack_free(g, depth);
  }
}

static int check_config(const heron__template *t, const heron_space *sp,
                        const int64_t *cfg, heron_error *err) {
  int which = -1;
  int n = heron_space_violations(sp, cfg, &which, 1);
  if (n < 0)
    return heron_error_set(err, HERON_EINVAL, "codegen: cannot check config");
  if (n > 0) {
    char text[128] = "";
    heron_space_constraint_str(sp, which, text, sizeof text);
    return heron_error_set(err, HERON_EINVAL,
                           "codegen: config violates %d constraint%s (first: "
                           "%s)",
                           n, n == 1 ? "" : "s", text);
  }
  (void)t;
  return HERON_OK;
}

/* The reduction-inner loop of an rvec tile: whole vectors of vec steps
 * (<r> is the first step of one), then, on a ragged axis, the steps of
 * the slice past the last whole vector one by one into h_s<p>. */
static int emit_reduce_vector(gen *g, int npts, int d) {
  const heron__op *op = g->op;
  heron__buf *out = g->o;
  int a = g->vaxis;
  const char *n = op->axes[a].name;
  int64_t inner = g->len[a][1];
  heron__buf base = {0};
  if (g->len[a][0] > 1)
    heron__buf_printf(&base, "%s_0 * %lld + ", n, (long long)inner);
  heron__buf bound = {0};
  if (g->ragged[a])
    heron__buf_printf(&bound, "%s_n / %d", n, g->vec);
  else
    heron__buf_printf(&bound, "%lld", (long long)(inner / g->vec));
  indent(g, d);
  heron__buf_printf(out, "#pragma GCC unroll %d\n", g->unroll);
  indent(g, d);
  heron__buf_printf(out, "for (int64_t %s_1 = 0; %s_1 < %s; %s_1++) {\n", n, n,
                    bound.data, n);
  indent(g, d + 1);
  heron__buf_printf(out, "const int64_t %s = %s%s_1 * %d;\n", n,
                    base.len ? base.data : "", n, g->vec);
  int rc = emit_step(g, npts, d + 1);
  indent(g, d);
  heron__buf_puts(out, "}\n");
  if (rc == HERON_OK && g->ragged[a]) {
    for (int p = 0; p < npts; p++) {
      indent(g, d);
      heron__buf_printf(out, "float h_s%d = 0.0f;\n", p);
    }
    indent(g, d);
    heron__buf_printf(out,
                      "for (int64_t %s_1 = %s_n / %d * %d; %s_1 < %s_n; "
                      "%s_1++) {\n",
                      n, n, g->vec, g->vec, n, n, n);
    indent(g, d + 1);
    heron__buf_printf(out, "const int64_t %s = %s%s_1;\n", n,
                      base.len ? base.data : "", n);
    int vec = g->vec;
    g->vec = 1;
    rc = emit_step_into(g, npts, d + 1, "h_s");
    g->vec = vec;
    indent(g, d);
    heron__buf_puts(out, "}\n");
  }
  heron__buf_free(&base);
  heron__buf_free(&bound);
  return rc;
}

/* The output stage's block of this register tile: h_w, at the register
 * tile's number in the thread's tile (its level-1 and, at acc_at 0,
 * level-2 loop indices, level-major as the loops run) times the block of
 * npts * vec floats. */
static void emit_stage_pointer(gen *g, int npts, int depth) {
  heron__buf b = {0};
  block_offset_text(g, g->op->ninputs, (int64_t)npts * g->vec, &b);
  indent(g, depth);
  heron__buf_printf(g->o, "float *restrict h_w = h_stg%s;\n",
                    b.len ? b.data : "");
  heron__buf_free(&b);
}

/* The output stage's part of the stores: the first reduction-outer step
 * writes the accumulators to the block (ST_SET), a middle one adds them to
 * it (ST_ADD), and the last one (ST_ADD_EPI here) adds the block to them,
 * so that the ordinary first-step store then writes the output. */
static void emit_stage(gen *g, int npts, int depth, int mode) {
  for (int p = 0; p < npts; p++) {
    indent(g, depth);
    long long at = (long long)p * g->vec;
    if (g->vec > 1 && mode == ST_SET)
      heron__buf_printf(g->o, "h_st(&h_w[%lld], h_a%d);\n", at, p);
    else if (g->vec > 1 && mode == ST_ADD)
      heron__buf_printf(g->o, "h_st(&h_w[%lld], h_a%d + h_ld(&h_w[%lld]));\n",
                        at, p, at);
    else if (g->vec > 1)
      heron__buf_printf(g->o, "h_a%d = h_a%d + h_ld(&h_w[%lld]);\n", p, p, at);
    else if (mode == ST_SET)
      heron__buf_printf(g->o, "h_w[%lld] = h_a%d;\n", at, p);
    else if (mode == ST_ADD)
      heron__buf_printf(g->o, "h_w[%lld] += h_a%d;\n", at, p);
    else
      heron__buf_printf(g->o, "h_a%d += h_w[%lld];\n", p, at);
  }
}

/* One register tile at origins <a>_b: pack pointers, accumulators, the
 * reduction-inner loops of the micro-kernel, and the stores (the edge
 * copy's when `edge`). */
static int emit_tile_body(gen *g, int npts, int d, int has_first, int edge) {
  heron__buf *out = g->o;
  emit_pack_pointers(g, d);
  if (g->stage && has_first)
    emit_stage_pointer(g, npts, d);
  for (int p = 0; p < npts; p++) {
    indent(g, d);
    if (g->vec > 1)
      heron__buf_printf(out, "h_vt h_a%d = h_zero;\n", p);
    else
      heron__buf_printf(out, "float h_a%d = 0.0f;\n", p);
  }
  int rc;
  if (g->rvec) {
    rc = emit_reduce_vector(g, npts, d);
  } else {
    g->bound_reduce = 1;
    int nr1 = open_loops(g, HERON__REDUCE, 1, d, g->unroll);
    g->bound_reduce = 0;
    reduce_indices(g, d + nr1);
    emit_step_index(g, d + nr1);
    rc = emit_step(g, npts, d + nr1);
    close_loops(g, nr1, d);
  }
  if (rc != HERON_OK)
    return rc;
  int epi = g->op->epilogue != 0;
  if (has_first && g->stage) {
    indent(g, d);
    heron__buf_puts(out, "if (h_first) {\n");
    emit_stage(g, npts, d + 1, ST_SET);
    indent(g, d);
    heron__buf_puts(out, "} else if (h_last) {\n");
    emit_stage(g, npts, d + 1, ST_ADD_EPI);
    emit_store(g, npts, d + 1, epi ? ST_SET_EPI : ST_SET, edge);
    indent(g, d);
    heron__buf_puts(out, "} else {\n");
    emit_stage(g, npts, d + 1, ST_ADD);
    indent(g, d);
    heron__buf_puts(out, "}\n");
  } else if (has_first) {
    indent(g, d);
    heron__buf_puts(out, "if (h_first) {\n");
    emit_store(g, npts, d + 1, ST_SET, edge);
    if (epi) {
      indent(g, d);
      heron__buf_puts(out, "} else if (h_last) {\n");
      emit_store(g, npts, d + 1, ST_ADD_EPI, edge);
    }
    indent(g, d);
    heron__buf_puts(out, "} else {\n");
    emit_store(g, npts, d + 1, ST_ADD, edge);
    indent(g, d);
    heron__buf_puts(out, "}\n");
  } else {
    emit_store(g, npts, d, epi ? ST_SET_EPI : ST_SET, edge);
  }
  return HERON_OK;
}

/* The register tile at origins <a>_b: without ragged spatial axes the
 * micro-kernel alone; with them, nothing for a tile that starts past an
 * extent, the micro-kernel for one inside every extent, and its edge copy
 * (guarded reads of unpacked inputs, stores inside the extents) for one
 * that crosses an edge. */
static int emit_tiles(gen *g, int npts, int d, int has_first) {
  const heron__op *op = g->op;
  heron__buf start = {0}, inside = {0};
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__SPATIAL || !g->ragged[a])
      continue;
    const char *nm = op->axes[a].name;
    long long ext = (long long)op->axes[a].extent;
    heron__buf_printf(&start, "%s%s_b < %lld", start.len ? " && " : "", nm,
                      ext);
    heron__buf_printf(&inside, "%s%s_b <= %lld", inside.len ? " && " : "", nm,
                      ext - g->reg[a]);
  }
  /* Register tiles one point long on every ragged axis are inside
   * whenever they start inside: no edge copy. */
  int wide = 0;
  for (int a = 0; a < op->naxes; a++)
    wide |= g->ragged[a] && op->axes[a].kind == HERON__SPATIAL &&
            g->reg[a] > 1;
  if (start.len && !wide) {
    indent(g, d);
    heron__buf_printf(g->o, "if (%s) {\n", start.data);
    int rc = emit_tile_body(g, npts, d + 1, has_first, 0);
    indent(g, d);
    heron__buf_puts(g->o, "}\n");
    heron__buf_free(&start);
    heron__buf_free(&inside);
    return rc;
  }
  if (!start.len)
    return emit_tile_body(g, npts, d, has_first, 0);
  indent(g, d);
  heron__buf_printf(g->o, "if (%s) {\n", start.data);
  indent(g, d + 1);
  heron__buf_printf(g->o, "if (%s) {\n", inside.data);
  int rc = emit_tile_body(g, npts, d + 2, has_first, 0);
  indent(g, d + 1);
  heron__buf_puts(g->o, "} else { /* the edge */\n");
  for (int a = 0; a < op->naxes; a++)
    g->guard_axis[a] = g->ragged[a] && op->axes[a].kind == HERON__SPATIAL;
  if (rc == HERON_OK)
    rc = emit_tile_body(g, npts, d + 2, has_first, 1);
  memset(g->guard_axis, 0, sizeof g->guard_axis);
  indent(g, d + 1);
  heron__buf_puts(g->o, "}\n");
  indent(g, d);
  heron__buf_puts(g->o, "}\n");
  heron__buf_free(&start);
  heron__buf_free(&inside);
  return rc;
}

/* Whether the micro-kernel's broadcasts are pinned (h_bcv: one volatile
 * vbroadcastss each, in the order written).  Left to GCC, the unrolled
 * steps of a convolution share broadcasts (the input under output column
 * x at kernel column k+1 is the one under x+1 at k), which keeps more
 * values live than the register rule counted: with two or more weight
 * vectors per step, or a tile that fills the register file, the
 * accumulators then spill (a 2 x 6 AVX2 tile of a 3-D convolution ran at
 * 0.6 of the same tile pinned).  With one weight vector and registers to
 * spare, sharing saves loads where each broadcast feeds one multiply-add,
 * so those stay GCC's (a 1 x 8 tile is 1.35x faster unpinned). */
static int bcast_pinned(const gen *g) {
  const heron__template *t = g->t;
  if (!g->fma_asm || g->rvec || g->vaxis < 0)
    return 0;
  int64_t regs = t->hw.vector_regs > 0 ? t->hw.vector_regs : 16;
  int64_t need = g->cfg[t->regs_need];
  int64_t weight_vecs = need - g->cfg[t->acc_vecs] - 1;
  return weight_vecs >= 2 || need >= regs - 1;
}

int heron__cpu_codegen(const heron__template *t, const heron_space *sp,
                       const int64_t *cfg, heron__buf *out, heron_error *err) {
  /* int8 and bf16 have their own micro-kernel and packs (dot.c). */
  if (t->dot)
    return heron__cpu_dot_codegen(t, sp, cfg, out, err);
  int rc = check_config(t, sp, cfg, err);
  if (rc != HERON_OK)
    return rc;
  gen g = {0};
  g.t = t;
  g.op = &t->op;
  g.cfg = cfg;
  g.o = out;
  g.acc_at = (int)cfg[t->acc_at];
  int64_t u = cfg[t->unroll];
  g.unroll = (int)(u > 0 ? 4 * u : 1);
  g.prefetch = (int)cfg[t->prefetch];
  g.pf_axis = -1;
  g.vaxis = t->vec_axis;
  g.vec = t->vec_axis >= 0 ? (int)cfg[t->vec] : 1;
  g.rvec = t->vec_reduce && g.vec > 1;
  for (int a = 0; a < g.op->naxes; a++) {
    int levels = heron__cpu_levels(t, a);
    for (int l = 0; l < levels; l++)
      g.len[a][l] = heron__cpu_tile(t, cfg, a, l);
    for (int l = levels; l < HERON__CPU_SPATIAL_LEVELS; l++)
      g.len[a][l] = 1;
    g.reg[a] = g.op->axes[a].kind == HERON__SPATIAL
                   ? g.len[a][3] * (g.acc_at ? g.len[a][2] : 1)
                   : 1;
    g.cover[a] = 1;
    for (int l = 0; l < levels; l++)
      g.cover[a] *= g.len[a][l];
    g.ragged[a] = g.cover[a] > g.op->axes[a].extent;
  }
  /* The innermost reduction-inner loop (open_loops' order), whose steps
   * the prefetches look ahead along. */
  for (int a = 0; a < g.op->naxes; a++)
    if (g.op->axes[a].kind == HERON__REDUCE && g.len[a][1] > 1)
      g.pf_axis = a;
  if (g.rvec)
    g.prefetch = 0;
  g.reg_from = g.acc_at ? 2 : 3;
  g.fma =
      (g.vec == 16 && t->fma_isa == 512) || (g.vec == 8 && t->fma_isa >= 256);
  g.masked = g.fma && g.vaxis >= 0 && !g.rvec && g.ragged[g.vaxis];
  g.fma_asm = g.fma && g.vec == 8 && t->fma_isa == 256;
  g.fmab = g.fma && g.vec == 16 && !g.rvec && g.op->ninputs == 2;
  g.bcv = bcast_pinned(&g);
  /* The stage only matters with reduction-outer steps (its constraint
   * makes it so; a hand-made config is not trusted to). */
  for (int a = 0; a < g.op->naxes && t->stage >= 0 && cfg[t->stage]; a++)
    if (g.op->axes[a].kind == HERON__REDUCE && g.len[a][0] > 1)
      g.stage = 1;
  index_maps(&g);
  setup_packing(&g);
  setup_halo(&g);
  int npts = tile_points(&g, 0, NULL);
  if (npts > MAX_POINTS)
    return heron_error_set(err, HERON_EINVAL,
                           "codegen: register tile of %d accumulators", npts);

  emit_header(&g, sp);
  int d = 1;
  int par = emit_parallel(&g, d);
  d += par;
  int nr0 = open_loops(&g, HERON__REDUCE, 0, d, 0);
  d += nr0;
  reduce_bounds(&g, d);
  /* The first step of the reduction-outer loops stores, later ones add,
   * and the last one applies the epilogue. */
  int has_first = nr0 > 0;
  if (has_first) {
    const char *flag[2] = {"h_first", "h_last"};
    for (int f = 0; f < 2; f++) {
      if (f == 1 && !g.op->epilogue && !g.stage)
        break;
      indent(&g, d);
      heron__buf_printf(out, "const int %s = ", flag[f]);
      int any = 0;
      for (int a = 0; a < g.op->naxes; a++)
        if (g.op->axes[a].kind == HERON__REDUCE && g.len[a][0] > 1)
          heron__buf_printf(out, "%s%s_0 == %lld", any++ ? " && " : "",
                            g.op->axes[a].name,
                            (long long)(f ? g.len[a][0] - 1 : 0));
      heron__buf_puts(out, ";\n");
    }
  }
  for (int ti = 0; ti < g.op->ninputs; ti++) {
    if (g.prepacked[ti]) {
      heron__buf b = {0};
      prepacked_offset_text(&g, ti, &b);
      indent(&g, d);
      heron__buf_printf(out, "const float *restrict h_pk%d = %s%s;\n", ti,
                        g.op->in[ti].name, b.len ? b.data : "");
      heron__buf_free(&b);
    } else if (g.packed[ti]) {
      char dst[16];
      snprintf(dst, sizeof dst, "h_pk%d", ti);
      emit_pack(&g, ti, d, dst);
    }
  }
  int n1 = open_loops(&g, HERON__SPATIAL, 1, d, 0);
  d += n1;
  int n2 = g.acc_at ? 0 : open_loops(&g, HERON__SPATIAL, 2, d, 0);
  d += n2;
  for (int a = 0; a < g.op->naxes; a++)
    if (g.op->axes[a].kind == HERON__SPATIAL && g.op->axes[a].extent > 1)
      tile_origin(&g, a, d);
  rc = emit_tiles(&g, npts, d, has_first);
  if (rc != HERON_OK)
    return heron_error_set(err, rc, "codegen: out of memory");
  d -= n2;
  close_loops(&g, n2, d);
  d -= n1;
  close_loops(&g, n1, d);
  d -= nr0;
  close_loops(&g, nr0, d);
  d -= par;
  close_parallel(&g, par, d);
  for (int ti = 0; ti < g.op->ninputs; ti++)
    if (g.halo[ti])
      heron__buf_printf(out, "  if (!h_own)\n    free(h_hc%d);\n", ti);
  if (any_kept(&g))
    heron__buf_puts(out, "  if (h_own)\n    __atomic_store_n(&h_busy, 0, "
                         "__ATOMIC_RELEASE);\n");
  heron__buf_puts(out, "}\n");
  emit_prepack(&g);
  if (out->failed)
    return heron_error_set(err, HERON_ENOMEM, "codegen: out of memory");
  return HERON_OK;
}

/* ---- the standalone driver ---------------------------------------------- */

void heron__codegen_driver(const heron__op *op, heron__buf *out) {
  int n = op->ninputs, nb = heron__op_nbufs(op);
  const heron__tensor *ts[HERON__MAX_TENSORS + 2];
  for (int t = 0; t < nb; t++)
    ts[t] = t < n ? &op->in[t] : t == n ? &op->out : &op->bias;
  heron__buf_printf(out, "/* Standalone driver for a Heron-C kernel: %s (",
                    op->name);
  for (int i = 0; i < op->nshape; i++)
    heron__buf_printf(out, "%s%lld", i ? "," : "", (long long)op->shape[i]);
  heron__buf_printf(
      out,
      ").\n * Build: cc -O3 -march=native -fopenmp driver.c kernel.c -o run\n"
      " * Prints the median time of the timed runs and the GFLOP/s. */\n"
      "#define _POSIX_C_SOURCE 199309L\n"
      "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
      "#include <string.h>\n#include <time.h>\n\n"
      "void heron_kernel(void *const *bufs);\n"
      "/* Exported by kernels that take inputs packed ahead (prepack). */\n"
      "__attribute__((weak)) int64_t heron_prepacked_elems(int input);\n"
      "__attribute__((weak)) void heron_prepack(int input, const void *src,\n"
      "                                         void *dst);\n\n"
      "static const double flops = %.17g;\n"
      "static const int64_t elems[%d] = {",
      op->flops, nb);
  for (int i = 0; i < nb; i++)
    heron__buf_printf(out, "%s%lldLL", i ? ", " : "",
                      (long long)heron__tensor_elems(ts[i]));
  heron__buf_printf(out, "};\nstatic const int elem_bytes[%d] = {", nb);
  for (int i = 0; i < nb; i++)
    heron__buf_printf(out, "%s%d", i ? ", " : "",
                      heron__dtype_size(heron__op_buf_dtype(op, i)));
  heron__buf_printf(
      out,
      "};\n\n"
      "static double now(void) {\n"
      "  struct timespec ts;\n"
      "  clock_gettime(CLOCK_MONOTONIC, &ts);\n"
      "  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;\n}\n\n"
      "static int cmp(const void *a, const void *b) {\n"
      "  double x = *(const double *)a, y = *(const double *)b;\n"
      "  return (x > y) - (x < y);\n}\n\n"
      "int main(int argc, char **argv) {\n"
      "  int runs = argc > 1 ? atoi(argv[1]) : 11;\n"
      "  if (runs < 1)\n    runs = 1;\n"
      "  void *bufs[%d];\n"
      "  for (int t = 0; t < %d; t++) {\n"
      "    size_t bytes = (size_t)elems[t] * (size_t)elem_bytes[t];\n"
      "    bufs[t] = aligned_alloc(64, (bytes + 63) / 64 * 64);\n"
      "    if (!bufs[t]) {\n"
      "      fprintf(stderr, \"out of memory\\n\");\n      return 1;\n    }\n"
      "    memset(bufs[t], 0, bytes);\n"
      "    /* Inputs get values in [-1, 1) from a fixed LCG; the fp32 ones\n"
      "     * as floats, other types as small integers in every byte. */\n"
      "    uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(t + 1);\n"
      "    for (int64_t i = 0; t != %d && i < elems[t]; i++) {\n"
      "      s = s * 6364136223846793005ULL + 1442695040888963407ULL;\n"
      "      if (elem_bytes[t] == 4)\n"
      "        ((float *)bufs[t])[i] = (float)((s >> 40) / 8388608.0 - 1.0);\n"
      "      else\n"
      "        ((unsigned char *)bufs[t])[i] = (unsigned char)(s >> 60);\n"
      "    }\n  }\n"
      "  /* Inputs the kernel takes packed: packed once, untimed, into\n"
      "   * heron_prepacked_elems elements of the input's own type. */\n"
      "  for (int t = 0; heron_prepack && t < %d; t++) {\n"
      "    int64_t pn = heron_prepacked_elems(t);\n"
      "    if (pn <= 0)\n      continue;\n"
      "    void *copy = aligned_alloc(64, ((size_t)pn * (size_t)elem_bytes[t] "
      "+ 63) / 64 * 64);\n"
      "    if (!copy) {\n"
      "      fprintf(stderr, \"out of memory\\n\");\n      return 1;\n    }\n"
      "    heron_prepack(t, bufs[t], copy);\n"
      "    free(bufs[t]);\n    bufs[t] = copy;\n  }\n"
      "  for (int w = 0; w < 2; w++)\n"
      "    heron_kernel(bufs);\n"
      "  double *ms = malloc((size_t)runs * sizeof *ms);\n"
      "  if (!ms)\n    return 1;\n"
      "  for (int r = 0; r < runs; r++) {\n"
      "    double t0 = now();\n"
      "    heron_kernel(bufs);\n"
      "    ms[r] = 1e3 * (now() - t0);\n  }\n"
      "  qsort(ms, (size_t)runs, sizeof *ms, cmp);\n"
      "  double med = ms[runs / 2];\n"
      "  printf(\"median %%.4f ms, %%.2f GFLOP/s (%%d runs)\\n\", med,\n"
      "         flops / (med * 1e-3) / 1e9, runs);\n"
      "  for (int t = 0; t < %d; t++)\n    free(bufs[t]);\n"
      "  free(ms);\n  return 0;\n}\n",
      nb, nb, n, n, nb);
}
