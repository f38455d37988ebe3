/* core/targets/amx/amx_template.h - the AMX schedule template, shared by its
 * rules (amx_rules.c), the C generator (amx_codegen.c), the emulation
 * prelude (amx_prelude.c) and the native support probe (amx_probe.c).
 * Internal to libheron.
 *
 * Intel AMX (Advanced Matrix Extensions, Sapphire Rapids and later) adds
 * eight tile registers tmm0..tmm7 of up to 16 rows of 64 bytes each, a
 * tile configuration (palette 1: rows and bytes per row of every tile,
 * loaded with LDTILECFG) and tile dot products: TDPBUSD (u8 x s8 -> s32,
 * four products per 32-bit lane) and TDPBF16PS (bf16 x bf16 -> fp32, two
 * per lane).  For C += A * B with C of TM rows by TN 32-bit lanes:
 *
 *   C tile: TM rows, 4 * TN bytes a row
 *   A tile: TM rows, TK * esize bytes a row (TK elements of K)
 *   B tile: TK / V rows, 4 * TN bytes a row, in the VNNI layout: row q holds,
 *           for every column n, the V consecutive K elements 4q..4q+3
 *           (int8, V = 4) or 2q, 2q+1 (bf16, V = 2) of that column
 *
 * The ops are read through the GEMM view the cuda target shares (docs/targets/
 * cuda.md, core/sched/gemm_view.h): batch = the spatial axes both inputs
 * read, M = those only input 0 (A) reads, N = those only input 1 (B) reads, K =
 * the reductions; each group is one fused index split back into the op's axes
 * (div / mod) where a tensor is addressed.  A is the op's activation input
 * (op->act_input: gemm's A, gemv's x, a convolution's data), since TDPBUSD
 * takes its unsigned bytes from the A tile; for gemv that makes M empty and
 * the matrix rows N.  A is u8 (int8) or bf16, B is s8 or bf16, the
 * output is s32 or fp32.
 *
 * The loop nest of a kernel, outermost first:
 *
 *   parallel for (batch, no < N.o, mo < M.o)      one output block each,
 *                                                 M blocks fastest
 *     when (batch, no) changes: pack B's panel, all K blocks, in the VNNI
 *     layout [KC/V][BN][V], zero-filled past N and K (prepacked: none)
 *     for ko < K.o                                K blocks of BK elements
 *       pack A's block [BK/TK][BM][TK], zero-filled past M and K; none
 *       where M and K are tiled exactly: the A tiles load from A in place
 *       for mi < m.b, ni < n.b                    micro-kernels
 *         acc.m x acc.n C tiles = 0 (ko == 0) or loaded from the block's
 *         accumulator buffer (later ko)
 *         for kt < k.b: load acc.m A tiles and acc.n B tiles,
 *                       acc.m * acc.n tile dot products (interleaved)
 *         store the C tiles to the block's accumulator buffer
 *     copy the accumulator buffer's rows and columns inside M and N to the
 *     output (the fused epilogue on the way); where M and N are tiled
 *     exactly and there is no epilogue, the buffer is the output itself
 *
 * BM = m.b * acc.m * TM, BN = n.b * acc.n * TN, BK = k.b * TK; M.o, N.o,
 * K.o are the rounded-up block counts.  The tile registers: acc.m * acc.n
 * accumulators, acc.m A tiles, acc.n B tiles, at most 8 together.
 */
#ifndef HERON_CORE_TARGET_AMX_TEMPLATE_H
#define HERON_CORE_TARGET_AMX_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/sched/gemm_view.h"
#include "core/sched/template.h"

/* Palette 1, the one palette AMX hardware has so far. */
#define HERON__AMX_TILES 8      /* tile registers */
#define HERON__AMX_MAX_ROWS 16  /* rows per tile */
#define HERON__AMX_MAX_COLSB 64 /* bytes per row */
#define HERON__AMX_CFG_BYTES 64 /* the LDTILECFG memory operand */

/* The two tile dot products. */
enum { HERON__AMX_INT8 = 0, HERON__AMX_BF16 = 1 };

typedef struct heron__amx_sched {
  int kind;   /* HERON__AMX_INT8 or HERON__AMX_BF16 */
  int esize;  /* bytes of an input element: 1 (u8, s8) or 2 (bf16) */
  int vnni;   /* K elements per 32-bit lane: 4 (int8) or 2 (bf16) */
  int ia, ib; /* op inputs of A (the activations: u8 for int8) and B */
  heron__gemm_group g[HERON__NGROUPS]; /* indexed by HERON__GB.. */
  int64_t k_padded;                    /* K rounded up to a multiple of vnni */

  /* Knobs. */
  int tm, tn, tk; /* tile rows, C tile lanes (columns), K elements per step */
  int am, an;     /* accumulator tiles per micro-kernel along M and N */
  int mb, nb, kb; /* micro-kernels per block along M, N; K steps per block */
  int mo, no, ko; /* block counts (ceil splits) */

  /* Aux: the tile configuration the kernel loads, and its register count. */
  int a_rows, a_colsb, b_rows, b_colsb, c_rows, c_colsb;
  int ntiles;
  /* Aux: block extents and the per-thread buffers' bytes. */
  int bm, bn, bk;
  int buf_bytes;
  int64_t buf_limit; /* what the buffers may take: the L2 of a core */
} heron__amx_sched;

/* The amx schedule of a template the amx rules built (t->sched). */
static inline heron__amx_sched *heron__amx_sched_of(const heron__template *t) {
  return (heron__amx_sched *)t->sched;
}

/* The amx rules: hang a heron__amx_sched on t->sched, fill it (t->op and
 * t->hw set) and post the space.
 * HERON_EUNSUPPORTED naming the reason for an op or dtype outside the view
 * (one input, an output written through a bounded or divided index, an
 * fp32 or fp16 op). */
int heron__amx_rules_apply(heron__template *t, heron_space *sp,
                           heron_error *err);

/* The generator: one self-contained C source for a valid config, built
 * natively with HERON__AMX_CFLAGS or emulated with HERON__AMX_EMU_CFLAGS. */
int heron__amx_codegen(const heron__template *t, const heron_space *sp,
                       const int64_t *cfg, heron__buf *out, heron_error *err);

/* Describe: the amx template's loop nest and rules. */
void heron__amx_describe(const heron__template *t, heron__buf *out);

/* The tile configuration of a config, as a kernel loads it: tiles
 * 0..am*an-1 are the accumulators (C), then am A tiles, then an B tiles;
 * the rest unused (0 rows, 0 bytes).  rows[] and colsb[] have 8 entries. */
typedef struct heron__amx_tilecfg {
  int ntiles; /* tiles in use */
  int nc, na; /* accumulators, A tiles (B tiles are ntiles - nc - na) */
  int rows[HERON__AMX_TILES];
  int colsb[HERON__AMX_TILES];
} heron__amx_tilecfg;
void heron__amx_tilecfg_of(const heron__template *t, const int64_t *cfg,
                           heron__amx_tilecfg *tc);

/* The prelude text pasted into every generated source (amx_prelude.c):
 * with HERON_EMULATE_AMX defined, scalar C definitions of the tile state
 * and of every AMX intrinsic the generator uses, checked against the ISA's
 * rules; without it, <immintrin.h> and the OS permission request. */
const char *heron__amx_prelude(void);

/* Build flags.  Native: the AMX instruction sets enabled explicitly, so the
 * kernels build on any machine with GCC >= 11 (they run only on one with
 * AMX).  Emulated: the same source with the prelude's scalar definitions,
 * for any x86-64 CPU; -O1, since an emulated kernel runs once (it is
 * checked, not timed) and its build is most of its cost; -ffp-contract=off
 * keeps each emulated bf16 step one rounded fp32 addition. */
#define HERON__AMX_CFLAGS                                                      \
  "-O3 -march=native -mamx-tile -mamx-int8 -mamx-bf16 -fopenmp -fPIC -shared"
#define HERON__AMX_EMU_CFLAGS                                                  \
  "-O1 -march=native -ffp-contract=off -DHERON_EMULATE_AMX -fopenmp -fPIC "    \
  "-shared"

/* ---- native support (amx_probe.c) -----------------------------------------
 */

/* What this machine offers, as the probe found it. */
typedef struct heron__amx_support {
  int cpu_tile, cpu_int8, cpu_bf16; /* CPUID.(7,0):EDX bits 24, 25, 22 */
  int os_xcr0;    /* XCR0 bits 17 (XTILECFG) and 18 (XTILEDATA) both set */
  int os_perm;    /* arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)
                     granted (tried in a child process, so the caller's own
                     permissions are left as they were) */
  int perm_errno; /* errno of a refused request, 0 otherwise */
  /* HERON_CPU_ISA (core/targets/hw.h) names a level below AMX (avx512,
   * avxvnni, avx2, sse): the CPU's AMX counts as absent, as the cpu
   * target's detection caps it, so an AMX machine can test the path of
   * one without.  The value as given, "" when there is no cap. */
  char isa_cap[16];
} heron__amx_support;

/* Probes the CPU (cpuid), the OS's XSAVE enabling (xgetbv) and the
 * kernel's permission (arch_prctl in a forked child).  Never fails: what
 * cannot be probed counts as absent. */
void heron__amx_probe(heron__amx_support *s);

/* Whether kernels of `kind` (HERON__AMX_INT8 / _BF16) can run natively
 * here: 1 when they can; 0 with the exact reason in why[cap] otherwise
 * ("this CPU lacks AMX (CPUID.7.0:EDX has no AMX-TILE and no AMX-INT8)",
 * "the OS has not enabled the AMX state (XCR0 bits 17, 18)", "the kernel
 * refused the AMX permission (arch_prctl ARCH_REQ_XCOMP_PERM: Invalid
 * argument; Linux >= 5.16 needed)"), short enough to fit an error's text
 * after "target amx: " and before "; use --emulate". */
int heron__amx_native_ok(const heron__amx_support *s, int kind, char *why,
                         size_t cap);

/* Settles whether a tuning run of an amx template can go ahead: a
 * compile-only or emulated run always can; a native one when
 * heron__amx_native_ok says so, else HERON_EUNSUPPORTED "target amx: <the
 * reason>; use --emulate". */
int heron__amx_setup_run(const heron__template *t, int compile_only,
                         int emulate, heron_error *err);

#endif
