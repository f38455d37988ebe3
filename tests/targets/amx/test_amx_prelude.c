/* tests/targets/amx/test_amx_prelude.c - the AMX prelude (core/targets/amx/
 * amx_prelude.c): its scalar emulation of the tile instructions against
 * this file's own reference (the Intel SDM's pseudocode, but for
 * TDPBF16PS's order of additions, which follows the hardware: see
 * reference()), the faults it raises where the hardware would, and, on a
 * machine with AMX, the native instructions against the emulation.
 *
 * A small shared object built from the prelude exports one function that
 * configures three tiles (C, A, B) of a given shape, loads them, runs one
 * dot product and stores C.  Random shapes inside the palette-1 limits and
 * random data (bf16 with denormals, infinities left out) go through it;
 * int8 must match exactly, bf16 bit for bit with the reference's order of
 * fp32 additions and its DAZ / FTZ rules.
 */
#include "test.h"

#include "amx_test_util.h"
#include "heron/rng.h"
#include "targets/kernel_check.h"

/* The test's kernels: one dot product on tiles 0 (C), 1 (A), 2 (B), and
 * the broken uses the emulation must refuse. */
static const char body[] =
    "static void cfg_of(unsigned char *cfg, int rows, int kq, int n) {\n"
    "  memset(cfg, 0, 64);\n"
    "  cfg[0] = 1;\n"
    "  cfg[16] = (unsigned char)(4 * n); cfg[48] = (unsigned char)rows;\n"
    "  cfg[18] = (unsigned char)(4 * kq); cfg[49] = (unsigned char)rows;\n"
    "  cfg[20] = (unsigned char)(4 * n); cfg[50] = (unsigned char)kq;\n"
    "}\n"
    "void tile_dp(int bf16, int rows, int kq, int n, const void *a, long sa,\n"
    "             const void *b, long sb, void *c, long sc) {\n"
    "  unsigned char cfg[64] __attribute__((aligned(64)));\n"
    "  heron_amx_permit();\n"
    "  cfg_of(cfg, rows, kq, n);\n"
    "  _tile_loadconfig(cfg);\n"
    "  _tile_loadd(0, c, sc);\n"
    "  _tile_loadd(1, a, sa);\n"
    "  _tile_loadd(2, b, sb);\n"
    "  if (bf16)\n"
    "    _tile_dpbf16ps(0, 1, 2);\n"
    "  else\n"
    "    _tile_dpbusd(0, 1, 2);\n"
    "  _tile_stored(0, c, sc);\n"
    "  _tile_release();\n"
    "}\n"
    "/* The assembler refuses some of these natively (tdpbusd with a tile\n"
    " * twice); they are for the emulation only. */\n"
    "#ifdef HERON_EMULATE_AMX\n"
    "static unsigned char mem[16 * 64];\n"
    "void bad_rows(void) { unsigned char c[64]; cfg_of(c, 17, 1, 1);\n"
    "  _tile_loadconfig(c); }\n"
    "void bad_colsb(void) { unsigned char c[64]; cfg_of(c, 4, 1, 17);\n"
    "  _tile_loadconfig(c); }\n"
    "void bad_palette(void) { unsigned char c[64]; cfg_of(c, 4, 1, 1);\n"
    "  c[0] = 2; _tile_loadconfig(c); }\n"
    "void bad_half_zero(void) { unsigned char c[64]; cfg_of(c, 4, 1, 1);\n"
    "  c[20] = 0; _tile_loadconfig(c); }\n"
    "void bad_reserved(void) { unsigned char c[64]; cfg_of(c, 4, 1, 1);\n"
    "  c[5] = 1; _tile_loadconfig(c); }\n"
    "void bad_no_config(void) { _tile_loadd(0, mem, 64); }\n"
    "void bad_unconfigured(void) { unsigned char c[64]; cfg_of(c, 4, 1, 1);\n"
    "  _tile_loadconfig(c); _tile_loadd(5, mem, 64); }\n"
    "void bad_c_rows(void) { unsigned char c[64]; cfg_of(c, 4, 1, 1);\n"
    "  c[48] = 3; _tile_loadconfig(c); _tile_dpbusd(0, 1, 2); }\n"
    "void bad_c_colsb(void) { unsigned char c[64]; cfg_of(c, 4, 1, 2);\n"
    "  c[20] = 4; _tile_loadconfig(c); _tile_dpbusd(0, 1, 2); }\n"
    "void bad_a_colsb(void) { unsigned char c[64]; cfg_of(c, 4, 2, 1);\n"
    "  c[50] = 1; _tile_loadconfig(c); _tile_dpbf16ps(0, 1, 2); }\n"
    "void bad_same_tile(void) { unsigned char c[64]; cfg_of(c, 4, 1, 1);\n"
    "  _tile_loadconfig(c); _tile_dpbusd(0, 1, 1); }\n"
    "void bad_multiple_of_4(void) { unsigned char c[64]; cfg_of(c, 4, 1, 1);\n"
    "  c[16] = 6; c[20] = 6; _tile_loadconfig(c); _tile_dpbusd(0, 1, 2); }\n"
    "#endif\n";

typedef void (*tile_dp_fn)(int, int, int, int, const void *, long, const void *,
                           long, void *, long);

/* Builds the kernels with `cflags` into dir/<stem>.so. */
static int build(const char *dir, const char *stem, const char *cflags,
                 char *so, size_t cap) {
  heron__buf b = {0};
  heron__buf_puts(&b, heron__amx_prelude());
  heron__buf_puts(&b, body);
  char *src = heron__buf_take(&b);
  int rc = src ? amx_build(dir, stem, &src, 1, cflags, so, cap) : -1;
  free(src);
  return rc;
}

/* ---- the reference ------------------------------------------------------- */

static float bits_f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t f_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* A bf16 value as fp32 with a denormal read as zero (DAZ). */
static float bf16_daz(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  if (((u >> 23) & 0xff) == 0)
    u &= 0x80000000u;
  return bits_f(u);
}

/* A denormal fp32 flushed to a zero of its sign (FTZ). */
static float ftz(float f) {
  uint32_t u = f_bits(f);
  if (((u >> 23) & 0xff) == 0)
    u &= 0x80000000u;
  return bits_f(u);
}

/* C += A x B on byte images laid out as the tiles are: A rows x (4 kq)
 * bytes, B kq rows x (4 n) bytes, C rows x n lanes. */
static void reference(int bf16, int rows, int kq, int n, const uint8_t *a,
                      long sa, const uint8_t *b, long sb, uint8_t *c, long sc) {
  for (int m = 0; m < rows; m++)
    for (int j = 0; j < n; j++) {
      uint8_t *cp = c + m * sc + 4 * j;
      if (!bf16) {
        int32_t v;
        memcpy(&v, cp, 4);
        int64_t s = v;
        for (int k = 0; k < kq; k++)
          for (int i = 0; i < 4; i++)
            s += (int64_t)a[m * sa + 4 * k + i] * (int8_t)b[k * sb + 4 * j + i];
        v = (int32_t)(uint32_t)(uint64_t)s;
        memcpy(cp, &v, 4);
        continue;
      }
      /* The even and the odd products summed apart (each from 0, in k's
       * order), those two sums added, and C added last: the order
       * Sapphire Rapids' TDPBF16PS adds in, bit for bit on its tiles.  The
       * SDM's pseudocode adds each product to C in turn; the tiles differ
       * from that in the last bit on about 9 of 10 of these random cases. */
      float v, sum[2] = {0, 0};
      memcpy(&v, cp, 4);
      for (int k = 0; k < kq; k++)
        for (int i = 0; i < 2; i++) {
          uint16_t x, y;
          memcpy(&x, a + m * sa + 4 * k + 2 * i, 2);
          memcpy(&y, b + k * sb + 4 * j + 2 * i, 2);
          sum[i] = ftz(sum[i] + bf16_daz(x) * bf16_daz(y));
        }
      v = ftz(v + ftz(sum[0] + sum[1]));
      memcpy(cp, &v, 4);
    }
}

/* ---- random cases ------------------------------------------------------- */

enum { SA = 80, SB = 72, SC = 96, GUARD = 0x5a };

typedef struct tcase {
  int bf16, rows, kq, n;
  uint8_t a[16 * SA], b[16 * SB], c[16 * SC];
} tcase;

static uint16_t random_bf16(heron_rng *r) {
  uint64_t x = heron_rng_next(r);
  /* One value in eight a denormal (exponent 0), the rest of moderate
   * magnitude: exponents 120..134 keep sums finite. */
  uint16_t sign = (uint16_t)((x >> 8 & 1) << 15);
  uint16_t man = (uint16_t)(x >> 16 & 0x7f);
  if ((x & 7) == 0)
    return sign | man;
  return sign | (uint16_t)((120 + (x >> 24) % 15) << 7) | man;
}

static void random_case(heron_rng *r, tcase *t, int bf16) {
  memset(t, GUARD, sizeof *t);
  t->bf16 = bf16;
  t->rows = 1 + (int)(heron_rng_next(r) % 16);
  t->kq = 1 + (int)(heron_rng_next(r) % 16);
  t->n = 1 + (int)(heron_rng_next(r) % 16);
  for (int m = 0; m < 16; m++)
    for (int i = 0; i < SA; i += 2) {
      uint16_t v = bf16 ? random_bf16(r) : (uint16_t)heron_rng_next(r);
      memcpy(t->a + m * SA + i, &v, 2);
    }
  for (int k = 0; k < 16; k++)
    for (int i = 0; i < SB; i += 2) {
      uint16_t v = bf16 ? random_bf16(r) : (uint16_t)heron_rng_next(r);
      memcpy(t->b + k * SB + i, &v, 2);
    }
  /* C's tile part starts from random sums; the bytes past it keep the
   * guard, which the store must leave alone. */
  for (int m = 0; m < t->rows; m++)
    for (int j = 0; j < t->n; j++) {
      uint32_t v =
          bf16 ? f_bits((float)((int)(heron_rng_next(r) % 2001) - 1000) / 64.0f)
               : (uint32_t)heron_rng_next(r);
      memcpy(t->c + m * SC + 4 * j, &v, 4);
    }
}

/* Runs `ncases` random cases of both kinds through fn; with `other`, also
 * through it and compares the two, else against the reference.  Returns
 * the number of mismatches (printing the first). */
static int run_cases(tile_dp_fn fn, tile_dp_fn other, int ncases,
                     uint64_t seed) {
  heron_rng r;
  heron_rng_seed(&r, seed);
  static tcase t, want, got2;
  int bad = 0;
  for (int i = 0; i < ncases; i++) {
    random_case(&r, &t, i % 2);
    want = t;
    if (other)
      other(t.bf16, t.rows, t.kq, t.n, want.a, SA, want.b, SB, want.c, SC);
    else
      reference(t.bf16, t.rows, t.kq, t.n, want.a, SA, want.b, SB, want.c, SC);
    got2 = t;
    fn(t.bf16, t.rows, t.kq, t.n, got2.a, SA, got2.b, SB, got2.c, SC);
    if (memcmp(got2.c, want.c, sizeof want.c) != 0) {
      if (!bad++) {
        for (size_t k = 0; k < sizeof want.c; k++)
          if (got2.c[k] != want.c[k]) {
            fprintf(stderr,
                    "case %d (%s, %d rows, %d K groups, %d lanes): byte %zu "
                    "(row %zu) is %#x, expected %#x\n",
                    i, t.bf16 ? "bf16" : "int8", t.rows, t.kq, t.n, k, k / SC,
                    got2.c[k], want.c[k]);
            break;
          }
      }
    }
  }
  return bad;
}

static tile_dp_fn load_dp(const char *so, void **h) {
  *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!*h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return NULL;
  }
  void *sym = dlsym(*h, "tile_dp");
  tile_dp_fn fn;
  memcpy(&fn, &sym, sizeof fn);
  return fn;
}

TEST(emulated_dot_products_follow_the_reference_bit_for_bit) {
  char dir[512], so[600];
  CHECK(kc_scratch(dir, sizeof dir, "amx") == 0);
  CHECK(build(dir, "emu", HERON__AMX_EMU_CFLAGS, so, sizeof so) == 0);
  void *h;
  tile_dp_fn fn = load_dp(so, &h);
  CHECK(fn);
  /* 2000 random shapes and data, half int8 (exact), half bf16 (bitwise,
   * with denormal inputs and cancelling sums). */
  int bad = run_cases(fn, NULL, 2000, 7);
  dlclose(h);
  heron__rmtree(dir);
  CHECK_EQ(bad, 0);
}

TEST(native_dot_products_match_the_emulation) {
  char why[256];
  char dir[512], so_emu[600], so_nat[600];
  CHECK(kc_scratch(dir, sizeof dir, "amx") == 0);
  /* The native build needs only the compiler: it is checked everywhere. */
  CHECK(build(dir, "nat", HERON__AMX_CFLAGS, so_nat, sizeof so_nat) == 0);
  CHECK(build(dir, "emu", HERON__AMX_EMU_CFLAGS, so_emu, sizeof so_emu) == 0);
  int bf16_ok = amx_native_here(HERON__AMX_BF16, why, sizeof why);
  if (!amx_native_here(HERON__AMX_INT8, why, sizeof why) || !bf16_ok) {
    heron__rmtree(dir);
    SKIP("native AMX kernels built but not run: %s", why);
  }
  void *he, *hn;
  tile_dp_fn emu = load_dp(so_emu, &he), nat = load_dp(so_nat, &hn);
  CHECK(emu && nat);
  int bad = run_cases(nat, emu, 2000, 11);
  dlclose(he);
  dlclose(hn);
  heron__rmtree(dir);
  CHECK_EQ(bad, 0);
}

/* ---- faults ------------------------------------------------------------- */

typedef struct fault {
  const char *fn;
  const char *expect;
} fault;

typedef struct child_arg {
  const char *so;
  const char *fn;
} child_arg;

static void call_in_child(void *p) {
  const child_arg *a = p;
  void *h = dlopen(a->so, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    _exit(3);
  void *sym = dlsym(h, a->fn);
  void (*fn)(void);
  memcpy(&fn, &sym, sizeof fn);
  if (!fn)
    _exit(3);
  fn();
}

TEST(emulation_faults_where_the_hardware_does) {
  static const fault cases[] = {
      {"bad_rows", "rows > 16 or colsb > 64"},
      {"bad_colsb", "rows > 16 or colsb > 64"},
      {"bad_palette", "palette other than 0 or 1"},
      {"bad_half_zero", "one of rows and colsb is zero"},
      {"bad_reserved", "nonzero start_row or reserved byte"},
      {"bad_no_config", "no tile configuration loaded"},
      {"bad_unconfigured", "tile not configured"},
      {"bad_c_rows", "C.rows != A.rows"},
      {"bad_c_colsb", "C.colsb != B.colsb"},
      {"bad_a_colsb", "A.colsb != 4 * B.rows"},
      {"bad_same_tile", "the three tiles are not different"},
      {"bad_multiple_of_4", "colsb not a multiple of 4"},
  };
  char dir[512], so[600], err[4096];
  CHECK(kc_scratch(dir, sizeof dir, "amx") == 0);
  CHECK(build(dir, "emu", HERON__AMX_EMU_CFLAGS, so, sizeof so) == 0);
  int ok = 1;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    child_arg a = {so, cases[i].fn};
    int st = amx_run_child(call_in_child, &a, err, sizeof err);
    int died = st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
    int said =
        strstr(err, "heron-emulate-amx:") && strstr(err, cases[i].expect);
    if (!died || !said) {
      fprintf(stderr,
              "%s: expected SIGABRT and \"heron-emulate-amx: ...%s...\"; "
              "got status %#x and stderr: %s\n",
              cases[i].fn, cases[i].expect, st, err);
      ok = 0;
    }
  }
  heron__rmtree(dir);
  CHECK(ok);
}
