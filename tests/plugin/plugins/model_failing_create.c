/* A model whose create() fails with its own message and code: the host must
 * pass both on, saying which model failed, and must not call destroy() on
 * the instance that was never made.  Declares no parameters. */
#include <stdlib.h>

#include "heron/model.h"

static int create(const heron_model_env *env, const heron_param *params, int n,
                  void **self, heron_error *err) {
  *self = (void *)0x1; /* junk: the host must ignore *self on failure */
  return heron_error_set(err, HERON_EIO, "cannot open /dev/oracle");
}
static int fit(void *self, const double *X, const double *y, int n, int d,
               heron_error *err) {
  return HERON_EINTERNAL;
}
static int predict(void *self, const double *X, int n, int d, double *out,
                   heron_error *err) {
  return HERON_EINTERNAL;
}
static void destroy(void *self) {
  if (self)
    abort(); /* the host destroyed an instance create() never made */
}

static const heron_model_plugin desc = {
    .abi_version = HERON_MODEL_ABI_VERSION,
    .struct_size = sizeof(heron_model_plugin),
    .name = "failing_create",
    .summary = "broken on purpose: create fails",
    .create = create,
    .fit = fit,
    .predict = predict,
    .destroy = destroy,
};

HERON_PLUGIN_EXPORT const heron_model_plugin *heron_model_plugin_v1(void) {
  return &desc;
}
