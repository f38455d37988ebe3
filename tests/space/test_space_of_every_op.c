/* tests/space/test_space_of_every_op.c - the property that matters to a
 * user: every config the solver samples from a real task's space (built by
 * the target's rules, not a synthetic fixture) satisfies every constraint
 * and lies in every domain, checked by space_fixtures.h's checker, which
 * shares no code with the solver.  Thousands of samples per op. */
#include "space_fixtures.h"

#define SAMPLES 3000

static void check_op(const char *op, const int64_t *shape, int nshape) {
  heron_error err;
  heron_error_clear(&err);
  heron_task *t = NULL;
  heron_task_spec spec = {.op = op, .shape = shape, .nshape = nshape};
  CHECK_OK(heron_task_create(&spec, &t, &err), &err);
  const heron_space *sp = heron_task_space(t);
  int nv = heron_space_nvars(sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 11);
  int bad = 0, failed = 0;
  for (int i = 0; i < SAMPLES; i++) {
    if (heron_space_sample(sp, &rng, cfg, &err) != HERON_OK) {
      failed++;
      continue;
    }
    if (!fx_check(sp, cfg) && bad++ == 0)
      fprintf(stderr, "%s: sample %d invalid: %s\n", op, i, fx_why(sp, cfg));
  }
  free(cfg);
  heron_task_free(t);
  CHECK_MSG(failed == 0, "%s: %d of %d draws failed", op, failed, SAMPLES);
  CHECK_MSG(bad == 0, "%s: %d of %d samples violate the space", op, bad,
            SAMPLES);
}

TEST(every_gemm_sample_satisfies_the_space) {
  check_op("gemm", (int64_t[]){1024, 1024, 1024}, 3);
  check_op("gemm", (int64_t[]){97, 61, 13}, 3);
}

TEST(every_bmm_sample_satisfies_the_space) {
  check_op("bmm", (int64_t[]){12, 512, 64, 512}, 4);
}

TEST(every_gemv_sample_satisfies_the_space) {
  check_op("gemv", (int64_t[]){1024, 256}, 2);
}

TEST(every_c2d_sample_satisfies_the_space) {
  check_op("c2d", (int64_t[]){16, 56, 56, 64, 64, 3, 3, 1, 1, 1}, 10);
  check_op("c2d", (int64_t[]){2, 15, 15, 3, 8, 3, 3, 2, 1, 2}, 10);
}
