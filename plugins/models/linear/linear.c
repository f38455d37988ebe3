/* plugins/models/linear/linear.c - ridge regression as a cost model.
 *
 * A fast, transparent baseline for the tree model: log(GFLOP/s) as a
 * linear function of the features.  Each fit standardises every feature by
 * its training mean and standard deviation, so the ridge penalty treats a
 * tile factor and a 0/1 switch alike and the coefficients are comparable,
 * then solves
 *
 *     (Z^T Z + lambda I) w = Z^T (y - mean y) + lambda w0
 *
 * with GSL (an SVD of the small d x d system, which also copes with
 * lambda = 0 and collinear features).  w0 is 0 normally, so the
 * coefficients shrink toward zero.  After load(), w0 holds the loaded
 * model's coefficients (converted to this fit's standardisation), so a fit
 * on few new rows moves the loaded model only as far as the new data
 * insists: the pre-trained mode.
 *
 * Features that are constant in the training data carry no information:
 * they get weight 0, or keep the loaded weight in pre-trained mode.
 * The model stores raw-feature coefficients beta_j = w_j / std_j and an
 * intercept, so predict() needs no standardisation; importance() reports
 * |w_j| = |beta_j| * std_j, the effect of one standard deviation.
 *
 * Model file: the header of plugins/common/model_file.h (shared with the
 * xgb model; see README.md), then a text payload:
 *
 *     heron-model 1\n model linear\n nfeatures 34\n payload <bytes>\n
 *     lambda <l>\n intercept <b>\n coef <beta_j> <std_j>\n  (d lines)
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "heron/model.h"
#include "model_file.h"

static const heron_param_spec linear_params[] = {
    {.key = "lambda",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "1",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0,
     .hi = 1000000000000.0,
     .help = "ridge penalty on standardised coefficients (toward the loaded "
             "ones in pre-trained mode)"},
    {.key = NULL},
};

/* A model file larger than this is certainly not ours. */
#define LINEAR_MAX_FILE ((size_t)1 << 26)

typedef struct linear {
  const heron_model_env *env; /* valid until destroy(); not ours */
  int d;
  double lambda;
  int trained; /* 1 after a fit or a load */
  double intercept;
  double *beta;  /* d raw-feature coefficients */
  double *scale; /* d training standard deviations (0: constant feature) */
  /* Pre-trained mode: the loaded coefficients and scales each fit shrinks
   * toward; NULL when nothing was loaded. */
  double *prior_beta, *prior_scale;
} linear;

/* ---- create / destroy ---------------------------------------------------- */

static void linear_destroy(void *self) {
  linear *m = self;
  if (!m)
    return;
  free(m->beta);
  free(m->scale);
  free(m->prior_beta);
  free(m->prior_scale);
  free(m);
}

static int linear_create(const heron_model_env *env, const heron_param *params,
                         int nparams, void **self, heron_error *err) {
  double lambda;
  if (env->nfeatures < 1)
    return heron_error_set(err, HERON_EINVAL, "linear: %d features",
                           env->nfeatures);
  int rc = heron_param_double(params, nparams, "lambda", 1.0, 0.0, 1e12,
                              &lambda, err);
  if (rc != HERON_OK)
    return rc;
  linear *m = calloc(1, sizeof *m);
  if (!m)
    return heron_error_set(err, HERON_ENOMEM, "linear: out of memory");
  m->env = env;
  m->d = env->nfeatures;
  m->lambda = lambda;
  m->beta = calloc((size_t)m->d, sizeof *m->beta);
  m->scale = calloc((size_t)m->d, sizeof *m->scale);
  if (!m->beta || !m->scale) {
    linear_destroy(m);
    return heron_error_set(err, HERON_ENOMEM, "linear: out of memory");
  }
  *self = m;
  return HERON_OK;
}

/* ---- fit ----------------------------------------------------------------- */

/* Per-feature statistics of one fit. */
typedef struct linear_stats {
  double *mean, *sd;
  int *cols; /* the p non-constant features */
  int p;
} linear_stats;

static int linear_check_rows(const linear *m, const double *X, int n, int d,
                             heron_error *err) {
  if (d != m->d)
    return heron_error_set(err, HERON_EINVAL,
                           "linear: %d features per row, the model has %d", d,
                           m->d);
  if (n < 0 || (n > 0 && !X))
    return heron_error_set(err, HERON_EINVAL, "linear: bad rows (n = %d)", n);
  return HERON_OK;
}

/* Rejects non-finite data: one NaN would silently turn every coefficient
 * into NaN. */
static int linear_check_finite(const double *X, const double *y, int n, int d,
                               heron_error *err) {
  for (int i = 0; i < n; i++) {
    if (!isfinite(y[i]))
      return heron_error_set(err, HERON_EINVAL,
                             "linear: target y[%d] = %g is not finite", i,
                             y[i]);
    for (int j = 0; j < d; j++)
      if (!isfinite(X[(size_t)i * d + j]))
        return heron_error_set(err, HERON_EINVAL,
                               "linear: feature %d of row %d is not finite", j,
                               i);
  }
  return HERON_OK;
}

/* Column means and population standard deviations; a column whose spread
 * is negligible next to its magnitude counts as constant. */
static void linear_column_stats(const double *X, int n, int d,
                                linear_stats *st) {
  st->p = 0;
  for (int j = 0; j < d; j++) {
    double s = 0, ss = 0;
    for (int i = 0; i < n; i++)
      s += X[(size_t)i * d + j];
    double mu = s / n;
    for (int i = 0; i < n; i++) {
      double e = X[(size_t)i * d + j] - mu;
      ss += e * e;
    }
    st->mean[j] = mu;
    st->sd[j] = sqrt(ss / n);
    if (st->sd[j] > 1e-12 * (1.0 + fabs(mu)))
      st->cols[st->p++] = j;
    else
      st->sd[j] = 0.0;
  }
}

/* Solves A w = b for the symmetric positive semi-definite A (p x p, which
 * this destroys) through its SVD, dropping singular values below the
 * round-off level: with lambda > 0 none are, with lambda = 0 this gives
 * the minimum-norm least-squares solution instead of dividing by zero.
 * Every array is ours, so GSL's allocation failures (which would call its
 * abort()ing error handler) cannot happen. */
static void linear_solve(double *a, double *v, double *s, double *work,
                         const double *b, double *w, int p) {
  gsl_matrix_view A = gsl_matrix_view_array(a, (size_t)p, (size_t)p);
  gsl_matrix_view V = gsl_matrix_view_array(v, (size_t)p, (size_t)p);
  gsl_vector_view S = gsl_vector_view_array(s, (size_t)p);
  gsl_vector_view W = gsl_vector_view_array(work, (size_t)p);
  gsl_linalg_SV_decomp(&A.matrix, &V.matrix, &S.vector, &W.vector);
  /* A now holds U: w = V diag(1/s) U^T b. */
  double tol = s[0] * p * DBL_EPSILON;
  for (int k = 0; k < p; k++) {
    double t = 0;
    for (int i = 0; i < p; i++)
      t += a[(size_t)i * p + k] * b[i];
    work[k] = s[k] > tol ? t / s[k] : 0.0;
  }
  for (int i = 0; i < p; i++) {
    double t = 0;
    for (int k = 0; k < p; k++)
      t += v[(size_t)i * p + k] * work[k];
    w[i] = t;
  }
}

/* The ridge solve on the non-constant columns: fills beta[cols[k]] and
 * returns the intercept.  r[n] is the target after removing the constant
 * columns' fixed contribution. */
static int linear_ridge(const linear *m, const double *X, const double *r,
                        int n, const linear_stats *st, double *beta,
                        double *intercept, heron_error *err) {
  int d = m->d, p = st->p;
  double rbar = 0;
  for (int i = 0; i < n; i++)
    rbar += r[i];
  rbar /= n;
  *intercept = rbar;
  if (p == 0)
    return HERON_OK;
  size_t pp = (size_t)p * p;
  double *mem =
      malloc(((size_t)n * p + 2 * pp + 5 * (size_t)p + n) * sizeof *mem);
  if (!mem)
    return heron_error_set(err, HERON_ENOMEM,
                           "linear: out of memory (%d rows, %d features)", n,
                           p);
  double *z = mem, *a = z + (size_t)n * p, *v = a + pp, *s = v + pp;
  double *work = s + p, *b = work + p, *w = b + p, *w0 = w + p, *rc = w0 + p;
  for (int i = 0; i < n; i++) {
    rc[i] = r[i] - rbar;
    for (int k = 0; k < p; k++) {
      int j = st->cols[k];
      z[(size_t)i * p + k] = (X[(size_t)i * d + j] - st->mean[j]) / st->sd[j];
    }
  }
  /* The prior, in this fit's standardisation: w0 = beta0 * sd. */
  for (int k = 0; k < p; k++)
    w0[k] =
        m->prior_beta ? m->prior_beta[st->cols[k]] * st->sd[st->cols[k]] : 0.0;
  gsl_matrix_view Z = gsl_matrix_view_array(z, (size_t)n, (size_t)p);
  gsl_matrix_view A = gsl_matrix_view_array(a, (size_t)p, (size_t)p);
  gsl_vector_view R = gsl_vector_view_array(rc, (size_t)n);
  gsl_vector_view B = gsl_vector_view_array(b, (size_t)p);
  gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, &Z.matrix, &Z.matrix, 0.0,
                 &A.matrix);
  gsl_blas_dgemv(CblasTrans, 1.0, &Z.matrix, &R.vector, 0.0, &B.vector);
  for (int k = 0; k < p; k++) {
    a[(size_t)k * p + k] += m->lambda;
    b[k] += m->lambda * w0[k];
  }
  linear_solve(a, v, s, work, b, w, p);
  for (int k = 0; k < p; k++) {
    int j = st->cols[k];
    beta[j] = w[k] / st->sd[j];
    *intercept -= beta[j] * st->mean[j];
  }
  free(mem);
  return HERON_OK;
}

/* Fits and, only when everything worked, replaces the coefficients, so a
 * failed fit leaves the previous model usable. */
static int linear_fit(void *self, const double *X, const double *y, int n,
                      int d, heron_error *err) {
  linear *m = self;
  int rc = linear_check_rows(m, X, n, d, err);
  if (rc == HERON_OK && n < 1)
    rc = heron_error_set(err, HERON_EINVAL,
                         "linear: fit needs at least one row (got %d)", n);
  if (rc == HERON_OK)
    rc = linear_check_finite(X, y, n, d, err);
  if (rc != HERON_OK)
    return rc;
  size_t dd = (size_t)d;
  double *mem = malloc((4 * dd + (size_t)n) * sizeof *mem);
  int *cols = malloc(dd * sizeof *cols);
  if (!mem || !cols) {
    free(mem);
    free(cols);
    return heron_error_set(err, HERON_ENOMEM, "linear: out of memory");
  }
  linear_stats st = {.mean = mem, .sd = mem + dd, .cols = cols};
  double *beta = mem + 2 * dd, *scale = mem + 3 * dd, *r = mem + 4 * dd;
  linear_column_stats(X, n, d, &st);
  /* Constant columns keep the loaded weight (or 0) and its scale; their
   * fixed contribution comes off the target before the solve. */
  for (int j = 0; j < d; j++) {
    int constant = st.sd[j] == 0.0;
    beta[j] = constant && m->prior_beta ? m->prior_beta[j] : 0.0;
    scale[j] = constant ? (m->prior_scale ? m->prior_scale[j] : 0.0) : st.sd[j];
  }
  for (int i = 0; i < n; i++) {
    r[i] = y[i];
    for (int j = 0; j < d; j++)
      if (st.sd[j] == 0.0)
        r[i] -= beta[j] * X[(size_t)i * d + j];
  }
  double intercept = 0;
  rc = linear_ridge(m, X, r, n, &st, beta, &intercept, err);
  if (rc == HERON_OK) {
    memcpy(m->beta, beta, dd * sizeof *beta);
    memcpy(m->scale, scale, dd * sizeof *scale);
    m->intercept = intercept;
    m->trained = 1;
    m->env->log(m->env, HERON_LOG_DEBUG,
                "fitted %d rows, %d of %d features vary%s", n, st.p, d,
                m->prior_beta ? " (toward the loaded model)" : "");
  }
  free(mem);
  free(cols);
  return rc;
}

/* ---- predict / importance ------------------------------------------------ */

static int linear_untrained(heron_error *err) {
  return heron_error_set(err, HERON_EUNSUPPORTED,
                         "linear: the model is not trained (no fit or load "
                         "yet)");
}

static int linear_predict(void *self, const double *X, int n, int d,
                          double *out, heron_error *err) {
  linear *m = self;
  int rc = linear_check_rows(m, X, n, d, err);
  if (rc != HERON_OK)
    return rc;
  if (!m->trained)
    return linear_untrained(err);
  for (int i = 0; i < n; i++) {
    double t = m->intercept;
    for (int j = 0; j < d; j++)
      t += m->beta[j] * X[(size_t)i * d + j];
    out[i] = t;
  }
  return HERON_OK;
}

static int linear_importance(void *self, double *scores, int d,
                             heron_error *err) {
  linear *m = self;
  if (d != m->d)
    return heron_error_set(err, HERON_EINVAL,
                           "linear: importance for %d features, the model "
                           "has %d",
                           d, m->d);
  if (!m->trained)
    return linear_untrained(err);
  for (int j = 0; j < d; j++)
    scores[j] = fabs(m->beta[j]) * m->scale[j];
  return HERON_OK;
}

/* ---- The model file ------------------------------------------------------ */

/* The payload: lambda, intercept and one "coef beta scale" line per
 * feature, with 17 significant digits so a reload predicts identically.
 * The header around it is heron_mf_write's (plugins/common/model_file.h). */
static char *linear_payload(const linear *m, size_t *len) {
  size_t cap = 128 + (size_t)m->d * 64;
  char *p = malloc(cap);
  if (!p)
    return NULL;
  size_t n = (size_t)snprintf(p, cap, "lambda %.17g\nintercept %.17g\n",
                              m->lambda, m->intercept);
  for (int j = 0; j < m->d && n < cap; j++)
    n += (size_t)snprintf(p + n, cap - n, "coef %.17g %.17g\n", m->beta[j],
                          m->scale[j]);
  *len = n;
  return p;
}

static int linear_save(void *self, const char *path, heron_error *err) {
  linear *m = self;
  if (!m->trained)
    return heron_error_set(err, HERON_EUNSUPPORTED,
                           "linear: nothing to save, the model is not "
                           "trained");
  size_t plen = 0;
  char *payload = linear_payload(m, &plen);
  if (!payload)
    return heron_error_set(err, HERON_ENOMEM, "linear: out of memory");
  int rc = heron_mf_write(path, "linear", m->d, NULL, 0, payload, plen, err);
  free(payload);
  return rc;
}

/* Parses the payload into intercept, beta[d], scale[d]. */
static int linear_parse_payload(const char *buf, size_t len, const char *path,
                                int d, double *intercept, double *beta,
                                double *scale, heron_error *err) {
  char line[256];
  size_t pos = 0;
  double lambda = 0;
  if (!heron_mf_next_line(buf, len, &pos, line, sizeof line) ||
      sscanf(line, "lambda %lg", &lambda) != 1 ||
      !heron_mf_next_line(buf, len, &pos, line, sizeof line) ||
      sscanf(line, "intercept %lg", intercept) != 1 || !isfinite(*intercept))
    return heron_error_set(err, HERON_EPARSE,
                           "bad linear payload (lambda and intercept lines): "
                           "%s",
                           path);
  for (int j = 0; j < d; j++)
    if (!heron_mf_next_line(buf, len, &pos, line, sizeof line) ||
        sscanf(line, "coef %lg %lg", &beta[j], &scale[j]) != 2 ||
        !isfinite(beta[j]) || !isfinite(scale[j]) || scale[j] < 0)
      return heron_error_set(err, HERON_EPARSE,
                             "bad linear payload (coefficient %d of %d): %s",
                             j + 1, d, path);
  if (pos != len)
    return heron_error_set(err, HERON_EPARSE,
                           "bad linear payload (data after coefficient %d): %s",
                           d, path);
  return HERON_OK;
}

/* Loads the coefficients and makes them the prior of every later fit.
 * Parsed into scratch arrays first, so a bad file changes nothing. */
static int linear_load(void *self, const char *path, heron_error *err) {
  linear *m = self;
  heron_mf_file file;
  int rc = heron_mf_read(path, "linear", m->d, LINEAR_MAX_FILE, &file, err);
  if (rc != HERON_OK)
    return rc;
  size_t dd = (size_t)m->d;
  double *pb = malloc(dd * sizeof *pb), *ps = malloc(dd * sizeof *ps);
  double intercept = 0;
  if (!pb || !ps)
    rc = heron_error_set(err, HERON_ENOMEM, "linear: out of memory");
  if (rc == HERON_OK)
    rc = linear_parse_payload(file.payload, file.payload_len, path, m->d,
                              &intercept, pb, ps, err);
  heron_mf_release(&file);
  if (rc != HERON_OK) {
    free(pb);
    free(ps);
    return rc;
  }
  memcpy(m->beta, pb, dd * sizeof *pb);
  memcpy(m->scale, ps, dd * sizeof *ps);
  m->intercept = intercept;
  m->trained = 1;
  free(m->prior_beta);
  free(m->prior_scale);
  m->prior_beta = pb;
  m->prior_scale = ps;
  return HERON_OK;
}

/* ---- The descriptor ------------------------------------------------------ */

static const heron_model_plugin linear_plugin = {
    .abi_version = HERON_MODEL_ABI_VERSION,
    .struct_size = sizeof(heron_model_plugin),
    .name = "linear",
    .summary = "ridge regression on standardised features (GSL)",
    HERON_PARAM_SPECS(linear_params),
    .create = linear_create,
    .fit = linear_fit,
    .predict = linear_predict,
    .importance = linear_importance,
    .save = linear_save,
    .load = linear_load,
    .destroy = linear_destroy,
};

HERON_PLUGIN_EXPORT const heron_model_plugin *heron_model_plugin_v1(void) {
  return &linear_plugin;
}
