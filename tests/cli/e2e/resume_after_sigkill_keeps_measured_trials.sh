#!/bin/sh
# A run killed with SIGKILL loses nothing already logged: its log is
# accepted by --resume, which completes the budget with new configs only.
. "$(dirname "$0")/../e2e_common.sh"
LOG=$W/k.jsonl
"$HERON_SEARCH" --op gemm --shape 128,128,128 --trials 40 --batch 4 \
  --log "$LOG" $FAST >"$W/killed.out" 2>"$W/killed.err" &
pid=$!
i=0
while [ "$(lines "$LOG")" -lt 1 ]; do
  kill -0 "$pid" 2>/dev/null || fail "the run ended before writing a line"
  i=$((i + 1))
  [ $i -lt 900 ] || { kill -9 "$pid"; fail "no log line after 90 s"; }
  sleep 0.1
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
n=$(lines "$LOG")
[ "$n" -lt 20 ] || fail "the run logged $n trials before the kill; test inconclusive"
"$HERON_SEARCH" --op gemm --shape 128,128,128 --trials 20 --batch 4 \
  --resume "$LOG" --log "$LOG" $FAST >"$W/resumed.out" 2>"$W/resumed.err" ||
  fail "resuming the killed run's log exited with $?"
check_log "$LOG" --lines 20 --trials 20 --unique-configs
grep -q "resumed $n" "$W/resumed.out" ||
  fail "summary does not say $n trials were resumed"
echo ok
