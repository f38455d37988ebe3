/* core/targets/cuda/driver.h - the CUDA driver API, loaded at run time.
 *
 * Nothing in libheron links against the driver: libcuda.so.1 is opened
 * with dlopen when a kernel is to be run on a GPU (or a device probed), so
 * the library, the tools and every test run on machines without one.  The
 * few types and constants used are declared here, with heron__ names, so no
 * cuda.h is needed either (core/targets/cuda/driver.c checks them against the
 * toolkit's cuda.h when one is available).
 *
 * The driver keeps per-process state that does not survive fork(): call
 * heron__cuda_driver_open / cuInit only in a process that will not fork a
 * worker afterwards (a measurement worker, or the short-lived child of
 * heron__cuda_probe_isolated), never in the tuner or the runner.
 */
#ifndef HERON_CORE_TARGET_CUDA_DRIVER_H
#define HERON_CORE_TARGET_CUDA_DRIVER_H

#include <stddef.h>

#include "core/targets/hw.h"
#include "heron/status.h"

/* The path dlopen'ed when HERON_LIBCUDA is not set (tests point that
 * variable at a fake driver). */
#define HERON__LIBCUDA_DEFAULT "libcuda.so.1"

/* Driver types.  Handles are opaque pointers; a device pointer is 64 bits
 * (the _v2 entry points). */
typedef int heron__cu_result; /* CUresult: 0 = CUDA_SUCCESS */
typedef int heron__cu_device;
typedef struct heron__cu_ctx *heron__cu_context;
typedef struct heron__cu_mod *heron__cu_module;
typedef struct heron__cu_func *heron__cu_function;
typedef struct heron__cu_event *heron__cu_event;
typedef struct heron__cu_stream *heron__cu_stream;
typedef unsigned long long heron__cu_deviceptr;

/* The CUresult values libheron names itself. */
enum { HERON__CUDA_SUCCESS = 0, HERON__CUDA_ERROR_NO_DEVICE = 100 };

/* CUdevice_attribute values read by the probe and the runner. */
enum {
  HERON__CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
  HERON__CU_ATTR_MAX_BLOCK_DIM_X = 2,
  HERON__CU_ATTR_MAX_BLOCK_DIM_Y = 3,
  HERON__CU_ATTR_MAX_BLOCK_DIM_Z = 4,
  HERON__CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  HERON__CU_ATTR_WARP_SIZE = 10,
  HERON__CU_ATTR_MAX_REGISTERS_PER_BLOCK = 12,
  HERON__CU_ATTR_MULTIPROCESSOR_COUNT = 16,
  HERON__CU_ATTR_L2_CACHE_SIZE = 38,
  HERON__CU_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  HERON__CU_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
  HERON__CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
};

/* CUfunction_attribute: the dynamic shared memory a launch may ask for;
 * above 48 KiB it must be raised explicitly (up to the opt-in limit). */
#define HERON__CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

/* Dynamic shared memory a kernel may use without the attribute above. */
#define HERON__CUDA_SMEM_DEFAULT_LIMIT (48 * 1024)

/* The entry points, named after the driver's symbols without the "cu"
 * prefix (so that a cuda.h included elsewhere, whose macros rename some
 * of them, cannot change these member names).  Every member but the
 * optional ones (marked) is non-NULL after a successful
 * heron__cuda_driver_open. */
typedef struct heron__cuda_driver {
  void *lib; /* the dlopen handle */
  heron__cu_result (*Init)(unsigned flags);
  heron__cu_result (*DriverGetVersion)(int *version);
  heron__cu_result (*DeviceGetCount)(int *count);
  heron__cu_result (*DeviceGet)(heron__cu_device *dev, int ordinal);
  heron__cu_result (*DeviceGetName)(char *name, int len, heron__cu_device dev);
  heron__cu_result (*DeviceGetAttribute)(int *value, int attr,
                                         heron__cu_device dev);
  heron__cu_result (*DevicePrimaryCtxRetain)(heron__cu_context *ctx,
                                             heron__cu_device dev);
  heron__cu_result (*CtxSetCurrent)(heron__cu_context ctx);
  heron__cu_result (*CtxSynchronize)(void);
  heron__cu_result (*ModuleLoadData)(heron__cu_module *mod, const void *image);
  heron__cu_result (*ModuleGetFunction)(heron__cu_function *fn,
                                        heron__cu_module mod, const char *name);
  heron__cu_result (*ModuleUnload)(heron__cu_module mod);
  heron__cu_result (*FuncSetAttribute)(heron__cu_function fn, int attr,
                                       int value);
  heron__cu_result (*MemAlloc)(heron__cu_deviceptr *p, size_t bytes);
  heron__cu_result (*MemFree)(heron__cu_deviceptr p);
  heron__cu_result (*MemcpyHtoD)(heron__cu_deviceptr dst, const void *src,
                                 size_t bytes);
  heron__cu_result (*MemcpyDtoH)(void *dst, heron__cu_deviceptr src,
                                 size_t bytes);
  heron__cu_result (*MemsetD8)(heron__cu_deviceptr dst, unsigned char value,
                               size_t n);
  heron__cu_result (*LaunchKernel)(heron__cu_function fn, unsigned gx,
                                   unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned smem,
                                   heron__cu_stream stream, void **params,
                                   void **extra);
  heron__cu_result (*EventCreate)(heron__cu_event *ev, unsigned flags);
  heron__cu_result (*EventDestroy)(heron__cu_event ev);
  heron__cu_result (*EventRecord)(heron__cu_event ev, heron__cu_stream stream);
  heron__cu_result (*EventSynchronize)(heron__cu_event ev);
  heron__cu_result (*EventElapsedTime)(float *ms, heron__cu_event start,
                                       heron__cu_event end);
  heron__cu_result (*GetErrorName)(heron__cu_result e, const char **name);
  heron__cu_result (*GetErrorString)(heron__cu_result e, const char **text);
  /* Optional (CUDA 12.0 and newer; NULL when the driver lacks it): the
   * tensor map of a TMA copy (sm_90), filled into 128 bytes aligned to 64;
   * see heron__cuda_tmap_2d. */
  heron__cu_result (*TensorMapEncodeTiled)(
      void *map, int dtype, unsigned rank, void *global,
      const unsigned long long *dims, const unsigned long long *strides,
      const unsigned *box, const unsigned *element_strides, int interleave,
      int swizzle, int l2_promotion, int oob_fill);
} heron__cuda_driver;

/* CUtensorMapDataType, CUtensorMapSwizzle and friends: the values
 * heron__cuda_tmap_2d passes. */
enum {
  HERON__CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  HERON__CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
  HERON__CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  HERON__CU_TENSOR_MAP_SWIZZLE_32B = 1,
  HERON__CU_TENSOR_MAP_SWIZZLE_64B = 2,
  HERON__CU_TENSOR_MAP_SWIZZLE_128B = 3,
  HERON__CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  HERON__CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0
};

/* The tensor map of a TMA tile copy (HERON_TMA_LOAD_2D in kernel.h) over
 * a row-major fp16 matrix at the device address `global`: `inner`
 * elements per row (the contiguous dimension), `outer` rows `row_bytes`
 * apart, boxes of box_inner x box_outer elements, swizzle span swz bytes
 * (0, 32, 64 or 128; the box's row must not be wider), out-of-range
 * elements read as zero.  Written into map (128 bytes, 64-byte aligned)
 * by the driver's cuTensorMapEncodeTiled.  HERON_EUNSUPPORTED when the
 * driver lacks it, HERON_EINVAL for a swizzle span it has no mode for or
 * when the driver refuses the map (its error named). */
int heron__cuda_tmap_2d(const heron__cuda_driver *d, void *map,
                        heron__cu_deviceptr global, unsigned long long inner,
                        unsigned long long outer, unsigned long long row_bytes,
                        unsigned box_inner, unsigned box_outer, int swz,
                        heron_error *err);

/* Opens the driver: dlopen of $HERON_LIBCUDA when set and non-empty, else
 * libcuda.so.1, and resolves every entry point above.  Does not call
 * cuInit.  HERON_ENOTFOUND "no CUDA driver: <why>" when the library cannot
 * be loaded, or names the first missing symbol and the file. */
int heron__cuda_driver_open(heron__cuda_driver *d, heron_error *err);

/* dlcloses the driver (NULL and a never-opened, zeroed struct are fine). */
void heron__cuda_driver_close(heron__cuda_driver *d);

/* "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)" for a CUresult,
 * written into buf[cap] (the driver's own names; "CUDA error <n>" when it
 * has none).  Returns buf. */
const char *heron__cuda_error_text(const heron__cuda_driver *d,
                                   heron__cu_result e, char *buf, size_t cap);

/* Fills hw from device 0 (name, sm, sm_count, smem_per_block,
 * smem_per_block_optin, max_threads_per_block, max_threads_dim, warp_size,
 * regs_per_block, target "cuda"), leaving the cpu fields alone.  Calls
 * cuInit in *this* process (see the fork note above).  HERON_ENOTFOUND with
 * a one-line reason when there is no GPU to use: "no CUDA driver: ..."
 * (no libcuda.so.1), "no CUDA device" (cuInit says so, or there are none),
 * or the failing call and its CUDA error. */
int heron__cuda_probe(heron__hw *hw, heron_error *err);

/* heron__cuda_probe run in a forked child that reports back over a pipe, so
 * that the calling process never initialises the driver and may fork
 * workers later; the tuner and the tools use this one.  The child is
 * killed after timeout_s seconds (<= 0: 60).  Same results as
 * heron__cuda_probe; HERON_ERUN when the child could not be forked or died
 * (the reason in the text). */
int heron__cuda_probe_isolated(heron__hw *hw, double timeout_s,
                               heron_error *err);

#endif
