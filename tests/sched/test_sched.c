/* tests/sched/test_sched.c - the cpu schedule template: which knobs the
 * rules create from an op description, and that the constraints they post
 * keep every sampled config inside the register file and the caches. */
#include "test.h"

#include <time.h>

#include "core/op/op.h"
#include "core/sched/sched.h"
#include "core/space/builder.h"
#include "core/targets/cpu/template.h"
#include "core/targets/hw.h"

/* A fixed AVX-512 machine like the one the template was tuned on, so the
 * tests do not depend on where they run. */
static heron__hw zen4(void) {
  heron__hw hw;
  memset(&hw, 0, sizeof hw);
  snprintf(hw.name, sizeof hw.name, "test zen4");
  snprintf(hw.target, sizeof hw.target, "cpu");
  hw.cores = 2;
  hw.l1_bytes = 32 * 1024;
  hw.l2_bytes = 1024 * 1024;
  hw.l3_bytes = 32 * 1024 * 1024;
  hw.vector_bytes = 64;
  hw.vector_regs = 32;
  hw.has_fma = hw.has_avx2 = hw.has_avx512 = 1;
  return hw;
}

typedef struct built {
  heron__op op;
  heron__template *t;
  heron_space *sp;
} built;

static int build(built *b, const char *op, const int64_t *shape, int n,
                 const heron__hw *hw, heron_error *err) {
  memset(b, 0, sizeof *b);
  int rc = heron__op_build(op, shape, n, HERON__FP32, &b->op, err);
  if (rc != HERON_OK)
    return rc;
  return heron__template_build(&b->op, hw, "cpu", &b->t, &b->sp, err);
}

static void unbuild(built *b) {
  heron__template_free(b->t);
  heron__space_free(b->sp);
}

static int has_knob(const heron_space *sp, const char *name) {
  int v = heron_space_find_var(sp, name);
  return v >= 0 && heron_space_var_is_knob(sp, v) == 1;
}

static int64_t val(const heron_space *sp, const int64_t *cfg,
                   const char *name) {
  int v = heron_space_find_var(sp, name);
  return v >= 0 ? cfg[v] : -1;
}

TEST(gemm_template_has_the_documented_knobs) {
  heron__hw hw = zen4();
  built b;
  heron_error err = {0};
  CHECK_OK(build(&b, "gemm", (int64_t[]){1024, 1024, 1024}, 3, &hw, &err),
           &err);
  static const char *const names[] = {"i.t0",   "i.t1",   "i.t2",   "i.t3",
                                      "j.t0",   "j.t1",   "j.t2",   "j.t3",
                                      "k.t0",   "k.t1",   "vec",    "acc_at",
                                      "unroll", "A.pack", "B.pack", "prefetch"};
  int n = (int)(sizeof names / sizeof names[0]);
  for (int i = 0; i < n; i++)
    CHECK_MSG(has_knob(b.sp, names[i]), "missing knob %s", names[i]);
  CHECK_EQ(heron_space_nknobs(b.sp), n);
  /* The auxiliary variables the constraint rules rely on. */
  CHECK(heron_space_find_var(b.sp, "fused") >= 0);
  CHECK(heron_space_find_var(b.sp, "acc.floats") >= 0);
  CHECK(heron_space_find_var(b.sp, "ws.L2") >= 0);
  CHECK(heron_space_find_var(b.sp, "ws.L1") >= 0);
  CHECK(heron_space_find_var(b.sp, "regs.need") >= 0);
  CHECK(heron_space_find_var(b.sp, "pack.elems") >= 0);
  int nv = heron_space_nvars(b.sp);
  CHECK_MSG(nv >= 20 && nv <= 70, "gemm 1024^3 has %d variables", nv);
  /* The vector widths are the hardware's: 16 lanes on AVX-512. */
  const int64_t *vals;
  int nvals;
  CHECK_OK(heron_space_var_domain(b.sp, heron_space_find_var(b.sp, "vec"), NULL,
                                  NULL, &vals, &nvals),
           NULL);
  CHECK_EQ(nvals, 4);
  CHECK_EQ(vals[3], 16);
  unbuild(&b);
}

/* The vector widths are the hardware's that divide the vectorized axis;
 * that axis is the output-contiguous one unless the widest vector does not
 * divide it and another output axis takes it whole. */
static int vec_domain(const char *op, const int64_t *shape, int n,
                      const heron__hw *hw, const char **axis, int64_t *vals,
                      int cap) {
  built b;
  heron_error err = {0};
  if (build(&b, op, shape, n, hw, &err) != HERON_OK)
    return -1;
  const int64_t *v;
  int nv = 0;
  heron_space_var_domain(b.sp, heron_space_find_var(b.sp, "vec"), NULL, NULL,
                         &v, &nv);
  for (int i = 0; i < nv && i < cap; i++)
    vals[i] = v[i];
  static char name[16];
  snprintf(name, sizeof name, "%s",
           b.op.axes[heron__cpu_sched_of(b.t)->vec_axis].name);
  *axis = name;
  unbuild(&b);
  return nv;
}

TEST(vector_widths_follow_the_hardware_and_the_extent) {
  heron__hw hw = zen4();
  hw.vector_bytes = 32; /* AVX2: 8 lanes at most */
  hw.vector_regs = 16;
  const char *axis = "";
  int64_t vals[8];
  /* N = 12: 8 does not divide it, M = 64 does: lanes along i. */
  CHECK_EQ(vec_domain("gemm", (int64_t[]){64, 12, 32}, 3, &hw, &axis, vals, 8),
           3);
  CHECK_STR_CONTAINS(axis, "i");
  CHECK_EQ(vals[2], 8);
  /* M = 36 and N = 12: neither divides by 8, so the contiguous j, whose
   * widths need not divide it (the edge tile stores the lanes inside). */
  CHECK_EQ(vec_domain("gemm", (int64_t[]){36, 12, 32}, 3, &hw, &axis, vals, 8),
           3);
  CHECK_STR_CONTAINS(axis, "j");
  CHECK_EQ(vals[0], 1);
  CHECK_EQ(vals[1], 4);
  CHECK_EQ(vals[2], 8);
  /* N = 6: no width longer than the axis. */
  CHECK_EQ(vec_domain("gemm", (int64_t[]){36, 6, 32}, 3, &hw, &axis, vals, 8),
           2);
  CHECK_STR_CONTAINS(axis, "j");
  CHECK_EQ(vals[1], 4);
  /* gemv: no input reads i contiguously, so the lanes run along k. */
  CHECK_EQ(vec_domain("gemv", (int64_t[]){64, 40}, 2, &hw, &axis, vals, 8), 3);
  CHECK_STR_CONTAINS(axis, "k");
  /* gemm with N of 1 is a gemv: lanes along k. */
  CHECK_EQ(vec_domain("gemm", (int64_t[]){64, 1, 40}, 3, &hw, &axis, vals, 8),
           3);
  CHECK_STR_CONTAINS(axis, "k");
  /* N = 32 takes the widest vector itself. */
  CHECK_EQ(vec_domain("gemm", (int64_t[]){36, 32, 32}, 3, &hw, &axis, vals, 8),
           3);
  CHECK_STR_CONTAINS(axis, "j");
}

/* The prefetch distance is a knob of {0, 2, 4, 8, 16} steps where inputs
 * are read across rows, and no knob where the lanes run along the
 * reduction (gemv's loads are sequential streams). */
TEST(prefetch_is_a_distance_knob_except_along_the_reduction) {
  heron__hw hw = zen4();
  built b;
  heron_error err = {0};
  CHECK_OK(build(&b, "gemm", (int64_t[]){77, 2304, 768}, 3, &hw, &err), &err);
  int v = heron_space_find_var(b.sp, "prefetch");
  CHECK(has_knob(b.sp, "prefetch"));
  const int64_t *vals;
  int nv = 0;
  heron_space_var_domain(b.sp, v, NULL, NULL, &vals, &nv);
  CHECK_EQ(nv, 5);
  static const int64_t want[] = {0, 2, 4, 8, 16};
  for (int i = 0; i < nv && i < 5; i++)
    CHECK_EQ(vals[i], want[i]);
  unbuild(&b);
  CHECK_OK(build(&b, "gemv", (int64_t[]){1000, 2048}, 2, &hw, &err), &err);
  CHECK(!has_knob(b.sp, "prefetch"));
  unbuild(&b);
}

/* The output's stage is a knob where the output's lanes lie a stride apart
 * (a convolution vectorized along its NCHW channels) and nowhere else, and
 * a config has it on only when its reduction is split. */
TEST(output_stage_only_for_strided_lanes_and_split_reductions) {
  heron__hw hw = zen4();
  built b;
  heron_error err = {0};
  CHECK_OK(build(&b, "gemm", (int64_t[]){77, 2304, 768}, 3, &hw, &err), &err);
  CHECK(heron_space_find_var(b.sp, "C.stage") < 0);
  unbuild(&b);
  CHECK_OK(build(&b, "c2d", (int64_t[]){1, 28, 28, 128, 128, 3, 3, 1, 1, 1}, 10,
                 &hw, &err),
           &err);
  CHECK(has_knob(b.sp, "out.stage"));
  int nv = heron_space_nvars(b.sp), staged = 0;
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 9);
  for (int i = 0; i < 300; i++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    if (!val(b.sp, cfg, "out.stage"))
      continue;
    staged++;
    int64_t split = val(b.sp, cfg, "ci.t0") * val(b.sp, cfg, "kh.t0") *
                    val(b.sp, cfg, "kw.t0");
    CHECK_MSG(split >= 2, "config %d: out.stage 1 with the reduction whole", i);
  }
  CHECK(staged > 0);
  free(cfg);
  unbuild(&b);
}

TEST(extent_one_axes_get_no_knobs) {
  heron__hw hw = zen4();
  built b;
  heron_error err = {0};
  CHECK_OK(build(&b, "gemm", (int64_t[]){1, 64, 32}, 3, &hw, &err), &err);
  for (int l = 0; l < 4; l++) {
    char name[16];
    snprintf(name, sizeof name, "i.t%d", l);
    CHECK_MSG(heron_space_find_var(b.sp, name) < 0, "%s exists for M=1", name);
  }
  CHECK(has_knob(b.sp, "j.t3"));
  CHECK(has_knob(b.sp, "k.t1"));
  unbuild(&b);
}

TEST(knobs_come_from_the_description_of_conv2d) {
  heron__hw hw = zen4();
  built b;
  heron_error err = {0};
  /* N=2 H=W=9 CI=3 CO=5 KH=KW=3 stride 2 pad 1 dilation 1 */
  CHECK_OK(build(&b, "c2d", (int64_t[]){2, 9, 9, 3, 5, 3, 3, 2, 1, 1}, 10, &hw,
                 &err),
           &err);
  static const char *const names[] = {"n.t0",   "co.t3", "oh.t2", "ow.t3",
                                      "ci.t0",  "kh.t1", "kw.t1", "vec",
                                      "acc_at", "unroll"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    CHECK_MSG(has_knob(b.sp, names[i]), "missing knob %s", names[i]);
  /* A reduction axis has two levels only. */
  CHECK(heron_space_find_var(b.sp, "ci.t2") < 0);
  /* ow (5 outputs) admits widths no longer than itself: 1 and 4. */
  const int64_t *vals;
  int nvals;
  CHECK_OK(heron_space_var_domain(b.sp, heron_space_find_var(b.sp, "vec"), NULL,
                                  NULL, &vals, &nvals),
           NULL);
  CHECK_EQ(nvals, 2);
  CHECK_EQ(vals[1], 4);
  unbuild(&b);
}

TEST(every_op_has_a_nonempty_space) {
  heron__hw hw = zen4();
  struct {
    const char *op;
    int64_t shape[10];
    int n;
  } cases[] = {
      {"gemm", {1024, 1024, 1024}, 3},
      {"gemm", {7, 13, 5}, 3},
      {"bmm", {12, 512, 64, 512}, 4},
      {"gemv", {1024, 1024}, 2},
      {"c2d", {16, 56, 56, 64, 64, 3, 3, 1, 1, 1}, 10},
      {"c2d", {16, 56, 56, 64, 64, 3, 3, 1, 1, 2}, 10},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    built b;
    heron_error err = {0};
    CHECK_OK(build(&b, cases[i].op, cases[i].shape, cases[i].n, &hw, &err),
             &err);
    heron_rng rng;
    heron_rng_seed(&rng, 7);
    int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
    int rc = heron_space_sample(b.sp, &rng, cfg, &err);
    free(cfg);
    unbuild(&b);
    CHECK_MSG(rc == HERON_OK, "%s: %s", cases[i].op, err.text);
  }
}

TEST(other_targets_and_dtypes_are_unsupported) {
  heron__hw hw = zen4();
  heron__op op;
  heron_error err = {0};
  CHECK_OK(heron__op_build("gemm", (int64_t[]){64, 64, 64}, 3, HERON__FP32, &op,
                           &err),
           &err);
  heron__template *t = NULL;
  heron_space *sp = NULL;
  CHECK_EQ(heron__template_build(&op, &hw, "cuda", &t, &sp, &err),
           HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "cuda");
  CHECK(t == NULL && sp == NULL);
  heron_error_clear(&err);
  CHECK_OK(heron__op_build("gemm", (int64_t[]){64, 64, 64}, 3, HERON__FP16, &op,
                           &err),
           &err);
  CHECK_EQ(heron__template_build(&op, &hw, "cpu", &t, &sp, &err),
           HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "fp32");
}

/* The footprint of tensor ts over a tile of lengths len[] per axis,
 * computed here from the index maps, independently of the rules. */
static int64_t footprint(const heron__op *op, const heron__tensor *ts,
                         const int64_t *len) {
  int64_t elems = 1;
  for (int d = 0; d < ts->ndim; d++) {
    int64_t e = 1;
    for (int a = 0; a < op->naxes; a++) {
      int64_t k = ts->index[d].coef[a];
      e += (k < 0 ? -k : k) * (len[a] - 1);
    }
    elems *= e;
  }
  return elems;
}

/* Checks a config against limits recomputed from the knob values alone:
 * the outer levels are the rounded-up tile counts, the padded work is at
 * most 125% of the real, the accumulator fits the registers, the
 * vector width divides the register-inner tile, the working sets fit the
 * caches. */
static int config_within_limits(const built *b, const heron__hw *hw,
                                const int64_t *cfg, char *why, size_t cap) {
  const heron__op *op = &b->op;
  int64_t l1[HERON__MAX_AXES], l2[HERON__MAX_AXES], acc0 = 1, acc1 = 1;
  int64_t padded = 1, real = 1;
  int64_t vec = val(b->sp, cfg, "vec");
  if (vec < 0)
    vec = 1;
  for (int a = 0; a < op->naxes; a++) {
    int spatial = op->axes[a].kind == HERON__SPATIAL;
    int levels = spatial ? 4 : 2;
    int64_t t[4] = {1, 1, 1, 1}, prod = 1;
    for (int l = 0; l < levels; l++) {
      char name[32];
      snprintf(name, sizeof name, "%s.t%d", op->axes[a].name, l);
      int64_t v = val(b->sp, cfg, name);
      t[l] = v < 0 ? 1 : v;
      prod *= t[l];
    }
    /* The outer level is the rounded-up count of tiles. */
    int64_t tile = prod / t[0];
    if (t[0] != (op->axes[a].extent + tile - 1) / tile) {
      snprintf(why, cap, "%s: %lld tiles of %lld for extent %lld",
               op->axes[a].name, (long long)t[0], (long long)tile,
               (long long)op->axes[a].extent);
      return 0;
    }
    padded *= prod;
    real *= op->axes[a].extent;
    /* L1 holds the register tile's slice, L2 one cache tile's. */
    l1[a] = spatial ? t[3] : t[1];
    l2[a] = spatial ? t[2] * t[3] : t[1];
    if (spatial) {
      acc0 *= t[3];
      acc1 *= t[2] * t[3];
    }
    if (spatial && a == heron__cpu_sched_of(b->t)->vec_axis &&
        t[3] % vec != 0) {
      snprintf(why, cap, "vec %lld does not divide %s.t3 = %lld",
               (long long)vec, op->axes[a].name, (long long)t[3]);
      return 0;
    }
  }
  if (padded * 100 > real * 125) {
    snprintf(why, cap, "padded work %lld over real %lld", (long long)padded,
             (long long)real);
    return 0;
  }
  int64_t acc = val(b->sp, cfg, "acc_at") ? acc1 : acc0;
  /* At least one loaded vector and one broadcast share the file. */
  if (acc / vec > hw->vector_regs - 2) {
    snprintf(why, cap, "accumulator of %lld floats in %lld-lane vectors",
             (long long)acc, (long long)vec);
    return 0;
  }
  int64_t ws1 = footprint(op, &op->out, l1), ws2 = footprint(op, &op->out, l2);
  for (int i = 0; i < op->ninputs; i++) {
    ws1 += footprint(op, &op->in[i], l1);
    ws2 += footprint(op, &op->in[i], l2);
  }
  if (ws2 * 4 > hw->l2_bytes || ws1 * 4 > hw->l1_bytes) {
    snprintf(why, cap, "working sets %lld (L2) / %lld (L1) elements",
             (long long)ws2, (long long)ws1);
    return 0;
  }
  return 1;
}

TEST(sampled_configs_fit_registers_and_caches) {
  heron__hw hw = zen4();
  struct {
    const char *op;
    int64_t shape[10];
    int n;
  } cases[] = {
      {"gemm", {1024, 1024, 1024}, 3},
      {"gemm", {383, 641, 199}, 3},
      {"bmm", {3, 16, 24, 8}, 4},
      {"bmm", {12, 77, 77, 64}, 4},
      {"c2d", {16, 56, 56, 64, 64, 3, 3, 2, 1, 2}, 10},
      {"c2d", {1, 224, 224, 3, 64, 7, 7, 2, 3, 1}, 10},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    built b;
    heron_error err = {0};
    CHECK_OK(build(&b, cases[i].op, cases[i].shape, cases[i].n, &hw, &err),
             &err);
    heron_rng rng;
    heron_rng_seed(&rng, 11 + i);
    int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
    int ok = 1;
    char why[400] = "";
    for (int s = 0; s < 200 && ok; s++) {
      if (heron_space_sample(b.sp, &rng, cfg, &err) != HERON_OK) {
        snprintf(why, sizeof why, "sample: %s", err.text);
        ok = 0;
      } else {
        ok = config_within_limits(&b, &hw, cfg, why, sizeof why);
      }
    }
    free(cfg);
    unbuild(&b);
    CHECK_MSG(ok, "%s: %s", cases[i].op, why);
  }
}

TEST(an_oversized_register_tile_violates_the_space) {
  heron__hw hw = zen4();
  built b;
  heron_error err = {0};
  CHECK_OK(build(&b, "gemm", (int64_t[]){256, 256, 256}, 3, &hw, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *part = malloc((size_t)nv * sizeof *part);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  for (int v = 0; v < nv; v++)
    part[v] = HERON_UNSET;
  /* 32 x 64 scalars in one accumulator: 2048 registers' worth. */
  part[heron_space_find_var(b.sp, "i.t3")] = 32;
  part[heron_space_find_var(b.sp, "j.t3")] = 64;
  part[heron_space_find_var(b.sp, "vec")] = 1;
  part[heron_space_find_var(b.sp, "acc_at")] = 0;
  heron_rng rng;
  heron_rng_seed(&rng, 3);
  int rc = heron_space_validate(b.sp, &rng, part, cfg, &err);
  free(part);
  free(cfg);
  unbuild(&b);
  CHECK_EQ(rc, HERON_EUNSAT);
}

TEST(describe_names_rules_loops_and_knobs) {
  heron__hw hw = zen4();
  built b;
  heron_error err = {0};
  CHECK_OK(build(&b, "gemm", (int64_t[]){128, 64, 32}, 3, &hw, &err), &err);
  heron__buf out = {0};
  heron__template_describe(b.t, b.sp, &out);
  char *text = heron__buf_take(&out);
  unbuild(&b);
  CHECK(text != NULL);
  static const char *const needles[] = {
      "Always-Inline",
      "Multi-Level-Tiling",
      "Add-Cache-Stage",
      "Parallel",
      "Tile-For-Cache",
      "Vectorize",
      "Unroll",
      "parallel for",
      "A[i, k] * B[k, j]",
      "i.t3 in {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128}",
      "i.t0 in [1, 128]",
      "padded work",
      "edge",
      "acc_at in",
      "unroll in"};
  int ok = 1;
  const char *missing = "";
  for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
    if (!strstr(text, needles[i])) {
      ok = 0;
      missing = needles[i];
      break;
    }
  if (!ok)
    fprintf(stderr, "%s\n", text);
  free(text);
  CHECK_MSG(ok, "describe lacks \"%s\"", missing);
}

TEST(cflags_build_an_openmp_shared_object) {
  heron__hw hw = zen4();
  built b;
  heron_error err = {0};
  CHECK_OK(build(&b, "gemv", (int64_t[]){33, 17}, 2, &hw, &err), &err);
  const char *f = heron__template_cflags(b.t);
  unbuild(&b);
  CHECK_STR_CONTAINS(f, "-fopenmp");
  CHECK_STR_CONTAINS(f, "-shared");
  CHECK_STR_CONTAINS(f, "-march=native");
}

/* The cflags of a gemv template built for `hw`. */
static const char *cflags_for(const heron__hw *hw) {
  built b;
  heron_error err = {0};
  if (build(&b, "gemv", (int64_t[]){33, 17}, 2, hw, &err) != HERON_OK) {
    fprintf(stderr, "build: %s\n", err.text);
    return "";
  }
  const char *f = heron__template_cflags(b.t);
  unbuild(&b);
  return f;
}

/* The flags follow the description's instruction sets, after
 * -march=native so they win: AVX-512 (with the AVX2 and FMA its vec-8
 * micro-kernel uses) where it has it, and none of what it lacks, so an
 * AVX2 description builds AVX2 code even on an AVX-512 machine. */
TEST(cflags_follow_the_descriptions_instruction_sets) {
  heron__hw hw = zen4();
  const char *f = cflags_for(&hw);
  CHECK_STR_CONTAINS(f, "-march=native -mavx512f -mavx2 -mfma ");
  hw.has_avx512 = 0;
  hw.vector_bytes = 32;
  hw.vector_regs = 16;
  f = cflags_for(&hw);
  CHECK_STR_CONTAINS(f, "-march=native -mno-avx512f -mavx2 -mfma ");
  hw.has_fma = 0;
  f = cflags_for(&hw);
  CHECK_STR_CONTAINS(f, "-mno-avx512f -mavx2 -mno-fma ");
  hw.has_avx2 = 0;
  hw.vector_bytes = 16;
  f = cflags_for(&hw);
  CHECK_STR_CONTAINS(f, "-mno-avx512f -mno-avx2 -mno-fma ");
  hw.has_fma = 1;
  f = cflags_for(&hw);
  CHECK_STR_CONTAINS(f, "-mno-avx512f -mno-avx2 -mfma ");
  CHECK_STR_CONTAINS(f, "-fopenmp");
  CHECK_STR_CONTAINS(f, "-shared");
}

/* Strategies pick "key variables" among all variables, auxiliary ones
 * included; mutating an auxiliary (a footprint with a domain up to 2^40)
 * must mutate the knobs behind it, quickly, not search its whole domain.
 * "Quickly" is against a baseline taken in the same loop: mutating a knob
 * of the same configs.  Both are this thread's CPU time, which a busy
 * machine does not stretch as it stretches the wall clock. */
static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

TEST(mutating_every_auxiliary_variable_of_gemm1024_is_quick_and_valid) {
  heron__hw hw = zen4();
  built b;
  heron_error err = {0};
  const int64_t shape[3] = {1024, 1024, 1024};
  CHECK_OK(build(&b, "gemm", shape, 3, &hw, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int64_t *out = malloc((size_t)nv * sizeof *out);
  heron_rng rng;
  heron_rng_seed(&rng, 11);
  int naux = 0, nknob = 0;
  double aux_s = 0, knob_s = 0;
  for (int v = 0, round = 0; round < 20; v = (v + 1) % nv) {
    if (v == 0) {
      CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
      round++;
    }
    int knob = heron_space_var_is_knob(b.sp, v);
    double t0 = thread_cpu_s();
    int rc = heron_space_mutate(b.sp, &rng, cfg, &v, 1, out, &err);
    double t = thread_cpu_s() - t0;
    CHECK_MSG(rc == HERON_OK || rc == HERON_EUNSAT, "%s: %s",
              heron_space_var_name(b.sp, v), err.text);
    if (rc == HERON_OK)
      CHECK_EQ(heron_space_violations(b.sp, out, NULL, 0), 0);
    if (knob) {
      nknob++;
      knob_s += t;
    } else {
      naux++;
      aux_s += t;
    }
  }
  /* Each call takes microseconds, an auxiliary's as a knob's; a search of
   * a 2^40 domain took minutes.  Bounded at 20x a knob's mean. */
  fprintf(stderr,
          "%d auxiliary mutations %.1f us each, %d knob mutations "
          "%.1f us each (CPU time)\n",
          naux, 1e6 * aux_s / naux, nknob, 1e6 * knob_s / nknob);
  CHECK_MSG(aux_s / naux < 20 * (knob_s / nknob),
            "%d mutations of auxiliaries took %.1f us each, of knobs %.1f us",
            naux, 1e6 * aux_s / naux, 1e6 * knob_s / nknob);
  CHECK(nknob > 10);
  CHECK(naux > 10);
  free(cfg);
  free(out);
  unbuild(&b);
}
