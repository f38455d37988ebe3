/* core/targets/cpu/codegen_expr.c - the cpu generator's element
 * expressions: the affine address of every tensor element, its range
 * checks, and the value an input gives one multiply-add (read in place,
 * from its pack, broadcast, loaded or gathered), each load of a
 * reduction step emitted once into a named local. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/targets/cpu/codegen.h"

/* The least and greatest value of index map ix (before any division)
 * while every axis a runs over 0..last[a]. */
void heron__cpu_index_bounds(const heron__op *op, const heron__affine *ix,
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
void heron__cpu_index_maps(gen *g) {
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
      heron__cpu_index_bounds(op, ix, last, &lo, &hi);
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
void heron__cpu_linear_text(const gen *g, const int64_t *k, int64_t c,
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
void heron__cpu_below_extent(const gen *g, int a, const int64_t *off,
                             heron__buf *cond) {
  int64_t k[HERON__MAX_AXES] = {0};
  k[a] = 1;
  heron__buf e = {0};
  heron__cpu_linear_text(g, k, 0, off, &e);
  heron__buf_printf(cond, "%s(%s) < %lld", cond->len ? " && " : "", e.data,
                    (long long)g->op->axes[a].extent);
  heron__buf_free(&e);
}

/* "(41 - (j_b + 8))": the lanes of the vector at tile offset off that lie
 * inside the vector axis' extent (<= 0 or >= vec at times: h_mask clamps). */
void heron__cpu_lanes_left_text(const gen *g, const int64_t *off,
                                heron__buf *b) {
  int64_t k[HERON__MAX_AXES] = {0};
  k[g->vaxis] = 1;
  heron__buf e = {0};
  heron__cpu_linear_text(g, k, 0, off, &e);
  heron__buf_printf(b, "(%lld - (%s))", (long long)g->op->axes[g->vaxis].extent,
                    e.data);
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
    heron__cpu_linear_text(g, ts->index[d].coef, ts->index[d].offset, off, &e);
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
    heron__cpu_below_extent(g, a, off, cond);
  }
}

/* The element offset of tensor ti at tile offset off: the linear form, or
 * for a tensor with a divided dimension, the row-major sum of the
 * dimensions' indices, each divided where its map says so. */
static void address_text(const gen *g, int ti, const int64_t *off,
                         heron__buf *b) {
  if (!g->divided[ti]) {
    heron__cpu_linear_text(g, g->lin[ti], g->lin0[ti], off, b);
    return;
  }
  const heron__tensor *ts = tensor_at(g, ti);
  int64_t stride = 1;
  for (int d = ts->ndim - 1; d >= 0; d--) {
    heron__buf e = {0};
    heron__cpu_linear_text(g, ts->index[d].coef, ts->index[d].offset, off, &e);
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
void heron__cpu_scalar_elem(const gen *g, int ti, const int64_t *off,
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

/* The offset of register-tile point off in packed input ti's block of one
 * reduction step (its register layout, the vector axis innermost). */
int64_t heron__cpu_packed_pos(const gen *g, int ti, const int64_t *off) {
  int64_t pos = 0;
  for (int a = 0; a < g->op->naxes; a++)
    if (g->op->axes[a].kind == HERON__SPATIAL)
      pos += off[a] * g->rstride[ti][a];
  return pos;
}

/* Element h_q<ti>[idx] of a pack as one value of every lane: its address
 * for the fused multiply-add of a broadcast operand (fmab), a broadcast
 * load (bcv), a set1 of the scalar, or the scalar itself (vec 1); returns
 * the kind of value written. */
static int broadcast_value(const gen *g, int ti, const char *idx,
                           heron__buf *b) {
  if (g->fmab) {
    heron__buf_printf(b, "&h_q%d[%s]", ti, idx);
    return VAL_ADDR;
  }
  if (g->bcv)
    heron__buf_printf(b, "h_bcv(&h_q%d[%s])", ti, idx);
  else if (g->vec > 1)
    heron__buf_printf(b, "h_set1(h_q%d[%s])", ti, idx);
  else
    heron__buf_printf(b, "h_q%d[%s]", ti, idx);
  return g->vec > 1 ? VAL_VEC : VAL_SCALAR;
}

/* The value of packed input ti at register-tile point off: its position
 * in the pack is the step's block (h_k * points) plus the point's offset
 * in the tensor's register layout, whose vector axis is innermost, so a
 * vector of lanes is one unit-stride load. */
static int packed_value(const gen *g, int ti, const int64_t *off,
                        heron__buf *b) {
  int64_t pos = heron__cpu_packed_pos(g, ti, off);
  int is_vec = g->vec > 1 && g->rstride[ti][g->vaxis] != 0;
  heron__buf idx = {0};
  if (g->ki > 1)
    heron__buf_printf(&idx, "h_k * %lld + %lld", (long long)g->rp[ti],
                      (long long)pos);
  else
    heron__buf_printf(&idx, "%lld", (long long)pos);
  int kind = VAL_VEC;
  if (is_vec)
    heron__buf_printf(b, "h_ld(&h_q%d[%s])", ti, idx.data);
  else
    kind = broadcast_value(g, ti, idx.data, b);
  heron__buf_free(&idx);
  return kind;
}

/* The value of the region's input at register-tile point off: its
 * position in the region is the point's constant offset from the tile's
 * origin (h_q) plus the reduction step's, each axis' position times how
 * far a step of it moves in the region.  The input is broadcast (the
 * rules keep the vector axis out of it) and never needs a check. */
static int region_value(const gen *g, const int64_t *off, heron__buf *b) {
  const heron__op *op = g->op;
  int64_t pos = 0;
  heron__buf idx = {0};
  for (int a = 0; a < op->naxes; a++) {
    int64_t k = heron__cpu_region_coef(op, &g->rg, a);
    if (op->axes[a].extent == 1 || !k)
      continue;
    if (op->axes[a].kind == HERON__SPATIAL)
      pos += off[a] * k;
    else if (g->len[a][1] > 1)
      heron__buf_printf(&idx, "%s_1 * %lld + ", op->axes[a].name, (long long)k);
  }
  heron__buf_printf(&idx, "%lld", (long long)pos);
  int kind = broadcast_value(g, g->rg.act, idx.data, b);
  heron__buf_free(&idx);
  return kind;
}

/* The value of input ti at tile offset off for one reduction step: from
 * its pack, or read in place as a broadcast scalar (when the tensor does
 * not depend on the vector axis), a vector load, or a gather of the
 * lanes.  With vectors every value is a vector, so the micro-kernel's
 * multiply-adds all take vector operands, but for the AVX-512 broadcasts
 * passed by address to h_fmab.  Returns the VAL_* kind it wrote. */
int heron__cpu_input_value(gen *g, int ti, const int64_t *off, heron__buf *b) {
  if (g->packed[ti])
    return packed_value(g, ti, off, b);
  if (is_region(g, ti))
    return region_value(g, off, b);
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
    heron__cpu_scalar_elem(g, ti, off, b);
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
      heron__cpu_lanes_left_text(g, off, &close);
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
    heron__cpu_scalar_elem(g, ti, lane, b);
  }
  heron__buf_puts(b, "}");
  return VAL_VEC;
}

/* The local holding an expression of this reduction step, creating and
 * emitting it on first use: returns its number, or -1 out of memory. */
int heron__cpu_load_local(gen *g, const char *expr, int kind, int depth) {
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

void heron__cpu_free_loads(gen *g) {
  for (int i = 0; i < g->nloads; i++)
    free(g->load_expr[i]);
  free(g->load_expr);
  g->load_expr = NULL;
  g->nloads = g->cap_loads = 0;
}
