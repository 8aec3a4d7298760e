//! Result files of a bench run, written as trials finish so an interrupted
//! run keeps every finished trial:
//!
//! - `plan.json`: the command line and variants (read back by `--resume`);
//! - `env.json`: the environment (kernel, CPUs, governors, warnings …);
//! - `<variant>/trials.jsonl`: one JSON object per trial, flushed at once —
//!   `{"variant","trial","boot_id","started_at","duration_s","metrics":
//!   {name: {"value","unit","direction"}},"notes":[…]}` (read by `compare`);
//! - `<variant>/trials.csv`: the same, one row per trial (columns fixed by
//!   the first trial);
//! - `summary.json`: per variant and metric, count/mean/std/min/p50/p90/p99/max.

use super::metric::{Direction, Metric};
use crate::stats::describe::{describe, Describe};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

/// One metric's value in a trial record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Value {
    pub value: f64,
    pub unit: String,
    pub direction: Direction,
}

/// One finished trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    pub variant: String,
    pub trial: u32,
    pub boot_id: String,
    pub started_at: String,
    pub duration_s: f64,
    pub metrics: BTreeMap<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl TrialRecord {
    /// Collect `metrics` (later duplicates win; non-finite values dropped
    /// with a note).
    pub fn add(&mut self, metrics: Vec<Metric>) {
        for m in metrics {
            if m.value.is_finite() {
                let v = Value {
                    value: m.value,
                    unit: m.unit,
                    direction: m.direction,
                };
                self.metrics.insert(m.name, v);
            } else {
                self.notes
                    .push(format!("{}: non-finite value dropped", m.name));
            }
        }
    }
}

/// Appends trials of one variant to its `trials.jsonl` and `trials.csv`.
pub struct TrialWriter {
    jsonl: File,
    csv: File,
    columns: Vec<String>,
}

/// A file name safe form of a variant label.
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

fn append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {} for appending", path.display()))
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl TrialWriter {
    /// Open (creating) the files of `variant` under `root`. Existing trials
    /// (resume) keep their CSV columns.
    pub fn open(root: &Path, variant: &str) -> Result<Self> {
        let dir = root.join(variant_dir(variant));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let csv_path = dir.join("trials.csv");
        let columns = std::fs::read_to_string(&csv_path)
            .ok()
            .and_then(|s| {
                s.lines()
                    .next()
                    .map(|h| h.split(',').skip(5).map(str::to_string).collect())
            })
            .unwrap_or_default();
        Ok(TrialWriter {
            jsonl: append(&dir.join("trials.jsonl"))?,
            csv: append(&csv_path)?,
            columns,
        })
    }

    /// Append one trial to both files and flush them.
    pub fn write(&mut self, t: &TrialRecord) -> Result<()> {
        let line = serde_json::to_string(t)?;
        writeln!(self.jsonl, "{line}")?;
        self.jsonl.flush()?;
        if self.columns.is_empty() {
            self.columns = t.metrics.keys().cloned().collect();
            let names: Vec<String> = self.columns.iter().map(|c| csv_field(c)).collect();
            writeln!(
                self.csv,
                "variant,trial,boot_id,started_at,duration_s,{}",
                names.join(",")
            )?;
        }
        let values: Vec<String> = self
            .columns
            .iter()
            .map(|c| {
                t.metrics
                    .get(c)
                    .map(|v| v.value.to_string())
                    .unwrap_or_default()
            })
            .collect();
        let head = [
            csv_field(&t.variant),
            t.trial.to_string(),
            csv_field(&t.boot_id),
            csv_field(&t.started_at),
        ];
        writeln!(
            self.csv,
            "{},{},{}",
            head.join(","),
            t.duration_s,
            values.join(",")
        )?;
        self.csv.flush()?;
        Ok(())
    }
}

/// Read the complete trial records of `dir/trials.jsonl` (a truncated last
/// line from a killed run is ignored and cut off so appends stay valid).
pub fn read_trials(dir: &Path) -> Result<Vec<TrialRecord>> {
    let path = dir.join("trials.jsonl");
    let Ok(file) = File::open(&path) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut good_len = 0u64;
    for line in BufReader::new(file).split(b'\n') {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        match serde_json::from_slice::<TrialRecord>(&line) {
            Ok(t) => {
                out.push(t);
                good_len += line.len() as u64 + 1;
            }
            Err(_) if line.iter().all(u8::is_ascii_whitespace) => good_len += line.len() as u64 + 1,
            Err(_) => break,
        }
    }
    let f = OpenOptions::new().write(true).open(&path)?;
    if f.metadata()?.len() > good_len {
        f.set_len(good_len)?;
    }
    Ok(out)
}

/// Summary of one metric of one variant.
#[derive(Debug, Serialize)]
pub struct MetricSummary {
    pub unit: String,
    pub direction: Direction,
    #[serde(flatten)]
    pub describe: Describe,
    /// Coefficient of variation, percent (null with < 2 values or mean 0).
    pub cv_pct: Option<f64>,
}

/// Per variant, per metric summaries of `trials`.
pub fn summarize(trials: &[TrialRecord]) -> BTreeMap<String, BTreeMap<String, MetricSummary>> {
    let mut values: BTreeMap<(String, String), (Vec<f64>, Value)> = BTreeMap::new();
    for t in trials {
        for (name, v) in &t.metrics {
            let e = values
                .entry((t.variant.clone(), name.clone()))
                .or_insert_with(|| (Vec::new(), v.clone()));
            e.0.push(v.value);
        }
    }
    let mut out: BTreeMap<String, BTreeMap<String, MetricSummary>> = BTreeMap::new();
    for ((variant, name), (vals, meta)) in values {
        if let Some(d) = describe(&vals) {
            let cv = d
                .std
                .filter(|_| d.mean != 0.0)
                .map(|s| 100.0 * s / d.mean.abs());
            let s = MetricSummary {
                unit: meta.unit,
                direction: meta.direction,
                describe: d,
                cv_pct: cv,
            };
            out.entry(variant).or_default().insert(name, s);
        }
    }
    out
}

/// Write `value` as pretty JSON to `path`.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let body = serde_json::to_vec_pretty(value)?;
    std::fs::write(path, body).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(n: u32, v: f64) -> TrialRecord {
        let mut t = TrialRecord {
            variant: "tip".into(),
            trial: n,
            boot_id: "b".into(),
            started_at: "2026-11-29T19:00:00Z".into(),
            duration_s: 1.0,
            metrics: BTreeMap::new(),
            notes: vec![],
        };
        t.add(vec![
            Metric::new("irq_36_per_sec", v, "1/s", Direction::Higher),
            Metric::new("bad", f64::NAN, "", Direction::Lower),
        ]);
        t
    }

    #[test]
    fn writes_reads_and_cuts_a_truncated_line() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = TrialWriter::open(dir.path(), "tip").unwrap();
        w.write(&trial(0, 10.0)).unwrap();
        w.write(&trial(1, 12.0)).unwrap();
        let vdir = dir.path().join("tip");
        let mut f = OpenOptions::new()
            .append(true)
            .open(vdir.join("trials.jsonl"))
            .unwrap();
        f.write_all(b"{\"variant\":\"tip\",\"tri").unwrap();
        let back = read_trials(&vdir).unwrap();
        assert_eq!(back, vec![trial(0, 10.0), trial(1, 12.0)]);
        assert_eq!(back[0].notes, vec!["bad: non-finite value dropped"]);
        let mut w = TrialWriter::open(dir.path(), "tip").unwrap();
        w.write(&trial(2, 14.0)).unwrap();
        assert_eq!(read_trials(&vdir).unwrap().len(), 3);
        let csv = std::fs::read_to_string(vdir.join("trials.csv")).unwrap();
        assert_eq!(csv.lines().count(), 4);
        assert!(csv.starts_with("variant,trial,boot_id,started_at,duration_s,irq_36_per_sec\n"));
        let s = summarize(&read_trials(&vdir).unwrap());
        assert_eq!(s["tip"]["irq_36_per_sec"].describe.mean, 12.0);
    }

    #[test]
    fn variant_dirs_are_safe() {
        assert_eq!(variant_dir("tip"), "tip");
        assert_eq!(variant_dir("../x y"), "v.._x_y");
        assert_eq!(variant_dir(""), "v");
    }
}
