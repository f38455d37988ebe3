/* core/sched/sched.h - schedule templates by rules, and code generation
 * from a template and a config.  Internal to libheron.
 *
 * heron__template_build applies the target's schedule-generation rules
 * (heron__target.rules, core/targets/<name>/rules.c) to the op description
 * (core/op/op.h) - for cpu: Always-Inline, Add-Cache-Stage
 * (local accumulator), Multi-Level-Tiling of spatial and reduction axes,
 * parallel over fused outer tiles, unroll pragma, vectorize - and, for every
 * rule applied, its constraint-generation rules (loop split, loop fuse,
 * candidates, compute-at, cache / register limits, vector width), which it
 * posts into a new space through core/space/builder.h.  Nothing is written
 * per op: the rules read only axes, tensors and index maps.
 *
 * The generated kernel source defines exactly one exported function,
 *
 *     void heron_kernel(void *const *bufs);
 *
 * with bufs[0..ninputs) the op's inputs and bufs[ninputs] the output, in
 * the op's tensor order and layouts.  The kernel overwrites the whole
 * output (it never accumulates onto what was there), so it can be run
 * repeatedly on the same buffers.
 */
#ifndef HERON_CORE_SCHED_H
#define HERON_CORE_SCHED_H

#include "core/op/op.h"
#include "core/targets/hw.h"
#include "core/util/util.h"
#include "heron/space.h"

#define HERON__KERNEL_SYMBOL "heron_kernel"

typedef struct heron__template heron__template;

struct heron__target;

/* Builds the template of `op` for target `tg` (core/targets/target.h) on
 * `hw`, with that target's rules, and its space, frozen with
 * heron__space_finish.  HERON_EUNSUPPORTED for a target without rules or
 * an op / dtype its rules do not cover; HERON_EUNSAT when no config
 * exists.  The template keeps tg; free it with heron__template_free. */
int heron__template_build_for(const heron__op *op, const heron__hw *hw,
                              const struct heron__target *tg,
                              heron__template **tmpl, heron_space **space,
                              heron_error *err);
/* heron__template_build_for the registered target called `target` (NULL:
 * the default, cpu); HERON_EUNSUPPORTED for a name without rules. */
int heron__template_build(const heron__op *op, const heron__hw *hw,
                          const char *target, heron__template **tmpl,
                          heron_space **space, heron_error *err);
void heron__template_free(heron__template *t);

/* Appends a readable description of the template (stages, loop nest with
 * knob names, which rules applied) to `out`. */
void heron__template_describe(const heron__template *t, const heron_space *sp,
                              heron__buf *out);

/* Appends the kernel source for the valid config cfg[nvars] to `out`.
 * HERON_EINVAL when cfg violates the space. */
int heron__codegen(const heron__template *t, const heron_space *sp,
                   const int64_t *cfg, heron__buf *out, heron_error *err);

/* Appends a standalone C driver for `op` (main(): allocate and fill the
 * tensors, call heron_kernel a few times, print the median time and
 * GFLOP/s) used by --emit next to the kernel source. */
void heron__codegen_driver(const heron__op *op, heron__buf *out);

/* The compiler flags a kernel of this template is built with as a shared
 * object, the target's (heron__target.cflags): for cpu "-O3
 * -fno-predictive-commoning -march=native", the ISA of the template's
 * hardware description made explicit (-mavx512f, or -mno-avx512f -mavx2
 * for an AVX2 description, so that its code builds on any machine),
 * "-fopenmp -fPIC -shared"; the emulation's flags for a cuda template; this
 * machine's defaults for NULL.  Static string. */
const char *heron__template_cflags(const heron__template *t);

#endif
