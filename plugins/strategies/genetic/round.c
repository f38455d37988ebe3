/* plugins/strategies/genetic/round.c - one round of the genetic strategy
 * (genetic.h; the algorithm is described at the top of genetic.c):
 * roulette-wheel selection, key variables, breeding by constrained
 * crossover and mutation, predictions, and the two kinds of round, guided
 * by the model or by measured fitness.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genetic.h"
#include "plugin_util.h"

/* ---- Selection ----------------------------------------------------------- */
static int genetic_rank_cmp(const void *a, const void *b) {
  const genetic_rank *x = a, *y = b;
  if (x->score != y->score)
    return x->score > y->score ? -1 : 1;
  return x->tie < y->tie ? -1 : x->tie > y->tie;
}

/* Sorts score[0..n) best first into g->order (ties in random order). */
static void genetic_sort(genetic *g, const double *score, int n) {
  for (int i = 0; i < n; i++)
    g->order[i] =
        (genetic_rank){.score = isnan(score[i]) ? -HUGE_VAL : score[i],
                       .tie = heron_rng_next(g->env->rng),
                       .idx = i};
  qsort(g->order, (size_t)n, sizeof *g->order, genetic_rank_cmp);
}

/* Roulette-wheel weights: scores normalised to [0, 1] by the pool's range,
 * weight exp((s - 1) / temperature), so the best config weighs 1 and the
 * worst exp(-1 / temperature), whatever the scale of the scores (log
 * GFLOP/s predictions or measured GFLOP/s).  Equal scores weigh alike. */
static void genetic_weights(const genetic *g, const double *score, int n,
                            double *w) {
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (int i = 0; i < n; i++) {
    if (isnan(score[i]))
      continue;
    lo = score[i] < lo ? score[i] : lo;
    hi = score[i] > hi ? score[i] : hi;
  }
  double range = hi - lo;
  for (int i = 0; i < n; i++) {
    double s = isnan(score[i]) ? 0.0 : range > 0 ? (score[i] - lo) / range : 1;
    w[i] = exp((s - 1.0) / g->temperature);
  }
}

/* Spins the wheel over w[0..n): an index with probability w[i] / sum, or
 * -1 when every weight is 0. */
static int genetic_spin(heron_rng *rng, const double *w, int n) {
  double total = 0;
  for (int i = 0; i < n; i++)
    total += w[i];
  if (!(total > 0))
    return -1;
  double x = heron_rng_uniform(rng) * total;
  for (int i = 0; i < n; i++) {
    x -= w[i];
    if (x < 0 && w[i] > 0)
      return i;
  }
  for (int i = n - 1; i >= 0; i--) /* rounding left x >= 0 */
    if (w[i] > 0)
      return i;
  return -1;
}

/* ---- Key variables ------------------------------------------------------- */

/* Ranks the key candidates by the model's feature importance (features are
 * the variables, in order), best first; without importance the rank stays
 * as it is and every key is drawn at random. */
static void genetic_rank_keys(genetic *g) {
  const heron_model *m = g->env->model;
  g->has_rank = 0;
  heron_error e = {0};
  if (!m || g->nf != g->nvars ||
      heron_model_importance(m, g->imp, g->nf, &e) != HERON_OK) {
    g->env->log(g->env, HERON_LOG_DEBUG,
                "no feature importance (%s): all key "
                "variables are random",
                m ? e.text : "no model");
    return;
  }
  for (int i = 0; i < g->ncand; i++)
    g->w[i] = g->imp[g->cand[i]];
  genetic_sort(g, g->w, g->ncand);
  for (int i = 0; i < g->ncand; i++)
    g->rank[i] = g->cand[g->order[i].idx];
  g->has_rank = 1;
}

/* Chooses n key variables into g->keys: the top half (rounded up) of the
 * importance rank when there is one, the rest drawn at random from the
 * remaining candidates. */
static void genetic_choose_keys(genetic *g, int n) {
  int ntop = g->has_rank ? (n + 1) / 2 : 0;
  memcpy(g->pick, g->rank, (size_t)g->ncand * sizeof *g->pick);
  for (int i = ntop; i < n; i++) {
    int j = i + (int)heron_rng_below(g->env->rng, (uint64_t)(g->ncand - i));
    int t = g->pick[i];
    g->pick[i] = g->pick[j];
    g->pick[j] = t;
  }
  memcpy(g->keys, g->pick, (size_t)n * sizeof *g->keys);
  g->nk = n;
}

/* Writes the key variables' names into buf, comma-separated, for the log. */
static void genetic_key_names(const genetic *g, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < g->nk && at < cap; i++) {
    int n = snprintf(buf + at, cap - at, "%s%s", i ? "," : "",
                     heron_space_var_name(g->sp, g->keys[i]));
    at += n > 0 ? (size_t)n : 0;
  }
}

/* ---- Breeding ------------------------------------------------------------ */

/* One child of pa and pb: every key variable but one from either parent
 * (heron_space_crossover, which re-solves the other variables), then the
 * remaining key mutated (heron_space_mutate keeps the other knobs where it
 * can).  The key that mutates is a knob: an auxiliary variable (a product
 * of tiles, a buffer size) follows from the knobs, and asking the solver
 * for another value of one with a wide interval domain sends it searching
 * that whole interval.  Keys without a knob are all crossed over and one
 * random knob mutates.  When the parents' keys admit no child the first
 * parent is mutated instead.  Returns HERON_OK, HERON_EUNSAT (no child this
 * time) or a real error. */
static int genetic_child(genetic *g, const int64_t *pa, const int64_t *pb,
                         int64_t *child, heron_error *err) {
  heron_rng *rng = g->env->rng;
  int nk = g->nk, *keys = g->keys, nknob = 0;
  if (nk == 0) /* a space of one config: nothing to inherit */
    return heron_space_sample(g->sp, rng, child, err);
  for (int i = 0; i < nk; i++)
    nknob += g->knob[keys[i]];
  if (nknob > 0) { /* move a random knob key to the end */
    int m = (int)heron_rng_below(rng, (uint64_t)nknob);
    for (int i = 0; i < nk; i++)
      if (g->knob[keys[i]] && m-- == 0) {
        int t = keys[i];
        keys[i] = keys[nk - 1];
        keys[nk - 1] = t;
        break;
      }
  }
  int ncross = nknob > 0 ? nk - 1 : nk;
  heron_error e = {0};
  int rc = heron_space_crossover(g->sp, rng, pa, pb, keys, ncross, child, &e);
  if (rc == HERON_EUNSAT) {
    memcpy(child, pa, (size_t)g->nvars * sizeof *child);
    rc = HERON_OK;
  }
  if (rc != HERON_OK)
    return heron_error_set(err, rc, "genetic: crossover failed: %s", e.text);
  heron_error_clear(&e);
  rc = heron_space_mutate(g->sp, rng, child, keys + ncross, nk - ncross, g->tmp,
                          &e);
  if (rc == HERON_OK)
    memcpy(child, g->tmp, (size_t)g->nvars * sizeof *child);
  else if (rc != HERON_EUNSAT) /* EUNSAT: the key has one legal value */
    return heron_error_set(err, rc, "genetic: mutation failed: %s", e.text);
  return HERON_OK;
}

/* ---- Predictions --------------------------------------------------------- */

/* Predicts p's configs [from, p->n) into their scores. */
static int genetic_predict(genetic *g, genetic_pool *p, int from,
                           heron_error *err) {
  int n = p->n - from;
  if (n <= 0)
    return HERON_OK;
  for (int i = 0; i < n; i++)
    heron_space_features(g->sp, genetic_pool_cfg(p, from + i),
                         g->X + (size_t)i * (size_t)g->nf);
  return heron_model_predict(g->env->model, g->X, n, g->nf, p->score + from,
                             err);
}

/* Draws up to `n` constrained random configs into pool p (new keys only,
 * tracked in g->seen).  Returns HERON_OK or a real error. */
static int genetic_add_samples(genetic *g, genetic_pool *p, int n,
                               heron_error *err) {
  int fails = 0;
  for (int i = 0; i < n && p->n < p->cap && fails < 16 + n; i++) {
    int64_t *cfg = genetic_pool_cfg(p, p->n);
    heron_error e = {0};
    int rc = heron_space_sample(g->sp, g->env->rng, cfg, &e);
    if (rc == HERON_EUNSAT) {
      fails++;
      continue;
    }
    if (rc != HERON_OK)
      return heron_error_set(err, rc, "genetic: sampling failed: %s", e.text);
    uint64_t key = plugin_config_key(g->sp, cfg);
    if (genetic_set_add(&g->seen, key))
      genetic_pool_push(p, cfg, key, 0);
  }
  return HERON_OK;
}

/* The history indices of its best `k` measurements (ok ones by GFLOP/s,
 * then failures as 0 when with_failures), best first, into *idx (malloc'ed,
 * the caller frees it); returns how many, or an error. */
static int genetic_history_top(genetic *g, int k, int with_failures, int **idx,
                               heron_error *err) {
  const heron_history *h = g->env->history;
  int total = h ? heron_history_count(h) : 0;
  *idx = NULL;
  if (total == 0 || k == 0)
    return 0;
  genetic_rank *r = malloc((size_t)total * sizeof *r);
  int *out = malloc((size_t)total * sizeof *out);
  if (!r || !out) {
    free(r);
    free(out);
    return heron_error_set(err, HERON_ENOMEM, "genetic: out of memory");
  }
  int n = 0;
  for (int i = 0; i < total; i++) {
    const heron_measurement *m = heron_history_get(h, i);
    int ok = m && m->config && m->status == HERON_MEAS_OK;
    if (m && m->config && (ok || with_failures))
      r[n++] = (genetic_rank){
          .score = ok ? m->gflops : 0.0, .tie = (uint64_t)i, .idx = i};
  }
  qsort(r, (size_t)n, sizeof *r, genetic_rank_cmp);
  if (n > k)
    n = k;
  for (int i = 0; i < n; i++)
    out[i] = r[i].idx;
  free(r);
  *idx = out;
  return n;
}

/* ---- The model-guided round ---------------------------------------------- */

/* Step 1: the round's population, the best `pop` of random samples, the
 * best measured and last round's population, by predicted score. */
static int genetic_seed_population(genetic *g, heron_error *err) {
  genetic_pool *w = &g->work;
  w->n = 0;
  genetic_set_clear(&g->seen);
  int rc = genetic_add_samples(g, w, g->pop, err);
  int *top = NULL;
  int ntop = rc == HERON_OK
                 ? genetic_history_top(g, g->history_topk, 0, &top, err)
                 : 0;
  if (ntop < 0)
    return ntop;
  for (int i = 0; i < ntop; i++) {
    const int64_t *cfg = heron_history_get(g->env->history, top[i])->config;
    uint64_t key = plugin_config_key(g->sp, cfg);
    if (genetic_set_add(&g->seen, key))
      genetic_pool_push(w, cfg, key, 0);
  }
  free(top);
  for (int i = 0; i < g->popl.n; i++)
    if (genetic_set_add(&g->seen, g->popl.key[i]))
      genetic_pool_push(w, genetic_pool_cfg(&g->popl, i), g->popl.key[i], 0);
  if (rc == HERON_OK)
    rc = genetic_predict(g, w, 0, err);
  if (rc != HERON_OK)
    return rc;
  genetic_sort(g, w->score, w->n);
  g->popl.n = 0;
  for (int i = 0; i < w->n && g->popl.n < g->pop; i++) {
    int j = g->order[i].idx;
    genetic_pool_push(&g->popl, genetic_pool_cfg(w, j), w->key[j], w->score[j]);
  }
  return HERON_OK;
}

/* Step 2, one generation: new keys, select_num roulette-selected parents,
 * `children` children predicted, then population = children + elite. */
static int genetic_generation(genetic *g, int gen, heron_error *err) {
  genetic_pool *pop = &g->popl, *next = &g->next;
  heron_rng *rng = g->env->rng;
  genetic_choose_keys(g, g->nkeys);
  genetic_weights(g, pop->score, pop->n, g->w);
  for (int s = 0; s < g->select_num; s++)
    g->sel[s] = genetic_spin(rng, g->w, pop->n);
  next->n = 0;
  genetic_set_clear(&g->seen);
  for (int c = 0; c < g->children && next->n < next->cap; c++) {
    int a = g->sel[heron_rng_below(rng, (uint64_t)g->select_num)];
    int b = g->sel[heron_rng_below(rng, (uint64_t)g->select_num)];
    int64_t *child = genetic_pool_cfg(next, next->n);
    int rc = genetic_child(g, genetic_pool_cfg(pop, a),
                           genetic_pool_cfg(pop, b), child, err);
    if (rc == HERON_EUNSAT)
      continue;
    if (rc != HERON_OK)
      return rc;
    uint64_t key = plugin_config_key(g->sp, child);
    if (genetic_set_add(&g->seen, key))
      genetic_pool_push(next, child, key, 0);
  }
  int nchildren = next->n;
  int rc = genetic_predict(g, next, 0, err);
  if (rc != HERON_OK)
    return rc;
  double best_child = -HUGE_VAL;
  for (int i = 0; i < nchildren; i++)
    best_child = next->score[i] > best_child ? next->score[i] : best_child;
  genetic_sort(g, pop->score, pop->n);
  for (int i = 0, kept = 0; i < pop->n && kept < g->elite; i++) {
    int j = g->order[i].idx;
    if (genetic_set_add(&g->seen, pop->key[j])) {
      genetic_pool_push(next, genetic_pool_cfg(pop, j), pop->key[j],
                        pop->score[j]);
      kept++;
    }
  }
  genetic_pool t = *pop;
  *pop = *next;
  *next = t;
  char names[512];
  genetic_key_names(g, names, sizeof names);
  g->env->log(g->env, HERON_LOG_DEBUG,
              "generation %d/%d: keys [%s]; %d children, best child "
              "%.4g, population %d",
              gen + 1, g->iter_walks, names, nchildren, best_child, pop->n);
  return HERON_OK;
}

/* Copies pool config i into the batch when it is neither measured nor
 * already in it.  Returns 1 when taken. */
static int genetic_take(genetic *g, const genetic_pool *p, int i, int64_t *out,
                        int *n) {
  if (genetic_set_has(&g->batch, p->key[i]) || genetic_measured(g, p->key[i]))
    return 0;
  genetic_set_add(&g->batch, p->key[i]);
  memcpy(out + (size_t)*n * (size_t)g->nvars, genetic_pool_cfg(p, i),
         (size_t)g->nvars * sizeof *out);
  (*n)++;
  return 1;
}

/* Step 3: epsilon * want by best prediction, the rest by roulette wheel over
 * what is left.  Writes how many each way took. */
static void genetic_pick(genetic *g, int want, int64_t *out, int *n,
                         int *by_best, int *by_wheel) {
  genetic_pool *pop = &g->popl;
  int nbest = (int)lround(g->epsilon * want);
  genetic_sort(g, pop->score, pop->n);
  for (int i = 0; i < pop->n && *n < nbest; i++)
    *by_best += genetic_take(g, pop, g->order[i].idx, out, n);
  /* The wheel spins over what is still eligible; a drawn entry's weight
   * drops to 0, so every spin takes a new config. */
  genetic_weights(g, pop->score, pop->n, g->w);
  for (int i = 0; i < pop->n; i++)
    if (genetic_set_has(&g->batch, pop->key[i]) ||
        genetic_measured(g, pop->key[i]))
      g->w[i] = 0;
  while (*n < want) {
    int i = genetic_spin(g->env->rng, g->w, pop->n);
    if (i < 0)
      break;
    g->w[i] = 0;
    *by_wheel += genetic_take(g, pop, i, out, n);
  }
}

/* Fills the batch up to `want` with constrained random configs that are
 * neither measured nor already in it.  Returns HERON_OK or a real error. */
static int genetic_fill_random(genetic *g, int want, int64_t *out, int *n,
                               heron_error *err) {
  int fails = 0, limit = 64 + 8 * want;
  while (*n < want && fails < limit) {
    int64_t *cfg = out + (size_t)*n * (size_t)g->nvars;
    heron_error e = {0};
    int rc = heron_space_sample(g->sp, g->env->rng, cfg, &e);
    if (rc != HERON_OK && rc != HERON_EUNSAT)
      return heron_error_set(err, rc, "genetic: sampling failed: %s", e.text);
    uint64_t key = rc == HERON_OK ? plugin_config_key(g->sp, cfg) : 0;
    if (rc != HERON_OK || genetic_measured(g, key) ||
        !genetic_set_add(&g->batch, key)) {
      fails++;
      continue;
    }
    (*n)++;
  }
  return HERON_OK;
}

int genetic_round_model(genetic *g, int want, int64_t *out, int *n,
                        heron_error *err) {
  int rc = genetic_seed_population(g, err);
  if (rc != HERON_OK)
    return rc;
  genetic_rank_keys(g);
  /* An empty population (no sample found, nothing measured) breeds
   * nothing; the random fill below has the last word. */
  for (int gen = 0; rc == HERON_OK && g->popl.n > 0 && gen < g->iter_walks;
       gen++)
    rc = genetic_generation(g, gen, err);
  if (rc != HERON_OK)
    return rc;
  int by_best = 0, by_wheel = 0;
  genetic_pick(g, want, out, n, &by_best, &by_wheel);
  double best = -HUGE_VAL;
  for (int i = 0; i < g->popl.n; i++)
    best = g->popl.score[i] > best ? g->popl.score[i] : best;
  rc = genetic_fill_random(g, want, out, n, err);
  g->env->log(g->env, HERON_LOG_INFO,
              "round %d: population %d, %d generations, best "
              "predicted %.4g; proposing %d (%d best predicted, %d roulette, "
              "%d random)",
              g->round, g->popl.n, g->iter_walks, best, *n, by_best, by_wheel,
              *n - by_best - by_wheel);
  return rc;
}

/* ---- The measured-fitness round (no model) ------------------------------- */

/* The population = the best `pop` measurements (GFLOP/s, failures 0).
 * Returns how many succeeded among them, or an error. */
static int genetic_population_from_history(genetic *g, heron_error *err) {
  int *top = NULL;
  int n = genetic_history_top(g, g->pop, 1, &top, err);
  if (n < 0)
    return n;
  int ok = 0;
  g->popl.n = 0;
  for (int i = 0; i < n; i++) {
    const heron_measurement *m = heron_history_get(g->env->history, top[i]);
    int good = m->status == HERON_MEAS_OK;
    ok += good;
    genetic_pool_push(&g->popl, m->config, plugin_config_key(g->sp, m->config),
                      good ? m->gflops : 0.0);
  }
  free(top);
  return ok;
}

int genetic_round_measured(genetic *g, int want, int64_t *out, int *n,
                           heron_error *err) {
  int ok = genetic_population_from_history(g, err);
  if (ok < 0)
    return ok;
  int children = 0;
  if (ok > 0) {
    genetic_pool *pop = &g->popl;
    g->has_rank = 0;
    memcpy(g->rank, g->cand, (size_t)g->ncand * sizeof *g->rank);
    genetic_weights(g, pop->score, pop->n, g->w);
    for (int tries = 0; *n < want && tries < 16 + 8 * want; tries++) {
      int a = genetic_spin(g->env->rng, g->w, pop->n);
      int b = genetic_spin(g->env->rng, g->w, pop->n);
      int64_t *child = out + (size_t)*n * (size_t)g->nvars;
      genetic_choose_keys(g, g->nkeys_fallback); /* no importance here */
      int rc = genetic_child(g, genetic_pool_cfg(pop, a),
                             genetic_pool_cfg(pop, b), child, err);
      if (rc == HERON_EUNSAT)
        continue;
      if (rc != HERON_OK)
        return rc;
      uint64_t key = plugin_config_key(g->sp, child);
      if (genetic_measured(g, key) || !genetic_set_add(&g->batch, key))
        continue;
      (*n)++;
      children++;
    }
  }
  int rc = genetic_fill_random(g, want, out, n, err);
  if (ok > 0)
    g->env->log(g->env, HERON_LOG_INFO,
                "round %d: no model: population %d measured (best "
                "%.4g GFLOP/s); proposing %d (%d children, %d random)",
                g->round, g->popl.n, g->popl.score[0], *n, children,
                *n - children);
  else
    g->env->log(g->env, HERON_LOG_INFO,
                "round %d: nothing measured ran yet: proposing %d "
                "constrained random configs",
                g->round, *n);
  return rc;
}
