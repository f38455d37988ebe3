/* tests/targets/kernel_check.h - the steps the generated-kernel tests of the
 * targets repeat (tests/targets/cpu/test_codegen.c, dot_kernels.c,
 * dot_every_config.c, tests/targets/amx/test_amx_kernels.c and
 * test_amx_prelude.c): a scratch folder, the cpu template of an op built for
 * a hardware description, one source holding many kernels under renamed
 * exports, its compiler run, a renamed export looked up, the OpenMP runtime
 * held for the kernels, and the inputs with their reference output.
 *
 * What differs between the tests stays in them: test_codegen builds one
 * library per config, the dot tests one source built emulated and native,
 * dot_every_config every distinct program, the amx tests run in a forked
 * child, and test_cuda_emulate goes through the measure module's bench
 * (heron__build_all, heron__run_candidate), sharing none of these. */
#ifndef HERON_TESTS_KERNEL_CHECK_H
#define HERON_TESTS_KERNEL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "core/op/op.h"
#include "core/sched/sched.h"
#include "core/targets/hw.h"
#include "core/util/util.h"

/* A fresh folder "$TMPDIR/heron-<tag>-XXXXXX" (/tmp without TMPDIR) into
 * dir[cap], removed by the caller; 0, or -1 when it cannot be made. */
int kc_scratch(char *dir, size_t cap, const char *tag);

/* kc_cpu_build's prepack for "the weights": the input other than
 * op->act_input, whatever the op names it. */
#define KC_PREPACK_WEIGHTS "<weights>"

/* An op with the cpu template and space built for it. */
typedef struct kc_cpu {
  heron__op op;
  heron__hw hw;
  heron__template *t;
  heron_space *sp;
} kc_cpu;

/* Builds op `name` at shape[n] in dtype with the epilogue flags and the
 * inputs `prepack` names packed ahead (a --prepack list, NULL for none, or
 * KC_PREPACK_WEIGHTS), then the cpu template for this machine
 * (heron__hw_detect_cpu) with configs/hw/<hw>.json loaded over it when hw
 * is not NULL.  HERON_OK, or the first step's error; kc_cpu_free frees
 * either way. */
int kc_cpu_build(kc_cpu *b, const char *name, const int64_t *shape, int n,
                 int dtype, int epilogue, const char *prepack, const char *hw,
                 heron_error *err);
void kc_cpu_free(kc_cpu *b);

/* Appends kernel source src to all with its exports renamed
 * heron_kernel_<i>, heron_prepack_<i> and heron_prepacked_elems_<i> (the
 * names kc_sym finds), so that many kernels share one library. */
void kc_append_renamed(heron__buf *all, int i, const char *src);

/* Symbol <base>_<i> of library h (see kc_append_renamed), or NULL. */
void *kc_sym(void *h, const char *base, int i);

/* Runs "cc <cflags> <extra> all.c -o <name>.so" in dir, diagnostics to
 * dir/<name>.err; 1 when the compiler succeeded.  With HERON_BUILD_CACHE
 * set, a build of the same source with the same command comes from the
 * build cache (core/measure/measure.h). */
int kc_compile_all_c(const char *dir, const char *name, const char *cflags,
                     const char *extra);

/* Loads libgomp globally and keeps it: the kernels load it, and closing
 * the last kernel would unload it under its idle worker threads.  0, or -1
 * with dlerror()'s text in why[cap]. */
int kc_hold_libgomp(char *why, size_t cap);

/* Allocates op's buffers twice (bufs and ref), fills both with the same
 * inputs from seed and computes the reference output, epilogue included
 * (heron__op_reference_full), in ref.  HERON_OK, or the error with
 * nothing left allocated; kc_inputs_free frees both. */
int kc_inputs(const heron__op *op, void **bufs, void **ref, uint64_t seed,
              heron_error *err);
void kc_inputs_free(const heron__op *op, void **bufs, void **ref);

#endif
