//! `irqlab compare`: load result sets (see `input` for the formats), build
//! the comparison model (describe rows, deltas, tests, verdicts, warnings)
//! and write it in the chosen format, plus optional SVG plots and an HTML
//! report. Statistics live in `crate::stats`; this module only wires them.

mod csv;
mod format;
mod html;
mod input;
mod input_bench;
mod input_table;
mod json;
mod markdown;
pub mod model;
mod svg;
mod table;
mod text;

#[cfg(test)]
mod synthetic_tests;

use crate::stats::verdict::Direction;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Output format of the main report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Text,
    Markdown,
    Json,
    Csv,
}

/// Which way is better, for inputs that do not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DirectionArg {
    Higher,
    Lower,
}

/// Flags of `irqlab compare`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Result sets: bench result dirs, probe JSON, CSV/JSON tables, files
    /// with one number per line, or dirs of per-iteration files; `LABEL=PATH`
    /// names a variant. The first variant is the baseline.
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
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write strip/box and trial-order plots to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Also write a self-contained HTML report to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Metric name for plain files and per-iteration directories.
    #[arg(long)]
    pub metric: Option<String>,
    /// Which way is better for metrics whose input does not say.
    #[arg(long, value_enum, default_value_t = DirectionArg::Higher)]
    pub direction: DirectionArg,
}

fn settings(a: &Args) -> Result<model::Settings> {
    if !(a.alpha > 0.0 && a.alpha < 1.0) {
        bail!("--alpha must be between 0 and 1");
    }
    if !(a.noise >= 0.0 && a.noise.is_finite()) {
        bail!("--noise must be a non-negative percent");
    }
    if a.resamples < 100 {
        bail!("--resamples must be at least 100");
    }
    Ok(model::Settings {
        alpha: a.alpha,
        noise_pct: a.noise,
        resamples: a.resamples,
        seed: a.seed,
        direction: match a.direction {
            DirectionArg::Higher => Direction::Higher,
            DirectionArg::Lower => Direction::Lower,
        },
    })
}

/// Build the comparison described by `args`.
pub fn comparison(args: &Args) -> Result<model::Comparison> {
    let s = settings(args)?;
    let opts = input::LoadOpts {
        metric: args.metric.clone(),
    };
    let loaded = input::load_all(&args.inputs, &opts)?;
    model::build(loaded, args.baseline.as_deref(), s)
}

fn write_file(
    path: &Path,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("{}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    f(&mut w)
        .and_then(|()| w.flush())
        .with_context(|| format!("{}", path.display()))
}

/// Run `irqlab compare`.
pub fn run(args: Args) -> Result<ExitCode> {
    let c = comparison(&args)?;
    if let Some(p) = &args.plot {
        write_file(p, |w| svg::write(&c, w))?;
    }
    if let Some(p) = &args.html {
        write_file(p, |w| html::write(&c, w))?;
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Table => table::write(&c, &mut out),
        Format::Text => text::write(&c, &mut out),
        Format::Markdown => markdown::write(&c, &mut out),
        Format::Json => json::write(&c, &mut out),
        Format::Csv => csv::write(&c, &mut out),
    }?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
