/* core/targets/hw.h - hardware descriptions, internal to libheron.
 *
 * For the cpu target the description is detected from the running machine
 * (cores, cache sizes from sysconf / sysfs, ISA from cpuid) unless a JSON
 * file is given; configs/hw/ holds descriptions of GPUs for the cuda target.
 */
#ifndef HERON_CORE_HW_H
#define HERON_CORE_HW_H

#include <stddef.h>
#include <stdint.h>

#include "heron/status.h"

typedef struct heron__hw {
  char name[64];   /* "this machine (AMD EPYC, avx512)" or the JSON's name */
  char target[16]; /* "cpu" or "cuda" */
  /* cpu */
  int cores;        /* cores used for parallel loops */
  int64_t l1_bytes; /* per-core L1 data cache */
  int64_t l2_bytes; /* per-core L2 */
  int64_t l3_bytes; /* shared last level */
  int vector_bytes; /* widest SIMD register: 64 (AVX-512), 32 (AVX2), 16 */
  int vector_regs;  /* architectural vector registers: 32 or 16 */
  int has_fma, has_avx2, has_avx512, has_vnni;
  /* Dot-product extensions (cpuid leaf 7): has_vnni is AVX512-VNNI
   * (vpdpbusd on zmm, and on ymm with AVX512VL); has_avx_vnni the VEX form
   * of client CPUs (vpdpbusd on ymm only); has_avx512_bf16 vdpbf16ps;
   * has_amx_* the AMX tiles and their int8 and bf16 products (with the
   * operating system's XSAVE support for the tile state). */
  int has_avx_vnni, has_avx512_bf16;
  int has_amx_tile, has_amx_int8, has_amx_bf16;
  /* Tiles need not divide their loops; the rounded-up work of a config over
   * the op's real work is at most this, in percent (125: a quarter more).
   * 0 (absent from a description) means 125. */
  int max_padded_work_pct;
  /* cuda (filled from JSON or the device; unused by the cpu target) */
  int sm;                       /* compute capability * 10, e.g. 80 */
  int64_t smem_per_block;       /* default static limit, bytes */
  int64_t smem_per_block_optin; /* with the opt-in attribute, bytes */
  int max_threads_per_block;
  int max_threads_dim[3];
  int warp_size;
  int sm_count;
  int regs_per_block;
  int device_count; /* CUDA devices the process sees (the probe's; 0 from
                       a description file) */
} heron__hw;

/* Fills *hw from this machine for the cpu target. Never fails: unknown
 * values get conservative defaults (32 KiB L1, 1 MiB L2, 16-byte vectors).
 *
 * The environment variable HERON_CPU_ISA caps the instruction sets found,
 * so that one machine can test (or tune for) a smaller one:
 *   amx                  no cap below AMX (the same as native today)
 *   avx512 (or avx512f)  the AMX flags cleared: an AVX-512 CPU with its
 *                        VNNI and BF16 extensions (Ice Lake, Zen 4)
 *   avxvnni              has_avx512, has_vnni and has_avx512_bf16 cleared
 *                        as well: an AVX2 CPU with AVX-VNNI (Alder Lake)
 *   avx2                 has_avx_vnni cleared too: 32-byte vectors, 16
 *                        registers, like an AVX2-only CPU (Zen 3)
 *   sse                  has_avx2 and has_fma cleared as well: 16 bytes
 *   native, empty, unset no cap
 * The cap only lowers: HERON_CPU_ISA=avx512 on an AVX2 CPU finds AVX2.
 * Case and surrounding blanks do not matter.  A value that names none of
 * these is ignored (detection never fails), and the description's name says
 * so ("this machine (..., avx512, HERON_CPU_ISA ignored)"); a cap that
 * lowers the level is named there too ("avx2 by HERON_CPU_ISA"). */
void heron__hw_detect_cpu(heron__hw *hw);

/* Whether kernels built for the cpu description `hw` need instructions this
 * machine lacks: the template's flags (heron__template_cflags) enable
 * AVX-512F, AVX2 and FMA where the description has them, so a description
 * with has_avx512 needs avx512f, avx2 and fma; one with has_avx2 needs avx2,
 * one with has_fma needs fma.  This machine is what heron__hw_detect_cpu
 * finds, HERON_CPU_ISA's cap included.  Returns 1 and writes the missing
 * features, as cpuid and gcc name them ("avx512f" or "avx2, fma"), into
 * missing[cap] (truncated to fit; `missing` may be NULL); returns 0 and
 * writes "" when nothing is missing, for a NULL `hw` and for a cuda
 * description (kernels for a GPU never run on this CPU's vector units). */
int heron__hw_cpu_lacks(const heron__hw *hw, char *missing, size_t cap);

/* The same for kernels of an op dtype (heron__dtype): int8 kernels also
 * need the dot-product extension the cpu template picks from the
 * description ("avx512vnni" where it has AVX-512 and VNNI, else
 * "avxvnni" where it has AVX-VNNI), bf16 kernels "avx512bf16" where it has
 * AVX-512 and BF16; fp32 and fp16 need what heron__hw_cpu_lacks says. */
int heron__hw_cpu_lacks_for(const heron__hw *hw, int dtype, char *missing,
                            size_t cap);

/* Loads a description: `name_or_path` containing '/' or ending in ".json"
 * is a file, otherwise configs/hw/<name>.json in the data folder of the
 * running libheron (the source tree's configs/ for a build tree, <prefix>/
 * share/heron/configs when installed: core/plugin/dirs.h).  Unknown keys and wrong types are HERON_EPARSE naming the
 * key; a missing file is HERON_ENOTFOUND. Fields absent from the JSON keep
 * the detected cpu values. */
int heron__hw_load(const char *name_or_path, heron__hw *hw, heron_error *err);

#endif
