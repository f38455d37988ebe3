/* core/targets/cuda/toolchain.c - the cuda target's toolchain
 * (toolchain.h): each candidate compiled in-process by NVRTC (nvrtc.c) on
 * heron__build_all's build threads into a cubin, with ptxas' statistics,
 * and run by the GPU worker (run.c).  NVRTC cannot be interrupted, so a
 * compile that takes longer than the timeout is only recorded as a timeout
 * after it returns. */
#include "core/targets/cuda/toolchain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util/util.h"

/* NVRTC's refusal of an architecture it does not know: the toolkit's
 * fault, never the config's (heron__env_diagnostic's phrases are the
 * others). */
#define ARCH_REFUSED "invalid value for --gpu-architecture"

_Static_assert(sizeof(heron__cuda_artifact) <= HERON__ARTIFACT_META,
               "a cubin's meta must fit an artifact's");

void heron__cuda_artifact_set(heron__artifact *a,
                              const heron__cuda_artifact *c) {
  memcpy(a->meta, c, sizeof *c);
}

void heron__cuda_artifact_get(const heron__artifact *a,
                              heron__cuda_artifact *c) {
  memcpy(c, a->meta, sizeof *c);
  c->entry[sizeof c->entry - 1] = '\0';
}

/* One candidate's NVRTC build (on a build thread): compiles c->source for
 * sm_<arch>, writes the cubin to c->art.path and NVRTC's log to `logp`,
 * and fills status, error, build_seconds, env_failure, the statistics and
 * the artifact's launch and entry.  The source file is only for people:
 * NVRTC reads the text. */
static void nvrtc_build(const heron__bench *b, heron__candidate *c,
                        const char *src, const char *logp) {
  (void)src;
  heron__nvrtc_result r;
  heron_error e;
  heron_error_clear(&e);
  double t0 = heron__now();
  int rc = heron__nvrtc_compile(c->source, b->tc.arch, &r, &e);
  /* The log is kept next to the source whatever happened, as the C
   * compiler's is. */
  if (r.log)
    heron__write_file(logp, r.log, strlen(r.log), NULL);
  if (rc == HERON_OK) {
    heron_error we;
    heron_error_clear(&we);
    if (heron__write_file(c->art.path, r.cubin, r.cubin_size, &we) !=
        HERON_OK) {
      rc = HERON_EIO;
      snprintf(e.text, sizeof e.text, "%s", we.text);
    }
  }
  c->build_seconds = heron__now() - t0;
  free(c->error);
  c->error = NULL;
  heron__cuda_artifact meta;
  memset(&meta, 0, sizeof meta);
  meta.launch = r.launch;
  if (rc == HERON_OK) {
    c->status = HERON_MEAS_OK;
    snprintf(meta.entry, sizeof meta.entry, "%s", r.entry);
    c->regs = r.regs;
    c->spill_bytes = r.spill_bytes;
    c->smem_bytes = r.smem_bytes;
    /* NVRTC cannot be interrupted, so an over-long compile is only caught
     * here, after it returned; it still counts as the build timeout. */
    if (b->opts.timeout_s > 0 && r.seconds > b->opts.timeout_s) {
      c->status = HERON_MEAS_TIMEOUT;
      heron__buf m = {0};
      heron__buf_printf(&m,
                        "build exceeded the %.1f s timeout (NVRTC took %.1f s; "
                        "it cannot be stopped early)",
                        b->opts.timeout_s, r.seconds);
      c->error = heron__buf_take(&m);
    }
  } else {
    c->status = HERON_MEAS_COMPILE_ERROR;
    /* Not the config's failures: a cubin that cannot be written, a
     * libheron without NVRTC, no memory, or NVRTC blaming the toolkit
     * (missing headers, an architecture it does not know). */
    c->env_failure =
        rc == HERON_EIO || rc == HERON_EUNSUPPORTED || rc == HERON_ENOMEM ||
        (rc == HERON_EBUILD && r.log &&
         (heron__env_diagnostic(r.log) || strstr(r.log, ARCH_REFUSED)));
    /* NVRTC's own log says most; messages of ours (no launch line, no
     * NVRTC, a file that cannot be written) are the error text. */
    if (r.log && rc == HERON_EBUILD && strncmp(e.text, "NVRTC (", 7) == 0) {
      c->error = r.log;
      r.log = NULL;
    } else {
      c->error = strdup(e.text[0] ? e.text : heron_strerror(rc));
    }
  }
  heron__cuda_artifact_set(&c->art, &meta);
  heron__nvrtc_result_free(&r);
}

/* The check's kernel, after the launch line and the include block every
 * generated source has (kernel.h). */
static const char check_body[] =
    "extern \"C\" __global__ void heron_cuda_kernel(const __half *in0,\n"
    "    const __half *in1, __half *out, const __half *bias) {\n"
    "  if (threadIdx.x == 0 && out) out[0] = in0[0];\n"
    "}\n";

/* The check: the same source file and cubin as a candidate's, compiled for
 * the bench's SM. */
static int nvrtc_check(const heron__bench *b, char *why, size_t cap) {
  char src[600], cubin[600];
  heron__check_path(b, ".cu", src, sizeof src);
  heron__check_path(b, ".cubin", cubin, sizeof cubin);
  heron__buf s = {0};
  char launch[160];
  heron__cuda_launch l = {.grid = {1, 1, 1}, .block = {32, 1, 1}};
  heron__cuda_launch_format(&l, launch, (int)sizeof launch);
  heron__buf_puts(&s, launch);
  heron__buf_puts(&s, heron__cuda_includes());
  heron__buf_puts(&s, check_body);
  char *text = heron__buf_take(&s);
  if (!text) {
    snprintf(why, cap, "out of memory for the toolchain check");
    return 0;
  }
  int ok = 0;
  if (heron__work_write(b, src, text, strlen(text), why, cap) == 0) {
    heron__nvrtc_result r;
    heron_error ne;
    heron_error_clear(&ne);
    if (heron__nvrtc_compile(text, b->tc.arch, &r, &ne) != HERON_OK) {
      /* NVRTC's messages start "NVRTC (sm_XX): "; the prefix is said once. */
      const char *msg = ne.text;
      if (strncmp(msg, "NVRTC (", 7) == 0 && strstr(msg, "): "))
        msg = strstr(msg, "): ") + 3;
      snprintf(why, cap, "NVRTC cannot build a trivial kernel for sm_%d: %s",
               b->tc.arch, msg);
    } else if (heron__work_write(b, cubin, r.cubin, r.cubin_size, why, cap) ==
               0) {
      ok = 1;
    }
    heron__nvrtc_result_free(&r);
  }
  free(text);
  if (!b->opts.keep_files) {
    unlink(src);
    unlink(cubin);
  }
  return ok;
}

static const heron__toolchain_ops nvrtc_toolchain = {
    .source_ext = ".cu",
    .artifact_ext = ".cubin",
    .build = nvrtc_build,
    .check = nvrtc_check,
    .run = heron__cuda_worker_main,
};

int heron__cuda_toolchain(const heron_measure_options *mo, int sm,
                          const char *emu_cflags, heron__toolchain *out,
                          heron_error *err) {
  /* An emulated kernel is a C program built by the C compiler: the bench
   * then works as the cpu target's, only with the emulation's flags. */
  if (mo && mo->emulate) {
    *out = heron__toolchain_host(emu_cflags);
    return HERON_OK;
  }
  if (sm <= 0)
    return heron_error_set(err, HERON_EINVAL,
                           "cuda bench: no SM to build for (got %d); the "
                           "task's hardware must give one",
                           sm);
  *out = (heron__toolchain){.ops = &nvrtc_toolchain, .arch = sm};
  return HERON_OK;
}
