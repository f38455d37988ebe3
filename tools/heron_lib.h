/* tools/heron_lib.h - the parts of heron-lib, which builds tuned kernels
 * into a library a program links (docs/tools/heron-lib.md):
 *
 *   heron_lib.c        main: the options, the tasks (a suite's, the logs'),
 *                      tuning the tasks that have no log, the best kernel
 *                      of each (through heron_tune's --emit)
 *   heron_lib_write.c  the library's files: the kernels' sources with their
 *                      symbols renamed, the functions of the header and
 *                      their dispatch by shape, the fallback, the version
 *                      script, pkg-config and CMake files, kernels.json
 *   heron_lib_shim.c   the BLAS shim's source and version script
 *   heron_lib_build.c  the cuda kernels' images (cubins), then compiling
 *                      and linking: lib/libNAME.a and lib/libNAME.so
 *
 * Every file the library is made of is a function of the logs and of the
 * compiler alone (no time, no absolute path inside), so the same logs give
 * the same library byte for byte. */
#ifndef HERON_TOOLS_HERON_LIB_H
#define HERON_TOOLS_HERON_LIB_H

#include <jansson.h>

#include "cli.h"

/* The longest library name: its functions' names must stay readable. */
#define LIB_NAME_MAX 32

/* What a call that is not tuned does (--fallback). */
enum { FALLBACK_NONE, FALLBACK_CBLAS, FALLBACK_ONEDNN };

/* One kernel of the library. */
typedef struct lib_kernel {
  const char *task_name; /* the suite's name of the task, or NULL */
  cli_task_args args;
  heron_task *task;
  const char *key;      /* heron_task_key */
  const char *log;      /* the log the kernel comes from */
  int user_log;         /* 1: a --log (read, never written) */
  const char *fn;       /* the header's function, NAME_gemm_f32_384x768x3072 */
  const char *family;   /* the function dispatching by shape, NAME_sgemm */
  const char *hardware; /* the machine the kernel was measured on */
  /* The best measurement, from the emitted config.json and kernel.c. */
  char *source;
  json_t *config; /* {knob: value} */
  int trial;
  double seconds, gflops;
  const char *cflags; /* heron_task_cflags, less " -shared" */
  /* A cuda kernel: launched on the caller's stream from the image the
   * library embeds (heron_lib_build.c's lib_build_images). */
  int cuda;
  heron_cuda_image image; /* its launch; its cubin unless host_image */
  unsigned char *embed;   /* the bytes embedded: the cubin, or the host */
  size_t embed_size;      /* emulation's shared object (--cuda-image) */
} lib_kernel;

typedef struct lib_settings {
  const char *name; /* --name: a C identifier */
  const char *out;  /* --out */
  const char *suite;
  const char *tasks; /* --tasks */
  const char **logs; /* --log, repeatable */
  int nlogs;
  int no_tune;
  int fallback;
  int jobs; /* parallel compiles */
  int quiet;
  int host_image;     /* --cuda-image host: the emulation in place of cubins */
  const char *cc;     /* $CC or cc */
  cli_task_args task; /* --dtype, --hw given for the suite's tasks */
  heron_tune_options o;
  const char *machine; /* this machine's hardware, as a task names it */
  lib_kernel *k;
  int nk;
} lib_settings;

/* ---- heron_lib_write.c --------------------------------------------------- */

/* Writes the library's sources, header and metadata under s->out (src/,
 * include/, lib/pkgconfig/, lib/cmake/NAME/, share/NAME/); exits with a
 * message naming the file on a write error. */
void lib_write_files(const lib_settings *s);

/* The C type of one element of a buffer of type `dtype` ("float",
 * "uint8_t", ...). */
const char *lib_ctype(const char *dtype);

/* A text being written: appended to by lib_put, freed by the caller. */
typedef struct lib_text {
  char *s;
  size_t len, cap;
} lib_text;

/* Appends printf's output of fmt to t; exits on running out of memory. */
void lib_put(lib_text *t, const char *fmt, ...) HERON_PRINTF(2, 3);

/* ---- heron_lib_shim.c ---------------------------------------------------- */

/* Writes src/NAME_blas.c and src/NAME_blas.map: libNAME_blas.so exports
 * cblas_sgemm, cblas_sgemv, sgemm_ and sgemv_, runs the tuned kernels on
 * the calls they serve exactly and passes any other call to the next
 * library defining the symbol. */
void lib_write_shim(const lib_settings *s);

/* ---- heron_lib_build.c --------------------------------------------------- */

/* The image each cuda kernel's launcher embeds: the cubin NVRTC builds for
 * the task's SM (heron_cuda_image_build), or with s->host_image the
 * kernel's CPU emulation built by $CC as a shared object exporting the
 * kernel's entry, which only the tests' fake driver loads.  Exits naming
 * the kernel and its SM when NVRTC cannot build it. */
void lib_build_images(lib_settings *s);

/* Compiles src/ into lib/libNAME.a and lib/libNAME.so; exits naming the
 * failing command and its output on a compiler error. */
void lib_build(const lib_settings *s);

/* Writes `text` to `path` whole, or exits naming the file (status 1). */
void lib_write_text(const char *path, const char *text);

#endif
