/* heron/space.h - the search space of a task: a constraint satisfaction
 * problem (CSP) over integer variables, and the operations strategies use.
 *
 * A space has `nvars` integer variables.  Some are knobs (what a strategy
 * decides: tile factors, unroll step, vector width, ...); the others are
 * auxiliary (axis lengths, fused extents, buffer sizes) and follow from the
 * knobs through the constraints.  The constraints are the primitives
 *
 *   PROD   z = x1 * x2 * ... * xn
 *   SUM    z = x1 + x2 + ... + xn
 *   EQ     x == y          NE  x != y
 *   LE     x <= y          LT  x <  y
 *   IN     x is one of a listed set of integers
 *   SELECT z = x[s]        (s indexes a list of variables)
 *
 * each optionally conditioned on a 0/1 variable (enforced only when it is 1).
 *
 * A *config* is an array of `nvars` int64_t values, one per variable, in
 * variable order; the caller allocates it.  A config is valid when every
 * constraint holds.  A *partial* config marks free variables with
 * HERON_UNSET.
 *
 * A space belongs to its task (heron/task.h) and is read-only once built:
 * every function here takes `const heron_space *` and may be called from
 * several threads at once, each with its own heron_rng.
 */
#ifndef HERON_SPACE_H
#define HERON_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "heron/rng.h"
#include "heron/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct heron_space heron_space;

/* Marks a variable that a partial config leaves free. */
#define HERON_UNSET INT64_MIN

/* Constraint kinds, as reported by heron_space_constraint_kind. */
typedef enum heron_constraint_kind {
  HERON_C_PROD = 1,
  HERON_C_SUM,
  HERON_C_EQ,
  HERON_C_NE,
  HERON_C_LE,
  HERON_C_LT,
  HERON_C_IN,
  HERON_C_SELECT,
  /* A restriction written as an expression (a T1 file's "Conditions"):
   * holds when the expression over xs[0..nx) is true; its text is what
   * heron_space_constraint_str gives. */
  HERON_C_EXPR
} heron_constraint_kind;

/* ---- Variables --------------------------------------------------------- */

/* Number of variables (the length of every config). */
HERON_API int heron_space_nvars(const heron_space *sp);

/* Number of knobs, and the variable index of the i-th knob (0 <= i <
 * nknobs); knobs are listed in the order the rules created them. */
HERON_API int heron_space_nknobs(const heron_space *sp);
HERON_API int heron_space_knob(const heron_space *sp, int i);

/* The variable's name (static for the space's lifetime), e.g.
 * "C.tile.i.1", "unroll".  NULL for an index out of range. */
HERON_API const char *heron_space_var_name(const heron_space *sp, int v);

/* 1 when variable v is a knob, 0 when auxiliary, HERON_EINVAL when out of
 * range. */
HERON_API int heron_space_var_is_knob(const heron_space *sp, int v);

/* The index of the variable called `name`, or HERON_ENOTFOUND. */
HERON_API int heron_space_find_var(const heron_space *sp, const char *name);

/* The variable's initial domain: every value lies in [*lo, *hi].  When the
 * domain is an explicit set (divisors of an extent, listed candidates),
 * *vals points to its sorted values (owned by the space) and *nvals is their
 * number; otherwise *vals is NULL and *nvals is 0.  Any out-pointer may be
 * NULL.  Returns HERON_OK or HERON_EINVAL. */
HERON_API int heron_space_var_domain(const heron_space *sp, int v, int64_t *lo,
                                     int64_t *hi, const int64_t **vals,
                                     int *nvals);

/* ---- Constraints ------------------------------------------------------- */

/* Number of constraints. */
HERON_API int heron_space_nconstraints(const heron_space *sp);

/* Kind of constraint c (a heron_constraint_kind), or HERON_EINVAL. */
HERON_API int heron_space_constraint_kind(const heron_space *sp, int c);

/* Writes constraint c in readable form ("C.tile.i.0 * C.tile.i.1 == 1024",
 * "if pack.A: bytes.A <= 1048576") into buf (always NUL-terminated when
 * cap > 0).  Returns the length it needed (like snprintf) or HERON_EINVAL. */
HERON_API int heron_space_constraint_str(const heron_space *sp, int c,
                                         char *buf, size_t cap);

/* The raw operands of constraint c, for code that wants to evaluate
 * constraints itself (independent checkers, prompt builders): *kind (a
 * heron_constraint_kind), *z, *xs and *nx (variable indices, owned by the
 * space), *cond (-1 or a 0/1 variable), *vals and *nvals (the IN set).
 * Operand meaning per kind: PROD/SUM z = op(xs); EQ/NE/LE/LT "z ? xs[0]";
 * IN z in vals; SELECT z = xs[1 + value of xs[0]]; EXPR: the expression
 * (heron_space_constraint_str) over the variables xs holds, z == xs[0].  Any
 * out-pointer may be NULL.  Returns HERON_OK or HERON_EINVAL. */
HERON_API int heron_space_constraint_get(const heron_space *sp, int c,
                                         int *kind, int *z, const int **xs,
                                         int *nx, int *cond,
                                         const int64_t **vals, int *nvals);

/* ---- Sampler modes ---------------------------------------------------- */

/* How heron_space_sample draws.  Every caller of heron_space_sample (every
 * strategy) draws by the space's mode, so a mode changes no strategy. */
typedef enum heron_sampler {
  /* "heron", the default: constrained random sampling, each knob in turn
   * takes a value drawn uniformly from what propagation leaves possible.
   * Fast on any space, but not uniform over the valid configs: a value with
   * few completions below it is drawn as often as one with many. */
  HERON_SAMPLER_HERON = 0,
  /* "uniform": every valid config is drawn with the same probability 1/N.
   * Setting the mode counts the solutions below each choice of the
   * solver's search tree once (memoised on the propagated state; see
   * core/space/uniform.c); each draw then takes each variable's value with
   * probability count(child) / count(node).  Exact when the space can be
   * counted that way (tiling spaces of 10^9 configs and the T1 spaces
   * can); otherwise each value is weighed by estimated counts (random
   * probes) and the draw is only close to uniform: heron_space_sampler
   * tells which. */
  HERON_SAMPLER_UNIFORM = 1
} heron_sampler;

/* The mode's name ("heron", "uniform"), or NULL for an unknown mode. */
HERON_API const char *heron_sampler_name(heron_sampler mode);

/* The mode called `name`, or HERON_EINVAL. */
HERON_API int heron_sampler_parse(const char *name);

/* Sets the space's sampler mode; for HERON_SAMPLER_UNIFORM this counts the
 * space first (milliseconds for a T1 space, 19 s of CPU time for a GEMM
 * 512^3 cpu space of 5.5e8 configs; memory in proportion to the distinct
 * nodes of its search tree).  Not thread-safe:
 * call it before the space is shared (heron_task_spec.sampler does it when
 * the task is built).  HERON_OK, HERON_EINVAL, HERON_ENOMEM. */
HERON_API int heron_space_set_sampler(heron_space *sp, heron_sampler mode,
                                      heron_error *err);

/* The space's sampler mode.  *exact (may be NULL) is 1 when its draws are
 * exactly uniform over the valid configs (HERON_SAMPLER_UNIFORM on a space
 * it could count), else 0; *count (may be NULL) is then the exact number of
 * valid configs, else -1. */
HERON_API heron_sampler heron_space_sampler(const heron_space *sp, int *exact,
                                            double *count);

/* ---- Operations -------------------------------------------------------- */

/* Draws a valid config at random by the space's sampler mode (above;
 * HERON_SAMPLER_HERON: constrained random sampling, every knob value is
 * drawn from what propagation leaves possible, with restarts), and writes
 * it to out[nvars].  Returns HERON_OK, or HERON_EUNSAT with a message when
 * no valid config was found within the solver's restart budget. */
HERON_API int heron_space_sample(const heron_space *sp, heron_rng *rng,
                                 int64_t *out, heron_error *err);

/* As heron_space_sample with the default sampler (whatever the space's
 * mode), with restrictions: for every variable v with
 * a[v] != HERON_UNSET, v must take the value a[v] or (when b is not NULL and
 * b[v] != HERON_UNSET) the value b[v].  Variables where a[v] is HERON_UNSET
 * are free.  `a` alone fixes variables; `a` and `b` give the two-candidate
 * restriction that crossover needs.  b may be NULL.  HERON_EUNSAT when the
 * restrictions admit no valid config (or none was found). */
HERON_API int heron_space_sample_restricted(const heron_space *sp,
                                            heron_rng *rng, const int64_t *a,
                                            const int64_t *b, int64_t *out,
                                            heron_error *err);

/* Completes a partial config: keeps every set value of partial[nvars] and
 * fills the free ones so that all constraints hold, writing the result to
 * out[nvars] (out may equal partial).  A full config is simply checked and
 * copied.  Returns HERON_OK, or HERON_EUNSAT naming a violated constraint
 * when the set values cannot be completed. */
HERON_API int heron_space_validate(const heron_space *sp, heron_rng *rng,
                                   const int64_t *partial, int64_t *out,
                                   heron_error *err);

/* Counts the constraints that the full config cfg[nvars] violates (0 means
 * valid; a HERON_UNSET value violates every constraint it appears in) and
 * writes the indices of the first min(count, cap) of them to which[] (which
 * may be NULL when cap is 0).  Returns the count, or HERON_EINVAL. */
HERON_API int heron_space_violations(const heron_space *sp, const int64_t *cfg,
                                     int *which, int cap);

/* Constrained crossover: a child whose key variables keys[0..nkeys) each take
 * the value of parent pa or parent pb (chosen at random, per variable), and
 * whose other variables are re-solved so the child is valid.  When a random
 * choice cannot be completed the solver tries other choices among the two
 * parents' values.  Writes child[nvars]; HERON_EUNSAT when no combination of
 * the parents' key values is valid. */
HERON_API int heron_space_crossover(const heron_space *sp, heron_rng *rng,
                                    const int64_t *pa, const int64_t *pb,
                                    const int *keys, int nkeys, int64_t *child,
                                    heron_error *err);

/* Mutation: a valid config that differs from cfg in at least one of the
 * variables vars[0..nvars_to_mutate) (one random knob when nvars_to_mutate
 * is 0) and keeps as many of cfg's other knob values as it can.  An
 * auxiliary variable in vars stands for the knobs nearest to it in the
 * constraint graph (it follows from them), so one of those changes.
 * Writes out[nvars].  HERON_EUNSAT when no variable can change. */
HERON_API int heron_space_mutate(const heron_space *sp, heron_rng *rng,
                                 const int64_t *cfg, const int *vars,
                                 int nvars_to_mutate, int64_t *out,
                                 heron_error *err);

/* Repair: the valid config nearest to cfg (which may violate constraints
 * or hold values outside the domains; HERON_UNSET marks a free variable):
 * knob values that are legal are kept
 * where possible, the others move to the nearest legal value.  Writes
 * out[nvars]; HERON_EUNSAT when the space is empty. */
HERON_API int heron_space_repair(const heron_space *sp, heron_rng *rng,
                                 const int64_t *cfg, int64_t *out,
                                 heron_error *err);

/* Neighbourhoods of heron_space_neighbours. */
typedef enum heron_neighbourhood {
  /* Every valid config that differs from cfg in exactly one knob (Kernel
   * Tuner's "Hamming" neighbours). */
  HERON_NEIGHBOURS_HAMMING = 0,
  /* Per knob, the Hamming neighbours whose value of that knob is nearest
   * to cfg's in the knob's domain order, one below and one above (at most
   * two per knob): one knob moved to its next value that keeps the config
   * valid (Kernel Tuner's "Hamming-adjacent"). */
  HERON_NEIGHBOURS_ADJACENT = 1
} heron_neighbourhood;

/* Neighbours: the valid configs that differ from the valid config cfg in
 * exactly one knob, in the neighbourhood `kind` (a heron_neighbourhood),
 * each with its auxiliary variables re-derived so that it is valid.  They
 * are distinct, and listed knob by knob (in knob order), each knob's values
 * ascending.  Writes the first min(count, cap) of them to out[cap * nvars]
 * (out may be NULL when cap is 0) and returns their count, or HERON_EINVAL
 * (cfg is not a valid config, or a bad argument) / HERON_ENOMEM.  The time
 * is proportional to the sum of the knobs' domain sizes (each candidate
 * value is one propagation), so a caller wanting all of them may ask with
 * cap 0 first.  rng only completes auxiliary variables that propagation
 * leaves open. */
HERON_API int heron_space_neighbours(const heron_space *sp, heron_rng *rng,
                                     const int64_t *cfg, int kind, int64_t *out,
                                     int cap, heron_error *err);

/* Length of a feature vector (the number of variables). */
HERON_API int heron_space_nfeatures(const heron_space *sp);

/* The config as a numeric vector for cost models: out[nfeatures], one value
 * per variable (log2(1 + value) for variables whose domain spans more than
 * two orders of magnitude, the plain value otherwise). */
HERON_API void heron_space_features(const heron_space *sp, const int64_t *cfg,
                                    double *out);

/* A stable key for deduplication: 16 lowercase hex digits hashing the knob
 * values (auxiliary variables follow from the knobs; a knob added to a
 * template later is left out while it holds the value that means the
 * kernel before it, so recorded configs keep their keys).  buf needs at
 * least 17 bytes; returns HERON_OK or HERON_EINVAL. */
HERON_API int heron_space_key(const heron_space *sp, const int64_t *cfg,
                              char *buf, size_t cap);

/* Counts the valid configs: exactly (by enumeration with propagation) when
 * there are at most `limit` of them, else an estimate (random probing of the
 * search tree).  *exact tells which.  Returns HERON_OK or an error. */
HERON_API int heron_space_count(const heron_space *sp, heron_rng *rng,
                                double limit, double *count, int *exact,
                                heron_error *err);

#ifdef __cplusplus
}
#endif
#endif /* HERON_SPACE_H */
