/* core/measure/bench.c - measurement defaults and the per-task bench: the
 * work dir every build and run of the task shares, the runner that
 * measures, and (inside the runner) the input tensors and the reference
 * output. */
#include "core/measure/measure.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/util.h"

/* The inputs are filled from a fixed seed so that every run of a task, and
 * every resumed run, checks kernels against exactly the same data. */
#define BENCH_SEED 0x484552304e31ull /* "HER0N1" */

void heron__measure_defaults(heron_measure_options *o) {
  /* Only zero (or negative, which is meaningless) fields are filled, so a
   * caller's explicit choice always survives. */
  if (o->number <= 0)
    o->number = 3;
  if (o->repeat <= 0)
    o->repeat = 3;
  if (o->min_repeat_ms <= 0)
    o->min_repeat_ms = 100;
  if (o->timeout_s <= 0)
    o->timeout_s = 30;
  if (o->build_jobs <= 0)
    o->build_jobs = heron__ncores();
  if (o->threads <= 0)
    o->threads = heron__ncores();
  if (!o->cc || !*o->cc) {
    const char *env = getenv("CC");
    o->cc = (env && *env) ? env : "cc";
  }
}

/* Makes the folder where sources, logs and .so files go: the caller's when
 * given (kept at the end, since the caller chose it), otherwise a fresh
 * "heron-XXXXXX" under $TMPDIR or /tmp that heron__bench_free removes. */
static int make_work_dir(heron__bench *b, heron_error *err) {
  if (b->opts.work_dir && *b->opts.work_dir) {
    if (strlen(b->opts.work_dir) >= sizeof b->work_dir - 32)
      return heron_error_set(err, HERON_EINVAL, "work dir path too long: %s",
                             b->opts.work_dir);
    int rc = heron__mkdirs(b->opts.work_dir, err);
    if (rc != HERON_OK)
      return rc;
    snprintf(b->work_dir, sizeof b->work_dir, "%s", b->opts.work_dir);
    b->own_work_dir = 0;
    return HERON_OK;
  }
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp)
    tmp = "/tmp";
  int n = snprintf(b->work_dir, sizeof b->work_dir, "%s/heron-XXXXXX", tmp);
  if (n < 0 || (size_t)n >= sizeof b->work_dir - 32)
    return heron_error_set(err, HERON_EINVAL, "TMPDIR path too long: %s", tmp);
  if (!mkdtemp(b->work_dir))
    return heron_error_set(err, HERON_EIO, "cannot create a work dir in %s: %s",
                           tmp, strerror(errno));
  b->own_work_dir = 1;
  return HERON_OK;
}

/* Size in bytes of the op's output tensor. */
static size_t out_bytes(const heron__op *op) {
  return (size_t)heron__tensor_elems(&op->out) *
         (size_t)heron__dtype_size(op->out_dtype);
}

/* Everything the runner needs is set before it is forked, since its copy
 * of the bench never sees later changes. */
int heron__bench_init(heron__bench *b, const heron__op *op,
                      const heron__toolchain *tc,
                      const heron_measure_options *opts, heron_error *err) {
  memset(b, 0, sizeof *b);
  b->op = op;
  b->runner_fd = -1;
  if (opts)
    b->opts = *opts;
  heron__measure_defaults(&b->opts);
  b->tc = tc ? *tc : heron__toolchain_host(NULL);
  if (b->opts.emulate) {
    /* An emulation is run once and checked, never timed: its speed says
     * nothing about the machine it stands for, so number and repeat are 1
     * and there is no minimum repeat time. */
    b->opts.number = 1;
    b->opts.repeat = 1;
    b->opts.min_repeat_ms = 0;
  }
  int rc = make_work_dir(b, err);
  if (rc == HERON_OK)
    rc = heron__runner_start(b, err);
  if (rc != HERON_OK) {
    if (b->own_work_dir)
      heron__rmtree(b->work_dir);
    b->op = NULL;
  }
  return rc;
}

int heron__bench_prepare_data(heron__bench *b, heron_error *err) {
  if (b->data_ready)
    return HERON_OK;
  const heron__op *op = b->op;
  int rc = heron__op_alloc_buffers(op, b->bufs, err);
  if (rc != HERON_OK) {
    memset(b->bufs, 0, sizeof b->bufs);
    return rc;
  }
  heron__op_fill_inputs(op, b->bufs, BENCH_SEED);

  /* The reference goes into its own buffer, so the output scratch in
   * bufs[ninputs] stays free for the workers to overwrite.  A large
   * reference runs on several threads (heron__par_for), but they are all
   * joined before it returns, so the runner has no other thread when it
   * forks workers. */
  size_t nb = out_bytes(op);
  size_t alloc = (nb + 63) / 64 * 64;
  b->ref = aligned_alloc(64, alloc ? alloc : 64);
  if (!b->ref) {
    heron__op_free_buffers(op, b->bufs);
    return heron_error_set(err, HERON_ENOMEM,
                           "out of memory for the reference output (%zu bytes)",
                           nb);
  }
  memset(b->ref, 0, alloc ? alloc : 64);
  void *rbufs[HERON__MAX_TENSORS + 2];
  for (int i = 0; i < heron__op_nbufs(op); i++)
    rbufs[i] = b->bufs[i];
  rbufs[op->ninputs] = b->ref;
  heron__op_reference_full(op, rbufs);
  b->data_ready = 1;
  return HERON_OK;
}

void heron__bench_free(heron__bench *b) {
  if (!b || !b->op)
    return;
  heron__runner_stop(b);
  if (b->data_ready) {
    heron__op_free_buffers(b->op, b->bufs);
    free(b->ref);
    b->ref = NULL;
    b->data_ready = 0;
  }
  if (b->own_work_dir && !b->opts.keep_files && b->work_dir[0])
    heron__rmtree(b->work_dir);
  b->op = NULL;
}
