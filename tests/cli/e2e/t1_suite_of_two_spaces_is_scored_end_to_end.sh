#!/bin/sh
# heron-bench on a suite of two T1/T4 spaces: every run gets the
# methodology's budget, and the report scores them (summary.md's score
# table, scores.csv with one row per run, score_aggregates.csv, the score
# plot); a second call with --report-only rebuilds the same scores from the
# logs.  The suite's paths are relative to the suite file, read from
# another folder.
. "$(dirname "$0")/../e2e_common.sh"
HUB="$HERON_SOURCE_DIR/configs/datasets/benchmark_hub"
# The suite names its files relative to itself, as the shipped one does.
mkdir -p "$W/suites/hub"
ln -s "$HUB/convolution" "$W/suites/hub/convolution"
ln -s "$HUB/dedispersion" "$W/suites/hub/dedispersion"
cat >"$W/suites/suite.json" <<JSON
{"tasks": [
  {"name": "conv", "t1": "hub/convolution/T1.json", "t4": "hub/convolution/W6600_T4.json.gz"},
  {"name": "dedisp", "t1": "hub/dedispersion/T1.json", "t4": "hub/dedispersion/W6600_T4.json.gz"}]}
JSON
cd "$W" || fail "cd"
"$HERON_BENCH" --suite suites/suite.json --strategies random,genetic \
  --seeds 1-2 --out "$W/out" >"$W/b.out" 2>"$W/b.err" || fail "heron-bench"
grep -q "scored by the methodology" "$W/b.err" || fail "no budget said"
grep -q "^## Score (the methodology of Willemsen et al., FGCS 2024)" \
  "$W/out/summary.md" || fail "no score section"
grep -q "^| genetic | 4 | 2 | " "$W/out/summary.md" || fail "no genetic row"
grep -q "^| random | 4 | 2 | " "$W/out/summary.md" || fail "no random row"
[ "$(lines "$W/out/scores.csv")" -eq 9 ] || fail "scores.csv rows"
grep -q "<svg" "$W/out/plots/score.svg" || fail "no score plot"
grep -q "genetic" "$W/out/plots/score.svg" || fail "score plot without genetic"
head -1 "$W/out/score_aggregates.csv" | grep -q "^strategy,runs,spaces,score" ||
  fail "aggregates header"
cp "$W/out/scores.csv" "$W/first.csv"
"$HERON_BENCH" --out "$W/out" --report-only >"$W/r.out" 2>"$W/r.err" ||
  fail "report-only"
cmp -s "$W/first.csv" "$W/out/scores.csv" || fail "report-only scores differ"
