#!/usr/bin/env python3
"""Generate a fleet recording dataset from synthetic moving trees, and
check the fleet queries of docs/recording-schema.md against it.

    tools/fleet-dataset.py OUT [--hosts 100] [--hours 1] [--scale 720]
        [--interval 10s] [--cpus 2,4,...] [--seed 1] [--irqlab BIN]
        [--check] [--keep-trees DIR]
    tools/fleet-dataset.py OUT --check-only [--hours H]   # queries only

For each host: `irqlab synth` writes a tree (CPU count from --cpus, cycled
over the hosts; its own seed and nr_irqs, so IRQ numbers differ between
hosts), a mover thread rewrites its counters in place, and `irqlab record
--root TREE --host hostNNN --synthetic-clock 1767225600xSCALE` records
--hours of synthetic time in hours/SCALE of real time (the recorded
clocks run SCALE times faster; every rate the mover sets per synthetic
second is what the recording shows). Hosts above 64 CPUs run at
SCALE x 64/CPUs (at least 1), so that a sample fits in the real interval
(a 1152-CPU sample takes ~0.25 s): the hour takes longer, the samples
stay --interval apart. The mover sets, per host:

- up to 24 devices (numbered rows with one action) at distinct rates,
  30 % apart (the others stay still): the truth of "top 10 devices by
  interrupt rate per host";
- NET_RX on CPU 0 at a rate per hour; every third host (1, 4, 7 …) more
  than doubles it from each hour to the next (x2.5), the others change it
  by x0.8 to x1.5: the truth of "hosts where NET_RX doubled";
- LOC and TIMER on every CPU (~250/s, ~100/s), for realistic file sizes.

Writes OUT/host=*/boot=*/ (the dataset) and OUT/truth.json. With --check,
runs the SQL blocks marked `-- fleet:` in docs/recording-schema.md with
DuckDB (DIR replaced by OUT) and compares: exit 1 on a wrong answer, 2 if
duckdb is missing. Prints bytes per host per hour and the query times.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

START = 1767225600  # 2026-01-01 00:00:00 UTC
HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "docs", "recording-schema.md")


def duration(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"expected e.g. 10s, got {s!r}")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60}[m.group(2)]


class Line:
    """One line of a file whose count cells move: rewritten in place."""

    def __init__(self, start, text):
        self.start = start
        self.text = bytearray(text)
        self.cells = []  # (end offset in line, initial value, rate function)

    def set(self, end, value):
        s = str(value).encode()
        if len(s) > 10:
            return
        self.text[end - 10:end] = s.rjust(10)


def numbers(text, skip=1):
    """(end offset, value) of each count token of a line after its label."""
    out = []
    for i, m in enumerate(re.finditer(rb"\S+", text)):
        if i >= skip and m.group().isdigit():
            out.append((m.end(), int(m.group())))
        elif i >= skip:
            break
    return out


class Mover:
    """Counts as a function of synthetic seconds, written every tick."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR)
        self.text = os.pread(self.fd, os.fstat(self.fd).st_size, 0)
        self.lines = []

    def line(self, start, end):
        ln = Line(start, self.text[start:end])
        self.lines.append(ln)
        return ln

    def step(self, t):
        for ln in self.lines:
            for end, v0, f in ln.cells:
                ln.set(end, v0 + int(f(t)))
            os.pwrite(self.fd, bytes(ln.text), ln.start)


def lines_of(text):
    pos = 0
    for raw in text.split(b"\n"):
        yield pos, pos + len(raw), raw
        pos += len(raw) + 1


def steady(rate):
    return lambda t: rate * t


def hourly(rates):
    def f(t):
        total, h = 0.0, 0
        while t > 0:
            r = rates[min(h, len(rates) - 1)]
            total += r * min(t, 3600)
            t -= 3600
            h += 1
        return total

    return f


def plan_host(i, cpus, hours, rng, tree):
    """Movers of one host's tree and its truth."""
    ints = Mover(os.path.join(tree, "proc/interrupts"))
    cands = []
    for start, end, raw in lines_of(ints.text):
        label = raw.split(b":", 1)[0].strip()
        nums = numbers(raw)
        if label == b"LOC":
            ln = ints.line(start, end)
            for e, v in nums:
                ln.cells.append((e, v, steady(rng.uniform(200, 300))))
        elif label.isdigit() and nums:
            desc = raw.rsplit(b" ", 1)
            tail = raw[nums[-1][0]:].split()
            # single-action rows: the last token is the device
            if b"," not in raw[nums[-1][0]:] and len(tail) >= 3:
                cands.append((start, end, nums[0], tail[-1].decode()))
            del desc
    rng.shuffle(cands)
    moved = cands[:24]
    base = rng.uniform(5, 20)
    devices = {}
    for j, (start, end, (e, v), dev) in enumerate(moved):
        rate = round(base * 1.3 ** j, 3)
        ln = ints.line(start, end)
        ln.cells.append((e, v, steady(rate)))
        devices[dev] = devices.get(dev, 0.0) + rate
    soft = Mover(os.path.join(tree, "proc/softirqs"))
    doubles = i % 3 == 1
    r = rng.uniform(100, 5000)
    net = [r]
    for _ in range(hours - 1):
        net.append(net[-1] * (2.5 if doubles else rng.uniform(0.8, 1.5)))
    for start, end, raw in lines_of(soft.text):
        name = raw.split(b":", 1)[0].strip()
        nums = numbers(raw)
        if name == b"NET_RX" and nums:
            ln = soft.line(start, end)
            ln.cells.append((nums[0][0], nums[0][1], hourly(net)))
        elif name == b"TIMER":
            ln = soft.line(start, end)
            for e, v in nums:
                ln.cells.append((e, v, steady(rng.uniform(50, 150))))
    truth = {
        "cpus": cpus,
        "devices": devices,
        "net_rx_per_hour": net,
        "net_rx_doubled": [h + 1 for h in range(hours - 1) if net[h + 1] >= 2 * net[h]],
    }
    return [ints, soft], truth


def record_host(a, i, cpus, out, trees):
    rng = random.Random(a.seed * 1000 + i)
    host = f"host{i:03d}"
    tree = os.path.join(trees, host)
    irqs = max(6, min(1056, cpus))
    nr = irqs * 5 // 4 + 32 + rng.randrange(0, 400)
    subprocess.run(
        [a.irqlab, "synth", "--ncpus", str(cpus), "--irqs", str(irqs), "--nr-irqs", str(nr),
         "--seed", str(a.seed * 1000 + i), "--out", tree],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    movers, truth = plan_host(i, cpus, a.hours, rng, tree)
    scale = max(1, a.scale * min(64, cpus) // cpus)
    stop = threading.Event()
    t0 = time.monotonic()

    def move():
        while not stop.is_set():
            t = (time.monotonic() - t0) * scale
            for m in movers:
                m.step(t)
            time.sleep(0.002)

    th = threading.Thread(target=move)
    th.start()
    try:
        r = subprocess.run(
            [a.irqlab, "record", "--root", tree, "-o", out, "--host", host,
             "-i", f"{a.interval}s", "-d", f"{a.hours * 3600}s",
             "--synthetic-clock", f"{START}x{scale}"],
            capture_output=True, text=True)
    finally:
        stop.set()
        th.join()
    if r.returncode != 0:
        sys.exit(f"fleet-dataset: record of {host} failed:\n{r.stderr}")
    m = re.search(r"(\d+) samples", r.stderr)
    truth["samples"] = int(m.group(1)) if m else None
    if not a.keep_trees:
        shutil.rmtree(tree, ignore_errors=True)
    return host, truth


def fleet_queries():
    """The `-- fleet: NAME` SQL blocks of docs/recording-schema.md."""
    text = open(DOC, encoding="utf-8").read()
    out = {}
    for block in re.findall(r"```sql\n(.*?)```", text, re.S):
        m = re.match(r"-- fleet: (\S+)", block)
        if m:
            out[m.group(1)] = block
    return out


def check(out, truth, hours):
    try:
        import duckdb
    except ImportError:
        print("fleet-dataset: duckdb is not installed (tools/install-python-readers.sh)",
              file=sys.stderr)
        return 2
    qs = fleet_queries()
    con = duckdb.connect()
    bad = 0
    results = {}
    for name, sql in sorted(qs.items()):
        t = time.monotonic()
        rows = con.execute(sql.replace("DIR", out)).fetchall()
        dt = time.monotonic() - t
        results[name] = rows
        print(f"query {name}: {len(rows)} rows in {dt:.2f} s")
    top = {}
    for host, dev, rate in results.get("top-devices", []):
        top.setdefault(host, []).append((dev, rate))
    for host, tr in truth.items():
        want = sorted(tr["devices"].items(), key=lambda x: -x[1])[:10]
        got = top.get(host, [])[: len(want)]
        if [d for d, _ in got] != [d for d, _ in want]:
            print(f"WRONG top-devices {host}: got {got}, want {want}")
            bad += 1
            continue
        for (d, g), (_, w) in zip(got, want):
            if abs(g - w) > 0.05 * w:
                print(f"WRONG top-devices {host} {d}: rate {g:.2f}, want {w:.2f}")
                bad += 1
    if hours >= 2:
        got = sorted(r[0] for r in results.get("net-rx-doubled", []))
        want = sorted(h for h, tr in truth.items() if 1 in tr["net_rx_doubled"])
        if got != want:
            print(f"WRONG net-rx-doubled: got {got}, want {want}")
            bad += 1
    print(f"fleet-dataset: {len(truth)} hosts checked, {bad} wrong")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--hours", type=int, default=1)
    ap.add_argument("--scale", type=int, default=720)
    ap.add_argument("--interval", type=duration, default=10.0)
    ap.add_argument("--cpus", default="2,4,8,16,32,64,128,256,512,1152")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--irqlab", default=os.environ.get("IRQLAB", "irqlab"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--keep-trees")
    ap.add_argument("--check-only", action="store_true",
                    help="only run --check on OUT (its truth.json)")
    a = ap.parse_args()
    if a.hosts < 1 or a.hours < 1 or a.scale < 1:
        ap.error("--hosts, --hours and --scale must be at least 1")
    sizes = [int(c) for c in a.cpus.split(",")]
    if any(c < 1 or c > 8192 for c in sizes):
        ap.error("--cpus: CPU counts from 1 to 8192")
    out = os.path.abspath(a.out)
    if a.check_only:
        with open(os.path.join(out, "truth.json")) as f:
            return check(out, json.load(f), a.hours)
    os.makedirs(out, exist_ok=True)
    trees = a.keep_trees or tempfile.mkdtemp(prefix="fleet-trees-")
    truth = {}
    t = time.monotonic()
    try:
        for i in range(a.hosts):
            host, tr = record_host(a, i, sizes[i % len(sizes)], out, trees)
            truth[host] = tr
    finally:
        if not a.keep_trees:
            shutil.rmtree(trees, ignore_errors=True)
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(out)
               for n in ns if n.endswith(".parquet"))
    ids = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(out)
              for n in ns if n.startswith("irqs-"))
    print(f"fleet-dataset: {a.hosts} hosts x {a.hours} h in {time.monotonic() - t:.0f} s: "
          f"{size} bytes ({ids} of them IRQ identity), "
          f"{size / a.hosts / a.hours:.0f} bytes per host per hour")
    if a.check:
        return check(out, truth, a.hours)
    return 0


if __name__ == "__main__":
    sys.exit(main())
