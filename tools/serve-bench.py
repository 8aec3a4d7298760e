#!/usr/bin/env python3
"""Scrape an exporter N times and print the median scrape time, the bytes
on the wire and the exporter's peak RSS (VmHWM of PID).

    tools/serve-bench.py URL PID [N] [gzip]

A scrape is timed from connect to the last body byte; `gzip` sends
`Accept-Encoding: gzip` (the bytes are then the compressed ones). Scrapes
are 1.5 s apart, so each one of `serve`'s default mode gets its own read.
"""
import http.client
import statistics
import sys
import time
import urllib.parse


def scrape(url, gzip):
    u = urllib.parse.urlparse(url)
    t = time.monotonic()
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    headers = {"Accept-Encoding": "gzip"} if gzip else {}
    c.request("GET", u.path or "/metrics", headers=headers)
    r = c.getresponse()
    body = r.read()
    dt = time.monotonic() - t
    c.close()
    return dt, len(body), r.getheader("Content-Encoding") or "identity"


def hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    url, pid = sys.argv[1], int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    gzip = len(sys.argv) > 4 and sys.argv[4] == "gzip"
    runs = []
    for _ in range(n):
        runs.append(scrape(url, gzip))
        time.sleep(1.5)
    times = [r[0] for r in runs]
    print(
        f"scrapes={n} median_s={statistics.median(times):.3f} "
        f"min_s={min(times):.3f} max_s={max(times):.3f} "
        f"bytes={runs[-1][1]} encoding={runs[-1][2]} peak_rss_mb={hwm(pid) / 2**20:.0f}"
    )


if __name__ == "__main__":
    main()
