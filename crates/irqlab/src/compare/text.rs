//! `--format text`: plain text at most 72 columns wide, for commit
//! messages. Variants are shown two at a time beside the baseline and long
//! lines are wrapped.

use super::format::{grid, render_grid, settings_line, sig_lines, title, wrap};
use super::model::Comparison;
use std::io::Write;

/// Maximum line width.
pub const WIDTH: usize = 72;

/// Write the 72-column text report.
pub fn write(c: &Comparison, _all: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let mut lines = vec![settings_line(c)];
    let others: Vec<usize> = (0..c.labels.len()).filter(|&i| i != c.baseline).collect();
    for m in &c.metrics {
        lines.push(String::new());
        lines.push(title(m));
        if let Some(only) = &m.only_in {
            lines.push(format!("  only in: {}", only.join(", ")));
        }
        let per_chunk = if m.is_pct() { 1 } else { 2 };
        for chunk in others.chunks(per_chunk) {
            lines.extend(
                render_grid(&grid(c, m, chunk))
                    .into_iter()
                    .map(|l| format!("  {l}")),
            );
        }
        for pair in &m.pairs {
            lines.extend(sig_lines(c, m, pair).into_iter().map(|l| format!("  {l}")));
        }
        lines.extend(m.warnings.iter().map(|w| format!("  warning: {w}")));
    }
    if !c.notes.is_empty() {
        lines.push(String::new());
    }
    lines.extend(c.notes.iter().map(|n| format!("note: {n}")));
    for line in lines {
        for l in wrap(&line, WIDTH) {
            writeln!(out, "{l}")?;
        }
    }
    Ok(())
}
