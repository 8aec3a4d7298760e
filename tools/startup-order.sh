#!/usr/bin/env bash
# startup-order.sh: write crates/irqlab/startup.order, the functions a
# `top --batch` (json, text), `serve`, `record` and `--version` run
# executes: first those that run per sample (called more often in a
# longer run of the same command), then the rest, each part in the order
# first met, from `valgrind --tool=callgrind` of a release build, as
# linker-script input-section patterns: `*(.text.<mangled name> …)` as
# built, then again with the legacy mangling's hash as `*` (it changes with
# features and toolchain: the exact names keep a generic's other instances
# out of the way when they match, the globs still gather the rest), and `*libc.a:<member>.o(.text .text.*)` for the C library's functions of
# a static link. build.rs puts the sections they match first in the text
# (a linker script with INSERT, for GNU ld and lld alike): a run then
# faults in a few 64-KiB windows of code instead of dozens. Run it again
# after a toolchain or dependency update (patterns that match nothing only
# lose their ordering), then rebuild.
# Usage: tools/startup-order.sh [IRQLAB]   (default target/release/irqlab)
# Needs valgrind and python3; builds nothing; writes only the order file.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
irqlab=${1:-${IRQLAB:-$top/target/release/irqlab}}
out=$top/crates/irqlab/startup.order
command -v valgrind >/dev/null || { echo "startup-order.sh: needs valgrind" >&2; exit 1; }
[ -x "$irqlab" ] || { echo "startup-order.sh: no binary at $irqlab" >&2; exit 1; }
tmp=$(mktemp -d)
cache=$tmp/cache
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$cache"
i=0
# twice each: the first with no per-boot cache (cold start), then with it
# (runs 7-11: longer runs of the same commands, for what runs per sample)
for args in "top --batch --format json -i 10ms -n 2" "top --batch --format text -i 10ms -n 2" \
    "serve --listen 127.0.0.1:0 -i 10ms --duration 30ms" "--version" \
    "top --batch --format json -i 10ms -n 2" "top --batch --format text -i 10ms -n 2" \
    "top --batch --format json -i 10ms -n 20" "top --batch --format text -i 10ms -n 20" \
    "serve --listen 127.0.0.1:0 -i 10ms --duration 300ms" \
    "record -o $tmp/rec-short -i 10ms -d 30ms" "record -o $tmp/rec-long -i 10ms -d 300ms"; do
    i=$((i + 1))
    # shellcheck disable=SC2086 # the arguments split on purpose
    XDG_CACHE_HOME=$cache valgrind --tool=callgrind --demangle=no \
        --callgrind-out-file="$tmp/cg.$i" "$irqlab" $args >/dev/null 2>&1
done
libc=$(cc -print-file-name=libc.a 2>/dev/null || true)
members=$tmp/libc-members
: >"$members"
# which member of the C library defines each function (static links)
if [ -f "$libc" ] && command -v nm >/dev/null; then
    nm -A --defined-only "$libc" 2>/dev/null | awk '{print $1, $NF}' >"$members" || true
fi
python3 - "$tmp" "$i" "$out" "$members" <<'PY'
import re, sys
tmp, n, out, members = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
# "path/libc.a:member.o:0000… T name" (awk kept the first and last field)
member = {}
for line in open(members):
    parts = line.split()
    if len(parts) == 2 and parts[0].count(":") >= 2:
        member.setdefault(parts[1], parts[0].split(":")[-3].rsplit("/", 1)[-1]
                          + ":" + parts[0].split(":")[-2])
def calls(path):
    """Calls of each function in a callgrind file: `calls=` lines count
    the calls of the `cfn=` line before them."""
    ids, n, callee = {}, {}, None
    for line in open(path):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*?))?(?:'\d+)?$", line.rstrip("\n"))
        if m:
            if m.group(3):
                ids[m.group(2)] = m.group(3)
            callee = ids.get(m.group(2)) if m.group(1) == "cfn" else None
            continue
        m = re.match(r"^calls=(\d+)", line)
        if m and callee:
            n[callee] = n.get(callee, 0) + int(m.group(1))
            callee = None
    return n
# per sample: called more often in the longer run of a command (json,
# text, serve, record): laid out first, together, so that a sample after
# a second of other work touches few pages of code
hot = set()
for short, long in ((5, 7), (6, 8), (3, 9), (10, 11)):
    if long <= n:
        a, b = calls(f"{tmp}/cg.{short}"), calls(f"{tmp}/cg.{long}")
        hot |= {f for f, c in b.items() if c > a.get(f, 0)}
seen, first, hot_globs = set(), [], []
for wanted in (True, False):
    exact, pats = [], []
    for i in range(1, n + 1):
        for line in open(f"{tmp}/cg.{i}"):
            m = re.match(r"^c?fn=\(\d+\) (.*?)(?:'\d+)?$", line.rstrip("\n"))
            if not m or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.$]*", m.group(1)):
                continue
            name = m.group(1)
            if (name in hot) != wanted:
                continue
            if name in member:
                pat = "*" + member[name] + "(.text .text.*)"
                if wanted and pat not in seen:
                    # a C library member: in the cluster itself
                    seen.add(pat)
                    exact.append(pat)
            else:
                # the legacy mangling's hash changes with the crate's metadata
                # (features, toolchain): each name once as built here, first,
                # then with any hash (all of a generic's instances)
                glob = re.sub(r"17h[0-9a-f]{16}E$", "17h*E", name)
                one = f"*(.text.{name} .text.unlikely.{name})"
                if glob != name and one not in seen:
                    seen.add(one)
                    exact.append(one)
                pat = f"*(.text.{glob} .text.unlikely.{glob})"
            if pat not in seen:
                seen.add(pat)
                pats.append(pat)
    if wanted:
        # the per-sample cluster: its exact names (and C library members);
        # its globs, which also match a generic's other instances, come
        # after it, first of the rest
        first, hot_globs = exact, pats
# the commands' entry points, whatever the build inlined: a release
# build may fold them into their caller, a debug build keeps them
for f in ("3cmd8dispatch", "3cmd3top3run", "3cmd5serve3run", "3cmd6record3run"):
    pat = f"*(.text._ZN6irqlab{f}17h*E .text.unlikely._ZN6irqlab{f}17h*E)"
    if pat not in seen:
        seen.add(pat)
        pats.append(pat)
pats = first + hot_globs + exact + pats
open(out, "w").write("".join(f"{p}\n" for p in pats))
print(f"{out}: {len(pats)} input-section patterns")
PY
