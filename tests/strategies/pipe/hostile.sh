#!/bin/sh
# hostile.sh PROGRAM - runs heron-search with the pipe strategy on one
# misbehaving program of progs/ and checks that the run fails (exit status
# 1, not a signal), that stderr holds every "# expect-stderr:" line of the
# program (what went wrong, quoting what it sent) and no raw control
# character (the program's escape sequences are shown, not obeyed), that
# the log holds the "# log-lines:" trials written before, whole, and that
# no process of the program is left.
#
# Time is bounded by what the plugin itself measures, never by the run's
# wall time (which a loaded machine stretches): its debug line "NAME:
# stopped X s after the host sent 'propose' (id 4); the stop took Y s"
# ("after the host started it" for a program that fails before the first
# request, as banner.sh may) must show the failure ending the program in Y < 3 s (a SIGTERM, then a
# second before SIGKILL), and, with "# kill-within: N", the program killed
# X < N s after the request it did not answer.
# "# param: K=V" lines are extra --param values for the plugin.
. "$(dirname "$0")/common.sh"
PROG=$1
NAME=$(basename "$PROG")
header() { sed -n "s/^# $1: //p" "$PROG"; }
params=""
for p in $(header param); do params="$params --param $p"; done
want_lines=$(header log-lines)
kill_within=$(header kill-within)
search run $REPLAY --strategy pipe --param "program=$PROG" $params \
  --trials 12 --batch 4 --seed 1 --log "$W/run.jsonl" --verbose
st=$(cat "$W/run.status")
[ "$st" -eq 1 ] || fail "$NAME: exit status $st, expected 1"
header expect-stderr >"$W/expect"
while IFS= read -r line; do
  grep -qF -- "$line" "$W/run.err" || fail "$NAME: stderr lacks: $line"
done <"$W/expect"
raw=$(tr -d '\t\n' <"$W/run.err" | LC_ALL=C tr -dc '\000-\037\177' | wc -c)
[ "$raw" -eq 0 ] || fail "$NAME: $raw raw control characters reached stderr"
check_log "$W/run.jsonl" "${want_lines:-0}"
stop=$(sed -n "s/^\[pipe\] $NAME: stopped \([0-9.]*\) s after .*; the stop took \([0-9.]*\) s .*/\1 \2/p" "$W/run.err" | head -1)
[ -n "$stop" ] || fail "$NAME: no debug line says how the program was stopped"
set -- $stop
awk -v y="$2" 'BEGIN { exit !(y < 3) }' ||
  fail "$NAME: stopping the program took $2 s"
if [ -n "$kill_within" ]; then
  awk -v x="$1" -v n="$kill_within" 'BEGIN { exit !(x < n) }' ||
    fail "$NAME: killed $1 s after the request, not within $kill_within s"
fi
left=$(leftover "$PROG")
[ -z "$left" ] || fail "$NAME: a process of the program outlived the run: $left"
echo "$NAME: ok (stopped $1 s after the request, in $2 s)"
