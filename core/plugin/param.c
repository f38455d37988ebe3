/* core/plugin/param.c - key=value plugin parameters (heron/param.h) and
 * the host's view of their declarations (core/plugin/param_table.h).
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
#include <strings.h>

#include "core/plugin/param_table.h"
#include "core/plugin/plugin.h"
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

HERON_API int64_t heron_param_int_value(const heron_param *params, int n,
                                        const char *key, int64_t absent) {
  const char *text = heron_param_get(params, n, key, NULL);
  if (!text || !looks_numeric_start(text))
    return absent;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  return end == text || *end != '\0' || errno == ERANGE ? absent
                                                         : (int64_t)v;
}

HERON_API double heron_param_double_value(const heron_param *params, int n,
                                          const char *key, double absent) {
  const char *text = heron_param_get(params, n, key, NULL);
  if (!text || !looks_numeric_start(text))
    return absent;
  char *end = NULL;
  double v = strtod(text, &end);
  return end == text || *end != '\0' || isnan(v) ? absent : v;
}

static int check_known(const heron__param_table *t, const heron_param *in,
                       int n, const char *who, heron_error *err);

HERON_API int heron_param_check(const heron_param *params, int n,
                                const heron_param_doc *docs, const char *who,
                                heron_error *err) {
  heron__param_table t = {.docs = docs};
  return check_known(&t, params, n, who ? who : "plugin", err);
}

/* ---- declarations, either form (core/plugin/param_table.h) ------------- */

heron__param_table heron__strategy_param_table(const heron_strategy_plugin *d) {
  heron__param_table t = {.docs = d->params};
  if (HERON__PLUGIN_HAS(d, param_specs)) {
    t.specs = d->param_specs;
    t.spec_size = d->param_spec_size;
  }
  return t;
}

heron__param_table heron__model_param_table(const heron_model_plugin *d) {
  heron__param_table t = {.docs = d->params};
  if (HERON__PLUGIN_HAS(d, param_specs)) {
    t.specs = d->param_specs;
    t.spec_size = d->param_spec_size;
  }
  return t;
}

/* The i-th spec, at the stride the plugin was built with. */
static const heron_param_spec *spec_at(const heron__param_table *t, int i) {
  return (const heron_param_spec *)(const void *)((const char *)t->specs +
                                                  (size_t)i * t->spec_size);
}

/* The i-th declared key of either form, NULL past the end. */
static const char *key_at(const heron__param_table *t, int i) {
  if (t->specs)
    return spec_at(t, i)->key;
  return t->docs ? t->docs[i].key : NULL;
}

int heron__param_table_has(const heron__param_table *t, const char *key) {
  for (int i = 0; key && key_at(t, i); i++)
    if (strcmp(key_at(t, i), key) == 0)
      return 1;
  return 0;
}

static const char *kind_name(heron_param_kind k) {
  switch (k) {
  case HERON_PARAM_STRING:
    return "string";
  case HERON_PARAM_INT:
    return "int";
  case HERON_PARAM_FLOAT:
    return "float";
  case HERON_PARAM_BOOL:
    return "bool";
  case HERON_PARAM_CHOICE:
    return "choice";
  }
  return "?";
}

static int has_lo(const heron_param_spec *s) {
  return (s->flags & (HERON_PARAM_MIN | HERON_PARAM_MIN_OPEN)) != 0;
}
static int has_hi(const heron_param_spec *s) {
  return (s->flags & (HERON_PARAM_MAX | HERON_PARAM_MAX_OPEN)) != 0;
}

/* "[2, 1000]", "(0, 1]", ">= 1", "< 5", or "" when unbounded. */
static void range_text(const heron_param_spec *s, char *buf, size_t cap) {
  int lo = has_lo(s), hi = has_hi(s);
  int lo_open = (s->flags & HERON_PARAM_MIN_OPEN) != 0;
  int hi_open = (s->flags & HERON_PARAM_MAX_OPEN) != 0;
  if (lo && hi)
    snprintf(buf, cap, "%c%.15g, %.15g%c", lo_open ? '(' : '[', s->lo, s->hi,
             hi_open ? ')' : ']');
  else if (lo)
    snprintf(buf, cap, "%s %.15g", lo_open ? ">" : ">=", s->lo);
  else if (hi)
    snprintf(buf, cap, "%s %.15g", hi_open ? "<" : "<=", s->hi);
  else
    buf[0] = '\0';
}

/* "int in [2, 1000]", "float > 0", "choice of a|b", "bool", "string". */
static void expect_text(const heron_param_spec *s, char *buf, size_t cap) {
  char range[96];
  range_text(s, range, sizeof range);
  if (s->kind == HERON_PARAM_CHOICE)
    snprintf(buf, cap, "one of %s", s->choices ? s->choices : "");
  else if (range[0] && (range[0] == '[' || range[0] == '('))
    snprintf(buf, cap, "%s in %s", kind_name(s->kind), range);
  else if (range[0])
    snprintf(buf, cap, "%s %s", kind_name(s->kind), range);
  else
    snprintf(buf, cap, "%s", kind_name(s->kind));
}

/* 1 when `word` (of length len) is one of the '|'-separated choices. */
static int choice_has(const char *choices, const char *word, size_t len) {
  for (const char *p = choices; p && *p;) {
    const char *bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    if (n == len && strncmp(p, word, len) == 0)
      return 1;
    if (!bar)
      break;
    p = bar + 1;
  }
  return 0;
}

static int parse_bool(const char *text, int *out) {
  static const char *const yes[] = {"1", "true", "yes", "on"};
  static const char *const no[] = {"0", "false", "no", "off"};
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(text, yes[i]) == 0)
      return *out = 1, 1;
    if (strcasecmp(text, no[i]) == 0)
      return *out = 0, 1;
  }
  return 0;
}

/* Checks `text` against spec s.  Returns NULL when it is valid, with the
 * value create() should see in *norm, else a reason ("is not an integer").
 * `why` holds the reason when it needs formatting. */
static const char *check_value(const heron_param_spec *s, const char *text,
                               const char **norm, char *why, size_t cap) {
  *norm = text;
  double v = 0;
  char *end = NULL;
  switch (s->kind) {
  case HERON_PARAM_STRING:
    return NULL;
  case HERON_PARAM_BOOL: {
    int b;
    if (!parse_bool(text, &b))
      return "is not a boolean (true/false, yes/no, on/off, 1/0)";
    *norm = b ? "1" : "0";
    return NULL;
  }
  case HERON_PARAM_CHOICE:
    if (!choice_has(s->choices, text, strlen(text))) {
      snprintf(why, cap, "is not one of %s", s->choices ? s->choices : "");
      return why;
    }
    return NULL;
  case HERON_PARAM_INT: {
    errno = 0;
    long long iv = looks_numeric_start(text) ? strtoll(text, &end, 10) : 0;
    if (!looks_numeric_start(text) || end == text || *end != '\0')
      return "is not an integer";
    if (errno == ERANGE)
      return "is out of the range of a 64-bit integer";
    v = (double)iv;
    break;
  }
  case HERON_PARAM_FLOAT:
    v = looks_numeric_start(text) ? strtod(text, &end) : 0.0;
    if (!looks_numeric_start(text) || end == text || *end != '\0' ||
        !isfinite(v))
      return "is not a finite number";
    break;
  default:
    return "has a parameter kind this host does not know";
  }
  int lo_open = (s->flags & HERON_PARAM_MIN_OPEN) != 0;
  int hi_open = (s->flags & HERON_PARAM_MAX_OPEN) != 0;
  int below = has_lo(s) && (lo_open ? !(v > s->lo) : !(v >= s->lo));
  int above = has_hi(s) && (hi_open ? !(v < s->hi) : !(v <= s->hi));
  if (below || above) {
    char range[96];
    range_text(s, range, sizeof range);
    snprintf(why, cap, "is outside %s", range);
    return why;
  }
  return NULL;
}

static const unsigned known_flags = HERON_PARAM_MIN | HERON_PARAM_MAX |
                                    HERON_PARAM_MIN_OPEN |
                                    HERON_PARAM_MAX_OPEN | HERON_PARAM_REQUIRED;

/* The rules of heron/param.h for one spec; NULL or the field at fault with
 * the reason in why[cap]. */
static const char *spec_fault(const heron_param_spec *s, char *why,
                              size_t cap) {
  if ((unsigned)s->kind > HERON_PARAM_CHOICE) {
    snprintf(why, cap, "kind %d is not a heron_param_kind", (int)s->kind);
    return "kind";
  }
  if (s->flags & ~known_flags) {
    snprintf(why, cap, "unknown flag bits 0x%x", s->flags & ~known_flags);
    return "flags";
  }
  int numeric = s->kind == HERON_PARAM_INT || s->kind == HERON_PARAM_FLOAT;
  if (!numeric && (has_lo(s) || has_hi(s))) {
    snprintf(why, cap, "a %s parameter cannot have bounds", kind_name(s->kind));
    return "flags";
  }
  if ((has_lo(s) && isnan(s->lo)) || (has_hi(s) && isnan(s->hi))) {
    snprintf(why, cap, "a bound is NaN");
    return has_lo(s) && isnan(s->lo) ? "lo" : "hi";
  }
  if (has_lo(s) && has_hi(s)) {
    int open = (s->flags & (HERON_PARAM_MIN_OPEN | HERON_PARAM_MAX_OPEN)) != 0;
    if (s->lo > s->hi || (open && s->lo == s->hi)) {
      char range[96];
      range_text(s, range, sizeof range);
      snprintf(why, cap, "the range %s is empty", range);
      return "lo";
    }
  }
  if (s->kind == HERON_PARAM_CHOICE) {
    if (!s->choices || !s->choices[0]) {
      snprintf(why, cap, "a choice parameter needs its words, e.g. \"a|b\"");
      return "choices";
    }
    for (const char *p = s->choices;;) {
      const char *bar = strchr(p, '|');
      size_t n = bar ? (size_t)(bar - p) : strlen(p);
      if (n == 0) {
        snprintf(why, cap, "'%s' has an empty word", s->choices);
        return "choices";
      }
      if (bar && choice_has(bar + 1, p, n)) {
        snprintf(why, cap, "'%s' repeats the word '%.*s'", s->choices, (int)n,
                 p);
        return "choices";
      }
      if (!bar)
        break;
      p = bar + 1;
    }
  } else if (s->choices) {
    snprintf(why, cap, "only a choice parameter has choices");
    return "choices";
  }
  if ((s->flags & HERON_PARAM_REQUIRED) && s->default_value) {
    snprintf(why, cap, "a required parameter cannot have a default ('%s')",
             s->default_value);
    return "default_value";
  }
  if (s->default_value) {
    const char *norm;
    char inner[160];
    const char *bad =
        check_value(s, s->default_value, &norm, inner, sizeof inner);
    if (bad) {
      snprintf(why, cap, "the default '%s' %s", s->default_value, bad);
      return "default_value";
    }
  }
  return NULL;
}

/* 1 when a key cannot be written as --param key=value. */
static int bad_key(const char *key) {
  if (!key[0])
    return 1;
  for (const char *p = key; *p; p++)
    if (*p == '=' || isspace((unsigned char)*p))
      return 1;
  return 0;
}

int heron__param_table_validate(const heron__param_table *t, const char *who,
                                heron_error *err) {
  if (t->specs && t->spec_size < sizeof(heron_param_spec))
    return heron_error_set(err, HERON_EABI,
                           "%s: param_spec_size %zu is smaller than the first "
                           "heron_param_spec layout (%zu bytes)",
                           who, t->spec_size, sizeof(heron_param_spec));
  for (int i = 0; key_at(t, i); i++) {
    const char *key = key_at(t, i);
    if (bad_key(key))
      return heron_error_set(err, HERON_EABI,
                             "%s: parameter %d: key '%s' is empty or holds "
                             "'=' or white space",
                             who, i + 1, key);
    for (int j = 0; j < i; j++)
      if (strcmp(key_at(t, j), key) == 0)
        return heron_error_set(
            err, HERON_EABI, "%s: parameter '%s' is declared twice", who, key);
    if (!t->specs)
      continue;
    char why[200];
    const char *field = spec_fault(spec_at(t, i), why, sizeof why);
    if (field)
      return heron_error_set(err, HERON_EABI,
                             "%s: parameter '%s', field %s: %s", who, key,
                             field, why);
  }
  return HERON_OK;
}

/* HERON_EINVAL for the first key of in[0..n) the table does not declare,
 * naming the known ones (the user most likely misspelled one). */
static int check_known(const heron__param_table *t, const heron_param *in,
                       int n, const char *who, heron_error *err) {
  if (n > 0 && !in)
    return heron_error_set(err, HERON_EINVAL, "%s: %d parameters but no array",
                           who, n);
  for (int i = 0; i < n; i++) {
    const char *key = in[i].key;
    if (!key || !key[0])
      return heron_error_set(err, HERON_EINVAL,
                             "%s: parameter %d has an empty key", who, i + 1);
    if (heron__param_table_has(t, key))
      continue;
    if (!key_at(t, 0))
      return heron_error_set(err, HERON_EINVAL,
                             "%s takes no parameters (got '%s')", who, key);
    heron__buf known = {0};
    for (int k = 0; key_at(t, k); k++)
      heron__buf_printf(&known, "%s%s", k ? ", " : "", key_at(t, k));
    char *list = heron__buf_take(&known);
    heron_error_set(err, HERON_EINVAL,
                    "unknown parameter '%s' for %s; known: %s", key, who,
                    list ? list : "?");
    free(list);
    return HERON_EINVAL;
  }
  return HERON_OK;
}

int heron__param_table_apply(const heron__param_table *t, const heron_param *in,
                             int n, const char *who, heron_param **out,
                             int *nout, heron_error *err) {
  *out = NULL;
  *nout = 0;
  int rc = check_known(t, in, n, who, err);
  if (rc)
    return rc;
  int cap = 0;
  while (key_at(t, cap))
    cap++;
  if (!t->specs)
    cap = n;
  heron_param *res = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *res);
  if (!res)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  int m = 0;
  if (!t->specs) {
    for (int i = 0; i < n; i++)
      res[m++] = in[i];
  }
  for (int i = 0; t->specs && i < cap; i++) {
    const heron_param_spec *s = spec_at(t, i);
    const char *text = heron_param_get(in, n, s->key, NULL);
    char expect[160];
    expect_text(s, expect, sizeof expect);
    if (!text && (s->flags & HERON_PARAM_REQUIRED)) {
      free(res);
      return heron_error_set(err, HERON_EINVAL,
                             "%s: parameter %s is required (%s): give "
                             "--param %s=VALUE",
                             who, s->key, expect, s->key);
    }
    if (!text && !s->default_value)
      continue;
    const char *given = text ? text : s->default_value;
    const char *norm;
    char why[160];
    const char *bad = check_value(s, given, &norm, why, sizeof why);
    if (bad) {
      free(res);
      return heron_error_set(err, HERON_EINVAL,
                             "%s: parameter %s = '%s' %s (expected %s)", who,
                             s->key, given, bad, expect);
    }
    res[m++] = (heron_param){s->key, norm};
  }
  *out = res;
  *nout = m;
  return HERON_OK;
}

void heron__param_table_print(const heron__param_table *t, FILE *out) {
  if (!key_at(t, 0)) {
    fprintf(out, "  parameters: none\n");
    return;
  }
  fprintf(out, "  parameters:\n");
  for (int i = 0; key_at(t, i); i++) {
    if (!t->specs) {
      const heron_param_doc *d = &t->docs[i];
      fprintf(out, "    %s (default %s): %s\n", d->key,
              d->default_value ? d->default_value : "none",
              d->help ? d->help : "");
      continue;
    }
    const heron_param_spec *s = spec_at(t, i);
    char expect[160];
    expect_text(s, expect, sizeof expect);
    if (s->kind == HERON_PARAM_CHOICE)
      snprintf(expect, sizeof expect, "choice of %s", s->choices);
    if (s->flags & HERON_PARAM_REQUIRED)
      fprintf(out, "    %s (%s, required): %s\n", s->key, expect,
              s->help ? s->help : "");
    else if (s->default_value)
      fprintf(out, "    %s (%s, default %s): %s\n", s->key, expect,
              s->default_value[0] ? s->default_value : "\"\"",
              s->help ? s->help : "");
    else
      fprintf(out, "    %s (%s, no default): %s\n", s->key, expect,
              s->help ? s->help : "");
  }
}
