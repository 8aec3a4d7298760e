//! `--format csv`: one row per metric and variant with the describe
//! columns and, for non-baseline variants, the deltas and test results.
//! Undefined values are empty cells.

use super::model::{Comparison, MetricReport};
use std::io::Write;

const HEADER: &str = "metric,unit,direction,variant,is_baseline,count,mean,std,min,p50,p90,p99,max,\
delta_mean_pct,delta_median_pct,median_change_pct,median_lo,median_hi,mean_change_pct,mean_lo,mean_hi,\
hl_shift,hl_lo,hl_hi,mwu_u,mwu_p,mwu_method,welch_t,welch_df,welch_p,verdict,note";

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn n(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite())
        .map_or(String::new(), |v| v.to_string())
}

/// Write the CSV table.
pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{HEADER}")?;
    for m in &c.metrics {
        for i in 0..c.labels.len() {
            if m.columns[i].is_some() {
                writeln!(out, "{}", line(c, m, i))?;
            }
        }
    }
    Ok(())
}

fn line(c: &Comparison, m: &MetricReport, i: usize) -> String {
    let label = &c.labels[i];
    let mut cells = vec![
        field(&m.name),
        field(m.unit.as_deref().unwrap_or("")),
        m.direction.as_str().to_string(),
        field(label),
        (i == c.baseline).to_string(),
    ];
    let rows = m.columns[i].as_ref().map(|d| d.rows()).unwrap_or([None; 8]);
    cells.extend(rows.iter().map(|v| n(*v)));
    let delta = m
        .delta_rows(c.baseline, i)
        .filter(|_| i != c.baseline)
        .unwrap_or([None; 8]);
    cells.push(n(delta[1]));
    cells.push(n(delta[4]));
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
            ]);
            cells.extend([
                n(Some(t.mwu.u)),
                n(Some(t.mwu.p)),
                t.mwu.method.as_str().to_string(),
            ]);
            let w = t.welch.as_ref();
            cells.extend([n(w.map(|w| w.t)), n(w.map(|w| w.df)), n(w.map(|w| w.p))]);
            cells.push(t.verdict.as_str().to_string());
            cells.push(String::new());
        }
        other => {
            cells.extend(vec![String::new(); 16]);
            cells.push(match other {
                Some(Err(why)) => field(why),
                _ => String::new(),
            });
        }
    }
    cells.join(",")
}
