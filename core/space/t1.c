/* core/space/t1.c - a search space from a T1 input file
 * (core/space/t1.h). */
#include "core/space/t1.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/record/record.h"
#include "core/space/builder.h"
#include "core/util/util.h"

void heron__t1_free(heron__t1 *t1) {
  if (!t1)
    return;
  for (int i = 0; i < t1->nparams; i++) {
    heron__t1_param *p = &t1->params[i];
    for (int k = 0; k < p->nvals; k++)
      if (p->vals[k].kind == HERON__VAL_STR)
        free((char *)p->vals[k].s);
    free(p->vals);
    free(p->order);
    free(p->name);
  }
  free(t1->params);
  free(t1->name);
  free(t1);
}

/* ---- Value lists --------------------------------------------------------- */

/* T1 files write a parameter's values as a JSON array, or as the text of a
 * Python list ("[16, 32, 48]", "['a', 'b']", "[True, False]").  The text
 * is rewritten into JSON (single quotes to double, True/False/None to
 * true/false/null outside strings) and parsed as such. */
static json_t *python_list(const char *text, json_error_t *jerr) {
  /* Written straight into one buffer (each byte becomes at most two), so
   * a list of 10^6 values converts in linear time without a call a byte. */
  size_t n = strlen(text);
  char *json = malloc(2 * n + 1), *o = json;
  if (!json)
    return NULL;
  char quote = 0;
  for (const char *p = text; *p; p++) {
    if (quote) {
      if (*p == '\\' && p[1]) {
        *o++ = p[0];
        *o++ = p[1];
        p++;
      } else if (*p == quote) {
        *o++ = '"';
        quote = 0;
      } else if (*p == '"') {
        *o++ = '\\';
        *o++ = '"';
      } else {
        *o++ = *p;
      }
      continue;
    }
    if (*p == '\'' || *p == '"') {
      quote = *p;
      *o++ = '"';
    } else if (!strncmp(p, "True", 4) && !isalnum((unsigned char)p[4])) {
      memcpy(o, "true", 4);
      o += 4;
      p += 3;
    } else if (!strncmp(p, "False", 5) && !isalnum((unsigned char)p[5])) {
      memcpy(o, "false", 5);
      o += 5;
      p += 4;
    } else if (*p == '(' || *p == ')') {
      *o++ = *p == '(' ? '[' : ']';
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
  json_t *v = json_loads(json, JSON_DECODE_ANY, jerr);
  free(json);
  return v;
}

/* One listed value as the language's value; 0 when it is not a number,
 * string or boolean. */
static int to_value(const json_t *j, heron__value *v) {
  memset(v, 0, sizeof *v);
  if (json_is_integer(j)) {
    v->kind = HERON__VAL_INT;
    v->i = json_integer_value(j);
  } else if (json_is_boolean(j)) {
    v->kind = HERON__VAL_INT;
    v->i = json_is_true(j);
  } else if (json_is_real(j)) {
    v->kind = HERON__VAL_FLOAT;
    v->f = json_real_value(j);
  } else if (json_is_string(j)) {
    v->kind = HERON__VAL_STR;
    v->s = strdup(json_string_value(j));
    return v->s != NULL;
  } else {
    return 0;
  }
  return 1;
}

/* Orders listed values: by kind, then by value (0 for the same value). */
static int cmp_value(const heron__value *a, const heron__value *b) {
  if (a->kind != b->kind)
    return a->kind < b->kind ? -1 : 1;
  if (a->kind == HERON__VAL_INT)
    return (a->i > b->i) - (a->i < b->i);
  if (a->kind == HERON__VAL_FLOAT)
    return (a->f > b->f) - (a->f < b->f);
  int c = strcmp(a->s, b->s);
  return (c > 0) - (c < 0);
}

typedef struct ranked {
  const heron__value *v;
  int k;
} ranked;

static int cmp_ranked(const void *x, const void *y) {
  const ranked *a = x, *b = y;
  int c = cmp_value(a->v, b->v);
  return c ? c : (a->k > b->k) - (a->k < b->k);
}

/* Sorts p's values into p->order; *dup gets the first position (in the
 * file's order) whose value an earlier position lists, -1 when none.
 * O(n log n): a list of 10^6 values is checked in well under a second. */
static int sort_values(heron__t1_param *p, int *dup) {
  *dup = -1;
  ranked *r = malloc((size_t)p->nvals * sizeof *r);
  p->order = malloc((size_t)p->nvals * sizeof *p->order);
  if (!r || !p->order) {
    free(r);
    return HERON_ENOMEM;
  }
  for (int k = 0; k < p->nvals; k++)
    r[k] = (ranked){&p->vals[k], k};
  qsort(r, (size_t)p->nvals, sizeof *r, cmp_ranked);
  for (int k = 0; k < p->nvals; k++) {
    p->order[k] = r[k].k;
    if (k > 0 && cmp_value(r[k - 1].v, r[k].v) == 0 &&
        (*dup < 0 || r[k].k < *dup))
      *dup = r[k].k;
  }
  free(r);
  return HERON_OK;
}

/* The position of value v in p's list, -1 when it is not listed. */
static int find_value(const heron__t1_param *p, const heron__value *v) {
  int lo = 0, hi = p->nvals;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    int c = cmp_value(&p->vals[p->order[mid]], v);
    if (c == 0)
      return p->order[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

/* 1 when jansson's error is an integer beyond int64 ("too big integer",
 * "too big negative integer"). */
static int beyond_int64(const json_error_t *jerr) {
  return strstr(jerr->text, "too big") != NULL &&
         strstr(jerr->text, "integer") != NULL;
}

static int read_param(const char *path, int i, const json_t *o,
                      heron__t1_param *p, heron_error *err) {
  const char *name = json_string_value(json_object_get(o, "Name"));
  if (!name || !name[0])
    return heron_error_set(err, HERON_EPARSE,
                           "T1 file %s: tuning parameter %d has no \"Name\"",
                           path, i + 1);
  if (!(p->name = strdup(name)))
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  const json_t *jv = json_object_get(o, "Values");
  json_error_t jerr;
  memset(&jerr, 0, sizeof jerr);
  json_t *list = json_is_string(jv) ? python_list(json_string_value(jv), &jerr)
                                    : json_incref((json_t *)jv);
  if (!list && beyond_int64(&jerr))
    return heron_error_set(err, HERON_EPARSE,
                           "T1 file %s: parameter %s: %.50s: an integer "
                           "beyond int64 (values must fit in 64 bits)",
                           path, name, jerr.text);
  if (!json_is_array(list) || json_array_size(list) == 0) {
    json_decref(list);
    return heron_error_set(err, HERON_EPARSE,
                           "T1 file %s: parameter %s: \"Values\" is not a "
                           "non-empty list",
                           path, name);
  }
  size_t n = json_array_size(list);
  p->vals = calloc(n, sizeof *p->vals);
  if (!p->vals) {
    json_decref(list);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  int all_int = 1;
  for (size_t k = 0; k < n; k++) {
    heron__value v;
    if (!to_value(json_array_get(list, k), &v)) {
      json_decref(list);
      return heron_error_set(err, HERON_EPARSE,
                             "T1 file %s: parameter %s: value %zu is not a "
                             "number, string or boolean",
                             path, name, k + 1);
    }
    p->vals[p->nvals++] = v;
    all_int &= v.kind == HERON__VAL_INT;
  }
  json_decref(list);
  int dup;
  if (sort_values(p, &dup) != HERON_OK)
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  if (dup >= 0)
    return heron_error_set(err, HERON_EPARSE,
                           "T1 file %s: parameter %s lists value %d twice",
                           path, name, dup + 1);
  /* Integers are the knob's values; anything else is coded by position. */
  p->coded = !all_int;
  return HERON_OK;
}

/* ---- The space ----------------------------------------------------------- */

static int add_vars(const char *path, heron__t1 *t1, heron_space *sp,
                    heron_error *err) {
  for (int i = 0; i < t1->nparams; i++) {
    heron__t1_param *p = &t1->params[i];
    if (p->coded) {
      p->var = heron__space_var_values(sp, p->name, p->vals, p->nvals);
    } else {
      int64_t *iv = malloc((size_t)p->nvals * sizeof *iv);
      if (!iv)
        return heron_error_set(err, HERON_ENOMEM, "out of memory");
      for (int k = 0; k < p->nvals; k++)
        iv[k] = p->vals[k].i;
      p->var = heron__space_var_set(sp, p->name, 1, iv, p->nvals);
      free(iv);
    }
    if (p->var < 0)
      return heron_error_set(
          err, p->var == HERON_ENOMEM ? HERON_ENOMEM : HERON_EPARSE,
          "T1 file %s: parameter %s: %s", path, p->name,
          p->var == HERON_ENOMEM ? "out of memory" : "declared twice");
  }
  return HERON_OK;
}

/* One value as the text of an error message. */
static void value_text(const heron__value *v, char *buf, size_t cap) {
  if (v->kind == HERON__VAL_INT)
    snprintf(buf, cap, "%lld", (long long)v->i);
  else if (v->kind == HERON__VAL_FLOAT)
    snprintf(buf, cap, "%.17g", v->f);
  else
    snprintf(buf, cap, "'%.20s'", v->s);
}

/* Evaluates restriction e (condition k, text) on every combination of its
 * parameters' values (t1.h): HERON_EINVAL naming the first combination
 * that fails and why.  A restriction over more than HERON__T1_CHECK_MAX
 * combinations is not checked. */
static int check_condition(const char *path, const heron__t1 *t1,
                           const heron__expr *e, size_t k, const char *text,
                           heron_error *err) {
  const int *idx;
  int n;
  heron__expr_names(e, &idx, &n);
  long total = 1;
  for (int j = 0; j < n; j++) {
    total *= t1->params[idx[j]].nvals;
    if (total > HERON__T1_CHECK_MAX)
      return HERON_OK;
  }
  heron__value *vals = calloc((size_t)t1->nparams, sizeof *vals);
  int *at = calloc((size_t)(n > 0 ? n : 1), sizeof *at);
  if (!vals || !at) {
    free(vals);
    free(at);
    return heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  for (int j = 0; j < n; j++)
    vals[idx[j]] = t1->params[idx[j]].vals[0];
  int rc = HERON_OK;
  for (;;) {
    heron__value out;
    heron_error eerr;
    heron_error_clear(&eerr);
    if (heron__expr_eval(e, vals, &out, &eerr) != HERON_OK) {
      char at_text[64] = "", one[40];
      size_t used = 0;
      for (int j = 0; j < n && used + 1 < sizeof at_text; j++) {
        value_text(&vals[idx[j]], one, sizeof one);
        int w = snprintf(at_text + used, sizeof at_text - used, "%s%s=%s",
                         j ? ", " : "", t1->params[idx[j]].name, one);
        used += w > 0 ? (size_t)w : 0;
      }
      rc = heron_error_set(err, HERON_EINVAL,
                           "T1 file %s: condition %zu '%.40s': %s at %s", path,
                           k + 1, text, eerr.text, at_text);
      break;
    }
    /* The next combination: an odometer over the used parameters. */
    int j = 0;
    for (; j < n; j++) {
      const heron__t1_param *p = &t1->params[idx[j]];
      if (++at[j] < p->nvals) {
        vals[idx[j]] = p->vals[at[j]];
        break;
      }
      at[j] = 0;
      vals[idx[j]] = p->vals[0];
    }
    if (j == n)
      break;
  }
  free(vals);
  free(at);
  return rc;
}

static int add_conditions(const char *path, heron__t1 *t1, heron_space *sp,
                          const json_t *conds, heron_error *err) {
  int np = t1->nparams;
  const char **names = malloc((size_t)np * sizeof *names);
  int *name_var = malloc((size_t)np * sizeof *name_var);
  int rc = names && name_var
               ? HERON_OK
               : heron_error_set(err, HERON_ENOMEM, "out of memory");
  for (int i = 0; !rc && i < np; i++) {
    names[i] = t1->params[i].name;
    name_var[i] = t1->params[i].var;
  }
  size_t k;
  const json_t *c;
  json_array_foreach(conds, k, c) {
    if (rc)
      break;
    /* A condition is an object with "Expression", or the bare string. */
    const char *text =
        json_is_string(c) ? json_string_value(c)
                          : json_string_value(json_object_get(c, "Expression"));
    if (!text) {
      rc = heron_error_set(err, HERON_EPARSE,
                           "T1 file %s: condition %zu has no \"Expression\"",
                           path, k + 1);
      break;
    }
    heron__expr *e = NULL;
    heron_error perr;
    heron_error_clear(&perr);
    rc = heron__expr_parse(text, names, np, &e, &perr);
    if (rc) {
      /* The reason last: a message longer than the error text keeps its
       * head (the file) and its tail (the reason). */
      rc = heron_error_set(err, rc, "T1 file %s: condition %zu '%.40s': %s",
                           path, k + 1, text, perr.text);
      break;
    }
    rc = check_condition(path, t1, e, k, text, err);
    if (rc) {
      heron__expr_free(e);
      break;
    }
    int ci = heron__space_post_expr(sp, e, name_var, np, text);
    if (ci < 0)
      rc = heron_error_set(err, ci, "T1 file %s: condition %zu: cannot post",
                           path, k + 1);
    else
      t1->nconds++;
  }
  free(names);
  free(name_var);
  return rc;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

int heron__t1_load(const char *path, heron__t1 **out, heron_space **spp,
                   heron_error *err) {
  *out = NULL;
  *spp = NULL;
  char *text = NULL;
  size_t len = 0;
  int rrc = heron__input_read(path, "T1 file", &text, &len, err);
  if (rrc)
    return rrc;
  json_error_t jerr;
  json_t *root = json_loadb(text, len, 0, &jerr);
  free(text);
  if (!root && beyond_int64(&jerr))
    return heron_error_set(err, HERON_EPARSE,
                           "T1 file %s: an integer beyond int64 at line %d, "
                           "column %d (values must fit in 64 bits)",
                           path, jerr.line, jerr.column);
  if (!root)
    return heron_error_set(err, HERON_EPARSE,
                           "T1 file %s: %s (line %d, column %d)", path,
                           jerr.text, jerr.line, jerr.column);
  const json_t *cs = json_object_get(root, "ConfigurationSpace");
  const json_t *tps = json_object_get(cs, "TuningParameters");
  const json_t *conds = json_object_get(cs, "Conditions");
  int rc = HERON_OK;
  if (!json_is_array(tps) || json_array_size(tps) == 0)
    rc = heron_error_set(err, HERON_EPARSE,
                         "T1 file %s: no ConfigurationSpace.TuningParameters "
                         "list",
                         path);
  else if (conds && !json_is_array(conds))
    rc = heron_error_set(err, HERON_EPARSE,
                         "T1 file %s: ConfigurationSpace.Conditions is not a "
                         "list",
                         path);
  heron__t1 *t1 = rc ? NULL : calloc(1, sizeof *t1);
  heron_space *sp = rc ? NULL : heron__space_new();
  if (!rc && (!t1 || !sp))
    rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  if (!rc) {
    const char *name = json_string_value(
        json_object_get(json_object_get(root, "General"), "BenchmarkName"));
    if (!name)
      name = json_string_value(json_object_get(
          json_object_get(root, "KernelSpecification"), "KernelName"));
    t1->name = strdup(name ? name : base_name(path));
    t1->params = calloc(json_array_size(tps), sizeof *t1->params);
    if (!t1->name || !t1->params)
      rc = heron_error_set(err, HERON_ENOMEM, "out of memory");
  }
  for (size_t i = 0; !rc && i < json_array_size(tps); i++) {
    rc = read_param(path, (int)i, json_array_get(tps, i),
                    &t1->params[t1->nparams], err);
    t1->nparams++;
  }
  if (!rc)
    rc = add_vars(path, t1, sp, err);
  if (!rc && conds)
    rc = add_conditions(path, t1, sp, conds, err);
  if (!rc) {
    heron_error ferr;
    heron_error_clear(&ferr);
    rc = heron__space_finish(sp, &ferr);
    if (rc)
      rc = heron_error_set(err, rc, "T1 file %s: %s", path, ferr.text);
  }
  json_decref(root);
  if (rc) {
    heron__t1_free(t1);
    heron__space_free(sp);
    return rc;
  }
  *out = t1;
  *spp = sp;
  return HERON_OK;
}

/* ---- Configs ---------------------------------------------------------------
 */

int heron__t1_config(const heron__t1 *t1, const heron_space *sp,
                     const json_t *conf, int64_t *cfg, const char *what,
                     heron_error *err) {
  int nv = heron_space_nvars(sp);
  for (int v = 0; v < nv; v++)
    cfg[v] = HERON_UNSET;
  for (int i = 0; i < t1->nparams; i++) {
    const heron__t1_param *p = &t1->params[i];
    const json_t *j = json_object_get(conf, p->name);
    heron__value v;
    if (!j || !to_value(j, &v))
      return heron_error_set(err, HERON_ENOTFOUND, "%s: parameter %s is %s",
                             what, p->name,
                             j ? "not a number, string or boolean" : "missing");
    /* An integral float (16.0) is the integer 16 of an int parameter. */
    if (v.kind == HERON__VAL_FLOAT && !p->coded && v.f == floor(v.f) &&
        fabs(v.f) < 9e15)
      v = (heron__value){.kind = HERON__VAL_INT, .i = (int64_t)v.f};
    int k = find_value(p, &v);
    if (v.kind == HERON__VAL_STR)
      free((char *)v.s);
    if (k < 0) {
      char *txt = json_dumps(j, JSON_ENCODE_ANY);
      heron_error_set(err, HERON_ENOTFOUND,
                      "%s: parameter %s = %s is not one of its T1 values", what,
                      p->name, txt ? txt : "?");
      free(txt);
      return HERON_ENOTFOUND;
    }
    cfg[p->var] = p->coded ? k : p->vals[k].i;
  }
  /* Variables other than the parameters (none today) are completed by
   * validation, which keeps the parameters' values. */
  for (int v = 0; v < nv; v++)
    if (cfg[v] == HERON_UNSET)
      return heron_error_set(err, HERON_EINVAL,
                             "%s: variable %s is no T1 parameter", what,
                             heron_space_var_name(sp, v));
  return HERON_OK;
}

json_t *heron__t1_value(const heron__t1 *t1, int p, int64_t v) {
  const heron__t1_param *q = &t1->params[p];
  if (!q->coded)
    return json_integer(v);
  if (v < 0 || v >= q->nvals)
    return json_null();
  const heron__value *x = &q->vals[v];
  if (x->kind == HERON__VAL_FLOAT)
    return json_real(x->f);
  if (x->kind == HERON__VAL_STR)
    return json_string(x->s);
  return json_integer(x->i);
}
