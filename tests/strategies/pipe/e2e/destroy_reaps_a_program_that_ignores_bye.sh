#!/bin/sh
# A program that ignores "bye", SIGTERM and the end of its stdin is killed
# when the run ends: nothing of it is left, and the run does not wait for
# it more than a few seconds: the plugin's debug line says the stop took
# under 5 s (2 s after bye, SIGTERM, 1 s, SIGKILL) and needed SIGKILL.
. "$(dirname "$0")/../common.sh"
cat >"$W/stubborn.py" <<'PY'
#!/usr/bin/env python3
import json, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "bye":
        break
    ans = {"hello": "ready", "propose": "configs", "observe": "ok"}[m["type"]]
    out = {"type": ans, "id": m["id"], "protocol": 1, "configs": []}
    if ans == "configs":
        sys.stdout.write(json.dumps({"type": "sample", "id": 0,
                                     "n": m["want"]}) + "\n")
        sys.stdout.flush()
        out["configs"] = json.loads(sys.stdin.readline())["configs"]
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
time.sleep(600)
PY
chmod +x "$W/stubborn.py"
search run $REPLAY --strategy pipe --param "program=$W/stubborn.py" \
  --trials 8 --batch 4 --seed 1 --verbose
[ "$(cat "$W/run.status")" -eq 0 ] || fail "the run failed"
y=$(sed -n "s/^\[pipe\] stubborn.py: stopped .* after the host sent 'bye' (id [0-9]*); the stop took \([0-9.]*\) s (SIGKILL)$/\1/p" \
  "$W/run.err")
[ -n "$y" ] || fail "no debug line says the program was killed after bye"
awk -v y="$y" 'BEGIN { exit !(y < 5) }' ||
  fail "the run waited $y s for the program"
left=$(leftover "$W/stubborn.py")
[ -z "$left" ] || fail "the program outlived the run: $left"
echo ok
