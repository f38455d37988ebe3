#!/bin/sh
# Pre-trained mode: a run with --model-param save=FILE leaves a model file;
# a later run with load=FILE has a trained model before anything is
# measured, so the genetic strategy's first round is already model-guided
# (without it, round 1 is constrained random).
. "$(dirname "$0")/../e2e_common.sh"
M=$W/xgb.model
# Not --quiet: the strategy's round lines are what this test reads.
LOUD="--number 1 --repeat 1 --min-repeat-ms 1 --work-dir $W/work"
"$HERON_SEARCH" --op gemm --shape 128,128,128 --strategy genetic --model xgb \
  --model-param save="$M" --trials 16 --batch 8 --seed 1 --log "$W/a.jsonl" \
  $LOUD >"$W/a.out" 2>"$W/a.err" || fail "training run exited $?"
[ -s "$M" ] || fail "save= wrote no model file"
head -1 "$M" | grep -q "^heron-model 1$" || fail "model file has no header"
ls "$W" | grep -q 'xgb.model.tmp' && fail "a temporary model file was left"
"$HERON_SEARCH" --op gemm --shape 128,128,128 --strategy genetic --model xgb \
  --model-param load="$M" --trials 8 --batch 8 --seed 2 --log "$W/b.jsonl" \
  $LOUD >"$W/b.out" 2>"$W/b.err" || fail "pre-trained run exited $?"
grep -q "\[genetic\] round 1: population .* best predicted" "$W/b.err" ||
  fail "round 1 of the pre-trained run was not guided by the model"
check_log "$W/b.jsonl" --lines 8 --trials 8 --unique-configs
# Without load=, round 1 is constrained random.
grep -q "\[genetic\] round 1: nothing measured ran yet" "$W/a.err" ||
  fail "round 1 of the fresh run was expected to be random"
echo ok
