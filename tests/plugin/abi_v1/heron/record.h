/* heron/record.h - measurements and the history a strategy reads.
 *
 * A measurement is the result of building and running one config.  The
 * engine owns every measurement; plugins see them through `const` pointers
 * that stay valid until the callback returns (observe) or, for the history,
 * until the run ends.
 */
#ifndef HERON_RECORD_H
#define HERON_RECORD_H

#include <stdint.h>

#include "heron/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What became of a config.  Only HERON_MEAS_OK carries a time. */
typedef enum heron_meas_status {
  HERON_MEAS_OK = 0,        /* built, ran, output matched the reference */
  HERON_MEAS_COMPILE_ERROR, /* the compiler rejected the generated source */
  HERON_MEAS_RUNTIME_ERROR, /* crashed (signal) or failed to load/launch */
  HERON_MEAS_TIMEOUT,       /* build or run exceeded --timeout */
  HERON_MEAS_WRONG_RESULT,  /* ran, but the output differs from the reference */
  HERON_MEAS_INVALID        /* the config violates the space's constraints */
} heron_meas_status;

/* The log's spelling of a status ("ok", "compile_error", "runtime_error",
 * "timeout", "wrong_result", "invalid"); "unknown" otherwise. Static. */
HERON_API const char *heron_meas_status_name(int status);

/* Parses a log spelling back; returns the status or HERON_EPARSE. */
HERON_API int heron_meas_status_parse(const char *name);

typedef struct heron_measurement {
  int trial;             /* 1-based trial number within the task's log */
  int status;            /* a heron_meas_status */
  const int64_t *config; /* nvars values of the space, owned by the engine */
  double seconds;        /* median kernel time; 0 unless status is OK */
  double gflops;         /* FLOP count / seconds / 1e9; 0 unless OK */
  double build_seconds;  /* wall time of the build */
  double max_error;      /* largest relative error against the reference */
  const char *error;     /* failure text, "" when OK; never NULL */
  int simulated;         /* 1 when answered by a model, not a real run */
  /* ptxas statistics of a cuda build (0 for the cpu target, and for a
   * cuda kernel whose build failed or was emulated on the CPU): */
  int regs;           /* registers per thread */
  int spill_bytes;    /* bytes of spill stores plus spill loads per thread */
  int64_t smem_bytes; /* shared memory per block: the static shared memory
                         ptxas reports plus the dynamic plan of the launch */
} heron_measurement;

/* Read access to the task's measurements so far, oldest first (the trials
 * of a resumed log included). */
typedef struct heron_history heron_history;

HERON_API int heron_history_count(const heron_history *h);

/* The i-th measurement (0 <= i < count), or NULL when out of range. */
HERON_API const heron_measurement *heron_history_get(const heron_history *h,
                                                     int i);

/* The fastest OK measurement, or NULL when none succeeded yet. */
HERON_API const heron_measurement *heron_history_best(const heron_history *h);

/* 1 when a config with this heron_space_key was already measured. */
HERON_API int heron_history_contains(const heron_history *h, const char *key);

#ifdef __cplusplus
}
#endif
#endif /* HERON_RECORD_H */
