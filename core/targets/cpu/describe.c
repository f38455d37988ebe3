/* core/targets/cpu/describe.c - the cpu template as text (heron-space
 * --describe): the rules applied, the stages and the loop nest with the
 * knob names in place of numbers.  The knobs and constraints that follow
 * are the same for every target (core/sched/template.c). */
#include <stdarg.h>

#include "core/targets/cpu/cpu.h"
#include "core/targets/cpu/template.h"

/* Appends an affine index as text: "2*oh + kh - 1". */
static void affine_text(const heron__op *op, const heron__affine *ix,
                        heron__buf *out) {
  int any = 0;
  for (int a = 0; a < op->naxes; a++) {
    int64_t k = ix->coef[a];
    if (k == 0)
      continue;
    const char *sign = k < 0 ? (any ? " - " : "-") : (any ? " + " : "");
    int64_t m = k < 0 ? -k : k;
    if (m == 1)
      heron__buf_printf(out, "%s%s", sign, op->axes[a].name);
    else
      heron__buf_printf(out, "%s%lld*%s", sign, (long long)m, op->axes[a].name);
    any = 1;
  }
  if (!any)
    heron__buf_printf(out, "%lld", (long long)ix->offset);
  else if (ix->offset)
    heron__buf_printf(out, " %c %lld", ix->offset < 0 ? '-' : '+',
                      (long long)(ix->offset < 0 ? -ix->offset : ix->offset));
}

static void tensor_text(const heron__op *op, const heron__tensor *ts,
                        heron__buf *out) {
  heron__buf_printf(out, "%s[", ts->name);
  for (int d = 0; d < ts->ndim; d++) {
    if (d)
      heron__buf_puts(out, ", ");
    affine_text(op, &ts->index[d], out);
  }
  heron__buf_puts(out, "]");
}

/* Appends "  " * depth, then the formatted line. */
static void line(heron__buf *out, int depth, const char *fmt, ...)
    HERON_PRINTF(3, 4);
static void line(heron__buf *out, int depth, const char *fmt, ...) {
  for (int i = 0; i < depth; i++)
    heron__buf_puts(out, "  ");
  va_list ap;
  va_start(ap, fmt);
  heron__buf_vprintf(out, fmt, ap);
  va_end(ap);
  heron__buf_puts(out, "\n");
}

/* One loop line per level for the axes of a kind, e.g.
 * "for i.1 < i.t1, j.1 < j.t1". */
static void loop_line(const heron__template *t, heron__buf *out, int depth,
                      int kind, int level, const char *what) {
  const heron__op *op = &t->op;
  const heron__cpu_sched *s = heron__cpu_sched_of(t);
  heron__buf b = {0};
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != kind || !s->has_knobs[a])
      continue;
    heron__buf_printf(&b, "%s%s.%d < %s.t%d", b.len ? ", " : "",
                      op->axes[a].name, level, op->axes[a].name, level);
  }
  if (b.len)
    line(out, depth, "for %s%s", b.data, what);
  heron__buf_free(&b);
}

void heron__cpu_describe(const heron__template *t, heron__buf *out) {
  const heron__op *op = &t->op;
  const heron__cpu_sched *s = heron__cpu_sched_of(t);
  heron__buf_printf(out, "cpu template for %s (fp32) on %s\n", op->name,
                    t->hw.name[0] ? t->hw.name : "this machine");
  heron__buf_puts(out, "axes:");
  for (int a = 0; a < op->naxes; a++)
    heron__buf_printf(
        out, " %s=%lld (%s)", op->axes[a].name, (long long)op->axes[a].extent,
        op->axes[a].kind == HERON__SPATIAL ? "spatial" : "reduction");
  heron__buf_puts(out, "\nrules:\n");
  for (int i = 0; i < t->nrules; i++)
    line(out, 1, "%s: %s", t->rules[i].name, t->rules[i].note);

  heron__buf_printf(out,
                    "stages:\n  %s (reduction, compute)\n"
                    "  %s.local (cache_write accumulator, compute-at "
                    "acc_at)\n",
                    op->out.name, op->out.name);
  heron__buf_puts(out, "loop nest:\n");
  int d = 1;
  line(out, d++,
       "parallel for f < fused  (splits into every spatial x.0; x.t0 = "
       "ceil(extent / tile), packs zero-filled past the edges)");
  loop_line(t, out, d++, HERON__REDUCE, 0, "  (reduction outer)");
  for (int i = 0; i < op->ninputs; i++)
    if (op->prepack >> i & 1u)
      line(out, d,
           "%s.pack = the block of this tile and slice in the copy of %s "
           "heron_prepack made once, ahead of the calls  (prepack; only "
           "when %s.pack == 1)",
           op->in[i].name, op->in[i].name, op->in[i].name);
    else
      line(out, d,
           "%s.pack = the thread's tile of %s x reduction slice  (only when "
           "%s.pack == 1)",
           op->in[i].name, op->in[i].name, op->in[i].name);
  if (s->region >= 0)
    line(out, d,
         "%s.region = the part of %s the thread's tile and the reduction "
         "slice read, each element once, channels innermost  (only when "
         "%s.region == 1)",
         op->in[op->act_input].name, op->in[op->act_input].name,
         op->in[op->act_input].name);
  loop_line(t, out, d++, HERON__SPATIAL, 1, "  (cache tiles)");
  loop_line(t, out, d++, HERON__SPATIAL, 2,
            "  (register outer; only when "
            "acc_at == 0)");
  line(out, d,
       "(a register tile past an extent is skipped; one across an edge runs "
       "the edge copy: guarded loads of unpacked inputs, stores inside the "
       "extents)");
  line(out, d, "%s.local = 0  (the t3 tile, or t2*t3 when acc_at == 1)",
       op->out.name);
  loop_line(t, out, d++, HERON__REDUCE, 1,
            "  (#pragma GCC unroll max(1, 4*unroll); the last slice stops at "
            "the extent)");
  heron__buf b = {0};
  heron__buf_printf(&b, "%s.local += ", op->out.name);
  for (int i = 0; i < op->ninputs; i++) {
    if (i)
      heron__buf_puts(&b, " * ");
    tensor_text(op, &op->in[i], &b);
  }
  if (s->vec_axis >= 0)
    heron__buf_printf(&b, "  (fully unrolled, vec lanes along %s)",
                      op->axes[s->vec_axis].name);
  line(out, d, "%s", b.data ? b.data : "");
  if (!s->vec_reduce)
    line(out, d,
         "prefetch what each load reads `prefetch` steps of the innermost "
         "reduction loop ahead  (0: none)");
  d--;
  heron__buf_free(&b);
  tensor_text(op, &op->out, &b);
  line(out, d, "%s = (first reduction-outer step ? 0 : %s) + %s.local",
       b.data ? b.data : "", b.data ? b.data : "", op->out.name);
  if (s->stage >= 0)
    line(out, d,
         "(%s.stage == 1: the steps before the last keep %s.local's sums in "
         "a per-thread buffer of the thread's output tile, as vectors; the "
         "last adds them and writes %s once)",
         op->out.name, op->out.name, op->out.name);
  if (s->transpose >= 0)
    line(out, d,
         "(%s.transpose == 1: every vec accumulators consecutive along %s "
         "transposed in registers, each channel's lanes stored as one "
         "vector; the edge tiles lane by lane)",
         op->out.name, op->axes[s->tr_axis].name);
  if (op->epilogue)
    line(out, d,
         "%s = %s%s%s%s  (Always-Inline epilogue, last reduction-outer "
         "step)",
         b.data ? b.data : "", op->epilogue & HERON__EPI_RELU ? "relu(" : "",
         b.data ? b.data : "",
         op->epilogue & HERON__EPI_BIAS ? " + bias[channel]" : "",
         op->epilogue & HERON__EPI_RELU ? ")" : "");
  heron__buf_free(&b);
}
