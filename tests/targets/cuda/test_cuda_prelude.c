/* tests/targets/cuda/test_cuda_prelude.c - the CUDA kernel dialect's prelude
 * (core/targets/cuda/prelude*.c) and the launch line (launch.c).
 *
 * Hand-written kernels in the dialect - GEMMs on Tensor Core fragments in
 * every layout, with vector copies, guarded loads, bias and relu, and
 * small kernels for thread indices, barriers and shared memory - are built
 * both ways: by NVRTC for sm_80 and sm_90, and by the host compiler as the
 * emulation .so whose heron_kernel must reproduce a plain C reference
 * exactly (small integer inputs).  Kernels that break a rule of the dialect
 * must make the emulation abort with "heron-emulate:" and a message naming
 * the rule.  Emulated kernels run in a forked child: the death tests need
 * one anyway, a broken kernel cannot take the test down, and in a sanitizer
 * build ASan (which warns that it does not fully support swapcontext) only
 * sees the child.
 */
#include "test.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/targets/cuda/kernel.h"
#include "core/targets/cuda/toolchain.h"
#include "core/util/util.h"

#ifdef HERON_HAVE_NVRTC
#include <nvrtc.h>
#endif

typedef _Float16 half;

/* A hand-written kernel: its launch, the defines the code generator would
 * emit, and the text after the prelude. */
typedef struct kdesc {
  const char *name;
  heron__cuda_launch launch;
  int wmma[3];        /* HERON_WM, HERON_WN, HERON_WK */
  long long elems[4]; /* in0, in1, out, bias (0: no bias) */
  const char *body;
  int mma;   /* 1: the mma.sync prelude (heron__cuda_prelude_mma) follows */
  int async; /* 1: the cp.async prelude (heron__cuda_prelude_async) first */
  int wg_n;  /* > 0: the wgmma prelude for m64n<wg_n>k16 follows */
} kdesc;

/* The source as the code generator lays it out (cuda_kernel.h). */
static char *kernel_source(const kdesc *k) {
  heron__buf b = {0};
  char line[128];
  heron__cuda_launch_format(&k->launch, line, sizeof line);
  heron__buf_puts(&b, line);
  const heron__cuda_launch *l = &k->launch;
  heron__buf_printf(&b, "#define HERON_THREADS (%d * %d * %d)\n", l->block[0],
                    l->block[1], l->block[2]);
  heron__buf_printf(&b,
                    "#define HERON_GRID_X %d\n#define HERON_GRID_Y %d\n"
                    "#define HERON_GRID_Z %d\n",
                    l->grid[0], l->grid[1], l->grid[2]);
  heron__buf_printf(&b,
                    "#define HERON_BLOCK_X %d\n#define HERON_BLOCK_Y %d\n"
                    "#define HERON_BLOCK_Z %d\n",
                    l->block[0], l->block[1], l->block[2]);
  heron__buf_printf(&b, "#define HERON_SMEM_BYTES %lld\n",
                    (long long)l->smem_bytes);
  heron__buf_printf(&b,
                    "#define HERON_WM %d\n#define HERON_WN %d\n"
                    "#define HERON_WK %d\n",
                    k->wmma[0], k->wmma[1], k->wmma[2]);
  heron__buf_printf(&b,
                    "#define HERON_IN0_ELEMS %lld\n#define HERON_IN1_ELEMS "
                    "%lld\n#define HERON_OUT_ELEMS %lld\n"
                    "#define HERON_BIAS_ELEMS %lld\n",
                    k->elems[0], k->elems[1], k->elems[2], k->elems[3]);
  heron__buf_puts(&b, heron__cuda_prelude());
  if (k->async)
    heron__buf_puts(&b, heron__cuda_prelude_async());
  if (k->mma)
    heron__buf_puts(&b, heron__cuda_prelude_mma());
  if (k->wg_n) {
    heron__buf_printf(&b, "#define HERON_WG_N %d\n", k->wg_n);
    heron__cuda_prelude_wgmma(&b, k->wg_n);
  }
  heron__buf_puts(&b, k->body);
  return heron__buf_take(&b);
}

/* ---- the kernels -------------------------------------------------------- */

/* C[64x64] = relu(A[64x32] * B^T + bias), B stored [N][K]: 2 warps per
 * 32x32 block tile, K in two tiles of 16 (several barriers), A fragments
 * row, B fragments col, accumulators stored row; 8-half vector copies. */
static const kdesc k_gemm_rc = {
    .name = "gemm_rc",
    .launch = {{2, 2, 1}, {64, 1, 1}, 7680},
    .wmma = {16, 16, 16},
    .elems = {2048, 2048, 4096, 64},
    .body =
        "HERON_KERNEL(heron_cuda_kernel) {\n"
        "  HERON_SMEM_DECL;\n"
        "  heron_half *As = (heron_half *)(heron_smem + 0);\n"
        "  heron_half *Bs = (heron_half *)(heron_smem + 1536);\n"
        "  float *Cs = (float *)(heron_smem + 3072);\n"
        "  int tid = HERON_TX, warp = tid / 32;\n"
        "  int bm = HERON_BY * 32, bn = HERON_BX * 32;\n"
        "  HERON_FRAG_A(a, 1, row);\n"
        "  HERON_FRAG_B(b, 2, col);\n"
        "  HERON_FRAG_ACC(c, 2);\n"
        "  for (int j = 0; j < 2; j++)\n"
        "    HERON_FILL_ZERO(c[j]);\n"
        "  for (int k0 = 0; k0 < 32; k0 += 16) {\n"
        "    int r = tid / 2, c8 = tid % 2 * 8;\n"
        "    HERON_GCOPY(As + r * 24 + c8, in0, (bm + r) * 32 + k0 + c8, 8,\n"
        "                HERON_IN0_ELEMS);\n"
        "    HERON_GCOPY(Bs + r * 24 + c8, in1, (bn + r) * 32 + k0 + c8, 8,\n"
        "                HERON_IN1_ELEMS);\n"
        "    HERON_SYNC();\n"
        "    HERON_LOAD_A(a[0], As + warp * 16 * 24, 24, row);\n"
        "#pragma unroll 2\n"
        "    for (int j = 0; j < 2; j++) {\n"
        "      HERON_LOAD_B(b[j], Bs + j * 16 * 24, 24, col);\n"
        "      HERON_MMA(c[j], a[0], b[j]);\n"
        "    }\n"
        "    HERON_SYNC();\n"
        "  }\n"
        "  for (int j = 0; j < 2; j++)\n"
        "    HERON_STORE_ACC(Cs + warp * 16 * 36 + j * 16, c[j], 36, row);\n"
        "  HERON_SYNC();\n"
        "  for (int i = 0; i < 2; i++) {\n"
        "    int q = tid + i * 64, r = q / 4, c8 = q % 4 * 8;\n"
        "    heron_half v[8];\n"
        "    for (int e = 0; e < 8; e++) {\n"
        "      float x = Cs[r * 36 + c8 + e] + HERON_H2F(bias[bn + c8 + e]);\n"
        "      v[e] = HERON_F2H(x > 0.0f ? x : 0.0f);\n"
        "    }\n"
        "    HERON_GSTORE(out, (bm + r) * 64 + bn + c8, HERON_OUT_ELEMS, v, "
        "8);\n"
        "  }\n"
        "}\n"
        "HERON_EMU_ENTRY(heron_cuda_kernel)\n"};

/* C[32x64] = A * B with A stored [K][M] (col fragments) and B [K][N] (row
 * fragments), K = 48 in three tiles, accumulators stored col; a 32x2
 * block, 4- and 2-half copies, no bias (bias must arrive NULL). */
static const kdesc k_gemm_cr = {
    .name = "gemm_cr",
    .launch = {{2, 1, 1}, {32, 2, 1}, 7168},
    .wmma = {16, 16, 16},
    .elems = {1536, 3072, 2048, 0},
    .body =
        "HERON_KERNEL(heron_cuda_kernel) {\n"
        "  HERON_SMEM_DECL;\n"
        "  heron_half *As = (heron_half *)heron_smem;\n"
        "  heron_half *Bs = (heron_half *)(heron_smem + 1280);\n"
        "  float *Cs = (float *)(heron_smem + 2560);\n"
        "  int lin = HERON_TX + HERON_TY * 32, w = HERON_TY;\n"
        "  int bn = HERON_BX * 32;\n"
        "  HERON_FRAG_A(a, 1, col);\n"
        "  HERON_FRAG_B(b, 2, row);\n"
        "  HERON_FRAG_ACC(c, 2);\n"
        "  HERON_FILL_ZERO(c[0]);\n"
        "  HERON_FILL_ZERO(c[1]);\n"
        "  for (int k0 = 0; k0 < 48; k0 += 16) {\n"
        "    for (int i = 0; i < 2; i++) {\n"
        "      int q = lin + i * 64, k = q / 8, m4 = q % 8 * 4;\n"
        "      HERON_GCOPY(As + k * 40 + m4, in0, (k0 + k) * 32 + m4, 4,\n"
        "                  HERON_IN0_ELEMS);\n"
        "    }\n"
        "    for (int i = 0; i < 4; i++) {\n"
        "      int q = lin + i * 64, k = q / 16, n2 = q % 16 * 2;\n"
        "      HERON_GCOPY(Bs + k * 40 + n2, in1, (k0 + k) * 64 + bn + n2, 2,\n"
        "                  HERON_IN1_ELEMS);\n"
        "    }\n"
        "    HERON_SYNC();\n"
        "    HERON_LOAD_A(a[0], As + w * 16, 40, col);\n"
        "    for (int j = 0; j < 2; j++) {\n"
        "      HERON_LOAD_B(b[j], Bs + j * 16, 40, row);\n"
        "      HERON_MMA(c[j], a[0], b[j]);\n"
        "    }\n"
        "    HERON_SYNC();\n"
        "  }\n"
        "  for (int j = 0; j < 2; j++)\n"
        "    HERON_STORE_ACC(Cs + j * 16 * 36 + w * 16, c[j], 36, col);\n"
        "  HERON_SYNC();\n"
        "  for (int i = 0; i < 4; i++) {\n"
        "    int q = lin + i * 64, r = q / 8, n4 = q % 8 * 4;\n"
        "    heron_half v[4];\n"
        "    for (int e = 0; e < 4; e++)\n"
        "      v[e] = HERON_F2H(Cs[(n4 + e) * 36 + r] + (bias ? 1000.0f : "
        "0.0f));\n"
        "    HERON_GSTORE(out, r * 64 + bn + n4, HERON_OUT_ELEMS, v, 4);\n"
        "  }\n"
        "}\n"
        "HERON_EMU_ENTRY(heron_cuda_kernel)\n"};

/* C[20x22] = A[20x20] * B[20x22] + bias on the 32x8x16 shape, one warp per
 * 32x8 tile: every global element is a guarded HERON_GLOAD1 (zero outside
 * the matrix, whose indices then run past the buffers), the bias goes
 * through a local, and the output through guarded single-half stores. */
static const kdesc k_gemm_guarded = {
    .name = "gemm_guarded",
    .launch = {{3, 1, 1}, {32, 1, 1}, 3584},
    .wmma = {32, 8, 16},
    .elems = {400, 440, 440, 22},
    .body =
        "HERON_KERNEL(heron_cuda_kernel) {\n"
        "  HERON_SMEM_DECL;\n"
        "  heron_half *As = (heron_half *)heron_smem;\n"
        "  heron_half *Bs = (heron_half *)(heron_smem + 1536);\n"
        "  float *Cs = (float *)(heron_smem + 2048);\n"
        "  int tid = HERON_TX, bn = HERON_BX * 8;\n"
        "  HERON_FRAG_A(a, 1, row);\n"
        "  HERON_FRAG_B(b, 1, row);\n"
        "  HERON_FRAG_ACC(c, 1);\n"
        "  HERON_FILL_ZERO(c[0]);\n"
        "  for (int k0 = 0; k0 < 20; k0 += 16) {\n"
        "    for (int i = 0; i < 16; i++) {\n"
        "      int e = tid + i * 32, r = e / 16, k = e % 16;\n"
        "      HERON_GLOAD1(As + r * 24 + k, in0, r * 20 + k0 + k,\n"
        "                   HERON_IN0_ELEMS, r < 20 && k0 + k < 20);\n"
        "    }\n"
        "    for (int i = 0; i < 4; i++) {\n"
        "      int e = tid + i * 32, k = e / 8, n = e % 8;\n"
        "      HERON_GLOAD1(Bs + k * 16 + n, in1, (k0 + k) * 22 + bn + n,\n"
        "                   HERON_IN1_ELEMS, k0 + k < 20 && bn + n < 22);\n"
        "    }\n"
        "    HERON_SYNC();\n"
        "    HERON_LOAD_A(a[0], As, 24, row);\n"
        "    HERON_LOAD_B(b[0], Bs, 16, row);\n"
        "    HERON_MMA(c[0], a[0], b[0]);\n"
        "    HERON_SYNC();\n"
        "  }\n"
        "  HERON_STORE_ACC(Cs, c[0], 12, row);\n"
        "  HERON_SYNC();\n"
        "  for (int i = 0; i < 8; i++) {\n"
        "    int e = tid + i * 32, r = e / 8, n = e % 8;\n"
        "    heron_half bv, v[1];\n"
        "    HERON_GLOAD1(&bv, bias, bn + n, HERON_BIAS_ELEMS, bn + n < 22);\n"
        "    if (r < 20 && bn + n < 22) {\n"
        "      v[0] = HERON_F2H(Cs[r * 12 + n] + HERON_H2F(bv));\n"
        "      HERON_GSTORE(out, r * 22 + bn + n, HERON_OUT_ELEMS, v, 1);\n"
        "    }\n"
        "  }\n"
        "}\n"
        "HERON_EMU_ENTRY(heron_cuda_kernel)\n"};

/* Every thread of a 3-D grid of 3-D blocks writes its indices: 8 halves
 * per thread as four 2-half stores; no shared memory at all. */
static const kdesc k_indices = {
    .name = "indices",
    .launch = {{2, 3, 2}, {4, 2, 3}, 0},
    .wmma = {16, 16, 16},
    .elems = {8, 8, 2304, 0},
    .body = "HERON_KERNEL(heron_cuda_kernel) {\n"
            "  HERON_SMEM_DECL;\n"
            "  int blk = (HERON_BZ * 3 + HERON_BY) * 2 + HERON_BX;\n"
            "  int thr = (HERON_TZ * 2 + HERON_TY) * 4 + HERON_TX;\n"
            "  heron_half v[8];\n"
            "  v[0] = HERON_F2H((float)HERON_TX);\n"
            "  v[1] = HERON_F2H((float)HERON_TY);\n"
            "  v[2] = HERON_F2H((float)HERON_TZ);\n"
            "  v[3] = HERON_F2H((float)HERON_BX);\n"
            "  v[4] = HERON_F2H((float)HERON_BY);\n"
            "  v[5] = HERON_F2H((float)HERON_BZ);\n"
            "  v[6] = HERON_F2H((float)thr);\n"
            "  v[7] = HERON_F2H((float)blk);\n"
            "  for (int i = 0; i < 8; i += 2)\n"
            "    HERON_GSTORE(out, (blk * 24 + thr) * 8 + i, HERON_OUT_ELEMS, "
            "v + i,\n"
            "                 2);\n"
            "}\n"
            "HERON_EMU_ENTRY(heron_cuda_kernel)\n"};

/* Neighbours exchange values through shared memory, three rounds: right
 * only if every thread's write precedes every read (HERON_SYNC). */
static const kdesc k_barriers = {
    .name = "barriers",
    .launch = {{2, 1, 1}, {64, 1, 1}, 128},
    .wmma = {16, 16, 16},
    .elems = {8, 8, 128, 0},
    .body = "HERON_KERNEL(heron_cuda_kernel) {\n"
            "  HERON_SMEM_DECL;\n"
            "  heron_half *s = (heron_half *)heron_smem;\n"
            "  int t = HERON_TX;\n"
            "  float v = (float)(t % 8 + HERON_BX);\n"
            "  for (int r = 0; r < 3; r++) {\n"
            "    s[t] = HERON_F2H(v);\n"
            "    HERON_SYNC();\n"
            "    v = HERON_H2F(s[(t + 1) % 64]) + HERON_H2F(s[(t + 63) % 64]) "
            "- v;\n"
            "    HERON_SYNC();\n"
            "  }\n"
            "  heron_half o[1];\n"
            "  o[0] = HERON_F2H(v);\n"
            "  HERON_GSTORE(out, HERON_BX * 64 + t, HERON_OUT_ELEMS, o, 1);\n"
            "}\n"
            "HERON_EMU_ENTRY(heron_cuda_kernel)\n"};

/* Block 0 fills shared memory (1-half copies) and reads it back; block 1
 * reads it without writing, so it must see the NaN of a fresh block. */
static const kdesc k_fresh_smem = {
    .name = "fresh_smem",
    .launch = {{2, 1, 1}, {32, 1, 1}, 128},
    .wmma = {16, 16, 16},
    .elems = {32, 8, 64, 0},
    .body =
        "HERON_KERNEL(heron_cuda_kernel) {\n"
        "  HERON_SMEM_DECL;\n"
        "  heron_half *s = (heron_half *)heron_smem;\n"
        "  if (HERON_BX == 0)\n"
        "    HERON_GCOPY(s + HERON_TX, in0, HERON_TX, 1, HERON_IN0_ELEMS);\n"
        "  HERON_SYNC();\n"
        "  heron_half o[1];\n"
        "  o[0] = s[HERON_TX];\n"
        "  HERON_GSTORE(out, HERON_BX * 32 + HERON_TX, HERON_OUT_ELEMS, o, "
        "1);\n"
        "}\n"
        "HERON_EMU_ENTRY(heron_cuda_kernel)\n"};

static const kdesc *const good_kernels[] = {&k_gemm_rc,      &k_gemm_cr,
                                            &k_gemm_guarded, &k_indices,
                                            &k_barriers,     &k_fresh_smem};
#define NGOOD ((int)(sizeof good_kernels / sizeof good_kernels[0]))

/* ---- inputs and references ---------------------------------------------- */

/* Small integers, so every product and sum is exact in fp16 and fp32. */
static float val_a(long long i) { return (float)((i * 7 + 3) % 5 - 2); }
static float val_b(long long i) { return (float)((i * 5 + 1) % 7 - 3); }
static float val_bias(long long i) { return (float)(i % 9 - 4); }

/* Buffers the forked child writes and the parent reads: shared mappings. */
typedef struct bufs {
  half *p[4];
  long long n[4];
} bufs;

static int bufs_alloc(bufs *b, const kdesc *k) {
  memset(b, 0, sizeof *b);
  for (int i = 0; i < 4; i++) {
    b->n[i] = k->elems[i];
    if (b->n[i] == 0)
      continue;
    void *p = mmap(NULL, (size_t)b->n[i] * sizeof(half), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return -1;
    b->p[i] = p;
  }
  for (long long i = 0; i < b->n[0]; i++)
    b->p[0][i] = (half)val_a(i);
  for (long long i = 0; i < b->n[1]; i++)
    b->p[1][i] = (half)val_b(i);
  for (long long i = 0; i < b->n[2]; i++)
    b->p[2][i] = (half)-777.0f; /* stale output: must all be overwritten */
  for (long long i = 0; i < b->n[3]; i++)
    b->p[3][i] = (half)val_bias(i);
  return 0;
}

static void bufs_free(bufs *b) {
  for (int i = 0; i < 4; i++)
    if (b->p[i])
      munmap(b->p[i], (size_t)b->n[i] * sizeof(half));
}

/* Compares out with ref[n] exactly; NaN in ref means "must be NaN". */
static int same_output(const char *what, const half *out, const float *ref,
                       long long n) {
  for (long long i = 0; i < n; i++) {
    float o = (float)out[i];
    int ok = isnan(ref[i]) ? isnan(o) : o == ref[i];
    if (!ok) {
      fprintf(stderr, "%s: out[%lld] = %g, expected %g\n", what, i, o, ref[i]);
      return 0;
    }
  }
  return 1;
}

static float *ref_gemm_rc(const bufs *b) {
  float *ref = calloc(64 * 64, sizeof *ref);
  for (int m = 0; m < 64; m++)
    for (int n = 0; n < 64; n++) {
      float s = (float)b->p[3][n];
      for (int k = 0; k < 32; k++)
        s += (float)b->p[0][m * 32 + k] * (float)b->p[1][n * 32 + k];
      ref[m * 64 + n] = s > 0 ? s : 0;
    }
  return ref;
}

static float *ref_gemm_cr(const bufs *b) {
  float *ref = calloc(32 * 64, sizeof *ref);
  for (int m = 0; m < 32; m++)
    for (int n = 0; n < 64; n++) {
      float s = 0;
      for (int k = 0; k < 48; k++)
        s += (float)b->p[0][k * 32 + m] * (float)b->p[1][k * 64 + n];
      ref[m * 64 + n] = s;
    }
  return ref;
}

static float *ref_gemm_guarded(const bufs *b) {
  float *ref = calloc(20 * 22, sizeof *ref);
  for (int m = 0; m < 20; m++)
    for (int n = 0; n < 22; n++) {
      float s = (float)b->p[3][n];
      for (int k = 0; k < 20; k++)
        s += (float)b->p[0][m * 20 + k] * (float)b->p[1][k * 22 + n];
      ref[m * 22 + n] = s;
    }
  return ref;
}

static float *ref_indices(const bufs *b) {
  float *ref = calloc(2304, sizeof *ref);
  (void)b;
  for (int bz = 0; bz < 2; bz++)
    for (int by = 0; by < 3; by++)
      for (int bx = 0; bx < 2; bx++)
        for (int tz = 0; tz < 3; tz++)
          for (int ty = 0; ty < 2; ty++)
            for (int tx = 0; tx < 4; tx++) {
              int blk = (bz * 3 + by) * 2 + bx, thr = (tz * 2 + ty) * 4 + tx;
              float *r = ref + (blk * 24 + thr) * 8;
              r[0] = tx, r[1] = ty, r[2] = tz, r[3] = bx, r[4] = by;
              r[5] = bz, r[6] = thr, r[7] = blk;
            }
  return ref;
}

static float *ref_barriers(const bufs *b) {
  float *ref = calloc(128, sizeof *ref);
  (void)b;
  for (int bx = 0; bx < 2; bx++) {
    float v[64], s[64];
    for (int t = 0; t < 64; t++)
      v[t] = (float)(t % 8 + bx);
    for (int r = 0; r < 3; r++) {
      memcpy(s, v, sizeof s);
      for (int t = 0; t < 64; t++)
        v[t] = s[(t + 1) % 64] + s[(t + 63) % 64] - s[t];
    }
    memcpy(ref + bx * 64, v, sizeof v);
  }
  return ref;
}

static float *ref_fresh_smem(const bufs *b) {
  float *ref = calloc(64, sizeof *ref);
  for (int i = 0; i < 32; i++) {
    ref[i] = (float)b->p[0][i];
    ref[32 + i] = NAN;
  }
  return ref;
}

typedef float *(*ref_fn)(const bufs *b);

/* ---- building and running the emulation --------------------------------- */

/* A fresh scratch folder under TMPDIR, removed by the caller. */
static int scratch(char *dir, size_t cap) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, cap, "%s/heron-prelude-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  return mkdtemp(dir) ? 0 : -1;
}

/* Writes dir/<name>.c and compiles it with the emulation flags into
 * dir/<name>.so (path in so[cap]); prints the compiler's messages and
 * returns -1 on failure. */
static int build_emulated(const char *dir, const kdesc *k, char *so,
                          size_t cap) {
  char c[512], errf[512], cmd[2048];
  char *src = kernel_source(k);
  if (!src)
    return -1;
  snprintf(c, sizeof c, "%s/%s.c", dir, k->name);
  snprintf(errf, sizeof errf, "%s/%s.err", dir, k->name);
  snprintf(so, cap, "%s/%s.so", dir, k->name);
  heron_error err = {0};
  int rc = heron__write_file(c, src, strlen(src), &err);
  free(src);
  if (rc != HERON_OK) {
    fprintf(stderr, "%s\n", err.text);
    return -1;
  }
  snprintf(cmd, sizeof cmd,
           "cc " HERON__CUDA_EMU_CFLAGS " -o '%s' '%s' 2> '%s'", so, c, errf);
  if (system(cmd) != 0) {
    char *log = NULL;
    size_t len = 0;
    heron__read_file(errf, &log, &len, &err);
    fprintf(stderr, "%s: cc failed:\n%s\n", k->name, log ? log : "");
    free(log);
    return -1;
  }
  return 0;
}

typedef void (*kernel_fn)(void *const *bufs);

/* In a forked child: dlopens every sos[i] first (so they coexist in one
 * process), then calls each heron_kernel on args[i].  The child's stderr
 * comes back in err[cap]; returns its wait status, or -1. */
static int run_child(const char *const *sos, void *const *const *args, int n,
                     char *err, size_t cap) {
  int fds[2];
  if (pipe(fds) != 0)
    return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    void *h[4];
    close(fds[0]);
    dup2(fds[1], 2);
    alarm(60); /* a scheduler that never ends must not hang the test */
    for (int i = 0; i < n && i < 4; i++) {
      h[i] = dlopen(sos[i], RTLD_NOW | RTLD_LOCAL);
      if (!h[i]) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        _exit(3);
      }
    }
    for (int i = 0; i < n && i < 4; i++) {
      kernel_fn fn = (kernel_fn)(uintptr_t)dlsym(h[i], "heron_kernel");
      if (!fn) {
        fprintf(stderr, "no heron_kernel in %s\n", sos[i]);
        _exit(3);
      }
      fn(args[i]);
    }
    _exit(0);
  }
  close(fds[1]);
  heron_test_drain(fds[0], err, cap);
  int status;
  if (waitpid(pid, &status, 0) != pid)
    return -1;
  return status;
}

/* Builds kernel k, runs it on fresh inputs and compares with its
 * reference; 1 when it matches. */
static int emulate_and_check(const char *dir, const kdesc *k, ref_fn ref) {
  char so[512], err[8192];
  bufs b;
  if (build_emulated(dir, k, so, sizeof so) != 0 || bufs_alloc(&b, k) != 0)
    return 0;
  /* bufs[3] is a trap when the kernel has no bias: it must not be used. */
  void *args[4] = {b.p[0], b.p[1], b.p[2],
                   b.p[3] ? (void *)b.p[3] : (void *)(uintptr_t)16};
  const char *sos[1] = {so};
  void *const *argv[1] = {args};
  int status = run_child(sos, argv, 1, err, sizeof err);
  int ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok)
    fprintf(stderr, "%s: the emulation failed (status %#x):\n%s\n", k->name,
            status, err);
  float *r = ok ? ref(&b) : NULL;
  ok = ok && r && same_output(k->name, b.p[2], r, b.n[2]);
  free(r);
  bufs_free(&b);
  return ok;
}

/* ---- launch line -------------------------------------------------------- */

TEST(launch_line_round_trips_through_format_and_parse) {
  const heron__cuda_launch cases[] = {
      {.grid = {1, 1, 1}, .block = {1, 1, 1}, .smem_bytes = 0},
      {.grid = {128, 64, 12}, .block = {32, 4, 2}, .smem_bytes = 49152},
      {.grid = {2147483647, 65535, 65535},
       .block = {1024, 1, 1},
       .smem_bytes = 232448},
      {.grid = {3, 5, 7}, .block = {8, 8, 16}, .smem_bytes = (int64_t)1 << 40},
  };
  char line[160];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int n = heron__cuda_launch_format(&cases[i], line, sizeof line);
    CHECK_EQ(n, (long long)strlen(line));
    CHECK(line[n - 1] == '\n');
    heron__cuda_launch back;
    memset(&back, 0xab, sizeof back);
    CHECK_EQ(heron__cuda_launch_parse(line, &back), 0);
    for (int d = 0; d < 3; d++) {
      CHECK_EQ(back.grid[d], cases[i].grid[d]);
      CHECK_EQ(back.block[d], cases[i].block[d]);
    }
    CHECK_EQ(back.smem_bytes, cases[i].smem_bytes);
  }
  heron__cuda_launch_format(&cases[1], line, sizeof line);
  CHECK_MSG(strcmp(line, "/* heron-cuda grid 128 64 12 block 32 4 2 smem "
                         "49152 */\n") == 0,
            "line is \"%s\"", line);
}

TEST(launch_format_returns_the_full_length_when_truncated) {
  const heron__cuda_launch l = {
      .grid = {4, 2, 1}, .block = {128, 1, 1}, .smem_bytes = 1024};
  char big[160], small[16];
  int full = heron__cuda_launch_format(&l, big, sizeof big);
  int n = heron__cuda_launch_format(&l, small, sizeof small);
  CHECK_EQ(n, full);
  CHECK_EQ(strlen(small), sizeof small - 1);
  CHECK(strncmp(small, big, sizeof small - 1) == 0);
  CHECK_EQ(heron__cuda_launch_format(&l, NULL, 0), full);
}

TEST(launch_parse_reads_line_one_of_a_source) {
  heron__cuda_launch l;
  const char *src = "/* heron-cuda grid 8 4 1 block 64 2 1 smem 8192 */\r\n"
                    "#define HERON_THREADS (64 * 2 * 1)\n";
  CHECK_EQ(heron__cuda_launch_parse(src, &l), 0);
  CHECK_EQ(l.grid[0], 8);
  CHECK_EQ(l.block[1], 2);
  CHECK_EQ(l.smem_bytes, 8192);
  CHECK_EQ(heron__cuda_launch_parse("/*\theron-cuda  grid 1 1 1 block 1 1 1 "
                                    "smem 0\t*/",
                                    &l),
           0);
}

TEST(launch_parse_rejects_malformed_lines) {
  static const char *const bad[] = {
      "",
      "\n/* heron-cuda grid 1 1 1 block 1 1 1 smem 0 */\n", /* not line 1 */
      " /* heron-cuda grid 1 1 1 block 1 1 1 smem 0 */\n",
      "// heron-cuda grid 1 1 1 block 1 1 1 smem 0\n",
      "/*heron-cuda grid 1 1 1 block 1 1 1 smem 0 */\n",
      "/* heron-cuda grid 1 1 1 block 1 1 1 smem 0*/\n",
      "/* heron-cuda grid 1 1 block 1 1 1 smem 0 */\n",
      "/* heron-cuda grid 1 1 1 block 1 1 1 */\n",
      "/* heron-cuda grid 1 1 1 block 1 1 1 smem */\n",
      "/* heron-cuda grid 1 1 1 threads 1 1 1 smem 0 */\n",
      "/* heron-cuda grid 0 1 1 block 1 1 1 smem 0 */\n",
      "/* heron-cuda grid 1 1 1 block 1 0 1 smem 0 */\n",
      "/* heron-cuda grid -1 1 1 block 1 1 1 smem 0 */\n",
      "/* heron-cuda grid +1 1 1 block 1 1 1 smem 0 */\n",
      "/* heron-cuda grid 1 1 1 block 1 1 1 smem -4 */\n",
      "/* heron-cuda grid 2147483648 1 1 block 1 1 1 smem 0 */\n",
      "/* heron-cuda grid 1 1 1 block 1 1 1 smem 99999999999999999999 */\n",
      "/* heron-cuda grid 1x 1 1 block 1 1 1 smem 0 */\n",
      "/* heron-cuda grid 1 1 1block 1 1 1 smem 0 */\n",
      "/* heron-cuda grid 1 1 1 block 1 1 1 smem 0 */ int x;\n",
      "/* heron-cuda grid 1 1 1 block 1 1 1 smem 0 1 */\n",
      "/* heron-cuda grid 1.5 1 1 block 1 1 1 smem 0 */\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    heron__cuda_launch l = {
        .grid = {7, 7, 7}, .block = {7, 7, 7}, .smem_bytes = 7};
    CHECK_MSG(heron__cuda_launch_parse(bad[i], &l) == -1, "accepted \"%s\"",
              bad[i]);
    CHECK_EQ(l.grid[0], 7); /* untouched on failure */
  }
  heron__cuda_launch l;
  CHECK_EQ(heron__cuda_launch_parse(NULL, &l), -1);
}

/* ---- NVRTC -------------------------------------------------------------- */

#ifdef HERON_HAVE_NVRTC
/* Compiles src for the architecture sm (e.g. "sm_90a") with the options of
 * the cuda target and ptxas' statistics (-v); 0 and a non-empty cubin on
 * success, else -1 (-2 when NVRTC refuses the architecture itself); the
 * log in log[cap] either way. */
static int nvrtc_build_arch(const char *src, const char *sm, char *log,
                            size_t cap) {
  nvrtcProgram prog;
  char arch[48];
  snprintf(arch, sizeof arch, "--gpu-architecture=%s", sm);
  const char *opts[] = {arch, "-I" HERON_CUDA_INCLUDE_DIR, "-default-device",
                        "-std=c++17", "-Xptxas=-v"};
  log[0] = '\0';
  if (nvrtcCreateProgram(&prog, src, "kernel.cu", 0, NULL, NULL) !=
      NVRTC_SUCCESS)
    return -1;
  nvrtcResult rc = nvrtcCompileProgram(prog, 5, opts);
  size_t n = 0;
  if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 0) {
    char *full = malloc(n);
    if (full && nvrtcGetProgramLog(prog, full) == NVRTC_SUCCESS)
      snprintf(log, cap, "%s", full);
    free(full);
  }
  size_t cubin = 0;
  if (rc == NVRTC_SUCCESS)
    nvrtcGetCUBINSize(prog, &cubin);
  nvrtcDestroyProgram(&prog);
  if (rc == NVRTC_ERROR_INVALID_OPTION)
    return -2;
  return rc == NVRTC_SUCCESS && cubin > 0 ? 0 : -1;
}

static int nvrtc_build(const char *src, int sm, char *log, size_t cap) {
  char arch[16];
  snprintf(arch, sizeof arch, "sm_%d", sm);
  return nvrtc_build_arch(src, arch, log, cap);
}
#endif

TEST(nvrtc_compiles_every_kernel_for_sm80_and_sm90) {
#ifndef HERON_HAVE_NVRTC
  SKIP("libheron was built without NVRTC (no CUDA toolkit)");
#else
  static const int sms[] = {80, 90};
  char log[8192];
  for (int i = 0; i < NGOOD; i++) {
    char *src = kernel_source(good_kernels[i]);
    CHECK(src);
    for (int s = 0; s < 2; s++) {
      int rc = nvrtc_build(src, sms[s], log, sizeof log);
      if (rc != 0)
        free(src);
      CHECK_MSG(rc == 0, "%s for sm_%d:\n%s", good_kernels[i]->name, sms[s],
                log);
    }
    free(src);
  }
#endif
}

/* The loads name the layout again: one that disagrees with the fragment's
 * declared layout, or a vector width that is not 1, 2, 4 or 8, must not
 * compile, so such a kernel is a compile error and never a wrong result.
 * Each bad body is paired with the same body made right, which must
 * compile, so the failure is the one meant. */
TEST(nvrtc_rejects_a_layout_mismatch_and_a_bad_vector_width) {
#ifndef HERON_HAVE_NVRTC
  SKIP("libheron was built without NVRTC (no CUDA toolkit)");
#else
#define FRAG_BODY(decl, load)                                                  \
  "HERON_KERNEL(heron_cuda_kernel) {\n"                                        \
  "  HERON_SMEM_DECL;\n"                                                       \
  "  " decl ";\n"                                                              \
  "  " load ";\n"                                                              \
  "}\n"
  static const char *const pairs[][2] = {
      {FRAG_BODY("HERON_FRAG_A(a, 1, row)",
                 "HERON_LOAD_A(a[0], (heron_half *)heron_smem, 16, row)"),
       FRAG_BODY("HERON_FRAG_A(a, 1, row)",
                 "HERON_LOAD_A(a[0], (heron_half *)heron_smem, 16, col)")},
      {FRAG_BODY("HERON_FRAG_B(b, 1, col)",
                 "HERON_LOAD_B(b[0], (heron_half *)heron_smem, 16, col)"),
       FRAG_BODY("HERON_FRAG_B(b, 1, col)",
                 "HERON_LOAD_B(b[0], (heron_half *)heron_smem, 16, row)")},
      {FRAG_BODY("HERON_FRAG_B(b, 1, row)",
                 "HERON_LOAD_B(b[0], (heron_half *)heron_smem, 16, row)"),
       FRAG_BODY("HERON_FRAG_B(b, 1, row)",
                 "HERON_LOAD_A(b[0], (heron_half *)heron_smem, 16, row)")},
      {FRAG_BODY("int i = HERON_TX * 2",
                 "HERON_GCOPY((heron_half *)heron_smem + i, in0, i, 2, "
                 "HERON_IN0_ELEMS)"),
       FRAG_BODY("int i = HERON_TX * 2",
                 "HERON_GCOPY((heron_half *)heron_smem + i, in0, i, 3, "
                 "HERON_IN0_ELEMS)")},
  };
#undef FRAG_BODY
  char log[8192];
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    for (int bad = 0; bad < 2; bad++) {
      kdesc k = {.name = "pair",
                 .launch = {{1, 1, 1}, {32, 1, 1}, 1024},
                 .wmma = {16, 16, 16},
                 .elems = {64, 64, 64, 0},
                 .body = pairs[i][bad]};
      char *src = kernel_source(&k);
      CHECK(src);
      int rc = nvrtc_build(src, 80, log, sizeof log);
      free(src);
      if (bad)
        CHECK_MSG(rc != 0, "compiled:\n%s", pairs[i][bad]);
      else
        CHECK_MSG(rc == 0, "did not compile:\n%s\n%s", pairs[i][bad], log);
    }
#endif
}

/* ---- emulation: right results ------------------------------------------- */

TEST(emulated_gemm_row_a_col_b_with_bias_relu_matches_reference) {
  char dir[512];
  CHECK(scratch(dir, sizeof dir) == 0);
  int ok = emulate_and_check(dir, &k_gemm_rc, ref_gemm_rc);
  heron__rmtree(dir);
  CHECK(ok);
}

TEST(emulated_gemm_col_a_row_b_without_bias_matches_reference) {
  char dir[512];
  CHECK(scratch(dir, sizeof dir) == 0);
  int ok = emulate_and_check(dir, &k_gemm_cr, ref_gemm_cr);
  heron__rmtree(dir);
  CHECK(ok);
}

TEST(emulated_guarded_gemm_on_32x8x16_matches_reference) {
  char dir[512];
  CHECK(scratch(dir, sizeof dir) == 0);
  int ok = emulate_and_check(dir, &k_gemm_guarded, ref_gemm_guarded);
  heron__rmtree(dir);
  CHECK(ok);
}

TEST(emulated_threads_see_their_block_and_thread_indices) {
  char dir[512];
  CHECK(scratch(dir, sizeof dir) == 0);
  int ok = emulate_and_check(dir, &k_indices, ref_indices);
  heron__rmtree(dir);
  CHECK(ok);
}

TEST(emulated_barrier_makes_every_write_visible_before_any_read) {
  char dir[512];
  CHECK(scratch(dir, sizeof dir) == 0);
  int ok = emulate_and_check(dir, &k_barriers, ref_barriers);
  heron__rmtree(dir);
  CHECK(ok);
}

TEST(emulated_shared_memory_is_nan_at_the_start_of_every_block) {
  char dir[512];
  CHECK(scratch(dir, sizeof dir) == 0);
  int ok = emulate_and_check(dir, &k_fresh_smem, ref_fresh_smem);
  heron__rmtree(dir);
  CHECK(ok);
}

/* Every name of the emulation is static but heron_kernel, so two kernels
 * loaded at once each run their own code and scheduler. */
TEST(emulated_kernels_coexist_in_one_process) {
  char dir[512], so[2][512], err[8192];
  bufs b[2];
  CHECK(scratch(dir, sizeof dir) == 0);
  const kdesc *k[2] = {&k_gemm_rc, &k_gemm_cr};
  int built = 0;
  for (int i = 0; i < 2; i++)
    built += build_emulated(dir, k[i], so[i], sizeof so[i]) == 0 &&
             bufs_alloc(&b[i], k[i]) == 0;
  if (built != 2)
    heron__rmtree(dir);
  CHECK_EQ(built, 2);
  void *a0[4] = {b[0].p[0], b[0].p[1], b[0].p[2], b[0].p[3]};
  void *a1[4] = {b[1].p[0], b[1].p[1], b[1].p[2], NULL};
  const char *sos[2] = {so[0], so[1]};
  void *const *argv[2] = {a0, a1};
  int status = run_child(sos, argv, 2, err, sizeof err);
  heron__rmtree(dir);
  float *r0 = ref_gemm_rc(&b[0]), *r1 = ref_gemm_cr(&b[1]);
  int ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
           same_output("gemm_rc", b[0].p[2], r0, b[0].n[2]) &&
           same_output("gemm_cr", b[1].p[2], r1, b[1].n[2]);
  free(r0);
  free(r1);
  bufs_free(&b[0]);
  bufs_free(&b[1]);
  CHECK_MSG(ok, "status %#x:\n%s", status, err);
}

/* ---- emulation: broken rules abort -------------------------------------- */

/* A kernel that breaks one rule, and a phrase its message must hold. */
typedef struct death_case {
  const char *name;
  int threads; /* block x; 1 block */
  long long smem;
  const char *body;
  const char *expect;
} death_case;

/* Each case runs in a forked child that must die of SIGABRT after
 * printing "heron-emulate:" and the expected phrase (or, with no phrase,
 * exit cleanly). */
static int dies_with_preludes(const char *dir, const death_case *c, int async,
                              int mma) {
  char so[512], err[8192];
  kdesc k = {.name = c->name,
             .launch = {{1, 1, 1}, {c->threads, 1, 1}, c->smem},
             .wmma = {16, 16, 16},
             .elems = {256, 256, 256, 0},
             .body = c->body,
             .mma = mma,
             .async = async};
  bufs b;
  if (build_emulated(dir, &k, so, sizeof so) != 0 || bufs_alloc(&b, &k) != 0)
    return 0;
  void *args[4] = {b.p[0], b.p[1], b.p[2], NULL};
  const char *sos[1] = {so};
  void *const *argv[1] = {args};
  int status = run_child(sos, argv, 1, err, sizeof err);
  bufs_free(&b);
  if (!c->expect) {
    /* A twin that must run to the end. */
    int lived = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!lived)
      fprintf(stderr, "%s: expected a clean exit; got status %#x:\n%s\n",
              c->name, status, err);
    return lived;
  }
  int died = status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  int said = strstr(err, "heron-emulate:") && strstr(err, c->expect);
  if (!died || !said)
    fprintf(stderr,
            "%s: expected SIGABRT and \"heron-emulate: ...%s...\"; got "
            "status %#x and stderr:\n%s\n",
            c->name, c->expect, status, err);
  return died && said;
}

static int dies_with(const char *dir, const death_case *c) {
  return dies_with_preludes(dir, c, 0, 0);
}

static int all_die(const death_case *cases, int n) {
  char dir[512];
  int ok = 1;
  if (scratch(dir, sizeof dir) != 0)
    return 0;
  for (int i = 0; i < n; i++)
    ok &= dies_with(dir, &cases[i]);
  heron__rmtree(dir);
  return ok;
}

#define KERNEL_OPEN                                                            \
  "HERON_KERNEL(heron_cuda_kernel) {\n"                                        \
  "  HERON_SMEM_DECL;\n"                                                       \
  "  heron_half *s = (heron_half *)heron_smem;\n"                              \
  "  (void)s;\n"
#define KERNEL_CLOSE                                                           \
  "}\n"                                                                        \
  "HERON_EMU_ENTRY(heron_cuda_kernel)\n"

TEST(emulation_aborts_on_a_misaligned_gcopy) {
  static const death_case cases[] = {
      {"gcopy_global_misaligned", 32, 1024,
       KERNEL_OPEN "  HERON_GCOPY(s + HERON_TX * 8, in0, HERON_TX * 8 + 4, 8,\n"
                   "              HERON_IN0_ELEMS);\n" KERNEL_CLOSE,
       "in0[4] is not 16-byte aligned"},
      {"gcopy_shared_misaligned", 32, 1024,
       KERNEL_OPEN "  HERON_GCOPY(s + HERON_TX * 8 + 2, in0, HERON_TX * 8, 8,\n"
                   "              HERON_IN0_ELEMS);\n" KERNEL_CLOSE,
       "is not 16-byte aligned"},
      {"gcopy_bad_width", 32, 1024,
       KERNEL_OPEN
       "  HERON_GCOPY(s, in0, 0, 3, HERON_IN0_ELEMS);\n" KERNEL_CLOSE,
       "V = 3 is not 1, 2, 4 or 8"},
  };
  CHECK(all_die(cases, 3));
}

TEST(emulation_aborts_on_an_out_of_range_index) {
  static const death_case cases[] = {
      {"gcopy_past_the_end", 32, 1024,
       KERNEL_OPEN "  HERON_GCOPY(s + HERON_TX * 8, in0, HERON_TX * 8 + 8, 8,\n"
                   "              HERON_IN0_ELEMS);\n" KERNEL_CLOSE,
       "in0[256..264) is out of range"},
      {"gcopy_negative", 32, 1024,
       KERNEL_OPEN "  HERON_GCOPY(s, in1, HERON_TX - 2, 2, "
                   "HERON_IN1_ELEMS);\n" KERNEL_CLOSE,
       "in1[-2..0) is out of range"},
      {"gload1_past_the_end", 32, 1024,
       KERNEL_OPEN "  heron_half x;\n"
                   "  HERON_GLOAD1(&x, in0, HERON_TX + 250, HERON_IN0_ELEMS, "
                   "1);\n" KERNEL_CLOSE,
       "index HERON_TX + 250 = 256 of in0 is out of range"},
      {"gstore_past_the_end", 32, 1024,
       KERNEL_OPEN "  heron_half v[2];\n"
                   "  v[0] = v[1] = HERON_F2H(1.0f);\n"
                   "  HERON_GSTORE(out, HERON_TX * 8 + 8, HERON_OUT_ELEMS, v, "
                   "2);\n" KERNEL_CLOSE,
       "out[256..258) is out of range"},
      {"gcopy_to_a_local", 32, 1024,
       KERNEL_OPEN
       "  heron_half loc[64];\n"
       "  heron_half *p = (heron_half *)(((long)loc + 31) & ~31L);\n"
       "  HERON_GCOPY(p, in0, 0, 8, HERON_IN0_ELEMS);\n" KERNEL_CLOSE,
       "outside the shared plan"},
  };
  CHECK(all_die(cases, 5));
}

TEST(emulation_aborts_on_a_fragment_access_outside_the_shared_plan) {
  static const death_case cases[] = {
      {"load_a_past_the_plan", 32, 1024,
       KERNEL_OPEN "  HERON_FRAG_A(a, 1, row);\n"
                   "  HERON_LOAD_A(a[0], s + 384, 16, row);\n" KERNEL_CLOSE,
       "outside the shared plan of 1024 bytes"},
      {"load_b_col_past_the_plan", 32, 1024,
       KERNEL_OPEN "  HERON_FRAG_B(b, 1, col);\n"
                   "  HERON_LOAD_B(b[0], s + 32, 32, col);\n" KERNEL_CLOSE,
       "HERON_LOAD_B: the 16x16 col-major tile"},
      {"store_acc_past_the_plan", 32, 1024,
       KERNEL_OPEN
       "  HERON_FRAG_ACC(c, 1);\n"
       "  HERON_FILL_ZERO(c[0]);\n"
       "  HERON_STORE_ACC((float *)(s + 32), c[0], 16, col);\n" KERNEL_CLOSE,
       "HERON_STORE_ACC: the 16x16 col-major fp32 tile"},
      {"load_a_misaligned", 32, 1024,
       KERNEL_OPEN "  HERON_FRAG_A(a, 1, col);\n"
                   "  HERON_LOAD_A(a[0], s + 8, 16, col);\n" KERNEL_CLOSE,
       "(byte offset 16) is not 32-byte aligned"},
      {"load_b_bad_ldm", 32, 1024,
       KERNEL_OPEN "  HERON_FRAG_B(b, 1, row);\n"
                   "  HERON_LOAD_B(b[0], s, 12, row);\n" KERNEL_CLOSE,
       "ldm = 12 is not a positive multiple of 8"},
      {"store_acc_bad_ldm", 32, 2048,
       KERNEL_OPEN
       "  HERON_FRAG_ACC(c, 1);\n"
       "  HERON_FILL_ZERO(c[0]);\n"
       "  HERON_STORE_ACC((float *)s, c[0], 18, row);\n" KERNEL_CLOSE,
       "ldm = 18 is not a positive multiple of 4"},
      {"plain_write_before_the_plan", 32, 1024,
       KERNEL_OPEN "  if (HERON_TX == 3)\n"
                   "    s[-5] = HERON_F2H(2.0f);\n" KERNEL_CLOSE,
       "10 bytes before the shared plan"},
  };
  CHECK(all_die(cases, 7));
}

TEST(emulation_aborts_on_a_barrier_reached_by_only_some_threads) {
  static const death_case cases[] = {
      {"barrier_in_half_the_threads", 64, 1024,
       KERNEL_OPEN "  if (HERON_TX < 16)\n"
                   "    HERON_SYNC();\n" KERNEL_CLOSE,
       "barrier divergence"},
      {"barrier_skipped_by_thread_0", 64, 1024,
       KERNEL_OPEN "  HERON_SYNC();\n"
                   "  if (HERON_TX != 0)\n"
                   "    HERON_SYNC();\n" KERNEL_CLOSE,
       "reached barrier 2 (HERON_SYNC) but thread (0,0,0) finished after 1"},
  };
  CHECK(all_die(cases, 2));
}

TEST(emulation_aborts_on_lane_dependent_or_partial_warp_fragment_ops) {
  static const death_case cases[] = {
      {"lane_dependent_load", 32, 1024,
       KERNEL_OPEN
       "  HERON_FRAG_A(a, 1, row);\n"
       "  HERON_LOAD_A(a[0], s + HERON_TX % 2 * 16, 16, row);\n" KERNEL_CLOSE,
       "warp-collective"},
      {"fill_in_some_lanes", 32, 1024,
       KERNEL_OPEN "  HERON_FRAG_ACC(c, 1);\n"
                   "  if (HERON_TX != 5)\n"
                   "    HERON_FILL_ZERO(c[0]);\n" KERNEL_CLOSE,
       "warp-collective"},
      {"partial_warp", 48, 1024,
       KERNEL_OPEN "  HERON_FRAG_ACC(c, 1);\n"
                   "  HERON_FILL_ZERO(c[0]);\n" KERNEL_CLOSE,
       "partial warp"},
  };
  CHECK(all_die(cases, 3));
}

TEST(emulation_aborts_unless_each_output_element_is_written_once) {
  static const death_case cases[] = {
      {"written_twice", 32, 0,
       "HERON_KERNEL(heron_cuda_kernel) {\n"
       "  heron_half v[1];\n"
       "  v[0] = HERON_F2H(1.0f);\n"
       "  HERON_GSTORE(out + 2, HERON_TX % 2, HERON_OUT_ELEMS - 2, v, 1);\n"
       "}\n"
       "HERON_EMU_ENTRY(heron_cuda_kernel)\n",
       "out + 2[0] (out[2]) is written a second time"},
      {"never_written", 32, 0,
       "HERON_KERNEL(heron_cuda_kernel) {\n"
       "  heron_half v[8];\n"
       "  for (int i = 0; i < 8; i++)\n"
       "    v[i] = HERON_F2H(1.0f);\n"
       "  if (HERON_TX != 7)\n"
       "    HERON_GSTORE(out, HERON_TX * 8, HERON_OUT_ELEMS, v, 8);\n"
       "}\n"
       "HERON_EMU_ENTRY(heron_cuda_kernel)\n",
       "out[56] was never written"},
  };
  CHECK(all_die(cases, 2));
}

/* cp.async groups: the emulation copies at once but counts each copy
 * pending on its shared bytes until a HERON_CP_WAIT of the issuing thread
 * covers its group; a fragment load of pending bytes (wmma or ldmatrix), a
 * C.shared store onto them, and a copy onto them abort.  Each thread
 * issues 16 bytes into [0, 512) (group 0) and 16 into [512, 1024) (group
 * 1): after wait_group 1 and a barrier the first half is ready, the second
 * is not; wait_group 2 leaves both pending, and a copy never committed
 * stays pending whatever the wait. */
#define CP_TWO_GROUPS(WAIT)                                                    \
  "  HERON_CP_ASYNC(s + HERON_TX * 8, in0, HERON_TX * 8, 8, HERON_IN0_ELEMS, " \
  "1);\n"                                                                      \
  "  HERON_CP_COMMIT();\n"                                                     \
  "  HERON_CP_ASYNC(s + 256 + HERON_TX * 8, in1, HERON_TX * 8, 8,\n"           \
  "                 HERON_IN1_ELEMS, HERON_TX % 2);\n"                         \
  "  HERON_CP_COMMIT();\n"                                                     \
  "  HERON_CP_WAIT(" WAIT ");\n"                                               \
  "  HERON_SYNC();\n"
#define CP_STORE_OUT                                                           \
  "  {\n"                                                                      \
  "    heron_half v[8];\n"                                                     \
  "    for (int i = 0; i < 8; i++)\n"                                          \
  "      v[i] = HERON_F2H(0.0f);\n"                                            \
  "    HERON_GSTORE(out, HERON_TX * 8, HERON_OUT_ELEMS, v, 8);\n"              \
  "  }\n"
TEST(emulation_aborts_on_a_read_of_a_pending_cp_async_group) {
  static const struct {
    death_case d;
    int mma;
  } cases[] = {
      {{"cp_wait_1_load_a_ready", 32, 1024,
        KERNEL_OPEN CP_TWO_GROUPS("1") "  HERON_FRAG_A(a, 1, row);\n"
                                       "  HERON_LOAD_A(a[0], s, 16, row);\n"
                                       "  (void)a;\n" CP_STORE_OUT KERNEL_CLOSE,
        NULL},
       0},
      {{"cp_wait_2_load_a_pending", 32, 1024,
        KERNEL_OPEN CP_TWO_GROUPS("2") "  HERON_FRAG_A(a, 1, row);\n"
                                       "  HERON_LOAD_A(a[0], s, 16, row);\n"
                                       "  (void)a;\n" CP_STORE_OUT KERNEL_CLOSE,
        "HERON_LOAD_A: read of shared memory whose cp.async group is still "
        "pending (byte offset 0)"},
       0},
      {{"cp_wait_1_load_b_second_group", 32, 1024,
        KERNEL_OPEN CP_TWO_GROUPS(
            "1") "  HERON_FRAG_B(b, 1, col);\n"
                 "  HERON_LOAD_B(b[0], s + 256, 16, col);\n"
                 "  (void)b;\n" CP_STORE_OUT KERNEL_CLOSE,
        "HERON_LOAD_B: read of shared memory whose cp.async group is still "
        "pending (byte offset 512)"},
       0},
      {{"cp_wait_2_ldmatrix_pending", 32, 1024,
        KERNEL_OPEN CP_TWO_GROUPS("2") "  HERON_MFRAG_A(a, 1);\n"
                                       "  HERON_LDMATRIX_A(a[0], s, 16, row);\n"
                                       "  (void)a;\n" CP_STORE_OUT KERNEL_CLOSE,
        "HERON_LDMATRIX_A: read of shared memory whose cp.async group is "
        "still pending"},
       1},
      {{"cp_wait_1_ldmatrix_ready", 32, 1024,
        KERNEL_OPEN CP_TWO_GROUPS("1") "  HERON_MFRAG_A(a, 1);\n"
                                       "  HERON_LDMATRIX_A(a[0], s, 16, row);\n"
                                       "  (void)a;\n" CP_STORE_OUT KERNEL_CLOSE,
        NULL},
       1},
      {{"cp_uncommitted_stays_pending", 32, 1024,
        KERNEL_OPEN "  HERON_CP_ASYNC(s + HERON_TX * 8, in0, HERON_TX * 8, 8, "
                    "HERON_IN0_ELEMS, 1);\n"
                    "  HERON_CP_WAIT(0);\n"
                    "  HERON_SYNC();\n"
                    "  HERON_FRAG_A(a, 1, row);\n"
                    "  HERON_LOAD_A(a[0], s, 16, row);\n"
                    "  (void)a;\n" CP_STORE_OUT KERNEL_CLOSE,
        "read of shared memory whose cp.async group is still pending"},
       0},
      {{"cp_store_acc_onto_pending", 32, 1024,
        KERNEL_OPEN CP_TWO_GROUPS(
            "1") "  HERON_FRAG_ACC(c, 1);\n"
                 "  HERON_FILL_ZERO(c[0]);\n"
                 "  HERON_STORE_ACC((float *)s, c[0], 16, "
                 "row);\n" CP_STORE_OUT KERNEL_CLOSE,
        "HERON_STORE_ACC: write of shared memory whose cp.async group is "
        "still pending (byte offset 512)"},
       0},
      {{"cp_copy_onto_pending", 32, 1024,
        KERNEL_OPEN CP_TWO_GROUPS(
            "1") "  HERON_CP_ASYNC(s + 256 + HERON_TX * 8, in0, HERON_TX * 8, "
                 "8,\n"
                 "                 HERON_IN0_ELEMS, 1);\n" CP_STORE_OUT
                     KERNEL_CLOSE,
        "HERON_CP_ASYNC: write of shared memory whose cp.async group is still "
        "pending"},
       0},
  };
  char dir[512];
  CHECK(scratch(dir, sizeof dir) == 0);
  int ok = 1;
  for (int i = 0; i < 8; i++)
    ok &= dies_with_preludes(dir, &cases[i].d, 1, cases[i].mma);
  heron__rmtree(dir);
  CHECK(ok);
}

/* ---- the mma.sync path: ldmatrix and m16n8k16, lane by lane -------------- */

/* One warp multiplies a WM x 32 A by a 32 x WN B (two k-steps of 16) with
 * HERON_LDMATRIX_A / _B, HERON_MMA_SYNC and HERON_MSTORE_ACC; the shared
 * tiles in the layouts named (A row: [M][K], col: [K][M], so .trans; B col:
 * [N][K], row: [K][N], so .trans; the global inputs in the same order),
 * every shared row padded by 8 halves.  The 32 x 8 shape takes B with
 * ldmatrix .x2 and A with two .x4.  Every A and B element is distinct, and
 * the product goes out exactly: out[2e] = fp16(x), out[2e + 1] = fp16(x -
 * out[2e]) for element e = m * WN + n, so one value in a wrong lane shows
 * in the output.  The _swz cases keep A.shared and B.shared unpadded and
 * XOR-swizzled: stored through heron__swz, loaded with
 * HERON_LDMATRIX_A_SWZ / _B_SWZ (rows of 16 and 32 halves). */
typedef struct mma_case {
  const char *name;
  int wm, wn;
  int a_col, b_row, c_col; /* A M-inner, B N-inner, C.shared M-inner */
  int swz;                 /* A.shared and B.shared swizzled, unpadded */
} mma_case;

static const mma_case MMA_CASES[] = {
    {"mma_16x16_a_row_b_col_c_row", 16, 16, 0, 0, 0, 0},
    {"mma_16x16_a_col_b_row_c_col", 16, 16, 1, 1, 1, 0},
    {"mma_32x8_a_row_b_row_c_col", 32, 8, 0, 1, 1, 0},
    {"mma_32x8_a_col_b_col_c_row", 32, 8, 1, 0, 0, 0},
    {"mma_16x16_a_row_b_col_c_row_swz", 16, 16, 0, 0, 0, 1},
    {"mma_16x16_a_col_b_row_c_col_swz", 16, 16, 1, 1, 1, 1},
    {"mma_32x8_a_row_b_row_c_col_swz", 32, 8, 0, 1, 1, 1},
    {"mma_32x8_a_col_b_col_c_row_swz", 32, 8, 1, 0, 0, 1},
};
#define NMMA ((int)(sizeof MMA_CASES / sizeof MMA_CASES[0]))
#define MMA_K 32

/* Distinct values whose products and sums are exact in fp32, and whose
 * sums split exactly into two fp16 halves: A in [-16, 16) by 1/32, B in
 * [-4, 4) by 1/64. */
static float mma_val_a(long long i) { return (float)(i - 512) / 32.0f; }
static float mma_val_b(long long i) { return (float)(i - 256) / 64.0f; }

static void mma_kdesc(const mma_case *c, kdesc *k, char *body, size_t cap) {
  int a_inner = c->a_col ? c->wm : MMA_K, a_outer = c->a_col ? MMA_K : c->wm;
  int b_inner = c->b_row ? c->wn : MMA_K, b_outer = c->b_row ? MMA_K : c->wn;
  int pad = c->swz ? 0 : 8;
  int lda = a_inner + pad, ldb = b_inner + pad;
  int c_inner = c->c_col ? c->wm : c->wn, c_outer = c->c_col ? c->wn : c->wm;
  int ldc = c_inner + 4;
  int abytes = (2 * a_outer * lda + 127) / 128 * 128;
  int bbytes = (2 * b_outer * ldb + 127) / 128 * 128;
  int cbytes = 4 * c_outer * ldc;
  char cidx[64], sta[96], stb[96], lda_s[128], ldb_s[128];
  snprintf(cidx, sizeof cidx, c->c_col ? "n * %d + m" : "m * %d + n", ldc);
  /* Where element e of a global input goes, and the loads of k-step k0. */
  if (c->swz) {
    snprintf(sta, sizeof sta, "As + heron__swz(e / %d, e %% %d, %d)", a_inner,
             a_inner, lda);
    snprintf(stb, sizeof stb, "Bs + heron__swz(e / %d, e %% %d, %d)", b_inner,
             b_inner, ldb);
    snprintf(lda_s, sizeof lda_s, "HERON_LDMATRIX_A_SWZ(a[0], As, k0 * %d",
             c->a_col ? lda : 1);
    snprintf(ldb_s, sizeof ldb_s, "HERON_LDMATRIX_B_SWZ(b[0], Bs, k0 * %d",
             c->b_row ? ldb : 1);
  } else {
    snprintf(sta, sizeof sta, "As + e / %d * %d + e %% %d", a_inner, lda,
             a_inner);
    snprintf(stb, sizeof stb, "Bs + e / %d * %d + e %% %d", b_inner, ldb,
             b_inner);
    snprintf(lda_s, sizeof lda_s, "HERON_LDMATRIX_A(a[0], As + k0 * %d",
             c->a_col ? lda : 1);
    snprintf(ldb_s, sizeof ldb_s, "HERON_LDMATRIX_B(b[0], Bs + k0 * %d",
             c->b_row ? ldb : 1);
  }
  snprintf(body, cap,
           "HERON_KERNEL(heron_cuda_kernel) {\n"
           "  HERON_SMEM_DECL;\n"
           "  heron_half *As = (heron_half *)heron_smem;\n"
           "  heron_half *Bs = (heron_half *)(heron_smem + %d);\n"
           "  float *Cs = (float *)(heron_smem + %d);\n"
           "  const int lane = HERON_TX;\n"
           "  for (int e = lane; e < %d; e += 32)\n"
           "    HERON_GLOAD1(%s, in0, e, HERON_IN0_ELEMS, 1);\n"
           "  for (int e = lane; e < %d; e += 32)\n"
           "    HERON_GLOAD1(%s, in1, e, HERON_IN1_ELEMS, 1);\n"
           "  HERON_SYNC();\n"
           "  HERON_MFRAG_A(a, 1);\n"
           "  HERON_MFRAG_B(b, 1);\n"
           "  HERON_MFRAG_ACC(c, 1);\n"
           "  HERON_MFILL_ZERO(c[0]);\n"
           "  for (int k0 = 0; k0 < %d; k0 += 16) {\n"
           "    %s, %d, %s);\n"
           "    %s, %d, %s);\n"
           "    HERON_MMA_SYNC(c[0], a[0], b[0]);\n"
           "  }\n"
           "  HERON_MSTORE_ACC(Cs, c[0], %d, %s);\n"
           "  HERON_SYNC();\n"
           "  for (int e = lane; e < %d; e += 32) {\n"
           "    const int m = e / %d, n = e %% %d;\n"
           "    const float x = Cs[%s];\n"
           "    heron_half h[2];\n"
           "    h[0] = HERON_F2H(x);\n"
           "    h[1] = HERON_F2H(x - HERON_H2F(h[0]));\n"
           "    HERON_GSTORE(out, 2 * e, HERON_OUT_ELEMS, h, 2);\n"
           "  }\n"
           "}\n"
           "HERON_EMU_ENTRY(heron_cuda_kernel)\n",
           abytes, abytes + bbytes, a_outer * a_inner, sta, b_outer * b_inner,
           stb, MMA_K, lda_s, lda, c->a_col ? "col" : "row", ldb_s, ldb,
           c->b_row ? "row" : "col", ldc, c->c_col ? "col" : "row",
           c->wm * c->wn, c->wn, c->wn, cidx);
  memset(k, 0, sizeof *k);
  k->name = c->name;
  k->launch = (heron__cuda_launch){.grid = {1, 1, 1},
                                   .block = {32, 1, 1},
                                   .smem_bytes = abytes + bbytes + cbytes};
  k->wmma[0] = c->wm;
  k->wmma[1] = c->wn;
  k->wmma[2] = 16;
  k->elems[0] = (long long)c->wm * MMA_K;
  k->elems[1] = (long long)MMA_K * c->wn;
  k->elems[2] = 2LL * c->wm * c->wn;
  k->body = body;
  k->mma = 1;
}

/* The scalar product of the case, split into the two halves. */
static float *ref_mma(const mma_case *c, const bufs *b) {
  float *ref = calloc((size_t)(2 * c->wm * c->wn), sizeof *ref);
  for (int m = 0; m < c->wm; m++)
    for (int n = 0; n < c->wn; n++) {
      float x = 0;
      for (int k = 0; k < MMA_K; k++) {
        float a = (float)b->p[0][c->a_col ? k * c->wm + m : m * MMA_K + k];
        float v = (float)b->p[1][c->b_row ? k * c->wn + n : n * MMA_K + k];
        x += a * v;
      }
      half hi = (half)x;
      half lo = (half)(x - (float)hi);
      ref[2 * (m * c->wn + n)] = (float)hi;
      ref[2 * (m * c->wn + n) + 1] = (float)lo;
    }
  return ref;
}

/* Builds and runs case c's kernel in the emulation on distinct inputs;
 * 1 when its output is the scalar product's. */
static int mma_emulate(const char *dir, const mma_case *c) {
  char body[4096], so[512], err[8192];
  kdesc k;
  bufs b;
  mma_kdesc(c, &k, body, sizeof body);
  if (build_emulated(dir, &k, so, sizeof so) != 0 || bufs_alloc(&b, &k) != 0)
    return 0;
  for (long long i = 0; i < b.n[0]; i++)
    b.p[0][i] = (half)mma_val_a(i);
  for (long long i = 0; i < b.n[1]; i++)
    b.p[1][i] = (half)mma_val_b(i);
  void *args[4] = {b.p[0], b.p[1], b.p[2], (void *)(uintptr_t)16};
  const char *sos[1] = {so};
  void *const *argv[1] = {args};
  int status = run_child(sos, argv, 1, err, sizeof err);
  int ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok)
    fprintf(stderr, "%s: the emulation failed (status %#x):\n%s\n", k.name,
            status, err);
  float *r = ok ? ref_mma(c, &b) : NULL;
  ok = ok && r && same_output(k.name, b.p[2], r, b.n[2]);
  free(r);
  bufs_free(&b);
  return ok;
}

/* The emulation of ldmatrix (.x4, .x2, .trans) and mma.sync m16n8k16 holds
 * every lane's registers as the PTX ISA lays them out: with distinct
 * values, the product of every layout and both tile shapes is exact. */
TEST(emulated_ldmatrix_and_mma_sync_lanes_give_the_scalar_product) {
  char dir[512];
  CHECK(scratch(dir, sizeof dir) == 0);
  int ok = 1;
  for (int i = 0; i < NMMA; i++)
    ok &= mma_emulate(dir, &MMA_CASES[i]);
  heron__rmtree(dir);
  CHECK(ok);
}

TEST(nvrtc_compiles_the_mma_sync_kernels_for_sm80_and_sm90) {
#ifndef HERON_HAVE_NVRTC
  SKIP("libheron was built without NVRTC (no CUDA toolkit)");
#else
  static const int sms[] = {80, 90};
  char log[8192], body[4096];
  for (int i = 0; i < NMMA; i++) {
    kdesc k;
    mma_kdesc(&MMA_CASES[i], &k, body, sizeof body);
    char *src = kernel_source(&k);
    CHECK(src);
    for (int s = 0; s < 2; s++) {
      int rc = nvrtc_build(src, sms[s], log, sizeof log);
      if (rc != 0)
        free(src);
      CHECK_MSG(rc == 0, "%s for sm_%d:\n%s", k.name, sms[s], log);
    }
    free(src);
  }
#endif
}

/* ---- the wgmma path: descriptors, TMA, mbarriers (sm_90a) ---------------- */

/* One warpgroup (128 threads) computes D[64 x N] = A[64 x 64] * B[N x 64]^T
 * (both K-major, as the global inputs) with four HERON_WG_MMA of
 * m64nNk16 on one accumulator.  The operands reach shared memory as boxes
 * of W halves along K (W = the swizzle span / 2, or 8 without swizzle),
 * one after another: by TMA (tensor maps in the emulation's format,
 * bufs[4] and [5]; thread 0 arms an mbarrier with the bytes of every box,
 * issues them, and all threads wait on phase 0) or, with tma 0, by plain
 * stores at the offsets the test computes itself from the PTX ISA's
 * layouts: row r of a box at r * 2W bytes, then the swizzle XOR of the
 * byte offset's bits 4.. with its bits 7.. (3, 2, 1 bits for 128, 64 and
 * 32 bytes).  So the TMA emulation and the wgmma emulation are each held
 * against that statement of the layout, not only against each other.  The
 * product goes out as two halves per element, as in the mma.sync test.
 * fault: 0 none; 1 no HERON_WG_FENCE; 2 the store without HERON_WG_WAIT;
 * 3 the wait on phase parity 1 (never completed); 4 the TMA box on a
 * destination that is not aligned to its swizzle pattern. */
typedef struct wg_case {
  const char *name;
  int swz, n, tma, fault;
  const char *expect; /* fault's message, NULL for none */
} wg_case;

static const wg_case WG_CASES[] = {
    {"wg_none_n8_tma", 0, 8, 1, 0, NULL},
    {"wg_none_n64_tma", 0, 64, 1, 0, NULL},
    {"wg_32b_n64_tma", 32, 64, 1, 0, NULL},
    {"wg_64b_n24_tma", 64, 24, 1, 0, NULL},
    {"wg_128b_n64_tma", 128, 64, 1, 0, NULL},
    {"wg_128b_n256_tma", 128, 256, 1, 0, NULL},
    {"wg_none_n64_stores", 0, 64, 0, 0, NULL},
    {"wg_32b_n64_stores", 32, 64, 0, 0, NULL},
    {"wg_64b_n24_stores", 64, 24, 0, 0, NULL},
    {"wg_128b_n64_stores", 128, 64, 0, 0, NULL},
};
#define NWG ((int)(sizeof WG_CASES / sizeof WG_CASES[0]))
#define WG_K 64

/* Distinct A (every element, in [-16, 16) by 1/128) and B rows that
 * differ at every k ([-2, 2) by 1/64): every sum of 64 products is exact
 * in fp32 and splits exactly into two halves. */
static float wg_val_a(long long i) { return (float)(i - 2048) / 128.0f; }
static float wg_val_b(long long i) {
  return (float)(((i / WG_K) * 5 + (i % WG_K) * 3) % 256 - 128) / 64.0f;
}

/* The shared layout of case c: box width W, box bytes of A and B, plan. */
typedef struct wg_plan {
  int w, nbox, abox, bbox, abytes, bbytes, ldc, smem;
} wg_plan;

static wg_plan wg_plan_of(const wg_case *c) {
  wg_plan p;
  p.w = c->swz ? c->swz / 2 : 8;
  p.nbox = WG_K / p.w;
  p.abox = 64 * p.w * 2;
  p.bbox = c->n * p.w * 2;
  p.abytes = p.nbox * p.abox;
  p.bbytes = p.nbox * p.bbox;
  p.ldc = c->n + 4;
  /* 1024 bytes of slack to align the operands to the 128-byte swizzle's
   * repeat, the mbarrier in 16, then C. */
  p.smem = 1024 + p.abytes + p.bbytes + 16 + 4 * 64 * p.ldc;
  return p;
}

static void wg_kdesc(const wg_case *c, kdesc *k, char *body, size_t cap) {
  wg_plan p = wg_plan_of(c);
  int mask = c->swz == 128 ? 7 : c->swz == 64 ? 3 : c->swz == 32 ? 1 : 0;
  int sbo = c->swz ? 8 * c->swz : 128;
  heron__buf b = {0};
  heron__buf_printf(
      &b,
      "%s(heron_cuda_kernel) {\n"
      "  HERON_SMEM_DECL;\n"
      "  unsigned char *al =\n"
      "      heron_smem + (1024 - HERON_SMEM_ADDR(heron_smem) %% 1024) %% "
      "1024%s;\n"
      "  heron_half *As = (heron_half *)al;\n"
      "  heron_half *Bs = (heron_half *)(al + %d);\n"
      "  unsigned long long *bar = (unsigned long long *)(al + %d);\n"
      "  float *Cs = (float *)(al + %d);\n"
      "  const int tid = HERON_TX;\n",
      c->tma ? "HERON_KERNEL_TMA" : "HERON_KERNEL",
      c->fault == 4 ? " + 128" : "", p.abytes, p.abytes + p.bbytes,
      p.abytes + p.bbytes + 16);
  if (c->tma) {
    heron__buf_printf(
        &b,
        "  (void)Cs;\n"
        "  if (tid == 0) {\n"
        "    HERON_MBAR_INIT(bar, 1);\n"
        "    HERON_MBAR_FENCE_INIT();\n"
        "  }\n"
        "  HERON_SYNC();\n"
        "  if (tid == 0) {\n"
        "    HERON_MBAR_EXPECT_TX(bar, %d);\n"
        "    for (int j = 0; j < %d; j++) {\n"
        "      HERON_TMA_LOAD_2D(As + j * %d, tmap_a, j * %d, 0, bar);\n"
        "      HERON_TMA_LOAD_2D(Bs + j * %d, tmap_b, j * %d, 0, bar);\n"
        "    }\n"
        "  }\n"
        "  HERON_MBAR_WAIT(bar, %d);\n",
        p.abytes + p.bbytes, p.nbox, 64 * p.w, p.w, c->n * p.w, p.w,
        c->fault == 3);
  } else {
    /* Element (r, k): box k / W, row r of it, column k % W, swizzled. */
    heron__buf_printf(
        &b,
        "  (void)bar;\n"
        "  for (int e = tid; e < %d; e += 128) {\n"
        "    int o = e %% %d / %d * %d + e / %d * %d + e %% %d * 2;\n"
        "    o ^= ((o >> 7) & %d) << 4;\n"
        "    HERON_GLOAD1((heron_half *)((unsigned char *)As + o), in0, e,\n"
        "                 HERON_IN0_ELEMS, 1);\n"
        "  }\n"
        "  for (int e = tid; e < %d; e += 128) {\n"
        "    int o = e %% %d / %d * %d + e / %d * %d + e %% %d * 2;\n"
        "    o ^= ((o >> 7) & %d) << 4;\n"
        "    HERON_GLOAD1((heron_half *)((unsigned char *)Bs + o), in1, e,\n"
        "                 HERON_IN1_ELEMS, 1);\n"
        "  }\n"
        "  HERON_SYNC();\n",
        64 * WG_K, WG_K, p.w, p.abox, WG_K, 2 * p.w, p.w, mask, c->n * WG_K,
        WG_K, p.w, p.bbox, WG_K, 2 * p.w, p.w, mask);
  }
  heron__buf_printf(
      &b,
      "  HERON_WG_ACC(acc);\n"
      "  HERON_WG_FILL_ZERO(acc);\n"
      "%s"
      "  for (int s = 0; s < %d; s++) {\n"
      "    const int box = s * 16 / %d, in = s * 16 %% %d * 2;\n"
      "    HERON_WG_MMA(acc,\n"
      "                 HERON_WG_DESC((unsigned char *)As + box * %d + in, %d, "
      "%d, %d),\n"
      "                 HERON_WG_DESC((unsigned char *)Bs + box * %d + in, %d, "
      "%d, %d));\n"
      "  }\n"
      "  HERON_WG_COMMIT(acc);\n"
      "%s"
      "  HERON_WG_STORE_ACC(Cs, acc, %d);\n"
      "  HERON_SYNC();\n"
      "  for (int e = tid; e < %d; e += 128) {\n"
      "    const float x = Cs[e / %d * %d + e %% %d];\n"
      "    heron_half h[2];\n"
      "    h[0] = HERON_F2H(x);\n"
      "    h[1] = HERON_F2H(x - HERON_H2F(h[0]));\n"
      "    HERON_GSTORE(out, 2 * e, HERON_OUT_ELEMS, h, 2);\n"
      "  }\n"
      "}\n"
      "%s(heron_cuda_kernel)\n",
      c->fault == 1 ? "" : "  HERON_WG_FENCE(acc);\n", WG_K / 16, p.w, p.w,
      p.abox, c->swz ? 16 : p.abox, sbo, c->swz, p.bbox, c->swz ? 16 : p.bbox,
      sbo, c->swz, c->fault == 2 ? "" : "  HERON_WG_WAIT(acc, 0);\n", p.ldc,
      64 * c->n, c->n, p.ldc, c->n,
      c->tma ? "HERON_EMU_ENTRY_TMA" : "HERON_EMU_ENTRY");
  char *text = heron__buf_take(&b);
  snprintf(body, cap, "%s", text ? text : "");
  free(text);
  memset(k, 0, sizeof *k);
  k->name = c->name;
  k->launch = (heron__cuda_launch){
      .grid = {1, 1, 1}, .block = {128, 1, 1}, .smem_bytes = p.smem};
  k->wmma[0] = k->wmma[1] = k->wmma[2] = 16;
  k->elems[0] = 64LL * WG_K;
  k->elems[1] = (long long)c->n * WG_K;
  k->elems[2] = 2LL * 64 * c->n;
  k->body = body;
  k->wg_n = c->n;
}

/* The emulation's tensor map (kernel.h) of a rows x WG_K fp16 matrix. */
typedef struct wg_tmap {
  _Alignas(64) unsigned long long q[16];
} wg_tmap;

static void wg_tmap_of(wg_tmap *m, const half *base, int rows, int w, int swz) {
  memset(m, 0, sizeof *m);
  m->q[0] = (unsigned long long)(uintptr_t)base;
  m->q[1] = WG_K;
  m->q[2] = (unsigned long long)rows;
  m->q[3] = 2 * WG_K;
  m->q[4] = (unsigned long long)w;
  m->q[5] = (unsigned long long)rows;
  m->q[6] = (unsigned long long)swz;
  m->q[7] = 0x70616d74726568ULL;
}

/* Builds and runs case c in the emulation: 1 when it matches the scalar
 * product (no fault) or dies with its message (a fault). */
static int wg_emulate(const char *dir, const wg_case *c) {
  char body[8192], so[512], err[8192];
  kdesc k;
  bufs b;
  wg_kdesc(c, &k, body, sizeof body);
  if (build_emulated(dir, &k, so, sizeof so) != 0 || bufs_alloc(&b, &k) != 0)
    return 0;
  for (long long i = 0; i < b.n[0]; i++)
    b.p[0][i] = (half)wg_val_a(i);
  for (long long i = 0; i < b.n[1]; i++)
    b.p[1][i] = (half)wg_val_b(i);
  wg_plan p = wg_plan_of(c);
  wg_tmap ma, mb;
  wg_tmap_of(&ma, b.p[0], 64, p.w, c->swz);
  wg_tmap_of(&mb, b.p[1], c->n, p.w, c->swz);
  void *args[6] = {b.p[0], b.p[1], b.p[2], (void *)(uintptr_t)16, &ma, &mb};
  const char *sos[1] = {so};
  void *const *argv[1] = {args};
  int status = run_child(sos, argv, 1, err, sizeof err);
  int ok;
  if (c->expect) {
    ok = status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
         strstr(err, "heron-emulate:") && strstr(err, c->expect);
    if (!ok)
      fprintf(stderr, "%s: expected SIGABRT and \"...%s...\"; got %#x:\n%s\n",
              c->name, c->expect, status, err);
    bufs_free(&b);
    return ok;
  }
  ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok)
    fprintf(stderr, "%s: the emulation failed (status %#x):\n%s\n", k.name,
            status, err);
  float *ref = ok ? calloc((size_t)(2 * 64 * c->n), sizeof *ref) : NULL;
  for (int m = 0; ref && m < 64; m++)
    for (int n = 0; n < c->n; n++) {
      float x = 0;
      for (int kk = 0; kk < WG_K; kk++)
        x += (float)b.p[0][m * WG_K + kk] * (float)b.p[1][n * WG_K + kk];
      half hi = (half)x;
      ref[2 * (m * c->n + n)] = (float)hi;
      ref[2 * (m * c->n + n) + 1] = (float)(half)(x - (float)hi);
    }
  ok = ok && ref && same_output(k.name, b.p[2], ref, b.n[2]);
  free(ref);
  bufs_free(&b);
  return ok;
}

/* The emulated wgmma reads its operands through the descriptors' bits and
 * the canonical layout of every swizzle mode, and places each product in
 * the lane and register of the m64nNk16 accumulator layout; TMA boxes land
 * where the plain stores of the same layout put them. */
TEST(emulated_wgmma_over_tma_and_swizzled_shared_operands_gives_the_product) {
  char dir[512];
  CHECK(scratch(dir, sizeof dir) == 0);
  int ok = 1;
  for (int i = 0; i < NWG; i++)
    ok &= wg_emulate(dir, &WG_CASES[i]);
  heron__rmtree(dir);
  CHECK(ok);
}

/* The rules of the asynchronous units abort the emulation. */
TEST(emulation_aborts_on_wgmma_and_mbarrier_misuse) {
  static const wg_case cases[] = {
      {"wg_no_fence", 128, 64, 1, 1, "no HERON_WG_FENCE"},
      {"wg_no_wait", 128, 64, 1, 2, "while a committed wgmma is in flight"},
      {"wg_wrong_parity", 128, 64, 1, 3, "the phase of parity 1 has not"},
      {"wg_tma_misaligned", 128, 64, 1, 4, "is not 1024-byte aligned"},
  };
  char dir[512];
  CHECK(scratch(dir, sizeof dir) == 0);
  int ok = 1;
  for (int i = 0; i < 4; i++)
    ok &= wg_emulate(dir, &cases[i]);
  heron__rmtree(dir);
  CHECK(ok);
}

/* The device branch of the same kernels compiles for sm_90a, and ptxas
 * reports registers and no spills for each. */
TEST(nvrtc_compiles_the_wgmma_kernels_for_sm90a_without_spills) {
#ifndef HERON_HAVE_NVRTC
  SKIP("libheron was built without NVRTC (no CUDA toolkit)");
#else
  static char log[32768];
  char body[8192];
  for (int i = 0; i < NWG; i++) {
    kdesc k;
    wg_kdesc(&WG_CASES[i], &k, body, sizeof body);
    char *src = kernel_source(&k);
    CHECK(src);
    int rc = nvrtc_build_arch(src, "sm_90a", log, sizeof log);
    free(src);
    if (rc == -2)
      SKIP("this NVRTC does not know sm_90a: %.200s", log);
    CHECK_MSG(rc == 0, "%s for sm_90a:\n%s", k.name, log);
    int regs, spill;
    int64_t smem;
    CHECK_MSG(heron__ptxas_stats(log, HERON__CUDA_KERNEL_NAME, &regs, &spill,
                                 &smem) == 0,
              "%s: no ptxas statistics in:\n%s", k.name, log);
    printf("%s: %d registers, %d bytes spilled\n", k.name, regs, spill);
    CHECK_MSG(regs > 0 && regs <= 255 && spill == 0,
              "%s: %d registers, %d bytes spilled", k.name, regs, spill);
  }
#endif
}
