/* core/replay/store.h - what the parts of the store of recorded
 * measurements (replay.h) share: the store itself, its table of answers,
 * the surrogate's training set, and the functions one part calls in
 * another.  Internal to core/replay/.
 *
 *   replay.c     the store: its table of answers, opening it, looking
 *                configs up (heron__replay_measure), freeing it
 *   logs.c       reading JSON Lines logs, plain or gzip
 *   t4.c         reading T4 results and Kernel Tuner cache files
 *   surrogate.c  the model fitted on the records, for configs they lack
 *   compare.c    a T1 task's whole recorded space, and comparing it with
 *                the space (heron_task_recorded_space,
 *                heron_task_compare_recorded)
 */
#ifndef HERON_CORE_REPLAY_STORE_H
#define HERON_CORE_REPLAY_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "core/replay/replay.h"
#include "core/util/util.h"
#include "heron/model.h"
#include "heron/rng.h"

/* One answer a log gives: the chosen record of a config key. */
typedef struct answer {
  uint64_t key;        /* heron__config_key; 0 marks an empty slot */
  heron_measurement m; /* config NULL; error owned (malloc'ed) */
  double cost;         /* simulated seconds that measuring it took */
  int rec;             /* T4 and cache files: the record's number (1-based) */
} answer;

struct heron__replay {
  const heron_task *task;
  const heron_space *sp;
  int nvars, nfeat;
  answer *slots; /* open-addressing table, a power of two in size */
  size_t cap, used;
  heron_model *model;
  double median_build_s;
  double *X; /* scratch rows for predictions */
  int xcap;
  /* A T1 task's T4 file measured the whole space: no surrogate, and a
   * config it lacks is an error naming the file. */
  int full;
  const char *full_path;
  /* Comparing a T1 space with its T4 file: the records whose config is not
   * in the space, counted, the first few written out. */
  int collect;
  long long noutside;
  heron__buf outside;
};

/* Growing training set of the surrogate: features -> ln(GFLOP/s). */
typedef struct train {
  double *X, *y, *build;
  int n, cap, nb, bcap;
} train;

/* replay.c */

/* The slot of config key `key` in the table: its answer, or the empty
 * slot it would take. */
answer *heron__replay_slot(heron__replay *rp, uint64_t key);
/* Makes room in the table for one more answer (HERON_ENOMEM). */
int heron__replay_grow(heron__replay *rp);
/* Takes record m of config key k, simulated cost `cost` (HERON_ENOMEM). */
int heron__replay_take(heron__replay *rp, uint64_t k,
                       const heron_measurement *m, double cost);
/* heron__replay_open; `collect` keeps the T4 file's records outside the
 * space (rp->outside) for heron_task_compare_recorded. */
int heron__replay_open_store(const heron_task *t, uint64_t seed, int collect,
                             heron__replay **out, heron__replay_stats *stats,
                             heron_error *err);
/* "{a=1, b=2}": the knobs of cfg, for messages. */
void heron__replay_config_text(const heron_space *sp, const int64_t *cfg,
                               char *buf, size_t cap);

/* logs.c */

/* Opens a log or T4 file (`what` names it in errors), plain or gzip. */
int heron__replay_open_file(const char *path, const char *what, gzFile *f,
                            heron_error *err);
/* Reads every record of the log at `path` into the table and tr. */
int heron__replay_read_log(heron__replay *rp, const char *path, heron_rng *rng,
                           train *tr, heron__replay_stats *st,
                           heron_error *err);

/* t4.c */

/* Reads every record of the T4 or Kernel Tuner cache file at `path`. */
int heron__replay_read_t4(heron__replay *rp, const char *path, train *tr,
                          heron__replay_stats *st, heron_error *err);

/* surrogate.c */

/* Adds an ok record m to the training set (and its build time). */
int heron__replay_train_push(train *tr, const heron_space *sp, int d,
                             const heron_measurement *m);
/* Opens the surrogate model (rp->model) with `seed`. */
int heron__replay_open_model(heron__replay *rp, uint64_t seed,
                             heron_error *err);
int heron__replay_predict(heron__replay *rp, const int64_t *cfgs,
                          const int *miss, int nmiss, heron_measurement *out,
                          double *costs, heron_error *err);

#endif
