#!/bin/sh
# A strategy or model plugin that crashes or hangs ends the run with status
# 1 and a message naming the plugin file and the call; the log keeps every
# line written before, whole.  A hang is stopped by --plugin-timeout, and by
# --time-limit when that ends first.
. "$(dirname "$0")/../e2e_common.sh"
: "${HERON_TEST_PLUGIN_DIR:?set HERON_TEST_PLUGIN_DIR to the test plugins}"
P=$HERON_TEST_PLUGIN_DIR
T="--op gemm --shape 64,64,64 --trials 16 --batch 4 --seed 4"

# expect NAME STATUS PATTERN...: the run NAME exited STATUS and its stderr
# holds each fixed-string PATTERN.
expect() {
  _n=$1 _want=$2
  shift 2
  _st=$(cat "$W/$_n.status")
  [ "$_st" -eq "$_want" ] || fail "$_n: exit $_st, expected $_want"
  for _p in "$@"; do
    grep -qF -- "$_p" "$W/$_n.err" || fail "$_n: stderr lacks '$_p'"
  done
}
run() {
  _n=$1
  shift
  set +e
  "$HERON_SEARCH" $T "$@" >"$W/$_n.out" 2>"$W/$_n.err"
  echo $? >"$W/$_n.status"
  set -e
}

run crash --strategy "$P/strat_crash_propose.so" --log "$W/crash.jsonl" $FAST
expect crash 1 "$P/strat_crash_propose.so" "propose" "SIGSEGV" "$W/crash.jsonl"

# The model crashes in fit, after the first round was logged: that round
# stays in the log, whole.
run fit --model "$P/model_crash_fit.so" --log "$W/fit.jsonl" $FAST
expect fit 1 "$P/model_crash_fit.so" "fit" "SIGSEGV"
check_log "$W/fit.jsonl" --lines 4 --trials 4

# How soon a hang is stopped is read from the guard's own message ("did
# not return from propose within L s (...; found N s into the call)": the
# watchdog's clock, from the call's start to the kill), not from this
# script's wall clock, which a busy machine stretches with everything else
# the run does (startup, builds, measuring).  The call ran at least its
# limit L and was stopped within 1 s after it (the watchdog looks every
# 0.1 s).
# stopped NAME MAX_LIMIT: L <= MAX_LIMIT and L <= N < L + 1.
stopped() {
  _l=$(sed -n 's/.* within \([0-9][0-9.]*\) s (--plugin-timeout.*/\1/p' \
    "$W/$1.err" | head -n 1)
  _f=$(sed -n 's/.* found \([0-9][0-9.]*\) s into the call.*/\1/p' \
    "$W/$1.err" | head -n 1)
  [ -n "$_l" ] && [ -n "$_f" ] ||
    fail "$1: stderr lacks 'within L s (--plugin-timeout ...; found N s into the call)'"
  echo "$1: a call limited to $_l s was stopped $_f s into it" >&2
  awk -v l="$_l" -v f="$_f" -v max="$2" \
    'BEGIN { exit !(l <= max && f >= l && f < l + 1) }' ||
    fail "$1: a call limited to $_l s (at most $2) was stopped $_f s into it"
}

run hang --strategy "$P/strat_hang_propose.so" --plugin-timeout 2 $FAST
expect hang 1 "$P/strat_hang_propose.so" "propose" "within 2 s"
stopped hang 2

# --time-limit 3 leaves the call at most the 3 s of the run, less what the
# run spent before it.
run hang_limit --strategy "$P/strat_hang_propose.so" --time-limit 3 $FAST
expect hang_limit 1 "$P/strat_hang_propose.so" "propose"
stopped hang_limit 3
echo ok
