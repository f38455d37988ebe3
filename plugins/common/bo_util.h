/* plugins/common/bo_util.h - the plumbing becbo and tsbo share around the
 * Gaussian process: config keys and a key set for deduplication, picking a
 * capped training set from the history, and a pool of unmeasured candidate
 * configs with their feature vectors.
 *
 * Everything here uses only the public plugin API (include/heron/).  Objects
 * are plain structs the caller keeps (on its stack or in its state), set up
 * by *_init and released by *_free (which accept a zeroed struct).  Functions
 * that allocate return 0 or -1 (out of memory); nothing here reports through
 * heron_error, the strategies turn -1 into HERON_ENOMEM with their name.
 */
#ifndef HERON_PLUGIN_COMMON_BO_UTIL_H
#define HERON_PLUGIN_COMMON_BO_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "heron/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Keys -----------------------------------------------------------------
 * A config's key is plugin_config_key's (plugin_util.h). */

/* An open-addressing set of 64-bit keys (0 is stored as 1, so two configs
 * whose hashes differ only there would collide: harmless for dedup). */
typedef struct bo_keyset {
  uint64_t *slot;
  size_t cap, n;
} bo_keyset;

int bo_keyset_init(bo_keyset *s, size_t expect);
/* 1 when added, 0 when already there, -1 when out of memory. */
int bo_keyset_add(bo_keyset *s, uint64_t key);
int bo_keyset_has(const bo_keyset *s, uint64_t key);
void bo_keyset_clear(bo_keyset *s);
void bo_keyset_free(bo_keyset *s);

/* ---- Training data ----------------------------------------------------------
 */

/* 1 for a measurement whose objective is known: status OK and GFLOP/s > 0. */
int bo_is_success(const heron_measurement *m);

/* 1 for a measurement that says the config is infeasible (compile error,
 * runtime error, timeout, wrong result); 0 for OK and for "invalid" (a
 * known-constraint violation, which the engine never measures). */
int bo_is_failure(const heron_measurement *m);

/* Chooses at most `cap` successful measurements among history entries
 * [from, count): half the cap by best GFLOP/s, the rest the most recent
 * not already chosen, so the model knows the optimum's neighbourhood and
 * where the search is now.  Writes history indices to idx[cap] (ascending)
 * and returns their number, or -1 when out of memory. */
int bo_select_successes(const heron_history *h, int from, int cap, int *idx);

/* Chooses at most `cap` infeasible measurements among [from, count), the
 * most recent first; indices ascending into idx[cap]; returns their number. */
int bo_select_failures(const heron_history *h, int from, int cap, int *idx);

/* Number of successes and of failures among [from, count). */
void bo_count(const heron_history *h, int from, int *ok, int *failed);

/* ---- Candidate pool
 * ----------------------------------------------------------- */

/* Unmeasured, mutually distinct configs with their feature vectors. */
typedef struct bo_pool {
  int nvars, nfeat;
  int n, cap;
  int64_t *cfg; /* n * nvars */
  double *feat; /* n * nfeat */
  int *origin;  /* caller's tag per config (sampled, mutated, ...) */
  bo_keyset keys;
} bo_pool;

int bo_pool_init(bo_pool *p, const heron_space *sp, int cap);
/* Adds cfg when the pool has room, it is not in the pool and not measured
 * (env->history).  Returns 1 added, 0 skipped, -1 out of memory. */
int bo_pool_add(bo_pool *p, const heron_strategy_env *env, const int64_t *cfg,
                int origin);
void bo_pool_free(bo_pool *p);

/* ---- Random proposals
 * ----------------------------------------------------------- */

/* Fills out[want * nvars] with constrained random configs that are neither
 * measured nor repeated within `taken` (updated with every config written);
 * gives up after `retries` fruitless draws.  Writes the number to *got.
 * Returns HERON_OK or the sampler's error (EUNSAT only when not a single
 * config was found), with the message in err. */
int bo_propose_random(const heron_strategy_env *env, int want, int64_t *out,
                      int *got, bo_keyset *taken, int retries,
                      heron_error *err);

#ifdef __cplusplus
}
#endif
#endif /* HERON_PLUGIN_COMMON_BO_UTIL_H */
