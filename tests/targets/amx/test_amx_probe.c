/* tests/targets/amx/test_amx_probe.c - what a native amx run needs, and the
 * exact reason it gives when something is missing.
 *
 * Every branch of heron__amx_native_ok is driven with a made-up probe
 * result (a CPU without the instructions, an OS without the tile state, a
 * kernel that refuses the permission), and each reason must name the
 * missing piece and fit, with "target amx: " before it and "; use
 * --emulate" after it, in an error's 160 characters; HERON_CPU_ISA below
 * AMX caps it off as the cpu detection does.  The real probe of
 * this machine must agree with /proc/cpuinfo's flags, and
 * heron__amx_setup_run must refuse a native run exactly when the probe
 * finds something missing (here: always, with the reason), while
 * compile-only and emulated runs always go ahead.
 */
#include "test.h"

#include <errno.h>

#include "amx_test_util.h"

/* The reason for `s`, checked to fit the message around it. */
static const char *reason(const heron__amx_support *s, int kind, char *buf,
                          size_t cap, int *ok) {
  *ok = heron__amx_native_ok(s, kind, buf, cap);
  return buf;
}

static int fits(const char *why) {
  return strlen("target amx: ") + strlen(why) + strlen("; use --emulate") <
         sizeof(((heron_error *)0)->text);
}

TEST(each_missing_piece_is_named) {
  char why[256];
  const char *w = why;
  int ok;
  heron__amx_support all = {1, 1, 1, 1, 1, 0, ""};
  reason(&all, HERON__AMX_INT8, why, sizeof why, &ok);
  CHECK(ok && why[0] == '\0');
  reason(&all, HERON__AMX_BF16, why, sizeof why, &ok);
  CHECK(ok);

  heron__amx_support none = {0};
  reason(&none, HERON__AMX_INT8, why, sizeof why, &ok);
  CHECK(!ok && fits(why));
  CHECK_STR_CONTAINS(w, "this CPU lacks AMX");
  CHECK_STR_CONTAINS(w, "no AMX-TILE and no AMX-INT8");

  /* Tiles and int8 but no bf16 products: bf16 kernels cannot run. */
  heron__amx_support no_bf16 = {1, 1, 0, 1, 1, 0, ""};
  reason(&no_bf16, HERON__AMX_INT8, why, sizeof why, &ok);
  CHECK(ok);
  reason(&no_bf16, HERON__AMX_BF16, why, sizeof why, &ok);
  CHECK(!ok && fits(why));
  CHECK_STR_CONTAINS(w, "has no AMX-BF16");

  heron__amx_support no_xcr0 = {1, 1, 1, 0, 0, 0, ""};
  reason(&no_xcr0, HERON__AMX_INT8, why, sizeof why, &ok);
  CHECK(!ok && fits(why));
  CHECK_STR_CONTAINS(w, "the OS has not enabled the AMX state (XCR0");

  heron__amx_support capped = {0, 0, 0, 0, 0, 0, "avx512"};
  reason(&capped, HERON__AMX_INT8, why, sizeof why, &ok);
  CHECK(!ok && fits(why));
  CHECK_STR_CONTAINS(w, "capped off by HERON_CPU_ISA=avx512");

  heron__amx_support refused = {1, 1, 1, 1, 0, EINVAL, ""};
  reason(&refused, HERON__AMX_BF16, why, sizeof why, &ok);
  CHECK(!ok && fits(why));
  CHECK_STR_CONTAINS(w, "the kernel refused the AMX permission");
  CHECK_STR_CONTAINS(w, "ARCH_REQ_XCOMP_PERM: Invalid argument");
  CHECK_STR_CONTAINS(w, "Linux >= 5.16");
}

/* Whether /proc/cpuinfo lists `flag` as a word; -1 when it cannot be
 * read. */
static int cpuinfo_has(const char *flag) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return -1;
  char line[8192];
  int has = 0;
  size_t n = strlen(flag);
  while (!has && fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) != 0)
      continue;
    for (char *p = strstr(line, flag); p && !has; p = strstr(p + 1, flag))
      has = (p == line || p[-1] == ' ') &&
            (p[n] == ' ' || p[n] == '\n' || p[n] == '\0');
  }
  fclose(f);
  return has;
}

TEST(the_probe_agrees_with_cpuinfo_and_gates_native_runs) {
  heron__amx_support s;
  unsetenv("HERON_CPU_ISA");
  heron__amx_probe(&s);
  int tile = cpuinfo_has("amx_tile"), int8 = cpuinfo_has("amx_int8");
  int bf16 = cpuinfo_has("amx_bf16");
  /* Linux lists the flags only when the OS supports the state too. */
  if (tile >= 0 && tile)
    CHECK(s.cpu_tile && s.os_xcr0);
  if (int8 >= 0 && int8)
    CHECK(s.cpu_int8);
  if (bf16 >= 0 && bf16)
    CHECK(s.cpu_bf16);
  heron_error err = {0};
  char why[256];
  const char *w = why, *e = err.text;
  int native = heron__amx_native_ok(&s, HERON__AMX_INT8, why, sizeof why);
  int rc = heron__amx_setup_run(NULL, 0, 0, &err);
  CHECK_EQ(rc == HERON_OK, native);
  if (!native) {
    CHECK_EQ(rc, HERON_EUNSUPPORTED);
    CHECK_STR_CONTAINS(e, "target amx: ");
    CHECK_STR_CONTAINS(e, w);
    CHECK_STR_CONTAINS(e, "; use --emulate");
  }
  /* Building and emulating need nothing of this machine. */
  CHECK_OK(heron__amx_setup_run(NULL, 1, 0, &err), &err);
  CHECK_OK(heron__amx_setup_run(NULL, 0, 1, &err), &err);
}

TEST(heron_cpu_isa_below_amx_caps_it_off) {
  setenv("HERON_CPU_ISA", " AVX2", 1);
  heron__amx_support s;
  heron__amx_probe(&s);
  char why[256];
  const char *w = why;
  CHECK(!heron__amx_native_ok(&s, HERON__AMX_INT8, why, sizeof why));
  CHECK_STR_CONTAINS(w, "capped off by HERON_CPU_ISA=avx2");
  /* "amx", "native" and unknown values cap nothing. */
  setenv("HERON_CPU_ISA", "amx", 1);
  heron__amx_probe(&s);
  CHECK(s.isa_cap[0] == '\0');
  setenv("HERON_CPU_ISA", "tpu", 1);
  heron__amx_probe(&s);
  CHECK(s.isa_cap[0] == '\0');
  unsetenv("HERON_CPU_ISA");
}
