//! `--format csv`: one row per metric and variant with the describe
//! columns, the relative change of every describe row and, for
//! non-baseline variants, the test results. Written through the `csv`
//! crate (quoting); undefined values are empty cells.

use super::model::{Comparison, MetricReport};
use std::io::Write;

const ROW_KEYS: [&str; 8] = ["count", "mean", "std", "min", "p50", "p90", "p99", "max"];

fn header() -> Vec<String> {
    let mut h: Vec<String> = ["metric", "unit", "direction", "variant", "is_baseline"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    h.extend(ROW_KEYS.iter().map(|k| k.to_string()));
    h.extend(ROW_KEYS.iter().map(|k| format!("delta_{k}_pct")));
    h.extend(
        [
            "median_change_pct",
            "median_lo",
            "median_hi",
            "mean_change_pct",
            "mean_lo",
            "mean_hi",
            "hl_shift",
            "hl_lo",
            "hl_hi",
            "hl_confidence",
            "mwu_u",
            "mwu_p",
            "mwu_method",
            "welch_t",
            "welch_df",
            "welch_p",
            "verdict",
            "note",
            "verdict_p",
            "detectable_change_pct",
            "unit_of_replication",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    h
}

fn n(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite())
        .map_or(String::new(), |v| v.to_string())
}

/// Write the CSV table.
pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(header())?;
    for m in &c.metrics {
        for i in 0..c.labels.len() {
            let missing = m
                .pairs
                .iter()
                .any(|p| p.missing && p.variant == c.labels[i]);
            if m.columns[i].is_some() || missing {
                w.write_record(line(c, m, i))?;
            }
        }
    }
    w.flush()
}

fn line(c: &Comparison, m: &MetricReport, i: usize) -> Vec<String> {
    let label = &c.labels[i];
    let mut cells = vec![
        m.name.clone(),
        m.unit.clone().unwrap_or_default(),
        m.direction.as_str().to_string(),
        label.clone(),
        (i == c.baseline).to_string(),
    ];
    let rows = m.columns[i].as_ref().map(|d| d.rows()).unwrap_or([None; 8]);
    cells.extend(rows.iter().map(|v| n(*v)));
    let delta = m
        .delta_rows(c.baseline, i)
        .filter(|_| i != c.baseline)
        .unwrap_or([None; 8]);
    cells.extend(delta.iter().map(|v| n(*v)));
    let pair = m.pairs.iter().find(|p| &p.variant == label);
    match pair.map(|p| &p.outcome) {
        Some(Ok(t)) => {
            for ci in [&t.median, &t.mean] {
                let ci = ci.as_ref();
                cells.extend([
                    n(ci.map(|c| c.estimate)),
                    n(ci.map(|c| c.lo)),
                    n(ci.map(|c| c.hi)),
                ]);
            }
            let hl = t.hl.as_ref();
            cells.extend([
                n(hl.map(|h| h.shift)),
                n(hl.map(|h| h.lo)),
                n(hl.map(|h| h.hi)),
                n(hl.map(|h| h.confidence)),
            ]);
            cells.extend([
                n(Some(t.mwu.u)),
                n(Some(t.mwu.p)),
                t.mwu.method.as_str().to_string(),
            ]);
            let w = t.welch.as_ref();
            cells.extend([n(w.map(|w| w.t)), n(w.map(|w| w.df)), n(w.map(|w| w.p))]);
            cells.push(t.verdict.as_str().to_string());
            let notes = pair
                .map(|p| super::format::pair_notes(c, m, p, t))
                .unwrap_or_default();
            cells.push(notes.join("; "));
            cells.push(n(Some(t.p_family)));
            cells.push(n(t.mde_pct));
            cells.push(t.clusters.level.as_str().to_string());
        }
        other => {
            cells.extend(vec![String::new(); 16]);
            let (verdict, note) = match (other, pair) {
                (Some(Err(why)), Some(p)) if p.missing => ("missing", why.clone()),
                (Some(Err(why)), _) => ("not tested", why.clone()),
                _ => ("", String::new()),
            };
            cells.push(verdict.to_string());
            cells.push(note);
            cells.extend(vec![String::new(); 3]);
        }
    }
    cells
}
