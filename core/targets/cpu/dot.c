/* core/targets/cpu/dot.c - C source for one config of the cpu template in
 * int8 (u8 activations x s8 weights -> s32) and bf16 (-> fp32): the
 * dot-product micro-kernels (Tensorize with vpdpbusd, vdpbf16ps or their
 * exact AVX2 forms) and the packs in the layouts those instructions read.
 *
 * The loop nest is the template's (core/targets/cpu/template.h), with both
 * inputs packed at every reduction-outer step:
 *
 *   parallel for every thread tile (fused level-0 tiles)
 *     for every reduction-outer step
 *       pack the activations: [point of the thread tile][k], or as a
 *         region ([n][h][w][ci] of the input the tile reads, each element
 *         once; see plan_region)
 *       pack the weights:     [point][k / G][lane of the thread's vector
 *                              axis tile][G]
 *         (k the flattened reduction-inner slice, rounded up to a whole
 *          group of G steps; zeros past every edge, in the padding of a
 *          convolution and in the rounding, so no edge needs a guard
 *          below)
 *       for the cache tiles (level 1) and register tiles (level 2)
 *         acc = 0
 *         for every group of G reduction steps (#pragma GCC unroll)
 *           load each weight vector of the register tile (vec lanes x G)
 *           for each row: broadcast its 32-bit group of activations and
 *             acc[row][vector] = dot(acc, broadcast, weights)
 *         store the lanes inside the extent: = acc on the first
 *         reduction-outer step, += acc later, epilogue on the last
 *
 * With the weights prepacked (op->prepack, a network's weights at
 * inference) the weight pack leaves the call: heron_prepack makes every
 * block of it once, with the same loops, into one copy laid out
 *
 *   [level-0 tile of each spatial axis the weights read (the vector axis
 *    included)] [reduction-outer step] [the block above]
 *
 * and the kernel points h_pw at its tile's and step's block.
 *
 * At vec 1 the same packs are read by plain C.  The intrinsics come from
 * <immintrin.h>, or with -DHERON_EMULATE_ISA from the scalar definitions
 * of core/targets/cpu/isa_emu.c, emitted into the source (its prelude,
 * under an include guard so that sources may be concatenated).
 */
#include <stdio.h>
#include <string.h>

#include "core/targets/cpu/template.h"

/* A cap on the accumulators of one register tile, as in cpu_codegen.c:
 * the register rule keeps real tiles far below it. */
#define MAX_ACC 4096

typedef struct dgen {
  const heron__template *t;
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
  /* The activations packed as a region (see plan_region): the slice of
   * the activation tensor the thread tile and the reduction-inner slice
   * touch, each element once, with the group axis cax innermost and
   * rounded up to cgp (a whole number of groups), instead of one row of
   * k per point (im2col, which copies a convolution's input KH x KW
   * times).  The reduction order is then the other reduction axes (axis
   * order), then cax; group h_g of a row starts at h_go[h_g] in it. */
  int region;
  int cax, cdim; /* the group axis and the activation dimension it indexes */
  int64_t cgp;   /* cax's inner tile rounded up to a whole group */
  int64_t span[HERON__MAX_DIMS]; /* positions of each other dimension */
  int64_t neg[HERON__MAX_DIMS];  /* position of the local origin (> 0 where
                                    a coefficient is negative) */
  int64_t rstr[HERON__MAX_DIMS]; /* their strides in the region (cdim: 1) */
  int64_t pa_elems;              /* elements of the activation pack */
} dgen;

static void ind(dgen *g, int depth) {
  for (int i = 0; i < depth; i++)
    heron__buf_puts(g->o, "  ");
}

/* Whether axis a takes part in loops and indices (extent > 1). */
static int live(const dgen *g, int a) { return g->op->axes[a].extent > 1; }

static const heron__tensor *buf_tensor(const heron__op *op, int ti) {
  if (ti < op->ninputs)
    return &op->in[ti];
  return ti == op->ninputs ? &op->out : &op->bias;
}

/* The C element type of buffer ti. */
static const char *ctype(const heron__op *op, int ti) {
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
static const char *act_pack_type(const dgen *g) {
  if (g->t->dot == HERON__DOT_I8_AVX2)
    return "int16_t";
  return ctype(g->op, g->act);
}

/* Appends the read of tensor ti at the global coordinates g_<axis>: into
 * cond the range and divisibility checks of its guarded dimensions ("1"
 * when none), into off its row-major offset. */
static void element_text(const dgen *g, int ti, heron__buf *cond,
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
          (g->region && (a == g->cax) != pass))
        continue;
      const char *nm = op->axes[a].name;
      int64_t len = g->region && a == g->cax ? g->cgp : g->len[a][1];
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

static void close_n(dgen *g, int n, int depth) {
  for (int i = n - 1; i >= 0; i--) {
    ind(g, depth + i);
    heron__buf_puts(g->o, "}\n");
  }
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
static void emit_pack_act(dgen *g, int depth) {
  heron__buf inr = {0}, cond = {0}, off = {0};
  heron__buf_puts(&inr, "1");
  ind(g, depth);
  heron__buf_puts(g->o, "{\n");
  ind(g, depth + 1);
  heron__buf_printf(g->o, "%s *h_q = h_pa;\n", act_pack_type(g));
  int ns = open_spatial_pack(g, g->act, depth + 1, &inr);
  int nr = open_reduce_inner(g, depth + 1 + ns, &inr);
  element_text(g, g->act, &cond, &off);
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
static void emit_pack_region(dgen *g, int depth) {
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

/* The weight pack: for every point of the thread tile the weights read
 * besides the vector axis, element (k, lane) at [k / G][lane][k % G]. */
static void emit_pack_weight(dgen *g, int depth) {
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
  element_text(g, g->wt, &cond, &off);
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

/* ---- the register tile ---------------------------------------------------
 * Rows are the points of the register tile over the live spatial axes
 * other than the vector axis (row-major, in axis order); every row has
 * nvec = reg[v] / vec accumulators. */

static int64_t count_rows(const dgen *g) {
  int64_t n = 1;
  for (int a = 0; a < g->op->naxes; a++)
    if (g->op->axes[a].kind == HERON__SPATIAL && live(g, a) && a != g->vaxis)
      n *= g->reg[a];
  return n;
}

/* The offsets of row r inside the register tile, per axis. */
static void row_offsets(const dgen *g, int64_t r, int64_t *off) {
  for (int a = g->op->naxes - 1; a >= 0; a--) {
    off[a] = 0;
    if (g->op->axes[a].kind != HERON__SPATIAL || !live(g, a) || a == g->vaxis)
      continue;
    off[a] = r % g->reg[a];
    r /= g->reg[a];
  }
}

/* The pack point (row-major over the thread tile of the axes input ti
 * reads, the vector axis left out) of row r, as a C expression of the
 * register tile's local origin r_<a>. */
static void pack_point_text(const dgen *g, int ti, const int64_t *off,
                            heron__buf *b) {
  const heron__op *op = g->op;
  heron__buf acc = {0};
  heron__buf_puts(&acc, "0");
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__SPATIAL || !live(g, a) || a == g->vaxis ||
        !heron__tensor_reads(&op->in[ti], a))
      continue;
    heron__buf next = {0};
    heron__buf_printf(&next, "(%s) * %lld + (r_%s + %lld)", acc.data,
                      (long long)g->thr[a], op->axes[a].name,
                      (long long)off[a]);
    heron__buf_free(&acc);
    acc = next;
  }
  heron__buf_printf(b, "(%s)", acc.data);
  heron__buf_free(&acc);
}

/* How far one step of axis a moves in the region pack: the sum over the
 * activation's dimensions (the group axis's left out) of a's coefficient
 * times the dimension's stride in the region. */
static int64_t region_coef(const dgen *g, int a) {
  const heron__tensor *ts = &g->op->in[g->act];
  int64_t c = 0;
  for (int d = 0; d < ts->ndim; d++)
    if (d != g->cdim)
      c += ts->index[d].coef[a] * g->rstr[d];
  return c;
}

/* The offset in the region pack of row r's first element, from the
 * register tile's local origin r_<a>: the spatial part of each
 * dimension's index, times the dimension's stride. */
static void region_point_text(const dgen *g, const int64_t *off,
                              heron__buf *b) {
  const heron__op *op = g->op;
  const heron__tensor *ts = &op->in[g->act];
  int64_t origin = 0;
  for (int d = 0; d < ts->ndim; d++)
    if (d != g->cdim)
      origin += g->neg[d] * g->rstr[d];
  heron__buf_printf(b, "(%lldLL", (long long)origin);
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == HERON__SPATIAL && live(g, a) &&
        region_coef(g, a) != 0)
      heron__buf_printf(b, " + (r_%s + %lld) * %lldLL", op->axes[a].name,
                        (long long)off[a], (long long)region_coef(g, a));
  heron__buf_puts(b, ")");
}

/* How far row r's activations lie from row 0's in the pack (elements):
 * the constant part of its point, whose offsets are compile-time. */
static int64_t act_delta(const dgen *g, int64_t r) {
  const heron__op *op = g->op;
  const heron__tensor *ts = &op->in[g->act];
  int64_t off[HERON__MAX_AXES], delta = 0, stride = 1;
  row_offsets(g, r, off);
  for (int a = op->naxes - 1; a >= 0; a--) {
    if (op->axes[a].kind != HERON__SPATIAL || !live(g, a) || a == g->vaxis ||
        !heron__tensor_reads(ts, a))
      continue;
    if (g->region) {
      delta += off[a] * region_coef(g, a);
    } else {
      delta += off[a] * stride * g->rip;
      stride *= g->thr[a];
    }
  }
  return delta;
}

/* static const int32_t h_go[groups]: where each group of the reduction
 * order (the other reduction axes row-major, then the group axis in
 * groups) starts in the region pack, from a row's first element. */
static void emit_group_table(dgen *g, int depth) {
  const heron__op *op = g->op;
  int64_t per = g->cgp / g->group;
  ind(g, depth);
  heron__buf_printf(g->o, "static const int32_t h_go[%lld] = {",
                    (long long)g->ng);
  for (int64_t h = 0; h < g->ng; h++) {
    int64_t pos = h / per, o = (h % per) * g->group;
    for (int a = op->naxes - 1; a >= 0; a--) {
      if (op->axes[a].kind != HERON__REDUCE || !live(g, a) || a == g->cax)
        continue;
      o += (pos % g->len[a][1]) * region_coef(g, a);
      pos /= g->len[a][1];
    }
    heron__buf_printf(g->o, "%s%lld", h ? (h % 16 ? ", " : ",\n    ") : "",
                      (long long)o);
  }
  heron__buf_puts(g->o, "};\n");
}

/* The key of row r's weights: its offsets along the axes the weights read
 * (rows differing only elsewhere share their weight vectors). */
static int64_t weight_key(const dgen *g, int64_t r) {
  int64_t off[HERON__MAX_AXES], key = 0;
  row_offsets(g, r, off);
  for (int a = 0; a < g->op->naxes; a++)
    if (g->op->axes[a].kind == HERON__SPATIAL && live(g, a) && a != g->vaxis &&
        heron__tensor_reads(&g->op->in[g->wt], a))
      key = key * g->reg[a] + off[a];
  return key;
}

/* The instructions of one variant at the kernel's vector width. */
typedef struct isa {
  const char *acc_t; /* accumulator type */
  const char *zero;  /* its zero */
  const char *wload; /* weight vector load of pointer %s */
  const char *w_t;   /* weight vector type */
  const char *bcast; /* broadcast of a 32-bit int %s */
  const char *b_t;   /* broadcast type */
  const char *dot;   /* acc = dot(acc %1, broadcast %2, weights %3) */
  const char *store; /* store acc %2 to the lanes array %1 */
  const char *vload; /* load a vector of outputs from %s */
  const char *vadd;  /* the sum of two accumulator vectors %1, %2 */
} isa;

static isa pick_isa(const dgen *g) {
  int v16 = g->vec == 16;
  switch (g->t->dot) {
  case HERON__DOT_VNNI:
  case HERON__DOT_AVX_VNNI:
    return (isa){
        v16 ? "__m512i" : "__m256i",
        v16 ? "_mm512_setzero_si512()" : "_mm256_setzero_si256()",
        v16 ? "_mm512_loadu_si512(%s)"
            : "_mm256_loadu_si256((const __m256i *)(%s))",
        v16 ? "__m512i" : "__m256i",
        v16 ? "_mm512_set1_epi32(%s)" : "_mm256_set1_epi32(%s)",
        v16 ? "__m512i" : "__m256i",
        v16                            ? "H_DPBUSD512(%1$s, %2$s, %3$s);"
        : g->t->dot == HERON__DOT_VNNI ? "H_DPBUSD256(%1$s, %2$s, %3$s);"
                                       : "H_DPBUSD256_AVX(%1$s, %2$s, %3$s);",
        v16 ? "_mm512_storeu_si512(%s, %s);"
            : "_mm256_storeu_si256((__m256i *)(%s), %s);",
        v16 ? "_mm512_loadu_si512(%s)"
            : "_mm256_loadu_si256((const __m256i *)(%s))",
        v16 ? "_mm512_add_epi32(%1$s, %2$s)" : "_mm256_add_epi32(%1$s, %2$s)"};
  case HERON__DOT_I8_AVX2:
    return (isa){
        "__m256i",
        "_mm256_setzero_si256()",
        "_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(%s)))",
        "__m256i",
        "_mm256_set1_epi32(%s)",
        "__m256i",
        "%1$s = _mm256_add_epi32(%1$s, _mm256_madd_epi16(%2$s, %3$s));",
        "_mm256_storeu_si256((__m256i *)(%s), %s);",
        "_mm256_loadu_si256((const __m256i *)(%s))",
        "_mm256_add_epi32(%1$s, %2$s)"};
  case HERON__DOT_BF16:
    return (isa){
        v16 ? "__m512" : "__m256",
        v16 ? "_mm512_setzero_ps()" : "_mm256_setzero_ps()",
        v16 ? "_mm512_loadu_si512(%s)"
            : "_mm256_loadu_si256((const __m256i *)(%s))",
        v16 ? "__m512i" : "__m256i",
        v16 ? "_mm512_set1_epi32(%s)" : "_mm256_set1_epi32(%s)",
        v16 ? "__m512i" : "__m256i",
        v16 ? "H_DPBF16_512(%1$s, %2$s, %3$s);"
            : "H_DPBF16_256(%1$s, %2$s, %3$s);",
        v16 ? "_mm512_storeu_ps(%s, %s);" : "_mm256_storeu_ps(%s, %s);",
        v16 ? "_mm512_loadu_ps(%s)" : "_mm256_loadu_ps(%s)",
        v16 ? "_mm512_add_ps(%1$s, %2$s)" : "_mm256_add_ps(%1$s, %2$s)"};
  default: /* BF16_AVX2: pairs split into odd (high) and even (low) fp32 */
    return (isa){"__m256",
                 "_mm256_setzero_ps()",
                 "_mm256_loadu_si256((const __m256i *)(%s))",
                 "__m256i",
                 "_mm256_set1_epi32(%s)",
                 "__m256i",
                 "%1$s = _mm256_fmadd_ps(h_hi(%2$s), h_hi(%3$s), %1$s);\n"
                 "%1$s = _mm256_fmadd_ps(h_lo(%2$s), h_lo(%3$s), %1$s);",
                 "_mm256_storeu_ps(%s, %s);",
                 "_mm256_loadu_ps(%s)",
                 "_mm256_add_ps(%1$s, %2$s)"};
  }
}

/* Appends fmt with %1$s..%3$s replaced by a, b, c (the positional
 * arguments of the isa strings, substituted by hand so the format stays
 * a plain string). */
static void subst(heron__buf *o, const char *fmt, const char *a, const char *b,
                  const char *c) {
  for (const char *p = fmt; *p; p++) {
    if (p[0] == '%' && p[1] >= '1' && p[1] <= '3' && p[2] == '$' &&
        p[3] == 's') {
      heron__buf_puts(o, p[1] == '1' ? a : p[1] == '2' ? b : c);
      p += 3;
    } else if (p[0] == '%' && p[1] == 's') {
      /* Plain %s strings take a, then b. */
      heron__buf_puts(o, a);
      a = b;
      p += 1;
    } else {
      heron__buf_printf(o, "%c", *p);
    }
  }
}

/* The group loop of the register tile: accumulators h_c<r>_<j>. */
static void emit_dot_loop(dgen *g, int depth, int64_t rows, int64_t nvec) {
  const heron__op *op = g->op;
  isa is = pick_isa(g);
  int G = g->group;
  int64_t wrow = g->tv * G; /* weight elements per group step */
  int scalar = g->vec == 1;
  const char *acc_t = g->int8 ? "int32_t" : "float";
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < nvec; j++) {
      ind(g, depth);
      if (scalar)
        heron__buf_printf(g->o, "%s h_c%lld_%lld = 0;\n", acc_t, (long long)r,
                          (long long)j);
      else
        heron__buf_printf(g->o, "%s h_c%lld_%lld = %s;\n", is.acc_t,
                          (long long)r, (long long)j, is.zero);
    }
  /* The first row's pointer into the activation pack (the others lie a
   * constant distance from it, act_delta: one pointer register for the
   * whole tile), weight pointers per key. */
  {
    int64_t off0[HERON__MAX_AXES];
    row_offsets(g, 0, off0);
    heron__buf pt = {0};
    ind(g, depth);
    if (g->region) {
      region_point_text(g, off0, &pt);
      heron__buf_printf(g->o, "const %s *h_a0 = h_pa + %s;\n", act_pack_type(g),
                        pt.data);
    } else {
      pack_point_text(g, g->act, off0, &pt);
      heron__buf_printf(g->o, "const %s *h_a0 = h_pa + %s * %lld;\n",
                        act_pack_type(g), pt.data, (long long)g->rip);
    }
    heron__buf_free(&pt);
  }
  for (int64_t r = 0; r < rows; r++) {
    int64_t off[HERON__MAX_AXES];
    row_offsets(g, r, off);
    heron__buf pw = {0};
    pack_point_text(g, g->wt, off, &pw);
    ind(g, depth);
    heron__buf_printf(g->o,
                      "const %s *h_w%lld = h_pw + %s * %lld + r_%s * %d;\n",
                      ctype(op, g->wt), (long long)r, pw.data,
                      (long long)(g->rip * g->tv), op->axes[g->vaxis].name, G);
    heron__buf_free(&pw);
  }
  /* A region's groups lie apart: their offsets from the row's start, in
   * the weights' order, as a table (constants once unrolled). */
  int table = g->region && g->rip > g->cgp;
  if (table)
    emit_group_table(g, depth);
  ind(g, depth);
  heron__buf_printf(g->o, "#pragma GCC unroll %d\n", g->unroll);
  ind(g, depth);
  heron__buf_printf(g->o, "for (int64_t h_g = 0; h_g < %lld; h_g++) {\n",
                    (long long)g->ng);
  int d = depth + 1;
  ind(g, d);
  if (table)
    heron__buf_printf(g->o, "const %s *h_ga = h_a0 + h_go[h_g];\n",
                      act_pack_type(g));
  else
    heron__buf_printf(g->o, "const %s *h_ga = h_a0 + h_g * %d;\n",
                      act_pack_type(g), G);
  /* Weight vectors, loaded once per distinct weight key. */
  int64_t seen[MAX_ACC];
  int nseen = 0;
  for (int64_t r = 0; r < rows; r++) {
    int64_t key = weight_key(g, r);
    int dup = 0;
    for (int s = 0; s < nseen; s++)
      dup |= seen[s] == key;
    if (dup)
      continue;
    seen[nseen++] = key;
    for (int64_t j = 0; j < nvec; j++) {
      char p[96];
      snprintf(p, sizeof p, "h_w%lld + h_g * %lld + %lld", (long long)r,
               (long long)wrow, (long long)(j * g->vec * G));
      ind(g, d);
      if (scalar) {
        heron__buf_printf(g->o, "const %s *h_v%lld_%lld = %s;\n",
                          ctype(op, g->wt), (long long)key, (long long)j, p);
      } else {
        heron__buf_printf(g->o, "const %s h_v%lld_%lld = ", is.w_t,
                          (long long)key, (long long)j);
        subst(g->o, is.wload, p, "", "");
        heron__buf_puts(g->o, ";\n");
      }
    }
  }
  for (int64_t r = 0; r < rows; r++) {
    int64_t key = weight_key(g, r);
    if (scalar) {
      ind(g, d);
      heron__buf_printf(g->o, "const %s *h_b%lld = h_ga + %lldLL;\n",
                        act_pack_type(g), (long long)r,
                        (long long)act_delta(g, r));
      for (int64_t j = 0; j < nvec; j++) {
        char acc[48];
        snprintf(acc, sizeof acc, "h_c%lld_%lld", (long long)r, (long long)j);
        ind(g, d);
        if (g->int8) {
          heron__buf_printf(g->o, "%s +=", acc);
          for (int e = 0; e < G; e++)
            heron__buf_printf(g->o,
                              "%s (int32_t)h_b%lld[%d] * h_v%lld_%lld[%d]",
                              e ? " +" : "", (long long)r, e, (long long)key,
                              (long long)j, e);
          heron__buf_puts(g->o, ";\n");
        } else {
          /* vdpbf16ps's order: the odd element's product, then the even. */
          heron__buf_printf(
              g->o, "%s = %s + h_bf(h_b%lld[1]) * h_bf(h_v%lld_%lld[1]);\n",
              acc, acc, (long long)r, (long long)key, (long long)j);
          ind(g, d);
          heron__buf_printf(
              g->o, "%s = %s + h_bf(h_b%lld[0]) * h_bf(h_v%lld_%lld[0]);\n",
              acc, acc, (long long)r, (long long)key, (long long)j);
          /* The sum passes through an empty asm at every group step, which
           * keeps GCC from vectorizing this loop (see H_OPAQUE). */
          ind(g, d);
          heron__buf_printf(g->o, "H_OPAQUE(%s);\n", acc);
        }
      }
      continue;
    }
    char bc[64];
    snprintf(bc, sizeof bc, "h_ld32(h_ga + %lldLL)",
             (long long)act_delta(g, r));
    ind(g, d);
    heron__buf_printf(g->o, "const %s h_b%lld = ", is.b_t, (long long)r);
    subst(g->o, is.bcast, bc, "", "");
    heron__buf_puts(g->o, ";\n");
    for (int64_t j = 0; j < nvec; j++) {
      char acc[48], b[32], w[48];
      snprintf(acc, sizeof acc, "h_c%lld_%lld", (long long)r, (long long)j);
      snprintf(b, sizeof b, "h_b%lld", (long long)r);
      snprintf(w, sizeof w, "h_v%lld_%lld", (long long)key, (long long)j);
      ind(g, d);
      subst(g->o, is.dot, acc, b, w);
      heron__buf_puts(g->o, "\n");
    }
  }
  ind(g, depth);
  heron__buf_puts(g->o, "}\n");
}

/* The epilogue of one output value x (a C lvalue of the output type) at
 * the channel coordinate text ch. */
static void emit_epilogue(dgen *g, int depth, const char *ch) {
  const heron__op *op = g->op;
  if (!op->epilogue)
    return;
  ind(g, depth);
  heron__buf_puts(g->o, "if (h_last) {\n");
  if (op->epilogue & HERON__EPI_BIAS) {
    ind(g, depth + 1);
    heron__buf_printf(g->o, "h_x += t_%s[%s];\n", op->bias.name, ch);
  }
  if (op->epilogue & HERON__EPI_RELU) {
    ind(g, depth + 1);
    heron__buf_puts(g->o, "h_x = h_x > 0 ? h_x : 0;\n");
  }
  ind(g, depth);
  heron__buf_puts(g->o, "}\n");
}

/* The distance in the output between consecutive lanes of the vector
 * axis, from the coefficients of its index (divisors and bounds aside). */
static int64_t out_lane_lin(const dgen *g) {
  const heron__tensor *o = &g->op->out;
  int64_t stride = 1, lin = 0;
  for (int d = o->ndim - 1; d >= 0; d--) {
    lin += stride * o->index[d].coef[g->vaxis];
    stride *= o->dims[d];
  }
  return lin;
}

/* Whether the output's elements along the vector axis are consecutive
 * (gemm's and bmm's j, gemv's i; not an NCHW convolution's channels). */
static int contiguous_out(const dgen *g) { return out_lane_lin(g) == 1; }

/* out_lane_lin where every dimension of the output's index is a plain
 * affine one (no divisor, no bound to check); 0 otherwise. */
static int64_t out_lane_stride(const dgen *g) {
  const heron__tensor *o = &g->op->out;
  if (o->bounded)
    return 0;
  for (int d = 0; d < o->ndim; d++)
    if (heron__affine_div(&o->index[d]) != 1)
      return 0;
  return out_lane_lin(g);
}

/* Stores the register tile: every row inside the extent of its axes, the
 * lanes of each vector inside the vector axis. */
static void emit_store(dgen *g, int depth, int64_t rows, int64_t nvec) {
  const heron__op *op = g->op;
  const char *out_t = ctype(op, op->ninputs);
  const char *vn = op->axes[g->vaxis].name;
  int64_t vext = op->axes[g->vaxis].extent;
  isa is = pick_isa(g);
  for (int64_t r = 0; r < rows; r++) {
    int64_t off[HERON__MAX_AXES];
    row_offsets(g, r, off);
    ind(g, depth);
    heron__buf_puts(g->o, "if (1");
    for (int a = 0; a < op->naxes; a++)
      if (op->axes[a].kind == HERON__SPATIAL && live(g, a) && a != g->vaxis &&
          g->ragged[a])
        heron__buf_printf(g->o, " && o_%s + r_%s + %lld < %lld",
                          op->axes[a].name, op->axes[a].name, (long long)off[a],
                          (long long)op->axes[a].extent);
    heron__buf_puts(g->o, ") {\n");
    int d = depth + 1;
    for (int a = 0; a < op->naxes; a++)
      if (op->axes[a].kind == HERON__SPATIAL && live(g, a) && a != g->vaxis) {
        ind(g, d);
        heron__buf_printf(g->o, "const int64_t g_%s = o_%s + r_%s + %lld;\n",
                          op->axes[a].name, op->axes[a].name, op->axes[a].name,
                          (long long)off[a]);
      }
    for (int64_t j = 0; j < nvec; j++) {
      ind(g, d);
      heron__buf_puts(g->o, "{\n");
      ind(g, d + 1);
      heron__buf_printf(g->o, "const int64_t h_v0 = o_%s + r_%s + %lld;\n", vn,
                        vn, (long long)(j * g->vec));
      char acc[48];
      snprintf(acc, sizeof acc, "h_c%lld_%lld", (long long)r, (long long)j);
      ind(g, d + 1);
      if (g->ragged[g->vaxis])
        heron__buf_printf(g->o,
                          "const int64_t h_n = %lld - h_v0 < %d ? %lld - h_v0 "
                          ": %d;\n",
                          (long long)vext, g->vec, (long long)vext, g->vec);
      else
        heron__buf_printf(g->o, "const int64_t h_n = %d;\n", g->vec);
      int fast = g->vec > 1 && contiguous_out(g);
      if (fast) {
        /* A whole vector of contiguous outputs: one load, add and store
         * (the epilogue's last step and the edge go lane by lane). */
        ind(g, d + 1);
        heron__buf_printf(g->o, "if (h_n == %d%s) {\n", g->vec,
                          op->epilogue ? " && !h_last" : "");
        ind(g, d + 2);
        heron__buf_printf(g->o, "const int64_t g_%s = h_v0;\n", vn);
        heron__buf cond = {0}, o = {0};
        element_text(g, op->ninputs, &cond, &o);
        ind(g, d + 2);
        heron__buf_printf(g->o, "%s *h_o = &t_%s[%s];\n", out_t, op->out.name,
                          o.data);
        ind(g, d + 2);
        heron__buf_printf(g->o, "if (!h_first)\n");
        ind(g, d + 3);
        char ld[64];
        snprintf(ld, sizeof ld, "%s", "h_o");
        heron__buf loaded = {0};
        subst(&loaded, is.vload, ld, "", "");
        heron__buf_printf(g->o, "%s = ", acc);
        subst(g->o, is.vadd, acc, loaded.data, "");
        heron__buf_puts(g->o, ";\n");
        ind(g, d + 2);
        subst(g->o, is.store, "h_o", acc, "");
        heron__buf_puts(g->o, "\n");
        ind(g, d + 1);
        heron__buf_puts(g->o, "} else {\n");
        heron__buf_free(&loaded);
        heron__buf_free(&cond);
        heron__buf_free(&o);
      }
      if (g->vec > 1) {
        ind(g, d + 1);
        heron__buf_printf(g->o, "%s h_t[%d];\n", out_t, g->vec);
        ind(g, d + 1);
        subst(g->o, is.store, "h_t", acc, "");
        heron__buf_puts(g->o, "\n");
      }
      /* Lane by lane: from the first lane's address at the lane stride
       * where the output's index allows, else each lane's own index. */
      int64_t ls = out_lane_stride(g);
      heron__buf cond = {0}, o = {0};
      if (ls) {
        element_text(g, op->ninputs, &cond, &o);
        ind(g, d + 1);
        heron__buf_printf(g->o, "%s *h_o0;\n", out_t);
        ind(g, d + 1);
        heron__buf_printf(g->o,
                          "{\n%*sconst int64_t g_%s = h_v0;\n%*sh_o0 = "
                          "&t_%s[%s];\n",
                          2 * (d + 2), "", vn, 2 * (d + 2), "", op->out.name,
                          o.data);
        ind(g, d + 1);
        heron__buf_puts(g->o, "}\n");
      }
      ind(g, d + 1);
      heron__buf_puts(g->o, "for (int64_t h_l = 0; h_l < h_n; h_l++) {\n");
      if (ls) {
        ind(g, d + 2);
        heron__buf_printf(g->o, "%s *h_o = h_o0 + h_l * %lldLL;\n", out_t,
                          (long long)ls);
        if (op->epilogue) {
          ind(g, d + 2);
          heron__buf_printf(g->o, "const int64_t g_%s = h_v0 + h_l;\n", vn);
        }
      } else {
        ind(g, d + 2);
        heron__buf_printf(g->o, "const int64_t g_%s = h_v0 + h_l;\n", vn);
        element_text(g, op->ninputs, &cond, &o);
        ind(g, d + 2);
        heron__buf_printf(g->o, "%s *h_o = &t_%s[%s];\n", out_t, op->out.name,
                          o.data);
      }
      ind(g, d + 2);
      heron__buf_printf(g->o, "%s h_x = %s;\n", out_t,
                        g->vec > 1 ? "h_t[h_l]" : acc);
      ind(g, d + 2);
      heron__buf_puts(g->o, "if (!h_first)\n");
      ind(g, d + 3);
      heron__buf_puts(g->o, "h_x += *h_o;\n");
      if (op->epilogue) {
        char ch[48];
        snprintf(ch, sizeof ch, "g_%s", op->axes[op->channel_axis].name);
        if (!live(g, op->channel_axis))
          snprintf(ch, sizeof ch, "0");
        emit_epilogue(g, d + 2, ch);
      }
      ind(g, d + 2);
      heron__buf_puts(g->o, "*h_o = h_x;\n");
      ind(g, d + 1);
      heron__buf_puts(g->o, "}\n");
      if (fast) {
        ind(g, d + 1);
        heron__buf_puts(g->o, "}\n");
      }
      ind(g, d);
      heron__buf_puts(g->o, "}\n");
      heron__buf_free(&cond);
      heron__buf_free(&o);
    }
    ind(g, depth);
    heron__buf_puts(g->o, "}\n");
  }
}

/* ---- weights packed ahead of the calls (prepack) ------------------------
 * The copy is the weight packs of every thread tile and reduction-outer
 * step end to end, numbered by the level-0 loops of the live spatial axes
 * the weights read (op order) and then the live reduction-outer loops,
 * each only when longer than 1 (thread tiles that differ only along axes
 * the weights do not read share their block).  Elements are the weights'
 * own type (s8 for int8, bf16 bits for bf16). */

/* The axes numbering the blocks, outermost first; their count. */
static int prepack_loops(const dgen *g, int *axis) {
  const heron__op *op = g->op;
  int n = 0;
  for (int k = 0; k < 2; k++)
    for (int a = 0; a < op->naxes; a++) {
      int spatial = op->axes[a].kind == HERON__SPATIAL;
      if (spatial != (k == 0) || !live(g, a) || g->len[a][0] <= 1 ||
          (spatial && !heron__tensor_reads(&op->in[g->wt], a)))
        continue;
      axis[n++] = a;
    }
  return n;
}

/* Elements of one block: the weight pack of one tile and step. */
static int64_t weight_block(const dgen *g) {
  return g->pw_pts * g->rip * g->tv;
}

/* Elements of the whole copy. */
static int64_t prepacked_elems(const dgen *g) {
  int axis[HERON__MAX_AXES];
  int n = prepack_loops(g, axis);
  int64_t e = weight_block(g);
  for (int i = 0; i < n; i++)
    e *= g->len[axis[i]][0];
  return e;
}

/* " + ((o_co / 32) * 6 + ci_0) * 4608": the offset of the current block in
 * the copy, from the kernel's tile origins o_<a> (a multiple of the
 * thread tile) and reduction-outer indices <r>_0; nothing with one block. */
static void prepacked_offset_text(const dgen *g, heron__buf *b) {
  int axis[HERON__MAX_AXES];
  int n = prepack_loops(g, axis);
  if (!n)
    return;
  const heron__op *op = g->op;
  heron__buf_puts(b, " + ");
  for (int i = 1; i < n; i++)
    heron__buf_puts(b, "(");
  for (int i = 0; i < n; i++) {
    int a = axis[i];
    heron__buf idx = {0};
    if (op->axes[a].kind == HERON__SPATIAL)
      heron__buf_printf(&idx, "o_%s / %lld", op->axes[a].name,
                        (long long)g->thr[a]);
    else
      heron__buf_printf(&idx, "%s_0", op->axes[a].name);
    if (i == 0)
      heron__buf_printf(b, "(%s)", idx.data);
    else
      heron__buf_printf(b, " * %lld + (%s))", (long long)g->len[a][0],
                        idx.data);
    heron__buf_free(&idx);
  }
  heron__buf_printf(b, " * %lld", (long long)weight_block(g));
}

/* heron_prepacked_elems and heron_prepack, after the kernel, when the
 * weights are prepacked: the kernel's own weight pack, run for every block
 * with the tile origins and reduction bases it would have had. */
static void emit_prepack(dgen *g) {
  if (!g->prepacked)
    return;
  const heron__op *op = g->op;
  const char *wt = ctype(op, g->wt);
  heron__buf_printf(
      g->o,
      "\n/* The weights packed once, ahead of the calls (prepack): "
      "heron_kernel\n"
      " * takes input %d as heron_prepack(%d, %s, copy) left it, in a "
      "buffer of\n"
      " * heron_prepacked_elems(%d) elements of its own type (%s); 0 for "
      "an\n"
      " * input taken as it is. */\n"
      "int64_t heron_prepacked_elems(int input);\n"
      "int64_t heron_prepacked_elems(int input) {\n"
      "  return input == %d ? %lldLL : 0;\n}\n\n"
      "void heron_prepack(int input, const void *src, void *dst);\n"
      "void heron_prepack(int input, const void *src, void *dst) {\n"
      "  if (input != %d)\n    return;\n"
      "  const %s *restrict t_%s = (const %s *)src;\n",
      g->wt, g->wt, op->in[g->wt].name, g->wt, wt, g->wt,
      (long long)prepacked_elems(g), g->wt, wt, op->in[g->wt].name, wt);
  int axis[HERON__MAX_AXES];
  int n = prepack_loops(g, axis);
  int d = 1;
  for (int i = 0; i < n; i++) {
    const char *an = op->axes[axis[i]].name;
    ind(g, d++);
    heron__buf_printf(g->o, "for (int64_t %s_0 = 0; %s_0 < %lld; %s_0++) {\n",
                      an, an, (long long)g->len[axis[i]][0], an);
  }
  /* The origins and bases the pack reads: from the loop index where the
   * axis has level-0 steps, else 0. */
  for (int a = 0; a < op->naxes; a++) {
    if (!live(g, a))
      continue;
    const char *an = op->axes[a].name;
    int more = g->len[a][0] > 1;
    if (op->axes[a].kind == HERON__SPATIAL) {
      if (!heron__tensor_reads(&op->in[g->wt], a))
        continue;
      ind(g, d);
      if (more)
        heron__buf_printf(g->o, "const int64_t o_%s = %s_0 * %lld;\n", an, an,
                          (long long)g->thr[a]);
      else
        heron__buf_printf(g->o, "const int64_t o_%s = 0;\n", an);
    } else {
      ind(g, d);
      if (more)
        heron__buf_printf(g->o, "const int64_t b_%s = %s_0 * %lld;\n", an, an,
                          (long long)g->len[a][1]);
      else
        heron__buf_printf(g->o, "const int64_t b_%s = 0;\n", an);
    }
  }
  /* The block offset from the same o_<a> / <r>_0 the kernel uses. */
  heron__buf off = {0};
  prepacked_offset_text(g, &off);
  ind(g, d);
  heron__buf_printf(g->o, "%s *h_pw = (%s *)dst%s;\n", wt, wt,
                    off.data ? off.data : "");
  heron__buf_free(&off);
  emit_pack_weight(g, d);
  for (int i = n - 1; i >= 0; i--) {
    ind(g, --d);
    heron__buf_puts(g->o, "}\n");
  }
  heron__buf_puts(g->o, "}\n");
}

/* ---- the kernel ----------------------------------------------------------
 */

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
static void plan_region(dgen *g) {
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

static void emit_prelude(dgen *g, const heron_space *sp, const int64_t *cfg) {
  const heron__op *op = g->op;
  heron__buf *o = g->o;
  heron__buf_printf(o, "/* Generated by Heron-C: %s (", op->name);
  for (int i = 0; i < op->nshape; i++)
    heron__buf_printf(o, "%s%lld", i ? "," : "", (long long)op->shape[i]);
  heron__buf_printf(o,
                    ") %s, cpu template, dot-product micro-kernel.\n"
                    " * config:",
                    heron__dtype_name(op->dtype));
  for (int i = 0; i < heron_space_nknobs(sp); i++) {
    int v = heron_space_knob(sp, i);
    heron__buf_printf(o, "%s %s = %lld", i ? "," : "",
                      heron_space_var_name(sp, v), (long long)cfg[v]);
  }
  heron__buf_printf(o, "\n * packs: k %lld rounded to %lld (groups of %d), ",
                    (long long)g->ri, (long long)g->rip, g->group);
  if (g->region)
    heron__buf_printf(o,
                      "activations as a region of %lld elements (%s "
                      "innermost, rounded to %lld)",
                      (long long)g->pa_elems, op->axes[g->cax].name,
                      (long long)g->cgp);
  else
    heron__buf_printf(o, "activations %lld x %lld", (long long)g->pa_pts,
                      (long long)g->rip);
  heron__buf_printf(o,
                    ", weights %lld x %lld x %lld\n"
                    " * Build natively with the template's flags, or "
                    "anywhere with -DHERON_EMULATE_ISA. */\n",
                    (long long)g->pw_pts, (long long)g->rip, (long long)g->tv);
  heron__buf_puts(o, "#ifndef HERON_DOT_PRELUDE\n#define HERON_DOT_PRELUDE\n"
                     "#include <stdint.h>\n#include <stdlib.h>\n"
                     "#include <string.h>\n"
                     "#ifdef HERON_EMULATE_ISA\n");
  heron__buf_puts(o, heron__cpu_isa_emulation);
  heron__buf_puts(
      o,
      "#else\n#include <immintrin.h>\n#endif\n"
      "/* acc = dot(acc, a, b) of the dot-product instructions.  Natively as\n"
      " * inline assembly with the accumulator tied to the output register:\n"
      " * GCC 12 copies every accumulator through another register in each\n"
      " * step of its builtins (and spills); emulated, the intrinsics. */\n"
      "#if !defined(HERON_EMULATE_ISA) && defined(__AVX512VNNI__)\n"
      "#define H_DPBUSD512(c, a, b) \\\n"
      "  __asm__(\"vpdpbusd %2, %1, %0\" : \"+v\"(c) : \"v\"(a), \"vm\"(b))\n"
      "#else\n"
      "#define H_DPBUSD512(c, a, b) ((c) = _mm512_dpbusd_epi32((c), (a), "
      "(b)))\n"
      "#endif\n"
      "#if !defined(HERON_EMULATE_ISA) && defined(__AVX512VNNI__) && \\\n"
      "    defined(__AVX512VL__)\n"
      "#define H_DPBUSD256(c, a, b) \\\n"
      "  __asm__(\"vpdpbusd %2, %1, %0\" : \"+v\"(c) : \"v\"(a), \"vm\"(b))\n"
      "#else\n"
      "#define H_DPBUSD256(c, a, b) ((c) = _mm256_dpbusd_epi32((c), (a), "
      "(b)))\n"
      "#endif\n"
      "#if !defined(HERON_EMULATE_ISA) && defined(__AVXVNNI__)\n"
      "#define H_DPBUSD256_AVX(c, a, b) \\\n"
      "  __asm__(\"%{vex%} vpdpbusd %2, %1, %0\" : \"+x\"(c) : \"x\"(a), "
      "\"xm\"(b))\n"
      "#else\n"
      "#define H_DPBUSD256_AVX(c, a, b) \\\n"
      "  ((c) = _mm256_dpbusd_avx_epi32((c), (a), (b)))\n"
      "#endif\n"
      "#if !defined(HERON_EMULATE_ISA) && defined(__AVX512BF16__)\n"
      "#define H_DPBF16_512(c, a, b) \\\n"
      "  __asm__(\"vdpbf16ps %2, %1, %0\" : \"+v\"(c) : \"v\"(a), \"vm\"(b))\n"
      "#else\n"
      "#define H_DPBF16_512(c, a, b) \\\n"
      "  ((c) = _mm512_dpbf16_ps((c), (__m512bh)(a), (__m512bh)(b)))\n"
      "#endif\n"
      "#if !defined(HERON_EMULATE_ISA) && defined(__AVX512BF16__) && \\\n"
      "    defined(__AVX512VL__)\n"
      "#define H_DPBF16_256(c, a, b) \\\n"
      "  __asm__(\"vdpbf16ps %2, %1, %0\" : \"+v\"(c) : \"v\"(a), \"vm\"(b))\n"
      "#else\n"
      "#define H_DPBF16_256(c, a, b) \\\n"
      "  ((c) = _mm256_dpbf16_ps((c), (__m256bh)(a), (__m256bh)(b)))\n"
      "#endif\n"
      "/* Four bytes of a pack as one 32-bit lane, for a broadcast. */\n"
      "static inline int h_ld32(const void *p) {\n"
      "  int v;\n  memcpy(&v, p, 4);\n  return v;\n}\n"
      "/* The scalar (vec 1) bf16 group loop passes each sum through an\n"
      " * empty asm at every step, so that no compiler vectorizes it: GCC 12\n"
      " * at -O3 turns its in-order float sum (two chained additions a step)\n"
      " * into a vector loop that adds one product twice when the loop is\n"
      " * left rolled (#pragma GCC unroll 1) - wrong sums, not roundings. */\n"
      "#if defined(__x86_64__) || defined(__SSE__)\n"
      "#define H_OPAQUE(x) __asm__(\"\" : \"+x\"(x))\n"
      "#else\n"
      "#define H_OPAQUE(x) __asm__(\"\" : \"+m\"(x))\n"
      "#endif\n"
      "/* A compiler barrier between the packs and the micro-kernels, which\n"
      " * read the packs back from memory: GCC 12 at -O3 forwarded a weight\n"
      " * pack's strided stores into the emulated vector loads wrongly (lanes\n"
      " * 1..7 of a bf16 weight vector at vec 8 were other elements). */\n"
      "#define H_PACKED() __asm__ __volatile__(\"\" ::: \"memory\")\n"
      "/* bf16 to fp32: the upper half of its bits. */\n"
      "static inline float h_bf(uint16_t h) {\n"
      "  uint32_t x = (uint32_t)h << 16;\n  float f;\n"
      "  memcpy(&f, &x, 4);\n  return f;\n}\n"
      "#if defined(__AVX2__) || defined(HERON_EMULATE_ISA)\n"
      "/* bf16 pairs in 32-bit lanes as fp32: the odd (high) and even (low)\n"
      " * element. */\n"
      "static inline __m256 h_hi(__m256i v) {\n"
      "  return _mm256_castsi256_ps(_mm256_and_si256(v, "
      "_mm256_set1_epi32((int)0xffff0000u)));\n}\n"
      "static inline __m256 h_lo(__m256i v) {\n"
      "  return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));\n}\n"
      "#endif\n"
      "#endif\n\n");
}

/* The loops over spatial level l (1: cache tiles, 2: register tiles) of
 * every live axis with more than one step; returns how many. */
static int open_level(dgen *g, int l, int depth) {
  int n = 0;
  for (int a = 0; a < g->op->naxes; a++) {
    if (g->op->axes[a].kind != HERON__SPATIAL || g->len[a][l] <= 1)
      continue;
    const char *nm = g->op->axes[a].name;
    ind(g, depth + n);
    heron__buf_printf(g->o,
                      "for (int64_t %s_%d = 0; %s_%d < %lld; %s_%d++) {\n", nm,
                      l, nm, l, (long long)g->len[a][l], nm, l);
    n++;
  }
  return n;
}

int heron__cpu_dot_codegen(const heron__template *t, const heron_space *sp,
                           const int64_t *cfg, heron__buf *out,
                           heron_error *err) {
  int which = -1;
  int nv = heron_space_violations(sp, cfg, &which, 1);
  if (nv != 0) {
    char text[128] = "";
    if (nv > 0)
      heron_space_constraint_str(sp, which, text, sizeof text);
    return heron_error_set(err, HERON_EINVAL,
                           "codegen: config violates %d constraint%s (first: "
                           "%s)",
                           nv, nv == 1 ? "" : "s", text);
  }
  dgen g;
  memset(&g, 0, sizeof g);
  g.t = t;
  g.op = &t->op;
  g.o = out;
  g.vaxis = t->vec_axis;
  g.vec = (int)cfg[t->vec];
  g.group = t->dot_group;
  g.act = t->dot_act;
  g.wt = t->dot_weight;
  g.int8 = t->op.dtype == HERON__INT8;
  g.prepacked = (t->op.prepack >> g.wt & 1u) != 0;
  int acc_at = (int)cfg[t->acc_at];
  int64_t u = cfg[t->unroll];
  g.unroll = (int)(u > 0 ? 4 * u : 1);
  const heron__op *op = g.op;
  if (g.vaxis < 0)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "codegen: %s has no vector axis for a dot product",
                           op->name);
  g.ri = 1;
  for (int a = 0; a < op->naxes; a++) {
    int levels = heron__cpu_levels(t, a);
    int64_t cover = 1;
    for (int l = 0; l < HERON__CPU_SPATIAL_LEVELS; l++) {
      g.len[a][l] = l < levels ? heron__cpu_tile(t, cfg, a, l) : 1;
      cover *= g.len[a][l];
    }
    g.ragged[a] = cover > op->axes[a].extent;
    if (op->axes[a].kind == HERON__SPATIAL) {
      g.thr[a] = g.len[a][1] * g.len[a][2] * g.len[a][3];
      g.reg[a] = g.len[a][3] * (acc_at ? g.len[a][2] : 1);
    } else {
      g.thr[a] = g.len[a][1];
      g.reg[a] = 1;
      g.ri *= g.len[a][1];
      g.has_outer |= g.len[a][0] > 1;
    }
  }
  g.rip = (g.ri + g.group - 1) / g.group * g.group;
  g.ng = g.rip / g.group;
  g.tv = g.thr[g.vaxis];
  g.pa_pts = g.pw_pts = 1;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__SPATIAL || !live(&g, a) || a == g.vaxis)
      continue;
    if (heron__tensor_reads(&op->in[g.act], a))
      g.pa_pts *= g.thr[a];
    if (heron__tensor_reads(&op->in[g.wt], a))
      g.pw_pts *= g.thr[a];
  }
  plan_region(&g);
  int64_t rows = count_rows(&g), nvec = g.reg[g.vaxis] / g.vec;
  if (rows * nvec > MAX_ACC || g.reg[g.vaxis] % g.vec != 0)
    return heron_error_set(err, HERON_EINVAL,
                           "codegen: register tile of %lld accumulators",
                           (long long)(rows * nvec));

  emit_prelude(&g, sp, cfg);
  heron__buf_puts(out, "void heron_kernel(void *const *bufs);\n"
                       "void heron_kernel(void *const *bufs) {\n");
  for (int ti = 0; ti < heron__op_nbufs(op); ti++) {
    const char *cst = ti != op->ninputs ? "const " : "";
    heron__buf_printf(out, "  %s%s *restrict t_%s = (%s%s *)bufs[%d];\n", cst,
                      ctype(op, ti), buf_tensor(op, ti)->name, cst,
                      ctype(op, ti), ti);
  }
  int64_t fused = cfg[t->fused];
  int64_t pa_elems = g.pa_elems, pw_elems = g.pw_pts * g.rip * g.tv;
  heron__buf_puts(out, "  int h_fail = 0;\n#pragma omp parallel\n  {\n");
  heron__buf_printf(
      out, "    %s *h_pa = aligned_alloc(64, %lld);\n", act_pack_type(&g),
      (long long)((pa_elems * (g.int8 && t->dot != HERON__DOT_I8_AVX2 ? 1 : 2) +
                   63) /
                  64 * 64));
  /* A prepacked weight needs no per-thread pack (h_pw points into the
   * copy, per step); NULL keeps the check and the free below uniform. */
  if (g.prepacked)
    heron__buf_printf(out, "    %s *h_pwk = NULL;\n", ctype(op, g.wt));
  else
    heron__buf_printf(
        out, "    %s *h_pwk = aligned_alloc(64, %lld);\n", ctype(op, g.wt),
        (long long)((pw_elems * (g.int8 ? 1 : 2) + 63) / 64 * 64));
  heron__buf_printf(out,
                    "    if (!h_pa%s)\n"
                    "      __atomic_store_n(&h_fail, 1, __ATOMIC_RELAXED);\n"
                    "#pragma omp barrier\n"
                    "    if (!__atomic_load_n(&h_fail, __ATOMIC_RELAXED)) {\n",
                    g.prepacked ? "" : " || !h_pwk");
  heron__buf_printf(out,
                    "#pragma omp for schedule(static)\n"
                    "    for (int64_t h_f = 0; h_f < %lld; h_f++) {\n"
                    "      int64_t h_r = h_f;\n",
                    (long long)fused);
  int d = 3;
  for (int a = op->naxes - 1; a >= 0; a--) {
    if (op->axes[a].kind != HERON__SPATIAL || !live(&g, a))
      continue;
    const char *nm = op->axes[a].name;
    ind(&g, d);
    heron__buf_printf(out, "const int64_t o_%s = h_r %% %lld * %lld;\n", nm,
                      (long long)g.len[a][0], (long long)g.thr[a]);
    ind(&g, d);
    heron__buf_printf(out, "h_r /= %lld;\n", (long long)g.len[a][0]);
  }
  ind(&g, d);
  heron__buf_puts(out, "(void)h_r;\n");
  /* Reduction-outer loops. */
  int nr0 = 0;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__REDUCE || !live(&g, a))
      continue;
    const char *nm = op->axes[a].name;
    if (g.len[a][0] > 1) {
      ind(&g, d + nr0);
      heron__buf_printf(out, "for (int64_t %s_0 = 0; %s_0 < %lld; %s_0++) {\n",
                        nm, nm, (long long)g.len[a][0], nm);
      nr0++;
    }
  }
  int dd = d + nr0;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__REDUCE || !live(&g, a))
      continue;
    const char *nm = op->axes[a].name;
    ind(&g, dd);
    if (g.len[a][0] > 1)
      heron__buf_printf(out, "const int64_t b_%s = %s_0 * %lld;\n", nm, nm,
                        (long long)g.len[a][1]);
    else
      heron__buf_printf(out, "const int64_t b_%s = 0;\n", nm);
  }
  for (int f = 0; f < 2; f++) {
    ind(&g, dd);
    heron__buf_printf(out, "const int %s = 1", f ? "h_last" : "h_first");
    for (int a = 0; a < op->naxes; a++)
      if (op->axes[a].kind == HERON__REDUCE && live(&g, a) && g.len[a][0] > 1)
        heron__buf_printf(out, " && %s_0 == %lld", op->axes[a].name,
                          (long long)(f ? g.len[a][0] - 1 : 0));
    heron__buf_puts(out, ";\n");
  }
  ind(&g, dd);
  heron__buf_puts(out, "(void)h_first;\n");
  ind(&g, dd);
  heron__buf_puts(out, "(void)h_last;\n");
  if (g.region)
    emit_pack_region(&g, dd);
  else
    emit_pack_act(&g, dd);
  ind(&g, dd);
  if (g.prepacked) {
    heron__buf off = {0};
    prepacked_offset_text(&g, &off);
    heron__buf_printf(out, "const %s *h_pw = t_%s%s;\n", ctype(op, g.wt),
                      op->in[g.wt].name, off.data ? off.data : "");
    heron__buf_free(&off);
  } else {
    heron__buf_printf(out, "%s *h_pw = h_pwk;\n", ctype(op, g.wt));
    emit_pack_weight(&g, dd);
  }
  /* The micro-kernels read the packs back from memory (H_PACKED). */
  ind(&g, dd);
  heron__buf_puts(out, "H_PACKED();\n");
  int n1 = open_level(&g, 1, dd);
  int n2 = acc_at ? 0 : open_level(&g, 2, dd + n1);
  int db = dd + n1 + n2;
  /* The register tile's origin inside the thread tile, per live spatial
   * axis, and the skip of tiles that start past a ragged extent. */
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__SPATIAL || !live(&g, a))
      continue;
    const char *nm = op->axes[a].name;
    ind(&g, db);
    heron__buf_printf(out, "const int64_t r_%s = 0", nm);
    if (g.len[a][1] > 1)
      heron__buf_printf(out, " + %s_1 * %lld", nm,
                        (long long)(g.len[a][2] * g.len[a][3]));
    if (!acc_at && g.len[a][2] > 1)
      heron__buf_printf(out, " + %s_2 * %lld", nm, (long long)g.len[a][3]);
    heron__buf_puts(out, ";\n");
  }
  ind(&g, db);
  heron__buf_puts(out, "if (1");
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == HERON__SPATIAL && live(&g, a) && g.ragged[a])
      heron__buf_printf(out, " && o_%s + r_%s < %lld", op->axes[a].name,
                        op->axes[a].name, (long long)op->axes[a].extent);
  heron__buf_puts(out, ") {\n");
  emit_dot_loop(&g, db + 1, rows, nvec);
  emit_store(&g, db + 1, rows, nvec);
  ind(&g, db);
  heron__buf_puts(out, "}\n");
  close_n(&g, n2, dd + n1);
  close_n(&g, n1, dd);
  close_n(&g, nr0, d);
  heron__buf_puts(out, "    }\n    }\n    free(h_pa);\n    free(h_pwk);\n"
                       "  }\n}\n");
  emit_prepack(&g);
  if (out->failed)
    return heron_error_set(err, HERON_ENOMEM, "codegen: out of memory");
  return HERON_OK;
}
