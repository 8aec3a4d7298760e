#!/usr/bin/env bash
# tools/faults/record.sh: fault cases of `irqlab record`, `recover` and
# `replay` (docs/recording-schema.md). Builds nothing: takes the binary as
# $IRQLAB (default `irqlab`); needs python3 with duckdb or pyarrow
# (tools/install-python-readers.sh) for the cell-by-cell comparisons,
# which read the segments without irqlab (tools/faults/record-states.py).
#
#   IRQLAB=target/debug/irqlab tools/faults/record.sh [KILLS]
#
# Case families (one line each: `<case>: tried N held M`):
#   kill9     SIGKILL of record at a random moment (counters moving,
#             segments closing and merging every 200 ms); recover; every
#             counter at every flushed sample equal before and after, and
#             replay's output the same
#   journal   one corruption of a 24-line journal each (garbage line 6,
#             garbage first line, truncated middle line, negative value,
#             unknown source, deep nesting, duplicated seq, backward seq,
#             empty line, 5 MB line, torn tail, schema 99 on every line):
#             recover keeps every readable sample (cell by cell), keeps the
#             journal byte for byte as journal.jsonl.partial-*, refuses
#             schema 99 and a lost first line (the layout the other
#             samples need) without touching anything (exit 1); replay
#             exits 0. And a journal line of a sample a segment holds: at
#             other clocks, another recording's journal, refused (exit 1)
#             with the directory left as it is, by recover and by
#             record-states.py; with another value or as the segment has
#             it, the segment's values kept, the next sample recovered, the
#             journal kept aside when the line differs, and record-states.py
#             naming the differing line as recover does. And a journal
#             whose first line is two samples after the last segment's
#             last: that sample holds only the counters its line lists
#             (nothing taken from a segment); or falls in a hole of a
#             segment (recover skipped its unreadable line before): every
#             counter, from that segment's state at the sample before; as
#             record-states.py expects
#   segment   a truncated, a garbage, a FIFO and a symlink-loop segment, a
#             copy under a wider name, a crash between a merged file and
#             the one it replaces: replay keeps the rest, recover removes
#             only what another file is checked to hold
#   special   a FIFO, /dev/zero and 2 GiB / 3 GiB sparse files as the
#             journal: replay and recover finish (a hang is a failure:
#             every run has a timeout) in bounded memory (max RSS printed);
#             recover exits 1: the FIFO and /dev/zero refused and left,
#             a sparse journal kept aside with nothing recovered (its one
#             record torn at 2 GiB, its read stopped at the 2-GiB bound at 3)
# Exits 1 if any case did not hold; removes everything it made.
set -u
IRQLAB=${IRQLAB:-irqlab}
KILLS=${1:-${KILLS:-20}}
T=${T:-60}
RSS_LIMIT_KB=${RSS_LIMIT_KB:-262144}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/irqlab-faults-record.XXXXXX)
mover=
cleanup() {
    [ -n "$mover" ] && kill "$mover" 2>/dev/null && wait "$mover" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A tried held
families=(kill9 journal segment special)
try() { tried[$1]=$((${tried[$1]:-0} + 1)); }
ok() { held[$1]=$((${held[$1]:-0} + 1)); }
bad() { echo "  FAILED $1: $2" >&2; }

states() { python3 "$here/record-states.py" "$@"; }
boot_of() { ls -d "$1"/host=*/boot=* 2>/dev/null | head -1; }
# replay --batch --format json under the timeout: stdout to $2, stderr to $3
replay() { timeout "$T" "$IRQLAB" replay "$1" --batch --format json >"$2" 2>"$3"; }
recover() { timeout "$T" "$IRQLAB" recover "$1" 2>"$2"; }
lines() { wc -l <"$1" | tr -d ' '; }
# replay's JSON lines without its own cost (which differs run to run)
norm() {
    python3 -c 'import json, sys
for l in sys.stdin:
    v = json.loads(l)
    v.pop("self_cost", None)
    print(json.dumps(v, sort_keys=True))' <"$1"
}

"$IRQLAB" synth --ncpus 4 --irqs 16 --out "$work/tree" >/dev/null 2>&1 || exit 1
python3 "$here/../synth-mover.py" "$work/tree" --interval 20ms --seconds 3600 >/dev/null 2>&1 &
mover=$!

record_bg() { # DIR ARGS…: record into DIR in the background, pid in $rec
    local out=$1
    shift
    "$IRQLAB" record --root "$work/tree" -o "$out" "$@" 2>/dev/null &
    rec=$!
}

# ---- kill9 ------------------------------------------------------------
for i in $(seq 1 "$KILLS"); do
    try kill9
    out=$work/k$i
    record_bg "$out" -i 20ms --segment 200ms
    sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.3f", 0.3 + r / 32768 * 2.2 }')"
    kill -9 "$rec"
    wait "$rec" 2>/dev/null
    boot=$(boot_of "$out")
    [ -n "$boot" ] || { bad kill9 "#$i: no boot directory"; continue; }
    states "$boot" --with-journal >"$work/exp.json" 2>"$work/exp.err" || { bad kill9 "#$i: expected states"; continue; }
    [ -s "$work/exp.err" ] && { bad kill9 "#$i: $(cat "$work/exp.err")"; continue; }
    replay "$out" "$work/before.out" "$work/before.err"
    rc1=$?
    recover "$out" "$work/rec.err"
    rc2=$?
    replay "$out" "$work/after.out" "$work/after.err"
    rc3=$?
    states "$boot" >"$work/got.json"
    n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$work/exp.json")
    if [ "$rc1$rc2$rc3" != 000 ]; then
        bad kill9 "#$i: exits replay $rc1 recover $rc2 replay $rc3: $(cat "$work/rec.err" "$work/after.err")"
    elif ! cmp -s "$work/exp.json" "$work/got.json"; then
        bad kill9 "#$i: counters differ after recover ($n samples flushed)"
    elif [ "$(norm "$work/before.out")" != "$(norm "$work/after.out")" ]; then
        bad kill9 "#$i: replay differs after recover"
    elif [ "$(lines "$work/after.out")" != $((n - 1)) ]; then
        bad kill9 "#$i: replay has $(lines "$work/after.out") lines for $n samples"
    elif [ -e "$boot/journal.jsonl" ]; then
        bad kill9 "#$i: journal left after recover"
    else
        ok kill9
    fi
    rm -rf "$out"
done

# ---- journal ----------------------------------------------------------
base=$work/jbase
record_bg "$base" -i 20ms --segment 1h
for _ in $(seq 1 300); do
    b=$(boot_of "$base")
    [ -n "$b" ] && [ -f "$b/journal.jsonl" ] && [ "$(grep -c '}$' "$b/journal.jsonl")" -ge 30 ] && break
    sleep 0.05
done
kill -9 "$rec"
wait "$rec" 2>/dev/null
b=$(boot_of "$base")
grep '}$' "$b/journal.jsonl" | head -24 >"$work/good.jsonl"

corrupt() { # CASE IN OUT
    python3 - "$@" <<'EOF'
import json, sys
case, src, dst = sys.argv[1:]
lines = open(src).read().splitlines()
def cell(line, **kw):
    v = json.loads(line)
    c = {"source": "interrupts", "key": "LOC", "cpu": 0, "value": 5}
    c.update(kw)
    v["cells"].append(c)
    return json.dumps(v)
tail = ""
if case == "garbage-line-6": lines[5] = "garbage garbage"
elif case == "garbage-first-line": lines[0] = "\x00\x01 garbage"
elif case == "truncated-middle-line": lines[11] = lines[11][: len(lines[11]) // 2]
elif case == "negative-value": lines[7] = cell(lines[7], value=-5)
elif case == "unknown-source": lines[9] = cell(lines[9], source="gpu")
elif case == "deep-nesting": lines[3] = '{"schema":3,"seq":3,"cells":' + "[" * 200000
elif case == "duplicated-seq": lines.insert(10, lines[9])
elif case == "backward-seq": lines.insert(15, lines[3])
elif case == "empty-line": lines.insert(8, "")
elif case == "5mb-line": lines[12] = '{"schema":3,' + " " * (5 << 20) + "x"
elif case == "torn-tail": tail = lines.pop()[:40]
elif case == "schema-99": lines = [l.replace('"schema":3', '"schema":99', 1) for l in lines]
open(dst, "w").write("\n".join(lines) + "\n" + tail)
EOF
}

for c in garbage-line-6 garbage-first-line truncated-middle-line negative-value unknown-source \
    deep-nesting duplicated-seq backward-seq empty-line 5mb-line torn-tail schema-99; do
    try journal
    out=$work/j-$c
    cp -r "$base" "$out"
    boot=$(boot_of "$out")
    corrupt "$c" "$work/good.jsonl" "$boot/journal.jsonl"
    sum=$(sha256sum <"$boot/journal.jsonl")
    before=$(ls -la --time-style=+%s.%N "$boot" | sort)
    states "$boot" --with-journal >"$work/exp.json"
    recover "$out" "$work/rec.err"
    rc=$?
    # schema 99: refused; a lost first line (the layout every later sample
    # needs): nothing can be rebuilt; both leave the directory as it was
    if [ "$c" = schema-99 ] || [ "$c" = garbage-first-line ]; then
        want='schema 99'
        [ "$c" = garbage-first-line ] && want='have no layout'
        if [ $rc != 1 ] || ! grep -q "$want" "$work/rec.err"; then
            bad journal "$c: recover exit $rc: $(cat "$work/rec.err")"
        elif [ "$(ls -la --time-style=+%s.%N "$boot" | sort)" != "$before" ] ||
            [ "$(sha256sum <"$boot/journal.jsonl")" != "$sum" ]; then
            bad journal "$c: the directory was touched"
        else
            ok journal
        fi
        rm -rf "$out"
        continue
    fi
    states "$boot" >"$work/got.json"
    kept=$(ls "$boot"/journal.jsonl.partial-* 2>/dev/null | head -1)
    replay "$out" "$work/out" "$work/err"
    rr=$?
    if [ $rc != 0 ]; then
        bad journal "$c: recover exit $rc: $(cat "$work/rec.err")"
    elif ! cmp -s "$work/exp.json" "$work/got.json"; then
        bad journal "$c: recovered counters differ from the readable lines'"
    elif [ -e "$boot/journal.jsonl" ] || [ -z "$kept" ] || [ "$(sha256sum <"$kept")" != "$sum" ]; then
        bad journal "$c: the journal was not kept as it was: $(cat "$work/rec.err")"
    elif [ $rr != 0 ]; then
        bad journal "$c: replay exit $rr: $(cat "$work/err")"
    else
        ok journal
    fi
    rm -rf "$out"
done

# ---- segment ----------------------------------------------------------
sbase=$work/sbase
"$IRQLAB" record --root "$work/tree" -o "$sbase" -i 50ms -d 1500ms --segment 250ms --merge 0 2>/dev/null
sboot=$(boot_of "$sbase")
states "$sboot" >"$work/sexp.json"
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$work/sexp.json")
mapfile -t segs < <(ls "$sboot"/part-*.parquet)
name() { basename "$1"; }
range() { basename "$1" .parquet | sed 's/^part-//; s/-/ /' | awk '{ print $2 - $1 + 1 }'; }
for c in truncated garbage fifo symlink-loop wider-copy merged-crash; do
    try segment
    out=$work/s-$c
    cp -r "$sbase" "$out"
    boot=$(boot_of "$out")
    mid=$boot/$(name "${segs[1]}")
    lost=0 extra= gone=
    case $c in
    truncated) head -c 300 "${segs[1]}" >"$mid"; lost=$(range "$mid") ;;
    garbage) head -c 4000 /dev/urandom >"$mid"; lost=$(range "$mid") ;;
    fifo) extra=$boot/part-0000009000-0000009001.parquet; mkfifo "$extra" ;;
    symlink-loop) extra=$boot/part-0000009000-0000009001.parquet; ln -s "$extra" "$extra" ;;
    wider-copy)
        first=$(basename "${segs[0]}" .parquet | cut -d- -f2)
        last=$(basename "${segs[-1]}" .parquet | cut -d- -f3)
        extra=$boot/$(printf 'part-%010d-%010d.parquet' $((10#$first + 1)) $((10#$last + 69)))
        cp "$mid" "$extra"
        ;;
    merged-crash)
        # a file whose samples the first segment holds (as the window's old
        # file is when a crash falls between the rename and the removal)
        f=$(basename "${segs[0]}" .parquet | cut -d- -f2)
        l=$(basename "${segs[0]}" .parquet | cut -d- -f3)
        gone=$boot/$(printf 'part-%010d-%010d.parquet' $((10#$f)) $((10#$l - 1)))
        cp "$boot/$(name "${segs[0]}")" "$gone"
        ;;
    esac
    replay "$out" "$work/out" "$work/err"
    rr=$?
    recover "$out" "$work/rec.err"
    rc=$?
    left_ok=1
    for s in "${segs[@]}"; do [ -e "$boot/$(name "$s")" ] || left_ok=0; done
    [ -n "$extra" ] && ! [ -L "$extra" ] && ! [ -e "$extra" ] && left_ok=0
    if [ $rr != 0 ] || [ "$(lines "$work/out")" != $((n - lost - 1)) ]; then
        bad segment "$c: replay exit $rr, $(lines "$work/out") lines for $((n - lost)) samples: $(cat "$work/err")"
    elif grep -q 'kept changing' "$work/err"; then
        bad segment "$c: misleading message: $(cat "$work/err")"
    elif [ $rc != 0 ]; then
        bad segment "$c: recover exit $rc: $(cat "$work/rec.err")"
    elif [ $left_ok = 0 ]; then
        bad segment "$c: recover removed a file it must keep: $(cat "$work/rec.err")"
    elif [ -n "$gone" ] && [ -e "$gone" ]; then
        bad segment "$c: the superseded file is still there: $(cat "$work/rec.err")"
    elif [ $lost = 0 ] && [ "$c" != fifo ] && [ "$c" != symlink-loop ] &&
        { states "$boot" >"$work/got.json"; ! cmp -s "$work/sexp.json" "$work/got.json"; }; then
        bad segment "$c: counters differ"
    else
        ok segment
    fi
    rm -rf "$out"
done

# ---- journal lines whose samples a segment holds --------------------------
# A journal beside sbase's segments: a line of the last segment's last
# sample L (at other clocks, with another value, or as the segment has
# it), then sample L+1. recover takes L as the segment's and converts
# L+1; a line that differs keeps the journal aside. record-states.py must
# say which line differs as recover does, and expect what recover makes.
held_journal() { # CASE BOOT: write BOOT/journal.jsonl, print L
    # after-gap: the lines are L+2 (one counter changed) and L+3; hole:
    # L+1 (one counter changed), L+2 (it again) and L+3, then hole_segment
    python3 - "$@" "$here/../read-recording.py" <<'PY' || return 1
import json, subprocess, sys
case, boot, reader = sys.argv[1:]
out = subprocess.run([sys.executable, reader, boot], capture_output=True, text=True, check=True)
last = json.loads(out.stdout.splitlines()[-1])
seq, wall, mono, values = last["seq"], last["wall_ns"], last["mono_ns"], last["values"]
k = next(k for k in sorted(values) if k.startswith("interrupts|") and not k.endswith("|-"))
source, rest = k.split("|", 1)
key, cpu = rest.rsplit("|", 1)
cell = {"source": source, "key": key, "cpu": int(cpu), "value": values[k]}
first = {"after-gap": seq + 2, "hole": seq + 1}.get(case, seq)
step = (first - seq) * 50_000_000
if case == "held-other-clocks":
    mono += 1
elif case == "held-other-value":
    cell["value"] += 1
elif case in ("after-gap", "hole"):
    cell["value"] += 7
line = lambda s, w, m, cells: json.dumps({"schema": 3, "seq": s, "wall_ns": w, "mono_ns": m, "cells": cells})
cells = [[cell]] + ([[dict(cell, value=cell["value"] + 1)]] if case == "hole" else []) + [[]]
with open(f"{boot}/journal.jsonl", "w") as f:
    for i, c in enumerate(cells):
        at = step + i * 50_000_000
        f.write(line(first + i, wall + at, mono + at, c) + "\n")
print(seq)
PY
    [ "$1" != hole ] || hole_segment "$2"
}
# Run CASE's journal (held_journal) beside a copy of sbase's segments:
# record-states.py's expectation (exp.json, exp.err; exit in $rs),
# recover (rec.err; exit in $rc), what it made (got.json), the journal
# kept aside ($kept) and its sum before ($sum); then CHECK CASE ARG… judges.
held_case() { # CASE CHECK [ARG…]
    local c=$1 check=$2
    shift 2
    try journal
    out=$work/h-$c
    cp -r "$sbase" "$out"
    boot=$(boot_of "$out")
    if L=$(held_journal "$c" "$boot"); then
        sum=$(sha256sum <"$boot/journal.jsonl")
        states "$boot" --with-journal >"$work/exp.json" 2>"$work/exp.err"
        rs=$?
        recover "$out" "$work/rec.err"
        rc=$?
        states "$boot" >"$work/got.json"
        kept=$(ls "$boot"/journal.jsonl.partial-* 2>/dev/null | head -1)
        "$check" "$c" "$@"
    else
        bad journal "$c: cannot write the journal"
    fi
    rm -rf "$out"
}

# A line of sample L: the segment's values kept, L+1 recovered; a line
# that differs is named by record-states.py and recover alike, and the
# journal is kept aside as it was.
check_held() { # CASE
    local c=$1 want
    case $c in
    held-other-value) want="sample $L: interrupts" ;;
    held-same) want= ;;
    esac
    if [ $rs != 0 ] || [ $rc != 0 ]; then
        bad journal "$c: record-states exit $rs, recover exit $rc: $(cat "$work/exp.err" "$work/rec.err")"
    elif ! cmp -s "$work/exp.json" "$work/got.json"; then
        bad journal "$c: recovered counters differ from the expected ones"
    elif [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$work/got.json")" != $((n + 1)) ]; then
        bad journal "$c: sample $((L + 1)) was not recovered: $(cat "$work/rec.err")"
    elif [ -z "$want" ]; then
        if [ -s "$work/exp.err" ] || [ -n "$kept" ] || [ -e "$boot/journal.jsonl" ] ||
            ! grep -q "sample(s) $L are already in .* (the same values)" "$work/rec.err"; then
            bad journal "$c: a line as its segment has it: $(cat "$work/exp.err" "$work/rec.err")"
        else
            ok journal
        fi
    elif ! grep -q "differ from the segments that hold their samples (recover keeps the journal aside): $want" "$work/exp.err"; then
        bad journal "$c: record-states did not name the differing line ($want): $(cat "$work/exp.err")"
    elif ! grep -q "differ from it: $want" "$work/rec.err"; then
        bad journal "$c: recover did not name the differing line ($want): $(cat "$work/rec.err")"
    elif [ -e "$boot/journal.jsonl" ] || [ -z "$kept" ] || [ "$(sha256sum <"$kept")" != "$sum" ]; then
        bad journal "$c: the journal was not kept as it was: $(cat "$work/rec.err")"
    else
        ok journal
    fi
}
for c in held-other-value held-same; do
    held_case "$c" check_held
done

# A line of sample L at other clock readings: the journal is another
# recording's; recover and record-states.py refuse it (exit 1) naming
# sample L, and the directory is left as it was.
check_other_recording() { # CASE
    local c=$1
    if [ $rs != 1 ] || ! grep -q "sample $L was taken at .*the journal is another recording's" "$work/exp.err"; then
        bad journal "$c: record-states exit $rs: $(cat "$work/exp.err")"
    elif [ $rc != 1 ] || ! grep -q "sample $L was taken at .*the journal is another recording's" "$work/rec.err"; then
        bad journal "$c: recover exit $rc: $(cat "$work/rec.err")"
    elif [ -n "$kept" ] || [ "$(sha256sum <"$boot/journal.jsonl")" != "$sum" ] ||
        [ "$(ls "$boot" | grep -vx journal.jsonl)" != "$(ls "$sboot")" ]; then
        bad journal "$c: the directory was touched: $(cat "$work/rec.err")"
    elif ! cmp -s "$work/sexp.json" "$work/got.json"; then
        bad journal "$c: the segments' counters changed"
    else
        ok journal
    fi
}
held_case held-other-clocks check_other_recording

# A journal whose first line is L+2: sample L+1 is missing (no line of
# it at all, not even an unreadable one). A counter the line does not
# list may have changed at L+1, so recover takes nothing from the segment
# before: L+2 holds only the line's one counter (replay takes the others
# as unknown until listed again), and record-states.py must expect that.
# hole: a segment holds L+1 and L+3 but not L+2 (recover skipped its
# garbled line), and the journal is put back with that line whole. recover
# converts L+2 alone from the state at L+1, which the holed segment holds
# (it holds L+3 too): L+2 holds every counter, and no sample is missing.

# hole's segment: BOOT's journal with its second line (L+2) garbled,
# recovered (a segment of L+1 and L+3; recover keeps the journal aside),
# then the journal put back whole, as one repairs the journal recover kept
hole_segment() { # BOOT
    local j=$1/journal.jsonl
    cp "$j" "$work/whole.jsonl"
    sed -i '2s/.*/garbage garbage/' "$j"
    recover "$(dirname "$(dirname "$1")")" "$work/hole.err" &&
        grep -q "lacks the skipped lines' samples" "$work/hole.err" || { cat "$work/hole.err" >&2; return 1; }
    rm -f "$1"/journal.jsonl.partial-*
    mv "$work/whole.jsonl" "$j"
}

# samples, and counters at sample $2, of the states file $1
shape() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d), len(d.get(sys.argv[2], {})))' "$1" "$2"; }
check_gap() { # CASE SAMPLES COUNTERS: SAMPLES in all, COUNTERS at L+2 (all: as at L)
    local c=$1 want=$2 cells=$3 said
    [ "$cells" != all ] || cells=$(shape "$work/got.json" "$L" | cut -d' ' -f2)
    grep -q "sample $((L + 1)) is missing" "$work/rec.err" && said=1 || said=0
    if [ $rs != 0 ] || [ $rc != 0 ] || [ -s "$work/exp.err" ]; then
        bad journal "$c: record-states exit $rs, recover exit $rc: $(cat "$work/exp.err" "$work/rec.err")"
    elif ! cmp -s "$work/exp.json" "$work/got.json"; then
        bad journal "$c: recovered counters differ from the expected ones (samples, counters at $((L + 2))): expected $(shape "$work/exp.json" $((L + 2))), recovered $(shape "$work/got.json" $((L + 2)))"
    elif [ "$(shape "$work/got.json" $((L + 2)))" != "$want $cells" ]; then
        bad journal "$c: want $want samples, $cells counter(s) at $((L + 2)); recovered $(shape "$work/got.json" $((L + 2))): $(cat "$work/rec.err")"
    elif [ $said != $((cells == 1)) ]; then
        bad journal "$c: recover $([ $said = 1 ] && echo says || echo "does not say") sample $((L + 1)) is missing: $(cat "$work/rec.err")"
    elif [ -e "$boot/journal.jsonl" ] || [ -n "$kept" ]; then
        bad journal "$c: the journal was not removed: $(cat "$work/rec.err")"
    else
        ok journal
    fi
}
held_case after-gap check_gap $((n + 2)) 1
held_case hole check_gap $((n + 3)) all

# ---- special ----------------------------------------------------------
maxrss=0
for c in fifo dev-zero sparse-2g sparse-3g; do
    try special
    out=$work/x-$c
    cp -r "$sbase" "$out"
    boot=$(boot_of "$out")
    j=$boot/journal.jsonl
    case $c in
    fifo) mkfifo "$j" ;;
    dev-zero) ln -s /dev/zero "$j" ;;
    sparse-2g) truncate -s 2G "$j" ;;
    sparse-3g) truncate -s 3G "$j" ;;
    esac
    /usr/bin/time -f %M -o "$work/rss1" timeout "$T" "$IRQLAB" replay "$out" --batch --format json >"$work/out" 2>"$work/err"
    rr=$?
    /usr/bin/time -f %M -o "$work/rss2" timeout "$T" "$IRQLAB" recover "$out" 2>"$work/rec.err"
    rc=$?
    rss=$(cat "$work/rss1" "$work/rss2" | grep -E '^[0-9]+$' | sort -n | tail -1)
    [ "${rss:-0}" -gt $maxrss ] && maxrss=$rss
    # a sparse journal: nothing recovered, kept aside whole
    kept=$(ls "$boot"/journal.jsonl.partial-* 2>/dev/null | head -1)
    case $c in
    sparse-2g) why='torn last record (2147483648 bytes' size=$((2 << 30)) ;;
    sparse-3g) why='more than 2147483648 bytes, stopped reading' size=$((3 << 30)) ;;
    *) why= size= ;;
    esac
    if [ $rr != 0 ] || [ "$(lines "$work/out")" != $((n - 1)) ]; then
        bad special "$c: replay exit $rr: $(cat "$work/err")"
    elif [ $rc != 1 ]; then
        bad special "$c: recover exit $rc (want 1): $(cat "$work/rec.err")"
    elif [ "${rss:-0}" -gt "$RSS_LIMIT_KB" ]; then
        bad special "$c: max RSS $rss KB"
    elif [ -z "$why" ] && ! [ -L "$j" ] && ! [ -p "$j" ]; then
        bad special "$c: the journal was removed"
    elif [ -n "$why" ] && { [ -z "$kept" ] || [ "$(stat -c %s "$kept")" != "$size" ] ||
        ! grep -q "journal.jsonl:1: $why" "$work/rec.err" || ! grep -q "nothing recovered" "$work/rec.err"; }; then
        bad special "$c: the journal was not kept aside whole with nothing recovered: $(cat "$work/rec.err")"
    else
        ok special
    fi
    rm -rf "$out"
done

status=0
for f in "${families[@]}"; do
    t=${tried[$f]:-0} h=${held[$f]:-0}
    extra=
    [ "$f" = special ] && extra=" (max RSS ${maxrss} KB)"
    echo "$f: tried $t held $h$extra"
    [ "$t" = "$h" ] || status=1
done
exit $status
