#!/bin/sh
# A log of another task given to --resume is refused (exit 1, naming the
# task) and left as it was.
. "$(dirname "$0")/../e2e_common.sh"
LOG=$W/other.jsonl
"$HERON_SEARCH" --op gemm --shape 64,64,64 --trials 4 --batch 4 \
  --log "$LOG" $FAST >"$W/first.out" 2>"$W/first.err" ||
  fail "first run exited with $?"
cp "$LOG" "$W/before.jsonl"
set +e
"$HERON_SEARCH" --op gemm --shape 128,128,128 --trials 8 --resume "$LOG" \
  $FAST >"$W/second.out" 2>"$W/second.err"
status=$?
set -e
[ "$status" -eq 1 ] || fail "exit status $status, expected 1"
grep -q "HERON_ETASK" "$W/second.err" || fail "stderr lacks HERON_ETASK"
grep -Eq "gemm/(64,64,64|128,128,128)" "$W/second.err" ||
  fail "stderr does not name the task"
cmp -s "$LOG" "$W/before.jsonl" || fail "the other task's log was modified"
echo ok
