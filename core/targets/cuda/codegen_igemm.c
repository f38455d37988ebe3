/* core/targets/cuda/codegen_igemm.c - the implicit-GEMM addressing of
 * the cuda generator (the knob igemm, template.h's heron__cuda_igemm):
 * the row table A.rows that each block fills once before the k loop, the
 * loads of A that add only the K part to a row's entries and check its
 * coordinates, and the K order of channels-last data. */
#include <stdio.h>
#include <string.h>

#include "core/targets/cuda/codegen.h"

const heron__gemm_group *heron__cuda_k_order(const gen *g) {
  return g->k.igemm && g->s->ig.reorder ? &g->s->ig.gk : &g->s->g[HERON__GK];
}

/* Whether index ix has a term of a K axis. */
static int has_k_terms(const gen *g, const heron__affine *ix) {
  for (int a = 0; a < g->op->naxes; a++)
    if (ix->coef[a] && k_axis(g, a))
      return 1;
  return 0;
}

/* The implicit-GEMM row table A.rows (template.h, heron__cuda_igemm),
 * filled once per block before the k loop: for each row e of the block's
 * M tile, the fused M index is split into its axes here and only here. */
void heron__cuda_emit_rows_table(gen *g, int depth) {
  const heron__cuda_igemm *ig = &g->s->ig;
  const heron__tensor *ts = &g->op->in[0];
  const knobs *k = &g->k;
  const heron__gemm_group *gm = &g->s->g[HERON__GM];
  emit(g, depth,
       "/* A.rows <- the %lld rows of the M tile of %s: base offset and "
       "guarded coordinates, once per block (implicit GEMM) */",
       (long long)k->bm, ts->name);
  int d = heron__cuda_coop_loop(g, depth, k->bm, 1);
  emit(g, d, "const %s gs = m0 + e;", g->it);
  int need[HERON__MAX_AXES];
  reads(g->op, ts, need);
  for (int a = 0; a < g->op->naxes; a++)
    need[a] &= !k_axis(g, a);
  heron__cuda_split_group(g, d, HERON__GM, "gs", need);
  heron__buf base = {0}, valid = {0};
  heron__buf_puts(&valid, "1");
  if (cover_of(k, HERON__GM) != gm->extent)
    heron__buf_printf(&valid, " && gs < %lld", (long long)gm->extent);
  int64_t stride = 1;
  for (int dd = ts->ndim - 1; dd >= 0; dd--) {
    const heron__affine *ix = &ts->index[dd];
    heron__buf e = {0};
    heron__cuda_affine_part(g, ix, M_TERMS, &e);
    char var[48];
    snprintf(var, sizeof var, "rm_d%d", dd);
    emit(g, d, "const %s %s = %s;", g->it, var, e.data);
    heron__buf_free(&e);
    if (ig->col[dd] < 0) {
      /* No coordinate: its M part is in the base; a dimension without a
       * K part is guarded here, for the whole row. */
      if (!has_k_terms(g, ix) && heron__cuda_dim_guarded(g->op, ts, dd)) {
        int64_t div = heron__affine_div(ix);
        if (div > 1) {
          heron__buf_printf(&valid, " && %s %% %lld == 0", var, (long long)div);
          snprintf(var + strlen(var), sizeof var - strlen(var), " / %lld",
                   (long long)div);
        }
        heron__buf_printf(&valid, " && (%s) >= 0 && (%s) < %lld", var, var,
                          (long long)ts->dims[dd]);
      }
      heron__buf_printf(&base, "%s(%s) * %lld", base.len ? " + " : "", var,
                        (long long)stride);
    }
    stride *= ts->dims[dd];
  }
  emit(g, d, "Ar[e] = %s;", base.data ? base.data : "0");
  int first = 1;
  for (int dd = 0; dd < ts->ndim; dd++) {
    if (ig->col[dd] < 0)
      continue;
    if (first)
      emit(g, d, "Ar[%lld + e] = (%s) ? rm_d%d : %lld;",
           (long long)(ig->col[dd] * k->bm), valid.data, dd,
           (long long)ig->sentinel);
    else
      emit(g, d, "Ar[%lld + e] = rm_d%d;", (long long)(ig->col[dd] * k->bm),
           dd);
    first = 0;
  }
  if (ig->ok_col >= 0)
    emit(g, d, "Ar[%lld + e] = (%s);", (long long)(ig->ok_col * k->bm),
         valid.data);
  heron__buf_free(&base);
  heron__buf_free(&valid);
  heron__cuda_coop_loop_end(g, depth, k->bm, 1);
  emit(g, depth, "HERON_SYNC(); /* A.rows complete */");
}

/* Emits, for A's element at row `row` (an expression) of the M tile, with
 * the K axes ax_* in scope, `<idx>` (its flat element index; only its
 * guards without want_idx) from the row's entries in A.rows plus the K
 * part, and appends its guards to `cond`: the coordinates' bounds and
 * divisors, or the row's validity. */
static void rows_index(gen *g, int depth, const char *row, const char *idx,
                       int want_idx, heron__buf *cond) {
  const heron__cuda_igemm *ig = &g->s->ig;
  const heron__tensor *ts = &g->op->in[0];
  const knobs *k = &g->k;
  emit(g, depth, "const %s *%s_r = Ar + (%s);", g->it, idx, row);
  heron__buf flat = {0};
  heron__buf_printf(&flat, "%s_r[0]", idx);
  int64_t stride = 1;
  for (int dd = ts->ndim - 1; dd >= 0; dd--) {
    const heron__affine *ix = &ts->index[dd];
    heron__buf e = {0};
    heron__cuda_affine_part(g, ix, K_TERMS, &e);
    if (ig->col[dd] >= 0) {
      char var[48];
      snprintf(var, sizeof var, "%s_d%d", idx, dd);
      emit(g, depth, "const %s %s = %s_r[%lld] + %s;", g->it, var, idx,
           (long long)(ig->col[dd] * k->bm), e.data);
      heron__cuda_coord_guards(cond, var, sizeof var, ts, dd);
      heron__buf_printf(&flat, " + (%s) * %lld", var, (long long)stride);
    } else if (has_k_terms(g, ix)) {
      heron__buf_printf(&flat, " + (%s) * %lld", e.data, (long long)stride);
    }
    heron__buf_free(&e);
    stride *= ts->dims[dd];
  }
  if (ig->ok_col >= 0)
    heron__buf_printf(cond, " && %s_r[%lld]", idx,
                      (long long)(ig->ok_col * k->bm));
  if (want_idx)
    emit(g, depth, "const %s %s = %s;", g->it, idx, flat.data);
  heron__buf_free(&flat);
}

/* Declares the K axes of A (ax_*) at the fused k index `gk` and returns
 * the guard of K's cut-short last chunk ("" when none) in cond. */
static void a_k_axes(gen *g, int depth, const char *gk, heron__buf *cond) {
  int need[HERON__MAX_AXES];
  reads(g->op, &g->op->in[0], need);
  for (int a = 0; a < g->op->naxes; a++)
    need[a] &= k_axis(g, a);
  heron__cuda_split_group(g, depth, HERON__GK, gk, need);
  const heron__gemm_group *gkg = &g->s->g[HERON__GK];
  heron__buf_puts(cond, "1");
  if (cover_of(&g->k, HERON__GK) != gkg->extent)
    heron__buf_printf(cond, " && %s < %lld", gk, (long long)gkg->extent);
}

/* The implicit-GEMM load of A's chunk (the body of codegen.c's emit_load
 * with igemm 1): at tile position (o, q), K index gk, into dst.  Vectors
 * within the index map's widest in igemm's K order (ig.a_vec) are copied
 * as before; wider ones (the checked interior vectors,
 * heron__cuda_igemm.vec_max) copy V halves at once where the first and the
 * last element pass their guards and the address is aligned, and element
 * by element elsewhere. */
void heron__cuda_emit_load_rows(gen *g, int d, int async) {
  const heron__cuda_operand *o = &g->s->op[0];
  const knobs *k = &g->k;
  int64_t v = k->vec[0];
  const char *row = o->k_inner ? "o" : "q";
  heron__buf cond = {0};
  a_k_axes(g, d, "gk", &cond);
  rows_index(g, d, row, "gi", 1, &cond);
  if (v == 1) {
    emit(g, d, "HERON_GLOAD1(dst, in0, gi, HERON_IN0_ELEMS, %s);", cond.data);
  } else if (v <= g->s->ig.a_vec && async) {
    emit(g, d, "HERON_CP_ASYNC(dst, in0, gi, %lld, HERON_IN0_ELEMS, %s);",
         (long long)v, cond.data);
  } else if (v <= g->s->ig.a_vec) {
    emit(g, d, "if (%s) {", cond.data);
    emit(g, d + 1, "HERON_GCOPY(dst, in0, gi, %lld, HERON_IN0_ELEMS);",
         (long long)v);
    emit(g, d, "} else {");
    emit(g, d + 1, "for (int z = 0; z < %lld; z++) dst[z] = HERON_F2H(0.0f);",
         (long long)v);
    emit(g, d, "}");
  } else {
    /* The guards of the vector's last element: the guarded coordinate
     * grows with the contiguous axis, so the elements between pass when
     * both ends do. */
    emit(g, d, "int interior = (%s) && gi %% %lld == 0;", cond.data,
         (long long)v);
    emit(g, d, "{ /* the vector's last element */");
    heron__buf last = {0};
    char lrow[48], lk[48];
    if (o->k_inner) {
      snprintf(lk, sizeof lk, "gk + %lld", (long long)(v - 1));
      emit(g, d + 1, "const %s gl = %s;", g->it, lk);
      a_k_axes(g, d + 1, "gl", &last);
      rows_index(g, d + 1, row, "gil", 0, &last);
    } else {
      snprintf(lrow, sizeof lrow, "q + %lld", (long long)(v - 1));
      heron__buf_puts(&last, "1");
      rows_index(g, d + 1, lrow, "gil", 0, &last);
    }
    emit(g, d + 1, "interior = interior && (%s);", last.data);
    heron__buf_free(&last);
    emit(g, d, "}");
    emit(g, d, "if (interior) {");
    if (async)
      emit(g, d + 1, "HERON_CP_ASYNC(dst, in0, gi, %lld, HERON_IN0_ELEMS, 1);",
           (long long)v);
    else
      emit(g, d + 1, "HERON_GCOPY(dst, in0, gi, %lld, HERON_IN0_ELEMS);",
           (long long)v);
    emit(g, d, "} else { /* an edge: element by element */");
    emit(g, d + 1, "for (int z = 0; z < %lld; z++) {", (long long)v);
    heron__buf ez = {0};
    if (o->k_inner) {
      emit(g, d + 2, "const %s gz = gk + z;", g->it);
      a_k_axes(g, d + 2, "gz", &ez);
      rows_index(g, d + 2, row, "giz", 1, &ez);
    } else {
      heron__buf_puts(&ez, "1");
      if (cover_of(k, HERON__GK) != g->s->g[HERON__GK].extent)
        heron__buf_printf(&ez, " && gk < %lld",
                          (long long)g->s->g[HERON__GK].extent);
      rows_index(g, d + 2, "q + z", "giz", 1, &ez);
    }
    emit(g, d + 2, "HERON_GLOAD1(dst + z, in0, giz, HERON_IN0_ELEMS, %s);",
         ez.data);
    heron__buf_free(&ez);
    emit(g, d + 1, "}");
    emit(g, d, "}");
  }
  heron__buf_free(&cond);
}
