#!/usr/bin/env python3
# Answers the first observe, then sends another message unasked: caught
# before the host's next request, or as an answer with a wrong id when it
# comes just after that request went out.
# expect-stderr: out of turn
# expect-stderr: the host's 'propose' (id 4)
# expect-stderr: '{"type": "configs", "id": 99, "configs": []}'
# log-lines: 4
from common import send, serve


def observe(m):
    send({"type": "ok", "id": m["id"]})
    send({"type": "configs", "id": 99, "configs": []})


serve(lambda m: None, observe)
