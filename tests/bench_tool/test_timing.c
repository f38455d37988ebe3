/* tests/bench_tool/test_timing.c - tools/timing.c, the benchmarks' timing
 * loop, with runners timed by their own clock (`timed`): the test decides
 * what each repeat takes and checks what the loop makes of it: the median
 * repeat per call, and the paired ratio to the first runner, round by
 * round, which must hold when the machine's speed changes 500-fold from
 * one round to the next. */
#include "test.h"

#include "tools/timing.h"

/* The machine: every timed call of any runner is counted; the first 2 per
 * runner are the loop's calibration (min_s below one call: `number` stays
 * 1, one call to warm up, one to measure), then each round times one call
 * of each runner in turn.  The slowness of round r is slow[r % 5]. */
typedef struct machine {
  int runners;
  long long calls;
} machine;

typedef struct fake {
  double factor;          /* this runner's ms per call at slowness 1 */
  const double *by_round; /* or, when set, its factor of round r % 9 */
  machine *m;
} fake;

static const double slow[5] = {1, 500, 2, 1, 30};

static double fake_timed(void *self, long long number) {
  fake *f = self;
  long long c = f->m->calls++;
  long long warm = 2LL * f->m->runners;
  long long round = c < warm ? 0 : (c - warm) / f->m->runners;
  double factor = f->by_round && c >= warm ? f->by_round[round % 9] : f->factor;
  return slow[round % 5] * factor * 1e-3 * (double)number;
}

/* rs[0, n) timed by the fakes fs[0, n). */
static void runners_of(cli_runner *rs, fake *fs, int n) {
  memset(rs, 0, (size_t)n * sizeof *rs);
  for (int i = 0; i < n; i++) {
    rs[i].timed = fake_timed;
    rs[i].self = &fs[i];
  }
}

TEST(paired_ratio_holds_round_by_round_while_the_machine_speed_moves) {
  machine m = {3, 0};
  fake fs[3] = {{1.0, NULL, &m}, {1.02, NULL, &m}, {0.5, NULL, &m}};
  cli_runner rs[3];
  runners_of(rs, fs, 3);
  CHECK_EQ(cli_time_runners(rs, 3, 9, 1e-6, 1), 0);
  CHECK_EQ(m.calls, 6 + 27);
  /* Rounds 0-8 at slowness 1,500,2,1,30,1,500,2,1: the median is 2. */
  CHECK(fabs(rs[0].seconds - 2e-3) < 1e-15);
  CHECK(fabs(rs[1].seconds - 2.04e-3) < 1e-15);
  CHECK(fabs(rs[2].seconds - 1e-3) < 1e-15);
  CHECK(rs[0].paired == 1 && rs[0].paired_q1 == 1 && rs[0].paired_q3 == 1);
  CHECK(fabs(rs[1].paired - 1.02) < 1e-12);
  CHECK(fabs(rs[1].paired_q1 - 1.02) < 1e-12);
  CHECK(fabs(rs[1].paired_q3 - 1.02) < 1e-12);
  CHECK(fabs(rs[2].paired - 0.5) < 1e-12);
}

TEST(paired_ratio_follows_the_rounds_not_the_medians) {
  /* Runner 1 is 10% slower than runner 0 in 5 of 9 rounds and 10% faster
   * in 4, while the machine moves: paired, 1.1 with quartiles 0.9 and
   * 1.1; the ratio of the two medians says 0.9 (1.8 ms against 2 ms). */
  static const double f1[9] = {1.1, 0.9, 1.1, 0.9, 1.1, 0.9, 1.1, 0.9, 1.1};
  machine m = {2, 0};
  fake fs[2] = {{1.0, NULL, &m}, {1.0, f1, &m}};
  cli_runner rs[2];
  runners_of(rs, fs, 2);
  CHECK_EQ(cli_time_runners(rs, 2, 9, 1e-6, 1), 0);
  CHECK(fabs(rs[1].seconds / rs[0].seconds - 0.9) < 1e-12);
  CHECK(fabs(rs[1].paired - 1.1) < 1e-12);
  CHECK(fabs(rs[1].paired_q1 - 0.9) < 1e-12);
  CHECK(fabs(rs[1].paired_q3 - 1.1) < 1e-12);
}
