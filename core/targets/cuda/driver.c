/* core/targets/cuda/driver.c - loading the CUDA driver with dlopen, and the
 * device probe.
 *
 * Every entry point is resolved once, when the library is opened, so a
 * driver too old for libheron fails there with the missing symbol named
 * instead of crashing at the first call.  A few symbols have versioned
 * names; the table lists the one to try first and an alternative.
 */
#include "core/targets/cuda/driver.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util/util.h"

/* One entry point: the symbol, an alternative spelling (NULL for none) and
 * where its pointer goes in heron__cuda_driver. */
typedef struct cu_symbol {
  const char *name;
  const char *alt;
  size_t offset;
} cu_symbol;

#define SYM(member, name, alt)                                                 \
  { name, alt, offsetof(heron__cuda_driver, member) }

/* The _v2 names are the 64-bit-pointer versions every driver since CUDA
 * 3.2 exports.  cuEventDestroy and cuEventElapsedTime have both spellings
 * in current drivers; either has the same meaning for our use. */
static const cu_symbol symbols[] = {
    SYM(Init, "cuInit", NULL),
    SYM(DriverGetVersion, "cuDriverGetVersion", NULL),
    SYM(DeviceGetCount, "cuDeviceGetCount", NULL),
    SYM(DeviceGet, "cuDeviceGet", NULL),
    SYM(DeviceGetName, "cuDeviceGetName", NULL),
    SYM(DeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    SYM(CtxSetCurrent, "cuCtxSetCurrent", NULL),
    SYM(CtxSynchronize, "cuCtxSynchronize", NULL),
    SYM(ModuleLoadData, "cuModuleLoadData", NULL),
    SYM(ModuleGetFunction, "cuModuleGetFunction", NULL),
    SYM(ModuleUnload, "cuModuleUnload", NULL),
    SYM(FuncSetAttribute, "cuFuncSetAttribute", NULL),
    SYM(MemAlloc, "cuMemAlloc_v2", NULL),
    SYM(MemFree, "cuMemFree_v2", NULL),
    SYM(MemcpyHtoD, "cuMemcpyHtoD_v2", NULL),
    SYM(MemcpyDtoH, "cuMemcpyDtoH_v2", NULL),
    SYM(MemsetD8, "cuMemsetD8_v2", NULL),
    SYM(LaunchKernel, "cuLaunchKernel", NULL),
    SYM(EventCreate, "cuEventCreate", NULL),
    SYM(EventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
    SYM(EventRecord, "cuEventRecord", NULL),
    SYM(EventSynchronize, "cuEventSynchronize", NULL),
    SYM(EventElapsedTime, "cuEventElapsedTime", "cuEventElapsedTime_v2"),
    SYM(GetErrorName, "cuGetErrorName", NULL),
    SYM(GetErrorString, "cuGetErrorString", NULL),
};
#define NSYMBOLS (sizeof symbols / sizeof symbols[0])

/* Entry points a driver may lack: NULL then, and what needs them says so
 * when it is asked for. */
static const cu_symbol optional_symbols[] = {
    SYM(TensorMapEncodeTiled, "cuTensorMapEncodeTiled", NULL),
};
#define NOPTIONAL (sizeof optional_symbols / sizeof optional_symbols[0])

/* dlerror's text for a missing file ends in the errno message ("...: cannot
 * open shared object file: No such file or directory"); the part up to
 * "shared object file" says it all and keeps the one-line reason short. */
static void trim_dlerror(const char *e, char *out, size_t cap) {
  snprintf(out, cap, "%s", e ? e : "unknown dlopen error");
  char *cut = strstr(out, "shared object file");
  if (cut)
    cut[strlen("shared object file")] = '\0';
}

int heron__cuda_driver_open(heron__cuda_driver *d, heron_error *err) {
  memset(d, 0, sizeof *d);
  const char *path = getenv("HERON_LIBCUDA");
  if (!path || !*path)
    path = HERON__LIBCUDA_DEFAULT;
  /* RTLD_LOCAL: the driver's symbols must not satisfy anything else
   * loaded later (a kernel .so, a plugin). */
  d->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!d->lib) {
    char why[140];
    trim_dlerror(dlerror(), why, sizeof why);
    return heron_error_set(err, HERON_ENOTFOUND, "no CUDA driver: %s", why);
  }
  for (size_t i = 0; i < NSYMBOLS; i++) {
    dlerror();
    void *p = dlsym(d->lib, symbols[i].name);
    if (!p && symbols[i].alt)
      p = dlsym(d->lib, symbols[i].alt);
    if (!p) {
      heron__cuda_driver_close(d);
      return heron_error_set(err, HERON_ENOTFOUND,
                             "CUDA driver %s lacks the symbol %s (driver too "
                             "old?)",
                             path, symbols[i].name);
    }
    /* Object and function pointers have the same representation on every
     * platform with dlsym; memcpy says so without a cast ISO C forbids. */
    memcpy((char *)d + symbols[i].offset, &p, sizeof p);
  }
  for (size_t i = 0; i < NOPTIONAL; i++) {
    void *p = dlsym(d->lib, optional_symbols[i].name);
    memcpy((char *)d + optional_symbols[i].offset, &p, sizeof p);
  }
  return HERON_OK;
}

int heron__cuda_tmap_2d(const heron__cuda_driver *d, void *map,
                        heron__cu_deviceptr global, unsigned long long inner,
                        unsigned long long outer, unsigned long long row_bytes,
                        unsigned box_inner, unsigned box_outer, int swz,
                        heron_error *err) {
  if (!d->TensorMapEncodeTiled)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "the CUDA driver lacks cuTensorMapEncodeTiled "
                           "(CUDA 12.0 or newer makes TMA tensor maps)");
  int mode = swz == 0     ? HERON__CU_TENSOR_MAP_SWIZZLE_NONE
             : swz == 32  ? HERON__CU_TENSOR_MAP_SWIZZLE_32B
             : swz == 64  ? HERON__CU_TENSOR_MAP_SWIZZLE_64B
             : swz == 128 ? HERON__CU_TENSOR_MAP_SWIZZLE_128B
                          : -1;
  if (mode < 0)
    return heron_error_set(err, HERON_EINVAL,
                           "a tensor map's swizzle span is 0, 32, 64 or 128 "
                           "bytes, not %d",
                           swz);
  const unsigned long long dims[2] = {inner, outer};
  const unsigned long long strides[1] = {row_bytes};
  const unsigned box[2] = {box_inner, box_outer};
  const unsigned estr[2] = {1, 1};
  heron__cu_result e = d->TensorMapEncodeTiled(
      map, HERON__CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)(uintptr_t)global,
      dims, strides, box, estr, HERON__CU_TENSOR_MAP_INTERLEAVE_NONE, mode,
      HERON__CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      HERON__CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (e != 0) {
    char ebuf[160];
    return heron_error_set(
        err, HERON_EINVAL,
        "cuTensorMapEncodeTiled (%llu x %llu fp16, row %llu bytes, box %u x "
        "%u, swizzle %d): %s",
        inner, outer, row_bytes, box_inner, box_outer, swz,
        heron__cuda_error_text(d, e, ebuf, sizeof ebuf));
  }
  return HERON_OK;
}

void heron__cuda_driver_close(heron__cuda_driver *d) {
  if (!d)
    return;
  if (d->lib)
    dlclose(d->lib);
  memset(d, 0, sizeof *d);
}

const char *heron__cuda_error_text(const heron__cuda_driver *d,
                                   heron__cu_result e, char *buf, size_t cap) {
  const char *name = NULL, *text = NULL;
  if (d && d->GetErrorName && d->GetErrorName(e, &name) != 0)
    name = NULL;
  if (d && d->GetErrorString && d->GetErrorString(e, &text) != 0)
    text = NULL;
  if (name && text)
    snprintf(buf, cap, "%s (%s)", name, text);
  else if (name)
    snprintf(buf, cap, "%s", name);
  else
    snprintf(buf, cap, "CUDA error %d", e);
  return buf;
}

/* Reads one device attribute; *ok is cleared on failure, so a run of reads
 * can be checked once. */
static int attr(const heron__cuda_driver *d, heron__cu_device dev, int which,
                int *ok) {
  int v = 0;
  if (d->DeviceGetAttribute(&v, which, dev) != 0)
    *ok = 0;
  return v;
}

/* The probe proper, on an opened driver. */
static int probe_device(const heron__cuda_driver *d, heron__hw *hw,
                        heron_error *err) {
  char ebuf[160];
  heron__cu_result e = d->Init(0);
  if (e == HERON__CUDA_ERROR_NO_DEVICE)
    return heron_error_set(err, HERON_ENOTFOUND, "no CUDA device");
  if (e != 0)
    return heron_error_set(err, HERON_ENOTFOUND,
                           "the CUDA driver failed to start: cuInit: %s",
                           heron__cuda_error_text(d, e, ebuf, sizeof ebuf));
  int count = 0;
  e = d->DeviceGetCount(&count);
  if (e != 0)
    return heron_error_set(err, HERON_ENOTFOUND, "cuDeviceGetCount: %s",
                           heron__cuda_error_text(d, e, ebuf, sizeof ebuf));
  if (count < 1)
    return heron_error_set(err, HERON_ENOTFOUND, "no CUDA device");
  hw->device_count = count;
  heron__cu_device dev = 0;
  e = d->DeviceGet(&dev, 0);
  if (e == 0)
    e = d->DeviceGetName(hw->name, (int)sizeof hw->name, dev);
  if (e != 0)
    return heron_error_set(err, HERON_ENOTFOUND, "CUDA device 0: %s",
                           heron__cuda_error_text(d, e, ebuf, sizeof ebuf));
  hw->name[sizeof hw->name - 1] = '\0';
  int ok = 1;
  int major = attr(d, dev, HERON__CU_ATTR_COMPUTE_CAPABILITY_MAJOR, &ok);
  int minor = attr(d, dev, HERON__CU_ATTR_COMPUTE_CAPABILITY_MINOR, &ok);
  hw->sm = major * 10 + minor;
  hw->sm_count = attr(d, dev, HERON__CU_ATTR_MULTIPROCESSOR_COUNT, &ok);
  hw->smem_per_block =
      attr(d, dev, HERON__CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, &ok);
  hw->smem_per_block_optin =
      attr(d, dev, HERON__CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &ok);
  hw->max_threads_per_block =
      attr(d, dev, HERON__CU_ATTR_MAX_THREADS_PER_BLOCK, &ok);
  hw->max_threads_dim[0] = attr(d, dev, HERON__CU_ATTR_MAX_BLOCK_DIM_X, &ok);
  hw->max_threads_dim[1] = attr(d, dev, HERON__CU_ATTR_MAX_BLOCK_DIM_Y, &ok);
  hw->max_threads_dim[2] = attr(d, dev, HERON__CU_ATTR_MAX_BLOCK_DIM_Z, &ok);
  hw->warp_size = attr(d, dev, HERON__CU_ATTR_WARP_SIZE, &ok);
  hw->regs_per_block =
      attr(d, dev, HERON__CU_ATTR_MAX_REGISTERS_PER_BLOCK, &ok);
  if (!ok)
    return heron_error_set(err, HERON_ENOTFOUND,
                           "CUDA device 0 (%s): cannot read its attributes",
                           hw->name);
  /* Devices before the opt-in attribute existed have no opt-in headroom. */
  if (hw->smem_per_block_optin < hw->smem_per_block)
    hw->smem_per_block_optin = hw->smem_per_block;
  snprintf(hw->target, sizeof hw->target, "cuda");
  return HERON_OK;
}

int heron__cuda_probe(heron__hw *hw, heron_error *err) {
  heron__cuda_driver d;
  int rc = heron__cuda_driver_open(&d, err);
  if (rc != HERON_OK)
    return rc;
  /* Filled into a copy so that a failed probe leaves *hw untouched. */
  heron__hw got = *hw;
  rc = probe_device(&d, &got, err);
  if (rc == HERON_OK)
    *hw = got;
  heron__cuda_driver_close(&d);
  return rc;
}

HERON_API int heron_cuda_device_count(void) {
  heron__hw hw;
  memset(&hw, 0, sizeof hw);
  heron_error err;
  heron_error_clear(&err);
  return heron__cuda_probe_isolated(&hw, 30, &err) == HERON_OK ? hw.device_count
                                                               : 0;
}

/* ---- the probe in a child process ---------------------------------------- */

/* What the child sends back: fixed size, one write. */
typedef struct probe_report {
  int rc;
  heron__hw hw;
  char text[sizeof(((heron_error *)0)->text)];
} probe_report;

static void sleep_ms(double ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms * 1e6) % 1000000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* Reads the report until it is whole, the child closes the pipe, or the
 * deadline passes; returns the number of bytes read. */
static size_t read_probe(int fd, probe_report *r, double deadline) {
  size_t got = 0;
  while (got < sizeof *r) {
    double left = deadline - heron__now();
    if (left <= 0)
      break;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int pr = poll(&p, 1, (int)(left * 1000) + 1);
    if (pr <= 0)
      continue; /* EINTR or the deadline: the loop head decides */
    ssize_t n = read(fd, (char *)r + got, sizeof *r - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  return got;
}

int heron__cuda_probe_isolated(heron__hw *hw, double timeout_s,
                               heron_error *err) {
  if (timeout_s <= 0)
    timeout_s = 60;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return heron_error_set(err, HERON_ERUN,
                           "cannot create a pipe for the CUDA probe: %s",
                           strerror(errno));
  fflush(NULL); /* or the child could print buffered output a second time */
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return heron_error_set(err, HERON_ERUN, "cannot fork the CUDA probe: %s",
                           strerror(e));
  }
  if (pid == 0) {
    close(fds[0]);
    probe_report r;
    memset(&r, 0, sizeof r);
    r.hw = *hw;
    heron_error e;
    heron_error_clear(&e);
    r.rc = heron__cuda_probe(&r.hw, &e);
    snprintf(r.text, sizeof r.text, "%s", e.text);
    ssize_t w;
    do
      w = write(fds[1], &r, sizeof r);
    while (w < 0 && errno == EINTR);
    _exit(0);
  }
  close(fds[1]);
  probe_report *r = calloc(1, sizeof *r);
  size_t got = r ? read_probe(fds[0], r, heron__now() + timeout_s) : 0;
  close(fds[0]);
  /* The child exits right after writing; one that hangs in the driver (or
   * never wrote) is killed so nothing outlives the probe. */
  int st = 0, killed = 0;
  double reap_until = heron__now() + (got == sizeof *r ? 5.0 : 0.0);
  for (double pause = 1;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR))
      break;
    if (heron__now() >= reap_until) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
      killed = 1;
      break;
    }
    sleep_ms(pause);
    if (pause < 50)
      pause *= 1.5;
  }
  int rc;
  if (!r)
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  else if (got != sizeof *r && killed)
    rc = heron_error_set(err, HERON_ERUN,
                         "the CUDA probe gave no answer within %.0f s",
                         timeout_s);
  else if (got != sizeof *r && WIFSIGNALED(st))
    rc = heron_error_set(err, HERON_ERUN,
                         "the CUDA probe crashed with signal %d (%s)",
                         WTERMSIG(st), strsignal(WTERMSIG(st)));
  else if (got != sizeof *r)
    rc = heron_error_set(err, HERON_ERUN,
                         "the CUDA probe ended without an answer");
  else if (r->rc != HERON_OK)
    rc = heron_error_set(err, r->rc, "%s", r->text);
  else {
    *hw = r->hw;
    rc = HERON_OK;
  }
  free(r);
  return rc;
}

/* The declarations above copy the driver's constants; when the toolkit's
 * cuda.h is at hand they are checked against it.  Included last, because
 * its macros rename entry points (cuMemAlloc -> cuMemAlloc_v2). */
#if defined(HERON_HAVE_NVRTC) && defined(__has_include)
#if __has_include(<cuda.h>)
#include <cuda.h>
/* Cast to int: the two sides are different enum types. */
#define SAME_VALUE(ours, theirs)                                               \
  _Static_assert((int)(ours) == (int)(theirs), #ours " differs from " #theirs)
SAME_VALUE(HERON__CU_ATTR_MAX_THREADS_PER_BLOCK,
           CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
SAME_VALUE(HERON__CU_ATTR_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
SAME_VALUE(HERON__CU_ATTR_MAX_BLOCK_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
SAME_VALUE(HERON__CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK,
           CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
SAME_VALUE(HERON__CU_ATTR_WARP_SIZE, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
SAME_VALUE(HERON__CU_ATTR_MAX_REGISTERS_PER_BLOCK,
           CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
SAME_VALUE(HERON__CU_ATTR_MULTIPROCESSOR_COUNT,
           CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME_VALUE(HERON__CU_ATTR_L2_CACHE_SIZE, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
SAME_VALUE(HERON__CU_ATTR_COMPUTE_CAPABILITY_MAJOR,
           CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME_VALUE(HERON__CU_ATTR_COMPUTE_CAPABILITY_MINOR,
           CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SAME_VALUE(HERON__CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
           CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
SAME_VALUE(HERON__CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
SAME_VALUE(HERON__CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
SAME_VALUE(HERON__CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
           CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
SAME_VALUE(HERON__CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_INTERLEAVE_NONE);
SAME_VALUE(HERON__CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE);
SAME_VALUE(HERON__CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_32B);
SAME_VALUE(HERON__CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_64B);
SAME_VALUE(HERON__CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_SWIZZLE_128B);
SAME_VALUE(HERON__CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
           CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
SAME_VALUE(HERON__CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
SAME_VALUE(sizeof(((CUtensorMap *)0)->opaque), 128);
SAME_VALUE(sizeof(heron__cu_deviceptr), sizeof(CUdeviceptr));
#endif
#endif
