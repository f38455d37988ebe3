#!/bin/sh
# tools/pipe_compare.sh BIN_DIR OUT_DIR [SEEDS] [TRIALS] - the pipe
# strategy's two example programs (plain-Python local search and Optuna's
# TPE) against random sampling and genetic + xgb, with heron-bench on the
# shipped replay dataset (GEMM 512^3 fp32, no kernel is built).
#
# heron-bench names runs after their plugin's file name, so the two pipe
# programs run through two links to pipe.so, pipe-local.so and
# pipe-optuna.so, made in OUT_DIR.  The Optuna program needs a python3 with
# Optuna: the first python3 in PATH that imports it, else /usr/bin/python3.
#
# Defaults: seeds 1..10, 60 trials (the README's comparison), batch 16.
set -eu
BIN=${1:?usage: pipe_compare.sh BIN_DIR OUT_DIR [SEEDS] [TRIALS]}
OUT=${2:?usage: pipe_compare.sh BIN_DIR OUT_DIR [SEEDS] [TRIALS]}
SEEDS=${3:-1,2,3,4,5,6,7,8,9,10}
TRIALS=${4:-60}
SRC=$(cd "$(dirname "$0")/.." && pwd)
EX=$SRC/plugins/strategies/pipe/examples
PLUGIN=$(cd "$BIN/../plugins" && pwd)/pipe.so
[ -f "$PLUGIN" ] || { echo "pipe_compare: no $PLUGIN" >&2; exit 1; }

PY=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import optuna' 2>/dev/null; then PY=$(command -v "$p"); break; fi
done
[ -n "$PY" ] || { echo "pipe_compare: no python3 with optuna" >&2; exit 1; }

mkdir -p "$OUT"
ln -sf "$PLUGIN" "$OUT/pipe-local.so"
ln -sf "$PLUGIN" "$OUT/pipe-optuna.so"
start=$(date +%s)
"$BIN/heron-bench" --suite "$SRC/configs/suites/cpu-gemm512.json" \
  --target replay --replay "$SRC/configs/datasets/cpu-gemm512-fp32.jsonl.gz" \
  --strategies "random,genetic,$OUT/pipe-local.so,$OUT/pipe-optuna.so" \
  --models none,xgb,none,none \
  --param "pipe-local:program=$EX/local_search.py" \
  --param "pipe-optuna:program=$PY" \
  --param "pipe-optuna:args=$EX/optuna_tpe.py" \
  --trials "$TRIALS" --seeds "$SEEDS" --out "$OUT"
echo "pipe_compare: $(($(date +%s) - start)) s; report in $OUT/summary.md"
