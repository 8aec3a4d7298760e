//! The guard's journaled state and the change/undo protocol: read the old
//! value, append + fsync the journal entry, make the change; undo newest
//! first. Shared (behind a mutex) by SystemGuard, the panic hook and the
//! signal thread; reads and writes files only through HostFs.

use super::journal::{Change, Journal};
use super::{affinity, Event, Observer, RestoreReport};
use crate::host::HostFs;
use anyhow::{anyhow, bail, Context, Result};
use irqlab_core::CpuList;
use std::path::{Path, PathBuf};

/// The journaled state shared with the panic hook and the signal thread.
pub(crate) struct State {
    pub(super) fs: HostFs,
    pub(super) journal: Journal,
    pub(super) entries: Vec<Change>,
    /// Set when a signal restored everything: no further changes allowed.
    pub(super) closed: Option<&'static str>,
    pub(super) observer: Option<Observer>,
    /// The token [`super::Tracker::child_env`] handed out last, taken by
    /// the next `process_group`.
    pub(super) pending_token: Option<String>,
}

impl State {
    pub(super) fn new(root: &Path, journal: PathBuf) -> Self {
        State {
            fs: HostFs::new(root),
            journal: Journal::new(journal),
            entries: Vec::new(),
            closed: None,
            observer: None,
            pending_token: None,
        }
    }

    pub(super) fn emit(&mut self, event: Event<'_>) {
        if let Some(o) = self.observer.as_mut() {
            o(&event);
        }
    }

    pub(super) fn check_open(&self) -> Result<()> {
        match self.closed {
            Some(why) => bail!("host changes were already restored after {why}"),
            None => Ok(()),
        }
    }

    pub(super) fn set_file(&mut self, rel: &str, value: &str) -> Result<bool> {
        self.check_open()?;
        let old = read_value(&self.fs, rel)?;
        if same_value(&old, value) {
            return Ok(false);
        }
        let change = Change::File {
            path: rel.to_string(),
            old: old.clone(),
            new: value.to_string(),
            boot_id: boot_of(&self.fs),
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

    pub(super) fn set_affinity(&mut self, tid: i32, cpus: &CpuList) -> Result<bool> {
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
            boot_id: live_boot(),
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
    pub(super) fn record(&mut self, change: &Change) -> Result<()> {
        self.journal.append(change)?;
        self.entries.push(change.clone());
        self.emit(Event::Journaled(change));
        Ok(())
    }

    /// Forget the last entry (its change failed and the host is unchanged).
    pub(super) fn withdraw(&mut self, change: &Change) -> Result<()> {
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
    pub(super) fn restore(&mut self) -> RestoreReport {
        let entries = std::mem::take(&mut self.entries);
        let mut report = RestoreReport {
            journal: self.journal.path().to_path_buf(),
            root: self.fs.root().to_path_buf(),
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

/// The boot id of `fs`'s kernel (a fake tree's own), when it has one.
fn boot_of(fs: &HostFs) -> Option<String> {
    fs.read_attr(irqlab_core::paths::BOOT_ID)
}

/// The boot id of the running kernel (threads and mounts are its own
/// whatever the root).
pub(super) fn live_boot() -> Option<String> {
    boot_of(&HostFs::new("/"))
}

/// Why a change made during boot `made` is not undone now (booted as
/// `now`): a reboot reset what it changed, and the thread ids, IRQ
/// numbers and mounts of this boot are not that boot's. `None` when the
/// boots are the same or either is unknown.
fn another_boot(made: Option<&String>, now: Option<String>) -> Option<String> {
    let (made, now) = (made?, now?);
    (*made != now).then(|| {
        format!("made during another boot ({made}; this one is {now}), which a reboot reset: left as it is")
    })
}

/// Undo one change; `Some(why)` when there was nothing left to undo.
fn undo(fs: &HostFs, change: &Change) -> Result<Option<String>> {
    let boot = match change {
        Change::File { boot_id, .. } => another_boot(boot_id.as_ref(), boot_of(fs)),
        Change::Affinity { boot_id, .. } | Change::Mount { boot_id, .. } => {
            another_boot(boot_id.as_ref(), live_boot())
        }
        _ => None,
    };
    if boot.is_some() {
        return Ok(boot);
    }
    match change {
        Change::File { path, old, .. } => fs.write(path, old).map(|()| None),
        Change::Mount { path, .. } => super::mount::unmount(&fs.path(path))
            .map(|done| (!done).then(|| format!("{path} was not mounted any more"))),
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
        Change::TempFile { path } => super::tmpfile::remove(path),
        Change::NetNamespace { name } => super::netns::remove_netns(name),
        Change::ProcessGroup {
            pgid,
            boot_id,
            start_time,
            cgroup,
            token,
        } => {
            let group = super::pgroup::stop(*pgid, boot_id, *start_time)?;
            if group
                .as_deref()
                .is_some_and(|why| why.contains("another boot"))
            {
                return Ok(group);
            }
            let rest = super::descend::stop_rest(
                cgroup.as_deref(),
                token.as_deref(),
                super::pgroup::GRACE,
            )?;
            Ok(group.filter(|_| rest == 0))
        }
    }
}

/// The current content of `rel`, byte for byte (its newline too): what
/// an undo writes back. An unreadable file, or one that is not UTF-8 text
/// (the journal could not hold it exactly), cannot be restored, so it
/// must not be changed.
fn read_value(fs: &HostFs, rel: &str) -> Result<String> {
    let mut buf = Vec::new();
    let (n, _) = fs.read_once(rel, &mut buf).with_context(|| {
        format!(
            "reading the current value of {} (needed to restore it)",
            fs.path(rel).display()
        )
    })?;
    buf.truncate(n);
    String::from_utf8(buf).map_err(|e| {
        anyhow!(
            "{} is not UTF-8 text ({}): its value could not be restored byte for byte",
            fs.path(rel).display(),
            e.utf8_error()
        )
    })
}

/// Values compare by their whitespace-separated fields (`4\t4\t1\t7` is
/// `4 4 1 7`).
fn same_value(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}
