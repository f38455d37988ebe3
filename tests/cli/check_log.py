#!/usr/bin/env python3
"""check_log.py LOG [options] - checks a heron-search JSON Lines log.

Exits 1 and says what is wrong when the log breaks the format of
docs/files.md or one of the requested properties; exits 0 otherwise.

  --lines N        the log has exactly N lines
  --trials N       the trial numbers are exactly 1..N, each once
  --unique-configs no config (knob object) appears twice
  --all-ok         every line has status "ok" (every trial verified)
  --task KEY       every line belongs to task KEY
  --untimed        ok lines carry no time (--compile-only / cuda --emulate)
                   and say "untimed": true:
                   seconds and gflops are 0
"""
import argparse
import json
import re
import sys

FIELDS = ["task", "trial", "config", "status", "seconds", "gflops",
          "build_seconds", "error", "strategy", "seed", "time"]
STATUSES = {"ok", "compile_error", "runtime_error", "timeout", "wrong_result",
            "invalid"}
ISO8601 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--lines", type=int)
    ap.add_argument("--trials", type=int)
    ap.add_argument("--unique-configs", action="store_true")
    ap.add_argument("--all-ok", action="store_true")
    ap.add_argument("--task")
    ap.add_argument("--untimed", action="store_true")
    a = ap.parse_args()
    errors = []
    with open(a.log) as f:
        raw = f.read().splitlines()
    recs = []
    for n, line in enumerate(raw, 1):
        try:
            rec = json.loads(line)
        except ValueError as e:
            errors.append("line %d is not JSON (%s): %.80s" % (n, e, line))
            continue
        if not isinstance(rec, dict):
            errors.append("line %d is not an object" % n)
            continue
        missing = [k for k in FIELDS if k not in rec]
        if missing:
            errors.append("line %d lacks %s" % (n, ", ".join(missing)))
            continue
        cfg = rec["config"]
        if not isinstance(cfg, dict) or not cfg or not all(
                isinstance(v, int) for v in cfg.values()):
            errors.append("line %d: config is not an object of integers" % n)
        if rec["status"] not in STATUSES:
            errors.append("line %d: unknown status %r" % (n, rec["status"]))
        if not isinstance(rec["time"], str) or not ISO8601.match(rec["time"]):
            errors.append("line %d: time %r is not ISO 8601" % (n, rec["time"]))
        if rec["status"] == "ok" and a.untimed:
            if rec["seconds"] != 0 or rec["gflops"] != 0:
                errors.append("line %d: untimed but seconds/gflops set" % n)
            if rec.get("untimed") is not True:
                errors.append("line %d: untimed but not marked \"untimed\": "
                              "true" % n)
        elif rec["status"] == "ok":
            if not (rec["seconds"] > 0 and rec["gflops"] > 0):
                errors.append("line %d: ok but seconds/gflops not positive" % n)
            # An ok kernel's error text is empty, or notes only what the
            # kernel printed on its stdout.
            if rec["error"] != "" and not rec["error"].startswith("stdout: "):
                errors.append("line %d: ok but error %r" % (n, rec["error"]))
        recs.append(rec)
    if a.lines is not None and len(raw) != a.lines:
        errors.append("%d lines, expected %d" % (len(raw), a.lines))
    if a.trials is not None:
        trials = sorted(r["trial"] for r in recs)
        if trials != list(range(1, a.trials + 1)):
            errors.append("trials are %s, expected 1..%d each once" %
                          (trials, a.trials))
    if a.unique_configs:
        seen = {}
        for r in recs:
            key = json.dumps(r["config"], sort_keys=True)
            if key in seen:
                errors.append("trials %s and %s measured the same config" %
                              (seen[key], r["trial"]))
            seen[key] = r["trial"]
    if a.all_ok:
        for r in recs:
            if r["status"] != "ok":
                errors.append("trial %s: status %s: %s" %
                              (r["trial"], r["status"], r["error"][:200]))
    if a.task:
        for r in recs:
            if r["task"] != a.task:
                errors.append("trial %s: task %s, expected %s" %
                              (r["trial"], r["task"], a.task))
    for e in errors[:20]:
        print("check_log: %s: %s" % (a.log, e), file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
