#!/bin/sh
# heron-lib builds a library from a suite (each task tuned into OUT/logs/)
# and an int8 and a bf16 GEMM's --log: a C program linking libtlib.a and one linking
# libtlib.so through pkg-config get the reference's results on every tuned
# shape, the CBLAS fallback's on an untuned GEMM (counted) and tlib_ENOTUNED
# on an untuned convolution, also from 8 threads at once
# (tests/cli/lib/check_lib.c; again built under ThreadSanitizer from the
# library's sources); tlib_set_num_threads sets the threads each kernel's
# parallel regions run on, 0 the caller's OpenMP setting, which a call
# leaves as it was (tests/cli/lib/check_threads.c counts the threads from
# inside, static and shared); the .so exports the header's names and no
# other; a second run from the same logs (--no-tune) rebuilds every file
# byte for byte; a library built elsewhere from copies of the logs, without
# a fallback, answers tlib_ENOTUNED; HERON_LIB_STATS=1 counts the calls.
. "$(dirname "$0")/../e2e_common.sh"
: "${HERON_LIB:?set HERON_LIB to the heron-lib binary}"
LIBDIR=$CLI_DIR/lib
CC=${CC:-cc}
LFAST="--number 1 --repeat 1 --min-repeat-ms 1 --quiet"
"$HERON_SEARCH" --op gemm --dtype int8 --shape 19,24,36 --trials 3 \
  --batch 3 --log "$W/i8.jsonl" $FAST >"$W/i8.out" 2>"$W/i8.err" ||
  fail "heron-search int8 exited $?"
grep -q '"hardware":"' "$W/i8.jsonl" || fail "the log names no hardware"
"$HERON_SEARCH" --op gemm --dtype bf16 --shape 13,20,18 --trials 3 \
  --batch 3 --log "$W/bf16.jsonl" $FAST >"$W/bf16.out" 2>"$W/bf16.err" ||
  fail "heron-search bf16 exited $?"
"$HERON_LIB" --name tlib --out "$W/lib" --suite "$LIBDIR/suite.json" \
  --log "$W/i8.jsonl" --log "$W/bf16.jsonl" --fallback cblas \
  --strategy random --trials 3 \
  --batch 3 $LFAST >"$W/lib.out" 2>"$W/lib.err" || fail "heron-lib exited $?"
for f in include/tlib.h lib/libtlib.a lib/libtlib.so lib/pkgconfig/tlib.pc \
  lib/cmake/tlib/tlibConfig.cmake share/tlib/kernels.json; do
  [ -s "$W/lib/$f" ] || fail "heron-lib wrote no $f"
done
[ "$(ls "$W/lib/logs"/*.jsonl | wc -l)" -eq 3 ] ||
  fail "expected the 3 suite tasks' logs in OUT/logs: $(ls "$W/lib/logs")"
grep -q "library tlib: 5 kernels" "$W/lib.out" || fail "summary: $(cat "$W/lib.out")"

# Static, then shared through pkg-config.
$CC -O1 -DFALLBACK -I"$W/lib/include" -o "$W/check_static" \
  "$LIBDIR/check_lib.c" "$LIBDIR/common.c" "$W/lib/lib/libtlib.a" -fopenmp \
  -ldl -lm -lpthread 2>"$W/cc_static.err" ||
  fail "check_lib.c does not link libtlib.a"
"$W/check_static" >"$W/static.out" 2>"$W/static.err" ||
  fail "static: $(cat "$W/static.err")"
flags=$(PKG_CONFIG_PATH="$W/lib/lib/pkgconfig" pkg-config --cflags --libs tlib) ||
  fail "pkg-config does not know tlib"
$CC -O1 -DFALLBACK -o "$W/check_shared" "$LIBDIR/check_lib.c" \
  "$LIBDIR/common.c" $flags \
  -Wl,-rpath,"$W/lib/lib" -lpthread -lm 2>"$W/cc_shared.err" ||
  fail "check_lib.c does not link libtlib.so: $(cat "$W/cc_shared.err")"
HERON_LIB_STATS=1 "$W/check_shared" >"$W/shared.out" 2>"$W/shared.err" ||
  fail "shared: $(cat "$W/shared.err")"
# 1 + 8 x 20 calls of each tuned kernel (sgemm's twice per round).
grep -q "tlib_gemm_f32_33x17x9 *322 calls" "$W/shared.err" ||
  fail "HERON_LIB_STATS: $(cat "$W/shared.err")"
grep -q "fallback *1 calls" "$W/shared.err" ||
  fail "HERON_LIB_STATS fallback: $(cat "$W/shared.err")"

# The thread count, seen from inside the kernels' parallel regions.
$CC -O1 -I"$W/lib/include" -o "$W/threads_static" "$LIBDIR/check_threads.c" \
  "$LIBDIR/common.c" "$W/lib/lib/libtlib.a" -fopenmp -ldl -lm -lpthread \
  2>"$W/cc_threads.err" ||
  fail "check_threads.c does not link libtlib.a: $(cat "$W/cc_threads.err")"
"$W/threads_static" >"$W/threads_static.out" 2>"$W/threads_static.err" ||
  fail "threads, static: $(cat "$W/threads_static.err")"
$CC -O1 -o "$W/threads_shared" "$LIBDIR/check_threads.c" "$LIBDIR/common.c" \
  $flags -Wl,-rpath,"$W/lib/lib" -fopenmp -ldl -lpthread -lm \
  2>"$W/cc_threads.err" ||
  fail "check_threads.c does not link libtlib.so: $(cat "$W/cc_threads.err")"
"$W/threads_shared" >"$W/threads_shared.out" 2>"$W/threads_shared.err" ||
  fail "threads, shared: $(cat "$W/threads_shared.err")"

# ThreadSanitizer: the library's own sources (each kernel with the flags it
# was tuned with) and check_lib.c, whose 8 threads call every function at
# once.  OpenMP runs one thread per call here: libgomp is not built for
# ThreadSanitizer, and its own threads would be reported falsely.
cat >"$W/tsan.py" <<'PY'
import json, os, shlex, subprocess, sys
lib, out, cc = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(out)
objs = []
for i, k in enumerate(json.load(open(lib + "/share/tlib/kernels.json"))["kernels"]):
    o = "%s/k%d.o" % (out, i)
    subprocess.check_call(shlex.split(cc) + k["cflags"].split() +
                          ["-fsanitize=thread", "-g", "-c",
                           lib + "/" + k["source"], "-o", o])
    objs.append(o)
print(" ".join(objs))
PY
objs=$(python3 "$W/tsan.py" "$W/lib" "$W/tsan" "$CC") ||
  fail "the library's sources do not build under ThreadSanitizer"
$CC -fsanitize=thread -g -O1 -DFALLBACK -I"$W/lib/include" -o "$W/check_tsan" \
  "$LIBDIR/check_lib.c" "$LIBDIR/common.c" "$W/lib/src/tlib.c" $objs \
  -fopenmp -ldl -lm -lpthread \
  2>"$W/cc_tsan.err" || fail "check_lib.c does not build under ThreadSanitizer"
OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$W/check_tsan" \
  >"$W/tsan.out" 2>"$W/tsan.err" ||
  fail "under ThreadSanitizer: $(head -40 "$W/tsan.err")"

# CMake: find_package(tlib) and the static target.
mkdir -p "$W/cm"
cat >"$W/cm/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(check C)
find_package(tlib REQUIRED)
add_executable(check_cmake "$LIBDIR/check_lib.c" "$LIBDIR/common.c")
target_compile_definitions(check_cmake PRIVATE FALLBACK)
target_link_libraries(check_cmake PRIVATE tlib::tlib_static m pthread)
CMAKE
cmake -S "$W/cm" -B "$W/cm/b" -DCMAKE_PREFIX_PATH="$W/lib" >"$W/cm.out" \
  2>"$W/cm.err" && cmake --build "$W/cm/b" >>"$W/cm.out" 2>>"$W/cm.err" ||
  fail "the CMake package does not build a program: $(tail -20 "$W/cm.err")"
"$W/cm/b/check_cmake" >"$W/cmake_run.out" 2>"$W/cmake_run.err" ||
  fail "cmake-built program: $(cat "$W/cmake_run.err")"

# Python's ctypes, as docs/tools/heron-lib.md shows it.
python3 - "$W/lib/lib/libtlib.so" <<'PY' || fail "ctypes: the result differs"
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
M, N, K = 33, 17, 9
A = (ctypes.c_float * (M * K))(*[(i % 7) / 7 for i in range(M * K)])
B = (ctypes.c_float * (K * N))(*[(i % 5) / 5 for i in range(K * N)])
C = (ctypes.c_float * (M * N))()
assert lib.tlib_set_num_threads(1) == 0
assert lib.tlib_sgemm(M, N, K, A, B, C) == 0
for i in range(M):
    for j in range(N):
        want = sum(A[i * K + k] * B[k * N + j] for k in range(K))
        assert abs(C[i * N + j] - want) <= 1e-4 * (1 + abs(want)), (i, j)
assert lib.tlib_sgemm(4, 4, 4, A, B, C) == 0  # the CBLAS fallback
PY

# The shared library exports exactly the header's functions.
nm -D --defined-only "$W/lib/lib/libtlib.so" | awk '$2 == "T" { print $3 }' |
  sort >"$W/exported"
sed -n 's/^[a-z][^(]*[ *]\(tlib_[A-Za-z0-9_]*\)(.*/\1/p' \
  "$W/lib/include/tlib.h" | sort -u >"$W/declared"
[ "$(wc -l <"$W/declared")" -eq 14 ] ||
  fail "expected 14 functions in tlib.h: $(cat "$W/declared")"
cmp -s "$W/exported" "$W/declared" ||
  fail "exported and declared names differ: $(diff "$W/declared" "$W/exported")"

# The same logs give the same library, byte for byte.
(cd "$W/lib" && find include lib share src -type f ! -name '*.o' | sort |
  xargs sha256sum) >"$W/first.sum"
rm -rf "$W/lib/include" "$W/lib/lib" "$W/lib/share" "$W/lib/src"
"$HERON_LIB" --name tlib --out "$W/lib" --suite "$LIBDIR/suite.json" \
  --log "$W/i8.jsonl" --log "$W/bf16.jsonl" --fallback cblas --no-tune $LFAST >"$W/re.out" \
  2>"$W/re.err" || fail "heron-lib --no-tune exited $?"
(cd "$W/lib" && find include lib share src -type f ! -name '*.o' | sort |
  xargs sha256sum) >"$W/second.sum"
cmp -s "$W/first.sum" "$W/second.sum" ||
  fail "the rebuild differs: $(diff "$W/first.sum" "$W/second.sum")"

# From copies of the logs, elsewhere, without a fallback.
mkdir -p "$W/copy"
cp "$W/i8.jsonl" "$W/bf16.jsonl" "$W/copy/"
set --
for f in "$W/lib/logs"/*.jsonl; do
  cp "$f" "$W/copy/"
  set -- "$@" --log "$W/copy/$(basename "$f")"
done
"$HERON_LIB" --name tlib --out "$W/lib2" --log "$W/copy/i8.jsonl" \
  --log "$W/copy/bf16.jsonl" "$@" \
  --no-tune $LFAST >"$W/lib2.out" 2>"$W/lib2.err" ||
  fail "heron-lib from copied logs exited $?: $(cat "$W/lib2.err")"
cmp -s "$W/lib/lib/libtlib.so" "$W/lib2/lib/libtlib.so" &&
  fail "the library without a fallback is the same as the one with it"
$CC -O1 -I"$W/lib2/include" -o "$W/check_nofb" "$LIBDIR/check_lib.c" \
  "$LIBDIR/common.c" "$W/lib2/lib/libtlib.a" -fopenmp -ldl -lm -lpthread 2>"$W/cc_nofb.err" ||
  fail "check_lib.c does not link the second libtlib.a"
"$W/check_nofb" >"$W/nofb.out" 2>"$W/nofb.err" ||
  fail "no fallback: $(cat "$W/nofb.err")"
echo ok
