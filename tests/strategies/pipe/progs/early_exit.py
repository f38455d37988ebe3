#!/usr/bin/env python3
# Exits with status 3 instead of answering the second propose; what it
# wrote to stderr reaches the user, prefixed with its name.
# expect-stderr: exited with status 3 during 'propose'
# expect-stderr: [early_exit.py] early_exit: giving up
# expect-stderr: its last line: '{"type": "ok"
# log-lines: 4
import sys
from common import serve


def bad(m):
    sys.stderr.write("early_exit: giving up\n")
    sys.exit(3)


serve(bad)
