//! The domain of `irqlab compare`: load result sets (see `input` for the
//! formats), build the comparison model (describe rows, deltas, tests,
//! verdicts, warnings) and write it in the chosen format, plus optional SVG
//! plots and an HTML report. Statistics live in `crate::stats`; the command
//! layer (`cmd/compare.rs`) only turns flags into a [`CompareConfig`].

mod format;
mod html;
mod input;
mod input_bench;
pub(crate) mod input_json;
mod input_nulls;
mod input_order;
mod input_resume;
mod input_runs;
mod input_same;
mod input_table;
mod input_trials;
mod input_units;
mod json;
mod markdown;
pub mod model;
mod out_csv;
mod svg;
mod table;
mod text;

#[cfg(test)]
mod synthetic_tests;

pub use format::p as p_value;
pub use input::{empty_part, load_all, LoadOpts, Loaded, Obs, Series, VariantData};
pub(crate) use input_resume::differences as resume_differences;
pub use json::SCHEMA;

use crate::direction::Direction;
use anyhow::{bail, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Fewest bootstrap resamples `--resamples` accepts.
pub const MIN_RESAMPLES: usize = 100;

/// Most bootstrap resamples `--resamples` accepts: each side's replicates
/// are kept in memory (four floats each), and beyond this the intervals'
/// Monte-Carlo error is far below their width anyway.
pub const MAX_RESAMPLES: usize = 100_000;

/// `--alpha`'s default: the significance level of every verdict.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// `--noise`'s default (percent): smaller changes are never a verdict.
pub const DEFAULT_NOISE_PCT: f64 = 1.0;

/// A usage error found once the inputs are known (a flag naming a metric
/// the inputs do not have): the command exits 2.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A [`Usage`] error.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Usage(msg.into()))
}

/// Output format of the main report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareFormat {
    Table,
    Text,
    Markdown,
    /// Indented (`pretty`) or on one line.
    Json {
        pretty: bool,
    },
    Csv,
}

/// Which way is better, per metric. Resolution order: a per-metric rule
/// (`--direction METRIC=…`), what the input file states (a bench result
/// knows its metrics), the default rule (a bare `--direction`, which
/// applies to every other metric, name inference included), the inference
/// from known cost families ([`Direction::infer`]), else [`Direction::None`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirectionRules {
    pub default: Option<Direction>,
    pub per_metric: Vec<(String, Direction)>,
}

impl DirectionRules {
    /// The direction of `metric` given its unit and what its input states.
    pub fn resolve(
        &self,
        metric: &str,
        unit: Option<&str>,
        stated: Option<Direction>,
    ) -> Direction {
        if let Some((_, d)) = self.per_metric.iter().rev().find(|(m, _)| m == metric) {
            return *d;
        }
        if let Some(d) = stated {
            return d;
        }
        self.default
            .unwrap_or_else(|| Direction::infer(metric, unit))
    }
}

/// Everything `irqlab compare` needs, free of command-line types.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    pub inputs: Vec<String>,
    pub baseline: Option<String>,
    pub alpha: f64,
    pub noise_pct: f64,
    pub resamples: usize,
    pub seed: u64,
    pub format: CompareFormat,
    pub plot: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub metric: Option<String>,
    pub directions: DirectionRules,
    /// Text format: every metric, not only the changed ones.
    pub all: bool,
    /// Compare variants whose bench runs ran different workloads.
    pub mixed_workloads: bool,
    /// Compare plain inputs that hold the same values (`--allow-copies`).
    pub allow_copies: bool,
}

/// The model's settings from `c`, checked (alpha, noise, resamples).
pub fn settings(c: &CompareConfig) -> Result<model::Settings> {
    if !(c.alpha > 0.0 && c.alpha < 1.0) {
        bail!("--alpha must be between 0 and 1");
    }
    if !(c.noise_pct >= 0.0 && c.noise_pct.is_finite()) {
        bail!("--noise must be a non-negative percent");
    }
    if !(MIN_RESAMPLES..=MAX_RESAMPLES).contains(&c.resamples) {
        return Err(usage(format!(
            "--resamples {}: must be from {MIN_RESAMPLES} to {MAX_RESAMPLES}",
            c.resamples
        )));
    }
    Ok(model::Settings {
        alpha: c.alpha,
        noise_pct: c.noise_pct,
        resamples: c.resamples,
        seed: c.seed,
        directions: c.directions.clone(),
    })
}

/// Build the comparison described by `config`.
pub fn comparison(config: &CompareConfig) -> Result<model::Comparison> {
    let s = settings(config)?;
    let opts = LoadOpts {
        metric: config.metric.clone(),
        directed: config
            .directions
            .per_metric
            .iter()
            .map(|(m, _)| m.clone())
            .collect(),
        allow_copies: config.allow_copies,
    };
    let loaded = load_all(&config.inputs, &opts)?;
    compare_loaded(config, s, loaded)
}

/// Everything `irqlab compare` does between loading its inputs and writing
/// its report: the checks of the flags against what was loaded, the notes
/// on workloads and machines, and the model (statistics and verdicts). No
/// I/O; `s` is [`settings`] of `config`.
pub fn compare_loaded(
    config: &CompareConfig,
    s: model::Settings,
    mut loaded: Loaded,
) -> Result<model::Comparison> {
    check_metric_named(config, &loaded)?;
    check_direction_metrics(&config.directions, &loaded)?;
    check_default_direction(&config.directions, &loaded)?;
    check_workloads(
        &mut loaded,
        config.baseline.as_deref(),
        config.mixed_workloads,
    )?;
    note_machines(&mut loaded, config.baseline.as_deref());
    model::build(loaded, config.baseline.as_deref(), s)
}

/// `--metric` names the values of plain files and directories of
/// per-iteration files only: with none among the inputs it would be
/// ignored, so it is a usage error.
fn check_metric_named(config: &CompareConfig, loaded: &Loaded) -> Result<()> {
    match &config.metric {
        Some(m) if !loaded.metric_named => Err(usage(format!(
            "--metric {m}: only plain files and directories of per-iteration files \
             take a metric name; {} name their own metrics",
            config.inputs.join(", ")
        ))),
        _ => Ok(()),
    }
}

/// Every `--direction METRIC=…` must name a metric of the inputs: a typo
/// would otherwise be ignored and the metric keep its default direction.
fn check_direction_metrics(rules: &DirectionRules, loaded: &Loaded) -> Result<()> {
    let mut have: Vec<&str> = loaded
        .variants
        .iter()
        .flat_map(|v| v.series.iter().map(|s| s.metric.as_str()))
        .collect();
    have.sort_unstable();
    have.dedup();
    for (m, _) in &rules.per_metric {
        if !have.contains(&m.as_str()) {
            return Err(usage(format!(
                "--direction {m}=…: no metric {m:?} in the inputs (they have: {})",
                have.join(", ")
            )));
        }
    }
    Ok(())
}

/// A bare `--direction` fills in the direction of metrics that neither
/// their inputs nor a `--direction METRIC=…` give one: when every metric
/// has one (bench results and probe files state each metric's), it would
/// be ignored, so it is a usage error.
fn check_default_direction(rules: &DirectionRules, loaded: &Loaded) -> Result<()> {
    let Some(default) = rules.default else {
        return Ok(());
    };
    let series = || loaded.variants.iter().flat_map(|v| v.series.iter());
    let open = series().any(|s| {
        let directed = rules.per_metric.iter().any(|(m, _)| *m == s.metric);
        let stated = series().any(|x| x.metric == s.metric && x.direction.is_some());
        !directed && !stated
    });
    if open {
        return Ok(());
    }
    Err(usage(format!(
        "--direction {}: every metric already has a direction (bench results and probe \
         files state each metric's; --direction METRIC=… gives the others), so a bare \
         --direction would apply to none; give --direction METRIC={} to override what an \
         input states",
        default.as_str(),
        default.as_str()
    )))
}

/// Every variant must have run the baseline's workload (as its bench plan
/// records it): a verdict between two workloads means nothing. A usage
/// error naming both workloads, or with `allow` (`--mixed-workloads`) a
/// note. Variants whose input records no workload are not checked; an
/// unknown `--baseline` is left to the model to report. `allow` when no
/// variant ran another workload than the baseline's would be ignored: a
/// usage error ([`unused_mixed_workloads`]).
fn check_workloads(loaded: &mut Loaded, baseline: Option<&str>, allow: bool) -> Result<()> {
    let vs = &loaded.variants;
    let base = match baseline {
        Some(b) => vs.iter().position(|v| v.label == b),
        None => (!vs.is_empty()).then_some(0),
    };
    let Some(base) = base else {
        return Ok(());
    };
    let Some(want) = workload(&vs[base]) else {
        return match allow {
            true => Err(unused_mixed_workloads(&vs[base].label, None)),
            false => Ok(()),
        };
    };
    if allow && vs.iter().all(|v| workload(v).is_none_or(|w| w == want)) {
        return Err(unused_mixed_workloads(&vs[base].label, Some(want)));
    }
    let mut notes = Vec::new();
    for v in vs {
        let Some(got) = workload(v).filter(|w| *w != want) else {
            continue;
        };
        let (b, l) = (&vs[base].label, &v.label);
        if !allow {
            return Err(usage(format!(
                "variant {l} ran workload {got}, the baseline {b} ran {want}: a verdict \
                 between two workloads means nothing (give --mixed-workloads to compare \
                 them anyway)"
            )));
        }
        notes.push(format!(
            "variant {l} ran workload {got}, the baseline {b} ran {want}: compared as \
             asked (--mixed-workloads); a change may be the workload's, not the system's"
        ));
    }
    loaded.warnings.extend(notes);
    Ok(())
}

/// A note for every variant whose runs recorded another host name, CPU
/// model or set of online CPUs than the baseline's, or another trial
/// length: compared (the comparison may be across machines on purpose),
/// but said. Another
/// kernel or tree is not noted: that is what variants differ in.
fn note_machines(loaded: &mut Loaded, baseline: Option<&str>) {
    let vs = &loaded.variants;
    let base = match baseline {
        Some(b) => vs.iter().find(|v| v.label == b),
        None => vs.first(),
    };
    let Some(base) = base else {
        return;
    };
    let notes: Vec<String> = vs
        .iter()
        .flat_map(|v| {
            let (b, v) = (
                (base.label.as_str(), &base.plan[..]),
                (v.label.as_str(), &v.plan[..]),
            );
            [
                input_bench::other_machine(b, v),
                input_bench::other_trial_length(b, v),
            ]
        })
        .flatten()
        .collect();
    loaded.warnings.extend(notes);
}

/// The usage error for `--mixed-workloads` where no variant ran another
/// workload than the baseline (`base`), which ran `want` (`None`: its
/// input records no workload).
fn unused_mixed_workloads(base: &str, want: Option<&str>) -> anyhow::Error {
    let why = match want {
        Some(w) => {
            format!("every variant that records a workload ran {w}, as the baseline {base} did")
        }
        None => {
            format!("the baseline {base} records no workload (only a bench run's plan.json does)")
        }
    };
    usage(format!(
        "--mixed-workloads: {why}; there are no workloads to mix (give it only to compare \
         bench runs of different workloads)"
    ))
}

/// The workload a variant's bench plan records.
fn workload(v: &VariantData) -> Option<&str> {
    v.plan
        .iter()
        .find(|(k, _)| k == "workload")
        .map(|(_, w)| w.as_str())
}

/// Write an extra output file (`--plot`, `--html`) whole or not at all
/// (`crate::export::atomic`): an error leaves any previous file at `path`
/// untouched and no temporary file behind.
fn write_file(path: &Path, f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    crate::export::atomic::write_file(path, |w| Ok(f(w)?))
}

/// Write the report of `c` in `format` to `out`.
pub fn write_report(
    c: &model::Comparison,
    format: CompareFormat,
    all: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        CompareFormat::Table => table::write(c, out),
        CompareFormat::Text => text::write(c, all, out),
        CompareFormat::Markdown => markdown::write(c, out),
        CompareFormat::Json { pretty } => json::write(c, pretty, out),
        CompareFormat::Csv => out_csv::write(c, out),
    }
}

/// The SVG plot document of `c`.
pub fn render_svg(c: &model::Comparison) -> String {
    svg::render(c)
}

/// Run the comparison and write every requested output.
pub fn run(config: &CompareConfig) -> Result<()> {
    let outputs: Vec<(&str, &Path)> = [("--plot", &config.plot), ("--html", &config.html)]
        .into_iter()
        .filter_map(|(flag, p)| Some((flag, p.as_deref()?)))
        .collect();
    let inputs: Vec<PathBuf> = config
        .inputs
        .iter()
        .map(|s| input::split_spec(s).1)
        .collect();
    input_same::refuse_outputs_over_inputs(&inputs, &outputs)?;
    let c = comparison(config)?;
    if let Some(p) = &config.plot {
        write_file(p, |w| svg::write(&c, w))?;
    }
    if let Some(p) = &config.html {
        write_file(p, |w| html::write(&c, w))?;
    }
    if config.format == CompareFormat::Csv {
        // CSV has one row per metric and variant: no place for the notes
        // the other formats print.
        for n in &c.notes {
            eprintln!("irqlab: note: {n}");
        }
    }
    let mut out = crate::export::stdout::stdout();
    match write_report(&c, config.format, config.all, &mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_resolution_order() {
        let r = DirectionRules {
            default: Some(Direction::Higher),
            per_metric: vec![("a_ns".into(), Direction::None)],
        };
        assert_eq!(
            r.resolve("a_ns", None, Some(Direction::Lower)),
            Direction::None
        );
        // A bare --direction applies to every metric without its own rule
        // or a direction its input states.
        assert_eq!(r.resolve("b", None, Some(Direction::None)), Direction::None);
        assert_eq!(r.resolve("b", None, None), Direction::Higher);
        assert_eq!(r.resolve("lat_us", None, None), Direction::Higher);
        assert_eq!(r.resolve("cache_hit_pct", None, None), Direction::Higher);
        assert_eq!(r.resolve("rate", None, None), Direction::Higher);
        let inferred = DirectionRules::default();
        assert_eq!(inferred.resolve("lat_us", None, None), Direction::Lower);
        assert_eq!(
            inferred.resolve("b", None, Some(Direction::Lower)),
            Direction::Lower
        );
        assert_eq!(
            DirectionRules::default().resolve("rate", None, None),
            Direction::None
        );
    }
}
