/* heron/model.h - the cost-model plugin contract.
 *
 * A cost model is a shared object exporting one symbol,
 *
 *     HERON_PLUGIN_EXPORT const heron_model_plugin *
 *     heron_model_plugin_v1(void);
 *
 * that returns a pointer to a `static const` descriptor.  The host checks
 * abi_version == HERON_MODEL_ABI_VERSION and struct_size >= the size of the
 * version-1 layout, and never reads members beyond struct_size: members are
 * only ever appended.  Optional members are NULL when a model lacks them.
 *
 * The engine drives a model: after every round it calls fit() with all
 * successful measurements so far (features from heron_space_features,
 * targets y = log(GFLOP/s), higher is better); strategies call predict() and
 * importance() through the heron_model handle in their env.
 *
 * The host adds two parameters of its own to every model, so a plugin does
 * not declare them: load=FILE (right after create() the host calls load();
 * the model is then trained from the first round: Heron's pre-trained
 * mode) and save=FILE (after every successful fit() the host calls save()
 * on a temporary file and renames it over FILE).
 *
 * Call order: create (params checked; see heron/param.h), then load when
 * load=FILE was given, then any number of fit / predict / importance /
 * save calls from one thread, then destroy.  fit() gets the whole training
 * set every time (all successful measurements so far, not the last round's),
 * so a model normally starts over; the one exception is a model that was
 * loaded: it should build on what it loaded (continue boosting, shrink
 * toward the loaded weights, ...), so an earlier run's knowledge is refined
 * rather than thrown away.  Every call runs under the host's guard (a crash
 * or a call past --plugin-timeout ends the run naming the call).
 *
 * Memory: every array is owned by the caller and only borrowed for the call.
 * A model never writes to stdout; it reports failures through `err`.
 */
#ifndef HERON_MODEL_H
#define HERON_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "heron/param.h"
#include "heron/rng.h"
#include "heron/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HERON_MODEL_ABI_VERSION 1u
#define HERON_MODEL_ENTRY "heron_model_plugin_v1"

/* What the host gives a model when creating it.  Valid until destroy(). */
typedef struct heron_model_env {
  uint32_t abi_version; /* HERON_MODEL_ABI_VERSION */
  uint32_t struct_size; /* sizeof(heron_model_env) of the host */
  int nfeatures;        /* d of every fit/predict call */
  uint64_t seed;        /* for the model's own randomness */
  /* Logs one line through the host at a HERON_LOG_* level (status.h); the
   * host adds the "[name]" prefix and the newline. */
  void (*log)(const struct heron_model_env *env, int level, const char *fmt,
              ...) HERON_PRINTF(3, 4);
  void *host; /* the host's private data; do not touch */
} heron_model_env;

typedef struct heron_model_plugin {
  uint32_t abi_version; /* HERON_MODEL_ABI_VERSION */
  uint32_t
      struct_size;  /* sizeof(heron_model_plugin) the plugin was built with */
  const char *name; /* short name, e.g. "xgb" */
  const char *summary; /* one line for --help */
  /* Text-only declarations, {NULL}-terminated; NULL for none.  Used only
   * when param_specs (below) is absent: plugins built before typed
   * declarations.  New plugins leave it NULL and use HERON_PARAM_SPECS. */
  const heron_param_doc *params;

  /* Creates an instance in *self.  params[0..nparams) holds only declared
   * keys (typed: each once, valid, defaults filled in; text-only: as given),
   * valid during this call only; create rejects bad values with
   * HERON_EINVAL.  On failure *self is left untouched. */
  int (*create)(const heron_model_env *env, const heron_param *params,
                int nparams, void **self, heron_error *err);

  /* Trains on X[n*d] (row-major) and y[n]: the whole training set so far.
   * A model that was not loaded replaces what it learned before; one that
   * was loaded builds on it (see the call order above).  n may be small (a
   * few rows); the model must cope. */
  int (*fit)(void *self, const double *X, const double *y, int n, int d,
             heron_error *err);

  /* Writes a score per row of X[n*d] to out[n]: higher means faster.  Before
   * the first fit it returns HERON_EUNSUPPORTED. */
  int (*predict)(void *self, const double *X, int n, int d, double *out,
                 heron_error *err);

  /* Optional: feature importance, scores[d], higher = more important. */
  int (*importance)(void *self, double *scores, int d, heron_error *err);

  /* Optional: save the trained model to a file / load one saved earlier. */
  int (*save)(void *self, const char *path, heron_error *err);
  int (*load)(void *self, const char *path, heron_error *err);

  /* Frees the instance. NULL is accepted. */
  void (*destroy)(void *self);

  /* ---- Appended after the first layout; read only when struct_size covers
   * them.  Set both with HERON_PARAM_SPECS(array) (heron/param.h). ---- */
  uint32_t param_spec_size; /* sizeof(heron_param_spec) the plugin saw */
  /* Typed declarations, ending with a NULL key; when set, `params` is
   * ignored.  The host's own load= and save= are not declared here. */
  const heron_param_spec *param_specs;
} heron_model_plugin;

typedef const heron_model_plugin *(*heron_model_entry_fn)(void);

/* The host's handle on a loaded, created model, as strategies see it. */
typedef struct heron_model heron_model;

/* 1 after the model has been fitted at least once. */
HERON_API int heron_model_trained(const heron_model *m);

/* Predicts scores for X[n*d] into out[n] (higher = faster).  Returns
 * HERON_EUNSUPPORTED before the first fit. */
HERON_API int heron_model_predict(const heron_model *m, const double *X, int n,
                                  int d, double *out, heron_error *err);

/* Feature importance into scores[d]; HERON_EUNSUPPORTED when the plugin has
 * no importance() or is not trained. */
HERON_API int heron_model_importance(const heron_model *m, double *scores,
                                     int d, heron_error *err);

#ifdef __cplusplus
}
#endif
#endif /* HERON_MODEL_H */
