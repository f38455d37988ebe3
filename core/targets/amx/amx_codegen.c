/* core/targets/amx/amx_codegen.c - C source with AMX intrinsics for one
 * config of the amx template (amx_template.h has the loop nest).
 *
 * Everything the config decides is a constant of the source: block and
 * tile extents, the tile configuration, the tile register numbers (the
 * intrinsics take them as immediates, so the micro-kernel is unrolled over
 * the accumulator tiles).  The same source builds natively (the prelude
 * includes <immintrin.h>) or emulated (-DHERON_EMULATE_AMX: the prelude's
 * scalar intrinsics), so a kernel checked by emulation on any x86-64 CPU
 * is the very text that runs on an AMX one.
 *
 * Tensors are addressed through the GEMM view: for each tensor and group
 * the generator writes a small function from the group's fused index to
 * the tensor's flat offset (div / mod by the axes' extents, times the
 * axes' flat coefficients), which the compiler inlines; an index that
 * touches no axis of the group is a constant 0.  An input whose index map
 * may leave it (a convolution's padding) or divides (a transposed
 * convolution's stride) is packed element by element through a function
 * that checks every dimension and reads zero outside, as the op defines.
 */
#include <stdio.h>
#include <string.h>

#include "core/targets/amx/amx_template.h"

/* Writes `static inline int64_t heron_off_<name>(int64_t x)`: the flat
 * offset in tensor ts of the point whose group g fused index is x. */
static void offset_fn(const heron__op *op, const heron__tensor *ts,
                      const heron__gemm_group *g, const char *name,
                      heron__buf *out) {
  int64_t fc[HERON__MAX_AXES], off;
  heron__flat_coefs(op, ts, fc, &off);
  heron__buf_printf(out, "static inline int64_t heron_off_%s(int64_t x) {\n",
                    name);
  int any = 0;
  for (int k = 0; k < g->naxes; k++)
    any |= fc[g->axes[k]] != 0;
  if (!any) {
    heron__buf_puts(out, "  (void)x;\n  return 0;\n}\n");
    return;
  }
  if (g->naxes == 1) {
    heron__buf_printf(out, "  return x * %lldLL;\n}\n",
                      (long long)fc[g->axes[0]]);
    return;
  }
  heron__buf_puts(out, "  int64_t r = 0;\n");
  for (int k = g->naxes - 1; k >= 0; k--) {
    int a = g->axes[k];
    int64_t ext = op->axes[a].extent;
    if (fc[a])
      heron__buf_printf(out, "  r += (x %% %lldLL) * %lldLL; /* %s */\n",
                        (long long)ext, (long long)fc[a], op->axes[a].name);
    if (k > 0)
      heron__buf_printf(out, "  x /= %lldLL;\n", (long long)ext);
  }
  heron__buf_puts(out, "  return r;\n}\n");
}

/* The constant part of a tensor's flat offset. */
static int64_t tensor_offset(const heron__op *op, const heron__tensor *ts) {
  int64_t fc[HERON__MAX_AXES], off;
  heron__flat_coefs(op, ts, fc, &off);
  return off;
}

/* 1 when some index of ts may leave the tensor (padding) or is divided
 * (a transposed convolution's input): such a tensor is read element by
 * element through heron_at_<name>. */
static int guarded(const heron__tensor *ts) {
  return ts->bounded || heron__gemm_divided(ts);
}

/* Writes `static inline int64_t heron_at_<name>(x0, x1, x2)`: the flat
 * index in ts of the point whose fused indices in groups g[0..3) are x0,
 * x1, x2, or -1 where an index leaves its dimension or is not a multiple
 * of its divisor (the element reads as zero). */
static void at_fn(const heron__op *op, const heron__tensor *ts,
                  const heron__gemm_group *const *g, const char *name,
                  heron__buf *out) {
  heron__buf_printf(out,
                    "static inline int64_t heron_at_%s(int64_t x0, int64_t "
                    "x1, int64_t x2) {\n",
                    name);
  for (int j = 0; j < 3; j++) {
    for (int k = g[j]->naxes - 1; k >= 0; k--) {
      int a = g[j]->axes[k];
      int64_t ext = op->axes[a].extent;
      heron__buf_printf(out, "  int64_t a%d = x%d %% %lldLL; /* %s */\n", a, j,
                        (long long)ext, op->axes[a].name);
      if (k > 0)
        heron__buf_printf(out, "  x%d /= %lldLL;\n", j, (long long)ext);
    }
    heron__buf_printf(out, "  (void)x%d;\n", j);
  }
  heron__buf_puts(out, "  int64_t flat = 0, i;\n");
  for (int d = 0; d < ts->ndim; d++) {
    const heron__affine *ix = &ts->index[d];
    heron__buf_printf(out, "  i = %lldLL", (long long)ix->offset);
    for (int a = 0; a < op->naxes; a++)
      if (ix->coef[a])
        heron__buf_printf(out, " + %lldLL * a%d", (long long)ix->coef[a], a);
    heron__buf_puts(out, ";\n");
    int64_t div = heron__affine_div(ix);
    if (div > 1)
      heron__buf_printf(out,
                        "  if (i %% %lldLL)\n    return -1;\n  i /= %lldLL;\n",
                        (long long)div, (long long)div);
    heron__buf_printf(out,
                      "  if (i < 0 || i >= %lldLL)\n    return -1;\n"
                      "  flat = flat * %lldLL + i;\n",
                      (long long)ts->dims[d], (long long)ts->dims[d]);
  }
  heron__buf_puts(out, "  return flat;\n}\n");
}

/* 1 when the K group is one axis along which ts is contiguous, so that a
 * tile row of K elements is one memcpy. */
static int k_contiguous(const heron__op *op, const heron__tensor *ts,
                        const heron__gemm_group *gk) {
  int64_t fc[HERON__MAX_AXES], off;
  heron__flat_coefs(op, ts, fc, &off);
  return gk->naxes == 1 && fc[gk->axes[0]] == 1;
}

/* 1 with *coef set when ts's offset along group g is x * coef (the group
 * has at most one axis): its rows can be addressed with one stride. */
static int group_linear(const heron__op *op, const heron__tensor *ts,
                        const heron__gemm_group *g, int64_t *coef) {
  int64_t fc[HERON__MAX_AXES], off;
  heron__flat_coefs(op, ts, fc, &off);
  if (g->naxes > 1)
    return 0;
  *coef = g->naxes == 1 ? fc[g->axes[0]] : 0;
  return 1;
}

typedef struct gen {
  const heron__template *t;
  const heron__amx_sched *s;
  const int64_t *cfg;
  heron__buf *out;
  int64_t tm, tn, tk, am, an, mb, nb, kb, mo, no, ko;
  int64_t bm, bn, bk;
  /* A's tiles load straight from A (rows lda elements apart) instead of
   * from a pack; the C tiles live in the output (rows ldc apart) instead
   * of the accumulator buffer.  Both only where the blocks tile the
   * extents exactly, so that no tile reaches past them. */
  int direct_a, direct_c;
  int64_t lda, ldc;
} gen;

#define V(g, field) ((g)->cfg[(g)->s->field])

static void emit_config(gen *g) {
  heron__amx_tilecfg tc;
  heron__amx_tilecfg_of(g->t, g->cfg, &tc);
  heron__buf *out = g->out;
  heron__buf_puts(out,
                  "/* The tile configuration (palette 1): accumulators, then "
                  "A tiles, then B\n * tiles. */\n"
                  "static void heron_amx_config(void) {\n"
                  "  unsigned char cfg[64] __attribute__((aligned(64)));\n"
                  "  memset(cfg, 0, sizeof cfg);\n"
                  "  cfg[0] = 1;\n");
  for (int i = 0; i < tc.ntiles; i++)
    heron__buf_printf(out,
                      "  cfg[%d] = %d; cfg[%d] = 0; cfg[%d] = %d; /* tmm%d: "
                      "%s */\n",
                      16 + 2 * i, tc.colsb[i], 17 + 2 * i, 48 + i, tc.rows[i],
                      i,
                      i < tc.nc           ? "C"
                      : i < tc.nc + tc.na ? "A"
                                          : "B");
  heron__buf_puts(out, "  _tile_loadconfig(cfg);\n}\n\n");
}

/* The packing of A's block: [BK / TK][BM][TK] elements. */
static void emit_pack_a(gen *g, int contiguous, int guard) {
  heron__buf *out = g->out;
  heron__buf_puts(
      out,
      "/* A's block: rows m0.., K elements k0.., tile after tile, zero past "
      "M and K. */\n"
      "static void heron_pack_a(heron_a_t *restrict ap, const heron_a_t "
      "*restrict A, int64_t bi, int64_t boff, int64_t m0, int64_t k0) {\n"
      "  (void)bi;\n"
      "  (void)boff;\n"
      "  for (int r = 0; r < BM; r++) {\n"
      "    int64_t m = m0 + r;\n"
      "    if (m >= M) {\n"
      "      for (int kt = 0; kt < BK / TK; kt++)\n"
      "        memset(ap + ((int64_t)kt * BM + r) * TK, 0, TK * sizeof *ap);\n"
      "      continue;\n"
      "    }\n"
      "");
  if (!guard)
    heron__buf_puts(
        out, "    const heron_a_t *row = A + boff + heron_off_a_m(m);\n");
  if (guard)
    heron__buf_puts(out,
                    "    for (int kk = 0; kk < BK; kk++) {\n"
                    "      int64_t k = k0 + kk;\n"
                    "      int64_t at = k < K ? heron_at_a(bi, m, k) : -1;\n"
                    "      ap[((int64_t)(kk / TK) * BM + r) * TK + kk % TK] =\n"
                    "          at >= 0 ? A[at] : 0;\n"
                    "    }\n");
  else if (contiguous)
    heron__buf_puts(
        out, "    for (int kt = 0; kt < BK / TK; kt++) {\n"
             "      heron_a_t *dst = ap + ((int64_t)kt * BM + r) * TK;\n"
             "      int64_t k = k0 + (int64_t)kt * TK;\n"
             "      int64_t n = K - k < TK ? (K - k > 0 ? K - k : 0) : TK;\n"
             "      memcpy(dst, row + k, (size_t)n * sizeof *ap);\n"
             "      memset(dst + n, 0, (size_t)(TK - n) * sizeof *ap);\n"
             "    }\n");
  else
    heron__buf_puts(out,
                    "    for (int kk = 0; kk < BK; kk++) {\n"
                    "      int64_t k = k0 + kk;\n"
                    "      ap[((int64_t)(kk / TK) * BM + r) * TK + kk % TK] =\n"
                    "          k < K ? row[heron_off_a_k(k)] : 0;\n"
                    "    }\n");
  heron__buf_puts(out, "  }\n}\n\n");
}

/* The packing of B's block in the VNNI layout: [BK / V][BN][V]. */
static void emit_pack_b(gen *g, int guard) {
  if (guard) {
    heron__buf_puts(
        g->out,
        "/* B's block in the VNNI layout: element (k, n) at [k / V][n][k % "
        "V], zero past\n * K and N and where B's index map leaves B. */\n"
        "static void heron_pack_b(heron_b_t *restrict bp, const heron_b_t "
        "*restrict B, int64_t bi, int64_t boff, int64_t n0, int64_t k0, "
        "int64_t ldb) {\n"
        "  (void)boff;\n"
        "  for (int kk = 0; kk < BK; kk++) {\n"
        "    int64_t k = k0 + kk;\n"
        "    heron_b_t *dst = bp + (int64_t)(kk / VNNI) * ldb + kk % "
        "VNNI;\n"
        "    for (int c = 0; c < BN; c++) {\n"
        "      int64_t n = n0 + c;\n"
        "      int64_t at = k < K && n < N ? heron_at_b(bi, k, n) : -1;\n"
        "      dst[(int64_t)c * VNNI] = at >= 0 ? B[at] : 0;\n"
        "    }\n"
        "  }\n"
        "}\n\n");
    return;
  }
  /* Unguarded: V rows of K at a time, each row's columns inside N read
   * once and interleaved into the lanes (a loop the compiler vectorizes
   * where B's N axis is contiguous), zero past K and N. */
  heron__buf_puts(
      g->out,
      "/* B's block in the VNNI layout: element (k, n) at [k / V][n][k % V], "
      "zero past\n * K and N. */\n"
      "static void heron_pack_b(heron_b_t *restrict bp, const heron_b_t "
      "*restrict B, int64_t bi, int64_t boff, int64_t n0, int64_t k0, "
      "int64_t ldb) {\n"
      "  (void)bi;\n"
      "  int nv = N - n0 < BN ? (N - n0 > 0 ? (int)(N - n0) : 0) : BN;\n"
      "  for (int kk = 0; kk < BK; kk += VNNI) {\n"
      "    heron_b_t *restrict dst = bp + (int64_t)(kk / VNNI) * ldb;\n"
      "    const heron_b_t *src[VNNI];\n"
      "    int full = 1;\n"
      "    for (int v = 0; v < VNNI; v++) {\n"
      "      int64_t k = k0 + kk + v;\n"
      "      src[v] = k < K ? B + boff + heron_off_b_k(k) : NULL;\n"
      "      full &= k < K;\n"
      "    }\n"
      "    if (full) {\n"
      "      for (int c = 0; c < nv; c++)\n"
      "        for (int v = 0; v < VNNI; v++)\n"
      "          dst[(int64_t)c * VNNI + v] = src[v][heron_off_b_n(n0 + c)];\n"
      "    } else {\n"
      "      for (int c = 0; c < nv; c++)\n"
      "        for (int v = 0; v < VNNI; v++)\n"
      "          dst[(int64_t)c * VNNI + v] =\n"
      "              src[v] ? src[v][heron_off_b_n(n0 + c)] : 0;\n"
      "    }\n"
      "    memset(dst + (int64_t)nv * VNNI, 0, (size_t)(BN - nv) * VNNI * "
      "sizeof *dst);\n"
      "  }\n"
      "}\n\n");
}

/* One micro-kernel: AM x AN accumulator tiles over the block's K steps,
 * unrolled over the tiles (their numbers are immediates).  a is the
 * micro-kernel's first A row at the block's first K step: A tiles are AROW
 * elements a row, the next K step AKSTEP elements on (the pack: TK and BM
 * * TK; A itself: LDA and TK).  bp is the B block's VNNI origin and ldb
 * its row pitch in elements: BN * V in the per-thread panel, NC * V in a
 * prepacked copy of the whole B.  c is the C tiles' origin, ldc elements a
 * row (the accumulator buffer's BN, or the output's own).  Each K step
 * loads the first A and B tiles, then alternates dot products with the
 * loads of the next tiles, so that loads overlap the products. */
static void emit_micro(gen *g, const char *dp) {
  heron__buf *out = g->out;
  int nc = (int)(g->am * g->an);
  heron__buf_puts(
      out, "/* The micro-kernel: its C tiles from (first) zero or from c, "
           "k.b steps of dot\n * products, and back to c. */\n"
           "static inline void heron_micro(const heron_a_t *a, const "
           "heron_b_t *bp, int64_t ldb, heron_c_t *c0, int64_t ldc, int "
           "first) {\n"
           "  if (first) {\n");
  for (int i = 0; i < nc; i++)
    heron__buf_printf(out, "    _tile_zero(%d);\n", i);
  heron__buf_puts(out, "  } else {\n");
  for (int i = 0; i < g->am; i++)
    for (int j = 0; j < g->an; j++)
      heron__buf_printf(out,
                        "    _tile_loadd(%d, c0 + %lldLL * ldc + %lldLL, ldc * "
                        "4);\n",
                        (int)(i * g->an + j), (long long)(i * g->tm),
                        (long long)(j * g->tn));
  heron__buf_puts(out,
                  "  }\n"
                  "  for (int kt = 0; kt < KB; kt++) {\n"
                  "    const heron_a_t *a0 = a + (int64_t)kt * AKSTEP;\n"
                  "    const heron_b_t *b0 = bp + (int64_t)kt * (TK / VNNI) * "
                  "ldb;\n");
  /* Loads and products interleaved: A0, B0, then for each product the
   * first use of a not yet loaded tile loads it just before. */
  int la[4] = {0}, lb[4] = {0};
  for (int i = 0; i < g->am; i++)
    for (int j = 0; j < g->an; j++) {
      if (!la[i]) {
        heron__buf_printf(out,
                          "    _tile_loadd(%d, a0 + %lldLL * AROW, AROW * "
                          "%d);\n",
                          nc + i, (long long)(i * g->tm), g->s->esize);
        la[i] = 1;
      }
      if (!lb[j]) {
        heron__buf_printf(out,
                          "    _tile_loadd(%d, b0 + %lldLL * VNNI, ldb * "
                          "(int64_t)sizeof(heron_b_t));\n",
                          (int)(nc + g->am + j), (long long)(j * g->tn));
        lb[j] = 1;
      }
      heron__buf_printf(out, "    %s(%d, %d, %d);\n", dp, (int)(i * g->an + j),
                        (int)(nc + i), (int)(nc + g->am + j));
    }
  heron__buf_puts(out, "  }\n");
  for (int i = 0; i < g->am; i++)
    for (int j = 0; j < g->an; j++)
      heron__buf_printf(out,
                        "  _tile_stored(%d, c0 + %lldLL * ldc + %lldLL, ldc * "
                        "4);\n",
                        (int)(i * g->an + j), (long long)(i * g->tm),
                        (long long)(j * g->tn));
  heron__buf_puts(out, "}\n\n");
}

/* The copy of a block's accumulators to the output, with the epilogue:
 * relu(sum + bias[channel]), the bias read through its own index map. */
static void emit_store(gen *g) {
  const heron__op *op = &g->t->op;
  int bias = (op->epilogue & HERON__EPI_BIAS) != 0;
  heron__buf_puts(
      g->out,
      "/* The block's accumulators inside M and N to the output. */\n"
      "static void heron_store(heron_c_t *restrict C, const heron_c_t "
      "*restrict acc, const heron_c_t *restrict bias, int64_t boff, int64_t "
      "bboff, int64_t m0, int64_t n0) {\n"
      "  (void)bias;\n"
      "  (void)bboff;\n"
      "  for (int r = 0; r < BM && m0 + r < M; r++) {\n"
      "    heron_c_t *row = C + boff + heron_off_c_m(m0 + r);\n"
      "    for (int c = 0; c < BN && n0 + c < N; c++) {\n"
      "      heron_c_t v = acc[(int64_t)r * BN + c];\n");
  if (bias)
    heron__buf_puts(g->out, "      v += bias[bboff + heron_off_bias_m(m0 + r) "
                            "+ heron_off_bias_n(n0 + c)];\n");
  if (op->epilogue & HERON__EPI_RELU)
    heron__buf_puts(g->out, "      v = v > 0 ? v : 0;\n");
  heron__buf_puts(g->out, "      row[heron_off_c_n(n0 + c)] = v;\n"
                          "    }\n"
                          "  }\n"
                          "}\n\n");
}

/* heron_prepacked_elems and heron_prepack when B (the weights) is packed
 * once ahead of the calls (op->prepack): the whole B in the VNNI layout,
 * per batch [KC / V][NC][V] with KC = K.o * block.k and NC = N.o * block.n
 * (zero past K and N), written block by block by the kernel's own
 * heron_pack_b; sizes in elements of B's own type (heron_b_t: s8 for
 * int8, bf16 bits for bf16), as the worker allocates them. */
static void emit_prepack(gen *g) {
  const heron__amx_sched *s = g->s;
  if (!(g->t->op.prepack >> s->ib & 1u))
    return;
  heron__buf_printf(
      g->out,
      "\n/* B packed once, ahead of the calls: heron_kernel takes input %d "
      "as\n * heron_prepack(%d, B, copy) left it, in a buffer of "
      "heron_prepacked_elems(%d)\n * elements of B's own type (heron_b_t). */\n"
      "int64_t heron_prepacked_elems(int input);\n"
      "int64_t heron_prepacked_elems(int input) {\n"
      "  if (input != %d)\n"
      "    return 0;\n"
      "  return (int64_t)BATCH * KC * NC;\n"
      "}\n\n"
      "void heron_prepack(int input, const void *src, void *dst);\n"
      "void heron_prepack(int input, const void *src, void *dst) {\n"
      "  if (input != %d)\n"
      "    return;\n"
      "  const heron_b_t *B = (const heron_b_t *)src;\n"
      "  heron_b_t *bp = (heron_b_t *)dst;\n"
      "  for (int64_t bi = 0; bi < BATCH; bi++)\n"
      "    for (int64_t ko = 0; ko < KO; ko++)\n"
      "      for (int64_t no = 0; no < NO; no++)\n"
      "        heron_pack_b(bp + ((bi * (KC / VNNI) + ko * (BK / VNNI)) * NC + "
      "no * BN) * VNNI, B, bi, %lldLL + heron_off_b_b(bi), no * BN, ko * BK, "
      "NC * VNNI);\n"
      "}\n",
      s->ib, s->ib, s->ib, s->ib, s->ib,
      (long long)tensor_offset(&g->t->op, &g->t->op.in[s->ib]));
}

/* The kernel.  Blocks go to the threads in the order (batch, N block, M
 * block), M fastest, so that a thread's consecutive blocks mostly share
 * their N block: its B panel (every K block of it, [KC / V][BN][V]) is
 * packed once per N block and batch and reused over the M blocks, rather
 * than once per block. */
static void emit_kernel(gen *g) {
  const heron__op *op = &g->t->op;
  const heron__amx_sched *s = g->s;
  heron__buf *out = g->out;
  int64_t offa = tensor_offset(op, &op->in[s->ia]);
  int64_t offb = tensor_offset(op, &op->in[s->ib]);
  int64_t offc = tensor_offset(op, &op->out);
  int bias = (op->epilogue & HERON__EPI_BIAS) != 0;
  int64_t offbias = bias ? tensor_offset(op, &op->bias) : 0;
  /* A prepacked B (op->prepack) is read in place: no per-block pack. */
  int pre = (op->prepack >> s->ib & 1u) != 0;
  heron__buf_printf(
      out,
      "void heron_kernel(void *const *bufs) {\n"
      "  const heron_a_t *A = (const heron_a_t *)bufs[%d];\n"
      "  const heron_b_t *B = (const heron_b_t *)bufs[%d];\n"
      "  heron_c_t *C = (heron_c_t *)bufs[2];\n"
      "  const heron_c_t *bias = %s;\n"
      "  (void)A;\n"
      "  (void)B;\n"
      "  (void)C;\n"
      "  (void)bias;\n"
      "  heron_amx_permit();\n"
      "#pragma omp parallel\n"
      "  {\n"
      "    heron_a_t *ap = %s;\n"
      "    heron_b_t *bp = %s;\n"
      "    heron_c_t *acc = %s;\n"
      "    if ((%d && !ap) || (%d && !bp) || (%d && !acc)) {\n"
      "      fprintf(stderr, \"heron-amx: out of memory for the block "
      "buffers\\n\");\n"
      "      abort();\n"
      "    }\n"
      "    (void)ap;\n"
      "    (void)acc;\n"
      "    int64_t panel = -1; /* the (batch, N block) bp holds */\n"
      "    (void)panel;\n"
      "    heron_amx_config();\n"
      "#pragma omp for schedule(static)\n"
      "    for (int64_t blk = 0; blk < BATCH * MO * NO; blk++) {\n"
      "      int64_t bi = blk / (MO * NO), no = blk / MO %% NO, mo = blk %% "
      "MO;\n"
      "      int64_t m0 = mo * BM, n0 = no * BN;\n"
      "      int64_t oa = %lldLL + heron_off_a_b(bi);\n"
      "      int64_t ob = %lldLL + heron_off_b_b(bi);\n"
      "      int64_t oc = %lldLL + heron_off_c_b(bi);\n"
      "      int64_t obias = %lldLL + heron_off_bias_b(bi);\n"
      "      (void)oa;\n"
      "      (void)ob;\n"
      "      (void)oc;\n"
      "      (void)obias;\n",
      s->ia, s->ib, bias ? "(const heron_c_t *)bufs[3]" : "NULL",
      g->direct_a ? "NULL"
                  : "aligned_alloc(64, ((size_t)BM * BK * sizeof(heron_a_t) "
                    "+ 63) / 64 * 64)",
      pre ? "NULL"
          : "aligned_alloc(64, ((size_t)KC * BN * sizeof(heron_b_t) + 63) / "
            "64 * 64)",
      g->direct_c ? "NULL"
                  : "aligned_alloc(64, ((size_t)BM * BN * sizeof(heron_c_t) "
                    "+ 63) / 64 * 64)",
      !g->direct_a, !pre, !g->direct_c, (long long)offa, (long long)offb,
      (long long)offc, (long long)offbias);
  if (!pre)
    heron__buf_puts(out, "      if (panel != bi * NO + no) {\n"
                         "        for (int64_t ko = 0; ko < KO; ko++)\n"
                         "          heron_pack_b(bp + ko * (BK / VNNI) * BN * "
                         "VNNI, B, bi, ob, n0, ko * BK, BN * VNNI);\n"
                         "        panel = bi * NO + no;\n"
                         "      }\n");
  if (g->direct_c)
    heron__buf_puts(out, "      heron_c_t *cb = C + oc + m0 * LDC + n0;\n");
  else
    heron__buf_puts(out, "      heron_c_t *cb = acc;\n");
  heron__buf_puts(out, "      for (int64_t ko = 0; ko < KO; ko++) {\n");
  if (!g->direct_a)
    heron__buf_puts(out, "        heron_pack_a(ap, A, bi, oa, m0, ko * BK);\n");
  heron__buf_printf(
      out,
      "        const heron_b_t *bk0 = %s;\n"
      "        for (int mi = 0; mi < MB; mi++)\n"
      "          for (int ni = 0; ni < NB; ni++)\n"
      "            heron_micro(%s, bk0 + (int64_t)ni * AN * TN * VNNI, %s, "
      "cb + (int64_t)mi * AM * TM * LDC + (int64_t)ni * AN * TN, LDC, ko == "
      "0);\n"
      "      }\n",
      pre ? "B + ((bi * (KC / VNNI) + ko * (BK / VNNI)) * NC + n0) * VNNI"
          : "bp + ko * (BK / VNNI) * BN * VNNI",
      g->direct_a ? "A + oa + (m0 + (int64_t)mi * AM * TM) * LDA + ko * BK"
                  : "ap + (int64_t)mi * AM * TM * TK",
      pre ? "NC * VNNI" : "(int64_t)BN * VNNI");
  if (!g->direct_c)
    heron__buf_puts(out,
                    "      heron_store(C, acc, bias, oc, obias, m0, n0);\n");
  heron__buf_puts(out, "    }\n"
                       "    _tile_release();\n"
                       "    free(ap);\n"
                       "    free(bp);\n"
                       "    free(acc);\n"
                       "  }\n"
                       "}\n");
}

int heron__amx_codegen(const heron__template *t, const heron_space *sp,
                       const int64_t *cfg, heron__buf *out, heron_error *err) {
  const heron__amx_sched *s = heron__amx_sched_of(t);
  int nviol = heron_space_violations(sp, cfg, NULL, 0);
  if (nviol != 0)
    return heron_error_set(err, HERON_EINVAL,
                           "amx codegen: the config violates %d constraint%s "
                           "of the space",
                           nviol, nviol == 1 ? "" : "s");
  gen g = {.t = t, .s = s, .cfg = cfg, .out = out};
  g.tm = V(&g, tm), g.tn = V(&g, tn), g.tk = V(&g, tk);
  g.am = V(&g, am), g.an = V(&g, an);
  g.mb = V(&g, mb), g.nb = V(&g, nb), g.kb = V(&g, kb);
  g.mo = V(&g, mo), g.no = V(&g, no), g.ko = V(&g, ko);
  g.bm = g.mb * g.am * g.tm, g.bn = g.nb * g.an * g.tn, g.bk = g.kb * g.tk;
  const heron__op *op = &t->op;
  int int8 = s->kind == HERON__AMX_INT8;
  const heron__tensor *ta = &op->in[s->ia], *tb = &op->in[s->ib];
  const heron__tensor *tc = &op->out;
  int64_t em = s->g[HERON__GM].extent, en = s->g[HERON__GN].extent;
  int64_t ek = s->g[HERON__GK].extent, cn = 0;
  int exact_m = g.mo * g.bm == em, exact_n = g.no * g.bn == en;
  int exact_k = g.ko * g.bk == ek;
  g.direct_a = !guarded(ta) && k_contiguous(op, ta, &s->g[HERON__GK]) &&
               group_linear(op, ta, &s->g[HERON__GM], &g.lda) && exact_m &&
               exact_k;
  if (g.direct_a && g.lda == 0)
    g.lda = ek; /* one row (M is 1): any pitch */
  g.direct_c = op->epilogue == 0 &&
               group_linear(op, tc, &s->g[HERON__GM], &g.ldc) &&
               group_linear(op, tc, &s->g[HERON__GN], &cn) && cn == 1 &&
               exact_m && exact_n;
  if (g.direct_c && g.ldc == 0)
    g.ldc = en;
  if (!g.direct_c)
    g.ldc = g.bn;
  heron__buf_printf(out,
                    "/* heron amx kernel: %s %s; tile %lldx%lldx%lld, "
                    "accumulators %lldx%lld, block %lldx%lldx%lld, blocks "
                    "%lldx%lldx%lld.\n * Native: " HERON__AMX_CFLAGS
                    ".\n * Emulated: " HERON__AMX_EMU_CFLAGS ". */\n",
                    op->name, int8 ? "int8 (u8 x s8 -> s32)" : "bf16 (-> fp32)",
                    (long long)g.tm, (long long)g.tn, (long long)g.tk,
                    (long long)g.am, (long long)g.an, (long long)g.bm,
                    (long long)g.bn, (long long)g.bk, (long long)g.mo,
                    (long long)g.no, (long long)g.ko);
  heron__buf_printf(out,
                    "/* A tiles load from %s; C tiles accumulate in %s. */\n",
                    g.direct_a ? "A in place" : "a per-block pack",
                    g.direct_c ? "the output in place" : "a per-block buffer");
  heron__buf_puts(out, heron__amx_prelude());
  heron__buf_printf(
      out,
      "\n/* ---- the kernel ---- */\n"
      "typedef %s heron_a_t;\n"
      "typedef %s heron_b_t;\n"
      "typedef %s heron_c_t;\n"
      "#define M %lldLL\n#define N %lldLL\n#define K %lldLL\n"
      "#define BATCH %lldLL\n"
      "#define TM %lld\n#define TN %lld\n#define TK %lld\n#define VNNI %d\n"
      "#define AM %lld\n#define AN %lld\n"
      "#define MB %lld\n#define NB %lld\n#define KB %lld\n"
      "#define BM %lld\n#define BN %lld\n#define BK %lld\n"
      "#define MO %lldLL\n#define NO %lldLL\n#define KO %lldLL\n"
      "#define KC (KO * BK)\n#define NC (NO * BN)\n"
      "#define LDA %lldLL\n#define AROW %s\n#define AKSTEP %s\n"
      "#define LDC %lldLL\n\n",
      int8 ? "uint8_t" : "uint16_t", int8 ? "int8_t" : "uint16_t",
      int8 ? "int32_t" : "float", (long long)s->g[HERON__GM].extent,
      (long long)s->g[HERON__GN].extent, (long long)s->g[HERON__GK].extent,
      (long long)s->g[HERON__GB].extent, (long long)g.tm, (long long)g.tn,
      (long long)g.tk, s->vnni, (long long)g.am, (long long)g.an,
      (long long)g.mb, (long long)g.nb, (long long)g.kb, (long long)g.bm,
      (long long)g.bn, (long long)g.bk, (long long)g.mo, (long long)g.no,
      (long long)g.ko, (long long)(g.direct_a ? g.lda : g.tk),
      g.direct_a ? "LDA" : "TK", g.direct_a ? "TK" : "(BM * TK)",
      (long long)g.ldc);
  offset_fn(op, ta, &s->g[HERON__GB], "a_b", out);
  offset_fn(op, ta, &s->g[HERON__GM], "a_m", out);
  offset_fn(op, ta, &s->g[HERON__GK], "a_k", out);
  offset_fn(op, tb, &s->g[HERON__GB], "b_b", out);
  offset_fn(op, tb, &s->g[HERON__GK], "b_k", out);
  offset_fn(op, tb, &s->g[HERON__GN], "b_n", out);
  offset_fn(op, tc, &s->g[HERON__GB], "c_b", out);
  offset_fn(op, tc, &s->g[HERON__GM], "c_m", out);
  offset_fn(op, tc, &s->g[HERON__GN], "c_n", out);
  /* Without a bias the bias tensor is all zero maps: constant offsets. */
  offset_fn(op, &op->bias, &s->g[HERON__GB], "bias_b", out);
  offset_fn(op, &op->bias, &s->g[HERON__GM], "bias_m", out);
  offset_fn(op, &op->bias, &s->g[HERON__GN], "bias_n", out);
  heron__buf_puts(out, "\n");
  emit_config(&g);
  int guard_a = guarded(ta), guard_b = guarded(tb);
  if (guard_a)
    at_fn(op, ta,
          (const heron__gemm_group *const[]){&s->g[HERON__GB], &s->g[HERON__GM],
                                             &s->g[HERON__GK]},
          "a", out);
  if (guard_b)
    at_fn(op, tb,
          (const heron__gemm_group *const[]){&s->g[HERON__GB], &s->g[HERON__GK],
                                             &s->g[HERON__GN]},
          "b", out);
  if (!g.direct_a)
    emit_pack_a(&g, k_contiguous(op, ta, &s->g[HERON__GK]), guard_a);
  emit_pack_b(&g, guard_b);
  emit_micro(&g, int8 ? "_tile_dpbusd" : "_tile_dpbf16ps");
  if (!g.direct_c)
    emit_store(&g);
  emit_kernel(&g);
  emit_prepack(&g);
  if (out->failed)
    return heron_error_set(err, HERON_ENOMEM, "amx codegen: out of memory");
  return HERON_OK;
}
