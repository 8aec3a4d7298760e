//! SystemGuard: every host change irqlab makes (sysctls, cpufreq governors,
//! IRQ and thread affinity) — and every temporary file, child process
//! group and network namespace a workload owns (through a [`Tracker`]) — is journaled before it is made and undone in
//! reverse order on drop, on error paths, from the panic hook and on
//! SIGINT/SIGTERM; `irqlab restore` replays the journal after a SIGKILL.
//!
//! Owns the journal protocol (read old value -> append + fsync the entry ->
//! make the change) and the undo. Files are read and written only through
//! [`HostFs`] with the guard's root, so tests run against fake trees. Nothing
//! else in irqlab may write to `/proc` or `/sys`. One guarded run at a time:
//! callers hold a [`RunLock`] (`guard/lock.rs`) for the whole run, or take
//! it with the guard ([`SystemGuard::locked`]: trace's tracefs mount). A
//! guard only ever rewrites or removes its own journal: the lock keeps
//! other processes out of it, and one process cannot open two guards on
//! the same journal.

mod affinity;
mod descend;
mod hooks;
pub mod journal;
mod lock;
mod mount;
mod netns;
mod pgroup;
mod restore_report;
mod state;
mod tmpfile;
mod tracker;

pub use descend::{disable_cgroups, TRACK_ENV};
pub use hooks::defer_signals;
pub use journal::Change;
pub use lock::{
    live_host_locks, lock_path, read_holder, state_dir, Holder, RunLock, Stale, SYSTEM_DIR,
};
pub use mount::{is_mountpoint, use_mount};
pub use netns::{create_netns, netns_path, remove_netns, NETNS_DIR};
pub use restore_report::RestoreReport;
pub use tracker::{Tracked, Tracker};

use crate::host::HostFs;
use anyhow::{bail, Result};
use irqlab_core::CpuList;
use state::State;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A step of the protocol, for an observer (tests, `guard-selftest --trace`).
#[derive(Debug)]
pub enum Event<'a> {
    /// The entry was appended to the journal and fsync'd.
    Journaled(&'a Change),
    /// The change was made.
    Applied(&'a Change),
    /// The change failed and the host is unchanged: the entry was dropped.
    Withdrawn(&'a Change),
    /// The change was undone.
    Restored(&'a Change),
    /// Nothing to undo any more (the thread exited).
    Gone(&'a Change),
    /// Undoing failed.
    RestoreFailed(&'a Change),
}

impl std::fmt::Display for Event<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, c) = match self {
            Event::Journaled(c) => ("journaled", c),
            Event::Applied(c) => ("applied", c),
            Event::Withdrawn(c) => ("withdrawn", c),
            Event::Restored(c) => ("restored", c),
            Event::Gone(c) => ("gone", c),
            Event::RestoreFailed(c) => ("restore failed", c),
        };
        write!(f, "{what} {}", serde_json::to_string(c).unwrap_or_default())
    }
}

/// Receives every [`Event`] in order.
pub type Observer = Box<dyn FnMut(&Event<'_>) + Send>;

/// Default journal: `journal.jsonl` in [`state_dir`] for the live root
/// `/` (`/var/lib/irqlab` for root, `/tmp/irqlab-UID` for other users),
/// `<root>/.irqlab-journal.jsonl` for any other root.
pub fn default_journal(root: &Path) -> PathBuf {
    if root == Path::new("/") {
        state_dir().join(irqlab_core::paths::JOURNAL)
    } else {
        root.join(irqlab_core::paths::TREE_JOURNAL)
    }
}

/// The journal of bench's per-variant preparations beside `journal`
/// (`journal.jsonl.variant`, made and emptied around each trial of a
/// variant with flags of its own): a run killed during such a trial
/// leaves it behind, and `irqlab restore` of `journal` replays it first.
pub fn variant_journal(journal: &Path) -> PathBuf {
    let mut name = journal
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(VARIANT_SUFFIX);
    journal.with_file_name(name)
}

/// What [`variant_journal`] appends to the journal's name.
pub const VARIANT_SUFFIX: &str = ".variant";

/// The `irqlab restore` command line that replays `journal` under `root`,
/// as a user types it: `--root` and `--journal` only where they differ
/// from restore's defaults (paths quoted for a shell when needed).
pub fn restore_command(root: &Path, journal: &Path) -> String {
    let mut cmd = String::from("irqlab restore");
    if root != Path::new("/") {
        cmd.push_str(&format!(" --root {}", shell_word(root)));
    }
    if journal != default_journal(root) {
        cmd.push_str(&format!(" --journal {}", shell_word(journal)));
    }
    cmd
}

/// `p` as one shell word.
pub fn shell_word(p: &Path) -> String {
    let s = p.to_string_lossy();
    shlex::try_quote(&s).map_or_else(|_| s.to_string(), |q| q.into_owned())
}

/// Refuse, before anything starts, a run on the live host that asks for
/// host changes needing root (`flags`, as the user typed them) while not
/// running as root.
pub fn require_root_for(root: &Path, flags: &[&str]) -> Result<()> {
    if root != Path::new("/") || flags.is_empty() || nix::unistd::geteuid().is_root() {
        return Ok(());
    }
    bail!(
        "{} change(s) the host and needs root; run as root, or without {}",
        flags.join(", "),
        if flags.len() == 1 { "it" } else { "them" }
    )
}

/// Journals and undoes host changes. See the module docs.
pub struct SystemGuard {
    shared: Arc<Mutex<State>>,
    fs: HostFs,
    /// The run lock taken by [`SystemGuard::locked`]; released (after the
    /// restore in Drop) when the guard goes.
    lock: Option<RunLock>,
}

impl SystemGuard {
    /// A guard writing through a HostFs rooted like `fs`, journaling to
    /// `journal`. Fails if `journal` still holds unrestored entries.
    pub fn new(fs: &HostFs, journal: PathBuf) -> Result<Self> {
        let mut pending = journal::JournalContents::default();
        for j in [variant_journal(&journal), journal.clone()] {
            pending = journal::load(&j)?;
            if !pending.entries.is_empty() {
                bail!(
                    "journal {} holds {} unrestored host change(s) from an earlier run; \
                     if no other irqlab is running, undo them with `{}`",
                    j.display(),
                    pending.entries.len(),
                    restore_command(fs.root(), &journal)
                );
            }
        }
        if let Some(tail) = &pending.torn_tail {
            // an append would join its entry to the torn line
            bail!("{}", torn_only(&journal, tail));
        }
        let shared = Arc::new(Mutex::new(State::new(fs.root(), journal)));
        hooks::register(&shared)?;
        Ok(SystemGuard {
            shared,
            fs: HostFs::new(fs.root()),
            lock: None,
        })
    }

    /// Take the run lock of `fs`'s root for `command` (refused, naming the
    /// holder, while another run holds it; a killed run's lock only when
    /// its journal is empty), then a guard on the default journal. The
    /// lock is released once the guard has restored everything.
    pub fn locked(fs: &HostFs, command: &str) -> Result<Self> {
        let journal = default_journal(fs.root());
        let me = Holder::me(command, None);
        let lock = RunLock::acquire(fs.root(), me, &journal, Stale::TakeIfJournalEmpty)?;
        let mut guard = SystemGuard::new(fs, journal)?;
        guard.lock = Some(lock);
        Ok(guard)
    }

    /// Read-only access to the guard's root (for finding what to change).
    pub fn fs(&self) -> &HostFs {
        &self.fs
    }

    /// The journal file.
    pub fn journal_path(&self) -> PathBuf {
        hooks::lock(&self.shared).journal.path().to_path_buf()
    }

    /// Changes made and not yet undone.
    pub fn pending(&self) -> usize {
        hooks::lock(&self.shared).entries.len()
    }

    /// Report every protocol step to `observer`.
    pub fn set_observer(&mut self, observer: Observer) {
        hooks::lock(&self.shared).observer = Some(observer);
    }

    /// Write `value` to the root-relative file `rel`, journaling its old
    /// value first. Returns false (and journals nothing) if it already holds
    /// `value` (compared by whitespace-separated fields).
    pub fn set_file(&mut self, rel: &str, value: &str) -> Result<bool> {
        hooks::lock(&self.shared).set_file(rel, value)
    }

    /// Set thread `tid`'s CPU affinity, journaling the old mask first.
    /// Returns false if it already is `cpus`.
    pub fn set_thread_affinity(&mut self, tid: i32, cpus: &CpuList) -> Result<bool> {
        hooks::lock(&self.shared).set_affinity(tid, cpus)
    }

    /// Mount `fstype` on the root-relative directory `rel` (undone by
    /// unmounting). Returns false, journaling nothing, if `rel` is a mount
    /// point already.
    pub fn mount(&mut self, rel: &str, fstype: &str) -> Result<bool> {
        hooks::lock(&self.shared).mount(rel, fstype)
    }

    /// Undo every change in reverse order, keep going after failures, and
    /// delete the journal if all succeeded. Errors list every failure.
    /// Later calls (and Drop) have nothing left to do.
    pub fn restore(&mut self) -> Result<RestoreReport> {
        self.restore_report().into_result()
    }

    /// [`SystemGuard::restore`], its report whether or not every undo
    /// succeeded (for a caller that says so in an error of its own).
    pub fn restore_report(&mut self) -> RestoreReport {
        hooks::lock(&self.shared).restore()
    }
}

impl Drop for SystemGuard {
    fn drop(&mut self) {
        let report = hooks::lock(&self.shared).restore();
        if !report.is_ok() {
            eprint!(
                "irqlab: restoring host changes\n{}",
                report.prefixed("irqlab: ")
            );
        }
    }
}

/// Why a journal whose only line is torn (no newline, not an entry) is
/// neither replayed nor appended to: it may be a run's first entry cut
/// short (a change never made, as entries are written first) or another
/// file altogether. It is kept for the user to look at.
fn torn_only(journal: &Path, tail: &str) -> String {
    let shown: String = tail.chars().take(60).collect();
    format!(
        "{}: no complete journal entry, only a line without its newline ({shown:?}): \
         kept as it is. If it is a run's first entry cut short, that change was \
         never made: remove the file; if it is not a journal, give another --journal",
        journal.display()
    )
}

/// Undo the journal at `journal` (left by a killed run) under `fs`'s root.
/// A journal with no complete entry and a torn line is refused, kept.
pub fn replay_journal(fs: &HostFs, journal: &Path) -> Result<RestoreReport> {
    let loaded = journal::load(journal)?;
    if let (true, Some(tail)) = (loaded.entries.is_empty(), &loaded.torn_tail) {
        bail!("{}", torn_only(journal, tail));
    }
    let mut state = State::new(fs.root(), journal.to_path_buf());
    state.entries = loaded.entries;
    let mut report = state.restore();
    if let Some(tail) = loaded.torn_tail {
        report
            .notes
            .push(format!("ignored a torn last journal line {tail:?}"));
    }
    report.into_result()
}

/// Tests only: whether a unit test may change the live host (the opt-in
/// `IRQLAB_TEST_HOST_CHANGES=1` of tests/common/mod.rs, set by .ci/run);
/// says so on stderr (not captured by libtest) when it skips.
#[cfg(test)]
pub(crate) fn host_changes_allowed(test: &str) -> bool {
    use std::io::Write as _;
    if std::env::var_os("IRQLAB_TEST_HOST_CHANGES").is_some_and(|v| v == "1") {
        return true;
    }
    let _ = writeln!(
        std::io::stderr(),
        "{test}: SKIPPED: changes the host (set IRQLAB_TEST_HOST_CHANGES=1, as .ci/run does)"
    );
    false
}

#[cfg(test)]
mod tests;
