#!/usr/bin/env python3
"""Make the counters of an `irqlab synth` tree move, for benchmarks.

    tools/synth-mover.py TREE [--interval 1s] [--seconds 130] [--seed 1]
                              [--irq-share 0.25]

A synth tree's counters never change, so a recording of it holds one
sample's worth of cells. This rewrites, every interval, in place and
without changing any file's length (a reader keeping the file open with
pread, as irqlab does, sees the new counts; every read parses): in
proc/interrupts the LOC row on every CPU and one CPU of `--irq-share` of
the numbered rows; in proc/softirqs TIMER, RCU and SCHED on every CPU; in
proc/stat the user, system and idle fields of every cpu line and the
intr, ctxt and softirq totals. Increments are drawn from a seeded
generator (LOC ~250/s, devices ~1-200, softirqs ~20-300, ticks ~1-100 per
interval). A count whose digits would outgrow its field is left as is.
Stops by itself after --seconds (bounded). Prints one line at the end:
intervals done and cells written per interval.
"""
import argparse
import os
import random
import re
import sys
import time


def duration(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"expected e.g. 1s or 500ms, got {s!r}")
    return float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)


class Cells:
    """Byte spans of numbers in one file, rewritten in place."""

    def __init__(self, path):
        self.path = path
        self.fd = os.open(path, os.O_RDWR)
        self.text = os.pread(self.fd, os.fstat(self.fd).st_size, 0)
        self.spans = []  # (start, end, value, increment range)

    def numbers(self, line_start, line_end, first_token=1):
        """(start, end) of each number token of a line, after the label."""
        out = []
        for i, m in enumerate(re.finditer(rb"\S+", self.text[line_start:line_end])):
            if i >= first_token and m.group().isdigit():
                out.append((line_start + m.start(), line_start + m.end()))
        return out

    def add(self, span, width, inc):
        """A number ending at span's end; width > its digits: a right-aligned
        column that may grow to the left (proc/interrupts, proc/softirqs),
        else the digit count must stay (proc/stat)."""
        start, end = span
        value = int(self.text[start:end])
        self.spans.append([end - max(width, end - start), end, value, inc, width > end - start])

    def step(self, rng):
        for s in self.spans:
            start, end, value, (lo, hi), aligned = s
            new = value + rng.randint(lo, hi)
            text = str(new).encode()
            width = end - start
            if len(text) > width or (not aligned and len(text) != width):
                continue
            os.pwrite(self.fd, text.rjust(width), start)
            s[2] = new


def lines(text):
    pos = 0
    for line in text.split(b"\n"):
        yield pos, pos + len(line), line
        pos += len(line) + 1


def interrupts(tree, rng, share):
    c = Cells(os.path.join(tree, "proc/interrupts"))
    for start, end, line in lines(c.text):
        label = line.split(b":", 1)[0].strip()
        nums = c.numbers(start, end)
        if not nums or b":" not in line:
            continue
        if label == b"LOC":
            for sp in nums:
                c.add(sp, 10, (200, 300))
        elif label.isdigit() and rng.random() < share:
            c.add(nums[rng.randrange(len(nums))], 10, (1, 200))
    return c


def softirqs(tree):
    c = Cells(os.path.join(tree, "proc/softirqs"))
    for start, end, line in lines(c.text):
        if line.strip().split(b":")[0] in (b"TIMER", b"RCU", b"SCHED"):
            for sp in c.numbers(start, end):
                c.add(sp, 10, (20, 300))
    return c


def stat(tree):
    c = Cells(os.path.join(tree, "proc/stat"))
    for start, end, line in lines(c.text):
        head = line.split(b" ", 1)[0]
        nums = c.numbers(start, end)
        if head.startswith(b"cpu"):
            for field in (0, 2, 3):  # user, system, idle
                if field < len(nums):
                    s, e = nums[field]
                    c.add((s, e), e - s, (1, 100))
        elif head in (b"intr", b"ctxt", b"softirq") and nums:
            s, e = nums[0]
            c.add((s, e), e - s, (100, 100000))
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree")
    ap.add_argument("--interval", type=duration, default=1.0)
    ap.add_argument("--seconds", type=float, default=130)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--irq-share", type=float, default=0.25)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    files = [interrupts(a.tree, rng, a.irq_share), softirqs(a.tree), stat(a.tree)]
    cells = sum(len(f.spans) for f in files)
    end = time.monotonic() + a.seconds
    n = 0
    next_at = time.monotonic()
    while True:
        next_at += a.interval
        if next_at > end:
            break
        time.sleep(max(0.0, next_at - time.monotonic()))
        for f in files:
            f.step(rng)
        n += 1
    print(f"synth-mover: {n} intervals, {cells} cells moved per interval", file=sys.stderr)


if __name__ == "__main__":
    main()
