"""heron_pipe - the program's side of Heron-C's pipe protocol, version 1.

A strategy program subclasses Strategy, overrides propose() (and usually
observe()), and calls run(MyStrategy()).  run() reads the host's messages
from stdin, answers them on stdout and returns when the host says "bye" or
closes stdin.  While the program answers, it may call the host's space
operations through the Host object it is given (host.sample(),
host.mutate(), host.repair(), ...): each is one request on stdout and one
answer on stdin, so every config they return is valid by construction.

Configs are dicts of knob name -> int (or lists of every variable's value
when the strategy sets configs = "array").  docs/pipe-protocol.md defines
the messages; this module needs nothing but the standard library.

stdout belongs to the protocol: run() points sys.stdout at stderr, so a
stray print() lands on the host's stderr (prefixed with the program's name)
instead of breaking the conversation.
"""
import json
import sys
import traceback

PROTOCOL = 1

OPS = ("sample", "validate", "repair", "crossover", "mutate", "features",
       "key", "violations")


class OpError(Exception):
    """The host could not do an operation (code: "HERON_EUNSAT", ...)."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


class Host:
    """The host's operations on the space, usable while answering."""

    def __init__(self, rfile, wfile):
        self._r = rfile
        self._w = wfile
        self._next = 0

    def send(self, msg):
        self._w.write(json.dumps(msg, separators=(",", ":")) + "\n")
        self._w.flush()

    def receive(self):
        line = self._r.readline()
        if not line:
            return None
        return json.loads(line)

    def request(self, type_, **fields):
        """Sends one operation request and returns the host's result."""
        self._next += 1
        rid = "op%d" % self._next
        self.send(dict(fields, type=type_, id=rid))
        ans = self.receive()
        if ans is None:
            raise EOFError("the host closed the pipe during '%s'" % type_)
        if ans.get("id") != rid:
            raise RuntimeError("answer for id %r, expected %r"
                               % (ans.get("id"), rid))
        if ans["type"] == "error":
            raise OpError(ans.get("code", "?"), ans.get("message", ""))
        return ans

    # The operations (docs/pipe-protocol.md, "The program's requests").
    def sample(self, n=1, fix=None):
        f = {"n": n} if fix is None else {"n": n, "fix": fix}
        return self.request("sample", **f)["configs"]

    def validate(self, config):
        return self.request("validate", config=config)["config"]

    def repair(self, config):
        return self.request("repair", config=config)["config"]

    def crossover(self, a, b, keys=None):
        f = {"a": a, "b": b} if keys is None else {"a": a, "b": b, "keys": keys}
        return self.request("crossover", **f)["config"]

    def mutate(self, config, vars=None):
        f = {"config": config} if vars is None else {"config": config,
                                                     "vars": vars}
        return self.request("mutate", **f)["config"]

    def features(self, configs):
        return self.request("features", configs=configs)["features"]

    def key(self, config):
        return self.request("key", config=config)["key"]

    def violations(self, config):
        return self.request("violations", config=config)

    def log(self, message, level="info"):
        self.send({"type": "log", "level": level, "message": message})


class Strategy:
    """Override what you need; the defaults keep no state."""
    configs = "object"  # or "array": every variable, in the space's order
    state = False       # True: save()/load() are called on --resume

    def hello(self, host, msg):
        """msg is the host's hello: task, batch, seed, space, ..."""

    def propose(self, host, want):
        """Returns a list of at most `want` configs."""
        return host.sample(want)

    def observe(self, host, results, resumed):
        """results: dicts with trial, status, config, key, seconds, gflops,
        build_seconds, max_error, error, simulated."""

    def save(self, host, path):
        pass

    def load(self, host, path):
        pass


def run(strategy, rfile=None, wfile=None):
    """Serves the host until "bye" or the end of stdin; returns 0."""
    rfile = rfile or sys.stdin
    wfile = wfile or sys.stdout
    sys.stdout = sys.stderr  # a stray print() must not reach the protocol
    host = Host(rfile, wfile)
    while True:
        msg = host.receive()
        if msg is None or msg["type"] == "bye":
            return 0
        t, rid = msg["type"], msg.get("id")
        try:
            if t == "hello":
                strategy.space = msg["space"]
                strategy.knobs = msg["space"]["knobs"]
                strategy.hello(host, msg)
                host.send({"type": "ready", "id": rid, "protocol": PROTOCOL,
                           "configs": strategy.configs,
                           "state": strategy.state})
            elif t == "propose":
                cfgs = strategy.propose(host, msg["want"])
                host.send({"type": "configs", "id": rid,
                           "configs": list(cfgs)[:msg["want"]]})
            elif t == "observe":
                strategy.observe(host, msg["results"],
                                 bool(msg.get("resumed")))
                host.send({"type": "ok", "id": rid})
            elif t in ("save", "load"):
                getattr(strategy, t)(host, msg["path"])
                host.send({"type": "ok", "id": rid})
            else:
                host.send({"type": "error", "id": rid,
                           "message": "unsupported request '%s'" % t})
        except (EOFError, BrokenPipeError):
            return 0
        except Exception as e:
            # The traceback first (the host ends the program once it reads
            # the error), then the error, which ends the run.
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            host.send({"type": "error", "id": rid,
                       "message": "%s: %s" % (type(e).__name__, e)})
            return 1
