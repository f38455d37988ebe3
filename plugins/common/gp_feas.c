/* plugins/common/gp_feas.c - least-squares GP classification with a probit
 * read-out (see gp_feas.h for the method and why). */
#include "gp_feas.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

/* Relevance weights: feature k's standardised coordinate is scaled by
 * sqrt(1 + RELEVANCE t_k^2), t_k = |mean over feasible - mean over
 * infeasible| / sd over all (see gp_feas.h). */
#define GP_FEAS_RELEVANCE 4.0

struct gp_feas {
  gp *model;
  double m0; /* prior mean of the latent: the clamped mean label */
};

/* Per feature, how far apart the two classes lie in units of the
 * feature's spread; all weights 1 when one class is empty. */
static void gp_feas_weights(const double *X, const int *feasible, int n, int d,
                            double *w) {
  for (int k = 0; k < d; k++) {
    double s1 = 0, s0 = 0, all = 0, sq = 0;
    int n1 = 0;
    for (int i = 0; i < n; i++) {
      double x = X[(size_t)i * d + k];
      all += x;
      if (feasible[i]) {
        s1 += x;
        n1++;
      } else {
        s0 += x;
      }
    }
    double mean = all / n;
    for (int i = 0; i < n; i++) {
      double t = X[(size_t)i * d + k] - mean;
      sq += t * t;
    }
    double sd = sqrt(sq / n);
    if (n1 == 0 || n1 == n || !(sd > 0)) {
      w[k] = 1.0;
      continue;
    }
    double t = fabs(s1 / n1 - s0 / (n - n1)) / sd;
    w[k] = sqrt(1.0 + GP_FEAS_RELEVANCE * t * t);
  }
}

int gp_feas_fit(const double *X, const int *feasible, int n, int d,
                gp_feas **out, heron_error *err) {
  if (!out || !feasible || n < 1 || d < 0 || (!X && d > 0))
    return heron_error_set(err, HERON_EINVAL,
                           "gp_feas: fit needs n >= 1 labelled points "
                           "(got n=%d, d=%d)",
                           n, d);
  double *y = malloc((size_t)n * sizeof *y);
  gp_feas *c = calloc(1, sizeof *c);
  if (!y || !c) {
    free(y);
    free(c);
    return heron_error_set(err, HERON_ENOMEM, "gp_feas: out of memory");
  }
  double mean = 0;
  for (int i = 0; i < n; i++) {
    y[i] = feasible[i] ? 1.0 : -1.0;
    mean += y[i];
  }
  mean /= n;
  c->m0 = fmax(-0.9, fmin(0.9, mean));
  double *w = malloc(((size_t)d + 1) * sizeof *w);
  if (!w) {
    free(y);
    free(c);
    return heron_error_set(err, HERON_ENOMEM, "gp_feas: out of memory");
  }
  gp_feas_weights(X, feasible, n, d, w);
  gp_options o;
  gp_options_init(&o);
  o.weights = w;
  o.standardize_y = 0;
  o.prior_mean = c->m0;
  /* Labels are exact, but a boundary drawn through a few points is not: the
   * noise grid starts higher than the regression's. */
  o.nnoises = 3;
  o.noises[0] = 0.02;
  o.noises[1] = 0.1;
  o.noises[2] = 0.3;
  int rc = gp_fit(X, y, n, d, &o, &c->model, err);
  free(y);
  free(w);
  if (rc != HERON_OK) {
    free(c);
    return rc;
  }
  *out = c;
  return HERON_OK;
}

int gp_feas_prob(const gp_feas *c, const double *Xc, int m, double *p,
                 heron_error *err) {
  if (!c || m < 0 || (m > 0 && (!Xc || !p)))
    return heron_error_set(err, HERON_EINVAL,
                           "gp_feas: prob needs a classifier and buffers "
                           "(m=%d)",
                           m);
  if (m == 0)
    return HERON_OK;
  double *var = malloc((size_t)m * sizeof *var);
  if (!var)
    return heron_error_set(err, HERON_ENOMEM, "gp_feas: out of memory");
  int rc = gp_predict(c->model, Xc, m, p, var, err);
  const double a = GP_FEAS_SLOPE;
  for (int j = 0; rc == HERON_OK && j < m; j++) {
    double q = gsl_cdf_ugaussian_P(a * p[j] / sqrt(1.0 + a * a * var[j]));
    /* Keep strictly inside (0, 1) so products and logs stay finite. */
    p[j] = fmin(1.0 - 1e-9, fmax(1e-9, q));
  }
  free(var);
  return rc;
}

const gp *gp_feas_model(const gp_feas *c) { return c->model; }

void gp_feas_free(gp_feas *c) {
  if (!c)
    return;
  gp_free(c->model);
  free(c);
}
