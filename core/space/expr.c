/* core/space/expr.c - the restriction language of T1 files (expr.h).
 *
 * Parsing runs in three steps: the text is cut into tokens, a
 * recursive-descent parser (one function per precedence level, Python's
 * order) builds a tree in one node array, and a last pass points string
 * literals into the expression's string pool and lists the names used.
 *
 * Chains of one precedence level (a + b - c, a * b // c, a < b <= c,
 * a and b and c) become one node with a list of operands, evaluated in a
 * loop, so the tree is only as deep as the text's nesting (parentheses,
 * unary operators, **).  That nesting is limited to MAX_DEPTH levels while
 * parsing, which bounds the recursion of both the parser and the evaluator.
 *
 * Evaluation walks the tree recursively with values on the C stack: it
 * never allocates and never writes to the tree, so one expression can be
 * evaluated by many threads at once.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/space/expr.h"

/* Nesting levels the parser accepts (parentheses, call arguments, list
 * elements, unary operators, not, **). */
#define MAX_DEPTH 200

/* ---- The tree ---------------------------------------------------------- */

enum {
  N_CONST, /* v */
  N_NAME,  /* a: index into the names */
  N_NEG,   /* -a */
  N_POS,   /* +a */
  N_NOT,   /* not a */
  N_POW,   /* a ** b */
  N_ARITH, /* kids: operand (op operand)*, left to right; n operands */
  N_AND,   /* kids: n operands */
  N_OR,    /* kids: n operands */
  N_CMP,   /* kids: operand (op operand)*, Python's chained comparison */
  N_LIST,  /* kids: n elements; only the right side of in / not in */
  N_CALL   /* op: FN_*; kids: n arguments */
};

enum {
  OP_ADD,
  OP_SUB,
  OP_MUL,
  OP_DIV,
  OP_FLOORDIV,
  OP_MOD,
  OP_POW,
  OP_EQ,
  OP_NE,
  OP_LT,
  OP_LE,
  OP_GT,
  OP_GE,
  OP_IN,
  OP_NOTIN
};

static const char *const op_name[] = {"+",  "-",  "*",  "/",  "//",
                                      "%",  "**", "==", "!=", "<",
                                      "<=", ">",  ">=", "in", "not in"};

enum { FN_MIN, FN_MAX, FN_ABS, FN_INT, FN_FLOAT };

static const char *const fn_name[] = {"min", "max", "abs", "int", "float"};

/* An operator inside a chain's kids: the OP_* code and, above it, the
 * operator's column, so evaluation errors can point at it. */
#define KID_OP(k) ((k)&0xff)
#define KID_COL(k) ((k) >> 8)

typedef struct node {
  uint8_t kind;
  uint8_t op;  /* N_CALL: FN_* */
  int32_t col; /* 1-based column of the operator, for evaluation errors */
  int32_t a;   /* first child, name index, or first kid */
  int32_t b;   /* second child */
  int32_t n;   /* operands in kids */
  heron__value v;
} node;

struct heron__expr {
  node *nodes;
  int nnodes, capnodes;
  int32_t *kids;
  int nkids, capkids;
  char *strs; /* string literals, NUL-terminated, one after another */
  size_t nstrs, capstrs;
  int *used; /* indices of the names used, ascending */
  int nused;
  int root;
};

/* Grows *p (of *cap elements of size sz) to hold at least need. */
static int grow(void *pp, int *cap, int need, size_t sz) {
  void **p = pp;
  if (need <= *cap)
    return 0;
  int c = *cap ? *cap : 16;
  while (c < need)
    c *= 2;
  void *q = realloc(*p, (size_t)c * sz);
  if (!q)
    return -1;
  *p = q;
  *cap = c;
  return 0;
}

void heron__expr_free(heron__expr *e) {
  if (!e)
    return;
  free(e->nodes);
  free(e->kids);
  free(e->strs);
  free(e->used);
  free(e);
}

void heron__expr_names(const heron__expr *e, const int **idx, int *n) {
  *idx = e->used;
  *n = e->nused;
}

/* ---- Tokens ------------------------------------------------------------ */

enum { T_END, T_INT, T_FLOAT, T_STR, T_NAME, T_OP };

typedef struct tok {
  int kind;
  size_t pos, len; /* bytes of the text */
  int64_t i;       /* T_INT */
  double f;        /* T_FLOAT */
  size_t soff;     /* T_STR: offset of the decoded text in the pool */
} tok;

typedef struct parser {
  const char *text;
  const char *const *names;
  int nnames;
  tok *toks;
  int ntoks, captoks;
  int at; /* the current token */
  heron__expr *e;
  int32_t *stk; /* operands of the chains being parsed */
  int nstk, capstk;
  int depth;
  char *used;  /* per name: used */
  size_t cpos; /* column(): the last byte asked for, and its column */
  int ccol;
  heron_error *err;
  int rc; /* the first failure */
} parser;

/* The 1-based column of byte pos, counting UTF-8 characters.  Parsing
 * asks for columns left to right, so counting resumes from the last
 * answer and a long text costs linear time. */
static int column(parser *p, size_t pos) {
  if (pos < p->cpos) {
    p->cpos = 0;
    p->ccol = 1;
  }
  for (; p->cpos < pos; p->cpos++)
    p->ccol += ((unsigned char)p->text[p->cpos] & 0xC0) != 0x80;
  return p->ccol;
}

/* Records the first failure as "column C: <message>"; returns -1 so a
 * parse function can `return fail(...)`. */
HERON_PRINTF(4, 5)
static int fail(parser *p, int code, size_t pos, const char *fmt, ...) {
  if (p->rc != HERON_OK)
    return -1;
  p->rc = code;
  if (code == HERON_ENOMEM) {
    heron_error_set(p->err, code, "out of memory parsing an expression");
    return -1;
  }
  char msg[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  heron_error_set(p->err, code, "column %d: %s", column(p, pos), msg);
  return -1;
}

static int oom(parser *p) { return fail(p, HERON_ENOMEM, 0, "%s", ""); }

static const char *const keywords[] = {
    "False",  "None",   "True",    "and",      "as",       "assert", "async",
    "await",  "break",  "class",   "continue", "def",      "del",    "elif",
    "else",   "except", "finally", "for",      "from",     "global", "if",
    "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
    "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};

static int is_keyword(const char *s, size_t len) {
  for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++)
    if (strlen(keywords[k]) == len && memcmp(keywords[k], s, len) == 0)
      return 1;
  return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_name_char(char c) { return is_name_start(c) || is_digit(c); }

/* Appends s[0..len) and a NUL to the string pool; the offset in *off. */
static int pool_add(parser *p, const char *s, size_t len, size_t *off) {
  heron__expr *e = p->e;
  if (e->nstrs + len + 1 > e->capstrs) {
    size_t c = e->capstrs ? e->capstrs : 64;
    while (c < e->nstrs + len + 1)
      c *= 2;
    char *q = realloc(e->strs, c);
    if (!q)
      return oom(p);
    e->strs = q;
    e->capstrs = c;
  }
  *off = e->nstrs;
  memcpy(e->strs + e->nstrs, s, len);
  e->strs[e->nstrs + len] = '\0';
  e->nstrs += len + 1;
  return 0;
}

/* Digits in base `base` with single underscores between them, as Python
 * writes integer literals, from s[*i]; the value in *v.  -1 on a bad digit
 * sequence, -2 on int64 overflow. */
static int lex_digits(const char *s, size_t *i, int base, int64_t *v) {
  int64_t x = 0;
  int any = 0;
  for (;;) {
    char c = s[*i];
    int d;
    if (c == '_' && any && s[*i + 1] && s[*i + 1] != '_') {
      (*i)++;
      continue;
    }
    if (is_digit(c))
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      break;
    if (d >= base)
      break;
    if (__builtin_mul_overflow(x, base, &x) || __builtin_add_overflow(x, d, &x))
      return -2;
    any = 1;
    (*i)++;
  }
  if (!any || s[*i - 1] == '_')
    return -1;
  *v = x;
  return 0;
}

/* A number literal at s[start]: int (decimal, 0x, 0o, 0b) or float. */
static int lex_number(parser *p, size_t start, tok *t) {
  const char *s = p->text;
  size_t i = start;
  int64_t v = 0;
  int isfloat = 0;
  if (s[i] == '0' && strchr("xXoObB", s[i + 1]) && s[i + 1]) {
    char b = (char)(s[i + 1] | 0x20);
    int base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
    i += 2;
    if (s[i] == '_')
      i++;
    int rc = lex_digits(s, &i, base, &v);
    if (rc == -2)
      return fail(p, HERON_EPARSE, start, "integer literal beyond int64");
    if (rc < 0)
      return fail(p, HERON_EPARSE, start, "invalid number literal");
  } else {
    /* Decimal: the digits are checked here, the value computed after. */
    while (is_digit(s[i]) || (s[i] == '_' && i > start && is_digit(s[i - 1]) &&
                              is_digit(s[i + 1])))
      i++;
    if (s[i] == '.') {
      isfloat = 1;
      i++;
      while (is_digit(s[i]) ||
             (s[i] == '_' && is_digit(s[i - 1]) && is_digit(s[i + 1])))
        i++;
    }
    if ((s[i] == 'e' || s[i] == 'E') &&
        (is_digit(s[i + 1]) ||
         ((s[i + 1] == '+' || s[i + 1] == '-') && is_digit(s[i + 2])))) {
      isfloat = 1;
      i += 2;
      while (is_digit(s[i]) || (s[i] == '_' && is_digit(s[i + 1])))
        i++;
    }
  }
  if (s[i] == 'j' || s[i] == 'J')
    return fail(p, HERON_EPARSE, start, "complex numbers are not supported");
  if (is_name_char(s[i]) || s[i] == '.')
    return fail(p, HERON_EPARSE, start, "invalid number literal '%.*s'",
                (int)(i - start + 1), s + start);
  t->kind = isfloat ? T_FLOAT : T_INT;
  t->pos = start;
  t->len = i - start;
  if (isfloat) {
    char buf[128];
    size_t n = 0;
    for (size_t k = start; k < i && n + 1 < sizeof buf; k++)
      if (s[k] != '_')
        buf[n++] = s[k];
    buf[n] = '\0';
    t->f = strtod(buf, NULL);
  } else if (s[start] == '0' && (s[start + 1] == 'x' || s[start + 1] == 'X' ||
                                 s[start + 1] == 'o' || s[start + 1] == 'O' ||
                                 s[start + 1] == 'b' || s[start + 1] == 'B')) {
    t->i = v;
  } else {
    size_t k = start;
    int rc = lex_digits(s, &k, 10, &v);
    if (rc == -2)
      return fail(p, HERON_EPARSE, start, "integer literal beyond int64");
    if (s[start] == '0' && v != 0)
      return fail(p, HERON_EPARSE, start,
                  "leading zeros in a decimal integer are not permitted "
                  "(0o for octal)");
    t->i = v;
  }
  return 0;
}

/* A string literal opened by the quote at s[start], decoded (the common
 * backslash escapes) into the string pool. */
static int lex_string(parser *p, size_t start, tok *t) {
  const char *s = p->text;
  char q = s[start];
  size_t i = start + 1;
  char buf[256];
  char *out = buf;
  size_t n = 0, cap = sizeof buf;
  int rc = 0;
  for (;;) {
    char c = s[i];
    if (c == '\0' || c == '\n') {
      rc = fail(p, HERON_EPARSE, start,
                "unterminated string (its quote is never closed)");
      break;
    }
    if (c == q) {
      i++;
      break;
    }
    if (n + 4 >= cap) {
      char *nb = malloc(cap * 2);
      if (!nb) {
        rc = oom(p);
        break;
      }
      memcpy(nb, out, n);
      if (out != buf)
        free(out);
      out = nb;
      cap *= 2;
    }
    if (c != '\\') {
      out[n++] = c;
      i++;
      continue;
    }
    char d = s[i + 1];
    const char *from = "\\'\"nrtabfv";
    const char *to = "\\'\"\n\r\t\a\b\f\v";
    const char *hit = d ? strchr(from, d) : NULL;
    if (hit) {
      out[n++] = to[hit - from];
      i += 2;
    } else if (d == '\0' || d == '\n') {
      out[n++] = '\\';
      i++;
    } else if (d == 'x' || d == 'u' || d == 'U' || d == 'N' || is_digit(d)) {
      rc = fail(p, HERON_EPARSE, i, "escape '\\%c' is not supported", d);
      break;
    } else {
      /* Python keeps the backslash of an unknown escape. */
      out[n++] = '\\';
      i++;
    }
  }
  if (rc == 0) {
    t->kind = T_STR;
    t->pos = start;
    t->len = i - start;
    rc = pool_add(p, out, n, &t->soff);
  }
  if (out != buf)
    free(out);
  return rc;
}

/* Operators and punctuation, longest first.  Some are not in the language
 * and are only tokens so the parser can say why they are refused. */
static const char *const puncts[] = {
    "**", "//", "==", "!=", "<=", ">=", "<<", ">>", ":=", "->", "+",
    "-",  "*",  "/",  "%",  "<",  ">",  "(",  ")",  "[",  "]",  ",",
    ".",  "=",  "&",  "|",  "^",  "~",  ":",  ";",  "@",  "{",  "}"};

static int lex(parser *p) {
  const char *s = p->text;
  size_t i = 0;
  for (;;) {
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ||
           s[i] == '\f')
      i++;
    if (grow(&p->toks, &p->captoks, p->ntoks + 1, sizeof(tok)))
      return oom(p);
    tok *t = &p->toks[p->ntoks];
    memset(t, 0, sizeof *t);
    char c = s[i];
    if (c == '\0') {
      t->kind = T_END;
      t->pos = i;
      p->ntoks++;
      return 0;
    }
    if (is_digit(c) || (c == '.' && is_digit(s[i + 1]))) {
      if (lex_number(p, i, t))
        return -1;
    } else if (c == '\'' || c == '"') {
      if (lex_string(p, i, t))
        return -1;
    } else if (is_name_start(c)) {
      size_t j = i;
      while (is_name_char(s[j]))
        j++;
      if ((s[j] == '\'' || s[j] == '"') && j - i <= 2 &&
          strspn(s + i, "rRbBfFuU") >= j - i)
        return fail(p, HERON_EPARSE, i, "string prefix '%.*s' is not supported",
                    (int)(j - i), s + i);
      t->kind = T_NAME;
      t->pos = i;
      t->len = j - i;
    } else {
      t->kind = T_OP;
      t->pos = i;
      for (size_t k = 0; k < sizeof puncts / sizeof *puncts; k++) {
        size_t len = strlen(puncts[k]);
        if (strncmp(s + i, puncts[k], len) == 0) {
          t->len = len;
          break;
        }
      }
      if (t->len == 0) {
        /* A whole UTF-8 character, so the message prints it. */
        int len = 1;
        unsigned char u = (unsigned char)c;
        if (u >= 0xC0)
          while (len < 4 && ((unsigned char)s[i + len] & 0xC0) == 0x80)
            len++;
        return fail(p, HERON_EPARSE, i, "unexpected character '%.*s'", len,
                    s + i);
      }
    }
    i = t->pos + t->len;
    p->ntoks++;
  }
}

/* ---- Parsing ----------------------------------------------------------- */

static const tok *cur(const parser *p) { return &p->toks[p->at]; }
static const tok *peek(const parser *p) {
  return p->at + 1 < p->ntoks ? &p->toks[p->at + 1] : &p->toks[p->ntoks - 1];
}

static int tok_is(const parser *p, const tok *t, int kind, const char *s) {
  return t->kind == kind && strlen(s) == t->len &&
         memcmp(p->text + t->pos, s, t->len) == 0;
}
static int is_op(const parser *p, const char *s) {
  return tok_is(p, cur(p), T_OP, s);
}
static int is_kw(const parser *p, const char *s) {
  return tok_is(p, cur(p), T_NAME, s);
}

/* "end of text", "name 'x'", "'+'", ... for messages. */
static void describe(const parser *p, const tok *t, char *buf, size_t cap) {
  const char *s = p->text + t->pos;
  int len = t->len > 24 ? 24 : (int)t->len;
  const char *more = t->len > 24 ? "..." : "";
  switch (t->kind) {
  case T_END:
    snprintf(buf, cap, "end of text");
    break;
  case T_INT:
  case T_FLOAT:
    snprintf(buf, cap, "number %.*s%s", len, s, more);
    break;
  case T_STR:
    snprintf(buf, cap, "string %.*s%s", len, s, more);
    break;
  case T_NAME:
    snprintf(buf, cap, "%s '%.*s%s'",
             is_keyword(s, t->len) ? "keyword" : "name", len, s, more);
    break;
  default:
    snprintf(buf, cap, "'%.*s'", len, s);
  }
}

/* Why token t is refused where it stands (with a leading space), or "".
 * `operand` says whether an operand was expected there. */
static const char *why(const parser *p, const tok *t, int operand) {
  static const struct {
    const char *tok, *why;
  } reasons[] = {
      {".", " (attribute access is not supported)"},
      {"=", " (assignment is not supported; compare with ==)"},
      {":=", " (assignment is not supported)"},
      {"&", " (bitwise operators are not supported)"},
      {"|", " (bitwise operators are not supported)"},
      {"^", " (bitwise operators are not supported)"},
      {"~", " (bitwise operators are not supported)"},
      {"<<", " (bitwise operators are not supported)"},
      {">>", " (bitwise operators are not supported)"},
      {"{", " (sets and dicts are not supported)"},
      {":", " (slices and lambdas are not supported)"},
      {"@", " (matrix multiplication is not supported)"},
      {";", " (only one expression is allowed)"},
      {",", " (tuples are only supported after 'in')"},
      {"lambda", " (lambda is not supported)"},
      {"if", " (conditional expressions are not supported)"},
      {"else", " (conditional expressions are not supported)"},
      {"for", " (comprehensions are not supported)"},
      {"is", " ('is' is not supported; compare with ==)"},
      {"None", " (None is not supported)"},
  };
  if (t->kind == T_OP && tok_is(p, t, T_OP, "["))
    return operand ? " (lists are only supported after 'in')"
                   : " (subscripts are not supported)";
  for (size_t k = 0; k < sizeof reasons / sizeof *reasons; k++)
    if (tok_is(p, t, T_OP, reasons[k].tok) ||
        tok_is(p, t, T_NAME, reasons[k].tok))
      return reasons[k].why;
  if (!operand && t->kind != T_OP && t->kind != T_END)
    return " (a missing operator?)";
  return "";
}

/* Fails with "unexpected X (why)" at the current token. */
static int unexpected(parser *p, int operand) {
  char d[64];
  describe(p, cur(p), d, sizeof d);
  return fail(p, HERON_EPARSE, cur(p)->pos, "%s %s%s",
              operand ? "expected an operand, found" : "unexpected", d,
              why(p, cur(p), operand));
}

static int new_node(parser *p, int kind, size_t pos) {
  heron__expr *e = p->e;
  if (grow(&e->nodes, &e->capnodes, e->nnodes + 1, sizeof(node)))
    return oom(p);
  node *nd = &e->nodes[e->nnodes];
  memset(nd, 0, sizeof *nd);
  nd->kind = (uint8_t)kind;
  nd->col = column(p, pos);
  return e->nnodes++;
}

static int push(parser *p, int32_t x) {
  if (grow(&p->stk, &p->capstk, p->nstk + 1, sizeof(int32_t)))
    return oom(p);
  p->stk[p->nstk++] = x;
  return 0;
}

/* A node of `kind` whose kids are stk[base..nstk), n operands; pops them. */
static int chain_node(parser *p, int kind, size_t pos, int base, int n) {
  heron__expr *e = p->e;
  int len = p->nstk - base;
  int id = new_node(p, kind, pos);
  if (id < 0 || grow(&e->kids, &e->capkids, e->nkids + len, sizeof(int32_t)))
    return oom(p);
  if (len > 0)
    memcpy(e->kids + e->nkids, p->stk + base, (size_t)len * sizeof(int32_t));
  e->nodes[id].a = e->nkids;
  e->nodes[id].n = n;
  e->nkids += len;
  p->nstk = base;
  return id;
}

/* An operator for a chain's kids: op and the current token's column. */
static int32_t kid_op(parser *p, int op) {
  int col = column(p, cur(p)->pos);
  return op | (col < 0x7fffff ? col : 0x7fffff) << 8;
}

/* One nesting level more; fails past MAX_DEPTH at the current token. */
static int enter(parser *p) {
  if (++p->depth > MAX_DEPTH)
    return fail(p, HERON_EPARSE, cur(p)->pos,
                "expression nested too deeply (more than %d levels)",
                MAX_DEPTH);
  return 0;
}

static int parse_or(parser *p);
static int parse_unary(parser *p);

/* The arguments of a call or the elements of a list or tuple, up to the
 * closing `close`, pushed on the operand stack; their count in *n. */
static int parse_items(parser *p, const char *close, size_t open, int *n,
                       int *comma) {
  *n = 0;
  *comma = 0;
  while (!is_op(p, close)) {
    if (cur(p)->kind == T_NAME && tok_is(p, peek(p), T_OP, "="))
      return fail(p, HERON_EPARSE, cur(p)->pos,
                  "keyword arguments are not supported");
    int x = parse_or(p);
    if (x < 0 || push(p, x))
      return -1;
    (*n)++;
    if (is_op(p, ",")) {
      p->at++;
      *comma = 1;
    } else if (!is_op(p, close)) {
      char d[64];
      describe(p, cur(p), d, sizeof d);
      return fail(p, HERON_EPARSE, cur(p)->pos,
                  "expected ',' or '%s' to close the '%c' at column %d, "
                  "found %s%s",
                  close, *close == ')' ? '(' : '[', column(p, open), d,
                  why(p, cur(p), 0));
    }
  }
  p->at++;
  return 0;
}

/* The right side of in / not in: a list [..] or a tuple (..,) literal. */
static int parse_seq(parser *p) {
  const tok *t = cur(p);
  size_t open = t->pos;
  const char *close = is_op(p, "[") ? "]" : is_op(p, "(") ? ")" : NULL;
  if (!close) {
    char d[64];
    describe(p, t, d, sizeof d);
    return fail(p, HERON_EPARSE, t->pos,
                "'in' needs a list [..] or a tuple (..,) literal, found %s", d);
  }
  p->at++;
  if (enter(p))
    return -1;
  int base = p->nstk, n, comma;
  if (parse_items(p, close, open, &n, &comma))
    return -1;
  p->depth--;
  if (*close == ')' && n == 1 && !comma)
    return fail(p, HERON_EPARSE, open,
                "'in' needs a list or a tuple: (x) is not a tuple, (x,) is");
  return chain_node(p, N_LIST, open, base, n);
}

/* name(args): one of the known functions. */
static int parse_call(parser *p) {
  const tok *t = cur(p);
  size_t pos = t->pos;
  int fn = -1;
  for (int k = 0; k < 5; k++)
    if (tok_is(p, t, T_NAME, fn_name[k]))
      fn = k;
  for (int k = 0; fn < 0 && k < p->nnames; k++)
    if (tok_is(p, t, T_NAME, p->names[k]))
      return fail(p, HERON_EPARSE, pos,
                  "'%s' is a parameter, not a function; only min, max, abs, "
                  "int and float can be called",
                  p->names[k]);
  if (fn < 0)
    return fail(p, HERON_EPARSE, pos,
                "unknown function '%.*s'; known: min, max, abs, int, float",
                (int)t->len, p->text + pos);
  size_t open = peek(p)->pos;
  p->at += 2;
  if (enter(p))
    return -1;
  int base = p->nstk, n, comma;
  if (parse_items(p, ")", open, &n, &comma))
    return -1;
  p->depth--;
  if ((fn == FN_MIN || fn == FN_MAX) && n < 2)
    return fail(p, HERON_EPARSE, pos,
                "%s() needs at least 2 arguments (lists are not supported)",
                fn_name[fn]);
  if (fn != FN_MIN && fn != FN_MAX && n != 1)
    return fail(p, HERON_EPARSE, pos, "%s() takes exactly 1 argument, not %d",
                fn_name[fn], n);
  int id = chain_node(p, N_CALL, pos, base, n);
  if (id >= 0)
    p->e->nodes[id].op = (uint8_t)fn;
  return id;
}

/* "unknown name 'x'; known: a, b, ..." (the list cut to fit). */
static int unknown_name(parser *p, const tok *t) {
  char known[112];
  size_t n = 0;
  known[0] = '\0';
  for (int k = 0; k < p->nnames; k++) {
    int w = snprintf(known + n, sizeof known - n, "%s%s", k ? ", " : "",
                     p->names[k]);
    if (w < 0 || (size_t)w >= sizeof known - n) {
      size_t at = n < sizeof known - 6 ? n : sizeof known - 6;
      memcpy(known + at, ", ...", 6);
      break;
    }
    n += (size_t)w;
  }
  return fail(p, HERON_EPARSE, t->pos, "unknown name '%.*s'; known: %s",
              (int)(t->len > 40 ? 40 : t->len), p->text + t->pos,
              p->nnames ? known : "none");
}

static int parse_name(parser *p) {
  const tok *t = cur(p);
  const char *s = p->text + t->pos;
  if (tok_is(p, t, T_NAME, "True") || tok_is(p, t, T_NAME, "False")) {
    int id = new_node(p, N_CONST, t->pos);
    if (id < 0)
      return -1;
    p->e->nodes[id].v.kind = HERON__VAL_INT;
    p->e->nodes[id].v.i = *s == 'T';
    p->at++;
    return id;
  }
  if (is_keyword(s, t->len))
    return unexpected(p, 1);
  if (tok_is(p, peek(p), T_OP, "("))
    return parse_call(p);
  for (int k = 0; k < p->nnames; k++) {
    if (strlen(p->names[k]) == t->len && memcmp(p->names[k], s, t->len) == 0) {
      int id = new_node(p, N_NAME, t->pos);
      if (id < 0)
        return -1;
      p->e->nodes[id].a = k;
      p->used[k] = 1;
      p->at++;
      return id;
    }
  }
  return unknown_name(p, t);
}

static int parse_atom(parser *p) {
  const tok *t = cur(p);
  int id = -1;
  if (t->kind == T_INT || t->kind == T_FLOAT || t->kind == T_STR) {
    id = new_node(p, N_CONST, t->pos);
    if (id < 0)
      return -1;
    heron__value *v = &p->e->nodes[id].v;
    v->kind = t->kind == T_INT     ? HERON__VAL_INT
              : t->kind == T_FLOAT ? HERON__VAL_FLOAT
                                   : HERON__VAL_STR;
    v->i = t->kind == T_STR ? (int64_t)t->soff : t->i; /* pointer at the end */
    v->f = t->f;
    p->at++;
  } else if (t->kind == T_NAME) {
    id = parse_name(p);
  } else if (is_op(p, "(")) {
    size_t open = t->pos;
    p->at++;
    id = parse_or(p);
    if (id < 0)
      return -1;
    if (!is_op(p, ")")) {
      char d[64];
      describe(p, cur(p), d, sizeof d);
      return fail(p, HERON_EPARSE, cur(p)->pos,
                  "expected ')' to close the '(' at column %d, found %s%s",
                  column(p, open), d, why(p, cur(p), 0));
    }
    p->at++;
  } else {
    return unexpected(p, 1);
  }
  if (id < 0)
    return -1;
  /* What Python would allow after an operand but the language does not. */
  if (is_op(p, ".") || is_op(p, "["))
    return unexpected(p, 0);
  if (is_op(p, "("))
    return fail(p, HERON_EPARSE, cur(p)->pos,
                "unexpected '(' (only min, max, abs, int and float can be "
                "called)");
  return id;
}

/* atom ['**' unary]: right-associative, and tighter than a unary minus on
 * its left (-2**2 is -4) but not on its right (2**-1 is 0.5). */
static int parse_power(parser *p) {
  int x = parse_atom(p);
  if (x < 0 || !is_op(p, "**"))
    return x;
  size_t pos = cur(p)->pos;
  p->at++;
  if (enter(p))
    return -1;
  int y = parse_unary(p);
  if (y < 0)
    return -1;
  p->depth--;
  int id = new_node(p, N_POW, pos);
  if (id >= 0) {
    p->e->nodes[id].a = x;
    p->e->nodes[id].b = y;
  }
  return id;
}

static int parse_unary(parser *p) {
  int neg = is_op(p, "-");
  if (!neg && !is_op(p, "+"))
    return parse_power(p);
  size_t pos = cur(p)->pos;
  p->at++;
  if (enter(p))
    return -1;
  int x = parse_unary(p);
  if (x < 0)
    return -1;
  p->depth--;
  int id = new_node(p, neg ? N_NEG : N_POS, pos);
  if (id >= 0)
    p->e->nodes[id].a = x;
  return id;
}

/* Which binary operator of a level the current token is, or -1. */
static int level_op(const parser *p, const int *ops, int nops) {
  for (int k = 0; k < nops; k++)
    if (is_op(p, op_name[ops[k]]))
      return ops[k];
  return -1;
}

/* operand (op operand)* for the operators `ops` of one level, as a chain. */
static int parse_level(parser *p, const int *ops, int nops,
                       int (*operand)(parser *)) {
  int x = operand(p);
  if (x < 0 || level_op(p, ops, nops) < 0)
    return x;
  int base = p->nstk, n = 1, op;
  size_t pos = cur(p)->pos;
  if (push(p, x))
    return -1;
  while ((op = level_op(p, ops, nops)) >= 0) {
    if (push(p, kid_op(p, op)))
      return -1;
    p->at++;
    int y = operand(p);
    if (y < 0 || push(p, y))
      return -1;
    n++;
  }
  return chain_node(p, N_ARITH, pos, base, n);
}

static int parse_term(parser *p) {
  static const int ops[] = {OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD};
  return parse_level(p, ops, 4, parse_unary);
}

static int parse_sum(parser *p) {
  static const int ops[] = {OP_ADD, OP_SUB};
  return parse_level(p, ops, 2, parse_term);
}

/* The comparison operator at the current token (consuming nothing), or -1;
 * *ntok is how many tokens it takes (not in: 2). */
static int cmp_op(const parser *p, int *ntok) {
  static const int ops[] = {OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE};
  *ntok = 1;
  int op = level_op(p, ops, 6);
  if (op >= 0)
    return op;
  if (is_kw(p, "in"))
    return OP_IN;
  if (is_kw(p, "not") && tok_is(p, peek(p), T_NAME, "in")) {
    *ntok = 2;
    return OP_NOTIN;
  }
  return -1;
}

/* sum (cmp sum)*, a chain as in Python: a < b < c is a < b and b < c with
 * b evaluated once.  A list is only the last operand, after in / not in. */
static int parse_cmp(parser *p) {
  int x = parse_sum(p), op, ntok;
  if (x < 0 || cmp_op(p, &ntok) < 0)
    return x;
  int base = p->nstk, n = 1, list = 0;
  size_t pos = cur(p)->pos;
  if (push(p, x))
    return -1;
  while ((op = cmp_op(p, &ntok)) >= 0) {
    if (list)
      return fail(p, HERON_EPARSE, cur(p)->pos,
                  "a list can only be compared with 'in' or 'not in', as the "
                  "last operand");
    if (push(p, kid_op(p, op)))
      return -1;
    p->at += ntok;
    list = op == OP_IN || op == OP_NOTIN;
    int y = list ? parse_seq(p) : parse_sum(p);
    if (y < 0 || push(p, y))
      return -1;
    n++;
  }
  return chain_node(p, N_CMP, pos, base, n);
}

static int parse_not(parser *p) {
  if (!is_kw(p, "not"))
    return parse_cmp(p);
  size_t pos = cur(p)->pos;
  p->at++;
  if (enter(p))
    return -1;
  int x = parse_not(p);
  if (x < 0)
    return -1;
  p->depth--;
  int id = new_node(p, N_NOT, pos);
  if (id >= 0)
    p->e->nodes[id].a = x;
  return id;
}

/* x (kw x)* for and / or. */
static int parse_logic(parser *p, const char *kw, int kind,
                       int (*operand)(parser *)) {
  int x = operand(p);
  if (x < 0 || !is_kw(p, kw))
    return x;
  int base = p->nstk, n = 1;
  size_t pos = cur(p)->pos;
  if (push(p, x))
    return -1;
  while (is_kw(p, kw)) {
    p->at++;
    int y = operand(p);
    if (y < 0 || push(p, y))
      return -1;
    n++;
  }
  return chain_node(p, kind, pos, base, n);
}

static int parse_and(parser *p) {
  return parse_logic(p, "and", N_AND, parse_not);
}

/* A whole expression: the entry of every nesting level. */
static int parse_or(parser *p) {
  if (enter(p))
    return -1;
  int x = parse_logic(p, "or", N_OR, parse_and);
  if (x >= 0)
    p->depth--;
  return x;
}

/* Points string literals into the pool and lists the names used. */
static int finish(parser *p) {
  heron__expr *e = p->e;
  for (int k = 0; k < e->nnodes; k++) {
    heron__value *v = &e->nodes[k].v;
    if (e->nodes[k].kind == N_CONST && v->kind == HERON__VAL_STR) {
      v->s = e->strs + v->i;
      v->i = 0;
    }
  }
  /* Evaluation computes kids + offset for every node: never from NULL. */
  if (!e->kids && grow(&e->kids, &e->capkids, 1, sizeof(int32_t)))
    return oom(p);
  int n = 0;
  for (int k = 0; k < p->nnames; k++)
    n += p->used[k];
  e->used = malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (!e->used)
    return oom(p);
  for (int k = 0; k < p->nnames; k++)
    if (p->used[k])
      e->used[e->nused++] = k;
  return 0;
}

int heron__expr_parse(const char *text, const char *const *names, int nnames,
                      heron__expr **out, heron_error *err) {
  *out = NULL;
  if (!text || nnames < 0 || (nnames > 0 && !names))
    return heron_error_set(err, HERON_EINVAL, "expression: no text or names");
  parser p = {
      .text = text, .names = names, .nnames = nnames, .ccol = 1, .err = err};
  p.e = calloc(1, sizeof *p.e);
  p.used = calloc((size_t)nnames + 1, 1);
  if (!p.e || !p.used) {
    oom(&p);
  } else if (lex(&p) == 0) {
    if (p.toks[0].kind == T_END)
      fail(&p, HERON_EPARSE, 0, "empty expression");
    else if ((p.e->root = parse_or(&p)) >= 0 && cur(&p)->kind != T_END)
      unexpected(&p, 0);
    if (p.rc == HERON_OK)
      finish(&p);
  }
  free(p.toks);
  free(p.stk);
  free(p.used);
  if (p.rc != HERON_OK) {
    heron__expr_free(p.e);
    return p.rc;
  }
  *out = p.e;
  return HERON_OK;
}

/* ---- Evaluation -------------------------------------------------------- */

HERON_PRINTF(3, 4)
static int eval_fail(heron_error *err, int col, const char *fmt, ...) {
  /* The solver's test passes no error struct: skip the formatting. */
  if (!err || err->code != HERON_OK)
    return HERON_EINVAL;
  char msg[140];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return heron_error_set(err, HERON_EINVAL, "column %d: %s", col, msg);
}

static const char *type_name(const heron__value *v) {
  return v->kind == HERON__VAL_INT     ? "int"
         : v->kind == HERON__VAL_FLOAT ? "float"
                                       : "str";
}

/* Python's truth value of v: nonzero numbers and non-empty strings. */
static int truthy(const heron__value *v) {
  switch (v->kind) {
  case HERON__VAL_INT:
    return v->i != 0;
  case HERON__VAL_FLOAT:
    return v->f != 0.0; /* NaN is true, as in Python */
  default:
    return v->s[0] != '\0';
  }
}

static double as_float(const heron__value *v) {
  return v->kind == HERON__VAL_INT ? (double)v->i : v->f;
}

static void set_int(heron__value *v, int64_t i) {
  v->kind = HERON__VAL_INT;
  v->i = i;
}

static void set_float(heron__value *v, double f) {
  v->kind = HERON__VAL_FLOAT;
  v->f = f;
}

/* Compares an integer with a float exactly, as Python does (converting
 * the integer would round above 2^53): -1, 0, 1, or 2 for NaN. */
static int cmp_int_float(int64_t i, double f) {
  if (isnan(f))
    return 2;
  if (f >= 9223372036854775808.0)
    return -1;
  if (f < -9223372036854775808.0)
    return 1;
  double t = trunc(f);
  int64_t ti = (int64_t)t;
  if (i != ti)
    return i < ti ? -1 : 1;
  return f > t ? -1 : f < t ? 1 : 0;
}

/* -1, 0, 1, or 2 when unordered (a NaN); both numbers. */
static int cmp_num(const heron__value *x, const heron__value *y) {
  if (x->kind == HERON__VAL_INT && y->kind == HERON__VAL_INT)
    return (x->i > y->i) - (x->i < y->i);
  if (x->kind == HERON__VAL_FLOAT && y->kind == HERON__VAL_FLOAT) {
    if (isnan(x->f) || isnan(y->f))
      return 2;
    return (x->f > y->f) - (x->f < y->f);
  }
  if (x->kind == HERON__VAL_INT)
    return cmp_int_float(x->i, y->f);
  int c = cmp_int_float(y->i, x->f);
  return c == 2 ? 2 : -c;
}

static int is_str(const heron__value *v) { return v->kind == HERON__VAL_STR; }

/* x op y for a comparison operator: *res 1 or 0.  Equality between a
 * string and a number is false; ordering them is an error. */
static int compare(int op, const heron__value *x, const heron__value *y,
                   int *res, int col, heron_error *err) {
  int c;
  if (is_str(x) != is_str(y)) {
    if (op == OP_EQ || op == OP_NE) {
      *res = op == OP_NE;
      return HERON_OK;
    }
    return eval_fail(err, col, "'%s' between %s and %s is not supported",
                     op_name[op], type_name(x), type_name(y));
  }
  if (is_str(x)) {
    c = strcmp(x->s, y->s); /* UTF-8 bytes sort as code points */
    c = (c > 0) - (c < 0);
  } else {
    c = cmp_num(x, y);
  }
  switch (op) {
  case OP_EQ:
    *res = c == 0;
    break;
  case OP_NE:
    *res = c != 0;
    break;
  case OP_LT:
    *res = c == -1;
    break;
  case OP_LE:
    *res = c == -1 || c == 0;
    break;
  case OP_GT:
    *res = c == 1;
    break;
  default:
    *res = c == 1 || c == 0;
  }
  return HERON_OK;
}

/* Python's int / int: exact operands give a correctly rounded quotient
 * below 2^53; above, long double keeps the operands exact. */
static double true_div(int64_t a, int64_t b) {
  const int64_t lim = (int64_t)1 << 53;
  if (a >= -lim && a <= lim && b >= -lim && b <= lim)
    return (double)a / (double)b;
  return (double)((long double)a / (long double)b);
}

/* b ** e for e >= 0 by squaring; -1 on int64 overflow.  Squaring the base
 * is only needed while exponent bits remain, and then its overflow means
 * the result's. */
static int ipow(int64_t b, int64_t e, int64_t *out) {
  int64_t r = 1;
  for (;;) {
    if ((e & 1) && __builtin_mul_overflow(r, b, &r))
      return -1;
    e >>= 1;
    if (!e)
      break;
    if (__builtin_mul_overflow(b, b, &b))
      return -1;
  }
  *out = r;
  return 0;
}

/* Python's float ** float: errors where Python raises (zero to a negative
 * power) or leaves the reals (a negative base to a fractional power gives
 * a complex number), and on overflow of finite operands. */
static int fpow(double x, double y, heron__value *out, int col,
                heron_error *err) {
  if (x == 0.0 && y < 0.0)
    return eval_fail(err, col, "zero to a negative power (division by zero)");
  if (x < 0.0 && isfinite(x) && isfinite(y) && y != floor(y))
    return eval_fail(err, col,
                     "a negative number to a fractional power is complex");
  double r = pow(x, y);
  if (isinf(r) && isfinite(x) && isfinite(y))
    return eval_fail(err, col, "float overflow in '**'");
  set_float(out, r);
  return HERON_OK;
}

/* CPython's float floor division and modulo (float_divmod): the modulo
 * takes the divisor's sign and the quotient is rounded to agree with it. */
static void fdivmod(double vx, double wx, double *fdiv, double *fmodulo) {
  double mod = fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = copysign(0.0, wx);
  }
  double fd;
  if (div != 0.0) {
    fd = floor(div);
    if (div - fd > 0.5)
      fd += 1.0;
  } else {
    fd = copysign(0.0, vx / wx);
  }
  *fdiv = fd;
  *fmodulo = mod;
}

static int int_arith(int op, int64_t a, int64_t b, heron__value *out, int col,
                     heron_error *err) {
  int64_t r = 0;
  int over = 0;
  switch (op) {
  case OP_ADD:
    over = __builtin_add_overflow(a, b, &r);
    break;
  case OP_SUB:
    over = __builtin_sub_overflow(a, b, &r);
    break;
  case OP_MUL:
    over = __builtin_mul_overflow(a, b, &r);
    break;
  case OP_DIV:
    if (b == 0)
      return eval_fail(err, col, "division by zero");
    set_float(out, true_div(a, b));
    return HERON_OK;
  case OP_FLOORDIV:
    if (b == 0)
      return eval_fail(err, col, "integer division by zero");
    over = a == INT64_MIN && b == -1;
    if (!over) {
      r = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0)))
        r--;
    }
    break;
  case OP_MOD:
    if (b == 0)
      return eval_fail(err, col, "integer modulo by zero");
    r = b == -1 ? 0 : a % b; /* INT64_MIN % -1 traps in C */
    if (r != 0 && ((r < 0) != (b < 0)))
      r += b;
    break;
  default: /* OP_POW */
    if (b < 0)
      return fpow((double)a, (double)b, out, col, err);
    over = ipow(a, b, &r) != 0;
  }
  if (over)
    return eval_fail(err, col, "integer overflow in '%s' (beyond int64)",
                     op_name[op]);
  set_int(out, r);
  return HERON_OK;
}

/* x op y for an arithmetic operator; out may alias x. */
static int arith(int op, const heron__value *x, const heron__value *y,
                 heron__value *out, int col, heron_error *err) {
  if (is_str(x) || is_str(y))
    return eval_fail(
        err, col, "'%s' between %s and %s is not supported%s", op_name[op],
        type_name(x), type_name(y),
        is_str(x) && is_str(y) && op == OP_ADD ? " (strings are not joined)"
        : op == OP_MUL && is_str(x) != is_str(y) &&
                (x->kind == HERON__VAL_INT || y->kind == HERON__VAL_INT)
            ? " (strings are not repeated)"
            : "");
  if (x->kind == HERON__VAL_INT && y->kind == HERON__VAL_INT)
    return int_arith(op, x->i, y->i, out, col, err);
  double a = as_float(x), b = as_float(y), q, m;
  switch (op) {
  case OP_ADD:
    set_float(out, a + b);
    break;
  case OP_SUB:
    set_float(out, a - b);
    break;
  case OP_MUL:
    set_float(out, a * b);
    break;
  case OP_DIV:
    if (b == 0.0)
      return eval_fail(err, col, "float division by zero");
    set_float(out, a / b);
    break;
  case OP_FLOORDIV:
  case OP_MOD:
    if (b == 0.0)
      return eval_fail(err, col, "float %s by zero",
                       op == OP_MOD ? "modulo" : "floor division");
    fdivmod(a, b, &q, &m);
    set_float(out, op == OP_MOD ? m : q);
    break;
  default:
    return fpow(a, b, out, col, err);
  }
  return HERON_OK;
}

/* Python's int(text): optional blanks and sign, decimal digits with single
 * underscores between them. */
static int int_of_text(const char *s, int64_t *out) {
  while (*s == ' ' || *s == '\t' || *s == '\n')
    s++;
  int neg = *s == '-';
  if (*s == '-' || *s == '+')
    s++;
  uint64_t v = 0;
  int any = 0;
  for (; is_digit(*s) || (*s == '_' && any && is_digit(s[1])); s++) {
    if (*s == '_')
      continue;
    if (v > (UINT64_MAX - 9) / 10)
      return -1;
    v = v * 10 + (uint64_t)(*s - '0');
    any = 1;
  }
  while (*s == ' ' || *s == '\t' || *s == '\n')
    s++;
  if (!any || *s || v > (uint64_t)INT64_MAX + neg)
    return -1;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 0;
}

/* Python's float(text) for plain decimal text, inf and nan. */
static int float_of_text(const char *s, double *out) {
  char buf[64];
  while (*s == ' ' || *s == '\t' || *s == '\n')
    s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
    n--;
  if (n == 0 || n >= sizeof buf)
    return -1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  /* strtod also reads hexadecimal and nan(...), which Python refuses. */
  if (strpbrk(buf, "xX()"))
    return -1;
  char *end;
  *out = strtod(buf, &end);
  return *end || end == buf ? -1 : 0;
}

static int eval_node(const heron__expr *e, int32_t id, const heron__value *vals,
                     heron__value *out, heron_error *err);

/* min / max: the first extreme argument, as Python (max(1, 1.0) is 1).
 * Every argument is evaluated before a comparison error is reported, as
 * Python builds the argument list first. */
static int eval_minmax(const heron__expr *e, const node *nd,
                       const heron__value *vals, heron__value *out,
                       heron_error *err) {
  const int32_t *kid = e->kids + nd->a;
  int op = nd->op == FN_MAX ? OP_GT : OP_LT, bad = 0, rc, better;
  heron__value best, v;
  if ((rc = eval_node(e, kid[0], vals, &best, err)) != HERON_OK)
    return rc;
  heron__value badv = best;
  for (int k = 1; k < nd->n; k++) {
    if ((rc = eval_node(e, kid[k], vals, &v, err)) != HERON_OK)
      return rc;
    if (bad)
      continue;
    if (is_str(&v) != is_str(&best)) {
      bad = 1;
      badv = v;
      continue;
    }
    compare(op, &v, &best, &better, nd->col, err);
    if (better)
      best = v;
  }
  if (bad)
    return eval_fail(err, nd->col, "%s() between %s and %s is not supported",
                     fn_name[nd->op], type_name(&best), type_name(&badv));
  *out = best;
  return HERON_OK;
}

static int eval_call(const heron__expr *e, const node *nd,
                     const heron__value *vals, heron__value *out,
                     heron_error *err) {
  if (nd->op == FN_MIN || nd->op == FN_MAX)
    return eval_minmax(e, nd, vals, out, err);
  heron__value v;
  int rc = eval_node(e, e->kids[nd->a], vals, &v, err);
  if (rc != HERON_OK)
    return rc;
  switch (nd->op) {
  case FN_ABS:
    if (is_str(&v))
      return eval_fail(err, nd->col, "abs() of a str is not supported");
    if (v.kind == HERON__VAL_FLOAT)
      set_float(out, fabs(v.f));
    else if (v.i == INT64_MIN)
      return eval_fail(err, nd->col, "integer overflow in abs()");
    else
      set_int(out, v.i < 0 ? -v.i : v.i);
    return HERON_OK;
  case FN_INT:
    if (v.kind == HERON__VAL_INT) {
      *out = v;
    } else if (is_str(&v)) {
      if (int_of_text(v.s, &out->i) != 0)
        return eval_fail(err, nd->col, "int() of '%.40s' is not an int64", v.s);
      out->kind = HERON__VAL_INT;
    } else {
      if (isnan(v.f) || isinf(v.f))
        return eval_fail(err, nd->col, "int() of %s",
                         isnan(v.f) ? "nan" : "inf");
      if (!(v.f >= -9223372036854775808.0 && v.f < 9223372036854775808.0))
        return eval_fail(err, nd->col, "int() of %g is beyond int64", v.f);
      set_int(out, (int64_t)v.f);
    }
    return HERON_OK;
  default: /* FN_FLOAT */
    if (is_str(&v)) {
      if (float_of_text(v.s, &out->f) != 0)
        return eval_fail(err, nd->col, "float() of '%.40s' is not a number",
                         v.s);
      out->kind = HERON__VAL_FLOAT;
    } else {
      set_float(out, as_float(&v));
    }
    return HERON_OK;
  }
}

/* x in list: Python builds the list first, so every element is evaluated
 * (and may fail) before the answer. */
static int eval_in(const heron__expr *e, const heron__value *x, int32_t list,
                   const heron__value *vals, int *found, heron_error *err) {
  const node *nd = &e->nodes[list];
  *found = 0;
  for (int k = 0; k < nd->n; k++) {
    heron__value v;
    int rc = eval_node(e, e->kids[nd->a + k], vals, &v, err), eq;
    if (rc != HERON_OK)
      return rc;
    if (!*found) {
      compare(OP_EQ, x, &v, &eq, nd->col, err);
      *found = eq;
    }
  }
  return HERON_OK;
}

static int eval_cmp(const heron__expr *e, const node *nd,
                    const heron__value *vals, heron__value *out,
                    heron_error *err) {
  const int32_t *kid = e->kids + nd->a;
  heron__value left, right;
  int rc = eval_node(e, kid[0], vals, &left, err), res = 1;
  if (rc != HERON_OK)
    return rc;
  for (int k = 1; k < nd->n; k++) {
    int op = KID_OP(kid[2 * k - 1]), col = KID_COL(kid[2 * k - 1]);
    if (op == OP_IN || op == OP_NOTIN) {
      rc = eval_in(e, &left, kid[2 * k], vals, &res, err);
      res ^= op == OP_NOTIN;
    } else {
      rc = eval_node(e, kid[2 * k], vals, &right, err);
      if (rc == HERON_OK)
        rc = compare(op, &left, &right, &res, col, err);
      left = right;
    }
    if (rc != HERON_OK)
      return rc;
    if (!res)
      break;
  }
  set_int(out, res);
  return HERON_OK;
}

static int eval_node(const heron__expr *e, int32_t id, const heron__value *vals,
                     heron__value *out, heron_error *err) {
  const node *nd = &e->nodes[id];
  const int32_t *kid = e->kids + nd->a;
  heron__value y;
  int rc;
  switch (nd->kind) {
  case N_CONST:
    *out = nd->v;
    return HERON_OK;
  case N_NAME:
    *out = vals[nd->a];
    return HERON_OK;
  case N_NEG:
  case N_POS:
    if ((rc = eval_node(e, nd->a, vals, out, err)) != HERON_OK)
      return rc;
    if (is_str(out))
      return eval_fail(err, nd->col, "unary %c of a str is not supported",
                       nd->kind == N_NEG ? '-' : '+');
    if (nd->kind == N_POS)
      return HERON_OK;
    if (out->kind == HERON__VAL_FLOAT)
      out->f = -out->f;
    else if (out->i == INT64_MIN)
      return eval_fail(err, nd->col, "integer overflow in unary -");
    else
      out->i = -out->i;
    return HERON_OK;
  case N_NOT:
    if ((rc = eval_node(e, nd->a, vals, out, err)) != HERON_OK)
      return rc;
    set_int(out, !truthy(out));
    return HERON_OK;
  case N_POW:
    if ((rc = eval_node(e, nd->a, vals, out, err)) != HERON_OK ||
        (rc = eval_node(e, nd->b, vals, &y, err)) != HERON_OK)
      return rc;
    return arith(OP_POW, out, &y, out, nd->col, err);
  case N_ARITH:
    if ((rc = eval_node(e, kid[0], vals, out, err)) != HERON_OK)
      return rc;
    for (int k = 1; k < nd->n; k++) {
      int32_t op = kid[2 * k - 1];
      if ((rc = eval_node(e, kid[2 * k], vals, &y, err)) != HERON_OK ||
          (rc = arith(KID_OP(op), out, &y, out, KID_COL(op), err)) != HERON_OK)
        return rc;
    }
    return HERON_OK;
  case N_AND:
  case N_OR:
    /* Python's and / or: the first operand that decides, else the last. */
    for (int k = 0; k < nd->n; k++) {
      if ((rc = eval_node(e, kid[k], vals, out, err)) != HERON_OK)
        return rc;
      if (truthy(out) == (nd->kind == N_OR))
        break;
    }
    return HERON_OK;
  case N_CMP:
    return eval_cmp(e, nd, vals, out, err);
  case N_CALL:
    return eval_call(e, nd, vals, out, err);
  default: /* N_LIST, only read by eval_in */
    return eval_fail(err, nd->col, "a list is not a value");
  }
}

int heron__expr_eval(const heron__expr *e, const heron__value *vals,
                     heron__value *out, heron_error *err) {
  return eval_node(e, e->root, vals, out, err);
}

int heron__expr_holds(const heron__expr *e, const heron__value *vals) {
  heron__value v;
  return eval_node(e, e->root, vals, &v, NULL) == HERON_OK && truthy(&v);
}
