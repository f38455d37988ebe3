/* A strategy that crashes in propose() with a write through a NULL
 * pointer: the guard must end the run with status 1 and a message naming
 * this file, "propose" and SIGSEGV.  The pointer is itself volatile (so
 * the compiler cannot prove it NULL) and points to a volatile int (so the
 * store cannot be dropped as dead: GCC 12 drops a plain `*p = 42` through
 * a volatile pointer), and UBSan's null check is off for that one
 * function, so a sanitizer build faults the same way instead of reporting
 * and exiting. */
#include <stdlib.h>

#include "heron/strategy.h"

typedef struct crash_state {
  const heron_strategy_env *env;
} crash_state;

__attribute__((noinline, no_sanitize("undefined"))) static void
crash_store(void) {
  volatile int *volatile p = NULL;
  *p = 42;
}

static int crash_create(const heron_strategy_env *env,
                        const heron_param *params, int nparams, void **self,
                        heron_error *err) {
  crash_state *st = calloc(1, sizeof *st);
  if (!st)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  st->env = env;
  *self = st;
  return HERON_OK;
}

static int crash_propose(void *self, int want, int64_t *out, int *got,
                         heron_error *err) {
  crash_store();
  *got = 0;
  return HERON_OK;
}

static int crash_observe(void *self, const heron_measurement *results, int n,
                         heron_error *err) {
  return HERON_OK;
}

static void crash_destroy(void *self) { free(self); }

static const heron_strategy_plugin crash_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "crash_propose",
    .summary = "test: segfaults in propose",
    .create = crash_create,
    .propose = crash_propose,
    .observe = crash_observe,
    .destroy = crash_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &crash_plugin;
}
