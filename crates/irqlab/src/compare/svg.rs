//! `--plot FILE.svg`: a hand-written, self-contained SVG. Per metric one
//! row of two panels: a strip + box plot per variant (box = quartiles,
//! line = median, whiskers = min..max) and the value by trial order, which
//! shows drift. No scripts, no external resources.

use super::format::num;
use super::model::{Comparison, MetricReport};
use crate::stats::describe::{quantile_sorted, sorted};
use std::fmt::Write as _;
use std::io::Write;

const PANEL_W: f64 = 380.0;
const PANEL_H: f64 = 200.0;
const ROW_H: f64 = 260.0;
const MARGIN: f64 = 50.0;
const COLORS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];

/// Escape text for XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Value range of a metric over all variants, padded.
fn range(m: &MetricReport) -> (f64, f64) {
    let all = m.values.iter().flatten();
    let lo = all.clone().copied().fold(f64::INFINITY, f64::min);
    let hi = all.copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = if hi > lo {
        (hi - lo) * 0.05
    } else {
        lo.abs().max(1.0) * 0.01
    };
    (lo - pad, hi + pad)
}

/// The SVG document as a string.
pub fn render(c: &Comparison) -> String {
    let width = 2.0 * PANEL_W + 3.0 * MARGIN;
    let height = ROW_H * c.metrics.len().max(1) as f64 + 30.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (k, (i, l)) in c.labels.iter().enumerate().enumerate() {
        let x = MARGIN + k as f64 * 120.0;
        let _ = writeln!(
            s,
            r#"<circle cx="{x}" cy="14" r="4" fill="{}"/><text x="{}" y="18">{}</text>"#,
            COLORS[i % COLORS.len()],
            x + 8.0,
            esc(l)
        );
    }
    for (row, m) in c.metrics.iter().enumerate() {
        let top = 30.0 + row as f64 * ROW_H;
        metric_row(&mut s, c, m, top);
    }
    s.push_str("</svg>\n");
    s
}

fn metric_row(s: &mut String, c: &Comparison, m: &MetricReport, top: f64) {
    let (lo, hi) = range(m);
    let y = |v: f64| top + 25.0 + PANEL_H - (v - lo) / (hi - lo) * PANEL_H;
    let _ = writeln!(
        s,
        r#"<text x="{MARGIN}" y="{}" font-weight="bold">{}</text>"#,
        top + 12.0,
        esc(&super::format::title(m))
    );
    for (x0, caption) in [
        (MARGIN, "distribution"),
        (2.0 * MARGIN + PANEL_W, "by trial order"),
    ] {
        let _ = writeln!(
            s,
            r##"<rect x="{x0}" y="{}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#999"/><text x="{}" y="{}" fill="#555">{caption}</text>"##,
            top + 25.0,
            x0 + PANEL_W - 80.0,
            top + 22.0
        );
        for v in [lo, (lo + hi) / 2.0, hi] {
            let _ = writeln!(
                s,
                r##"<text x="{}" y="{}" text-anchor="end" fill="#555">{}</text>"##,
                x0 - 3.0,
                y(v) + 4.0,
                num(v)
            );
        }
    }
    let n = c.labels.len() as f64;
    for (i, vals) in m.values.iter().enumerate() {
        if vals.is_empty() {
            continue;
        }
        let color = COLORS[i % COLORS.len()];
        let cx = MARGIN + (i as f64 + 0.5) * PANEL_W / n;
        boxplot(s, vals, cx, color, &y);
        for (j, v) in vals.iter().enumerate() {
            let jitter = ((j * 37 % 17) as f64 / 16.0 - 0.5) * 20.0;
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{color}" fill-opacity="0.6"/>"#,
                cx + 30.0 + jitter,
                y(*v)
            );
        }
        trial_order(s, vals, color, &y);
    }
}

fn boxplot(s: &mut String, vals: &[f64], cx: f64, color: &str, y: &dyn Fn(f64) -> f64) {
    let sv = sorted(vals);
    let q = |p: f64| y(quantile_sorted(&sv, p));
    let (q1, q2, q3) = (q(0.25), q(0.5), q(0.75));
    let (mn, mx) = (y(sv[0]), y(sv[sv.len() - 1]));
    let _ = writeln!(
        s,
        r#"<g stroke="{color}" fill="none"><line x1="{cx}" y1="{mn:.1}" x2="{cx}" y2="{q1:.1}"/><line x1="{cx}" y1="{q3:.1}" x2="{cx}" y2="{mx:.1}"/><rect x="{}" y="{q3:.1}" width="24" height="{:.1}"/><line x1="{}" y1="{q2:.1}" x2="{}" y2="{q2:.1}" stroke-width="2"/></g>"#,
        cx - 12.0,
        (q1 - q3).max(0.5),
        cx - 12.0,
        cx + 12.0
    );
}

fn trial_order(s: &mut String, vals: &[f64], color: &str, y: &dyn Fn(f64) -> f64) {
    let x0 = 2.0 * MARGIN + PANEL_W;
    let step = PANEL_W / (vals.len().max(2) - 1) as f64;
    let pts: Vec<String> = vals
        .iter()
        .enumerate()
        .map(|(j, v)| format!("{:.1},{:.1}", x0 + j as f64 * step, y(*v)))
        .collect();
    let _ = writeln!(
        s,
        r#"<polyline points="{}" fill="none" stroke="{color}" stroke-opacity="0.7"/>"#,
        pts.join(" ")
    );
}

/// Write the SVG document.
pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    out.write_all(render(c).as_bytes())
}
