/* tests/strategies/test_llm_reply.c - the llm strategy's reply parser
 * (plugins/strategies/llm/reply.c): the chat-completion body is taken apart
 * safely, every config that comes out of a reply is valid, values written
 * validly are kept exactly, defects are named, and no input crashes it.
 *
 * The space is gemm 64x64x64 fp32 on the cpu-avx512 description, so knob
 * names and domains are fixed (15 knobs: i.t0..i.t3, j.t0..j.t3, k.t0, k.t1,
 * vec, acc_at, A.pack, B.pack, unroll).
 *
 * Data-driven cases live in tests/strategies/llm/replies/<name>.case: header
 * lines "key: value", a blank line, then the reply content verbatim.  Keys:
 *   expect   valid | repaired | rejected    the reply's outcome (required)
 *   defects  names of LLM_D_* bits, e.g. "prose, unknown", or "none"
 *            (required; compared exactly with the reply's defects)
 *   repair   0 or 1 (default 1)
 *   cap      configs asked for (default 1)
 *   configs  how many configs must come out (default: 0 for rejected,
 *            else at least 1)
 *   blocks   the outcome of each config's block, e.g. "valid, repaired"
 *   why      a substring of the reply's why or of a block's why
 *   keep     1: every knob value written inside its domain is in the
 *            config
 *   from     which block of the text (1-based) each config comes from,
 *            e.g. "2" when block 1 is rejected (default 1, 2, 3, ...)
 * A VALID block must give exactly the values written, always.  The TEST
 * `cases` runs the file named by $LLM_REPLY_CASE (one ctest per file, see
 * llm_reply.cmake), or every case of the folder when it is unset.
 */
#include <dirent.h>
#include <errno.h>
#include <time.h>

#include "plugins/strategies/llm/reply.h"
#include "test.h"

#define MAXCAP 8

/* ---- The space ----------------------------------------------------------- */

static heron_task *make_task(void) {
  int64_t shape[3] = {64, 64, 64};
  heron_task_spec spec = {.op = "gemm",
                          .shape = shape,
                          .nshape = 3,
                          .dtype = "fp32",
                          .target = "cpu",
                          .hw = "cpu-avx512"};
  heron_task *t = NULL;
  heron_error err;
  heron_error_clear(&err);
  if (heron_task_create(&spec, &t, &err) != HERON_OK) {
    fprintf(stderr, "heron_task_create(gemm 64^3 cpu-avx512): %s\n", err.text);
    return NULL;
  }
  return t;
}

/* A config is valid and complete. */
static int config_ok(const heron_space *sp, const int64_t *cfg) {
  for (int v = 0; v < heron_space_nvars(sp); v++)
    if (cfg[v] == HERON_UNSET)
      return 0;
  return heron_space_violations(sp, cfg, NULL, 0) == 0;
}

/* Writes the knobs of cfg as one "## k: v, ... ##" block, separated by sep,
 * appended to buf. */
static void append_block(const heron_space *sp, const int64_t *cfg,
                         const char *sep, char *buf, size_t cap) {
  size_t o = strlen(buf);
  o += (size_t)snprintf(buf + o, cap - o, "## ");
  for (int k = 0; k < heron_space_nknobs(sp) && o < cap; k++) {
    int v = heron_space_knob(sp, k);
    o += (size_t)snprintf(buf + o, cap - o, "%s%s: %" PRId64, k ? sep : "",
                          heron_space_var_name(sp, v), cfg[v]);
  }
  if (o < cap)
    snprintf(buf + o, cap - o, " ##");
}

/* ---- An independent reading of what a reply writes ---------------------- */

/* Strips blanks from both ends of s[0..*len). */
static const char *trim(const char *s, size_t *len) {
  while (*len && strchr(" \t\r\v\f\n", *s))
    s++, (*len)--;
  while (*len && strchr(" \t\r\v\f\n", s[*len - 1]))
    (*len)--;
  return s;
}

static int in_domain(const heron_space *sp, int v, int64_t x) {
  int64_t lo, hi;
  const int64_t *vals;
  int nvals;
  if (heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals) != HERON_OK ||
      x < lo || x > hi)
    return 0;
  if (!vals)
    return 1;
  for (int i = 0; i < nvals; i++)
    if (vals[i] == x)
      return 1;
  return 0;
}

/* The values the b-th "## ... ##" block of text writes for the knobs,
 * into want[nvars] (HERON_UNSET where not written as an integer in the
 * domain; a knob written twice counts as not written).  Returns 0 when
 * there is no such block.  A simpler reading than reply.c's, on purpose:
 * strtoll and a linear domain scan. */
static int written(const heron_space *sp, const char *text, int b,
                   int64_t *want) {
  for (int v = 0; v < heron_space_nvars(sp); v++)
    want[v] = HERON_UNSET;
  const char *open = strstr(text, "##"), *close = NULL;
  for (int i = 0; open; i++) {
    close = strstr(open + 2, "##");
    if (!close)
      return 0;
    if (i == b)
      break;
    open = strstr(close + 2, "##");
  }
  if (!open)
    return 0;
  char *blk = strndup(open + 2, (size_t)(close - open - 2));
  int *count = calloc((size_t)heron_space_nvars(sp), sizeof *count);
  char *save = NULL;
  for (char *it = strtok_r(blk, ",;\n", &save); it;
       it = strtok_r(NULL, ",;\n", &save)) {
    char *colon = strchr(it, ':');
    if (!colon)
      continue;
    size_t nlen = (size_t)(colon - it), vlen = strlen(colon + 1);
    const char *name = trim(it, &nlen), *val = trim(colon + 1, &vlen);
    char nbuf[128], vbuf[64];
    if (nlen >= sizeof nbuf || vlen == 0 || vlen >= sizeof vbuf)
      continue;
    memcpy(nbuf, name, nlen);
    nbuf[nlen] = '\0';
    memcpy(vbuf, val, vlen);
    vbuf[vlen] = '\0';
    int v = heron_space_find_var(sp, nbuf);
    if (v < 0 || heron_space_var_is_knob(sp, v) != 1)
      continue;
    count[v]++;
    char *end;
    errno = 0;
    long long x = strtoll(vbuf, &end, 10);
    if (errno == 0 && *end == '\0' && in_domain(sp, v, x))
      want[v] = x;
  }
  for (int v = 0; v < heron_space_nvars(sp); v++)
    if (count[v] > 1)
      want[v] = HERON_UNSET;
  free(count);
  free(blk);
  return 1;
}

/* ---- llm_reply_content ------------------------------------------------- */

TEST(content_good_body_gives_the_message) {
  const char *body =
      "{\"id\":\"x\",\"choices\":[{\"index\":0,\"finish_reason\":\"stop\","
      "\"message\":{\"role\":\"assistant\",\"content\":\"## vec: 4 ##\\n\"}}]}";
  char *content = NULL, why[160];
  CHECK_EQ(llm_reply_content(body, &content, why, sizeof why), 0);
  CHECK(content != NULL);
  CHECK_MSG(strcmp(content, "## vec: 4 ##\n") == 0, "content '%s'", content);
  free(content);
}

TEST(content_not_json_is_named) {
  char *content = (char *)1, why[160];
  CHECK_EQ(llm_reply_content("<html>502 Bad Gateway</html>", &content, why,
                             sizeof why),
           -1);
  CHECK(content == NULL);
  CHECK_STR_CONTAINS(why, "not JSON");
  CHECK_STR_CONTAINS(why, "line 1");
  CHECK_EQ(llm_reply_content("", &content, why, sizeof why), -1);
  CHECK_STR_CONTAINS(why, "not JSON");
  CHECK_EQ(llm_reply_content("{\"choices\": [", &content, why, sizeof why), -1);
  CHECK_STR_CONTAINS(why, "not JSON");
  CHECK_EQ(llm_reply_content(NULL, &content, why, sizeof why), -1);
  CHECK(why[0] != '\0');
}

TEST(content_without_choices_is_named) {
  const char *bodies[] = {
      "{}",
      "[]",
      "42",
      "{\"choices\": []}",
      "{\"choices\": {}}",
      "{\"choices\": [{}]}",
      "{\"choices\": [{\"message\": {}}]}",
      "{\"choices\": [{\"message\": \"## vec: 4 ##\"}]}",
      "{\"choices\": [{\"text\": \"## vec: 4 ##\"}]}",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
    char *content = NULL, why[160];
    CHECK_MSG(llm_reply_content(bodies[i], &content, why, sizeof why) == -1,
              "%s", bodies[i]);
    CHECK(content == NULL);
    CHECK_STR_CONTAINS(why, "no choices[0].message.content string");
  }
}

TEST(content_that_is_not_a_string_is_refused) {
  const char *bodies[] = {
      "{\"choices\": [{\"message\": {\"content\": null, \"tool_calls\": []}}]}",
      "{\"choices\": [{\"message\": {\"content\": 8}}]}",
      "{\"choices\": [{\"message\": {\"content\": [\"## vec: 4 ##\"]}}]}",
  };
  for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
    char *content = NULL, why[160];
    CHECK_MSG(llm_reply_content(bodies[i], &content, why, sizeof why) == -1,
              "%s", bodies[i]);
    CHECK(content == NULL);
    CHECK_STR_CONTAINS(why, "content string");
  }
}

TEST(content_error_object_gives_its_message) {
  char *content = NULL, why[160];
  CHECK_EQ(
      llm_reply_content("{\"error\": {\"message\": \"Incorrect API key "
                        "provided\", \"type\": \"invalid_request_error\"}}",
                        &content, why, sizeof why),
      -1);
  CHECK(content == NULL);
  CHECK_STR_CONTAINS(why, "the body is an error: Incorrect API key provided");
  /* A bare string, and an error object without a message, are errors too. */
  CHECK_EQ(llm_reply_content("{\"error\": \"rate limited\"}", &content, why,
                             sizeof why),
           -1);
  CHECK_STR_CONTAINS(why, "the body is an error: rate limited");
  CHECK_EQ(llm_reply_content("{\"error\": {\"code\": 500}}", &content, why,
                             sizeof why),
           -1);
  CHECK_STR_CONTAINS(why, "the body is an error");
  /* A message with a newline stays on one log line. */
  CHECK_EQ(llm_reply_content("{\"error\": {\"message\": \"a\\nb\"}}", &content,
                             why, sizeof why),
           -1);
  CHECK(strchr(why, '\n') == NULL);
  /* "error": null beside a good choice is not an error. */
  CHECK_EQ(llm_reply_content("{\"error\": null, \"choices\": [{\"message\": "
                             "{\"content\": \"## unroll: 1 ##\"}}]}",
                             &content, why, sizeof why),
           0);
  CHECK(content && strcmp(content, "## unroll: 1 ##") == 0);
  free(content);
}

/* Counts the 'Z's of s: the marker each bad body below is made of. */
static size_t count_z(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    n += *s == 'Z';
  return n;
}

TEST(content_why_never_exceeds_its_cap_or_quotes_much_body) {
  char zs[4001];
  memset(zs, 'Z', sizeof zs - 1);
  zs[sizeof zs - 1] = '\0';
  char bodies[4][4200];
  snprintf(bodies[0], sizeof bodies[0], "{\"error\": {\"message\": \"%s\"}}",
           zs);
  snprintf(bodies[1], sizeof bodies[1], "%s", zs);
  snprintf(bodies[2], sizeof bodies[2], "{\"a\": %s}", zs);
  snprintf(bodies[3], sizeof bodies[3], "{\"error\": \"%s\"}", zs);
  size_t caps[] = {1, 2, 8, 40, 160, 1000};
  for (int b = 0; b < 4; b++) {
    for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
      char why[1001];
      memset(why, 'x', sizeof why);
      char *content = NULL;
      CHECK_EQ(llm_reply_content(bodies[b], &content, why, caps[c]), -1);
      CHECK(content == NULL);
      CHECK_MSG(memchr(why, '\0', caps[c]) != NULL,
                "body %d: why not terminated within cap %zu", b, caps[c]);
      CHECK_MSG(count_z(why) <= 80, "body %d: why quotes %zu bytes of it", b,
                count_z(why));
      if (caps[c] < sizeof why)
        CHECK_MSG(why[caps[c]] == 'x', "body %d: wrote past cap %zu", b,
                  caps[c]);
    }
    char *content = NULL;
    CHECK_EQ(llm_reply_content(bodies[b], &content, NULL, 0), -1);
  }
}

/* ---- llm_reply_parse: C tests ------------------------------------------ */

TEST(parse_sampled_configs_come_back_exactly) {
  heron_task *t = make_task();
  CHECK(t != NULL);
  const heron_space *sp = heron_task_space(t);
  int nv = heron_space_nvars(sp);
  heron_rng rng;
  heron_rng_seed(&rng, 7);
  int64_t want[3 * 64], out[3 * 64];
  CHECK(nv <= 64);
  const char *seps[] = {", ", "\n", "; ", ",\n  "};
  for (int round = 0; round < 60; round++) {
    char text[4096] = "";
    int nb = 1 + round % 3;
    for (int b = 0; b < nb; b++) {
      CHECK_OK(heron_space_sample(sp, &rng, want + b * nv, NULL), NULL);
      append_block(sp, want + b * nv, seps[round % 4], text, sizeof text);
      strcat(text, "\n");
    }
    llm_verdict blocks[3], reply;
    int n = -1;
    CHECK_EQ(
        llm_reply_parse(sp, &rng, text, round % 2, 3, out, blocks, &n, &reply),
        0);
    CHECK_MSG(reply.outcome == LLM_VALID && reply.defects == 0,
              "outcome %d defects %#x why '%s' for\n%s", reply.outcome,
              reply.defects, reply.why, text);
    CHECK_EQ(n, nb);
    CHECK_EQ(reply.why[0], '\0');
    for (int b = 0; b < nb; b++) {
      CHECK_EQ(blocks[b].outcome, LLM_VALID);
      CHECK(config_ok(sp, out + b * nv));
      for (int k = 0; k < heron_space_nknobs(sp); k++) {
        int v = heron_space_knob(sp, k);
        CHECK_EQ(out[b * nv + v], want[b * nv + v]);
      }
    }
  }
  heron_task_free(t);
}

/* An out-of-range value is moved to a legal one; the other values, legal
 * and compatible, are kept. */
TEST(parse_repair_moves_only_the_illegal_value) {
  heron_task *t = make_task();
  CHECK(t != NULL);
  const heron_space *sp = heron_task_space(t);
  int unroll = heron_space_find_var(sp, "unroll");
  CHECK(unroll >= 0);
  heron_rng rng;
  heron_rng_seed(&rng, 11);
  int64_t want[64], out[64];
  for (int round = 0; round < 30; round++) {
    CHECK_OK(heron_space_sample(sp, &rng, want, NULL), NULL);
    want[unroll] = round % 2 ? 99 : -3;
    char text[2048] = "";
    append_block(sp, want, ", ", text, sizeof text);
    llm_verdict blocks[1], reply;
    int n = 0;
    CHECK_EQ(llm_reply_parse(sp, &rng, text, 1, 1, out, blocks, &n, &reply), 0);
    CHECK_EQ(reply.outcome, LLM_REPAIRED);
    CHECK_EQ(reply.defects, LLM_D_OUT_OF_RANGE);
    CHECK_STR_CONTAINS(reply.why, "unroll = ");
    CHECK_STR_CONTAINS(reply.why, "outside [0, 5]");
    CHECK_EQ(n, 1);
    CHECK(config_ok(sp, out));
    CHECK_EQ(out[unroll], round % 2 ? 5 : 0); /* the nearest legal value */
    for (int k = 0; k < heron_space_nknobs(sp); k++) {
      int v = heron_space_knob(sp, k);
      if (v != unroll)
        CHECK_EQ(out[v], want[v]);
    }
    /* Strict, the same block is refused. */
    CHECK_EQ(llm_reply_parse(sp, &rng, text, 0, 1, out, blocks, &n, &reply), 0);
    CHECK_EQ(reply.outcome, LLM_REJECTED);
    CHECK_EQ(n, 0);
  }
  heron_task_free(t);
}

TEST(parse_odd_arguments_are_safe) {
  heron_task *t = make_task();
  CHECK(t != NULL);
  const heron_space *sp = heron_task_space(t);
  heron_rng rng;
  heron_rng_seed(&rng, 1);
  int64_t out[64];
  llm_verdict blocks[1], reply;
  int n = 5;
  CHECK_EQ(llm_reply_parse(sp, &rng, NULL, 1, 1, out, blocks, &n, &reply), 0);
  CHECK_EQ(n, 0);
  CHECK_EQ(reply.outcome, LLM_REJECTED);
  CHECK_EQ(reply.defects, LLM_D_NO_BLOCK);
  CHECK_STR_CONTAINS(reply.why, "empty");
  /* cap 0 asks for nothing: every block is one too many. */
  CHECK_EQ(
      llm_reply_parse(sp, &rng, "## vec: 4 ##", 1, 0, NULL, NULL, &n, &reply),
      0);
  CHECK_EQ(n, 0);
  CHECK_EQ(reply.outcome, LLM_REJECTED);
  CHECK_EQ(reply.defects, LLM_D_TOO_MANY);
  CHECK_STR_CONTAINS(reply.why, "more than the 0 blocks");
  CHECK_EQ(
      llm_reply_parse(sp, &rng, "## vec: 4 ##", 1, -3, NULL, NULL, &n, &reply),
      0);
  CHECK_EQ(reply.outcome, LLM_REJECTED);
  CHECK_EQ(llm_reply_parse(NULL, &rng, "", 1, 1, out, blocks, &n, &reply), -1);
  CHECK_EQ(llm_reply_parse(sp, NULL, "", 1, 1, out, blocks, &n, &reply), -1);
  CHECK_EQ(llm_reply_parse(sp, &rng, "", 1, 1, NULL, blocks, &n, &reply), -1);
  CHECK_EQ(llm_reply_parse(sp, &rng, "", 1, 1, out, NULL, &n, &reply), -1);
  CHECK_EQ(llm_reply_parse(sp, &rng, "", 1, 1, out, blocks, NULL, &reply), -1);
  CHECK_EQ(llm_reply_parse(sp, &rng, "", 1, 1, out, blocks, &n, NULL), -1);
  heron_task_free(t);
}

/* Checks one parse's promises whatever the input: rc 0, n within cap,
 * every config valid, outcomes consistent, whys terminated.  *outcome (may
 * be NULL) gets the reply's outcome. */
static int parse_promises(const heron_space *sp, heron_rng *rng,
                          const char *text, int repair, int cap, int *outcome) {
  int nv = heron_space_nvars(sp);
  int64_t out[MAXCAP * 64];
  llm_verdict blocks[MAXCAP], reply;
  int n = -1;
  if (llm_reply_parse(sp, rng, text, repair, cap, out, blocks, &n, &reply)) {
    fprintf(stderr, "parse returned -1\n");
    return 0;
  }
  if (n < 0 || n > cap || !memchr(reply.why, '\0', sizeof reply.why)) {
    fprintf(stderr, "n = %d for cap %d\n", n, cap);
    return 0;
  }
  if (outcome)
    *outcome = (int)reply.outcome;
  if ((n == 0) != (reply.outcome == LLM_REJECTED) ||
      (reply.outcome == LLM_VALID) != (n > 0 && reply.defects == 0) ||
      (reply.outcome != LLM_VALID && !reply.why[0])) {
    fprintf(stderr, "reply outcome %d, defects %#x, n %d, why '%s'\n",
            reply.outcome, reply.defects, n, reply.why);
    return 0;
  }
  for (int i = 0; i < n; i++) {
    if (!config_ok(sp, out + i * nv) || blocks[i].outcome == LLM_REJECTED ||
        (repair == 0 && blocks[i].outcome != LLM_VALID) ||
        !memchr(blocks[i].why, '\0', sizeof blocks[i].why)) {
      fprintf(stderr, "config %d (outcome %d) is not valid\n", i,
              blocks[i].outcome);
      return 0;
    }
  }
  return 1;
}

TEST(parse_never_crashes_on_junk_or_mutations) {
  heron_task *t = make_task();
  CHECK(t != NULL);
  const heron_space *sp = heron_task_space(t);
  heron_rng rng, solver;
  heron_rng_seed(&rng, 2024);
  heron_rng_seed(&solver, 5);
  int64_t cfg[64];
  const char alphabet[] = "##::,,;;\n\n  --+0123456789ijk.tvecunrolAB_pack";
  char buf[2048];
  int seen[4][3] = {{0}};
  for (int round = 0; round < 2000; round++) {
    int kind = round % 4;
    size_t len = 0;
    if (kind == 0) { /* any bytes but NUL */
      len = heron_rng_below(&rng, 600);
      for (size_t i = 0; i < len; i++)
        buf[i] = (char)(1 + heron_rng_below(&rng, 255));
    } else if (kind == 1) { /* the reply grammar's own characters */
      len = heron_rng_below(&rng, 600);
      for (size_t i = 0; i < len; i++)
        buf[i] = alphabet[heron_rng_below(&rng, sizeof alphabet - 1)];
    } else { /* a good reply of 1..3 blocks, then mutated */
      buf[0] = '\0';
      int nb = 1 + (int)heron_rng_below(&rng, 3);
      for (int b = 0; b < nb; b++) {
        CHECK_OK(heron_space_sample(sp, &rng, cfg, NULL), NULL);
        append_block(sp, cfg, kind == 2 ? ", " : "\n", buf, 1500);
      }
      len = strlen(buf);
      int edits = 1 + (int)heron_rng_below(&rng, kind == 2 ? 3 : 12);
      for (int e = 0; e < edits && len > 0; e++) {
        size_t at = heron_rng_below(&rng, len);
        char c = alphabet[heron_rng_below(&rng, sizeof alphabet - 1)];
        switch (heron_rng_below(&rng, 3)) {
        case 0: /* replace */
          buf[at] = c;
          break;
        case 1: /* delete */
          memmove(buf + at, buf + at + 1, len - at - 1);
          len--;
          break;
        default: /* insert */
          if (len + 1 < sizeof buf) {
            memmove(buf + at + 1, buf + at, len - at);
            buf[at] = c;
            len++;
          }
        }
      }
    }
    buf[len] = '\0';
    int cap = 1 + round % MAXCAP;
    int outcome = -1;
    CHECK_MSG(parse_promises(sp, &solver, buf, round % 3 != 0, cap, &outcome),
              "round %d, input:\n%s", round, buf);
    seen[kind][outcome]++;
  }
  /* The junk is all rejected; the mutated replies reach every outcome, so
   * the promises above were checked on configs that came out. */
  CHECK_EQ(seen[0][LLM_VALID] + seen[0][LLM_REPAIRED], 0);
  for (int kind = 2; kind < 4; kind++)
    for (int o = 0; o < 3; o++)
      CHECK_MSG(seen[kind][o] > 0, "mutation kind %d never gave outcome %d",
                kind, o);
  heron_task_free(t);
}

/* A malloc'ed string of about `total` bytes: head, unit repeated, tail. */
static char *repeat(const char *head, const char *unit, const char *tail,
                    size_t total) {
  size_t h = strlen(head), u = strlen(unit), t = strlen(tail);
  char *s = malloc(total + h + t + 1);
  if (!s)
    return NULL;
  memcpy(s, head, h);
  for (size_t i = 0; i < total; i++)
    s[h + i] = unit[i % u];
  memcpy(s + h + total, tail, t + 1);
  return s;
}

/* This thread's CPU time: what the parser's work costs, which a busy
 * machine does not stretch as it stretches the wall clock. */
static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The least CPU time of 3 parses of `bytes` of one input (the least, so
 * that a cache or page-fault hiccup in one does not count); -1 when a
 * parse fails. */
static double parse_cost(const heron_space *sp, heron_rng *rng,
                         const char *head, const char *unit, const char *tail,
                         size_t bytes) {
  char *text = repeat(head, unit, tail, bytes);
  if (!text)
    return -1;
  double best = -1;
  for (int k = 0; k < 3; k++) {
    double t0 = thread_cpu_s();
    int ok = parse_promises(sp, rng, text, 1, MAXCAP, NULL);
    double t = thread_cpu_s() - t0;
    if (!ok) {
      best = -1;
      break;
    }
    if (best < 0 || t < best)
      best = t;
  }
  free(text);
  return best;
}

/* Linear: 1 MB costs about 4x what 256 KB costs, where quadratic work
 * would cost 16x (and minutes).  Bounded at 10x the same input's 256 KB
 * cost, itself counted as at least 50 us so that timer noise on a tiny
 * baseline cannot fail the test. */
TEST(parse_megabyte_inputs_take_linear_time) {
  heron_task *t = make_task();
  CHECK(t != NULL);
  const heron_space *sp = heron_task_space(t);
  heron_rng rng;
  heron_rng_seed(&rng, 3);
  const struct {
    const char *head, *unit, *tail;
  } inputs[] = {
      {"", "a", ""},              /* prose only */
      {"", "#", ""},              /* one run of markers: empty blocks */
      {"", "## ", ""},            /* alternating open/close */
      {"", "## vec: 4 ## ", ""},  /* many small blocks, beyond cap */
      {"## ", "x: 1, ", " ##"},   /* one block, a huge list of items */
      {"## ", "vec: 4, ", " ##"}, /* one knob repeated forever */
      {"## vec: ", "9", " ##"},   /* one endless number */
      {"## i.t0: 2", ",", "##"},  /* empty items */
      {"## ", "\xff\x01", "##"},  /* binary junk in a block */
      {"", "\n", ""},             /* whitespace only */
      {"## unroll: 1", "\n", ""}, /* a block never closed */
  };
  for (size_t u = 0; u < sizeof inputs / sizeof *inputs; u++) {
    double small = parse_cost(sp, &rng, inputs[u].head, inputs[u].unit,
                              inputs[u].tail, (size_t)1 << 18);
    double big = parse_cost(sp, &rng, inputs[u].head, inputs[u].unit,
                            inputs[u].tail, (size_t)1 << 20);
    CHECK_MSG(small >= 0 && big >= 0, "input %zu ('%s' repeated)", u,
              inputs[u].unit);
    fprintf(stderr, "input %zu: 256 KB %.2f ms, 1 MB %.2f ms (CPU)\n", u,
            1e3 * small, 1e3 * big);
    double base = small > 50e-6 ? small : 50e-6;
    CHECK_MSG(big < 10 * base, "1 MB of '%s' took %.2f ms, 256 KB %.2f ms",
              inputs[u].unit, 1e3 * big, 1e3 * small);
  }
  heron_task_free(t);
}

/* ---- Data-driven cases -------------------------------------------------- */

typedef struct reply_case {
  char expect[32], defects[200], blocks[200], why[200];
  int from[MAXCAP]; /* 0-based text block of each config */
  int repair, cap, configs, keep;
  const char *content;
} reply_case;

static const struct {
  const char *name;
  unsigned bit;
} defect_names[] = {
    {"prose", LLM_D_PROSE},
    {"unknown", LLM_D_UNKNOWN},
    {"missing", LLM_D_MISSING},
    {"not_number", LLM_D_NOT_NUMBER},
    {"out_of_range", LLM_D_OUT_OF_RANGE},
    {"invalid", LLM_D_INVALID},
    {"repeated", LLM_D_REPEATED},
    {"truncated", LLM_D_TRUNCATED},
    {"no_block", LLM_D_NO_BLOCK},
    {"syntax", LLM_D_SYNTAX},
    {"too_many", LLM_D_TOO_MANY},
};

/* Reads "prose, unknown" (or "none") into bits; -1 naming a bad word. */
static long parse_defects(const char *s) {
  long bits = 0;
  char buf[200];
  snprintf(buf, sizeof buf, "%s", s);
  char *save = NULL;
  for (char *w = strtok_r(buf, ", ", &save); w;
       w = strtok_r(NULL, ", ", &save)) {
    if (strcmp(w, "none") == 0)
      continue;
    size_t i = 0;
    while (i < sizeof defect_names / sizeof *defect_names &&
           strcmp(defect_names[i].name, w) != 0)
      i++;
    if (i == sizeof defect_names / sizeof *defect_names) {
      fprintf(stderr, "unknown defect name '%s'\n", w);
      return -1;
    }
    bits |= defect_names[i].bit;
  }
  return bits;
}

static int parse_outcome(const char *s) {
  return strcmp(s, "valid") == 0      ? LLM_VALID
         : strcmp(s, "repaired") == 0 ? LLM_REPAIRED
         : strcmp(s, "rejected") == 0 ? LLM_REJECTED
                                      : -1;
}

/* Splits the case file text (modified in place) into its header and
 * content.  Returns 0 naming the problem on stderr. */
static int read_case(char *text, const char *path, reply_case *c) {
  memset(c, 0, sizeof *c);
  c->repair = 1;
  c->cap = 1;
  c->configs = -1;
  for (int i = 0; i < MAXCAP; i++)
    c->from[i] = i;
  char *line = text;
  for (;;) {
    char *nl = strchr(line, '\n');
    if (!nl) {
      fprintf(stderr, "%s: no blank line after the header\n", path);
      return 0;
    }
    *nl = '\0';
    if (line[0] == '\0') {
      c->content = nl + 1;
      break;
    }
    char *colon = strchr(line, ':');
    if (!colon) {
      fprintf(stderr, "%s: header line '%s' is not 'key: value'\n", path, line);
      return 0;
    }
    *colon = '\0';
    const char *val = colon + 1;
    while (*val == ' ')
      val++;
    if (strcmp(line, "expect") == 0)
      snprintf(c->expect, sizeof c->expect, "%s", val);
    else if (strcmp(line, "defects") == 0)
      snprintf(c->defects, sizeof c->defects, "%s", val);
    else if (strcmp(line, "blocks") == 0)
      snprintf(c->blocks, sizeof c->blocks, "%s", val);
    else if (strcmp(line, "why") == 0)
      snprintf(c->why, sizeof c->why, "%s", val);
    else if (strcmp(line, "repair") == 0)
      c->repair = atoi(val);
    else if (strcmp(line, "cap") == 0)
      c->cap = atoi(val);
    else if (strcmp(line, "configs") == 0)
      c->configs = atoi(val);
    else if (strcmp(line, "keep") == 0)
      c->keep = atoi(val);
    else if (strcmp(line, "from") == 0) {
      char *end = (char *)val;
      for (int i = 0; i < MAXCAP && *end; i++) {
        c->from[i] = (int)strtol(end, &end, 10) - 1;
        end += strspn(end, ", ");
      }
    } else {
      fprintf(stderr, "%s: unknown header key '%s'\n", path, line);
      return 0;
    }
    line = nl + 1;
  }
  if (!c->expect[0] || !c->defects[0]) {
    fprintf(stderr, "%s: the header needs 'expect:' and 'defects:'\n", path);
    return 0;
  }
  if (c->cap < 0 || c->cap > MAXCAP) {
    fprintf(stderr, "%s: cap %d outside 0..%d\n", path, c->cap, MAXCAP);
    return 0;
  }
  return 1;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, len = 0, got;
  char *s = malloc(cap + 1);
  while (s && (got = fread(s + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      char *bigger = realloc(s, 2 * cap + 1);
      if (!bigger) {
        free(s);
        s = NULL;
        break;
      }
      s = bigger;
      cap *= 2;
    }
  }
  fclose(f);
  if (s)
    s[len] = '\0';
  return s;
}

/* Runs one case file under a few solver seeds; 1 when it passes, else 0
 * with the reasons on stderr. */
static int run_case(const heron_space *sp, const char *path) {
  char *text = slurp(path);
  if (!text) {
    fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
    return 0;
  }
  reply_case c;
  int ok = read_case(text, path, &c);
  long want_defects = ok ? parse_defects(c.defects) : -1;
  int want = ok ? parse_outcome(c.expect) : -1;
  if (ok && (want_defects < 0 || want < 0)) {
    fprintf(stderr, "%s: bad expect '%s' or defects '%s'\n", path, c.expect,
            c.defects);
    ok = 0;
  }
  int nv = heron_space_nvars(sp);
  for (uint64_t seed = 1; ok && seed <= 4; seed++) {
    heron_rng rng;
    heron_rng_seed(&rng, seed);
    int64_t out[MAXCAP * 64], cfgw[64];
    llm_verdict blocks[MAXCAP], reply;
    int n = -1;
#define FAIL(...)                                                              \
  do {                                                                         \
    fprintf(stderr, "%s (seed %d): ", path, (int)seed);                        \
    fprintf(stderr, __VA_ARGS__);                                              \
    fprintf(stderr, "\n  reply: outcome %d, defects %#x, n %d, why '%s'\n",    \
            reply.outcome, reply.defects, n, reply.why);                       \
    ok = 0;                                                                    \
  } while (0)
    if (llm_reply_parse(sp, &rng, c.content, c.repair, c.cap, out, blocks, &n,
                        &reply) != 0) {
      fprintf(stderr, "%s: parse returned -1\n", path);
      ok = 0;
      break;
    }
    if ((int)reply.outcome != want)
      FAIL("outcome %d, expected %s", reply.outcome, c.expect);
    if ((long)reply.defects != want_defects)
      FAIL("defects %#x, expected %#lx (%s)", reply.defects, want_defects,
           c.defects);
    if (c.configs >= 0 ? n != c.configs
                       : (want == LLM_REJECTED ? n != 0 : n < 1))
      FAIL("%d configs came out, expected %d", n, c.configs);
    if ((want == LLM_VALID) != (reply.why[0] == '\0'))
      FAIL("why '%s' for outcome %s", reply.why, c.expect);
    if (c.why[0]) {
      int found = strstr(reply.why, c.why) != NULL;
      for (int i = 0; i < n; i++)
        found |= strstr(blocks[i].why, c.why) != NULL;
      if (!found)
        FAIL("no why contains '%s'", c.why);
    }
    if (c.blocks[0]) {
      char buf[200];
      snprintf(buf, sizeof buf, "%s", c.blocks);
      char *save = NULL;
      int i = 0;
      for (char *w = strtok_r(buf, ", ", &save); w;
           w = strtok_r(NULL, ", ", &save), i++)
        if (i >= n || (int)blocks[i].outcome != parse_outcome(w))
          FAIL("block %d: outcome %d, expected %s", i,
               i < n ? (int)blocks[i].outcome : -1, w);
      if (i != n)
        FAIL("%d block outcomes listed for %d configs", i, n);
    }
    for (int i = 0; i < n; i++) {
      const int64_t *cfg = out + i * nv;
      if (!config_ok(sp, cfg))
        FAIL("config %d is not valid", i);
      if (blocks[i].outcome == LLM_REJECTED)
        FAIL("config %d comes from a rejected block", i);
      if (blocks[i].outcome != LLM_VALID && !c.keep)
        continue;
      if (!written(sp, c.content, c.from[i], cfgw)) {
        FAIL("config %d has no block %d in the text to compare with", i,
             c.from[i] + 1);
        continue;
      }
      for (int k = 0; k < heron_space_nknobs(sp); k++) {
        int v = heron_space_knob(sp, k);
        if (blocks[i].outcome == LLM_VALID && cfgw[v] == HERON_UNSET)
          FAIL("config %d is valid but knob %s was not written legally", i,
               heron_space_var_name(sp, v));
        else if (cfgw[v] != HERON_UNSET && cfg[v] != cfgw[v])
          FAIL("config %d: %s = %" PRId64 ", but %" PRId64 " was written", i,
               heron_space_var_name(sp, v), cfg[v], cfgw[v]);
      }
    }
#undef FAIL
  }
  free(text);
  return ok;
}

TEST(cases) {
  heron_task *t = make_task();
  CHECK(t != NULL);
  const heron_space *sp = heron_task_space(t);
  const char *one = getenv("LLM_REPLY_CASE");
  if (one && one[0]) {
    int ok = run_case(sp, one);
    heron_task_free(t);
    CHECK_MSG(ok, "case %s", one);
    return;
  }
  /* No case named: every case of the folder, so this test alone covers
   * them all. */
  const char *dir = HERON_SOURCE_DIR "/tests/strategies/llm/replies";
  DIR *d = opendir(dir);
  CHECK_MSG(d != NULL, "cannot open %s", dir);
  int ran = 0, failed = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".case") != 0)
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    ran++;
    failed += !run_case(sp, path);
  }
  closedir(d);
  heron_task_free(t);
  CHECK_MSG(ran >= 20, "only %d cases in %s", ran, dir);
  CHECK_MSG(failed == 0, "%d of %d cases failed", failed, ran);
}
