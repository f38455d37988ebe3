#!/bin/sh
# suites_build_every_space.sh HERON_SPACE SUITES_DIR - every task of every
# suite in SUITES_DIR (configs/suites/*.json) names a known op with a valid
# shape whose search space has valid configs on the suite's target: the
# suite loads, and a benchmark of it would not stop at a bad task.  Prints
# one line per task; fails naming the first suite and task that do not.
# One heron-space call per task (and one --describe per op, not per task):
# ~100 short processes, seconds alone, a few minutes on a loaded machine
# or under the sanitizers.  Each call has a hang guard (CALL_TIMEOUT
# seconds, 300) that names the task it stopped; ctest's TIMEOUT is only
# the outer guard.
set -u
HERON_SPACE=$1
SUITES=$2
exec python3 - "$HERON_SPACE" "$SUITES" <<'PY'
import glob, json, os, subprocess, sys

space, folder = sys.argv[1], sys.argv[2]
CALL_TIMEOUT = float(os.environ.get("CALL_TIMEOUT", "300"))


def run(cmd, what):
    """cmd's result; a call that outlives CALL_TIMEOUT is killed, and the
    test fails naming it (a hang, never a slow machine: a call takes tens
    of milliseconds alone)."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=CALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        sys.exit("%s: %s gave no answer in %.0f s (killed)"
                 % (what, " ".join(cmd), CALL_TIMEOUT))


dims = {}  # op -> its --shape order, from one --describe per op
files = sorted(glob.glob(folder + "/*.json"))
if not files:
    sys.exit("no suite in " + folder)
for path in files:
    with open(path) as f:
        suite = json.load(f)
    target = suite.get("target", "cpu")
    for task in suite["tasks"]:
        if "t1" in task:
            # A space of the community's formats: its T1 file must build a
            # space, and the T4 file must answer it (heron-space --t1 --t4
            # --count checks both and compares the config sets).
            base = os.path.dirname(path)
            t1 = os.path.join(base, task["t1"])
            t4 = os.path.join(base, task["t4"])
            cmd = [space, "--t1", t1, "--t4", t4, "--count"]
            r = run(cmd, "%s: task %s" % (path, task["name"]))
            if r.returncode != 0 or "valid configs: 0 " in r.stdout:
                sys.exit("%s: task %s: %s: %s %s"
                         % (path, task["name"], " ".join(cmd),
                            r.stdout.strip(), r.stderr.strip()))
            print("%s: %s t1: %s" % (path.split("/")[-1], task["name"],
                                     r.stdout.strip().splitlines()[0]))
            continue
        op = task["op"]
        if op not in dims:
            desc = run([space, "--op", op, "--describe"],
                       "%s: task %s" % (path, task["name"]))
            line = [l for l in desc.stdout.splitlines()
                    if l.startswith("dimensions (--shape order):")]
            if desc.returncode != 0 or not line:
                sys.exit("%s: task %s: op %s unknown: %s"
                         % (path, task["name"], op, desc.stderr.strip()))
            dims[op] = line[0].split(":", 1)[1].split()
        names = dims[op]
        shape = task["shape"]
        if isinstance(shape, dict):
            unknown = set(shape) - set(names)
            if unknown:
                sys.exit("%s: task %s: unknown dimensions %s"
                         % (path, task["name"], sorted(unknown)))
            given = [n for n in names if n in shape]
            shape = [shape[n] for n in given]
        cmd = [space, "--op", op, "--shape", ",".join(str(x) for x in shape),
               "--target", target, "--count", "--count-limit", "1"]
        # The suite's dtype (int8 and bf16 spaces differ from fp32's).
        if "dtype" in suite:
            cmd += ["--dtype", suite["dtype"]]
        r = run(cmd, "%s: task %s" % (path, task["name"]))
        count = r.stdout.strip()
        if r.returncode != 0 or "about 0 " in count or ": 0 " in count:
            sys.exit("%s: task %s: %s: %s %s"
                     % (path, task["name"], " ".join(cmd), count,
                        r.stderr.strip()))
        print("%s: %s %s: %s" % (path.split("/")[-1], task["name"], op, count))
print("ok")
PY
