/* A working model with none of the optional members (importance, save,
 * load): it predicts the mean of the last fit's targets plus `slope` times
 * the first feature.  The host must report HERON_EUNSUPPORTED for the
 * missing members instead of calling through NULL. */
#include <stdlib.h>

#include "heron/model.h"

typedef struct minimal {
  double mean, slope;
} minimal;

static const heron_param_doc params_doc[] = {
    {"slope", "0", "added per unit of the first feature"},
    {NULL, NULL, NULL},
};

static int create(const heron_model_env *env, const heron_param *params, int n,
                  void **self, heron_error *err) {
  double slope;
  int rc = heron_param_double(params, n, "slope", 0.0, -1e6, 1e6, &slope, err);
  if (rc != HERON_OK)
    return rc;
  minimal *m = calloc(1, sizeof *m);
  if (!m)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  m->slope = slope;
  env->log(env, 0, "created with %d features", env->nfeatures);
  *self = m;
  return HERON_OK;
}
static int fit(void *self, const double *X, const double *y, int n, int d,
               heron_error *err) {
  minimal *m = self;
  double s = 0;
  for (int i = 0; i < n; i++)
    s += y[i];
  m->mean = n ? s / n : 0;
  return HERON_OK;
}
static int predict(void *self, const double *X, int n, int d, double *out,
                   heron_error *err) {
  minimal *m = self;
  for (int i = 0; i < n; i++)
    out[i] = m->mean + m->slope * X[(size_t)i * d];
  return HERON_OK;
}
static void destroy(void *self) { free(self); }

static const heron_model_plugin desc = {
    .abi_version = HERON_MODEL_ABI_VERSION,
    .struct_size = sizeof(heron_model_plugin),
    .name = "minimal",
    .summary = "mean predictor without optional members",
    .params = params_doc,
    .create = create,
    .fit = fit,
    .predict = predict,
    .destroy = destroy,
};

HERON_PLUGIN_EXPORT const heron_model_plugin *heron_model_plugin_v1(void) {
  return &desc;
}
