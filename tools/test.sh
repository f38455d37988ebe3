#!/usr/bin/env bash
# Installs what is missing, builds Heron-C twice (Release, and with
# AddressSanitizer + UndefinedBehaviorSanitizer) and runs every test in both,
# printing each stage's wall time.
#
# Left out of both stages: the exhaustive NVRTC sweeps (label
# cuda_exhaustive, about 24 CPU-minutes; run them with
#   ctest --test-dir build -L cuda_exhaustive -j2
# ), and three quarters of the programs of dot_every_config's enumerated
# spaces (HERON_TEST_EXHAUSTIVE=1 runs them all); the sanitizer stage also
# leaves out the no_asan tests.  The sanitizer
# build is optimized at -O1 (with -g and frame pointers): the sanitizers
# see the same errors and the tests run several times faster than at -O0
# (test_bo.every_proposal_is_valid_unique_and_new: 50 s at -O0, 12 s).  Tests that
# cannot run on this machine (a CPU without AVX-512, a build without NVRTC)
# show as "Skipped" with their reason, never as passed.  HERON_CPU_ISA=avx2
# (or sse) in the environment makes an AVX-512 machine test like a smaller
# one.  HERON_TEST_BUILD=DIR builds in DIR and DIR-asan instead of build and
# build-asan (for several checkouts or people sharing one tree).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)
B=${HERON_TEST_BUILD:-build}

# Both stages share one build cache (docs/environment.md,
# HERON_BUILD_CACHE): the generated kernels are built without the
# sanitizers in both, so the sanitizer stage copies what the Release stage
# compiled, and samples as many configs as Release (HERON_TEST_SHARE in
# tests/test.h).  Entries unused for three days are dropped.
export HERON_BUILD_CACHE=${HERON_BUILD_CACHE:-$PWD/$B-cache}
if [ -d "$HERON_BUILD_CACHE" ]; then
  find "$HERON_BUILD_CACHE" -maxdepth 1 -name '*.hbc' -atime +3 -delete || true
fi

bash tools/setup.sh

# Runs "$@" and prints "== <title>: <seconds> s" after it, pass or fail.
stage() {
  local title=$1 start rc=0
  shift
  start=$(date +%s)
  "$@" || rc=$?
  echo "== $title: $(($(date +%s) - start)) s"
  return $rc
}

# The stages chain their steps with && because set -e does not apply
# inside a function called as stage's "$@" || ... .
release() {
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build "$B" -j"$JOBS" &&
    ctest --test-dir "$B" -j"$JOBS" --output-on-failure -LE cuda_exhaustive
}

sanitized() {
  cmake -S . -B "$B-asan" -DCMAKE_BUILD_TYPE=Debug -DHERON_SANITIZE=ON \
    -DCMAKE_C_FLAGS_DEBUG="-g -O1" >/dev/null &&
    cmake --build "$B-asan" -j"$JOBS" &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
      UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir "$B-asan" -j"$JOBS" --output-on-failure \
      -LE 'no_asan|cuda_exhaustive'
}

total=$(date +%s)
echo "== Release build and tests"
stage "Release stage" release
echo "== ASan + UBSan build and tests"
stage "ASan + UBSan stage" sanitized
echo "== total: $(($(date +%s) - total)) s"
