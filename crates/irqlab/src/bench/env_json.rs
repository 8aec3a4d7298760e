//! The environment recorded with every bench run (`env.json`): the shared
//! [`crate::env::Environment`] plus the affinity of the IRQs the run
//! measures. Read through HostFs. A `--resume` in another environment is
//! refused ([`check_resume`]).

use super::measured::Measured;
use super::plan::invalid;
use crate::compare::input_json;
use crate::env::Environment;
use crate::host::HostFs;
use irqlab_core::paths;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// Affinity of one selected IRQ.
#[derive(Debug, Serialize)]
pub struct IrqAffinity {
    pub label: String,
    pub what: String,
    pub smp_affinity_list: Option<String>,
    pub effective_affinity_list: Option<String>,
}

/// `env.json` of a bench run.
#[derive(Debug, Serialize)]
pub struct BenchEnvironment {
    #[serde(flatten)]
    pub env: Environment,
    /// The tree read ([`tree_root`]): what `compare` tells runs apart by.
    pub root: String,
    pub irqs: Vec<IrqAffinity>,
    /// Whether /proc/stat's irq and softirq times are measured or tick
    /// samples (`bench::irqtime`); filled in by the trial loop.
    pub irq_time_accounting: String,
}

/// Read the environment and the selected IRQs' affinity.
pub fn collect(fs: &HostFs, sel: &Measured, started_at: String) -> BenchEnvironment {
    let irqs = sel
        .rows
        .iter()
        .map(|s| IrqAffinity {
            label: s.label.clone(),
            what: s.what.clone(),
            smp_affinity_list: fs.read_attr(&paths::proc_irq(&s.label, paths::SMP_AFFINITY_LIST)),
            effective_affinity_list: fs
                .read_attr(&paths::proc_irq(&s.label, paths::EFFECTIVE_AFFINITY_LIST)),
        })
        .collect();
    BenchEnvironment {
        env: crate::env::collect(fs, started_at),
        root: tree_root(fs.root()),
        irqs,
        irq_time_accounting: String::new(),
    }
}

/// Refuse to resume the run in `out` in another environment than its
/// `env.json` records — another tree, kernel, host name, CPU model or set
/// of online CPUs (the fields `compare` keeps resumed parts apart by,
/// `compare::resume_differences`): its trials and the new ones
/// would be one result set of two machines. `current` is this
/// invocation's environment, `plan_argv` the run's stored command line;
/// `has_trials`: the run holds trials (without them, and without an
/// `env.json`, there is nothing to mix). A usage error naming each field
/// with both values.
pub fn check_resume(
    out: &Path,
    current: &BenchEnvironment,
    plan_argv: &[String],
    has_trials: bool,
) -> anyhow::Result<()> {
    let path = out.join("env.json");
    let unknown = |why: String| {
        invalid(format!(
            "--resume {}: {}: {why}: the environment of the trials there is unknown, so \
             this run's could not be told apart from theirs; start a new run with another --out",
            out.display(),
            path.display()
        ))
    };
    let mut saved: Value = match std::fs::read(&path) {
        Ok(bytes) => match input_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(input_json::Bad::Invalid(e)) => {
                return Err(unknown(format!("not an environment record ({e})")))
            }
            Err(input_json::Bad::Repeated { key, line }) => {
                let at = format!(
                    "--resume {}: {}: line {line}",
                    out.display(),
                    path.display()
                );
                return Err(invalid(input_json::repeated(&at, &key).to_string()));
            }
        },
        Err(_) if !has_trials => return Ok(()),
        Err(e) => return Err(unknown(e.to_string())),
    };
    let relative = resolve_relative_root(&mut saved, out, &path, &current.root)?;
    let now = serde_json::to_value(current)?;
    let diffs = crate::compare::resume_differences(&saved, &now, plan_argv);
    if diffs.is_empty() {
        return Ok(());
    }
    let fields: Vec<String> = diffs
        .iter()
        .map(|(f, then, here)| match (f.as_str(), &relative) {
            ("root", Some(r)) => {
                format!("{f} differs ({r}, read from this directory as {then}, there; {here} here)")
            }
            _ => format!("{f} differs ({then} there, {here} here)"),
        })
        .collect();
    Err(invalid(format!(
        "--resume {}: this run would not measure what the stored run measured ({}): {}; \
         its trials and the new ones would mix two environments in one result set: \
         resume on the tree and machine the run started on, or start a new run with \
         another --out",
        out.display(),
        path.display(),
        fields.join(", ")
    )))
}

/// Replace a relative `root` in `saved` (the `env.json` at `path`, as an
/// older irqlab wrote it) by the tree it names from the current directory
/// ([`comparable_root`]); returns it as stored. A relative root that names
/// nothing here is a usage error naming it: the tree the trials read
/// cannot be checked against this run's (`here`).
fn resolve_relative_root(
    saved: &mut Value,
    out: &Path,
    path: &Path,
    here: &str,
) -> anyhow::Result<Option<String>> {
    let Some(stored) = saved["root"]
        .as_str()
        .filter(|r| Path::new(r).is_relative())
        .map(str::to_string)
    else {
        return Ok(None);
    };
    let Some(resolved) = resolve_root(&stored) else {
        let cwd = std::env::current_dir()
            .map_or_else(|e| format!("unknown: {e}"), |d| d.display().to_string());
        return Err(invalid(format!(
            "--resume {}: {} records the tree read as the relative root {stored:?}, which \
             names nothing from this directory ({cwd}): the tree its trials read could not be \
             checked against this run's ({here}); resume from the directory the run started \
             in, or start a new run with another --out",
            out.display(),
            path.display()
        )));
    };
    saved["root"] = Value::String(resolved);
    Ok(Some(stored))
}

/// A stored `root`, made comparable with [`tree_root`]'s: an absolute one
/// as it is; a relative one (an older irqlab stored the root as typed)
/// resolved against the current directory and made canonical, else `None`.
pub fn resolve_root(stored: &str) -> Option<String> {
    let p = Path::new(stored);
    if p.is_absolute() {
        return Some(stored.to_string());
    }
    std::fs::canonicalize(p)
        .ok()
        .map(|c| c.display().to_string())
}

/// [`resolve_root`], or the stored root as it is when it names nothing
/// here (`compare` then tells the parts apart by it, with a note).
pub fn comparable_root(stored: &str) -> String {
    resolve_root(stored).unwrap_or_else(|| stored.to_string())
}

/// The tree a run reads, as recorded for `compare` (bench's `env.json`
/// and probe's `env` `root`): absolute and canonical (`./t`, `t` and a
/// link to it are one tree; `t` from two working directories two), else
/// absolute, else as given; `/` for the live host.
pub fn tree_root(root: &std::path::Path) -> String {
    std::fs::canonicalize(root)
        .or_else(|_| std::path::absolute(root))
        .unwrap_or_else(|_| root.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_affinity_of_selected_irqs() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("proc/irq/36/smp_affinity_list");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "0-1\n").unwrap();
        let sel = Measured {
            rows: vec![super::super::measured::MeasuredIrq {
                label: "36".into(),
                what: "virtio".into(),
            }],
        };
        let env = collect(&HostFs::new(dir.path()), &sel, "t".into());
        assert_eq!(env.irqs[0].smp_affinity_list.as_deref(), Some("0-1"));
        let json = serde_json::to_value(&env).unwrap();
        assert_eq!(json["boot_id"], "unknown", "flattened: {json}");
        let canonical = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(json["root"], canonical.display().to_string());
        let dotted = dir.path().join(".").join("proc").join("..");
        assert_eq!(tree_root(&dotted), canonical.display().to_string());
        assert_eq!(tree_root(std::path::Path::new("/")), "/");
    }
}
