//! Readers for bench result directories (`trials.jsonl`, one trial per
//! line) and probe result sets (one probe run = one trial: its per-read
//! values are summarised, never treated as independent trials); the formats
//! are specified in `input.rs`.

use super::input::{parse_number, unit_from_name, Obs, VariantData};
use crate::direction::Direction;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Every `trials.jsonl` at or below `dir`, in path order.
pub fn find_trials(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    walk(dir, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&entry.path(), out)?;
        } else if entry.file_name() == "trials.jsonl" {
            out.push(entry.path());
        }
    }
    Ok(())
}

/// Parse a direction word (`higher`, `lower`, `none`).
pub fn direction(v: &Value) -> Option<Direction> {
    Direction::parse(v.as_str()?)
}

/// A file that marks `dir` (or a directory below it) as bench output.
pub fn bench_marker(dir: &Path) -> Result<Option<PathBuf>> {
    for name in ["plan.json", "env.json", "summary.json"] {
        let p = dir.join(name);
        if p.is_file() {
            return Ok(Some(p));
        }
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            if let Some(m) = bench_marker(&entry.path())? {
                return Ok(Some(m));
            }
        }
    }
    Ok(None)
}

/// Load trials files; variants come from each trial's `variant`, else `label`.
pub fn load_runs(
    files: &[PathBuf],
    label: &str,
    warns: &mut Vec<String>,
) -> Result<Vec<VariantData>> {
    let mut variants: Vec<VariantData> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).with_context(|| format!("{}", file.display()))?;
        let lines: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .collect();
        for (k, (i, line)) in lines.iter().enumerate() {
            let trial: Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(_) if k + 1 == lines.len() => {
                    warns.push(format!(
                        "{}:{}: truncated trial skipped",
                        file.display(),
                        i + 1
                    ));
                    continue;
                }
                Err(e) => bail!("{}:{}: not a JSON trial: {e}", file.display(), i + 1),
            };
            add_trial(&mut variants, &trial, label, (file, i + 1))?;
        }
    }
    Ok(variants)
}

fn add_trial(
    variants: &mut Vec<VariantData>,
    trial: &Value,
    label: &str,
    (file, line): (&Path, usize),
) -> Result<()> {
    let name = trial["variant"].as_str();
    let vlabel = name.unwrap_or(label);
    let idx = match variants.iter().position(|v| v.label == vlabel) {
        Some(i) => i,
        None => {
            variants.push(VariantData::new(vlabel, name.is_some()));
            variants.len() - 1
        }
    };
    let boot = trial["boot_id"].as_str().map(str::to_string);
    let Some(metrics) = trial["metrics"].as_object() else {
        bail!("{}:{line}: trial has no \"metrics\" object", file.display());
    };
    for (metric, m) in metrics {
        let value = match &m["value"] {
            Value::Null => continue,
            Value::String(s) => parse_number(file, line, s)?,
            other => parse_number(file, line, &other.to_string())?,
        };
        let unit = m["unit"].as_str().or_else(|| unit_from_name(metric));
        let dir = direction(&m["direction"]);
        variants[idx].push(
            metric,
            unit,
            dir,
            Obs {
                value,
                boot: boot.clone(),
            },
        );
    }
    Ok(())
}

/// Per-run summary values of one probe result: (suffix, value). The run's
/// reads are one trial, so a run contributes its median (under the metric's
/// own name) and its p99 (`<metric>_p99`). Tolerant of the JSON shape: a
/// `summary`/`quantiles` object with `p50`/`median` and `p99`, flat `p50` /
/// `p99` fields, or else the quantiles of `values`.
fn probe_summary(r: &Value) -> Option<Vec<(&'static str, f64)>> {
    let obj = ["summary", "quantiles"]
        .iter()
        .map(|k| &r[*k])
        .find(|v| v.is_object())
        .unwrap_or(r);
    let get = |keys: &[&str]| keys.iter().find_map(|k| obj[*k].as_f64());
    if let Some(p50) = get(&["p50", "median"]) {
        let mut out = vec![("", p50)];
        out.extend(get(&["p99"]).map(|v| ("_p99", v)));
        return Some(out);
    }
    let vals: Vec<f64> = r["values"]
        .as_array()?
        .iter()
        .filter_map(Value::as_f64)
        .filter(|v| v.is_finite())
        .collect();
    if vals.is_empty() {
        return None;
    }
    let s = crate::stats::describe::sorted(&vals);
    Some(vec![
        ("", crate::stats::describe::quantile_sorted(&s, 0.5)),
        ("_p99", crate::stats::describe::quantile_sorted(&s, 0.99)),
    ])
}

/// Is this JSON document a probe result set?
pub fn is_probe(doc: &Value) -> bool {
    doc["kind"].as_str() == Some("probe")
}

/// Load a probe result set (`{"kind":"probe", ...}`) as one trial.
pub fn load_probe(path: &Path, doc: &Value, label: &str) -> Result<VariantData> {
    let boot = doc["boot_id"]
        .as_str()
        .or_else(|| doc["env"]["boot_id"].as_str())
        .map(str::to_string);
    let Some(results) = doc["results"].as_array() else {
        bail!(
            "{}: probe result set has no \"results\" array",
            path.display()
        );
    };
    let mut v = VariantData::new(label, false);
    for r in results {
        let Some(metric) = r["metric"].as_str() else {
            bail!("{}: probe result without \"metric\"", path.display());
        };
        let unit = r["unit"].as_str().or_else(|| unit_from_name(metric));
        let dir = direction(&r["direction"]);
        for (suffix, value) in probe_summary(r).into_iter().flatten() {
            v.push(
                &format!("{metric}{suffix}"),
                unit,
                dir,
                Obs {
                    value,
                    boot: boot.clone(),
                },
            );
        }
    }
    Ok(v)
}
