#!/bin/sh
# The amx target from the command line, on any x86-64 machine: --emulate
# tunes int8 and bf16 kernels with the tile instructions emulated (each
# checked once against the reference, untimed); a native run says exactly
# what this machine lacks (or, on an AMX machine, runs and times the
# kernels); --compile-only builds the native kernels; heron-space --source
# prints a kernel that builds both ways.
. "$HERON_SOURCE_DIR/tests/cli/e2e_common.sh"
CLI_DIR="$HERON_SOURCE_DIR/tests/cli" # check_log.py lives there
CC=${CC:-cc}
"$HERON_SEARCH" --op gemm --shape 17,33,20 --target amx --emulate \
  --trials 8 --batch 4 --epilogue bias,relu --quiet --log "$W/i.jsonl" \
  --work-dir "$W/work1" >"$W/i.out" 2>"$W/i.err" ||
  fail "--emulate (int8) exited with $?"
check_log "$W/i.jsonl" --lines 8 --trials 8 --unique-configs --all-ok \
  --untimed --task gemm/17,33,20/int8/amx/bias,relu
grep -q "8 of 8 kernels matched the reference" "$W/i.out" ||
  fail "the summary does not say the emulated kernels matched"

"$HERON_SEARCH" --op bmm --shape 3,9,20,33 --target amx --dtype bf16 \
  --emulate --trials 6 --batch 3 --quiet --log "$W/b.jsonl" \
  --work-dir "$W/work2" >"$W/b.out" 2>"$W/b.err" ||
  fail "--emulate (bf16) exited with $?"
check_log "$W/b.jsonl" --lines 6 --all-ok --untimed \
  --task bmm/3,9,20,33/bf16/amx

# Natively: an AMX machine tunes; any other stops before the first trial
# with the reason and the way out.
if grep -qw amx_int8 /proc/cpuinfo 2>/dev/null; then
  "$HERON_SEARCH" --op gemm --shape 17,33,20 --target amx --trials 4 $FAST \
    --log "$W/n.jsonl" >"$W/n.out" 2>"$W/n.err" ||
    fail "a native run on an AMX machine exited with $?"
  check_log "$W/n.jsonl" --lines 4 --all-ok
else
  st=0
  "$HERON_SEARCH" --op gemm --shape 17,33,20 --target amx --trials 4 \
    --log "$W/n.jsonl" >"$W/n.out" 2>"$W/n.err" || st=$?
  [ "$st" -ne 0 ] || fail "a native run without AMX succeeded"
  grep -q "target amx: this CPU lacks AMX" "$W/n.err" ||
    fail "the native run does not say the CPU lacks AMX"
  grep -q "use --emulate" "$W/n.err" || fail "no --emulate suggested"
  [ "$(lines "$W/n.jsonl")" -eq 0 ] || fail "trials were logged"
fi

"$HERON_SEARCH" --op gemv --shape 33,70 --target amx --compile-only \
  --trials 4 --quiet --log "$W/c.jsonl" --work-dir "$W/work3" \
  >"$W/c.out" 2>"$W/c.err" || fail "--compile-only exited with $?"
check_log "$W/c.jsonl" --lines 4 --all-ok --untimed

"$HERON_SPACE" --op c2d --shape 1,9,7,6,10,3,3,1,0,1 --target amx \
  --dtype bf16 --source --seed 3 >"$W/k.c" 2>"$W/k.err" ||
  fail "heron-space --source exited with $?"
$CC -O1 -march=native -mamx-tile -mamx-int8 -mamx-bf16 -fopenmp -fPIC \
  -shared -o "$W/k.so" "$W/k.c" 2>"$W/cc.err" ||
  fail "the printed source does not build natively"
$CC -O1 -DHERON_EMULATE_AMX -fopenmp -fPIC -shared -o "$W/e.so" "$W/k.c" \
  2>"$W/cce.err" || fail "the printed source does not build emulated"
echo ok
