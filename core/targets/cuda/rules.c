/* core/targets/cuda/rules.c - the Tensor Core schedule template by rules, and
 * the constraints each rule generates (core/targets/cuda/template.h has the
 * template's shape).
 *
 * As for the cpu, the rules read only the op description: the implicit-GEMM
 * view is derived from which inputs read which axes, the shared layouts and
 * vector widths from the index maps' strides.  So every op of the suite
 * (gemm, bmm, gemv, the convolutions, the transposed convolution, scan)
 * gets its template from this one file.
 *
 * The constraint that makes every sampled config launchable is the shared
 * memory one, computed after reuse: A.shared and B.shared are live together
 * during the main loop, C.shared only afterwards, so C.shared reuses their
 * space and the rule is "each live set fits", not "the sum fits" (Heron
 * bounds each buffer alone and leaves the sum to the compiler, so some of
 * its configs fail to build).  The knob mma and the rules of its sm_90a
 * value are in rules_mma.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/rules.h"
#include "core/space/builder.h"
#include "core/targets/cuda/template.h"

/* Heron's storage-align offsets, in elements (row pitch = extent + offset);
 * all multiples of 8 so every wmma pointer stays 32-byte aligned. */
static const int64_t PADS[] = {0, 8, 16, 24, 32, 48};
#define NPADS ((int)(sizeof PADS / sizeof PADS[0]))

/* Registers a thread needs besides its fragments: addresses, loop counters
 * and the cooperative loads' temporaries (calibrated against ptxas'
 * reports on the suite; see tests/targets/cuda/test_cuda_nvrtc.c). */
#define REGS_OVERHEAD 40
#define REGS_PER_THREAD_MAX 255

typedef struct ctx {
  heron__template *t;
  heron__cuda_sched *s;
  heron__rules r;
} ctx;

#define NOTE(c, name, ...)                                                     \
  heron__rule_note_add((c)->t->rules, &(c)->t->nrules, name, __VA_ARGS__)

/* ---- the implicit-GEMM view --------------------------------------------- */

/* The op axis along which ts is contiguous: the axis it reads with the
 * smallest nonzero flat coefficient, preferring a reduction axis on a tie;
 * -1 when it reads none. */
static int contiguous_axis(const heron__op *op, const heron__tensor *ts) {
  int64_t fc[HERON__MAX_AXES], off;
  heron__flat_coefs(op, ts, fc, &off);
  int best = -1;
  int64_t bc = 0;
  for (int a = 0; a < op->naxes; a++) {
    int64_t k = fc[a] < 0 ? -fc[a] : fc[a];
    if (k == 0)
      continue;
    int better = best < 0 || k < bc ||
                 (k == bc && op->axes[a].kind == HERON__REDUCE &&
                  op->axes[best].kind != HERON__REDUCE);
    if (better) {
      best = a;
      bc = k;
    }
  }
  return best;
}

/* The widest vector (8, 4, 2 or 1 halves) in which tensor ts can be read
 * or written along group g: V consecutive values of the fused index must
 * be V consecutive, V-aligned elements.  That holds when the group's
 * innermost axis has flat coefficient 1 and V divides its extent, or when
 * the whole group is laid out fused (each axis' coefficient is the product
 * of the inner extents) and V divides the group's extent; and the other
 * axes' coefficients and the offset are multiples of V.  Bounded (padded)
 * or divided indices are read element by element. */
static int64_t vec_max_of(const heron__op *op, const heron__tensor *ts,
                          const heron__gemm_group *g) {
  if (ts->bounded || g->naxes == 0 || heron__gemm_divided(ts))
    return 1;
  int64_t fc[HERON__MAX_AXES], off;
  heron__flat_coefs(op, ts, fc, &off);
  int inner = g->axes[g->naxes - 1];
  int fused = 1;
  int64_t stride = 1;
  for (int i = g->naxes - 1; i >= 0; i--) {
    fused &= fc[g->axes[i]] == stride;
    stride *= op->axes[g->axes[i]].extent;
  }
  for (int64_t v = 8; v > 1; v /= 2) {
    int by_axis = fc[inner] == 1 && op->axes[inner].extent % v == 0;
    int by_group = fused && g->extent % v == 0;
    if (!by_axis && !by_group)
      continue;
    int ok = off % v == 0;
    for (int a = 0; a < op->naxes && ok; a++) {
      int in_g = 0;
      for (int i = 0; i < g->naxes; i++)
        in_g |= g->axes[i] == a;
      if (a == inner || (in_g && by_group))
        continue;
      ok = fc[a] % v == 0;
    }
    if (ok)
      return v;
  }
  return 1;
}

/* Whether 32-bit indices suffice in the kernel: every tensor and swept
 * extent (below twice the padded one), with room for the guards'
 * out-of-range values. */
static int small_indices(const heron__op *op, const heron__cuda_sched *s) {
  int64_t lim = (int64_t)1 << 30;
  for (int i = 0; i <= op->ninputs; i++) {
    const heron__tensor *ts = i < op->ninputs ? &op->in[i] : &op->out;
    if (heron__tensor_elems(ts) >= lim)
      return 0;
  }
  for (int q = 0; q < HERON__NGROUPS; q++)
    if (2 * s->padded[q] >= lim)
      return 0;
  return 1;
}

/* Whether op axis a lies in group g. */
static int in_group(const heron__gemm_group *g, int a) {
  for (int i = 0; i < g->naxes; i++)
    if (g->axes[i] == a)
      return 1;
  return 0;
}

/* The implicit-GEMM reading of A (template.h, heron__cuda_igemm): which
 * dimensions of input 0 keep a coordinate per row, the invalid rows'
 * sentinel, and the widest vector of the checked interior loads. */
static void build_igemm(const heron__op *op, heron__cuda_sched *s) {
  heron__cuda_igemm *ig = &s->ig;
  const heron__tensor *ts = &op->in[0];
  const heron__gemm_group *gk = &s->g[HERON__GK];
  memset(ig, 0, sizeof *ig);
  ig->ok_col = -1;
  ig->vec_max = 1;
  ig->elem_bytes = s->small_idx ? 4 : 8;
  int ncoord = 0;
  int64_t kp = 0;
  for (int d = 0; d < ts->ndim; d++) {
    const heron__affine *ix = &ts->index[d];
    int has_k = 0, has_m = 0;
    int64_t span = 0; /* the largest |K part| */
    for (int a = 0; a < op->naxes; a++) {
      if (!ix->coef[a])
        continue;
      if (in_group(gk, a)) {
        has_k = 1;
        int64_t c = ix->coef[a] < 0 ? -ix->coef[a] : ix->coef[a];
        span += c * (op->axes[a].extent - 1);
      } else {
        has_m = 1;
      }
    }
    ig->fits |= has_k && has_m;
    ig->col[d] = -1;
    if (has_k && heron__cuda_dim_guarded(op, ts, d)) {
      ig->col[d] = 1 + ncoord++;
      kp = span > kp ? span : kp;
    }
  }
  ig->ncols = 1 + ncoord;
  if (!ncoord)
    ig->ok_col = ig->ncols++;
  ig->sentinel = -(kp + 1);
  /* The K order: A's contiguous axis (coefficient 1 in its last
   * dimension only) goes innermost when it is a K axis and the tile is
   * K-inner. */
  ig->gk = *gk;
  int ca = -1;
  for (int a = 0; a < op->naxes && s->op[0].k_inner; a++) {
    int only = ts->ndim > 0 && ts->index[ts->ndim - 1].coef[a] == 1;
    for (int d = 0; d + 1 < ts->ndim; d++)
      only &= ts->index[d].coef[a] == 0;
    if (only && in_group(gk, a))
      ca = a;
  }
  if (ig->fits && ca >= 0 && gk->axes[gk->naxes - 1] != ca) {
    int n = 0;
    for (int i = 0; i < gk->naxes; i++)
      if (gk->axes[i] != ca)
        ig->gk.axes[n++] = gk->axes[i];
    ig->gk.axes[n] = ca;
    ig->reorder = 1;
  }
  ig->a_vec = ig->reorder ? vec_max_of(op, ts, &ig->gk) : s->op[0].vec_max;
  ig->b_vec = ig->reorder && s->op[1].k_inner
                  ? vec_max_of(op, &op->in[1], &ig->gk)
                  : s->op[1].vec_max;
  /* The checked interior vector: along the tile's inner group, whose
   * innermost axis must be the contiguous one of A (its only dimension
   * the last, with coefficient 1), V dividing its extent, so that V
   * consecutive fused indices are V consecutive elements of one row of
   * the tensor; the kernel checks the guards of the first and last
   * element (the others lie between them) and the alignment. */
  const heron__gemm_group *gi = s->op[0].k_inner ? &ig->gk : &s->g[HERON__GM];
  if (!ig->fits || gi->naxes == 0 || heron__gemm_divided(ts))
    return;
  int a = gi->axes[gi->naxes - 1];
  for (int d = 0; d < ts->ndim; d++)
    if (ts->index[d].coef[a] != (d == ts->ndim - 1 ? 1 : 0))
      return;
  for (int64_t v = 8; v > 1 && ig->vec_max == 1; v /= 2)
    if (op->axes[a].extent % v == 0)
      ig->vec_max = v;
  /* When the last dimension needs no guard (a channel), a vector's
   * guards are those of its first element; when, besides, every other
   * flat coefficient and the offset are multiples of V, every vector is
   * V-aligned: then it is copied or zero-filled whole, as the index map's
   * vectors are (ig.a_vec). */
  if (heron__cuda_dim_guarded(op, ts, ts->ndim - 1))
    return;
  int64_t fc[HERON__MAX_AXES], off;
  heron__flat_coefs(op, ts, fc, &off);
  for (int64_t v = ig->vec_max; v > ig->a_vec; v /= 2) {
    int ok = off % v == 0;
    for (int x = 0; x < op->naxes; x++)
      ok &= x == a || fc[x] % v == 0;
    if (ok) {
      ig->a_vec = v;
      return;
    }
  }
}

/* The widest vector of operand i with igemm 1. */
static int64_t igemm_vec(const heron__cuda_sched *s, int i) {
  if (i == 1)
    return s->ig.b_vec;
  return s->ig.vec_max > s->ig.a_vec ? s->ig.vec_max : s->ig.a_vec;
}

/* Sorts the axes into the four groups and pads M, N and K. */
static int build_view(ctx *c) {
  heron__template *t = c->t;
  heron__cuda_sched *s = c->s;
  const heron__op *op = &t->op;
  heron__gemm_view_group(op, 0, 1, s->g);
  for (int i = 0; i < HERON__NGROUPS; i++)
    s->padded[i] = s->g[i].extent;
  /* The granule: wmma tiles are 8, 16 or 32 wide with m * n = 256, so a
   * group of at most 8 is padded to 8 (forcing the 32x8 or 8x32 shape)
   * and the other one then to 32; otherwise to 16.  K to 16. */
  int64_t m = s->g[HERON__GM].extent, n = s->g[HERON__GN].extent;
  int64_t *pm = &s->padded[HERON__GM], *pn = &s->padded[HERON__GN];
  *pm = m <= 8 ? 8 : heron__round_up(m, 16);
  *pn = n <= 8 ? 8 : heron__round_up(n, 16);
  if (*pm == 8 && *pn == 8)
    *pm = 32;
  else if (*pn == 8)
    *pm = heron__round_up(m, 32);
  else if (*pm == 8)
    *pn = heron__round_up(n, 32);
  s->padded[HERON__GK] = heron__round_up(s->g[HERON__GK].extent, 16);
  if (s->g[HERON__GB].extent > 65535)
    return heron_error_set(c->r.err, HERON_EUNSUPPORTED,
                           "cuda template: batch extent %lld exceeds the "
                           "grid's y limit 65535",
                           (long long)s->g[HERON__GB].extent);
  if (s->g[HERON__GK].naxes == 0)
    return heron_error_set(c->r.err, HERON_EUNSUPPORTED,
                           "cuda template: op %s has no reduction to put on "
                           "the Tensor Cores",
                           op->name);

  /* Operands and their shared layouts. */
  for (int i = 0; i < 2; i++) {
    heron__cuda_operand *o = &s->op[i];
    const heron__tensor *ts = &op->in[i];
    o->tensor = i;
    o->group = i == 0 ? HERON__GM : HERON__GN;
    int ca = contiguous_axis(op, ts);
    o->k_inner = ca < 0 || op->axes[ca].kind == HERON__REDUCE;
    o->vec_max = vec_max_of(op, ts, &s->g[o->k_inner ? HERON__GK : o->group]);
  }
  int oa = contiguous_axis(op, &op->out);
  s->out_inner_axis = oa;
  s->out_group = HERON__GN;
  for (int k = 0; oa >= 0 && k < s->g[HERON__GM].naxes; k++)
    if (s->g[HERON__GM].axes[k] == oa)
      s->out_group = HERON__GM;
  int in_out_group = 0;
  for (int k = 0; oa >= 0 && k < s->g[s->out_group].naxes; k++)
    in_out_group |= s->g[s->out_group].axes[k] == oa;
  s->out_vec_max =
      in_out_group ? vec_max_of(op, &op->out, &s->g[s->out_group]) : 1;
  s->small_idx = small_indices(op, s);
  build_igemm(op, s);
  return HERON_OK;
}

/* ---- rules ----------------------------------------------------------------
 */

static void rule_always_inline(ctx *c) {
  int epi = c->t->op.epilogue;
  if (epi)
    NOTE(c, "Always-Inline",
         "the injective epilogue (%s) is inlined into the store from "
         "C.shared to global",
         heron__epilogue_name(epi));
  else
    NOTE(c, "Always-Inline",
         "index maps (padding, stride, dilation, transposition, the "
         "triangular mask) are inlined into the shared-memory loads");
}

/* Tensorize: the wmma shape.  m * n * k = 4096 with m, n in {8, 16, 32}
 * and k = 16 gives Heron's three fp16 shapes 16x16x16, 32x8x16, 8x32x16. */
static void rule_tensorize(ctx *c) {
  heron__cuda_sched *s = c->s;
  static const int64_t mn[] = {8, 16, 32};
  s->wm = heron__r_set(&c->r, "wmma_m", 1, mn, 3);
  s->wn = heron__r_set(&c->r, "wmma_n", 1, mn, 3);
  s->wk = heron__r_set(&c->r, "wmma_k", 1, (const int64_t[]){16}, 1);
  heron__r_post(&c->r, HERON_C_PROD, heron__r_const(&c->r, 4096),
                (int[]){s->wm, s->wn, s->wk}, 3, NULL, 0,
                "wmma_m * wmma_n * wmma_k == 4096");
  /* Alignment: a fragment pointer must be 32-byte aligned.  Along an
   * operand's contiguous axis fragments start every wmma_m (A) or wmma_n
   * (B) halves, so a contiguous M or N forbids the 8-wide shape there (8
   * halves are 16 bytes); along K they start every 16 halves. */
  static const int64_t wide[] = {16, 32};
  if (!s->op[0].k_inner)
    heron__r_post(&c->r, HERON_C_IN, s->wm, NULL, 0, wide, 2,
                  "wmma_m in {16, 32}: A.shared is M-contiguous");
  if (!s->op[1].k_inner)
    heron__r_post(&c->r, HERON_C_IN, s->wn, NULL, 0, wide, 2,
                  "wmma_n in {16, 32}: B.shared is N-contiguous");
  NOTE(c, "Tensorize",
       "wmma fragments m x n x k in {16x16x16, 32x8x16, 8x32x16}, fp16 "
       "inputs, fp32 accumulation; fragment pointers 32-byte aligned%s%s",
       s->op[0].k_inner ? "" : " (wmma_m >= 16: A is M-contiguous)",
       s->op[1].k_inner ? "" : " (wmma_n >= 16: B is N-contiguous)");
}

/* Multi-Level-Tiling: M and N into block (blockIdx.x), warp (threadIdx.y)
 * and fragments per warp, times the wmma shape; K into outer, middle and
 * fragment steps, times wmma_k.  The tiles need not divide the padded
 * extent: the warp and fragment counts take its divisors, powers of two and
 * three times those (heron__r_tile_sizes), and the block (K: outer) count is
 * the rounded-up number of tiles (heron__r_ceil_split); the guards of the
 * global loads and stores cut the last tiles short.  The padded work, the
 * product of the three swept extents, stays within max_padded_work_pct of
 * the padded extents' product. */
static void rule_tiling(ctx *c) {
  heron__cuda_sched *s = c->s;
  static const char *const names[3][3] = {
      {"i.b", "i.w", "i.f"}, {"j.b", "j.w", "j.f"}, {"k.o", "k.m", "k.f"}};
  static const char *const dims[3] = {"M", "N", "K"};
  const int grp[3] = {HERON__GM, HERON__GN, HERON__GK};
  const int shape[3] = {s->wm, s->wn, s->wk};
  int covers[3];
  int64_t real = 1;
  for (int d = 0; d < 3; d++) {
    int64_t p = s->padded[grp[d]];
    /* The tile sizes first, so that the solver fixes the count from them. */
    for (int l = 1; l < 3; l++)
      s->split[d][l] = heron__r_tile_sizes(&c->r, names[d][l], p);
    s->split[d][0] = heron__r_range(&c->r, names[d][0], 1, 1, p);
    covers[d] = heron__r_ceil_split(
        &c->r, dims[d], p,
        (int[]){s->split[d][0], s->split[d][1], s->split[d][2], shape[d]}, 4);
    real = heron__mul_sat(real, p);
  }
  heron__r_padded_work(&c->r, c->t->hw.max_padded_work_pct, real, covers, 3);
  s->bm = heron__r_prod(&c->r, "block.m",
                        (int[]){s->split[0][1], s->split[0][2], s->wm}, 3);
  s->bn = heron__r_prod(&c->r, "block.n",
                        (int[]){s->split[1][1], s->split[1][2], s->wn}, 3);
  s->kc1 = heron__r_prod(&c->r, "chunk.k1", (int[]){s->split[2][2], s->wk}, 2);
  s->kc0 = heron__r_prod(&c->r, "chunk.k0", (int[]){s->split[2][1], s->kc1}, 2);
  char m[96], n[96];
  heron__gemm_group_names(&c->t->op, &s->g[HERON__GM], m, sizeof m);
  heron__gemm_group_names(&c->t->op, &s->g[HERON__GN], n, sizeof n);
  NOTE(c, "Multi-Level-Tiling",
       "implicit GEMM M=%s (%lld, padded %lld), N=%s (%lld, padded %lld), "
       "K=%lld (padded %lld), batch %lld: block / warp / fragment levels",
       m, (long long)s->g[HERON__GM].extent, (long long)s->padded[HERON__GM], n,
       (long long)s->g[HERON__GN].extent, (long long)s->padded[HERON__GN],
       (long long)s->g[HERON__GK].extent, (long long)s->padded[HERON__GK],
       (long long)s->g[HERON__GB].extent);
}

/* Thread binding: threadIdx.x is one warp (32), threadIdx.y the warps of
 * the block tile; the DLA-specific limits on threads per block and per
 * dimension, and the register file: the estimated registers per thread
 * (accumulator fragments: 8 floats per thread each; a and b fragments:
 * wmma_m / 4 and wmma_n / 4 registers each; plus the overhead) stay under
 * 255 and, times the threads, under the registers of a block. */
static void rule_threads(ctx *c) {
  heron__cuda_sched *s = c->s;
  const heron__hw *hw = &c->t->hw;
  s->warps = heron__r_prod(&c->r, "threadIdx.y",
                           (int[]){s->split[0][1], s->split[1][1]}, 2);
  s->threads = heron__r_prod(&c->r, "threads",
                             (int[]){heron__r_const(&c->r, 32), s->warps}, 2);
  int64_t max_threads =
      hw->max_threads_per_block > 0 ? hw->max_threads_per_block : 1024;
  int64_t max_y = hw->max_threads_dim[1] > 0 ? hw->max_threads_dim[1] : 1024;
  heron__r_le(&c->r, s->threads, max_threads,
              "threads <= max threads per block");
  heron__r_le(&c->r, s->warps, max_y, "threadIdx.y <= max block dim y");

  int acc = heron__r_prod(
      &c->r, "regs.acc",
      (int[]){heron__r_const(&c->r, 8), s->split[0][2], s->split[1][2]}, 3);
  int fa = heron__r_prod(&c->r, "regs.a4", (int[]){s->split[0][2], s->wm}, 2);
  int fb = heron__r_prod(&c->r, "regs.b4", (int[]){s->split[1][2], s->wn}, 2);
  int f4 = heron__r_sum(&c->r, "regs.ab4", (int[]){fa, fb}, 2);
  int64_t ub = heron__r_ub(&c->r, f4) / 4;
  int fr = heron__r_range(&c->r, "regs.ab", 0, 1, ub < 1 ? 1 : ub);
  heron__r_post(&c->r, HERON_C_PROD, f4, (int[]){heron__r_const(&c->r, 4), fr},
                2, NULL, 0, "regs.ab");
  s->regs = heron__r_sum(
      &c->r, "regs", (int[]){acc, fr, heron__r_const(&c->r, REGS_OVERHEAD)}, 3);
  heron__r_le(&c->r, s->regs, REGS_PER_THREAD_MAX, "regs <= 255 per thread");
  s->regs_limit = hw->regs_per_block > 0 ? hw->regs_per_block : 65536;
  int rb = heron__r_prod(&c->r, "regs.block", (int[]){s->regs, s->threads}, 2);
  heron__r_le(&c->r, rb, s->regs_limit,
              "regs * threads <= registers per block");
  NOTE(c, "Thread-Binding",
       "threadIdx.x = 32 (one warp), threadIdx.y = i.w * j.w warps; threads "
       "<= %lld, y <= %lld; estimated registers (8 per accumulator fragment "
       "+ a/b fragments + %d) <= 255 and x threads <= %lld",
       (long long)max_threads, (long long)max_y, REGS_OVERHEAD,
       (long long)s->regs_limit);
}

/* Add-Multi-Level-SPM for one operand: its shared chunk (compute-at knob:
 * position 0 holds k.m * k.f * wmma_k of K, position 1 k.f * wmma_k), the
 * storage-align offset, and the cooperative load's vector width, which the
 * index map bounds (vec_max_of).  Bytes = 2 * rows * (inner + pad). */
static void rule_operand_spm(ctx *c, int i) {
  heron__cuda_sched *s = c->s;
  heron__cuda_operand *o = &s->op[i];
  const char *nm = i == 0 ? "A" : "B";
  char name[48];
  snprintf(name, sizeof name, "%s.shared_at", nm);
  o->at = heron__r_range(&c->r, name, 1, 0, 1);
  snprintf(name, sizeof name, "%s.chunk.k", nm);
  int64_t kub = heron__r_ub(&c->r, s->kc0);
  o->kc = heron__r_range(&c->r, name, 0, 1, kub < 1 ? 1 : kub);
  heron__r_post(&c->r, HERON_C_SELECT, o->kc, (int[]){o->at, s->kc0, s->kc1}, 3,
                NULL, 0, name);
  snprintf(name, sizeof name, "%s.shared_pad", nm);
  o->pad = heron__r_set(&c->r, name, 1, PADS, NPADS);
  int64_t vals[4];
  int nv = 0;
  /* igemm 1 may widen the set: A's checked interior vectors and both
   * operands' vectors in igemm's K order; rule_igemm bounds the knob by
   * each order's widest. */
  int64_t vmax = o->vec_max;
  if (s->ig.fits && igemm_vec(s, i) > vmax)
    vmax = igemm_vec(s, i);
  for (int64_t v = 1; v <= vmax && v <= 8; v *= 2)
    vals[nv++] = v;
  snprintf(name, sizeof name, "%s.shared_vec", nm);
  o->vec = heron__r_set(&c->r, name, 1, vals, nv);
  int rows = i == 0 ? s->bm : s->bn;
  int inner = o->k_inner ? o->kc : rows, outer = o->k_inner ? rows : o->kc;
  snprintf(name, sizeof name, "%s.shared_pitch", nm);
  int pitch = heron__r_sum(&c->r, name, (int[]){inner, o->pad}, 2);
  o->pitch = pitch;
  o->swz = -1;
  snprintf(name, sizeof name, "%s.shared_bytes", nm);
  o->bytes = heron__r_prod(&c->r, name,
                           (int[]){heron__r_const(&c->r, 2), outer, pitch}, 3);
}

/* Add-Multi-Scope-SPM: the accumulators go through C.shared (its own
 * storage-align offset, M-inner when the output is contiguous along M) to
 * the global output with a vectorized, guarded store.  The memory rule,
 * after reuse: A.shared + B.shared fit the block's shared memory during
 * the main loop, and C.shared, which reuses their space, fits afterwards. */
static void rule_scope_spm(ctx *c) {
  heron__cuda_sched *s = c->s;
  const heron__hw *hw = &c->t->hw;
  s->c_pad = heron__r_set(&c->r, "C.shared_pad", 1, PADS, NPADS);
  int m_inner = s->out_group == HERON__GM;
  int inner = m_inner ? s->bm : s->bn, outer = m_inner ? s->bn : s->bm;
  int pitch =
      heron__r_sum(&c->r, "C.shared_pitch", (int[]){inner, s->c_pad}, 2);
  s->c_bytes =
      heron__r_prod(&c->r, "C.shared_bytes",
                    (int[]){heron__r_const(&c->r, 4), outer, pitch}, 3);
  int64_t vals[4];
  int nv = 0;
  for (int64_t v = 1; v <= s->out_vec_max && v <= 8; v *= 2)
    vals[nv++] = v;
  s->out_vec = heron__r_set(&c->r, "out.vec", 1, vals, nv);
  s->ab_bytes = heron__r_sum(&c->r, "AB.shared_bytes",
                             (int[]){s->op[0].bytes, s->op[1].bytes}, 2);
  s->smem_limit = hw->smem_per_block_optin > hw->smem_per_block
                      ? hw->smem_per_block_optin
                      : hw->smem_per_block;
  if (s->smem_limit <= 0)
    s->smem_limit = 49152;
  heron__r_le(&c->r, s->c_bytes, s->smem_limit, "C.shared <= shared memory");
  NOTE(c, "Add-Multi-Level-SPM",
       "global -> A.shared (%s-inner, vec <= %lld) / B.shared (%s-inner, "
       "vec <= %lld) at compute-at position shared_at, padded by shared_pad "
       "-> wmma.matrix_a / matrix_b fragments",
       s->op[0].k_inner ? "K" : "M", (long long)s->op[0].vec_max,
       s->op[1].k_inner ? "K" : "N", (long long)s->op[1].vec_max);
  NOTE(c, "Add-Multi-Scope-SPM",
       "wmma.accumulator -> C.shared (%s-inner, reusing the A/B space) -> "
       "global, out.vec <= %lld; live sets after reuse <= %lld bytes%s",
       m_inner ? "M" : "N", (long long)s->out_vec_max, (long long)s->smem_limit,
       s->smem_limit > 49152 ? " (dynamic, opt-in above 48 KiB)" : "");
}

/* Heron's unroll knob: v in 0..5 means auto_unroll_max_step = 4^v: the k.m
 * loop and the cooperative copies are unrolled entirely when they have at
 * most 4^v steps, else not at all (the fragment loops are always unrolled
 * so fragments stay in registers). */
static void rule_unroll(ctx *c) {
  c->s->unroll = heron__r_range(&c->r, "unroll", 1, 0, 5);
  NOTE(c, "Unroll",
       "unroll in 0..5: the k.m loop and the cooperative copies are unrolled "
       "when they have at most 4^unroll steps");
}

/* Software pipelining (the knob `pipeline`, 1 to 4 stages): with S > 1,
 * A.shared and B.shared hold S chunks each (a ring), and the chunks of the
 * loop the copies sit in (k.o at shared_at 0, k.m at 1) are issued S - 1
 * ahead of the mma, as cp.async (sm_80+) copy groups that run beside the
 * Tensor Cores.  One loop carries the pipeline, so both operands must sit
 * at the same position.  The memory rule counts the stages:
 * pipeline * (A.shared + B.shared) fit the block's shared memory (the
 * opt-in limit) during the main loop.  Configs recorded before the knob
 * existed are single-stage (its absent value, 1); 2 is the double buffer
 * of the knob's first version, unchanged. */
static void rule_pipeline(ctx *c) {
  heron__cuda_sched *s = c->s;
  s->pipeline =
      heron__r_set(&c->r, "pipeline", 1, (const int64_t[]){1, 2, 3, 4}, 4);
  if (s->pipeline >= 0 &&
      heron__space_var_absent(c->r.sp, s->pipeline, 1) != HERON_OK && !c->r.rc)
    c->r.rc = heron_error_set(c->r.err, HERON_EINVAL,
                              "cuda template: cannot declare pipeline's "
                              "absent value");
  /* extra = pipeline - 1 (0 when single-stage); A.shared_at * extra ==
   * B.shared_at * extra says the positions agree whenever extra > 0, as
   * each position is 0 or 1. */
  int extra = heron__r_range(&c->r, "pipeline.extra", 0, 0, 3);
  heron__r_post(&c->r, HERON_C_SUM, s->pipeline,
                (int[]){extra, heron__r_const(&c->r, 1)}, 2, NULL, 0,
                "pipeline == pipeline.extra + 1");
  int pa = heron__r_range(&c->r, "pipeline.A_at", 0, 0, 3);
  int pb = heron__r_range(&c->r, "pipeline.B_at", 0, 0, 3);
  heron__r_post(&c->r, HERON_C_PROD, pa, (int[]){s->op[0].at, extra}, 2, NULL,
                0, "pipeline.A_at");
  heron__r_post(&c->r, HERON_C_PROD, pb, (int[]){s->op[1].at, extra}, 2, NULL,
                0, "pipeline.B_at");
  heron__r_eq(&c->r, pa, pb, "pipeline > 1 => A.shared_at == B.shared_at");
  s->ab_bytes = heron__r_prod(&c->r, "AB.shared_bytes.staged",
                              (int[]){s->ab_bytes, s->pipeline}, 2);
  heron__r_le(&c->r, s->ab_bytes, s->smem_limit,
              "pipeline * (A.shared + B.shared) <= shared memory");
  NOTE(c, "Software-Pipelining",
       "pipeline in {1, 2, 3, 4}: S > 1 keeps S chunks of A/B.shared in a "
       "ring and issues chunk c + S - 1 (cp.async groups; vec 1 plainly) "
       "during chunk c's mma, after cp.async.wait_group S - 2; needs "
       "A.shared_at == B.shared_at; pipeline * (A + B) <= %lld bytes; old "
       "logs read as 1",
       (long long)s->smem_limit);
}

/* Shared-memory layouts without bank conflicts (the knobs A.shared_swz and
 * B.shared_swz, issue 32 step 2).  A shared tile whose row pitch is a
 * multiple of 128 bytes puts the 8 rows that one ldmatrix phase reads in
 * one bank group: an 8-way conflict, which the storage-align pads break
 * only for some pitches and at the price of shared memory.  Swizzle 1
 * stores element (row, col) in the 16-byte chunk (col / 8) ^ key of its
 * row, key = (row / (8 / per)) % per, per = min(pitch / 8, 8) chunks
 * (heron__swz, the one address function of the mma prelude): any 8
 * consecutive rows at one chunk, and any 8 consecutive chunks that start
 * at a multiple of 8 (a phase of 16-byte stores), lie in 8 distinct
 * 16-byte bank groups.  The XOR must stay inside the row and the period
 * must cover a 128-byte line, so the pitch is 16 or 32 halves (32- or
 * 64-byte rows, 4 or 2 rows per line, key period 8 rows) or a multiple of
 * 64 halves (128 bytes); a swizzled operand has pad 0.  wmma's
 * load_matrix_sync takes a plain pitch, so swizzle needs mma == 1 (and so
 * sm_80).  The rules claim: with swizzle 1 every ldmatrix phase and every
 * phase of 16-byte stores of that operand is conflict-free
 * (tests/targets/cuda/test_cuda_template.c counts the banks of the emulated
 * kernel).  Absent value 0: old logs read back unswizzled. */
static void rule_swizzle(ctx *c) {
  heron__cuda_sched *s = c->s;
  int ok = c->t->hw.sm >= 80;
  for (int i = 0; i < 2; i++) {
    heron__cuda_operand *o = &s->op[i];
    const char *nm = i == 0 ? "A" : "B";
    char name[48], what[128];
    snprintf(name, sizeof name, "%s.shared_swz", nm);
    o->swz = heron__r_set(&c->r, name, 1, (const int64_t[]){0, 1}, ok ? 2 : 1);
    if (o->swz >= 0 &&
        heron__space_var_absent(c->r.sp, o->swz, 0) != HERON_OK && !c->r.rc)
      c->r.rc = heron_error_set(c->r.err, HERON_EINVAL,
                                "cuda template: cannot declare %s's absent "
                                "value",
                                name);
    snprintf(name, sizeof name, "%s.swz.mma", nm);
    /* Products from 0 (heron__r_prod's start at 1). */
    int sm = heron__r_range(&c->r, name, 0, 0, 1);
    heron__r_post(&c->r, HERON_C_PROD, sm, (int[]){o->swz, s->mma}, 2, NULL, 0,
                  name);
    snprintf(what, sizeof what,
             "%s.shared_swz == 1 => mma == 1 (wmma loads no swizzled tile)",
             nm);
    heron__r_eq(&c->r, sm, o->swz, what);
    snprintf(name, sizeof name, "%s.swz.pad", nm);
    int sp = heron__r_range(&c->r, name, 0, 0, PADS[NPADS - 1]);
    heron__r_post(&c->r, HERON_C_PROD, sp, (int[]){o->swz, o->pad}, 2, NULL, 0,
                  name);
    snprintf(what, sizeof what, "%s.shared_swz == 1 => %s.shared_pad == 0", nm,
             nm);
    heron__r_le(&c->r, sp, 0, what);
    /* row = select(swz, 64, pitch) in {16, 32, 64, 128, 192, ...}. */
    int64_t ub = heron__r_ub(&c->r, o->pitch);
    if (ub < 64)
      ub = 64;
    if (ub > 64 * 4096)
      ub = 64 * 4096;
    int64_t n = 2 + ub / 64;
    int64_t *rows = malloc((size_t)n * sizeof *rows);
    if (!rows) {
      if (!c->r.rc)
        c->r.rc = heron_error_set(c->r.err, HERON_ENOMEM,
                                  "cuda template: out of memory");
      return;
    }
    rows[0] = 16;
    rows[1] = 32;
    for (int64_t k = 1; k <= ub / 64; k++)
      rows[1 + k] = 64 * k;
    snprintf(name, sizeof name, "%s.swz.row", nm);
    int row = heron__r_range(&c->r, name, 0, 1, ub);
    heron__r_post(&c->r, HERON_C_SELECT, row,
                  (int[]){o->swz, heron__r_const(&c->r, 64), o->pitch}, 3, NULL,
                  0, name);
    snprintf(what, sizeof what,
             "%s.shared_swz == 1 => pitch in {16, 32} or a multiple of 64 "
             "halves",
             nm);
    heron__r_post(&c->r, HERON_C_IN, row, NULL, 0, rows, (int)n, what);
    free(rows);
  }
  if (ok)
    NOTE(c, "Shared-Swizzle",
         "A.shared_swz, B.shared_swz in {0, 1}: 1 XOR-swizzles the tile's "
         "16-byte chunks by row (period min(pitch / 8, 8) chunks), used by "
         "the cooperative / cp.async stores and the ldmatrix rows alike; "
         "needs mma == 1, pad 0 and a pitch of 16, 32 or a multiple of 64 "
         "halves; claimed conflict-free: every ldmatrix phase and every "
         "phase of 16-byte stores; old logs read as 0");
  else
    NOTE(c, "Shared-Swizzle",
         "A.shared_swz = B.shared_swz = 0: the swizzle needs mma.sync "
         "(sm_80), this is sm_%d",
         c->t->hw.sm);
}

/* Thread-block swizzle for L2 reuse (the knob block_swz, issue 32 step 6):
 * G in {1, 2, 4, 8} rows of M tiles per group of the block order
 * (core/targets/cuda/template.h).  Any G computes the same tiles, each
 * once; it only orders them.  Two constraints keep the space from holding
 * orders that cannot differ: G <= i.b (a group of more rows than the grid
 * has is the same order as G = i.b), and G > 1 only on a grid of at least
 * two blocks per SM (i.b * j.b >= 2 * SMs): a grid that fits in one wave
 * runs every block at once, in any order.  Absent value 1: old logs read
 * back in row-major order, and G = 1 generates the source of before the
 * knob. */
static void rule_block_swizzle(ctx *c) {
  heron__cuda_sched *s = c->s;
  static const int64_t g[] = {1, 2, 4, 8}, hi[] = {2, 4, 8};
  s->block_swz = heron__r_set(&c->r, "block_swz", 1, g, 4);
  if (s->block_swz >= 0 &&
      heron__space_var_absent(c->r.sp, s->block_swz, 1) != HERON_OK && !c->r.rc)
    c->r.rc = heron_error_set(c->r.err, HERON_EINVAL,
                              "cuda template: cannot declare block_swz's "
                              "absent value");
  heron__r_post(&c->r, HERON_C_LE, s->block_swz, (int[]){s->split[0][0]}, 1,
                NULL, 0, "block_swz <= i.b");
  /* on = (G > 1): G = select(on, 1, G'), G' in {2, 4, 8}; then the grid's
   * floor select(on, 0, 2 * SMs) <= i.b * j.b. */
  int on = heron__r_range(&c->r, "block_swz.on", 0, 0, 1);
  int wide = heron__r_set(&c->r, "block_swz.wide", 0, hi, 3);
  heron__r_post(&c->r, HERON_C_SELECT, s->block_swz,
                (int[]){on, heron__r_const(&c->r, 1), wide}, 3, NULL, 0,
                "block_swz.on == (block_swz > 1)");
  int64_t sms = c->t->hw.sm_count > 0 ? c->t->hw.sm_count : 1;
  int grid = heron__r_prod(&c->r, "grid.blocks",
                           (int[]){s->split[0][0], s->split[1][0]}, 2);
  int floor = heron__r_set(&c->r, "block_swz.min_grid", 0,
                           (const int64_t[]){0, 2 * sms}, 2);
  heron__r_post(
      &c->r, HERON_C_SELECT, floor,
      (int[]){on, heron__r_const(&c->r, 0), heron__r_const(&c->r, 2 * sms)}, 3,
      NULL, 0,
      "block_swz.min_grid == select(block_swz.on, 0, "
      "2 * SMs)");
  heron__r_post(&c->r, HERON_C_LE, floor, (int[]){grid}, 1, NULL, 0,
                "block_swz > 1 => i.b * j.b >= 2 * SMs");
  NOTE(c, "Block-Swizzle",
       "block_swz in {1, 2, 4, 8}: blocks walk the tile grid in groups of "
       "block_swz rows of M tiles (L2 reuse of A rows and B columns); "
       "block_swz <= i.b, and > 1 only on a grid of >= %lld blocks (2 per "
       "SM); old logs read as 1",
       (long long)(2 * sms));
}

/* Convolutions as implicit GEMM (the knob igemm, issue 32 step 4), for
 * ops whose A (input 0) has a sliding window, a dimension indexed by M and
 * K axes together: 1 addresses A through a table of the block's M rows in
 * shared memory, filled once per block before the k loop (template.h,
 * heron__cuda_igemm: each row's base offset and guarded coordinates), so
 * that the k loop adds only the K part, and allows A.shared_vec up to the
 * checked interior vector (ig.vec_max): V elements along the contiguous
 * axis are one 2V-byte load (or cp.async) where all V pass their guards
 * and the address is aligned, element by element elsewhere.  The table
 * lives beside A.shared and B.shared in the main loop: pipeline * (A + B)
 * + igemm * table <= shared memory.  Absent value 0: old logs read back
 * with the index map evaluated per element, the kernel they measured.
 * Ops without a sliding window (GEMM, BMM, GEMV, the scan) have no knob,
 * so their spaces and kernels are those of before. */
static void rule_igemm(ctx *c) {
  heron__cuda_sched *s = c->s;
  const heron__cuda_igemm *ig = &s->ig;
  s->igemm = -1;
  if (!ig->fits)
    return;
  s->igemm = heron__r_set(&c->r, "igemm", 1, (const int64_t[]){0, 1}, 2);
  if (s->igemm >= 0 &&
      heron__space_var_absent(c->r.sp, s->igemm, 0) != HERON_OK && !c->r.rc)
    c->r.rc = heron_error_set(c->r.err, HERON_EINVAL,
                              "cuda template: cannot declare igemm's absent "
                              "value");
  int tb = heron__r_prod(
      &c->r, "A.rows_bytes",
      (int[]){heron__r_const(&c->r, ig->ncols * ig->elem_bytes), s->bm}, 2);
  /* Products from 0 (heron__r_prod's start at 1). */
  int64_t ub = heron__r_ub(&c->r, tb);
  int on = heron__r_range(&c->r, "A.rows_bytes.on", 0, 0, ub < 1 ? 1 : ub);
  heron__r_post(&c->r, HERON_C_PROD, on, (int[]){s->igemm, tb}, 2, NULL, 0,
                "A.rows_bytes.on");
  int live = heron__r_sum(&c->r, "main_loop.shared_bytes",
                          (int[]){s->ab_bytes, on}, 2);
  heron__r_le(&c->r, live, s->smem_limit,
              "pipeline * (A.shared + B.shared) + igemm * A.rows <= shared "
              "memory");
  for (int i = 0; i < 2; i++) {
    /* vec <= select(igemm, the view's widest, igemm's widest). */
    int64_t v0 = s->op[i].vec_max, v1 = igemm_vec(s, i);
    if (v0 == v1)
      continue;
    char name[48], what[96];
    snprintf(name, sizeof name, "%s.shared_vec.cap", i ? "B" : "A");
    int cap = heron__r_set(&c->r, name, 0, (const int64_t[]){v0, v1}, 2);
    heron__r_post(
        &c->r, HERON_C_SELECT, cap,
        (int[]){s->igemm, heron__r_const(&c->r, v0), heron__r_const(&c->r, v1)},
        3, NULL, 0, name);
    snprintf(what, sizeof what, "%s.shared_vec <= select(igemm, %lld, %lld)",
             i ? "B" : "A", (long long)v0, (long long)v1);
    heron__r_post(&c->r, HERON_C_LE, s->op[i].vec, (int[]){cap}, 1, NULL, 0,
                  what);
  }
  NOTE(c, "Implicit-GEMM",
       "igemm in {0, 1}: 1 fills A.rows (per M row: base offset, %d "
       "guarded coordinates; %d-byte entries) once per block, the k loop "
       "adds the K part; A.shared_vec <= %lld (checked interior vectors) "
       "with igemm 1, <= %lld with 0; old logs read as 0",
       ig->ok_col < 0 ? ig->ncols - 1 : 0, ig->elem_bytes,
       (long long)(igemm_vec(s, 0) > s->op[0].vec_max ? igemm_vec(s, 0)
                                                      : s->op[0].vec_max),
       (long long)s->op[0].vec_max);
  if (ig->reorder)
    NOTE(c, "Implicit-GEMM-K-order",
         "igemm 1 splits k with %s innermost (A's contiguous axis): "
         "A.shared_vec <= %lld, B.shared_vec <= %lld",
         c->t->op.axes[ig->gk.axes[ig->gk.naxes - 1]].name,
         (long long)igemm_vec(s, 0), (long long)ig->b_vec);
}

/* Split-K (the knob split_k, issue 32 step 5): S in {1, 2, 4, 8, 16}
 * blocks share the K of each output tile (blockIdx.z), so that a skinny
 * shape (GEMV, a GEMM with a small M or N, C1D), whose output tiles leave
 * most SMs idle, puts its long reduction on more of them.  Each block runs
 * k.o / S of the k.o chunks, writes its fp32 partial tile to a workspace
 * of the module, and the block that arrives last at the tile sums the S
 * partials (in split order) and stores the tile with the epilogue
 * (template.h).  The rules:
 *   - the knob exists only where K (padded) holds two splits of at least
 *     SPLIT_K_MIN, and S takes only values with K >= S * SPLIT_K_MIN: a
 *     shorter split cannot pay for its share of the reduction (and the
 *     spaces of short reductions stay what they were);
 *   - k.o == S * k.o.split: every split runs the same whole number of
 *     chunks, so none is left without K work;
 *   - S > 1 => the chunks of a split at the pipelined loop (k.o.split at
 *     shared_at 0, k.o.split * k.m at 1) >= pipeline: each split gets at
 *     least one k-tile per stage;
 *   - S > 1 => i.b * j.b * batch * S <= 4 * SMs: split-K fills a GPU that
 *     the output tiles leave idle;
 *   - S > 1 => the workspace (4 bytes * block.m * block.n per block of
 *     that grid) <= SPLIT_K_WS_MAX: the module that holds it stays
 *     small.
 * Absent value 1: old logs read back unsplit, and S = 1 generates the
 * source of before the knob. */
#define SPLIT_K_MIN 128
#define SPLIT_K_WS_MAX ((int64_t)64 << 20)
static void rule_split_k(ctx *c) {
  heron__cuda_sched *s = c->s;
  s->split_k = -1;
  int64_t kp = s->padded[HERON__GK];
  if (kp < 2 * SPLIT_K_MIN)
    return;
  static const int64_t all[] = {1, 2, 4, 8, 16};
  int64_t vals[5], hi[4];
  int nv = 0;
  for (int i = 0; i < 5; i++)
    if (all[i] * SPLIT_K_MIN <= kp) {
      vals[nv] = all[i];
      if (nv)
        hi[nv - 1] = all[i];
      nv++;
    }
  s->split_k = heron__r_set(&c->r, "split_k", 1, vals, nv);
  if (s->split_k >= 0 &&
      heron__space_var_absent(c->r.sp, s->split_k, 1) != HERON_OK && !c->r.rc)
    c->r.rc = heron_error_set(c->r.err, HERON_EINVAL,
                              "cuda template: cannot declare split_k's "
                              "absent value");
  int ko = s->split[2][0];
  int64_t kub = heron__r_ub(&c->r, ko);
  int per = heron__r_range(&c->r, "k.o.split", 0, 1, kub < 1 ? 1 : kub);
  heron__r_post(&c->r, HERON_C_PROD, ko, (int[]){s->split_k, per}, 2, NULL, 0,
                "k.o == split_k * k.o.split");
  /* on = (S > 1): S = select(on, 1, S'), S' in {2, ...}. */
  int on = heron__r_range(&c->r, "split_k.on", 0, 0, 1);
  int wide = heron__r_set(&c->r, "split_k.wide", 0, hi, nv - 1);
  heron__r_post(&c->r, HERON_C_SELECT, s->split_k,
                (int[]){on, heron__r_const(&c->r, 1), wide}, 3, NULL, 0,
                "split_k.on == (split_k > 1)");
  /* The chunks of one split at the pipelined loop: k.o.split *
   * select(A.shared_at, k.m, 1) >= select(on, 1, pipeline). */
  int64_t mub = heron__r_ub(&c->r, s->split[2][1]);
  int km = heron__r_range(&c->r, "split_k.km", 0, 1, mub < 1 ? 1 : mub);
  heron__r_post(&c->r, HERON_C_SELECT, km,
                (int[]){s->op[0].at, heron__r_const(&c->r, 1), s->split[2][1]},
                3, NULL, 0, "split_k.km == select(A.shared_at, 1, k.m)");
  int chunks = heron__r_prod(&c->r, "split_k.chunks", (int[]){per, km}, 2);
  int need = heron__r_range(&c->r, "split_k.stages", 0, 1, 4);
  heron__r_post(&c->r, HERON_C_SELECT, need,
                (int[]){on, heron__r_const(&c->r, 1), s->pipeline}, 3, NULL, 0,
                "split_k.stages == select(split_k.on, 1, pipeline)");
  heron__r_post(&c->r, HERON_C_LE, need, (int[]){chunks}, 1, NULL, 0,
                "split_k > 1 => the chunks of a split >= pipeline");
  /* The split grid: i.b * j.b * batch * S <= select(on, its bound,
   * 4 * SMs). */
  int64_t sms = c->t->hw.sm_count > 0 ? c->t->hw.sm_count : 1;
  int blocks = heron__r_prod(
      &c->r, "split_k.grid",
      (int[]){s->split[0][0], s->split[1][0],
              heron__r_const(&c->r, s->g[HERON__GB].extent), s->split_k},
      4);
  int64_t gub = heron__r_ub(&c->r, blocks);
  if (gub <= 4 * sms)
    gub = 4 * sms + 1;
  int cap = heron__r_set(&c->r, "split_k.max_grid", 0,
                         (const int64_t[]){4 * sms, gub}, 2);
  heron__r_post(
      &c->r, HERON_C_SELECT, cap,
      (int[]){on, heron__r_const(&c->r, gub), heron__r_const(&c->r, 4 * sms)},
      3, NULL, 0, "split_k.max_grid == select(split_k.on, any, 4 * SMs)");
  heron__r_post(&c->r, HERON_C_LE, blocks, (int[]){cap}, 1, NULL, 0,
                "split_k > 1 => i.b * j.b * batch * split_k <= 4 * SMs");
  /* The workspace: a partial block tile of fp32 per block of the split
   * grid, <= select(on, its bound, SPLIT_K_WS_MAX). */
  int ws =
      heron__r_prod(&c->r, "split_k.ws_bytes",
                    (int[]){blocks, s->bm, s->bn, heron__r_const(&c->r, 4)}, 4);
  int64_t wub = heron__r_ub(&c->r, ws);
  if (wub <= SPLIT_K_WS_MAX)
    wub = SPLIT_K_WS_MAX + 1;
  int wcap = heron__r_set(&c->r, "split_k.max_ws", 0,
                          (const int64_t[]){SPLIT_K_WS_MAX, wub}, 2);
  heron__r_post(&c->r, HERON_C_SELECT, wcap,
                (int[]){on, heron__r_const(&c->r, wub),
                        heron__r_const(&c->r, SPLIT_K_WS_MAX)},
                3, NULL, 0,
                "split_k.max_ws == select(split_k.on, any, 64 MiB)");
  heron__r_post(&c->r, HERON_C_LE, ws, (int[]){wcap}, 1, NULL, 0,
                "split_k > 1 => workspace <= 64 MiB");
  NOTE(c, "Split-K",
       "split_k in {1..%lld}: S > 1 blocks (blockIdx.z) each run k.o / S "
       "chunks, write fp32 partials to a module workspace, the last sums "
       "them in split order and stores; needs K >= 128 S, >= pipeline "
       "chunks a split, i.b*j.b*batch*S <= %lld; old logs read as 1",
       (long long)vals[nv - 1], (long long)(4 * sms));
}

int heron__cuda_rules_apply(heron__template *t, heron_space *sp,
                            heron_error *err) {
  const heron__op *op = &t->op;
  if (op->ninputs != 2)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "cuda template: the implicit-GEMM view needs two "
                           "inputs; op %s has %d",
                           op->name, op->ninputs);
  if (op->dtype != HERON__FP16 || op->out_dtype != HERON__FP16)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "the cuda (Tensor Core) template supports fp16 "
                           "only, not %s; use --dtype fp16",
                           heron__dtype_name(op->dtype));
  if (op->out.bounded)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "cuda template: op %s writes its output through a "
                           "bounded index",
                           op->name);
  ctx *c = calloc(1, sizeof *c);
  heron__cuda_sched *s = calloc(1, sizeof *s);
  if (!c || !s) {
    free(c);
    free(s);
    return heron_error_set(err, HERON_ENOMEM, "cuda template: out of memory");
  }
  t->sched = s;
  c->t = t;
  c->s = s;
  c->r.sp = sp;
  c->r.err = err;
  c->r.who = "cuda template";
  int rc = build_view(c);
  if (rc == HERON_OK) {
    rule_always_inline(c);
    rule_tensorize(c);
    rule_tiling(c);
    rule_threads(c);
    rule_operand_spm(c, 0);
    rule_operand_spm(c, 1);
    rule_scope_spm(c);
    rule_unroll(c);
    rule_pipeline(c);
    heron__cuda_rule_mma(t, &c->r, s);
    rule_swizzle(c);
    rule_block_swizzle(c);
    rule_igemm(c);
    rule_split_k(c);
    if (s->wg)
      heron__cuda_rules_wgmma(&c->r, s);
    rc = c->r.rc;
  }
  free(c);
  return rc;
}
