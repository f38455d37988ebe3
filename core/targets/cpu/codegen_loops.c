/* core/targets/cpu/codegen_loops.c - the loop nest of the cpu generator:
 * the loops of one tiling level, the register tile's origin from the
 * levels outside it, and the reduction indices and bounds. */
#include "core/targets/cpu/codegen.h"

/* ---- the loop nest --------------------------------------------------------
 */

/* Opens the loops of one level for the axes of `kind` (lengths > 1 only);
 * returns how many were opened. */
int heron__cpu_open_loops(gen *g, int kind, int level, int depth, int pragma) {
  const heron__op *op = g->op;
  int opened = 0, last = -1;
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == kind && g->len[a][level] > 1)
      last = a;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != kind || g->len[a][level] <= 1)
      continue;
    if (pragma && a == last) {
      indent(g, depth + opened);
      heron__buf_printf(g->o, "#pragma GCC unroll %d\n", pragma);
    }
    indent(g, depth + opened);
    const char *nm = op->axes[a].name;
    if (kind == HERON__REDUCE && level == 1 && g->bound_reduce && g->ragged[a])
      /* What is left of the extent in this slice (heron__cpu_reduce_bounds). */
      heron__buf_printf(g->o, "for (int64_t %s_1 = 0; %s_1 < %s_n; %s_1++) {\n",
                        nm, nm, nm, nm);
    else
      heron__buf_printf(
          g->o, "for (int64_t %s_%d = 0; %s_%d < %lld; %s_%d++) {\n", nm, level,
          nm, level, (long long)g->len[a][level], nm, level);
    opened++;
  }
  return opened;
}

void heron__cpu_close_loops(gen *g, int n, int depth) {
  for (int i = n - 1; i >= 0; i--) {
    indent(g, depth + i);
    heron__buf_puts(g->o, "}\n");
  }
}

/* "i_0 * 512 + i_1 * 64": the origin of axis a's register tile, from the
 * loop indices of the levels from `from` up to the register tile's
 * (nothing when none moves it). */
void heron__cpu_origin_text_from(const gen *g, int a, int from, heron__buf *b) {
  size_t start = b->len;
  for (int l = from; l < g->reg_from; l++) {
    if (g->len[a][l] <= 1)
      continue;
    int64_t stride = 1;
    for (int m = l + 1; m < HERON__CPU_SPATIAL_LEVELS; m++)
      stride *= g->len[a][m];
    heron__buf_printf(b, "%s%s_%d", b->len > start ? " + " : "",
                      g->op->axes[a].name, l);
    if (stride > 1)
      heron__buf_printf(b, " * %lld", (long long)stride);
  }
}

void heron__cpu_origin_text(const gen *g, int a, heron__buf *b) {
  size_t start = b->len;
  heron__cpu_origin_text_from(g, a, 0, b);
  if (b->len == start)
    heron__buf_puts(b, "0");
}

void heron__cpu_tile_origin(gen *g, int a, int depth) {
  heron__buf b = {0};
  heron__cpu_origin_text(g, a, &b);
  indent(g, depth);
  heron__buf_printf(g->o, "const int64_t %s_b = %s;\n", g->op->axes[a].name,
                    b.data);
  heron__buf_free(&b);
}

/* The full index of every reduction axis inside the reduction-inner
 * loops. */
void heron__cpu_reduce_indices(gen *g, int depth) {
  const heron__op *op = g->op;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__REDUCE || op->axes[a].extent == 1)
      continue;
    const char *n = op->axes[a].name;
    int64_t inner = g->len[a][1];
    indent(g, depth);
    if (g->len[a][0] > 1 && inner > 1)
      heron__buf_printf(g->o, "const int64_t %s = %s_0 * %lld + %s_1;\n", n, n,
                        (long long)inner, n);
    else if (g->len[a][0] > 1)
      heron__buf_printf(g->o, "const int64_t %s = %s_0;\n", n, n);
    else
      heron__buf_printf(g->o, "const int64_t %s = %s_1;\n", n, n);
  }
}

/* In the reduction-outer loops: <r>_n, the steps of a ragged reduction
 * axis' slice that lie inside its extent (all but the last slice's are
 * full). */
void heron__cpu_reduce_bounds(gen *g, int depth) {
  const heron__op *op = g->op;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != HERON__REDUCE || !g->ragged[a])
      continue;
    const char *n = op->axes[a].name;
    int64_t inner = g->len[a][1], outer = g->len[a][0];
    int64_t last = op->axes[a].extent - (outer - 1) * inner;
    indent(g, depth);
    if (outer > 1)
      heron__buf_printf(
          g->o, "const int64_t %s_n = %s_0 < %lld ? %lld : %lld;\n", n, n,
          (long long)(outer - 1), (long long)inner, (long long)last);
    else
      heron__buf_printf(g->o, "const int64_t %s_n = %lld;\n", n,
                        (long long)last);
  }
}
