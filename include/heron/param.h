/* heron/param.h - plugin parameters.
 *
 * Parameters reach a plugin as key=value strings, from `--param key=value`
 * on the command line or from a JSON object in a config file.  A plugin
 * declares the keys it understands in its descriptor, in one of two forms:
 *
 *   - typed (heron_param_spec, the descriptor's `param_specs`): kind, bounds,
 *     choices, default and help.  The host checks the declarations when it
 *     loads the plugin (a bad one is refused naming the parameter and the
 *     field), then, before create(), rejects unknown keys, checks every value
 *     against its kind and bounds, and fills in the defaults, so create()
 *     receives every declared parameter that has a value, each exactly once
 *     and already valid.  `--help-plugin` prints kinds and ranges and
 *     `--dry-run` checks values without measuring anything.
 *   - text only (heron_param_doc, the descriptor's `params`): the form of
 *     plugins built before typed declarations existed.  The host rejects
 *     unknown keys and passes the rest as given (repeated keys included; the
 *     last wins); create() checks values and applies its own defaults.
 *
 * New plugins should declare typed parameters; the text form stays
 * supported so that plugins built against older headers keep loading.
 */
#ifndef HERON_PARAM_H
#define HERON_PARAM_H

#include <stdint.h>

#include "heron/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct heron_param {
  const char *key;
  const char *value;
} heron_param;

/* A text-only declaration (see above): key, default as text, one-line
 * help.  Kept so that plugins built before heron_param_spec still load. */
typedef struct heron_param_doc {
  const char *key;
  const char *default_value;
  const char *help;
} heron_param_doc;

/* The kind of a typed parameter.  A zeroed entry is a string. */
typedef enum heron_param_kind {
  HERON_PARAM_STRING = 0, /* any text, the empty string included */
  HERON_PARAM_INT = 1,    /* a decimal integer (int64), e.g. "-3" */
  HERON_PARAM_FLOAT = 2,  /* a finite decimal number, e.g. "0.25", "1e-3" */
  /* true/false, yes/no, on/off or 1/0 in any case; create() always sees
   * "1" or "0", so heron_param_int(..., 0, 1, ...) reads it. */
  HERON_PARAM_BOOL = 3,
  HERON_PARAM_CHOICE = 4 /* one of the words of `choices` */
} heron_param_kind;

/* Flags of heron_param_spec.  Bounds apply to int and float parameters
 * only, and only when their flag is set, so a zero-initialized spec is
 * unbounded. */
#define HERON_PARAM_MIN 0x1u      /* value >= lo */
#define HERON_PARAM_MAX 0x2u      /* value <= hi */
#define HERON_PARAM_MIN_OPEN 0x4u /* value > lo (implies a lower bound) */
#define HERON_PARAM_MAX_OPEN 0x8u /* value < hi (implies an upper bound) */
/* The user must give the parameter (default_value must then be NULL). */
#define HERON_PARAM_REQUIRED 0x10u

/* One typed parameter.  A plugin declares an array of them ending with an
 * entry whose key is NULL, fills them with C11 designated initializers, and
 * puts the array in its descriptor with HERON_PARAM_SPECS(array), which
 * also records sizeof(heron_param_spec) so this struct can grow by
 * appending members.  Bounds are doubles: integer bounds are exact up to
 * 2^53.  Example:
 *
 *   static const heron_param_spec mine_params[] = {
 *       {.key = "pop", .kind = HERON_PARAM_INT, .default_value = "64",
 *        .flags = HERON_PARAM_MIN | HERON_PARAM_MAX, .lo = 2, .hi = 1e6,
 *        .help = "population size"},
 *       {.key = "rate", .kind = HERON_PARAM_FLOAT, .default_value = "0.1",
 *        .flags = HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX, .lo = 0, .hi = 1,
 *        .help = "mutation rate, in (0, 1]"},
 *       {.key = "init", .kind = HERON_PARAM_CHOICE, .choices = "random|lhs",
 *        .default_value = "random", .help = "how the first round is drawn"},
 *       {.key = NULL}};
 *
 * The host refuses at load time a spec with an empty or repeated key, an
 * unknown kind or flag, bounds on a string/bool/choice, lo > hi (or lo == hi
 * with an open end), a choice without words (or with a repeated word), a
 * required parameter with a default, or a default that is not a valid value
 * of its own spec. */
typedef struct heron_param_spec {
  const char *key;           /* the name after --param, e.g. "pop" */
  heron_param_kind kind;     /* what a value must look like */
  unsigned flags;            /* HERON_PARAM_MIN | ... */
  double lo, hi;             /* bounds, read only when flagged */
  const char *choices;       /* HERON_PARAM_CHOICE: words separated by '|' */
  const char *default_value; /* as a user would write it; NULL: none */
  const char *help;          /* one line for --help-plugin */
} heron_param_spec;

/* Sets a descriptor's typed declarations: .param_specs = array, and
 * .param_spec_size = the size of one entry as this plugin was built. */
#define HERON_PARAM_SPECS(array)                                               \
  .param_spec_size = (uint32_t)sizeof(heron_param_spec), .param_specs = (array)

/* Looks `key` up in params[0..n): the last occurrence wins.  Returns its
 * value or `fallback` when absent. */
HERON_API const char *heron_param_get(const heron_param *params, int n,
                                      const char *key, const char *fallback);

/* Typed lookups: parse the value of `key` (or use `fallback` when absent)
 * into *out, checking it lies in [lo, hi].  HERON_EINVAL with a message
 * naming the key, the value and the range when it does not parse or lies
 * outside. */
HERON_API int heron_param_int(const heron_param *params, int n, const char *key,
                              int64_t fallback, int64_t lo, int64_t hi,
                              int64_t *out, heron_error *err);
HERON_API int heron_param_double(const heron_param *params, int n,
                                 const char *key, double fallback, double lo,
                                 double hi, double *out, heron_error *err);

/* For plugins with typed declarations, whose create() gets values the host
 * has already checked against their specs, with defaults filled in: the
 * value of `key` parsed as an integer / a number (a bool as 1 or 0), or
 * `absent` when params lacks the key (a parameter without a default that
 * the user did not give) or its value does not parse. */
HERON_API int64_t heron_param_int_value(const heron_param *params, int n,
                                        const char *key, int64_t absent);
HERON_API double heron_param_double_value(const heron_param *params, int n,
                                          const char *key, double absent);

/* The text form, for plugins that do not declare typed parameters:
 * HERON_OK when every key of params[0..n) is declared in docs (an array
 * ending with a {NULL} key), else HERON_EINVAL naming the first unknown key
 * and the known ones. `who` names the plugin in the message. */
HERON_API int heron_param_check(const heron_param *params, int n,
                                const heron_param_doc *docs, const char *who,
                                heron_error *err);

#ifdef __cplusplus
}
#endif
#endif /* HERON_PARAM_H */
