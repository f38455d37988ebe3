#!/usr/bin/env python3
# Answers the second propose with an "ok", the answer to another request.
# expect-stderr: answered out of turn: 'ok' where the host's 'propose' (id 4) wants 'configs'
# expect-stderr: '{"type": "ok", "id": 4}'
# log-lines: 4
from common import send, serve

serve(lambda m: send({"type": "ok", "id": m["id"]}))
