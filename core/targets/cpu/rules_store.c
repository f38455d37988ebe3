/* core/targets/cpu/rules_store.c - the rule of the fp32 template's
 * transposed output store (the knob <out>.transpose): where a convolution
 * vectorized along its channels writes an NCHW output, its accumulators
 * transposed in registers so that each channel's lanes are one contiguous
 * vector store.  The rest of the template's rules are rules.c. */
#include <stdio.h>

#include "core/space/builder.h"
#include "core/targets/cpu/rules.h"

/* The knob <out>.transpose: a convolution vectorized along its output
 * channels in NCHW stores each accumulator vector lane by lane, a plane
 * apart (a spill and vec scalar stores), which costs as much as the
 * multiply-adds where the reduction is short (a stem's 3 input channels
 * under a 3x3 window: 27 multiply-adds per accumulator against 16 scalar
 * stores).  With the knob, every vec accumulators of the register tile
 * that lie consecutive along the output's contiguous axis (the output
 * width) are transposed in registers at the store (unpacks and shuffles),
 * so each channel's vec outputs go out as one contiguous vector; a tile
 * whose extent along the width is no multiple of vec ends with a group of
 * fewer, zeros in the missing vectors, its rows stored under a mask.  It
 * exists where the output's lanes lie a stride apart and its last
 * dimension is a spatial axis read alone (heron__cpu_contiguous_axis) with
 * knobs, and with the ISA's own vectors (AVX2 or AVX-512); the constraint:
 * on only at vec 8 or 16 (lanes = transpose ? 8 : 1 <= vec; a SELECT, as a
 * product with the 0/1 knob would not propagate).  Absent value 0, so configs
 * recorded before the knob are the kernels they measured. */
void heron__cpu_rule_transpose(ctx *c) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__op *op = &t->op;
  s->transpose = s->tr_axis = -1;
  int a = heron__cpu_contiguous_axis(op);
  if (s->dot || s->vec_reduce || s->vec_axis < 0 || s->fma_isa < 256 || a < 0 ||
      a == s->vec_axis || !s->has_knobs[a] ||
      heron__cpu_reads_contiguously(op, &op->out, s->vec_axis) || c->r.rc) {
    heron__rule_note_add(t->rules, &t->nrules, "Transpose-Store",
                         "not applicable: the output's lanes are contiguous, "
                         "or it has no contiguous axis to store along, or "
                         "no vector ISA");
    return;
  }
  char name[48];
  snprintf(name, sizeof name, "%s.transpose", op->out.name);
  s->transpose = heron__r_range(&c->r, name, 1, 0, 1);
  s->tr_axis = a;
  if (s->transpose >= 0 &&
      heron__space_var_absent(c->r.sp, s->transpose, 0) != HERON_OK && !c->r.rc)
    c->r.rc = heron_error_set(c->r.err, HERON_EINVAL,
                              "cpu template: cannot declare %s's absent "
                              "value",
                              name);
  const char *an = op->axes[a].name;
  snprintf(name, sizeof name, "%s.transpose.lanes", op->out.name);
  int lanes = heron__r_range(&c->r, name, 0, 1, 8);
  heron__r_post(
      &c->r, HERON_C_SELECT, lanes,
      (int[]){s->transpose, heron__r_const(&c->r, 1), heron__r_const(&c->r, 8)},
      3, NULL, 0, name);
  heron__r_post(&c->r, HERON_C_LE, lanes, &s->vec, 1, NULL, 0,
                "a transposed store only at vec 8 or 16");
  heron__rule_note_add(
      t->rules, &t->nrules, "Transpose-Store",
      "%s.transpose in {0, 1}: every vec accumulators consecutive along %s "
      "(fewer at the register tile's end) transposed in registers at the "
      "store, the outputs of each lane one contiguous (masked) vector store "
      "(vec 8 or 16; edge tiles lane by lane); old logs read as 0",
      op->out.name, an);
}
