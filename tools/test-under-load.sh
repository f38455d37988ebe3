#!/usr/bin/env bash
# Runs `bash tools/test.sh` (its arguments and environment passed on, e.g.
# HERON_TEST_BUILD=DIR or HERON_CPU_ISA=avx2) with a CPU-bound load on
# every core beside it, the check that the suite holds on a busy machine:
# no test may bound a wall time that other work can stretch.  The load is
# stress-ng (--cpu N) when it is installed, else one busy loop per core in
# awk; HERON_LOAD_JOBS=N sets how many (default: nproc).  The load is
# stopped when the tests end or the script is interrupted, and the script
# exits with the test run's status.
set -uo pipefail
cd "$(dirname "$0")/.."
n=${HERON_LOAD_JOBS:-$(nproc)}
pids=()
stop_load() {
  [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null
  wait "${pids[@]}" 2>/dev/null
  pids=()
}
trap 'stop_load; exit 130' INT
trap 'stop_load; exit 143' TERM
trap stop_load EXIT
if command -v stress-ng >/dev/null; then
  echo "== load: stress-ng --cpu $n"
  stress-ng --cpu "$n" --quiet &
  pids+=($!)
else
  echo "== load: $n busy loops (awk; stress-ng is not installed)"
  for _ in $(seq "$n"); do
    awk 'BEGIN { for (;;) x++ }' &
    pids+=($!)
  done
fi
bash tools/test.sh "$@"
rc=$?
stop_load
echo "== tests under load (${n} CPU-bound jobs): exit status $rc"
exit $rc
