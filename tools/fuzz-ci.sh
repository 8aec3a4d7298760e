#!/bin/sh
# Run every cargo-fuzz target (fuzz/Cargo.toml) for a short fixed time, one
# after the other: FUZZ_SECONDS each (default 20). For CI (.ci/run calls
# it) and for long local runs (FUZZ_SECONDS=1800). A crash, a hang of more
# than 10 s on one input (e.g. a blocking open of a FIFO) or more than
# 2 GB of memory (an unbounded read) fails the script; libFuzzer saves the
# input under fuzz/artifacts/<target>/.
#
# Needs cargo-fuzz (installed here if missing) and a C++ compiler. Only a
# stable toolchain is assumed: RUSTC_BOOTSTRAP=1 lets it accept the -Z flags
# cargo-fuzz passes. No sanitizer: the fuzzed code is safe Rust, and an
# uninstrumented build is several times faster to build and to run.
set -eu
secs=${FUZZ_SECONDS:-20}
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
sh fuzz/seed.sh
export RUSTC_BOOTSTRAP=1
targets=$(cargo fuzz list)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in $targets; do
    mkdir -p "fuzz/corpus/$t"
    echo "fuzz-ci: $t for ${secs}s"
    status=0
    cargo fuzz run --sanitizer none "$t" "fuzz/corpus/$t" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 >"$log" 2>&1 || status=$?
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$log" || true
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$log" >&2
        echo "fuzz-ci: $t FAILED (exit $status), input in fuzz/artifacts/$t/" >&2
        exit 1
    fi
done
echo "fuzz-ci: every target ran ${secs}s without a crash, hang or OOM"
