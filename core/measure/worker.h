/* core/measure/worker.h - what every toolchain's worker (the host's in
 * run.c, a target's in its folder) shares: the report a worker sends back,
 * the output check, the worker's start and end, and the timing loop
 * (timing.h).  Internal to core/measure and the toolchains. */
#ifndef HERON_CORE_MEASURE_WORKER_H
#define HERON_CORE_MEASURE_WORKER_H

#include "core/measure/measure.h"
#include "core/measure/timing.h"

/* What a worker sends back: fixed size and well under PIPE_BUF, so one
 * write() delivers it whole and never blocks. */
typedef struct heron__run_report {
  int status;       /* heron_meas_status */
  double seconds;   /* median seconds per call */
  double max_error; /* largest relative error against the reference */
  char text[384];   /* failure description, "" when OK */
} heron__run_report;

/* Sets up a freshly forked worker: default handling of the fatal signals
 * (so a crash is reported as the signal it was), no core files, and the
 * runner's socket closed (the tuner must see end-of-file as soon as the
 * runner itself is gone). */
void heron__worker_prepare(heron__bench *b);

/* Sends the report (one write) and ends the worker with _exit, without
 * atexit handlers or a second flush of the parent's stdio buffers. */
_Noreturn void heron__worker_finish(int fd, const heron__run_report *r);

/* Compares the output with the reference; on a mismatch fills the report
 * with WRONG_RESULT and says where and by how much ("wrong result <when>:
 * ...").  Keeps the largest error seen in r->max_error.  Returns 1 when
 * the output matches. */
int heron__worker_check(const heron__bench *b, const void *out,
                        const char *when, heron__run_report *r);

/* Bytes of the op's buffer i: inputs, output (at ninputs), bias. */
size_t heron__buffer_bytes(const heron__op *op, int i);

/* The host toolchain's run (heron__host_cc): dlopens the shared object
 * a->path, calls its heron_kernel as run.c describes and reports to fd.
 * Never returns. */
_Noreturn void heron__host_run(heron__bench *b, const heron__artifact *a,
                               int fd);

#endif
