#!/usr/bin/env python3
"""tests/space/expr_oracle.py - Python itself as the oracle of core/space/expr.h.

    python3 expr_oracle.py CASES RESULTS

CASES holds one JSON object a line, {"e": "<expression>", "v": {name: value}};
RESULTS gets one JSON object a line, in the same order:

    {"t": "int", "v": 5}            an int (a bool is the int 1 or 0)
    {"t": "float", "v": "0.5"}      a float, as repr() (round-trips exactly)
    {"t": "str", "v": "abc"}
    {"t": "error", "v": "ZeroDivisionError"}

The language keeps its integers in int64 where Python's are unbounded, so
every subexpression's value is checked on the way (the tree is rewritten to
wrap each one in _c): an int beyond int64 anywhere is an OverflowError, as
the C evaluator reports it.  A complex number (a negative base to a
fractional power) is an error too: the language has none.  So is joining
or repeating strings ('a' + 'b', 'a' * 2): the language refuses them (a T1
file using them is refused), so + and * with a str operand are a
TypeError here too (the tree's + and * go through _add and _mul).
"""
import ast
import json
import sys

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def _c(x):
    if isinstance(x, int) and not INT64_MIN <= x <= INT64_MAX:
        raise OverflowError("beyond int64")
    if isinstance(x, complex):
        raise ValueError("complex result")
    return x


def _add(x, y):
    if isinstance(x, str) or isinstance(y, str):
        raise TypeError("strings are not joined")
    return x + y


def _mul(x, y):
    if isinstance(x, str) or isinstance(y, str):
        raise TypeError("strings are not repeated")
    return x * y


class Wrap(ast.NodeTransformer):
    """Wraps every subexpression (but a call's function) in _c(...)."""

    def generic_visit(self, node):
        super().generic_visit(node)
        return node

    def visit_Call(self, node):
        node.args = [self.visit(a) for a in node.args]
        return self.wrap(node)

    def visit(self, node):
        if isinstance(node, ast.Call):
            return self.visit_Call(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op,
                                                      (ast.Add, ast.Mult)):
            fn = "_add" if isinstance(node.op, ast.Add) else "_mul"
            call = ast.copy_location(
                ast.Call(func=ast.Name(id=fn, ctx=ast.Load()),
                         args=[self.visit(node.left), self.visit(node.right)],
                         keywords=[]), node)
            return self.wrap(call)
        node = super().visit(node)
        if isinstance(node, ast.expr) and not isinstance(
                node, (ast.List, ast.Tuple)):
            return self.wrap(node)
        return node

    @staticmethod
    def wrap(node):
        return ast.copy_location(
            ast.Call(func=ast.Name(id="_c", ctx=ast.Load()), args=[node],
                     keywords=[]), node)


def evaluate(text, values):
    tree = ast.parse(text, mode="eval")
    tree.body = Wrap().visit(tree.body)
    code = compile(ast.fix_missing_locations(tree), "<expr>", "eval")
    env = {"__builtins__": {}, "_c": _c, "_add": _add, "_mul": _mul,
           "min": min, "max": max, "abs": abs,
           "int": int, "float": float}
    env.update(values)
    try:
        x = eval(code, env)
    except (ZeroDivisionError, OverflowError, TypeError, ValueError) as exc:
        return {"t": "error", "v": type(exc).__name__}
    if isinstance(x, bool) or isinstance(x, int):
        return {"t": "int", "v": int(x)}
    if isinstance(x, float):
        return {"t": "float", "v": repr(x)}
    if isinstance(x, str):
        return {"t": "str", "v": x}
    return {"t": "error", "v": "unexpected type " + type(x).__name__}


def main():
    with open(sys.argv[1], encoding="utf-8") as f, \
            open(sys.argv[2], "w", encoding="utf-8") as out:
        for line in f:
            case = json.loads(line)
            out.write(json.dumps(evaluate(case["e"], case["v"])) + "\n")


if __name__ == "__main__":
    main()
