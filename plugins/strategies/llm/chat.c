/* plugins/strategies/llm/chat.c - one chat-completion exchange over HTTP
 * with libcurl, retries, recording and replay (see chat.h). */
#define _POSIX_C_SOURCE 200809L
#include "chat.h"
#include "plugin_util.h"
#include "reply.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A reply larger than this is not a chat completion worth reading. */
#define LLM_MAX_BODY (16u << 20)

struct llm_chat {
  char *endpoint;
  char *model;
  char *api_key; /* NULL for none; never printed */
  double temperature, timeout_s;
  int retries, max_tokens;
  CURL *curl;
  struct curl_slist *headers;
  FILE *record;
  char *record_path;
  json_t *replay; /* array of recorded exchanges, or NULL */
  char *replay_path;
  int calls;
};

static void sleep_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0)
    ;
}

/* Overwrites every occurrence of the API key in s (in place) with '*': a
 * server that echoes the key in an error ("Incorrect API key provided:
 * sk-...") must not put it into a message or a recording. */
static void scrub(const llm_chat *c, char *s) {
  if (!c->api_key || !s)
    return;
  size_t k = strlen(c->api_key);
  if (k < 4)
    return;
  for (char *p = strstr(s, c->api_key); p; p = strstr(p + k, c->api_key))
    memset(p, '*', k);
}

static int load_replay(llm_chat *c, const char *path, heron_error *err) {
  FILE *f = fopen(path, "r");
  if (!f)
    return heron_error_set(err, HERON_EINVAL,
                           "llm: parameter replay: the file '%s' cannot be "
                           "read",
                           path);
  c->replay = json_array();
  char *line = NULL;
  size_t cap = 0;
  int lineno = 0, rc = HERON_OK;
  while (getline(&line, &cap, f) > 0) {
    lineno++;
    if (strspn(line, " \t\r\n") == strlen(line))
      continue;
    json_error_t je;
    json_t *o = json_loads(line, 0, &je);
    if (!json_is_object(o) || !json_is_object(json_object_get(o, "request")) ||
        !json_is_integer(json_object_get(o, "status")) ||
        !(json_is_string(json_object_get(o, "body")) ||
          json_is_null(json_object_get(o, "body")))) {
      json_decref(o);
      rc = heron_error_set(err, HERON_EPARSE,
                           "llm: replay file '%s' line %d is not a recorded "
                           "exchange (an object with request, status and "
                           "body)",
                           path, lineno);
      break;
    }
    json_array_append_new(c->replay, o);
  }
  free(line);
  fclose(f);
  return rc;
}

int llm_chat_open(const llm_chat_opts *o, llm_chat **out, heron_error *err) {
  llm_chat *c = calloc(1, sizeof *c);
  if (!c)
    return heron_error_set(err, HERON_ENOMEM, "llm: out of memory");
  const char *url = o->url ? o->url : "";
  size_t n = strlen(url);
  while (n > 0 && url[n - 1] == '/')
    n--;
  const char *suffix = "/chat/completions";
  int full = n >= strlen(suffix) &&
             !strncmp(url + n - strlen(suffix), suffix, strlen(suffix));
  c->endpoint = malloc(n + strlen(suffix) + 1);
  c->model = strdup(o->model ? o->model : "");
  c->api_key = o->api_key && *o->api_key ? strdup(o->api_key) : NULL;
  if (!c->endpoint || !c->model || (o->api_key && *o->api_key && !c->api_key)) {
    llm_chat_close(c);
    return heron_error_set(err, HERON_ENOMEM, "llm: out of memory");
  }
  memcpy(c->endpoint, url, n);
  strcpy(c->endpoint + n, full ? "" : suffix);
  c->temperature = o->temperature;
  c->timeout_s = o->timeout_s;
  c->retries = o->retries;
  c->max_tokens = o->max_tokens;
  int rc = HERON_OK;
  if (o->replay && *o->replay) {
    c->replay_path = strdup(o->replay);
    rc = load_replay(c, o->replay, err);
  } else {
    c->curl = curl_easy_init();
    if (!c->curl)
      rc = heron_error_set(err, HERON_ENOMEM, "llm: curl_easy_init failed");
    c->headers = curl_slist_append(NULL, "Content-Type: application/json");
    /* No "Expect: 100-continue" round trip for large prompts. */
    c->headers = curl_slist_append(c->headers, "Expect:");
    if (c->api_key) {
      size_t hl = strlen(c->api_key) + 32;
      char *h = malloc(hl);
      if (h) {
        snprintf(h, hl, "Authorization: Bearer %s", c->api_key);
        c->headers = curl_slist_append(c->headers, h);
        memset(h, 0, hl);
        free(h);
      }
    }
  }
  if (rc == HERON_OK && o->record && *o->record) {
    c->record_path = strdup(o->record);
    c->record = fopen(o->record, "a");
    if (!c->record)
      rc = heron_error_set(err, HERON_EIO,
                           "llm: record file '%s' cannot be opened for "
                           "appending",
                           o->record);
  }
  if (rc != HERON_OK) {
    llm_chat_close(c);
    return rc;
  }
  *out = c;
  return HERON_OK;
}

typedef struct growbuf {
  char *s;
  size_t len;
  int too_big;
} growbuf;

static size_t on_data(char *p, size_t size, size_t nmemb, void *ud) {
  growbuf *b = ud;
  size_t n = size * nmemb;
  if (b->len + n > LLM_MAX_BODY) {
    b->too_big = 1;
    return 0; /* makes curl stop with CURLE_WRITE_ERROR */
  }
  char *s = realloc(b->s, b->len + n + 1);
  if (!s)
    return 0;
  memcpy(s + b->len, p, n);
  b->len += n;
  s[b->len] = '\0';
  b->s = s;
  return n;
}

/* One HTTP attempt.  Returns 1 when it is worth retrying. */
static int attempt(llm_chat *c, const char *payload, llm_exchange *x) {
  growbuf b = {0};
  char errbuf[CURL_ERROR_SIZE] = "";
  CURL *h = c->curl;
  curl_easy_reset(h);
  curl_easy_setopt(h, CURLOPT_URL, c->endpoint);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(payload));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->headers);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->timeout_s * 1000));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->timeout_s * 1000));
  curl_easy_setopt(h, CURLOPT_USERAGENT, "heron-c llm.so");
  /* A proxy from the environment is for the outside world; a local server
   * (llama.cpp, Ollama, vLLM on this machine) is reached directly. */
  curl_easy_setopt(h, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");
  double t0 = plugin_now();
  CURLcode rc = curl_easy_perform(h);
  double waited = plugin_now() - t0;
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  free(x->body);
  x->body = b.s;
  scrub(c, x->body);
  x->status = rc == CURLE_OK ? (int)status : 0;
  if (rc == CURLE_OK && status == 200 && b.s) {
    x->error[0] = '\0';
    return 0;
  }
  if (rc == CURLE_OK && status == 200) {
    snprintf(x->error, sizeof x->error, "HTTP 200 with an empty body");
    return 1;
  }
  if (rc == CURLE_OK) {
    char ex[100];
    llm_quote(ex, sizeof ex, b.s ? b.s : "", b.s ? b.len : 0, 80);
    snprintf(x->error, sizeof x->error, "HTTP %ld from %.80s: %.100s", status,
             c->endpoint, ex[0] ? ex : "(no body)");
    return status == 408 || status == 429 || status >= 500;
  }
  if (b.too_big)
    snprintf(x->error, sizeof x->error, "the reply is larger than %u MiB",
             LLM_MAX_BODY >> 20);
  else if (rc == CURLE_OPERATION_TIMEDOUT)
    /* How long the attempt really waited: the timeout plus however late
     * libcurl noticed it, so a test can bound the detection itself. */
    snprintf(x->error, sizeof x->error,
             "no reply from %.120s within %.1f s (gave up after %.2f s)",
             c->endpoint, c->timeout_s, waited);
  else if (rc == CURLE_GOT_NOTHING)
    snprintf(x->error, sizeof x->error,
             "%.120s closed the connection without a reply", c->endpoint);
  else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
    snprintf(x->error, sizeof x->error, "cannot connect to %.90s (%.70s)",
             c->endpoint, errbuf[0] ? errbuf : curl_easy_strerror(rc));
  else
    snprintf(x->error, sizeof x->error, "%.100s: %.90s", c->endpoint,
             errbuf[0] ? errbuf : curl_easy_strerror(rc));
  scrub(c, x->error);
  return !b.too_big;
}

static void from_replay(llm_chat *c, json_t *request, llm_exchange *x) {
  json_t *r = json_array_get(c->replay, (size_t)c->calls);
  if (!r) {
    snprintf(x->error, sizeof x->error,
             "replay: '%s' holds only %zu recorded calls", c->replay_path,
             json_array_size(c->replay));
    return;
  }
  x->diverged = !json_equal(request, json_object_get(r, "request"));
  x->status = (int)json_integer_value(json_object_get(r, "status"));
  const char *body = json_string_value(json_object_get(r, "body"));
  x->body = body ? strdup(body) : NULL;
  scrub(c, x->body); /* a recording made elsewhere may hold this key */
  json_t *attempts = json_object_get(r, "attempts");
  x->attempts =
      json_is_integer(attempts) ? (int)json_integer_value(attempts) : 1;
  const char *e = json_string_value(json_object_get(r, "error"));
  snprintf(x->error, sizeof x->error, "%s", e ? e : "");
  if (x->status == 200 && !x->body)
    snprintf(x->error, sizeof x->error, "replay: call %d has no body",
             c->calls);
  else if (x->status != 200 && !x->error[0])
    snprintf(x->error, sizeof x->error, "replay: call %d got HTTP %d", c->calls,
             x->status);
}

static void record(llm_chat *c, json_t *request, const llm_exchange *x) {
  if (!c->record)
    return;
  json_t *o = json_pack("{s:i, s:O, s:i, s:s?, s:s, s:i, s:f}", "call",
                        c->calls, "request", request, "status", x->status,
                        "body", x->body, "error", x->error, "attempts",
                        x->attempts, "seconds", x->seconds);
  char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
  if (line) {
    fprintf(c->record, "%s\n", line);
    fflush(c->record);
  }
  free(line);
  json_decref(o);
}

int llm_chat_ask(llm_chat *c, const char *system, const char *user,
                 llm_exchange *x) {
  memset(x, 0, sizeof *x);
  double t0 = plugin_now();
  json_t *request =
      json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:f}", "model", c->model,
                "messages", "role", "system", "content", system, "role", "user",
                "content", user, "temperature", c->temperature);
  if (request && c->max_tokens > 0)
    json_object_set_new(request, "max_tokens", json_integer(c->max_tokens));
  char *payload = request ? json_dumps(request, JSON_COMPACT) : NULL;
  if (!payload) {
    json_decref(request);
    snprintf(x->error, sizeof x->error, "out of memory building the request");
    return -1;
  }
  if (c->replay) {
    from_replay(c, request, x);
  } else {
    for (int a = 0; a <= c->retries; a++) {
      if (a > 0) {
        double wait = 0.25 * (double)(1 << (a - 1 < 3 ? a - 1 : 3));
        sleep_s(wait);
      }
      x->attempts = a + 1;
      if (!attempt(c, payload, x))
        break;
      if (a < c->retries)
        memcpy(x->retried, x->error, sizeof x->retried);
    }
  }
  x->seconds = plugin_now() - t0;
  record(c, request, x);
  c->calls++;
  free(payload);
  json_decref(request);
  return x->status == 200 && x->body && !x->error[0] ? 0 : -1;
}

void llm_exchange_clear(llm_exchange *x) {
  free(x->body);
  x->body = NULL;
}

int llm_chat_calls(const llm_chat *c) { return c->calls; }

void llm_chat_set_calls(llm_chat *c, int calls) { c->calls = calls; }

void llm_chat_close(llm_chat *c) {
  if (!c)
    return;
  if (c->curl)
    curl_easy_cleanup(c->curl);
  curl_slist_free_all(c->headers);
  if (c->record)
    fclose(c->record);
  json_decref(c->replay);
  if (c->api_key) {
    memset(c->api_key, 0, strlen(c->api_key));
    free(c->api_key);
  }
  free(c->endpoint);
  free(c->model);
  free(c->record_path);
  free(c->replay_path);
  free(c);
}
