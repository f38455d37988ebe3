/* core/space/uniform.c - uniform sampling over the valid configs (the
 * sampler mode HERON_SAMPLER_UNIFORM of heron/space.h).
 *
 * The default sampler (search.c) draws each variable's value uniformly from
 * what propagation leaves possible, so a value with few completions below
 * it is drawn as often as one with many: its configs are not equally
 * likely.  This sampler draws every valid config with the same
 * probability, 1/N.
 *
 * Exact mode.  The search tree is the solver's (variables decided in the
 * space's order, sp->order, each decision propagated).  A node's count is
 * the number of valid configs below it; a sample walks down from the root
 * and at each node draws the value of the node's variable with probability
 * count(child) / count(node), so each config has probability 1/N.  The
 * counts are computed once, when the mode is set, by a depth-first walk
 * that memoises them: after propagation, the configs below a node depend
 * only on the domains of its free variables and on the values of the fixed
 * variables that share a constraint with a free one (every constraint over
 * fixed variables alone is checked at the node), so that is the node's
 * key, and two prefixes that reach the same key share one count (a GEMM
 * 128^3 cpu space of 5.7e7 configs has 1.9e5 keys).  The table stores, per key,
 * the node's variable and, for each of its values with configs below, the value
 * and the running sum of the children's counts (64-bit integers, drawn with an
 * unbiased integer draw).  Keys are stored as two independent 64-bit hashes of
 * the key's words; a collision of both (probability about n^2 / 2^129 for n
 * keys) is the only way the draw could be wrong.  Each child's entry holds its
 * key too, so a draw walks the table without computing keys, fixing each
 * drawn value and propagating in one state; it only reads the table, so
 * threads may sample one space at once.
 *
 * Estimated mode.  When the walk exceeds its budget (HU_MAX_NODES keys,
 * HU_MAX_VISITS propagations, an interval of more than HU_MAX_BRANCH
 * values to branch on, or a count past 2^62), the space is not counted and
 * each draw weighs a node's values by Knuth estimates of their counts
 * (HU_PROBES random probes below each child; heron__probe): the draw is
 * close to uniform as far as those estimates are right, not exactly, and
 * heron_space_sampler says so.  Its last free variable is always drawn
 * exactly among its valid values.
 */
#include <stdlib.h>
#include <string.h>

#include "core/space/space_impl.h"

#define HU_MAX_NODES (1 << 21)
#define HU_MAX_VISITS ((int64_t)40000000)
#define HU_MAX_BRANCH 65536
#define HU_MAX_COUNT ((uint64_t)1 << 62)
#define HU_PROBES 16

typedef struct hu_node {
  uint64_t h1, h2; /* the key's hashes; h1 == 0 && h2 == 0: empty slot */
  uint64_t count;  /* valid configs below */
  int v;           /* the variable decided here */
  int nch;         /* its values with configs below */
  size_t off;      /* their values and running sums in the pools */
} hu_node;

struct heron__uniform {
  hu_node *tab; /* open addressing, cap a power of two */
  size_t cap, n;
  int64_t *vals; /* pool: child values */
  uint64_t *cum; /* pool: running sums of the children's counts */
  uint64_t *ck;  /* pool: the children's keys, two words each ({0, 0}: the
                    child is a config, not a node) */
  size_t npool, poolcap;
  uint64_t total;
  uint64_t root1, root2; /* the root's key */
  int exact;
};

/* One walk's scratch: a propagation context, one state per depth and the
 * marks of the key. */
typedef struct hu_walk {
  const heron_space *sp;
  heron__uniform *u;
  hprop p;
  int64_t **lev;
  int nlev;
  unsigned char *rel; /* rel[x]: fixed x shares a constraint with a free one */
  int64_t *cfg;       /* scratch config of the last free variable */
  int64_t visits, max_visits;
} hu_walk;

static int walk_init(hu_walk *w, const heron_space *sp, heron__uniform *u) {
  memset(w, 0, sizeof *w);
  w->sp = sp;
  w->u = u;
  if (heron__prop_init(&w->p, sp))
    return HERON_ENOMEM;
  w->nlev = sp->norder + 2;
  w->lev = calloc((size_t)w->nlev, sizeof *w->lev);
  w->rel = malloc((size_t)(sp->nv > 0 ? sp->nv : 1));
  w->cfg = malloc((size_t)(sp->nv > 0 ? sp->nv : 1) * sizeof *w->cfg);
  if (!w->lev || !w->rel || !w->cfg)
    return HERON_ENOMEM;
  for (int d = 0; d < w->nlev; d++)
    if (!(w->lev[d] = malloc((sp->slen ? sp->slen : 1) * sizeof(int64_t))))
      return HERON_ENOMEM;
  return 0;
}

static void walk_free(hu_walk *w) {
  heron__prop_free(&w->p);
  for (int d = 0; w->lev && d < w->nlev; d++)
    free(w->lev[d]);
  free(w->lev);
  free(w->rel);
  free(w->cfg);
}

/* ---- Keys ------------------------------------------------------------- */

static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

typedef struct hu_key {
  uint64_t h1, h2;
} hu_key;

static void key_add(hu_key *k, uint64_t word) {
  k->h1 = mix(k->h1 ^ word) + 0x9e3779b97f4a7c15ULL;
  k->h2 = mix(k->h2 + word * 0xd6e8feb86659fd93ULL) ^ 0x632be59bd9b4e019ULL;
}

/* Marks in w->rel the fixed variables that share a constraint with a free
 * one, and checks every constraint whose variables are all fixed: 0 when
 * one fails (no config below), else 1. */
static int mark_relevant(hu_walk *w, const int64_t *s) {
  const heron_space *sp = w->sp;
  memset(w->rel, 0, (size_t)sp->nv);
  for (int c = 0; c < sp->nc; c++) {
    const hcon *hc = &sp->c[c];
    int any_free = 0;
    for (int i = -2; i < hc->nx && !any_free; i++) {
      int x = i == -2 ? hc->z : i == -1 ? hc->cond : hc->xs[i];
      any_free = x >= 0 && !hs_fixed(sp, s, x);
    }
    if (!any_free) {
      if (!heron__space_holds(sp, c, s))
        return 0;
      continue;
    }
    for (int i = -2; i < hc->nx; i++) {
      int x = i == -2 ? hc->z : i == -1 ? hc->cond : hc->xs[i];
      if (x >= 0)
        w->rel[x] = 1;
    }
  }
  return 1;
}

/* The key of node s (after mark_relevant): every free variable with its
 * domain, every relevant fixed variable with its value. */
static hu_key node_key(const hu_walk *w, const int64_t *s) {
  const heron_space *sp = w->sp;
  hu_key k = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL};
  for (int x = 0; x < sp->nv; x++) {
    if (hs_fixed(sp, s, x)) {
      if (w->rel[x]) {
        key_add(&k, (uint64_t)x << 1);
        key_add(&k, (uint64_t)HS_LO(sp, s, x));
      }
      continue;
    }
    key_add(&k, (uint64_t)x << 1 | 1);
    key_add(&k, (uint64_t)HS_LO(sp, s, x));
    key_add(&k, (uint64_t)HS_HI(sp, s, x));
    const uint64_t *b = hs_cbits(sp, s, x);
    for (int i = 0; i < sp->v[x].nwords; i++)
      key_add(&k, b[i]);
  }
  if (!k.h1 && !k.h2)
    k.h1 = 1;
  return k;
}

/* ---- The table -------------------------------------------------------- */

static size_t slot_of(const heron__uniform *u, hu_key k) {
  size_t i = (size_t)k.h1 & (u->cap - 1);
  while (u->tab[i].h1 || u->tab[i].h2) {
    if (u->tab[i].h1 == k.h1 && u->tab[i].h2 == k.h2)
      return i;
    i = (i + 1) & (u->cap - 1);
  }
  return i;
}

static const hu_node *lookup(const heron__uniform *u, hu_key k) {
  if (!u->cap)
    return NULL;
  const hu_node *e = &u->tab[slot_of(u, k)];
  return e->h1 || e->h2 ? e : NULL;
}

static int grow_table(heron__uniform *u) {
  size_t ncap = u->cap ? u->cap * 2 : 1024;
  hu_node *old = u->tab;
  size_t ocap = u->cap;
  u->tab = calloc(ncap, sizeof *u->tab);
  if (!u->tab) {
    u->tab = old;
    return HERON_ENOMEM;
  }
  u->cap = ncap;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].h1 || old[i].h2)
      u->tab[slot_of(u, (hu_key){old[i].h1, old[i].h2})] = old[i];
  free(old);
  return 0;
}

/* Room for `more` children in the pools. */
static int pool_reserve(heron__uniform *u, size_t more) {
  if (u->npool + more <= u->poolcap)
    return 0;
  size_t ncap = u->poolcap ? u->poolcap : 4096;
  while (ncap < u->npool + more)
    ncap *= 2;
  int64_t *v = realloc(u->vals, ncap * sizeof *v);
  if (v)
    u->vals = v;
  uint64_t *c = realloc(u->cum, ncap * sizeof *c);
  if (c)
    u->cum = c;
  uint64_t *k = realloc(u->ck, 2 * ncap * sizeof *k);
  if (k)
    u->ck = k;
  if (!v || !c || !k)
    return HERON_ENOMEM;
  u->poolcap = ncap;
  return 0;
}

/* ---- Counting --------------------------------------------------------- */

/* The first free variable of s in the space's order, or -1. */
static int next_free(const heron_space *sp, const int64_t *s) {
  for (int i = 0; i < sp->norder; i++)
    if (!hs_fixed(sp, s, sp->order[i]))
      return sp->order[i];
  return -1;
}

/* Whether s is fixed everywhere but at v. */
static int only_free(const heron_space *sp, const int64_t *s, int v) {
  for (int x = 0; x < sp->nv; x++)
    if (x != v && !hs_fixed(sp, s, x))
      return 0;
  return 1;
}

/* Whether value x of v, the last free variable of s, completes a valid
 * config: the constraints over fixed variables alone were checked at the
 * node, so only v's own constraints remain. */
static int last_ok(hu_walk *w, const int64_t *s, int v, int64_t x) {
  const heron_space *sp = w->sp;
  memcpy(w->cfg, s, (size_t)sp->nv * sizeof *w->cfg);
  w->cfg[v] = x;
  const hvar *hv = &sp->v[v];
  for (int i = 0; i < hv->nwatch; i++)
    if (!heron__space_holds(sp, hv->watch[i], w->cfg))
      return 0;
  return 1;
}

/* Runs the statements after x for each value x of v's domain in s, in
 * order (set domains by their bits, intervals value by value); `break`
 * leaves the innermost loop only, so bodies set a flag and test it. */
#define FOR_VALUES(sp, s, v, x, ...)                                           \
  do {                                                                         \
    const hvar *hv_ = &(sp)->v[(v)];                                           \
    if (hv_->vals) {                                                           \
      const uint64_t *b_ = hs_cbits((sp), (s), (v));                           \
      for (int w_ = 0; w_ < hv_->nwords; w_++)                                 \
        for (uint64_t word_ = b_[w_]; word_; word_ &= word_ - 1) {             \
          int64_t x = hv_->vals[w_ * 64 + __builtin_ctzll(word_)];             \
          __VA_ARGS__;                                                         \
        }                                                                      \
    } else {                                                                   \
      for (int64_t x = HS_LO((sp), (s), (v));; x++) {                          \
        __VA_ARGS__;                                                           \
        if (x == HS_HI((sp), (s), (v)))                                        \
          break;                                                               \
      }                                                                        \
    }                                                                          \
  } while (0)

/* Propagates v = x from the state at depth d into depth d + 1: 0, or
 * HS_FAIL when the child is empty. */
static int descend(hu_walk *w, int d, int v, int64_t x) {
  int64_t *t = w->lev[d + 1];
  memcpy(t, w->lev[d], w->sp->slen * sizeof *t);
  w->p.s = t;
  if (heron__dom_fix(&w->p, v, x) == HS_FAIL ||
      heron__prop_run(&w->p) == HS_FAIL)
    return HS_FAIL;
  return 0;
}

/* Counts the configs below the propagated state at depth d into *count,
 * memoising every node on the way, and gives the node's key ({0, 0} when
 * it is a config or has none below): 0, -1 when a budget ran out,
 * HERON_ENOMEM. */
static int count_node(hu_walk *w, int d, uint64_t *count, hu_key *key) {
  const heron_space *sp = w->sp;
  heron__uniform *u = w->u;
  const int64_t *s = w->lev[d];
  *count = 0;
  *key = (hu_key){0, 0};
  if (!mark_relevant(w, s))
    return 0;
  int v = next_free(sp, s);
  if (v < 0) {
    *count = 1;
    return 0;
  }
  hu_key k = node_key(w, s);
  const hu_node *hit = lookup(u, k);
  if (hit) {
    *count = hit->count;
    *key = k;
    return 0;
  }
  if (!sp->v[v].vals &&
      (uint64_t)(HS_HI(sp, s, v) - HS_LO(sp, s, v)) >= HU_MAX_BRANCH)
    return -1;
  int last = only_free(sp, s, v);
  /* The children go to the pool's end; nested nodes append after them,
   * so the children are gathered in a local list first. */
  size_t cap = 16, n = 0;
  int64_t *xs = malloc(cap * sizeof *xs);
  uint64_t *cs = malloc(cap * sizeof *cs);
  hu_key *ks = malloc(cap * sizeof *ks);
  int rc = xs && cs && ks ? 0 : HERON_ENOMEM;
  uint64_t sum = 0;
  FOR_VALUES(sp, s, v, x, {
    if (rc)
      break;
    uint64_t c = 0;
    hu_key ck = {0, 0};
    if (++w->visits > w->max_visits) {
      rc = -1;
      break;
    }
    if (last)
      c = last_ok(w, s, v, x);
    else if (descend(w, d, v, x) == 0)
      rc = count_node(w, d + 1, &c, &ck);
    if (rc || !c)
      continue;
    if (n == cap) {
      cap *= 2;
      int64_t *nx = realloc(xs, cap * sizeof *xs);
      if (nx)
        xs = nx;
      uint64_t *nc = realloc(cs, cap * sizeof *cs);
      if (nc)
        cs = nc;
      hu_key *nk = realloc(ks, cap * sizeof *ks);
      if (nk)
        ks = nk;
      if (!nx || !nc || !nk) {
        rc = HERON_ENOMEM;
        break;
      }
    }
    sum += c;
    if (sum > HU_MAX_COUNT) {
      rc = -1;
      break;
    }
    xs[n] = x;
    ks[n] = ck;
    cs[n++] = sum;
  });
  if (!rc && sum) {
    if (u->n + 1 > HU_MAX_NODES)
      rc = -1;
    else if ((u->n + 1) * 2 > u->cap && grow_table(u))
      rc = HERON_ENOMEM;
    else if (pool_reserve(u, n))
      rc = HERON_ENOMEM;
  }
  if (!rc && sum) {
    hu_node *e = &u->tab[slot_of(u, k)];
    *e = (hu_node){k.h1, k.h2, sum, v, (int)n, u->npool};
    memcpy(u->vals + u->npool, xs, n * sizeof *xs);
    memcpy(u->cum + u->npool, cs, n * sizeof *cs);
    for (size_t i = 0; i < n; i++) {
      u->ck[2 * (u->npool + i)] = ks[i].h1;
      u->ck[2 * (u->npool + i) + 1] = ks[i].h2;
    }
    u->npool += n;
    u->n++;
    *key = k;
  }
  free(xs);
  free(cs);
  free(ks);
  *count = sum;
  return rc;
}

/* ---- Public entry points ---------------------------------------------- */

void heron__uniform_free(heron__uniform *u) {
  if (!u)
    return;
  free(u->tab);
  free(u->vals);
  free(u->cum);
  free(u->ck);
  free(u);
}

int heron__uniform_build(const heron_space *sp, int64_t max_visits,
                         heron__uniform **out, heron_error *err) {
  *out = NULL;
  heron__uniform *u = calloc(1, sizeof *u);
  hu_walk w;
  int rc = u ? walk_init(&w, sp, u) : HERON_ENOMEM;
  if (!rc) {
    w.max_visits = max_visits > 0 ? max_visits : HU_MAX_VISITS;
    u->exact = 1;
    if (!sp->root_failed) {
      memcpy(w.lev[0], sp->root, sp->slen * sizeof(int64_t));
      hu_key root;
      rc = count_node(&w, 0, &u->total, &root);
      u->root1 = root.h1;
      u->root2 = root.h2;
    }
    if (rc == -1) {
      /* Too large to count: drop the table, draw by estimates. */
      free(u->tab);
      free(u->vals);
      free(u->cum);
      free(u->ck);
      memset(u, 0, sizeof *u);
      rc = 0;
    }
  }
  if (u)
    walk_free(&w);
  if (rc) {
    heron__uniform_free(u);
    return heron_error_set(err, HERON_ENOMEM,
                           "out of memory counting the space for uniform "
                           "sampling");
  }
  *out = u;
  return HERON_OK;
}

int heron__uniform_exact(const heron__uniform *u, double *count) {
  if (count)
    *count = u->exact ? (double)u->total : -1;
  return u->exact;
}

/* Draws a child of the table's node n: its index in the pools. */
static size_t draw_exact(const heron__uniform *u, const hu_node *n,
                         heron_rng *rng) {
  uint64_t r = heron_rng_below(rng, n->count);
  const uint64_t *cum = u->cum + n->off;
  int lo = 0, hi = n->nch - 1;
  while (lo < hi) { /* the first child whose running sum exceeds r */
    int mid = lo + (hi - lo) / 2;
    if (cum[mid] > r)
      hi = mid;
    else
      lo = mid + 1;
  }
  return n->off + (size_t)lo;
}

/* Estimated mode: draws the value of v at depth d by estimated counts of
 * its children.  HS_FAIL when no child has a solution in sight. */
static int draw_estimated(hu_walk *w, int d, int v, heron_rng *rng,
                          int64_t *value) {
  const heron_space *sp = w->sp;
  const int64_t *s = w->lev[d];
  if (!sp->v[v].vals &&
      (uint64_t)(HS_HI(sp, s, v) - HS_LO(sp, s, v)) >= HU_MAX_BRANCH) {
    /* Too many values to weigh: a uniform value, as the probes draw. */
    *value = heron__dom_kth(sp, s, v,
                            heron_rng_below(rng, heron__dom_size(sp, s, v)));
    return 0;
  }
  int last = only_free(sp, s, v);
  double total = 0, pick = -1;
  int64_t *probe = w->lev[d + 1];
  FOR_VALUES(sp, s, v, x, {
    double c = 0;
    if (last)
      c = last_ok(w, s, v, x);
    else if (descend(w, d, v, x) == 0) {
      /* A copy of the child per probe: each probe narrows its state. */
      int64_t *child = w->lev[d + 2];
      memcpy(child, probe, sp->slen * sizeof *child);
      for (int i = 0; i < HU_PROBES; i++) {
        memcpy(probe, child, sp->slen * sizeof *probe);
        c += heron__probe(&w->p, probe, sp->order, sp->norder, rng);
      }
      c /= HU_PROBES;
    }
    /* Reservoir draw by weight: x replaces the pick with c / total. */
    total += c;
    if (c > 0 && heron_rng_uniform(rng) * total < c) {
      *value = x;
      pick = c;
    }
  });
  return pick > 0 ? 0 : HS_FAIL;
}

/* Exact mode: walks the table from the root, fixing each drawn value in
 * one state (propagated as the count's walk did), so no key is computed. */
static int sample_exact(hu_walk *w, heron_rng *rng, int64_t *out) {
  const heron_space *sp = w->sp;
  const heron__uniform *u = w->u;
  int64_t *s = w->lev[0];
  memcpy(s, sp->root, sp->slen * sizeof *s);
  w->p.s = s;
  hu_key k = {u->root1, u->root2};
  while (k.h1 || k.h2) {
    const hu_node *n = lookup(u, k);
    if (!n)
      return HS_FAIL;
    size_t c = draw_exact(u, n, rng);
    if (heron__dom_fix(&w->p, n->v, u->vals[c]) == HS_FAIL ||
        heron__prop_run(&w->p) == HS_FAIL)
      return HS_FAIL;
    k = (hu_key){u->ck[2 * c], u->ck[2 * c + 1]};
  }
  for (int x = 0; x < sp->nv; x++)
    if (!hs_fixed(sp, s, x))
      return HS_FAIL;
  if (heron_space_violations(sp, s, NULL, 0) != 0)
    return HS_FAIL;
  memcpy(out, s, (size_t)sp->nv * sizeof *out);
  return 0;
}

/* Estimated mode: draws each value by estimated counts, from the root
 * again when a draw walks into a dead end. */
static int sample_estimated(hu_walk *w, heron_rng *rng, int64_t *out) {
  const heron_space *sp = w->sp;
  for (int tries = 0; tries < 64; tries++) {
    memcpy(w->lev[0], sp->root, sp->slen * sizeof(int64_t));
    for (int d = 0;; d++) {
      const int64_t *s = w->lev[d];
      int v = next_free(sp, s);
      int64_t x = 0;
      if (v < 0) {
        if (heron_space_violations(sp, s, NULL, 0) != 0)
          break;
        memcpy(out, s, (size_t)sp->nv * sizeof *out);
        return 0;
      }
      if (draw_estimated(w, d, v, rng, &x) == HS_FAIL)
        break;
      if (only_free(sp, s, v)) {
        memcpy(out, s, (size_t)sp->nv * sizeof *out);
        out[v] = x;
        return 0;
      }
      if (descend(w, d, v, x) == HS_FAIL)
        break;
    }
  }
  return HS_FAIL;
}

int heron__uniform_sample(const heron_space *sp, const heron__uniform *u,
                          heron_rng *rng, int64_t *out, heron_error *err) {
  if (sp->root_failed || (u->exact && !u->total))
    return heron__unsat(sp, sp->root_failed ? sp->root_fail_con : -1, err);
  hu_walk w;
  int rc = walk_init(&w, sp, (heron__uniform *)u);
  if (rc) {
    walk_free(&w);
    return heron_error_set(err, HERON_ENOMEM, "out of memory sampling");
  }
  rc = u->exact ? sample_exact(&w, rng, out) : sample_estimated(&w, rng, out);
  walk_free(&w);
  if (rc)
    return heron_error_set(err, HERON_EUNSAT,
                           "uniform sampling found no valid config");
  return HERON_OK;
}
