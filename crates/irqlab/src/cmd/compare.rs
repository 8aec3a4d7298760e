//! `irqlab compare` flags: clap declarations turned into a plain
//! [`CompareConfig`] for `crate::compare`, which does all the work.

use super::args::JsonLayout;
use crate::compare::{CompareConfig, CompareFormat, DirectionRules};
use crate::direction::Direction;
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

/// Report format on stdout (clap side of [`CompareFormat`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormatArg {
    Table,
    Text,
    Markdown,
    Json,
    Csv,
}

impl CompareFormatArg {
    /// The format written, JSON laid out by `json`.
    fn with(self, json: JsonLayout) -> CompareFormat {
        match self {
            CompareFormatArg::Table => CompareFormat::Table,
            CompareFormatArg::Text => CompareFormat::Text,
            CompareFormatArg::Markdown => CompareFormat::Markdown,
            CompareFormatArg::Json => CompareFormat::Json {
                pretty: json.pretty_on_stdout(),
            },
            CompareFormatArg::Csv => CompareFormat::Csv,
        }
    }
}

/// One `--direction` value: `METRIC=higher|lower|none` or a bare default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectionFlag {
    pub metric: Option<String>,
    pub direction: Direction,
}

fn parse_direction_flag(s: &str) -> Result<DirectionFlag, String> {
    let (metric, word) = match s.rsplit_once('=') {
        Some((m, w)) if !m.is_empty() => (Some(m.to_string()), w),
        _ => (None, s),
    };
    match Direction::parse(word) {
        Some(direction) => Ok(DirectionFlag { metric, direction }),
        None => Err(format!(
            "expected higher, lower or none (optionally METRIC=…), found {word:?}"
        )),
    }
}

/// `--alpha`: a significance level strictly between 0 and 1.
fn parse_alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err(format!(
            "expected a level between 0 and 1 (exclusive), found {s:?}"
        )),
    }
}

/// `--noise`: a non-negative, finite percent, with or without its `%`
/// (`2` and `2%` are the same gate, as bench's `--target-effect` reads them).
fn parse_noise(s: &str) -> Result<f64, String> {
    match s.strip_suffix('%').unwrap_or(s).parse::<f64>() {
        Ok(n) if n >= 0.0 && n.is_finite() => Ok(n),
        _ => Err(format!(
            "expected a percent of 0 or more, such as 1 or 2.5%, found {s:?}"
        )),
    }
}

/// `--resamples`: from [`crate::compare::MIN_RESAMPLES`] to
/// [`crate::compare::MAX_RESAMPLES`].
fn parse_resamples(s: &str) -> Result<usize, String> {
    let (min, max) = (crate::compare::MIN_RESAMPLES, crate::compare::MAX_RESAMPLES);
    match s.parse::<usize>() {
        Ok(r) if (min..=max).contains(&r) => Ok(r),
        _ => Err(format!(
            "expected a whole number from {min} to {max}, found {s:?}"
        )),
    }
}

/// Flags of `irqlab compare`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    irqlab compare results/a.txt results/b.txt      # variants a and b, metric `value`\n  \
    irqlab compare tip=runs/tip patch=runs/patch --metric irqs_per_sec --format text\n  \
    irqlab compare irqlab-results/ --baseline tip --format markdown --plot cmp.svg\n  \
    irqlab compare old=o1.json old=o2.json new=n1.json new=n2.json   # pooled probe runs\n  \
    irqlab compare before/ after/ --direction irq_tlb_per_sec=lower\n\
Statistics and their calibration: docs/compare-statistics.md")]
pub struct Args {
    /// Result sets: bench result dirs, probe JSON, CSV/JSON tables, files
    /// with one number per line, or dirs of per-iteration files; `LABEL=PATH`
    /// names a variant (repeat a label to pool several runs, e.g. probe
    /// runs). The first variant is the baseline; variants of one bench
    /// plan are in the plan's order.
    #[arg(required = true, value_name = "[LABEL=]PATH")]
    pub inputs: Vec<String>,
    /// Label of the reference variant (default: the first; for the
    /// variants of one bench plan, the plan's first).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Significance level.
    #[arg(long, default_value_t = crate::compare::DEFAULT_ALPHA, value_parser = parse_alpha)]
    pub alpha: f64,
    /// Noise threshold in percent (`2` or `2%`): smaller changes are never a
    /// verdict.
    #[arg(long, default_value_t = crate::compare::DEFAULT_NOISE_PCT, value_parser = parse_noise)]
    pub noise: f64,
    /// Bootstrap resamples, from 100 to 100000.
    #[arg(long, default_value_t = 10_000, value_parser = parse_resamples,
          allow_hyphen_values = true)]
    pub resamples: usize,
    /// Bootstrap seed.
    #[arg(long, default_value_t = 42, allow_hyphen_values = true,
          value_parser = |s: &str| super::args::whole_number::<u64>(s, 0, u64::MAX))]
    pub seed: u64,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = CompareFormatArg::Table)]
    pub format: CompareFormatArg,
    #[command(flatten)]
    pub json: JsonLayout,
    /// Also write strip/box and trial-order plots to this SVG file.
    #[arg(long, value_name = "FILE.svg", value_parser = super::args::path())]
    pub plot: Option<PathBuf>,
    /// Also write a self-contained HTML report to this file.
    #[arg(long, value_name = "FILE", value_parser = super::args::path())]
    pub html: Option<PathBuf>,
    /// Metric name for plain files and per-iteration directories (other
    /// inputs name their own metrics: refused without one of these).
    #[arg(long)]
    pub metric: Option<String>,
    /// Which way is better: `METRIC=higher|lower|none` (repeatable) for one
    /// metric (it must exist), or a bare value for every other metric
    /// (refused when none is left: bench results state every metric's).
    /// Without it: what the input states, else known costs are
    /// lower-is-better (durations `_ns`/`_us`/`_ms` that are not rates,
    /// `latency`, CPU shares such as `cpu_pct`, `softirq_pct`) and all
    /// else is `none`.
    #[arg(long, value_name = "[METRIC=]higher|lower|none", value_parser = parse_direction_flag)]
    pub direction: Vec<DirectionFlag>,
    /// Text format: print every metric, not only those that changed (the
    /// other formats always print every metric).
    #[arg(long)]
    pub all: bool,
    /// Compare bench runs of different workloads (refused otherwise: a
    /// verdict between two workloads means nothing; refused too when no
    /// variant ran another workload than the baseline).
    #[arg(long)]
    pub mixed_workloads: bool,
    /// Compare plain inputs (number files, tables, per-iteration
    /// directories) that hold the same values in the same order, with a
    /// note (refused otherwise: a copy of a run compared with itself gives
    /// no change; refused too when no two inputs hold the same values).
    #[arg(long)]
    pub allow_copies: bool,
}

fn config(a: Args) -> Result<CompareConfig> {
    refuse_empty_input(&a.inputs)?;
    if a.all && a.format != CompareFormatArg::Text {
        return Err(crate::compare::usage(format!(
            "--all: only --format text leaves out unchanged metrics; --format {} \
             prints every metric already",
            format_name(a.format)
        )));
    }
    if let Some(why) = a.json.refused_with(a.format, CompareFormatArg::Json) {
        return Err(crate::compare::usage(why));
    }
    if let Some(why) = a.plot.as_deref().and_then(plot_of_another_format) {
        return Err(crate::compare::usage(why));
    }
    let directions = direction_rules(a.direction)?;
    Ok(CompareConfig {
        inputs: a.inputs,
        baseline: a.baseline,
        alpha: a.alpha,
        noise_pct: a.noise,
        resamples: a.resamples,
        seed: a.seed,
        format: a.format.with(a.json),
        plot: a.plot,
        html: a.html,
        metric: a.metric,
        directions,
        all: a.all,
        mixed_workloads: a.mixed_workloads,
        allow_copies: a.allow_copies,
    })
}

/// The `--direction` flags as rules. Two bare defaults, or one metric given
/// two different directions (`m=lower --direction m=higher`), are usage
/// errors: which way is better would depend on the flags' order. The same
/// metric given the same direction twice is one rule.
fn direction_rules(flags: Vec<DirectionFlag>) -> Result<DirectionRules> {
    let mut rules = DirectionRules::default();
    for d in flags {
        match d.metric {
            Some(m) => match rules.per_metric.iter().find(|(k, _)| *k == m) {
                Some((_, was)) if *was != d.direction => {
                    return Err(crate::compare::usage(format!(
                        "--direction {m}={}: {m} was given {} already; give each \
                         metric one direction",
                        d.direction.as_str(),
                        was.as_str(),
                    )))
                }
                Some(_) => {}
                None => rules.per_metric.push((m, d.direction)),
            },
            None if rules.default.is_some() => {
                return Err(crate::compare::usage(
                    "--direction: more than one default given",
                ))
            }
            None => rules.default = Some(d.direction),
        }
    }
    Ok(rules)
}

/// Image formats `--plot` does not write: a name with one of these
/// extensions would hold SVG text that its viewers cannot open.
const NOT_SVG: [&str; 11] = [
    "png", "jpg", "jpeg", "gif", "webp", "bmp", "tif", "tiff", "pdf", "eps", "ps",
];

/// Why `--plot PATH` is refused: its name says another image format
/// (`cmp.png`) than the SVG it would get. Other names (`.svg`, none, a
/// device such as `/dev/stdout`) are written.
fn plot_of_another_format(path: &std::path::Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    NOT_SVG.contains(&ext.as_str()).then(|| {
        format!(
            "--plot {}: the plot is SVG, not {ext}; name it .svg (convert it \
             afterwards if you need {ext})",
            path.display()
        )
    })
}

/// An empty input names no file, nor does `LABEL=` with no path or `=PATH`
/// with no label (`crate::compare::empty_part`): a usage error
/// naming the input and its position among the inputs (as
/// `super::args::path` refuses other empty paths), before any is read.
fn refuse_empty_input(inputs: &[String]) -> Result<()> {
    let why = |s: &String| {
        if s.is_empty() {
            Some(super::args::EMPTY_PATH.to_string())
        } else {
            crate::compare::empty_part(s)
        }
    };
    match inputs
        .iter()
        .enumerate()
        .find_map(|(k, s)| Some((k, s, why(s)?)))
    {
        Some((k, s, why)) => Err(crate::compare::usage(format!(
            "invalid value '{s}' for '<[LABEL=]PATH>' (input {} of {}): {why}",
            k + 1,
            inputs.len(),
        ))),
        None => Ok(()),
    }
}

/// The `--format` word of `f`.
fn format_name(f: CompareFormatArg) -> String {
    clap::ValueEnum::to_possible_value(&f)
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

/// Run `irqlab compare`. Flags that cannot apply (`--all` without the text
/// format, two bare `--direction`s; once the inputs are read, `--metric`
/// without a plain input, a bare `--direction` with no metric left for
/// it, `--mixed-workloads` with no workloads to mix) and a flag value that
/// names something the inputs do not have (`--direction typo=lower`) are
/// usage errors: exit 2.
pub fn run(args: Args) -> Result<ExitCode> {
    match config(args).and_then(|c| crate::compare::run(&c)) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) if e.downcast_ref::<crate::compare::Usage>().is_some() => {
            eprint!("{}", super::error_text(&e));
            Ok(ExitCode::from(2))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn direction_flags() {
        let f = parse_direction_flag("irq_tlb_per_sec=lower").unwrap();
        assert_eq!(f.metric.as_deref(), Some("irq_tlb_per_sec"));
        assert_eq!(f.direction, Direction::Lower);
        assert_eq!(parse_direction_flag("none").unwrap().metric, None);
        assert!(parse_direction_flag("x=up").is_err());
    }

    #[test]
    fn out_of_range_alpha_and_resamples_are_usage_errors() {
        assert!(parse_alpha("2").is_err() && parse_alpha("0").is_err());
        assert!(parse_alpha("nan").is_err());
        assert_eq!(parse_alpha("0.01"), Ok(0.01));
        assert!(parse_resamples("0").is_err() && parse_resamples("99").is_err());
        assert_eq!(parse_resamples("100"), Ok(100));
        assert_eq!(parse_resamples("100000"), Ok(100_000));
        assert!(parse_resamples("100001").is_err());
        assert!(parse_resamples("1000000000000")
            .unwrap_err()
            .contains("from 100 to 100000"));
        assert!(parse_noise("-1").is_err() && parse_noise("inf").is_err());
        assert!(parse_noise("-1%").is_err() && parse_noise("%").is_err());
        assert!(parse_noise("2%%").is_err() && parse_noise("x%").is_err());
        assert_eq!(parse_noise("2.5%"), Ok(2.5));
        assert_eq!(parse_noise("2.5"), Ok(2.5));
    }
}
