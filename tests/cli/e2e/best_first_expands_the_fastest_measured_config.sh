#!/bin/sh
# best_first on a T1 space replayed from its T4 file (simulated time), one
# config a round and no random share (explore=0): after the `init` random
# trials, every trial is an unmeasured one-knob neighbour of the fastest
# config measured before it that still had one, the order the strategy
# relies on (expand the best, then the next best; never measure twice).
# The valid configs and their neighbours are read from the T4 file, which
# holds every valid config of the space.
. "$(dirname "$0")/../e2e_common.sh"
HUB="$HERON_SOURCE_DIR/configs/datasets/benchmark_hub"

for seed in 1 2; do
  "$HERON_SEARCH" --t1 "$HUB/convolution/T1.json" \
    --t4 "$HUB/convolution/A4000_T4.json.gz" --strategy best_first \
    --param init=8 --param explore=0 --trials 150 --batch 1 --seed "$seed" \
    --quiet --log "$W/s$seed.jsonl" >"$W/run.out" 2>"$W/run.err" ||
    fail "best_first seed $seed exited $?"
  python3 - "$HUB/convolution/A4000_T4.json.gz" "$W/s$seed.jsonl" 8 <<'PY' ||
import gzip, json, sys
t4, log, init = sys.argv[1], sys.argv[2], int(sys.argv[3])
results = json.load(gzip.open(t4))["results"]
names = list(results[0]["configuration"])
valid = {tuple(r["configuration"][k] for k in names) for r in results}
values = [sorted({c[i] for c in valid}) for i in range(len(names))]

def neighbours(c):
    for i, vs in enumerate(values):
        for v in vs:
            n = c[:i] + (v,) + c[i + 1:]
            if v != c[i] and n in valid:
                yield n

trials = [json.loads(line) for line in open(log)]
assert len(trials) == 150, len(trials)
measured, ok = set(), []  # ok: (seconds, trial, config)
for t in trials:
    c = tuple(t["config"][k] for k in names)
    assert c in valid and c not in measured, ("invalid or repeated", t["trial"])
    if t["trial"] > init:
        for _, _, b in sorted(ok):
            open_nb = {n for n in neighbours(b) if n not in measured}
            if open_nb:
                assert c in open_nb, ("trial %d is not a neighbour of %s, "
                                      "the fastest config with unmeasured "
                                      "neighbours" % (t["trial"], b))
                break
    measured.add(c)
    if t["status"] == "ok":
        ok.append((t["seconds"], t["trial"], c))
print("%s: %d trials, every one after the first %d expands the fastest"
      % (log, len(trials), init))
PY
    fail "seed $seed: best_first did not expand the fastest measured config"
done
echo ok
