/* tests/strategies/llm/test_fake_server.c - the scripted chat server the llm
 * strategy's tests talk to (fake_server.h), and its program form
 * fake-llm-server.  Driven with libcurl, the client the plugin uses, and
 * with raw sockets where curl would hide the malformed or half-sent
 * requests being tested. */
#include "test.h"

#include "fake_server.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- Helpers ------------------------------------------------------------ */

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* A handler that answers from a fixed list (cycling) and remembers what it
 * was given; atomics because it runs in the server thread. */
typedef struct script_ud {
  const fake_reply *replies;
  int n;
  atomic_int calls;
  atomic_int last_call;
  atomic_size_t last_body_len;
} script_ud;

static void scripted(void *ud, int call, const char *body, fake_reply *out) {
  script_ud *u = ud;
  *out = u->replies[call % u->n];
  atomic_store(&u->last_call, call);
  atomic_store(&u->last_body_len, strlen(body));
  atomic_fetch_add(&u->calls, 1);
}

/* What one curl POST got back. */
typedef struct post_result {
  CURLcode code;
  long status;
  char *body; /* malloc'ed, "" when none */
  size_t len;
  char content_type[64];
} post_result;

static size_t collect(char *p, size_t size, size_t n, void *ud) {
  post_result *r = ud;
  char *grown = realloc(r->body, r->len + size * n + 1);
  if (!grown)
    return 0;
  memcpy(grown + r->len, p, size * n);
  r->body = grown;
  r->len += size * n;
  r->body[r->len] = '\0';
  return size * n;
}

/* POSTs body to url with an optional Authorization value and extra header,
 * as the plugin will (JSON, no proxy, a total timeout). */
static post_result post(const char *url, const char *auth, const char *body,
                        long timeout_ms, const char *extra_header) {
  post_result r = {.body = calloc(1, 1)};
  CURL *c = curl_easy_init();
  struct curl_slist *h = curl_slist_append(NULL, "Content-Type: "
                                                 "application/json");
  char authz[256];
  if (auth) {
    snprintf(authz, sizeof authz, "Authorization: %s", auth);
    h = curl_slist_append(h, authz);
  }
  if (extra_header)
    h = curl_slist_append(h, extra_header);
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  /* A request that says "Expect: 100-continue" waits for the server's
   * interim reply longer than any test's timeout: without it the request
   * times out, where curl's default (1 s) would send the body anyway and
   * leave only the time to tell. */
  curl_easy_setopt(c, CURLOPT_EXPECT_100_TIMEOUT_MS, 600000L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  /* An http_proxy in the environment must not catch loopback requests. */
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
  r.code = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  char *ct = NULL;
  curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
  snprintf(r.content_type, sizeof r.content_type, "%s", ct ? ct : "");
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  return r;
}

/* The server counts a reply just after sending it, so the client may see
 * the reply first: waits for the count to reach n, up to 20 s (a guard
 * against a count that never comes; it is reached in milliseconds). */
static int wait_replies(fake_server *s, int n) {
  long long until = now_ms() + 20000;
  while (fake_server_replies(s) < n && now_ms() < until)
    sleep_ms(2);
  return fake_server_replies(s);
}

static void url_of(fake_server *s, const char *suffix, char *buf, size_t cap) {
  char base[128];
  fake_server_url(s, base, sizeof base);
  snprintf(buf, cap, "%s%s", base, suffix);
}

/* Connects a plain TCP socket to 127.0.0.1:port, with a 5 s receive
 * timeout so a test cannot hang on a silent server. */
static int connect_raw(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct timeval tv = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Reads until EOF (or the receive timeout) into a malloc'ed string. */
static char *read_all(int fd) {
  size_t len = 0, cap = 4096;
  char *buf = malloc(cap);
  for (;;) {
    ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
    if (n <= 0)
      break;
    len += (size_t)n;
    if (cap - len < 2)
      buf = realloc(buf, cap *= 2);
  }
  buf[len] = '\0';
  return buf;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t len = 0, cap = 4096;
  char *buf = malloc(cap);
  size_t n;
  while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (cap - len < 2)
      buf = realloc(buf, cap *= 2);
  }
  buf[len] = '\0';
  fclose(f);
  return buf;
}

static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  fputs(text, f);
  return fclose(f);
}

/* ---- The server in-process ---------------------------------------------- */

TEST(answers_200_with_the_handlers_body_as_json) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  char *chat = fake_chat_body("hello");
  fake_reply rep[] = {{.status = 200, .body = chat}};
  script_ud u = {.replies = rep, .n = 1};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  char url[256];
  url_of(s, "/chat/completions", url, sizeof url);
  post_result r = post(url, NULL, "{\"model\":\"m\"}", 5000, NULL);
  CHECK_MSG(r.code == CURLE_OK, "%s", curl_easy_strerror(r.code));
  CHECK_EQ(r.status, 200);
  CHECK_MSG(strcmp(r.body, chat) == 0, "got %s", r.body);
  CHECK_MSG(strcmp(r.content_type, "application/json") == 0, "got %s",
            r.content_type);
  CHECK_EQ(fake_server_requests(s), 1);
  CHECK_EQ(wait_replies(s, 1), 1);
  free(r.body);
  fake_server_stop(s);
  free(chat);
  curl_global_cleanup();
}

TEST(answers_error_statuses_with_their_raw_bodies) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  fake_reply rep[] = {{.status = 500, .body = "{\"error\":\"boom\"}"},
                      {.status = 401, .body = "{\"error\":\"bad key\"}"},
                      {.status = 429, .body = "not json at all"}};
  script_ud u = {.replies = rep, .n = 3};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  char url[256];
  url_of(s, "/chat/completions", url, sizeof url);
  for (int i = 0; i < 3; i++) {
    post_result r = post(url, NULL, "{}", 5000, NULL);
    CHECK_MSG(r.code == CURLE_OK, "%s", curl_easy_strerror(r.code));
    CHECK_EQ(r.status, rep[i].status);
    CHECK_MSG(strcmp(r.body, rep[i].body) == 0, "reply %d: got %s", i, r.body);
    free(r.body);
  }
  fake_server_stop(s);
  curl_global_cleanup();
}

TEST(records_path_authorization_and_body_of_each_request) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  fake_reply rep[] = {{.status = 200, .body = "{}"}};
  script_ud u = {.replies = rep, .n = 1};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  char url[256];
  url_of(s, "/chat/completions", url, sizeof url);
  post_result r = post(url, "Bearer sk-test-1", "{\"a\":1}", 5000, NULL);
  CHECK(r.code == CURLE_OK);
  free(r.body);
  url_of(s, "/models", url, sizeof url);
  r = post(url, NULL, "second", 5000, NULL);
  CHECK(r.code == CURLE_OK);
  free(r.body);
  CHECK_EQ(fake_server_requests(s), 2);
  CHECK_MSG(strcmp(fake_server_path(s, 0), "/v1/chat/completions") == 0,
            "path %s", fake_server_path(s, 0));
  CHECK_MSG(strcmp(fake_server_auth(s, 0), "Bearer sk-test-1") == 0, "auth %s",
            fake_server_auth(s, 0));
  CHECK_MSG(strcmp(fake_server_body(s, 0), "{\"a\":1}") == 0, "body %s",
            fake_server_body(s, 0));
  CHECK_MSG(strcmp(fake_server_path(s, 1), "/v1/models") == 0, "path %s",
            fake_server_path(s, 1));
  /* No Authorization header: "" rather than a stale or NULL value. */
  CHECK_MSG(strcmp(fake_server_auth(s, 1), "") == 0, "auth %s",
            fake_server_auth(s, 1));
  CHECK(strcmp(fake_server_body(s, 1), "second") == 0);
  CHECK(strcmp(fake_server_body(s, 2), "") == 0); /* out of range */
  fake_server_stop(s);
  curl_global_cleanup();
}

/* A 200 KB prompt, sent once as libcurl chooses (7.x adds "Expect:
 * 100-continue" above 1 KiB) and once with the header forced, so the
 * interim reply is exercised whatever the installed curl does. */
TEST(receives_a_200kb_body_whole_with_expect_100_continue) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  fake_reply rep[] = {{.status = 200, .body = "{\"ok\":true}"}};
  script_ud u = {.replies = rep, .n = 1};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  size_t n = 200 * 1024;
  char *big = malloc(n + 1);
  for (size_t i = 0; i < n; i++)
    big[i] = (char)('a' + (i * 7 + i / 1000) % 26);
  big[n] = '\0';
  char url[256];
  url_of(s, "/chat/completions", url, sizeof url);
  const char *extra[2] = {NULL, "Expect: 100-continue"};
  for (int k = 0; k < 2; k++) {
    /* post() waits for the 100 Continue longer than this request's 30 s:
     * without it the request times out instead of succeeding. */
    post_result r = post(url, "Bearer big", big, 30000, extra[k]);
    CHECK_MSG(r.code == CURLE_OK, "%s", curl_easy_strerror(r.code));
    CHECK_EQ(r.status, 200);
    free(r.body);
    CHECK_EQ(atomic_load(&u.last_body_len), n);
    CHECK_EQ(strlen(fake_server_body(s, k)), n);
    CHECK(memcmp(fake_server_body(s, k), big, n) == 0);
    CHECK(strcmp(fake_server_auth(s, k), "Bearer big") == 0);
  }
  free(big);
  fake_server_stop(s);
  curl_global_cleanup();
}

TEST(client_timeout_during_delay_leaves_server_answering_the_next_request) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  /* The delay is long, but ends when the client hangs up: it costs the
   * test nothing, and leaves a busy machine 4.8 s to time out first. */
  fake_reply rep[] = {{.status = 200, .body = "{\"slow\":1}", .delay_ms = 5000},
                      {.status = 200, .body = "{\"fast\":1}"}};
  script_ud u = {.replies = rep, .n = 2};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  char url[256];
  url_of(s, "/chat/completions", url, sizeof url);
  post_result r = post(url, NULL, "{}", 200, NULL);
  CHECK_MSG(r.code == CURLE_OPERATION_TIMEDOUT, "got %s",
            curl_easy_strerror(r.code));
  free(r.body);
  /* The client timed out during the delay, and the server saw it go: the
   * delay was cut short by the hang-up, not run out.  (Load-proof where a
   * bound on the client's wall time was not.) */
  CHECK_EQ(wait_replies(s, 1), 1);
  CHECK_EQ(fake_server_cut_delays(s), 1);
  /* The server finishes its delay, writes to the closed socket (no
   * SIGPIPE may kill us) and then takes this request. */
  r = post(url, NULL, "{}", 5000, NULL);
  CHECK_MSG(r.code == CURLE_OK, "%s", curl_easy_strerror(r.code));
  CHECK(strcmp(r.body, "{\"fast\":1}") == 0);
  free(r.body);
  CHECK_EQ(fake_server_requests(s), 2);
  CHECK_EQ(wait_replies(s, 2), 2);
  fake_server_stop(s);
  curl_global_cleanup();
}

TEST(close_early_gives_the_client_an_error_and_server_answers_the_next) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  fake_reply rep[] = {{.status = 200, .body = "{}", .close_early = 1},
                      {.status = 200, .body = "{\"after\":1}"}};
  script_ud u = {.replies = rep, .n = 2};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  char url[256];
  url_of(s, "/chat/completions", url, sizeof url);
  post_result r = post(url, NULL, "{}", 5000, NULL);
  CHECK_MSG(r.code == CURLE_GOT_NOTHING || r.code == CURLE_RECV_ERROR, "got %s",
            curl_easy_strerror(r.code));
  free(r.body);
  r = post(url, NULL, "{}", 5000, NULL);
  CHECK_MSG(r.code == CURLE_OK, "%s", curl_easy_strerror(r.code));
  CHECK(strcmp(r.body, "{\"after\":1}") == 0);
  free(r.body);
  CHECK_EQ(fake_server_requests(s), 2);
  fake_server_stop(s);
  curl_global_cleanup();
}

/* A client that sends its request and hangs up at once: the reply then
 * goes to a closed peer, which raises SIGPIPE unless sends say
 * MSG_NOSIGNAL.  (curl's own timeout path does not reliably provoke it.) */
TEST(client_hanging_up_before_the_reply_does_not_kill_the_process) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  fake_reply rep[] = {{.status = 200, .body = "{\"late\":1}", .delay_ms = 50}};
  script_ud u = {.replies = rep, .n = 1};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  const char *req = "POST /v1/chat/completions HTTP/1.1\r\n"
                    "Content-Length: 2\r\n\r\n{}";
  for (int i = 0; i < 3; i++) {
    int fd = connect_raw(fake_server_port(s));
    CHECK(fd >= 0);
    CHECK(send(fd, req, strlen(req), 0) == (ssize_t)strlen(req));
    close(fd);
    CHECK_EQ(wait_replies(s, i + 1), i + 1);
    sleep_ms(20);
  }
  char url[256];
  url_of(s, "/chat/completions", url, sizeof url);
  post_result r = post(url, NULL, "{}", 5000, NULL);
  CHECK_MSG(r.code == CURLE_OK, "%s", curl_easy_strerror(r.code));
  CHECK(strcmp(r.body, "{\"late\":1}") == 0);
  free(r.body);
  fake_server_stop(s);
  curl_global_cleanup();
}

/* A client thread waiting on a 10 s delay while the test stops the server. */
typedef struct bg_post {
  char url[256];
  post_result r;
  long long took_ms;
} bg_post;

static void *bg_post_main(void *arg) {
  bg_post *b = arg;
  long long t0 = now_ms();
  b->r = post(b->url, NULL, "{}", 20000, NULL);
  b->took_ms = now_ms() - t0;
  return NULL;
}

TEST(stop_during_a_10s_delay_cuts_the_delay_short) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  fake_reply rep[] = {{.status = 200, .body = "{}", .delay_ms = 10000}};
  script_ud u = {.replies = rep, .n = 1};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  bg_post b = {0};
  url_of(s, "/chat/completions", b.url, sizeof b.url);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, bg_post_main, &b) == 0);
  long long until = now_ms() + 5000;
  while (atomic_load(&u.calls) < 1 && now_ms() < until)
    sleep_ms(5);
  CHECK_EQ(atomic_load(&u.calls), 1);
  sleep_ms(50); /* well inside the delay */
  long long t0 = now_ms();
  int cut = fake_server_stop_report(s);
  long long stop_ms = now_ms() - t0;
  pthread_join(t, NULL);
  fprintf(stderr,
          "stop took %lld ms, cutting %d ms of the delay; the client "
          "waited %lld ms\n",
          stop_ms, cut, b.took_ms);
  /* The stop interrupted the 10 s delay with most of it left (50 ms had
   * passed), as the server reports; the wall times only have to stay well
   * short of waiting it out (1/10 and 1/2 of it: safety bounds that a busy
   * machine keeps). */
  CHECK_MSG(cut > 5000 && cut <= 10000, "the stop cut %d ms of the delay", cut);
  CHECK_MSG(stop_ms < 1000, "stop took %lld ms", stop_ms);
  /* The connection closed with the server: an error, not a 10 s wait. */
  CHECK_MSG(b.r.code != CURLE_OK, "client got a reply: %ld", b.r.status);
  CHECK_MSG(b.took_ms < 5000, "client waited %lld ms", b.took_ms);
  free(b.r.body);
  curl_global_cleanup();
}

TEST(stop_while_a_client_sends_half_a_request_cuts_the_read_short) {
  fake_reply rep[] = {{.status = 200, .body = "{}"}};
  script_ud u = {.replies = rep, .n = 1};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  int fd = connect_raw(fake_server_port(s));
  CHECK(fd >= 0);
  const char *half = "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: "
                     "100\r\n\r\n{\"only\":";
  CHECK(send(fd, half, strlen(half), 0) == (ssize_t)strlen(half));
  sleep_ms(50);
  long long t0 = now_ms();
  int cut = fake_server_stop_report(s);
  long long took = now_ms() - t0;
  fprintf(stderr, "stop took %lld ms, cutting %d ms of the read\n", took, cut);
  /* The stop interrupted the read of the rest of the request with most of
   * its idle timeout left (the server says so); the wall time only has to
   * stay well short of that timeout (1/10 of it, a safety bound). */
  CHECK_MSG(cut > FAKE_SERVER_IDLE_MS / 2 && cut <= FAKE_SERVER_IDLE_MS,
            "the stop cut %d ms of the read", cut);
  CHECK_MSG(took < FAKE_SERVER_IDLE_MS / 10, "stop took %lld ms", took);
  CHECK_EQ(atomic_load(&u.calls), 0); /* a half request reaches no handler */
  close(fd);
}

TEST(malformed_request_gets_400_naming_the_problem_and_is_not_recorded) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  fake_reply rep[] = {{.status = 200, .body = "{\"fine\":1}"}};
  script_ud u = {.replies = rep, .n = 1};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  int fd = connect_raw(fake_server_port(s));
  CHECK(fd >= 0);
  const char *junk = "NONSENSE\r\n\r\n";
  CHECK(send(fd, junk, strlen(junk), 0) == (ssize_t)strlen(junk));
  char *got = read_all(fd);
  close(fd);
  CHECK_STR_CONTAINS(got, "HTTP/1.1 400 Bad Request\r\n");
  CHECK_STR_CONTAINS(got, "malformed request line");
  free(got);
  /* A GET is refused too: the API is POST only. */
  fd = connect_raw(fake_server_port(s));
  CHECK(fd >= 0);
  const char *get = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
  CHECK(send(fd, get, strlen(get), 0) == (ssize_t)strlen(get));
  got = read_all(fd);
  close(fd);
  CHECK_STR_CONTAINS(got, "HTTP/1.1 405 ");
  free(got);
  CHECK_EQ(fake_server_requests(s), 0);
  CHECK_EQ(atomic_load(&u.calls), 0);
  char url[256];
  url_of(s, "/chat/completions", url, sizeof url);
  post_result r = post(url, NULL, "{}", 5000, NULL);
  CHECK(r.code == CURLE_OK && strcmp(r.body, "{\"fine\":1}") == 0);
  free(r.body);
  fake_server_stop(s);
  curl_global_cleanup();
}

/* Header names are case-insensitive; the body ends at Content-Length. */
TEST(raw_request_with_lowercase_headers_is_parsed) {
  fake_reply rep[] = {{.status = 201, .body = "{\"raw\":1}"}};
  script_ud u = {.replies = rep, .n = 1};
  fake_server *s = fake_server_start(scripted, &u);
  CHECK(s);
  int fd = connect_raw(fake_server_port(s));
  CHECK(fd >= 0);
  const char *req = "POST /x HTTP/1.1\r\ncontent-length:   5\r\n"
                    "AUTHORIZATION:  Bearer low  \r\n\r\nhello";
  CHECK(send(fd, req, strlen(req), 0) == (ssize_t)strlen(req));
  char *got = read_all(fd);
  close(fd);
  CHECK_STR_CONTAINS(got, "HTTP/1.1 201 Created\r\n");
  CHECK_STR_CONTAINS(got, "Content-Length: 9\r\n");
  CHECK_STR_CONTAINS(got, "Connection: close\r\n");
  CHECK_STR_CONTAINS(got, "\r\n\r\n{\"raw\":1}");
  free(got);
  CHECK(strcmp(fake_server_auth(s, 0), "Bearer low") == 0);
  CHECK(strcmp(fake_server_body(s, 0), "hello") == 0);
  CHECK(strcmp(fake_server_path(s, 0), "/x") == 0);
  fake_server_stop(s);
}

TEST(handler_sees_call_numbers_from_0_and_servers_get_their_own_ports) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  fake_reply rep[] = {{.status = 200, .body = "{}"}};
  script_ud u = {.replies = rep, .n = 1}, v = {.replies = rep, .n = 1};
  fake_server *s = fake_server_start(scripted, &u);
  fake_server *s2 = fake_server_start(scripted, &v);
  CHECK(s && s2);
  CHECK(fake_server_port(s) > 0 && fake_server_port(s) != fake_server_port(s2));
  char url[256], want[64];
  fake_server_url(s, url, sizeof url);
  snprintf(want, sizeof want, "http://127.0.0.1:%d/v1", fake_server_port(s));
  CHECK(strcmp(url, want) == 0);
  url_of(s, "/chat/completions", url, sizeof url);
  for (int i = 0; i < 3; i++) {
    post_result r = post(url, NULL, "12345", 5000, NULL);
    CHECK(r.code == CURLE_OK);
    free(r.body);
    CHECK_EQ(atomic_load(&u.last_call), i);
    CHECK_EQ(atomic_load(&u.last_body_len), 5);
  }
  CHECK_EQ(atomic_load(&v.calls), 0);
  fake_server_stop(s);
  fake_server_stop(s2);
  curl_global_cleanup();
}

TEST(chat_body_escapes_content_in_the_openai_shape) {
  const char *content = "say \"hi\"\n\ttab \\ back, unicode \xc3\xa9 {\"k\":1}";
  char *text = fake_chat_body(content);
  CHECK(text);
  json_error_t e;
  json_t *o = json_loads(text, 0, &e);
  CHECK_MSG(o, "%s: %s", text, e.text);
  const char *id = NULL, *object = NULL, *role = NULL, *got = NULL,
             *finish = NULL;
  int index = -1;
  CHECK_MSG(json_unpack_ex(
                o, &e, JSON_STRICT, "{s:s,s:s,s:[{s:i,s:{s:s,s:s},s:s}]}", "id",
                &id, "object", &object, "choices", "index", &index, "message",
                "role", &role, "content", &got, "finish_reason", &finish) == 0,
            "%s: %s", text, e.text);
  CHECK(strcmp(got, content) == 0);
  CHECK(strcmp(role, "assistant") == 0);
  CHECK(strcmp(object, "chat.completion") == 0);
  CHECK(strcmp(finish, "stop") == 0);
  CHECK_EQ(index, 0);
  json_decref(o);
  free(text);
  /* NULL content gives "content": null, a reply the client must reject. */
  text = fake_chat_body(NULL);
  CHECK(text);
  CHECK_STR_CONTAINS(text, "\"content\":null");
  free(text);
}

/* ---- The program fake-llm-server ---------------------------------------- */

/* A scratch directory per test, removed (flat) at the end. */
static int make_dir(char *dir, size_t cap) {
  snprintf(dir, cap, "/tmp/heron-fake-llm-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  char p[512];
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  closedir(d);
  rmdir(dir);
}

/* Starts fake-llm-server with args (NULL-terminated after argv[0]) and its
 * stdout and stderr in dir/out and dir/err; 0 pid on failure. */
static pid_t spawn_server(const char *dir, const char *const *args) {
  const char *argv[16] = {HERON_FAKE_LLM_SERVER};
  int n = 1;
  while (args[n - 1] && n < 15) {
    argv[n] = args[n - 1];
    n++;
  }
  argv[n] = NULL;
  char out[512], err[512];
  snprintf(out, sizeof out, "%s/out", dir);
  snprintf(err, sizeof err, "%s/err", dir);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : 0;
}

/* Waits up to timeout_ms for pid; its exit code, -2 if it was killed by a
 * signal, or -1 if still running (then killed). */
static int wait_exit(pid_t pid, int timeout_ms) {
  long long until = now_ms() + timeout_ms;
  int st;
  for (;;) {
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : -2;
    if (now_ms() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return -1;
    }
    sleep_ms(10);
  }
}

/* Polls for the port file; the port, or -1 after 10 s. */
static int wait_port(const char *path) {
  long long until = now_ms() + 10000;
  while (now_ms() < until) {
    char *t = slurp(path);
    if (t) {
      int port = 0, used = 0;
      int ok =
          sscanf(t, "%d%n", &port, &used) == 1 && strcmp(t + used, "\n") == 0;
      free(t);
      return ok ? port : -1; /* renamed into place: never partial */
    }
    sleep_ms(10);
  }
  return -1;
}

/* Does dir hold a file whose name contains part? */
static int dir_has(const char *dir, const char *part) {
  DIR *d = opendir(dir);
  int found = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    found |= strstr(e->d_name, part) != NULL;
  if (d)
    closedir(d);
  return found;
}

TEST(cli_cycles_two_replies_writes_port_file_and_log_and_exits_after_max) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  char dir[64], script[128], portf[128], logf[128], url[256];
  CHECK(make_dir(dir, sizeof dir) == 0);
  snprintf(script, sizeof script, "%s/script.jsonl", dir);
  snprintf(portf, sizeof portf, "%s/port", dir);
  snprintf(logf, sizeof logf, "%s/requests.jsonl", dir);
  CHECK(write_text(script, "{\"content\": \"first\"}\n"
                           "{\"status\": 500, \"body\": \"{\\\"error\\\":"
                           "\\\"boom\\\"}\"}\n\n") == 0);
  const char *args[] = {
      "--script", script,           "--port-file", portf, "--requests-log",
      logf,       "--max-requests", "3",           NULL};
  pid_t pid = spawn_server(dir, args);
  CHECK(pid > 0);
  int port = wait_port(portf);
  CHECK_MSG(port > 0, "no port file %s", portf);
  CHECK_MSG(!dir_has(dir, ".tmp."), "temporary port file left in %s", dir);
  /* Three requests over a two-reply script: first, second, first again. */
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", port);
  post_result r =
      post(url, "Bearer k0", "{\"model\":\"m\",\"n\":0}", 5000, NULL);
  CHECK_MSG(r.code == CURLE_OK, "%s", curl_easy_strerror(r.code));
  CHECK_EQ(r.status, 200);
  CHECK_STR_CONTAINS(r.body, "\"content\":\"first\"");
  free(r.body);
  snprintf(url, sizeof url, "http://127.0.0.1:%d/other", port);
  r = post(url, NULL, "not json", 5000, NULL);
  CHECK_EQ(r.status, 500);
  CHECK(strcmp(r.body, "{\"error\":\"boom\"}") == 0);
  free(r.body);
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", port);
  r = post(url, "Bearer k2", "[2]", 5000, NULL);
  CHECK_EQ(r.status, 200);
  CHECK_STR_CONTAINS(r.body, "\"content\":\"first\"");
  free(r.body);
  CHECK_EQ(wait_exit(pid, 5000), 0);

  char *log = slurp(logf);
  CHECK(log);
  json_t *want[3] = {json_pack("{s:i,s:s,s:s,s:{s:s,s:i}}", "call", 0, "path",
                               "/v1/chat/completions", "authorization",
                               "Bearer k0", "body", "model", "m", "n", 0),
                     json_pack("{s:i,s:s,s:n,s:s}", "call", 1, "path", "/other",
                               "authorization", "body", "not json"),
                     json_pack("{s:i,s:s,s:s,s:[i]}", "call", 2, "path",
                               "/v1/chat/completions", "authorization",
                               "Bearer k2", "body", 2)};
  char *line = log;
  for (int i = 0; i < 3; i++) {
    char *nl = strchr(line, '\n');
    CHECK_MSG(nl, "log has %d lines: %s", i, log);
    *nl = '\0';
    json_t *got = json_loads(line, 0, NULL);
    CHECK_MSG(got && json_equal(got, want[i]), "log line %d: %s", i, line);
    json_decref(got);
    json_decref(want[i]);
    line = nl + 1;
  }
  CHECK_MSG(*line == '\0', "extra log lines: %s", line);
  free(log);
  remove_dir(dir);
  curl_global_cleanup();
}

TEST(cli_honours_close_and_delay_ms_from_the_script) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  char dir[64], script[128], portf[128], url[256];
  CHECK(make_dir(dir, sizeof dir) == 0);
  snprintf(script, sizeof script, "%s/script.jsonl", dir);
  snprintf(portf, sizeof portf, "%s/port", dir);
  CHECK(write_text(script,
                   "{\"close\": true}\n"
                   "{\"content\": \"late\", \"delay_ms\": 300}\n") == 0);
  const char *args[] = {"--script",       script, "--port-file", portf,
                        "--max-requests", "2",    NULL};
  pid_t pid = spawn_server(dir, args);
  CHECK(pid > 0);
  int port = wait_port(portf);
  CHECK(port > 0);
  snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", port);
  post_result r = post(url, NULL, "{}", 5000, NULL);
  CHECK_MSG(r.code == CURLE_GOT_NOTHING || r.code == CURLE_RECV_ERROR, "got %s",
            curl_easy_strerror(r.code));
  free(r.body);
  long long t0 = now_ms();
  r = post(url, NULL, "{}", 5000, NULL);
  long long took = now_ms() - t0;
  CHECK_EQ(r.status, 200);
  CHECK_STR_CONTAINS(r.body, "\"content\":\"late\"");
  CHECK_MSG(took >= 290, "delay_ms 300 answered after %lld ms", took);
  free(r.body);
  CHECK_EQ(wait_exit(pid, 5000), 0);
  remove_dir(dir);
  curl_global_cleanup();
}

TEST(cli_exits_0_on_sigterm_and_sigint) {
  int sigs[2] = {SIGTERM, SIGINT};
  for (int k = 0; k < 2; k++) {
    char dir[64], script[128], portf[128];
    CHECK(make_dir(dir, sizeof dir) == 0);
    snprintf(script, sizeof script, "%s/script.jsonl", dir);
    snprintf(portf, sizeof portf, "%s/port", dir);
    CHECK(write_text(script, "{\"content\": \"x\"}\n") == 0);
    const char *args[] = {"--script", script, "--port-file", portf, NULL};
    pid_t pid = spawn_server(dir, args);
    CHECK(pid > 0);
    CHECK(wait_port(portf) > 0);
    kill(pid, sigs[k]);
    CHECK_MSG(wait_exit(pid, 3000) == 0, "signal %d", sigs[k]);
    remove_dir(dir);
  }
}

TEST(cli_bad_script_exits_2_naming_file_line_and_problem) {
  static const struct {
    const char *text;
    const char *line; /* "script.jsonl:N" expected in the message */
    const char *problem;
  } cases[] = {
      {"{\"content\": \"ok\"}\n{\"content\": \"ok\", \"colour\": 1}\n",
       ":2:", "unknown key \"colour\""},
      {"{\"content\": \"ok\"}\n\n{oops\n", ":3:", "not JSON"},
      {"{\"status\": \"500\", \"body\": \"x\"}\n",
       ":1:", "\"status\" must be an integer, found string"},
      {"{\"content\": 5}\n", ":1:", "\"content\" must be a string"},
      {"{\"content\": \"a\", \"close\": 1}\n", ":1:", "\"close\" must be"},
      {"{\"delay_ms\": -5, \"content\": \"a\"}\n", ":1:", "\"delay_ms\" -5"},
      {"[1, 2]\n", ":1:", "must be a JSON object"},
      {"{\"status\": 200}\n", ":1:", "needs \"content\", \"body\""},
      {"{\"content\": \"a\", \"body\": \"b\"}\n", ":1:", "not both"},
      {"", "script.jsonl", "no replies"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char dir[64], script[128], errf[128];
    CHECK(make_dir(dir, sizeof dir) == 0);
    snprintf(script, sizeof script, "%s/script.jsonl", dir);
    snprintf(errf, sizeof errf, "%s/err", dir);
    CHECK(write_text(script, cases[i].text) == 0);
    const char *args[] = {"--script", script, NULL};
    pid_t pid = spawn_server(dir, args);
    CHECK(pid > 0);
    int code = wait_exit(pid, 5000);
    CHECK_MSG(code == 2, "case %zu: exit %d", i, code);
    char *err = slurp(errf);
    char where[160];
    snprintf(where, sizeof where, "script.jsonl%s", cases[i].line);
    if (cases[i].line[0] != ':')
      snprintf(where, sizeof where, "%s", cases[i].line);
    CHECK_STR_CONTAINS(err, where);
    CHECK_STR_CONTAINS(err, cases[i].problem);
    free(err);
    remove_dir(dir);
  }
}

TEST(cli_help_lists_every_flag_and_bad_flags_exit_2) {
  char dir[64], outf[128], errf[128];
  CHECK(make_dir(dir, sizeof dir) == 0);
  snprintf(outf, sizeof outf, "%s/out", dir);
  snprintf(errf, sizeof errf, "%s/err", dir);
  const char *help[] = {"--help", NULL};
  pid_t pid = spawn_server(dir, help);
  CHECK(pid > 0);
  CHECK_EQ(wait_exit(pid, 5000), 0);
  char *out = slurp(outf);
  CHECK_STR_CONTAINS(out, "--script");
  CHECK_STR_CONTAINS(out, "--port-file");
  CHECK_STR_CONTAINS(out, "--requests-log");
  CHECK_STR_CONTAINS(out, "--max-requests");
  free(out);
  const char *bad[] = {"--script", "/nonexistent/x.jsonl", NULL};
  pid = spawn_server(dir, bad);
  CHECK(pid > 0);
  CHECK_EQ(wait_exit(pid, 5000), 2);
  char *err = slurp(errf);
  CHECK_STR_CONTAINS(err, "cannot open script /nonexistent/x.jsonl");
  free(err);
  const char *zero[] = {"--script", "x", "--max-requests", "0", NULL};
  pid = spawn_server(dir, zero);
  CHECK(pid > 0);
  CHECK_EQ(wait_exit(pid, 5000), 2);
  err = slurp(errf);
  CHECK_STR_CONTAINS(err, "--max-requests wants a positive integer");
  free(err);
  const char *unknown[] = {"--prot", "1", NULL};
  pid = spawn_server(dir, unknown);
  CHECK(pid > 0);
  CHECK_EQ(wait_exit(pid, 5000), 2);
  err = slurp(errf);
  CHECK_STR_CONTAINS(err, "unknown argument \"--prot\"");
  free(err);
  remove_dir(dir);
}
