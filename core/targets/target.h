/* core/targets/target.h - a target as one internal interface, and the
 * registry of targets.  Internal to libheron.
 *
 * A target is what a task's kernels are made for: `cpu` (generated C,
 * built by the system compiler, run in a forked worker), `cuda` (generated
 * CUDA, built by NVRTC, run through the driver API, or emulated on the
 * CPU) and `amx` (C with AMX tiles).  Each lives in its own folder,
 * core/targets/<name>/, whose target.c defines one `static const`
 * heron__target descriptor and one function returning it (and, when its
 * kernels are not built and run as the host's, its toolchain:
 * core/measure/toolchain.h); the registry (core/targets/registry.c) lists
 * those functions in a static const table.  One more descriptor, `replay`,
 * makes no kernels: it is the public name of a task answered from recorded
 * logs or a T4 file, and lives with the meter that answers it in
 * core/replay/.  Nothing else in libheron or in the tools compares a
 * target's name: the task, the template, the meters and --emit ask the
 * descriptor (a flag or a member), and the tools ask the public
 * heron_target_* functions (include/heron/task.h), which read the same
 * descriptors.
 *
 * Who calls what, in the life of a task:
 *
 *   heron_task_create (core/task/task.c)
 *     heron__target_find(spec->target)        unknown: HERON_ENOTFOUND
 *     t1_task            when spec->t1 (the target with HERON__TARGET_T1)
 *     prepare            replay: reads the logs, names the recorded target
 *                        (the "base" whose rules build the template)
 *     base->default_dtype                     when spec->dtype is NULL
 *     base->check_spec   after the op is built (--sm, --prepack)
 *     base->resolve_hw   after this CPU is detected into the hw
 *     heron__template_build_for(base)  -> base->rules
 *     finish             replay: the recorded key check, the logs kept
 *   heron_task_describe / heron_task_source / heron_task_cflags
 *     template->target->describe / codegen / cflags
 *   heron__template_free -> template->target->free_sched
 *   heron__meter_open (core/measure/meter.c), once per run, before any
 *   fork, for a task measured here (the local meter, core/measure/local.c)
 *     measure_setup      checks compile-only / emulate, probes the device,
 *                        picks the toolchain the bench builds and runs with
 *   heron__emit (core/tune/emit.c), after the run, when --emit is given
 *     emit               writes the kernel and how to build and run it
 *
 * Descriptors are immutable and static: nobody frees them, and pointers to
 * them stay valid for the life of the process.  Members a target does not
 * have are NULL and callers check before calling (docs/architecture.md:
 * optional features are NULL members).  Every member that can fail returns a
 * HERON_* status and fills the caller's heron_error (first error wins).
 */
#ifndef HERON_CORE_TARGET_TARGET_H
#define HERON_CORE_TARGET_TARGET_H

#include <stddef.h>

#include "core/measure/toolchain.h"
#include "core/op/op.h"
#include "core/targets/hw.h"
#include "core/util/util.h"
#include "heron/record.h"
#include "heron/space.h"
#include "heron/task.h"
#include "heron/tune.h"

struct heron__template;

/* What a target is, as flags (heron__target.flags).  Callers test flags
 * where they used to compare names. */
enum {
  /* Kernels run on a device, not on this CPU: heron__hw_cpu_lacks never
   * refuses its hardware, a description file of it is checked as a GPU's,
   * and a task without --hw takes the GPU's limits (tools say "the GPU's"). */
  HERON__TARGET_GPU = 1u << 0,
  /* A hardware description file may name it ("target": "cpu"); a recorded
   * log's task may be of it, so replay can rebuild its space. */
  HERON__TARGET_HW_FILE = 1u << 1,
  /* Measures nothing: the recorded meter answers every config from the
   * task's recorded logs (heron_task.recorded), the task's key ends in its
   * name and its tensors need no memory check. */
  HERON__TARGET_RECORDED = 1u << 2,
  /* Builds the tasks of T1 spaces (heron_task_spec.t1) in t1_task. */
  HERON__TARGET_T1 = 1u << 3,
  /* Its builds report ptxas statistics (registers, spills, shared memory),
   * which log lines carry ("regs", "spill_bytes", "smem_bytes"). */
  HERON__TARGET_BUILD_STATS = 1u << 4,
};

/* What measure_setup settles for a run: filled by the target, read by the
 * local meter.  The meter zeroes it before the call. */
typedef struct heron__measure_plan {
  /* How the kernels are built and run (core/measure/toolchain.h): the
   * host's with the template's flags, or the target's own. */
  heron__toolchain toolchain;
  /* A line for the progress stream once the device is known ("cuda device
   * 0: ..."), "" for none. */
  char device[256];
  /* The line that says what --compile-only does for this target, printed
   * after the run's first line when compile-only is on. */
  char compile_only[160];
} heron__measure_plan;

/* What prepare tells the task assembly about a task under construction
 * (replay only).  Zeroed by the caller. */
typedef struct heron__task_draft {
  /* The target whose rules build the template and space, and whose
   * check_spec / resolve_hw / default_dtype apply; NULL: the task's own. */
  const struct heron__target *base;
  /* The hardware description to use in place of spec->hw (may be NULL:
   * the base target's detection); points into side[] or into the spec. */
  const char *hw;
  char side[HERON__PATH_BUF];
  /* The task key the recorded logs carry, for finish to compare. */
  char key[256];
} heron__task_draft;

typedef struct heron__target {
  const char *name;    /* "cpu": what --target and task keys say */
  const char *summary; /* one line, for messages and docs */
  /* The dtype a task gets when its spec names none ("fp32"; cuda: "fp16",
   * which Tensor Cores take).  NULL for a target that takes it from
   * elsewhere (replay: the recorded target's). */
  const char *default_dtype;
  /* The dtypes its rules accept, as a message would list them ("fp32"). */
  const char *dtypes;
  unsigned flags; /* HERON__TARGET_* */

  /* ---- tasks (core/task/task.c) ---------------------------------------- */

  /* Checks the spec's options that only some targets take, once the op is
   * built (its prepack mask set): cpu refuses spec->sm, cuda refuses a
   * prepacked input.  NULL: everything applies. */
  int (*check_spec)(const heron_task_spec *spec, const heron__op *op,
                    heron_error *err);

  /* Fills *hw, which holds this CPU's detection on entry, with the
   * description the task is built for: spec->hw when given (heron__hw_load;
   * the spec may name the hardware via draft->hw), else the target's probe
   * (cuda: the GPU in a child process, else the description spec->sm
   * picks).  NULL: keep this CPU's detection. */
  int (*resolve_hw)(const heron_task_spec *spec, heron__hw *hw,
                    heron_error *err);

  /* Replay only.  prepare runs right after the target is found and before
   * anything is built: it checks the logs and fills *d (the recorded base
   * target, the hardware to use, the recorded key).  finish runs once the
   * template and space are built: it checks the rebuilt task against the
   * recorded key and keeps copies of the logs in the task. */
  int (*prepare)(const heron_task_spec *spec, heron__task_draft *d,
                 heron_error *err);
  int (*finish)(heron_task *t, const heron_task_spec *spec,
                const heron__task_draft *d, heron_error *err);

  /* A task whose space comes from a T1 file (spec->t1): the whole task,
   * into *out (the caller frees it with heron_task_free).  Only on the
   * target with HERON__TARGET_T1. */
  int (*t1_task)(const heron_task_spec *spec, heron_task **out,
                 heron_error *err);

  /* ---- template and space (core/sched/template.c) -------------------------
   * rules applies the schedule-generation rules and their constraint rules:
   * it fills *t (core/sched/template.h: op, hw and target set, everything
   * else zero), sets t->elem_bytes and, for a target with its own
   * schedule, t->sched (owned by the template, freed by free_sched), and
   * posts the variables and constraints into sp.  HERON_EUNSUPPORTED for
   * an op or dtype it does not cover, with what it does cover.  NULL: the
   * target has no rules (replay builds the recorded target's). */
  int (*rules)(struct heron__template *t, heron_space *sp, heron_error *err);
  /* Appends the template's stages, loop nest and rules (not its knobs and
   * constraints, which template.c appends for every target). */
  void (*describe)(const struct heron__template *t, heron__buf *out);
  /* Appends the kernel source of the valid config cfg.  HERON_EINVAL for a
   * config the template cannot lower. */
  int (*codegen)(const struct heron__template *t, const heron_space *sp,
                 const int64_t *cfg, heron__buf *out, heron_error *err);
  /* The host compiler's flags for the template's sources as a shared
   * object (cuda: the emulation's).  Static string. */
  const char *(*cflags)(const struct heron__template *t);
  /* Frees t->sched (the template itself is freed by the caller).  NULL
   * when the target keeps nothing there. */
  void (*free_sched)(struct heron__template *t);

  /* ---- measuring (core/measure/local.c) -----------------------------------
   * measure_setup runs once when the local meter opens, before anything is
   * forked: it refuses options that do not apply (compile-only, emulate),
   * checks that this machine can run the kernels, probes the device (in a
   * child process) and fills *plan, its toolchain above all (cpu: the host
   * compiler with the template's flags; cuda: NVRTC for the device's SM, or
   * the host compiler for --emulate).  Every target with rules has one;
   * NULL for a target whose tasks are not measured here (replay). */
  int (*measure_setup)(const heron_task *t, const heron_measure_options *mo,
                       heron__measure_plan *plan, heron_error *err);

  /* ---- --emit (core/tune/emit.c) -------------------------------------------
   * Writes into dir (which exists, config.json already in it) the best
   * kernel's source and what builds and runs it: cpu kernel.c, driver.c,
   * build.sh; cuda kernel.cu and README.txt.  NULL: the config is all
   * there is (a T1 space). */
  int (*emit)(const heron_task *t, const heron_measurement *best,
              const char *dir, heron_error *err);
} heron__target;

/* The registered target called `name`, or NULL.  NULL name: the default
 * target (the registry's first, cpu).  Static: never freed. */
const heron__target *heron__target_find(const char *name);

/* The i-th registered target, 0 <= i < heron__target_count(), in the
 * registry's order (cpu, cuda, replay); NULL past the end. */
int heron__target_count(void);
const heron__target *heron__target_at(int i);

/* heron__target_find that fails with HERON_ENOTFOUND, "unknown target
 * 'x'; available: cpu, cuda, replay", for a name nobody registered. */
int heron__target_lookup(const char *name, const heron__target **out,
                         heron_error *err);

/* Writes the names of the registered targets that have every flag of
 * `all` and none of `none` into out[cap], joined by `sep` except for the
 * last pair, joined by `last` (", " and " or " give "cpu or cuda"), each in
 * `quote` (NULL: none).  Returns out. */
const char *heron__target_names(unsigned all, unsigned none, const char *sep,
                                const char *last, const char *quote, char *out,
                                size_t cap);

/* The descriptors, one function per target folder (core/targets/<name>/
 * target.c).  Only the registry calls them. */
const heron__target *heron__target_cpu(void);
const heron__target *heron__target_cuda(void);
const heron__target *heron__target_replay(void);
const heron__target *heron__target_amx(void);

#endif
