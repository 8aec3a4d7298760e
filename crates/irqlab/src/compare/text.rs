//! `--format text`: plain text at most 72 columns wide, for commit
//! messages. It leads with one line per metric and variant that changed
//! (name, Δ with its interval, verdict), then those whose verdict the
//! family correction took away ("No significant change after
//! correction:"), lists unchanged metrics (each with the smallest change
//! the runs could detect) and all-zero/identical metrics on one line
//! each, then gives the describe grid and tests of the changed metrics
//! only (`--all`: of every metric). Grids are split into blocks of
//! variants that fit; their rows are never wrapped. Prose lines are
//! word-wrapped.

use super::format::{
    changed_line, corrected_line, delta_note, grid, headline, pair_notes, render_grid,
    settings_line, sig_lines, title, wrap, CORRECTED_HEADING,
};
use super::model::{Comparison, Level, MetricReport};
use crate::stats::verdict::Verdict;
use std::io::Write;

/// Maximum line width.
pub const WIDTH: usize = 72;

/// Some variant changed significantly, or a pair has something to say
/// (a refusal, a missing side, a verdict that could not be reached): its
/// details are shown.
pub fn changed(m: &MetricReport) -> bool {
    m.pairs.iter().any(|p| match &p.outcome {
        Ok(t) => t.verdict != Verdict::NoChange,
        Err(_) => !p.missing,
    })
}

/// Every value zero, or every value of every variant the same.
pub fn trivial(m: &MetricReport) -> bool {
    let mut all = m.values.iter().flatten();
    match all.next() {
        None => true,
        Some(first) => all.all(|v| v == first),
    }
}

/// The "No significant change" line: each metric with the smallest
/// change these runs could detect (`name ±X%`; `name ±X–Y%` over several
/// variants: the details give each).
fn quiet_line(quiet: &[&MetricReport]) -> String {
    let entries: Vec<String> = quiet
        .iter()
        .map(|m| {
            let d: Vec<f64> = m
                .pairs
                .iter()
                .filter_map(|p| p.outcome.as_ref().ok()?.mde_pct)
                .collect();
            let (lo, hi) = d
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                    (l.min(v), h.max(v))
                });
            let (lo, hi) = (format!("{lo:.2}"), format!("{hi:.2}"));
            match d.is_empty() {
                true => m.name.clone(),
                false if lo == hi => format!("{} ±{lo}%", m.name),
                false => format!("{} ±{lo}–{hi}%", m.name),
            }
        })
        .collect();
    let list = entries.join(", ");
    if entries.iter().any(|e| e.contains('±')) {
        format!(
            "No significant change; a change smaller than the ± after a name \
             could not be detected with these runs: {list}"
        )
    } else {
        format!("No significant change: {list}")
    }
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
    if let Some(n) = delta_note(c, m) {
        lines.extend(wrap(&format!("  note: {n}"), WIDTH));
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
    let mut changed_lines = Vec::new();
    let mut blocked = Vec::new();
    let mut corrected = Vec::new();
    let mut refused = Vec::new();
    let mut missing = Vec::new();
    let mut quiet: Vec<&MetricReport> = Vec::new();
    let mut zero: Vec<&MetricReport> = Vec::new();
    let mut tested = 0usize;
    let mut detailed: Vec<&str> = Vec::new();
    // Levels whose clusters are single on a side: (level, on both sides).
    let mut unseen: Vec<(Level, bool)> = Vec::new();
    for m in &c.metrics {
        let mut is_quiet = false;
        let mut is_other = false;
        for pair in &m.pairs {
            match &pair.outcome {
                Err(why) if pair.missing => missing.push(format!("  {}: {why}", m.name)),
                Err(why) => refused.push(format!("  {} ({}): {why}", m.name, pair.variant)),
                Ok(t) => {
                    tested += 1;
                    if let Some(l) = changed_line(m, pair) {
                        changed_lines.push(format!("  {l}"));
                        is_other = true;
                    } else if let Some(l) = corrected_line(m, pair) {
                        corrected.push(format!("  {l}"));
                        is_other = true;
                    } else if let Some(n) = pair_notes(c, m, pair, t)
                        .iter()
                        .find(|n| !n.starts_with("one "))
                    {
                        blocked.push(format!(
                            "  {} ({}): {} ~, {n}",
                            m.name,
                            pair.variant,
                            headline(t)
                        ));
                        is_other = true;
                    } else {
                        is_quiet = true;
                        let (level, (nb, nv)) = (t.clusters.level, t.clusters.counts);
                        if level != Level::Trial && nb.min(nv) < 2 {
                            let both = nb.max(nv) < 2;
                            match unseen.iter_mut().find(|(l, _)| *l == level) {
                                Some((_, b)) => *b &= both,
                                None => unseen.push((level, both)),
                            }
                        }
                    }
                }
            }
        }
        if is_other || changed(m) {
            detailed.push(&m.name);
        }
        if is_quiet && !is_other {
            if trivial(m) {
                zero.push(m);
            } else {
                quiet.push(m);
            }
        }
    }
    lines.push(String::new());
    for m in c.metrics.iter().filter(|m| m.headline) {
        for pair in &m.pairs {
            if let Ok(t) = &pair.outcome {
                let verdict = super::format::verdict_cell(c, m, pair);
                lines.extend(wrap(
                    &format!(
                        "Headline {} ({}): {} {verdict}; smallest detectable change {}",
                        m.name,
                        pair.variant,
                        headline(t),
                        super::format::mde(t)
                    ),
                    WIDTH,
                ));
            }
        }
    }
    if !changed_lines.is_empty() {
        lines.push(format!("Changed (vs {}):", c.baseline_label()));
        for l in &changed_lines {
            lines.extend(wrap(l, WIDTH));
        }
    } else if tested > 0 && blocked.is_empty() {
        lines.push("No metric changed significantly.".to_string());
    } else if tested == 0 {
        lines.push("No metric could be tested.".to_string());
    }
    for (head, list) in [
        (CORRECTED_HEADING, &corrected),
        ("No verdict possible:", &blocked),
        ("Not tested:", &refused),
        ("Missing on one side:", &missing),
    ] {
        if !list.is_empty() {
            lines.push(head.to_string());
            for l in list.iter() {
                lines.extend(wrap(l, WIDTH));
            }
        }
    }
    for (level, both) in &unseen {
        let l = level.as_str();
        let side = if *both {
            "a side"
        } else {
            "on one side (or both)"
        };
        lines.extend(wrap(
            &format!(
                "One {l} {side}: between-{l} variation is unseen, so no verdict \
                 can be given (interleave the variants in one bench, or repeat \
                 the {l}s)."
            ),
            WIDTH,
        ));
    }
    let names = |ms: &[&MetricReport]| {
        ms.iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !quiet.is_empty() {
        lines.extend(wrap(&quiet_line(&quiet), WIDTH));
    }
    if !zero.is_empty() {
        lines.extend(wrap(
            &format!("All zero or identical: {}", names(&zero)),
            WIDTH,
        ));
    }
    for m in &c.metrics {
        if all || detailed.contains(&m.name.as_str()) {
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
