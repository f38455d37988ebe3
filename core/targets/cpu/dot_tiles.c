/* core/targets/cpu/dot_tiles.c - the register tile of the int8 and bf16
 * generator: its rows, the dot-product group loop of each variant's
 * instructions, and the stores with the epilogue. */
#include <stdio.h>
#include <string.h>

#include "core/targets/cpu/dot.h"

/* ---- the register tile ---------------------------------------------------
 * Rows are the points of the register tile over the live spatial axes
 * other than the vector axis (row-major, in axis order); every row has
 * nvec = reg[v] / vec accumulators. */

int64_t heron__cpu_dot_count_rows(const dgen *g) {
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

/* How far one step of axis a moves in the region pack (region.h). */
static int64_t region_coef(const dgen *g, int a) {
  return heron__cpu_region_coef(g->op, &g->rg, a);
}

/* The offset in the region pack of row r's first element, from the
 * register tile's local origin r_<a>: the spatial part of each
 * dimension's index, times the dimension's stride. */
static void region_point_text(const dgen *g, const int64_t *off,
                              heron__buf *b) {
  const heron__op *op = g->op;
  heron__buf_printf(b, "(%lldLL", (long long)g->rg.origin);
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
  int64_t per = g->rg.cgp / g->group;
  ind(g, depth);
  heron__buf_printf(g->o, "static const int32_t h_go[%lld] = {",
                    (long long)g->ng);
  for (int64_t h = 0; h < g->ng; h++) {
    int64_t pos = h / per, o = (h % per) * g->group;
    for (int a = op->naxes - 1; a >= 0; a--) {
      if (op->axes[a].kind != HERON__REDUCE || !live(g, a) || a == g->rg.cax)
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
  switch (g->s->dot) {
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
        : g->s->dot == HERON__DOT_VNNI ? "H_DPBUSD256(%1$s, %2$s, %3$s);"
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
void heron__cpu_dot_emit_dot_loop(dgen *g, int depth, int64_t rows,
                                  int64_t nvec) {
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
  int table = g->region && g->rip > g->rg.cgp;
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
void heron__cpu_dot_emit_store(dgen *g, int depth, int64_t rows, int64_t nvec) {
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
        heron__cpu_dot_element_text(g, op->ninputs, &cond, &o);
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
        heron__cpu_dot_element_text(g, op->ninputs, &cond, &o);
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
        heron__cpu_dot_element_text(g, op->ninputs, &cond, &o);
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
