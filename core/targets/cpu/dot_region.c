/* core/targets/cpu/dot_region.c - the region pack of the int8 and bf16
 * generator: the slice of the activation tensor a thread tile and a
 * reduction-inner slice read, each element once (instead of one row of k
 * per point), where it applies (heron__cpu_dot_plan_region) and its copy. */
#include "core/targets/cpu/dot.h"

/* Chooses the region pack of the activations where it applies and packs
 * fewer elements than one row of k per point: every dimension of the
 * activation an affine index with no divisor (a transposed convolution's
 * has one at strides above 1), and a reduction axis (the group axis) that the
 * weights read and the activation reads in one dimension of its own, as itself
 * (a convolution's input channels).  Its rounding to whole groups, once per
 * position of the other reduction axes, stays within the padded-work
 * bound of rule_dot_groups (125% of the slice).  A matrix op (its one
 * reduction the group axis) packs the same rows either way and keeps the
 * row pack.  Negative coefficients (a transposed convolution's kernel
 * offsets) move the region's origin: position q of dimension d is index
 * value q - neg[d] from the tile's origin. */
void heron__cpu_dot_plan_region(dgen *g) {
  const heron__op *op = g->op;
  const heron__tensor *ts = &op->in[g->act];
  g->region = 0;
  g->pa_elems = g->pa_pts * g->rip;
  int cax = -1, cdim = -1;
  for (int d = 0; d < ts->ndim; d++) {
    const heron__affine *ix = &ts->index[d];
    if (heron__affine_div(ix) != 1)
      return;
    int nlive = 0, r = -1;
    for (int a = 0; a < op->naxes; a++) {
      if (!live(g, a) || ix->coef[a] == 0)
        continue;
      nlive++;
      if (op->axes[a].kind == HERON__REDUCE && ix->coef[a] == 1)
        r = a;
    }
    if (nlive == 1 && r >= 0 && cax < 0 &&
        heron__tensor_reads(&op->in[g->wt], r)) {
      cax = r;
      cdim = d;
    }
  }
  if (cax < 0 || ts->ndim < 2)
    return;
  int64_t G = g->group;
  int64_t cgp = (g->len[cax][1] + G - 1) / G * G, rip = cgp;
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == HERON__REDUCE && live(g, a) && a != cax)
      rip *= g->len[a][1];
  if (4 * rip > 5 * g->ri)
    return;
  int64_t stride = cgp;
  for (int d = ts->ndim - 1; d >= 0; d--) {
    g->span[d] = 1;
    g->rstr[d] = 1;
    g->neg[d] = 0;
    if (d == cdim)
      continue;
    for (int a = 0; a < op->naxes; a++) {
      int64_t c = ts->index[d].coef[a];
      if (!live(g, a) || c == 0)
        continue;
      int64_t reach =
          (c < 0 ? -c : c) *
          ((op->axes[a].kind == HERON__SPATIAL ? g->thr[a] : g->len[a][1]) - 1);
      g->span[d] += reach;
      if (c < 0)
        g->neg[d] += reach;
    }
    g->rstr[d] = stride;
    stride *= g->span[d];
  }
  if (stride >= g->pa_elems)
    return;
  g->region = 1;
  g->cax = cax;
  g->cdim = cdim;
  g->cgp = cgp;
  g->rip = rip;
  g->ng = rip / G;
  g->pa_elems = stride;
}

static void emit_region_index(dgen *g, int d, int depth, int with_q) {
  const heron__op *op = g->op;
  const heron__affine *ix = &op->in[g->act].index[d];
  ind(g, depth);
  heron__buf_printf(g->o, "const int64_t e_%d = %lld", d,
                    (long long)ix->offset);
  for (int a = 0; a < op->naxes; a++)
    if (ix->coef[a] != 0 && live(g, a))
      heron__buf_printf(g->o, " + %lldLL * %s_%s", (long long)ix->coef[a],
                        op->axes[a].kind == HERON__SPATIAL ? "o" : "b",
                        op->axes[a].name);
  heron__buf_printf(g->o, " - %lld", (long long)g->neg[d]);
  if (with_q)
    heron__buf_printf(g->o, " + q_%d", d);
  heron__buf_puts(g->o, ";\n");
}

/* "const int h_ok<d> = [h_ok<prev> &&] e_<d> inside dimension d;": whether
 * the region's positions so far lie inside the activation tensor (prev < 0:
 * d is the first dimension checked). */
static void emit_region_ok(dgen *g, int d, int prev, int depth) {
  ind(g, depth);
  heron__buf_printf(g->o, "const int h_ok%d = ", d);
  if (prev >= 0)
    heron__buf_printf(g->o, "h_ok%d && ", prev);
  heron__buf_printf(g->o, "e_%d >= 0 && e_%d < %lld;\n", d, d,
                    (long long)g->op->in[g->act].dims[d]);
}

/* Appends the activation tensor's row-major offset of e_0 .. e_<n-1> (its
 * first n dimensions) to b. */
static void region_src_text(const dgen *g, int n, heron__buf *b) {
  const heron__tensor *ts = &g->op->in[g->act];
  heron__buf acc = {0};
  heron__buf_puts(&acc, "0");
  for (int d = 0; d < n; d++) {
    heron__buf next = {0};
    heron__buf_printf(&next, "(%s) * %lld + e_%d", acc.data,
                      (long long)ts->dims[d], d);
    heron__buf_free(&acc);
    acc = next;
  }
  heron__buf_puts(b, acc.data);
  heron__buf_free(&acc);
}

static void emit_pack_region_cl(dgen *g, int depth);

/* The region pack: for every position of the activation tensor the thread
 * tile and the reduction-inner slice read, once, at
 * [positions of the other dimensions, row-major][group axis, rounded],
 * zeros outside the tensor and past the group axis's tile.  The loops run
 * the outer dimensions, then the group axis, then the innermost other
 * dimension, so that the reads of a line are consecutive and the lines of
 * the pack it writes stay in the L1 cache across the group axis; the
 * line's positions inside the tensor are found once and copied without a
 * check, the ones outside zeroed. */
void heron__cpu_dot_emit_pack_region(dgen *g, int depth) {
  const heron__op *op = g->op;
  const heron__tensor *ts = &op->in[g->act];
  const char *cn = op->axes[g->cax].name;
  if (g->cdim == ts->ndim - 1) {
    emit_pack_region_cl(g, depth);
    return;
  }
  int inner = -1; /* the innermost dimension other than the group axis's */
  for (int d = 0; d < ts->ndim; d++)
    if (d != g->cdim)
      inner = d;
  heron__buf off = {0};
  ind(g, depth);
  heron__buf_puts(g->o, "{\n");
  int n = 0, last = -1;
  heron__buf_printf(&off, "l_%s", cn);
  /* e_<d> for every dimension but the group axis's: the index at position
   * q_<d> (at position 0 for the inner dimension, whose line the copy
   * walks). */
  for (int d = 0; d < ts->ndim; d++) {
    if (d == g->cdim)
      continue;
    int dp = depth + 1 + n;
    if (d != inner) {
      ind(g, dp);
      heron__buf_printf(g->o, "for (int64_t q_%d = 0; q_%d < %lld; q_%d++) {\n",
                        d, d, (long long)g->span[d], d);
      n++;
      dp++;
      heron__buf_printf(&off, " + q_%d * %lldLL", d, (long long)g->rstr[d]);
    }
    emit_region_index(g, d, dp, d != inner);
    if (d != inner) {
      emit_region_ok(g, d, last, dp);
      last = d;
    }
  }
  int dc = depth + 1 + n;
  ind(g, dc);
  heron__buf_printf(g->o, "for (int64_t l_%s = 0; l_%s < %lld; l_%s++) {\n", cn,
                    cn, (long long)g->cgp, cn);
  int di = dc + 1;
  ind(g, di);
  heron__buf_printf(g->o, "const int64_t g_%s = b_%s + l_%s;\n", cn, cn, cn);
  ind(g, di);
  heron__buf_printf(g->o, "const int64_t e_%d = %lld + g_%s;\n", g->cdim,
                    (long long)ts->index[g->cdim].offset, cn);
  ind(g, di);
  heron__buf_puts(g->o, "const int h_line = ");
  if (last >= 0)
    heron__buf_printf(g->o, "h_ok%d && ", last);
  heron__buf_printf(g->o, "l_%s < %lld && e_%d >= 0 && e_%d < %lld;\n", cn,
                    (long long)g->len[g->cax][1], g->cdim, g->cdim,
                    (long long)ts->dims[g->cdim]);
  /* The tensor's row-major offset of e_0 .. e_<ndim-1>, and the stride of
   * the inner dimension in it. */
  heron__buf src = {0};
  region_src_text(g, ts->ndim, &src);
  int64_t sstride = 1;
  for (int d = inner + 1; d < ts->ndim; d++)
    sstride *= ts->dims[d];
  int64_t sp = g->span[inner], dim = ts->dims[inner];
  ind(g, di);
  heron__buf_printf(
      g->o, "int64_t h_lo = e_%d < 0 ? -e_%d : 0, h_hi = %lld - e_%d;\n", inner,
      inner, (long long)dim, inner);
  ind(g, di);
  heron__buf_printf(g->o, "if (!h_line || h_lo > %lld)\n", (long long)sp);
  ind(g, di + 1);
  heron__buf_printf(g->o, "h_lo = %lld;\n", (long long)sp);
  ind(g, di);
  heron__buf_printf(g->o, "if (h_hi > %lld)\n", (long long)sp);
  ind(g, di + 1);
  heron__buf_printf(g->o, "h_hi = %lld;\n", (long long)sp);
  ind(g, di);
  heron__buf_puts(g->o, "if (h_hi < h_lo)\n");
  ind(g, di + 1);
  heron__buf_puts(g->o, "h_hi = h_lo;\n");
  ind(g, di);
  heron__buf_printf(g->o, "%s *h_d = h_pa + %s;\n", act_pack_type(g), off.data);
  ind(g, di);
  heron__buf_printf(g->o, "const int64_t h_s = %s;\n", src.data);
  ind(g, di);
  heron__buf_printf(g->o, "for (int64_t q = 0; q < h_lo; q++)\n");
  ind(g, di + 1);
  heron__buf_printf(g->o, "h_d[q * %lldLL] = 0;\n", (long long)g->rstr[inner]);
  ind(g, di);
  heron__buf_printf(g->o, "for (int64_t q = h_lo; q < h_hi; q++)\n");
  ind(g, di + 1);
  heron__buf_printf(g->o, "h_d[q * %lldLL] = (%s)t_%s[h_s + q * %lldLL];\n",
                    (long long)g->rstr[inner], act_pack_type(g), ts->name,
                    (long long)sstride);
  ind(g, di);
  heron__buf_printf(g->o, "for (int64_t q = h_hi; q < %lld; q++)\n",
                    (long long)sp);
  ind(g, di + 1);
  heron__buf_printf(g->o, "h_d[q * %lldLL] = 0;\n", (long long)g->rstr[inner]);
  ind(g, dc);
  heron__buf_puts(g->o, "}\n");
  close_n(g, n, depth + 1);
  ind(g, depth);
  heron__buf_puts(g->o, "}\n");
  heron__buf_free(&src);
  heron__buf_free(&off);
}

/* The region pack of activations whose channels are their last dimension
 * already (NHWC): for every position, the channel slice is one
 * consecutive run in the tensor and in the pack, copied as such (zeros
 * where the position is outside the tensor and past the channels). */
static void emit_pack_region_cl(dgen *g, int depth) {
  const heron__op *op = g->op;
  const heron__tensor *ts = &op->in[g->act];
  const char *cn = op->axes[g->cax].name;
  heron__buf off = {0}, src = {0};
  heron__buf_puts(&off, "0");
  ind(g, depth);
  heron__buf_puts(g->o, "{\n");
  int n = 0;
  for (int d = 0; d < ts->ndim - 1; d++) {
    int dp = depth + 1 + n;
    ind(g, dp);
    heron__buf_printf(g->o, "for (int64_t q_%d = 0; q_%d < %lld; q_%d++) {\n",
                      d, d, (long long)g->span[d], d);
    n++;
    emit_region_index(g, d, dp + 1, 1);
    emit_region_ok(g, d, d - 1, dp + 1);
    heron__buf_printf(&off, " + q_%d * %lldLL", d, (long long)g->rstr[d]);
  }
  region_src_text(g, ts->ndim - 1, &src);
  int di = depth + 1 + n, c = ts->ndim - 1;
  int64_t cdims = ts->dims[c], off0 = ts->index[c].offset;
  ind(g, di);
  heron__buf_printf(g->o, "%s *h_d = h_pa + %s;\n", act_pack_type(g), off.data);
  /* Channels b + offset .. inside the tensor and the tile. */
  ind(g, di);
  heron__buf_printf(g->o, "int64_t h_n = %lld - (%lld + b_%s);\n",
                    (long long)cdims, (long long)off0, cn);
  ind(g, di);
  heron__buf_printf(g->o, "if (h_n > %lld)\n", (long long)g->len[g->cax][1]);
  ind(g, di + 1);
  heron__buf_printf(g->o, "h_n = %lld;\n", (long long)g->len[g->cax][1]);
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
  heron__buf_printf(g->o, "h_d[l] = (%s)t_%s[h_s + l];\n", act_pack_type(g),
                    ts->name);
  ind(g, di);
  heron__buf_printf(g->o, "for (int64_t l = h_n; l < %lld; l++)\n",
                    (long long)g->cgp);
  ind(g, di + 1);
  heron__buf_puts(g->o, "h_d[l] = 0;\n");
  close_n(g, n, depth + 1);
  ind(g, depth);
  heron__buf_puts(g->o, "}\n");
  heron__buf_free(&off);
  heron__buf_free(&src);
}
