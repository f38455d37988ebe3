/* tools/heron_lib_shim.c - the BLAS shim of a library heron-lib builds
 * (heron_lib.h): its source, src/NAME_blas.c, and its version script,
 * src/NAME_blas.map (heron_lib_build.c compiles them into
 * lib/libNAME_blas.so). */
#include <string.h>

#include "heron_lib.h"

/* src/NAME_blas.c and NAME_blas.map: libNAME_blas.so exports the CBLAS and
 * Fortran sgemm and sgemv; a call the tuned kernels serve exactly (no
 * transposes once the layout is turned row-major, contiguous operands,
 * alpha 1, beta 0, unit strides, a tuned shape) runs the kernel, any other
 * goes to the next library that defines the symbol (dlsym RTLD_NEXT: the
 * system BLAS under LD_PRELOAD). */
void lib_write_shim(const lib_settings *s) {
  const char *N = s->name;
  int has_gemm = 0, has_gemv = 0;
  for (int i = 0; i < s->nk; i++) {
    has_gemm |= !strcmp(s->k[i].family, cli_printf("%s_sgemm", N));
    has_gemv |= !strcmp(s->k[i].family, cli_printf("%s_sgemv", N));
  }
  lib_text t = {0};
  lib_put(
      &t,
      "/* %s_blas.c - the BLAS shim of %s (written by heron-lib): calls to\n"
      " * cblas_sgemm, cblas_sgemv, sgemm_ and sgemv_ that a tuned kernel\n"
      " * serves exactly run it; every other call goes to the next library\n"
      " * that defines the symbol (the system BLAS, under LD_PRELOAD). */\n"
      "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <stddef.h>\n"
      "#include <stdio.h>\n#include <stdlib.h>\n\n#include \"%s.h\"\n\n",
      N, N, N);
  if (has_gemm)
    lib_put(&t,
            "int %s_sgemm__tuned(int M, int N, int K, const float *A, const "
            "float *B,\n    float *C);\n",
            N);
  else
    lib_put(&t,
            "static int %s_sgemm__tuned(int M, int N, int K, const float *A,\n"
            "    const float *B, float *C) {\n"
            "  (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;\n"
            "  return %s_ENOTUNED;\n}\n",
            N, N);
  if (has_gemv)
    lib_put(
        &t,
        "int %s_sgemv__tuned(int M, int K, const float *A, const float *x,\n"
        "    float *y);\n",
        N);
  else
    lib_put(&t,
            "static int %s_sgemv__tuned(int M, int K, const float *A,\n"
            "    const float *x, float *y) {\n"
            "  (void)M, (void)K, (void)A, (void)x, (void)y;\n"
            "  return %s_ENOTUNED;\n}\n",
            N, N);
  lib_put(
      &t,
      "\nstatic unsigned long long %s__passed;\n"
      "__attribute__((destructor)) static void %s__shim_stats(void) {\n"
      "  const char *e = getenv(\"HERON_LIB_STATS\");\n"
      "  if (e && *e && *e != '0')\n"
      "    fprintf(stderr, \"%s: %%-48s %%llu calls\\n\",\n"
      "            \"passed to the next BLAS\", %s__passed);\n}\n\n"
      "/* The next definition of symbol `id` (counted, kept): after the\n"
      " * shim in the global scope, else in the system BLAS (a Python\n"
      " * extension's BLAS is loaded locally, out of RTLD_NEXT's reach);\n"
      " * abort when none, since a BLAS call has no error to return. */\n"
      "static void *%s__next(int id, const char *sym) {\n"
      "  static void *kept[4];\n"
      "  static const char *const libs[] = {\"libcblas.so.3\", "
      "\"libblas.so.3\",\n"
      "                                     \"libopenblas.so.0\"};\n"
      "  void *f = __atomic_load_n(&kept[id], __ATOMIC_ACQUIRE);\n"
      "  if (!f)\n    f = dlsym(RTLD_NEXT, sym);\n"
      "  for (int i = 0; !f && i < 3; i++) {\n"
      "    void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);\n"
      "    f = h ? dlsym(h, sym) : NULL;\n  }\n"
      "  __atomic_store_n(&kept[id], f, __ATOMIC_RELEASE);\n"
      "  if (!f) {\n"
      "    fprintf(stderr, \"%s_blas: no library after the shim defines %%s "
      "(link or preload a BLAS)\\n\", sym);\n"
      "    abort();\n  }\n"
      "  __atomic_add_fetch(&%s__passed, 1, __ATOMIC_RELAXED);\n"
      "  return f;\n}\n\n"
      "enum { ROW = 101, COL = 102, NOTRANS = 111, TRANS = 112 };\n\n",
      N, N, N, N, N, N, N);
  lib_put(
      &t,
      "void cblas_sgemm(int order, int ta, int tb, int M, int N, int K,\n"
      "                 float alpha, const float *A, int lda, const float *B,\n"
      "                 int ldb, float beta, float *C, int ldc) {\n"
      "  if (alpha == 1.0f && beta == 0.0f && ta == NOTRANS && tb == "
      "NOTRANS) {\n"
      "    /* Row-major C = A B; column-major C = A B is row-major\n"
      "     * C' = B' A' on the same memory. */\n"
      "    if (order == ROW && lda == K && ldb == N && ldc == N &&\n"
      "        %s_sgemm__tuned(M, N, K, A, B, C) == %s_OK)\n      return;\n"
      "    if (order == COL && lda == M && ldb == K && ldc == M &&\n"
      "        %s_sgemm__tuned(N, M, K, B, A, C) == %s_OK)\n      return;\n"
      "  }\n"
      "  typedef void (*fn)(int, int, int, int, int, int, float, const float "
      "*, int,\n                     const float *, int, float, float *, "
      "int);\n"
      "  ((fn)%s__next(0, \"cblas_sgemm\"))(order, ta, tb, M, N, K, alpha, A, "
      "lda, B,\n                                  ldb, beta, C, ldc);\n}\n\n",
      N, N, N, N, N);
  lib_put(
      &t,
      "void cblas_sgemv(int order, int trans, int M, int N, float alpha,\n"
      "                 const float *A, int lda, const float *x, int incx,\n"
      "                 float beta, float *y, int incy) {\n"
      "  if (alpha == 1.0f && beta == 0.0f && incx == 1 && incy == 1) {\n"
      "    /* Row-major y = A x; column-major y = A' x is row-major y = A x\n"
      "     * of the transposed shape. */\n"
      "    if (order == ROW && trans == NOTRANS && lda == N &&\n"
      "        %s_sgemv__tuned(M, N, A, x, y) == %s_OK)\n      return;\n"
      "    if (order == COL && trans == TRANS && lda == M &&\n"
      "        %s_sgemv__tuned(N, M, A, x, y) == %s_OK)\n      return;\n"
      "  }\n"
      "  typedef void (*fn)(int, int, int, int, float, const float *, int,\n"
      "                     const float *, int, float, float *, int);\n"
      "  ((fn)%s__next(1, \"cblas_sgemv\"))(order, trans, M, N, alpha, A, lda, "
      "x, incx,\n                                  beta, y, incy);\n}\n\n",
      N, N, N, N, N);
  lib_put(
      &t,
      "/* Fortran BLAS: column-major, arguments by reference, the hidden\n"
      " * lengths of the character arguments passed on as they came. */\n"
      "static int no_trans(const char *c) { return *c == 'N' || *c == 'n'; "
      "}\n\n"
      "void sgemm_(const char *ta, const char *tb, const int *m, const int "
      "*n,\n"
      "            const int *k, const float *alpha, const float *a, const "
      "int *lda,\n"
      "            const float *b, const int *ldb, const float *beta, float "
      "*c,\n"
      "            const int *ldc, size_t lta, size_t ltb) {\n"
      "  if (no_trans(ta) && no_trans(tb) && *alpha == 1.0f && *beta == "
      "0.0f &&\n"
      "      *lda == *m && *ldb == *k && *ldc == *m &&\n"
      "      %s_sgemm__tuned(*n, *m, *k, b, a, c) == %s_OK)\n    return;\n"
      "  typedef void (*fn)(const char *, const char *, const int *, const "
      "int *,\n"
      "                     const int *, const float *, const float *, const "
      "int *,\n"
      "                     const float *, const int *, const float *, "
      "float *,\n"
      "                     const int *, size_t, size_t);\n"
      "  ((fn)%s__next(2, \"sgemm_\"))(ta, tb, m, n, k, alpha, a, lda, b, ldb, "
      "beta, c,\n                             ldc, lta, ltb);\n}\n\n",
      N, N, N);
  lib_put(
      &t,
      "void sgemv_(const char *trans, const int *m, const int *n,\n"
      "            const float *alpha, const float *a, const int *lda,\n"
      "            const float *x, const int *incx, const float *beta, float "
      "*y,\n"
      "            const int *incy, size_t lt) {\n"
      "  if (!no_trans(trans) && *alpha == 1.0f && *beta == 0.0f && *incx "
      "== 1 &&\n"
      "      *incy == 1 && *lda == *m &&\n"
      "      %s_sgemv__tuned(*n, *m, a, x, y) == %s_OK)\n    return;\n"
      "  typedef void (*fn)(const char *, const int *, const int *, const "
      "float *,\n"
      "                     const float *, const int *, const float *, const "
      "int *,\n"
      "                     const float *, float *, const int *, size_t);\n"
      "  ((fn)%s__next(3, \"sgemv_\"))(trans, m, n, alpha, a, lda, x, incx, "
      "beta, y,\n                             incy, lt);\n}\n",
      N, N, N);
  lib_write_text(cli_printf("%s/src/%s_blas.c", s->out, N), t.s);
  free(t.s);
  lib_write_text(cli_printf("%s/src/%s_blas.map", s->out, N),
                 "/* The BLAS symbols the shim serves; nothing else. */\n"
                 "{\n  global:\n    cblas_sgemm;\n    cblas_sgemv;\n"
                 "    sgemm_;\n    sgemv_;\n  local:\n    *;\n};\n");
}
