/* core/util/rng.c - xoshiro256** seeded through splitmix64. */
#include <math.h>

#include "heron/rng.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

HERON_API void heron_rng_seed(heron_rng *rng, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    rng->s[i] = splitmix64(&x);
}

HERON_API uint64_t heron_rng_next(heron_rng *rng) {
  uint64_t *s = rng->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

HERON_API uint64_t heron_rng_below(heron_rng *rng, uint64_t n) {
  if (n == 0)
    return 0;
  /* Rejection keeps the result unbiased for any n. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do
    r = heron_rng_next(rng);
  while (r >= limit);
  return r % n;
}

HERON_API double heron_rng_uniform(heron_rng *rng) {
  return (double)(heron_rng_next(rng) >> 11) * 0x1.0p-53;
}

HERON_API double heron_rng_normal(heron_rng *rng) {
  /* Box-Muller; 1 - u keeps the logarithm finite. */
  double u = 1.0 - heron_rng_uniform(rng), v = heron_rng_uniform(rng);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}
