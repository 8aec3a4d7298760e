//! `irqlab top`: watch interrupts live, sorted by rate. This module holds
//! the flags; the interactive UI lives in `crate::tui`. (`--batch` comes
//! from the batch branch; the lead reconciles the two `Args` at merge.)

use crate::tui::{self, TuiConfig};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `irqlab top`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read a captured tree (sosreport, `irqlab synth` output) instead of `/`.
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// Sampling interval (e.g. `1s`, `250ms`).
    #[arg(long, short = 'i', default_value = "1s", value_parser = crate::cmd::parse_duration)]
    pub interval: Duration,
    /// Start with this row filter (regex on label, chip, actions, description).
    #[arg(long)]
    pub irq: Option<String>,
    /// Start with only these CPUs (e.g. `0-3,8`).
    #[arg(long)]
    pub cpus: Option<String>,
}

/// The UI's configuration from the flags.
pub fn tui_config(args: Args) -> TuiConfig {
    TuiConfig {
        root: args.root,
        interval: args.interval,
        irq: args.irq,
        cpus: args.cpus,
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    tui::run(tui_config(args))?;
    Ok(ExitCode::SUCCESS)
}
