/* plugins/common/local_search.h - what the local-search strategies (mls,
 * greedy_ils, simulated_annealing, basinhopping, dual_annealing) share:
 * a table of measured costs, a round of proposals, neighbours and random
 * starts through the space's operations, and the hill climber of Kernel
 * Tuner's local searches.
 *
 * The algorithms are sequential: each step needs the cost of some configs.
 * A step asks ls_cost(); a config measured before (in this run or in the
 * resumed history) answers at once from the table, as Kernel Tuner's cost
 * function answers from its cache, so revisiting costs no trial; an
 * unmeasured one is added to the round's proposals (ls_propose) and the
 * step waits for the round's observe.  Costs are Kernel Tuner's objective,
 * the kernel time in milliseconds (INFINITY for a failed trial), so its
 * temperatures mean what they mean there.
 *
 * mls and greedy_ils also share their state and its start (ls_starts).
 *
 * The table of costs and the knobs' positions in domain order (for the
 * relaxations of basinhopping and dual_annealing) are popsearch.h's, which
 * the population strategies use too.  Linked statically into each of those
 * plugins (heron_plugin_lsearch in plugins/common/CMakeLists.txt); uses only
 * include/heron/.
 */
#ifndef HERON_PLUGIN_COMMON_LOCAL_SEARCH_H
#define HERON_PLUGIN_COMMON_LOCAL_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "heron/strategy.h"
#include "popsearch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Steps a propose() runs at most before it stops looking for unmeasured
 * configs through the algorithm and restarts it from an unmeasured random
 * config (a walk that only revisits measured configs would otherwise spin
 * forever on a small or nearly measured space). */
#define LS_MAX_STEPS 1000

typedef struct ls_base {
  const heron_strategy_env *env;
  const heron_space *sp;
  const char *who; /* the plugin's name, for messages */
  int nv, nk;
  int *knobs;
  pop_cache cache;   /* measured costs by config key (popsearch.h) */
  pop_coords coords; /* knob positions in domain order (popsearch.h) */
  /* the round being proposed */
  int64_t *out;
  int want, got;
  uint64_t *round_keys;
  int round_cap;
  /* neighbours of the last ls_neighbours call */
  int64_t *nb;
  int nn, nbcap;
  long observed;
} ls_base;

/* Sets up b for the strategy env, `who` naming it in messages.  HERON_OK
 * or HERON_ENOMEM. */
int ls_init(ls_base *b, const heron_strategy_env *env, const char *who,
            heron_error *err);
void ls_free(ls_base *b);

/* Records measurements (a round's, or the resumed history) in the table. */
int ls_observe(ls_base *b, const heron_measurement *r, int n, heron_error *err);

/* Kernel Tuner's objective of one measurement: its time in ms, or
 * INFINITY when it failed. */
double ls_objective(const heron_measurement *m);

/* 1 and *cost when cfg was measured; 0 when not. */
int ls_known(const ls_base *b, const int64_t *cfg, double *cost);

/* Starts a round of at most `want` proposals written to out. */
void ls_round(ls_base *b, int64_t *out, int want);

/* 1 when the round has no room left. */
int ls_full(const ls_base *b);

/* Adds cfg to the round unless it was measured or is already in the round
 * (both: 0) or the round is full (-1); 1 when added. */
int ls_propose(ls_base *b, const int64_t *cfg);

/* A random valid config (heron_space_sample) into cfg; with `fresh`, one
 * neither measured nor in this round, trying up to 1000 draws.  1 when
 * found, 0 when not, or a negative status with err set. */
int ls_sample(ls_base *b, int64_t *cfg, int fresh, heron_error *err);

/* The neighbours of cfg (a heron_neighbourhood) into b->nb[b->nn * nv];
 * returns b->nn or a negative status. */
int ls_neighbours(ls_base *b, const int64_t *cfg, int kind, heron_error *err);

/* A neighbour of cfg drawn uniformly into out; 1 when cfg has one, 0 when
 * not (out untouched), or a negative status. */
int ls_random_neighbour(ls_base *b, const int64_t *cfg, int kind, int64_t *out,
                        heron_error *err);

/* The neighbourhood named by a "neighbor" parameter: "Hamming" or
 * "adjacent" (Kernel Tuner's names). */
int ls_neighbourhood(const heron_param *params, int n);

/* The valid config nearest to the knob positions idx[nk] (popsearch.h's
 * pop_coords_config: rounded, clipped, repaired) into cfg.  1 when done, 0
 * when the space has no valid config, or a negative status. */
int ls_config_at(ls_base *b, const double *idx, int64_t *cfg, heron_error *err);

/* ---- The hill climber of Kernel Tuner's local searches ------------------
 *
 * From `cur`, the neighbours are visited dimension by dimension (knobs in
 * random order when randomize is set, else in knob order; the values of
 * one knob shuffled likewise).  Best improvement (first == 0): once every
 * neighbour's cost is known, move to the best one if it beats cur, and
 * repeat; a local optimum ends the climb.  First improvement (first == 1,
 * Kernel Tuner's restart=True): move to the first neighbour in that order
 * that beats cur, which ends the climb; none ends it too.  The neighbours
 * a round can hold are proposed at once, in visiting order (so with a
 * batch of B a first-improvement step may measure up to B - 1 neighbours
 * after the improving one; --batch 1 visits exactly as Kernel Tuner). */
typedef struct ls_climb {
  int kind, first, randomize;
  int64_t *cur;
  double cur_cost;
  int64_t *order; /* the neighbours of cur in visiting order */
  int n, cap, listed;
  long moves;
} ls_climb;

enum { LS_CLIMB_WAIT = 0, LS_CLIMB_DONE = 1 };

int ls_climb_init(ls_climb *c, const ls_base *b, int kind, int first,
                  int randomize);
void ls_climb_free(ls_climb *c);
/* Starts a climb at cfg, whose cost is known. */
void ls_climb_start(ls_climb *c, const ls_base *b, const int64_t *cfg,
                    double cost);
/* Runs the climb as far as known costs allow: LS_CLIMB_WAIT when it needs
 * costs of configs it added to the round (or the round is full),
 * LS_CLIMB_DONE when the climb ended (c->cur is where), or a negative
 * status. */
int ls_climb_run(ls_base *b, ls_climb *c, heron_error *err);

/* ---- Climbs from starts: what mls and greedy_ils share ----------------
 *
 * A plugin state that hill-climbs from one start after another: the base,
 * the climb, and the next start once drawn.  The plugin says where the
 * next start comes from (a random config, or its own perturbation) and
 * what a finished climb means. */
typedef struct ls_starts {
  ls_base b;
  ls_climb climb;
  int64_t *start; /* the next climb's start, once drawn (have_start) */
  int have_start, climbing;
  long starts; /* random starts drawn */
} ls_starts;

/* Sets s up for the plugin `who`: the base, a start buffer, and a climb
 * over the "neighbor" parameter's neighbourhood, first improvement as the
 * "restart" parameter says (first_default when not given), knobs in random
 * order when randomize.  HERON_OK, or HERON_ENOMEM with s freed. */
int ls_starts_init(ls_starts *s, const heron_strategy_env *env, const char *who,
                   const heron_param *params, int nparams, int first_default,
                   int randomize, heron_error *err);

/* Frees what init allocated (and logs the starts and moves at debug
 * level); zeroes s. */
void ls_starts_free(ls_starts *s);

/* When no climb is under way, begins the next from s->start (a random
 * config drawn first when there is none): 1 when the climb is under way
 * now, 0 when propose() must stop here (the start went into the round, its
 * cost comes with it; or no config was found), or a negative status. */
int ls_starts_begin(ls_starts *s, heron_error *err);

/* The end of a propose() that found nothing to measure and is not
 * climbing: only measured configs were within reach, so the next start is
 * an unmeasured random config, proposed now.  HERON_OK or a negative
 * status. */
int ls_starts_fresh(ls_starts *s, heron_error *err);

#ifdef __cplusplus
}
#endif

#endif /* HERON_PLUGIN_COMMON_LOCAL_SEARCH_H */
