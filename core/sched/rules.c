/* core/sched/rules.c - the rule context shared by the targets' rules. */
#include "core/sched/rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/op/op.h"
#include "core/space/builder.h"

int64_t heron__mul_sat(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  if (a > HERON__BOUND_MAX / b)
    return HERON__BOUND_MAX;
  return a * b;
}

static int64_t add_sat(int64_t a, int64_t b) {
  return a + b > HERON__BOUND_MAX ? HERON__BOUND_MAX : a + b;
}

/* Records a failed builder call once and turns later calls into no-ops. */
static int check(heron__rules *r, int v, const char *what) {
  if (v < 0 && r->rc == 0) {
    r->rc = v;
    heron_error_set(r->err, v, "%s: cannot create %s: %s", r->who, what,
                    heron_strerror(v));
  }
  return v;
}

static void set_ub(heron__rules *r, int v, int64_t ub) {
  if (v >= 0 && v < HERON__RULES_MAX_VARS)
    r->ub[v] = ub;
}

int64_t heron__r_ub(const heron__rules *r, int v) {
  if (v >= 0 && v < HERON__RULES_MAX_VARS)
    return r->ub[v];
  return HERON__BOUND_MAX;
}

int heron__r_const(heron__rules *r, int64_t value) {
  if (r->rc)
    return -1;
  int v = check(r, heron__space_const(r->sp, value), "a constant");
  set_ub(r, v, value);
  return v;
}

int heron__r_set(heron__rules *r, const char *name, int is_knob,
                 const int64_t *vals, int n) {
  if (r->rc)
    return -1;
  int v = check(r, heron__space_var_set(r->sp, name, is_knob, vals, n), name);
  int64_t ub = 0;
  for (int i = 0; i < n; i++)
    ub = vals[i] > ub ? vals[i] : ub;
  set_ub(r, v, ub);
  return v;
}

int heron__r_range(heron__rules *r, const char *name, int is_knob, int64_t lo,
                   int64_t hi) {
  if (r->rc)
    return -1;
  int v = check(r, heron__space_var(r->sp, name, is_knob, lo, hi), name);
  set_ub(r, v, hi);
  return v;
}

int heron__r_tile_sizes(heron__rules *r, const char *name, int64_t n) {
  if (r->rc)
    return -1;
  /* Divisors come in pairs (d, n / d) below sqrt(n); 1 << 14 values is far
   * more than any extent has. */
  enum { CAP = 1 << 14 };
  int64_t *vals = calloc(CAP, sizeof *vals);
  if (!vals) {
    check(r, HERON_ENOMEM, name);
    return -1;
  }
  int k = 0;
  for (int64_t d = 1; d * d <= n && k < CAP - 2; d++)
    if (n % d == 0) {
      vals[k++] = d;
      vals[k++] = n / d;
    }
  for (int64_t p = 1; p <= n && k < CAP - 2; p *= 2) {
    vals[k++] = p;
    if (3 * p <= n)
      vals[k++] = 3 * p;
  }
  int v = heron__r_set(r, name, 1, vals, k);
  free(vals);
  return v;
}

int heron__r_ceil_split(heron__rules *r, const char *axis, int64_t n,
                        const int *lens, int nlens) {
  if (r->rc || nlens < 1)
    return -1;
  char name[64], what[64];
  snprintf(what, sizeof what, "the split of %s", axis);
  snprintf(name, sizeof name, "%s.cover", axis);
  int cover = heron__r_prod(r, name, lens, nlens);
  snprintf(name, sizeof name, "%s.tile", axis);
  int tile = nlens == 2 ? lens[1] : heron__r_prod(r, name, lens + 1, nlens - 1);
  snprintf(name, sizeof name, "%s.cover_lt", axis);
  int limit = heron__r_sum(r, name, (int[]){heron__r_const(r, n), tile}, 2);
  heron__r_post(r, HERON_C_LE, heron__r_const(r, n), &cover, 1, NULL, 0, what);
  heron__r_post(r, HERON_C_LT, cover, &limit, 1, NULL, 0, what);
  return cover;
}

void heron__r_post(heron__rules *r, int kind, int z, const int *xs, int nx,
                   const int64_t *vals, int nvals, const char *what) {
  if (r->rc)
    return;
  check(r, heron__space_post(r->sp, kind, z, xs, nx, -1, vals, nvals), what);
}

int heron__r_prod(heron__rules *r, const char *name, const int *xs, int n) {
  if (r->rc)
    return -1;
  if (n == 0)
    return heron__r_const(r, 1);
  int64_t ub = 1;
  for (int i = 0; i < n; i++)
    ub = heron__mul_sat(ub, heron__r_ub(r, xs[i]));
  int z = heron__r_range(r, name, 0, 1, ub);
  heron__r_post(r, HERON_C_PROD, z, xs, n, NULL, 0, name);
  return z;
}

int heron__r_sum(heron__rules *r, const char *name, const int *xs, int n) {
  if (r->rc)
    return -1;
  int64_t ub = 0;
  for (int i = 0; i < n; i++)
    ub = add_sat(ub, heron__r_ub(r, xs[i]));
  /* From 0: a sum of terms that may all be 0 (the pack sizes when no input
   * is packed) is 0. */
  int z = heron__r_range(r, name, 0, 0, ub < 1 ? 1 : ub);
  heron__r_post(r, HERON_C_SUM, z, xs, n, NULL, 0, name);
  return z;
}

void heron__r_le(heron__rules *r, int x, int64_t limit, const char *what) {
  heron__r_post(r, HERON_C_LE, x, (int[]){heron__r_const(r, limit)}, 1, NULL, 0,
                what);
}

void heron__r_eq(heron__rules *r, int x, int y, const char *what) {
  heron__r_post(r, HERON_C_EQ, x, (int[]){y}, 1, NULL, 0, what);
}

int heron__r_padded_work(heron__rules *r, int pct, int64_t real,
                         const int *covers, int n) {
  if (pct <= 0)
    pct = 125;
  /* real * pct / 100 without overflow: a product that large has no limit
   * worth posting, so the clamp stands for it. */
  int64_t limit =
      real >= HERON__BOUND_MAX / pct ? HERON__BOUND_MAX : real * pct / 100;
  int z = heron__r_prod(r, "padded", covers, n);
  heron__r_le(r, z, limit < real ? real : limit, "padded work");
  return z;
}

void heron__rule_note_add(heron__rule_note *notes, int *n, const char *name,
                          const char *fmt, ...) {
  if (*n >= HERON__MAX_RULES)
    return;
  heron__rule_note *r = &notes[(*n)++];
  snprintf(r->name, sizeof r->name, "%s", name);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->note, sizeof r->note, fmt, ap);
  va_end(ap);
}

void heron__axis_list(const struct heron__op *op, int kind, char *buf,
                      size_t cap) {
  buf[0] = '\0';
  size_t len = 0;
  for (int a = 0; a < op->naxes; a++) {
    if (op->axes[a].kind != kind)
      continue;
    int n = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "",
                     op->axes[a].name);
    if (n < 0 || (size_t)n >= cap - len)
      break;
    len += (size_t)n;
  }
  if (!len)
    snprintf(buf, cap, "none");
}

void heron__rule_notes_write(const heron__rule_note *notes, int n,
                             heron__buf *out) {
  heron__buf_puts(out, "rules:\n");
  for (int i = 0; i < n; i++)
    heron__buf_printf(out, "  %s: %s\n", notes[i].name, notes[i].note);
}
