/* core/measure/toolchain.h - how a kernel's source becomes something a
 * worker can load and run.  Internal to libheron.
 *
 * A toolchain is three functions and the little state they build with:
 *
 *   build   turns one candidate's source, written to a file of the work dir
 *           by heron__build_all (measure.h), into an artifact next to it
 *           (build threads call it, several at once);
 *   check   builds a trivial kernel the same way, to tell a broken
 *           toolchain from a bad config (heron__bench_check_toolchain);
 *   run     is the whole life of a worker process forked by the runner:
 *           it loads the artifact, runs it on the bench's inputs, checks
 *           and times it and reports back (run.c owns the parent side).
 *
 * core/measure/ implements the host's: the C compiler with a target's flags
 * into a shared object that the worker dlopens (heron__toolchain_host).
 * A target whose kernels are built or run otherwise implements its own in
 * its folder and hands it over from its measure_setup
 * (core/targets/target.h); nothing in core/measure/ knows which toolchains
 * exist.  A toolchain's state is set before the runner is forked and never
 * changes, so the runner and its workers see the same one.
 */
#ifndef HERON_CORE_MEASURE_TOOLCHAIN_H
#define HERON_CORE_MEASURE_TOOLCHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "heron/status.h"

struct heron__bench;
struct heron__candidate;

/* Bytes of an artifact's meta (heron__artifact). */
#define HERON__ARTIFACT_META 320

/* What a build leaves and a run loads.  Plain bytes, no pointers: the
 * tuner sends it to the runner over a socket (runner.c). */
typedef struct heron__artifact {
  char path[600]; /* the built file in the work dir (a .so, ...) */
  /* What running it needs besides the file, in the toolchain's own layout
   * (its build writes it, its run reads it); zero when it needs nothing,
   * as the host's does not. */
  _Alignas(8) unsigned char meta[HERON__ARTIFACT_META];
} heron__artifact;

typedef struct heron__toolchain_ops {
  const char *source_ext;   /* ".c": the extension of sources it reads */
  const char *artifact_ext; /* ".so": the extension of what it builds */
  /* Builds candidate c (c->source, already written to the file `src`) into
   * c->art.path, with its diagnostics in the file `log`, within
   * b->opts.timeout_s; fills c->status (HERON_MEAS_OK, _COMPILE_ERROR or
   * _TIMEOUT), error, build_seconds, env_failure, the statistics when it
   * has them and c->art.meta (measure.h says what each means).  Called on
   * build threads, several at once: thread safe, and it touches no other
   * candidate. */
  void (*build)(const struct heron__bench *b, struct heron__candidate *c,
                const char *src, const char *log);
  /* Builds a trivial kernel as build builds candidates, with the files
   * heron__check_path names; returns 1 when it built, else 0 with the
   * reason in why[cap] (heron__bench_check_toolchain's messages). */
  int (*check)(const struct heron__bench *b, char *why, size_t cap);
  /* In a worker freshly forked by the runner (its stdout a pipe the runner
   * drains): loads artifact a, runs it on b's inputs, checks the output
   * against b's reference, times it as b->opts say and sends the report to
   * fd (worker.h).  Never returns. */
  void (*run)(struct heron__bench *b, const heron__artifact *a, int fd);
} heron__toolchain_ops;

/* A toolchain: its functions and what they build with.  A value, copied
 * into the bench. */
typedef struct heron__toolchain {
  const heron__toolchain_ops *ops;
  const char *cflags; /* the compiler's flags (static, or outliving the
                         bench); NULL when the toolchain takes none */
  int arch; /* the architecture number it builds for; 0 when it has none */
} heron__toolchain;

/* The host's functions: `<opts.cc> <cflags> -o k<n>.so k<n>.c`, run by a
 * worker that dlopens the shared object and calls its heron_kernel. */
extern const heron__toolchain_ops heron__host_cc;

/* The host toolchain with `cflags` (static, or outliving the bench; NULL
 * or "": "-O3 -march=native -fopenmp -fPIC -shared"). */
heron__toolchain heron__toolchain_host(const char *cflags);

/* ---- what toolchains share (build.c) ------------------------------------ */

/* Writes `len` bytes to `path`, a file of b's work dir (created or
 * truncated).  Returns 0, or the errno of the first failure (close's
 * included) with why[cap] saying "cannot write in work folder D: <reason>
 * (F)". */
int heron__work_write(const struct heron__bench *b, const char *path,
                      const void *data, size_t len, char *why, size_t cap);

/* The toolchain check's file <work_dir>/toolchain-check-<pid><ext>: named
 * apart from the candidates' k<n>, whose numbering it leaves alone, and
 * from another run's given the same work dir. */
void heron__check_path(const struct heron__bench *b, const char *ext, char *out,
                       size_t cap);

/* The phrase of a compiler's diagnostics that blames the environment
 * rather than the source ("No space left on device", "Read-only file
 * system", "Permission denied", "annot create temporary file", "cannot
 * open source file", ...; a static string), or NULL when `log` (may be
 * NULL) has none. */
const char *heron__env_diagnostic(const char *log);

/* The line of a compiler's log that says most, for a one-line message,
 * into out[cap] (cut to fit): one naming an environment problem
 * (heron__env_diagnostic), else the first that reports an error, else the
 * first non-empty one.  "" for a NULL or empty log. */
void heron__telling_line(const char *log, char *out, size_t cap);

#endif
