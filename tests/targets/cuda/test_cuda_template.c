/* tests/targets/cuda/test_cuda_template.c - the Tensor Core template: its
 * knobs, the implicit-GEMM view of every suite op, and properties of sampled
 * configs checked independently of the rules (splits, threads, the shared
 * memory plan after reuse, vector widths against the index maps). */
#include "cuda_fixtures.h"

#include <ctype.h>
#include <jansson.h>

#include "core/record/record.h"

static const char *const GPUS[] = {"a100", "h100", "h200", "rtx3080"};

TEST(gemm_template_has_herons_knobs) {
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[0], "a100", 0, &err), &err);
  static const char *const knobs[] = {
      "wmma_m",       "wmma_n",       "wmma_k",       "i.b",
      "i.w",          "i.f",          "j.b",          "j.w",
      "j.f",          "k.o",          "k.m",          "k.f",
      "A.shared_at",  "B.shared_at",  "A.shared_pad", "B.shared_pad",
      "C.shared_pad", "A.shared_vec", "B.shared_vec", "out.vec",
      "unroll",       "pipeline",     "mma",          "A.shared_swz",
      "B.shared_swz", "block_swz",    "split_k"};
  int nk = (int)(sizeof knobs / sizeof knobs[0]);
  CHECK_EQ(heron_space_nknobs(b.sp), nk);
  for (int i = 0; i < nk; i++) {
    int v = heron_space_find_var(b.sp, knobs[i]);
    CHECK_MSG(v >= 0 && heron_space_var_is_knob(b.sp, v) == 1, "knob %s",
              knobs[i]);
  }
  /* threadIdx.y is derived from the warp splits, as Heron's is bound. */
  int ty = heron_space_find_var(b.sp, "threadIdx.y");
  CHECK(ty >= 0 && heron_space_var_is_knob(b.sp, ty) == 0);
  /* GEMM's A and B are contiguous along K and N, 8 halves apart at most. */
  int64_t lo, hi;
  const int64_t *vals;
  int nv;
  CHECK_OK(heron_space_var_domain(b.sp,
                                  heron_space_find_var(b.sp, "A.shared_vec"),
                                  &lo, &hi, &vals, &nv),
           NULL);
  CHECK_EQ(hi, 8);
  cuda_unbuild(&b);
}

TEST(every_suite_op_builds_on_every_gpu_description) {
  for (int g = 0; g < 4; g++)
    for (int i = 0; i < CUDA_NSUITE; i++) {
      cuda_built b;
      heron_error err = {0};
      int rc = cuda_build(&b, &CUDA_SUITE[i], GPUS[g], 0, &err);
      CHECK_MSG(rc == HERON_OK, "%s on %s: %s", CUDA_SUITE[i].op, GPUS[g],
                err.text);
      heron_rng rng;
      heron_rng_seed(&rng, 7);
      int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
      rc = heron_space_sample(b.sp, &rng, cfg, &err);
      free(cfg);
      cuda_unbuild(&b);
      CHECK_MSG(rc == HERON_OK, "sample %s on %s: %s", CUDA_SUITE[i].op,
                GPUS[g], err.text);
    }
}

TEST(gemv_pads_n_to_eight_and_forces_the_32x8_shape) {
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[2], "a100", 0, &err), &err);
  CHECK_EQ(heron__cuda_sched_of(b.t)->g[HERON__GN].extent, 1);
  CHECK_EQ(heron__cuda_sched_of(b.t)->padded[HERON__GN], 8);
  heron_rng rng;
  heron_rng_seed(&rng, 3);
  int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
  for (int s = 0; s < 200; s++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    CHECK_EQ(cuda_val(b.sp, cfg, "wmma_m"), 32);
    CHECK_EQ(cuda_val(b.sp, cfg, "wmma_n"), 8);
  }
  free(cfg);
  cuda_unbuild(&b);
}

TEST(convolutions_are_implicit_gemms_over_their_axes) {
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[4], "a100", 0, &err), &err);
  const heron__cuda_sched *s = heron__cuda_sched_of(b.t);
  /* c2d: M = n*oh*ow (the data's axes), N = co, K = ci*kh*kw. */
  CHECK_EQ(s->g[HERON__GM].extent, 16 * 56 * 56);
  CHECK_EQ(s->g[HERON__GN].extent, 64);
  CHECK_EQ(s->g[HERON__GK].extent, 64 * 9);
  CHECK_EQ(s->g[HERON__GB].extent, 1);
  /* The data is read through padding: element by element.  The weight is
   * laid out fused along K, so it is read 8 halves at a time. */
  CHECK_EQ(s->op[0].vec_max, 1);
  CHECK_EQ(s->op[1].vec_max, 8);
  CHECK_EQ(s->op[1].k_inner, 1);
  /* The output is contiguous along ow, which is in M. */
  CHECK_EQ(s->out_group, HERON__GM);
  cuda_unbuild(&b);
}

TEST(fp32_and_three_input_ops_are_refused_by_name) {
  heron__op op;
  heron_error err = {0};
  heron__hw hw;
  heron__hw_detect_cpu(&hw);
  CHECK_OK(heron__hw_load("a100", &hw, &err), &err);
  CHECK_OK(heron__op_build("gemm", (int64_t[]){64, 64, 64}, 3, HERON__FP32, &op,
                           &err),
           &err);
  heron__template *t = NULL;
  heron_space *sp = NULL;
  CHECK_EQ(heron__template_build(&op, &hw, "cuda", &t, &sp, &err),
           HERON_EUNSUPPORTED);
  CHECK_STR_CONTAINS(err.text, "fp16");
  CHECK(t == NULL && sp == NULL);
}

/* ---- properties of sampled configs ----------------------------------------
 */

/* The flat element index of tensor ts at axis values ax[], or -1 when the
 * point reads zero (padding, an index not divisible by its divisor):
 * straight from the op description, independent of the generator. */
static int64_t element(const heron__op *op, const heron__tensor *ts,
                       const int64_t *ax) {
  int64_t flat = 0;
  for (int d = 0; d < ts->ndim; d++) {
    const heron__affine *ix = &ts->index[d];
    int64_t e = ix->offset;
    for (int a = 0; a < op->naxes; a++)
      e += ix->coef[a] * ax[a];
    int64_t div = ix->div > 1 ? ix->div : 1;
    if (e % div != 0)
      return -1;
    e /= div;
    if (e < 0 || e >= ts->dims[d])
      return -1;
    flat = flat * ts->dims[d] + e;
  }
  return flat;
}

/* Sets the axis values of group grp from its fused index. */
static void unfuse(const heron__op *op, const heron__gemm_group *g,
                   int64_t fused, int64_t *ax) {
  for (int i = g->naxes - 1; i >= 0; i--) {
    int64_t e = op->axes[g->axes[i]].extent;
    ax[g->axes[i]] = fused % e;
    fused /= e;
  }
}

/* For a vector width V of tensor ts along group `inner` (the shared tile's
 * contiguous group): at random points whose inner fused index is a multiple
 * of V and inside the extent, the V elements are V consecutive, V-aligned
 * addresses.  Returns 1 when that holds. */
static int vector_ok(const heron__op *op, const heron__cuda_sched *s,
                     const heron__gemm_group *gk, const heron__tensor *ts,
                     int inner, int64_t v, int interior, int uniform,
                     heron_rng *rng) {
  if (v == 1)
    return 1;
  /* The groups, K in the kernel's order (igemm's may differ). */
  const heron__gemm_group *g[HERON__NGROUPS];
  for (int q = 0; q < HERON__NGROUPS; q++)
    g[q] = q == HERON__GK ? gk : &s->g[q];
  for (int trial = 0; trial < 64; trial++) {
    int64_t ax[HERON__MAX_AXES] = {0};
    for (int q = 0; q < HERON__NGROUPS; q++) {
      int64_t e = g[q]->extent;
      int64_t f = (int64_t)(heron_rng_next(rng) % (uint64_t)e);
      if (q == inner)
        f -= f % v;
      unfuse(op, g[q], f, ax);
    }
    int64_t first = -2;
    int64_t base[HERON__MAX_AXES];
    memcpy(base, ax, sizeof base);
    int64_t f0 = 0;
    for (int i = 0; i < g[inner]->naxes; i++)
      f0 = f0 * op->axes[g[inner]->axes[i]].extent + base[g[inner]->axes[i]];
    for (int64_t l = 0; l < v; l++) {
      unfuse(op, g[inner], f0 + l, ax);
      int64_t e = element(op, ts, ax);
      if (e < 0 && interior)
        break; /* an edge: the kernel goes element by element */
      if (e < 0 && uniform && (l == 0 || first < 0)) {
        first = -1; /* guarded out whole: zero-filled */
        continue;
      }
      if (e < 0 || (uniform && first == -1))
        return 0;
      if (l == 0) {
        if (e % v != 0 && !interior)
          return 0;
        first = e;
      } else if (e != first + l) {
        return 0;
      }
    }
  }
  return 1;
}

/* Checks one config against the limits the constraints claim, computing
 * everything from the knobs; a message into why[] when it fails. */
static int config_ok(const cuda_built *b, const int64_t *cfg, heron_rng *rng,
                     char *why, size_t cap) {
  const heron_space *sp = b->sp;
  const heron__cuda_sched *s = heron__cuda_sched_of(b->t);
  const heron__op *op = &b->op;
  int64_t wm = cuda_val(sp, cfg, "wmma_m"), wn = cuda_val(sp, cfg, "wmma_n"),
          wk = cuda_val(sp, cfg, "wmma_k");
  int shape_ok = wk == 16 && ((wm == 16 && wn == 16) || (wm == 32 && wn == 8) ||
                              (wm == 8 && wn == 32));
  if (!shape_ok)
    return snprintf(why, cap, "wmma %lldx%lldx%lld", (long long)wm,
                    (long long)wn, (long long)wk),
           0;
  static const char *const nm[3][3] = {
      {"i.b", "i.w", "i.f"}, {"j.b", "j.w", "j.f"}, {"k.o", "k.m", "k.f"}};
  int64_t sp3[3][3];
  for (int d = 0; d < 3; d++)
    for (int l = 0; l < 3; l++)
      sp3[d][l] = cuda_val(sp, cfg, nm[d][l]);
  int64_t shp[3] = {wm, wn, wk};
  const int grp[3] = {HERON__GM, HERON__GN, HERON__GK};
  /* The outer count is the rounded-up number of tiles of the padded
   * extent, and the swept extents stay within 125% of the padded ones. */
  int64_t swept = 1, padded = 1;
  for (int d = 0; d < 3; d++) {
    int64_t tile = sp3[d][1] * sp3[d][2] * shp[d], p = s->padded[grp[d]];
    if (sp3[d][0] != (p + tile - 1) / tile)
      return snprintf(why, cap, "split %d: %lld tiles of %lld for %lld", d,
                      (long long)sp3[d][0], (long long)tile, (long long)p),
             0;
    swept *= sp3[d][0] * tile;
    padded *= p;
  }
  if (100 * swept > 125 * padded)
    return snprintf(why, cap, "padded work %lld of %lld", (long long)swept,
                    (long long)padded),
           0;
  /* The block swizzle: G rows per group, no more than the grid's rows,
   * and G > 1 only on a grid of two blocks per SM or more. */
  int64_t G = cuda_val(sp, cfg, "block_swz");
  if (G != 1 && G != 2 && G != 4 && G != 8)
    return snprintf(why, cap, "block_swz %lld", (long long)G), 0;
  if (G > sp3[0][0] ||
      (G > 1 && sp3[0][0] * sp3[1][0] < 2 * (int64_t)b->hw.sm_count))
    return snprintf(why, cap, "block_swz %lld on %lld x %lld blocks, %d SMs",
                    (long long)G, (long long)sp3[0][0], (long long)sp3[1][0],
                    b->hw.sm_count),
           0;
  /* Split-K: no knob where K (padded) holds no two splits of 128; S
   * blocks per tile each run a whole share of the k.o chunks, at least
   * one per pipeline stage, on a grid of at most 4 blocks per SM. */
  int64_t S = cuda_val(sp, cfg, "split_k"), kp = s->padded[HERON__GK];
  if ((S < 0) != (kp < 256))
    return snprintf(why, cap, "split_k %lld with K padded to %lld",
                    (long long)S, (long long)kp),
           0;
  S = S < 0 ? 1 : S;
  if (S != 1 && S != 2 && S != 4 && S != 8 && S != 16)
    return snprintf(why, cap, "split_k %lld", (long long)S), 0;
  if (S > 1) {
    int64_t per = sp3[2][0] / S;
    int64_t chunks =
        cuda_val(sp, cfg, "A.shared_at") == 0 ? per : per * sp3[2][1];
    int64_t grid = sp3[0][0] * sp3[1][0] * s->g[HERON__GB].extent * S;
    int64_t ws =
        4 * grid * (sp3[0][1] * sp3[0][2] * wm) * (sp3[1][1] * sp3[1][2] * wn);
    if (sp3[2][0] % S || S * 128 > kp ||
        chunks < cuda_val(sp, cfg, "pipeline") ||
        grid > 4 * (int64_t)b->hw.sm_count || ws > ((int64_t)64 << 20))
      return snprintf(why, cap,
                      "split_k %lld: k.o %lld, %lld chunks a split, K %lld, "
                      "%lld blocks on %d SMs, workspace %lld",
                      (long long)S, (long long)sp3[2][0], (long long)chunks,
                      (long long)kp, (long long)grid, b->hw.sm_count,
                      (long long)ws),
             0;
  }
  int64_t warps = sp3[0][1] * sp3[1][1];
  if (32 * warps > b->hw.max_threads_per_block ||
      warps > b->hw.max_threads_dim[1])
    return snprintf(why, cap, "%lld warps", (long long)warps), 0;
  /* The shared-memory plan, rebuilt from the knobs. */
  int64_t bm = sp3[0][1] * sp3[0][2] * wm, bn = sp3[1][1] * sp3[1][2] * wn;
  int64_t kc0 = sp3[2][1] * sp3[2][2] * wk, kc1 = sp3[2][2] * wk;
  int64_t bytes[4], stages = cuda_val(sp, cfg, "pipeline");
  if (stages < 1 || stages > 4)
    return snprintf(why, cap, "pipeline %lld", (long long)stages), 0;
  /* One loop carries the pipeline: both operands at one position. */
  if (stages > 1 &&
      cuda_val(sp, cfg, "A.shared_at") != cuda_val(sp, cfg, "B.shared_at"))
    return snprintf(why, cap, "pipeline %lld with A and B at two positions",
                    (long long)stages),
           0;
  for (int i = 0; i < 2; i++) {
    const char *p = i == 0 ? "A" : "B";
    char n1[32], n2[32];
    snprintf(n1, sizeof n1, "%s.shared_at", p);
    snprintf(n2, sizeof n2, "%s.shared_pad", p);
    int64_t kc = cuda_val(sp, cfg, n1) == 0 ? kc0 : kc1;
    int64_t rows = i == 0 ? bm : bn, pad = cuda_val(sp, cfg, n2);
    bytes[i] = s->op[i].k_inner ? 2 * rows * (kc + pad) : 2 * kc * (rows + pad);
    bytes[i] *= stages; /* one buffer per pipeline stage */
  }
  int64_t cpad = cuda_val(sp, cfg, "C.shared_pad");
  bytes[2] =
      s->out_group == HERON__GM ? 4 * bn * (bm + cpad) : 4 * bm * (bn + cpad);
  /* igemm 1: the table of the M rows, live beside A and B. */
  int igemm = cuda_val(sp, cfg, "igemm") == 1;
  bytes[3] = igemm ? s->ig.ncols * s->ig.elem_bytes * bm : 0;
  heron__cuda_smem_plan plan;
  heron__cuda_smem_plan_of(b->t, cfg, &plan);
  if (plan.nbufs != 3 + igemm)
    return snprintf(why, cap, "%d buffers with igemm %d", plan.nbufs, igemm), 0;
  int64_t limit = b->hw.smem_per_block_optin > b->hw.smem_per_block
                      ? b->hw.smem_per_block_optin
                      : b->hw.smem_per_block;
  if (plan.total > limit)
    return snprintf(why, cap, "smem %lld > %lld", (long long)plan.total,
                    (long long)limit),
           0;
  for (int i = 0; i < plan.nbufs; i++) {
    if (plan.buf[i].bytes != bytes[i])
      return snprintf(why, cap, "%s: %lld bytes, expected %lld",
                      plan.buf[i].name, (long long)plan.buf[i].bytes,
                      (long long)bytes[i]),
             0;
    if (plan.buf[i].offset % 128)
      return snprintf(why, cap, "%s misaligned", plan.buf[i].name), 0;
    for (int j = 0; j < i; j++) {
      const heron__cuda_smem_buf *x = &plan.buf[i], *y = &plan.buf[j];
      if (x->phase != y->phase)
        continue;
      if (x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes)
        return snprintf(why, cap, "%s overlaps %s", x->name, y->name), 0;
    }
  }
  /* Every wmma pointer is 32-byte aligned: fragment (i, kf) of A starts
   * at row m = i * wmma_m (plus the warp's offset, a multiple of it) and
   * column k = kf * 16 of A.shared; along the buffer's contiguous axis
   * that is an element offset, along the other a multiple of the pitch. */
  for (int i = 0; i < 2; i++) {
    const char *p = i == 0 ? "A" : "B";
    char n1[32], n2[32];
    snprintf(n1, sizeof n1, "%s.shared_at", p);
    snprintf(n2, sizeof n2, "%s.shared_pad", p);
    int64_t kc = cuda_val(sp, cfg, n1) == 0 ? kc0 : kc1;
    int64_t rows = i == 0 ? bm : bn, pad = cuda_val(sp, cfg, n2);
    int64_t w = i == 0 ? wm : wn;
    int64_t pitch = s->op[i].k_inner ? kc + pad : rows + pad;
    for (int64_t r = 0; r < rows; r += w)
      for (int64_t k = 0; k < kc; k += 16) {
        int64_t off = s->op[i].k_inner ? r * pitch + k : k * pitch + r;
        if ((2 * off) % 32 != 0 || pitch % 8 != 0)
          return snprintf(why, cap, "%s fragment at (%lld, %lld) misaligned", p,
                          (long long)r, (long long)k),
                 0;
      }
  }
  int64_t cpitch = (s->out_group == HERON__GM ? bm : bn) + cpad;
  for (int64_t m = 0; m < bm; m += wm)
    for (int64_t n = 0; n < bn; n += wn) {
      int64_t off = s->out_group == HERON__GM ? n * cpitch + m : m * cpitch + n;
      if ((4 * off) % 32 != 0 || cpitch % 4 != 0)
        return snprintf(why, cap, "C fragment at (%lld, %lld) misaligned",
                        (long long)m, (long long)n),
               0;
    }
  heron__cuda_launch l;
  heron__cuda_launch_of(b->t, cfg, &l);
  if (l.smem_bytes != plan.total || l.block[0] * l.block[1] != 32 * warps ||
      l.grid[2] != S)
    return snprintf(why, cap, "launch disagrees with the plan"), 0;
  /* Vector widths against the index maps. */
  int64_t va = cuda_val(sp, cfg, "A.shared_vec"),
          vb = cuda_val(sp, cfg, "B.shared_vec"),
          vo = cuda_val(sp, cfg, "out.vec");
  /* A vector of A beyond its index map's widest (igemm 1 only) is a
   * checked interior one: wherever all its elements exist they must be
   * consecutive; the kernel checks the alignment and the edges. */
  const heron__gemm_group *gk =
      igemm && s->ig.reorder ? &s->ig.gk : &s->g[HERON__GK];
  /* Within ig.a_vec (igemm 1) a vector of A is guarded as one element:
   * all of it exists (aligned, consecutive) or none does. */
  int interior = va > (igemm ? s->ig.a_vec : s->op[0].vec_max);
  if (interior && !igemm)
    return snprintf(why, cap, "A vec %lld without igemm", (long long)va), 0;
  if (!vector_ok(op, s, gk, &op->in[0],
                 s->op[0].k_inner ? HERON__GK : HERON__GM, va, interior,
                 igemm && !interior, rng))
    return snprintf(why, cap, "A vec %lld", (long long)va), 0;
  if (!vector_ok(op, s, gk, &op->in[1],
                 s->op[1].k_inner ? HERON__GK : HERON__GN, vb, 0, 0, rng))
    return snprintf(why, cap, "B vec %lld", (long long)vb), 0;
  if (!vector_ok(op, s, gk, &op->out, s->out_group, vo, 0, 0, rng))
    return snprintf(why, cap, "out vec %lld", (long long)vo), 0;
  return 1;
}

TEST(sampled_configs_respect_the_limits_and_the_smem_plan) {
  for (int g = 0; g < 2; g++)
    for (int i = 0; i < CUDA_NSUITE + CUDA_NSMALL; i++) {
      const cuda_case *c =
          i < CUDA_NSUITE ? &CUDA_SUITE[i] : &CUDA_SMALL[i - CUDA_NSUITE];
      cuda_built b;
      heron_error err = {0};
      CHECK_OK(cuda_build(&b, c, g ? "rtx3080" : "h100", 0, &err), &err);
      heron_rng rng;
      heron_rng_seed(&rng, 11 + (uint64_t)i);
      int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
      int bad = 0;
      char why[160] = "";
      for (int n = 0; n < 1000 && !bad; n++) {
        if (heron_space_sample(b.sp, &rng, cfg, &err) != HERON_OK)
          bad = snprintf(why, sizeof why, "sample: %s", err.text);
        else if (!config_ok(&b, cfg, &rng, why, sizeof why))
          bad = 1;
      }
      free(cfg);
      cuda_unbuild(&b);
      CHECK_MSG(!bad, "%s: %s", c->op, why);
    }
}

TEST(shared_memory_is_bounded_after_reuse_not_by_the_sum) {
  /* On the RTX 3080 (100 KiB opt-in), configs exist whose A + B + C would
   * not fit but whose live sets do; the space must contain them. */
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[0], "rtx3080", 0, &err), &err);
  heron_rng rng;
  heron_rng_seed(&rng, 5);
  int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
  int found = 0;
  int64_t limit = b.hw.smem_per_block_optin;
  for (int n = 0; n < 20000 && !found; n++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    heron__cuda_smem_plan p;
    heron__cuda_smem_plan_of(b.t, cfg, &p);
    found = p.buf[0].bytes + p.buf[1].bytes + p.buf[2].bytes > limit;
  }
  free(cfg);
  cuda_unbuild(&b);
  CHECK_MSG(found, "no config needed the reuse of A/B space by C.shared");
}

TEST(source_starts_with_the_launch_of_the_config) {
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, &CUDA_SMALL[0], "a100", HERON__EPI_BIAS, &err), &err);
  heron_rng rng;
  heron_rng_seed(&rng, 9);
  int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
  for (int n = 0; n < 20; n++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    heron__buf src = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
    heron__cuda_launch l, want;
    CHECK_EQ(heron__cuda_launch_parse(src.data, &l), 0);
    heron__cuda_launch_of(b.t, cfg, &want);
    CHECK(memcmp(&l, &want, sizeof l) == 0);
    CHECK(strstr(src.data, "HERON_KERNEL(heron_cuda_kernel)") != NULL);
    CHECK(strstr(src.data, "bias[") != NULL);
    heron__buf_free(&src);
  }
  free(cfg);
  cuda_unbuild(&b);
}

TEST(describe_shows_the_gemm_view_and_the_rules) {
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[4], "h100", 0, &err), &err);
  heron__buf d = {0};
  heron__template_describe(b.t, b.sp, &d);
  CHECK_STR_CONTAINS(d.data, "M = n*oh*ow");
  CHECK_STR_CONTAINS(d.data, "Add-Multi-Scope-SPM");
  CHECK_STR_CONTAINS(d.data, "wmma_m in {8, 16, 32}");
  CHECK_STR_CONTAINS(d.data, "AB.shared_bytes.staged <= 232448");
  CHECK_STR_CONTAINS(d.data, "Software-Pipelining");
  CHECK_STR_CONTAINS(d.data, "needs A.shared_at == B.shared_at");
  CHECK_STR_CONTAINS(d.data, "pipeline.A_at == pipeline.B_at");
  heron__buf_free(&d);
  cuda_unbuild(&b);
}

/* The pipeline knob: 2-, 3- and 4-stage configs exist on every op, with
 * A.shared and B.shared S times the single-stage size (the same config at
 * pipeline 1 planned side by side), and an S-stage config over the shared
 * memory limit is invalid even though its single-stage twin is valid. */
TEST(pipeline_multiplies_the_operand_buffers_within_the_limit) {
  for (int i = 0; i < CUDA_NSUITE; i++) {
    cuda_built b;
    heron_error err = {0};
    CHECK_OK(cuda_build(&b, &CUDA_SUITE[i], "h200", 0, &err), &err);
    int nv = heron_space_nvars(b.sp);
    int pv = heron_space_find_var(b.sp, "pipeline");
    CHECK(pv >= 0 && heron_space_var_is_knob(b.sp, pv));
    int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
    int64_t *one = malloc((size_t)nv * sizeof *one);
    heron_rng rng;
    heron_rng_seed(&rng, 21 + (uint64_t)i);
    int staged[5] = {0}, over[5] = {0};
    for (int n = 0; n < 1200 && (staged[2] < 5 || staged[3] < 5 ||
                                 staged[4] < 5 || !over[2] || !over[4]);
         n++) {
      CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
      /* The knobs of cfg with another pipeline value, completed: a
       * single-stage config is set to S = 2, 3 or 4 stages in turn, an
       * S-stage one to 1. */
      int64_t S = cfg[pv] > 1 ? cfg[pv] : 2 + n % 3;
      for (int v = 0; v < nv; v++)
        one[v] = heron_space_var_is_knob(b.sp, v) ? cfg[v] : HERON_UNSET;
      one[pv] = cfg[pv] > 1 ? 1 : S;
      heron_error e2 = {0};
      int rc = heron_space_validate(b.sp, &rng, one, one, &e2);
      const int64_t *pS = cfg[pv] > 1 ? cfg : one;
      const int64_t *p1 = cfg[pv] > 1 ? one : cfg;
      if (cfg[pv] == 1 && rc != HERON_OK) {
        /* Only the multiplied buffers can break a valid single-stage
         * config: then they are over the limit, with the row table of
         * igemm 1 beside them. */
        heron__cuda_smem_plan p;
        heron__cuda_smem_plan_of(b.t, cfg, &p);
        int64_t abS = S * (p.buf[1].offset + p.buf[1].bytes) +
                      (p.nbufs > 3 ? p.buf[3].bytes : 0);
        int same_at = cuda_val(b.sp, cfg, "A.shared_at") ==
                      cuda_val(b.sp, cfg, "B.shared_at");
        CHECK_MSG(!same_at || abS > heron__cuda_sched_of(b.t)->smem_limit,
                  "%s: pipeline %lld refused within the limit: %s",
                  CUDA_SUITE[i].op, (long long)S, e2.text);
        over[S] += same_at;
        continue;
      }
      CHECK_OK(rc, &e2);
      staged[S]++;
      heron__cuda_smem_plan q1, qS;
      heron__cuda_smem_plan_of(b.t, p1, &q1);
      heron__cuda_smem_plan_of(b.t, pS, &qS);
      CHECK_EQ(qS.buf[0].bytes, S * q1.buf[0].bytes);
      CHECK_EQ(qS.buf[1].bytes, S * q1.buf[1].bytes);
      CHECK_EQ(qS.buf[1].offset, qS.buf[0].bytes);
      CHECK_EQ(qS.buf[2].bytes, q1.buf[2].bytes);
      CHECK(qS.buf[1].offset + qS.buf[1].bytes <=
            heron__cuda_sched_of(b.t)->smem_limit);
      CHECK(qS.total <= heron__cuda_sched_of(b.t)->smem_limit);
    }
    for (int S = 2; S <= 4; S++)
      CHECK_MSG(staged[S] >= 5, "%s: %d configs with pipeline %d",
                CUDA_SUITE[i].op, staged[S], S);
    if (i == 0)
      CHECK_MSG(over[2] > 0 && over[4] > 0,
                "gemm: no 2- or 4-stage config over the limit was met "
                "(%d, %d)",
                over[2], over[4]);
    free(cfg);
    free(one);
    cuda_unbuild(&b);
  }
}

/* Pipeline 1 is the kernel before the knob: no cp.async, no stage
 * pointers; pipeline S > 1 issues chunks ahead as cp.async copies and
 * waits with cp.async.wait_group S - 2. */
TEST(pipeline_one_is_the_single_stage_kernel) {
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[0], "h200", 0, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int pv = heron_space_find_var(b.sp, "pipeline");
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 3);
  int seen[5] = {0, 0, 0, 0, 0};
  for (int n = 0; n < 120; n++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    heron__buf src = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
    /* The body, after the prelude that defines the macros. */
    const char *body = strstr(src.data, "HERON_KERNEL(heron_cuda_kernel)");
    CHECK(body != NULL);
    int cp = strstr(body, "HERON_CP_ASYNC(dst") != NULL;
    char w[48];
    snprintf(w, sizeof w, "HERON_CP_WAIT(%lld);", (long long)(cfg[pv] - 2));
    int wait = cfg[pv] > 1 && strstr(body, w) != NULL;
    if (cfg[pv] == 1)
      CHECK(!cp && !strstr(body, "HERON_CP_WAIT") && !strstr(body, "Ac + "));
    else /* A's fragments read the stage slot Ac (a swizzled A: whole) */
      CHECK(wait &&
            (strstr(body, "Ac + ") || strstr(body, "_SWZ(fa[i], Ac, ")) &&
            (cp || (cuda_val(b.sp, cfg, "A.shared_vec") == 1 &&
                    cuda_val(b.sp, cfg, "B.shared_vec") == 1)));
    seen[cfg[pv]]++;
    heron__buf_free(&src);
  }
  CHECK(seen[1] > 0 && seen[2] > 0 && seen[3] > 0 && seen[4] > 0);
  free(cfg);
  cuda_unbuild(&b);
}

/* A log line written before the pipeline knob existed (the first record
 * of configs/datasets/cuda-h200/GEMM.jsonl.gz, measured on the GPU) names
 * no pipeline: it reads back as the single-stage kernel it measured, valid,
 * with the key recorded beside it; the same config at pipeline 2 has
 * another key. */
TEST(log_line_without_the_pipeline_knob_reads_back_single_stage) {
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[0], "h200", 0, &err), &err);
  static const char line[] =
      "{\"task\":\"gemm/1024,1024,1024/fp16/cuda\",\"trial\":1,\"config\":"
      "{\"wmma_m\":16,\"wmma_n\":16,\"wmma_k\":16,\"i.w\":3,\"i.f\":8,"
      "\"i.b\":3,\"j.w\":4,\"j.f\":1,\"j.b\":16,\"k.m\":64,\"k.f\":1,"
      "\"k.o\":1,\"A.shared_at\":1,\"A.shared_pad\":32,\"A.shared_vec\":4,"
      "\"B.shared_at\":1,\"B.shared_pad\":8,\"B.shared_vec\":1,"
      "\"C.shared_pad\":8,\"out.vec\":4,\"unroll\":3},"
      "\"key\":\"92375d5ec6e39bca\",\"status\":\"ok\","
      "\"seconds\":7.7461880796095913e-5,\"gflops\":27723.102330201014}";
  json_t *o = json_loads(line, 0, NULL);
  CHECK(o != NULL);
  int nv = heron_space_nvars(b.sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  heron_measurement m;
  int valid = 0;
  /* Again and again: the completion must not depend on the random stream. */
  for (int r = 0; r < 8; r++) {
    CHECK_OK(heron__log_parse(o, b.sp, "gemm/1024,1024,1024/fp16/cuda", &rng,
                              &m, cfg, &valid, NULL, 1, "GEMM.jsonl", &err),
             &err);
    CHECK_EQ(valid, 1);
    CHECK_EQ(cuda_val(b.sp, cfg, "pipeline"), 1);
    CHECK_EQ(cuda_val(b.sp, cfg, "mma"), 0); /* nor mma: the wmma kernel */
    CHECK_EQ(cuda_val(b.sp, cfg, "A.shared_swz"), 0); /* nor swizzle */
    CHECK_EQ(cuda_val(b.sp, cfg, "B.shared_swz"), 0);
    char key[32];
    CHECK_OK(heron_space_key(b.sp, cfg, key, sizeof key), NULL);
    CHECK_MSG(!strcmp(key, "92375d5ec6e39bca"), "key %s", key);
  }
  heron__buf src = {0};
  CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
  CHECK(
      !strstr(strstr(src.data, "HERON_KERNEL(heron_cuda_kernel)"), "HERON_CP"));
  CHECK(!strstr(src.data, "HERON_LDMATRIX") &&
        strstr(src.data, "HERON_LOAD_A(fa[i]"));
  heron__buf_free(&src);
  for (int v = 0; v < nv; v++)
    if (!heron_space_var_is_knob(b.sp, v))
      cfg[v] = HERON_UNSET;
  cfg[heron_space_find_var(b.sp, "pipeline")] = 2;
  CHECK_OK(heron_space_validate(b.sp, &rng, cfg, cfg, &err), &err);
  char key2[32];
  heron_space_key(b.sp, cfg, key2, sizeof key2);
  CHECK(strcmp(key2, "92375d5ec6e39bca") != 0);
  json_decref(o);
  free(cfg);
  cuda_unbuild(&b);
}

/* The mma knob: 0 (wmma) and 1 (mma.sync m16n8k16 with ldmatrix) on
 * sm_80 and newer, only 0 below (an A100 described as sm_75), and 2
 * (wgmma fed by TMA) only on sm_90 for an op of plain matrices (GEMM on
 * an H100, not on an A100, not BMM); mma 1 never with an 8-row wmma tile,
 * so an op whose M pads to 8 (a scan of 4 rows) has no mma config; mma 0
 * is the wmma kernel, whose source has no mma macro, mma 1 the other way
 * round, and mma 2 a TMA kernel of wgmma alone. */
TEST(mma_knob_by_architecture_and_shape) {
  cuda_built b;
  heron_error err = {0};
  heron_rng rng;
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[0], "h100", 0, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int mv = heron_space_find_var(b.sp, "mma");
  int64_t lo, hi;
  CHECK(heron_space_var_domain(b.sp, mv, &lo, &hi, NULL, NULL) == HERON_OK);
  CHECK(lo == 0 && hi == 2);
  heron_rng_seed(&rng, 5);
  {
    int64_t *fix = malloc((size_t)nv * sizeof *fix);
    for (int v = 0; v < nv; v++)
      fix[v] = HERON_UNSET;
    fix[mv] = 2;
    CHECK_OK(heron_space_sample_restricted(b.sp, &rng, fix, NULL, cfg, &err),
             &err);
    free(fix);
    heron__buf src = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
    const char *body = strstr(src.data, "HERON_KERNEL_TMA(heron_cuda_kernel)");
    CHECK(body && strstr(src.data, "/* heron-cuda tmaps in0 ") != NULL);
    CHECK(strstr(body, "HERON_WG_MMA(acc, da, db)") != NULL &&
          strstr(body, "HERON_TMA_LOAD_2D(") != NULL &&
          strstr(body, "HERON_MBAR_WAIT(") != NULL);
    CHECK(strstr(body, "HERON_MMA_SYNC(") == NULL &&
          strstr(body, "HERON_MMA(") == NULL &&
          strstr(body, "HERON_CP_ASYNC(") == NULL);
    CHECK(cuda_val(b.sp, cfg, "i.w") % 4 == 0 &&
          cuda_val(b.sp, cfg, "j.w") == 1 &&
          cuda_val(b.sp, cfg, "block.n") <= 256);
    heron__buf_free(&src);
  }
  int seen[3] = {0, 0, 0};
  for (int n = 0; n < 40; n++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    if (cfg[mv] == 2) /* checked above */
      continue;
    heron__buf src = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
    const char *body = strstr(src.data, "HERON_KERNEL(heron_cuda_kernel)");
    /* ldmatrix of a plain or a swizzled tile (HERON_LDMATRIX_A_SWZ). */
    int m = strstr(body, "HERON_LDMATRIX_A") != NULL &&
            strstr(body, "HERON_MMA_SYNC(acc[") != NULL &&
            strstr(body, "HERON_MSTORE_ACC(Cs") != NULL;
    int w = strstr(body, "HERON_LOAD_A(fa[i]") != NULL ||
            strstr(body, "HERON_MMA(acc[") != NULL ||
            strstr(body, "HERON_STORE_ACC(Cs") != NULL;
    CHECK_MSG(m == (cfg[mv] == 1) && w == (cfg[mv] == 0), "mma %lld",
              (long long)cfg[mv]);
    CHECK((strstr(src.data, "HERON_MFRAG_A(name") != NULL) == (cfg[mv] == 1));
    if (cfg[mv] == 1)
      CHECK(cuda_val(b.sp, cfg, "wmma_m") >= 16);
    seen[cfg[mv]]++;
    heron__buf_free(&src);
  }
  CHECK(seen[0] > 0 && seen[1] > 0);
  cuda_unbuild(&b);

  /* No mma 2 on sm_80, nor for BMM (a batch) on sm_90. */
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[0], "a100", 0, &err), &err);
  mv = heron_space_find_var(b.sp, "mma");
  CHECK(heron_space_var_domain(b.sp, mv, &lo, &hi, NULL, NULL) == HERON_OK);
  CHECK(lo == 0 && hi == 1);
  cuda_unbuild(&b);
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[1], "h100", 0, &err), &err);
  mv = heron_space_find_var(b.sp, "mma");
  CHECK(heron_space_var_domain(b.sp, mv, &lo, &hi, NULL, NULL) == HERON_OK);
  CHECK(lo == 0 && hi == 1);
  cuda_unbuild(&b);

  /* Below sm_80: the same GPU described as sm_75. */
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[0], "a100", 0, &err), &err);
  cuda_unbuild(&b);
  heron__hw hw = b.hw;
  hw.sm = 75;
  CHECK_OK(heron__template_build(&b.op, &hw, "cuda", &b.t, &b.sp, &err), &err);
  mv = heron_space_find_var(b.sp, "mma");
  CHECK(heron_space_var_domain(b.sp, mv, &lo, &hi, NULL, NULL) == HERON_OK);
  CHECK(lo == 0 && hi == 0);
  cuda_unbuild(&b);

  /* M of 4, padded to 8: mma 1 cannot be completed. */
  static const cuda_case scan = {"scan", {4, 24, 16}, 3};
  CHECK_OK(cuda_build(&b, &scan, "a100", 0, &err), &err);
  free(cfg);
  nv = heron_space_nvars(b.sp);
  cfg = malloc((size_t)nv * sizeof *cfg);
  for (int v = 0; v < nv; v++)
    cfg[v] = HERON_UNSET;
  cfg[heron_space_find_var(b.sp, "mma")] = 1;
  CHECK(heron_space_validate(b.sp, &rng, cfg, cfg, &err) != HERON_OK);
  free(cfg);
  cuda_unbuild(&b);
}

/* A log line of the mma.sync era without the swizzle knobs (the H200
 * campaign of 2026-11-28, configs/datasets/cuda-h200/GEMM4096.jsonl.gz)
 * reads back unswizzled with its key, and its source has no swizzle. */
TEST(log_line_without_the_swizzle_knobs_reads_back_unswizzled) {
  cuda_built b;
  heron_error err = {0};
  static const cuda_case g4096 = {"gemm", {4096, 4096, 4096}, 3};
  CHECK_OK(cuda_build(&b, &g4096, "h200", 0, &err), &err);
  static const char line[] =
      "{\"task\":\"gemm/4096,4096,4096/fp16/cuda\",\"trial\":99,\"config\":"
      "{\"wmma_m\":16,\"wmma_n\":16,\"wmma_k\":16,\"i.w\":2,\"i.f\":4,"
      "\"i.b\":32,\"j.w\":4,\"j.f\":4,\"j.b\":16,\"k.m\":16,\"k.f\":1,"
      "\"k.o\":16,\"A.shared_at\":1,\"A.shared_pad\":32,\"A.shared_vec\":8,"
      "\"B.shared_at\":1,\"B.shared_pad\":8,\"B.shared_vec\":8,"
      "\"C.shared_pad\":24,\"out.vec\":1,\"unroll\":5,\"pipeline\":1,"
      "\"mma\":1},\"key\":\"2c2b06ee1a8f9057\",\"status\":\"ok\","
      "\"seconds\":0.00050172363628040665,\"gflops\":273933.58321908361}";
  json_t *o = json_loads(line, 0, NULL);
  CHECK(o != NULL);
  int nv = heron_space_nvars(b.sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  heron_measurement m;
  int valid = 0;
  CHECK_OK(heron__log_parse(o, b.sp, "gemm/4096,4096,4096/fp16/cuda", &rng, &m,
                            cfg, &valid, NULL, 1, "GEMM4096.jsonl", &err),
           &err);
  CHECK_EQ(valid, 1);
  CHECK_EQ(cuda_val(b.sp, cfg, "mma"), 1);
  CHECK_EQ(cuda_val(b.sp, cfg, "A.shared_swz"), 0);
  CHECK_EQ(cuda_val(b.sp, cfg, "B.shared_swz"), 0);
  CHECK_EQ(cuda_val(b.sp, cfg, "block_swz"), 1);
  CHECK_EQ(cuda_val(b.sp, cfg, "split_k"), 1);
  char key[32];
  CHECK_OK(heron_space_key(b.sp, cfg, key, sizeof key), NULL);
  CHECK_MSG(!strcmp(key, "2c2b06ee1a8f9057"), "key %s", key);
  heron__buf src = {0};
  CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
  const char *body = strstr(src.data, "HERON_KERNEL(heron_cuda_kernel)");
  CHECK(body && !strstr(body, "heron__swz") && !strstr(body, "_SWZ(") &&
        strstr(body, "HERON_LDMATRIX_A(fa[i]"));
  heron__buf_free(&src);
  json_decref(o);
  free(cfg);
  cuda_unbuild(&b);
}

/* The block swizzle by the rules: on GEMM 4096^3 (an H100's 132 SMs, grids
 * of up to 256 x 256 blocks) samples take every G of {1, 2, 4, 8}, and a G
 * > 1 config's source maps blockIdx.x through the groups; GEMM 64^3 on the
 * same GPU (a grid of at most 16 blocks, under 2 per SM) only G = 1, whose
 * source maps it row-major as before the knob. */
TEST(block_swizzle_by_the_rules) {
  static const cuda_case g4096 = {"gemm", {4096, 4096, 4096}, 3},
                         g64 = {"gemm", {64, 64, 64}, 3};
  for (int big = 0; big < 2; big++) {
    cuda_built b;
    heron_error err = {0};
    CHECK_OK(cuda_build(&b, big ? &g4096 : &g64, "h100", 0, &err), &err);
    heron_rng rng;
    heron_rng_seed(&rng, 5);
    int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
    int seen[9] = {0};
    for (int n = 0; n < 400; n++) {
      CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
      int64_t G = cuda_val(b.sp, cfg, "block_swz");
      CHECK(G >= 1 && G <= 8);
      if (seen[G]++ == 0) {
        heron__buf src = {0};
        CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
        const char *body = strstr(src.data, "HERON_KERNEL(heron_cuda_kernel)");
        CHECK(body != NULL);
        if (G > 1)
          CHECK_MSG(strstr(body, "const int bq = HERON_BX /") &&
                        strstr(body, "br % bg"),
                    "G %lld: %s", (long long)G, body);
        else
          CHECK(strstr(body, "m0 = (int)(HERON_BX /") != NULL);
        heron__buf_free(&src);
      }
    }
    free(cfg);
    cuda_unbuild(&b);
    if (big)
      CHECK_MSG(seen[1] && seen[2] && seen[4] && seen[8],
                "G 1/2/4/8 seen %d/%d/%d/%d times", seen[1], seen[2], seen[4],
                seen[8]);
    else
      CHECK_MSG(seen[1] == 400, "GEMM 64^3 took G > 1 %d times", 400 - seen[1]);
  }
}

/* Split-K by the rules: no knob where K (padded) is under 256 (every
 * small case, GEMM 64^3); on a skinny GEMM of K 509 (padded 512) samples
 * take S in {1, 2, 4}, never 8 (a split of 64), each S > 1 source defines
 * the split, sums through the workspace and launches S blocks in z, and
 * the S = 1 source has none of it.  A split that would leave a split
 * without K work (k.o not a multiple of S) or with fewer chunks than
 * pipeline stages cannot be completed, nor S > 1 on a grid of more than
 * 4 blocks per SM. */
TEST(split_k_by_the_rules) {
  static const cuda_case g64 = {"gemm", {64, 64, 64}, 3};
  for (int i = -1; i < CUDA_NSMALL; i++) {
    cuda_built b;
    heron_error err = {0};
    CHECK_OK(cuda_build(&b, i < 0 ? &g64 : &CUDA_SMALL[i], "h100", 0, &err),
             &err);
    CHECK_MSG(heron_space_find_var(b.sp, "split_k") < 0, "%s",
              i < 0 ? "gemm 64^3" : CUDA_SMALL[i].op);
    cuda_unbuild(&b);
  }
  static const cuda_case skinny = {"gemm", {5, 67, 509}, 3};
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, &skinny, "h100", 0, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int64_t *twin = malloc((size_t)nv * sizeof *twin);
  heron_rng rng;
  heron_rng_seed(&rng, 9);
  int seen[17] = {0}, odd_half = 0, few_chunks = 0;
  for (int n = 0; n < 3000; n++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    int64_t S = cuda_val(b.sp, cfg, "split_k"), ko = cuda_val(b.sp, cfg, "k.o");
    CHECK(S == 1 || S == 2 || S == 4);
    if (seen[S]++ == 0) {
      heron__buf src = {0};
      CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
      heron__cuda_launch l;
      CHECK_EQ(heron__cuda_launch_parse(src.data, &l), 0);
      CHECK_EQ(l.grid[2], S);
      char def[48];
      snprintf(def, sizeof def, "#define HERON_SPLIT_K %lld\n", (long long)S);
      if (S > 1)
        CHECK_MSG(strstr(src.data, def) &&
                      strstr(src.data, "if (HERON_SPLIT_LAST(tile)) {") &&
                      strstr(src.data, "HERON_WS_SUM4(") &&
                      strstr(src.data, "const int ksplit = (int)HERON_BZ * "),
                  "S %lld: %s", (long long)S, src.data);
      else
        CHECK(!strstr(src.data, "HERON_SPLIT") && !strstr(src.data, "ksplit"));
      heron__buf_free(&src);
    }
    /* A knob-only copy (aux variables left to validate) with S changed. */
    for (int v = 0; v < nv; v++)
      twin[v] = heron_space_var_is_knob(b.sp, v) ? cfg[v] : HERON_UNSET;
    int sv = heron_space_find_var(b.sp, "split_k");
    if (S == 2 && ko % 4 == 2) {
      /* S = 4 would leave k.o / 4 not whole: some split without work. */
      twin[sv] = 4;
      CHECK(heron_space_validate(b.sp, &rng, twin, twin, &err) != HERON_OK);
      odd_half++;
    } else if (S == 1 && ko == 4 && cuda_val(b.sp, cfg, "pipeline") == 4 &&
               cuda_val(b.sp, cfg, "A.shared_at") == 0) {
      /* S = 2: 2 chunks a split for 4 stages; S = 1 is the config. */
      twin[sv] = 2;
      CHECK(heron_space_validate(b.sp, &rng, twin, twin, &err) != HERON_OK);
      few_chunks++;
    }
  }
  CHECK_MSG(seen[1] && seen[2] && seen[4] && odd_half && few_chunks,
            "S 1/2/4 seen %d/%d/%d times; %d k.o = 2 mod 4, %d with too few "
            "chunks",
            seen[1], seen[2], seen[4], odd_half, few_chunks);
  cuda_unbuild(&b);
  /* GEMM 2048 x 2048 x 512 on an H100 (132 SMs): S > 1 only on grids of
   * at most 528 / S blocks. */
  static const cuda_case wide = {"gemm", {2048, 2048, 512}, 3};
  CHECK_OK(cuda_build(&b, &wide, "h100", 0, &err), &err);
  free(cfg);
  free(twin);
  nv = heron_space_nvars(b.sp);
  cfg = malloc((size_t)nv * sizeof *cfg);
  int split = 0;
  for (int n = 0; n < 1000; n++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    int64_t S = cuda_val(b.sp, cfg, "split_k");
    if (S > 1) {
      split++;
      CHECK(cuda_val(b.sp, cfg, "i.b") * cuda_val(b.sp, cfg, "j.b") * S <=
            4 * 132);
    }
  }
  fprintf(stderr, "gemm 2048x2048x512: %d of 1000 samples split\n", split);
  free(cfg);
  cuda_unbuild(&b);
}

/* The swizzle knobs: {0, 1} on sm_80+, only 0 below; a swizzled operand
 * has mma 1, pad 0 and a pitch of 16, 32 or a multiple of 64 halves, and
 * its source stores through heron__swz and loads with
 * HERON_LDMATRIX_*_SWZ; swizzle with mma 0 or a pad cannot be completed. */
TEST(swizzle_knobs_by_the_rules) {
  cuda_built b;
  heron_error err = {0};
  heron_rng rng;
  heron_rng_seed(&rng, 9);
  for (int c = 0; c < 4; c++) {
    const cuda_case *cc = c == 0 ? &CUDA_SUITE[0] : &CUDA_SMALL[c * 2 + 1];
    CHECK_OK(cuda_build(&b, cc, "h100", 0, &err), &err);
    int nv = heron_space_nvars(b.sp);
    int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
    int seen[2][2] = {{0, 0}, {0, 0}};
    for (int n = 0; n < 300; n++) {
      CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
      for (int i = 0; i < 2; i++) {
        const char *nm = i == 0 ? "A" : "B";
        char k[48];
        snprintf(k, sizeof k, "%s.shared_swz", nm);
        int64_t swz = cuda_val(b.sp, cfg, k);
        CHECK(swz == 0 || swz == 1);
        seen[i][swz != 0]++;
        if (!swz)
          continue;
        snprintf(k, sizeof k, "%s.shared_pad", nm);
        CHECK_EQ(cuda_val(b.sp, cfg, k), 0);
        CHECK_EQ(cuda_val(b.sp, cfg, "mma"), 1);
        snprintf(k, sizeof k, "%s.shared_pitch", nm);
        int64_t pitch = cuda_val(b.sp, cfg, k);
        CHECK_MSG(pitch == 16 || pitch == 32 || pitch % 64 == 0, "pitch %lld",
                  (long long)pitch);
      }
      if (n % 10)
        continue;
      heron__buf src = {0};
      CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
      const char *body = strstr(src.data, "HERON_KERNEL(heron_cuda_kernel)");
      for (int i = 0; i < 2; i++) {
        int64_t swz = cuda_val(b.sp, cfg, i ? "B.shared_swz" : "A.shared_swz");
        CHECK((strstr(body, i ? "HERON_LDMATRIX_B_SWZ("
                              : "HERON_LDMATRIX_A_SWZ(") != NULL) ==
              (swz == 1));
      }
      heron__buf_free(&src);
    }
    CHECK_MSG(seen[0][1] > 0 && seen[1][1] > 0 && seen[0][0] > 0,
              "%s: swizzled A %d, B %d", cc->op, seen[0][1], seen[1][1]);
    /* Swizzle with wmma, or with a pad: no config. */
    for (int bad = 0; bad < 2; bad++) {
      for (int v = 0; v < nv; v++)
        cfg[v] = HERON_UNSET;
      cfg[heron_space_find_var(b.sp, "A.shared_swz")] = 1;
      if (bad == 0)
        cfg[heron_space_find_var(b.sp, "mma")] = 0;
      else
        cfg[heron_space_find_var(b.sp, "A.shared_pad")] = 8;
      CHECK(heron_space_validate(b.sp, &rng, cfg, cfg, &err) != HERON_OK);
    }
    free(cfg);
    cuda_unbuild(&b);
  }
  /* Below sm_80 (an A100 described as sm_75): only 0. */
  CHECK_OK(cuda_build(&b, &CUDA_SUITE[0], "a100", 0, &err), &err);
  cuda_unbuild(&b);
  heron__hw hw = b.hw;
  hw.sm = 75;
  CHECK_OK(heron__template_build(&b.op, &hw, "cuda", &b.t, &b.sp, &err), &err);
  int64_t lo, hi;
  for (int i = 0; i < 2; i++) {
    int v = heron_space_find_var(b.sp, i ? "B.shared_swz" : "A.shared_swz");
    CHECK(heron_space_var_domain(b.sp, v, &lo, &hi, NULL, NULL) == HERON_OK);
    CHECK(lo == 0 && hi == 0);
  }
  cuda_unbuild(&b);
}

/* ---- the bank census ------------------------------------------------------
 * Each config's kernel is built as the emulation with -DHERON_EMU_BANKS and
 * a main() that runs the grid on zero inputs; the emulation then counts,
 * for every phase of every ldmatrix (8 lanes' 16-byte row addresses) and
 * of every 16-byte store into shared memory (HERON_GCOPY / HERON_CP_ASYNC
 * of 8 halves, the 8 lanes of a quarter warp at one instance of one
 * source line), whether the 8 addresses fall into 8 distinct 16-byte bank
 * groups (cover the 32 four-byte banks once), and prints the counts. */

typedef struct bank_census {
  long long ldm, ldm_bad, ldm_extra, st, st_bad, st_extra;
} bank_census;

static int census_of(const char *src, const char *tag, bank_census *bc) {
  char dir[256], c[300], exe[300], log[300], cmd[2048];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/heron-banks-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir))
    return -1;
  snprintf(c, sizeof c, "%s/k.c", dir);
  snprintf(exe, sizeof exe, "%s/k", dir);
  snprintf(log, sizeof log, "%s/k.log", dir);
  heron__buf text = {0};
  heron__buf_puts(&text, src);
  heron__buf_puts(
      &text, "\nint main(void) {\n"
             "  void *bufs[4] = {calloc((size_t)HERON_IN0_ELEMS + 8, 2),\n"
             "                   calloc((size_t)HERON_IN1_ELEMS + 8, 2),\n"
             "                   calloc((size_t)HERON_OUT_ELEMS + 8, 2),\n"
             "                   calloc((size_t)HERON_BIAS_ELEMS + 8, 2)};\n"
             "  heron_kernel(bufs);\n"
             "  return 0;\n"
             "}\n");
  heron_error err = {0};
  int rc = heron__write_file(c, text.data, text.len, &err);
  heron__buf_free(&text);
  if (rc == HERON_OK) {
    snprintf(cmd, sizeof cmd,
             "cc -O1 -g0 -x c -std=gnu11 -DHERON_EMULATE -DHERON_EMU_BANKS "
             "-fno-strict-aliasing -Wno-unknown-pragmas -o '%s' '%s' > '%s' "
             "2>&1 && '%s' > '%s' 2>&1",
             exe, c, log, exe, log);
    rc = system(cmd) == 0 ? 0 : -1;
  }
  char *out = NULL;
  size_t len = 0;
  heron__read_file(log, &out, &len, &err);
  const char *l = out ? strstr(out, "heron-banks:") : NULL;
  if (rc != 0 || !l ||
      sscanf(l,
             "heron-banks: ldmatrix phases %lld conflicted %lld extra %lld; "
             "stores phases %lld conflicted %lld extra %lld",
             &bc->ldm, &bc->ldm_bad, &bc->ldm_extra, &bc->st, &bc->st_bad,
             &bc->st_extra) != 6) {
    fprintf(stderr, "%s: the census failed:\n%s\n", tag, out ? out : "");
    rc = -1;
  }
  free(out);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", dir);
  return rc;
}

/* For case c: `nswz` sampled mma configs with both operands swizzled,
 * whose every ldmatrix and 16-byte store phase must be conflict-free (the
 * rules' claim), and `nplain` unswizzled mma configs whose conflicts are
 * printed, not asserted. */
static void census_case(const cuda_case *c, int nswz, int nplain,
                        long long *swz_phases) {
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, c, "h100", 0, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 31);
  int64_t *fix = malloc((size_t)nv * sizeof *fix);
  int got[2] = {0, 0};
  for (int n = 0; n < nswz + nplain; n++) {
    /* Swizzled configs first, with the widest copies the index maps allow,
     * so that the 16-byte stores are counted where there are any. */
    int kind = n < nswz;
    for (int v = 0; v < nv; v++)
      fix[v] = HERON_UNSET;
    fix[heron_space_find_var(b.sp, "mma")] = 1;
    for (int i = 0; i < 2; i++) {
      fix[heron_space_find_var(b.sp, i ? "B.shared_swz" : "A.shared_swz")] =
          kind;
      int v = heron_space_find_var(b.sp, i ? "B.shared_vec" : "A.shared_vec");
      int64_t lo, hi;
      CHECK(heron_space_var_domain(b.sp, v, &lo, &hi, NULL, NULL) == HERON_OK);
      if (kind)
        fix[v] = hi;
    }
    CHECK_OK(heron_space_sample_restricted(b.sp, &rng, fix, NULL, cfg, &err),
             &err);
    got[kind]++;
    heron__buf src = {0};
    CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
    char key[32], tag[160];
    heron_space_key(b.sp, cfg, key, sizeof key);
    snprintf(tag, sizeof tag,
             "%s %s (%s, pitch A %lld B %lld, pad A %lld B %lld, vec A %lld "
             "B %lld, pipeline %lld)",
             c->op, key, kind ? "swizzled" : "unswizzled",
             (long long)cuda_val(b.sp, cfg, "A.shared_pitch"),
             (long long)cuda_val(b.sp, cfg, "B.shared_pitch"),
             (long long)cuda_val(b.sp, cfg, "A.shared_pad"),
             (long long)cuda_val(b.sp, cfg, "B.shared_pad"),
             (long long)cuda_val(b.sp, cfg, "A.shared_vec"),
             (long long)cuda_val(b.sp, cfg, "B.shared_vec"),
             (long long)cuda_val(b.sp, cfg, "pipeline"));
    bank_census bc;
    CHECK_MSG(census_of(src.data, tag, &bc) == 0, "%s", tag);
    fprintf(stderr,
            "%s: ldmatrix %lld phases, %lld conflicted (+%lld wavefronts); "
            "16-byte stores %lld phases, %lld conflicted (+%lld)\n",
            tag, bc.ldm, bc.ldm_bad, bc.ldm_extra, bc.st, bc.st_bad,
            bc.st_extra);
    CHECK(bc.ldm > 0);
    if (kind) {
      CHECK_MSG(bc.ldm_bad == 0 && bc.st_bad == 0,
                "%s: the rules claim no bank conflict", tag);
      *swz_phases += bc.st;
    }
    heron__buf_free(&src);
  }
  CHECK_EQ(got[1], nswz);
  free(fix);
  free(cfg);
  cuda_unbuild(&b);
}

TEST(swizzled_configs_have_no_bank_conflicts) {
  static const cuda_case cases[] = {
      {"gemm", {128, 128, 256}, 3},
      {"gemm", {199, 151, 101}, 3},
      {"bmm", {2, 64, 48, 96}, 4},
      {"c2d", {2, 6, 5, 4, 8, 3, 3, 1, 1, 1}, 10},
  };
  long long st = 0;
  for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++)
    census_case(&cases[i], 3, 1, &st);
  /* Some 16-byte store phases were counted (a vec-8 operand). */
  CHECK(st > 0);
}

/* The igemm knob (issue 32 step 4): only ops whose A has a sliding window
 * (a dimension indexed by M and K axes together: the convolutions) have
 * it, so the spaces and kernels of GEMM, BMM, GEMV and the scan are those
 * of before; a convolution's log line written without it reads back as
 * 0, the kernel that reads A through its index map per element. */
TEST(igemm_knob_only_for_sliding_windows_and_absent_reads_zero) {
  for (int i = 0; i < CUDA_NSMALL; i++) {
    cuda_built b;
    heron_error err = {0};
    CHECK_OK(cuda_build(&b, &CUDA_SMALL[i], "a100", 0, &err), &err);
    int conv = heron__cuda_sched_of(b.t)->ig.fits;
    CHECK_MSG((heron_space_find_var(b.sp, "igemm") >= 0) == conv, "%s",
              CUDA_SMALL[i].op);
    CHECK_MSG(conv == (i >= 4 && i <= 8), "%s", CUDA_SMALL[i].op);
    if (conv) {
      /* A log line of a sampled config's knobs, igemm left out. */
      int nv = heron_space_nvars(b.sp);
      int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
      heron_rng rng;
      heron_rng_seed(&rng, 3);
      do
        CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
      while (cuda_val(b.sp, cfg, "igemm") != 1 ||
             cuda_val(b.sp, cfg, "A.shared_vec") !=
                 heron__cuda_sched_of(b.t)->op[0].vec_max);
      json_t *c = json_object();
      for (int k = 0; k < heron_space_nknobs(b.sp); k++) {
        int v = heron_space_knob(b.sp, k);
        const char *name = heron_space_var_name(b.sp, v);
        if (strcmp(name, "igemm"))
          json_object_set_new(c, name, json_integer(cfg[v]));
      }
      char task[128];
      snprintf(task, sizeof task, "%s/x/fp16/cuda", CUDA_SMALL[i].op);
      json_t *o = json_pack("{s:s, s:i, s:o, s:s, s:f}", "task", task, "trial",
                            1, "config", c, "status", "ok", "seconds", 1e-5);
      heron_measurement m;
      int valid = 0;
      CHECK_OK(heron__log_parse(o, b.sp, task, &rng, &m, cfg, &valid, NULL, 1,
                                "conv.jsonl", &err),
               &err);
      CHECK_EQ(valid, 1);
      CHECK_EQ(cuda_val(b.sp, cfg, "igemm"), 0);
      json_decref(o);
      free(cfg);
    }
    cuda_unbuild(&b);
  }
}

/* Whether src[0, len) holds the identifier id as a whole token. */
static int has_token(const char *src, size_t len, const char *id) {
  size_t n = strlen(id);
  for (const char *p = src; p + n <= src + len; p++) {
    if (strncmp(p, id, n))
      continue;
    int before = p > src && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
    int after =
        p + n < src + len && (isalnum((unsigned char)p[n]) || p[n] == '_');
    if (!before && !after)
      return 1;
  }
  return 0;
}

/* The claim of the implicit-GEMM addressing, read off the generated text:
 * with igemm 1, nothing between the end of the row table ("A.rows
 * complete") and the end of the main loop ("A.shared and B.shared die")
 * names an M axis (ax_n, ax_oh, ax_ow, ...: the fused M index split with
 * div / mod) or the block's M origin m0, and A is read through the table
 * (Ar); with igemm 0 the same stretch (from the accumulators' zero fill)
 * does split the fused M index, so the check has teeth.  Every
 * convolution, one to four pipeline stages, wmma and mma.sync. */
TEST(igemm_k_loop_holds_no_division_of_the_fused_m_index) {
  static const cuda_case nhwc = {
      "c2d_nhwc", {1, 7, 9, 8, 5, 3, 3, 2, 1, 1}, 10};
  const cuda_case *cases[] = {&CUDA_SMALL[4], &CUDA_SMALL[5], &CUDA_SMALL[6],
                              &CUDA_SMALL[7], &CUDA_SMALL[8], &nhwc};
  int checked = 0;
  for (int ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ci++) {
    cuda_built b;
    heron_error err = {0};
    CHECK_OK(cuda_build(&b, cases[ci], "a100", 0, &err), &err);
    const heron__cuda_sched *s = heron__cuda_sched_of(b.t);
    const heron__gemm_group *gm = &s->g[HERON__GM];
    int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
    heron_rng rng;
    heron_rng_seed(&rng, 21);
    for (int ig = 0; ig <= 1; ig++)
      for (int S = 1; S <= 4; S++)
        for (int mma = 0; mma <= 1; mma++) {
          int found = 0;
          for (int n = 0; n < 20000 && !found; n++) {
            CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
            found = cuda_val(b.sp, cfg, "igemm") == ig &&
                    cuda_val(b.sp, cfg, "pipeline") == S &&
                    cuda_val(b.sp, cfg, "mma") == mma;
          }
          CHECK_MSG(found, "%s: no config of igemm %d, %d stages, mma %d",
                    cases[ci]->op, ig, S, mma);
          heron__buf src = {0};
          CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
          const char *from =
              strstr(src.data, ig ? "/* A.rows complete */" : "FILL_ZERO(acc");
          const char *to =
              from ? strstr(from, "A.shared and B.shared die") : NULL;
          CHECK_MSG(from && to, "%s: markers missing", cases[ci]->op);
          size_t len = (size_t)(to - from);
          int splits = has_token(from, len, "m0");
          for (int a = 0; a < gm->naxes; a++) {
            char id[48];
            snprintf(id, sizeof id, "ax_%s", b.op.axes[gm->axes[a]].name);
            splits |= has_token(from, len, id);
          }
          CHECK_MSG(splits == !ig,
                    "%s, igemm %d, %d stages, mma %d: the k loop %s the "
                    "fused M index:\n%s",
                    cases[ci]->op, ig, S, mma,
                    splits ? "splits" : "never splits", src.data);
          CHECK(!ig || has_token(from, len, "Ar"));
          heron__buf_free(&src);
          checked++;
        }
    free(cfg);
    cuda_unbuild(&b);
  }
  CHECK_EQ(checked, 6 * 16);
}

/* Channels-last data (c2d_nhwc: ci has coefficient 1 in the last
 * dimension, but the view's K order is ci, kh, kw): igemm 1 splits k with
 * ci innermost, so that A.shared_vec may reach 8 channels; every sampled
 * config keeps the limits, the plan and the vector claims (config_ok reads
 * the vectors in the kernel's K order), and igemm 0 keeps the view's
 * order and vectors. */
TEST(igemm_channels_last_splits_k_channel_innermost) {
  static const cuda_case nhwc = {
      "c2d_nhwc", {1, 9, 11, 16, 6, 3, 3, 1, 1, 1}, 10};
  cuda_built b;
  heron_error err = {0};
  CHECK_OK(cuda_build(&b, &nhwc, "h100", 0, &err), &err);
  const heron__cuda_sched *s = heron__cuda_sched_of(b.t);
  CHECK(s->ig.fits && s->ig.reorder);
  CHECK(!strcmp(b.op.axes[s->ig.gk.axes[s->ig.gk.naxes - 1]].name, "ci"));
  CHECK_EQ(s->ig.vec_max, 8);
  CHECK_EQ(s->op[0].vec_max, 1);
  heron_rng rng;
  heron_rng_seed(&rng, 9);
  int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
  int wide = 0, narrow0 = 1;
  char why[160] = "";
  for (int n = 0; n < 1000; n++) {
    CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
    CHECK_MSG(config_ok(&b, cfg, &rng, why, sizeof why), "%s", why);
    int64_t va = cuda_val(b.sp, cfg, "A.shared_vec");
    wide += cuda_val(b.sp, cfg, "igemm") == 1 && va == 8;
    narrow0 &= cuda_val(b.sp, cfg, "igemm") == 1 || va == 1;
  }
  CHECK_MSG(wide > 0, "no igemm config with vectors of 8 channels");
  CHECK(narrow0);
  free(cfg);
  cuda_unbuild(&b);
}
