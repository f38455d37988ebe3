#!/usr/bin/env python3
"""The layering rules of docs/architecture.md, checked on the source tree.

Each rule is one ctest (architecture.<rule>); each prints every line that
breaks it and exits 1, or exits 0.  --self-test builds a small tree that
breaks every rule once and fails unless each rule finds its break.

Rules:
  target_includes  nothing in core/ outside core/targets/ includes a file of
                   a target's folder (core/targets/<name>/...): the core sees
                   a target only through core/targets/target.h;
  target_branches  core/measure/ and core/tune/ name no target (cuda, nvrtc,
                   cubin, amx): they measure through the toolchain and meter
                   interfaces;
  replay_in_tune   core/tune/ does not name replay: recorded answers are a
                   meter (core/replay/meter.c);
  file_size        no production file (core, plugins, tools, bench, include)
                   is over 1,000 lines unless a line among its first 15 says
                   why it is one idea ("One idea: ...");
  outside_refs     no tracked file refers to a design note outside the
                   repository.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SOURCE_EXT = (".c", ".h", ".inc")
PRODUCTION = ("core", "plugins", "tools", "bench", "include")
MAX_LINES = 1000
# Built from pieces so that this file does not match its own rule.
OUTSIDE = re.compile("|".join(
    [r"\b" + "DESIGN" + r"\.md", r"\b" + "STYLE" + r"\.md",
     "HERON" + "_NOTES", r"\.\./" + "shared/"]))


def files_under(root, top, exts=SOURCE_EXT):
    base = os.path.join(root, top)
    for d, dirs, names in os.walk(base):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for n in sorted(names):
            if n.endswith(exts):
                path = os.path.join(d, n)
                yield os.path.relpath(path, root), path


def lines_of(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def target_includes(root):
    inc = re.compile(r'^\s*#\s*include\s*"core/targets/[^/"]+/')
    bad = []
    for rel, path in files_under(root, "core"):
        if rel.startswith("core/targets/"):
            continue
        for i, line in enumerate(lines_of(path), 1):
            if inc.search(line):
                bad.append(f"{rel}:{i}: {line.strip()}")
    return bad


def grep(root, tops, pattern):
    bad = []
    for top in tops:
        for rel, path in files_under(root, top):
            for i, line in enumerate(lines_of(path), 1):
                if pattern.search(line):
                    bad.append(f"{rel}:{i}: {line.strip()}")
    return bad


def target_branches(root):
    return grep(root, ("core/measure", "core/tune"),
                re.compile(r"cuda|nvrtc|cubin|amx", re.I))


def replay_in_tune(root):
    return grep(root, ("core/tune",), re.compile(r"replay", re.I))


def file_size(root):
    bad = []
    for top in PRODUCTION:
        for rel, path in files_under(root, top):
            lines = lines_of(path)
            n = len(lines) - (1 if lines and lines[-1] == "" else 0)
            if n > MAX_LINES and not any("One idea:" in l for l in lines[:15]):
                bad.append(f"{rel}: {n} lines, and no 'One idea: ...' line "
                           f"among its first 15 says why it is one idea")
    return bad


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], check=True,
                             capture_output=True, text=True).stdout.split("\n")
        return [p for p in out if p]
    except (OSError, subprocess.CalledProcessError):
        # Not a git checkout (a source tarball): every file but build trees.
        found = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs
                       if not x.startswith(".") and not x.startswith("build")]
            found += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return sorted(found)


def outside_refs(root):
    bad = []
    for rel in tracked(root):
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data:
            continue
        for i, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
            if OUTSIDE.search(line):
                bad.append(f"{rel}:{i}: {line.strip()}")
    return bad


RULES = {
    "target_includes": target_includes,
    "target_branches": target_branches,
    "replay_in_tune": replay_in_tune,
    "file_size": file_size,
    "outside_refs": outside_refs,
}


def self_test():
    """Every rule must pass on a clean tree and find one planted break."""
    breaks = {
        "target_includes": ("core/tune/x.c", '#include "core/targets/cpu/cpu.h"\n'),
        "target_branches": ("core/measure/x.c", "int use_cubin;\n"),
        "replay_in_tune": ("core/tune/y.c", "/* replay */\n"),
        "file_size": ("tools/big.c", "int x;\n" * (MAX_LINES + 1)),
        "outside_refs": ("docs/x.md", "see " + "DESIGN" + ".md\n"),
    }
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        def write(rel, text):
            p = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        # A clean tree: an include inside a target, a long file with its reason.
        write("core/targets/cpu/a.c", '#include "core/targets/cpu/cpu.h"\n')
        write("core/tune/ok.c", '#include "core/targets/target.h"\n')
        write("core/sched/long.c",
              "/* One idea: a table. */\n" + "int x;\n" * (MAX_LINES + 1))
        for name, rule in RULES.items():
            if rule(tmp):
                print(f"self-test: {name} fails on the clean tree: {rule(tmp)}")
                failed = 1
        for name, (rel, text) in breaks.items():
            write(rel, text)
            found = RULES[name](tmp)
            os.remove(os.path.join(tmp, rel))
            if not any(rel in f for f in found):
                print(f"self-test: {name} did not find the break in {rel}")
                failed = 1
            else:
                print(f"self-test: {name} found {found[0][:70]}", flush=True)
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("rule", choices=sorted(RULES) + ["self-test"])
    ap.add_argument("--source", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    a = ap.parse_args()
    if a.rule == "self-test":
        return self_test()
    bad = RULES[a.rule](os.path.abspath(a.source))
    for b in bad:
        print(b)
    if bad:
        print(f"{a.rule}: {len(bad)} break(s) of the layering rules "
              f"(docs/architecture.md, 'How the layers stay apart')")
        return 1
    print(f"{a.rule}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
