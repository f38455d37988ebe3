/* tests/strategies/llm/fake_server.c - the scripted chat server of
 * fake_server.h: one thread, one connection at a time, HTTP/1.1 with
 * Content-Length bodies and "Connection: close" on every reply.
 *
 * Everything that can wait (accept, reading a request, the scripted delay,
 * sending) polls the client socket together with a self-pipe, so that
 * fake_server_stop wakes the thread at once whatever it is doing: a test
 * that stops the server during a 10 s delay must not wait 10 s.  Sockets are
 * non-blocking and sends use MSG_NOSIGNAL, because a client that timed out
 * and hung up must not kill the test process with SIGPIPE.
 */
#include "fake_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Limits that keep a broken client from growing the buffers without end.
 * Bodies of a few hundred KB are normal (prompts with long histories). */
enum {
  FAKE_MAX_HEAD = 64 * 1024,
  FAKE_MAX_BODY = 64 * 1024 * 1024,
  /* A client that connects and then sends nothing is dropped after this,
   * so the standalone server does not hang on it for ever. */
  FAKE_IDLE_MS = FAKE_SERVER_IDLE_MS
};

/* One recorded request; auth is NULL when the header was absent. */
typedef struct fake_record {
  char *path;
  char *auth;
  char *body;
} fake_record;

struct fake_server {
  fake_handler handler;       /* the plain handler, or NULL */
  fake_handler_ex handler_ex; /* the extended one, or NULL */
  void *ud;
  int listen_fd;
  int wake[2]; /* self-pipe: a byte in wake[0] means "stop now" */
  int port;
  pthread_t thread;
  pthread_mutex_t mu; /* guards recs, nrecs, caprecs, replies */
  fake_record *recs;
  int nrecs, caprecs;
  int replies;
  int cut_delays; /* delays ended early by the client hanging up */
  atomic_int stopping;
  /* The ms left of the wait the stop interrupted (-1: a wait without
   * end), or FAKE_SERVER_NO_WAIT while none was. */
  atomic_int stop_cut_ms;
};

/* One parsed request, owned by the connection being served. */
typedef struct fake_request {
  char *path;
  char *auth;
  char *body;
} fake_request;

/* ---- Waiting, with stop as an interruption ------------------------------ */

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for `events` (fd < 0: only sleeps), the stop pipe
 * fires, or timeout_ms passes (-1: no limit).  Returns 1 ready, 0 timed
 * out, -1 stopping or poll failed. */
static int wait_fd(fake_server *s, int fd, short events, int timeout_ms) {
  long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  for (;;) {
    struct pollfd p[2] = {{.fd = s->wake[0], .events = POLLIN},
                          {.fd = fd, .events = events}};
    int left = -1;
    if (deadline >= 0) {
      long long d = deadline - now_ms();
      left = d < 0 ? 0 : (int)d;
    }
    int r = poll(p, fd >= 0 ? 2 : 1, left);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 || atomic_load(&s->stopping) || (p[0].revents & POLLIN)) {
      /* What the stop cut short: the rest of this wait (0 when it had
       * run out), -1 when it had no end. */
      int none = FAKE_SERVER_NO_WAIT;
      long long rest = deadline < 0 ? -1 : deadline - now_ms();
      if (atomic_load(&s->stopping))
        atomic_compare_exchange_strong(
            &s->stop_cut_ms, &none, rest < 0 && deadline >= 0 ? 0 : (int)rest);
      return -1;
    }
    if (r == 0)
      return 0;
    /* POLLHUP / POLLERR count as ready: the following recv or send then
     * reports what happened. */
    if (fd >= 0 && p[1].revents)
      return 1;
  }
}

/* Sends all of data, waiting for room as needed.  0, or -1 when the client
 * is gone (EPIPE / ECONNRESET: normal after a client timeout) or stopping. */
static int send_all(fake_server *s, int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      len -= (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_fd(s, fd, POLLOUT, FAKE_IDLE_MS) != 1)
        return -1;
      continue;
    }
    return -1;
  }
  return 0;
}

/* ---- Reading and parsing one request ------------------------------------ */

/* A growing byte buffer, always NUL-terminated so it can be used as text. */
typedef struct fake_buf {
  char *data;
  size_t len, cap;
} fake_buf;

static int buf_reserve(fake_buf *b, size_t extra) {
  if (b->len + extra + 1 <= b->cap)
    return 0;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + extra + 1)
    cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p)
    return -1;
  b->data = p;
  b->cap = cap;
  return 0;
}

/* Reads what is available into b (at least one byte).  1 read, 0 the
 * client closed, -1 error / idle timeout / stopping. */
static int read_some(fake_server *s, int fd, fake_buf *b) {
  for (;;) {
    if (buf_reserve(b, 16384) != 0)
      return -1;
    ssize_t n = recv(fd, b->data + b->len, b->cap - b->len - 1, 0);
    if (n > 0) {
      b->len += (size_t)n;
      b->data[b->len] = '\0';
      return 1;
    }
    if (n == 0)
      return 0;
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return -1;
    if (wait_fd(s, fd, POLLIN, FAKE_IDLE_MS) != 1)
      return -1;
  }
}

static char *dup_range(const char *p, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, p, n);
    d[n] = '\0';
  }
  return d;
}

/* Trims spaces and tabs at both ends of [*p, *p + *n). */
static void trim(const char **p, size_t *n) {
  while (*n > 0 && (**p == ' ' || **p == '\t')) {
    (*p)++;
    (*n)--;
  }
  while (*n > 0 && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t'))
    (*n)--;
}

/* Does header line [name, name + n) have this name (case-insensitive)? */
static int name_is(const char *name, size_t n, const char *want) {
  return n == strlen(want) && strncasecmp(name, want, n) == 0;
}

/* What went wrong with a request the handler never sees: the status to
 * answer with (0: just close) and why, for the JSON error body. */
typedef struct fake_reject {
  int status;
  const char *why;
} fake_reject;

/* The head's parts the body reading needs. */
typedef struct fake_head {
  int is_post;
  int has_length;
  unsigned long long length;
  int expect_continue;
  int chunked;
} fake_head;

/* Parses the request line and headers in head[0, head_len) (the blank line
 * excluded) into req and h.  0, or -1 with *rej filled. */
static int parse_head(const char *head, size_t head_len, fake_request *req,
                      fake_head *h, fake_reject *rej) {
  const char *end = head + head_len;
  const char *eol = memmem(head, head_len, "\r\n", 2);
  if (!eol)
    eol = end;
  /* Request line: METHOD SP target SP HTTP/1.x */
  const char *sp1 = memchr(head, ' ', (size_t)(eol - head));
  const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
  if (!sp1 || !sp2 || sp2 == sp1 + 1 || (size_t)(eol - sp2 - 1) < 7 ||
      strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
    *rej = (fake_reject){400, "malformed request line (want METHOD PATH "
                              "HTTP/1.x)"};
    return -1;
  }
  h->is_post = (size_t)(sp1 - head) == 4 && strncmp(head, "POST", 4) == 0;
  req->path = dup_range(sp1 + 1, (size_t)(sp2 - sp1 - 1));
  if (!req->path) {
    *rej = (fake_reject){500, "out of memory"};
    return -1;
  }
  const char *line = eol < end ? eol + 2 : end;
  while (line < end) {
    const char *le = memmem(line, (size_t)(end - line), "\r\n", 2);
    if (!le)
      le = end;
    const char *colon = memchr(line, ':', (size_t)(le - line));
    if (!colon || colon == line) {
      *rej = (fake_reject){400, "malformed header line (no name before ':')"};
      return -1;
    }
    const char *name = line, *val = colon + 1;
    size_t nlen = (size_t)(colon - line), vlen = (size_t)(le - val);
    trim(&name, &nlen);
    trim(&val, &vlen);
    if (name_is(name, nlen, "Content-Length")) {
      char tmp[32], *stop;
      if (vlen == 0 || vlen >= sizeof tmp) {
        *rej = (fake_reject){400, "bad Content-Length"};
        return -1;
      }
      memcpy(tmp, val, vlen);
      tmp[vlen] = '\0';
      errno = 0;
      h->length = strtoull(tmp, &stop, 10);
      if (errno || *stop || tmp[0] == '-') {
        *rej = (fake_reject){400, "bad Content-Length"};
        return -1;
      }
      h->has_length = 1;
    } else if (name_is(name, nlen, "Authorization")) {
      free(req->auth);
      req->auth = dup_range(val, vlen);
    } else if (name_is(name, nlen, "Expect")) {
      h->expect_continue =
          vlen == 12 && strncasecmp(val, "100-continue", 12) == 0;
    } else if (name_is(name, nlen, "Transfer-Encoding")) {
      h->chunked = 1;
    }
    line = le < end ? le + 2 : end;
  }
  if (h->chunked) {
    /* The plugin posts with a known length; chunked uploads would be a
     * change in the client worth noticing, so say so instead of guessing. */
    *rej = (fake_reject){411, "Transfer-Encoding bodies are not supported; "
                              "send Content-Length"};
    return -1;
  }
  if (!h->is_post) {
    *rej = (fake_reject){405, "only POST is served"};
    return -1;
  }
  if (h->length > FAKE_MAX_BODY) {
    *rej = (fake_reject){413, "body larger than 64 MiB"};
    return -1;
  }
  return 0;
}

/* Reads one request from fd into req.  0 read; -1 nothing to answer (client
 * gone, idle, stopping: rej->status 0) or a request to reject (rej set). */
static int read_request(fake_server *s, int fd, fake_request *req,
                        fake_reject *rej) {
  fake_buf b = {0};
  char *blank = NULL;
  int rc = -1;
  *rej = (fake_reject){0, NULL};
  while (!(blank = b.len ? memmem(b.data, b.len, "\r\n\r\n", 4) : NULL)) {
    if (b.len > FAKE_MAX_HEAD) {
      *rej = (fake_reject){431, "request head larger than 64 KiB"};
      goto out;
    }
    if (read_some(s, fd, &b) != 1)
      goto out;
  }
  fake_head h = {0};
  size_t head_len = (size_t)(blank - b.data);
  if (parse_head(b.data, head_len, req, &h, rej) != 0)
    goto out;
  size_t have = b.len - head_len - 4;
  /* libcurl before 8.x sends "Expect: 100-continue" for bodies over 1 KiB
   * and waits (1 s) for this interim reply before sending the body. */
  if (h.expect_continue && have < h.length) {
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    if (send_all(s, fd, cont, sizeof cont - 1) != 0)
      goto out;
  }
  while (have < h.length) {
    int r = read_some(s, fd, &b);
    if (r != 1)
      goto out;
    have = b.len - head_len - 4;
  }
  /* Bytes past Content-Length (a pipelined request) are ignored: every
   * reply closes the connection. */
  /* From b.data, not `blank`: reading the body may have moved the buffer. */
  req->body = dup_range(b.data + head_len + 4, (size_t)h.length);
  if (!req->body) {
    *rej = (fake_reject){500, "out of memory"};
    goto out;
  }
  rc = 0;
out:
  free(b.data);
  return rc;
}

/* ---- Answering ---------------------------------------------------------- */

static const char *reason(int status) {
  switch (status) {
  case 200:
    return "OK";
  case 201:
    return "Created";
  case 204:
    return "No Content";
  case 400:
    return "Bad Request";
  case 401:
    return "Unauthorized";
  case 403:
    return "Forbidden";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 408:
    return "Request Timeout";
  case 411:
    return "Length Required";
  case 413:
    return "Payload Too Large";
  case 429:
    return "Too Many Requests";
  case 431:
    return "Request Header Fields Too Large";
  case 500:
    return "Internal Server Error";
  case 502:
    return "Bad Gateway";
  case 503:
    return "Service Unavailable";
  case 504:
    return "Gateway Timeout";
  default:
    return "Status";
  }
}

/* Sends a full response.  0, or -1 when the client left or we are
 * stopping; the caller goes on to the next connection either way. */
static int send_reply(fake_server *s, int fd, int status, const char *body) {
  size_t blen = strlen(body);
  char head[256];
  int hn = snprintf(head, sizeof head,
                    "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                    "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                    status, reason(status), blen);
  if (send_all(s, fd, head, (size_t)hn) != 0 ||
      send_all(s, fd, body, blen) != 0)
    return -1;
  return 0;
}

/* Half-closes, then lets the client read and close first (up to 200 ms):
 * closing a socket with unread input makes the kernel send RST, which can
 * discard the reply still in flight to the client. */
static void linger(fake_server *s, int fd) {
  shutdown(fd, SHUT_WR);
  fake_buf sink = {0};
  long long until = now_ms() + 200;
  while (now_ms() < until) {
    if (wait_fd(s, fd, POLLIN, (int)(until - now_ms())) != 1)
      break;
    sink.len = 0;
    if (read_some(s, fd, &sink) != 1)
      break;
  }
  free(sink.data);
}

static void send_reject(fake_server *s, int fd, const fake_reject *rej) {
  json_t *o = json_pack("{s:{s:s,s:s}}", "error", "message", rej->why, "type",
                        "fake_server");
  char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
  if (send_reply(s, fd, rej->status, body ? body : "{}") == 0)
    linger(s, fd);
  free(body);
  json_decref(o);
}

/* Appends req to the records; returns its call index, or -1 (no memory). */
static int record(fake_server *s, fake_request *req) {
  pthread_mutex_lock(&s->mu);
  int call = -1;
  if (s->nrecs == s->caprecs) {
    int cap = s->caprecs ? 2 * s->caprecs : 16;
    fake_record *p = realloc(s->recs, (size_t)cap * sizeof *p);
    if (p) {
      s->recs = p;
      s->caprecs = cap;
    }
  }
  if (s->nrecs < s->caprecs) {
    /* The records own the strings from here; req keeps borrowed copies of
     * the pointers for the handler. */
    s->recs[s->nrecs] = (fake_record){req->path, req->auth, req->body};
    call = s->nrecs++;
  }
  pthread_mutex_unlock(&s->mu);
  return call;
}

static void count_reply(fake_server *s) {
  pthread_mutex_lock(&s->mu);
  s->replies++;
  pthread_mutex_unlock(&s->mu);
}

/* Serves one connection: read, record, ask the handler, wait, answer. */
static void serve(fake_server *s, int fd) {
  fake_request req = {0};
  fake_reject rej;
  if (read_request(s, fd, &req, &rej) != 0) {
    if (rej.status)
      send_reject(s, fd, &rej);
    free(req.path);
    free(req.auth);
    free(req.body);
    return;
  }
  int call = record(s, &req);
  if (call < 0) {
    fake_reject oom = {500, "out of memory recording the request"};
    send_reject(s, fd, &oom);
    free(req.path);
    free(req.auth);
    free(req.body);
    return;
  }
  fake_reply out = {.status = 200, .body = "", .delay_ms = 0, .close_early = 0};
  if (s->handler_ex)
    s->handler_ex(s->ud, call, req.path, req.auth, req.body, &out);
  else
    s->handler(s->ud, call, req.body, &out);
  /* Copied now: the handler may reuse its buffer on the next call. */
  char *body = strdup(out.body ? out.body : "");
  /* The delay ends early when the client hangs up (it timed out): a
   * server serving one connection at a time must not keep the next request
   * waiting for a reply nobody reads. */
  int waited = out.delay_ms > 0 ? wait_fd(s, fd, POLLRDHUP, out.delay_ms) : 0;
  if (waited < 0) {
    free(body);
    return; /* stopping */
  }
  if (waited == 1) {
    free(body);
    pthread_mutex_lock(&s->mu);
    s->cut_delays++;
    pthread_mutex_unlock(&s->mu);
    count_reply(s);
    return; /* the client left */
  }
  int sent =
      out.close_early ? -1 : send_reply(s, fd, out.status, body ? body : "");
  free(body);
  /* Counted before lingering, as soon as the reply is out (or was meant to
   * go out: a client that left counts too). */
  count_reply(s);
  if (sent == 0)
    linger(s, fd);
}

static void *server_main(void *arg) {
  fake_server *s = arg;
  while (!atomic_load(&s->stopping)) {
    if (wait_fd(s, s->listen_fd, POLLIN, -1) != 1)
      break;
    int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK ||
          errno == ECONNABORTED)
        continue;
      fprintf(stderr, "fake_server: accept on 127.0.0.1:%d: %s\n", s->port,
              strerror(errno));
      break;
    }
    serve(s, fd);
    close(fd);
  }
  return NULL;
}

/* ---- Public functions --------------------------------------------------- */

static fake_server *start(fake_handler h, fake_handler_ex hx, void *ud) {
  fake_server *s = calloc(1, sizeof *s);
  if (!s) {
    fprintf(stderr, "fake_server_start: out of memory\n");
    return NULL;
  }
  s->handler = h;
  s->handler_ex = hx;
  s->ud = ud;
  s->wake[0] = s->wake[1] = -1;
  atomic_init(&s->stopping, 0);
  atomic_init(&s->stop_cut_ms, FAKE_SERVER_NO_WAIT);
  const char *what = "socket";
  s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->listen_fd < 0)
    goto fail;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  what = "bind 127.0.0.1:0";
  if (bind(s->listen_fd, (struct sockaddr *)&a, sizeof a) != 0)
    goto fail;
  what = "listen";
  if (listen(s->listen_fd, 16) != 0)
    goto fail;
  what = "getsockname";
  if (getsockname(s->listen_fd, (struct sockaddr *)&a, &alen) != 0)
    goto fail;
  s->port = ntohs(a.sin_port);
  what = "pipe";
  if (pipe2(s->wake, O_CLOEXEC) != 0)
    goto fail;
  pthread_mutex_init(&s->mu, NULL);
  int e = pthread_create(&s->thread, NULL, server_main, s);
  if (e != 0) {
    errno = e;
    what = "pthread_create";
    pthread_mutex_destroy(&s->mu);
    goto fail;
  }
  return s;
fail:
  fprintf(stderr, "fake_server_start: %s failed: %s\n", what, strerror(errno));
  if (s->listen_fd >= 0)
    close(s->listen_fd);
  if (s->wake[0] >= 0) {
    close(s->wake[0]);
    close(s->wake[1]);
  }
  free(s);
  return NULL;
}

fake_server *fake_server_start(fake_handler handler, void *ud) {
  if (!handler) {
    fprintf(stderr, "fake_server_start: handler is NULL\n");
    return NULL;
  }
  return start(handler, NULL, ud);
}

fake_server *fake_server_start_ex(fake_handler_ex handler, void *ud) {
  if (!handler) {
    fprintf(stderr, "fake_server_start_ex: handler is NULL\n");
    return NULL;
  }
  return start(NULL, handler, ud);
}

int fake_server_port(const fake_server *s) { return s->port; }

void fake_server_url(const fake_server *s, char *buf, size_t cap) {
  snprintf(buf, cap, "http://127.0.0.1:%d/v1", s->port);
}

int fake_server_requests(fake_server *s) {
  pthread_mutex_lock(&s->mu);
  int n = s->nrecs;
  pthread_mutex_unlock(&s->mu);
  return n;
}

int fake_server_replies(fake_server *s) {
  pthread_mutex_lock(&s->mu);
  int n = s->replies;
  pthread_mutex_unlock(&s->mu);
  return n;
}

int fake_server_cut_delays(fake_server *s) {
  pthread_mutex_lock(&s->mu);
  int n = s->cut_delays;
  pthread_mutex_unlock(&s->mu);
  return n;
}

/* Field `which` of record i: 0 path, 1 auth, 2 body; "" when absent or i
 * is out of range. */
static const char *field(fake_server *s, int i, int which) {
  const char *v = NULL;
  pthread_mutex_lock(&s->mu);
  if (i >= 0 && i < s->nrecs) {
    const fake_record *r = &s->recs[i];
    v = which == 0 ? r->path : which == 1 ? r->auth : r->body;
  }
  pthread_mutex_unlock(&s->mu);
  return v ? v : "";
}

const char *fake_server_path(fake_server *s, int i) { return field(s, i, 0); }
const char *fake_server_auth(fake_server *s, int i) { return field(s, i, 1); }
const char *fake_server_body(fake_server *s, int i) { return field(s, i, 2); }

void fake_server_stop(fake_server *s) { (void)fake_server_stop_report(s); }

int fake_server_stop_report(fake_server *s) {
  if (!s)
    return FAKE_SERVER_NO_WAIT;
  atomic_store(&s->stopping, 1);
  /* The pipe is never drained, so every later poll in the thread sees it. */
  ssize_t w;
  do
    w = write(s->wake[1], "x", 1);
  while (w < 0 && errno == EINTR);
  pthread_join(s->thread, NULL);
  close(s->listen_fd);
  close(s->wake[0]);
  close(s->wake[1]);
  for (int i = 0; i < s->nrecs; i++) {
    free(s->recs[i].path);
    free(s->recs[i].auth);
    free(s->recs[i].body);
  }
  free(s->recs);
  pthread_mutex_destroy(&s->mu);
  int cut = atomic_load(&s->stop_cut_ms);
  free(s);
  return cut;
}

char *fake_chat_body(const char *content) {
  /* "s?" turns a NULL content into JSON null, as real servers send it for
   * tool calls: a reply the client must reject, handy in tests. */
  json_t *o =
      json_pack("{s:s,s:s,s:[{s:i,s:{s:s,s:s?},s:s}]}", "id", "x", "object",
                "chat.completion", "choices", "index", 0, "message", "role",
                "assistant", "content", content, "finish_reason", "stop");
  if (!o) {
    fprintf(stderr, "fake_chat_body: content is not valid UTF-8\n");
    return NULL;
  }
  char *text = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return text;
}
