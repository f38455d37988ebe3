#!/bin/sh
# usage_case.sh PROGRAM CASE_DIR - one data-driven command-line case of a
# bench program (usage/<program>/<case>/):
#
#   args     the arguments, one per line
#   status   the exit status wanted
#   stdout   or stderr: lines that must each occur in that stream (fixed
#            strings); the other stream must stay empty
#
# The program runs in an empty scratch folder, which must still be empty
# afterwards: a usage error or --help starts nothing (no tuning run, no
# output folder, no log).
set -eu
prog=$1 case=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-bench-usage.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
mkdir "$W/cwd"

fail() {
  echo "FAIL: $(basename "$prog") $(tr '\n' ' ' <"$case/args"): $*" >&2
  for f in "$W/out" "$W/err"; do
    echo "--- $f" >&2
    head -c 3000 "$f" >&2
  done
  exit 1
}

set --
while IFS= read -r a || [ -n "$a" ]; do
  set -- "$@" "$a"
done <"$case/args"
status=0
(cd "$W/cwd" && exec "$prog" "$@") >"$W/out" 2>"$W/err" || status=$?
want=$(cat "$case/status")
[ "$status" -eq "$want" ] || fail "exit status $status, want $want"
if [ -f "$case/stdout" ]; then
  stream=$W/out other=$W/err
  expect=$case/stdout
else
  stream=$W/err other=$W/out
  expect=$case/stderr
fi
while IFS= read -r line || [ -n "$line" ]; do
  grep -qF -- "$line" "$stream" || fail "no line with '$line'"
done <"$expect"
[ ! -s "$other" ] || fail "wrote to the other stream"
[ -z "$(ls -A "$W/cwd")" ] || fail "made files: $(ls -A "$W/cwd")"
