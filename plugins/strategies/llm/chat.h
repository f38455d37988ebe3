/* plugins/strategies/llm/chat.h - one chat-completion exchange over HTTP
 * (libcurl), with retries, and its recording and replay.
 *
 * A request is POST <url>/chat/completions with a JSON body {"model",
 * "messages": [system, user], "temperature"[, "max_tokens"]} and, when an
 * API key is given, "Authorization: Bearer <key>".  The key is held only in
 * the header list: it is never written to a recording, a message or a log.
 *
 * Recording appends one JSON line per exchange to a file: {"call", "request"
 * (the JSON body sent), "status" (HTTP status, 0 when no reply came),
 * "body" (the reply body as text), "error" (why the exchange failed, "" when
 * it did not), "attempts", "seconds"}.  Replay answers the n-th exchange
 * from the n-th line of such a file, without a server: a run with the same
 * seed and parameters sends the same prompts, so it gets the same replies.
 */
#ifndef HERON_LLM_CHAT_H
#define HERON_LLM_CHAT_H

#include "heron/status.h"

typedef struct llm_chat_opts {
  const char *url;     /* base URL ("http://127.0.0.1:8080/v1") or the full
                          .../chat/completions endpoint */
  const char *model;   /* the "model" field */
  const char *api_key; /* the key itself, or NULL for none */
  double temperature;
  double timeout_s;   /* per attempt, connecting included */
  int retries;        /* further attempts after a transport error, a 408,
                         a 429 or a 5xx */
  int max_tokens;     /* 0: not sent */
  const char *record; /* file to append exchanges to, or NULL */
  const char *replay; /* file to answer from instead of the server, or NULL */
} llm_chat_opts;

typedef struct llm_chat llm_chat;

/* What one exchange gave.  body is malloc'ed (NULL when no reply came) and
 * freed by llm_exchange_clear. */
typedef struct llm_exchange {
  int status;      /* HTTP status of the last attempt, 0 when none came */
  char *body;      /* the reply body */
  char error[200]; /* "" when status is 200; else why the call failed */
  int attempts;
  char retried[200]; /* why the last failed attempt failed, when a later one
                        was made; "" otherwise */
  double seconds;
  int diverged; /* replay: this call's request differs from the recorded
                   one (the run no longer follows the recording) */
} llm_exchange;

/* Opens the client: checks the options, reads the replay file
 * (HERON_EINVAL naming it when it cannot be read, HERON_EPARSE naming the line
 * when a line is not a recorded exchange), opens the record file for appending
 * (HERON_EIO naming it).  *out is freed with llm_chat_close. */
int llm_chat_open(const llm_chat_opts *o, llm_chat **out, heron_error *err);

/* Sends one request (system and user messages) and fills *x.  Returns 0 when
 * a 200 reply with a body came, -1 otherwise (x->error says why: "HTTP 401
 * Unauthorized: <start of the body>", "timed out after 2.0 s", "connection
 * closed without a reply", "replay: the recording holds only 12 calls").
 * HERON_EIO-worthy trouble with the record file is reported in x->error
 * too, after the exchange itself succeeded. */
int llm_chat_ask(llm_chat *c, const char *system, const char *user,
                 llm_exchange *x);

void llm_exchange_clear(llm_exchange *x);

/* The number of exchanges so far (the next call's index), and setting it,
 * so a resumed run replays from where it stopped. */
int llm_chat_calls(const llm_chat *c);
void llm_chat_set_calls(llm_chat *c, int calls);

void llm_chat_close(llm_chat *c);

#endif
