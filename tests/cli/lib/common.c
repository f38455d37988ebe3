/* tests/cli/lib/common.c - see common.h. */
#include "common.h"

int check_failed;

#include <math.h>
#include <stdlib.h>

float *check_randf(size_t n, unsigned seed) {
  float *v = malloc(n * sizeof *v);
  if (!v)
    abort();
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (float)((seed >> 16) % 2001) / 1000.0f - 1.0f;
  }
  return v;
}

void check_ref_gemm(int M, int N, int K, const float *A, const float *B,
                    float *C) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++)
        s += (double)A[i * K + k] * B[k * N + j];
      C[i * N + j] = (float)s;
    }
}

long check_mismatch(const float *got, const float *want, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!(fabsf(got[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i]))))
      return (long)i;
  return -1;
}
