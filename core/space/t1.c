/* core/space/t1.c - a search space from a T1 input file
 * (core/space/t1.h). */
#include "core/space/t1.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static json_t *python_list(const char *text) {
  heron__buf b = {0};
  char quote = 0;
  for (const char *p = text; *p; p++) {
    if (quote) {
      if (*p == '\\' && p[1]) {
        heron__buf_printf(&b, "%c%c", p[0], p[1]);
        p++;
      } else if (*p == quote) {
        heron__buf_puts(&b, "\"");
        quote = 0;
      } else if (*p == '"') {
        heron__buf_puts(&b, "\\\"");
      } else {
        heron__buf_printf(&b, "%c", *p);
      }
      continue;
    }
    if (*p == '\'' || *p == '"') {
      quote = *p;
      heron__buf_puts(&b, "\"");
    } else if (!strncmp(p, "True", 4) && !isalnum((unsigned char)p[4])) {
      heron__buf_puts(&b, "true");
      p += 3;
    } else if (!strncmp(p, "False", 5) && !isalnum((unsigned char)p[5])) {
      heron__buf_puts(&b, "false");
      p += 4;
    } else if (*p == '(' || *p == ')') {
      heron__buf_puts(&b, *p == '(' ? "[" : "]");
    } else {
      heron__buf_printf(&b, "%c", *p);
    }
  }
  char *json = heron__buf_take(&b);
  json_t *v = json ? json_loads(json, JSON_DECODE_ANY, NULL) : NULL;
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

/* 1 when two listed values are the same value. */
static int same_value(const heron__value *a, const heron__value *b) {
  if (a->kind != b->kind)
    return 0;
  if (a->kind == HERON__VAL_INT)
    return a->i == b->i;
  if (a->kind == HERON__VAL_FLOAT)
    return a->f == b->f;
  return strcmp(a->s, b->s) == 0;
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
  json_t *list = json_is_string(jv) ? python_list(json_string_value(jv))
                                    : json_incref((json_t *)jv);
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
    for (int q = 0; q < p->nvals; q++)
      if (same_value(&p->vals[q], &v)) {
        if (v.kind == HERON__VAL_STR)
          free((char *)v.s);
        json_decref(list);
        return heron_error_set(err, HERON_EPARSE,
                               "T1 file %s: parameter %s lists value %zu "
                               "twice",
                               path, name, k + 1);
      }
    p->vals[p->nvals++] = v;
    all_int &= v.kind == HERON__VAL_INT;
  }
  json_decref(list);
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
      return heron_error_set(err, p->var == HERON_ENOMEM ? HERON_ENOMEM
                                                         : HERON_EPARSE,
                             "T1 file %s: parameter %s: %s", path, p->name,
                             p->var == HERON_ENOMEM ? "out of memory"
                                                    : "declared twice");
  }
  return HERON_OK;
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
    const char *text = json_is_string(c)
                           ? json_string_value(c)
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
      /* The reason first: the error text has room for 160 characters. */
      rc = heron_error_set(err, rc, "T1 condition %zu '%.60s': %s (in %s)",
                           k + 1, text, perr.text, path);
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
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (!root && jerr.line < 1)
    return heron_error_set(err, HERON_ENOTFOUND, "T1 file %s: %s", path,
                           jerr.text);
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
    const char *name =
        json_string_value(json_object_get(json_object_get(root, "General"),
                                          "BenchmarkName"));
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

/* ---- Configs --------------------------------------------------------------- */

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
      return heron_error_set(err, HERON_ENOTFOUND,
                             "%s: parameter %s is %s", what, p->name,
                             j ? "not a number, string or boolean"
                               : "missing");
    int k = 0;
    /* An integral float (16.0) is the integer 16 of an int parameter. */
    if (v.kind == HERON__VAL_FLOAT && !p->coded && v.f == floor(v.f) &&
        fabs(v.f) < 9e15)
      v = (heron__value){.kind = HERON__VAL_INT, .i = (int64_t)v.f};
    while (k < p->nvals && !same_value(&p->vals[k], &v))
      k++;
    if (v.kind == HERON__VAL_STR)
      free((char *)v.s);
    if (k == p->nvals) {
      char *txt = json_dumps(j, JSON_ENCODE_ANY);
      heron_error_set(err, HERON_ENOTFOUND,
                      "%s: parameter %s = %s is not one of its T1 values",
                      what, p->name, txt ? txt : "?");
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
