#!/usr/bin/env bash
# observer-cost.sh: the side-by-side measurements behind issue 13's targets
# (BENCHMARKS.md), interleaved over ROUNDS rounds so that a load change
# hits every contender alike, each figure a ratio to a baseline measured
# in the same round, printed as min–max (and median) over the rounds.
#
#   1. `irqlab show` on a 1152-CPU × 1056-IRQ synth tree against `cat` of
#      its proc/interrupts: `--irq '^NMI$' --format json`, `--format json`,
#      `--format table` (CPU of each process alone, from wait4's rusage;
#      best of REPS runs per round), and peak RSS of `show` and
#      `show --interval` against the file size (ru_maxrss).
#   2. `irqlab top --batch -i 1s -n N` (json and text) against
#      `mpstat -I ALL 1 N`, run concurrently (user + system CPU of each).
#   3. The user/kernel split of `top --batch --format json -i 10ms -n 2000`
#      on the live /proc: from perf (`perf record -e cpu-clock`, share of
#      samples in kernel code) when perf works, always from rusage
#      (utime / stime): irqlab's user CPU per sample over the kernel's.
#
# Usage: tools/observer-cost.sh [ROUNDS]        (default 7)
# Env:   IRQLAB=path/to/irqlab (default target/release/irqlab, built if missing)
#        N=30      top/mpstat intervals per round (each round takes 2 × N s)
#        REPS=5    runs of each show/cat case per round (the best counts)
#        TREE=dir  an existing `irqlab synth` tree (else one is made in a
#                  temporary directory, removed at exit)
#        SKIP_MPSTAT=1  skip part 2; SKIP_PERF=1 skip part 3
# Needs python3. Installs sysstat with apt-get when mpstat is missing
# (needs root). Run it on a quiet machine: other load distorts every ratio.
set -euo pipefail

rounds=${1:-7}
top=$(cd "$(dirname "$0")/.." && pwd)
irqlab=${IRQLAB:-$top/target/release/irqlab}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v python3 >/dev/null 2>&1 || { echo "observer-cost.sh: needs python3" >&2; exit 1; }
if [ "${SKIP_MPSTAT:-0}" != 1 ] && ! command -v mpstat >/dev/null 2>&1; then
    echo "mpstat missing: installing sysstat" >&2
    apt-get install -y sysstat >/dev/null 2>&1 ||
        { apt-get update >/dev/null && apt-get install -y sysstat >/dev/null; }
fi
if [ ! -x "$irqlab" ]; then
    echo "building $irqlab" >&2
    (cd "$top" && cargo build --release -p irqlab >&2)
fi
tree=${TREE:-$tmp/tree}
if [ ! -f "$tree/proc/interrupts" ]; then
    "$irqlab" synth --cpus 1152 --irqs 1056 --out "$tree" >/dev/null
fi
perf_ok=0
if [ "${SKIP_PERF:-0}" != 1 ] && command -v perf >/dev/null 2>&1 &&
    perf record -q -e cpu-clock -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
    perf_ok=1
fi

exec python3 - "$irqlab" "$tree" "$tmp" "$rounds" "${N:-30}" "${REPS:-5}" \
    "${SKIP_MPSTAT:-0}" "${SKIP_PERF:-0}" "$perf_ok" <<'PY'
import os, re, statistics, subprocess, sys

irqlab, tree, tmp = sys.argv[1:4]
rounds, n, reps = (int(x) for x in sys.argv[4:7])
skip_mpstat, skip_perf, perf_ok = (x == "1" for x in sys.argv[7:10])
env = dict(os.environ, LC_ALL="C")
size = os.path.getsize(f"{tree}/proc/interrupts")

def run(cmd, out=os.devnull):
    """CPU seconds (user, system) and peak RSS (KiB) of one process."""
    with open(out, "wb") as f:
        p = subprocess.Popen(cmd, stdout=f, stdin=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"observer-cost.sh: {' '.join(cmd)} failed")
    return ru.ru_utime, ru.ru_stime, ru.ru_maxrss

def best(cmd):
    return min(sum(run(cmd)[:2]) for _ in range(reps))

def together(a, b):
    """Run two commands at once: user + system CPU seconds of each."""
    procs = []
    for i, cmd in enumerate((a, b)):
        with open(f"{tmp}/out{i}", "wb") as f:
            procs.append(subprocess.Popen(cmd, stdout=f, stdin=subprocess.DEVNULL, env=env))
    cost = []
    for p in procs:
        _, status, ru = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"observer-cost.sh: {' '.join(p.args)} failed")
        cost.append(ru.ru_utime + ru.ru_stime)
    return cost

def perf_kernel_share(cmd):
    """Share of cpu-clock samples in kernel code (0..1), or None."""
    data = f"{tmp}/perf.data"
    r = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", data, "--"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    if r.returncode != 0:
        return None
    rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "dso"],
                         capture_output=True, text=True, env=env).stdout
    total = kernel = 0.0
    for line in rep.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S.*)$", line)
        if m:
            total += float(m.group(1))
            if "kernel" in m.group(2) or m.group(2).startswith("[k"):
                kernel += float(m.group(1))
    return kernel / total if total else None

show = [irqlab, "show", "--root", tree]
cases = {
    "show --irq '^NMI$' --format json / cat": show + ["--irq", "^NMI$", "--format", "json"],
    "show --format json / cat": show + ["--format", "json"],
    "show --format table / cat": show + ["--format", "table"],
}
cat = ["cat", f"{tree}/proc/interrupts"]
res = {}
def add(key, v):
    res.setdefault(key, []).append(v)

for r in range(1, rounds + 1):
    print(f"round {r}/{rounds}", file=sys.stderr)
    for name, cmd in cases.items():
        c = best(cat)
        add(name, best(cmd) / max(c, 1e-6))
    table, js = best(cases["show --format table / cat"]), best(cases["show --format json / cat"])
    add("show table / show json", table / max(js, 1e-6))
    add("show json peak RSS / file size", run(show + ["--format", "json"])[2] * 1024 / size)
    add("show -i 100ms json peak RSS / file size",
        run(show + ["-i", "100ms", "--format", "json"])[2] * 1024 / size)
    add("show -i 100ms table peak RSS / file size", run(show + ["-i", "100ms"])[2] * 1024 / size)
    if not skip_mpstat:
        for fmt in ("json", "text"):
            i, m = together([irqlab, "top", "--batch", "--format", fmt, "-i", "1s", "-n", str(n)],
                            ["mpstat", "-I", "ALL", "1", str(n)])
            add(f"top --batch --format {fmt} -i 1s -n {n} / mpstat -I ALL 1 {n}", i / max(m, 1e-6))
    if not skip_perf:
        samples = 2000
        cmd = [irqlab, "top", "--batch", "--format", "json", "-i", "10ms", "-n", str(samples)]
        u, s, _ = run(cmd)
        add("top --batch json -i 10ms: user CPU per sample (us), rusage", u / samples * 1e6)
        add("top --batch json -i 10ms: user / system CPU, rusage", u / max(s, 1e-6))
        if perf_ok:
            k = perf_kernel_share(cmd)
            if k is not None:
                add("top --batch json -i 10ms: user / kernel samples, perf", (1 - k) / max(k, 1e-6))

print(f"\n{rounds} rounds, {os.cpu_count()} CPUs, proc/interrupts of the synth tree: {size} bytes")
print(f"{'measurement':<66} {'min':>8} {'max':>8} {'median':>8}")
for key, v in res.items():
    print(f"{key:<66} {min(v):8.3f} {max(v):8.3f} {statistics.median(v):8.3f}")
if not perf_ok and not skip_perf:
    print("perf: not available (or not permitted): user/kernel split from rusage only")
PY
