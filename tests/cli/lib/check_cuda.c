/* tests/cli/lib/check_cuda.c - a program that calls the cuda kernel of a
 * library heron-lib built (flib, one fp16 GEMM of shape SHAPE_M x SHAPE_N x
 * SHAPE_K) as an application would, run against the tests' fake driver
 * (HERON_LIBCUDA), where device memory is host memory and the "cubin" is
 * the kernel's CPU emulation (heron-lib --cuda-image host).
 *
 *   check_cuda           8 threads make the first calls at once (the
 *                        module must still be loaded once), then the
 *                        program calls again through flib_hgemm; every
 *                        output equals the fp32 reference rounded to fp16;
 *                        an untuned shape gives flib_ENOTUNED
 *   check_cuda fail      (HERON_FAKE_CUDA=launchfail) the call returns
 *                        flib_ECUDA and flib_cuda_error() says 719
 *   check_cuda nodriver  (HERON_LIBCUDA naming no file) flib_ENODRIVER
 *
 * The stream passed is (void *)0x2a: the fake driver logs the stream of
 * each launch (HERON_FAKE_CUDA_LOG), and the script checks it is the
 * caller's. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flib.h"

#define M SHAPE_M
#define N SHAPE_N
#define K SHAPE_K
#define THREADS 8
#define STREAM ((void *)0x2a)

typedef struct call {
  uint16_t *a, *b, *c;
  int rc;
} call;

static uint16_t half(float f) {
  _Float16 h = (_Float16)f;
  uint16_t u;
  memcpy(&u, &h, 2);
  return u;
}

static float single(uint16_t u) {
  _Float16 h;
  memcpy(&h, &u, 2);
  return (float)h;
}

static void fill(call *c, int seed) {
  c->a = malloc(sizeof(uint16_t) * M * K);
  c->b = malloc(sizeof(uint16_t) * K * N);
  c->c = malloc(sizeof(uint16_t) * M * N);
  if (!c->a || !c->b || !c->c)
    exit(2);
  for (int i = 0; i < M * K; i++)
    c->a[i] = half((float)((i * 7 + seed) % 11 - 5) / 8);
  for (int i = 0; i < K * N; i++)
    c->b[i] = half((float)((i * 5 + seed) % 13 - 6) / 8);
  memset(c->c, 0xff, sizeof(uint16_t) * M * N);
}

/* 0 when c's output is A B, rounded to fp16 (the products are exact in
 * fp32: eighths of small integers). */
static int check(const call *c, const char *who) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float ref = 0;
      for (int k = 0; k < K; k++)
        ref += single(c->a[i * K + k]) * single(c->b[k * N + j]);
      float got = single(c->c[i * N + j]);
      if (fabsf(got - single(half(ref))) > 1e-3f * (1 + fabsf(ref))) {
        fprintf(stderr, "%s: C[%d][%d] = %g, expected %g\n", who, i, j, got,
                ref);
        return 1;
      }
    }
  return 0;
}

static void *first_call(void *p) {
  call *c = p;
  c->rc = flib_hgemm(M, N, K, c->a, c->b, c->c, STREAM);
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  call one;
  fill(&one, 1);
  if (!strcmp(mode, "fail") || !strcmp(mode, "nodriver")) {
    int rc = flib_hgemm(M, N, K, one.a, one.b, one.c, STREAM);
    int want = !strcmp(mode, "fail") ? flib_ECUDA : flib_ENODRIVER;
    if (rc != want) {
      fprintf(stderr, "%s: flib_hgemm returned %d (%s), expected %d\n", mode,
              rc, flib_strerror(rc), want);
      return 1;
    }
    if (!strcmp(mode, "fail") && flib_cuda_error() != 719) {
      fprintf(stderr, "flib_cuda_error() = %d, expected 719\n",
              flib_cuda_error());
      return 1;
    }
    printf("%s: %s\n", mode, flib_strerror(rc));
    return 0;
  }
  call c[THREADS];
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++) {
    fill(&c[t], t + 2);
    if (pthread_create(&th[t], NULL, first_call, &c[t]) != 0)
      return 2;
  }
  int bad = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(th[t], NULL);
    char who[32];
    snprintf(who, sizeof who, "thread %d", t);
    if (c[t].rc != flib_OK) {
      fprintf(stderr, "%s: flib_hgemm returned %d (%s)\n", who, c[t].rc,
              flib_strerror(c[t].rc));
      bad = 1;
    } else {
      bad |= check(&c[t], who);
    }
  }
  int rc = flib_hgemm(M, N, K, one.a, one.b, one.c, STREAM);
  if (rc != flib_OK) {
    fprintf(stderr, "flib_hgemm returned %d (%s)\n", rc, flib_strerror(rc));
    return 1;
  }
  bad |= check(&one, "the second call");
  rc = flib_hgemm(M + 1, N, K, one.a, one.b, one.c, STREAM);
  if (rc != flib_ENOTUNED) {
    fprintf(stderr, "an untuned shape returned %d, not flib_ENOTUNED\n", rc);
    bad = 1;
  }
  if (!bad)
    printf("%d calls equal the reference\n", THREADS + 1);
  return bad;
}
