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
        v.push(
            "metric",
            Some("1/s"),
            Some(dir),
            Obs {
                value,
                boot,
                run: None,
            },
        );
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
        metric_named: false,
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

/// What one simulated comparison gave: the verdict, the metric's warnings
/// and whether the Δmean and Δmedian intervals cover the true shift.
struct Sim {
    verdict: Verdict,
    warnings: Vec<String>,
    mean_covers: bool,
    median_covers: bool,
}

/// One simulated comparison through the whole model: n values per side,
/// `shift` relative change, `cv` noise; `kind` picks the law (`normal`,
/// `lognormal` σ 0.5, `exponential`, `mixture`: 50/50 with means 10 SD
/// apart, `drift`: normal with +3 SD across the run).
fn simulate(seed: u64, n: usize, shift: f64, cv: f64, kind: &str, resamples: usize) -> Sim {
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
            v.push("metric_ns", None, Some(Direction::Lower), Obs::plain(value));
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
        resamples,
        seed,
        directions: crate::compare::DirectionRules::default(),
    };
    let loaded = Loaded {
        variants: vec![a, b],
        warnings: vec![],
        metric_named: false,
    };
    let c = build(loaded, None, s).unwrap();
    let m = &c.metrics[0];
    let t = m.pairs[0].outcome.as_ref().unwrap();
    let covers = |ci: &Option<crate::stats::bootstrap::RelCi>| {
        ci.as_ref()
            .is_some_and(|ci| ci.lo <= shift * 100.0 && shift * 100.0 <= ci.hi)
    };
    Sim {
        verdict: t.verdict,
        warnings: m.warnings.clone(),
        mean_covers: covers(&t.mean),
        median_covers: covers(&t.median),
    }
}

/// Share of `runs` seeded simulations of `kind` (n per side, no shift,
/// CV 1 %) whose warnings contain `word`.
fn warning_rate(kind: &str, n: usize, runs: u64, word: &str) -> f64 {
    let hits = (0..runs)
        .filter(|r| {
            simulate(r * 104_729 + 17, n, 0.0, 0.01, kind, 200)
                .warnings
                .iter()
                .any(|w| w.contains(word))
        })
        .count();
    let rate = hits as f64 / runs as f64;
    eprintln!("{word} warning on {kind} n {n}: {rate:.3}");
    rate
}

/// The warnings' false-alarm table at a size fit for `cargo test` (200 seeded runs per
/// row; the 1000-run table is docs/compare-statistics.md): the warnings do
/// not cry wolf on clean data and still fire on dirty data.
#[test]
fn item8_warning_rates_on_clean_and_dirty_data() {
    let runs = 200;
    for (kind, n) in [("lognormal", 20), ("exponential", 20), ("normal", 10)] {
        let r = warning_rate(kind, n, runs, "multimodal");
        assert!(r <= 0.08, "multimodal on clean {kind} n {n}: {r}");
    }
    for n in [10, 20] {
        let r = warning_rate("normal", n, runs, "drifts");
        assert!(r <= 0.08, "drift on clean normal n {n}: {r}");
    }
    let r = warning_rate("mixture", 20, runs, "multimodal");
    assert!(r >= 0.95, "multimodal on a 10-SD mixture at n 20: {r}");
    let r = warning_rate("drift", 20, runs, "drifts");
    assert!(r >= 0.5, "drift on drifting data at n 20: {r}");
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
    println!("| data | n | shift | verdict rate [95 % CI] | Δmean 95 % coverage | Δmedian 95 % coverage | drift warning | multimodal warning |");
    println!("|---|---|---|---|---|---|---|---|");
    let cases: [(&str, f64, f64); 9] = [
        ("normal", 0.0, 0.01),
        ("lognormal", 0.0, 0.01),
        ("exponential", 0.0, 0.01),
        ("normal", 0.02, 0.01),
        ("normal", 0.05, 0.01),
        ("lognormal", 0.03, 0.01),
        ("exponential", 0.05, 0.01),
        ("mixture", 0.0, 0.01),
        ("drift", 0.0, 0.01),
    ];
    for (kind, shift, cv) in cases {
        for n in [10usize, 20] {
            let mut k = [0u64; 5];
            for r in 0..runs {
                let s = simulate(r * 7919 + n as u64, n, shift, cv, kind, 2000);
                k[0] += u64::from(s.verdict != Verdict::NoChange);
                k[1] += u64::from(s.mean_covers);
                k[2] += u64::from(s.median_covers);
                // Clean data: per comparison (either series); dirty data
                // (both series dirty): per dirty series, the baseline's.
                let dirty = matches!(kind, "mixture" | "drift");
                let hit = |word: &str| {
                    s.warnings
                        .iter()
                        .any(|w| w.contains(word) && (!dirty || w.starts_with("A:")))
                };
                k[3] += u64::from(hit("drifts"));
                k[4] += u64::from(hit("multimodal"));
            }
            let pct = |k: u64| format!("{:.1} %", k as f64 * 100.0 / runs as f64);
            let law = match kind {
                "normal" | "mixture" | "drift" => format!("{kind} (CV {:.0} %)", cv * 100.0),
                "lognormal" => "lognormal (σ 0.5)".to_string(),
                _ => kind.to_string(),
            };
            let (lo, hi) = wilson(k[0], runs);
            println!(
                "| {law} | {n} | {:+.0} % | {} [{lo:.1}, {hi:.1}] | {} | {} | {} | {} |",
                shift * 100.0,
                pct(k[0]),
                pct(k[1]),
                pct(k[2]),
                pct(k[3]),
                pct(k[4])
            );
        }
    }
}

/// A 95 % Wilson interval of `k` successes in `n`, in percent.
fn wilson(k: u64, n: u64) -> (f64, f64) {
    let (k, n) = (k as f64, n as f64);
    let z = 1.959_963_984_540_054_f64;
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    (100.0 * (c - h).max(0.0), 100.0 * (c + h).min(1.0))
}

/// One clustered comparison: `clusters` runs (or boots) a side of
/// `trials` trials each, a cluster offset with SD `between` × the trial SD
/// (CV 1 %), `shift` on the candidate. `interleaved`: both variants run in
/// the same clusters (one bench with `--variant a --variant b`), so they
/// share each cluster's offset; else each side has clusters of its own
/// (sequential runs, boots). `boots`: clusters are boots (boot ids), else
/// runs. Returns (verdict now, verdict the trial-level rule gave before).
fn clustered(
    seed: u64,
    (clusters, trials): (usize, usize),
    between: f64,
    shift: f64,
    interleaved: bool,
    boots: bool,
) -> (Verdict, Verdict) {
    let mut rng = Rng::new(seed);
    let cv = 0.01;
    let offsets: Vec<f64> = (0..clusters).map(|_| between * cv * rng.normal()).collect();
    let side = |label: &str, scale: f64, rng: &mut Rng| {
        let mut v = VariantData::new(label, true);
        for (c, &shared) in offsets.iter().enumerate() {
            let off = if interleaved {
                shared
            } else {
                between * cv * rng.normal()
            };
            let key = if interleaved {
                format!("c{c}")
            } else {
                format!("{label}{c}")
            };
            for _ in 0..trials {
                let value = scale * (1.0 + off + cv * rng.normal());
                let (boot, run) = if boots {
                    (Some(key.clone()), Some("r".to_string()))
                } else {
                    (Some("b".to_string()), Some(key.clone()))
                };
                v.push(
                    "metric_ns",
                    None,
                    Some(Direction::Lower),
                    Obs { value, boot, run },
                );
            }
        }
        v
    };
    let a = side("A", 100.0, &mut rng);
    let b = side("B", 100.0 * (1.0 + shift), &mut rng);
    let s = Settings {
        alpha: 0.05,
        noise_pct: 1.0,
        resamples: 1000,
        seed,
        directions: crate::compare::DirectionRules::default(),
    };
    let loaded = Loaded {
        variants: vec![a, b],
        warnings: vec![],
        metric_named: false,
    };
    let c = build(loaded, None, s.clone()).unwrap();
    let t = c.metrics[0].pairs[0].outcome.as_ref().unwrap();
    let before = match &t.median {
        Some(ci) => crate::stats::verdict::decide(
            t.mwu.p,
            ci.lo,
            ci.hi,
            s.alpha,
            s.noise_pct,
            Direction::Lower,
        ),
        None => Verdict::NoChange,
    };
    (t.verdict, before)
}

/// The clustered designs of docs/compare-statistics.md ("Runs and boots
/// as clusters"): false-verdict rate (A/A) and power, with the cluster
/// rule and with a trial-level rule for contrast, with 95 % Wilson intervals.
#[test]
#[ignore = "long simulation: run by tools/compare-simulate.sh"]
fn cluster_simulation_table() {
    let runs: u64 = std::env::var("IRQLAB_SIM_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    println!("| design | clusters × trials | between SD / trial SD | shift | verdicts now [95 % CI] | trial-level rule (before) [95 % CI] |");
    println!("|---|---|---|---|---|---|");
    type Case = (&'static str, (usize, usize), f64, f64, bool, bool);
    let cases: [Case; 10] = [
        (
            "sequential runs, one a side",
            (1, 5),
            1.0,
            0.0,
            false,
            false,
        ),
        (
            "sequential runs, one a side",
            (1, 10),
            4.0,
            0.0,
            false,
            false,
        ),
        ("boots", (3, 5), 4.0, 0.0, false, true),
        ("boots", (5, 5), 4.0, 0.0, false, true),
        ("boots", (5, 5), 4.0, 0.05, false, true),
        ("runs, three a side", (3, 5), 1.0, 0.0, false, false),
        ("interleaved, one run", (1, 10), 4.0, 0.0, true, false),
        ("interleaved, one run", (1, 10), 0.0, 0.02, true, false),
        ("interleaved, one run", (1, 10), 0.0, 0.05, true, false),
        ("interleaved, one run", (1, 20), 0.0, 0.02, true, false),
    ];
    for (design, shape, between, shift, interleaved, boots) in cases {
        let (mut now, mut before) = (0u64, 0u64);
        for r in 0..runs {
            let (v, b) = clustered(r * 7919 + 13, shape, between, shift, interleaved, boots);
            now += u64::from(v != Verdict::NoChange);
            before += u64::from(b != Verdict::NoChange);
        }
        let show = |k: u64| {
            let (lo, hi) = wilson(k, runs);
            format!("{:.1} % [{lo:.1}, {hi:.1}]", k as f64 * 100.0 / runs as f64)
        };
        println!(
            "| {design} | {} × {} | {between} | {:+.0} % | {} | {} |",
            shape.0,
            shape.1,
            shift * 100.0,
            show(now),
            show(before)
        );
    }
}

/// A/A rate of each warning per comparison on clean data of each shape
/// (uniform included) at n = 5, 10, 20, with 95 % Wilson intervals.
#[test]
#[ignore = "long simulation: run by tools/compare-simulate.sh"]
fn warning_rate_table() {
    let runs: u64 = std::env::var("IRQLAB_SIM_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    println!("| data | n | drift warning [95 % CI] | multimodal warning [95 % CI] |");
    println!("|---|---|---|---|");
    for kind in ["normal", "exponential", "uniform"] {
        for n in [5usize, 10, 20] {
            let (mut drift, mut multi) = (0u64, 0u64);
            for r in 0..runs {
                let mut rng = Rng::new(r * 104_729 + n as u64);
                let mut vars = Vec::new();
                for label in ["A", "B"] {
                    let mut v = VariantData::new(label, true);
                    for _ in 0..n {
                        let value = match kind {
                            "exponential" => -(1.0 - rng.unit()).ln(),
                            "uniform" => rng.unit(),
                            _ => 1.0 + 0.01 * rng.normal(),
                        };
                        v.push("metric_ns", None, Some(Direction::Lower), Obs::plain(value));
                    }
                    vars.push(v);
                }
                let s = Settings {
                    alpha: 0.05,
                    noise_pct: 1.0,
                    resamples: 200,
                    seed: r,
                    directions: crate::compare::DirectionRules::default(),
                };
                let loaded = Loaded {
                    variants: vars,
                    warnings: vec![],
                    metric_named: false,
                };
                let c = build(loaded, None, s).unwrap();
                let w = &c.metrics[0].warnings;
                drift += u64::from(w.iter().any(|w| w.contains("drifts")));
                multi += u64::from(w.iter().any(|w| w.contains("multimodal")));
            }
            let show = |k: u64| {
                let (lo, hi) = wilson(k, runs);
                format!("{:.1} % [{lo:.1}, {hi:.1}]", k as f64 * 100.0 / runs as f64)
            };
            println!("| {kind} | {n} | {} | {} |", show(drift), show(multi));
        }
    }
}

/// Three boots a side whose trials repeat the same values in every boot:
/// the boot means do not vary within a side.
fn same_every_boot(label: &str, values: &[f64]) -> VariantData {
    let mut v = VariantData::new(label, true);
    for boot in 0..3 {
        for &value in values {
            v.push(
                "metric",
                Some("1/s"),
                Some(Direction::Higher),
                Obs {
                    value,
                    boot: Some(format!("boot-{boot}")),
                    run: None,
                },
            );
        }
    }
    v
}

fn cluster_outcome(a: &[f64], b: &[f64]) -> (Verdict, Option<f64>) {
    let loaded = Loaded {
        variants: vec![same_every_boot("A", a), same_every_boot("B", b)],
        warnings: vec![],
        metric_named: false,
    };
    let s = Settings {
        alpha: 0.05,
        noise_pct: 1.0,
        resamples: 2000,
        seed: 7,
        directions: crate::compare::DirectionRules::default(),
    };
    let c = build(loaded, None, s).unwrap();
    match &c.metrics[0].pairs[0].outcome {
        Ok(t) => (t.verdict, t.clusters.p),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn boots_without_spread_decide_by_the_limit_of_welch() {
    let tip = [10_000.0, 10_003.0, 10_007.0];
    let patch = [10_300.0, 10_303.0, 10_307.0];
    // every boot of patch 3 % above every boot of tip: p 0, not 1
    assert_eq!(
        cluster_outcome(&tip, &patch),
        (Verdict::Improved, Some(0.0))
    );
    // the same values on both sides: p 1, no change
    assert_eq!(cluster_outcome(&tip, &tip), (Verdict::NoChange, Some(1.0)));
}
