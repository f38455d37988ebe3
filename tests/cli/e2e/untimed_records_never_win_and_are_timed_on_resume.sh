#!/bin/sh
# Records of --compile-only are untimed: marked so in the log, never the
# best, never emitted; a timed resume of that log measures them.
. "$(dirname "$0")/../e2e_common.sh"
T="--op gemm --shape 64,64,64 --batch 4 --seed 2"
LOG=$W/c.jsonl
"$HERON_SEARCH" $T --trials 8 --compile-only --log "$LOG" --emit "$W/emit0" \
  $FAST >"$W/compile.out" 2>"$W/compile.err" || fail "compile-only run exited $?"
[ "$(grep -c '"untimed":true' "$LOG")" -eq 8 ] ||
  fail "compile-only ok lines are not marked untimed"
grep -q "^best       none timed" "$W/compile.out" ||
  fail "the compile-only summary names a best kernel"
[ -z "$(ls -A "$W/emit0" 2>/dev/null)" ] || fail "an untimed kernel was emitted"
"$HERON_SEARCH" $T --trials 8 --resume "$LOG" --emit "$W/emit1" $FAST \
  >"$W/timed.out" 2>"$W/timed.err" || fail "timed resume exited $?"
grep -q "^retried    8 " "$W/timed.out" ||
  fail "the timed resume did not measure the 8 untimed configs"
grep -q "^best       [0-9.]* GFLOP/s" "$W/timed.out" ||
  fail "the timed resume has no timed best"
! grep -q "^best       0.000 GFLOP/s" "$W/timed.out" || fail "an untimed best"
[ -n "$(ls -A "$W/emit1")" ] || fail "the timed best was not emitted"
timed=$(grep '"status":"ok"' "$LOG" | grep -vc '"untimed":true' || true)
[ "$timed" -eq 8 ] || fail "expected 8 timed ok lines after the resume, got $timed"
echo ok
