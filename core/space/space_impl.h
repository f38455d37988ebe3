/* core/space/space_impl.h - the space's internal representation and the
 * solver's building blocks, shared by the files of core/space only.
 *
 * Domains during search live in a *state*: one flat int64_t array laid out
 * as lo[nv], hi[nv], then the bitset words of every set-domain variable.
 * A variable whose internal domain is a sorted value list (`vals`) keeps one
 * bit per list entry; its lo/hi always equal the smallest and largest value
 * whose bit is set.  Interval variables are just [lo, hi].  Copying a state
 * is one memcpy, which is what lets the search keep one state per depth and
 * backtrack by simply dropping back to the parent's copy.
 */
#ifndef HERON_CORE_SPACE_IMPL_H
#define HERON_CORE_SPACE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "core/space/builder.h"
#include "core/space/expr.h"
#include "heron/rng.h"

/* Interval domains of knobs up to this size are searched as explicit value
 * sets, so that a failed value can be removed from the middle of the
 * domain.  Auxiliary variables are nearly always fixed by propagation, so
 * only their tiny intervals (0/1 conditions) get the set treatment. */
#define HS_KNOB_SET_MAX 4096
#define HS_AUX_SET_MAX 64

typedef struct hvar {
  char *name;
  int is_knob;
  int is_const;
  int user_set;   /* the domain was given as a set (var_domain lists it) */
  int64_t lo, hi; /* the declared domain's bounds */
  int64_t *uvals; /* the declared set, sorted (NULL for an interval) */
  int nuvals;
  int64_t *vals; /* the internal set searched with bits (or NULL) */
  int nvals;
  int woff, nwords; /* the variable's bitset words in a state */
  int *watch;       /* constraints mentioning the variable */
  int nwatch;
  int logfeat; /* features use log2(1 + value) */
  /* A knob added after configs were recorded: has_absent says that a
   * config naming no value for it takes `absent` (heron__space_var_absent),
   * and a config at that value keeps the key it had before the knob. */
  int has_absent;
  int64_t absent;
  /* A variable whose values stand for others (a T1 parameter of floats or
   * strings): value k means vtab[k] to expressions.  NULL: the integer. */
  heron__value *vtab;
  int nvtab;
} hvar;

typedef struct hcon {
  int kind, z, cond, nx;
  int *xs;
  int64_t *vals; /* IN: sorted, duplicate-free */
  int nvals;
  int nonneg; /* PROD: every operand's declared domain is >= 0 */
  /* EXPR: the parsed restriction (owned), its source text (owned) and the
   * variable of each of the expression's names (-1: unused), nnames long. */
  heron__expr *expr;
  char *text;
  int *name_var;
  int nnames;
} hcon;

struct heron_space {
  hvar *v;
  int nv, vcap;
  hcon *c;
  int nc, ccap;
  int *knobs;
  int nknobs, kcap;
  int finished;
  int root_failed;   /* root propagation proved the space empty */
  int root_fail_con; /* the constraint it failed on */
  int nwords;        /* bitset words in a state */
  size_t slen;       /* int64_t entries in a state */
  int64_t *root;     /* the state after root propagation */
  int *order;        /* default decision order: knobs, then the rest */
  int norder;
  int sampler;                 /* a heron_sampler (heron_space_set_sampler) */
  struct heron__uniform *unif; /* HERON_SAMPLER_UNIFORM's counts */
};

/* State accessors. */
#define HS_LO(sp, s, x) ((s)[(x)])
#define HS_HI(sp, s, x) ((s)[(sp)->nv + (x)])
static inline uint64_t *hs_bits(const heron_space *sp, int64_t *s, int x) {
  return (uint64_t *)(s + 2 * (size_t)sp->nv) + sp->v[x].woff;
}
static inline const uint64_t *hs_cbits(const heron_space *sp, const int64_t *s,
                                       int x) {
  return (const uint64_t *)(s + 2 * (size_t)sp->nv) + sp->v[x].woff;
}
static inline int hs_fixed(const heron_space *sp, const int64_t *s, int x) {
  return HS_LO(sp, s, x) == HS_HI(sp, s, x);
}

/* ---- Propagation (propagate.c, domain.c) ---------------------------- */

/* One propagation context: the state being narrowed and the queue of
 * constraints to revisit.  Owned by one call; never shared. */
typedef struct hprop {
  const heron_space *sp;
  int64_t *s;
  int *queue;         /* ring of constraint indices, capacity nc */
  unsigned char *inq; /* inq[c]: c is in the queue */
  int qhead, qlen;
  int cur;       /* the constraint running now (not re-queued) */
  long nchanges; /* bumped on every domain change */
  int failc;     /* the constraint whose propagation failed last */
} hprop;

#define HS_FAIL (-1)

/* The value variable x's integer v stands for, as expressions see it. */
static inline heron__value hs_value(const heron_space *sp, int x, int64_t v) {
  const hvar *hv = &sp->v[x];
  if (hv->vtab && v >= 0 && v < hv->nvtab)
    return hv->vtab[v];
  return (heron__value){.kind = HERON__VAL_INT, .i = v};
}

/* Allocates the queue for sp (HERON_ENOMEM on failure) / frees it. */
int heron__prop_init(hprop *p, const heron_space *sp);
void heron__prop_free(hprop *p);
/* Queues every constraint watching variable x. */
void heron__prop_touch(hprop *p, int x);
/* Queues every constraint. */
void heron__prop_all(hprop *p);
/* Runs the queue to a fixpoint on p->s: 0, or HS_FAIL with p->failc. */
int heron__prop_run(hprop *p);

/* Domain updates on p->s; each returns 0 or HS_FAIL (domain empty) and
 * queues the variable's watchers when the domain changed. */
int heron__dom_setmin(hprop *p, int x, int64_t m);
int heron__dom_setmax(hprop *p, int x, int64_t m);
int heron__dom_fix(hprop *p, int x, int64_t val);
int heron__dom_remove(hprop *p, int x, int64_t val);
/* Keeps only the values for which keep(val, ctx) is nonzero.  Interval
 * domains only have their bounds moved inward past rejected values, and
 * only while scanning at most `scan` values from each end. */
int heron__dom_filter(hprop *p, int x, int (*keep)(int64_t, const void *),
                      const void *ctx);

/* Read-only domain queries. */
int heron__dom_has(const heron_space *sp, const int64_t *s, int x, int64_t val);
/* Number of values, saturated at UINT64_MAX. */
uint64_t heron__dom_size(const heron_space *sp, const int64_t *s, int x);
/* The k-th smallest value of a set domain (k < size). */
int64_t heron__dom_kth(const heron_space *sp, const int64_t *s, int x,
                       uint64_t k);
/* The value of the domain nearest to `target`; ties broken by coin. */
int64_t heron__dom_nearest(const heron_space *sp, const int64_t *s, int x,
                           int64_t target, heron_rng *rng);
/* Index of the first entry of hv->vals that is >= val (nvals if none). */
int heron__vals_lower(const int64_t *vals, int n, int64_t val);

/* Saturating multiplication: the exact product clamped to the int64_t
 * range; *ovf is set when clamping happened.  Inline because bounds
 * reasoning on products calls it in its innermost loop. */
static inline int64_t heron__sat_mul(int64_t a, int64_t b, int *ovf) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r))
    return r;
  *ovf = 1;
  return ((a < 0) != (b < 0)) ? INT64_MIN : INT64_MAX;
}

/* ---- Search (search.c) ---------------------------------------------- */

/* What one solver call is asked: per-variable restrictions (arrays of nv
 * entries, or NULL when unused; HERON_UNSET marks "none"). */
typedef struct hquery {
  const int64_t *ra;   /* the variable takes ra[v] ... */
  const int64_t *rb;   /* ... or rb[v] */
  const int64_t *ex;   /* the variable must differ from ex[v] */
  const int64_t *pref; /* try values nearest to pref[v] first */
  const int *first;    /* variables to decide before all others */
  int nfirst;
  int64_t max_fails; /* total failure budget (restarts included) */
} hquery;

/* Finds a config satisfying the space and the query, written to out[nv].
 * HERON_OK; HERON_EUNSAT (proved or budget exhausted; *proved tells which,
 * and err names the constraint that failed most); HERON_ENOMEM. */
int heron__solve(const heron_space *sp, heron_rng *rng, const hquery *q,
                 int64_t *out, int *proved, heron_error *err);

/* Counts solutions: exactly when at most `limit`, else by random probes. */
int heron__count(const heron_space *sp, heron_rng *rng, double limit,
                 double *count, int *exact, heron_error *err);

/* Enumerates the valid configs by heron__count's exact walk, calling
 * each(cfg, ctx) for every one (cfg[nv], valid until each returns):
 * *complete is 1 when all were passed (*count of them), 0 when there are
 * more than `limit`.  For tests that check a sampler against the space. */
int heron__enumerate(const heron_space *sp, double limit,
                     void (*each)(const int64_t *cfg, void *ctx), void *ctx,
                     double *count, int *complete, heron_error *err);

/* One Knuth probe from the propagated state s (narrowed in place, with p):
 * decides the free variables in order[0..norder) by uniform draws and
 * returns the product of the domain sizes met when the path ends in a valid
 * config, else 0.  Its expectation is the number of configs below s. */
double heron__probe(hprop *p, int64_t *s, const int *order, int norder,
                    heron_rng *rng);

/* ---- Uniform sampling (uniform.c) ------------------------------------ */

/* The counts behind HERON_SAMPLER_UNIFORM (see uniform.c for the design). */
typedef struct heron__uniform heron__uniform;

/* Counts sp's configs for uniform sampling into *out (exact, or marked as
 * estimated when the space is too large to count: more than max_visits
 * propagations, 0 for the default budget).  HERON_ENOMEM. */
int heron__uniform_build(const heron_space *sp, int64_t max_visits,
                         heron__uniform **out, heron_error *err);
void heron__uniform_free(heron__uniform *u);
/* 1 when u's draws are exactly uniform (*count: the number of valid
 * configs), 0 when they follow estimated counts (*count: -1). */
int heron__uniform_exact(const heron__uniform *u, double *count);
/* Draws a valid config, each with the same probability, into out[nv]. */
int heron__uniform_sample(const heron_space *sp, const heron__uniform *u,
                          heron_rng *rng, int64_t *out, heron_error *err);

/* Writes "no valid config: <constraint c>" into err with code EUNSAT. */
int heron__unsat(const heron_space *sp, int c, heron_error *err);

#endif
