#!/bin/sh
# The first SIGINT ends a run in order: exit 130, the summary on stdout,
# the best kernel emitted, the log whole; --resume goes on from it.  SIGTERM
# does the same with 143.  A second signal ends the run at once.
. "$(dirname "$0")/../e2e_common.sh"
T="--op gemm --shape 128,128,128 --batch 4 --seed 6"

# wait_lines PID LOG N: waits until LOG has N lines (the run still alive).
wait_lines() {
  i=0
  while [ "$(lines "$2")" -lt "$3" ]; do
    kill -0 "$1" 2>/dev/null || fail "the run ended before writing $3 lines"
    i=$((i + 1))
    [ $i -lt 1200 ] || { kill -9 "$1"; fail "no $3 log lines after 120 s"; }
    sleep 0.1
  done
}

for sig in INT TERM; do
  LOG=$W/$sig.jsonl
  "$HERON_SEARCH" $T --trials 400 --log "$LOG" --emit "$W/emit-$sig" $FAST \
    >"$W/$sig.out" 2>"$W/$sig.err" &
  pid=$!
  wait_lines $pid "$LOG" 4
  kill -$sig $pid
  set +e
  wait $pid
  st=$?
  set -e
  want=130
  [ $sig = TERM ] && want=143
  [ $st -eq $want ] || fail "SIG$sig: exit $st, expected $want"
  grep -q "^stopped    by SIG$sig" "$W/$sig.out" || fail "SIG$sig: no summary"
  grep -q "^best       [0-9.]* GFLOP/s" "$W/$sig.out" || fail "SIG$sig: no best"
  [ -f "$W/emit-$sig/kernel.c" ] || [ -n "$(ls -A "$W/emit-$sig")" ] ||
    fail "SIG$sig: nothing emitted"
  n=$(lines "$LOG")
  [ "$n" -lt 400 ] || fail "SIG$sig: the run was not stopped early"
  check_log "$LOG" --lines "$n" --trials "$n" --unique-configs
  grep -q "^trials     $n " "$W/$sig.out" ||
    fail "SIG$sig: the summary does not count the $n logged trials"
done

"$HERON_SEARCH" $T --trials $((n + 4)) --resume "$LOG" $FAST \
  >"$W/resumed.out" 2>"$W/resumed.err" || fail "resume after SIGTERM exited $?"
check_log "$LOG" --lines $((n + 4)) --trials $((n + 4)) --unique-configs

# Two signals: the second ends it at once, with the log still whole.
LOG=$W/twice.jsonl
"$HERON_SEARCH" $T --trials 400 --log "$LOG" $FAST >"$W/twice.out" \
  2>"$W/twice.err" &
pid=$!
wait_lines $pid "$LOG" 4
kill -INT $pid
kill -INT $pid
set +e
wait $pid
st=$?
set -e
[ $st -eq 130 ] || fail "two SIGINTs: exit $st, expected 130"
n=$(lines "$LOG")
check_log "$LOG" --lines "$n" --trials "$n" --unique-configs
echo ok
