/* core/measure/measure.h - building and running candidates, internal.
 *
 * A heron__bench holds, for one task, the input tensors (filled once,
 * deterministically) and the reference output (computed once with the op's
 * plain C reference).  Builds run in parallel (threads each spawning the C
 * compiler with a timeout); runs happen one at a time, each in a forked
 * worker process that dlopens the kernel .so, warms up, times `number` runs
 * per repeat for `repeat` repeats (growing number until a repeat lasts
 * min_repeat_ms), checks its output against the reference and reports over
 * a pipe.  A crash (signal) or hang (timeout, then SIGKILL) costs only that
 * candidate.
 *
 * Workers are not forked from the tuner itself but from a *runner*: a
 * process forked once, in heron__bench_init, while the tuner is still
 * single-threaded.  The tuner later loads cost models that start thread
 * pools (XGBoost's OpenMP); a fork of such a process inherits a libgomp
 * that believes its threads exist, and a kernel's first parallel region in
 * the child then waits forever.  The runner never starts a thread, so its
 * forks are safe; it also owns the inputs and the reference, which it
 * computes on the first request.  The tuner and the runner talk over a
 * SOCK_SEQPACKET socket pair: one request, one reply per run.
 *
 * The cuda target (a bench made by heron__bench_init_cuda) builds each
 * candidate in-process with NVRTC into a cubin (core/targets/cuda/nvrtc.c:
 * thread safe, so the same pool of build threads runs the compiles) and
 * records ptxas' statistics; its runs load the cubin in a worker through
 * the driver API, which is dlopen'ed and initialised only there
 * (core/targets/cuda/run.c), since a CUDA context does not survive fork.
 * With opts.emulate the same source is compiled by the C compiler instead
 * and its exported heron_kernel, which runs the whole grid on the CPU, is
 * run once and checked by the cpu worker.
 *
 * What the kernel prints never reaches the tuner's stdout: a worker's fd 1
 * is a pipe the runner drains while it waits (keeping the first bytes and
 * counting the rest), and the measurement's error text says how much was
 * printed.  A failure of the environment rather than the config (the
 * compiler cannot run, the disk is full) marks the candidate env_failure,
 * and heron__bench_check_toolchain tells whether the toolchain works at
 * all.
 */
#ifndef HERON_CORE_MEASURE_H
#define HERON_CORE_MEASURE_H

#include "core/op/op.h"
#include "core/targets/cuda/kernel.h"
#include "heron/record.h"
#include "heron/tune.h"

typedef struct heron__bench {
  const heron__op *op;
  heron_measure_options opts; /* defaults filled in (jobs, threads, cc) */
  const char *cflags;         /* from the template */
  void *bufs[HERON__MAX_TENSORS + 2]; /* inputs, an output scratch, bias */
  void *ref;                          /* reference output */
  int data_ready; /* 1 once bufs and ref are filled (in the runner) */
  char work_dir[512];
  int own_work_dir; /* 1 when created here and removed at free */
  int seq;          /* counter for file names */
  int runner_fd;    /* this process's end of the runner socket, or -1 */
  int runner_pid;   /* the runner's pid in the tuner, 0 in the runner */
  int cuda_sm;      /* > 0: candidates are CUDA sources built by NVRTC for
                       sm_<cuda_sm> and run through the driver API; 0: built by
                       the C compiler (cpu target, CUDA emulation) */
} heron__bench;

/* Makes the work dir and starts the runner process (see above), which
 * allocates and fills the inputs (from a fixed seed) and computes the
 * reference output when the first run is asked of it; call it while the
 * process has no threads.  `opts` is copied and its unset
 * fields defaulted (NULL means all defaults); `cflags` must outlive the
 * bench (NULL means "-O3 -march=native -fopenmp -fPIC -shared").  A work
 * dir the caller names is created if needed and never removed; otherwise a
 * fresh $TMPDIR/heron-XXXXXX is made and heron__bench_free removes it
 * unless opts.keep_files.  HERON_ENOMEM / HERON_EIO / HERON_EINVAL. */
int heron__bench_init(heron__bench *b, const heron__op *op, const char *cflags,
                      const heron_measure_options *opts, heron_error *err);
void heron__bench_free(heron__bench *b);

/* As heron__bench_init, for a task of the cuda target whose kernels are
 * built for sm_<sm>.  Without opts->emulate, candidates are compiled with
 * NVRTC (heron__build_all) and run from their cubins (heron__run_candidate);
 * with it, they are compiled by the C compiler with `emu_cflags` (the
 * template's, HERON__CUDA_EMU_CFLAGS) and each run is one checked call of
 * the emulation on the CPU.  HERON_EINVAL for sm <= 0 without emulate. */
int heron__bench_init_cuda(heron__bench *b, const heron__op *op,
                           const char *emu_cflags,
                           const heron_measure_options *opts, int sm,
                           heron_error *err);

/* Allocates the inputs, fills them and computes the reference output into
 * b->bufs / b->ref (once; later calls return at once).  Runs in the
 * runner.  HERON_ENOMEM when the tensors do not fit. */
int heron__bench_prepare_data(heron__bench *b, heron_error *err);

/* The runner: heron__runner_start forks it (b->runner_fd and runner_pid
 * are set in the tuner); heron__runner_stop closes the socket, which ends
 * the runner, and reaps it.  Both are called by bench init / free. */
int heron__runner_start(heron__bench *b, heron_error *err);
void heron__runner_stop(heron__bench *b);

/* What a run loads: a host shared object (cpu target, CUDA emulation) or
 * a cubin with its entry point and launch (cuda target). */
typedef struct heron__kernel_ref {
  char path[600];            /* the .so or the .cubin */
  int cubin;                 /* 1: run through the CUDA driver API */
  heron__cuda_launch launch; /* cubin: grid, block, dynamic shared bytes */
  char entry[256];           /* cubin: the kernel's (lowered) symbol */
} heron__kernel_ref;

/* How many bytes of a kernel's stdout are kept; the rest is counted. */
#define HERON__STDOUT_KEEP 200

/* Runs one kernel in a forked worker of *this* process, as heron__run_one
 * describes; the runner's half of heron__run_one / heron__run_candidate.
 * The process must have no other threads. */
int heron__run_in_worker(heron__bench *b, const heron__kernel_ref *k,
                         double flops, heron_measurement *m, char **error,
                         heron_error *err);

typedef struct heron__candidate {
  const char *source;   /* in: kernel source (caller's) */
  char so_path[600];    /* out: the built shared object, or for an NVRTC
                           build the cubin */
  int status;           /* out: HERON_MEAS_OK, _COMPILE_ERROR or _TIMEOUT */
  double build_seconds; /* out */
  char *error;          /* out: malloc'ed compiler diagnostics (tail) or NULL;
                           the caller frees */
  int env_failure;      /* out: 1 when the build failed for a reason that is
                           not the config's (status COMPILE_ERROR, error
                           saying what): the compiler cannot be started, a
                           source, log or output file cannot be written, the
                           diagnostics blame the disk, temporary files or a
                           missing part of the toolchain
                           (heron__env_diagnostic), or the compiler failed
                           without a word; 0 otherwise.  The engine should
                           not count such a trial against the config. */
  /* out, NVRTC builds only (zero otherwise): */
  heron__cuda_launch launch; /* line 1 of the source */
  char entry[256];           /* the lowered name of heron_cuda_kernel */
  int regs;                  /* ptxas: registers per thread */
  int spill_bytes;           /* ptxas: spill stores + spill loads, bytes */
  int64_t smem_bytes; /* ptxas' static shared memory + launch.smem_bytes */
} heron__candidate;

/* Builds c[0..n) with up to opts.build_jobs compilers at once; each
 * candidate gets its own status.  Files are <work_dir>/k<seq>.c, .so and
 * .log; a compile error keeps the log's last ~2 KB in c->error, a timeout
 * kills the compiler's process group.  For a bench with cuda_sm > 0 the
 * files are k<seq>.cu, .cubin and .log, each thread compiles with NVRTC
 * (heron__nvrtc_compile) and fills the statistics; a compile that outlasts
 * the timeout cannot be stopped and is recorded as a timeout when it
 * returns.  All threads are joined before it returns.
 *
 * Always returns HERON_OK (err is never set): every failure, the
 * machinery's included, is the candidate's own.  A source file that cannot
 * be written fails that candidate (COMPILE_ERROR, env_failure 1, "cannot
 * write in work folder D: No space left on device (k7.c)") and the others
 * are still built.  (Before env_failure existed this returned HERON_EIO
 * for an unwritable source.)  A timeout never sets env_failure: a hanging
 * compiler and a config too big to compile look alike; the toolchain check
 * tells them apart. */
int heron__build_all(heron__bench *b, heron__candidate *c, int n,
                     heron_error *err);

/* Builds a trivial kernel exactly as the bench's candidates are built, to
 * tell whether the toolchain works at all: before the first trial, and
 * again after a round with compile errors (if the trivial kernel fails too,
 * every failure of that round is the environment's, not its configs').
 * For a C build (cpu target, CUDA emulation) it writes
 * <work_dir>/toolchain-check.c and compiles it with opts.cc and the bench's
 * cflags, with the build timeout; for a bench with cuda_sm > 0 it writes
 * toolchain-check.cu (the launch line and the include block of a generated
 * source) and compiles it with NVRTC for sm_<cuda_sm> into
 * toolchain-check.cubin.  The files are removed unless opts.keep_files;
 * b->seq is left alone.  Cheap: one small compile (0.1-0.4 s).  Call it
 * from the tuner's thread, not while heron__build_all runs.
 *
 * HERON_OK, or HERON_EBUILD with a message naming the compiler as given and
 * the reason: "compiler '/nonexistent/gcc' not found", "compiler 'X' is
 * not executable (Permission denied)", "compiler 'X' cannot build a trivial
 * kernel: <the telling line of its diagnostics>", "... did not build a
 * trivial kernel within the 30.0 s timeout", "cannot write in work folder
 * D: No space left on device (toolchain-check.c)", "NVRTC cannot build a
 * trivial kernel for sm_XX: ...".  HERON_EINVAL for a bench not
 * initialised. */
int heron__bench_check_toolchain(heron__bench *b, heron_error *err);

/* The phrase of a compiler's or NVRTC's diagnostics that blames the
 * environment rather than the source ("No space left on device",
 * "Read-only file system", "Permission denied", "annot create temporary
 * file", "cannot open source file", ...; a static string), or NULL when
 * `log` (may be NULL) has none. */
const char *heron__env_diagnostic(const char *log);

/* The line of a compiler's or NVRTC's log that says most, for a one-line
 * message, into out[cap] (cut to fit): one naming an environment problem
 * (heron__env_diagnostic), else the first that reports an error, else the
 * first non-empty one.  "" for a NULL or empty log. */
void heron__telling_line(const char *log, char *out, size_t cap);

/* Runs candidate c, built by heron__build_all with status OK: its .so as
 * heron__run_one does, or, for a cuda bench, its cubin in a worker that
 * initialises the driver, copies the inputs to the device, fills the
 * output with 0xFF bytes (NaN), launches with the candidate's geometry,
 * checks the output against the reference, times `number` launches per
 * repeat with events (growing number until a repeat lasts min_repeat_ms)
 * and reports the median of `repeat` repeats.  Outcomes and ownership as
 * heron__run_one; a CUDA error is RUNTIME_ERROR naming the call and the
 * error. */
int heron__run_candidate(heron__bench *b, const heron__candidate *c,
                         double flops, heron_measurement *m, char **error,
                         heron_error *err);

/* ---- NVRTC (nvrtc.c) ------------------------------------------------------
 */

/* One NVRTC compile of a generated CUDA source (see
 * core/targets/cuda/kernel.h). */
typedef struct heron__nvrtc_result {
  void *cubin;       /* malloc'ed cubin image, NULL when the compile failed */
  size_t cubin_size; /* bytes */
  char *log;         /* malloc'ed tail (~2 KB) of NVRTC's log: the errors
                        of a failed compile, ptxas' report of a good one;
                        NULL when empty */
  char entry[256];   /* the lowered name of heron_cuda_kernel */
  heron__cuda_launch launch; /* line 1 of the source */
  int regs;                  /* registers per thread */
  int spill_bytes;           /* spill stores + spill loads, bytes */
  int64_t static_smem;       /* static shared memory per block, bytes */
  int64_t smem_bytes;        /* static_smem + launch.smem_bytes */
  double seconds;            /* wall time of the compile */
} heron__nvrtc_result;

/* Compiles `src` to a cubin for sm_<sm> with NVRTC (-arch=sm_XX, the CUDA
 * headers of $HERON_CUDA_INCLUDE or the build's toolkit, -default-device,
 * -std=c++17, ptxas -v; no fast math) and fills *r (zeroed first; free with
 * heron__nvrtc_result_free, also after a failure).  Thread safe.
 * HERON_EBUILD when the source has no valid launch line or NVRTC rejects
 * it (the message, shortened, in err; the log's tail in r->log);
 * HERON_EUNSUPPORTED "libheron was built without NVRTC"; HERON_ENOMEM. */
int heron__nvrtc_compile(const char *src, int sm, heron__nvrtc_result *r,
                         heron_error *err);
void heron__nvrtc_result_free(heron__nvrtc_result *r);

/* Compiles `src` for the virtual architecture compute_<sm> and returns the
 * PTX in *ptx (malloc'ed, NUL-terminated; free it), so tests can look at
 * the instructions a kernel uses.  Errors as heron__nvrtc_compile. */
int heron__nvrtc_ptx(const char *src, int sm, char **ptx, heron_error *err);

/* One candidate's NVRTC build for heron__build_all (on a build thread):
 * compiles c->source for sm_<b->cuda_sm>, writes the cubin to c->so_path
 * and NVRTC's log to `logp`, and fills status, error, build_seconds,
 * env_failure, launch, entry and the statistics. */
void heron__nvrtc_build_one(const heron__bench *b, heron__candidate *c,
                            const char *logp);

/* 1 when this libheron was built with NVRTC. */
int heron__nvrtc_available(void);

/* Parses ptxas' -v report in an NVRTC log: the registers, spill bytes
 * (stores + loads) and static shared memory of entry function `entry`
 * (or of the first one reported, when `entry` is NULL or not found).
 * Returns 0, or -1 when the log holds no "Used N registers" line. */
int heron__ptxas_stats(const char *log, const char *entry, int *regs,
                       int *spill_bytes, int64_t *static_smem);

/* Runs the built kernel `so_path` in a worker process (forked by the
 * runner) and fills m->status,
 * seconds, gflops (from `flops`), max_error; *error gets a malloc'ed
 * description on failure (signal name, timeout, first wrong element), NULL
 * when OK.  max_error is finite (DBL_MAX stands for a NaN or infinite
 * error, as when a kernel leaves NaN in its output).  m->error is pointed at
 * *error (or a static "" when OK), so it stays valid until the caller frees
 * *error; m->trial, config and build_seconds are left alone.  The timeout
 * covers the whole run (loading, warm-up, timing).  Returns HERON_OK unless the
 * machinery failed (fork, pipe: HERON_ERUN).
 *
 * The worker's stdout (fd 1) is a pipe the runner drains as the kernel
 * writes, so a kernel that prints neither reaches the tuner's stdout nor
 * blocks; its stderr is inherited.  Printing is not a failure (the status
 * is what the run earned), but it is recorded in the error text, after
 * any failure text and "; ": "stdout: N bytes: '<all of it>'" for up to
 * HERON__STDOUT_KEEP bytes, else "stdout: N bytes (dropped): '<the first
 * ~64 bytes>...'"; non-printable bytes, quotes and backslashes escaped
 * (\n, \t, \xNN).  So an OK run that printed has *error set too.  The
 * whole text stays under the runner's 1024-byte reply. */
int heron__run_one(heron__bench *b, const char *so_path, double flops,
                   heron_measurement *m, char **error, heron_error *err);

/* Fills unset (zero) fields of `o` with the defaults of heron/tune.h. */
void heron__measure_defaults(heron_measure_options *o);

#endif
