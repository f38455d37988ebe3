#!/bin/sh
# A kernel that segfaults and one that never returns (planted by
# inject_cc.sh, used as --cc) each cost one trial, recorded with its status,
# and the run goes on to its full budget.  The timeout leaves a loaded
# machine's builds of the good kernels room (at 2 s one of them timed out
# while other test suites and benchmarks shared the two cores).
. "$(dirname "$0")/../e2e_common.sh"
"$HERON_SEARCH" --op gemm --shape 64,64,64 --trials 6 --batch 6 --seed 3 \
  --cc "$CLI_DIR/inject_cc.sh" --timeout 6 $FAST --log "$W/log.jsonl" \
  >"$W/search.out" 2>"$W/search.err" || fail "heron-search exited $?"
[ "$(lines "$W/log.jsonl")" -eq 6 ] || fail "expected 6 logged trials"
grep -q '"status":"runtime_error".*SIGSEGV' "$W/log.jsonl" ||
  fail "the crashing kernel was not recorded as a runtime_error naming SIGSEGV"
grep -q '"status":"timeout"' "$W/log.jsonl" ||
  fail "the hanging kernel was not recorded as a timeout"
ok=$(grep -c '"status":"ok"' "$W/log.jsonl")
[ "$ok" -eq 4 ] || fail "expected the 4 other trials ok, got $ok"
