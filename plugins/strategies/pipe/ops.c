/* plugins/strategies/pipe/ops.c - the pipe strategy's answers to the
 * program's requests for the space's operations (pipe.h).  Each gets a
 * "result" or an "error" answer; a bad request is the program's bug,
 * answered with an error it can read, never a protocol failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"

static json_t *pipe_op_error(const json_t *id, int code, const char *msg) {
  return json_pack("{s:s, s:O, s:s, s:s}", "type", "error", "id",
                   id ? id : json_null(), "code", heron_err_name(code),
                   "message", msg);
}

static json_t *pipe_op_result(const json_t *id) {
  return json_pack("{s:s, s:O}", "type", "result", "id", id ? id : json_null());
}

/* Reads a list of variable names into s->vars; the count, or -1. */
static int pipe_names(const pipe_strategy *s, const json_t *j, char *why,
                      size_t cap) {
  if (!json_is_array(j) || (int)json_array_size(j) > s->nvars) {
    snprintf(why, cap, "expected an array of at most %d variable names",
             s->nvars);
    return -1;
  }
  for (size_t i = 0; i < json_array_size(j); i++) {
    const char *name = json_string_value(json_array_get(j, i));
    int v = name ? heron_space_find_var(s->sp, name) : -1;
    if (v < 0) {
      snprintf(why, cap, "'%.60s' is not a variable of the space",
               name ? name : "(not a string)");
      return -1;
    }
    s->vars[i] = v;
  }
  return (int)json_array_size(j);
}

/* Decodes member `key` of req into cfg; completes it when `complete`. */
static int pipe_op_config(pipe_strategy *s, const json_t *req, const char *key,
                          int complete, int64_t *cfg, heron_error *e) {
  char why[128];
  json_t *j = json_object_get(req, key);
  if (!j)
    return heron_error_set(e, HERON_EINVAL, "missing \"%s\"", key);
  if (pipe_decode(s, j, cfg, why, sizeof why) != 0)
    return heron_error_set(e, HERON_EINVAL, "\"%s\": %s", key, why);
  return complete ? pipe_complete(s, cfg, e) : HERON_OK;
}

static int pipe_op_sample(pipe_strategy *s, const json_t *req, json_t *res,
                          heron_error *e) {
  json_int_t n = 1;
  json_t *jn = json_object_get(req, "n");
  if (jn && (!json_is_integer(jn) || json_integer_value(jn) < 1 ||
             json_integer_value(jn) > 65536))
    return heron_error_set(e, HERON_EINVAL, "\"n\" must be 1 to 65536");
  if (jn)
    n = json_integer_value(jn);
  int fixed = json_object_get(req, "fix") != NULL;
  if (fixed) {
    int rc = pipe_op_config(s, req, "fix", 0, s->cfg2, e);
    if (rc)
      return rc;
  }
  json_t *out = json_array();
  int failures = 0;
  heron_error last = {0};
  while ((json_int_t)json_array_size(out) < n && failures < PIPE_RETRIES) {
    heron_error one = {0};
    int rc = fixed ? heron_space_sample_restricted(s->sp, s->env->rng, s->cfg2,
                                                   NULL, s->cfg, &one)
                   : heron_space_sample(s->sp, s->env->rng, s->cfg, &one);
    if (rc == HERON_OK)
      json_array_append_new(out, pipe_encode(s, s->cfg));
    else if (rc == HERON_EUNSAT)
      failures++, last = one;
    else {
      json_decref(out);
      return heron_error_set(e, rc, "%s", one.text);
    }
  }
  if (json_array_size(out) == 0) {
    json_decref(out);
    return heron_error_set(e, HERON_EUNSAT, "%s", last.text);
  }
  json_object_set_new(res, "configs", out);
  return HERON_OK;
}

/* features and key take "config" (one answer) or "configs" (a list). */
static int pipe_op_each(pipe_strategy *s, const json_t *req, int features,
                        json_t *res, heron_error *e) {
  const json_t *many = json_object_get(req, "configs");
  if (many && !json_is_array(many))
    return heron_error_set(e, HERON_EINVAL, "\"configs\" must be an array");
  size_t n = many ? json_array_size(many) : 1;
  json_t *out = json_array();
  double *f = features ? malloc((size_t)s->nvars * sizeof *f + 1) : NULL;
  int rc = features && !f ? HERON_ENOMEM : HERON_OK;
  for (size_t i = 0; i < n && rc == HERON_OK; i++) {
    char why[128];
    const json_t *j =
        many ? json_array_get(many, i) : json_object_get(req, "config");
    if (!j)
      rc = heron_error_set(e, HERON_EINVAL, "missing \"config\"");
    else if (pipe_decode(s, j, s->cfg, why, sizeof why) != 0)
      rc = heron_error_set(e, HERON_EINVAL, "config %zu: %s", i, why);
    else
      rc = pipe_complete(s, s->cfg, e);
    if (rc)
      break;
    if (features) {
      heron_space_features(s->sp, s->cfg, f);
      json_t *a = json_array();
      for (int k = 0; k < heron_space_nfeatures(s->sp); k++)
        json_array_append_new(a, pipe_num(f[k]));
      json_array_append_new(out, a);
    } else {
      char key[32];
      heron_space_key(s->sp, s->cfg, key, sizeof key);
      json_array_append_new(out, json_string(key));
    }
  }
  free(f);
  if (rc) {
    json_decref(out);
    return rc;
  }
  const char *name = features ? "features" : many ? "keys" : "key";
  json_object_set_new(
      res, name, many ? json_incref(out) : json_incref(json_array_get(out, 0)));
  json_decref(out);
  return HERON_OK;
}

static int pipe_op_violations(pipe_strategy *s, const json_t *req, json_t *res,
                              heron_error *e) {
  int rc = pipe_op_config(s, req, "config", 0, s->cfg, e);
  if (rc)
    return rc;
  /* Variables left out are derived first; when they cannot be, the count
   * is the partial config's, where every constraint on an unset variable
   * is violated. */
  heron_error ignored = {0};
  memcpy(s->cfg2, s->cfg, (size_t)s->nvars * sizeof *s->cfg);
  if (pipe_complete(s, s->cfg2, &ignored) == HERON_OK)
    memcpy(s->cfg, s->cfg2, (size_t)s->nvars * sizeof *s->cfg);
  int which[8];
  int count = heron_space_violations(s->sp, s->cfg, which, 8);
  if (count < 0)
    return heron_error_set(e, count, "cannot check the config");
  json_t *texts = json_array();
  for (int i = 0; i < count && i < 8; i++) {
    char buf[256];
    heron_space_constraint_str(s->sp, which[i], buf, sizeof buf);
    json_array_append_new(texts, json_string(buf));
  }
  json_object_set_new(res, "count", json_integer(count));
  json_object_set_new(res, "violated", texts);
  return HERON_OK;
}

/* Runs the operation `type` asked for by req into res (a "result" object)
 * or returns a status with the reason in e. */
static int pipe_op_run(pipe_strategy *s, const char *type, const json_t *req,
                       json_t *res, heron_error *e) {
  const heron_space *sp = s->sp;
  heron_rng *rng = s->env->rng;
  char why[128];
  int rc;
  if (!strcmp(type, "sample"))
    return pipe_op_sample(s, req, res, e);
  if (!strcmp(type, "features") || !strcmp(type, "key"))
    return pipe_op_each(s, req, type[0] == 'f', res, e);
  if (!strcmp(type, "violations"))
    return pipe_op_violations(s, req, res, e);
  if (!strcmp(type, "validate") || !strcmp(type, "repair")) {
    rc = pipe_op_config(s, req, "config", 0, s->cfg, e);
    if (rc == HERON_OK)
      rc = type[0] == 'v' ? heron_space_validate(sp, rng, s->cfg, s->cfg2, e)
                          : heron_space_repair(sp, rng, s->cfg, s->cfg2, e);
  } else if (!strcmp(type, "mutate")) {
    int n = 0;
    json_t *vars = json_object_get(req, "vars");
    rc = pipe_op_config(s, req, "config", 1, s->cfg, e);
    if (rc == HERON_OK && vars &&
        (n = pipe_names(s, vars, why, sizeof why)) < 0)
      rc = heron_error_set(e, HERON_EINVAL, "\"vars\": %s", why);
    if (rc == HERON_OK)
      rc = heron_space_mutate(sp, rng, s->cfg, s->vars, n, s->cfg2, e);
  } else { /* crossover */
    int n = s->nknobs;
    json_t *keys = json_object_get(req, "keys");
    rc = pipe_op_config(s, req, "a", 1, s->cfg, e);
    if (rc == HERON_OK)
      rc = pipe_op_config(s, req, "b", 1, s->cfg3, e);
    if (rc == HERON_OK && keys &&
        (n = pipe_names(s, keys, why, sizeof why)) < 0)
      rc = heron_error_set(e, HERON_EINVAL, "\"keys\": %s", why);
    if (rc == HERON_OK && !keys)
      memcpy(s->vars, s->knobs, (size_t)n * sizeof *s->vars);
    if (rc == HERON_OK)
      rc = heron_space_crossover(sp, rng, s->cfg, s->cfg3, s->vars, n, s->cfg2,
                                 e);
  }
  if (rc == HERON_OK)
    json_object_set_new(res, "config", pipe_encode(s, s->cfg2));
  return rc;
}

int pipe_is_op(const char *type) {
  static const char *const ops[] = {"sample",    "validate",  "repair",
                                    "crossover", "mutate",    "features",
                                    "key",       "violations"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(type, ops[i]))
      return 1;
  return 0;
}

json_t *pipe_op_answer(pipe_strategy *s, const char *type, const json_t *req) {
  const json_t *id = json_object_get(req, "id");
  json_t *res = pipe_op_result(id);
  heron_error e = {0};
  int rc = pipe_op_run(s, type, req, res, &e);
  if (rc != HERON_OK) {
    json_decref(res);
    res = pipe_op_error(id, rc, e.text[0] ? e.text : heron_strerror(rc));
  }
  return res;
}
