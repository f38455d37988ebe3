/* core/replay/replay.h - the store of recorded measurements the recorded
 * meter (meter.c) answers from instead of hardware, internal to libheron.
 *
 * A replay task (heron_task_spec.replay) names logs of real runs.  When
 * the meter opens, heron__replay_open reads every record of every log
 * (plain JSON Lines or gzip-compressed, through zlib), keeps the records
 * whose config is valid in the task's space, indexes them by
 * heron_space_key and fits the surrogate model (the xgb plugin) once on the
 * ok ones.  heron__replay_measure then answers a config with its recorded
 * result, or with the surrogate's prediction marked simulated.  Everything
 * is a pure function of the logs and the seed, so two runs with one seed
 * propose, and log, the same trials.
 */
#ifndef HERON_CORE_REPLAY_H
#define HERON_CORE_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "heron/record.h"
#include "heron/task.h"

/* The model plugin the surrogate is, resolved as heron_plugin_resolve
 * does. */
#define HERON__REPLAY_MODEL "xgb"

/* Reads the "task" key of the first record of `path` (plain or .gz) into
 * key[cap].  HERON_ENOTFOUND when the file cannot be opened, HERON_EPARSE
 * naming the line when the first record is not a JSON object with a task
 * string, or when the file holds no record. */
int heron__replay_first_key(const char *path, char *key, size_t cap,
                            heron_error *err);

/* The sidecar hardware description of a log: its name without ".gz" and
 * then ".jsonl", plus ".hw.json" ("runs/a.jsonl.gz" -> "runs/a.hw.json"). */
void heron__replay_sidecar(const char *log, char *out, size_t cap);

typedef struct heron__replay heron__replay;

/* What heron__replay_open found, for the run's first lines. */
typedef struct heron__replay_stats {
  int logs;              /* logs read */
  int records;           /* records read from them */
  int skipped;           /* records whose config is not valid in this space,
                            untimed ones and environment failures */
  int distinct;          /* distinct configs answered from the records */
  int ok;                /* ok records the surrogate was fitted on */
  double median_build_s; /* build time given to simulated answers */
} heron__replay_stats;

/* Reads the logs of replay task t and fits the surrogate with `seed`.
 * Errors: HERON_ENOTFOUND (a log, or the xgb plugin, naming it),
 * HERON_EPARSE (a malformed line, naming file and line), HERON_ETASK (a
 * record of another task), HERON_EINVAL (no ok record to fit the surrogate
 * on), HERON_EPLUGIN (the fit failed).  *out is freed with
 * heron__replay_free. */
int heron__replay_open(const heron_task *t, uint64_t seed, heron__replay **out,
                       heron__replay_stats *stats, heron_error *err);

/* Answers the valid configs cfgs[n * nvars]: out[i] gets the recorded
 * result of cfgs[i] (simulated 0; of several records the first ok one,
 * else the first), or the surrogate's (status ok, gflops exp(prediction),
 * seconds from the task's FLOP count, build_seconds the median recorded
 * one, simulated 1).  out[i].config is set to cfgs' row; errors[i] gets a
 * malloc'ed copy of the recorded error text or NULL; costs[i] (when costs
 * is not NULL) the simulated seconds measuring it takes.  HERON_EPLUGIN
 * when the prediction fails; for a T1 task (its T4 file is the whole
 * space) HERON_ENOTFOUND naming a config the file lacks. */
int heron__replay_measure(heron__replay *rp, const int64_t *cfgs, int n,
                          heron_measurement *out, char **errors, double *costs,
                          heron_error *err);

/* 1 when `path` is a JSON document (".json", ".json.gz": a T4 results file
 * or a Kernel Tuner cache file) rather than a JSON Lines log.  Replay reads
 * both: a T4 file's records map onto the space by parameter (knob) name,
 * their simulated cost is every time the record lists (compilation,
 * framework, search algorithm, validation and all runtimes). */
int heron__replay_is_t4(const char *path);

/* The heron task key a T4 file exported by heron-bench records
 * (metadata.task) into key[cap]; HERON_EPARSE when it has none (a T4 file
 * of another tuner, replayed with its T1 file instead). */
int heron__replay_t4_task(const char *path, char *key, size_t cap,
                          heron_error *err);

void heron__replay_free(heron__replay *rp);

#endif
