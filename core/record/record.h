/* core/record/record.h - the measurements of a task: the history that
 * holds them and the JSON Lines log they are written to and read back
 * from.  Internal to libheron: the engine (core/tune/) keeps its history
 * and log here, and the recorded meter (core/replay/) reads recorded logs
 * with the same parser, so neither depends on the other. */
#ifndef HERON_CORE_RECORD_RECORD_H
#define HERON_CORE_RECORD_RECORD_H

#include <stdio.h>
#include <zlib.h>

#include "heron/record.h"
#include "heron/space.h"

/* The history owns every measurement: each record, its config and its
 * error text are separate allocations, so pointers handed to plugins stay
 * valid while the history grows. */
struct heron_history {
  heron_measurement **items;
  int n, cap;
  int nvars;
  uint64_t *keys; /* open-addressing set of measured config keys; 0 = empty */
  size_t keys_cap;
  int best; /* index of the fastest OK record, -1 when none */
};

void heron__history_init(heron_history *h, int nvars);
void heron__history_free(heron_history *h);
/* Copies m (config and error included) into the history; the copy's trial
 * is kept as given.  Returns the stored record or NULL when out of memory. */
const heron_measurement *
heron__history_add(heron_history *h, const heron_measurement *m, uint64_t key);
/* 1 when `key` (heron_space_key parsed as a 64-bit number) was measured.
 * The best record is the fastest ok one with a time: an untimed ok record
 * (compile-only, emulated) is never the best. */
int heron__history_has(const heron_history *h, uint64_t key);

/* The numeric form of a config's heron_space_key. */
uint64_t heron__config_key(const heron_space *sp, const int64_t *cfg);

/* Context of one log line besides the measurement itself. */
typedef struct heron__log_ctx {
  const char *task_key;
  const char *strategy;
  uint64_t seed;
  int build_stats; /* 1: the task's builds report ptxas statistics (cuda,
                      HERON__TARGET_BUILD_STATS), which its lines carry */
  /* Written as "elapsed": seconds since the run started, continued across
   * --resume.  A replay run writes simulated wall time: the real time of
   * the run (strategy and model work) plus, for every trial answered, its
   * recorded build_seconds and 3 x its seconds (the runs of a
   * measurement). */
  double elapsed;
  /* 1: the run builds without timing (compile-only) or checks without
   * timing (emulation); its ok lines say "untimed": true, so no later run
   * takes their zero time for a result. */
  int untimed;
  /* Per line: 1 when the record failed for a reason that was not the
   * config's (the compiler gone, a full disk): "cause": "environment",
   * retried on resume. */
  int env_failure;
  /* The machine that measured, written as "hardware" on every line (the
   * task's hardware name, "this machine (<CPU model>, <ISA level>)" or the
   * GPU's), so a log read on another machine can be told apart (heron-lib
   * refuses one whose ISA differs); NULL writes none (a replay run, whose
   * answers are the recorded machine's). */
  const char *hardware;
} heron__log_ctx;

/* What heron__log_parse tells of a record besides the measurement. */
enum {
  HERON__REC_UNTIMED = 1, /* ok but never timed ("untimed", or an ok line
                             with no time, as older compile-only logs) */
  HERON__REC_ENV = 2      /* "cause": "environment" */
};

/* Records a resume sets aside to measure again instead of keeping.  Those
 * failed by the environment always are; untimed ones when `untimed` is 1
 * (a timed run).  A config set aside that a later line of the log measured
 * is not returned: that line is in the history. */
typedef struct heron__log_retry {
  int untimed;   /* in */
  int64_t *cfgs; /* out: malloc'ed, n configs of nvars values; free it */
  int n;         /* out */
} heron__log_retry;

/* Writes m as one JSON line (the fields of docs/files.md) to f; does not flush.
 * Lines of a cuda task also carry "regs", "spill_bytes" and "smem_bytes". */
int heron__log_write(FILE *f, const heron_space *sp, const heron__log_ctx *c,
                     const heron_measurement *m, heron_error *err);

/* Reads a log for `task_key` into h (with "regs", "spill_bytes" and
 * "smem_bytes" where a line has them; 0 otherwise).  Lines of another task give
 * HERON_ETASK; a malformed line gives HERON_EPARSE naming it, except a
 * truncated last line (a run killed mid-write), which is skipped and
 * reported in *dropped_tail.  *valid_bytes is the length of the file's
 * well-formed prefix, so an append can cut the broken tail off first. */
int heron__log_read(const char *path, const heron_space *sp,
                    const char *task_key, heron_history *h, heron_rng *rng,
                    int *dropped_tail, long *valid_bytes, heron_error *err);

/* heron__log_read for a resume: it also returns each record's "elapsed" (0
 * when a line has none, as in older logs) in a malloc'ed array *elapsed of
 * one entry per record added to h (NULL when none was; free it; elapsed
 * may be NULL: not wanted), and sets the records `retry` describes aside
 * into retry->cfgs instead of the history (retry may be NULL: keep every
 * record). */
int heron__log_read_resume(const char *path, const heron_space *sp,
                           const char *task_key, heron_history *h,
                           heron_rng *rng, int *dropped_tail, long *valid_bytes,
                           double **elapsed, heron__log_retry *retry,
                           heron_error *err);

struct json_t;

/* Parses one log line's object o (of file `path`, line `lineno`, for the
 * error text) into m and cfg[nvars]: the config's knobs, completed to every
 * variable when they are valid in sp.  m->error points into o.  A record of
 * a task other than task_key is HERON_ETASK; a missing field or bad value
 * HERON_EPARSE.  With complete == NULL a knob sp does not have is
 * HERON_EPARSE too; otherwise *complete says whether the config is valid
 * here (1) or not (0: unknown knobs, violated constraints).  *elapsed (may
 * be NULL) gets the line's "elapsed", 0 when absent. */
int heron__log_parse(struct json_t *o, const heron_space *sp,
                     const char *task_key, heron_rng *rng, heron_measurement *m,
                     int64_t *cfg, int *complete, double *elapsed, int lineno,
                     const char *path, heron_error *err);

/* The HERON__REC_* flags of a line parsed into m by heron__log_parse. */
int heron__log_flags(struct json_t *o, const heron_measurement *m);

/* Reads the next line of a log opened with gzopen (plain or gzip-
 * compressed) into *buf (grown as needed), without its newline.  Returns 1
 * with a line, 0 at the end; *terminated says whether the line ended with a
 * newline (a killed writer leaves one without).  -1 when out of memory;
 * HERON__LONG_LINE when the line is longer than heron__max_line_bytes(),
 * HERON__TOO_BIG when the file inflates beyond heron__max_input_bytes()
 * (neither is read further).  *buf may start NULL; free it when done. */
enum { HERON__LONG_LINE = -2, HERON__TOO_BIG = -3 };
int heron__log_gets(gzFile f, char **buf, size_t *cap, int *terminated);

/* ---- Limits on what input files may hold ------------------------------------
 *
 * Every file heron reads as input (a T1 file, a T4 or Kernel Tuner cache
 * file, a --replay or --resume log) must be a regular file: a FIFO, a
 * folder or a device (/dev/zero) is refused before it is opened, so
 * nothing blocks or grows without bound.  What is read is capped: at most
 * heron__max_input_bytes() of text (after inflating a .gz file: a
 * decompression bomb stops there) and, in a JSON Lines log, at most
 * heron__max_line_bytes() in one line; a JSON document's strings are held
 * to the line limit too.  The defaults, 512 MiB of text and 16 MiB a line
 * or string, are far above any real file (the shipped T4 files inflate to
 * under 20 MB, a log line is under 4 KB); the environment variables
 * HERON_MAX_INPUT_MB and HERON_MAX_LINE_MB (whole MiB, at least 1) set
 * others.  Errors name the file, the limit and its variable.  A JSON
 * document is held parsed, which takes about 2x its text for a T4 file
 * and up to 20x for a crafted one (an array of one-digit numbers): the
 * text limit bounds that too. */
#define HERON__MAX_INPUT_MB 512
#define HERON__MAX_LINE_MB 16
size_t heron__max_input_bytes(void);
size_t heron__max_line_bytes(void);

/* HERON_OK when `path` names a regular file (following links); otherwise
 * an error "<what> <path> is a FIFO, not a file" (a folder, a device, a
 * socket: each named), or HERON_ENOTFOUND "<what> <path>: cannot open:
 * <reason>" when it does not exist. */
int heron__input_check(const char *path, const char *what, heron_error *err);

/* Reads the whole regular file `path` into a malloc'ed, NUL-terminated
 * *text of *len bytes, refusing what heron__input_check refuses and a file
 * larger than heron__max_input_bytes() (HERON_EINVAL naming the limit). */
int heron__input_read(const char *path, const char *what, char **text,
                      size_t *len, heron_error *err);

#endif
