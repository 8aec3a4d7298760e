//! SystemGuard: every host change irqlab makes (sysctls, cpufreq governors,
//! IRQ and thread affinity) is journaled before it is made and undone in
//! reverse order on drop, on error paths, from the panic hook and on
//! SIGINT/SIGTERM; `irqlab restore` replays the journal after a SIGKILL.
//!
//! Owns the journal protocol (read old value -> append + fsync the entry ->
//! make the change) and the undo. Files are read and written only through
//! [`HostFs`] with the guard's root, so tests run against fake trees. Nothing
//! else in irqlab may write to `/proc` or `/sys`.

mod affinity;
mod hooks;
mod journal;
mod report;

pub use journal::Change;
pub use report::RestoreReport;

use crate::host::HostFs;
use anyhow::{anyhow, bail, Context, Result};
use irqlab_core::CpuList;
use journal::Journal;
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

/// Default journal: `/var/lib/irqlab/journal.jsonl` for the live root `/`,
/// `<root>/.irqlab-journal.jsonl` for any other root.
pub fn default_journal(root: &Path) -> PathBuf {
    if root == Path::new("/") {
        PathBuf::from("/var/lib/irqlab/journal.jsonl")
    } else {
        root.join(".irqlab-journal.jsonl")
    }
}

/// The journaled state shared with the panic hook and the signal thread.
pub(crate) struct State {
    fs: HostFs,
    journal: Journal,
    entries: Vec<Change>,
    /// Set when a signal restored everything: no further changes allowed.
    closed: Option<&'static str>,
    observer: Option<Observer>,
}

/// Journals and undoes host changes. See the module docs.
pub struct SystemGuard {
    shared: Arc<Mutex<State>>,
    fs: HostFs,
}

impl SystemGuard {
    /// A guard writing through a HostFs rooted like `fs`, journaling to
    /// `journal`. Fails if `journal` still holds unrestored entries.
    pub fn new(fs: &HostFs, journal: PathBuf) -> Result<Self> {
        let pending = journal::load(&journal)?;
        if !pending.entries.is_empty() {
            bail!(
                "journal {} holds {} unrestored host change(s) from an earlier run; \
                 if no other irqlab is running, undo them with `irqlab restore --root {} --journal {}`",
                journal.display(),
                pending.entries.len(),
                fs.root().display(),
                journal.display()
            );
        }
        let shared = Arc::new(Mutex::new(State::new(fs.root(), journal)));
        hooks::register(&shared)?;
        Ok(SystemGuard {
            shared,
            fs: HostFs::new(fs.root()),
        })
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

    /// Undo every change in reverse order, keep going after failures, and
    /// delete the journal if all succeeded. Errors list every failure.
    /// Later calls (and Drop) have nothing left to do.
    pub fn restore(&mut self) -> Result<RestoreReport> {
        hooks::lock(&self.shared).restore().into_result()
    }
}

impl Drop for SystemGuard {
    fn drop(&mut self) {
        let report = hooks::lock(&self.shared).restore();
        if !report.is_ok() {
            eprint!("irqlab: restoring host changes\n{report}");
        }
    }
}

/// Undo the journal at `journal` (left by a killed run) under `fs`'s root.
pub fn replay_journal(fs: &HostFs, journal: &Path) -> Result<RestoreReport> {
    let loaded = journal::load(journal)?;
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

impl State {
    fn new(root: &Path, journal: PathBuf) -> Self {
        State {
            fs: HostFs::new(root),
            journal: Journal::new(journal),
            entries: Vec::new(),
            closed: None,
            observer: None,
        }
    }

    fn emit(&mut self, event: Event<'_>) {
        if let Some(o) = self.observer.as_mut() {
            o(&event);
        }
    }

    fn check_open(&self) -> Result<()> {
        match self.closed {
            Some(why) => bail!("host changes were already restored after {why}"),
            None => Ok(()),
        }
    }

    fn set_file(&mut self, rel: &str, value: &str) -> Result<bool> {
        self.check_open()?;
        let old = read_value(&self.fs, rel)?;
        if same_value(&old, value) {
            return Ok(false);
        }
        let change = Change::File {
            path: rel.to_string(),
            old: old.clone(),
            new: value.to_string(),
        };
        self.record(&change)?;
        match self.fs.write(rel, value) {
            Ok(()) => {
                self.emit(Event::Applied(&change));
                Ok(true)
            }
            Err(e) => {
                let unchanged = read_value(&self.fs, rel).is_ok_and(|v| same_value(&v, &old));
                if unchanged {
                    self.withdraw(&change)?;
                }
                Err(e)
            }
        }
    }

    fn set_affinity(&mut self, tid: i32, cpus: &CpuList) -> Result<bool> {
        self.check_open()?;
        if tid <= 0 {
            bail!("thread id {tid} is not a real thread id");
        }
        let old = affinity::get(tid)
            .map_err(|e| anyhow!("reading the CPU affinity of thread {tid}: {e}"))?;
        if old == *cpus {
            return Ok(false);
        }
        let change = Change::Affinity {
            pid: tid,
            old: old.to_string(),
            new: cpus.to_string(),
        };
        self.record(&change)?;
        match affinity::set(tid, cpus) {
            Ok(()) => {
                self.emit(Event::Applied(&change));
                Ok(true)
            }
            Err(e) => {
                if affinity::get(tid).is_ok_and(|now| now == old) {
                    self.withdraw(&change)?;
                }
                Err(anyhow!(
                    "setting the CPU affinity of thread {tid} to {cpus}: {e}"
                ))
            }
        }
    }

    /// Journal first, then remember.
    fn record(&mut self, change: &Change) -> Result<()> {
        self.journal.append(change)?;
        self.entries.push(change.clone());
        self.emit(Event::Journaled(change));
        Ok(())
    }

    /// Forget the last entry (its change failed and the host is unchanged).
    fn withdraw(&mut self, change: &Change) -> Result<()> {
        self.entries.pop();
        if self.entries.is_empty() {
            self.journal.remove()?;
        } else {
            self.journal.rewrite(&self.entries)?;
        }
        self.emit(Event::Withdrawn(change));
        Ok(())
    }

    /// Undo all entries newest first; exactly once (the entries are taken).
    fn restore(&mut self) -> RestoreReport {
        let entries = std::mem::take(&mut self.entries);
        let mut report = RestoreReport {
            journal: self.journal.path().to_path_buf(),
            ..RestoreReport::default()
        };
        let mut keep = Vec::new();
        for change in entries.into_iter().rev() {
            match undo(&self.fs, &change) {
                Ok(None) => {
                    self.emit(Event::Restored(&change));
                    report.restored.push(change);
                }
                Ok(Some(why)) => {
                    self.emit(Event::Gone(&change));
                    report.gone.push((change, why));
                }
                Err(e) => {
                    self.emit(Event::RestoreFailed(&change));
                    keep.push(change.clone());
                    report.failed.push((change, format!("{e:#}")));
                }
            }
        }
        keep.reverse();
        let saved = if keep.is_empty() {
            self.journal.remove()
        } else {
            report.journal_kept = true;
            self.journal.rewrite(&keep)
        };
        if let Err(e) = saved {
            report.journal_kept = true;
            report.notes.push(format!("{e:#}"));
        }
        report
    }
}

/// Undo one change; `Some(why)` when there was nothing left to undo.
fn undo(fs: &HostFs, change: &Change) -> Result<Option<String>> {
    match change {
        Change::File { path, old, .. } => fs.write(path, old).map(|()| None),
        Change::Affinity { pid, old, .. } => {
            let cpus = CpuList::parse_list(old.as_bytes(), "journal")
                .map_err(|e| anyhow!("journal CPU list {old:?}: {}", e.kind))?;
            match affinity::set(*pid, &cpus) {
                Ok(()) => Ok(None),
                Err(nix::errno::Errno::ESRCH) => Ok(Some(format!("thread {pid} has exited"))),
                Err(e) => Err(anyhow!(
                    "setting the CPU affinity of thread {pid} to {old}: {e}"
                )),
            }
        }
    }
}

/// The current value of `rel`, trimmed; an unreadable file cannot be
/// restored, so it must not be changed.
fn read_value(fs: &HostFs, rel: &str) -> Result<String> {
    let mut buf = Vec::new();
    let (n, _) = fs.read_once(rel, &mut buf).with_context(|| {
        format!(
            "reading the current value of {} (needed to restore it)",
            fs.path(rel).display()
        )
    })?;
    let text = String::from_utf8_lossy(buf.get(..n).unwrap_or_default());
    Ok(text.trim().to_string())
}

/// Values compare by their whitespace-separated fields (`4\t4\t1\t7` is
/// `4 4 1 7`).
fn same_value(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

#[cfg(test)]
mod tests;
