//! `--html FILE`: one self-contained HTML page (inline CSS and SVG, no
//! scripts or external resources) with the settings, the verdict table
//! (`#verdicts`: one row per metric and variant), per-metric describe and
//! significance tables, warnings and the plots (`#plots`).

use super::format::{delta_note, grid, settings_line, sig_lines, title, verdict_rows};
use super::model::Comparison;
use super::svg::esc;
use std::io::Write;

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
td:first-child,th:first-child{text-align:left}pre{background:#f6f6f6;padding:.5em}\
.warn{color:#a60}";

fn table(rows: &[Vec<String>], attrs: &str) -> String {
    let mut s = format!("<table{attrs}>\n");
    for (i, r) in rows.iter().enumerate() {
        let tag = if i == 0 { "th" } else { "td" };
        let cells: String = r
            .iter()
            .map(|c| format!("<{tag}>{}</{tag}>", esc(c)))
            .collect();
        s.push_str(&format!("<tr>{cells}</tr>\n"));
    }
    s.push_str("</table>\n");
    s
}

/// Write the HTML report.
pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    )?;
    writeln!(
        out,
        "<title>irqlab compare</title><style>{STYLE}</style></head><body>"
    )?;
    writeln!(
        out,
        "<h1>irqlab compare</h1>\n<p>{}</p>",
        esc(&settings_line(c))
    )?;
    writeln!(out, "<h2>Verdicts</h2>")?;
    out.write_all(table(&verdict_rows(c), " id=\"verdicts\"").as_bytes())?;
    let others: Vec<usize> = (0..c.labels.len()).filter(|&i| i != c.baseline).collect();
    for m in &c.metrics {
        writeln!(out, "<h2>{}</h2>", esc(&title(m)))?;
        if let Some(only) = &m.only_in {
            writeln!(out, "<p>only in: {}</p>", esc(&only.join(", ")))?;
        }
        out.write_all(table(&grid(c, m, &others), "").as_bytes())?;
        if let Some(n) = delta_note(c, m) {
            writeln!(out, "<p>note: {}</p>", esc(&n))?;
        }
        let sig: Vec<String> = m.pairs.iter().flat_map(|p| sig_lines(c, m, p)).collect();
        if !sig.is_empty() {
            writeln!(out, "<pre>{}</pre>", esc(&sig.join("\n")))?;
        }
        for w in &m.warnings {
            writeln!(out, "<p class=\"warn\">warning: {}</p>", esc(w))?;
        }
    }
    for n in &c.notes {
        writeln!(out, "<p class=\"warn\">note: {}</p>", esc(n))?;
    }
    writeln!(out, "<h2>Plots</h2>\n<div id=\"plots\">")?;
    out.write_all(super::svg::render(c).as_bytes())?;
    writeln!(out, "</div>\n</body></html>")
}
