#!/bin/bash
# tools/gpu-pack.sh [BUILD_DIR] - prepares, on a machine without a GPU, what
# a GPU machine needs to run tools/gpu-check.sh from this build: the tools
# and plugins in .devbuild/ and the shared libraries a bare CUDA image may
# lack in .devlibs/ (both ignored by git through .git/info/exclude).  Then,
# on the GPU machine (the device tool's `run`, carrying .devbuild and
# .devlibs):
#
#   BUILD=.devbuild bash tools/gpu-check.sh OUTDIR
#
# The build must have NVRTC (the CUDA toolkit) and, for the bench phase,
# cuBLAS and cuDNN (bench_cuda).  The GPU machine needs a glibc at least as
# new as this one's.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
cd "$here"
for f in heron-search heron-bench heron-space bench_cuda; do
  [ -x "$build/bin/$f" ] || { echo "gpu-pack.sh: no $build/bin/$f: build first" >&2; exit 1; }
done
rm -rf .devbuild .devlibs
mkdir -p .devbuild/bin .devlibs
cp "$build"/bin/{heron-search,heron-bench,heron-space,bench_cuda} .devbuild/bin/
cp -r "$build/lib" "$build/plugins" "$build/CMakeCache.txt" .devbuild/
# The libraries of the tools and plugins that a bare CUDA image lacks:
# JSON, GSL, XGBoost, zlib, curl, and OpenMPI's (the tools link it; MPI is
# only started under mpirun).  glibc, the compiler runtime and the CUDA
# toolkit are there.
for f in .devbuild/bin/* .devbuild/plugins/*.so .devbuild/lib/*.so*; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s)\.so|/usr/local/cuda|/\.devbuild/' |
  grep -E 'jansson|gsl|xgboost|dmlc|gomp|libz\.so|curl|openblas|gfortran|quadmath|libmpi|open-rte|open-pal|hwloc|libevent|libudev' |
  while read -r lib; do cp -L "$lib" .devlibs/; done
for d in .devbuild .devlibs; do
  grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >>.git/info/exclude
done
du -sh .devbuild .devlibs
echo "gpu-pack.sh: carry .devbuild and .devlibs; run BUILD=.devbuild bash tools/gpu-check.sh OUTDIR"
