//! The comparison model: from loaded variants to per-metric describe
//! columns, deltas, significance tests, verdicts and warnings. Output
//! formats read only this model; nothing here formats or does I/O.

use super::input::{Loaded, Series, VariantData};
use super::{usage, DirectionRules};
use crate::direction::Direction;
use crate::stats::bootstrap::{bootstrap, bootstrap_sides, RelCi, SideDraws};
use crate::stats::describe::{describe, median, rel_pct, sorted, Describe};
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

/// The level whose variation a verdict must see: the highest level that
/// varies in the pair (boot when boot ids differ, else run, else trial).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Trial,
    Run,
    Boot,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Trial => "trial",
            Level::Run => "run",
            Level::Boot => "boot",
        }
    }
}

/// How the pair's clusters (runs or boots) entered the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Clusters {
    /// The unit of replication.
    pub level: Level,
    /// Clusters per side (baseline, variant); trials at [`Level::Trial`].
    pub counts: (usize, usize),
    /// Welch's p on the cluster means (two or more clusters a side): it
    /// gates the verdict with the trial-level test.
    pub p: Option<f64>,
    /// One cluster on a side and the sides not interleaved: the verdict is
    /// withheld; this is what the trials alone say ("within this run pair").
    pub within_pair: Option<Verdict>,
}

/// All tests of one variant against the baseline for one metric.
#[derive(Debug, Clone)]
pub struct Tests {
    pub median: Option<RelCi>,
    pub mean: Option<RelCi>,
    /// Why Δmedian is undefined, when it is.
    pub median_note: Option<String>,
    /// Why Δmean is undefined, when it is.
    pub mean_note: Option<String>,
    /// `None` only when a side is empty.
    pub hl: Option<HodgesLehmann>,
    pub mwu: MannWhitney,
    pub welch: Option<Welch>,
    pub verdict: Verdict,
    pub boot_level: BootLevel,
    /// Smallest two-sided p the exact test can give at these sizes, when
    /// it is not below alpha (then no verdict is possible).
    pub p_floor: Option<f64>,
    /// The runs or boots behind the verdict.
    pub clusters: Clusters,
    /// The p the verdict is taken on before the family correction: the
    /// larger of the trial-level and the cluster-level p.
    pub p_raw: f64,
    /// `p_raw` adjusted over the family of the variant's metrics
    /// (Benjamini–Hochberg, near-duplicates counted once).
    pub p_family: f64,
    /// The verdict at `p_raw`, before the family correction: a change
    /// here and none in `verdict` is a change the correction took away.
    pub verdict_uncorrected: Verdict,
    /// Metrics of the family that move with this one (near-duplicates:
    /// |Spearman ρ| ≥ 0.95 over the pooled values), counted once.
    pub duplicates: Vec<String>,
    /// Smallest relative change (percent) this design detects with 80 %
    /// power at alpha (normal approximation from the observed spread,
    /// at the unit of replication, plus the noise threshold); `None` when
    /// no verdict is possible at all.
    pub mde_pct: Option<f64>,
}

impl Tests {
    /// A change before the family correction and none after it.
    pub fn corrected_away(&self) -> bool {
        self.verdict == Verdict::NoChange && self.verdict_uncorrected != Verdict::NoChange
    }

    /// The change cannot be stated: Δmedian is undefined and the
    /// Hodges–Lehmann shift or a limit of its interval is beyond the float
    /// range (values near ±1.8e308 of opposite signs); no verdict is given.
    pub fn unrepresentable(&self) -> bool {
        self.median.is_none()
            && self
                .hl
                .as_ref()
                .is_some_and(|h| ![h.shift, h.lo, h.hi].iter().all(|v| v.is_finite()))
    }

    /// No p below alpha is reachable: the exact test's floor, or one run
    /// (or boot) on a side when those are the unit of replication.
    pub fn no_verdict_possible(&self) -> bool {
        let c = &self.clusters;
        self.p_floor.is_some() || (c.level != Level::Trial && c.counts.0.min(c.counts.1) < 2)
    }
}

/// A variant against the baseline: tested, or refused with a reason.
#[derive(Debug, Clone)]
pub struct Pair {
    pub variant: String,
    pub outcome: Result<Box<Tests>, String>,
    /// The metric has no values on one side (the reason says which):
    /// listed as missing, never as unchanged.
    pub missing: bool,
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
    /// Every label, in `Comparison::labels` order.
    pub labels: Vec<String>,
    /// Index of the baseline in `labels`.
    pub base: usize,
    /// An input marks it as its workload's headline metric.
    pub headline: bool,
    pub pairs: Vec<Pair>,
    pub warnings: Vec<String>,
}

impl MetricReport {
    /// Index (in `values`) of the baseline.
    fn base_index(&self) -> usize {
        self.base
    }

    /// Index (in `values`) of the variant `label`.
    fn pair_index(&self, label: &str) -> Option<usize> {
        self.labels.iter().position(|l| l == label)
    }

    /// Percent-unit metrics also get the change in points.
    pub fn is_pct(&self) -> bool {
        self.unit.as_deref() == Some("%")
    }

    /// Relative change (percent) of each describe row of `label` vs baseline.
    pub fn delta_rows(&self, base: usize, idx: usize) -> Option<[Option<f64>; 8]> {
        let (b, v) = (self.columns[base].as_ref()?, self.columns[idx].as_ref()?);
        let (br, vr) = (b.rows(), v.rows());
        Some(std::array::from_fn(|i| match (br[i], vr[i]) {
            (Some(b), Some(v)) => rel_pct(b, v),
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
    let Loaded {
        variants, warnings, ..
    } = loaded;
    if variants.len() < 2 {
        let names: Vec<&str> = variants.iter().map(|v| v.label.as_str()).collect();
        // what loading noted (an input left out, a torn trial) says why
        let notes: String = warnings.iter().map(|w| format!("\nnote: {w}")).collect();
        return Err(usage(format!(
            "need at least two variants to compare, found {} ({}); name each input \
             with LABEL=PATH, a different LABEL per variant{notes}",
            variants.len(),
            names.join(", ")
        )));
    }
    let labels: Vec<String> = variants.iter().map(|v| v.label.clone()).collect();
    let baseline = match baseline {
        None => 0,
        Some(b) => match labels.iter().position(|l| l == b) {
            Some(i) => i,
            None => return Err(usage(unknown_baseline(b, &labels, &warnings))),
        },
    };
    let mut notes = warnings;
    notes.extend(variants.iter().filter_map(boot_note));
    let names = metric_names(&variants, baseline);
    let mut metrics = metrics_parallel(&names, |name| metric(&variants, baseline, name, &settings));
    family(&mut metrics, &settings);
    if metrics.iter().all(|m| m.pairs.iter().all(|p| p.missing)) {
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

/// Why `--baseline b` names no variant: a variant split into `b@run`
/// variants (its runs differ; `warnings` holds the loader's note saying
/// how), or no such label.
fn unknown_baseline(b: &str, labels: &[String], warnings: &[String]) -> String {
    let prefix = format!("{b}@");
    let split: Vec<&str> = labels
        .iter()
        .filter(|l| l.starts_with(&prefix))
        .map(String::as_str)
        .collect();
    let Some(first) = split.first() else {
        return format!(
            "--baseline {b}: no such variant (have: {})",
            labels.join(", ")
        );
    };
    let head = format!("variant {b:?}: runs ");
    let why = warnings
        .iter()
        .find(|w| w.starts_with(&head))
        .and_then(|w| w.strip_prefix(&format!("variant {b:?}: ")))
        .and_then(|w| w.split(';').next())
        .map_or(String::from("its runs differ"), str::to_string);
    format!(
        "--baseline {b}: variant {b:?} was split because {why}; it is compared as {}: \
         name one of them (e.g. --baseline {first})",
        split.join(", ")
    )
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
    let draws: Vec<Option<SideDraws>> = match series[base] {
        Some(_) => variants
            .iter()
            .zip(&values)
            .map(|(v, x)| side_draws(x, s.resamples, side_stream_seed(s.seed, name, &v.label)))
            .collect(),
        None => Vec::new(),
    };
    for (i, x) in series.iter().enumerate() {
        if i == base {
            continue;
        }
        let (bl, vl) = (&variants[base].label, &variants[i].label);
        let (Some(b), Some(x)) = (series[base], x) else {
            let why = match (series[base], x) {
                (None, Some(_)) => format!("missing in the baseline {bl} (only in {vl})"),
                (Some(_), None) => format!("missing in {vl} (only in the baseline {bl})"),
                _ => format!("missing in {bl} and {vl}"),
            };
            pairs.push(Pair {
                variant: vl.clone(),
                outcome: Err(why),
                missing: true,
            });
            continue;
        };
        let seed = stream_seed(s.seed, name, bl, vl);
        let sides = draws[base].as_ref().zip(draws[i].as_ref());
        pairs.push(Pair {
            variant: vl.clone(),
            outcome: compare_pair((b, x), (bl, vl), s, direction, (seed, sides)),
            missing: false,
        });
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
        labels: variants.iter().map(|v| v.label.clone()).collect(),
        base,
        headline: series.iter().flatten().any(|x| x.headline),
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
    let Some(mut mwu) = mann_whitney(&x, &y) else {
        return Err("refused: empty side".to_string());
    };
    let mut floor = (mwu.method == crate::stats::mannwhitney::Method::Exact)
        .then(|| crate::stats::mannwhitney::min_p(x.len(), y.len()));
    // Ties at small n: the exact conditional p, not the normal approximation.
    if let Some((exact, f)) = crate::stats::mannwhitney::exact_with_ties(&x, &y) {
        mwu = exact;
        floor = Some(f);
    }
    let p_floor = floor.filter(|&f| f >= s.alpha);
    let boot = match sides {
        Some((dx, dy)) => bootstrap_sides(dx, dy, CONFIDENCE),
        None => bootstrap(&x, &y, s.resamples, seed, CONFIDENCE),
    };
    let (median, median_note) = checked_ci(boot.median, &x, &y, "median");
    let (mean, mean_note) = checked_ci(boot.mean, &x, &y, "mean");
    let clusters = clusters(b, v);
    let p_raw = clusters.p.map_or(mwu.p, |c| c.max(mwu.p));
    let mut t = Tests {
        median,
        mean,
        median_note,
        mean_note,
        hl,
        mwu,
        welch: welch(&x, &y),
        verdict: Verdict::NoChange,
        boot_level: boot_level(b, v),
        p_floor,
        mde_pct: None,
        clusters,
        p_raw,
        p_family: p_raw,
        verdict_uncorrected: Verdict::NoChange,
        duplicates: Vec::new(),
    };
    t.mde_pct = mde_pct(b, v, &t, s);
    settle(&mut t, s, dir);
    t.verdict_uncorrected = t.verdict;
    Ok(Box::new(t))
}

/// The verdict of `t` at its family-adjusted p: from the Δmedian interval,
/// or, when the relative change is undefined (baseline median 0), from
/// the Hodges–Lehmann shift's sign — never from Δmean, whose interval is
/// the least robust. None when that shift does not fit in a float
/// ([`Tests::unrepresentable`]). Withheld (kept in `within_pair`) when
/// between-cluster variation is unseen.
fn settle(t: &mut Tests, s: &Settings, dir: Direction) {
    let p = t.p_family;
    let verdict = match (&t.median, &t.hl) {
        (Some(ci), _) => decide(p, ci.lo, ci.hi, s.alpha, s.noise_pct, dir),
        (None, Some(h)) if !t.unrepresentable() => decide_shift(p, h.lo, h.hi, s.alpha, dir),
        _ => Verdict::NoChange,
    };
    if t.clusters.counts.0.min(t.clusters.counts.1) < 2 && t.clusters.level != Level::Trial {
        t.clusters.within_pair = (verdict != Verdict::NoChange).then_some(verdict);
        t.verdict = Verdict::NoChange;
    } else {
        t.verdict = verdict;
    }
}

/// Why a relative change is undefined when it is beyond the float range.
const TOO_LARGE: &str = "undefined: the change does not fit in a 64-bit float (beyond ±1.8e308 %)";

/// Why a relative change whose point estimate fits has no interval: a
/// bound of its bootstrap interval is beyond the float range. The
/// estimate is said in the note (the change has no interval to show it
/// with).
fn interval_too_large(what: &str, estimate: f64) -> String {
    let shown = super::format::pct(estimate);
    format!(
        "undefined interval: the change of the {what} is {shown}, but a bound of its \
         bootstrap interval does not fit in a 64-bit float (beyond ±1.8e308 %)"
    )
}

/// A relative interval only when it is well formed: finite bounds around
/// its estimate, and a baseline whose centre is told apart from 0 (for the
/// mean: more than two standard errors away; a ratio to a centre that may
/// be 0 has no meaningful interval). Otherwise `None` and why.
fn checked_ci(
    ci: Option<RelCi>,
    x: &[f64],
    y: &[f64],
    what: &str,
) -> (Option<RelCi>, Option<String>) {
    let centre_of = |v: &[f64]| {
        if what == "mean" {
            crate::stats::describe::mean(v)
        } else {
            median(v)
        }
    };
    let centre = centre_of(x);
    let Some(ci) = ci else {
        let estimate = rel_pct(centre, centre_of(y));
        let why = match estimate {
            _ if centre == 0.0 => format!("undefined: baseline {what} is 0"),
            Some(e) if e.is_finite() => interval_too_large(what, e),
            _ => TOO_LARGE.to_string(),
        };
        return (None, Some(why));
    };
    if what == "mean" {
        let se = crate::stats::describe::std_dev(x).unwrap_or(0.0) / (x.len() as f64).sqrt();
        if centre.abs() <= 2.0 * se {
            return (
                None,
                Some("undefined: baseline mean within 2 standard errors of 0".to_string()),
            );
        }
    }
    let bounds = [ci.lo, ci.estimate, ci.hi];
    let ordered = ci.lo <= ci.estimate && ci.estimate <= ci.hi;
    if ordered && bounds.iter().all(|v| v.is_finite()) {
        (Some(ci), None)
    } else if ordered && ci.estimate.is_finite() {
        (None, Some(interval_too_large(what, ci.estimate)))
    } else if ordered {
        (None, Some(TOO_LARGE.to_string()))
    } else {
        (
            None,
            Some(format!(
                "undefined: the bootstrap interval of the {what} is malformed (baseline {what} near 0 for its spread)"
            )),
        )
    }
}

/// Cluster keys of a series at `level` (`None` for trials without one).
fn keys(s: &Series, level: Level) -> Vec<Option<&str>> {
    s.obs
        .iter()
        .map(|o| match level {
            Level::Boot => o.boot.as_deref().filter(|b| *b != "unknown"),
            Level::Run => o.run.as_deref(),
            Level::Trial => None,
        })
        .collect()
}

/// Per-cluster means of a series at `level`, in first-seen order.
fn cluster_means(s: &Series, level: Level) -> Vec<f64> {
    let mut groups: Vec<(Option<&str>, Vec<f64>)> = Vec::new();
    for (k, o) in keys(s, level).into_iter().zip(&s.obs) {
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(o.value),
            None => groups.push((k, vec![o.value])),
        }
    }
    groups
        .iter()
        .map(|(_, v)| crate::stats::describe::mean(v))
        .collect()
}

/// The unit of replication of a pair and the cluster-level test: boot when
/// the pair's trials come from two or more boots, else run when from two
/// or more runs (bench output directories, probe files), else trial. With
/// two or more clusters a side, Welch's test on the cluster means gates the
/// verdict; with one cluster on a side the verdict is withheld
/// ([`settle`]).
fn clusters(b: &Series, v: &Series) -> Clusters {
    for level in [Level::Boot, Level::Run] {
        let (kb, kv) = (keys(b, level), keys(v, level));
        if kb.iter().chain(&kv).any(Option::is_none) {
            continue;
        }
        let mut all: Vec<&str> = kb.iter().chain(&kv).flatten().copied().collect();
        all.sort_unstable();
        all.dedup();
        if all.len() < 2 {
            continue;
        }
        let (mb, mv) = (cluster_means(b, level), cluster_means(v, level));
        let p = (mb.len() >= 2 && mv.len() >= 2).then(|| cluster_p(&mb, &mv));
        return Clusters {
            level,
            counts: (mb.len(), mv.len()),
            p,
            within_pair: None,
        };
    }
    Clusters {
        level: Level::Trial,
        counts: (b.obs.len(), v.obs.len()),
        p: None,
        within_pair: None,
    }
}

/// Welch's p on cluster means (two or more a side). When every cluster
/// mean of each side is the same, t is undefined; its limit is taken: p 1
/// when the two sides agree, p 0 when they differ (no cluster on either
/// side overlaps the other side, and nothing varies between clusters).
fn cluster_p(mb: &[f64], mv: &[f64]) -> f64 {
    match welch(mb, mv) {
        Some(w) => w.p,
        None if crate::stats::describe::mean(mb) == crate::stats::describe::mean(mv) => 1.0,
        None => 0.0,
    }
}

/// z of the two-sided test at `alpha` plus z of 80 % power.
pub fn z_sum(alpha: f64) -> f64 {
    crate::stats::special::norm_ppf(1.0 - alpha / 2.0) + crate::stats::special::norm_ppf(0.8)
}

/// Smallest relative change (percent) detected with 80 % power: the noise
/// threshold plus (z₁₋α/₂ + z₀.₈) standard errors of the difference of
/// means (at the unit of replication) relative to the baseline mean.
fn mde_pct(b: &Series, v: &Series, t: &Tests, s: &Settings) -> Option<f64> {
    if t.p_floor.is_some() {
        return None;
    }
    let level = t.clusters.level;
    let (x, y) = if level == Level::Trial {
        (b.values(), v.values())
    } else {
        (cluster_means(b, level), cluster_means(v, level))
    };
    if x.len() < 2 || y.len() < 2 {
        return None;
    }
    let (sx, sy) = (
        crate::stats::describe::std_dev(&x)?,
        crate::stats::describe::std_dev(&y)?,
    );
    // Relative to the centre before squaring: squares of standard
    // deviations near 1e200 (or 1e-200) would leave the float range.
    let centre = crate::stats::describe::mean(&x).abs();
    let (rx, ry) = (sx / centre, sy / centre);
    let rel = (rx * rx / x.len() as f64 + ry * ry / y.len() as f64).sqrt() * 100.0;
    (centre > 0.0 && rel.is_finite()).then(|| s.noise_pct + z_sum(s.alpha) * rel)
}

/// |Spearman ρ| above which two metrics of a variant pair count as one
/// hypothesis of the family.
pub const DUPLICATE_RHO: f64 = 0.95;

/// Spearman ρ of two equally long series (pooled baseline + variant).
fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 3 {
        return None;
    }
    let (ra, _) = crate::stats::mannwhitney::average_ranks(a);
    let (rb, _) = crate::stats::mannwhitney::average_ranks(b);
    let (ma, mb) = (
        crate::stats::describe::mean(&ra),
        crate::stats::describe::mean(&rb),
    );
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    (saa > 0.0 && sbb > 0.0).then(|| sab / (saa * sbb).sqrt())
}

/// The family correction: for each variant, its tested metrics (those
/// whose values are not all equal) form one family; near-duplicate metrics (|ρ| ≥ [`DUPLICATE_RHO`] over the pooled
/// values, trial for trial) form one hypothesis, represented by its
/// smallest p; Benjamini–Hochberg over the hypotheses gives each metric
/// `p_family` (never below its own p); the verdicts are then taken at it.
fn family(metrics: &mut [MetricReport], s: &Settings) {
    let Some(first) = metrics.first() else {
        return;
    };
    let variants: Vec<String> = first.pairs.iter().map(|p| p.variant.clone()).collect();
    for var in &variants {
        // (metric index, pooled values, p_raw)
        let mut members: Vec<(usize, Vec<f64>, f64)> = Vec::new();
        for (mi, m) in metrics.iter().enumerate() {
            let Some(Ok(t)) = m
                .pairs
                .iter()
                .find(|p| &p.variant == var)
                .map(|p| &p.outcome)
            else {
                continue;
            };
            let vi = m.pair_index(var);
            let pooled: Vec<f64> = m.values[m.base_index()]
                .iter()
                .chain(vi.map_or(&[][..], |i| &m.values[i][..]))
                .copied()
                .collect();
            // A metric whose values are all equal cannot move: it is no
            // hypothesis of the family (a bench's all-zero rates).
            if pooled.windows(2).any(|w| w[0] != w[1]) {
                members.push((mi, pooled, t.p_raw));
            }
        }
        // Greedy grouping by correlation with each group's first member.
        let mut group_of = vec![usize::MAX; members.len()];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in 0..members.len() {
            let found = groups.iter().position(|g| {
                spearman(&members[g[0]].1, &members[i].1).is_some_and(|r| r.abs() >= DUPLICATE_RHO)
            });
            match found {
                Some(g) => {
                    groups[g].push(i);
                    group_of[i] = g;
                }
                None => {
                    group_of[i] = groups.len();
                    groups.push(vec![i]);
                }
            }
        }
        let reps: Vec<f64> = groups
            .iter()
            .map(|g| g.iter().map(|&i| members[i].2).fold(1.0, f64::min))
            .collect();
        let adjusted = benjamini_hochberg(&reps);
        for (i, (mi, _, p)) in members.iter().enumerate() {
            let g = group_of[i];
            let dups: Vec<String> = groups[g]
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| metrics[members[j].0].name.clone())
                .collect();
            let m = &mut metrics[*mi];
            let dir = m.direction;
            if let Some(Ok(t)) = m
                .pairs
                .iter_mut()
                .find(|p| &p.variant == var)
                .map(|p| &mut p.outcome)
            {
                t.p_family = adjusted[g].max(*p);
                t.duplicates = dups;
                settle(t, s, dir);
            }
        }
    }
}

/// Benjamini–Hochberg adjusted p-values (step-up, monotone, capped at 1).
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut idx: Vec<usize> = (0..m).collect();
    idx.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![1.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in idx.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        out[i] = running.min(1.0);
    }
    out
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
        median_change_pct: rel_pct(mb, mv),
        mwu,
        welch: welch(&x, &y),
    }
}

/// Warnings about one variant's values. `k` series are checked for the
/// same metric, so the drift and the multimodality tests run at 0.05 / k
/// (Bonferroni): at most 5 % false alarms per comparison, not per series.
/// Bench's summary gives the same warnings through it.
pub(crate) fn series_warnings(label: &str, v: &[f64], k: usize) -> Vec<String> {
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
    if let Some(d) = w::dip_test(v).filter(|d| d.p < w::BIMODAL_P / k as f64) {
        out.push(format!(
            "{label}: may be multimodal (Hartigan's dip {:.3}, p {})",
            d.dip,
            super::format::p(d.p)
        ));
    }
    if let Some(cv) = w::cv_pct(v).filter(|&cv| cv > w::HIGH_CV_PCT) {
        out.push(format!(
            "{label}: high variation (CV {} % > 5 %)",
            super::format::magnitude(cv, 1)
        ));
    }
    out
}
