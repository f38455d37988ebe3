/* plugins/strategies/skeleton/skeleton.c - the copy-me strategy.
 *
 * This file is a complete, working strategy written to be copied: it shows
 * every part of the plugin contract (include/heron/strategy.h) once, with
 * a comment on why each piece is there.  To start your own strategy:
 *
 *   1. cp -r plugins/strategies/skeleton plugins/strategies/mine
 *   2. rename skeleton.c to mine.c, "skeleton" to "mine" in CMakeLists.txt
 *      and in the descriptor's .name below
 *   3. rebuild: cmake --build build   ->  build/plugins/mine.so (the new
 *      folder is picked up without configuring again)
 *   4. heron-search --help-plugin mine   (its parameters, from the table)
 *      heron-search --strategy mine --op gemm --shape 256,256,256 ...
 *
 * (Out of the tree a plugin needs only an installed Heron-C: build it with
 * pkg-config or with the CMake project installed in share/heron/skeleton/,
 * then copy the .so into <prefix>/lib/heron/plugins to run it by name; see
 * the README.)
 *
 * The search itself is deliberately simple, a greedy local search:
 *
 *   - until some config has run successfully, propose random valid configs
 *     (heron_space_sample);
 *   - afterwards, propose mutations of the best config so far
 *     (heron_space_mutate changes a few knobs and re-solves the others, so
 *     the neighbour is valid), with probability `explore` a fresh random
 *     config instead, so the search can leave a local optimum;
 *   - observe() keeps the fastest successful config seen.
 *
 * Replace propose() and observe() with your idea; keep the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Include only the public headers.  heron/strategy.h pulls in the space,
 * model, history, parameter and status APIs a strategy needs. */
#include "heron/strategy.h"

/* ---- Parameters ----------------------------------------------------------
 *
 * Declare every key the strategy understands, with its default as text and
 * a one-line help.  The engine rejects undeclared keys by name before
 * create() runs, and `heron-search --help-plugin skeleton` prints this
 * table, so it doubles as documentation.  End with a {NULL} entry.
 */
static const heron_param_spec skeleton_params[] = {
    {.key = "explore",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.1",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1,
     .help = "probability of proposing a random config instead of a "
             "mutation"},
    {.key = "mutate",
     .kind = HERON_PARAM_INT,
     .default_value = "1",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1 << 20,
     .help = "knobs changed per mutation (more than the knobs: all of them)"},
    {.key = NULL},
};

/* ---- State ----------------------------------------------------------------
 *
 * Everything the strategy remembers lives in one struct allocated by
 * create() and freed by destroy().  No globals: two runs in one process (a
 * benchmark comparing seeds, say) must not see each other.
 */
typedef struct skeleton {
  const heron_strategy_env *env; /* valid until destroy(); not ours */
  int nvars;                     /* length of a config */
  int nknobs;
  double explore; /* parameter */
  int mutate;     /* parameter */
  int *knobs;     /* variable indices of the knobs, for heron_space_mutate */
  int64_t *best;  /* best config so far (nvars values), ours */
  double best_gflops; /* 0 while have_best is 0 */
  int have_best;
  long observed; /* measurements seen, for the log */
} skeleton;

/* Copies a measured config into our own storage: the engine owns the
 * arrays it passes to observe() and frees them after the call. */
static void skeleton_take_best(skeleton *s, const heron_measurement *m) {
  memcpy(s->best, m->config, (size_t)s->nvars * sizeof *s->best);
  s->best_gflops = m->gflops;
  s->have_best = 1;
}

/* ---- create --------------------------------------------------------------
 *
 * Reads the parameters (declared typed, so the host has checked them),
 * allocates the state and, on a resumed
 * run, starts from the best config of the history so the search continues
 * where it stopped.  On failure it frees what it allocated, leaves *self
 * alone and says why through err.
 */
static int skeleton_create(const heron_strategy_env *env,
                           const heron_param *params, int nparams, void **self,
                           heron_error *err) {
  /* The host has checked every value against skeleton_params (kind and
   * range) and filled in the defaults, so reading cannot fail here. */
  double explore = heron_param_double_value(params, nparams, "explore", 0.1);
  int64_t mutate = heron_param_int_value(params, nparams, "mutate", 1);

  skeleton *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "skeleton: out of memory");
  s->env = env;
  s->nvars = heron_space_nvars(env->space);
  s->nknobs = heron_space_nknobs(env->space);
  s->explore = explore;
  s->mutate = (int)(mutate < s->nknobs ? mutate : s->nknobs);
  s->best = calloc((size_t)s->nvars + 1, sizeof *s->best);
  s->knobs = calloc((size_t)s->nknobs + 1, sizeof *s->knobs);
  if (!s->best || !s->knobs) {
    free(s->best);
    free(s->knobs);
    free(s);
    return heron_error_set(err, HERON_ENOMEM, "skeleton: out of memory");
  }
  for (int i = 0; i < s->nknobs; i++)
    s->knobs[i] = heron_space_knob(env->space, i);

  /* The history holds resumed measurements too.  It may be absent when a
   * test drives the plugin by hand, so check. */
  const heron_measurement *best =
      env->history ? heron_history_best(env->history) : NULL;
  if (best)
    skeleton_take_best(s, best);

  /* Log through the env, never printf: stdout belongs to the tool. */
  env->log(env, HERON_LOG_DEBUG, "explore=%g mutate=%d, %d knobs", s->explore,
           s->mutate, s->nknobs);
  *self = s;
  return HERON_OK;
}

/* Picks `k` distinct knobs at random (partial Fisher-Yates on s->knobs) and
 * returns them in the first k slots. */
static void skeleton_pick_knobs(skeleton *s, int k) {
  for (int i = 0; i < k; i++) {
    int j = i + (int)heron_rng_below(s->env->rng, (uint64_t)(s->nknobs - i));
    int t = s->knobs[i];
    s->knobs[i] = s->knobs[j];
    s->knobs[j] = t;
  }
}

/* ---- propose -------------------------------------------------------------
 *
 * Fills out[want * nvars] (the engine's buffer) with up to `want` configs.
 * Proposing a duplicate or an invalid config is harmless: the engine drops
 * it and counts it.  Returning fewer than `want` is allowed; returning an
 * error stops the run, so keep errors for real failures.
 */
static int skeleton_propose(void *self, int want, int64_t *out, int *got,
                            heron_error *err) {
  skeleton *s = self;
  const heron_strategy_env *env = s->env;
  int n = 0, failures = 0;
  *got = 0;
  while (n < want && failures < 100) {
    int64_t *cfg = out + (size_t)n * s->nvars;
    /* Use env->rng for every random choice: it is seeded from --seed, so
     * a run can be repeated exactly. */
    int explore = !s->have_best || heron_rng_uniform(env->rng) < s->explore;
    heron_error e = {0};
    int rc;
    if (explore) {
      rc = heron_space_sample(env->space, env->rng, cfg, &e);
    } else {
      skeleton_pick_knobs(s, s->mutate);
      rc = heron_space_mutate(env->space, env->rng, s->best, s->knobs,
                              s->mutate, cfg, &e);
      /* EUNSAT here means "no neighbour": fall back to a random config. */
      if (rc == HERON_EUNSAT) {
        heron_error_clear(&e);
        rc = heron_space_sample(env->space, env->rng, cfg, &e);
      }
    }
    if (rc == HERON_OK) {
      n++;
    } else if (rc == HERON_EUNSAT) {
      failures++;
    } else {
      /* Pass the space's message on, saying who we are. */
      return heron_error_set(err, rc, "skeleton: %s", e.text);
    }
  }
  *got = n;
  if (n == 0 && want > 0)
    return heron_error_set(err, HERON_EUNSAT,
                           "skeleton: found no valid config to propose");
  return HERON_OK;
}

/* ---- observe -------------------------------------------------------------
 *
 * Receives every measured result of the round, successful or not, in the
 * order measured.  Copy what you keep: the array is the engine's.
 */
static int skeleton_observe(void *self, const heron_measurement *results, int n,
                            heron_error *err) {
  skeleton *s = self;
  for (int i = 0; i < n; i++) {
    const heron_measurement *m = &results[i];
    s->observed++;
    if (m->status != HERON_MEAS_OK || !m->config)
      continue;
    if (!s->have_best || m->gflops > s->best_gflops) {
      skeleton_take_best(s, m);
      s->env->log(s->env, HERON_LOG_DEBUG, "new best %.2f GFLOP/s (trial %d)",
                  m->gflops, m->trial);
    }
  }
  return HERON_OK;
}

/* ---- destroy -------------------------------------------------------------
 *
 * Frees everything create() allocated.  Must accept NULL.
 */
static void skeleton_destroy(void *self) {
  skeleton *s = self;
  if (!s)
    return;
  free(s->best);
  free(s->knobs);
  free(s);
}

/* ---- save_state / load_state (optional) ----------------------------------
 *
 * With these, --resume continues the strategy itself, not just the
 * history.  The engine calls save_state after each round and load_state
 * right after create() when resuming.  Any format will do; a small text
 * file with a version line is easy to debug.  Leave both members NULL if
 * your strategy has nothing to keep beyond the history.
 */
static int skeleton_save_state(void *self, const char *path, heron_error *err) {
  skeleton *s = self;
  FILE *f = fopen(path, "w");
  if (!f)
    return heron_error_set(err, HERON_EIO, "skeleton: cannot write %s", path);
  fprintf(f, "heron-skeleton-state 1\n%d %d %.17g %ld\n", s->nvars,
          s->have_best, s->best_gflops, s->observed);
  for (int v = 0; v < s->nvars; v++)
    fprintf(f, "%lld%c", (long long)s->best[v], v + 1 < s->nvars ? ' ' : '\n');
  int bad = ferror(f);
  if (fclose(f) != 0 || bad)
    return heron_error_set(err, HERON_EIO, "skeleton: cannot write %s", path);
  return HERON_OK;
}

static int skeleton_load_state(void *self, const char *path, heron_error *err) {
  skeleton *s = self;
  FILE *f = fopen(path, "r");
  if (!f)
    return heron_error_set(err, HERON_EIO, "skeleton: cannot read %s", path);
  int version = 0, nvars = 0, have = 0;
  double gflops = 0;
  long observed = 0;
  int ok = fscanf(f, "heron-skeleton-state %d %d %d %lg %ld", &version, &nvars,
                  &have, &gflops, &observed) == 5 &&
           version == 1 && nvars == s->nvars;
  /* Read into a scratch copy so a bad file leaves the state unchanged. */
  int64_t *cfg = ok ? calloc((size_t)nvars + 1, sizeof *cfg) : NULL;
  for (int v = 0; ok && v < nvars; v++) {
    long long x;
    ok = cfg && fscanf(f, "%lld", &x) == 1;
    if (ok)
      cfg[v] = x;
  }
  fclose(f);
  if (!ok) {
    free(cfg);
    return heron_error_set(err, HERON_EPARSE,
                           "skeleton: %s is not a state file for this space",
                           path);
  }
  /* Keep whichever best is better: the history may know a faster one. */
  if (have && (!s->have_best || gflops > s->best_gflops)) {
    memcpy(s->best, cfg, (size_t)nvars * sizeof *cfg);
    s->best_gflops = gflops;
    s->have_best = 1;
  }
  s->observed = observed;
  free(cfg);
  return HERON_OK;
}

/* ---- The descriptor and the entry point -----------------------------------
 *
 * One static const descriptor with designated initializers: members you do
 * not set are NULL, which is how optional members are left out.
 * struct_size = sizeof of the struct *you* were built with lets a newer
 * host know which appended members your plugin has.
 */
static const heron_strategy_plugin skeleton_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "skeleton",
    .summary = "local search around the best config (copy-me example)",
    HERON_PARAM_SPECS(skeleton_params),
    .create = skeleton_create,
    .propose = skeleton_propose,
    .observe = skeleton_observe,
    .destroy = skeleton_destroy,
    .save_state = skeleton_save_state,
    .load_state = skeleton_load_state,
};

/* The one exported symbol.  The build uses -fvisibility=hidden, so this is
 * the only name the loader (or anyone) can see. */
HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &skeleton_plugin;
}
