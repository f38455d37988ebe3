/* core/measure/measure.h - building and running candidates, internal.
 *
 * A heron__bench holds, for one task, the input tensors (filled once,
 * deterministically), the reference output (computed once with the op's
 * plain C reference) and the toolchain its kernels are built and run with
 * (toolchain.h).  Builds run in parallel (threads each running the
 * toolchain's build with a timeout); runs happen one at a time, each in a
 * forked worker process that loads the kernel, warms up, times `number`
 * runs per repeat for `repeat` repeats (growing number until a repeat lasts
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
 * SOCK_SEQPACKET socket pair: one request, one reply per run.  A toolchain
 * whose runtime does not survive fork (a GPU driver's context) starts it
 * in the worker only, so every run starts from a clean process.
 *
 * With opts.emulate each kernel is run once and checked, never timed: its
 * kernels stand for another machine's, whose special instructions the
 * toolchain's flags define in scalar C.
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

#include "core/measure/toolchain.h"
#include "core/op/op.h"
#include "core/util/util.h"
#include "heron/record.h"
#include "heron/tune.h"

typedef struct heron__bench {
  const heron__op *op;
  heron_measure_options opts; /* defaults filled in (jobs, threads, cc) */
  heron__toolchain tc;        /* builds and runs the candidates */
  void *bufs[HERON__MAX_TENSORS + 2]; /* inputs, an output scratch, bias */
  void *ref;                          /* reference output */
  int data_ready; /* 1 once bufs and ref are filled (in the runner) */
  char work_dir[512];
  int own_work_dir; /* 1 when created here and removed at free */
  int seq;          /* counter for file names */
  int runner_fd;    /* this process's end of the runner socket, or -1 */
  int runner_pid;   /* the runner's pid in the tuner, 0 in the runner */
} heron__bench;

/* Makes the work dir and starts the runner process (see above), which
 * allocates and fills the inputs (from a fixed seed) and computes the
 * reference output when the first run is asked of it; call it while the
 * process has no threads.  `tc` is copied (NULL: the host toolchain with
 * its default flags); `opts` is copied and its unset fields defaulted
 * (NULL means all defaults; with opts.emulate number and repeat become 1
 * and min_repeat_ms 0).  A work dir the caller names is created if needed
 * and never removed; otherwise a fresh $TMPDIR/heron-XXXXXX is made and
 * heron__bench_free removes it unless opts.keep_files.  HERON_ENOMEM /
 * HERON_EIO / HERON_EINVAL. */
int heron__bench_init(heron__bench *b, const heron__op *op,
                      const heron__toolchain *tc,
                      const heron_measure_options *opts, heron_error *err);
void heron__bench_free(heron__bench *b);

/* Allocates the inputs, fills them and computes the reference output into
 * b->bufs / b->ref (once; later calls return at once).  Runs in the
 * runner.  HERON_ENOMEM when the tensors do not fit. */
int heron__bench_prepare_data(heron__bench *b, heron_error *err);

/* The runner: heron__runner_start forks it (b->runner_fd and runner_pid
 * are set in the tuner); heron__runner_stop closes the socket, which ends
 * the runner, and reaps it.  Both are called by bench init / free. */
int heron__runner_start(heron__bench *b, heron_error *err);
void heron__runner_stop(heron__bench *b);

/* How many bytes of a kernel's stdout are kept; the rest is counted. */
#define HERON__STDOUT_KEEP 200

/* Runs artifact `a` in a forked worker of *this* process (the toolchain's
 * run), as heron__run_one describes; the runner's half of heron__run_one
 * / heron__run_candidate.  The process must have no other threads. */
int heron__run_in_worker(heron__bench *b, const heron__artifact *a,
                         double flops, heron_measurement *m, char **error,
                         heron_error *err);

typedef struct heron__candidate {
  const char *source;   /* in: kernel source (caller's) */
  heron__artifact art;  /* out: the built file (art.path) and its meta */
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
  /* out, from toolchains whose builds report them (zero otherwise): */
  int regs;           /* registers per thread */
  int spill_bytes;    /* spill stores + spill loads, bytes */
  int64_t smem_bytes; /* shared memory per block, bytes */
} heron__candidate;

/* Builds c[0..n) with up to opts.build_jobs builds at once; each
 * candidate gets its own status.  Files are <work_dir>/k<seq> with the
 * toolchain's source and artifact extensions (k<seq>.c, k<seq>.so) and
 * k<seq>.log; a compile error keeps the log's last ~2 KB in c->error, a
 * timeout stops the build (toolchain.h).  All threads are joined before
 * it returns.
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

/* ---- The build cache ----------------------------------------------------
 *
 * With HERON_BUILD_CACHE naming a folder (created when missing), a host
 * build (the C compiler into a shared object, toolchain.h) whose compiler,
 * command, flags, machine and source text are all those of an earlier
 * successful build copies that build's artifact instead of compiling again: a
 * resumed run, the seeds of a heron-bench comparison and the two stages of
 * tools/test.sh then compile each kernel once.  The key holds the compiler's
 * file (path, size, modification time, inode: an upgraded compiler misses), the
 * command and flags, GCC's path variables, this CPU's model and flags
 * (-march=native) and the source; it is compared byte for byte, never trusted
 * to a hash.  Only successful builds are kept, and only when the source file is
 * unchanged after the compile (a compiler wrapper that edits the source, as a
 * test's fault injector does, is never cached).  A compiler whose output
 * depends on anything else (the source's file name, the time) must not be used
 * with the cache.  The kernels are still run and checked every time; only the
 * compile is saved.  Any failure of the cache (an unwritable folder, a
 * damaged entry) is a miss, never an error.  The folder may be deleted at
 * any time. */

/* The folder HERON_BUILD_CACHE names, or NULL when unset or empty. */
const char *heron__build_cache_dir(void);
/* Appends the key of compiling `src` (len bytes) with `command` (the
 * compiler and its flags, without output and source file names) to key;
 * -1 when the compiler cannot be found (then nothing is cached). */
int heron__build_cache_key(const char *command, const char *src, size_t len,
                           heron__buf *key);
/* Writes the artifact of `key` from the cache in `dir` to `out`
 * (replacing it, mode 0755): 1 on a hit, 0 on a miss. */
int heron__build_cache_fetch(const char *dir, const heron__buf *key,
                             const char *out);
/* Keeps `artifact` as the build of `key` in `dir` (best effort). */
void heron__build_cache_store(const char *dir, const heron__buf *key,
                              const char *artifact);

/* Builds a trivial kernel exactly as the bench's candidates are built (the
 * toolchain's check), to tell whether the toolchain works at all: before
 * the first trial, and again after a round with compile errors (if the
 * trivial kernel fails too, every failure of that round is the
 * environment's, not its configs').  The host toolchain writes
 * <work_dir>/toolchain-check-<pid>.c and compiles it with opts.cc and its
 * flags, with the build timeout.  The files are removed unless
 * opts.keep_files; b->seq is left alone.  Cheap: one small compile (0.1-0.4
 * s).  Call it from the tuner's thread, not while heron__build_all runs.
 *
 * HERON_OK, or HERON_EBUILD with a message naming the compiler as given and
 * the reason: "compiler '/nonexistent/gcc' not found", "compiler 'X' is
 * not executable (Permission denied)", "compiler 'X' cannot build a trivial
 * kernel: <the telling line of its diagnostics>", "... did not build a
 * trivial kernel within the 30.0 s timeout", "cannot write in work folder
 * D: No space left on device (toolchain-check.c)".  HERON_EINVAL for a
 * bench not initialised. */
int heron__bench_check_toolchain(heron__bench *b, heron_error *err);

/* Runs candidate c, built by heron__build_all with status OK: its artifact
 * in a worker, as heron__run_one describes. */
int heron__run_candidate(heron__bench *b, const heron__candidate *c,
                         double flops, heron_measurement *m, char **error,
                         heron_error *err);

/* Runs the artifact at `path` (with no meta) in a worker process (forked
 * by the runner) and fills m->status, seconds, gflops (from `flops`),
 * max_error; *error gets a malloc'ed description on failure (signal name,
 * timeout, first wrong element, the toolchain's runtime error), NULL when
 * OK.  max_error is finite (DBL_MAX stands for a NaN or infinite error, as
 * when a kernel leaves NaN in its output).  m->error is pointed at *error
 * (or a static "" when OK), so it stays valid until the caller frees
 * *error; m->trial, config and build_seconds are left alone.  The timeout
 * covers the whole run (loading, warm-up, timing).  Returns HERON_OK unless
 * the machinery failed (fork, pipe: HERON_ERUN).
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
int heron__run_one(heron__bench *b, const char *path, double flops,
                   heron_measurement *m, char **error, heron_error *err);

/* Fills unset (zero) fields of `o` with the defaults of heron/tune.h. */
void heron__measure_defaults(heron_measure_options *o);

#endif
