//! `irqlab restore`: undo the host changes of a run that could not undo
//! them itself (SIGKILL, power loss) by replaying the guard's journal.

use crate::cmd::args::RootArgs;
use crate::export::stderr::visible_lines;
use crate::export::stdout::stdout;
use crate::guard::{default_journal, replay_journal, variant_journal, Holder, RunLock, Stale};
use crate::host::RootError;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `irqlab restore`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples, after a run was killed (SIGKILL, power loss):\n  \
    irqlab restore                     # undo what /var/lib/irqlab/journal.jsonl holds\n  \
    irqlab restore --root ./fake-tree  # a fake tree's journal (tests)"
)]
pub struct Args {
    // Root the journaled paths are relative to (a fake tree in tests).
    #[command(flatten)]
    pub root: RootArgs,
    /// Journal to replay [default: /var/lib/irqlab/journal.jsonl for root /,
    /// else ROOT/.irqlab-journal.jsonl].
    #[arg(long, value_parser = super::args::path())]
    pub journal: Option<PathBuf>,
}

/// Replay the journal (bench's variant journal beside it first) newest
/// first; print what was restored (every line
/// starts with `irqlab: `). Refused while the run that wrote the journal
/// still runs (its lock is live). Exit 1 (with the journal kept) if any
/// change could not be undone. The report is written only after the
/// undo: a stdout that fails (full, closed) never stops the undo, and its
/// error is returned after it (exit 1 naming stdout; a closed pipe exit 0).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    existing_root(&args.root)?;
    let journal = args
        .journal
        .unwrap_or_else(|| default_journal(args.root.path()));
    // never under a live run; a killed run's stale lock is ours now
    let me = Holder::me("restore", None);
    let lock = RunLock::acquire(args.root.path(), me, &journal, Stale::Take)?;
    let mut report = String::new();
    if let Some(h) = &lock.took_over {
        report.push_str(&format!("irqlab: taking charge of the stale lock of {h}\n"));
    }
    let undone = undo(&args.root, &journal, &mut report);
    let written = write_stdout(&report);
    undone?;
    written?;
    Ok(ExitCode::SUCCESS)
}

/// Replay bench's variant journal beside `journal`, when a run killed
/// during a variant's trial left one (its changes were made last), then
/// `journal`, appending the lines that say what was done to `out`.
fn undo(root: &RootArgs, journal: &Path, out: &mut String) -> anyhow::Result<()> {
    let variant = variant_journal(journal);
    if variant.exists() {
        undo_one(root, &variant, out)?;
        if !journal.exists() {
            return Ok(());
        }
    }
    undo_one(root, journal, out)
}

/// Replay one journal (see [`undo`]).
fn undo_one(root: &RootArgs, journal: &Path, out: &mut String) -> anyhow::Result<()> {
    if !journal.exists() {
        out.push_str(&format!(
            "irqlab: nothing to restore: {} does not exist\n",
            journal.display()
        ));
        return Ok(());
    }
    let report = replay_journal(&root.host_fs(), journal)?;
    if report.is_empty() {
        out.push_str(&format!(
            "irqlab: nothing to restore: {} was empty (removed)\n",
            journal.display()
        ));
    } else {
        out.push_str(&report.prefixed("irqlab: "));
        out.push_str(&format!("irqlab: removed {}\n", journal.display()));
    }
    Ok(())
}

/// `text` written to stdout, its control characters but the newlines
/// shown as `\xNN` as on stderr (a path or name from the journal or the
/// tree cannot drive the terminal); an error names stdout
/// (`export::stdout`).
fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = stdout();
    out.write_all(visible_lines(text).as_bytes())?;
    out.flush()
}

/// An error naming `root` when it is not a directory there: a mistyped
/// `--root` holds no journal, but "nothing to restore" (exit 0) would
/// say that a run's changes were undone or never made.
fn existing_root(root: &RootArgs) -> anyhow::Result<()> {
    match root.host_fs().check_root() {
        Ok(()) => Ok(()),
        Err(RootError::NotADirectory(e)) => Err(e),
        Err(RootError::Stat(e)) => anyhow::bail!("--root {}: {e}", root.path().display()),
    }
}
