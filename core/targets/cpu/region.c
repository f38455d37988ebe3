/* core/targets/cpu/region.c - the region pack of both cpu generators
 * (region.h): where it applies, its layout, and its copy. */
#include "core/targets/cpu/region.h"

/* Whether axis a takes part in loops and indices (extent > 1). */
static int live(const heron__op *op, int a) { return op->axes[a].extent > 1; }

int heron__cpu_region_axis(const heron__op *op, int act, int wt, int *cdim) {
  const heron__tensor *ts = &op->in[act];
  int cax = -1;
  *cdim = -1;
  for (int d = 0; d < ts->ndim; d++) {
    const heron__affine *ix = &ts->index[d];
    if (heron__affine_div(ix) != 1)
      return -1;
    int nlive = 0, r = -1;
    for (int a = 0; a < op->naxes; a++) {
      if (!live(op, a) || ix->coef[a] == 0)
        continue;
      nlive++;
      if (op->axes[a].kind == HERON__REDUCE && ix->coef[a] == 1)
        r = a;
    }
    /* The innermost such dimension: a blocked input's (nChw16c) reads
     * the channel lanes there, its blocks a dimension of their own too. */
    if (nlive == 1 && r >= 0 && heron__tensor_reads(&op->in[wt], r)) {
      cax = r;
      *cdim = d;
    }
  }
  if (ts->ndim < 2)
    return -1;
  return cax;
}

/* Negative coefficients (a transposed convolution's kernel offsets) move
 * the region's origin: position q of dimension d is index value q - neg[d]
 * from the tile's origin. */
int heron__cpu_region_plan(const heron__op *op, int act, int wt,
                           const int64_t *tile, int64_t group,
                           heron__cpu_region *r) {
  const heron__tensor *ts = &op->in[act];
  int cdim, cax = heron__cpu_region_axis(op, act, wt, &cdim);
  if (cax < 0)
    return 0;
  r->act = act;
  r->cax = cax;
  r->cdim = cdim;
  r->clen = tile[cax];
  r->cgp = (tile[cax] + group - 1) / group * group;
  r->rip = r->cgp;
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == HERON__REDUCE && live(op, a) && a != cax)
      r->rip *= tile[a];
  int64_t stride = r->cgp;
  for (int d = ts->ndim - 1; d >= 0; d--) {
    r->span[d] = 1;
    r->rstr[d] = 1;
    r->neg[d] = 0;
    if (d == cdim)
      continue;
    for (int a = 0; a < op->naxes; a++) {
      int64_t c = ts->index[d].coef[a];
      if (!live(op, a) || c == 0)
        continue;
      int64_t reach = (c < 0 ? -c : c) * (tile[a] - 1);
      r->span[d] += reach;
      if (c < 0)
        r->neg[d] += reach;
    }
    r->rstr[d] = stride;
    stride *= r->span[d];
  }
  r->elems = stride;
  r->origin = 0;
  for (int d = 0; d < ts->ndim; d++)
    r->origin += r->neg[d] * r->rstr[d];
  return 1;
}

int64_t heron__cpu_region_coef(const heron__op *op, const heron__cpu_region *r,
                               int a) {
  const heron__tensor *ts = &op->in[r->act];
  int64_t c = 0;
  for (int d = 0; d < ts->ndim; d++)
    c += ts->index[d].coef[a] * r->rstr[d];
  return c;
}

/* ---- the copy ------------------------------------------------------------
 */

/* One emission: where to, from where, and the tile's region. */
typedef struct rgen {
  heron__buf *o;
  const heron__op *op;
  const heron__cpu_region *r;
  const heron__tensor *ts; /* the input */
  const char *dst, *src, *type;
} rgen;

static void ind(const rgen *g, int depth) {
  for (int i = 0; i < depth; i++)
    heron__buf_puts(g->o, "  ");
}

static void close_n(const rgen *g, int n, int depth) {
  for (int i = n - 1; i >= 0; i--) {
    ind(g, depth + i);
    heron__buf_puts(g->o, "}\n");
  }
}

static void emit_region_index(const rgen *g, int d, int depth, int with_q) {
  const heron__op *op = g->op;
  const heron__affine *ix = &g->ts->index[d];
  ind(g, depth);
  heron__buf_printf(g->o, "const int64_t e_%d = %lld", d,
                    (long long)ix->offset);
  for (int a = 0; a < op->naxes; a++)
    if (ix->coef[a] != 0 && live(op, a))
      heron__buf_printf(g->o, " + %lldLL * %s_%s", (long long)ix->coef[a],
                        op->axes[a].kind == HERON__SPATIAL ? "o" : "b",
                        op->axes[a].name);
  heron__buf_printf(g->o, " - %lld", (long long)g->r->neg[d]);
  if (with_q)
    heron__buf_printf(g->o, " + q_%d", d);
  heron__buf_puts(g->o, ";\n");
}

/* "const int h_ok<d> = [h_ok<prev> &&] e_<d> inside dimension d;": whether
 * the region's positions so far lie inside the input (prev < 0: d is the
 * first dimension checked). */
static void emit_region_ok(const rgen *g, int d, int prev, int depth) {
  ind(g, depth);
  heron__buf_printf(g->o, "const int h_ok%d = ", d);
  if (prev >= 0)
    heron__buf_printf(g->o, "h_ok%d && ", prev);
  heron__buf_printf(g->o, "e_%d >= 0 && e_%d < %lld;\n", d, d,
                    (long long)g->ts->dims[d]);
}

/* Appends the input's row-major offset of e_0 .. e_<n-1> (its first n
 * dimensions) to b. */
static void region_src_text(const rgen *g, int n, heron__buf *b) {
  heron__buf acc = {0};
  heron__buf_puts(&acc, "0");
  for (int d = 0; d < n; d++) {
    heron__buf next = {0};
    heron__buf_printf(&next, "(%s) * %lld + e_%d", acc.data,
                      (long long)g->ts->dims[d], d);
    heron__buf_free(&acc);
    acc = next;
  }
  heron__buf_puts(b, acc.data);
  heron__buf_free(&acc);
}

/* The region of an input whose channels are their last dimension already
 * (NHWC): for every position, the channel slice is one consecutive run in
 * the input and in the region, copied as such (zeros where the position is
 * outside the input and past the channels). */
static void emit_channels_last(const rgen *g, int depth) {
  const heron__op *op = g->op;
  const heron__tensor *ts = g->ts;
  const heron__cpu_region *r = g->r;
  const char *cn = op->axes[r->cax].name;
  heron__buf off = {0}, src = {0};
  heron__buf_puts(&off, "0");
  ind(g, depth);
  heron__buf_puts(g->o, "{\n");
  int n = 0;
  for (int d = 0; d < ts->ndim - 1; d++) {
    int dp = depth + 1 + n;
    ind(g, dp);
    heron__buf_printf(g->o, "for (int64_t q_%d = 0; q_%d < %lld; q_%d++) {\n",
                      d, d, (long long)r->span[d], d);
    n++;
    emit_region_index(g, d, dp + 1, 1);
    emit_region_ok(g, d, d - 1, dp + 1);
    heron__buf_printf(&off, " + q_%d * %lldLL", d, (long long)r->rstr[d]);
  }
  region_src_text(g, ts->ndim - 1, &src);
  int di = depth + 1 + n, c = ts->ndim - 1;
  int64_t cdims = ts->dims[c], off0 = ts->index[c].offset;
  ind(g, di);
  heron__buf_printf(g->o, "%s *h_d = %s + %s;\n", g->type, g->dst, off.data);
  /* Channels b + offset .. inside the input and the tile. */
  ind(g, di);
  heron__buf_printf(g->o, "int64_t h_n = %lld - (%lld + b_%s);\n",
                    (long long)cdims, (long long)off0, cn);
  ind(g, di);
  heron__buf_printf(g->o, "if (h_n > %lld)\n", (long long)g->r->clen);
  ind(g, di + 1);
  heron__buf_printf(g->o, "h_n = %lld;\n", (long long)g->r->clen);
  ind(g, di);
  heron__buf_printf(g->o, "if (!h_ok%d || %lld + b_%s < 0 || h_n < 0)\n",
                    ts->ndim - 2, (long long)off0, cn);
  ind(g, di + 1);
  heron__buf_puts(g->o, "h_n = 0;\n");
  ind(g, di);
  heron__buf_printf(g->o, "const int64_t h_s = (%s) * %lld + %lld + b_%s;\n",
                    src.data, (long long)cdims, (long long)off0, cn);
  ind(g, di);
  heron__buf_puts(g->o, "for (int64_t l = 0; l < h_n; l++)\n");
  ind(g, di + 1);
  heron__buf_printf(g->o, "h_d[l] = (%s)%s[h_s + l];\n", g->type, g->src);
  ind(g, di);
  heron__buf_printf(g->o, "for (int64_t l = h_n; l < %lld; l++)\n",
                    (long long)r->cgp);
  ind(g, di + 1);
  heron__buf_puts(g->o, "h_d[l] = 0;\n");
  close_n(g, n, depth + 1);
  ind(g, depth);
  heron__buf_puts(g->o, "}\n");
  heron__buf_free(&off);
  heron__buf_free(&src);
}

/* For every position of the input the thread tile and the reduction-inner
 * slice read, once, at [positions of the other dimensions, row-major]
 * [channel axis, rounded], zeros outside the input and past the channel
 * axis's tile.  The loops run the outer dimensions, then the channel
 * axis, then the innermost other dimension, so that the reads of a line
 * are consecutive and the lines of the region it writes stay in the L1
 * cache across the channel axis; the line's positions inside the input
 * are found once and copied without a check, the ones outside zeroed. */
void heron__cpu_region_emit(heron__buf *o, const heron__op *op,
                            const heron__cpu_region *r, int depth,
                            const char *dst, const char *src,
                            const char *type) {
  const heron__tensor *ts = &op->in[r->act];
  rgen gg = {o, op, r, ts, dst, src, type}, *g = &gg;
  const char *cn = op->axes[r->cax].name;
  if (r->cdim == ts->ndim - 1) {
    emit_channels_last(g, depth);
    return;
  }
  int inner = -1; /* the innermost dimension other than the channel axis's */
  for (int d = 0; d < ts->ndim; d++)
    if (d != r->cdim)
      inner = d;
  heron__buf off = {0};
  ind(g, depth);
  heron__buf_puts(o, "{\n");
  int n = 0, last = -1;
  heron__buf_printf(&off, "l_%s", cn);
  /* e_<d> for every dimension but the channel axis's: the index at
   * position q_<d> (at position 0 for the inner dimension, whose line the
   * copy walks). */
  for (int d = 0; d < ts->ndim; d++) {
    if (d == r->cdim)
      continue;
    int dp = depth + 1 + n;
    if (d != inner) {
      ind(g, dp);
      heron__buf_printf(o, "for (int64_t q_%d = 0; q_%d < %lld; q_%d++) {\n", d,
                        d, (long long)r->span[d], d);
      n++;
      dp++;
      heron__buf_printf(&off, " + q_%d * %lldLL", d, (long long)r->rstr[d]);
    }
    emit_region_index(g, d, dp, d != inner);
    if (d != inner) {
      emit_region_ok(g, d, last, dp);
      last = d;
    }
  }
  int dc = depth + 1 + n;
  ind(g, dc);
  heron__buf_printf(o, "for (int64_t l_%s = 0; l_%s < %lld; l_%s++) {\n", cn,
                    cn, (long long)r->cgp, cn);
  int di = dc + 1;
  ind(g, di);
  heron__buf_printf(o, "const int64_t g_%s = b_%s + l_%s;\n", cn, cn, cn);
  ind(g, di);
  heron__buf_printf(o, "const int64_t e_%d = %lld + g_%s;\n", r->cdim,
                    (long long)ts->index[r->cdim].offset, cn);
  ind(g, di);
  heron__buf_puts(o, "const int h_line = ");
  if (last >= 0)
    heron__buf_printf(o, "h_ok%d && ", last);
  heron__buf_printf(o, "l_%s < %lld && e_%d >= 0 && e_%d < %lld;\n", cn,
                    (long long)g->r->clen, r->cdim, r->cdim,
                    (long long)ts->dims[r->cdim]);
  /* The input's row-major offset of e_0 .. e_<ndim-1>, and the stride of
   * the inner dimension in it. */
  heron__buf srcoff = {0};
  region_src_text(g, ts->ndim, &srcoff);
  int64_t sstride = 1;
  for (int d = inner + 1; d < ts->ndim; d++)
    sstride *= ts->dims[d];
  int64_t sp = r->span[inner], dim = ts->dims[inner];
  ind(g, di);
  heron__buf_printf(
      o, "int64_t h_lo = e_%d < 0 ? -e_%d : 0, h_hi = %lld - e_%d;\n", inner,
      inner, (long long)dim, inner);
  ind(g, di);
  heron__buf_printf(o, "if (!h_line || h_lo > %lld)\n", (long long)sp);
  ind(g, di + 1);
  heron__buf_printf(o, "h_lo = %lld;\n", (long long)sp);
  ind(g, di);
  heron__buf_printf(o, "if (h_hi > %lld)\n", (long long)sp);
  ind(g, di + 1);
  heron__buf_printf(o, "h_hi = %lld;\n", (long long)sp);
  ind(g, di);
  heron__buf_puts(o, "if (h_hi < h_lo)\n");
  ind(g, di + 1);
  heron__buf_puts(o, "h_hi = h_lo;\n");
  ind(g, di);
  heron__buf_printf(o, "%s *h_d = %s + %s;\n", type, dst, off.data);
  ind(g, di);
  heron__buf_printf(o, "const int64_t h_s = %s;\n", srcoff.data);
  ind(g, di);
  heron__buf_printf(o, "for (int64_t q = 0; q < h_lo; q++)\n");
  ind(g, di + 1);
  heron__buf_printf(o, "h_d[q * %lldLL] = 0;\n", (long long)r->rstr[inner]);
  ind(g, di);
  heron__buf_printf(o, "for (int64_t q = h_lo; q < h_hi; q++)\n");
  ind(g, di + 1);
  heron__buf_printf(o, "h_d[q * %lldLL] = (%s)%s[h_s + q * %lldLL];\n",
                    (long long)r->rstr[inner], type, src, (long long)sstride);
  ind(g, di);
  heron__buf_printf(o, "for (int64_t q = h_hi; q < %lld; q++)\n",
                    (long long)sp);
  ind(g, di + 1);
  heron__buf_printf(o, "h_d[q * %lldLL] = 0;\n", (long long)r->rstr[inner]);
  ind(g, dc);
  heron__buf_puts(o, "}\n");
  close_n(g, n, depth + 1);
  ind(g, depth);
  heron__buf_puts(o, "}\n");
  heron__buf_free(&srcoff);
  heron__buf_free(&off);
}
