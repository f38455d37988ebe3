#!/usr/bin/env python3
"""readme_help.py README [--fix] - the README's pasted `--help` blocks are
the tools' real `--help` output.

A fenced block of the README whose first line is "Usage: TOOL" or
"usage: TOOL" is TOOL's --help text.  Each tool's binary comes from the
environment: HERON_SEARCH, HERON_SPACE, HERON_BENCH, HERON_FAKE_LLM,
HERON_BENCH_SUITE (a tool whose variable is unset or empty is reported as not
checked; at least one must be checked).  Exits 1 naming each block that
differs, with a unified diff; --fix rewrites those blocks in place instead.
"""
import difflib
import os
import re
import subprocess
import sys

TOOLS = {
    "heron-search": "HERON_SEARCH",
    "heron-space": "HERON_SPACE",
    "heron-bench": "HERON_BENCH",
    "fake-llm-server": "HERON_FAKE_LLM",
    "bench_suite": "HERON_BENCH_SUITE",
}


def main():
    path = sys.argv[1]
    fix = "--fix" in sys.argv[2:]
    text = open(path).read()
    lines = text.split("\n")
    out, i, bad, checked, unchecked = [], 0, 0, 0, set()
    while i < len(lines):
        out.append(lines[i])
        if not lines[i].startswith("```"):
            i += 1
            continue
        # A fenced block (with a language or without): find its end.
        j = i + 1
        while j < len(lines) and lines[j] != "```":
            j += 1
        body = lines[i + 1:j]
        m = re.match(r"^[Uu]sage: (\S+)", body[0]) if body else None
        if lines[i] != "```":
            m = None  # a block with a language is not pasted --help
        exe = os.environ.get(TOOLS.get(m.group(1), ""), "") if m else ""
        if m and m.group(1) in TOOLS and not exe:
            unchecked.add(m.group(1))
        if m and exe:
            checked += 1
            real = subprocess.run([exe, "--help"], capture_output=True,
                                  text=True, timeout=60).stdout
            real = real.rstrip("\n").split("\n")
            if real == body:
                print("%s:%d: the --help block of %s is its output" %
                      (path, i + 2, m.group(1)))
            else:
                bad += 1
                where = "%s:%d" % (path, i + 2)
                if fix:
                    print("fixed the --help block of %s at %s" %
                          (m.group(1), where))
                    body = real
                else:
                    print("%s: the --help block of %s differs from its "
                          "output:" % (where, m.group(1)))
                    sys.stdout.writelines(
                        l + "\n" for l in difflib.unified_diff(
                            body, real, "README", m.group(1) + " --help",
                            lineterm=""))
        out.extend(body)
        if j < len(lines):
            out.append(lines[j])
        i = j + 1
    for t in sorted(unchecked):
        print("not checked: %s (its binary was not given)" % t)
    if checked == 0:
        print("no --help block was checked")
        return 1
    if fix:
        open(path, "w").write("\n".join(out))
        return 0
    print("%d --help blocks checked, %d differ" % (checked, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
