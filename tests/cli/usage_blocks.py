#!/usr/bin/env python3
"""usage_blocks.py PATH... [--fix] - the usage blocks pasted into the README
and the docs are the tools' real `--help` output.

Each PATH is a Markdown file or a folder, searched for *.md files.  A fenced
block without a language whose first line is "Usage: TOOL" or "usage: TOOL"
is TOOL's --help text.  Each tool's binary comes from the environment:
HERON_SEARCH, HERON_SPACE, HERON_BENCH, HERON_LIB, HERON_FAKE_LLM,
HERON_BENCH_SUITE (a tool whose variable is unset or empty is reported as not
checked; at least one block must be checked).  Exits 1 naming each block that differs, with a
unified diff; --fix rewrites those blocks in place instead.
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
    "heron-lib": "HERON_LIB",
    "fake-llm-server": "HERON_FAKE_LLM",
    "bench_suite": "HERON_BENCH_SUITE",
}


def markdown_files(paths):
    """The .md files of paths (files as given, folders searched), sorted."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                out.extend(os.path.join(root, f) for f in sorted(files)
                           if f.endswith(".md"))
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise SystemExit("usage_blocks.py: %s: no such file or folder" % p)
    return out


HELP = {}


def help_text(exe):
    if exe not in HELP:
        HELP[exe] = subprocess.run([exe, "--help"], capture_output=True,
                                   text=True, timeout=60).stdout
    return HELP[exe].rstrip("\n").split("\n")


def check_file(path, fix, unchecked):
    """Checks (or fixes) one file; returns (blocks checked, blocks differing)."""
    text = open(path).read()
    lines = text.split("\n")
    out, i, bad, checked = [], 0, 0, 0
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
            real = help_text(exe)
            where = "%s:%d" % (path, i + 2)
            if real == body:
                print("%s: the --help block of %s is its output" %
                      (where, m.group(1)))
            else:
                bad += 1
                if fix:
                    print("fixed the --help block of %s at %s" %
                          (m.group(1), where))
                    body = real
                else:
                    print("%s: the --help block of %s differs from its "
                          "output:" % (where, m.group(1)))
                    sys.stdout.writelines(
                        l + "\n" for l in difflib.unified_diff(
                            body, real, path, m.group(1) + " --help",
                            lineterm=""))
        out.extend(body)
        if j < len(lines):
            out.append(lines[j])
        i = j + 1
    if fix and bad:
        open(path, "w").write("\n".join(out))
    return checked, bad


def main():
    args = sys.argv[1:]
    fix = "--fix" in args
    paths = [a for a in args if a != "--fix"]
    if not paths:
        print(__doc__.strip())
        return 2
    checked = bad = 0
    unchecked = set()
    for path in markdown_files(paths):
        c, b = check_file(path, fix, unchecked)
        checked += c
        bad += b
    for t in sorted(unchecked):
        print("not checked: %s (its binary was not given)" % t)
    if checked == 0:
        print("no --help block was checked")
        return 1
    if fix:
        return 0
    print("%d --help blocks checked, %d differ" % (checked, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
