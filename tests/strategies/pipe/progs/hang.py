#!/usr/bin/env python3
# Never answers the second propose; timeout=3 has it killed after 3 s (1 s
# was too short for Python to start and answer hello on a loaded machine),
# within 6 s of the request by the plugin's own clock (kill-within).  It
# has written half a line first, which the message quotes.
# param: timeout=3
# expect-stderr: sent no answer to 'propose'
# expect-stderr: within 3 s (timeout=); killed it
# expect-stderr: '{"type": "conf'
# kill-within: 6
# log-lines: 4
import sys
import time
from common import serve


def bad(m):
    sys.stdout.write('{"type": "conf')
    sys.stdout.flush()
    time.sleep(3600)


serve(bad)
