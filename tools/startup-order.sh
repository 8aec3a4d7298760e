#!/usr/bin/env bash
# startup-order.sh: write crates/irqlab/startup.order, the functions a
# `top --batch` (json, text), `serve`, `--version` and `record` run
# executes, command by command in that order (the most watched first):
# each command's per-sample functions (called more often in a longer run
# of the same command), then the rest of its functions in the order
# first met, skipping what an earlier command placed. From `valgrind
# --tool=callgrind` of a release build, as linker-script input-section
# patterns: `*(.text.<mangled name> …)` as built, and, after all of
# those, each again with the legacy mangling's hash as `*` (it changes
# with features and toolchain: the exact names keep a generic's other
# instances out of the way when they match, the globs still gather the
# rest), and `*libc.a:<member>.o(.text .text.*)` for the C library's
# functions of a static link. build.rs puts the sections they match
# first in the text (a linker script with INSERT, for GNU ld and lld
# alike): a `top` run then faults in a few 64-KiB windows of code instead
# of dozens. Run it again after a toolchain or dependency update
# (patterns that match nothing only lose their ordering), then rebuild.
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
# The runs by command, most watched first: `top --batch` (json, then
# text), serve, --version, record. Each command's per-sample functions
# (called more often in its longer run) come first, then the rest of what
# its runs execute in the order first met, skipping what an earlier
# command placed: a `top` start then faults in the fewest 64-KiB windows,
# and a sample after a second of other work touches few pages of code.
groups = (((1, 5, 7, 2, 6, 8), ((5, 7), (6, 8))), ((3, 9), ((3, 9),)),
          ((4,), ()), ((10, 11), ((10, 11),)))
# every variant of a C library string function whose variant this run
# executed: the CPU the binary later runs on may choose another (valgrind
# offers no AVX-512), and each is a few hundred bytes
variants = {}
for m in set(member.values()):
    base = m.split(":")[-1]
    if "-" in base:
        variants.setdefault(base.split("-")[0], set()).add(m)
seen, globs = set(), []
# the C start files' code (`_start`, `frame_dummy` and the unwinder's
# frame registration it calls) runs first of all
out_pats = ["*crt1.o(.text .text.*)", "*crtbegin*.o(.text .text.*)",
            "*libgcc_eh.a:unwind-dw2-fde-dip.o(.text .text.*)"]
def place(name, pats, globs):
    """The patterns of function `name` into `pats`: its C library member
    (and that member's other variants), or its name as built here; and
    into `globs` the name with any hash (the legacy mangling's hash
    changes with features and toolchain, and the glob also gathers a
    generic's other instances)."""
    if name in member:
        base = member[name].split(":")[-1]
        family = variants.get(base.split("-")[0], set()) if "-" in base else set()
        for m in [member[name]] + sorted(family - {member[name]}):
            pat = "*" + m + "(.text .text.*)"
            if pat not in seen:
                seen.add(pat)
                pats.append(pat)
        return
    one = f"*(.text.{name} .text.unlikely.{name})"
    if one not in seen:
        seen.add(one)
        pats.append(one)
    glob = re.sub(r"17h[0-9a-f]{16}E$", "17h*E", name)
    if glob != name:
        pat = f"*(.text.{glob} .text.unlikely.{glob})"
        if pat not in seen:
            seen.add(pat)
            globs.append(pat)
def executed(i):
    """The functions run `i` executed, in the order first met."""
    for line in open(f"{tmp}/cg.{i}"):
        m = re.match(r"^c?fn=\(\d+\) (.*?)(?:'\d+)?$", line.rstrip("\n"))
        if m and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.$]*", m.group(1)):
            yield m.group(1)
# per command: its per-sample names, then their globs (so that a build
# with other hashes still gathers them there), then the rest of its
# names; every other glob at the end. The first command's per-sample
# names are thus the patterns before the first glob (which
# tests/startup_link.rs checks).
for runs, pairs in groups:
    runs = [i for i in runs if i <= n]
    hot = set()
    for short, long in pairs:
        if long <= n:
            a, b = calls(f"{tmp}/cg.{short}"), calls(f"{tmp}/cg.{long}")
            hot |= {f for f, c in b.items() if c > a.get(f, 0)}
    hot_globs = []
    for wanted in (True, False):
        for i in runs:
            for name in executed(i):
                if (name in hot) == wanted:
                    place(name, out_pats, hot_globs if wanted else globs)
        if wanted:
            out_pats += hot_globs
# the commands' entry points, whatever the build inlined: a release
# build may fold them into their caller, a debug build keeps them
for f in ("3cmd8dispatch", "3cmd3top3run", "3cmd5serve3run", "3cmd6record3run"):
    pat = f"*(.text._ZN6irqlab{f}17h*E .text.unlikely._ZN6irqlab{f}17h*E)"
    if pat not in seen:
        seen.add(pat)
        globs.append(pat)
pats = out_pats + globs
open(out, "w").write("".join(f"{p}\n" for p in pats))
print(f"{out}: {len(pats)} input-section patterns")
PY
