/* core/targets/cuda/rules_mma.c - the rules of the Tensor Core
 * instruction (the knob mma, called by heron__cuda_rules_apply in
 * rules.c): 0 wmma, 1 mma.sync with ldmatrix, and 2, the sm_90a path of
 * issue 32 step 7: wgmma fed by TMA (core/targets/cuda/template.h
 * describes the kernels, core/targets/cuda/codegen_wgmma.c writes the
 * last).
 *
 * The sm_90a path reads both operands with 2-D TMA tile copies, so it
 * exists only for ops whose operands are dense row-major matrices of the
 * GEMM view: A = [M, K] (K-major, as wgmma's A from shared memory needs),
 * B = [K, N] (MN-major, wgmma's imm-trans-b) or [N, K] (K-major), one axis
 * per group, no batch (a 2-D map would run a box across two batch elements
 * without zero fill), rows of a multiple of 16 bytes (TMA's global
 * strides), and an N-inner C.shared (the accumulator's store).  That is
 * GEMM; BMM, GEMV, the convolutions and the scan keep mma 0 / 1.
 */
#include "core/sched/rules.h"
#include "core/space/builder.h"
#include "core/targets/cuda/template.h"

/* Whether ts is the dense row-major matrix [outer axis, inner axis]. */
static int dense2(const heron__op *op, const heron__tensor *ts, int outer,
                  int inner) {
  if (ts->ndim != 2 || ts->bounded || heron__gemm_divided(ts))
    return 0;
  const int ax[2] = {outer, inner};
  for (int d = 0; d < 2; d++) {
    const heron__affine *ix = &ts->index[d];
    if (ix->offset || ts->dims[d] != op->axes[ax[d]].extent)
      return 0;
    for (int a = 0; a < op->naxes; a++)
      if (ix->coef[a] != (a == ax[d]))
        return 0;
  }
  return 1;
}

int heron__cuda_wgmma_fits(const heron__op *op, const heron__cuda_sched *s) {
  const heron__gemm_group *g = s->g;
  if (g[HERON__GB].naxes || g[HERON__GM].naxes != 1 ||
      g[HERON__GN].naxes != 1 || g[HERON__GK].naxes != 1 || !s->op[0].k_inner ||
      s->out_group != HERON__GN)
    return 0;
  int m = g[HERON__GM].axes[0], n = g[HERON__GN].axes[0],
      k = g[HERON__GK].axes[0];
  int b_ok = s->op[1].k_inner ? dense2(op, &op->in[1], n, k)
                              : dense2(op, &op->in[1], k, n);
  return dense2(op, &op->in[0], m, k) && b_ok && op->axes[k].extent % 8 == 0 &&
         (s->op[1].k_inner || op->axes[n].extent % 8 == 0);
}

/* The Tensor Core instruction (the knob `mma`): 0 is the wmma API (the
 * only one before sm_80, and the kernel of every log line written before
 * the knob existed: its absent value), 1 is mma.sync.aligned.m16n8k16 on
 * per-lane register fragments that ldmatrix loads (.trans for an M- or
 * N-inner shared tile) from the same shared tiles.  The wmma tile is then
 * (wmma_m / 16) x (wmma_n / 8) m16n8k16 pieces, so mma needs wmma_m in
 * {16, 32}: mma.wm = select(mma, 16, wmma_m) must lie in {16, 32}.  The
 * shared layouts, pads, pipeline and epilogue are those of wmma.  2 (sm_90
 * descriptions, ops that heron__cuda_wgmma_fits) is wgmma on TMA-filled
 * stages; heron__cuda_rules_wgmma binds the other knobs for it. */
void heron__cuda_rule_mma(heron__template *t, heron__rules *r,
                          heron__cuda_sched *s) {
  int sm = t->hw.sm;
  int ok = sm >= 80;
  s->wg = sm == 90 && heron__cuda_wgmma_fits(&t->op, s);
  s->mma = heron__r_set(r, "mma", 1, (const int64_t[]){0, 1, 2},
                        s->wg ? 3
                        : ok  ? 2
                              : 1);
  if (s->mma >= 0 && heron__space_var_absent(r->sp, s->mma, 0) != HERON_OK &&
      !r->rc)
    r->rc = heron_error_set(r->err, HERON_EINVAL,
                            "cuda template: cannot declare mma's absent "
                            "value");
  static const int64_t m16[] = {16, 32};
  int mw = heron__r_set(r, "mma.wm", 0, m16, 2);
  heron__r_post(
      r, HERON_C_SELECT, mw,
      (int[]){s->mma, heron__r_const(r, 16), s->wm, heron__r_const(r, 16)},
      s->wg ? 4 : 3, NULL, 0,
      "mma == 1 => wmma_m in {16, 32} (m16n8k16 pieces)");
  if (s->wg)
    heron__rule_note_add(
        t->rules, &t->nrules, "Tensorize-mma",
        "mma in {0, 1, 2}: 0 wmma, 1 mma.sync m16n8k16 + ldmatrix, 2 (sm_90) "
        "wgmma m64nNk16 from TMA-filled stages (mbarriers), 1-2 warpgroups, "
        "N = block.n <= 256, swizzle span from chunk.k / block.n, no pads; "
        "old logs read as 0");
  else if (ok)
    heron__rule_note_add(
        t->rules, &t->nrules, "Tensorize-mma",
        "mma in {0, 1}: 0 wmma, 1 mma.sync.aligned.m16n8k16 on register "
        "fragments from ldmatrix .x4/.x2 (.trans for M/N-inner tiles), "
        "(wmma_m/16) x (wmma_n/8) pieces per tile, so wmma_m >= 16; with "
        "1 < k.f <= 16 the next k-step's fragments load during this one's "
        "mma.sync (two sets); old logs read as 0");
  else
    heron__rule_note_add(
        t->rules, &t->nrules, "Tensorize-mma",
        "mma = 0 (wmma): mma.sync m16n8k16 needs sm_80, this is sm_%d", sm);
}

/* wg => x == v: the aux `name` = select(wg, x, v) == x. */
static void when_eq(heron__rules *r, int wg, int x, int64_t v, const char *name,
                    const char *what) {
  int64_t ub = heron__r_ub(r, x);
  int aux = heron__r_range(r, name, 0, 0, ub > v ? ub : v);
  heron__r_post(r, HERON_C_SELECT, aux, (int[]){wg, x, heron__r_const(r, v)}, 3,
                NULL, 0, name);
  heron__r_eq(r, aux, x, what);
}

/* wg => x <= v: the aux `name` = select(wg, 0, x) <= v. */
static void when_le(heron__rules *r, int wg, int x, int64_t v, const char *name,
                    const char *what) {
  int64_t ub = heron__r_ub(r, x);
  int aux = heron__r_range(r, name, 0, 0, ub > 0 ? ub : 1);
  heron__r_post(r, HERON_C_SELECT, aux, (int[]){wg, heron__r_const(r, 0), x}, 3,
                NULL, 0, name);
  heron__r_le(r, aux, v, what);
}

void heron__cuda_rules_wgmma(heron__rules *r, heron__cuda_sched *s) {
  /* wg = (mma == 2). */
  int wg = heron__r_range(r, "wg", 0, 0, 1);
  heron__r_post(r, HERON_C_SELECT, wg,
                (int[]){s->mma, heron__r_const(r, 0), heron__r_const(r, 0),
                        heron__r_const(r, 1)},
                4, NULL, 0, "wg == (mma == 2)");
  /* One warpgroup (i.w = 4) or two (8) along M, each warp 16 rows of the
   * m64 tile: i.f * wmma_m == 16, j.w == 1; the warpgroup's N is the
   * block's, j.f * wmma_n <= 256. */
  int rows =
      heron__r_prod(r, "wg.warp_rows", (int[]){s->split[0][2], s->wm}, 2);
  when_eq(r, wg, rows, 16, "wg.rows16", "mma == 2 => i.f * wmma_m == 16");
  when_eq(r, wg, s->split[1][1], 1, "wg.j.w", "mma == 2 => j.w == 1");
  int iw = heron__r_set(r, "wg.i.w", 0, (const int64_t[]){4, 8}, 2);
  heron__r_post(r, HERON_C_SELECT, iw,
                (int[]){wg, heron__r_const(r, 4), s->split[0][1]}, 3, NULL, 0,
                "mma == 2 => i.w in {4, 8}");
  when_le(r, wg, s->bn, 256, "wg.bn", "mma == 2 => block.n <= 256");
  /* An MN-major B is brought in boxes of S / 2 columns (S >= 32 bytes):
   * block.n a multiple of 16. */
  if (!s->op[1].k_inner) {
    int64_t ub = heron__r_ub(r, s->bn);
    int q = heron__r_range(r, "wg.bn16", 0, 1, ub / 16 > 1 ? ub / 16 : 1);
    int b16 =
        heron__r_prod(r, "wg.bn16x16", (int[]){heron__r_const(r, 16), q}, 2);
    int sel = heron__r_range(r, "wg.bn_sel", 0, 0, ub > 16 ? ub : 16);
    heron__r_post(r, HERON_C_SELECT, sel,
                  (int[]){wg, heron__r_const(r, 16), s->bn}, 3, NULL, 0,
                  "wg.bn_sel");
    heron__r_eq(r, sel, b16, "mma == 2 => block.n % 16 == 0 (MN-major B)");
  }
  /* One chunk of K per stage, both operands at one position; a box is at
   * most 256 rows (the MN-major B's box is chunk.k rows). */
  int at = heron__r_range(r, "wg.at", 0, 0, 1);
  heron__r_post(r, HERON_C_SELECT, at, (int[]){wg, s->op[0].at, s->op[1].at}, 3,
                NULL, 0, "wg.at");
  heron__r_eq(r, at, s->op[0].at, "mma == 2 => A.shared_at == B.shared_at");
  when_le(r, wg, s->op[0].kc, 256, "wg.kc", "mma == 2 => chunk.k <= 256");
  /* TMA packs the rows: no pads; the copies are TMA's, so the
   * cooperative vector widths are pinned to 1; no split-K. */
  for (int i = 0; i < 2; i++) {
    when_eq(r, wg, s->op[i].pad, 0, i ? "wg.B.pad" : "wg.A.pad",
            i ? "mma == 2 => B.shared_pad == 0"
              : "mma == 2 => A.shared_pad == 0");
    when_eq(r, wg, s->op[i].vec, 1, i ? "wg.B.vec" : "wg.A.vec",
            i ? "mma == 2 => B.shared_vec == 1"
              : "mma == 2 => A.shared_vec == 1");
  }
  if (s->split_k >= 0)
    when_eq(r, wg, s->split_k, 1, "wg.split_k", "mma == 2 => split_k == 1");
  /* Shared memory: the plan aligns its base to 1024 bytes (the 128-byte
   * swizzle's repeat) and keeps 8 bytes of mbarrier per stage after the
   * larger phase. */
  int slack = heron__r_set(r, "wg.smem_slack", 0,
                           (const int64_t[]){0, HERON__CUDA_WG_SLACK}, 2);
  heron__r_post(r, HERON_C_SELECT, slack,
                (int[]){wg, heron__r_const(r, 0),
                        heron__r_const(r, HERON__CUDA_WG_SLACK)},
                3, NULL, 0, "wg.smem_slack");
  int main = heron__r_sum(r, "wg.main_bytes", (int[]){s->ab_bytes, slack}, 2);
  heron__r_le(r, main, s->smem_limit,
              "mma == 2 => pipeline * (A + B) + 1024 + mbarriers <= shared "
              "memory");
  int cb = heron__r_sum(r, "wg.c_bytes", (int[]){s->c_bytes, slack}, 2);
  heron__r_le(r, cb, s->smem_limit,
              "mma == 2 => C.shared + 1024 + mbarriers <= shared memory");
}
