#!/bin/sh
# dry_run.sh BENCH_CUDA DATASET_DIR - bench_cuda --dry-run on the recorded
# H200 dataset checks, without a GPU, both cuDNN baselines of every
# convolution task: the legacy API's descriptors give the op's output
# extents and cuDNN's backend finalizes the graph API's operation.  Each of
# the dataset's five convolutions must say so.
set -eu
prog=$1 data=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-cudnn-graph.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
status=0
"$prog" --dry-run --hw h200 --log "$data" >"$W/out" 2>"$W/err" || status=$?
fail() {
  echo "FAIL: $*" >&2
  head -c 4000 "$W/out" "$W/err" >&2
  exit 1
}
[ "$status" -eq 0 ] || fail "exit status $status, want 0"
for op in c1d c2d c3d dil t2d; do
  grep -q "^$op/.*: cuDNN .*: the legacy descriptors agree, the graph operation finalized\$" "$W/out" ||
    fail "no cuDNN check passed for $op"
done
grep -q '^t2d/.*: cuDNN backward data, ' "$W/out" || fail "t2d is not backward data"
grep -q '^c3d/.*: cuDNN forward, x 16x64x8x56x56, w 64x64x3x3x3, y 16x64x8x56x56:' "$W/out" ||
  fail "c3d's tensors are not NCDHW"
echo "ok: the five convolutions' cuDNN descriptors check out"
