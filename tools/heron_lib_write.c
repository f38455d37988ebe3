/* tools/heron_lib_write.c - the files of a library heron-lib builds
 * (heron_lib.h).  One idea: the text of each file of the library, from
 * the kernels heron_lib.c chose (the compiling is heron_lib_build.c's);
 * under OUT,
 *
 *   src/NAME_k<i>.c         each kernel's generated source, its exported
 *                           symbols renamed to NAME__k<i>_*
 *   src/NAME.c              the header's functions: one per kernel, one per
 *                           family dispatching by shape, the fallback, the
 *                           call counts, the thread count
 *   src/NAME.map            the version script: the header's names only
 *   include/NAME.h          the header, each function documented
 *   lib/pkgconfig/NAME.pc   pkg-config (relocatable)
 *   lib/cmake/NAME/NAMEConfig.cmake  the CMake package (NAME::NAME,
 *                           NAME::NAME_static)
 *   share/NAME/kernels.json what each kernel is and where it comes from
 *
 * and, through heron_lib_shim.c, src/NAME_blas.c and src/NAME_blas.map.
 * The kernels come in the order of their function names (heron_lib.c
 * sorts them), so the order of the flags does not change the library. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heron_lib.h"

/* ---- Text ---------------------------------------------------------------- */

void lib_put(lib_text *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = t->cap - t->len;
    int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0)
      return;
    if (t->s && (size_t)n < room) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = (t->cap + (size_t)n + 1) * 2;
    char *g = realloc(t->s, cap);
    if (!g) {
      fprintf(stderr, "%s: out of memory\n", cli_prog());
      exit(CLI_EXIT_FAILURE);
    }
    t->s = g;
    t->cap = cap;
  }
}

void lib_write_text(const char *path, const char *body) {
  FILE *f = fopen(path, "wb");
  size_t n = strlen(body);
  if (!f || fwrite(body, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "%s: cannot write %s: %s\n", cli_prog(), path,
            strerror(errno));
    exit(CLI_EXIT_FAILURE);
  }
}

static void make_dir(const char *dir) {
  if (cli_make_dirs(dir) != 0) {
    fprintf(stderr, "%s: cannot create %s: %s\n", cli_prog(), dir,
            strerror(errno));
    exit(CLI_EXIT_FAILURE);
  }
}

const char *lib_ctype(const char *dtype) {
  return !strcmp(dtype, "fp32")  ? "float"
         : !strcmp(dtype, "u8")  ? "uint8_t"
         : !strcmp(dtype, "s8")  ? "int8_t"
         : !strcmp(dtype, "s32") ? "int32_t"
                                 : "uint16_t"; /* fp16, bf16: their bits */
}

/* ---- The functions' signatures ------------------------------------------- */

/* The C name of dimension d of k's op: its own name, unless a buffer has
 * that name (bmm's batch B beside its matrix B): then "dim_<name>". */
static const char *dim_param(const lib_kernel *k, const char *dim) {
  for (int b = 0; b < heron_task_nbuffers(k->task); b++) {
    heron_task_buffer info;
    heron_task_buffer_info(k->task, b, &info, NULL);
    if (!strcmp(info.name, dim))
      return cli_printf("dim_%s", dim);
  }
  return dim;
}

/* The buffers joined: "const float *A, const float *B, float *C" (the
 * bias last; BUF_PARAM), "A, B, C" (BUF_ARG), "A fp32[33][9], ..."
 * (BUF_LAYOUT); a cuda kernel's end in its stream. */
enum { BUF_PARAM, BUF_ARG, BUF_LAYOUT };
static const char *buffers_joined(const lib_kernel *k, int mode) {
  char *s = cli_strdup("");
  for (int b = 0; b < heron_task_nbuffers(k->task); b++) {
    heron_task_buffer info;
    heron_task_buffer_info(k->task, b, &info, NULL);
    const char *sep = b ? ", " : "";
    if (mode == BUF_PARAM)
      s = cli_printf("%s%s%s%s *%s", s, sep, info.output ? "" : "const ",
                     lib_ctype(info.dtype), info.name);
    else if (mode == BUF_ARG)
      s = cli_printf("%s%s%s", s, sep, info.name);
    else {
      s = cli_printf("%s%s%s %s", s, sep, info.name, info.dtype);
      for (int d = 0; d < info.ndim; d++)
        s = cli_printf("%s[%lld]", s, (long long)info.dims[d]);
    }
  }
  /* A cuda kernel runs on the caller's stream. */
  if (k->cuda && mode == BUF_PARAM)
    s = cli_printf("%s, void *stream", s);
  else if (k->cuda && mode == BUF_ARG)
    s = cli_printf("%s, stream", s);
  return s;
}

/* Whether the library holds a cpu kernel (then it has
 * NAME_set_num_threads and NAME_EINVAL). */
static int has_cpu(const lib_settings *s) {
  for (int i = 0; i < s->nk; i++)
    if (!s->k[i].cuda)
      return 1;
  return 0;
}

/* Whether the library holds a cuda kernel (then it has the driver's
 * loader and its two statuses). */
static int has_cuda(const lib_settings *s) {
  for (int i = 0; i < s->nk; i++)
    if (s->k[i].cuda)
      return 1;
  return 0;
}

/* The op's dimensions joined: "int M, int N, int K" (DIM_PARAM), "M, N,
 * K" (DIM_ARG), "M == 384 && N == 768 && K == 3072" (DIM_TEST), "M=384
 * N=768 K=3072" (DIM_TEXT, with the op's own names). */
enum { DIM_PARAM, DIM_ARG, DIM_TEST, DIM_TEXT };
static const char *dims_joined(const lib_kernel *k, int mode) {
  const char *const *names;
  int nd = 0;
  heron_op_dims(heron_task_op(k->task), &names, &nd, NULL);
  const int64_t *shape;
  int n = heron_task_shape(k->task, &shape);
  char *s = cli_strdup("");
  for (int d = 0; d < nd && d < n; d++) {
    const char *c = mode == DIM_TEXT ? names[d] : dim_param(k, names[d]);
    long long v = (long long)shape[d];
    if (mode == DIM_PARAM)
      s = cli_printf("%s%sint %s", s, d ? ", " : "", c);
    else if (mode == DIM_ARG)
      s = cli_printf("%s%s%s", s, d ? ", " : "", c);
    else if (mode == DIM_TEST)
      s = cli_printf("%s%s%s == %lld", s, d ? " && " : "", c, v);
    else
      s = cli_printf("%s%s%s=%lld", s, d ? " " : "", c, v);
  }
  return s;
}

/* Whether kernel k is the first of its family (families are written once,
 * at their first kernel). */
static int first_of_family(const lib_settings *s, int i) {
  for (int j = 0; j < i; j++)
    if (!strcmp(s->k[j].family, s->k[i].family))
      return 0;
  return 1;
}

static int is_blas_family(const lib_settings *s, const lib_kernel *k) {
  return !strcmp(k->family, cli_printf("%s_sgemm", s->name)) ||
         !strcmp(k->family, cli_printf("%s_sgemv", s->name));
}

/* ---- The header ---------------------------------------------------------- */

static void write_header(const lib_settings *s) {
  const char *N = s->name;
  lib_text t = {0};
  char *guard = cli_strdup(N);
  for (char *c = guard; *c; c++)
    if (*c >= 'a' && *c <= 'z')
      *c = (char)(*c - 'a' + 'A');
  lib_put(
      &t,
      "/* %s.h - kernels tuned by Heron-C (heron-lib), for %s.\n"
      " *\n"
      " * Every function takes row-major, contiguous tensors and returns\n"
      " * %s_OK (0), or %s_ENOTUNED for a shape no kernel was tuned for%s.%s\n"
      " * The functions may be called from many threads at once.\n"
      " * share/%s/kernels.json says where each kernel comes from;\n"
      " * HERON_LIB_STATS=1 in the environment prints, at exit, how many\n"
      " * calls each function served. */\n"
      "#ifndef %s_H\n#define %s_H\n\n#include <stdint.h>\n\n"
      "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      "enum {\n  %s_OK = 0,\n"
      "  %s_ENOTUNED = -1, /* no kernel for this shape (and no fallback) */\n"
      "%s%s"
      "  %s_EFALLBACK = -2 /* the fallback library could not be loaded */\n"
      "};\n\n"
      "/* The words of a status (static). */\n"
      "const char *%s_strerror(int status);\n\n"
      "/* Calls that went to the fallback library so far. */\n"
      "unsigned long long %s_fallback_calls(void);\n\n",
      N, s->machine, N, N,
      s->fallback == FALLBACK_NONE
          ? ""
          : cli_printf("\n * (%s_sgemm and %s_sgemv call %s for those instead)",
                       N, N,
                       s->fallback == FALLBACK_CBLAS ? "CBLAS" : "oneDNN"),
      has_cpu(s)
          ? cli_printf("\n * The cpu kernels run on as many OpenMP threads as\n"
                       " * %s_set_num_threads says, by default as many as the\n"
                       " * caller's setting (OMP_NUM_THREADS,\n"
                       " * omp_set_num_threads).",
                       N)
          : "",
      N, guard, guard, N, N,
      has_cuda(s)
          ? cli_printf("  %s_ENODRIVER = -3, /* no CUDA driver could be "
                       "loaded */\n"
                       "  %s_ECUDA = -4, /* a driver call failed "
                       "(%s_cuda_error) */\n",
                       N, N, N)
          : "",
      has_cpu(s) ? cli_printf("  %s_EINVAL = -5, /* an argument out of range "
                              "*/\n",
                              N)
                 : "",
      N, N, N);
  if (has_cpu(s))
    lib_put(
        &t,
        "/* The OpenMP threads every cpu kernel runs on, for the whole "
        "process\n"
        " * (as openblas_set_num_threads): n > 0 that many, 0 (the default)\n"
        " * the caller's OpenMP setting.  A call sets its thread's OpenMP\n"
        " * setting to n for the kernel's run and restores it after, so the\n"
        " * caller's own setting is left as it was.  Returns %s_OK, or\n"
        " * %s_EINVAL for n < 0 (the setting unchanged).  May be called at\n"
        " * any time from any thread; a kernel runs with the value it read at\n"
        " * its start. */\n"
        "int %s_set_num_threads(int n);\n\n"
        "/* That setting: n > 0, or 0 for the caller's OpenMP setting. */\n"
        "int %s_get_num_threads(void);\n\n",
        N, N, N, N);
  if (has_cuda(s))
    lib_put(
        &t,
        "/* The cuda kernels (those whose last parameter is `stream`) take\n"
        " * device pointers (cuMemAlloc, cudaMalloc) to fp16 elements, held\n"
        " * as their uint16_t bits, and enqueue the kernel on `stream` (a\n"
        " * CUstream or cudaStream_t; NULL: the default stream), returning\n"
        " * before it ran.  The first call opens libcuda.so.1 ($HERON_LIBCUDA\n"
        " * names another); each kernel's cubin, embedded in the library, is\n"
        " * loaded once, into the context current at its first call, which\n"
        " * the later calls must share.  A failure to load is kept: every\n"
        " * later call of that kernel returns it. */\n\n"
        "/* The CUresult of the last driver call that failed (0: none). */\n"
        "int %s_cuda_error(void);\n\n",
        N);
  for (int i = 0; i < s->nk; i++) {
    const lib_kernel *k = &s->k[i];
    if (!first_of_family(s, i))
      continue;
    lib_put(&t, "/* ---- %s ---- */\n\n", k->family);
    lib_put(&t,
            "/* %s at run time: calls the kernel tuned for this shape (those\n"
            " * below)%s. */\n"
            "int %s(%s,\n    %s);\n\n",
            heron_task_op(k->task),
            is_blas_family(s, k) && s->fallback != FALLBACK_NONE
                ? ", else the fallback library"
                : cli_printf(", else returns %s_ENOTUNED", N),
            k->family, dims_joined(k, DIM_PARAM), buffers_joined(k, BUF_PARAM));
    for (int j = i; j < s->nk; j++) {
      const lib_kernel *q = &s->k[j];
      if (strcmp(q->family, k->family))
        continue;
      const heron_cuda_image *im = &q->image;
      lib_put(
          &t,
          "/* %s%s%s: %s (%s)\n"
          " * %s\n"
          " * %.2f GFLOP/s (%.6g ms) on %s: trial %d of its log.%s */\n"
          "int %s(%s);\n\n",
          q->task_name ? q->task_name : "", q->task_name ? ", " : "", q->key,
          dims_joined(q, DIM_TEXT),
          heron_task_epilogue(q->task)[0] ? heron_task_epilogue(q->task)
                                          : "no epilogue",
          buffers_joined(q, BUF_LAYOUT), q->gflops, q->seconds * 1e3,
          q->hardware, q->trial,
          !q->cuda ? ""
          : s->host_image
              ? "\n * Its CPU emulation stands in for the cubin (--cuda-image "
                "host):\n * only the tests' fake driver runs it."
              : cli_printf("\n * Cubin for sm_%d (NVRTC %s): grid (%d, %d, "
                           "%d), block (%d, %d, %d),\n * %lld bytes of "
                           "dynamic shared memory, %d registers.",
                           im->sm, im->nvrtc, im->grid[0], im->grid[1],
                           im->grid[2], im->block[0], im->block[1],
                           im->block[2], (long long)im->dynamic_smem, im->regs),
          q->fn, buffers_joined(q, BUF_PARAM));
    }
  }
  lib_put(&t, "#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s_H */\n", guard);
  lib_write_text(cli_printf("%s/include/%s.h", s->out, N), t.s);
  free(t.s);
}

/* ---- The library's own code ---------------------------------------------- */

static void write_fallback(const lib_settings *s, lib_text *t) {
  const char *N = s->name;
  if (s->fallback == FALLBACK_NONE)
    return;
  int cblas = s->fallback == FALLBACK_CBLAS;
  lib_put(t,
          "/* The fallback: %s, loaded when first needed. */\n"
          "#include <dlfcn.h>\n#include <pthread.h>\n"
          "static pthread_once_t %s__once = PTHREAD_ONCE_INIT;\n"
          "static void *%s__gemm, *%s__gemv;\n",
          cblas ? "CBLAS (libcblas, OpenBLAS or the reference BLAS)"
                : "oneDNN (libdnnl)",
          N, N, N);
  if (cblas)
    lib_put(
        t,
        "static void %s__load(void) {\n"
        "  static const char *const libs[] = {\"libcblas.so.3\", "
        "\"libopenblas.so.0\", \"libblas.so.3\"};\n"
        "  for (int i = 0; i < 3 && !%s__gemm; i++) {\n"
        "    void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);\n"
        "    if (!h)\n      continue;\n"
        "    %s__gemm = dlsym(h, \"cblas_sgemm\");\n"
        "    %s__gemv = dlsym(h, \"cblas_sgemv\");\n"
        "  }\n}\n"
        "typedef void (*%s__gemm_fn)(int, int, int, int, int, int, float,\n"
        "    const float *, int, const float *, int, float, float *, int);\n"
        "typedef void (*%s__gemv_fn)(int, int, int, int, float, const float "
        "*,\n    int, const float *, int, float, float *, int);\n\n",
        N, N, N, N, N, N);
  else
    lib_put(
        t,
        "static void %s__load(void) {\n"
        "  static const char *const libs[] = {\"libdnnl.so.3\", "
        "\"libdnnl.so.2\"};\n"
        "  for (int i = 0; i < 2 && !%s__gemm; i++) {\n"
        "    void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);\n"
        "    if (h)\n      %s__gemm = dlsym(h, \"dnnl_sgemm\");\n"
        "  }\n}\n"
        "typedef int (*%s__gemm_fn)(char, char, int64_t, int64_t, int64_t,\n"
        "    float, const float *, int64_t, const float *, int64_t, float,\n"
        "    float *, int64_t);\n\n",
        N, N, N, N);
  lib_put(t,
          "static int %s__fallback_sgemm(int M, int N, int K, const float *A,\n"
          "                              const float *B, float *C) {\n"
          "  pthread_once(&%s__once, %s__load);\n"
          "  if (!%s__gemm)\n    return %s_EFALLBACK;\n"
          "  __atomic_add_fetch(&%s__fallbacks, 1, __ATOMIC_RELAXED);\n",
          N, N, N, N, N, N);
  if (cblas)
    lib_put(t,
            "  /* CblasRowMajor 101, CblasNoTrans 111. */\n"
            "  ((%s__gemm_fn)%s__gemm)(101, 111, 111, M, N, K, 1.0f, A, K, B, "
            "N, 0.0f,\n    C, N);\n  return %s_OK;\n}\n",
            N, N, N);
  else
    lib_put(
        t,
        "  return ((%s__gemm_fn)%s__gemm)('N', 'N', M, N, K, 1.0f, A, K, B, "
        "N,\n    0.0f, C, N) == 0 ? %s_OK : %s_EFALLBACK;\n}\n",
        N, N, N, N);
  lib_put(t,
          "static int %s__fallback_sgemv(int M, int K, const float *A, const "
          "float *x,\n                              float *y) {\n",
          N);
  if (cblas)
    lib_put(t,
            "  pthread_once(&%s__once, %s__load);\n"
            "  if (!%s__gemv)\n    return %s_EFALLBACK;\n"
            "  __atomic_add_fetch(&%s__fallbacks, 1, __ATOMIC_RELAXED);\n"
            "  ((%s__gemv_fn)%s__gemv)(101, 111, M, K, 1.0f, A, K, x, 1, 0.0f, "
            "y, 1);\n  return %s_OK;\n}\n\n",
            N, N, N, N, N, N, N, N);
  else
    lib_put(t,
            "  /* y = A x as a GEMM with N = 1. */\n"
            "  return %s__fallback_sgemm(M, 1, K, A, x, y);\n}\n\n",
            N);
}

/* NAME_set_num_threads's setting, and NAME__run, which runs a cpu kernel
 * on that many OpenMP threads: it sets the calling thread's OpenMP setting
 * (an ICV each thread has its own of, so concurrent callers do not meet)
 * for the kernel's run and restores it.  The kernels' sources stay as
 * heron-search generated and timed them: their parallel regions take the
 * count from that setting. */
static void write_threads(const lib_settings *s, lib_text *t) {
  const char *N = s->name;
  if (!has_cpu(s))
    return;
  lib_put(t,
          "/* %s_set_num_threads's count; 0: the caller's OpenMP setting. */\n"
          "static int %s__threads;\n\n"
          "int %s_set_num_threads(int n) {\n"
          "  if (n < 0)\n    return %s_EINVAL;\n"
          "  __atomic_store_n(&%s__threads, n, __ATOMIC_RELAXED);\n"
          "  return %s_OK;\n}\n\n"
          "int %s_get_num_threads(void) {\n"
          "  return __atomic_load_n(&%s__threads, __ATOMIC_RELAXED);\n}\n\n",
          N, N, N, N, N, N, N, N);
  lib_put(
      t,
      "/* Runs a cpu kernel on %s__threads OpenMP threads (when set): the\n"
      " * calling thread's own OpenMP setting for the run, restored after. */\n"
      "#include <omp.h>\n"
      "static void %s__run(void (*kernel)(void *const *), void *const *bufs) "
      "{\n"
      "  int n = __atomic_load_n(&%s__threads, __ATOMIC_RELAXED);\n"
      "  if (!n) {\n    kernel(bufs);\n    return;\n  }\n"
      "  int caller = omp_get_max_threads();\n"
      "  omp_set_num_threads(n);\n"
      "  kernel(bufs);\n"
      "  omp_set_num_threads(caller);\n}\n\n",
      N, N, N);
}

/* The driver's loader, when the library has cuda kernels: libcuda.so.1
 * opened once (HERON_LIBCUDA names another, as for libheron), the five
 * entry points a launch needs, and the two calls every kernel's launcher
 * (src/NAME_k<i>.c) makes: NAME__cuda_load, once per kernel, and
 * NAME__cuda_launch. */
static void write_cuda_runtime(const lib_settings *s, lib_text *t) {
  const char *N = s->name;
  if (!has_cuda(s))
    return;
  lib_put(
      t,
      "/* The CUDA driver, opened at the first call of a cuda kernel. */\n"
      "#include <dlfcn.h>\n#include <pthread.h>\n"
      "typedef int (*%s__cu_init)(unsigned);\n"
      "typedef int (*%s__cu_load)(void **, const void *);\n"
      "typedef int (*%s__cu_get)(void **, void *, const char *);\n"
      "typedef int (*%s__cu_attr)(void *, int, int);\n"
      "typedef int (*%s__cu_launch)(void *, unsigned, unsigned, unsigned,\n"
      "    unsigned, unsigned, unsigned, unsigned, void *, void **, void "
      "**);\n"
      "static struct {\n"
      "  %s__cu_init init;\n  %s__cu_load load;\n  %s__cu_get get;\n"
      "  %s__cu_attr attr;\n  %s__cu_launch launch;\n"
      "} %s__cu;\n"
      "static pthread_once_t %s__cu_once = PTHREAD_ONCE_INIT;\n"
      "static int %s__cu_status, %s__cu_error;\n\n"
      "int %s_cuda_error(void) {\n"
      "  return __atomic_load_n(&%s__cu_error, __ATOMIC_RELAXED);\n}\n\n"
      "/* A driver call's result as a status, the CUresult kept. */\n"
      "static int %s__cu_check(int r) {\n"
      "  if (r == 0)\n    return %s_OK;\n"
      "  __atomic_store_n(&%s__cu_error, r, __ATOMIC_RELAXED);\n"
      "  return %s_ECUDA;\n}\n\n"
      "static void %s__cu_open(void) {\n"
      "  const char *path = getenv(\"HERON_LIBCUDA\");\n"
      "  void *h = dlopen(path && *path ? path : \"libcuda.so.1\",\n"
      "                  RTLD_NOW | RTLD_LOCAL);\n"
      "  if (h) {\n"
      "    %s__cu.init = (%s__cu_init)dlsym(h, \"cuInit\");\n"
      "    %s__cu.load = (%s__cu_load)dlsym(h, \"cuModuleLoadData\");\n"
      "    %s__cu.get = (%s__cu_get)dlsym(h, \"cuModuleGetFunction\");\n"
      "    %s__cu.attr = (%s__cu_attr)dlsym(h, \"cuFuncSetAttribute\");\n"
      "    %s__cu.launch = (%s__cu_launch)dlsym(h, \"cuLaunchKernel\");\n"
      "  }\n"
      "  if (!h || !%s__cu.init || !%s__cu.load || !%s__cu.get || "
      "!%s__cu.attr ||\n      !%s__cu.launch)\n"
      "    %s__cu_status = %s_ENODRIVER;\n"
      "  else\n    %s__cu_status = %s__cu_check(%s__cu.init(0));\n}\n\n"
      "/* Loads a kernel's image into the current context, finds its entry\n"
      " * and allows its dynamic shared memory (above 48 KiB a kernel must\n"
      " * opt in); each kernel calls it once. */\n"
      "int %s__cuda_load(const unsigned char *image, const char *entry,\n"
      "                  long long smem, void **fn) {\n"
      "  pthread_once(&%s__cu_once, %s__cu_open);\n"
      "  if (%s__cu_status)\n    return %s__cu_status;\n"
      "  void *mod = NULL;\n"
      "  int rc = %s__cu_check(%s__cu.load(&mod, image));\n"
      "  if (rc == %s_OK)\n"
      "    rc = %s__cu_check(%s__cu.get(fn, mod, entry));\n"
      "  /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */\n"
      "  if (rc == %s_OK && smem > 48 * 1024)\n"
      "    rc = %s__cu_check(%s__cu.attr(*fn, 8, (int)smem));\n"
      "  return rc;\n}\n\n"
      "/* Enqueues the kernel on `stream` with its four device pointers. */\n"
      "int %s__cuda_launch(void *fn, const unsigned *grid, const unsigned "
      "*block,\n"
      "                    unsigned smem, void *stream, unsigned long long "
      "*args) {\n"
      "  void *params[4] = {&args[0], &args[1], &args[2], &args[3]};\n"
      "  return %s__cu_check(%s__cu.launch(fn, grid[0], grid[1], grid[2], "
      "block[0],\n"
      "      block[1], block[2], smem, stream, params, NULL));\n}\n\n",
      N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
      N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
      N, N, N, N, N, N, N);
}

static void write_code(const lib_settings *s) {
  const char *N = s->name;
  lib_text t = {0};
  lib_put(&t,
          "/* %s.c - the functions of %s.h (written by heron-lib). */\n"
          "#include <stdio.h>\n#include <stdlib.h>\n\n#include \"%s.h\"\n\n"
          "static unsigned long long %s__fallbacks;\n"
          "static unsigned long long %s__calls[%d];\n"
          "static const char *const %s__names[%d] = {\n",
          N, N, N, N, N, s->nk, N, s->nk);
  for (int i = 0; i < s->nk; i++)
    lib_put(&t, "    \"%s\",\n", s->k[i].fn);
  lib_put(
      &t,
      "};\n\n"
      "const char *%s_strerror(int status) {\n"
      "  return status == %s_OK ? \"ok\"\n"
      "         : status == %s_ENOTUNED ? \"no kernel was tuned for this "
      "shape\"\n"
      "         : status == %s_EFALLBACK ? \"the fallback library could not "
      "be loaded\"\n%s"
      "%s"
      "         : \"unknown status\";\n}\n\n"
      "unsigned long long %s_fallback_calls(void) {\n"
      "  return __atomic_load_n(&%s__fallbacks, __ATOMIC_RELAXED);\n}\n\n"
      "/* HERON_LIB_STATS=1: the calls each function served, at exit. */\n"
      "__attribute__((destructor)) static void %s__stats(void) {\n"
      "  const char *e = getenv(\"HERON_LIB_STATS\");\n"
      "  if (!e || !*e || *e == '0')\n    return;\n"
      "  for (int i = 0; i < %d; i++)\n"
      "    fprintf(stderr, \"%s: %%-48s %%llu calls\\n\", %s__names[i],\n"
      "            %s__calls[i]);\n"
      "  fprintf(stderr, \"%s: %%-48s %%llu calls\\n\", \"fallback\",\n"
      "          %s__fallbacks);\n}\n\n",
      N, N, N, N,
      has_cuda(s) ? cli_printf("         : status == %s_ENODRIVER ? \"no CUDA "
                               "driver could be loaded\"\n"
                               "         : status == %s_ECUDA ? \"a CUDA "
                               "driver call failed\"\n",
                               N, N)
                  : "",
      has_cpu(s) ? cli_printf("         : status == %s_EINVAL ? \"an argument "
                              "is out of range\"\n",
                              N)
                 : "",
      N, N, N, s->nk, N, N, N, N, N);
  write_threads(s, &t);
  write_fallback(s, &t);
  write_cuda_runtime(s, &t);
  /* Each kernel's function: its buffers as the kernel's argument array,
   * the call counted, then the kernel run (cpu) or launched on the
   * caller's stream (cuda). */
  for (int i = 0; i < s->nk; i++) {
    const lib_kernel *k = &s->k[i];
    lib_put(&t,
            k->cuda ? "int %s__k%d_launch(void *const *bufs, void *stream);\n"
                    : "void %s__k%d_kernel(void *const *bufs);\n",
            N, i);
    lib_put(&t, "int %s(%s) {\n  void *const bufs[] = {", k->fn,
            buffers_joined(k, BUF_PARAM));
    for (int b = 0; b < heron_task_nbuffers(k->task); b++) {
      heron_task_buffer info;
      heron_task_buffer_info(k->task, b, &info, NULL);
      lib_put(&t, "%s(void *)%s", b ? ", " : "", info.name);
    }
    lib_put(&t,
            "};\n  __atomic_add_fetch(&%s__calls[%d], 1, __ATOMIC_RELAXED);\n",
            N, i);
    if (k->cuda)
      lib_put(&t, "  return %s__k%d_launch(bufs, stream);\n}\n\n", N, i);
    else
      lib_put(&t, "  %s__run(%s__k%d_kernel, bufs);\n  return %s_OK;\n}\n\n", N,
              N, i, N);
  }
  for (int i = 0; i < s->nk; i++) {
    const lib_kernel *k = &s->k[i];
    if (!first_of_family(s, i))
      continue;
    /* FAMILY__tuned: the kernels alone (the BLAS shim calls it too). */
    lib_put(&t, "int %s__tuned(%s,\n    %s) {\n", k->family,
            dims_joined(k, DIM_PARAM), buffers_joined(k, BUF_PARAM));
    for (int j = i; j < s->nk; j++)
      if (!strcmp(s->k[j].family, k->family))
        lib_put(&t, "  if (%s)\n    return %s(%s);\n",
                dims_joined(&s->k[j], DIM_TEST), s->k[j].fn,
                buffers_joined(&s->k[j], BUF_ARG));
    /* Every dimension and buffer is used, whatever the tests needed. */
    const char *const *names;
    int nd = 0;
    heron_op_dims(heron_task_op(k->task), &names, &nd, NULL);
    for (int d = 0; d < nd; d++)
      lib_put(&t, "  (void)%s;\n", dim_param(k, names[d]));
    for (int b = 0; b < heron_task_nbuffers(k->task); b++) {
      heron_task_buffer info;
      heron_task_buffer_info(k->task, b, &info, NULL);
      lib_put(&t, "  (void)%s;\n", info.name);
    }
    if (k->cuda)
      lib_put(&t, "  (void)stream;\n");
    lib_put(&t, "  return %s_ENOTUNED;\n}\n\n", N);
    /* FAMILY: the kernels, then the fallback where there is one. */
    lib_put(&t, "int %s(%s,\n    %s) {\n", k->family, dims_joined(k, DIM_PARAM),
            buffers_joined(k, BUF_PARAM));
    lib_put(&t, "  int rc = %s__tuned(%s, %s);\n", k->family,
            dims_joined(k, DIM_ARG), buffers_joined(k, BUF_ARG));
    if (is_blas_family(s, k) && s->fallback != FALLBACK_NONE) {
      if (!strcmp(k->family, cli_printf("%s_sgemm", N)))
        lib_put(&t,
                "  return rc != %s_ENOTUNED ? rc\n"
                "         : %s__fallback_sgemm(M, N, K, A, B, C);\n}\n\n",
                N, N);
      else
        lib_put(&t,
                "  return rc != %s_ENOTUNED ? rc\n"
                "         : %s__fallback_sgemv(M, K, A, x, y);\n}\n\n",
                N, N);
    } else {
      lib_put(&t, "  return rc;\n}\n\n");
    }
  }
  lib_write_text(cli_printf("%s/src/%s.c", s->out, N), t.s);
  free(t.s);
}

/* A cuda kernel's file: its image as bytes (the cubin, or the host
 * emulation of --cuda-image host) and its launcher, which loads the image
 * once (pthread_once) and launches it on the caller's stream with the
 * geometry of the source's launch line. */
static void write_launcher(const lib_settings *s, const lib_kernel *k, int i) {
  const char *N = s->name;
  const heron_cuda_image *im = &k->image;
  lib_text t = {0};
  lib_put(&t,
          "/* %s, kernel %d of %s: %s, trial %d of %s.\n"
          " * %s; launched with grid (%d, %d, %d),\n"
          " * block (%d, %d, %d) and %lld bytes of dynamic shared memory. */\n"
          "#include <pthread.h>\n#include <stdint.h>\n\n"
          "int %s__cuda_load(const unsigned char *image, const char *entry,\n"
          "                  long long smem, void **fn);\n"
          "int %s__cuda_launch(void *fn, const unsigned *grid, const unsigned "
          "*block,\n"
          "                    unsigned smem, void *stream, unsigned long long "
          "*args);\n\n"
          "static const unsigned char image[%zu] __attribute__((aligned(8))) = "
          "{",
          k->fn, i, N, k->key, k->trial, k->log,
          s->host_image
              ? "The kernel's CPU emulation as a host shared object "
                "(--cuda-image host:\n * only the tests' fake driver loads it)"
              : cli_printf("The cubin NVRTC %s built for sm_%d (%d registers, "
                           "%d bytes spilled,\n * %lld bytes of static shared "
                           "memory)",
                           im->nvrtc, im->sm, im->regs, im->spill_bytes,
                           (long long)im->static_smem),
          im->grid[0], im->grid[1], im->grid[2], im->block[0], im->block[1],
          im->block[2], (long long)im->dynamic_smem, N, N, k->embed_size);
  for (size_t b = 0; b < k->embed_size; b++)
    lib_put(&t, "%s0x%02x,", b % 16 ? "" : "\n   ", k->embed[b]);
  int nb = heron_task_nbuffers(k->task), out = 0, bias = 0;
  for (int b = 0; b < nb; b++) {
    heron_task_buffer info;
    heron_task_buffer_info(k->task, b, &info, NULL);
    if (info.output)
      out = b;
  }
  bias = out + 1 < nb;
  lib_put(
      &t,
      "\n};\n\n"
      "static pthread_once_t once = PTHREAD_ONCE_INIT;\n"
      "static void *fn;\nstatic int status;\n"
      "static void load(void) {\n"
      "  status = %s__cuda_load(image, \"%s\", %lldLL, &fn);\n}\n\n"
      "/* bufs: the op's device pointers in the header's order; the kernel\n"
      " * takes (in0, in1, out, bias). */\n"
      "int %s__k%d_launch(void *const *bufs, void *stream) {\n"
      "  static const unsigned grid[3] = {%d, %d, %d};\n"
      "  static const unsigned block[3] = {%d, %d, %d};\n"
      "  pthread_once(&once, load);\n"
      "  if (status)\n    return status;\n"
      "  unsigned long long args[4] = {\n"
      "      (uintptr_t)bufs[0], %s, (uintptr_t)bufs[%d], %s};\n"
      "  return %s__cuda_launch(fn, grid, block, %lldu, stream, args);\n}\n",
      N, im->entry, (long long)im->dynamic_smem, N, i, im->grid[0], im->grid[1],
      im->grid[2], im->block[0], im->block[1], im->block[2],
      out > 1 ? "(uintptr_t)bufs[1]" : "0", out,
      bias ? cli_printf("(uintptr_t)bufs[%d]", out + 1) : "0", N,
      (long long)im->dynamic_smem);
  lib_write_text(cli_printf("%s/src/%s_k%d.c", s->out, N, i), t.s);
  free(t.s);
}

/* The kernels' sources: each exported symbol (heron_kernel, and
 * heron_prepack / heron_prepacked_elems where the kernel has them)
 * renamed to the library's own. */
static void write_kernels(const lib_settings *s) {
  for (int i = 0; i < s->nk; i++) {
    const lib_kernel *k = &s->k[i];
    if (k->cuda) {
      write_launcher(s, k, i);
      continue;
    }
    lib_text t = {0};
    lib_put(&t,
            "/* %s, kernel %d of %s: %s, trial %d of %s. */\n"
            "#define heron_kernel %s__k%d_kernel\n"
            "#define heron_prepack %s__k%d_prepack\n"
            "#define heron_prepacked_elems %s__k%d_prepacked_elems\n",
            k->fn, i, s->name, k->key, k->trial, k->log, s->name, i, s->name, i,
            s->name, i);
    lib_put(&t, "%s", k->source);
    lib_write_text(cli_printf("%s/src/%s_k%d.c", s->out, s->name, i), t.s);
    free(t.s);
  }
}

/* ---- Packaging ----------------------------------------------------------- */

static void write_packaging(const lib_settings *s) {
  const char *N = s->name;
  lib_text t = {0};
  lib_put(&t,
          "/* The names %s.h declares; everything else is local. */\n{\n"
          "  global:\n",
          N);
  lib_put(&t, "    %s_strerror;\n    %s_fallback_calls;\n", N, N);
  if (has_cpu(s))
    lib_put(&t, "    %s_set_num_threads;\n    %s_get_num_threads;\n", N, N);
  if (has_cuda(s))
    lib_put(&t, "    %s_cuda_error;\n", N);
  for (int i = 0; i < s->nk; i++) {
    lib_put(&t, "    %s;\n", s->k[i].fn);
    if (first_of_family(s, i))
      lib_put(&t, "    %s;\n", s->k[i].family);
  }
  lib_put(&t, "  local:\n    *;\n};\n");
  lib_write_text(cli_printf("%s/src/%s.map", s->out, N), t.s);
  free(t.s);

  t = (lib_text){0};
  lib_put(&t,
          "# pkg-config file of %s (heron-lib): tuned kernels.\n"
          "prefix=${pcfiledir}/../..\n"
          "libdir=${prefix}/lib\nincludedir=${prefix}/include\n\n"
          "Name: %s\nDescription: kernels tuned by Heron-C for %s\n"
          "Version: 1.0\n"
          "Cflags: -I${includedir}\n"
          "Libs: -L${libdir} -l%s\n"
          "Libs.private: -fopenmp -ldl -lm -lpthread\n",
          N, N, s->machine, N);
  make_dir(cli_printf("%s/lib/pkgconfig", s->out));
  lib_write_text(cli_printf("%s/lib/pkgconfig/%s.pc", s->out, N), t.s);
  free(t.s);

  t = (lib_text){0};
  lib_put(
      &t,
      "# CMake package of %s (heron-lib): find_package(%s) gives %s::%s\n"
      "# (the shared library) and %s::%s_static.\n"
      "get_filename_component(_%s_prefix \"${CMAKE_CURRENT_LIST_DIR}/../../..\""
      " ABSOLUTE)\n"
      "find_package(OpenMP REQUIRED COMPONENTS C)\n"
      "if(NOT TARGET %s::%s)\n"
      "  add_library(%s::%s SHARED IMPORTED)\n"
      "  set_target_properties(%s::%s PROPERTIES\n"
      "    IMPORTED_LOCATION \"${_%s_prefix}/lib/lib%s.so\"\n"
      "    INTERFACE_INCLUDE_DIRECTORIES \"${_%s_prefix}/include\")\n"
      "  add_library(%s::%s_static STATIC IMPORTED)\n"
      "  set_target_properties(%s::%s_static PROPERTIES\n"
      "    IMPORTED_LOCATION \"${_%s_prefix}/lib/lib%s.a\"\n"
      "    INTERFACE_INCLUDE_DIRECTORIES \"${_%s_prefix}/include\"\n"
      "    INTERFACE_LINK_LIBRARIES \"OpenMP::OpenMP_C;${CMAKE_DL_LIBS};m\")\n"
      "endif()\n",
      N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N);
  make_dir(cli_printf("%s/lib/cmake/%s", s->out, N));
  lib_write_text(cli_printf("%s/lib/cmake/%s/%sConfig.cmake", s->out, N, N),
                 t.s);
  free(t.s);
}

/* The first line of `cc --version` ("cc (Debian 12.2.0-14) 12.2.0"), or
 * "unknown" when the compiler does not say. */
static const char *compiler_version(const char *cc) {
  FILE *p = popen(cli_printf("%s --version 2>/dev/null", cc), "r");
  char line[256] = "";
  if (p) {
    if (!fgets(line, sizeof line, p))
      line[0] = '\0';
    pclose(p);
  }
  line[strcspn(line, "\n")] = '\0';
  return cli_strdup(line[0] ? line : "unknown");
}

static void write_manifest(const lib_settings *s) {
  json_t *root = json_object();
  json_object_set_new(root, "library", json_string(s->name));
  json_object_set_new(root, "machine", json_string(s->machine));
  json_object_set_new(root, "compiler", json_string(s->cc));
  json_object_set_new(root, "compiler_version",
                      json_string(compiler_version(s->cc)));
  json_object_set_new(root, "fallback",
                      json_string(s->fallback == FALLBACK_CBLAS    ? "cblas"
                                  : s->fallback == FALLBACK_ONEDNN ? "onednn"
                                                                   : "none"));
  json_t *ks = json_array();
  for (int i = 0; i < s->nk; i++) {
    const lib_kernel *k = &s->k[i];
    json_t *o = json_object();
    json_object_set_new(o, "function", json_string(k->fn));
    json_object_set_new(o, "dispatch", json_string(k->family));
    if (k->task_name)
      json_object_set_new(o, "name", json_string(k->task_name));
    json_object_set_new(o, "task", json_string(k->key));
    json_object_set_new(o, "log", json_string(k->log));
    json_object_set_new(o, "trial", json_integer(k->trial));
    json_object_set_new(o, "config", json_incref(k->config));
    json_object_set_new(o, "seconds", json_real(k->seconds));
    json_object_set_new(o, "gflops", json_real(k->gflops));
    json_object_set_new(o, "hardware", json_string(k->hardware));
    json_object_set_new(o, "cflags", json_string(k->cflags));
    if (k->cuda) {
      const heron_cuda_image *im = &k->image;
      json_t *c = json_object();
      json_object_set_new(c, "image",
                          json_string(s->host_image ? "host emulation (a "
                                                      "test aid)"
                                                    : "cubin"));
      json_object_set_new(c, "sm", json_integer(im->sm));
      if (!s->host_image) {
        json_object_set_new(c, "nvrtc", json_string(im->nvrtc));
        json_object_set_new(c, "registers", json_integer(im->regs));
        json_object_set_new(c, "spill_bytes", json_integer(im->spill_bytes));
        json_object_set_new(c, "static_smem",
                            json_integer((json_int_t)im->static_smem));
      }
      json_object_set_new(c, "bytes", json_integer((json_int_t)k->embed_size));
      json_object_set_new(c, "entry", json_string(im->entry));
      json_object_set_new(
          c, "grid", json_pack("[iii]", im->grid[0], im->grid[1], im->grid[2]));
      json_object_set_new(
          c, "block",
          json_pack("[iii]", im->block[0], im->block[1], im->block[2]));
      json_object_set_new(c, "dynamic_smem",
                          json_integer((json_int_t)im->dynamic_smem));
      json_object_set_new(o, "cuda", c);
    }
    json_object_set_new(o, "source",
                        json_string(cli_printf("src/%s_k%d.c", s->name, i)));
    json_array_append_new(ks, o);
  }
  json_object_set_new(root, "kernels", ks);
  char *txt = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (!txt) {
    fprintf(stderr, "%s: out of memory\n", cli_prog());
    exit(CLI_EXIT_FAILURE);
  }
  make_dir(cli_printf("%s/share/%s", s->out, s->name));
  lib_write_text(cli_printf("%s/share/%s/kernels.json", s->out, s->name),
                 cli_printf("%s\n", txt));
  free(txt);
}

void lib_write_files(const lib_settings *s) {
  make_dir(cli_printf("%s/src", s->out));
  make_dir(cli_printf("%s/include", s->out));
  write_kernels(s);
  write_code(s);
  lib_write_shim(s);
  write_header(s);
  write_packaging(s);
  write_manifest(s);
}
