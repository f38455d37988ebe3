/* core/space/builder.h - building a space, internal to libheron.
 *
 * The schedule and constraint rules (core/sched) create variables and post
 * constraints here; heron__space_finish then freezes the space (indexes,
 * propagation order) so that the public operations of heron/space.h can
 * run on it concurrently.
 *
 * Constants are variables whose domain holds one value
 * (heron__space_const); posting "x * y == 1024" is
 *     heron__space_post(sp, HERON_C_PROD, heron__space_const(sp, 1024),
 *                       (int[]){x, y}, 2, -1, NULL, 0)
 */
#ifndef HERON_CORE_SPACE_BUILDER_H
#define HERON_CORE_SPACE_BUILDER_H

#include <stdint.h>

#include "core/space/expr.h"
#include "heron/space.h"

/* A new, empty space. NULL when out of memory. */
heron_space *heron__space_new(void);
void heron__space_free(heron_space *sp);

/* Adds a variable with domain [lo, hi]; returns its index (>= 0) or a
 * negative status.  Names must be unique (HERON_EINVAL otherwise). */
int heron__space_var(heron_space *sp, const char *name, int is_knob, int64_t lo,
                     int64_t hi);

/* Adds a variable whose domain is the explicit set vals[0..n) (any order,
 * duplicates ignored). */
int heron__space_var_set(heron_space *sp, const char *name, int is_knob,
                         const int64_t *vals, int n);

/* Adds a knob whose values stand for vals[0..n) (a T1 parameter of floats
 * or strings): its domain is 0..n-1 and expressions see vals[k] for k.
 * Strings are copied. */
int heron__space_var_values(heron_space *sp, const char *name,
                            const heron__value *vals, int n);

/* Posts a restriction written as an expression (core/space/expr.h): it
 * holds on a config when e, evaluated with name i bound to the value of
 * variable name_var[i] (i < nnames; -1 for a name the expression does not
 * use), is true.  The space takes e (freed with the space, or here on
 * failure) and copies text, the restriction as written, for messages.
 * Returns the constraint's index or a negative status. */
int heron__space_post_expr(heron_space *sp, heron__expr *e, const int *name_var,
                           int nnames, const char *text);

/* Adds a knob whose domain is the divisors of `n`. */
int heron__space_var_divisors(heron_space *sp, const char *name, int is_knob,
                              int64_t n);

/* Declares the value `value` that a config without knob x takes: a knob
 * added to a template after logs were recorded gives their configs the
 * value that means the kernel they measured.  A log line naming no value
 * for x reads back with it (heron__log_parse), and heron_space_key leaves x
 * out of the hash while it holds that value, so the recorded configs keep
 * their keys.  HERON_EINVAL when x is not a knob, value is outside its
 * declared domain or the space is finished. */
int heron__space_var_absent(heron_space *sp, int x, int64_t value);

/* 1 and *value set when knob x declares the value of a config without it,
 * else 0. */
int heron__space_absent(const heron_space *sp, int x, int64_t *value);

/* The index of an unnamed constant variable with value `value` (created on
 * first use, shared afterwards). */
int heron__space_const(heron_space *sp, int64_t value);

/* Posts a constraint.  Operand meaning by kind:
 *   PROD, SUM:  z = op(xs[0..nx))           (nx >= 1)
 *   EQ, NE, LE, LT:  z ? xs[0]              (nx == 1; "z <= xs[0]" for LE)
 *   IN:  z in vals[0..nvals)                (xs unused, nx == 0)
 *   SELECT:  z = xs[1 + value of xs[0]]     (xs[0] is the selector, 0-based)
 * cond is -1 for an unconditional constraint, else the index of a 0/1
 * variable: the constraint is enforced only when cond is 1.
 * Returns the constraint's index or a negative status. */
int heron__space_post(heron_space *sp, int kind, int z, const int *xs, int nx,
                      int cond, const int64_t *vals, int nvals);

/* Freezes the space: checks every posted index, computes what the solver
 * needs, and runs a first propagation.  HERON_EUNSAT when the root
 * propagation already fails (naming the constraint).  No more variables or
 * constraints may be added afterwards. */
int heron__space_finish(heron_space *sp, heron_error *err);

/* Evaluates constraint c on a full config: 1 holds, 0 violated (a
 * condition variable at 0 makes it hold).  Used by the property tests'
 * own checker only as a comparison, never as the checker itself. */
int heron__space_holds(const heron_space *sp, int c, const int64_t *cfg);

/* Raw access to a constraint for independent checkers and the dumper: kind,
 * z, xs (owned by the space), nx, cond, vals, nvals.  HERON_EINVAL when c is
 * out of range. */
int heron__space_constraint(const heron_space *sp, int c, int *kind, int *z,
                            const int **xs, int *nx, int *cond,
                            const int64_t **vals, int *nvals);

#endif
