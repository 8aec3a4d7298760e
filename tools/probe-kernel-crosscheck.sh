#!/usr/bin/env bash
# Cross-check `irqlab probe --kernel` on this machine (root):
#  1. irqlab alone: kernel time per read of /proc/interrupts (rows `open 4k`
#     and `pread 4k`) beside the thread's CPU time and wall time;
#  2. bpftrace on the SAME reads: irqlab runs again under `bpftrace -c`,
#     which sums the main thread's read()/pread64() syscall time
#     (syscalls:sys_enter_* -> sys_exit_*) up to the 0-byte read that ends
#     each read of a file, and prints it with the bytes; reads of more than
#     1500 bytes are /proc/interrupts (/proc/stat, the next largest, is
#     ~1.2 kB here). Its quantiles are set beside that run's own figures;
#  3. the function tracer (CONFIG_FUNCTION_TRACER, fentry or not):
#     show_interrupts() and seq_read_iter() calls per read by dd, beside
#     nr_irqs from the boot log, when the kernel allows it.
# bpftrace (0.17) and the function tracer need tracefs: it is mounted for
# the run and unmounted again (tracer reset) on any exit if this script
# mounted it. Nothing is built: IRQLAB (default `irqlab`, an absolute path
# for bpftrace -c) must be built with --features trace.
set -u
IRQLAB=${IRQLAB:-irqlab}
READS=${READS:-200}
T=/sys/kernel/tracing
work=$(mktemp -d)
mounted_here=0

cleanup() {
    if [ -d "$T/instances" ] || [ -e "$T/current_tracer" ]; then
        { echo nop > "$T/current_tracer"; } 2>/dev/null
        { echo > "$T/set_ftrace_filter"; } 2>/dev/null
        { echo 1 > "$T/tracing_on"; } 2>/dev/null
        { echo > "$T/trace"; } 2>/dev/null
    fi
    if [ "$mounted_here" = 1 ]; then
        umount "$T"
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
command -v bpftrace >/dev/null || { echo "needs bpftrace" >&2; exit 2; }

quantiles() { # stdin: one number per line -> "n p50 p90 p99" (nearest rank)
    sort -n | awk '{v[NR]=$1} END {
        if (NR == 0) { print "0 - - -"; exit }
        q50=v[int((NR-1)*0.50)+1]; q90=v[int((NR-1)*0.90)+1]; q99=v[int((NR-1)*0.99)+1];
        printf "%d %s %s %s\n", NR, q50, q90, q99 }'
}

IRQLAB=$(command -v "$IRQLAB") || { echo "irqlab not found" >&2; exit 2; }

report() { # $1: probe JSON -> the /proc/interrupts 4k rows
python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = d["kernel"]
print("  mechanism:", k["mechanism"])
for r in d["rows"]:
    if r["target"] != "/proc/interrupts":
        continue
    kr = r["kernel"]
    q = lambda x: "p50 %.1f p90 %.1f p99 %.1f" % (x["p50"]/1e3, x["p90"]/1e3, x["p99"]/1e3)
    sc = kr["show_interrupts_calls"]
    print("  %-5s 4k: kernel %s | cpu %s | wall %s µs; show_interrupts()/read %s; reads with kernel > cpu %d, > wall %d"
          % (r["method"], q(kr["kernel_ns"]), q(r["cpu_ns"]), q(r["wall_ns"]),
             "p50 %g" % sc["p50"] if sc else "not countable",
             kr["reads_above_cpu"], kr["reads_above_wall"]))
print("  walk: nr_irqs %s (from kernel memory: %s), %s numbered rows, %s CPUs, %s descriptors (largest + 1 = %s)"
      % (k["nr_irqs"], k.get("nr_irqs_from_kernel_memory"), k["irq_rows"], k["cpus"],
         k["descriptors"], k["descriptor_bound"]))
PY
}

# 1. irqlab alone (BPF only, no tracefs)
"$IRQLAB" probe --kernel --reads "$READS" --buffer 4k --format json --out "$work/alone.json" \
    || { echo "irqlab probe --kernel failed" >&2; exit 1; }
echo "irqlab alone ($READS reads per row):"
report "$work/alone.json"

if ! grep -qs " $T tracefs " /proc/self/mounts; then
    mount -t tracefs nodev "$T" || { echo "cannot mount tracefs" >&2; exit 1; }
    mounted_here=1
fi

# 2. bpftrace on the same reads
bpftrace -c "$IRQLAB probe --kernel --reads $READS --buffer 4k --format json --out $work/under.json" -e '
tracepoint:syscalls:sys_enter_read, tracepoint:syscalls:sys_enter_pread64 /tid == cpid/ { @s[tid] = nsecs; }
tracepoint:syscalls:sys_exit_read /@s[tid]/ {
    @acc = @acc + (nsecs - @s[tid]); @b = @b + args->ret; delete(@s[tid]);
    if (args->ret == 0) { printf("R read %d %d\n", @b, @acc); @acc = 0; @b = 0; } }
tracepoint:syscalls:sys_exit_pread64 /@s[tid]/ {
    @acc = @acc + (nsecs - @s[tid]); @b = @b + args->ret; delete(@s[tid]);
    if (args->ret == 0) { printf("R pread %d %d\n", @b, @acc); @acc = 0; @b = 0; } }
END { clear(@s); clear(@acc); clear(@b); }' > "$work/bt.txt" 2>&1 \
    || { echo "bpftrace failed: $(tail -3 "$work/bt.txt")" >&2; exit 1; }
echo "irqlab under bpftrace (same run, both timing the same reads):"
report "$work/under.json"
# both rows issue pread64 (the open row on a fresh descriptor): one distribution
echo "  bpftrace, /proc/interrupts reads of both 4k rows (warm-up reads included): syscall time per read (n p50 p90 p99, µs): $(
    awk '$1 == "R" && $3 > 1500 {printf "%.1f\n", $4/1000}' "$work/bt.txt" | quantiles)"
echo "  (each span contains the other tool's handlers on the same syscall tracepoints, in the kernel's order)"

# 3. function tracer: show_interrupts() and seq_read_iter() per dd read
if ! { echo "show_interrupts seq_read_iter" > "$T/set_ftrace_filter"; } 2>/dev/null \
    || ! { echo function > "$T/current_tracer"; } 2>/dev/null; then
    echo "function tracer: refused by this kernel (EPERM writing set_ftrace_filter / current_tracer)"
else
    echo > "$T/trace"
    for _ in $(seq 20); do dd if=/proc/interrupts of=/dev/null bs=4k status=none; done
    echo 0 > "$T/tracing_on"
    grep -E '^ *dd-[0-9]+ ' "$T/trace" > "$work/ft.txt"
    for f in show_interrupts seq_read_iter; do
        echo "function tracer dd 4k: $f() calls per read (n p50 p90 p99): $(
            grep " $f <-" "$work/ft.txt" | awk '{print $1}' | sort | uniq -c | awk '{print $1}' | quantiles)"
    done
fi
echo "boot log: $(dmesg 2>/dev/null | grep -o 'NR_IRQS: [0-9]*, nr_irqs: [0-9]*' | head -1)"
echo "tracefs: $( [ "$mounted_here" = 1 ] && echo 'mounted for this run, unmounted on exit' || echo 'was already mounted, left mounted')"
