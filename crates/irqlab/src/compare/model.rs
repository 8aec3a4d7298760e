//! The comparison model: from loaded variants to per-metric describe
//! columns, deltas, significance tests, verdicts and warnings. Output
//! formats read only this model; nothing here formats or does I/O.

use super::input::{Loaded, Series, VariantData};
use super::DirectionRules;
use crate::direction::Direction;
use crate::stats::bootstrap::{bootstrap, bootstrap_sides, RelCi, SideDraws};
use crate::stats::describe::{describe, median, sorted, Describe};
use crate::stats::hodges_lehmann::{hodges_lehmann, HodgesLehmann};
use crate::stats::mannwhitney::{mann_whitney, MannWhitney};
use crate::stats::verdict::{decide, decide_shift, Verdict};
use crate::stats::warnings as w;
use crate::stats::welch::{welch, Welch};
use anyhow::{bail, Result};

/// Confidence level of every interval.
pub const CONFIDENCE: f64 = 0.95;

/// Knobs of the comparison.
#[derive(Debug, Clone)]
pub struct Settings {
    pub alpha: f64,
    pub noise_pct: f64,
    pub resamples: usize,
    pub seed: u64,
    pub directions: DirectionRules,
}

/// Tests at the boot level (one value per boot: the median of its trials).
#[derive(Debug, Clone)]
pub enum BootLevel {
    /// Neither side has trials from two or more boots.
    NotApplicable,
    /// Some boots, but fewer than two on a side.
    TooFew { base: usize, variant: usize },
    Tested {
        base: usize,
        variant: usize,
        median_change_pct: Option<f64>,
        mwu: MannWhitney,
        welch: Option<Welch>,
    },
}

/// All tests of one variant against the baseline for one metric.
#[derive(Debug, Clone)]
pub struct Tests {
    pub median: Option<RelCi>,
    pub mean: Option<RelCi>,
    /// `None` only when a side is empty.
    pub hl: Option<HodgesLehmann>,
    pub mwu: MannWhitney,
    pub welch: Option<Welch>,
    pub verdict: Verdict,
    pub boot_level: BootLevel,
    /// Smallest two-sided p the exact test can give at these sizes, when
    /// it is not below alpha (then no verdict is possible).
    pub p_floor: Option<f64>,
}

/// A variant against the baseline: tested, or refused with a reason.
#[derive(Debug, Clone)]
pub struct Pair {
    pub variant: String,
    pub outcome: Result<Box<Tests>, String>,
}

/// Everything about one metric.
#[derive(Debug, Clone)]
pub struct MetricReport {
    pub name: String,
    pub unit: Option<String>,
    pub direction: Direction,
    /// Per label (same order as `Comparison::labels`); `None` if absent.
    pub columns: Vec<Option<Describe>>,
    /// Per label, values in trial order (empty if absent).
    pub values: Vec<Vec<f64>>,
    /// Labels that have the metric, when not all do.
    pub only_in: Option<Vec<String>>,
    pub pairs: Vec<Pair>,
    pub warnings: Vec<String>,
}

impl MetricReport {
    /// Percent-unit metrics also get the change in points.
    pub fn is_pct(&self) -> bool {
        self.unit.as_deref() == Some("%")
    }

    /// Relative change (percent) of each describe row of `label` vs baseline.
    pub fn delta_rows(&self, base: usize, idx: usize) -> Option<[Option<f64>; 8]> {
        let (b, v) = (self.columns[base].as_ref()?, self.columns[idx].as_ref()?);
        let (br, vr) = (b.rows(), v.rows());
        Some(std::array::from_fn(|i| match (br[i], vr[i]) {
            (Some(b), Some(v)) if b != 0.0 => Some((v - b) / b.abs() * 100.0),
            _ => None,
        }))
    }

    /// Absolute change (points) of each describe row, for `%` metrics.
    pub fn point_rows(&self, base: usize, idx: usize) -> Option<[Option<f64>; 8]> {
        let (b, v) = (self.columns[base].as_ref()?, self.columns[idx].as_ref()?);
        let (br, vr) = (b.rows(), v.rows());
        Some(std::array::from_fn(|i| match (i, br[i], vr[i]) {
            (0, _, _) => None,
            (_, Some(b), Some(v)) => Some(v - b),
            _ => None,
        }))
    }
}

/// The whole comparison.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub labels: Vec<String>,
    pub baseline: usize,
    pub settings: Settings,
    pub metrics: Vec<MetricReport>,
    /// Input and per-variant warnings (truncated trials, single boot, ...).
    pub notes: Vec<String>,
}

impl Comparison {
    pub fn baseline_label(&self) -> &str {
        &self.labels[self.baseline]
    }
}

/// Build the comparison from loaded data.
pub fn build(loaded: Loaded, baseline: Option<&str>, settings: Settings) -> Result<Comparison> {
    let Loaded { variants, warnings } = loaded;
    if variants.len() < 2 {
        let names: Vec<&str> = variants.iter().map(|v| v.label.as_str()).collect();
        bail!(
            "need at least two variants to compare, found {} ({}); name each input \
             with LABEL=PATH",
            variants.len(),
            names.join(", ")
        );
    }
    let labels: Vec<String> = variants.iter().map(|v| v.label.clone()).collect();
    let baseline = match baseline {
        None => 0,
        Some(b) => match labels.iter().position(|l| l == b) {
            Some(i) => i,
            None => bail!(
                "--baseline {b}: no such variant (have: {})",
                labels.join(", ")
            ),
        },
    };
    let mut notes = warnings;
    notes.extend(variants.iter().filter_map(boot_note));
    let names = metric_names(&variants, baseline);
    let metrics = metrics_parallel(&names, |name| metric(&variants, baseline, name, &settings));
    if metrics.iter().all(|m| m.pairs.is_empty()) {
        let have: Vec<String> = variants
            .iter()
            .map(|v| {
                let names: Vec<&str> = v.series.iter().map(|s| s.metric.as_str()).collect();
                format!("{} has {}", v.label, names.join(", "))
            })
            .collect();
        bail!(
            "nothing to compare: no metric is in both the baseline {} and another variant ({})",
            labels[baseline],
            have.join("; ")
        );
    }
    Ok(Comparison {
        labels,
        baseline,
        settings,
        metrics,
        notes,
    })
}

fn metric_names(variants: &[VariantData], baseline: usize) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let order = std::iter::once(baseline).chain((0..variants.len()).filter(|&i| i != baseline));
    for i in order {
        for s in &variants[i].series {
            if !names.contains(&s.metric) {
                names.push(s.metric.clone());
            }
        }
    }
    names
}

fn boot_note(v: &VariantData) -> Option<String> {
    let boots: std::collections::BTreeSet<&str> = v
        .series
        .iter()
        .flat_map(|s| s.obs.iter().filter_map(|o| o.boot.as_deref()))
        .collect();
    match boots.len() {
        0 => Some(format!(
            "{}: no boot ids; boot-to-boot variation is unseen",
            v.label
        )),
        1 => Some(format!(
            "{}: all trials come from a single boot; boot-to-boot variation is unseen",
            v.label
        )),
        _ => None,
    }
}

/// `f` of every metric name, in order, on all CPUs: metrics are
/// independent (each stream has its own seed), so the result is the same
/// whatever the CPU count. Interleaved so that costly metrics spread out.
fn metrics_parallel<F>(names: &[String], f: F) -> Vec<MetricReport>
where
    F: Fn(&str) -> MetricReport + Sync,
{
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(names.len());
    if threads < 2 {
        return names.iter().map(|n| f(n)).collect();
    }
    let f = &f;
    let mut parts: Vec<(usize, MetricReport)> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                sc.spawn(move || {
                    (t..names.len())
                        .step_by(threads)
                        .map(|i| (i, f(&names[i])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(v) => v,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    parts.sort_by_key(|(i, _)| *i);
    parts.into_iter().map(|(_, m)| m).collect()
}

/// The bootstrap seed of one (metric, baseline, candidate) stream: from the
/// seed and the names only, so argument order never changes a result.
pub fn stream_seed(seed: u64, metric: &str, base: &str, cand: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for part in [metric, base, cand] {
        for b in part.bytes().chain(std::iter::once(0xff)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn metric(variants: &[VariantData], base: usize, name: &str, s: &Settings) -> MetricReport {
    let series: Vec<Option<&Series>> = variants
        .iter()
        .map(|v| v.series.iter().find(|x| x.metric == name))
        .collect();
    let values: Vec<Vec<f64>> = series
        .iter()
        .map(|x| x.map_or(Vec::new(), |x| x.values()))
        .collect();
    let first = series[base].or_else(|| series.iter().flatten().next().copied());
    let unit = first.and_then(|x| x.unit.clone());
    let stated = series.iter().flatten().find_map(|x| x.direction);
    let direction = s.directions.resolve(name, unit.as_deref(), stated);
    let present: Vec<String> = variants
        .iter()
        .zip(&series)
        .filter(|(_, x)| x.is_some())
        .map(|(v, _)| v.label.clone())
        .collect();
    let only_in = (present.len() < variants.len()).then_some(present);
    let mut pairs = Vec::new();
    if let Some(b) = series[base] {
        let draws: Vec<Option<SideDraws>> = variants
            .iter()
            .zip(&values)
            .map(|(v, x)| side_draws(x, s.resamples, side_stream_seed(s.seed, name, &v.label)))
            .collect();
        for (i, x) in series.iter().enumerate() {
            if let (true, Some(x)) = (i != base, x) {
                let seed = stream_seed(s.seed, name, &variants[base].label, &variants[i].label);
                let sides = draws[base].as_ref().zip(draws[i].as_ref());
                pairs.push(Pair {
                    variant: variants[i].label.clone(),
                    outcome: compare_pair(
                        (b, x),
                        (&variants[base].label, &variants[i].label),
                        s,
                        direction,
                        (seed, sides),
                    ),
                });
            }
        }
    }
    let with_values = values.iter().filter(|v| !v.is_empty()).count().max(1);
    let warnings = variants
        .iter()
        .zip(&values)
        .filter(|(_, v)| !v.is_empty())
        .flat_map(|(var, v)| series_warnings(&var.label, v, with_values))
        .collect();
    MetricReport {
        name: name.to_string(),
        unit,
        direction,
        columns: values.iter().map(|v| describe(v)).collect(),
        values,
        only_in,
        pairs,
        warnings,
    }
}

/// The bootstrap replicates of one variant's values for a metric, drawn
/// once and paired with every other side (bench-sized: 2 to
/// 64 values; others take the general path per pair).
fn side_draws(values: &[f64], resamples: usize, seed: u64) -> Option<SideDraws> {
    (values.len() >= 2)
        .then(|| SideDraws::new(sorted(values), resamples, seed))
        .flatten()
}

/// The seed of one (metric, variant) side's bootstrap stream: from the
/// seed and the names only, like [`stream_seed`].
pub fn side_stream_seed(seed: u64, metric: &str, variant: &str) -> u64 {
    stream_seed(seed, metric, variant, "\u{1}side")
}

type Sides<'a> = Option<(&'a SideDraws, &'a SideDraws)>;

fn compare_pair(
    (b, v): (&Series, &Series),
    (bl, vl): (&str, &str),
    s: &Settings,
    dir: Direction,
    (seed, sides): (u64, Sides),
) -> Result<Box<Tests>, String> {
    let (x, y) = (b.values(), v.values());
    if x.len() < 2 || y.len() < 2 {
        return Err(format!(
            "refused: fewer than 2 values on a side ({bl} {}, {vl} {}); no change can be claimed",
            x.len(),
            y.len()
        ));
    }
    let hl = hodges_lehmann(&x, &y, CONFIDENCE);
    let Some(mwu) = mann_whitney(&x, &y) else {
        return Err("refused: empty side".to_string());
    };
    let boot = match sides {
        Some((dx, dy)) => bootstrap_sides(dx, dy, CONFIDENCE),
        None => bootstrap(&x, &y, s.resamples, seed, CONFIDENCE),
    };
    let verdict = match (boot.median.as_ref().or(boot.mean.as_ref()), &hl) {
        (Some(ci), _) => decide(mwu.p, ci.lo, ci.hi, s.alpha, s.noise_pct, dir),
        // Relative change undefined (baseline centre 0): the sign of the shift.
        (None, Some(h)) => decide_shift(mwu.p, h.lo, h.hi, s.alpha, dir),
        (None, None) => Verdict::NoChange,
    };
    let p_floor = (mwu.method == crate::stats::mannwhitney::Method::Exact)
        .then(|| crate::stats::mannwhitney::min_p(x.len(), y.len()))
        .filter(|&f| f >= s.alpha);
    Ok(Box::new(Tests {
        median: boot.median,
        mean: boot.mean,
        hl,
        mwu,
        welch: welch(&x, &y),
        verdict,
        boot_level: boot_level(b, v),
        p_floor,
    }))
}

/// One value per boot (median of that boot's trials), in first-seen order.
fn per_boot(s: &Series) -> Vec<f64> {
    let mut boots: Vec<(&str, Vec<f64>)> = Vec::new();
    for o in &s.obs {
        let Some(id) = o.boot.as_deref() else {
            continue;
        };
        match boots.iter_mut().find(|(b, _)| *b == id) {
            Some((_, v)) => v.push(o.value),
            None => boots.push((id, vec![o.value])),
        }
    }
    boots.iter().map(|(_, v)| median(v)).collect()
}

fn boot_level(b: &Series, v: &Series) -> BootLevel {
    let (x, y) = (per_boot(b), per_boot(v));
    if x.len() < 2 && y.len() < 2 {
        return BootLevel::NotApplicable;
    }
    let Some(mwu) = (x.len() >= 2 && y.len() >= 2)
        .then(|| mann_whitney(&x, &y))
        .flatten()
    else {
        return BootLevel::TooFew {
            base: x.len(),
            variant: y.len(),
        };
    };
    let (mb, mv) = (median(&x), median(&y));
    BootLevel::Tested {
        base: x.len(),
        variant: y.len(),
        median_change_pct: (mb != 0.0).then(|| (mv - mb) / mb.abs() * 100.0),
        mwu,
        welch: welch(&x, &y),
    }
}

/// Warnings about one variant's values. `k` series are checked for the
/// same metric, so the drift test runs at 0.05 / k (Bonferroni): at most
/// 5 % false alarms per comparison, not per series.
fn series_warnings(label: &str, v: &[f64], k: usize) -> Vec<String> {
    let n = v.len();
    let mut out = Vec::new();
    let level = 0.05 / k as f64;
    if let Some((rho, p)) =
        w::trend_test(v, level).filter(|&(_, p)| p < level && n >= w::MIN_FOR_CI)
    {
        out.push(format!(
            "{label}: drifts with trial order (Spearman rho {rho:+.2}, p {})",
            super::format::p(p)
        ));
    }
    if let Some(d) = w::dip_test(v).filter(|d| d.p < w::BIMODAL_P) {
        out.push(format!(
            "{label}: may be multimodal (Hartigan's dip {:.3}, p {})",
            d.dip,
            super::format::p(d.p)
        ));
    }
    if let Some(cv) = w::cv_pct(v).filter(|&cv| cv > w::HIGH_CV_PCT) {
        out.push(format!("{label}: high variation (CV {cv:.1} % > 5 %)"));
    }
    out
}
