/* core/op/catalog.c - the operator catalogue: which ops exist, their
 * dimension names, and the strict parser of --shape strings.  The public
 * heron_op_* functions of heron/task.h are thin views of the internal one. */
#include <stdio.h>
#include <string.h>

#include "core/op/op.h"
#include "heron/task.h"

/* The order here is the order tools list the ops in: that of Heron's
 * operator suite. */
static const heron__op_kind *const kinds[] = {
    &heron__op_gemm_kind,
    &heron__op_bmm_kind,
    &heron__op_gemv_kind,
    &heron__op_c1d_kind,
    &heron__op_c2d_kind,
    &heron__op_c3d_kind,
    &heron__op_dil_kind,
    &heron__op_t2d_kind,
    &heron__op_scan_kind,
    /* channels-last forms of the convolutions (core/op/layout.c) */
    &heron__op_c1d_nwc_kind,
    &heron__op_c2d_nhwc_kind,
    &heron__op_c3d_ndhwc_kind,
    /* blocked forms, fp32 (core/op/blocked.c) */
    &heron__op_c1d_ncw16c_kind,
    &heron__op_c2d_nchw16c_kind,
    &heron__op_c1d_ncw8c_kind,
    &heron__op_c2d_nchw8c_kind,
};
enum { NKINDS = sizeof kinds / sizeof kinds[0] };

int heron__op_kind_count(void) { return NKINDS; }

const heron__op_kind *heron__op_kind_at(int i) {
  return i >= 0 && i < NKINDS ? kinds[i] : NULL;
}

const heron__op_kind *heron__op_kind_find(const char *name) {
  if (!name)
    return NULL;
  for (int i = 0; i < NKINDS; i++)
    if (!strcmp(kinds[i]->name, name))
      return kinds[i];
  return NULL;
}

/* Every "unknown op" message lists the known ones, so the user can fix the
 * typo without looking anything up. */
static int unknown_op(const char *name, heron_error *err) {
  char known[192];
  size_t len = 0;
  known[0] = '\0';
  for (int i = 0; i < NKINDS && len < sizeof known; i++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s",
                            i ? ", " : "", kinds[i]->name);
  return heron_error_set(err, HERON_ENOTFOUND, "unknown op '%s' (known: %s)",
                         name ? name : "(null)", known);
}

int heron__op_build(const char *name, const int64_t *shape, int n, int dtype,
                    heron__op *op, heron_error *err) {
  const heron__op_kind *kind = heron__op_kind_find(name);
  if (!kind)
    return unknown_op(name, err);
  return kind->build(shape, n, dtype, op, err);
}

/* ---- Public catalogue ---------------------------------------------------- */

HERON_API int heron_op_count(void) { return NKINDS; }

HERON_API const char *heron_op_name(int i) {
  const heron__op_kind *k = heron__op_kind_at(i);
  return k ? k->name : NULL;
}

HERON_API const char *heron_op_summary(const char *op) {
  const heron__op_kind *k = heron__op_kind_find(op);
  return k ? k->summary : NULL;
}

HERON_API int heron_op_dims(const char *op, const char *const **names, int *n,
                            heron_error *err) {
  const heron__op_kind *k = heron__op_kind_find(op);
  if (!k)
    return unknown_op(op, err);
  if (names)
    *names = k->dims;
  if (n)
    *n = k->ndims_max;
  return HERON_OK;
}

/* ---- --shape parsing ----------------------------------------------------- */

static void expected_list(const heron__op_kind *k, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  /* Optional trailing dimensions go in brackets: "N,...,KW[,stride,...]". */
  for (int d = 0; d < k->ndims_max && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s%s%s",
                            d == k->ndims ? "[" : "", d ? "," : "", k->dims[d],
                            d == k->ndims_max - 1 && d >= k->ndims ? "]" : "");
}

/* Parses one field [p, end) as dimension d.  Only decimal digits are
 * accepted: strtoll alone would take "12abc", " 12", "+12" and "0x10". */
static int parse_field(const heron__op_kind *k, int d, const char *p,
                       const char *end, int64_t *out, heron_error *err) {
  int len = (int)(end - p);
  int64_t lo = k->mins ? k->mins[d] : 1;
  const char *want = lo == 0 ? "a non-negative integer" : "a positive integer";
  if (len == 0)
    return heron_error_set(err, HERON_EINVAL,
                           "--shape: dimension %s of %s is empty", k->dims[d],
                           k->name);
  int64_t v = 0;
  for (const char *q = p; q < end; q++) {
    if (*q < '0' || *q > '9')
      return heron_error_set(err, HERON_EINVAL,
                             "--shape: dimension %s = '%.*s' is not %s",
                             k->dims[d], len, p, want);
    v = v * 10 + (*q - '0');
    if (v > HERON__DIM_MAX)
      return heron_error_set(err, HERON_EINVAL,
                             "--shape: dimension %s = '%.*s' is too large (at "
                             "most %lld)",
                             k->dims[d], len, p, HERON__DIM_MAX);
  }
  if (v < lo)
    return heron_error_set(err, HERON_EINVAL,
                           "--shape: dimension %s = '%.*s' is not %s",
                           k->dims[d], len, p, want);
  *out = v;
  return HERON_OK;
}

HERON_API int heron_parse_shape(const char *op, const char *text,
                                int64_t *shape, int cap, int *n,
                                heron_error *err) {
  const heron__op_kind *k = heron__op_kind_find(op);
  if (!k)
    return unknown_op(op, err);
  char want[128];
  expected_list(k, want, sizeof want);
  if (!text)
    text = "";
  int count = 0;
  const char *p = text;
  /* An empty string is "no dimensions", not one empty dimension, so the
   * message says which dimension is missing. */
  if (*p) {
    for (;;) {
      const char *end = strchr(p, ',');
      if (!end)
        end = p + strlen(p);
      if (count >= k->ndims_max && end == p && !*end)
        return heron_error_set(err, HERON_EINVAL,
                               "--shape: trailing ',' after the %d dimensions "
                               "of %s",
                               count, k->name);
      if (count >= k->ndims_max)
        return heron_error_set(err, HERON_EINVAL,
                               "--shape: %s takes at most %d dimensions (%s), "
                               "got more",
                               k->name, k->ndims_max, want);
      if (count >= cap)
        return heron_error_set(err, HERON_EINVAL,
                               "--shape: room for only %d dimensions", cap);
      int rc = parse_field(k, count, p, end, &shape[count], err);
      if (rc)
        return rc;
      count++;
      if (!*end)
        break;
      p = end + 1;
    }
  }
  if (count < k->ndims)
    return heron_error_set(err, HERON_EINVAL,
                           "--shape: dimension %s of %s is missing (expected "
                           "%s)",
                           k->dims[count], k->name, want);
  if (n)
    *n = count;
  return HERON_OK;
}
