#!/usr/bin/env python3
# Writes escape sequences to stderr (a colour, a window title, a C1 CSI
# that clears the screen) and in a log message, then exits instead of
# answering the second propose: the user's terminal obeys none of them,
# each is shown as an escape (hostile.sh also finds no raw control byte).
# expect-stderr: [escapes.py] \x1b[31mred\x1b[0m \x1b]0;pwned\x07 \u009b2J end
# expect-stderr: [pipe] escapes.py: log \x1b[2J\x0d end
# expect-stderr: exited with status 3 during 'propose'
# log-lines: 4
import sys
from common import send, serve


def bad(m):
    sys.stderr.write("\x1b[31mred\x1b[0m \x1b]0;pwned\x07 \u009b2J end\n")
    sys.stderr.flush()
    send({"type": "log", "message": "log \x1b[2J\r end"})
    sys.exit(3)


serve(bad)
