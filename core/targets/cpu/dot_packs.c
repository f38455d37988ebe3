/* core/targets/cpu/dot_packs.c - the packs of the int8 and bf16 generator:
 * the activations one row of k per point of the thread tile, the weights
 * in the layout of the dot-product instructions ([k / G][lane][G]), and
 * the loops and element reads both share; the activations as a region
 * where that packs fewer elements (the region pack, region.c, which the
 * fp32 generator calls too). */
#include <stdio.h>
#include <string.h>

#include "core/targets/cpu/dot.h"

/* Appends the read of tensor ti at the global coordinates g_<axis>: into
 * cond the range and divisibility checks of its guarded dimensions ("1"
 * when none), into off its row-major offset. */
void heron__cpu_dot_element_text(const dgen *g, int ti, heron__buf *cond,
                                 heron__buf *off) {
  const heron__op *op = g->op;
  const heron__tensor *ts = buf_tensor(op, ti);
  int nc = 0;
  heron__buf acc = {0};
  heron__buf_puts(&acc, "0");
  for (int d = 0; d < ts->ndim; d++) {
    const heron__affine *ix = &ts->index[d];
    heron__buf e = {0};
    heron__buf_printf(&e, "(%lld", (long long)ix->offset);
    for (int a = 0; a < op->naxes; a++)
      if (ix->coef[a] != 0 && live(g, a))
        heron__buf_printf(&e, " + %lldLL * g_%s", (long long)ix->coef[a],
                          op->axes[a].name);
    heron__buf_puts(&e, ")");
    int64_t div = heron__affine_div(ix);
    /* Horner's form of the row-major offset: (prev) * dim + index. */
    heron__buf next = {0};
    if (div > 1) {
      heron__buf_printf(cond, "%s(%s %% %lld == 0)", nc++ ? " && " : "", e.data,
                        (long long)div);
      heron__buf_printf(cond, " && (%s >= 0) && (%s / %lld < %lld)", e.data,
                        e.data, (long long)div, (long long)ts->dims[d]);
      heron__buf_printf(&next, "(%s) * %lld + %s / %lld", acc.data,
                        (long long)ts->dims[d], e.data, (long long)div);
    } else {
      if (ts->bounded)
        heron__buf_printf(cond, "%s(%s >= 0 && %s < %lld)", nc++ ? " && " : "",
                          e.data, e.data, (long long)ts->dims[d]);
      heron__buf_printf(&next, "(%s) * %lld + %s", acc.data,
                        (long long)ts->dims[d], e.data);
    }
    heron__buf_free(&acc);
    acc = next;
    heron__buf_free(&e);
  }
  heron__buf_puts(off, acc.data);
  heron__buf_free(&acc);
  if (!nc)
    heron__buf_puts(cond, "1");
}

/* Opens one loop per live reduction axis over its inner tile, setting
 * g_<r> (global) and appending "g_<r> < extent" checks for ragged ones to
 * inr.  Returns the loops opened. */
static int open_reduce_inner(dgen *g, int depth, heron__buf *inr) {
  const heron__op *op = g->op;
  int n = 0;
  /* With a region pack the group axis comes last, over its rounded tile
   * (the steps past its own tile read as zeros). */
  for (int pass = 0; pass < 1 + g->region; pass++)
    for (int a = 0; a < op->naxes; a++) {
      if (op->axes[a].kind != HERON__REDUCE || !live(g, a) ||
          (g->region && (a == g->rg.cax) != pass))
        continue;
      const char *nm = op->axes[a].name;
      int64_t len = g->region && a == g->rg.cax ? g->rg.cgp : g->len[a][1];
      ind(g, depth + n);
      heron__buf_printf(g->o, "for (int64_t l_%s = 0; l_%s < %lld; l_%s++) {\n",
                        nm, nm, (long long)len, nm);
      ind(g, depth + n + 1);
      heron__buf_printf(g->o, "const int64_t g_%s = b_%s + l_%s;\n", nm, nm,
                        nm);
      if (len > g->len[a][1])
        heron__buf_printf(inr, " && l_%s < %lld", nm, (long long)g->len[a][1]);
      if (g->ragged[a])
        heron__buf_printf(inr, " && g_%s < %lld", nm,
                          (long long)op->axes[a].extent);
      n++;
    }
  return n;
}

/* Opens one loop per live spatial axis of `which` (1: read by the
 * activations, 2: read by the weights, other than the vector axis) over
 * the thread tile, setting g_<a>; appends ragged checks to inr. */
static int open_spatial_pack(dgen *g, int ti, int depth, heron__buf *inr) {
  const heron__op *op = g->op;
  int n = 0;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__SPATIAL || !live(g, a) || a == g->vaxis ||
        !heron__tensor_reads(&op->in[ti], a))
      continue;
    const char *nm = op->axes[a].name;
    ind(g, depth + n);
    heron__buf_printf(g->o, "for (int64_t p_%s = 0; p_%s < %lld; p_%s++) {\n",
                      nm, nm, (long long)g->thr[a], nm);
    ind(g, depth + n + 1);
    heron__buf_printf(g->o, "const int64_t g_%s = o_%s + p_%s;\n", nm, nm, nm);
    if (g->ragged[a])
      heron__buf_printf(inr, " && g_%s < %lld", nm,
                        (long long)op->axes[a].extent);
    n++;
  }
  return n;
}

/* The activation pack: for every point of the thread tile the activations
 * read, the reduction-inner slice in order, zeros past the edges and up to
 * the rounded length. */
void heron__cpu_dot_emit_pack_act(dgen *g, int depth) {
  heron__buf inr = {0}, cond = {0}, off = {0};
  heron__buf_puts(&inr, "1");
  ind(g, depth);
  heron__buf_puts(g->o, "{\n");
  ind(g, depth + 1);
  heron__buf_printf(g->o, "%s *h_q = h_pa;\n", act_pack_type(g));
  int ns = open_spatial_pack(g, g->act, depth + 1, &inr);
  int nr = open_reduce_inner(g, depth + 1 + ns, &inr);
  heron__cpu_dot_element_text(g, g->act, &cond, &off);
  ind(g, depth + 1 + ns + nr);
  heron__buf_printf(g->o, "*h_q++ = (%s && %s) ? (%s)t_%s[%s] : 0;\n", inr.data,
                    cond.data, act_pack_type(g), g->op->in[g->act].name,
                    off.data);
  close_n(g, nr, depth + 1 + ns);
  if (g->rip > g->ri) {
    ind(g, depth + 1 + ns);
    heron__buf_printf(g->o, "for (int h_z = 0; h_z < %lld; h_z++)\n",
                      (long long)(g->rip - g->ri));
    ind(g, depth + 2 + ns);
    heron__buf_puts(g->o, "*h_q++ = 0;\n");
  }
  close_n(g, ns, depth + 1);
  ind(g, depth);
  heron__buf_puts(g->o, "}\n");
  heron__buf_free(&inr);
  heron__buf_free(&cond);
  heron__buf_free(&off);
}

/* "const int64_t e_<d> = ...;": dimension d's index in the activation
 * tensor at region position q_<d> (at position 0 without q) from the
 * tile's origins o_<a> and the reduction bases b_<r>. */
/* The weight pack: for every point of the thread tile the weights read
 * besides the vector axis, element (k, lane) at [k / G][lane][k % G]. */
void heron__cpu_dot_emit_pack_weight(dgen *g, int depth) {
  const heron__op *op = g->op;
  heron__buf inr = {0}, cond = {0}, off = {0};
  heron__buf_puts(&inr, "1");
  const char *wt = ctype(op, g->wt);
  const char *vn = op->axes[g->vaxis].name;
  int64_t blk = g->rip * g->tv; /* elements per point */
  ind(g, depth);
  heron__buf_puts(g->o, "{\n");
  ind(g, depth + 1);
  heron__buf_printf(g->o, "%s *h_q = h_pw;\n", wt);
  int ns = open_spatial_pack(g, g->wt, depth + 1, &inr);
  int d = depth + 1 + ns;
  /* Zero the rounding groups' tail first: only whole groups are read (a
   * region's order pads the group axis in its own loop). */
  if (!g->region && g->rip > g->ri) {
    ind(g, d);
    heron__buf_printf(
        g->o, "memset(h_q + %lld, 0, %lld * sizeof *h_q);\n",
        (long long)((g->ri / g->group) * g->group * g->tv),
        (long long)((g->rip - g->ri / g->group * g->group) * g->tv));
  }
  ind(g, d);
  heron__buf_puts(g->o, "int64_t h_k = 0;\n");
  int nr = open_reduce_inner(g, d, &inr);
  ind(g, d + nr);
  heron__buf_printf(g->o, "%s *h_d = h_q + (h_k / %d) * %lld + h_k %% %d;\n",
                    wt, g->group, (long long)(g->tv * g->group), g->group);
  ind(g, d + nr);
  heron__buf_printf(g->o, "for (int64_t p_%s = 0; p_%s < %lld; p_%s++) {\n", vn,
                    vn, (long long)g->tv, vn);
  ind(g, d + nr + 1);
  heron__buf_printf(g->o, "const int64_t g_%s = o_%s + p_%s;\n", vn, vn, vn);
  if (g->ragged[g->vaxis])
    heron__buf_printf(&inr, " && g_%s < %lld", vn,
                      (long long)op->axes[g->vaxis].extent);
  heron__cpu_dot_element_text(g, g->wt, &cond, &off);
  ind(g, d + nr + 1);
  heron__buf_printf(g->o, "h_d[p_%s * %d] = (%s && %s) ? t_%s[%s] : 0;\n", vn,
                    g->group, inr.data, cond.data, op->in[g->wt].name,
                    off.data);
  ind(g, d + nr);
  heron__buf_puts(g->o, "}\n");
  ind(g, d + nr);
  heron__buf_puts(g->o, "h_k++;\n");
  close_n(g, nr, d);
  ind(g, d);
  heron__buf_printf(g->o, "h_q += %lld;\n", (long long)blk);
  close_n(g, ns, depth + 1);
  ind(g, depth);
  heron__buf_puts(g->o, "}\n");
  heron__buf_free(&inr);
  heron__buf_free(&cond);
  heron__buf_free(&off);
}

/* The region pack of the activations where it packs fewer elements than
 * one row of k per point and its rounding of the group axis to whole
 * groups, once per position of the other reduction axes, stays within
 * the padded-work bound of rule_dot_groups (125% of the slice): where
 * heron__cpu_region_axis finds a group axis (a convolution's input
 * channels).  A matrix op (its one reduction the group axis) packs the
 * same rows either way and keeps the row pack. */
void heron__cpu_dot_plan_region(dgen *g) {
  heron__cpu_region r;
  g->region = 0;
  g->pa_elems = g->pa_pts * g->rip;
  if (!heron__cpu_region_plan(g->op, g->act, g->wt, g->thr, g->group, &r) ||
      4 * r.rip > 5 * g->ri || r.elems >= g->pa_elems)
    return;
  g->region = 1;
  g->rg = r;
  g->rip = r.rip;
  g->ng = r.rip / g->group;
  g->pa_elems = r.elems;
}

void heron__cpu_dot_emit_pack_region(dgen *g, int depth) {
  char src[64];
  snprintf(src, sizeof src, "t_%s", g->op->in[g->act].name);
  heron__cpu_region_emit(g->o, g->op, &g->rg, depth, "h_pa", src,
                         act_pack_type(g));
}
