//! `irqlab top`: watch interrupts live, sorted by rate. `--batch` prints
//! lines for scripts (text or JSON Lines, see `batch.rs`); without it the
//! interactive ratatui view runs (`crate::tui`).
//!
//! Owns the flags of the whole subcommand. Sampling is in `live.rs`.

pub mod batch;
pub mod live;
pub mod text;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Output format of `--batch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BatchFormat {
    /// mpstat-like lines, each starting with the UTC time.
    Text,
    /// JSON Lines: one JSON object per interval (see README).
    Json,
}

/// How to read interrupt counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum StrategyChoice {
    /// Measure both at start when --irq selects only numbered IRQs; take the cheaper.
    #[default]
    Auto,
    /// Always read the whole /proc/interrupts.
    ProcInterrupts,
    /// Read /sys/kernel/irq/N/per_cpu_count of the selected IRQs when possible.
    PerCpuCount,
}

/// Flags of `irqlab top`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read a captured tree (sosreport, `irqlab synth` output) instead of `/`.
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// Time between samples (e.g. `1s`, `250ms`).
    #[arg(long, short = 'i', default_value = "1s", value_parser = crate::cmd::parse_duration)]
    pub interval: Duration,
    /// Stop after this many intervals (default: run until interrupted).
    #[arg(long, short = 'n')]
    pub count: Option<u64>,
    /// Print lines for scripts instead of the interactive view.
    #[arg(long)]
    pub batch: bool,
    /// Output format of --batch.
    #[arg(long, value_enum, default_value = "text")]
    pub format: BatchFormat,
    /// Keep only rows whose label, chip, actions or description match; when
    /// it selects only numbered IRQs they may be read from sysfs instead.
    #[arg(long)]
    pub irq: Option<String>,
    /// Keep only these CPUs (e.g. `0-3,8`).
    #[arg(long)]
    pub cpus: Option<String>,
    /// How interrupt counts are read.
    #[arg(long, value_enum, default_value = "auto")]
    pub strategy: StrategyChoice,
    /// Explain the sampling strategy on stderr and add self-cost to text lines.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// Run `irqlab top`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.interval.is_zero() {
        anyhow::bail!("--interval must be greater than 0");
    }
    if args.batch {
        batch::run(&args)
    } else {
        interactive(args)
    }
}

/// The interactive view (`crate::tui`) configured from the flags.
pub fn interactive(args: Args) -> anyhow::Result<ExitCode> {
    crate::tui::run(tui_config(args))?;
    Ok(ExitCode::SUCCESS)
}

/// The UI's configuration from the flags.
pub fn tui_config(args: Args) -> crate::tui::TuiConfig {
    crate::tui::TuiConfig {
        root: args.root,
        interval: args.interval,
        irq: args.irq,
        cpus: args.cpus,
    }
}
