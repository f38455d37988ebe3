/* tests/space/test_space_property.c - property tests: thousands of configs
 * produced by every operation on GEMM-like, conv-like and mixed spaces are
 * checked by the independent checker of space_fixtures.h (never by the
 * library's own evaluation). */
#include "space_fixtures.h"

#define NSAMPLES 5000

/* Samples NSAMPLES configs and checks each; also checks that the library's
 * own violation count agrees with the checker (it must say 0). */
static int sample_and_check(heron_space *sp, uint64_t seed) {
  heron_rng rng;
  heron_rng_seed(&rng, seed);
  int64_t cfg[128];
  for (int i = 0; i < NSAMPLES; i++) {
    heron_error err;
    heron_error_clear(&err);
    if (heron_space_sample(sp, &rng, cfg, &err) != HERON_OK) {
      fprintf(stderr, "sample %d failed: %s\n", i, err.text);
      return 0;
    }
    if (fx_check(sp, cfg) != -1) {
      fprintf(stderr, "sample %d invalid: %s\n", i, fx_why(sp, cfg));
      return 0;
    }
    if (heron_space_violations(sp, cfg, NULL, 0) != 0) {
      fprintf(stderr, "sample %d: library disagrees with the checker\n", i);
      return 0;
    }
  }
  return 1;
}

/* The checker must be able to fail: a sample with one knob moved outside
 * its domain and one with a broken product must both be caught. */
TEST(independent_checker_catches_broken_configs) {
  heron_space *sp = fx_gemm(1024, 1024, 1024);
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  int64_t cfg[128];
  CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
  CHECK_EQ(fx_check(sp, cfg), -1);
  int i0 = heron_space_find_var(sp, "i.0");
  cfg[i0] = 3;
  CHECK(fx_check(sp, cfg) <= -2);
  cfg[i0] = cfg[i0 + 1] == 1 ? 2 : 1; /* a divisor, but the product breaks */
  CHECK(fx_check(sp, cfg) >= 0);
  heron__space_free(sp);
}

TEST(sample_satisfies_every_constraint_of_gemm_like_space) {
  heron_space *sp = fx_gemm(1024, 1024, 1024);
  CHECK(sample_and_check(sp, 2));
  heron__space_free(sp);
}

TEST(sample_satisfies_every_constraint_of_odd_shaped_gemm_space) {
  heron_space *sp = fx_gemm(768, 3072, 1000);
  CHECK(sample_and_check(sp, 3));
  heron__space_free(sp);
}

TEST(sample_satisfies_every_constraint_of_conv_like_space) {
  heron_space *sp = fx_conv();
  CHECK(sample_and_check(sp, 4));
  heron__space_free(sp);
}

TEST(sample_satisfies_every_constraint_of_mixed_space) {
  heron_space *sp = fx_mixed();
  CHECK(sample_and_check(sp, 5));
  heron__space_free(sp);
}

/* Every knob value the checker accepts should show up: the sampler may
 * not silently lose parts of the space.  On the GEMM space every divisor
 * of 1024 is a legal outermost i tile, and every vector width is legal. */
TEST(sample_reaches_every_legal_value_of_gemm_knobs) {
  heron_space *sp = fx_gemm(1024, 1024, 1024);
  heron_rng rng;
  heron_rng_seed(&rng, 6);
  int i0 = heron_space_find_var(sp, "i.0"),
      vec = heron_space_find_var(sp, "vec");
  int unroll = heron_space_find_var(sp, "unroll");
  int seen_i0[2048] = {0}, seen_vec[17] = {0}, seen_unroll[6] = {0};
  int64_t cfg[128];
  for (int i = 0; i < NSAMPLES; i++) {
    CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
    seen_i0[cfg[i0]]++;
    seen_vec[cfg[vec]]++;
    seen_unroll[cfg[unroll]]++;
  }
  for (int d = 1; d <= 1024; d *= 2)
    CHECK_MSG(seen_i0[d] > 0, "i.0 = %d never sampled", d);
  CHECK(seen_vec[1] && seen_vec[4] && seen_vec[8] && seen_vec[16]);
  for (int u = 0; u < 6; u++)
    CHECK(seen_unroll[u] > NSAMPLES / 12);
  heron__space_free(sp);
}

/* Runs the other operations many times on one space and checks every
 * result independently. */
static int operations_stay_valid(heron_space *sp, uint64_t seed, int rounds) {
  heron_rng rng;
  heron_rng_seed(&rng, seed);
  int nv = heron_space_nvars(sp), nk = heron_space_nknobs(sp);
  int64_t pa[128], pb[128], out[128], part[128];
  int keys[128];
  for (int r = 0; r < rounds; r++) {
    heron_error err;
    heron_error_clear(&err);
    if (heron_space_sample(sp, &rng, pa, &err) ||
        heron_space_sample(sp, &rng, pb, &err))
      return fprintf(stderr, "sample: %s\n", err.text), 0;
    int nkeys = 0;
    for (int k = 0; k < nk; k++)
      if (heron_rng_below(&rng, 2))
        keys[nkeys++] = heron_space_knob(sp, k);
    if (heron_space_crossover(sp, &rng, pa, pb, keys, nkeys, out, &err))
      return fprintf(stderr, "crossover: %s\n", err.text), 0;
    if (fx_check(sp, out) != -1)
      return fprintf(stderr, "crossover child: %s\n", fx_why(sp, out)), 0;
    for (int k = 0; k < nkeys; k++)
      if (out[keys[k]] != pa[keys[k]] && out[keys[k]] != pb[keys[k]])
        return fprintf(stderr, "crossover key from neither parent\n"), 0;
    int rc = heron_space_mutate(sp, &rng, pa, NULL, 0, out, &err);
    if (rc != HERON_OK || fx_check(sp, out) != -1)
      return fprintf(stderr, "mutate: %s %s\n", err.text, fx_why(sp, out)), 0;
    /* Repair a config whose knobs are pure noise around the parent's. */
    for (int v = 0; v < nv; v++)
      part[v] = pa[v];
    for (int k = 0; k < nk; k++)
      if (heron_rng_below(&rng, 3) == 0)
        part[heron_space_knob(sp, k)] += (int64_t)heron_rng_below(&rng, 9) - 4;
    if (heron_space_repair(sp, &rng, part, out, &err) ||
        fx_check(sp, out) != -1)
      return fprintf(stderr, "repair: %s %s\n", err.text, fx_why(sp, out)), 0;
    /* Validate a partial made of some of pb's knobs. */
    for (int v = 0; v < nv; v++)
      part[v] = HERON_UNSET;
    for (int k = 0; k < nk; k++)
      if (heron_rng_below(&rng, 2))
        part[heron_space_knob(sp, k)] = pb[heron_space_knob(sp, k)];
    if (heron_space_validate(sp, &rng, part, out, &err) ||
        fx_check(sp, out) != -1)
      return fprintf(stderr, "validate: %s %s\n", err.text, fx_why(sp, out)), 0;
  }
  return 1;
}

TEST(crossover_mutate_repair_validate_stay_valid_on_gemm_like_space) {
  heron_space *sp = fx_gemm(1024, 1024, 1024);
  CHECK(operations_stay_valid(sp, 7, 500));
  heron__space_free(sp);
}

TEST(crossover_mutate_repair_validate_stay_valid_on_conv_like_space) {
  heron_space *sp = fx_conv();
  CHECK(operations_stay_valid(sp, 8, 500));
  heron__space_free(sp);
}

TEST(crossover_mutate_repair_validate_stay_valid_on_mixed_space) {
  heron_space *sp = fx_mixed();
  CHECK(operations_stay_valid(sp, 9, 500));
  heron__space_free(sp);
}

/* The same seed gives the same stream of configs: tuning runs are
 * reproducible. */
TEST(sampling_is_deterministic_for_a_seed) {
  heron_space *sp = fx_conv();
  heron_rng r1, r2;
  heron_rng_seed(&r1, 42);
  heron_rng_seed(&r2, 42);
  int nv = heron_space_nvars(sp);
  int64_t a[128], b[128];
  for (int i = 0; i < 200; i++) {
    CHECK_OK(heron_space_sample(sp, &r1, a, NULL), NULL);
    CHECK_OK(heron_space_sample(sp, &r2, b, NULL), NULL);
    CHECK(memcmp(a, b, sizeof(int64_t) * (size_t)nv) == 0);
  }
  heron__space_free(sp);
}
