#!/bin/sh
# tools/pipe_overhead.sh BIN_DIR [TRIALS] [REPEATS] - what the pipe costs
# the host: heron-search on the replay target (GEMM 512^3, no kernel built)
# with the C random strategy and with the pipe strategy running
# examples/host_random.py, whose every proposal is a config the host
# sampled (one "sample" request per round), so both do the same work but
# for the protocol.  Each run is timed on the wall clock, REPEATS times
# (default 5, the median counts), at TRIALS trials (default 2000) and at one
# round (16 trials: start-up and the surrogate's fit), so
#
#   per config = (T(TRIALS) - T(16)) / (TRIALS - 16)
#
# leaves the fixed costs (the python start, the fit) out.
set -eu
BIN=${1:?usage: pipe_overhead.sh BIN_DIR [TRIALS] [REPEATS]}
N=${2:-2000}
R=${3:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/pipe-overhead.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
REPLAY="--op gemm --shape 512,512,512 --target replay --replay
 $SRC/configs/datasets/cpu-gemm512-fp32.jsonl.gz --batch 16 --seed 1 --quiet"
PIPE="--strategy pipe --param
 program=$SRC/plugins/strategies/pipe/examples/host_random.py"

# median_time TRIALS FLAGS...: the median wall time of R runs, in seconds.
median_time() {
  _n=$1
  shift
  for _i in $(seq "$R"); do
    _s=$(date +%s.%N)
    "$BIN/heron-search" $REPLAY --trials "$_n" "$@" >"$W/out" 2>"$W/err" ||
      { cat "$W/err" >&2; exit 1; }
    echo "$(date +%s.%N) - $_s" | bc
  done | sort -n | sed -n "$(((R + 1) / 2))p"
}

rand_n=$(median_time "$N" --strategy random)
rand_1=$(median_time 16 --strategy random)
pipe_n=$(median_time "$N" $PIPE)
pipe_1=$(median_time 16 $PIPE)
python3 - "$N" "$rand_n" "$rand_1" "$pipe_n" "$pipe_1" <<'PY'
import sys
n = int(sys.argv[1])
rn, r1, pn, p1 = map(float, sys.argv[2:])
r = (rn - r1) / (n - 16) * 1e6
p = (pn - p1) / (n - 16) * 1e6
print("trials %d, batch 16, median of the runs" % n)
print("%-22s %8s %8s %14s" % ("strategy", "T(N) s", "T(16) s", "us per config"))
print("%-22s %8.3f %8.3f %14.1f" % ("random (C)", rn, r1, r))
print("%-22s %8.3f %8.3f %14.1f" % ("pipe host_random.py", pn, p1, p))
print("pipe / random per config: %.2fx; the pipe adds %.1f us per config; "
      "start-up adds %.3f s" % (p / r, p - r, p1 - r1))
PY
