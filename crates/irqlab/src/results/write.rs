//! Writing result files: `trials.jsonl` (one record per line, flushed at
//! once) and its CSV twin (through the `csv` crate; columns fixed by the
//! first trial), appended as trials finish; and pretty JSON files.
//! Every error names the file.

use super::read::parse;
use super::trial::TrialRecord;
use super::{TRIALS_CSV, TRIALS_FILE};
use anyhow::{Context, Result};
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The fixed leading CSV columns.
const CSV_HEAD: [&str; 5] = ["variant", "trial", "boot_id", "started_at", "duration_s"];

/// A file-name-safe form of a variant label.
pub fn variant_dir(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("v{s}")
    } else {
        s
    }
}

/// Appends the trials of one variant to its `trials.jsonl` and `trials.csv`.
pub struct TrialWriter {
    jsonl: File,
    jsonl_path: PathBuf,
    csv: csv::Writer<File>,
    csv_path: PathBuf,
    columns: Vec<String>,
}

fn append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {} for appending", path.display()))
}

/// Cut a torn last line left by a killed run, so appends stay valid.
fn cut_torn_tail(path: &Path) -> Result<()> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let (_, good) = parse(&bytes, path)?;
    if good < bytes.len() {
        let f = OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        f.set_len(good as u64)
            .with_context(|| format!("cutting the torn last line of {}", path.display()))?;
    }
    Ok(())
}

/// Metric columns of an existing CSV (resume keeps them).
fn csv_columns(path: &Path) -> Vec<String> {
    let Ok(mut r) = csv::Reader::from_path(path) else {
        return Vec::new();
    };
    r.headers()
        .map(|h| h.iter().skip(CSV_HEAD.len()).map(str::to_string).collect())
        .unwrap_or_default()
}

impl TrialWriter {
    /// Open (creating) the files of `variant` under `root`.
    pub fn open(root: &Path, variant: &str) -> Result<Self> {
        let dir = root.join(variant_dir(variant));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let jsonl_path = dir.join(TRIALS_FILE);
        cut_torn_tail(&jsonl_path)?;
        let csv_path = dir.join(TRIALS_CSV);
        let columns = csv_columns(&csv_path);
        Ok(TrialWriter {
            jsonl: append(&jsonl_path)?,
            jsonl_path,
            csv: csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(append(&csv_path)?),
            csv_path,
            columns,
        })
    }

    /// Append one trial to both files and flush them.
    pub fn write(&mut self, t: &TrialRecord) -> Result<()> {
        let mut line = serde_json::to_vec(t)?;
        line.push(b'\n');
        self.jsonl
            .write_all(&line)
            .and_then(|()| self.jsonl.flush())
            .with_context(|| format!("writing {}", self.jsonl_path.display()))?;
        self.write_csv(t)
            .with_context(|| format!("writing {}", self.csv_path.display()))
    }

    fn write_csv(&mut self, t: &TrialRecord) -> Result<()> {
        if self.columns.is_empty() {
            self.columns = t.metrics.keys().cloned().collect();
            let head = CSV_HEAD.iter().map(|s| s.to_string());
            self.csv
                .write_record(head.chain(self.columns.iter().cloned()))?;
        }
        let values = self.columns.iter().map(|c| {
            t.metrics
                .get(c)
                .map(|v| v.value.to_string())
                .unwrap_or_default()
        });
        let head = [
            t.variant.clone(),
            t.trial.to_string(),
            t.boot_id.clone(),
            t.started_at.clone(),
            t.duration_s.to_string(),
        ];
        self.csv.write_record(head.into_iter().chain(values))?;
        self.csv.flush()?;
        Ok(())
    }
}

/// Write `value` as pretty JSON to `path`.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let mut body = serde_json::to_vec_pretty(value)?;
    body.push(b'\n');
    std::fs::write(path, body).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::direction::Direction;
    use crate::results::read_trials_dir;

    fn trial(n: u32, v: f64) -> TrialRecord {
        let mut t = TrialRecord::new("tip", n, "b", "2026-11-29T19:00:00Z".into());
        t.duration_s = 1.0;
        t.insert("irq_36_per_sec", v, "1/s", Direction::None);
        t.insert("bad", f64::NAN, "", Direction::Lower);
        t
    }

    #[test]
    fn writes_reads_and_cuts_a_torn_line_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = TrialWriter::open(dir.path(), "tip").unwrap();
        w.write(&trial(1, 10.0)).unwrap();
        w.write(&trial(2, 12.0)).unwrap();
        let vdir = dir.path().join("tip");
        let mut f = OpenOptions::new()
            .append(true)
            .open(vdir.join(TRIALS_FILE))
            .unwrap();
        f.write_all(b"{\"variant\":\"tip\",\"tri").unwrap();
        let back = read_trials_dir(&vdir).unwrap();
        assert_eq!(back, vec![trial(1, 10.0), trial(2, 12.0)]);
        assert_eq!(back[0].notes, vec!["bad: non-finite value dropped"]);
        let text = std::fs::read_to_string(vdir.join(TRIALS_FILE)).unwrap();
        assert!(text.starts_with("{\"schema\":2,"), "{text}");
        let mut w = TrialWriter::open(dir.path(), "tip").unwrap();
        w.write(&trial(3, 14.0)).unwrap();
        assert_eq!(read_trials_dir(&vdir).unwrap().len(), 3);
        let csv = std::fs::read_to_string(vdir.join(TRIALS_CSV)).unwrap();
        assert_eq!(csv.lines().count(), 4);
        assert!(csv.starts_with("variant,trial,boot_id,started_at,duration_s,irq_36_per_sec\n"));
        assert!(
            csv.ends_with("tip,3,b,2026-11-29T19:00:00Z,1,14\n"),
            "{csv}"
        );
    }

    #[test]
    fn variant_dirs_are_safe() {
        assert_eq!(variant_dir("tip"), "tip");
        assert_eq!(variant_dir("../x y"), "v.._x_y");
        assert_eq!(variant_dir(""), "v");
    }

    #[test]
    fn write_errors_name_the_file() {
        let e = write_json(Path::new("/nonexistent/dir/plan.json"), &1).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/dir/plan.json"), "{e}");
    }
}
