/* core/targets/cpu/codegen_prepack.c - inputs packed ahead of the calls
 * in the cpu generator: heron_prepacked_elems and heron_prepack, and the
 * offset of a block in the packed copy. */
#include "core/targets/cpu/codegen.h"

/* ---- inputs packed ahead of the calls (prepack) -------------------------
 *
 * A prepacked input's whole packed copy is the per-call packs of every
 * thread tile and reduction-outer step laid end to end:
 *
 *   [level-0 index of each spatial axis it reads] [reduction-outer step]
 *   [the pack block the kernel would have made there]
 *
 * heron_prepack writes it once with the kernel's own pack loops; the
 * kernel points h_pk<ti> at the block of its tile and step. */

/* The loops numbering input ti's blocks, outermost first: the level-0
 * loops of the spatial axes it reads, then the reduction-outer loops
 * (only those longer than 1).  Their count. */
static int prepack_loops(const gen *g, int ti, int *axis) {
  const heron__op *op = g->op;
  int n = 0;
  for (int k = 0; k < 2; k++)
    for (int a = 0; a < op->naxes; a++) {
      int spatial = op->axes[a].kind == HERON__SPATIAL;
      if (spatial != (k == 0) || g->len[a][0] <= 1 ||
          (spatial && !heron__tensor_reads(tensor_at(g, ti), a)))
        continue;
      axis[n++] = a;
    }
  return n;
}

/* Floats in one pack block of input ti: the block loops' tiles times the
 * reduction-inner steps times the register tile's points. */
static int64_t pack_block(const gen *g, int ti) {
  int axis[2 * HERON__MAX_AXES], level[2 * HERON__MAX_AXES];
  int nb = heron__cpu_block_loops(g, ti, axis, level);
  int64_t n = g->ki * g->rp[ti];
  for (int i = 0; i < nb; i++)
    n *= g->len[axis[i]][level[i]];
  return n;
}

/* Floats in input ti's whole packed copy. */
static int64_t prepacked_elems(const gen *g, int ti) {
  int axis[2 * HERON__MAX_AXES];
  int n = prepack_loops(g, ti, axis);
  int64_t e = pack_block(g, ti);
  for (int i = 0; i < n; i++)
    e *= g->len[axis[i]][0];
  return e;
}

/* " + (co_0 * 6 + ci_0) * 73728": the offset of the current block in input
 * ti's packed copy (nothing when it has one block). */
void heron__cpu_prepacked_offset_text(const gen *g, int ti, heron__buf *b) {
  int axis[2 * HERON__MAX_AXES];
  int n = prepack_loops(g, ti, axis);
  if (!n)
    return;
  /* Horner's rule, outermost loop first: ((a_0 * L + b_0) * M + c_0). */
  heron__buf_puts(b, " + ");
  for (int i = 1; i < n; i++)
    heron__buf_puts(b, "(");
  for (int i = 0; i < n; i++) {
    const char *nm = g->op->axes[axis[i]].name;
    if (i == 0)
      heron__buf_printf(b, "%s_0", nm);
    else
      heron__buf_printf(b, " * %lld + %s_0)", (long long)g->len[axis[i]][0],
                        nm);
  }
  heron__buf_printf(b, " * %lld", (long long)pack_block(g, ti));
}

/* heron_prepacked_elems and heron_prepack, after the kernel, when some
 * input is prepacked. */
void heron__cpu_emit_prepack(gen *g) {
  if (!any_prepacked(g))
    return;
  const heron__op *op = g->op;
  heron__buf_puts(g->o,
                  "\n/* Inputs packed once, ahead of the calls (prepack): "
                  "heron_kernel takes\n"
                  " * input i as heron_prepack(i, input, copy) left it, in a "
                  "buffer of\n"
                  " * heron_prepacked_elems(i) floats; 0 for an input taken "
                  "as it is. */\n"
                  "int64_t heron_prepacked_elems(int input);\n"
                  "int64_t heron_prepacked_elems(int input) {\n"
                  "  switch (input) {\n");
  for (int ti = 0; ti < op->ninputs; ti++)
    if (g->prepacked[ti])
      heron__buf_printf(g->o, "  case %d:\n    return %lldLL;\n", ti,
                        (long long)prepacked_elems(g, ti));
  heron__buf_puts(g->o, "  default:\n    return 0;\n  }\n}\n\n"
                        "void heron_prepack(int input, const void *src, "
                        "void *dst);\n"
                        "void heron_prepack(int input, const void *src, "
                        "void *dst) {\n");
  for (int ti = 0; ti < op->ninputs; ti++) {
    if (!g->prepacked[ti])
      continue;
    const char *nm = op->in[ti].name;
    heron__buf_printf(g->o,
                      "  if (input == %d) {\n"
                      "    const float *restrict %s = (const float *)src;\n"
                      "    float *restrict h_dst = (float *)dst;\n",
                      ti, nm);
    int axis[2 * HERON__MAX_AXES];
    int n = prepack_loops(g, ti, axis);
    int d = 2;
    for (int i = 0; i < n; i++) {
      const char *an = op->axes[axis[i]].name;
      indent(g, d++);
      heron__buf_printf(g->o, "for (int64_t %s_0 = 0; %s_0 < %lld; %s_0++) {\n",
                        an, an, (long long)g->len[axis[i]][0], an);
    }
    heron__buf b = {0};
    heron__buf_puts(&b, "h_dst");
    heron__cpu_prepacked_offset_text(g, ti, &b);
    heron__cpu_emit_pack(g, ti, d, b.data ? b.data : "h_dst");
    heron__buf_free(&b);
    for (int i = n - 1; i >= 0; i--) {
      indent(g, --d);
      heron__buf_puts(g->o, "}\n");
    }
    heron__buf_puts(g->o, "  }\n");
  }
  heron__buf_puts(g->o, "}\n");
}
