/* tests/space/test_space.c - unit tests of the space: building,
 * propagation of each constraint kind, and every operation of
 * heron/space.h. */
#include <pthread.h>

#include "space_fixtures.h"

static heron_space *finish(heron_space *sp) {
  heron_error err;
  heron_error_clear(&err);
  if (heron__space_finish(sp, &err) != HERON_OK) {
    fprintf(stderr, "finish: %s\n", err.text);
    abort();
  }
  return sp;
}

/* x * y * z == 64 over divisor domains. */
static heron_space *split64(int *t) {
  heron_space *sp = heron__space_new();
  fx_split(sp, "t", 64, 3, t);
  return finish(sp);
}

/* ---- Building and accessors ------------------------------------------- */

TEST(divisor_domains_list_every_divisor_in_order) {
  heron_space *sp = heron__space_new();
  int v = heron__space_var_divisors(sp, "t", 1, 12);
  finish(sp);
  const int64_t *vals;
  int n;
  int64_t lo, hi;
  CHECK_OK(heron_space_var_domain(sp, v, &lo, &hi, &vals, &n), NULL);
  CHECK_EQ(n, 6);
  int64_t want[] = {1, 2, 3, 4, 6, 12};
  for (int i = 0; i < 6; i++)
    CHECK_EQ(vals[i], want[i]);
  CHECK_EQ(lo, 1);
  CHECK_EQ(hi, 12);
  heron__space_free(sp);
}

TEST(constants_are_shared_per_value_and_not_knobs) {
  heron_space *sp = heron__space_new();
  int a = heron__space_const(sp, 1024), b = heron__space_const(sp, 1024);
  int c = heron__space_const(sp, 7);
  CHECK_EQ(a, b);
  CHECK(a != c);
  finish(sp);
  CHECK_EQ(heron_space_nknobs(sp), 0);
  CHECK_EQ(heron_space_var_is_knob(sp, a), 0);
  heron__space_free(sp);
}

TEST(duplicate_variable_names_are_rejected) {
  heron_space *sp = heron__space_new();
  CHECK(heron__space_var(sp, "x", 1, 0, 3) >= 0);
  CHECK_EQ(heron__space_var(sp, "x", 1, 0, 3), HERON_EINVAL);
  heron__space_free(sp);
}

TEST(find_var_and_knob_listing_follow_creation_order) {
  int t[3];
  heron_space *sp = split64(t);
  CHECK_EQ(heron_space_nknobs(sp), 3);
  for (int i = 0; i < 3; i++)
    CHECK_EQ(heron_space_knob(sp, i), t[i]);
  CHECK_EQ(heron_space_find_var(sp, "t.1"), t[1]);
  CHECK_EQ(heron_space_find_var(sp, "nope"), HERON_ENOTFOUND);
  CHECK(strcmp(heron_space_var_name(sp, t[2]), "t.2") == 0);
  CHECK(heron_space_var_name(sp, 999) == NULL);
  heron__space_free(sp);
}

TEST(post_rejects_bad_operands) {
  heron_space *sp = heron__space_new();
  int x = fx_var(sp, "x", 1, 0, 3);
  CHECK_EQ(heron__space_post(sp, HERON_C_EQ, x, (int[]){x, x}, 2, -1, NULL, 0),
           HERON_EINVAL);
  CHECK_EQ(heron__space_post(sp, HERON_C_LE, x, (int[]){42}, 1, -1, NULL, 0),
           HERON_EINVAL);
  CHECK_EQ(heron__space_post(sp, 99, x, (int[]){x}, 1, -1, NULL, 0),
           HERON_EINVAL);
  heron__space_free(sp);
}

TEST(constraint_str_names_variables_and_condition) {
  heron_space *sp = heron__space_new();
  int t[2];
  fx_split(sp, "C.tile.i", 1024, 2, t);
  int pack = fx_var(sp, "pack.A", 1, 0, 1);
  int bytes = fx_var(sp, "bytes.A", 0, 0, INT64_MAX);
  fx_le_const(sp, bytes, 1048576, pack);
  int s = fx_var(sp, "s", 1, 0, 1);
  heron__space_post(sp, HERON_C_IN, s, NULL, 0, -1, (int64_t[]){1, 0}, 2);
  fx_post(sp, HERON_C_SELECT, bytes, (int[]){s, t[0], t[1]}, 3, -1);
  finish(sp);
  char buf[128];
  int n = heron_space_constraint_str(sp, 0, buf, sizeof buf);
  CHECK(strcmp(buf, "C.tile.i.0 * C.tile.i.1 == 1024") == 0);
  CHECK_EQ(n, (int)strlen(buf));
  heron_space_constraint_str(sp, 1, buf, sizeof buf);
  CHECK(strcmp(buf, "if pack.A: bytes.A <= 1048576") == 0);
  heron_space_constraint_str(sp, 2, buf, sizeof buf);
  CHECK(strcmp(buf, "s in {0, 1}") == 0);
  heron_space_constraint_str(sp, 3, buf, sizeof buf);
  CHECK(strcmp(buf, "bytes.A == [C.tile.i.0, C.tile.i.1][s]") == 0);
  /* A short buffer is truncated but still NUL-terminated, and the needed
   * length is reported. */
  CHECK_EQ(heron_space_constraint_str(sp, 0, buf, 5), n);
  CHECK(strcmp(buf, "C.ti") == 0);
  CHECK_EQ(heron_space_constraint_kind(sp, 3), HERON_C_SELECT);
  CHECK_EQ(heron_space_constraint_kind(sp, 4), HERON_EINVAL);
  heron__space_free(sp);
}

TEST(finish_reports_eunsat_naming_the_failing_constraint) {
  heron_space *sp = heron__space_new();
  int x = fx_var(sp, "x", 1, 10, 20);
  fx_le_const(sp, x, 5, -1);
  heron_error err;
  heron_error_clear(&err);
  CHECK_EQ(heron__space_finish(sp, &err), HERON_EUNSAT);
  CHECK_STR_CONTAINS(err.text, "x <= 5");
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  int64_t cfg[4];
  CHECK_EQ(heron_space_sample(sp, &rng, cfg, NULL), HERON_EUNSAT);
  heron__space_free(sp);
}

/* ---- Propagation, one constraint kind at a time ----------------------- */

TEST(prod_fixes_the_last_factor_of_a_split) {
  int t[3];
  heron_space *sp = split64(t);
  heron_rng rng;
  heron_rng_seed(&rng, 2);
  int64_t cfg[8];
  for (int v = 0; v < heron_space_nvars(sp); v++)
    cfg[v] = HERON_UNSET;
  cfg[t[0]] = 4;
  cfg[t[1]] = 2;
  heron_error err;
  heron_error_clear(&err);
  CHECK_OK(heron_space_validate(sp, &rng, cfg, cfg, &err), &err);
  CHECK_EQ(cfg[t[2]], 8);
  heron__space_free(sp);
}

TEST(prod_divisibility_rejects_factors_that_cannot_complete) {
  int t[3];
  heron_space *sp = split64(t);
  heron_rng rng;
  heron_rng_seed(&rng, 3);
  int64_t cfg[8];
  for (int v = 0; v < heron_space_nvars(sp); v++)
    cfg[v] = HERON_UNSET;
  cfg[t[0]] = 32;
  cfg[t[1]] = 4;
  heron_error err;
  heron_error_clear(&err);
  CHECK_EQ(heron_space_validate(sp, &rng, cfg, cfg, &err), HERON_EUNSAT);
  CHECK_STR_CONTAINS(err.text, "t.0 * t.1 * t.2 == 64");
  heron__space_free(sp);
}

TEST(prod_with_huge_bounds_does_not_overflow) {
  heron_space *sp = heron__space_new();
  int x = fx_var(sp, "x", 1, 1, INT64_MAX / 2);
  int y = fx_var(sp, "y", 1, 1, INT64_MAX / 2);
  int z = fx_prod(sp, "z", (int[]){x, y}, 2);
  fx_le_const(sp, z, INT64_MAX / 3, -1);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 4);
  int64_t cfg[8];
  for (int i = 0; i < 200; i++) {
    heron_error err;
    heron_error_clear(&err);
    CHECK_OK(heron_space_sample(sp, &rng, cfg, &err), &err);
    CHECK_MSG(fx_check(sp, cfg) == -1, "%s", fx_why(sp, cfg));
  }
  heron__space_free(sp);
}

TEST(sum_bounds_complete_the_last_term) {
  heron_space *sp = heron__space_new();
  int a = fx_var(sp, "a", 1, 0, 10), b = fx_var(sp, "b", 1, 0, 10);
  fx_post(sp, HERON_C_SUM, heron__space_const(sp, 15), (int[]){a, b}, 2, -1);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 5);
  int64_t cfg[4];
  for (int i = 0; i < 100; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
    CHECK_EQ(cfg[a] + cfg[b], 15);
    CHECK(cfg[a] >= 5 && cfg[b] >= 5);
  }
  int64_t part[4] = {3, HERON_UNSET, 15};
  CHECK_EQ(heron_space_validate(sp, &rng, part, cfg, NULL), HERON_EUNSAT);
  heron__space_free(sp);
}

TEST(eq_ne_le_lt_hold_in_every_sample) {
  heron_space *sp = heron__space_new();
  int a = fx_var(sp, "a", 1, 0, 9), b = fx_var(sp, "b", 1, 0, 9);
  int c = fx_var(sp, "c", 1, 0, 9), d = fx_var(sp, "d", 1, 0, 9);
  int e = fx_var(sp, "e", 0, 0, 1000);
  fx_post(sp, HERON_C_LT, a, (int[]){b}, 1, -1);
  fx_post(sp, HERON_C_LE, b, (int[]){c}, 1, -1);
  fx_post(sp, HERON_C_NE, c, (int[]){d}, 1, -1);
  fx_post(sp, HERON_C_EQ, e, (int[]){d}, 1, -1);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 6);
  int64_t cfg[8];
  int saw_b_eq_c = 0;
  for (int i = 0; i < 500; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
    CHECK(cfg[a] < cfg[b] && cfg[b] <= cfg[c] && cfg[c] != cfg[d] &&
          cfg[e] == cfg[d]);
    saw_b_eq_c |= cfg[b] == cfg[c];
  }
  CHECK(saw_b_eq_c);
  heron__space_free(sp);
}

TEST(in_restricts_an_interval_knob_to_listed_values) {
  heron_space *sp = heron__space_new();
  int u = fx_var(sp, "unroll", 1, 0, 1 << 20);
  heron__space_post(sp, HERON_C_IN, u, NULL, 0, -1,
                    (int64_t[]){0, 16, 64, 512, 1 << 21}, 5);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 7);
  int seen[4] = {0};
  int64_t cfg[4];
  for (int i = 0; i < 400; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
    int k = cfg[u] == 0     ? 0
            : cfg[u] == 16  ? 1
            : cfg[u] == 64  ? 2
            : cfg[u] == 512 ? 3
                            : -1;
    CHECK_MSG(k >= 0, "unroll = %lld", (long long)cfg[u]);
    seen[k]++;
  }
  for (int k = 0; k < 4; k++)
    CHECK(seen[k] > 50);
  heron__space_free(sp);
}

TEST(conditioned_constraint_is_enforced_only_when_condition_is_one) {
  heron_space *sp = heron__space_new();
  int cond = fx_var(sp, "cond", 1, 0, 1);
  int x = fx_var(sp, "x", 1, 0, 100);
  fx_le_const(sp, x, 10, cond);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 8);
  int64_t cfg[4];
  int free_big = 0, on = 0;
  for (int i = 0; i < 400; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
    if (cfg[cond] == 1) {
      CHECK(cfg[x] <= 10);
      on++;
    } else {
      free_big += cfg[x] > 10;
    }
  }
  CHECK(on > 50 && free_big > 50);
  /* With x fixed above the limit, propagation must deduce cond = 0. */
  int64_t part[4] = {HERON_UNSET, 50, HERON_UNSET, HERON_UNSET};
  for (int i = 0; i < 20; i++) {
    CHECK_OK(heron_space_validate(sp, &rng, part, cfg, NULL), NULL);
    CHECK_EQ(cfg[cond], 0);
  }
  int64_t bad[4] = {1, 50, 10};
  CHECK_EQ(heron_space_validate(sp, &rng, bad, cfg, NULL), HERON_EUNSAT);
  heron__space_free(sp);
}

TEST(condition_on_an_auxiliary_variable_is_decided_by_the_search) {
  heron_space *sp = heron__space_new();
  int x = fx_var(sp, "x", 1, 0, 20);
  int cond = fx_var(sp, "cond", 0, 0, 1);
  fx_post(sp, HERON_C_EQ, x, (int[]){heron__space_const(sp, 3)}, 1, cond);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 9);
  int64_t cfg[4];
  for (int i = 0; i < 200; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
    CHECK(cfg[cond] == 0 || cfg[x] == 3);
    CHECK(cfg[x] == 3 || cfg[cond] == 0);
  }
  heron__space_free(sp);
}

TEST(select_equals_the_selected_variable_and_prunes_the_selector) {
  heron_space *sp = heron__space_new();
  int s = fx_var(sp, "s", 1, 0, 2);
  int a = fx_var(sp, "a", 1, 1, 4), b = fx_var(sp, "b", 1, 10, 20);
  int c = fx_var(sp, "c", 1, 2, 3);
  int z = fx_var(sp, "z", 0, 0, 1000);
  fx_post(sp, HERON_C_SELECT, z, (int[]){s, a, b, c}, 4, -1);
  fx_le_const(sp, z, 5, -1);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 10);
  int64_t cfg[8];
  int saw[3] = {0};
  for (int i = 0; i < 300; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
    CHECK(cfg[s] != 1);
    CHECK_EQ(cfg[z], cfg[cfg[s] == 0 ? a : c]);
    saw[cfg[s]]++;
  }
  CHECK(saw[0] > 0 && saw[2] > 0 && saw[1] == 0);
  heron__space_free(sp);
}

/* ---- Operations -------------------------------------------------------- */

TEST(sample_restricted_with_a_alone_fixes_variables) {
  int t[3];
  heron_space *sp = split64(t);
  heron_rng rng;
  heron_rng_seed(&rng, 11);
  int64_t a[8], cfg[8];
  for (int v = 0; v < 8; v++)
    a[v] = HERON_UNSET;
  a[t[1]] = 16;
  for (int i = 0; i < 50; i++) {
    CHECK_OK(heron_space_sample_restricted(sp, &rng, a, NULL, cfg, NULL), NULL);
    CHECK_EQ(cfg[t[1]], 16);
    CHECK_EQ(cfg[t[0]] * cfg[t[1]] * cfg[t[2]], 64);
  }
  heron__space_free(sp);
}

TEST(sample_restricted_with_two_candidates_takes_one_of_them) {
  heron_space *sp = heron__space_new();
  int t[3];
  fx_split(sp, "t", 64, 3, t);
  int big = fx_var(sp, "big", 1, 0, 1000000);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 12);
  int64_t a[8], b[8], cfg[8];
  for (int v = 0; v < 8; v++)
    a[v] = b[v] = HERON_UNSET;
  a[t[0]] = 2, b[t[0]] = 8;
  a[big] = 17, b[big] = 900001; /* an interval cannot hold just these two */
  int saw[4] = {0};
  for (int i = 0; i < 200; i++) {
    CHECK_OK(heron_space_sample_restricted(sp, &rng, a, b, cfg, NULL), NULL);
    CHECK(cfg[t[0]] == 2 || cfg[t[0]] == 8);
    CHECK(cfg[big] == 17 || cfg[big] == 900001);
    saw[(cfg[t[0]] == 8) + 2 * (cfg[big] == 17)]++;
  }
  for (int k = 0; k < 4; k++)
    CHECK(saw[k] > 10);
  /* Candidates that cannot both fit force the one that does. */
  a[t[1]] = 16, b[t[1]] = 64;
  for (int i = 0; i < 50; i++) {
    CHECK_OK(heron_space_sample_restricted(sp, &rng, a, b, cfg, NULL), NULL);
    CHECK_EQ(cfg[t[1]], 16);
  }
  heron__space_free(sp);
}

TEST(validate_checks_a_full_config_and_names_the_violation) {
  int t[3];
  heron_space *sp = split64(t);
  heron_rng rng;
  heron_rng_seed(&rng, 13);
  int64_t cfg[8], out[8];
  CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
  CHECK_OK(heron_space_validate(sp, &rng, cfg, out, NULL), NULL);
  CHECK(memcmp(cfg, out, sizeof(int64_t) * (size_t)heron_space_nvars(sp)) == 0);
  cfg[t[0]] = cfg[t[0]] == 1 ? 2 : 1;
  heron_error err;
  heron_error_clear(&err);
  CHECK_EQ(heron_space_validate(sp, &rng, cfg, out, &err), HERON_EUNSAT);
  CHECK_STR_CONTAINS(err.text, "== 64");
  cfg[t[0]] = 3; /* not a divisor: outside the domain */
  heron_error_clear(&err);
  CHECK_EQ(heron_space_validate(sp, &rng, cfg, out, &err), HERON_EUNSAT);
  CHECK_STR_CONTAINS(err.text, "t.0 = 3");
  heron__space_free(sp);
}

TEST(validate_completes_a_gemm_partial_keeping_set_values) {
  heron_space *sp = fx_gemm(1024, 1024, 1024);
  heron_rng rng;
  heron_rng_seed(&rng, 14);
  int nv = heron_space_nvars(sp);
  int64_t part[64], out[64];
  for (int v = 0; v < nv; v++)
    part[v] = HERON_UNSET;
  part[heron_space_find_var(sp, "i.3")] = 8;
  part[heron_space_find_var(sp, "vec")] = 8;
  part[heron_space_find_var(sp, "pack")] = 1;
  for (int i = 0; i < 50; i++) {
    heron_error err;
    heron_error_clear(&err);
    CHECK_OK(heron_space_validate(sp, &rng, part, out, &err), &err);
    CHECK_MSG(fx_check(sp, out) == -1, "%s", fx_why(sp, out));
    for (int v = 0; v < nv; v++)
      CHECK(part[v] == HERON_UNSET || part[v] == out[v]);
  }
  /* vec = 16 with pack needs j.3 >= 16, and i.3 = 32 leaves acc.regs no
   * room below 256: impossible. */
  part[heron_space_find_var(sp, "vec")] = 16;
  part[heron_space_find_var(sp, "i.3")] = 32;
  heron_error err;
  heron_error_clear(&err);
  CHECK_EQ(heron_space_validate(sp, &rng, part, out, &err), HERON_EUNSAT);
  CHECK_STR_CONTAINS(err.text, "no valid config");
  heron__space_free(sp);
}

TEST(violations_counts_and_lists_violated_constraints) {
  heron_space *sp = heron__space_new();
  int a = fx_var(sp, "a", 1, 0, 9), b = fx_var(sp, "b", 1, 0, 9);
  fx_post(sp, HERON_C_LT, a, (int[]){b}, 1, -1); /* 0 */
  fx_le_const(sp, a, 5, -1);                     /* 1 */
  fx_post(sp, HERON_C_NE, a, (int[]){b}, 1, -1); /* 2 */
  finish(sp);
  int64_t cfg[4] = {7, 7};
  cfg[heron__space_const(sp, 5)] = 5;
  int which[4];
  CHECK_EQ(heron_space_violations(sp, cfg, which, 4), 3);
  CHECK(which[0] == 0 && which[1] == 1 && which[2] == 2);
  CHECK_EQ(heron_space_violations(sp, cfg, which, 1), 3);
  cfg[a] = 1, cfg[b] = 2;
  CHECK_EQ(heron_space_violations(sp, cfg, NULL, 0), 0);
  cfg[b] = HERON_UNSET; /* unset violates the constraints it appears in */
  CHECK_EQ(heron_space_violations(sp, cfg, which, 4), 2);
  heron__space_free(sp);
}

TEST(crossover_child_is_valid_and_takes_key_values_from_a_parent) {
  heron_space *sp = fx_gemm(1024, 1024, 1024);
  heron_rng rng;
  heron_rng_seed(&rng, 15);
  int nv = heron_space_nvars(sp), nk = heron_space_nknobs(sp);
  int keys[32];
  for (int k = 0; k < nk; k++)
    keys[k] = heron_space_knob(sp, k);
  int64_t pa[64], pb[64], child[64];
  int from_a = 0, from_b = 0;
  for (int i = 0; i < 200; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, pa, NULL), NULL);
    CHECK_OK(heron_space_sample(sp, &rng, pb, NULL), NULL);
    heron_error err;
    heron_error_clear(&err);
    CHECK_OK(heron_space_crossover(sp, &rng, pa, pb, keys, nk, child, &err),
             &err);
    CHECK_MSG(fx_check(sp, child) == -1, "%s", fx_why(sp, child));
    for (int k = 0; k < nk; k++) {
      int v = keys[k];
      CHECK(child[v] == pa[v] || child[v] == pb[v]);
      from_a += child[v] == pa[v] && pa[v] != pb[v];
      from_b += child[v] == pb[v] && pa[v] != pb[v];
    }
  }
  CHECK(from_a > 100 && from_b > 100);
  (void)nv;
  heron__space_free(sp);
}

TEST(crossover_reports_eunsat_when_no_combination_fits) {
  int t[3];
  heron_space *sp = split64(t);
  heron_rng rng;
  heron_rng_seed(&rng, 16);
  int64_t pa[8] = {0}, pb[8] = {0}, child[8];
  pa[t[0]] = 32, pb[t[0]] = 64;
  pa[t[1]] = 4, pb[t[1]] = 8;
  int keys[] = {t[0], t[1]};
  heron_error err;
  heron_error_clear(&err);
  CHECK_EQ(heron_space_crossover(sp, &rng, pa, pb, keys, 2, child, &err),
           HERON_EUNSAT);
  heron__space_free(sp);
}

TEST(mutate_changes_a_listed_variable_and_stays_valid) {
  heron_space *sp = fx_gemm(1024, 1024, 1024);
  heron_rng rng;
  heron_rng_seed(&rng, 17);
  int nv = heron_space_nvars(sp);
  int64_t cfg[64], out[64];
  int vec = heron_space_find_var(sp, "vec"),
      i0 = heron_space_find_var(sp, "i.0");
  for (int i = 0; i < 200; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
    int vars[] = {i % 2 ? vec : i0};
    heron_error err;
    heron_error_clear(&err);
    int rc = heron_space_mutate(sp, &rng, cfg, vars, 1, out, &err);
    if (rc == HERON_EUNSAT)
      continue; /* e.g. vec pinned to 1 by a tiny j.3 and no room to move */
    CHECK_OK(rc, &err);
    CHECK_MSG(fx_check(sp, out) == -1, "%s", fx_why(sp, out));
    CHECK(out[vars[0]] != cfg[vars[0]]);
    /* No listed variable: one random knob changes. */
    CHECK_OK(heron_space_mutate(sp, &rng, cfg, NULL, 0, out, &err), &err);
    CHECK_MSG(fx_check(sp, out) == -1, "%s", fx_why(sp, out));
    int changed = 0;
    for (int k = 0; k < heron_space_nknobs(sp); k++)
      changed += out[heron_space_knob(sp, k)] != cfg[heron_space_knob(sp, k)];
    CHECK(changed >= 1);
  }
  (void)nv;
  heron__space_free(sp);
}

TEST(mutate_keeps_unrelated_knob_values) {
  heron_space *sp = heron__space_new();
  int t[3], u[3];
  fx_split(sp, "t", 64, 3, t);
  fx_split(sp, "u", 48, 3, u);
  int w = fx_var(sp, "w", 1, 0, 9);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 18);
  int64_t cfg[16], out[16];
  for (int i = 0; i < 100; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
    CHECK_OK(heron_space_mutate(sp, &rng, cfg, &t[0], 1, out, NULL), NULL);
    CHECK(out[t[0]] != cfg[t[0]]);
    CHECK(out[u[0]] == cfg[u[0]] && out[u[1]] == cfg[u[1]] &&
          out[u[2]] == cfg[u[2]] && out[w] == cfg[w]);
    /* Only one of t.1, t.2 needs to move to absorb the change of t.0. */
    CHECK(out[t[1]] == cfg[t[1]] || out[t[2]] == cfg[t[2]]);
  }
  heron__space_free(sp);
}

TEST(mutate_reports_eunsat_when_nothing_can_change) {
  heron_space *sp = heron__space_new();
  int x = fx_var(sp, "x", 1, 0, 5);
  fx_post(sp, HERON_C_EQ, x, (int[]){heron__space_const(sp, 2)}, 1, -1);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 19);
  int64_t cfg[4], out[4];
  CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
  CHECK_EQ(heron_space_mutate(sp, &rng, cfg, NULL, 0, out, NULL), HERON_EUNSAT);
  heron__space_free(sp);
}

TEST(repair_returns_valid_config_keeping_legal_values) {
  heron_space *sp = fx_gemm(1024, 1024, 1024);
  heron_rng rng;
  heron_rng_seed(&rng, 20);
  int nv = heron_space_nvars(sp), nk = heron_space_nknobs(sp);
  int64_t cfg[64], out[64];
  int kept_total = 0;
  for (int i = 0; i < 200; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
    /* A valid config comes back unchanged. */
    CHECK_OK(heron_space_repair(sp, &rng, cfg, out, NULL), NULL);
    CHECK(memcmp(cfg, out, sizeof(int64_t) * (size_t)nv) == 0);
    /* Break one knob (possibly out of its domain) and repair. */
    int k = heron_space_knob(sp, (int)heron_rng_below(&rng, (uint64_t)nk));
    cfg[k] = cfg[k] * 3 + 1;
    heron_error err;
    heron_error_clear(&err);
    CHECK_OK(heron_space_repair(sp, &rng, cfg, out, &err), &err);
    CHECK_MSG(fx_check(sp, out) == -1, "%s", fx_why(sp, out));
    int kept = 0;
    for (int j = 0; j < nk; j++) {
      int v = heron_space_knob(sp, j);
      kept += v != k && out[v] == cfg[v];
    }
    kept_total += kept;
  }
  /* Most of the untouched knobs survive a repair. */
  CHECK_MSG(kept_total > 200 * (nk - 1) * 7 / 10, "kept %d", kept_total);
  heron__space_free(sp);
}

TEST(repair_snaps_out_of_domain_values_to_the_nearest) {
  heron_space *sp = heron__space_new();
  int x = fx_var(sp, "x", 1, 0, 100);
  int y = heron__space_var_set(sp, "y", 1, (int64_t[]){1, 4, 16, 64}, 4);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 21);
  int64_t cfg[4] = {250, 20}, out[4];
  CHECK_OK(heron_space_repair(sp, &rng, cfg, out, NULL), NULL);
  CHECK_EQ(out[x], 100);
  CHECK_EQ(out[y], 16);
  heron__space_free(sp);
}

/* A small space with an auxiliary variable, a set knob, a small interval
 * knob (searched as a set) and a wide interval knob (searched as an
 * interval): a, b divisors of 12, p = a * b <= 36, c in [0, 6] with
 * c <= a, d in [0, 5000] with d <= c. */
static heron_space *nb_space(int *a, int *b, int *p, int *c, int *d) {
  heron_space *sp = heron__space_new();
  *a = heron__space_var_divisors(sp, "a", 1, 12);
  *b = heron__space_var_divisors(sp, "b", 1, 12);
  *p = fx_prod(sp, "p", (int[]){*a, *b}, 2);
  fx_le_const(sp, *p, 36, -1);
  *c = fx_var(sp, "c", 1, 0, 6);
  fx_post(sp, HERON_C_LE, *c, (int[]){*a}, 1, -1);
  *d = fx_var(sp, "d", 1, 0, 5000);
  fx_post(sp, HERON_C_LE, *d, (int[]){*c}, 1, -1);
  return finish(sp);
}

enum { NB_MAX = 512 };

/* Every valid config by brute force (d > 6 is invalid, as d <= c <= 6). */
static int nb_all(heron_space *sp, int a, int b, int p, int c, int d,
                  int64_t (*all)[8]) {
  const int64_t *dv;
  int nd, n = 0, nv = heron_space_nvars(sp);
  heron_space_var_domain(sp, a, NULL, NULL, &dv, &nd);
  int64_t cfg[8];
  for (int v = 0; v < nv; v++) /* constants */
    cfg[v] = atoll(heron_space_var_name(sp, v));
  for (int i = 0; i < nd; i++)
    for (int j = 0; j < nd; j++)
      for (int x = 0; x <= 6; x++)
        for (int y = 0; y <= 6; y++) {
          cfg[a] = dv[i], cfg[b] = dv[j], cfg[p] = dv[i] * dv[j];
          cfg[c] = x, cfg[d] = y;
          if (fx_check(sp, cfg) == -1 && n < NB_MAX)
            memcpy(all[n++], cfg, sizeof cfg);
        }
  return n;
}

/* The knob in which u and w differ when it is exactly one, else -1. */
static int nb_diff(heron_space *sp, const int64_t *u, const int64_t *w) {
  int k = -1, n = 0;
  for (int i = 0; i < heron_space_nknobs(sp); i++) {
    int v = heron_space_knob(sp, i);
    if (u[v] != w[v])
      k = v, n++;
  }
  return n == 1 ? k : -1;
}

TEST(neighbours_match_brute_force_hamming_and_adjacent) {
  int a, b, p, c, d;
  heron_space *sp = nb_space(&a, &b, &p, &c, &d);
  static int64_t all[NB_MAX][8], flat[NB_MAX * 8];
  int n = nb_all(sp, a, b, p, c, d, all), nv = heron_space_nvars(sp);
  CHECK(n > 50 && n < NB_MAX);
  heron_rng rng;
  heron_rng_seed(&rng, 31);
  long total = 0;
  for (int i = 0; i < n; i++) {
    for (int kind = 0; kind < 2; kind++) {
      heron_error err;
      heron_error_clear(&err);
      int m =
          heron_space_neighbours(sp, &rng, all[i], kind, flat, NB_MAX, &err);
      CHECK_MSG(m >= 0, "neighbours: %s", err.text);
      CHECK_EQ(heron_space_neighbours(sp, &rng, all[i], kind, NULL, 0, NULL),
               m);
      /* Every neighbour (rows of nv values) is valid, one knob away and
       * listed once. */
      for (int x = 0; x < m; x++) {
        CHECK_MSG(fx_check(sp, (flat + (size_t)x * nv)) == -1, "%s",
                  fx_why(sp, (flat + (size_t)x * nv)));
        CHECK(nb_diff(sp, all[i], (flat + (size_t)x * nv)) >= 0);
        for (int y = 0; y < x; y++)
          CHECK(memcmp((flat + (size_t)x * nv), (flat + (size_t)y * nv),
                       sizeof(int64_t) * (size_t)nv) != 0);
      }
      /* None is missed: every valid config one knob away is listed
       * (Hamming), or, per knob, the nearest one below and above. */
      int want = 0;
      for (int w = 0; w < n; w++) {
        int k = nb_diff(sp, all[i], all[w]);
        if (k < 0)
          continue;
        if (kind == HERON_NEIGHBOURS_ADJACENT) {
          int64_t x0 = all[i][k], x = all[w][k];
          int nearer = 0;
          for (int z = 0; z < n && !nearer; z++)
            nearer = nb_diff(sp, all[i], all[z]) == k &&
                     (x < x0 ? all[z][k] > x && all[z][k] < x0
                             : all[z][k] < x && all[z][k] > x0);
          if (nearer)
            continue;
        }
        want++;
        int found = 0;
        for (int x = 0; x < m && !found; x++)
          found = memcmp((flat + (size_t)x * nv), all[w],
                         sizeof(int64_t) * (size_t)nv) == 0;
        CHECK_MSG(found, "config %d misses neighbour %d (kind %d)", i, w, kind);
      }
      CHECK_EQ(m, want);
      total += m;
    }
  }
  CHECK(total > 10 * n);
  /* An invalid config has no neighbours: it is refused. */
  int64_t bad[8];
  memcpy(bad, all[0], sizeof bad);
  bad[d] = bad[c] + 1;
  CHECK_EQ(heron_space_neighbours(sp, &rng, bad, HERON_NEIGHBOURS_HAMMING, flat,
                                  NB_MAX, NULL),
           HERON_EINVAL);
  heron__space_free(sp);
}

TEST(key_is_stable_and_differs_between_configs) {
  heron_space *sp = fx_gemm(1024, 1024, 1024);
  heron_rng rng;
  heron_rng_seed(&rng, 22);
  int64_t a[64], b[64];
  CHECK_OK(heron_space_sample(sp, &rng, a, NULL), NULL);
  memcpy(b, a, sizeof a);
  char ka[17], kb[17];
  CHECK_OK(heron_space_key(sp, a, ka, sizeof ka), NULL);
  CHECK_OK(heron_space_key(sp, b, kb, sizeof kb), NULL);
  CHECK_EQ(strlen(ka), 16);
  CHECK(strcmp(ka, kb) == 0);
  for (int i = 0; i < 16; i++)
    CHECK((ka[i] >= '0' && ka[i] <= '9') || (ka[i] >= 'a' && ka[i] <= 'f'));
  /* Auxiliary variables do not enter the key; knobs do. */
  b[heron_space_find_var(sp, "parallel")] += 1;
  CHECK_OK(heron_space_key(sp, b, kb, sizeof kb), NULL);
  CHECK(strcmp(ka, kb) == 0);
  b[heron_space_find_var(sp, "unroll")] ^= 1;
  CHECK_OK(heron_space_key(sp, b, kb, sizeof kb), NULL);
  CHECK(strcmp(ka, kb) != 0);
  CHECK_EQ(heron_space_key(sp, a, ka, 16), HERON_EINVAL);
  heron__space_free(sp);
}

TEST(features_use_log_scale_for_wide_domains) {
  heron_space *sp = heron__space_new();
  int t = heron__space_var_divisors(sp, "t", 1, 1024);
  int f = fx_var(sp, "f", 1, 0, 5);
  finish(sp);
  CHECK_EQ(heron_space_nfeatures(sp), heron_space_nvars(sp));
  int64_t cfg[4] = {0};
  cfg[t] = 255, cfg[f] = 3;
  double out[4];
  heron_space_features(sp, cfg, out);
  CHECK(fabs(out[t] - 8.0) < 1e-12);
  CHECK(fabs(out[f] - 3.0) < 1e-12);
  heron__space_free(sp);
}

/* Brute force: every assignment of the knobs' domains, aux derived by the
 * space itself would be circular, so this space has knobs only. */
TEST(count_is_exact_on_a_small_space_vs_brute_force) {
  heron_space *sp = heron__space_new();
  int t[3];
  fx_split(sp, "t", 72, 3, t);
  int a = fx_var(sp, "a", 1, 0, 6);
  int c = fx_var(sp, "c", 1, 0, 1);
  fx_post(sp, HERON_C_LE, a, (int[]){t[2]}, 1, c);
  fx_post(sp, HERON_C_NE, t[0], (int[]){t[1]}, 1, -1);
  finish(sp);
  int nv = heron_space_nvars(sp);
  const int64_t *dv;
  int nd;
  heron_space_var_domain(sp, t[0], NULL, NULL, &dv, &nd);
  double brute = 0;
  int64_t cfg[16];
  for (int v = 0; v < nv; v++)
    cfg[v] = heron_space_var_name(sp, v)[0] == '7' ? 72 : 0;
  for (int i = 0; i < nd; i++)
    for (int j = 0; j < nd; j++)
      for (int k = 0; k < nd; k++)
        for (int x = 0; x <= 6; x++)
          for (int y = 0; y <= 1; y++) {
            cfg[t[0]] = dv[i], cfg[t[1]] = dv[j], cfg[t[2]] = dv[k];
            cfg[a] = x, cfg[c] = y;
            brute += fx_check(sp, cfg) == -1;
          }
  heron_rng rng;
  heron_rng_seed(&rng, 23);
  double n;
  int exact;
  CHECK_OK(heron_space_count(sp, &rng, 1e6, &n, &exact, NULL), NULL);
  CHECK(exact);
  CHECK_MSG(n == brute, "count %g, brute force %g", n, brute);
  CHECK(brute > 100);
  heron__space_free(sp);
}

TEST(count_estimates_a_space_beyond_the_limit) {
  /* Two 4-level splits of 1024 = 2^10: each has C(13, 3) = 286 ordered
   * factorizations, 286^2 configs in all. */
  heron_space *sp = heron__space_new();
  int t[4];
  fx_split(sp, "i", 1024, 4, t);
  fx_split(sp, "j", 1024, 4, t);
  finish(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 24);
  double n;
  int exact;
  CHECK_OK(heron_space_count(sp, &rng, 1e9, &n, &exact, NULL), NULL);
  CHECK(exact);
  CHECK_EQ((long long)n, 286LL * 286);
  CHECK_OK(heron_space_count(sp, &rng, 1000, &n, &exact, NULL), NULL);
  CHECK(!exact);
  CHECK_MSG(fabs(n / (286.0 * 286) - 1) < 0.25, "estimate %g", n);
  heron__space_free(sp);
}

/* ---- Threads ------------------------------------------------------------ */

struct thread_job {
  const heron_space *sp;
  uint64_t seed;
  int bad;
};

static void *sample_many(void *arg) {
  struct thread_job *job = arg;
  heron_rng rng;
  heron_rng_seed(&rng, job->seed);
  int64_t cfg[64];
  for (int i = 0; i < 2000; i++)
    if (heron_space_sample(job->sp, &rng, cfg, NULL) != HERON_OK ||
        fx_check(job->sp, cfg) != -1)
      job->bad++;
  return NULL;
}

TEST(threads_sample_one_space_concurrently) {
  heron_space *sp = fx_gemm(1024, 1024, 1024);
  pthread_t th[4];
  struct thread_job jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (struct thread_job){sp, (uint64_t)i + 100, 0};
    CHECK(pthread_create(&th[i], NULL, sample_many, &jobs[i]) == 0);
  }
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++)
    CHECK_EQ(jobs[i].bad, 0);
  heron__space_free(sp);
}
