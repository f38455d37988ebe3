/* core/space/expr_parse.c - the restriction language's parser (expr.h;
 * what the files of the language share is in expr_impl.h).
 *
 * After the lexer (expr_lex.c) has cut the text into tokens, a
 * recursive-descent parser (one function per precedence level, Python's
 * order) builds a tree in one node array, and a last pass points string
 * literals into the expression's string pool and lists the names used.
 *
 * Chains of one precedence level (a + b - c, a * b // c, a < b <= c,
 * a and b and c) become one node with a list of operands, evaluated in a
 * loop, so the tree is only as deep as the text's nesting (parentheses,
 * unary operators, **).  That nesting is limited to MAX_DEPTH levels while
 * parsing, which bounds the recursion of both the parser and the evaluator
 * (expr_eval.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/space/expr_impl.h"

/* Nesting levels the parser accepts (parentheses, call arguments, list
 * elements, unary operators, not, **). */
#define MAX_DEPTH 200

/* ---- The tree ---------------------------------------------------------- */

const char *const heron__expr_op_name[] = {"+",  "-",  "*",  "/",  "//",
                                           "%",  "**", "==", "!=", "<",
                                           "<=", ">",  ">=", "in", "not in"};

const char *const heron__expr_fn_name[] = {"min", "max", "abs", "int", "float"};

int heron__expr_grow(void *pp, int *cap, int need, size_t sz) {
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
             heron__expr_is_keyword(s, t->len) ? "keyword" : "name", len, s,
             more);
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
  return heron__expr_fail(p, HERON_EPARSE, cur(p)->pos, "%s %s%s",
                          operand ? "expected an operand, found" : "unexpected",
                          d, why(p, cur(p), operand));
}

static int new_node(parser *p, int kind, size_t pos) {
  heron__expr *e = p->e;
  if (heron__expr_grow(&e->nodes, &e->capnodes, e->nnodes + 1, sizeof(node)))
    return heron__expr_oom(p);
  node *nd = &e->nodes[e->nnodes];
  memset(nd, 0, sizeof *nd);
  nd->kind = (uint8_t)kind;
  nd->col = heron__expr_column(p, pos);
  return e->nnodes++;
}

static int push(parser *p, int32_t x) {
  if (heron__expr_grow(&p->stk, &p->capstk, p->nstk + 1, sizeof(int32_t)))
    return heron__expr_oom(p);
  p->stk[p->nstk++] = x;
  return 0;
}

/* A node of `kind` whose kids are stk[base..nstk), n operands; pops them. */
static int chain_node(parser *p, int kind, size_t pos, int base, int n) {
  heron__expr *e = p->e;
  int len = p->nstk - base;
  int id = new_node(p, kind, pos);
  if (id < 0 ||
      heron__expr_grow(&e->kids, &e->capkids, e->nkids + len, sizeof(int32_t)))
    return heron__expr_oom(p);
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
  int col = heron__expr_column(p, cur(p)->pos);
  return op | (col < 0x7fffff ? col : 0x7fffff) << 8;
}

/* One nesting level more; fails past MAX_DEPTH at the current token. */
static int enter(parser *p) {
  if (++p->depth > MAX_DEPTH)
    return heron__expr_fail(
        p, HERON_EPARSE, cur(p)->pos,
        "expression nested too deeply (more than %d levels)", MAX_DEPTH);
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
      return heron__expr_fail(p, HERON_EPARSE, cur(p)->pos,
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
      return heron__expr_fail(
          p, HERON_EPARSE, cur(p)->pos,
          "expected ',' or '%s' to close the '%c' at column %d, "
          "found %s%s",
          close, *close == ')' ? '(' : '[', heron__expr_column(p, open), d,
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
    return heron__expr_fail(
        p, HERON_EPARSE, t->pos,
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
    return heron__expr_fail(
        p, HERON_EPARSE, open,
        "'in' needs a list or a tuple: (x) is not a tuple, (x,) is");
  return chain_node(p, N_LIST, open, base, n);
}

/* name(args): one of the known functions. */
static int parse_call(parser *p) {
  const tok *t = cur(p);
  size_t pos = t->pos;
  int fn = -1;
  for (int k = 0; k < 5; k++)
    if (tok_is(p, t, T_NAME, heron__expr_fn_name[k]))
      fn = k;
  for (int k = 0; fn < 0 && k < p->nnames; k++)
    if (tok_is(p, t, T_NAME, p->names[k]))
      return heron__expr_fail(
          p, HERON_EPARSE, pos,
          "'%s' is a parameter, not a function; only min, max, abs, "
          "int and float can be called",
          p->names[k]);
  if (fn < 0)
    return heron__expr_fail(
        p, HERON_EPARSE, pos,
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
    return heron__expr_fail(
        p, HERON_EPARSE, pos,
        "%s() needs at least 2 arguments (lists are not supported)",
        heron__expr_fn_name[fn]);
  if (fn != FN_MIN && fn != FN_MAX && n != 1)
    return heron__expr_fail(p, HERON_EPARSE, pos,
                            "%s() takes exactly 1 argument, not %d",
                            heron__expr_fn_name[fn], n);
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
  return heron__expr_fail(p, HERON_EPARSE, t->pos,
                          "unknown name '%.*s'; known: %s",
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
  if (heron__expr_is_keyword(s, t->len))
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
      return heron__expr_fail(
          p, HERON_EPARSE, cur(p)->pos,
          "expected ')' to close the '(' at column %d, found %s%s",
          heron__expr_column(p, open), d, why(p, cur(p), 0));
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
    return heron__expr_fail(
        p, HERON_EPARSE, cur(p)->pos,
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
    if (is_op(p, heron__expr_op_name[ops[k]]))
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
      return heron__expr_fail(
          p, HERON_EPARSE, cur(p)->pos,
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
  if (!e->kids && heron__expr_grow(&e->kids, &e->capkids, 1, sizeof(int32_t)))
    return heron__expr_oom(p);
  int n = 0;
  for (int k = 0; k < p->nnames; k++)
    n += p->used[k];
  e->used = malloc(sizeof(int) * (size_t)(n ? n : 1));
  if (!e->used)
    return heron__expr_oom(p);
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
    heron__expr_oom(&p);
  } else if (heron__expr_lex(&p) == 0) {
    if (p.toks[0].kind == T_END)
      heron__expr_fail(&p, HERON_EPARSE, 0, "empty expression");
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
