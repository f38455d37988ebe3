/* A cost model that segfaults in fit() (a volatile store through a
 * volatile NULL pointer, UBSan's null check off for it, as in
 * strat_crash_propose.c).  The guard must end the run with status 1 and a
 * message naming this file, "fit" and SIGSEGV.
 *
 * Parameter crash=fit|create|predict|importance|save|load|destroy|none
 * (default fit) moves the crash to another member, so each guarded call
 * of the model host can be tested with this one plugin; the other members
 * work (a mean predictor). */
#include <stdlib.h>
#include <string.h>

#include "heron/model.h"

typedef struct crashm {
  const char *crash; /* a static string: the member that crashes */
  double mean;
} crashm;

static const heron_param_doc crashm_params[] = {
    {"crash", "fit",
     "the member that crashes: fit, create, predict, importance, save, "
     "load, destroy or none"},
    {NULL, NULL, NULL},
};

static const char *const crashm_members[] = {"fit",        "create", "predict",
                                             "importance", "save",   "load",
                                             "destroy",    "none"};

__attribute__((noinline, no_sanitize("undefined"))) static void
crash_store(void) {
  volatile int *volatile p = NULL;
  *p = 42;
}

static void maybe_crash(const crashm *m, const char *member) {
  if (strcmp(m->crash, member) == 0)
    crash_store();
}

static int crashm_create(const heron_model_env *env, const heron_param *params,
                         int n, void **self, heron_error *err) {
  const char *want = heron_param_get(params, n, "crash", "fit");
  const char *crash = NULL;
  for (size_t i = 0; i < sizeof crashm_members / sizeof crashm_members[0]; i++)
    if (strcmp(want, crashm_members[i]) == 0)
      crash = crashm_members[i];
  if (!crash)
    return heron_error_set(err, HERON_EINVAL,
                           "crash=%s: expected a member name or none", want);
  crashm *m = calloc(1, sizeof *m);
  if (!m)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  m->crash = crash;
  maybe_crash(m, "create");
  *self = m;
  return HERON_OK;
}

static int crashm_fit(void *self, const double *X, const double *y, int n,
                      int d, heron_error *err) {
  crashm *m = self;
  maybe_crash(m, "fit");
  double s = 0;
  for (int i = 0; i < n; i++)
    s += y[i];
  m->mean = n ? s / n : 0;
  return HERON_OK;
}

static int crashm_predict(void *self, const double *X, int n, int d,
                          double *out, heron_error *err) {
  crashm *m = self;
  maybe_crash(m, "predict");
  for (int i = 0; i < n; i++)
    out[i] = m->mean;
  return HERON_OK;
}

static int crashm_importance(void *self, double *scores, int d,
                             heron_error *err) {
  maybe_crash(self, "importance");
  for (int i = 0; i < d; i++)
    scores[i] = 1;
  return HERON_OK;
}

static int crashm_save(void *self, const char *path, heron_error *err) {
  maybe_crash(self, "save");
  return heron_error_set(err, HERON_EUNSUPPORTED, "crashm: save is a stub");
}

static int crashm_load(void *self, const char *path, heron_error *err) {
  maybe_crash(self, "load");
  return heron_error_set(err, HERON_EUNSUPPORTED, "crashm: load is a stub");
}

static void crashm_destroy(void *self) {
  if (self)
    maybe_crash(self, "destroy");
  free(self);
}

static const heron_model_plugin crashm_plugin = {
    .abi_version = HERON_MODEL_ABI_VERSION,
    .struct_size = sizeof(heron_model_plugin),
    .name = "crash_fit",
    .summary = "test: segfaults in fit (or the member crash= names)",
    .params = crashm_params,
    .create = crashm_create,
    .fit = crashm_fit,
    .predict = crashm_predict,
    .importance = crashm_importance,
    .save = crashm_save,
    .load = crashm_load,
    .destroy = crashm_destroy,
};

HERON_PLUGIN_EXPORT const heron_model_plugin *heron_model_plugin_v1(void) {
  return &crashm_plugin;
}
