#!/usr/bin/env python3
"""touched-lines.py: the memory a sampler touches per sample, counted exactly.

At a once-a-second pace every cache line and page a sample touches has
been evicted by the time the next sample runs, so what a sample costs
beyond its instructions is about one miss per distinct line (and one
TLB walk per distinct page). This VM has no hardware counters; valgrind's
lackey traces every load, store and instruction fetch instead, and this
script counts, per sample, the distinct 64-byte data lines, instruction
lines and 4-KiB pages touched. A sample starts at each entry of the
sampling loop's sleep (MARK, a function symbol of the binary). Figures
are medians over the samples between the third and the last.

Usage: tools/touched-lines.py [--mark SYMBOL] [--top N [--pages]] -- BINARY ARGS...
  e.g. tools/touched-lines.py --top 20 -- target/release/irqlab \\
           top --batch --format json -i 5ms -n 12
Needs valgrind and nm (binutils). The figures do not depend on load. The
binary must be position-dependent (a C tool: cc -no-pie).
"""
import argparse
import bisect
import collections
import statistics
import subprocess
import sys

DEFAULT_MARK = "irqlab::sampler::Stop::sleep_to"


def symbols(binary):
    """Sorted (address, demangled name) of the binary's functions."""
    out = subprocess.run(["nm", "-C", "--defined-only", binary],
                         capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
    return syms


def mark_address(syms, name):
    hits = [a for a, s in syms if s.split("::h")[0] == name or s == name]
    if not hits:
        sys.exit(f"touched-lines.py: no function {name!r} in the binary")
    return hits[0]


def refuse_pie(binary):
    """Exit unless `binary` is a position-dependent ELF executable: the
    marks and functions are placed by nm's addresses, which a PIE
    (ELF type DYN) is not loaded at."""
    try:
        with open(binary, "rb") as f:
            head = f.read(18)
    except OSError as e:
        sys.exit(f"touched-lines.py: {binary}: {e.strerror}")
    if head[:4] != b"\x7fELF":
        sys.exit(f"touched-lines.py: {binary} is not an ELF file")
    if int.from_bytes(head[16:18], "little") != 2:
        sys.exit(f"touched-lines.py: {binary} is position-independent (PIE); "
                 "build it with -no-pie (irqlab's build.rs links that way)")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mark", default=DEFAULT_MARK,
                    help="the function whose entries start a sample (default: %(default)s)")
    ap.add_argument("--top", type=int, default=0,
                    help="also list the N functions touching most data lines")
    ap.add_argument("--pages", action="store_true",
                    help="with --top, also list each code page touched and its functions")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- BINARY ARGS...")
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("give the command after --")
    refuse_pie(cmd[0])
    syms = symbols(cmd[0])
    mark = mark_address(syms, args.mark)
    samples = run(cmd, mark)
    mid = samples[3:-1]
    if len(mid) < 3:
        sys.exit(f"touched-lines.py: {len(samples)} samples marked; need at least 7")
    med = lambda f: statistics.median(f(s) for s in mid)
    dlines = med(lambda s: len(s[0]))
    ilines = med(lambda s: len(s[1]))
    pages = med(lambda s: len({l >> 6 for l in s[0]} | {l >> 6 for l in s[1]}))
    dpages = med(lambda s: len({l >> 6 for l in s[0]}))
    ipages = med(lambda s: len({l >> 6 for l in s[1]}))
    print(f"samples {len(mid)}  per sample: data lines {dlines:.0f} "
          f"({dlines * 64 / 1024:.1f} KiB)  instruction lines {ilines:.0f} "
          f"({ilines * 64 / 1024:.1f} KiB)  pages {pages:.0f} "
          f"(data {dpages:.0f}, code {ipages:.0f})")
    if args.top:
        addrs = [a for a, _ in syms]

        def name(a):
            i = bisect.bisect_right(addrs, a) - 1
            return syms[i][1].split("::h")[0][:100] if i >= 0 else "?"

        data, instr = mid[len(mid) // 2]
        print("data lines by the function touching them first (one sample):")
        for s, n in collections.Counter(name(a) for a in data.values()).most_common(args.top):
            print(f"  {n:5d}  {s}")
        print("instruction lines by function (one sample):")
        by_fn = collections.Counter(name(l << 6) for l in instr)
        for s, n in by_fn.most_common(args.top):
            print(f"  {n:5d}  {s}")
        if args.pages:
            print("code pages (one sample): lines touched, functions on it")
            per_page = collections.defaultdict(list)
            for l in sorted(instr):
                per_page[l >> 6].append(l)
            for pg, ls in sorted(per_page.items()):
                fns = collections.Counter(name(l << 6) for l in ls)
                print(f"  {pg << 12:#x} {len(ls):3d}  " +
                      ", ".join(f"{f} ({n})" for f, n in fns.most_common()))


def run(cmd, mark):
    import os
    r, w = os.pipe()
    proc = subprocess.Popen(
        ["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-fd=%d" % w] + cmd,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(w,))
    os.close(w)
    samples, data, instr, last = [], {}, set(), 0
    with os.fdopen(r, "r", buffering=1 << 20) as f:
        for line in f:
            kind = line[:2]
            if kind == "I ":
                a = int(line[3:line.index(",")], 16)
                if a == mark:
                    samples.append((data, instr))
                    data, instr = {}, set()
                last = a
                instr.add(a >> 6)
            elif kind in (" L", " S", " M"):
                a = int(line[3:line.index(",")], 16)
                data.setdefault(a >> 6, last)
    samples.append((data, instr))
    if proc.wait() != 0:
        sys.exit(f"touched-lines.py: the command exited with {proc.returncode}")
    return samples


if __name__ == "__main__":
    main()
