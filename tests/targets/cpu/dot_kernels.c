/* tests/targets/cpu/dot_kernels.c - the int8 (u8 x s8 -> s32) and bf16 (->
 * fp32) kernels of the cpu template: for every op at small and odd shapes,
 * random valid configs are generated, built emulated (-DHERON_EMULATE_ISA: the
 * scalar definitions of every intrinsic, on this machine's own flags) and
 * checked against the reference on every machine, exactly for int8; where
 * the CPU has the description's instructions they are also built natively
 * with the template's flags, run, and compared with the emulation bit for
 * bit.  Where it lacks them the native build must still compile, and its
 * run is skipped, saying so.
 *
 * With the weights prepacked (--prepack B / weight / A for gemv) each
 * kernel's own heron_prepack makes the copy first, into a buffer of exactly
 * heron_prepacked_elems elements of the weights' type, as the measurement
 * worker does, and the kernel reads that copy.
 *
 * To keep the compiler's time down, the configs of one case share one
 * source file (each kernel renamed "heron_kernel_<n>", its prepack
 * functions likewise; the prelude is guarded) and so two compiler runs. */
#include "test.h"

#include <dlfcn.h>
#include <unistd.h>

#include "core/op/op.h"
#include "core/sched/sched.h"
#include "core/space/builder.h"
#include "core/targets/cpu/template.h"
#include "core/targets/hw.h"
#include "core/util/util.h"
#include "targets/kernel_check.h"

/* 24 configs per case on this machine's description (50 until
 * 2026-11-28, when the two tests took 180 of the Release stage's
 * test-seconds, then 30; at 30 the int8 run on an AMX Xeon still packed
 * regions in all four region cases, 7 to 16 kernels each, and at 24 each
 * region case still requires a packed region; dot_every_config runs every
 * config of small spaces).  Under the sanitizers every case samples 10
 * unless the build cache holds the Release stage's kernels
 * (HERON_TEST_SHARE): the kernels are built without them, so the
 * generator is what is tested. */
#define NCONFIGS HERON_TEST_SHARE(24, 10)

typedef void (*kernel_fn)(void *const *bufs);

typedef struct dcase {
  const char *op;
  int n;
  int64_t shape[12];
} dcase;

/* Every op at small, odd shapes: primes, padding, strides, dilation,
 * reductions that are no multiple of 4; the vector axis (gemm's N, gemv's
 * M, the channels CO) a multiple of 8 or just below a multiple of 8 or 16,
 * so that the padded-work rule leaves vectors in the space, some exact
 * and some with edges. */
static const dcase cases[] = {
    {"gemm", 3, {13, 40, 29}},
    {"bmm", 4, {3, 7, 24, 11}},
    {"gemv", 2, {47, 23}},
    {"c1d", 8, {2, 23, 5, 24, 3, 2, 2, 1}},
    {"c2d", 10, {1, 9, 11, 3, 31, 3, 3, 1, 1, 1}},
    {"c3d", 12, {1, 4, 5, 6, 3, 16, 3, 3, 3, 1, 1, 1}},
    {"dil", 10, {1, 9, 8, 3, 15, 3, 3, 1, 2, 2}},
    {"t2d", 11, {1, 5, 6, 3, 23, 3, 3, 2, 1, 1, 1}},
    {"gemm", 3, {11, 5, 37}}, /* N below a vector: scalar code */
    /* Whole groups of input channels: the activations packed as a region
     * (each element once, channels innermost) rather than one row of k per
     * point; batch 2, dilation 2, a transposed convolution's negative
     * kernel offsets and channels last in its indices. */
    {"c2d", 10, {2, 9, 7, 8, 24, 3, 3, 1, 1, 1}},
    {"c1d", 8, {1, 29, 12, 16, 3, 1, 1, 2}},
    {"t2d", 11, {1, 7, 6, 8, 16, 3, 3, 1, 1, 1, 0}},
    /* channels last: the channel runs are copied whole */
    {"c2d_nhwc", 10, {2, 9, 7, 8, 24, 3, 3, 1, 1, 1}},
};

/* Whether a kernel's source packs its activations as a region. */
static int packs_region(const char *src) {
  return src && strstr(src, "activations as a region") != NULL;
}

/* dir/all.c's kernels are built at -O0 (a third of -O1's time on these
 * sources; the instructions are the intrinsics either way): -O0 after the
 * template's flags. */
#define DOT_OPT "-O0"

static void show_err(const char *dir, const char *name) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "head -c 1500 '%s/%s.err' >&2", dir, name);
  if (system(cmd) != 0)
    fprintf(stderr, "(no diagnostics)\n");
}

/* The prepacked copies of kernel c of library h: for each input its
 * heron_prepacked_elems counts (elements of the input's own type), a copy
 * of exactly that size, poisoned with 0xff bytes (NaN pairs in bf16)
 * before heron_prepack writes it, in kbufs[i] and copies[i].  Only the
 * op's prepacked inputs may have copies, and each must have one.  0 with
 * why filled in when the kernel breaks that. */
static int prepack_copies(void *h, int c, const heron__op *op, void **kbufs,
                          void **copies, char *why, size_t cap) {
  void *pe = kc_sym(h, "heron_prepacked_elems", c);
  void *pk = kc_sym(h, "heron_prepack", c);
  if (!op->prepack)
    return pe || pk ? (snprintf(why, cap, "exports heron_prepack unasked"), 0)
                    : 1;
  if (!pe || !pk) {
    snprintf(why, cap, "prepacked weights but no heron_prepack export");
    return 0;
  }
  int64_t (*elems)(int) = (int64_t(*)(int))(uintptr_t)pe;
  void (*pack)(int, const void *, void *) =
      (void (*)(int, const void *, void *))(uintptr_t)pk;
  for (int i = 0; i < op->ninputs; i++) {
    int64_t n = elems(i);
    if ((n > 0) != (int)(op->prepack >> i & 1u)) {
      snprintf(why, cap, "input %s: %lld prepacked elements", op->in[i].name,
               (long long)n);
      return 0;
    }
    if (n <= 0)
      continue;
    size_t bytes =
        (size_t)n * (size_t)heron__dtype_size(heron__op_buf_dtype(op, i));
    copies[i] = malloc(bytes);
    if (!copies[i]) {
      snprintf(why, cap, "out of memory");
      return 0;
    }
    memset(copies[i], 0xff, bytes);
    pack(i, kbufs[i], copies[i]);
    kbufs[i] = copies[i];
  }
  return 1;
}

/* Runs kernel c of library h on bufs (output poisoned first; prepacked
 * inputs packed first by the kernel's own heron_prepack), returns its
 * output copied into a new buffer, or NULL with why filled in. */
static void *run_kernel(void *h, int c, const heron__op *op, void **bufs,
                        char *why, size_t cap) {
  kernel_fn k = (kernel_fn)(uintptr_t)kc_sym(h, "heron_kernel", c);
  size_t bytes = (size_t)heron__tensor_elems(&op->out) * 4;
  if (!k) {
    snprintf(why, cap, "no heron_kernel_%d", c);
    return NULL;
  }
  void *kbufs[HERON__MAX_TENSORS + 2], *copies[HERON__MAX_TENSORS] = {0};
  memcpy(kbufs, bufs, sizeof(void *) * (size_t)heron__op_nbufs(op));
  void *copy = NULL;
  if (prepack_copies(h, c, op, kbufs, copies, why, cap)) {
    /* 0x7f in every byte: no correct output element has that pattern here
     * (a NaN in fp32, an s32 beyond the bounded sums). */
    memset(bufs[op->ninputs], 0x7f, bytes);
    k(kbufs);
    copy = malloc(bytes);
    if (copy)
      memcpy(copy, bufs[op->ninputs], bytes);
    else
      snprintf(why, cap, "out of memory");
  }
  for (int i = 0; i < HERON__MAX_TENSORS; i++)
    free(copies[i]);
  return copy;
}

/* Whether the heron_prepack in src numbers more than one block (loops
 * over level-0 tiles or reduction-outer steps): the copy's offsets then
 * matter, not just its layout. */
static int prepack_has_blocks(const char *src) {
  const char *f = strstr(src, "void heron_prepack(int input, const void *src, "
                              "void *dst) {");
  return f && strstr(f, "_0 = 0; ") != NULL;
}

/* The op of case dc in dtype with epilogue flags (and its weights
 * prepacked when prewt is 1), its template and space for the hardware
 * description hw (NULL: this machine). */
static int case_template(const dcase *dc, int dtype, const char *hw,
                         int epilogue, int prewt, kc_cpu *b, heron_error *err) {
  return kc_cpu_build(b, dc->op, dc->shape, dc->n, dtype, epilogue,
                      prewt ? KC_PREPACK_WEIGHTS : NULL, hw, err);
}

/* The case: ncfg random configs of op at shape in dtype for the hardware
 * description hw (NULL: this machine), with epilogue flags, and with its
 * weights (the input other than op->act_input) prepacked when prewt is 1.
 * Returns 0 on success; *native says whether the native kernels ran. */
static int dot_case(const dcase *dc, int dtype, const char *hw, int epilogue,
                    int prewt, int ncfg, uint64_t seed, int *native, char *why,
                    size_t cap) {
  kc_cpu b;
  heron_error err = {0};
  *native = 0;
  if (case_template(dc, dtype, hw, epilogue, prewt, &b, &err)) {
    snprintf(why, cap, "%s: %s", dc->op, err.text);
    return 1;
  }
  char dir[256];
  if (kc_scratch(dir, sizeof dir, "dot")) {
    snprintf(why, cap, "no scratch folder");
    return 1;
  }
  /* All configs into one source. */
  heron__buf all = {0};
  heron_rng rng;
  heron_rng_seed(&rng, seed);
  int nv = heron_space_nvars(b.sp), bad = 0, blocks = 0, regions = 0;
  int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
  int vecs[17] = {0};
  for (int c = 0; c < ncfg && !bad; c++) {
    heron__buf src = {0};
    /* A third of the configs each at vec 1, 8 and 16 where the space has
     * them (random sampling alone draws mostly the scalar kernels of these
     * short axes, whose register tiles have the most choices). */
    int64_t *fix = malloc((size_t)nv * sizeof *fix);
    for (int v = 0; v < nv; v++)
      fix[v] = HERON_UNSET;
    fix[heron__cpu_sched_of(b.t)->vec] = c % 3 == 0 ? 1 : c % 3 == 1 ? 8 : 16;
    int got = heron_space_sample_restricted(b.sp, &rng, fix, NULL, cfg, &err);
    free(fix);
    /* Tight spaces (gemv's 47 rows in vectors of 8 within the padded-work
     * bound) may need a few of the sampler's restart budgets. */
    for (int tries = 0; got != HERON_OK && tries < 20; tries++)
      got = heron_space_sample(b.sp, &rng, cfg, &err);
    if (got != HERON_OK ||
        heron__codegen(b.t, b.sp, cfg, &src, &err) != HERON_OK) {
      snprintf(why, cap, "%s config %d: %s", dc->op, c, err.text);
      bad = 1;
    }
    vecs[cfg[heron__cpu_sched_of(b.t)->vec] & 15]++;
    blocks += src.data && prepack_has_blocks(src.data);
    regions += packs_region(src.data);
    kc_append_renamed(&all, c, src.data);
    heron__buf_free(&src);
  }
  free(cfg);
  char path[300];
  snprintf(path, sizeof path, "%s/all.c", dir);
  if (!bad && heron__write_file(path, all.data, all.len, &err) != HERON_OK) {
    snprintf(why, cap, "%s", err.text);
    bad = 1;
  }
  heron__buf_free(&all);
  char missing[128] = "";
  int lacks = heron__hw_cpu_lacks_for(&b.hw, dtype, missing, sizeof missing);
  const char *flags = heron__template_cflags(b.t);
  /* The emulated build takes this machine's own flags: the description's
   * -m flags would let the compiler vectorize the scalar definitions with
   * instructions this machine may lack. */
  const char *emu_flags = heron__template_cflags(NULL);
  if (!bad && !kc_compile_all_c(dir, "emu", emu_flags,
                                DOT_OPT " -DHERON_EMULATE_ISA")) {
    show_err(dir, "emu");
    snprintf(why, cap, "%s: the emulated build failed (%s)", dc->op, dir);
    bad = 1;
  }
  if (!bad && !kc_compile_all_c(dir, "nat", flags, DOT_OPT)) {
    show_err(dir, "nat");
    snprintf(why, cap, "%s: the native build failed (%s, %s)", dc->op, dir,
             flags);
    bad = 1;
  }
  void *bufs[HERON__MAX_TENSORS + 2], *ref[HERON__MAX_TENSORS + 2];
  if (!bad && kc_inputs(&b.op, bufs, ref, seed, &err)) {
    snprintf(why, cap, "%s", err.text);
    bad = 1;
  }
  if (!bad) {
    kc_hold_libgomp(NULL, 0);
    snprintf(path, sizeof path, "%s/emu.so", dir);
    void *he = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!he) {
      snprintf(why, cap, "%s: the emulated kernels do not load: %s", dc->op,
               dlerror());
      bad = 1;
    }
    /* Where the CPU has the instructions the native kernels must load: a
     * failure there is a failure, never a skipped native run. */
    snprintf(path, sizeof path, "%s/nat.so", dir);
    void *hn = lacks || bad ? NULL : dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lacks && !bad && !hn) {
      snprintf(why, cap,
               "%s: this CPU has the instructions, but the native kernels "
               "do not load: %s",
               dc->op, dlerror());
      bad = 1;
    }
    size_t bytes = (size_t)heron__tensor_elems(&b.op.out) * 4;
    for (int c = 0; c < ncfg && !bad && he; c++) {
      char kwhy[160] = "";
      void *e = run_kernel(he, c, &b.op, bufs, kwhy, sizeof kwhy);
      double max_err = 0;
      int64_t at = -1;
      if (!e) {
        snprintf(why, cap, "%s %s config %d (emulated, %s/all.c): %s", dc->op,
                 heron__dtype_name(dtype), c, dir, kwhy);
        bad = 1;
      } else if (!heron__op_check(&b.op, e, ref[b.op.ninputs], &max_err, &at)) {
        snprintf(why, cap,
                 "%s %s config %d (emulated, %s/all.c): element %lld differs "
                 "(max error %g)",
                 dc->op, heron__dtype_name(dtype), c, dir, (long long)at,
                 max_err);
        bad = 1;
      }
      if (!bad && hn) {
        void *n = run_kernel(hn, c, &b.op, bufs, kwhy, sizeof kwhy);
        if (!n || memcmp(n, e, bytes)) {
          snprintf(why, cap,
                   "%s %s config %d: native and emulated outputs differ "
                   "(%s/all.c)%s%s",
                   dc->op, heron__dtype_name(dtype), c, dir, n ? "" : ": ",
                   n ? "" : kwhy);
          bad = 1;
        }
        free(n);
      }
      free(e);
    }
    *native = hn != NULL;
    kc_inputs_free(&b.op, bufs, ref);
  }
  if (!bad && !getenv("HERON_KEEP_DOT"))
    heron__rmtree(dir);
  if (!bad) {
    char pre[64] = "";
    if (prewt)
      snprintf(pre, sizeof pre, ", %s prepacked (%d in several blocks)",
               b.op.in[1 - b.op.act_input].name, blocks);
    snprintf(why, cap,
             "%s %s: %d configs (vec 1: %d, 8: %d, 16: %d; %d region "
             "packs)%s%s%s",
             dc->op, heron__dtype_name(dtype), ncfg, vecs[1], vecs[8], vecs[0],
             regions, pre,
             lacks ? "; native runs skipped: this CPU lacks " : "",
             lacks ? missing : "");
  }
  kc_cpu_free(&b);
  return bad;
}

/* Every op of the table in dtype on description hw; SKIPs (after checking
 * every emulated kernel) when the native kernels could not run. */
static void all_ops(int dtype, const char *hw, int epilogue) {
  /* This machine's description gets NCONFIGS per op; the fixed ones, which
   * repeat the same generator on other variants, a fifth. */
  int ncfg = hw ? NCONFIGS / 5 : NCONFIGS;
  int skipped = 0;
  char why[512], last[512] = "";
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int native = 0;
    int bad = dot_case(&cases[i], dtype, hw, epilogue, 0, ncfg, 17 + i, &native,
                       why, sizeof why);
    CHECK_MSG(!bad, "%s", why);
    if (bad)
      return;
    printf("%s\n", why);
    skipped += !native;
    snprintf(last, sizeof last, "%s", why);
  }
  if (skipped)
    SKIP("all emulated kernels matched the reference; the native runs of %d "
         "ops were skipped (%s)",
         skipped, last);
}

TEST(int8_kernels_of_every_op_match_the_reference_on_this_machine) {
  all_ops(HERON__INT8, NULL, 0);
}

TEST(int8_vnni_kernels_match_emulated_and_reference) {
  all_ops(HERON__INT8, "cpu-zen4", 0);
}

TEST(int8_avx2_kernels_match_emulated_and_reference) {
  all_ops(HERON__INT8, "cpu-avx2", 0);
}

TEST(int8_avx_vnni_kernels_match_emulated_and_reference) {
  all_ops(HERON__INT8, "cpu-avxvnni", 0);
}

TEST(bf16_kernels_of_every_op_match_the_reference_on_this_machine) {
  all_ops(HERON__BF16, NULL, 0);
}

TEST(bf16_avx512_kernels_match_emulated_and_reference) {
  all_ops(HERON__BF16, "cpu-zen4", 0);
}

TEST(bf16_avx2_kernels_match_emulated_and_reference) {
  all_ops(HERON__BF16, "cpu-avx2", 0);
}

/* The fused epilogue in s32 (bias) and fp32, on gemm and a convolution:
 * every emulated kernel against the reference, and natively where the CPU
 * has the description's instructions; SKIPs (after every emulated check)
 * when a native half could not run here. */
TEST(int8_and_bf16_kernels_apply_bias_and_relu) {
  char why[512], last[600] = "";
  int native, cases_run = 0, not_native = 0;
  static const char *const hws[] = {"cpu-zen4", "cpu-avx2"};
  for (int h = 0; h < 2; h++)
    for (int dt = 0; dt < 2; dt++)
      for (int i = 0; i < 4; i += 3) {
        int bad = dot_case(&cases[i], dt ? HERON__BF16 : HERON__INT8, hws[h],
                           HERON__EPI_BIAS | HERON__EPI_RELU, 0, 10, 5 + i,
                           &native, why, sizeof why);
        CHECK_MSG(!bad, "%s", why);
        cases_run++;
        if (!native) {
          not_native++;
          snprintf(last, sizeof last, "%s: %s", hws[h], why);
        }
      }
  if (not_native)
    SKIP("all %d cases matched the reference emulated; the native runs of %d "
         "were skipped (%s)",
         cases_run, not_native, last);
}

/* All-255 activations with all-127 and all-(-128) weights: the largest
 * products of either sign, where vpmaddubsw's 16-bit pair sums would
 * saturate (255 * 127 * 2 = 64770 > 32767), give exact sums in every
 * variant, emulated and native. */
TEST(saturation_corners_are_exact_in_every_int8_variant) {
  static const char *const hws[] = {"cpu-zen4", "cpu-avx2", NULL};
  static const int wv[2] = {127, -128};
  int skipped = 0;
  for (int h = 0; h < 3; h++) {
    kc_cpu b;
    heron_error err = {0};
    CHECK_OK(kc_cpu_build(&b, "gemm", (int64_t[]){19, 35, 1031}, 3, HERON__INT8,
                          0, NULL, hws[h], &err),
             &err);
    char dir[256];
    CHECK(kc_scratch(dir, sizeof dir, "dot") == 0);
    heron__buf all = {0};
    heron_rng rng;
    heron_rng_seed(&rng, 99);
    int nv = heron_space_nvars(b.sp), ncfg = 8;
    int64_t *cfg = malloc((size_t)nv * sizeof *cfg);
    for (int c = 0; c < ncfg; c++) {
      heron__buf src = {0};
      CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
      CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
      kc_append_renamed(&all, c, src.data);
      heron__buf_free(&src);
    }
    free(cfg);
    char path[300];
    snprintf(path, sizeof path, "%s/all.c", dir);
    CHECK_OK(heron__write_file(path, all.data, all.len, &err), &err);
    heron__buf_free(&all);
    CHECK(kc_compile_all_c(dir, "emu", heron__template_cflags(NULL),
                           DOT_OPT " -DHERON_EMULATE_ISA"));
    CHECK(kc_compile_all_c(dir, "nat", heron__template_cflags(b.t), DOT_OPT));
    int lacks = heron__hw_cpu_lacks_for(&b.hw, HERON__INT8, NULL, 0);
    skipped += lacks;
    kc_hold_libgomp(NULL, 0);
    snprintf(path, sizeof path, "%s/emu.so", dir);
    void *he = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(he != NULL, "the emulated kernels do not load: %s", dlerror());
    /* Where the CPU has the instructions the native kernels must load. */
    snprintf(path, sizeof path, "%s/nat.so", dir);
    void *hn = lacks ? NULL : dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(lacks || hn != NULL,
              "%s: this CPU has the instructions, but the native kernels do "
              "not load: %s",
              hws[h] ? hws[h] : "this machine", dlerror());
    void *bufs[3];
    CHECK_OK(heron__op_alloc_buffers(&b.op, bufs, &err), &err);
    for (int w = 0; w < 2; w++) {
      memset(bufs[0], 255, 19 * 1031);
      memset(bufs[1], wv[w], 1031 * 35);
      for (int c = 0; c < ncfg; c++)
        for (int k = 0; k < 2; k++) {
          void *hh = k ? hn : he;
          if (!hh)
            continue;
          char kwhy[160] = "";
          int32_t *o = run_kernel(hh, c, &b.op, bufs, kwhy, sizeof kwhy);
          CHECK_MSG(o != NULL, "%s", kwhy);
          for (int i = 0; i < 19 * 35; i++)
            CHECK_MSG((int64_t)o[i] == 255LL * wv[w] * 1031,
                      "%s config %d %s element %d: %d",
                      hws[h] ? hws[h] : "here", c, k ? "native" : "emulated", i,
                      o[i]);
          free(o);
        }
    }
    heron__op_free_buffers(&b.op, bufs);
    heron__rmtree(dir);
    kc_cpu_free(&b);
  }
  if (skipped)
    SKIP("emulated kernels exact; %d native variants not run (this CPU lacks "
         "their instructions)",
         skipped);
}

/* The Tensorize rule names the variant the description's flags select. */
TEST(the_description_selects_the_dot_product_variant) {
  static const struct {
    const char *hw;
    int dtype, dot, group;
  } want[] = {
      {"cpu-zen4", HERON__INT8, HERON__DOT_VNNI, 4},
      {"cpu-avx512", HERON__INT8, HERON__DOT_VNNI, 4},
      {"cpu-avx2", HERON__INT8, HERON__DOT_I8_AVX2, 2},
      {"cpu-zen4", HERON__BF16, HERON__DOT_BF16, 2},
      {"cpu-avx512", HERON__BF16, HERON__DOT_BF16_AVX2, 2},
      {"cpu-avx2", HERON__BF16, HERON__DOT_BF16_AVX2, 2},
      {"cpu-zen4", HERON__FP32, HERON__DOT_NONE, 0},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    heron__op op;
    heron__hw desc;
    heron__template *t = NULL;
    heron_space *sp = NULL;
    heron_error err = {0};
    heron__hw_detect_cpu(&desc);
    CHECK_OK(heron__hw_load(want[i].hw, &desc, &err), &err);
    CHECK_OK(heron__op_build("gemm", (int64_t[]){64, 64, 64}, 3, want[i].dtype,
                             &op, &err),
             &err);
    CHECK_OK(heron__template_build(&op, &desc, "cpu", &t, &sp, &err), &err);
    CHECK_EQ(heron__cpu_sched_of(t)->dot, want[i].dot);
    if (want[i].dot)
      CHECK_EQ(heron__cpu_sched_of(t)->dot_group, want[i].group);
    heron__template_free(t);
    heron__space_free(sp);
  }
  /* AVX-VNNI without AVX-512 (Alder Lake): the VEX form at vec 8. */
  heron__op op;
  heron__hw desc;
  heron__template *t = NULL;
  heron_space *sp = NULL;
  heron_error err = {0};
  heron__hw_detect_cpu(&desc);
  CHECK_OK(heron__hw_load("cpu-avx2", &desc, &err), &err);
  desc.has_avx_vnni = 1;
  CHECK_OK(heron__op_build("gemm", (int64_t[]){64, 64, 64}, 3, HERON__INT8, &op,
                           &err),
           &err);
  CHECK_OK(heron__template_build(&op, &desc, "cpu", &t, &sp, &err), &err);
  CHECK_EQ(heron__cpu_sched_of(t)->dot, HERON__DOT_AVX_VNNI);
  CHECK_STR_CONTAINS(heron__template_cflags(t), "-mavxvnni");
  heron__template_free(t);
  heron__space_free(sp);
}

/* HERON_CPU_ISA's levels clear the dot-product flags above them, and the
 * int8 and bf16 kernels of a description name what they need. */
TEST(isa_cap_clears_dot_product_flags_and_lacks_names_them) {
  heron__hw hw;
  setenv("HERON_CPU_ISA", "avx2", 1);
  heron__hw_detect_cpu(&hw);
  CHECK_EQ(hw.has_vnni + hw.has_avx_vnni + hw.has_avx512_bf16 +
               hw.has_amx_tile + hw.has_amx_int8 + hw.has_amx_bf16,
           0);
  setenv("HERON_CPU_ISA", "avx512", 1);
  heron__hw_detect_cpu(&hw);
  CHECK_EQ(hw.has_amx_tile + hw.has_amx_int8 + hw.has_amx_bf16, 0);
  unsetenv("HERON_CPU_ISA");
  heron__hw zen4, here;
  heron_error err = {0};
  heron__hw_detect_cpu(&zen4);
  heron__hw_detect_cpu(&here);
  CHECK_OK(heron__hw_load("cpu-zen4", &zen4, &err), &err);
  char missing[128];
  int l8 = heron__hw_cpu_lacks_for(&zen4, HERON__INT8, missing, sizeof missing);
  CHECK_EQ(l8, !(here.has_avx512 && here.has_vnni));
  if (l8)
    CHECK(strstr(missing, here.has_avx512 ? "avx512vnni" : "avx512f"));
  int lb = heron__hw_cpu_lacks_for(&zen4, HERON__BF16, missing, sizeof missing);
  CHECK_EQ(lb, !(here.has_avx512 && here.has_avx512_bf16));
  /* fp32 kernels of the same description need no dot-product extension. */
  CHECK_EQ(heron__hw_cpu_lacks_for(&zen4, HERON__FP32, NULL, 0),
           !here.has_avx512);
}

/* ---- weights packed ahead of the calls (prepack) ----------------------- */

/* Every op of the table with its weights prepacked (gemm's and bmm's B,
 * gemv's A, the convolutions' weight) in dtype on description hw: each
 * kernel reads the copy its own heron_prepack made, emulated against the
 * reference (int8 exactly) and natively against the emulation bit for bit
 * where this CPU has the instructions; SKIPs the rest visibly.  Some
 * configs of the table must number several blocks (level-0 tiles of the
 * weights' axes or reduction-outer steps), so the copy's offsets are
 * tested, not only one block's layout. */
static void prepacked_ops(int dtype, const char *hw) {
  int ncfg = HERON_TEST_SHARE(12, 4);
  int skipped = 0, blocks = 0;
  char why[512], last[512] = "";
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int native = 0;
    int bad = dot_case(&cases[i], dtype, hw, i == 3 ? HERON__EPI_BIAS : 0, 1,
                       ncfg, 31 + i, &native, why, sizeof why);
    CHECK_MSG(!bad, "%s", why);
    if (bad)
      return;
    printf("%s\n", why);
    const char *b = strstr(why, "prepacked (");
    blocks += b ? atoi(b + strlen("prepacked (")) : 0;
    skipped += !native;
    snprintf(last, sizeof last, "%s", why);
  }
  CHECK_MSG(blocks > 0, "no config prepacked more than one block");
  if (skipped)
    SKIP("all emulated prepacked kernels matched the reference; the native "
         "runs of %d ops were skipped (%s)",
         skipped, last);
}

TEST(int8_prepacked_weights_match_the_reference_on_this_machine) {
  prepacked_ops(HERON__INT8, NULL);
}

TEST(int8_vnni_prepacked_weights_match_emulated_and_reference) {
  prepacked_ops(HERON__INT8, "cpu-zen4");
}

TEST(int8_avx2_prepacked_weights_match_emulated_and_reference) {
  prepacked_ops(HERON__INT8, "cpu-avx2");
}

TEST(bf16_prepacked_weights_match_the_reference_on_this_machine) {
  prepacked_ops(HERON__BF16, NULL);
}

TEST(bf16_avx512_prepacked_weights_match_emulated_and_reference) {
  prepacked_ops(HERON__BF16, "cpu-zen4");
}

TEST(bf16_avx2_prepacked_weights_match_emulated_and_reference) {
  prepacked_ops(HERON__BF16, "cpu-avx2");
}

/* int8 and bf16 kernels prepack only the weights: the activations' pack
 * (s16 pairs in the AVX2 int8 form) stays in the call, and asking for it
 * is refused with the reason, naming both inputs. */
/* The region pack is chosen where it packs fewer elements within the
 * padded-work bound: the convolutions with whole groups of input channels
 * (the last four cases) in some configs (not where a short channel tile
 * pads past the bound or a small thread tile makes the region larger than
 * the rows), never the matrix ops (the same rows either way) or the
 * transposed convolution at stride 2 (a divisor in its index). */
TEST(convolutions_with_whole_channel_groups_pack_activations_as_regions) {
  size_t ncase = sizeof cases / sizeof cases[0];
  for (int dt = 0; dt < 2; dt++)
    for (size_t i = 0; i < ncase; i++) {
      int dtype = dt ? HERON__BF16 : HERON__INT8;
      kc_cpu b;
      heron_error err = {0};
      CHECK_OK(case_template(&cases[i], dtype, NULL, 0, 0, &b, &err), &err);
      heron_rng rng;
      heron_rng_seed(&rng, 5 + i);
      int64_t *cfg = malloc((size_t)heron_space_nvars(b.sp) * sizeof *cfg);
      int regions = 0, n = 20;
      for (int c = 0; c < n; c++) {
        heron__buf src = {0};
        CHECK_OK(heron_space_sample(b.sp, &rng, cfg, &err), &err);
        CHECK_OK(heron__codegen(b.t, b.sp, cfg, &src, &err), &err);
        regions += packs_region(src.data);
        heron__buf_free(&src);
      }
      free(cfg);
      const char *o = cases[i].op;
      if (i + 4 >= ncase)
        CHECK_MSG(regions > 0, "%s %s: %d of %d configs packed regions",
                  cases[i].op, heron__dtype_name(dtype), regions, n);
      else if (!strcmp(o, "gemm") || !strcmp(o, "bmm") || !strcmp(o, "gemv") ||
               !strcmp(o, "t2d"))
        CHECK_MSG(regions == 0, "%s %s: %d of %d configs packed regions",
                  cases[i].op, heron__dtype_name(dtype), regions, n);
      kc_cpu_free(&b);
    }
}

TEST(int8_and_bf16_templates_refuse_prepacked_activations_with_a_reason) {
  static const struct {
    const char *op, *names;
    int dtype, n, ok;
    int64_t shape[10];
  } want[] = {
      {"gemm", "A", HERON__INT8, 3, 0, {64, 64, 64}},
      {"gemm", "A,B", HERON__BF16, 3, 0, {64, 64, 64}},
      {"gemv", "x", HERON__INT8, 2, 0, {64, 64}},
      {"c2d", "data", HERON__BF16, 7, 0, {1, 8, 8, 4, 16, 3, 3}},
      {"gemm", "B", HERON__INT8, 3, 1, {64, 64, 64}},
      {"gemv", "A", HERON__BF16, 2, 1, {64, 64}},
      {"c2d", "weight", HERON__INT8, 7, 1, {1, 8, 8, 4, 16, 3, 3}},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    heron__op op;
    heron__hw hw;
    heron__template *t = NULL;
    heron_space *sp = NULL;
    heron_error err = {0};
    heron__hw_detect_cpu(&hw);
    CHECK_OK(heron__op_build(want[i].op, want[i].shape, want[i].n,
                             want[i].dtype, &op, &err),
             &err);
    CHECK_OK(heron__op_set_prepack(&op, want[i].names, &err), &err);
    int rc = heron__template_build(&op, &hw, "cpu", &t, &sp, &err);
    if (want[i].ok) {
      CHECK_OK(rc, &err);
    } else {
      CHECK_EQ(rc, HERON_EUNSUPPORTED);
      CHECK_STR_CONTAINS(err.text, "only the weights");
      CHECK_STR_CONTAINS(err.text, op.in[op.act_input].name);
    }
    heron__template_free(t);
    heron__space_free(sp);
  }
}
