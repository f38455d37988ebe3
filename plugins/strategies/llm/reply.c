/* plugins/strategies/llm/reply.c - the strict parser of a language model's
 * replies (see reply.h for the contract).
 *
 * The grammar, decided here and kept deliberately narrow because the text
 * comes from a model, not from a person who could be asked again:
 *
 *   reply  := ws* (block ws*)*          anything else outside blocks is prose
 *   block  := "##" items "##"           markers pair up left to right, so
 *                                       "####" is one empty block
 *   items  := item (sep item)*          sep is ',' and also ';' or a newline:
 *                                       models like to put one knob per line
 *   item   := ws* name ws* ':' ws* value ws*    or nothing (empty items,
 *                                       e.g. a trailing comma, are skipped)
 *   value  := ['+' | '-'] digit+        fitting int64_t
 *
 * Only ':' separates a name from its value: "name = value" is a syntax
 * error, not a second dialect, because the prompt shows ':' and every
 * accepted variant is one more way for a sloppy reply to pass as exact.
 * Names are matched exactly (case and all) against the space's knob names.
 *
 * Every scan moves forward only (from the last marker found, one pass over
 * each block's items), so the cost is linear in the reply's length plus one
 * solver call per block that is read; blocks beyond `cap` are skipped
 * without being read.
 */
#include "reply.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most bytes of untrusted text quoted in a `why`: enough to recognise,
 * short enough for one log line. */
#define LLM_QUOTE_MAX 40
/* The most bytes of the HTTP body copied into llm_reply_content's why. */
#define LLM_BODY_QUOTE_MAX 80
/* Names longer than this cannot be knobs of any space we build. */
#define LLM_NAME_MAX 128

/* ---- Small text helpers ------------------------------------------------ */

static int llm_is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
         c == '\f';
}

/* Copies at most `max` bytes of s[0..len) into dst[cap] for a log line:
 * trailing blanks go, other blanks become ' ', other control characters and
 * non-ASCII bytes '?' (a newline or a cut UTF-8 sequence would break the
 * line), and "..." marks a cut. */
void llm_quote(char *dst, size_t cap, const char *s, size_t len, size_t max) {
  if (cap == 0)
    return;
  while (len && llm_is_space(s[len - 1]))
    len--;
  size_t n = len < max ? len : max, o = 0;
  for (size_t i = 0; i < n && o + 1 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    dst[o++] = llm_is_space((char)c)     ? ' '
               : (c < 0x20 || c >= 0x7f) ? '?'
                                         : (char)c;
  }
  for (int i = 0; n < len && i < 3 && o + 1 < cap; i++)
    dst[o++] = '.';
  dst[o] = '\0';
}

/* printf into why[cap] unless it already holds a reason: the first defect
 * found is the one reported. */
static void llm_why(char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void llm_why(char *why, size_t cap, const char *fmt, ...) {
  if (!why || cap == 0 || why[0])
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, cap, fmt, ap);
  va_end(ap);
}

/* ---- llm_reply_content ------------------------------------------------- */

int llm_reply_content(const char *body, char **content, char *why, size_t cap) {
  char tmp[160];
  if (!why || cap == 0) {
    why = tmp;
    cap = sizeof tmp;
  }
  why[0] = '\0';
  if (content)
    *content = NULL;
  if (!body || !content) {
    llm_why(why, cap, "no body to read");
    return -1;
  }
  json_error_t jerr;
  json_t *root = json_loads(body, JSON_DECODE_ANY, &jerr);
  if (!root) {
    /* jansson's text quotes the body near the error; it is cut like any
     * other quote of untrusted text. */
    char q[LLM_BODY_QUOTE_MAX + 4];
    llm_quote(q, sizeof q, jerr.text, strlen(jerr.text), LLM_BODY_QUOTE_MAX);
    llm_why(why, cap, "the body is not JSON (line %d: %s)", jerr.line, q);
    return -1;
  }
  int rc = -1;
  json_t *error = json_is_object(root) ? json_object_get(root, "error") : NULL;
  json_t *text = json_object_get(
      json_object_get(json_array_get(json_object_get(root, "choices"), 0),
                      "message"),
      "content");
  if (error && !json_is_null(error)) {
    /* {"error": {"message": ...}} as OpenAI sends it; some servers send a
     * bare string. */
    json_t *m =
        json_is_object(error) ? json_object_get(error, "message") : error;
    const char *msg = json_is_string(m) ? json_string_value(m) : "";
    char q[LLM_BODY_QUOTE_MAX + 4];
    llm_quote(q, sizeof q, msg, strlen(msg), LLM_BODY_QUOTE_MAX);
    llm_why(why, cap, "the body is an error: %s",
            q[0] ? q : "(no error.message)");
  } else if (!json_is_string(text)) {
    llm_why(why, cap, "the body has no choices[0].message.content string");
  } else if (!(*content = strdup(json_string_value(text)))) {
    llm_why(why, cap, "out of memory copying the content");
  } else {
    rc = 0;
  }
  json_decref(root);
  return rc;
}

/* ---- llm_reply_parse: the state of one call ---------------------------- */

typedef struct llm_parser {
  const heron_space *sp;
  heron_rng *rng;
  int repair;
  int nv, nk;
  /* Per knob, for the block being read: */
  int64_t *val;        /* the value read (any int64_t, INT64_MIN included) */
  unsigned char *has;  /* 1 when val was read */
  unsigned char *in;   /* 1 when val lies in the knob's domain */
  unsigned char *seen; /* 1 when the knob was named (with any value) */
  int64_t *cfg;        /* nv: the assignment handed to the solver */
} llm_parser;

static int llm_parser_init(llm_parser *p, const heron_space *sp, heron_rng *rng,
                           int repair) {
  memset(p, 0, sizeof *p);
  p->sp = sp;
  p->rng = rng;
  p->repair = repair;
  p->nv = heron_space_nvars(sp);
  p->nk = heron_space_nknobs(sp);
  if (p->nv < 0 || p->nk < 0)
    return -1;
  size_t nk = (size_t)(p->nk > 0 ? p->nk : 1);
  size_t nv = (size_t)(p->nv > 0 ? p->nv : 1);
  p->val = malloc(nk * sizeof *p->val);
  p->has = malloc(nk);
  p->in = malloc(nk);
  p->seen = malloc(nk);
  p->cfg = malloc(nv * sizeof *p->cfg);
  return (p->val && p->has && p->in && p->seen && p->cfg) ? 0 : -1;
}

static void llm_parser_free(llm_parser *p) {
  free(p->val);
  free(p->has);
  free(p->in);
  free(p->seen);
  free(p->cfg);
}

/* The knob index (0..nk) called s[0..len), or -1. */
static int llm_find_knob(const llm_parser *p, const char *s, size_t len) {
  for (int k = 0; k < p->nk; k++) {
    const char *name = heron_space_var_name(p->sp, heron_space_knob(p->sp, k));
    if (name && strlen(name) == len && memcmp(name, s, len) == 0)
      return k;
  }
  return -1;
}

/* Reads s[0..len) as an optionally signed decimal integer.  Returns 0 with
 * *x set, 1 when it is not one, 2 when it does not fit in int64_t. */
static int llm_parse_int(const char *s, size_t len, int64_t *x) {
  size_t i = 0;
  int neg = 0;
  if (i < len && (s[i] == '+' || s[i] == '-'))
    neg = s[i++] == '-';
  if (i == len)
    return 1;
  /* Accumulated as a negative number, whose range includes INT64_MIN. */
  int64_t acc = 0;
  int big = 0;
  for (; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return 1;
    int d = s[i] - '0';
    if (acc < (INT64_MIN + d) / 10)
      big = 1; /* keep scanning: "99999999999999999999x" is not a number */
    else
      acc = acc * 10 - d;
  }
  if (big || (!neg && acc == INT64_MIN))
    return 2;
  *x = neg ? acc : -acc;
  return 0;
}

/* 1 when x lies in variable v's declared domain.  INT64_MIN is HERON_UNSET,
 * which no domain holds. */
static int llm_in_domain(const heron_space *sp, int v, int64_t x) {
  int64_t lo, hi;
  const int64_t *vals;
  int nvals;
  if (x == HERON_UNSET ||
      heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals) != HERON_OK ||
      x < lo || x > hi)
    return 0;
  if (!vals)
    return 1;
  int a = 0, b = nvals; /* binary search in the sorted set */
  while (a < b) {
    int m = a + (b - a) / 2;
    if (vals[m] < x)
      a = m + 1;
    else
      b = m;
  }
  return a < nvals && vals[a] == x;
}

/* Writes v's domain readably: "one of {1, 2, 4}" or "outside [0, 5]"
 * phrasing is the caller's; this gives "{1, 2, 4}" or "[0, 5]", cutting a
 * long set as "{1, 2, ..., 4096}". */
static void llm_domain_str(const heron_space *sp, int v, char *buf,
                           size_t cap) {
  int64_t lo = 0, hi = 0;
  const int64_t *vals = NULL;
  int nvals = 0;
  heron_space_var_domain(sp, v, &lo, &hi, &vals, &nvals);
  if (!vals || nvals <= 0) {
    snprintf(buf, cap, "[%" PRId64 ", %" PRId64 "]", lo, hi);
    return;
  }
  size_t o = 0;
  o += (size_t)snprintf(buf, cap, "{");
  for (int i = 0; i < nvals && o < cap; i++) {
    if (o > 48 && i < nvals - 1) {
      snprintf(buf + o, cap - o, "..., %" PRId64 "}", vals[nvals - 1]);
      return;
    }
    o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, i ? ", " : "",
                          vals[i]);
  }
  if (o < cap)
    snprintf(buf + o, cap - o, "}");
}

/* Says which knobs a block left unset: "knobs not set: vec, unroll" with
 * "(and N more)" once the line is full. */
static void llm_missing_str(const llm_parser *p, char *buf, size_t cap) {
  size_t o = (size_t)snprintf(buf, cap, "knobs not set:");
  int listed = 0, missing = 0;
  for (int k = 0; k < p->nk; k++) {
    if (p->seen[k])
      continue;
    missing++;
    const char *name = heron_space_var_name(p->sp, heron_space_knob(p->sp, k));
    if (o < 100 && o < cap) {
      o += (size_t)snprintf(buf + o, cap - o, "%s %s", listed ? "," : "",
                            name ? name : "?");
      listed++;
    }
  }
  if (missing > listed && o < cap)
    snprintf(buf + o, cap - o, " (and %d more)", missing - listed);
}

/* Records LLM_D_INVALID with the constraint the solver names ("no valid
 * config: violates X" becomes "the knobs written break X"). */
static void llm_invalid(llm_verdict *v, const heron_error *e) {
  const char *c = strstr(e->text, "violates ");
  v->defects |= LLM_D_INVALID;
  if (c)
    llm_why(v->why, sizeof v->why, "the knobs written break %s",
            c + strlen("violates "));
  else
    llm_why(v->why, sizeof v->why, "the knobs written admit no config: %s",
            e->text);
}

/* ---- One item, one block ----------------------------------------------- */

/* Reads one item s[0..len) (already cut at separators, not yet trimmed),
 * recording the value in p and the defect in v. */
static void llm_item(llm_parser *p, const char *s, size_t len, llm_verdict *v) {
  while (len && llm_is_space(*s))
    s++, len--;
  while (len && llm_is_space(s[len - 1]))
    len--;
  if (len == 0)
    return; /* an empty item: a trailing or doubled separator */
  char q[LLM_QUOTE_MAX + 4];
  const char *colon = memchr(s, ':', len);
  size_t nlen = colon ? (size_t)(colon - s) : 0;
  while (nlen && llm_is_space(s[nlen - 1]))
    nlen--;
  if (!colon || nlen == 0) {
    v->defects |= LLM_D_SYNTAX;
    llm_quote(q, sizeof q, s, len, LLM_QUOTE_MAX);
    llm_why(v->why, sizeof v->why, "item '%s' is not 'knob: value'", q);
    return;
  }
  const char *val = colon + 1;
  size_t vlen = len - (size_t)(val - s);
  while (vlen && llm_is_space(*val))
    val++, vlen--;
  int k = llm_find_knob(p, s, nlen);
  if (k < 0) {
    v->defects |= LLM_D_UNKNOWN;
    if (v->why[0])
      return;
    /* Naming an auxiliary variable is a different mistake from inventing a
     * name: say which, since the prompt lists only knobs. */
    char name[LLM_NAME_MAX];
    int var = HERON_ENOTFOUND;
    if (nlen < sizeof name) {
      memcpy(name, s, nlen);
      name[nlen] = '\0';
      var = heron_space_find_var(p->sp, name);
    }
    llm_quote(q, sizeof q, s, nlen, LLM_QUOTE_MAX);
    if (var >= 0)
      llm_why(v->why, sizeof v->why,
              "'%s' is an auxiliary variable, not a knob (it follows from "
              "the knobs)",
              q);
    else
      llm_why(v->why, sizeof v->why, "unknown knob '%s'", q);
    return;
  }
  const char *kname = heron_space_var_name(p->sp, heron_space_knob(p->sp, k));
  if (p->seen[k]) {
    v->defects |= LLM_D_REPEATED;
    llm_quote(q, sizeof q, val, vlen, LLM_QUOTE_MAX);
    llm_why(v->why, sizeof v->why, "knob %s is set twice (again as '%s')",
            kname, q);
    return;
  }
  p->seen[k] = 1;
  int64_t x;
  int rc = llm_parse_int(val, vlen, &x);
  if (rc) {
    v->defects |= LLM_D_NOT_NUMBER;
    llm_quote(q, sizeof q, val, vlen, LLM_QUOTE_MAX);
    if (vlen == 0)
      llm_why(v->why, sizeof v->why, "knob %s has no value", kname);
    else
      llm_why(v->why, sizeof v->why, "%s = '%s' is %s", kname, q,
              rc == 2 ? "too large for a 64-bit integer"
                      : "not a decimal integer");
    return;
  }
  p->val[k] = x;
  p->has[k] = 1;
  p->in[k] = (unsigned char)llm_in_domain(p->sp, heron_space_knob(p->sp, k), x);
  if (!p->in[k]) {
    v->defects |= LLM_D_OUT_OF_RANGE;
    if (!v->why[0]) {
      int64_t lo, hi;
      const int64_t *vals;
      int nvals;
      char dom[96];
      heron_space_var_domain(p->sp, heron_space_knob(p->sp, k), &lo, &hi, &vals,
                             &nvals);
      llm_domain_str(p->sp, heron_space_knob(p->sp, k), dom, sizeof dom);
      llm_why(v->why, sizeof v->why, "%s = %" PRId64 " is %s %s", kname, x,
              vals ? "not one of" : "outside", dom);
    }
  }
}

/* Fills p->cfg with the knob values read (out-of-range ones as written)
 * and HERON_UNSET everywhere else.  INT64_MIN would read as HERON_UNSET, so
 * it goes in as the next value up, which repair moves to the bottom of the
 * domain all the same. */
static void llm_assignment(llm_parser *p) {
  for (int v = 0; v < p->nv; v++)
    p->cfg[v] = HERON_UNSET;
  for (int k = 0; k < p->nk; k++)
    if (p->has[k])
      p->cfg[heron_space_knob(p->sp, k)] =
          p->val[k] == INT64_MIN ? INT64_MIN + 1 : p->val[k];
}

/* Mends the block's values into a valid config at out[nv].  When
 * `complete` is set (every value read lies in its domain and no full
 * assignment was found invalid) the solver first completes the values as
 * written, keeping every one; when that cannot be done heron_space_repair
 * moves the fewest, nearest knobs.
 *
 * Repair gets the knobs the model wrote and HERON_UNSET everywhere else,
 * not a random completion: an unset knob is one repair frees first and
 * restricts to nothing, so no random value competes with a written one for
 * being kept, and a missing knob can still take whatever value the written
 * ones need.  Should repair ever refuse unset values, the free variables
 * are taken from a random valid config and repair runs again.  Returns 0,
 * 1 when no valid config was found (why says so), -1 when out of memory. */
static int llm_mend(llm_parser *p, int complete, int64_t *out, llm_verdict *v) {
  heron_error err;
  llm_assignment(p);
  if (complete) {
    heron_error_clear(&err);
    int rc = heron_space_validate(p->sp, p->rng, p->cfg, out, &err);
    if (rc == HERON_ENOMEM)
      return -1;
    if (rc == HERON_OK && heron_space_violations(p->sp, out, NULL, 0) == 0)
      return 0;
    /* The values as written cannot be completed: a constraint among them,
     * or one with the knobs they force, is broken. */
    llm_invalid(v, &err);
  }
  heron_error_clear(&err);
  int rc = heron_space_repair(p->sp, p->rng, p->cfg, out, &err);
  if (rc != HERON_OK && rc != HERON_ENOMEM) {
    heron_error_clear(&err);
    rc = heron_space_sample(p->sp, p->rng, out, &err);
    if (rc == HERON_OK) {
      for (int var = 0; var < p->nv; var++)
        if (p->cfg[var] == HERON_UNSET)
          p->cfg[var] = out[var];
      heron_error_clear(&err);
      rc = heron_space_repair(p->sp, p->rng, p->cfg, out, &err);
    }
  }
  if (rc == HERON_ENOMEM)
    return -1;
  if (rc != HERON_OK || heron_space_violations(p->sp, out, NULL, 0) != 0) {
    snprintf(v->why, sizeof v->why, "repair found no valid config: %.100s",
             rc != HERON_OK ? err.text : "its result breaks a constraint");
    return 1;
  }
  return 0;
}

/* Parses the block s[0..len) into out[nv] and its verdict v.  Returns 0 or
 * -1 when out of memory. */
static int llm_block(llm_parser *p, const char *s, size_t len, int64_t *out,
                     llm_verdict *v) {
  memset(v, 0, sizeof *v);
  for (int k = 0; k < p->nk; k++) {
    p->has[k] = 0;
    p->in[k] = 0;
    p->seen[k] = 0;
  }
  for (size_t a = 0; a <= len;) {
    size_t b = a;
    while (b < len && s[b] != ',' && s[b] != ';' && s[b] != '\n')
      b++;
    llm_item(p, s + a, b - a, v);
    a = b + 1;
  }
  int read = 0, missing = 0, out_of_range = 0;
  for (int k = 0; k < p->nk; k++) {
    read += p->has[k];
    missing += !p->seen[k];
    out_of_range += p->has[k] && !p->in[k];
  }
  if (missing) {
    v->defects |= LLM_D_MISSING;
    if (!v->why[0])
      llm_missing_str(p, v->why, sizeof v->why);
  }
  v->outcome = LLM_REJECTED;
  if (v->defects & LLM_D_REPEATED)
    return 0; /* which of the two values was meant cannot be known */
  if (v->defects == 0) {
    /* Every knob set, every value in its domain: the solver only derives
     * the auxiliary variables and checks the constraints. */
    heron_error err;
    heron_error_clear(&err);
    llm_assignment(p);
    int rc = heron_space_validate(p->sp, p->rng, p->cfg, out, &err);
    if (rc == HERON_ENOMEM)
      return -1;
    if (rc == HERON_OK && heron_space_violations(p->sp, out, NULL, 0) == 0) {
      v->outcome = LLM_VALID;
      return 0;
    }
    llm_invalid(v, &err);
  }
  if (!p->repair)
    return 0;
  if (read == 0) {
    char first[sizeof v->why];
    memcpy(first, v->why, sizeof first);
    snprintf(v->why, sizeof v->why, "no knob value could be read (%.*s)",
             (int)(sizeof v->why - 40), first);
    return 0; /* a random config is not the model's answer */
  }
  int complete = out_of_range == 0 && !(v->defects & LLM_D_INVALID);
  int rc = llm_mend(p, complete, out, v);
  if (rc < 0)
    return -1;
  if (rc == 0)
    v->outcome = LLM_REPAIRED;
  return 0;
}

/* ---- llm_reply_parse --------------------------------------------------- */

/* The offset of the first "##" in s[from..len), or len.  A plain loop, not
 * strstr: sanitizers check strstr's whole haystack on every call, which
 * made a megabyte of "#" quadratic. */
static size_t llm_marker(const char *s, size_t from, size_t len) {
  for (size_t i = from; i + 1 < len; i++)
    if (s[i] == '#' && s[i + 1] == '#')
      return i;
  return len;
}

/* Where the text between blocks s[0..len) is more than whitespace, records
 * LLM_D_PROSE and quotes it. */
static void llm_prose(const char *s, size_t len, llm_verdict *reply,
                      char *prose_why, size_t cap) {
  size_t i = 0;
  while (i < len && llm_is_space(s[i]))
    i++;
  if (i == len)
    return;
  reply->defects |= LLM_D_PROSE;
  char q[LLM_QUOTE_MAX + 4];
  llm_quote(q, sizeof q, s + i, len - i, LLM_QUOTE_MAX);
  llm_why(prose_why, cap, "text outside the ## blocks: '%s'", q);
  llm_why(reply->why, sizeof reply->why, "%s", prose_why);
}

int llm_reply_parse(const heron_space *sp, heron_rng *rng, const char *text,
                    int repair, int cap, int64_t *out, llm_verdict *blocks,
                    int *n, llm_verdict *reply) {
  if (n)
    *n = 0;
  if (reply)
    memset(reply, 0, sizeof *reply);
  if (!sp || !rng || !n || !reply || (cap > 0 && (!out || !blocks)))
    return -1;
  if (!text)
    text = "";
  llm_parser p;
  if (llm_parser_init(&p, sp, rng, repair)) {
    llm_parser_free(&p);
    return -1;
  }
  /* The reasons kept apart so the final why can give the one that decided
   * the outcome: prose for a strict reply, the first rejection when no
   * config came out, else the first defect (reply->why, filled as found). */
  char prose_why[sizeof reply->why] = "", reject_why[sizeof reply->why] = "";
  size_t len = strlen(text), pos = 0;
  int nblocks = 0, too_many = 0;
  for (;;) {
    size_t at = llm_marker(text, pos, len);
    llm_prose(text + pos, at - pos, reply, prose_why, sizeof prose_why);
    if (at == len)
      break;
    const char *open = text + at;
    size_t end = llm_marker(text, at + 2, len);
    const char *close = end < len ? text + end : NULL;
    nblocks++;
    if (nblocks > cap) {
      if (!too_many) {
        too_many = 1;
        reply->defects |= LLM_D_TOO_MANY;
        llm_why(reply->why, sizeof reply->why,
                "more than the %d block%s asked for (the rest ignored)",
                cap > 0 ? cap : 0, cap == 1 ? "" : "s");
        llm_why(reject_why, sizeof reject_why, "%s", reply->why);
      }
    } else if (!close) {
      reply->defects |= LLM_D_TRUNCATED;
      llm_why(reply->why, sizeof reply->why,
              "block %d is not closed by ## (the reply was cut off?)", nblocks);
      llm_why(reject_why, sizeof reject_why, "%s", reply->why);
    } else {
      llm_verdict v;
      int64_t *dst = out + (size_t)*n * (size_t)(p.nv > 0 ? p.nv : 1);
      if (llm_block(&p, open + 2, (size_t)(close - open - 2), dst, &v)) {
        llm_parser_free(&p);
        *n = 0;
        return -1;
      }
      reply->defects |= v.defects;
      if (v.defects)
        llm_why(reply->why, sizeof reply->why, "block %d: %s", nblocks, v.why);
      if (v.outcome == LLM_REJECTED)
        llm_why(reject_why, sizeof reject_why, "block %d: %s", nblocks, v.why);
      else
        blocks[(*n)++] = v;
    }
    if (!close)
      break;
    pos = (size_t)(close - text) + 2;
  }
  llm_parser_free(&p);
  if (nblocks == 0) {
    reply->defects |= LLM_D_NO_BLOCK;
    reply->why[0] = '\0';
    if (len == 0)
      llm_why(reply->why, sizeof reply->why, "the reply is empty");
    else
      llm_why(reply->why, sizeof reply->why,
              "no ## ... ## block in the reply, %s %s",
              strchr(prose_why, '\'') ? "which begins with" : "only",
              strchr(prose_why, '\'') ? strchr(prose_why, '\'') : "whitespace");
  } else if (!repair && (reply->defects & LLM_D_PROSE)) {
    *n = 0; /* a strict reply is all blocks */
    snprintf(reply->why, sizeof reply->why, "%s", prose_why);
  } else if (*n == 0) {
    snprintf(reply->why, sizeof reply->why, "%s", reject_why);
  }
  reply->outcome = *n == 0          ? LLM_REJECTED
                   : reply->defects ? LLM_REPAIRED
                                    : LLM_VALID;
  return 0;
}
