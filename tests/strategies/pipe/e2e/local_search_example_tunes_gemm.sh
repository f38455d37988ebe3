#!/bin/sh
# The plain-Python example (examples/local_search.py) tunes: on the replay
# target for 40 trials in rounds of 8 (every trial logged once, distinct
# configs, none invalid, the strategy named "pipe"), and on the CPU for 8
# trials of GEMM 48^3, each kernel built and checked.
. "$(dirname "$0")/../common.sh"
FAST="--number 1 --repeat 1 --min-repeat-ms 1 --work-dir $W/work"
search replay $REPLAY --strategy pipe \
  --param "program=$EXAMPLES/local_search.py" --trials 40 --batch 8 \
  --seed 3 --log "$W/replay.jsonl"
[ "$(cat "$W/replay.status")" -eq 0 ] || fail "replay: the run failed"
check_log "$W/replay.jsonl" 40
[ "$(grep -c '"strategy":"pipe"' "$W/replay.jsonl")" -eq 40 ] ||
  fail "replay: the log does not name the strategy on every line"
! grep -q '"status":"invalid"' "$W/replay.jsonl" ||
  fail "replay: an invalid trial"
grep -q "dropped 0 invalid" "$W/replay.out" || fail "replay: invalid proposals"

search cpu --op gemm --shape 48,48,48 --strategy pipe \
  --param "program=$EXAMPLES/local_search.py" --trials 8 --batch 4 \
  --seed 3 --timeout 20 --log "$W/cpu.jsonl" $FAST
[ "$(cat "$W/cpu.status")" -eq 0 ] || fail "cpu: the run failed"
check_log "$W/cpu.jsonl" 8
[ "$(grep -c '"status":"ok"' "$W/cpu.jsonl")" -ge 6 ] ||
  fail "cpu: fewer than 6 of 8 trials ok"
echo ok
