#!/usr/bin/env python3
# Answers the second propose with a message of a type the protocol lacks.
# expect-stderr: sent an unknown message type 'frobnicate'
# expect-stderr: "type": "frobnicate"
# log-lines: 4
from common import send, serve

serve(lambda m: send({"type": "frobnicate", "id": m["id"]}))
