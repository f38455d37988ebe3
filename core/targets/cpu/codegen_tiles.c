/* core/targets/cpu/codegen_tiles.c - the register tile (the micro-kernel)
 * of the cpu generator: its points, the multiply-adds of one reduction
 * step with their prefetches, the stores (whole, masked or lane by lane
 * at an edge) with the epilogue and the output's stage, and the body of
 * one register tile with its edge copy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/targets/cpu/codegen.h"

/* A sanity cap on the loads of one reduction step (see MAX_POINTS in
 * codegen.c). */
#define MAX_LOADS 8192

/* ---- the register tile ----------------------------------------------------
 */

/* Enumerates the points of the register tile (one per accumulator):
 * point p's offsets into off[].  The vector axis steps by vec.  Returns the
 * number of points. */
int heron__cpu_tile_points(const gen *g, int p, int64_t *off) {
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
  /* A region is the thread's own small buffer, which the tile reuses. */
  if (g->prefetch <= 0 || g->pf_axis < 0 || g->divided[ti] || is_region(g, ti))
    return;
  int64_t c, step;
  if (g->packed[ti]) {
    c = heron__cpu_packed_pos(g, ti, off);
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
  heron__cpu_linear_text(g, g->lin[ti], g->lin0[ti], off, &e);
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
    heron__cpu_tile_points(g, p, off);
    int v[HERON__MAX_TENSORS], kind[HERON__MAX_TENSORS];
    for (int ti = 0; ti < op->ninputs; ti++) {
      heron__buf e = {0};
      kind[ti] = heron__cpu_input_value(g, ti, off, &e);
      v[ti] = e.failed ? -1 : heron__cpu_load_local(g, e.data, kind[ti], depth);
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
  heron__cpu_free_loads(g);
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
    heron__cpu_linear_text(g, g->lin[bi], g->lin0[bi], off, &e);
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
  heron__cpu_linear_text(g, g->lin[out], g->lin0[out], o, b);
  heron__buf_puts(b, "]");
}

/* The store of one accumulator, x ("h_a3"), at tile point off. */
static void emit_point(gen *g, const int64_t *off, const char *x, int depth,
                       int mode) {
  /* Lanes along an axis that is not the output's contiguous one (a
   * convolution vectorized along its channels) lie a stride apart: they
   * are read as a gather and written lane by lane from a spill. */
  int strided = g->vec > 1 && g->lin[g->op->ninputs][g->vaxis] != 1;
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
  heron__buf_puts(&acc, x);
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

/* The stores of register-tile points [from, to). */
static void emit_points(gen *g, int from, int to, int depth, int mode) {
  for (int p = from; p < to; p++) {
    int64_t off[HERON__MAX_AXES];
    heron__cpu_tile_points(g, p, off);
    heron__buf acc = {0};
    if (g->rvec && g->ragged[g->vaxis])
      heron__buf_printf(&acc, "(h_hsum(h_a%d) + h_s%d)", p, p);
    else if (g->rvec)
      heron__buf_printf(&acc, "h_hsum(h_a%d)", p);
    else
      heron__buf_printf(&acc, "h_a%d", p);
    emit_point(g, off, acc.data, depth, mode);
    heron__buf_free(&acc);
  }
}

static void emit_masked_point(gen *g, const int64_t *off, const char *x,
                              const char *lanes, int depth, int mode);

/* The transposed store (<out>.transpose) of a register tile inside every
 * extent: each group of vec points consecutive along tr_axis (at the
 * tile's end, where its extent along tr_axis is no multiple of vec, the
 * k left, zeros for the rest) is copied into h_r, transposed by h_tr, and
 * row l, the group's channel l, stored as one vector along tr_axis (k
 * lanes under a mask): the points' stores with the vector axis taken to
 * be tr_axis (contiguous loads and stores, a bias along the channels
 * broadcast). */
static void emit_transposed(gen *g, int npts, int depth, int mode) {
  const int ta = g->tr_axis, va = g->vaxis;
  for (int p = 0; p < npts; p++) {
    int64_t off[HERON__MAX_AXES];
    heron__cpu_tile_points(g, p, off);
    if (off[ta] % g->vec)
      continue;
    int64_t k = g->reg[ta] - off[ta] < g->vec ? g->reg[ta] - off[ta] : g->vec;
    indent(g, depth);
    heron__buf_puts(g->o, "{\n");
    indent(g, depth + 1);
    heron__buf_printf(g->o, "h_vt h_r[%d] = {", g->vec);
    for (int j = 0; j < g->vec; j++) {
      if (j >= k) {
        heron__buf_puts(g->o, ", h_zero");
        continue;
      }
      /* The group's point j: p's offsets, tr_axis moved on by j. */
      int q = 0;
      for (; q < npts; q++) {
        int64_t o[HERON__MAX_AXES];
        heron__cpu_tile_points(g, q, o);
        int same = o[ta] == off[ta] + j;
        for (int a = 0; a < g->op->naxes; a++)
          same &= a == ta || o[a] == off[a];
        if (same)
          break;
      }
      heron__buf_printf(g->o, "%sh_a%d", j ? ", " : "", q);
    }
    heron__buf_puts(g->o, "};\n");
    indent(g, depth + 1);
    heron__buf_puts(g->o, "h_tr(h_r);\n");
    g->vaxis = ta;
    for (int l = 0; l < g->vec; l++) {
      int64_t row[HERON__MAX_AXES];
      memcpy(row, off, sizeof row);
      row[va] += l;
      char x[32], lanes[24];
      snprintf(x, sizeof x, "h_r[%d]", l);
      snprintf(lanes, sizeof lanes, "%lld", (long long)k);
      if (k < g->vec)
        emit_masked_point(g, row, x, lanes, depth + 1, mode);
      else
        emit_point(g, row, x, depth + 1, mode);
    }
    g->vaxis = va;
    indent(g, depth);
    heron__buf_puts(g->o, "}\n");
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
  else if (g->transpose)
    emit_transposed(g, npts, depth, mode);
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
    heron__cpu_below_extent(g, a, off, cond);
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
    heron__cpu_linear_text(g, g->lin[bi], g->lin0[bi], off, &v);
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
static void emit_masked_point(gen *g, const int64_t *off, const char *x,
                              const char *lanes, int depth, int mode) {
  heron__buf left = {0}, elem = {0}, acc = {0}, val = {0};
  if (lanes)
    heron__buf_puts(&left, lanes);
  else
    heron__cpu_lanes_left_text(g, off, &left);
  out_elem(g, off, 0, &elem);
  heron__buf_puts(&acc, x);
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
    heron__cpu_tile_points(g, p, off);
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
      char x[32];
      snprintf(x, sizeof x, "h_a%d", p);
      emit_masked_point(g, off, x, NULL, d, mode);
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
        heron__cpu_linear_text(g, k, 0, lane, &in);
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
  heron__cpu_block_offset_text(g, g->op->ninputs, (int64_t)npts * g->vec, &b);
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
  heron__cpu_emit_pack_pointers(g, d);
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
    int nr1 = heron__cpu_open_loops(g, HERON__REDUCE, 1, d, g->unroll);
    g->bound_reduce = 0;
    heron__cpu_reduce_indices(g, d + nr1);
    heron__cpu_emit_step_index(g, d + nr1);
    rc = emit_step(g, npts, d + nr1);
    heron__cpu_close_loops(g, nr1, d);
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
int heron__cpu_emit_tiles(gen *g, int npts, int d, int has_first) {
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
    wide |= g->ragged[a] && op->axes[a].kind == HERON__SPATIAL && g->reg[a] > 1;
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
