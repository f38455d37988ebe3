/* tests/targets/amx/test_amx_kernels.c - generated AMX kernels compute their
 * op.
 *
 * For every op (all nine go through the GEMM view), in int8 (u8 x s8 -> s32,
 * checked exactly) and bf16 (-> fp32, checked with the op's tolerance), at
 * small and odd shapes (extents that no tile divides, M or N of 1, K not a
 * multiple of the VNNI group), random configs of the space are generated, built
 * with the emulation's flags (all configs of a shape in one compiler call, each
 * source renaming its heron_kernel) and run in a forked child on the op's
 * inputs; each output must match the op's reference (heron__op_reference_
 * full, epilogue included; where the shape packs the weights ahead of the
 * calls, through the kernel's own heron_prepack first); one source per shape is
 * also built with the native flags, so the native build is checked everywhere.
 * The native_* tests run fewer configs of every op natively, where the CPU has
 * AMX, and each native output must equal the emulated one (bitwise for int8,
 * within the op's tolerance for bf16) besides the reference; elsewhere they are
 * skipped with the reason.
 */
#include "test.h"

#include "amx_test_util.h"
#include "core/task/task.h"
#include "heron/rng.h"
#include "targets/kernel_check.h"

typedef void (*kernel_fn)(void *const *bufs);

/* Kernels generated so far whose A tiles load from A in place, and whose C
 * tiles accumulate in the output in place (the generator's header line
 * says which), so that the tests can insist both paths were checked. */
static int n_direct_a, n_direct_c;

typedef struct shape_case {
  int64_t dims[12];
  int n;
  const char *epilogue; /* NULL: none */
  const char *prepack;  /* NULL: none; else the weights, packed once */
} shape_case;

/* What the child runs: nk kernels of one or two shared objects. */
typedef struct run_arg {
  const heron__op *op;
  void *const *bufs;
  const void *ref;
  const char *emu_so, *nat_so; /* nat_so NULL: emulation only */
  int nk;
  const char *const *what; /* a line per kernel: its config */
} run_arg;

static kernel_fn kernel_at(void *h, int i) {
  void *sym = kc_sym(h, "heron_kernel", i);
  kernel_fn fn;
  memcpy(&fn, &sym, sizeof fn);
  return fn;
}

/* Calls kernel i of h on a->bufs, its prepacked inputs packed first by its
 * own heron_prepack as the measure worker does; 0 when that fails. */
static int call_kernel(void *h, int i, const heron__op *op, void *const *bufs) {
  void *kbufs[HERON__MAX_TENSORS + 2], *copies[HERON__MAX_TENSORS] = {0};
  memcpy(kbufs, bufs, sizeof(void *) * (size_t)heron__op_nbufs(op));
  void *pe = kc_sym(h, "heron_prepacked_elems", i);
  void *pk = kc_sym(h, "heron_prepack", i);
  int ok = 1;
  if (op->prepack && (!pe || !pk)) {
    fprintf(stderr, "kernel %d lacks heron_prepack for a prepacked input\n", i);
    return 0;
  }
  for (int t = 0; op->prepack && t < op->ninputs && ok; t++) {
    int64_t (*elems)(int);
    void (*pack)(int, const void *, void *);
    memcpy(&elems, &pe, sizeof elems);
    memcpy(&pack, &pk, sizeof pack);
    int64_t n = elems(t);
    if (n <= 0)
      continue;
    /* Elements of the input's own type (s8 or bf16 weights). */
    copies[t] = malloc((size_t)n *
                       (size_t)heron__dtype_size(heron__op_buf_dtype(op, t)));
    ok = copies[t] != NULL;
    if (ok) {
      pack(t, bufs[t], copies[t]);
      kbufs[t] = copies[t];
    }
  }
  if (ok)
    kernel_at(h, i)(kbufs);
  for (int t = 0; t < HERON__MAX_TENSORS; t++)
    free(copies[t]);
  return ok;
}

/* In the child: every kernel against the reference, and a native one
 * against its emulation; exits 1 after printing the first failures. */
static void run_kernels(void *p) {
  const run_arg *a = p;
  const heron__op *op = a->op;
  void *he = dlopen(a->emu_so, RTLD_NOW | RTLD_LOCAL);
  void *hn = a->nat_so ? dlopen(a->nat_so, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!he || (a->nat_so && !hn)) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    _exit(3);
  }
  void *out = a->bufs[op->ninputs];
  size_t bytes = (size_t)heron__tensor_elems(&op->out) *
                 (size_t)heron__dtype_size(op->out_dtype);
  void *emu_out = malloc(bytes);
  int bad = 0;
  for (int i = 0; i < a->nk; i++) {
    kernel_fn fn = kernel_at(he, i);
    if (!fn)
      _exit(3);
    memset(out, 0xff, bytes);
    if (!call_kernel(he, i, op, a->bufs))
      _exit(3);
    double err = 0;
    int64_t at = -1;
    if (!heron__op_check(op, out, a->ref, &err, &at)) {
      if (bad++ < 3)
        fprintf(stderr,
                "emulated kernel %d (%s): element %lld is %g, expected %g "
                "(max error %g)\n",
                i, a->what[i], (long long)at,
                heron__elem_get(out, op->out_dtype, at < 0 ? 0 : at),
                heron__elem_get(a->ref, op->out_dtype, at < 0 ? 0 : at), err);
      continue;
    }
    if (!hn)
      continue;
    memcpy(emu_out, out, bytes);
    memset(out, 0xff, bytes);
    if (!call_kernel(hn, i, op, a->bufs))
      _exit(3);
    int same = heron__op_exact(op)
                   ? !memcmp(out, emu_out, bytes)
                   : heron__op_check(op, out, emu_out, &err, &at);
    if (!same && bad++ < 3)
      fprintf(stderr, "native kernel %d (%s) differs from its emulation\n", i,
              a->what[i]);
  }
  free(emu_out);
  _exit(bad ? 1 : 0);
}

/* Generates up to `want` distinct configs of the task, builds them and
 * runs them; returns the number of kernels checked, or -1 on a failure. */
static int check_shape(const char *opname, const char *dtype,
                       const shape_case *sc, int want, uint64_t seed,
                       int native) {
  heron_task_spec spec = {.op = opname,
                          .shape = sc->dims,
                          .nshape = sc->n,
                          .dtype = dtype,
                          .target = "amx",
                          .epilogue = sc->epilogue,
                          .prepack = sc->prepack};
  heron_task *t = NULL;
  heron_error err = {0};
  if (heron_task_create(&spec, &t, &err) != HERON_OK) {
    fprintf(stderr, "task %s %s: %s\n", opname, dtype, err.text);
    return -1;
  }
  const heron_space *sp = heron_task_space(t);
  int nv = heron_space_nvars(sp);
  int64_t *cfg = calloc((size_t)nv, sizeof *cfg);
  char(*keys)[17] = calloc((size_t)want, sizeof *keys);
  char **srcs = calloc((size_t)want, sizeof *srcs);
  char **what = calloc((size_t)want, sizeof *what);
  heron_rng rng;
  heron_rng_seed(&rng, seed);
  int nk = 0, rc = cfg && keys && srcs && what ? 0 : -1;
  for (int tries = 0; !rc && nk < want && tries < 20 * want; tries++) {
    char key[17];
    if (heron_space_sample(sp, &rng, cfg, &err) != HERON_OK ||
        heron_space_key(sp, cfg, key, sizeof key) != HERON_OK) {
      rc = -1;
      break;
    }
    int dup = 0;
    for (int i = 0; i < nk && !dup; i++)
      dup = !strcmp(keys[i], key);
    if (dup)
      continue;
    char *src = NULL;
    if (heron_task_source(t, cfg, &src, &err) != HERON_OK) {
      fprintf(stderr, "source: %s\n", err.text);
      rc = -1;
      break;
    }
    n_direct_a += strstr(src, "A tiles load from A in place") != NULL;
    n_direct_c +=
        strstr(src, "C tiles accumulate in the output in place") != NULL;
    heron__buf b = {0}, w = {0};
    kc_append_renamed(&b, nk, src);
    heron_free(src);
    for (int k = 0; k < heron_space_nknobs(sp); k++) {
      int v = heron_space_knob(sp, k);
      heron__buf_printf(&w, "%s%s=%lld", k ? " " : "",
                        heron_space_var_name(sp, v), (long long)cfg[v]);
    }
    memcpy(keys[nk], key, sizeof key);
    srcs[nk] = heron__buf_take(&b);
    what[nk++] = heron__buf_take(&w);
  }
  char dir[512], emu_so[600], nat_so[600];
  if (!rc && kc_scratch(dir, sizeof dir, "amx") != 0)
    rc = -1;
  int have_dir = !rc;
  if (!rc)
    rc = amx_build(dir, "emu", srcs, nk, HERON__AMX_EMU_CFLAGS, emu_so,
                   sizeof emu_so);
  const heron__op *op = &t->op;
  /* The native build needs only the compiler: without a native run one
   * source per shape is built to show it compiles. */
  if (!rc)
    rc = amx_build(dir, "nat", srcs, native ? nk : 1, HERON__AMX_CFLAGS, nat_so,
                   sizeof nat_so);
  void *bufs[HERON__MAX_TENSORS + 2] = {0}, *ref = NULL;
  if (!rc && heron__op_alloc_buffers(op, bufs, &err) != HERON_OK)
    rc = -1;
  if (!rc) {
    size_t bytes = (size_t)heron__tensor_elems(&op->out) *
                   (size_t)heron__dtype_size(op->out_dtype);
    heron__op_fill_inputs(op, bufs, seed);
    heron__op_reference_full(op, bufs);
    ref = malloc(bytes);
    if (ref)
      memcpy(ref, bufs[op->ninputs], bytes);
    else
      rc = -1;
  }
  if (!rc) {
    run_arg a = {op,
                 bufs,
                 ref,
                 emu_so,
                 native ? nat_so : NULL,
                 nk,
                 (const char *const *)what};
    char log[8192];
    int st = amx_run_child(run_kernels, &a, log, sizeof log);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "%s %s %s: status %#x\n%s", opname, dtype, t->key, st,
              log);
      rc = -1;
    }
  }
  if (bufs[0])
    heron__op_free_buffers(op, bufs);
  free(ref);
  for (int i = 0; i < nk; i++) {
    free(srcs[i]);
    free(what[i]);
  }
  free(srcs);
  free(what);
  free(keys);
  free(cfg);
  if (have_dir)
    heron__rmtree(dir);
  heron_task_free(t);
  return rc ? -1 : nk;
}

/* `total` configs spread over the shapes, for one op and dtype; run
 * natively too when `native`.  Returns the number checked, or -1. */
static int check_op_n(const char *op, const char *dtype,
                      const shape_case *shapes, int nshapes, int total,
                      int native) {
  /* A fifth under the sanitizers, unless the build cache holds the
   * Release stage's kernels (HERON_TEST_SHARE). */
  total = HERON_TEST_SHARE(total, (total + 4) / 5);
  /* Every shape gets at least one config: a shape asked for none built an
   * empty program ("cc: no input files"), as the sanitizer build's fifth
   * of 8 native configs over GEMM's 3 shapes did on a machine with AMX. */
  if (total < nshapes)
    total = nshapes;
  int checked = 0;
  for (int s = 0; s < nshapes; s++) {
    int want = total / nshapes + (s < total % nshapes);
    int n = check_shape(op, dtype, &shapes[s], want, 100 + (uint64_t)s, native);
    if (n < 0) {
      fprintf(stderr, "%s %s: shape %d failed\n", op, dtype, s);
      return -1;
    }
    checked += n;
  }
  /* A small space may hold fewer configs than asked; most must be there. */
  if (checked < total / 2) {
    fprintf(stderr, "%s %s: only %d of %d configs\n", op, dtype, checked,
            total);
    return -1;
  }
  return checked;
}

static void check_op(const char *op, const char *dtype,
                     const shape_case *shapes, int nshapes, int total) {
  CHECK(check_op_n(op, dtype, shapes, nshapes, total, 0) >= 0);
}

/* 32x64x128 and BMM's 2x32x16x64: blocks that tile the extents exactly,
 * where A's tiles load from A and the C tiles live in the output. */
static const shape_case gemm_shapes[] = {{{17, 33, 20}, 3, NULL, NULL},
                                         {{1, 64, 64}, 3, "bias,relu", NULL},
                                         {{40, 7, 129}, 3, NULL, "B"},
                                         {{32, 64, 128}, 3, NULL, NULL}};
static const shape_case bmm_shapes[] = {{{3, 17, 20, 33}, 4, NULL, NULL},
                                        {{2, 1, 31, 64}, 4, NULL, "B"},
                                        {{5, 9, 5, 7}, 4, "relu", NULL},
                                        {{2, 32, 16, 64}, 4, NULL, NULL}};
static const shape_case gemv_shapes[] = {{{33, 70}, 2, NULL, "A"},
                                         {{64, 5}, 2, "bias", NULL}};
static const shape_case scan_shapes[] = {{{2, 40, 24}, 3, NULL, NULL},
                                         {{3, 17, 9}, 3, NULL, NULL}};
/* Convolutions with padding (zero reads through the guarded packing),
 * stride and dilation; N C W / H / D order as the ops' --describe gives. */
static const shape_case c1d_shapes[] = {
    {{2, 19, 5, 7, 3, 1, 0, 1}, 8, NULL, NULL},
    {{1, 30, 4, 9, 5, 2, 2, 2}, 8, "bias", NULL}};
static const shape_case c2d_shapes[] = {
    {{1, 9, 7, 6, 10, 3, 3, 1, 1, 1}, 10, NULL, NULL},
    {{2, 8, 8, 3, 5, 2, 2, 2, 0, 1}, 10, "bias,relu", "weight"}};
static const shape_case c3d_shapes[] = {
    {{1, 4, 5, 5, 3, 4, 3, 3, 3, 1, 1, 1}, 12, NULL, NULL},
    {{1, 3, 6, 4, 2, 5, 2, 2, 2, 2, 0, 1}, 12, "bias", NULL}};
static const shape_case dil_shapes[] = {
    {{1, 9, 9, 3, 5, 3, 3, 1, 2, 2}, 10, NULL, NULL},
    {{2, 7, 8, 4, 3, 2, 3, 2, 1, 3}, 10, "relu", NULL}};
static const shape_case t2d_shapes[] = {
    {{1, 5, 5, 4, 8, 3, 3, 2, 1, 1, 1}, 11, NULL, NULL},
    {{1, 4, 6, 3, 5, 2, 3, 1, 0, 1, 0}, 11, "bias,relu", NULL}};

#define N(a) ((int)(sizeof a / sizeof a[0]))

/* As check_op, and some of the kernels must have taken both in-place
 * paths (A's tiles from A, C's tiles in the output). */
static void check_op_direct(const char *op, const char *dtype,
                            const shape_case *shapes, int nshapes, int total) {
  int a0 = n_direct_a, c0 = n_direct_c;
  check_op(op, dtype, shapes, nshapes, total);
  fprintf(stderr, "%s %s: %d kernels loaded A in place, %d kept C in place\n",
          op, dtype, n_direct_a - a0, n_direct_c - c0);
  CHECK(n_direct_a > a0);
  CHECK(n_direct_c > c0);
}

TEST(gemm_int8) {
  check_op_direct("gemm", "int8", gemm_shapes, N(gemm_shapes), 36);
}
TEST(gemm_bf16) {
  check_op_direct("gemm", "bf16", gemm_shapes, N(gemm_shapes), 36);
}
TEST(bmm_int8) {
  check_op_direct("bmm", "int8", bmm_shapes, N(bmm_shapes), 36);
}
TEST(bmm_bf16) {
  check_op_direct("bmm", "bf16", bmm_shapes, N(bmm_shapes), 36);
}
TEST(gemv_int8) { check_op("gemv", "int8", gemv_shapes, N(gemv_shapes), 16); }
TEST(gemv_bf16) { check_op("gemv", "bf16", gemv_shapes, N(gemv_shapes), 16); }
TEST(scan_int8) { check_op("scan", "int8", scan_shapes, N(scan_shapes), 16); }
TEST(scan_bf16) { check_op("scan", "bf16", scan_shapes, N(scan_shapes), 16); }
TEST(c1d_int8) { check_op("c1d", "int8", c1d_shapes, N(c1d_shapes), 16); }
TEST(c1d_bf16) { check_op("c1d", "bf16", c1d_shapes, N(c1d_shapes), 16); }
TEST(c2d_int8) { check_op("c2d", "int8", c2d_shapes, N(c2d_shapes), 16); }
TEST(c2d_bf16) { check_op("c2d", "bf16", c2d_shapes, N(c2d_shapes), 16); }
TEST(c3d_int8) { check_op("c3d", "int8", c3d_shapes, N(c3d_shapes), 16); }
TEST(c3d_bf16) { check_op("c3d", "bf16", c3d_shapes, N(c3d_shapes), 16); }
TEST(dil_int8) { check_op("dil", "int8", dil_shapes, N(dil_shapes), 16); }
TEST(dil_bf16) { check_op("dil", "bf16", dil_shapes, N(dil_shapes), 16); }
TEST(t2d_int8) { check_op("t2d", "int8", t2d_shapes, N(t2d_shapes), 16); }
TEST(t2d_bf16) { check_op("t2d", "bf16", t2d_shapes, N(t2d_shapes), 16); }

/* Natively, 4 configs of every op and shape against the reference and
 * against their emulation (8 until 2026-11-28: the emulated tests above
 * check the configs' index arithmetic by the dozen; these check that the
 * emulation is the hardware, which a few configs of each op show); where
 * the CPU or the OS lacks AMX, skipped with the reason (the emulated tests
 * above still built one native kernel per shape). */
#define NATIVE_CONFIGS 4
static void check_native(const char *dtype, int kind) {
  char why[256];
  if (!amx_native_here(kind, why, sizeof why))
    SKIP("native %s AMX kernels not run: %s", dtype, why);
  static const struct {
    const char *op;
    const shape_case *shapes;
    int n;
  } ops[] = {{"gemm", gemm_shapes, N(gemm_shapes)},
             {"bmm", bmm_shapes, N(bmm_shapes)},
             {"gemv", gemv_shapes, N(gemv_shapes)},
             {"scan", scan_shapes, N(scan_shapes)},
             {"c1d", c1d_shapes, N(c1d_shapes)},
             {"c2d", c2d_shapes, N(c2d_shapes)},
             {"c3d", c3d_shapes, N(c3d_shapes)},
             {"dil", dil_shapes, N(dil_shapes)},
             {"t2d", t2d_shapes, N(t2d_shapes)}};
  for (int i = 0; i < N(ops); i++)
    CHECK(check_op_n(ops[i].op, dtype, ops[i].shapes, ops[i].n, NATIVE_CONFIGS,
                     1) >= 0);
}

TEST(native_int8_matches_the_emulation) {
  check_native("int8", HERON__AMX_INT8);
}
TEST(native_bf16_matches_the_emulation) {
  check_native("bf16", HERON__AMX_BF16);
}
