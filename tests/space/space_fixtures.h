/* tests/space/space_fixtures.h - synthetic spaces shaped like the ones the
 * schedule rules build, and an independent constraint checker, shared by
 * the space tests.
 *
 * The checker evaluates every constraint from the raw data that
 * heron__space_constraint exposes, with its own arithmetic, so that a bug
 * in the library's evaluation (heron__space_holds) cannot hide a bug in
 * the solver.
 */
#ifndef HERON_TESTS_SPACE_FIXTURES_H
#define HERON_TESTS_SPACE_FIXTURES_H

#include "core/space/builder.h"
#include "test.h"

/* ---- Independent checker ---------------------------------------------- */

/* 1 when constraint c holds on the full config cfg, else 0. */
static int fx_constraint_holds(const heron_space *sp, int c,
                               const int64_t *cfg) {
  int kind, z, nx, cond, nvals;
  const int *xs;
  const int64_t *vals;
  if (heron__space_constraint(sp, c, &kind, &z, &xs, &nx, &cond, &vals,
                              &nvals) != HERON_OK)
    return 0;
  if (cond >= 0 && cfg[cond] != 1)
    return 1;
  __int128 acc;
  switch (kind) {
  case HERON_C_PROD:
    acc = 1;
    for (int i = 0; i < nx; i++) {
      acc *= cfg[xs[i]];
      /* A magnitude past 2^63 never comes back into int64_t unless a
       * zero factor follows (which resets acc to 0), so it is capped just
       * above 2^63 to keep the next multiplication inside __int128. */
      if (acc > ((__int128)1 << 63) || acc < -((__int128)1 << 63))
        acc = (((__int128)1 << 63) + 1) * (acc > 0 ? 1 : -1);
    }
    return acc == cfg[z];
  case HERON_C_SUM:
    acc = 0;
    for (int i = 0; i < nx; i++)
      acc += cfg[xs[i]];
    return acc == cfg[z];
  case HERON_C_EQ:
    return cfg[z] == cfg[xs[0]];
  case HERON_C_NE:
    return cfg[z] != cfg[xs[0]];
  case HERON_C_LE:
    return cfg[z] <= cfg[xs[0]];
  case HERON_C_LT:
    return cfg[z] < cfg[xs[0]];
  case HERON_C_IN:
    for (int i = 0; i < nvals; i++)
      if (vals[i] == cfg[z])
        return 1;
    return 0;
  case HERON_C_SELECT: {
    int64_t s = cfg[xs[0]];
    return s >= 0 && s < nx - 1 && cfg[z] == cfg[xs[1 + s]];
  }
  }
  return 0;
}

/* 1 when v's value lies in its declared domain. */
static int fx_in_domain(const heron_space *sp, int v, int64_t x) {
  int64_t lo, hi;
  const int64_t *vals;
  int n;
  if (heron_space_var_domain(sp, v, &lo, &hi, &vals, &n) != HERON_OK)
    return 0;
  if (x < lo || x > hi)
    return 0;
  if (!vals)
    return 1;
  for (int i = 0; i < n; i++)
    if (vals[i] == x)
      return 1;
  return 0;
}

/* Returns -1 when cfg is valid, else the first violated constraint's
 * index, or -2 - v for variable v out of its domain. */
static int fx_check(const heron_space *sp, const int64_t *cfg) {
  for (int v = 0; v < heron_space_nvars(sp); v++)
    if (!fx_in_domain(sp, v, cfg[v]))
      return -2 - v;
  for (int c = 0; c < heron_space_nconstraints(sp); c++)
    if (!fx_constraint_holds(sp, c, cfg))
      return c;
  return -1;
}

/* Prints why cfg is invalid (for CHECK_MSG). */
static const char *fx_why(const heron_space *sp, const int64_t *cfg) {
  static char buf[256];
  int r = fx_check(sp, cfg);
  if (r == -1)
    return "valid";
  if (r <= -2) {
    int v = -2 - r;
    snprintf(buf, sizeof buf, "%s = %lld outside its domain",
             heron_space_var_name(sp, v), (long long)cfg[v]);
    return buf;
  }
  heron_space_constraint_str(sp, r, buf, sizeof buf);
  return buf;
}

/* ---- Builders ----------------------------------------------------------- */

#define FX_OK(x)                                                               \
  do {                                                                         \
    if ((x) < 0) {                                                             \
      fprintf(stderr, "%s:%d: builder call failed: %s\n", __FILE__, __LINE__,  \
              #x);                                                             \
      abort();                                                                 \
    }                                                                          \
  } while (0)

static int fx_var(heron_space *sp, const char *name, int knob, int64_t lo,
                  int64_t hi) {
  int v = heron__space_var(sp, name, knob, lo, hi);
  FX_OK(v);
  return v;
}

static int fx_post(heron_space *sp, int kind, int z, const int *xs, int nx,
                   int cond) {
  int c = heron__space_post(sp, kind, z, xs, nx, cond, NULL, 0);
  FX_OK(c);
  return c;
}

/* Splits an axis of `extent` into `levels` divisor knobs named
 * <prefix>.0 .. <prefix>.<levels-1>, writing their indices to out[]. */
static void fx_split(heron_space *sp, const char *prefix, int64_t extent,
                     int levels, int *out) {
  char name[64];
  for (int l = 0; l < levels; l++) {
    snprintf(name, sizeof name, "%s.%d", prefix, l);
    out[l] = heron__space_var_divisors(sp, name, 1, extent);
    FX_OK(out[l]);
  }
  fx_post(sp, HERON_C_PROD, heron__space_const(sp, extent), out, levels, -1);
}

/* z = product of xs, as a new auxiliary variable. */
static int fx_prod(heron_space *sp, const char *name, const int *xs, int nx) {
  int z = fx_var(sp, name, 0, 0, INT64_MAX);
  fx_post(sp, HERON_C_PROD, z, xs, nx, -1);
  return z;
}

static int fx_sum(heron_space *sp, const char *name, const int *xs, int nx) {
  int z = fx_var(sp, name, 0, 0, INT64_MAX);
  fx_post(sp, HERON_C_SUM, z, xs, nx, -1);
  return z;
}

static void fx_le_const(heron_space *sp, int x, int64_t limit, int cond) {
  fx_post(sp, HERON_C_LE, x, (int[]){heron__space_const(sp, limit)}, 1, cond);
}

/* A CPU GEMM template of M x N x K: 4-level splits of i and j, a 2-level
 * split of k, unroll and vector-width knobs ("vec divides the inner j
 * tile" as PROD(j.3, vec, q)), a fused parallel extent, register and cache
 * footprints in bytes with limits, a compute-at selector choosing the
 * footprint to limit, and a packing flag conditioning a constraint. */
static heron_space *fx_gemm(int64_t m, int64_t n, int64_t k) {
  heron_space *sp = heron__space_new();
  int ti[4], tj[4], tk[2];
  fx_split(sp, "i", m, 4, ti);
  fx_split(sp, "j", n, 4, tj);
  fx_split(sp, "k", k, 2, tk);
  int unroll = fx_var(sp, "unroll", 1, 0, 5);
  int vec = heron__space_var_set(sp, "vec", 1, (int64_t[]){1, 4, 8, 16}, 4);
  int ca = fx_var(sp, "compute_at", 1, 0, 2);
  int pack = fx_var(sp, "pack", 1, 0, 1);
  (void)unroll;
  int q = fx_var(sp, "vec.q", 0, 1, n);
  fx_post(sp, HERON_C_PROD, tj[3], (int[]){vec, q}, 2, -1);
  int par = fx_prod(sp, "parallel", (int[]){ti[0], tj[0]}, 2);
  fx_le_const(sp, par, 4096, -1);
  fx_post(sp, HERON_C_LE, heron__space_const(sp, 4), (int[]){par}, 1, -1);
  int acc = fx_prod(sp, "acc.regs", (int[]){ti[3], tj[3]}, 2);
  fx_le_const(sp, acc, 256, -1);
  int four = heron__space_const(sp, 4);
  int fa = fx_prod(sp, "A.l2", (int[]){ti[2], ti[3], tk[1]}, 3);
  int fb = fx_prod(sp, "B.l2", (int[]){tk[1], tj[2], tj[3]}, 3);
  int fc = fx_prod(sp, "C.l2", (int[]){ti[2], ti[3], tj[2], tj[3]}, 4);
  int sum = fx_sum(sp, "l2.elems", (int[]){fa, fb, fc}, 3);
  int bytes = fx_prod(sp, "l2.bytes", (int[]){sum, four}, 2);
  fx_le_const(sp, bytes, 1 << 20, -1);
  int a1 = fx_prod(sp, "A.l1", (int[]){ti[3], tk[1]}, 2);
  int b1 = fx_prod(sp, "B.l1", (int[]){tk[1], tj[3]}, 2);
  int c1 = fx_prod(sp, "C.l1", (int[]){ti[3], tj[3]}, 2);
  int foot = fx_var(sp, "ca.foot", 0, 0, INT64_MAX);
  fx_post(sp, HERON_C_SELECT, foot, (int[]){ca, a1, b1, c1}, 4, -1);
  fx_le_const(sp, foot, 8192, -1);
  /* Packing B needs an inner j tile of at least the vector width. */
  fx_post(sp, HERON_C_LE, vec, (int[]){tj[3]}, 1, pack);
  heron_error err;
  heron_error_clear(&err);
  if (heron__space_finish(sp, &err) != HERON_OK) {
    fprintf(stderr, "gemm space: %s\n", err.text);
    abort();
  }
  return sp;
}

/* A conv2d template with 7 axes (n, h, w, co spatial; ci, kh, kw
 * reduction), splits of several depths, footprints, a vector knob and a
 * conditioned limit. */
static heron_space *fx_conv(void) {
  heron_space *sp = heron__space_new();
  int tn[2], th[4], tw[4], tco[4], tci[2], tkh[2], tkw[2];
  fx_split(sp, "n", 2, 2, tn);
  fx_split(sp, "h", 56, 4, th);
  fx_split(sp, "w", 56, 4, tw);
  fx_split(sp, "co", 64, 4, tco);
  fx_split(sp, "ci", 64, 2, tci);
  fx_split(sp, "kh", 3, 2, tkh);
  fx_split(sp, "kw", 3, 2, tkw);
  int vec = heron__space_var_set(sp, "vec", 1, (int64_t[]){1, 2, 4, 8, 16}, 5);
  int unroll = fx_var(sp, "unroll", 1, 0, 512);
  heron__space_post(sp, HERON_C_IN, unroll, NULL, 0, -1,
                    (int64_t[]){0, 16, 64, 512}, 4);
  int big = fx_var(sp, "big_tile", 1, 0, 1);
  int q = fx_var(sp, "vec.q", 0, 1, 64);
  fx_post(sp, HERON_C_PROD, tco[3], (int[]){vec, q}, 2, -1);
  int par = fx_prod(sp, "parallel", (int[]){tn[0], th[0], tw[0], tco[0]}, 4);
  fx_post(sp, HERON_C_LE, heron__space_const(sp, 8), (int[]){par}, 1, -1);
  int out = fx_prod(sp, "out.tile", (int[]){th[3], tw[3], tco[3]}, 3);
  fx_le_const(sp, out, 512, -1);
  int in =
      fx_prod(sp, "in.tile", (int[]){th[2], th[3], tw[2], tw[3], tci[1]}, 5);
  int wt =
      fx_prod(sp, "w.tile", (int[]){tco[2], tco[3], tci[1], tkh[1], tkw[1]}, 5);
  int sum = fx_sum(sp, "l2.elems", (int[]){in, wt, out}, 3);
  fx_le_const(sp, sum, 1 << 16, -1);
  /* Without the big-tile flag the input tile must stay small. */
  int notbig = fx_var(sp, "small", 0, 0, 1);
  fx_post(sp, HERON_C_SUM, heron__space_const(sp, 1), (int[]){big, notbig}, 2,
          -1);
  fx_le_const(sp, in, 1024, notbig);
  fx_post(sp, HERON_C_NE, th[1], (int[]){tw[1]}, 1, big);
  heron_error err;
  heron_error_clear(&err);
  if (heron__space_finish(sp, &err) != HERON_OK) {
    fprintf(stderr, "conv space: %s\n", err.text);
    abort();
  }
  return sp;
}

/* A space mixing every constraint kind over interval domains, including
 * large ones, with conditions on knobs and on auxiliary variables. */
static heron_space *fx_mixed(void) {
  heron_space *sp = heron__space_new();
  int a = fx_var(sp, "a", 1, -20, 20);
  int b = fx_var(sp, "b", 1, 0, 1000000);
  int c = fx_var(sp, "c", 1, 1, 12);
  int flag = fx_var(sp, "flag", 1, 0, 1);
  int sel = fx_var(sp, "sel", 1, 0, 3);
  int d = heron__space_var_set(sp, "d", 1, (int64_t[]){3, 5, 7, 11, 13}, 5);
  int big = fx_var(sp, "big", 1, 0, INT64_MAX / 4);
  int s = fx_var(sp, "s", 0, INT64_MIN / 2, INT64_MAX / 2);
  fx_post(sp, HERON_C_SUM, s, (int[]){a, c, d}, 3, -1);
  fx_post(sp, HERON_C_NE, a, (int[]){c}, 1, -1);
  fx_post(sp, HERON_C_LT, c, (int[]){d}, 1, -1);
  int p = fx_var(sp, "p", 0, 0, INT64_MAX);
  fx_post(sp, HERON_C_PROD, p, (int[]){b, c}, 2, -1);
  fx_le_const(sp, p, 3000000, -1);
  int pick = fx_var(sp, "pick", 0, INT64_MIN, INT64_MAX);
  fx_post(sp, HERON_C_SELECT, pick, (int[]){sel, a, c, d, s}, 5, -1);
  fx_post(sp, HERON_C_LE, heron__space_const(sp, 2), (int[]){pick}, 1, -1);
  fx_post(sp, HERON_C_EQ, a, (int[]){heron__space_const(sp, 7)}, 1, flag);
  heron__space_post(sp, HERON_C_IN, b, NULL, 0, flag,
                    (int64_t[]){10, 100, 1000, 10000}, 4);
  int bb = fx_var(sp, "bb", 0, 0, INT64_MAX);
  fx_post(sp, HERON_C_PROD, bb, (int[]){big, heron__space_const(sp, 3)}, 2, -1);
  heron_error err;
  heron_error_clear(&err);
  if (heron__space_finish(sp, &err) != HERON_OK) {
    fprintf(stderr, "mixed space: %s\n", err.text);
    abort();
  }
  return sp;
}

#endif
