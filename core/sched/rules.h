/* core/sched/rules.h - what every target's rules share while they build a
 * template: posting variables and constraints with known upper bounds, and
 * the notes that describe which rules applied.  Internal to libheron.
 *
 * The builder (core/space/builder.h) does not report bounds back, yet aux
 * variables (fused extents, footprints, memory sizes) need an upper bound
 * at creation; the rule context remembers the bound of every variable it
 * created.  After the first failed builder call every later call is a
 * no-op returning -1, so a rule set can post everything and check the
 * status once at the end.
 */
#ifndef HERON_CORE_SCHED_RULES_H
#define HERON_CORE_SCHED_RULES_H

#include <stdint.h>

#include "core/util/util.h"
#include "heron/space.h"

/* Products of extents are clamped here; every real footprint is far below,
 * and the clamp keeps bound arithmetic away from int64 overflow. */
#define HERON__BOUND_MAX ((int64_t)1 << 50)
#define HERON__RULES_MAX_VARS 2048
#define HERON__MAX_RULES 16

typedef struct heron__rules {
  heron_space *sp;
  heron_error *err;
  const char *who; /* "cpu template": the prefix of error messages */
  int rc;          /* the first failure, 0 while none */
  int64_t ub[HERON__RULES_MAX_VARS]; /* upper bound of each variable index */
} heron__rules;

/* One applied (or considered) schedule-generation rule, for describe. */
typedef struct heron__rule_note {
  char name[32];  /* "Multi-Level-Tiling" */
  char note[256]; /* what it did, or why it did not apply */
} heron__rule_note;

int64_t heron__mul_sat(int64_t a, int64_t b);

/* The bound recorded for variable v (HERON__BOUND_MAX when unknown). */
int64_t heron__r_ub(const heron__rules *r, int v);

/* The shared constant variable of `value`. */
int heron__r_const(heron__rules *r, int64_t value);

/* A variable (knob when is_knob) with an explicit set, or the range
 * [lo, hi], as its domain.  -1 after a failure. */
int heron__r_set(heron__rules *r, const char *name, int is_knob,
                 const int64_t *vals, int n);
int heron__r_range(heron__rules *r, const char *name, int is_knob, int64_t lo,
                   int64_t hi);

/* A tile-size knob for a loop of extent n whose tiles need not divide it:
 * the divisors of n, the powers of two and three times the powers of two,
 * all <= n (1 included).  -1 after a failure. */
int heron__r_tile_sizes(heron__rules *r, const char *name, int64_t n);

/* The split of loop `axis` (of extent n) with a rounded-up outer extent:
 * lens[0] is the outer loop's length and lens[1..nlens) the tile (P, their
 * product, as aux "<axis>.tile" when there are several); posts
 * cover = lens[0] * P (aux "<axis>.cover") with n <= cover < n + P, i.e.
 * lens[0] = ceil(n / P).
 * Returns cover (the extent the tiles sweep, >= n), or -1 after a
 * failure. */
int heron__r_ceil_split(heron__rules *r, const char *axis, int64_t n,
                        const int *lens, int nlens);

/* Posts an unconditional constraint (see heron__space_post); `what` names
 * it in the error message should the builder refuse it. */
void heron__r_post(heron__rules *r, int kind, int z, const int *xs, int nx,
                   const int64_t *vals, int nvals, const char *what);

/* Posts x <= limit (the limit as the shared constant), and x == y. */
void heron__r_le(heron__rules *r, int x, int64_t limit, const char *what);
void heron__r_eq(heron__rules *r, int x, int y, const char *what);

/* A named aux variable z = xs[0] * ... * xs[n-1] (the constant 1 when n is
 * 0), or z = xs[0] + ... + xs[n-1], its bound derived from the operands'. */
int heron__r_prod(heron__rules *r, const char *name, const int *xs, int n);
int heron__r_sum(heron__rules *r, const char *name, const int *xs, int n);

/* The padded-work rule: aux "padded" = covers[0] * ... * covers[n-1],
 * the product of the extents the tiles sweep, posted <= pct% of `real`
 * (the real extents' product; pct is the hw's max_padded_work_pct, and
 * 0 or less stands for 125), never below real itself.  Returns the variable,
 * -1 after a failure. */
int heron__r_padded_work(heron__rules *r, int pct, int64_t real,
                         const int *covers, int n);

/* Appends a rule note to notes[*n] (at most HERON__MAX_RULES). */
void heron__rule_note_add(heron__rule_note *notes, int *n, const char *name,
                          const char *fmt, ...) HERON_PRINTF(4, 5);

/* Writes "rules:" and one indented "name: note" line per note, the rule
 * section of a template's describe. */
void heron__rule_notes_write(const heron__rule_note *notes, int n,
                             heron__buf *out);

/* Comma-separated names of the op axes of one kind ("none" when there are
 * none), for the rule notes.  `op` is a heron__op. */
struct heron__op;
void heron__axis_list(const struct heron__op *op, int kind, char *buf,
                      size_t cap);

#endif
