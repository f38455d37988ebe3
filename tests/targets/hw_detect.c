/* tests/targets/hw_detect.c - detecting this machine's CPU. */
#include "core/targets/hw.h"
#include "core/util/util.h"
#include "test.h"

/* The flags line of /proc/cpuinfo with a space on each side of every flag,
 * or "" where there is none. */
static void cpu_flags(char *buf, size_t cap) {
  buf[0] = '\0';
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;
  static char line[8192];
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "flags", 5)) {
      char *colon = strchr(line, ':');
      snprintf(buf, cap, " %s", colon ? colon + 1 : "");
      buf[strcspn(buf, "\n")] = ' ';
      break;
    }
  fclose(f);
}

TEST(detect_cpu_gives_sane_sizes_and_counts) {
  heron__hw hw;
  memset(&hw, 0x5a, sizeof hw);
  heron__hw_detect_cpu(&hw);
  CHECK(!strcmp(hw.target, "cpu"));
  CHECK_STR_CONTAINS(hw.name, "this machine (");
  CHECK_EQ(hw.cores, heron__ncores());
  CHECK(hw.l1_bytes >= 4096 && hw.l1_bytes <= (1 << 20));
  CHECK(hw.l2_bytes >= hw.l1_bytes && hw.l2_bytes <= (64LL << 20));
  CHECK(hw.l3_bytes >= hw.l2_bytes || hw.l3_bytes >= (1 << 20));
  CHECK(hw.vector_bytes == 16 || hw.vector_bytes == 32 ||
        hw.vector_bytes == 64);
  CHECK(hw.vector_regs == 16 || hw.vector_regs == 32);
  /* Detection leaves the cuda fields empty: they come only from JSON. */
  CHECK_EQ(hw.sm, 0);
  CHECK_EQ(hw.smem_per_block, 0);
  CHECK_EQ(hw.warp_size, 0);
}

TEST(detect_cpu_isa_flags_agree_with_proc_cpuinfo) {
  /* The CPU's own flags: HERON_CPU_ISA's cap is hw_isa_cap.c's business. */
  unsetenv("HERON_CPU_ISA");
  static char flags[8192];
  cpu_flags(flags, sizeof flags);
  heron__hw hw;
  heron__hw_detect_cpu(&hw);
  if (!flags[0]) {
    fprintf(stderr, "no flags in /proc/cpuinfo; checking consistency only\n");
  } else {
    CHECK_EQ(hw.has_avx2, strstr(flags, " avx2 ") != NULL);
    CHECK_EQ(hw.has_fma, strstr(flags, " fma ") != NULL);
    CHECK_EQ(hw.has_avx512, strstr(flags, " avx512f ") != NULL);
    CHECK_EQ(hw.has_vnni,
             hw.has_avx512 && strstr(flags, " avx512_vnni ") != NULL);
  }
  CHECK_EQ(hw.vector_bytes, hw.has_avx512 ? 64 : hw.has_avx2 ? 32 : 16);
  CHECK_EQ(hw.vector_regs, hw.has_avx512 ? 32 : 16);
  /* The name carries the highest level detected (amx above avx512: an AMX
   * Xeon's is "this machine (<model>, amx)"). */
  CHECK_STR_CONTAINS(hw.name, hw.has_amx_tile   ? ", amx"
                              : hw.has_avx512   ? ", avx512"
                              : hw.has_avx_vnni ? ", avxvnni"
                              : hw.has_avx2     ? ", avx2"
                                                : ", sse");
}
