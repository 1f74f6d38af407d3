#!/usr/bin/env python3
"""Runs bench_gemm with bitlearn and OpenBLAS interleaved and prints the median ratio per shape.

Usage: bench/gemm_ratio.py [BENCH_BIN] [--filter REGEX] [--repetitions N] [--min-time S]
The two sides run in one process, in random interleaved order (Google Benchmark's
--benchmark_enable_random_interleaving), each shape and thread count --repetitions times; the
table shows the median GFLOP/s of each side and bitlearn / OpenBLAS. The load (uptime) before
and after is printed with it, since the figures mean little on a busy machine.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", nargs="?", default="build/bench/bench_gemm")
    ap.add_argument("--filter", default="M:(1024/N:1024/K:1024|2048/N:2048/K:2048)/")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--min-time", default="0.5")
    args = ap.parse_args()

    load_before = load_average()
    cmd = [args.bench, f"--benchmark_filter={args.filter}",
           f"--benchmark_repetitions={args.repetitions}",
           "--benchmark_enable_random_interleaving=true",
           f"--benchmark_min_time={args.min_time}", "--benchmark_format=json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    load_after = load_average()

    runs = {}  # (side, shape) -> [GFLOP/s per repetition]
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        m = re.match(r"BM_(bitlearn_matmul|openblas_sgemm)/(.*)/real_time", b["name"])
        if not m:
            continue
        side = "bitlearn" if m.group(1).startswith("bitlearn") else "openblas"
        flops = 2.0
        for part in m.group(2).split("/")[:3]:
            flops *= int(part.split(":")[1])
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
        runs.setdefault((side, m.group(2)), []).append(
            (flops / (b["real_time"] * scale) * 1e-9, flops / (b["cpu_time"] * scale) * 1e-9))

    shapes = sorted({s for _, s in runs}, key=lambda s: [int(x.split(":")[1]) for x in s.split("/")])
    print(f"load average before: {load_before}; after: {load_after}; "
          f"{args.repetitions} interleaved repetitions, medians")
    print("GFLOP/s by wall time; 'cpu ratio' divides by the calling thread's CPU time instead,")
    print("which a busy machine disturbs less (meaningful for threads:1 only)")
    print(f"{'shape':44s} {'bitlearn':>9s} {'OpenBLAS':>9s} {'ratio':>6s} {'cpu ratio':>9s}")
    for s in shapes:
        ours = runs.get(("bitlearn", s))
        peer = runs.get(("openblas", s))
        if not ours or not peer:
            continue
        mo = statistics.median(r[0] for r in ours)
        mp = statistics.median(r[0] for r in peer)
        co = statistics.median(r[1] for r in ours)
        cp = statistics.median(r[1] for r in peer)
        print(f"{s:44s} {mo:9.1f} {mp:9.1f} {mo / mp:6.2f} {co / cp:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
