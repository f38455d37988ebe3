/* core/space/domain.c - narrowing and querying variable domains in a state.
 *
 * Every update keeps the state's invariant: for a set-domain variable, lo
 * and hi are the smallest and largest values whose bit is set, so bounds
 * reasoning never needs to look at the bits.  Updates that change a domain
 * queue the constraints watching it; updates that empty it return HS_FAIL
 * and leave the state to be thrown away by the caller.
 */
#include "core/space/space_impl.h"

int heron__vals_lower(const int64_t *vals, int n, int64_t val) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (vals[mid] < val)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* ---- Bit helpers ------------------------------------------------------ */

/* The first set bit at index >= i and < n, or -1. */
static int next_bit(const uint64_t *b, int n, int i) {
  if (i < 0)
    i = 0;
  if (i >= n)
    return -1;
  int w = i / 64;
  uint64_t word = b[w] & (~0ull << (i % 64));
  int nw = (n + 63) / 64;
  for (;;) {
    if (word) {
      int j = w * 64 + __builtin_ctzll(word);
      return j < n ? j : -1;
    }
    if (++w >= nw)
      return -1;
    word = b[w];
  }
}

/* The last set bit at index <= i, or -1. */
static int prev_bit(const uint64_t *b, int i) {
  if (i < 0)
    return -1;
  int w = i / 64;
  int sh = 63 - i % 64;
  uint64_t word = (b[w] << sh) >> sh;
  for (;;) {
    if (word)
      return w * 64 + 63 - __builtin_clzll(word);
    if (--w < 0)
      return -1;
    word = b[w];
  }
}

/* Clears the bits with index < i. */
static void clear_below(uint64_t *b, int i) {
  int w = i / 64;
  for (int k = 0; k < w; k++)
    b[k] = 0;
  if (i % 64)
    b[w] &= ~0ull << (i % 64);
}

/* Clears the bits with index > i among n bits. */
static void clear_above(uint64_t *b, int n, int i) {
  int w = i / 64, nw = (n + 63) / 64;
  if (i % 64 != 63)
    b[w] &= (2ull << (i % 64)) - 1;
  for (int k = w + 1; k < nw; k++)
    b[k] = 0;
}

static int bit(const uint64_t *b, int i) { return (b[i / 64] >> (i % 64)) & 1; }

/* The index of value val in the variable's set, or -1. */
static int index_of(const hvar *hv, int64_t val) {
  int i = heron__vals_lower(hv->vals, hv->nvals, val);
  return (i < hv->nvals && hv->vals[i] == val) ? i : -1;
}

/* ---- Updates ---------------------------------------------------------- */

int heron__dom_setmin(hprop *p, int x, int64_t m) {
  const heron_space *sp = p->sp;
  int64_t *s = p->s;
  if (m <= HS_LO(sp, s, x))
    return 0;
  if (m > HS_HI(sp, s, x))
    return HS_FAIL;
  const hvar *hv = &sp->v[x];
  if (hv->vals) {
    uint64_t *b = hs_bits(sp, s, x);
    /* hi's bit is set and hi >= m, so a set bit at or after m exists. */
    int j = next_bit(b, hv->nvals, heron__vals_lower(hv->vals, hv->nvals, m));
    clear_below(b, j);
    HS_LO(sp, s, x) = hv->vals[j];
  } else {
    HS_LO(sp, s, x) = m;
  }
  heron__prop_touch(p, x);
  return 0;
}

int heron__dom_setmax(hprop *p, int x, int64_t m) {
  const heron_space *sp = p->sp;
  int64_t *s = p->s;
  if (m >= HS_HI(sp, s, x))
    return 0;
  if (m < HS_LO(sp, s, x))
    return HS_FAIL;
  const hvar *hv = &sp->v[x];
  if (hv->vals) {
    uint64_t *b = hs_bits(sp, s, x);
    int i = heron__vals_lower(hv->vals, hv->nvals, m);
    if (i == hv->nvals || hv->vals[i] != m)
      i--; /* the last entry <= m */
    int j = prev_bit(b, i);
    clear_above(b, hv->nvals, j);
    HS_HI(sp, s, x) = hv->vals[j];
  } else {
    HS_HI(sp, s, x) = m;
  }
  heron__prop_touch(p, x);
  return 0;
}

int heron__dom_fix(hprop *p, int x, int64_t val) {
  const heron_space *sp = p->sp;
  int64_t *s = p->s;
  if (val < HS_LO(sp, s, x) || val > HS_HI(sp, s, x))
    return HS_FAIL;
  if (HS_LO(sp, s, x) == HS_HI(sp, s, x))
    return 0;
  const hvar *hv = &sp->v[x];
  if (hv->vals) {
    uint64_t *b = hs_bits(sp, s, x);
    int i = index_of(hv, val);
    if (i < 0 || !bit(b, i))
      return HS_FAIL;
    for (int k = 0; k < hv->nwords; k++)
      b[k] = 0;
    b[i / 64] = 1ull << (i % 64);
  }
  HS_LO(sp, s, x) = HS_HI(sp, s, x) = val;
  heron__prop_touch(p, x);
  return 0;
}

int heron__dom_remove(hprop *p, int x, int64_t val) {
  const heron_space *sp = p->sp;
  int64_t *s = p->s;
  int64_t lo = HS_LO(sp, s, x), hi = HS_HI(sp, s, x);
  if (val < lo || val > hi)
    return 0;
  if (lo == hi)
    return HS_FAIL;
  const hvar *hv = &sp->v[x];
  if (hv->vals) {
    uint64_t *b = hs_bits(sp, s, x);
    int i = index_of(hv, val);
    if (i < 0 || !bit(b, i))
      return 0;
    b[i / 64] &= ~(1ull << (i % 64));
    if (val == lo)
      HS_LO(sp, s, x) = hv->vals[next_bit(b, hv->nvals, i + 1)];
    if (val == hi)
      HS_HI(sp, s, x) = hv->vals[prev_bit(b, i - 1)];
  } else if (val == lo) {
    HS_LO(sp, s, x) = lo + 1;
  } else if (val == hi) {
    HS_HI(sp, s, x) = hi - 1;
  } else {
    return 0; /* an interval cannot hold a hole; the leaf check decides */
  }
  heron__prop_touch(p, x);
  return 0;
}

/* Interval domains are narrowed from both ends only while values are
 * rejected, and only this far, so a filter never walks a huge range. */
#define HS_FILTER_SCAN 64

static int filter_interval(hprop *p, int x, int (*keep)(int64_t, const void *),
                           const void *ctx) {
  const heron_space *sp = p->sp;
  int64_t *s = p->s;
  int64_t lo = HS_LO(sp, s, x), hi = HS_HI(sp, s, x);
  for (int k = 0; k < HS_FILTER_SCAN && lo <= hi && !keep(lo, ctx); k++)
    lo++;
  for (int k = 0; k < HS_FILTER_SCAN && lo <= hi && !keep(hi, ctx); k++)
    hi--;
  if (lo > hi)
    return HS_FAIL;
  if (lo == HS_LO(sp, s, x) && hi == HS_HI(sp, s, x))
    return 0;
  HS_LO(sp, s, x) = lo;
  HS_HI(sp, s, x) = hi;
  heron__prop_touch(p, x);
  return 0;
}

int heron__dom_filter(hprop *p, int x, int (*keep)(int64_t, const void *),
                      const void *ctx) {
  const heron_space *sp = p->sp;
  const hvar *hv = &sp->v[x];
  if (!hv->vals)
    return filter_interval(p, x, keep, ctx);
  int64_t *s = p->s;
  uint64_t *b = hs_bits(sp, s, x);
  int first = index_of(hv, HS_LO(sp, s, x));
  int last = index_of(hv, HS_HI(sp, s, x));
  int changed = 0;
  for (int i = next_bit(b, hv->nvals, first); i >= 0 && i <= last;
       i = next_bit(b, hv->nvals, i + 1)) {
    if (!keep(hv->vals[i], ctx)) {
      b[i / 64] &= ~(1ull << (i % 64));
      changed = 1;
    }
  }
  if (!changed)
    return 0;
  int lo = next_bit(b, hv->nvals, first);
  if (lo < 0 || lo > last)
    return HS_FAIL;
  HS_LO(sp, s, x) = hv->vals[lo];
  HS_HI(sp, s, x) = hv->vals[prev_bit(b, last)];
  heron__prop_touch(p, x);
  return 0;
}

/* ---- Queries ---------------------------------------------------------- */

int heron__dom_has(const heron_space *sp, const int64_t *s, int x,
                   int64_t val) {
  if (val < HS_LO(sp, s, x) || val > HS_HI(sp, s, x))
    return 0;
  const hvar *hv = &sp->v[x];
  if (!hv->vals)
    return 1;
  int i = index_of(hv, val);
  return i >= 0 && bit(hs_cbits(sp, s, x), i);
}

uint64_t heron__dom_size(const heron_space *sp, const int64_t *s, int x) {
  const hvar *hv = &sp->v[x];
  if (hv->vals) {
    const uint64_t *b = hs_cbits(sp, s, x);
    uint64_t n = 0;
    for (int k = 0; k < hv->nwords; k++)
      n += (uint64_t)__builtin_popcountll(b[k]);
    return n;
  }
  uint64_t n = (uint64_t)HS_HI(sp, s, x) - (uint64_t)HS_LO(sp, s, x) + 1;
  return n ? n : UINT64_MAX; /* 0 means the full 2^64 range wrapped */
}

int64_t heron__dom_kth(const heron_space *sp, const int64_t *s, int x,
                       uint64_t k) {
  const hvar *hv = &sp->v[x];
  if (!hv->vals)
    return (int64_t)((uint64_t)HS_LO(sp, s, x) + k);
  const uint64_t *b = hs_cbits(sp, s, x);
  for (int w = 0; w < hv->nwords; w++) {
    uint64_t word = b[w];
    uint64_t c = (uint64_t)__builtin_popcountll(word);
    if (k >= c) {
      k -= c;
      continue;
    }
    /* Drop the k lowest set bits; the next one is the answer. */
    for (; k > 0; k--)
      word &= word - 1;
    return hv->vals[w * 64 + __builtin_ctzll(word)];
  }
  return HS_LO(sp, s, x); /* unreachable when k < size */
}

/* |a - b| without overflow. */
static uint64_t dist(int64_t a, int64_t b) {
  return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

int64_t heron__dom_nearest(const heron_space *sp, const int64_t *s, int x,
                           int64_t target, heron_rng *rng) {
  int64_t lo = HS_LO(sp, s, x), hi = HS_HI(sp, s, x);
  if (target <= lo)
    return lo;
  if (target >= hi)
    return hi;
  const hvar *hv = &sp->v[x];
  if (!hv->vals)
    return target;
  const uint64_t *b = hs_cbits(sp, s, x);
  int i = heron__vals_lower(hv->vals, hv->nvals, target);
  int r = next_bit(b, hv->nvals, i), l = prev_bit(b, i - 1);
  /* lo < target < hi, so both neighbours exist. */
  uint64_t dl = dist(target, hv->vals[l]), dr = dist(hv->vals[r], target);
  if (dl != dr)
    return dl < dr ? hv->vals[l] : hv->vals[r];
  return (heron_rng_next(rng) & 1) ? hv->vals[l] : hv->vals[r];
}
