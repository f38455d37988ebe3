#!/bin/sh
# gpu_smoke_expect.sh STATUS TEXT GPU_SMOKE HERON_SEARCH - runs gpu_smoke.sh
# (with the environment ctest gives: HERON_LIBCUDA naming no driver, a fake
# driver without devices, or one lacking entry points) and checks that it
# exits with STATUS (77: skipped, 1: failed) and that its output holds TEXT:
# only a machine without a GPU skips; a probe that fails otherwise fails.
set -u
want=$1 text=$2 smoke=$3 search=$4
out=$(sh "$smoke" "$search" 2>&1)
st=$?
echo "$out"
[ "$st" -eq "$want" ] || {
  echo "FAIL: gpu_smoke.sh exited with $st, expected $want (HERON_LIBCUDA=${HERON_LIBCUDA:-} HERON_FAKE_CUDA=${HERON_FAKE_CUDA:-})" >&2
  exit 1
}
printf '%s\n' "$out" | grep -qF -- "$text" || {
  echo "FAIL: gpu_smoke.sh's output lacks \"$text\"" >&2
  exit 1
}
echo "ok: exit $st, saying \"$text\""
