/* core/space/expr_impl.h - what the lexer (expr_lex.c), the parser
 * (expr_parse.c) and the evaluator (expr_eval.c) of the restriction
 * language share; expr.h is the language's interface.
 *
 * The tree: one node array, each node a kind (N_*) with its operands; a
 * chain of one precedence level (a + b - c, a < b <= c, a and b and c) is
 * one node whose operands (and, between them, the operators of arithmetic
 * and comparisons: KID_OP, KID_COL) are a run of the kids array.
 * The tokens and the parser's state: the lexer fills p->toks, the parser
 * reads them; both report through heron__expr_fail, which keeps the first
 * failure as "column C: <message>".
 */
#ifndef HERON_CORE_SPACE_EXPR_IMPL_H
#define HERON_CORE_SPACE_EXPR_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "core/space/expr.h"

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

enum { FN_MIN, FN_MAX, FN_ABS, FN_INT, FN_FLOAT };

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

/* The text of each OP_* and of each FN_* (expr_parse.c). */
extern const char *const heron__expr_op_name[];
extern const char *const heron__expr_fn_name[];

/* Grows *p (of *cap elements of size sz) to hold at least need; -1 when
 * out of memory (expr_parse.c). */
int heron__expr_grow(void *pp, int *cap, int need, size_t sz);

static inline int heron__expr_is_digit(char c) { return c >= '0' && c <= '9'; }

/* ---- Tokens and the parser's state ------------------------------------- */

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
  size_t cpos; /* heron__expr_column(): the last byte asked, its column */
  int ccol;
  heron_error *err;
  int rc; /* the first failure */
} parser;

/* ---- expr_lex.c --------------------------------------------------------- */

/* The 1-based column of byte pos of the text, counting UTF-8 characters. */
int heron__expr_column(parser *p, size_t pos);

/* Records the first failure as "column C: <message>"; returns -1 so a
 * parse function can `return heron__expr_fail(...)`. */
HERON_PRINTF(4, 5)
int heron__expr_fail(parser *p, int code, size_t pos, const char *fmt, ...);

/* heron__expr_fail with HERON_ENOMEM. */
int heron__expr_oom(parser *p);

/* 1 when s[0..len) is one of Python's keywords. */
int heron__expr_is_keyword(const char *s, size_t len);

/* Cuts p->text into p->toks, ending with a T_END token; 0, or -1 after
 * heron__expr_fail. */
int heron__expr_lex(parser *p);

#endif /* HERON_CORE_SPACE_EXPR_IMPL_H */
