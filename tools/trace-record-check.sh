#!/usr/bin/env bash
# `record --trace` under loopback TCP load for a long run (default 10
# minutes): the recording must hold no negative increment of a traced
# counter and `replay --batch` must give every frame its `trace` object.
# The shortened version is crates/irqlab/tests/record_trace_live.rs
# (under_load_no_traced_counter_goes_back_and_every_frame_is_traced_or_skip).
#
# Needs root and an irqlab built with --features trace; mounts tracefs for
# the run if absent (irqlab unmounts it again). Builds nothing.
#
# Usage: sudo IRQLAB=target/release/irqlab tools/trace-record-check.sh [SECONDS] [INTERVAL]
# Prints the frame counts and any warning; exits non-zero if a frame has no
# trace object, a counter went back, or a command failed.
set -u

IRQLAB=${IRQLAB:-irqlab}
SECS=${1:-600}
INTERVAL=${2:-1s}
WORK=$(mktemp -d /tmp/trace-record-check.XXXXXX)
LOAD_PID=
cleanup() {
    if [ -n "$LOAD_PID" ]; then
        kill "$LOAD_PID" 2>/dev/null
        wait "$LOAD_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# loopback TCP: a sender pushing 64 KiB writes to an echo-less sink, both
# in one python process (NET_RX / NET_TX softirqs on both CPUs)
python3 - "$SECS" <<'EOF' &
import socket, sys, threading, time
end = time.monotonic() + float(sys.argv[1]) + 5
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
def sink():
    c, _ = srv.accept()
    while c.recv(1 << 16):
        pass
threading.Thread(target=sink, daemon=True).start()
s = socket.create_connection(srv.getsockname())
buf = b"x" * (1 << 16)
while time.monotonic() < end:
    s.sendall(buf)
    time.sleep(0.0005)
EOF
LOAD_PID=$!

echo "trace-record-check: recording ${SECS}s at ${INTERVAL} under loopback TCP load"
if ! "$IRQLAB" record --trace -i "$INTERVAL" -d "${SECS}s" --host check -o "$WORK/rec" \
    2>"$WORK/record.err" >/dev/null; then
    echo "trace-record-check: record failed:"; cat "$WORK/record.err"; exit 1
fi
if ! "$IRQLAB" replay --batch --format json "$WORK/rec" >"$WORK/replay.jsonl" 2>"$WORK/replay.err"; then
    echo "trace-record-check: replay failed:"; cat "$WORK/replay.err"; exit 1
fi

python3 - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
frames = [json.loads(l) for l in open(f"{w}/replay.jsonl")]
traced = sum(1 for f in frames if isinstance(f.get("trace"), dict))
with_soft = sum(1 for f in frames if (f.get("trace") or {}).get("softirqs"))
dropped = sum(f.get("trace", {}).get("dropped", 0) or 0 for f in frames if isinstance(f.get("trace"), dict))
rec_err = open(f"{w}/record.err").read()
rep_err = open(f"{w}/replay.err").read()
went_back = rec_err.count("went back") + rep_err.count("went back")
warnings = [l for l in (rec_err + rep_err).splitlines() if "warning" in l]
net = sum(s["count"] for f in frames for s in (f.get("trace") or {}).get("softirqs", []) if s["name"] == "NET_RX")
print(f"frames {len(frames)} traced {traced} with_softirqs {with_soft} "
      f"NET_RX_runs {net} negative_increments {went_back} dropped {dropped} warnings {len(warnings)}")
for l in warnings[:10]:
    print("  " + l)
ok = frames and traced == len(frames) and went_back == 0
sys.exit(0 if ok else 1)
EOF
