#!/bin/sh
# The host keeps protocol 1 as conformance.py checks it: hello's space,
# every operation's answer, observe's results, ids that grow, state saved
# after each round and loaded on --resume after the resumed results, and
# bye at the end; with configs as objects and as arrays.
. "$(dirname "$0")/../common.sh"
C=$PIPE_TESTS/conformance.py
for mode in objects arrays; do
  flag=""
  [ $mode = arrays ] && flag="--arrays"
  T=$W/$mode.trace
  search $mode $REPLAY --strategy pipe --param "program=$C" \
    --param "args=$flag $T" --trials 8 --batch 4 --seed 2 \
    --log "$W/$mode.jsonl"
  [ "$(cat "$W/$mode.status")" -eq 0 ] || fail "$mode: the run failed"
  grep -q "conformance: [0-9]* checks passed" "$W/$mode.err" ||
    fail "$mode: conformance.py did not finish its checks"
  grep -qF "[pipe] conformance.py: exercised every op" "$W/$mode.err" ||
    fail "$mode: the program's log message did not reach the user"
  check_log "$W/$mode.jsonl" 8
  want="hello propose observe save propose observe save bye"
  [ "$(tr '\n' ' ' <"$T")" = "$want " ] ||
    fail "$mode: turns were: $(tr '\n' ' ' <"$T")"
done

# Resume: hello, the 8 logged results, then the state saved before.
search resumed $REPLAY --strategy pipe --param "program=$C" \
  --param "args=$W/resumed.trace" --trials 12 --batch 4 --seed 2 \
  --resume "$W/objects.jsonl" --log "$W/objects.jsonl"
[ "$(cat "$W/resumed.status")" -eq 0 ] || fail "the resumed run failed"
want="hello resumed 8 load 8 propose observe save bye"
[ "$(tr '\n' ' ' <"$W/resumed.trace")" = "$want " ] ||
  fail "resumed turns were: $(tr '\n' ' ' <"$W/resumed.trace")"
check_log "$W/objects.jsonl" 12
echo ok
