/* core/targets/cpu/dot_prepack.c - weights packed ahead of the calls in
 * the int8 and bf16 generator: heron_prepacked_elems and heron_prepack,
 * and the offset of a block in the packed copy. */
#include "core/targets/cpu/dot.h"

/* ---- weights packed ahead of the calls (prepack) ------------------------
 * The copy is the weight packs of every thread tile and reduction-outer
 * step end to end, numbered by the level-0 loops of the live spatial axes
 * the weights read (op order) and then the live reduction-outer loops,
 * each only when longer than 1 (thread tiles that differ only along axes
 * the weights do not read share their block).  Elements are the weights'
 * own type (s8 for int8, bf16 bits for bf16). */

/* The axes numbering the blocks, outermost first; their count. */
static int prepack_loops(const dgen *g, int *axis) {
  const heron__op *op = g->op;
  int n = 0;
  for (int k = 0; k < 2; k++)
    for (int a = 0; a < op->naxes; a++) {
      int spatial = op->axes[a].kind == HERON__SPATIAL;
      if (spatial != (k == 0) || !live(g, a) || g->len[a][0] <= 1 ||
          (spatial && !heron__tensor_reads(&op->in[g->wt], a)))
        continue;
      axis[n++] = a;
    }
  return n;
}

/* Elements of one block: the weight pack of one tile and step. */
static int64_t weight_block(const dgen *g) {
  return g->pw_pts * g->rip * g->tv;
}

/* Elements of the whole copy. */
static int64_t prepacked_elems(const dgen *g) {
  int axis[HERON__MAX_AXES];
  int n = prepack_loops(g, axis);
  int64_t e = weight_block(g);
  for (int i = 0; i < n; i++)
    e *= g->len[axis[i]][0];
  return e;
}

/* " + ((o_co / 32) * 6 + ci_0) * 4608": the offset of the current block in
 * the copy, from the kernel's tile origins o_<a> (a multiple of the
 * thread tile) and reduction-outer indices <r>_0; nothing with one block. */
void heron__cpu_dot_prepacked_offset_text(const dgen *g, heron__buf *b) {
  int axis[HERON__MAX_AXES];
  int n = prepack_loops(g, axis);
  if (!n)
    return;
  const heron__op *op = g->op;
  heron__buf_puts(b, " + ");
  for (int i = 1; i < n; i++)
    heron__buf_puts(b, "(");
  for (int i = 0; i < n; i++) {
    int a = axis[i];
    heron__buf idx = {0};
    if (op->axes[a].kind == HERON__SPATIAL)
      heron__buf_printf(&idx, "o_%s / %lld", op->axes[a].name,
                        (long long)g->thr[a]);
    else
      heron__buf_printf(&idx, "%s_0", op->axes[a].name);
    if (i == 0)
      heron__buf_printf(b, "(%s)", idx.data);
    else
      heron__buf_printf(b, " * %lld + (%s))", (long long)g->len[a][0],
                        idx.data);
    heron__buf_free(&idx);
  }
  heron__buf_printf(b, " * %lld", (long long)weight_block(g));
}

/* heron_prepacked_elems and heron_prepack, after the kernel, when the
 * weights are prepacked: the kernel's own weight pack, run for every block
 * with the tile origins and reduction bases it would have had. */
void heron__cpu_dot_emit_prepack(dgen *g) {
  if (!g->prepacked)
    return;
  const heron__op *op = g->op;
  const char *wt = ctype(op, g->wt);
  heron__buf_printf(
      g->o,
      "\n/* The weights packed once, ahead of the calls (prepack): "
      "heron_kernel\n"
      " * takes input %d as heron_prepack(%d, %s, copy) left it, in a "
      "buffer of\n"
      " * heron_prepacked_elems(%d) elements of its own type (%s); 0 for "
      "an\n"
      " * input taken as it is. */\n"
      "int64_t heron_prepacked_elems(int input);\n"
      "int64_t heron_prepacked_elems(int input) {\n"
      "  return input == %d ? %lldLL : 0;\n}\n\n"
      "void heron_prepack(int input, const void *src, void *dst);\n"
      "void heron_prepack(int input, const void *src, void *dst) {\n"
      "  if (input != %d)\n    return;\n"
      "  const %s *restrict t_%s = (const %s *)src;\n",
      g->wt, g->wt, op->in[g->wt].name, g->wt, wt, g->wt,
      (long long)prepacked_elems(g), g->wt, wt, op->in[g->wt].name, wt);
  int axis[HERON__MAX_AXES];
  int n = prepack_loops(g, axis);
  int d = 1;
  for (int i = 0; i < n; i++) {
    const char *an = op->axes[axis[i]].name;
    ind(g, d++);
    heron__buf_printf(g->o, "for (int64_t %s_0 = 0; %s_0 < %lld; %s_0++) {\n",
                      an, an, (long long)g->len[axis[i]][0], an);
  }
  /* The origins and bases the pack reads: from the loop index where the
   * axis has level-0 steps, else 0. */
  for (int a = 0; a < op->naxes; a++) {
    if (!live(g, a))
      continue;
    const char *an = op->axes[a].name;
    int more = g->len[a][0] > 1;
    if (op->axes[a].kind == HERON__SPATIAL) {
      if (!heron__tensor_reads(&op->in[g->wt], a))
        continue;
      ind(g, d);
      if (more)
        heron__buf_printf(g->o, "const int64_t o_%s = %s_0 * %lld;\n", an, an,
                          (long long)g->thr[a]);
      else
        heron__buf_printf(g->o, "const int64_t o_%s = 0;\n", an);
    } else {
      ind(g, d);
      if (more)
        heron__buf_printf(g->o, "const int64_t b_%s = %s_0 * %lld;\n", an, an,
                          (long long)g->len[a][1]);
      else
        heron__buf_printf(g->o, "const int64_t b_%s = 0;\n", an);
    }
  }
  /* The block offset from the same o_<a> / <r>_0 the kernel uses. */
  heron__buf off = {0};
  heron__cpu_dot_prepacked_offset_text(g, &off);
  ind(g, d);
  heron__buf_printf(g->o, "%s *h_pw = (%s *)dst%s;\n", wt, wt,
                    off.data ? off.data : "");
  heron__buf_free(&off);
  heron__cpu_dot_emit_pack_weight(g, d);
  for (int i = n - 1; i >= 0; i--) {
    ind(g, --d);
    heron__buf_puts(g->o, "}\n");
  }
  heron__buf_puts(g->o, "}\n");
}
