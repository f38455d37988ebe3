/* plugins/common/gp.h - Gaussian-process regression for the BO strategies
 * (becbo, tsbo), built on GSL's linear algebra.
 *
 * The model
 * ---------
 * Inputs are standardised feature by feature with the training set's mean and
 * (population) standard deviation; a feature that is constant on the
 * training set carries no information about the target and is left out of
 * the distance altogether, in training and in prediction alike.  Targets are
 * standardised too (regression), or taken about a fixed prior mean without
 * scaling (the feasibility classifier, gp_feas.h).  The kernel is isotropic,
 * Matern-5/2 (default) or squared exponential, with signal variance 1 in
 * standardised units:
 *
 *     k(x, x') = matern52(|x - x'| / l)      r = |x - x'| / l,
 *     matern52(r) = (1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r)
 *     sqexp(r)    = exp(-r^2 / 2)
 *
 * (optionally with a fixed relevance weight per feature, gp_options), and
 * one lengthscale l and one noise variance s2 per fit, chosen by maximising
 * the log marginal likelihood over a small grid (gp_options).  Fitting costs
 * one Cholesky factorisation (gsl_linalg_cholesky_decomp1) of the n x n
 * matrix K + s2 I per grid point: O(G n^3 / 3); the strategies cap n.
 *
 * Posterior at candidates X* (m of them), with V = L^-1 K(X, X*):
 *
 *     mean = K(X*, X) alpha,   alpha = (K + s2 I)^-1 y
 *     var  = k(x*, x*) - colsum(V .* V)              (latent f, no noise)
 *     cov  = K(X*, X*) - V^T V                        (gp_joint_*)
 *
 * All outputs are in the caller's target units (the standardisation is
 * undone).  A joint sample over m candidates needs the Cholesky factor of
 * the m x m posterior covariance: O(m^2 n + m^3 / 3) once per candidate set
 * (gp_joint_prepare), then O(m^2) per sample (gp_joint_sample); m = 1000
 * with n = 300 takes a fraction of a second.
 *
 * Ownership and errors
 * --------------------
 * Every object is created by one function and freed by its own *_free,
 * which accepts NULL.  Input arrays stay the caller's (the model copies what
 * it keeps).  Functions that can fail return HERON_OK or a negative
 * heron_status and record the reason in the caller's heron_error (NULL
 * accepted): HERON_EINVAL for bad arguments (named), HERON_ENOMEM, and
 * HERON_EINTERNAL when a matrix stays numerically indefinite after the
 * largest jitter.  On failure no object is returned.
 *
 * GSL reports an indefinite matrix through its process-wide error handler,
 * which aborts by default; the Cholesky calls here switch that handler off
 * for the duration of the call and restore the previous one, so do not fit
 * models from several threads while another thread relies on GSL's handler.
 *
 * No globals: randomness comes from the caller's heron_rng.  Not
 * thread-safe per object; distinct objects are independent.
 */
#ifndef HERON_PLUGIN_COMMON_GP_H
#define HERON_PLUGIN_COMMON_GP_H

#include "heron/rng.h"
#include "heron/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gp_kernel {
  GP_MATERN52 = 0, /* Matern nu = 5/2: rough enough for kernel timings */
  GP_SQEXP = 1     /* squared exponential */
} gp_kernel;

/* Most grid points gp_options may list. */
#define GP_MAX_GRID 32

/* How to fit.  gp_options_init fills the defaults; change what you need. */
typedef struct gp_options {
  gp_kernel kernel;
  /* Candidate lengthscales, in standardised input units.  When
   * scale_by_dims is 1 each is multiplied by sqrt(active dimensions), so one
   * grid suits spaces of any size (random points lie about sqrt(2 d) apart
   * after standardisation).  1..GP_MAX_GRID values, each > 0. */
  double lengthscales[GP_MAX_GRID];
  int nlengthscales;
  int scale_by_dims;
  /* Candidate noise variances relative to the signal variance 1 of the
   * standardised targets.  1..GP_MAX_GRID values, each >= 0. */
  double noises[GP_MAX_GRID];
  int nnoises;
  /* 1: targets are standardised (mean 0, sd 1) before fitting;
   * 0: the model is fitted to y - prior_mean, unscaled (classification on
   * +/-1 labels, where the scale is part of the meaning). */
  int standardize_y;
  double prior_mean;
  /* Added to every diagonal for numerical safety (and grown tenfold, up to
   * 1e-2, while a factorisation fails). */
  double jitter;
  /* Optional relevance weights, one per input feature (d values, each >= 0),
   * multiplying the standardised coordinates: a cheap stand-in for one
   * lengthscale per feature (ARD), which a grid cannot search in tens of
   * dimensions.  NULL: all 1.  Borrowed for the gp_fit call only (the
   * model copies them).  With weights, scale_by_dims scales by
   * sqrt(sum of squared weights) instead of sqrt(d). */
  const double *weights;
} gp_options;

/* Defaults: Matern-5/2; lengthscales sqrt(d) x {0.1, 0.2, 0.35, 0.5, 0.75,
 * 1, 1.5, 2.5}; noise variances {1e-4, 1e-2, 0.1, 0.3}; standardised
 * targets; jitter 1e-8. */
void gp_options_init(gp_options *o);

typedef struct gp gp;

/* Fits a GP to X[n * d] (row-major, one row per point) and y[n] into *out.
 * n >= 1, d >= 0.  opt may be NULL for the defaults.  The model copies what
 * it needs; X and y stay the caller's.  Free with gp_free. */
int gp_fit(const double *X, const double *y, int n, int d,
           const gp_options *opt, gp **out, heron_error *err);

/* Frees the model; NULL is accepted. */
void gp_free(gp *g);

/* The chosen hyper-parameters: lengthscale (standardised input units, after
 * the sqrt(d) scaling) and noise variance (standardised target units); and
 * the number of features that vary on the training set. */
double gp_lengthscale(const gp *g);
double gp_noise(const gp *g);
int gp_active_dims(const gp *g);

/* Posterior of the latent function at Xc[m * d] (same d as the fit):
 * mean[m] and var[m] in target units (var may be NULL when not wanted).
 * Cost O(m n (n + d)).  HERON_EINVAL / HERON_ENOMEM. */
int gp_predict(const gp *g, const double *Xc, int m, double *mean, double *var,
               heron_error *err);

/* The kernel's correlation k(a, b) in [0, 1] between two feature vectors
 * a[d], b[d] under the fitted standardisation and lengthscale (1 for equal
 * points).  The strategies use it to spread a batch out. */
double gp_correlation(const gp *g, const double *a, const double *b);

/* Expected improvement over `best` for maximisation:
 *     EI = (mu - best - xi) Phi(z) + sd phi(z),  z = (mu - best - xi) / sd
 * and max(mu - best - xi, 0) when sd <= 0.  Pure function. */
double gp_ei(double mean, double sd, double best, double xi);

/* A joint posterior over one candidate set: prepare once, then draw many
 * samples.  The object copies nothing from the caller's Xc. */
typedef struct gp_joint gp_joint;

/* Computes the posterior mean and the Cholesky factor of the posterior
 * covariance (plus a jitter of 1e-6 of the signal variance, grown while the
 * factorisation fails) over Xc[m * d].  Free with gp_joint_free. */
int gp_joint_prepare(const gp *g, const double *Xc, int m, gp_joint **out,
                     heron_error *err);

/* Writes one joint sample of the latent function, out[m] in target units,
 * using the caller's rng. */
void gp_joint_sample(const gp_joint *j, heron_rng *rng, double *out);

/* The number of candidates, the posterior mean (m values, target units),
 * and the jitter that made the factorisation succeed (signal-variance
 * units). */
int gp_joint_size(const gp_joint *j);
const double *gp_joint_mean(const gp_joint *j);
double gp_joint_jitter(const gp_joint *j);

/* Frees the object; NULL is accepted. */
void gp_joint_free(gp_joint *j);

#ifdef __cplusplus
}
#endif
#endif /* HERON_PLUGIN_COMMON_GP_H */
