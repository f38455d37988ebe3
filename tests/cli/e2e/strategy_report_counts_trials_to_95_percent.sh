#!/bin/sh
# tools/strategies_report.py: the best of all runs sets the target; each
# run counts the first trial whose best-so-far reaches 95% of it; a run that
# never does counts as its budget; failed trials never count as fast.
. "$(dirname "$0")/../e2e_common.sh"
rec() { # trial status gflops
  printf '{"task":"t","trial":%d,"config":{},"status":"%s","seconds":1,"gflops":%s,"build_seconds":0,"error":"","strategy":"s","seed":1,"time":"2026-01-01T00:00:00Z"}\n' "$1" "$2" "$3"
}
# random: seed 1 reaches 100 at trial 4, seed 2 never passes 50.
{ rec 1 ok 10; rec 2 ok 20; rec 3 timeout 0; rec 4 ok 100; } >"$W/random-seed1.jsonl"
{ rec 1 ok 50; rec 2 ok 40; rec 3 ok 30; rec 4 ok 50; } >"$W/random-seed2.jsonl"
# smart: 96 (>= 95) at trial 2 and at trial 1; a wrong result of 500 is ignored.
{ rec 1 wrong_result 500; rec 2 ok 96; rec 3 ok 90; rec 4 ok 1; } >"$W/smart-seed1.jsonl"
{ rec 1 ok 99; rec 2 ok 9; rec 3 ok 9; rec 4 ok 9; } >"$W/smart-seed2.jsonl"
python3 "$HERON_SOURCE_DIR/tools/strategies_report.py" --trials 4 \
  "$W/random-seed1.jsonl" "$W/random-seed2.jsonl" \
  "$W/smart-seed1.jsonl" "$W/smart-seed2.jsonl" >"$W/report.out" 2>&1 ||
  fail "report exited $?"
grep -q "Best of all runs: 100.0 GFLOP/s; target 95% of it = 95.0" "$W/report.out" ||
  fail "wrong best or target"
grep -q "^| random | 4 | 4.0 | 1/2 | 75.0 | 1.00x |$" "$W/report.out" || fail "random row"
grep -q "^| smart | 1.5 | 1.5 | 2/2 | 97.5 | 0.38x |$" "$W/report.out" || fail "smart row"
# The second target is the baseline's mean final best; the checkpoint table
# holds the mean best-so-far at a quarter, half and all of the budget.
grep -q "^Target: the mean final best of random, 75.0 GFLOP/s.$" "$W/report.out" ||
  fail "baseline target"
grep -q "^| random | 30.0 | 35.0 | 75.0 |$" "$W/report.out" || fail "random checkpoints"
grep -q "^| smart | 49.5 | 97.5 | 97.5 |$" "$W/report.out" || fail "smart checkpoints"
echo ok
