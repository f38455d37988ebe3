#!/bin/sh
# heron-search writes one log line per trial with every field of docs/files.md
# section 7, and every trial of a small GEMM is built, run and verified.
. "$(dirname "$0")/../e2e_common.sh"
LOG=$W/a.jsonl
"$HERON_SEARCH" --op gemm --shape 128,128,128 --strategy random --trials 16 \
  --batch 8 --seed 3 --log "$LOG" $FAST >"$W/run.out" 2>"$W/run.err" ||
  fail "heron-search exited with $?"
check_log "$LOG" --lines 16 --trials 16 --unique-configs --all-ok \
  --task gemm/128,128,128/fp32/cpu
grep -q "^trials     16 (measured 16, resumed 0; ok 16, failed 0" "$W/run.out" ||
  fail "summary does not report 16 measured ok trials"
grep -q "^best       .* GFLOP/s" "$W/run.out" || fail "summary has no best"
echo ok
