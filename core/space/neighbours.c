/* core/space/neighbours.c - heron_space_neighbours: the valid configs one
 * knob away from a valid config (heron/space.h), for local searches.
 *
 * Per knob k, every other knob is fixed to cfg's value and propagated once
 * (the knob's base state); the values propagation leaves k are the
 * candidates.  Each candidate is fixed in a copy of the base state and
 * propagated: a failure proves it invalid; a state with every variable
 * fixed is checked exactly against every constraint (propagation of an
 * expression may be incomplete); a state that leaves auxiliary variables
 * open is completed by the solver with every knob fixed.  Scratch memory
 * is per call, so threads may share the space.
 */
#include <stdlib.h>
#include <string.h>

#include "core/space/space_impl.h"

typedef struct nbjob {
  const heron_space *sp;
  heron_rng *rng;
  const int64_t *cfg;
  hprop p;
  int64_t *base, *st, *ra;
  int64_t *cand; /* the candidate values of the knob, ascending */
  int64_t *out;
  int cap, count;
} nbjob;

/* Whether knob k at value x (the other knobs at cfg's values) is valid;
 * on success the config is written to cfgout. */
static int nb_try(nbjob *j, int k, int64_t x, int64_t *cfgout,
                  heron_error *err) {
  const heron_space *sp = j->sp;
  memcpy(j->st, j->base, sp->slen * sizeof *j->st);
  j->p.s = j->st;
  if (heron__dom_fix(&j->p, k, x) == HS_FAIL ||
      heron__prop_run(&j->p) == HS_FAIL)
    return 0;
  int open = 0;
  for (int v = 0; v < sp->nv && !open; v++)
    open = !hs_fixed(sp, j->st, v);
  if (!open) {
    for (int c = 0; c < sp->nc; c++)
      if (!heron__space_holds(sp, c, j->st))
        return 0;
    memcpy(cfgout, j->st, (size_t)sp->nv * sizeof *cfgout);
    return 1;
  }
  for (int i = 0; i < sp->nknobs; i++)
    j->ra[sp->knobs[i]] = j->cfg[sp->knobs[i]];
  j->ra[k] = x;
  hquery q = {.ra = j->ra};
  int proved;
  heron_error local;
  heron_error_clear(&local);
  int rc = heron__solve(sp, j->rng, &q, cfgout, &proved, &local);
  if (rc == HERON_ENOMEM)
    return heron_error_set(err, rc, "out of memory listing neighbours");
  return rc == HERON_OK;
}

/* Tries value x of knob k and records the neighbour it gives; returns 1
 * when it was valid, 0 when not, or a negative status. */
static int nb_add(nbjob *j, int k, int64_t x, int64_t *scratch,
                  heron_error *err) {
  int64_t *dst =
      j->count < j->cap ? j->out + (size_t)j->count * j->sp->nv : scratch;
  int r = nb_try(j, k, x, dst, err);
  if (r > 0)
    j->count++;
  return r;
}

/* The candidates of knob k in the base state, ascending, in j->cand
 * (set domains), or the interval [*lo, *lo + n) (cand unused).  Returns
 * their number. */
static uint64_t nb_candidates(nbjob *j, int k, int64_t *lo) {
  const heron_space *sp = j->sp;
  const hvar *hv = &sp->v[k];
  *lo = HS_LO(sp, j->base, k);
  if (!hv->vals)
    return heron__dom_size(sp, j->base, k);
  const uint64_t *b = hs_cbits(sp, j->base, k);
  uint64_t n = 0;
  for (int w = 0; w < hv->nwords; w++)
    for (uint64_t word = b[w]; word; word &= word - 1)
      j->cand[n++] = hv->vals[w * 64 + __builtin_ctzll(word)];
  return n;
}

static int64_t nb_value(const nbjob *j, int k, int64_t lo, uint64_t i) {
  return j->sp->v[k].vals ? j->cand[i] : (int64_t)((uint64_t)lo + i);
}

/* The neighbours through knob k. */
static int nb_knob(nbjob *j, int k, int kind, int64_t *scratch,
                   heron_error *err) {
  const heron_space *sp = j->sp;
  memcpy(j->base, sp->root, sp->slen * sizeof *j->base);
  j->p.s = j->base;
  for (int i = 0; i < sp->nknobs; i++) {
    int o = sp->knobs[i];
    if (o != k && heron__dom_fix(&j->p, o, j->cfg[o]) == HS_FAIL)
      return 0;
  }
  if (heron__prop_run(&j->p) == HS_FAIL)
    return 0;
  int64_t lo;
  uint64_t n = nb_candidates(j, k, &lo);
  int64_t here = j->cfg[k];
  if (kind == HERON_NEIGHBOURS_HAMMING) {
    for (uint64_t i = 0; i < n; i++) {
      int64_t x = nb_value(j, k, lo, i);
      int r = x == here ? 0 : nb_add(j, k, x, scratch, err);
      if (r < 0)
        return r;
    }
    return 0;
  }
  /* Adjacent: the nearest valid value below, then the nearest above. */
  uint64_t at = 0; /* the first candidate >= here */
  while (at < n && nb_value(j, k, lo, at) < here)
    at++;
  int r = 0;
  for (uint64_t i = at; i-- > 0 && r == 0;)
    r = nb_add(j, k, nb_value(j, k, lo, i), scratch, err);
  if (r < 0)
    return r;
  r = 0;
  for (uint64_t i = at; i < n && r == 0; i++) {
    int64_t x = nb_value(j, k, lo, i);
    r = x == here ? 0 : nb_add(j, k, x, scratch, err);
  }
  return r < 0 ? r : 0;
}

/* Swaps the "below" and "above" neighbours of one knob when they were
 * written below-first, so the list stays ascending within each knob. */
static void nb_order(nbjob *j, int from, int k) {
  if (j->count - from != 2 || j->count > j->cap)
    return;
  int nv = j->sp->nv;
  int64_t *a = j->out + (size_t)from * nv, *b = a + nv;
  if (a[k] <= b[k])
    return;
  for (int v = 0; v < nv; v++) {
    int64_t t = a[v];
    a[v] = b[v];
    b[v] = t;
  }
}

HERON_API int heron_space_neighbours(const heron_space *sp, heron_rng *rng,
                                     const int64_t *cfg, int kind, int64_t *out,
                                     int cap, heron_error *err) {
  if (!sp || !sp->finished || !rng || !cfg || cap < 0 || (cap > 0 && !out) ||
      (kind != HERON_NEIGHBOURS_HAMMING && kind != HERON_NEIGHBOURS_ADJACENT))
    return heron_error_set(err, HERON_EINVAL,
                           "neighbours need a finished space, an rng, a "
                           "config, a known neighbourhood and room for them");
  if (heron_space_violations(sp, cfg, NULL, 0) != 0)
    return heron_error_set(err, HERON_EINVAL, "neighbours need a valid config");
  for (int v = 0; v < sp->nv; v++)
    if (!heron__dom_has(sp, sp->root, v, cfg[v]))
      return heron_error_set(err, HERON_EINVAL,
                             "neighbours need a valid config: %s is outside "
                             "its domain",
                             sp->v[v].name);
  nbjob j = {.sp = sp, .rng = rng, .cfg = cfg, .out = out, .cap = cap};
  size_t slen = sp->slen ? sp->slen : 1, nv = (size_t)(sp->nv ? sp->nv : 1);
  int maxvals = 1;
  for (int i = 0; i < sp->nknobs; i++)
    if (sp->v[sp->knobs[i]].nvals > maxvals)
      maxvals = sp->v[sp->knobs[i]].nvals;
  j.base = malloc(slen * sizeof *j.base);
  j.st = malloc(slen * sizeof *j.st);
  j.cand = malloc((size_t)maxvals * sizeof *j.cand);
  j.ra = malloc(nv * sizeof *j.ra);
  int64_t *scratch = malloc(nv * sizeof *scratch);
  int rc = HERON_OK;
  if (heron__prop_init(&j.p, sp) || !j.base || !j.st || !j.cand || !j.ra ||
      !scratch) {
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory listing neighbours");
    goto done;
  }
  for (size_t v = 0; v < nv; v++)
    j.ra[v] = HERON_UNSET;
  for (int i = 0; i < sp->nknobs && rc == HERON_OK; i++) {
    int from = j.count;
    rc = nb_knob(&j, sp->knobs[i], kind, scratch, err);
    if (kind == HERON_NEIGHBOURS_ADJACENT)
      nb_order(&j, from, sp->knobs[i]);
  }
done:
  heron__prop_free(&j.p);
  free(j.base);
  free(j.st);
  free(j.cand);
  free(j.ra);
  free(scratch);
  return rc < 0 ? rc : j.count;
}
