#!/usr/bin/env python3
# Reports an error for the second propose: the run stops and says so.
# expect-stderr: reported an error for 'propose' (id 4): out of ideas
# log-lines: 4
from common import send, serve

serve(lambda m: send({"type": "error", "id": m["id"],
                      "message": "out of ideas"}))
