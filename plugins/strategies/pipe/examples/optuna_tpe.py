#!/usr/bin/env python3
"""optuna_tpe.py - Optuna's TPE sampler as a heron-search strategy.

Every knob becomes an Optuna distribution: categorical over the knob's
values when its domain is a listed set (tile factors are divisors of their
extent), an integer range [lo, hi] otherwise.  For each proposal the study
asks a trial, the suggested knob values go through the host's "repair"
operation (the nearest config that satisfies every constraint) and the
repaired config is what gets measured.  The objective Optuna sees is thus
f(repair(x)): well defined on the whole box, so TPE needs no notion of the
constraints.

Told values: the measured kernel time in seconds (minimised).  A config
that failed (compile error, crash, timeout, wrong result) is told as a
FAIL trial, which TPE leaves out of its model.  A suggestion whose repair
lands on a config measured before is told that config's value at once and
another trial is asked, so the host never sees a duplicate.  Late in a run
most suggestions repair onto measured configs, and each such trial grows
the study that every later suggestion scans; so a round asks at most
ASKS_PER_CONFIG suggestions per wanted config and fills what is still
missing with the host's random valid samples (taught to the study when
their results come back, as resumed measurements are).

Needs Optuna (Debian: python3-optuna).  Through the pipe strategy:

    heron-search ... --strategy pipe \
        --param program=plugins/strategies/pipe/examples/optuna_tpe.py

or, when the first python3 in PATH lacks Optuna (a pyenv or a venv python3
before Debian's, whose python3-optuna is for /usr/bin/python3 only), with
the Python that has it named:

        --param program=/usr/bin/python3 \
        --param args=plugins/strategies/pipe/examples/optuna_tpe.py

Run by a Python that cannot import Optuna, it says which one that is, which
other Pythons on this machine have Optuna, and the two parameters above;
it answers the host's hello with that error, so the run stops with it
(exit status 1) instead of a traceback.

Arguments: --startup N (random trials before TPE, default 10),
--multivariate (TPE over the joint distribution of the knobs).
"""
import argparse
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heron_pipe import OpError, Strategy, run  # noqa: E402



def pythons_with_optuna():
    """The other python3 interpreters (PATH's, then Debian's) that import
    optuna, by real path, in PATH order."""
    import shutil
    import subprocess
    here = os.path.realpath(sys.executable)
    seen, found = {here}, []
    dirs = os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin"]
    for d in dirs:
        exe = shutil.which("python3", path=d or ".")
        if not exe or os.path.realpath(exe) in seen:
            continue
        seen.add(os.path.realpath(exe))
        try:
            ok = subprocess.run([exe, "-c", "import optuna"], timeout=60,
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if ok:
            found.append(exe)
    return found


def missing_optuna(e):
    """Says which Python lacks Optuna and how to point at one that has it,
    on stderr and as the error answering the host's hello; returns 1."""
    me = os.path.abspath(__file__)
    exe = sys.executable or "python3"
    version = sys.version.split()[0]
    others = pythons_with_optuna()
    use = others[0] if others else "/path/to/python3"
    lines = [
        "optuna_tpe.py: the Python running it cannot import optuna (%s): "
        "%s (Python %s)" % (e, exe, version),
        "optuna_tpe.py: " + ("Pythons here that have Optuna: " +
                             ", ".join(others) if others else
                             "no other python3 here has Optuna; install it "
                             "(Debian: apt-get install python3-optuna, for "
                             "/usr/bin/python3; or %s -m pip install optuna)"
                             % exe),
        "optuna_tpe.py: run it with such a Python: --param program=%s "
        "--param args=%s" % (use, me),
    ]
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()
    short = "%s (Python %s) cannot import optuna; use --param program=%s " \
            "--param args=optuna_tpe.py" % (exe, version, use)
    line = sys.stdin.readline()
    try:
        msg = json.loads(line)
        reply = {"type": "error", "id": msg.get("id"), "message": short}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    except ValueError:
        pass
    return 1


try:
    import optuna  # noqa: E402
    from optuna.distributions import (CategoricalDistribution,  # noqa: E402
                                      IntDistribution)
    from optuna.trial import TrialState, create_trial  # noqa: E402
except ImportError as e:
    sys.exit(missing_optuna(e))

# Suggestions asked per wanted proposal before the round fills the rest
# with random valid samples (a repaired suggestion may land on a config
# measured or proposed already).  8 made the study six times the trials
# measured on the dedispersion space, and an ask's cost grows with it.
ASKS_PER_CONFIG = 2


class IndexedCategorical(CategoricalDistribution):
    """Optuna's categorical distribution with its value -> index lookup in a
    dict.  Optuna 3.1 finds a value's index by a linear scan with a Python
    equality helper, and TPE does that for every past trial, knob and ask:
    80% of an ask's time at a thousand trials.  Knob values are numbers,
    strings and booleans (all hashable); anything the dict misses goes to
    Optuna's own scan, so the semantics are Optuna's."""

    def __init__(self, choices):
        super().__init__(choices)
        self._index = {}
        for i, c in enumerate(self.choices):
            self._index.setdefault((type(c), c), i)

    def to_internal_repr(self, value):
        i = self._index.get((type(value), value))
        return i if i is not None else super().to_internal_repr(value)


def frozen(cfg):
    return tuple(sorted(cfg.items()))


class OptunaTPE(Strategy):
    def __init__(self, startup, multivariate):
        self.startup = startup
        self.multivariate = multivariate
        self.pending = {}   # frozen config -> trials waiting for its result
        self.measured = {}  # frozen config -> told value (None: failed)

    def hello(self, host, msg):
        self.dists = {}
        for v in msg["space"]["vars"]:
            if not v["knob"]:
                continue
            if "values" in v:
                self.dists[v["name"]] = IndexedCategorical(v["values"])
            else:
                self.dists[v["name"]] = IntDistribution(v["lo"], v["hi"])
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        warnings.filterwarnings("ignore", category=optuna.exceptions.
                                ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(
            seed=msg["seed"] % 2**32, n_startup_trials=self.startup,
            multivariate=self.multivariate)
        self.study = optuna.create_study(direction="minimize",
                                         sampler=sampler)

    def tell(self, trial, value):
        if value is None:
            self.study.tell(trial, state=TrialState.FAIL)
        else:
            self.study.tell(trial, value)

    def propose(self, host, want):
        out = []
        for _ in range(ASKS_PER_CONFIG * want):
            if len(out) == want:
                break
            trial = self.study.ask(self.dists)
            try:
                cfg = host.repair(dict(trial.params))
            except OpError:  # nothing valid near it (an empty space)
                self.study.tell(trial, state=TrialState.FAIL)
                continue
            key = frozen(cfg)
            if key in self.measured:
                self.tell(trial, self.measured[key])
            elif key in self.pending:
                self.pending[key].append(trial)
            else:
                self.pending[key] = [trial]
                out.append(cfg)
        if len(out) < want:
            seen = {frozen(c) for c in out}
            for cfg in host.sample(2 * (want - len(out))):
                key = frozen(cfg)
                if len(out) == want:
                    break
                if key in seen or key in self.measured or key in self.pending:
                    continue
                seen.add(key)
                out.append(cfg)
        return out

    def observe(self, host, results, resumed):
        for r in results:
            if not r["config"]:
                continue
            key = frozen(r["config"])
            value = r["seconds"] if r["status"] == "ok" else None
            self.measured[key] = value
            trials = self.pending.pop(key, [])
            for t in trials:
                self.tell(t, value)
            if not trials and r["config"].keys() == self.dists.keys():
                # A resumed (or otherwise unasked) measurement: teach the
                # study with a finished trial of its own.
                self.study.add_trial(create_trial(
                    params=dict(r["config"]), distributions=self.dists,
                    value=value,
                    state=TrialState.COMPLETE if value is not None
                    else TrialState.FAIL))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--startup", type=int, default=10,
                    help="random trials before TPE takes over (default 10)")
    ap.add_argument("--multivariate", action="store_true",
                    help="multivariate TPE (experimental in Optuna)")
    a = ap.parse_args()
    sys.exit(run(OptunaTPE(a.startup, a.multivariate)))
