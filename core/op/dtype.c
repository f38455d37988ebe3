/* core/op/dtype.c - element types: names, sizes, IEEE half conversions, and
 * the wrapper that lets every reference kernel be written once over double
 * arrays for every dtype. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/op/op.h"

static const char *const dtype_names[] = {"fp32", "fp16", "int8", "bf16",
                                          "u8",   "s8",   "s32"};

const char *heron__dtype_name(int dtype) {
  if (dtype < 0 || dtype > HERON__S32)
    return "unknown";
  return dtype_names[dtype];
}

/* Only an op's dtypes parse: u8, s8 and s32 are the element types of the
 * tensors of an int8 op, not dtypes a user picks. */
int heron__dtype_parse(const char *name) {
  if (!name)
    return HERON_EINVAL;
  for (int i = 0; i <= HERON__BF16; i++)
    if (!strcmp(name, dtype_names[i]))
      return i;
  return HERON_EINVAL;
}

int heron__dtype_size(int dtype) {
  switch (dtype) {
  case HERON__FP32:
    return 4;
  case HERON__FP16:
    return 2;
  case HERON__INT8:
  case HERON__U8:
  case HERON__S8:
    return 1;
  case HERON__BF16:
    return 2;
  case HERON__S32:
    return 4;
  }
  return 0;
}

int heron__op_buf_dtype(const heron__op *op, int t) {
  if (t < op->ninputs) {
    if (op->dtype == HERON__INT8)
      return t == op->act_input ? HERON__U8 : HERON__S8;
    return op->dtype;
  }
  return op->out_dtype;
}

/* Float to binary16 by hand rather than with _Float16, so the result does not
 * depend on the compiler or on F16C being present: the generated kernels and
 * the reference must agree on every bit of the inputs. */
uint16_t heron__half_from_float(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) /* Inf stays Inf; NaN stays a quiet NaN. */
    return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
  int e = (int)exp - 127 + 15;
  if (e >= 31) /* Too large for half: overflow to infinity. */
    return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    /* Subnormal half (or zero): shift the full significand into place and
     * round to nearest even on the bits shifted out. */
    if (e < -10)
      return (uint16_t)sign;
    uint32_t m = man | 0x800000u;
    int shift = 14 - e;
    uint32_t h = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1)))
      h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)e << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  /* A carry out of the significand correctly bumps the exponent (and turns
   * the largest finite values into infinity). */
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
    h++;
  return (uint16_t)(sign | h);
}

float heron__half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t x;
  if (exp == 0x1f) {
    x = sign | 0x7f800000u | (man << 13);
  } else if (exp == 0) {
    /* Zero or subnormal: the value is man * 2^-24 exactly. */
    float v = ldexpf((float)man, -24);
    return sign ? -v : v;
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* bfloat16 is the upper half of an fp32: rounding keeps 8 significant bits
 * with round to nearest even on the 16 dropped ones, by hand for the same
 * reason as the half conversion; a NaN keeps its sign and stays quiet
 * (the rounding carry could otherwise turn it into infinity). */
uint16_t heron__bf16_from_float(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return (uint16_t)(x >> 16);
}

float heron__bf16_to_float(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* Integers round to nearest and saturate: a double outside the type's range
 * would otherwise make the conversion undefined. */
static int64_t clamp_int(double v, double lo, double hi) {
  if (!(v >= lo)) /* also NaN */
    return (int64_t)lo;
  if (v > hi)
    return (int64_t)hi;
  return (int64_t)llround(v);
}

double heron__elem_get(const void *buf, int dtype, int64_t i) {
  switch (dtype) {
  case HERON__FP32:
    return ((const float *)buf)[i];
  case HERON__FP16:
    return heron__half_to_float(((const uint16_t *)buf)[i]);
  case HERON__INT8:
  case HERON__S8:
    return ((const int8_t *)buf)[i];
  case HERON__U8:
    return ((const uint8_t *)buf)[i];
  case HERON__BF16:
    return heron__bf16_to_float(((const uint16_t *)buf)[i]);
  case HERON__S32:
    return ((const int32_t *)buf)[i];
  }
  return 0;
}

void heron__elem_set(void *buf, int dtype, int64_t i, double v) {
  switch (dtype) {
  case HERON__FP32:
    ((float *)buf)[i] = (float)v;
    break;
  case HERON__FP16:
    ((uint16_t *)buf)[i] = heron__half_from_float((float)v);
    break;
  case HERON__INT8:
  case HERON__S8:
    ((int8_t *)buf)[i] = (int8_t)clamp_int(v, -128, 127);
    break;
  case HERON__U8:
    ((uint8_t *)buf)[i] = (uint8_t)clamp_int(v, 0, 255);
    break;
  case HERON__BF16:
    ((uint16_t *)buf)[i] = heron__bf16_from_float((float)v);
    break;
  case HERON__S32:
    ((int32_t *)buf)[i] = (int32_t)clamp_int(v, INT32_MIN, INT32_MAX);
    break;
  }
}

/* Widens n elements of a buffer of `dtype` to doubles.  The common element
 * types get a plain loop (which vectorises); every value of every input
 * dtype is exact in double. */
static void widen(const void *src, int dtype, double *dst, int64_t n) {
  switch (dtype) {
  case HERON__FP32:
    for (int64_t i = 0; i < n; i++)
      dst[i] = ((const float *)src)[i];
    break;
  case HERON__U8:
    for (int64_t i = 0; i < n; i++)
      dst[i] = ((const uint8_t *)src)[i];
    break;
  case HERON__S8:
    for (int64_t i = 0; i < n; i++)
      dst[i] = ((const int8_t *)src)[i];
    break;
  default:
    for (int64_t i = 0; i < n; i++)
      dst[i] = heron__elem_get(src, dtype, i);
    break;
  }
}

/* Every input element (fp32, fp16, bf16, u8, s8) is exact in double, so the
 * kernel sees the very values the buffers hold; the products of two of them
 * are exact in double too.  What the double sums give per dtype:
 *
 *   fp32, fp16, bf16: the kernels accumulate in double, as the fp32
 *     references always did (they read floats into double accumulators),
 *     and the result is rounded once to the output dtype: fp32 outputs get
 *     (float)v, fp16 ones (float)v and then binary16 round to nearest even
 *     (heron__elem_set), bit for bit what the earlier fp32 path stored.
 *   int8: every product is at most 255 * 128 in magnitude and the build
 *     bounds the reduction to HERON__INT8_MAX_REDUCE terms, so every
 *     partial sum is an integer below 2^31 < 2^53, which double adds
 *     exactly; the s32 output is an exact conversion.
 *
 * Cost: a double copy of each data input and a double output, 8 bytes per
 * element, held while the kernel runs (core/task/task.c's memory check
 * budgets them).  Constant inputs (a fill other than HERON__FILL_RANDOM,
 * such as scan's T) are part of the op's definition, which the reference
 * computes from the definition rather than reading: they are not copied and
 * the kernel gets NULL for them. */
void heron__op_run_ref(const heron__op *op, void *const *bufs,
                       heron__ref_f64_fn kernel) {
  double *tmp[HERON__MAX_TENSORS + 1] = {0};
  int ok = 1;
  for (int t = 0; t <= op->ninputs && ok; t++) {
    const heron__tensor *ts = t < op->ninputs ? &op->in[t] : &op->out;
    if (t < op->ninputs && ts->fill != HERON__FILL_RANDOM)
      continue;
    tmp[t] = malloc((size_t)heron__tensor_elems(ts) * sizeof(double));
    ok = tmp[t] != NULL;
  }
  int64_t nout = heron__tensor_elems(&op->out);
  if (ok) {
    for (int t = 0; t < op->ninputs; t++)
      if (tmp[t])
        widen(bufs[t], heron__op_buf_dtype(op, t), tmp[t],
              heron__tensor_elems(&op->in[t]));
    kernel(op, (const double *const *)tmp, tmp[op->ninputs]);
    for (int64_t i = 0; i < nout; i++)
      heron__elem_set(bufs[op->ninputs], op->out_dtype, i, tmp[op->ninputs][i]);
  } else {
    /* The reference has no way to report failure, so it leaves an output
     * that no check can accept: every measured kernel then fails loudly
     * instead of being compared against zeros.  NaN stores as NaN in
     * floating outputs and as INT32_MIN (which no bounded int8 sum
     * reaches) in s32 ones. */
    for (int64_t i = 0; i < nout; i++)
      heron__elem_set(bufs[op->ninputs], op->out_dtype, i, NAN);
  }
  for (int t = 0; t <= op->ninputs; t++)
    free(tmp[t]);
}
