#!/usr/bin/env python3
"""Load `irqlab serve` with concurrent scrapers and show that sampling does
not get dearer with the scrape rate.

    tools/serve-load.py [--irqlab BIN] [--root DIR] [--scrapers 50]
                        [--seconds 30] [--interval 1s] [--per-cpu all]

Starts one `irqlab serve` on a free loopback port (it stops by itself:
`--duration`), then runs two phases of `--seconds` each:

1. quiet: no scraper (one scrape at each end to read the counters);
2. load: `--scrapers` threads each scraping /metrics back to back (each
   thread stops at the deadline: the loop is bounded).

For each phase it prints irqlab's sampling CPU per sample (from its own
`irqlab_sampling_cpu_seconds_total` / `irqlab_samples_total`), its whole
process CPU (`/proc/PID/stat`), and for the load phase the scrapes, errors,
latency p50/p99, the peak resident memory (VmHWM) and the CPU per scrape
(the load phase's process CPU above the quiet phase's rate, / scrapes). Exits 1 on any
scrape error or when irqlab dies. Used for BENCHMARKS.md (issue 14).
"""

import argparse
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request

TICK = os.sysconf("SC_CLK_TCK")


def metric(body, name):
    m = re.search(rf"^{name}(?:{{[^}}]*}})? (\S+)$", body, re.M)
    return float(m.group(1)) if m else float("nan")


def scrape(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def counters(url, pid):
    body = scrape(url)
    return {
        "samples": metric(body, "irqlab_samples_total"),
        "sampling_s": metric(body, "irqlab_sampling_cpu_seconds_total"),
        "process_s": proc_cpu_s(pid),
        "t": time.monotonic(),
    }


def per_sample(a, b):
    n = b["samples"] - a["samples"]
    return {
        "samples": int(n),
        "sampling_cpu_ms_per_sample": 1000 * (b["sampling_s"] - a["sampling_s"]) / n if n else float("nan"),
        "process_cpu_pct": 100 * (b["process_s"] - a["process_s"]) / (b["t"] - a["t"]),
    }


def load(url, scrapers, seconds, pid):
    deadline = time.monotonic() + seconds
    lat, errors, lock = [], [], threading.Lock()
    peak = [0]

    def worker():
        mine = []
        while time.monotonic() < deadline:
            t0 = time.perf_counter()
            try:
                scrape(url)
                mine.append(time.perf_counter() - t0)
            except Exception as e:  # noqa: BLE001 - every failure counts
                with lock:
                    errors.append(repr(e))
        with lock:
            lat.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(scrapers)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        peak[0] = max(peak[0], vm(pid, "VmRSS"))
        time.sleep(0.2)
    for t in threads:
        t.join()
    lat.sort()
    q = lambda p: 1000 * lat[min(len(lat) - 1, int(p * len(lat)))] if lat else float("nan")
    return {
        "scrapes": len(lat),
        "scrapes_per_s": len(lat) / seconds,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "latency_ms_p50": q(0.50),
        "latency_ms_p99": q(0.99),
        "peak_rss_mb": peak[0] / 1e6,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--irqlab", default="target/release/irqlab")
    ap.add_argument("--root", default="/")
    ap.add_argument("--scrapers", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--interval", default="1s")
    ap.add_argument("--per-cpu", default="all")
    a = ap.parse_args()
    # a bound in case this script dies (it stops irqlab itself); a 128-MB
    # body at 1152 CPUs takes seconds per scrape, so be generous
    total = int(4 * a.seconds + 300)
    p = subprocess.Popen(
        [a.irqlab, "serve", "--root", a.root, "--listen", "127.0.0.1:0", "-i", a.interval,
         "--per-cpu", a.per_cpu, "--duration", f"{total}s"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        addr = None
        for line in p.stderr:
            m = re.search(r"serving http://([^/\s]+)/metrics", line)
            if m:
                addr = m.group(1)
                break
        if not addr:
            sys.exit("serve-load: irqlab serve did not start")
        threading.Thread(target=p.stderr.read, daemon=True).start()
        url = f"http://{addr}/metrics"
        time.sleep(2)  # past the first sample
        q0 = counters(url, p.pid)
        time.sleep(a.seconds)
        q1 = counters(url, p.pid)
        lo = load(url, a.scrapers, a.seconds, p.pid)
        q2 = counters(url, p.pid)
        if p.poll() is not None:
            sys.exit(f"serve-load: irqlab exited with {p.returncode}")
        quiet, loaded = per_sample(q0, q1), per_sample(q1, q2)
        body = scrape(url)
        series = metric(body, "irqlab_exposed_series")
        print(f"root {a.root}, --per-cpu {a.per_cpu}, -i {a.interval}, {int(series)} series, "
              f"{len(body)} bytes per scrape")
        print(f"quiet : {quiet['samples']} samples, sampling {quiet['sampling_cpu_ms_per_sample']:.3f} ms/sample, "
              f"process {quiet['process_cpu_pct']:.2f} % CPU")
        print(f"loaded: {loaded['samples']} samples, sampling {loaded['sampling_cpu_ms_per_sample']:.3f} ms/sample, "
              f"process {loaded['process_cpu_pct']:.2f} % CPU; {a.scrapers} scrapers: {lo['scrapes']} scrapes "
              f"({lo['scrapes_per_s']:.0f}/s), {lo['errors']} errors, latency p50 {lo['latency_ms_p50']:.2f} ms "
              f"p99 {lo['latency_ms_p99']:.2f} ms, peak RSS {lo['peak_rss_mb']:.1f} MB")
        # the CPU the scrapes added: the load phase's process CPU less what
        # the quiet phase burnt in as long a time
        extra_s = (q2["process_s"] - q1["process_s"]) - quiet["process_cpu_pct"] / 100 * (q2["t"] - q1["t"])
        if lo["scrapes"]:
            print(f"CPU per scrape: {1000 * extra_s / lo['scrapes']:.3f} ms "
                  f"(process CPU of the load phase above the quiet phase's rate, / scrapes)")
        ratio = loaded["sampling_cpu_ms_per_sample"] / quiet["sampling_cpu_ms_per_sample"]
        print(f"sampling CPU per sample, loaded / quiet: {ratio:.2f}")
        if lo["errors"]:
            sys.exit(f"serve-load: {lo['errors']} scrape errors, first: {lo['first_error']}")
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()
