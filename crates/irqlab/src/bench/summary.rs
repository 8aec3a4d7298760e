//! The summary table printed at the end of a bench run: per metric and
//! variant, mean, p50, p90, p99 and the coefficient of variation. Per-CPU
//! metrics and idle softirq vectors are left to `summary.json`.

use super::results::{MetricSummary, Summary};
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
pub fn write(summary: &Summary, out: &mut impl Write) -> std::io::Result<()> {
    let mut names: Vec<&String> = Vec::new();
    for metrics in summary.values() {
        for (n, s) in metrics {
            if shown(n, s) && !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names.sort();
    let mut grid = vec![[
        "metric", "variant", "n", "mean", "p50", "p90", "p99", "cv%", "unit",
    ]
    .map(String::from)
    .to_vec()];
    for n in names {
        for (variant, metrics) in summary {
            let Some(s) = metrics.get(n) else { continue };
            let d = &s.describe;
            grid.push(vec![
                n.clone(),
                variant.clone(),
                d.count.to_string(),
                num(d.mean),
                num(d.p50),
                num(d.p90),
                num(d.p99),
                s.cv_pct.map_or("-".into(), |c| format!("{c:.1}")),
                s.unit.clone(),
            ]);
        }
    }
    let widths: Vec<usize> = (0..9)
        .map(|c| grid.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for row in &grid {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i < 2 || i == 8 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
    }
    Ok(())
}
