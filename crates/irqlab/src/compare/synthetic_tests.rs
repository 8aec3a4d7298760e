//! Synthetic end-to-end checks of the verdict: a real 2 % change with 0.5 %
//! noise and 20 trials per side is found; with no true change, 200 seeded
//! repetitions say `~` at least 95 % of the time (2000 bootstrap resamples
//! there, to stay fast).
#![allow(clippy::unwrap_used)]

use super::input::{Loaded, Obs, VariantData};
use super::model::{build, Settings};
use crate::direction::Direction;
use crate::stats::verdict::Verdict;
use irqlab_core::rng::Rng;

fn variant(label: &str, rng: &mut Rng, mean: f64, noise: f64, dir: Direction) -> VariantData {
    let mut v = VariantData::new(label, true);
    for t in 0..20 {
        let value = mean * (1.0 + noise * rng.normal());
        let boot = Some(format!("boot-{}", t % 2));
        v.push("metric", Some("1/s"), Some(dir), Obs { value, boot });
    }
    v
}

fn verdict(seed: u64, change: f64, dir: Direction, resamples: usize) -> Verdict {
    let mut rng = Rng::new(seed);
    let a = variant("A", &mut rng, 100.0, 0.005, dir);
    let b = variant("B", &mut rng, 100.0 * (1.0 + change), 0.005, dir);
    let loaded = Loaded {
        variants: vec![a, b],
        warnings: vec![],
    };
    let s = Settings {
        alpha: 0.05,
        noise_pct: 1.0,
        resamples,
        seed,
        directions: crate::compare::DirectionRules::default(),
    };
    let c = build(loaded, None, s).unwrap();
    match &c.metrics[0].pairs[0].outcome {
        Ok(t) => t.verdict,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn two_percent_faster_is_improved() {
    // B has 2 % more throughput (higher is better) or 2 % less time (lower).
    assert_eq!(
        verdict(1, 0.02, Direction::Higher, 10_000),
        Verdict::Improved
    );
    assert_eq!(
        verdict(2, -0.02, Direction::Lower, 10_000),
        Verdict::Improved
    );
    assert_eq!(
        verdict(3, -0.02, Direction::Higher, 10_000),
        Verdict::Regressed
    );
}

#[test]
fn no_change_is_mostly_tilde() {
    let tilde = (0..200)
        .filter(|&seed| verdict(1000 + seed, 0.0, Direction::Higher, 2000) == Verdict::NoChange)
        .count();
    assert!(tilde >= 190, "only {tilde} of 200 null runs said ~");
}

/// One simulated comparison through the whole model: n values per side,
/// `shift` relative change, `cv` noise; `kind` picks the law.
fn simulate(seed: u64, n: usize, shift: f64, cv: f64, kind: &str) -> (Verdict, Vec<String>, bool) {
    let mut rng = Rng::new(seed);
    let mut side = |label: &str, scale: f64| {
        let mut v = VariantData::new(label, true);
        for _ in 0..n {
            let z = rng.normal();
            let value = scale
                * match kind {
                    "lognormal" => (0.5 * z).exp(),
                    "exponential" => -(1.0 - rng.unit()).ln(),
                    "mixture" => 1.0 + cv * z + if rng.unit() < 0.5 { 10.0 * cv } else { 0.0 },
                    "drift" => 1.0 + cv * z,
                    _ => 1.0 + cv * z,
                };
            v.push(
                "metric_ns",
                None,
                Some(Direction::Lower),
                Obs { value, boot: None },
            );
        }
        if kind == "drift" {
            for (i, o) in v.series[0].obs.iter_mut().enumerate() {
                o.value *= 1.0 + 3.0 * cv * i as f64 / n as f64;
            }
        }
        v
    };
    let a = side("A", 100.0);
    let b = side("B", 100.0 * (1.0 + shift));
    let s = Settings {
        alpha: 0.05,
        noise_pct: 1.0,
        resamples: 2000,
        seed,
        directions: crate::compare::DirectionRules::default(),
    };
    let loaded = Loaded {
        variants: vec![a, b],
        warnings: vec![],
    };
    let c = build(loaded, None, s).unwrap();
    let m = &c.metrics[0];
    let t = m.pairs[0].outcome.as_ref().unwrap();
    let covers = t
        .mean
        .as_ref()
        .is_some_and(|ci| ci.lo <= shift * 100.0 && shift * 100.0 <= ci.hi);
    (t.verdict, m.warnings.clone(), covers)
}

/// The simulation tables of docs/compare-statistics.md
/// (`tools/compare-simulate.sh` runs this in release mode).
#[test]
#[ignore = "long simulation: run by tools/compare-simulate.sh"]
fn simulation_table() {
    let runs: u64 = std::env::var("IRQLAB_SIM_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    println!("| data | n | shift | verdict rate | Δmean 95 % coverage | drift warning | multimodal warning |");
    println!("|---|---|---|---|---|---|---|");
    let cases: [(&str, f64, f64); 8] = [
        ("normal", 0.0, 0.01),
        ("lognormal", 0.0, 0.01),
        ("exponential", 0.0, 0.01),
        ("normal", 0.02, 0.01),
        ("normal", 0.05, 0.01),
        ("lognormal", 0.03, 0.01),
        ("mixture", 0.0, 0.01),
        ("drift", 0.0, 0.01),
    ];
    for (kind, shift, cv) in cases {
        for n in [10usize, 20] {
            let (mut changed, mut covered, mut drift, mut modal) = (0u64, 0u64, 0u64, 0u64);
            for r in 0..runs {
                let (v, w, cov) = simulate(r * 7919 + n as u64, n, shift, cv, kind);
                changed += u64::from(v != Verdict::NoChange);
                covered += u64::from(cov);
                drift += u64::from(w.iter().any(|w| w.contains("drifts")));
                modal += u64::from(w.iter().any(|w| w.contains("multimodal")));
            }
            let pct = |k: u64| format!("{:.1} %", k as f64 * 100.0 / runs as f64);
            println!(
                "| {kind} (CV {:.0} %) | {n} | {:+.0} % | {} | {} | {} | {} |",
                cv * 100.0,
                shift * 100.0,
                pct(changed),
                pct(covered),
                pct(drift),
                pct(modal)
            );
        }
    }
}
