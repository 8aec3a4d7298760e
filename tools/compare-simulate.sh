#!/bin/sh
# Re-run the simulation tables of docs/compare-statistics.md: A/A verdict
# rate, Δmean and Δmedian interval coverage, warning rates on clean and
# dirty data and power at 2 % / 5 % shifts (CV 1 %), n = 10 and 20, through
# the whole compare model (compare::synthetic_tests::simulation_table).
# IRQLAB_SIM_RUNS sets the runs per row (default 1000). A debug build (the
# one `cargo test` uses) takes a few minutes for 1000 runs; set
# IRQLAB_SIM_RELEASE=1 to build with the release profile instead (faster to
# run, but a fat-LTO build first). Prints a markdown table on stdout.
set -eu
cd "$(dirname "$0")/.."
# Three tables: the verdict/coverage/warning table, the clustered designs
# (runs and boots, with a trial-level rule beside it for contrast)
# and the per-comparison warning rates on clean data (counts with 95 %
# Wilson intervals).
for t in simulation_table cluster_simulation_table warning_rate_table; do
    cargo test ${IRQLAB_SIM_RELEASE:+--release} -p irqlab --lib -- --ignored --exact \
        "compare::synthetic_tests::$t" --nocapture 2>/dev/null | grep '^|'
    echo
done
