//! `--format text`: plain text at most 72 columns wide, for commit
//! messages. It leads with one line per metric and variant that changed
//! (name, Δ with its interval, verdict), lists unchanged metrics and
//! all-zero/identical metrics on one line each, then gives the describe
//! grid and tests of the changed metrics only (`--all`: of every metric).
//! Grids are split into blocks of variants that fit; their rows are never
//! wrapped. Prose lines are word-wrapped.

use super::format::{grid, headline, render_grid, settings_line, sig_lines, title, wrap};
use super::model::{Comparison, MetricReport, Pair};
use crate::stats::verdict::Verdict;
use std::io::Write;

/// Maximum line width.
pub const WIDTH: usize = 72;

/// The verdict of a tested pair (`None` when refused).
fn verdict(p: &Pair) -> Option<Verdict> {
    p.outcome.as_ref().ok().map(|t| t.verdict)
}

/// Some variant changed significantly, or a comparison was refused (its
/// reason must be shown).
pub fn changed(m: &MetricReport) -> bool {
    m.pairs
        .iter()
        .any(|p| verdict(p).is_none_or(|v| v != Verdict::NoChange))
}

/// Every value zero, or every value of every variant the same.
pub fn trivial(m: &MetricReport) -> bool {
    let mut all = m.values.iter().flatten();
    match all.next() {
        None => true,
        Some(first) => all.all(|v| v == first),
    }
}

/// One summary line per changed pair.
fn summary(m: &MetricReport, p: &Pair) -> Option<String> {
    let t = p.outcome.as_ref().ok()?;
    if t.verdict == Verdict::NoChange {
        return None;
    }
    let delta = headline(t);
    Some(format!(
        "  {} ({}): {delta} {}",
        m.name,
        p.variant,
        t.verdict.as_str()
    ))
}

/// Groups of variant indices whose grid fits in `WIDTH` (at least one each).
fn blocks(c: &Comparison, m: &MetricReport, others: &[usize]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut cur: Vec<usize> = Vec::new();
    for &i in others {
        cur.push(i);
        let fits = render_grid(&grid(c, m, &cur))
            .iter()
            .all(|l| l.chars().count() + 2 <= WIDTH);
        if !fits && cur.len() > 1 {
            cur.pop();
            out.push(std::mem::take(&mut cur));
            cur.push(i);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn details(c: &Comparison, m: &MetricReport, others: &[usize], lines: &mut Vec<String>) {
    lines.push(String::new());
    lines.extend(wrap(&title(m), WIDTH));
    if let Some(only) = &m.only_in {
        lines.extend(wrap(&format!("  only in: {}", only.join(", ")), WIDTH));
    }
    for block in blocks(c, m, others) {
        lines.extend(
            render_grid(&grid(c, m, &block))
                .into_iter()
                .map(|l| format!("  {l}")),
        );
    }
    for pair in &m.pairs {
        for l in sig_lines(c, m, pair) {
            lines.extend(wrap(&format!("  {l}"), WIDTH));
        }
    }
    for w in &m.warnings {
        lines.extend(wrap(&format!("  warning: {w}"), WIDTH));
    }
}

/// Write the 72-column text report; `all` details every metric.
pub fn write(c: &Comparison, all: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let mut lines = wrap(&settings_line(c), WIDTH);
    let others: Vec<usize> = (0..c.labels.len()).filter(|&i| i != c.baseline).collect();
    let (zero, rest): (Vec<&MetricReport>, Vec<&MetricReport>) =
        c.metrics.iter().partition(|m| trivial(m));
    let (moved, quiet): (Vec<&MetricReport>, Vec<&MetricReport>) =
        rest.into_iter().partition(|m| changed(m));
    lines.push(String::new());
    if moved.is_empty() {
        lines.push("No metric changed significantly.".to_string());
    } else {
        lines.push(format!("Changed (vs {}):", c.baseline_label()));
        for m in &moved {
            for p in &m.pairs {
                if let Some(l) = summary(m, p) {
                    lines.extend(wrap(&l, WIDTH));
                }
            }
        }
    }
    let names = |ms: &[&MetricReport]| {
        ms.iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !quiet.is_empty() {
        lines.extend(wrap(
            &format!("No significant change: {}", names(&quiet)),
            WIDTH,
        ));
    }
    if !zero.is_empty() {
        lines.extend(wrap(
            &format!("All zero or identical: {}", names(&zero)),
            WIDTH,
        ));
    }
    for m in &c.metrics {
        if all || moved.iter().any(|x| std::ptr::eq(*x, m)) {
            details(c, m, &others, &mut lines);
        }
    }
    if !c.notes.is_empty() {
        lines.push(String::new());
    }
    for n in &c.notes {
        lines.extend(wrap(&format!("note: {n}"), WIDTH));
    }
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
