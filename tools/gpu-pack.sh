#!/bin/bash
# tools/gpu-pack.sh [BUILD_DIR] - prepares, on a machine without a GPU, what
# a GPU machine needs to run tools/gpu-check.sh from this build: the tools,
# plugins and the test programs that gpu-check.sh runs in .devbuild/, and
# the shared libraries a bare CUDA image may lack in .devlibs/ and, packed,
# .devlibs.tar.xz (oneDNN and OpenBLAS alone are larger than what a device
# call carries; all three are ignored by git through .git/info/exclude).
# Then, on the GPU machine (the device tool's `run`, carrying .devbuild and
# .devlibs.tar.xz):
#
#   BUILD=.devbuild DEADLINE=540 bash tools/gpu-check.sh OUTDIR
#
# The build must have NVRTC (the CUDA toolkit) and, for the bench phase,
# cuBLAS and cuDNN (bench_cuda); bench_suite needs OpenBLAS and oneDNN.
# The GPU machine needs a glibc at least as new as this one's.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
cd "$here"
tools="heron-search heron-bench heron-space bench_cuda bench_suite"
tests="test_cuda test_tune_cuda test_amx_prelude test_amx_probe test_amx_kernels"
for f in $tools $tests; do
  [ -x "$build/bin/$f" ] || { echo "gpu-pack.sh: no $build/bin/$f: build first" >&2; exit 1; }
done
rm -rf .devbuild .devlibs .devlibs.tar.xz
mkdir -p .devbuild/bin .devbuild/tests/targets/cuda .devlibs
for f in $tools $tests; do cp "$build/bin/$f" .devbuild/bin/; done
cp -r "$build/lib" "$build/plugins" "$build/CMakeCache.txt" .devbuild/
# test_cuda's fake drivers, at the path the build compiled into it.
cp "$build"/tests/targets/cuda/*.so .devbuild/tests/targets/cuda/
# The libraries of the tools and plugins that a bare CUDA image lacks:
# JSON, GSL, XGBoost, zlib, curl, OpenBLAS, oneDNN and OpenMPI's (the tools
# link it; MPI is only started under mpirun).  glibc, the compiler runtime
# and the CUDA toolkit are there.
for f in .devbuild/bin/* .devbuild/plugins/*.so .devbuild/lib/*.so*; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s)\.so|/usr/local/cuda|/\.devbuild/' |
  grep -E 'jansson|gsl|xgboost|dmlc|gomp|libz\.so|curl|openblas|gfortran|quadmath|dnnl|OpenCL|tbb|libmpi|open-rte|open-pal|hwloc|libevent|libudev' |
  while read -r lib; do cp -L "$lib" .devlibs/; done
tar -cJf .devlibs.tar.xz .devlibs
mkdir -p .git/info
for d in .devbuild .devlibs .devlibs.tar.xz; do
  grep -qx "/$d" .git/info/exclude 2>/dev/null || grep -qx "/$d/" .git/info/exclude 2>/dev/null ||
    echo "/$d" >>.git/info/exclude
done
du -sh .devbuild .devlibs .devlibs.tar.xz
echo "gpu-pack.sh: carry .devbuild and .devlibs.tar.xz; run BUILD=.devbuild DEADLINE=540 bash tools/gpu-check.sh OUTDIR"
