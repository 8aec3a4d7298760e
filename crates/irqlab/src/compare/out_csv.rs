//! `--format csv`: one row per metric and variant with the describe
//! columns, the relative change of every describe row and, for
//! non-baseline variants, the test results. Written through the `csv`
//! crate (quoting); undefined values are empty cells. Numbers keep 12
//! significant digits, percents 10 decimals (12 digits of the ratio to the
//! baseline): the shortest text that reads back as that rounded value, so
//! the last-bit noise of the arithmetic (`2.1999999999999997`) is not
//! printed and no measured digit is lost. Columns are only ever added at
//! the end (`delta_note` last), so readers by position keep working.

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
            "detectable_change_note",
            "delta_note",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    h
}

/// Significant digits of a CSV number: more than any measurement has, fewer
/// than the 15 to 17 where the noise of floating-point arithmetic shows.
const SIG_DIGITS: usize = 12;

/// Decimals of a CSV percent: [`SIG_DIGITS`] of the ratio to the baseline
/// (100 % is 1), so a delta of two equal values computed apart is `0`.
const PCT_DECIMALS: usize = SIG_DIGITS - 2;

/// A value cell: [`num`], empty when undefined.
fn n(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map_or(String::new(), num)
}

/// A percent cell: [`pct`], empty when undefined.
fn np(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map_or(String::new(), pct)
}

/// `x` rounded to [`SIG_DIGITS`] significant digits, in its shortest form:
/// plain decimals from 1e-4 to 1e15, else scientific (`1.2e-7`), never `-0`.
fn num(x: f64) -> String {
    shortest(format!("{x:.*e}", SIG_DIGITS - 1).parse().unwrap_or(x))
}

/// A percent rounded to [`PCT_DECIMALS`] decimals, as [`num`] prints.
fn pct(x: f64) -> String {
    shortest(format!("{x:.PCT_DECIMALS$}").parse().unwrap_or(x))
}

/// The shortest text that reads back as `x`.
fn shortest(x: f64) -> String {
    let mag = x.abs();
    if mag == 0.0 {
        "0".to_string()
    } else if (1e-4..1e15).contains(&mag) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
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
    cells.extend(delta.iter().map(|v| np(*v)));
    let pair = m.pairs.iter().find(|p| &p.variant == label);
    match pair.map(|p| &p.outcome) {
        Some(Ok(t)) => {
            for ci in [&t.median, &t.mean] {
                let ci = ci.as_ref();
                cells.extend([
                    np(ci.map(|c| c.estimate)),
                    np(ci.map(|c| c.lo)),
                    np(ci.map(|c| c.hi)),
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
            cells.push(np(t.mde_pct));
            cells.push(t.clusters.level.as_str().to_string());
            cells.push(super::format::detectable_note(t).unwrap_or_default());
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
            cells.extend(vec![String::new(); 4]);
        }
    }
    // why this row's delta cells are empty although both values exist
    let zero = (i != c.baseline).then(|| super::format::delta_note(c, m));
    cells.push(zero.flatten().unwrap_or_default());
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_drop_arithmetic_noise_and_keep_measured_digits() {
        assert_eq!(num(2.1999999999999997), "2.2");
        assert_eq!(num(0.8999999999999999), "0.9");
        assert_eq!(num(14.000000000000002), "14");
        assert_eq!(num(123_456_789_012.0), "123456789012");
        assert_eq!(num(0.000_123_456_789_012_3), "0.000123456789012");
        assert_eq!(num(1.2e-7), "1.2e-7");
        assert_eq!(num(6.2940135409062625e-12), "6.29401354091e-12");
        assert_eq!(num(1e-300), "1e-300");
        assert_eq!(num(1.5e300), "1.5e300");
        assert_eq!(num(-0.0), "0");
        assert_eq!(pct(84.65608465608466), "84.6560846561");
        assert_eq!(pct(-5.774562292082353e-14), "0");
        assert_eq!(pct(-11.999999999999993), "-12");
        for x in [2.2, 1e-7, 123.456, 6.02e23] {
            assert_eq!(num(x).parse::<f64>().ok(), Some(x));
        }
    }
}
