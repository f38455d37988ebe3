#!/bin/sh
# hostile.sh PROGRAM - runs heron-search with the pipe strategy on one
# misbehaving program of progs/ and checks that the run fails (exit status
# 1, not a signal), that stderr holds every "# expect-stderr:" line of the
# program (what went wrong, quoting what it sent), that the log holds the
# "# log-lines:" trials written before, whole, that it took less than
# "# max-seconds:" (default 15), and that no process of the program is left.
# "# param: K=V" lines are extra --param values for the plugin.
. "$(dirname "$0")/common.sh"
PROG=$1
NAME=$(basename "$PROG")
header() { sed -n "s/^# $1: //p" "$PROG"; }
params=""
for p in $(header param); do params="$params --param $p"; done
want_lines=$(header log-lines)
max_s=$(header max-seconds)
start=$(date +%s)
search run $REPLAY --strategy pipe --param "program=$PROG" $params \
  --trials 12 --batch 4 --seed 1 --log "$W/run.jsonl" --quiet
took=$(($(date +%s) - start))
st=$(cat "$W/run.status")
[ "$st" -eq 1 ] || fail "$NAME: exit status $st, expected 1"
header expect-stderr >"$W/expect"
while IFS= read -r line; do
  grep -qF -- "$line" "$W/run.err" || fail "$NAME: stderr lacks: $line"
done <"$W/expect"
check_log "$W/run.jsonl" "${want_lines:-0}"
[ "$took" -lt "${max_s:-15}" ] || fail "$NAME: the run took $took s"
left=$(leftover "$PROG")
[ -z "$left" ] || fail "$NAME: a process of the program outlived the run: $left"
echo "$NAME: ok"
