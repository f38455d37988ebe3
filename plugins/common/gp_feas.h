/* plugins/common/gp_feas.h - a feasibility classifier for BE-CBO: the
 * probability that a config builds, runs and gives the right result,
 * learned from the configs measured so far.
 *
 * Method: least-squares GP classification with a probit read-out.  Labels
 * are +1 (feasible) and -1 (infeasible); a GP regression (gp.h, Matern-5/2,
 * lengthscale and noise by marginal likelihood) is fitted to them about the
 * prior mean m0 = the mean label (clamped to [-0.9, 0.9]), unscaled, so far
 * from every measurement the latent falls back to the base rate.  With the
 * latent posterior N(mu, s2) at a candidate,
 *
 *     P(feasible) = Phi(a mu / sqrt(1 + a^2 s2)),   a = GP_FEAS_SLOPE = 2
 *
 * (the probit likelihood Phi(a f) averaged over the Gaussian posterior), so
 * a point amid feasible ones gets about Phi(2) = 0.98, one amid failures
 * about 0.02, and an uncertain one is pulled towards 0.5.  This costs one
 * GP fit, needs no iterative Laplace or EP step, and reuses the regression
 * code; its probabilities are monotone in the latent and calibrated enough
 * for ranking and thresholding, which is all BE-CBO does with them (its
 * dynamic threshold absorbs the remaining miscalibration).
 *
 * An isotropic kernel in tens of features cannot single out the one knob
 * an unknown constraint depends on (a threshold on the unroll step, say),
 * and a grid search cannot fit one lengthscale per feature.  So each
 * standardised feature is first weighted by how well it separates the two
 * classes on its own: w_k = sqrt(1 + 4 t_k^2), t_k = |mean over feasible -
 * mean over infeasible| / sd of the feature (a Fisher-style score; 1 for a
 * feature that does not separate them).  The marginal likelihood then
 * picks the overall lengthscale on the weighted distance.
 *
 * When every label is the same the classifier is still well defined: the
 * prior mean is clamped, so the probability stays away from 0 and 1 far
 * from the data.
 *
 * Ownership and errors as in gp.h: gp_feas_fit creates, gp_feas_free frees
 * (NULL accepted); inputs stay the caller's; HERON_EINVAL / HERON_ENOMEM /
 * HERON_EINTERNAL into the caller's heron_error.
 */
#ifndef HERON_PLUGIN_COMMON_GP_FEAS_H
#define HERON_PLUGIN_COMMON_GP_FEAS_H

#include "gp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The probit slope a of the read-out. */
#define GP_FEAS_SLOPE 2.0

typedef struct gp_feas gp_feas;

/* Fits the classifier to X[n * d] with feasible[i] != 0 for a feasible
 * point.  n >= 1.  Free with gp_feas_free. */
int gp_feas_fit(const double *X, const int *feasible, int n, int d,
                gp_feas **out, heron_error *err);

/* P(feasible) for Xc[m * d] into p[m], each in (0, 1). */
int gp_feas_prob(const gp_feas *c, const double *Xc, int m, double *p,
                 heron_error *err);

/* The underlying regression model (lengthscale, noise for logs). */
const gp *gp_feas_model(const gp_feas *c);

/* Frees the classifier; NULL is accepted. */
void gp_feas_free(gp_feas *c);

#ifdef __cplusplus
}
#endif
#endif /* HERON_PLUGIN_COMMON_GP_FEAS_H */
