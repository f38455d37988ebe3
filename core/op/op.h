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

/* Element types.  The first four are an op's dtype (what --dtype names);
 * the last three are only the element types of single tensors of an int8
 * op, which mixes them as VNNI and oneDNN define int8 arithmetic:
 *
 *   int8: the activation input (op->act_input) holds u8 in [0, 255], the
 *         other input (the weights) s8 in [-128, 127], the output and the
 *         bias s32; products are summed exactly in 32-bit integers.
 *   bf16: both inputs hold bfloat16 bit patterns (uint16_t, the upper half
 *         of an fp32), the output and the bias fp32; products of two bf16
 *         values are exact in fp32 and the sums are fp32.
 *
 * HERON__INT8 as a buffer's element type (heron__elem_get) reads s8. */
typedef enum heron__dtype {
  HERON__FP32 = 0,
  HERON__FP16,
  HERON__INT8,
  HERON__BF16,
  HERON__U8,
  HERON__S8,
  HERON__S32
} heron__dtype;

/* The largest reduction length of an int8 op: 65536 products of at most
 * 255 * 128 = 32640 in magnitude, plus an s32 bias of at most 2^15, stay
 * inside an s32 (2^31 - 1), so no kernel's accumulator can wrap. */
#define HERON__INT8_MAX_REDUCE 65536

typedef enum heron__axis_kind {
  HERON__SPATIAL = 0,
  HERON__REDUCE
} heron__axis_kind;

typedef struct heron__axis {
  char name[16];  /* "i", "j", "k", "n", "co", "oh", "ow", "ci", "kh", "kw" */
  int kind;       /* heron__axis_kind */
  int64_t extent; /* loop length, >= 1 */
} heron__axis;

/* One tensor dimension's index: sum(coef[a] * axis_a) + offset, divided by
 * `div` when div > 1.  A divided index names an element only where the
 * expression is a multiple of div (the other points read as zero, and the
 * tensor must be `bounded`): that is how a transposed convolution with
 * stride s reads its input without materialising the zero-expanded copy.
 * div 0 and 1 both mean "not divided". */
typedef struct heron__affine {
  int64_t coef[HERON__MAX_AXES];
  int64_t offset;
  int64_t div;
} heron__affine;

/* How heron__op_fill_inputs fills an input.  Most inputs are data
 * (pseudo-random values); a few ops multiply by a constant matrix that is
 * part of the op's definition, such as SCAN's triangular 0/1 matrix. */
typedef enum heron__fill {
  HERON__FILL_RANDOM = 0,
  HERON__FILL_UPPER /* 2-D: element [r][c] is 1 when r <= c, else 0 */
} heron__fill;

/* Fused epilogue flags (Always-Inline): out = relu(sum + bias[channel]). */
enum {
  HERON__EPI_BIAS = 1, /* add bias[c], c the op's channel axis */
  HERON__EPI_RELU = 2  /* then max(x, 0) */
};

typedef struct heron__tensor {
  char name[16]; /* "A", "B", "C", "data", "weight", "out" */
  int ndim;
  int64_t dims[HERON__MAX_DIMS]; /* row-major, last dimension contiguous */
  heron__affine index[HERON__MAX_DIMS]; /* per dimension */
  int bounded;                          /* 1 when an index may leave [0, dim) */
  int fill;                             /* heron__fill, inputs only */
} heron__tensor;

typedef struct heron__op heron__op;

/* Plain reference implementation: bufs[0..ninputs) are the inputs,
 * bufs[ninputs] the output (overwritten), in the op's element types.  Each
 * op's is heron__op_run_ref over its one double kernel (heron__ref_f64_fn),
 * the same loop nest for every dtype. */
typedef void (*heron__ref_fn)(const heron__op *op, void *const *bufs);

struct heron__op {
  const char *name; /* static: "gemm" */
  int dtype;        /* heron__dtype of the inputs */
  int out_dtype;    /* heron__dtype of the output: the same as dtype
                       for fp32 and fp16 (as in Heron's Tensor Core
                       suite), HERON__S32 for int8, HERON__FP32 for
                       bf16 */
  int act_input;    /* the input that holds the activations: with int8
                       its elements are u8 and the other input's s8
                       (gemm, bmm: A; gemv: x; convolutions: data) */
  int64_t shape[HERON__MAX_SHAPE]; /* the user's shape, in the op's order */
  int nshape;
  int naxes;
  heron__axis axes[HERON__MAX_AXES]; /* spatial axes first, in output order */
  int ninputs;
  heron__tensor in[HERON__MAX_TENSORS];
  heron__tensor out; /* indexed by the spatial axes only */
  /* The spatial axis a per-channel bias runs along (gemm: j, conv: co), or
   * -1 when the op has none (scan).  Set by the op's build function. */
  int channel_axis;
  /* Fused epilogue (HERON__EPI_* flags, 0 for none) and, with
   * HERON__EPI_BIAS, the bias tensor: 1-D over the channel axis.  The
   * buffer order is inputs, output, bias: bufs[ninputs + 1] is the bias, so
   * the output stays at bufs[ninputs] whether or not there is one. */
  int epilogue;
  heron__tensor bias;
  /* Inputs constant across calls (bit i for in[i]; the task option
   * prepack, e.g. a network's weights at inference): a kernel whose config
   * packs such an input packs it once, ahead of the calls, into the
   * layout its loops read (heron_prepack, a layout rewrite as oneDNN
   * reorders its weights), and takes the packed copy in its place. */
  unsigned prepack;
  double flops; /* exact: 2 * product of all axis extents (one
                   multiply and one add per point of the nest,
                   padded points included, as cuDNN and TVM count) */
  heron__ref_fn reference;
  /* A blocked op's (heron__op_blocked) channel block B, 0 for the others:
   * its last spatial axis and its last reduction axis are the lanes of
   * the output's and the input's channel blocks (coi, cii), each of
   * extent B. */
  int64_t block;
  /* A channels-last op's (heron__op_channels_last): the channels-first
   * reference that `reference` runs on transposed copies. */
  heron__ref_fn reference_cf;
};

/* Number of buffers a kernel of the op takes: inputs, output, and the bias
 * when the epilogue has one. */
static inline int heron__op_nbufs(const heron__op *op) {
  return op->ninputs + 1 + ((op->epilogue & HERON__EPI_BIAS) ? 1 : 0);
}

/* Parses an --epilogue list ("bias,relu", "relu", "none", "") into
 * HERON__EPI_* flags; HERON_EINVAL naming the bad item otherwise. */
int heron__epilogue_parse(const char *text, int *flags, heron_error *err);

/* "bias,relu" / "relu" / "" for flags, static. */
const char *heron__epilogue_name(int flags);

/* Adds the epilogue to a built op: sets op->epilogue and, with a bias,
 * op->bias.  HERON_EUNSUPPORTED when the op has no channel axis and a bias
 * is asked for. */
int heron__op_set_epilogue(heron__op *op, int flags, heron_error *err);

/* Parses a prepack list of input names ("weight", "B,A", "none", "" or
 * NULL for none) into op->prepack.  HERON_EINVAL naming the op's inputs for
 * a name it has none of or one given twice. */
int heron__op_set_prepack(heron__op *op, const char *text, heron_error *err);

/* "weight" / "A,B" / "": the names of op->prepack's inputs, in input order,
 * into buf[cap]; returns buf. */
const char *heron__prepack_name(const heron__op *op, char *buf, size_t cap);

/* Applies the op's epilogue in place to bufs[ninputs] (the output of the
 * plain op) using bufs[ninputs + 1] as bias.  References and the
 * interpreter compute the plain op and then call this. */
void heron__op_apply_epilogue(const heron__op *op, void *const *bufs);

/* The reference output of the whole op: the plain op, then the epilogue.
 * For an fp16 output with an epilogue the plain op's result is kept in
 * fp32 and rounded once after the epilogue, as a fused kernel rounds it (a
 * rounding between them would differ from the kernel by more than the
 * check's tolerance where bias and sum cancel).  Measurements check against
 * this. */
void heron__op_reference_full(const heron__op *op, void *const *bufs);

/* Static information about an op kind, in the catalogue. */
typedef struct heron__op_kind {
  const char *name;
  const char *summary;
  const char *const *dims; /* dimension names in --shape order */
  int ndims;               /* how many the user must give */
  int ndims_max;           /* how many may be given (defaults fill the rest) */
  const int64_t *defaults; /* values of the optional trailing dimensions */
  /* Checks the shape and fills *op (name, axes, tensors, flops, reference).
   * HERON_EINVAL naming the offending dimension on an impossible shape. */
  int (*build)(const int64_t *shape, int n, int dtype, heron__op *op,
               heron_error *err);
  /* Smallest allowed value of each dimension (ndims_max entries), or NULL
   * when every dimension must be >= 1.  Padding may be 0, for instance. */
  const int64_t *mins;
} heron__op_kind;

/* The largest value any shape dimension may take.  It keeps every index
 * computation of the generated code inside 64-bit arithmetic and rejects
 * typos such as an extra digit long before an allocation would. */
#define HERON__DIM_MAX 2147483647LL

/* The catalogue's entries, one per op file (core/op/matmul.c, conv2d.c). */
extern const heron__op_kind heron__op_gemm_kind;
extern const heron__op_kind heron__op_bmm_kind;
extern const heron__op_kind heron__op_gemv_kind;
extern const heron__op_kind heron__op_c2d_kind;
extern const heron__op_kind heron__op_c1d_kind;
extern const heron__op_kind heron__op_c3d_kind;
extern const heron__op_kind heron__op_dil_kind;
extern const heron__op_kind heron__op_t2d_kind;
extern const heron__op_kind heron__op_scan_kind;
extern const heron__op_kind heron__op_c1d_nwc_kind;
extern const heron__op_kind heron__op_c2d_nhwc_kind;
extern const heron__op_kind heron__op_c3d_ndhwc_kind;
extern const heron__op_kind heron__op_c1d_ncw16c_kind;
extern const heron__op_kind heron__op_c2d_nchw16c_kind;
extern const heron__op_kind heron__op_c1d_ncw8c_kind;
extern const heron__op_kind heron__op_c2d_nchw8c_kind;

/* Turns a built convolution into its channels-last form (core/op/layout.c):
 * the activations' and the output's channel dimension moved last (NCHW ->
 * NHWC), the spatial axes reordered to the output's new order, the
 * reference wrapped; `name` (static) becomes the op's name.  Call it at
 * the end of a build function.  HERON_EUNSUPPORTED for an op without a
 * channel dimension. */
int heron__op_channels_last(heron__op *op, const char *name, heron_error *err);

/* Turns a built fp32 convolution into its blocked form (core/op/blocked.c):
 * the activations and the output blocked by `block` channels (nChw16c for
 * 16), the weights [CO/B][CI/B][K...][B][B] (OIhw16i16o), the channel
 * counts padded up to the block; the axes co and ci split into cob, coi
 * and cib, cii; no channel axis (no bias).  `name` (static) becomes the
 * op's name.  Call it at the end of a build function, and give the op a
 * reference that calls heron__op_blocked_ref.  HERON_EUNSUPPORTED for
 * another dtype, an op without channel dimensions, or weights that would
 * need more than HERON__MAX_DIMS dimensions (3-D convolutions). */
int heron__op_blocked(heron__op *op, int64_t block, const char *name,
                      heron_error *err);

/* The reference of a blocked op: `plain_kind`'s op at op's shape with
 * the dimensions ci_dim and co_dim rounded up to the block, run on
 * unblocked copies of the tensors (out of memory: NaN outputs). */
void heron__op_blocked_ref(const heron__op *op, void *const *bufs,
                           const heron__op_kind *plain_kind, int ci_dim,
                           int co_dim);

/* The catalogue. */
int heron__op_kind_count(void);
const heron__op_kind *heron__op_kind_at(int i);
const heron__op_kind *heron__op_kind_find(const char *name);

/* Builds the op `name` at `shape` (all validation included). */
int heron__op_build(const char *name, const int64_t *shape, int n, int dtype,
                    heron__op *op, heron_error *err);

/* dtype names: "fp32", "fp16", "int8", "bf16" (and "u8", "s8", "s32" for
 * the element types of an int8 op's tensors); parse takes only an op's
 * dtypes and returns the enum or HERON_EINVAL.  Element size in bytes. */
const char *heron__dtype_name(int dtype);
int heron__dtype_parse(const char *name);
int heron__dtype_size(int dtype);

/* The list of op dtypes for messages: "fp32, fp16, int8 or bf16". */
#define HERON__DTYPE_LIST "fp32, fp16, int8 or bf16"

/* Element type of buffer t of the op, in kernel buffer order: the inputs
 * (0..ninputs), the output (ninputs), then the bias (ninputs + 1). */
int heron__op_buf_dtype(const heron__op *op, int t);

/* Whether the op's output holds integers (int8: s32), checked exactly. */
static inline int heron__op_exact(const heron__op *op) {
  return op->out_dtype == HERON__S32;
}

/* Whether tensor ts reads axis a: some dimension's index has a nonzero
 * coefficient for it. */
int heron__tensor_reads(const heron__tensor *ts, int a);

/* The divisor of a dimension's index: div, or 1 when it is not divided. */
static inline int64_t heron__affine_div(const heron__affine *ix) {
  return ix->div > 1 ? ix->div : 1;
}

/* Number of elements / bytes of a tensor. */
int64_t heron__tensor_elems(const heron__tensor *t);

/* Total bytes of all tensors of the op (inputs and output). */
uint64_t heron__op_bytes(const heron__op *op);

/* Allocates zeroed, 64-byte-aligned buffers for the op's tensors into
 * bufs[0..ninputs] (inputs then output); free with heron__op_free_buffers. */
int heron__op_alloc_buffers(const heron__op *op, void **bufs, heron_error *err);
void heron__op_free_buffers(const heron__op *op, void **bufs);

/* Fills the inputs with deterministic pseudo-random values from `seed`:
 * fp32 and fp16 uniform in [-1, 1], bf16 the same values rounded to
 * bfloat16; int8 over the full ranges (u8 in [0, 255], s8 in [-128, 127])
 * and an s32 bias in [-2^15, 2^15]. */
void heron__op_fill_inputs(const heron__op *op, void *const *bufs,
                           uint64_t seed);

/* Compares an output with the reference output elementwise: exactly for
 * integer outputs (int8's s32).  Otherwise the
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

/* ---- Helpers for op definitions (core/op/build.c) ------------------------
 * Each op's build function calls heron__op_begin, then its own semantic
 * checks, then adds axes and tensors and ends with heron__op_finish. */

/* Zeroes *op and fills name, dtypes and the shape (optional trailing
 * dimensions from the kind's defaults, so op->nshape == kind->ndims_max and
 * equal shapes give equal task keys).  Checks the dtype, the number of
 * dimensions and each value against the kind's minimum and HERON__DIM_MAX;
 * HERON_EINVAL / HERON_EUNSUPPORTED naming the dimension otherwise. */
int heron__op_begin(heron__op *op, const heron__op_kind *kind,
                    const int64_t *shape, int n, int dtype, heron_error *err);

/* Appends an axis and returns its index (axes must be added spatial first,
 * in output order, then reductions). */
int heron__op_add_axis(heron__op *op, const char *name, int kind,
                       int64_t extent);

/* Names and sizes a tensor (an input, or &op->out) with zero index maps. */
void heron__tensor_init(heron__tensor *t, const char *name, int ndim,
                        const int64_t *dims);

/* Computes flops and checks that every tensor's element count fits in
 * int64 (HERON_ERANGE otherwise). */
int heron__op_finish(heron__op *op, heron_error *err);

/* Convolutions (core/op/build.c).  The output extent of a forward
 * convolution along one dimension: the positions where the dilated kernel
 * fits in the padded input, one every `stride`. */
int64_t heron__conv_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad,
                             int64_t dil);

/* HERON_EINVAL "<OP>: <kname>=<k> with dilation <dil> exceeds padded input
 * <what> <in + 2 pad>" unless the dilated kernel fits in the padded input
 * (which, with stride >= 1, makes the output extent at least 1). */
int heron__conv_check_fits(const char *op, const char *kname, int64_t k,
                           int64_t dil, int64_t in, int64_t pad,
                           const char *what, heron_error *err);

/* The product of the reduction axes' extents (1 when there are none). */
int64_t heron__op_reduce_len(const heron__op *op);

/* IEEE 754 binary16 conversions (round to nearest even), for fp16 buffers,
 * which hold uint16_t bit patterns. */
uint16_t heron__half_from_float(float f);
float heron__half_to_float(uint16_t h);

/* bfloat16 conversions (round to nearest even; NaN stays a quiet NaN), for
 * bf16 buffers, which hold uint16_t bit patterns. */
uint16_t heron__bf16_from_float(float f);
float heron__bf16_to_float(uint16_t h);

/* Reads element i of a buffer of `dtype` as a double, and stores one
 * (integers are stored rounded to nearest, saturated to their type). */
double heron__elem_get(const void *buf, int dtype, int64_t i);
void heron__elem_set(void *buf, int dtype, int64_t i, double v);

/* A reference kernel, written once for every dtype over double arrays:
 * in[0..ninputs) are the inputs widened to double (NULL for a constant
 * input, whose fill is not HERON__FILL_RANDOM: it is part of the op's
 * definition, which the kernel follows instead of reading it), out the
 * plain op's output, every element of which the kernel writes.  Kernels
 * accumulate in double in a fixed order; they apply no epilogue
 * (heron__op_reference_full adds it). */
typedef void (*heron__ref_f64_fn)(const heron__op *op, const double *const *in,
                                  double *out);

/* Runs a double reference kernel on buffers of the op's dtype: every data
 * input (fp32, fp16, bf16, u8 or s8) is widened to a double copy, the
 * kernel runs, and its results are narrowed to the output dtype (fp32:
 * (float)v; fp16: through fp32, then round to nearest even; s32: exact, as
 * int8 sums are integers below 2^31).  Exact for int8, and for fp32 bit for
 * bit what an fp32 reference with double accumulators gives; see
 * core/op/dtype.c for why.  The copies cost 8 bytes per element of every
 * data input and of the output, freed before it returns.  When they cannot
 * be allocated the output is set to values no check accepts (NaN;
 * INT32_MIN for s32). */
void heron__op_run_ref(const heron__op *op, void *const *bufs,
                       heron__ref_f64_fn kernel);

/* What a double kernel's range function (heron__par_for over output rows)
 * reads: the op and the kernel's double arrays. */
typedef struct heron__ref_ctx {
  const heron__op *op;
  const double *const *in;
  double *out;
} heron__ref_ctx;

#endif
