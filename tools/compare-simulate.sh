#!/bin/sh
# Re-run the simulation tables of docs/compare-statistics.md: A/A verdict
# rate, Δmean interval coverage, warning rates on clean and dirty data and
# power at 2 % / 5 % shifts (CV 1 %), n = 10 and 20, through the whole
# compare model. IRQLAB_SIM_RUNS sets the runs per row (default 1000).
# Prints a markdown table on stdout.
set -eu
cd "$(dirname "$0")/.."
cargo test --release -p irqlab --lib -- --ignored --exact \
    compare::synthetic_tests::simulation_table --nocapture 2>/dev/null | grep '^|'
