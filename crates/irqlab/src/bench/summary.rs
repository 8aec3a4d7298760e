//! The summary table printed at the end of a bench run: per metric and
//! variant, mean, p50, p90, p99 and the coefficient of variation. Per-CPU
//! metrics and idle softirq vectors are left to `summary.json`. Laid out
//! by the one grid writer (`export::grid`). Below the table: the run's
//! notes (`note: …`: what a figure means on this machine, or why it is
//! missing), its data-quality warnings (`warning: …`) and, for an
//! interrupted run, how many trials finished.

use super::result_files::{BenchSummary, MetricSummary, SummaryFile};
use crate::export::grid::{Align, Grid};
use std::io::Write;

/// True for the metrics the table shows (not per-CPU ones, not idle
/// softirq vectors).
pub fn shown(name: &str, s: &MetricSummary) -> bool {
    let per_cpu = name
        .split('_')
        .any(|p| p.len() > 3 && p.starts_with("cpu") && p[3..].bytes().all(|b| b.is_ascii_digit()));
    let idle_softirq =
        name.starts_with("softirq_") && name.ends_with("_per_sec") && s.describe.mean < 1.0;
    !per_cpu && !idle_softirq
}

fn num(v: f64) -> String {
    let v = v + 0.0; // never print -0
    let a = v.abs();
    if a >= 1e6 {
        format!("{v:.4e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// Write the summary: the table, then notes, warnings and the state of
/// an interrupted run.
pub fn write(file: &SummaryFile, out: &mut impl Write) -> std::io::Result<()> {
    table(&file.variants, out)?;
    for n in &file.notes {
        writeln!(out, "note: {n}")?;
    }
    for w in &file.warnings {
        writeln!(out, "warning: {w}")?;
    }
    if let Some(sig) = &file.interrupted {
        writeln!(
            out,
            "interrupted by {sig}: {} of {} trials finished",
            file.finished_trials, file.planned_trials
        )?;
    }
    Ok(())
}

/// Write the per-metric summaries as an aligned table.
pub fn table(summary: &BenchSummary, out: &mut impl Write) -> std::io::Result<()> {
    let mut names: Vec<&String> = Vec::new();
    for metrics in summary.values() {
        for (n, s) in metrics {
            if shown(n, s) && !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names.sort();
    // metric, variant and unit are text; the numbers right-aligned
    let mut grid = Grid::new()
        .align(0, Align::Left)
        .align(1, Align::Left)
        .align(8, Align::Left);
    grid.row([
        "metric", "variant", "n", "mean", "p50", "p90", "p99", "cv%", "unit",
    ]);
    for n in names {
        for (variant, metrics) in summary {
            let Some(s) = metrics.get(n) else { continue };
            let d = &s.describe;
            grid.cell(n)
                .cell(variant)
                .cell(d.count)
                .cell(num(d.mean))
                .cell(num(d.p50))
                .cell(num(d.p90))
                .cell(num(d.p99))
                .cell(s.cv_pct.map_or("-".into(), |c| format!("{c:.1}")))
                .cell(&s.unit)
                .end_row();
        }
    }
    grid.write_to(out)
}
