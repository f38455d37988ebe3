/* tests/strategies/llm/fake_server.h - a scripted OpenAI-compatible chat
 * server on a loopback port, for the llm strategy's tests.
 *
 * It listens on 127.0.0.1 at a port the kernel picks, in a thread of the
 * test process, and answers every HTTP/1.1 POST (any path) by asking the
 * test's handler what to send: a status and body, after a delay, or a
 * connection closed without a reply.  It records every request (path,
 * Authorization header, body) so tests can assert what the plugin sent.
 * One connection at a time; every reply carries "Connection: close".
 */
#ifndef HERON_TEST_FAKE_SERVER_H
#define HERON_TEST_FAKE_SERVER_H

#include <stddef.h>

/* What to send for one request.  The handler fills it; body is copied. */
typedef struct fake_reply {
  int status;       /* HTTP status, e.g. 200, 401, 500 */
  const char *body; /* the response body (Content-Type: application/json) */
  int delay_ms;     /* wait this long before answering */
  int close_early;  /* 1: close the connection without any reply */
} fake_reply;

/* Called once per request, in the server thread.  call counts from 0. */
typedef void (*fake_handler)(void *ud, int call, const char *request_body,
                             fake_reply *out);

typedef struct fake_server fake_server;

/* Starts the server; NULL (with a message on stderr) on failure. */
fake_server *fake_server_start(fake_handler handler, void *ud);

/* The port it listens on, and "http://127.0.0.1:PORT/v1" in buf. */
int fake_server_port(const fake_server *s);
void fake_server_url(const fake_server *s, char *buf, size_t cap);

/* Requests received so far, and the i-th one's parts ("" when absent).
 * The strings stay valid until fake_server_stop. */
int fake_server_requests(fake_server *s);
const char *fake_server_path(fake_server *s, int i);
const char *fake_server_auth(fake_server *s, int i);
const char *fake_server_body(fake_server *s, int i);

/* Stops the thread, closes the socket, frees everything. */
void fake_server_stop(fake_server *s);

/* fake_server_stop, saying how much the stop cut short: the ms that were
 * left of the wait the server thread was in (of a scripted delay's
 * delay_ms, of FAKE_SERVER_IDLE_MS while reading a request or sending; 0
 * when the wait had run out), -1 when it was waiting for a connection, or
 * FAKE_SERVER_NO_WAIT when it was in no wait.  Tests bound "the stop did
 * not wait out the delay" with this, the server's own account, rather than
 * only with a wall time that a busy machine stretches. */
int fake_server_stop_report(fake_server *s);
#define FAKE_SERVER_NO_WAIT (-2)

/* A client that connects and then sends nothing is dropped after this. */
#define FAKE_SERVER_IDLE_MS 30000

/* A chat-completion body whose message content is `content` (JSON-escaped
 * here), malloc'ed; the caller frees it. */
char *fake_chat_body(const char *content);

/* ---- Added for fake-llm-server and tests that need more ---------------- */

/* A handler that also sees the request's path and Authorization header
 * (NULL when the request had none, unlike fake_server_auth's ""). */
typedef void (*fake_handler_ex)(void *ud, int call, const char *path,
                                const char *auth, const char *request_body,
                                fake_reply *out);

/* fake_server_start with a fake_handler_ex; NULL (message on stderr) on
 * failure. */
fake_server *fake_server_start_ex(fake_handler_ex handler, void *ud);

/* Requests answered so far: replies fully sent, or connections closed on
 * purpose (close_early).  A reply whose client has gone away counts too. */
int fake_server_replies(fake_server *s);

/* Scripted delays that ended early because the client hung up (it timed
 * out) rather than running out. */
int fake_server_cut_delays(fake_server *s);

#endif
