/* heron/strategy.h - the search-strategy plugin contract (ask/tell).
 *
 * A strategy is a shared object exporting one symbol,
 *
 *     HERON_PLUGIN_EXPORT const heron_strategy_plugin *
 *     heron_strategy_plugin_v1(void);
 *
 * returning a pointer to a `static const` descriptor filled with C11
 * designated initializers.  The loader checks the symbol, abi_version ==
 * HERON_STRATEGY_ABI_VERSION and struct_size >= the version-1 size, and says
 * which check failed (file, symbol, expected vs found).  Members are only
 * ever appended; the host reads none beyond struct_size.  Optional members
 * are NULL.
 *
 * The engine calls, per tuning run:
 *
 *     create(env, params, n, &self)      once
 *     loop:  propose(self, want, out, &got)
 *            ... engine filters invalid / already measured configs,
 *                builds and measures the rest ...
 *            observe(self, results, n)    with every measured result
 *     destroy(self)
 *
 * The engine, not the strategy, enforces the budget (trials, wall time), and
 * drops proposals that are invalid or already measured (counting them and
 * warning), so a strategy may propose freely.  The strategy must not write
 * to stdout; it logs through env->log.  No process-wide globals: all state
 * lives in `self`.  See plugins/strategies/skeleton/ for a copy-me example.
 */
#ifndef HERON_STRATEGY_H
#define HERON_STRATEGY_H

#include <stddef.h>
#include <stdint.h>

#include "heron/model.h"
#include "heron/param.h"
#include "heron/record.h"
#include "heron/rng.h"
#include "heron/space.h"
#include "heron/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HERON_STRATEGY_ABI_VERSION 1u
#define HERON_STRATEGY_ENTRY "heron_strategy_plugin_v1"

/* Host services, valid from create() until destroy() returns. */
typedef struct heron_strategy_env {
  uint32_t abi_version;     /* HERON_STRATEGY_ABI_VERSION */
  uint32_t struct_size;     /* sizeof(heron_strategy_env) of the host */
  const heron_space *space; /* the task's space; configs have nvars values */
  heron_rng *rng;           /* seeded from --seed; the strategy's to use */
  const heron_model
      *model; /* cost model, fitted by the engine; NULL when absent */
  const heron_history
      *history; /* every measurement so far, resumed ones included */
  const char *
      task_key; /* the task's stable key, e.g. "gemm/1024,1024,1024/fp32/cpu" */
  int batch;    /* configs measured per round (--batch) */
  /* Logs one line (level 0 info, 1 warning, 2 debug) through the host. */
  void (*log)(const struct heron_strategy_env *env, int level, const char *fmt,
              ...) HERON_PRINTF(3, 4);
  void *host; /* the host's private data; do not touch */
} heron_strategy_env;

typedef struct heron_strategy_plugin {
  uint32_t abi_version; /* HERON_STRATEGY_ABI_VERSION */
  uint32_t
      struct_size; /* sizeof(heron_strategy_plugin) the plugin was built with */
  const char *name;    /* short name, e.g. "random" */
  const char *summary; /* one line for --help */
  const heron_param_doc
      *params; /* declared parameters, {NULL}-terminated; NULL for none */

  /* Creates the strategy in *self.  params[0..nparams) holds only declared
   * keys; create rejects a bad value with HERON_EINVAL naming it.  The env
   * pointer stays valid until destroy().  On failure *self is untouched. */
  int (*create)(const heron_strategy_env *env, const heron_param *params,
                int nparams, void **self, heron_error *err);

  /* Writes up to `want` configs into out[want * nvars] (caller-owned) and
   * their number to *got.  Returning fewer is allowed (0 included, if the
   * strategy has nothing to offer); a non-OK status stops the run. */
  int (*propose)(void *self, int want, int64_t *out, int *got,
                 heron_error *err);

  /* Tells the strategy the results of the last round, results[0..n), in the
   * order measured.  The array and the configs it points to are the
   * engine's; copy what you keep. */
  int (*observe)(void *self, const heron_measurement *results, int n,
                 heron_error *err);

  /* Frees everything the strategy owns. NULL is accepted. */
  void (*destroy)(void *self);

  /* Optional: write the strategy's state to `path` after a round / read it
   * back after create() on --resume, so a resumed run continues the search
   * rather than only its history. */
  int (*save_state)(void *self, const char *path, heron_error *err);
  int (*load_state)(void *self, const char *path, heron_error *err);
} heron_strategy_plugin;

typedef const heron_strategy_plugin *(*heron_strategy_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif /* HERON_STRATEGY_H */
