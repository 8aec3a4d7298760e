#!/usr/bin/env bash
# cost-vs-mpstat.sh: observer cost of `irqlab top --batch` against
# sysstat's `mpstat -I ALL`, both sampling every second for N intervals,
# run concurrently on the same machine. Prints each one's CPU time
# (user + system of that process alone, from wait4's rusage with
# microsecond resolution; python3 spawns both), irqlab's own per-sample
# accounting (sum of JSON self_cost.cpu_ns), and the ratio irqlab / mpstat.
# Without python3 it falls back to bash `times` (millisecond resolution,
# and each child's time then includes a bash fork).
#
# Usage: tools/cost-vs-mpstat.sh [N]      (default N=30; takes N seconds)
# Env:   IRQLAB=path/to/irqlab  (default: target/release/irqlab, built if missing)
#        IRQLAB_ARGS="--irq virtio"  extra flags for irqlab top
#        FORMAT=text  irqlab's --batch format (default json; text has no
#                     self-accounted samples line)
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

# Both at once under python3: prints "irqlab_s mpstat_s" (user + sys of each
# process alone, from os.wait4).
both_python() {
    python3 - "$tmp" "$@" <<'PY'
import os, subprocess, sys
tmp, argv = sys.argv[1], sys.argv[2:]
cut = argv.index("--")
cmds = {"irqlab": argv[:cut], "mpstat": argv[cut + 1:]}
env = dict(os.environ, LC_ALL="C")
procs = {}
for name, cmd in cmds.items():
    with open(f"{tmp}/{name}.out", "wb") as out:
        procs[name] = subprocess.Popen(cmd, stdout=out, stdin=subprocess.DEVNULL, env=env)
cost = {}
for name, p in procs.items():
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{name} exited with {p.returncode}")
    cost[name] = ru.ru_utime + ru.ru_stime
print(f"{cost['irqlab']:.4f} {cost['mpstat']:.4f}")
PY
}

# shellcheck disable=SC2086
if command -v python3 >/dev/null 2>&1; then
    read -r irq_s mp_s < <(both_python "$irqlab" top --batch --format "${FORMAT:-json}" -i 1s -n "$n" ${IRQLAB_ARGS:-} -- mpstat -I ALL 1 "$n")
    how="wait4 rusage, per process"
else
    measure irqlab "$irqlab" top --batch --format "${FORMAT:-json}" -i 1s -n "$n" ${IRQLAB_ARGS:-} &
    measure mpstat env LC_ALL=C mpstat -I ALL 1 "$n" &
    wait
    irq_s=$(secs "$tmp/irqlab.times")
    mp_s=$(secs "$tmp/mpstat.times")
    how="bash times, ms resolution"
fi

self_ns=$(grep -o '"cpu_ns":[0-9]*' "$tmp/irqlab.out" | awk -F: '{ s += $2 } END { print s + 0 }')
lines=$(wc -l <"$tmp/irqlab.out")
strategy=$(grep -o '"strategy":"[a-z_]*"' "$tmp/irqlab.out" | sort | uniq -c | tr -s ' ' | tr '\n' ';')

echo "intervals:                 $n x 1 s (concurrent runs; CPU from $how)"
echo "irqlab top --batch ${FORMAT:-json}:   ${irq_s} s CPU (user+sys), $lines lines, strategy:$strategy"
echo "  self-accounted samples:  $(awk -v s="$self_ns" 'BEGIN { printf "%.3f", s / 1e9 }') s"
echo "mpstat -I ALL:             ${mp_s} s CPU (user+sys)"
awk -v a="$irq_s" -v b="$mp_s" 'BEGIN {
    if (b > 0) printf "ratio irqlab / mpstat:     %.2f\n", a / b
    else print "ratio irqlab / mpstat:     n/a (mpstat used < 1 ms)"
}'
