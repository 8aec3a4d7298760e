//! Synthetic end-to-end checks of the verdict: a real 2 % change with 0.5 %
//! noise and 20 trials per side is found; with no true change, 200 seeded
//! repetitions say `~` at least 95 % of the time (2000 bootstrap resamples
//! there, to stay fast).
#![allow(clippy::unwrap_used)]

use super::input::{Loaded, Obs, VariantData};
use super::model::{build, Settings};
use crate::direction::Direction;
use crate::stats::bootstrap::Rng;
use crate::stats::verdict::Verdict;

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
