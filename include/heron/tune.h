/* heron/tune.h - the tuning engine.
 *
 * heron_tune runs rounds of
 *     propose -> drop invalid and already-measured configs -> generate and
 *     build (in parallel) -> run each in an isolated worker and check its
 *     output -> record and append to the log -> fit the model -> observe
 * until the trial budget or the time limit is spent, then reports the best
 * kernel.  The log is JSON Lines (one measurement per line) flushed as each
 * round ends, so a killed run loses nothing already measured and can be
 * continued with resume_path.
 * Each line also carries "elapsed": seconds since the run started,
 * continued across resume (simulated for the replay target).
 */
#ifndef HERON_TUNE_H
#define HERON_TUNE_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "heron/param.h"
#include "heron/record.h"
#include "heron/status.h"
#include "heron/task.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How each candidate is built and run (TVM's names and meaning). */
typedef struct heron_measure_options {
  int number;           /* runs averaged per repeat (default 3) */
  int repeat;           /* repeats; the median is reported (default 3) */
  double min_repeat_ms; /* grow `number` until a repeat lasts this long (default
                           100) */
  double timeout_s;     /* limit per build and per run (default 30) */
  int flush_cache;      /* 1: evict caches before each repeat (default 0) */
  int build_jobs;       /* parallel builds; 0 = number of cores */
  int threads;          /* kernel threads; 0 = number of cores */
  const char *cc;       /* C compiler; NULL = $CC or "cc" */
  const char *work_dir; /* where sources and .so files go; NULL = a temp dir */
  int keep_files;       /* 1: leave the work dir in place */
  /* 1: build every config but run none.  A cuda kernel is compiled with
   * NVRTC (no GPU needed) and recorded as ok with its ptxas statistics and
   * build time but no timing (seconds and gflops 0), or as compile_error /
   * timeout; a cpu kernel is compiled by the C compiler and recorded the
   * same way, without statistics.  Default 0. */
  int compile_only;
  /* 1 (cuda target only): check each kernel on the CPU instead of a GPU.
   * The generated source is compiled by the C compiler with the template's
   * emulation flags and run once by the cpu worker, which runs the whole
   * grid sequentially; the trial is recorded as ok, wrong_result,
   * runtime_error or timeout with seconds and gflops 0, since emulation
   * time says nothing about the GPU.  number, repeat and min_repeat_ms are
   * ignored.  Excludes compile_only.  Default 0. */
  int emulate;
} heron_measure_options;

typedef struct heron_tune_options {
  const char *strategy; /* plugin name or path (required) */
  const heron_param *strategy_params;
  int n_strategy_params;
  const char *model; /* plugin name or path; NULL for none */
  const heron_param *model_params;
  int n_model_params;
  int trials;           /* total trials, resumed ones included (default 200) */
  double time_limit_s;  /* wall-clock budget; 0 = none.  For the replay
                           target the simulated time: real time plus each
                           trial's recorded cost (a log's build_seconds + 3
                           x seconds; a T4 record's compilation, framework
                           and run times), continued across --resume.
                           When the time left is expected to hold fewer
                           trials than a round would ask for, the strategy
                           is asked for one config per round */
  uint64_t seed;        /* default 1 */
  int batch;            /* configs measured per round (default 16) */
  const char *log_path; /* JSONL log to write; NULL = none */
  const char *resume_path; /* JSONL log to continue from; NULL = none */
  const char *emit_dir;    /* where to write the best kernel; NULL = none */
  heron_measure_options measure;
  FILE *progress; /* progress lines and summary; NULL = silent */
  int verbose;    /* 1: also log every measurement */
  /* When not NULL, read by the engine between candidates: once *stop is
   * non-zero (a signal handler of the tool sets it to the signal's number),
   * the run ends in order.  The candidate being run finishes, the round's
   * measured trials are recorded and logged, the rest of the round is
   * abandoned (never recorded), the best kernel is emitted, and heron_tune
   * returns HERON_OK with result.stopped set to *stop. */
  const volatile sig_atomic_t *stop;
  /* Limit in seconds on each call into a strategy or model plugin; a call
   * that outlasts it (or the time limit, whichever ends first) ends the
   * process with status 1 and a message naming the plugin and the call, as
   * a crash inside a plugin call does.  0 = HERON_PLUGIN_TIMEOUT_DEFAULT. */
  double plugin_timeout_s;
  /* 1: check everything a run checks before its first trial (the toolchain
   * by building a trivial kernel, the plugins created with their
   * parameters, the resume log, the log file free of another run) and
   * return HERON_OK without measuring or writing anything. */
  int dry_run;
  /* Measuring elsewhere (heron-search under mpirun, tools/ranks.c): when not
   * NULL, each round's configs go to remote(remote_ctx, ...) instead of
   * this process's runner, which is then never started (nor the device
   * probed: the processes that measure do that).  The function fills, for
   * each config cfgs[i] (nvars values) it measured, out[i] (as
   * heron_measurer_run does; config pointers are the engine's), errors[i]
   * (malloc'ed failure text or NULL) and done[i] = 1; env[i] = 1 marks a
   * build failure that was the environment's (the run stops, as for its
   * own builds), 2 a candidate lost with the process measuring it (it
   * stopped answering): recorded as failed by the environment, measured
   * again on resume, and the run goes on.  As soon as candidate i is
   * filled it may call arrived(engine, i): the engine records and logs it
   * at once (flushed), so a job killed before the round ends keeps it.  It
   * returns early, leaving done[i] = 0, once *stop is set; a non-OK status
   * ends the run (the round's done trials are still recorded).  Replay
   * tasks measured remotely count real time only, not simulated measuring
   * time. */
  int (*remote)(void *remote_ctx, const int64_t *cfgs, int n,
                heron_measurement *out, char **errors, int *done, int *env,
                void (*arrived)(void *engine, int i), void *engine,
                heron_error *err);
  void *remote_ctx;
} heron_tune_options;

/* The default of heron_tune_options.plugin_timeout_s, in seconds. */
#define HERON_PLUGIN_TIMEOUT_DEFAULT 300.0

typedef struct heron_tune_result {
  int trials;            /* measurements in the history at the end */
  int measured;          /* of those, measured by this run */
  int resumed;           /* of those, read from resume_path */
  int ok;                /* measurements with status ok */
  int failed;            /* measurements with another status */
  int dropped_invalid;   /* proposals dropped as invalid */
  int dropped_duplicate; /* proposals dropped as already measured */
  int best_trial;        /* trial of the best kernel, 0 when none */
  double best_seconds;
  double best_gflops;
  char best_key[17];
  double elapsed_s;
  int stopped; /* the signal number that stopped the run early (see
                  heron_tune_options.stop), 0 when it ran to its budget */
  int retried; /* resumed records measured again: untimed ones (compile-only
                  or emulated) in a timed run, and failures that were the
                  environment's (the compiler gone, a full disk) */
} heron_tune_result;

/* Fills `o` with the defaults above. */
HERON_API void heron_tune_options_init(heron_tune_options *o);

/* ---- Measuring configs without a search ---------------------------------
 * A heron_measurer measures configs of one task exactly as heron_tune
 * measures its rounds: the target's setup (a cuda task probes its GPU,
 * compile-only and emulate apply), one runner process forked at open (call
 * it while the process has no threads), parallel builds, each run in an
 * isolated worker with the timeout, the output checked, the kernel timed;
 * a replay task answers from its logs.  The processes that measure for a
 * distributed search (heron-search under mpirun) use it. */
typedef struct heron_measurer heron_measurer;

/* Opens a measurer for task t with options m (NULL: the defaults); seed is
 * the replay surrogate's, as heron_tune_options.seed is for a run (a replay
 * task measured here answers as a run of that seed would).
 * Errors as heron_tune's setup: HERON_EUNSUPPORTED (cuda without a GPU),
 * HERON_EBUILD (the toolchain cannot build a trivial kernel), ... */
HERON_API int heron_measurer_open(const heron_task *t,
                                  const heron_measure_options *m,
                                  uint64_t seed, heron_measurer **out,
                                  heron_error *err);

/* Measures cfgs[0..n) (each heron_space_nvars values) into out[0..n): each
 * record's status, seconds, gflops, build_seconds, max_error, regs,
 * spill_bytes and smem_bytes (config points into cfgs, error to ""),
 * errors[i] the failure text (malloc'ed, or NULL when ok; free it) and
 * env[i] 1 when the failure was the environment's, not the config's.
 * HERON_ENOMEM / HERON_EIO when the measurer itself fails. */
HERON_API int heron_measurer_run(heron_measurer *ms, const int64_t *cfgs,
                                 int n, heron_measurement *out, char **errors,
                                 int *env, heron_error *err);

/* Stops the runner and frees everything. */
HERON_API void heron_measurer_close(heron_measurer *ms);

/* Tunes task `t`.  Errors stop the run with the log intact: HERON_ENOTFOUND
 * / HERON_EABI (plugin), HERON_EINVAL (options, parameters), HERON_EIO (log
 * or emit dir not writable), HERON_ETASK / HERON_EPARSE (resume log of
 * another task, or unreadable), HERON_EPLUGIN (a plugin call failed).  The
 * result is filled as far as the run got. */
HERON_API int heron_tune(const heron_task *t, const heron_tune_options *o,
                         heron_tune_result *res, heron_error *err);

/* Resolves a plugin name as the tools do: a name containing '/' is a path
 * used as given; otherwise "<name>" and "<name>.so" are looked up in each
 * folder of $HERON_PLUGIN_PATH (colon-separated, empty entries skipped),
 * then in libheron's own plugin folder, and the first folder holding either
 * wins.  libheron's folder is found at run time from the library's own
 * location: <libdir>/heron/plugins next to an installed libheron.so (so an
 * install that has been moved still finds its plugins), or the build
 * tree's plugins/ folder for the build tree's libheron; an installed
 * libheron never searches a build tree.  kind is "strategy" or "model"
 * (it only words messages).  Writes the path into path[cap], owned by the
 * caller.  HERON_ENOTFOUND names the folders searched, in order;
 * HERON_EINVAL for a missing name or buffer, or a path longer than cap. */
HERON_API int heron_plugin_resolve(const char *name, const char *kind,
                                   char *path, size_t cap, heron_error *err);

/* Prints every plugin the search of heron_plugin_resolve can find to `out`
 * (for --list-plugins): each folder once, in search order, under a heading
 * saying where it came from, then each regular file in it in name order
 * with its kind, descriptor name, summary and path.  A file that an
 * earlier file of the same name hides from the search is marked as
 * shadowed by it; a file that is not a usable plugin (not a shared
 * object, no entry symbol, a failed ABI check) is listed as such with the
 * loader's reason, and the listing goes on.  Each plugin is loaded
 * (dlopen) and closed again.  Returns HERON_OK however many files were
 * broken; HERON_EINVAL for a NULL out, HERON_ENOMEM, HERON_EIO when `out`
 * could not be written. */
HERON_API int heron_plugin_list(FILE *out, heron_error *err);

/* Loads the plugin and prints its name, summary and parameters to `out`
 * (for --help).  Errors as for loading: HERON_ENOTFOUND, HERON_EABI. */
HERON_API int heron_plugin_describe(const char *name, const char *kind,
                                    FILE *out, heron_error *err);

#ifdef __cplusplus
}
#endif
#endif /* HERON_TUNE_H */
