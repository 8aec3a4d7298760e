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
