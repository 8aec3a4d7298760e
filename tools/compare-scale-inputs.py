#!/usr/bin/env python3
"""Inputs of the end-to-end `irqlab compare` timings in BENCHMARKS.md
("`irqlab compare` at scale"): a.txt and b.txt (100 000 numbers each,
normal, CV 2 %, b +1 %) and bench20.csv (20 metrics x 10 variants x 30
trials, one CSV with variant and trial columns). Seeded: the same files on
every run. Usage: tools/compare-scale-inputs.py DIR
"""
import os
import random
import sys


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    rng = random.Random(7)
    for name, centre in (("a", 1000.0), ("b", 1010.0)):
        with open(os.path.join(out, f"{name}.txt"), "w", encoding="ascii") as f:
            f.writelines(f"{rng.gauss(centre, 0.02 * centre):.6f}\n" for _ in range(100_000))
    metrics = [f"m{m}_ns" for m in range(20)]
    with open(os.path.join(out, "bench20.csv"), "w", encoding="ascii") as f:
        f.write("variant,trial," + ",".join(metrics) + "\n")
        for v in range(10):
            for t in range(30):
                row = [f"{(1000.0 + v) * (1 + m) * (1 + 0.02 * rng.gauss(0, 1)):.4f}" for m in range(20)]
                f.write(f"v{v},{t}," + ",".join(row) + "\n")


if __name__ == "__main__":
    main()
