#!/usr/bin/env python3
# Answers the second propose with a line that is not JSON.
# expect-stderr: sent invalid JSON during 'propose'
# expect-stderr: 'this is {not JSON at all'
# log-lines: 4
import sys
from common import serve


def bad(m):
    sys.stdout.write("this is {not JSON at all\n")
    sys.stdout.flush()


serve(bad)
