/* tests/targets/cuda/test_cuda_nvrtc.c - every suite op's generated kernels
 * compile with NVRTC for sm_80 and sm_90, and ptxas' statistics stay inside the
 * limits the constraints claim: registers per thread <= 255, registers x
 * threads <= the block's register file, no static shared memory (the plan
 * is all dynamic) and the dynamic plan <= the GPU's opt-in limit.
 *
 * Every run compiles a deterministic sample of each op: SAMPLE configs
 * picked from a seeded pool for the limits they stress (the most estimated
 * registers, registers per block, shared memory and threads, the fewest
 * threads) plus random ones.  The exhaustive sweep, 200 random valid
 * configs per op and architecture (HERON_NVRTC_CONFIGS overrides), is the
 * *_exhaustive tests, labelled cuda_exhaustive and left out of
 * tools/test.sh: `ctest -L cuda_exhaustive` runs it.  Kernels are compiled
 * by two processes. */
#include "cuda_fixtures.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/targets/cuda/toolchain.h"

/* What a compiling child reports for one kernel (in shared memory). */
typedef struct result {
  int rc;
  int regs, spill_bytes;
  int64_t static_smem, smem_bytes;
  char err[200];
  char log[600];
} result;

typedef struct job {
  char *src;
  int sm;
  int64_t threads;
  int64_t est_regs; /* the template's register estimate */
} job;

/* Two forked children share the kernels, each compiling every other one
 * in-process: a compiler crash then costs a child, not the test. */
#define PROCS 2

static void compile_all(const job *jobs, int n, result *res) {
  pid_t pids[PROCS];
  for (int p = 0; p < PROCS; p++) {
    pids[p] = fork();
    if (pids[p] == 0) {
      for (int i = p; i < n; i += PROCS) {
        heron_error err = {0};
        heron__nvrtc_result r;
        res[i].rc = heron__nvrtc_compile(jobs[i].src, jobs[i].sm, &r, &err);
        res[i].regs = r.regs;
        res[i].spill_bytes = r.spill_bytes;
        res[i].static_smem = r.static_smem;
        res[i].smem_bytes = r.smem_bytes;
        snprintf(res[i].err, sizeof res[i].err, "%s", err.text);
        snprintf(res[i].log, sizeof res[i].log, "%s", r.log ? r.log : "");
        heron__nvrtc_result_free(&r);
      }
      _exit(0);
    }
  }
  for (int p = 0; p < PROCS; p++)
    if (pids[p] > 0)
      waitpid(pids[p], NULL, 0);
}

/* The exhaustive sweep's configs per op and architecture. */
static int nconfigs(void) {
  const char *e = getenv("HERON_NVRTC_CONFIGS");
  int n = e ? atoi(e) : 200;
  return n > 0 ? n : 200;
}

/* The sample: SAMPLE configs per op picked from a pool of POOL. */
#define SAMPLE 6
#define POOL 64

/* What a config asks of the GPU, for picking the sample. */
typedef struct demand {
  int64_t regs, threads, regs_block, smem;
} demand;

static demand demand_of(const cuda_built *b, const int64_t *cfg, int regs_var) {
  heron__cuda_launch l;
  heron__cuda_launch_of(b->t, cfg, &l);
  demand d;
  d.regs = regs_var >= 0 ? cfg[regs_var] : 0;
  d.threads = (int64_t)l.block[0] * l.block[1] * l.block[2];
  d.regs_block = d.regs * d.threads;
  d.smem = l.smem_bytes;
  return d;
}

/* The quantities the sample's first configs maximize, one per criterion:
 * estimated registers, registers per block, shared memory, threads, and
 * the fewest threads. */
#define NCRIT 5

static int64_t criterion(const demand *d, int k) {
  switch (k) {
  case 0:
    return d->regs;
  case 1:
    return d->regs_block;
  case 2:
    return d->smem;
  case 3:
    return d->threads;
  default:
    return -d->threads;
  }
}

/* Whether pool entry i is (a copy of) one of the n picked. */
static int picked(const int *pick, int n, char (*keys)[64], int i) {
  for (int k = 0; k < n; k++)
    if (!strcmp(keys[pick[k]], keys[i]))
      return 1;
  return 0;
}

/* Picks up to `count` distinct configs of the pool's n into pick[]: for
 * each criterion the unpicked config that maximizes it, then the rest in
 * pool order; returns how many (fewer when the pool has fewer distinct). */
static int pick_sample(const demand *d, char (*keys)[64], int n, int count,
                       int *pick) {
  int got = 0;
  for (int k = 0; k < NCRIT && got < count; k++) {
    int best = -1;
    for (int i = 0; i < n; i++)
      if (!picked(pick, got, keys, i) &&
          (best < 0 || criterion(&d[i], k) > criterion(&d[best], k)))
        best = i;
    if (best >= 0)
      pick[got++] = best;
  }
  for (int i = 0; i < n && got < count; i++)
    if (!picked(pick, got, keys, i))
      pick[got++] = i;
  return got;
}

/* Compiles configs of case c for sm 80 and 90 and checks them: `count`
 * random ones, or with `sample` set, the sample picked from a pool. */
static void compile_case(const cuda_case *c, int count, int sample) {
  if (!heron__nvrtc_available())
    SKIP("libheron was built without NVRTC: no %s kernel compiled", c->op);
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, "h100", 0, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int regs_var = heron_space_find_var(b.sp, "regs");
  heron_rng rng;
  heron_rng_seed(&rng, 2024);
  /* The pool, nv values per config: the configs to compile, or those the
   * sample is picked from. */
  int npool = sample ? POOL : count;
  int64_t *pool = malloc((size_t)npool * (size_t)nv * sizeof *pool);
  for (int i = 0; i < npool; i++)
    CHECK_OK(heron_space_sample(b.sp, &rng, pool + (size_t)i * nv, &err), &err);
  int *pick = malloc((size_t)npool * sizeof *pick);
  if (sample) {
    demand *d = malloc((size_t)npool * sizeof *d);
    char(*keys)[64] = malloc((size_t)npool * sizeof *keys);
    for (int i = 0; i < npool; i++) {
      d[i] = demand_of(&b, pool + (size_t)i * nv, regs_var);
      heron_space_key(b.sp, pool + (size_t)i * nv, keys[i], sizeof keys[i]);
    }
    count = pick_sample(d, keys, npool, count, pick);
    free(d);
    free(keys);
  } else {
    for (int i = 0; i < count; i++)
      pick[i] = i;
  }
  int nj = 2 * count;
  job *jobs = calloc((size_t)nj, sizeof *jobs);
  for (int i = 0; i < count; i++) {
    const int64_t *cfg = pool + (size_t)pick[i] * nv;
    heron__buf src = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
    heron__cuda_launch l;
    heron__cuda_launch_of(b.t, cfg, &l);
    /* The sm_90a path (mma 2, rare in these draws) has no sm_80 build: it
     * compiles twice for sm_90. */
    int sm90 = cuda_val(b.sp, cfg, "mma") == 2;
    for (int a = 0; a < 2; a++) {
      job *j = &jobs[2 * i + a];
      j->src = a ? strdup(src.data) : src.data;
      j->sm = a || sm90 ? 90 : 80;
      j->threads = (int64_t)l.block[0] * l.block[1] * l.block[2];
      j->est_regs = cfg[regs_var];
    }
  }
  free(pool);
  free(pick);
  result *res = mmap(NULL, (size_t)nj * sizeof *res, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  CHECK(res != MAP_FAILED);
  for (int i = 0; i < nj; i++)
    res[i].rc = HERON_ERUN; /* stays so if a child dies */
  double t0 = heron__now();
  compile_all(jobs, nj, res);
  double secs = heron__now() - t0;

  int failed = 0, spilled = 0, over_est = 0, max_regs = 0;
  const char *first_fail = NULL;
  char why[400] = "";
  int64_t limit = b.hw.smem_per_block_optin;
  for (int i = 0; i < nj; i++) {
    job *j = &jobs[i];
    const result *r = &res[i];
    if (r->rc != HERON_OK) {
      if (!failed++) {
        first_fail = j->src;
        snprintf(why, sizeof why, "sm_%d: %.190s\n%.190s", j->sm, r->err,
                 r->log);
      }
      continue;
    }
    if (r->regs <= 0 || r->regs > 255 ||
        (int64_t)r->regs * j->threads > b.hw.regs_per_block ||
        r->static_smem != 0 || r->smem_bytes > limit) {
      if (!failed++) {
        first_fail = j->src;
        snprintf(why, sizeof why,
                 "sm_%d: %d registers x %lld threads, static smem %lld, "
                 "smem %lld (limit %lld)",
                 j->sm, r->regs, (long long)j->threads,
                 (long long)r->static_smem, (long long)r->smem_bytes,
                 (long long)limit);
      }
    }
    spilled += r->spill_bytes > 0;
    over_est += r->regs > j->est_regs;
    max_regs = r->regs > max_regs ? r->regs : max_regs;
    /* HERON_NVRTC_VERBOSE=1: one line per kernel, for calibrating the
     * register estimate of core/targets/cuda/rules.c. */
    if (getenv("HERON_NVRTC_VERBOSE"))
      fprintf(stderr, "regs %d est %lld threads %lld spill %d\n", r->regs,
              (long long)j->est_regs, (long long)j->threads, r->spill_bytes);
  }
  fprintf(stderr,
          "%s %s: %d kernels in %.1f s (%.1f/s on 2 processes), %d failed, "
          "%d spill, %d above the register estimate, max %d registers\n",
          c->op, "sm_80+sm_90", nj, secs, nj / secs, failed, spilled, over_est,
          max_regs);
  if (failed && first_fail)
    fprintf(stderr, "first failing source:\n%.3000s\n", first_fail);
  for (int i = 0; i < nj; i++)
    free(jobs[i].src);
  free(jobs);
  munmap(res, (size_t)nj * sizeof *res);
  cuda_unbuild(&b);
  CHECK_MSG(failed == 0, "%s: %d of %d failed; first: %s", c->op, failed, nj,
            why);
}

/* The sample, on every run. */
TEST(gemm_sample_compiles) { compile_case(&CUDA_SUITE[0], SAMPLE, 1); }
TEST(bmm_sample_compiles) { compile_case(&CUDA_SUITE[1], SAMPLE, 1); }
TEST(gemv_sample_compiles) { compile_case(&CUDA_SUITE[2], SAMPLE, 1); }
TEST(c1d_sample_compiles) { compile_case(&CUDA_SUITE[3], SAMPLE, 1); }
TEST(c2d_sample_compiles) { compile_case(&CUDA_SUITE[4], SAMPLE, 1); }
TEST(c3d_sample_compiles) { compile_case(&CUDA_SUITE[5], SAMPLE, 1); }
TEST(dil_sample_compiles) { compile_case(&CUDA_SUITE[6], SAMPLE, 1); }
TEST(t2d_sample_compiles) { compile_case(&CUDA_SUITE[7], SAMPLE, 1); }
TEST(scan_sample_compiles) { compile_case(&CUDA_SUITE[8], SAMPLE, 1); }

/* The sweep (label cuda_exhaustive, see tests/targets/cuda/CMakeLists.txt). */
TEST(gemm_compiles_exhaustive) { compile_case(&CUDA_SUITE[0], nconfigs(), 0); }
TEST(bmm_compiles_exhaustive) { compile_case(&CUDA_SUITE[1], nconfigs(), 0); }
TEST(gemv_compiles_exhaustive) { compile_case(&CUDA_SUITE[2], nconfigs(), 0); }
TEST(c1d_compiles_exhaustive) { compile_case(&CUDA_SUITE[3], nconfigs(), 0); }
TEST(c2d_compiles_exhaustive) { compile_case(&CUDA_SUITE[4], nconfigs(), 0); }
TEST(c3d_compiles_exhaustive) { compile_case(&CUDA_SUITE[5], nconfigs(), 0); }
TEST(dil_compiles_exhaustive) { compile_case(&CUDA_SUITE[6], nconfigs(), 0); }
TEST(t2d_compiles_exhaustive) { compile_case(&CUDA_SUITE[7], nconfigs(), 0); }
TEST(scan_compiles_exhaustive) { compile_case(&CUDA_SUITE[8], nconfigs(), 0); }

/* S pipeline stages: `n` sampled S-stage configs of case c (on the
 * instruction path mma, or either with mma < 0) and their single-stage
 * twins (the same other knobs) compile for sm_80 and sm_90 within the
 * shared-memory plan, and the PTX issues cp.async copies and waits with
 * cp.async.wait_group S - 2 (when an operand copies vectors; vec 1 stays
 * plain).  Both kernels' spills are printed: S stages may spill where 1
 * does not. */
static void staged_case(const cuda_case *c, int n, int S, int mma) {
  if (!heron__nvrtc_available())
    SKIP("libheron was built without NVRTC: no %s kernel compiled", c->op);
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, "h100", 0, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int pv = heron_space_find_var(b.sp, "pipeline");
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int64_t *twin = malloc((size_t)nv * sizeof *twin);
  heron_rng rng;
  heron_rng_seed(&rng, 2025);
  int got = 0, with_cp = 0;
  int mv = heron_space_find_var(b.sp, "mma");
  for (int tries = 0; got < n && tries < (S == 2 ? 400 : 4000); tries++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    /* mma 2 (sm_90a) has its own test below. */
    if (cfg[pv] != S || (mma >= 0 && cfg[mv] != mma) || cfg[mv] == 2)
      continue;
    for (int v = 0; v < nv; v++)
      twin[v] = heron_space_var_is_knob(b.sp, v) ? cfg[v] : HERON_UNSET;
    twin[pv] = 1;
    CHECK_OK(heron_space_validate(b.sp, &rng, twin, twin, &err), &err);
    heron__buf s2 = {0}, s1 = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &s2, &err), &err);
    CHECK_OK(heron__codegen(b.t, b.sp, twin, &s1, &err), &err);
    for (int sm = 80; sm <= 90; sm += 10) {
      heron__nvrtc_result r2, r1;
      int rc2 = heron__nvrtc_compile(s2.data, sm, &r2, &err);
      CHECK_MSG(rc2 == HERON_OK, "%s sm_%d: %s\n%.2000s", c->op, sm, err.text,
                r2.log ? r2.log : "");
      CHECK_OK(heron__nvrtc_compile(s1.data, sm, &r1, &err), &err);
      /* Recorded, not required: 2 stages can spill where 1 does not
       * (ptxas on c2d, e.g. a wmma 8x32 config at 80 registers of 255:
       * 12 bytes of spill stores, its twin none). */
      fprintf(stderr,
              "%s sm_%d mma %lld: %d stages %d registers, spill %d bytes; 1 "
              "stage %d registers, spill %d\n",
              c->op, sm, (long long)cfg[mv], S, r2.regs, r2.spill_bytes,
              r1.regs, r1.spill_bytes);
      CHECK(r2.static_smem == 0 && r2.smem_bytes <= b.hw.smem_per_block_optin);
      heron__nvrtc_result_free(&r2);
      heron__nvrtc_result_free(&r1);
    }
    int vectors = cuda_val(b.sp, cfg, "A.shared_vec") > 1 ||
                  cuda_val(b.sp, cfg, "B.shared_vec") > 1;
    char *ptx = NULL, wait[48];
    CHECK_OK(heron__nvrtc_ptx(s2.data, 80, &ptx, &err), &err);
    snprintf(wait, sizeof wait, "cp.async.wait_group %d;", S - 2);
    int cp = (strstr(ptx, "cp.async.ca.shared.global") != NULL ||
              strstr(ptx, "cp.async.cg.shared.global") != NULL) &&
             strstr(ptx, "cp.async.commit_group") != NULL &&
             strstr(ptx, wait) != NULL;
    CHECK_MSG(cp == vectors, "%s: cp.async in the PTX %d, vector copies %d",
              c->op, cp, vectors);
    with_cp += cp;
    free(ptx);
    heron__buf_free(&s2);
    heron__buf_free(&s1);
    got++;
  }
  fprintf(stderr, "%s: %d %d-stage configs compiled, %d with cp.async\n", c->op,
          got, S, with_cp);
  CHECK(got == n);
  free(cfg);
  free(twin);
  cuda_unbuild(&b);
}

static void pipelined_case(const cuda_case *c, int n) {
  staged_case(c, n, 2, -1);
}

TEST(gemm_pipelined_compiles_with_cp_async) {
  pipelined_case(&CUDA_SUITE[0], 3);
}
TEST(c2d_pipelined_compiles) { pipelined_case(&CUDA_SUITE[4], 2); }

/* Three and four stages, on both instruction paths. */
static void staged_both(const cuda_case *c) {
  for (int S = 3; S <= 4; S++)
    for (int mma = 0; mma <= 1; mma++)
      staged_case(c, 1, S, mma);
}
TEST(gemm_3_and_4_stages_compile) { staged_both(&CUDA_SUITE[0]); }
TEST(gemv_3_and_4_stages_compile) { staged_both(&CUDA_SUITE[2]); }
TEST(c2d_3_and_4_stages_compile) { staged_both(&CUDA_SUITE[4]); }
TEST(c3d_3_and_4_stages_compile) { staged_both(&CUDA_SUITE[5]); }

/* The mma.sync path: `n` sampled configs of case c with mma 1 and their
 * wmma twins (mma 0, the same other knobs) compile for sm_80 and sm_90
 * within the limits the constraints claim, and the mma kernel's PTX holds
 * mma.sync m16n8k16 (fp16 in, fp32 accumulate) and ldmatrix, .trans where
 * an operand's shared tile is M- or N-inner, and no wmma. */
static void mma_case(const cuda_case *c, int n) {
  if (!heron__nvrtc_available())
    SKIP("libheron was built without NVRTC: no %s kernel compiled", c->op);
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, "h100", 0, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int mv = heron_space_find_var(b.sp, "mma");
  CHECK(mv >= 0);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int64_t *twin = malloc((size_t)nv * sizeof *twin);
  heron_rng rng;
  heron_rng_seed(&rng, 4242);
  int got = 0, pipelined = 0;
  for (int tries = 0; got < n && tries < 400; tries++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    if (cfg[mv] != 1)
      continue;
    for (int v = 0; v < nv; v++)
      twin[v] = heron_space_var_is_knob(b.sp, v) ? cfg[v] : HERON_UNSET;
    twin[mv] = 0;
    /* wmma loads no swizzled tile: the twin is unswizzled (pad 0 kept). */
    twin[heron_space_find_var(b.sp, "A.shared_swz")] = 0;
    twin[heron_space_find_var(b.sp, "B.shared_swz")] = 0;
    CHECK_OK(heron_space_validate(b.sp, &rng, twin, twin, &err), &err);
    heron__buf sm = {0}, sw = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &sm, &err), &err);
    CHECK_OK(heron__codegen(b.t, b.sp, twin, &sw, &err), &err);
    int64_t threads = 32 * cuda_val(b.sp, cfg, "threadIdx.y");
    for (int sm_ = 80; sm_ <= 90; sm_ += 10) {
      heron__nvrtc_result rm, rw;
      int rc = heron__nvrtc_compile(sm.data, sm_, &rm, &err);
      CHECK_MSG(rc == HERON_OK, "%s mma sm_%d: %s\n%.2000s", c->op, sm_,
                err.text, rm.log ? rm.log : "");
      CHECK_OK(heron__nvrtc_compile(sw.data, sm_, &rw, &err), &err);
      CHECK(rm.regs <= 255 &&
            rm.regs * threads <= heron__cuda_sched_of(b.t)->regs_limit);
      CHECK(rm.static_smem == 0 && rm.smem_bytes <= b.hw.smem_per_block_optin);
      fprintf(stderr,
              "%s sm_%d: mma %d registers, %d bytes spilled; wmma twin %d, "
              "%d\n",
              c->op, sm_, rm.regs, rm.spill_bytes, rw.regs, rw.spill_bytes);
      heron__nvrtc_result_free(&rm);
      heron__nvrtc_result_free(&rw);
    }
    char *ptx = NULL;
    CHECK_OK(heron__nvrtc_ptx(sm.data, 80, &ptx, &err), &err);
    CHECK(strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
    CHECK(strstr(ptx, "ldmatrix.sync.aligned.m8n8.x4") ||
          strstr(ptx, "ldmatrix.sync.aligned.m8n8.x2"));
    CHECK(!strstr(ptx, "wmma."));
    int trans = !heron__cuda_sched_of(b.t)->op[0].k_inner ||
                !heron__cuda_sched_of(b.t)->op[1].k_inner;
    CHECK_MSG((strstr(ptx, ".trans.shared.b16") != NULL) == trans,
              "%s: ldmatrix .trans in the PTX %d, an M/N-inner operand %d",
              c->op, strstr(ptx, ".trans.shared.b16") != NULL, trans);
    free(ptx);
    pipelined += cuda_val(b.sp, cfg, "pipeline") == 2;
    heron__buf_free(&sm);
    heron__buf_free(&sw);
    got++;
  }
  fprintf(stderr, "%s: %d mma.sync configs compiled (%d pipelined)\n", c->op,
          got, pipelined);
  CHECK(got == n);
  free(cfg);
  free(twin);
  cuda_unbuild(&b);
}

TEST(gemm_mma_sync_compiles) { mma_case(&CUDA_SUITE[0], 3); }
TEST(bmm_mma_sync_compiles) { mma_case(&CUDA_SUITE[1], 2); }
TEST(gemv_mma_sync_compiles) { mma_case(&CUDA_SUITE[2], 2); }
TEST(c1d_mma_sync_compiles) { mma_case(&CUDA_SUITE[3], 2); }
TEST(c2d_mma_sync_compiles) { mma_case(&CUDA_SUITE[4], 2); }
TEST(c3d_mma_sync_compiles) { mma_case(&CUDA_SUITE[5], 2); }
TEST(dil_mma_sync_compiles) { mma_case(&CUDA_SUITE[6], 2); }
TEST(t2d_mma_sync_compiles) { mma_case(&CUDA_SUITE[7], 2); }
TEST(scan_mma_sync_compiles) { mma_case(&CUDA_SUITE[8], 2); }

/* The swizzled shared tiles (A.shared_swz = B.shared_swz = 1, mma 1):
 * `n` sampled configs of case c, and their unswizzled twins (swizzle 0,
 * the same other knobs), compile for sm_80 and sm_90 within the register
 * and shared-memory limits (the registers of both are printed); the
 * swizzled PTX has mma.sync, ldmatrix and the XOR of the address function
 * (heron__swz). */
static void swizzled_case(const cuda_case *c, int n) {
  if (!heron__nvrtc_available())
    SKIP("libheron was built without NVRTC: no %s kernel compiled", c->op);
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, "h100", 0, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *fix = malloc((size_t)nv * sizeof *fix);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int64_t *twin = malloc((size_t)nv * sizeof *twin);
  int sa = heron_space_find_var(b.sp, "A.shared_swz");
  int sb = heron_space_find_var(b.sp, "B.shared_swz");
  heron_rng rng;
  heron_rng_seed(&rng, 5151);
  for (int got = 0; got < n; got++) {
    for (int v = 0; v < nv; v++)
      fix[v] = HERON_UNSET;
    fix[heron_space_find_var(b.sp, "mma")] = 1;
    fix[sa] = fix[sb] = 1;
    CHECK_OK(heron_space_sample_restricted(b.sp, &rng, fix, NULL, cfg, &err),
             &err);
    for (int v = 0; v < nv; v++)
      twin[v] = heron_space_var_is_knob(b.sp, v) ? cfg[v] : HERON_UNSET;
    twin[sa] = twin[sb] = 0;
    CHECK_OK(heron_space_validate(b.sp, &rng, twin, twin, &err), &err);
    heron__buf ss = {0}, su = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &ss, &err), &err);
    CHECK_OK(heron__codegen(b.t, b.sp, twin, &su, &err), &err);
    CHECK(strstr(ss.data, "HERON_LDMATRIX_A_SWZ(") &&
          strstr(ss.data, "HERON_LDMATRIX_B_SWZ(") &&
          strstr(ss.data, "+ heron__swz(o, q, "));
    int64_t threads = 32 * cuda_val(b.sp, cfg, "threadIdx.y");
    for (int sm_ = 80; sm_ <= 90; sm_ += 10) {
      heron__nvrtc_result rs, ru;
      int rc = heron__nvrtc_compile(ss.data, sm_, &rs, &err);
      CHECK_MSG(rc == HERON_OK, "%s swizzled sm_%d: %s\n%.2000s", c->op, sm_,
                err.text, rs.log ? rs.log : "");
      CHECK_OK(heron__nvrtc_compile(su.data, sm_, &ru, &err), &err);
      CHECK(rs.regs <= 255 &&
            rs.regs * threads <= heron__cuda_sched_of(b.t)->regs_limit);
      CHECK(rs.static_smem == 0 && rs.smem_bytes <= b.hw.smem_per_block_optin);
      fprintf(stderr,
              "%s sm_%d (pipeline %lld, pitch A %lld B %lld): swizzled %d "
              "registers, %d bytes spilled; unswizzled twin %d, %d\n",
              c->op, sm_, (long long)cuda_val(b.sp, cfg, "pipeline"),
              (long long)cuda_val(b.sp, cfg, "A.shared_pitch"),
              (long long)cuda_val(b.sp, cfg, "B.shared_pitch"), rs.regs,
              rs.spill_bytes, ru.regs, ru.spill_bytes);
      heron__nvrtc_result_free(&rs);
      heron__nvrtc_result_free(&ru);
    }
    char *ptx = NULL;
    CHECK_OK(heron__nvrtc_ptx(ss.data, 80, &ptx, &err), &err);
    CHECK(strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
    CHECK(strstr(ptx, "ldmatrix.sync.aligned.m8n8"));
    CHECK(strstr(ptx, "xor.b32"));
    free(ptx);
    heron__buf_free(&ss);
    heron__buf_free(&su);
  }
  free(fix);
  free(cfg);
  free(twin);
  cuda_unbuild(&b);
}

TEST(gemm_swizzled_compiles) { swizzled_case(&CUDA_SUITE[0], 2); }
TEST(bmm_swizzled_compiles) { swizzled_case(&CUDA_SUITE[1], 1); }
TEST(gemv_swizzled_compiles) { swizzled_case(&CUDA_SUITE[2], 1); }
TEST(c2d_swizzled_compiles) { swizzled_case(&CUDA_SUITE[4], 1); }
TEST(t2d_swizzled_compiles) { swizzled_case(&CUDA_SUITE[7], 1); }

/* The thread-block swizzle (block_swz = 8, mma 1): `n` sampled configs of
 * case c and their row-major twins (block_swz 1, the same other knobs)
 * compile for sm_80 and sm_90 within the register limits; the swizzled
 * source maps blockIdx.x through the groups (bq, br, bg) and costs at most
 * a few registers more than the twin (both printed). */
static void block_swizzled_case(const cuda_case *c, int n) {
  if (!heron__nvrtc_available())
    SKIP("libheron was built without NVRTC: no %s kernel compiled", c->op);
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, "h100", 0, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *fix = malloc((size_t)nv * sizeof *fix);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int64_t *twin = malloc((size_t)nv * sizeof *twin);
  int bs = heron_space_find_var(b.sp, "block_swz");
  CHECK(bs >= 0);
  heron_rng rng;
  heron_rng_seed(&rng, 6161);
  for (int got = 0; got < n; got++) {
    for (int v = 0; v < nv; v++)
      fix[v] = HERON_UNSET;
    fix[heron_space_find_var(b.sp, "mma")] = 1;
    fix[bs] = 8;
    CHECK_OK(heron_space_sample_restricted(b.sp, &rng, fix, NULL, cfg, &err),
             &err);
    for (int v = 0; v < nv; v++)
      twin[v] = heron_space_var_is_knob(b.sp, v) ? cfg[v] : HERON_UNSET;
    twin[bs] = 1;
    CHECK_OK(heron_space_validate(b.sp, &rng, twin, twin, &err), &err);
    heron__buf ss = {0}, su = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &ss, &err), &err);
    CHECK_OK(heron__codegen(b.t, b.sp, twin, &su, &err), &err);
    CHECK(strstr(ss.data, "const int bq = HERON_BX / ") &&
          strstr(ss.data, "br % bg") && !strstr(su.data, "br % bg"));
    int64_t threads = 32 * cuda_val(b.sp, cfg, "threadIdx.y");
    for (int sm_ = 80; sm_ <= 90; sm_ += 10) {
      heron__nvrtc_result rs, ru;
      int rc = heron__nvrtc_compile(ss.data, sm_, &rs, &err);
      CHECK_MSG(rc == HERON_OK, "%s block-swizzled sm_%d: %s\n%.2000s", c->op,
                sm_, err.text, rs.log ? rs.log : "");
      CHECK_OK(heron__nvrtc_compile(su.data, sm_, &ru, &err), &err);
      CHECK(rs.regs <= 255 &&
            rs.regs * threads <= heron__cuda_sched_of(b.t)->regs_limit);
      fprintf(stderr,
              "%s sm_%d (i.b %lld, j.b %lld): block_swz 8 %d registers, %d "
              "bytes spilled; row-major twin %d, %d\n",
              c->op, sm_, (long long)cuda_val(b.sp, cfg, "i.b"),
              (long long)cuda_val(b.sp, cfg, "j.b"), rs.regs, rs.spill_bytes,
              ru.regs, ru.spill_bytes);
      CHECK_MSG(rs.regs <= ru.regs + 8 && rs.spill_bytes <= ru.spill_bytes,
                "block swizzle costs %d registers / %d spilled bytes over "
                "the twin's %d / %d",
                rs.regs, rs.spill_bytes, ru.regs, ru.spill_bytes);
      heron__nvrtc_result_free(&rs);
      heron__nvrtc_result_free(&ru);
    }
    heron__buf_free(&ss);
    heron__buf_free(&su);
  }
  free(fix);
  free(cfg);
  free(twin);
  cuda_unbuild(&b);
}

TEST(gemm_block_swizzled_compiles) { block_swizzled_case(&CUDA_SUITE[0], 2); }
TEST(c2d_block_swizzled_compiles) { block_swizzled_case(&CUDA_SUITE[4], 1); }

/* Convolutions as implicit GEMM (igemm 1, the row table of A.rows): a
 * config of each stage count 1 to 4 (mma 1 from 2 stages on, wmma at 1)
 * and, where the op has them, one with A's checked interior vectors,
 * compile for sm_80 and sm_90 within the register limits, beside their
 * twins of igemm 0 (the same other knobs; A/B.shared_vec at the index
 * maps' widest when the config's is wider); both kernels' registers and
 * spills are printed (recorded, not required: nothing was timed). */
static void igemm_case(const cuda_case *c) {
  if (!heron__nvrtc_available())
    SKIP("libheron was built without NVRTC: no %s kernel compiled", c->op);
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, "h100", 0, &err), &err);
  const heron__cuda_sched *s = heron__cuda_sched_of(b.t);
  int nv = heron_space_nvars(b.sp);
  int64_t *fix = malloc((size_t)nv * sizeof *fix);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int64_t *twin = malloc((size_t)nv * sizeof *twin);
  int ig = heron_space_find_var(b.sp, "igemm");
  int av = heron_space_find_var(b.sp, "A.shared_vec");
  int bv = heron_space_find_var(b.sp, "B.shared_vec");
  CHECK(ig >= 0);
  heron_rng rng;
  heron_rng_seed(&rng, 3232);
  int wide = s->ig.vec_max > s->op[0].vec_max;
  for (int n = 0; n < 4 + wide; n++) {
    for (int v = 0; v < nv; v++)
      fix[v] = HERON_UNSET;
    fix[ig] = 1;
    fix[heron_space_find_var(b.sp, "pipeline")] = n < 4 ? n + 1 : 2;
    fix[heron_space_find_var(b.sp, "mma")] = n > 0;
    if (n == 4)
      fix[av] = s->ig.vec_max;
    CHECK_OK(heron_space_sample_restricted(b.sp, &rng, fix, NULL, cfg, &err),
             &err);
    for (int v = 0; v < nv; v++)
      twin[v] = heron_space_var_is_knob(b.sp, v) ? cfg[v] : HERON_UNSET;
    twin[ig] = 0;
    if (twin[av] > s->op[0].vec_max)
      twin[av] = s->op[0].vec_max;
    if (twin[bv] > s->op[1].vec_max)
      twin[bv] = s->op[1].vec_max;
    CHECK_OK(heron_space_validate(b.sp, &rng, twin, twin, &err), &err);
    heron__buf si = {0}, so = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &si, &err), &err);
    CHECK_OK(heron__codegen(b.t, b.sp, twin, &so, &err), &err);
    CHECK(strstr(si.data, "/* A.rows complete */") &&
          !strstr(so.data, "A.rows"));
    int64_t threads = 32 * cuda_val(b.sp, cfg, "threadIdx.y");
    for (int sm = 80; sm <= 90; sm += 10) {
      heron__nvrtc_result ri, ro;
      int rc = heron__nvrtc_compile(si.data, sm, &ri, &err);
      CHECK_MSG(rc == HERON_OK, "%s igemm sm_%d: %s\n%.2000s", c->op, sm,
                err.text, ri.log ? ri.log : "");
      CHECK_OK(heron__nvrtc_compile(so.data, sm, &ro, &err), &err);
      CHECK(ri.regs <= 255 && ri.regs * threads <= s->regs_limit);
      CHECK(ri.static_smem == 0 && ri.smem_bytes <= b.hw.smem_per_block_optin);
      fprintf(stderr,
              "%s sm_%d (pipeline %lld, mma %lld, A.shared_vec %lld): igemm "
              "1 %d registers, %d bytes spilled; igemm 0 twin %d, %d\n",
              c->op, sm, (long long)cuda_val(b.sp, cfg, "pipeline"),
              (long long)cuda_val(b.sp, cfg, "mma"), (long long)cfg[av],
              ri.regs, ri.spill_bytes, ro.regs, ro.spill_bytes);
      heron__nvrtc_result_free(&ri);
      heron__nvrtc_result_free(&ro);
    }
    heron__buf_free(&si);
    heron__buf_free(&so);
  }
  free(fix);
  free(cfg);
  free(twin);
  cuda_unbuild(&b);
}

TEST(c1d_igemm_compiles) { igemm_case(&CUDA_SUITE[3]); }
TEST(c2d_igemm_compiles) { igemm_case(&CUDA_SUITE[4]); }
TEST(c3d_igemm_compiles) { igemm_case(&CUDA_SUITE[5]); }
TEST(dil_igemm_compiles) { igemm_case(&CUDA_SUITE[6]); }
TEST(t2d_igemm_compiles) { igemm_case(&CUDA_SUITE[7]); }
/* Channels-last data: igemm splits k with ci innermost, vectors of 8
 * channels. */
TEST(c2d_nhwc_igemm_compiles) {
  static const cuda_case nhwc = {
      "c2d_nhwc", {16, 56, 56, 64, 64, 3, 3, 1, 1, 1}, 10};
  igemm_case(&nhwc);
}

/* Split-K (split_k = S > 1): configs of skinny shapes at the given S (mma
 * and the rest sampled) compile for sm_80 and sm_90 within the register
 * limits, without static shared memory (the workspace and the counters
 * are __device__ arrays of the module), beside their unsplit twins (S 1,
 * the same other knobs); both kernels' registers and spills are printed
 * (recorded, not required: nothing was timed). */
static void split_k_case(const cuda_case *c, const int64_t *splits, int n) {
  if (!heron__nvrtc_available())
    SKIP("libheron was built without NVRTC: no %s kernel compiled", c->op);
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, "h100", HERON__EPI_BIAS | HERON__EPI_RELU, &err),
           &err);
  const heron__cuda_sched *s = heron__cuda_sched_of(b.t);
  int nv = heron_space_nvars(b.sp);
  int64_t *fix = malloc((size_t)nv * sizeof *fix);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int64_t *twin = malloc((size_t)nv * sizeof *twin);
  int sk = heron_space_find_var(b.sp, "split_k");
  CHECK(sk >= 0);
  heron_rng rng;
  heron_rng_seed(&rng, 5151);
  for (int i = 0; i < n; i++) {
    for (int v = 0; v < nv; v++)
      fix[v] = HERON_UNSET;
    fix[sk] = splits[i];
    CHECK_OK(heron_space_sample_restricted(b.sp, &rng, fix, NULL, cfg, &err),
             &err);
    for (int v = 0; v < nv; v++)
      twin[v] = heron_space_var_is_knob(b.sp, v) ? cfg[v] : HERON_UNSET;
    twin[sk] = 1;
    CHECK_OK(heron_space_validate(b.sp, &rng, twin, twin, &err), &err);
    heron__buf ss = {0}, su = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &ss, &err), &err);
    CHECK_OK(heron__codegen(b.t, b.sp, twin, &su, &err), &err);
    CHECK(strstr(ss.data, "HERON_SPLIT_LAST(tile)") &&
          !strstr(su.data, "HERON_SPLIT"));
    int64_t threads = 32 * cuda_val(b.sp, cfg, "threadIdx.y");
    for (int sm = 80; sm <= 90; sm += 10) {
      heron__nvrtc_result rs, ru;
      int rc = heron__nvrtc_compile(ss.data, sm, &rs, &err);
      CHECK_MSG(rc == HERON_OK, "%s split_k %lld sm_%d: %s\n%.2000s", c->op,
                (long long)splits[i], sm, err.text, rs.log ? rs.log : "");
      CHECK_OK(heron__nvrtc_compile(su.data, sm, &ru, &err), &err);
      CHECK(rs.regs <= 255 && rs.regs * threads <= s->regs_limit);
      CHECK(rs.static_smem == 0 && rs.smem_bytes <= b.hw.smem_per_block_optin);
      fprintf(stderr,
              "%s sm_%d (split_k %lld, k.o %lld, i.b %lld, j.b %lld, mma "
              "%lld, pipeline %lld): %d registers, %d bytes spilled; "
              "unsplit twin %d, %d\n",
              c->op, sm, (long long)splits[i],
              (long long)cuda_val(b.sp, cfg, "k.o"),
              (long long)cuda_val(b.sp, cfg, "i.b"),
              (long long)cuda_val(b.sp, cfg, "j.b"),
              (long long)cuda_val(b.sp, cfg, "mma"),
              (long long)cuda_val(b.sp, cfg, "pipeline"), rs.regs,
              rs.spill_bytes, ru.regs, ru.spill_bytes);
      heron__nvrtc_result_free(&rs);
      heron__nvrtc_result_free(&ru);
    }
    heron__buf_free(&ss);
    heron__buf_free(&su);
  }
  free(fix);
  free(cfg);
  free(twin);
  cuda_unbuild(&b);
}

TEST(gemv_split_k_compiles) {
  split_k_case(&CUDA_SUITE[2], (const int64_t[]){2, 8}, 2);
}
TEST(gemm_small_m_split_k_compiles) {
  static const cuda_case gemm = {"gemm", {64, 1024, 8192}, 3};
  split_k_case(&gemm, (const int64_t[]){4, 16}, 2);
}
TEST(c1d_split_k_compiles) {
  static const cuda_case c1d = {"c1d", {1, 256, 512, 64, 3, 1, 1, 1}, 8};
  split_k_case(&c1d, (const int64_t[]){8}, 1);
}

/* The sm_90a path (mma 2): GEMM configs of every stage count on an H200's
 * description, the suite's GEMM 1024^3 and an odd one whose tiles are cut
 * short, compile with NVRTC for sm_90a (line 2 of the source states the
 * tensor maps, which selects it) within the registers and the shared
 * memory the rules claim, and their PTX issues wgmma, the TMA tile copy
 * and mbarrier waits.  Spills are printed, not required (skipped, exit
 * 77, where NVRTC does not know sm_90a). */
static void wgmma_case(const cuda_case *c, int per_stage) {
  if (!heron__nvrtc_available())
    SKIP("libheron was built without NVRTC: no %s kernel compiled", c->op);
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, "h200", 0, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *fix = malloc((size_t)nv * sizeof *fix);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 2026);
  int built = 0, spilled = 0;
  for (int S = 1; S <= 4; S++)
    for (int i = 0; i < per_stage; i++) {
      for (int v = 0; v < nv; v++)
        fix[v] = HERON_UNSET;
      fix[heron_space_find_var(b.sp, "mma")] = 2;
      fix[heron_space_find_var(b.sp, "pipeline")] = S;
      CHECK_OK(heron_space_sample_restricted(b.sp, &rng, fix, NULL, cfg, &err),
               &err);
      heron__buf src = {0};
      CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
      heron__nvrtc_result r;
      int rc = heron__nvrtc_compile(src.data, 90, &r, &err);
      if (rc != HERON_OK && r.log &&
          strstr(r.log, "invalid value for --gpu-architecture")) {
        heron__nvrtc_result_free(&r);
        heron__buf_free(&src);
        SKIP("this NVRTC does not know sm_90a: %.200s", r.log);
      }
      CHECK_MSG(rc == HERON_OK, "%s S=%d: %s\n%.2000s\n%.3000s", c->op, S,
                err.text, r.log ? r.log : "", src.data);
      heron__cuda_launch l;
      heron__cuda_launch_of(b.t, cfg, &l);
      int64_t threads = (int64_t)l.block[0] * l.block[1];
      fprintf(stderr,
              "%s sm_90a stages %d block.n %lld threads %lld: %d registers, "
              "spill %d bytes, smem %lld\n",
              c->op, S, (long long)cuda_val(b.sp, cfg, "block.n"),
              (long long)threads, r.regs, r.spill_bytes,
              (long long)r.smem_bytes);
      CHECK(r.regs > 0 && r.regs <= 255 &&
            r.regs * threads <= b.hw.regs_per_block);
      CHECK(r.static_smem == 0 && r.smem_bytes == l.smem_bytes &&
            r.smem_bytes <= b.hw.smem_per_block_optin);
      spilled += r.spill_bytes > 0;
      heron__nvrtc_result_free(&r);
      char *ptx = NULL;
      CHECK_OK(heron__nvrtc_ptx(src.data, 90, &ptx, &err), &err);
      CHECK(strstr(ptx, "wgmma.mma_async.sync.aligned.m64n") != NULL);
      CHECK(strstr(ptx, "cp.async.bulk.tensor.2d") != NULL);
      CHECK(strstr(ptx, "mbarrier.try_wait.parity") != NULL);
      free(ptx);
      heron__buf_free(&src);
      built++;
    }
  fprintf(stderr, "%s: %d wgmma kernels built for sm_90a, %d spill\n", c->op,
          built, spilled);
  free(fix);
  free(cfg);
  cuda_unbuild(&b);
}
TEST(wgmma_gemm_compiles_for_sm90a) { wgmma_case(&CUDA_SUITE[0], 2); }
TEST(wgmma_gemm_odd_compiles_for_sm90a) {
  static const cuda_case gemm = {"gemm", {121, 88, 200}, 3};
  wgmma_case(&gemm, 1);
}
