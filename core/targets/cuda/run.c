/* core/targets/cuda/run.c - the worker that runs one cubin on the GPU: the
 * run of the NVRTC toolchain (toolchain.h).
 *
 * Forked by the runner like the host worker (core/measure/run.c owns the
 * parent side: the report pipe, the timeout, the crash report and the
 * capture of what the worker prints on stdout), it is the only kind of process
 * that initialises the CUDA driver: a context does not survive fork, so the
 * tuner and the runner never touch the driver and every run starts from a
 * clean process.  The worker
 *
 *   opens libcuda.so.1 (dlopen), cuInit, retains device 0's primary
 *   context, loads the cubin and looks up the kernel, raises the dynamic
 *   shared-memory limit when the launch asks for more than 48 KiB,
 *   copies the inputs (and bias) to the device, fills the output with 0xFF
 *   bytes (NaN in fp16, so a kernel that writes nothing fails the check),
 *   launches once and checks the output against the reference, then times
 *   `repeat` repeats of `number` launches with events (growing number until
 *   a repeat lasts min_repeat_ms), checks the output again, and reports the
 *   median time per launch.
 *
 * The kernel's parameters are (in0, in1, out, bias) with bias NULL when
 * the op has none (core/targets/cuda/kernel.h), and, for a TMA kernel (the
 * wgmma path), its two tensor maps, made by cuTensorMapEncodeTiled
 * (heron__cuda_tmap_2d) from line 2 of its source.  Any CUDA error is a
 * runtime error naming the call and the error; a kernel that hangs is
 * killed by the parent at the timeout.  Nothing is freed at the end: the
 * process exits and the driver reclaims it all.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/measure/worker.h"
#include "core/targets/cuda/driver.h"
#include "core/targets/cuda/toolchain.h"
#include "core/util/util.h"

/* The L2 flush buffer when the device does not say its L2 size. */
#define FLUSH_BYTES_MIN (64u << 20)

/* Everything one cuda worker holds. */
typedef struct cuda_worker {
  heron__bench *b;
  const char *path;       /* the cubin */
  heron__cuda_artifact k; /* its launch and entry */
  int fd;
  heron__run_report r;
  heron__cuda_driver d;
  heron__cu_device dev;
  heron__cu_function fn;
  heron__cu_deviceptr buf[HERON__MAX_TENSORS + 2];
  void *params[6];
  heron__cu_deviceptr arg[4]; /* in0, in1, out, bias */
  /* A TMA kernel's tensor maps tmap_a, tmap_b (passed by value: the
   * parameter points at the 128 bytes). */
  _Alignas(64) unsigned char tmap[2][128];
  heron__cu_event start, stop;
} cuda_worker;

/* Reports a runtime error with a printf-style description and ends. */
_Noreturn static void fail(cuda_worker *w, const char *fmt, ...)
    HERON_PRINTF(2, 3);
_Noreturn static void fail(cuda_worker *w, const char *fmt, ...) {
  w->r.status = HERON_MEAS_RUNTIME_ERROR;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->r.text, sizeof w->r.text, fmt, ap);
  va_end(ap);
  heron__worker_finish(w->fd, &w->r);
}

/* Ends the worker with "<call>: <CUDA error>" when `e` is an error. */
static void check_cu(cuda_worker *w, heron__cu_result e, const char *call) {
  if (e == HERON__CUDA_SUCCESS)
    return;
  char text[200];
  fail(w, "%s: %s", call, heron__cuda_error_text(&w->d, e, text, sizeof text));
}

/* Driver, device 0, its primary context, the module and the kernel. */
static void load_kernel(cuda_worker *w) {
  heron_error e;
  heron_error_clear(&e);
  if (heron__cuda_driver_open(&w->d, &e) != HERON_OK)
    fail(w, "%s", e.text);
  heron__cu_result cr = w->d.Init(0);
  if (cr == HERON__CUDA_ERROR_NO_DEVICE)
    fail(w, "no CUDA device");
  check_cu(w, cr, "cuInit");
  check_cu(w, w->d.DeviceGet(&w->dev, 0), "cuDeviceGet");
  heron__cu_context ctx;
  check_cu(w, w->d.DevicePrimaryCtxRetain(&ctx, w->dev),
           "cuDevicePrimaryCtxRetain");
  check_cu(w, w->d.CtxSetCurrent(ctx), "cuCtxSetCurrent");

  char *image = NULL;
  size_t len = 0;
  if (heron__read_file(w->path, &image, &len, &e) != HERON_OK)
    fail(w, "cannot read the cubin: %s", e.text);
  heron__cu_module mod;
  check_cu(w, w->d.ModuleLoadData(&mod, image), "cuModuleLoadData");
  free(image);
  const char *entry = w->k.entry[0] ? w->k.entry : HERON__CUDA_KERNEL_NAME;
  heron__cu_result gr = w->d.ModuleGetFunction(&w->fn, mod, entry);
  if (gr != HERON__CUDA_SUCCESS) {
    char text[200];
    fail(w, "cuModuleGetFunction(%s): %s", entry,
         heron__cuda_error_text(&w->d, gr, text, sizeof text));
  }
  /* Beyond 48 KiB of dynamic shared memory a kernel must opt in, up to
   * the device's opt-in limit; a plan over that limit fails here. */
  int64_t smem = w->k.launch.smem_bytes;
  if (smem > HERON__CUDA_SMEM_DEFAULT_LIMIT)
    check_cu(w,
             w->d.FuncSetAttribute(
                 w->fn, HERON__CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                 (int)smem),
             "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

/* Device copies of every buffer: inputs and bias copied from the runner's
 * data, the output filled with 0xFF; then the kernel's four arguments. */
static void upload(cuda_worker *w) {
  const heron__op *op = w->b->op;
  if (op->ninputs < 1 || op->ninputs > 2)
    fail(w, "a CUDA kernel takes (in0, in1, out, bias); op %s has %d inputs",
         op->name, op->ninputs);
  int nb = heron__op_nbufs(op);
  for (int i = 0; i < nb; i++) {
    size_t bytes = heron__buffer_bytes(op, i);
    check_cu(w, w->d.MemAlloc(&w->buf[i], bytes ? bytes : 1), "cuMemAlloc");
    if (i == op->ninputs)
      check_cu(w, w->d.MemsetD8(w->buf[i], 0xff, bytes), "cuMemsetD8");
    else
      check_cu(w, w->d.MemcpyHtoD(w->buf[i], w->b->bufs[i], bytes),
               "cuMemcpyHtoD");
  }
  w->arg[0] = w->buf[0];
  w->arg[1] = op->ninputs > 1 ? w->buf[1] : 0;
  w->arg[2] = w->buf[op->ninputs];
  w->arg[3] = (op->epilogue & HERON__EPI_BIAS) ? w->buf[op->ninputs + 1] : 0;
  for (int i = 0; i < 4; i++)
    w->params[i] = &w->arg[i];
  /* The tensor maps of a TMA kernel (line 2 of its source), over the
   * device copies of its inputs. */
  for (int m = 0; m < w->k.launch.ntmaps; m++) {
    const heron__cuda_tmap_spec *t = &w->k.launch.tmap[m];
    heron_error e;
    heron_error_clear(&e);
    if (t->input < 0 || t->input >= op->ninputs ||
        heron__cuda_tmap_2d(
            &w->d, w->tmap[m], w->buf[t->input], (unsigned long long)t->inner,
            (unsigned long long)t->outer, (unsigned long long)t->row_bytes,
            (unsigned)t->box_inner, (unsigned)t->box_outer, t->swz,
            &e) != HERON_OK)
      fail(w, "tensor map %d: %s", m,
           e.text[0] ? e.text : "names no input of the op");
    w->params[4 + m] = w->tmap[m];
  }
}

static void launch(cuda_worker *w) {
  const heron__cuda_launch *l = &w->k.launch;
  check_cu(w,
           w->d.LaunchKernel(w->fn, (unsigned)l->grid[0], (unsigned)l->grid[1],
                             (unsigned)l->grid[2], (unsigned)l->block[0],
                             (unsigned)l->block[1], (unsigned)l->block[2],
                             (unsigned)l->smem_bytes, NULL, w->params, NULL),
           "cuLaunchKernel");
}

/* Runs `number` launches between two events and returns their seconds.
 * Errors inside the kernel surface at the synchronisation. */
static double timed_launches(cuda_worker *w, long long number) {
  check_cu(w, w->d.EventRecord(w->start, NULL), "cuEventRecord");
  for (long long i = 0; i < number; i++)
    launch(w);
  check_cu(w, w->d.EventRecord(w->stop, NULL), "cuEventRecord");
  check_cu(w, w->d.EventSynchronize(w->stop),
           "kernel execution (cuEventSynchronize)");
  float ms = 0;
  check_cu(w, w->d.EventElapsedTime(&ms, w->start, w->stop),
           "cuEventElapsedTime");
  return ms / 1000.0;
}

/* Copies the device output into the worker's copy of the output scratch
 * and checks it; ends the worker on a mismatch. */
static void download_and_check(cuda_worker *w, const char *when) {
  const heron__op *op = w->b->op;
  void *out = w->b->bufs[op->ninputs];
  check_cu(w, w->d.CtxSynchronize(), "kernel execution (cuCtxSynchronize)");
  check_cu(w,
           w->d.MemcpyDtoH(out, w->buf[op->ninputs],
                           heron__buffer_bytes(op, op->ninputs)),
           "cuMemcpyDtoH");
  if (!heron__worker_check(w->b, out, when, &w->r))
    heron__worker_finish(w->fd, &w->r);
}

/* A buffer twice the L2 cache, rewritten before each repeat when caches
 * are to be flushed; 0 when not asked for. */
static heron__cu_deviceptr flush_buffer(cuda_worker *w, size_t *bytes) {
  *bytes = 0;
  if (!w->b->opts.flush_cache)
    return 0;
  int l2 = 0;
  if (w->d.DeviceGetAttribute(&l2, HERON__CU_ATTR_L2_CACHE_SIZE, w->dev) != 0)
    l2 = 0;
  size_t n =
      (size_t)l2 * 2 > FLUSH_BYTES_MIN ? (size_t)l2 * 2 : FLUSH_BYTES_MIN;
  heron__cu_deviceptr p = 0;
  check_cu(w, w->d.MemAlloc(&p, n), "cuMemAlloc (cache flush buffer)");
  *bytes = n;
  return p;
}

/* The timing loop's callbacks (core/measure/timing.h): launches timed by
 * events, and the flush buffer rewritten before each repeat. */
typedef struct timed {
  cuda_worker *w;
  heron__cu_deviceptr flush;
  size_t flush_n;
} timed;

static double time_calls(void *ctx, long long number) {
  return timed_launches(((timed *)ctx)->w, number);
}

/* Stream order puts the flush before the start event, so it is not part of
 * the time. */
static void before_repeat(void *ctx, int r) {
  timed *c = ctx;
  check_cu(c->w, c->w->d.MemsetD8(c->flush, (unsigned char)r, c->flush_n),
           "cuMemsetD8 (cache flush)");
}

/* The repeats, as the host worker times them (core/measure/timing.c): a
 * repeat shorter than min_repeat_ms does not count, `number` grows and it
 * runs again. */
static double time_kernel(cuda_worker *w) {
  const heron_measure_options *o = &w->b->opts;
  double *per_call = malloc(sizeof(double) * (size_t)o->repeat);
  if (!per_call)
    fail(w, "worker out of memory for timing");
  timed c = {w, 0, 0};
  c.flush = flush_buffer(w, &c.flush_n);
  double median = heron__time_repeats(
      o, time_calls, c.flush ? before_repeat : NULL, &c, per_call);
  free(per_call);
  return median;
}

void heron__cuda_worker_main(heron__bench *b, const heron__artifact *a,
                             int fd) {
  double t_start = heron__now();
  static cuda_worker w; /* static: the worker is a process of its own */
  memset(&w, 0, sizeof w);
  w.b = b;
  w.path = a->path;
  heron__cuda_artifact_get(a, &w.k);
  w.fd = fd;
  w.r.status = HERON_MEAS_OK;
  heron__worker_prepare(b);

  load_kernel(&w);
  upload(&w);
  check_cu(&w, w.d.EventCreate(&w.start, 0), "cuEventCreate");
  check_cu(&w, w.d.EventCreate(&w.stop, 0), "cuEventCreate");

  double t_call = timed_launches(&w, 1);
  download_and_check(&w, "after the first launch");
  /* As on the host: a kernel too slow for the repeats to end within the
   * timeout is stopped now rather than killed at the deadline. */
  const heron_measure_options *o = &b->opts;
  double left = o->timeout_s - (heron__now() - t_start);
  double need = t_call * (double)o->repeat * (double)o->number;
  if (need > left) {
    w.r.status = HERON_MEAS_TIMEOUT;
    snprintf(w.r.text, sizeof w.r.text,
             "run would exceed the %.1f s timeout: one launch takes %.3g s "
             "and %d x %d timed launches remain",
             o->timeout_s, t_call, o->repeat, o->number);
    heron__worker_finish(fd, &w.r);
  }
  double sec = time_kernel(&w);
  /* Checked again: a kernel that accumulates onto its output, or races,
   * may be right once and wrong after many launches. */
  download_and_check(&w, "after timing");
  w.r.seconds = sec;
  heron__worker_finish(fd, &w.r);
}
