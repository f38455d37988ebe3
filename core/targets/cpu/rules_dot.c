/* core/targets/cpu/rules_dot.c - the cpu rules of the int8 and bf16
 * dot-product micro-kernel (core/targets/cpu/dot.c): its variant from the
 * ISA flags, its vector axis and widths, and the rounding of the reduction
 * slice to whole groups.  The other rules are rules.c. */
#include <string.h>

#include "core/space/builder.h"
#include "core/targets/cpu/rules.h"

/* ---- int8 and bf16: the dot-product micro-kernel -------------------------
 */

/* The micro-kernel variant from the description's ISA flags (the
 * strongest it has) and the reduction steps one 32-bit lane sums. */
void heron__cpu_dot_setup(ctx *c) {
  const heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__hw *hw = &t->hw;
  s->dot = HERON__DOT_NONE;
  if (t->op.dtype == HERON__INT8)
    s->dot = hw->has_avx512 && hw->has_vnni     ? HERON__DOT_VNNI
             : hw->has_avx2 && hw->has_avx_vnni ? HERON__DOT_AVX_VNNI
             : hw->has_avx2                     ? HERON__DOT_I8_AVX2
                                                : HERON__DOT_SCALAR;
  else if (t->op.dtype == HERON__BF16)
    s->dot = hw->has_avx512 && hw->has_avx512_bf16 ? HERON__DOT_BF16
             : hw->has_avx2 && hw->has_fma         ? HERON__DOT_BF16_AVX2
                                                   : HERON__DOT_SCALAR;
  s->dot_group = t->op.dtype == HERON__INT8 && (s->dot == HERON__DOT_VNNI ||
                                                s->dot == HERON__DOT_AVX_VNNI ||
                                                s->dot == HERON__DOT_SCALAR)
                     ? 4
                     : 2;
  s->dot_act = t->op.act_input;
  s->dot_weight = 1 - t->op.act_input;
}

/* The vector axis of a dot-product kernel: the spatial axis (longer than
 * one) nearest to the output's last dimension that the weights read and
 * the activations do not, so that one broadcast activation group meets a
 * vector of weight groups (gemm's and bmm's j, gemv's i, a convolution's
 * output channels); -1 when the op has none. */
static int dot_vector_axis(const ctx *c) {
  const heron__op *op = &c->t->op;
  const heron__cpu_sched *s = c->s;
  if (op->ninputs != 2)
    return -1;
  for (int a = op->naxes - 1; a >= 0; a--)
    if (op->axes[a].kind == HERON__SPATIAL && op->axes[a].extent > 1 &&
        heron__tensor_reads(&op->in[s->dot_weight], a) &&
        !heron__tensor_reads(&op->in[s->dot_act], a))
      return a;
  return -1;
}

/* The error of an op without a vector axis for the dot-product kernels:
 * what they need, the axis that is too short (gemm's j when N = 1, a
 * convolution's co when CO = 1), and what to use instead: gemv for a gemm
 * with N = 1 and M > 1 (the same product, vectorized along M; in int8 its
 * matrix A is the s8 operand and x the u8 one), else fp32.  Short enough
 * for heron_error's 159 characters at ordinary shapes. */
static int no_vector_axis(const ctx *c, heron_error *err) {
  const heron__op *op = &c->t->op;
  const heron__cpu_sched *s = c->s;
  const char *what = "needs an output axis the weights read and the "
                     "activations do not, for its vectors";
  const char *dt = heron__dtype_name(op->dtype);
  int short_axis = -1;
  for (int a = op->naxes - 1; a >= 0 && short_axis < 0; a--)
    if (op->ninputs == 2 && op->axes[a].kind == HERON__SPATIAL &&
        heron__tensor_reads(&op->in[s->dot_weight], a) &&
        !heron__tensor_reads(&op->in[s->dot_act], a))
      short_axis = a;
  if (short_axis < 0)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "cpu template: %s %s %s, and it has none; use "
                           "--dtype fp32",
                           op->name, dt, what);
  const char *an = op->axes[short_axis].name;
  /* gemm's shape is M, N, K. */
  if (strcmp(op->name, "gemm") == 0 && op->nshape == 3 && op->shape[0] > 1)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "cpu template: %s %s %s: %s is 1; use --op gemv "
                           "--shape %lld,%lld%s",
                           op->name, dt, what, an, (long long)op->shape[0],
                           (long long)op->shape[2],
                           op->dtype == HERON__INT8 ? " (A s8, x u8)" : "");
  return heron_error_set(err, HERON_EUNSUPPORTED,
                         "cpu template: %s %s %s: %s is 1; use --dtype fp32",
                         op->name, dt, what, an);
}

/* Vectorize for a dot-product kernel: vec in {8, 16} (32-bit lanes of the
 * variant's registers, up to the axis' extent and within the padded-work
 * bound), with 1 (scalar code) only for short vector axes, dividing the
 * register-inner tile of the vector axis, as for fp32. */
void heron__cpu_rule_vectorize_dot(ctx *c) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__op *op = &t->op;
  int a = dot_vector_axis(c);
  s->vec_axis = a;
  if (a < 0) {
    s->vec = heron__r_const(&c->r, 1);
    if (!c->r.rc)
      c->r.rc = no_vector_axis(c, c->r.err);
    return;
  }
  int wide = s->dot == HERON__DOT_VNNI || s->dot == HERON__DOT_BF16;
  int64_t ext = op->axes[a].extent, cand[3];
  int pct = t->hw.max_padded_work_pct > 0 ? t->hw.max_padded_work_pct : 125;
  int n = 0;
  /* The kernels tensorize whenever the vector axis can hold a vector
   * within the padded-work bound (Heron's DL Boost template always does);
   * scalar code stays in the space only where vectors might not fit, or
   * where the vector axis alone cannot give every core a vector (the
   * parallel rule could then leave no valid config: gemv's 47 rows in
   * vectors of 8 on 8 cores). */
  int cores = t->hw.cores > 0 ? t->hw.cores : 1;
  int64_t ws[2];
  int nw = 0;
  for (int64_t w = 8; w <= (wide ? 16 : 8); w *= 2)
    if (s->dot != HERON__DOT_SCALAR && ext >= w &&
        (ext + w - 1) / w * w * 100 <= ext * pct)
      ws[nw++] = w;
  if (nw == 0 || ext < ws[0] * cores)
    cand[n++] = 1;
  for (int i = 0; i < nw; i++)
    cand[n++] = ws[i];
  s->vec = heron__r_set(&c->r, "vec", 1, cand, n);
  int q = heron__r_range(&c->r, "vec.q", 0, 1, op->axes[a].extent);
  c->vec_q = q;
  heron__r_post(&c->r, HERON_C_PROD, s->tile[a][3], (int[]){s->vec, q}, 2, NULL,
                0, "vec divides the register-inner tile");
  heron__rule_note_add(
      t->rules, &t->nrules, "Vectorize",
      "register-inner loop of %s (read by the weights %s, not by the "
      "activations %s), vec in {%lld%s%s} 32-bit lanes dividing %s.t3",
      op->axes[a].name, op->in[s->dot_weight].name, op->in[s->dot_act].name,
      (long long)cand[0], n > 1 ? (cand[1] == 8 ? ", 8" : ", 16") : "",
      n > 2 ? ", 16" : "", op->axes[a].name);
}

/* The reduction slice of a dot-product kernel is packed rounded up to whole
 * groups of G steps, the rounding zero-filled: a slice of 1 step would do
 * 4 times the work in int8.  Like the padded-work rule for the spatial
 * tiles, the rounded slice may exceed the real one by at most a quarter:
 *
 *   k.slice = product of every reduction t1,
 *   G * k.groups >= k.slice,  G * k.groups <= k.slice + G - 1,
 *   4 * G * k.groups <= 5 * k.slice,
 *
 * which keeps slices that are multiples of G (and long ones) and drops
 * short odd ones (1, 2, 3, 5, 6, 7 in int8's groups of 4). */
void heron__cpu_rule_dot_groups(ctx *c) {
  heron__template *t = c->t;
  heron__cpu_sched *s = c->s;
  const heron__op *op = &t->op;
  int xs[HERON__MAX_AXES], n = 0;
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == HERON__REDUCE && s->has_knobs[a])
      xs[n++] = s->tile[a][1];
  if (n == 0 || c->r.rc)
    return;
  int64_t G = s->dot_group;
  int slice = heron__r_prod(&c->r, "k.slice", xs, n);
  int64_t ub = heron__r_ub(&c->r, slice);
  int groups = heron__r_range(&c->r, "k.groups", 0, 1, (ub + G - 1) / G);
  int rounded = heron__r_prod(&c->r, "k.rounded",
                              (int[]){heron__r_const(&c->r, G), groups}, 2);
  heron__r_post(&c->r, HERON_C_LE, slice, &rounded, 1, NULL, 0,
                "k.slice <= k.rounded");
  int most = heron__r_sum(&c->r, "k.slice+G-1",
                          (int[]){slice, heron__r_const(&c->r, G - 1)}, 2);
  heron__r_post(&c->r, HERON_C_LE, rounded, &most, 1, NULL, 0,
                "k.rounded <= k.slice + G - 1");
  int four = heron__r_prod(&c->r, "4*k.rounded",
                           (int[]){heron__r_const(&c->r, 4), rounded}, 2);
  int five = heron__r_prod(&c->r, "5*k.slice",
                           (int[]){heron__r_const(&c->r, 5), slice}, 2);
  heron__r_post(&c->r, HERON_C_LE, four, &five, 1, NULL, 0,
                "rounded slice <= 125% of the slice");
  heron__rule_note_add(
      t->rules, &t->nrules, "Tensorize",
      "reduction slice packed in whole groups of %lld (zero-filled): "
      "k.rounded = %lld * ceil(k.slice / %lld) <= 125%% of k.slice",
      (long long)G, (long long)G, (long long)G);
}
