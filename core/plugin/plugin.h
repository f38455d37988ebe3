/* core/plugin/plugin.h - loading strategy and model plugins, internal.
 *
 * dlopen(path, RTLD_NOW | RTLD_LOCAL); the entry symbol must exist, return
 * a non-NULL descriptor with the expected abi_version and a struct_size at
 * least the version-1 size, and the required members (create, propose,
 * observe, destroy for strategies; create, fit, predict, destroy for models)
 * must be non-NULL.  Every failure closes the library and says which check
 * failed: file, symbol, expected vs found.
 */
#ifndef HERON_CORE_PLUGIN_H
#define HERON_CORE_PLUGIN_H

#include "heron/model.h"
#include "heron/strategy.h"

typedef struct heron__plugin {
  void *dl;
  char path[1024];
  const void *desc; /* heron_strategy_plugin or heron_model_plugin */
} heron__plugin;

/* Resolves `name` (see heron_plugin_resolve) and loads it. */
int heron__plugin_load_strategy(const char *name, heron__plugin *p,
                                heron_error *err);
int heron__plugin_load_model(const char *name, heron__plugin *p,
                             heron_error *err);
void heron__plugin_close(heron__plugin *p);

/* The host side of a model: a loaded plugin plus its instance. */
struct heron_model {
  heron__plugin lib;
  const heron_model_plugin *desc;
  void *self;
  heron_model_env env;
  int trained;
  int nfeatures;
};

/* Loads, checks params and creates the model instance. */
int heron__model_open(const char *name, const heron_param *params, int n,
                      int nfeatures, uint64_t seed, heron_model **out,
                      heron_error *err);
/* Fits the model on X[n*d], y[n]; marks it trained on success. */
int heron__model_fit(heron_model *m, const double *X, const double *y, int n,
                     int d, heron_error *err);
void heron__model_close(heron_model *m);

#endif
