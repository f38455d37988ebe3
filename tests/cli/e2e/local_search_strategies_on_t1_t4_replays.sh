#!/bin/sh
# The local-search strategies (mls, greedy_ils, simulated_annealing,
# basinhopping, dual_annealing) on T1 spaces replayed from their T4 files
# (simulated time, no kernel built): every proposal is valid and new (the
# engine drops none), a seed repeats a run config for config, a resumed run
# measures nothing twice, and a bad parameter is refused by name.  What
# they find is local_search_strategies_beat_random_on_conv_replays.sh.
. "$(dirname "$0")/../e2e_common.sh"
. "$(dirname "$0")/../local_search_common.sh"

# Valid, new, deterministic.
for s in $STRATS; do
  run convolution A100_T4 "$s" 3 60 "$W/$s.a.jsonl"
  check_log "$W/$s.a.jsonl" --lines 60 --trials 60 --unique-configs
  grep -q "dropped 0 invalid, 0 duplicate proposals" "$W/run.out" ||
    fail "$s: the engine dropped proposals"
  ! grep -q '"status":"invalid"' "$W/$s.a.jsonl" || fail "$s: invalid trial"
  run convolution A100_T4 "$s" 3 60 "$W/$s.b.jsonl"
  python3 - "$W/$s.a.jsonl" "$W/$s.b.jsonl" <<'PY' || fail "$s: not deterministic"
import json, sys
a, b = ([json.loads(l)["config"] for l in open(f)] for f in sys.argv[1:])
assert a == b, "the two runs of one seed differ"
PY
done

# Resume: the whole history is observed, nothing is measured twice.
for s in $STRATS; do
  run dedispersion A100_T4 "$s" 4 24 "$W/$s.r.jsonl"
  run dedispersion A100_T4 "$s" 4 48 "$W/$s.r.jsonl" --resume "$W/$s.r.jsonl"
  check_log "$W/$s.r.jsonl" --lines 48 --trials 48 --unique-configs
  grep -q "measured 24, resumed 24" "$W/run.out" || fail "$s: resume"
done

# Bad parameters are refused by the host, naming them.
for sp in "mls neighbor=Hammingx" "greedy_ils random_walk=1.5" \
  "simulated_annealing alpha=1" "basinhopping T=0" \
  "dual_annealing visit=3"; do
  set -- $sp
  key=${2%%=*}
  if "$HERON_SEARCH" --t1 "$HUB/convolution/T1.json" \
    --t4 "$HUB/convolution/A100_T4.json.gz" --strategy "$1" --param "$2" \
    --trials 5 --quiet >"$W/bad.out" 2>"$W/bad.err"; then
    fail "$1 accepted --param $2"
  fi
  grep -q "$key" "$W/bad.err" || fail "$1: the refusal does not name $key"
done
echo ok
