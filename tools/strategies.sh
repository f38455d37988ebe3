#!/bin/sh
# tools/strategies.sh - how many trials each search strategy needs.
#
# Tunes one task with every strategy (random is the baseline) for the same
# trial budget and the same seeds, one JSON Lines log per run, then prints
# the trials each run needed to reach 95% of the best throughput any run
# found (tools/strategies_report.py).  Logs are kept, so a killed benchmark
# resumes where it stopped (--resume) and the report can be re-made.
#
#   tools/strategies.sh [--op gemm] [--shape 1024,1024,1024] [--trials 100]
#                       [--seeds 1,2,3,4,5] [--out runs/bench-strategies]
#                       [--strategies "random genetic+xgb becbo tsbo"]
#                       [-- extra heron-search flags]
#
# A strategy is NAME or NAME+MODEL (genetic+xgb = --strategy genetic
# --model xgb).  Progress: one line per finished run.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
search=${HERON_SEARCH:-$root/build/bin/heron-search}
op=gemm shape=1024,1024,1024 trials=100 seeds=1,2,3,4,5
out=runs/bench-strategies
strategies="random genetic+xgb becbo tsbo"
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit "$1"; }
while [ $# -gt 0 ]; do
  case $1 in
  --op) op=$2; shift 2 ;;
  --shape) shape=$2; shift 2 ;;
  --trials) trials=$2; shift 2 ;;
  --seeds) seeds=$2; shift 2 ;;
  --out) out=$2; shift 2 ;;
  --strategies) strategies=$2; shift 2 ;;
  --help|-h) usage 0 ;;
  --) shift; break ;;
  *) echo "strategies.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$search" ] || { echo "strategies.sh: no $search; build first (cmake --build build)" >&2; exit 2; }
mkdir -p "$out"
# Fast but honest measuring: every kernel is still checked; the minimum
# repeat time keeps the timer's resolution out of the figures.
measure="--batch 10 --number 1 --repeat 2 --min-repeat-ms 50 --timeout 3"
logs=
for spec in $strategies; do
  s=${spec%%+*} m=
  [ "$s" != "$spec" ] && m=${spec#*+}
  for seed in $(echo "$seeds" | tr ',' ' '); do
    log=$out/$spec-seed$seed.jsonl
    logs="$logs $log"
    done_n=0
    [ -f "$log" ] && done_n=$(wc -l <"$log")
    if [ "$done_n" -ge "$trials" ]; then
      echo "[$spec seed $seed] already complete ($done_n trials)"
      continue
    fi
    resume=
    [ "$done_n" -gt 0 ] && resume="--resume $log"
    t0=$(date +%s)
    "$search" --op "$op" --shape "$shape" --strategy "$s" ${m:+--model "$m"} \
      --trials "$trials" --seed "$seed" --log "$log" $resume $measure --quiet "$@" \
      >"$out/$spec-seed$seed.out" 2>"$out/$spec-seed$seed.err" ||
      { echo "[$spec seed $seed] heron-search failed; see $out/$spec-seed$seed.err" >&2; exit 1; }
    echo "[$spec seed $seed] $(grep '^best' "$out/$spec-seed$seed.out" | head -1) ($(( $(date +%s) - t0 )) s)"
  done
done
python3 "$here/strategies_report.py" --trials "$trials" $logs | tee "$out/summary.md"
