/* core/targets/cuda/codegen.c - CUDA source for one config of the Tensor
 * Core template (core/targets/cuda/template.h), written in the dialect of
 * core/targets/cuda/kernel.h so that the same text is both the NVRTC kernel
 * and, compiled by the host compiler, its CPU check.
 *
 * Every loop length is a compile-time constant of the config; the fused
 * M, N, K and batch indices are split back into the op's axes with
 * constant div / mod, and each tensor element is addressed through the
 * op's index map (padding and divided indices become guards that read
 * zero); with the knob igemm, A's M rows are split once per block into
 * the table A.rows and its loads add only the K part (codegen_igemm.c).
 * Fragment loops are fully unrolled so fragments live in registers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/targets/cuda/codegen.h"

void heron__cuda_read_knobs(const heron__template *t, const int64_t *cfg,
                            knobs *k) {
  const heron__cuda_sched *s = heron__cuda_sched_of(t);
  k->wm = cfg[s->wm];
  k->wn = cfg[s->wn];
  k->wk = cfg[s->wk];
  for (int d = 0; d < 3; d++)
    for (int l = 0; l < 3; l++)
      k->sp[d][l] = cfg[s->split[d][l]];
  k->bm = k->sp[0][1] * k->sp[0][2] * k->wm;
  k->bn = k->sp[1][1] * k->sp[1][2] * k->wn;
  k->kc1 = k->sp[2][2] * k->wk;
  k->kc0 = k->sp[2][1] * k->kc1;
  k->cover[0] = k->sp[0][0] * k->bm;
  k->cover[1] = k->sp[1][0] * k->bn;
  k->cover[2] = k->sp[2][0] * k->kc0;
  k->warps = k->sp[0][1] * k->sp[1][1];
  k->threads = 32 * k->warps;
  for (int i = 0; i < 2; i++) {
    const heron__cuda_operand *o = &s->op[i];
    int64_t rows = i == 0 ? k->bm : k->bn;
    k->at[i] = cfg[o->at];
    k->pad[i] = cfg[o->pad];
    k->vec[i] = cfg[o->vec];
    /* A space without the knob (built before it) is unswizzled. */
    k->swz[i] = o->swz >= 0 ? cfg[o->swz] : 0;
    k->kc[i] = k->at[i] == 0 ? k->kc0 : k->kc1;
    k->ld[i] = (o->k_inner ? k->kc[i] : rows) + k->pad[i];
    k->bytes[i] = 2 * (o->k_inner ? rows : k->kc[i]) * k->ld[i];
  }
  k->m_inner = s->out_group == HERON__GM;
  k->cpad = cfg[s->c_pad];
  k->ldc = (k->m_inner ? k->bm : k->bn) + k->cpad;
  k->cbytes = 4 * (k->m_inner ? k->bn : k->bm) * k->ldc;
  k->ovec = cfg[s->out_vec];
  k->unroll = cfg[s->unroll];
  k->stages = cfg[s->pipeline];
  /* A space without the knob (built before it) is the wmma kernel. */
  k->mma = s->mma >= 0 ? cfg[s->mma] : 0;
  k->bswz = s->block_swz >= 0 ? cfg[s->block_swz] : 1;
  /* A space without the knob (or an op without a sliding window) reads A
   * through its index map per element. */
  k->igemm = s->igemm >= 0 ? cfg[s->igemm] : 0;
  k->rbytes = k->igemm ? s->ig.ncols * s->ig.elem_bytes * k->bm : 0;
  /* A space without the knob (or a K too short for it) is unsplit. */
  k->splitk = s->split_k >= 0 ? cfg[s->split_k] : 1;
  k->kper = k->sp[2][0] / k->splitk;
}

static int64_t align128(int64_t x) { return (x + 127) / 128 * 128; }

void heron__cuda_smem_plan_of(const heron__template *t, const int64_t *cfg,
                              heron__cuda_smem_plan *p) {
  knobs k;
  heron__cuda_read_knobs(t, cfg, &k);
  memset(p, 0, sizeof *p);
  p->nbufs = 3;
  /* With pipeline stages each operand's buffers lie back to back. */
  int64_t a = k.stages * k.bytes[0], b = k.stages * k.bytes[1];
  p->buf[0] = (heron__cuda_smem_buf){"A.shared", 0, 0, a};
  p->buf[1] = (heron__cuda_smem_buf){"B.shared", 0, align128(a), b};
  p->buf[2] = (heron__cuda_smem_buf){"C.shared", 1, 0, k.cbytes};
  /* The wgmma path's mbarriers (one per stage) lie after both phases,
   * and its base is aligned to 1024 bytes inside the plan. */
  if (k.mma == 2)
    heron__cuda_wgmma_plan(&k, p);
  /* The row table of the implicit-GEMM addressing lives beside A and B. */
  if (k.igemm)
    p->buf[p->nbufs++] = (heron__cuda_smem_buf){
        "A.rows", 0, align128(align128(a) + b), k.rbytes};
  for (int i = 0; i < p->nbufs; i++) {
    int64_t end = p->buf[i].offset + p->buf[i].bytes;
    p->total = end > p->total ? end : p->total;
  }
  if (k.mma == 2)
    p->total += 1024;
}

void heron__cuda_launch_of(const heron__template *t, const int64_t *cfg,
                           heron__cuda_launch *l) {
  knobs k;
  heron__cuda_read_knobs(t, cfg, &k);
  const heron__cuda_sched *s = heron__cuda_sched_of(t);
  heron__cuda_smem_plan p;
  heron__cuda_smem_plan_of(t, cfg, &p);
  memset(l, 0, sizeof *l);
  l->grid[0] = (int)(k.sp[0][0] * k.sp[1][0]);
  l->grid[1] = (int)s->g[HERON__GB].extent;
  l->grid[2] = (int)k.splitk;
  l->block[0] = 32;
  l->block[1] = (int)k.warps;
  l->block[2] = 1;
  l->smem_bytes = p.total;
  if (k.mma == 2)
    heron__cuda_wgmma_tmaps(t, &k, l);
}

/* ---- emission helpers ---------------------------------------------------- */

static int64_t unroll_step(int64_t v) {
  int64_t n = 1;
  for (int i = 0; i < v; i++)
    n *= 4;
  return n;
}

void heron__cuda_split_group(gen *g, int depth, int grp, const char *fused,
                             const int *need) {
  /* K in the kernel's order (igemm 1 may have its own). */
  const heron__gemm_group *gr =
      grp == HERON__GK ? heron__cuda_k_order(g) : &g->s->g[grp];
  int64_t inner = 1;
  for (int i = gr->naxes - 1; i >= 0; i--) {
    int a = gr->axes[i];
    int64_t e = g->op->axes[a].extent;
    if (need[a]) {
      if (i == 0)
        emit(g, depth, "const %s ax_%s = (%s) / %lld;", g->it,
             g->op->axes[a].name, fused, (long long)inner);
      else
        emit(g, depth, "const %s ax_%s = (%s) / %lld %% %lld;", g->it,
             g->op->axes[a].name, fused, (long long)inner, (long long)e);
    }
    inner *= e;
  }
}

void heron__cuda_affine_part(gen *g, const heron__affine *ix, int which,
                             heron__buf *b) {
  int any = 0;
  for (int a = 0; a < g->op->naxes; a++) {
    int64_t c = ix->coef[a];
    if (!c || (which == M_TERMS && k_axis(g, a)) ||
        (which == K_TERMS && !k_axis(g, a)))
      continue;
    if (c == 1)
      heron__buf_printf(b, "%sax_%s", any ? " + " : "", g->op->axes[a].name);
    else
      heron__buf_printf(b, "%s%lld * ax_%s", any ? " + " : "", (long long)c,
                        g->op->axes[a].name);
    any = 1;
  }
  if (which == K_TERMS) {
    if (!any)
      heron__buf_puts(b, "0");
    return;
  }
  if (ix->offset || !any)
    heron__buf_printf(b, "%s%lld", any ? " + " : "", (long long)ix->offset);
}

static void affine_expr(gen *g, const heron__affine *ix, heron__buf *b) {
  heron__cuda_affine_part(g, ix, ALL_TERMS, b);
}

void heron__cuda_coord_guards(heron__buf *cond, char *var, size_t cap,
                              const heron__tensor *ts, int d) {
  int64_t div = heron__affine_div(&ts->index[d]);
  if (div > 1) {
    heron__buf_printf(cond, " && %s %% %lld == 0", var, (long long)div);
    snprintf(var + strlen(var), cap - strlen(var), " / %lld", (long long)div);
  }
  if (ts->bounded)
    heron__buf_printf(cond, " && (%s) >= 0 && (%s) < %lld", var, var,
                      (long long)ts->dims[d]);
}

/* Emits, for tensor ts whose axes ax_* are declared, `<idx>` (its flat
 * element index) and appends its guards (padding bounds, divisibility) to
 * `cond` as " && ..." terms. */
static void tensor_index(gen *g, int depth, const heron__tensor *ts,
                         const char *idx, heron__buf *cond) {
  heron__buf flat = {0};
  int64_t stride = 1;
  for (int d = ts->ndim - 1; d >= 0; d--) {
    const heron__affine *ix = &ts->index[d];
    heron__buf e = {0};
    affine_expr(g, ix, &e);
    char var[48];
    snprintf(var, sizeof var, "%s_d%d", idx, d);
    emit(g, depth, "const %s %s = %s;", g->it, var, e.data);
    heron__cuda_coord_guards(cond, var, sizeof var, ts, d);
    heron__buf_printf(&flat, "%s(%s) * %lld", flat.len ? " + " : "", var,
                      (long long)stride);
    stride *= ts->dims[d];
    heron__buf_free(&e);
  }
  emit(g, depth, "const %s %s = %s;", g->it, idx, flat.data ? flat.data : "0");
  heron__buf_free(&flat);
}

/* Loops are never unrolled beyond this many steps, whatever the knob: the
 * compiler stops unrolling a body that grows too large, and a fragment loop
 * left rolled inside it indexes its fragment array at run time, which puts
 * every fragment in local memory (seen as 13 KB stack frames). */
#define UNROLL_CAP 16

/* The unroll pragma of a loop of `trips` iterations, with the meaning of
 * TVM's auto_unroll_max_step = 4^unroll that Heron's knob sets: a loop of
 * at most that many steps (and at most UNROLL_CAP) is unrolled entirely, a
 * longer one not at all. */
static void unroll_pragma(gen *g, int depth, int64_t trips) {
  int64_t max = unroll_step(g->k.unroll);
  if (trips <= max && trips <= UNROLL_CAP)
    emit(g, depth, "#pragma unroll");
  else
    emit(g, depth, "#pragma unroll 1");
}

int heron__cuda_coop_loop(gen *g, int depth, int64_t total, int64_t v) {
  int64_t step = g->k.threads * v;
  int64_t trips = (total + step - 1) / step;
  /* An unrolled copy issues all its loads before the first store, so each
   * step keeps its vector (v / 2 registers, at least one) and an address
   * live: unroll only while that fits beside the fragments in the
   * registers __launch_bounds__ leaves each thread. */
  int64_t live = trips * (v / 2 > 1 ? v / 2 : 1) + trips;
  if (live > g->regs_free)
    trips = -trips; /* a negative count asks for no unrolling */
  unroll_pragma(g, depth, trips < 0 ? INT64_MAX : trips);
  if (trips < 0)
    trips = -trips;
  emit(g, depth, "for (int it = 0; it < %lld; it++) {", (long long)trips);
  emit(g, depth + 1, "const int e = (it * %lld + tid) * %lld;",
       (long long)g->k.threads, (long long)v);
  if (total % step == 0)
    return depth + 1;
  emit(g, depth + 1, "if (e < %lld) {", (long long)total);
  return depth + 2;
}

void heron__cuda_coop_loop_end(gen *g, int depth, int64_t total, int64_t v) {
  if (total % (g->k.threads * v) != 0)
    emit(g, depth + 1, "}");
  emit(g, depth, "}");
}

/* The cooperative load of operand i's chunk [k0, k0 + kc) of K into the
 * shared buffer `buf`: every thread copies vec halves per step, in the
 * buffer's contiguous order, so a warp reads consecutive addresses when the
 * tensor allows vectors.  With `async` the vector copies are cp.async ones
 * (HERON_CP_ASYNC, zero-filling what the guards leave out) that complete
 * at the caller's HERON_CP_WAIT; single halves stay plain loads. */
static void emit_load(gen *g, int depth, int i, const char *k0, const char *buf,
                      int async) {
  const heron__cuda_sched *s = g->s;
  const heron__cuda_operand *o = &s->op[i];
  const heron__tensor *ts = &g->op->in[i];
  const knobs *k = &g->k;
  int64_t rows = i == 0 ? k->bm : k->bn;
  int64_t inner = o->k_inner ? k->kc[i] : rows;
  int64_t outer = o->k_inner ? rows : k->kc[i];
  int64_t v = k->vec[i];
  const char *row0 = i == 0 ? "m0" : "n0";
  const heron__gemm_group *gs = &s->g[o->group], *gk = &s->g[HERON__GK];
  emit(g, depth, "/* %s.shared <- %s: %lld x %lld, vec %lld */",
       i == 0 ? "A" : "B", ts->name, (long long)outer, (long long)inner,
       (long long)v);
  int d = heron__cuda_coop_loop(g, depth, outer * inner, v);
  emit(g, d, "const int o = e / %lld, q = e %% %lld;", (long long)inner,
       (long long)inner);
  /* With igemm, A's row is its entry in A.rows: no fused M index. */
  if (i != 0 || !k->igemm)
    emit(g, d, "const %s gs = %s + %s;", g->it, row0, o->k_inner ? "o" : "q");
  emit(g, d, "const %s gk = %s + %s;", g->it, k0, o->k_inner ? "q" : "o");
  if (k->swz[i])
    emit(g, d, "heron_half *dst = %s + heron__swz(o, q, %lld);", buf,
         (long long)k->ld[i]);
  else
    emit(g, d, "heron_half *dst = %s + o * %lld + q;", buf,
         (long long)k->ld[i]);
  if (i == 0 && k->igemm) {
    heron__cuda_emit_load_rows(g, d, async);
    heron__cuda_coop_loop_end(g, depth, outer * inner, v);
    return;
  }
  int need[HERON__MAX_AXES];
  reads(g->op, ts, need);
  heron__cuda_split_group(g, d, o->group, "gs", need);
  heron__cuda_split_group(g, d, HERON__GK, "gk", need);
  heron__buf cond = {0};
  heron__buf_puts(&cond, "1");
  if (cover_of(k, o->group) != gs->extent)
    heron__buf_printf(&cond, " && gs < %lld", (long long)gs->extent);
  if (cover_of(k, HERON__GK) != gk->extent)
    heron__buf_printf(&cond, " && gk < %lld", (long long)gk->extent);
  tensor_index(g, d, ts, "gi", &cond);
  const char *elems = i == 0 ? "HERON_IN0_ELEMS" : "HERON_IN1_ELEMS";
  const char *src = i == 0 ? "in0" : "in1";
  if (v == 1) {
    emit(g, d, "HERON_GLOAD1(dst, %s, gi, %s, %s);", src, elems, cond.data);
  } else if (async) {
    emit(g, d, "HERON_CP_ASYNC(dst, %s, gi, %lld, %s, %s);", src, (long long)v,
         elems, cond.data);
  } else {
    emit(g, d, "if (%s) {", cond.data);
    emit(g, d + 1, "HERON_GCOPY(dst, %s, gi, %lld, %s);", src, (long long)v,
         elems);
    emit(g, d, "} else {");
    emit(g, d + 1, "for (int z = 0; z < %lld; z++) dst[z] = HERON_F2H(0.0f);",
         (long long)v);
    emit(g, d, "}");
  }
  heron__buf_free(&cond);
  heron__cuda_coop_loop_end(g, depth, outer * inner, v);
}

/* The store of C.shared to the output: out.vec halves per thread and step,
 * with the epilogue, skipping padded rows and columns. */
void heron__cuda_emit_store(gen *g, int depth) {
  const heron__cuda_sched *s = g->s;
  const heron__op *op = g->op;
  const knobs *k = &g->k;
  int64_t inner = k->m_inner ? k->bm : k->bn;
  int64_t v = k->ovec;
  const heron__gemm_group *gm = &s->g[HERON__GM], *gn = &s->g[HERON__GN];
  emit(g, depth, "/* C.shared -> %s, vec %lld */", op->out.name, (long long)v);
  int d = heron__cuda_coop_loop(g, depth, k->bm * k->bn, v);
  emit(g, d, "const int o = e / %lld, q = e %% %lld;", (long long)inner,
       (long long)inner);
  emit(g, d, "const %s gm = m0 + %s, gn = n0 + %s;", g->it,
       k->m_inner ? "q" : "o", k->m_inner ? "o" : "q");
  heron__buf cond = {0};
  heron__buf_puts(&cond, "1");
  if (cover_of(k, HERON__GM) != gm->extent)
    heron__buf_printf(&cond, " && gm < %lld", (long long)gm->extent);
  if (cover_of(k, HERON__GN) != gn->extent)
    heron__buf_printf(&cond, " && gn < %lld", (long long)gn->extent);
  emit(g, d, "if (%s) {", cond.data);
  heron__buf_free(&cond);
  int need[HERON__MAX_AXES];
  reads(op, &op->out, need);
  heron__cuda_split_group(g, d + 1, HERON__GM, "gm", need);
  heron__cuda_split_group(g, d + 1, HERON__GN, "gn", need);
  heron__buf unused = {0};
  tensor_index(g, d + 1, &op->out, "go", &unused);
  heron__buf_free(&unused);
  emit(g, d + 1, "const float *src = Cs + o * %lld + q;", (long long)k->ldc);
  emit(g, d + 1, "heron_half h[%lld];", (long long)v);
  emit(g, d + 1, "for (int z = 0; z < %lld; z++) {", (long long)v);
  emit(g, d + 2, "float x = src[z];");
  if (op->epilogue & HERON__EPI_BIAS) {
    /* The channel of lane z: lanes run along the C.shared inner group, so
     * the channel is re-derived from (g + z) when it lies in that group. */
    int ch = op->channel_axis, grp = -1;
    int64_t below = 1;
    for (int q = HERON__GM; q <= HERON__GN; q++) {
      const heron__gemm_group *gr = &s->g[q];
      int64_t in = 1;
      for (int i = gr->naxes - 1; i >= 0; i--) {
        if (gr->axes[i] == ch) {
          grp = q;
          below = in;
        }
        in *= op->axes[gr->axes[i]].extent;
      }
    }
    int lanes = grp == (k->m_inner ? HERON__GM : HERON__GN);
    const char *fused = grp == HERON__GM ? "gm" : "gn";
    if (grp < 0)
      emit(g, d + 2, "x += HERON_H2F(bias[ax_%s]);", op->axes[ch].name);
    else
      emit(g, d + 2, "x += HERON_H2F(bias[(%s%s) / %lld %% %lld]);", fused,
           lanes ? " + z" : "", (long long)below,
           (long long)op->axes[ch].extent);
  }
  if (op->epilogue & HERON__EPI_RELU)
    emit(g, d + 2, "x = x > 0.0f ? x : 0.0f;");
  emit(g, d + 2, "h[z] = HERON_F2H(x);");
  emit(g, d + 1, "}");
  emit(g, d + 1, "HERON_GSTORE(out, go, HERON_OUT_ELEMS, h, %lld);",
       (long long)v);
  emit(g, d, "}");
  heron__cuda_coop_loop_end(g, depth, k->bm * k->bn, v);
}

/* Whether the mma.sync k-steps of a chunk ping-pong between two fragment
 * sets: with k.f > 1 steps, fully unrolled (so that the set index is a
 * constant and both sets stay in registers), the fragments of step kf + 1
 * are loaded before the mma.sync of step kf. */
static int frag_pingpong(const knobs *k) {
  return k->mma && k->sp[2][2] > 1 && k->sp[2][2] <= UNROLL_CAP;
}

/* The fragment loads of one k-step `kf` (a constant, a name or a
 * parenthesised expression) into the sets fa[seta i] / fb[setb j] (seta,
 * setb "" or "<offset> + "), reading the shared buffers a and b. */
static void emit_frag_loads(gen *g, int d, const char *a, const char *b,
                            const char *kf, const char *seta,
                            const char *setb) {
  const heron__cuda_sched *s = g->s;
  const knobs *k = &g->k;
  for (int i = 0; i < 2; i++)
    emit(g, d, "const int k%c = %s%s * %lld;", i == 0 ? 'a' : 'b',
         k->at[i] == 0 ? (k->sp[2][1] > 1 ? "km * CHUNK1 + " : "") : "", kf,
         (long long)k->wk);
  /* The tile's element offset in the buffer; a swizzled buffer is read
   * through HERON_LDMATRIX_*_SWZ, which maps each lane's row with
   * heron__swz_at from the buffer's start. */
  for (int op = 0; op < 2; op++) {
    const char *buf = op == 0 ? a : b;
    const char *frag = op == 0 ? "fa" : "fb";
    const char *set = op == 0 ? seta : setb;
    const char *ix = op == 0 ? "i" : "j";
    const char *w = op == 0 ? "wi" : "wj";
    char kk = op == 0 ? 'a' : 'b';
    int64_t f = k->sp[op][2], ws = op == 0 ? k->wm : k->wn, ld = k->ld[op];
    int kin = s->op[op].k_inner;
    /* A: row (K-inner) / col; B: col (K-inner) / row. */
    const char *lay = (kin ^ (op == 1)) ? "row" : "col";
    char off[192];
    if (kin)
      snprintf(off, sizeof off, "(%s * %lld + %s * %lld) * %lld + k%c", w,
               (long long)(f * ws), ix, (long long)ws, (long long)ld, kk);
    else
      snprintf(off, sizeof off, "k%c * %lld + %s * %lld + %s * %lld", kk,
               (long long)ld, w, (long long)(f * ws), ix, (long long)ws);
    emit(g, d, "#pragma unroll");
    emit(g, d, "for (int %s = 0; %s < %lld; %s++)", ix, ix, (long long)f, ix);
    if (k->swz[op])
      emit(g, d + 1, "HERON_LDMATRIX_%c_SWZ(%s[%s%s], %s, %s, %lld, %s);",
           op == 0 ? 'A' : 'B', frag, set, ix, buf, off, (long long)ld, lay);
    else
      emit(g, d + 1, "%s(%s[%s%s], %s + %s, %lld, %s);",
           k->mma ? (op == 0 ? "HERON_LDMATRIX_A" : "HERON_LDMATRIX_B")
                  : (op == 0 ? "HERON_LOAD_A" : "HERON_LOAD_B"),
           frag, set, ix, buf, off, (long long)ld, lay);
  }
}

/* The mma of every (i, j) tile on the fragment set at fa[set] / fb[set]. */
static void emit_frag_mmas(gen *g, int d, const char *seta, const char *setb) {
  const knobs *k = &g->k;
  emit(g, d, "#pragma unroll");
  emit(g, d, "for (int i = 0; i < %lld; i++)", (long long)k->sp[0][2]);
  emit(g, d + 1, "#pragma unroll");
  emit(g, d + 1, "for (int j = 0; j < %lld; j++)", (long long)k->sp[1][2]);
  emit(g, d + 2, "%s(acc[i * %lld + j], fa[%si], fb[%sj]);",
       k->mma ? "HERON_MMA_SYNC" : "HERON_MMA", (long long)k->sp[1][2], seta,
       setb);
}

/* The k-steps of one chunk: fragment loads and mma for each wmma_k slice,
 * reading the shared buffers a and b.  With frag_pingpong, step 0 is
 * loaded into set 0 first, and step kf loads step kf + 1 into set
 * (kf + 1) & 1 before its own mma.sync on set kf & 1, so the ldmatrix of
 * the next step overlaps the Tensor Core work of this one. */
static void emit_mma(gen *g, int depth, const char *a, const char *b) {
  const knobs *k = &g->k;
  if (frag_pingpong(k)) {
    emit(g, depth, "{ /* fragments of k-step 0 into set 0 */");
    emit_frag_loads(g, depth + 1, a, b, "0", "", "");
    emit(g, depth, "}");
    emit(g, depth, "#pragma unroll");
    emit(g, depth, "for (int kf = 0; kf < %lld; kf++) {",
         (long long)k->sp[2][2]);
    emit(g, depth + 1, "if (kf + 1 < %lld) { /* the next k-step's set */",
         (long long)k->sp[2][2]);
    emit(g, depth + 2, "const int na = ((kf + 1) & 1) * %lld;",
         (long long)k->sp[0][2]);
    emit(g, depth + 2, "const int nb = ((kf + 1) & 1) * %lld;",
         (long long)k->sp[1][2]);
    emit_frag_loads(g, depth + 2, a, b, "(kf + 1)", "na + ", "nb + ");
    emit(g, depth + 1, "}");
    emit(g, depth + 1, "const int ca = (kf & 1) * %lld, cb = (kf & 1) * %lld;",
         (long long)k->sp[0][2], (long long)k->sp[1][2]);
    emit_frag_mmas(g, depth + 1, "ca + ", "cb + ");
    emit(g, depth, "}");
    return;
  }
  /* The k.f loop holds only whole-fragment indices, so it may stay rolled
   * when long; the i and j loops inside are always unrolled. */
  emit(g, depth, "#pragma unroll %s", k->sp[2][2] <= UNROLL_CAP ? "" : "1");
  emit(g, depth, "for (int kf = 0; kf < %lld; kf++) {", (long long)k->sp[2][2]);
  emit_frag_loads(g, depth + 1, a, b, "kf", "", "");
  emit_frag_mmas(g, depth + 1, "", "");
  emit(g, depth, "}");
}

/* The floats of the split-K workspace: a partial block tile per split of
 * every output tile (grid x * grid y). */
static int64_t split_ws_elems(const gen *g) {
  const knobs *k = &g->k;
  return k->sp[0][0] * k->sp[1][0] * g->s->g[HERON__GB].extent * k->splitk *
         k->bm * k->bn;
}

/* Split-K's end of the block (split_k > 1), after the accumulators are in
 * C.shared: the block's partial tile goes to its slot of the workspace
 * (tile, blockIdx.z), then the block that arrives last at the tile sums
 * the splits' partials in split order back into C.shared, and only it
 * stores the tile (emit_store) with the epilogue. */
static void emit_split_reduce(gen *g) {
  const knobs *k = &g->k;
  int64_t inner = k->m_inner ? k->bm : k->bn, tile = k->bm * k->bn;
  emit(g, 1,
       "/* split-K: the partial tile -> workspace[tile][split]; the last "
       "block of the tile sums the %lld partials */",
       (long long)k->splitk);
  emit(g, 1, "const int tile = HERON_BY * HERON_GRID_X + HERON_BX;");
  emit(g, 1, "const long long wt = (long long)tile * %lld;",
       (long long)(k->splitk * tile));
  int d = heron__cuda_coop_loop(g, 1, tile, 4);
  emit(g, d, "const int o = e / %lld, q = e %% %lld;", (long long)inner,
       (long long)inner);
  emit(g, d,
       "HERON_WS_PUT4(wt + (long long)HERON_BZ * %lld + e, Cs + o * %lld "
       "+ q);",
       (long long)tile, (long long)k->ldc);
  heron__cuda_coop_loop_end(g, 1, tile, 4);
  emit(g, 1, "if (HERON_SPLIT_LAST(tile)) {");
  d = heron__cuda_coop_loop(g, 2, tile, 4);
  emit(g, d, "const int o = e / %lld, q = e %% %lld;", (long long)inner,
       (long long)inner);
  emit(g, d, "HERON_WS_SUM4(Cs + o * %lld + q, wt + e, %lld);",
       (long long)k->ldc, (long long)tile);
  heron__cuda_coop_loop_end(g, 2, tile, 4);
  emit(g, 2, "HERON_SYNC();");
  heron__cuda_emit_store(g, 2);
  emit(g, 1, "}");
}

void heron__cuda_emit_header(gen *g, const int64_t *cfg) {
  const heron__template *t = g->t;
  const heron__op *op = g->op;
  const knobs *k = &g->k;
  heron__cuda_launch l;
  heron__cuda_launch_of(t, cfg, &l);
  char line[160];
  heron__cuda_launch_format(&l, line, sizeof line);
  heron__buf_puts(g->out, line);
  if (l.ntmaps) {
    char maps[256];
    heron__cuda_tmaps_format(&l, maps, sizeof maps);
    heron__buf_puts(g->out, maps);
  }
  heron__buf_puts(g->out, heron__cuda_includes());
  char rows[96] = "";
  if (k->mma == 2)
    snprintf(rows, sizeof rows,
             ", mbarriers after them (base aligned to "
             "1024 bytes)");
  if (k->igemm) {
    heron__cuda_smem_plan p;
    heron__cuda_smem_plan_of(t, cfg, &p);
    snprintf(rows, sizeof rows, ", A.rows [%lld, %lld) (the row table)",
             (long long)p.buf[3].offset,
             (long long)(p.buf[3].offset + p.buf[3].bytes));
  }
  heron__buf_printf(
      g->out,
      "/* Heron-C Tensor Core kernel: %s, implicit GEMM "
      "M=%lld N=%lld K=%lld batch=%lld (padded %lld x %lld x "
      "%lld), %s %lldx%lldx%lld, block tile %lld x %lld, %lld "
      "warps.  Shared memory plan: A.shared [0, %lld), "
      "B.shared [%lld, %lld)%s%s, then C.shared [0, %lld) reusing "
      "them. */\n",
      op->name, (long long)g->s->g[HERON__GM].extent,
      (long long)g->s->g[HERON__GN].extent,
      (long long)g->s->g[HERON__GK].extent,
      (long long)g->s->g[HERON__GB].extent, (long long)g->s->padded[HERON__GM],
      (long long)g->s->padded[HERON__GN], (long long)g->s->padded[HERON__GK],
      k->mma == 2   ? "wgmma m64nNk16 (TMA, mbarriers) over the wmma-shaped"
      : k->mma == 1 ? "mma.sync m16n8k16 (ldmatrix) tiles"
                    : "wmma",
      (long long)k->wm, (long long)k->wn, (long long)k->wk, (long long)k->bm,
      (long long)k->bn, (long long)k->warps,
      (long long)(k->stages * k->bytes[0]),
      (long long)align128(k->stages * k->bytes[0]),
      (long long)(align128(k->stages * k->bytes[0]) + k->stages * k->bytes[1]),
      k->stages > 1 ? (k->stages == 2   ? " (2 pipeline stages each)"
                       : k->stages == 3 ? " (3 pipeline stages each)"
                                        : " (4 pipeline stages each)")
                    : "",
      rows, (long long)k->cbytes);
  if (k->splitk > 1)
    heron__buf_printf(
        g->out,
        "/* Split-K: %lld blocks (blockIdx.z) per output tile, %lld of the "
        "%lld chunks of k.o each; fp32 partials in the module's workspace "
        "of %lld floats, summed by the last block of each tile. */\n",
        (long long)k->splitk, (long long)k->kper, (long long)k->sp[2][0],
        (long long)split_ws_elems(g));
  emit(g, 0, "#define HERON_THREADS %lld", (long long)k->threads);
  emit(g, 0, "#define HERON_GRID_X %d", l.grid[0]);
  emit(g, 0, "#define HERON_GRID_Y %d", l.grid[1]);
  emit(g, 0, "#define HERON_GRID_Z %d", l.grid[2]);
  emit(g, 0, "#define HERON_BLOCK_X %d", l.block[0]);
  emit(g, 0, "#define HERON_BLOCK_Y %d", l.block[1]);
  emit(g, 0, "#define HERON_BLOCK_Z %d", l.block[2]);
  emit(g, 0, "#define HERON_SMEM_BYTES %lld", (long long)l.smem_bytes);
  emit(g, 0, "#define HERON_WM %lld", (long long)k->wm);
  emit(g, 0, "#define HERON_WN %lld", (long long)k->wn);
  emit(g, 0, "#define HERON_WK %lld", (long long)k->wk);
  emit(g, 0, "#define HERON_IN0_ELEMS %lldLL",
       (long long)heron__tensor_elems(&op->in[0]));
  emit(g, 0, "#define HERON_IN1_ELEMS %lldLL",
       (long long)heron__tensor_elems(&op->in[1]));
  emit(g, 0, "#define HERON_OUT_ELEMS %lldLL",
       (long long)heron__tensor_elems(&op->out));
  emit(g, 0, "#define HERON_BIAS_ELEMS %lldLL",
       (long long)((op->epilogue & HERON__EPI_BIAS)
                       ? heron__tensor_elems(&op->bias)
                       : 0));
  if (k->splitk > 1) {
    emit(g, 0, "#define HERON_SPLIT_K %lld", (long long)k->splitk);
    emit(g, 0, "#define HERON_SPLIT_TILES %lld",
         (long long)l.grid[0] * l.grid[1]);
    emit(g, 0, "#define HERON_SPLIT_WS_ELEMS %lldLL",
         (long long)split_ws_elems(g));
  }
  if (k->mma == 2)
    heron__cuda_wgmma_defines(g, &l);
  heron__buf_puts(g->out, heron__cuda_prelude());
  if (k->stages > 1 && k->mma != 2)
    heron__buf_puts(g->out, heron__cuda_prelude_async());
  if (k->mma == 1)
    heron__buf_puts(g->out, heron__cuda_prelude_mma());
  if (k->mma == 2)
    heron__cuda_prelude_wgmma(g->out, (int)k->bn);
  if (k->splitk > 1)
    heron__buf_puts(g->out, heron__cuda_prelude_split());
  heron__buf_puts(g->out, "\n");
}

/* The main loop of one stage: each chunk is loaded, then used, with a
 * barrier before the load (the previous chunk's readers are done) and one
 * after it (the chunk is complete). */
static void emit_main_loop(gen *g) {
  const knobs *k = &g->k;
  /* Split-K: this block's chunks start at K index ksplit. */
  const char *kb = k->splitk > 1 ? "ksplit + " : "";
  char k0[64];
  emit(g, 1, "for (int ko = 0; ko < %lld; ko++) {", (long long)k->kper);
  if (k->at[0] == 0 || k->at[1] == 0) {
    emit(g, 2, "HERON_SYNC();");
    snprintf(k0, sizeof k0, "%sko * CHUNK0", kb);
    for (int i = 0; i < 2; i++)
      if (k->at[i] == 0)
        emit_load(g, 2, i, k0, i == 0 ? "As" : "Bs", 0);
    emit(g, 2, "HERON_SYNC();");
  }
  unroll_pragma(g, 2, k->sp[2][1]);
  emit(g, 2, "for (int km = 0; km < %lld; km++) {", (long long)k->sp[2][1]);
  if (k->at[0] == 1 || k->at[1] == 1) {
    emit(g, 3, "HERON_SYNC();");
    snprintf(k0, sizeof k0, "%sko * CHUNK0 + km * CHUNK1", kb);
    for (int i = 0; i < 2; i++)
      if (k->at[i] == 1)
        emit_load(g, 3, i, k0, i == 0 ? "As" : "Bs", 0);
    emit(g, 3, "HERON_SYNC();");
  }
  emit_mma(g, 3, "As", "Bs");
  emit(g, 2, "}");
  emit(g, 1, "}");
}

/* Loads both operands' chunk number `c` (an expression) of the pipelined
 * loop into the stage buffers An and Bn that the caller declares, as
 * asynchronous copies (closing their group is the caller's). */
static void emit_issue(gen *g, int depth, const char *c) {
  const knobs *k = &g->k;
  char k0[96];
  snprintf(k0, sizeof k0, "%s(%s) * CHUNK%d", k->splitk > 1 ? "ksplit + " : "",
           c, (int)k->at[0]);
  for (int i = 0; i < 2; i++)
    emit_load(g, depth, i, k0, i == 0 ? "An" : "Bn", 1);
}

/* Declares the stage buffers `a` and `b` of chunk number `c`: the ring
 * slot c mod stages of each operand. */
static void emit_stage_ptrs(gen *g, int depth, const char *a, const char *b,
                            const char *c) {
  const knobs *k = &g->k;
  if (k->stages == 2) {
    emit(g, depth, "heron_half *const %s = As + ((%s) & 1) * %lld;", a, c,
         (long long)(k->bytes[0] / 2));
    emit(g, depth, "heron_half *const %s = Bs + ((%s) & 1) * %lld;", b, c,
         (long long)(k->bytes[1] / 2));
    return;
  }
  emit(g, depth, "heron_half *const %s = As + ((%s) %% %lld) * %lld;", a, c,
       (long long)k->stages, (long long)(k->bytes[0] / 2));
  emit(g, depth, "heron_half *const %s = Bs + ((%s) %% %lld) * %lld;", b, c,
       (long long)k->stages, (long long)(k->bytes[1] / 2));
}

/* The main loop with S = stages > 1 (the pipeline knob; both operands at
 * one position, so one loop carries the pipeline: k.o at shared_at 0, the
 * k.o x k.m chunks at 1), A.shared and B.shared each a ring of S chunk
 * buffers.  The prologue issues chunks 0 .. S - 2, one cp.async group
 * each.  At chunk c every thread waits until at most S - 2 of its groups
 * are pending (so the group of chunk c is complete: S - 1 + c groups were
 * committed before, c + 1 of them up to chunk c's), the barrier makes all
 * threads' copies of c visible and tells that every warp is done with
 * chunk c - 1, whose slot then takes the copies of chunk c + S - 1, issued
 * before the mma of chunk c so that they run beside it.  With S > 2 every
 * chunk position commits a group, empty past the last chunk, so that the
 * count S - 2 holds to the end; with S == 2 the wait drains everything
 * (wait_group 0) and only real chunks commit (the first version's text).
 * One barrier per chunk; nothing but empty groups is pending after the
 * last chunk, so C.shared may reuse the space. */
static void emit_pipelined(gen *g) {
  const knobs *k = &g->k;
  int at = (int)k->at[0];
  int64_t S = k->stages;
  int64_t nchunks = at == 0 ? k->kper : k->kper * k->sp[2][1];
  if (S == 2)
    emit(g, 1,
         "/* software pipeline: 2 stages of A.shared and B.shared, "
         "%lld chunks of K at the k.%s loop */",
         (long long)nchunks, at == 0 ? "o" : "m");
  else
    emit(g, 1,
         "/* software pipeline: %lld stages of A.shared and B.shared "
         "(cp.async groups, wait_group %lld), %lld chunks of K at the "
         "k.%s loop */",
         (long long)S, (long long)(S - 2), (long long)nchunks,
         at == 0 ? "o" : "m");
  if (S == 2) {
    emit(g, 1, "{");
    emit(g, 2, "heron_half *const An = As, *const Bn = Bs;");
    emit_issue(g, 2, "0");
    emit(g, 2, "HERON_CP_COMMIT();");
    emit(g, 1, "}");
  } else {
    /* The prologue: chunks 0 .. S - 2, each its own group (empty when
     * the loop has fewer chunks). */
    for (int64_t p = 0; p < S - 1; p++) {
      char cs[32];
      snprintf(cs, sizeof cs, "%lld", (long long)p);
      if (p < nchunks) {
        emit(g, 1, "{");
        emit_stage_ptrs(g, 2, "An", "Bn", cs);
        emit_issue(g, 2, cs);
        emit(g, 1, "}");
      }
      emit(g, 1, "HERON_CP_COMMIT();");
    }
  }
  emit(g, 1, "for (int ko = 0; ko < %lld; ko++) {", (long long)k->kper);
  int d = 2;
  const char *c = "ko";
  if (at == 1) {
    unroll_pragma(g, 2, k->sp[2][1]);
    emit(g, 2, "for (int km = 0; km < %lld; km++) {", (long long)k->sp[2][1]);
    emit(g, 3, "const int c = ko * %lld + km;", (long long)k->sp[2][1]);
    d = 3;
    c = "c";
  }
  emit_stage_ptrs(g, d, "Ac", "Bc", c);
  emit(g, d, "HERON_CP_WAIT(%lld);", (long long)(S - 2));
  emit(g, d, "HERON_SYNC();");
  if (nchunks > S - 1) {
    char next[32];
    snprintf(next, sizeof next, "%s + %lld", c, (long long)(S - 1));
    emit(g, d, "if (%s < %lld) {", next, (long long)nchunks);
    emit_stage_ptrs(g, d + 1, "An", "Bn", next);
    emit_issue(g, d + 1, next);
    if (S == 2)
      emit(g, d + 1, "HERON_CP_COMMIT();");
    emit(g, d, "}");
  }
  if (S > 2)
    emit(g, d, "HERON_CP_COMMIT();");
  if (at == 0) {
    unroll_pragma(g, 2, k->sp[2][1]);
    emit(g, 2, "for (int km = 0; km < %lld; km++) {", (long long)k->sp[2][1]);
  }
  emit_mma(g, 3, "Ac", "Bc");
  emit(g, 2, "}");
  emit(g, 1, "}");
}

/* The block's tile origin m0, n0 (with block_swz's order) and the batch
 * axes of blockIdx.y. */
void heron__cuda_emit_origin(gen *g) {
  const knobs *k = &g->k;
  if (k->bswz > 1) {
    /* Groups of bswz rows of M tiles (the last one may hold fewer). */
    long long G = k->bswz, nbm = k->sp[0][0], nbn = k->sp[1][0];
    emit(g, 1, "const int bq = HERON_BX / %lld, br = HERON_BX %% %lld;",
         G * nbn, G * nbn);
    emit(g, 1,
         "const int bg = %lld - bq * %lld < %lld ? %lld - bq * %lld : "
         "%lld;",
         nbm, G, G, nbm, G, G);
    emit(g, 1, "const %s m0 = (%s)(bq * %lld + br %% bg) * %lld;", g->it, g->it,
         G, (long long)k->bm);
    emit(g, 1, "const %s n0 = (%s)(br / bg) * %lld;", g->it, g->it,
         (long long)k->bn);
  } else {
    emit(g, 1, "const %s m0 = (%s)(HERON_BX / %lld) * %lld;", g->it, g->it,
         (long long)k->sp[1][0], (long long)k->bm);
    emit(g, 1, "const %s n0 = (%s)(HERON_BX %% %lld) * %lld;", g->it, g->it,
         (long long)k->sp[1][0], (long long)k->bn);
  }
  int need[HERON__MAX_AXES];
  for (int a = 0; a < g->op->naxes; a++)
    need[a] = 1;
  emit(g, 1, "const %s gb = HERON_BY;", g->it);
  heron__cuda_split_group(g, 1, HERON__GB, "gb", need);
  emit(g, 1, "(void)gb;");
}

int heron__cuda_codegen(const heron__template *t, const heron_space *sp,
                        const int64_t *cfg, heron__buf *out, heron_error *err) {
  (void)sp;
  gen g = {.t = t, .op = &t->op, .s = heron__cuda_sched_of(t), .out = out};
  heron__cuda_read_knobs(t, cfg, &g.k);
  g.it = g.s->small_idx ? "int" : "long long";
  {
    /* What __launch_bounds__ leaves a thread, less the fragments (8
     * registers per accumulator, wmma_m / 4 and wmma_n / 4 per a and b
     * fragment) and the index arithmetic. */
    int64_t cap = 65536 / g.k.threads;
    cap = cap > 255 ? 255 : cap;
    int64_t frags = 8 * g.k.sp[0][2] * g.k.sp[1][2] +
                    (frag_pingpong(&g.k) ? 2 : 1) *
                        (g.k.sp[0][2] * g.k.wm + g.k.sp[1][2] * g.k.wn) / 4;
    g.regs_free = cap - frags - 48;
  }
  const knobs *k = &g.k;
  const heron__cuda_sched *s = heron__cuda_sched_of(t);
  if (k->bytes[0] % 128 || k->bytes[1] % 128)
    return heron_error_set(err, HERON_EINVAL,
                           "cuda codegen: shared buffers of %lld and %lld "
                           "bytes break the 128-byte plan",
                           (long long)k->bytes[0], (long long)k->bytes[1]);
  heron__cuda_emit_header(&g, cfg);
  if (k->mma == 2) {
    heron__cuda_emit_wgmma(&g, cfg);
    return HERON_OK;
  }
  emit(&g, 0, "HERON_KERNEL(heron_cuda_kernel) {");
  emit(&g, 1, "HERON_SMEM_DECL;");
  emit(&g, 1, "heron_half *As = (heron_half *)(heron_smem);");
  emit(&g, 1, "heron_half *Bs = (heron_half *)(heron_smem + %lld);",
       (long long)align128(k->stages * k->bytes[0]));
  emit(&g, 1, "float *Cs = (float *)(heron_smem);");
  if (k->igemm) {
    heron__cuda_smem_plan plan;
    heron__cuda_smem_plan_of(t, cfg, &plan);
    emit(&g, 1, "%s *Ar = (%s *)(heron_smem + %lld);", g.it, g.it,
         (long long)plan.buf[3].offset);
  }
  emit(&g, 1, "const int tid = HERON_TY * 32 + HERON_TX;");
  emit(&g, 1, "const int wi = HERON_TY / %lld, wj = HERON_TY %% %lld;",
       (long long)k->sp[1][1], (long long)k->sp[1][1]);
  heron__cuda_emit_origin(&g);
  emit(&g, 1, "enum { CHUNK0 = %lld, CHUNK1 = %lld };", (long long)k->kc0,
       (long long)k->kc1);
  if (k->splitk > 1)
    emit(&g, 1, "const %s ksplit = (%s)HERON_BZ * %lld; /* this split's K */",
         g.it, g.it, (long long)(k->kper * k->kc0));
  if (k->mma) {
    /* mma.sync: per-lane registers, no layout in the fragment's type. */
    emit(&g, 1, "HERON_MFRAG_ACC(acc, %lld);",
         (long long)(k->sp[0][2] * k->sp[1][2]));
    /* Two sets of a and b fragments when the k-steps ping-pong. */
    int sets = frag_pingpong(k) ? 2 : 1;
    emit(&g, 1, "HERON_MFRAG_A(fa, %lld);", (long long)(sets * k->sp[0][2]));
    emit(&g, 1, "HERON_MFRAG_B(fb, %lld);", (long long)(sets * k->sp[1][2]));
  } else {
    emit(&g, 1, "HERON_FRAG_ACC(acc, %lld);",
         (long long)(k->sp[0][2] * k->sp[1][2]));
    emit(&g, 1, "HERON_FRAG_A(fa, %lld, %s);", (long long)k->sp[0][2],
         s->op[0].k_inner ? "row" : "col");
    emit(&g, 1, "HERON_FRAG_B(fb, %lld, %s);", (long long)k->sp[1][2],
         s->op[1].k_inner ? "col" : "row");
  }
  emit(&g, 1, "#pragma unroll");
  emit(&g, 1, "for (int x = 0; x < %lld; x++)",
       (long long)(k->sp[0][2] * k->sp[1][2]));
  emit(&g, 2, "%s(acc[x]);", k->mma ? "HERON_MFILL_ZERO" : "HERON_FILL_ZERO");
  if (k->igemm)
    heron__cuda_emit_rows_table(&g, 1);
  if (k->stages > 1)
    emit_pipelined(&g);
  else
    emit_main_loop(&g);
  emit(&g, 1,
       "HERON_SYNC(); /* A.shared and B.shared die; C.shared reuses "
       "their space */");
  emit(&g, 1, "#pragma unroll");
  emit(&g, 1, "for (int i = 0; i < %lld; i++)", (long long)k->sp[0][2]);
  emit(&g, 2, "#pragma unroll");
  emit(&g, 2, "for (int j = 0; j < %lld; j++)", (long long)k->sp[1][2]);
  if (k->m_inner)
    emit(&g, 3,
         "%s(Cs + (wj * %lld + j * %lld) * %lld + wi * %lld + i "
         "* %lld, acc[i * %lld + j], %lld, col);",
         k->mma ? "HERON_MSTORE_ACC" : "HERON_STORE_ACC",
         (long long)(k->sp[1][2] * k->wn), (long long)k->wn, (long long)k->ldc,
         (long long)(k->sp[0][2] * k->wm), (long long)k->wm,
         (long long)k->sp[1][2], (long long)k->ldc);
  else
    emit(&g, 3,
         "%s(Cs + (wi * %lld + i * %lld) * %lld + wj * %lld + j "
         "* %lld, acc[i * %lld + j], %lld, row);",
         k->mma ? "HERON_MSTORE_ACC" : "HERON_STORE_ACC",
         (long long)(k->sp[0][2] * k->wm), (long long)k->wm, (long long)k->ldc,
         (long long)(k->sp[1][2] * k->wn), (long long)k->wn,
         (long long)k->sp[1][2], (long long)k->ldc);
  emit(&g, 1, "HERON_SYNC();");
  if (k->splitk > 1)
    emit_split_reduce(&g);
  else
    heron__cuda_emit_store(&g, 1);
  emit(&g, 0, "}");
  emit(&g, 0, "HERON_EMU_ENTRY(heron_cuda_kernel)");
  return HERON_OK;
}
