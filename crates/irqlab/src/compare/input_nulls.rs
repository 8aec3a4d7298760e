//! Values an input marks as missing: a JSON `null`, an empty CSV cell,
//! `NaN`, `-` or `null` as text (in tables, trials.jsonl, plain files and
//! probe result sets). Such a value is skipped, never read as 0
//! and never the end of the input, and a note names the file, where (line,
//! trial or item, numbered as in the file) and the metric; `n` counts only
//! the values present. Specified in `docs/compare-input.md`.

use super::input::parse_number;
use anyhow::Result;
use serde_json::Value;
use std::path::Path;

/// Places listed in one note before the rest is counted.
const SHOWN: usize = 5;

/// A cell or line's text that marks a value as missing.
pub fn is_null_text(text: &str) -> bool {
    let t = text.trim();
    t.is_empty() || t == "-" || t.eq_ignore_ascii_case("nan") || t.eq_ignore_ascii_case("null")
}

/// A number, `None` for a missing value ([`is_null_text`]); anything else
/// that is not a finite number is an error naming the file and line.
pub fn parse_cell(path: &Path, line: usize, text: &str) -> Result<Option<f64>> {
    if is_null_text(text) {
        return Ok(None);
    }
    parse_number(path, line, text).map(Some)
}

/// A JSON value where a number is expected.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JsonCell {
    Number(f64),
    /// `null`, or a string [`is_null_text`] reads as missing.
    Missing,
    /// No such field, or something that is not a number.
    Absent,
}

/// What a field (`None`: not there) holds where a number is expected.
pub fn json_cell(v: Option<&Value>) -> JsonCell {
    match v {
        None => JsonCell::Absent,
        Some(Value::Null) => JsonCell::Missing,
        Some(Value::String(t)) if is_null_text(t) => JsonCell::Missing,
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .map_or(JsonCell::Absent, JsonCell::Number),
    }
}

/// The missing values of one input, in the order met.
#[derive(Debug, Default)]
pub struct Skipped {
    /// (metric, where: `line 4 (trial 3)`, `item 2`).
    pub at: Vec<(String, String)>,
}

impl Skipped {
    pub fn add(&mut self, metric: &str, place: String) {
        self.at.push((metric.to_string(), place));
    }

    /// One note per metric: `{file}: {metric}: no value at line 4 (trial
    /// 3), …: skipped (k values; n counts only the values present)`.
    pub fn notes(&self, file: &Path) -> Vec<String> {
        let mut metrics: Vec<&str> = Vec::new();
        for (m, _) in &self.at {
            if !metrics.contains(&m.as_str()) {
                metrics.push(m);
            }
        }
        metrics
            .into_iter()
            .map(|m| {
                let places: Vec<&str> = self
                    .at
                    .iter()
                    .filter(|(x, _)| x == m)
                    .map(|(_, p)| p.as_str())
                    .collect();
                let mut shown = places[..places.len().min(SHOWN)].join(", ");
                if places.len() > SHOWN {
                    shown.push_str(&format!(" and {} more", places.len() - SHOWN));
                }
                let k = places.len();
                let s = if k == 1 { "" } else { "s" };
                format!(
                    "{}: {m}: no value at {shown}: skipped ({k} value{s}; n counts only \
                     the values present)",
                    file.display()
                )
            })
            .collect()
    }
}

/// `line L (trial T)`, or `line L` without a trial number.
pub fn line_place(line: usize, trial: Option<&str>) -> String {
    match trial {
        Some(t) => format!("line {line} (trial {t})"),
        None => format!("line {line}"),
    }
}

/// The notes for the `lines` of a one-metric file that hold no value.
pub fn line_notes(path: &Path, metric: &str, lines: &[usize]) -> Vec<String> {
    let mut skipped = Skipped::default();
    for &line in lines {
        skipped.add(metric, line_place(line, None));
    }
    skipped.notes(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn null_marks_and_numbers() {
        let p = Path::new("t.csv");
        for t in ["", " ", "-", "NaN", "nan", "null", "NULL"] {
            assert_eq!(parse_cell(p, 1, t).unwrap(), None, "{t:?}");
        }
        assert_eq!(parse_cell(p, 1, " 2.5 ").unwrap(), Some(2.5));
        assert!(parse_cell(p, 1, "inf").is_err());
        assert!(parse_cell(p, 1, "abc").is_err());
    }

    #[test]
    fn json_cells_tell_a_missing_value_from_an_absent_field() {
        use serde_json::json;
        assert_eq!(json_cell(Some(&json!(2.5))), JsonCell::Number(2.5));
        for v in [json!(null), json!("NaN"), json!("-"), json!("null")] {
            assert_eq!(json_cell(Some(&v)), JsonCell::Missing, "{v}");
        }
        assert_eq!(json_cell(None), JsonCell::Absent);
        assert_eq!(json_cell(Some(&json!("fast"))), JsonCell::Absent);
    }

    #[test]
    fn one_note_per_metric_with_the_places_as_in_the_file() {
        let mut s = Skipped::default();
        s.add("x", line_place(4, Some("3")));
        s.add("y", "item 2".into());
        for l in 5..12 {
            s.add("x", line_place(l, None));
        }
        let n = s.notes(Path::new("a.csv"));
        assert_eq!(n.len(), 2);
        assert_eq!(
            n[0],
            "a.csv: x: no value at line 4 (trial 3), line 5, line 6, line 7, line 8 and 3 \
             more: skipped (8 values; n counts only the values present)"
        );
        assert_eq!(
            n[1],
            "a.csv: y: no value at item 2: skipped (1 value; n counts only the values present)"
        );
    }
}
