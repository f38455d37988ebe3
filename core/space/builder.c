/* core/space/builder.c - creating variables and constraints, and freezing
 * a space with heron__space_finish. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/space/space_impl.h"
#include "core/util/util.h"

heron_space *heron__space_new(void) { return calloc(1, sizeof(heron_space)); }

void heron__space_free(heron_space *sp) {
  if (!sp)
    return;
  for (int i = 0; i < sp->nv; i++) {
    hvar *hv = &sp->v[i];
    free(hv->name);
    if (hv->vals != hv->uvals)
      free(hv->vals);
    free(hv->uvals);
    free(hv->watch);
    for (int k = 0; hv->vtab && k < hv->nvtab; k++)
      if (hv->vtab[k].kind == HERON__VAL_STR)
        free((char *)hv->vtab[k].s);
    free(hv->vtab);
  }
  for (int i = 0; i < sp->nc; i++) {
    free(sp->c[i].xs);
    free(sp->c[i].vals);
    heron__expr_free(sp->c[i].expr);
    free(sp->c[i].text);
    free(sp->c[i].name_var);
  }
  free(sp->v);
  free(sp->c);
  free(sp->knobs);
  free(sp->root);
  free(sp->order);
  heron__uniform_free(sp->unif);
  free(sp);
}

/* Grows an array to hold at least `need` elements of `size` bytes. */
static int grow(void **arr, int *cap, int need, size_t size) {
  if (need <= *cap)
    return 0;
  int ncap = *cap ? *cap * 2 : 16;
  while (ncap < need)
    ncap *= 2;
  void *p = realloc(*arr, (size_t)ncap * size);
  if (!p)
    return HERON_ENOMEM;
  *arr = p;
  *cap = ncap;
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Sorts vals[0..n) and drops duplicates; returns the new length. */
static int sort_unique(int64_t *vals, int n) {
  if (n == 0)
    return 0;
  qsort(vals, (size_t)n, sizeof *vals, cmp_i64);
  int m = 1;
  for (int i = 1; i < n; i++)
    if (vals[i] != vals[m - 1])
      vals[m++] = vals[i];
  return m;
}

static int name_taken(const heron_space *sp, const char *name) {
  for (int i = 0; i < sp->nv; i++)
    if (!sp->v[i].is_const && strcmp(sp->v[i].name, name) == 0)
      return 1;
  return 0;
}

/* Appends a variable; the caller fills in the domain.  Constants skip the
 * uniqueness check because they are named by their value and found by it. */
static int add_var(heron_space *sp, const char *name, int is_knob,
                   int is_const) {
  if (!sp || !name || sp->finished || (!is_const && name_taken(sp, name)))
    return HERON_EINVAL;
  if (grow((void **)&sp->v, &sp->vcap, sp->nv + 1, sizeof(hvar)))
    return HERON_ENOMEM;
  hvar *hv = &sp->v[sp->nv];
  memset(hv, 0, sizeof *hv);
  hv->name = strdup(name);
  if (!hv->name)
    return HERON_ENOMEM;
  if (is_knob) {
    if (grow((void **)&sp->knobs, &sp->kcap, sp->nknobs + 1, sizeof(int))) {
      free(hv->name);
      return HERON_ENOMEM;
    }
    sp->knobs[sp->nknobs++] = sp->nv;
  }
  hv->is_knob = is_knob != 0;
  hv->is_const = is_const;
  return sp->nv++;
}

int heron__space_var(heron_space *sp, const char *name, int is_knob, int64_t lo,
                     int64_t hi) {
  if (lo > hi)
    return HERON_EINVAL;
  int x = add_var(sp, name, is_knob, 0);
  if (x < 0)
    return x;
  sp->v[x].lo = lo;
  sp->v[x].hi = hi;
  return x;
}

int heron__space_var_set(heron_space *sp, const char *name, int is_knob,
                         const int64_t *vals, int n) {
  if (n <= 0 || !vals)
    return HERON_EINVAL;
  int64_t *copy = malloc((size_t)n * sizeof *copy);
  if (!copy)
    return HERON_ENOMEM;
  memcpy(copy, vals, (size_t)n * sizeof *copy);
  n = sort_unique(copy, n);
  int x = add_var(sp, name, is_knob, 0);
  if (x < 0) {
    free(copy);
    return x;
  }
  hvar *hv = &sp->v[x];
  hv->user_set = 1;
  hv->uvals = hv->vals = copy;
  hv->nuvals = hv->nvals = n;
  hv->lo = copy[0];
  hv->hi = copy[n - 1];
  return x;
}

int heron__space_var_divisors(heron_space *sp, const char *name, int is_knob,
                              int64_t n) {
  if (n <= 0)
    return HERON_EINVAL;
  /* Divisors come in pairs (d, n/d) with d <= sqrt(n), so trial division
   * up to the square root finds them all. */
  int64_t *divs = NULL;
  int nd = 0, cap = 0;
  for (int64_t d = 1; d <= n / d; d++) {
    if (n % d)
      continue;
    if (grow((void **)&divs, &cap, nd + 2, sizeof *divs)) {
      free(divs);
      return HERON_ENOMEM;
    }
    divs[nd++] = d;
    if (d != n / d)
      divs[nd++] = n / d;
  }
  int x = heron__space_var_set(sp, name, is_knob, divs, nd);
  free(divs);
  return x;
}

int heron__space_var_absent(heron_space *sp, int x, int64_t value) {
  if (!sp || sp->finished || x < 0 || x >= sp->nv || !sp->v[x].is_knob)
    return HERON_EINVAL;
  hvar *hv = &sp->v[x];
  int in = value >= hv->lo && value <= hv->hi;
  if (hv->uvals) {
    in = 0;
    for (int i = 0; i < hv->nuvals; i++)
      in |= hv->uvals[i] == value;
  }
  if (!in)
    return HERON_EINVAL;
  hv->has_absent = 1;
  hv->absent = value;
  return HERON_OK;
}

int heron__space_absent(const heron_space *sp, int x, int64_t *value) {
  if (!sp || x < 0 || x >= sp->nv || !sp->v[x].has_absent)
    return 0;
  *value = sp->v[x].absent;
  return 1;
}

int heron__space_const(heron_space *sp, int64_t value) {
  if (!sp)
    return HERON_EINVAL;
  for (int i = 0; i < sp->nv; i++)
    if (sp->v[i].is_const && sp->v[i].lo == value)
      return i;
  char name[32];
  snprintf(name, sizeof name, "%lld", (long long)value);
  int x = add_var(sp, name, 0, 1);
  if (x < 0)
    return x;
  sp->v[x].lo = sp->v[x].hi = value;
  return x;
}

int heron__space_var_values(heron_space *sp, const char *name,
                            const heron__value *vals, int n) {
  if (!sp || n < 1 || !vals)
    return HERON_EINVAL;
  int x = heron__space_var(sp, name, 1, 0, n - 1);
  if (x < 0)
    return x;
  hvar *hv = &sp->v[x];
  hv->vtab = calloc((size_t)n, sizeof *hv->vtab);
  if (!hv->vtab)
    return HERON_ENOMEM;
  hv->nvtab = n;
  for (int k = 0; k < n; k++) {
    hv->vtab[k] = vals[k];
    if (vals[k].kind == HERON__VAL_STR &&
        !(hv->vtab[k].s = strdup(vals[k].s ? vals[k].s : "")))
      return HERON_ENOMEM;
  }
  return x;
}

int heron__space_post_expr(heron_space *sp, heron__expr *e, const int *name_var,
                           int nnames, const char *text) {
  const int *used;
  int nused = 0;
  if (e)
    heron__expr_names(e, &used, &nused);
  int ok = sp && !sp->finished && e && name_var && nnames > 0 && text;
  for (int i = 0; ok && i < nused; i++)
    ok = used[i] < nnames && name_var[used[i]] >= 0 &&
         name_var[used[i]] < sp->nv;
  if (!ok || grow((void **)&sp->c, &sp->ccap, sp->nc + 1, sizeof(hcon))) {
    heron__expr_free(e);
    return ok ? HERON_ENOMEM : HERON_EINVAL;
  }
  hcon *c = &sp->c[sp->nc];
  memset(c, 0, sizeof *c);
  c->kind = HERON_C_EXPR;
  c->cond = -1;
  c->expr = e;
  c->nnames = nnames;
  c->nx = nused;
  c->xs = malloc((size_t)(nused > 0 ? nused : 1) * sizeof *c->xs);
  c->name_var = malloc((size_t)nnames * sizeof *c->name_var);
  c->text = strdup(text);
  if (!c->xs || !c->name_var || !c->text) {
    heron__expr_free(e);
    free(c->xs);
    free(c->name_var);
    free(c->text);
    return HERON_ENOMEM;
  }
  memcpy(c->name_var, name_var, (size_t)nnames * sizeof *name_var);
  for (int i = 0; i < nused; i++)
    c->xs[i] = name_var[used[i]];
  /* z is only watched and checked for being set: the first operand, or
   * for an expression over no parameter (a constant), the first variable. */
  c->z = nused > 0 ? c->xs[0] : 0;
  return sp->nc++;
}

/* The operand count each kind accepts. */
static int arity_ok(int kind, int nx) {
  switch (kind) {
  case HERON_C_PROD:
  case HERON_C_SUM:
    return nx >= 1;
  case HERON_C_EQ:
  case HERON_C_NE:
  case HERON_C_LE:
  case HERON_C_LT:
    return nx == 1;
  case HERON_C_IN:
    return nx == 0;
  case HERON_C_SELECT:
    return nx >= 2;
  case HERON_C_EXPR: /* posted by heron__space_post_expr only */
  default:
    return 0;
  }
}

int heron__space_post(heron_space *sp, int kind, int z, const int *xs, int nx,
                      int cond, const int64_t *vals, int nvals) {
  if (!sp || sp->finished || !arity_ok(kind, nx) || z < 0 || z >= sp->nv ||
      cond < -1 || cond >= sp->nv || (nx > 0 && !xs) || nvals < 0 ||
      (nvals > 0 && !vals))
    return HERON_EINVAL;
  for (int i = 0; i < nx; i++)
    if (xs[i] < 0 || xs[i] >= sp->nv)
      return HERON_EINVAL;
  if (grow((void **)&sp->c, &sp->ccap, sp->nc + 1, sizeof(hcon)))
    return HERON_ENOMEM;
  hcon *c = &sp->c[sp->nc];
  memset(c, 0, sizeof *c);
  c->kind = kind;
  c->z = z;
  c->cond = cond;
  c->nx = nx;
  if (nx > 0) {
    c->xs = malloc((size_t)nx * sizeof *c->xs);
    if (!c->xs)
      return HERON_ENOMEM;
    memcpy(c->xs, xs, (size_t)nx * sizeof *xs);
  }
  if (kind == HERON_C_IN && nvals > 0) {
    c->vals = malloc((size_t)nvals * sizeof *c->vals);
    if (!c->vals) {
      free(c->xs);
      return HERON_ENOMEM;
    }
    memcpy(c->vals, vals, (size_t)nvals * sizeof *vals);
    c->nvals = sort_unique(c->vals, nvals);
  }
  return sp->nc++;
}

/* ---- Freezing --------------------------------------------------------- */

static int add_watch(hvar *hv, int c) {
  if (hv->nwatch > 0 && hv->watch[hv->nwatch - 1] == c)
    return 0; /* a variable used twice in one constraint watches it once */
  int *w = realloc(hv->watch, (size_t)(hv->nwatch + 1) * sizeof *w);
  if (!w)
    return HERON_ENOMEM;
  w[hv->nwatch++] = c;
  hv->watch = w;
  return 0;
}

static int build_watches(heron_space *sp) {
  for (int c = 0; c < sp->nc; c++) {
    const hcon *hc = &sp->c[c];
    if (add_watch(&sp->v[hc->z], c))
      return HERON_ENOMEM;
    for (int i = 0; i < hc->nx; i++)
      if (add_watch(&sp->v[hc->xs[i]], c))
        return HERON_ENOMEM;
    if (hc->cond >= 0 && add_watch(&sp->v[hc->cond], c))
      return HERON_ENOMEM;
  }
  return 0;
}

/* An unconditional IN on an interval variable turns the variable's
 * internal domain into the listed values: the search then picks among the
 * candidates directly instead of drawing from the interval and failing. */
static int apply_in_domains(heron_space *sp) {
  for (int c = 0; c < sp->nc; c++) {
    const hcon *hc = &sp->c[c];
    hvar *hv = &sp->v[hc->z];
    if (hc->kind != HERON_C_IN || hc->cond >= 0 || hv->vals || hv->is_const)
      continue;
    int lo = heron__vals_lower(hc->vals, hc->nvals, hv->lo);
    int hi = heron__vals_lower(hc->vals, hc->nvals, hv->hi);
    if (hi < hc->nvals && hc->vals[hi] == hv->hi)
      hi++;
    if (hi <= lo)
      continue; /* empty: root propagation reports it */
    hv->vals = malloc((size_t)(hi - lo) * sizeof *hv->vals);
    if (!hv->vals)
      return HERON_ENOMEM;
    memcpy(hv->vals, hc->vals + lo, (size_t)(hi - lo) * sizeof *hv->vals);
    hv->nvals = hi - lo;
  }
  return 0;
}

/* Small intervals become internal value sets (see HS_KNOB_SET_MAX). */
static int expand_small_intervals(heron_space *sp) {
  for (int x = 0; x < sp->nv; x++) {
    hvar *hv = &sp->v[x];
    if (hv->vals || hv->is_const)
      continue;
    uint64_t size = (uint64_t)hv->hi - (uint64_t)hv->lo + 1;
    uint64_t max = hv->is_knob ? HS_KNOB_SET_MAX : HS_AUX_SET_MAX;
    if (size == 0 || size > max)
      continue;
    hv->vals = malloc(size * sizeof *hv->vals);
    if (!hv->vals)
      return HERON_ENOMEM;
    for (uint64_t i = 0; i < size; i++)
      hv->vals[i] = hv->lo + (int64_t)i;
    hv->nvals = (int)size;
  }
  return 0;
}

/* Lays out the state and fills the root state with the declared domains. */
static int build_root(heron_space *sp) {
  int words = 0;
  for (int x = 0; x < sp->nv; x++) {
    hvar *hv = &sp->v[x];
    hv->woff = words;
    hv->nwords = hv->vals ? (hv->nvals + 63) / 64 : 0;
    words += hv->nwords;
  }
  sp->nwords = words;
  sp->slen = 2 * (size_t)sp->nv + (size_t)words;
  sp->root = calloc(sp->slen ? sp->slen : 1, sizeof *sp->root);
  if (!sp->root)
    return HERON_ENOMEM;
  for (int x = 0; x < sp->nv; x++) {
    hvar *hv = &sp->v[x];
    if (hv->vals) {
      uint64_t *b = hs_bits(sp, sp->root, x);
      for (int i = 0; i < hv->nvals; i++)
        b[i / 64] |= 1ull << (i % 64);
      HS_LO(sp, sp->root, x) = hv->vals[0];
      HS_HI(sp, sp->root, x) = hv->vals[hv->nvals - 1];
    } else {
      HS_LO(sp, sp->root, x) = hv->lo;
      HS_HI(sp, sp->root, x) = hv->hi;
    }
  }
  return 0;
}

static void mark_nonneg(heron_space *sp) {
  for (int c = 0; c < sp->nc; c++) {
    hcon *hc = &sp->c[c];
    int ok = sp->v[hc->z].lo >= 0;
    for (int i = 0; i < hc->nx; i++)
      ok = ok && sp->v[hc->xs[i]].lo >= 0;
    hc->nonneg = ok;
  }
}

/* Decisions go knobs first, in the order the rules created them, so the
 * knob values are what the random draws shape; auxiliary variables come
 * after and are normally already fixed by propagation. */
static int build_order(heron_space *sp) {
  sp->order = malloc((size_t)(sp->nv > 0 ? sp->nv : 1) * sizeof *sp->order);
  if (!sp->order)
    return HERON_ENOMEM;
  int n = 0;
  for (int k = 0; k < sp->nknobs; k++)
    sp->order[n++] = sp->knobs[k];
  for (int x = 0; x < sp->nv; x++)
    if (!sp->v[x].is_knob && !sp->v[x].is_const)
      sp->order[n++] = x;
  sp->norder = n;
  return 0;
}

/* Features take log2(1 + value) where the root domain spans more than two
 * orders of magnitude, so that tile sizes 1..1024 do not dwarf flags. */
static void mark_log_features(heron_space *sp) {
  for (int x = 0; x < sp->nv; x++) {
    int64_t lo = HS_LO(sp, sp->root, x), hi = HS_HI(sp, sp->root, x);
    sp->v[x].logfeat = lo >= 0 && (double)hi > 100.0 * (lo > 1 ? lo : 1);
  }
}

int heron__space_finish(heron_space *sp, heron_error *err) {
  if (!sp || sp->finished)
    return heron_error_set(err, HERON_EINVAL, "space already finished");
  int rc;
  if ((rc = build_watches(sp)) || (rc = apply_in_domains(sp)) ||
      (rc = expand_small_intervals(sp)) || (rc = build_root(sp)) ||
      (rc = build_order(sp)))
    return heron_error_set(err, rc, "out of memory building the space");
  mark_nonneg(sp);
  hprop p;
  if (heron__prop_init(&p, sp))
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  p.s = sp->root;
  heron__prop_all(&p);
  int failed = heron__prop_run(&p) == HS_FAIL;
  int failc = p.failc;
  heron__prop_free(&p);
  sp->finished = 1;
  mark_log_features(sp);
  if (failed) {
    sp->root_failed = 1;
    sp->root_fail_con = failc;
    return heron__unsat(sp, failc, err);
  }
  return HERON_OK;
}

/* ---- Raw access and evaluation ---------------------------------------- */

int heron__space_constraint(const heron_space *sp, int c, int *kind, int *z,
                            const int **xs, int *nx, int *cond,
                            const int64_t **vals, int *nvals) {
  if (!sp || c < 0 || c >= sp->nc)
    return HERON_EINVAL;
  const hcon *hc = &sp->c[c];
  if (kind)
    *kind = hc->kind;
  if (z)
    *z = hc->z;
  if (xs)
    *xs = hc->xs;
  if (nx)
    *nx = hc->nx;
  if (cond)
    *cond = hc->cond;
  if (vals)
    *vals = hc->vals;
  if (nvals)
    *nvals = hc->nvals;
  return HERON_OK;
}

HERON_API int heron_space_constraint_get(const heron_space *sp, int c,
                                         int *kind, int *z, const int **xs,
                                         int *nx, int *cond,
                                         const int64_t **vals, int *nvals) {
  return heron__space_constraint(sp, c, kind, z, xs, nx, cond, vals, nvals);
}

/* The exact product of the operands, or 0 in *ok when it leaves int64_t.
 * Once no factor is zero the magnitude never shrinks, so an intermediate
 * overflow means the final product overflows too. */
static int64_t exact_prod(const hcon *hc, const int64_t *cfg, int *ok) {
  int64_t p = 1;
  *ok = 1;
  for (int i = 0; i < hc->nx; i++)
    if (cfg[hc->xs[i]] == 0)
      return 0;
  for (int i = 0; i < hc->nx; i++)
    if (__builtin_mul_overflow(p, cfg[hc->xs[i]], &p)) {
      *ok = 0;
      return 0;
    }
  return p;
}

static int holds_active(const hcon *hc, const int64_t *cfg) {
  int64_t z = cfg[hc->z];
  switch (hc->kind) {
  case HERON_C_PROD: {
    int ok;
    int64_t p = exact_prod(hc, cfg, &ok);
    return ok && p == z;
  }
  case HERON_C_SUM: {
    __int128 s = 0;
    for (int i = 0; i < hc->nx; i++)
      s += cfg[hc->xs[i]];
    return s == (__int128)z;
  }
  case HERON_C_EQ:
    return z == cfg[hc->xs[0]];
  case HERON_C_NE:
    return z != cfg[hc->xs[0]];
  case HERON_C_LE:
    return z <= cfg[hc->xs[0]];
  case HERON_C_LT:
    return z < cfg[hc->xs[0]];
  case HERON_C_IN: {
    int i = heron__vals_lower(hc->vals, hc->nvals, z);
    return i < hc->nvals && hc->vals[i] == z;
  }
  case HERON_C_SELECT: {
    int64_t s = cfg[hc->xs[0]];
    return s >= 0 && s < hc->nx - 1 && z == cfg[hc->xs[1 + s]];
  }
  }
  return 0;
}

/* Whether EXPR constraint hc holds on the complete config cfg. */
static int holds_expr(const heron_space *sp, const hcon *hc,
                      const int64_t *cfg) {
  heron__value stack[64] = {{0}};
  heron__value *vals =
      hc->nnames <= 64 ? stack : malloc((size_t)hc->nnames * sizeof *vals);
  if (!vals)
    return 0;
  for (int i = 0; i < hc->nnames; i++) {
    int x = hc->name_var[i];
    vals[i] = x >= 0 ? hs_value(sp, x, cfg[x])
                     : (heron__value){.kind = HERON__VAL_INT};
  }
  int ok = heron__expr_holds(hc->expr, vals);
  if (vals != stack)
    free(vals);
  return ok;
}

int heron__space_holds(const heron_space *sp, int c, const int64_t *cfg) {
  const hcon *hc = &sp->c[c];
  if (hc->cond >= 0) {
    if (cfg[hc->cond] == HERON_UNSET)
      return 0;
    if (cfg[hc->cond] != 1)
      return 1;
  }
  if (cfg[hc->z] == HERON_UNSET)
    return 0;
  for (int i = 0; i < hc->nx; i++)
    if (cfg[hc->xs[i]] == HERON_UNSET)
      return 0;
  if (hc->kind == HERON_C_EXPR)
    return holds_expr(sp, hc, cfg);
  return holds_active(hc, cfg);
}
