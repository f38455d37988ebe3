/* core/op/dtype.c - element types: names, sizes, IEEE half conversions, and
 * the wrapper that lets every reference kernel be written once over fp32. */
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

/* fp16 and bf16 inputs are exactly representable in fp32, so widening them
 * first and running the fp32 kernel computes the same mathematical result as
 * an fp16 or bf16 kernel with fp32 accumulation would, rounded once at the
 * end (bf16's output is fp32 already). */
void heron__op_run_ref(const heron__op *op, void *const *bufs,
                       heron__ref_f32_fn kernel) {
  if (op->dtype == HERON__FP32 && op->out_dtype == HERON__FP32) {
    kernel(op, (const float *const *)bufs, (float *)bufs[op->ninputs]);
    return;
  }
  float *tmp[HERON__MAX_TENSORS + 1] = {0};
  int ok = 1;
  for (int t = 0; t <= op->ninputs && ok; t++) {
    const heron__tensor *ts = t < op->ninputs ? &op->in[t] : &op->out;
    tmp[t] = malloc((size_t)heron__tensor_elems(ts) * sizeof(float));
    ok = tmp[t] != NULL;
  }
  int64_t nout = heron__tensor_elems(&op->out);
  if (ok) {
    for (int t = 0; t < op->ninputs; t++) {
      int64_t n = heron__tensor_elems(&op->in[t]);
      int dt = heron__op_buf_dtype(op, t);
      for (int64_t i = 0; i < n; i++)
        tmp[t][i] = (float)heron__elem_get(bufs[t], dt, i);
    }
    kernel(op, (const float *const *)tmp, tmp[op->ninputs]);
    for (int64_t i = 0; i < nout; i++)
      heron__elem_set(bufs[op->ninputs], op->out_dtype, i, tmp[op->ninputs][i]);
  } else {
    /* The reference has no way to report failure, so it leaves an output
     * that no check can accept: every measured kernel then fails loudly
     * instead of being compared against zeros. */
    for (int64_t i = 0; i < nout; i++)
      heron__elem_set(bufs[op->ninputs], op->out_dtype, i, NAN);
  }
  for (int t = 0; t <= op->ninputs; t++)
    free(tmp[t]);
}
