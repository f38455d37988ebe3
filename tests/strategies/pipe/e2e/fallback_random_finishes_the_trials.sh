#!/bin/sh
# With fallback=random a protocol failure (here invalid JSON in the second
# round, then a hang in the first) is said once, with the warning, and the
# run finishes its trials with random valid configs.
. "$(dirname "$0")/../common.sh"
P=$PIPE_TESTS/progs
search garbage $REPLAY --strategy pipe --param "program=$P/garbage_json.py" \
  --param fallback=random --trials 16 --batch 4 --seed 1 \
  --log "$W/garbage.jsonl" --quiet
[ "$(cat "$W/garbage.status")" -eq 0 ] || fail "garbage: the run failed"
grep -qF "sent invalid JSON during 'propose' (id 4): 'this is {not JSON" \
  "$W/garbage.err" || fail "garbage: the failure was not named"
[ "$(grep -c "going on with random valid configs" "$W/garbage.err")" -eq 1 ] ||
  fail "garbage: not exactly one fallback warning"
check_log "$W/garbage.jsonl" 16
! grep -q '"status":"invalid"' "$W/garbage.jsonl" ||
  fail "garbage: a random config was invalid"

# The hang is ended by timeout=1: the plugin's debug line says the program
# was killed within 4 s of the request it left unanswered (its own clock,
# not the run's wall time, which a loaded machine stretches).
search hang $REPLAY --strategy pipe --param "program=$P/hang.py" \
  --param fallback=random --param timeout=1 --trials 12 --batch 4 --seed 1 \
  --log "$W/hang.jsonl" --verbose
[ "$(cat "$W/hang.status")" -eq 0 ] || fail "hang: the run failed"
grep -qF "within 1 s (timeout=); killed it" "$W/hang.err" ||
  fail "hang: the timeout was not named"
check_log "$W/hang.jsonl" 12
x=$(sed -n "s/^\[pipe\] hang.py: stopped \([0-9.]*\) s after the host sent .*/\1/p" \
  "$W/hang.err" | head -1)
[ -n "$x" ] || fail "hang: no debug line says when the program was stopped"
awk -v x="$x" 'BEGIN { exit !(x < 4) }' ||
  fail "hang: killed $x s after the request, with timeout=1"
echo ok
