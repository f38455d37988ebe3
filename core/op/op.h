/* core/op/op.h - operator descriptions, internal to libheron.
 *
 * An op is described as a loop nest over named axes:
 *
 *     for every spatial axis s, every reduction axis r:
 *         out[out_index(s)] += prod over inputs in[in_index(s, r)]
 *
 * (for the ops we have, there are exactly two inputs multiplied together;
 * `ninputs` says how many).  Each tensor dimension is indexed by an affine
 * expression of the axes, sum(coef[a] * axis[a]) + offset; when an
 * expression can leave [0, dim) (convolution padding) the tensor has
 * `bounded` set and out-of-range elements read as zero.  The schedule rules
 * and the code generators work only from this description, never from the
 * op's name.  Every op also has an independent plain-C reference
 * implementation used to check measured kernels.
 */
#ifndef HERON_CORE_OP_H
#define HERON_CORE_OP_H

#include <stdint.h>

#include "heron/status.h"

#define HERON__MAX_AXES 12
#define HERON__MAX_DIMS 6
#define HERON__MAX_TENSORS 4
#define HERON__MAX_SHAPE 16

typedef enum heron__dtype {
  HERON__FP32 = 0,
  HERON__FP16,
  HERON__INT8
} heron__dtype;

typedef enum heron__axis_kind {
  HERON__SPATIAL = 0,
  HERON__REDUCE
} heron__axis_kind;

typedef struct heron__axis {
  char name[16];   /* "i", "j", "k", "n", "co", "oh", "ow", "ci", "kh", "kw" */
  int kind;        /* heron__axis_kind */
  int64_t extent;  /* loop length, >= 1 */
} heron__axis;

/* One tensor dimension's index: sum(coef[a] * axis_a) + offset. */
typedef struct heron__affine {
  int64_t coef[HERON__MAX_AXES];
  int64_t offset;
} heron__affine;

typedef struct heron__tensor {
  char name[16];                        /* "A", "B", "C", "data", "weight", "out" */
  int ndim;
  int64_t dims[HERON__MAX_DIMS];        /* row-major, last dimension contiguous */
  heron__affine index[HERON__MAX_DIMS]; /* per dimension */
  int bounded;                          /* 1 when an index may leave [0, dim) */
} heron__tensor;

typedef struct heron__op heron__op;

/* Plain reference implementation: bufs[0..ninputs) are the inputs,
 * bufs[ninputs] the output (overwritten). */
typedef void (*heron__ref_fn)(const heron__op *op, void *const *bufs);

struct heron__op {
  const char *name;     /* static: "gemm" */
  int dtype;            /* heron__dtype of the inputs */
  int out_dtype;        /* heron__dtype of the output (fp32 for fp32 and
                           fp16 inputs... as the target decides; int32 is
                           represented as HERON__FP32-sized int for int8) */
  int64_t shape[HERON__MAX_SHAPE]; /* the user's shape, in the op's order */
  int nshape;
  int naxes;
  heron__axis axes[HERON__MAX_AXES]; /* spatial axes first, in output order */
  int ninputs;
  heron__tensor in[HERON__MAX_TENSORS];
  heron__tensor out;    /* indexed by the spatial axes only */
  double flops;         /* exact: 2 * product of all axis extents (one
                           multiply and one add per point of the nest,
                           padded points included, as cuDNN and TVM count) */
  heron__ref_fn reference;
};

/* Static information about an op kind, in the catalogue. */
typedef struct heron__op_kind {
  const char *name;
  const char *summary;
  const char *const *dims;  /* dimension names in --shape order */
  int ndims;                /* how many the user must give */
  int ndims_max;            /* how many may be given (defaults fill the rest) */
  const int64_t *defaults;  /* values of the optional trailing dimensions */
  /* Checks the shape and fills *op (name, axes, tensors, flops, reference).
   * HERON_EINVAL naming the offending dimension on an impossible shape. */
  int (*build)(const int64_t *shape, int n, int dtype, heron__op *op,
               heron_error *err);
} heron__op_kind;

/* The catalogue. */
int heron__op_kind_count(void);
const heron__op_kind *heron__op_kind_at(int i);
const heron__op_kind *heron__op_kind_find(const char *name);

/* Builds the op `name` at `shape` (all validation included). */
int heron__op_build(const char *name, const int64_t *shape, int n, int dtype,
                    heron__op *op, heron_error *err);

/* dtype names: "fp32", "fp16", "int8"; parse returns the enum or
 * HERON_EINVAL. Element size in bytes. */
const char *heron__dtype_name(int dtype);
int heron__dtype_parse(const char *name);
int heron__dtype_size(int dtype);

/* Number of elements / bytes of a tensor. */
int64_t heron__tensor_elems(const heron__tensor *t);

/* Total bytes of all tensors of the op (inputs and output). */
uint64_t heron__op_bytes(const heron__op *op);

/* Allocates zeroed, 64-byte-aligned buffers for the op's tensors into
 * bufs[0..ninputs] (inputs then output); free with heron__op_free_buffers. */
int heron__op_alloc_buffers(const heron__op *op, void **bufs, heron_error *err);
void heron__op_free_buffers(const heron__op *op, void **bufs);

/* Fills the inputs with deterministic pseudo-random values in [-1, 1]
 * (small integers for int8) from `seed`. */
void heron__op_fill_inputs(const heron__op *op, void *const *bufs, uint64_t seed);

/* Compares an output with the reference output elementwise.  The
 * tolerance is dtype-appropriate and scales with the reduction length:
 * |out - ref| <= atol + rtol * |ref| per element.  Returns 1 when they
 * match; writes the largest relative error to *max_err and the index of the
 * first mismatch (or -1) to *bad. */
int heron__op_check(const heron__op *op, const void *out, const void *ref,
                    double *max_err, int64_t *bad);

/* Evaluates the op straight from its description (a slow interpreter of the
 * affine index maps).  Tests use it to check that description and
 * reference agree. */
void heron__op_interpret(const heron__op *op, void *const *bufs);

#endif
