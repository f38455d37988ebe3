#!/bin/sh
# --resume continues a search from its log: the trials already there are
# counted, none is measured again, and the log grows to the new budget.
. "$(dirname "$0")/../e2e_common.sh"
LOG=$W/r.jsonl
"$HERON_SEARCH" --op gemm --shape 128,128,128 --trials 8 --batch 4 \
  --log "$LOG" $FAST >"$W/first.out" 2>"$W/first.err" ||
  fail "first run exited with $?"
check_log "$LOG" --lines 8 --trials 8
cp "$LOG" "$W/first.jsonl"
"$HERON_SEARCH" --op gemm --shape 128,128,128 --trials 12 --batch 4 \
  --resume "$LOG" --log "$LOG" $FAST >"$W/second.out" 2>"$W/second.err" ||
  fail "resumed run exited with $?"
check_log "$LOG" --lines 12 --trials 12 --unique-configs
# The first eight lines must be the first run's, untouched.
head -n 8 "$LOG" | cmp -s - "$W/first.jsonl" ||
  fail "the resumed run rewrote the first run's lines"
grep -q "measured 4, resumed 8" "$W/second.out" ||
  fail "summary does not say 4 measured and 8 resumed"
echo ok
