#!/usr/bin/env python3
"""conformance.py [--arrays] STATE_LOG - a strategy program that checks the
host's side of pipe protocol 1 (docs/pipe-protocol.md) as it runs.

It checks every message the host sends (hello's space, observe's results,
ids, the order of turns), calls every operation of the space once in the
first propose (and checks each answer: valid configs, the error answer to a
bad request), proposes configs the host sampled, keeps state (save/load),
and on "bye" writes "conformance: N checks passed" to stderr and exits 0.
On the first failed check it says which on stderr and exits 1, which ends
the run.  --arrays asks for configs as arrays of every variable.

Every turn is appended to STATE_LOG, one word a line (hello, resumed N,
load, propose, observe, save, bye), for the test to read the order.
"""
import json
import os
import sys

ARRAYS = "--arrays" in sys.argv
TRACE = [a for a in sys.argv[1:] if not a.startswith("--")][0]
STATUSES = {"ok", "compile_error", "runtime_error", "timeout",
            "wrong_result", "invalid"}
KINDS = {"prod", "sum", "eq", "ne", "le", "lt", "in", "select"}
checks = 0


def fail(msg):
    sys.stderr.write("conformance: FAIL: %s\n" % msg)
    sys.exit(1)


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        fail(msg)


def trace(word):
    with open(TRACE, "a") as f:
        f.write(word + "\n")


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def recv():
    line = sys.stdin.readline()
    check(line.endswith("\n"), "the host's line is cut: %r" % line[:80])
    msg = json.loads(line)
    check(isinstance(msg, dict) and isinstance(msg.get("type"), str),
          "a host message without a type: %r" % line[:80])
    return msg


op_id = 0


def op(type_, **fields):
    """One request for a space operation; returns the answer."""
    global op_id
    op_id += 1
    rid = "c%d" % op_id
    send(dict(fields, type=type_, id=rid))
    ans = recv()
    check(ans.get("id") == rid, "answer to %s has id %r" % (type_,
                                                           ans.get("id")))
    check(ans["type"] in ("result", "error"),
          "answer to %s is a %r" % (type_, ans["type"]))
    return ans


class Host:
    def __init__(self, hello):
        self.space = hello["space"]
        self.names = [v["name"] for v in self.space["vars"]]
        self.knobs = self.space["knobs"]

    def check_config(self, cfg, what):
        if ARRAYS:
            check(isinstance(cfg, list) and len(cfg) == len(self.names)
                  and all(isinstance(x, int) for x in cfg),
                  "%s: not an array of %d integers" % (what, len(self.names)))
        else:
            check(isinstance(cfg, dict) and sorted(cfg) == sorted(self.knobs)
                  and all(isinstance(x, int) for x in cfg.values()),
                  "%s: not an object of every knob" % what)

    def valid(self, cfg, what):
        self.check_config(cfg, what)
        ans = op("violations", config=cfg)
        check(ans["type"] == "result" and ans["count"] == 0,
              "%s is not valid: %r" % (what, ans))

    def knob(self, cfg, name):
        return cfg[self.names.index(name)] if ARRAYS else cfg[name]


def check_hello(m):
    check(m["id"] == 1 and m["protocol"] == 1, "hello: id or protocol")
    check(m["task"].startswith("gemm/512,512,512/fp32/"), "hello: task")
    check(m["batch"] == 4, "hello: batch %r" % m["batch"])
    check(isinstance(m["seed"], int) and 0 <= m["seed"] < 2**53, "seed")
    check(isinstance(m["timeout"], (int, float)), "hello: timeout")
    sp = m["space"]
    names = [v["name"] for v in sp["vars"]]
    check(len(set(names)) == len(names) > 0, "space: variable names")
    check(set(sp["knobs"]) <= set(names) and sp["knobs"], "space: knobs")
    check({v["name"] for v in sp["vars"] if v["knob"]} == set(sp["knobs"]),
          "space: knob flags")
    for v in sp["vars"]:
        check(v["lo"] <= v["hi"], "%s: lo > hi" % v["name"])
        vals = v.get("values")
        check(vals is None or (vals == sorted(vals) and
                               v["lo"] <= vals[0] and vals[-1] <= v["hi"]),
              "%s: values" % v["name"])
    for c in sp["constraints"]:
        check(isinstance(c["text"], str) and c["text"], "constraint text")
        check(c["kind"] in KINDS, "constraint kind %r" % c["kind"])
        check(c["z"] in names and all(x in names for x in c["xs"]),
              "constraint %s: operands" % c["text"])
        check(c["cond"] is None or c["cond"] in names, "constraint cond")
        check((c["kind"] == "in") == ("values" in c), "constraint values")


def exercise(h):
    """Every operation once, with its answer checked."""
    s = op("sample", n=3)["configs"]
    check(len(s) == 3, "sample n=3 gave %d" % len(s))
    for i, c in enumerate(s):
        h.valid(c, "sample %d" % i)
    k0 = h.knobs[0]
    part = {k0: h.knob(s[0], k0)}
    v = op("validate", config=part)["config"]
    h.valid(v, "validate")
    check(h.knob(v, k0) == part[k0], "validate changed a set value")
    fixed = op("sample", n=2, fix=part)["configs"]
    check(all(h.knob(c, k0) == part[k0] for c in fixed), "sample fix")
    broken = dict(zip(h.names, s[0])) if ARRAYS else dict(s[0])
    broken[k0] = 10**9
    r = op("repair", config=broken)["config"]
    h.valid(r, "repair")
    c = op("crossover", a=s[0], b=s[1])["config"]
    h.valid(c, "crossover")
    for k in h.knobs:
        check(h.knob(c, k) in (h.knob(s[0], k), h.knob(s[1], k)),
              "crossover: %s from neither parent" % k)
    mu = op("mutate", config=s[0], vars=[k0])["config"]
    h.valid(mu, "mutate")
    check(mu != s[0], "mutate changed nothing")
    f = op("features", configs=s[:2])["features"]
    check(len(f) == 2 and all(len(x) == len(h.names) for x in f), "features")
    one = op("features", config=s[0])["features"]
    check(one == f[0], "features of one config")
    key = op("key", config=s[0])["key"]
    check(len(key) == 16 and int(key, 16) >= 0, "key %r" % key)
    keys = op("key", configs=s)["keys"]
    check(keys[0] == key and len(set(keys)) == 3, "keys")
    bad = op("mutate", config={"no_such_variable": 1})
    check(bad["type"] == "error" and bad["code"] == "HERON_EINVAL" and
          "no_such_variable" in bad["message"], "bad request: %r" % bad)
    bad = op("sample", n=0)
    check(bad["type"] == "error", "sample n=0 accepted")
    send({"type": "log", "level": "info", "message": "exercised every op"})


def main():
    state = {"observed": 0}
    hello = recv()
    check(hello["type"] == "hello", "first message is %r" % hello["type"])
    check_hello(hello)
    trace("hello")
    h = Host(hello)
    send({"type": "ready", "id": 1, "protocol": 1,
          "configs": "array" if ARRAYS else "object", "state": True})
    last_id, trials, proposals = 1, set(), 0
    while True:
        m = recv()
        if m["type"] == "bye":
            trace("bye")
            sys.stderr.write("conformance: %d checks passed\n" % checks)
            return 0
        check(m["id"] > last_id, "ids do not grow: %r" % m["id"])
        last_id = m["id"]
        if m["type"] == "propose":
            trace("propose")
            proposals += 1
            if proposals == 1:
                exercise(h)
            cfgs = op("sample", n=m["want"])["configs"]
            send({"type": "configs", "id": m["id"], "configs": cfgs})
        elif m["type"] == "observe":
            rs = m["results"]
            if m.get("resumed"):
                check(proposals == 0, "resumed results after a propose")
                trace("resumed %d" % len(rs))
            else:
                trace("observe")
            for r in rs:
                check(r["status"] in STATUSES, "status %r" % r["status"])
                check(r["trial"] not in trials, "trial %d twice" % r["trial"])
                trials.add(r["trial"])
                h.check_config(r["config"], "result config")
                check(len(r["key"]) == 16, "result key")
                for f in ("seconds", "gflops", "build_seconds"):
                    check(isinstance(r[f], (int, float)), "result " + f)
                check(isinstance(r["error"], str), "result error")
                check(isinstance(r["simulated"], bool), "result simulated")
            state["observed"] += len(rs)
            send({"type": "ok", "id": m["id"]})
        elif m["type"] == "save":
            trace("save")
            with open(m["path"], "w") as f:
                json.dump(state, f)
            send({"type": "ok", "id": m["id"]})
        elif m["type"] == "load":
            check(os.path.exists(m["path"]), "load of a missing file")
            with open(m["path"]) as f:
                state = json.load(f)
            trace("load %d" % state["observed"])
            send({"type": "ok", "id": m["id"]})
        else:
            fail("unexpected host message %r" % m["type"])


if __name__ == "__main__":
    sys.exit(main())
