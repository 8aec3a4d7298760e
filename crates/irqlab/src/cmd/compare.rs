//! `irqlab compare` flags: clap declarations turned into a plain
//! [`CompareConfig`] for `crate::compare`, which does all the work.

use crate::compare::{CompareConfig, CompareFormat, DirectionRules};
use crate::direction::Direction;
use anyhow::{bail, Result};
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

impl From<CompareFormatArg> for CompareFormat {
    fn from(f: CompareFormatArg) -> Self {
        match f {
            CompareFormatArg::Table => CompareFormat::Table,
            CompareFormatArg::Text => CompareFormat::Text,
            CompareFormatArg::Markdown => CompareFormat::Markdown,
            CompareFormatArg::Json => CompareFormat::Json,
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
    /// runs). The first variant is the baseline.
    #[arg(required = true, value_name = "[LABEL=]PATH")]
    pub inputs: Vec<String>,
    /// Label of the reference variant (default: the first).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Significance level.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Noise threshold in percent: smaller changes are never a verdict.
    #[arg(long, default_value_t = 1.0)]
    pub noise: f64,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// Bootstrap seed.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = CompareFormatArg::Table)]
    pub format: CompareFormatArg,
    /// Also write strip/box and trial-order plots to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Also write a self-contained HTML report to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Metric name for plain files and per-iteration directories.
    #[arg(long)]
    pub metric: Option<String>,
    /// Which way is better: `METRIC=higher|lower|none` (repeatable) for one
    /// metric, or a bare value as the default for metrics whose input does
    /// not say and whose name/unit implies nothing (costs such as `_ns`,
    /// `latency`, CPU `%` are lower-is-better; other metrics `none`).
    #[arg(long, value_name = "[METRIC=]higher|lower|none", value_parser = parse_direction_flag)]
    pub direction: Vec<DirectionFlag>,
    /// Text format: print every metric, not only those that changed.
    #[arg(long)]
    pub all: bool,
}

fn config(a: Args) -> Result<CompareConfig> {
    let mut rules = DirectionRules::default();
    for d in a.direction {
        match d.metric {
            Some(m) => rules.per_metric.push((m, d.direction)),
            None if rules.default.is_some() => bail!("--direction: more than one default given"),
            None => rules.default = Some(d.direction),
        }
    }
    Ok(CompareConfig {
        inputs: a.inputs,
        baseline: a.baseline,
        alpha: a.alpha,
        noise_pct: a.noise,
        resamples: a.resamples,
        seed: a.seed,
        format: a.format.into(),
        plot: a.plot,
        html: a.html,
        metric: a.metric,
        directions: rules,
        all: a.all,
    })
}

/// Run `irqlab compare`.
pub fn run(args: Args) -> Result<ExitCode> {
    crate::compare::run(&config(args)?)?;
    Ok(ExitCode::SUCCESS)
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
}
