/* tests/targets/cpu/dot_every_config.c - every config of the int8 and bf16
 * spaces of small, odd operators computes the right result, built as the
 * measurements build it.
 *
 * tests/targets/cpu/dot_kernels.c samples 50 configs per op and builds them at
 * -O0.  Issue 30 found configs that compute wrong results (3 of 16 random
 * bf16 configs of gemm 3x5x7, at vec 1), and this test found more: both
 * were GCC 12 -O3 miscompiling code that is right at -O0 and -O2.  The
 * scalar group loop of a bf16 kernel left rolled (unroll 0: "#pragma GCC
 * unroll 1") became vector code that adds one product twice (85 of the 612
 * configs of gemm 3x5x7 on cpu-zen4); and in the emulated vec 8 bf16
 * kernels the weight pack's strided stores were forwarded into the
 * emulated vector load with the wrong elements in lanes 1..7 (12 of the
 * 192 configs of gemm 3x16x4).  The generator now keeps both out of the
 * optimizer's reach (H_OPAQUE, H_PACKED in core/targets/cpu/dot.c).  So
 * here:
 *
 *   - every valid config of each space is enumerated: a depth-first walk
 *     over the knobs, each partial assignment kept only when the solver
 *     completes it, whose count must equal heron_space_count's exact count
 *     (no config missed, none twice);
 *   - every config's kernel is generated; configs whose sources are equal
 *     but for the first comment (which lists the knob values) are one
 *     program, compiled and run once;
 *   - every program is built with the flags the measurements use (the
 *     template's -O3 ..., natively; this machine's -O3 ... with
 *     -DHERON_EMULATE_ISA, the library's scalar definitions of the
 *     intrinsics, as --emulate does), run on the same inputs with the
 *     output poisoned, and compared with the reference (exactly for int8).
 *
 * The descriptions are fixed ones (cpu-zen4: AVX-512 VNNI and BF16;
 * cpu-avxvnni; cpu-avx2), so that the spaces, and what the test means, do
 * not depend on the machine, and every variant of the template is covered
 * everywhere: the emulated builds run on any x86-64 CPU (an AVX2-only one
 * included); the native builds are compiled everywhere and run where the
 * CPU has the description's instructions, the test saying which it could
 * not run (SKIP, after every emulated run matched).
 *
 * With HERON_TEST_EXHAUSTIVE=1 the spaces of the small gemms run whole;
 * the larger ones (convolutions, bmm, gemm 17x3x33) are enumerated and
 * generated whole but run only an evenly spread share of their programs
 * (the case says how many).  Without it (tools/test.sh, CI) every space
 * is still enumerated, counted and generated whole, and a quarter of
 * those programs, evenly spread, is compiled and run: the four tests took
 * 239 of the Release stage's 2,239 test-seconds whole, and CI must stay
 * under 25 minutes.  The sanitizer build does not run this file (label
 * no_asan): the kernels are built without the sanitizers, and the
 * generator runs under them in dot_kernels. */
#include "test.h"

#include <dlfcn.h>
#include <unistd.h>

#include "core/op/op.h"
#include "core/sched/sched.h"
#include "core/space/builder.h"
#include "core/targets/hw.h"
#include "core/util/util.h"
#include "targets/kernel_check.h"

typedef void (*kernel_fn)(void *const *bufs);

/* 1 when HERON_TEST_EXHAUSTIVE=1: every program of the small spaces runs. */
static int exhaustive(void) {
  const char *e = getenv("HERON_TEST_EXHAUSTIVE");
  return e && !strcmp(e, "1");
}

/* The spaces enumerated here stay below this many configs (a guard
 * against a shape that grows them by accident). */
#define MAX_CONFIGS 20000

/* ---- Enumerating a space ------------------------------------------------ */

/* A growing list of configs of nv variables each. */
typedef struct cfglist {
  int nv;
  int64_t *v;
  int64_t n, cap;
} cfglist;

static int push_cfg(cfglist *l, const int64_t *cfg) {
  if (l->n >= MAX_CONFIGS)
    return -1;
  if (l->n == l->cap) {
    int64_t cap = l->cap ? 2 * l->cap : 256;
    int64_t *v = realloc(l->v, (size_t)(cap * l->nv) * sizeof *v);
    if (!v)
      return -1;
    l->v = v;
    l->cap = cap;
  }
  memcpy(l->v + l->n * l->nv, cfg, (size_t)l->nv * sizeof *cfg);
  l->n++;
  return 0;
}

/* Depth-first over the knobs: knob `depth` takes each value of its domain
 * that the solver can complete together with the values fixed above it;
 * with every knob fixed, the completed config (its auxiliary variables
 * follow from the knobs) is one of the space's. */
static int walk(const heron_space *sp, heron_rng *rng, int depth, int64_t *fix,
                int64_t *out, cfglist *l) {
  if (depth == heron_space_nknobs(sp))
    return push_cfg(l, out);
  int v = heron_space_knob(sp, depth);
  int64_t lo = 0, hi = -1;
  const int64_t *vals = NULL;
  int nvals = 0;
  if (heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals) != HERON_OK)
    return -1;
  int64_t count = vals ? nvals : hi - lo + 1;
  for (int64_t i = 0; i < count; i++) {
    fix[v] = vals ? vals[i] : lo + i;
    heron_error err = {0};
    if (heron_space_sample_restricted(sp, rng, fix, NULL, out, &err) !=
        HERON_OK)
      continue;
    if (walk(sp, rng, depth + 1, fix, out, l))
      return -1;
  }
  fix[v] = HERON_UNSET;
  return 0;
}

/* ---- Building and running ----------------------------------------------- */

/* The source without its first comment (the config's knob values). */
static char *program_text(const char *src) {
  const char *body = strstr(src, "*/");
  return strdup(body ? body + 2 : src);
}

static uint64_t fnv(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* "i.t1=1 i.t2=3 ... vec=1": the knobs of cfg. */
static void knob_text(const heron_space *sp, const int64_t *cfg, char *b,
                      size_t cap) {
  size_t len = 0;
  b[0] = '\0';
  for (int i = 0; i < heron_space_nknobs(sp) && len < cap; i++) {
    int v = heron_space_knob(sp, i);
    len += (size_t)snprintf(b + len, cap - len, "%s%s=%lld", i ? " " : "",
                            heron_space_var_name(sp, v), (long long)cfg[v]);
  }
}

/* Runs kernel k on bufs with the output poisoned (0x7f in every byte: a
 * NaN in fp32, an s32 beyond every sum here), so that an output element the
 * kernel never writes cannot match; returns whether the output matches the
 * reference. */
static int run_matches(kernel_fn k, const heron__op *op, void **bufs,
                       void *const *ref, double *max_err, int64_t *at) {
  size_t bytes = (size_t)heron__tensor_elems(&op->out) * 4;
  memset(bufs[op->ninputs], 0x7f, bytes);
  k(bufs);
  return heron__op_check(op, bufs[op->ninputs], ref[op->ninputs], max_err, at);
}

/* One case: an op at a shape in a dtype on a description; `share` the
 * programs it runs, 0 for all of them. */
typedef struct ecase {
  const char *op;
  int n;
  int64_t shape[12];
  int dtype;
  const char *hw;
  int share;
} ecase;

typedef struct eresult {
  int64_t configs, programs, ran, wrong; /* wrong: configs */
  int native;                            /* the native kernels ran */
  char missing[128];                     /* what the CPU lacks for them */
  char why[700]; /* the first wrong config, or why the case failed */
} eresult;

/* Case ec: enumerated, generated, built emulated and natively, run.
 * Returns 0 when it ran to its end (res->wrong counts the configs whose
 * program gave a wrong result), 1 with res->why saying why when it could
 * not. */
static int every_config(const ecase *ec, eresult *res) {
  memset(res, 0, sizeof *res);
  kc_cpu kb;
  heron_error err = {0};
  if (kc_cpu_build(&kb, ec->op, ec->shape, ec->n, ec->dtype, 0, NULL, ec->hw,
                   &err)) {
    snprintf(res->why, sizeof res->why, "%s", err.text);
    return 1;
  }
  int bad = 0, nv = heron_space_nvars(kb.sp);
  cfglist l = {.nv = nv};
  int64_t *fix = malloc((size_t)nv * sizeof *fix);
  int64_t *out = malloc((size_t)nv * sizeof *out);
  for (int v = 0; v < nv; v++)
    fix[v] = HERON_UNSET;
  heron_rng rng;
  heron_rng_seed(&rng, 7);
  double count = 0;
  int exact = 0;
  if (heron_space_count(kb.sp, &rng, MAX_CONFIGS, &count, &exact, &err) ||
      !exact) {
    snprintf(res->why, sizeof res->why,
             "no exact count of at most %d configs (%g) %s", MAX_CONFIGS, count,
             err.text);
    bad = 1;
  } else if (walk(kb.sp, &rng, 0, fix, out, &l) || l.n != (int64_t)count) {
    snprintf(res->why, sizeof res->why,
             "the walk found %lld configs, heron_space_count %g",
             (long long)l.n, count);
    bad = 1;
  }
  free(fix);
  free(out);
  res->configs = l.n;
  /* The distinct programs; of[c] is config c's program, rep[p] the first
   * config of program p. */
  char **prog = calloc((size_t)(l.n + 1), sizeof *prog);
  uint64_t *hash = calloc((size_t)(l.n + 1), sizeof *hash);
  int64_t *rep = calloc((size_t)(l.n + 1), sizeof *rep);
  int64_t *of = calloc((size_t)(l.n + 1), sizeof *of);
  char **src = calloc((size_t)(l.n + 1), sizeof *src);
  int64_t np = 0;
  for (int64_t c = 0; c < l.n && !bad; c++) {
    heron__buf b = {0};
    if (heron__codegen(kb.t, kb.sp, l.v + c * nv, &b, &err) != HERON_OK) {
      char k[400];
      knob_text(kb.sp, l.v + c * nv, k, sizeof k);
      snprintf(res->why, sizeof res->why, "codegen of %s: %s", k, err.text);
      heron__buf_free(&b);
      bad = 1;
      break;
    }
    char *text = program_text(b.data);
    uint64_t h = text ? fnv(text) : 0;
    int64_t found = -1;
    for (int64_t p = np - 1; p >= 0 && found < 0 && text; p--)
      if (hash[p] == h && strcmp(prog[p], text) == 0)
        found = p;
    if (!text) {
      snprintf(res->why, sizeof res->why, "out of memory");
      bad = 1;
    } else if (found < 0) {
      prog[np] = text;
      hash[np] = h;
      rep[np] = c;
      src[np] = b.data;
      b.data = NULL;
      found = np++;
    } else {
      free(text);
    }
    of[c] = found;
    heron__buf_free(&b);
  }
  res->programs = np;
  /* The programs that run: with HERON_TEST_EXHAUSTIVE=1 all (the larger
   * spaces: `share` of them evenly spread); otherwise, as tools/test.sh
   * runs it, a quarter of that, evenly spread (at least one). */
  int64_t share = ec->share;
  if (!exhaustive()) {
    int64_t all = share ? share : np;
    share = all / 4 > 0 ? all / 4 : 1;
  }
  char *runs = calloc((size_t)(np + 1), 1);
  if (share && share < np)
    for (int64_t i = 0; i < share; i++)
      runs[i * np / share] = 1;
  else
    memset(runs, 1, (size_t)np);
  heron__buf all = {0};
  for (int64_t p = 0; p < np; p++) {
    if (runs[p]) {
      kc_append_renamed(&all, (int)p, src[p]);
      res->ran++;
    }
    free(src[p]);
  }
  free(src);
  char dir[256] = "", path[300];
  if (!bad && kc_scratch(dir, sizeof dir, "every")) {
    snprintf(res->why, sizeof res->why, "no scratch folder");
    bad = 1;
  }
  if (!bad) {
    snprintf(path, sizeof path, "%s/all.c", dir);
    if (heron__write_file(path, all.data, all.len, &err) != HERON_OK) {
      snprintf(res->why, sizeof res->why, "%s", err.text);
      bad = 1;
    }
  }
  heron__buf_free(&all);
  int lacks = heron__hw_cpu_lacks_for(&kb.hw, ec->dtype, res->missing,
                                      sizeof res->missing);
  /* The emulated build takes this machine's flags, as --emulate does (the
   * description's -m flags could let the compiler use instructions this
   * CPU lacks in the scalar definitions). */
  if (!bad && !kc_compile_all_c(dir, "emu", heron__template_cflags(NULL),
                                "-DHERON_EMULATE_ISA")) {
    snprintf(res->why, sizeof res->why,
             "the emulated build failed (%s/emu.err)", dir);
    bad = 1;
  }
  if (!bad && !kc_compile_all_c(dir, "nat", heron__template_cflags(kb.t), "")) {
    snprintf(res->why, sizeof res->why,
             "the native build failed (%s/nat.err, %s)", dir,
             heron__template_cflags(kb.t));
    bad = 1;
  }
  void *bufs[HERON__MAX_TENSORS + 2], *ref[HERON__MAX_TENSORS + 2];
  int have_bufs = 0;
  if (!bad) {
    if (kc_inputs(&kb.op, bufs, ref, 11, &err)) {
      snprintf(res->why, sizeof res->why, "%s", err.text);
      bad = 1;
    } else {
      have_bufs = 1;
    }
  }
  void *lib[2] = {NULL, NULL};
  if (!bad && kc_hold_libgomp(res->why, sizeof res->why))
    bad = 1;
  if (!bad) {
    /* A library that was built must load: a failure to is a failure,
     * never a skip. */
    for (int k = 0; k < 2 - lacks && !bad; k++) {
      snprintf(path, sizeof path, "%s/%s.so", dir, k ? "nat" : "emu");
      lib[k] = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (!lib[k]) {
        snprintf(res->why, sizeof res->why, "dlopen %s: %s", path, dlerror());
        bad = 1;
      }
    }
  }
  res->native = !bad && lib[1] != NULL;
  for (int64_t p = 0; p < np && !bad; p++)
    for (int k = 0; k < 2 && runs[p]; k++) {
      if (!lib[k])
        continue;
      kernel_fn fn =
          (kernel_fn)(uintptr_t)kc_sym(lib[k], "heron_kernel", (int)p);
      if (!fn) {
        snprintf(res->why, sizeof res->why, "no heron_kernel_%lld in %s.so",
                 (long long)p, k ? "nat" : "emu");
        bad = 1;
        break;
      }
      double max_err = 0;
      int64_t at = -1;
      if (run_matches(fn, &kb.op, bufs, ref, &max_err, &at))
        continue;
      if (!res->wrong) {
        char kt[400];
        knob_text(kb.sp, l.v + rep[p] * nv, kt, sizeof kt);
        snprintf(res->why, sizeof res->why,
                 "%s run: element %lld wrong (max error %g) with %s",
                 k ? "native" : "emulated", (long long)at, max_err, kt);
      }
      for (int64_t c = 0; c < l.n; c++)
        res->wrong += of[c] == p;
      break; /* the native run of a program already wrong adds nothing */
    }
  for (int k = 0; k < 2; k++)
    if (lib[k])
      dlclose(lib[k]);
  if (have_bufs)
    kc_inputs_free(&kb.op, bufs, ref);
  if (dir[0] && !bad && !res->wrong && !getenv("HERON_KEEP_DOT"))
    heron__rmtree(dir);
  else if (dir[0])
    fprintf(stderr, "kept %s (all.c, the programs)\n", dir);
  for (int64_t p = 0; p < np; p++)
    free(prog[p]);
  free(prog);
  free(hash);
  free(rep);
  free(of);
  free(runs);
  free(l.v);
  kc_cpu_free(&kb);
  return bad;
}

/* Runs the cases; fails on any wrong config or any case that could not
 * run, SKIPs (after every emulated run matched) when the native runs of
 * some cases could not be made. */
static void run_cases(const ecase *cases, int n) {
  int skipped = 0, failed = 0;
  char missing[128] = "";
  int64_t wrong = 0, configs = 0;
  for (int i = 0; i < n; i++) {
    const ecase *ec = &cases[i];
    eresult r;
    int bad = every_config(ec, &r);
    char shape[96] = "";
    for (int d = 0, len = 0; d < ec->n; d++)
      len += snprintf(shape + len, sizeof shape - (size_t)len, "%s%lld",
                      d ? "," : "", (long long)ec->shape[d]);
    if (bad) {
      fprintf(stderr, "%s %s %s %s: %s\n", ec->op, shape,
              heron__dtype_name(ec->dtype), ec->hw, r.why);
      failed++;
      continue;
    }
    printf("%s %s %s %s: %lld configs, %lld distinct programs, %lld run "
           "(%s), %lld configs wrong\n",
           ec->op, shape, heron__dtype_name(ec->dtype), ec->hw,
           (long long)r.configs, (long long)r.programs, (long long)r.ran,
           r.native ? "emulated and native" : "emulated", (long long)r.wrong);
    if (r.wrong)
      fprintf(stderr, "%s %s %s %s: %lld of %lld configs wrong; first: %s\n",
              ec->op, shape, heron__dtype_name(ec->dtype), ec->hw,
              (long long)r.wrong, (long long)r.configs, r.why);
    wrong += r.wrong;
    configs += r.configs;
    if (!r.native) {
      skipped++;
      snprintf(missing, sizeof missing, "%s", r.missing);
    }
  }
  fflush(stdout);
  CHECK_MSG(failed == 0, "%d of %d cases could not run", failed, n);
  CHECK_MSG(wrong == 0, "%lld of %lld configs computed wrong results",
            (long long)wrong, (long long)configs);
  if (skipped)
    SKIP("every config run matched the reference emulated; the native runs "
         "of %d of %d cases were skipped (this CPU lacks %s)",
         skipped, n, missing);
}

#define NCASES(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define BF16 HERON__BF16
#define INT8 HERON__INT8

/* ---- Tests -------------------------------------------------------------- */

/* Issue 30's shape: every config at vec 1 (N = 5 is below a vector), with
 * tiles that overshoot the extents, reductions that are no multiple of the
 * group (2 steps per lane in bf16, 4 in int8); and unit M and K. */
TEST(every_bf16_config_of_gemm_3x5x7_matches_the_reference) {
  static const ecase c[] = {
      {"gemm", 3, {3, 5, 7}, BF16, "cpu-zen4", 0},
      {"gemm", 3, {3, 5, 7}, BF16, "cpu-avx2", 0},
      {"gemm", 3, {1, 3, 1}, BF16, "cpu-zen4", 0},
  };
  run_cases(c, NCASES(c));
}

TEST(every_int8_config_of_gemm_3x5x7_matches_the_reference) {
  static const ecase c[] = {
      {"gemm", 3, {3, 5, 7}, INT8, "cpu-zen4", 0},
      {"gemm", 3, {3, 5, 7}, INT8, "cpu-avx2", 0},
      {"gemm", 3, {3, 5, 7}, INT8, "cpu-avxvnni", 0},
      {"gemm", 3, {1, 3, 1}, INT8, "cpu-zen4", 0},
  };
  run_cases(c, NCASES(c));
}

/* Vectors: N = 16 (vec 8 and 16, exact), gemv's 9 rows (vec 1) on the
 * AVX-512 variants; every config of the smaller AVX2 and AVX-VNNI spaces. */
TEST(every_config_of_small_vector_gemms_matches_the_reference) {
  static const ecase c[] = {
      {"gemm", 3, {3, 16, 4}, BF16, "cpu-zen4", 0},
      {"gemm", 3, {3, 16, 4}, INT8, "cpu-zen4", 0},
      {"gemm", 3, {3, 16, 4}, INT8, "cpu-avxvnni", 48},
      {"gemm", 3, {3, 16, 4}, BF16, "cpu-avx2", 48},
      {"gemv", 2, {9, 7}, BF16, "cpu-zen4", 0},
      {"gemv", 2, {9, 7}, INT8, "cpu-avx2", 0},
  };
  run_cases(c, NCASES(c));
}

/* The larger spaces, every config generated, a spread share of the
 * programs run: gemm 17x3x33, bmm, the convolutions (padding, region
 * packs of whole channel groups, channels last). */
TEST(a_spread_of_every_larger_space_matches_the_reference) {
  static const ecase c[] = {
      {"gemm", 3, {17, 3, 33}, BF16, "cpu-zen4", 24},
      {"gemm", 3, {17, 3, 33}, INT8, "cpu-avx2", 24},
      {"bmm", 4, {2, 3, 5, 7}, BF16, "cpu-zen4", 24},
      {"bmm", 4, {2, 3, 5, 7}, INT8, "cpu-zen4", 24},
      {"c1d", 8, {1, 5, 4, 3, 3, 1, 1, 1}, BF16, "cpu-zen4", 24},
      {"c1d", 8, {1, 5, 4, 3, 3, 1, 1, 1}, INT8, "cpu-avxvnni", 24},
      {"c2d", 10, {1, 3, 3, 4, 3, 3, 3, 1, 1, 1}, BF16, "cpu-avx2", 24},
      {"c2d", 10, {1, 3, 3, 4, 3, 3, 3, 1, 1, 1}, INT8, "cpu-zen4", 24},
      {"c2d_nhwc", 10, {1, 3, 3, 4, 3, 3, 3, 1, 1, 1}, BF16, "cpu-zen4", 24},
      {"c2d_nhwc", 10, {1, 3, 3, 4, 3, 3, 3, 1, 1, 1}, INT8, "cpu-avx2", 24},
  };
  run_cases(c, NCASES(c));
}
