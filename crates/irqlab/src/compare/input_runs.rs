//! The run each value belongs to, for inputs other than bench directories
//! and probe files (which name their runs): trials of one run are one
//! cluster, and compare's tests take runs, not trials, as the unit
//! (`model`). A bench `trials.csv` belongs to its run directory, like its
//! `trials.jsonl`; a table's `run` column names runs; an argument pooled
//! with others under one `LABEL=` is one run. Values with no run at all are
//! each taken as an independent run, with a note. Specified in
//! `docs/compare-input.md` ("Runs").

use super::input::{Found, VariantData};
use serde_json::Value;
use std::path::Path;

/// The columns bench writes first in a `trials.csv`
/// (`docs/results-schema.md`).
const BENCH_HEAD: [&str; 5] = ["variant", "trial", "boot_id", "started_at", "duration_s"];

/// A bench `trials.csv`: its run (the key its `trials.jsonl` gets) and plan.
pub struct BenchCsv {
    pub run: String,
    pub plan: Option<Value>,
    pub machine: Vec<(String, String)>,
}

/// `Some` when `header` is the header bench writes; an error for a key
/// twice in one object of its run's `plan.json` or `env.json`.
pub fn bench_csv(path: &Path, header: &[String]) -> anyhow::Result<Option<BenchCsv>> {
    if header.len() < BENCH_HEAD.len() || header[..BENCH_HEAD.len()] != BENCH_HEAD {
        return Ok(None);
    }
    let (run, plan) = super::input_bench::run_of(path)?;
    Ok(Some(BenchCsv {
        machine: super::input_bench::run_machine(&run)?,
        run: run.display().to_string(),
        plan,
    }))
}

/// The run key of a table row's `run` cell.
pub fn row_run(path: &Path, cell: &str) -> String {
    format!("{}: run {cell}", path.display())
}

/// Does `v` have values with no run?
fn runless(v: &VariantData) -> bool {
    v.series
        .iter()
        .any(|s| s.obs.iter().any(|o| o.run.is_none()))
}

/// Arguments pooled under one label (`A=r1.txt A=r2.txt`) are one run
/// each: their values with no run get the argument's path as their run.
pub fn arguments_as_runs(found: &mut [Found], warns: &mut Vec<String>) {
    for i in 0..found.len() {
        let label = &found[i].data.label;
        let pooled = found
            .iter()
            .any(|f| f.data.label == *label && f.arg != found[i].arg);
        if !pooled || !runless(&found[i].data) {
            continue;
        }
        let f = &mut found[i];
        let run = f.path.display().to_string();
        for s in &mut f.data.series {
            for o in s.obs.iter_mut().filter(|o| o.run.is_none()) {
                o.run = Some(run.clone());
            }
        }
        warns.push(format!(
            "{run}: names no runs: taken as one run of variant {} (it pools several \
             arguments)",
            f.data.label
        ));
    }
}

/// Values that still have no run are each an independent run: a note per
/// variant says so, and when other values have runs each gets a run of
/// its own, so that the tests compare runs with runs.
pub fn rows_as_runs(variants: &mut [VariantData], warns: &mut Vec<String>) {
    let any_run = variants.iter().any(|v| {
        v.series
            .iter()
            .any(|s| s.obs.iter().any(|o| o.run.is_some()))
    });
    for v in variants.iter_mut().filter(|v| runless(v)) {
        warns.push(format!(
            "{}: its input names no runs: each value is taken as an independent run \
             (if they are not, give a `run` column, or one LABEL=PATH per run)",
            v.label
        ));
        if !any_run {
            continue;
        }
        for s in &mut v.series {
            for (i, o) in s.obs.iter_mut().enumerate() {
                if o.run.is_none() {
                    o.run = Some(format!("{}#{}", v.label, i + 1));
                }
            }
        }
    }
}
