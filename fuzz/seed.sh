#!/bin/sh
# Seed fuzz/corpus/<target>/ from this machine's live files and from
# ../shared/corpus (if present). The corpus folder is gitignored: nothing copied
# here is ever committed. Run from anywhere: sh fuzz/seed.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
shared="$here/../../shared/corpus"
c="$here/corpus"
mkdir -p "$c/interrupts" "$c/softirqs" "$c/stat" "$c/sysfs" "$c/pidstat" "$c/desc"

put() { # put <target> <name> <source-file>
    cat "$2" > "$c/$1/$3" 2>/dev/null || rm -f "$c/$1/$3"
}

put interrupts /proc/interrupts live-interrupts
put softirqs /proc/softirqs live-softirqs
put stat /proc/stat live-stat

for d in /sys/kernel/irq/*; do
    n=$(basename "$d")
    for f in "$d"/*; do put sysfs "$f" "sys-$n-$(basename "$f")"; done
done
for d in /proc/irq/[0-9]*; do
    n=$(basename "$d")
    for f in "$d"/*; do [ -f "$f" ] && put sysfs "$f" "proc-$n-$(basename "$f")"; done
done

i=0
for p in /proc/[0-9]*; do
    i=$((i + 1)); [ "$i" -gt 200 ] && break
    n=$(basename "$p")
    put pidstat "$p/stat" "stat-$n"
    put pidstat "$p/schedstat" "schedstat-$n"
done

# desc: the text after the counts of each numbered /proc/interrupts line.
desc_from() { # desc_from <file> <prefix>
    j=0
    sed -n 's/^ *[0-9][0-9]*:[ 0-9]*//p' "$1" | while IFS= read -r line; do
        j=$((j + 1)); printf '%s' "$line" > "$c/desc/$2-$j"
    done
}
desc_from /proc/interrupts live

if [ -d "$shared" ]; then
    for f in "$shared"/*; do
        b=$(basename "$f")
        case "$b" in
            *.interrupts) cp "$f" "$c/interrupts/$b"; desc_from "$f" "$b" ;;
            *.interrupts.bz2) bzip2 -dc "$f" > "$c/interrupts/${b%.bz2}" ;;
            *.softirqs) cp "$f" "$c/softirqs/$b" ;;
            *.softirqs.bz2) bzip2 -dc "$f" > "$c/softirqs/${b%.bz2}" ;;
        esac
    done
else
    echo "seed.sh: $shared not found; live files only" >&2
fi
for t in interrupts softirqs stat sysfs pidstat desc; do
    echo "$t: $(ls "$c/$t" | wc -l) seeds"
done

# show_root: one flags byte (0: no special files), then the files of the
# tree separated by 0xff bytes (see fuzz_targets/show_root.rs), from the
# repository's fixture: first sample, affinity files, online CPUs, then the
# same three files again as the second sample.
fx="$here/../crates/irqlab/tests/fixtures/vm-2cpu-6.18/proc"
mkdir -p "$c/show_root"
if [ -f "$fx/interrupts" ]; then
    {
        printf '\000'
        cat "$fx/interrupts"; printf '\377'
        cat "$fx/softirqs"; printf '\377'
        cat "$fx/stat"; printf '\377'
        printf '0-1\n\377'; printf '1\n\377'; printf '0-1\n\377'
        cat "$fx/interrupts"; printf '\377'
        cat "$fx/softirqs"; printf '\377'
        cat "$fx/stat"
    } > "$c/show_root/fixture-vm-2cpu"
fi

# journal: a recording's journal (record --trace on this VM, cut to a few
# rows), from the repository's fixture.
mkdir -p "$c/journal"
cp "$here/../crates/irqlab/tests/fixtures/recording-trace/host=vm/boot=b/journal.jsonl" \
    "$c/journal/vm-trace" 2>/dev/null || true
echo "journal: $(ls "$c/journal" | wc -l) seeds"

# compare_inputs: one byte picking the arguments (0x01: the bench run
# directory; 0x7e: every other input), then the files of
# fuzz_targets/compare_inputs.rs's FILES separated by 0xff bytes.
mkdir -p "$c/compare_inputs"
trial='{"schema":2,"variant":"tip","trial":%d,"boot_id":"b","started_at":"2026-01-01T00:00:00Z","duration_s":1.0,"metrics":{"a_per_sec":{"value":%s,"unit":"1/s","direction":"higher","headline":true},"b_ns":{"value":5,"unit":"ns","direction":"lower"}}}\n'
env='{"started_at":"2026-01-01T00:00:00Z","argv":["irqlab","bench","--root","/"],"kernel":"6.18","warnings":["busy"]}'
for flags in '\001' '\176' '\201'; do
    {
        printf "$flags"
        printf '{"variants":["tip"],"workload":"w","trial_s":1}\377'
        printf '%s\377' "$env"
        printf "$trial" 1 1.5; printf "$trial" 2 null; printf "$trial" 3 '"NaN"'; printf '\377'
        printf '{"notes":["n"],"warnings":["w"]}\377'
        printf '%s\377' "$env" | sed 's/00:00:00/01:00:00/'
        printf 'variant,trial,boot_id,started_at,duration_s,a_per_sec\ntip,1,b,t,1.0,2.5\ntip,2,b,t,1.0,-\377'
        printf 'variant,trial,x_ns\na,1,3\nb,1,NaN\na,2,4\377'
        printf '[{"variant":"a","trial":1,"x":1},{"variant":"b","trial":1,"x":null}]\377'
        printf '1\n2\n# c\nnull\n3\377'
        printf '7\377'
        printf '{"version":3,"results":[{"metric":"lat_ns","summary":{"p50":3,"p99":9}}]}'
    } > "$c/compare_inputs/bench-$(printf "$flags" | od -An -tu1 | tr -d ' ')"
done

# compare_decide: the flags byte (3 variants, boot ids), the metrics byte
# (2 metrics), stated directions (higher, lower), units (ns, 1/s), then per
# variant and metric a count and one selector byte (and an id byte) per
# value (fuzz_targets/compare_decide.rs).
mkdir -p "$c/compare_decide"
printf '\011\001\011\015\004\220\000\221\001\222\002\223\000\003\000\000\001\000\002\000\004\230\000\231\001\232\002\233\000\003\210\000\220\001\210\002\004\240\000\241\001\242\002\243\000\003\377\000\000\000\000\000\000\360\077\000\016\001\016\002' \
    > "$c/compare_decide/three-variants-boots"
printf '\004\002\000\000\005\220\221\000\016\230\003\001\002\003\002\016\016\016' \
    > "$c/compare_decide/identical"

# guard_journal: one byte (where the last line is cut), then the journal.
mkdir -p "$c/guard_journal"
{
    printf '\007'
    printf '{"kind":"file","path":"proc/sys/vm/stat_interval","old":"1","new":"2"}\n'
    printf '{"kind":"affinity","pid":7,"old":"0-1","new":"0"}\n'
    printf '{"kind":"temp_file","path":"/tmp/caf\303\251/x"}\n'
    printf '{"kind":"process_group","pgid":9,"boot_id":"b","start_time":5,"cgroup":"/sys/fs/cgroup/x","token":"t"}\n'
    printf '{"kind":"mount","path":"sys/kernel/tracing","fstype":"tracefs"}\n'
    printf '{"kind":"net_namespace","name":"irqlab-\303\251"}\n'
} > "$c/guard_journal/every-kind"

# serve_http: one byte (the read size), then what a client sends.
mkdir -p "$c/serve_http"
printf '\003GET /metrics?x=1 HTTP/1.1\r\nHost: h\r\nAccept: application/openmetrics-text;version=1.0.0;q=0.9,text/plain;q=0.5\r\nAccept-Encoding: gzip;q=1, *;q=0\r\n\r\n' \
    > "$c/serve_http/scrape-om-gzip"
printf '\100HEAD http://h:9812/metrics HTTP/1.0\nConnection: close\n\n' > "$c/serve_http/head-absolute"
printf '\001POST / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n' > "$c/serve_http/post-pipelined"

# strategy_cache: one byte (CPU count), the key's line, then the file.
mkdir -p "$c/strategy_cache"
{
    printf '\004b\t6.18\t/\t24,25\n'
    printf 'irqlab-strategy-1\tb\t6.18\t/\t4\t24,25\tproc_interrupts\t1000\t2000\t20\t%s\n' "$(date +%s)"
    printf 'irqlab-strategy-1\tb\t6.18\t/\t4\t24\tper_cpu_count\t9000\t2000\t20\t1\n'
} > "$c/strategy_cache/fresh-and-stale"
for t in compare_inputs compare_decide guard_journal serve_http strategy_cache; do
    echo "$t: $(ls "$c/$t" | wc -l) seeds"
done

# threads_cache: the file as irqlab writes it.
mkdir -p "$c/threads_cache"
printf 'irqlab-threads-1\tb\t12345\n2\t-\n3\tt\tirq/24-virtio0\n4\t?\n' > "$c/threads_cache/three-kids"
echo "threads_cache: $(ls "$c/threads_cache" | wc -l) seeds"
