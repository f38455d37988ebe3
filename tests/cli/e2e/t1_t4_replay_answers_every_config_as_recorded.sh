#!/bin/sh
# A T1 space replayed from its T4 file: the space is the file's config set
# (heron-space --t1 --t4 --count says so, for T4 and for a Kernel Tuner
# cache file), every trial is answered as the file records it (status and
# the "time" objective; for the cache file too), never simulated, and a
# time limit counts the recorded compile and run times.
. "$(dirname "$0")/../e2e_common.sh"
HUB="$HERON_SOURCE_DIR/configs/datasets/benchmark_hub/convolution"
"$HERON_SPACE" --t1 "$HUB/T1.json" --t4 "$HUB/A100_T4.json.gz" --count \
  >"$W/c.out" 2>"$W/c.err" || fail "count"
grep -q "valid configs: 4362 (exact)" "$W/c.out" || fail "count"
grep -q "T4 file: the same 4362 configs as the T1 space" "$W/c.out" ||
  fail "compare"
"$HERON_SPACE" --t1 "$HUB/T1.json" --t4 "$HUB/A100.json.gz" --count \
  >"$W/k.out" 2>"$W/k.err" || fail "count of the cache file"
grep -q "T4 file: the same 4362 configs" "$W/k.out" || fail "cache compare"
"$HERON_SEARCH" --t1 "$HUB/T1.json" --t4 "$HUB/A100_T4.json.gz" \
  --strategy random --trials 300 --batch 25 --quiet --log "$W/r.jsonl" \
  >"$W/r.out" 2>"$W/r.err" || fail "replay run"
python3 - "$W/r.jsonl" "$HUB/A100_T4.json.gz" <<'PY' || fail "answers"
import gzip, json, sys
recs = json.load(gzip.open(sys.argv[2]))["results"]
def key(c):
    return tuple(sorted(c.items()))
t4 = {key(r["configuration"]): r for r in recs}
n = fails = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    assert r["task"] == "t1/convolution_milo/A100_T4/replay", r["task"]
    assert not r["simulated"]
    o = t4[key(r["config"])]
    if o["invalidity"] == "correct":
        assert r["status"] == "ok", r
        t = [m["value"] for m in o["measurements"] if m["name"] == "time"][0]
        assert abs(r["seconds"] - t / 1e3) < 1e-12, (r["seconds"], t)
    else:
        fails += 1
        assert r["status"] == {"runtime": "runtime_error",
                               "compile": "compile_error"}[o["invalidity"]], r
    n += 1
assert n == 300
print("ok: %d trials as recorded, %d failures" % (n, fails))
PY
# The Kernel Tuner cache file answers as it records: "time" (ms) for a
# config that ran, its error string's status for one that failed.
"$HERON_SEARCH" --t1 "$HUB/T1.json" --t4 "$HUB/A100.json.gz" \
  --strategy random --trials 300 --batch 25 --quiet --log "$W/k.jsonl" \
  >"$W/kr.out" 2>"$W/kr.err" || fail "cache replay run"
python3 - "$W/k.jsonl" "$HUB/A100.json.gz" <<'PY' || fail "cache answers"
import gzip, json, sys
d = json.load(gzip.open(sys.argv[2]))
keys = d["tune_params_keys"]
cache = {tuple(str(r[k]) for k in keys): r for r in d["cache"].values()}
n = fails = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    o = cache[tuple(str(r["config"][k]) for k in keys)]
    if isinstance(o["time"], (int, float)):
        assert r["status"] == "ok", r
        assert abs(r["seconds"] - o["time"] / 1e3) < 1e-12, (r["seconds"], o)
    else:
        fails += 1
        assert r["status"] == {"RuntimeFailedConfig": "runtime_error",
                               "CompilationFailedConfig": "compile_error"}[
            o["time"]], (r, o["time"])
    n += 1
assert n == 300
print("ok: %d cache answers as recorded, %d failures" % (n, fails))
PY
# A budget of simulated time: the run stops at it.
"$HERON_SEARCH" --t1 "$HUB/T1.json" --t4 "$HUB/A100_T4.json.gz" \
  --strategy random --trials 4000 --time-limit 60 --quiet \
  --log "$W/t.jsonl" >"$W/t.out" 2>"$W/t.err" || fail "time-limited run"
n=$(lines "$W/t.jsonl")
[ "$n" -gt 5 ] && [ "$n" -lt 60 ] || fail "60 simulated seconds gave $n trials"
