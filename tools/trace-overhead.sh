#!/usr/bin/env bash
# Tracing overhead (BENCHMARKS.md "Tracing overhead"): ns per traced event of
# `irqlab trace` vs bpftrace doing the same aggregation (tools/trace-bpftrace.bt),
# from the ipi workload's throughput (tests/trace_overhead.rs), then start-up
# time and peak RSS of a minimal run of each. Needs root; installs clang,
# bpftool and bpftrace (tools/install-trace-deps.sh). Mounts tracefs for
# bpftrace if absent and unmounts it again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-trace-deps.sh --with-bpftrace

mounted_here=
if ! grep -q " /sys/kernel/tracing tracefs " /proc/mounts; then
    mount -t tracefs nodev /sys/kernel/tracing
    mounted_here=1
fi
cleanup() { [[ -n $mounted_here ]] && umount /sys/kernel/tracing; }
trap cleanup EXIT

cargo build -q -p irqlab --features trace
bin=target/debug/irqlab

echo "== throughput with and without tracing (ipi workload)"
cargo test -q -p irqlab --features trace --test trace_overhead -- --ignored --nocapture

echo "== start-up + teardown and peak RSS of a minimal run (median of 5)"
run5() { for _ in 1 2 3 4 5; do /usr/bin/time -f "%e %M" "$@" >/dev/null 2>>/tmp/trace-time.$$ || true; tail -1 /tmp/trace-time.$$; done | sort -n | sed -n 3p; }
printf 'irqlab trace -d 10ms: %s (s, max RSS KiB)\n' "$(run5 "$bin" trace -i 10ms -d 10ms)"
printf 'bpftrace (same aggregation, exit after 10ms): %s (s, max RSS KiB)\n' \
    "$(run5 bpftrace -e "$(cat tools/trace-bpftrace.bt) interval:ms:10 { exit(); }")"
rm -f /tmp/trace-time.$$
