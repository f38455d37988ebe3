#!/usr/bin/env python3
"""check_bench.py - checks heron-bench's outputs against its logs.

  check_bench.py report OUT TRIALS [--no-plots]
      runs.csv has one row per line of every log in OUT/logs (TRIALS lines
      each, 0 to skip that count), with the log's values; every number of
      summary.md is recomputed from the logs here; the plots of every task
      are valid SVG (XML with root <svg>) and PNG (signature and IHDR), or
      absent with --no-plots.
  check_bench.py t4 FILE LOG
      FILE holds the T4 results of LOG: schema_version 1.0.0 and, per log
      line, the keys the T4 results schema requires with the right types
      and the status mapped to its invalidity.
  check_bench.py replay OUT DATASET
      every log line in OUT/logs is a replay answer from DATASET (.jsonl.gz):
      a recorded config with its record, any other one marked simulated.
  check_bench.py same OUT1 OUT2
      the logs of OUT1 and OUT2 agree line for line apart from the clock.
  check_bench.py jsonl OUT
      every log in OUT/logs is valid JSON Lines: each line a whole JSON
      object with an integer "trial" and a string "status", the last line
      ended, trials numbered 1, 2, ... without gaps.
Exits 1 with the first difference found."""
import csv
import datetime
import gzip
import json
import math
import os
import re
import statistics
import struct
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    sys.exit("check_bench.py: " + msg)


def read_log(path):
    recs, t0 = [], None
    for line in open(path):
        if not line.strip():
            continue
        o = json.loads(line)
        if "elapsed" in o:
            el = float(o["elapsed"])
        else:
            t = datetime.datetime.strptime(o["time"], "%Y-%m-%dT%H:%M:%SZ")
            t0 = t0 or t
            el = (t - t0).total_seconds()
        g = float(o["gflops"]) if o["status"] == "ok" else 0.0
        recs.append({"trial": int(o["trial"]), "status": o["status"],
                     "gflops": g, "elapsed": el,
                     "simulated": int(bool(o.get("simulated")))})
    recs.sort(key=lambda r: r["trial"])
    best = 0.0
    for r in recs:
        best = max(best, r["gflops"])
        r["best"] = best
    return recs


def load_runs(out):
    runs = {}
    for name in sorted(os.listdir(out + "/logs")):
        m = re.match(r"(.+?)__(.+)__s(\d+)\.jsonl$", name)
        if m:
            runs[(m.group(1), m.group(2), int(m.group(3)))] = \
                read_log(out + "/logs/" + name)
    if not runs:
        fail("no logs in %s/logs" % out)
    return runs


def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(b))


def check_csv(out, runs, trials):
    rows = list(csv.DictReader(open(out + "/runs.csv")))
    want = sum(len(r) for r in runs.values())
    if len(rows) != want:
        fail("runs.csv has %d rows, the logs %d lines" % (len(rows), want))
    by = {}
    for row in rows:
        label = row["strategy"] + ("" if row["model"] == "none"
                                   else "+" + row["model"])
        by.setdefault((row["task"], label, int(row["seed"])), []).append(row)
    if set(by) != set(runs):
        fail("runs.csv runs %s, logs %s" % (sorted(by), sorted(runs)))
    for k, recs in runs.items():
        if trials and len(recs) != trials:
            fail("%s has %d trials, want %d" % (k, len(recs), trials))
        for row, r in zip(by[k], recs):
            if int(row["trial"]) != r["trial"] or row["status"] != r["status"]:
                fail("runs.csv row %s differs from the log %s" % (row, r))
            for col, key in (("gflops", "gflops"), ("best_gflops_so_far",
                             "best"), ("elapsed_s", "elapsed")):
                if not close(float(row[col]), r[key], 1e-6):
                    fail("runs.csv %s of %s trial %d: %s, log gives %r" %
                         (col, k, r["trial"], row[col], r[key]))
            if int(row["simulated"]) != r["simulated"]:
                fail("runs.csv simulated of %s trial %d" % (k, r["trial"]))


def median(v):
    return statistics.median(v) if v else None


def check_summary(out, runs):
    text = open(out + "/summary.md").read()
    tasks = sorted({k[0] for k in runs})
    for task in tasks:
        sec = re.search(r"^## %s\n(.*?)(?=^## |\Z)" % re.escape(task), text,
                        re.S | re.M)
        if not sec:
            fail("summary.md has no section for task %s" % task)
        sec = sec.group(1)
        mine = {k: v for k, v in runs.items() if k[0] == task}
        top = max(r[-1]["best"] if r else 0 for r in mine.values())
        m = re.search(r"Best any strategy found: ([0-9.]+)", sec)
        if not m or not close(float(m.group(1)), top, 1e-3):
            fail("%s: best any strategy %s, logs give %.3f" % (task, m, top))
        rows = {}
        for line in sec.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("|") and len(cells) == 10 and \
                    cells[1].isdigit():
                rows[cells[0]] = cells
        labels = sorted({k[1] for k in mine})
        if sorted(rows) != labels:
            fail("%s: summary rows %s, logs %s" % (task, sorted(rows), labels))
        for label in labels:
            seeds = [v for k, v in sorted(mine.items()) if k[1] == label]
            bests = [r[-1]["best"] if r else 0.0 for r in seeds]
            hit_t, hit_s = [], []
            for recs in seeds:
                for r in recs:
                    if top > 0 and r["best"] >= 0.95 * top:
                        hit_t.append(r["trial"])
                        hit_s.append(r["elapsed"])
                        break
            n = sum(len(r) for r in seeds)
            fails = sum(1 for recs in seeds for r in recs
                        if r["status"] != "ok")
            c = rows[label]
            sd = statistics.stdev(bests) if len(bests) > 1 else 0.0
            want = [len(seeds), statistics.mean(bests), min(bests),
                    max(bests), sd]
            got = [int(c[1])] + [float(x) for x in c[2:6]]
            for g, w, what in zip(got, want, ("seeds", "mean", "min", "max",
                                              "stddev")):
                if not close(g, w, 2e-3):
                    fail("%s %s: %s is %s, logs give %r" %
                         (task, label, what, g, w))
            if hit_t:
                if not close(float(c[6]), median(hit_t), 1e-9) or \
                        not close(float(c[7]), median(hit_s), 1e-2):
                    fail("%s %s: to 95%% %s / %s, logs give %r / %r" %
                         (task, label, c[6], c[7], median(hit_t),
                          median(hit_s)))
            elif c[6] != "-" or c[7] != "-":
                fail("%s %s: no seed reached 95%%, summary says %s" %
                     (task, label, c[6]))
            if c[8] != "%d/%d" % (len(hit_t), len(seeds)):
                fail("%s %s: reaching %s, logs give %d/%d" %
                     (task, label, c[8], len(hit_t), len(seeds)))
            if not close(float(c[9].rstrip("%")), 100.0 * fails / n, 0.06):
                fail("%s %s: failure share %s, logs give %.2f%%" %
                     (task, label, c[9], 100.0 * fails / n))
    return tasks


def check_plots(out, tasks, want):
    for task in tasks:
        for kind in ("trials", "time"):
            base = "%s/plots/%s-%s" % (out, task, kind)
            if not want:
                if os.path.exists(base + ".svg") or \
                        os.path.exists(base + ".png"):
                    fail("%s: plots written without gnuplot" % base)
                continue
            root = ET.parse(base + ".svg").getroot()
            if root.tag not in ("svg", "{http://www.w3.org/2000/svg}svg"):
                fail("%s.svg: root element is %s" % (base, root.tag))
            data = open(base + ".png", "rb").read()
            if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
                fail("%s.png is not a PNG" % base)
            w, h = struct.unpack(">II", data[16:24])
            if w < 100 or h < 100:
                fail("%s.png is %dx%d" % (base, w, h))


T4_INVALIDITY = {"ok": "correct", "compile_error": "compile",
                 "runtime_error": "runtime", "wrong_result": "correctness",
                 "timeout": "timeout", "invalid": "constraints"}


def check_t4(path, log):
    doc = json.load(open(path))
    lines = [json.loads(l) for l in open(log) if l.strip()]
    if doc.get("schema_version") != "1.0.0":
        fail("schema_version is %r" % doc.get("schema_version"))
    res = doc.get("results")
    if not isinstance(res, list) or len(res) != len(lines):
        fail("results: %d entries for %d log lines" %
             (len(res or []), len(lines)))
    for r, o in zip(res, lines):
        for key, typ in (("timestamp", str), ("configuration", dict),
                         ("times", dict), ("invalidity", str),
                         ("correctness", (int, float)),
                         ("measurements", list), ("objectives", list)):
            if not isinstance(r.get(key), typ):
                fail("trial %d: %r is missing or not %s" % (o["trial"], key,
                                                            typ))
        if r["configuration"] != o["config"]:
            fail("trial %d: configuration differs" % o["trial"])
        if r["invalidity"] != T4_INVALIDITY[o["status"]]:
            fail("trial %d: invalidity %s for status %s" %
                 (o["trial"], r["invalidity"], o["status"]))
        ok = o["status"] == "ok"
        if r["correctness"] != (1 if ok else 0):
            fail("trial %d: correctness %r" % (o["trial"], r["correctness"]))
        t = r["times"]
        # T4 times are in the file's time unit, milliseconds.
        if not isinstance(t.get("compilation"), (int, float)) or \
                not isinstance(t.get("runtimes"), list) or \
                not close(t["compilation"], 1e3 * o["build_seconds"], 1e-9):
            fail("trial %d: times %r" % (o["trial"], t))
        if doc.get("metadata", {}).get("timeunit") != "milliseconds" or \
                doc["metadata"].get("task") != o["task"]:
            fail("metadata %r" % doc.get("metadata"))
        if ok and not close(t["runtimes"][0], 1e3 * o["seconds"], 1e-9):
            fail("trial %d: runtime %r ms for %r s" % (o["trial"],
                                                      t["runtimes"], o["seconds"]))
        meas = {m["name"]: m for m in r["measurements"]}
        for name, unit in (("time", "ms"), ("gflops", "GFLOP/s")):
            m = meas.get(name)
            if not m or m.get("unit") != unit or \
                    not isinstance(m.get("value"), (int, float)):
                fail("trial %d: measurement %s is %r" % (o["trial"], name, m))
        if ok and not close(meas["gflops"]["value"], o["gflops"], 1e-9):
            fail("trial %d: gflops %r" % (o["trial"], meas["gflops"]))


def log_lines(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def config_key(o):
    return json.dumps(o["config"], sort_keys=True)


def check_replay(out, dataset):
    """Every line of every log in OUT/logs is a replay answer: a config the
    dataset holds carries its recorded status and figures and is not marked
    simulated; any other config is marked simulated with a positive
    throughput."""
    with gzip.open(dataset, "rt") as f:
        rec = {}
        for line in f:
            if line.strip():
                o = json.loads(line)
                rec.setdefault(config_key(o), o)
    for name in sorted(os.listdir(out + "/logs")):
        if not name.endswith(".jsonl"):
            continue
        for o in log_lines(out + "/logs/" + name):
            r = rec.get(config_key(o))
            where = "%s trial %d" % (name, o["trial"])
            if not o["task"].endswith("/replay"):
                fail("%s: task %s is not a replay task" % (where, o["task"]))
            if r is None:
                if not o.get("simulated") or not o["gflops"] > 0:
                    fail("%s: a config the dataset lacks is not a simulated "
                         "answer" % where)
            elif o.get("simulated") or o["status"] != r["status"] or \
                    o["gflops"] != r["gflops"] or o["seconds"] != r["seconds"]:
                fail("%s: a recorded config is not answered with its record"
                     % where)


def check_same(out1, out2):
    """OUT1 and OUT2 hold the same logs, line for line, apart from the wall
    clock ("time", and "elapsed", whose real part is the strategy's own
    work)."""
    n1 = sorted(n for n in os.listdir(out1 + "/logs") if n.endswith(".jsonl"))
    n2 = sorted(n for n in os.listdir(out2 + "/logs") if n.endswith(".jsonl"))
    if n1 != n2 or not n1:
        fail("the runs differ: %s against %s" % (n1, n2))
    for name in n1:
        a = log_lines(out1 + "/logs/" + name)
        b = log_lines(out2 + "/logs/" + name)
        for o in a + b:
            o.pop("time", None)
            o.pop("elapsed", None)
        if a != b:
            fail("%s differs between the two runs" % name)


def check_jsonl(out):
    names = sorted(n for n in os.listdir(out + "/logs")
                   if n.endswith(".jsonl"))
    if not names:
        fail("no logs in %s/logs" % out)
    for name in names:
        data = open(out + "/logs/" + name).read()
        if data and not data.endswith("\n"):
            fail("%s: the last line is not ended" % name)
        trials = []
        for i, line in enumerate(data.splitlines(), 1):
            try:
                o = json.loads(line)
            except ValueError as e:
                fail("%s line %d is not JSON: %s" % (name, i, e))
            if not isinstance(o, dict) or not isinstance(o.get("trial"), int) \
                    or not isinstance(o.get("status"), str):
                fail("%s line %d: no integer trial and string status" %
                     (name, i))
            trials.append(o["trial"])
        if sorted(trials) != list(range(1, len(trials) + 1)):
            fail("%s: trials %s are not 1..%d" % (name, trials, len(trials)))


def main():
    a = sys.argv[1:]
    if len(a) >= 3 and a[0] == "report":
        runs = load_runs(a[1])
        check_csv(a[1], runs, int(a[2]))
        tasks = check_summary(a[1], runs)
        check_plots(a[1], tasks, "--no-plots" not in a)
    elif len(a) == 3 and a[0] == "t4":
        check_t4(a[1], a[2])
    elif len(a) == 3 and a[0] == "replay":
        check_replay(a[1], a[2])
    elif len(a) == 3 and a[0] == "same":
        check_same(a[1], a[2])
    elif len(a) == 2 and a[0] == "jsonl":
        check_jsonl(a[1])
    else:
        fail("usage: check_bench.py report OUT TRIALS [--no-plots] | "
             "t4 FILE LOG | replay OUT DATASET | same OUT1 OUT2 | jsonl OUT")


if __name__ == "__main__":
    main()
