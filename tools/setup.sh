#!/usr/bin/env bash
# Installs the Debian packages Heron-C needs, skipping what is already there.
# Idempotent: run it as often as you like.  Needs root (or sudo) only when
# something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config   # C toolchain and build system
  libjansson-dev                     # JSON: configs, logs
  zlib1g-dev                         # gzip-compressed replay logs (.jsonl.gz)
  libgsl-dev                         # linear models, Gaussian processes
  libxgboost-dev                     # XGBoost cost model
  libcurl4-openssl-dev               # LLM proposer (HTTP)
  libopenblas-dev                    # baseline for the GEMM benchmark
  libdnnl-dev                        # oneDNN 2.x: convolution baselines (bench_suite)
  gnuplot-nox                        # convergence plots
  binutils python3                   # nm for the export check; test helpers
  python3-optuna                     # the pipe strategy's Optuna example
  python3-numpy                      # heron-lib's BLAS shim test (numpy under LD_PRELOAD)
  openmpi-bin libopenmpi-dev         # tuning across machines (mpirun heron-search)
  chromium                           # headless test of heron-bench's report.html
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
