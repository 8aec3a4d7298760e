#!/usr/bin/env python3
"""Independent cross-check of `irqlab trace` (docs/trace.md "Cross-check").

Runs bpftrace with tools/trace-crosscheck.bt (bcc-style per-event sums, none
of irqlab's code) and `irqlab trace -i D -d D --format json --cost` side by
side under a loopback TCP workload (NET_RX/NET_TX softirqs), then prints
both tools' figures over irqlab's window and their differences:

- per softirq vector: runs and summed entry -> exit time (nested hard IRQs
  included on both sides: irqlab's `total_ns`);
- per CPU: hard IRQ handler + system vector runs and time (irq_work left
  out on both sides: bpftrace cannot attach irq_vectors:irq_work_exit
  here), and softirq time.

Beside them, the kernel's own accounting sampled every 20 ms over the same
window (no osnoise tracer on this kernel): each CPU's tick-sampled softirq
column of /proc/stat and the ksoftirqd threads' run time (schedstat), as
one-sided bounds (see kernel_rows).

Windows: bpftrace prints its cumulative sums every 20 ms stamped with one
CLOCK_MONOTONIC instant; irqlab's JSON gives its window's end
(`end_mono_ns`) and length. bpftrace's sums are interpolated linearly to
irqlab's window; `edge` is what bpftrace counted in the two 20-ms steps
that contain the window's edges (the most the interpolation can be off).
Tolerances derived from the same run: counts `edge + 2 x CPUs` (one run in
flight per CPU at each edge) + the runs the kernel skipped either tool's
programs for (bpftrace's perf event programs' `recursion_misses` from
bpftool, irqlab's `missed`), time `edge + runs x 2 x (irqlab's +
bpftrace's ns per program run)` + those skipped runs at the row's mean
duration, both per-run costs measured in this run by the kernel's BPF
run-time accounting (irqlab's `--cost`, which holds it on, and bpftool for
bpftrace's programs): each tool's measured span of a handler can contain
the other tool's programs at entry and exit.

Needs root, bpftrace and bpftool (tools/install-trace-deps.sh
--with-bpftrace) and an irqlab built with --features trace. Mounts tracefs
if absent (so that irqlab does not mount it too) and unmounts it again.

Usage: sudo tools/trace-crosscheck.py [--duration S] [--irqlab BIN] [--json]
Exit 0 when every difference is within its tolerance, 1 otherwise.
"""

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRACING = "/sys/kernel/tracing"
SOFTIRQS = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET",
            "SCHED", "HRTIMER", "RCU"]


def cpu_count():
    """Possible CPU ids 0..n-1, from sysfs."""
    text = open("/sys/devices/system/cpu/possible").read().strip()
    last = max(int(part.split("-")[-1]) for part in text.split(","))
    return last + 1


def prog_ids():
    """{id: bpftool's JSON} of every loaded BPF program."""
    out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True,
                         text=True, check=True).stdout
    return {p["id"]: p for p in json.loads(out)}


def mounted():
    with open("/proc/self/mounts") as f:
        return any(line.split()[1] == TRACING for line in f)


class Workload:
    """Loopback TCP bulk transfer until stopped: NET_RX/NET_TX softirqs."""

    def __init__(self):
        self.stop = threading.Event()
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.threads = [threading.Thread(target=self.recv, daemon=True),
                        threading.Thread(target=self.send, daemon=True)]
        for t in self.threads:
            t.start()

    def recv(self):
        conn, _ = self.server.accept()
        with conn:
            while conn.recv(1 << 16):
                pass

    def send(self):
        chunk = b"x" * (1 << 16)
        with socket.create_connection(self.server.getsockname()) as c:
            while not self.stop.is_set():
                c.sendall(chunk)

    def close(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=5)
        self.server.close()


class Bpftrace:
    """tools/trace-crosscheck.bt running, its snapshots collected."""

    def __init__(self, ncpu):
        self.ncpu = ncpu
        self.before = set(prog_ids())
        self.ids = set()
        self.snaps = {}  # t -> {key: (count, ns)}
        self.first = threading.Event()
        self.proc = subprocess.Popen(
            ["bpftrace", os.path.join(HERE, "trace-crosscheck.bt"), str(ncpu)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        for line in self.proc.stdout:
            f = line.split()
            if len(f) == 5 and f[0] == "H":
                key = ("hard", int(f[2]))
                vals = (int(f[3]), int(f[4]))
            elif len(f) == 6 and f[0] == "S":
                key = ("soft", int(f[2]), int(f[3]))
                vals = (int(f[4]), int(f[5]))
            else:
                continue
            self.snaps.setdefault(int(f[1]), {})[key] = vals
            self.first.set()

    def attached(self):
        """Note bpftrace's programs: the tracepoint programs loaded since
        it started (this bpftool lists no owner pids)."""
        self.ids = {i for i, p in prog_ids().items() if p.get("type") == "tracepoint"} \
            - self.before

    def prog_misses(self):
        """{"soft": n, "hard": n}: runs the kernel skipped bpftrace's softirq
        programs, and its hard IRQ and vector programs, for since they were
        loaded (`recursion_misses`, which bpftool leaves out at 0; program
        names are the tracepoints', cut to 15 bytes)."""
        out = {"soft": 0, "hard": 0}
        for i, p in prog_ids().items():
            if i in self.ids:
                kind = "soft" if p.get("name", "").startswith("softirq_") else "hard"
                out[kind] += p.get("recursion_misses", 0)
        return out

    def prog_cost(self):
        """(runs, ns) of bpftrace's tracepoint programs (kernel accounting)."""
        runs = ns = 0
        for i, p in prog_ids().items():
            if i in self.ids:
                runs += p.get("run_cnt", 0)
                ns += p.get("run_time_ns", 0)
        return runs, ns

    def stop(self):
        self.proc.send_signal(2)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=10)


def series(snaps, pick):
    """[(t, count, ns)] of the summed keys `pick` selects in snapshots
    {t: {key: (count, ns)}}, by time."""
    out = []
    for t in sorted(snaps):
        snap = snaps[t]
        c = sum(v[0] for k, v in snap.items() if pick(k))
        n = sum(v[1] for k, v in snap.items() if pick(k))
        out.append((t, c, n))
    return out


class KernelAccounting:
    """The kernel's own accounting, sampled every 20 ms on CLOCK_MONOTONIC:
    per CPU the softirq column of /proc/stat (USER_HZ ticks; without
    CONFIG_IRQ_TIME_ACCOUNTING a tick is charged to softirq when it lands
    in softirq context) and the CFS run time of every ksoftirqd/N thread
    (/proc/PID/schedstat, ns)."""

    def __init__(self, ncpu):
        self.ncpu = ncpu
        self.hz = os.sysconf("SC_CLK_TCK")
        self.pids = [p for p in os.listdir("/proc") if p.isdigit() and comm(p).startswith("ksoftirqd/")]
        self.snaps = {}  # t -> {key: (ticks, ns)}
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop_flag.is_set():
            t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            snap = {}
            with open("/proc/stat") as f:
                for line in f:
                    x = line.split()
                    if x[0].startswith("cpu") and x[0] != "cpu":
                        # user nice system idle iowait irq softirq ...
                        snap[("stat", int(x[0][3:]))] = (int(x[7]), 0)
            ns = 0
            for p in self.pids:
                try:
                    with open(f"/proc/{p}/schedstat") as f:
                        ns += int(f.read().split()[0])
                except OSError:
                    pass
            snap[("ksoftirqd",)] = (0, ns)
            self.snaps[t] = snap
            time.sleep(0.02)

    def stop(self):
        self.stop_flag.set()
        self.thread.join(timeout=5)


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def kernel_rows(kern, line, a, b, ncpu):
    """irqlab's per-CPU softirq time beside /proc/stat's tick-sampled
    softirq column, and its ksoftirqd time beside the ksoftirqd threads'
    run time, over irqlab's window. Both checks are one-sided bounds
    (docs/trace.md "The kernel's own accounting"):

    - /proc/stat: a tick held pending while interrupts are off is
      delivered at the local_irq_enable() that opens softirq processing,
      where the kernel charges it to softirq, so the column reads above
      the traced time; irqlab's time must not exceed it by more than the
      tick sample's 3 sigma (binomial, in USER_HZ ticks: conservative when
      the kernel's HZ is higher) plus the two edge steps;
    - ksoftirqd: the softirq runs in the threads are part of their run
      time (which also holds their scheduling and idle checks), so
      irqlab's time must not exceed it by more than the edge steps."""
    tick = 1e9 / kern.hz
    window = b - a
    rows = []
    for cpu in range(ncpu):
        (ticks, _), (edge, _) = over(series(kern.snaps, lambda k, c=cpu: k == ("stat", c)), a, b)
        mine = next((c["softirq_ns"] for c in line["cpus"] if c["cpu"] == cpu), 0)
        n = window / tick
        p = min(max(ticks / n, 0.0), 1.0) if n else 0.0
        sigma = tick * (n * p * (1 - p)) ** 0.5
        rows.append({
            "what": f"cpu{cpu} softirq vs /proc/stat",
            "irqlab_ns": mine, "kernel_ns": round(ticks * tick),
            "high_ns": round(ticks * tick + 3 * sigma + (edge + 2) * tick),
        })
    (_, run), (_, edge) = over(series(kern.snaps, lambda k: k == ("ksoftirqd",)), a, b)
    mine = sum(s["ksoftirqd_ns"] for s in line["softirqs"])
    rows.append({
        "what": "ksoftirqd vs its run time",
        "irqlab_ns": mine, "kernel_ns": round(run),
        "high_ns": round(run + edge),
    })
    for r in rows:
        r["within"] = r["irqlab_ns"] <= r["high_ns"]
    return rows


def at(pts, t):
    """Interpolated (count, ns) at t, and the step's (count, ns) size."""
    for (t0, c0, n0), (t1, c1, n1) in zip(pts, pts[1:]):
        if t0 <= t <= t1:
            w = (t - t0) / (t1 - t0) if t1 > t0 else 0.0
            return (c0 + w * (c1 - c0), n0 + w * (n1 - n0)), (c1 - c0, n1 - n0)
    raise SystemExit(f"irqlab: crosscheck: no snapshot around {t}")


def over(pts, a, b):
    """(count, ns) of a series over [a, b] and the edge steps' (count, ns)."""
    (ca, na), (ea_c, ea_n) = at(pts, a)
    (cb, nb), (eb_c, eb_n) = at(pts, b)
    return (cb - ca, nb - na), (ea_c + eb_c, ea_n + eb_n)


def irqlab_sums(line):
    """irqlab's {key: (count, ns)} in the bpftrace keys' terms."""
    sums = {}
    for s in line["softirqs"]:
        sums[("vec", s["vec"])] = (s["count"], s["total_ns"])
        for p in s["per_cpu"]:
            c, n = sums.get(("soft", p["cpu"]), (0, 0))
            sums[("soft", p["cpu"])] = (c + p["count"], n + p["total_ns"])
    for r in line["irqs"]:
        if r["label"] == "IWI":
            continue  # left out on the bpftrace side too
        for p in r["per_cpu"]:
            c, n = sums.get(("hard", p["cpu"]), (0, 0))
            sums[("hard", p["cpu"])] = (c + p["count"], n + p["total_ns"])
    return sums


def cost_per_run(stderr):
    m = re.search(r"(\d+) program runs, (\d+) ns per run", stderr)
    return float(m.group(2)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=10.0, help="seconds (default 10)")
    ap.add_argument("--irqlab", default=os.path.join(HERE, "..", "target", "debug", "irqlab"))
    ap.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("irqlab: crosscheck: needs root (BPF programs)")
    ncpu = cpu_count()
    mounted_here = False
    if not mounted():
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACING], check=True)
        mounted_here = True
    work = bt = kern = None
    try:
        bt = Bpftrace(ncpu)
        if not bt.first.wait(timeout=30):
            bt.stop()
            sys.exit("irqlab: crosscheck: bpftrace printed nothing: " + bt.proc.stderr.read())
        bt.attached()
        kern = KernelAccounting(ncpu)
        work = Workload()
        d = f"{args.duration}s"
        bt_missed = bt.prog_misses()
        run = subprocess.run([args.irqlab, "trace", "-i", d, "-d", d, "--format", "json",
                              "--cost"], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"irqlab: crosscheck: irqlab trace failed: {run.stderr}")
        bt_runs, bt_ns = bt.prog_cost()
        bt_missed = {k: n - bt_missed[k] for k, n in bt.prog_misses().items()}
        time.sleep(0.1)  # one more snapshot after irqlab's window
    finally:
        if work:
            work.close()
        if kern:
            kern.stop()
        if bt:
            bt.stop()
        if mounted_here:
            subprocess.run(["umount", TRACING], check=False)
    line = json.loads(run.stdout.strip().splitlines()[-1])
    b = line["end_mono_ns"]
    a = b - line["elapsed_ns"]
    p_irqlab = cost_per_run(run.stderr) or 0.0
    p_bpftrace = bt_ns / bt_runs if bt_runs else 0.0
    per_event = 2.0 * (p_irqlab + p_bpftrace)
    mine = irqlab_sums(line)
    # runs the kernel skipped either tool's programs for over irqlab's run:
    # in the other tool's count and not in its own (bpftrace's are perf
    # event programs, skipped while another BPF program or a map read runs
    # on the CPU; irqlab says its own in `missed`). Which CPU or softirq
    # vector is not known: a softirq row allows all of the softirq
    # programs' skipped runs, a hard IRQ row all of the others'.
    ir_missed = line.get("missed", {})
    missed = {
        "soft": bt_missed["soft"] + ir_missed.get("softirq", 0),
        "hard": bt_missed["hard"] + sum(n for g, n in ir_missed.items()
                                        if g not in ("softirq", "softirq_raise")),
    }
    rows = []
    keys = [("vec", v) for v in range(10)] + [("hard", c) for c in range(ncpu)] + \
           [("soft", c) for c in range(ncpu)]
    for key in keys:
        if key[0] == "vec":
            pick = lambda k, v=key[1]: k[0] == "soft" and k[2] == v  # noqa: E731
            what = f"softirq {SOFTIRQS[key[1]]}"
        elif key[0] == "hard":
            pick = lambda k, c=key[1]: k == ("hard", c)  # noqa: E731
            what = f"cpu{key[1]} hardirq+vectors"
        else:
            pick = lambda k, c=key[1]: k[0] == "soft" and k[1] == c  # noqa: E731
            what = f"cpu{key[1]} softirq"
        (bc, bn), (ec, en) = over(series(bt.snaps, pick), a, b)
        ic, inn = mine.get(key, (0, 0))
        if ic == 0 and round(bc) == 0:
            continue
        per_run = max(inn / ic if ic else 0.0, bn / bc if bc else 0.0)
        kind = "hard" if key[0] == "hard" else "soft"
        rows.append({
            "what": what,
            "irqlab_count": ic, "bpftrace_count": round(bc, 1),
            "count_tolerance": round(ec + 2 * ncpu + missed[kind], 1),
            "irqlab_ns": inn, "bpftrace_ns": round(bn),
            "ns_tolerance": round(en + max(ic, bc) * per_event + missed[kind] * per_run),
        })
    ok = all(abs(r["irqlab_count"] - r["bpftrace_count"]) <= r["count_tolerance"]
             and abs(r["irqlab_ns"] - r["bpftrace_ns"]) <= r["ns_tolerance"] for r in rows)
    krows = kernel_rows(kern, line, a, b, ncpu)
    ok = ok and all(r["within"] for r in krows)
    result = {
        "window_s": line["elapsed_ns"] / 1e9, "cpus": ncpu,
        "irqlab_ns_per_run": p_irqlab, "bpftrace_ns_per_run": round(p_bpftrace, 1),
        "bpftrace_missed": bt_missed, "irqlab_missed": line.get("missed", {}),
        "snapshots": len(bt.snaps), "rows": rows, "kernel_rows": krows,
        "user_hz": kern.hz, "within_tolerance": ok,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)
    sys.exit(0 if ok else 1)


def print_table(r):
    print(f"window {r['window_s']:.3f} s (irqlab trace), {r['cpus']} CPUs, "
          f"{r['snapshots']} bpftrace snapshots interpolated to it; program cost per run: "
          f"irqlab {r['irqlab_ns_per_run']:.0f} ns, bpftrace {r['bpftrace_ns_per_run']:.0f} ns")
    print(f"runs the kernel skipped the programs for: bpftrace {r['bpftrace_missed']}, "
          f"irqlab {r['irqlab_missed'] or 'none'} (in every row's tolerance)")
    print(f"{'what':<24} {'irqlab':>9} {'bpftrace':>10} {'diff':>8} {'tol':>7}"
          f" {'irqlab µs':>11} {'bpftrace µs':>12} {'diff µs':>9} {'diff %':>7} {'tol µs':>8}")
    for x in r["rows"]:
        dc = x["irqlab_count"] - x["bpftrace_count"]
        dn = x["irqlab_ns"] - x["bpftrace_ns"]
        pct = dn * 100.0 / x["bpftrace_ns"] if x["bpftrace_ns"] else 0.0
        print(f"{x['what']:<24} {x['irqlab_count']:>9} {x['bpftrace_count']:>10.1f} {dc:>8.1f}"
              f" {x['count_tolerance']:>7.1f} {x['irqlab_ns'] / 1e3:>11.1f}"
              f" {x['bpftrace_ns'] / 1e3:>12.1f} {dn / 1e3:>9.1f} {pct:>7.2f}"
              f" {x['ns_tolerance'] / 1e3:>8.1f}")
    print(f"the kernel's own accounting over the same window (/proc/stat at USER_HZ {r['user_hz']}, schedstat):")
    print(f"{'what':<30} {'irqlab µs':>11} {'kernel µs':>11} {'diff %':>7} {'irqlab at most µs':>18}")
    for x in r["kernel_rows"]:
        pct = (x["irqlab_ns"] - x["kernel_ns"]) * 100.0 / x["kernel_ns"] if x["kernel_ns"] else 0.0
        print(f"{x['what']:<30} {x['irqlab_ns'] / 1e3:>11.1f} {x['kernel_ns'] / 1e3:>11.1f}"
              f" {pct:>7.2f} {x['high_ns'] / 1e3:>18.1f}{'' if x['within'] else '  OUTSIDE'}")
    print("all within tolerance" if r["within_tolerance"] else "SOME OUTSIDE TOLERANCE")


if __name__ == "__main__":
    main()
