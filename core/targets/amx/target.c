/* core/targets/amx/target.c - the amx target's descriptor: generated C with
 * Intel AMX tile intrinsics (amx_rules.c, amx_codegen.c, amx_prelude.c),
 * built by the system compiler and run in the cpu target's worker where
 * this machine has AMX (amx_probe.c), or built with the tile instructions
 * emulated in scalar C and checked once on any x86-64 CPU (--emulate). */
#include <stdio.h>
#include <stdlib.h>

#include "core/targets/amx/amx_template.h"
#include "core/targets/cpu/cpu.h"
#include "core/targets/target.h"
#include "core/task/task.h"

/* --sm picks a GPU architecture.  Of the inputs, only the weights (B, the
 * input that is not the activations) can be packed ahead of the calls:
 * into the VNNI layout the B tiles load (amx_codegen.c). */
static int amx_check_spec(const heron_task_spec *spec, const heron__op *op,
                          heron_error *err) {
  if (spec->sm)
    return heron_error_set(err, HERON_EINVAL,
                           "sm %d applies to GPU targets only, not amx",
                           spec->sm);
  int ib = op->act_input == 1 ? 0 : 1;
  if (op->ninputs == 2 && (op->prepack & ~(1u << ib)))
    return heron_error_set(err, HERON_EINVAL,
                           "--prepack: the amx kernels pack only the weights "
                           "(%s) ahead of the calls, not the activations (%s)",
                           op->in[ib].name, op->in[1 - ib].name);
  return HERON_OK;
}

/* A named CPU description replaces this CPU's detection; a GPU's does not
 * describe a CPU. */
static int amx_resolve_hw(const heron_task_spec *spec, heron__hw *hw,
                          heron_error *err) {
  if (!spec->hw)
    return HERON_OK;
  int rc = heron__hw_load(spec->hw, hw, err);
  const heron__target *of = rc ? NULL : heron__target_find(hw->target);
  if (!rc && of && (of->flags & HERON__TARGET_GPU))
    rc = heron_error_set(err, HERON_EINVAL,
                         "hardware description '%s' is for the %s target, "
                         "not amx; use a CPU description (sapphire-rapids)",
                         spec->hw, hw->target);
  return rc;
}

static int amx_rules(heron__template *t, heron_space *sp, heron_error *err) {
  t->elem_bytes = 1;
  return heron__amx_rules_apply(t, sp, err);
}

/* The native flags: the emulation's are the toolchain's under --emulate
 * (amx_measure_setup). */
static const char *amx_cflags(const heron__template *t) {
  (void)t;
  return HERON__AMX_CFLAGS;
}

static void amx_free_sched(heron__template *t) { free(t->sched); }

/* Compile-only and emulated runs need nothing of this machine; a native
 * run needs AMX in the CPU, the OS and the kernel's permission, and stops
 * before the first trial with what is missing.  The kernels are C shared
 * objects run by the host toolchain, as the cpu target's; emulated ones are
 * built with the emulation's flags and, as for cuda, run once and checked
 * (the bench sees opts.emulate). */
static int amx_measure_setup(const heron_task *t,
                             const heron_measure_options *mo,
                             heron__measure_plan *plan, heron_error *err) {
  snprintf(plan->compile_only, sizeof plan->compile_only,
           "compile only: C compiler builds with the AMX flags, no runs\n");
  plan->toolchain = heron__toolchain_host(
      mo->emulate ? HERON__AMX_EMU_CFLAGS : heron__template_cflags(t->tmpl));
  return heron__amx_setup_run(t->tmpl, mo->compile_only, mo->emulate, err);
}

static const heron__target amx_target = {
    .name = "amx",
    .summary = "generated C with Intel AMX tiles (TDPBUSD int8, TDPBF16PS "
               "bf16): tile configuration as constraints, VNNI-packed B; "
               "run natively or with the tile instructions emulated",
    .default_dtype = "int8",
    .dtypes = "int8 or bf16",
    /* Not HERON__TARGET_HW_FILE: its descriptions are CPU ones ("target":
     * "cpu", configs/hw/sapphire-rapids.json), and its logs are not
     * replayed yet. */
    .check_spec = amx_check_spec,
    .resolve_hw = amx_resolve_hw,
    .rules = amx_rules,
    .describe = heron__amx_describe,
    .codegen = heron__amx_codegen,
    .cflags = amx_cflags,
    .free_sched = amx_free_sched,
    .measure_setup = amx_measure_setup,
    .emit = heron__cpu_emit,
};

const heron__target *heron__target_amx(void) { return &amx_target; }
