/* tests/cli/lib/check_blas.c - a program that calls the BLAS as any
 * program does (linked with -lopenblas), run under
 * LD_PRELOAD=libtlib_blas.so by lib_blas_shim_serves_tuned_calls.sh: the
 * calls that tlib's kernels serve exactly (GEMM 33x17x9 row-major, the
 * same product column-major through CBLAS and through Fortran's sgemm_,
 * GEMV 31x20) and calls they do not (an untuned shape, beta 1) must all
 * give the reference's results; HERON_LIB_STATS says which served them.
 * Prints "ok" or names the first mismatch and exits 1. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

void cblas_sgemm(int order, int ta, int tb, int M, int N, int K, float alpha,
                 const float *A, int lda, const float *B, int ldb, float beta,
                 float *C, int ldc);
void cblas_sgemv(int order, int trans, int M, int N, float alpha,
                 const float *A, int lda, const float *x, int incx, float beta,
                 float *y, int incy);
void sgemm_(const char *ta, const char *tb, const int *m, const int *n,
            const int *k, const float *alpha, const float *a, const int *lda,
            const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc, size_t lta, size_t ltb);

enum { ROW = 101, COL = 102, NOTRANS = 111 };

static int bad;

static void same(const char *what, const float *got, const float *want, int n) {
  long i = check_mismatch(got, want, (size_t)n);
  if (i >= 0) {
    fprintf(stderr, "FAIL %s: element %ld is %g, want %g\n", what, i, got[i],
            want[i]);
    bad = 1;
  }
}

int main(void) {
  enum { M = 33, N = 17, K = 9 };
  float *A = check_randf(M * K, 1), *B = check_randf(K * N, 2), C[M * N],
        want[M * N];
  check_ref_gemm(M, N, K, A, B, want);
  cblas_sgemm(ROW, NOTRANS, NOTRANS, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
  same("cblas_sgemm row-major", C, want, M * N);
  /* Column-major C' (17x33) = B' A' on the same memory is C = A B. */
  cblas_sgemm(COL, NOTRANS, NOTRANS, N, M, K, 1.0f, B, N, A, K, 0.0f, C, N);
  same("cblas_sgemm column-major", C, want, M * N);
  const int m = N, n = M, k = K, lda = N, ldb = K, ldc = N;
  const float one = 1.0f, zero = 0.0f;
  sgemm_("N", "N", &m, &n, &k, &one, B, &lda, A, &ldb, &zero, C, &ldc, 1, 1);
  same("sgemm_", C, want, M * N);
  /* Not tuned: a shape, and beta 1. */
  float c6[6 * 5], w6[6 * 5];
  check_ref_gemm(6, 5, 4, A, B, w6);
  cblas_sgemm(ROW, NOTRANS, NOTRANS, 6, 5, 4, 1.0f, A, 4, B, 5, 0.0f, c6, 5);
  same("cblas_sgemm 6x5x4 (system BLAS)", c6, w6, 30);
  enum { VM = 31, VK = 20 };
  float *VA = check_randf(VM * VK, 3), *x = check_randf(VK, 4), y[VM], wy[VM];
  check_ref_gemm(VM, 1, VK, VA, x, wy);
  cblas_sgemv(ROW, NOTRANS, VM, VK, 1.0f, VA, VK, x, 1, 0.0f, y, 1);
  same("cblas_sgemv", y, wy, VM);
  for (int i = 0; i < VM; i++)
    wy[i] += y[i];
  cblas_sgemv(ROW, NOTRANS, VM, VK, 1.0f, VA, VK, x, 1, 1.0f, y, 1);
  same("cblas_sgemv beta 1 (system BLAS)", y, wy, VM);
  free(A);
  free(B);
  free(VA);
  free(x);
  if (bad)
    return 1;
  printf("ok\n");
  return 0;
}
