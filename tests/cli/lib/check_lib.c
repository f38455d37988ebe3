/* tests/cli/lib/check_lib.c - a program that uses a library heron-lib
 * built from tests/cli/lib/suite.json and the logs of an int8 and a bf16
 * GEMM (the e2e test
 * lib_builds_links_and_serves_every_tuned_shape.sh builds it against the
 * static and the shared library).  It checks every function against a
 * plain reference computed here, on the tuned shapes and on shapes not
 * tuned (NAME_ENOTUNED, or the fallback's result with FALLBACK defined),
 * then calls every function from 8 threads at once, 20 times each, every
 * result checked, each thread setting tlib_set_num_threads as it goes.  Prints
 * "ok" and exits 0, or names the first mismatch and exits 1. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "tlib.h"

static int close_all(const float *got, const float *want, size_t n) {
  return check_mismatch(got, want, n) < 0;
}

/* ---- References ---------------------------------------------------------- */

static void ref_gemv(int M, int K, const float *A, const float *x, float *y) {
  check_ref_gemm(M, 1, K, A, x, y);
}

/* c2d NCHW, weight [CO][CI][KH][KW], then bias and relu. */
static void ref_c2d(int H, int W, int CI, int CO, int KH, int KW, int pad,
                    const float *d, const float *w, const float *b, float *o) {
  int OH = H + 2 * pad - KH + 1, OW = W + 2 * pad - KW + 1;
  for (int co = 0; co < CO; co++)
    for (int y = 0; y < OH; y++)
      for (int x = 0; x < OW; x++) {
        double s = 0;
        for (int ci = 0; ci < CI; ci++)
          for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++) {
              int iy = y + kh - pad, ix = x + kw - pad;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                continue;
              s += (double)d[(ci * H + iy) * W + ix] *
                   w[((co * CI + ci) * KH + kh) * KW + kw];
            }
        s += b[co];
        o[(co * OH + y) * OW + x] = s > 0 ? (float)s : 0.0f;
      }
}

/* ---- The shapes of suite.json and of the int8 log ------------------------ */

enum { GM = 33, GN = 17, GK = 9 };         /* gemm */
enum { VM = 31, VK = 20 };                 /* gemv */
enum { CH = 9, CW = 9, CCI = 5, CCO = 7 }; /* c2d 3x3 pad 1, bias, relu */
enum { IM = 19, IN = 24, IK = 36 };        /* int8 gemm */
enum { BM = 13, BN = 20, BK = 18 };        /* bf16 gemm */

typedef struct inputs {
  float *A, *B, *C_ref;
  float *VA, *vx, *vy_ref;
  float *cd, *cw, *cb, *co_ref;
  uint8_t *ia;
  int8_t *ib;
  int32_t *ic_ref;
  uint16_t *ba, *bb; /* bf16 bits */
  float *bc_ref;
} inputs;

/* The float a bf16 holds, and a float cut to bf16. */
static float bf16_float(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint16_t float_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16);
}

static void make_inputs(inputs *in) {
  in->A = check_randf(GM * GK, 1);
  in->B = check_randf(GK * GN, 2);
  in->C_ref = malloc(GM * GN * sizeof(float));
  check_ref_gemm(GM, GN, GK, in->A, in->B, in->C_ref);
  in->VA = check_randf(VM * VK, 3);
  in->vx = check_randf(VK, 4);
  in->vy_ref = malloc(VM * sizeof(float));
  ref_gemv(VM, VK, in->VA, in->vx, in->vy_ref);
  in->cd = check_randf(CCI * CH * CW, 5);
  in->cw = check_randf(CCO * CCI * 9, 6);
  in->cb = check_randf(CCO, 7);
  in->co_ref = malloc(CCO * CH * CW * sizeof(float));
  ref_c2d(CH, CW, CCI, CCO, 3, 3, 1, in->cd, in->cw, in->cb, in->co_ref);
  in->ia = malloc(IM * IK);
  in->ib = malloc(IK * IN);
  in->ic_ref = malloc(IM * IN * sizeof(int32_t));
  for (int i = 0; i < IM * IK; i++)
    in->ia[i] = (uint8_t)((i * 37 + 11) % 256);
  for (int i = 0; i < IK * IN; i++)
    in->ib[i] = (int8_t)((i * 53 + 7) % 256 - 128);
  for (int i = 0; i < IM; i++)
    for (int j = 0; j < IN; j++) {
      int32_t s = 0;
      for (int k = 0; k < IK; k++)
        s += (int32_t)in->ia[i * IK + k] * in->ib[k * IN + j];
      in->ic_ref[i * IN + j] = s;
    }
  float *fa = check_randf(BM * BK, 9), *fb = check_randf(BK * BN, 10);
  in->ba = malloc(BM * BK * sizeof(uint16_t));
  in->bb = malloc(BK * BN * sizeof(uint16_t));
  in->bc_ref = malloc(BM * BN * sizeof(float));
  for (int i = 0; i < BM * BK; i++)
    in->ba[i] = float_bf16(fa[i]);
  for (int i = 0; i < BK * BN; i++)
    in->bb[i] = float_bf16(fb[i]);
  for (int i = 0; i < BM; i++)
    for (int j = 0; j < BN; j++) {
      double s = 0;
      for (int k = 0; k < BK; k++)
        s += (double)bf16_float(in->ba[i * BK + k]) *
             bf16_float(in->bb[k * BN + j]);
      in->bc_ref[i * BN + j] = (float)s;
    }
  free(fa);
  free(fb);
}

/* Every tuned function once, through its own name and through its
 * family's dispatch; returns 0 when all match. */
static void check_tuned(const inputs *in) {
  float C[GM * GN], y[VM], o[CCO * CH * CW];
  int32_t ic[IM * IN];
  memset(C, 0xff, sizeof C);
  CHECK(tlib_gemm_f32_33x17x9(in->A, in->B, C) == tlib_OK, "gemm status");
  CHECK(close_all(C, in->C_ref, GM * GN), "tlib_gemm_f32_33x17x9 result");
  memset(C, 0xff, sizeof C);
  CHECK(tlib_sgemm(GM, GN, GK, in->A, in->B, C) == tlib_OK, "sgemm status");
  CHECK(close_all(C, in->C_ref, GM * GN), "tlib_sgemm result");
  memset(y, 0xff, sizeof y);
  CHECK(tlib_sgemv(VM, VK, in->VA, in->vx, y) == tlib_OK, "sgemv status");
  CHECK(close_all(y, in->vy_ref, VM), "tlib_sgemv result");
  memset(o, 0xff, sizeof o);
  CHECK(tlib_c2d_f32_bias_relu(1, CH, CW, CCI, CCO, 3, 3, 1, 1, 1, in->cd,
                               in->cw, o, in->cb) == tlib_OK,
        "c2d status");
  CHECK(close_all(o, in->co_ref, CCO * CH * CW), "tlib_c2d_f32_bias_relu");
  memset(ic, 0xff, sizeof ic);
  CHECK(tlib_gemm_i8(IM, IN, IK, in->ia, in->ib, ic) == tlib_OK,
        "int8 gemm status");
  CHECK(!memcmp(ic, in->ic_ref, sizeof ic), "tlib_gemm_i8 result");
  float bc[BM * BN];
  memset(bc, 0xff, sizeof bc);
  CHECK(tlib_gemm_bf16(BM, BN, BK, in->ba, in->bb, bc) == tlib_OK,
        "bf16 gemm status");
  CHECK(close_all(bc, in->bc_ref, BM * BN), "tlib_gemm_bf16 result");
}

static void check_untuned(void) {
  enum { M = 6, N = 5, K = 4 };
  float *A = check_randf(M * K, 8), *B = check_randf(K * N, 9), C[M * N],
        want[M * N];
  check_ref_gemm(M, N, K, A, B, want);
  unsigned long long before = tlib_fallback_calls();
  int rc = tlib_sgemm(M, N, K, A, B, C);
#ifdef FALLBACK
  CHECK(rc == tlib_OK, "untuned sgemm: %s", tlib_strerror(rc));
  CHECK(close_all(C, want, M * N), "untuned sgemm: the fallback's result");
  CHECK(tlib_fallback_calls() == before + 1, "fallback not counted");
#else
  CHECK(rc == tlib_ENOTUNED, "untuned sgemm returned %d (%s)", rc,
        tlib_strerror(rc));
  CHECK(tlib_fallback_calls() == before, "a fallback was counted");
#endif
  /* The convolutions have no fallback. */
  float o[1];
  rc = tlib_c2d_f32_bias_relu(1, 4, 4, 2, 2, 3, 3, 1, 1, 1, A, B, o, A);
  CHECK(rc == tlib_ENOTUNED, "untuned c2d returned %d", rc);
  CHECK(!strcmp(tlib_strerror(tlib_ENOTUNED),
                "no kernel was tuned for this shape"),
        "strerror: %s", tlib_strerror(tlib_ENOTUNED));
  free(A);
  free(B);
}

/* Each round also sets the thread count, 1 or 0 (the OpenMP setting),
 * while the other threads' kernels read it. */
static void *hammer(void *arg) {
  const inputs *in = arg;
  for (int r = 0; r < 20; r++) {
    CHECK(tlib_set_num_threads(r % 2) == tlib_OK, "set_num_threads");
    check_tuned(in);
  }
  return NULL;
}

int main(void) {
  inputs in;
  make_inputs(&in);
  check_tuned(&in);
  check_untuned();
  pthread_t th[8];
  for (int i = 0; i < 8; i++)
    pthread_create(&th[i], NULL, hammer, &in);
  for (int i = 0; i < 8; i++)
    pthread_join(th[i], NULL);
  if (check_failed)
    return 1;
  printf("ok\n");
  return 0;
}
