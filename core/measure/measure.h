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
 */
#ifndef HERON_CORE_MEASURE_H
#define HERON_CORE_MEASURE_H

#include "core/op/op.h"
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

/* Allocates the inputs, fills them and computes the reference output into
 * b->bufs / b->ref (once; later calls return at once).  Runs in the
 * runner.  HERON_ENOMEM when the tensors do not fit. */
int heron__bench_prepare_data(heron__bench *b, heron_error *err);

/* The runner: heron__runner_start forks it (b->runner_fd and runner_pid
 * are set in the tuner); heron__runner_stop closes the socket, which ends
 * the runner, and reaps it.  Both are called by bench init / free. */
int heron__runner_start(heron__bench *b, heron_error *err);
void heron__runner_stop(heron__bench *b);

/* Runs one kernel in a forked worker of *this* process, as heron__run_one
 * describes; the runner's half of heron__run_one.  The process must have
 * no other threads. */
int heron__run_in_worker(heron__bench *b, const char *so_path, double flops,
                         heron_measurement *m, char **error, heron_error *err);

typedef struct heron__candidate {
  const char *source;   /* in: kernel source (caller's) */
  char so_path[600];    /* out: the built shared object */
  int status;           /* out: HERON_MEAS_OK, _COMPILE_ERROR or _TIMEOUT */
  double build_seconds; /* out */
  char *error;          /* out: malloc'ed compiler diagnostics (tail) or NULL;
                           the caller frees */
} heron__candidate;

/* Builds c[0..n) with up to opts.build_jobs compilers at once; each
 * candidate gets its own status.  Files are <work_dir>/k<seq>.c, .so and
 * .log; a compile error keeps the log's last ~2 KB in c->error, a timeout
 * kills the compiler's process group.  All threads are joined before it
 * returns.  Returns HERON_OK unless the machinery itself failed (cannot
 * write a source file: HERON_EIO; the remaining candidates are then left
 * COMPILE_ERROR with no error text). */
int heron__build_all(heron__bench *b, heron__candidate *c, int n,
                     heron_error *err);

/* Runs the built kernel `so_path` in a worker process (forked by the
 * runner) and fills m->status,
 * seconds, gflops (from `flops`), max_error; *error gets a malloc'ed
 * description on failure (signal name, timeout, first wrong element), NULL
 * when OK.  max_error is finite (DBL_MAX stands for a NaN or infinite
 * error, as when a kernel leaves NaN in its output).  m->error is pointed at
 * *error (or a static "" when OK), so it stays valid until the caller frees
 * *error; m->trial, config and build_seconds are left alone.  The timeout
 * covers the whole run (loading, warm-up, timing).  Returns HERON_OK unless the
 * machinery failed (fork, pipe: HERON_ERUN). */
int heron__run_one(heron__bench *b, const char *so_path, double flops,
                   heron_measurement *m, char **error, heron_error *err);

/* Fills unset (zero) fields of `o` with the defaults of heron/tune.h. */
void heron__measure_defaults(heron_measure_options *o);

#endif
