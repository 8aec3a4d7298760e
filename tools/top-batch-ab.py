#!/usr/bin/env python3
"""Per-sample CPU of `irqlab top --batch` for two builds, interleaved.

    tools/top-batch-ab.py OLD_BIN NEW_BIN [--root TREE] [--rounds 7]
                          [-n 20] [-i 100ms]

Runs `BIN top --batch --root TREE --format F -i I -n N` (stdout to
/dev/null) for F in json and text, alternating OLD and NEW in every round
so that load hits both alike, and reads each process's own user + system
CPU from wait4. Prints per format the CPU per sample (ms) of each build as
min-median-max over rounds and the NEW/OLD ratio per round. With a 1152-CPU
`irqlab synth` tree this is the "top --batch per-sample cost" of
BENCHMARKS.md (the tree's counters do not move: every sample re-reads and
re-parses the whole file, rates are zero).
"""
import argparse
import os
import statistics
import subprocess


def cpu_of(cmd):
    with open(os.devnull, "wb") as sink:
        p = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    p.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--root", default="/")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("-i", default="100ms")
    a = ap.parse_args()
    for fmt in ("json", "text"):
        res = {"old": [], "new": []}
        for r in range(a.rounds):
            order = ("old", "new") if r % 2 == 0 else ("new", "old")
            for which in order:
                b = a.old if which == "old" else a.new
                cmd = [b, "top", "--batch", "--root", a.root, "--format", fmt, "-i", a.i, "-n", str(a.n)]
                res[which].append(1000 * cpu_of(cmd) / a.n)
        ratios = [n / o for n, o in zip(res["new"], res["old"])]
        for k in ("old", "new"):
            v = res[k]
            print(f"{fmt} {k}: {min(v):.2f} / {statistics.median(v):.2f} / {max(v):.2f} ms CPU per sample (min/median/max)")
        print(f"{fmt} new/old per round: {' '.join(f'{x:.2f}' for x in ratios)} (median {statistics.median(ratios):.2f})")


if __name__ == "__main__":
    main()
