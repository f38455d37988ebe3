#!/usr/bin/env python3
# Answers the second propose with a 17 MiB line, over the 16 MiB limit.
# expect-stderr: sent a line longer than 16 MiB
# expect-stderr: '{"type": "configs", "id": 4, "pad": "xxxxxxxx
# log-lines: 4
import sys
from common import serve


def bad(m):
    sys.stdout.write('{"type": "configs", "id": %d, "pad": "' % m["id"])
    sys.stdout.write("x" * (17 << 20) + '"}\n')
    sys.stdout.flush()


serve(bad)
