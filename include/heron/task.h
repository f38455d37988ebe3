/* heron/task.h - operators and tasks.
 *
 * A task is an op at a shape, a dtype and a target, on a hardware
 * description.  Creating one validates everything (shape, dtype, memory
 * footprint), applies the target's schedule and constraint rules, and builds
 * its space.  A task is immutable afterwards and owns its space.
 */
#ifndef HERON_TASK_H
#define HERON_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "heron/space.h"
#include "heron/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The operator catalogue -------------------------------------------- */

/* Number of operators, and the name of the i-th ("gemm", "bmm", ...). */
HERON_API int heron_op_count(void);
HERON_API const char *heron_op_name(int i);

/* A one-line description of `op`, or NULL when unknown. Static. */
HERON_API const char *heron_op_summary(const char *op);

/* The names of op's shape dimensions, in --shape order ("M", "N", "K" for
 * gemm): *names points to a static array of *n strings.  HERON_ENOTFOUND
 * for an unknown op, with the known ones in the message. */
HERON_API int heron_op_dims(const char *op, const char *const **names, int *n,
                            heron_error *err);

/* Parses "1024,1024,1024" for `op` into shape[cap] and *n.  Every dimension
 * must be a positive integer and their number must match the op (trailing
 * optional dimensions may be left out when the op gives them defaults).
 * HERON_EINVAL naming the dimension and value otherwise. */
HERON_API int heron_parse_shape(const char *op, const char *text,
                                int64_t *shape, int cap, int *n,
                                heron_error *err);

/* ---- Targets ------------------------------------------------------------- */

/* The dtype a task of target `name` (NULL: the default target, "cpu") is
 * built with when its spec names none: "fp32" for cpu, "fp16" for cuda
 * (Tensor Cores take fp16).  NULL for an unknown name and for a target that
 * takes it from elsewhere (replay: the recorded task's).  Static. */
HERON_API const char *heron_target_default_dtype(const char *name);

/* 1 when target `name` runs its kernels on a GPU (cuda), whose hardware
 * description then comes from the GPU when no --hw names one; 0 otherwise,
 * an unknown name included. */
HERON_API int heron_target_is_gpu(const char *name);

/* The number of CUDA devices this process sees (CUDA_VISIBLE_DEVICES
 * applies), probed in a short-lived child process so the caller never
 * initialises the driver; 0 when there is no driver or no device. */
HERON_API int heron_cuda_device_count(void);

/* ---- Tasks --------------------------------------------------------------- */

typedef struct heron_task_spec {
  const char *op;       /* operator name, e.g. "gemm" */
  const int64_t *shape; /* dimensions in the op's order */
  int nshape;
  const char *dtype;    /* "fp32", "fp16", "int8" (u8 activations x s8
                           weights -> s32), "bf16" (-> fp32) per target;
                           NULL: fp32 for cpu, fp16 for cuda */
  const char *target;   /* "cpu" (default when NULL) */
  const char *hw;       /* hardware description: NULL to detect this machine,
                           else a name in configs/hw/ or a JSON file path */
  const char *epilogue; /* fused epilogue: NULL, "", "none", or a list of
                           "bias" (per-channel bias add) and "relu", e.g.
                           "bias,relu"; applied in that order */
  int sm; /* cuda: the compute capability * 10 to compile for (70..120);
             0 = the GPU's, else the hardware description's.  Without a
             GPU and without hw, sm picks the description (80: a100, 86:
             rtx3080, 90: h100).  Must be 0 for other targets. */
  /* Target "replay" only: the recorded logs measurements are answered from
   * (JSON Lines as heron_tune writes them, plain or gzip-compressed
   * .jsonl.gz), nreplay of them, at least one.  The first record of
   * replay[0] names the recorded task: its op, shape, dtype and epilogue
   * must be the spec's (HERON_ETASK naming both keys otherwise; a NULL
   * dtype means the recorded target's default), and its target (cpu or
   * cuda) is the one whose template and space are built.  The hardware is
   * spec->hw when given, else the sidecar "<log>.hw.json" next to replay[0]
   * (the log's name without ".gz" and ".jsonl", plus ".hw.json") when it
   * exists, else the recorded target's normal detection.  The task's key is
   * the recorded key with "replay" as its target
   * ("gemm/512,512,512/fp32/replay").  The strings are copied. */
  const char *const *replay;
  int nreplay;
  /* Inputs constant across calls, as at inference a network's weights: NULL,
   * "", "none", or a list of the op's input names ("weight" for the
   * convolutions, "B" for gemm).  A config that packs such an input packs
   * it once, before the calls and untimed, into the layout its loops read
   * (a layout rewrite, as oneDNN reorders its weights), and the kernel
   * reads that copy: see heron_prepack in the README's kernel interface
   * (the copy counts elements of the input's own type: floats in fp32,
   * s8 in int8, bf16 in bf16).  cpu and amx targets only; in int8 and bf16
   * only the weights, never the activations (op->act_input's input, e.g.
   * gemm's A).  The key gets "/prepack=weight" appended. */
  const char *prepack;
  /* A space from the auto-tuning community's formats instead of an op: t1
   * is a T1 input file (tuning parameters with their values, restrictions
   * as Python expressions; op, shape, dtype, epilogue, prepack, sm and
   * replay must then be unset), t4 a T4 results file of that space (or a
   * Kernel Tuner cache file), plain or .gz, brute-forced: every config is
   * answered with its recorded result, and a config of the space the file
   * lacks is an error naming it.  The target is "replay" (NULL or "replay"
   * accepted); t4 may be NULL for a task that is only looked at (heron-space)
   * and never tuned.  The key is "t1/<BenchmarkName>/<T4 file's base
   * name>/replay"; FLOPs are 1e9 per run, so "GFLOP/s" is runs per second.
   * The strings are copied. */
  const char *t1;
  const char *t4;
  /* How the task's space samples (heron_space_set_sampler): 0,
   * HERON_SAMPLER_HERON, is the default; HERON_SAMPLER_UNIFORM counts the
   * space when the task is built, so that every strategy's random draws are
   * uniform over the valid configs. */
  heron_sampler sampler;
} heron_task_spec;

typedef struct heron_task heron_task;

/* Validates the spec and builds the task and its space into *out.  A task
 * of target "replay" measures nothing itself: heron_tune answers each
 * config from the recorded logs, or from a surrogate model fitted on them
 * (see spec->replay); HERON_EINVAL when it has no log, HERON_ENOTFOUND when
 * a log is missing, HERON_EPARSE when the first record cannot be read.  For the
 * cuda target the limits come from the GPU when there is one (probed in a
 * short-lived child process, so this process never initialises the
 * driver), else from spec->hw or spec->sm.  Errors:
 * HERON_ENOTFOUND (unknown op, target, hw; cuda without a GPU, hw or sm),
 * HERON_EINVAL (bad shape, dtype, sm), HERON_ERANGE (tensors too large for this
 * machine's memory), HERON_EUNSAT (the rules leave no valid config). */
HERON_API int heron_task_create(const heron_task_spec *spec, heron_task **out,
                                heron_error *err);

/* Frees the task and its space. NULL is accepted. */
HERON_API void heron_task_free(heron_task *t);

/* The stable key, "op/d1,d2,.../dtype/target", e.g.
 * "gemm/1024,1024,1024/fp32/cpu", with "/bias,relu" appended when the task
 * has an epilogue and "/prepack=weight" when it prepacks inputs. Owned by
 * the task. */
HERON_API const char *heron_task_key(const heron_task *t);

/* The exact number of floating-point (or integer) operations of one run. */
HERON_API double heron_task_flops(const heron_task *t);

/* The task's space (owned by the task). */
HERON_API const heron_space *heron_task_space(const heron_task *t);

/* The whole recorded space of a T1 task with a T4 file (spec->t1,
 * spec->t4): for every config of the file that is valid in the space, its
 * recorded objective in seconds (NaN when it failed) into (*seconds)[i] and
 * the simulated seconds measuring it took (the record's compilation,
 * framework, search and validation times and all its runtimes) into
 * (*cost)[i]; *n of each, malloc'ed (free with heron_free).  What
 * heron-bench scores runs against.  HERON_EUNSUPPORTED for any other
 * task; the T4 file's errors as heron_tune reports them. */
HERON_API int heron_task_recorded_space(const heron_task *t, double **seconds,
                                        double **cost, int *n,
                                        heron_error *err);

/* Checks a T1 task's space against its T4 file, which brute-forced it:
 * *both counts the configs valid in the space that the file answers,
 * *only_space those it lacks, *only_file the file's records whose config
 * the restrictions exclude (records marked invalid by the file itself are
 * not counted).  The sets are equal when both extras are 0.  *report
 * lists the first ten of each difference, one per line ("" when equal);
 * free it with heron_free.  The space is enumerated over the parameters'
 * value lists (HERON_ERANGE past 5e7 combinations).  HERON_EUNSUPPORTED
 * for a task that is not a T1 task with a T4 file. */
HERON_API int heron_task_compare_recorded(const heron_task *t, long long *both,
                                          long long *only_space,
                                          long long *only_file, char **report,
                                          heron_error *err);

/* The op name, dtype and target of the task (static strings); "replay"
 * for a replay task, whatever target its logs were recorded on. */
HERON_API const char *heron_task_op(const heron_task *t);
HERON_API const char *heron_task_dtype(const heron_task *t);
HERON_API const char *heron_task_target(const heron_task *t);

/* A multi-line readable description of the task's template (stages, loops
 * and knobs) into *text; free with heron_free. */
HERON_API int heron_task_describe(const heron_task *t, char **text,
                                  heron_error *err);

/* Generates the kernel source for the valid config cfg[nvars] into *src
 * (NUL-terminated; free with heron_free).  HERON_EINVAL when cfg is not
 * valid. */
HERON_API int heron_task_source(const heron_task *t, const int64_t *cfg,
                                char **src, heron_error *err);

/* The C compiler flags a cpu kernel of this task is built with as a shared
 * object ("-O3 -fno-predictive-commoning -march=native -mno-avx512f -mavx2
 * -mfma -fopenmp -fPIC -shared" for an AVX2 description: the ISA of the
 * task's hardware, not of the building machine); for a cuda task, those of
 * its CPU emulation.  A static string. */
HERON_API const char *heron_task_cflags(const heron_task *t);

/* ---- A kernel's interface -------------------------------------------------
 * What a program that calls a generated kernel needs to know (heron-lib
 * writes its library's functions from these).  A cpu kernel is called as
 * heron_kernel(bufs) with one pointer per buffer in this order: the op's
 * inputs, its output, then the bias when the epilogue adds one. */

/* The shape of the task, every dimension of the op in its order (the
 * defaults of trailing dimensions the spec left out filled in): *shape
 * points into the task.  Returns the number of dimensions; 0 for a T1
 * task, which has no op. */
HERON_API int heron_task_shape(const heron_task *t, const int64_t **shape);

/* The fused epilogue as the key writes it ("bias,relu", "relu"), "" for
 * none; "/prepack=..." of the key is heron_task_prepack's.  Static or
 * owned by the task. */
HERON_API const char *heron_task_epilogue(const heron_task *t);

/* The inputs the kernel takes prepacked ("weight", "B"; see
 * heron_task_spec.prepack), "" for none.  Owned by the task. */
HERON_API const char *heron_task_prepack(const heron_task *t);

typedef struct heron_task_buffer {
  const char *name;  /* "A", "B", "C", "data", "weight", "out", "bias" */
  const char *dtype; /* element type: "fp32", "fp16", "bf16", "u8", "s8" or
                        "s32" (an int8 op reads u8 activations and s8
                        weights and writes s32) */
  int elem_bytes;    /* bytes per element */
  int output;        /* 1 for the buffer the kernel writes */
  int ndim;
  const int64_t *dims; /* ndim dimensions, row-major, the last contiguous */
} heron_task_buffer;

/* The number of buffers of one call (0 for a T1 task). */
HERON_API int heron_task_nbuffers(const heron_task *t);

/* Buffer i (0 <= i < heron_task_nbuffers) into *b; its strings and dims
 * are owned by the task.  HERON_ERANGE for another i. */
HERON_API int heron_task_buffer_info(const heron_task *t, int i,
                                     heron_task_buffer *b, heron_error *err);

/* ---- A cuda kernel's device code ------------------------------------------
 * What a program needs to launch a cuda task's kernel through the driver
 * API (heron-lib embeds it in its libraries).  The kernel takes four
 * device pointers, (in0, in1, out, bias): the op's two inputs, its output
 * and the bias, 0 when the epilogue adds none; all fp16. */
typedef struct heron_cuda_image {
  void *cubin;       /* the cubin (heron_cuda_image_free frees it); NULL when
                        only the launch was asked for */
  size_t cubin_size; /* bytes */
  char entry[256];   /* the kernel's name in the cubin */
  int sm;            /* the architecture built for: the task's */
  int grid[3], block[3];
  int64_t dynamic_smem; /* bytes the launch asks; above 48 KiB the kernel's
                           MAX_DYNAMIC_SHARED_SIZE_BYTES must be raised */
  int regs;             /* ptxas' registers per thread */
  int spill_bytes;      /* spill stores + loads */
  int64_t static_smem;  /* static shared memory per block */
  char nvrtc[32];       /* NVRTC's version ("13.0"); "" without a cubin */
} heron_cuda_image;

/* The launch of `src`, a source of a cuda task's kernel
 * (heron_task_source), into *out (zeroed first), and with `compile` 1 its
 * cubin, which NVRTC builds for the task's SM with the options of a tuning
 * run.  HERON_EINVAL for a task of another target or a source without its
 * launch line; HERON_EBUILD when NVRTC refuses the source or the
 * architecture (the message names sm_XX); HERON_EUNSUPPORTED when libheron
 * was built without NVRTC, or for a kernel that takes TMA tensor maps (the
 * sm_90a path, mma 2), which the image's launchers do not make. */
HERON_API int heron_cuda_image_build(const heron_task *t, const char *src,
                                     int compile, heron_cuda_image *out,
                                     heron_error *err);
HERON_API void heron_cuda_image_free(heron_cuda_image *img);

#ifdef __cplusplus
}
#endif
#endif /* HERON_TASK_H */
