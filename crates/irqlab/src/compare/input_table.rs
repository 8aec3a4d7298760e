//! Readers for tabular inputs: CSV with a header of named columns and JSON
//! (an array of row objects, an object of metric → array, or a probe
//! result set); the formats are specified in `docs/compare-input.md`.

use super::input::{parse_number, unit_from_name, Obs, VariantData};
use super::input_bench::{is_probe, load_probe};
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::path::Path;

const SPECIAL: [&str; 4] = ["variant", "trial", "boot_id", "started_at"];

/// One row of a table: variant, trial number, boot id, metric values.
struct Row {
    variant: Option<String>,
    trial: Option<f64>,
    boot: Option<String>,
    values: Vec<(String, f64)>,
}

/// Load a CSV file.
pub fn load_csv(path: &Path, label: &str) -> Result<Vec<VariantData>> {
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(false)
        .from_path(path)
        .with_context(|| format!("{}", path.display()))?;
    let header: Vec<String> = rdr
        .headers()
        .with_context(|| format!("{}", path.display()))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let mut rows = Vec::new();
    for rec in rdr.records() {
        let rec = rec.with_context(|| format!("{}", path.display()))?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        let mut row = Row {
            variant: None,
            trial: None,
            boot: None,
            values: Vec::new(),
        };
        for (name, cell) in header.iter().zip(rec.iter()) {
            let cell = cell.trim();
            match name.as_str() {
                "variant" => row.variant = Some(cell.to_string()).filter(|c| !c.is_empty()),
                "boot_id" => row.boot = Some(cell.to_string()).filter(|c| !c.is_empty()),
                "trial" if !cell.is_empty() => row.trial = Some(parse_number(path, line, cell)?),
                _ if cell.is_empty() || SPECIAL.contains(&name.as_str()) => {}
                _ => row
                    .values
                    .push((name.clone(), parse_number(path, line, cell)?)),
            }
        }
        rows.push(row);
    }
    Ok(group(rows, label))
}

/// Load a JSON file: probe result set, array of rows, or object of arrays.
pub fn load_json(path: &Path, label: &str) -> Result<Vec<VariantData>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let doc: Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not valid JSON", path.display()))?;
    if is_probe(&doc) {
        return Ok(vec![load_probe(path, &doc, label)?]);
    }
    match &doc {
        Value::Array(items) => {
            let rows = items
                .iter()
                .enumerate()
                .map(|(i, item)| json_row(path, i + 1, item))
                .collect::<Result<Vec<_>>>()?;
            Ok(group(rows, label))
        }
        Value::Object(map) => {
            let mut v = VariantData::new(label, false);
            for (metric, arr) in map {
                let Some(arr) = arr.as_array() else {
                    bail!("{}: {metric}: expected an array of numbers", path.display());
                };
                for (i, x) in arr.iter().enumerate() {
                    let value = json_number(path, i + 1, x)?;
                    v.push(metric, unit_from_name(metric), None, Obs::plain(value));
                }
            }
            Ok(vec![v])
        }
        _ => bail!("{}: expected a JSON array or object", path.display()),
    }
}

/// A JSON value as a number; errors name the file and the 1-based item.
fn json_number(path: &Path, item: usize, x: &Value) -> Result<f64> {
    match x {
        Value::String(s) => parse_number(path, item, s),
        other => parse_number(path, item, &other.to_string()),
    }
}

fn json_row(path: &Path, item: usize, obj: &Value) -> Result<Row> {
    let Some(map) = obj.as_object() else {
        bail!("{}:{item}: expected an object", path.display());
    };
    let mut row = Row {
        variant: map
            .get("variant")
            .and_then(Value::as_str)
            .map(str::to_string),
        trial: map.get("trial").and_then(Value::as_f64),
        boot: map
            .get("boot_id")
            .and_then(Value::as_str)
            .map(str::to_string),
        values: Vec::new(),
    };
    for (k, v) in map {
        if !SPECIAL.contains(&k.as_str()) && !v.is_null() {
            row.values.push((k.clone(), json_number(path, item, v)?));
        }
    }
    Ok(row)
}

/// Rows → variants (by the `variant` column, else `label`), in trial order.
fn group(mut rows: Vec<Row>, label: &str) -> Vec<VariantData> {
    if rows.iter().all(|r| r.trial.is_some()) {
        rows.sort_by(|a, b| a.trial.unwrap_or(0.0).total_cmp(&b.trial.unwrap_or(0.0)));
    }
    let mut out: Vec<VariantData> = Vec::new();
    for row in rows {
        let name = row.variant.as_deref().unwrap_or(label);
        let idx = match out.iter().position(|v| v.label == name) {
            Some(i) => i,
            None => {
                out.push(VariantData::new(name, row.variant.is_some()));
                out.len() - 1
            }
        };
        for (metric, value) in row.values {
            let obs = Obs {
                value,
                boot: row.boot.clone(),
                run: None,
            };
            out[idx].push(&metric, unit_from_name(&metric), None, obs);
        }
    }
    out
}
