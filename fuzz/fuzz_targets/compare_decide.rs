//! `irqlab compare`'s decision path after loading: result sets built from
//! the fuzz input (2 to 4 variants, 1 to 3 metrics, 0 to 23 values each:
//! 0, -0, ±1, huge, tiny, subnormal, repeated and raw finite values, the
//! values a loader accepts; optional boot and run ids) go through
//! `compare::compare_loaded` (the checks, the statistics, the verdicts)
//! and every report format (`write_report`: table, text with and without
//! `--all`, markdown, JSON, CSV; the SVG plot). Must never panic; and:
//! every interval shown is ordered and finite, p-values lie in [0, 1], a
//! verdict agrees with the interval it is taken on, identical result sets
//! give no verdict, every output names every metric and none prints NaN
//! or inf.
//!
//! Input: byte 0 (bits 0-1: variants - 2; bit 2: every variant holds the
//! baseline's values; bit 3: boot ids; bit 4: run ids; bit 5: a bare
//! `--direction higher`; bit 6: `--noise 0`; bit 7: `--alpha 0.2`), byte 1
//! (bits 0-1: metrics - 1; bits 2-7: the seed), byte 2 (per metric two
//! bits: stated direction none, higher, lower or not stated), byte 3
//! (per metric two bits: unit none, `ns`, `%`, `1/s`), then per variant
//! and metric a count byte and per value a selector byte (and 8 bytes for
//! a raw value), then an id byte when boot or run ids are on.
#![no_main]
use irqlab::compare::model::{Comparison, Tests};
use irqlab::compare::{
    compare_loaded, render_svg, settings, write_report, CompareConfig, CompareFormat,
    DirectionRules, Loaded, Obs, VariantData, MIN_RESAMPLES,
};
use irqlab::direction::Direction;
use irqlab::stats::verdict::Verdict;
use libfuzzer_sys::fuzz_target;

const LABELS: [&str; 4] = ["base", "vone", "vtwo", "vthree"];
const METRICS: [&str; 3] = ["lat_ns", "irqs_per_sec", "busy_pct"];

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn raw(&mut self) -> f64 {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = self.byte();
        }
        f64::from_le_bytes(b)
    }
}

/// A value the loaders accept (finite), from a selector byte.
fn value(sel: u8, prev: f64, input: &mut Bytes) -> Option<f64> {
    const SPECIAL: [f64; 14] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        5e-324,
        1e-300,
        1e300,
        -1e300,
        1e15,
        9_007_199_254_740_993.0,
        0.1,
    ];
    match sel {
        0..=13 => Some(SPECIAL[usize::from(sel)]),
        14..=47 => Some(prev),
        255 => Some(input.raw()).filter(|v| v.is_finite()),
        _ => Some(f64::from(sel) - 140.0),
    }
}

struct Case {
    loaded: Loaded,
    config: CompareConfig,
    /// Metrics with values somewhere.
    metrics: Vec<&'static str>,
    /// Every variant holds the baseline's values.
    identical: bool,
}

fn case(data: &[u8]) -> Option<Case> {
    let mut input = Bytes(data);
    let (flags, m, dirs, units) = (input.byte(), input.byte(), input.byte(), input.byte());
    let nvar = 2 + usize::from(flags & 3).min(2);
    let nmet = 1 + usize::from(m & 3).min(2);
    let identical = flags & 4 != 0;
    let (boots, runs) = (flags & 8 != 0, flags & 16 != 0);
    let mut variants: Vec<VariantData> = LABELS[..nvar]
        .iter()
        .map(|l| VariantData::new(l, false))
        .collect();
    for vi in 0..nvar {
        if identical && vi > 0 {
            let base = variants[0].series.clone();
            variants[vi].series = base;
            continue;
        }
        for (mi, name) in METRICS[..nmet].iter().enumerate() {
            let dir = match (dirs >> (2 * mi)) & 3 {
                0 => Some(Direction::None),
                1 => Some(Direction::Higher),
                2 => Some(Direction::Lower),
                _ => None,
            };
            let unit =
                [None, Some("ns"), Some("%"), Some("1/s")][usize::from((units >> (2 * mi)) & 3)];
            let n = input.byte() % 24;
            let mut prev = 1.0;
            for _ in 0..n {
                let sel = input.byte();
                let Some(v) = value(sel, prev, &mut input) else {
                    continue;
                };
                prev = v;
                let mut obs = Obs::plain(v);
                if boots || runs {
                    let id = input.byte() % 3;
                    obs.boot = boots.then(|| format!("boot{id}"));
                    obs.run = runs.then(|| format!("run{}", id + 3 * vi as u8));
                }
                variants[vi].push(name, unit, dir, obs);
            }
        }
    }
    // The loader drops a variant without values, and refuses an input
    // without any.
    if variants.iter().any(|v| v.series.is_empty()) {
        return None;
    }
    let metrics: Vec<&'static str> = METRICS[..nmet]
        .iter()
        .copied()
        .filter(|n| {
            variants
                .iter()
                .any(|v| v.series.iter().any(|s| s.metric == *n))
        })
        .collect();
    let config = CompareConfig {
        inputs: Vec::new(),
        baseline: None,
        alpha: if flags & 0x80 != 0 { 0.2 } else { 0.05 },
        noise_pct: if flags & 0x40 != 0 { 0.0 } else { 1.0 },
        resamples: MIN_RESAMPLES,
        seed: u64::from(m >> 2),
        format: CompareFormat::Table,
        plot: None,
        html: None,
        metric: None,
        directions: DirectionRules {
            default: (flags & 0x20 != 0).then_some(Direction::Higher),
            per_metric: Vec::new(),
        },
        all: false,
        mixed_workloads: false,
        allow_copies: false,
    };
    let loaded = Loaded {
        variants,
        warnings: Vec::new(),
        metric_named: false,
    };
    Some(Case {
        loaded,
        config,
        metrics,
        identical,
    })
}

/// Which way an interval [lo, hi] lies beyond ±noise.
fn side(lo: f64, hi: f64, noise: f64) -> (bool, bool) {
    (lo > noise, hi < -noise)
}

fn check_tests(c: &Comparison, dir: Direction, t: &Tests, identical: bool, what: &str) {
    let s = &c.settings;
    for p in [t.mwu.p, t.p_raw, t.p_family] {
        assert!((0.0..=1.0).contains(&p), "{what}: p {p} outside [0, 1]");
    }
    for ci in [&t.median, &t.mean].into_iter().flatten() {
        assert!(
            ci.lo <= ci.estimate && ci.estimate <= ci.hi,
            "{what}: interval not ordered: {ci:?}"
        );
        assert!(
            [ci.lo, ci.estimate, ci.hi].iter().all(|v| v.is_finite()),
            "{what}: interval not finite: {ci:?}"
        );
    }
    if let Some(h) = &t.hl {
        assert!(
            !h.lo.is_nan() && !h.hi.is_nan() && !h.shift.is_nan(),
            "{what}: NaN in the Hodges-Lehmann shift: {h:?}"
        );
        assert!(
            h.lo <= h.shift && h.shift <= h.hi,
            "{what}: Hodges-Lehmann interval not ordered: {h:?}"
        );
    }
    if let Some(d) = t.mde_pct {
        assert!(d.is_finite() && d >= 0.0, "{what}: detectable change {d}");
    }
    if t.verdict != Verdict::NoChange {
        assert!(t.p_family < s.alpha, "{what}: verdict at p {}", t.p_family);
        let (up, down) = match (&t.median, &t.hl) {
            (Some(ci), _) => side(ci.lo, ci.hi, s.noise_pct),
            (None, Some(h)) => side(h.lo, h.hi, 0.0),
            (None, None) => (false, false),
        };
        let agrees = match (t.verdict, dir) {
            (Verdict::Changed, Direction::None) => up || down,
            (Verdict::Improved, Direction::Higher) | (Verdict::Regressed, Direction::Lower) => up,
            (Verdict::Improved, Direction::Lower) | (Verdict::Regressed, Direction::Higher) => down,
            _ => false,
        };
        assert!(
            agrees,
            "{what}: verdict {:?} ({dir:?}) against its interval: {:?} / {:?}",
            t.verdict, t.median, t.hl
        );
    }
    if identical {
        assert_eq!(t.verdict, Verdict::NoChange, "{what}: identical sets");
        assert_eq!(
            t.verdict_uncorrected,
            Verdict::NoChange,
            "{what}: identical"
        );
        assert_eq!(t.clusters.within_pair, None, "{what}: identical sets");
    }
}

/// A word NaN or inf (any case) in `text`.
fn non_finite_word(text: &str) -> Option<&str> {
    text.split(|ch: char| !ch.is_ascii_alphanumeric())
        .find(|w| ["nan", "inf", "infinity"].contains(&w.to_ascii_lowercase().as_str()))
}

fn check_outputs(c: &Comparison, metrics: &[&str]) {
    let formats = [
        (CompareFormat::Table, false),
        (CompareFormat::Text, false),
        (CompareFormat::Text, true),
        (CompareFormat::Markdown, false),
        (CompareFormat::Json { pretty: false }, false),
        (CompareFormat::Json { pretty: true }, false),
        (CompareFormat::Csv, false),
    ];
    for (format, all) in formats {
        let mut out = Vec::new();
        assert!(write_report(c, format, all, &mut out).is_ok());
        let text = String::from_utf8_lossy(&out);
        if let Some(w) = non_finite_word(&text) {
            panic!("{format:?} (all {all}) prints {w:?}:\n{text}");
        }
        for m in metrics {
            assert!(
                text.contains(m),
                "{format:?} (all {all}) leaves out metric {m}:\n{text}"
            );
        }
    }
    let svg = render_svg(c);
    if let Some(w) = non_finite_word(&svg) {
        panic!("the SVG plot prints {w:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(case) = case(data) else {
        return;
    };
    let Ok(s) = settings(&case.config) else {
        return;
    };
    let Ok(c) = compare_loaded(&case.config, s, case.loaded) else {
        return;
    };
    let names: Vec<&str> = c.metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names.len(), case.metrics.len(), "metrics {names:?}");
    for m in &case.metrics {
        assert!(names.contains(m), "metric {m} left out of {names:?}");
    }
    for m in &c.metrics {
        for pair in &m.pairs {
            if let Ok(t) = &pair.outcome {
                let what = format!("{} ({})", m.name, pair.variant);
                check_tests(&c, m.direction, t, case.identical, &what);
            }
        }
    }
    check_outputs(&c, &case.metrics);
});
