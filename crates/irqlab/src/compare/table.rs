//! Terminal table output (the default): per metric a describe grid with all
//! variants side by side, the significance block and warnings.

use super::format::{delta_note, grid, render_grid, settings_line, sig_lines, title};
use super::model::Comparison;
use std::io::Write;

/// Write the terminal table.
pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}", settings_line(c))?;
    let others: Vec<usize> = (0..c.labels.len()).filter(|&i| i != c.baseline).collect();
    for m in &c.metrics {
        writeln!(out)?;
        writeln!(out, "{}", title(m))?;
        if let Some(only) = &m.only_in {
            writeln!(out, "  only in: {}", only.join(", "))?;
        }
        for line in render_grid(&grid(c, m, &others)) {
            writeln!(out, "  {line}")?;
        }
        if let Some(n) = delta_note(c, m) {
            writeln!(out, "  note: {n}")?;
        }
        for pair in &m.pairs {
            for line in sig_lines(c, m, pair) {
                writeln!(out, "  {line}")?;
            }
        }
        for w in &m.warnings {
            writeln!(out, "  warning: {w}")?;
        }
    }
    if !c.notes.is_empty() {
        writeln!(out)?;
    }
    for n in &c.notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(())
}
