/* core/targets/cuda/toolchain.h - how the cuda target's kernels are built
 * and run: NVRTC (nvrtc.c) compiles each generated source in-process into
 * a cubin for the device's SM and records ptxas' statistics; a worker
 * (run.c) loads the cubin through the driver API (driver.h) and times it
 * on the GPU.  toolchain.c makes the two into a toolchain of
 * core/measure/toolchain.h, and picks the host's instead for --emulate.
 * Internal to libheron.
 */
#ifndef HERON_CORE_TARGET_CUDA_TOOLCHAIN_H
#define HERON_CORE_TARGET_CUDA_TOOLCHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/measure/measure.h"
#include "core/targets/cuda/kernel.h"
#include "heron/tune.h"

/* The toolchain of a cuda task's kernels (heron__bench_init takes it).
 * Without mo->emulate: NVRTC builds of k<n>.cu into k<n>.cubin for
 * sm_<sm>, run through the driver API by heron__cuda_worker_main; with it,
 * the host toolchain with `emu_cflags` (the template's,
 * HERON__CUDA_EMU_CFLAGS), each kernel run once on the CPU, which runs the
 * whole grid.  HERON_EINVAL "cuda bench: no SM to build for" for sm <= 0
 * without emulate. */
int heron__cuda_toolchain(const heron_measure_options *mo, int sm,
                          const char *emu_cflags, heron__toolchain *out,
                          heron_error *err);

/* What running a cubin needs besides the file: the meta of its artifact
 * (heron__artifact), written by the NVRTC build. */
typedef struct heron__cuda_artifact {
  heron__cuda_launch launch; /* lines 1 (and 2) of the source */
  char entry[192];           /* the lowered name of heron_cuda_kernel
                                (extern "C": the name itself) */
} heron__cuda_artifact;

/* Copies c into a->meta, or a->meta into *c (entry NUL-terminated). */
void heron__cuda_artifact_set(heron__artifact *a,
                              const heron__cuda_artifact *c);
void heron__cuda_artifact_get(const heron__artifact *a,
                              heron__cuda_artifact *c);

/* The NVRTC toolchain's run (run.c): loads the cubin a->path through the
 * driver API, copies the inputs to the device, fills the output with 0xFF
 * bytes (NaN), launches with the artifact's geometry, checks the output
 * against the reference, times `number` launches per repeat with events
 * (growing number until a repeat lasts min_repeat_ms), reports the median
 * of `repeat` repeats to fd.  A CUDA error is RUNTIME_ERROR naming the
 * call and the error.  Never returns. */
_Noreturn void heron__cuda_worker_main(heron__bench *b,
                                       const heron__artifact *a, int fd);

/* ---- NVRTC (nvrtc.c) ------------------------------------------------------
 */

/* One NVRTC compile of a generated CUDA source (see kernel.h). */
typedef struct heron__nvrtc_result {
  void *cubin;       /* malloc'ed cubin image, NULL when the compile failed */
  size_t cubin_size; /* bytes */
  char *log;         /* malloc'ed tail (~2 KB) of NVRTC's log: the errors
                        of a failed compile, ptxas' report of a good one;
                        NULL when empty */
  char entry[192];   /* the lowered name of heron_cuda_kernel */
  heron__cuda_launch launch; /* line 1 of the source */
  int regs;                  /* registers per thread */
  int spill_bytes;           /* spill stores + spill loads, bytes */
  int64_t static_smem;       /* static shared memory per block, bytes */
  int64_t smem_bytes;        /* static_smem + launch.smem_bytes */
  double seconds;            /* wall time of the compile */
} heron__nvrtc_result;

/* Compiles `src` to a cubin for sm_<sm> with NVRTC (-arch=sm_XX, sm_XXa
 * for a TMA kernel, whose line 2 states its tensor maps; the CUDA
 * headers of $HERON_CUDA_INCLUDE or the build's toolkit, -default-device,
 * -std=c++17, ptxas -v; no fast math) and fills *r (zeroed first; free with
 * heron__nvrtc_result_free, also after a failure).  Thread safe.
 * HERON_EBUILD when the source has no valid launch line or NVRTC rejects
 * it (the message, shortened, in err; the log's tail in r->log);
 * HERON_EUNSUPPORTED "libheron was built without NVRTC"; HERON_ENOMEM. */
int heron__nvrtc_compile(const char *src, int sm, heron__nvrtc_result *r,
                         heron_error *err);
void heron__nvrtc_result_free(heron__nvrtc_result *r);

/* Compiles `src` for the virtual architecture compute_<sm> and returns the
 * PTX in *ptx (malloc'ed, NUL-terminated; free it), so tests can look at
 * the instructions a kernel uses.  Errors as heron__nvrtc_compile. */
int heron__nvrtc_ptx(const char *src, int sm, char **ptx, heron_error *err);

/* 1 when this libheron was built with NVRTC. */
int heron__nvrtc_available(void);

/* NVRTC's version ("13.0") into buf[cap], "" without NVRTC; returns buf. */
const char *heron__nvrtc_version(char *buf, size_t cap);

/* Parses ptxas' -v report in an NVRTC log: the registers, spill bytes
 * (stores + loads) and static shared memory of entry function `entry`
 * (or of the first one reported, when `entry` is NULL or not found).
 * Returns 0, or -1 when the log holds no "Used N registers" line. */
int heron__ptxas_stats(const char *log, const char *entry, int *regs,
                       int *spill_bytes, int64_t *static_smem);

#endif
