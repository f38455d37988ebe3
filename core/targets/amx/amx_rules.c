/* core/targets/amx/amx_rules.c - the AMX schedule template by rules, and the
 * constraints each rule generates (amx_template.h has the template's
 * shape).
 *
 * As for the other targets, the rules read only the op description: the
 * GEMM view is derived from which inputs read which axes, so every op of
 * the suite (gemm, bmm, gemv, scan, the convolutions with their padding,
 * stride and dilation, the transposed convolution) gets its template from
 * this one file.
 *
 * The constraints that matter most are the tile configuration's (Tensorize
 * on AMX): the palette-1 limits (8 tile registers shared by A, B and the
 * accumulators; at most 16 rows and 64 bytes a row) and the shape rules of
 * the dot products (C rows = A rows, C bytes a row = B bytes a row, A bytes
 * a row = 4 x B rows).  They are posted over aux variables named after the
 * tile fields (A.rows, A.colsb, ...), so that every config the space admits
 * is a configuration LDTILECFG accepts and every TDPBUSD / TDPBF16PS of the
 * kernel is well formed; tests/targets/amx checks that on sampled configs with
 * its own reading of the ISA.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/space/builder.h"
#include "core/targets/amx/amx_template.h"

typedef struct ctx {
  heron__template *t;
  heron__amx_sched *s;
  heron__rules r;
  /* Set by rule_full_tiles: the extents the full tiles (and, for M and N,
   * the register block) divide, whose splits must then be exact. */
  int exact[3]; /* M, N, K */
} ctx;

#define NOTE(c, name, ...)                                                     \
  heron__rule_note_add((c)->t->rules, &(c)->t->nrules, name, __VA_ARGS__)

/* z = k * x as a named aux variable. */
static int scaled(ctx *c, const char *name, int64_t k, int x) {
  return heron__r_prod(&c->r, name, (int[]){heron__r_const(&c->r, k), x}, 2);
}

/* ---- the GEMM view ------------------------------------------------------- */

/* Which dot product the op's dtype maps to, or -1.  An int8 op reads u8
 * activations (input 0) and s8 weights (input 1) into s32 sums, TDPBUSD's
 * operands; bf16 sums into fp32, TDPBF16PS's. */
static int kind_of(const heron__op *op) {
  if (op->dtype == HERON__INT8)
    return HERON__AMX_INT8;
  if (op->dtype == HERON__BF16)
    return HERON__AMX_BF16;
  return -1;
}

/* Sorts the axes into the four groups, A being the activation input. */
static int build_view(ctx *c) {
  heron__amx_sched *s = c->s;
  const heron__op *op = &c->t->op;
  heron__gemm_view_group(op, s->ia, s->ib, s->g);
  if (s->g[HERON__GK].naxes == 0)
    return heron_error_set(c->r.err, HERON_EUNSUPPORTED,
                           "amx template: op %s has no reduction to put on "
                           "the tiles",
                           op->name);
  s->k_padded = heron__round_up(s->g[HERON__GK].extent, s->vnni);
  return HERON_OK;
}

/* ---- rules --------------------------------------------------------------- */

static void rule_always_inline(ctx *c) {
  int epi = c->t->op.epilogue;
  if (epi)
    NOTE(c, "Always-Inline",
         "the epilogue (%s) is inlined into the copy from the accumulator "
         "buffer to the output",
         heron__epilogue_name(epi));
  else
    NOTE(c, "Always-Inline",
         "index maps (stride, dilation, transposition, the triangular mask) "
         "are inlined into the packing loops");
}

/* Tensorize on AMX: the tile shape knobs and the tile configuration's
 * constraints.
 *
 *   tile.m  in 1..16       rows of the A and C tiles
 *   tile.n  in 1..16       32-bit lanes of the C and B tiles
 *   tile.k  multiples of V K elements per dot product (V = 4 int8, 2 bf16)
 *   acc.m, acc.n in 1..4   accumulator tiles of a micro-kernel
 *
 * and, as aux variables, the fields of the configuration: A.rows = tile.m,
 * A.colsb = esize * tile.k, B.rows = tile.k / V, B.colsb = 4 * tile.n,
 * C.rows = tile.m, C.colsb = 4 * tile.n, with every rows <= 16, every
 * colsb <= 64, the dot product's shape rules (C.rows == A.rows, C.colsb ==
 * B.colsb, A.colsb == 4 * B.rows) and tiles = acc.m * acc.n + acc.m +
 * acc.n <= 8. */
static void rule_tensorize(ctx *c) {
  heron__amx_sched *s = c->s;
  int64_t rows[HERON__AMX_MAX_ROWS], ks[8];
  for (int i = 0; i < HERON__AMX_MAX_ROWS; i++)
    rows[i] = i + 1;
  int nk = 0;
  /* K steps from V to 64 elements: the domain holds steps too long for a
   * bf16 A row (32 elements are 64 bytes), which A.colsb <= 64 rules out. */
  for (int64_t k = s->vnni; k <= 64; k *= 2)
    ks[nk++] = k;
  s->tm = heron__r_set(&c->r, "tile.m", 1, rows, HERON__AMX_MAX_ROWS);
  s->tn = heron__r_set(&c->r, "tile.n", 1, rows, HERON__AMX_MAX_ROWS);
  s->tk = heron__r_set(&c->r, "tile.k", 1, ks, nk);
  s->am = heron__r_range(&c->r, "acc.m", 1, 1, 4);
  s->an = heron__r_range(&c->r, "acc.n", 1, 1, 4);

  s->a_rows = heron__r_range(&c->r, "A.rows", 0, 1, 64);
  heron__r_eq(&c->r, s->a_rows, s->tm, "A.rows == tile.m");
  s->a_colsb = scaled(c, "A.colsb", s->esize, s->tk);
  s->b_rows = heron__r_range(&c->r, "B.rows", 0, 1, 64);
  heron__r_post(&c->r, HERON_C_PROD, s->tk,
                (int[]){heron__r_const(&c->r, s->vnni), s->b_rows}, 2, NULL, 0,
                "tile.k == V * B.rows");
  s->b_colsb = scaled(c, "B.colsb", 4, s->tn);
  s->c_rows = heron__r_range(&c->r, "C.rows", 0, 1, 64);
  heron__r_eq(&c->r, s->c_rows, s->tm, "C.rows == tile.m");
  s->c_colsb = scaled(c, "C.colsb", 4, s->tn);
  /* Palette 1's limits. */
  heron__r_le(&c->r, s->a_rows, HERON__AMX_MAX_ROWS, "A.rows <= 16");
  heron__r_le(&c->r, s->b_rows, HERON__AMX_MAX_ROWS, "B.rows <= 16");
  heron__r_le(&c->r, s->c_rows, HERON__AMX_MAX_ROWS, "C.rows <= 16");
  heron__r_le(&c->r, s->a_colsb, HERON__AMX_MAX_COLSB, "A.colsb <= 64");
  heron__r_le(&c->r, s->b_colsb, HERON__AMX_MAX_COLSB, "B.colsb <= 64");
  heron__r_le(&c->r, s->c_colsb, HERON__AMX_MAX_COLSB, "C.colsb <= 64");
  /* The dot product's shape rules. */
  heron__r_eq(&c->r, s->c_rows, s->a_rows, "C.rows == A.rows");
  heron__r_eq(&c->r, s->c_colsb, s->b_colsb, "C.colsb == B.colsb");
  int b4 = scaled(c, "B.rows4", 4, s->b_rows);
  heron__r_eq(&c->r, s->a_colsb, b4, "A.colsb == 4 * B.rows");
  /* The register file. */
  int nc = heron__r_prod(&c->r, "tiles.c", (int[]){s->am, s->an}, 2);
  s->ntiles = heron__r_sum(&c->r, "tiles", (int[]){nc, s->am, s->an}, 3);
  heron__r_le(&c->r, s->ntiles, HERON__AMX_TILES, "tiles <= 8");
  NOTE(c, "Tensorize",
       "%s on tiles: C tile.m x tile.n lanes, A tile.m x tile.k, B VNNI "
       "(tile.k / %d rows); rows <= 16, colsb <= 64, C.rows == A.rows, "
       "C.colsb == B.colsb, A.colsb == 4 * B.rows, <= 8 tiles",
       s->kind == HERON__AMX_INT8 ? "TDPBUSD (u8 x s8 -> s32)"
                                  : "TDPBF16PS (bf16 -> fp32)",
       s->vnni);
}

/* Full tiles: where an extent is a multiple of the largest tile along it
 * (16 rows of M, 16 lanes of N, a 64-byte A row of K: 64 int8 or 32 bf16
 * elements), the tile takes that size.  A tile dot product costs about
 * the same issued at any shape, and every tile load moves at most a tile,
 * so a smaller tile there only does less work per instruction and per
 * load (measured on real AMX, bf16 GEMM 1024^3: the 16x16x32 tile with 2x2
 * accumulators ran at 850 GFLOP/s against 550 for the best 14-row tile
 * the search had found); it also keeps the search from spending its trials
 * on such tiles.  Odd extents keep every tile size (their padding). */
static void rule_full_tiles(ctx *c) {
  heron__amx_sched *s = c->s;
  int64_t m = s->g[HERON__GM].extent, n = s->g[HERON__GN].extent;
  int64_t k = s->g[HERON__GK].extent;
  int64_t kfull = HERON__AMX_MAX_COLSB / s->esize;
  int full_m = m % HERON__AMX_MAX_ROWS == 0;
  int64_t nfull = HERON__AMX_MAX_COLSB / 4; /* 32-bit lanes of a C row */
  int full_n = n % nfull == 0;
  int full_k = k % kfull == 0;
  if (full_m)
    heron__r_eq(&c->r, s->tm, heron__r_const(&c->r, HERON__AMX_MAX_ROWS),
                "tile.m == 16 (M a multiple of 16)");
  if (full_n)
    heron__r_eq(&c->r, s->tn, heron__r_const(&c->r, nfull),
                "tile.n == 16 (N a multiple of 16)");
  if (full_k)
    heron__r_eq(&c->r, s->tk, heron__r_const(&c->r, kfull),
                "tile.k == 64 bytes (K a multiple of it)");
  /* 2 x 2 accumulators (all 8 tile registers: 4 C, 2 A, 2 B; 4 dot
   * products per 4 tile loads, the most reuse the register file allows)
   * where M and N are multiples of two full tiles. */
  int reg2x2 = m % (2 * HERON__AMX_MAX_ROWS) == 0 && n % (2 * nfull) == 0;
  if (reg2x2) {
    heron__r_eq(&c->r, s->am, heron__r_const(&c->r, 2),
                "acc.m == 2 (M and N multiples of 2 full tiles)");
    heron__r_eq(&c->r, s->an, heron__r_const(&c->r, 2),
                "acc.n == 2 (M and N multiples of 2 full tiles)");
  }
  c->exact[0] = full_m;
  c->exact[1] = full_n;
  c->exact[2] = full_k;
  NOTE(c, "Register-Blocking", "%s",
       reg2x2 ? "acc.m = acc.n = 2 (M and N multiples of 32): 4 C, 2 A, 2 B "
                "tiles"
              : "acc.m, acc.n free (M or N not a multiple of 32)");
  NOTE(c, "Full-Tiles",
       "tile.m %s, tile.n %s, tile.k %s (an extent that is a multiple of "
       "the full tile takes it)",
       full_m ? "= 16" : "free (M not a multiple of 16)",
       full_n ? "= 16" : "free (N not a multiple of 16)",
       full_k ? (kfull == 64 ? "= 64" : "= 32") : "free (K not a multiple)");
}

/* Multi-Level-Tiling: M into blocks (parallel), micro-kernels per block,
 * accumulator tiles and tile rows; N likewise; K into blocks, steps per
 * block and the step.  Blocks need not divide: the counts are rounded up
 * (heron__r_ceil_split) and the packs zero-filled, and the padded work,
 * the product of the three swept extents, stays within
 * max_padded_work_pct of the real one (K counted rounded up to V). */
static void rule_tiling(ctx *c) {
  heron__amx_sched *s = c->s;
  int64_t m = s->g[HERON__GM].extent, n = s->g[HERON__GN].extent;
  int64_t k = s->k_padded;
  s->mb = heron__r_tile_sizes(&c->r, "m.b", m);
  s->nb = heron__r_tile_sizes(&c->r, "n.b", n);
  s->kb = heron__r_tile_sizes(&c->r, "k.b", (k + s->vnni - 1) / s->vnni);
  s->mo = heron__r_range(&c->r, "M.o", 1, 1, m);
  s->no = heron__r_range(&c->r, "N.o", 1, 1, n);
  s->ko = heron__r_range(&c->r, "K.o", 1, 1, k);
  int covers[3];
  covers[0] = heron__r_ceil_split(&c->r, "M", m,
                                  (int[]){s->mo, s->mb, s->am, s->tm}, 4);
  covers[1] = heron__r_ceil_split(&c->r, "N", n,
                                  (int[]){s->no, s->nb, s->an, s->tn}, 4);
  covers[2] =
      heron__r_ceil_split(&c->r, "K", k, (int[]){s->ko, s->kb, s->tk}, 3);
  /* Where the full tiles divide an extent, its blocks divide it too
   * (no padding; the kernel then reads A and writes C in place). */
  static const char *const exact_what[3] = {"M.cover == M (exact blocks)",
                                            "N.cover == N (exact blocks)",
                                            "K.cover == K (exact blocks)"};
  int64_t ext[3] = {m, n, k};
  for (int i = 0; i < 3; i++)
    if (c->exact[i])
      heron__r_eq(&c->r, covers[i], heron__r_const(&c->r, ext[i]),
                  exact_what[i]);
  int64_t real = heron__mul_sat(heron__mul_sat(m, n), k);
  heron__r_padded_work(&c->r, c->t->hw.max_padded_work_pct, real, covers, 3);
  s->bm = heron__r_prod(&c->r, "block.m", (int[]){s->mb, s->am, s->tm}, 3);
  s->bn = heron__r_prod(&c->r, "block.n", (int[]){s->nb, s->an, s->tn}, 3);
  s->bk = heron__r_prod(&c->r, "block.k", (int[]){s->kb, s->tk}, 2);
  NOTE(c, "Multi-Level-Tiling",
       "GEMM view M=%lld, N=%lld, K=%lld (rounded up to %lld), batch %lld: "
       "blocks (M.o, N.o, K.o) / micro-kernels (m.b, n.b, k.b) / "
       "accumulator tiles (acc.m, acc.n) / tile (tile.m, tile.n, tile.k)",
       (long long)m, (long long)n, (long long)s->g[HERON__GK].extent,
       (long long)k, (long long)s->g[HERON__GB].extent);
}

/* Add-Multi-Level-SPM: each thread packs its A block (tile rows of tile.k
 * elements) and B block (the VNNI layout) for every K block and keeps the
 * block's accumulators in a buffer across the K blocks; the three together
 * fit the core's L2, the tiles' source (the memory limit rule). */
static void rule_buffers(ctx *c) {
  heron__amx_sched *s = c->s;
  int ab = heron__r_prod(&c->r, "A.pack_elems", (int[]){s->bm, s->bk}, 2);
  int bb = heron__r_prod(&c->r, "B.pack_elems", (int[]){s->bk, s->bn}, 2);
  int cb = heron__r_prod(&c->r, "C.acc_elems", (int[]){s->bm, s->bn}, 2);
  int in = heron__r_sum(&c->r, "AB.pack_elems", (int[]){ab, bb}, 2);
  int inb = scaled(c, "AB.pack_bytes", s->esize, in);
  int cbb = scaled(c, "C.acc_bytes", 4, cb);
  s->buf_bytes = heron__r_sum(&c->r, "buffer_bytes", (int[]){inb, cbb}, 2);
  s->buf_limit = c->t->hw.l2_bytes > 0 ? c->t->hw.l2_bytes : (1 << 20);
  heron__r_le(&c->r, s->buf_bytes, s->buf_limit, "buffers <= L2");
  NOTE(c, "Add-Multi-Level-SPM",
       "per thread: A.pack [K.b/tile.k][block.m][tile.k], B.pack in the "
       "VNNI layout [block.k/%d][block.n][%d], C.acc [block.m][block.n] "
       "(%s); together <= %lld bytes (L2)",
       s->vnni, s->vnni, s->kind == HERON__AMX_INT8 ? "s32" : "fp32",
       (long long)s->buf_limit);
}

/* With the weights (B) prepacked, the whole of B is packed once, ahead of
 * the calls, in the VNNI layout the B tiles load (heron_prepack), and the
 * kernel reads its blocks in place; the B.pack buffer stays in the memory
 * rule (it is allocated but unused), which keeps the space the same. */
static void rule_prepack(ctx *c) {
  const heron__op *op = &c->t->op;
  if (op->prepack >> c->s->ib & 1u)
    NOTE(c, "Prepack",
         "%s packed once ahead of the calls into the VNNI layout [K.cover/%d]"
         "[N.cover][%d]; the B tiles load from it in place",
         op->in[c->s->ib].name, c->s->vnni, c->s->vnni);
}

static void rule_parallel(ctx *c) {
  NOTE(c, "Parallel",
       "OpenMP over batch x M.o x N.o blocks; each thread loads the tile "
       "configuration once and releases the tiles at the end");
}

/* What the view cannot take, as a message; NULL when the op fits. */
static const char *unsupported(const heron__op *op) {
  if (op->ninputs != 2)
    return "the GEMM view needs two inputs";
  if (op->out.bounded)
    return "its output is written through a bounded index";
  if (heron__gemm_divided(&op->out))
    return "its output is written through a divided index";
  return NULL;
}

int heron__amx_rules_apply(heron__template *t, heron_space *sp,
                           heron_error *err) {
  const heron__op *op = &t->op;
  int kind = kind_of(op);
  if (kind < 0)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "the amx template supports int8 (u8 x s8 -> s32) "
                           "and bf16 (-> fp32), not %s; use --dtype int8 or "
                           "bf16",
                           heron__dtype_name(op->dtype));
  const char *why = unsupported(op);
  if (why)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "amx template: op %s is outside the GEMM view: %s",
                           op->name, why);
  ctx *c = calloc(1, sizeof *c);
  heron__amx_sched *s = calloc(1, sizeof *s);
  if (!c || !s) {
    free(c);
    free(s);
    return heron_error_set(err, HERON_ENOMEM, "amx template: out of memory");
  }
  t->sched = s;
  s->kind = kind;
  s->esize = kind == HERON__AMX_INT8 ? 1 : 2;
  s->vnni = kind == HERON__AMX_INT8 ? 4 : 2;
  s->ia = op->act_input == 1 ? 1 : 0;
  s->ib = 1 - s->ia;
  c->t = t;
  c->s = s;
  c->r.sp = sp;
  c->r.err = err;
  c->r.who = "amx template";
  int rc = build_view(c);
  if (rc == HERON_OK) {
    rule_always_inline(c);
    rule_tensorize(c);
    rule_full_tiles(c);
    rule_tiling(c);
    rule_buffers(c);
    rule_prepack(c);
    rule_parallel(c);
    rc = c->r.rc;
  }
  free(c);
  return rc;
}

void heron__amx_tilecfg_of(const heron__template *t, const int64_t *cfg,
                           heron__amx_tilecfg *tc) {
  const heron__amx_sched *s = heron__amx_sched_of(t);
  memset(tc, 0, sizeof *tc);
  int am = (int)cfg[s->am], an = (int)cfg[s->an];
  tc->nc = am * an;
  tc->na = am;
  tc->ntiles = am * an + am + an;
  for (int i = 0; i < tc->ntiles && i < HERON__AMX_TILES; i++) {
    if (i < tc->nc) {
      tc->rows[i] = (int)cfg[s->c_rows];
      tc->colsb[i] = (int)cfg[s->c_colsb];
    } else if (i < tc->nc + tc->na) {
      tc->rows[i] = (int)cfg[s->a_rows];
      tc->colsb[i] = (int)cfg[s->a_colsb];
    } else {
      tc->rows[i] = (int)cfg[s->b_rows];
      tc->colsb[i] = (int)cfg[s->b_colsb];
    }
  }
}

/* ---- describe ------------------------------------------------------------ */

void heron__amx_describe(const heron__template *t, heron__buf *out) {
  const heron__amx_sched *s = heron__amx_sched_of(t);
  const heron__op *op = &t->op;
  char gb[96], gm[96], gn[96], gk[96];
  heron__gemm_group_names(op, &s->g[HERON__GB], gb, sizeof gb);
  heron__gemm_group_names(op, &s->g[HERON__GM], gm, sizeof gm);
  heron__gemm_group_names(op, &s->g[HERON__GN], gn, sizeof gn);
  heron__gemm_group_names(op, &s->g[HERON__GK], gk, sizeof gk);
  heron__buf_printf(out, "amx template for %s (%s) on %s\n", op->name,
                    s->kind == HERON__AMX_INT8 ? "int8: u8 x s8 -> s32"
                                               : "bf16 -> fp32",
                    t->hw.name[0] ? t->hw.name : "this machine");
  heron__buf_printf(out,
                    "GEMM view: batch=%s (%lld), M=%s (%lld), N=%s (%lld), "
                    "K=%s (%lld)\n",
                    gb, (long long)s->g[HERON__GB].extent, gm,
                    (long long)s->g[HERON__GM].extent, gn,
                    (long long)s->g[HERON__GN].extent, gk,
                    (long long)s->g[HERON__GK].extent);
  heron__rule_notes_write(t->rules, t->nrules, out);
  heron__buf_printf(
      out,
      "loop nest:\n"
      "  parallel for batch, no < N.o, mo < M.o  (LDTILECFG once per "
      "thread; M blocks fastest)\n"
      "    B.panel = B[all K][block.n] in the VNNI layout when (batch, no) "
      "changes (zero past the extents; prepacked: none)\n"
      "    for ko < K.o\n"
      "      A.pack = A[block.m rows][block.k], tile after tile (none where "
      "M and K are tiled exactly: A tiles load from A)\n"
      "      for mi < m.b, ni < n.b\n"
      "        C tiles (acc.m x acc.n) = ko ? C.acc : 0\n"
      "        for kt < k.b\n"
      "          TILELOADD acc.m A tiles, acc.n B tiles; %s each C tile\n"
      "        TILESTORED the C tiles to C.acc (the output itself where M "
      "and N are tiled exactly, no epilogue)\n"
      "    %s = C.acc inside the extents%s\n",
      s->kind == HERON__AMX_INT8 ? "TDPBUSD" : "TDPBF16PS", op->out.name,
      op->epilogue & HERON__EPI_RELU ? ", relu" : "");
}
