#!/bin/sh
# heron-space --sample draws valid configs only: 2000 of 2000 satisfy every
# constraint and lie in their variables' domains.
. "$(dirname "$0")/../e2e_common.sh"
"$HERON_SPACE" --op gemm --shape 128,128,128 --sample 2000 --seed 7 \
  >"$W/s.out" 2>"$W/s.err" || fail "heron-space exited with $?"
grep -q "^2000 samples in .* samples/s on one core; checked: 2000/2000 satisfy every constraint" "$W/s.out" ||
  fail "not every sample was drawn and valid"
grep -q "^domains: 2000/2000 samples have every variable in its domain" "$W/s.out" ||
  fail "a sample left its domain"
echo ok
