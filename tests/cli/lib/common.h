/* tests/cli/lib/common.h - what the programs that check heron-lib's
 * libraries (check_lib.c, check_blas.c, check_threads.c) share: inputs and
 * the plain reference GEMM their results are compared with, and CHECK. */
#ifndef HERON_TESTS_CLI_LIB_COMMON_H
#define HERON_TESTS_CLI_LIB_COMMON_H

#include <stddef.h>
#include <stdio.h>

/* Set (atomically: the checks run on many threads) by a failed CHECK; the
 * program exits non-zero when it is. */
extern int check_failed;

/* Prints "FAIL file:line: <message>" when cond is false and marks the run
 * failed; the program goes on to its other checks. */
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                     \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      __atomic_store_n(&check_failed, 1, __ATOMIC_RELAXED);                    \
    }                                                                          \
  } while (0)

/* n floats in [-1, 1], the same for the same seed (malloc'ed). */
float *check_randf(size_t n, unsigned seed);

/* C[M][N] = A[M][K] B[K][N], row-major, summed in double. */
void check_ref_gemm(int M, int N, int K, const float *A, const float *B,
                    float *C);

/* The first element where got and want differ beyond 1e-4 relative, or
 * -1 when none does. */
long check_mismatch(const float *got, const float *want, size_t n);

#endif
