/* core/space/search.c - randomized depth-first search with restarts, and
 * solution counting.
 *
 * A search keeps one state per depth.  Deciding a variable copies the
 * parent's state one level down, fixes the value there and propagates;
 * on failure the value is removed from the parent's state (which is then
 * propagated again) and another value is drawn.  Values are drawn
 * uniformly from what propagation leaves possible, which is what makes the
 * sampler's knob values well spread.  A failure budget bounds each descent;
 * when it runs out the search restarts from the root with a doubled
 * budget, so one unlucky early choice cannot trap a call.  A descent that
 * exhausts its whole tree within the budget is a proof that nothing fits.
 */
#include <stdlib.h>
#include <string.h>

#include "core/space/space_impl.h"

typedef struct hsearch {
  const heron_space *sp;
  heron_rng *rng;
  const hquery *q;
  hprop p;
  int64_t **lev; /* lev[d]: the state at depth d */
  int nlev, levcap;
  int64_t *block; /* one allocation holding the first levels */
  int nblock;
  int *order; /* decision order of this call */
  int norder;
  int *soft; /* restricted variables an interval cannot express */
  int nsoft;
  int64_t fails, budget;
  int *cfail; /* failures charged to each constraint */
  int64_t *out;
  int counting;
  double count, limit;
  void (*each)(const int64_t *cfg, void *ctx); /* counting: every config */
  void *each_ctx;
  int64_t nodes, node_budget;
} hsearch;

/* ---- Workspace -------------------------------------------------------- */

static int ws_init(hsearch *hs, const heron_space *sp, heron_rng *rng,
                   const hquery *q) {
  memset(hs, 0, sizeof *hs);
  hs->sp = sp;
  hs->rng = rng;
  hs->q = q;
  if (heron__prop_init(&hs->p, sp))
    return HERON_ENOMEM;
  int nv = sp->nv ? sp->nv : 1;
  hs->nblock = sp->norder + 2;
  hs->levcap = hs->nblock;
  hs->block = malloc((size_t)hs->nblock * (sp->slen ? sp->slen : 1) *
                     sizeof *hs->block);
  hs->lev = malloc((size_t)hs->levcap * sizeof *hs->lev);
  hs->order = malloc((size_t)nv * sizeof *hs->order);
  hs->soft = malloc((size_t)nv * sizeof *hs->soft);
  hs->cfail = calloc((size_t)(sp->nc > 0 ? sp->nc : 1), sizeof *hs->cfail);
  if (!hs->block || !hs->lev || !hs->order || !hs->soft || !hs->cfail)
    return HERON_ENOMEM;
  for (int d = 0; d < hs->nblock; d++)
    hs->lev[d] = hs->block + (size_t)d * sp->slen;
  hs->nlev = hs->nblock;
  return 0;
}

static void ws_free(hsearch *hs) {
  heron__prop_free(&hs->p);
  for (int d = hs->nblock; d < hs->nlev; d++)
    free(hs->lev[d]);
  free(hs->lev);
  free(hs->block);
  free(hs->order);
  free(hs->soft);
  free(hs->cfail);
}

/* The state for depth d, allocating deeper levels on demand (interval
 * splitting can go deeper than one level per variable).  Levels are
 * separate allocations, so earlier pointers stay valid. */
static int64_t *level(hsearch *hs, int d) {
  while (d >= hs->nlev) {
    if (hs->nlev == hs->levcap) {
      int ncap = hs->levcap * 2;
      int64_t **l = realloc(hs->lev, (size_t)ncap * sizeof *l);
      if (!l)
        return NULL;
      hs->lev = l;
      hs->levcap = ncap;
    }
    int64_t *s = malloc((hs->sp->slen ? hs->sp->slen : 1) * sizeof *s);
    if (!s)
      return NULL;
    hs->lev[hs->nlev++] = s;
  }
  return hs->lev[d];
}

/* ---- Restrictions ----------------------------------------------------- */

static int64_t qget(const int64_t *arr, int v) {
  return arr ? arr[v] : HERON_UNSET;
}

/* Whether value x satisfies the query's restrictions on variable v. */
static int allowed(const hsearch *hs, int v, int64_t x) {
  int64_t a = qget(hs->q->ra, v), b = qget(hs->q->rb, v);
  if (a != HERON_UNSET && x != a && (b == HERON_UNSET || x != b))
    return 0;
  return qget(hs->q->ex, v) != x;
}

typedef struct twoctx {
  int64_t a, b;
} twoctx;

static int keep_two(int64_t v, const void *ctx) {
  const twoctx *t = ctx;
  return v == t->a || v == t->b;
}

/* Applies variable v's restrictions to the base state; those a domain
 * cannot express exactly go on the soft list, checked during the search.
 * Returns HS_FAIL when a restriction already empties the domain. */
static int restrict_var(hsearch *hs, int v) {
  hprop *p = &hs->p;
  int64_t a = qget(hs->q->ra, v), b = qget(hs->q->rb, v);
  int64_t e = qget(hs->q->ex, v);
  int is_set = hs->sp->v[v].vals != NULL, soft = 0;
  if (a != HERON_UNSET) {
    if (b == HERON_UNSET || b == a) {
      if (heron__dom_fix(p, v, a) == HS_FAIL)
        return HS_FAIL;
    } else {
      twoctx t = {a, b};
      if (heron__dom_setmin(p, v, a < b ? a : b) == HS_FAIL ||
          heron__dom_setmax(p, v, a < b ? b : a) == HS_FAIL ||
          (is_set && heron__dom_filter(p, v, keep_two, &t) == HS_FAIL))
        return HS_FAIL;
      soft = !is_set;
    }
  }
  if (e != HERON_UNSET) {
    if (heron__dom_remove(p, v, e) == HS_FAIL)
      return HS_FAIL;
    soft = soft || heron__dom_has(hs->sp, p->s, v, e);
  }
  if (soft)
    hs->soft[hs->nsoft++] = v;
  return 0;
}

/* The decision order: the caller's first variables, then two-candidate
 * variables (so a crossover's parent choices are drawn before anything
 * can bias them), then excluded ones, then the space's default order. */
static void build_order(hsearch *hs, unsigned char *mark) {
  const heron_space *sp = hs->sp;
  const hquery *q = hs->q;
  int n = 0;
  memset(mark, 0, (size_t)sp->nv);
#define ADD(x)                                                                 \
  do {                                                                         \
    int x_ = (x);                                                              \
    if (!mark[x_] && !sp->v[x_].is_const) {                                    \
      mark[x_] = 1;                                                            \
      hs->order[n++] = x_;                                                     \
    }                                                                          \
  } while (0)
  for (int i = 0; i < q->nfirst; i++)
    if (q->first[i] >= 0 && q->first[i] < sp->nv)
      ADD(q->first[i]);
  for (int v = 0; v < sp->nv && q->ra; v++)
    if (q->ra[v] != HERON_UNSET && q->rb && q->rb[v] != HERON_UNSET)
      ADD(v);
  for (int v = 0; v < sp->nv && q->ex; v++)
    if (q->ex[v] != HERON_UNSET)
      ADD(v);
  for (int i = 0; i < sp->norder; i++)
    ADD(sp->order[i]);
#undef ADD
  hs->norder = n;
}

/* ---- Failure accounting ----------------------------------------------- */

/* Records one failure; returns -1 when the descent's budget is spent. */
static int fail(hsearch *hs, int c) {
  if (c >= 0)
    hs->cfail[c]++;
  return ++hs->fails > hs->budget ? -1 : 0;
}

/* ---- Depth-first search ----------------------------------------------- */

static int dfs(hsearch *hs, int d, int pos);

/* Leaf: every variable is fixed, so the state's lo array is a config.
 * It is checked exactly against every constraint and restriction, which
 * keeps the answer right even where propagation was incomplete. */
static int leaf(hsearch *hs, const int64_t *s) {
  const heron_space *sp = hs->sp;
  for (int c = 0; c < sp->nc; c++)
    if (!heron__space_holds(sp, c, s))
      return fail(hs, c);
  for (int i = 0; i < hs->nsoft; i++)
    if (!allowed(hs, hs->soft[i], s[hs->soft[i]]))
      return fail(hs, -1);
  if (hs->counting) {
    if (hs->each)
      hs->each(s, hs->each_ctx);
    hs->count += 1;
    return hs->count > hs->limit ? -1 : 0;
  }
  memcpy(hs->out, s, (size_t)sp->nv * sizeof *s);
  return 1;
}

/* Tries v = x below depth d: 1 found, 0 failed, -1 budget spent. */
static int try_value(hsearch *hs, int d, int pos, int v, int64_t x) {
  int64_t *t = level(hs, d + 1);
  if (!t)
    return -1;
  memcpy(t, hs->lev[d], hs->sp->slen * sizeof *t);
  hs->p.s = t;
  hs->p.failc = -1;
  if (heron__dom_fix(&hs->p, v, x) == HS_FAIL ||
      heron__prop_run(&hs->p) == HS_FAIL)
    return fail(hs, hs->p.failc);
  return dfs(hs, d + 1, pos + 1);
}

/* Removes a refuted value from the state at depth d and propagates: 0 the
 * node lives on, 1 the node is dead, -1 the budget is spent. */
static int refute(hsearch *hs, int d, int v, int64_t x) {
  hs->p.s = hs->lev[d];
  hs->p.failc = -1;
  if (heron__dom_remove(&hs->p, v, x) == HS_FAIL ||
      heron__prop_run(&hs->p) == HS_FAIL)
    return fail(hs, hs->p.failc) < 0 ? -1 : 1;
  return 0;
}

/* Draws the next value of a set-domain variable: nearest to the preferred
 * value when the query has one, smallest when counting, else uniform. */
static int64_t pick_set(hsearch *hs, const int64_t *s, int v) {
  int64_t pref = qget(hs->q->pref, v);
  if (pref != HERON_UNSET)
    return heron__dom_nearest(hs->sp, s, v, pref, hs->rng);
  if (hs->counting)
    return HS_LO(hs->sp, s, v);
  uint64_t n = heron__dom_size(hs->sp, s, v);
  return heron__dom_kth(hs->sp, s, v, heron_rng_below(hs->rng, n));
}

/* Branches over a set domain: each refuted value leaves the domain. */
static int branch_set(hsearch *hs, int d, int pos, int v) {
  for (;;) {
    int64_t x = pick_set(hs, hs->lev[d], v);
    int r = try_value(hs, d, pos, v, x);
    if (r != 0)
      return r;
    r = refute(hs, d, v, x);
    if (r != 0)
      return r < 0 ? -1 : 0;
  }
}

/* Branches over the two candidates of an interval variable. */
static int branch_two(hsearch *hs, int d, int pos, int v) {
  int64_t c[2] = {hs->q->ra[v], hs->q->rb[v]};
  int64_t pref = qget(hs->q->pref, v);
  int swap = pref != HERON_UNSET ? (c[1] > pref ? c[1] - pref : pref - c[1]) <
                                       (c[0] > pref ? c[0] - pref : pref - c[0])
                                 : (int)(heron_rng_next(hs->rng) & 1);
  if (swap) {
    int64_t t = c[0];
    c[0] = c[1];
    c[1] = t;
  }
  for (int i = 0; i < 2; i++) {
    if (!heron__dom_has(hs->sp, hs->lev[d], v, c[i]) || !allowed(hs, v, c[i]))
      continue;
    int r = try_value(hs, d, pos, v, c[i]);
    if (r != 0)
      return r;
  }
  return 0;
}

/* Draws a value of a large interval, avoiding an excluded value. */
static int64_t pick_interval(hsearch *hs, const int64_t *s, int v) {
  const heron_space *sp = hs->sp;
  int64_t lo = HS_LO(sp, s, v), hi = HS_HI(sp, s, v);
  int64_t pref = qget(hs->q->pref, v), x;
  if (pref != HERON_UNSET)
    x = pref < lo ? lo : pref > hi ? hi : pref;
  else
    x = heron__dom_kth(sp, s, v,
                       heron_rng_below(hs->rng, heron__dom_size(sp, s, v)));
  if (!allowed(hs, v, x))
    x = x < hi ? x + 1 : x - 1; /* the domain has >= 2 values here */
  return x;
}

/* Tries the part [lo, hi] of variable v's interval below depth d. */
static int try_range(hsearch *hs, int d, int pos, int v, int64_t lo,
                     int64_t hi) {
  int64_t *t = level(hs, d + 1);
  if (!t)
    return -1;
  memcpy(t, hs->lev[d], hs->sp->slen * sizeof *t);
  hs->p.s = t;
  hs->p.failc = -1;
  if (heron__dom_setmin(&hs->p, v, lo) == HS_FAIL ||
      heron__dom_setmax(&hs->p, v, hi) == HS_FAIL ||
      heron__prop_run(&hs->p) == HS_FAIL)
    return fail(hs, hs->p.failc);
  return dfs(hs, d + 1, pos);
}

/* Branches over a large interval: one drawn value, then the two parts
 * around it (the larger part first with probability by size), each
 * searched as its own subtree in which v is drawn again. */
static int branch_interval(hsearch *hs, int d, int pos, int v) {
  const int64_t *s = hs->lev[d];
  int64_t lo = HS_LO(hs->sp, s, v), hi = HS_HI(hs->sp, s, v);
  int64_t x = pick_interval(hs, s, v);
  int r = try_value(hs, d, pos, v, x);
  if (r != 0)
    return r;
  double nl = (double)x - (double)lo, nr = (double)hi - (double)x;
  int right_first = heron_rng_uniform(hs->rng) * (nl + nr) < nr;
  for (int i = 0; i < 2; i++) {
    int right = (i == 0) == right_first;
    if (right ? x == hi : x == lo)
      continue;
    r = right ? try_range(hs, d, pos, v, x + 1, hi)
              : try_range(hs, d, pos, v, lo, x - 1);
    if (r != 0)
      return r;
  }
  return 0;
}

/* Counting walks an interval value by value at one depth. */
static int count_interval(hsearch *hs, int d, int pos, int v) {
  int64_t lo = HS_LO(hs->sp, hs->lev[d], v), hi = HS_HI(hs->sp, hs->lev[d], v);
  for (int64_t x = lo;; x++) {
    if (++hs->nodes > hs->node_budget)
      return -1;
    int r = try_value(hs, d, pos, v, x);
    if (r != 0 || x == hi)
      return r;
  }
}

/* Counting, when v is the one variable of the state not fixed and its
 * domain is a set: each value is checked as the leaf would check it, on
 * one scratch config, instead of copying the whole state (every domain's
 * bitset) per value as try_value does.  With a T1 parameter of 10^6 values
 * the copies made --count quadratic (17 s for one such parameter).  The
 * count is the same: with the rest fixed, fixing v to x leaves the config
 * the leaf checks exactly, and propagation only prunes what it refutes. */
static int count_last_set(hsearch *hs, const int64_t *s, int v) {
  const heron_space *sp = hs->sp;
  int64_t *cfg = malloc((size_t)sp->nv * sizeof *cfg);
  if (!cfg)
    return -1;
  memcpy(cfg, s, (size_t)sp->nv * sizeof *cfg);
  const hvar *hv = &sp->v[v];
  const uint64_t *b = hs_cbits(sp, s, v);
  int r = 0;
  for (int w = 0; w < hv->nwords && r == 0; w++) {
    for (uint64_t word = b[w]; word && r == 0; word &= word - 1) {
      if (++hs->nodes > hs->node_budget) {
        r = -1;
        break;
      }
      cfg[v] = hv->vals[w * 64 + __builtin_ctzll(word)];
      r = leaf(hs, cfg);
    }
  }
  free(cfg);
  return r;
}

/* Whether v is the only variable of state s that is not fixed. */
static int only_free(const heron_space *sp, const int64_t *s, int v) {
  for (int x = 0; x < sp->nv; x++)
    if (x != v && !hs_fixed(sp, s, x))
      return 0;
  return 1;
}

/* Whether a soft-restricted variable was fixed to a value it may not
 * take; checked at every node so such a dead end is cut at once. */
static int soft_violated(const hsearch *hs, const int64_t *s) {
  for (int i = 0; i < hs->nsoft; i++) {
    int v = hs->soft[i];
    if (hs_fixed(hs->sp, s, v) && !allowed(hs, v, s[v]))
      return 1;
  }
  return 0;
}

static int dfs(hsearch *hs, int d, int pos) {
  const heron_space *sp = hs->sp;
  const int64_t *s = hs->lev[d];
  if (hs->nsoft && soft_violated(hs, s))
    return fail(hs, -1);
  while (pos < hs->norder && hs_fixed(sp, s, hs->order[pos]))
    pos++;
  if (pos == hs->norder)
    return leaf(hs, s);
  if (hs->counting && ++hs->nodes > hs->node_budget)
    return -1;
  int v = hs->order[pos];
  if (hs->counting && sp->v[v].vals && only_free(sp, s, v))
    return count_last_set(hs, s, v);
  if (sp->v[v].vals)
    return branch_set(hs, d, pos, v);
  if (qget(hs->q->ra, v) != HERON_UNSET && qget(hs->q->rb, v) != HERON_UNSET)
    return branch_two(hs, d, pos, v);
  if (hs->counting)
    return count_interval(hs, d, pos, v);
  return branch_interval(hs, d, pos, v);
}

/* ---- Entry points ----------------------------------------------------- */

int heron__unsat(const heron_space *sp, int c, heron_error *err) {
  char buf[120];
  if (c < 0 || heron_space_constraint_str(sp, c, buf, sizeof buf) < 0)
    return heron_error_set(err, HERON_EUNSAT, "no valid config exists");
  return heron_error_set(err, HERON_EUNSAT, "no valid config: violates %s",
                         buf);
}

/* The constraint charged with the most failures, or -1. */
static int worst_constraint(const hsearch *hs) {
  int best = -1;
  for (int c = 0; c < hs->sp->nc; c++)
    if (hs->cfail[c] > 0 && (best < 0 || hs->cfail[c] > hs->cfail[best]))
      best = c;
  return best;
}

/* Builds the restricted base state in `base`; HS_FAIL when the
 * restrictions contradict the space (err says which variable). */
static int build_base(hsearch *hs, int64_t *base, heron_error *err) {
  const heron_space *sp = hs->sp;
  memcpy(base, sp->root, sp->slen * sizeof *base);
  hs->p.s = base;
  for (int v = 0; v < sp->nv; v++) {
    if (qget(hs->q->ra, v) == HERON_UNSET && qget(hs->q->ex, v) == HERON_UNSET)
      continue;
    if (restrict_var(hs, v) == HS_FAIL) {
      heron_error_set(err, HERON_EUNSAT,
                      "no valid config: %s cannot take the requested value",
                      sp->v[v].name);
      return HS_FAIL;
    }
  }
  hs->p.failc = -1;
  if (heron__prop_run(&hs->p) == HS_FAIL) {
    heron__unsat(sp, hs->p.failc, err);
    return HS_FAIL;
  }
  return 0;
}

/* The first descent's failure budget; each restart doubles it. */
#define HS_FIRST_BUDGET 32
/* The total failure budget of a call that names none. */
#define HS_DEFAULT_FAILS (1 << 20)

int heron__solve(const heron_space *sp, heron_rng *rng, const hquery *q,
                 int64_t *out, int *proved, heron_error *err) {
  *proved = 0;
  if (sp->root_failed) {
    *proved = 1;
    return heron__unsat(sp, sp->root_fail_con, err);
  }
  hsearch hs;
  unsigned char *mark = malloc((size_t)(sp->nv > 0 ? sp->nv : 1));
  int64_t *base = malloc((sp->slen ? sp->slen : 1) * sizeof *base);
  int rc = HERON_ENOMEM;
  if (ws_init(&hs, sp, rng, q) || !mark || !base)
    goto done;
  hs.out = out;
  build_order(&hs, mark);
  if (build_base(&hs, base, err) == HS_FAIL) {
    *proved = 1;
    rc = HERON_EUNSAT;
    goto done;
  }
  int64_t spent = 0, budget = HS_FIRST_BUDGET;
  int64_t max_fails = q->max_fails > 0 ? q->max_fails : HS_DEFAULT_FAILS;
  for (;;) {
    hs.fails = 0;
    hs.budget = budget < max_fails - spent ? budget : max_fails - spent;
    memcpy(hs.lev[0], base, sp->slen * sizeof *base);
    int r = dfs(&hs, 0, 0);
    spent += hs.fails;
    if (r == 1) {
      rc = HERON_OK;
      break;
    }
    if (r == 0 || spent >= max_fails) {
      *proved = r == 0;
      rc = heron__unsat(sp, worst_constraint(&hs), err);
      break;
    }
    budget *= 2;
  }
done:
  if (rc == HERON_ENOMEM)
    heron_error_set(err, rc, "out of memory in the solver");
  ws_free(&hs);
  free(mark);
  free(base);
  return rc;
}

/* ---- Counting --------------------------------------------------------- */

/* Exact enumeration: 1 when it finished (hs->count is exact), 0 when the
 * count passed the limit or the node budget ran out. */
static int count_exact(hsearch *hs) {
  hs->counting = 1;
  hs->budget = INT64_MAX;
  memcpy(hs->lev[0], hs->sp->root, hs->sp->slen * sizeof(int64_t));
  return dfs(hs, 0, 0) == 0;
}

double heron__probe(hprop *p, int64_t *s, const int *order, int norder,
                    heron_rng *rng) {
  const heron_space *sp = p->sp;
  p->s = s;
  double est = 1;
  for (int pos = 0; pos < norder; pos++) {
    int v = order[pos];
    if (hs_fixed(sp, s, v))
      continue;
    uint64_t n = heron__dom_size(sp, s, v);
    int64_t x = heron__dom_kth(sp, s, v, heron_rng_below(rng, n));
    est *= (double)n;
    if (heron__dom_fix(p, v, x) == HS_FAIL || heron__prop_run(p) == HS_FAIL)
      return 0;
  }
  for (int c = 0; c < sp->nc; c++)
    if (!heron__space_holds(sp, c, s))
      return 0;
  return est;
}

/* One Knuth probe from the root (heron__probe). */
static double probe(hsearch *hs) {
  memcpy(hs->lev[0], hs->sp->root, hs->sp->slen * sizeof(int64_t));
  return heron__probe(&hs->p, hs->lev[0], hs->order, hs->norder, hs->rng);
}

#define HS_PROBES 4096

/* heron__count, and heron__enumerate when `each` is set (no estimate
 * then: *exact 0 and *count the configs passed to each so far). */
static int count_or_enumerate(const heron_space *sp, heron_rng *rng,
                              double limit,
                              void (*each)(const int64_t *, void *), void *ctx,
                              double *count, int *exact, heron_error *err) {
  *count = 0;
  *exact = 1;
  if (sp->root_failed)
    return HERON_OK;
  hsearch hs;
  hquery q = {0};
  unsigned char *mark = malloc((size_t)(sp->nv > 0 ? sp->nv : 1));
  int rc = HERON_ENOMEM;
  if (ws_init(&hs, sp, rng, &q) || !mark)
    goto done;
  build_order(&hs, mark);
  /* Counting may take any order: the largest set domain goes last, where
   * count_last_set checks its values without copying the state per value
   * (a T1 parameter of 10^6 values decided first copied the state 10^6
   * times). */
  int big = -1;
  for (int i = 0; i < hs.norder; i++) {
    int v = hs.order[i];
    if (sp->v[v].vals &&
        (big < 0 || sp->v[v].nvals > sp->v[hs.order[big]].nvals))
      big = i;
  }
  if (big >= 0) {
    int v = hs.order[big];
    memmove(hs.order + big, hs.order + big + 1,
            (size_t)(hs.norder - big - 1) * sizeof *hs.order);
    hs.order[hs.norder - 1] = v;
  }
  hs.limit = limit;
  hs.each = each;
  hs.each_ctx = ctx;
  /* Enumeration visits few dead nodes thanks to propagation, so a node
   * budget proportional to the limit only stops pathological spaces. */
  hs.node_budget = limit < 1e6 ? (int64_t)(20 * limit) + 100000 : 20000000;
  if (count_exact(&hs)) {
    *count = hs.count;
  } else if (each) {
    *count = hs.count;
    *exact = 0;
  } else {
    double sum = 0;
    for (int i = 0; i < HS_PROBES; i++)
      sum += probe(&hs);
    *count = sum / HS_PROBES;
    *exact = 0;
  }
  rc = HERON_OK;
done:
  if (rc != HERON_OK)
    heron_error_set(err, rc, "out of memory counting the space");
  ws_free(&hs);
  free(mark);
  return rc;
}

int heron__count(const heron_space *sp, heron_rng *rng, double limit,
                 double *count, int *exact, heron_error *err) {
  return count_or_enumerate(sp, rng, limit, NULL, NULL, count, exact, err);
}

int heron__enumerate(const heron_space *sp, double limit,
                     void (*each)(const int64_t *cfg, void *ctx), void *ctx,
                     double *count, int *complete, heron_error *err) {
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  return count_or_enumerate(sp, &rng, limit, each, ctx, count, complete, err);
}
