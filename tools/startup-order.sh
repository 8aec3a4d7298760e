#!/usr/bin/env bash
# startup-order.sh: write crates/irqlab/startup.order, the functions a
# `top --batch` (json, text), `serve` and `--version` run executes, in the
# order first met, from `valgrind --tool=callgrind` of a release build.
# build.rs hands the file to the linker (lld's --symbol-ordering-file) so
# that these functions sit together at the start of the text: a run then
# faults in a few 64-KiB windows of code instead of dozens. Run it again
# after a toolchain or dependency update (their symbol names change; stale
# names are ignored, only the ordering is lost), then rebuild.
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
for args in "top --batch --format json -i 10ms -n 2" "top --batch --format text -i 10ms -n 2" \
    "serve --listen 127.0.0.1:0 -i 10ms --duration 30ms" "--version" \
    "top --batch --format json -i 10ms -n 2" "top --batch --format text -i 10ms -n 2"; do
    i=$((i + 1))
    # shellcheck disable=SC2086 # the arguments split on purpose
    XDG_CACHE_HOME=$cache valgrind --tool=callgrind --demangle=no \
        --callgrind-out-file="$tmp/cg.$i" "$irqlab" $args >/dev/null 2>&1
done
python3 - "$tmp" "$i" "$out" <<'PY'
import re, sys
tmp, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
names, seen = [], set()
for i in range(1, n + 1):
    for line in open(f"{tmp}/cg.{i}"):
        m = re.match(r"^c?fn=\(\d+\) (.*?)(?:'\d+)?$", line.rstrip("\n"))
        if m and m.group(1) not in seen:
            seen.add(m.group(1))
            names.append(m.group(1))
open(out, "w").write("".join(f"{x}\n" for x in names))
print(f"{out}: {len(names)} functions")
PY
