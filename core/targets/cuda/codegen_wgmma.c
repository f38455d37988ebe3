/* core/targets/cuda/codegen_wgmma.c - the sm_90a kernel of the Tensor Core
 * template (mma 2, issue 32 step 7; rules in rules_mma.c), in the
 * prelude's wgmma dialect (core/targets/cuda/prelude_wgmma.c, kernel.h).
 *
 * The block is i.w / 4 warpgroups stacked along M, each computing a
 * 64 x block.n tile with wgmma.m64nNk16 (N = block.n) into N / 2 fp32
 * registers per thread.  K runs in chunks of chunk.k (the chunk of the
 * shared_at position), each a stage of a ring of `pipeline` stages in
 * shared memory:
 *
 *   A stage: chunk.k / W_A boxes of W_A x block.m (K-major rows of
 *            S_A bytes, W_A = S_A / 2 halves), S_A the swizzle span of
 *            chunk.k (heron__cuda_wg_span)
 *   B stage: MN-major B ([K, N]): block.n / W_B boxes of W_B x chunk.k
 *            (rows of S_B bytes along N, one row per k), S_B the span of
 *            block.n; K-major B ([N, K]): as A, block.n rows
 *
 * each box one TMA tile copy (zero fill outside the tensor: the edges of
 * M, N and K), and one mbarrier per stage that the copies complete.
 * Thread 0 initialises the barriers, issues the first `pipeline` chunks,
 * and after each chunk's barrier refills the slot just consumed with the
 * chunk `pipeline` ahead; every thread waits on the slot's barrier (phase
 * parity: the slot's use count, mod 2) before its warpgroup's wgmma of
 * that chunk (chunk.k / 16 of them, one commit, wait_group 0).  Then the
 * accumulators go to C.shared and out through the template's guarded,
 * vectorised store with the epilogue.
 */
#include <stdio.h>

#include "core/targets/cuda/codegen.h"

/* The stage geometry of a config. */
typedef struct wgeo {
  int64_t bk;               /* K of a stage (chunk.k) */
  int64_t nchunks;          /* stages' chunks along K */
  int sa, sb;               /* swizzle spans (bytes) */
  int64_t wa, wb;           /* box rows' halves: S / 2 */
  int b_mn;                 /* B is MN-major (wgmma's imm-trans-b) */
  int64_t a_stage, b_stage; /* halves of a stage */
} wgeo;

static wgeo geo_of(const heron__cuda_sched *s, const knobs *k) {
  wgeo w;
  w.bk = k->kc[0];
  w.nchunks = k->at[0] == 0 ? k->sp[2][0] : k->sp[2][0] * k->sp[2][1];
  w.b_mn = !s->op[1].k_inner;
  w.sa = heron__cuda_wg_span(w.bk);
  w.sb = heron__cuda_wg_span(w.b_mn ? k->bn : w.bk);
  w.wa = w.sa / 2;
  w.wb = w.sb / 2;
  w.a_stage = k->bm * w.bk;
  w.b_stage = k->bn * w.bk;
  return w;
}

void heron__cuda_wgmma_plan(const knobs *k, heron__cuda_smem_plan *p) {
  int64_t end = 0;
  for (int i = 0; i < p->nbufs; i++) {
    int64_t e = p->buf[i].offset + p->buf[i].bytes;
    end = e > end ? e : end;
  }
  p->buf[p->nbufs++] =
      (heron__cuda_smem_buf){"mbarriers", 0, (end + 7) / 8 * 8, 8 * k->stages};
}

void heron__cuda_wgmma_tmaps(const heron__template *t, const knobs *k,
                             heron__cuda_launch *l) {
  const heron__cuda_sched *s = heron__cuda_sched_of(t);
  wgeo w = geo_of(s, k);
  int64_t M = s->g[HERON__GM].extent, N = s->g[HERON__GN].extent,
          K = s->g[HERON__GK].extent;
  l->ntmaps = 2;
  l->tmap[0] =
      (heron__cuda_tmap_spec){0, (int)w.wa, (int)k->bm, w.sa, K, M, 2 * K};
  if (w.b_mn)
    l->tmap[1] =
        (heron__cuda_tmap_spec){1, (int)w.wb, (int)w.bk, w.sb, N, K, 2 * N};
  else
    l->tmap[1] =
        (heron__cuda_tmap_spec){1, (int)w.wb, (int)k->bn, w.sb, K, N, 2 * K};
}

void heron__cuda_wgmma_defines(gen *g, const heron__cuda_launch *l) {
  wgeo w = geo_of(g->s, &g->k);
  emit(g, 0, "#define HERON_WG_N %lld", (long long)g->k.bn);
  emit(g, 0, "#define HERON_WG_TRANS_B %d", w.b_mn);
  for (int m = 0; m < 2; m++) {
    const heron__cuda_tmap_spec *t = &l->tmap[m];
    emit(g, 0, "#define HERON_TMAP_%c %d, %lld, %lld, %lld, %d, %d, %d",
         m ? 'B' : 'A', t->input, (long long)t->inner, (long long)t->outer,
         (long long)t->row_bytes, t->box_inner, t->box_outer, t->swz);
  }
}

/* Thread 0's copies of chunk `c` (an expression) into ring slot `slot`:
 * the barrier's transaction count, then every box of A and B. */
static void emit_issue(gen *g, int d, const wgeo *w, const char *c,
                       const char *slot) {
  const knobs *k = &g->k;
  emit(g, d, "HERON_MBAR_EXPECT_TX(bar + %s, %lld);", slot,
       (long long)(2 * (w->a_stage + w->b_stage)));
  emit(g, d, "const int k0 = (%s) * %lld;", c, (long long)w->bk);
  emit(g, d, "#pragma unroll");
  emit(g, d, "for (int j = 0; j < %lld; j++)", (long long)(w->bk / w->wa));
  emit(g, d + 1,
       "HERON_TMA_LOAD_2D(As + %s * %lld + j * %lld, tmap_a, k0 + j * %lld, "
       "(int)m0, bar + %s);",
       slot, (long long)w->a_stage, (long long)(k->bm * w->wa),
       (long long)w->wa, slot);
  emit(g, d, "#pragma unroll");
  if (w->b_mn) {
    emit(g, d, "for (int j = 0; j < %lld; j++)", (long long)(k->bn / w->wb));
    emit(g, d + 1,
         "HERON_TMA_LOAD_2D(Bs + %s * %lld + j * %lld, tmap_b, (int)n0 + j "
         "* %lld, k0, bar + %s);",
         slot, (long long)w->b_stage, (long long)(w->bk * w->wb),
         (long long)w->wb, slot);
  } else {
    emit(g, d, "for (int j = 0; j < %lld; j++)", (long long)(w->bk / w->wb));
    emit(g, d + 1,
         "HERON_TMA_LOAD_2D(Bs + %s * %lld + j * %lld, tmap_b, k0 + j * %lld, "
         "(int)n0, bar + %s);",
         slot, (long long)w->b_stage, (long long)(k->bn * w->wb),
         (long long)w->wb, slot);
  }
}

void heron__cuda_emit_wgmma(gen *g, const int64_t *cfg) {
  const knobs *k = &g->k;
  wgeo w = geo_of(g->s, k);
  int64_t S = k->stages, n = w.nchunks;
  heron__cuda_smem_plan p;
  heron__cuda_smem_plan_of(g->t, cfg, &p);
  emit(g, 0, "HERON_KERNEL_TMA(heron_cuda_kernel) {");
  emit(g, 1, "HERON_SMEM_DECL;");
  emit(g, 1,
       "/* the plan from the first 1024-byte boundary (the 128-byte "
       "swizzle's repeat) */");
  emit(g, 1,
       "unsigned char *const base = heron_smem + (1024u - "
       "HERON_SMEM_ADDR(heron_smem) %% 1024u) %% 1024u;");
  emit(g, 1, "heron_half *const As = (heron_half *)base;");
  emit(g, 1, "heron_half *const Bs = (heron_half *)(base + %lld);",
       (long long)(2 * S * w.a_stage));
  emit(g, 1, "float *const Cs = (float *)base;");
  emit(g, 1,
       "unsigned long long *const bar = (unsigned long long *)(base + "
       "%lld);",
       (long long)p.buf[3].offset);
  emit(g, 1, "const int tid = HERON_TY * 32 + HERON_TX;");
  emit(g, 1, "const int wg = HERON_TY / 4; /* warpgroup: rows 64 wg .. */");
  heron__cuda_emit_origin(g);
  emit(g, 1, "HERON_WG_ACC(acc);");
  emit(g, 1, "HERON_WG_FILL_ZERO(acc);");
  emit(g, 1, "if (tid == 0) {");
  emit(g, 2, "for (int s = 0; s < %lld; s++)", (long long)S);
  emit(g, 3, "HERON_MBAR_INIT(bar + s, 1);");
  emit(g, 2, "HERON_MBAR_FENCE_INIT();");
  emit(g, 1, "}");
  emit(g, 1, "HERON_SYNC();");
  emit(g, 1,
       "/* %lld stages of A (%lld x %lld, %d-byte swizzle) and B (%s, "
       "%d-byte swizzle), %lld chunks of K */",
       (long long)S, (long long)k->bm, (long long)w.bk, w.sa,
       w.b_mn ? "MN-major" : "K-major", w.sb, (long long)n);
  emit(g, 1, "if (tid == 0) {");
  emit(g, 2, "for (int c = 0; c < %lld; c++) {", (long long)(S < n ? S : n));
  emit_issue(g, 3, &w, "c", "c");
  emit(g, 2, "}");
  emit(g, 1, "}");
  emit(g, 1, "for (int c = 0; c < %lld; c++) {", (long long)n);
  emit(g, 2, "const int slot = c %% %lld;", (long long)S);
  emit(g, 2, "HERON_MBAR_WAIT(bar + slot, (c / %lld) & 1);", (long long)S);
  emit(g, 2, "const heron_half *const Ac = As + slot * %lld + wg * %lld;",
       (long long)w.a_stage, (long long)(64 * w.wa));
  emit(g, 2, "const heron_half *const Bc = Bs + slot * %lld;",
       (long long)w.b_stage);
  emit(g, 2, "HERON_WG_FENCE(acc);");
  emit(g, 2, "#pragma unroll");
  emit(g, 2, "for (int kk = 0; kk < %lld; kk++) {", (long long)(w.bk / 16));
  /* A: the k16 slice's box and its offset in the box's rows. */
  emit(g, 3,
       "const unsigned long long da = HERON_WG_DESC(Ac + kk * 16 / %lld * "
       "%lld + kk * 16 %% %lld, 16, %d, %d);",
       (long long)w.wa, (long long)(k->bm * w.wa), (long long)w.wa, 8 * w.sa,
       w.sa);
  if (w.b_mn)
    /* B MN-major: the slice's 16 rows (k) of every box; boxes along N
     * the leading offset apart, 8-row groups the stride offset. */
    emit(g, 3,
         "const unsigned long long db = HERON_WG_DESC(Bc + kk * %lld, %lld, "
         "%d, %d);",
         (long long)(16 * w.wb), (long long)(2 * w.bk * w.wb), 8 * w.sb, w.sb);
  else
    emit(g, 3,
         "const unsigned long long db = HERON_WG_DESC(Bc + kk * 16 / %lld * "
         "%lld + kk * 16 %% %lld, 16, %d, %d);",
         (long long)w.wb, (long long)(k->bn * w.wb), (long long)w.wb, 8 * w.sb,
         w.sb);
  emit(g, 3, "HERON_WG_MMA(acc, da, db);");
  emit(g, 2, "}");
  emit(g, 2, "HERON_WG_COMMIT(acc);");
  emit(g, 2, "HERON_WG_WAIT(acc, 0);");
  emit(g, 2, "HERON_SYNC(); /* every warpgroup is done with the slot */");
  if (n > S) {
    emit(g, 2, "if (tid == 0 && c + %lld < %lld) {", (long long)S,
         (long long)n);
    char next[32];
    snprintf(next, sizeof next, "c + %lld", (long long)S);
    emit_issue(g, 3, &w, next, "slot");
    emit(g, 2, "}");
  }
  emit(g, 1, "}");
  emit(g, 1, "/* C.shared reuses the stages (every copy was waited for) */");
  emit(g, 1, "HERON_WG_STORE_ACC(Cs + wg * %lld, acc, %lld);",
       (long long)(64 * k->ldc), (long long)k->ldc);
  emit(g, 1, "HERON_SYNC();");
  heron__cuda_emit_store(g, 1);
  emit(g, 0, "}");
  emit(g, 0, "HERON_EMU_ENTRY_TMA(heron_cuda_kernel)");
}
