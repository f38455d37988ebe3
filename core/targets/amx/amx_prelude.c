/* core/targets/amx/amx_prelude.c - the prelude that gives a generated AMX
 * kernel its two meanings.
 *
 * The prelude is one text pasted into every generated source.  Without
 * HERON_EMULATE_AMX it includes <immintrin.h>, whose _tile_* intrinsics
 * compile to the AMX instructions (HERON__AMX_CFLAGS enables them), and
 * defines heron_amx_permit(), which asks Linux for the tile data state
 * before the first tile instruction (a process must, since Linux 5.16:
 * arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)).  With
 * HERON_EMULATE_AMX (HERON__AMX_EMU_CFLAGS) it defines the same intrinsics
 * as scalar C over a per-thread copy of the tile state - the palette-1
 * configuration and eight tiles of 16 rows x 64 bytes - following the
 * pseudocode of the Intel SDM (volume 2, "TDPBUSD", "TDPBF16PS",
 * "TILELOADD", "LDTILECFG"):
 *
 *   LDTILECFG   palette 0 releases; palette 1 takes rows <= 16 and colsb
 *               <= 64 for tiles 0..7, both zero or both nonzero, reserved
 *               bytes zero, and zeroes every tile; anything else faults
 *   TILELOADD   rows x colsb bytes from base + row * stride; the rest of
 *               the tile (bytes past colsb, rows past rows) becomes zero
 *   TILESTORED  rows x colsb bytes to base + row * stride
 *   TILEZERO    the whole tile zero
 *   TDPBUSD     C.s32[m][n] += sum over k < A.colsb / 4, i < 4 of
 *               u8(A[m][4k + i]) * s8(B[k][4n + i]), wrapping modulo 2^32
 *               (the hardware's integer adds cannot overflow otherwise)
 *   TDPBF16PS   in the order Sapphire Rapids' tiles add, which is not
 *               the SDM's: for k < A.colsb / 4, E += A.bf16[m][2k] *
 *               B.bf16[k][2n] and O += A.bf16[m][2k + 1] * B.bf16[k][2n +
 *               1] (two sums from 0, each in k's order), then C.f32[m][n]
 *               += (E + O); each step one fp32 addition rounded to nearest
 *               even.  The SDM's pseudocode adds every product to C in
 *               turn; the tiles do not (C = 1 plus two products of 2^-24
 *               gives 1 + 2^-23 there, 1 in the SDM's order), and this
 *               order matched them bit for bit on 100,000 random dot
 *               products (tests/targets/amx/test_amx_prelude.c, natively);
 *               bf16 inputs that are denormal count as zero (DAZ) and a
 *               denormal sum is flushed to zero (FTZ), as the SDM states
 *               for this instruction (MXCSR is neither read nor written);
 *               the product of two bf16 values is exact in fp32 (short of
 *               a product below 2^-126, which the emulation rounds to an
 *               fp32 denormal before adding; such inputs never occur in
 *               the tests), so each step rounds once, as a fused
 *               multiply-add would
 *   TILERELEASE the configuration back to its initial (unconfigured) state
 *
 * and checks the preconditions the hardware checks (#UD or #GP there): a
 * tile used before LDTILECFG, an unconfigured tile, a dot product whose
 * tiles are not three different ones or whose shapes break C.rows ==
 * A.rows, C.colsb == B.colsb, A.colsb == 4 * B.rows, colsb a multiple of 4
 * and B.rows <= 16.  A broken rule prints "heron-emulate-amx: <what>" and
 * aborts, so a wrong kernel stops instead of computing garbage quietly.
 *
 * The text is a string here rather than a header file so that generated
 * sources are self-contained (the worker's compiler and an emitted kernel
 * see only the source, never the libheron tree).
 */
#include "core/targets/amx/amx_template.h"

/* clang-format off */
static const char prelude[] =
    "/* ---- heron amx prelude (core/targets/amx/amx_prelude.c) ---- */\n"
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "\n"
    "#ifndef HERON_EMULATE_AMX\n"
    "/* ---- native: the intrinsics and the OS permission ---- */\n"
    "#include <errno.h>\n"
    "#include <immintrin.h>\n"
    "#include <sys/syscall.h>\n"
    "#include <unistd.h>\n"
    "\n"
    "#define HERON_ARCH_REQ_XCOMP_PERM 0x1023\n"
    "#define HERON_XFEATURE_XTILEDATA 18\n"
    "\n"
    "/* Asks Linux for the tile data state once per process (a fork inherits\n"
    " * it).  Without it the first tile instruction raises SIGILL; a refusal\n"
    " * is reported and the process stops. */\n"
    "static void heron_amx_permit(void) {\n"
    "  static int done;\n"
    "  if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))\n"
    "    return;\n"
    "  if (syscall(SYS_arch_prctl, HERON_ARCH_REQ_XCOMP_PERM,\n"
    "              HERON_XFEATURE_XTILEDATA) != 0) {\n"
    "    fprintf(stderr, \"heron-amx: the kernel refused the AMX tile data \"\n"
    "                    \"permission (arch_prctl ARCH_REQ_XCOMP_PERM): %s\\n\",\n"
    "            strerror(errno));\n"
    "    abort();\n"
    "  }\n"
    "  __atomic_store_n(&done, 1, __ATOMIC_RELEASE);\n"
    "}\n"
    "\n"
    "#else\n"
    "/* ---- emulated: the tile state and the intrinsics in scalar C ---- */\n"
    "\n"
    "static void heron_amx_permit(void) {}\n"
    "\n"
    "/* One thread's tiles, as the hardware keeps them per thread. */\n"
    "typedef struct heron_amx_state {\n"
    "  int configured;\n"
    "  int rows[8];\n"
    "  int colsb[8];\n"
    "  unsigned char t[8][16][64];\n"
    "} heron_amx_state;\n"
    "static _Thread_local heron_amx_state heron_amx;\n"
    "\n"
    "static void heron_amx_fault(const char *op, const char *what, int a,\n"
    "                            int b) {\n"
    "  fprintf(stderr, \"heron-emulate-amx: %s: %s (%d, %d)\\n\", op, what, a, b);\n"
    "  abort();\n"
    "}\n"
    "\n"
    "static void heron_amx_loadconfig(const void *p) {\n"
    "  const unsigned char *c = (const unsigned char *)p;\n"
    "  if (c[0] == 0) {\n"
    "    memset(&heron_amx, 0, sizeof heron_amx);\n"
    "    return;\n"
    "  }\n"
    "  if (c[0] != 1)\n"
    "    heron_amx_fault(\"LDTILECFG\", \"palette other than 0 or 1\", c[0], 0);\n"
    "  for (int i = 1; i < 16; i++)\n"
    "    if (c[i])\n"
    "      heron_amx_fault(\"LDTILECFG\", \"nonzero start_row or reserved byte\", i, c[i]);\n"
    "  for (int i = 0; i < 16; i++) {\n"
    "    int colsb = c[16 + 2 * i] | c[17 + 2 * i] << 8, rows = c[48 + i];\n"
    "    if (i >= 8) {\n"
    "      if (colsb || rows)\n"
    "        heron_amx_fault(\"LDTILECFG\", \"tile beyond the 8 of palette 1\", i, rows);\n"
    "      continue;\n"
    "    }\n"
    "    if (rows > 16 || colsb > 64)\n"
    "      heron_amx_fault(\"LDTILECFG\", \"rows > 16 or colsb > 64\", rows, colsb);\n"
    "    if ((rows == 0) != (colsb == 0))\n"
    "      heron_amx_fault(\"LDTILECFG\", \"one of rows and colsb is zero\", rows, colsb);\n"
    "    heron_amx.rows[i] = rows;\n"
    "    heron_amx.colsb[i] = colsb;\n"
    "  }\n"
    "  memset(heron_amx.t, 0, sizeof heron_amx.t);\n"
    "  heron_amx.configured = 1;\n"
    "}\n"
    "\n"
    "static void heron_amx_need(const char *op, int t) {\n"
    "  if (!heron_amx.configured)\n"
    "    heron_amx_fault(op, \"no tile configuration loaded\", t, 0);\n"
    "  if (t < 0 || t > 7 || heron_amx.rows[t] == 0)\n"
    "    heron_amx_fault(op, \"tile not configured\", t, 0);\n"
    "}\n"
    "\n"
    "static void heron_amx_loadd(int t, const void *base, long stride) {\n"
    "  heron_amx_need(\"TILELOADD\", t);\n"
    "  memset(heron_amx.t[t], 0, sizeof heron_amx.t[t]);\n"
    "  for (int r = 0; r < heron_amx.rows[t]; r++)\n"
    "    memcpy(heron_amx.t[t][r], (const char *)base + (long)r * stride,\n"
    "           (size_t)heron_amx.colsb[t]);\n"
    "}\n"
    "\n"
    "static void heron_amx_stored(int t, void *base, long stride) {\n"
    "  heron_amx_need(\"TILESTORED\", t);\n"
    "  for (int r = 0; r < heron_amx.rows[t]; r++)\n"
    "    memcpy((char *)base + (long)r * stride, heron_amx.t[t][r],\n"
    "           (size_t)heron_amx.colsb[t]);\n"
    "}\n"
    "\n"
    "static void heron_amx_zero(int t) {\n"
    "  heron_amx_need(\"TILEZERO\", t);\n"
    "  memset(heron_amx.t[t], 0, sizeof heron_amx.t[t]);\n"
    "}\n"
    "\n"
    "/* The checks both dot products share (the SDM's #UD conditions). */\n"
    "static void heron_amx_dp_check(const char *op, int c, int a, int b) {\n"
    "  heron_amx_need(op, c);\n"
    "  heron_amx_need(op, a);\n"
    "  heron_amx_need(op, b);\n"
    "  if (c == a || c == b || a == b)\n"
    "    heron_amx_fault(op, \"the three tiles are not different\", c, a);\n"
    "  if (heron_amx.colsb[c] % 4 || heron_amx.colsb[a] % 4 || heron_amx.colsb[b] % 4)\n"
    "    heron_amx_fault(op, \"colsb not a multiple of 4\", heron_amx.colsb[a], heron_amx.colsb[b]);\n"
    "  if (heron_amx.rows[c] != heron_amx.rows[a])\n"
    "    heron_amx_fault(op, \"C.rows != A.rows\", heron_amx.rows[c], heron_amx.rows[a]);\n"
    "  if (heron_amx.colsb[c] != heron_amx.colsb[b])\n"
    "    heron_amx_fault(op, \"C.colsb != B.colsb\", heron_amx.colsb[c], heron_amx.colsb[b]);\n"
    "  if (heron_amx.colsb[a] != 4 * heron_amx.rows[b])\n"
    "    heron_amx_fault(op, \"A.colsb != 4 * B.rows\", heron_amx.colsb[a], heron_amx.rows[b]);\n"
    "}\n"
    "\n"
    "/* Zeroes what the dot product leaves above its rows and columns. */\n"
    "static void heron_amx_dp_tail(int c) {\n"
    "  for (int r = 0; r < 16; r++) {\n"
    "    int from = r < heron_amx.rows[c] ? heron_amx.colsb[c] : 0;\n"
    "    memset(heron_amx.t[c][r] + from, 0, (size_t)(64 - from));\n"
    "  }\n"
    "}\n"
    "\n"
    "static void heron_amx_dpbusd(int c, int a, int b) {\n"
    "  heron_amx_dp_check(\"TDPBUSD\", c, a, b);\n"
    "  int rows = heron_amx.rows[c], kd = heron_amx.colsb[a] / 4;\n"
    "  int nd = heron_amx.colsb[c] / 4;\n"
    "  for (int m = 0; m < rows; m++) {\n"
    "    uint32_t acc[16];\n"
    "    memcpy(acc, heron_amx.t[c][m], sizeof acc);\n"
    "    for (int k = 0; k < kd; k++)\n"
    "      for (int n = 0; n < nd; n++) {\n"
    "        uint32_t s = acc[n];\n"
    "        for (int i = 0; i < 4; i++) {\n"
    "          int32_t x = heron_amx.t[a][m][4 * k + i];\n"
    "          int32_t y = (int8_t)heron_amx.t[b][k][4 * n + i];\n"
    "          s += (uint32_t)(x * y);\n"
    "        }\n"
    "        acc[n] = s;\n"
    "      }\n"
    "    memcpy(heron_amx.t[c][m], acc, sizeof acc);\n"
    "  }\n"
    "  heron_amx_dp_tail(c);\n"
    "}\n"
    "\n"
    "/* bf16 bits to fp32, a denormal as a zero of its sign (DAZ). */\n"
    "static float heron_amx_bf16(const unsigned char *p) {\n"
    "  uint32_t u = (uint32_t)(p[0] | p[1] << 8) << 16;\n"
    "  if ((u & 0x7f800000u) == 0)\n"
    "    u &= 0x80000000u;\n"
    "  float f;\n"
    "  memcpy(&f, &u, 4);\n"
    "  return f;\n"
    "}\n"
    "\n"
    "/* A denormal fp32 result as a zero of its sign (FTZ). */\n"
    "static float heron_amx_ftz(float f) {\n"
    "  uint32_t u;\n"
    "  memcpy(&u, &f, 4);\n"
    "  if ((u & 0x7f800000u) == 0)\n"
    "    u &= 0x80000000u;\n"
    "  memcpy(&f, &u, 4);\n"
    "  return f;\n"
    "}\n"
    "\n"
    "static void heron_amx_dpbf16ps(int c, int a, int b) {\n"
    "  heron_amx_dp_check(\"TDPBF16PS\", c, a, b);\n"
    "  int rows = heron_amx.rows[c], kd = heron_amx.colsb[a] / 4;\n"
    "  int nd = heron_amx.colsb[c] / 4;\n"
    "  for (int m = 0; m < rows; m++) {\n"
    "    float acc[16], sum[2][16] = {{0}};\n"
    "    memcpy(acc, heron_amx.t[c][m], sizeof acc);\n"
    "    /* As the hardware does: the even and the odd products are summed\n"
    "     * apart from each other and from C, each in k's order; then the\n"
    "     * two sums are added, and C last. */\n"
    "    for (int k = 0; k < kd; k++)\n"
    "      for (int n = 0; n < nd; n++)\n"
    "        for (int i = 0; i < 2; i++) {\n"
    "          float x = heron_amx_bf16(&heron_amx.t[a][m][4 * k + 2 * i]);\n"
    "          float y = heron_amx_bf16(&heron_amx.t[b][k][4 * n + 2 * i]);\n"
    "          /* x * y is exact (8-bit significands), so the sum is the\n"
    "           * step's one rounding (-ffp-contract=off keeps it apart). */\n"
    "          sum[i][n] = heron_amx_ftz(sum[i][n] + x * y);\n"
    "        }\n"
    "    for (int n = 0; n < nd; n++)\n"
    "      acc[n] = heron_amx_ftz(acc[n] + heron_amx_ftz(sum[0][n] + sum[1][n]));\n"
    "    memcpy(heron_amx.t[c][m], acc, sizeof acc);\n"
    "  }\n"
    "  heron_amx_dp_tail(c);\n"
    "}\n"
    "\n"
    "#define _tile_loadconfig(p) heron_amx_loadconfig(p)\n"
    "#define _tile_release() memset(&heron_amx, 0, sizeof heron_amx)\n"
    "#define _tile_loadd(t, base, stride) heron_amx_loadd(t, base, (long)(stride))\n"
    "#define _tile_stored(t, base, stride) heron_amx_stored(t, base, (long)(stride))\n"
    "#define _tile_zero(t) heron_amx_zero(t)\n"
    "#define _tile_dpbusd(c, a, b) heron_amx_dpbusd(c, a, b)\n"
    "#define _tile_dpbf16ps(c, a, b) heron_amx_dpbf16ps(c, a, b)\n"
    "#endif\n"
    "/* ---- end of the heron amx prelude ---- */\n";
/* clang-format on */

const char *heron__amx_prelude(void) { return prelude; }
