#!/usr/bin/env python3
"""CPU per sample of `irqlab record` against `irqlab top --batch` on the
same tree in the same run, and the recording's bytes per changed counter.

    tools/record-cost.py [--irqlab BIN] [--root TREE] [--rounds 5]
                         [-i 1s] [--seconds 20] [--segment D] [--move]

Each round runs, in alternating order (so that load hits both alike),
`BIN record --root TREE -i I --duration S -o TMP` and
`BIN top --batch --root TREE -i I -n N` (N = S/I: the same number of
samples), and reads each process's own user + system CPU from wait4: the
whole process (start-up, the first sample, segment writes) divided by the
samples it took (record: its summary line; top: N + 1 with the baseline).
With --move, tools/synth-mover.py moves the tree's counters during each run
(a synth tree's counters never move otherwise; TREE is changed in place).
Prints per round the two costs and their ratio, then min / median / max,
and the bytes per changed counter from record's summary line. Bounded:
every run stops by itself.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def seconds(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", s)
    if not m:
        raise SystemExit(f"record-cost: expected e.g. 1s, 500ms or 2m, got {s!r}")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)]


def run(cmd, mover):
    """(CPU seconds of cmd, its stderr)."""
    m = None
    if mover:
        m = subprocess.Popen(mover, stderr=subprocess.DEVNULL)
    # write-only /dev/null: irqlab takes a read-write one for a closed stdout
    # (crates/irqlab/src/export/stdout.rs) and stops at the first line
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    if m:
        m.wait()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"record-cost: failed: {' '.join(cmd)}\n{err}")
    return ru.ru_utime + ru.ru_stime, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--irqlab", default="target/release/irqlab")
    ap.add_argument("--root", default="/")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-i", default="1s")
    ap.add_argument("--seconds", default="20s")
    ap.add_argument("--segment", help="record's --segment (default: record's own)")
    ap.add_argument("--move", action="store_true")
    a = ap.parse_args()
    interval, total = seconds(a.i), seconds(a.seconds)
    n = max(1, round(total / interval))
    mover = None
    if a.move:
        mover = [sys.executable, os.path.join(HERE, "synth-mover.py"), a.root,
                 "--interval", a.i, "--seconds", str(total + 2 * interval)]
    rec_ms, top_ms, ratios, sizes = [], [], [], []
    for r in range(a.rounds):
        out = tempfile.mkdtemp(prefix="record-cost-")
        try:
            rec = [a.irqlab, "record", "--root", a.root, "-i", a.i, "--duration", a.seconds,
                   "-o", out] + (["--segment", a.segment] if a.segment else [])
            top = [a.irqlab, "top", "--batch", "--root", a.root, "-i", a.i, "-n", str(n)]
            order = [("record", rec), ("top", top)]
            if r % 2:
                order.reverse()
            got = {}
            for name, cmd in order:
                got[name] = run(cmd, mover)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        cpu, err = got["record"]
        m = re.search(r"(\d+) samples, (\d+) changed counters, \d+ segment\(s\), (\d+) bytes", err)
        if not m:
            raise SystemExit(f"record-cost: no summary line from record:\n{err}")
        samples, cells, size = (int(x) for x in m.groups())
        rec_ms.append(1000 * cpu / samples)
        top_ms.append(1000 * got["top"][0] / (n + 1))
        ratios.append(rec_ms[-1] / top_ms[-1])
        sizes.append(size / max(cells, 1))
        print(f"round {r + 1}: record {rec_ms[-1]:.3f} ms/sample ({samples} samples), "
              f"top --batch {top_ms[-1]:.3f} ms/sample, ratio {ratios[-1]:.2f}; "
              f"{size} bytes, {cells} changed counters, {sizes[-1]:.2f} B/counter", flush=True)

    def mmm(v):
        return f"{min(v):.3f} / {statistics.median(v):.3f} / {max(v):.3f}"

    print(f"record ms/sample min/median/max: {mmm(rec_ms)}")
    print(f"top --batch ms/sample: {mmm(top_ms)}")
    print(f"record / top per round: {mmm(ratios)}")
    print(f"bytes per changed counter: {mmm(sizes)}")
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
