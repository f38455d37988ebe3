/* tests/targets/cuda/fake_libcuda.c - a stand-in for libcuda.so.1, loaded by
 * the tests through HERON_LIBCUDA, so the driver loading, the probe and the
 * cuda worker's whole run (allocations, copies, the launch and its
 * arguments, events, the output check) are exercised on machines without a
 * GPU.
 *
 * "Device memory" is host memory.  A "cubin" is a host shared object: the
 * fake's cuModuleLoadData writes the image to a temporary file and dlopens
 * it, cuModuleGetFunction looks the name up there, and cuLaunchKernel calls
 *     void <name>(void **params)
 * with the kernel parameters (pointers to the device pointers), which runs
 * the whole grid on the CPU.  HERON_FAKE_CUDA selects a behaviour:
 *   unset / "ok"   a device like an A100 (sm_80, 108 SMs)
 *   "nodevice"     cuInit returns CUDA_ERROR_NO_DEVICE (100)
 *   "zero"         cuInit succeeds, cuDeviceGetCount reports 0
 *   "four"         four devices (device 0 as "ok")
 *   "launchfail"   cuLaunchKernel returns CUDA_ERROR_LAUNCH_FAILED (719)
 * A dynamic shared-memory attribute above 163 KiB (the A100's opt-in
 * limit) is refused with CUDA_ERROR_INVALID_VALUE (1).  With
 * HERON_FAKE_CUDA_LOG naming a file, each cuModuleLoadData, each
 * cuFuncSetAttribute and each cuLaunchKernel appends a line to it
 * ("cuModuleLoadData", "cuFuncSetAttribute 8 98304", "cuLaunchKernel grid
 * 4 4 1 block 128 1 1 smem 16384 stream 0x2a"), so a test can count the
 * loads and see the launch a program made.
 * cuTensorMapEncodeTiled checks the driver's documented requirements of a
 * tile map (64-byte aligned map, global address 16-byte aligned, strides
 * multiples of 16, boxes of 1 .. 256 with rows of a multiple of 16 bytes
 * and no wider than the swizzle span, element strides 1 .. 8) and refuses
 * a broken one with CUDA_ERROR_INVALID_VALUE; it encodes only 2-D fp16
 * maps with element strides 1, in the format the emulated TMA kernels read
 * (core/targets/cuda/kernel.h, HERON_KERNEL_TMA), so a kernel run through
 * this fake gets the map its host code made.  It logs "cuTensorMapEncodeTiled
 * dims 64 64 stride 128 box 64 64 swizzle 3".
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define OPTIN_LIMIT (163 * 1024)

typedef int CUresult;
typedef void (*host_kernel)(void **params);

static int mode_is(const char *m) {
  const char *v = getenv("HERON_FAKE_CUDA");
  return v && !strcmp(v, m);
}

/* Appends one line to $HERON_FAKE_CUDA_LOG, when set. */
static void log_call(const char *fmt, ...) {
  const char *path = getenv("HERON_FAKE_CUDA_LOG");
  FILE *f = path && *path ? fopen(path, "a") : NULL;
  if (!f)
    return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

EXPORT CUresult cuInit(unsigned flags) {
  (void)flags;
  return mode_is("nodevice") ? 100 : 0;
}
EXPORT CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return 0;
}
EXPORT CUresult cuDeviceGetCount(int *n) {
  *n = mode_is("zero") ? 0 : mode_is("four") ? 4 : 1;
  return 0;
}
EXPORT CUresult cuDeviceGet(int *dev, int ordinal) {
  *dev = ordinal;
  return ordinal == 0 ? 0 : 101; /* CUDA_ERROR_INVALID_DEVICE */
}
EXPORT CUresult cuDeviceGetName(char *name, int len, int dev) {
  (void)dev;
  snprintf(name, (size_t)len, "Fake A100");
  return 0;
}
EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  (void)dev;
  switch (attr) {
  case 1: /* max threads per block */
    *v = 1024;
    return 0;
  case 2:
  case 3:
    *v = 1024;
    return 0;
  case 4:
    *v = 64;
    return 0;
  case 8: /* shared memory per block */
    *v = 48 * 1024;
    return 0;
  case 10: /* warp size */
    *v = 32;
    return 0;
  case 12: /* registers per block */
    *v = 65536;
    return 0;
  case 16: /* SMs */
    *v = 108;
    return 0;
  case 38: /* L2 */
    *v = 40 << 20;
    return 0;
  case 75:
    *v = 8;
    return 0;
  case 76:
    *v = 0;
    return 0;
  case 97: /* opt-in shared memory */
    *v = OPTIN_LIMIT;
    return 0;
  default:
    return 1;
  }
}
EXPORT CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  (void)dev;
  *ctx = (void *)0x1;
  return 0;
}
EXPORT CUresult cuCtxSetCurrent(void *ctx) {
  (void)ctx;
  return 0;
}
EXPORT CUresult cuCtxSynchronize(void) { return 0; }

EXPORT CUresult cuModuleLoadData(void **mod, const void *image) {
  log_call("cuModuleLoadData");
  /* The image's size is not passed; the tests' host objects are small,
   * and an ELF file's size is its section header table's end. */
  const unsigned char *e = image;
  if (memcmp(e, "\177ELF", 4) != 0 || e[4] != 2)
    return 200; /* CUDA_ERROR_INVALID_IMAGE */
  unsigned long long shoff;
  unsigned short shentsize, shnum;
  memcpy(&shoff, e + 0x28, 8);
  memcpy(&shentsize, e + 0x3a, 2);
  memcpy(&shnum, e + 0x3c, 2);
  size_t size = (size_t)(shoff + (unsigned long long)shentsize * shnum);
  char path[] = "/tmp/heron-fake-cubin-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  int ok = write(fd, image, size) == (ssize_t)size;
  close(fd);
  void *lib = ok ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  unlink(path);
  if (!lib)
    return 200;
  *mod = lib;
  return 0;
}
EXPORT CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
  void *p = dlsym(mod, name);
  if (!p)
    return 500; /* CUDA_ERROR_NOT_FOUND */
  *fn = p;
  return 0;
}
EXPORT CUresult cuModuleUnload(void *mod) { return dlclose(mod) ? 1 : 0; }
EXPORT CUresult cuFuncSetAttribute(void *fn, int attr, int value) {
  (void)fn;
  log_call("cuFuncSetAttribute %d %d", attr, value);
  if (attr == 8 && value > OPTIN_LIMIT)
    return 1;
  return 0;
}

EXPORT CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
  void *m = malloc(n);
  if (!m)
    return 2;
  *p = (unsigned long long)(size_t)m;
  return 0;
}
EXPORT CUresult cuMemFree_v2(unsigned long long p) {
  free((void *)(size_t)p);
  return 0;
}
EXPORT CUresult cuMemcpyHtoD_v2(unsigned long long dst, const void *src,
                                size_t n) {
  memcpy((void *)(size_t)dst, src, n);
  return 0;
}
EXPORT CUresult cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n) {
  memcpy(dst, (const void *)(size_t)src, n);
  return 0;
}
EXPORT CUresult cuMemsetD8_v2(unsigned long long dst, unsigned char v,
                              size_t n) {
  memset((void *)(size_t)dst, v, n);
  return 0;
}

EXPORT CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz,
                               unsigned smem, void *stream, void **params,
                               void **extra) {
  (void)extra;
  log_call("cuLaunchKernel grid %u %u %u block %u %u %u smem %u stream %p", gx,
           gy, gz, bx, by, bz, smem, stream);
  if (mode_is("launchfail"))
    return 719;
  host_kernel k;
  memcpy(&k, &fn, sizeof k);
  k(params);
  return 0;
}

EXPORT CUresult cuTensorMapEncodeTiled(unsigned long long *map, int dtype,
                                       unsigned rank, void *global,
                                       const unsigned long long *dims,
                                       const unsigned long long *strides,
                                       const unsigned *box,
                                       const unsigned *estr, int interleave,
                                       int swizzle, int l2, int oob) {
  static const unsigned span[4] = {0, 32, 64, 128};
  (void)l2;
  (void)oob;
  log_call("cuTensorMapEncodeTiled dims %llu %llu stride %llu box %u %u "
           "swizzle %d",
           dims[0], rank > 1 ? dims[1] : 0, rank > 1 ? strides[0] : 0, box[0],
           rank > 1 ? box[1] : 0, swizzle);
  if ((size_t)map % 64 || (size_t)global % 16 || rank < 1 || rank > 5 ||
      interleave != 0 || swizzle < 0 || swizzle > 3)
    return 1;
  for (unsigned i = 0; i < rank; i++) {
    if (dims[i] == 0 || dims[i] > (1ULL << 32) || box[i] == 0 || box[i] > 256 ||
        estr[i] == 0 || estr[i] > 8)
      return 1;
    if (i + 1 < rank && (strides[i] % 16 || strides[i] >= (1ULL << 40)))
      return 1;
  }
  unsigned row = box[0] * 2; /* fp16 */
  if (row % 16 || (swizzle && row > span[swizzle]))
    return 1;
  /* What the fake can hand an emulated kernel. */
  if (dtype != 6 || rank != 2 || estr[0] != 1 || estr[1] != 1)
    return 801; /* CUDA_ERROR_NOT_SUPPORTED */
  memset(map, 0, 128);
  map[0] = (unsigned long long)(size_t)global;
  map[1] = dims[0];
  map[2] = dims[1];
  map[3] = strides[0];
  map[4] = box[0];
  map[5] = box[1];
  map[6] = span[swizzle];
  map[7] = 0x70616d74726568ULL; /* "hertmap" */
  return 0;
}

/* An event is a malloc'ed time stamp, taken when it is recorded (the
 * fake's launches are synchronous). */
EXPORT CUresult cuEventCreate(double **ev, unsigned flags) {
  (void)flags;
  *ev = calloc(1, sizeof **ev);
  return *ev ? 0 : 2;
}
EXPORT CUresult cuEventDestroy_v2(double *ev) {
  free(ev);
  return 0;
}
EXPORT CUresult cuEventRecord(double *ev, void *stream) {
  (void)stream;
  *ev = now_ms();
  return 0;
}
EXPORT CUresult cuEventSynchronize(double *ev) {
  (void)ev;
  return 0;
}
EXPORT CUresult cuEventElapsedTime(float *ms, double *a, double *b) {
  *ms = (float)(*b - *a);
  return 0;
}

EXPORT CUresult cuGetErrorName(CUresult e, const char **s) {
  switch (e) {
  case 1:
    *s = "CUDA_ERROR_INVALID_VALUE";
    return 0;
  case 100:
    *s = "CUDA_ERROR_NO_DEVICE";
    return 0;
  case 200:
    *s = "CUDA_ERROR_INVALID_IMAGE";
    return 0;
  case 500:
    *s = "CUDA_ERROR_NOT_FOUND";
    return 0;
  case 719:
    *s = "CUDA_ERROR_LAUNCH_FAILED";
    return 0;
  case 801:
    *s = "CUDA_ERROR_NOT_SUPPORTED";
    return 0;
  default:
    *s = NULL;
    return 1;
  }
}
EXPORT CUresult cuGetErrorString(CUresult e, const char **s) {
  *s = e == 719 ? "unspecified launch failure" : NULL;
  return *s ? 0 : 1;
}
