/* core/space/expr_eval.c - the restriction language's evaluator (expr.h;
 * the tree it walks is in expr_impl.h, built by expr_parse.c).
 *
 * Evaluation walks the tree recursively with values on the C stack: it
 * never allocates and never writes to the tree, so one expression can be
 * evaluated by many threads at once.  Values follow Python's semantics
 * (true and floor division, Python's modulo, chained comparisons,
 * short-circuit and / or returning an operand); what Python would grow a
 * big integer for, or allocate a string for, is an error.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/space/expr_impl.h"

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
                     heron__expr_op_name[op], type_name(x), type_name(y));
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
                     heron__expr_op_name[op]);
  set_int(out, r);
  return HERON_OK;
}

/* x op y for an arithmetic operator; out may alias x. */
static int arith(int op, const heron__value *x, const heron__value *y,
                 heron__value *out, int col, heron_error *err) {
  if (is_str(x) || is_str(y))
    return eval_fail(
        err, col, "'%s' between %s and %s is not supported%s",
        heron__expr_op_name[op], type_name(x), type_name(y),
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
  for (; heron__expr_is_digit(*s) ||
         (*s == '_' && any && heron__expr_is_digit(s[1]));
       s++) {
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
                     heron__expr_fn_name[nd->op], type_name(&best),
                     type_name(&badv));
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
