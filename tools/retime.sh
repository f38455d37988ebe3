#!/usr/bin/env bash
# tools/retime.sh - did a change make the kernels slower?  Times the same
# configs of every task of a suite (the cpu.json suite by default) with two
# builds of heron-search: the 16 configs the random strategy proposes with
# seed 1 (the same in both builds when the spaces are the same), one kernel
# thread, the tasks alternating which build goes first, ROUNDS rounds (each
# round flips the order).  Prints per task the geometric mean of new/old
# GFLOP/s (each config's median over the rounds) and the middle half of the
# ratios; equal builds give about 1 within the machine's noise.
#
#   bash tools/retime.sh OLD_BUILD NEW_BUILD OUT [ROUNDS] [SUITE]
#
# OLD_BUILD and NEW_BUILD are build folders (bin/heron-search and plugins/
# inside).  A task takes 10 s to 3 min per build on one Xeon core (GEMM
# 1024^3's slow random configs the longest).  Run it on a quiet machine.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
old=$1 new=$2 out=$3 rounds=${4:-3}
suite=${5:-$(cd "$(dirname "$0")/.." && pwd)/configs/suites/cpu.json}
for b in "$old" "$new"; do
  [ -x "$b/bin/heron-search" ] || { echo "retime: no $b/bin/heron-search" >&2; exit 2; }
done
mkdir -p "$out"
# op<TAB>shape, the shape in the op's dimension order (heron-search --shape).
tasks=$(python3 - "$suite" "$new/bin/heron-space" <<'PY'
import json, subprocess, sys
suite, space = sys.argv[1], sys.argv[2]
for t in json.load(open(suite))["tasks"]:
    d = subprocess.run([space, "--op", t["op"], "--describe"], capture_output=True, text=True).stdout
    line = [l for l in d.splitlines() if l.startswith("dimensions (--shape order):")][0]
    dims = line.split(":", 1)[1].split()
    print("%s\t%s" % (t["op"], ",".join(str(t["shape"][k]) for k in dims)))
PY
)
for r in $(seq 1 "$rounds"); do
  i=$r
  while IFS=$'\t' read -r op shape; do
    if ((i % 2)); then order="old new"; else order="new old"; fi
    for which in $order; do
      b=$old; [ "$which" = new ] && b=$new
      log="$out/r$r/$op.$which.jsonl"
      mkdir -p "$out/r$r"
      rm -f "$log"
      "$b/bin/heron-search" --op "$op" --shape "$shape" --strategy random \
        --seed 1 --trials 16 --batch 16 --threads 1 --log "$log" \
        >/dev/null 2>"$log.err" || echo "retime: $op $which failed: $(tail -1 "$log.err")" >&2
      echo "round $r: $op ($shape) $which done" >&2
    done
    i=$((i + 1))
  done <<<"$tasks"
done
python3 - "$out" "$rounds" <<'PY'
import glob, json, math, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(f):
    try:
        return {x["key"]: x for x in map(json.loads, open(f))}
    except FileNotFoundError:
        return {}
ops = sorted({os.path.basename(f).split(".")[0] for f in glob.glob(out + "/r1/*.old.jsonl")})
print("| task | configs | new/old, geometric mean | middle half of the ratios |")
print("| --- | --- | --- | --- |")
every = []
for op in ops:
    per = {}
    for r in range(1, rounds + 1):
        o, n = load(f"{out}/r{r}/{op}.old.jsonl"), load(f"{out}/r{r}/{op}.new.jsonl")
        for k in o:
            if k in n and o[k]["status"] == "ok" and n[k]["status"] == "ok":
                a, b = per.setdefault(k, ([], []))
                a.append(o[k]["gflops"]); b.append(n[k]["gflops"])
    rs = [statistics.median(b) / statistics.median(a) for a, b in per.values()]
    if len(rs) < 2:
        print("| %s | %d | - | - |" % (op, len(rs)))
        continue
    every += rs
    q = statistics.quantiles(rs, n=4)
    print("| %s | %d | %.3f | %.2f - %.2f |" % (op, len(rs), math.exp(statistics.fmean(map(math.log, rs))), q[0], q[2]))
if every:
    print("\nall %d configs: new/old geometric mean %.3f" % (len(every), math.exp(statistics.fmean(map(math.log, every)))))
PY
