#!/bin/sh
# The llm strategy tunes GEMM 256^3 end to end against the scripted
# OpenAI-compatible server (fake-llm-server): its good answers are configs
# of an earlier random run, mixed with prose, an unknown knob, a truncated
# block, an HTTP 500 and a reply slower than the timeout.  The run finishes
# its 30 trials, the model's configs are measured, repeats make it fall back
# to random sampling with one warning, the API key reaches the server and
# nowhere else, and the recording replays the same configs without a server.
. "$(dirname "$0")/../e2e_common.sh"
: "${HERON_FAKE_LLM:?set HERON_FAKE_LLM to the fake-llm-server binary}"

# Six valid configs of the task, from a short random run.
"$HERON_SEARCH" --op gemm --shape 256,256,256 --strategy random --trials 6 \
  --batch 6 --seed 2 --log "$W/seed.jsonl" $FAST >"$W/seed.out" 2>"$W/seed.err" ||
  fail "the random run exited $?"
python3 - "$W/seed.jsonl" "$W/script.jsonl" <<'PY' || fail "no script"
import json, sys
cfgs = [json.loads(l)["config"] for l in open(sys.argv[1])]
block = lambda c: "## " + ", ".join("%s: %d" % kv for kv in c.items()) + " ##"
lines = []
for i, c in enumerate(cfgs):
    lines.append({"content": block(c)})
    if i == 1:
        lines.append({"content": "Sure, try this:\n" + block(cfgs[0])[:-2] +
                      ", tile_x: 4 ##\nIt should be faster."})
    if i == 2:
        lines.append({"status": 500, "body": "{\"error\": {\"message\": \"overloaded\"}}"})
    if i == 3:
        lines.append({"content": block(c)[:40]})
    if i == 4:
        lines.append({"content": block(c), "delay_ms": 4000})
with open(sys.argv[2], "w") as f:
    for l in lines:
        f.write(json.dumps(l) + "\n")
PY

"$HERON_FAKE_LLM" --script "$W/script.jsonl" --port-file "$W/port" \
  --requests-log "$W/requests.jsonl" >"$W/server.out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$W"' EXIT INT TERM
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$W/port" ] && break; sleep 0.2; done
[ -s "$W/port" ] || fail "the fake server wrote no port"
url="http://127.0.0.1:$(cat "$W/port")/v1"

export HERON_E2E_LLM_KEY=sk-e2e-0123456789-secret
LLM="--param url=$url --param api_key_env=HERON_E2E_LLM_KEY
     --param timeout=1 --param retries=1 --param max_useless=4"
LOUD="--number 1 --repeat 1 --min-repeat-ms 1 --work-dir $W/work"
# shellcheck disable=SC2086
"$HERON_SEARCH" --op gemm --shape 256,256,256 --strategy llm --trials 30 \
  --batch 8 --seed 5 --timeout 10 --log "$W/llm.jsonl" $LOUD $LLM \
  --param record="$W/record.jsonl" >"$W/llm.out" 2>"$W/llm.err" ||
  fail "heron-search --strategy llm exited $?"
check_log "$W/llm.jsonl" --lines 30 --trials 30 --unique-configs \
  --task gemm/256,256,256/fp32/cpu
[ "$(grep -c '"strategy":"llm"' "$W/llm.jsonl")" -eq 30 ] ||
  fail "the log does not name strategy llm on every line"
grep -q '^\[llm\] [0-9]* calls' "$W/llm.err" ||
  fail "no closing count line from the plugin"
from_model=$(sed -n 's/.*configs: \([0-9]*\) from the model.*/\1/p' "$W/llm.err")
[ "${from_model:-0}" -ge 6 ] || fail "only ${from_model:-0} configs came from the model"
[ "$(grep -c 'warning: 4 useless replies in a row' "$W/llm.err")" -eq 1 ] ||
  fail "not exactly one fallback warning"
grep -q '"authorization":"Bearer sk-e2e-0123456789-secret"' "$W/requests.jsonl" ||
  fail "the server did not get the key"
! grep -q 'sk-e2e' "$W/llm.jsonl" "$W/llm.err" "$W/llm.out" "$W/record.jsonl" ||
  fail "the API key leaked into a log, a message or the recording"
kill $server

# Without a server: the recording gives the same configs in the same order.
# shellcheck disable=SC2086
"$HERON_SEARCH" --op gemm --shape 256,256,256 --strategy llm --trials 30 \
  --batch 8 --seed 5 --timeout 10 --log "$W/replay.jsonl" $FAST \
  --param replay="$W/record.jsonl" --param max_useless=4 \
  >"$W/replay.out" 2>"$W/replay.err" || fail "the replay run exited $?"
python3 - "$W/llm.jsonl" "$W/replay.jsonl" <<'PY' || fail "replay differs"
import json, sys
a, b = ([json.loads(l)["config"] for l in open(p)] for p in sys.argv[1:])
sys.exit(0 if a == b else "configs differ from trial %d" %
         next(i + 1 for i in range(len(a)) if a[i] != b[i]))
PY
echo ok
