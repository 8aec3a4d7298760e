//! `--format markdown`: a summary (the pairs that changed, and those whose
//! change the family correction took away), then per metric a describe
//! table and a significance table (one row per variant against the
//! baseline), then warnings.

use super::format::{
    achieved, changed_line, corrected_line, delta_note, detectable_note, grid, interval, mde, num,
    p, pair_notes, pct, settings_line, signed, title, verdict_cell, CORRECTED_HEADING,
};
use super::model::{Comparison, MetricReport};
use std::io::Write;

/// Escape text for a markdown table cell or line: `|` would end a cell,
/// `<` and `&` would start HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('|', "\\|")
}

fn row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| esc(c)).collect();
    format!("| {} |", cells.join(" | "))
}

/// Write the markdown report.
pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}", esc(&settings_line(c)))?;
    summary(c, out)?;
    let others: Vec<usize> = (0..c.labels.len()).filter(|&i| i != c.baseline).collect();
    for m in &c.metrics {
        writeln!(out, "\n### {}\n", esc(&title(m)))?;
        if let Some(only) = &m.only_in {
            writeln!(out, "only in: {}\n", esc(&only.join(", ")))?;
        }
        let g = grid(c, m, &others);
        writeln!(out, "{}", row(&g[0]))?;
        let align: Vec<String> = g[0]
            .iter()
            .enumerate()
            .map(|(i, _)| if i == 0 { "---" } else { "---:" }.to_string())
            .collect();
        writeln!(out, "| {} |", align.join(" | "))?;
        for r in &g[1..] {
            writeln!(out, "{}", row(r))?;
        }
        if let Some(n) = delta_note(c, m) {
            writeln!(out, "\n- note: {}", esc(&n))?;
        }
        significance(c, m, out)?;
        for w in &m.warnings {
            writeln!(out, "- warning: {}", esc(w))?;
        }
    }
    if !c.notes.is_empty() {
        writeln!(out)?;
    }
    for n in &c.notes {
        writeln!(out, "- note: {}", esc(n))?;
    }
    Ok(())
}

/// The changed pairs, and those the family correction took a change
/// from, each under its heading (none when empty).
fn summary(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    let pairs = || {
        c.metrics
            .iter()
            .flat_map(|m| m.pairs.iter().map(move |p| (m, p)))
    };
    let changed: Vec<String> = pairs().filter_map(|(m, p)| changed_line(m, p)).collect();
    let corrected: Vec<String> = pairs().filter_map(|(m, p)| corrected_line(m, p)).collect();
    let changed_head = format!("Changed (vs {}):", c.baseline_label());
    for (head, list) in [
        (changed_head.as_str(), changed),
        (CORRECTED_HEADING, corrected),
    ] {
        if list.is_empty() {
            continue;
        }
        writeln!(out, "\n**{}**\n", esc(head))?;
        for l in list {
            writeln!(out, "- {}", esc(&l))?;
        }
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
        "detectable",
        "verdict",
    ];
    writeln!(out, "{}", row(&head.map(String::from)))?;
    writeln!(out, "|{}", " --- |".repeat(head.len()))?;
    let mut notes = Vec::new();
    for pair in &m.pairs {
        let name = format!("{} vs {}", pair.variant, c.baseline_label());
        let verdict = verdict_cell(c, m, pair);
        let cells = match &pair.outcome {
            Err(_) => vec![
                name,
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                verdict,
            ],
            Ok(t) => {
                for n in pair_notes(c, m, pair, t)
                    .into_iter()
                    .chain(detectable_note(t))
                {
                    notes.push(format!("{name}: {n}"));
                }
                let rel = |ci: &Option<crate::stats::bootstrap::RelCi>, why: &Option<String>| {
                    ci.as_ref().map_or_else(
                        || format!("- ({})", why.as_deref().unwrap_or("undefined")),
                        |ci| format!("{} {}", pct(ci.estimate), interval(ci.lo, ci.hi, pct)),
                    )
                };
                vec![
                    name,
                    rel(&t.median, &t.median_note),
                    rel(&t.mean, &t.mean_note),
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
                    mde(t),
                    verdict,
                ]
            }
        };
        writeln!(out, "{}", row(&cells))?;
    }
    writeln!(out)?;
    for n in notes {
        writeln!(out, "- note: {}", esc(&n))?;
    }
    Ok(())
}
