#!/usr/bin/env python3
"""tests/registration/check_registration.py - every TEST of the C test
sources is a ctest, and every ctest of a C test file is one of its TESTs.

    check_registration.py --ctest CTEST --build BUILD_DIR --source SOURCE_DIR
    check_registration.py --self-test

tests/CMakeLists.txt (heron_add_test_file) registers each TEST(name) of a
file tests/**/<file>.c as the ctest <file>.<name>, running the file's
executable with the argument <name>.  This reads every tests/**/*.c with a
small C tokenizer (comments, string and character literals and preprocessor
lines removed, so "#define TEST(fn_)", a TEST in a comment or in a string
is no test) and takes each `TEST ( name )` outside any braces, however the
tokens are spread over lines, as a test.  It then lists the build's tests
(`ctest --show-only=json-v1` in BUILD_DIR) and fails, naming each one, on

  - a TEST that ctest does not list (it would never run), and
  - a ctest <file>.<name> that runs a C test file's executable but names
    no TEST of that file (it would fail with "no test named").

Exit 0 when both lists agree, 1 otherwise, 2 on a usage error or when
ctest cannot be asked.
"""
import argparse
import json
import os
import re
import subprocess
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tokens(text):
    """Yields (token, line) for the identifiers and punctuation of C source
    text, skipping comments, string/character literals and preprocessor
    lines (with their backslash continuations)."""
    i, n, line = 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            line += 1
            continue
        if at_line_start and c == "#":
            # A preprocessor line, up to a newline not escaped by "\".
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    line += 1
                    i += 1
                elif text.startswith("/*", i):
                    end = text.find("*/", i + 2)
                    end = n if end < 0 else end + 2
                    line += text.count("\n", i, end)
                    i = end
                    continue
                i += 1
            continue
        at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    line += 1
                    i += 1
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                if j < n and text[j] == "\n":
                    line += 1
                j += 1
            i = j + 1
            yield ("<literal>", line)
            continue
        m = IDENT.match(text, i)
        if m:
            yield (m.group(0), line)
            i = m.end()
            continue
        if c.isdigit():
            j = i
            while j < n and (text[j].isalnum() or text[j] in "._"):
                j += 1
            yield ("<number>", line)
            i = j
            continue
        yield (c, line)
        i += 1


def tests_in(text):
    """The TESTs of a C source: [(name, line)] for each `TEST ( name )`
    outside braces."""
    toks = list(tokens(text))
    found, depth = [], 0
    for k, (t, line) in enumerate(toks):
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
        elif (t == "TEST" and depth == 0 and k + 3 < len(toks)
              and toks[k + 1][0] == "(" and IDENT.fullmatch(toks[k + 2][0])
              and toks[k + 3][0] == ")"):
            found.append((toks[k + 2][0], line))
    return found


def exe_of(stem):
    """The executable heron_add_test_file builds for tests/**/<stem>.c."""
    return stem if stem.startswith("test_") else "test_" + stem


def ctest_tests(ctest, build):
    out = subprocess.run([ctest, "--show-only=json-v1"], cwd=build,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("check_registration: %s --show-only=json-v1 in %s failed "
                 "(status %d): %s" % (ctest, build, out.returncode,
                                      out.stderr.strip()))
    try:
        data = json.loads(out.stdout)
    except ValueError as e:
        sys.exit("check_registration: ctest's JSON in %s is unreadable: %s"
                 % (build, e))
    tests = {}
    for t in data.get("tests", []):
        cmd = t.get("command") or []
        tests[t["name"]] = cmd
    return tests


SELF_TEST_SOURCE = r"""/* TEST(in_a_comment)
TEST(at_a_comment_line_start) */
// TEST(in_a_line_comment) \
   TEST(in_its_continuation)
#define TEST(fn_) static void fn_(void)
#define ALSO TEST(in_a_macro) \
  TEST(in_the_macro_continuation)
static const char *s = "TEST(in_a_string)\" TEST(still_in_it)";
static const char c = '"'; TEST(after_a_quote_char) {}
TEST(one) { if (1) { TEST(inside_braces); } }
TEST(
    wrapped) {}
TEST
( spread ) {}
  TEST(indented) {}
TEST(two)
"""

SELF_TEST_WANT = [("after_a_quote_char", 9), ("one", 10), ("wrapped", 11),
                  ("spread", 13), ("indented", 15), ("two", 16)]


def self_test():
    """The tokenizer on a source of every form and every mention that is
    no test; 0 when it finds exactly the tests, with their lines."""
    got = tests_in(SELF_TEST_SOURCE)
    if got != SELF_TEST_WANT:
        print("FAIL: the parser found %s; want %s" % (got, SELF_TEST_WANT))
        return 1
    print("the parser found the %d tests, with their lines, and none of the "
          "mentions" % len(got))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ctest", default="ctest")
    ap.add_argument("--build", help="the build folder")
    ap.add_argument("--source", help="the source tree")
    ap.add_argument("--self-test", action="store_true",
                    help="check the parser on a source of tricky forms")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.build or not a.source:
        ap.error("--build and --source are needed")
    tests_dir = os.path.join(a.source, "tests")
    if not os.path.isdir(tests_dir):
        print("check_registration: no folder %s" % tests_dir, file=sys.stderr)
        return 2
    if not os.path.isfile(os.path.join(a.build, "CTestTestfile.cmake")):
        print("check_registration: %s is no configured build folder (no "
              "CTestTestfile.cmake)" % a.build, file=sys.stderr)
        return 2
    registered = ctest_tests(a.ctest, a.build)

    defined = {}  # stem -> (relative path, [(name, line)])
    for root, dirs, files in os.walk(tests_dir):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".c"):
                continue
            path = os.path.join(root, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                found = tests_in(fh.read())
            if found:
                rel = os.path.relpath(path, a.source)
                stem = f[:-2]
                if stem in defined:
                    print("check_registration: two test files named %s.c (%s "
                          "and %s): their ctest names would collide"
                          % (stem, defined[stem][0], rel), file=sys.stderr)
                    return 1
                defined[stem] = (rel, found)

    problems = []
    total = 0
    for stem, (rel, found) in sorted(defined.items()):
        names = set()
        for name, line in found:
            total += 1
            names.add(name)
            if "%s.%s" % (stem, name) not in registered:
                problems.append("%s:%d: TEST(%s) is not registered (ctest "
                                "lists no %s.%s)" % (rel, line, name, stem,
                                                     name))
        exe = exe_of(stem)
        for t, cmd in sorted(registered.items()):
            if not t.startswith(stem + "."):
                continue
            if not cmd or os.path.basename(cmd[0]) != exe:
                continue
            # The TEST a ctest runs is its first argument ("exe name");
            # data-driven ctests (test_llm_reply.case.X runs the TEST
            # `cases` on one case file) are named otherwise.
            ran = cmd[1] if len(cmd) > 1 else t[len(stem) + 1:]
            if ran not in names:
                problems.append("ctest %s runs %s %s, but %s has no TEST(%s)"
                                % (t, exe, ran, rel, ran))
    for p in problems:
        print("FAIL: " + p)
    print("%d TESTs in %d test files under tests/, %d ctests in %s; %d "
          "problem(s)" % (total, len(defined), len(registered), a.build,
                          len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
