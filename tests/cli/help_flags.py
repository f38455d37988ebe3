#!/usr/bin/env python3
"""help_flags.py TOOL SOURCE CLI_H - compares a tool's --help with its table.

Reads the option table of SOURCE (tools/heron_search.c, ...: the entries of
`static cli_option options[]`, with the CLI_TASK_OPTIONS,
CLI_MEASURE_OPTIONS and CLI_SAMPLER_OPTION macros expanded from CLI_H) and the "Options" section of
`TOOL --help`, and fails, naming each difference, unless both list the same
flags in the same order, each once, with the same value name (or none).
Prints one line naming the count when they agree.
"""
import re
import subprocess
import sys

ENTRY = re.compile(
    r'\{\s*(?:CLI_)?OPT_[A-Z0-9_]+\s*,\s*"([^"]+)"\s*,\s*(NULL|"([^"]*)")')


def entries(text):
    """(name, metavar or None) of every table entry in text, in order."""
    return [(m.group(1), m.group(3)) for m in ENTRY.finditer(text)]


def macro_body(header, name):
    """The body of `#define name...` in header, continuation lines joined."""
    m = re.search(r"^#define " + name + r"\b(.*?)(?<!\\)\n", header,
                  re.S | re.M)
    if not m:
        sys.exit("help_flags: no #define %s in the header" % name)
    return m.group(1).replace("\\\n", "\n")


MACROS = ("CLI_TASK_OPTIONS", "CLI_MEASURE_OPTIONS", "CLI_SAMPLER_OPTION")
TOKEN = re.compile(r"\b(" + "|".join(MACROS) + r")\b|" + ENTRY.pattern)


def expand(text, header):
    """The entries of text, in order, the option macros of header expanded
    (a macro may use another: CLI_TASK_OPTIONS ends with
    CLI_SAMPLER_OPTION)."""
    out = []
    for t in TOKEN.finditer(text):
        if t.group(1):
            out += expand(macro_body(header, t.group(1)), header)
        else:
            out.append((t.group(2), t.group(4)))
    return out


def table(source, header):
    m = re.search(r"static cli_option options\[\] = \{(.*?)\{0, NULL", source,
                  re.S)
    if not m:
        sys.exit("help_flags: no 'static cli_option options[]' table found")
    return expand(m.group(1), header)


def helped(tool):
    p = subprocess.run([tool, "--help"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("help_flags: %s --help exited %d: %s" %
                 (tool, p.returncode, p.stderr))
    lines = p.stdout.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith("Options"))
    except StopIteration:
        sys.exit("help_flags: %s --help has no Options section" % tool)
    out = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        m = re.match(r"^  --([a-z0-9-]+)(?: (\S+))?", line)
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    tool, source, header = sys.argv[1:]
    with open(source) as f:
        src = f.read().replace("\\\n", "\n")
    with open(header) as f:
        hdr = f.read()
    want = table(src, hdr)
    got = helped(tool)
    errors = []
    names = [n for n, _ in want]
    for n in sorted(set(names)):
        if names.count(n) > 1:
            errors.append("the table has --%s %d times" % (n, names.count(n)))
    gnames = [n for n, _ in got]
    for n, meta in want:
        if n not in gnames:
            errors.append("--help lacks --%s%s" % (n, " " + meta if meta else ""))
    for n, meta in got:
        if n not in names:
            errors.append("--help lists --%s, which the table lacks" % n)
        elif gnames.count(n) > 1:
            errors.append("--help lists --%s %d times" % (n, gnames.count(n)))
    wmeta = dict(want)
    for n, meta in got:
        if n in wmeta and wmeta[n] != meta:
            errors.append("--help shows --%s %s, the table's value name is %s"
                          % (n, meta or "without a value", wmeta[n] or "none"))
    if not errors and names != gnames:
        errors.append("--help lists the flags in another order than the table")
    if not want:
        errors.append("no entry found in the option table")
    if errors:
        for e in errors:
            print("help_flags: %s: %s" % (tool, e), file=sys.stderr)
        sys.exit(1)
    print("--help lists all %d flags of the option table, in its order, each "
          "with its value name" % len(want))


if __name__ == "__main__":
    main()
