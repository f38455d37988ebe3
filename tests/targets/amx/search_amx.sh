#!/bin/sh
# The amx target from the command line, on any x86-64 machine: --emulate
# tunes int8 and bf16 kernels with the tile instructions emulated (each
# checked once against the reference, untimed); a native run says exactly
# what this machine lacks (or, where the library detects AMX - HERON_CPU_ISA
# included - runs and times the kernels; skipped, exit 77, where the OS
# refuses the tiles); --compile-only builds the native kernels; heron-space
# --source prints a kernel that builds both ways.
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

# Natively: where the library uses AMX it tunes; anywhere else it stops
# before the first trial with the reason and the way out.  What the library
# uses is asked of it, not of /proc/cpuinfo: the describe line "hardware:
# this machine (<cpu>, <level>)" names the ISA level it detected, with
# HERON_CPU_ISA's cap applied ("avx2 by HERON_CPU_ISA"), so an AMX machine
# under HERON_CPU_ISA=avx2 expects the refusal.
"$HERON_SPACE" --op gemm --shape 17,33,20 --target amx --describe \
  >"$W/d.out" 2>"$W/d.err" || fail "heron-space --describe exited with $?"
hwline=$(grep '^hardware: ' "$W/d.out" | head -1)
level=$(printf '%s\n' "$hwline" |
  sed -n 's/.*, \([a-z0-9]*\)\( by HERON_CPU_ISA\)\{0,1\})$/\1/p')
[ -n "$level" ] || fail "no ISA level in the describe line: $hwline"
echo "the library's ISA level: $level ($hwline)"
native_skip=""
st=0
if [ "$level" = amx ]; then
  "$HERON_SEARCH" --op gemm --shape 17,33,20 --target amx --trials 4 $FAST \
    --log "$W/n.jsonl" >"$W/n.out" 2>"$W/n.err" || st=$?
  if [ "$st" -ne 0 ] && grep -Eq "target amx: (the OS has not enabled the AMX state|the kernel refused the AMX permission)" "$W/n.err"; then
    # The CPU has AMX but this OS does not give it to processes: the
    # library says so; the native half is skipped, visibly, below.
    native_skip=$(grep -o "target amx: .*" "$W/n.err" | head -1)
  else
    [ "$st" -eq 0 ] ||
      fail "a native run where the library detects AMX exited with $st"
    check_log "$W/n.jsonl" --lines 4 --all-ok
    python3 - "$W/n.jsonl" <<'PY' || fail "the native AMX run's records are not timed"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
bad = [r for r in recs if not r.get("seconds", 0) > 0 or r.get("untimed")]
sys.exit("%d of %d records untimed" % (len(bad), len(recs)) if bad else 0)
PY
    echo "native: 4 AMX kernels tuned on this machine's tiles"
  fi
else
  "$HERON_SEARCH" --op gemm --shape 17,33,20 --target amx --trials 4 \
    --log "$W/n.jsonl" >"$W/n.out" 2>"$W/n.err" || st=$?
  [ "$st" -ne 0 ] || fail "a native run at ISA level $level succeeded"
  case $hwline in
  *"by HERON_CPU_ISA)"*)
    grep -q "target amx: AMX is capped off by HERON_CPU_ISA=" "$W/n.err" ||
      fail "the native run under HERON_CPU_ISA does not say the cap stops it" ;;
  *)
    grep -q "target amx: this CPU lacks AMX" "$W/n.err" ||
      fail "the native run does not say the CPU lacks AMX" ;;
  esac
  grep -q "use --emulate" "$W/n.err" || fail "no --emulate suggested"
  [ "$(lines "$W/n.jsonl")" -eq 0 ] || fail "trials were logged"
  echo "native: refused at ISA level $level: $(head -1 "$W/n.err")"
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
if [ -n "$native_skip" ]; then
  echo "SKIP: every emulated and compile-only check passed; the native run was refused by the OS: $native_skip"
  exit 77
fi
echo ok
