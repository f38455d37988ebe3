#!/bin/sh
# heron-space --source prints kernel source that compiles, for a random
# sample and for a partial config completed by the solver.
. "$(dirname "$0")/../e2e_common.sh"
CC=${CC:-cc}
"$HERON_SPACE" --op gemm --shape 64,64,64 --source --seed 2 >"$W/k.c" \
  2>"$W/k.err" || fail "heron-space --source exited with $?"
$CC -O2 -march=native -fopenmp -c -o "$W/k.o" "$W/k.c" 2>"$W/cc.err" ||
  fail "the printed source does not compile"
# Fix the first knob to its smallest value; the solver completes the rest.
knob=$("$HERON_SPACE" --op gemm --shape 64,64,64 --dump |
  awk '$2 == "knob" { print $3; exit }')
[ -n "$knob" ] || fail "--dump lists no knob"
val=$("$HERON_SPACE" --op gemm --shape 64,64,64 --dump |
  awk -v k="$knob" '$3 == k { v = $4; gsub(/[][{},]/, "", v); print v; exit }')
"$HERON_SPACE" --op gemm --shape 64,64,64 --source \
  --config-json "{\"$knob\": $val}" >"$W/p.c" 2>"$W/p.err" ||
  fail "--config-json {\"$knob\": $val} exited with $?"
grep -q "$knob=$val" "$W/p.c" || fail "the source's header lacks $knob=$val"
$CC -O2 -march=native -fopenmp -c -o "$W/p.o" "$W/p.c" 2>"$W/cc2.err" ||
  fail "the completed config's source does not compile"
echo ok
