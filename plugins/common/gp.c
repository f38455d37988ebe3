/* plugins/common/gp.c - Gaussian-process regression (see gp.h for the
 * model, the cost of each call and who owns what).
 *
 * Layout of the work: gp_fit standardises the inputs, computes the n x n
 * matrix of squared distances once, and for every grid lengthscale turns it
 * into a kernel matrix; for every grid noise it factorises K + s2 I and
 * scores the log marginal likelihood.  The best pair is factorised again and
 * kept, with alpha = (K + s2 I)^-1 y.  Prediction and joint sampling reuse
 * that factor through GSL's BLAS (dtrsm, dsyrk, dtrmv).
 */
#include "gp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_vector.h>

/* Largest diagonal jitter tried before a factorisation is declared failed
 * (in standardised variance units: 1 % of the signal variance). */
#define GP_JITTER_MAX 1e-2

struct gp {
  int n, d, da;      /* training points, input features, active features */
  int *active;       /* indices of the da features that vary */
  double *mu, *sd;   /* their training mean and standard deviation */
  double *w;         /* their relevance weights (gp_options.weights or 1) */
  double *Xs;        /* n x da standardised training inputs */
  double ymean, ysd; /* target standardisation (ysd 1 when unscaled) */
  gp_kernel kernel;
  double ls, noise;
  gsl_matrix *L;     /* lower Cholesky factor of K + (noise + jitter) I */
  gsl_vector *alpha; /* (K + noise I)^-1 ys */
};

struct gp_joint {
  int m;
  double jitter;
  double ymean, ysd;
  double *mean;  /* m posterior means, target units */
  gsl_matrix *L; /* lower Cholesky factor of the posterior covariance */
  gsl_vector *z; /* scratch for one sample: the normal deviates */
};

void gp_options_init(gp_options *o) {
  static const double ls[] = {0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.5};
  static const double nz[] = {1e-4, 1e-2, 0.1, 0.3};
  memset(o, 0, sizeof *o);
  o->kernel = GP_MATERN52;
  o->nlengthscales = (int)(sizeof ls / sizeof ls[0]);
  memcpy(o->lengthscales, ls, sizeof ls);
  o->scale_by_dims = 1;
  o->nnoises = (int)(sizeof nz / sizeof nz[0]);
  memcpy(o->noises, nz, sizeof nz);
  o->standardize_y = 1;
  o->prior_mean = 0;
  o->jitter = 1e-8;
}

/* ---- Kernel ------------------------------------------------------------- */

/* The kernel as a function of the squared distance r2 and lengthscale ls. */
static double gp_kernel_of(gp_kernel kind, double r2, double ls) {
  if (kind == GP_SQEXP)
    return exp(-0.5 * r2 / (ls * ls));
  double r = sqrt(r2) / ls, s5r = sqrt(5.0) * r;
  return (1.0 + s5r + 5.0 * r * r / 3.0) * exp(-s5r);
}

/* Squared distance of two standardised rows of length da. */
static double gp_sqdist(const double *a, const double *b, int da) {
  double s = 0;
  for (int k = 0; k < da; k++) {
    double t = a[k] - b[k];
    s += t * t;
  }
  return s;
}

/* Standardises one raw feature row x[d] into out[da]. */
static void gp_standardize_row(const gp *g, const double *x, double *out) {
  for (int k = 0; k < g->da; k++)
    out[k] = (x[g->active[k]] - g->mu[k]) / g->sd[k] * g->w[k];
}

/* ---- Cholesky with GSL's error handler silenced ------------------------- */

/* gsl_linalg_cholesky_decomp1 reports an indefinite matrix through GSL's
 * error handler, which aborts by default: swap it off for the call only. */
static int gp_cholesky(gsl_matrix *A) {
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  int s = gsl_linalg_cholesky_decomp1(A);
  gsl_set_error_handler(old);
  return s;
}

/* Factorises base + (noise + jitter) I into L (same size), growing the
 * jitter tenfold up to GP_JITTER_MAX while the factorisation fails.
 * Writes the jitter used to *used; returns 0 or -1. */
static int gp_factor(const gsl_matrix *base, double noise, double jitter,
                     gsl_matrix *L, double *used) {
  for (double j = jitter > 0 ? jitter : 1e-10; j <= GP_JITTER_MAX * 1.0001;
       j *= 10) {
    gsl_matrix_memcpy(L, base);
    for (size_t i = 0; i < L->size1; i++)
      *gsl_matrix_ptr(L, i, i) += noise + j;
    if (gp_cholesky(L) == GSL_SUCCESS) {
      if (used)
        *used = j;
      return 0;
    }
  }
  return -1;
}

/* Log marginal likelihood from the factor L and targets ys: writes alpha. */
static double gp_lml_of(const gsl_matrix *L, const gsl_vector *ys,
                        gsl_vector *alpha) {
  gsl_vector_memcpy(alpha, ys);
  gsl_linalg_cholesky_svx(L, alpha);
  double fit = 0, logdet = 0;
  gsl_blas_ddot(ys, alpha, &fit);
  for (size_t i = 0; i < L->size1; i++)
    logdet += log(gsl_matrix_get(L, i, i));
  return -0.5 * fit - logdet - 0.5 * (double)L->size1 * log(2 * M_PI);
}

/* ---- Fitting ------------------------------------------------------------ */

static int gp_check_options(const gp_options *o, int d, heron_error *err) {
  if (o->nlengthscales < 1 || o->nlengthscales > GP_MAX_GRID)
    return heron_error_set(err, HERON_EINVAL,
                           "gp: nlengthscales must be 1..%d (got %d)",
                           GP_MAX_GRID, o->nlengthscales);
  if (o->nnoises < 1 || o->nnoises > GP_MAX_GRID)
    return heron_error_set(err, HERON_EINVAL,
                           "gp: nnoises must be 1..%d (got %d)", GP_MAX_GRID,
                           o->nnoises);
  for (int i = 0; i < o->nlengthscales; i++)
    if (!(o->lengthscales[i] > 0) || !isfinite(o->lengthscales[i]))
      return heron_error_set(err, HERON_EINVAL,
                             "gp: lengthscales[%d] = %g must be > 0", i,
                             o->lengthscales[i]);
  for (int i = 0; i < o->nnoises; i++)
    if (!(o->noises[i] >= 0) || !isfinite(o->noises[i]))
      return heron_error_set(err, HERON_EINVAL,
                             "gp: noises[%d] = %g must be >= 0", i,
                             o->noises[i]);
  if (o->kernel != GP_MATERN52 && o->kernel != GP_SQEXP)
    return heron_error_set(err, HERON_EINVAL, "gp: unknown kernel %d",
                           (int)o->kernel);
  for (int k = 0; o->weights && k < d; k++)
    if (!(o->weights[k] >= 0) || !isfinite(o->weights[k]))
      return heron_error_set(err, HERON_EINVAL,
                             "gp: weights[%d] = %g must be >= 0", k,
                             o->weights[k]);
  if (!(o->jitter >= 0) || o->jitter > GP_JITTER_MAX)
    return heron_error_set(err, HERON_EINVAL,
                           "gp: jitter %g must lie in [0, %g]", o->jitter,
                           GP_JITTER_MAX);
  return HERON_OK;
}

/* Picks the features that vary, their mean, sd and weight, and
 * standardises X. */
static int gp_set_inputs(gp *g, const double *X, const double *weights) {
  int n = g->n, d = g->d;
  g->active = malloc(((size_t)d + 1) * sizeof *g->active);
  g->mu = malloc(((size_t)d + 1) * sizeof *g->mu);
  g->sd = malloc(((size_t)d + 1) * sizeof *g->sd);
  g->w = malloc(((size_t)d + 1) * sizeof *g->w);
  if (!g->active || !g->mu || !g->sd || !g->w)
    return -1;
  g->da = 0;
  for (int k = 0; k < d; k++) {
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++)
      mean += X[(size_t)i * d + k];
    mean /= n;
    for (int i = 0; i < n; i++) {
      double t = X[(size_t)i * d + k] - mean;
      var += t * t;
    }
    double sd = sqrt(var / n);
    /* "Constant" relative to the feature's magnitude, so huge byte counts
     * and small flags are judged alike. */
    if (!(sd > 1e-9 * fmax(1.0, fabs(mean))))
      continue;
    g->active[g->da] = k;
    g->mu[g->da] = mean;
    g->sd[g->da] = sd;
    g->w[g->da] = weights ? weights[k] : 1.0;
    g->da++;
  }
  g->Xs = malloc(((size_t)n * g->da + 1) * sizeof *g->Xs);
  if (!g->Xs)
    return -1;
  for (int i = 0; i < n; i++)
    gp_standardize_row(g, X + (size_t)i * d, g->Xs + (size_t)i * g->da);
  return 0;
}

/* Standardised targets ys (or y - prior_mean) and their scale. */
static void gp_set_targets(gp *g, const double *y, const gp_options *o,
                           gsl_vector *ys) {
  int n = g->n;
  if (o->standardize_y) {
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++)
      mean += y[i];
    mean /= n;
    for (int i = 0; i < n; i++)
      var += (y[i] - mean) * (y[i] - mean);
    double sd = sqrt(var / n);
    g->ymean = mean;
    g->ysd = sd > 1e-12 * fmax(1.0, fabs(mean)) ? sd : 1.0;
  } else {
    g->ymean = o->prior_mean;
    g->ysd = 1.0;
  }
  for (int i = 0; i < n; i++)
    gsl_vector_set(ys, (size_t)i, (y[i] - g->ymean) / g->ysd);
}

/* Fills K[i][j] = k(d2[i][j]) for lengthscale ls. */
static void gp_kernel_matrix(gp_kernel kind, const gsl_matrix *d2, double ls,
                             gsl_matrix *K) {
  for (size_t i = 0; i < d2->size1; i++)
    for (size_t j = 0; j <= i; j++) {
      double v = gp_kernel_of(kind, gsl_matrix_get(d2, i, j), ls);
      gsl_matrix_set(K, i, j, v);
      gsl_matrix_set(K, j, i, v);
    }
}

/* Grid search over (lengthscale, noise); leaves the winner's factor in g. */
static int gp_select(gp *g, const gp_options *o, const gsl_vector *ys,
                     heron_error *err) {
  size_t n = (size_t)g->n;
  gsl_matrix *d2 = gsl_matrix_alloc(n, n), *K = gsl_matrix_alloc(n, n);
  gsl_matrix *L = gsl_matrix_alloc(n, n);
  gsl_vector *alpha = gsl_vector_alloc(n);
  int rc = (d2 && K && L && alpha)
               ? HERON_OK
               : heron_error_set(err, HERON_ENOMEM, "gp: out of memory");
  for (size_t i = 0; rc == HERON_OK && i < n; i++)
    for (size_t j = 0; j <= i; j++) {
      double v = gp_sqdist(g->Xs + i * g->da, g->Xs + j * g->da, g->da);
      gsl_matrix_set(d2, i, j, v);
      gsl_matrix_set(d2, j, i, v);
    }
  double w2 = 0;
  for (int k = 0; k < g->da; k++)
    w2 += g->w[k] * g->w[k];
  double scale = o->scale_by_dims ? sqrt(w2 > 0 ? w2 : 1.0) : 1;
  double best = -INFINITY, best_ls = 0, best_noise = 0;
  for (int a = 0; rc == HERON_OK && a < o->nlengthscales; a++) {
    double ls = o->lengthscales[a] * scale;
    gp_kernel_matrix(g->kernel, d2, ls, K);
    for (int b = 0; b < o->nnoises; b++) {
      if (gp_factor(K, o->noises[b], o->jitter, L, NULL) != 0)
        continue;
      double lml = gp_lml_of(L, ys, alpha);
      if (isfinite(lml) && lml > best) {
        best = lml;
        best_ls = ls;
        best_noise = o->noises[b];
      }
    }
  }
  if (rc == HERON_OK && !isfinite(best))
    rc = heron_error_set(err, HERON_EINTERNAL,
                         "gp: no grid point gave a positive definite kernel "
                         "matrix (n=%d, %d active features)",
                         g->n, g->da);
  if (rc == HERON_OK) {
    g->ls = best_ls;
    g->noise = best_noise;
    gp_kernel_matrix(g->kernel, d2, best_ls, K);
    gp_factor(K, best_noise, o->jitter, L, NULL);
    gp_lml_of(L, ys, alpha);
    g->L = L;
    g->alpha = alpha;
    L = NULL;
    alpha = NULL;
  }
  gsl_matrix_free(d2);
  gsl_matrix_free(K);
  gsl_matrix_free(L);
  gsl_vector_free(alpha);
  return rc;
}

int gp_fit(const double *X, const double *y, int n, int d,
           const gp_options *opt, gp **out, heron_error *err) {
  gp_options defaults;
  if (!opt) {
    gp_options_init(&defaults);
    opt = &defaults;
  }
  if (!out || n < 1 || d < 0 || (!X && d > 0) || !y)
    return heron_error_set(err, HERON_EINVAL,
                           "gp: fit needs n >= 1 points and d >= 0 features "
                           "(got n=%d, d=%d)",
                           n, d);
  for (int i = 0; i < n; i++)
    if (!isfinite(y[i]))
      return heron_error_set(err, HERON_EINVAL,
                             "gp: target y[%d] = %g is not finite", i, y[i]);
  int rc = gp_check_options(opt, d, err);
  if (rc != HERON_OK)
    return rc;
  gp *g = calloc(1, sizeof *g);
  gsl_vector *ys = gsl_vector_alloc((size_t)n);
  if (!g || !ys) {
    free(g);
    gsl_vector_free(ys);
    return heron_error_set(err, HERON_ENOMEM, "gp: out of memory");
  }
  g->n = n;
  g->d = d;
  g->kernel = opt->kernel;
  if (gp_set_inputs(g, X, opt->weights) != 0) {
    rc = heron_error_set(err, HERON_ENOMEM, "gp: out of memory");
  } else {
    gp_set_targets(g, y, opt, ys);
    rc = gp_select(g, opt, ys, err);
  }
  gsl_vector_free(ys);
  if (rc != HERON_OK) {
    gp_free(g);
    return rc;
  }
  *out = g;
  return HERON_OK;
}

void gp_free(gp *g) {
  if (!g)
    return;
  free(g->active);
  free(g->mu);
  free(g->sd);
  free(g->w);
  free(g->Xs);
  gsl_matrix_free(g->L);
  gsl_vector_free(g->alpha);
  free(g);
}

double gp_lengthscale(const gp *g) { return g->ls; }
double gp_noise(const gp *g) { return g->noise; }
int gp_active_dims(const gp *g) { return g->da; }

/* ---- Prediction --------------------------------------------------------- */

/* The n x m cross-kernel K(X, Xc) and the standardised candidates
 * (m x da, written to cs when not NULL). */
static gsl_matrix *gp_cross(const gp *g, const double *Xc, int m, double *cs) {
  gsl_matrix *Ks = gsl_matrix_alloc((size_t)g->n, (size_t)m);
  double *row = malloc(((size_t)g->da + 1) * sizeof *row);
  if (!Ks || !row) {
    gsl_matrix_free(Ks);
    free(row);
    return NULL;
  }
  for (int j = 0; j < m; j++) {
    double *x = cs ? cs + (size_t)j * g->da : row;
    gp_standardize_row(g, Xc + (size_t)j * g->d, x);
    for (int i = 0; i < g->n; i++)
      gsl_matrix_set(
          Ks, (size_t)i, (size_t)j,
          gp_kernel_of(g->kernel,
                       gp_sqdist(g->Xs + (size_t)i * g->da, x, g->da), g->ls));
  }
  free(row);
  return Ks;
}

/* Standardised posterior means (m values) from the cross-kernel. */
static void gp_mean_of(const gp *g, const gsl_matrix *Ks, double *mean) {
  gsl_vector_view mv = gsl_vector_view_array(mean, Ks->size2);
  gsl_blas_dgemv(CblasTrans, 1.0, Ks, g->alpha, 0.0, &mv.vector);
}

int gp_predict(const gp *g, const double *Xc, int m, double *mean, double *var,
               heron_error *err) {
  if (!g || m < 0 || (m > 0 && (!Xc || !mean)))
    return heron_error_set(err, HERON_EINVAL,
                           "gp: predict needs a model, candidates and a "
                           "mean buffer (m=%d)",
                           m);
  if (m == 0)
    return HERON_OK;
  gsl_matrix *Ks = gp_cross(g, Xc, m, NULL);
  if (!Ks)
    return heron_error_set(err, HERON_ENOMEM, "gp: out of memory");
  gp_mean_of(g, Ks, mean);
  for (int j = 0; j < m; j++)
    mean[j] = g->ymean + g->ysd * mean[j];
  if (var) {
    /* V = L^-1 Ks in place; var = 1 - |V_j|^2 per column. */
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, g->L,
                   Ks);
    for (int j = 0; j < m; j++) {
      double s = 0;
      for (int i = 0; i < g->n; i++) {
        double v = gsl_matrix_get(Ks, (size_t)i, (size_t)j);
        s += v * v;
      }
      double v = 1.0 - s;
      var[j] = (v > 0 ? v : 0) * g->ysd * g->ysd;
    }
  }
  gsl_matrix_free(Ks);
  return HERON_OK;
}

double gp_correlation(const gp *g, const double *a, const double *b) {
  double r2 = 0;
  for (int k = 0; k < g->da; k++) {
    int f = g->active[k];
    double t = (a[f] - b[f]) / g->sd[k] * g->w[k];
    r2 += t * t;
  }
  return gp_kernel_of(g->kernel, r2, g->ls);
}

double gp_ei(double mean, double sd, double best, double xi) {
  double imp = mean - best - xi;
  if (!(sd > 0))
    return imp > 0 ? imp : 0;
  double z = imp / sd;
  double ei = imp * gsl_cdf_ugaussian_P(z) + sd * gsl_ran_ugaussian_pdf(z);
  return ei > 0 ? ei : 0;
}

/* ---- Joint posterior sampling ------------------------------------------- */

void gp_joint_free(gp_joint *j) {
  if (!j)
    return;
  free(j->mean);
  gsl_matrix_free(j->L);
  gsl_vector_free(j->z);
  free(j);
}

/* The m x m prior covariance among standardised candidates cs[m * da]. */
static void gp_prior_cov(const gp *g, const double *cs, int m, gsl_matrix *C) {
  for (int a = 0; a < m; a++)
    for (int b = 0; b <= a; b++) {
      double v = gp_kernel_of(
          g->kernel,
          gp_sqdist(cs + (size_t)a * g->da, cs + (size_t)b * g->da, g->da),
          g->ls);
      gsl_matrix_set(C, (size_t)a, (size_t)b, v);
      gsl_matrix_set(C, (size_t)b, (size_t)a, v);
    }
}

int gp_joint_prepare(const gp *g, const double *Xc, int m, gp_joint **out,
                     heron_error *err) {
  if (!g || !out || m < 1 || !Xc)
    return heron_error_set(err, HERON_EINVAL,
                           "gp: joint sampling needs a model and m >= 1 "
                           "candidates (got m=%d)",
                           m);
  gp_joint *j = calloc(1, sizeof *j);
  double *cs = malloc(((size_t)m * g->da + 1) * sizeof *cs);
  gsl_matrix *C = gsl_matrix_alloc((size_t)m, (size_t)m);
  gsl_matrix *Ks = NULL;
  int rc = HERON_OK;
  if (j) {
    j->mean = malloc((size_t)m * sizeof *j->mean);
    j->L = gsl_matrix_alloc((size_t)m, (size_t)m);
    j->z = gsl_vector_alloc((size_t)m);
  }
  if (!j || !cs || !C || !j->mean || !j->L || !j->z ||
      !(Ks = gp_cross(g, Xc, m, cs))) {
    rc = heron_error_set(err, HERON_ENOMEM, "gp: out of memory");
    goto done;
  }
  j->m = m;
  j->ymean = g->ymean;
  j->ysd = g->ysd;
  gp_mean_of(g, Ks, j->mean);
  for (int a = 0; a < m; a++)
    j->mean[a] = g->ymean + g->ysd * j->mean[a];
  /* Posterior covariance C = K(Xc, Xc) - V^T V with V = L^-1 Ks; dsyrk
   * fills the lower triangle, which is all the Cholesky reads. */
  gp_prior_cov(g, cs, m, C);
  gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, g->L,
                 Ks);
  gsl_blas_dsyrk(CblasLower, CblasTrans, -1.0, Ks, 1.0, C);
  /* Near-duplicate candidates make C singular: start at 1e-6 of the
   * signal variance, well below any noise level the fit can choose. */
  if (gp_factor(C, 0.0, 1e-6, j->L, &j->jitter) != 0)
    rc = heron_error_set(err, HERON_EINTERNAL,
                         "gp: posterior covariance over %d candidates stays "
                         "indefinite with jitter %g",
                         m, GP_JITTER_MAX);
done:
  free(cs);
  gsl_matrix_free(C);
  gsl_matrix_free(Ks);
  if (rc != HERON_OK) {
    gp_joint_free(j);
    return rc;
  }
  *out = j;
  return HERON_OK;
}

void gp_joint_sample(const gp_joint *j, heron_rng *rng, double *out) {
  for (int a = 0; a < j->m; a++)
    gsl_vector_set(j->z, (size_t)a, heron_rng_normal(rng));
  gsl_blas_dtrmv(CblasLower, CblasNoTrans, CblasNonUnit, j->L, j->z);
  for (int a = 0; a < j->m; a++)
    out[a] = j->mean[a] + j->ysd * gsl_vector_get(j->z, (size_t)a);
}

int gp_joint_size(const gp_joint *j) { return j->m; }
const double *gp_joint_mean(const gp_joint *j) { return j->mean; }
double gp_joint_jitter(const gp_joint *j) { return j->jitter; }
