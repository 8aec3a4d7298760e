//! Reading `trials.jsonl`: every record upgraded to the current schema; a
//! torn last line (a run killed mid-write) is ignored, any other bad line is
//! an error naming the file and line. Never modifies the file.

use super::trial::{TrialRecord, SCHEMA};
use super::TRIALS_FILE;
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::path::Path;

/// The records of the `trials.jsonl` at `path` (none when it does not exist).
pub fn read_trials(path: &Path) -> Result<Vec<TrialRecord>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    Ok(parse(&bytes, path)?.0)
}

/// One non-blank line of a `trials.jsonl` (1-based `line_no`; errors
/// name `path`): its record, upgraded; `None` for a line that is not one
/// and has no newline (`terminated` false: a torn last line).
pub fn parse_line(
    line: &[u8],
    path: &Path,
    line_no: usize,
    terminated: bool,
) -> Result<Option<TrialRecord>> {
    match serde_json::from_slice::<TrialRecord>(line) {
        Ok(t) => current(t, path, line_no).map(Some),
        // A killed writer leaves at most one unterminated last line.
        Err(_) if !terminated => Ok(None),
        Err(e) => bail!(
            "{}:{line_no}: expected one trial record (JSON object with variant, trial, metrics …): {e}",
            path.display()
        ),
    }
}

/// [`parse_line`] of `line` already parsed into `doc` (compare parses each
/// line once, for its missing values and repeated keys): the record is
/// taken from `doc`; `line` is read again only for the message of a line
/// that holds none.
pub fn line_of_value(
    doc: serde_json::Value,
    line: &[u8],
    path: &Path,
    line_no: usize,
    terminated: bool,
) -> Result<Option<TrialRecord>> {
    match TrialRecord::deserialize(doc) {
        Ok(t) => current(t, path, line_no).map(Some),
        Err(_) => parse_line(line, path, line_no, terminated),
    }
}

/// `t` of line `line_no` upgraded to the current schema; a newer schema
/// is an error.
fn current(mut t: TrialRecord, path: &Path, line_no: usize) -> Result<TrialRecord> {
    if t.schema > SCHEMA {
        bail!(
            "{}:{line_no}: schema {} is newer than this irqlab reads ({SCHEMA}); upgrade irqlab",
            path.display(),
            t.schema
        );
    }
    t.upgrade();
    Ok(t)
}

/// The records of `dir/trials.jsonl`.
pub fn read_trials_dir(dir: &Path) -> Result<Vec<TrialRecord>> {
    read_trials(&dir.join(TRIALS_FILE))
}

/// Records, and the length of the complete lines (the torn tail excluded).
pub(super) fn parse(bytes: &[u8], path: &Path) -> Result<(Vec<TrialRecord>, usize)> {
    let mut out = Vec::new();
    let mut good = 0usize;
    let mut rest = bytes;
    let mut line_no = 0usize;
    while !rest.is_empty() {
        line_no += 1;
        let (line, terminated) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (rest.get(..i).unwrap_or_default(), true),
            None => (rest, false),
        };
        rest = rest
            .get(line.len() + usize::from(terminated)..)
            .unwrap_or_default();
        if line.iter().all(u8::is_ascii_whitespace) {
            good += line.len() + usize::from(terminated);
            continue;
        }
        match parse_line(line, path, line_no, terminated)? {
            Some(t) => {
                out.push(t);
                good += line.len() + usize::from(terminated);
            }
            None => break,
        }
    }
    Ok((out, good))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::direction::Direction;

    /// A file exactly as bench wrote it before the `schema` field existed.
    const SCHEMA_1: &str = concat!(
        r#"{"variant":"tip","trial":0,"boot_id":"b","started_at":"2026-11-29T19:00:00Z","duration_s":2.0,"metrics":{"irq_res_per_sec":{"value":70332.3,"unit":"1/s","direction":"higher"},"rtt_p50_ns":{"value":9000.0,"unit":"ns","direction":"lower"}}}"#,
        "\n",
        r#"{"variant":"tip","trial":1,"boot_id":"b","started_at":"2026-11-29T19:00:02Z","duration_s":2.0,"metrics":{"irq_res_per_sec":{"value":70100.0,"unit":"1/s","direction":"higher"}},"notes":["x"]}"#,
        "\n"
    );

    #[test]
    fn schema_1_file_without_schema_field_still_reads() {
        let (t, good) = parse(SCHEMA_1.as_bytes(), Path::new("t.jsonl")).unwrap();
        assert_eq!(good, SCHEMA_1.len());
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].schema, SCHEMA);
        assert_eq!((t[0].trial, t[1].trial), (1, 2), "renumbered from 1");
        assert_eq!(t[0].metrics["rtt_p50_ns"].direction, Direction::Lower);
        assert_eq!(t[1].notes, vec!["x"]);
        assert_eq!(t[0].gap, None);
    }

    #[test]
    fn torn_last_line_is_ignored_bad_middle_line_names_file_and_line() {
        let torn = format!("{SCHEMA_1}{{\"variant\":\"tip\",\"tri");
        let (t, good) = parse(torn.as_bytes(), Path::new("t.jsonl")).unwrap();
        assert_eq!((t.len(), good), (2, SCHEMA_1.len()));
        let bad = format!("{SCHEMA_1}not json\n{SCHEMA_1}");
        let e = parse(bad.as_bytes(), Path::new("t.jsonl")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.jsonl:3: expected one trial record"),
            "{e}"
        );
    }

    #[test]
    fn newer_schema_is_refused() {
        let line = r#"{"schema":99,"variant":"a","trial":1,"boot_id":"b","started_at":"t","duration_s":1.0,"metrics":{}}"#;
        let e = parse(format!("{line}\n").as_bytes(), Path::new("t.jsonl")).unwrap_err();
        assert!(e.to_string().contains("schema 99 is newer"), "{e}");
    }

    #[test]
    fn missing_file_is_no_trials() {
        assert!(read_trials(Path::new("/nonexistent/trials.jsonl"))
            .unwrap()
            .is_empty());
    }
}
