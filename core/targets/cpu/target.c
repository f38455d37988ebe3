/* core/targets/cpu/target.c - the cpu target's descriptor: generated C,
 * built by the system compiler into a shared object, run and checked in a
 * worker forked by the runner (core/measure/).  Its rules are rules.c, its
 * code generator codegen.c, its text describe.c, its --emit emit.c. */
#include <stdio.h>
#include <stdlib.h>

#include "core/targets/cpu/cpu.h"
#include "core/targets/cpu/template.h"
#include "core/task/task.h"

/* --sm picks a GPU architecture: it applies to the GPU targets only. */
static int cpu_check_spec(const heron_task_spec *spec, const heron__op *op,
                          heron_error *err) {
  if (!spec->sm)
    return HERON_OK;
  char gpus[64];
  heron__target_names(HERON__TARGET_GPU, 0, ", ", " or ", NULL, gpus,
                      sizeof gpus);
  return heron_error_set(err, HERON_EINVAL,
                         "sm %d applies to the %s target only, not cpu",
                         spec->sm, gpus);
}

/* A named description replaces this CPU's detection; none keeps it. */
static int cpu_resolve_hw(const heron_task_spec *spec, heron__hw *hw,
                          heron_error *err) {
  return spec->hw ? heron__hw_load(spec->hw, hw, err) : HERON_OK;
}

/* The preconditions of the cpu rules, then the rules (rules.c). */
static int cpu_rules(heron__template *t, heron_space *sp, heron_error *err) {
  const heron__op *op = &t->op;
  if (op->dtype == HERON__FP16)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "the cpu template supports fp32, int8 and bf16, "
                           "not fp16");
  /* int8 and bf16 kernels pack their weights into the dot-product layout,
   * which a prepacked copy replaces (dot.c); the activations' pack stays
   * in the call (the AVX2 int8 form widens them to s16 there). */
  if (op->dtype != HERON__FP32 && (op->prepack >> op->act_input & 1u))
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "--prepack: the cpu template's %s kernels prepack "
                           "only the weights (%s), not the activations (%s)",
                           heron__dtype_name(op->dtype),
                           op->in[1 - op->act_input].name,
                           op->in[op->act_input].name);
  if (op->out.bounded)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "the cpu template needs an output indexed inside "
                           "its bounds (op %s)",
                           op->name);
  if (op->ninputs < 1 || op->ninputs > HERON__MAX_TENSORS)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "the cpu template needs 1..%d inputs, op %s has %d",
                           HERON__MAX_TENSORS, op->name, op->ninputs);
  /* The memory rules count elements of the inputs' size: int8's bytes,
   * bf16's halves. */
  t->elem_bytes = op->dtype == HERON__INT8   ? 1
                  : op->dtype == HERON__BF16 ? 2
                                             : 4;
  return heron__cpu_rules_apply(t, sp, err);
}

static void cpu_free_sched(heron__template *t) { free(t->sched); }

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

static const char *cpu_cflags(const heron__template *t) {
  const heron__hw *hw = &t->hw;
  /* The int8 and bf16 micro-kernels add their dot-product extensions. */
  switch (heron__cpu_sched_of(t)->dot) {
  case HERON__DOT_VNNI:
    return CPU_CFLAGS("-mavx512f -mavx512vl -mavx512vnni -mavx2 -mfma");
  case HERON__DOT_AVX_VNNI:
    return CPU_CFLAGS("-mno-avx512f -mavx2 -mfma -mavxvnni");
  case HERON__DOT_BF16:
    return CPU_CFLAGS("-mavx512f -mavx512vl -mavx512bf16 -mavx2 -mfma");
  default:
    break;
  }
  if (hw->has_avx512)
    return CPU_CFLAGS("-mavx512f -mavx2 -mfma");
  if (hw->has_avx2)
    return hw->has_fma ? CPU_CFLAGS("-mno-avx512f -mavx2 -mfma")
                       : CPU_CFLAGS("-mno-avx512f -mavx2 -mno-fma");
  return hw->has_fma ? CPU_CFLAGS("-mno-avx512f -mno-avx2 -mfma")
                     : CPU_CFLAGS("-mno-avx512f -mno-avx2 -mno-fma");
}

/* The flags of an emulated int8 or bf16 kernel: this machine's, with the
 * scalar definitions of the dot-product intrinsics (isa_emu.c) in place of
 * <immintrin.h>. */
#define CPU_EMU_CFLAGS                                                         \
  "-O3 -fno-predictive-commoning -march=native -DHERON_EMULATE_ISA -fopenmp "  \
  "-fPIC -shared"

/* Kernels run natively, and kernels for instructions this CPU lacks build
 * but cannot run; the int8 and bf16 ones can instead be emulated (each
 * checked once, untimed), since every dot-product intrinsic they use has a
 * scalar definition.  fp32 kernels use only what every x86-64 compiler
 * and CPU of their description have, so they have no emulation.  The
 * kernels are built by the host toolchain with the template's flags (NULL
 * template, a T1 space measured as the default target: this machine's),
 * or the emulation's. */
static int cpu_measure_setup(const heron_task *t,
                             const heron_measure_options *mo,
                             heron__measure_plan *plan, heron_error *err) {
  snprintf(plan->compile_only, sizeof plan->compile_only,
           "compile only: C compiler builds, no runs\n");
  if (mo->emulate && t->op.dtype != HERON__INT8 && t->op.dtype != HERON__BF16) {
    return heron_error_set(err, HERON_EINVAL,
                           "emulate applies to the cpu target's int8 and "
                           "bf16 kernels, not %s; task %s runs natively",
                           heron__dtype_name(t->op.dtype), heron_task_key(t));
  }
  char missing[128];
  if (!mo->compile_only && !mo->emulate &&
      heron__hw_cpu_lacks_for(&t->hw, t->op.dtype, missing, sizeof missing))
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "target cpu: the hardware description '%s' "
                           "needs %s, which this CPU lacks, so its kernels "
                           "cannot run here; use --compile-only to build "
                           "them, or a description of this machine",
                           t->hw.name, missing);
  plan->toolchain = heron__toolchain_host(
      mo->emulate ? CPU_EMU_CFLAGS : heron__template_cflags(t->tmpl));
  return HERON_OK;
}

static const heron__target cpu_target = {
    .name = "cpu",
    .summary = "generated C: multi-level tiling, local accumulator, OpenMP, "
               "vector FMA micro-kernel; built by the system C compiler",
    .default_dtype = "fp32",
    .dtypes = "fp32, int8 or bf16",
    .flags = HERON__TARGET_HW_FILE,
    .check_spec = cpu_check_spec,
    .resolve_hw = cpu_resolve_hw,
    .rules = cpu_rules,
    .describe = heron__cpu_describe,
    .codegen = heron__cpu_codegen,
    .cflags = cpu_cflags,
    .free_sched = cpu_free_sched,
    .measure_setup = cpu_measure_setup,
    .emit = heron__cpu_emit,
};

const heron__target *heron__target_cpu(void) { return &cpu_target; }
