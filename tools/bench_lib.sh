#!/usr/bin/env bash
# The benchmark of heron-lib (docs/tools/heron-lib.md, docs/results/):
#  1. a library of models.json's BERT and GPT-2 GEMMs, tuned here
#     (--trials, default 150; the logs in OUT/lib/logs/ are resumed);
#  2. bench_lib: each kernel through the library against the same kernel
#     built alone and against heron-search's measurement of its config,
#     interleaved in the same run (paired ratios);
#  3. a numpy program running BERT-base's encoder GEMMs at 77 tokens (QKV,
#     FFN up, FFN down) and GPT-2's attention output, under the BLAS shim
#     (LD_PRELOAD) against the same program on the system BLAS alone,
#     alternated --runs times (default 5), each run the median of 7 samples
#     of --seqs sequences (default 20), on one thread and on every core; on
#     an AVX-512 CPU also with OPENBLAS_CORETYPE=SkylakeX (OpenBLAS's
#     AVX-512 kernels, the strongest baseline).
#   bash tools/bench_lib.sh [--trials N] [--out DIR] [--runs N] [--seqs N]
set -euo pipefail
cd "$(dirname "$0")/.."
TRIALS=150
OUT=runs/bench-lib
RUNS=5
SEQS=20
while [ $# -gt 0 ]; do
  case $1 in
    --trials) TRIALS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --seqs) SEQS=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "bench_lib.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
B=${HERON_BUILD:-build}
[ -x "$B/bin/heron-lib" ] && [ -x "$B/bin/bench_lib" ] ||
  { echo "bench_lib.sh: build first (cmake --build $B)" >&2; exit 1; }
grep -o -w -E 'avx2|avx512f|avx512_vnni|amx_tile' /proc/cpuinfo | sort -u |
  tr '\n' ' ' | sed 's/^/ISA: /'; echo
TASKS=bert-base.qkv.seq77,bert-base.ffn-up.seq77,bert-base.ffn-down.seq77,gpt2.attn-out.seq100
"$B/bin/heron-lib" --name bert --out "$OUT/lib" \
  --suite configs/suites/models.json --tasks "$TASKS" --trials "$TRIALS"
echo "== each kernel through the library against the kernel alone"
for th in 1 "$(nproc)"; do
  echo "-- $th thread(s)"
  OMP_NUM_THREADS=$th "$B/bin/bench_lib" --lib "$OUT/lib" --name bert
done
echo "== numpy: BERT's and GPT-2's GEMMs under the shim against the system BLAS"
cat >"$OUT/encoder.py" <<'PY'
import sys, time
import numpy as np
seqs = int(sys.argv[1])
rng = np.random.default_rng(1)
shapes = [(77, 2304, 768), (77, 3072, 768), (77, 768, 3072), (100, 768, 768)]
mats = [(rng.random((m, k), np.float32), rng.random((k, n), np.float32))
        for m, n, k in shapes]
for a, b in mats:
    a @ b
best = []
for _ in range(7):
    t = time.perf_counter()
    for _ in range(seqs):
        for a, b in mats:
            a @ b
    best.append((time.perf_counter() - t) / seqs)
best.sort()
print("%.6f" % best[len(best) // 2])
PY
# The system BLAS with its own kernel choice, and on an AVX-512 CPU also
# with OpenBLAS's AVX-512 kernels (OPENBLAS_CORETYPE=SkylakeX: OpenBLAS may
# not recognise the CPU and pick older ones), the strongest baseline; the
# shim's runs get the same setting (its fallback is that OpenBLAS).
cores=default
grep -q -w avx512f /proc/cpuinfo && cores="default SkylakeX"
for core in $cores; do
  ct=()
  [ "$core" = default ] || ct=("OPENBLAS_CORETYPE=$core")
  for th in 1 "$(nproc)"; do
    shim=() plain=()
    for _ in $(seq "$RUNS"); do
      plain+=("$(env "${ct[@]}" OPENBLAS_NUM_THREADS=$th OMP_NUM_THREADS=$th \
        /usr/bin/python3 "$OUT/encoder.py" "$SEQS")")
      shim+=("$(env "${ct[@]}" LD_PRELOAD=$OUT/lib/lib/libbert_blas.so \
        OPENBLAS_NUM_THREADS=$th OMP_NUM_THREADS=$th \
        /usr/bin/python3 "$OUT/encoder.py" "$SEQS")")
    done
    python3 - "$th" "$core" "${plain[*]}" "${shim[*]}" <<'PY'
import statistics, sys
th, core = sys.argv[1], sys.argv[2]
plain = [float(x) for x in sys.argv[3].split()]
shim = [float(x) for x in sys.argv[4].split()]
p, s = statistics.median(plain), statistics.median(shim)
print("%s thread(s), OpenBLAS kernels %s: system BLAS %.3f ms, shim %.3f ms"
      " per sequence: %.2fx (system BLAS / shim; run by run: %s)"
      % (th, core, p * 1e3, s * 1e3, p / s,
         " ".join("%.2f" % (a / b) for a, b in zip(plain, shim))))
PY
  done
done
LD_PRELOAD=$OUT/lib/lib/libbert_blas.so HERON_LIB_STATS=1 OMP_NUM_THREADS=1 \
  /usr/bin/python3 "$OUT/encoder.py" 1 >/dev/null
