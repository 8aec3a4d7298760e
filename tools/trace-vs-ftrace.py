#!/usr/bin/env python3
"""Hold `irqlab trace`'s counts against ftrace's record of the same
tracepoints, hit by hit, and name the tasks that were current at the hits
the BPF programs did not see (docs/trace.md, "Runs no program sees").

Usage (root, a build with --features trace):
    tools/trace-vs-ftrace.py [--irqlab target/release/irqlab] [--seconds 20]
                             [--workload bursts|none] [--json]

One `irqlab trace` interval of --seconds runs while a tracefs instance of
its own (instances/irqlab-vs-ftrace-<pid>, CLOCK_MONOTONIC like the BPF
programs' stamps) records every local_timer, reschedule, call_function,
call_function_single, softirq and hard IRQ handler entry. For each group
(LOC, RES, CAL, softirq; hardirq per IRQ, its actions' runs summed) and
CPU it prints the hits ftrace saw inside irqlab's interval,
the runs irqlab traced, the difference, the tasks current at most hits
of that group and CPU, and every task whose hits equal the difference.
irqlab's own `missed` count per group is printed beside: it should be
the difference less one per row (CPU, and IRQ for hardirq). The default
workload is five bursts of
`perf bench sched pipe` (when perf is installed) and `yes` with idle
gaps (idle CPUs woken by IPIs), from 1 s after irqlab starts until 1 s
before its interval ends: the edges are quiet, since a run between
irqlab's read of the kernel's files and of its maps never looks missed,
and a busy CPU can hold several there (docs/trace.md). The instance is removed, irqlab and the
workload ended, and tracefs unmounted if this tool mounted it, on exit,
error, Ctrl-C and SIGTERM. Exits 1 if irqlab failed or ftrace lost
events (the comparison would be wrong), 2 on bad use.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter

TRACEFS = "/sys/kernel/tracing"
EVENTS = {
    "irq_vectors/local_timer_entry": "LOC",
    "irq_vectors/reschedule_entry": "RES",
    "irq_vectors/call_function_entry": "CAL",
    "irq_vectors/call_function_single_entry": "CAL",
    "irq/softirq_entry": "softirq",
    "irq/irq_handler_entry": "hardirq",
}
LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):")
IRQ = re.compile(r"\birq=(\d+)")


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def workload(kind):
    """Bursts with idle gaps between them, or nothing."""
    if kind == "none":
        return None
    pipe = (
        "timeout 2 perf bench sched pipe -l 100000000 >/dev/null 2>&1; sleep 0.5; "
        if shutil.which("perf") else ""
    )
    script = f"for i in 1 2 3 4 5; do {pipe}timeout 1 yes >/dev/null; sleep 1; done"
    return subprocess.Popen(["sh", "-c", script], start_new_session=True)


def hits(text, start_ns, end_ns):
    """(group, cpu, irq) -> Counter of current task names, inside the
    window; irq is the hard IRQ's number, None for the other groups."""
    names = {e.split("/")[1]: g for e, g in EVENTS.items()}
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if not m or m.group(5) not in names:
            continue
        t = round(float(m.group(4)) * 1e9)
        if start_ns <= t <= end_ns:
            irq = IRQ.search(line) if names[m.group(5)] == "hardirq" else None
            key = (names[m.group(5)], int(m.group(3)), int(irq.group(1)) if irq else None)
            out.setdefault(key, Counter())[m.group(1).strip()] += 1
    return out


def traced(obj):
    """(group, cpu, irq) -> runs in one irqlab trace JSON object."""
    out = Counter()
    for row in obj.get("irqs", []):
        if row.get("kind") == "vector" and row.get("label") in ("LOC", "RES", "CAL"):
            for c in row["per_cpu"]:
                out[(row["label"], c["cpu"], None)] += c["count"]
        if row.get("kind") == "hardirq":
            for c in row["per_cpu"]:
                out[("hardirq", c["cpu"], row["irq"])] += c["count"]
    for row in obj.get("softirqs", []):
        for c in row["per_cpu"]:
            out[("softirq", c["cpu"], None)] += c["count"]
    return out


def lost(inst):
    """Events the instance's ring buffer overwrote or dropped."""
    total = 0
    for cpu in os.listdir(f"{inst}/per_cpu"):
        with open(f"{inst}/per_cpu/{cpu}/stats") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() in ("overrun", "dropped events"):
                    total += int(v.split()[0])
    return total


def report(obj, found, as_json):
    mine = traced(obj)
    rows = []
    for key in sorted(set(found) | set(mine), key=lambda k: (k[0], k[1], -1 if k[2] is None else k[2])):
        tasks = found.get(key, Counter())
        seen, counted = sum(tasks.values()), mine.get(key, 0)
        diff = seen - counted
        rows.append({
            "group": key[0], "cpu": key[1], "irq": key[2], "ftrace": seen, "irqlab": counted,
            "diff": diff,
            "tasks_at_diff": sorted(t for t, n in tasks.items() if diff > 0 and n == diff),
            "top_tasks": tasks.most_common(3),
        })
    missed = obj.get("missed", {})
    if as_json:
        print(json.dumps({"rows": rows, "irqlab_missed": missed}))
        return
    print(f"{'group':11} {'cpu':>3} {'ftrace':>8} {'irqlab':>8} {'diff':>6}  tasks current at the hits")
    for r in rows:
        top = ", ".join(f"{t} {n}" for t, n in r["top_tasks"])
        if r["tasks_at_diff"]:
            top += f"; {r['diff']} hits each (= diff): " + ", ".join(r["tasks_at_diff"])
        group = r["group"] if r["irq"] is None else f"{r['group']} {r['irq']}"
        print(f"{group:11} {r['cpu']:>3} {r['ftrace']:>8} {r['irqlab']:>8} {r['diff']:>6}  {top}")
    print(f"irqlab's missed: {missed or 'none'} (the difference less one per row)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--irqlab", default="target/release/irqlab")
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--workload", choices=["bursts", "none"], default="bursts")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("trace-vs-ftrace: needs root", file=sys.stderr)
        return 2
    if not 2 <= a.seconds <= 600:
        print("trace-vs-ftrace: --seconds must be 2..600", file=sys.stderr)
        return 2
    mounted = False
    if not os.path.exists(f"{TRACEFS}/instances"):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], check=True)
        mounted = True
    inst = f"{TRACEFS}/instances/irqlab-vs-ftrace-{os.getpid()}"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    load = proc = None
    try:
        os.mkdir(inst)
        write(f"{inst}/trace_clock", "mono")
        write(f"{inst}/buffer_size_kb", "65536")
        # the x86 vectors' events are absent elsewhere: softirqs alone then
        present = [e for e in EVENTS if os.path.isdir(f"{inst}/events/{e}")]
        if not present:
            print("trace-vs-ftrace: none of the events is on this kernel", file=sys.stderr)
            return 1
        for e in present:
            write(f"{inst}/events/{e}/enable", "1")
        started = time.monotonic()
        proc = subprocess.Popen(
            [a.irqlab, "trace", "-i", f"{a.seconds}s", "-d", f"{a.seconds}s", "--format", "json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        time.sleep(1)
        load = workload(a.workload)
        if load is not None:
            # quiet for the last second of the interval (see the docstring)
            try:
                load.wait(timeout=max(started + a.seconds - 1 - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                os.killpg(load.pid, signal.SIGTERM)
                load.wait()
        out, err = proc.communicate()
        irqlab = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        write(f"{inst}/tracing_on", "0")
        if irqlab.returncode != 0 or not irqlab.stdout.strip():
            print(f"trace-vs-ftrace: irqlab trace failed: {irqlab.stderr.strip()}", file=sys.stderr)
            return 1
        obj = json.loads(irqlab.stdout.strip().splitlines()[-1])
        end = obj["end_mono_ns"]
        with open(f"{inst}/trace") as f:
            found = hits(f.read(), end - obj["elapsed_ns"], end)
        if lost(inst):
            print(f"trace-vs-ftrace: ftrace lost {lost(inst)} events; use fewer --seconds",
                  file=sys.stderr)
            return 1
        report(obj, found, a.json)
        return 0
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # irqlab detaches and ends
            proc.wait()
        if load is not None and load.poll() is None:
            os.killpg(load.pid, signal.SIGTERM)
            load.wait()
        if os.path.isdir(inst):
            for e in EVENTS:
                try:
                    write(f"{inst}/events/{e}/enable", "0")
                except OSError:
                    pass
            os.rmdir(inst)
        if mounted:
            subprocess.run(["umount", TRACEFS], check=False)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
