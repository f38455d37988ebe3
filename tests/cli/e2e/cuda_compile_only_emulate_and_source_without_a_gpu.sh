#!/bin/sh
# The cuda target on a machine without a GPU: --compile-only builds every
# trial with NVRTC and logs ptxas' statistics, --emit writes nothing (no
# kernel was timed), --emulate checks kernels on the CPU, and heron-space
# --source prints a source whose first line is its launch and which the
# host compiler builds as the emulation.
. "$(dirname "$0")/../e2e_common.sh"
CC=${CC:-cc}
"$HERON_SEARCH" --op c2d --shape 2,8,8,16,32,3,3,1,1,1 --target cuda \
  --hw h100 --compile-only --trials 8 --batch 4 --quiet \
  --log "$W/c.jsonl" --emit "$W/best" --work-dir "$W/work" \
  >"$W/c.out" 2>"$W/c.err" || fail "--compile-only exited with $?"
check_log "$W/c.jsonl" --lines 8 --trials 8 --unique-configs --all-ok --untimed \
  --task c2d/2,8,8,16,32,3,3,1,1,1/fp16/cuda
python3 - "$W/c.jsonl" <<'PY' || fail "compile-only records lack statistics"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    assert 0 < r["regs"] <= 255, r
    assert r["spill_bytes"] >= 0 and r["smem_bytes"] > 0, r
    assert r["seconds"] == 0 and r["gflops"] == 0, r
PY
grep -q "none timed (--compile-only: 8 of 8 kernels compiled)" "$W/c.out" ||
  fail "the summary does not say the kernels were only compiled"
# Untimed kernels are never emitted as the best.
[ ! -e "$W/best/kernel.cu" ] || fail "--emit wrote an untimed kernel"
grep -q "emit       nothing written to $W/best: no timed kernel" "$W/c.out" ||
  fail "the summary does not say --emit wrote nothing"

"$HERON_SEARCH" --op t2d --shape 1,5,5,4,8,3,3,2,1,1,1 --target cuda \
  --emulate --trials 6 --batch 3 --epilogue bias,relu --quiet \
  --log "$W/e.jsonl" --work-dir "$W/work2" >"$W/e.out" 2>"$W/e.err" ||
  fail "--emulate exited with $?"
check_log "$W/e.jsonl" --lines 6 --all-ok --untimed

"$HERON_SPACE" --op bmm --shape 2,20,24,16 --target cuda --source --seed 4 \
  >"$W/k.cu" 2>"$W/k.err" || fail "heron-space --source exited with $?"
head -1 "$W/k.cu" | grep -q "^/\* heron-cuda grid " ||
  fail "the source's first line is not its launch"
$CC -O1 -fPIC -shared -x c -std=gnu11 -DHERON_EMULATE -fno-strict-aliasing \
  -Wno-unknown-pragmas -o "$W/k.so" "$W/k.cu" 2>"$W/cc.err" ||
  fail "the printed source does not build as the emulation"
echo ok
