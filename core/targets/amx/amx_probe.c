/* core/targets/amx/amx_probe.c - whether this machine can run AMX kernels
 * natively, and if not, exactly why.
 *
 * Three things must hold: the CPU has the instructions (CPUID leaf 7,
 * sub-leaf 0, EDX: AMX-BF16 bit 22, AMX-TILE bit 24, AMX-INT8 bit 25), the
 * OS enables their state in XCR0 (bits 17 XTILECFG and 18 XTILEDATA, read
 * with XGETBV, which needs CPUID.1:ECX.OSXSAVE), and Linux grants the
 * process the tile data state on request (arch_prctl(ARCH_REQ_XCOMP_PERM,
 * XFEATURE_XTILEDATA), Linux 5.16 and later; without the grant the first
 * tile instruction raises SIGILL).  The request is made in a forked child,
 * so probing changes nothing in the caller; the kernels make it again
 * themselves (the prelude's heron_amx_permit) before their first tile
 * instruction.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/targets/amx/amx_template.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

#define ARCH_GET_XCOMP_PERM 0x1022
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

#if HAVE_X86
/* XCR0, or 0 when the OS has not enabled XSAVE (XGETBV would fault). */
static unsigned long long read_xcr0(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))
    return 0;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (unsigned long long)hi << 32 | lo;
}
#endif

/* Asks for the tile data permission in a child; returns 0 when granted,
 * else the errno the child saw (ENOSYS when the child could not run). */
static int request_in_child(void) {
  int fds[2];
  if (pipe(fds) != 0)
    return errno;
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return e;
  }
  if (pid == 0) {
    close(fds[0]);
    int e = 0;
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0)
      e = errno;
    else {
      /* Granted: the permitted features must now include tile data. */
      unsigned long long bits = 0;
      if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &bits) != 0 ||
          !(bits & (1ull << XFEATURE_XTILEDATA)))
        e = EPERM;
    }
    ssize_t w = write(fds[1], &e, sizeof e);
    (void)w;
    _exit(0);
  }
  close(fds[1]);
  int e = ENOSYS;
  ssize_t n;
  do
    n = read(fds[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t)sizeof e)
    e = ENOSYS;
  close(fds[0]);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  return e;
}

/* The HERON_CPU_ISA level below AMX that caps it, lowercased into
 * out[cap], or "" (no variable, "native", "amx", or a value no level has:
 * the cpu detection ignores those too). */
static void isa_cap(char *out, size_t cap) {
  static const char *const below[] = {"avx512", "avx512f", "avxvnni", "avx2",
                                      "sse"};
  const char *v = getenv("HERON_CPU_ISA");
  char low[16] = "";
  size_t n = 0;
  out[0] = '\0';
  for (; v && *v == ' '; v++)
    ;
  for (; v && *v && *v != ' ' && n + 1 < sizeof low; v++)
    low[n++] = (char)tolower((unsigned char)*v);
  low[n] = '\0';
  for (size_t i = 0; i < sizeof below / sizeof *below; i++)
    if (!strcmp(low, below[i]))
      snprintf(out, cap, "%s", low);
}

void heron__amx_probe(heron__amx_support *s) {
  memset(s, 0, sizeof *s);
  isa_cap(s->isa_cap, sizeof s->isa_cap);
  if (s->isa_cap[0])
    return;
#if HAVE_X86
  unsigned a, b, c, d;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    s->cpu_bf16 = (d >> 22) & 1;
    s->cpu_tile = (d >> 24) & 1;
    s->cpu_int8 = (d >> 25) & 1;
  }
  unsigned long long xcr0 = read_xcr0();
  s->os_xcr0 = ((xcr0 >> 17) & 3) == 3;
#endif
  /* The request means something only where the CPU has the state. */
  if (s->cpu_tile && s->os_xcr0) {
    s->perm_errno = request_in_child();
    s->os_perm = s->perm_errno == 0;
  }
}

int heron__amx_native_ok(const heron__amx_support *s, int kind, char *why,
                         size_t cap) {
  if (s->isa_cap[0]) {
    snprintf(why, cap, "AMX is capped off by HERON_CPU_ISA=%s", s->isa_cap);
    return 0;
  }
  const char *need = kind == HERON__AMX_BF16 ? "AMX-BF16" : "AMX-INT8";
  int has = kind == HERON__AMX_BF16 ? s->cpu_bf16 : s->cpu_int8;
  if (!s->cpu_tile || !has) {
    snprintf(why, cap, "this CPU lacks AMX (CPUID.7.0:EDX has no %s%s%s)",
             !s->cpu_tile ? "AMX-TILE" : "",
             !s->cpu_tile && !has ? " and no " : "", has ? "" : need);
    return 0;
  }
  if (!s->os_xcr0) {
    snprintf(why, cap,
             "the OS has not enabled the AMX state (XCR0 bits 17, 18)");
    return 0;
  }
  if (!s->os_perm) {
    snprintf(why, cap,
             "the kernel refused the AMX permission (arch_prctl "
             "ARCH_REQ_XCOMP_PERM: %s; Linux >= 5.16 needed)",
             strerror(s->perm_errno));
    return 0;
  }
  if (cap)
    why[0] = '\0';
  return 1;
}

int heron__amx_setup_run(const heron__template *t, int compile_only,
                         int emulate, heron_error *err) {
  /* Building needs nothing of this machine; an emulation runs anywhere. */
  if (compile_only || emulate)
    return HERON_OK;
  heron__amx_support s;
  heron__amx_probe(&s);
  char why[256];
  int kind = t && t->sched ? heron__amx_sched_of(t)->kind : HERON__AMX_INT8;
  if (heron__amx_native_ok(&s, kind, why, sizeof why))
    return HERON_OK;
  return heron_error_set(err, HERON_EUNSUPPORTED,
                         "target amx: %s; use --emulate", why);
}
