#!/bin/bash
# tools/mpi_scaling.sh BIN_DIR [OUT_DIR] - how heron-search and heron-bench
# scale over MPI ranks on this machine (mpirun --oversubscribe), against
# one process measured in the same run:
#
#   replay    GEMM 512^3 on the shipped replay dataset, random search, 64
#             trials, batch 16, each answer taking --replay-delay 250 ms (a
#             stand-in for measuring, so scaling shows on 2 cores): one
#             process, then 1, 2, 4 and 8 measuring ranks (mpirun -n 2, 3,
#             5, 9); trials per minute and the scaling efficiency (trials
#             per minute over one process's times the measuring ranks);
#   cpu       GEMM 256^3 fp32 on this CPU, 32 trials, batch 8, one kernel
#             thread: one process, then 2 measuring ranks (mpirun -n 3);
#   bench     heron-bench, 3 strategies (random, genetic, becbo) x 10 seeds,
#             24 trials a run on the replay dataset with 100 ms answers, on
#             1 rank and on 4 (mpirun -n 4): wall time.
# Prints Markdown tables; OUT_DIR (default a temporary folder) keeps the
# logs.  Needs a build with MPI and mpirun (tools/setup.sh).
set -eu
bin=$(cd "${1:?usage: mpi_scaling.sh BIN_DIR [OUT_DIR]}" && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
data=$src/configs/datasets/cpu-gemm512-fp32.jsonl.gz
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
now() { date +%s.%N; }
calc() { awk "BEGIN { print $* }"; }
# run LABEL CMD...: wall seconds of CMD into $secs
run() {
  local label=$1
  shift
  local t0
  t0=$(now)
  "$@" >"$out/$label.out" 2>"$out/$label.err" || {
    echo "mpi_scaling.sh: $label failed:" >&2
    tail -5 "$out/$label.err" >&2
    exit 1
  }
  secs=$(calc "$(now) - $t0")
}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(mpirun --version | head -1)"
echo

replay="--op gemm --shape 512,512,512 --target replay --replay $data
        --strategy random --trials 64 --batch 16 --replay-delay 250 --quiet"
echo "| replay, 250 ms answers | measuring ranks | wall s | trials/min | efficiency |"
echo "|---|---:|---:|---:|---:|"
# shellcheck disable=SC2086
run replay-1 "$bin/heron-search" $replay --log "$out/replay-1.jsonl"
base=$(calc "64 * 60 / $secs")
printf "| one process | 1 | %.1f | %.0f | 1.00 |\n" "$secs" "$base"
for n in 2 3 5 9; do
  rm -f "$out/replay-n$n.jsonl"
  # shellcheck disable=SC2086
  run "replay-n$n" mpirun -n $n -x HERON_REPLAY_DELAY_MS "$bin/heron-search" \
    $replay --log "$out/replay-n$n.jsonl"
  tpm=$(calc "64 * 60 / $secs")
  printf "| mpirun -n %d | %d | %.1f | %.0f | %.2f |\n" "$n" $((n - 1)) \
    "$secs" "$tpm" "$(calc "$tpm / ($base * ($n - 1))")"
done
echo

cpu="--op gemm --shape 256,256,256 --trials 32 --batch 8 --threads 1 --quiet"
echo "| cpu, GEMM 256^3, 1 thread a kernel | measuring ranks | wall s | trials/min | efficiency |"
echo "|---|---:|---:|---:|---:|"
# shellcheck disable=SC2086
run cpu-1 "$bin/heron-search" $cpu --log "$out/cpu-1.jsonl"
base=$(calc "32 * 60 / $secs")
printf "| one process | 1 | %.1f | %.0f | 1.00 |\n" "$secs" "$base"
rm -f "$out/cpu-n3.jsonl"
# shellcheck disable=SC2086
run cpu-n3 mpirun -n 3 "$bin/heron-search" $cpu --log "$out/cpu-n3.jsonl"
tpm=$(calc "32 * 60 / $secs")
printf "| mpirun -n 3 | 2 | %.1f | %.0f | %.2f |\n" "$secs" "$tpm" \
  "$(calc "$tpm / ($base * 2)")"
echo

export HERON_REPLAY_DELAY_MS=100
hb="--suite $src/configs/suites/cpu-gemm512.json --target replay
    --replay $data --strategies random,genetic,becbo --seeds 1-10
    --trials 24 --quiet"
echo "| heron-bench, 3 strategies x 10 seeds, 100 ms answers | ranks | wall s | speed-up |"
echo "|---|---:|---:|---:|"
rm -rf "$out/hb-1" "$out/hb-4"
# shellcheck disable=SC2086
run hb-1 "$bin/heron-bench" $hb --out "$out/hb-1"
base=$secs
printf "| one process | 1 | %.1f | 1.00 |\n" "$secs"
# shellcheck disable=SC2086
run hb-4 mpirun -n 4 -x HERON_REPLAY_DELAY_MS "$bin/heron-bench" $hb \
  --out "$out/hb-4"
printf "| mpirun -n 4 | 4 | %.1f | %.2f |\n" "$secs" \
  "$(calc "$base / $secs")"
if cmp -s <(cut -d, -f1-8,10 "$out/hb-1/runs.csv") \
  <(cut -d, -f1-8,10 "$out/hb-4/runs.csv"); then
  echo
  echo "The 4-rank comparison's runs.csv equals one process's (all but elapsed time)."
fi
