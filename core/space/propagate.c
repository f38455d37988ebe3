/* core/space/propagate.c - constraint propagation to a fixpoint.
 *
 * Each constraint kind has a propagator that narrows the domains of its
 * variables (bounds reasoning, plus value filtering for set domains) and
 * fails when a domain empties.  A changed variable queues the constraints
 * watching it, and the queue runs until nothing changes.  Propagation is
 * sound but deliberately incomplete where completeness would cost time
 * (holes in huge intervals, PROD over negative numbers): the search checks
 * every constraint exactly once all variables are fixed, so an incomplete
 * propagator only costs search effort, never a wrong answer.
 */
#include <stdlib.h>

#include "core/space/space_impl.h"

#define LO(x) HS_LO(p->sp, p->s, (x))
#define HI(x) HS_HI(p->sp, p->s, (x))
#define FIXED(x) (LO(x) == HI(x))
#define TRY(e)                                                                 \
  do {                                                                         \
    if ((e) == HS_FAIL)                                                        \
      return HS_FAIL;                                                          \
  } while (0)

int heron__prop_init(hprop *p, const heron_space *sp) {
  int n = sp->nc ? sp->nc : 1;
  p->sp = sp;
  p->s = NULL;
  p->queue = malloc((size_t)n * sizeof *p->queue);
  p->inq = calloc((size_t)n, 1);
  p->qhead = p->qlen = 0;
  p->cur = -1;
  p->nchanges = 0;
  p->failc = -1;
  if (!p->queue || !p->inq) {
    heron__prop_free(p);
    return HERON_ENOMEM;
  }
  return 0;
}

void heron__prop_free(hprop *p) {
  free(p->queue);
  free(p->inq);
  p->queue = NULL;
  p->inq = NULL;
}

static void push(hprop *p, int c) {
  if (p->inq[c] || c == p->cur)
    return;
  p->inq[c] = 1;
  p->queue[(p->qhead + p->qlen++) % p->sp->nc] = c;
}

void heron__prop_touch(hprop *p, int x) {
  const hvar *hv = &p->sp->v[x];
  p->nchanges++;
  for (int i = 0; i < hv->nwatch; i++)
    push(p, hv->watch[i]);
}

void heron__prop_all(hprop *p) {
  for (int c = 0; c < p->sp->nc; c++)
    push(p, c);
}

/* Empties the queue after a failure so the context can be reused. */
static void drain(hprop *p) {
  while (p->qlen > 0) {
    p->inq[p->queue[p->qhead]] = 0;
    p->qhead = (p->qhead + 1) % p->sp->nc;
    p->qlen--;
  }
  p->cur = -1;
}

/* ---- Arithmetic helpers ----------------------------------------------- */

static int64_t clamp128(__int128 v) {
  if (v > INT64_MAX)
    return INT64_MAX;
  if (v < INT64_MIN)
    return INT64_MIN;
  return (int64_t)v;
}

/* ceil(a / b) for b > 0. */
static int64_t ceildiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a > 0) ? q + 1 : q;
}

/* ---- PROD ------------------------------------------------------------- */

/* The product of the lower (hi = 0) or upper (hi = 1) bounds of every
 * operand except `skip`, saturated; *ovf reports saturation. */
static int64_t bound_prod(hprop *p, const hcon *c, int skip, int hi, int *ovf) {
  int64_t r = 1;
  int sat = 0;
  for (int i = 0; i < c->nx; i++) {
    if (i == skip)
      continue;
    int64_t b = hi ? HI(c->xs[i]) : LO(c->xs[i]);
    if (b == 0)
      return 0; /* exact, whatever saturated before */
    r = heron__sat_mul(r, b, &sat);
  }
  *ovf |= sat;
  return r;
}

/* Bounds for z = x1 * ... * xn over non-negative domains:
 * z in [prod lo, prod hi] and xi in [ceil(z.lo / others hi),
 * floor(z.hi / others lo)].  Saturated products only loosen these
 * bounds (a saturated divisor under-estimates the true one), except the
 * lower product, whose saturation means z would exceed int64_t. */
static int apply_factor_bounds(hprop *p, const hcon *c, int i, int64_t olo,
                               int64_t ohi) {
  int x = c->xs[i];
  if (olo > 0)
    TRY(heron__dom_setmax(p, x, HI(c->z) / olo));
  if (LO(c->z) > 0) {
    if (ohi == 0)
      return HS_FAIL;
    TRY(heron__dom_setmin(p, x, ceildiv(LO(c->z), ohi)));
  }
  return 0;
}

/* The general form recomputes the products of the others per operand. */
static int prod_bounds_slow(hprop *p, const hcon *c) {
  int ovf = 0, dummy = 0;
  int64_t plo = bound_prod(p, c, -1, 0, &ovf);
  if (ovf)
    return HS_FAIL;
  int64_t phi = bound_prod(p, c, -1, 1, &dummy);
  TRY(heron__dom_setmin(p, c->z, plo));
  TRY(heron__dom_setmax(p, c->z, phi));
  for (int i = 0; i < c->nx; i++) {
    int o = 0;
    TRY(apply_factor_bounds(p, c, i, bound_prod(p, c, i, 0, &o),
                            bound_prod(p, c, i, 1, &o)));
  }
  return 0;
}

/* Operands beyond this count take the slow path. */
#define HS_PROD_FAST 16

/* The same bounds in linear time: prefix products of the bounds, and a
 * running suffix product, give every "product of the others" without
 * division.  Bounds read at the start stay valid (if loose) while the
 * loop narrows operands; the caller re-runs the constraint until stable. */
static int prod_bounds(hprop *p, const hcon *c) {
  int n = c->nx;
  if (n > HS_PROD_FAST)
    return prod_bounds_slow(p, c);
  int64_t lo[HS_PROD_FAST], hi[HS_PROD_FAST];
  int64_t pl[HS_PROD_FAST + 1], ph[HS_PROD_FAST + 1];
  int ovf = 0, dummy = 0;
  pl[0] = ph[0] = 1;
  for (int i = 0; i < n; i++) {
    lo[i] = LO(c->xs[i]);
    hi[i] = HI(c->xs[i]);
    pl[i + 1] = heron__sat_mul(pl[i], lo[i], &ovf);
    ph[i + 1] = heron__sat_mul(ph[i], hi[i], &dummy);
  }
  if (ovf && pl[n] != 0)
    return HS_FAIL; /* a zero factor after saturation still gives 0 */
  TRY(heron__dom_setmin(p, c->z, pl[n]));
  TRY(heron__dom_setmax(p, c->z, ph[n]));
  int64_t sl = 1, sh = 1;
  for (int i = n - 1; i >= 0; i--) {
    int o = 0;
    TRY(apply_factor_bounds(p, c, i, heron__sat_mul(pl[i], sl, &o),
                            heron__sat_mul(ph[i], sh, &o)));
    sl = heron__sat_mul(sl, lo[i], &o);
    sh = heron__sat_mul(sh, hi[i], &o);
  }
  return 0;
}

typedef struct divctx {
  hprop *p;
  int64_t r; /* what the unfixed operands must multiply to */
  int other; /* with two unfixed operands: the other one, else -1 */
} divctx;

/* A value may stay when it divides the remaining product and, with two
 * operands left, the cofactor is in the other operand's domain. */
static int keep_divisor(int64_t v, const void *ctx) {
  const divctx *d = ctx;
  if (v <= 0 || d->r % v != 0)
    return 0;
  return d->other < 0 || heron__dom_has(d->p->sp, d->p->s, d->other, d->r / v);
}

static int keep_multiple(int64_t v, const void *ctx) {
  const divctx *d = ctx;
  return v % d->r == 0;
}

/* Divisibility reasoning on non-negative products: once z is fixed to
 * Z > 0, the unfixed operands multiply to R = Z / (product of the fixed
 * ones); each must divide R, and with two left each value needs its
 * cofactor in the other's domain, which is exact (arc consistent) for the
 * last two factors of a split.  Conversely every value of z is a multiple
 * of the fixed operands' product. */
static int prod_divisibility(hprop *p, const hcon *c) {
  int unfixed[2], nun = 0;
  int64_t fixed = 1;
  for (int i = 0; i < c->nx; i++) {
    int x = c->xs[i];
    if (FIXED(x)) {
      if (LO(x) == 0)
        return 0;
      /* Past int64_t only a zero operand could still save the product,
       * and a fixed z > 0 has already forced every operand to >= 1. */
      if (__builtin_mul_overflow(fixed, LO(x), &fixed))
        return (FIXED(c->z) && LO(c->z) > 0) ? HS_FAIL : 0;
    } else if (nun < 2) {
      unfixed[nun++] = x;
    } else {
      nun = 3;
    }
  }
  if (!FIXED(c->z)) {
    if (fixed > 1 && p->sp->v[c->z].vals) {
      divctx d = {p, fixed, -1};
      TRY(heron__dom_filter(p, c->z, keep_multiple, &d));
    }
    return 0;
  }
  int64_t zv = LO(c->z);
  if (zv <= 0)
    return 0;
  if (zv % fixed != 0)
    return HS_FAIL;
  divctx d = {p, zv / fixed, -1};
  if (nun == 0)
    return d.r == 1 ? 0 : HS_FAIL;
  if (nun == 1)
    return heron__dom_fix(p, unfixed[0], d.r);
  if (nun == 2) {
    d.other = unfixed[1];
    TRY(heron__dom_filter(p, unfixed[0], keep_divisor, &d));
    d.other = unfixed[0];
    return heron__dom_filter(p, unfixed[1], keep_divisor, &d);
  }
  for (int i = 0; i < c->nx; i++)
    if (!FIXED(c->xs[i]) && p->sp->v[c->xs[i]].vals)
      TRY(heron__dom_filter(p, c->xs[i], keep_divisor, &d));
  return 0;
}

/* Products that may involve negative numbers get only the exact cases:
 * all operands fixed fixes z, and z plus all but one operand fixed fixes
 * the last one.  The rules never build such products; this keeps the
 * solver correct if someone does. */
static int prod_general(hprop *p, const hcon *c) {
  int last = -1, nun = 0;
  int64_t prod = 1;
  int ovf = 0, zero = 0;
  for (int i = 0; i < c->nx; i++) {
    int x = c->xs[i];
    if (!FIXED(x)) {
      last = x;
      nun++;
    } else if (LO(x) == 0) {
      zero = 1;
    } else if (__builtin_mul_overflow(prod, LO(x), &prod)) {
      ovf = 1;
    }
  }
  if (zero)
    prod = 0, ovf = 0;
  if (nun == 0)
    return ovf ? HS_FAIL : heron__dom_fix(p, c->z, prod);
  if (nun == 1 && FIXED(c->z) && !ovf && prod != 0) {
    if (LO(c->z) % prod != 0)
      return HS_FAIL;
    return heron__dom_fix(p, last, LO(c->z) / prod);
  }
  return 0;
}

static int prop_prod(hprop *p, const hcon *c) {
  if (!c->nonneg)
    return prod_general(p, c);
  TRY(prod_bounds(p, c));
  return prod_divisibility(p, c);
}

/* ---- SUM -------------------------------------------------------------- */

static int prop_sum(hprop *p, const hcon *c) {
  __int128 slo = 0, shi = 0;
  for (int i = 0; i < c->nx; i++) {
    slo += LO(c->xs[i]);
    shi += HI(c->xs[i]);
  }
  if (slo > HI(c->z) || shi < LO(c->z))
    return HS_FAIL;
  TRY(heron__dom_setmin(p, c->z, clamp128(slo)));
  TRY(heron__dom_setmax(p, c->z, clamp128(shi)));
  for (int i = 0; i < c->nx; i++) {
    int x = c->xs[i];
    __int128 olo = slo - LO(x), ohi = shi - HI(x);
    TRY(heron__dom_setmin(p, x, clamp128((__int128)LO(c->z) - ohi)));
    TRY(heron__dom_setmax(p, x, clamp128((__int128)HI(c->z) - olo)));
  }
  return 0;
}

/* ---- EQ, NE, LE, LT --------------------------------------------------- */

typedef struct memctx {
  hprop *p;
  int other;
} memctx;

static int keep_member(int64_t v, const void *ctx) {
  const memctx *m = ctx;
  return heron__dom_has(m->p->sp, m->p->s, m->other, v);
}

/* a == b: shared bounds, and each set domain keeps only values the other
 * variable still has. */
static int prop_equal(hprop *p, int a, int b) {
  if (FIXED(b))
    return heron__dom_fix(p, a, LO(b));
  if (FIXED(a))
    return heron__dom_fix(p, b, LO(a));
  TRY(heron__dom_setmin(p, a, LO(b)));
  TRY(heron__dom_setmax(p, a, HI(b)));
  TRY(heron__dom_setmin(p, b, LO(a)));
  TRY(heron__dom_setmax(p, b, HI(a)));
  memctx ma = {p, b}, mb = {p, a};
  if (p->sp->v[a].vals)
    TRY(heron__dom_filter(p, a, keep_member, &ma));
  if (p->sp->v[b].vals)
    TRY(heron__dom_filter(p, b, keep_member, &mb));
  return 0;
}

static int prop_ne(hprop *p, int a, int b) {
  if (FIXED(a))
    TRY(heron__dom_remove(p, b, LO(a)));
  if (FIXED(b))
    TRY(heron__dom_remove(p, a, LO(b)));
  return 0;
}

/* a <= b - gap, with gap 0 (LE) or 1 (LT). */
static int prop_le(hprop *p, int a, int b, int gap) {
  if (gap && (HI(b) == INT64_MIN || LO(a) == INT64_MAX))
    return HS_FAIL;
  TRY(heron__dom_setmax(p, a, HI(b) - gap));
  return heron__dom_setmin(p, b, LO(a) + gap);
}

/* ---- IN --------------------------------------------------------------- */

static int keep_listed(int64_t v, const void *ctx) {
  const hcon *c = ctx;
  int i = heron__vals_lower(c->vals, c->nvals, v);
  return i < c->nvals && c->vals[i] == v;
}

/* z in vals: bounds move to the nearest listed values, sets are filtered. */
static int prop_in(hprop *p, const hcon *c) {
  int i = heron__vals_lower(c->vals, c->nvals, LO(c->z));
  if (i == c->nvals)
    return HS_FAIL;
  TRY(heron__dom_setmin(p, c->z, c->vals[i]));
  int j = heron__vals_lower(c->vals, c->nvals, HI(c->z));
  if (j == c->nvals || c->vals[j] != HI(c->z))
    j--;
  if (j < 0)
    return HS_FAIL;
  TRY(heron__dom_setmax(p, c->z, c->vals[j]));
  return heron__dom_filter(p, c->z, keep_listed, c);
}

/* ---- SELECT ----------------------------------------------------------- */

/* Whether a and b may still be equal. */
static int may_equal(hprop *p, int a, int b) {
  if (HI(a) < LO(b) || HI(b) < LO(a))
    return 0;
  if (FIXED(a))
    return heron__dom_has(p->sp, p->s, b, LO(a));
  if (FIXED(b))
    return heron__dom_has(p->sp, p->s, a, LO(b));
  return 1;
}

/* z = xs[1 + s]: the selector is confined to valid positions whose
 * variable may still equal z; z is confined to the union of their bounds;
 * once s is fixed the constraint is an equality. */
static int prop_select(hprop *p, const hcon *c) {
  int s = c->xs[0], n = c->nx - 1;
  TRY(heron__dom_setmin(p, s, 0));
  TRY(heron__dom_setmax(p, s, n - 1));
  if (FIXED(s))
    return prop_equal(p, c->z, c->xs[1 + LO(s)]);
  int64_t zlo = INT64_MAX, zhi = INT64_MIN;
  for (int64_t k = LO(s); k <= HI(s); k++) {
    if (!heron__dom_has(p->sp, p->s, s, k))
      continue;
    int x = c->xs[1 + k];
    if (!may_equal(p, c->z, x)) {
      TRY(heron__dom_remove(p, s, k));
      continue;
    }
    zlo = LO(x) < zlo ? LO(x) : zlo;
    zhi = HI(x) > zhi ? HI(x) : zhi;
  }
  if (FIXED(s))
    return prop_equal(p, c->z, c->xs[1 + LO(s)]);
  if (zlo > zhi)
    return HS_FAIL;
  TRY(heron__dom_setmin(p, c->z, zlo));
  return heron__dom_setmax(p, c->z, zhi);
}

/* ---- Expressions (T1 restrictions) ------------------------------------ */

/* Forward checking: an expression is tested once all but one of its
 * variables are fixed, and then removes from the last one every value that
 * makes it false; with all fixed it holds or fails.  Arbitrary expressions
 * admit no cheaper sound bound, and T1 restrictions are small (two to five
 * parameters), so this prunes where it matters: the sampler never assigns
 * the last parameter of a restriction a value that breaks it. */
typedef struct expr_ctx {
  const heron_space *sp;
  const hcon *c;
  heron__value *vals; /* every name's value; the free one rewritten */
  int slot, x;        /* the free variable and its name's index */
} expr_ctx;

static int keep_expr(int64_t v, const void *ctx) {
  const expr_ctx *e = ctx;
  e->vals[e->slot] = hs_value(e->sp, e->x, v);
  return heron__expr_holds(e->c->expr, e->vals);
}

static int prop_expr(hprop *p, const hcon *c) {
  int nfree = 0, fx = -1;
  for (int i = 0; i < c->nx && nfree < 2; i++)
    if (!FIXED(c->xs[i])) {
      nfree++;
      fx = c->xs[i];
    }
  if (nfree > 1)
    return 0;
  heron__value stack[64];
  heron__value *vals = c->nnames <= 64
                           ? stack
                           : malloc((size_t)c->nnames * sizeof *vals);
  if (!vals)
    return 0; /* sound: the search checks complete configs exactly */
  int slot = -1;
  for (int i = 0; i < c->nnames; i++) {
    int x = c->name_var[i];
    vals[i] = (heron__value){.kind = HERON__VAL_INT};
    if (x == fx)
      slot = i;
    else if (x >= 0)
      vals[i] = hs_value(p->sp, x, LO(x));
  }
  int rc;
  if (nfree == 0)
    rc = heron__expr_holds(c->expr, vals) ? 0 : HS_FAIL;
  else {
    expr_ctx e = {.sp = p->sp, .c = c, .vals = vals, .slot = slot, .x = fx};
    rc = heron__dom_filter(p, fx, keep_expr, &e);
  }
  if (vals != stack)
    free(vals);
  return rc;
}

/* ---- Conditions ------------------------------------------------------- */

/* Whether the constraint is certainly violated whatever the unfixed
 * variables become, judged from bounds (and membership for fixed ones).
 * Used while its condition is undecided: the only deduction allowed then
 * is that the condition cannot be 1. */
static int surely_violated(hprop *p, const hcon *c) {
  int z = c->z, x = c->nx > 0 ? c->xs[0] : -1;
  switch (c->kind) {
  case HERON_C_PROD: {
    if (!c->nonneg)
      return 0;
    int ovf = 0, dummy = 0;
    int64_t plo = bound_prod(p, c, -1, 0, &ovf);
    int64_t phi = bound_prod(p, c, -1, 1, &dummy);
    return ovf || plo > HI(z) || (!dummy && phi < LO(z));
  }
  case HERON_C_SUM: {
    __int128 slo = 0, shi = 0;
    for (int i = 0; i < c->nx; i++) {
      slo += LO(c->xs[i]);
      shi += HI(c->xs[i]);
    }
    return slo > HI(z) || shi < LO(z);
  }
  case HERON_C_EQ:
    return !may_equal(p, z, x);
  case HERON_C_NE:
    return FIXED(z) && FIXED(x) && LO(z) == LO(x);
  case HERON_C_LE:
    return LO(z) > HI(x);
  case HERON_C_LT:
    return LO(z) >= HI(x);
  case HERON_C_IN: {
    int i = heron__vals_lower(c->vals, c->nvals, LO(z));
    for (; i < c->nvals && c->vals[i] <= HI(z); i++)
      if (heron__dom_has(p->sp, p->s, z, c->vals[i]))
        return 0;
    return 1;
  }
  case HERON_C_SELECT: {
    int s = c->xs[0];
    for (int64_t k = LO(s) < 0 ? 0 : LO(s); k <= HI(s) && k < c->nx - 1; k++)
      if (heron__dom_has(p->sp, p->s, s, k) && may_equal(p, z, c->xs[1 + k]))
        return 0;
    return 1;
  }
  }
  return 0;
}

static int prop_active(hprop *p, const hcon *c) {
  switch (c->kind) {
  case HERON_C_PROD:
    return prop_prod(p, c);
  case HERON_C_SUM:
    return prop_sum(p, c);
  case HERON_C_EQ:
    return prop_equal(p, c->z, c->xs[0]);
  case HERON_C_NE:
    return prop_ne(p, c->z, c->xs[0]);
  case HERON_C_LE:
    return prop_le(p, c->z, c->xs[0], 0);
  case HERON_C_LT:
    return prop_le(p, c->z, c->xs[0], 1);
  case HERON_C_IN:
    return prop_in(p, c);
  case HERON_C_SELECT:
    return prop_select(p, c);
  case HERON_C_EXPR:
    return prop_expr(p, c);
  }
  return 0;
}

/* Runs constraint ci once, honouring its condition: enforced when the
 * condition is fixed to 1, ignored when it cannot be 1, and otherwise only
 * used to rule the condition out when the constraint cannot hold. */
static int prop_one(hprop *p, int ci) {
  const hcon *c = &p->sp->c[ci];
  if (c->cond >= 0) {
    int k = c->cond;
    if (!heron__dom_has(p->sp, p->s, k, 1))
      return 0;
    if (!FIXED(k))
      return surely_violated(p, c) ? heron__dom_remove(p, k, 1) : 0;
  }
  return prop_active(p, c);
}

/* A constraint is re-run in place while it keeps narrowing its own
 * variables (it is not re-queued by its own changes); after this many
 * rounds it goes to the back of the queue so that cycles of bounds
 * updates on huge intervals still let other constraints run. */
#define HS_SELF_ROUNDS 4

int heron__prop_run(hprop *p) {
  const heron_space *sp = p->sp;
  /* A safety net against slow bounds convergence on huge intervals: past
   * this many steps propagation stops early, which is sound because the
   * search checks complete configs exactly. */
  long budget = 1000 + 64L * sp->nc;
  while (p->qlen > 0 && budget-- > 0) {
    int c = p->queue[p->qhead];
    p->qhead = (p->qhead + 1) % sp->nc;
    p->qlen--;
    p->inq[c] = 0;
    p->cur = c;
    for (int round = 0;; round++) {
      long before = p->nchanges;
      if (prop_one(p, c) == HS_FAIL) {
        p->failc = c;
        drain(p);
        return HS_FAIL;
      }
      if (p->nchanges == before)
        break;
      if (round + 1 == HS_SELF_ROUNDS) {
        p->cur = -1;
        push(p, c);
        break;
      }
    }
    p->cur = -1;
  }
  drain(p);
  return 0;
}
