#!/bin/sh
# cuda_bench.sh BEHAVIOUR BENCH_CUDA DATASET_DIR - bench_cuda (bench/
# bench_cuda.c) where no GPU is needed: rebuilding the best kernel of every
# task of the recorded GPU dataset, and the clear refusal to time anything
# without a GPU.
set -eu
behaviour=$1 prog=$2 data=$3
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-bench-cuda.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
fail() {
  echo "FAIL: $behaviour: $*" >&2
  for f in "$W/out" "$W/err"; do
    echo "--- $f" >&2
    head -c 3000 "$f" >&2 || true
  done
  exit 1
}
status=0
case $behaviour in
dry_run_rebuilds_the_best_config_of_every_dataset_task)
  # Every task of configs/datasets/cuda-h200 (the suite and GEMM 4096^3):
  # its logs read, its fastest timed config rebuilt for the H200 and
  # compiled by NVRTC for sm_90.
  "$prog" --dry-run --hw h200 --log "$data" >"$W/out" 2>"$W/err" || status=$?
  [ "$status" -eq 0 ] || fail "exit status $status, want 0"
  n=$(grep -c 'records; best .* us as tuned; built for sm_90' "$W/out") || true
  want=$(ls "$data"/*.jsonl.gz | wc -l)
  [ "$n" -eq "$want" ] || fail "$n tasks rebuilt, want $want"
  grep -q '^gemm/4096,4096,4096/fp16/cuda: 160 records' "$W/out" ||
    fail "GEMM 4096 not read whole"
  ;;
without_a_gpu_it_says_so_and_exits_1)
  HERON_LIBCUDA=/nonexistent/libcuda.so.1 \
    "$prog" --log "$data/GEMM.jsonl.gz" >"$W/out" 2>"$W/err" || status=$?
  [ "$status" -eq 1 ] || fail "exit status $status, want 1"
  grep -q 'bench_cuda: needs an NVIDIA GPU: .*no CUDA driver' "$W/err" ||
    fail "no clear message"
  [ ! -s "$W/out" ] || fail "printed a table without a GPU"
  ;;
*)
  fail "unknown behaviour"
  ;;
esac
