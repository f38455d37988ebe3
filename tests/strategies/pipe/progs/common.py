"""common.py - the protocol, just enough of it, for the hostile programs.

serve(bad_propose, bad_observe) plays a well-behaved strategy for the first
round (hello -> ready, the first propose answered with configs the host
sampled, every observe with ok) and then calls bad_propose(msg) on the
second propose, so the failure comes after one logged round: the test can
check that the log written so far stays whole.  bad_observe, when given,
replaces the first observe's answer instead.  Deliberately independent of
plugins/strategies/pipe/examples/heron_pipe.py.
"""
import json
import sys


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def recv():
    line = sys.stdin.readline()
    return json.loads(line) if line else None


def serve(bad_propose, bad_observe=None):
    proposals = 0
    while True:
        m = recv()
        if m is None or m["type"] == "bye":
            return
        if m["type"] == "hello":
            send({"type": "ready", "id": m["id"], "protocol": 1})
        elif m["type"] == "propose":
            proposals += 1
            if proposals > 1:
                bad_propose(m)
                continue
            send({"type": "sample", "id": "s1", "n": m["want"]})
            got = recv()
            send({"type": "configs", "id": m["id"], "configs": got["configs"]})
        elif m["type"] == "observe":
            if bad_observe:
                bad_observe(m)
            else:
                send({"type": "ok", "id": m["id"]})
