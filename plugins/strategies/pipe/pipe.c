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
 * child (deadlines, SIGPIPE, reaping); this file speaks the protocol, with
 * configs, results and the space in JSON from wire.c and the answers to
 * the program's requests from ops.c (pipe.h).
 *
 * Parameters (see README.md): program, args, timeout, fallback.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipe.h"
#include "plugin_util.h"

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
  json_t *res = pipe_op_answer(s, type, req);
  s->ops++;
  int rc = pipe_send(s, res);
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
    rc = pipe_proc_read_line(&s->proc, plugin_now() + s->timeout, PIPE_MAX_LINE,
                             &line, &n);
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
