/* bench/bench_suite_blas.c - the OpenBLAS baselines and, in a child
 * process, OpenBLAS's other kernel set. */
#include <cblas.h>
#include <ctype.h>
#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_suite.h"

/* ---- OpenBLAS baselines -------------------------------------------------- */

/* What a user of BLAS writes after the call: one pass adding the bias of
 * each output element's channel and clamping at zero. */
void epilogue_pass(const blas_ctx *c) {
  const geom *g = c->g;
  if (!c->bias && !c->relu)
    return;
  float *out = c->out;
  const float *bias = c->bias;
  int relu = c->relu;
  int64_t n = g->out_elems, nch = g->nch;
  /* One parallel region, each thread a contiguous range: a region per row
   * would cost more than the pass itself on small outputs. */
#pragma omp parallel if (n >= 16384)
  {
    int nt = omp_get_num_threads(), id = omp_get_thread_num();
    int64_t lo = n * id / nt, hi = n * (id + 1) / nt, j = lo % nch;
    for (int64_t i = lo; i < hi; i++) {
      float v = out[i] + (bias ? bias[j] : 0.0f);
      out[i] = relu && !(v > 0) ? 0.0f : v;
      if (++j == nch)
        j = 0;
    }
  }
}

void blas_call(void *p) {
  blas_ctx *c = p;
  const geom *g = c->g;
  int M = (int)g->M, N = (int)g->N, K = (int)g->K;
  switch (g->fam) {
  case FAM_GEMM:
  case FAM_SCAN:
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, c->a,
                K, c->b, N, 0.0f, c->out, N);
    break;
  case FAM_BMM:
    for (int64_t i = 0; i < g->B; i++)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f,
                  c->a + i * M * K, K, c->b + i * K * N, N, 0.0f,
                  c->out + i * M * N, N);
    break;
  case FAM_GEMV:
    cblas_sgemv(CblasRowMajor, CblasNoTrans, M, K, 1.0f, c->a, K, c->b, 1, 0.0f,
                c->out, 1);
    break;
  }
  epilogue_pass(c);
}

/* A GEMM with M or N of 1 as the matrix-vector product it is:
 * C[1,N] = A[1,K] * B[K,N] is y = B^T x, C[M,1] = A[M,K] * B[K,1] is y =
 * A x.  A user picks whichever of sgemm and sgemv is faster. */
void blas_gemv_call(void *p) {
  blas_ctx *c = p;
  const geom *g = c->g;
  int M = (int)g->M, N = (int)g->N, K = (int)g->K;
  if (M == 1)
    cblas_sgemv(CblasRowMajor, CblasTrans, K, N, 1.0f, c->b, N, c->a, 1, 0.0f,
                c->out, 1);
  else
    cblas_sgemv(CblasRowMajor, CblasNoTrans, M, K, 1.0f, c->a, K, c->b, 1, 0.0f,
                c->out, 1);
  epilogue_pass(c);
}

void copy_call(void *p) {
  copy_ctx *c = p;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < c->n; i++)
    c->c[i] = c->a[i];
}

/* SCAN as a user writes it without a library: a running sum per row, the
 * rows shared among the threads. */
void prefix_call(void *p) {
  blas_ctx *c = p;
  const geom *g = c->g;
  int64_t M = g->M, N = g->N, K = g->K;
  const float *a = c->a;
  float *out = c->out;
  int relu = c->relu;
#pragma omp parallel for schedule(static) if (M * N >= 16384)
  for (int64_t m = 0; m < M; m++) {
    float sum = 0;
    for (int64_t n = 0; n < N; n++) {
      if (n < K)
        sum += a[m * K + n];
      out[m * N + n] = relu && !(sum > 0) ? 0.0f : sum;
    }
  }
}

void set_threads(int t) {
  omp_set_num_threads(t);
  openblas_set_num_threads(t);
}

/* ---- OpenBLAS's kernel sets ------------------------------------------------
 * OpenBLAS built with DYNAMIC_ARCH picks its kernel set (its "core") once,
 * when the library loads, from the CPU's model or from OPENBLAS_CORETYPE;
 * it cannot change in a running process.  Its own choice is not always its
 * fastest: it takes the Haswell (AVX2) kernels on CPUs it does not know as
 * AVX-512 ones (AMD Zen 4 and Zen 5), and SSE3's (Prescott) where the CPU
 * model is hidden (virtual machines).  So on an AVX-512 CPU, unless this
 * process already runs SkylakeX's kernels, bench_suite times OpenBLAS a
 * second time with OPENBLAS_CORETYPE=SkylakeX in a child process: itself,
 * executed again (/proc/self/exe) with the hidden first argument
 * --internal-openblas-child and the row's op, shape, threads, epilogue and
 * timing settings.  The child makes the same inputs (same fills, same
 * seeds), times sgemm (and sgemv where it is a candidate) with the same
 * cli_time_runners, prints its core and the seconds per call on stdout and
 * writes its output into a file that this process compares like every
 * other baseline's.  A re-execution rather than a fork: the library is
 * linked in and already loaded, and a fork of this process (OpenMP's and
 * OpenBLAS's thread pools started) could not reload it. */

static char self_exe[4096]; /* this program, for the child; "" if unknown */

void blas_find_self(void) {
  ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
  self_exe[n > 0 ? n : 0] = '\0';
}

/* The kernel set this process's OpenBLAS runs ("Haswell", "SkylakeX"). */
const char *blas_core(void) {
  const char *c = openblas_get_corename();
  return c && *c ? c : "unknown";
}

/* Whether SkylakeX's kernels are to be timed: the CPU (and the OS) run the
 * AVX-512 subsets they use (F, BW, DQ and VL), and HERON_CPU_ISA does not
 * cap this run below AVX-512 (avxvnni, avx2, sse: a smaller CPU emulated,
 * OpenBLAS then held to its own or OPENBLAS_CORETYPE's kernels).  Else 0
 * with the reason, for the table, in why. */
int cpu_avx512(char *why, size_t cap) {
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl")))
    return snprintf(why, cap, "no AVX-512"), 0;
  const char *isa = getenv("HERON_CPU_ISA");
  char v[16] = "";
  size_t n = 0;
  for (; isa && *isa && n + 1 < sizeof v; isa++)
    if (!isspace((unsigned char)*isa))
      v[n++] = (char)tolower((unsigned char)*isa);
  v[n] = '\0';
  if (!strcmp(v, "avxvnni") || !strcmp(v, "avx2") || !strcmp(v, "sse"))
    return snprintf(why, cap, "AVX-512 capped by HERON_CPU_ISA=%s", v), 0;
  return 1;
}

/* bench_suite --internal-openblas-child FAM B M N K THREADS REPEATS US
 *   BIAS RELU OUTFILE (US: --compare-ms in microseconds): the OpenBLAS half of
 * a row, in a process whose OpenBLAS loaded with the caller's
 * OPENBLAS_CORETYPE.  Prints "core NAME" and "sgemm SECONDS" (and "sgemv
 * SECONDS") on stdout, writes sgemm's output into OUTFILE; exit status 0, or 1
 * with the reason on stderr. */
int openblas_child(int argc, char **argv) {
  if (argc != 13) {
    fprintf(stderr,
            "bench_suite: --internal-openblas-child: %d arguments, "
            "want 11\n",
            argc - 2);
    return CLI_EXIT_FAILURE;
  }
  long long v[10];
  for (int i = 0; i < 10; i++) {
    char *end;
    v[i] = strtoll(argv[2 + i], &end, 10);
    if (*end || v[i] < 0) {
      fprintf(stderr,
              "bench_suite: --internal-openblas-child: bad argument "
              "'%s'\n",
              argv[2 + i]);
      return CLI_EXIT_FAILURE;
    }
  }
  int fam = (int)v[0], threads = (int)v[5], reps = (int)v[6];
  if ((fam != FAM_GEMM && fam != FAM_BMM && fam != FAM_GEMV) || threads < 1 ||
      reps < 1 || reps > 100 || v[1] < 1 || v[2] < 1 || v[3] < 1 || v[4] < 1) {
    fprintf(stderr, "bench_suite: --internal-openblas-child: bad row\n");
    return CLI_EXIT_FAILURE;
  }
  geom g;
  matrix_geom(&g, fam, v[1], v[2], v[3], v[4]);
  set_threads(threads);
  float *in0 = falloc(g.in_elems[0]), *in1 = falloc(g.in_elems[1]);
  float *bias = v[8] ? falloc(g.nch) : NULL;
  float *out = falloc(g.out_elems), *out2 = falloc(g.out_elems);
  fill_matrix_inputs(&g, in0, in1, bias);
  blas_ctx bc = {&g, in0, in1, bias, out, (int)v[9]};
  blas_ctx vc = {&g, in0, in1, bias, out2, (int)v[9]};
  cli_runner rs[2];
  memset(rs, 0, sizeof rs);
  int nr = 0;
  rs[nr].call = blas_call, rs[nr].spins = 1, rs[nr++].self = &bc;
  if (gemm_as_gemv(&g))
    rs[nr].call = blas_gemv_call, rs[nr].spins = 1, rs[nr++].self = &vc;
  fill_nan(out, g.out_elems);
  blas_call(&bc);
  FILE *f = fopen(argv[12], "wb");
  if (!f ||
      fwrite(out, sizeof *out, (size_t)g.out_elems, f) != (size_t)g.out_elems) {
    fprintf(stderr,
            "bench_suite: --internal-openblas-child: cannot write "
            "%s: %s\n",
            argv[12], strerror(errno));
    if (f)
      fclose(f);
    return CLI_EXIT_FAILURE;
  }
  if (fclose(f) != 0) {
    fprintf(stderr,
            "bench_suite: --internal-openblas-child: cannot write "
            "%s\n",
            argv[12]);
    return CLI_EXIT_FAILURE;
  }
  cli_time_runners(rs, nr, reps, (double)v[7] / 1e6, threads); /* v[7]: us */
  printf("core %s\n", blas_core());
  printf("sgemm %.9g\n", rs[0].seconds);
  if (nr > 1)
    printf("sgemv %.9g\n", rs[1].seconds);
  free(in0);
  free(in1);
  free(bias);
  free(out);
  free(out2);
  return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

/* Runs the OpenBLAS half of the row in a child with OPENBLAS_CORETYPE =
 * `core` (see above): sec[0] gets sgemm's seconds per call, sec[1]
 * sgemv's (0 when not timed), got the core the child reports, out its
 * sgemm output.  0, or -1 with the reason in why. */
int openblas_child_run(const settings *s, const geom *g, int threads,
                       const char *core, const char *dir, double sec[2],
                       char *got, size_t gotcap, float *out, char *why,
                       size_t cap) {
  sec[0] = sec[1] = 0;
  got[0] = '\0';
  if (!self_exe[0])
    return snprintf(why, cap, "cannot find this program (/proc/self/exe)"), -1;
  char file[4300], qexe[8300], qfile[8700], cmd[20000];
  snprintf(file, sizeof file, "%s/openblas-%s.out", dir, core);
  shell_quote(qexe, sizeof qexe, self_exe);
  shell_quote(qfile, sizeof qfile, file);
  snprintf(cmd, sizeof cmd,
           "OPENBLAS_CORETYPE=%s exec %s --internal-openblas-child %d %lld "
           "%lld %lld %lld %d %d %.0f %d %d %s",
           core, qexe, g->fam, (long long)g->B, (long long)g->M,
           (long long)g->N, (long long)g->K, threads, s->compare_repeat,
           s->compare_ms * 1e3, s->bias, s->relu, qfile);
  fflush(stdout);
  fflush(stderr);
  FILE *p = popen(cmd, "r");
  if (!p)
    return snprintf(why, cap, "cannot start it: %s", strerror(errno)), -1;
  char line[256];
  while (fgets(line, sizeof line, p)) {
    char word[64];
    double x;
    if (sscanf(line, "core %63s", word) == 1)
      snprintf(got, gotcap, "%s", word);
    else if (sscanf(line, "sgemm %lf", &x) == 1)
      sec[0] = x;
    else if (sscanf(line, "sgemv %lf", &x) == 1)
      sec[1] = x;
  }
  int st = pclose(p);
  int rc = -1;
  if (st != 0)
    snprintf(why, cap, "the child exited with status %d (its reason above)",
             WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  else if (!(sec[0] > 0) || !got[0])
    snprintf(why, cap, "the child printed no timing");
  else {
    FILE *f = fopen(file, "rb");
    if (!f || fread(out, sizeof *out, (size_t)g->out_elems, f) !=
                  (size_t)g->out_elems)
      snprintf(why, cap, "cannot read its output %.300s", file);
    else
      rc = 0;
    if (f)
      fclose(f);
  }
  remove(file);
  return rc;
}
