#!/bin/sh
# libNAME_blas.so under LD_PRELOAD: a C program linked with OpenBLAS
# (tests/cli/lib/check_blas.c) gets the tuned GEMM for its row-major,
# column-major and Fortran calls of the tuned shape and the tuned GEMV, the
# system BLAS for the rest, every result right; HERON_LIB_STATS counts 3
# GEMM, 1 GEMV, 2 passed on.  Debian's numpy (/usr/bin/python3) under the
# same preload: a @ b on the tuned shape is served by the kernel and equals
# numpy's own product, another shape goes to the system BLAS.
. "$(dirname "$0")/../e2e_common.sh"
: "${HERON_LIB:?set HERON_LIB to the heron-lib binary}"
LIBDIR=$CLI_DIR/lib
CC=${CC:-cc}
"$HERON_LIB" --name tlib --out "$W/lib" --suite "$LIBDIR/suite.json" \
  --tasks gemm,gemv --strategy random --trials 2 --batch 2 --number 1 \
  --repeat 1 --min-repeat-ms 1 --quiet >"$W/lib.out" 2>"$W/lib.err" ||
  fail "heron-lib exited $?"
SHIM=$W/lib/lib/libtlib_blas.so
[ -s "$SHIM" ] || fail "no $SHIM"
nm -D --defined-only "$SHIM" | awk '$2 == "T" { print $3 }' | sort | tr '\n' ' ' \
  >"$W/exported"
[ "$(cat "$W/exported")" = "cblas_sgemm cblas_sgemv sgemm_ sgemv_ " ] ||
  fail "the shim exports $(cat "$W/exported")"
$CC -O1 -o "$W/check_blas" "$LIBDIR/check_blas.c" "$LIBDIR/common.c" \
  -lopenblas -lm 2>"$W/cc.err" || fail "check_blas.c does not link: $(cat "$W/cc.err")"
"$W/check_blas" >"$W/plain.out" 2>"$W/plain.err" ||
  fail "without the shim: $(cat "$W/plain.err")"
LD_PRELOAD=$SHIM HERON_LIB_STATS=1 "$W/check_blas" >"$W/shim.out" \
  2>"$W/shim.err" || fail "with the shim: $(cat "$W/shim.err")"
grep -q "tlib_gemm_f32_33x17x9 *3 calls" "$W/shim.err" ||
  fail "the GEMM kernel did not serve 3 calls: $(cat "$W/shim.err")"
grep -q "tlib_gemv_f32_31x20 *1 calls" "$W/shim.err" ||
  fail "the GEMV kernel did not serve 1 call: $(cat "$W/shim.err")"
grep -q "passed to the next BLAS *2 calls" "$W/shim.err" ||
  fail "2 calls should go to the system BLAS: $(cat "$W/shim.err")"

if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "Debian's python3-numpy is missing (tools/setup.sh installs it)" >&2
  exit 1
fi
LD_PRELOAD=$SHIM HERON_LIB_STATS=1 /usr/bin/python3 - >"$W/np.out" \
  2>"$W/np.err" <<'PY' || fail "numpy under the shim: $(cat "$W/np.err")"
import numpy as np
a = ((np.arange(33 * 9) % 7) / 7).astype(np.float32).reshape(33, 9)
b = ((np.arange(9 * 17) % 5) / 5).astype(np.float32).reshape(9, 17)
want = a.astype(np.float64) @ b.astype(np.float64)
assert np.abs(a @ b - want).max() < 1e-4
c = np.ones((5, 6), np.float32) @ np.ones((6, 7), np.float32)
assert (c == 6).all()
PY
grep -q "tlib_gemm_f32_33x17x9 *1 calls" "$W/np.err" ||
  fail "numpy's a @ b was not served by the kernel: $(cat "$W/np.err")"
grep -q "passed to the next BLAS *1 calls" "$W/np.err" ||
  fail "numpy's other product did not go to the system BLAS: $(cat "$W/np.err")"
echo ok
