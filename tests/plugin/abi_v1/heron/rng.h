/* heron/rng.h - the seeded random number generator shared by the engine and
 * plugins.
 *
 * A heron_rng is a plain value (xoshiro256** state) that the owner keeps
 * wherever it likes; no function allocates.  The same seed gives the same
 * stream on every machine, which is what makes a tuning run with --seed
 * reproducible.  Not thread-safe: give each thread its own generator.
 */
#ifndef HERON_RNG_H
#define HERON_RNG_H

#include <stdint.h>

#include "heron/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct heron_rng {
  uint64_t s[4];
} heron_rng;

/* Initialises `rng` from `seed` (any value, 0 included). */
HERON_API void heron_rng_seed(heron_rng *rng, uint64_t seed);

/* The next 64 random bits. */
HERON_API uint64_t heron_rng_next(heron_rng *rng);

/* A uniform integer in [0, n); 0 when n is 0.  Unbiased (rejection). */
HERON_API uint64_t heron_rng_below(heron_rng *rng, uint64_t n);

/* A uniform double in [0, 1). */
HERON_API double heron_rng_uniform(heron_rng *rng);

/* A standard normal deviate (mean 0, variance 1). */
HERON_API double heron_rng_normal(heron_rng *rng);

#ifdef __cplusplus
}
#endif
#endif /* HERON_RNG_H */
