#!/usr/bin/env python3
"""local_search.py - a plain-Python strategy for heron-search's pipe plugin.

Random valid configs until one runs, then mutations of the best config so
far (one or two knobs changed, the rest re-solved by the host), with a
fresh random config now and then.  Every config comes from the host's
sample and mutate operations, so all are valid; a small memory of what was
proposed avoids asking twice for the same config.

    heron-search --op gemm --shape 256,256,256 --strategy pipe \
        --param program=plugins/strategies/pipe/examples/local_search.py \
        --param args="--explore 0.2"
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heron_pipe import OpError, Strategy, run  # noqa: E402


def frozen(cfg):
    return tuple(sorted(cfg.items()))


class LocalSearch(Strategy):
    def __init__(self, explore):
        self.explore = explore
        self.best, self.best_gflops = None, 0.0
        self.seen = set()

    def hello(self, host, msg):
        self.rng = random.Random(msg["seed"])

    def neighbour(self, host):
        if self.best is None or self.rng.random() < self.explore:
            return host.sample(1)[0]
        knobs = self.rng.sample(self.knobs, min(len(self.knobs),
                                                self.rng.choice((1, 2))))
        try:
            return host.mutate(self.best, vars=knobs)
        except OpError:  # no neighbour through these knobs
            return host.sample(1)[0]

    def propose(self, host, want):
        out = []
        for _ in range(4 * want):
            if len(out) == want:
                break
            cfg = self.neighbour(host)
            if frozen(cfg) not in self.seen:
                self.seen.add(frozen(cfg))
                out.append(cfg)
        return out

    def observe(self, host, results, resumed):
        for r in results:
            if not r["config"]:
                continue
            self.seen.add(frozen(r["config"]))
            if r["status"] == "ok" and r["gflops"] > self.best_gflops:
                self.best, self.best_gflops = r["config"], r["gflops"]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--explore", type=float, default=0.2,
                    help="share of fresh random configs (default 0.2)")
    sys.exit(run(LocalSearch(ap.parse_args().explore)))
