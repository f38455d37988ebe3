/* plugins/strategies/pipe/wire.c - the pipe strategy's JSON forms (pipe.h)
 * of configs, of measurements ("observe") and of the space ("hello").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"

/* ---- Configs on the wire --------------------------------------------------
 * The host sends a config as an object of knob names to values (the
 * auxiliary variables follow from the knobs), or as an array of all nvars
 * values in variable order when the program asked for arrays in "ready".
 * It accepts either form from the program, whatever it asked for: an
 * object may name any variables, and those it leaves out are completed by
 * the solver. */

json_t *pipe_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

json_t *pipe_encode(const pipe_strategy *s, const int64_t *cfg) {
  if (s->arrays) {
    json_t *a = json_array();
    for (int v = 0; v < s->nvars; v++)
      json_array_append_new(a, json_integer((json_int_t)cfg[v]));
    return a;
  }
  json_t *o = json_object();
  for (int i = 0; i < s->nknobs; i++)
    json_object_set_new(o, heron_space_var_name(s->sp, s->knobs[i]),
                        json_integer((json_int_t)cfg[s->knobs[i]]));
  return o;
}

int pipe_decode(const pipe_strategy *s, const json_t *j, int64_t *cfg,
                char *why, size_t cap) {
  for (int v = 0; v < s->nvars; v++)
    cfg[v] = HERON_UNSET;
  if (json_is_array(j)) {
    if ((int)json_array_size(j) != s->nvars) {
      snprintf(why, cap, "an array config needs %d values, not %zu", s->nvars,
               json_array_size(j));
      return -1;
    }
    for (int v = 0; v < s->nvars; v++) {
      json_t *x = json_array_get(j, (size_t)v);
      if (!json_is_integer(x)) {
        snprintf(why, cap, "value %d of an array config is not an integer", v);
        return -1;
      }
      cfg[v] = (int64_t)json_integer_value(x);
    }
    return 0;
  }
  if (!json_is_object(j)) {
    snprintf(why, cap, "a config must be an object or an array");
    return -1;
  }
  const char *k;
  json_t *x;
  json_object_foreach((json_t *)j, k, x) {
    int v = heron_space_find_var(s->sp, k);
    if (v < 0) {
      snprintf(why, cap, "the space has no variable '%.60s'", k);
      return -1;
    }
    if (!json_is_integer(x)) {
      snprintf(why, cap, "the value of '%.60s' is not an integer", k);
      return -1;
    }
    cfg[v] = (int64_t)json_integer_value(x);
  }
  return 0;
}

int pipe_complete(pipe_strategy *s, int64_t *cfg, heron_error *e) {
  for (int v = 0; v < s->nvars; v++)
    if (cfg[v] == HERON_UNSET)
      return heron_space_validate(s->sp, s->env->rng, cfg, cfg, e);
  return HERON_OK;
}

/* ---- The space, for "hello" ---------------------------------------------- */

static const char *pipe_kind_name(int kind) {
  static const char *const names[] = {"",   "prod", "sum", "eq",     "ne",
                                      "le", "lt",   "in",  "select", "expr"};
  return kind >= HERON_C_PROD && kind <= HERON_C_EXPR ? names[kind] : "?";
}

static json_t *pipe_values(const int64_t *vals, int n) {
  json_t *a = json_array();
  for (int i = 0; i < n; i++)
    json_array_append_new(a, json_integer((json_int_t)vals[i]));
  return a;
}

static json_t *pipe_var_name(const heron_space *sp, int v) {
  return v >= 0 ? json_string(heron_space_var_name(sp, v)) : json_null();
}

json_t *pipe_space_json(const pipe_strategy *s) {
  const heron_space *sp = s->sp;
  json_t *vars = json_array(), *knobs = json_array(), *cons = json_array();
  for (int v = 0; v < s->nvars; v++) {
    int64_t lo = 0, hi = 0;
    const int64_t *vals = NULL;
    int nvals = 0;
    heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals);
    json_t *o =
        json_pack("{s:s, s:b, s:I, s:I}", "name", heron_space_var_name(sp, v),
                  "knob", heron_space_var_is_knob(sp, v) == 1, "lo",
                  (json_int_t)lo, "hi", (json_int_t)hi);
    if (vals)
      json_object_set_new(o, "values", pipe_values(vals, nvals));
    json_array_append_new(vars, o);
  }
  for (int i = 0; i < s->nknobs; i++)
    json_array_append_new(knobs, pipe_var_name(sp, s->knobs[i]));
  for (int c = 0; c < heron_space_nconstraints(sp); c++) {
    char small[256], *text = small;
    int need = heron_space_constraint_str(sp, c, small, sizeof small);
    if (need >= (int)sizeof small && (text = malloc((size_t)need + 1)))
      heron_space_constraint_str(sp, c, text, (size_t)need + 1);
    int kind = 0, z = -1, nx = 0, cond = -1, nvals = 0;
    const int *xs = NULL;
    const int64_t *vals = NULL;
    heron_space_constraint_get(sp, c, &kind, &z, &xs, &nx, &cond, &vals,
                               &nvals);
    json_t *xa = json_array();
    for (int i = 0; i < nx; i++)
      json_array_append_new(xa, pipe_var_name(sp, xs[i]));
    json_t *o =
        json_pack("{s:s, s:s, s:o, s:o, s:o}", "text", text ? text : small,
                  "kind", pipe_kind_name(kind), "z", pipe_var_name(sp, z), "xs",
                  xa, "cond", pipe_var_name(sp, cond));
    if (kind == HERON_C_IN)
      json_object_set_new(o, "values", pipe_values(vals, nvals));
    json_array_append_new(cons, o);
    if (text != small)
      free(text);
  }
  return json_pack("{s:o, s:o, s:o}", "vars", vars, "knobs", knobs,
                   "constraints", cons);
}

json_t *pipe_result_json(const pipe_strategy *s, const heron_measurement *m) {
  char key[32] = "";
  json_t *cfg = json_null();
  if (m->config) {
    heron_space_key(s->sp, m->config, key, sizeof key);
    cfg = pipe_encode(s, m->config);
  }
  return json_pack(
      "{s:i, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:s, s:b}", "trial", m->trial,
      "status", heron_meas_status_name(m->status), "config", cfg, "key", key,
      "seconds", pipe_num(m->seconds), "gflops", pipe_num(m->gflops),
      "build_seconds", pipe_num(m->build_seconds), "max_error",
      pipe_num(m->max_error), "error", m->error ? m->error : "", "simulated",
      m->simulated != 0);
}
