//! A bench `trials.jsonl` as compare reads it: through the one typed
//! reader (`crate::results`), after every metric whose `value` is missing
//! (JSON `null`, or `"NaN"`, `"-"`, `"null"` as text) has been taken out
//! of its line and listed for a note (`input_nulls`). A key twice in one
//! object of a line is an error (`input_json`). Each record keeps its line
//! number, for the notes and the units and directions it states.

use super::input_json::Bad;
use super::input_nulls::{is_null_text, line_place, Skipped};
use crate::results::TrialRecord;
use anyhow::{Context, Result};
use serde::de::IgnoredAny;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// The trials of one file with their 1-based line numbers, the values
/// skipped as missing, and the line of a torn last line the typed reader
/// skipped.
pub struct Trials {
    pub records: Vec<(usize, TrialRecord)>,
    pub skipped: Skipped,
    /// The 1-based line of an unterminated last line that holds no
    /// record (a write cut short), `None` when there is none.
    pub torn: Option<usize>,
}

/// U+FEFF in UTF-8 (`input::without_bom`).
const BOM: &[u8] = "\u{feff}".as_bytes();

/// Read `file`, once: it may be a pipe (`<(…)`, a FIFO), which a second
/// open would find empty or without a writer. Each line is parsed once
/// (`record`).
pub fn read(file: &Path) -> Result<Trials> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    // a byte-order mark an editor wrote, skipped as by the other readers
    let bytes = bytes.strip_prefix(BOM).unwrap_or(&bytes);
    let mut records = Vec::new();
    let mut skipped = Skipped::default();
    let mut torn = None;
    for (i, piece) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        let (line, terminated) = match piece.strip_suffix(b"\n") {
            Some(l) => (l, true),
            None => (piece, false),
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match record(file, i + 1, line, terminated, &mut skipped)? {
            Some(t) => records.push((i + 1, t)),
            None => torn = Some(i + 1),
        }
    }
    refuse_repeated_trials(file, &records)?;
    Ok(Trials {
        records,
        skipped,
        torn,
    })
}

/// The trial of line `line_no`, `None` for a torn last line (not
/// `terminated`, and no record). The line is parsed once into JSON
/// (`parsed`) and its record taken from that; a line with missing values
/// is read from its JSON without them, and one that is not JSON as it
/// stands, for the typed reader's error.
fn record(
    file: &Path,
    line_no: usize,
    line: &[u8],
    terminated: bool,
    skipped: &mut Skipped,
) -> Result<Option<TrialRecord>> {
    let Some(mut doc) = parsed(file, line_no, line, terminated)? else {
        return crate::results::parse_line(line, file, line_no, terminated);
    };
    match without_nulls(&mut doc, line_no, skipped) {
        Some(fixed) => crate::results::parse_line(&fixed, file, line_no, terminated),
        None => crate::results::line_of_value(doc, line, file, line_no, terminated),
    }
}

/// A trial recorded twice in one file (same variant, boot and number):
/// bench writes each trial of a variant once, under its own number, so a
/// repeat is two files joined
/// (`cat a/trials.jsonl >> b/trials.jsonl`) or a line copied: its values
/// would count twice and make every interval narrower than the data
/// allow. An error naming both lines.
fn refuse_repeated_trials(file: &Path, records: &[(usize, TrialRecord)]) -> Result<()> {
    let mut seen: HashMap<(&str, &str, u32), usize> = HashMap::new();
    for (line, t) in records {
        let key = (t.variant.as_str(), t.boot_id.as_str(), t.trial);
        if let Some(first) = seen.insert(key, *line) {
            anyhow::bail!(
                "{}:{line}: trial {} of variant {} is already recorded at line {first}: a trial is recorded once (two runs' files joined, or a line repeated?); its values would count twice",
                file.display(),
                t.trial,
                t.variant
            );
        }
    }
    Ok(())
}

/// Line `line_no` as JSON, `None` when it does not parse (the typed
/// reader reports that, or skips a torn last line). A key twice in one
/// object is an error naming the file, line and key: the typed reader
/// would keep the last value and drop the others unseen. A torn last line
/// (not `terminated`, and not JSON once whole) stays the typed reader's.
fn parsed(file: &Path, line_no: usize, line: &[u8], terminated: bool) -> Result<Option<Value>> {
    match super::input_json::from_slice(line) {
        Ok(doc) => Ok(Some(doc)),
        Err(Bad::Repeated { key, .. })
            if terminated || serde_json::from_slice::<IgnoredAny>(line).is_ok() =>
        {
            Err(super::input_json::repeated(
                &format!("{}:{line_no}", file.display()),
                &key,
            ))
        }
        Err(_) => Ok(None),
    }
}

/// The line without its missing metric values (taken out of `doc`), `None`
/// when it has none.
fn without_nulls(doc: &mut Value, line_no: usize, skipped: &mut Skipped) -> Option<Vec<u8>> {
    let trial = doc.get("trial").map(|t| t.to_string());
    let metrics = doc.get_mut("metrics")?.as_object_mut()?;
    let missing: Vec<String> = metrics
        .iter()
        .filter(|(_, m)| match m.get("value") {
            Some(Value::Null) => true,
            Some(Value::String(s)) => is_null_text(s),
            _ => false,
        })
        .map(|(name, _)| name.clone())
        .collect();
    if missing.is_empty() {
        return None;
    }
    for name in &missing {
        metrics.remove(name);
        skipped.add(name, line_place(line_no, trial.as_deref()));
    }
    serde_json::to_vec(doc).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn line(trial: u32, value: &str) -> String {
        format!(
            r#"{{"schema":2,"variant":"tip","trial":{trial},"boot_id":"b","started_at":"t","duration_s":1.0,"metrics":{{"a_per_sec":{{"value":{value},"unit":"1/s","direction":"none"}},"b_ns":{{"value":5,"unit":"ns","direction":"lower"}}}}}}"#
        )
    }

    #[test]
    fn null_values_are_taken_out_with_their_line_and_trial() {
        let dir = tempfile::TempDir::new().unwrap();
        let f = dir.path().join("trials.jsonl");
        let text = [
            line(1, "1.5"),
            String::new(),
            line(2, "null"),
            line(3, "\"NaN\""),
        ]
        .join("\n")
            + "\n";
        std::fs::write(&f, text).unwrap();
        let t = read(&f).unwrap();
        let lines: Vec<usize> = t.records.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 3, 4]);
        assert_eq!(t.records[1].1.trial, 2);
        assert!(!t.records[1].1.metrics.contains_key("a_per_sec"));
        assert!(t.records[1].1.metrics.contains_key("b_ns"));
        assert_eq!(
            t.skipped.at,
            [
                ("a_per_sec".to_string(), "line 3 (trial 2)".to_string()),
                ("a_per_sec".to_string(), "line 4 (trial 3)".to_string())
            ]
        );
    }

    #[test]
    fn a_trial_recorded_twice_is_an_error_naming_both_lines() {
        let dir = tempfile::TempDir::new().unwrap();
        let f = dir.path().join("trials.jsonl");
        let text = [line(1, "1.5"), line(2, "2.5"), line(1, "1.5")].join("\n") + "\n";
        std::fs::write(&f, text).unwrap();
        let e = format!("{:#}", read(&f).err().unwrap());
        assert!(
            e.contains("trials.jsonl:3: trial 1 of variant tip is already recorded at line 1"),
            "{e}"
        );
        // the same number in another variant is another trial
        let other = line(1, "1.5").replace("\"tip\"", "\"patch\"");
        std::fs::write(&f, [line(1, "1.5"), other].join("\n") + "\n").unwrap();
        assert_eq!(read(&f).unwrap().records.len(), 2);
    }

    #[test]
    fn a_key_twice_in_a_line_is_an_error_naming_the_line_and_key() {
        let dir = tempfile::TempDir::new().unwrap();
        let f = dir.path().join("trials.jsonl");
        let twice = line(2, "2.5").replace(r#""b_ns":"#, r#""a_per_sec":"#);
        let trial_twice = line(3, "3.5").replacen(r#""trial":3"#, r#""trial":3,"trial":4"#, 1);
        for (bad, key) in [(&twice, "a_per_sec"), (&trial_twice, "trial")] {
            let text = [line(1, "1.5"), bad.clone()].join("\n") + "\n";
            std::fs::write(&f, text).unwrap();
            let e = format!("{:#}", read(&f).err().unwrap());
            let want = format!("trials.jsonl:2: key {key:?} is in one object twice: only its last value would be read");
            assert!(e.contains(&want), "{e}");
        }
        // a metric with a null value, taken out, is no way around it
        let null_twice = line(2, "null").replace(r#""b_ns":"#, r#""a_per_sec":"#);
        std::fs::write(&f, format!("{}\n{null_twice}\n", line(1, "1.5"))).unwrap();
        let e = format!("{:#}", read(&f).err().unwrap());
        assert!(e.contains("trials.jsonl:2: key \"a_per_sec\""), "{e}");
        // a torn last line is skipped as before, whatever it repeated
        let torn = &twice[..twice.len() - 3];
        std::fs::write(&f, format!("{}\n{torn}", line(1, "1.5"))).unwrap();
        assert_eq!(read(&f).unwrap().torn, Some(2));
        // a whole last line without its newline is read, so refused
        std::fs::write(&f, format!("{}\n{twice}", line(1, "1.5"))).unwrap();
        assert!(read(&f).is_err());
    }

    #[test]
    fn a_byte_order_mark_before_the_first_line_is_skipped() {
        let dir = tempfile::TempDir::new().unwrap();
        let f = dir.path().join("trials.jsonl");
        std::fs::write(&f, format!("\u{feff}{}\n{}\n", line(1, "2"), line(2, "3"))).unwrap();
        let t = read(&f).unwrap();
        let lines: Vec<usize> = t.records.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 2]);
    }

    #[test]
    fn a_torn_last_line_stays_the_typed_readers_to_skip() {
        let dir = tempfile::TempDir::new().unwrap();
        let f = dir.path().join("trials.jsonl");
        std::fs::write(&f, format!("{}\n{{\"variant\":\"ti", line(1, "2"))).unwrap();
        let t = read(&f).unwrap();
        assert_eq!(t.records.len(), 1);
        assert_eq!(t.torn, Some(2));
        // cut inside a character: still the torn line, not an error
        let mut cut = format!("{}\n\n{{\"variant\":\"", line(1, "2")).into_bytes();
        cut.push(0xc3);
        std::fs::write(&f, cut).unwrap();
        let t = read(&f).unwrap();
        assert_eq!((t.records.len(), t.torn), (1, Some(3)));
        std::fs::write(&f, format!("{}\n", line(1, "2"))).unwrap();
        assert_eq!(read(&f).unwrap().torn, None);
        // a JSON line that is no record: the typed reader's error, with its column
        let text = line(2, "2").replace(r#""trial":2"#, r#""trial":"2""#);
        std::fs::write(&f, format!("{}\n{text}\n", line(1, "2"))).unwrap();
        let e = read(&f).err().unwrap().to_string();
        let want = "trials.jsonl:2: expected one trial record (JSON object with variant, \
                    trial, metrics …): invalid type: string \"2\", expected u32 at line 1 column";
        assert!(e.contains(want), "{e}");
        // so with a missing value taken out, and as a torn last line it is skipped
        let text = line(2, "null").replace(r#""trial":2"#, r#""trial":"2""#);
        std::fs::write(&f, format!("{}\n{text}\n", line(1, "2"))).unwrap();
        let e = read(&f).err().unwrap().to_string();
        assert!(
            e.contains("invalid type: string \"2\", expected u32 at line 1"),
            "{e}"
        );
        std::fs::write(&f, format!("{}\n{text}", line(1, "2"))).unwrap();
        assert_eq!(read(&f).unwrap().torn, Some(2));
        std::fs::write(&f, format!("{}\ngarbage\n", line(1, "2"))).unwrap();
        let e = read(&f).err().unwrap().to_string();
        assert!(
            e.contains("trials.jsonl:2: expected one trial record"),
            "{e}"
        );
    }
}
