/* tests/targets/hw_isa_cap.c - HERON_CPU_ISA caps what detection finds (it
 * lowers, never raises, and an unknown value is ignored and named), and
 * heron__hw_cpu_lacks names the instructions a cpu description needs that
 * this machine - cap included - lacks.
 *
 * Every case sets HERON_CPU_ISA itself, so the file passes wherever it runs,
 * HERON_CPU_ISA=avx2 in the environment included. */
#include "core/targets/hw.h"
#include "test.h"

/* This CPU's own description (no cap). */
static heron__hw native(void) {
  heron__hw hw;
  unsetenv("HERON_CPU_ISA");
  heron__hw_detect_cpu(&hw);
  return hw;
}

/* The description detected under HERON_CPU_ISA=`cap`. */
static heron__hw capped(const char *cap) {
  heron__hw hw;
  setenv("HERON_CPU_ISA", cap, 1);
  heron__hw_detect_cpu(&hw);
  return hw;
}

/* A shipped description (configs/hw/<name>.json) over this machine; on
 * failure the target is left empty. */
static heron__hw described(const char *name) {
  heron__hw hw;
  heron__hw_detect_cpu(&hw);
  heron_error err = {0};
  if (heron__hw_load(name, &hw, &err) != HERON_OK) {
    fprintf(stderr, "%s: %s\n", name, err.text);
    hw.target[0] = '\0';
  }
  return hw;
}

TEST(avx2_cap_clears_avx512_and_vnni_and_keeps_the_rest) {
  heron__hw cpu = native(), hw = capped("avx2");
  unsetenv("HERON_CPU_ISA");
  CHECK_EQ(hw.has_avx512, 0);
  CHECK_EQ(hw.has_vnni, 0);
  CHECK_EQ(hw.has_avx2, cpu.has_avx2);
  CHECK_EQ(hw.has_fma, cpu.has_fma);
  CHECK_EQ(hw.vector_bytes, cpu.has_avx2 ? 32 : 16);
  CHECK_EQ(hw.vector_regs, 16);
  /* Caches and cores are the machine's. */
  CHECK_EQ(hw.cores, cpu.cores);
  CHECK_EQ(hw.l2_bytes, cpu.l2_bytes);
  CHECK_STR_CONTAINS(hw.name, cpu.has_avx2 ? "avx2" : "sse");
  if (cpu.has_avx512)
    CHECK_STR_CONTAINS(hw.name, "by HERON_CPU_ISA");
}

TEST(sse_cap_clears_avx2_and_fma_too) {
  heron__hw hw = capped("sse");
  unsetenv("HERON_CPU_ISA");
  CHECK_EQ(hw.has_avx512 + hw.has_vnni + hw.has_avx2 + hw.has_fma, 0);
  CHECK_EQ(hw.vector_bytes, 16);
  CHECK_EQ(hw.vector_regs, 16);
  CHECK_STR_CONTAINS(hw.name, "sse");
}

/* A cap above the CPU changes nothing: it cannot invent instructions.
 * "amx" is the top of the ladder, so it is above every CPU (an avx512 cap
 * is a real cap on an AMX Xeon, and lowered it there). */
TEST(cap_never_raises_what_the_cpu_has) {
  heron__hw cpu = native(), hw = capped("amx");
  unsetenv("HERON_CPU_ISA");
  CHECK_EQ(hw.has_avx512, cpu.has_avx512);
  CHECK_EQ(hw.has_vnni, cpu.has_vnni);
  CHECK_EQ(hw.has_avx2, cpu.has_avx2);
  CHECK_EQ(hw.has_fma, cpu.has_fma);
  CHECK_EQ(hw.vector_bytes, cpu.vector_bytes);
  CHECK(strstr(hw.name, "HERON_CPU_ISA") == NULL);
}

/* Case and surrounding blanks are forgiven; "native" and "" mean no cap. */
TEST(cap_value_ignores_case_and_blanks) {
  heron__hw a = capped("avx2"), b = capped("  AVX2\n"), c = capped("Sse");
  heron__hw n1 = capped("native"), n2 = capped(""), cpu = native();
  CHECK_EQ(b.has_avx512, a.has_avx512);
  CHECK_EQ(b.vector_bytes, a.vector_bytes);
  CHECK_EQ(c.has_avx2, 0);
  CHECK_EQ(n1.has_avx512, cpu.has_avx512);
  CHECK_EQ(n1.vector_bytes, cpu.vector_bytes);
  CHECK_EQ(n2.has_avx512, cpu.has_avx512);
  CHECK_EQ(n2.vector_bytes, cpu.vector_bytes);
}

/* A value that names no level is ignored, never fatal, and the name says
 * so, so that a mistyped cap is seen in the log instead of believed. */
TEST(unknown_cap_is_ignored_and_named) {
  static const char *const bad[] = {"avx1024", "avx2 sse", "x",
                                    "a-very-long-isa-name-indeed"};
  heron__hw cpu = native();
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    heron__hw hw = capped(bad[i]);
    unsetenv("HERON_CPU_ISA");
    CHECK_MSG(hw.has_avx512 == cpu.has_avx512 && hw.has_avx2 == cpu.has_avx2 &&
                  hw.vector_bytes == cpu.vector_bytes,
              "HERON_CPU_ISA='%s' changed the ISA", bad[i]);
    CHECK_STR_CONTAINS(hw.name, "HERON_CPU_ISA ignored");
    CHECK_STR_CONTAINS(hw.name, "this machine (");
  }
}

TEST(cpu_lacks_nothing_a_description_of_itself_needs) {
  static const char *const caps[] = {"native", "avx512", "avx2", "sse"};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
    heron__hw hw = capped(caps[i]);
    char missing[64] = "junk";
    int lacks = heron__hw_cpu_lacks(&hw, missing, sizeof missing);
    unsetenv("HERON_CPU_ISA");
    CHECK_MSG(!lacks, "HERON_CPU_ISA=%s: lacks '%s'", caps[i], missing);
    CHECK_EQ(missing[0], '\0');
  }
}

/* Under the sse cap every machine lacks the same features, so the names
 * and their order are checked exactly. */
TEST(cpu_lacks_names_every_missing_feature_under_the_sse_cap) {
  heron__hw avx512 = described("cpu-avx512"), avx2 = described("cpu-avx2");
  CHECK(avx512.target[0] && avx2.target[0]);
  char m512[64], m2[64];
  setenv("HERON_CPU_ISA", "sse", 1);
  int l512 = heron__hw_cpu_lacks(&avx512, m512, sizeof m512);
  int l2 = heron__hw_cpu_lacks(&avx2, m2, sizeof m2);
  unsetenv("HERON_CPU_ISA");
  CHECK_EQ(l512, 1);
  CHECK(!strcmp(m512, "avx512f, avx2, fma"));
  CHECK_EQ(l2, 1);
  CHECK(!strcmp(m2, "avx2, fma"));
}

/* The Zen 3 case: under the avx2 cap an AVX-512 description lacks avx512f
 * (and more only where the CPU has no AVX2 at all); an AVX2 one lacks
 * nothing on an AVX2 machine. */
TEST(cpu_lacks_avx512f_for_an_avx512_description_under_the_avx2_cap) {
  heron__hw cpu = native();
  heron__hw avx512 = described("cpu-avx512"), avx2 = described("cpu-avx2");
  CHECK(avx512.target[0] && avx2.target[0]);
  char m512[64], m2[64];
  setenv("HERON_CPU_ISA", "avx2", 1);
  int l512 = heron__hw_cpu_lacks(&avx512, m512, sizeof m512);
  int l2 = heron__hw_cpu_lacks(&avx2, m2, sizeof m2);
  unsetenv("HERON_CPU_ISA");
  CHECK_EQ(l512, 1);
  CHECK(!strncmp(m512, "avx512f", 7));
  if (cpu.has_avx2 && cpu.has_fma) {
    CHECK(!strcmp(m512, "avx512f"));
    CHECK_EQ(l2, 0);
    CHECK_EQ(m2[0], '\0');
  } else {
    CHECK_EQ(l2, 1);
  }
}

/* Without a cap the answer is the CPU's own. */
TEST(cpu_lacks_avx512f_exactly_where_the_cpu_has_none) {
  heron__hw cpu = native(), avx512 = described("cpu-avx512");
  CHECK(avx512.target[0]);
  char missing[64];
  CHECK_EQ(heron__hw_cpu_lacks(&avx512, missing, sizeof missing),
           !cpu.has_avx512 || !cpu.has_avx2 || !cpu.has_fma);
  CHECK_EQ(strstr(missing, "avx512f") != NULL, !cpu.has_avx512);
}

/* A GPU's description needs nothing of this CPU; a NULL description and a
 * NULL or short buffer are fine. */
TEST(cpu_lacks_nothing_for_cuda_null_and_truncates_safely) {
  heron__hw gpu = described("h100");
  CHECK(gpu.target[0]);
  char missing[8] = "junk";
  setenv("HERON_CPU_ISA", "sse", 1);
  CHECK_EQ(heron__hw_cpu_lacks(&gpu, missing, sizeof missing), 0);
  CHECK_EQ(missing[0], '\0');
  CHECK_EQ(heron__hw_cpu_lacks(NULL, missing, sizeof missing), 0);
  heron__hw avx512 = described("cpu-avx512");
  CHECK_EQ(heron__hw_cpu_lacks(&avx512, NULL, 0), 1);
  CHECK_EQ(heron__hw_cpu_lacks(&avx512, missing, 5), 1);
  unsetenv("HERON_CPU_ISA");
  CHECK(!strcmp(missing, "avx5"));
}
