/* core/sched/template.c - building, describing and freeing schedule
 * templates: the target / dtype dispatch in front of the per-target rules.
 *
 * Only the cpu target with fp32 tensors has rules so far; every other
 * combination is refused with HERON_EUNSUPPORTED and a message naming what
 * is supported, so a task for the cuda target fails at creation instead of
 * producing a space whose configs nothing can build.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/codegen/cuda_template.h"
#include "core/space/builder.h"
#include "core/target/amx/amx_template.h"

typedef int (*rules_fn)(heron__template *t, heron_space *sp, heron_error *err);

/* Makes a template and a space, lets the target's rules fill them, and
 * freezes the space. */
static int build_with(rules_fn apply, int elem_bytes, const heron__op *op,
                      const heron__hw *hw, heron__template **tmpl,
                      heron_space **space, heron_error *err) {
  heron__template *t = calloc(1, sizeof *t);
  heron_space *sp = heron__space_new();
  if (!t || !sp) {
    free(t);
    heron__space_free(sp);
    return heron_error_set(err, HERON_ENOMEM, "template: out of memory");
  }
  t->op = *op;
  t->hw = *hw;
  t->elem_bytes = elem_bytes;
  t->vec_axis = -1;
  int rc = apply(t, sp, err);
  if (rc == HERON_OK)
    rc = heron__space_finish(sp, err);
  if (rc != HERON_OK) {
    heron__template_free(t);
    heron__space_free(sp);
    return rc;
  }
  *tmpl = t;
  *space = sp;
  return HERON_OK;
}

int heron__template_build(const heron__op *op, const heron__hw *hw,
                          const char *target, heron__template **tmpl,
                          heron_space **space, heron_error *err) {
  if (!op || !hw || !tmpl || !space)
    return heron_error_set(err, HERON_EINVAL, "template: NULL argument");
  *tmpl = NULL;
  *space = NULL;
  if (!target)
    target = "cpu";
  /* The Tensor Core template (core/sched/cuda_rules.c) checks its own
   * preconditions (two inputs, fp16). */
  if (!strcmp(target, "cuda"))
    return build_with(heron__cuda_rules_apply, 2, op, hw, tmpl, space, err);
  if (!strcmp(target, "amx"))
    return build_with(heron__amx_rules_apply, 1, op, hw, tmpl, space, err);
  if (strcmp(target, "cpu") != 0)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "target '%s' has no schedule rules (supported: "
                           "cpu, cuda, amx)",
                           target);
  if (op->dtype != HERON__FP32 || op->out_dtype != HERON__FP32)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "the cpu template supports fp32 only, not %s",
                           heron__dtype_name(op->dtype));
  if (op->out.bounded)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "the cpu template needs an output indexed inside "
                           "its bounds (op %s)",
                           op->name);
  if (op->ninputs < 1 || op->ninputs > HERON__MAX_TENSORS)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "the cpu template needs 1..%d inputs, op %s has %d",
                           HERON__MAX_TENSORS, op->name, op->ninputs);
  return build_with(heron__cpu_rules_apply, 4, op, hw, tmpl, space, err);
}

void heron__template_free(heron__template *t) {
  if (t)
    free(t->cuda);
  if (t)
    free(t->amx);
  free(t);
}

/* The cpu template's flags, one static string per instruction-set case.
 * -march=native tunes for the building machine, and the -m flags after it
 * follow the hardware description, not that machine: an AVX-512
 * description enables the _mm512 and _mm256 FMA intrinsics the micro-kernel
 * emits (so its kernels compile on any x86 machine, and run where
 * heron__hw_cpu_lacks finds nothing missing); a description without
 * AVX-512 (or AVX2, or FMA) forbids them, so an AVX2 description yields
 * AVX2 code even on an AVX-512 machine, as on the AVX2 CPU it describes.
 * GCC's -mno-avx512f also clears every AVX-512 extension, -mno-avx2 clears
 * AVX-512 too.
 *
 * -fno-predictive-commoning: the windows of neighbouring output points of a
 * convolution overlap (column p's input at kernel column kw + 1 is column
 * p + 1's at kw, stride 1), and GCC's predictive commoning keeps such
 * values in registers from one reduction step to the next; with a register
 * tile that already fills the registers (12 accumulators of AVX2's 16) the
 * accumulators then spill.  The AVX2 stem's 2 x 6 tile ran at 68 GFLOP/s
 * with it and 95 without; the tuned kernels of GEMM, BMM, GEMV and the
 * convolutions were within 5% either way (Zen 4). */
#define CPU_CFLAGS(isa)                                                        \
  "-O3 -fno-predictive-commoning -march=native " isa " -fopenmp -fPIC -shared"

static const char *cpu_cflags(const heron__hw *hw) {
  if (hw->has_avx512)
    return CPU_CFLAGS("-mavx512f -mavx2 -mfma");
  if (hw->has_avx2)
    return hw->has_fma ? CPU_CFLAGS("-mno-avx512f -mavx2 -mfma")
                       : CPU_CFLAGS("-mno-avx512f -mavx2 -mno-fma");
  return hw->has_fma ? CPU_CFLAGS("-mno-avx512f -mno-avx2 -mfma")
                     : CPU_CFLAGS("-mno-avx512f -mno-avx2 -mno-fma");
}

const char *heron__template_cflags(const heron__template *t) {
  /* A cuda template's sources are built by NVRTC; the host compiler only
   * builds them for the CPU check, as the emulation. */
  if (t && t->is_cuda)
    return HERON__CUDA_EMU_CFLAGS;
  if (t && t->is_amx)
    return HERON__AMX_CFLAGS;
  /* No template (a caller asking for the defaults): this machine's ISA. */
  if (!t)
    return "-O3 -fno-predictive-commoning -march=native -fopenmp -fPIC "
           "-shared";
  return cpu_cflags(&t->hw);
}

int heron__template_is_cuda(const heron__template *t) {
  return t && t->is_cuda;
}

int heron__codegen(const heron__template *t, const heron_space *sp,
                   const int64_t *cfg, heron__buf *out, heron_error *err) {
  if (!t || !sp || !cfg || !out)
    return heron_error_set(err, HERON_EINVAL, "codegen: NULL argument");
  if (t->is_cuda)
    return heron__cuda_codegen(t, sp, cfg, out, err);
  if (t->is_amx)
    return heron__amx_codegen(t, sp, cfg, out, err);
  return heron__cpu_codegen(t, sp, cfg, out, err);
}

static void knobs_and_constraints(const heron_space *sp, heron__buf *out);

/* ---- describe ------------------------------------------------------------ */

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
  heron__buf b = {0};
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != kind || !t->has_knobs[a])
      continue;
    heron__buf_printf(&b, "%s%s.%d < %s.t%d", b.len ? ", " : "",
                      op->axes[a].name, level, op->axes[a].name, level);
  }
  if (b.len)
    line(out, depth, "for %s%s", b.data, what);
  heron__buf_free(&b);
}

void heron__template_describe(const heron__template *t, const heron_space *sp,
                              heron__buf *out) {
  if (!t || !out)
    return;
  if (t->is_amx) {
    heron__amx_describe(t, out);
    knobs_and_constraints(sp, out);
    return;
  }
  if (t->is_cuda) {
    heron__cuda_describe(t, out);
    knobs_and_constraints(sp, out);
    return;
  }
  const heron__op *op = &t->op;
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
  if (t->vec_axis >= 0)
    heron__buf_printf(&b, "  (fully unrolled, vec lanes along %s)",
                      op->axes[t->vec_axis].name);
  line(out, d, "%s", b.data ? b.data : "");
  if (!t->vec_reduce)
    line(out, d,
         "prefetch what each load reads `prefetch` steps of the innermost "
         "reduction loop ahead  (0: none)");
  d--;
  heron__buf_free(&b);
  tensor_text(op, &op->out, &b);
  line(out, d, "%s = (first reduction-outer step ? 0 : %s) + %s.local",
       b.data ? b.data : "", b.data ? b.data : "", op->out.name);
  if (t->stage >= 0)
    line(out, d,
         "(%s.stage == 1: the steps before the last keep %s.local's sums in "
         "a per-thread buffer of the thread's output tile, as vectors; the "
         "last adds them and writes %s once)",
         op->out.name, op->out.name, op->out.name);
  if (op->epilogue)
    line(out, d,
         "%s = %s%s%s%s  (Always-Inline epilogue, last reduction-outer "
         "step)",
         b.data ? b.data : "", op->epilogue & HERON__EPI_RELU ? "relu(" : "",
         b.data ? b.data : "",
         op->epilogue & HERON__EPI_BIAS ? " + bias[channel]" : "",
         op->epilogue & HERON__EPI_RELU ? ")" : "");
  heron__buf_free(&b);
  knobs_and_constraints(sp, out);
}

/* The space part of describe: every knob with its domain, every
 * constraint. */
static void knobs_and_constraints(const heron_space *sp, heron__buf *out) {
  if (!sp)
    return;
  heron__buf_puts(out, "knobs:\n");
  for (int i = 0; i < heron_space_nknobs(sp); i++) {
    int v = heron_space_knob(sp, i);
    int64_t lo, hi;
    const int64_t *vals;
    int nvals;
    if (heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals) != HERON_OK)
      continue;
    heron__buf_printf(out, "  %s in ", heron_space_var_name(sp, v));
    if (vals) {
      heron__buf_puts(out, "{");
      for (int k = 0; k < nvals; k++)
        heron__buf_printf(out, "%s%lld", k ? ", " : "", (long long)vals[k]);
      heron__buf_puts(out, "}\n");
    } else {
      heron__buf_printf(out, "[%lld, %lld]\n", (long long)lo, (long long)hi);
    }
  }
  heron__buf_printf(out, "constraints (%d over %d variables):\n",
                    heron_space_nconstraints(sp), heron_space_nvars(sp));
  for (int c = 0; c < heron_space_nconstraints(sp); c++) {
    char text[512];
    if (heron_space_constraint_str(sp, c, text, sizeof text) >= 0)
      heron__buf_printf(out, "  %s\n", text);
  }
}
