/* tests/strategies/test_llm.c - the LLM-prompt proposer (plugins/strategies/
 * llm) against a scripted OpenAI-compatible server on a loopback port
 * (tests/strategies/llm/fake_server.h).
 *
 * Each test scripts the server's replies, drives the plugin as the engine
 * does (create, propose, observe, destroy) on GEMM 64^3 fp32 on the
 * cpu-avx512 description, and asserts what a user relies on: a good reply
 * is proposed as written; the prompt is built from the space and the
 * history; malformed replies are repaired or rejected and counted; HTTP
 * errors, slow replies and closed connections are failed calls, retried
 * where that can help; useless replies in a row fall back to random
 * sampling with one warning; the API key reaches the server and nowhere
 * else; recorded exchanges replay without a server; and a 30-trial tuning
 * run on the cpu target completes with the scripted server.
 *
 * The parser's own cases (every kind of malformed reply) are data-driven in
 * test_llm_reply.c; here each kind appears once, to check the plugin's
 * wiring and counts. */
#include <jansson.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "core/plugin/param_table.h"
#include "core/plugin/plugin.h"
#include "core/record/record.h"
#include "core/targets/hw.h"
#include "fake_server.h"
#include "test.h"

/* ---- A captured plugin log ------------------------------------------------
 */
static char lt_logbuf[1 << 18];
static size_t lt_loglen;
static int lt_warnings;

static void lt_log(const heron_strategy_env *env, int level, const char *fmt,
                   ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (getenv("HERON_TEST_VERBOSE"))
    fprintf(stderr, "[log %d] %s\n", level, line);
  lt_warnings += level == 1;
  size_t n = strlen(line);
  if (lt_loglen + n + 2 < sizeof lt_logbuf) {
    memcpy(lt_logbuf + lt_loglen, line, n);
    lt_loglen += n;
    lt_logbuf[lt_loglen++] = '\n';
    lt_logbuf[lt_loglen] = '\0';
  }
}

/* How many lines of the captured log contain `needle`. */
static int log_count(const char *needle) {
  int n = 0;
  for (const char *p = strstr(lt_logbuf, needle); p;
       p = strstr(p + strlen(needle), needle))
    n++;
  return n;
}

/* ---- The scripted server ------------------------------------------------- */
#define LT_MAX_SCRIPT 64

/* One scripted reply: content for a 200 chat completion, or a raw body with
 * a status; delay and early close as fake_reply has them.  A NULL content
 * and NULL body with status 0 means "a good config sampled from the
 * space". */
typedef struct lt_step {
  int status;
  const char *content;
  const char *body;
  int delay_ms;
  int close_early;
} lt_step;

typedef struct lt {
  heron_task *task;
  const heron_space *sp;
  int nv;
  heron_rng rng;    /* the strategy's */
  heron_rng script; /* the server's, for good configs */
  heron_history hist;
  heron_strategy_env env;
  heron__plugin lib;
  const heron_strategy_plugin *desc;
  void *self;
  fake_server *srv;
  char url[128];
  lt_step steps[LT_MAX_SCRIPT];
  int nsteps;    /* the script cycles */
  int64_t *sent; /* configs of the good replies sent, in order */
  int nsent;
  char *bodies[256]; /* bodies built by the handler, freed at close */
  int nbodies;
  int trial;
} lt;

/* "## knob: value, ... ##" of cfg. */
static void format_cfg(const lt *t, const int64_t *cfg, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "##");
  int nk = heron_space_nknobs(t->sp);
  for (int i = 0; i < nk && len < cap; i++) {
    int v = heron_space_knob(t->sp, i);
    len += (size_t)snprintf(buf + len, cap - len, "%s %s: %lld", i ? "," : "",
                            heron_space_var_name(t->sp, v), (long long)cfg[v]);
  }
  if (len < cap)
    snprintf(buf + len, cap - len, " ##");
}

static void handler(void *ud, int call, const char *request_body,
                    fake_reply *out) {
  lt *t = ud;
  (void)request_body;
  const lt_step *s = &t->steps[call % (t->nsteps ? t->nsteps : 1)];
  char content[4096];
  const char *text = s->content;
  if (!s->content && !s->body && s->status == 0) {
    int64_t *cfg = t->sent + (size_t)t->nsent * t->nv;
    heron_space_sample(t->sp, &t->script, cfg, NULL);
    format_cfg(t, cfg, content, sizeof content);
    t->nsent++;
    text = content;
  }
  char *body = text ? fake_chat_body(text) : strdup(s->body ? s->body : "");
  if (t->nbodies < 256)
    t->bodies[t->nbodies++] = body;
  out->status = s->status ? s->status : 200;
  out->body = body;
  out->delay_ms = s->delay_ms;
  out->close_early = s->close_early;
}

static heron_task *lt_task(int m, heron_error *err) {
  int64_t shape[3] = {m, m, m};
  heron_task_spec spec = {
      .op = "gemm", .shape = shape, .nshape = 3, .hw = "cpu-avx512"};
  heron_task *task = NULL;
  return heron_task_create(&spec, &task, err) == HERON_OK ? task : NULL;
}

/* Starts the server with steps[0..n) and creates the strategy with params
 * (url is added unless params name one). */
static int lt_open(lt *t, const lt_step *steps, int n,
                   const heron_param *params, int np, uint64_t seed,
                   heron_error *err) {
  memset(t, 0, sizeof *t);
  lt_loglen = 0;
  lt_logbuf[0] = '\0';
  lt_warnings = 0;
  t->task = lt_task(64, err);
  if (!t->task)
    return err->code;
  t->sp = heron_task_space(t->task);
  t->nv = heron_space_nvars(t->sp);
  heron__history_init(&t->hist, t->nv);
  heron_rng_seed(&t->rng, seed);
  heron_rng_seed(&t->script, 777);
  t->sent = calloc(4096, (size_t)t->nv * sizeof *t->sent);
  if (n > 0)
    memcpy(t->steps, steps, (size_t)n * sizeof *steps);
  t->nsteps = n;
  if (n > 0) {
    t->srv = fake_server_start(handler, t);
    if (!t->srv)
      return heron_error_set(err, HERON_EIO, "the fake server did not start");
    fake_server_url(t->srv, t->url, sizeof t->url);
  }
  heron_param all[24];
  int na = 0;
  int has_url = 0;
  for (int i = 0; i < np; i++) {
    has_url |= !strcmp(params[i].key, "url");
    all[na++] = params[i];
  }
  if (!has_url)
    all[na++] = (heron_param){"url", t->url};
  int rc = heron__plugin_load_strategy(HERON_LLM_PLUGIN, &t->lib, err);
  if (rc)
    return rc;
  t->desc = t->lib.desc;
  /* As the engine does: values checked against the typed declarations,
   * defaults filled in. */
  heron__param_table pt = heron__strategy_param_table(t->desc);
  heron_param *checked = NULL;
  int nchecked = 0;
  rc = heron__param_table_apply(&pt, all, na, "llm", &checked, &nchecked, err);
  if (rc)
    return rc;
  t->env = (heron_strategy_env){
      .abi_version = HERON_STRATEGY_ABI_VERSION,
      .struct_size = sizeof(heron_strategy_env),
      .space = t->sp,
      .rng = &t->rng,
      .history = &t->hist,
      .task_key = heron_task_key(t->task),
      .batch = 4,
      .log = lt_log,
  };
  rc = t->desc->create(&t->env, checked, nchecked, &t->self, err);
  free(checked);
  return rc;
}

static void lt_close(lt *t) {
  if (t->self)
    t->desc->destroy(t->self);
  t->self = NULL;
  if (t->srv)
    fake_server_stop(t->srv);
  heron__plugin_close(&t->lib);
  heron__history_free(&t->hist);
  heron_task_free(t->task);
  for (int i = 0; i < t->nbodies; i++)
    free(t->bodies[i]);
  free(t->sent);
  memset(t, 0, sizeof *t);
}

/* CHECK for helpers that return a count: fails the test and returns -1,
 * which the caller's own CHECK_EQ then reports too. */
#define LT_REQUIRE(cond)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      heron_test_failed = 1;                                                   \
      return -1;                                                               \
    }                                                                          \
  } while (0)

/* Proposes `want` configs, checks each is valid and new, "measures" them
 * (a made-up throughput that depends on the config; every fifth one a
 * wrong result) and tells the strategy.  Returns how many came. */
static int lt_round(lt *t, int want, int64_t *out) {
  int got = -1;
  heron_error err = {0};
  int rc = t->desc->propose(t->self, want, out, &got, &err);
  if (rc)
    fprintf(stderr, "propose: %s\n", err.text);
  LT_REQUIRE(rc == HERON_OK);
  heron_measurement ms[64];
  for (int i = 0; i < got; i++) {
    const int64_t *c = out + (size_t)i * t->nv;
    LT_REQUIRE(heron_space_violations(t->sp, c, NULL, 0) == 0);
    LT_REQUIRE(!heron__history_has(&t->hist, heron__config_key(t->sp, c)));
    double g = 1.0;
    for (int v = 0; v < t->nv; v++)
      g += (double)(((uint64_t)c[v] * 2654435761u + (uint64_t)v) % 97) / 10.0;
    int bad = t->trial % 5 == 4;
    ms[i] = (heron_measurement){.trial = ++t->trial,
                                .status = bad ? HERON_MEAS_WRONG_RESULT
                                              : HERON_MEAS_OK,
                                .config = c,
                                .seconds = bad ? 0 : 1.0 / g,
                                .gflops = bad ? 0 : g,
                                .error = bad ? "wrong" : ""};
    LT_REQUIRE(
        heron__history_add(&t->hist, &ms[i], heron__config_key(t->sp, c)));
  }
  rc = t->desc->observe(t->self, ms, got, &err);
  LT_REQUIRE(rc == HERON_OK);
  return got;
}

/* The user message of the i-th request the server got (malloc'ed). */
static char *user_message(lt *t, int i) {
  json_t *o = json_loads(fake_server_body(t->srv, i), 0, NULL);
  const char *s = json_string_value(json_object_get(
      json_array_get(json_object_get(o, "messages"), 1), "content"));
  char *copy = s ? strdup(s) : NULL;
  json_decref(o);
  return copy;
}

/* ---- Tests --------------------------------------------------------------- */

TEST(a_good_reply_is_proposed_as_written) {
  lt t;
  heron_error err = {0};
  lt_step good = {0};
  heron_param p[] = {{"model", "qwen-test"}, {"temperature", "0.2"}};
  CHECK_OK(lt_open(&t, &good, 1, p, 2, 1, &err), &err);
  int64_t *out = malloc(4 * (size_t)t.nv * sizeof *out);
  CHECK_EQ(lt_round(&t, 1, out), 1);
  CHECK_EQ(t.nsent, 1);
  /* The knobs are the model's; the auxiliary variables follow from them. */
  CHECK(!memcmp(out, t.sent, (size_t)t.nv * sizeof *out));
  CHECK_EQ(fake_server_requests(t.srv), 1);
  CHECK(!strcmp(fake_server_path(t.srv, 0), "/v1/chat/completions"));
  json_t *body = json_loads(fake_server_body(t.srv, 0), 0, NULL);
  CHECK(body);
  CHECK(
      !strcmp(json_string_value(json_object_get(body, "model")), "qwen-test"));
  CHECK(json_real_value(json_object_get(body, "temperature")) == 0.2);
  CHECK_EQ(json_array_size(json_object_get(body, "messages")), 2);
  json_decref(body);
  CHECK(!strcmp(fake_server_auth(t.srv, 0), "")); /* no key configured */
  CHECK_EQ(log_count("reply valid, 1 config (1 new)"), 1);
  lt_close(&t);
  CHECK_EQ(log_count("1 calls (0 failed); replies: 1 valid"), 1);
  free(out);
}

TEST(the_prompt_holds_knobs_rules_examples_and_failures) {
  lt t;
  heron_error err = {0};
  lt_step good = {0};
  heron_param p[] = {{"examples", "3"}, {"failures", "1"}, {"per_call", "2"}};
  CHECK_OK(lt_open(&t, &good, 1, p, 3, 2, &err), &err);
  int64_t *out = malloc(16 * (size_t)t.nv * sizeof *out);
  /* Round 1: nothing measured yet. */
  CHECK_EQ(lt_round(&t, 2, out), 2);
  char *first = user_message(&t, 0);
  CHECK(first);
  CHECK_STR_CONTAINS(first, "No configuration has been measured yet.");
  CHECK_STR_CONTAINS(first, "Task: gemm/64,64,64/fp32/cpu");
  CHECK_STR_CONTAINS(first, "Propose 2 new configurations");
  /* Every knob with its domain, every rule, the answer format. */
  int nk = heron_space_nknobs(t.sp);
  for (int i = 0; i < nk; i++) {
    char want[128];
    snprintf(want, sizeof want,
             "- %s: ", heron_space_var_name(t.sp, heron_space_knob(t.sp, i)));
    CHECK_STR_CONTAINS(first, want);
  }
  CHECK_STR_CONTAINS(
      first, "- i.t1: one of {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}");
  CHECK_STR_CONTAINS(first, "- i.t0: an integer from 1 to 64");
  CHECK_STR_CONTAINS(first, "- unroll: an integer from 0 to 5");
  for (int c = 0; c < heron_space_nconstraints(t.sp); c++) {
    char rule[512];
    heron_space_constraint_str(t.sp, c, rule, sizeof rule);
    CHECK_STR_CONTAINS(first, rule);
  }
  CHECK_STR_CONTAINS(first, "## i.t1: VALUE, i.t2: VALUE");
  free(first);
  /* More rounds: the best ok configs first, then a failure with perf 0. */
  for (int r = 0; r < 3; r++)
    CHECK_EQ(lt_round(&t, 5, out), 5);
  const heron_measurement *best = heron_history_best(&t.hist);
  char want[4096];
  snprintf(want, sizeof want, "Configuration 1 (perf: %.2f): ", best->gflops);
  int last = fake_server_requests(t.srv);
  CHECK_EQ(lt_round(&t, 1, out), 1);
  char *later = user_message(&t, last);
  CHECK(later);
  CHECK_STR_CONTAINS(later, want);
  CHECK_STR_CONTAINS(later, "Configuration 3 (perf: ");
  CHECK(!strstr(later, "Configuration 5 ("));
  CHECK_STR_CONTAINS(later, "Configuration 4 (perf: 0): ");
  free(later);
  /* Within a round, what was proposed already is listed to the model. */
  int pending_listed = 0;
  for (int i = 0; i < fake_server_requests(t.srv); i++) {
    char *m = user_message(&t, i);
    pending_listed += m && strstr(m, "Already proposed and waiting") != NULL;
    free(m);
  }
  CHECK(pending_listed > 0);
  lt_close(&t);
  free(out);
}

/* A valid config of GEMM 64^3 on cpu-avx512, written as a model would; the
 * unroll value is left open ("%d") so tests can make distinct ones. */
#define LT_VALID                                                               \
  "i.t0: 8, i.t1: 2, i.t2: 2, i.t3: 2, j.t0: 8, j.t1: 1, j.t2: 1, j.t3: 8, "   \
  "k.t0: 4, k.t1: 16, vec: 8, acc_at: 0, A.pack: 0, B.pack: 1, prefetch: 0, "  \
  "unroll: "

TEST(malformed_replies_are_repaired_or_rejected_and_counted) {
  lt t;
  heron_error err = {0};
  /* One of each kind the plugin must survive, served in call order.  A
   * round asks for one config and makes up to three calls. */
  const lt_step steps[] = {
      /* round 1, call 1: truncated, the block never closes: rejected */
      {.content = "## i.t0: 2, i.t1: 2, i.t2: 4"},
      /* round 1, call 2: prose around a valid block: repaired */
      {.content = "Sure! Here is a better one:\n## " LT_VALID "1 ##\n"
                  "It should be fast."},
      /* round 2: an unknown knob: repaired (dropped) */
      {.content = "## " LT_VALID "2, tile_x: 7 ##"},
      /* round 3: missing knobs: repaired (completed) */
      {.content = "## i.t0: 4, j.t0: 16, vec: 8 ##"},
      /* round 4: out of range: repaired */
      {.content = "## i.t0: 3, i.t1: 4, i.t2: 2, i.t3: 4, j.t0: 4, j.t1: 2, "
                  "j.t2: 1, j.t3: 8, k.t0: 4, k.t1: 16, vec: 8, acc_at: 0, "
                  "A.pack: 0, B.pack: 0, unroll: 9 ##"},
      /* round 5, calls 1-3: empty, not JSON, truncated again: rejected,
       * and the round is filled by sampling */
      {.content = ""},
      {.status = 200, .body = "{\"choices\": [ {\"message\": "},
  };
  heron_param p[] = {{"max_useless", "100"}};
  CHECK_OK(lt_open(&t, steps, 7, p, 1, 3, &err), &err);
  int64_t *out = malloc(4 * (size_t)t.nv * sizeof *out);
  for (int r = 0; r < 5; r++)
    CHECK_EQ(lt_round(&t, 1, out), 1);
  CHECK_EQ(fake_server_requests(t.srv), 8);
  CHECK_EQ(log_count("reply rejected"), 4);
  CHECK_EQ(log_count("reply repaired, 1 config (1 new)"), 4);
  CHECK_EQ(log_count("not JSON"), 1);
  CHECK_EQ(log_count("tile_x"), 1);
  CHECK_EQ(lt_warnings, 0);
  lt_close(&t);
  CHECK_STR_CONTAINS(lt_logbuf,
                     "8 calls (0 failed); replies: 0 valid, "
                     "4 repaired, 4 rejected; configs: 4 from the "
                     "model, 0 repeats dropped, 1 sampled at random");
  free(out);
}

TEST(http_401_is_not_retried_and_500_is) {
  lt t;
  heron_error err = {0};
  const lt_step steps[] = {
      {.status = 401, .body = "{\"error\": {\"message\": \"bad key\"}}"},
      {.status = 500, .body = "internal error"},
      {.status = 500, .body = "internal error"},
      {.status = 500, .body = "internal error"},
      {0},
  };
  heron_param p[] = {{"retries", "2"}, {"max_useless", "100"}};
  CHECK_OK(lt_open(&t, steps, 5, p, 2, 4, &err), &err);
  int64_t *out = malloc(4 * (size_t)t.nv * sizeof *out);
  /* Call 1: the 401 is final.  Call 2: three 500s (one try and two
   * retries).  Call 3: the good reply. */
  CHECK_EQ(lt_round(&t, 1, out), 1);
  CHECK_EQ(log_count("failed after 1 attempt: HTTP 401"), 1);
  CHECK_STR_CONTAINS(lt_logbuf, "bad key");
  CHECK_EQ(log_count("failed after 3 attempts: HTTP 500"), 1);
  CHECK_EQ(fake_server_requests(t.srv), 5);
  CHECK_EQ(log_count("reply valid"), 1);
  CHECK(!memcmp(out, t.sent, (size_t)t.nv * sizeof *out));
  /* A 500 that a retry gets past is named in the call's verdict. */
  /* (The server is idle between rounds; requests 5 and 6 pick steps 1
   * and 0 of the new two-step script.) */
  t.steps[0] = (lt_step){0};
  t.steps[1] = (lt_step){.status = 503, .body = "overloaded"};
  t.nsteps = 2;
  CHECK_EQ(lt_round(&t, 1, out), 1);
  CHECK_EQ(fake_server_requests(t.srv), 7);
  CHECK_EQ(log_count("reply valid, 1 config (1 new); an earlier attempt: "
                     "HTTP 503"),
           1);
  lt_close(&t);
  free(out);
}

TEST(a_slow_reply_and_a_closed_connection_are_failed_calls) {
  lt t;
  heron_error err = {0};
  const lt_step steps[] = {
      {.delay_ms = 5000, .content = "## i.t0: 2 ##"},
      {.close_early = 1},
      {0},
  };
  heron_param p[] = {
      {"timeout", "0.5"}, {"retries", "0"}, {"max_useless", "100"}};
  CHECK_OK(lt_open(&t, steps, 3, p, 3, 5, &err), &err);
  int64_t *out = malloc(4 * (size_t)t.nv * sizeof *out);
  CHECK_EQ(lt_round(&t, 1, out), 1);
  CHECK_EQ(log_count("within 0.5 s"), 1);
  /* The 0.5 s timeout fired, not the server's 5 s reply: the plugin says
   * how long the attempt waited (the timeout plus however late libcurl
   * noticed it), a figure a busy machine does not stretch as it stretches
   * the round around it. */
  const char *g = strstr(lt_logbuf, "(gave up after ");
  double waited = g ? strtod(g + strlen("(gave up after "), NULL) : -1;
  fprintf(stderr, "the 0.5 s timeout gave up after %.2f s\n", waited);
  CHECK_MSG(waited >= 0.49 && waited < 1.5, "%s", lt_logbuf);
  CHECK_EQ(log_count("closed the connection without a reply"), 1);
  CHECK_EQ(log_count("reply valid"), 1);
  lt_close(&t);
  free(out);
}

TEST(useless_replies_fall_back_to_random_with_one_warning) {
  lt t;
  heron_error err = {0};
  const lt_step bad = {.content = "I cannot help with that."};
  heron_param p[] = {{"max_useless", "3"}};
  CHECK_OK(lt_open(&t, &bad, 1, p, 1, 6, &err), &err);
  int64_t *out = malloc(16 * (size_t)t.nv * sizeof *out);
  for (int r = 0; r < 4; r++)
    CHECK_EQ(lt_round(&t, 8, out), 8); /* every round full */
  CHECK_EQ(fake_server_requests(t.srv), 3);
  CHECK_EQ(lt_warnings, 1);
  CHECK_EQ(log_count("3 useless replies in a row (the last: "), 1);
  CHECK_EQ(log_count("falling back to constrained random sampling"), 1);
  lt_close(&t);
  CHECK_STR_CONTAINS(lt_logbuf, "32 sampled at random (fell back");
  free(out);
}

TEST(repeated_answers_count_as_useless) {
  lt t;
  heron_error err = {0};
  /* The same valid config every time: new once, a repeat after that. */
  const lt_step same = {.content = "## " LT_VALID "2 ##"};
  heron_param p[] = {{"max_useless", "4"}};
  CHECK_OK(lt_open(&t, &same, 1, p, 1, 7, &err), &err);
  int64_t *out = malloc(8 * (size_t)t.nv * sizeof *out);
  CHECK_EQ(lt_round(&t, 4, out), 4);
  CHECK_EQ(lt_round(&t, 4, out), 4);
  CHECK_EQ(fake_server_requests(t.srv), 5); /* 1 new + 4 repeats */
  CHECK_EQ(log_count("falling back"), 1);
  CHECK_STR_CONTAINS(lt_logbuf,
                     "every config it gave was measured or proposed already");
  lt_close(&t);
  CHECK_STR_CONTAINS(lt_logbuf, "1 from the model, 4 repeats dropped");
  free(out);
}

TEST(the_api_key_reaches_the_server_and_nowhere_else) {
  const char *key = "sk-test-0123456789SECRET";
  setenv("HERON_TEST_LLM_KEY", key, 1);
  char rec[64];
  snprintf(rec, sizeof rec, "/tmp/heron-llm-key-XXXXXX");
  int fd = mkstemp(rec);
  CHECK(fd >= 0);
  close(fd);
  lt t;
  heron_error err = {0};
  /* A server that echoes the key, as hosted APIs do in their 401s. */
  char echo[256];
  snprintf(echo, sizeof echo,
           "{\"error\": {\"message\": \"Incorrect API key provided: %s\"}}",
           key);
  const lt_step steps[] = {{.status = 401, .body = echo}, {0}};
  heron_param p[] = {{"api_key_env", "HERON_TEST_LLM_KEY"}, {"record", rec}};
  CHECK_OK(lt_open(&t, steps, 2, p, 2, 8, &err), &err);
  int64_t *out = malloc(4 * (size_t)t.nv * sizeof *out);
  CHECK_EQ(lt_round(&t, 1, out), 1);
  char want[128];
  snprintf(want, sizeof want, "Bearer %s", key);
  CHECK(!strcmp(fake_server_auth(t.srv, 0), want));
  CHECK_STR_CONTAINS(lt_logbuf, "Incorrect API key provided");
  lt_close(&t);
  CHECK(!strstr(lt_logbuf, key));
  FILE *f = fopen(rec, "r");
  CHECK(f);
  char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  CHECK(n > 0);
  CHECK(!strstr(buf, key));
  CHECK(!strstr(buf, "SECRET"));
  unlink(rec);
  /* A named variable that is not set stops create(), naming it. */
  unsetenv("HERON_TEST_LLM_KEY");
  heron_error_clear(&err);
  int rc = lt_open(&t, steps, 2, p, 1, 8, &err);
  CHECK_EQ(rc, HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "HERON_TEST_LLM_KEY");
  CHECK_STR_CONTAINS(err.text, "not set");
  lt_close(&t);
  free(out);
}

TEST(bad_parameters_are_refused_by_name) {
  lt t;
  heron_error err = {0};
  heron_param url[] = {{"url", "ftp://example.com/v1"}};
  CHECK_EQ(lt_open(&t, NULL, 0, url, 1, 1, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "ftp://example.com/v1");
  lt_close(&t);
  heron_error_clear(&err);
  heron_param temp[] = {{"url", "http://127.0.0.1:9/v1"}, {"temperature", "3"}};
  CHECK_EQ(lt_open(&t, NULL, 0, temp, 2, 1, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "temperature");
  lt_close(&t);
  heron_error_clear(&err);
  heron_param typo[] = {{"url", "http://127.0.0.1:9/v1"}, {"tempreature", "1"}};
  CHECK_EQ(lt_open(&t, NULL, 0, typo, 2, 1, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "tempreature");
  lt_close(&t);
  heron_error_clear(&err);
  heron_param missing[] = {{"url", "http://127.0.0.1:9/v1"},
                           {"replay", "/nonexistent/llm.jsonl"}};
  CHECK_EQ(lt_open(&t, NULL, 0, missing, 2, 1, &err), HERON_EINVAL);
  CHECK_STR_CONTAINS(err.text, "/nonexistent/llm.jsonl");
  lt_close(&t);
}

/* Runs 3 rounds of 4 and returns the proposals (12 configs) in out. */
static void three_rounds(lt *t, int64_t *out) {
  for (int r = 0; r < 3; r++)
    CHECK_EQ(lt_round(t, 4, out + (size_t)r * 4 * t->nv), 4);
}

TEST(recorded_exchanges_replay_without_a_server) {
  char rec[64];
  snprintf(rec, sizeof rec, "/tmp/heron-llm-rec-XXXXXX");
  int fd = mkstemp(rec);
  CHECK(fd >= 0);
  close(fd);
  unlink(rec); /* the plugin makes it */
  const lt_step steps[] = {{0},
                           {.content = "## i.t0: 2, bogus: 1 ##"},
                           {0},
                           {.status = 500, .body = "oops"}};
  lt t;
  heron_error err = {0};
  heron_param p[] = {{"record", rec}, {"retries", "0"}};
  CHECK_OK(lt_open(&t, steps, 4, p, 2, 9, &err), &err);
  int nv = t.nv;
  int64_t *a = malloc(12 * (size_t)nv * sizeof *a);
  int64_t *b = malloc(12 * (size_t)nv * sizeof *b);
  three_rounds(&t, a);
  int calls = fake_server_requests(t.srv);
  CHECK(calls >= 12);
  lt_close(&t);
  /* The same seed and history, answered from the recording: no server. */
  heron_param q[] = {{"replay", rec}, {"url", "http://127.0.0.1:9/v1"}};
  CHECK_OK(lt_open(&t, NULL, 0, q, 2, 9, &err), &err);
  three_rounds(&t, b);
  CHECK(!memcmp(a, b, 12 * (size_t)nv * sizeof *a));
  CHECK_EQ(lt_warnings, 0);
  /* Past the end of the recording every call fails, naming the file. */
  int64_t *c = malloc(8 * (size_t)nv * sizeof *c);
  CHECK_EQ(lt_round(&t, 8, c), 8);
  CHECK_STR_CONTAINS(lt_logbuf, "recorded calls");
  CHECK_STR_CONTAINS(lt_logbuf, rec);
  lt_close(&t);
  /* Every line of the recording is a JSON object with the exchange. */
  FILE *f = fopen(rec, "r");
  CHECK(f);
  char line[1 << 16];
  int lines = 0;
  while (fgets(line, sizeof line, f)) {
    json_t *o = json_loads(line, 0, NULL);
    CHECK(json_is_object(json_object_get(o, "request")));
    CHECK(json_is_integer(json_object_get(o, "status")));
    CHECK_EQ(json_integer_value(json_object_get(o, "call")), lines);
    json_decref(o);
    lines++;
  }
  fclose(f);
  CHECK_EQ(lines, calls);
  unlink(rec);
  free(a);
  free(b);
  free(c);
}

TEST(state_saved_after_a_round_resumes_the_fallback_and_the_counts) {
  const lt_step bad = {.content = "no"};
  lt t;
  heron_error err = {0};
  heron_param p[] = {{"max_useless", "2"}};
  CHECK_OK(lt_open(&t, &bad, 1, p, 1, 10, &err), &err);
  int64_t *out = malloc(4 * (size_t)t.nv * sizeof *out);
  CHECK_EQ(lt_round(&t, 4, out), 4);
  char path[64];
  snprintf(path, sizeof path, "/tmp/heron-llm-state-XXXXXX");
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  CHECK_OK(t.desc->save_state(t.self, path, &err), &err);
  lt_close(&t);
  CHECK_OK(lt_open(&t, &bad, 1, p, 1, 10, &err), &err);
  CHECK_OK(t.desc->load_state(t.self, path, &err), &err);
  CHECK_EQ(lt_round(&t, 4, out), 4);
  CHECK_EQ(fake_server_requests(t.srv), 0); /* still fallen back */
  lt_close(&t);
  CHECK_STR_CONTAINS(lt_logbuf, "2 calls (0 failed)");
  CHECK_STR_CONTAINS(lt_logbuf, "8 sampled at random (fell back");
  /* A file that is not a state is refused by name. */
  FILE *f = fopen(path, "w");
  fputs("[1, 2]", f);
  fclose(f);
  heron_error_clear(&err);
  CHECK_OK(lt_open(&t, &bad, 1, p, 1, 10, &err), &err);
  CHECK_EQ(t.desc->load_state(t.self, path, &err), HERON_EPARSE);
  CHECK_STR_CONTAINS(err.text, path);
  lt_close(&t);
  unlink(path);
  free(out);
}

/* ---- A tuning run ---------------------------------------------------------
 */

TEST(a_30_trial_cpu_tuning_run_completes_with_the_scripted_server) {
  /* The server mixes good answers (configs sampled from GEMM 64^3's space)
   * with a prose-wrapped, a truncated and a 500 reply, over and over. */
  const lt_step steps[] = {
      {0},
      {0},
      {.content = "Try this: ## i.t0: 4, j.t0: 16, vec: 8 ## ok?"},
      {0},
      {.content = "## i.t0: 2, i.t1:"},
      {0},
      {.status = 500, .body = "busy"}};
  lt t;
  heron_error err = {0};
  CHECK_OK(lt_open(&t, steps, 7, NULL, 0, 11, &err), &err);
  /* Only the server and the url are wanted: the engine runs the plugin. */
  t.desc->destroy(t.self);
  t.self = NULL;
  char log[64], progress[96];
  snprintf(log, sizeof log, "/tmp/heron-llm-run-XXXXXX");
  int fd = mkstemp(log);
  CHECK(fd >= 0);
  close(fd);
  snprintf(progress, sizeof progress, "%s.progress", log);
  heron_tune_options o;
  heron_tune_options_init(&o);
  heron_param p[] = {{"url", t.url}, {"retries", "0"}};
  o.strategy = HERON_LLM_PLUGIN;
  o.strategy_params = p;
  o.n_strategy_params = 2;
  o.trials = 30;
  o.batch = 6;
  o.seed = 11;
  o.log_path = log;
  o.measure.number = 1;
  o.measure.repeat = 1;
  o.measure.min_repeat_ms = 1;
  o.measure.timeout_s = 20;
  /* The run is the strategy's, not the kernels': where this CPU cannot run
   * cpu-avx512's kernels (an AVX2 machine, or HERON_CPU_ISA=avx2) they are
   * built and not timed, which the engine records as ok all the same. */
  heron__hw hw;
  heron__hw_detect_cpu(&hw);
  char missing[64] = "";
  if (heron__hw_load("cpu-avx512", &hw, &err) == HERON_OK &&
      heron__hw_cpu_lacks(&hw, missing, sizeof missing)) {
    o.measure.compile_only = 1;
    printf("kernels compiled, not run: this CPU lacks %s\n", missing);
  }
  o.progress = fopen(progress, "w");
  o.verbose = 1;
  heron_tune_result res;
  int rc = heron_tune(t.task, &o, &res, &err);
  fclose(o.progress);
  CHECK_OK(rc, &err);
  CHECK_EQ(res.trials, 30);
  CHECK(res.ok >= 27);
  CHECK_EQ(res.dropped_invalid, 0);
  FILE *f = fopen(log, "r");
  CHECK(f);
  char line[1 << 14];
  int lines = 0, llm = 0;
  while (fgets(line, sizeof line, f)) {
    lines++;
    llm += strstr(line, "\"strategy\":\"llm\"") != NULL;
  }
  fclose(f);
  CHECK_EQ(lines, 30);
  CHECK_EQ(llm, 30);
  CHECK(fake_server_requests(t.srv) >= 30);
  /* The plugin's closing line reaches the user. */
  f = fopen(progress, "r");
  CHECK(f);
  size_t n = fread(lt_logbuf, 1, sizeof lt_logbuf - 1, f);
  lt_logbuf[n] = '\0';
  fclose(f);
  CHECK_STR_CONTAINS(lt_logbuf, "[llm] ");
  CHECK_STR_CONTAINS(lt_logbuf, "from the model");
  unlink(log);
  unlink(progress);
  lt_close(&t);
}
