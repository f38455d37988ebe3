/* plugins/strategies/mls/mls.c - multi-start local search, after Kernel
 * Tuner's "mls" strategy (see README.md for where it departs).
 *
 * From a random valid config, hill-climb over the neighbourhood (Hamming:
 * every valid config one knob away, heron_space_neighbours) until a local
 * optimum, then start again from a new random config.  The climb is
 * plugins/common/local_search.h's: best improvement by default (Kernel
 * Tuner's restart=False), first improvement with restart=true.  Measured
 * configs answer from the table of costs, so a climb through known
 * territory costs no trial.
 */
#include <stdlib.h>
#include <string.h>

#include "local_search.h"

static const heron_param_spec mls_params[] = {
    {.key = "neighbor",
     .kind = HERON_PARAM_CHOICE,
     .choices = "Hamming|adjacent",
     .default_value = "Hamming",
     .help = "neighbourhood: Hamming (any one knob changed) or adjacent (one "
             "knob moved to its nearest valid value)"},
    {.key = "restart",
     .kind = HERON_PARAM_BOOL,
     .default_value = "false",
     .help = "first improvement: move to the first better neighbour and "
             "restart from a random config (false: best improvement to a "
             "local optimum)"},
    {.key = "randomize",
     .kind = HERON_PARAM_BOOL,
     .default_value = "true",
     .help = "visit the knobs, and each knob's values, in random order"},
    {.key = NULL},
};

typedef struct mls {
  ls_starts st;
} mls;

static void mls_destroy(void *self) {
  mls *s = self;
  if (!s)
    return;
  ls_starts_free(&s->st);
  free(s);
}

static int mls_create(const heron_strategy_env *env, const heron_param *params,
                      int nparams, void **self, heron_error *err) {
  mls *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "mls: out of memory");
  int rc = ls_starts_init(
      &s->st, env, "mls", params, nparams, 0,
      (int)heron_param_int_value(params, nparams, "randomize", 1), err);
  if (rc) {
    free(s);
    return rc;
  }
  *self = s;
  return HERON_OK;
}

static int mls_propose(void *self, int want, int64_t *out, int *got,
                       heron_error *err) {
  ls_starts *s = &((mls *)self)->st;
  ls_round(&s->b, out, want);
  for (long step = 0; step < LS_MAX_STEPS && !ls_full(&s->b); step++) {
    int r = ls_starts_begin(s, err);
    if (r <= 0) {
      if (r < 0)
        return r;
      break;
    }
    r = ls_climb_run(&s->b, &s->climb, err);
    if (r < 0)
      return r;
    if (r == LS_CLIMB_WAIT)
      break;
    s->climbing = 0; /* a local optimum (or one first-improvement move) */
  }
  int rc = ls_starts_fresh(s, err);
  if (rc < 0)
    return rc;
  *got = s->b.got;
  return HERON_OK;
}

static int mls_observe(void *self, const heron_measurement *results, int n,
                       heron_error *err) {
  mls *s = self;
  return ls_observe(&s->st.b, results, n, err);
}

static const heron_strategy_plugin mls_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "mls",
    .summary = "multi-start local search (Kernel Tuner's mls): hill climbs "
               "from random configs",
    HERON_PARAM_SPECS(mls_params),
    .create = mls_create,
    .propose = mls_propose,
    .observe = mls_observe,
    .destroy = mls_destroy,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &mls_plugin;
}
