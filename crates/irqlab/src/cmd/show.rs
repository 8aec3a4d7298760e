//! `irqlab show`: one snapshot, or rates over an interval.

use std::process::ExitCode;

/// Flags of `irqlab show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read a captured tree (sosreport, synth output) instead of `/`.
    #[arg(long, default_value = "/")]
    pub root: std::path::PathBuf,
}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    Ok(ExitCode::SUCCESS)
}
