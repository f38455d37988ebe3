/* tests/plugin/oot/ootmodel.c - a cost model written outside the tree.
 *
 * The out-of-tree test builds this file with CMake against the *installed*
 * package (find_package(heron), target heron::heron; see
 * tests/plugin/oot/CMakeLists.txt), copies the result into the plugin
 * folder of a moved install and runs it by name, proving that a model
 * needs nothing but the install, and that the CMake package still works
 * after the prefix has moved.
 *
 * The model predicts the mean of the targets it was last fitted on: every
 * config scores the same, which is all a test of the plumbing needs.
 */
#include <stdlib.h>

#include <heron/model.h>

typedef struct ootmodel {
  double mean;
} ootmodel;

static const heron_param_doc ootmodel_params[] = {{NULL, NULL, NULL}};

static int ootmodel_create(const heron_model_env *env,
                           const heron_param *params, int nparams, void **self,
                           heron_error *err) {
  (void)params;
  (void)nparams;
  ootmodel *m = calloc(1, sizeof *m);
  if (!m)
    return heron_error_set(err, HERON_ENOMEM, "ootmodel: out of memory");
  env->log(env, HERON_LOG_DEBUG, "ootmodel: %d features", env->nfeatures);
  *self = m;
  return HERON_OK;
}

/* fit() always gets the whole training set, so the mean starts over. */
static int ootmodel_fit(void *self, const double *X, const double *y, int n,
                        int d, heron_error *err) {
  (void)X;
  (void)d;
  (void)err;
  ootmodel *m = self;
  double sum = 0;
  for (int i = 0; i < n; i++)
    sum += y[i];
  m->mean = n > 0 ? sum / n : 0;
  return HERON_OK;
}

static int ootmodel_predict(void *self, const double *X, int n, int d,
                            double *out, heron_error *err) {
  (void)X;
  (void)d;
  (void)err;
  const ootmodel *m = self;
  for (int i = 0; i < n; i++)
    out[i] = m->mean;
  return HERON_OK;
}

static void ootmodel_destroy(void *self) { free(self); }

static const heron_model_plugin ootmodel_plugin = {
    .abi_version = HERON_MODEL_ABI_VERSION,
    .struct_size = sizeof(heron_model_plugin),
    .name = "ootmodel",
    .summary = "mean of the measured targets (out-of-tree test)",
    .params = ootmodel_params,
    .create = ootmodel_create,
    .fit = ootmodel_fit,
    .predict = ootmodel_predict,
    .destroy = ootmodel_destroy,
};

HERON_PLUGIN_EXPORT const heron_model_plugin *heron_model_plugin_v1(void);
HERON_PLUGIN_EXPORT const heron_model_plugin *heron_model_plugin_v1(void) {
  return &ootmodel_plugin;
}
