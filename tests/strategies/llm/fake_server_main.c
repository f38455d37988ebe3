/* tests/strategies/llm/fake_server_main.c - `fake-llm-server`, the fake
 * chat server as a program, for shell tests and for trying the llm
 * strategy by hand without a real endpoint.
 *
 * It serves the replies of a JSON Lines script in order, one per request,
 * starting again from the first after the last.  A reader learns the port
 * from --port-file, which appears complete or not at all (written to a
 * temporary name, then renamed).  SIGTERM and SIGINT are taken with
 * sigtimedwait in the main thread rather than by a handler, so stopping is
 * an ordinary fake_server_stop and the exit status is 0.
 */
#include "fake_server.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "fake-llm-server"

static const char USAGE[] =
    "usage: " PROG " --script FILE [--port-file FILE] [--requests-log FILE]\n"
    "                       [--max-requests N]\n"
    "\n"
    "A scripted OpenAI-compatible chat server on 127.0.0.1 (port chosen by\n"
    "the kernel).  Every POST, whatever its path, gets the script's next\n"
    "reply; after the last reply the script starts again from the first.\n"
    "\n"
    "  --script FILE        JSON Lines, one reply per line:\n"
    "                         {\"content\": \"...\"}   a 200 chat completion\n"
    "                         {\"status\": 500, \"body\": \"...\"}   a raw "
    "body\n"
    "                       optional keys: \"delay_ms\" (wait before "
    "answering),\n"
    "                       \"close\": true (close the connection without a "
    "reply)\n"
    "  --port-file FILE     write the port number here once listening\n"
    "  --requests-log FILE  append one JSON line per request:\n"
    "                       {\"call\",\"path\",\"authorization\",\"body\"}\n"
    "  --max-requests N     exit 0 after answering N requests\n"
    "  --help               show this text\n"
    "\n"
    "Exits 0 on SIGTERM / SIGINT, after --max-requests, or when the process\n"
    "that started it exits; 2 on bad arguments or a bad script (the message\n"
    "names the file, line and problem).\n";

/* One scripted reply. */
typedef struct script_reply {
  int status;
  char *body; /* owned; a chat completion for "content" */
  int delay_ms;
  int close;
} script_reply;

typedef struct script {
  script_reply *r;
  int n, cap;
} script;

/* What the handler needs: the script and the log. */
typedef struct server_ctx {
  const script *sc;
  FILE *log;
  const char *log_path;
} server_ctx;

static void script_free(script *sc) {
  for (int i = 0; i < sc->n; i++)
    free(sc->r[i].body);
  free(sc->r);
}

/* Checks that `key` of obj, when present, has the JSON type `want`; prints
 * "FILE:LINE: ..." and returns -1 otherwise. */
static int want_type(const char *file, int line, json_t *obj, const char *key,
                     json_type want, const char *want_name) {
  json_t *v = json_object_get(obj, key);
  if (!v || json_typeof(v) == want)
    return 0;
  static const char *names[] = {"object", "array", "string", "integer",
                                "real",   "true",  "false",  "null"};
  fprintf(stderr, "%s: %s:%d: \"%s\" must be %s, found %s\n", PROG, file, line,
          key, want_name, names[json_typeof(v)]);
  return -1;
}

/* Parses one script line into *out.  0, or -1 after printing the problem. */
static int parse_reply(const char *file, int line, const char *text,
                       script_reply *out) {
  json_error_t jerr;
  json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
  if (!o) {
    fprintf(stderr, "%s: %s:%d: not JSON: %s (column %d)\n", PROG, file, line,
            jerr.text, jerr.column);
    return -1;
  }
  int rc = -1;
  if (!json_is_object(o)) {
    fprintf(stderr, "%s: %s:%d: a reply must be a JSON object\n", PROG, file,
            line);
    goto out;
  }
  const char *key;
  json_t *v;
  json_object_foreach(o, key, v) {
    if (strcmp(key, "content") != 0 && strcmp(key, "status") != 0 &&
        strcmp(key, "body") != 0 && strcmp(key, "delay_ms") != 0 &&
        strcmp(key, "close") != 0) {
      fprintf(stderr,
              "%s: %s:%d: unknown key \"%s\" (known: content, status, body, "
              "delay_ms, close)\n",
              PROG, file, line, key);
      goto out;
    }
  }
  json_t *close_v = json_object_get(o, "close");
  if (want_type(file, line, o, "content", JSON_STRING, "a string") ||
      want_type(file, line, o, "body", JSON_STRING, "a string") ||
      want_type(file, line, o, "status", JSON_INTEGER, "an integer") ||
      want_type(file, line, o, "delay_ms", JSON_INTEGER, "an integer"))
    goto out;
  if (close_v && !json_is_boolean(close_v)) {
    fprintf(stderr, "%s: %s:%d: \"close\" must be true or false\n", PROG, file,
            line);
    goto out;
  }
  json_t *content = json_object_get(o, "content");
  json_t *body = json_object_get(o, "body");
  json_t *status = json_object_get(o, "status");
  json_t *delay = json_object_get(o, "delay_ms");
  out->close = close_v && json_is_true(close_v);
  if (content && body) {
    fprintf(stderr, "%s: %s:%d: give \"content\" or \"body\", not both\n", PROG,
            file, line);
    goto out;
  }
  if (!content && !body && !out->close) {
    fprintf(stderr,
            "%s: %s:%d: a reply needs \"content\", \"body\" or \"close\": "
            "true\n",
            PROG, file, line);
    goto out;
  }
  json_int_t st = status ? json_integer_value(status) : 200;
  if (st < 100 || st > 599) {
    fprintf(stderr,
            "%s: %s:%d: \"status\" %lld is not an HTTP status "
            "(100..599)\n",
            PROG, file, line, (long long)st);
    goto out;
  }
  json_int_t d = delay ? json_integer_value(delay) : 0;
  if (d < 0 || d > 3600000) {
    fprintf(stderr, "%s: %s:%d: \"delay_ms\" %lld is outside 0..3600000\n",
            PROG, file, line, (long long)d);
    goto out;
  }
  out->status = (int)st;
  out->delay_ms = (int)d;
  out->body = content ? fake_chat_body(json_string_value(content))
                      : strdup(body ? json_string_value(body) : "");
  if (!out->body) {
    fprintf(stderr, "%s: %s:%d: out of memory\n", PROG, file, line);
    goto out;
  }
  rc = 0;
out:
  json_decref(o);
  return rc;
}

/* Reads the script; 0, or -1 after printing what is wrong where. */
static int script_load(const char *file, script *sc) {
  FILE *f = fopen(file, "r");
  if (!f) {
    fprintf(stderr, "%s: cannot open script %s: %s\n", PROG, file,
            strerror(errno));
    return -1;
  }
  char *text = NULL;
  size_t cap = 0;
  ssize_t len;
  int line = 0, rc = 0;
  while ((len = getline(&text, &cap, f)) >= 0) {
    line++;
    if (strspn(text, " \t\r\n") == (size_t)len)
      continue; /* blank lines, e.g. a trailing one, are not replies */
    if (sc->n == sc->cap) {
      int ncap = sc->cap ? 2 * sc->cap : 8;
      script_reply *p = realloc(sc->r, (size_t)ncap * sizeof *p);
      if (!p) {
        fprintf(stderr, "%s: %s:%d: out of memory\n", PROG, file, line);
        rc = -1;
        break;
      }
      sc->r = p;
      sc->cap = ncap;
    }
    if (parse_reply(file, line, text, &sc->r[sc->n]) != 0) {
      rc = -1;
      break;
    }
    sc->n++;
  }
  free(text);
  fclose(f);
  if (rc == 0 && sc->n == 0) {
    fprintf(stderr, "%s: %s: the script has no replies\n", PROG, file);
    rc = -1;
  }
  return rc;
}

/* Appends the log line of one request: body as JSON when it parses, else
 * as a string. */
static void log_request(server_ctx *ctx, int call, const char *path,
                        const char *auth, const char *body) {
  json_t *b = json_loads(body, JSON_DECODE_ANY, NULL);
  if (!b)
    b = json_string(body);
  if (!b) {
    /* Not UTF-8: bytes above 0x7f become '?', so the log stays JSON. */
    char *ascii = strdup(body);
    for (char *p = ascii; p && *p; p++)
      if ((unsigned char)*p > 0x7f)
        *p = '?';
    b = json_string(ascii ? ascii : "");
    free(ascii);
  }
  json_t *o = json_pack("{s:i,s:s,s:s?,s:o}", "call", call, "path", path,
                        "authorization", auth, "body", b);
  if (!o || json_dumpf(o, ctx->log, JSON_COMPACT) != 0 ||
      fputc('\n', ctx->log) == EOF || fflush(ctx->log) != 0)
    fprintf(stderr, "%s: cannot write request %d to %s: %s\n", PROG, call,
            ctx->log_path, strerror(errno));
  json_decref(o);
}

static void handle(void *ud, int call, const char *path, const char *auth,
                   const char *body, fake_reply *out) {
  server_ctx *ctx = ud;
  if (ctx->log)
    log_request(ctx, call, path, auth, body);
  const script_reply *r = &ctx->sc->r[call % ctx->sc->n];
  out->status = r->status;
  out->body = r->body;
  out->delay_ms = r->delay_ms;
  out->close_early = r->close;
}

/* Writes "PORT\n" to path via a temporary file and rename, so a reader
 * polling for the file never sees it half written. */
static int write_port_file(const char *path, int port) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >=
      (int)sizeof tmp) {
    fprintf(stderr, "%s: --port-file path too long: %s\n", PROG, path);
    return -1;
  }
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "%s: cannot write port file %s: %s\n", PROG, tmp,
            strerror(errno));
    return -1;
  }
  int bad = fprintf(f, "%d\n", port) < 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    fprintf(stderr, "%s: cannot write port file %s: %s\n", PROG, path,
            strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* The value after flag argv[*i], or NULL after printing that it is missing. */
static const char *flag_value(int argc, char **argv, int *i) {
  if (*i + 1 >= argc) {
    fprintf(stderr, "%s: %s needs a value\n%s", PROG, argv[*i], USAGE);
    return NULL;
  }
  return argv[++*i];
}

int main(int argc, char **argv) {
  const char *script_path = NULL, *port_file = NULL, *log_path = NULL;
  long max_requests = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(USAGE, stdout);
      return 0;
    } else if (strcmp(a, "--script") == 0) {
      if (!(script_path = flag_value(argc, argv, &i)))
        return 2;
    } else if (strcmp(a, "--port-file") == 0) {
      if (!(port_file = flag_value(argc, argv, &i)))
        return 2;
    } else if (strcmp(a, "--requests-log") == 0) {
      if (!(log_path = flag_value(argc, argv, &i)))
        return 2;
    } else if (strcmp(a, "--max-requests") == 0) {
      const char *v = flag_value(argc, argv, &i);
      char *end;
      if (!v)
        return 2;
      errno = 0;
      max_requests = strtol(v, &end, 10);
      if (errno || *end || end == v || max_requests <= 0 ||
          max_requests > INT_MAX) {
        fprintf(stderr,
                "%s: --max-requests wants a positive integer, got \"%s\"\n",
                PROG, v);
        return 2;
      }
    } else {
      fprintf(stderr, "%s: unknown argument \"%s\"\n%s", PROG, a, USAGE);
      return 2;
    }
  }
  if (!script_path) {
    fprintf(stderr, "%s: --script FILE is required\n%s", PROG, USAGE);
    return 2;
  }
  script sc = {0};
  if (script_load(script_path, &sc) != 0) {
    script_free(&sc);
    return 2;
  }
  server_ctx ctx = {.sc = &sc, .log_path = log_path};
  if (log_path && !(ctx.log = fopen(log_path, "a"))) {
    fprintf(stderr, "%s: cannot open requests log %s: %s\n", PROG, log_path,
            strerror(errno));
    script_free(&sc);
    return 2;
  }
  /* Blocked before the server thread exists, so it inherits the mask and
   * the signals wait for sigtimedwait below. */
  pid_t parent = getppid();
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  int rc = 0;
  fake_server *s = fake_server_start_ex(handle, &ctx);
  if (!s) {
    rc = 1;
    goto out;
  }
  if (port_file && write_port_file(port_file, fake_server_port(s)) != 0) {
    rc = 1;
    goto out;
  }
  fprintf(stderr, "%s: listening on 127.0.0.1:%d, %d scripted replies\n", PROG,
          fake_server_port(s), sc.n);
  /* Wakes every 20 ms to compare the reply count with --max-requests, and
   * to see whether the process that started it is gone: a test script
   * killed by ctest's timeout cannot run its trap, and must not leave a
   * server behind. */
  const struct timespec tick = {0, 20 * 1000000L};
  for (;;) {
    if (max_requests && fake_server_replies(s) >= max_requests)
      break;
    if (getppid() != parent)
      break;
    int sig = sigtimedwait(&sigs, NULL, &tick);
    if (sig == SIGTERM || sig == SIGINT)
      break;
  }
out:
  fake_server_stop(s);
  if (ctx.log)
    fclose(ctx.log);
  script_free(&sc);
  return rc;
}
