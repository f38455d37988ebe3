/* core/targets/cpu/rules.c - the cpu schedule template by rules, and the
 * constraints each rule generates.
 *
 * Every rule reads only the op description (axes, extents, tensors and
 * their affine index maps), never the op's name, so gemm, bmm, gemv and the
 * convolutions all get their template from the same code.  The rules run in
 * a fixed order (Heron's: inline first, then tiling, then the stages that
 * hang off the tiles) and each one records itself in t->rules for
 * heron__template_describe, whether it applied or not.
 *
 * Constraints use only the CSP primitives of heron/space.h.  Auxiliary
 * variables carry derived quantities (fused extents, footprints in
 * elements, accumulator sizes) so that the memory-limit rules are plain LE
 * constraints on a variable, which the solver propagates well.
 *
 * The rules of the int8 and bf16 dot-product micro-kernel are
 * rules_dot.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/space/builder.h"
#include "core/targets/cpu/region.h"
#include "core/targets/cpu/rules.h"

/* ---- Always-Inline ------------------------------------------------------ */

/* The ops are one reduction stage reading its inputs directly; the only
 * injective stages are the fused epilogue's (bias add, ReLU), which the
 * generator inlines into the accumulator's final store. */
static void rule_always_inline(ctx *c) {
  int epi = c->t->op.epilogue;
  if (epi)
    heron__rule_note_add(
        c->t->rules, &c->t->nrules, "Always-Inline",
        "the injective epilogue (%s) is inlined into the accumulator's last "
        "store",
        heron__epilogue_name(epi));
  else
    heron__rule_note_add(
        c->t->rules, &c->t->nrules, "Always-Inline",
        "not applicable: a single reduction stage without injective "
        "producers");
}

/* ---- Multi-Level-Tiling ------------------------------------------------- */

/* Whether axis a is a lane axis of a blocked op (op.h: op->block; its last
 * spatial and its last reduction axis): the whole block in the register
 * tile, as oneDNN's blocked kernels hold it, so its levels are constants
 * (t3 or t1 = the block, the others 1) and not knobs. */
static int lane_axis(const heron__op *op, int a) {
  if (op->block <= 0)
    return 0;
  for (int b = a + 1; b < op->naxes; b++)
    if (op->axes[b].kind == op->axes[a].kind)
      return 0;
  return 1;
}

/* Splits every spatial axis into [parallel outer, cache tile, register
 * outer, register inner] and every reduction axis into [outer, inner].
 * The inner levels are tile sizes that need not divide the extent
 * (heron__r_tile_sizes: its divisors, powers of two and three times those)
 * and the outer level is the rounded-up number of tiles, so a prime extent
 * tiles as well as a power of two; the generator cuts the edge tiles short.
 * A padded-work rule bounds the product of the swept extents (covers) by
 * max_padded_work_pct of the real iteration count, which keeps configs
 * that mostly compute padding out of the space; exactly dividing configs
 * have no padding.  Axes of extent 1 get no knobs: every level is the
 * constant 1, which keeps gemv and batch-1 ops free of variables that
 * cannot change anything. */
static void rule_multi_level_tiling(ctx *c) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__op *op = &t->op;
  int covers[HERON__MAX_AXES], ncovers = 0;
  int64_t real = 1;
  for (int a = 0; a < op->naxes && !c->r.rc; a++) {
    int levels = heron__cpu_levels(t, a);
    int64_t ext = op->axes[a].extent;
    s->has_knobs[a] = ext > 1;
    s->cover[a] = -1;
    /* The tile sizes are created (and so decided by the solver) before the
     * outer count, which they then fix by propagation. */
    for (int i = 1; i <= levels; i++) {
      int l = i % levels;
      if (ext == 1 || lane_axis(op, a)) {
        s->tile[a][l] = heron__r_const(&c->r, l == levels - 1 ? ext : 1);
        continue;
      }
      char name[40];
      snprintf(name, sizeof name, "%s.t%d", op->axes[a].name, l);
      s->tile[a][l] = l == 0 ? heron__r_range(&c->r, name, 1, 1, ext)
                             : heron__r_tile_sizes(&c->r, name, ext);
    }
    if (ext > 1) {
      s->cover[a] =
          heron__r_ceil_split(&c->r, op->axes[a].name, ext, s->tile[a], levels);
      covers[ncovers++] = s->cover[a];
      real = heron__mul_sat(real, ext);
    }
  }
  int pct = t->hw.max_padded_work_pct > 0 ? t->hw.max_padded_work_pct : 125;
  s->padded_limit =
      real >= HERON__BOUND_MAX / pct ? HERON__BOUND_MAX : real * pct / 100;
  if (s->padded_limit < real)
    s->padded_limit = real;
  s->padded = heron__r_prod(&c->r, "padded", covers, ncovers);
  heron__r_post(&c->r, HERON_C_LE, s->padded,
                (int[]){heron__r_const(&c->r, s->padded_limit)}, 1, NULL, 0,
                "padded work");
  char sp[96], rd[96];
  heron__axis_list(op, HERON__SPATIAL, sp, sizeof sp);
  heron__axis_list(op, HERON__REDUCE, rd, sizeof rd);
  heron__rule_note_add(
      t->rules, &t->nrules, "Multi-Level-Tiling",
      "spatial %s into 4 levels (parallel, cache, register outer, register "
      "inner); reduction %s into 2 (outer, inner); tiles need not divide "
      "(t0 = ceil(extent / tile)), padded work <= %d%% of the real%s",
      sp, rd, pct,
      op->block > 0 ? "; the lanes of the channel blocks (the last spatial "
                      "and the last reduction axis) whole in the register "
                      "tile, not knobs"
                    : "");
}

/* ---- Parallel over fused outer tiles ------------------------------------ */

/* Fuses the level-0 loops of all spatial axes into one loop that OpenMP
 * splits among the cores (loop fuse: fused = product of the level-0
 * lengths), with at least as many outer tiles as cores when the output
 * has that many elements. */
static void rule_parallel(ctx *c) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  int xs[HERON__MAX_AXES], n = 0;
  for (int a = 0; a < t->op.naxes; a++)
    if (t->op.axes[a].kind == HERON__SPATIAL && s->has_knobs[a])
      xs[n++] = s->tile[a][0];
  if (n == 0) {
    s->fused = heron__r_const(&c->r, 1);
    heron__rule_note_add(t->rules, &t->nrules, "Parallel",
                         "not applicable: no spatial axis longer than 1");
    return;
  }
  s->fused = heron__r_prod(&c->r, "fused", xs, n);
  /* Thread-count rule (DLA-specific, like threads per block on a GPU): when
   * the output has enough tiles, the parallel loop must give every core
   * work.  Configs that leave cores idle are legal C but never the
   * fastest, and on a 1024^3 GEMM they are the slowest trials of a random
   * search, so excluding them saves most of the measuring time.  A blocked
   * op's lanes are never split: they make one tile. */
  int64_t tiles = 1;
  for (int a = 0; a < t->op.naxes; a++)
    if (t->op.axes[a].kind == HERON__SPATIAL && !lane_axis(&t->op, a))
      tiles = heron__mul_sat(tiles, t->op.axes[a].extent);
  int64_t need = t->hw.cores < tiles ? t->hw.cores : tiles;
  if (need > 1)
    heron__r_post(&c->r, HERON_C_LE, heron__r_const(&c->r, need), &s->fused, 1,
                  NULL, 0, "cores <= fused");
  heron__rule_note_add(
      t->rules, &t->nrules, "Parallel",
      "omp parallel for over the fused level-0 spatial tiles (fused = "
      "product of every spatial t0 >= %lld of %d cores)",
      (long long)need, t->hw.cores);
}

/* ---- Vectorize ------------------------------------------------------------
 */

/* The spatial axis that indexes the output's last (contiguous) dimension
 * with coefficient 1 and no other dimension, or -1. */
int heron__cpu_contiguous_axis(const heron__op *op) {
  const heron__tensor *o = &op->out;
  if (o->ndim < 1 || o->bounded)
    return -1;
  const heron__affine *last = &o->index[o->ndim - 1];
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__SPATIAL || last->coef[a] != 1)
      continue;
    int alone = 1;
    for (int d = 0; d < o->ndim - 1; d++)
      alone &= o->index[d].coef[a] == 0;
    for (int b = 0; b < op->naxes; b++)
      alone &= b == a || last->coef[b] == 0;
    return alone ? a : -1;
  }
  return -1;
}

/* Whether spatial axis a indexes exactly one output dimension, alone and
 * with coefficient 1: its lanes then lie at one constant stride. */
static int indexes_one_dim(const heron__op *op, int a) {
  const heron__tensor *o = &op->out;
  int dims = 0;
  for (int d = 0; d < o->ndim; d++) {
    if (o->index[d].coef[a] == 0)
      continue;
    if (o->index[d].coef[a] != 1)
      return 0;
    for (int b = 0; b < op->naxes; b++)
      if (b != a && o->index[d].coef[b] != 0)
        return 0;
    dims++;
  }
  return dims == 1;
}

/* Whether some input reads spatial axis a through a sliding window or a
 * stride: a dimension indexed by a together with another axis longer than
 * one (a convolution's ih = oh * stride + kh - pad), or by a times a
 * coefficient other than 1.  Lanes along such an axis are padded rows or
 * strided gathers. */
static int windowed(const heron__op *op, int a) {
  for (int i = 0; i < op->ninputs; i++) {
    const heron__tensor *ts = &op->in[i];
    for (int d = 0; d < ts->ndim; d++) {
      const heron__affine *ix = &ts->index[d];
      if (ix->coef[a] == 0)
        continue;
      if (ix->coef[a] != 1)
        return 1;
      for (int b = 0; b < op->naxes; b++)
        if (b != a && ix->coef[b] != 0 && op->axes[b].extent > 1)
          return 1;
    }
  }
  return 0;
}

/* The axis to vectorize: the output-contiguous one when the widest vector
 * divides its extent and no input reads it through a window; otherwise
 * the spatial axis nearest to it in the output, read through no window,
 * whose extent the widest vector divides: a convolution vectorizes along
 * its output channels, as direct convolution libraries block them (its
 * weights packed or gathered along them, each input pixel broadcast; rows
 * in place measured slower on a Zen 3, 52-64 against 68-70 GFLOP/s for
 * ResNet's 3x3 and a 3-D 3x3x3); otherwise the contiguous one, with
 * narrower vectors where the widest does not divide it. */
static int choose_vector_axis(const heron__op *op, int lanes_max) {
  int a = heron__cpu_contiguous_axis(op);
  if (a < 0 || lanes_max <= 1)
    return a;
  if (op->axes[a].extent % lanes_max == 0 && !windowed(op, a))
    return a;
  for (int b = op->naxes - 1; b >= 0; b--)
    if (op->axes[b].kind == HERON__SPATIAL && b != a &&
        op->axes[b].extent % lanes_max == 0 && indexes_one_dim(op, b) &&
        !windowed(op, b))
      return b;
  return a;
}

/* Whether input ts reads axis a contiguously: consecutive values of a are
 * consecutive elements (its row-major stride is 1; dimensions of size 1,
 * such as gemm's N of 1, do not count). */
int heron__cpu_reads_contiguously(const heron__op *op, const heron__tensor *ts,
                                  int a) {
  (void)op;
  int64_t stride = 1, lin = 0;
  for (int d = ts->ndim - 1; d >= 0; d--) {
    lin += stride * ts->index[d].coef[a];
    stride *= ts->dims[d];
  }
  for (int d = 0; d < ts->ndim; d++)
    if (heron__affine_div(&ts->index[d]) > 1)
      return 0;
  return lin == 1;
}

/* The reduction axis to vectorize instead of the spatial axis `a`, or -1:
 * when no input reads `a` contiguously (gemv's A reads its rows a row
 * apart, x not at all), lanes along `a` would be gathers; when the op has
 * a single reduction axis longer than one vector of 4 that every input
 * reading it reads contiguously, its vectors are plain loads and each
 * accumulator sums vec reduction steps at once (a horizontal sum at the
 * store). */
static int reduction_vector_axis(const heron__op *op, int a) {
  if (a >= 0 && op->axes[a].extent == 1)
    a = -1;
  for (int i = 0; a >= 0 && i < op->ninputs; i++)
    if (heron__cpu_reads_contiguously(op, &op->in[i], a))
      return -1;
  int r = -1;
  for (int b = 0; b < op->naxes; b++) {
    if (op->axes[b].kind != HERON__REDUCE || op->axes[b].extent == 1)
      continue;
    if (r >= 0)
      return -1;
    r = b;
  }
  if (r < 0 || op->axes[r].extent < 4)
    return -1;
  int any = 0;
  for (int i = 0; i < op->ninputs; i++) {
    if (!heron__tensor_reads(&op->in[i], r))
      continue;
    if (!heron__cpu_reads_contiguously(op, &op->in[i], r) || op->in[i].bounded)
      return -1;
    any = 1;
  }
  return any ? r : -1;
}

/* The vector widths of an axis of `extent`: 1 (scalar code) and 4, 8, 16
 * lanes up to the register's lanes_max and the extent; a width need not
 * divide the extent (the edge tiles store the lanes inside the axis).
 * Returns how many were written to cand[5]. */
static int vector_widths(int64_t lanes_max, int64_t extent, int64_t *cand) {
  int n = 0;
  cand[n++] = 1;
  for (int64_t w = 4; w <= lanes_max && w <= 16; w *= 2)
    if (w <= extent)
      cand[n++] = w;
  return n;
}

/* Vectorizes the register-inner loop of the output's contiguous axis: the
 * knob `vec` takes a vector width the hardware has (4 floats per 16 bytes
 * up to the widest register) no longer than the axis, and the
 * DLA-specific rule "the vector width divides the register-inner tile"
 * is the product vec * vec.q == t3. */
static void rule_vectorize(ctx *c) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__op *op = &t->op;
  if (s->dot) {
    heron__cpu_rule_vectorize_dot(c);
    return;
  }
  int64_t lanes_max = t->hw.vector_bytes / t->elem_bytes;
  int contiguous = heron__cpu_contiguous_axis(op);
  int a = choose_vector_axis(op, (int)(lanes_max < 16 ? lanes_max : 16));
  s->vec_axis = -1;
  int r = lanes_max >= 4 ? reduction_vector_axis(op, a) : -1;
  if (r >= 0) {
    int64_t cand[5];
    int n = vector_widths(lanes_max, op->axes[r].extent, cand);
    s->vec_axis = r;
    s->vec_reduce = 1;
    s->vec = heron__r_set(&c->r, "vec", 1, cand, n);
    int q = heron__r_range(&c->r, "vec.q", 0, 1, op->axes[r].extent);
    heron__r_post(&c->r, HERON_C_PROD, s->tile[r][1], (int[]){s->vec, q}, 2,
                  NULL, 0, "vec divides the reduction-inner tile");
    heron__rule_note_add(
        t->rules, &t->nrules, "Vectorize",
        "reduction-inner loop of %s, vec in {1, 4, ...%lld} dividing %s.t1 "
        "(no input reads %s%s contiguously): each accumulator holds vec "
        "partial sums, added across lanes at the store",
        op->axes[r].name, (long long)cand[n - 1], op->axes[r].name,
        a >= 0 && op->axes[a].extent > 1 ? "" : "an output axis longer than 1",
        a >= 0 && op->axes[a].extent > 1 ? op->axes[a].name : "");
    return;
  }
  if (a < 0 || op->axes[a].extent == 1) {
    s->vec = heron__r_const(&c->r, 1);
    heron__rule_note_add(
        t->rules, &t->nrules, "Vectorize",
        "not applicable: no output-contiguous spatial axis longer than 1");
    return;
  }
  int64_t cand[5];
  int n = vector_widths(lanes_max, op->axes[a].extent, cand);
  /* A blocked op's lanes: one width, the widest that divides the block
   * (16 on AVX-512, 8 on AVX2), so a register holds whole lanes. */
  if (lane_axis(op, a)) {
    while (n > 1 && op->axes[a].extent % cand[n - 1] != 0)
      n--;
    cand[0] = cand[n - 1];
    n = 1;
  }
  s->vec_axis = a;
  s->vec = heron__r_set(&c->r, "vec", 1, cand, n);
  char qname[48];
  snprintf(qname, sizeof qname, "vec.q");
  int q = heron__r_range(&c->r, qname, 0, 1, op->axes[a].extent);
  c->vec_q = q;
  heron__r_post(&c->r, HERON_C_PROD, s->tile[a][3], (int[]){s->vec, q}, 2, NULL,
                0, "vec divides the register-inner tile");
  char list[48] = "";
  size_t len = 0;
  for (int i = 0; i < n; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%lld",
                            i ? ", " : "", (long long)cand[i]);
  heron__rule_note_add(
      t->rules, &t->nrules, "Vectorize",
      "register-inner loop of %s, vec in {%s} dividing %s.t3 (%d-byte "
      "registers)%s%s%s",
      op->axes[a].name, list, op->axes[a].name, t->hw.vector_bytes,
      a != contiguous && contiguous >= 0 ? "; the output-contiguous " : "",
      a != contiguous && contiguous >= 0 ? op->axes[contiguous].name : "",
      a != contiguous && contiguous >= 0
          ? (windowed(op, contiguous)
                 ? " is read through a window (padded or strided rows), so "
                   "lanes are stored with a stride"
                 : " is no multiple of the widest vector, so lanes are "
                   "stored with a stride")
          : "");
}

/* ---- Add-Cache-Stage (local accumulator) --------------------------------- */

/* The size of a spatial axis' tile below level `from` (product of levels
 * from..3) as a variable; a reduction axis' inner tile is its level 1. */
static int axis_tile_var(ctx *c, int a, int from, const char *suffix) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  if (!s->has_knobs[a])
    return s->tile[a][0];
  if (t->op.axes[a].kind == HERON__REDUCE)
    return s->tile[a][1];
  int levels = HERON__CPU_SPATIAL_LEVELS;
  if (from == levels - 1)
    return s->tile[a][from];
  char name[40];
  snprintf(name, sizeof name, "%s.%s", t->op.axes[a].name, suffix);
  return heron__r_prod(&c->r, name, &s->tile[a][from], levels - from);
}

/* cache_write: the output tile is accumulated in a local buffer that lives
 * in registers, attached by the compute-at knob acc_at either at the
 * register-inner tile (0: the product of the t3 lengths) or around the
 * whole register tile (1: the product of t2 * t3).  acc.vecs = acc.floats
 * / vec counts its vector registers (with vec == 1 the scalars live in
 * the same registers); the Tensorize rule bounds it together with the
 * registers the loads need. */
static void rule_cache_stage(ctx *c, int *l2_sizes) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__op *op = &t->op;
  int inner[HERON__MAX_AXES], outer[HERON__MAX_AXES], n = 0;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__SPATIAL || !s->has_knobs[a])
      continue;
    inner[n] = s->tile[a][3];
    outer[n] = l2_sizes[a];
    n++;
  }
  int at0 = heron__r_prod(&c->r, "acc.tile0", inner, n);
  int at1 = heron__r_prod(&c->r, "acc.tile1", outer, n);
  s->acc_at = heron__r_range(&c->r, "acc_at", 1, 0, 1);
  int64_t ub = heron__r_ub(&c->r, at1);
  s->acc_floats = heron__r_range(&c->r, "acc.floats", 0, 1, ub < 1 ? 1 : ub);
  heron__r_post(&c->r, HERON_C_SELECT, s->acc_floats,
                (int[]){s->acc_at, at0, at1}, 3, NULL, 0, "acc.floats");
  int regs = t->hw.vector_regs > 0 ? t->hw.vector_regs : 16;
  s->acc_vec_limit = regs - 2;
  s->acc_vecs = heron__r_range(&c->r, "acc.vecs", 0, 1, s->acc_vec_limit);
  /* Along a reduction axis every accumulator is a whole vector. */
  if (s->vec_reduce)
    heron__r_post(&c->r, HERON_C_PROD, s->acc_floats, (int[]){s->acc_vecs}, 1,
                  NULL, 0, "acc.vecs");
  else
    heron__r_post(&c->r, HERON_C_PROD, s->acc_floats,
                  (int[]){s->vec, s->acc_vecs}, 2, NULL, 0, "acc.vecs");
  heron__rule_note_add(
      t->rules, &t->nrules, "Add-Cache-Stage",
      "cache_write: local accumulator in registers at acc_at (0: t3 tile, "
      "1: t2*t3 tile); acc.vecs = acc.floats / vec");
}

/* ---- Tensorize: the outer-product micro-kernel -------------------------- */

/* The register tile is the CPU's "tensor instruction": per reduction step
 * every input is loaded once per register-tile point it depends on, and
 * every accumulator gets one fused multiply-add.  An input that does not
 * depend on the vector axis is a broadcast scalar (one register at a time,
 * consumed by a row of FMAs); one that does is loaded as vectors that stay
 * live across the rows.  The register rule counts exactly that:
 *
 *   regs.need = acc.vecs + sum over vector inputs of their register-tile
 *               vectors + 1 (the broadcast) <= the register file,
 *
 * with an input's register-tile vectors the product over the spatial axes
 * it reads of the register extent (t3, or t2*t3 at acc_at 1), the vector
 * axis counted in vectors (vec.q = t3 / vec).  With AVX-512 and vec 16 the
 * generator emits _mm512_fmadd_ps, with FMA and vec 8 _mm256_fmadd_ps. */
static void rule_tensorize(ctx *c, int vec_q) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__op *op = &t->op;
  int regs = t->hw.vector_regs > 0 ? t->hw.vector_regs : 16;
  int terms[HERON__MAX_TENSORS + 2], nterms = 0, broadcast = 0;
  terms[nterms++] = s->acc_vecs;
  for (int i = 0; i < op->ninputs && !c->r.rc; i++) {
    const heron__tensor *ts = &op->in[i];
    if (s->vec_axis < 0 || !heron__tensor_reads(ts, s->vec_axis)) {
      broadcast = 1;
      continue;
    }
    int in0[HERON__MAX_AXES], in1[HERON__MAX_AXES], n = 0;
    for (int a = 0; a < op->naxes; a++) {
      if (op->axes[a].kind != HERON__SPATIAL || !s->has_knobs[a] ||
          !heron__tensor_reads(ts, a))
        continue;
      int inner = a == s->vec_axis ? vec_q : s->tile[a][3];
      in0[n] = inner;
      char name[48];
      snprintf(name, sizeof name, "%s.reg1.%s", ts->name, op->axes[a].name);
      in1[n] = heron__r_prod(&c->r, name, (int[]){s->tile[a][2], inner}, 2);
      n++;
    }
    char name[48];
    snprintf(name, sizeof name, "%s.vregs0", ts->name);
    int r0 = heron__r_prod(&c->r, name, in0, n);
    snprintf(name, sizeof name, "%s.vregs1", ts->name);
    int r1 = heron__r_prod(&c->r, name, in1, n);
    snprintf(name, sizeof name, "%s.vregs", ts->name);
    int r = heron__r_range(&c->r, name, 0, 1, regs);
    heron__r_post(&c->r, HERON_C_SELECT, r, (int[]){s->acc_at, r0, r1}, 3, NULL,
                  0, name);
    terms[nterms++] = r;
  }
  if (broadcast)
    terms[nterms++] = heron__r_const(&c->r, 1);
  s->regs_need = heron__r_sum(&c->r, "regs.need", terms, nterms);
  heron__r_post(&c->r, HERON_C_LE, s->regs_need,
                (int[]){heron__r_const(&c->r, regs)}, 1, NULL, 0,
                "regs.need <= vector registers");
  s->fma_isa = t->hw.has_avx512                  ? 512
               : t->hw.has_fma && t->hw.has_avx2 ? 256
                                                 : 0;
  if (s->dot) {
    static const char *const kernels[] = {
        [HERON__DOT_VNNI] =
            "_mm512_dpbusd_epi32 at vec 16, _mm256_dpbusd_epi32 "
            "at vec 8 (AVX512-VNNI)",
        [HERON__DOT_AVX_VNNI] = "_mm256_dpbusd_avx_epi32 at vec 8 (AVX-VNNI)",
        [HERON__DOT_I8_AVX2] = "_mm256_cvtepi8_epi16 + _mm256_madd_epi16 + "
                               "_mm256_add_epi32 at vec 8 (AVX2, exact)",
        [HERON__DOT_BF16] = "_mm512_dpbf16_ps at vec 16, _mm256_dpbf16_ps at "
                            "vec 8 (AVX512-BF16)",
        [HERON__DOT_BF16_AVX2] = "bf16 pairs widened, two _mm256_fmadd_ps at "
                                 "vec 8 (AVX2)",
        [HERON__DOT_SCALAR] = "scalar dot products only",
    };
    heron__rule_note_add(
        t->rules, &t->nrules, "Tensorize",
        "dot-product micro-kernel on the register tile, %d reduction steps "
        "per 32-bit lane: %s; accumulators + weight vectors + 1 broadcast "
        "<= %d registers",
        s->dot_group, kernels[s->dot], regs);
    return;
  }
  heron__rule_note_add(
      t->rules, &t->nrules, "Tensorize",
      "outer-product micro-kernel on the register tile: %s; accumulators + "
      "loaded vectors + 1 broadcast <= %d registers",
      s->fma_isa == 512   ? "_mm512_fmadd_ps at vec 16, _mm256 at vec 8"
      : s->fma_isa == 256 ? "_mm256_fmadd_ps at vec 8"
                          : "vector-extension multiply-adds",
      regs);
}

/* The variable of spatial axis a's thread tile (levels 1..3: <a>.P),
 * made on first use and shared by the packs, the output's stage and the
 * region. */
static int thread_tile_var(ctx *c, int a) {
  if (c->thread_tile[a] < 0) {
    char name[48];
    snprintf(name, sizeof name, "%s.P", c->t->op.axes[a].name);
    c->thread_tile[a] = heron__r_prod(&c->r, name, &c->s->tile[a][1], 3);
  }
  return c->thread_tile[a];
}

/* ---- Add-Multi-Level-SPM: the output's stage ---------------------------- */

/* The knob <out>.stage (Add-Multi-Level-SPM for the output): where the
 * output's lanes are not contiguous (the vector axis is not the output's
 * last dimension: a convolution vectorized along its channels in NCHW),
 * every reduction-outer step but the last would store its partial sums
 * lane by lane and the next step reload them the same way; staged, they
 * go to a contiguous per-thread buffer of the thread's output tile as
 * whole vectors, and only the last step writes the output.  The knob is 1
 * only when the reduction is split (the product of its t0 is at least 2:
 * rsplit == rsplit.m1 + 1, stage <= rsplit.m1), and the buffer counts
 * toward the packs' cache share (its elements appended to sizes[]). */
static void stage_output(ctx *c, int *sizes, int *nsizes) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__op *op = &t->op;
  s->stage = s->stage_elems = -1;
  int splits[HERON__MAX_AXES], ns = 0;
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == HERON__REDUCE && s->has_knobs[a])
      splits[ns++] = s->tile[a][0];
  if (s->dot || s->vec_reduce || s->vec_axis < 0 || ns == 0 ||
      heron__cpu_reads_contiguously(op, &op->out, s->vec_axis) || c->r.rc)
    return;
  int xs[HERON__MAX_AXES], n = 0;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind == HERON__SPATIAL && s->has_knobs[a])
      xs[n++] = thread_tile_var(c, a);
  }
  char name[48];
  snprintf(name, sizeof name, "%s.stage", op->out.name);
  s->stage = heron__r_range(&c->r, name, 1, 0, 1);
  snprintf(name, sizeof name, "%s.stage.tile", op->out.name);
  int tile = heron__r_prod(&c->r, name, xs, n);
  snprintf(name, sizeof name, "%s.stage.elems", op->out.name);
  int64_t ub = heron__r_ub(&c->r, tile);
  s->stage_elems = heron__r_range(&c->r, name, 0, 0, ub);
  heron__r_post(&c->r, HERON_C_SELECT, s->stage_elems,
                (int[]){s->stage, heron__r_const(&c->r, 0), tile}, 3, NULL, 0,
                name);
  sizes[(*nsizes)++] = s->stage_elems;
  int rsplit = heron__r_prod(&c->r, "rsplit", splits, ns);
  int m1 = heron__r_range(&c->r, "rsplit.m1", 0, 0, heron__r_ub(&c->r, rsplit));
  heron__r_post(&c->r, HERON_C_SUM, rsplit,
                (int[]){m1, heron__r_const(&c->r, 1)}, 2, NULL, 0, "rsplit");
  heron__r_post(&c->r, HERON_C_LE, s->stage, &m1, 1, NULL, 0,
                "a stage only with a split reduction");
}

/* ---- Add-Multi-Level-SPM: packing --------------------------------------- */

/* The CPU's scratchpad is a contiguous, aligned per-thread buffer.  The
 * knob X.pack (0/1) decides whether input X is copied, at each step of the
 * reduction-outer loops, for the thread's whole tile (levels 1..3 of the
 * spatial axes it reads) and the reduction slice, into the exact order the
 * micro-kernel reads it: vector loads become unit-stride, broadcasts
 * sequential, padding and strides are resolved once per element instead
 * of once per use, and the tile no longer spans pages and cache sets the
 * way a row of a large matrix does.  The memory rule: the packed tiles of
 * one step together fit the core's share of the last-level cache. */
static void rule_pack(ctx *c) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__op *op = &t->op;
  int64_t l3 = t->hw.l3_bytes > 0 ? t->hw.l3_bytes : 8 << 20;
  int cores = t->hw.cores > 0 ? t->hw.cores : 1;
  int64_t share = l3 / cores;
  if (t->hw.l2_bytes > share)
    share = t->hw.l2_bytes;
  s->pack_limit = share / t->elem_bytes;
  int sizes[HERON__MAX_TENSORS], nsizes = 0;
  for (int i = 0; i < op->ninputs && !c->r.rc; i++) {
    const heron__tensor *ts = &op->in[i];
    int xs[HERON__MAX_AXES], n = 0;
    /* The pack holds every reduction step of the slice, also of the
     * reduction axes the input does not read, so that the micro-kernel
     * walks all packs with one step counter. */
    for (int a = 0; a < op->naxes; a++) {
      if (!s->has_knobs[a])
        continue;
      if (op->axes[a].kind == HERON__REDUCE) {
        xs[n++] = s->tile[a][1];
        continue;
      }
      if (heron__tensor_reads(ts, a))
        xs[n++] = thread_tile_var(c, a);
    }
    char name[48];
    snprintf(name, sizeof name, "%s.pack", ts->name);
    /* The pack layout puts a spatial vector axis innermost; with lanes
     * along the reduction, inputs are read in place. */
    if (s->vec_reduce) {
      s->pack[i] = s->pack_elems[i] = heron__r_const(&c->r, 0);
      sizes[nsizes++] = s->pack_elems[i];
      continue;
    }
    /* A dot-product kernel always packs both inputs: its layouts (groups
     * of reduction steps per 32-bit lane) exist only in the packs. */
    s->pack[i] = s->dot ? heron__r_const(&c->r, 1)
                        : heron__r_range(&c->r, name, 1, 0, 1);
    snprintf(name, sizeof name, "%s.pack.tile", ts->name);
    int tile = heron__r_prod(&c->r, name, xs, n);
    snprintf(name, sizeof name, "%s.pack.elems", ts->name);
    int64_t ub = heron__r_ub(&c->r, tile);
    s->pack_elems[i] = heron__r_range(&c->r, name, 0, 0, ub);
    heron__r_post(&c->r, HERON_C_SELECT, s->pack_elems[i],
                  (int[]){s->pack[i], heron__r_const(&c->r, 0), tile}, 3, NULL,
                  0, name);
    sizes[nsizes++] = s->pack_elems[i];
  }
  stage_output(c, sizes, &nsizes);
  int total = heron__r_sum(&c->r, "pack.elems", sizes, nsizes);
  c->pack_total = total;
  heron__r_post(&c->r, HERON_C_LE, total,
                (int[]){heron__r_const(&c->r, s->pack_limit)}, 1, NULL, 0,
                "pack.elems <= cache share");
  heron__rule_note_add(
      t->rules, &t->nrules, "Add-Multi-Level-SPM",
      "X.pack in {0, 1} per input: copy the thread's tile x reduction slice "
      "into a contiguous aligned buffer in micro-kernel order; %s%sall "
      "packs <= %lld elements (last-level cache share)",
      s->dot ? "with int8 and bf16 both inputs always (X.pack = 1), the "
               "weights in groups of k per 32-bit lane; "
      : s->stage >= 0 ? op->out.name
                      : "",
      s->stage >= 0 ? ".stage in {0, 1}: partial sums of a split "
                      "reduction kept in a per-thread buffer of the "
                      "output's tile as whole vectors (its lanes lie a "
                      "stride apart), the output written at the last "
                      "step; "
                    : "",
      (long long)s->pack_limit);
}

/* ---- Tile for cache --------------------------------------------------- */

/* The footprint, in elements, of one tensor dimension over a tile whose
 * axis lengths are sizes[]: sum over axes of |coef| * (len - 1) + 1,
 * exactly, posted as u = sum |coef| * len and u = ext + (sum |coef| - 1).
 * An index that is one axis with coefficient +-1 needs no variable. */
static int dim_footprint(ctx *c, const heron__affine *ix, const int *sizes,
                         const char *prefix) {
  const heron__op *op = &c->t->op;
  int terms[HERON__MAX_AXES], n = 0, single = -1;
  int64_t coef_sum = 0;
  for (int a = 0; a < op->naxes; a++) {
    int64_t k = ix->coef[a] < 0 ? -ix->coef[a] : ix->coef[a];
    if (k == 0 || !c->s->has_knobs[a])
      continue;
    coef_sum += k;
    single = a;
    if (k == 1) {
      terms[n++] = sizes[a];
    } else {
      char name[64];
      snprintf(name, sizeof name, "%s.%s", prefix, op->axes[a].name);
      terms[n++] = heron__r_prod(
          &c->r, name, (int[]){heron__r_const(&c->r, k), sizes[a]}, 2);
    }
  }
  if (n == 0)
    return heron__r_const(&c->r, 1);
  if (n == 1 && coef_sum == 1)
    return sizes[single];
  char name[64];
  snprintf(name, sizeof name, "%s.u", prefix);
  int u = heron__r_sum(&c->r, name, terms, n);
  snprintf(name, sizeof name, "%s.ext", prefix);
  int ext = heron__r_range(&c->r, name, 0, 1, heron__r_ub(&c->r, u));
  heron__r_post(&c->r, HERON_C_SUM, u,
                (int[]){ext, heron__r_const(&c->r, coef_sum - 1)}, 2, NULL, 0,
                name);
  return ext;
}

/* The working set of one tile level, in elements: the footprints of every
 * tensor (inputs and output) summed, bounded by `limit`.  The footprint of
 * a tensor is the product of its dimensions' footprints. */
static void working_set(ctx *c, const int *sizes, const char *level,
                        int64_t limit) {
  const heron__op *op = &c->t->op;
  int tens[HERON__MAX_TENSORS + 1], nt = 0;
  for (int i = 0; i <= op->ninputs && !c->r.rc; i++) {
    const heron__tensor *ts = i < op->ninputs ? &op->in[i] : &op->out;
    int dims[HERON__MAX_DIMS], nd = 0;
    for (int d = 0; d < ts->ndim; d++) {
      char prefix[48];
      snprintf(prefix, sizeof prefix, "%s.%s.d%d", ts->name, level, d);
      int v = dim_footprint(c, &ts->index[d], sizes, prefix);
      if (v != heron__r_const(&c->r, 1))
        dims[nd++] = v;
    }
    char name[48];
    snprintf(name, sizeof name, "%s.%s", ts->name, level);
    tens[nt++] = heron__r_prod(&c->r, name, dims, nd);
  }
  char name[32];
  snprintf(name, sizeof name, "ws.%s", level);
  int ws = heron__r_sum(&c->r, name, tens, nt);
  heron__r_post(&c->r, HERON_C_LE, ws, (int[]){heron__r_const(&c->r, limit)}, 1,
                NULL, 0, name);
}

/* Tile for cache.  Inside one step of the reduction-outer loop, one
 * iteration of the cache-tile loop (level 1) sweeps the register tiles of
 * its levels 2..3 over the reduction-inner slice: that block of every
 * tensor is what the register-tile loops reuse, so it must fit L2.  One
 * register tile (level 3) with the same slice is what the reduction-inner
 * loop streams through, and it must fit L1.  Both are memory-limit rules on
 * footprints computed from the index maps (inputs and output together).
 *
 * Why these levels and not the whole parallel tile (levels 1..3) for L2:
 * the tensors are not packed, so a row of the tile lives in its own pages
 * and the parallel tile is walked cache tile by cache tile anyway; bounding
 * the larger set only removed fast configs (a 1024^3 gemm with a 64 x 64
 * cache tile and the full reduction inner ran at about 89 GFLOP/s, among
 * the best measured, and its levels 1..3 set is 2 MiB). */
static void rule_tile_for_cache(ctx *c, const int *l2_sizes,
                                const int *l1_sizes) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  int64_t l1 = t->hw.l1_bytes > 0 ? t->hw.l1_bytes : 32768;
  int64_t l2 = t->hw.l2_bytes > 0 ? t->hw.l2_bytes : 1048576;
  s->l1_limit = l1 / t->elem_bytes;
  s->l2_limit = l2 / t->elem_bytes;
  working_set(c, l2_sizes, "L2", s->l2_limit);
  working_set(c, l1_sizes, "L1", s->l1_limit);
  heron__rule_note_add(
      t->rules, &t->nrules, "Tile-For-Cache",
      "footprint of the cache tile (levels 2..3) x reduction inner <= L2 "
      "(%lld elements); of the register tile (level 3) <= L1 (%lld)",
      (long long)s->l2_limit, (long long)s->l1_limit);
}

/* ---- Unroll pragma --------------------------------------------------------
 */

/* Heron's cpu unroll knob: v in 0..5 means a maximum unroll step of
 * max(1, 4 * v), emitted as `#pragma GCC unroll` on the reduction-inner
 * loop (the register tile itself is always fully unrolled). */
static void rule_unroll(ctx *c) {
  c->s->unroll = heron__r_range(&c->r, "unroll", 1, 0, 5);
  heron__rule_note_add(
      c->t->rules, &c->t->nrules, "Unroll",
      "unroll in 0..5: #pragma GCC unroll max(1, 4*unroll) on the "
      "reduction-inner loop");
}

/* ---- Prefetch ------------------------------------------------------------
 */

/* Software prefetching, the knob OpenBLAS's and BLIS's hand-written
 * kernels fix per CPU (their A_PR1 / B_PR1 distances): each vector load of
 * the micro-kernel is followed by a prefetch of the address the same load
 * reads `prefetch` steps of the innermost reduction loop later.  A packed
 * input's stream is sequential and hardware prefetchers follow it, but an
 * input read in place steps a whole row per reduction step (gemm's B[k, j]
 * in a 3072-wide matrix: 12 KiB a step, across pages), which they do not.
 * Distance 0 emits nothing, so every kernel without the knob remains in
 * the space.  With lanes along the reduction (gemv) every load is a
 * sequential stream and the knob is a constant 0. */
static void rule_prefetch(ctx *c) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  if (s->dot) {
    s->prefetch = heron__r_const(&c->r, 0);
    heron__rule_note_add(
        t->rules, &t->nrules, "Prefetch",
        "not applicable: the dot-product kernels read only their packs "
        "(sequential streams)");
    return;
  }
  if (s->vec_reduce) {
    s->prefetch = heron__r_const(&c->r, 0);
    heron__rule_note_add(
        t->rules, &t->nrules, "Prefetch",
        "not applicable: lanes run along the reduction (sequential "
        "streams)");
    return;
  }
  static const int64_t dist[] = {0, 2, 4, 8, 16};
  s->prefetch = heron__r_set(&c->r, "prefetch", 1, dist, 5);
  heron__rule_note_add(
      t->rules, &t->nrules, "Prefetch",
      "prefetch in {0, 2, 4, 8, 16}: every vector load of the micro-kernel "
      "also prefetches what it reads that many reduction steps later (0: "
      "none)");
}

/* ---- Add-Multi-Level-SPM: the region ---------------------------------- */

/* The knob X.region of the activation input X (a convolution's data): at
 * each reduction-outer step, instead of X's pack (one block of the
 * register tile's points per reduction step, which copies an input
 * element once for every kernel position that reads it) or its reads in
 * place (a plane apart from one input channel to the next in NCHW), the
 * region of X that the thread tile and the reduction slice read is copied
 * once, each element once, with the channels innermost
 * (core/targets/cpu/region.h, the pack the int8 and bf16 kernels take
 * wherever it is the smaller).  The micro-kernel broadcasts from it at
 * constant offsets, unguarded.  It exists where region.h finds a channel
 * axis and a kernel window (another reduction axis that X reads), where
 * X is broadcast (not read along the vector axis) and not prepacked; it
 * replaces the pack (X.pack + X.region <= 1), and its elements (the
 * product over X's dimensions of their footprints over the thread tile
 * and the reduction slice) count with the packs toward the cache share.
 * Absent value 0: configs recorded before the knob are the kernels they
 * measured. */
static void rule_region(ctx *c) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__op *op = &t->op;
  s->region = s->region_elems = -1;
  int act = op->act_input, cdim = -1, cax = -1, window = 0;
  if (!s->dot && !s->vec_reduce && op->ninputs == 2 && act >= 0 && act < 2 &&
      !(op->prepack >> act & 1u) &&
      (s->vec_axis < 0 || !heron__tensor_reads(&op->in[act], s->vec_axis)))
    cax = heron__cpu_region_axis(op, act, 1 - act, &cdim);
  for (int a = 0; a < op->naxes && cax >= 0; a++)
    window |= a != cax && op->axes[a].kind == HERON__REDUCE &&
              s->has_knobs[a] && heron__tensor_reads(&op->in[act], a);
  if (!window || c->r.rc) {
    heron__rule_note_add(t->rules, &t->nrules, "Region",
                         "not applicable: no input read through a kernel "
                         "window over a channel axis and broadcast");
    return;
  }
  const heron__tensor *ts = &op->in[act];
  int sizes[HERON__MAX_AXES];
  for (int a = 0; a < op->naxes; a++) {
    sizes[a] = -1;
    if (!s->has_knobs[a] || !heron__tensor_reads(ts, a))
      continue;
    sizes[a] = op->axes[a].kind == HERON__REDUCE ? s->tile[a][1]
                                                 : thread_tile_var(c, a);
  }
  char name[48];
  snprintf(name, sizeof name, "%s.region", ts->name);
  s->region = heron__r_range(&c->r, name, 1, 0, 1);
  if (s->region >= 0 &&
      heron__space_var_absent(c->r.sp, s->region, 0) != HERON_OK && !c->r.rc)
    c->r.rc = heron_error_set(c->r.err, HERON_EINVAL,
                              "cpu template: cannot declare %s's absent "
                              "value",
                              name);
  snprintf(name, sizeof name, "%s.pack.region", ts->name);
  int either = heron__r_sum(&c->r, name, (int[]){s->pack[act], s->region}, 2);
  heron__r_le(&c->r, either, 1, name);
  int dims[HERON__MAX_DIMS], nd = 0;
  for (int d = 0; d < ts->ndim; d++) {
    char prefix[48];
    snprintf(prefix, sizeof prefix, "%s.region.d%d", ts->name, d);
    int v = dim_footprint(c, &ts->index[d], sizes, prefix);
    if (v != heron__r_const(&c->r, 1))
      dims[nd++] = v;
  }
  snprintf(name, sizeof name, "%s.region.tile", ts->name);
  int tile = heron__r_prod(&c->r, name, dims, nd);
  snprintf(name, sizeof name, "%s.region.elems", ts->name);
  s->region_elems = heron__r_range(&c->r, name, 0, 0, heron__r_ub(&c->r, tile));
  heron__r_post(&c->r, HERON_C_SELECT, s->region_elems,
                (int[]){s->region, heron__r_const(&c->r, 0), tile}, 3, NULL, 0,
                name);
  int total = heron__r_sum(&c->r, "pack.region.elems",
                           (int[]){c->pack_total, s->region_elems}, 2);
  heron__r_le(&c->r, total, s->pack_limit, "pack.region.elems <= cache share");
  heron__rule_note_add(
      t->rules, &t->nrules, "Region",
      "%s.region in {0, 1}: copy the part of %s the thread tile and the "
      "reduction slice read, each element once, %s innermost (the int8 "
      "pack's region), instead of %s.pack; with the packs <= %lld "
      "elements; old logs read as 0",
      ts->name, ts->name, op->axes[cax].name, ts->name,
      (long long)s->pack_limit);
}

int heron__cpu_rules_apply(heron__template *t, heron_space *sp,
                           heron_error *err) {
  /* The cpu schedule, owned by t from here on (the descriptor's
   * free_sched frees it). */
  heron__cpu_sched *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "cpu template: out of memory");
  s->vec_axis = -1;
  t->sched = s;
  ctx *c = calloc(1, sizeof *c);
  if (!c)
    return heron_error_set(err, HERON_ENOMEM, "cpu template: out of memory");
  c->t = t;
  c->s = s;
  c->r.sp = sp;
  c->r.err = err;
  c->r.who = "cpu template";
  c->vec_q = -1;
  for (int a = 0; a < HERON__MAX_AXES; a++)
    c->thread_tile[a] = -1;
  heron__cpu_dot_setup(c);

  rule_always_inline(c);
  rule_multi_level_tiling(c);
  rule_parallel(c);
  rule_vectorize(c);

  /* Tile sizes per axis for the two cache levels: spatial levels 2..3
   * (L2, also the accumulator's size at acc_at 1) and level 3 (L1); the
   * reduction-inner tile for both. */
  int l2_sizes[HERON__MAX_AXES], l1_sizes[HERON__MAX_AXES];
  for (int a = 0; a < t->op.naxes && !c->r.rc; a++) {
    l1_sizes[a] = axis_tile_var(c, a, 3, "L1");
    l2_sizes[a] = axis_tile_var(c, a, 2, "L2");
  }
  rule_cache_stage(c, l2_sizes);
  rule_tensorize(c, c->vec_q);
  if (s->dot)
    heron__cpu_rule_dot_groups(c);
  rule_tile_for_cache(c, l2_sizes, l1_sizes);
  rule_pack(c);
  rule_unroll(c);
  rule_prefetch(c);
  /* Last: the knob came after configs were recorded, and the sampler
   * decides knobs in the order they were made, so the configs drawn
   * before it came are drawn alike. */
  rule_region(c);
  heron__cpu_rule_transpose(c);

  int rc = c->r.rc;
  free(c);
  return rc;
}
