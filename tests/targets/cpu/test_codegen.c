/* tests/targets/cpu/test_codegen.c - generated cpu kernels compile, run and
 * match the op's reference for random valid configs of every op at small,
 * odd shapes (primes, strides, padding, dilation), overwrite their output,
 * and invalid configs are refused.
 *
 * Most cases build the template for this machine (heron__hw_detect_cpu, so
 * HERON_CPU_ISA=avx2 makes an AVX-512 machine test like an AVX2 one).  The
 * micro-kernel cases build it for a fixed description (configs/hw/
 * cpu-avx512.json at vec 16, cpu-avx2.json at vec 8): their kernels are
 * generated and compiled with the description's flags on every machine,
 * and run only where this CPU has the instructions they need; elsewhere
 * the case is skipped, naming what the CPU lacks. */
#include "test.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "core/op/op.h"
#include "core/sched/sched.h"
#include "core/space/builder.h"
#include "core/targets/cpu/template.h"
#include "core/targets/hw.h"
#include "targets/kernel_check.h"

/* Generated kernels are compiled the way the measure module would, with
 * the template's flags (heron__template_cflags), but at -O2: faster
 * builds, the same code paths. */
#define CC_OPT "-O2" KERNEL_SAN
#define NCONFIGS 16
#define MAX_CONFIGS 50

/* Under the sanitizers (the second stage of tools/test.sh) every case
 * samples a third as many configs (half until 2026-11-29, when this file
 * was the sanitizer stage's largest, 300 test-seconds): running the
 * kernels again is mostly the Release stage's check twice, while a third
 * of the configs, built with AddressSanitizer (below), still take the
 * generator under ASan and UBSan through every path of a case and catch a
 * missing edge guard. */
#define CONFIG_DIVISOR (HERON_TEST_SANITIZED ? 3 : 1)

/* Under the sanitizers the kernels are built with AddressSanitizer too, so
 * a read or write past the end of a tensor (an edge tile whose guard is
 * missing) stops the test. */
#if HERON_TEST_SANITIZED
#define KERNEL_SAN " -fsanitize=address -fno-omit-frame-pointer"
#else
#define KERNEL_SAN ""
#endif

/* What a case varies beyond op and shape: the fused epilogue, how many
 * configs, knobs fixed to a value (the rest sampled), and the hardware
 * description the template is built for. */
typedef struct case_opts {
  int epilogue;
  int nconfigs; /* 0: NCONFIGS */
  const char *fix_name[4];
  int64_t fix_val[4];
  const char *hw; /* configs/hw/<hw>.json; NULL: this machine */
  /* At least this many of the sampled configs must have tiles that do
   * not divide their axis (edge tiles); 0: no requirement. */
  int min_ragged;
  /* The task option prepack ("weight", "A,B"); NULL: none.  At least
   * min_prepacked kernels must then take an input packed ahead. */
  const char *prepack;
  int min_prepacked;
  /* After the two checked calls, two host threads call each kernel at
   * once, many times, into their own outputs: one call then runs without
   * the kept buffers (their owner is busy) and makes its own. */
  int concurrent;
} case_opts;

/* How far a case got: a failure, every kernel compiled and run, or every
 * kernel compiled but none run (this CPU lacks the description's ISA). */
enum { CASE_FAILED, CASE_RAN, CASE_COMPILED_ONLY };

typedef void (*kernel_fn)(void *const *bufs);

static int build_epi(kc_cpu *b, const char *op, const int64_t *shape, int n,
                     int epilogue, const char *hw, heron_error *err) {
  return kc_cpu_build(b, op, shape, n, HERON__FP32, epilogue, NULL, hw, err);
}

static int build(kc_cpu *b, const char *op, const int64_t *shape, int n,
                 heron_error *err) {
  return build_epi(b, op, shape, n, 0, NULL, err);
}

/* When kernel h exports heron_prepack: replaces each input it takes
 * packed ahead in kbufs with a packed copy of exactly the floats it asks
 * for (the caller frees the copies: the kbufs that differ from the
 * inputs), counting the kernel in *prepacked.  0 with why filled in when
 * the exports are inconsistent. */
static int prepack_copies(void *h, const heron__op *op, void **kbufs,
                          int *prepacked, char *why, size_t cap) {
  void *pe = dlsym(h, "heron_prepacked_elems");
  void *pk = dlsym(h, "heron_prepack");
  if (!pe != !pk) {
    snprintf(why, cap,
             "kernel exports only one of heron_prepacked_elems "
             "and heron_prepack");
    return 0;
  }
  if (!pe)
    return 1;
  int64_t (*elems)(int) = (int64_t(*)(int))(uintptr_t)pe;
  void (*pack)(int, const void *, void *) =
      (void (*)(int, const void *, void *))(uintptr_t)pk;
  int any = 0;
  for (int i = 0; i < op->ninputs; i++) {
    int64_t n = elems(i);
    if (n <= 0)
      continue;
    if (!(op->prepack >> i & 1u)) {
      snprintf(why, cap, "input %s is packed ahead but not constant",
               op->in[i].name);
      return 0;
    }
    /* Elements of the input's own type (floats here, the fp32 cases). */
    size_t bytes =
        (size_t)n * (size_t)heron__dtype_size(heron__op_buf_dtype(op, i));
    void *copy = malloc(bytes);
    if (!copy) {
      snprintf(why, cap, "out of memory");
      return 0;
    }
    /* NaN everywhere first: a float the pack leaves unwritten and the
     * kernel reads shows in the output. */
    memset(copy, 0xff, bytes);
    pack(i, kbufs[i], copy);
    kbufs[i] = copy;
    any = 1;
  }
  if (!any) {
    snprintf(why, cap, "kernel exports heron_prepack but packs nothing");
    return 0;
  }
  *prepacked += 1;
  return 1;
}

/* Compiles dir/k<i>.c to dir/k<i>.so for i < n with `cflags`, two
 * compilers at a time; diagnostics go to dir/k<i>.err. */
static int compile_all(const char *dir, int n, const char *cflags) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && i=0; while [ $i -lt %d ]; do echo $i; i=$((i+1)); "
           "done | xargs -P 2 -I@ sh -c 'cc %s " CC_OPT
           " k@.c -o k@.so 2> k@.err'",
           dir, n, cflags);
  return system(cmd);
}

/* The first of dir/k<i>.so (i < n) the compiler did not make, with its
 * diagnostics, into why[cap]; 1 when all were made. */
static int all_built(const char *dir, int n, char *why, size_t cap) {
  for (int c = 0; c < n; c++) {
    char path[300];
    snprintf(path, sizeof path, "%s/k%d.so", dir, c);
    if (access(path, R_OK) == 0)
      continue;
    char *diag = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/k%d.err", dir, c);
    heron__read_file(path, &diag, &len, NULL);
    snprintf(why, cap, "config %d (%s/k%d.c) did not build: %.200s", c, dir, c,
             diag ? diag : "");
    free(diag);
    return 0;
  }
  return 1;
}

/* Fills a buffer of `n` floats with NaN, so that a kernel that leaves any
 * output element unwritten (or accumulates onto it) cannot match. */
static void poison(float *p, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    p[i] = NAN;
}

/* 1 when some axis' tiles of cfg sweep past its extent (edge tiles). */
static int is_ragged(const kc_cpu *b, const int64_t *cfg) {
  for (int a = 0; a < b->op.naxes; a++) {
    int64_t cover = 1;
    for (int l = 0; l < heron__cpu_levels(b->t, a); l++)
      cover *= heron__cpu_tile(heron__cpu_sched_of(b->t), cfg, a, l);
    if (cover > b->op.axes[a].extent)
      return 1;
  }
  return 0;
}

/* One host thread's calls of a kernel (concurrent cases). */
typedef struct host_calls {
  kernel_fn fn;
  void *bufs[HERON__MAX_TENSORS + 2];
  int calls;
} host_calls;

static void *host_calls_main(void *arg) {
  host_calls *c = arg;
  for (int i = 0; i < c->calls; i++)
    c->fn(c->bufs);
  return NULL;
}

/* Calls fn from this thread and a second one at once, each into its own
 * output (kbufs' and a copy), 16 times; 1 when both outputs then match
 * the reference, else 0 with the reason in why. */
static int concurrent_calls_match(const kc_cpu *b, kernel_fn fn, void **kbufs,
                                  void *ref_out, int c, char *why, size_t cap) {
  int nout = b->op.ninputs;
  int64_t outn = heron__tensor_elems(&b->op.out);
  host_calls mine = {.fn = fn, .calls = 16}, theirs = mine;
  memcpy(mine.bufs, kbufs, sizeof mine.bufs);
  memcpy(theirs.bufs, kbufs, sizeof theirs.bufs);
  theirs.bufs[nout] = calloc((size_t)outn, sizeof(float));
  pthread_t th;
  if (!theirs.bufs[nout] ||
      pthread_create(&th, NULL, host_calls_main, &theirs) != 0) {
    free(theirs.bufs[nout]);
    snprintf(why, cap, "config %d: no second host thread", c);
    return 0;
  }
  host_calls_main(&mine);
  pthread_join(th, NULL);
  int ok = 1;
  for (int t = 0; t < 2 && ok; t++) {
    void *out = t ? theirs.bufs[nout] : mine.bufs[nout];
    double max_err;
    int64_t bad;
    if (!heron__op_check(&b->op, out, ref_out, &max_err, &bad)) {
      snprintf(why, cap,
               "config %d, concurrent calls, thread %d: element %lld is %g, "
               "reference %g",
               c, t, (long long)bad, ((float *)out)[bad],
               ((float *)ref_out)[bad]);
      ok = 0;
    }
  }
  free(theirs.bufs[nout]);
  return ok;
}

/* Samples NCONFIGS configs, generates, compiles, runs each twice on a
 * poisoned output and checks both runs against the reference.  Reports the
 * first failure with its config and source path, and returns a CASE_*:
 * where the CPU lacks what the description needs, every kernel must
 * compile and none runs (CASE_COMPILED_ONLY, why[] saying what is
 * missing). */
static int random_configs_match(const char *opname, const int64_t *shape,
                                int nshape, uint64_t seed, const case_opts *o,
                                char *why, size_t cap) {
  kc_cpu b;
  heron_error err = {0};
  int ncfg = o->nconfigs > 0 ? o->nconfigs : NCONFIGS;
  if (ncfg > MAX_CONFIGS)
    ncfg = MAX_CONFIGS;
  ncfg = (ncfg + CONFIG_DIVISOR - 1) / CONFIG_DIVISOR;
  if (kc_cpu_build(&b, opname, shape, nshape, HERON__FP32, o->epilogue,
                   o->prepack, o->hw, &err) != HERON_OK) {
    snprintf(why, cap, "build: %s", err.text);
    return CASE_FAILED;
  }
  char missing[64];
  int lacks = heron__hw_cpu_lacks(&b.hw, missing, sizeof missing);
  char dir[256];
  if (kc_scratch(dir, sizeof dir, "codegen")) {
    kc_cpu_free(&b);
    snprintf(why, cap, "no scratch folder");
    return CASE_FAILED;
  }
  int nv = heron_space_nvars(b.sp), ok = 1;
  int64_t *cfgs = malloc((size_t)nv * ncfg * sizeof *cfgs);
  int64_t *fix = malloc((size_t)nv * sizeof *fix);
  for (int v = 0; v < nv; v++)
    fix[v] = HERON_UNSET;
  for (int f = 0; f < 4 && o->fix_name[f]; f++) {
    int v = heron_space_find_var(b.sp, o->fix_name[f]);
    if (v < 0) {
      snprintf(why, cap, "no variable %s", o->fix_name[f]);
      ok = 0;
    } else {
      fix[v] = o->fix_val[f];
    }
  }
  heron_rng rng;
  heron_rng_seed(&rng, seed);
  int ragged = 0;
  for (int c = 0; c < ncfg && ok; c++) {
    int64_t *cfg = cfgs + (size_t)c * nv;
    heron__buf src = {0};
    if (heron_space_sample_restricted(b.sp, &rng, fix, NULL, cfg, &err) !=
            HERON_OK ||
        heron__codegen(b.t, b.sp, cfg, &src, &err) != HERON_OK) {
      snprintf(why, cap, "config %d: %s", c, err.text);
      ok = 0;
    } else {
      ragged += is_ragged(&b, cfg);
      char path[300];
      snprintf(path, sizeof path, "%s/k%d.c", dir, c);
      ok = heron__write_file(path, src.data, src.len, &err) == HERON_OK;
      if (!ok)
        snprintf(why, cap, "%s", err.text);
    }
    heron__buf_free(&src);
  }
  free(fix);
  int need = (o->min_ragged + CONFIG_DIVISOR - 1) / CONFIG_DIVISOR;
  if (ok && ragged < need) {
    snprintf(why, cap, "%d of %d configs have edge tiles, wanted %d", ragged,
             ncfg, need);
    ok = 0;
  }
  const char *cflags = heron__template_cflags(b.t);
  if (ok)
    compile_all(dir, ncfg, cflags);
  if (ok && lacks) {
    /* Kernels for an ISA this CPU lacks must build, and cannot run. */
    ok = all_built(dir, ncfg, why, cap);
    if (ok) {
      heron__rmtree(dir);
      snprintf(why, cap,
               "%s on %s: generated and compiled %d configs (%s); ran none: "
               "this CPU lacks %s",
               opname, o->hw ? o->hw : "this machine", ncfg, cflags, missing);
    }
    free(cfgs);
    kc_cpu_free(&b);
    return ok ? CASE_COMPILED_ONLY : CASE_FAILED;
  }

  void *bufs[HERON__MAX_TENSORS + 2], *ref[HERON__MAX_TENSORS + 2];
  int have = ok && kc_inputs(&b.op, bufs, ref, seed, &err) == HERON_OK;
  if (ok && !have) {
    snprintf(why, cap, "buffers: %s", err.text);
    ok = 0;
  }
  kc_hold_libgomp(NULL, 0);
  int nout = b.op.ninputs;
  int64_t outn = heron__tensor_elems(&b.op.out);
  int prepacked = 0; /* kernels that took an input packed ahead */
  for (int c = 0; c < ncfg && ok; c++) {
    char path[300];
    snprintf(path, sizeof path, "%s/k%d.so", dir, c);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    kernel_fn fn = h ? (kernel_fn)(uintptr_t)dlsym(h, "heron_kernel") : NULL;
    if (!fn) {
      char *diag = NULL;
      size_t len = 0;
      snprintf(path, sizeof path, "%s/k%d.err", dir, c);
      heron__read_file(path, &diag, &len, NULL);
      snprintf(why, cap, "config %d (%s/k%d.c) did not build: %.80s", c, dir, c,
               diag ? diag : "");
      free(diag);
      if (h)
        dlclose(h);
      ok = 0;
      break;
    }
    /* Inputs the kernel takes packed ahead: copies of exactly the size it
     * asks for (under the sanitizers a read past one stops the test). */
    void *kbufs[HERON__MAX_TENSORS + 2];
    memcpy(kbufs, bufs, sizeof kbufs);
    ok = prepack_copies(h, &b.op, kbufs, &prepacked, why, cap);
    for (int run = 0; run < 2 && ok; run++) {
      poison(bufs[nout], run == 0 ? outn : 0);
      fn(kbufs);
      double max_err;
      int64_t bad;
      if (!heron__op_check(&b.op, bufs[nout], ref[nout], &max_err, &bad)) {
        snprintf(why, cap,
                 "config %d (%s/k%d.c), run %d: element %lld is %g, "
                 "reference %g",
                 c, dir, c, run, (long long)bad, ((float *)bufs[nout])[bad],
                 ((float *)ref[nout])[bad]);
        ok = 0;
      }
    }
    if (ok && o->concurrent)
      ok = concurrent_calls_match(&b, fn, kbufs, ref[nout], c, why, cap);
    for (int i = 0; i < b.op.ninputs; i++)
      if (kbufs[i] != bufs[i])
        free(kbufs[i]);
    dlclose(h);
  }
  if (have)
    kc_inputs_free(&b.op, bufs, ref);
  int need_pre = (o->min_prepacked + CONFIG_DIVISOR - 1) / CONFIG_DIVISOR;
  if (ok && prepacked < need_pre) {
    snprintf(why, cap, "%d of %d kernels took inputs packed ahead, wanted %d",
             prepacked, ncfg, need_pre);
    ok = 0;
  }
  /* A failing case keeps its folder for inspection. */
  if (ok) {
    heron__rmtree(dir);
    /* Say what ran, for the described cases whose twins may skip. */
    printf("%s on %s: generated, compiled and ran %d configs (%d with edge "
           "tiles; %s)\n",
           opname, o->hw ? o->hw : "this machine", ncfg, ragged, cflags);
  }
  free(cfgs);
  kc_cpu_free(&b);
  return ok ? CASE_RAN : CASE_FAILED;
}

/* Runs one case and reports the first failure; 1 when it ran and
 * matched. */
static int run_case_opts(const char *op, const int64_t *shape, int n,
                         uint64_t seed, const case_opts *o) {
  char why[400] = "";
  int st = random_configs_match(op, shape, n, seed, o, why, sizeof why);
  if (st != CASE_RAN)
    fprintf(stderr, "%s: %s\n", op, why);
  return st == CASE_RAN;
}

/* Runs a case on the hardware description o->hw (the shape, its length
 * and the seed in ...): fails as CHECK does, or skips when the kernels
 * compiled but this CPU cannot run them. */
#define CHECK_DESCRIBED_CASE(o, op, ...)                                       \
  do {                                                                         \
    char why_[400] = "";                                                       \
    int st_ = random_configs_match(op, __VA_ARGS__, o, why_, sizeof why_);     \
    if (st_ == CASE_COMPILED_ONLY)                                             \
      SKIP("%s", why_);                                                        \
    CHECK_MSG(st_ == CASE_RAN, "%s: %s", op, why_);                            \
  } while (0)

static int run_case(const char *op, const int64_t *shape, int n,
                    uint64_t seed) {
  case_opts o = {0};
  return run_case_opts(op, shape, n, seed, &o);
}

/* The suite's cases: 32 random valid configs per op (50 until
 * 2026-11-28, trimmed for CI time), at least 4 of them
 * with edge tiles (the shapes are odd, so most are). */
static int run_suite_case(const char *op, const int64_t *shape, int n,
                          uint64_t seed) {
  case_opts o = {.nconfigs = 32, .min_ragged = 4};
  return run_case_opts(op, shape, n, seed, &o);
}

/* Shapes are small and odd on purpose: primes leave only trivial splits,
 * the conv cases have strides, padding (guarded reads) and dilation. */
TEST(gemm_48x40x36_random_configs_match_reference) {
  CHECK(run_case("gemm", (const int64_t[]){48, 40, 36}, 3, 1));
}

TEST(gemm_prime_7x13x5_random_configs_match_reference) {
  CHECK(run_case("gemm", (const int64_t[]){7, 13, 5}, 3, 2));
}

TEST(bmm_3x16x24x8_random_configs_match_reference) {
  CHECK(run_case("bmm", (const int64_t[]){3, 16, 24, 8}, 4, 3));
}

TEST(gemv_33x17_random_configs_match_reference) {
  CHECK(run_case("gemv", (const int64_t[]){33, 17}, 2, 4));
}

TEST(c2d_stride2_pad1_random_configs_match_reference) {
  CHECK(
      run_case("c2d", (const int64_t[]){2, 9, 9, 3, 5, 3, 3, 2, 1, 1}, 10, 5));
}

TEST(c2d_dilation2_pad2_random_configs_match_reference) {
  CHECK(
      run_case("c2d", (const int64_t[]){2, 9, 9, 3, 5, 3, 3, 1, 2, 2}, 10, 6));
}

TEST(c2d_vectorized_padded_ow_random_configs_match_reference) {
  CHECK(run_case("c2d", (const int64_t[]){1, 16, 16, 4, 8, 3, 3, 1, 1, 1}, 10,
                 7));
}

/* ---- The whole suite at small, odd shapes: 50 configs per op ----------- */

TEST(suite_gemm_prime_13x11x7_32_configs_match_reference) {
  CHECK(run_suite_case("gemm", (const int64_t[]){13, 11, 7}, 3, 11));
}

TEST(suite_bmm_3x10x24x9_32_configs_match_reference) {
  CHECK(run_suite_case("bmm", (const int64_t[]){3, 10, 24, 9}, 4, 12));
}

TEST(suite_gemv_37x48_32_configs_match_reference) {
  CHECK(run_suite_case("gemv", (const int64_t[]){37, 48}, 2, 13));
}

TEST(suite_c1d_stride2_pad1_32_configs_match_reference) {
  CHECK(
      run_suite_case("c1d", (const int64_t[]){2, 13, 3, 5, 3, 2, 1, 1}, 8, 14));
}

TEST(suite_c2d_odd_stride_pad_32_configs_match_reference) {
  CHECK(run_suite_case("c2d", (const int64_t[]){1, 11, 7, 3, 8, 3, 3, 2, 1, 1},
                       10, 15));
}

TEST(suite_c3d_pad1_32_configs_match_reference) {
  CHECK(run_suite_case(
      "c3d", (const int64_t[]){1, 5, 6, 7, 3, 4, 3, 3, 2, 1, 1, 1}, 12, 16));
}

TEST(suite_dil_dilation2_32_configs_match_reference) {
  CHECK(run_suite_case("dil", (const int64_t[]){1, 9, 11, 3, 5, 3, 3, 1, 2, 2},
                       10, 17));
}

TEST(suite_t2d_stride2_outpad1_32_configs_match_reference) {
  CHECK(run_suite_case(
      "t2d", (const int64_t[]){1, 5, 7, 3, 4, 3, 3, 2, 1, 1, 1}, 11, 18));
}

TEST(suite_t2d_stride1_pad1_32_configs_match_reference) {
  CHECK(run_suite_case(
      "t2d", (const int64_t[]){2, 6, 5, 4, 8, 3, 2, 1, 1, 1, 0}, 11, 19));
}

TEST(suite_scan_5x13x11_32_configs_match_reference) {
  CHECK(run_suite_case("scan", (const int64_t[]){5, 13, 11}, 3, 20));
}

/* ---- Tiles that do not divide their axes --------------------------------- */

/* The micro-kernel cases come in twins, one per description, each with
 * fewer configs than a plain case: their knobs are fixed, so the sampled
 * space is narrower, and the twins together sample more than the one case
 * each replaced. */
#define TWIN_CONFIGS 12

/* Prime extents with tile sizes that cannot divide them: every config has
 * edge tiles along i (4 rows into 37) and a short last reduction slice
 * (8 into 29); the other knobs sampled, packs on and off. */
TEST(gemm_prime_37x41x29_edge_tiles_match_reference) {
  case_opts o = {
      .fix_name = {"i.t3", "k.t1"}, .fix_val = {4, 8}, .min_ragged = NCONFIGS};
  CHECK(run_case_opts("gemm", (const int64_t[]){37, 41, 29}, 3, 31, &o));
}

/* Edge tiles with unpacked inputs: the edge copy's loads are guarded. */
TEST(gemm_prime_edge_tiles_unpacked_match_reference) {
  case_opts o = {.fix_name = {"A.pack", "B.pack", "i.t3"},
                 .fix_val = {0, 0, 3},
                 .min_ragged = NCONFIGS};
  CHECK(run_case_opts("gemm", (const int64_t[]){31, 19, 23}, 3, 32, &o));
}

/* The vector axis itself ragged (41 columns in 16- or 8-lane vectors): the
 * edge tile loads and stores its lanes inside the extent with masks.  At
 * 16 lanes on the AVX-512 description, at 8 on the AVX2 one; packs
 * sampled. */
TEST(gemm_vector_axis_edge_vec16_on_avx512_match_reference) {
  case_opts o = {.fix_name = {"vec"},
                 .fix_val = {16},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx512",
                 .min_ragged = TWIN_CONFIGS};
  CHECK_DESCRIBED_CASE(&o, "gemm", (const int64_t[]){29, 41, 11}, 3, 33);
}

TEST(gemm_vector_axis_edge_vec8_on_avx2_match_reference) {
  case_opts o = {.fix_name = {"vec"},
                 .fix_val = {8},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx2",
                 .min_ragged = TWIN_CONFIGS};
  CHECK_DESCRIBED_CASE(&o, "gemm", (const int64_t[]){29, 41, 11}, 3, 33);
}

/* gemv's lanes run along the reduction (A's rows are contiguous in k, no
 * input reads i contiguously): vector partial sums added across lanes at
 * the store, the ragged last slice's tail in scalar code.  101 = 12 * 8 +
 * 5 = 6 * 16 + 5. */
TEST(gemv_lanes_along_the_reduction_vec16_on_avx512_match_reference) {
  case_opts o = {.fix_name = {"vec"},
                 .fix_val = {16},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx512",
                 .min_ragged = TWIN_CONFIGS};
  CHECK_DESCRIBED_CASE(&o, "gemv", (const int64_t[]){67, 101}, 2, 36);
}

TEST(gemv_lanes_along_the_reduction_vec8_on_avx2_match_reference) {
  case_opts o = {.fix_name = {"vec"},
                 .fix_val = {8},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx2",
                 .min_ragged = TWIN_CONFIGS};
  CHECK_DESCRIBED_CASE(&o, "gemv", (const int64_t[]){67, 101}, 2, 36);
}

/* A GEMM with N of 1 is a gemv: lanes along k as well. */
TEST(gemm_n1_lanes_along_the_reduction_match_reference) {
  case_opts o = {.fix_name = {"vec"}, .fix_val = {4}, .min_ragged = 10};
  CHECK(run_case_opts("gemm", (const int64_t[]){37, 1, 101}, 3, 37, &o));
}

/* Attention at an odd sequence length, and a 3-channel stem (7x7, stride
 * 2, pad 3) on an odd image, with the fused epilogue on the edges. */
TEST(bmm_odd_sequence_edge_tiles_match_reference) {
  case_opts o = {.min_ragged = 10};
  CHECK(run_case_opts("bmm", (const int64_t[]){3, 17, 17, 9}, 4, 34, &o));
}

TEST(c2d_stem_odd_image_edge_tiles_bias_relu_match_reference) {
  case_opts o = {.epilogue = HERON__EPI_BIAS | HERON__EPI_RELU,
                 .min_ragged = 10};
  CHECK(run_case_opts("c2d", (const int64_t[]){1, 19, 19, 3, 12, 7, 7, 2, 3, 1},
                      10, 35, &o));
}

/* Software prefetching: a prefetch distance on odd shapes with rows read
 * in place (B's 67-float rows, a step a row) and packed, edge tiles and a
 * ragged reduction included.  Near the end of a tensor the prefetched
 * address lies past it; the prefetch must neither fault nor be taken for
 * an access (the sanitizer stage builds these kernels with ASan). */
TEST(gemm_prefetch_past_the_last_rows_matches_reference) {
  case_opts o = {
      .fix_name = {"prefetch", "B.pack"}, .fix_val = {16, 0}, .min_ragged = 10};
  CHECK(run_case_opts("gemm", (const int64_t[]){31, 67, 37}, 3, 38, &o));
  case_opts p = {.fix_name = {"prefetch", "B.pack"}, .fix_val = {4, 1}};
  CHECK(run_case_opts("gemm", (const int64_t[]){31, 67, 37}, 3, 39, &p));
}

TEST(c2d_prefetch_with_padding_and_stride_matches_reference) {
  case_opts o = {.fix_name = {"prefetch"}, .fix_val = {8}, .min_ragged = 5};
  CHECK(run_case_opts("c2d", (const int64_t[]){1, 13, 11, 7, 20, 3, 3, 2, 1, 1},
                      10, 40, &o));
}

/* The output's stage: a convolution vectorized along its channels in NCHW
 * keeps the partial sums of its reduction-outer steps in a per-thread
 * buffer and writes the output at the last step.  Edge tiles, padding,
 * stride, the fused epilogue, scalar code and packed inputs are sampled
 * in; every op whose template has the knob. */
TEST(c2d_staged_output_with_edges_and_epilogue_matches_reference) {
  case_opts o = {.fix_name = {"out.stage"},
                 .fix_val = {1},
                 .epilogue = HERON__EPI_BIAS | HERON__EPI_RELU,
                 .min_ragged = 5};
  CHECK(run_case_opts("c2d", (const int64_t[]){1, 13, 11, 9, 32, 3, 3, 2, 1, 1},
                      10, 43, &o));
}

TEST(conv_family_staged_output_matches_reference) {
  case_opts o = {.fix_name = {"out.stage"}, .fix_val = {1}, .nconfigs = 16};
  CHECK(run_case_opts("c1d", (const int64_t[]){1, 37, 11, 32, 3, 2, 1, 1}, 8,
                      44, &o));
  CHECK(run_case_opts("c3d",
                      (const int64_t[]){1, 5, 7, 6, 5, 16, 3, 3, 3, 1, 1, 1},
                      12, 45, &o));
  CHECK(run_case_opts("dil", (const int64_t[]){1, 11, 9, 6, 16, 3, 3, 1, 2, 2},
                      10, 46, &o));
  CHECK(run_case_opts(
      "t2d", (const int64_t[]){1, 5, 6, 7, 16, 3, 3, 2, 1, 1, 1}, 11, 47, &o));
}

/* ---- The region (data.region) ------------------------------------------- */

/* A convolution's data read from its region (the pack the int8 kernels
 * share, core/targets/cpu/region.c): the part of the input a thread tile
 * and a reduction slice read, channels innermost, zeros outside.  The
 * knob exists where the template vectorizes along the output channels
 * (the data broadcast), so those stay multiples of 16; stride, padding, a
 * prime input channel count and edge tiles on every axis, with the
 * fused epilogue; the other knobs sampled (weights packed or not, the
 * output's stage, vector widths, scalar code). */
TEST(c2d_region_with_edges_and_epilogue_matches_reference) {
  case_opts o = {.fix_name = {"data.region"},
                 .fix_val = {1},
                 .epilogue = HERON__EPI_BIAS | HERON__EPI_RELU,
                 .nconfigs = 8,
                 .min_ragged = 4,
                 .concurrent = 1};
  CHECK(run_case_opts("c2d", (const int64_t[]){1, 13, 11, 7, 32, 3, 3, 2, 1, 1},
                      10, 71, &o));
}

/* Every convolution whose template has the knob: 1-D with stride, 3-D,
 * dilated, a transposed one at stride 1 (its kernel offsets negative: the
 * region's origin moves), and with the weights packed ahead. */
TEST(conv_family_region_matches_reference) {
  case_opts o = {.fix_name = {"data.region"}, .fix_val = {1}, .nconfigs = 4};
  CHECK(run_case_opts("c1d", (const int64_t[]){1, 37, 11, 32, 3, 2, 1, 1}, 8,
                      72, &o));
  CHECK(run_case_opts("c3d",
                      (const int64_t[]){1, 5, 7, 6, 5, 16, 3, 3, 3, 1, 1, 1},
                      12, 73, &o));
  CHECK(run_case_opts("dil", (const int64_t[]){1, 11, 9, 6, 16, 3, 3, 1, 2, 2},
                      10, 74, &o));
  CHECK(run_case_opts(
      "t2d", (const int64_t[]){1, 5, 6, 7, 16, 3, 3, 1, 1, 1, 0}, 11, 75, &o));
  case_opts w = {.fix_name = {"data.region", "weight.pack"},
                 .fix_val = {1, 1},
                 .prepack = "weight",
                 .min_prepacked = 4,
                 .nconfigs = 4};
  CHECK(run_case_opts("c2d", (const int64_t[]){1, 9, 7, 5, 32, 3, 3, 1, 1, 1},
                      10, 76, &w));
}

/* The micro-kernel's broadcasts from the region: embedded in the
 * multiply-add at 16 lanes on the AVX-512 description (h_fmab), a
 * broadcast at 8 on the AVX2 one. */
TEST(c2d_region_vec16_on_avx512_matches_reference) {
  case_opts o = {.fix_name = {"data.region", "vec"},
                 .fix_val = {1, 16},
                 .epilogue = HERON__EPI_BIAS,
                 .nconfigs = 6,
                 .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){2, 7, 9, 5, 32, 3, 3, 1, 1, 1}, 10, 77);
}

TEST(c2d_region_vec8_on_avx2_matches_reference) {
  case_opts o = {.fix_name = {"data.region", "vec"},
                 .fix_val = {1, 8},
                 .epilogue = HERON__EPI_BIAS,
                 .nconfigs = 6,
                 .hw = "cpu-avx2"};
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){2, 7, 9, 5, 32, 3, 3, 1, 1, 1}, 10, 77);
}

/* ---- The output's transposed store (out.transpose) --------------------- */

/* A convolution vectorized along its output channels in NCHW, with every
 * vec accumulators along the output width transposed in registers at the
 * store (h_tr) and each channel's lanes stored as one vector: stems with
 * 3 and 5 input channels, strides 1 and 2, prime widths, so the tiles
 * across the width's edge (cut short) store lane by lane as before; the
 * fused epilogue (a bias per channel, broadcast after the transposition)
 * and the other knobs sampled (the stage, packs, acc_at, split
 * reductions).  16 lanes on the AVX-512 description, 8 on the AVX2 one
 * (compiled everywhere, run where the CPU has the ISA).  The shapes give
 * the AVX-512 description's 40 cores a tile each with 16 x 16 tiles. */
TEST(c2d_transposed_store_vec16_on_avx512_matches_reference) {
  case_opts o = {.fix_name = {"out.transpose", "vec"},
                 .fix_val = {1, 16},
                 .epilogue = HERON__EPI_BIAS | HERON__EPI_RELU,
                 .nconfigs = 6,
                 .min_ragged = 2,
                 .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){1, 13, 79, 3, 32, 3, 3, 2, 1, 1}, 10, 91);
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){1, 17, 41, 5, 16, 3, 3, 1, 1, 1}, 10, 92);
}

TEST(c2d_transposed_store_vec8_on_avx2_matches_reference) {
  case_opts o = {.fix_name = {"out.transpose", "vec"},
                 .fix_val = {1, 8},
                 .epilogue = HERON__EPI_BIAS | HERON__EPI_RELU,
                 .nconfigs = 6,
                 .min_ragged = 2,
                 .hw = "cpu-avx2"};
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){1, 13, 41, 3, 24, 3, 3, 2, 1, 1}, 10, 93);
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){1, 7, 37, 5, 16, 3, 3, 1, 1, 1}, 10, 94);
}

/* The rest of the family with an NCHW-like output and channels as the
 * vector axis: 1-D with stride, 3-D, dilated, transposed (stride 1), the
 * partial sums of a split reduction in the stage, weights packed ahead. */
TEST(conv_family_transposed_store_matches_reference) {
  case_opts o = {.fix_name = {"out.transpose", "vec"},
                 .fix_val = {1, 16},
                 .nconfigs = 4,
                 .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(&o, "c1d", (const int64_t[]){1, 321, 3, 64, 3, 2, 1, 1},
                       8, 95);
  CHECK_DESCRIBED_CASE(&o, "c3d",
                       (const int64_t[]){1, 3, 5, 41, 3, 16, 3, 3, 3, 1, 1, 1},
                       12, 96);
  CHECK_DESCRIBED_CASE(
      &o, "dil", (const int64_t[]){1, 15, 41, 3, 16, 3, 3, 1, 2, 2}, 10, 97);
  CHECK_DESCRIBED_CASE(
      &o, "t2d", (const int64_t[]){1, 15, 39, 3, 16, 3, 3, 1, 1, 1, 0}, 11, 98);
  case_opts w = {
      .fix_name = {"out.transpose", "vec", "out.stage", "weight.pack"},
      .fix_val = {1, 16, 1, 1},
      .prepack = "weight",
      .min_prepacked = 3,
      .nconfigs = 3,
      .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(
      &w, "c2d", (const int64_t[]){1, 9, 41, 19, 32, 3, 3, 1, 1, 1}, 10, 99);
}

/* A register tile whose extent along the width is no multiple of vec:
 * its last group of accumulators is cut short (zeros in the rest) and its
 * rows stored under a mask.  7-column tiles of a 7x7 map with 37 input
 * channels (16 lanes), 6-column ones of a stride-2 stem (8 lanes), with
 * the output's stage and the fused epilogue sampled. */
TEST(transposed_store_of_partial_groups_matches_reference) {
  case_opts o = {.fix_name = {"out.transpose", "vec", "ow.t3", "acc_at"},
                 .fix_val = {1, 16, 7, 0},
                 .epilogue = HERON__EPI_BIAS | HERON__EPI_RELU,
                 .nconfigs = 3,
                 .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){1, 7, 7, 37, 96, 3, 3, 1, 1, 1}, 10, 102);
  case_opts a = {.fix_name = {"out.transpose", "vec", "ow.t3", "acc_at"},
                 .fix_val = {1, 8, 6, 0},
                 .epilogue = HERON__EPI_BIAS,
                 .nconfigs = 3,
                 .min_ragged = 1,
                 .hw = "cpu-avx2"};
  CHECK_DESCRIBED_CASE(
      &a, "c2d", (const int64_t[]){1, 13, 47, 3, 16, 3, 3, 2, 1, 1}, 10, 103);
}

/* A batched matrix product whose N (41) is no multiple of a vector is
 * vectorized along its rows (M): its output C's lanes lie a row apart, and
 * the transposed store writes along N, cut short at its edge (N's register
 * tile 16 or 12: 41 is no multiple of either; 12 = 8 + a group of 4). */
TEST(bmm_rows_transposed_store_matches_reference) {
  case_opts o = {.fix_name = {"C.transpose", "vec", "j.t3"},
                 .fix_val = {1, 16, 16},
                 .nconfigs = 4,
                 .min_ragged = 1,
                 .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(&o, "bmm", (const int64_t[]){8, 32, 41, 13}, 4, 100);
  case_opts a = {.fix_name = {"C.transpose", "vec", "j.t3"},
                 .fix_val = {1, 8, 12},
                 .nconfigs = 4,
                 .min_ragged = 1,
                 .hw = "cpu-avx2"};
  CHECK_DESCRIBED_CASE(&a, "bmm", (const int64_t[]){3, 24, 41, 13}, 4, 101);
}

/* ---- Channels last in fp32 ---------------------------------------------- */

/* The channels-last convolutions (NWC, NHWC, NDHWC activations and
 * outputs) in fp32, at odd shapes with strides, padding and edge tiles:
 * random configs (the region sampled in or not), then with the region,
 * whose copy of each position's channels is one run of the input. */
TEST(channels_last_fp32_random_configs_match_reference) {
  case_opts o = {.nconfigs = 6};
  CHECK(run_case_opts("c1d_nwc", (const int64_t[]){1, 31, 7, 19, 3, 2, 1, 1}, 8,
                      81, &o));
  CHECK(run_case_opts("c2d_nhwc",
                      (const int64_t[]){1, 13, 11, 9, 17, 3, 3, 2, 1, 1}, 10,
                      82, &o));
  CHECK(run_case_opts("c3d_ndhwc",
                      (const int64_t[]){1, 5, 6, 7, 5, 11, 3, 3, 3, 1, 1, 1},
                      12, 83, &o));
}

TEST(channels_last_fp32_region_matches_reference) {
  case_opts o = {.fix_name = {"data.region"},
                 .fix_val = {1},
                 .epilogue = HERON__EPI_BIAS | HERON__EPI_RELU,
                 .nconfigs = 4};
  CHECK(run_case_opts("c1d_nwc", (const int64_t[]){1, 31, 7, 19, 3, 2, 1, 1}, 8,
                      84, &o));
  CHECK(run_case_opts("c2d_nhwc",
                      (const int64_t[]){1, 13, 11, 9, 17, 3, 3, 1, 2, 2}, 10,
                      85, &o));
  CHECK(run_case_opts("c3d_ndhwc",
                      (const int64_t[]){1, 5, 6, 7, 5, 11, 3, 3, 3, 2, 1, 1},
                      12, 86, &o));
}

/* ---- Blocked layouts in fp32 -------------------------------------------- */

/* The blocked convolutions (nChw16c, nChw8c and the 1-D nCw16c, nCw8c) at
 * odd shapes: channel counts below a block, past one and across two (3,
 * 5, 17, 19, 21), strides, padding, dilation and edge tiles of the
 * spatial axes, random configs on each description: AVX-512 holds a
 * block of 16 in one register, AVX2 in two of 8. */
static int blocked_cases(const case_opts *o, uint64_t seed, char *why,
                         size_t cap) {
  static const struct {
    const char *op;
    int n;
    int64_t shape[10];
  } cases[] = {
      {"c2d_nchw16c", 10, {1, 11, 13, 3, 19, 3, 3, 2, 1, 1}},
      {"c2d_nchw16c", 10, {2, 7, 9, 17, 5, 3, 3, 1, 2, 2}},
      {"c2d_nchw8c", 10, {1, 11, 13, 5, 21, 3, 3, 1, 1, 1}},
      {"c1d_ncw16c", 8, {2, 61, 21, 17, 3, 2, 1, 1}},
      {"c1d_ncw8c", 8, {2, 29, 9, 13, 5, 1, 2, 2}},
  };
  int st = CASE_RAN;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int r = random_configs_match(cases[i].op, cases[i].shape, cases[i].n,
                                 seed + i, o, why, cap);
    if (r == CASE_FAILED) {
      size_t len = strlen(why);
      snprintf(why + len, cap - len, " (%s)", cases[i].op);
      return r;
    }
    if (r == CASE_COMPILED_ONLY)
      st = r;
  }
  return st;
}

#define CHECK_BLOCKED_CASES(o, seed)                                           \
  do {                                                                         \
    char why_[400] = "";                                                       \
    int st_ = blocked_cases(o, seed, why_, sizeof why_);                       \
    if (st_ == CASE_COMPILED_ONLY)                                             \
      SKIP("%s", why_);                                                        \
    CHECK_MSG(st_ == CASE_RAN, "%s", why_);                                    \
  } while (0)

/* 2 output columns a register tile: every case's column count (7, 9, 13,
 * 31, 25) is odd, so each leaves an edge tile. */
TEST(blocked_fp32_on_avx512_match_reference) {
  case_opts o = {.fix_name = {"ow.t3"},
                 .fix_val = {2},
                 .nconfigs = 6,
                 .min_ragged = 6,
                 .epilogue = HERON__EPI_RELU,
                 .hw = "cpu-avx512"};
  CHECK_BLOCKED_CASES(&o, 91);
}

TEST(blocked_fp32_on_avx2_match_reference) {
  case_opts o = {.fix_name = {"ow.t3"},
                 .fix_val = {2},
                 .nconfigs = 6,
                 .min_ragged = 6,
                 .hw = "cpu-avx2"};
  CHECK_BLOCKED_CASES(&o, 101);
}

/* With the region (the input copied per thread tile, lanes innermost as
 * in the tensor) and with weights packed once ahead of the calls. */
TEST(blocked_fp32_region_matches_reference) {
  case_opts o = {.fix_name = {"data.region"}, .fix_val = {1}, .nconfigs = 4};
  CHECK_BLOCKED_CASES(&o, 111);
}

TEST(blocked_fp32_prepacked_weight_matches_reference) {
  case_opts o = {.fix_name = {"weight.pack"},
                 .fix_val = {1},
                 .prepack = "weight",
                 .min_prepacked = 4,
                 .nconfigs = 4};
  CHECK_BLOCKED_CASES(&o, 121);
}

/* ---- Inputs packed ahead of the calls (prepack) ------------------------- */

/* Weights packed once, at odd shapes with padding, stride and edge tiles
 * on every axis: the kernel reads the whole-tensor copy heron_prepack
 * made, block by block, and matches the reference on two calls. */
TEST(c2d_prepacked_weight_with_edges_matches_reference) {
  case_opts o = {.fix_name = {"weight.pack"},
                 .fix_val = {1},
                 .prepack = "weight",
                 .min_prepacked = 24,
                 .nconfigs = 24,
                 .min_ragged = 5,
                 .epilogue = HERON__EPI_BIAS | HERON__EPI_RELU};
  CHECK(run_case_opts("c2d", (const int64_t[]){1, 13, 11, 9, 37, 3, 3, 2, 1, 1},
                      10, 61, &o));
}

TEST(conv_family_prepacked_weight_matches_reference) {
  case_opts o = {.fix_name = {"weight.pack"},
                 .fix_val = {1},
                 .prepack = "weight",
                 .min_prepacked = 16,
                 .nconfigs = 16};
  CHECK(run_case_opts("c1d", (const int64_t[]){1, 37, 11, 29, 3, 2, 1, 1}, 8,
                      62, &o));
  CHECK(run_case_opts("c3d",
                      (const int64_t[]){1, 5, 7, 6, 5, 19, 3, 3, 3, 1, 1, 1},
                      12, 63, &o));
  CHECK(run_case_opts("dil", (const int64_t[]){1, 11, 9, 6, 17, 3, 3, 1, 2, 2},
                      10, 64, &o));
  CHECK(run_case_opts(
      "t2d", (const int64_t[]){1, 5, 6, 7, 13, 3, 3, 2, 1, 1, 1}, 11, 65, &o));
}

/* Both operands of a prime GEMM packed ahead (a constant A too), and B
 * alone at 16 and 8 lanes; configs that pack neither take the inputs as
 * they are and export nothing (counted out by min_prepacked). */
TEST(gemm_prime_prepacked_operands_match_reference) {
  case_opts o = {.fix_name = {"A.pack", "B.pack"},
                 .fix_val = {1, 1},
                 .prepack = "A,B",
                 .min_prepacked = 24,
                 .nconfigs = 24,
                 .min_ragged = 5};
  CHECK(run_case_opts("gemm", (const int64_t[]){37, 41, 29}, 3, 66, &o));
  case_opts b = {.prepack = "B", .min_prepacked = 4};
  CHECK(run_case_opts("bmm", (const int64_t[]){3, 13, 24, 11}, 4, 67, &b));
}

TEST(gemm_prepacked_b_vec16_on_avx512_matches_reference) {
  case_opts o = {.fix_name = {"B.pack", "vec"},
                 .fix_val = {1, 16},
                 .prepack = "B",
                 .min_prepacked = TWIN_CONFIGS,
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(&o, "gemm", (const int64_t[]){29, 53, 31}, 3, 68);
}

TEST(gemm_prepacked_b_vec8_on_avx2_matches_reference) {
  case_opts o = {.fix_name = {"B.pack", "vec"},
                 .fix_val = {1, 8},
                 .prepack = "B",
                 .min_prepacked = TWIN_CONFIGS,
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx2"};
  CHECK_DESCRIBED_CASE(&o, "gemm", (const int64_t[]){29, 53, 31}, 3, 68);
}

/* ---- Packing, the micro-kernel and the epilogue ------------------------- */

/* Every input packed, vectorized at 16 lanes: the _mm512 micro-kernel of
 * an AVX-512 description (compiled everywhere, run where the CPU has
 * AVX-512F), and at 8 lanes, the _mm256 one of an AVX2 description. */
TEST(gemm_all_inputs_packed_vec16_on_avx512_match_reference) {
  case_opts o = {.fix_name = {"A.pack", "B.pack", "vec"},
                 .fix_val = {1, 1, 16},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(&o, "gemm", (const int64_t[]){24, 48, 20}, 3, 21);
}

TEST(gemm_all_inputs_packed_vec8_on_avx2_match_reference) {
  case_opts o = {.fix_name = {"A.pack", "B.pack", "vec"},
                 .fix_val = {1, 1, 8},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx2"};
  CHECK_DESCRIBED_CASE(&o, "gemm", (const int64_t[]){24, 48, 20}, 3, 21);
}

/* Packing resolves padding, stride and dilation once per element. */
TEST(c2d_data_packed_with_padding_match_reference) {
  case_opts o = {.fix_name = {"data.pack"}, .fix_val = {1}};
  CHECK(run_case_opts("c2d", (const int64_t[]){1, 9, 8, 3, 8, 3, 3, 2, 2, 2},
                      10, 22, &o));
}

TEST(t2d_stride2_both_packed_match_reference) {
  case_opts o = {.fix_name = {"data.pack", "weight.pack"}, .fix_val = {1, 1}};
  CHECK(run_case_opts("t2d", (const int64_t[]){1, 4, 6, 3, 8, 3, 3, 2, 1, 1, 1},
                      11, 23, &o));
}

TEST(gemm_bias_relu_epilogue_matches_reference) {
  case_opts o = {.epilogue = HERON__EPI_BIAS | HERON__EPI_RELU};
  CHECK(run_case_opts("gemm", (const int64_t[]){24, 32, 40}, 3, 24, &o));
}

TEST(c2d_bias_relu_epilogue_matches_reference) {
  case_opts o = {.epilogue = HERON__EPI_BIAS | HERON__EPI_RELU};
  CHECK(run_case_opts("c2d", (const int64_t[]){1, 8, 8, 4, 8, 3, 3, 1, 1, 1},
                      10, 25, &o));
}

TEST(c1d_relu_only_epilogue_matches_reference) {
  case_opts o = {.epilogue = HERON__EPI_RELU};
  CHECK(run_case_opts("c1d", (const int64_t[]){1, 16, 3, 8, 3, 1, 1, 1}, 8, 26,
                      &o));
}

/* Rows of 7 are no multiple of any vector width, so the rules vectorize
 * along the 16 output channels: lanes stored a plane apart, the bias
 * loaded as a vector, weights gathered or packed along co.  At 16 lanes on
 * the AVX-512 description, at 8 on the AVX2 one. */
TEST(c2d_vectorized_along_channels_vec16_on_avx512_matches_reference) {
  case_opts o = {.epilogue = HERON__EPI_BIAS | HERON__EPI_RELU,
                 .fix_name = {"vec"},
                 .fix_val = {16},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){1, 7, 7, 3, 16, 3, 3, 1, 1, 1}, 10, 27);
}

TEST(c2d_vectorized_along_channels_vec8_on_avx2_matches_reference) {
  case_opts o = {.epilogue = HERON__EPI_BIAS | HERON__EPI_RELU,
                 .fix_name = {"vec"},
                 .fix_val = {8},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx2"};
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){1, 7, 7, 3, 16, 3, 3, 1, 1, 1}, 10, 27);
}

/* A batch of 2 gives the 40 cores of cpu-avx512 enough outer tiles at 16
 * lanes (the rules want a tile per core). */
TEST(c1d_odd_length_vectorized_along_channels_vec16_on_avx512_matches) {
  case_opts o = {.fix_name = {"vec", "weight.pack"},
                 .fix_val = {16, 1},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(&o, "c1d", (const int64_t[]){2, 13, 5, 32, 3, 1, 4, 1},
                       8, 28);
}

TEST(c1d_odd_length_vectorized_along_channels_vec8_on_avx2_matches) {
  case_opts o = {.fix_name = {"vec", "weight.pack"},
                 .fix_val = {8, 1},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx2"};
  CHECK_DESCRIBED_CASE(&o, "c1d", (const int64_t[]){2, 13, 5, 32, 3, 1, 4, 1},
                       8, 28);
}

/* A padded convolution vectorized along its rows (16 columns: the
 * output-contiguous axis), data unpacked: every tile, border ones
 * included, loads whole rows of lanes from the zero-haloed copy.  At 16
 * lanes on the AVX-512 description, at 8 on the AVX2 one. */
TEST(c2d_rows_read_from_the_halo_vec16_on_avx512) {
  case_opts o = {.epilogue = HERON__EPI_BIAS,
                 .fix_name = {"vec", "data.pack"},
                 .fix_val = {16, 0},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx512"};
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){1, 11, 16, 5, 6, 3, 3, 1, 1, 1}, 10, 29);
}

TEST(c2d_rows_read_from_the_halo_vec8_on_avx2) {
  case_opts o = {.epilogue = HERON__EPI_BIAS,
                 .fix_name = {"vec", "data.pack"},
                 .fix_val = {8, 0},
                 .nconfigs = TWIN_CONFIGS,
                 .hw = "cpu-avx2"};
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){1, 11, 16, 5, 6, 3, 3, 1, 1, 1}, 10, 29);
}

/* The source of one config of b's space, sampled with knobs names[i] fixed
 * to vals[i] (i < nfix) from random seed `seed`, into src. */
static int sampled_source(const kc_cpu *b, const char *const *names,
                          const int64_t *vals, int nfix, uint64_t seed,
                          heron__buf *src, heron_error *err) {
  int nv = heron_space_nvars(b->sp);
  int64_t *fix = malloc((size_t)nv * sizeof *fix);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  for (int v = 0; v < nv; v++)
    fix[v] = HERON_UNSET;
  for (int i = 0; i < nfix; i++)
    fix[heron_space_find_var(b->sp, names[i])] = vals[i];
  heron_rng rng;
  heron_rng_seed(&rng, seed);
  int rc = heron_space_sample_restricted(b->sp, &rng, fix, NULL, cfg, err);
  if (rc == HERON_OK)
    rc = heron__codegen(b->t, b->sp, cfg, src, err);
  free(fix);
  free(cfg);
  return rc;
}

/* The knob exists only where it can apply: an fp32 convolution whose
 * data is broadcast (vectorized along the output channels) and read
 * through a kernel window, not prepacked; not for a matrix op, a
 * convolution vectorized along its rows, a transposed one of stride 2
 * (divided indices), a 1x1 one (no window) or int8 (whose kernels pick
 * the region themselves).  Its absent value is 0, and a config at 0 is
 * the kernel of before, its header not naming the knob; at 1 the data
 * is read from the region, with no halo and no range check. */
TEST(region_knob_only_where_it_applies_and_off_is_the_old_kernel) {
  static const struct {
    const char *op;
    int64_t shape[12];
    int n, dtype, has;
    const char *prepack;
  } cases[] = {
      {"c2d", {1, 7, 9, 5, 32, 3, 3, 1, 1, 1}, 10, HERON__FP32, 1, NULL},
      {"c2d_nhwc", {1, 7, 9, 5, 19, 3, 3, 1, 1, 1}, 10, HERON__FP32, 1, NULL},
      {"c2d", {1, 7, 9, 5, 32, 3, 3, 1, 1, 1}, 10, HERON__FP32, 0, "data"},
      {"c2d", {1, 7, 9, 5, 37, 3, 3, 1, 1, 1}, 10, HERON__FP32, 0, NULL},
      {"c2d", {1, 7, 9, 5, 32, 1, 1, 1, 0, 1}, 10, HERON__FP32, 0, NULL},
      {"t2d", {1, 7, 9, 4, 16, 3, 3, 2, 1, 1, 1}, 11, HERON__FP32, 0, NULL},
      {"gemm", {33, 48, 17}, 3, HERON__FP32, 0, NULL},
      {"c2d", {1, 7, 9, 5, 32, 3, 3, 1, 1, 1}, 10, HERON__INT8, 0, NULL},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    kc_cpu b;
    heron_error err = {0};
    CHECK_OK(kc_cpu_build(&b, cases[k].op, cases[k].shape, cases[k].n,
                          cases[k].dtype, 0, cases[k].prepack, "cpu-avx512",
                          &err),
             &err);
    int v = heron_space_find_var(b.sp, "data.region");
    CHECK_MSG((v >= 0) == cases[k].has, "case %zu (%s): data.region %s", k,
              cases[k].op, v >= 0 ? "present" : "missing");
    if (v < 0) {
      kc_cpu_free(&b);
      continue;
    }
    int64_t absent = -1;
    CHECK(heron__space_absent(b.sp, v, &absent) && absent == 0);
    heron__buf off = {0}, on = {0};
    CHECK_OK(sampled_source(&b, (const char *const[]){"data.region"},
                            (const int64_t[]){0}, 1, 7, &off, &err),
             &err);
    CHECK_OK(sampled_source(&b, (const char *const[]){"data.region"},
                            (const int64_t[]){1}, 1, 7, &on, &err),
             &err);
    kc_cpu_free(&b);
    CHECK_MSG(!strstr(off.data, "region"), "%s: region off names it",
              cases[k].op);
    CHECK_MSG(strstr(on.data, "data.region = 1") &&
                  strstr(on.data, "/* region of data */"),
              "%s: no region", cases[k].op);
    CHECK_MSG(!strstr(on.data, "h_halo(") && !strstr(on.data, "? data[") &&
                  !strstr(on.data, "&data["),
              "%s: the micro-kernel reads data, not its region", cases[k].op);
    heron__buf_free(&off);
    heron__buf_free(&on);
  }
}

/* The transposed store exists where the output's lanes lie a stride
 * apart and the output has a contiguous axis: an NCHW convolution
 * vectorized along its channels; not channels-last (its channels are
 * contiguous), not a matrix op, not int8, not without a vector ISA.  Its
 * absent value is 0 and a config at 0 is the kernel of before (no h_tr,
 * the header not naming the knob); at 1 the non-edge stores are
 * transposed vectors (whole or masked), and the edge copy still stores
 * lane by lane. */
TEST(transpose_knob_only_where_it_applies_and_off_is_the_old_kernel) {
  static const struct {
    const char *op;
    int64_t shape[12];
    int n, dtype, has;
    const char *hw;
  } cases[] = {
      {"c2d",
       {1, 7, 41, 3, 32, 3, 3, 1, 1, 1},
       10,
       HERON__FP32,
       1,
       "cpu-avx512"},
      {"c2d", {1, 7, 41, 3, 32, 3, 3, 1, 1, 1}, 10, HERON__FP32, 1, "cpu-avx2"},
      {"c2d_nhwc",
       {1, 7, 41, 3, 32, 3, 3, 1, 1, 1},
       10,
       HERON__FP32,
       0,
       "cpu-avx512"},
      {"gemm", {33, 48, 17}, 3, HERON__FP32, 0, "cpu-avx512"},
      {"c2d",
       {1, 7, 41, 3, 32, 3, 3, 1, 1, 1},
       10,
       HERON__INT8,
       0,
       "cpu-avx512"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    kc_cpu b;
    heron_error err = {0};
    CHECK_OK(kc_cpu_build(&b, cases[k].op, cases[k].shape, cases[k].n,
                          cases[k].dtype, 0, NULL, cases[k].hw, &err),
             &err);
    int v = heron_space_find_var(b.sp, "out.transpose");
    CHECK_MSG((v >= 0) == cases[k].has, "case %zu (%s): out.transpose %s", k,
              cases[k].op, v >= 0 ? "present" : "missing");
    if (v < 0) {
      kc_cpu_free(&b);
      continue;
    }
    int64_t absent = -1;
    CHECK(heron__space_absent(b.sp, v, &absent) && absent == 0);
    heron__buf off = {0}, on = {0};
    CHECK_OK(sampled_source(&b, (const char *const[]){"out.transpose", "vec"},
                            (const int64_t[]){0, 8}, 2, 7, &off, &err),
             &err);
    CHECK_OK(sampled_source(&b, (const char *const[]){"out.transpose", "vec"},
                            (const int64_t[]){1, 8}, 2, 7, &on, &err),
             &err);
    kc_cpu_free(&b);
    CHECK_MSG(!strstr(off.data, "transpose") && !strstr(off.data, "h_tr"),
              "case %zu: transpose off names it", k);
    CHECK_MSG(
        strstr(on.data, "out.transpose = 1") && strstr(on.data, "h_tr(h_r);") &&
            (strstr(on.data, "h_st(&out[") || strstr(on.data, "h_stm(&out[")),
        "case %zu: no transposed store", k);
    heron__buf_free(&off);
    heron__buf_free(&on);
  }
}

/* A padded convolution's unpacked data is read from a zero-haloed copy
 * (h_hc0, made by h_halo) with no range check anywhere, border tiles and
 * cut-short tiles included; packed data has no halo (its pack checks the
 * ranges and zero-fills).  On both descriptions, for 1-, 2- and 3-D. */
TEST(padded_inputs_are_read_from_a_zero_halo_without_range_checks) {
  const char *hw[2] = {"cpu-avx2", "cpu-avx512"};
  static const struct {
    const char *op;
    int64_t shape[12];
    int n;
  } ops[] = {
      {"c1d", {1, 13, 5, 32, 3, 1, 4, 1}, 8},
      {"c2d", {1, 11, 16, 5, 6, 3, 3, 1, 1, 1}, 10},
      {"c3d", {1, 5, 7, 9, 3, 16, 3, 3, 3, 1, 1, 1}, 12},
  };
  for (int h = 0; h < 2; h++)
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
      for (int pack = 0; pack < 2; pack++) {
        kc_cpu b;
        heron_error err = {0};
        CHECK_OK(
            build_epi(&b, ops[k].op, ops[k].shape, ops[k].n, 0, hw[h], &err),
            &err);
        /* Unpacked data read from its region has no halo either. */
        int region = heron_space_find_var(b.sp, "data.region") >= 0;
        heron__buf src = {0};
        int rc = sampled_source(
            &b, (const char *const[]){"vec", "data.pack", "data.region"},
            (const int64_t[]){8, pack, 0}, 2 + region, 41 + k, &src, &err);
        kc_cpu_free(&b);
        CHECK_OK(rc, &err);
        int halo = strstr(src.data, "h_halo(h_own") != NULL;
        int guarded = strstr(src.data, "? data[") != NULL ||
                      strstr(src.data, "? h_bcv(&data[") != NULL;
        heron__buf_free(&src);
        CHECK_MSG(halo == !pack, "%s %s data.pack %d: halo %d", hw[h],
                  ops[k].op, pack, halo);
        CHECK_MSG(pack || !guarded, "%s %s: a guarded read of data", hw[h],
                  ops[k].op);
      }
}

/* A transposed convolution of stride 2 reads its data through divided
 * indices: no halo, and the divisibility checks stay. */
TEST(strided_transposed_convolution_keeps_its_checks_without_halo) {
  kc_cpu b;
  heron_error err = {0};
  CHECK_OK(build_epi(&b, "t2d",
                     (const int64_t[]){1, 7, 9, 4, 8, 3, 3, 2, 1, 1, 1}, 11, 0,
                     "cpu-avx2", &err),
           &err);
  heron__buf src = {0};
  int rc = sampled_source(&b, (const char *const[]){"data.pack"},
                          (const int64_t[]){0}, 1, 5, &src, &err);
  kc_cpu_free(&b);
  CHECK_OK(rc, &err);
  int halo = strstr(src.data, "h_halo(h_own") != NULL;
  int divided = strstr(src.data, "% 2 == 0") != NULL;
  heron__buf_free(&src);
  CHECK_MSG(!halo, "a halo for divided indices");
  CHECK_MSG(divided, "no divisibility check");
}

/* Two host threads calling a haloed kernel at once: the one that finds
 * the kept halo busy makes (and frees) its own, and both match. */
TEST(concurrent_calls_of_haloed_kernels_match_reference) {
  case_opts o = {.fix_name = {"data.pack", "data.region"},
                 .fix_val = {0, 0},
                 .nconfigs = 8,
                 .concurrent = 1};
  CHECK_DESCRIBED_CASE(
      &o, "c2d", (const int64_t[]){1, 23, 19, 3, 16, 7, 7, 2, 3, 1}, 10, 61);
}

/* With AVX2 the micro-kernel's multiply-add is one vfmadd231ps on its
 * accumulator, and its broadcasts are pinned (h_bcv) where GCC's sharing
 * of them would spill: two weight vectors a step, or a tile filling the
 * register file; not with one weight vector and registers to spare.  With
 * AVX-512 every broadcast is embedded in its multiply-add (h_fmab). */
TEST(broadcasts_are_pinned_where_sharing_them_would_spill) {
  static const struct {
    int64_t i3, j3;
    int pinned;
  } tiles[] = {{6, 16, 1}, {2, 8, 0}, {14, 8, 1}, {7, 8, 0}};
  for (size_t k = 0; k < sizeof tiles / sizeof tiles[0]; k++) {
    kc_cpu b;
    heron_error err = {0};
    CHECK_OK(build_epi(&b, "gemm", (const int64_t[]){56, 64, 32}, 3, 0,
                       "cpu-avx2", &err),
             &err);
    heron__buf src = {0};
    int rc = sampled_source(
        &b, (const char *const[]){"vec", "i.t3", "j.t3", "acc_at"},
        (const int64_t[]){8, tiles[k].i3, tiles[k].j3, 0}, 4, 7, &src, &err);
    kc_cpu_free(&b);
    CHECK_OK(rc, &err);
    int pinned = strstr(src.data, "h_bcv(&") != NULL;
    int asm_fma = strstr(src.data, "vfmadd231ps") != NULL;
    heron__buf_free(&src);
    CHECK_MSG(pinned == tiles[k].pinned, "tile %lld x %lld: pinned %d",
              (long long)tiles[k].i3, (long long)tiles[k].j3, pinned);
    CHECK(asm_fma);
  }
  kc_cpu b;
  heron_error err = {0};
  CHECK_OK(build_epi(&b, "gemm", (const int64_t[]){56, 64, 32}, 3, 0,
                     "cpu-avx512", &err),
           &err);
  heron__buf src = {0};
  int rc = sampled_source(&b, (const char *const[]){"vec", "j.t3"},
                          (const int64_t[]){16, 32}, 2, 7, &src, &err);
  kc_cpu_free(&b);
  CHECK_OK(rc, &err);
  int embedded = strstr(src.data, "{1to16") != NULL &&
                 strstr(src.data, "= h_fmab(h_l") != NULL &&
                 strstr(src.data, "h_bcv(&") == NULL;
  heron__buf_free(&src);
  CHECK_MSG(embedded, "AVX-512 broadcasts not embedded in the multiply-adds");
}

/* The prefetches in the source: none at distance 0; at distance 8, B's
 * rows read in place (3072 floats apart) are prefetched 8 rows = 98304
 * bytes ahead, and A's broadcasts, 1 float a step, are left to the
 * hardware. */
TEST(prefetch_reads_rows_ahead_and_leaves_sequential_streams_alone) {
  kc_cpu b;
  heron_error err = {0};
  CHECK_OK(build_epi(&b, "gemm", (const int64_t[]){96, 3072, 64}, 3, 0,
                     "cpu-avx512", &err),
           &err);
  static const char *const names[] = {"prefetch", "B.pack", "A.pack", "vec"};
  heron__buf off = {0}, on = {0};
  int rc = sampled_source(&b, names, (const int64_t[]){0, 0, 0, 16}, 4, 42,
                          &off, &err);
  if (rc == HERON_OK)
    rc = sampled_source(&b, names, (const int64_t[]){8, 0, 0, 16}, 4, 42, &on,
                        &err);
  kc_cpu_free(&b);
  CHECK_OK(rc, &err);
  int none = strstr(off.data, "__builtin_prefetch") == NULL;
  const char *pf = strstr(on.data, "__builtin_prefetch((const void *)"
                                   "((uintptr_t)B + ");
  int ahead = pf && strstr(pf, "+ 98304)") != NULL;
  int of_a = strstr(on.data, "(uintptr_t)A + ") != NULL;
  heron__buf_free(&off);
  heron__buf_free(&on);
  CHECK_MSG(none, "prefetch 0 emitted a prefetch");
  CHECK_MSG(ahead, "no prefetch of B 8 rows ahead");
  CHECK_MSG(!of_a, "A's sequential broadcasts were prefetched");
}

/* The assembly of one kernel of gemm `shape` built for description `hw`
 * at `vec` lanes, compiled with the template's flags on this machine; NULL
 * (and a reason in why[cap]) on failure.  The caller frees it. */
static char *gemm_assembly(const int64_t *shape, const char *hw, int vec,
                           char *why, size_t cap) {
  kc_cpu b;
  heron_error err = {0};
  if (build_epi(&b, "gemm", shape, 3, 0, hw, &err)) {
    snprintf(why, cap, "%s: %s", hw, err.text);
    return NULL;
  }
  heron__buf src = {0};
  int rc = sampled_source(&b, (const char *const[]){"vec"},
                          (const int64_t[]){vec}, 1, 31, &src, &err);
  char dir[256], path[300], cmd[1200];
  char *text = NULL;
  size_t len = 0;
  if (rc == HERON_OK && kc_scratch(dir, sizeof dir, "codegen") == 0) {
    snprintf(path, sizeof path, "%s/k.c", dir);
    rc = heron__write_file(path, src.data, src.len, &err);
    snprintf(cmd, sizeof cmd, "cd '%s' && cc %s " CC_OPT " -S k.c -o k.s", dir,
             heron__template_cflags(b.t));
    if (rc == HERON_OK && system(cmd) != 0) {
      snprintf(why, cap, "%s: '%s' failed", hw, cmd);
    } else if (rc == HERON_OK) {
      snprintf(path, sizeof path, "%s/k.s", dir);
      rc = heron__read_file(path, &text, &len, &err);
    }
    heron__rmtree(dir);
  }
  if (rc != HERON_OK)
    snprintf(why, cap, "%s: %s", hw, err.text);
  heron__buf_free(&src);
  kc_cpu_free(&b);
  return text;
}

static char *described_assembly(const char *hw, int vec, char *why,
                                size_t cap) {
  return gemm_assembly((const int64_t[]){24, 48, 20}, hw, vec, why, cap);
}

/* The template's flags follow the description, not -march=native alone:
 * an AVX2 description's kernel has no AVX-512 register even when built on
 * an AVX-512 machine, and an AVX-512 description's kernel uses them even
 * when built on an AVX2 one. */
TEST(kernel_isa_follows_the_description_not_the_build_machine) {
  char why[1400] = "";
  char *avx2 = described_assembly("cpu-avx2", 8, why, sizeof why);
  CHECK_MSG(avx2, "%s", why);
  int avx2_zmm = strstr(avx2, "%zmm") != NULL;
  int avx2_ymm = strstr(avx2, "%ymm") != NULL;
  free(avx2);
  char *avx512 = described_assembly("cpu-avx512", 16, why, sizeof why);
  CHECK_MSG(avx512, "%s", why);
  int avx512_zmm = strstr(avx512, "%zmm") != NULL;
  free(avx512);
  CHECK_MSG(!avx2_zmm, "the cpu-avx2 kernel uses zmm registers");
  CHECK_MSG(avx2_ymm, "the cpu-avx2 kernel at vec 8 uses no ymm register");
  CHECK_MSG(avx512_zmm, "the cpu-avx512 kernel at vec 16 uses no zmm");
}

/* A ragged vector axis (41 columns) has masked edges in the ISA's own
 * instructions: vmaskmovps at 8 lanes on AVX2, k-mask moves at 16 on
 * AVX-512 (both compiled on any machine; the kernels' results are checked
 * by the vector_axis_edge cases above). */
TEST(vector_axis_edges_are_masked_loads_and_stores) {
  char why[1400] = "";
  const int64_t shape[3] = {29, 41, 11};
  char *avx2 = gemm_assembly(shape, "cpu-avx2", 8, why, sizeof why);
  CHECK_MSG(avx2, "%s", why);
  int avx2_mask = strstr(avx2, "vmaskmovps") != NULL;
  free(avx2);
  char *avx512 = gemm_assembly(shape, "cpu-avx512", 16, why, sizeof why);
  CHECK_MSG(avx512, "%s", why);
  int avx512_mask = strstr(avx512, "{%k") != NULL;
  free(avx512);
  CHECK_MSG(avx2_mask, "the cpu-avx2 edge kernel has no vmaskmovps");
  CHECK_MSG(avx512_mask, "the cpu-avx512 edge kernel has no k-masked move");
}

/* 54 output columns (56 - 3 + 1) are no multiple of 8 or 16 lanes, the 64
 * output channels are: the vector axis is the channels, on the AVX2 (8
 * lanes) and AVX-512 (16 lanes) descriptions alike, whatever this machine
 * is; a GEMM whose N is a multiple of the vector keeps its contiguous j. */
TEST(conv_with_odd_rows_vectorizes_along_channels) {
  static const struct {
    const char *hw;
    int lanes;
  } hws[] = {{"cpu-avx2", 8}, {"cpu-avx512", 16}};
  for (int h = 0; h < 2; h++) {
    kc_cpu b;
    heron_error err = {0};
    CHECK_OK(build_epi(&b, "c2d", (int64_t[]){1, 56, 56, 64, 64, 3, 3, 1, 1, 1},
                       10, 0, hws[h].hw, &err),
             &err);
    int vaxis = heron__cpu_sched_of(b.t)->vec_axis,
        lanes = b.hw.vector_bytes / 4;
    char name[64];
    snprintf(name, sizeof name, "%s",
             vaxis >= 0 ? b.op.axes[vaxis].name : "(none)");
    kc_cpu_free(&b);
    CHECK_MSG(lanes == hws[h].lanes, "%s: %d fp32 lanes", hws[h].hw, lanes);
    CHECK_MSG(!strcmp(name, "co"), "%s: the convolution vectorizes along %s",
              hws[h].hw, name);
    CHECK_OK(
        build_epi(&b, "gemm", (int64_t[]){64, 64, 64}, 3, 0, hws[h].hw, &err),
        &err);
    vaxis = heron__cpu_sched_of(b.t)->vec_axis;
    snprintf(name, sizeof name, "%s",
             vaxis >= 0 ? b.op.axes[vaxis].name : "(none)");
    kc_cpu_free(&b);
    CHECK_MSG(!strcmp(name, "j"), "%s: the GEMM vectorizes along %s", hws[h].hw,
              name);
  }
}

/* The register rule: for every sampled config the micro-kernel's
 * registers, counted here from the loop lengths alone (accumulator
 * vectors, plus the vectors of each input that depends on the vector axis,
 * plus one broadcast), never exceed the register file, on AVX-512 (32)
 * and on an AVX2 description (16). */
static int regs_within(const char *op, const int64_t *shape, int n,
                       const char *hw, char *why, size_t cap) {
  kc_cpu b;
  heron_error err = {0};
  memset(&b, 0, sizeof b);
  int rc = heron__op_build(op, shape, n, HERON__FP32, &b.op, &err);
  if (rc == HERON_OK)
    rc = heron__hw_load(hw, &b.hw, &err);
  if (rc == HERON_OK)
    rc = heron__template_build(&b.op, &b.hw, "cpu", &b.t, &b.sp, &err);
  if (rc != HERON_OK) {
    snprintf(why, cap, "%s", err.text);
    return 0;
  }
  const heron__cpu_sched *s = heron__cpu_sched_of(b.t);
  int nv = heron_space_nvars(b.sp), ok = 1, worst = 0;
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 77);
  for (int c = 0; c < 3000 && ok; c++) {
    if (heron_space_sample(b.sp, &rng, cfg, &err) != HERON_OK) {
      snprintf(why, cap, "sample: %s", err.text);
      ok = 0;
      break;
    }
    int acc_at = (int)cfg[s->acc_at];
    int vec = s->vec_axis >= 0 ? (int)cfg[s->vec] : 1;
    int64_t reg[HERON__MAX_AXES];
    int64_t acc = 1;
    for (int a = 0; a < b.op.naxes; a++) {
      reg[a] = 1;
      if (b.op.axes[a].kind != HERON__SPATIAL)
        continue;
      reg[a] = cfg[s->tile[a][3]] * (acc_at ? cfg[s->tile[a][2]] : 1);
      acc *= reg[a];
    }
    int64_t need = acc / vec, broadcast = 0;
    for (int i = 0; i < b.op.ninputs; i++) {
      const heron__tensor *ts = &b.op.in[i];
      int dep_vec = 0;
      for (int d = 0; d < ts->ndim && s->vec_axis >= 0; d++)
        dep_vec |= ts->index[d].coef[s->vec_axis] != 0;
      if (!dep_vec) {
        broadcast = 1;
        continue;
      }
      int64_t pts = 1;
      for (int a = 0; a < b.op.naxes; a++) {
        int dep = 0;
        for (int d = 0; d < ts->ndim; d++)
          dep |= ts->index[d].coef[a] != 0;
        if (dep && b.op.axes[a].kind == HERON__SPATIAL)
          pts *= reg[a];
      }
      need += pts / vec;
    }
    need += broadcast;
    if (need > worst)
      worst = (int)need;
    if (need > b.hw.vector_regs) {
      snprintf(why, cap, "config %d needs %lld registers of %d", c,
               (long long)need, b.hw.vector_regs);
      ok = 0;
    }
  }
  /* The rule must bind: some configs use most of the file. */
  if (ok && worst < b.hw.vector_regs / 2) {
    snprintf(why, cap, "largest micro-kernel uses only %d of %d registers",
             worst, b.hw.vector_regs);
    ok = 0;
  }
  free(cfg);
  kc_cpu_free(&b);
  return ok;
}

TEST(micro_kernel_never_needs_more_than_32_registers_on_avx512) {
  char why[200] = "";
  int ok = regs_within("gemm", (const int64_t[]){1024, 1024, 1024}, 3,
                       "cpu-avx512", why, sizeof why) &&
           regs_within("c2d", (const int64_t[]){1, 56, 56, 64, 64, 3, 3}, 7,
                       "cpu-avx512", why, sizeof why);
  if (!ok)
    fprintf(stderr, "%s\n", why);
  CHECK(ok);
}

TEST(micro_kernel_never_needs_more_than_16_registers_on_avx2) {
  char why[200] = "";
  int ok = regs_within("gemm", (const int64_t[]){1024, 1024, 1024}, 3,
                       "cpu-avx2", why, sizeof why) &&
           regs_within("c1d", (const int64_t[]){1, 892, 64, 64, 3, 1, 4, 1}, 8,
                       "cpu-avx2", why, sizeof why);
  if (!ok)
    fprintf(stderr, "%s\n", why);
  CHECK(ok);
}

/* A config that breaks a constraint is refused with HERON_EINVAL and a
 * message naming the broken constraint, and nothing is generated. */
TEST(invalid_config_is_refused_with_einval) {
  kc_cpu b;
  heron_error err = {0};
  CHECK_OK(build(&b, "gemm", (int64_t[]){48, 40, 36}, 3, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 9);
  int rc = heron_space_sample(b.sp, &rng, cfg, &err);
  if (rc == HERON_OK) {
    /* i.t0 * ... * i.t3 no longer equals 48. */
    int v = heron_space_find_var(b.sp, "i.t0");
    cfg[v] = cfg[v] == 1 ? 2 : 1;
  }
  heron__buf src = {0};
  int rc2 = rc == HERON_OK ? heron__codegen(b.t, b.sp, cfg, &src, &err) : rc;
  size_t len = src.len;
  heron__buf_free(&src);
  free(cfg);
  kc_cpu_free(&b);
  CHECK_OK(rc, &err);
  CHECK_EQ(rc2, HERON_EINVAL);
  CHECK_EQ(len, 0);
  CHECK_STR_CONTAINS(err.text, "violates");
}

/* Forces a vectorized config through sample_restricted and checks that the
 * source uses the vector type and lists the config in its header. */
TEST(vectorized_config_uses_vector_type_and_lists_config) {
  kc_cpu b;
  heron_error err = {0};
  CHECK_OK(build(&b, "gemm", (int64_t[]){64, 64, 64}, 3, &err), &err);
  heron__buf src = {0};
  int rc = sampled_source(&b, (const char *const[]){"vec", "unroll"},
                          (const int64_t[]){4, 2}, 2, 4, &src, &err);
  char *text = heron__buf_take(&src);
  kc_cpu_free(&b);
  CHECK_OK(rc, &err);
  CHECK_STR_CONTAINS(text, "vector_size(16)");
  CHECK_STR_CONTAINS(text, "vec = 4");
  CHECK_STR_CONTAINS(text, "unroll = 2");
  CHECK_STR_CONTAINS(text, "void heron_kernel(void *const *bufs)");
  free(text);
}

/* The standalone driver builds with a generated kernel and reports the
 * time and GFLOP/s. */
TEST(driver_builds_with_a_kernel_and_reports_gflops) {
  kc_cpu b;
  heron_error err = {0};
  CHECK_OK(build(&b, "gemm", (int64_t[]){32, 48, 16}, 3, &err), &err);
  int nv = heron_space_nvars(b.sp);
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  heron_rng rng;
  heron_rng_seed(&rng, 5);
  heron__buf src = {0}, drv = {0};
  int rc = heron_space_sample(b.sp, &rng, cfg, &err);
  if (rc == HERON_OK)
    rc = heron__codegen(b.t, b.sp, cfg, &src, &err);
  heron__codegen_driver(&b.op, &drv);
  free(cfg);
  kc_cpu_free(&b);
  char dir[256];
  CHECK(kc_scratch(dir, sizeof dir, "codegen") == 0);
  char path[300], cmd[1200];
  snprintf(path, sizeof path, "%s/kernel.c", dir);
  if (rc == HERON_OK)
    rc = heron__write_file(path, src.data, src.len, &err);
  snprintf(path, sizeof path, "%s/driver.c", dir);
  if (rc == HERON_OK)
    rc = heron__write_file(path, drv.data, drv.len, &err);
  heron__buf_free(&src);
  heron__buf_free(&drv);
  CHECK_OK(rc, &err);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && cc -O2 -march=native -fopenmp driver.c kernel.c -o run "
           "&& ./run 3 > out.txt",
           dir);
  CHECK_EQ(system(cmd), 0);
  char *out = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/out.txt", dir);
  CHECK_OK(heron__read_file(path, &out, &len, &err), &err);
  heron__rmtree(dir);
  int good = strstr(out, "GFLOP/s") && strstr(out, "median");
  if (!good)
    fprintf(stderr, "driver printed: %s\n", out);
  free(out);
  CHECK(good);
}
