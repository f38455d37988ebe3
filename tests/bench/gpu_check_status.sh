#!/bin/sh
# gpu_check_status.sh SOURCE_DIR BUILD - tools/gpu-check.sh reports each
# phase and exits non-zero when one fails: run with PHASES="smoke bench" and
# no driver (HERON_LIBCUDA names none, as on a machine without a GPU), the
# smoke phase fails (its test skipped: no GPU), the bench phase fails (no
# logs), the script goes through both, prints a summary naming each, and
# exits 1; an unknown phase is a usage error (2).
set -u
src=$1 build=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-gpu-check.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; cat "$W/out" >&2; exit 1; }
st=0
HERON_LIBCUDA=/nonexistent/libcuda.so.1 BUILD=$build PHASES="smoke bench" \
  bash "$src/tools/gpu-check.sh" "$W/o" >"$W/out" 2>&1 || st=$?
[ "$st" -eq 1 ] || fail "gpu-check.sh exited with $st, expected 1"
grep -q "^== summary" "$W/out" || fail "no summary"
grep -q '^smoke: FAILED (skipped: no GPU found' "$W/out" ||
  fail "the summary does not give the smoke phase as failed"
grep -q '^bench: FAILED (no tuning logs in ' "$W/out" ||
  fail "the summary does not give the bench phase as failed (it was not run?)"
grep -q '^gpu-check.sh: FAILED' "$W/out" || fail "no final FAILED line"
st=0
BUILD=$build PHASES="smoke tune-all" bash "$src/tools/gpu-check.sh" "$W/o" \
  >"$W/out" 2>&1 || st=$?
[ "$st" -eq 2 ] || fail "an unknown phase gave exit $st, expected 2"
grep -q "unknown phase 'tune-all'" "$W/out" || fail "the unknown phase is not named"
# With DEADLINE, a phase that would start with less than a minute left is
# skipped, said in the summary and in OUTDIR/summary.txt.
st=0
HERON_LIBCUDA=/nonexistent/libcuda.so.1 BUILD=$build PHASES="tests cpu" DEADLINE=30 \
  bash "$src/tools/gpu-check.sh" "$W/o2" >"$W/out" 2>&1 || st=$?
grep -q '^tests: skipped (time budget: [0-9]* s of DEADLINE=30 left)' "$W/out" ||
  fail "the tests phase was not skipped for the time budget"
grep -q '^cpu: skipped (time budget' "$W/o2/summary.txt" ||
  fail "summary.txt does not give the cpu phase as skipped"
st=0
BUILD=$build PHASES="smoke" DEADLINE=soon bash "$src/tools/gpu-check.sh" "$W/o" \
  >"$W/out" 2>&1 || st=$?
[ "$st" -eq 2 ] || fail "DEADLINE=soon gave exit $st, expected 2"
echo "ok: failed phases reported in the summary, exit 1; unknown phase and bad DEADLINE exit 2; phases skipped past DEADLINE"
