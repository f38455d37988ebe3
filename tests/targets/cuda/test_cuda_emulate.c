/* tests/targets/cuda/test_cuda_emulate.c - the CPU check of the Tensor Core
 * kernels: for every suite op at small, odd shapes, 24 (8 under ASan) random
 * valid configs are generated, compiled by the host compiler as the emulation
 * (blocks and threads run one by one, barriers switch threads, wmma in
 * scalar code) and run on NaN-filled outputs; each must equal the op's
 * reference.  This is what checks the index arithmetic of the generated
 * kernels - padding, strides, dilation, the transposed conv's division,
 * the padded GEMM extents, the shared layouts and the epilogue - in CI,
 * where there is no GPU. */
#include "cuda_fixtures.h"

#include "core/targets/cuda/toolchain.h"

/* 24 configs of each op (50 until 2026-11-28, then 32; the selections
 * below add configs of every instruction path, pipeline depth, swizzle
 * and the implicit GEMM on top).  Fewer under the sanitizers unless the build
 * cache holds the Release stage's kernels (HERON_TEST_SHARE): the kernels
 * are built by cc without them, so the Release stage already checks the
 * kernels, and under ASan a few take the generator and the measuring code
 * through their paths (8 instead of 25 took the sanitizer stage's share
 * of this file from about 430 to about 200 test-seconds). */
#define CONFIGS HERON_TEST_SHARE(24, 8)
/* A minimum of cut-short configs among n_release Release samples, for a
 * build that samples n of them: the same share, rounded up. */
#define RAGGED_OF(min, n, n_release)                                           \
  (((min) * (n) + (n_release)-1) / (n_release))

/* 1 when the tiles of cfg sweep past a padded extent of M, N or K (the
 * block or K-outer count rounded up: the last tile cut short). */
static int sweeps_past(const cuda_built *b, const int64_t *cfg) {
  const heron__cuda_sched *s = heron__cuda_sched_of(b->t);
  const int grp[3] = {HERON__GM, HERON__GN, HERON__GK};
  const int shape[3] = {s->wm, s->wn, s->wk};
  for (int d = 0; d < 3; d++) {
    int64_t cover = cfg[shape[d]];
    for (int l = 0; l < 3; l++)
      cover *= cfg[s->split[d][l]];
    if (cover > s->padded[grp[d]])
      return 1;
  }
  return 0;
}

/* Which sampled configs a run emulates: every one, or only those with two
 * pipeline stages (PIPE_ANY), or two stages at one shared_at position, or
 * the mma.sync path (mma 1) with one or two pipeline stages, or
 * STAGED(mma, S): S pipeline stages on the given instruction path. */
enum {
  ALL_CONFIGS = -2,
  PIPE_ANY = -1,
  PIPE_AT_KO = 0,
  PIPE_AT_KM = 1,
  MMA_PIPE1 = 11,
  MMA_PIPE2 = 12
};
#define STAGED(mma, S) (100 + 10 * (mma) + (S))
/* SWIZZLED(S): mma 1, S pipeline stages, A.shared or B.shared swizzled. */
#define SWIZZLED(S) (200 + (S))
/* BLOCK_SWIZZLED: block_swz > 1 (blocks walk groups of rows of tiles). */
#define BLOCK_SWIZZLED 300
/* IGEMM(mma, S): the implicit-GEMM addressing (igemm 1) with S pipeline
 * stages on the given instruction path; IGEMM_VEC: igemm 1 with an
 * A.shared_vec beyond the index map's (the checked interior vectors). */
#define IGEMM(mma, S) (400 + 10 * (mma) + (S))
#define IGEMM_VEC 500
/* SPLIT_ON: split_k > 1 (blocks in z share each tile's K, the last one
 * sums the partials); SPLIT_OFF: split_k 1 in a space that has the knob. */
#define SPLIT_ON 600
#define SPLIT_OFF 601
/* WGMMA(S): the sm_90a path (mma 2) with S pipeline stages. */
#define WGMMA(S) (700 + (S))

static int wanted(const cuda_built *b, const int64_t *cfg, int which) {
  if (which == ALL_CONFIGS)
    return 1;
  if (which >= 700)
    return cuda_val(b->sp, cfg, "mma") == 2 &&
           cuda_val(b->sp, cfg, "pipeline") == which - 700;
  if (which == SPLIT_ON || which == SPLIT_OFF)
    return (cuda_val(b->sp, cfg, "split_k") > 1) == (which == SPLIT_ON);
  if (which == BLOCK_SWIZZLED)
    return cuda_val(b->sp, cfg, "block_swz") > 1;
  if (which == IGEMM_VEC)
    return cuda_val(b->sp, cfg, "igemm") == 1 &&
           cuda_val(b->sp, cfg, "A.shared_vec") >
               heron__cuda_sched_of(b->t)->op[0].vec_max;
  if (which >= 400)
    return cuda_val(b->sp, cfg, "igemm") == 1 &&
           cuda_val(b->sp, cfg, "mma") == (which - 400) / 10 &&
           cuda_val(b->sp, cfg, "pipeline") == which % 10;
  if (which >= 200)
    return cuda_val(b->sp, cfg, "mma") == 1 &&
           cuda_val(b->sp, cfg, "pipeline") == which - 200 &&
           (cuda_val(b->sp, cfg, "A.shared_swz") == 1 ||
            cuda_val(b->sp, cfg, "B.shared_swz") == 1);
  if (which >= 100)
    return cuda_val(b->sp, cfg, "mma") == (which - 100) / 10 &&
           cuda_val(b->sp, cfg, "pipeline") == which % 10;
  if (which == MMA_PIPE1 || which == MMA_PIPE2)
    return cuda_val(b->sp, cfg, "mma") == 1 &&
           cuda_val(b->sp, cfg, "pipeline") == which - 10;
  return cuda_val(b->sp, cfg, "pipeline") == 2 &&
         (which == PIPE_ANY || cuda_val(b->sp, cfg, "A.shared_at") == which);
}

/* Emulates `count` random configs of case c that `which` selects; at least
 * min_ragged of them must have tiles that do not divide a padded extent. */
/* How many configs of emulate_some's last call had cut-short tiles. */
static int last_ragged;
/* The GPU description emulate_some builds for: a configs/hw name or a
 * file (the block-swizzle test's GPU of 2 SMs). */
static const char *emu_gpu = "a100";

/* With WGMMA(S), when set: the chunk.k and block.n of every config (which
 * set the swizzle spans of A and of an MN-major B). */
static int64_t wg_chunk_k, wg_block_n;

static void emulate_some(const cuda_case *c, int epilogue, int min_ragged,
                         int which, int count) {
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, emu_gpu, epilogue, &err), &err);
  heron_measure_options mo;
  memset(&mo, 0, sizeof mo);
  mo.emulate = 1;
  mo.timeout_s = 60;
  heron__toolchain tc;
  CHECK_OK(
      heron__cuda_toolchain(&mo, 80, heron__template_cflags(b.t), &tc, &err),
      &err);
  heron__bench bench;
  CHECK_OK(heron__bench_init(&bench, &b.op, &tc, &mo, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *cfgs = malloc((size_t)count * (size_t)nv * sizeof *cfgs);
  char(*keys)[64] = calloc((size_t)count, sizeof *keys);
  heron__candidate *cand = calloc((size_t)count, sizeof *cand);
  heron__buf *srcs = calloc((size_t)count, sizeof *srcs);
  heron_rng rng;
  heron_rng_seed(&rng, 77);
  int n = 0, ragged = 0;
  /* Rejection sampling: a rare selection (swizzled, 3 stages, on the prime
   * GEMM) takes thousands of draws; a draw takes microseconds. */
  /* The sm_90a path is too rare a draw (its tiling must line up before
   * the mma knob is drawn): its samples fix mma and pipeline. */
  int64_t *fix = NULL;
  if (which >= 700) {
    fix = malloc((size_t)nv * sizeof *fix);
    CHECK(fix != NULL);
    for (int v = 0; v < nv; v++)
      fix[v] = HERON_UNSET;
    fix[heron_space_find_var(b.sp, "mma")] = 2;
    fix[heron_space_find_var(b.sp, "pipeline")] = which - 700;
    if (wg_chunk_k)
      fix[heron_space_find_var(b.sp, "A.chunk.k")] = wg_chunk_k;
    if (wg_block_n)
      fix[heron_space_find_var(b.sp, "block.n")] = wg_block_n;
  }
  for (int tries = 0; n < count && tries < 400 * count + 20000; tries++) {
    int64_t *cfg = cfgs + (size_t)n * (size_t)nv;
    if (fix)
      CHECK_OK(heron_space_sample_restricted(b.sp, &rng, fix, NULL, cfg, &err),
               &err);
    else
      CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    if (!wanted(&b, cfg, which))
      continue;
    heron_space_key(b.sp, cfg, keys[n], sizeof keys[n]);
    int dup = 0;
    for (int i = 0; i < n && !dup; i++)
      dup = !strcmp(keys[i], keys[n]);
    if (dup)
      continue;
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &srcs[n], &err), &err);
    ragged += sweeps_past(&b, cfg);
    cand[n].source = srcs[n].data;
    n++;
  }
  CHECK_OK(heron__build_all(&bench, cand, n, &err), &err);
  int ok = 0;
  for (int i = 0; i < n; i++) {
    heron_measurement m;
    memset(&m, 0, sizeof m);
    char *why = NULL;
    if (cand[i].status == HERON_MEAS_OK)
      CHECK_OK(
          heron__run_candidate(&bench, &cand[i], b.op.flops, &m, &why, &err),
          &err);
    else
      m.status = cand[i].status;
    if (m.status == HERON_MEAS_OK) {
      ok++;
    } else {
      fprintf(stderr, "%s config %d (%s): %s: %s\n%s\n", c->op, i, keys[i],
              heron_meas_status_name(m.status),
              why ? why : (cand[i].error ? cand[i].error : ""), srcs[i].data);
    }
    free(why);
  }
  fprintf(stderr,
          "%s: %d of %d distinct configs match the reference (%d with tiles "
          "that do not divide a padded extent)\n",
          c->op, ok, n, ragged);
  for (int i = 0; i < n; i++) {
    free(cand[i].error);
    heron__buf_free(&srcs[i]);
  }
  heron__bench_free(&bench);
  free(srcs);
  free(cand);
  free(keys);
  free(cfgs);
  free(fix);
  cuda_unbuild(&b);
  CHECK_EQ(ok, n);
  CHECK(n >= (count < 10 ? count : 10));
  CHECK_MSG(ragged >= min_ragged, "%d configs with cut-short tiles, wanted %d",
            ragged, min_ragged);
  last_ragged = ragged;
}

/* min_ragged: of 50 configs (scaled to the CONFIGS sampled). */
static void emulate_ragged(const cuda_case *c, int epilogue, int min_ragged) {
  emulate_some(c, epilogue, RAGGED_OF(min_ragged, CONFIGS, 50), ALL_CONFIGS,
               CONFIGS);
}

static void emulate_case(const cuda_case *c, int epilogue) {
  emulate_ragged(c, epilogue, 0);
}

TEST(gemm_padded) { emulate_case(&CUDA_SMALL[0], 0); }
TEST(gemm_vectorized_with_bias_relu) {
  emulate_case(&CUDA_SMALL[1], HERON__EPI_BIAS | HERON__EPI_RELU);
}
TEST(bmm) { emulate_case(&CUDA_SMALL[2], 0); }
TEST(gemv) { emulate_case(&CUDA_SMALL[3], HERON__EPI_BIAS); }
TEST(c1d_stride2) { emulate_case(&CUDA_SMALL[4], 0); }
TEST(c2d_with_bias_relu) {
  emulate_case(&CUDA_SMALL[5], HERON__EPI_BIAS | HERON__EPI_RELU);
}
TEST(c3d) { emulate_case(&CUDA_SMALL[6], 0); }
TEST(dil_pad2) { emulate_case(&CUDA_SMALL[7], HERON__EPI_RELU); }
TEST(t2d_stride2_output_padding) { emulate_case(&CUDA_SMALL[8], 0); }
TEST(scan) { emulate_case(&CUDA_SMALL[9], 0); }

/* Prime extents padded to 208 x 160 x 112 whose tiles (powers of two and
 * three times those) need not divide them: predicated loads of the
 * cut-short tiles zero-fill shared memory, the stores skip what lies
 * outside.  (Small extents admit no cut-short tile within the padded-work
 * bound.) */
TEST(gemm_prime_tiles_cut_short) {
  static const cuda_case prime = {"gemm", {199, 151, 101}, 3};
  emulate_ragged(&prime, HERON__EPI_BIAS, 10);
}

/* Two pipeline stages (double-buffered A.shared / B.shared, the next chunk
 * issued before the mma of this one; cp.async runs synchronously in the
 * emulation, so this checks the stage indexing, the chunk offsets, the
 * zero fill of guarded-out copies and the barriers).  The copies at the
 * k.o loop and at the k.m loop, a GEMM with cut-short tiles, and a padded
 * convolution whose data is read element by element. */
#define PIPE_CONFIGS HERON_TEST_SHARE(12, 6)
TEST(gemm_pipelined_at_the_ko_loop) {
  emulate_some(&CUDA_SMALL[1], HERON__EPI_BIAS, 0, PIPE_AT_KO, PIPE_CONFIGS);
}
TEST(gemm_pipelined_at_the_km_loop) {
  emulate_some(&CUDA_SMALL[1], 0, 0, PIPE_AT_KM, PIPE_CONFIGS);
}
TEST(gemm_prime_tiles_cut_short_pipelined) {
  static const cuda_case prime = {"gemm", {199, 151, 101}, 3};
  emulate_some(&prime, 0, RAGGED_OF(4, PIPE_CONFIGS, 12), PIPE_ANY,
               PIPE_CONFIGS);
}
TEST(c2d_padded_pipelined) {
  emulate_some(&CUDA_SMALL[5], HERON__EPI_RELU, 0, PIPE_ANY, PIPE_CONFIGS);
}
TEST(dil_pad2_pipelined) {
  emulate_some(&CUDA_SMALL[7], 0, 0, PIPE_ANY, PIPE_CONFIGS);
}

/* The mma.sync path (mma 1: ldmatrix into per-lane registers, mma.sync
 * m16n8k16, per-lane stores to C.shared), emulated lane by lane as the PTX
 * ISA lays the fragments out: every op at its small odd shape and the
 * prime GEMM with cut-short tiles, with one and with two pipeline stages.
 * A value in a wrong lane fails the reference check. */
#define MMA_CONFIGS HERON_TEST_SHARE(6, 3)
/* min_ragged: of the Release stage's 6 configs per stage count. */
static void emulate_mma(const cuda_case *c, int epilogue, int min_ragged) {
  int min = RAGGED_OF(min_ragged, MMA_CONFIGS, 6);
  emulate_some(c, epilogue, min, MMA_PIPE1, MMA_CONFIGS);
  emulate_some(c, epilogue, min, MMA_PIPE2, MMA_CONFIGS);
}
TEST(mma_gemm_padded) { emulate_mma(&CUDA_SMALL[0], 0, 0); }
TEST(mma_gemm_vectorized_with_bias_relu) {
  emulate_mma(&CUDA_SMALL[1], HERON__EPI_BIAS | HERON__EPI_RELU, 0);
}
TEST(mma_bmm) { emulate_mma(&CUDA_SMALL[2], 0, 0); }
TEST(mma_gemv) { emulate_mma(&CUDA_SMALL[3], HERON__EPI_BIAS, 0); }
TEST(mma_c1d_stride2) { emulate_mma(&CUDA_SMALL[4], 0, 0); }
TEST(mma_c2d_with_bias_relu) {
  emulate_mma(&CUDA_SMALL[5], HERON__EPI_BIAS | HERON__EPI_RELU, 0);
}
TEST(mma_c3d) { emulate_mma(&CUDA_SMALL[6], 0, 0); }
TEST(mma_dil_pad2) { emulate_mma(&CUDA_SMALL[7], HERON__EPI_RELU, 0); }
TEST(mma_t2d_stride2_output_padding) { emulate_mma(&CUDA_SMALL[8], 0, 0); }
/* CUDA_SMALL's scan has an M of 4, padded to 8, which only the 8x32x16
 * shape covers and mma.sync's m16 cannot (the rules forbid mma there);
 * an M of 13 pads to 16. */
TEST(mma_scan) {
  static const cuda_case scan = {"scan", {13, 24, 16}, 3};
  emulate_mma(&scan, 0, 0);
}
TEST(mma_gemm_prime_tiles_cut_short) {
  static const cuda_case prime = {"gemm", {199, 151, 101}, 3};
  emulate_mma(&prime, HERON__EPI_BIAS, 2);
}

/* Three and four pipeline stages (rings of A.shared / B.shared, chunks
 * issued S - 1 ahead in cp.async groups, cp.async.wait_group S - 2): every
 * op, on the wmma and the mma.sync path, and the prime GEMM with cut-short
 * tiles.  The emulation runs the copies synchronously, so this checks the
 * ring indexing, the prologue, the chunk offsets and the zero fill. */
#define STAGED_CONFIGS HERON_TEST_SHARE(3, 2)
/* min_ragged: of the Release stage's 3 configs per combination. */
static void emulate_staged(const cuda_case *c, int epilogue, int min_ragged) {
  int min = RAGGED_OF(min_ragged, STAGED_CONFIGS, 3);
  for (int S = 3; S <= 4; S++)
    for (int mma = 0; mma <= 1; mma++)
      emulate_some(c, epilogue, min, STAGED(mma, S), STAGED_CONFIGS);
}
TEST(staged_gemm_padded) { emulate_staged(&CUDA_SMALL[0], 0, 0); }
TEST(staged_gemm_vectorized_with_bias_relu) {
  emulate_staged(&CUDA_SMALL[1], HERON__EPI_BIAS | HERON__EPI_RELU, 0);
}
TEST(staged_bmm) { emulate_staged(&CUDA_SMALL[2], 0, 0); }
TEST(staged_gemv) { emulate_staged(&CUDA_SMALL[3], HERON__EPI_BIAS, 0); }
TEST(staged_c1d_stride2) { emulate_staged(&CUDA_SMALL[4], 0, 0); }
TEST(staged_c2d_with_bias_relu) {
  emulate_staged(&CUDA_SMALL[5], HERON__EPI_BIAS | HERON__EPI_RELU, 0);
}
TEST(staged_c3d) { emulate_staged(&CUDA_SMALL[6], 0, 0); }
TEST(staged_dil_pad2) { emulate_staged(&CUDA_SMALL[7], HERON__EPI_RELU, 0); }
TEST(staged_t2d_stride2_output_padding) {
  emulate_staged(&CUDA_SMALL[8], 0, 0);
}
/* The scan at M 13 (M 4 has no mma.sync config). */
TEST(staged_scan) {
  static const cuda_case scan = {"scan", {13, 24, 16}, 3};
  emulate_staged(&scan, 0, 0);
}
TEST(staged_gemm_prime_tiles_cut_short) {
  static const cuda_case prime = {"gemm", {199, 151, 101}, 3};
  emulate_staged(&prime, HERON__EPI_BIAS, 1);
}

/* The XOR-swizzled shared tiles (A.shared_swz / B.shared_swz, mma 1): the
 * cooperative and cp.async stores write through heron__swz and the
 * ldmatrix rows read through it, so a store and a load that disagree on
 * the layout put a value in a wrong place and fail the reference check.
 * Every op, one to four pipeline stages, the prime GEMM with cut-short
 * tiles. */
#define SWZ_CONFIGS HERON_TEST_SHARE(2, 1)
/* min_ragged counts over the four stage counts together: the sanitizer
 * build samples one config per stage count, which may divide its extents
 * (the ASan stage of a loaded run failed so with a per-call minimum). */
static void emulate_swizzled(const cuda_case *c, int epilogue, int min_ragged) {
  int ragged = 0;
  for (int S = 1; S <= 4; S++) {
    last_ragged = 0;
    emulate_some(c, epilogue, 0, SWIZZLED(S), SWZ_CONFIGS);
    ragged += last_ragged;
  }
  CHECK_MSG(ragged >= min_ragged, "%d configs with cut-short tiles, wanted %d",
            ragged, min_ragged);
}
TEST(swz_gemm_padded) { emulate_swizzled(&CUDA_SMALL[0], 0, 0); }
TEST(swz_gemm_vectorized_with_bias_relu) {
  emulate_swizzled(&CUDA_SMALL[1], HERON__EPI_BIAS | HERON__EPI_RELU, 0);
}
TEST(swz_bmm) { emulate_swizzled(&CUDA_SMALL[2], 0, 0); }
TEST(swz_gemv) { emulate_swizzled(&CUDA_SMALL[3], HERON__EPI_BIAS, 0); }
TEST(swz_c1d_stride2) { emulate_swizzled(&CUDA_SMALL[4], 0, 0); }
TEST(swz_c2d_with_bias_relu) {
  emulate_swizzled(&CUDA_SMALL[5], HERON__EPI_BIAS | HERON__EPI_RELU, 0);
}
TEST(swz_c3d) { emulate_swizzled(&CUDA_SMALL[6], 0, 0); }
TEST(swz_dil_pad2) { emulate_swizzled(&CUDA_SMALL[7], HERON__EPI_RELU, 0); }
TEST(swz_t2d_stride2_output_padding) { emulate_swizzled(&CUDA_SMALL[8], 0, 0); }
/* The scan at M 13 (M 4 has no mma.sync config). */
TEST(swz_scan) {
  static const cuda_case scan = {"scan", {13, 24, 16}, 3};
  emulate_swizzled(&scan, 0, 0);
}
TEST(swz_gemm_prime_tiles_cut_short) {
  static const cuda_case prime = {"gemm", {199, 151, 101}, 3};
  emulate_swizzled(&prime, HERON__EPI_BIAS, 1);
}
/* A GEMM whose K-inner tiles are 128 and 256 halves wide (pitch a
 * multiple of 64: the XOR period of 8 chunks), vectorized copies. */
TEST(swz_gemm_wide_rows) {
  static const cuda_case wide = {"gemm", {64, 64, 512}, 3};
  emulate_swizzled(&wide, 0, 0);
}

/* The thread-block swizzle (block_swz = G > 1): blocks walk the grid of
 * tiles in groups of G rows of M tiles, the last group cut short when G
 * does not divide i.b.  Every tile is computed by exactly one block only
 * if the mapping from blockIdx.x is a bijection: a tile no block takes
 * stays NaN and fails the reference check.  The rules allow G > 1 only on
 * grids of two blocks per SM, so the GPU here is an A100 of 2 SMs; the
 * prime GEMM gives i.b that G does not divide, the padded c2d an M of
 * three axes. */
static void emulate_block_swizzled(const cuda_case *c, int epilogue,
                                   int min_cut_groups) {
  char path[] = "/tmp/heron-gpu2-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  FILE *f = fdopen(fd, "w");
  CHECK(f != NULL);
  fputs("{\"name\": \"A100 of 2 SMs\", \"target\": \"cuda\", \"sm\": 80, "
        "\"sm_count\": 2, \"smem_per_block\": 49152, "
        "\"smem_per_block_optin\": 166912, \"max_threads_per_block\": 1024, "
        "\"max_threads_dim\": [1024, 1024, 64], \"warp_size\": 32, "
        "\"regs_per_block\": 65536}\n",
        f);
  fclose(f);
  emu_gpu = path;
  emulate_some(c, epilogue, 0, BLOCK_SWIZZLED, CONFIGS);
  /* How many sampled configs of the same stream cut their last group
   * short (i.b % G != 0), counted on the same build. */
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, path, epilogue, &err), &err);
  heron_rng rng;
  heron_rng_seed(&rng, 77);
  int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
  int cut = 0, swizzled = 0;
  for (int n = 0; n < 2000; n++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    int64_t G = cuda_val(b.sp, cfg, "block_swz");
    if (G > 1) {
      swizzled++;
      cut += cuda_val(b.sp, cfg, "i.b") % G != 0;
    }
  }
  free(cfg);
  cuda_unbuild(&b);
  emu_gpu = "a100";
  unlink(path);
  fprintf(stderr,
          "%s: %d of 2000 samples block-swizzled, %d with a cut-short group\n",
          c->op, swizzled, cut);
  CHECK_MSG(cut >= min_cut_groups, "%d cut-short groups, wanted %d", cut,
            min_cut_groups);
}
TEST(block_swizzled_gemm_prime_groups_cut_short) {
  static const cuda_case prime = {"gemm", {199, 151, 101}, 3};
  emulate_block_swizzled(&prime, HERON__EPI_BIAS, 1);
}
TEST(block_swizzled_c2d_with_bias_relu) {
  /* CUDA_SMALL's c2d has too few tiles for 2 blocks per SM. */
  static const cuda_case c2d = {"c2d", {2, 12, 11, 4, 8, 3, 3, 1, 1, 1}, 10};
  emulate_block_swizzled(&c2d, HERON__EPI_BIAS | HERON__EPI_RELU, 0);
}
TEST(block_swizzled_bmm) { emulate_block_swizzled(&CUDA_SMALL[2], 0, 0); }

/* Convolutions as implicit GEMM (igemm 1): A is read through the table of
 * the block's M rows (base offset, guarded coordinates, a sentinel for
 * rows outside M), filled once per block, plus the K part of each k.
 * Every convolution on odd and prime extents with padding and stride
 * (the transposed one with its divided index), one to four pipeline
 * stages on the wmma and the mma.sync path; a wrong coordinate, guard or
 * sentinel reads a wrong element or misses a zero and fails the reference
 * check. */
#define IGEMM_CONFIGS HERON_TEST_SHARE(2, 1)
static void emulate_igemm(const cuda_case *c, int epilogue, int min_ragged) {
  int ragged = 0;
  for (int S = 1; S <= 4; S++)
    for (int mma = 0; mma <= 1; mma++) {
      last_ragged = 0;
      emulate_some(c, epilogue, 0, IGEMM(mma, S), IGEMM_CONFIGS);
      ragged += last_ragged;
    }
  CHECK_MSG(ragged >= min_ragged, "%d configs with cut-short tiles, wanted %d",
            ragged, min_ragged);
}
TEST(igemm_c1d_prime_stride2_pad1) {
  static const cuda_case c1d = {"c1d", {3, 131, 5, 17, 3, 2, 1, 1}, 8};
  emulate_igemm(&c1d, HERON__EPI_BIAS, 1);
}
TEST(igemm_c2d_odd_stride2_pad1_with_bias_relu) {
  static const cuda_case c2d = {"c2d", {1, 27, 29, 3, 17, 3, 3, 2, 1, 1}, 10};
  emulate_igemm(&c2d, HERON__EPI_BIAS | HERON__EPI_RELU, 1);
}
TEST(igemm_c3d_odd_pad1) {
  static const cuda_case c3d = {
      "c3d", {1, 5, 9, 11, 3, 17, 3, 3, 3, 1, 1, 1}, 12};
  emulate_igemm(&c3d, 0, 1);
}
TEST(igemm_dil_odd_pad2) {
  static const cuda_case dil = {"dil", {1, 13, 15, 3, 17, 3, 3, 1, 2, 2}, 10};
  emulate_igemm(&dil, HERON__EPI_RELU, 1);
}
TEST(igemm_t2d_prime_stride2_output_padding) {
  static const cuda_case t2d = {"t2d", {1, 7, 8, 3, 17, 3, 3, 2, 1, 1, 1}, 11};
  emulate_igemm(&t2d, 0, 1);
}
TEST(igemm_c2d_nhwc_stride2) {
  static const cuda_case nhwc = {
      "c2d_nhwc", {1, 27, 29, 8, 17, 3, 3, 2, 1, 1}, 10};
  emulate_igemm(&nhwc, 0, 1);
}

/* The checked interior vectors (igemm 1, A.shared_vec beyond the index
 * map's): a dilated convolution whose output width of 16 is contiguous
 * (stride 1 < dilation 2: M-inner tiles, vectors along ow) and a c2d of
 * 4-wide kernels (K-inner tiles, vectors along kw), both padded, so that
 * vectors at the edges go element by element and misaligned ones too
 * (the emulation aborts on a misaligned vector copy). */
#define IGEMM_VEC_CONFIGS HERON_TEST_SHARE(12, 4)
TEST(igemm_vectors_dil_along_ow) {
  static const cuda_case dil = {"dil", {1, 13, 16, 3, 5, 3, 3, 1, 2, 2}, 10};
  emulate_some(&dil, 0, 0, IGEMM_VEC, IGEMM_VEC_CONFIGS);
}
TEST(igemm_vectors_c2d_along_kw) {
  static const cuda_case c2d = {"c2d", {1, 7, 9, 3, 5, 4, 4, 1, 2, 1}, 10};
  emulate_some(&c2d, HERON__EPI_BIAS, 0, IGEMM_VEC, IGEMM_VEC_CONFIGS);
}
/* Channels-last data with igemm 1: k is split with ci innermost (both
 * operands), so vectors run along the channels, whose guards are those of
 * their pixel and whose addresses are aligned: each is one copy, or one
 * zero fill where the pixel lies in the padding. */
TEST(igemm_vectors_c2d_nhwc_along_ci) {
  static const cuda_case nhwc = {
      "c2d_nhwc", {1, 9, 11, 8, 6, 3, 3, 1, 1, 1}, 10};
  emulate_some(&nhwc, HERON__EPI_BIAS, 0, IGEMM_VEC, IGEMM_VEC_CONFIGS);
}
TEST(igemm_vectors_c3d_ndhwc_along_ci) {
  static const cuda_case ndhwc = {
      "c3d_ndhwc", {1, 3, 5, 5, 8, 6, 3, 3, 3, 1, 1, 1}, 12};
  emulate_some(&ndhwc, 0, 0, IGEMM_VEC, IGEMM_VEC_CONFIGS);
}

/* Split-K (split_k = S > 1): S blocks (blockIdx.z) run k.o / S chunks
 * each, write their fp32 partial tiles to the workspace, and the block
 * that arrives last at a tile sums the S partials in split order and
 * stores the tile with the epilogue.  The emulation runs the blocks one
 * after another and checks the protocol (a partial summed before it was
 * written, or written twice, aborts), so a wrong K range of a split, a
 * wrong slot or a missed partial fails the reference check.  Skinny shapes
 * whose K (padded) holds two splits of 128: a prime GEMV, GEMMs with a
 * small M and a small N, a prime strided c1d, on and off (split_k 1 of the
 * same spaces), with and without the bias and ReLU epilogue. */
#define SPLIT_CONFIGS HERON_TEST_SHARE(6, 2)
static void emulate_split(const cuda_case *c, int epilogue, int min_ragged) {
  last_ragged = 0;
  emulate_some(c, epilogue, 0, SPLIT_ON, SPLIT_CONFIGS);
  int ragged = last_ragged;
  last_ragged = 0;
  emulate_some(c, epilogue, 0, SPLIT_OFF, SPLIT_CONFIGS / 2);
  ragged += last_ragged;
  CHECK_MSG(ragged >= RAGGED_OF(min_ragged, SPLIT_CONFIGS, 6),
            "%d configs with cut-short tiles, wanted %d", ragged,
            RAGGED_OF(min_ragged, SPLIT_CONFIGS, 6));
}
TEST(split_k_gemv_prime_with_bias) {
  static const cuda_case gemv = {"gemv", {61, 509}, 2};
  emulate_split(&gemv, HERON__EPI_BIAS, 1);
}
TEST(split_k_gemm_small_m_with_bias_relu) {
  static const cuda_case gemm = {"gemm", {5, 67, 509}, 3};
  emulate_split(&gemm, HERON__EPI_BIAS | HERON__EPI_RELU, 1);
}
TEST(split_k_gemm_small_n) {
  static const cuda_case gemm = {"gemm", {197, 13, 509}, 3};
  emulate_split(&gemm, 0, 1);
}
TEST(split_k_c1d_prime_stride2_with_bias_relu) {
  static const cuda_case c1d = {"c1d", {1, 37, 171, 13, 3, 2, 1, 1}, 8};
  emulate_split(&c1d, HERON__EPI_BIAS | HERON__EPI_RELU, 1);
}

/* The sm_90a path (mma 2 on an H200's description): one or two
 * warpgroups of wgmma m64nNk16 reading stages that TMA tile copies fill,
 * handed over by mbarriers, one to four stages.  The emulation runs the
 * copies (zero outside the tensor, through the swizzle), decodes every
 * wgmma operand from its descriptor's bits through the canonical layout
 * (K-major A, MN-major B of a [K, N] GEMM, or K-major B) and places the
 * accumulators by the ISA's fragment layout, so a wrong box, coordinate,
 * descriptor offset, swizzle span or stage parity fails the reference
 * check (or the emulation's own checks).  GEMMs with an odd M and N and K
 * not multiples of the tiles (tiles cut short), with the bias and ReLU
 * epilogue; each stage count; and each swizzle span (32, 64 and 128
 * bytes) of A (set by chunk.k) and of the MN-major B (by block.n). */
#define WG_CONFIGS HERON_TEST_SHARE(4, 2)
static void emulate_wgmma(const cuda_case *c, int epilogue, int min_ragged) {
  int ragged = 0;
  emu_gpu = "h200";
  for (int S = 1; S <= 4; S++) {
    last_ragged = 0;
    emulate_some(c, epilogue, 0, WGMMA(S), WG_CONFIGS);
    ragged += last_ragged;
  }
  emu_gpu = "a100";
  CHECK_MSG(ragged >= min_ragged, "%d configs with cut-short tiles, wanted %d",
            ragged, min_ragged);
}
TEST(wgmma_gemm_odd_m_tiles_cut_short_with_bias_relu) {
  static const cuda_case gemm = {"gemm", {121, 88, 200}, 3};
  emulate_wgmma(&gemm, HERON__EPI_BIAS | HERON__EPI_RELU, 1);
}
TEST(wgmma_gemm_odd) {
  static const cuda_case gemm = {"gemm", {61, 40, 24}, 3};
  emulate_wgmma(&gemm, 0, 0);
}
TEST(wgmma_gemm_every_swizzle_span) {
  static const cuda_case gemm = {"gemm", {121, 120, 200}, 3};
  static const int64_t kc[3] = {16, 32, 64}, bn[3] = {16, 32, 64};
  emu_gpu = "h200";
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      wg_chunk_k = kc[i];
      wg_block_n = bn[j];
      fprintf(stderr,
              "chunk.k %lld (A: %d-byte swizzle), block.n %lld (B: "
              "%d-byte swizzle)\n",
              (long long)kc[i], heron__cuda_wg_span(kc[i]), (long long)bn[j],
              heron__cuda_wg_span(bn[j]));
      emulate_some(&gemm, HERON__EPI_BIAS, 0, WGMMA(1 + (i + j) % 4), 1);
    }
  wg_chunk_k = wg_block_n = 0;
  emu_gpu = "a100";
}
