//! Result files of a bench run, written as trials finish so an interrupted
//! run keeps every finished trial (the record schema itself lives in
//! [`crate::results`] and `docs/results-schema.md`):
//!
//! - `plan.json`: the plan and command line (checked and read back by `--resume`);
//! - `env.json`: the environment (kernel, CPUs, governors, warnings …);
//! - `<variant>/trials.jsonl` and `<variant>/trials.csv`: one record per trial;
//! - `summary.json`: whether the run is complete or was interrupted (and
//!   how many trials finished), the run's notes and data-quality warnings
//!   (drift with trial order, multimodality, high variation: `compare`'s
//!   own warnings of the same trials), and per
//!   variant and metric count/mean/std/min/p50/p90/p99/max and CV — built
//!   here from the records.

use super::metric_value::Metric;
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

/// `summary.json`: the run's state, notes, warnings and summaries.
#[derive(Debug, Serialize)]
pub struct SummaryFile {
    /// Version of this document (2: the run's state around `variants`).
    pub schema: u32,
    /// Every planned trial finished.
    pub complete: bool,
    /// The signal that ended the run early (`SIGINT`, `SIGTERM`).
    pub interrupted: Option<String>,
    /// Timed trials recorded, all variants.
    pub finished_trials: usize,
    /// Timed trials planned, all variants.
    pub planned_trials: usize,
    /// What the figures mean on this machine (e.g. tick-sampled shares
    /// left out, counters read from another tree).
    pub notes: Vec<String>,
    /// Data-quality warnings (drift, multimodal, high variation).
    pub warnings: Vec<String>,
    pub variants: BenchSummary,
}

/// Version of [`SummaryFile`].
pub const SUMMARY_SCHEMA: u32 = 2;

/// Data-quality warnings of `trials` (in the order they ran), those
/// `compare` gives for the same trials (its
/// `compare::model::series_warnings`, one call per series): per
/// variant and metric judged (`judged`: the headline and the metrics with
/// a better direction), a trend with trial order, multimodality and high
/// variation, each test at its level over the number of variants that
/// have the metric. Labelled `variant metric`.
pub fn warnings(
    trials: &[TrialRecord],
    judged: impl Fn(&str, &crate::results::Value) -> bool,
) -> Vec<String> {
    let mut series: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for t in trials {
        for (name, v) in &t.metrics {
            if judged(name, v) {
                series
                    .entry((name.clone(), t.variant.clone()))
                    .or_default()
                    .push(v.value);
            }
        }
    }
    let mut out = Vec::new();
    for ((name, variant), v) in &series {
        let k = series.keys().filter(|(n, _)| n == name).count().max(1);
        let label = format!("{variant} {name}");
        out.extend(crate::compare::model::series_warnings(&label, v, k));
    }
    out
}

// compare's defaults, which `trials_for_effect` plans for
use crate::compare::{DEFAULT_ALPHA as COMPARE_ALPHA, DEFAULT_NOISE_PCT as COMPARE_NOISE_PCT};

/// Trials per variant for `compare` to detect a change of `effect_pct`
/// with 80 % power at `alpha`, interleaved variants, a metric whose
/// coefficient of variation is `cv_pct`, behind a noise gate of
/// `noise_pct`: the normal approximation n = 2 ((z₁₋α/₂ + z₀.₈) cv /
/// (effect − noise))², at least 5. `None` when the effect does not clear
/// the gate (no trial count detects it) or the inputs are not finite.
pub fn trials_for_effect(cv_pct: f64, effect_pct: f64, noise_pct: f64, alpha: f64) -> Option<u64> {
    let margin = effect_pct - noise_pct;
    if !(cv_pct.is_finite() && margin.is_finite() && margin > 0.0 && cv_pct >= 0.0) {
        return None;
    }
    let n = 2.0 * (crate::compare::model::z_sum(alpha) * cv_pct / margin).powi(2);
    (n.is_finite() && n < 1e9).then(|| (n.ceil() as u64).max(5))
}

/// The `--target-effect` note of one variant's headline metric.
pub fn target_effect_note(
    variant: &str,
    metric: &str,
    cv_pct: Option<f64>,
    trials: usize,
    effect_pct: f64,
) -> String {
    let Some(cv) = cv_pct else {
        return format!(
            "target effect {effect_pct} %: {variant} {metric} has no spread to plan from ({trials} trials)"
        );
    };
    let head = format!(
        "target effect {effect_pct} %: {variant} {metric} varies by CV {cv:.2} % over {trials} trials"
    );
    let at = |noise: f64| trials_for_effect(cv, effect_pct, noise, COMPARE_ALPHA);
    match (at(COMPARE_NOISE_PCT), at(0.0)) {
        (Some(n), _) => format!(
            "{head}: compare needs about {n} trials per variant, interleaved in one bench, to detect it with 80 % power (alpha {COMPARE_ALPHA}, noise gate {COMPARE_NOISE_PCT} %){}",
            if n as usize <= trials { "; this run has enough" } else { "" }
        ),
        (None, Some(n)) => format!(
            "{head}: compare's default noise gate ({COMPARE_NOISE_PCT} %) hides a change this small; with `compare --noise 0` about {n} trials per variant, interleaved in one bench, detect it with 80 % power"
        ),
        (None, None) => format!("{head}: no trial count detects it"),
    }
}

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
    fn trials_for_an_effect_follow_the_normal_approximation() {
        // CV 1 %, +2 % behind a 1 % gate: 2 (2.8 * 1 / 1)^2 = 15.7 -> 16
        assert_eq!(trials_for_effect(1.0, 2.0, 1.0, 0.05), Some(16));
        // ten times the spread, a hundred times the trials
        assert_eq!(trials_for_effect(10.0, 2.0, 1.0, 0.05), Some(1570));
        // tiny spread: at least 5
        assert_eq!(trials_for_effect(0.01, 5.0, 1.0, 0.05), Some(5));
        // an effect inside the gate is never detected
        assert_eq!(trials_for_effect(1.0, 1.0, 1.0, 0.05), None);
        assert_eq!(trials_for_effect(f64::NAN, 2.0, 1.0, 0.05), None);
        let note = target_effect_note("tip", "round_trips_per_sec", Some(1.0), 10, 1.0);
        assert!(note.contains("noise gate (1 %) hides"), "{note}");
        assert!(note.contains("--noise 0"), "{note}");
        let note = target_effect_note("tip", "round_trips_per_sec", Some(1.0), 20, 2.0);
        assert!(note.contains("about 16 trials per variant"), "{note}");
        assert!(note.ends_with("this run has enough"), "{note}");
    }

    fn series(name: &str, values: &[f64]) -> Vec<TrialRecord> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut t = TrialRecord::new("tip", i as u32 + 1, "b", "t".into());
                add(
                    &mut t,
                    vec![Metric::new(name, *v, "1/s", Direction::Higher)],
                );
                t
            })
            .collect()
    }

    #[test]
    fn a_climbing_headline_warns_of_drift_and_high_variation() {
        // the default bench of the report: 58 k climbing to 76 k in ten trials
        let v = [
            58e3, 60e3, 61.5e3, 63e3, 65e3, 67e3, 69e3, 71e3, 73.5e3, 76e3,
        ];
        let ws = warnings(&series("round_trips_per_sec", &v), |_, _| true);
        assert!(
            ws.iter()
                .any(|x| x.starts_with("tip round_trips_per_sec: drifts with trial order")),
            "{ws:?}"
        );
        assert!(ws.iter().any(|x| x.contains("high variation")), "{ws:?}");
        let steady = [70e3, 70.5e3, 69.8e3, 70.2e3, 70.1e3, 69.9e3, 70.3e3, 70e3];
        assert!(warnings(&series("round_trips_per_sec", &steady), |_, _| true).is_empty());
        assert!(warnings(&series("round_trips_per_sec", &v), |_, _| false).is_empty());
    }

    /// What `compare` warns of `trials`' metric `name`, labelled as
    /// bench labels them (`variant metric`).
    fn compare_warnings(trials: &[TrialRecord], name: &str) -> Vec<String> {
        use crate::compare::{Loaded, Obs, VariantData};
        let mut variants: Vec<VariantData> = Vec::new();
        for t in trials {
            let i = match variants.iter().position(|v| v.label == t.variant) {
                Some(i) => i,
                None => {
                    variants.push(VariantData::new(&t.variant, true));
                    variants.len() - 1
                }
            };
            let v = &t.metrics[name];
            variants[i].push(name, Some(&v.unit), Some(v.direction), Obs::plain(v.value));
        }
        let labels: Vec<String> = variants.iter().map(|v| v.label.clone()).collect();
        let loaded = Loaded {
            variants,
            warnings: Vec::new(),
            metric_named: false,
        };
        let settings = crate::compare::model::Settings {
            alpha: 0.05,
            noise_pct: 1.0,
            resamples: 200,
            seed: 1,
            directions: crate::compare::DirectionRules::default(),
        };
        let c = crate::compare::model::build(loaded, None, settings).unwrap();
        c.metrics[0]
            .warnings
            .iter()
            .map(|w| {
                let l = labels
                    .iter()
                    .find(|l| w.starts_with(&format!("{l}: ")))
                    .unwrap();
                format!("{l} {name}{}", &w[l.len()..])
            })
            .collect()
    }

    #[test]
    fn warnings_are_those_compare_gives_for_the_same_trials() {
        // two variants: compare tests the dip at 0.05 / 2, and tip's dip
        // p is 0.030 (bench alone had warned of multimodality at 0.05)
        let tip = [
            100.0, 100.601, 100.202, 100.503, 100.104, 100.705, 100.006, 100.607, 100.208, 100.509,
        ];
        let name = "round_trips_per_sec";
        let with_patch = |tip: &[f64]| {
            let patch = [
                100.0, 100.1, 99.9, 100.05, 99.95, 100.0, 100.1, 99.9, 100.05, 99.95,
            ];
            let mut trials = series(name, tip);
            for mut t in series(name, &patch) {
                t.variant = "patch".into();
                trials.push(t);
            }
            trials
        };
        let p = crate::stats::warnings::dip_test(&tip).unwrap().p;
        assert!((0.025..0.05).contains(&p), "{p}");
        let trials = with_patch(&tip);
        let ours = warnings(&trials, |_, _| true);
        assert_eq!(ours, compare_warnings(&trials, name));
        assert!(!ours.iter().any(|x| x.contains("multimodal")), "{ours:?}");
        // and where compare warns, bench says the same
        let v = [
            58e3, 60e3, 61.5e3, 63e3, 65e3, 67e3, 69e3, 71e3, 73.5e3, 76e3,
        ];
        let climbing = with_patch(&v);
        let ours = warnings(&climbing, |_, _| true);
        assert!(ours.iter().any(|x| x.contains("drifts")), "{ours:?}");
        assert_eq!(ours, compare_warnings(&climbing, name));
    }

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
