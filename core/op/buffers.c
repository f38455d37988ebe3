/* core/op/buffers.c - memory for an op's tensors: sizes, aligned allocation
 * and deterministic input values. */
#include <stdlib.h>
#include <string.h>

#include "core/op/op.h"
#include "heron/rng.h"

int64_t heron__tensor_elems(const heron__tensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++)
    n *= t->dims[d];
  return n;
}

int heron__tensor_reads(const heron__tensor *ts, int a) {
  for (int d = 0; d < ts->ndim; d++)
    if (ts->index[d].coef[a] != 0)
      return 1;
  return 0;
}

/* Buffer t of the op (inputs, the output at index ninputs, then the bias)
 * and its element type; the bias has the output's type. */
static const heron__tensor *tensor_at(const heron__op *op, int t, int *dtype) {
  *dtype = heron__op_buf_dtype(op, t);
  if (t < op->ninputs)
    return &op->in[t];
  return t == op->ninputs ? &op->out : &op->bias;
}

static uint64_t tensor_bytes(const heron__op *op, int t) {
  int dtype;
  const heron__tensor *ts = tensor_at(op, t, &dtype);
  return (uint64_t)heron__tensor_elems(ts) * (uint64_t)heron__dtype_size(dtype);
}

uint64_t heron__op_bytes(const heron__op *op) {
  uint64_t total = 0;
  for (int t = 0; t < heron__op_nbufs(op); t++)
    total += tensor_bytes(op, t);
  return total;
}

/* 64-byte alignment suits AVX-512 loads and cache lines; aligned_alloc needs
 * the size to be a multiple of the alignment, so sizes are rounded up, which
 * also lets a vectorised kernel's last aligned load stay inside the block. */
int heron__op_alloc_buffers(const heron__op *op, void **bufs,
                            heron_error *err) {
  int nb = heron__op_nbufs(op);
  for (int t = 0; t < nb; t++)
    bufs[t] = NULL;
  for (int t = 0; t < nb; t++) {
    uint64_t bytes = tensor_bytes(op, t);
    uint64_t rounded = (bytes + 63) / 64 * 64;
    if (rounded == 0)
      rounded = 64;
    bufs[t] = rounded <= SIZE_MAX ? aligned_alloc(64, (size_t)rounded) : NULL;
    if (!bufs[t]) {
      int dtype;
      const heron__tensor *ts = tensor_at(op, t, &dtype);
      heron__op_free_buffers(op, bufs);
      return heron_error_set(err, HERON_ENOMEM,
                             "%s: cannot allocate %llu bytes for tensor %s "
                             "(%llu bytes for all tensors)",
                             op->name, (unsigned long long)bytes, ts->name,
                             (unsigned long long)heron__op_bytes(op));
    }
    memset(bufs[t], 0, (size_t)rounded);
  }
  return HERON_OK;
}

void heron__op_free_buffers(const heron__op *op, void **bufs) {
  for (int t = 0; t < heron__op_nbufs(op); t++) {
    free(bufs[t]);
    bufs[t] = NULL;
  }
}

/* A constant input of the op's definition (SCAN's triangular matrix). */
static void fill_constant(const heron__tensor *ts, int dtype, void *buf) {
  int64_t rows = ts->ndim >= 2 ? ts->dims[ts->ndim - 2] : 1;
  int64_t cols = ts->dims[ts->ndim - 1];
  int64_t n = heron__tensor_elems(ts);
  for (int64_t i = 0; i < n; i++) {
    int64_t r = (i / cols) % rows, c = i % cols;
    heron__elem_set(buf, dtype, i, r <= c ? 1.0 : 0.0);
  }
}

/* Each input gets its own stream derived from the seed and its position, so
 * the values of one tensor do not depend on the sizes of the others.  The
 * bias, when there is one, is filled like one more input. */
void heron__op_fill_inputs(const heron__op *op, void *const *bufs,
                           uint64_t seed) {
  int has_bias = (op->epilogue & HERON__EPI_BIAS) != 0;
  for (int t = 0; t < op->ninputs + has_bias; t++) {
    int slot = t < op->ninputs ? t : op->ninputs + 1;
    const heron__tensor *ts = t < op->ninputs ? &op->in[t] : &op->bias;
    int dtype = heron__op_buf_dtype(op, slot);
    if (ts->fill == HERON__FILL_UPPER) {
      fill_constant(ts, dtype, bufs[slot]);
      continue;
    }
    heron_rng rng;
    heron_rng_seed(&rng, seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(t + 1)));
    int64_t n = heron__tensor_elems(ts);
    /* Integers cover their whole range, so that every bit of a product
     * and the extremes of VNNI's operands are exercised (the build bounds
     * the reduction so that the s32 sums cannot overflow); the s32 bias
     * stays within 2^15 for the same bound.  bf16 takes the fp32 values
     * rounded to bfloat16. */
    for (int64_t i = 0; i < n; i++) {
      switch (dtype) {
      case HERON__U8:
        ((uint8_t *)bufs[slot])[i] = (uint8_t)heron_rng_below(&rng, 256);
        break;
      case HERON__S8:
      case HERON__INT8:
        ((int8_t *)bufs[slot])[i] =
            (int8_t)((int)heron_rng_below(&rng, 256) - 128);
        break;
      case HERON__S32:
        ((int32_t *)bufs[slot])[i] =
            (int32_t)heron_rng_below(&rng, 65537) - 32768;
        break;
      default: {
        double v = 2.0 * heron_rng_uniform(&rng) - 1.0;
        heron__elem_set(bufs[slot], dtype, i, v);
      }
      }
    }
  }
}
