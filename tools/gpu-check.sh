#!/bin/bash
# tools/gpu-check.sh - the checks of the CUDA target on a machine with an
# NVIDIA GPU, in one command (GPU time is short: everything is prepared here
# and runs unattended).
#
# Usage: bash tools/gpu-check.sh OUTDIR [TRIALS]
#
# Runs from a build made elsewhere (build/ beside this script, its shared
# libraries in .devlibs/ where the GPU machine lacks them) or builds one:
#   1. the GPU, the driver and the toolkit it finds;
#   2. the vendor libraries on the suite through PyTorch, when it is there
#      (bench/gpu/torch_baseline.py);
#   3. heron-bench over configs/suites/tensorcore.json with random search,
#      TRIALS trials per task (default 32), on the GPU: every config built by
#      NVRTC, launched, checked against the reference and timed;
#   4. a table of what every run recorded (ok / wrong / failed, best time).
# Everything it writes goes to OUTDIR (logs, summary, tail of errors).
set -u
out=${1:?usage: gpu-check.sh OUTDIR [TRIALS]}
trials=${2:-32}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
# The build records absolute paths of the tree it was made in (plugins,
# configs, ctest files); make that path name this tree.
made_in=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$here/build/CMakeCache.txt" 2>/dev/null)
if [ -n "$made_in" ] && [ "$made_in" != "$here" ] && [ ! -e "$made_in" ]; then
  mkdir -p "$(dirname "$made_in")" && ln -s "$here" "$made_in"
fi
root=${made_in:-$here}
cd "$root" || exit 1
export LD_LIBRARY_PATH="$root/.devlibs:$root/build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
nproc
ls /usr/local/cuda/lib64 2>/dev/null | grep -E '^lib(nvrtc|cublas|cublasLt|cudnn)\.so\.[0-9]+$'
find / -name 'libcudnn.so*' -not -path '/proc/*' 2>/dev/null | head -3
if ldd build/bin/heron-search | grep 'not found'; then
  echo "missing libraries: build here instead"; exit 1
fi

if [ -n "${SKIP_TORCH:-}" ]; then :; elif python3 -c 'import torch' 2>/dev/null; then
  echo "== vendor libraries through PyTorch"
  timeout 120 python3 bench/gpu/torch_baseline.py 2>&1 | tee "$out/torch_baseline.txt"
fi

echo "== heron-bench, tensorcore suite, random, $trials trials"
timeout "${BENCH_TIMEOUT:-300}" build/bin/heron-bench \
  --suite configs/suites/tensorcore.json --strategies random --seeds 1 \
  --trials "$trials" --batch "$trials" --min-repeat-ms 10 --repeat 3 \
  --timeout 20 --out "$out/tc" ${BENCH_ARGS:-} 2>&1 | tail -40
echo "== per task: statuses, best"
for f in "$out"/tc/logs/*.jsonl; do
  [ -e "$f" ] || continue
  python3 - "$f" <<'PY'
import json, sys, collections
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
st = collections.Counter(r["status"] for r in recs)
ok = [r for r in recs if r["status"] == "ok" and r["seconds"] > 0]
best = min(ok, key=lambda r: r["seconds"]) if ok else None
name = sys.argv[1].split("/")[-1].split("__")[0]
print(f"{name:6s} {dict(st)}", f"best {best['seconds']*1e6:.2f} us {best['gflops']/1e3:.2f} TFLOP/s" if best else "no timing")
errs = collections.Counter(r["error"][:160] for r in recs if r["status"] != "ok")
for e, n in errs.most_common(3):
    print(f"   {n} x {e}")
PY
done
