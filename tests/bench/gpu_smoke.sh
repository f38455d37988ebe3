#!/bin/sh
# gpu_smoke.sh HERON_SEARCH - on a machine with an NVIDIA GPU, a short
# tuning run of the cuda target: every kernel is built by NVRTC, launched,
# checked against the reference and timed.  Without a GPU - no driver
# library, or a driver that reports no device: heron-search says "target
# cuda: no GPU (no CUDA driver: ...)" or "(no CUDA device)" - it is skipped,
# visibly (exit 77); CI machines have none, so this runs only where a
# session has a GPU (tools/gpu-check.sh does more).  Any other failure - a
# driver that fails to start or lacks an entry point ("target cuda: the GPU
# probe failed (...)"), a crash, a wrong kernel - fails (exit 1).
set -u
search=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/heron-gpu-smoke.XXXXXX")
trap 'rm -rf "$W"' EXIT INT TERM
status=0
"$search" --op gemm --shape 256,192,320 --target cuda --trials 8 --batch 8 \
  --min-repeat-ms 1 --log "$W/log.jsonl" >"$W/out" 2>"$W/err" || status=$?
if [ "$status" -ne 0 ] &&
   grep -Eq 'target cuda: no GPU \((no CUDA driver: |no CUDA device\))' "$W/err"; then
  echo "SKIP: no GPU here ($(grep -o 'no GPU ([^)]*)' "$W/err" | head -1))"
  exit 77
fi
[ "$status" -eq 0 ] || { cat "$W/err" >&2; echo "FAIL: exit $status" >&2; exit 1; }
# Every record ok and timed (an ok record's seconds > 0, not "untimed").
python3 - "$W/log.jsonl" <<'PY' || exit 1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ok = [r for r in recs if r["status"] == "ok"]
timed = [r for r in ok if r["seconds"] > 0 and not r.get("untimed")]
if len(recs) != 8 or len(ok) != 8 or len(timed) != 8:
    sys.exit("FAIL: %d records, %d ok, %d timed; want 8 of each"
             % (len(recs), len(ok), len(timed)))
print("8 of 8 kernels launched, matched the reference and were timed")
PY
