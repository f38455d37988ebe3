/* tests/targets/amx/test_amx_rules.c - the amx template's space admits only
 * tile configurations the hardware accepts.
 *
 * The checker here reads the palette-1 rules and the TDPBUSD / TDPBF16PS
 * shape rules from the Intel SDM on its own, from the knobs alone (tile.m,
 * tile.n, tile.k, acc.m, acc.n), never from the space's constraints:
 *
 *   at most 8 tiles: acc.m * acc.n accumulators + acc.m A + acc.n B
 *   every tile: 1 <= rows <= 16, 1 <= colsb <= 64, colsb a multiple of 4
 *   C: tile.m rows x 4 * tile.n bytes; A: tile.m x esize * tile.k; B (VNNI):
 *   tile.k / V rows x 4 * tile.n bytes, tile.k a multiple of V (4 int8, 2
 *   bf16); C.rows == A.rows, C.colsb == B.colsb, A.colsb == 4 * B.rows
 *
 * Configs come from every operation a strategy uses (sample, mutate,
 * crossover, repair); the generator's own tile configuration
 * (heron__amx_tilecfg_of) and the bytes the generated source writes into
 * its LDTILECFG operand must both equal the checker's.  Illegal configs
 * (too many tiles, a bf16 row of 128 bytes) must be counted as violations.
 */
#include "test.h"

#include "amx_test_util.h"
#include "core/task/task.h"
#include "heron/rng.h"

typedef struct knobs {
  int tm, tn, tk, am, an;
} knobs;

static int knob(const heron_space *sp, const char *name) {
  return heron_space_find_var(sp, name);
}

static knobs knobs_of(const heron_space *sp, const int64_t *cfg) {
  knobs k = {(int)cfg[knob(sp, "tile.m")], (int)cfg[knob(sp, "tile.n")],
             (int)cfg[knob(sp, "tile.k")], (int)cfg[knob(sp, "acc.m")],
             (int)cfg[knob(sp, "acc.n")]};
  return k;
}

/* The checker's tile configuration of k: rows and colsb of tiles 0..7. */
static int tiles_of(const knobs *k, int bf16, int *rows, int *colsb) {
  int esize = bf16 ? 2 : 1, v = bf16 ? 2 : 4;
  int n = 0;
  for (int i = 0; i < k->am * k->an; i++, n++)
    rows[n] = k->tm, colsb[n] = 4 * k->tn;
  for (int i = 0; i < k->am; i++, n++)
    rows[n] = k->tm, colsb[n] = esize * k->tk;
  for (int i = 0; i < k->an; i++, n++)
    rows[n] = k->tk / v, colsb[n] = 4 * k->tn;
  return n;
}

/* The hardware's rules; the first broken one in why[cap], or "" . */
static int legal(const knobs *k, int bf16, char *why, size_t cap) {
  int rows[32], colsb[32];
  int v = bf16 ? 2 : 4;
  int n = tiles_of(k, bf16, rows, colsb);
  why[0] = '\0';
  if (n > 8)
    return snprintf(why, cap, "%d tiles", n), 0;
  if (k->tk % v)
    return snprintf(why, cap, "tile.k %d not a multiple of %d", k->tk, v), 0;
  for (int i = 0; i < n; i++) {
    if (rows[i] < 1 || rows[i] > 16)
      return snprintf(why, cap, "tile %d: %d rows", i, rows[i]), 0;
    if (colsb[i] < 1 || colsb[i] > 64 || colsb[i] % 4)
      return snprintf(why, cap, "tile %d: %d bytes a row", i, colsb[i]), 0;
  }
  int c = 0, a = k->am * k->an, b = a + k->am;
  if (rows[c] != rows[a] || colsb[c] != colsb[b] || colsb[a] != 4 * rows[b])
    return snprintf(why, cap, "dot product shapes"), 0;
  return 1;
}

/* The generator's view of the same config must be the checker's, and so
 * must the LDTILECFG bytes its source writes. */
static int generator_agrees(const heron_task *t, const int64_t *cfg,
                            const knobs *k, int bf16, int with_source) {
  int rows[32], colsb[32];
  int n = tiles_of(k, bf16, rows, colsb);
  heron__amx_tilecfg tc;
  heron__amx_tilecfg_of(t->tmpl, cfg, &tc);
  if (tc.ntiles != n)
    return 0;
  for (int i = 0; i < n; i++)
    if (tc.rows[i] != rows[i] || tc.colsb[i] != colsb[i])
      return 0;
  if (!with_source)
    return 1;
  char *src = NULL;
  heron_error err = {0};
  if (heron_task_source(t, cfg, &src, &err) != HERON_OK)
    return 0;
  /* "cfg[16 + 2i] = colsb; cfg[17 + 2i] = 0; cfg[48 + i] = rows;" */
  int ok = 1, seen = 0;
  for (const char *p = strstr(src, "cfg[0] = 1;"); p && ok;
       p = strstr(p + 1, "\n  cfg[")) {
    int i0, cb, i1, i2, r;
    if (sscanf(p, "\n  cfg[%d] = %d; cfg[%d] = 0; cfg[%d] = %d;", &i0, &cb, &i1,
               &i2, &r) != 5)
      continue;
    int i = (i0 - 16) / 2;
    ok = i >= 0 && i < n && i2 == 48 + i && cb == colsb[i] && r == rows[i];
    seen++;
  }
  heron_free(src);
  return ok && seen == n;
}

static heron_task *make_task(const char *op, const int64_t *shape, int n,
                             const char *dtype) {
  heron_task_spec spec = {
      .op = op, .shape = shape, .nshape = n, .dtype = dtype, .target = "amx"};
  heron_task *t = NULL;
  heron_error err = {0};
  if (heron_task_create(&spec, &t, &err) != HERON_OK) {
    fprintf(stderr, "task %s %s: %s\n", op, dtype, err.text);
    return NULL;
  }
  return t;
}

/* Samples, mutates, crosses over and repairs `n` configs of the task and
 * checks every one; counts in seen_* which extremes occurred. */
static int check_task(heron_task *t, int bf16, int n, int *seen_16rows,
                      int *seen_64bytes, int *seen_8tiles) {
  const heron_space *sp = heron_task_space(t);
  int nv = heron_space_nvars(sp);
  int64_t *a = calloc((size_t)nv, sizeof *a),
          *b = calloc((size_t)nv, sizeof *b);
  int64_t *c = calloc((size_t)nv, sizeof *c);
  int *keys = calloc((size_t)nv, sizeof *keys);
  heron_rng rng;
  heron_rng_seed(&rng, 5);
  heron_error err = {0};
  int ok = a && b && c && keys;
  int nk = heron_space_nknobs(sp);
  for (int i = 0; i < nk && ok; i++)
    keys[i] = heron_space_knob(sp, i);
  for (int i = 0; i < n && ok; i++) {
    const int64_t *cfg = a;
    int which = i % 4;
    ok = heron_space_sample(sp, &rng, a, &err) == HERON_OK;
    if (ok && which == 1)
      ok = heron_space_mutate(sp, &rng, a, NULL, 0, c, &err) == HERON_OK,
      cfg = c;
    if (ok && which == 2)
      ok = heron_space_sample(sp, &rng, b, &err) == HERON_OK &&
           heron_space_crossover(sp, &rng, a, b, keys, nk / 2, c, &err) ==
               HERON_OK,
      cfg = c;
    if (ok && which == 3) {
      /* A config with random knob values, repaired. */
      memcpy(c, a, (size_t)nv * sizeof *c);
      c[knob(sp, "acc.m")] = 1 + (int64_t)heron_rng_below(&rng, 4);
      c[knob(sp, "acc.n")] = 1 + (int64_t)heron_rng_below(&rng, 4);
      c[knob(sp, "tile.k")] = 64;
      ok = heron_space_repair(sp, &rng, c, c, &err) == HERON_OK;
      cfg = c;
    }
    if (!ok) {
      fprintf(stderr, "space operation %d failed: %s\n", which, err.text);
      break;
    }
    knobs k = knobs_of(sp, cfg);
    char why[128];
    if (!legal(&k, bf16, why, sizeof why)) {
      fprintf(stderr,
              "illegal tile configuration admitted (%s): tile %dx%dx%d acc "
              "%dx%d\n",
              why, k.tm, k.tn, k.tk, k.am, k.an);
      ok = 0;
      break;
    }
    if (!generator_agrees(t, cfg, &k, bf16, i < 50)) {
      fprintf(stderr,
              "the generator's tile configuration differs: tile "
              "%dx%dx%d acc %dx%d\n",
              k.tm, k.tn, k.tk, k.am, k.an);
      ok = 0;
      break;
    }
    *seen_16rows |= k.tm == 16;
    *seen_64bytes |= (bf16 ? 2 : 1) * k.tk == 64;
    *seen_8tiles |= k.am * k.an + k.am + k.an == 8;
  }
  free(a);
  free(b);
  free(c);
  free(keys);
  return ok;
}

TEST(sampled_configs_have_legal_tile_configurations) {
  static const struct {
    const char *op;
    int64_t shape[4];
    int n;
  } tasks[] = {{"gemm", {17, 33, 20}, 3},   {"gemm", {1, 64, 64}, 3},
               {"gemm", {40, 7, 129}, 3},   {"gemm", {256, 256, 256}, 3},
               {"bmm", {3, 17, 20, 33}, 4}, {"gemv", {33, 70}, 2},
               {"scan", {2, 40, 24}, 3}};
  static const char *const dtypes[] = {"int8", "bf16"};
  int rows16 = 0, bytes64 = 0, tiles8 = 0;
  for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
    for (int d = 0; d < 2; d++) {
      heron_task *t =
          make_task(tasks[i].op, tasks[i].shape, tasks[i].n, dtypes[d]);
      CHECK(t);
      int ok = check_task(t, d, HERON_TEST_SANITIZED ? 200 : 800, &rows16,
                          &bytes64, &tiles8);
      heron_task_free(t);
      CHECK_MSG(ok, "%s %s", tasks[i].op, dtypes[d]);
    }
  /* The limits are reached, not just respected: the space is not cut
   * below what the hardware allows. */
  CHECK(rows16 && bytes64 && tiles8);
}

/* The full-tile rule: GEMM 256^3 (extents multiples of 32 and of a
 * 64-byte row) gets only 16x16 tiles of 64-byte A rows, 2x2 accumulators
 * and blocks that divide M, N and K; 17x33x20 keeps smaller tiles. */
TEST(full_tiles_where_the_extents_allow) {
  static const int64_t big[3] = {256, 256, 256}, odd[3] = {17, 33, 20};
  for (int d = 0; d < 2; d++) {
    const char *dtype = d ? "bf16" : "int8";
    int esize = d ? 2 : 1;
    heron_task *t = make_task("gemm", big, 3, dtype);
    heron_task *u = make_task("gemm", odd, 3, dtype);
    CHECK(t && u);
    const heron_space *sp = heron_task_space(t);
    const heron_space *su = heron_task_space(u);
    int64_t *cfg = calloc((size_t)heron_space_nvars(sp), sizeof *cfg);
    int64_t *cu = calloc((size_t)heron_space_nvars(su), sizeof *cu);
    CHECK(cfg && cu);
    heron_rng rng;
    heron_rng_seed(&rng, 3);
    heron_error err = {0};
    int bad = 0, small = 0;
    for (int i = 0; i < 200; i++) {
      CHECK(heron_space_sample(sp, &rng, cfg, &err) == HERON_OK);
      knobs k = knobs_of(sp, cfg);
      int64_t cm = cfg[knob(sp, "M.o")] * cfg[knob(sp, "m.b")] * k.am * k.tm;
      int64_t cn = cfg[knob(sp, "N.o")] * cfg[knob(sp, "n.b")] * k.an * k.tn;
      int64_t ck = cfg[knob(sp, "K.o")] * cfg[knob(sp, "k.b")] * k.tk;
      if (k.tm != 16 || k.tn != 16 || k.tk * esize != 64 || k.am != 2 ||
          k.an != 2 || cm != 256 || cn != 256 || ck != 256) {
        if (!bad++)
          fprintf(stderr,
                  "%s 256^3: tile %dx%dx%d acc %dx%d covers %lldx%lldx%lld\n",
                  dtype, k.tm, k.tn, k.tk, k.am, k.an, (long long)cm,
                  (long long)cn, (long long)ck);
      }
      CHECK(heron_space_sample(su, &rng, cu, &err) == HERON_OK);
      knobs ku = knobs_of(su, cu);
      small += ku.tm != 16 || ku.tn != 16 || ku.tk * esize != 64;
    }
    free(cfg);
    free(cu);
    heron_task_free(t);
    heron_task_free(u);
    CHECK_EQ(bad, 0);
    CHECK(small > 0);
  }
}

TEST(illegal_tile_configurations_are_violations) {
  static const int64_t shape[3] = {64, 64, 64};
  for (int d = 0; d < 2; d++) {
    heron_task *t = make_task("gemm", shape, 3, d ? "bf16" : "int8");
    CHECK(t);
    const heron_space *sp = heron_task_space(t);
    int nv = heron_space_nvars(sp);
    int64_t *cfg = calloc((size_t)nv, sizeof *cfg);
    heron_rng rng;
    heron_rng_seed(&rng, 1);
    heron_error err = {0};
    CHECK(cfg && heron_space_sample(sp, &rng, cfg, &err) == HERON_OK);
    CHECK_EQ(heron_space_violations(sp, cfg, NULL, 0), 0);
    int64_t keep_m = cfg[knob(sp, "acc.m")], keep_n = cfg[knob(sp, "acc.n")];
    /* 2 x 3 accumulators + 2 A + 3 B = 11 tiles. */
    cfg[knob(sp, "acc.m")] = 2;
    cfg[knob(sp, "acc.n")] = 3;
    int v_tiles = heron_space_violations(sp, cfg, NULL, 0);
    cfg[knob(sp, "acc.m")] = keep_m;
    cfg[knob(sp, "acc.n")] = keep_n;
    /* bf16: 64 K elements are 128 bytes of an A row. */
    int v_row = 0;
    if (d) {
      cfg[knob(sp, "tile.k")] = 64;
      v_row = heron_space_violations(sp, cfg, NULL, 0);
    }
    free(cfg);
    heron_task_free(t);
    CHECK(v_tiles > 0);
    CHECK(!d || v_row > 0);
  }
}

TEST(outside_the_view_is_refused_with_the_reason) {
  static const int64_t gemm[3] = {16, 16, 16};
  heron_task_spec spec = {.op = "gemm",
                          .shape = gemm,
                          .nshape = 3,
                          .dtype = "fp32",
                          .target = "amx"};
  heron_task *t = NULL;
  heron_error err = {0};
  CHECK(heron_task_create(&spec, &t, &err) == HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "supports int8");
  /* The default dtype of the amx target is int8. */
  spec.dtype = NULL;
  CHECK_OK(heron_task_create(&spec, &t, &err), &err);
  CHECK_STR_CONTAINS(heron_task_key(t), "/int8/amx");
  heron_task_free(t);
}
