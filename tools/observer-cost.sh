#!/usr/bin/env bash
# observer-cost.sh: the side-by-side measurements behind the observer-cost targets
# (BENCHMARKS.md), interleaved over ROUNDS rounds so that a load change
# hits every contender alike, each figure a ratio to a baseline measured
# in the same round, printed as min–max (and median) over the rounds.
#
#   1. `irqlab show` on a 1152-CPU × 1056-IRQ synth tree against `cat` of
#      its proc/interrupts: `--irq '^NMI$' --format json`, `--format json`,
#      `--format json --affinity` (a reference: every numbered row's
#      affinity file read), `--format table` (CPU of each process alone,
#      from wait4's rusage; best of REPS runs per round), and peak RSS of
#      `show` and `show --interval` against the file size (/usr/bin/time's
#      %M). Beside them the show floors, tools/show-floor.c (needs cc):
#      the three files read to their end and a write of show json's size,
#      and with `--affinity` also the affinity file of every numbered row
#      opened and read as show does. Each is what any show json of the
#      tree pays in the kernel and at start, so show json / show floor is
#      the part show's own code decides, and the affinity floor / cat says
#      how far above `cat` the affinity reads alone put every show json
#      --affinity on this machine.
#   2. Per-sample and fixed CPU of the live samplers against the floor
#      and mpstat: in every round, all running, each taking HI samples at
#      1 s: `top --batch --format json`, `top --batch --format text`,
#      `top --batch --format json --affinity` (its fixed cost a
#      reference, not a target: the affinity reads mpstat does not make),
#      `record -i 1s`, `serve -i 1s` (its /metrics scraped every SCRAPE
#      s), `mpstat -I ALL 1` and the floor
#      process tools/observer-floor.c given the files irqlab reads per
#      sample, read as irqlab reads them (/proc/interrupts to a read of 0
#      bytes, /proc/softirqs, /proc/stat, the schedstat of every
#      ksoftirqd/N and irq/N-name thread each sample and its stat every
#      10th, the thread CPU clock and getrusage) and a line of json's
#      size; beside them, as a reference and not one of the targets, the
#      json floor, tools/json-floor.c, given the same files: the leanest
#      real json writer (parse, deltas, rates, the line), so that json
#      floor / floor is what doing the work costs any writer and top json
#      / json floor what irqlab pays beyond that. They start one slot
#      (0.8 s / contenders) apart, in an order rotated every round, so
#      that each wakes alone in its own part of every second. Per
#      sample = the CPU of the process's threads (schedstat, read by
#      this script once a second in the 0.2 s left empty, 0.1 s before
#      the first contender's wake-up) from the poll after its LO-th sample to
#      the last poll before exit (after its HI - 2-th), over the samples
#      in between, as issue 26 defines it (the
#      difference of a HI- and a LO-sample run) without the noise of
#      separate runs: no start or exit cost in it, nor what a process's
#      first samples do once (json's first frame builds each row's cached
#      JSON; with --affinity it reads every numbered row's affinity file
#      and its second closes those files). It is printed as a ratio to the floor's per
#      sample; fixed = whole-process CPU (user + system from wait4) - HI
#      x per sample (start, baseline, the first samples' one-off work,
#      exit), as a ratio to mpstat's fixed cost. Beside it, for
#      reference and not a target, the figure issue 26 first called fixed:
#      the CPU of a whole LO-sample run (whole - (HI - LO) x per sample),
#      which also holds LO samples at each one's own per-sample cost.
#      Every round is printed. Last, each of issue 26's targets (per
#      sample / floor <= 1.25, top's fixed / mpstat's <= 1, show NMI / cat
#      <= 2, show json / cat <= 5) with its median's distribution-free
#      95 % interval over the rounds (order statistics; 6 rounds or more):
#      "met" or "missed" only when the whole interval is on one side.
#      Once per run (when strace is there):
#      syscalls per sample of json, text and the floor, from `strace -c
#      -f` of a LO- and a HI-sample run at 10 ms, and each syscall json
#      and text make per sample beyond the floor's.
#   3. The user/kernel split of `top --batch --format json -i 10ms -n 2000`
#      on the live /proc: from perf (`perf record -e cpu-clock -F 10000`,
#      samples in user vs kernel code) when perf works, and from rusage
#      (utime / stime; tick-based on many kernels: coarse): irqlab's user
#      CPU per sample over the kernel's (target: <= 0.1), and over the
#      kernel's cost of generating the files alone (part 4's probe at the
#      same 10-ms pace).
#   4. Where the 0.3x target's floor is: the kernel's cost of generating
#      /proc/interrupts, /proc/softirqs, /proc/stat (CPU time of each
#      pread on a kept descriptor, CLOCK_THREAD_CPUTIME_ID around the
#      call minus the same call on /dev/null, paced at 1 s like top and
#      mpstat: caches are cold then, and at 10 ms), the CPU of starting and ending a trivial dynamically
#      linked process (`/bin/true`: exec, ld.so, exit), and perf's
#      user/kernel split of both `top --batch -i 1s -n 30` and `mpstat -I
#      ALL 1 30` run concurrently under perf. floor = /bin/true + 30 x the
#      1-s generation cost of the three files: what any reader of those
#      files once a second pays; floor / mpstat above 0.3 means the target
#      cannot be met by reading them (both read the same files).
# Usage: tools/observer-cost.sh [ROUNDS]        (default 7)
# Env:   IRQLAB=path/to/irqlab (default target/release/irqlab, built if missing)
#        HI=35     samples per process in part 2 (a round takes HI + 1 s);
#        COPIES=3  processes of each contender per round in part 2, their
#                  slots interleaved (all contenders, then all again);
#                  a contender's per-sample and fixed CPU in a round are
#                  the median over its copies. One process's per-sample
#                  CPU keeps to its own level for its whole run (on the
#                  project VM anywhere in 230-290 us for one json top:
#                  tools/sample-cost-ab.py), so a round of one copy each
#                  compares one draw of each. An irqlab process woken 37
#                  or 167 ms after another was not found cheaper
#                  (BENCHMARKS.md, session 31)
#        LO=5      with HI, the sample counts of the strace runs; and
#                  the samples each process takes in part 2 before its
#                  per-sample CPU is counted (HI >= LO + 3)
#        REPS=5    runs of each show/cat case per round (the best counts)
#        SCRAPE=15 part 2 scrapes serve's /metrics every SCRAPE s, as a
#                  Prometheus would (its CPU is in serve's per sample);
#                  0: never
#        TREE=dir  an existing `irqlab synth` tree (else one is made in a
#                  temporary directory, removed at exit)
#        BASE=path/to/another/irqlab  part 2 also runs its json top and
#                  its record (named "base: ..."), in the same rounds:
#                  a before/after of two builds under the same load
#        SKIP_MPSTAT=1  skip part 2; SKIP_PERF=1 skip part 3;
#        SKIP_SHOW=1    skip part 1 (no synth tree is made);
#        SKIP_FLOOR=1   skip part 4 (40 s per round: 10 s probe + 30 s perf)
# Needs python3. Installs sysstat with apt-get when mpstat is missing
# (needs root). Run it on a quiet machine: other load distorts every ratio.
set -euo pipefail

rounds=${1:-7}
top=$(cd "$(dirname "$0")/.." && pwd)
irqlab=${IRQLAB:-$top/target/release/irqlab}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v python3 >/dev/null 2>&1 || { echo "observer-cost.sh: needs python3" >&2; exit 1; }
[[ ${COPIES:-3} =~ ^[1-9][0-9]*$ ]] ||
    { echo "observer-cost.sh: COPIES=${COPIES}: expected a whole number of 1 or more" >&2; exit 2; }
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
if [ "${SKIP_SHOW:-0}" != 1 ] && [ ! -f "$tree/proc/interrupts" ]; then
    "$irqlab" synth --ncpus 1152 --irqs 1056 --out "$tree" >/dev/null
fi
floor=""
if [ "${SKIP_MPSTAT:-0}" != 1 ] && command -v cc >/dev/null 2>&1 &&
    cc -O2 -o "$tmp/observer-floor" "$top/tools/observer-floor.c" 2>/dev/null; then
    floor=$tmp/observer-floor
fi
json_floor=""
if [ -n "$floor" ] && cc -O2 -o "$tmp/json-floor" "$top/tools/json-floor.c" 2>/dev/null; then
    json_floor=$tmp/json-floor
fi
show_floor=""
if [ "${SKIP_SHOW:-0}" != 1 ] && command -v cc >/dev/null 2>&1 &&
    cc -O2 -o "$tmp/show-floor" "$top/tools/show-floor.c" 2>/dev/null; then
    show_floor=$tmp/show-floor
fi
perf_ok=0
if [ "${SKIP_PERF:-0}" != 1 ] && command -v perf >/dev/null 2>&1 &&
    perf record -q -e cpu-clock -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
    perf_ok=1
fi

python3 - "$irqlab" "$tree" "$tmp" "$rounds" "${LO:-5}" "${HI:-35}" "${REPS:-5}" \
    "${SKIP_MPSTAT:-0}" "${SKIP_PERF:-0}" "$perf_ok" "${SKIP_FLOOR:-0}" "${SKIP_SHOW:-0}" "$floor" \
    "${SCRAPE:-15}" "${BASE:-}" "$show_floor" "$json_floor" "${COPIES:-3}" <<'PY'
import math, os, re, shlex, shutil, statistics, subprocess, sys, tempfile, time, urllib.request

irqlab, tree, tmp = sys.argv[1:4]
base, show_floor_bin, json_floor_bin = sys.argv[15:18]
rounds, lo, hi, reps = (int(x) for x in sys.argv[4:8])
skip_mpstat, skip_perf, perf_ok, skip_floor, skip_show = (x == "1" for x in sys.argv[8:13])
floor_bin = sys.argv[13]
scrape_every = int(sys.argv[14])
copies = int(sys.argv[18])
if not 0 < lo or hi < lo + 3:
    sys.exit("observer-cost.sh: needs 0 < LO and LO + 3 <= HI")
env = dict(os.environ, LC_ALL="C")
size = 0 if skip_show else os.path.getsize(f"{tree}/proc/interrupts")

def run(cmd, out=os.devnull):
    """CPU seconds (user, system) and peak RSS (KiB) of one process."""
    with open(out, "wb") as f:
        p = subprocess.Popen(cmd, stdout=f, stdin=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"observer-cost.sh: {' '.join(cmd)} failed")
    return ru.ru_utime, ru.ru_stime, ru.ru_maxrss

def peak_rss(cmd):
    """Peak RSS (KiB) of cmd alone: through /usr/bin/time, since a child
    of this (large) Python process inherits its high-water mark across
    exec (ru_maxrss keeps the larger), which a small parent does not
    bring. NaN without /usr/bin/time."""
    if not os.access("/usr/bin/time", os.X_OK):
        return float("nan")
    with tempfile.NamedTemporaryFile() as t:
        run(["/usr/bin/time", "-f", "%M", "-o", t.name] + cmd)
        return float(open(t.name).read().split()[-1])

def best(cmd):
    return min(sum(run(cmd)[:2]) for _ in range(reps))

def task_cpu_ns(pid):
    """CPU (ns) of every live thread of pid so far: the first field of
    each /proc/PID/task/TID/schedstat (sum_exec_runtime, exact for a
    sleeping thread), and the thread count."""
    total, n = 0, 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                total += int(f.read().split()[0])
            n += 1
        except (OSError, ValueError, IndexError):
            return None
    return total, n

def scrape(i):
    """GET /metrics of the serve whose stderr is err{i} (its address is
    on the first line it prints)."""
    try:
        with open(f"{tmp}/err{i}") as e:
            m = re.search(r"http://([0-9.]+:[0-9]+)/metrics", e.read())
        if m:
            urllib.request.urlopen(f"http://{m.group(1)}/metrics", timeout=5).read()
    except OSError as e:
        print(f"observer-cost.sh: scrape failed: {e}", file=sys.stderr)

def paced(cmds, count, scraped=()):
    """Run commands that each take `count` samples at 1 s, started in
    turn one slot (0.8 s / len(cmds)) apart within the first 0.8 s of
    every second, so that each wakes alone in its own part of the second
    and none finds the kernel's paths warmed by another's reads just
    before.
    Once a second, 0.1 s before the first command's wake-ups (at least
    0.1 s + a slot after the last's: wake-ups are only ever late, and
    mpstat's drift later sample by sample, as it re-arms alarm(1) in its
    handler), read every command's thread CPU (schedstat): poll k (from
    0) comes after every command's k-th sample and before its (k + 1)-th,
    so the CPU between polls LO and m1 is that of samples LO + 1 .. m1 of
    every command, the first frames' one-off work and the exit outside
    it. Returns, per command, (per-sample CPU: that CPU over m1 - LO, m1
    the last poll (HI - 2) before any exit; whole-process CPU, user +
    system from wait4; thread counts changed while polling). A window
    whose first or last poll-to-poll CPU looks like 0 or 2 samples (a
    wake-up later than the margin) is said on stderr."""
    spread = 0.8
    slot = spread / len(cmds)
    procs, t0 = [], time.monotonic()
    for i, cmd in enumerate(cmds):
        while time.monotonic() < t0 + i * slot:
            time.sleep(min(0.002, max(t0 + i * slot - time.monotonic(), 0)))
        with open(f"{tmp}/out{i}", "wb") as f, open(f"{tmp}/err{i}", "wb") as e:
            procs.append(subprocess.Popen(cmd, stdout=f, stderr=e, stdin=subprocess.DEVNULL, env=env))
    polls = []
    for m in range(1, count):
        due = t0 + m - (1 - spread) / 2
        time.sleep(max(due - time.monotonic(), 0))
        polls.append([task_cpu_ns(p.pid) for p in procs])
        if scrape_every and m % scrape_every == 0:
            for i in scraped:
                scrape(i)
    out = []
    for i, p in enumerate(procs):
        _, status, ru = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"observer-cost.sh: {' '.join(p.args)} failed")
        # polls[k] comes after every command's k-th sample and before its
        # (k + 1)-th: the window from polls[LO] on, one sample between two
        seen = [(m, q[i]) for m, q in enumerate(polls) if m >= lo and q[i] is not None]
        if len(seen) < 2 or seen[0][0] != lo:
            sys.exit(f"observer-cost.sh: could not follow {' '.join(p.args)}'s CPU")
        (m0, first), (m1, last) = seen[0], seen[-1]
        d = [b[1][0] - a[1][0] for a, b in zip(seen, seen[1:]) if b[0] == a[0] + 1]
        if d and not all(0.5 < x / statistics.median(d) < 1.6 for x in (d[0], d[-1])):
            print(f"observer-cost.sh: {' '.join(p.args)}: window ends {d[0] / 1e3:.0f}, "
                  f"{d[-1] / 1e3:.0f} us vs median {statistics.median(d) / 1e3:.0f}: "
                  f"0 or 2 samples?", file=sys.stderr)
        per = (last[0] - first[0]) / 1e9 / (m1 - m0)
        out.append((per, ru.ru_utime + ru.ru_stime, len({n for _, (_, n) in seen}) > 1))
    return out

def perf_split(cmd):
    """CPU of `cmd` in user and in kernel code (seconds), from cpu-clock
    samples at 10 kHz (each 100 us), or None."""
    data = f"{tmp}/perf.data"
    # through sh: perf started directly by python3 recorded a tenth of the
    # samples on the development VM (1 of 10 ms per 10-ms sample)
    line = " ".join(shlex.quote(a) for a in ["perf", "record", "-q", "-e", "cpu-clock",
                                              "-F", "10000", "-o", data, "--"] + cmd)
    r = subprocess.run(["sh", "-c", line + " >/dev/null 2>&1"], env=env)
    if r.returncode != 0:
        return None
    out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,dso"],
                         capture_output=True, text=True, env=env).stdout.splitlines()
    kernel = sum(1 for l in out if "kernel" in l or "[k" in l)
    if not out or not kernel:
        return None
    return (len(out) - kernel) * 1e-4, kernel * 1e-4

STAT_FILES = ("/proc/interrupts", "/proc/softirqs", "/proc/stat")

def gen_cost(pace_s, reps):
    """Median CPU (us) the kernel spends generating each statistics file
    per read, one pread of each on kept descriptors every pace_s seconds:
    thread CPU clock around `os.preadv` into a preallocated buffer, minus
    the same call on /dev/null measured in the same wake-up (the
    interpreter's and the syscall's own cost; a first /dev/null call after
    the sleep warms the interpreter's path, not the kernel's files)."""
    fds = [os.open(f, os.O_RDONLY) for f in STAT_FILES]
    null = os.open("/dev/null", os.O_RDONLY)
    buf = bytearray(1 << 20)
    per = [[] for _ in fds]

    def timed(fd):
        t = time.thread_time_ns()
        while os.preadv(fd, [buf], 0) == len(buf):
            pass
        return time.thread_time_ns() - t

    try:
        for _ in range(reps):
            time.sleep(pace_s)
            timed(null)
            raw = [timed(fd) for fd in fds]
            base = min(timed(null) for _ in range(3))
            for i, t in enumerate(raw):
                per[i].append(max(t - base, 0) / 1e3)
    finally:
        for fd in fds + [null]:
            os.close(fd)
    return [statistics.median(v) for v in per]

def perf_pair(a, b):
    """perf user/kernel split (seconds) of two commands run concurrently."""
    procs = []
    for i, cmd in enumerate((a, b)):
        data = f"{tmp}/pair{i}.data"
        line = " ".join(shlex.quote(x) for x in ["perf", "record", "-q", "-e", "cpu-clock",
                                                  "-F", "10000", "-o", data, "--"] + cmd)
        procs.append((subprocess.Popen(["sh", "-c", line + " >/dev/null 2>&1"], env=env), data))
    out = []
    for p, data in procs:
        if p.wait() != 0:
            return None
        lines = subprocess.run(["perf", "script", "-i", data, "-F", "ip,dso"],
                               capture_output=True, text=True, env=env).stdout.splitlines()
        kernel = sum(1 for l in lines if "kernel" in l or "[k" in l)
        out.append(((len(lines) - kernel) * 1e-4, kernel * 1e-4))
    return out

def thread_files():
    """The files irqlab reads per sample for the interrupt threads it
    follows (threads.rs: ksoftirqd/N, irq/N-name), as observer-floor's
    FILE arguments: each thread's schedstat every sample and its stat
    every STAT_EVERY-th (10) sample."""
    out = []
    for pid in sorted(os.listdir("/proc"), key=lambda p: (len(p), p)):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if re.fullmatch(r"ksoftirqd/\d+|irq/\d+-.+", name):
            out += [f"/proc/{pid}/schedstat", f"10@/proc/{pid}/stat"]
    return out

def line_bytes():
    """Size of one `top --batch --format json` line here."""
    out = subprocess.run([irqlab, "top", "--batch", "--format", "json", "-i", "10ms", "-n", "1"],
                         capture_output=True, env=env, check=True).stdout
    return max(len(out), 1)

# read as irqlab reads them: /proc/interrupts until a read returns 0 (a
# seq_file iterator), the others with one read each
floor_files = ["+/proc/interrupts", "/proc/softirqs", "/proc/stat"] + thread_files()

def serve_cmd(count):
    return [irqlab, "serve", "--listen", "127.0.0.1:0", "-i", "1s", "--duration", f"{count}s"]

def record_cmd(count, binary=irqlab):
    out = tempfile.mkdtemp(dir=tmp)
    return [binary, "record", "-i", "1s", "-d", f"{count}s", "-o", out]

contenders = {
    "top --batch --format json": lambda c: [irqlab, "top", "--batch", "--format", "json", "-i", "1s", "-n", str(c)],
    "top --batch --format text": lambda c: [irqlab, "top", "--batch", "--format", "text", "-i", "1s", "-n", str(c)],
    "top --batch --format json --affinity":
        lambda c: [irqlab, "top", "--batch", "--format", "json", "--affinity", "-i", "1s", "-n", str(c)],
    "record -i 1s": record_cmd,
    "serve -i 1s": serve_cmd,
    "mpstat": lambda c: ["mpstat", "-I", "ALL", "1", str(c)],
}
if base:
    if not os.access(base, os.X_OK):
        sys.exit(f"observer-cost.sh: BASE={base} is not an executable")
    contenders["base: top --batch --format json"] = \
        lambda c: [base, "top", "--batch", "--format", "json", "-i", "1s", "-n", str(c)]
    contenders["base: record -i 1s"] = lambda c: record_cmd(c, base)
if floor_bin and not skip_mpstat:
    width = line_bytes()
    contenders["floor"] = lambda c: [floor_bin, "-c", "-w", str(width), str(c)] + floor_files
    if json_floor_bin:
        # a reference, not a target: the leanest real json writer
        contenders["json floor"] = \
            lambda c: [json_floor_bin, "-c", "-w", str(width), str(c)] + floor_files

def syscalls_per_sample(cmd_of):
    """Syscalls per sample (strace -c -f of a LO- and a HI-sample run), in
    all and by syscall name."""
    runs = []
    for count in (lo, hi):
        o = f"{tmp}/strace.txt"
        subprocess.run(["strace", "-f", "-c", "-o", o] + cmd_of(count), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=env, check=True)
        calls = {}
        with open(o) as f:
            for l in f:
                # % time, seconds, usecs/call, calls, [errors,] syscall
                p = l.split()
                if len(p) >= 5 and p[0][:1].isdigit() and p[-1] != "total":
                    calls[p[-1]] = int(p[3])
        runs.append(calls)
    names = set(runs[0]) | set(runs[1])
    return {n: (runs[1].get(n, 0) - runs[0].get(n, 0)) / (hi - lo) for n in names}

show = [irqlab, "show", "--root", tree]
cases = {
    "show --irq '^NMI$' --format json / cat": show + ["--irq", "^NMI$", "--format", "json"],
    "show --format json / cat": show + ["--format", "json"],
    "show --format json --affinity / cat (reference)": show + ["--format", "json", "--affinity"],
    "show --format table / cat": show + ["--format", "table"],
}
if show_floor_bin and not skip_show:
    # what any show json of this tree pays (tools/show-floor.c): the three
    # files read to their end and a write of the document's size; with
    # --affinity also each numbered row's affinity file
    with open(f"{tree}/proc/interrupts") as f:
        shown_irqs = [l.split(":", 1)[0].strip() for l in f.read().splitlines()[1:]]
    shown_irqs = [i for i in shown_irqs if i.isdigit()]
    def doc_bytes(*extra):
        return len(subprocess.run(show + ["--format", "json", *extra], capture_output=True,
                                  env=env, check=True).stdout)
    cases["show floor (tools/show-floor.c) / cat"] = \
        [show_floor_bin, "-w", str(doc_bytes()), tree]
    cases["show floor with affinity (tools/show-floor.c) / cat"] = \
        [show_floor_bin, "-w", str(doc_bytes("--affinity")), tree] + shown_irqs
cat = ["cat", f"{tree}/proc/interrupts"]
res = {}
def add(key, v):
    res.setdefault(key, []).append(v)

for r in range(1, rounds + 1):
    print(f"round {r}/{rounds}", file=sys.stderr)
    b = {}
    for name, cmd in ({} if skip_show else cases).items():
        c = best(cat)
        b[name] = best(cmd)
        add(name, b[name] / max(c, 1e-6))
    if not skip_show:
        js = b["show --format json / cat"]
        add("show table / show json", b["show --format table / cat"] / max(js, 1e-6))
        if show_floor_bin:
            add("show json / show floor (the part show's own code decides)",
                js / max(b["show floor (tools/show-floor.c) / cat"], 1e-6))
            add("show json --affinity / show floor with affinity",
                b["show --format json --affinity / cat (reference)"]
                / max(b["show floor with affinity (tools/show-floor.c) / cat"], 1e-6))
        add("show json peak RSS / file size", peak_rss(show + ["--format", "json"]) * 1024 / size)
        add("show -i 100ms json peak RSS / file size",
            peak_rss(show + ["-i", "100ms", "--format", "json"]) * 1024 / size)
        add("show -i 100ms table peak RSS / file size",
            peak_rss(show + ["-i", "100ms"]) * 1024 / size)
    if not skip_mpstat:
        per, fixed = {}, {}
        names = list(contenders)
        names = names[(r - 1) % len(names):] + names[:(r - 1) % len(names)]
        names = names * copies
        scraped = [i for i, n in enumerate(names) if n.startswith("serve")]
        pers, fixeds, lo_runs = {}, {}, {}
        for name, (p, whole, moved) in zip(names, paced([contenders[n](hi) for n in names], hi, scraped)):
            pers.setdefault(name, []).append(p)
            fixeds.setdefault(name, []).append(whole - hi * p)
            lo_runs.setdefault(name, []).append(whole - (hi - lo) * p)
            if moved:
                print(f"round {r}: {name} started or ended threads while followed", file=sys.stderr)
        per = {n: statistics.median(v) for n, v in pers.items()}
        fixed = {n: statistics.median(v) for n, v in fixeds.items()}
        lo_run = {n: statistics.median(v) for n, v in lo_runs.items()}
        for name in contenders:
            if name in ("floor", "mpstat", "json floor"):
                continue
            if "floor" in per:
                add(f"{name}: per-sample CPU / floor's (same files)", per[name] / max(per["floor"], 1e-9))
            add(f"{name}: fixed CPU / mpstat's", fixed[name] / max(fixed["mpstat"], 1e-9))
            add(f"{name}: {lo}-sample run / mpstat's (reference)",
                lo_run[name] / max(lo_run["mpstat"], 1e-9))
        for name in contenders:
            add(f"  {name}: per-sample CPU, ms", per[name] * 1e3)
        for name in contenders:
            add(f"  {name}: fixed CPU, ms", fixed[name] * 1e3)
        if "floor" in per:
            add("  mpstat: per-sample CPU / floor's", per["mpstat"] / max(per["floor"], 1e-9))
        if "json floor" in per:
            add("json floor: per sample / floor", per["json floor"] / max(per["floor"], 1e-9))
            add("top json per sample / json floor",
                per["top --batch --format json"] / max(per["json floor"], 1e-9))
    if not skip_floor:
        cold, hot = gen_cost(1.0, 10), gen_cost(0.01, 200)
        for f, c, h in zip(STAT_FILES, cold, hot):
            add(f"kernel generation of {f}, us per read, 1-s pace", c)
            add(f"kernel generation of {f}, us per read, 10-ms pace", h)
        true_ms = min(sum(run(["/bin/true"])[:2]) for _ in range(reps)) * 1e3
        add("/bin/true process, ms (exec + ld.so + exit)", true_ms)
        floor_ms = true_ms + 30 * sum(cold) / 1e3
        add("floor ms: /bin/true + 30 x generation of the 3 files (1-s pace)", floor_ms)
        gen_hot_us = sum(hot)
        if perf_ok:
            pair = perf_pair([irqlab, "top", "--batch", "--format", "json", "-i", "1s", "-n", "30"],
                             ["mpstat", "-I", "ALL", "1", "30"])
            if pair is not None:
                (iu, ik), (mu, mk) = pair
                add("perf, -n 30 json: irqlab user ms", iu * 1e3)
                add("perf, -n 30 json: irqlab kernel ms", ik * 1e3)
                add("perf, -n 30: mpstat user ms", mu * 1e3)
                add("perf, -n 30: mpstat kernel ms", mk * 1e3)
                add("floor / mpstat (perf user + kernel)", floor_ms / max((mu + mk) * 1e3, 1e-6))
    if not skip_perf:
        samples = 2000
        cmd = [irqlab, "top", "--batch", "--format", "json", "-i", "10ms", "-n", str(samples)]
        u, s, _ = run(cmd)
        add("top --batch json -i 10ms: user CPU per sample (us), rusage", u / samples * 1e6)
        add("top --batch json -i 10ms: user / system CPU, rusage", u / max(s, 1e-6))
        if perf_ok:
            split = perf_split(cmd)
            if split is not None:
                pu, pk = split
                add("top --batch json -i 10ms: user CPU per sample (us), perf", pu / samples * 1e6)
                add("top --batch json -i 10ms: kernel CPU per sample (us), perf", pk / samples * 1e6)
                add("top --batch json -i 10ms: user / kernel CPU, perf", pu / pk)
                if not skip_floor:
                    add("top --batch json -i 10ms: user per sample / generation of the 3 files (10-ms pace)",
                        pu / samples * 1e6 / max(gen_hot_us, 1e-6))

if not skip_mpstat and shutil.which("strace"):
    fast = {
        "top --batch --format json": lambda c: [irqlab, "top", "--batch", "--format", "json", "-i", "10ms", "-n", str(c)],
        "top --batch --format text": lambda c: [irqlab, "top", "--batch", "--format", "text", "-i", "10ms", "-n", str(c)],
    }
    if floor_bin:
        fast["floor"] = lambda c: [floor_bin, "-c", "-i", "10", "-w", str(width), str(c)] + floor_files
    by_name = {name: syscalls_per_sample(cmd_of) for name, cmd_of in fast.items()}
    for name, calls in by_name.items():
        add(f"syscalls per sample: {name}", sum(calls.values()))
    # each syscall irqlab makes per sample beyond the floor's
    base = by_name.get("floor", {})
    for name, calls in by_name.items():
        if name == "floor":
            continue
        for call, n in sorted(calls.items(), key=lambda kv: -kv[1]):
            extra = n - base.get(call, 0)
            if abs(extra) >= 0.05:
                add(f"  {name}: {call} per sample beyond the floor's", extra)
if not skip_mpstat:
    print(f"floor files ({len(floor_files)}): {' '.join(floor_files)}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

print(f"\n{rounds} rounds, {copies} cop{'y' if copies == 1 else 'ies'} of each part-2 contender a round, "
      f"{os.cpu_count()} CPUs, proc/interrupts of the synth tree: {size} bytes")
print(f"{'measurement':<78} {'min':>8} {'max':>8} {'median':>8}  every round")
for key, v in res.items():
    each = " ".join(f"{x:.3g}" for x in v)
    print(f"{key:<78} {min(v):8.3f} {max(v):8.3f} {statistics.median(v):8.3f}  {each}")
if not perf_ok and not skip_perf:
    print("perf: not available (or not permitted): user/kernel split from rusage only")

def median_ci(v, level=0.95):
    """Distribution-free interval of the median: the order statistics
    x(k) and x(n-k+1) for the largest k whose coverage, 1 - 2 P(B < k)
    with B ~ Binomial(n, 1/2), is at least `level`; with too few rounds
    for that, min and max. Returns (low, high, coverage)."""
    x, n = sorted(v), len(v)
    below = lambda k: sum(math.comb(n, i) for i in range(k)) / 2 ** n
    k = 1
    while k < (n + 1) // 2 and 1 - 2 * below(k + 1) >= level:
        k += 1
    return x[k - 1], x[n - k], 1 - 2 * below(k)

# issue 26's targets: per-sample ratios to the floor, top's fixed cost to
# mpstat's, show to cat; "met" only when the whole interval is within
targets = [(k, 1.25) for k in res if k.endswith("per-sample CPU / floor's (same files)")
           and not k.startswith("base: ")]
targets += [(f"top --batch --format {f}: fixed CPU / mpstat's", 1.0) for f in ("json", "text")]
targets += [("show --irq '^NMI$' --format json / cat", 2.0), ("show --format json / cat", 5.0)]
targets = [(k, t) for k, t in targets if len(res.get(k, [])) >= 2]
if targets:
    print(f"\ntargets: the median's distribution-free interval over the rounds")
    print(f"{'measurement':<78} {'target':>7} {'median':>8} {'interval':>15} {'cover':>6}  verdict")
    for key, t in targets:
        lo, hi, cover = median_ci(res[key])
        verdict = ("too few rounds (6 give a 95 % interval)" if cover < 0.95
                   else "met" if hi <= t else "missed" if lo > t else "not resolved (more rounds)")
        print(f"{key:<78} {t:7.2f} {statistics.median(res[key]):8.3f} "
              f"{lo:7.3f}-{hi:<7.3f} {cover:6.1%}  {verdict}")
PY
