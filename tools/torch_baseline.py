#!/usr/bin/env python3
"""Times the vendor libraries on the Tensor Core suite through PyTorch.

A cross-check of bench_cuda (cuBLAS called from C) where PyTorch is at hand on
the GPU machine: torch.mm / bmm / mv go to cuBLAS, the convolutions to cuDNN
(torch.backends.cudnn.benchmark on, so it picks its fastest algorithm), fp16
in and out with fp32 accumulation.  The shapes are those of
configs/suites/tensorcore.json, read from the file.  Prints one line per task:
name, microseconds per call (median of 7 repeats of event-timed loops),
TFLOP/s.  Usage: torch_baseline.py [SUITE]
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F


def conv_out(x, k, s, p, d):
    return (x + 2 * p - d * (k - 1) - 1) // s + 1


def make(task, dev):
    op, s = task["op"], task["shape"]
    h = dict(device=dev, dtype=torch.float16)
    r = lambda *dims: torch.randn(*dims, **h)
    if op == "gemm":
        a, b = r(s["M"], s["K"]), r(s["K"], s["N"])
        return (lambda: torch.mm(a, b)), 2 * s["M"] * s["N"] * s["K"]
    if op == "bmm":
        a, b = r(s["B"], s["M"], s["K"]), r(s["B"], s["K"], s["N"])
        return (lambda: torch.bmm(a, b)), 2 * s["B"] * s["M"] * s["N"] * s["K"]
    if op == "gemv":
        a, x = r(s["M"], s["K"]), r(s["K"])
        return (lambda: torch.mv(a, x)), 2 * s["M"] * s["K"]
    if op == "scan":
        x = r(s["M"], s["K"])
        tri = torch.triu(torch.ones(s["K"], s["N"], **h))
        return (lambda: torch.mm(x, tri)), 2 * s["M"] * s["N"] * s["K"]
    if op == "c1d":
        x, w = r(s["N"], s["CI"], s["W"]), r(s["CO"], s["CI"], s["KW"])
        wo = conv_out(s["W"], s["KW"], s["stride"], s["pad"], s["dilation"])
        f = lambda: F.conv1d(x, w, stride=s["stride"], padding=s["pad"],
                             dilation=s["dilation"])
        return f, 2 * s["N"] * s["CO"] * wo * s["CI"] * s["KW"]
    if op in ("c2d", "dil"):
        x = r(s["N"], s["CI"], s["H"], s["W"])
        w = r(s["CO"], s["CI"], s["KH"], s["KW"])
        ho = conv_out(s["H"], s["KH"], s["stride"], s["pad"], s["dilation"])
        wo = conv_out(s["W"], s["KW"], s["stride"], s["pad"], s["dilation"])
        f = lambda: F.conv2d(x, w, stride=s["stride"], padding=s["pad"],
                             dilation=s["dilation"])
        return f, 2 * s["N"] * s["CO"] * ho * wo * s["CI"] * s["KH"] * s["KW"]
    if op == "c3d":
        x = r(s["N"], s["CI"], s["D"], s["H"], s["W"])
        w = r(s["CO"], s["CI"], s["KD"], s["KH"], s["KW"])
        o = [conv_out(s[a], s[k], s["stride"], s["pad"], s["dilation"])
             for a, k in (("D", "KD"), ("H", "KH"), ("W", "KW"))]
        f = lambda: F.conv3d(x, w, stride=s["stride"], padding=s["pad"],
                             dilation=s["dilation"])
        return f, 2 * s["N"] * s["CO"] * o[0] * o[1] * o[2] * s["CI"] * \
            s["KD"] * s["KH"] * s["KW"]
    if op == "t2d":
        x = r(s["N"], s["CI"], s["H"], s["W"])
        w = r(s["CI"], s["CO"], s["KH"], s["KW"])
        st, p, d, op_ = s["stride"], s["pad"], s["dilation"], s["output_padding"]
        ho = (s["H"] - 1) * st - 2 * p + d * (s["KH"] - 1) + op_ + 1
        wo = (s["W"] - 1) * st - 2 * p + d * (s["KW"] - 1) + op_ + 1
        f = lambda: F.conv_transpose2d(x, w, stride=st, padding=p,
                                       output_padding=op_, dilation=d)
        return f, 2 * s["N"] * s["CI"] * s["H"] * s["W"] * s["CO"] * \
            s["KH"] * s["KW"]
    raise SystemExit(f"unknown op {op}")


def time_us(f):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    number = 1
    while True:
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record()
        for _ in range(number):
            f()
        b.record()
        b.synchronize()
        if a.elapsed_time(b) >= 20 or number >= 1 << 16:
            break
        number *= 2
    reps = []
    for _ in range(7):
        a.record()
        for _ in range(number):
            f()
        b.record()
        b.synchronize()
        reps.append(a.elapsed_time(b) * 1000 / number)
    return statistics.median(reps)


def main():
    suite = sys.argv[1] if len(sys.argv) > 1 else "configs/suites/tensorcore.json"
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}")
    tasks = json.load(open(suite))["tasks"]
    extra = [{"name": "GEMM4096", "op": "gemm",
              "shape": {"M": 4096, "N": 4096, "K": 4096}}]
    for t in tasks + extra:
        f, flops = make(t, dev)
        us = time_us(f)
        print(f"{t['name']:10s} {us:10.2f} us  {flops / us / 1e6:8.2f} TFLOP/s")


if __name__ == "__main__":
    main()
