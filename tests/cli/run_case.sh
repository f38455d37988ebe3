#!/bin/sh
# run_case.sh CASE_DIR - runs one data-driven command-line case (the layout is
# in tests/cli/CMakeLists.txt) and fails, saying why, when the exit status or
# the output differs from what the case expects.
set -u
CASE_DIR=$1
name=$(basename "$CASE_DIR")
: "${HERON_SEARCH:?set HERON_SEARCH to the heron-search binary}"
: "${HERON_SPACE:?set HERON_SPACE to the heron-space binary}"
for f in cmd expect_status; do
  if [ ! -f "$CASE_DIR/$f" ]; then
    echo "case $name: missing file $f" >&2
    exit 1
  fi
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/heron-cli-$name.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
export HERON_SEARCH HERON_SPACE CASE_DIR TMP

cmd=$(cat "$CASE_DIR/cmd")
# The case runs in the scratch folder so that relative paths it writes land
# there and never in the source or build tree.
(cd "$TMP" && sh -c "$cmd") >"$TMP/.stdout" 2>"$TMP/.stderr"
status=$?
expect=$(tr -d ' \n' <"$CASE_DIR/expect_status")

fail=0
if [ "$status" != "$expect" ]; then
  echo "case $name: exit status $status, expected $expect" >&2
  fail=1
fi
# check WHICH FILE: every non-empty line of expect_WHICH must occur in FILE.
check() {
  [ -f "$CASE_DIR/expect_$1" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    [ -z "$line" ] && continue
    if ! grep -qF -- "$line" "$2"; then
      echo "case $name: $1 lacks: $line" >&2
      fail=1
    fi
  done <"$CASE_DIR/expect_$1"
}
check stderr "$TMP/.stderr"
check stdout "$TMP/.stdout"
if [ $fail -ne 0 ]; then
  echo "--- command: $cmd" >&2
  echo "--- stdout:" >&2
  head -c 4000 "$TMP/.stdout" >&2
  echo "--- stderr:" >&2
  head -c 4000 "$TMP/.stderr" >&2
  exit 1
fi
echo "case $name: ok"
exit 0
