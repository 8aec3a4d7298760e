//! Mounting a pseudo filesystem (tracefs for `irqlab trace`) as a guarded
//! host change: [`State::mount`] journals `Change::Mount` before mounting,
//! and the undo unmounts it. Only called when the target is not a mount
//! point already, so irqlab never unmounts what it did not mount.
//!
//! Owns the `mount(2)`/`umount2(2)` calls (nix); nothing else in irqlab
//! mounts anything.

use super::journal::Change;
use super::state::State;
use super::Event;
use anyhow::{anyhow, Result};
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
/// mount (a shell sitting in it) is detached lazily.
pub(super) fn unmount(path: &Path) -> Result<bool> {
    match umount2(path, MntFlags::empty()) {
        Ok(()) => Ok(true),
        Err(Errno::EINVAL | Errno::ENOENT) => Ok(false),
        Err(Errno::EBUSY) => umount2(path, MntFlags::MNT_DETACH)
            .map(|()| true)
            .map_err(|e| anyhow!("unmounting {} (busy, then lazily): {e}", path.display())),
        Err(e) => Err(anyhow!("unmounting {}: {e}", path.display())),
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
        if !is_root() {
            eprintln!("guard::mount: mount_is_journaled_and_undone_or_skip: SKIPPED: not root");
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
