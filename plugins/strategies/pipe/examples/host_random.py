#!/usr/bin/env python3
"""host_random.py - the smallest pipe strategy: every proposal is a random
valid config drawn by the host (one "sample" request per round).  It
measures the protocol's own cost against the C random strategy
(tools/pipe_overhead.sh)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heron_pipe import Strategy, run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run(Strategy()))
