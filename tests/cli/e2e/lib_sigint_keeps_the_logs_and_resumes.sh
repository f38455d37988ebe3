#!/bin/sh
# A SIGINT while heron-lib tunes stops it in order: exit status 130, the
# task's log whole (every line a record, none lost), no library written;
# the same command with a budget just above what was measured resumes the
# log (nothing measured twice) and builds the library.
. "$(dirname "$0")/../e2e_common.sh"
: "${HERON_LIB:?set HERON_LIB to the heron-lib binary}"
SUITE=$CLI_DIR/lib/suite.json
LOG=$W/o/logs/t_gemm_f32_33x17x9.jsonl
LFAST="--number 1 --repeat 1 --min-repeat-ms 1"
"$HERON_LIB" --name t --out "$W/o" --suite "$SUITE" --tasks gemm \
  --strategy random --trials 400 --batch 2 $LFAST >"$W/run.out" \
  2>"$W/run.err" &
pid=$!
# Wait (a hang guard, not a speed check) for two rounds in the log.
i=0
while [ "$(lines "$LOG")" -lt 4 ]; do
  kill -0 "$pid" 2>/dev/null || fail "heron-lib ended before the signal"
  i=$((i + 1))
  [ "$i" -lt 6000 ] || { kill -9 "$pid"; fail "no 4 log lines in 600 s"; }
  sleep 0.1
done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "exit status $rc after SIGINT, wanted 130"
grep -q "stopped by SIGINT" "$W/run.err" || fail "no word of the signal"
[ ! -e "$W/o/lib" ] || fail "a stopped run wrote a library"
n=$(lines "$LOG")
check_log "$LOG" --lines "$n" --trials "$n" --unique-configs \
  --task gemm/33,17,9/fp32/cpu
"$HERON_LIB" --name t --out "$W/o" --suite "$SUITE" --tasks gemm \
  --strategy random --trials $((n + 2)) --batch 2 $LFAST >"$W/re.out" \
  2>"$W/re.err" || fail "the resumed run exited $?: $(cat "$W/re.err")"
grep -q "resumed $n" "$W/re.err" ||
  fail "the second run did not resume $n trials: $(cat "$W/re.err")"
[ "$(lines "$LOG")" -eq $((n + 2)) ] ||
  fail "the log has $(lines "$LOG") lines, wanted $((n + 2))"
check_log "$LOG" --lines $((n + 2)) --trials $((n + 2)) --unique-configs
[ -s "$W/o/lib/libt.so" ] || fail "no library after the resumed run"
echo ok
