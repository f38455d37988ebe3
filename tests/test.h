/* tests/test.h - the tiny test harness every test file includes.
 *
 * A test file defines tests with TEST(name) { ... } and nothing else: this
 * header supplies main().  `./exe` runs every test of the file; `./exe name`
 * runs one.  CMake (heron_add_test_file in tests/CMakeLists.txt) registers
 * each TEST as its own ctest, named <file>.<test>, so a test's name says the
 * behaviour it protects.
 *
 * SKIP(fmt, ...) ends a test that cannot run here (a CPU without AVX-512,
 * a build without NVRTC), printing "SKIP <test>: <reason>".  A skip is never
 * a silent pass: the executable exits 77 when no test failed and at least
 * one skipped (1 when any failed), and CMake sets SKIP_RETURN_CODE 77 on
 * every test, so ctest lists it as "Skipped" with the reason in its log.
 * A test may check what does not need the missing thing first (generate and
 * compile, say) and SKIP only the rest; its reason should say what ran.
 */
#ifndef HERON_TEST_H
#define HERON_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heron/heron.h"

/* 1 in a build with AddressSanitizer (tools/test.sh's second stage, GCC's
 * or Clang's spelling), where slow tests may sample less. */
#if defined(__SANITIZE_ADDRESS__)
#define HERON_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HERON_TEST_SANITIZED 1
#endif
#endif
#ifndef HERON_TEST_SANITIZED
#define HERON_TEST_SANITIZED 0
#endif

/* How many of something slow a test samples: `release`, or `sanitized` in
 * the sanitizer build unless HERON_BUILD_CACHE is set (tools/test.sh sets
 * it for both stages: the generated kernels, built without the sanitizers,
 * then come from the build cache the Release stage filled, and the
 * sanitizer stage takes the generator and the harness through as many
 * configs as Release at the cost of running them). */
static inline int heron_test_build_cached(void) {
  const char *d = getenv("HERON_BUILD_CACHE");
  return d && *d;
}
#define HERON_TEST_SHARE(release, sanitized)                                   \
  (HERON_TEST_SANITIZED && !heron_test_build_cached() ? (sanitized) : (release))

typedef void (*heron_test_fn)(void);

/* The text of an error struct, or "" for NULL (a function, not a ?:, so
 * passing &err does not trip -Waddress). */
static inline const char *heron_test_errtext(const heron_error *e) {
  return e ? e->text : "";
}
struct heron_test_case {
  const char *name;
  heron_test_fn fn;
};

/* Reads fd to its end into err[cap] (what fits, NUL-terminated), so a
 * child writing to the pipe never blocks, then closes fd.  Tests that run
 * code in a child read its stderr with it. */
static inline void heron_test_drain(int fd, char *err, size_t cap) {
  size_t len = 0;
  char chunk[512];
  long got;
  while ((got = (long)read(fd, chunk, sizeof chunk)) > 0) {
    size_t keep = (size_t)got < cap - 1 - len ? (size_t)got : cap - 1 - len;
    memcpy(err + len, chunk, keep);
    len += keep;
  }
  err[len] = '\0';
  close(fd);
}

static struct heron_test_case heron_test_cases[256];
static int heron_test_ncases;
static int heron_test_failed;
static int heron_test_skipped;
static const char *heron_test_current;

/* SKIP's printing half: "SKIP <test>: <reason>" on stdout, next to the
 * harness's "ok" and "FAIL" lines. */
__attribute__((format(printf, 1, 2))) static inline void
heron_test_skip(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("SKIP %s: ", heron_test_current ? heron_test_current : "?");
  vprintf(fmt, ap);
  putchar('\n');
  fflush(stdout);
  va_end(ap);
  heron_test_skipped = 1;
}

#define TEST(fn_)                                                              \
  static void fn_(void);                                                       \
  __attribute__((constructor)) static void heron_test_reg_##fn_(void) {        \
    heron_test_cases[heron_test_ncases].name = #fn_;                           \
    heron_test_cases[heron_test_ncases++].fn = fn_;                            \
  }                                                                            \
  static void fn_(void)

/* Ends the current test (or the helper it is in, as CHECK does) as
 * skipped, with a printf-style reason. */
#define SKIP(...)                                                              \
  do {                                                                         \
    heron_test_skip(__VA_ARGS__);                                              \
    return;                                                                    \
  } while (0)

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      heron_test_failed = 1;                                                   \
      return;                                                                  \
    }                                                                          \
  } while (0)

#define CHECK_MSG(cond, ...)                                                   \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      heron_test_failed = 1;                                                   \
      return;                                                                  \
    }                                                                          \
  } while (0)

#define CHECK_EQ(a, b)                                                         \
  do {                                                                         \
    long long heron_a_ = (long long)(a), heron_b_ = (long long)(b);            \
    if (heron_a_ != heron_b_) {                                                \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n",      \
              __FILE__, __LINE__, #a, heron_a_, #b, heron_b_);                 \
      heron_test_failed = 1;                                                   \
      return;                                                                  \
    }                                                                          \
  } while (0)

/* Checks that a heron call returned HERON_OK, printing the error if not. */
#define CHECK_OK(expr, errp)                                                   \
  do {                                                                         \
    int heron_rc_ = (expr);                                                    \
    if (heron_rc_ != HERON_OK) {                                               \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__,       \
              #expr, heron_err_name(heron_rc_), heron_test_errtext(errp));     \
      heron_test_failed = 1;                                                   \
      return;                                                                  \
    }                                                                          \
  } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                        \
  CHECK_MSG((hay) && strstr((hay), (needle)), "\"%s\" lacks \"%s\"",           \
            (hay) ? (hay) : "(null)", (needle))

/* The exit status ctest reads: 1 when a test failed, else 77 (CMake's
 * SKIP_RETURN_CODE) when one skipped, else 0. */
#define HERON_TEST_EXIT_SKIP 77

int main(int argc, char **argv) {
  int ran = 0, failed = 0, skipped = 0;
  for (int i = 0; i < heron_test_ncases; i++) {
    if (argc > 1 && strcmp(argv[1], heron_test_cases[i].name) != 0)
      continue;
    heron_test_failed = 0;
    heron_test_skipped = 0;
    heron_test_current = heron_test_cases[i].name;
    heron_test_cases[i].fn();
    ran++;
    /* A test that failed before it skipped has failed. */
    if (heron_test_failed)
      failed++;
    else if (heron_test_skipped)
      skipped++;
    if (heron_test_failed || !heron_test_skipped)
      printf("%s %s\n", heron_test_failed ? "FAIL" : "ok",
             heron_test_cases[i].name);
  }
  if (argc > 1 && ran == 0) {
    fprintf(stderr, "no test named %s\n", argv[1]);
    return 2;
  }
  if (skipped && argc == 1)
    printf("%d of %d tests skipped\n", skipped, ran);
  return failed ? 1 : skipped ? HERON_TEST_EXIT_SKIP : 0;
}

#endif
