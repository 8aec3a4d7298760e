#!/usr/bin/env python3
"""`irqlab compare a.txt b.txt` against `sort -g a.txt b.txt` of the same
numbers (BENCHMARKS.md, "`irqlab compare` at scale"): the commands take
turns, round after round, in one run (the order rotates each round, so a
busy spell hits each of them alike); wall time and CPU time (user +
system of that child alone, from wait4's rusage) of every run; min and
median of each command and the ratio of the medians to sort's.

Inputs: tools/compare-scale-inputs.py DIR writes DIR/a.txt and DIR/b.txt
(100 000 numbers each). Output of every command goes to /dev/null.

Usage: tools/compare-vs-sort.py DIR [--rounds N] [--bin LABEL=PATH ...]
       (default: 7 rounds, one binary: $IRQLAB or target/release/irqlab)
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def run(argv: list) -> tuple:
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(argv, stdout=null)
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)}: exit status {os.waitstatus_to_exitcode(status)}")
    return wall, ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--bin", action="append", default=[], metavar="LABEL=PATH")
    args = ap.parse_args()
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bins = [b.split("=", 1) for b in args.bin] or [
        ["irqlab", os.environ.get("IRQLAB", os.path.join(top, "target/release/irqlab"))]
    ]
    a, b = os.path.join(args.dir, "a.txt"), os.path.join(args.dir, "b.txt")
    cmds = [(f"{label} compare", [path, "compare", a, b]) for label, path in bins]
    cmds.append(("sort -g", ["sort", "-g", a, b]))
    times = {name: [] for name, _ in cmds}
    for r in range(args.rounds):
        for name, argv in cmds[r % len(cmds):] + cmds[: r % len(cmds)]:
            times[name].append(run(argv))
    with open("/proc/loadavg", encoding="ascii") as f:
        load = f.read().split()[:3]
    print(f"{args.rounds} rounds, load average after: {' '.join(load)}")
    sort_wall = statistics.median(w for w, _ in times["sort -g"])
    sort_cpu = statistics.median(c for _, c in times["sort -g"])
    for name, _ in cmds:
        wall = [w for w, _ in times[name]]
        cpu = [c for _, c in times[name]]
        print(
            f"{name:>20}: wall min {min(wall):.3f} median {statistics.median(wall):.3f} s"
            f" ({statistics.median(wall) / sort_wall:.2f}x sort);"
            f" CPU min {min(cpu):.3f} median {statistics.median(cpu):.3f} s"
            f" ({statistics.median(cpu) / sort_cpu:.2f}x sort)"
        )


if __name__ == "__main__":
    main()
