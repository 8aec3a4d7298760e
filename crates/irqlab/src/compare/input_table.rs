//! Readers for tabular inputs: CSV with a header of named columns and JSON
//! (an array of row objects, an object of metric → array, or a probe
//! result set); the formats are specified in `docs/compare-input.md`.
//! Missing values (empty cells, `null`, `NaN`, `-`) are skipped with a note
//! (`input_nulls`).

use super::input::{parse_number, unit_from_name, Obs, TrialKey, TrialSeen, VariantData};
use super::input_bench::{is_probe, load_probe, plan_signature};
use super::input_nulls::{is_null_text, line_place, parse_cell, Skipped};
use super::input_runs::{bench_csv, row_run, BenchCsv};
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

const SPECIAL: [&str; 5] = ["variant", "trial", "boot_id", "started_at", "run"];

/// One row of a table: variant, trial number, boot id, run, metric values.
#[derive(Default)]
struct Row {
    variant: Option<String>,
    trial: Option<f64>,
    boot: Option<String>,
    run: Option<String>,
    values: Vec<(String, f64)>,
    /// Where it is, for messages: `3` (a CSV line, a JSON item).
    at: usize,
    /// The bench trial it records (a `trials.csv` row), to find one trial
    /// pooled twice (`input`).
    seen: Option<TrialSeen>,
}

/// Load a CSV file; notes for its missing values go to `warns`. A bench
/// `trials.csv` whose last line has no newline (a run killed while bench
/// wrote it: its last cell may be cut short) loses that line, with a note;
/// another CSV of several rows keeps such a line, with a note.
pub fn load_csv(path: &Path, label: &str, warns: &mut Vec<String>) -> Result<Vec<VariantData>> {
    let bytes = std::fs::read(path).with_context(|| format!("{}", path.display()))?;
    let torn = unterminated_line(&bytes);
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(bytes.as_slice());
    let header: Vec<String> = rdr
        .headers()
        .with_context(|| format!("{}", path.display()))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    unique_columns(path, &header)?;
    let bench = bench_csv(path, &header)?;
    let mut rows = Vec::new();
    let mut skipped = Skipped::default();
    for rec in rdr.records() {
        let rec = rec.with_context(|| format!("{}", path.display()))?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        if bench.is_some() && Some(line) == torn {
            warns.push(format!(
                "{}:{line}: truncated trial skipped",
                path.display()
            ));
            break;
        }
        if rec.len() != header.len() {
            bail!(
                "{}:{line}: expected {} fields as in the header, found {}",
                path.display(),
                header.len(),
                rec.len()
            );
        }
        rows.push(csv_row(
            path,
            line,
            &header,
            &rec,
            bench.as_ref(),
            &mut skipped,
        )?);
    }
    if bench.is_none() && rows.len() > 1 && torn.is_some() {
        let text = String::from_utf8_lossy(&bytes);
        warns.extend(super::input::unterminated_note(path, &text, "row"));
    }
    warns.extend(skipped.notes(path));
    refuse_repeated_trials(path, &rows, "line")?;
    let mut variants = group(rows, label);
    if let Some(b) = bench {
        for v in &mut variants {
            v.plan = plan_signature(b.plan.as_ref(), &v.label);
            v.plan_rank = super::input_order::rank(b.plan.as_ref(), &v.label);
            v.plan.extend(b.machine.iter().cloned());
        }
    }
    Ok(variants)
}

/// The number of a last line without its newline.
fn unterminated_line(bytes: &[u8]) -> Option<usize> {
    (!bytes.is_empty() && !bytes.ends_with(b"\n"))
        .then(|| bytes.iter().filter(|&&b| b == b'\n').count() + 1)
}

/// A column named twice would count each row's value twice: an error.
fn unique_columns(path: &Path, header: &[String]) -> Result<()> {
    let twice = header
        .iter()
        .enumerate()
        .find(|(i, h)| header[..*i].contains(h));
    if let Some((i, name)) = twice {
        bail!(
            "{}:1: column {name:?} is in the header twice (columns {} and {}): each row's \
             value would be counted twice",
            path.display(),
            header.iter().position(|h| h == name).map_or(0, |p| p + 1),
            i + 1
        );
    }
    Ok(())
}

/// One CSV record at `line`; its missing values are added to `skipped`.
fn csv_row(
    path: &Path,
    line: usize,
    header: &[String],
    rec: &csv::StringRecord,
    bench: Option<&BenchCsv>,
    skipped: &mut Skipped,
) -> Result<Row> {
    let mut row = Row {
        run: bench.map(|b| b.run.clone()),
        at: line,
        ..Row::default()
    };
    let cell = |column: &str| {
        let i = header.iter().position(|h| h == column)?;
        rec.get(i).map(str::trim)
    };
    let trial = cell("trial").filter(|t| !t.is_empty());
    for (name, cell) in header.iter().zip(rec.iter()) {
        let cell = cell.trim();
        match name.as_str() {
            "variant" => row.variant = Some(cell.to_string()).filter(|c| !c.is_empty()),
            "boot_id" => row.boot = Some(cell.to_string()).filter(|c| !c.is_empty()),
            "run" if !cell.is_empty() => row.run = Some(row_run(path, cell)),
            "trial" if !cell.is_empty() => row.trial = Some(parse_number(path, line, cell)?),
            "duration_s" if bench.is_some() => {}
            _ if SPECIAL.contains(&name.as_str()) => {}
            _ => match parse_cell(path, line, cell)? {
                Some(v) if bench.is_some() => {
                    // bench's own metrics: the unit its name says
                    let place = || match trial {
                        Some(t) => format!("{}:{line} (trial {t})", path.display()),
                        None => format!("{}:{line}", path.display()),
                    };
                    let unit = unit_from_name(name);
                    super::input_units::refuse_negative(place, name, unit, v)?;
                    row.values.push((name.clone(), v))
                }
                Some(v) => row.values.push((name.clone(), v)),
                None => skipped.add(name, line_place(line, trial)),
            },
        }
    }
    if bench.is_some() {
        let at = || format!("{}:{line}", path.display());
        row.seen = bench_trial(&row, cell("started_at"), cell("duration_s"), at);
    }
    Ok(row)
}

/// A bench `trials.csv` row as the trial it records, known as its
/// `trials.jsonl` line is: boot id, trial number, start time, measured
/// length and values (in the order of their names). `None` for a row
/// without a whole trial number, a start time or a measured length, all of
/// which bench writes for every trial: such a row is not bench's, and
/// cannot be told from another trial.
fn bench_trial(
    row: &Row,
    started: Option<&str>,
    duration: Option<&str>,
    at: impl Fn() -> String,
) -> Option<TrialSeen> {
    let trial = row
        .trial
        .filter(|t| t.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(t))?;
    let started = started.filter(|s| !s.is_empty())?;
    let duration = duration?.parse::<f64>().ok().filter(|d| d.is_finite())?;
    let mut values: Vec<&(String, f64)> = row.values.iter().collect();
    values.sort_by(|a, b| a.0.cmp(&b.0));
    Some(TrialSeen {
        key: TrialKey::new(
            row.boot.as_deref().unwrap_or_default(),
            trial as u32,
            started,
            duration,
        ),
        values: values.iter().map(|(_, v)| v.to_bits()).collect(),
        at: at(),
    })
}

/// Load a JSON file: probe result set, array of rows, or object of arrays;
/// notes for its missing values go to `warns`.
pub fn load_json(path: &Path, label: &str, warns: &mut Vec<String>) -> Result<Vec<VariantData>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let doc = super::input_json::read(path, super::input::without_bom(&text))?;
    if is_probe(&doc) {
        return Ok(vec![load_probe(path, &doc, label, warns)?]);
    }
    let mut skipped = Skipped::default();
    let out = match &doc {
        Value::Array(items) => {
            let rows = items
                .iter()
                .enumerate()
                .map(|(i, item)| json_row(path, i + 1, item, &mut skipped))
                .collect::<Result<Vec<_>>>()?;
            refuse_repeated_trials(path, &rows, "item")?;
            group(rows, label)
        }
        Value::Object(map) => {
            let mut v = VariantData::new(label, false);
            for (metric, arr) in map {
                let Some(arr) = arr.as_array() else {
                    bail!("{}: {metric}: expected an array of numbers", path.display());
                };
                for (i, x) in arr.iter().enumerate() {
                    match json_number(path, i + 1, metric, x)? {
                        Some(value) => {
                            v.push(metric, unit_from_name(metric), None, Obs::plain(value))
                        }
                        None => skipped.add(metric, format!("item {}", i + 1)),
                    }
                }
            }
            vec![v]
        }
        _ => bail!("{}: expected a JSON array or object", path.display()),
    };
    warns.extend(skipped.notes(path));
    Ok(out)
}

/// A JSON value of `key` as a number, `None` for a missing one (`null`,
/// or text such as `"NaN"`); errors name the file, the 1-based item (not a
/// line: the item of an array) and the key, `t.json: item 2: x: expected
/// a number, found "Infinity"`.
fn json_number(path: &Path, item: usize, key: &str, x: &Value) -> Result<Option<f64>> {
    let number = match x {
        Value::Null => return Ok(None),
        Value::String(s) if is_null_text(s) => return Ok(None),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        Value::Number(n) => n.as_f64(),
        _ => None,
    };
    match number.filter(|v| v.is_finite()) {
        Some(v) => Ok(Some(v)),
        None => bail!(
            "{}: item {item}: {key}: expected a number, found {x}",
            path.display()
        ),
    }
}

fn json_row(path: &Path, item: usize, obj: &Value, skipped: &mut Skipped) -> Result<Row> {
    let Some(map) = obj.as_object() else {
        bail!("{}:{item}: expected an object", path.display());
    };
    let text = |k: &str| json_text(path, item, k, map.get(k));
    let mut row = Row {
        // as a CSV cell: trimmed, and an empty one names no variant
        variant: text("variant")?
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty()),
        trial: match map.get("trial") {
            Some(Value::Number(n)) => n.as_f64(),
            _ => match text("trial")? {
                Some(t) if !t.trim().is_empty() => Some(json_trial(path, item, &t)?),
                _ => None,
            },
        },
        boot: text("boot_id")?,
        run: text("run")?.map(|r| row_run(path, &r)),
        values: Vec::new(),
        at: item,
        seen: None,
    };
    for (k, v) in map.iter().filter(|(k, _)| !SPECIAL.contains(&k.as_str())) {
        match json_number(path, item, k, v)? {
            Some(x) => row.values.push((k.clone(), x)),
            None => skipped.add(k, format!("item {item}")),
        }
    }
    Ok(row)
}

/// A `trial` given as text, as a number; an error names the file and item.
fn json_trial(path: &Path, item: usize, text: &str) -> Result<f64> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => bail!(
            "{}: item {item}: trial: expected a number, found {:?}",
            path.display(),
            text.trim()
        ),
    }
}

/// A row's special field (`variant`, `trial`, `boot_id`, `run`) as the text
/// of its CSV cell: a string, or a number as written; `null` or absent is
/// none. Any other value is an error naming the file, item and field: read
/// as none, rows of different variants or runs would pool unseen.
fn json_text(path: &Path, item: usize, key: &str, x: Option<&Value>) -> Result<Option<String>> {
    match x {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => bail!(
            "{}: item {item}: {key}: expected a string or a number, found {other}",
            path.display()
        ),
    }
}

/// A trial twice in one table: the same `trial` number in the same
/// variant, run and boot (bench writes each trial once; a table of runs
/// numbers each run's trials on their own, and gives a `run` or `boot_id`).
/// Its values would count twice and narrow every interval: an error
/// naming both lines (or items).
fn refuse_repeated_trials(path: &Path, rows: &[Row], at: &str) -> Result<()> {
    /// Variant, run, boot id and the trial number's bits.
    type TrialKey<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a str>, u64);
    let mut seen: HashMap<TrialKey, usize> = HashMap::new();
    for r in rows {
        let Some(trial) = r.trial else { continue };
        let key = (
            r.variant.as_deref(),
            r.run.as_deref(),
            r.boot.as_deref(),
            (trial + 0.0).to_bits(),
        );
        if let Some(first) = seen.insert(key, r.at) {
            // a line as `file:N:`, an item of a JSON array as its field
            // errors name it (`file: item N:`)
            let place = match at {
                "line" => format!("{}:{}", path.display(), r.at),
                _ => format!("{}: {at} {}", path.display(), r.at),
            };
            bail!(
                "{place}: trial {trial}{} is already at {at} {first}: a trial is counted once (give each run's rows a `run` or `boot_id`, or remove the repeat)",
                r.variant
                    .as_deref()
                    .map_or_else(String::new, |v| format!(" of variant {v}"))
            );
        }
    }
    Ok(())
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
        out[idx].trials.extend(row.seen);
        for (metric, value) in row.values {
            let obs = Obs {
                value,
                boot: row.boot.clone(),
                run: row.run.clone(),
            };
            out[idx].push(&metric, unit_from_name(&metric), None, obs);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn labels(vs: &[VariantData]) -> Vec<&str> {
        vs.iter().map(|v| v.label.as_str()).collect()
    }

    #[test]
    fn an_empty_variant_names_no_variant_in_json_as_in_csv() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("t.json");
        let rows = r#"[{"variant":"","x":1},{"variant":" a ","x":2},{"variant":"  ","x":3}]"#;
        std::fs::write(&json, rows).unwrap();
        let vs = load_json(&json, "t", &mut Vec::new()).unwrap();
        assert_eq!(labels(&vs), ["t", "a"]);
        assert_eq!(vs[0].series[0].values(), [1.0, 3.0]);
        let csv = dir.path().join("t.csv");
        std::fs::write(&csv, "variant,x\n,1\n a ,2\n  ,3\n").unwrap();
        let vs = load_csv(&csv, "t", &mut Vec::new()).unwrap();
        assert_eq!(labels(&vs), ["t", "a"]);
    }

    #[test]
    fn a_key_twice_in_a_json_object_is_refused_as_a_csv_column_twice() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("t.json");
        let err = |text: &str| {
            std::fs::write(&json, text).unwrap();
            format!("{:#}", load_json(&json, "t", &mut Vec::new()).unwrap_err())
        };
        let tail = "is in one object twice: only its last value would be read";
        for (text, at) in [
            (r#"[{"m":1,"m":5}]"#, r#"t.json: line 1: key "m" "#),
            (
                "[{\"m\":1},\n {\"variant\":\"a\",\"variant\":\"b\",\"m\":2}]",
                r#"t.json: line 2: key "variant" "#,
            ),
            ("{\"a\":[1,2],\n\"a\":[3]}", r#"t.json: line 2: key "a" "#),
            (
                r#"{"kind":"probe","results":[{"metric":"x","metric":"y","values":[1]}]}"#,
                r#"t.json: line 1: key "metric" "#,
            ),
        ] {
            let e = err(text);
            assert!(e.contains(&format!("{at}{tail}")), "{e}");
        }
        let csv = dir.path().join("t.csv");
        std::fs::write(&csv, "m,m\n1,5\n").unwrap();
        let e = format!("{:#}", load_csv(&csv, "t", &mut Vec::new()).unwrap_err());
        assert!(
            e.contains("t.csv:1: column \"m\" is in the header twice"),
            "{e}"
        );
        assert!(err("[{\"m\":1").contains("t.json: not valid JSON"));
    }

    #[test]
    fn a_bench_trials_csv_row_is_known_as_its_trials_jsonl_line() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("trials.csv");
        let rows = "variant,trial,boot_id,started_at,duration_s,b_ns,a_per_sec\n\
                    tip,1,b1,t1,2,5,7\n\
                    tip,2,,t2,2.5,6,\n\
                    tip,3,b1,,2,5,7\n\
                    tip,,b1,t4,2,5,7\n\
                    tip,5,b1,t5,,5,7\n";
        std::fs::write(&csv, rows).unwrap();
        let vs = load_csv(&csv, "t", &mut Vec::new()).unwrap();
        let at = |line: usize| format!("{}:{line}", csv.display());
        let want = [
            TrialSeen {
                key: TrialKey::new("b1", 1, "t1", 2.0),
                values: vec![7f64.to_bits(), 5f64.to_bits()],
                at: at(2),
            },
            TrialSeen {
                key: TrialKey::new("", 2, "t2", 2.5),
                values: vec![6f64.to_bits()],
                at: at(3),
            },
        ];
        // a row without a start time, trial number or measured length is
        // not bench's: it cannot be told from another trial
        assert_eq!(vs[0].trials, want);
        // a table that is not bench's records no trials
        let table = dir.path().join("t.csv");
        std::fs::write(&table, "trial,boot_id,started_at,x\n1,b1,t1,5\n").unwrap();
        assert!(load_csv(&table, "t", &mut Vec::new()).unwrap()[0]
            .trials
            .is_empty());
    }

    #[test]
    fn json_row_fields_are_read_as_csv_cells_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("t.json");
        let load = |rows: &str| {
            std::fs::write(&json, rows).unwrap();
            load_json(&json, "t", &mut Vec::new())
        };
        // numbered variants are two variants, as the CSV cells 1 and 2
        let vs = load(r#"[{"variant":1,"x":1},{"variant":2,"x":2},{"variant":1,"x":3}]"#).unwrap();
        assert_eq!(labels(&vs), ["1", "2"]);
        assert_eq!(vs[0].series[0].values(), [1.0, 3.0]);
        // a trial as text is a number, as in a CSV
        let vs = load(r#"[{"trial":"2","x":1},{"trial":1,"x":2}]"#).unwrap();
        assert_eq!(vs[0].series[0].values(), [2.0, 1.0]);
        let err = |rows: &str| format!("{:#}", load(rows).unwrap_err());
        let e = err(r#"[{"variant":"a","x":1},{"variant":true,"x":2}]"#);
        assert!(
            e.ends_with("t.json: item 2: variant: expected a string or a number, found true"),
            "{e}"
        );
        let e = err(r#"[{"trial":"x","x":1}]"#);
        assert!(
            e.ends_with("t.json: item 1: trial: expected a number, found \"x\""),
            "{e}"
        );
        let e = err(r#"[{"boot_id":["b"],"x":1}]"#);
        assert!(
            e.contains("t.json: item 1: boot_id: expected a string or a number"),
            "{e}"
        );
        let e = err(r#"[{"trial":1,"boot_id":7,"x":1},{"trial":1,"boot_id":7,"x":2}]"#);
        assert!(
            e.contains("t.json: item 2: trial 1 is already at item 1"),
            "{e}"
        );
        // a value that is not a number names its item and key: "t.json:2"
        // read as line 2 of a one-line file, and named no metric of several
        let e = err(r#"[{"x":1,"y":2},{"x":3,"y":"abc"}]"#);
        assert!(
            e.ends_with("t.json: item 2: y: expected a number, found \"abc\""),
            "{e}"
        );
        let e = err(r#"{"x": [1, 2], "y": [1, "Infinity", 3]}"#);
        assert!(
            e.ends_with("t.json: item 2: y: expected a number, found \"Infinity\""),
            "{e}"
        );
        let e = err(r#"{"x": [1, true]}"#);
        assert!(
            e.ends_with("t.json: item 2: x: expected a number, found true"),
            "{e}"
        );
    }
}
