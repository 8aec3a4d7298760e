//! Mounting a pseudo filesystem (tracefs for `irqlab trace`) as a guarded
//! host change: [`State::mount`] journals `Change::Mount` before mounting,
//! and the undo unmounts it. Only called when the target is not a mount
//! point already, so irqlab never unmounts what it did not mount.
//!
//! [`use_mount`] is how a run without a guard of its own (trace, top
//! --trace, record --trace) gets a mount: under the run lock when it has
//! to mount, and never on a mount another irqlab run made (that run
//! unmounts it when it ends; using it would leave this run without its
//! filesystem). docs/safety.md explains the choice: one exclusive lock, no
//! shared mount count.
//!
//! Owns the `mount(2)`/`umount2(2)` calls (nix); nothing else in irqlab
//! mounts anything but guard/netns.rs (a network namespace's bind mount).

use super::journal::{self, Change};
use super::state::State;
use super::{default_journal, lock_path, read_holder, Event, SystemGuard};
use crate::host::HostFs;
use anyhow::{anyhow, bail, Context, Result};
use nix::errno::Errno;
use nix::mount::{umount2, MntFlags, MsFlags};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Is `path` a mount point (its device differs from its parent's)?
pub fn is_mountpoint(path: &Path) -> std::io::Result<bool> {
    let me = std::fs::metadata(path)?;
    match path.parent() {
        Some(parent) => Ok(std::fs::metadata(parent)?.dev() != me.dev()),
        None => Ok(true),
    }
}

/// Mount `fstype` (source `nodev`) on `path`.
fn mount(path: &Path, fstype: &str) -> Result<(), Errno> {
    nix::mount::mount(
        Some("nodev"),
        path,
        Some(fstype),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
}

/// Unmount `path`; `Ok(false)` when it is not mounted any more. A busy
/// mount (a shell sitting in it) is detached lazily. A symlink is never
/// followed (a journal entry must not unmount what the link points to).
pub(super) fn unmount(path: &Path) -> Result<bool> {
    match umount2(path, MntFlags::UMOUNT_NOFOLLOW) {
        Ok(()) => Ok(true),
        Err(Errno::EINVAL | Errno::ENOENT) => Ok(false),
        Err(Errno::EBUSY) => umount2(path, MntFlags::MNT_DETACH | MntFlags::UMOUNT_NOFOLLOW)
            .map(|()| true)
            .map_err(|e| anyhow!("unmounting {} (busy, then lazily): {e}", path.display())),
        Err(e) => Err(anyhow!("unmounting {}: {e}", path.display())),
    }
}

/// Make sure `fstype` is mounted on the root-relative directory `rel` for
/// a run of `command`: nothing to do when something not irqlab's is
/// mounted there; otherwise take the run lock and mount it through a
/// guard of its own, returned (drop it, or call its `restore`, to unmount
/// and release the lock). Refused, with who to wait for, when the mount is
/// another irqlab run's, and when another run holds the lock.
pub fn use_mount(
    fs: &HostFs,
    rel: &str,
    fstype: &str,
    command: &str,
) -> Result<Option<SystemGuard>> {
    let path = fs.path(rel);
    let not_mountable = || format!("{fstype} is not mountable on {}", path.display());
    let mounted = || {
        is_mountpoint(&path)
            .map_err(|e| anyhow!("{}: {e}", path.display()))
            .with_context(not_mountable)
    };
    // A run that unmounts while we look: look again (it unmounts, then
    // empties its journal, then releases the lock).
    for _ in 0..3 {
        if mounted()? {
            check_not_another_runs(fs, rel, fstype)?;
            if mounted()? {
                return Ok(None);
            }
            continue;
        }
        let mut guard = SystemGuard::locked(fs, command)?;
        if guard.mount(rel, fstype).with_context(not_mountable)? {
            return Ok(Some(guard));
        }
        // mounted meanwhile by something that is not irqlab (it holds no lock)
        return Ok(None);
    }
    bail!(
        "{fstype} on {} was mounted and unmounted again three times while irqlab \
         looked; another program is mounting it: try again",
        path.display()
    )
}

/// Refuse when the journal of `fs`'s root holds a mount of `rel`: a live
/// run unmounts it when it ends; a killed run's mount waits for `irqlab
/// restore`.
fn check_not_another_runs(fs: &HostFs, rel: &str, fstype: &str) -> Result<()> {
    let journal = default_journal(fs.root());
    let entries = journal::load(&journal)
        .map(|j| j.entries)
        .unwrap_or_default();
    let ours = entries
        .iter()
        .any(|c| matches!(c, Change::Mount { path, .. } if path == rel));
    if !ours {
        return Ok(());
    }
    let path = fs.path(rel).display().to_string();
    let lock = lock_path(fs.root());
    match read_holder(&lock)? {
        Some(h) if h.is_live() => bail!(
            "{fstype} on {path} was mounted by another irqlab run, {h}, which unmounts it \
             when it ends: wait for it to end, or mount {fstype} yourself first \
             (`mount -t {fstype} nodev {path}`) so that it stays mounted for both runs"
        ),
        Some(h) => bail!(
            "{fstype} on {path} was left mounted by {h}, which was killed; \
             `irqlab restore` unmounts it (journal {})",
            journal.display()
        ),
        None => bail!(
            "{fstype} on {path} is mounted by an irqlab run whose journal {} still holds \
             the mount; if no irqlab is running, `irqlab restore` unmounts it",
            journal.display()
        ),
    }
}

impl State {
    /// Mount `fstype` on the root-relative directory `rel` unless something
    /// is mounted there already (then `Ok(false)`, nothing journaled).
    pub(super) fn mount(&mut self, rel: &str, fstype: &str) -> Result<bool> {
        self.check_open()?;
        let path = self.fs.path(rel);
        if is_mountpoint(&path).map_err(|e| anyhow!("{}: {e}", path.display()))? {
            return Ok(false);
        }
        let change = Change::Mount {
            path: rel.to_string(),
            fstype: fstype.to_string(),
            boot_id: super::state::live_boot(),
        };
        self.record(&change)?;
        match mount(&path, fstype) {
            Ok(()) => {
                self.emit(Event::Applied(&change));
                Ok(true)
            }
            Err(e) => {
                self.withdraw(&change)?;
                Err(anyhow!(
                    "mounting {fstype} on {}: {e}{}",
                    path.display(),
                    if e == Errno::EPERM {
                        " (needs root)"
                    } else {
                        ""
                    }
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::{default_journal, SystemGuard};
    use crate::host::HostFs;

    fn is_root() -> bool {
        nix::unistd::geteuid().is_root()
    }

    #[test]
    fn a_mount_point_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        // `/` is a mount point; a fresh temp dir normally is not
        assert!(is_mountpoint(Path::new("/")).unwrap());
        assert!(!is_mountpoint(dir.path()).unwrap_or(true) || is_root());
    }

    #[test]
    fn mount_is_journaled_and_undone_or_skip() {
        if !crate::guard::host_changes_allowed(
            "guard::mount: mount_is_journaled_and_undone_or_skip",
        ) {
            return;
        }
        if !is_root() {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "guard::mount: mount_is_journaled_and_undone_or_skip: SKIPPED: not root"
            );
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let rel = "sys/kernel/tracing";
        std::fs::create_dir_all(dir.path().join(rel)).unwrap();
        let journal = default_journal(dir.path());
        let mut g = SystemGuard::new(&HostFs::new(dir.path()), journal.clone()).unwrap();
        assert!(g.mount(rel, "tracefs").unwrap());
        let target = dir.path().join(rel);
        assert!(is_mountpoint(&target).unwrap());
        assert!(target.join("events").is_dir());
        let text = std::fs::read_to_string(&journal).unwrap();
        assert!(text.contains(r#""kind":"mount""#), "{text}");
        // a second mount request sees the mount point and does nothing
        assert!(!g.mount(rel, "tracefs").unwrap());
        let report = g.restore().unwrap();
        assert_eq!(report.restored.len(), 1);
        assert!(!is_mountpoint(&target).unwrap());
        assert!(!journal.exists());
    }
}
