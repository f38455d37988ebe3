# e2e_common.sh - sourced by the scripts in tests/cli/e2e/.
#
# Gives each script a scratch folder $W (removed at exit), fail(), the fast
# measuring flags $FAST that keep the suite short, and check_log (the
# log-format checker).  Every e2e test tunes for real, with the random
# strategy on small GEMMs.
set -eu
: "${HERON_SEARCH:?set HERON_SEARCH to the heron-search binary}"
: "${HERON_SPACE:?set HERON_SPACE to the heron-space binary}"
CLI_DIR=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-e2e.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
FAST="--number 1 --repeat 1 --min-repeat-ms 1 --quiet --work-dir $W/work"

fail() {
  echo "FAIL: $*" >&2
  for f in "$W"/*.out "$W"/*.err; do
    [ -f "$f" ] || continue
    echo "--- $f" >&2
    tail -c 3000 "$f" >&2
  done
  exit 1
}

check_log() {
  python3 "$CLI_DIR/check_log.py" "$@" || fail "log check failed: $*"
}

# lines FILE: the number of lines of FILE (0 when it does not exist).
lines() {
  if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi
}

# tune_gemm256 STRATEGY LOG [more heron-search flags]: the end-to-end run
# every shipped plugin must finish: GEMM 256^3 on the CPU target, 30 trials
# in rounds of 8, every trial logged once with a distinct config, the
# strategy named in the log, and most trials verified ok (a few may time
# out on a loaded machine; none may be invalid).
tune_gemm256() {
  _s=$1 _log=$2
  shift 2
  "$HERON_SEARCH" --op gemm --shape 256,256,256 --strategy "$_s" \
    --trials 30 --batch 8 --seed 5 --timeout 10 --log "$_log" $FAST "$@" \
    >"$W/$_s.out" 2>"$W/$_s.err" || fail "heron-search --strategy $_s $* exited $?"
  check_log "$_log" --lines 30 --trials 30 --unique-configs \
    --task gemm/256,256,256/fp32/cpu
  [ "$(grep -c "\"strategy\":\"$_s\"" "$_log")" -eq 30 ] ||
    fail "the log does not name strategy $_s on every line"
  _ok=$(grep -c '"status":"ok"' "$_log" || true)
  [ "$_ok" -ge 24 ] || fail "only $_ok of 30 trials of $_s were ok"
  ! grep -q '"status":"invalid"' "$_log" || fail "$_s had an invalid trial"
  grep -q "^trials     30 (measured 30" "$W/$_s.out" ||
    fail "summary of $_s does not report 30 measured trials"
}

# replay_strategy STRATEGY: a strategy after Kernel Tuner's on the
# community's spaces replayed from their T4 files (no compiler, the
# recorded times): 150 trials on convolution-W6600 in rounds of 16 are all
# measured (no stall), every config distinct and valid, and the same run
# again with the same seed proposes the same configs in the same order;
# dedispersion-W6600 in rounds of 5 (less than a generation) reaches its 60
# trials too, and a --resume of that log to 90 measures 30 new configs.
replay_strategy() {
  _s=$1
  _hub="$HERON_SOURCE_DIR/configs/datasets/benchmark_hub"
  for _run in a b; do
    "$HERON_SEARCH" --t1 "$_hub/convolution/T1.json" \
      --t4 "$_hub/convolution/W6600_T4.json.gz" --strategy "$_s" \
      --trials 150 --batch 16 --seed 7 --quiet --log "$W/$_run.jsonl" \
      >"$W/$_run.out" 2>"$W/$_run.err" || fail "$_s run $_run exited $?"
    check_log "$W/$_run.jsonl" --lines 150 --trials 150 --unique-configs
    ! grep -q '"status":"invalid"' "$W/$_run.jsonl" || fail "invalid trial"
    grep -q "dropped 0 invalid" "$W/$_run.out" || fail "invalid proposals"
  done
  python3 - "$W/a.jsonl" "$W/b.jsonl" <<'PY' || fail "not deterministic"
import json, sys
a, b = ([json.loads(l)["config"] for l in open(f)] for f in sys.argv[1:])
assert a == b, "the same seed proposed other configs"
PY
  "$HERON_SEARCH" --t1 "$_hub/dedispersion/T1.json" \
    --t4 "$_hub/dedispersion/W6600_T4.json.gz" --strategy "$_s" \
    --trials 60 --batch 5 --seed 3 --quiet --log "$W/d.jsonl" \
    >"$W/d.out" 2>"$W/d.err" || fail "$_s on dedispersion exited $?"
  check_log "$W/d.jsonl" --lines 60 --trials 60 --unique-configs
  "$HERON_SEARCH" --t1 "$_hub/dedispersion/T1.json" \
    --t4 "$_hub/dedispersion/W6600_T4.json.gz" --strategy "$_s" \
    --trials 90 --batch 5 --seed 3 --quiet --resume "$W/d.jsonl" \
    --log "$W/d.jsonl" >"$W/r.out" 2>"$W/r.err" || fail "$_s resume exited $?"
  grep -q "measured 30, resumed 60" "$W/r.out" || fail "$_s resume"
  check_log "$W/d.jsonl" --lines 90 --trials 90 --unique-configs
}

# replay_beats_random STRATEGY SPACE TRIALS: over seeds 1-5, the median of
# the best time STRATEGY finds in TRIALS trials on SPACE (its W6600 T4
# file, replayed) is no worse than the random strategy's.  What a search
# finds, not memory: its tests are labelled no_asan (tests/cli/CMakeLists.txt).
replay_beats_random() {
  _s=$1 _sp=$2 _n=$3
  _hub="$HERON_SOURCE_DIR/configs/datasets/benchmark_hub"
  for _x in "$_s" random; do
    for _seed in 1 2 3 4 5; do
      "$HERON_SEARCH" --t1 "$_hub/$_sp/T1.json" \
        --t4 "$_hub/$_sp/W6600_T4.json.gz" --strategy "$_x" \
        --trials "$_n" --batch 16 --seed "$_seed" --quiet \
        --log "$W/q_${_x}_$_seed.jsonl" >"$W/q.out" 2>"$W/q.err" ||
        fail "$_x seed $_seed exited $?"
    done
  done
  python3 - "$W" "$_s" <<'PY' || fail "$_s is worse than random"
import json, statistics, sys
def med(s):
    return statistics.median(
        min(r["seconds"] for r in map(json.loads, open(
            "%s/q_%s_%d.jsonl" % (sys.argv[1], s, seed))) if r["status"] == "ok")
        for seed in range(1, 6))
m, r = med(sys.argv[2]), med("random")
print("median best: %s %.6g s, random %.6g s" % (sys.argv[2], m, r))
assert m <= r, (m, r)
PY
}
