//! `--format markdown`: per metric a describe table and a significance
//! table (one row per variant against the baseline), then warnings.

use super::format::{achieved, grid, interval, num, p, pct, settings_line, signed, title};
use super::model::{Comparison, MetricReport};
use std::io::Write;

fn row(cells: &[String]) -> String {
    format!("| {} |", cells.join(" | "))
}

/// Write the markdown report.
pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}", settings_line(c))?;
    let others: Vec<usize> = (0..c.labels.len()).filter(|&i| i != c.baseline).collect();
    for m in &c.metrics {
        writeln!(out, "\n### {}\n", title(m))?;
        if let Some(only) = &m.only_in {
            writeln!(out, "only in: {}\n", only.join(", "))?;
        }
        let g = grid(c, m, &others);
        writeln!(out, "{}", row(&g[0]))?;
        let align: Vec<String> = g[0]
            .iter()
            .enumerate()
            .map(|(i, _)| if i == 0 { "---" } else { "---:" }.to_string())
            .collect();
        writeln!(out, "{}", row(&align))?;
        for r in &g[1..] {
            writeln!(out, "{}", row(r))?;
        }
        significance(c, m, out)?;
        for w in &m.warnings {
            writeln!(out, "- warning: {w}")?;
        }
    }
    if !c.notes.is_empty() {
        writeln!(out)?;
    }
    for n in &c.notes {
        writeln!(out, "- note: {n}")?;
    }
    Ok(())
}

fn significance(c: &Comparison, m: &MetricReport, out: &mut dyn Write) -> std::io::Result<()> {
    if m.pairs.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let head = [
        "variant",
        "Δmedian [95% CI]",
        "Δmean [95% CI]",
        "HL shift [95% CI]",
        "Mann-Whitney",
        "Welch",
        "verdict",
    ];
    writeln!(out, "{}", row(&head.map(String::from)))?;
    writeln!(out, "{}", row(&head.map(|_| "---".to_string())))?;
    for pair in &m.pairs {
        let name = format!("{} vs {}", pair.variant, c.baseline_label());
        let cells = match &pair.outcome {
            Err(why) => vec![
                name,
                why.clone(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                "~".into(),
            ],
            Ok(t) => {
                let rel = |ci: &Option<crate::stats::bootstrap::RelCi>| {
                    ci.as_ref().map_or("-".to_string(), |ci| {
                        format!("{} {}", pct(ci.estimate), interval(ci.lo, ci.hi, pct))
                    })
                };
                vec![
                    name,
                    rel(&t.median),
                    rel(&t.mean),
                    t.hl.as_ref().map_or("-".into(), |hl| {
                        format!(
                            "{} {}{}",
                            signed(hl.shift),
                            interval(hl.lo, hl.hi, signed),
                            achieved(hl.confidence)
                        )
                    }),
                    format!(
                        "U {}, p {} ({})",
                        num(t.mwu.u),
                        p(t.mwu.p),
                        t.mwu.method.as_str()
                    ),
                    t.welch.as_ref().map_or("-".into(), |w| {
                        format!("t {:+.3}, df {:.1}, p {}", w.t, w.df, p(w.p))
                    }),
                    t.verdict.as_str().to_string(),
                ]
            }
        };
        writeln!(out, "{}", row(&cells))?;
    }
    writeln!(out)
}
