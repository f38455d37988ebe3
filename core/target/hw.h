/* core/target/hw.h - hardware descriptions, internal to libheron.
 *
 * For the cpu target the description is detected from the running machine
 * (cores, cache sizes from sysconf / sysfs, ISA from cpuid) unless a JSON
 * file is given; configs/hw/ holds descriptions of GPUs for the cuda target.
 */
#ifndef HERON_CORE_HW_H
#define HERON_CORE_HW_H

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
  /* cuda (filled from JSON or the device; unused by the cpu target) */
  int sm;                       /* compute capability * 10, e.g. 80 */
  int64_t smem_per_block;       /* default static limit, bytes */
  int64_t smem_per_block_optin; /* with the opt-in attribute, bytes */
  int max_threads_per_block;
  int max_threads_dim[3];
  int warp_size;
  int sm_count;
  int regs_per_block;
} heron__hw;

/* Fills *hw from this machine for the cpu target. Never fails: unknown
 * values get conservative defaults (32 KiB L1, 1 MiB L2, 16-byte vectors). */
void heron__hw_detect_cpu(heron__hw *hw);

/* Loads a description: `name_or_path` containing '/' or ending in ".json"
 * is a file, otherwise configs/hw/<name>.json found next to the build or
 * install tree.  Unknown keys and wrong types are HERON_EPARSE naming the
 * key; a missing file is HERON_ENOTFOUND. Fields absent from the JSON keep
 * the detected cpu values. */
int heron__hw_load(const char *name_or_path, heron__hw *hw, heron_error *err);

#endif
