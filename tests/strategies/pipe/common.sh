# common.sh - sourced by the pipe strategy's test scripts.
#
# Gives each script a scratch folder $W (removed at exit), fail(), the
# replay dataset flags $REPLAY (no kernel is compiled: every trial is
# answered from configs/datasets/, so a run takes about a second) and
# search(NAME, heron-search flags...), which runs heron-search with its
# output in $W/NAME.{out,err,status}.
set -eu
: "${HERON_SEARCH:?set HERON_SEARCH to the heron-search binary}"
: "${HERON_SOURCE_DIR:?set HERON_SOURCE_DIR to the source tree}"
PIPE_TESTS=$HERON_SOURCE_DIR/tests/strategies/pipe
EXAMPLES=$HERON_SOURCE_DIR/plugins/strategies/pipe/examples
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-pipe.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
REPLAY="--op gemm --shape 512,512,512 --target replay --replay
 $HERON_SOURCE_DIR/configs/datasets/cpu-gemm512-fp32.jsonl.gz"

fail() {
  echo "FAIL: $*" >&2
  for f in "$W"/*.out "$W"/*.err; do
    [ -f "$f" ] || continue
    echo "--- $f" >&2
    tail -c 3000 "$f" >&2
  done
  exit 1
}

search() {
  _n=$1
  shift
  set +e
  "$HERON_SEARCH" "$@" >"$W/$_n.out" 2>"$W/$_n.err"
  echo $? >"$W/$_n.status"
  set -e
}

# check_log LOG N: LOG holds exactly N whole JSON lines, trials 1..N (a
# missing LOG counts as empty).
check_log() {
  python3 - "$1" "$2" <<'PY' || fail "log $1 is not $2 whole lines"
import json, sys
path, want = sys.argv[1], int(sys.argv[2])
try:
    text = open(path).read()
except FileNotFoundError:
    text = ""
assert text == "" or text.endswith("\n"), "the last line is cut"
lines = text.splitlines()
assert len(lines) == want, "%d lines, expected %d" % (len(lines), want)
trials = sorted(json.loads(l)["trial"] for l in lines)
assert trials == list(range(1, want + 1)), trials
PY
}

# leftover PROGRAM: prints the processes still running PROGRAM.  heron-search
# itself, and the measurement runner it forked (which may outlive it by a
# moment), name the program in their arguments as program=PROGRAM, and the
# test scripts as an argument: neither counts.
leftover() {
  ps -eo pid=,args= | grep -F -- "$1" |
    grep -vF -e "program=$1" -e "hostile.sh" -e "grep" || true
}
