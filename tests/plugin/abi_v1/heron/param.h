/* heron/param.h - plugin parameters.
 *
 * Parameters reach a plugin as key=value strings, from `--param key=value`
 * on the command line or from a JSON object in a config file.  A plugin
 * declares the keys it understands in its descriptor (a heron_param_doc
 * array ending with a {NULL} entry); the engine rejects any other key by
 * name before create() is called, and create() rejects bad values.
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

/* One declared parameter: its key, its default as text, a one-line help. */
typedef struct heron_param_doc {
  const char *key;
  const char *default_value;
  const char *help;
} heron_param_doc;

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

/* HERON_OK when every key of params[0..n) is declared in docs (an array
 * ending with a {NULL} key), else HERON_EINVAL naming the first unknown key
 * and the known ones. `who` names the plugin in the message. */
HERON_API int heron_param_check(const heron_param *params, int n,
                                const heron_param_doc *docs, const char *who,
                                heron_error *err);

#ifdef __cplusplus
}
#endif
#endif /* HERON_PARAM_H */
