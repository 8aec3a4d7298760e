//! `irqlab recover DIR`: turn the journals left by a crashed `record` into
//! segments, for every boot directory of a dataset (`layout::recover_boot_dir`:
//! never removes input it did not fully convert). Exit 1 when any
//! directory was not recovered (an error, such as files of two recordings
//! in one boot directory, which is left as it is; or a journal none of
//! whose lines could be read, a torn first record included) or could not
//! be read (a `host=`/`boot=` directory that cannot be listed, named with
//! the OS error), or when a file recovery meant to remove (an interrupted
//! write, a superseded segment) could not be removed and is still there;
//! the others still are.

use crate::record::layout;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `irqlab recover`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example, after `record` was killed:\n  \
    irqlab recover rec && irqlab replay rec --batch")]
pub struct Args {
    /// A recording directory (dataset, host=… or boot=…).
    #[arg(value_parser = super::args::path())]
    pub dir: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::replay::refuse_non_directory(&args.dir)?;
    let parts = layout::partitions(&args.dir)?;
    let dirs = parts.boot_dirs;
    // each directory that could not be read, before what was recovered
    for u in &parts.unreadable {
        eprint!(
            "{}",
            super::error_text(&anyhow::anyhow!("{u}: not recovered"))
        );
    }
    if dirs.is_empty() && parts.unreadable.is_empty() {
        anyhow::bail!(
            "{}: no recording here (expected host=…/boot=…/ directories)",
            args.dir.display()
        );
    }
    let mut any = false;
    let mut failed = 0;
    // files meant to be removed that are still there
    let mut not_removed = 0;
    // every boot directory, even after one that failed
    for d in &dirs {
        match layout::recover_boot_dir(d) {
            Ok(r) => {
                // what was recovered, then what replay would say of the data
                let lines = r.message.iter().flat_map(|m| m.lines());
                for l in lines.chain(r.checks.iter().flat_map(|c| c.lines())) {
                    eprintln!("irqlab: {l}");
                }
                any |= r.message.is_some();
                not_removed += r.not_removed.len();
                // a journal none of whose lines could be read
                if r.nothing_recovered {
                    failed += 1;
                }
            }
            Err(e) => {
                eprint!("{}", super::error_text(&e));
                failed += 1;
            }
        }
    }
    if failed > 0 {
        eprintln!(
            "irqlab: {failed} of {} recording(s) under {} not recovered (above)",
            dirs.len(),
            args.dir.display()
        );
    }
    if not_removed > 0 {
        eprintln!(
            "irqlab: {not_removed} file(s) under {} that recovery removes could not be removed (above): the recording is not as `recover` leaves it until they are removed",
            args.dir.display()
        );
    }
    if !parts.unreadable.is_empty() {
        if failed == 0 && !any && !dirs.is_empty() {
            eprintln!(
                "irqlab: nothing to recover in the {} recording(s) read under {}",
                dirs.len(),
                args.dir.display()
            );
        }
        let n = parts.unreadable.len();
        eprintln!(
            "irqlab: {n} {} under {} could not be read (above): the recordings in them, if any, were not recovered",
            if n == 1 { "directory" } else { "directories" },
            args.dir.display()
        );
    }
    if failed > 0 || not_removed > 0 || !parts.unreadable.is_empty() {
        return Ok(ExitCode::FAILURE);
    }
    // said even after what replay would say (above): both are news
    if !any {
        eprintln!("irqlab: nothing to recover under {}", args.dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
