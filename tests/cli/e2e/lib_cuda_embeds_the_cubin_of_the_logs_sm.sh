#!/bin/sh
# heron-lib builds a library from a recorded H200 log of the cuda target
# (configs/datasets/cuda-h200/GEMM, fp16 1024^3): the header declares the
# kernel's function (device pointers and the caller's stream) and
# hlib_hgemm, the .so exports those names and no other and does not link
# libcuda; the cubin NVRTC built is an ELF for sm_90 (EM_CUDA, the SM in
# e_flags) and its bytes are inside libhlib.so; kernels.json records the SM,
# NVRTC's version and the registers; a program linking the library gets
# hlib_ENODRIVER without a driver and hlib_ENOTUNED for another shape; the
# same log rebuilds the library byte for byte; an SM NVRTC cannot build
# (sm_70) is refused, named.  Skipped (77) where libheron has no NVRTC.
. "$(dirname "$0")/../e2e_common.sh"
: "${HERON_LIB:?set HERON_LIB to the heron-lib binary}"
CC=${CC:-cc}
gunzip -c "$HERON_SOURCE_DIR/configs/datasets/cuda-h200/GEMM.jsonl.gz" \
  >"$W/gemm.jsonl" || fail "cannot unpack the H200 GEMM log"
rc=0
"$HERON_LIB" --name hlib --out "$W/lib" --log "$W/gemm.jsonl" --hw h200 \
  --quiet >"$W/lib.out" 2>"$W/lib.err" || rc=$?
if [ "$rc" -ne 0 ] && grep -q "built without NVRTC" "$W/lib.err"; then
  echo "SKIP: libheron was built without NVRTC: no cubin to embed"
  exit 77
fi
[ "$rc" -eq 0 ] || fail "heron-lib exited $rc"
FN=hlib_gemm_f16_1024x1024x1024
grep -q "^int $FN(const uint16_t \*A, const uint16_t \*B, uint16_t \*C, void \*stream);" \
  "$W/lib/include/hlib.h" || fail "the header lacks $FN: $(cat "$W/lib/include/hlib.h")"
grep -q "^int hlib_hgemm(int M, int N, int K" "$W/lib/include/hlib.h" ||
  fail "the header lacks hlib_hgemm"
got=$(nm -D --defined-only "$W/lib/lib/libhlib.so" | awk '{print $3}' | LC_ALL=C sort | tr '\n' ' ')
want="hlib_cuda_error hlib_fallback_calls $FN hlib_hgemm hlib_strerror "
[ "$got" = "$want" ] || fail "libhlib.so exports '$got', expected '$want'"
! readelf -d "$W/lib/lib/libhlib.so" | grep NEEDED | grep -q libcuda ||
  fail "libhlib.so links libcuda; it must open it at run time"
python3 - "$W/lib" <<'PY' || fail "the embedded cubin or kernels.json is wrong"
import json, struct, sys
lib = sys.argv[1]
cubin = open(lib + "/src/hlib_k0.cubin", "rb").read()
assert cubin[:4] == b"\x7fELF" and cubin[4] == 2, "not a 64-bit ELF"
machine = struct.unpack("<H", cubin[18:20])[0]
assert machine == 190, "e_machine %d is not EM_CUDA (190)" % machine
flags = struct.unpack("<I", cubin[48:52])[0]
# ELF ABI version 8 (CUDA 13) keeps the SM in bits 8-15, older ones in 0-7.
sm = (flags >> 8) & 0xFF if cubin[8] >= 8 else flags & 0xFF
assert sm == 90, "the cubin is for sm_%d, not sm_90 (e_flags %#x)" % (sm, flags)
so = open(lib + "/lib/libhlib.so", "rb").read()
assert cubin in so, "libhlib.so does not hold the cubin's bytes"
k = json.load(open(lib + "/share/hlib/kernels.json"))["kernels"][0]
c = k["cuda"]
assert c["image"] == "cubin" and c["sm"] == 90, c
assert c["nvrtc"] and c["registers"] > 0 and c["bytes"] == len(cubin), c
print("cubin for sm_%d, %d bytes, %d registers, NVRTC %s" %
      (sm, len(cubin), c["registers"], c["nvrtc"]))
PY
cat >"$W/call.c" <<'C'
#include <stdio.h>
#include "hlib.h"
int main(void) {
  int a = hlib_hgemm(1024, 1024, 1024, 0, 0, 0, 0);
  int b = hlib_hgemm(1024, 1024, 512, 0, 0, 0, 0);
  printf("%d %d %s\n", a, b, hlib_strerror(a));
  return !(a == hlib_ENODRIVER && b == hlib_ENOTUNED);
}
C
$CC -I"$W/lib/include" -o "$W/call" "$W/call.c" -L"$W/lib/lib" -lhlib \
  -Wl,-rpath,"$W/lib/lib" 2>"$W/cc.err" || fail "call.c does not link libhlib.so"
HERON_LIBCUDA=/nonexistent/libcuda.so.1 "$W/call" >"$W/call.out" 2>&1 ||
  fail "without a driver: $(cat "$W/call.out")"
# The same log, the same library.
"$HERON_LIB" --name hlib --out "$W/again" --log "$W/gemm.jsonl" --hw h200 \
  --quiet >"$W/again.out" 2>"$W/again.err" || fail "the rebuild exited $?"
for f in include/hlib.h src/hlib_k0.c src/hlib.c lib/libhlib.so \
  lib/libhlib.a share/hlib/kernels.json; do
  cmp -s "$W/lib/$f" "$W/again/$f" || fail "$f differs when rebuilt"
done
rc=0
"$HERON_LIB" --name hlib --out "$W/sm70" --log "$W/gemm.jsonl" --hw h200 --sm 70 \
  --quiet >"$W/sm70.out" 2>"$W/sm70.err" || rc=$?
[ "$rc" -eq 2 ] || fail "a log for sm_70 gave status $rc, not 2"
grep -q "sm_70" "$W/sm70.err" || fail "the refusal does not name sm_70"
echo "ok: $(tail -1 "$W/lib.out")"
