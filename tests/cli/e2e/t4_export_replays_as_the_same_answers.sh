#!/bin/sh
# A heron log exported with heron-bench --export-t4 and replayed as a T4
# file (--target replay --replay FILE.json) answers every logged config as
# the log recorded it: same status, same time, no surrogate guess among
# them (random search with the same seed proposes the same 12 configs).
. "$(dirname "$0")/../e2e_common.sh"
"$HERON_SEARCH" --op gemm --shape 48,48,48 --strategy random --seed 3 \
  --trials 12 --batch 4 $FAST --log "$W/a.jsonl" >"$W/a.out" 2>"$W/a.err" ||
  fail "first run"
"$HERON_BENCH" --export-t4 "$W/a.jsonl" --t4-out "$W/a.t4.json" \
  >"$W/x.out" 2>"$W/x.err" || fail "export"
"$HERON_SEARCH" --op gemm --shape 48,48,48 --target replay \
  --replay "$W/a.t4.json" --strategy random --seed 3 --trials 12 --batch 4 \
  --quiet --log "$W/b.jsonl" >"$W/b.out" 2>"$W/b.err" || fail "replay of T4"
python3 - "$W/a.jsonl" "$W/b.jsonl" <<'PY' || fail "answers differ"
import json, sys
a = {r["key"]: r for r in map(json.loads, open(sys.argv[1]))}
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(b) == 12, len(b)
same = 0
for r in b:
    o = a.get(r["key"])
    if o is None:
        continue
    assert r["status"] == o["status"], (r, o)
    assert not r["simulated"], r
    if r["status"] == "ok":
        assert abs(r["seconds"] - o["seconds"]) <= 1e-9 + 1e-9 * o["seconds"], (r, o)
    same += 1
assert same == 12, "only %d of the replayed configs were logged" % same
print("ok: %d answers equal" % same)
PY
