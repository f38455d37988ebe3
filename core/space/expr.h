/* core/space/expr.h - the restriction language of T1 files, internal.
 *
 * T1 input files (the auto-tuning community's format, "FAIR Sharing of Data
 * in Autotuning Research", ICPE 2024) state a search space's restrictions
 * as Python expressions over the tuning parameters, e.g.
 *
 *     32 <= block_size_x * block_size_y <= 1024
 *     tile_size_x > 1 or tile_stride_x == 0
 *     use_shmem == 0 or ((bx*tx + (fw-1)) * (by*ty + (fh-1))) < 12*1024
 *
 * This module parses that language once into a tree and evaluates it on
 * parameter values many times (the solver evaluates a restriction whenever
 * its parameters are assigned): expr_lex.c cuts the text into tokens,
 * expr_parse.c builds the tree, expr_eval.c evaluates it (expr_impl.h is
 * what they share).  The language, a subset of Python's
 * expression grammar with Python's semantics:
 *
 *   literals     integers (decimal, 0x..), floats (1.5, 1e-3), strings
 *                ('a' or "a"), True, False
 *   names        the tuning parameters (resolved by the caller)
 *   arithmetic   + - * / (true division) // (floor division) % (Python's
 *                modulo: the sign of the divisor) ** and unary - +
 *   comparisons  == != < <= > >=, chained as in Python (a < b <= c)
 *   logic        and, or (short-circuit, returning an operand, as Python),
 *                not
 *   membership   x in [..] / (..), x not in [..]
 *   calls        min(a, b, ...), max(a, b, ...), abs(a), int(a), float(a)
 *   parentheses
 *
 * Values are integers (int64), floats (double) or strings; booleans are the
 * integers 1 and 0, as in Python.  Integer arithmetic that overflows int64,
 * division or modulo by zero, and operations between incompatible types
 * (a string and a number) are evaluation errors: heron__expr_eval reports
 * them and heron__expr_holds counts them as not holding.  A T1 file's
 * restriction that errs on any combination of its parameters' values is
 * refused when the file is loaded (core/space/t1.h), so in a loaded space
 * an error is never silently taken for "invalid".
 *
 * Where the language stops short of Python, it says so rather than guess:
 * integers beyond int64 (a literal, or any intermediate value) are errors
 * where Python would grow a big integer (so `x * 9223372036854775807 > 0`
 * or `x ** 1000000 > 1` is an error, not a guess); joining or repeating
 * strings ('a' + 'b', 'a' * 2) is an evaluation error, as it would
 * allocate ("... not supported (strings are not repeated)");
 * min and max take two or more arguments (no list); int() and float() of a
 * string read plain decimal text; the right side of in / not in is a list
 * or tuple literal, and only the last operand of a comparison chain;
 * nesting (parentheses, unary operators, not, **) is limited to 200 levels.
 *
 * Anything outside the language (attribute access, subscripts, lambdas,
 * other functions, assignment, unterminated strings, stray characters) is
 * refused by the parser with the 1-based column and what was found, e.g.
 * "column 12: unexpected '.' (attribute access is not supported)".
 */
#ifndef HERON_CORE_SPACE_EXPR_H
#define HERON_CORE_SPACE_EXPR_H

#include <stdint.h>

#include "heron/status.h"

/* A value of the language. */
typedef enum heron__value_kind {
  HERON__VAL_INT = 0,
  HERON__VAL_FLOAT = 1,
  HERON__VAL_STR = 2
} heron__value_kind;

typedef struct heron__value {
  heron__value_kind kind;
  int64_t i;     /* HERON__VAL_INT (booleans are 1 and 0) */
  double f;      /* HERON__VAL_FLOAT */
  const char *s; /* HERON__VAL_STR: owned by whoever made the value (the
                    expression for literals, the caller for names) */
} heron__value;

typedef struct heron__expr heron__expr;

/* Parses `text` into *out.  Every name in the text must be one of
 * names[0..nnames) (HERON_EPARSE naming the unknown name, its column, and
 * the known ones otherwise); a name's index in that array is how
 * heron__expr_eval is given its value.  Errors are HERON_EPARSE with the
 * message "column C: ..." (1-based, in characters of text), HERON_ENOMEM.
 * On failure *out is NULL. */
int heron__expr_parse(const char *text, const char *const *names, int nnames,
                      heron__expr **out, heron_error *err);

/* Frees the tree. NULL is accepted. */
void heron__expr_free(heron__expr *e);

/* The indices (into the parse's names) of the names the expression uses,
 * each once, ascending: *n of them in *idx (owned by the expression). */
void heron__expr_names(const heron__expr *e, const int **idx, int *n);

/* Evaluates the expression with vals[i] the value of names[i] (only the
 * used names are read).  On success *out is the result; HERON_EINVAL with
 * "column C: <reason>" (division by zero, overflow, bad operand types)
 * otherwise.  A string result points into the expression (a literal) or
 * is a string of vals (`or` and `and` return an operand).  Never allocates;
 * thread-safe: the tree is not modified. */
int heron__expr_eval(const heron__expr *e, const heron__value *vals,
                     heron__value *out, heron_error *err);

/* 1 when the expression holds on vals (evaluates without error to a truthy
 * value), 0 otherwise.  The solver's test. */
int heron__expr_holds(const heron__expr *e, const heron__value *vals);

#endif
