#!/usr/bin/env python3
"""sample-cost-ab.py: the CPU of one cold `top --batch` sample, A against B.

    tools/sample-cost-ab.py [--procs 3] [-n 20] [--skip 3] [--reps 6]
        [-i 1s] [--root DIR] [--env-a K=V]... [--env-b K=V]... A_BIN B_BIN

Starts --procs processes of each side at once, `BIN top --batch --format
json -i I -n N [--root DIR]`, alternately and evenly spaced over one
interval, so that each wakes alone in its own part of every interval and
a change of load hits both sides alike; then does it again, the side
started first alternating (--reps repetitions in all; the defaults take
about two minutes). Each json line's own
`self_cost.cpu_ns` (the sampling thread's CPU from one line to the next:
wake-up, reads, parse, delta, line and its write) is one sample; the
first --skip lines of every process (start-up, the first cold pass) are
left out. A and B may be one binary run with two environments
(--env-a/--env-b), for a switch an experimental build reads.

Prints per side the median and mean over all samples and each process's
median, then the difference of the medians (B - A) with a 95 % interval
from a bootstrap within repetitions: in each, its processes are
resampled, then the samples of each (the samples of one process are a
cluster, not independent: on the project VM one process's median sits
anywhere in 230-290 us for its whole run, its neighbours' elsewhere),
and a verdict: "B dearer", "B cheaper" or "no difference resolved".
The load's drift from one repetition to the next moves both sides alike
and stays out of the interval. With the defaults the interval is about
+-7 us (+-3 %) there; it measures A against B, not either against the
floor (tools/observer-cost.sh does that).

Each process writes to a file of its own, never to a pipe: a pipe read
only after the run fills (64 KiB, ~9 json lines) and blocks the writer,
whose overdue samples then run back to back, warm (68-93 us a sample
against 240-286 us cold on the project VM). Exit status: 0 measured, 1 a
process failed (its stderr is printed), 2 bad usage.
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def fail(msg, code=2):
    print(f"sample-cost-ab.py: {msg}", file=sys.stderr)
    sys.exit(code)


def parse_interval(text):
    """Seconds of an irqlab duration (`1s`, `500ms`); exit 2 when not one."""
    for suffix, scale in (("ms", 1e-3), ("s", 1.0)):
        if text.endswith(suffix):
            try:
                v = float(text[: -len(suffix)]) * scale
            except ValueError:
                break
            if v > 0:
                return v
            break
    fail(f"-i {text!r}: expected a duration such as 1s or 500ms")


def env_of(pairs, flag):
    env = dict(os.environ)
    for kv in pairs:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            fail(f"{flag} {kv!r}: expected KEY=VALUE")
        env[k] = v
    return env


def costs(path, skip):
    """self_cost.cpu_ns of every line after the first `skip`, in µs."""
    out = []
    with open(path, "rb") as f:
        for i, line in enumerate(f):
            if i < skip:
                continue
            try:
                cost = (json.loads(line).get("self_cost") or {}).get("cpu_ns")
            except (ValueError, AttributeError):
                fail(f"{path}:{i + 1}: expected a json object per line", 1)
            if isinstance(cost, (int, float)):
                out.append(cost / 1000)
    return out


def run_rep(sides, args, interval, tmp, rep, procs_alive):
    """One repetition: every process started, waited for; per side a list
    of per-process sample lists."""
    order = sides if rep % 2 == 0 else sides[::-1]
    slot = interval / (2 * args.procs)
    started = []
    for k in range(args.procs):
        for name, binary, env in order:
            cmd = [binary, "top", "--batch", "--format", "json", "-i", args.i, "-n", str(args.n)]
            if args.root:
                cmd += ["--root", args.root]
            out = os.path.join(tmp, f"{rep}-{name}-{k}.out")
            err = os.path.join(tmp, f"{rep}-{name}-{k}.err")
            with open(out, "wb") as o, open(err, "wb") as e:
                p = subprocess.Popen(cmd, stdout=o, stderr=e, stdin=subprocess.DEVNULL, env=env)
            procs_alive.append(p)
            started.append((name, p, out, err, cmd))
            time.sleep(slot)
    res = {name: [] for name, _, _ in sides}
    for name, p, out, err, cmd in started:
        if p.wait() != 0:
            with open(err, "rb") as e:
                tail = e.read()[-2000:].decode(errors="replace")
            fail(f"{' '.join(cmd)} exited with {p.returncode}:\n{tail}", 1)
        procs_alive.remove(p)
        res[name].append(costs(out, args.skip))
    return res


def pooled_median(blocks):
    """Median of every sample of every process of every block."""
    return statistics.median([v for procs in blocks for p in procs for v in p])


def bootstrap(a, b, draws, rng):
    """95 % interval of median(B) - median(A): in each repetition (a
    block: both sides ran in it, under the same load), its processes are
    resampled, then the samples of each. Load that drifts from one
    repetition to the next moves both sides alike and stays out of the
    interval; the spread between processes of one repetition and between
    samples of one process stays in."""
    def resample(blocks):
        out = []
        for procs in blocks:
            picked = [rng.choice(procs) for _ in procs]
            out.append([[rng.choice(p) for _ in p] for p in picked])
        return out
    diffs = sorted(pooled_median(resample(b)) - pooled_median(resample(a)) for _ in range(draws))
    return diffs[int(0.025 * draws)], diffs[int(0.975 * draws) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", metavar="A_BIN")
    ap.add_argument("b", metavar="B_BIN")
    ap.add_argument("--procs", type=int, default=3, help="processes of each side at once")
    ap.add_argument("-n", type=int, default=20, help="samples (json lines) per process")
    ap.add_argument("--skip", type=int, default=3, help="first lines of each process left out")
    ap.add_argument("--reps", type=int, default=6, help="repetitions, the side started first alternating")
    ap.add_argument("-i", default="1s", help="interval between samples (default 1s: cold)")
    ap.add_argument("--root", help="a fake tree to sample instead of /")
    ap.add_argument("--env-a", action="append", default=[], metavar="K=V",
                    help="set in side A's environment (repeatable)")
    ap.add_argument("--env-b", action="append", default=[], metavar="K=V",
                    help="set in side B's environment (repeatable)")
    ap.add_argument("--seed", type=int, default=1, help="of the bootstrap")
    args = ap.parse_args()
    if args.procs < 1 or args.reps < 1 or args.n <= args.skip + 1 or args.skip < 0:
        fail("expected --procs >= 1, --reps >= 1, --skip >= 0 and -n > --skip + 1")
    for b in (args.a, args.b):
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            fail(f"{b}: not an executable file")
    interval = parse_interval(args.i)
    sides = [("A", args.a, env_of(args.env_a, "--env-a")), ("B", args.b, env_of(args.env_b, "--env-b"))]
    alive = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        with tempfile.TemporaryDirectory(prefix="sample-cost-ab.") as tmp:
            blocks = {"A": [], "B": []}
            for rep in range(args.reps):
                for name, g in run_rep(sides, args, interval, tmp, rep, alive).items():
                    blocks[name].append(g)
    finally:
        for p in alive:
            p.kill()
            p.wait()
    for name in ("A", "B"):
        if not all(p for procs in blocks[name] for p in procs):
            fail(f"side {name}: a process gave no self_cost after its first {args.skip} lines "
                 "(is it `irqlab top --batch --format json`?)")
    for name, binary in (("A", args.a), ("B", args.b)):
        g = blocks[name]
        allv = [v for procs in g for p in procs for v in p]
        per = " | ".join(" ".join(f"{statistics.median(p):.1f}" for p in procs) for procs in g)
        print(f"{name} {binary}: median {statistics.median(allv):.1f} us, mean "
              f"{statistics.mean(allv):.1f} us, {len(allv)} samples; per process, "
              f"repetitions apart: {per}")
    ma, mb = pooled_median(blocks["A"]), pooled_median(blocks["B"])
    lo, hi = bootstrap(blocks["A"], blocks["B"], 2000, random.Random(args.seed))
    verdict = "B dearer" if lo > 0 else "B cheaper" if hi < 0 else "no difference resolved"
    print(f"B - A: {mb - ma:+.1f} us ({100 * (mb - ma) / ma:+.1f} %), 95 % interval "
          f"{lo:+.1f} .. {hi:+.1f} us: {verdict}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
