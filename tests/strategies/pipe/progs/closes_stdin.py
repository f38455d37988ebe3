#!/usr/bin/env python3
# Closes its stdin while answering the first observe, then lingers: the
# host's next request meets a closed pipe, which must end the run with a
# message, never kill the host with SIGPIPE.
# expect-stderr: closed its stdin before reading 'propose' (id 4)
# log-lines: 4
import os
import time
from common import send, serve


def observe(m):
    os.close(0)
    send({"type": "ok", "id": m["id"]})
    time.sleep(30)


serve(lambda m: None, observe)
