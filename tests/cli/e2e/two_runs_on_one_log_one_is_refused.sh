#!/bin/sh
# Two runs started at the same moment on one --log: one tunes, the other is
# refused at once, naming the file and the process that holds it; the log
# holds only whole lines of the one run.
. "$(dirname "$0")/../e2e_common.sh"
LOG=$W/shared.jsonl
run() {
  _st=0
  "$HERON_SEARCH" --op gemm --shape 96,96,96 --trials 16 --batch 4 --seed "$1" \
    --log "$LOG" $FAST --work-dir "$W/work$1" >"$W/run$1.out" \
    2>"$W/run$1.err" || _st=$?
  echo $_st >"$W/run$1.status"
}
run 1 &
run 2 &
wait
s1=$(cat "$W/run1.status") s2=$(cat "$W/run2.status")
case "$s1$s2" in
01) loser=2 winner=1 ;;
10) loser=1 winner=2 ;;
*) fail "exit statuses $s1 and $s2: expected one run to finish and one refused" ;;
esac
grep -q "log $LOG is in use by process [0-9]" "$W/run$loser.err" ||
  fail "the refused run does not name the log and the process holding it"
check_log "$LOG" --lines 16 --trials 16 --unique-configs
[ "$(grep -c "\"seed\":$winner" "$LOG")" -eq 16 ] ||
  fail "the log holds lines of the refused run"
# The lock ends with the run: a later run on the same log is accepted.
"$HERON_SEARCH" --op gemm --shape 96,96,96 --trials 20 --batch 4 \
  --resume "$LOG" $FAST >"$W/after.out" 2>"$W/after.err" ||
  fail "a run after both ended was refused"
check_log "$LOG" --lines 20 --trials 20 --unique-configs
echo ok
