#!/usr/bin/env bash
# Fault cases for `irqlab serve` (loopback only, 127.0.0.1): slowloris
# (slow request heads), idle connections, over-long heads, garbage, 1 000
# slow connections while scraping every second, and, when `prometheus` is
# installed (tools/install-prometheus.sh), a real Prometheus scraping every
# 1 s (1 s timeout) for 60 s beside 1 000 slow connections.
#
# Usage: IRQLAB=path/to/irqlab tools/faults/serve.sh   (default: irqlab on PATH)
# Prints one line per case family, `<case>: tried N held M`, and exits
# non-zero if any case did not hold. Takes about 3 minutes; starts one
# `irqlab serve` (and Prometheus) of its own and kills them at the end.
set -u
IRQLAB=${IRQLAB:-irqlab}
command -v "$IRQLAB" >/dev/null 2>&1 || { echo "serve.sh: $IRQLAB not found (set IRQLAB)" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "serve.sh: python3 is needed" >&2; exit 2; }
# 1 000 client sockets and the server's own.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

work=$(mktemp -d /tmp/irqlab-faults-serve.XXXXXX)
serve_pid=""
prom_pid=""
cleanup() {
    [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
    [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$IRQLAB" synth --ncpus 4 --irqs 16 --out "$work/tree" >/dev/null 2>&1 || { echo "serve.sh: synth failed" >&2; exit 1; }
"$IRQLAB" serve --root "$work/tree" --listen 127.0.0.1:0 -i 1s --duration 400s 2>"$work/serve.err" &
serve_pid=$!
addr=""
for _ in $(seq 100); do
    addr=$(sed -n 's|.*serving http://\([^/]*\)/metrics.*|\1|p' "$work/serve.err")
    [ -n "$addr" ] && break
    sleep 0.1
done
[ -n "$addr" ] || { echo "serve.sh: serve did not start: $(cat "$work/serve.err")" >&2; exit 1; }

prom=""
if command -v prometheus >/dev/null 2>&1; then
    prom=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print("127.0.0.1:%d" % s.getsockname()[1])')
    cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: irqlab
    static_configs:
      - targets: ['$addr']
EOF
fi

python3 - "$addr" "$prom" "$work" <<'PY'
import json, os, socket, subprocess, sys, threading, time, urllib.parse, urllib.request

host, port = sys.argv[1].rsplit(":", 1)
ADDR = (host, int(port))
PROM = sys.argv[2]
WORK = sys.argv[3]
assert host == "127.0.0.1"
HEAD_DEADLINE = 5.0
failed = False


def report(case, tried, held, extra=""):
    global failed
    if held < tried:
        failed = True
    print(f"{case}: tried {tried} held {held}" + (f" ({extra})" if extra else ""), flush=True)


def scrape(timeout=1.0):
    """Seconds one GET /metrics took, or None if it failed or timed out."""
    t = time.monotonic()
    try:
        with socket.create_connection(ADDR, timeout=timeout) as s:
            s.settimeout(max(0.01, timeout - (time.monotonic() - t)))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
                if time.monotonic() - t > timeout:
                    return None
    except OSError:
        return None
    if not data.startswith(b"HTTP/1.1 200 ") or b"irqlab_exposed_series" not in data:
        return None
    return time.monotonic() - t


def exchange(payload, close_write=False, wait=20.0):
    """Send payload, read the answer until the server closes: (answer, seconds)."""
    s = socket.create_connection(ADDR, timeout=wait)
    s.sendall(payload)
    if close_write:
        s.shutdown(socket.SHUT_WR)
    t = time.monotonic()
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    s.close()
    return data, time.monotonic() - t


class Slow:
    """n connections kept open: half send a request line then a byte every
    4 s, half stay silent; one the server closes is opened again."""

    def __init__(self, n):
        self.n, self.stop, self.min_open, self.reopened = n, False, n, 0
        self.ready = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()
        self.ready.wait(60)

    def open(self, talks):
        c = socket.create_connection(ADDR, timeout=5)
        c.setblocking(False)
        if talks:
            c.send(b"GET /metrics HTTP/1.1\r\n")
        return c

    def run(self):
        slots = [[None, i % 2 == 0, 0.0] for i in range(self.n)]
        first = True
        while not self.stop:
            now = time.monotonic()
            for s in slots:
                if s[0] is None:
                    continue
                try:
                    s[0].recv(512)
                    closed = True  # an answer (408/400) or the end
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if not closed and s[1] and now >= s[2]:
                    s[2] = now + 4
                    try:
                        s[0].send(b"X")
                    except OSError:
                        closed = True
                if closed:
                    s[0].close()
                    s[0] = None
            for s in slots:
                if s[0] is None:
                    try:
                        s[0], s[2] = self.open(s[1]), now + 4
                        if not first:
                            self.reopened += 1
                    except OSError:
                        pass
            open_now = sum(1 for s in slots if s[0] is not None)
            if first:
                first = False
                self.min_open = open_now
                self.ready.set()
            else:
                self.min_open = min(self.min_open, open_now)
            time.sleep(0.05)
        for s in slots:
            if s[0] is not None:
                s[0].close()

    def close(self):
        self.stop = True
        self.t.join()


def timed_scrapes(n, every=0.5, timeout=1.0):
    times = []
    for _ in range(n):
        times.append(scrape(timeout))
        time.sleep(every)
    ok = [t for t in times if t is not None]
    return len(ok), (max(ok) if ok else float("nan"))


base = max(scrape(5.0) or 5.0 for _ in range(3))

# slowloris: 4 connections sending a request line then a byte every 4 s
slow = []
def loris(stop):
    c = socket.create_connection(ADDR)
    c.sendall(b"GET /metrics HTTP/1.1\r\n")
    while not stop.is_set():
        stop.wait(4)
        try:
            c.sendall(b"X")
        except OSError:
            return
stop = threading.Event()
for _ in range(4):
    threading.Thread(target=loris, args=(stop,), daemon=True).start()
time.sleep(0.3)
held, worst = timed_scrapes(12)
# a slow head itself is answered 408 at its deadline
c = socket.create_connection(ADDR)
c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
t = time.monotonic(); c.settimeout(20)
try:
    ans = c.recv(64)
except OSError:
    ans = b""
late = time.monotonic() - t
c.close()
stop.set()
ok408 = ans.startswith(b"HTTP/1.1 408 ") and late < HEAD_DEADLINE * 3
report("slowloris", 13, held + ok408, f"worst scrape {worst*1e3:.1f} ms, alone {base*1e3:.1f} ms; slow head answered {ans[:12]!r} after {late:.1f} s")

# idle: 8 silent connections (the reproduction), then 500
idle = [socket.create_connection(ADDR) for _ in range(8)]
h1, w1 = timed_scrapes(6)
idle += [socket.create_connection(ADDR) for _ in range(492)]
h2, w2 = timed_scrapes(6)
time.sleep(HEAD_DEADLINE + 1)
closed = 0
for c in idle[:20]:
    c.settimeout(0.5)
    try:
        closed += c.recv(16) == b""
    except OSError:
        closed += 1
for c in idle:
    c.close()
report("idle", 13, h1 + h2 + (closed == 20), f"worst scrape {max(w1, w2)*1e3:.1f} ms beside 8 then 500 idle; {closed}/20 closed after the head deadline")

# over-long heads: 431, read whole by the client, never a 200
cases = [
    b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"a" * 9000,
    b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"a" * 20000 + b"\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\n" + b"X-H: v\r\n" * 2000 + b"\r\n",
    b"GET /" + b"m" * 8300 + b" HTTP/1.1\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"b" * 100000,
]
held = 0
for p in cases:
    ans, took = exchange(p)
    held += ans.startswith(b"HTTP/1.1 431 ") and took < HEAD_DEADLINE
report("long-head", len(cases), held)

# garbage: 400 (at once for bytes no request holds, at the deadline else)
cases = [
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", False, HEAD_DEADLINE),
    (b"\x00\x01\x02\x03", False, HEAD_DEADLINE),
    (b"A" * 100, False, HEAD_DEADLINE),
    (b"GET /metrics HTTP/1.1 extra\r\n", False, HEAD_DEADLINE),
    (b"GET /metrics\r\n\r\n", False, HEAD_DEADLINE),
    (b"hello", False, HEAD_DEADLINE * 3),
    (b"hello", True, HEAD_DEADLINE),
]
held = 0
for p, close_write, limit in cases:
    ans, took = exchange(p, close_write)
    held += ans.startswith(b"HTTP/1.1 400 ") and took < limit
report("garbage", len(cases), held)

# 1 000 slow connections, a scrape every second (1 s timeout) for 30 s
slow = Slow(1000)
h, w = timed_scrapes(30, every=1.0, timeout=1.0)
slow.close()
report("thousand", 30, h, f"worst scrape {w*1e3:.1f} ms; at least {slow.min_open} slow connections open, {slow.reopened} reopened after the server closed them")

# a real Prometheus, every 1 s (timeout 1 s), 60 s beside 1 000 slow connections
if PROM:
    slow = Slow(1000)
    prom = subprocess.Popen(
        ["prometheus", f"--config.file={WORK}/prometheus.yml", f"--storage.tsdb.path={WORK}/data",
         f"--web.listen-address={PROM}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def q(expr):
        url = f"http://{PROM}/api/v1/query?query=" + urllib.parse.quote(expr)
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                res = json.load(r)["data"]["result"]
                return float(res[0]["value"][1]) if res else None
        except (OSError, ValueError, KeyError, IndexError):
            return None

    try:
        end = time.monotonic() + 60
        while q('up{job="irqlab"}') is None and time.monotonic() < end:
            time.sleep(0.5)
        time.sleep(62)
        count = q('count_over_time(up{job="irqlab"}[60s])') or 0
        up = q('sum_over_time(up{job="irqlab"}[60s])') or 0
        worst = q('max_over_time(scrape_duration_seconds{job="irqlab"}[60s])') or float("nan")
        mean = q('avg_over_time(scrape_duration_seconds{job="irqlab"}[60s])') or float("nan")
    finally:
        prom.terminate()
        prom.wait()
        slow.close()
    report("prometheus", 60, int(min(up, 60)) if count >= 59 else 0,
           f"{int(up)}/{int(count)} scrapes up; duration mean {mean*1e3:.1f} ms, worst {worst*1e3:.1f} ms; at least {slow.min_open} slow connections open, {slow.reopened} reopened")
else:
    print("prometheus: skipped (not installed: tools/install-prometheus.sh)", flush=True)

# still serving
report("after", 1, int(scrape(5.0) is not None))
sys.exit(1 if failed else 0)
PY
rc=$?
if ! kill -0 "$serve_pid" 2>/dev/null; then
    echo "serve.sh: serve died during the run: $(tail -3 "$work/serve.err")" >&2
    rc=1
fi
exit $rc
