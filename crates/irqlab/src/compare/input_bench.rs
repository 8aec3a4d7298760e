//! Readers for bench result directories (`trials.jsonl`, one trial per
//! line) and probe result sets (one probe run = one trial: its per-read
//! values are summarised, never treated as independent trials); the formats
//! are specified in `docs/compare-input.md`.

use super::input::{unit_from_name, Obs, TrialKey, TrialSeen, VariantData};
use super::input_json::read_record;
use super::input_nulls::{json_cell, JsonCell, Skipped};
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

/// The run directory of a trials file: the nearest of the file's directory
/// and its parent that holds `plan.json` (bench writes
/// `<out>/<variant>/trials.jsonl` beside `<out>/plan.json`), else the
/// file's directory (`.` for a file named without one); with the plan
/// when there is one. A key twice in one object of the plan is an error
/// (`input_json`).
pub(super) fn run_of(file: &Path) -> Result<(PathBuf, Option<Value>)> {
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    for d in [Some(dir.as_path()), dir.parent()].into_iter().flatten() {
        let plan = d.join("plan.json");
        if plan.is_file() {
            return Ok((d.to_path_buf(), read_record(&plan)?));
        }
    }
    Ok((dir, None))
}

/// What bench recorded about a run (`env.json` `warnings`: busy machine,
/// governor; `summary.json` `notes`: IRQ time accounting, other tracers),
/// each prefixed with the run directory, so that they travel into the
/// comparison. `summary.json`'s `warnings` are not taken: they are the
/// data-quality warnings compare gives again for the same trials.
fn bench_notes(run: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (name, field) in [("env.json", "warnings"), ("summary.json", "notes")] {
        let Some(doc) = read_record(&run.join(name))? else {
            continue;
        };
        for w in doc[field].as_array().into_iter().flatten() {
            if let Some(w) = w.as_str() {
                out.push(format!("{}: bench: {w}", run.display()));
            }
        }
        if name == "summary.json" {
            out.extend(unfinished(run, &doc));
        }
    }
    if run.join("plan.json").is_file() && !run.join("summary.json").exists() {
        out.push(format!(
            "{}: bench: no summary.json: the run is still running, or was killed before \
             it ended; compared on the trials it recorded",
            run.display()
        ));
    }
    Ok(out)
}

/// The note for a run whose `summary.json` says it did not finish every
/// planned trial (Ctrl-C, SIGTERM, an error): its variants are compared on
/// fewer trials than planned, or on one variant's trials more than on
/// another's.
fn unfinished(run: &Path, summary: &Value) -> Option<String> {
    if summary["complete"].as_bool() != Some(false) {
        return None;
    }
    let how = summary["interrupted"]
        .as_str()
        .map_or_else(String::new, |s| format!(" by {s}"));
    let count = match (
        summary["finished_trials"].as_u64(),
        summary["planned_trials"].as_u64(),
    ) {
        (Some(f), Some(p)) => format!(" after {f} of {p} planned trials"),
        _ => String::new(),
    };
    Some(format!(
        "{}: bench: the run ended{how}{count}; compared on the trials it finished \
         (bench --resume continues it)",
        run.display()
    ))
}

/// What must agree before trials of two runs may be pooled under one
/// variant: the variant's workload and the trial length of its plan.
pub fn plan_signature(plan: Option<&Value>, variant: &str) -> Vec<(String, String)> {
    let Some(plan) = plan else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let names = plan["variants"].as_array();
    let idx = names.and_then(|n| n.iter().position(|v| v.as_str() == Some(variant)));
    let workload = idx
        .and_then(|i| plan["workloads"].get(i))
        .and_then(Value::as_str)
        .or_else(|| {
            // One workload for the whole run.
            let w = plan["workloads"].as_array()?;
            (w.len() == 1).then(|| w[0].as_str()).flatten()
        });
    if let Some(w) = workload {
        out.push(("workload".to_string(), w.to_string()));
    }
    if let Some(d) = plan["duration_s"].as_f64() {
        out.push(("duration_s".to_string(), d.to_string()));
    }
    out
}

/// The fields in which two signatures differ, as `field (a vs b)` joined
/// by commas; fields only one side records are not compared.
pub fn differing_field(a: &[(String, String)], b: &[(String, String)]) -> Option<String> {
    let differ: Vec<String> = a
        .iter()
        .filter_map(|(k, va)| {
            let vb = b.iter().find(|(kb, _)| kb == k).map(|(_, v)| v)?;
            (va != vb).then(|| format!("{k} ({va} vs {vb})"))
        })
        .collect();
    (!differ.is_empty()).then(|| differ.join(", "))
}

/// What must agree before probe runs may be pooled under one variant: the
/// [`machine_signature`] of the run's `env.machine`, with the tree it
/// recorded (`env.root`).
pub fn probe_signature(doc: &Value) -> Vec<(String, String)> {
    machine_signature(&doc["env"]["machine"], doc["env"]["root"].as_str())
}

/// What must agree before runs may be pooled, from the environment a run
/// records (bench `env.json`, probe `env.machine`): the tree read (`root`:
/// as the run recorded it, absolute and canonical; for a run of an older
/// irqlab, which did not, the [`typed_root`] of its command line), the
/// kernel, the host name, the CPU model and the online CPUs (as `bench
/// --resume` holds a run to them). Only fields the record has; a null
/// value is `unknown`.
pub fn machine_signature(m: &Value, root: Option<&str>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let typed = || {
        let argv = m["command"].as_array()?;
        let argv: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
        Some(typed_root(root_of(&argv)))
    };
    if let Some(r) = root.map(str::to_string).or_else(typed) {
        out.push(("root".to_string(), r));
    }
    for (field, key) in [
        ("kernel", "kernel_release"),
        ("hostname", "hostname"),
        ("cpu_model", "cpu_model"),
        ("online_cpus", "online_cpus"),
    ] {
        if let Some(v) = m.get(key) {
            out.push((
                field.to_string(),
                v.as_str().unwrap_or("unknown").to_string(),
            ));
        }
    }
    out
}

/// The fields of a [`machine_signature`] that say which machine ran the
/// trials. Variants are compared across kernels (and trees) on purpose;
/// across machines or sets of online CPUs a change may be the machine's.
const MACHINE_FIELDS: [&str; 3] = ["hostname", "cpu_model", "online_cpus"];

/// The note for a variant whose runs recorded another machine than the
/// baseline's ([`MACHINE_FIELDS`] both record and in which they differ),
/// `None` when they agree or do not say.
pub fn other_machine(
    (base, base_sig): (&str, &[(String, String)]),
    (label, sig): (&str, &[(String, String)]),
) -> Option<String> {
    let pick = |s: &[(String, String)]| -> Vec<(String, String)> {
        s.iter()
            .filter(|(k, _)| MACHINE_FIELDS.contains(&k.as_str()))
            .cloned()
            .collect()
    };
    let field = differing_field(&pick(base_sig), &pick(sig))?;
    Some(format!(
        "variant {label} ran on another machine or set of CPUs than the baseline \
         {base}: {field}; a change may be the machine's, not what the variants differ in"
    ))
}

/// The note for a variant whose bench plan recorded another trial length
/// than the baseline's, `None` when they agree or either does not say. A
/// rate is per second, but a count per trial (unit `1`, such as
/// `tcp_retransmits`) grows with the trial and a quantile per trial (a
/// p99) moves with it: a change in them may be the trial length's.
pub fn other_trial_length(
    (base, base_sig): (&str, &[(String, String)]),
    (label, sig): (&str, &[(String, String)]),
) -> Option<String> {
    let length = |s: &[(String, String)]| {
        s.iter()
            .find(|(k, _)| k == "duration_s")
            .map(|(_, v)| v.clone())
    };
    let (want, got) = (length(base_sig)?, length(sig)?);
    (want != got).then(|| {
        format!(
            "variant {label} ran trials of {got} s, the baseline {base} trials of {want} s: \
             a count per trial (unit 1) grows with the trial length and a quantile per \
             trial moves with it; a change in them may be the trial length's"
        )
    })
}

/// What follows a relative root taken from an older run's command line.
const AS_TYPED: &str = " (relative, as typed)";

/// The root of an older run's command line, without `.` components and
/// trailing slashes (`./t/` is `t`: one working directory's same tree). A
/// relative one is marked [`AS_TYPED`]: the working directory was not
/// recorded, so it can neither be resolved nor told apart from the same
/// name typed elsewhere.
pub fn typed_root(typed: &str) -> String {
    let path = Path::new(typed);
    let norm: PathBuf = path
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect();
    match norm.as_os_str().is_empty() {
        true => format!(".{AS_TYPED}"),
        false if path.is_absolute() => norm.display().to_string(),
        false => format!("{}{AS_TYPED}", norm.display()),
    }
}

/// The root of a signature when it is only a relative root as typed
/// ([`typed_root`]): what a warning about pooling such runs names.
pub fn root_as_typed(plan: &[(String, String)]) -> Option<&str> {
    plan.iter()
        .find(|(k, _)| k == "root")
        .and_then(|(_, v)| v.strip_suffix(AS_TYPED))
}

/// The warning for runs pooled by a relative root as typed: `pool` says
/// what pools them (`a= pools runs`, `DIR: pools probe runs`).
pub fn as_typed_warning(pool: &str, root: &str) -> String {
    format!(
        "{pool} by the root their command lines typed ({root}, relative): these runs do \
         not record their working directory, so the same name typed in different \
         directories cannot be told apart"
    )
}

/// The [`machine_signature`] of a bench run directory's `env.json`; empty
/// without a readable one (a key twice in one object is an error).
pub(super) fn run_machine(run: &Path) -> Result<Vec<(String, String)>> {
    Ok(read_record(&run.join("env.json"))?
        .map(|env| machine_signature(&env, env["root"].as_str()))
        .unwrap_or_default())
}

/// The `--root` of a recorded command line (`--root DIR` or
/// `--root=DIR`), else `/`.
fn root_of<'a>(argv: &[&'a str]) -> &'a str {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if *a == "--root" {
            return it.next().copied().unwrap_or("/");
        }
        if let Some(dir) = a.strip_prefix("--root=") {
            return dir;
        }
    }
    "/"
}

/// Load trials files through the one typed reader (`crate::results`);
/// variants come from each trial's `variant`, else `label`. Trials of
/// different runs (run directories) under one variant label are pooled
/// only when their plans agree on the workload and trial length and their
/// `env.json` on the tree, kernel and machine (the run
/// then is a cluster, see `model`); otherwise each run is its own
/// variant, named `label@run`, with a note naming the differing field.
/// A resumed part whose environment differs from its run's `env.json`
/// counts as a run of its own (`input_resume`).
pub fn load_runs(
    files: &[PathBuf],
    label: &str,
    warns: &mut Vec<String>,
) -> Result<Vec<VariantData>> {
    // (variant label, run dir, data) in first-seen order.
    let mut parts: Vec<(String, PathBuf, VariantData)> = Vec::new();
    let mut notes_seen: Vec<PathBuf> = Vec::new();
    for file in files {
        let read = super::input_trials::read(file)?;
        warns.extend(read.skipped.notes(file));
        let trials = read.records;
        if let Some(line) = read.torn {
            warns.push(format!(
                "{}:{line}: truncated trial skipped",
                file.display()
            ));
        }
        if trials.is_empty() {
            // its variant is not named anywhere else: it would be gone unseen
            warns.push(format!(
                "{}: holds no trial (its run ended before one finished?): left out",
                file.display()
            ));
        }
        let (run, plan) = run_of(file)?;
        let machine = run_machine(&run)?;
        let resumed = super::input_resume::Resumed::read(&run, plan.as_ref())?;
        if !notes_seen.contains(&run) {
            notes_seen.push(run.clone());
            warns.extend(bench_notes(&run)?);
            warns.extend(super::input_resume::resume_warnings(&run)?);
            warns.extend(resumed.notes());
        }
        for (line, t) in &trials {
            let name = Some(t.variant.as_str()).filter(|v| !v.is_empty());
            let vlabel = name.unwrap_or(label).to_string();
            // a resumed part on another environment is a run of its own
            let (part, part_machine) = resumed
                .part_of(t, file)?
                .unwrap_or((run.as_path(), machine.as_slice()));
            let idx = match parts.iter().position(|(l, r, _)| *l == vlabel && r == part) {
                Some(i) => i,
                None => {
                    let mut data = VariantData::new(&vlabel, name.is_some());
                    data.plan = plan_signature(plan.as_ref(), &vlabel);
                    data.plan_rank = super::input_order::rank(plan.as_ref(), &vlabel);
                    data.plan.extend(part_machine.iter().cloned());
                    parts.push((vlabel.clone(), part.to_path_buf(), data));
                    parts.len() - 1
                }
            };
            let at = || format!("{}:{line}", file.display());
            add_trial(&mut parts[idx].2, t, &part.display().to_string(), at)?;
        }
    }
    let mut variants: Vec<VariantData> = Vec::new();
    let labels: Vec<String> = {
        let mut l: Vec<String> = parts.iter().map(|p| p.0.clone()).collect();
        l.dedup();
        let mut seen = Vec::new();
        l.retain(|x| {
            let new = !seen.contains(x);
            seen.push(x.clone());
            new
        });
        l
    };
    for l in labels {
        let group: Vec<&(String, PathBuf, VariantData)> =
            parts.iter().filter(|p| p.0 == l).collect();
        let differ = group.iter().skip(1).find_map(|p| {
            differing_field(&group[0].2.plan, &p.2.plan)
                .map(|f| (f, group[0].1.clone(), p.1.clone()))
        });
        match differ {
            None => {
                let mut it = group.into_iter();
                let Some(first) = it.next() else {
                    continue;
                };
                let mut v = first.2.clone();
                let mut runs = vec![first.1.display().to_string()];
                for p in it {
                    v.absorb(p.2.clone());
                    runs.push(p.1.display().to_string());
                }
                if runs.len() > 1 {
                    warns.push(format!(
                        "variant {l:?} pools {} runs ({}): each run is one cluster",
                        runs.len(),
                        runs.join(", ")
                    ));
                    if let Some(root) = root_as_typed(&v.plan) {
                        warns.push(as_typed_warning(&format!("variant {l:?} pools runs"), root));
                    }
                }
                variants.push(v);
            }
            Some((field, a, b)) => {
                let paths: Vec<&Path> = group.iter().map(|p| p.1.as_path()).collect();
                let names = super::input::suffix_names(&paths, &[]);
                let mut shown = Vec::new();
                for (p, n) in group.iter().zip(names) {
                    let mut v = p.2.clone();
                    v.label = format!("{l}@{n}");
                    shown.push(v.label.clone());
                    variants.push(v);
                }
                warns.push(format!(
                    "variant {l:?}: runs {} and {} differ in {field}; not pooled, \
                     compared as {}",
                    a.display(),
                    b.display(),
                    shown.join(", ")
                ));
            }
        }
    }
    Ok(variants)
}

/// Add one trial's metrics; `at` names its line, for what it states. A
/// negative value in a unit that cannot be negative is an error naming
/// the line, trial and metric (`input_units::refuse_negative`).
fn add_trial(
    variant: &mut VariantData,
    trial: &crate::results::TrialRecord,
    run: &str,
    at: impl Fn() -> String,
) -> Result<()> {
    let boot = Some(trial.boot_id.clone()).filter(|b| !b.is_empty());
    variant.trials.push(TrialSeen {
        key: TrialKey::new(
            &trial.boot_id,
            trial.trial,
            &trial.started_at,
            trial.duration_s,
        ),
        values: trial.metrics.values().map(|m| m.value.to_bits()).collect(),
        at: at(),
    });
    for (metric, m) in &trial.metrics {
        if !m.value.is_finite() {
            continue;
        }
        let unit = Some(m.unit.as_str())
            .filter(|u| !u.is_empty())
            .or_else(|| unit_from_name(metric));
        let place = || {
            format!(
                "{} (variant {}, trial {})",
                at(),
                trial.variant,
                trial.trial
            )
        };
        super::input_units::refuse_negative(place, metric, unit, m.value)?;
        let headline = m.headline;
        variant.state(metric, Some(&m.unit), Some(m.direction), &at);
        variant.push(
            metric,
            unit,
            Some(m.direction),
            Obs {
                value: m.value,
                boot: boot.clone(),
                run: Some(run.to_string()),
            },
        );
        if headline {
            variant.mark_headline(metric);
        }
    }
    Ok(())
}

/// Per-run summary values of one probe result: (suffix, value). The run's
/// reads are one trial, so a run contributes its median (under the metric's
/// own name) and its p99 (`<metric>_p99`). Read from the result's
/// `summary`/`quantiles` object (`p50`/`median`, `p99`; probe JSON
/// version 3), else from `dist`, the matching `rows[]` quantiles of a
/// version 2 file, else flat `p50`/`p99` fields. Without any of them,
/// `values` are per-read values only in an unversioned (version 1) file;
/// from version 2 on they are the run's medians, one per run, and never
/// give a p99 (the 0.99 quantile of one median is that median). A missing
/// value (`null`, `"NaN"`, `"-"`) is added to `skipped` at `result N`,
/// numbered from 1 as in `results`.
fn probe_summary(
    r: &Value,
    dist: Option<&Value>,
    version: u64,
    (metric, item): (&str, usize),
    skipped: &mut Skipped,
) -> Vec<(&'static str, f64)> {
    let obj = ["summary", "quantiles"]
        .iter()
        .map(|k| &r[*k])
        .find(|v| v.is_object())
        .or(dist.filter(|d| d.is_object()))
        .unwrap_or(r);
    let get = |keys: &[&'static str]| {
        let cells = keys.iter().map(|k| (*k, json_cell(obj.get(*k))));
        let number = cells
            .clone()
            .find(|(_, c)| matches!(c, JsonCell::Number(_)));
        number.or_else(|| cells.clone().find(|(_, c)| *c == JsonCell::Missing))
    };
    let at = |what: &str| format!("result {item} ({what})");
    if let Some((key, p50)) = get(&["p50", "median"]) {
        let mut out = Vec::new();
        for ((key, cell), suffix) in [
            (key, p50),
            get(&["p99"]).unwrap_or(("p99", JsonCell::Absent)),
        ]
        .into_iter()
        .zip(["", "_p99"])
        {
            match cell {
                JsonCell::Number(v) => out.push((suffix, v)),
                JsonCell::Missing => skipped.add(&format!("{metric}{suffix}"), at(key)),
                JsonCell::Absent => {}
            }
        }
        return out;
    }
    let Some(items) = r["values"].as_array() else {
        return Vec::new();
    };
    let what = if version >= 2 { "value" } else { "read" };
    let mut vals = Vec::new();
    for (k, item) in items.iter().enumerate() {
        match json_cell(Some(item)) {
            JsonCell::Number(v) => vals.push(v),
            JsonCell::Missing => skipped.add(metric, at(&format!("{what} {}", k + 1))),
            JsonCell::Absent => {}
        }
    }
    if vals.is_empty() {
        return Vec::new();
    }
    if version >= 2 {
        return vals.into_iter().map(|v| ("", v)).collect();
    }
    let s = crate::stats::describe::sorted(&vals);
    vec![
        ("", crate::stats::describe::quantile_sorted(&s, 0.5)),
        ("_p99", crate::stats::describe::quantile_sorted(&s, 0.99)),
    ]
}

/// The per-read quantiles of each run-level metric in `rows[]` (probe JSON
/// version 2 and 3): `<row metric>_wall_ns` → `rows[].wall_ns`, and the
/// same for `cpu_ns`.
fn row_distributions(doc: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for row in doc["rows"].as_array().into_iter().flatten() {
        let Some(stem) = row["metric"].as_str() else {
            continue;
        };
        for key in ["wall_ns", "cpu_ns"] {
            if row[key].is_object() {
                out.push((format!("{stem}_{key}"), &row[key]));
            }
        }
    }
    out
}

/// Is this JSON document a probe result set?
pub fn is_probe(doc: &Value) -> bool {
    doc["kind"].as_str() == Some("probe")
}

/// Load a probe result set (`{"kind":"probe", ...}`) as one trial; notes
/// for its missing values go to `warns`.
pub fn load_probe(
    path: &Path,
    doc: &Value,
    label: &str,
    warns: &mut Vec<String>,
) -> Result<VariantData> {
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
    let version = doc["version"].as_u64().unwrap_or(1);
    let dists = row_distributions(doc);
    let mut v = VariantData::new(label, false);
    v.plan = probe_signature(doc);
    v.probe = true;
    let mut skipped = Skipped::default();
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for (i, r) in results.iter().enumerate() {
        let Some(metric) = r["metric"].as_str() else {
            bail!("{}: probe result without \"metric\"", path.display());
        };
        // a probe run is one trial: a metric twice (two runs' results
        // joined in one file) would count as two trials of one run
        if let Some((_, first)) = seen.iter().find(|(m, _)| *m == metric) {
            bail!(
                "{}: result {}: metric {metric} is already result {first}: a probe run measures each metric once (one file per run)",
                path.display(),
                i + 1
            );
        }
        seen.push((metric, i + 1));
        let unit = r["unit"].as_str().or_else(|| unit_from_name(metric));
        let dir = direction(&r["direction"]);
        let dist = dists.iter().find(|(m, _)| m == metric).map(|(_, d)| *d);
        let src = || path.display().to_string();
        for (suffix, value) in probe_summary(r, dist, version, (metric, i + 1), &mut skipped) {
            let name = format!("{metric}{suffix}");
            let place = || format!("{}: result {}", path.display(), i + 1);
            super::input_units::refuse_negative(place, &name, unit, value)?;
            v.state(&name, r["unit"].as_str(), dir, src);
            v.push(
                &name,
                unit,
                dir,
                Obs {
                    value,
                    boot: boot.clone(),
                    run: Some(path.display().to_string()),
                },
            );
        }
    }
    warns.extend(skipped.notes(path));
    // a copy of this run pooled with it is refused (`input`)
    if let Some(started) = doc["started_at"].as_str() {
        v.trials.push(TrialSeen {
            key: TrialKey::new(boot.as_deref().unwrap_or_default(), 1, started, 0.0),
            values: v
                .series
                .iter()
                .flat_map(|s| s.obs.iter().map(|o| o.value.to_bits()))
                .collect(),
            at: path.display().to_string(),
        });
    }
    Ok(v)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn probe_signature_names_the_tree_kernel_and_machine() {
        let run = |argv: Value, kernel: Value| {
            json!({"kind": "probe", "env": {"machine": {"command": argv,
                "kernel_release": kernel, "hostname": "h", "cpu_model": null}}})
        };
        let live = probe_signature(&run(json!(["irqlab", "probe"]), json!("6.1")));
        let fake = probe_signature(&run(json!(["irqlab", "probe", "--root", "t"]), Value::Null));
        let eq = probe_signature(&run(json!(["irqlab", "probe", "--root=t"]), Value::Null));
        assert_eq!(live[0], ("root".to_string(), "/".to_string()));
        assert_eq!(
            differing_field(&live, &fake).unwrap(),
            "root (/ vs t (relative, as typed)), kernel (6.1 vs unknown)"
        );
        assert_eq!(differing_field(&fake, &eq), None);
        assert_eq!(root_as_typed(&fake), Some("t"));
        assert_eq!(root_as_typed(&live), None);
        // A file that records no environment is not checked.
        assert!(probe_signature(&json!({"kind": "probe"})).is_empty());
    }

    #[test]
    fn a_recorded_root_wins_and_a_typed_one_loses_only_its_dots() {
        let mut doc = json!({"env": {"root": "/srv/t",
            "machine": {"command": ["irqlab", "probe", "--root", "t"]}}});
        assert_eq!(probe_signature(&doc)[0].1, "/srv/t");
        doc["env"].as_object_mut().unwrap().remove("root");
        assert_eq!(probe_signature(&doc)[0].1, "t (relative, as typed)");
        for (typed, want) in [
            ("./t/", "t (relative, as typed)"),
            ("a/./t", "a/t (relative, as typed)"),
            ("../t", "../t (relative, as typed)"),
            (".", ". (relative, as typed)"),
            ("/srv/./t/", "/srv/t"),
            ("/", "/"),
        ] {
            assert_eq!(typed_root(typed), want, "{typed}");
        }
    }

    #[test]
    fn another_machine_is_noted_but_not_another_kernel_or_tree() {
        let env = |kernel: &str, host: &str, cpus: &str| {
            machine_signature(
                &json!({"kernel_release": kernel, "hostname": host,
                    "cpu_model": "EPYC", "online_cpus": cpus}),
                Some("/"),
            )
        };
        let base = env("6.1", "h", "0-1");
        assert_eq!(base[4], ("online_cpus".to_string(), "0-1".to_string()));
        let kernel = env("6.8", "h", "0-1");
        assert_eq!(other_machine(("a", &base), ("b", &kernel)), None);
        let other = env("6.8", "h2", "0-63");
        assert_eq!(
            other_machine(("a", &base), ("b", &other)).unwrap(),
            "variant b ran on another machine or set of CPUs than the baseline a: \
             hostname (h vs h2), online_cpus (0-1 vs 0-63); a change may be the \
             machine's, not what the variants differ in"
        );
        assert_eq!(other_machine(("a", &base), ("b", &[])), None);
    }

    #[test]
    fn another_trial_length_is_noted() {
        let plan = |d: f64| {
            plan_signature(
                Some(&json!({"variants": ["a"], "workloads": ["ipi"], "duration_s": d})),
                "a",
            )
        };
        let (two, five) = (plan(2.0), plan(5.0));
        assert_eq!(other_trial_length(("a", &two), ("b", &plan(2.0))), None);
        assert_eq!(other_trial_length(("a", &two), ("b", &[])), None);
        assert_eq!(
            other_trial_length(("a", &two), ("b", &five)).unwrap(),
            "variant b ran trials of 5 s, the baseline a trials of 2 s: a count per trial \
             (unit 1) grows with the trial length and a quantile per trial moves with it; a \
             change in them may be the trial length's"
        );
    }

    /// A bench run directory `out` with variant `tip`'s `trials.jsonl` and
    /// `trials.csv` (one trial), and `plan.json`, `env.json`,
    /// `summary.json` and one `env-resume-*.json` that all parse.
    fn run_dir(out: &Path) -> PathBuf {
        let vdir = out.join("tip");
        std::fs::create_dir_all(&vdir).unwrap();
        let line = r#"{"schema":2,"variant":"tip","trial":1,"boot_id":"b","started_at":"2026-12-01T10:00:00Z","duration_s":1.0,"metrics":{"a_per_sec":{"value":5,"unit":"1/s","direction":"higher"}}}"#;
        std::fs::write(vdir.join("trials.jsonl"), format!("{line}\n")).unwrap();
        let csv = "variant,trial,boot_id,started_at,duration_s,a_per_sec\n\
                   tip,1,b,2026-12-01T10:00:00Z,1,5\n";
        std::fs::write(vdir.join("trials.csv"), csv).unwrap();
        for name in RECORDS {
            std::fs::write(out.join(name), record("")).unwrap();
        }
        vdir
    }

    const RECORDS: [&str; 4] = [
        "plan.json",
        "env.json",
        "summary.json",
        "env-resume-2026-12-01T11:00:00Z.json",
    ];

    /// A run record whose second line holds `extra` in its object.
    fn record(extra: &str) -> String {
        format!("{{\"started_at\":\"2026-12-01T10:00:00Z\",\n\"warnings\":[]{extra}}}\n")
    }

    #[test]
    fn a_key_twice_in_a_run_record_is_an_error_naming_the_file_line_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let vdir = run_dir(dir.path());
        let jsonl = [vdir.join("trials.jsonl")];
        let csv = vdir.join("trials.csv");
        assert_eq!(load_runs(&jsonl, "x", &mut Vec::new()).unwrap().len(), 1);
        let table = super::super::input_table::load_csv;
        assert_eq!(table(&csv, "x", &mut Vec::new()).unwrap().len(), 1);
        for name in RECORDS {
            let path = dir.path().join(name);
            std::fs::write(&path, record(",\"warnings\":[\"x\"]")).unwrap();
            let want = format!(
                "{}: line 2: key \"warnings\" is in one object twice",
                path.display()
            );
            let e = format!("{:#}", load_runs(&jsonl, "x", &mut Vec::new()).unwrap_err());
            assert!(e.contains(&want), "{name}: {e}");
            // a trials.csv reads its run's plan and environment
            if ["plan.json", "env.json"].contains(&name) {
                let e = format!("{:#}", table(&csv, "x", &mut Vec::new()).unwrap_err());
                assert!(e.contains(&want), "{name}: {e}");
            }
            std::fs::write(&path, record("")).unwrap();
        }
    }

    #[test]
    fn a_trials_file_without_a_trial_is_noted_as_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let vdir = run_dir(dir.path());
        let empty = dir.path().join("patch").join("trials.jsonl");
        std::fs::create_dir_all(empty.parent().unwrap()).unwrap();
        std::fs::write(&empty, "").unwrap();
        let mut warns = Vec::new();
        let files = [empty.clone(), vdir.join("trials.jsonl")];
        let vs = load_runs(&files, "x", &mut warns).unwrap();
        assert_eq!(vs.len(), 1);
        let want = format!("{}: holds no trial (its run ended before", empty.display());
        assert!(warns.iter().any(|w| w.starts_with(&want)), "{warns:?}");
    }
}
