/* tests/targets/cuda/fake_libcuda_partial.c - a "driver" that exports cuInit
 * and nothing else, to check that loading names the first missing entry
 * point instead of crashing when it would be called. */
#define EXPORT __attribute__((visibility("default")))

EXPORT int cuInit(unsigned flags) {
  (void)flags;
  return 0;
}

EXPORT int cuDriverGetVersion(int *v) {
  *v = 13000;
  return 0;
}
