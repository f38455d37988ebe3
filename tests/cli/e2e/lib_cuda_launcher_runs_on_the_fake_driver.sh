#!/bin/sh
# A library of a cuda kernel called by a program, without a GPU: the tests'
# fake driver (tests/targets/cuda/fake_libcuda.c, through HERON_LIBCUDA)
# runs host shared objects as cubins, so heron-lib --cuda-image host embeds
# the kernel's CPU emulation in place of its cubin, and everything else is
# what a GPU would run: the launcher, the driver opened at run time, the
# module loaded once, the launch on the caller's stream.  The log is a
# 32^3 fp16 GEMM checked by heron-search --emulate, its records then given
# a made-up time (an emulated record is untimed, and only a timed kernel is
# the best; both tools are told the GPU, --hw a100, so a machine's own GPU
# changes nothing; --timeout 600: a loaded machine may take over the default 30 s
# to compile it).  tests/cli/lib/check_cuda.c makes 8 concurrent first calls and
# one more: every output equals the reference, the fake saw one
# cuModuleLoadData and 9 launches, each on the caller's stream (0x2a) with
# the source's grid; a failed launch is flib_ECUDA with its CUresult, no
# driver flib_ENODRIVER; the log built for another GPU (--hw h200) is
# refused, naming both.
. "$(dirname "$0")/../e2e_common.sh"
: "${HERON_LIB:?set HERON_LIB to the heron-lib binary}"
: "${HERON_FAKE_LIBCUDA:?set HERON_FAKE_LIBCUDA to the fake libcuda}"
CC=${CC:-cc}
"$HERON_SEARCH" --op gemm --shape 32,32,32 --target cuda --hw a100 --emulate \
  --strategy random --trials 2 --batch 2 --log "$W/emu.jsonl" $FAST \
  --timeout 600 \
  >"$W/search.out" 2>"$W/search.err" || fail "heron-search --emulate exited $?"
python3 - "$W/emu.jsonl" "$W/gemm.jsonl" <<'PY' || fail "no emulated record"
import json, sys
out = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["status"] == "ok":
        r.pop("untimed", None)
        r["seconds"] = 1e-5 * r["trial"]
        r["gflops"] = 2 * 32**3 / r["seconds"] / 1e9
        out.append(json.dumps(r))
assert out, "no record of the emulation is ok"
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
"$HERON_LIB" --name flib --out "$W/lib" --log "$W/gemm.jsonl" --hw a100 \
  --cuda-image host --quiet >"$W/lib.out" 2>"$W/lib.err" ||
  fail "heron-lib exited $?"
# The log's GPU is not another's: built for an H200, it is refused.
rc=0
"$HERON_LIB" --name flib --out "$W/h200" --log "$W/gemm.jsonl" --hw h200 \
  --cuda-image host --quiet >"$W/h200.out" 2>"$W/h200.err" || rc=$?
[ "$rc" -eq 2 ] || fail "an A100 log built for an H200 gave status $rc, not 2"
grep -q "measured on NVIDIA A100, but the library is built for NVIDIA H200" \
  "$W/h200.err" || fail "the refusal does not name both GPUs"
$CC -O1 -DSHAPE_M=32 -DSHAPE_N=32 -DSHAPE_K=32 -I"$W/lib/include" \
  -o "$W/check" "$CLI_DIR/lib/check_cuda.c" -L"$W/lib/lib" -lflib \
  -Wl,-rpath,"$W/lib/lib" -lpthread -lm 2>"$W/cc.err" ||
  fail "check_cuda.c does not link libflib.so: $(cat "$W/cc.err")"
HERON_LIBCUDA=$HERON_FAKE_LIBCUDA HERON_FAKE_CUDA_LOG=$W/calls.log \
  "$W/check" >"$W/check.out" 2>"$W/check.err" ||
  fail "check_cuda: $(cat "$W/check.err")"
loads=$(grep -c "^cuModuleLoadData" "$W/calls.log" || true)
[ "$loads" -eq 1 ] || fail "the module was loaded $loads times, not once"
grid=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['kernels'][0]['cuda']; print('grid %d %d %d block %d %d %d smem %d' % tuple(c['grid'] + c['block'] + [c['dynamic_smem']]))" \
  "$W/lib/share/flib/kernels.json")
launches=$(grep -c "^cuLaunchKernel $grid stream 0x2a$" "$W/calls.log" || true)
[ "$launches" -eq 9 ] ||
  fail "expected 9 launches '$grid' on stream 0x2a: $(cat "$W/calls.log")"
HERON_LIBCUDA=$HERON_FAKE_LIBCUDA HERON_FAKE_CUDA=launchfail \
  "$W/check" fail >"$W/fail.out" 2>"$W/fail.err" ||
  fail "a failed launch: $(cat "$W/fail.err")"
HERON_LIBCUDA=$W/no-such-libcuda.so "$W/check" nodriver >"$W/nodrv.out" \
  2>"$W/nodrv.err" || fail "no driver: $(cat "$W/nodrv.err")"
echo "ok: $(cat "$W/check.out")"
