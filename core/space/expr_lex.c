/* core/space/expr_lex.c - the restriction language's lexer (expr.h; what
 * the files of the language share is in expr_impl.h): the text is cut into
 * tokens (numbers and strings decoded as Python reads them, names,
 * operators), and a failure anywhere in parsing is reported here as
 * "column C: <message>", the column counted in UTF-8 characters.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/space/expr_impl.h"

/* The 1-based column of byte pos, counting UTF-8 characters.  Parsing
 * asks for columns left to right, so counting resumes from the last
 * answer and a long text costs linear time. */
int heron__expr_column(parser *p, size_t pos) {
  if (pos < p->cpos) {
    p->cpos = 0;
    p->ccol = 1;
  }
  for (; p->cpos < pos; p->cpos++)
    p->ccol += ((unsigned char)p->text[p->cpos] & 0xC0) != 0x80;
  return p->ccol;
}

int heron__expr_fail(parser *p, int code, size_t pos, const char *fmt, ...) {
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
  heron_error_set(p->err, code, "column %d: %s", heron__expr_column(p, pos),
                  msg);
  return -1;
}

int heron__expr_oom(parser *p) {
  return heron__expr_fail(p, HERON_ENOMEM, 0, "%s", "");
}

static const char *const keywords[] = {
    "False",  "None",   "True",    "and",      "as",       "assert", "async",
    "await",  "break",  "class",   "continue", "def",      "del",    "elif",
    "else",   "except", "finally", "for",      "from",     "global", "if",
    "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
    "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};

int heron__expr_is_keyword(const char *s, size_t len) {
  for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++)
    if (strlen(keywords[k]) == len && memcmp(keywords[k], s, len) == 0)
      return 1;
  return 0;
}

static int is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_name_char(char c) {
  return is_name_start(c) || heron__expr_is_digit(c);
}

/* Appends s[0..len) and a NUL to the string pool; the offset in *off. */
static int pool_add(parser *p, const char *s, size_t len, size_t *off) {
  heron__expr *e = p->e;
  if (e->nstrs + len + 1 > e->capstrs) {
    size_t c = e->capstrs ? e->capstrs : 64;
    while (c < e->nstrs + len + 1)
      c *= 2;
    char *q = realloc(e->strs, c);
    if (!q)
      return heron__expr_oom(p);
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
    if (heron__expr_is_digit(c))
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
      return heron__expr_fail(p, HERON_EPARSE, start,
                              "integer literal beyond int64");
    if (rc < 0)
      return heron__expr_fail(p, HERON_EPARSE, start, "invalid number literal");
  } else {
    /* Decimal: the digits are checked here, the value computed after. */
    while (heron__expr_is_digit(s[i]) ||
           (s[i] == '_' && i > start && heron__expr_is_digit(s[i - 1]) &&
            heron__expr_is_digit(s[i + 1])))
      i++;
    if (s[i] == '.') {
      isfloat = 1;
      i++;
      while (heron__expr_is_digit(s[i]) ||
             (s[i] == '_' && heron__expr_is_digit(s[i - 1]) &&
              heron__expr_is_digit(s[i + 1])))
        i++;
    }
    if ((s[i] == 'e' || s[i] == 'E') &&
        (heron__expr_is_digit(s[i + 1]) ||
         ((s[i + 1] == '+' || s[i + 1] == '-') &&
          heron__expr_is_digit(s[i + 2])))) {
      isfloat = 1;
      i += 2;
      while (heron__expr_is_digit(s[i]) ||
             (s[i] == '_' && heron__expr_is_digit(s[i + 1])))
        i++;
    }
  }
  if (s[i] == 'j' || s[i] == 'J')
    return heron__expr_fail(p, HERON_EPARSE, start,
                            "complex numbers are not supported");
  if (is_name_char(s[i]) || s[i] == '.')
    return heron__expr_fail(p, HERON_EPARSE, start,
                            "invalid number literal '%.*s'",
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
      return heron__expr_fail(p, HERON_EPARSE, start,
                              "integer literal beyond int64");
    if (s[start] == '0' && v != 0)
      return heron__expr_fail(
          p, HERON_EPARSE, start,
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
      rc = heron__expr_fail(p, HERON_EPARSE, start,
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
        rc = heron__expr_oom(p);
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
    } else if (d == 'x' || d == 'u' || d == 'U' || d == 'N' ||
               heron__expr_is_digit(d)) {
      rc = heron__expr_fail(p, HERON_EPARSE, i,
                            "escape '\\%c' is not supported", d);
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

int heron__expr_lex(parser *p) {
  const char *s = p->text;
  size_t i = 0;
  for (;;) {
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ||
           s[i] == '\f')
      i++;
    if (heron__expr_grow(&p->toks, &p->captoks, p->ntoks + 1, sizeof(tok)))
      return heron__expr_oom(p);
    tok *t = &p->toks[p->ntoks];
    memset(t, 0, sizeof *t);
    char c = s[i];
    if (c == '\0') {
      t->kind = T_END;
      t->pos = i;
      p->ntoks++;
      return 0;
    }
    if (heron__expr_is_digit(c) ||
        (c == '.' && heron__expr_is_digit(s[i + 1]))) {
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
        return heron__expr_fail(p, HERON_EPARSE, i,
                                "string prefix '%.*s' is not supported",
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
        return heron__expr_fail(p, HERON_EPARSE, i,
                                "unexpected character '%.*s'", len, s + i);
      }
    }
    i = t->pos + t->len;
    p->ntoks++;
  }
}
