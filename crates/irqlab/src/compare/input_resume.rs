//! The resumed parts of a bench run: `irqlab bench --resume` writes
//! `env-resume-<time>.json` beside the run's `env.json`, one per resumed
//! part. A part's trials pool with the first part's only when its
//! environment agrees with `env.json` on what makes trials comparable
//! ([`differences`]: the tree read, kernel, host name, CPU model and
//! online CPUs); a part that differs (written before `bench --resume`
//! refused that, by the same check) is kept apart as a run of its own,
//! with a note naming the fields. Which part a trial belongs to: its boot
//! id and start time (docs/compare-input.md).

use super::input_bench::{machine_signature, typed_root};
use super::input_json::read_record;
use crate::results::TrialRecord;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A field of an environment, its value in the first part and in another.
pub type Difference = (String, String, String);

/// What must agree before runs pool: (field, value) pairs.
pub type Signature = [(String, String)];

/// The fields in which `part`'s environment (a resumed part's, or the one
/// `bench --resume` is about to run in) differs from the first part's
/// (`first`, the run's `env.json`): (field, first's value, part's value).
/// `plan_argv` is the run's stored command line, whose `--root` a resume
/// without one read. Fields only one side records are not compared.
pub fn differences(first: &Value, part: &Value, plan_argv: &[String]) -> Vec<Difference> {
    let recorded = first["root"].is_string() && part["root"].is_string();
    differ(
        &signature(first, recorded, plan_argv),
        &signature(part, recorded, plan_argv),
    )
}

/// The fields both signatures have and in which they differ.
fn differ(a: &[(String, String)], b: &[(String, String)]) -> Vec<Difference> {
    a.iter()
        .filter_map(|(k, va)| {
            let vb = b.iter().find(|(kb, _)| kb == k).map(|(_, v)| v)?;
            (va != vb).then(|| (k.clone(), va.clone(), vb.clone()))
        })
        .collect()
}

/// `field (a vs b)`, joined by commas.
fn describe(diffs: &[Difference]) -> String {
    diffs
        .iter()
        .map(|(k, a, b)| format!("{k} ({a} vs {b})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What must agree between the parts of a run: the [`machine_signature`]
/// (tree, kernel, host name, CPU model, online CPUs). The tree is
/// the recorded `root` when every side has one (`recorded`), else the
/// `--root` its command line typed, else the stored plan's.
fn signature(env: &Value, recorded: bool, plan_argv: &[String]) -> Vec<(String, String)> {
    let root = if recorded {
        env["root"]
            .as_str()
            .map(crate::bench::env_json::comparable_root)
    } else {
        let argv: Vec<&str> = env["command"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let plan: Vec<&str> = plan_argv.iter().map(String::as_str).collect();
        let typed = given_root(&argv).or_else(|| given_root(&plan));
        Some(typed_root(typed.unwrap_or("/")))
    };
    machine_signature(env, root.as_deref())
}

/// The `--root` a command line gives (`--root DIR`, `--root=DIR`).
fn given_root<'a>(argv: &[&'a str]) -> Option<&'a str> {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if *a == "--root" {
            return it.next().copied();
        }
        if let Some(dir) = a.strip_prefix("--root=") {
            return Some(dir);
        }
    }
    None
}

/// One part of a run: the first (`env.json`) or a resumed one.
#[derive(Debug)]
struct Part {
    /// The run directory for the first part, else its `env-resume` file.
    file: PathBuf,
    started: SystemTime,
    started_text: String,
    boot_id: Option<String>,
    /// What its trials pool under: the first part of its environment
    /// (the run directory when that is the first part's).
    key: PathBuf,
    /// Its signature, for pooling it with other runs.
    machine: Vec<(String, String)>,
    /// How it differs from the first part (empty: it pools with it).
    differs: Vec<Difference>,
}

/// The parts of a bench run whose resumed parts do not all agree with
/// its first part; empty (every trial pools as one run) otherwise.
#[derive(Debug, Default)]
pub struct Resumed {
    run: PathBuf,
    /// In start order; `parts[0]` is the first part.
    parts: Vec<Part>,
}

/// A JSON file's document; an error names the file (and the line and key
/// of a key twice in one object: `input_json`).
fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    super::input_json::read(path, &text)
}

/// `doc`'s `started_at` as a time; an error names `path`.
fn started(doc: &Value, path: &Path) -> Result<(SystemTime, String)> {
    let text = doc["started_at"].as_str().unwrap_or_default();
    match humantime::parse_rfc3339_weak(text) {
        Ok(t) => Ok((t, text.to_string())),
        Err(_) => bail!(
            "{}: started_at {text:?} is not an RFC 3339 time",
            path.display()
        ),
    }
}

/// The `env-resume-*.json` files of `run`, by name.
fn resume_files(run: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(run).with_context(|| format!("{}", run.display()))? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("env-resume-") && name.ends_with(".json") && e.file_type()?.is_file() {
            out.push(e.path());
        }
    }
    out.sort();
    Ok(out)
}

impl Resumed {
    /// Read `run`'s `env.json` and `env-resume-*.json` (`plan`: its
    /// `plan.json`). Without resumed parts, or an `env.json` to hold them
    /// to, or when every part agrees with the first: nothing. A resumed
    /// part's file that does not read is an error naming it.
    pub fn read(run: &Path, plan: Option<&Value>) -> Result<Self> {
        let files = resume_files(run)?;
        let env_path = run.join("env.json");
        if files.is_empty() || !env_path.is_file() {
            return Ok(Self::default());
        }
        let argv: Vec<String> = plan.map_or(Vec::new(), |p| {
            p["argv"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect()
        });
        let mut docs = vec![(run.to_path_buf(), read_json(&env_path)?)];
        for f in files {
            let doc = read_json(&f)?;
            docs.push((f, doc));
        }
        let recorded = docs.iter().all(|(_, d)| d["root"].is_string());
        let mut parts: Vec<Part> = Vec::new();
        for (i, (file, doc)) in docs.into_iter().enumerate() {
            let (at, text) = started(&doc, if i == 0 { &env_path } else { &file })?;
            parts.push(Part {
                key: file.clone(),
                file,
                started: at,
                started_text: text,
                boot_id: doc["boot_id"].as_str().map(str::to_string),
                machine: signature(&doc, recorded, &argv),
                differs: Vec::new(),
            });
        }
        parts[1..].sort_by_key(|p| p.started);
        for i in 1..parts.len() {
            let differs = differ(&parts[0].machine, &parts[i].machine);
            let like = |p: &Part| {
                p.differs.is_empty() == differs.is_empty()
                    && differ(&p.machine, &parts[i].machine).is_empty()
            };
            let key = parts[..i].iter().find(|p| like(p)).map(|p| p.key.clone());
            let p = &mut parts[i];
            p.key = key.unwrap_or_else(|| p.file.clone());
            p.differs = differs;
        }
        if parts.iter().all(|p| p.differs.is_empty()) {
            return Ok(Self::default());
        }
        Ok(Resumed {
            run: run.to_path_buf(),
            parts,
        })
    }

    /// A note per resumed part kept apart from the first part.
    pub fn notes(&self) -> Vec<String> {
        self.parts
            .iter()
            .filter(|p| !p.differs.is_empty())
            .map(|p| {
                format!(
                    "{}: the part resumed at {} ({}) ran on another environment than \
                     env.json records: {}; its trials are not pooled with the first part's",
                    self.run.display(),
                    p.started_text,
                    p.file.display(),
                    describe(&p.differs)
                )
            })
            .collect()
    }

    /// What trial `t` of `file` pools under when the run's parts are kept
    /// apart: the part's key (the run directory for the first part's
    /// environment, else the `env-resume` file of the first part with
    /// its environment) and signature. The trial's part is the latest
    /// one started at or before it with its boot id (else the latest
    /// started at or before it; a trial and a resume started in the same
    /// second of one boot count as the resumed part's). None when the
    /// run's trials pool as one.
    pub fn part_of(&self, t: &TrialRecord, file: &Path) -> Result<Option<(&Path, &Signature)>> {
        let Some(first) = self.parts.first() else {
            return Ok(None);
        };
        let Ok(at) = humantime::parse_rfc3339_weak(&t.started_at) else {
            bail!(
                "{}: trial {} of {}: started_at {:?} is not an RFC 3339 time; \
                 {} was resumed on another environment and its trials cannot be told apart",
                file.display(),
                t.trial,
                t.variant,
                t.started_at,
                self.run.display()
            );
        };
        let before: Vec<&Part> = self.parts.iter().filter(|p| p.started <= at).collect();
        let same_boot = before
            .iter()
            .rev()
            .find(|p| p.boot_id.as_deref() == Some(t.boot_id.as_str()));
        let part = same_boot.or(before.last()).copied().unwrap_or(first);
        Ok(Some((part.key.as_path(), part.machine.as_slice())))
    }
}

/// The warnings each resumed part of `run` recorded (its
/// `env-resume-*.json` `warnings`) that `env.json` does not, each
/// prefixed with the run directory and the part's file. A key twice in
/// one object of one of the files is an error (`input_json`).
pub fn resume_warnings(run: &Path) -> Result<Vec<String>> {
    let first: Vec<String> = read_record(&run.join("env.json"))?
        .map(|d| warnings_of(&d))
        .unwrap_or_default();
    let mut out = Vec::new();
    for f in resume_files(run).unwrap_or_default() {
        let Some(doc) = read_record(&f)? else {
            continue;
        };
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        for w in warnings_of(&doc).into_iter().filter(|w| !first.contains(w)) {
            out.push(format!("{}: bench ({name}): {w}", run.display()));
        }
    }
    Ok(out)
}

fn warnings_of(doc: &Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(root: Option<&str>, kernel: &str, cpus: &str, command: &[&str]) -> Value {
        let mut e = json!({"kernel_release": kernel, "hostname": "h", "cpu_model": "EPYC",
            "online_cpus": cpus, "command": command, "boot_id": "b",
            "started_at": "2026-12-04T05:00:00Z"});
        if let Some(r) = root {
            e["root"] = r.into();
        }
        e
    }

    #[test]
    fn differences_name_the_field_and_both_values() {
        let argv = vec![
            "irqlab".to_string(),
            "bench".into(),
            "--root".into(),
            "t".into(),
        ];
        let first = env(Some("/w/t"), "6.1", "0-1", &["irqlab", "bench"]);
        assert!(differences(&first, &first, &argv).is_empty());
        let moved = env(Some("/w/u"), "6.8", "0", &["irqlab", "bench"]);
        assert_eq!(
            describe(&differences(&first, &moved, &argv)),
            "root (/w/t vs /w/u), kernel (6.1 vs 6.8), online_cpus (0-1 vs 0)"
        );
        // Older records: the typed roots, a resume without --root read the plan's.
        let old = env(None, "6.1", "0-1", &["irqlab", "bench", "--root", "t"]);
        let resumed = env(None, "6.1", "0-1", &["irqlab", "bench", "--resume", "o"]);
        assert!(differences(&old, &resumed, &argv).is_empty());
        let other = env(
            None,
            "6.1",
            "0-1",
            &["irqlab", "bench", "--resume", "o", "--root=u"],
        );
        assert_eq!(
            describe(&differences(&old, &other, &argv)),
            "root (t (relative, as typed) vs u (relative, as typed))"
        );
    }
}
