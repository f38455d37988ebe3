/* tests/sched/test_cuda_nvrtc.c - every suite op's generated kernels compile
 * with NVRTC for sm_80 and sm_90, and ptxas' statistics stay inside the
 * limits the constraints claim: registers per thread <= 255, registers x
 * threads <= the block's register file, no static shared memory (the plan
 * is all dynamic) and the dynamic plan <= the GPU's opt-in limit.
 *
 * 200 random valid configs per op and architecture by default
 * (HERON_NVRTC_CONFIGS overrides), compiled by two processes. */
#include "cuda_fixtures.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/measure/measure.h"

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

static int nconfigs(void) {
  const char *e = getenv("HERON_NVRTC_CONFIGS");
  int n = e ? atoi(e) : 200;
  return n > 0 ? n : 200;
}

/* Compiles `count` configs of case c for sm 80 and 90 and checks them. */
static void compile_case(const cuda_case *c, int count) {
  if (!heron__nvrtc_available()) {
    fprintf(stderr, "skipped: libheron was built without NVRTC\n");
    return;
  }
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, "h100", 0, &err), &err);
  int nj = 2 * count;
  job *jobs = calloc((size_t)nj, sizeof *jobs);
  heron_rng rng;
  heron_rng_seed(&rng, 2024);
  int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
  int regs_var = heron_space_find_var(b.sp, "regs");
  for (int i = 0; i < count; i++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    heron__buf src = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
    heron__cuda_launch l;
    heron__cuda_launch_of(b.t, cfg, &l);
    for (int a = 0; a < 2; a++) {
      job *j = &jobs[2 * i + a];
      j->src = a ? strdup(src.data) : src.data;
      j->sm = a ? 90 : 80;
      j->threads = (int64_t)l.block[0] * l.block[1] * l.block[2];
      j->est_regs = cfg[regs_var];
    }
  }
  free(cfg);
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
     * register estimate of core/sched/cuda_rules.c. */
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

TEST(gemm_compiles) { compile_case(&CUDA_SUITE[0], nconfigs()); }
TEST(bmm_compiles) { compile_case(&CUDA_SUITE[1], nconfigs()); }
TEST(gemv_compiles) { compile_case(&CUDA_SUITE[2], nconfigs()); }
TEST(c1d_compiles) { compile_case(&CUDA_SUITE[3], nconfigs()); }
TEST(c2d_compiles) { compile_case(&CUDA_SUITE[4], nconfigs()); }
TEST(c3d_compiles) { compile_case(&CUDA_SUITE[5], nconfigs()); }
TEST(dil_compiles) { compile_case(&CUDA_SUITE[6], nconfigs()); }
TEST(t2d_compiles) { compile_case(&CUDA_SUITE[7], nconfigs()); }
TEST(scan_compiles) { compile_case(&CUDA_SUITE[8], nconfigs()); }
