//! [`RestoreReport`]: what an undo did, entry by entry, for the user.
//!
//! Pure data and its text; it must not perform any restore itself.

use super::journal::Change;
use std::fmt;
use std::path::PathBuf;

/// The outcome of undoing a journal (newest change first).
#[derive(Debug, Default)]
pub struct RestoreReport {
    /// Changes undone.
    pub restored: Vec<Change>,
    /// Changes that need no undo any more (the thread exited), with why.
    pub gone: Vec<(Change, String)>,
    /// Changes that could not be undone, with the error.
    pub failed: Vec<(Change, String)>,
    /// Other remarks (torn journal line, journal removal problems).
    pub notes: Vec<String>,
    /// The journal, still on disk when something failed.
    pub journal: PathBuf,
    /// The root its paths are relative to (for the `irqlab restore` hint).
    pub root: PathBuf,
    /// True if the journal was kept (holding the failed entries).
    pub journal_kept: bool,
}

impl RestoreReport {
    /// True if nothing was journaled, so nothing was done.
    pub fn is_empty(&self) -> bool {
        self.restored.is_empty() && self.gone.is_empty() && self.failed.is_empty()
    }

    /// True if every change was undone (or its thread is gone).
    pub fn is_ok(&self) -> bool {
        self.failed.is_empty()
    }

    /// `Ok(self)` if every change was undone, else an error whose message
    /// is the whole report.
    pub fn into_result(self) -> anyhow::Result<Self> {
        if self.is_ok() {
            Ok(self)
        } else {
            Err(anyhow::anyhow!("restore incomplete:\n{self}"))
        }
    }
}

impl RestoreReport {
    /// The report's lines, each starting with `prefix` (`irqlab: ` on
    /// stderr).
    pub fn prefixed(&self, prefix: &str) -> String {
        self.to_string()
            .lines()
            .map(|l| format!("{prefix}{l}\n"))
            .collect()
    }
}

impl fmt::Display for RestoreReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.restored {
            writeln!(f, "restored {c}")?;
        }
        for (c, why) in &self.gone {
            writeln!(f, "skipped {c}: {why}")?;
        }
        for (c, err) in &self.failed {
            writeln!(f, "FAILED {c}: {err}")?;
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        if self.journal_kept {
            writeln!(
                f,
                "journal kept at {}: fix the failures, then run `{}`",
                self.journal.display(),
                super::restore_command(&self.root, &self.journal)
            )?;
        }
        Ok(())
    }
}
