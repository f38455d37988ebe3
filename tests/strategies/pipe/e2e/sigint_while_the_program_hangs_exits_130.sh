#!/bin/sh
# A Ctrl-C (SIGINT) while the program never answers ends the run at once,
# not after timeout= (600 s here) or --plugin-timeout (600 s): exit status
# 130, a message naming the blocked call, the log's 4 records of the first
# round whole, no process of the program left.  The guard's own clock says
# it ended the call 2 s (its grace) after the signal, under 3.5 s; the
# test's wait for the exit is only a safety net (60 s, a tenth of what the
# hang would last without the fix).
. "$(dirname "$0")/../common.sh"
# Like progs/hang.py (it answers the first round and never the second
# propose), but it says when it hangs by creating $W/hanging.
P=$W/hang_here.py
cat >"$P" <<PY
#!/usr/bin/env python3
import sys, time
sys.path.insert(0, "$PIPE_TESTS/progs")
from common import serve
def bad(m):
    open("$W/hanging", "w").close()
    time.sleep(3600)
serve(bad)
PY
chmod +x "$P"
"$HERON_SEARCH" $REPLAY --strategy pipe --param "program=$P" \
  --param timeout=600 --plugin-timeout 600 --trials 12 --batch 4 --seed 1 \
  --log "$W/run.jsonl" >"$W/run.out" 2>"$W/run.err" &
pid=$!
n=0
while [ ! -e "$W/hanging" ]; do
  kill -0 $pid 2>/dev/null || fail "the run ended before the hang"
  n=$((n + 1))
  [ $n -lt 1200 ] || { kill -9 $pid; fail "the program never got to hang"; }
  sleep 0.1
done
kill -INT $pid
n=0
while kill -0 $pid 2>/dev/null; do
  n=$((n + 1))
  [ $n -lt 600 ] || { kill -9 $pid; fail "60 s after SIGINT the run still ran"; }
  sleep 0.1
done
set +e
wait $pid
st=$?
set -e
[ $st -eq 130 ] || fail "exit status $st, expected 130"
grep -qF "heron: SIGINT: the strategy plugin " "$W/run.err" ||
  fail "no message names the signal"
grep -qF "is blocked in propose" "$W/run.err" ||
  fail "the message does not name the blocked call"
grep -qF "(exit status 130). The log $W/run.jsonl holds every trial" \
  "$W/run.err" || fail "the message does not say what the log holds"
after=$(sed -n 's/.*; still \([0-9.]*\) s after the signal).*/\1/p' "$W/run.err")
[ -n "$after" ] || fail "the message does not say when the call was ended"
awk -v x="$after" 'BEGIN { exit !(x >= 2 && x < 3.5) }' ||
  fail "the call was ended $after s after the signal"
check_log "$W/run.jsonl" 4
left=$(leftover "$P")
[ -z "$left" ] || fail "a process of the program outlived the run: $left"
echo "ok (ended $after s after the signal)"
