/* core/op/build.c - the shared steps of building an op description: shape
 * checks common to every op, axes, tensors, and the FLOP count. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/op/op.h"

/* Messages name the op in capitals ("C2D: ..."), as the paper's tables do,
 * so they stand out from the dimension names around them. */
static void upper_name(const char *name, char *buf, size_t cap) {
  size_t i = 0;
  for (; name[i] && i + 1 < cap; i++)
    buf[i] = (char)toupper((unsigned char)name[i]);
  buf[i] = '\0';
}

/* "M,N,K" for messages that must say what was expected. */
static void dim_list(const heron__op_kind *kind, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int d = 0; d < kind->ndims_max && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", d ? "," : "",
                            kind->dims[d]);
}

int heron__op_begin(heron__op *op, const heron__op_kind *kind,
                    const int64_t *shape, int n, int dtype, heron_error *err) {
  char up[16], dims[128];
  upper_name(kind->name, up, sizeof up);
  memset(op, 0, sizeof *op);
  if (dtype < HERON__FP32 || dtype > HERON__BF16)
    return heron_error_set(
        err, HERON_EINVAL,
        "%s: unknown dtype %d (expected " HERON__DTYPE_LIST ")", up, dtype);
  if (n < kind->ndims || n > kind->ndims_max || (n > 0 && !shape)) {
    dim_list(kind, dims, sizeof dims);
    if (kind->ndims == kind->ndims_max)
      return heron_error_set(err, HERON_EINVAL,
                             "%s takes %d dimensions (%s), got %d", up,
                             kind->ndims, dims, n);
    return heron_error_set(err, HERON_EINVAL,
                           "%s takes %d to %d dimensions (%s), got %d", up,
                           kind->ndims, kind->ndims_max, dims, n);
  }
  for (int d = 0; d < kind->ndims_max; d++) {
    int64_t v = d < n ? shape[d] : kind->defaults[d - kind->ndims];
    int64_t lo = kind->mins ? kind->mins[d] : 1;
    if (v < lo)
      return heron_error_set(err, HERON_EINVAL, "%s: %s=%lld must be %s", up,
                             kind->dims[d], (long long)v,
                             lo == 0 ? "a non-negative integer"
                                     : "a positive integer");
    if (v > HERON__DIM_MAX)
      return heron_error_set(err, HERON_EINVAL,
                             "%s: %s=%lld exceeds the largest dimension %lld",
                             up, kind->dims[d], (long long)v, HERON__DIM_MAX);
    op->shape[d] = v;
  }
  op->nshape = kind->ndims_max;
  op->name = kind->name;
  op->dtype = dtype;
  /* Outputs keep the input type for fp32 and fp16 (Heron's Tensor Core suite
   * is fp16 in, fp16 out); int8 sums into s32 and bf16 into fp32, as VNNI
   * and AVX512-BF16 do.  The activation input is the first one unless the
   * op's build function says otherwise (gemv). */
  op->out_dtype = dtype == HERON__INT8   ? HERON__S32
                  : dtype == HERON__BF16 ? HERON__FP32
                                         : dtype;
  op->act_input = 0;
  op->channel_axis = -1;
  return HERON_OK;
}

int heron__op_add_axis(heron__op *op, const char *name, int kind,
                       int64_t extent) {
  int a = op->naxes++;
  snprintf(op->axes[a].name, sizeof op->axes[a].name, "%s", name);
  op->axes[a].kind = kind;
  op->axes[a].extent = extent;
  return a;
}

void heron__tensor_init(heron__tensor *t, const char *name, int ndim,
                        const int64_t *dims) {
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", name);
  t->ndim = ndim;
  for (int d = 0; d < ndim; d++)
    t->dims[d] = dims[d];
}

/* Element counts are products of up to six dimensions below 2^31, which can
 * overflow int64; such an op could never be allocated anyway, so refuse it
 * here where the message can still name the tensor. */
static int check_elems(const heron__op *op, const heron__tensor *t,
                       heron_error *err) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++)
    if (__builtin_mul_overflow(n, t->dims[d], &n) || n > (INT64_MAX >> 4))
      return heron_error_set(err, HERON_ERANGE,
                             "%s: tensor %s has too many elements", op->name,
                             t->name);
  return HERON_OK;
}

int heron__op_finish(heron__op *op, heron_error *err) {
  for (int t = 0; t < op->ninputs; t++) {
    int rc = check_elems(op, &op->in[t], err);
    if (rc)
      return rc;
  }
  int rc = check_elems(op, &op->out, err);
  if (rc)
    return rc;
  if (op->dtype == HERON__INT8 &&
      heron__op_reduce_len(op) > HERON__INT8_MAX_REDUCE)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "%s: int8 sums %lld products per output, more than "
                           "%d, so an s32 accumulator could overflow",
                           op->name, (long long)heron__op_reduce_len(op),
                           HERON__INT8_MAX_REDUCE);
  /* One multiply and one add per point of the loop nest, padded points
   * included (as cuDNN and TVM count).  A double is exact up to 2^53, far
   * beyond any op that fits in memory and time. */
  double points = 1;
  for (int a = 0; a < op->naxes; a++)
    points *= (double)op->axes[a].extent;
  op->flops = 2 * points;
  return HERON_OK;
}

int64_t heron__op_reduce_len(const heron__op *op) {
  int64_t r = 1;
  for (int a = 0; a < op->naxes; a++)
    if (op->axes[a].kind == HERON__REDUCE)
      r *= op->axes[a].extent;
  return r;
}

int64_t heron__conv_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad,
                             int64_t dil) {
  return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

int heron__conv_check_fits(const char *op, const char *kname, int64_t k,
                           int64_t dil, int64_t in, int64_t pad,
                           const char *what, heron_error *err) {
  if (dil * (k - 1) + 1 > in + 2 * pad)
    return heron_error_set(err, HERON_EINVAL,
                           "%s: %s=%lld with dilation %lld exceeds padded "
                           "input %s %lld",
                           op, kname, (long long)k, (long long)dil, what,
                           (long long)(in + 2 * pad));
  return HERON_OK;
}
