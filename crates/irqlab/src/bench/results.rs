//! Result files of a bench run, written as trials finish so an interrupted
//! run keeps every finished trial (the record schema itself lives in
//! [`crate::results`] and `docs/results-schema.md`):
//!
//! - `plan.json`: the plan and command line (checked and read back by `--resume`);
//! - `env.json`: the environment (kernel, CPUs, governors, warnings …);
//! - `<variant>/trials.jsonl` and `<variant>/trials.csv`: one record per trial;
//! - `summary.json`: per variant and metric, count/mean/std/min/p50/p90/p99/max
//!   and CV — built here from the records.

use super::metric::Metric;
use crate::direction::Direction;
use crate::results::TrialRecord;
use crate::stats::describe::{describe, Describe};
use serde::Serialize;
use std::collections::BTreeMap;

/// Add the metrics of one source (system, threads, workload) to `t`.
pub fn add(t: &mut TrialRecord, metrics: Vec<Metric>) {
    for m in metrics {
        t.insert(&m.name, m.value, &m.unit, m.direction);
    }
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

/// Per variant, per metric summaries.
pub type BenchSummary = BTreeMap<String, BTreeMap<String, MetricSummary>>;

/// Per variant, per metric summaries of `trials`.
pub fn summarize(trials: &[TrialRecord]) -> BenchSummary {
    let mut values: BTreeMap<(String, String), (Vec<f64>, crate::results::Value)> = BTreeMap::new();
    for t in trials {
        for (name, v) in &t.metrics {
            let e = values
                .entry((t.variant.clone(), name.clone()))
                .or_insert_with(|| (Vec::new(), v.clone()));
            e.0.push(v.value);
        }
    }
    let mut out = BenchSummary::new();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarizes_per_variant_and_metric() {
        let trials: Vec<TrialRecord> = [10.0, 12.0, 14.0]
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut t = TrialRecord::new("tip", i as u32 + 1, "b", "t".into());
                add(
                    &mut t,
                    vec![Metric::new("irq_36_per_sec", *v, "1/s", Direction::None)],
                );
                t
            })
            .collect();
        let s = summarize(&trials);
        let m = &s["tip"]["irq_36_per_sec"];
        assert_eq!(m.describe.mean, 12.0);
        assert_eq!(m.direction, Direction::None);
        assert!((m.cv_pct.unwrap() - 100.0 * 2.0 / 12.0).abs() < 1e-9);
    }
}
