#!/bin/sh
# The toolchain is not the config.  A compiler that is missing, or cannot
# build a trivial kernel, stops the run before the first trial with status
# 2 naming it (in --dry-run too), and logs nothing.  One that breaks in the
# middle of a run (here: "No space left on device" after a few builds)
# stops the run with status 1 saying why; the round's failures are marked
# as the environment's and a resume with a working compiler measures them.
. "$(dirname "$0")/../e2e_common.sh"
T="--op gemm --shape 64,64,64 --trials 12 --batch 4 --seed 3"

for dry in "" --dry-run; do
  set +e
  "$HERON_SEARCH" $T --cc /nonexistent/gcc --log "$W/none.jsonl" $dry $FAST \
    >"$W/none.out" 2>"$W/none.err"
  st=$?
  set -e
  [ $st -eq 2 ] || fail "missing compiler ($dry): exit $st, expected 2"
  grep -q "/nonexistent/gcc" "$W/none.err" ||
    fail "missing compiler ($dry): the message does not name it"
  [ "$(lines "$W/none.jsonl")" -eq 0 ] || fail "missing compiler: lines logged"
done

# A compiler that works for its first 5 calls (the toolchain check, then 4
# builds: round one), then fails as a full disk would.
cat >"$W/flaky-cc" <<SH
#!/bin/sh
n=\$(cat "$W/count" 2>/dev/null || echo 0)
n=\$((n + 1))
echo \$n >"$W/count"
if [ \$n -gt 5 ] && [ ! -f "$W/fixed" ]; then
  echo "cc1: fatal error: cannot write output: No space left on device" >&2
  exit 1
fi
exec cc "\$@"
SH
chmod +x "$W/flaky-cc"
LOG=$W/flaky.jsonl
set +e
"$HERON_SEARCH" $T --cc "$W/flaky-cc" --build-jobs 1 --log "$LOG" $FAST \
  >"$W/flaky.out" 2>"$W/flaky.err"
st=$?
set -e
[ $st -eq 1 ] || fail "compiler broken mid-run: exit $st, expected 1"
grep -q "not the config" "$W/flaky.err" ||
  fail "compiler broken mid-run: the message does not say the failure is not the config's"
ok=$(grep -c '"status":"ok"' "$LOG" || true)
envf=$(grep -c '"cause":"environment"' "$LOG" || true)
[ "$ok" -eq 4 ] || fail "expected round one's 4 trials ok, got $ok"
[ "$envf" -eq 4 ] || fail "expected round two's 4 trials marked as the environment's, got $envf"
touch "$W/fixed"
"$HERON_SEARCH" $T --cc "$W/flaky-cc" --resume "$LOG" $FAST \
  >"$W/resumed.out" 2>"$W/resumed.err" || fail "resume exited $?"
grep -q "^retried    4 " "$W/resumed.out" ||
  fail "the resume did not measure the 4 environment failures again"
ok=$(grep -c '"status":"ok"' "$LOG" || true)
[ "$ok" -eq 12 ] || fail "after the resume $ok ok trials, expected 12"
echo ok
