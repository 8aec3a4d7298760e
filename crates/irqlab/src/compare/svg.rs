//! `--plot FILE.svg`: a hand-written, self-contained SVG. Per metric one
//! row of two panels: a strip + box plot per variant (box = quartiles,
//! line = median, whiskers = min..max) and the value by trial order, which
//! shows drift. Large inputs are summarised: at most 300 points per variant
//! (a regular sample; the box still uses every value) and a trial-order
//! line of at most 400 bin means, so the file stays small (< 1 MB at
//! 2 × 100 000 values). No scripts, no external resources. Values near
//! the float limits are drawn divided by a power of two (as the statistics
//! are: exact, and no range or midpoint overflows); a metric with a value
//! that is not finite is not drawn, and its row says so in text. No
//! coordinate written is NaN or infinite.

use super::format::num;
use super::model::{Comparison, MetricReport};
use crate::stats::describe::{quantile_sorted, scale_of, scaled, sorted};
use std::fmt::Write as _;
use std::io::Write;

const PANEL_W: f64 = 380.0;
const PANEL_H: f64 = 200.0;
const ROW_H: f64 = 260.0;
const MARGIN: f64 = 50.0;
/// Most points drawn per variant in the strip plot (a regular sample above).
const MAX_POINTS: usize = 300;
/// Most vertices of the trial-order line (bin means above).
const MAX_LINE: usize = 400;
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

/// A metric's values as drawn: divided by `scale` (a power of two, 1 for
/// ordinary data), with their padded range `lo..hi` in those units.
struct Frame {
    values: Vec<Vec<f64>>,
    scale: f64,
    lo: f64,
    hi: f64,
}

/// The frame of `m`, or why its values cannot be drawn.
fn frame(m: &MetricReport) -> Result<Frame, &'static str> {
    if m.values.iter().flatten().any(|v| !v.is_finite()) {
        return Err("a value is not finite");
    }
    let all: Vec<f64> = m.values.iter().flatten().copied().collect();
    let scale = scale_of(&all);
    let values: Vec<Vec<f64>> = m.values.iter().map(|v| scaled(v, scale)).collect();
    let (lo, hi) = range(values.iter().flatten().copied(), f64::MAX / scale);
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return Err("their range is not a finite number");
    }
    Ok(Frame {
        values,
        scale,
        lo,
        hi,
    })
}

/// Range of `values`, padded but kept within ±`limit` (so that its
/// bounds times the scale stay finite).
fn range(values: impl Iterator<Item = f64> + Clone, limit: f64) -> (f64, f64) {
    let lo = values.clone().fold(f64::INFINITY, f64::min);
    let hi = values.fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = if hi > lo {
        (hi - lo) * 0.05
    } else {
        lo.abs().max(1.0) * 0.01
    };
    ((lo - pad).max(-limit), (hi + pad).min(limit))
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
    let _ = writeln!(
        s,
        r#"<text x="{MARGIN}" y="{}" font-weight="bold">{}</text>"#,
        top + 12.0,
        esc(&super::format::title(m))
    );
    match frame(m) {
        Ok(f) => panels(s, c, &f, top),
        Err(why) => {
            let _ = writeln!(
                s,
                r##"<text x="{MARGIN}" y="{}" fill="#a60">the values of {} cannot be drawn: {why}</text>"##,
                top + 40.0,
                esc(&m.name)
            );
        }
    }
}

fn panels(s: &mut String, c: &Comparison, f: &Frame, top: f64) {
    let (lo, hi) = (f.lo, f.hi);
    let y = |v: f64| top + 25.0 + PANEL_H - (v - lo) / (hi - lo) * PANEL_H;
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
                num(v * f.scale)
            );
        }
    }
    let n = c.labels.len() as f64;
    for (i, vals) in f.values.iter().enumerate() {
        if vals.is_empty() {
            continue;
        }
        let color = COLORS[i % COLORS.len()];
        let cx = MARGIN + (i as f64 + 0.5) * PANEL_W / n;
        boxplot(s, vals, cx, color, &y);
        let step = vals.len().div_ceil(MAX_POINTS).max(1);
        for (j, v) in vals.iter().enumerate().step_by(step) {
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
    let binned: Vec<f64>;
    let vals = if vals.len() > MAX_LINE {
        let per = vals.len().div_ceil(MAX_LINE);
        binned = vals
            .chunks(per)
            .map(|c| c.iter().sum::<f64>() / c.len() as f64)
            .collect();
        &binned[..]
    } else {
        vals
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::direction::Direction;

    fn metric(values: Vec<Vec<f64>>) -> MetricReport {
        MetricReport {
            name: "m".into(),
            unit: None,
            direction: Direction::None,
            columns: vec![None; values.len()],
            labels: (0..values.len()).map(|i| format!("v{i}")).collect(),
            values,
            only_in: None,
            base: 0,
            headline: false,
            pairs: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn values_at_the_float_limits_are_drawn_scaled() {
        let m = metric(vec![vec![f64::MAX, 1.7e308], vec![-f64::MAX, -1.7e308]]);
        let f = frame(&m).unwrap();
        assert!(f.scale > 1.0 && f.lo.is_finite() && f.hi > f.lo);
        assert!((f.hi * f.scale).is_finite() && (f.lo * f.scale).is_finite());
    }

    #[test]
    fn a_value_that_is_not_finite_is_said_not_drawn() {
        let m = metric(vec![vec![1.0, f64::INFINITY], vec![2.0, f64::NAN]]);
        let c = Comparison {
            labels: m.labels.clone(),
            baseline: 0,
            settings: crate::compare::model::Settings {
                alpha: 0.05,
                noise_pct: 1.0,
                resamples: 100,
                seed: 1,
                directions: crate::compare::DirectionRules::default(),
            },
            metrics: vec![m],
            notes: Vec::new(),
        };
        let s = render(&c);
        assert!(s.contains("the values of m cannot be drawn: a value is not finite"));
        assert!(!s.contains("NaN") && !s.contains("inf"), "{s}");
    }
}
