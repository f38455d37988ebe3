/* core/targets/cuda/nvrtc.c - compiling generated CUDA sources with NVRTC.
 *
 * NVRTC compiles in-process to a cubin for one SM, and with ptxas' -v
 * option its program log reports, per entry function, the registers per
 * thread, the spill traffic and the static shared memory: the statistics
 * a search without a GPU can still look at (docs/targets/cuda.md).  NVRTC
 * is thread safe, so the toolchain's builds (toolchain.c) run these
 * compiles on heron__build_all's pool of build threads, one program per
 * call.
 *
 * Without the CUDA toolkit at build time (HERON_HAVE_NVRTC undefined) the
 * functions still exist and every compile fails with one clear message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/targets/cuda/toolchain.h"
#include "core/util/util.h"

#ifdef HERON_HAVE_NVRTC
#include <nvrtc.h>
#endif

/* How much of NVRTC's log a result keeps: the end, where the last errors
 * and ptxas' report of the entry function are. */
#define LOG_TAIL_BYTES 2048

/* The name NVRTC gives the source in its messages ("kernel.cu(12): error:
 * ..."), so a message points at the file the build writes next to the
 * cubin. */
#define NVRTC_SOURCE_NAME "kernel.cu"

int heron__nvrtc_available(void) {
#ifdef HERON_HAVE_NVRTC
  return 1;
#else
  return 0;
#endif
}

const char *heron__nvrtc_version(char *buf, size_t cap) {
  int major = 0, minor = 0;
#ifdef HERON_HAVE_NVRTC
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    major = minor = 0;
#endif
  if (major > 0)
    snprintf(buf, cap, "%d.%d", major, minor);
  else
    snprintf(buf, cap, "%s", "");
  return buf;
}

/* The number that ends right before `at` (skipping spaces), or -1 when
 * there is none: "..., 1024 bytes smem" read backwards from " bytes". */
static long long number_before(const char *start, const char *at) {
  const char *p = at;
  while (p > start && p[-1] == ' ')
    p--;
  const char *end = p;
  while (p > start && p[-1] >= '0' && p[-1] <= '9')
    p--;
  if (p == end)
    return -1;
  return strtoll(p, NULL, 10);
}

/* Finds `needle` in [s, end); NULL when absent. */
static const char *find_in(const char *s, const char *end, const char *needle) {
  size_t n = strlen(needle);
  for (const char *p = s; p + n <= end; p++)
    if (*p == *needle && memcmp(p, needle, n) == 0)
      return p;
  return NULL;
}

int heron__ptxas_stats(const char *log, const char *entry, int *regs,
                       int *spill_bytes, int64_t *static_smem) {
  *regs = 0;
  *spill_bytes = 0;
  *static_smem = 0;
  if (!log)
    return -1;
  static const char marker[] = "Compiling entry function '";
  const char *end = log + strlen(log);
  const char *sec = NULL;
  if (entry && *entry) {
    for (const char *p = strstr(log, marker); p && !sec;
         p = strstr(p + 1, marker)) {
      const char *name = p + strlen(marker);
      size_t n = strlen(entry);
      if (strncmp(name, entry, n) == 0 && name[n] == '\'')
        sec = p;
    }
  }
  if (!sec)
    sec = strstr(log, marker);
  if (!sec)
    sec = log;
  /* The entry's report runs to the next entry's (or the log's end). */
  const char *next = strstr(sec + 1, marker);
  const char *sec_end = next ? next : end;

  const char *used = find_in(sec, sec_end, "Used ");
  if (!used)
    return -1;
  *regs = atoi(used + strlen("Used "));
  const char *line_end = find_in(used, sec_end, "\n");
  if (!line_end)
    line_end = sec_end;
  const char *smem = find_in(used, line_end, " bytes smem");
  if (smem) {
    long long v = number_before(used, smem);
    *static_smem = v > 0 ? v : 0;
  }
  /* The spill line follows "Function properties for <entry>"; with no
   * such header (older ptxas), the section's first spill line is it. */
  const char *props = find_in(sec, sec_end, "Function properties for ");
  const char *from = props ? props : sec;
  const char *st = find_in(from, sec_end, " bytes spill stores");
  const char *ld = find_in(from, sec_end, " bytes spill loads");
  long long s = st ? number_before(from, st) : 0;
  long long l = ld ? number_before(from, ld) : 0;
  *spill_bytes = (int)((s > 0 ? s : 0) + (l > 0 ? l : 0));
  return 0;
}

void heron__nvrtc_result_free(heron__nvrtc_result *r) {
  if (!r)
    return;
  free(r->cubin);
  free(r->log);
  memset(r, 0, sizeof *r);
}

#ifdef HERON_HAVE_NVRTC

/* The last LOG_TAIL_BYTES of a log, from a line start when cut; malloc'ed,
 * NULL for an empty log. */
static char *log_tail(const char *log) {
  size_t n = log ? strlen(log) : 0;
  while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' '))
    n--;
  if (n == 0)
    return NULL;
  size_t start = n > LOG_TAIL_BYTES ? n - LOG_TAIL_BYTES : 0;
  if (start > 0) {
    const char *nl = memchr(log + start, '\n', n - start);
    if (nl && (size_t)(nl + 1 - log) < n)
      start = (size_t)(nl + 1 - log);
  }
  char *t = malloc(n - start + 1);
  if (t) {
    memcpy(t, log + start, n - start);
    t[n - start] = '\0';
  }
  return t;
}

/* Where the CUDA headers are: $HERON_CUDA_INCLUDE, else the toolkit CMake
 * found when libheron was built. */
static const char *include_dir(void) {
  const char *env = getenv("HERON_CUDA_INCLUDE");
  if (env && *env)
    return env;
#ifdef HERON_CUDA_INCLUDE_DIR
  return HERON_CUDA_INCLUDE_DIR;
#else
  return "/usr/local/cuda/include";
#endif
}

/* The NVRTC part of heron__nvrtc_compile: source to cubin and log. */
static int compile_program(const char *src, int sm, heron__nvrtc_result *r,
                           heron_error *err) {
  nvrtcProgram prog;
  nvrtcResult res =
      nvrtcCreateProgram(&prog, src, NVRTC_SOURCE_NAME, 0, NULL, NULL);
  if (res != NVRTC_SUCCESS)
    return heron_error_set(
        err, res == NVRTC_ERROR_OUT_OF_MEMORY ? HERON_ENOMEM : HERON_EBUILD,
        "NVRTC cannot create a program: %s", nvrtcGetErrorString(res));
  /* Asking for the kernel's lowered name makes NVRTC keep and report the
   * symbol the driver must look up, whether or not the prelude declares
   * it extern "C"; a source without the kernel fails to compile. */
  nvrtcAddNameExpression(prog, HERON__CUDA_KERNEL_NAME);

  /* A TMA kernel (line 2 states its tensor maps: the wgmma path) uses
   * sm_90a's arch-specific instructions. */
  const char *suffix = r->launch.ntmaps ? "a" : "";
  char arch[48], inc[HERON__PATH_BUF];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%s", sm, suffix);
  snprintf(inc, sizeof inc, "-I%s", include_dir());
  /* No --use_fast_math: kernels are checked against an exact reference,
   * and approximate division or exp would only widen the tolerance. */
  const char *opts[] = {arch, inc, "-default-device", "-std=c++17",
                        "-Xptxas=-v"};
  res = nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);

  size_t log_size = 0;
  char *log = NULL;
  if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS &&
      log_size > 0 && (log = malloc(log_size + 1)) != NULL) {
    if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
      log[0] = '\0';
    log[log_size] = '\0';
  }
  int rc = HERON_OK;
  if (res != NVRTC_SUCCESS) {
    char first[140];
    heron__telling_line(log, first, sizeof first);
    rc = heron_error_set(err, HERON_EBUILD, "NVRTC (sm_%d%s): %s", sm, suffix,
                         first[0] ? first : nvrtcGetErrorString(res));
  } else {
    const char *lowered = NULL;
    if (nvrtcGetLoweredName(prog, HERON__CUDA_KERNEL_NAME, &lowered) !=
            NVRTC_SUCCESS ||
        !lowered)
      lowered = HERON__CUDA_KERNEL_NAME;
    snprintf(r->entry, sizeof r->entry, "%s", lowered);
    heron__ptxas_stats(log, r->entry, &r->regs, &r->spill_bytes,
                       &r->static_smem);
    size_t size = 0;
    if (nvrtcGetCUBINSize(prog, &size) != NVRTC_SUCCESS || size == 0)
      rc = heron_error_set(err, HERON_EBUILD,
                           "NVRTC produced no cubin for sm_%d", sm);
    else if (!(r->cubin = malloc(size)))
      rc = heron_error_set(err, HERON_ENOMEM, "out of memory for a cubin");
    else if (nvrtcGetCUBIN(prog, r->cubin) != NVRTC_SUCCESS)
      rc = heron_error_set(err, HERON_EBUILD, "NVRTC cannot hand the cubin");
    else
      r->cubin_size = size;
  }
  r->log = log_tail(log);
  free(log);
  nvrtcDestroyProgram(&prog);
  return rc;
}

#endif /* HERON_HAVE_NVRTC */

int heron__nvrtc_compile(const char *src, int sm, heron__nvrtc_result *r,
                         heron_error *err) {
  memset(r, 0, sizeof *r);
  double t0 = heron__now();
  if (!src)
    return heron_error_set(err, HERON_EINVAL, "NVRTC: no source");
  if (heron__cuda_launch_parse(src, &r->launch) != 0)
    return heron_error_set(err, HERON_EBUILD,
                           "line 1 of a CUDA kernel source must be the launch "
                           "comment '/* heron-cuda grid X Y Z block X Y Z "
                           "smem BYTES */'");
#ifdef HERON_HAVE_NVRTC
  int rc = compile_program(src, sm, r, err);
  r->smem_bytes = r->static_smem + r->launch.smem_bytes;
  r->seconds = heron__now() - t0;
  if (rc != HERON_OK) {
    free(r->cubin);
    r->cubin = NULL;
    r->cubin_size = 0;
  }
  return rc;
#else
  (void)sm;
  r->seconds = heron__now() - t0;
  return heron_error_set(err, HERON_EUNSUPPORTED,
                         "libheron was built without NVRTC");
#endif
}

int heron__nvrtc_ptx(const char *src, int sm, char **ptx, heron_error *err) {
  *ptx = NULL;
  if (!src)
    return heron_error_set(err, HERON_EINVAL, "NVRTC: no source");
#ifdef HERON_HAVE_NVRTC
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, src, NVRTC_SOURCE_NAME, 0, NULL, NULL) !=
      NVRTC_SUCCESS)
    return heron_error_set(err, HERON_EBUILD, "NVRTC cannot create a program");
  /* The virtual architecture: NVRTC then stops at PTX (compute_XXa for a
   * TMA kernel, as heron__nvrtc_compile). */
  heron__cuda_launch l;
  const char *suffix =
      heron__cuda_launch_parse(src, &l) == 0 && l.ntmaps ? "a" : "";
  char arch[48], inc[HERON__PATH_BUF];
  snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%s", sm, suffix);
  snprintf(inc, sizeof inc, "-I%s", include_dir());
  const char *opts[] = {arch, inc, "-default-device", "-std=c++17"};
  int rc = HERON_OK;
  size_t size = 0;
  if (nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts) !=
      NVRTC_SUCCESS)
    rc = heron_error_set(err, HERON_EBUILD, "NVRTC (compute_%d) failed", sm);
  else if (nvrtcGetPTXSize(prog, &size) != NVRTC_SUCCESS || size == 0)
    rc = heron_error_set(err, HERON_EBUILD, "NVRTC produced no PTX");
  else if (!(*ptx = malloc(size + 1)))
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory for PTX");
  else if (nvrtcGetPTX(prog, *ptx) != NVRTC_SUCCESS)
    rc = heron_error_set(err, HERON_EBUILD, "NVRTC cannot hand the PTX");
  else
    (*ptx)[size] = '\0';
  if (rc != HERON_OK) {
    free(*ptx);
    *ptx = NULL;
  }
  nvrtcDestroyProgram(&prog);
  return rc;
#else
  (void)sm;
  return heron_error_set(err, HERON_EUNSUPPORTED,
                         "libheron was built without NVRTC");
#endif
}
