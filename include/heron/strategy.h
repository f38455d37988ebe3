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
 * The engine calls, per tuning run, in this order and from one thread:
 *
 *     create(env, params, n, &self)      once.  With typed declarations
 *                                        (param_specs) params holds every
 *                                        declared key that has a value, once,
 *                                        checked and with defaults filled in.
 *     on --resume, when the resumed log holds trials:
 *       observe(self, history, n)        ONE call with the whole resumed
 *                                        history, in log order (ok and failed
 *                                        trials alike), so a strategy without
 *                                        saved state can rebuild its own;
 *       load_state(self, path)           then, only if the member is set and
 *                                        <resumed log>.state exists: the
 *                                        state saved by the run that wrote
 *                                        that log (see save_state below).
 *     loop, until the budget is spent:
 *       propose(self, want, out, &got)
 *            ... the engine drops proposals that violate a constraint or
 *                were measured before (in the history or earlier in the same
 *                batch); dropped ones never reach observe and are only
 *                counted (the summary's "dropped" line, a warning for invalid
 *                ones); it builds and measures the rest ...
 *       observe(self, results, n)        the round's measurements, n >= 1, in
 *                                        the order measured; a round whose
 *                                        proposals were all dropped has no
 *                                        observe call, and after 8 such
 *                                        rounds in a row the run ends;
 *       save_state(self, path)           after each observed round, when the
 *                                        run writes a log: path is
 *                                        <log>.state (replaced atomically by
 *                                        the plugin if it cares).
 *     destroy(self)                      once, also after any failure.
 *
 * The engine, not the strategy, enforces the budget (trials, wall time), so
 * a strategy may propose freely.  The strategy must not write to stdout (the
 * tools print results there); it logs through env->log, whose lines the
 * host prints as "[<name>] <text>" (with " warning:" after the prefix at
 * HERON_LOG_WARN, debug lines only under --verbose): do not repeat the
 * name in the text.  No process-wide globals: all state lives in `self`.
 * Every call into a strategy runs under the host's guard: a crash, or a
 * call that outlasts --plugin-timeout, ends the run naming the plugin and
 * the call, with the log intact.  See plugins/strategies/skeleton/ for a
 * copy-me example (installed under <prefix>/share/heron/skeleton/).
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
  /* Logs one line through the host at a HERON_LOG_* level (status.h); the
   * host adds the "[name]" prefix and the newline. */
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
  /* Text-only declarations, {NULL}-terminated; NULL for none.  Used only
   * when param_specs (below) is absent: plugins built before typed
   * declarations.  New plugins leave it NULL and use HERON_PARAM_SPECS. */
  const heron_param_doc *params;

  /* Creates the strategy in *self.  params[0..nparams) holds only declared
   * keys (typed: each once, valid, defaults filled in; text-only: as the
   * user gave them); the array is valid during this call only, so copy what
   * you keep.  create rejects a bad value with HERON_EINVAL naming it.  The
   * env pointer stays valid until destroy().  On failure *self is untouched
   * and destroy is not called for it. */
  int (*create)(const heron_strategy_env *env, const heron_param *params,
                int nparams, void **self, heron_error *err);

  /* Writes up to `want` configs into out[want * nvars] (caller-owned) and
   * their number to *got.  Returning fewer is allowed (0 included, if the
   * strategy has nothing to offer); a non-OK status stops the run. */
  int (*propose)(void *self, int want, int64_t *out, int *got,
                 heron_error *err);

  /* Tells the strategy results[0..n): the last round's measurements in the
   * order measured, or, once before the first propose of a resumed run, the
   * whole resumed history (see the call order above).  Failed trials are
   * included (status != HERON_MEAS_OK).  The array and the configs it
   * points to are the engine's and valid during the call; copy what you
   * keep. */
  int (*observe)(void *self, const heron_measurement *results, int n,
                 heron_error *err);

  /* Frees everything the strategy owns. NULL is accepted. */
  void (*destroy)(void *self);

  /* Optional: write the strategy's state to `path` (<log>.state) after each
   * observed round / read it back on --resume, after create() and after the
   * resumed history's observe call, from <resumed log>.state, so a resumed
   * run continues the search rather than only its history.  Resuming into
   * another --log reads the resumed log's state and saves to the new log's.
   * A failure of either is a warning, not the end of the run. */
  int (*save_state)(void *self, const char *path, heron_error *err);
  int (*load_state)(void *self, const char *path, heron_error *err);

  /* ---- Appended after the first layout; read only when struct_size covers
   * them.  Set both with HERON_PARAM_SPECS(array) (heron/param.h). ---- */
  uint32_t param_spec_size; /* sizeof(heron_param_spec) the plugin saw */
  /* Typed declarations, ending with a NULL key; when set, `params` is
   * ignored.  See heron/param.h for what the host checks and fills in. */
  const heron_param_spec *param_specs;
} heron_strategy_plugin;

typedef const heron_strategy_plugin *(*heron_strategy_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif /* HERON_STRATEGY_H */
