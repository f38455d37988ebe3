#!/bin/sh
# tools/record-dataset.sh BIN_DIR OUT_DIR - records the CPU fp32 GEMM
# 512^3 dataset (cpu-gemm512-fp32.jsonl.gz and its .hw.json) on this
# machine with the heron-search of BIN_DIR, into OUT_DIR.
#
# Four runs mix unguided and tuned configs: constrained random (seed 11,
# 1,500 trials), genetic + xgb (seed 12, 800), constrained random (seed 14,
# 900) and becbo (seed 13, 128).  Every kernel is checked against the
# reference as in any heron-search run.  Resumable: run it again after an
# interruption and each run continues its own log.  53 minutes on 2 cores
# when it was recorded.
set -eu
[ $# -eq 2 ] || {
  echo "usage: record-dataset.sh BIN_DIR OUT_DIR" >&2
  exit 2
}
search=$(cd "$1" && pwd)/heron-search
[ -x "$search" ] || {
  echo "record-dataset.sh: no heron-search in $1" >&2
  exit 2
}
mkdir -p "$2"
cd "$2"
common="--op gemm --shape 512,512,512 --number 1 --repeat 3
        --min-repeat-ms 0 --batch 32 --quiet --work-dir work"
run() { # run NAME TRIALS ARGS...
  name=$1 trials=$2
  shift 2
  resume=""
  [ -s "$name.jsonl" ] && resume="--resume $name.jsonl"
  echo "record-dataset.sh: $name ($trials trials)" >&2
  # shellcheck disable=SC2086
  "$search" $common --trials "$trials" --log "$name.jsonl" $resume "$@" \
    >"$name.out" 2>&1
}
run random1 1500 --strategy random --seed 11
run genetic 800 --strategy genetic --model xgb --seed 12
run random2 900 --strategy random --seed 14
run becbo 128 --strategy becbo --seed 13
cat random1.jsonl genetic.jsonl random2.jsonl becbo.jsonl |
  gzip -9n >cpu-gemm512-fp32.jsonl.gz

# The recording machine's description, for replaying the same space.
flags=$(cat /proc/cpuinfo)
flag() { if printf '%s\n' "$flags" | grep -qw "$1"; then echo true; else echo false; fi; }
model=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //' | cut -c1-40)
vbytes=32
[ "$(flag avx512f)" = true ] && vbytes=64
cat >cpu-gemm512-fp32.hw.json <<JSON
{
  "name": "$model, $(nproc) cores (recorded the dataset)",
  "target": "cpu",
  "cores": $(nproc),
  "l1_bytes": $(getconf LEVEL1_DCACHE_SIZE),
  "l2_bytes": $(getconf LEVEL2_CACHE_SIZE),
  "l3_bytes": $(getconf LEVEL3_CACHE_SIZE),
  "vector_bytes": $vbytes,
  "vector_regs": $([ $vbytes = 64 ] && echo 32 || echo 16),
  "has_fma": $(flag fma),
  "has_avx2": $(flag avx2),
  "has_avx512": $(flag avx512f),
  "has_vnni": $(flag avx512_vnni)
}
JSON
echo "record-dataset.sh: wrote $2/cpu-gemm512-fp32.jsonl.gz and .hw.json" >&2
