#!/usr/bin/env bash
# cost-vs-mpstat.sh: observer cost of `irqlab top --batch` against
# sysstat's `mpstat -I ALL`, both sampling every second for N intervals,
# run concurrently on the same machine. Prints each one's CPU time
# (user + system, from getrusage of the child via the `times` builtin),
# irqlab's own per-sample accounting (sum of JSON self_cost.cpu_ns), and
# the ratio irqlab / mpstat.
#
# Usage: tools/cost-vs-mpstat.sh [N]      (default N=30; takes N seconds)
# Env:   IRQLAB=path/to/irqlab  (default: target/release/irqlab, built if missing)
#        IRQLAB_ARGS="--irq virtio"  extra flags for irqlab top
# Installs sysstat with apt-get when mpstat is missing (needs root).
set -euo pipefail

n=${1:-30}
top=$(cd "$(dirname "$0")/.." && pwd)
irqlab=${IRQLAB:-$top/target/release/irqlab}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v mpstat >/dev/null 2>&1; then
    echo "mpstat missing: installing sysstat" >&2
    apt-get install -y sysstat >/dev/null 2>&1 ||
        { apt-get update >/dev/null && apt-get install -y sysstat >/dev/null; }
fi
if [ ! -x "$irqlab" ]; then
    echo "building $irqlab" >&2
    (cd "$top" && cargo build --release -p irqlab >&2)
fi

# run CMD... with stdout to $tmp/NAME.out; children's "user sys" seconds to $tmp/NAME.times
measure() {
    local name=$1
    shift
    (
        "$@" >"$tmp/$name.out" </dev/null
        times >"$tmp/$name.times.all" # not in a pipeline: that would fork
        tail -n 1 "$tmp/$name.times.all" >"$tmp/$name.times"
    )
}

# "0m1.234s 0m0.567s" -> seconds of user + sys
secs() {
    awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.3f", t }' "$1"
}

# shellcheck disable=SC2086
measure irqlab "$irqlab" top --batch --format json -i 1s -n "$n" ${IRQLAB_ARGS:-} &
measure mpstat env LC_ALL=C mpstat -I ALL 1 "$n" &
wait

irq_s=$(secs "$tmp/irqlab.times")
mp_s=$(secs "$tmp/mpstat.times")
self_ns=$(grep -o '"cpu_ns":[0-9]*' "$tmp/irqlab.out" | awk -F: '{ s += $2 } END { print s + 0 }')
lines=$(wc -l <"$tmp/irqlab.out")
strategy=$(grep -o '"strategy":"[a-z_]*"' "$tmp/irqlab.out" | sort | uniq -c | tr -s ' ' | tr '\n' ';')

echo "intervals:                 $n x 1 s (concurrent runs)"
echo "irqlab top --batch json:   ${irq_s} s CPU (user+sys), $lines lines, strategy:$strategy"
echo "  self-accounted samples:  $(awk -v s="$self_ns" 'BEGIN { printf "%.3f", s / 1e9 }') s"
echo "mpstat -I ALL:             ${mp_s} s CPU (user+sys)"
awk -v a="$irq_s" -v b="$mp_s" 'BEGIN {
    if (b > 0) printf "ratio irqlab / mpstat:     %.2f\n", a / b
    else print "ratio irqlab / mpstat:     n/a (mpstat used < 1 ms)"
}'
