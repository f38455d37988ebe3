/* core/tune/tune_internal.h - the engine's history, log and emit helpers,
 * internal to libheron. */
#ifndef HERON_CORE_TUNE_INTERNAL_H
#define HERON_CORE_TUNE_INTERNAL_H

#include <stdio.h>

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
/* 1 when `key` (heron_space_key parsed as a 64-bit number) was measured. */
int heron__history_has(const heron_history *h, uint64_t key);

/* The numeric form of a config's heron_space_key. */
uint64_t heron__config_key(const heron_space *sp, const int64_t *cfg);

/* Context of one log line besides the measurement itself. */
typedef struct heron__log_ctx {
  const char *task_key;
  const char *strategy;
  uint64_t seed;
  int cuda; /* 1: the task's target is cuda; lines carry ptxas statistics */
  /* Written as "elapsed": seconds since the run started, continued across
   * --resume.  A replay run writes simulated wall time: the real time of
   * the run (strategy and model work) plus, for every trial answered, its
   * recorded build_seconds and 3 x its seconds (the runs of a
   * measurement). */
  double elapsed;
} heron__log_ctx;

/* Writes m as one JSON line (DESIGN.md §7 fields) to f; does not flush.
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

/* heron__log_read that also returns each record's "elapsed" (0 when a line
 * has none, as in older logs) in a malloc'ed array *elapsed of one entry
 * per record added to h (NULL when none was; free it). */
int heron__log_read_elapsed(const char *path, const heron_space *sp,
                            const char *task_key, heron_history *h,
                            heron_rng *rng, int *dropped_tail,
                            long *valid_bytes, double **elapsed,
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

#endif
