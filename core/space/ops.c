/* core/space/ops.c - the public space API of heron/space.h: accessors,
 * readable constraints, and the operations strategies use (sample,
 * validate, crossover, mutate, repair, ...), all built on heron__solve.
 *
 * Every operation allocates its scratch memory per call and only reads the
 * space, so any number of threads may run them at once on one space.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/space/space_impl.h"
#include "core/util/util.h"

/* ---- Accessors -------------------------------------------------------- */

HERON_API int heron_space_nvars(const heron_space *sp) {
  return sp ? sp->nv : 0;
}

HERON_API int heron_space_nknobs(const heron_space *sp) {
  return sp ? sp->nknobs : 0;
}

HERON_API int heron_space_knob(const heron_space *sp, int i) {
  if (!sp || i < 0 || i >= sp->nknobs)
    return HERON_EINVAL;
  return sp->knobs[i];
}

HERON_API const char *heron_space_var_name(const heron_space *sp, int v) {
  if (!sp || v < 0 || v >= sp->nv)
    return NULL;
  return sp->v[v].name;
}

HERON_API int heron_space_var_is_knob(const heron_space *sp, int v) {
  if (!sp || v < 0 || v >= sp->nv)
    return HERON_EINVAL;
  return sp->v[v].is_knob;
}

HERON_API int heron_space_find_var(const heron_space *sp, const char *name) {
  if (!sp || !name)
    return HERON_ENOTFOUND;
  /* Named variables win over constants, which are named by their value. */
  for (int v = 0; v < sp->nv; v++)
    if (!sp->v[v].is_const && strcmp(sp->v[v].name, name) == 0)
      return v;
  for (int v = 0; v < sp->nv; v++)
    if (strcmp(sp->v[v].name, name) == 0)
      return v;
  return HERON_ENOTFOUND;
}

HERON_API int heron_space_var_domain(const heron_space *sp, int v, int64_t *lo,
                                     int64_t *hi, const int64_t **vals,
                                     int *nvals) {
  if (!sp || v < 0 || v >= sp->nv)
    return HERON_EINVAL;
  const hvar *hv = &sp->v[v];
  if (lo)
    *lo = hv->lo;
  if (hi)
    *hi = hv->hi;
  if (vals)
    *vals = hv->user_set ? hv->uvals : NULL;
  if (nvals)
    *nvals = hv->user_set ? hv->nuvals : 0;
  return HERON_OK;
}

HERON_API int heron_space_nconstraints(const heron_space *sp) {
  return sp ? sp->nc : 0;
}

HERON_API int heron_space_constraint_kind(const heron_space *sp, int c) {
  if (!sp || c < 0 || c >= sp->nc)
    return HERON_EINVAL;
  return sp->c[c].kind;
}

/* ---- Readable constraints --------------------------------------------- */

static void put_var(heron__buf *b, const heron_space *sp, int v) {
  if (sp->v[v].is_const)
    heron__buf_printf(b, "%" PRId64, sp->v[v].lo);
  else
    heron__buf_puts(b, sp->v[v].name);
}

/* Writes x1 <sep> x2 <sep> ... for operands xs[from..nx). */
static void put_list(heron__buf *b, const heron_space *sp, const hcon *c,
                     int from, const char *sep) {
  for (int i = from; i < c->nx; i++) {
    if (i > from)
      heron__buf_puts(b, sep);
    put_var(b, sp, c->xs[i]);
  }
}

static void put_constraint(heron__buf *b, const heron_space *sp,
                           const hcon *c) {
  static const char *rel[] = {
      [HERON_C_EQ] = " == ",
      [HERON_C_NE] = " != ",
      [HERON_C_LE] = " <= ",
      [HERON_C_LT] = " < ",
  };
  if (c->cond >= 0) {
    heron__buf_puts(b, "if ");
    put_var(b, sp, c->cond);
    heron__buf_puts(b, ": ");
  }
  switch (c->kind) {
  case HERON_C_EXPR:
    heron__buf_puts(b, c->text);
    break;
  case HERON_C_PROD:
  case HERON_C_SUM:
    put_list(b, sp, c, 0, c->kind == HERON_C_PROD ? " * " : " + ");
    heron__buf_puts(b, " == ");
    put_var(b, sp, c->z);
    break;
  case HERON_C_EQ:
  case HERON_C_NE:
  case HERON_C_LE:
  case HERON_C_LT:
    put_var(b, sp, c->z);
    heron__buf_puts(b, rel[c->kind]);
    put_var(b, sp, c->xs[0]);
    break;
  case HERON_C_IN:
    put_var(b, sp, c->z);
    heron__buf_puts(b, " in {");
    for (int i = 0; i < c->nvals; i++)
      heron__buf_printf(b, "%s%" PRId64, i ? ", " : "", c->vals[i]);
    heron__buf_puts(b, "}");
    break;
  case HERON_C_SELECT:
    put_var(b, sp, c->z);
    heron__buf_puts(b, " == [");
    put_list(b, sp, c, 1, ", ");
    heron__buf_puts(b, "][");
    put_var(b, sp, c->xs[0]);
    heron__buf_puts(b, "]");
    break;
  }
}

HERON_API int heron_space_constraint_str(const heron_space *sp, int c,
                                         char *buf, size_t cap) {
  if (!sp || c < 0 || c >= sp->nc || (cap > 0 && !buf))
    return HERON_EINVAL;
  heron__buf b = {0};
  put_constraint(&b, sp, &sp->c[c]);
  if (b.failed) {
    heron__buf_free(&b);
    return HERON_ENOMEM;
  }
  int len = (int)b.len;
  if (cap > 0)
    snprintf(buf, cap, "%s", b.data ? b.data : "");
  heron__buf_free(&b);
  return len;
}

/* ---- Helpers shared by the operations --------------------------------- */

static int ready(const heron_space *sp, heron_rng *rng, const void *out,
                 heron_error *err) {
  if (!sp || !sp->finished || !rng || !out)
    return heron_error_set(err, HERON_EINVAL,
                           "space operation needs a finished space, an rng "
                           "and an output config");
  return HERON_OK;
}

/* An int64_t array of nv entries, all HERON_UNSET (NULL on failure). */
static int64_t *unset_array(const heron_space *sp) {
  int64_t *a = malloc((size_t)(sp->nv > 0 ? sp->nv : 1) * sizeof *a);
  if (a)
    for (int v = 0; v < sp->nv; v++)
      a[v] = HERON_UNSET;
  return a;
}

/* Whether x lies in variable v's declared domain. */
static int in_domain(const heron_space *sp, int v, int64_t x) {
  const hvar *hv = &sp->v[v];
  if (x < hv->lo || x > hv->hi)
    return 0;
  if (!hv->user_set)
    return 1;
  int i = heron__vals_lower(hv->uvals, hv->nuvals, x);
  return i < hv->nuvals && hv->uvals[i] == x;
}

static void shuffle(int *a, int n, heron_rng *rng) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)heron_rng_below(rng, (uint64_t)i + 1);
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

/* Sorts a[0..n) by descending score, stably (ties keep their order, which
 * callers shuffle beforehand to break ties at random). */
static void sort_by_score(int *a, int n, const double *score) {
  for (int i = 1; i < n; i++) {
    int x = a[i], j = i;
    while (j > 0 && score[a[j - 1]] < score[x]) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

/* Breadth-first distances from `src` in the graph where two variables are
 * adjacent when a constraint mentions both.  Constants do not connect
 * anything: the shared constant 1024 must not make every axis a
 * neighbour of every other.  Unreached variables get nv. */
static int distances(const heron_space *sp, int src, int *dist) {
  int *queue = malloc((size_t)(sp->nv > 0 ? sp->nv : 1) * sizeof *queue);
  if (!queue)
    return HERON_ENOMEM;
  for (int v = 0; v < sp->nv; v++)
    dist[v] = sp->nv;
  int head = 0, tail = 0;
  dist[src] = 0;
  queue[tail++] = src;
  while (head < tail) {
    int v = queue[head++];
    const hvar *hv = &sp->v[v];
    for (int w = 0; w < hv->nwatch; w++) {
      const hcon *c = &sp->c[hv->watch[w]];
      for (int i = -2; i < c->nx; i++) {
        int u = i == -2 ? c->z : i == -1 ? c->cond : c->xs[i];
        if (u < 0 || dist[u] <= dist[v] + 1)
          continue;
        dist[u] = dist[v] + 1;
        if (!sp->v[u].is_const)
          queue[tail++] = u;
      }
    }
  }
  free(queue);
  return HERON_OK;
}

/* ---- Sampling and validation ------------------------------------------ */

HERON_API const char *heron_sampler_name(heron_sampler mode) {
  switch (mode) {
  case HERON_SAMPLER_HERON:
    return "heron";
  case HERON_SAMPLER_UNIFORM:
    return "uniform";
  }
  return NULL;
}

HERON_API int heron_sampler_parse(const char *name) {
  for (int m = HERON_SAMPLER_HERON; m <= HERON_SAMPLER_UNIFORM; m++)
    if (name && strcmp(name, heron_sampler_name((heron_sampler)m)) == 0)
      return m;
  return HERON_EINVAL;
}

HERON_API int heron_space_set_sampler(heron_space *sp, heron_sampler mode,
                                      heron_error *err) {
  if (!sp || !sp->finished || !heron_sampler_name(mode))
    return heron_error_set(err, HERON_EINVAL,
                           "a sampler mode needs a finished space and a "
                           "known mode");
  if (mode == HERON_SAMPLER_UNIFORM && !sp->unif) {
    int rc = heron__uniform_build(sp, 0, &sp->unif, err);
    if (rc)
      return rc;
  }
  sp->sampler = mode;
  return HERON_OK;
}

HERON_API heron_sampler heron_space_sampler(const heron_space *sp, int *exact,
                                            double *count) {
  int uniform = sp && sp->sampler == HERON_SAMPLER_UNIFORM;
  double n = -1;
  int ex = uniform && heron__uniform_exact(sp->unif, &n);
  if (exact)
    *exact = ex;
  if (count)
    *count = ex ? n : -1;
  return uniform ? HERON_SAMPLER_UNIFORM : HERON_SAMPLER_HERON;
}

HERON_API int heron_space_sample(const heron_space *sp, heron_rng *rng,
                                 int64_t *out, heron_error *err) {
  if (sp && sp->sampler == HERON_SAMPLER_UNIFORM) {
    int rc = ready(sp, rng, out, err);
    return rc ? rc : heron__uniform_sample(sp, sp->unif, rng, out, err);
  }
  return heron_space_sample_restricted(sp, rng, NULL, NULL, out, err);
}

HERON_API int heron_space_sample_restricted(const heron_space *sp,
                                            heron_rng *rng, const int64_t *a,
                                            const int64_t *b, int64_t *out,
                                            heron_error *err) {
  int rc = ready(sp, rng, out, err);
  if (rc)
    return rc;
  hquery q = {.ra = a, .rb = a ? b : NULL};
  int proved;
  return heron__solve(sp, rng, &q, out, &proved, err);
}

/* The first constraint cfg violates, or -1. */
static int first_violation(const heron_space *sp, const int64_t *cfg) {
  for (int c = 0; c < sp->nc; c++)
    if (!heron__space_holds(sp, c, cfg))
      return c;
  return -1;
}

/* Checks that the set values of cfg lie in their declared domains. */
static int check_domains(const heron_space *sp, const int64_t *cfg,
                         heron_error *err) {
  for (int v = 0; v < sp->nv; v++)
    if (cfg[v] != HERON_UNSET && !in_domain(sp, v, cfg[v]))
      return heron_error_set(err, HERON_EUNSAT,
                             "no valid config: %s = %" PRId64
                             " is outside its domain",
                             sp->v[v].name, cfg[v]);
  return HERON_OK;
}

HERON_API int heron_space_validate(const heron_space *sp, heron_rng *rng,
                                   const int64_t *partial, int64_t *out,
                                   heron_error *err) {
  int rc = ready(sp, rng, out, err);
  if (rc || (rc = check_domains(sp, partial, err)))
    return rc;
  int full = 1;
  for (int v = 0; v < sp->nv && full; v++)
    full = partial[v] != HERON_UNSET;
  if (full) {
    int c = first_violation(sp, partial);
    if (c >= 0)
      return heron__unsat(sp, c, err);
    memmove(out, partial, (size_t)sp->nv * sizeof *out);
    return HERON_OK;
  }
  /* The solver reads the restriction while it writes out, so an aliased
   * partial is copied first. */
  int64_t *copy = malloc((size_t)(sp->nv > 0 ? sp->nv : 1) * sizeof *copy);
  if (!copy)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  memcpy(copy, partial, (size_t)sp->nv * sizeof *copy);
  hquery q = {.ra = copy};
  int proved;
  rc = heron__solve(sp, rng, &q, out, &proved, err);
  free(copy);
  return rc;
}

HERON_API int heron_space_violations(const heron_space *sp, const int64_t *cfg,
                                     int *which, int cap) {
  if (!sp || !cfg || cap < 0 || (cap > 0 && !which))
    return HERON_EINVAL;
  int n = 0;
  for (int c = 0; c < sp->nc; c++) {
    if (heron__space_holds(sp, c, cfg))
      continue;
    if (n < cap)
      which[n] = c;
    n++;
  }
  return n;
}

/* ---- Crossover -------------------------------------------------------- */

HERON_API int heron_space_crossover(const heron_space *sp, heron_rng *rng,
                                    const int64_t *pa, const int64_t *pb,
                                    const int *keys, int nkeys, int64_t *child,
                                    heron_error *err) {
  int rc = ready(sp, rng, child, err);
  if (rc)
    return rc;
  if (!pa || !pb || nkeys < 0 || (nkeys > 0 && !keys))
    return heron_error_set(err, HERON_EINVAL, "crossover needs two parents");
  int64_t *a = unset_array(sp), *b = unset_array(sp);
  if (!a || !b) {
    free(a);
    free(b);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  for (int i = 0; i < nkeys; i++) {
    int k = keys[i];
    if (k < 0 || k >= sp->nv) {
      rc = heron_error_set(err, HERON_EINVAL, "crossover key %d is no variable",
                           k);
      goto done;
    }
    a[k] = pa[k];
    b[k] = pb[k];
  }
  /* Each two-candidate key draws one parent's value at random; when that
   * leads nowhere the search backtracks into the other parent's value, so
   * every combination gets its chance before EUNSAT. */
  hquery q = {.ra = a, .rb = b};
  int proved;
  rc = heron__solve(sp, rng, &q, child, &proved, err);
done:
  free(a);
  free(b);
  return rc;
}

/* ---- Mutation and repair: solving with progressively fewer fixed knobs */

/* One attempt of a keep-what-you-can search: the knobs order[k..n) keep
 * their values vals[] (when those are set and still possible at the root),
 * order[0..k) are free but prefer vals[], and `target` (when >= 0) must
 * differ from its value in vals and is drawn first.  `last` gives the
 * attempt the full failure budget. */
typedef struct keepjob {
  const heron_space *sp;
  heron_rng *rng;
  const int64_t *vals;
  const int *order;
  int n;
  int target;
  int64_t *ra, *ex, *pref;
} keepjob;

static int keep_attempt(keepjob *j, int k, int last, int64_t *out,
                        heron_error *err) {
  const heron_space *sp = j->sp;
  for (int v = 0; v < sp->nv; v++) {
    j->ra[v] = HERON_UNSET;
    j->pref[v] = j->vals[v];
  }
  for (int i = k; i < j->n; i++) {
    int v = j->order[i];
    if (j->vals[v] != HERON_UNSET &&
        heron__dom_has(sp, sp->root, v, j->vals[v]))
      j->ra[v] = j->vals[v];
  }
  hquery q = {.ra = j->ra, .pref = j->pref, .max_fails = last ? 0 : 256};
  if (j->target >= 0) {
    j->ex[j->target] = j->vals[j->target];
    j->pref[j->target] = HERON_UNSET; /* the new value is drawn at random */
    q.ex = j->ex;
    q.first = &j->target;
    q.nfirst = 1;
  }
  int proved;
  heron_error local;
  heron_error_clear(&local);
  int rc = heron__solve(sp, j->rng, &q, out, &proved, last ? err : &local);
  if (j->target >= 0)
    j->ex[j->target] = HERON_UNSET;
  return rc;
}

/* Runs attempts freeing 0, 1, 2, 4, ... of the ordered knobs (start at
 * `from`), stopping at the first success. */
static int keep_search(keepjob *j, int from, int64_t *out, heron_error *err) {
  for (int k = from;; k = k ? 2 * k : 1) {
    if (k > j->n)
      k = j->n;
    int rc = keep_attempt(j, k, k == j->n, out, err);
    if (rc != HERON_EUNSAT || k == j->n)
      return rc;
  }
}

static int keepjob_init(keepjob *j, const heron_space *sp, heron_rng *rng,
                        const int64_t *vals, int *order) {
  memset(j, 0, sizeof *j);
  j->sp = sp;
  j->rng = rng;
  j->vals = vals;
  j->order = order;
  j->target = -1;
  j->ra = malloc((size_t)(sp->nv > 0 ? sp->nv : 1) * sizeof *j->ra);
  j->pref = malloc((size_t)(sp->nv > 0 ? sp->nv : 1) * sizeof *j->pref);
  j->ex = unset_array(sp);
  return (j->ra && j->pref && j->ex) ? HERON_OK : HERON_ENOMEM;
}

static void keepjob_free(keepjob *j) {
  free(j->ra);
  free(j->pref);
  free(j->ex);
}

/* Orders the knobs other than t by distance from t (nearest first, ties
 * at random): the knobs sharing constraints with t are the likeliest to
 * have to move with it.  Returns how many were written. */
static int knobs_near(const heron_space *sp, heron_rng *rng, int t, int *dist,
                      double *score, int *order) {
  int n = 0;
  for (int k = 0; k < sp->nknobs; k++)
    if (sp->knobs[k] != t)
      order[n++] = sp->knobs[k];
  shuffle(order, n, rng);
  if (distances(sp, t, dist))
    return -1;
  for (int v = 0; v < sp->nv; v++)
    score[v] = -(double)dist[v];
  sort_by_score(order, n, score);
  return n;
}

/* Mutates with target t: t changes, the other knobs keep their values
 * where possible. */
static int mutate_one(keepjob *j, int t, int *dist, double *score, int *order,
                      int64_t *out, heron_error *err) {
  int n = knobs_near(j->sp, j->rng, t, dist, score, order);
  if (n < 0)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  j->n = n;
  j->target = t;
  return keep_search(j, 0, out, err);
}

/* Adds mutation target v to targets[0..nt) unless present.  An auxiliary
 * variable follows from the knobs, so it stands for the knobs nearest to it
 * in the constraint graph: drawing a new value for the auxiliary itself
 * would search its whole domain (up to 2^40 for a footprint) for one the
 * knobs can produce.  Returns the new count, or -1 when out of memory. */
static int add_target(const heron_space *sp, int v, int *dist, int *targets,
                      int nt) {
  int best = 0;
  if (!sp->v[v].is_knob) {
    if (distances(sp, v, dist))
      return -1;
    best = INT_MAX;
    for (int k = 0; k < sp->nknobs; k++)
      if (dist[sp->knobs[k]] >= 0 && dist[sp->knobs[k]] < best)
        best = dist[sp->knobs[k]];
  }
  for (int k = 0; k < sp->nknobs; k++) {
    int kv = sp->knobs[k];
    if (sp->v[v].is_knob ? kv != v : dist[kv] != best)
      continue;
    int seen = 0;
    for (int i = 0; i < nt; i++)
      seen |= targets[i] == kv;
    if (!seen)
      targets[nt++] = kv;
  }
  return nt;
}

HERON_API int heron_space_mutate(const heron_space *sp, heron_rng *rng,
                                 const int64_t *cfg, const int *vars,
                                 int nvars_to_mutate, int64_t *out,
                                 heron_error *err) {
  int rc = ready(sp, rng, out, err);
  if (rc)
    return rc;
  if (!cfg || nvars_to_mutate < 0 || (nvars_to_mutate > 0 && !vars))
    return heron_error_set(err, HERON_EINVAL, "mutate needs a config");
  size_t nv = (size_t)(sp->nv > 0 ? sp->nv : 1);
  int *targets = malloc(nv * sizeof *targets),
      *order = malloc(nv * sizeof *order);
  int *dist = malloc(nv * sizeof *dist);
  double *score = malloc(nv * sizeof *score);
  int64_t *vals = malloc(nv * sizeof *vals);
  keepjob j;
  rc = keepjob_init(&j, sp, rng, vals, order);
  if (rc || !targets || !order || !dist || !score || !vals) {
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
    goto done;
  }
  /* out may alias cfg, so the values to keep are copied first. */
  memcpy(vals, cfg, (size_t)sp->nv * sizeof *vals);
  int nt = 0;
  if (nvars_to_mutate > 0) {
    for (int i = 0; i < nvars_to_mutate; i++)
      if (vars[i] >= 0 && vars[i] < sp->nv && !sp->v[vars[i]].is_const)
        nt = add_target(sp, vars[i], dist, targets, nt);
    if (nt < 0) {
      rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
      goto done;
    }
  } else {
    for (int k = 0; k < sp->nknobs; k++)
      targets[nt++] = sp->knobs[k];
  }
  shuffle(targets, nt, rng);
  /* The targets are tried in random order until one can change, which
   * makes "one random knob" skip knobs that have a single legal value. */
  rc = HERON_EUNSAT;
  for (int i = 0; i < nt; i++) {
    heron_error local;
    heron_error_clear(&local);
    rc = mutate_one(&j, targets[i], dist, score, order, out, &local);
    if (rc != HERON_EUNSAT)
      break;
  }
  if (rc == HERON_EUNSAT)
    heron_error_set(err, rc,
                    "no valid config differs in the mutated variables");
done:
  keepjob_free(&j);
  free(targets);
  free(order);
  free(dist);
  free(score);
  free(vals);
  return rc;
}

/* Moves every set value to the nearest value of the root domain (the
 * declared domain narrowed by root propagation). */
static void snap(const heron_space *sp, heron_rng *rng, const int64_t *cfg,
                 int64_t *vals) {
  for (int v = 0; v < sp->nv; v++)
    vals[v] = cfg[v] == HERON_UNSET
                  ? HERON_UNSET
                  : heron__dom_nearest(sp, sp->root, v, cfg[v], rng);
}

/* Blame for each knob: the violated constraints it appears in, plus those
 * of the auxiliary variables it defines (one hop through the aux), so the
 * knobs behind an exceeded footprint are freed first. */
static void blame(const heron_space *sp, const int64_t *vals, double *score) {
  double *aux = calloc((size_t)(sp->nv > 0 ? sp->nv : 1), sizeof *aux);
  for (int v = 0; v < sp->nv; v++)
    score[v] = vals[v] == HERON_UNSET ? 1e9 : 0;
  for (int c = 0; c < sp->nc; c++) {
    if (heron__space_holds(sp, c, vals))
      continue;
    const hcon *hc = &sp->c[c];
    for (int i = -2; i < hc->nx; i++) {
      int u = i == -2 ? hc->z : i == -1 ? hc->cond : hc->xs[i];
      if (u >= 0) {
        score[u] += 1;
        if (aux)
          aux[u] += 1;
      }
    }
  }
  for (int a = 0; aux && a < sp->nv; a++) {
    if (aux[a] == 0 || sp->v[a].is_knob)
      continue;
    for (int w = 0; w < sp->v[a].nwatch; w++) {
      const hcon *hc = &sp->c[sp->v[a].watch[w]];
      for (int i = 0; i < hc->nx; i++)
        if (sp->v[hc->xs[i]].is_knob)
          score[hc->xs[i]] += 0.5 * aux[a];
    }
  }
  free(aux);
}

HERON_API int heron_space_repair(const heron_space *sp, heron_rng *rng,
                                 const int64_t *cfg, int64_t *out,
                                 heron_error *err) {
  int rc = ready(sp, rng, out, err);
  if (rc)
    return rc;
  if (!cfg)
    return heron_error_set(err, HERON_EINVAL, "repair needs a config");
  size_t nv = (size_t)(sp->nv > 0 ? sp->nv : 1);
  int64_t *vals = malloc(nv * sizeof *vals);
  int *order = malloc(nv * sizeof *order);
  double *score = malloc(nv * sizeof *score);
  keepjob j;
  rc = keepjob_init(&j, sp, rng, vals, order);
  if (rc || !vals || !order || !score) {
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
    goto done;
  }
  snap(sp, rng, cfg, vals);
  blame(sp, vals, score);
  for (int k = 0; k < sp->nknobs; k++)
    order[k] = sp->knobs[k];
  shuffle(order, sp->nknobs, rng);
  sort_by_score(order, sp->nknobs, score);
  j.n = sp->nknobs;
  rc = keep_search(&j, 0, out, err);
done:
  keepjob_free(&j);
  free(vals);
  free(order);
  free(score);
  return rc;
}

/* ---- Features, keys, counting ----------------------------------------- */

HERON_API int heron_space_nfeatures(const heron_space *sp) {
  return sp ? sp->nv : 0;
}

HERON_API void heron_space_features(const heron_space *sp, const int64_t *cfg,
                                    double *out) {
  if (!sp || !cfg || !out)
    return;
  for (int v = 0; v < sp->nv; v++) {
    int64_t x = cfg[v];
    if (x == HERON_UNSET)
      out[v] = 0; /* a free variable carries no information */
    else if (sp->v[v].logfeat && x >= 0)
      out[v] = log2(1.0 + (double)x);
    else
      out[v] = (double)x;
  }
}

HERON_API int heron_space_key(const heron_space *sp, const int64_t *cfg,
                              char *buf, size_t cap) {
  if (!sp || !cfg || !buf || cap < 17)
    return HERON_EINVAL;
  /* Values are hashed as little-endian bytes so keys match across
   * machines and builds. */
  uint64_t h = 0;
  for (int k = 0; k < sp->nknobs; k++) {
    /* A knob at the value configs recorded before it existed take is left
     * out, so that they keep their keys (heron__space_var_absent). */
    const hvar *hv = &sp->v[sp->knobs[k]];
    if (hv->has_absent && cfg[sp->knobs[k]] == hv->absent)
      continue;
    uint64_t x = (uint64_t)cfg[sp->knobs[k]];
    unsigned char bytes[8];
    for (int i = 0; i < 8; i++)
      bytes[i] = (unsigned char)(x >> (8 * i));
    h = heron__hash64(bytes, sizeof bytes, h);
  }
  snprintf(buf, cap, "%016" PRIx64, h);
  return HERON_OK;
}

HERON_API int heron_space_count(const heron_space *sp, heron_rng *rng,
                                double limit, double *count, int *exact,
                                heron_error *err) {
  if (!sp || !sp->finished || !rng || !count || !exact)
    return heron_error_set(err, HERON_EINVAL, "count needs a finished space");
  return heron__count(sp, rng, limit, count, exact, err);
}
