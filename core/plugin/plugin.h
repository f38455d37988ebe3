/* core/plugin/plugin.h - loading strategy and model plugins, internal.
 *
 * dlopen(path, RTLD_NOW | RTLD_LOCAL); the entry symbol must exist, return
 * a non-NULL descriptor with the expected abi_version and a struct_size at
 * least the version-1 size, and the required members (create, propose,
 * observe, destroy for strategies; create, fit, predict, destroy for models)
 * must be non-NULL.  Every failure closes the library and says which check
 * failed: file, symbol, expected vs found.
 *
 * Status codes: HERON_ENOTFOUND means no such file (resolve failed; the
 * message lists the folders searched).  HERON_EABI means the file exists
 * but is not a usable plugin of the wanted kind: dlopen failed (not a
 * shared object, missing dependency), the entry symbol is absent (with a
 * hint when the other kind's symbol is there), the entry returned NULL, or
 * the abi_version, struct_size or a required member is wrong.
 */
#ifndef HERON_CORE_PLUGIN_H
#define HERON_CORE_PLUGIN_H

#include <stddef.h>

#include "core/plugin/guard.h"
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
/* Closes the library (dlclose) and clears p; NULL and a closed p are fine. */
void heron__plugin_close(heron__plugin *p);

/* 1 when descriptor `d` (a heron_strategy_plugin * or heron_model_plugin *)
 * was built with member `m` inside its struct_size and sets it non-NULL.
 * Use it before calling any optional member: a plugin built against an
 * older, shorter layout must not have bytes beyond its struct_size read,
 * as SQLite checks iVersion before reading an appended method. */
#define HERON__PLUGIN_HAS(d, m)                                                \
  ((d)->struct_size >= offsetof(__typeof__(*(d)), m) + sizeof((d)->m) &&       \
   (d)->m != NULL)

/* The host side of a model: a loaded plugin plus its instance. */
struct heron_model {
  heron__plugin lib;
  const heron_model_plugin *desc;
  void *self;
  heron_model_env env;
  int trained;
  int nfeatures;
  char *save_path; /* the host parameter save=FILE, or NULL */
  /* Every call into the plugin goes through this guard (NULL: none), with
   * this time limit in seconds (<= 0: none); see heron__model_set_guard. */
  heron__guard *guard;
  double guard_limit_s;
};

/* Parameters the host takes for every model, on top of the plugin's own:
 * load=FILE (start from a model saved earlier: the pre-trained mode) and
 * save=FILE (save after every successful fit).  {NULL}-terminated. */
extern const heron_param_doc heron__model_host_params[];

/* Loads, checks params and creates the model instance.  The host
 * parameters load= and save= are taken out of params before the plugin
 * sees them; load= is applied right after create (the model is then
 * trained), save= after every fit.  Either one needs the plugin's load /
 * save member (HERON_EINVAL naming the parameter otherwise). */
int heron__model_open(const char *name, const heron_param *params, int n,
                      int nfeatures, uint64_t seed, heron_model **out,
                      heron_error *err);
/* heron__model_open with the guard set from the start, so that the
 * plugin's create (and the load of load=FILE) are guarded too; then as
 * heron__model_set_guard(*out, g, limit_s).  A NULL g is heron__model_open. */
int heron__model_open_guarded(const char *name, const heron_param *params,
                              int n, int nfeatures, uint64_t seed,
                              heron__guard *g, double limit_s,
                              heron_model **out, heron_error *err);
/* Routes every later call into the model plugin (fit, predict, importance,
 * save, load, destroy) through guard `g` (core/plugin/guard.h), each call
 * limited to `limit_s` seconds (<= 0: no limit), so that a crash or a hang
 * in the plugin ends the run with a message naming the plugin file and the
 * call.  NULL g turns guarding off.  The guard must stay open until
 * heron__model_close returns or the guard is set to NULL.  NULL m is
 * accepted. */
void heron__model_set_guard(heron_model *m, heron__guard *g, double limit_s);
/* Fits the model on X[n*d], y[n]; marks it trained on success. */
int heron__model_fit(heron_model *m, const double *X, const double *y, int n,
                     int d, heron_error *err);
/* Optional members through the host: HERON_EUNSUPPORTED when the plugin
 * lacks save / load.  A successful load marks the model trained. */
int heron__model_save(heron_model *m, const char *path, heron_error *err);
int heron__model_load(heron_model *m, const char *path, heron_error *err);
/* Destroys the instance and closes the library; NULL is accepted. */
void heron__model_close(heron_model *m);

#endif
