//! Readers for bench result directories (`trials.jsonl`, one trial per
//! line) and probe result sets; the formats are specified in `input.rs`.

use super::input::{parse_number, unit_from_name, Obs, VariantData};
use crate::stats::verdict::Direction;
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

/// Parse a direction word.
pub fn direction(v: &Value) -> Option<Direction> {
    match v.as_str()? {
        "higher" => Some(Direction::Higher),
        "lower" => Some(Direction::Lower),
        _ => None,
    }
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

/// Load a probe result set (`{"kind":"probe", ...}`).
pub fn load_probe(path: &Path, doc: &Value, label: &str) -> Result<VariantData> {
    let boot = doc["boot_id"].as_str().map(str::to_string);
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
        for (i, x) in r["values"].as_array().into_iter().flatten().enumerate() {
            let Some(value) = x.as_f64() else {
                bail!(
                    "{}: {metric} value {}: expected a number, found {x}",
                    path.display(),
                    i + 1
                );
            };
            v.push(
                metric,
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
