//! The summary table printed at the end of a bench run: per metric and
//! variant, mean, p50, p90, p99 and the coefficient of variation. Per-CPU
//! metrics and idle softirq vectors are left to `summary.json`. Laid out
//! by the one grid writer (`export::grid`).

use super::results::{BenchSummary, MetricSummary};
use crate::export::grid::{Align, Grid};
use std::io::Write;

fn shown(name: &str, s: &MetricSummary) -> bool {
    let per_cpu = name
        .split('_')
        .any(|p| p.len() > 3 && p.starts_with("cpu") && p[3..].bytes().all(|b| b.is_ascii_digit()));
    let idle_softirq =
        name.starts_with("softirq_") && name.ends_with("_per_sec") && s.describe.mean < 1.0;
    !per_cpu && !idle_softirq
}

fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{v:.4e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// Write the summary as an aligned table.
pub fn write(summary: &BenchSummary, out: &mut impl Write) -> std::io::Result<()> {
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
