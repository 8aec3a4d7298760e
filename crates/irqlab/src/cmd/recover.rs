//! `irqlab recover DIR`: turn the journals left by a crashed `record` into
//! segments, for every boot directory of a dataset.

use crate::record::layout;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `irqlab recover`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example, after `record` was killed:\n  \
    irqlab recover rec && irqlab replay rec --batch")]
pub struct Args {
    /// A recording directory (dataset, host=… or boot=…).
    pub dir: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let dirs = layout::boot_dirs(&args.dir)?;
    if dirs.is_empty() {
        anyhow::bail!(
            "{}: no recording here (expected host=…/boot=…/ directories)",
            args.dir.display()
        );
    }
    let mut any = false;
    for d in dirs {
        if let Some(msg) = layout::recover_boot_dir(&d)? {
            eprintln!("irqlab: {msg}");
            any = true;
        }
    }
    if !any {
        eprintln!("irqlab: nothing to recover under {}", args.dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
