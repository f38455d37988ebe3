#!/usr/bin/env python3
# Dies of SIGSEGV instead of answering the second propose.
# expect-stderr: was killed by signal 11 (SIGSEGV) during 'propose'
# log-lines: 4
import os
import signal
from common import serve

serve(lambda m: os.kill(os.getpid(), signal.SIGSEGV))
