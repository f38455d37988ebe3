#!/usr/bin/env python3
# Answers the first observe, then sends another message unasked.
# expect-stderr: sent a message out of turn, before the host's 'propose'
# expect-stderr: '{"type": "configs", "id": 99, "configs": []}'
# log-lines: 4
from common import send, serve


def observe(m):
    send({"type": "ok", "id": m["id"]})
    send({"type": "configs", "id": 99, "configs": []})


serve(lambda m: None, observe)
