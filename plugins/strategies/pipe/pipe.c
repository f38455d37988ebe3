/* plugins/strategies/pipe/pipe.c - a strategy written in any language.
 *
 * The strategy is a program the user names (program=PATH).  This plugin
 * starts it and talks to it in JSON Lines over its stdin and stdout: one
 * JSON object per line, each with a "type"; the host's requests carry an
 * integer "id" that the answer repeats.  docs/pipe-protocol.md is the
 * protocol's definition; in brief:
 *
 *   host -> program   hello (space, task, batch, seed)     answer: ready
 *                     propose (want)                        answer: configs
 *                     observe (results)                     answer: ok
 *                     save / load (path)                    answer: ok
 *                     bye                                   (no answer)
 *   program -> host   while it owes an answer, requests for the space's
 *                     operations (sample, validate, repair, crossover,
 *                     mutate, features, key, violations), each answered
 *                     with a result or an error; and log lines.
 *
 * Everything that can go wrong with the program (it crashes, hangs, prints
 * something that is not JSON, answers out of turn, sends an unknown type or
 * a line over PIPE_MAX_LINE bytes) is a protocol failure: the program is
 * ended and the run stops with a message naming the problem and quoting
 * what the program sent, or, with fallback=random, goes on with random
 * valid configs after one warning.  proc.c keeps the host safe from the
 * child (deadlines, SIGPIPE, reaping); this file speaks the protocol.
 *
 * Parameters (see README.md): program, args, timeout, fallback.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heron/strategy.h"
#include "plugin_util.h"
#include "proc.h"

/* The protocol version this host speaks; "hello" carries it and "ready"
 * must repeat it. */
#define PIPE_PROTOCOL 1
/* The longest line the program may send: a longer one is a protocol
 * failure, refused after reading this many bytes. */
#define PIPE_MAX_LINE ((size_t)16 << 20)
/* Bytes of the program's output quoted on stderr, and in the (shorter)
 * error text the run ends with. */
#define PIPE_QUOTE_LOG 200
#define PIPE_QUOTE_ERR 60
/* Seconds the program gets to exit after "bye" before it is terminated. */
#define PIPE_BYE_GRACE 2.0
/* Sampling failures tolerated in one round of random proposals. */
#define PIPE_RETRIES 100

/* ---- Parameters -----------------------------------------------------------
 * One typed table: the host checks keys and values against it before
 * create() and --help-plugin prints it. */
static const heron_param_spec pipe_params[] = {
    {.key = "program",
     .kind = HERON_PARAM_STRING,
     .flags = HERON_PARAM_REQUIRED,
     .help = "the strategy program: a path, or a name looked up in PATH"},
    {.key = "args",
     .kind = HERON_PARAM_STRING,
     .default_value = "",
     .help = "its extra arguments, split at spaces; '...' and \"...\" quote, "
             "\\ escapes"},
    {.key = "timeout",
     .kind = HERON_PARAM_FLOAT,
     .default_value = "60",
     .flags = HERON_PARAM_MIN | HERON_PARAM_MAX,
     .lo = 0.001,
     .hi = 1e6,
     .help = "seconds the program may take for each message; then it is "
             "killed"},
    {.key = "fallback",
     .kind = HERON_PARAM_CHOICE,
     .choices = "none|random",
     .default_value = "none",
     .help = "on a protocol failure: none ends the run, random goes on with "
             "random valid configs"},
    {.key = NULL},
};

typedef struct pipe_strategy {
  const heron_strategy_env *env;
  const heron_space *sp;
  int nvars, nknobs;
  int *knobs;     /* variable index of each knob */
  char name[64];  /* the program's file name, for messages */
  char *path;     /* the program, resolved */
  char **argv;    /* argv[0] = path, then the split args; NULL-terminated */
  double timeout; /* seconds per message */
  int fallback;   /* 1: random proposals after a protocol failure */
  pipe_proc proc;
  int live;      /* the program runs and the conversation is in order */
  int degraded;  /* a protocol failure happened; proposals are random */
  int arrays;    /* the program wants configs as full arrays */
  int has_state; /* the program keeps state across --resume */
  json_int_t next_id;
  /* When the host sent its last request and which ("'propose' (id 4)"),
   * for the debug line that says how long the program took to be ended
   * after it. */
  double sent_at;
  char sent[128];
  /* The start of the last line it sent (one byte more than is ever
   * quoted) and that line's whole length, for quoting should it die before
   * its next line. */
  char last[PIPE_QUOTE_LOG + 1];
  size_t last_n;
  int64_t *cfg, *cfg2, *cfg3; /* scratch configs, nvars each */
  int *vars;                  /* scratch variable list, nvars */
  long proposed, observed, ops, random_proposed;
  long proposals; /* propose() calls */
} pipe_strategy;

/* ---- Messages to the user -------------------------------------------------
 * Protocol failures and the fallback warning are written straight to stderr
 * (one write, so the stderr relay's lines never cut through them), next to
 * the program's own relayed stderr: the user needs them even with --quiet. */

static void pipe_say(const char *fmt, ...) HERON_PRINTF(1, 2);
static void pipe_say(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n > sizeof buf - 2)
    n = (int)sizeof buf - 2;
  buf[n++] = '\n';
  size_t off = 0;
  while (off < (size_t)n) {
    ssize_t w = write(2, buf + off, (size_t)n - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    off += (size_t)w;
  }
}

/* Writes the first `max` bytes of s[0..n) into buf as a quoted string,
 * control bytes and quotes escaped, "..." when cut. */
static void pipe_quote(char *buf, size_t cap, const char *s, size_t n,
                       size_t max) {
  size_t k = 0;
  if (cap < 8)
    return;
  buf[k++] = '\'';
  for (size_t i = 0; i < n && i < max && k + 6 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\'' || c == '\\')
      k += (size_t)snprintf(buf + k, cap - k, "\\%c", c);
    else if (c < 0x20 || c == 0x7f)
      k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", c);
    else
      buf[k++] = (char)c;
  }
  buf[k++] = '\'';
  if (n > max && k + 4 < cap) {
    memcpy(buf + k, "...", 3);
    k += 3;
  }
  buf[k] = '\0';
}

/* Ends the program (pipe_proc_stop with grace_s) and says, on a debug
 * line, how long after the host's last request it was gone and how long
 * the stop itself took, with the last signal it needed: the measure a test
 * bounds instead of the run's wall time. */
static void pipe_stop(pipe_strategy *s, double grace_s) {
  s->proc.stopped = 0;
  pipe_proc_stop(&s->proc, grace_s);
  if (!s->proc.stopped)
    return;
  int sig = s->proc.stop_signal;
  const char *how = sig == SIGKILL   ? "SIGKILL"
                    : sig == SIGTERM ? "SIGTERM"
                                     : "it exited";
  s->env->log(s->env, HERON_LOG_DEBUG,
              "%s: stopped %.2f s after %s; the stop took %.2f s (%s)", s->name,
              plugin_now() - s->sent_at, s->sent, s->proc.stop_s, how);
}

/* Ends the conversation after a protocol failure.  `what` says what the
 * program did ("sent invalid JSON ..."); sent[0..n) is what it sent (NULL
 * when nothing is worth quoting).  The program is ended.  Without fallback
 * the failure is returned as `code` with the message in err (a short quote:
 * the host prefixes it and the text is bounded) and said on stderr with a
 * longer quote; with fallback=random it is said once, with the warning that
 * proposals are random from now on, and HERON_OK is returned. */
static int pipe_fail(pipe_strategy *s, int code, heron_error *err,
                     const char *what, const char *sent, size_t n,
                     const char *detail) {
  char qlog[PIPE_QUOTE_LOG * 4 + 16] = "", qerr[PIPE_QUOTE_ERR * 4 + 16] = "";
  /* `what` may carry the program's text (an error message, a type, a
   * name): made safe for the terminal like its quoted output. */
  char safe[1024];
  pipe_sanitize(safe, sizeof safe, what, strlen(what));
  what = safe;
  if (sent) {
    pipe_quote(qlog, sizeof qlog, sent, n, PIPE_QUOTE_LOG);
    pipe_quote(qerr, sizeof qerr, sent, n, PIPE_QUOTE_ERR);
  }
  const char *sep = sent ? ": " : "";
  char more[256] = "";
  if (detail && n > PIPE_QUOTE_LOG && sent)
    snprintf(more, sizeof more, " (%zu bytes; %s)", n, detail);
  else if (n > PIPE_QUOTE_LOG && sent)
    snprintf(more, sizeof more, " (%zu bytes)", n);
  else if (detail)
    snprintf(more, sizeof more, " (%s)", detail);
  pipe_say("heron: pipe: %s %s%s%s%s", s->name, what, sep, qlog, more);
  s->live = 0;
  pipe_stop(s, 0);
  if (s->fallback) {
    if (!s->degraded)
      pipe_say("heron: pipe: warning: going on with random valid configs "
               "(fallback=random)");
    s->degraded = 1;
    return HERON_OK;
  }
  s->degraded = 1; /* nothing more is sent to it, not even "bye" */
  /* The most telling part first: the host's own prefix and the bounded
   * text may cut the end. */
  return heron_error_set(err, code, "pipe: %s %s%s%s%s", s->name, what, sep,
                         qerr, detail ? more : "");
}

/* A failure after a read or write of the conversation did not succeed:
 * rc is what proc.c returned; `during` names the request ("'propose' (id
 * 4)").  Quotes what the program had sent of an unfinished line, or else
 * its last whole line. */
static int pipe_fail_io(pipe_strategy *s, int rc, int writing,
                        const char *during, heron_error *err) {
  char what[512];
  size_t pn;
  const char *partial = pipe_proc_partial(&s->proc, &pn);
  const char *sent = pn ? partial : s->last_n ? s->last : NULL;
  size_t n = pn ? pn : s->last_n;
  const char *which = pn ? "it sent an unfinished line" : "its last line";
  if (rc == HERON_ETIMEOUT) {
    snprintf(what, sizeof what,
             writing ? "did not read %s within %g s (timeout=); killed it"
                     : "sent no answer to %s within %g s (timeout=); "
                       "killed it",
             during, s->timeout);
    return pipe_fail(s, HERON_ETIMEOUT, err, what, pn ? partial : NULL, pn,
                     NULL);
  }
  if (rc == HERON_ERANGE) {
    snprintf(what, sizeof what,
             "sent a line longer than %zu MiB (the protocol's limit) during "
             "%s, which begins",
             PIPE_MAX_LINE >> 20, during);
    return pipe_fail(s, HERON_ERANGE, err, what, partial, pn, NULL);
  }
  if (rc == HERON_ENOMEM)
    return pipe_fail(s, HERON_ENOMEM, err, "out of memory", NULL, 0, NULL);
  /* HERON_EIO: the program closed its end, most likely by exiting. */
  char how[96];
  pipe_proc_exit_text(&s->proc, 1.0, how, sizeof how);
  if (writing && !strcmp(how, "is still running"))
    snprintf(what, sizeof what, "closed its stdin before reading %s%s%s",
             during, sent ? "; " : "", sent ? which : "");
  else
    snprintf(what, sizeof what, "%s during %s%s%s", how, during,
             sent ? "; " : "", sent ? which : "");
  return pipe_fail(s, HERON_EIO, err, what, sent, n, NULL);
}

/* ---- Configs on the wire --------------------------------------------------
 * The host sends a config as an object of knob names to values (the
 * auxiliary variables follow from the knobs), or as an array of all nvars
 * values in variable order when the program asked for arrays in "ready".
 * It accepts either form from the program, whatever it asked for: an
 * object may name any variables, and those it leaves out are completed by
 * the solver. */

static json_t *pipe_num(double x) {
  return isfinite(x) ? json_real(x) : json_null();
}

static json_t *pipe_encode(const pipe_strategy *s, const int64_t *cfg) {
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

/* Reads a config the program sent into cfg[nvars], HERON_UNSET where it
 * leaves a variable out.  Returns 0, or -1 with the reason in why. */
static int pipe_decode(const pipe_strategy *s, const json_t *j, int64_t *cfg,
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

/* Completes cfg in place when it leaves variables out (the solver fills
 * them so that every constraint holds).  A full config is left as it is,
 * valid or not. */
static int pipe_complete(pipe_strategy *s, int64_t *cfg, heron_error *e) {
  for (int v = 0; v < s->nvars; v++)
    if (cfg[v] == HERON_UNSET)
      return heron_space_validate(s->sp, s->env->rng, cfg, cfg, e);
  return HERON_OK;
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

static json_t *pipe_space_json(const pipe_strategy *s) {
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

/* One measurement as "observe" sends it. */
static json_t *pipe_result_json(const pipe_strategy *s,
                                const heron_measurement *m) {
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

/* ---- The program's requests (the space's operations) ---------------------
 * Each gets a "result" or an "error" answer; a bad request is the program's
 * bug, answered with an error it can read, never a protocol failure. */

static json_t *pipe_op_error(const json_t *id, int code, const char *msg) {
  return json_pack("{s:s, s:O, s:s, s:s}", "type", "error", "id",
                   id ? id : json_null(), "code", heron_err_name(code),
                   "message", msg);
}

static json_t *pipe_op_result(const json_t *id) {
  return json_pack("{s:s, s:O}", "type", "result", "id", id ? id : json_null());
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

static int pipe_is_op(const char *type) {
  static const char *const ops[] = {"sample",    "validate",  "repair",
                                    "crossover", "mutate",    "features",
                                    "key",       "violations"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(type, ops[i]))
      return 1;
  return 0;
}

/* ---- The conversation ---------------------------------------------------- */

/* Sends one message (a line of compact JSON). */
static int pipe_send(pipe_strategy *s, const json_t *msg) {
  char *text = json_dumps(msg, JSON_COMPACT);
  if (!text)
    return HERON_ENOMEM;
  size_t n = strlen(text);
  text[n] = '\n'; /* json_dumps' NUL becomes the line's end */
  int rc = pipe_proc_write(&s->proc, text, n + 1, plugin_now() + s->timeout);
  free(text);
  return rc;
}

/* Notes the host's request `during` as sent now (pipe_stop's measure). */
static void pipe_sent(pipe_strategy *s, const char *during) {
  s->sent_at = plugin_now();
  snprintf(s->sent, sizeof s->sent, "the host sent %s", during);
}

/* Answers one request of the program. */
static int pipe_serve(pipe_strategy *s, const char *type, const json_t *req) {
  const json_t *id = json_object_get(req, "id");
  json_t *res = pipe_op_result(id);
  heron_error e = {0};
  int rc = pipe_op_run(s, type, req, res, &e);
  s->ops++;
  if (rc != HERON_OK) {
    json_decref(res);
    res = pipe_op_error(id, rc, e.text[0] ? e.text : heron_strerror(rc));
  }
  rc = pipe_send(s, res);
  json_decref(res);
  return rc;
}

static void pipe_log_line(pipe_strategy *s, const json_t *msg) {
  const char *level = json_string_value(json_object_get(msg, "level"));
  const char *text = json_string_value(json_object_get(msg, "message"));
  int lv = !level || !strcmp(level, "info") ? 0
           : !strcmp(level, "warning")      ? 1
                                            : 2;
  char safe[4096];
  pipe_sanitize(safe, sizeof safe, text ? text : "", text ? strlen(text) : 0);
  s->env->log(s->env, lv, "%s: %s", s->name, safe);
}

/* Whether `type` is an answer the host could expect to one of its
 * requests, for telling "out of turn" from "unknown". */
static int pipe_is_answer(const char *type) {
  return !strcmp(type, "ready") || !strcmp(type, "configs") ||
         !strcmp(type, "ok");
}

/* Sends the host's request `msg` (its "type" set, its "id" set here) and
 * reads until the program answers it with a message of type `want`,
 * serving the program's requests meanwhile.  On HERON_OK *reply holds the
 * answer (the caller's reference) - or NULL when a failure was absorbed by
 * fallback=random (s->degraded is then set).  Any other status ends the
 * run, with err set. */
static int pipe_turn(pipe_strategy *s, json_t *msg, const char *want,
                     json_t **reply, heron_error *err) {
  *reply = NULL;
  if (!s->live)
    return heron_error_set(err, HERON_EINTERNAL, "pipe: %s is not running",
                           s->name);
  const char *req_type = json_string_value(json_object_get(msg, "type"));
  json_int_t id = ++s->next_id;
  char during[96];
  snprintf(during, sizeof during, "'%s' (id %lld)", req_type, (long long)id);
  char what[512];

  /* Anything the program wrote since its last answer came out of turn. */
  if (pipe_proc_pending(&s->proc)) {
    char *line;
    size_t n;
    int rc = pipe_proc_read_line(&s->proc, plugin_now() + 0.2, PIPE_MAX_LINE,
                                 &line, &n);
    if (rc != HERON_OK && rc != HERON_ETIMEOUT)
      return pipe_fail_io(s, rc, 0, during, err);
    if (rc == HERON_ETIMEOUT)
      line = (char *)pipe_proc_partial(&s->proc, &n);
    snprintf(what, sizeof what,
             "sent a message out of turn, before the host's %s", during);
    return pipe_fail(s, HERON_EPARSE, err, what, line, n, NULL);
  }

  json_object_set_new(msg, "id", json_integer(id));
  pipe_sent(s, during);
  int rc = pipe_send(s, msg);
  if (rc != HERON_OK)
    return pipe_fail_io(s, rc, 1, during, err);

  for (;;) {
    char *line;
    size_t n;
    rc = pipe_proc_read_line(&s->proc, plugin_now() + s->timeout,
                             PIPE_MAX_LINE, &line, &n);
    if (rc != HERON_OK)
      return pipe_fail_io(s, rc, 0, during, err);
    /* Kept for quoting should the program die before its next line. */
    memcpy(s->last, line, n < sizeof s->last ? n : sizeof s->last);
    s->last_n = n;

    json_error_t jerr;
    json_t *m = json_loadb(line, n, 0, &jerr);
    if (!m) {
      char detail[200];
      snprintf(detail, sizeof detail, "column %d: %s", jerr.column, jerr.text);
      snprintf(what, sizeof what, "sent invalid JSON during %s", during);
      return pipe_fail(s, HERON_EPARSE, err, what, line, n, detail);
    }
    const char *type = json_string_value(json_object_get(m, "type"));
    if (!json_is_object(m) || !type) {
      json_decref(m);
      snprintf(what, sizeof what,
               "sent a message that is not an object with a \"type\" "
               "during %s",
               during);
      return pipe_fail(s, HERON_EPARSE, err, what, line, n, NULL);
    }
    if (pipe_is_op(type)) {
      rc = pipe_serve(s, type, m);
      json_decref(m);
      if (rc != HERON_OK)
        return pipe_fail_io(s, rc, 1, during, err);
      continue;
    }
    if (!strcmp(type, "log")) {
      pipe_log_line(s, m);
      json_decref(m);
      continue;
    }
    json_t *jid = json_object_get(m, "id");
    int same = json_is_integer(jid) && json_integer_value(jid) == id;
    if (!strcmp(type, "error") && same) {
      const char *text = json_string_value(json_object_get(m, "message"));
      snprintf(what, sizeof what, "reported an error for %s: %.200s", during,
               text ? text : "(no message)");
      json_decref(m);
      return pipe_fail(s, HERON_EPLUGIN, err, what, line, n, NULL);
    }
    if (!strcmp(type, want) && same) {
      *reply = m;
      return HERON_OK;
    }
    if (!strcmp(type, want) || !strcmp(type, "error"))
      snprintf(what, sizeof what,
               "answered out of turn: '%s' for another id than the host's %s",
               type, during);
    else if (pipe_is_answer(type))
      snprintf(what, sizeof what,
               "answered out of turn: '%s' where the host's %s wants '%s'",
               type, during, want);
    else
      snprintf(what, sizeof what,
               "sent an unknown message type '%.40s' during %s", type, during);
    json_decref(m); /* type points into it */
    return pipe_fail(s, HERON_EPARSE, err, what, line, n, NULL);
  }
}

/* A malformed answer of the right type. */
static int pipe_bad_answer(pipe_strategy *s, json_t *reply, const char *why,
                           heron_error *err) {
  char *text = json_dumps(reply, JSON_COMPACT);
  char what[256];
  snprintf(what, sizeof what, "sent a malformed '%s' (%s)",
           json_string_value(json_object_get(reply, "type")), why);
  int rc = pipe_fail(s, HERON_EPARSE, err, what, text ? text : "",
                     text ? strlen(text) : 0, NULL);
  free(text);
  json_decref(reply);
  return rc;
}

/* The request `type` with nothing else in it yet. */
static json_t *pipe_request(const char *type) {
  return json_pack("{s:s}", "type", type);
}

/* Sends `msg` and expects an "ok".  Consumes msg. */
static int pipe_expect_ok(pipe_strategy *s, json_t *msg, heron_error *err) {
  json_t *reply;
  int rc = pipe_turn(s, msg, "ok", &reply, err);
  json_decref(msg);
  json_decref(reply);
  return rc;
}

/* ---- Random proposals (fallback=random) ---------------------------------- */

static int pipe_random(pipe_strategy *s, int want, int64_t *out, int *got,
                       heron_error *err) {
  int n = 0, failures = 0;
  heron_error last = {0};
  while (n < want && failures < PIPE_RETRIES) {
    heron_error e = {0};
    int rc = heron_space_sample(s->sp, s->env->rng,
                                out + (size_t)n * (size_t)s->nvars, &e);
    if (rc == HERON_OK)
      n++;
    else if (rc == HERON_EUNSAT)
      failures++, last = e;
    else
      return heron_error_set(err, rc, "pipe: sampling failed: %s", e.text);
  }
  *got = n;
  s->random_proposed += n;
  if (n == 0 && want > 0)
    return heron_error_set(err, HERON_EUNSAT,
                           "pipe: no valid config in %d attempts: %s", failures,
                           last.text);
  return HERON_OK;
}

/* ---- create ----------------------------------------------------------------
 */

/* Splits `args` at unquoted whitespace into argv[1..]: '...' keeps
 * everything literally, "..." keeps everything but \" and \\, a backslash
 * outside quotes keeps the next character.  Returns the argv (one block,
 * freed with free) or NULL with the reason in err. */
static char **pipe_split(const char *path, const char *args, heron_error *err) {
  size_t len = strlen(args), nmax = len / 2 + 3;
  char **argv = malloc(nmax * sizeof *argv + len + strlen(path) + 2);
  if (!argv) {
    heron_error_set(err, HERON_ENOMEM, "pipe: out of memory");
    return NULL;
  }
  char *w = (char *)(argv + nmax);
  int argc = 0;
  argv[argc++] = strcpy(w, path);
  w += strlen(path) + 1;
  const char *p = args;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n')
      p++;
    if (!*p)
      break;
    argv[argc++] = w;
    char quote = 0;
    for (; *p && (quote || (*p != ' ' && *p != '\t' && *p != '\n')); p++) {
      if (quote == '\'' && *p == '\'')
        quote = 0;
      else if (quote == '"' && *p == '"')
        quote = 0;
      else if (!quote && (*p == '\'' || *p == '"'))
        quote = *p;
      else if (*p == '\\' && quote != '\'' && p[1] &&
               (!quote || p[1] == '"' || p[1] == '\\'))
        *w++ = *++p;
      else
        *w++ = *p;
    }
    *w++ = '\0';
    if (quote) {
      free(argv);
      heron_error_set(err, HERON_EINVAL, "pipe: args=%.80s: unclosed %c", args,
                      quote);
      return NULL;
    }
  }
  argv[argc] = NULL;
  return argv;
}

/* Resolves `program` as a shell would: a name with a '/' as it is, else
 * the first executable of that name in PATH.  Returns a malloc'ed path or
 * NULL with the reason in err. */
static char *pipe_resolve(const char *program, heron_error *err) {
  struct stat st;
  if (strchr(program, '/')) {
    if (stat(program, &st) == 0 && S_ISDIR(st.st_mode)) {
      heron_error_set(err, HERON_EINVAL,
                      "pipe: program=%.100s is a directory, not a program",
                      program);
      return NULL;
    }
    if (stat(program, &st) != 0) {
      heron_error_set(err, HERON_EINVAL, "pipe: program=%.100s: no such file",
                      program);
      return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
      heron_error_set(err, HERON_EINVAL,
                      "pipe: program=%.100s is not a regular file", program);
      return NULL;
    }
    if (access(program, X_OK) != 0) {
      heron_error_set(err, HERON_EINVAL,
                      "pipe: program=%.100s is not executable (chmod +x, or "
                      "program=python3 args=FILE)",
                      program);
      return NULL;
    }
    return strdup(program);
  }
  const char *path = getenv("PATH");
  for (const char *d = path ? path : "/usr/bin:/bin"; *d;) {
    size_t k = strcspn(d, ":");
    char *full = malloc(k + strlen(program) + 3);
    if (!full)
      break;
    snprintf(full, k + strlen(program) + 3, "%.*s/%s", (int)k, k ? d : ".",
             program);
    if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
      return full;
    free(full);
    d += k + (d[k] == ':');
  }
  heron_error_set(err, HERON_EINVAL, "pipe: program=%.100s: not found in PATH",
                  program);
  return NULL;
}

static void pipe_free(pipe_strategy *s) {
  free(s->knobs);
  free(s->path);
  free(s->argv);
  free(s->cfg);
  free(s->cfg2);
  free(s->cfg3);
  free(s->vars);
  free(s);
}

static int pipe_parse_params(pipe_strategy *s, const heron_param *params,
                             int nparams, heron_error *err) {
  /* The host checked every value against pipe_params (program given,
   * timeout in range, fallback one of its words) and filled the defaults. */
  const char *program = heron_param_get(params, nparams, "program", "");
  if (!*program)
    return heron_error_set(err, HERON_EINVAL,
                           "pipe: program=PATH must name the strategy "
                           "program to run");
  s->timeout = heron_param_double_value(params, nparams, "timeout", 60);
  const char *fb = heron_param_get(params, nparams, "fallback", "none");
  s->fallback = !strcmp(fb, "random");
  if (!(s->path = pipe_resolve(program, err)))
    return err && err->code ? err->code : HERON_EINVAL;
  const char *base = strrchr(program, '/');
  snprintf(s->name, sizeof s->name, "%s", base ? base + 1 : program);
  s->argv =
      pipe_split(s->path, heron_param_get(params, nparams, "args", ""), err);
  return s->argv ? HERON_OK : err && err->code ? err->code : HERON_EINVAL;
}

/* hello -> ready. */
static int pipe_hello(pipe_strategy *s, heron_error *err) {
  const heron_strategy_env *env = s->env;
  /* The seed comes from the host's generator, which --seed seeds: the same
   * --seed gives the program the same seed.  53 bits, exact in any JSON
   * reader. */
  uint64_t seed = heron_rng_next(env->rng) >> 11;
  json_t *hello = json_pack(
      "{s:s, s:i, s:s, s:s, s:i, s:I, s:f, s:o}", "type", "hello", "protocol",
      PIPE_PROTOCOL, "host", "heron-c", "task",
      env->task_key ? env->task_key : "", "batch", env->batch, "seed",
      (json_int_t)seed, "timeout", s->timeout, "space", pipe_space_json(s));
  json_t *ready;
  int rc = pipe_turn(s, hello, "ready", &ready, err);
  json_decref(hello);
  if (rc || !ready)
    return rc;
  json_t *proto = json_object_get(ready, "protocol");
  const char *enc = json_string_value(json_object_get(ready, "configs"));
  json_t *state = json_object_get(ready, "state");
  char why[128];
  if (!json_is_integer(proto) || json_integer_value(proto) != PIPE_PROTOCOL) {
    snprintf(why, sizeof why,
             "\"protocol\" must be %d, the version this host speaks",
             PIPE_PROTOCOL);
    return pipe_bad_answer(s, ready, why, err);
  }
  if (enc && strcmp(enc, "object") && strcmp(enc, "array"))
    return pipe_bad_answer(s, ready, "\"configs\" must be object or array",
                           err);
  if (state && !json_is_boolean(state))
    return pipe_bad_answer(s, ready, "\"state\" must be true or false", err);
  s->arrays = enc && !strcmp(enc, "array");
  s->has_state = json_is_true(state);
  json_decref(ready);
  env->log(env, HERON_LOG_DEBUG, "%s speaks protocol %d (configs as %s%s)",
           s->name, PIPE_PROTOCOL, s->arrays ? "arrays" : "objects",
           s->has_state ? ", keeps state" : "");
  return HERON_OK;
}

static int pipe_create(const heron_strategy_env *env, const heron_param *params,
                       int nparams, void **self, heron_error *err) {
  if (!env || !env->space || !env->rng || !self)
    return heron_error_set(err, HERON_EINVAL,
                           "pipe: env without a space or an rng");
  pipe_strategy *s = calloc(1, sizeof *s);
  if (!s)
    return heron_error_set(err, HERON_ENOMEM, "pipe: out of memory");
  s->env = env;
  s->sp = env->space;
  s->nvars = heron_space_nvars(env->space);
  s->nknobs = heron_space_nknobs(env->space);
  pipe_proc_init(&s->proc);
  size_t nv = (size_t)s->nvars + 1;
  s->knobs = calloc((size_t)s->nknobs + 1, sizeof *s->knobs);
  s->cfg = calloc(nv, sizeof *s->cfg);
  s->cfg2 = calloc(nv, sizeof *s->cfg2);
  s->cfg3 = calloc(nv, sizeof *s->cfg3);
  s->vars = calloc(nv, sizeof *s->vars);
  if (!s->knobs || !s->cfg || !s->cfg2 || !s->cfg3 || !s->vars) {
    pipe_free(s);
    return heron_error_set(err, HERON_ENOMEM, "pipe: out of memory");
  }
  for (int i = 0; i < s->nknobs; i++)
    s->knobs[i] = heron_space_knob(env->space, i);
  int rc = pipe_parse_params(s, params, nparams, err);
  if (rc == HERON_OK)
    rc = pipe_proc_start(&s->proc, s->path, s->argv, s->name, err);
  /* Until the first request, pipe_stop measures from the start. */
  s->sent_at = plugin_now();
  snprintf(s->sent, sizeof s->sent, "the host started it");
  if (rc != HERON_OK) {
    pipe_free(s);
    return rc;
  }
  s->live = 1;
  rc = pipe_hello(s, err);
  if (rc != HERON_OK) {
    pipe_proc_stop(&s->proc, 0);
    pipe_free(s);
    return rc;
  }
  *self = s;
  return HERON_OK;
}

/* ---- propose / observe ------------------------------------------------------
 */

static int pipe_propose(void *self, int want, int64_t *out, int *got,
                        heron_error *err) {
  pipe_strategy *s = self;
  *got = 0;
  s->proposals++;
  if (s->degraded)
    return pipe_random(s, want, out, got, err);
  json_t *req = pipe_request("propose"), *reply;
  json_object_set_new(req, "want", json_integer(want));
  int rc = pipe_turn(s, req, "configs", &reply, err);
  json_decref(req);
  if (rc)
    return rc;
  if (!reply)
    return pipe_random(s, want, out, got, err);
  json_t *configs = json_object_get(reply, "configs");
  char why[160];
  if (!json_is_array(configs))
    return pipe_bad_answer(s, reply, "\"configs\" must be an array", err);
  if ((int)json_array_size(configs) > want) {
    snprintf(why, sizeof why, "%zu configs where at most %d were wanted",
             json_array_size(configs), want);
    return pipe_bad_answer(s, reply, why, err);
  }
  int n = (int)json_array_size(configs);
  for (int i = 0; i < n; i++) {
    int64_t *cfg = out + (size_t)i * (size_t)s->nvars;
    char one[128];
    if (pipe_decode(s, json_array_get(configs, (size_t)i), cfg, one,
                    sizeof one) != 0) {
      snprintf(why, sizeof why, "config %d: %s", i, one);
      return pipe_bad_answer(s, reply, why, err);
    }
    /* A config that cannot be completed keeps its unset variables: the
     * engine finds it invalid and drops it, counting it, as it does for
     * any strategy. */
    heron_error e = {0};
    pipe_complete(s, cfg, &e);
  }
  json_decref(reply);
  s->proposed += n;
  *got = n;
  return HERON_OK;
}

static int pipe_observe(void *self, const heron_measurement *results, int n,
                        heron_error *err) {
  pipe_strategy *s = self;
  s->observed += n;
  if (s->degraded)
    return HERON_OK;
  json_t *list = json_array();
  for (int i = 0; i < n; i++)
    json_array_append_new(list, pipe_result_json(s, &results[i]));
  json_t *req = pipe_request("observe");
  json_object_set_new(req, "results", list);
  /* The engine hands a resumed log's measurements to observe() before the
   * first propose() (and at no other time without one): the program learns
   * they are not answers to its proposals. */
  if (s->proposals == 0)
    json_object_set_new(req, "resumed", json_true());
  return pipe_expect_ok(s, req, err);
}

/* ---- state ------------------------------------------------------------------
 * The program keeps its own state file when it said "state": true in
 * "ready"; the host only tells it where and when. */

static int pipe_state(pipe_strategy *s, const char *type, const char *path,
                      heron_error *err) {
  if (s->degraded || !s->has_state)
    return HERON_OK;
  json_t *req = pipe_request(type);
  json_object_set_new(req, "path", json_string(path));
  return pipe_expect_ok(s, req, err);
}

static int pipe_save_state(void *self, const char *path, heron_error *err) {
  return pipe_state(self, "save", path, err);
}

static int pipe_load_state(void *self, const char *path, heron_error *err) {
  return pipe_state(self, "load", path, err);
}

/* ---- destroy
 * ----------------------------------------------------------------- "bye", a
 * short wait for the program to exit, then the signals: the child is always
 * reaped before destroy returns. */
static void pipe_destroy(void *self) {
  pipe_strategy *s = self;
  if (!s)
    return;
  if (s->live && !s->degraded) {
    json_t *bye = pipe_request("bye");
    json_object_set_new(bye, "id", json_integer(++s->next_id));
    char during[64];
    snprintf(during, sizeof during, "'bye' (id %lld)", (long long)s->next_id);
    pipe_sent(s, during);
    char *text = json_dumps(bye, JSON_COMPACT);
    if (text) {
      size_t n = strlen(text);
      text[n] = '\n';
      pipe_proc_write(&s->proc, text, n + 1, plugin_now() + 1.0);
      free(text);
    }
    json_decref(bye);
  }
  pipe_stop(s, s->live ? PIPE_BYE_GRACE : 0);
  s->env->log(s->env, HERON_LOG_DEBUG,
              "%s: proposed %ld, observed %ld, served %ld requests%s", s->name,
              s->proposed, s->observed, s->ops,
              s->degraded ? " (then random proposals)" : "");
  pipe_free(s);
}

static const heron_strategy_plugin pipe_plugin = {
    .abi_version = HERON_STRATEGY_ABI_VERSION,
    .struct_size = sizeof(heron_strategy_plugin),
    .name = "pipe",
    .summary = "a strategy program in any language, over JSON Lines on its "
               "stdin/stdout (docs/pipe-protocol.md)",
    HERON_PARAM_SPECS(pipe_params),
    .create = pipe_create,
    .propose = pipe_propose,
    .observe = pipe_observe,
    .destroy = pipe_destroy,
    .save_state = pipe_save_state,
    .load_state = pipe_load_state,
};

HERON_PLUGIN_EXPORT const heron_strategy_plugin *
heron_strategy_plugin_v1(void) {
  return &pipe_plugin;
}
