/* core/targets/cuda/target.c - the cuda target's descriptor: generated CUDA
 * for the Tensor Cores (rules.c, codegen.c, in the dialect of kernel.h and
 * prelude.c), built by NVRTC (nvrtc.c) for the device's SM and run through
 * the driver API loaded with dlopen (driver.c, run.c): its toolchain
 * (toolchain.c), or built by the host compiler and checked on the CPU as
 * the emulation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/targets/cuda/driver.h"
#include "core/targets/cuda/template.h"
#include "core/targets/cuda/toolchain.h"
#include "core/targets/target.h"
#include "core/task/task.h"
#include "core/util/util.h"

/* Prepacked inputs are a layout rewrite of the cpu kernels only. */
static int cuda_check_spec(const heron_task_spec *spec, const heron__op *op,
                           heron_error *err) {
  if (op->prepack)
    return heron_error_set(err, HERON_EINVAL,
                           "--prepack applies to the cpu target only, not "
                           "cuda");
  return HERON_OK;
}

/* The description a compute capability picks when there is no GPU to ask
 * and no --hw: the shipped GPU of that architecture. */
static const char *hw_for_sm(int sm) {
  switch (sm) {
  case 80:
    return "a100";
  case 86:
    return "rtx3080";
  case 90:
    return "h100";
  default:
    return NULL;
  }
}

/* Whether a failed device probe found no GPU to use - no driver library,
 * or a driver that reports no device, the two reasons driver.h gives for
 * that ("no CUDA driver: ...", "no CUDA device") - rather than a GPU it
 * could not use: a driver that fails to start or lacks an entry point, a
 * probe that crashed or gave no answer.  The first is a machine without a
 * GPU (a GPU test skips there); the second is a fault, reported as such
 * ("the GPU probe failed"), never as "no GPU". */
static int probe_found_no_gpu(const heron_error *perr) {
  return strncmp(perr->text, "no CUDA driver", 14) == 0 ||
         strcmp(perr->text, "no CUDA device") == 0;
}

/* The cuda target's hardware: the named description when spec->hw is
 * given, else the GPU (probed in a child process), else the description
 * spec->sm picks.  spec->sm then overrides the architecture compiled for. */
static int cuda_resolve_hw(const heron_task_spec *spec, heron__hw *hw,
                           heron_error *err) {
  if (spec->sm && (spec->sm < 70 || spec->sm > 129))
    return heron_error_set(err, HERON_EINVAL,
                           "sm %d is not a Tensor Core architecture; "
                           "expected 70..129 (e.g. 80 for A100, 90 for H100)",
                           spec->sm);
  int rc = HERON_OK;
  if (spec->hw) {
    rc = heron__hw_load(spec->hw, hw, err);
    if (!rc && heron__target_find(hw->target) != heron__target_cuda())
      rc = heron_error_set(err, HERON_EINVAL,
                           "hardware description '%s' is for the %s target, "
                           "not cuda; use a GPU description (a100, h100, "
                           "h200, rtx3080)",
                           spec->hw, hw->target);
  } else {
    heron_error perr;
    heron_error_clear(&perr);
    if (heron__cuda_probe_isolated(hw, 60, &perr) != HERON_OK) {
      /* No GPU (or one the probe could not use): compile for the
       * architecture asked for, or for the A100 description, and say which
       * in the hardware's name; a GPU run stops at cuda_measure_setup. */
      const char *name = spec->sm ? hw_for_sm(spec->sm) : "a100";
      int absent = probe_found_no_gpu(&perr);
      if (!name)
        return heron_error_set(
            err, HERON_ENOTFOUND,
            "target cuda: %s%s, and no shipped description for sm %d; name "
            "one with --hw (a100, h100, h200, rtx3080, or a JSON file)",
            absent ? "" : "the GPU probe failed: ",
            perr.text[0] ? perr.text : "no GPU", spec->sm);
      rc = heron__hw_load(name, hw, err);
      if (!rc) {
        char named[sizeof hw->name];
        snprintf(named, sizeof named, "%s", hw->name);
        snprintf(hw->name, sizeof hw->name, "%.40s (%s)", named,
                 absent ? "no GPU here" : "GPU probe failed");
      }
    }
  }
  if (!rc && spec->sm)
    hw->sm = spec->sm;
  return rc;
}

/* The Tensor Core rules (rules.c) check their own preconditions (two
 * inputs, fp16). */
static int cuda_rules(heron__template *t, heron_space *sp, heron_error *err) {
  t->elem_bytes = 2;
  return heron__cuda_rules_apply(t, sp, err);
}

/* The sources are built by NVRTC; the host compiler only builds them for
 * the CPU check, as the emulation. */
static const char *cuda_cflags(const heron__template *t) {
  return HERON__CUDA_EMU_CFLAGS;
}

static void cuda_free_sched(heron__template *t) { free(t->sched); }

/* A cubin for sm_XY runs on devices of the same major version and a minor
 * version of at least Y, never across major versions. */
static int cubin_runs_on(int built, int device) {
  return built / 10 == device / 10 && built % 10 <= device % 10;
}

/* Settles how a cuda task is measured and for which SM, and picks the
 * toolchain (toolchain.c).  On the GPU path the device is probed in a
 * child process (heron__cuda_probe_isolated): no GPU stops the run at once
 * with what to do instead ("target cuda: no GPU (...)"), and so does a
 * probe that failed otherwise, saying so ("target cuda: the GPU probe
 * failed (...)"). */
static int cuda_measure_setup(const heron_task *t,
                              const heron_measure_options *mo,
                              heron__measure_plan *plan, heron_error *err) {
  int sm = t->hw.sm;
  const char *emu_cflags = heron__template_cflags(t->tmpl);
  if (mo->compile_only || mo->emulate) {
    if (mo->compile_only && sm <= 0)
      return heron_error_set(err, HERON_EINVAL,
                             "target cuda: compile-only needs the SM to build "
                             "for; the task's hardware (%s) gives none",
                             t->hw.name);
    snprintf(plan->compile_only, sizeof plan->compile_only,
             "compile only: NVRTC builds for sm_%d with ptxas statistics, "
             "no runs\n",
             sm);
    return heron__cuda_toolchain(mo, sm, emu_cflags, &plan->toolchain, err);
  }
  heron__hw dev;
  memset(&dev, 0, sizeof dev);
  heron_error perr;
  heron_error_clear(&perr);
  int rc = heron__cuda_probe_isolated(&dev, 0, &perr);
  if (rc != HERON_OK && probe_found_no_gpu(&perr))
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "target cuda: no GPU (%s); use --compile-only "
                           "(NVRTC builds) or --emulate (CPU checks)",
                           perr.text);
  if (rc != HERON_OK)
    return heron_error_set(err, HERON_ERUN,
                           "target cuda: the GPU probe failed (%s); "
                           "--compile-only, --emulate need no GPU",
                           perr.text);
  if (sm <= 0)
    sm = dev.sm;
  if (!cubin_runs_on(sm, dev.sm))
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "target cuda: the task is for sm_%d but device 0 "
                           "(%s) is sm_%d and cannot run its cubins",
                           sm, dev.name, dev.sm);
  snprintf(plan->device, sizeof plan->device,
           "cuda device 0: %s (sm_%d, %d SMs)\n", dev.name, dev.sm,
           dev.sm_count);
  return heron__cuda_toolchain(mo, sm, emu_cflags, &plan->toolchain, err);
}

static int write_in(const char *dir, const char *name, const char *text,
                    heron_error *err) {
  char path[HERON__PATH_BUF];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return heron__write_file(path, text, strlen(text), err);
}

/* kernel.cu and README.txt for the best cuda kernel: instead of a C driver
 * a one-line README says how to launch it (its geometry and dynamic shared
 * memory come from the source's first line). */
static int cuda_emit(const heron_task *t, const heron_measurement *best,
                     const char *dir, heron_error *err) {
  char *src = NULL, *readme = NULL;
  int rc = heron_task_source(t, best->config, &src, err);
  if (!rc)
    rc = write_in(dir, "kernel.cu", src, err);
  heron__cuda_launch l;
  if (!rc && heron__cuda_launch_parse(src, &l) != 0)
    rc = heron_error_set(err, HERON_EINVAL,
                         "emit: the best kernel's source has no launch line");
  if (!rc) {
    heron__buf b = {0};
    heron__buf_printf(
        &b,
        "kernel.cu: launch " HERON__CUDA_KERNEL_NAME "(in0, in1, out, bias; "
        "fp16, bias NULL when none) with grid (%d, %d, %d), block (%d, %d, "
        "%d) and %lld bytes of dynamic shared memory; built with NVRTC for "
        "sm_%d (%d registers, %d bytes spilled, %lld bytes shared memory); "
        "trial %d of %s",
        l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
        (long long)l.smem_bytes, t->hw.sm, best->regs, best->spill_bytes,
        (long long)best->smem_bytes, best->trial, t->key);
    for (int m = 0; m < l.ntmaps; m++)
      heron__buf_printf(
          &b,
          "; tensor map %s after bias: cuTensorMapEncodeTiled of in%d as a "
          "2-D fp16 matrix of %lld rows of %lld elements, %lld bytes apart, "
          "box %d x %d, %d-byte swizzle, zero fill (line 2 of kernel.cu)",
          m ? "tmap_b" : "tmap_a", l.tmap[m].input, (long long)l.tmap[m].outer,
          (long long)l.tmap[m].inner, (long long)l.tmap[m].row_bytes,
          l.tmap[m].box_inner, l.tmap[m].box_outer, l.tmap[m].swz);
    /* Only a timed kernel is ever the best (heron_history_best). */
    heron__buf_printf(&b, ", %.2f GFLOP/s when tuned.\n", best->gflops);
    readme = heron__buf_take(&b);
    rc = readme ? write_in(dir, "README.txt", readme, err)
                : heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  free(src);
  free(readme);
  return rc;
}

static const heron__target cuda_target = {
    .name = "cuda",
    .summary = "generated CUDA for the Tensor Cores: block / warp / wmma "
               "tiling, shared-memory staging; built by NVRTC, run through "
               "the driver API or emulated on the CPU",
    .default_dtype = "fp16",
    .dtypes = "fp16",
    .flags =
        HERON__TARGET_GPU | HERON__TARGET_HW_FILE | HERON__TARGET_BUILD_STATS,
    .check_spec = cuda_check_spec,
    .resolve_hw = cuda_resolve_hw,
    .rules = cuda_rules,
    .describe = heron__cuda_describe,
    .codegen = heron__cuda_codegen,
    .cflags = cuda_cflags,
    .free_sched = cuda_free_sched,
    .measure_setup = cuda_measure_setup,
    .emit = cuda_emit,
};

const heron__target *heron__target_cuda(void) { return &cuda_target; }
