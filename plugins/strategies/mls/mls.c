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
  ls_base b;
  ls_climb climb;
  int64_t *start; /* the next start, once drawn */
  int have_start, climbing;
  long starts;
} mls;

static void mls_destroy(void *self) {
  mls *s = self;
  if (!s)
    return;
  s->b.env->log(s->b.env, HERON_LOG_DEBUG, "%ld starts, %ld moves", s->starts,
                s->climb.moves);
  ls_climb_free(&s->climb);
  ls_free(&s->b);
  free(s->start);
  free(s);
}

static int mls_create(const heron_strategy_env *env, const heron_param *params,
                      int nparams, void **self, heron_error *err) {
  mls *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "mls: out of memory");
  int rc = ls_init(&s->b, env, "mls", err);
  if (rc) {
    free(s);
    return rc;
  }
  s->start = malloc((size_t)(s->b.nv ? s->b.nv : 1) * sizeof *s->start);
  rc = ls_climb_init(
      &s->climb, &s->b, ls_neighbourhood(params, nparams),
      (int)heron_param_int_value(params, nparams, "restart", 0),
      (int)heron_param_int_value(params, nparams, "randomize", 1));
  if (rc || !s->start) {
    mls_destroy(s);
    return heron_error_set(err, HERON_ENOMEM, "mls: out of memory");
  }
  *self = s;
  return HERON_OK;
}

static int mls_propose(void *self, int want, int64_t *out, int *got,
                       heron_error *err) {
  mls *s = self;
  ls_round(&s->b, out, want);
  for (long step = 0; step < LS_MAX_STEPS && !ls_full(&s->b); step++) {
    if (!s->climbing) {
      double cost;
      if (!s->have_start) {
        int r = ls_sample(&s->b, s->start, 0, err);
        if (r < 0)
          return r;
        if (r == 0)
          break;
        s->have_start = 1;
        s->starts++;
      }
      if (!ls_known(&s->b, s->start, &cost)) {
        ls_propose(&s->b, s->start);
        break; /* its cost comes with the round */
      }
      ls_climb_start(&s->climb, &s->b, s->start, cost);
      s->have_start = 0;
      s->climbing = 1;
    }
    int r = ls_climb_run(&s->b, &s->climb, err);
    if (r < 0)
      return r;
    if (r == LS_CLIMB_WAIT)
      break;
    s->climbing = 0; /* a local optimum (or one first-improvement move) */
  }
  if (s->b.got == 0 && !s->climbing) {
    /* Only measured configs within reach: start afresh where nothing was
     * measured yet. */
    int r = ls_sample(&s->b, s->start, 1, err);
    if (r < 0)
      return r;
    if (r > 0) {
      s->have_start = 1;
      s->starts++;
      ls_propose(&s->b, s->start);
    }
  }
  *got = s->b.got;
  return HERON_OK;
}

static int mls_observe(void *self, const heron_measurement *results, int n,
                       heron_error *err) {
  mls *s = self;
  return ls_observe(&s->b, results, n, err);
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
