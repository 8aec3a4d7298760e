//! `irqlab restore`: undo the host changes of a run that could not undo
//! them itself (SIGKILL, power loss) by replaying the guard's journal.

use crate::guard::{default_journal, replay_journal, Holder, RunLock, Stale};
use crate::host::HostFs;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `irqlab restore`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Root the journaled paths are relative to (a fake tree in tests).
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// Journal to replay [default: /var/lib/irqlab/journal.jsonl for root /,
    /// else ROOT/.irqlab-journal.jsonl].
    #[arg(long)]
    pub journal: Option<PathBuf>,
}

/// Replay the journal newest first; print what was restored. Exit 1 (with
/// the journal kept) if any change could not be undone.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let journal = args.journal.unwrap_or_else(|| default_journal(&args.root));
    // never under a live run; a killed run's stale lock is ours now
    let me = Holder::me("restore", None);
    let lock = RunLock::acquire(&args.root, me, &journal, Stale::Take)?;
    if let Some(h) = &lock.took_over {
        println!("taking charge of the stale lock of {h}");
    }
    if !journal.exists() {
        println!("nothing to restore: {} does not exist", journal.display());
        return Ok(ExitCode::SUCCESS);
    }
    let report = replay_journal(&HostFs::new(&args.root), &journal)?;
    if report.is_empty() {
        println!(
            "nothing to restore: {} was empty (removed)",
            journal.display()
        );
    } else {
        print!("{report}");
        println!("removed {}", journal.display());
    }
    Ok(ExitCode::SUCCESS)
}
