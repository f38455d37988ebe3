#!/usr/bin/env bash
# Writes the generated kernel source of sampled configs of every op, dtype,
# hardware description and target into a folder, one file per case and seed,
# so two builds' generators can be compared byte for byte:
#
#   bash tools/dump-sources.sh build-old /tmp/old
#   bash tools/dump-sources.sh build     /tmp/new
#   diff -r /tmp/old /tmp/new && echo identical
#
# Usage: tools/dump-sources.sh BUILD_DIR OUT_DIR [SEEDS]   (SEEDS default 8)
# A case the library refuses (an op a target does not cover) writes the
# error text instead, so a changed refusal shows up as a difference too.
# Prints how many files it wrote.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR [SEEDS]" >&2
  exit 2
fi
space=$1/bin/heron-space
out=$2
seeds=${3:-8}
if [ ! -x "$space" ]; then
  echo "$0: $space is not built" >&2
  exit 2
fi
mkdir -p "$out"

# op name, shape: small and odd extents, so edge tiles appear.
shapes=(
  "gemm 64,48,40" "gemm 33,65,17" "gemm 3,5,7" "bmm 2,32,24,40"
  "gemv 96,80" "scan 16,64,64"
  "c1d 1,32,16,16,3,1,1,1" "c1d_nwc 1,30,16,24,3,2,1,1"
  "c2d 1,14,14,16,32,3,3,1,1,1" "c2d_nhwc 1,13,11,8,16,3,3,2,1,1"
  "c3d 1,6,8,8,8,16,3,3,3,1,1,1" "c3d_ndhwc 1,5,6,6,8,8,3,3,3,1,1,1"
  "dil 1,14,14,16,16,3,3,1,2,2" "t2d 1,7,7,16,16,3,3,2,1,1,1"
)
# target, dtype, hardware (- for the target's default), extra flag (-: none;
# --prepack=W: the op's weight input)
kinds=(
  "cpu fp32 cpu-avx2 -" "cpu fp32 cpu-avx512 -" "cpu fp32 cpu-avx512 --epilogue=bias,relu"
  "cpu fp32 cpu-avx512 --prepack=W"
  "cpu int8 cpu-avx2 -" "cpu int8 cpu-avxvnni -" "cpu int8 cpu-avx512 -"
  "cpu bf16 cpu-avx2 -" "cpu bf16 cpu-zen4 -" "cpu int8 cpu-zen4 --prepack=W"
  "amx int8 sapphire-rapids -" "amx bf16 sapphire-rapids -"
  "cuda fp16 - --sm=80" "cuda fp16 - --sm=90"
)
n=0
for k in "${kinds[@]}"; do
  read -r target dtype hw extra <<<"$k"
  for s in "${shapes[@]}"; do
    read -r op shape <<<"$s"
    args=(--op "$op" --shape "$shape" --target "$target" --dtype "$dtype")
    [ "$hw" != - ] && args+=(--hw "$hw")
    # --prepack=W: the op's weight input (B of a matrix product).
    if [ "$extra" = --prepack=W ]; then
      case $op in
      gemm | bmm) args+=(--prepack=B) ;;
      gemv | scan) continue ;;
      *) args+=(--prepack=weight) ;;
      esac
    elif [ "$extra" != - ]; then
      args+=("$extra")
    fi
    tag="$target-$dtype-$hw-${extra//[^a-z0-9]/_}-$op-${shape//,/x}"
    for seed in $(seq 1 "$seeds"); do
      "$space" "${args[@]}" --source --seed "$seed" >"$out/$tag-$seed.c" 2>&1
      n=$((n + 1))
      # A refused case says the same for every seed: one file is enough.
      if ! head -c 2 "$out/$tag-$seed.c" | grep -q '/\*'; then break; fi
    done
  done
done
echo "$n files in $out"
