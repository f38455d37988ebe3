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

start=$(date +%s)
run hang --strategy "$P/strat_hang_propose.so" --plugin-timeout 2 $FAST
took=$(($(date +%s) - start))
expect hang 1 "$P/strat_hang_propose.so" "propose" "2 s"
[ $took -lt 30 ] || fail "the hanging plugin was stopped after $took s"

start=$(date +%s)
run hang_limit --strategy "$P/strat_hang_propose.so" --time-limit 3 $FAST
took=$(($(date +%s) - start))
expect hang_limit 1 "$P/strat_hang_propose.so" "propose"
[ $took -lt 30 ] || fail "--time-limit 3 stopped the hang after $took s"
echo ok
