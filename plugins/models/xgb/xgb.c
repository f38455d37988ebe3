/* plugins/models/xgb/xgb.c - gradient-boosted trees (XGBoost) as a cost
 * model.
 *
 * This is the model Heron itself uses: XGBoost regression trees over the
 * values of the config's variables, predicting log(GFLOP/s) (or, with
 * objective=rank, a pairwise ranking score: only the order matters to a
 * strategy).  Every fit() trains a fresh booster on everything measured so
 * far; the engine calls it once a round, so `rounds` trees per fit keep a
 * round's training time small next to its measurements.
 *
 * Pre-trained mode: after load() the model predicts at once with the loaded
 * booster, and every later fit() continues boosting from the loaded
 * booster (XGBoost's training continuation: the new trees fit the residual
 * of the loaded ones on the new data) instead of starting from nothing, so
 * a model trained on one task's log gives the next task a head start.
 *
 * Model file: the header of plugins/common/model_file.h (shared with the
 * linear model; see README.md), then the booster:
 *
 *     heron-model 1\n model xgb\n nfeatures 34\n objective reg\n
 *     payload <bytes>\n <the booster as XGBoost's UBJSON>
 *
 * XGBoost reports failures through XGBGetLastError(); every call's failure
 * becomes a heron_error with that text, trimmed of XGBoost's time stamp and
 * source location so the reason fits the 160 characters of heron_error.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xgboost/c_api.h>

#include "heron/model.h"
#include "model_file.h"

/* ---- Parameters ---------------------------------------------------------- */

static const heron_param_spec xgb_params[] = {
    {.key = "rounds",
     .kind = HERON_PARAM_INT,
     .default_value = "80",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 10000,
     .help = "boosting rounds (trees) added per fit"},
    {.key = "objective",
     .kind = HERON_PARAM_CHOICE,
     .default_value = "reg",
     .choices = "reg|rank",
     .help = "reg (squared error on log GFLOP/s) or rank (pairwise ranking)"},
    {.key = "max_depth",
     .kind = HERON_PARAM_INT,
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 1,
     .hi = 20,
     .help = "maximum tree depth (default 7, 3 when objective=rank)"},
    {.key = "eta",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "0.3",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0.0001,
     .hi = 1,
     .help = "learning rate (shrinkage per tree)"},
    {.key = "gamma",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "1e-5",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000000000000.0,
     .help = "minimum loss reduction to split a leaf"},
    {.key = "min_child_weight",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "1",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000000000000.0,
     .help = "minimum hessian sum in a child"},
    {.key = "tree_method",
     .kind = HERON_PARAM_CHOICE,
     .default_value = "hist",
     .choices = "hist|exact",
     .help = "hist (histogram) or exact (greedy) splits"},
    {.key = "importance",
     .kind = HERON_PARAM_CHOICE,
     .default_value = "gain",
     .choices = "gain|weight",
     .help =
         "importance() reports gain (mean split gain) or weight (split count)"},
    {.key = "nthread",
     .kind = HERON_PARAM_INT,
     .default_value = "1",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1024,
     .help = "XGBoost threads; 0 = XGBoost's default (all cores).  1 by "
             "default: idle OpenMP threads spin, stealing cycles from the "
             "kernel measured right after each fit"},
    {.key = "seed",
     .kind = HERON_PARAM_INT,
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 2147483647,
     .help = "XGBoost's random seed (default: the run's --seed)"},
    {.key = NULL},
};

enum { XGB_REG, XGB_RANK };
static const char *const xgb_objectives[] = {"reg", "rank"};
static const char *const xgb_xgb_objectives[] = {"reg:squarederror",
                                                 "rank:pairwise"};
static const char *const xgb_tree_methods[] = {"hist", "exact"};
static const char *const xgb_importances[] = {"gain", "weight"};

#define XGB_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A model file larger than this is certainly not ours. */
#define XGB_MAX_FILE ((size_t)1 << 30)

typedef struct xgb {
  const heron_model_env *env; /* valid until destroy(); not ours */
  int d;                      /* features per row */
  int rounds, max_depth, objective, nthread;
  double eta, gamma, min_child_weight;
  int64_t seed;
  const char *tree_method; /* one of xgb_tree_methods */
  const char *importance;  /* one of xgb_importances */
  /* What predict() uses; NULL until the first fit or load. */
  BoosterHandle booster;
  /* The loaded model (UBJSON) that every fit continues from; NULL when the
   * model was not loaded.  Kept as bytes rather than a booster because
   * each fit needs a booster of its own to add trees to. */
  char *base;
  size_t base_len;
} xgb;

/* ---- XGBoost errors ------------------------------------------------------ */

/* XGBoost's message without its "[12:00:00] /path/src/x.cc:123: " prefix
 * and without the stack trace that may follow on later lines, copied into
 * buf. */
static const char *xgb_last_error(char *buf, size_t cap) {
  const char *s = XGBGetLastError();
  if (!s)
    s = "(XGBoost gave no message)";
  if (s[0] == '[') {
    const char *e = strstr(s, "] ");
    if (e)
      s = e + 2;
  }
  /* A source location looks like "path.cc:123: "; skip it when present. */
  const char *colon = strstr(s, ": ");
  if (colon && colon - s < 200) {
    const char *p = colon - 1;
    while (p > s && p[0] >= '0' && p[0] <= '9')
      p--;
    if (p > s && p[0] == ':' && p < colon - 1)
      s = colon + 2;
  }
  size_t n = strcspn(s, "\n");
  if (n >= cap)
    n = cap - 1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  return buf;
}

/* Records the failure of XGBoost call `what`. */
static int xgb_fail(heron_error *err, const char *what) {
  char why[160];
  return heron_error_set(err, HERON_EPLUGIN, "XGBoost %s failed: %s", what,
                         xgb_last_error(why, sizeof why));
}

/* ---- create / destroy ---------------------------------------------------- */

/* Reads `key` as one of choices[0..n) into *out (an index); fallback when
 * absent.  The message lists the allowed values. */
static int xgb_param_choice(const heron_param *params, int nparams,
                            const char *key, const char *const *choices, int n,
                            int fallback, int *out, heron_error *err) {
  const char *v = heron_param_get(params, nparams, key, NULL);
  if (!v) {
    *out = fallback;
    return HERON_OK;
  }
  for (int i = 0; i < n; i++)
    if (strcmp(v, choices[i]) == 0) {
      *out = i;
      return HERON_OK;
    }
  char list[128] = "";
  for (int i = 0; i < n; i++) {
    strncat(list, choices[i], sizeof list - strlen(list) - 1);
    if (i + 1 < n)
      strncat(list, ", ", sizeof list - strlen(list) - 1);
  }
  return heron_error_set(err, HERON_EINVAL,
                         "parameter %s = '%s' is not one of %s", key, v, list);
}

/* Reads and checks every parameter into m.  Nothing is allocated, so a
 * failure needs no clean-up. */
static int xgb_read_params(xgb *m, const heron_model_env *env,
                           const heron_param *p, int n, heron_error *err) {
  int64_t rounds, depth, nthread, seed;
  int tree_method, importance;
  int rc =
      xgb_param_choice(p, n, "objective", xgb_objectives,
                       XGB_COUNT(xgb_objectives), XGB_REG, &m->objective, err);
  /* Heron trains its ranking model with shallow trees: pairs carry less
   * information per row than targets do. */
  int64_t depth_default = m->objective == XGB_RANK ? 3 : 7;
  if (rc == HERON_OK)
    rc = heron_param_int(p, n, "rounds", 80, 1, 10000, &rounds, err);
  if (rc == HERON_OK)
    rc = heron_param_int(p, n, "max_depth", depth_default, 1, 20, &depth, err);
  if (rc == HERON_OK)
    rc = heron_param_double(p, n, "eta", 0.3, 1e-4, 1.0, &m->eta, err);
  if (rc == HERON_OK)
    rc = heron_param_double(p, n, "gamma", 1e-5, 0.0, 1e12, &m->gamma, err);
  if (rc == HERON_OK)
    rc = heron_param_double(p, n, "min_child_weight", 1.0, 0.0, 1e12,
                            &m->min_child_weight, err);
  if (rc == HERON_OK)
    rc = xgb_param_choice(p, n, "tree_method", xgb_tree_methods,
                          XGB_COUNT(xgb_tree_methods), 0, &tree_method, err);
  if (rc == HERON_OK)
    rc = xgb_param_choice(p, n, "importance", xgb_importances,
                          XGB_COUNT(xgb_importances), 0, &importance, err);
  if (rc == HERON_OK)
    rc = heron_param_int(p, n, "nthread", 1, 0, 1024, &nthread, err);
  /* XGBoost's seed is a signed 32-bit value in its model config; fold the
   * 64-bit task seed into that range so the default is always accepted. */
  if (rc == HERON_OK)
    rc = heron_param_int(p, n, "seed", (int64_t)(env->seed % INT_MAX), 0,
                         INT_MAX, &seed, err);
  if (rc != HERON_OK)
    return rc;
  m->rounds = (int)rounds;
  m->max_depth = (int)depth;
  m->nthread = (int)nthread;
  m->seed = seed;
  m->tree_method = xgb_tree_methods[tree_method];
  m->importance = xgb_importances[importance];
  return HERON_OK;
}

static int xgb_create(const heron_model_env *env, const heron_param *params,
                      int nparams, void **self, heron_error *err) {
  if (env->nfeatures < 1)
    return heron_error_set(err, HERON_EINVAL, "xgb: %d features",
                           env->nfeatures);
  xgb tmp = {.env = env, .d = env->nfeatures};
  int rc = xgb_read_params(&tmp, env, params, nparams, err);
  if (rc != HERON_OK)
    return rc;
  xgb *m = malloc(sizeof *m);
  if (!m)
    return heron_error_set(err, HERON_ENOMEM, "xgb: out of memory");
  *m = tmp;
  env->log(env, HERON_LOG_DEBUG,
           "objective=%s rounds=%d max_depth=%d eta=%g tree_method=%s",
           xgb_objectives[m->objective], m->rounds, m->max_depth, m->eta,
           m->tree_method);
  *self = m;
  return HERON_OK;
}

static void xgb_destroy(void *self) {
  xgb *m = self;
  if (!m)
    return;
  if (m->booster)
    XGBoosterFree(m->booster);
  free(m->base);
  free(m);
}

/* ---- Data ---------------------------------------------------------------- */

/* A DMatrix over X[n*d] (XGBoost wants floats; NaN marks a missing value,
 * which heron_space_features never produces but a user's data might). */
static int xgb_matrix(const double *X, int n, int d, DMatrixHandle *out,
                      heron_error *err) {
  size_t count = (size_t)n * (size_t)d;
  float *f = malloc((count ? count : 1) * sizeof *f);
  if (!f)
    return heron_error_set(err, HERON_ENOMEM, "xgb: out of memory (%d rows)",
                           n);
  for (size_t i = 0; i < count; i++)
    f[i] = (float)X[i];
  int bad = XGDMatrixCreateFromMat(f, (bst_ulong)n, (bst_ulong)d, NAN, out);
  free(f);
  return bad ? xgb_fail(err, "DMatrix creation") : HERON_OK;
}

static int xgb_set_labels(DMatrixHandle dm, const double *y, int n,
                          heron_error *err) {
  float *f = malloc((size_t)n * sizeof *f);
  if (!f)
    return heron_error_set(err, HERON_ENOMEM, "xgb: out of memory");
  for (int i = 0; i < n; i++)
    f[i] = (float)y[i];
  int bad = XGDMatrixSetFloatInfo(dm, "label", f, (bst_ulong)n);
  free(f);
  return bad ? xgb_fail(err, "setting labels") : HERON_OK;
}

/* ---- Booster parameters -------------------------------------------------- */

static int xgb_set(BoosterHandle h, const char *key, const char *value,
                   heron_error *err) {
  if (XGBoosterSetParam(h, key, value) == 0)
    return HERON_OK;
  char what[64];
  snprintf(what, sizeof what, "setting %s=%s", key, value);
  return xgb_fail(err, what);
}

static int xgb_set_num(BoosterHandle h, const char *key, double v,
                       heron_error *err) {
  char text[32];
  snprintf(text, sizeof text, "%.17g", v);
  return xgb_set(h, key, text, err);
}

/* Only the thread count matters for prediction. */
static int xgb_set_threads(const xgb *m, BoosterHandle h, heron_error *err) {
  return m->nthread > 0 ? xgb_set_num(h, "nthread", m->nthread, err) : HERON_OK;
}

/* The training parameters.  base_score (XGBoost's starting prediction) is
 * set to the mean target on a fresh regression fit: XGBoost's default 0.5
 * is far from typical log(GFLOP/s) values, and starting at the mean leaves
 * the trees only the shape to learn.  A continued fit keeps the loaded
 * model's base_score: its trees were grown on top of it. */
static int xgb_set_train_params(const xgb *m, BoosterHandle h, int fresh,
                                double ymean, heron_error *err) {
  int rc = xgb_set(h, "objective", xgb_xgb_objectives[m->objective], err);
  if (rc == HERON_OK)
    rc = xgb_set(h, "tree_method", m->tree_method, err);
  if (rc == HERON_OK)
    rc = xgb_set_num(h, "max_depth", m->max_depth, err);
  if (rc == HERON_OK)
    rc = xgb_set_num(h, "eta", m->eta, err);
  if (rc == HERON_OK)
    rc = xgb_set_num(h, "gamma", m->gamma, err);
  if (rc == HERON_OK)
    rc = xgb_set_num(h, "min_child_weight", m->min_child_weight, err);
  if (rc == HERON_OK)
    rc = xgb_set_num(h, "seed", (double)m->seed, err);
  if (rc == HERON_OK)
    rc = xgb_set_threads(m, h, err);
  if (rc == HERON_OK && fresh && m->objective == XGB_REG)
    rc = xgb_set_num(h, "base_score", ymean, err);
  return rc;
}

/* ---- fit / predict / importance ------------------------------------------ */

/* Checks the arguments every data call shares. */
static int xgb_check_shape(const xgb *m, const double *X, int n, int d,
                           heron_error *err) {
  if (d != m->d)
    return heron_error_set(err, HERON_EINVAL,
                           "xgb: %d features per row, the model has %d", d,
                           m->d);
  if (n < 0 || (n > 0 && !X))
    return heron_error_set(err, HERON_EINVAL, "xgb: bad rows (n = %d)", n);
  return HERON_OK;
}

/* Grows a booster on dm: from the loaded model when there is one (training
 * continuation), else from scratch.  *out is set only on success. */
static int xgb_train(const xgb *m, DMatrixHandle dm, double ymean,
                     BoosterHandle *out, heron_error *err) {
  BoosterHandle h = NULL;
  if (XGBoosterCreate(&dm, 1, &h) != 0)
    return xgb_fail(err, "booster creation");
  int rc = HERON_OK, start = 0;
  if (m->base) {
    /* As XGBoost's own xgb_model= continuation does: load the trees, then
     * apply this run's parameters, then number the new rounds after the
     * loaded ones. */
    if (XGBoosterLoadModelFromBuffer(h, m->base, (bst_ulong)m->base_len) != 0)
      rc = xgb_fail(err, "loading the pre-trained booster");
    else if (XGBoosterBoostedRounds(h, &start) != 0)
      rc = xgb_fail(err, "counting the pre-trained rounds");
  }
  if (rc == HERON_OK)
    rc = xgb_set_train_params(m, h, !m->base, ymean, err);
  for (int i = 0; rc == HERON_OK && i < m->rounds; i++)
    if (XGBoosterUpdateOneIter(h, start + i, dm) != 0)
      rc = xgb_fail(err, "boosting");
  if (rc != HERON_OK) {
    XGBoosterFree(h);
    return rc;
  }
  *out = h;
  return HERON_OK;
}

/* Trains on X, y.  A failed fit leaves the previous booster in place, so
 * the strategy keeps a usable (if older) model. */
static int xgb_fit(void *self, const double *X, const double *y, int n, int d,
                   heron_error *err) {
  xgb *m = self;
  int rc = xgb_check_shape(m, X, n, d, err);
  if (rc != HERON_OK)
    return rc;
  if (n < 1)
    return heron_error_set(err, HERON_EINVAL,
                           "xgb: fit needs at least one row (got %d)", n);
  double sum = 0;
  for (int i = 0; i < n; i++) {
    if (!isfinite(y[i]))
      return heron_error_set(err, HERON_EINVAL,
                             "xgb: target y[%d] = %g is not finite", i, y[i]);
    sum += y[i];
  }
  DMatrixHandle dm = NULL;
  rc = xgb_matrix(X, n, d, &dm, err);
  if (rc != HERON_OK)
    return rc;
  BoosterHandle h = NULL;
  rc = xgb_set_labels(dm, y, n, err);
  if (rc == HERON_OK)
    rc = xgb_train(m, dm, sum / n, &h, err);
  /* The booster keeps what it needs from the training matrix. */
  XGDMatrixFree(dm);
  if (rc != HERON_OK)
    return rc;
  if (m->booster)
    XGBoosterFree(m->booster);
  m->booster = h;
  m->env->log(m->env, HERON_LOG_DEBUG, "fitted %d rows, %d rounds%s", n,
              m->rounds, m->base ? " on top of the loaded model" : "");
  return HERON_OK;
}

static int xgb_untrained(heron_error *err) {
  return heron_error_set(err, HERON_EUNSUPPORTED,
                         "xgb: the model is not trained (no fit or load yet)");
}

static int xgb_predict(void *self, const double *X, int n, int d, double *out,
                       heron_error *err) {
  xgb *m = self;
  int rc = xgb_check_shape(m, X, n, d, err);
  if (rc != HERON_OK)
    return rc;
  if (!m->booster)
    return xgb_untrained(err);
  if (n == 0)
    return HERON_OK;
  DMatrixHandle dm = NULL;
  rc = xgb_matrix(X, n, d, &dm, err);
  if (rc != HERON_OK)
    return rc;
  static const char config[] =
      "{\"type\": 0, \"training\": false, \"iteration_begin\": 0, "
      "\"iteration_end\": 0, \"strict_shape\": false}";
  const bst_ulong *shape = NULL;
  bst_ulong dim = 0;
  const float *res = NULL;
  if (XGBoosterPredictFromDMatrix(m->booster, dm, config, &shape, &dim, &res) !=
      0) {
    rc = xgb_fail(err, "prediction");
  } else {
    bst_ulong total = dim ? 1 : 0;
    for (bst_ulong i = 0; i < dim; i++)
      total *= shape[i];
    if (total != (bst_ulong)n)
      rc = heron_error_set(err, HERON_EINTERNAL,
                           "xgb: XGBoost predicted %llu values for %d rows",
                           (unsigned long long)total, n);
    /* The result lives in XGBoost's thread-local buffer: copy it now. */
    for (int i = 0; rc == HERON_OK && i < n; i++)
      out[i] = res[i];
  }
  XGDMatrixFree(dm);
  return rc;
}

/* XGBoost names the features it never split on by omission and the others
 * "f<index>" (no feature names were given), so unused features score 0. */
static int xgb_importance(void *self, double *scores, int d, heron_error *err) {
  xgb *m = self;
  if (d != m->d)
    return heron_error_set(err, HERON_EINVAL,
                           "xgb: importance for %d features, the model has %d",
                           d, m->d);
  if (!m->booster)
    return xgb_untrained(err);
  char config[64];
  snprintf(config, sizeof config, "{\"importance_type\": \"%s\"}",
           m->importance);
  bst_ulong nfeat = 0, dim = 0;
  const char **names = NULL;
  const bst_ulong *shape = NULL;
  const float *val = NULL;
  if (XGBoosterFeatureScore(m->booster, config, &nfeat, &names, &dim, &shape,
                            &val) != 0)
    return xgb_fail(err, "feature importance");
  for (int j = 0; j < d; j++)
    scores[j] = 0.0;
  for (bst_ulong i = 0; i < nfeat; i++) {
    char *end = NULL;
    long j =
        names[i] && names[i][0] == 'f' ? strtol(names[i] + 1, &end, 10) : -1;
    if (end && *end == '\0' && j >= 0 && j < d)
      scores[j] = val[i];
  }
  return HERON_OK;
}

/* ---- The model file ------------------------------------------------------ */

/* The booster as XGBoost's UBJSON is the payload; the header
 * (plugins/common/model_file.h) adds the objective it was trained with,
 * which load() compares with this run's. */
static int xgb_save(void *self, const char *path, heron_error *err) {
  xgb *m = self;
  if (!m->booster)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "xgb: nothing to save, the model is not trained");
  bst_ulong len = 0;
  const char *bytes = NULL;
  if (XGBoosterSaveModelToBuffer(m->booster, "{\"format\": \"ubj\"}", &len,
                                 &bytes) != 0)
    return xgb_fail(err, "serialising the booster");
  const heron_mf_kv extra[] = {{"objective", xgb_objectives[m->objective]}};
  return heron_mf_write(path, "xgb", m->d, extra, 1, bytes, (size_t)len, err);
}

/* Builds a booster from a saved payload and checks it agrees with the
 * header about the feature count. */
static int xgb_booster_from(const xgb *m, const char *payload, size_t len,
                            const char *path, BoosterHandle *out,
                            heron_error *err) {
  BoosterHandle h = NULL;
  if (XGBoosterCreate(NULL, 0, &h) != 0)
    return xgb_fail(err, "booster creation");
  int rc = HERON_OK;
  bst_ulong nf = 0;
  /* Short enough that the path still fits in heron_error's text. */
  char why[64];
  if (XGBoosterLoadModelFromBuffer(h, payload, (bst_ulong)len) != 0)
    rc = heron_error_set(err, HERON_EPARSE,
                         "payload is not an XGBoost "
                         "model (%s): %s",
                         xgb_last_error(why, sizeof why), path);
  else if (XGBoosterGetNumFeature(h, &nf) != 0)
    rc = xgb_fail(err, "reading the loaded feature count");
  else if (nf != (bst_ulong)m->d)
    rc = heron_error_set(err, HERON_EPARSE,
                         "booster has %llu features, header says %d: %s",
                         (unsigned long long)nf, m->d, path);
  if (rc == HERON_OK)
    rc = xgb_set_threads(m, h, err);
  if (rc != HERON_OK) {
    XGBoosterFree(h);
    return rc;
  }
  *out = h;
  return HERON_OK;
}

/* Everything is checked and built on the side; only when it all worked do
 * the booster and the continuation base change, so a failed load leaves
 * the instance as it was. */
static int xgb_load(void *self, const char *path, heron_error *err) {
  xgb *m = self;
  heron_mf_file file;
  int rc = heron_mf_read(path, "xgb", m->d, XGB_MAX_FILE, &file, err);
  if (rc != HERON_OK)
    return rc;
  BoosterHandle booster = NULL;
  size_t base_len = file.payload_len;
  char *base = NULL;
  rc = xgb_booster_from(m, file.payload, base_len, path, &booster, err);
  if (rc == HERON_OK) {
    base = malloc(base_len ? base_len : 1);
    if (!base)
      rc = heron_error_set(err, HERON_ENOMEM, "xgb: out of memory");
    else
      memcpy(base, file.payload, base_len);
  }
  const char *objective = heron_mf_get(&file, "objective");
  if (rc == HERON_OK && objective &&
      strcmp(objective, xgb_objectives[m->objective]) != 0)
    m->env->log(m->env, HERON_LOG_WARN,
                "%s was trained with objective=%s, this run uses %s; "
                "new trees follow this run's objective",
                path, objective, xgb_objectives[m->objective]);
  heron_mf_release(&file);
  if (rc != HERON_OK) {
    if (booster)
      XGBoosterFree(booster);
    return rc;
  }
  if (m->booster)
    XGBoosterFree(m->booster);
  free(m->base);
  m->booster = booster;
  m->base = base;
  m->base_len = base_len;
  return HERON_OK;
}

/* ---- The descriptor ------------------------------------------------------ */

static const heron_model_plugin xgb_plugin = {
    .abi_version = HERON_MODEL_ABI_VERSION,
    .struct_size = sizeof(heron_model_plugin),
    .name = "xgb",
    .summary = "XGBoost gradient-boosted trees on log GFLOP/s (Heron's model)",
    HERON_PARAM_SPECS(xgb_params),
    .create = xgb_create,
    .fit = xgb_fit,
    .predict = xgb_predict,
    .importance = xgb_importance,
    .save = xgb_save,
    .load = xgb_load,
    .destroy = xgb_destroy,
};

HERON_PLUGIN_EXPORT const heron_model_plugin *heron_model_plugin_v1(void) {
  return &xgb_plugin;
}
