/* tests/space/test_expr.c - the restriction language of T1 files
 * (core/space/expr.h): the shipped T1 files' restrictions, Python itself
 * as the oracle of the semantics, refused texts with their columns, and
 * evaluation errors. */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "core/space/expr.h"
#include "core/util/util.h"
#include "test.h"

#define DATA_DIR HERON_SOURCE_DIR "/tests/space/data"

static const char *const abc[] = {"a", "b", "c", "s"};

/* Parses text over abc, aborting the test run on failure (a helper for
 * texts that must parse; refusals are checked with heron__expr_parse). */
static heron__expr *must_parse(const char *text) {
  heron__expr *e = NULL;
  heron_error err;
  heron_error_clear(&err);
  if (heron__expr_parse(text, abc, 4, &e, &err) != HERON_OK) {
    fprintf(stderr, "cannot parse %s: %s\n", text, err.text);
    abort();
  }
  return e;
}

static heron__value ival(int64_t i) {
  heron__value v = {.kind = HERON__VAL_INT, .i = i};
  return v;
}

/* Evaluates text with a, b, c = the given integers and s = "ab".  A
 * string result points into the expression: the caller frees *e after
 * reading it (e NULL: freed here). */
static int eval3(const char *text, int64_t a, int64_t b, int64_t c,
                 heron__value *out, heron_error *err, heron__expr **e) {
  heron__value vals[4] = {
      ival(a), ival(b), ival(c), {.kind = HERON__VAL_STR, .s = "ab"}};
  heron__expr *x = must_parse(text);
  int rc = heron__expr_eval(x, vals, out, err);
  if (e)
    *e = x;
  else
    heron__expr_free(x);
  return rc;
}

/* ---- The shipped T1 files ----------------------------------------------- */

typedef struct t1 {
  json_t *root;
  int np;
  const char *names[16];
  int64_t vals[16][32];
  int nvals[16];
  int nconds;
  const char *conds[8];
} t1;

/* Loads a T1 file: the parameters' names and integer values (the "Values"
 * member is a string holding a JSON list) and the restrictions. */
static int t1_load(const char *path, t1 *t) {
  json_error_t jerr;
  memset(t, 0, sizeof *t);
  t->root = json_load_file(path, 0, &jerr);
  if (!t->root) {
    fprintf(stderr, "%s: %s\n", path, jerr.text);
    return -1;
  }
  json_t *cs = json_object_get(t->root, "ConfigurationSpace");
  json_t *params = json_object_get(cs, "TuningParameters");
  json_t *conds = json_object_get(cs, "Conditions");
  size_t i;
  json_t *x;
  json_array_foreach(params, i, x) {
    t->names[i] = json_string_value(json_object_get(x, "Name"));
    json_t *list =
        json_loads(json_string_value(json_object_get(x, "Values")), 0, &jerr);
    size_t k;
    json_t *y;
    json_array_foreach(list, k, y) t->vals[i][k] = json_integer_value(y);
    t->nvals[i] = (int)json_array_size(list);
    json_decref(list);
  }
  t->np = (int)json_array_size(params);
  json_array_foreach(conds, i, x) {
    t->conds[i] = json_string_value(json_object_get(x, "Expression"));
  }
  t->nconds = (int)json_array_size(conds);
  return 0;
}

static int t1_index(const t1 *t, const char *name) {
  for (int k = 0; k < t->np; k++)
    if (strcmp(t->names[k], name) == 0)
      return k;
  return -1;
}

/* The restrictions of both files written in C, by hand, from the text. */
static int conv_ref(int k, const int64_t *v, const t1 *t) {
  int64_t bx = v[t1_index(t, "block_size_x")];
  int64_t by = v[t1_index(t, "block_size_y")];
  int64_t tx = v[t1_index(t, "tile_size_x")];
  int64_t ty = v[t1_index(t, "tile_size_y")];
  int64_t pad = v[t1_index(t, "use_padding")];
  int64_t shm = v[t1_index(t, "use_shmem")];
  int64_t fw = v[t1_index(t, "filter_width")];
  int64_t fh = v[t1_index(t, "filter_height")];
  switch (k) {
  case 0:
    return pad == 0 || bx % 32 != 0;
  case 1:
    return bx * by <= 1024;
  case 2:
    return pad == 0 || shm != 0;
  default:
    return shm == 0 || (bx * tx + (fw - 1)) * (by * ty + (fh - 1)) < 12 * 1024;
  }
}

static int dedisp_ref(int k, const int64_t *v, const t1 *t) {
  int64_t bx = v[t1_index(t, "block_size_x")];
  int64_t by = v[t1_index(t, "block_size_y")];
  switch (k) {
  case 0:
    return 32 <= bx * by && bx * by <= 1024;
  case 1:
    return v[t1_index(t, "tile_size_x")] > 1 ||
           v[t1_index(t, "tile_stride_x")] == 0;
  default:
    return v[t1_index(t, "tile_size_y")] > 1 ||
           v[t1_index(t, "tile_stride_y")] == 0;
  }
}

/* Every configuration of the file's parameters: each restriction agrees
 * with its hand translation, and the configurations satisfying all of
 * them number `valid` (the size of the hub's brute-forced T4 file). */
static void check_t1(const char *file,
                     int (*ref)(int, const int64_t *, const t1 *), int nconds,
                     long valid) {
  t1 t;
  CHECK(t1_load(file, &t) == 0);
  CHECK_EQ(t.nconds, nconds);
  heron__expr *e[8] = {0};
  heron_error err;
  heron_error_clear(&err);
  for (int k = 0; k < t.nconds; k++) {
    CHECK_OK(heron__expr_parse(t.conds[k], t.names, t.np, &e[k], &err), &err);
    /* Every parameter the file lists is used (the list may omit some the
     * expression uses: convolution's fourth condition omits the filter
     * sizes, so the parser's list is the one to trust). */
    const int *idx;
    int n;
    heron__expr_names(e[k], &idx, &n);
    json_t *cs = json_object_get(t.root, "ConfigurationSpace");
    json_t *listed = json_object_get(
        json_array_get(json_object_get(cs, "Conditions"), (size_t)k),
        "Parameters");
    size_t i;
    json_t *x;
    json_array_foreach(listed, i, x) {
      int want = t1_index(&t, json_string_value(x)), found = 0;
      for (int j = 0; j < n; j++)
        found |= idx[j] == want;
      CHECK_MSG(found, "%s: %s not among the names used", t.conds[k],
                json_string_value(x));
    }
    for (int j = 1; j < n; j++)
      CHECK(idx[j - 1] < idx[j]);
  }
  int at[16] = {0};
  long total = 0, ok_all = 0;
  for (;;) {
    int64_t v[16];
    heron__value hv[16];
    for (int p = 0; p < t.np; p++) {
      v[p] = t.vals[p][at[p]];
      hv[p] = ival(v[p]);
    }
    int all = 1;
    for (int k = 0; k < t.nconds; k++) {
      heron__value out;
      CHECK_OK(heron__expr_eval(e[k], hv, &out, &err), &err);
      CHECK_EQ(out.kind, HERON__VAL_INT);
      CHECK_MSG(out.i == ref(k, v, &t), "%s gave %lld", t.conds[k],
                (long long)out.i);
      CHECK_EQ(heron__expr_holds(e[k], hv), ref(k, v, &t));
      all &= (int)out.i;
    }
    total++;
    ok_all += all;
    int p = 0;
    while (p < t.np && ++at[p] == t.nvals[p])
      at[p++] = 0;
    if (p == t.np)
      break;
  }
  printf("%s: %ld configurations, %ld valid\n", file, total, ok_all);
  CHECK_EQ(ok_all, valid);
  for (int k = 0; k < t.nconds; k++)
    heron__expr_free(e[k]);
  json_decref(t.root);
}

TEST(convolution_t1_restrictions_evaluate_as_their_python_text) {
  check_t1(DATA_DIR "/convolution_T1.json", conv_ref, 4, 4362);
}

TEST(dedispersion_t1_restrictions_evaluate_as_their_python_text) {
  check_t1(DATA_DIR "/dedispersion_T1.json", dedisp_ref, 3, 11130);
}

/* ---- Python as the oracle ---------------------------------------------- */

/* Texts where Python's semantics are easy to get wrong. */
static const char *const tricky[] = {"1 < 2 < 3",
                                     "1 < 3 < 2",
                                     "3 > 2 == 2",
                                     "a < b < c",
                                     "a <= a < a + 1",
                                     "1 == 1.0",
                                     "1 != 1.0",
                                     "0 < 0.5 < 1",
                                     "1 > 2 > 1/0",
                                     "a < b > c",
                                     "7 // 2",
                                     "-7 // 2",
                                     "7 // -2",
                                     "-7 // -2",
                                     "7 % 3",
                                     "-7 % 3",
                                     "7 % -3",
                                     "-7 % -3",
                                     "7.5 // 2",
                                     "-7.5 // 2",
                                     "7.5 % -2",
                                     "-7.5 % 2",
                                     "0.0 % -1",
                                     "-0.0 // 1",
                                     "5 // 0.5",
                                     "1 // 0.3",
                                     "-1 % 0.3",
                                     "a // 3",
                                     "a % -3",
                                     "-2**2",
                                     "2**-1",
                                     "(-2)**2",
                                     "2**3**2",
                                     "(-2)**3",
                                     "2**0",
                                     "0**0",
                                     "(-2)**-1",
                                     "4**0.5",
                                     "(-8)**(1/3)",
                                     "2.0**-2",
                                     "-2**-2",
                                     "2**62",
                                     "2**63",
                                     "(-2)**63",
                                     "-(2**62)",
                                     "0**-1",
                                     "0.0**-1",
                                     "10**18*10",
                                     "a**2",
                                     "2**a",
                                     "7/2",
                                     "-7/2",
                                     "1/3",
                                     "6/3",
                                     "2**62/3",
                                     "9007199254740993/1",
                                     "True + 1",
                                     "True * 3",
                                     "False - True",
                                     "True / 2",
                                     "not 0",
                                     "not 3",
                                     "not 0 or 3",
                                     "not (0 or 3)",
                                     "0 or 5",
                                     "3 and 0",
                                     "0 and 1/0",
                                     "1 or 1/0",
                                     "'' or 'x'",
                                     "'a' and 'b'",
                                     "0 or 0.0",
                                     "0.0 or ''",
                                     "a and b or c",
                                     "a or b and c",
                                     "not a == b",
                                     "not a in [1, 2]",
                                     "'a' in ['a', 'b']",
                                     "'c' in ('a', 'b')",
                                     "'c' not in ['a']",
                                     "1 in [1.0, 2]",
                                     "a in [1, 2, 3]",
                                     "a not in (a,)",
                                     "a in ()",
                                     "a in []",
                                     "1 in [2, 1/0]",
                                     "1 < a in [1, 2]",
                                     "s in ['ab', 'cd']",
                                     "s == 'ab'",
                                     "s != 1",
                                     "s < 'b'",
                                     "'abc' < 'abd' <= 'abd'",
                                     "'b' > 'abc'",
                                     "s == s",
                                     "1 == 'a'",
                                     "min(a, b)",
                                     "max(a, b, c)",
                                     "min(1, 1.0)",
                                     "max(1.0, 1)",
                                     "min(-0.0, 0)",
                                     "max('a', 'b')",
                                     "abs(-3)",
                                     "abs(-2.5)",
                                     "abs(True)",
                                     "int(-3.7)",
                                     "int(3.7)",
                                     "int(True)",
                                     "int(-0.5)",
                                     "float(3)",
                                     "float(-1) / 3",
                                     "int('42')",
                                     "int(' -7 ')",
                                     "float('1.5')",
                                     "float('-inf') < 0",
                                     "int(2.0**62)",
                                     "int(2.0**63)",
                                     "abs((-2)**63)",
                                     "min(1, 'a')",
                                     "min(a, b, 1/0)",
                                     "1/0",
                                     "1//0",
                                     "1%0",
                                     "1.0/0",
                                     "1.0//0.0",
                                     "1%0.0",
                                     "'a' + 1",
                                     "-'a'",
                                     "'a' < 1",
                                     "(2**62) * 2",
                                     "(-2)**63 // -1",
                                     "(-2)**63 % -1",
                                     "-((-2)**63)",
                                     "a*b - c//(a or 1) + c % (b or 7)",
                                     "(a + b) * (c - a) ** 2 // 3",
                                     "0x1F + 0o17 + 0b101",
                                     "1_000 * 2",
                                     "1e3 / 4",
                                     ".5 + 1.",
                                     "3.0 == 3",
                                     "2**53 + 1 == 2.0**53",
                                     "9007199254740993 == 9007199254740992.0",
                                     "9007199254740993 > 9007199254740992.0",
                                     "1e20 > 9223372036854775807",
                                     "-1e20 < -9223372036854775807 - 1",
                                     "0.1 + 0.2",
                                     "1e308 * 10",
                                     "-1e308 * 10 < 0",
                                     "3 * 0.1",
                                     "(1 < 2) + (2 < 1)",
                                     "(a > b) * 10",
                                     "-a",
                                     "+a",
                                     "- - a",
                                     "not not a",
                                     "abs(a - b) <= 1",
                                     "32 <= a * b <= 1024",
                                     "a % 32 != 0 or b == 0",
                                     "\"x\" == 'x'",
                                     "'it\\'s' == \"it's\""};

#define NTRICKY ((int)(sizeof tricky / sizeof *tricky))

typedef struct rng {
  uint64_t s;
} rng;

static uint64_t next(rng *r) {
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return r->s;
}

static int pick(rng *r, int n) { return (int)(next(r) % (uint64_t)n); }

/* A random expression of the language into b, at most `depth` deep.
 * Operands are parenthesized at random, so Python's precedence is tested
 * too; `not` is always parenthesized where Python needs it. */
static void gen(rng *r, int depth, heron__buf *b) {
  static const char *const leaves[] = {"a",    "b",     "c",  "0",   "1",
                                       "2",    "3",     "7",  "0.5", "2.5",
                                       "True", "False", "-1", "100"};
  static const char *const bin[] = {"+",  "-",  "*",  "/", "//", "%",   "<",
                                    "<=", "==", "!=", ">", ">=", "and", "or"};
  int paren = pick(r, 2);
  if (depth == 0 || pick(r, 5) == 0) {
    heron__buf_puts(b, leaves[pick(r, 14)]);
    return;
  }
  if (paren)
    heron__buf_puts(b, "(");
  switch (pick(r, 12)) {
  case 0:
    heron__buf_puts(b, pick(r, 2) ? "-" : "+");
    gen(r, depth - 1, b);
    break;
  case 1:
    heron__buf_puts(b, "(not ");
    gen(r, depth - 1, b);
    heron__buf_puts(b, ")");
    break;
  case 2: /* a small base, a small exponent: no bigints in between */
    heron__buf_puts(b, leaves[pick(r, 14)]);
    heron__buf_printf(b, " ** %d", pick(r, 6) - 2);
    break;
  case 3:
    heron__buf_puts(b, "min(");
    gen(r, depth - 1, b);
    heron__buf_puts(b, ", ");
    gen(r, depth - 1, b);
    heron__buf_puts(b, pick(r, 2) ? ")" : ", a)");
    break;
  case 4: {
    static const char *const fn[] = {"max(", "abs(", "int(", "float("};
    int f = pick(r, 4);
    heron__buf_puts(b, fn[f]);
    gen(r, depth - 1, b);
    heron__buf_puts(b, f == 0 ? ", b)" : ")");
    break;
  }
  case 5: { /* parenthesized: a list compared further is not supported */
    int list = pick(r, 2);
    heron__buf_puts(b, "(");
    gen(r, depth - 1, b);
    heron__buf_puts(b, pick(r, 2) ? " in " : " not in ");
    heron__buf_puts(b, list ? "[" : "(");
    gen(r, depth - 1, b);
    heron__buf_puts(b, ", ");
    gen(r, depth - 1, b);
    heron__buf_puts(b, list ? "])" : ",))");
    break;
  }
  default:
    gen(r, depth - 1, b);
    heron__buf_printf(b, " %s ", bin[pick(r, 14)]);
    gen(r, depth - 1, b);
  }
  if (paren)
    heron__buf_puts(b, ")");
}

/* Our result in words, for a mismatch's message. */
static void show(int rc, const heron__value *v, const heron_error *err,
                 char *buf, size_t cap) {
  if (rc != HERON_OK)
    snprintf(buf, cap, "%s (%s)", heron_err_name(rc), err->text);
  else if (v->kind == HERON__VAL_INT)
    snprintf(buf, cap, "int %lld", (long long)v->i);
  else if (v->kind == HERON__VAL_FLOAT)
    snprintf(buf, cap, "float %.17g", v->f);
  else
    snprintf(buf, cap, "str '%s'", v->s);
}

/* Whether our evaluation agrees with Python's result line: the same
 * value of the same type, or an error on both sides (and a division by
 * zero on ours exactly when Python's is a ZeroDivisionError). */
static int agrees(int rc, const heron__value *v, const heron_error *err,
                  json_t *py) {
  const char *t = json_string_value(json_object_get(py, "t"));
  json_t *pv = json_object_get(py, "v");
  if (!t)
    return 0;
  if (strcmp(t, "error") == 0) {
    int zero = strcmp(json_string_value(pv), "ZeroDivisionError") == 0;
    return rc == HERON_EINVAL && zero == (strstr(err->text, "zero") != NULL);
  }
  if (rc != HERON_OK)
    return 0;
  if (strcmp(t, "int") == 0)
    return v->kind == HERON__VAL_INT && v->i == json_integer_value(pv);
  if (strcmp(t, "str") == 0)
    return v->kind == HERON__VAL_STR &&
           strcmp(v->s, json_string_value(pv)) == 0;
  double f = strtod(json_string_value(pv), NULL);
  if (v->kind != HERON__VAL_FLOAT)
    return 0;
  return (isnan(f) && isnan(v->f)) || memcmp(&f, &v->f, sizeof f) == 0;
}

typedef struct ocase {
  char *text;
  int64_t a, b, c;
} ocase;

/* Integers for a, b, c: small mostly, now and then large enough to
 * overflow a product. */
static int64_t random_int(rng *r) {
  static const int64_t big[] = {
      INT64_MAX,  INT64_MIN,  (int64_t)1 << 32, -((int64_t)1 << 40),
      3037000499, 3037000500, 1000000007};
  if (pick(r, 12) == 0)
    return big[pick(r, 7)];
  return pick(r, 11) - 5;
}

/* Runs the oracle on cases[0..n): 0 when every case agrees. */
static int run_oracle(const ocase *cases, int n) {
  char dir[] = "/tmp/heron_expr_oracle_XXXXXX";
  if (!mkdtemp(dir))
    return -1;
  char in[96], out[96], cmd[512];
  snprintf(in, sizeof in, "%s/cases.jsonl", dir);
  snprintf(out, sizeof out, "%s/results.jsonl", dir);
  FILE *f = fopen(in, "w");
  if (!f)
    return -1;
  for (int k = 0; k < n; k++) {
    json_t *j =
        json_pack("{s:s, s:{s:I, s:I, s:I, s:s}}", "e", cases[k].text, "v", "a",
                  (json_int_t)cases[k].a, "b", (json_int_t)cases[k].b, "c",
                  (json_int_t)cases[k].c, "s", "ab");
    char *line = json_dumps(j, JSON_COMPACT);
    fprintf(f, "%s\n", line);
    free(line);
    json_decref(j);
  }
  fclose(f);
  snprintf(cmd, sizeof cmd, "python3 '%s/tests/space/expr_oracle.py' '%s' '%s'",
           HERON_SOURCE_DIR, in, out);
  int bad = system(cmd) != 0;
  f = bad ? NULL : fopen(out, "r");
  char *line = NULL;
  size_t cap = 0;
  for (int k = 0; f && k < n; k++) {
    if (getline(&line, &cap, f) < 0) {
      fprintf(stderr, "the oracle answered %d of %d cases\n", k, n);
      bad++;
      break;
    }
    json_t *py = json_loads(line, 0, NULL);
    heron_error err;
    heron_error_clear(&err);
    heron__value v = {0};
    heron__expr *e;
    int rc =
        eval3(cases[k].text, cases[k].a, cases[k].b, cases[k].c, &v, &err, &e);
    if (!agrees(rc, &v, &err, py)) {
      char ours[256];
      show(rc, &v, &err, ours, sizeof ours);
      if (bad++ < 20)
        fprintf(stderr, "%s with a=%lld b=%lld c=%lld: ours %s, Python %s",
                cases[k].text, (long long)cases[k].a, (long long)cases[k].b,
                (long long)cases[k].c, ours, line);
    }
    json_decref(py);
    heron__expr_free(e);
  }
  free(line);
  if (f)
    fclose(f);
  unlink(in);
  unlink(out);
  rmdir(dir);
  return bad;
}

TEST(python_agrees_on_values_types_and_errors) {
  if (system("python3 -c '' >/dev/null 2>&1") != 0)
    SKIP("python3 is missing: the oracle cannot run");
  static const int64_t sets[][3] = {
      {0, 0, 0}, {1, 2, 3}, {-3, 2, -1}, {5, -5, 0}, {2, 2, 7}};
  int nrandom = HERON_TEST_SANITIZED ? 2000 : 6000;
  int n = 0, cap = NTRICKY * 5 + nrandom;
  ocase *cases = calloc((size_t)cap, sizeof *cases);
  CHECK(cases != NULL);
  for (int k = 0; k < NTRICKY; k++)
    for (int j = 0; j < 5; j++) {
      cases[n].text = strdup(tricky[k]);
      cases[n].a = sets[j][0];
      cases[n].b = sets[j][1];
      cases[n++].c = sets[j][2];
    }
  rng r = {0x9e3779b97f4a7c15u};
  for (int k = 0; k < nrandom; k++) {
    heron__buf b = {0};
    gen(&r, 1 + pick(&r, 4), &b);
    cases[n].text = heron__buf_take(&b);
    cases[n].a = random_int(&r);
    cases[n].b = random_int(&r);
    cases[n++].c = random_int(&r);
  }
  int bad = run_oracle(cases, n);
  for (int k = 0; k < n; k++)
    free(cases[k].text);
  free(cases);
  printf("%d cases (%d tricky texts, %d random) against Python\n", n, NTRICKY,
         nrandom);
  CHECK_MSG(bad == 0, "%d cases disagree with Python", bad);
}

/* ---- Refused texts ------------------------------------------------------- */

/* Parses text over abc expecting HERON_EPARSE whose message starts with
 * "column <col>: " and contains `says`. */
static int refused(const char *text, int col, const char *says) {
  heron__expr *e = (heron__expr *)1;
  heron_error err;
  heron_error_clear(&err);
  int rc = heron__expr_parse(text, abc, 4, &e, &err);
  char want[32];
  snprintf(want, sizeof want, "column %d: ", col);
  if (rc == HERON_EPARSE && e == NULL &&
      strncmp(err.text, want, strlen(want)) == 0 && strstr(err.text, says))
    return 1;
  fprintf(stderr, "%s: got %s \"%s\", wanted \"%s...%s\"\n", text,
          heron_err_name(rc), err.text, want, says);
  if (rc == HERON_OK)
    heron__expr_free(e);
  return 0;
}

TEST(texts_outside_the_language_are_refused_naming_the_column) {
  CHECK(
      refused("a.b", 2, "unexpected '.' (attribute access is not supported)"));
  CHECK(refused("a + (b).c > 1", 8, "attribute access"));
  CHECK(refused("a[0]", 2, "unexpected '[' (subscripts are not supported)"));
  CHECK(refused("lambda: 1", 1, "lambda is not supported"));
  CHECK(refused("a = 1", 3, "assignment is not supported"));
  CHECK(refused("(a := 1)", 4, "assignment is not supported"));
  CHECK(refused("a +", 4, "expected an operand, found end of text"));
  CHECK(
      refused("(a", 3, "expected ')' to close the '(' at column 1, found end"));
  CHECK(refused("len(a)", 1, "unknown function 'len'; known: min, max"));
  CHECK(refused("a + blok_size_x", 5,
                "unknown name 'blok_size_x'; known: a, b, c, s"));
  CHECK(refused("a == 'abc", 6, "unterminated string"));
  CHECK(refused("a + $", 5, "unexpected character '$'"));
  CHECK(refused("", 1, "empty expression"));
  CHECK(refused("  \t ", 1, "empty expression"));
  CHECK(refused("a b", 3, "unexpected name 'b' (a missing operator?)"));
  CHECK(refused("(a, b)", 3, "tuples are only supported after 'in'"));
  CHECK(refused("a in (b)", 6, "(x) is not a tuple"));
  CHECK(refused("a in b", 6, "'in' needs a list"));
  CHECK(refused("[1, 2]", 1, "lists are only supported after 'in'"));
  CHECK(refused("a in [1] == 1", 10, "a list can only be compared"));
  CHECK(refused("a if b else c", 3, "conditional expressions"));
  CHECK(refused("a is b", 3, "'is' is not supported"));
  CHECK(refused("a & b", 3, "bitwise operators"));
  CHECK(refused("a == not b", 6, "expected an operand, found keyword 'not'"));
  CHECK(refused("min(a)", 1, "min() needs at least 2 arguments"));
  CHECK(refused("abs(a, b)", 1, "abs() takes exactly 1 argument"));
  CHECK(refused("min(a, key=b)", 8, "keyword arguments"));
  CHECK(refused("a(1)", 1, "'a' is a parameter, not a function"));
  CHECK(
      refused("(a)(1)", 4, "only min, max, abs, int and float can be called"));
  CHECK(refused("min(a, b", 9,
                "expected ',' or ')' to close the '(' at column 4"));
  CHECK(refused("a in [1, 2", 11, "to close the '[' at column 6"));
  CHECK(refused("1j", 1, "complex numbers"));
  CHECK(refused("a + 09", 5, "leading zeros"));
  CHECK(refused("99999999999999999999", 1, "beyond int64"));
  CHECK(refused("f'x' == a", 1, "string prefix 'f'"));
  CHECK(refused("None", 1, "None is not supported"));
  CHECK(refused("[x for x in a]", 1, "lists are only supported after 'in'"));
  CHECK(refused("a; b", 2, "only one expression"));
  /* Columns count characters, not bytes: é is two bytes. */
  CHECK(refused("'é' == $", 8, "unexpected character '$'"));
  CHECK(refused("a + é", 5, "unexpected character 'é'"));
}

TEST(nesting_beyond_200_levels_is_refused_but_long_flat_chains_parse) {
  heron__buf b = {0};
  /* 199 parentheses parse; 200 do not, refused where the 201st level
   * starts. */
  for (int depth = 199; depth <= 201; depth++) {
    b.len = 0;
    for (int k = 0; k < depth; k++)
      heron__buf_puts(&b, "(");
    heron__buf_puts(&b, "a");
    for (int k = 0; k < depth; k++)
      heron__buf_puts(&b, ")");
    heron__expr *e = NULL;
    heron_error err;
    heron_error_clear(&err);
    int rc = heron__expr_parse(b.data, abc, 4, &e, &err);
    if (depth == 199) {
      CHECK_OK(rc, &err);
      heron__value v, vals[4] = {ival(7), ival(0), ival(0), ival(0)};
      CHECK_OK(heron__expr_eval(e, vals, &v, &err), &err);
      CHECK_EQ(v.i, 7);
      heron__expr_free(e);
    } else {
      CHECK_EQ(rc, HERON_EPARSE);
      CHECK_STR_CONTAINS(err.text, "column 201: expression nested too deeply");
    }
  }
  /* Unary chains and ** towers count too (each would recurse). */
  static const char *const unit[] = {"-", "not ", "2**", "+", "min(1, "};
  for (int u = 0; u < 5; u++) {
    b.len = 0;
    for (int k = 0; k < 100000; k++)
      heron__buf_puts(&b, unit[u]);
    heron__buf_puts(&b, "1");
    heron__expr *e = NULL;
    heron_error err;
    heron_error_clear(&err);
    CHECK_EQ(heron__expr_parse(b.data, abc, 4, &e, &err), HERON_EPARSE);
    CHECK_STR_CONTAINS(err.text, "nested too deeply");
  }
  /* A flat chain of 100000 terms is one node: no depth, and it sums. */
  b.len = 0;
  heron__buf_puts(&b, "a");
  for (int k = 0; k < 100000; k++)
    heron__buf_puts(&b, k % 2 ? " + a" : " - 1");
  heron__buf_puts(&b, " and 1 < 2 < 3 < a");
  heron__expr *e = must_parse(b.data);
  heron__value v, vals[4] = {ival(2), ival(0), ival(0), ival(0)};
  heron_error err;
  heron_error_clear(&err);
  CHECK_OK(heron__expr_eval(e, vals, &v, &err), &err);
  CHECK_EQ(v.i, 0); /* 3 < 2 is false */
  vals[0] = ival(5);
  CHECK_OK(heron__expr_eval(e, vals, &v, &err), &err);
  CHECK_EQ(v.i, 1);
  heron__expr_free(e);
  heron__buf_free(&b);
}

/* ---- Evaluation errors --------------------------------------------------- */

/* Evaluates text (a=2**32, b=0, c=-1) expecting HERON_EINVAL whose message
 * starts with "column <col>: " and contains `says`. */
static int eval_refused(const char *text, int col, const char *says) {
  heron__value v;
  heron_error err;
  heron_error_clear(&err);
  int rc = eval3(text, (int64_t)1 << 32, 0, -1, &v, &err, NULL);
  char want[32];
  snprintf(want, sizeof want, "column %d: ", col);
  if (rc == HERON_EINVAL && strncmp(err.text, want, strlen(want)) == 0 &&
      strstr(err.text, says))
    return 1;
  fprintf(stderr, "%s: got %s \"%s\", wanted \"%s...%s\"\n", text,
          heron_err_name(rc), err.text, want, says);
  return 0;
}

TEST(evaluation_errors_are_einval_naming_the_operator) {
  CHECK(eval_refused("1/0", 2, "division by zero"));
  CHECK(eval_refused("1 + 1//b", 6, "integer division by zero"));
  CHECK(eval_refused("1%0", 2, "modulo by zero"));
  CHECK(eval_refused("1.5 % 0", 5, "float modulo by zero"));
  CHECK(eval_refused("2**63", 2, "integer overflow in '**'"));
  CHECK(eval_refused("a * a", 3, "integer overflow in '*'"));
  CHECK(eval_refused("c * a * a + 1", 7, "integer overflow in '*'"));
  /* Joining or repeating strings would allocate: not in the language. */
  CHECK(eval_refused("'a' * 2", 5, "'*' between str and int"));
  CHECK(eval_refused("c - 9223372036854775807 - 1 - 1", 25, "overflow in '-'"));
  CHECK(eval_refused("abs(-9223372036854775807 - 1)", 1, "overflow in abs()"));
  CHECK(eval_refused("-(-9223372036854775807 - 1)", 1, "overflow in unary -"));
  CHECK(eval_refused("(-9223372036854775807 - 1) // c", 28, "overflow"));
  CHECK(eval_refused("'a' + 1", 5, "'+' between str and int is not supported"));
  CHECK(eval_refused("s + 'x'", 3, "strings are not joined"));
  CHECK(eval_refused("s < 1", 3, "'<' between str and int"));
  CHECK(eval_refused("0**-1", 2, "zero to a negative power"));
  CHECK(eval_refused("c ** 0.5", 3, "complex"));
  CHECK(eval_refused("10.0 ** 400", 6, "float overflow"));
  CHECK(eval_refused("int(2.0 ** 70)", 1, "beyond int64"));
  CHECK(eval_refused("int('x1')", 1, "is not an int64"));
  CHECK(eval_refused("max(1, s)", 1, "max() between int and str"));
  /* What short-circuits never runs, as in Python. */
  heron__value v;
  heron_error err;
  heron_error_clear(&err);
  CHECK_OK(eval3("b and 1/b", 1, 0, 0, &v, &err, NULL), &err);
  CHECK_EQ(v.i, 0);
  CHECK_OK(eval3("b > 1 > 1/b", 1, 0, 0, &v, &err, NULL), &err);
  CHECK_EQ(v.i, 0);
  /* A restriction that errs does not hold. */
  heron__expr *e = must_parse("1/b > 0");
  heron__value vals[4] = {ival(0), ival(0), ival(0), ival(0)};
  CHECK_EQ(heron__expr_holds(e, vals), 0);
  vals[1] = ival(2);
  CHECK_EQ(heron__expr_holds(e, vals), 1);
  heron__expr_free(e);
}

/* ---- Names, strings, threads --------------------------------------------- */

TEST(names_are_the_used_indices_once_ascending) {
  static const char *const names[] = {"x", "unused", "y", "z"};
  heron__expr *e = NULL;
  heron_error err;
  heron_error_clear(&err);
  CHECK_OK(heron__expr_parse("z + x * x < y or z", names, 4, &e, &err), &err);
  const int *idx;
  int n;
  heron__expr_names(e, &idx, &n);
  CHECK_EQ(n, 3);
  CHECK_EQ(idx[0], 0);
  CHECK_EQ(idx[1], 2);
  CHECK_EQ(idx[2], 3);
  heron__expr_free(e);
  CHECK_OK(heron__expr_parse("1 < 2", names, 4, &e, &err), &err);
  heron__expr_names(e, &idx, &n);
  CHECK_EQ(n, 0);
  heron__expr_free(e);
  /* No names at all: every name is unknown, and the message says so. */
  CHECK_EQ(heron__expr_parse("q", NULL, 0, &e, &err), HERON_EPARSE);
  CHECK(e == NULL);
  CHECK_STR_CONTAINS(err.text, "column 1: unknown name 'q'; known: none");
  heron__expr_free(NULL);
}

TEST(strings_come_from_literals_and_the_caller) {
  static const char *const names[] = {"layout", "n"};
  heron__expr *e = NULL;
  heron_error err;
  heron_error_clear(&err);
  CHECK_OK(heron__expr_parse("layout in ['row', \"col\\n\"] and n or layout",
                             names, 2, &e, &err),
           &err);
  char mine[8] = "col\n";
  heron__value vals[2] = {{.kind = HERON__VAL_STR, .s = mine}, ival(3)};
  heron__value v;
  CHECK_OK(heron__expr_eval(e, vals, &v, &err), &err);
  CHECK_EQ(v.kind, HERON__VAL_INT);
  CHECK_EQ(v.i, 3);
  strcpy(mine, "tile");
  CHECK_OK(heron__expr_eval(e, vals, &v, &err), &err);
  CHECK_EQ(v.kind, HERON__VAL_STR);
  CHECK(v.s == mine); /* `or` returns the operand itself */
  heron__expr_free(e);
  CHECK_OK(heron__expr_parse("min('b', 'abc', 'ab')", names, 2, &e, &err),
           &err);
  CHECK_OK(heron__expr_eval(e, vals, &v, &err), &err);
  CHECK(v.kind == HERON__VAL_STR && strcmp(v.s, "ab") == 0);
  heron__expr_free(e);
}

typedef struct worker {
  const heron__expr *e;
  long wrong;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (int64_t bx = 16; bx <= 256; bx += 16)
    for (int64_t by = 1; by <= 16; by++)
      for (int64_t t = 1; t <= 4; t++)
        for (int rep = 0; rep < 20; rep++) {
          heron__value vals[4] = {ival(bx), ival(by), ival(t), ival(0)};
          int want = (bx * t + 14) * (by * t + 14) < 12 * 1024;
          w->wrong += heron__expr_holds(w->e, vals) != want;
        }
  return NULL;
}

TEST(one_expression_evaluates_in_many_threads_at_once) {
  heron__expr *e = must_parse("((a*c+(15-1)))*((b*c+(15-1))) < 12*1024");
  pthread_t th[4];
  worker w[4];
  for (int k = 0; k < 4; k++) {
    w[k] = (worker){e, 0};
    CHECK(pthread_create(&th[k], NULL, work, &w[k]) == 0);
  }
  for (int k = 0; k < 4; k++)
    pthread_join(th[k], NULL);
  for (int k = 0; k < 4; k++)
    CHECK_EQ(w[k].wrong, 0);
  /* The solver's cost per test, for the record (not checked). */
  heron__value vals[4] = {ival(64), ival(8), ival(2), ival(0)};
  struct timespec ta, tb;
  long holds = 0, reps = 1000000;
  clock_gettime(CLOCK_MONOTONIC, &ta);
  for (long k = 0; k < reps; k++) {
    vals[0].i = 16 + (k & 15) * 16;
    holds += heron__expr_holds(e, vals);
  }
  clock_gettime(CLOCK_MONOTONIC, &tb);
  double ns = ((double)(tb.tv_sec - ta.tv_sec) * 1e9 +
               (double)(tb.tv_nsec - ta.tv_nsec)) /
              (double)reps;
  printf("heron__expr_holds: %.1f ns per call (%ld held)\n", ns, holds);
  heron__expr_free(e);
}

/* Every prefix of every tricky text, and random one-byte changes of it,
 * either parses (and evaluates without crashing) or is refused with
 * HERON_EPARSE and a column: never a crash, never another code. */
TEST(prefixes_and_mutations_parse_or_are_refused_with_a_column) {
  static const char bytes[] = "()[],.+-*/%<>=!'\"a1 _e\\j$:";
  rng r = {12345};
  char buf[256];
  for (int k = 0; k < NTRICKY; k++) {
    size_t len = strlen(tricky[k]);
    for (size_t cut = 0; cut <= len; cut++)
      for (int m = 0; m < 4; m++) {
        memcpy(buf, tricky[k], cut);
        buf[cut] = '\0';
        if (m > 0 && cut > 0)
          buf[pick(&r, (int)cut)] = bytes[pick(&r, (int)sizeof bytes - 1)];
        heron__expr *e = NULL;
        heron_error err;
        heron_error_clear(&err);
        int rc = heron__expr_parse(buf, abc, 4, &e, &err);
        if (rc == HERON_OK) {
          heron__value v, vals[4] = {ival(1),
                                     ival(-2),
                                     ival(0),
                                     {.kind = HERON__VAL_STR, .s = ""}};
          heron_error_clear(&err);
          rc = heron__expr_eval(e, vals, &v, &err);
          CHECK_MSG(rc == HERON_OK || rc == HERON_EINVAL, "%s: %s", buf,
                    heron_err_name(rc));
          heron__expr_free(e);
        } else {
          CHECK_MSG(rc == HERON_EPARSE && e == NULL &&
                        strncmp(err.text, "column ", 7) == 0,
                    "%s: %s %s", buf, heron_err_name(rc), err.text);
        }
      }
  }
}
