/* core/plugin/param.c - key=value plugin parameters (heron/param.h).
 *
 * Parameters arrive as strings; these helpers give plugins one strict way
 * to read them, so that every plugin words its complaints the same way
 * ("parameter pop = 'abc' is not an integer") and nobody silently accepts
 * "12abc" as 12.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util/util.h"
#include "heron/param.h"

HERON_API const char *heron_param_get(const heron_param *params, int n,
                                      const char *key, const char *fallback) {
  if (!params || !key)
    return fallback;
  /* Scan backwards: a later --param overrides an earlier one (a config file
   * first, the command line after it). */
  for (int i = n - 1; i >= 0; i--)
    if (params[i].key && strcmp(params[i].key, key) == 0)
      return params[i].value ? params[i].value : "";
  return fallback;
}

/* strtoll/strtod skip leading white space and stop at the first bad
 * character; we want the whole string to be the number and nothing else. */
static int looks_numeric_start(const char *s) {
  return s[0] != '\0' && !isspace((unsigned char)s[0]);
}

HERON_API int heron_param_int(const heron_param *params, int n, const char *key,
                              int64_t fallback, int64_t lo, int64_t hi,
                              int64_t *out, heron_error *err) {
  if (!key || !out || lo > hi)
    return heron_error_set(err, HERON_EINVAL,
                           "heron_param_int: bad arguments for '%s'",
                           key ? key : "(null)");
  const char *text = heron_param_get(params, n, key, NULL);
  if (!text) {
    *out = fallback;
    return HERON_OK;
  }
  char *end = NULL;
  errno = 0;
  long long v = looks_numeric_start(text) ? strtoll(text, &end, 10) : 0;
  if (!looks_numeric_start(text) || end == text || *end != '\0')
    return heron_error_set(err, HERON_EINVAL,
                           "parameter %s = '%s' is not an integer", key, text);
  /* An overflowing value is a number, just far outside any range. */
  if (errno == ERANGE || (int64_t)v < lo || (int64_t)v > hi)
    return heron_error_set(err, HERON_EINVAL,
                           "parameter %s = %s is outside [%lld, %lld]", key,
                           text, (long long)lo, (long long)hi);
  *out = (int64_t)v;
  return HERON_OK;
}

HERON_API int heron_param_double(const heron_param *params, int n,
                                 const char *key, double fallback, double lo,
                                 double hi, double *out, heron_error *err) {
  if (!key || !out || !(lo <= hi))
    return heron_error_set(err, HERON_EINVAL,
                           "heron_param_double: bad arguments for '%s'",
                           key ? key : "(null)");
  const char *text = heron_param_get(params, n, key, NULL);
  if (!text) {
    *out = fallback;
    return HERON_OK;
  }
  char *end = NULL;
  errno = 0;
  double v = looks_numeric_start(text) ? strtod(text, &end) : 0.0;
  /* "nan" parses, but compares false with every bound: reject it here. */
  if (!looks_numeric_start(text) || end == text || *end != '\0' || isnan(v))
    return heron_error_set(err, HERON_EINVAL,
                           "parameter %s = '%s' is not a number", key, text);
  /* strtod reports ERANGE for underflow too; only overflow (+-HUGE_VAL)
   * matters, and the range check below catches it unless hi is infinite. */
  if (v < lo || v > hi)
    return heron_error_set(err, HERON_EINVAL,
                           "parameter %s = %s is outside [%g, %g]", key, text,
                           lo, hi);
  *out = v;
  return HERON_OK;
}

static int doc_declares(const heron_param_doc *docs, const char *key) {
  for (const heron_param_doc *d = docs; d && d->key; d++)
    if (strcmp(d->key, key) == 0)
      return 1;
  return 0;
}

HERON_API int heron_param_check(const heron_param *params, int n,
                                const heron_param_doc *docs, const char *who,
                                heron_error *err) {
  if (!who)
    who = "plugin";
  if (n > 0 && !params)
    return heron_error_set(err, HERON_EINVAL, "%s: %d parameters but no array",
                           who, n);
  for (int i = 0; i < n; i++) {
    const char *key = params[i].key;
    if (!key || !key[0])
      return heron_error_set(err, HERON_EINVAL,
                             "%s: parameter %d has an empty key", who, i + 1);
    if (doc_declares(docs, key))
      continue;
    if (!docs || !docs[0].key)
      return heron_error_set(err, HERON_EINVAL,
                             "%s takes no parameters (got '%s')", who, key);
    /* Name every known key: the user most likely misspelled one. */
    heron__buf known = {0};
    for (const heron_param_doc *d = docs; d->key; d++)
      heron__buf_printf(&known, "%s%s", d == docs ? "" : ", ", d->key);
    char *list = heron__buf_take(&known);
    heron_error_set(err, HERON_EINVAL,
                    "unknown parameter '%s' for %s; known: %s", key, who,
                    list ? list : "?");
    free(list);
    return HERON_EINVAL;
  }
  return HERON_OK;
}
