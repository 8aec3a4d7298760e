//! Creating and removing a named network namespace: a bind mount of a new
//! namespace on `/run/netns/NAME`, where `ip -n NAME`, `ip netns exec`
//! and `setns` find it. Made here rather than by `ip netns add`, which
//! also turns `/run/netns` into a shared self-bind mount that would stay
//! after the run; removal detaches the mount and unlinks the file, as
//! `ip netns delete` does, without needing `ip`, so `irqlab restore` works
//! where it is gone. The kernel frees the namespace, and with it its veth
//! ends, nftables tables and qdiscs, once no process or socket holds it.
//! Besides guard/mount.rs, the one place irqlab mounts anything.

use anyhow::{anyhow, bail, Result};
use nix::errno::Errno;
use nix::mount::{umount2, MntFlags, MsFlags};
use nix::sched::CloneFlags;
use std::path::PathBuf;

/// Where `ip netns` keeps named namespaces.
pub const NETNS_DIR: &str = "/run/netns";

/// `/run/netns/NAME`.
pub fn netns_path(name: &str) -> PathBuf {
    PathBuf::from(NETNS_DIR).join(name)
}

/// A namespace name irqlab may create and remove: a plain file name.
pub(super) fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && name != "."
        && name != "..";
    if !ok {
        bail!("network namespace name {name:?}: expected letters, digits, '-', '_' or '.'");
    }
    Ok(())
}

/// Create the network namespace `name` (journal it first: a failure after
/// the file exists leaves it to [`remove_netns`]). Refused when it exists.
pub fn create_netns(name: &str) -> Result<()> {
    check_name(name)?;
    std::fs::create_dir_all(NETNS_DIR).map_err(|e| anyhow!("creating {NETNS_DIR}: {e}"))?;
    let path = netns_path(name);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| anyhow!("creating {}: {e}", path.display()))?;
    // A thread of its own enters the new namespace (this process stays in
    // its own) and pins it with the bind mount before it exits.
    let made = std::thread::scope(|s| {
        s.spawn(|| -> Result<()> {
            nix::sched::unshare(CloneFlags::CLONE_NEWNET)
                .map_err(|e| anyhow!("unshare(CLONE_NEWNET): {e}"))?;
            nix::mount::mount(
                Some(irqlab_core::paths::THREAD_NETNS),
                &path,
                None::<&str>,
                MsFlags::MS_BIND,
                None::<&str>,
            )
            .map_err(|e| anyhow!("bind-mounting the new namespace on {}: {e}", path.display()))
        })
        .join()
        .unwrap_or_else(|_| bail!("the thread creating network namespace {name} panicked"))
    });
    if let Err(e) = made {
        let _ = std::fs::remove_file(&path);
        return Err(e.context(format!("creating network namespace {name}")));
    }
    Ok(())
}

/// Remove the namespace `name`; `Some(why)` when it was gone already.
pub fn remove_netns(name: &str) -> Result<Option<String>> {
    check_name(name)?;
    let path = netns_path(name);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Some(format!("{} does not exist any more", path.display())));
    }
    match umount2(&path, MntFlags::MNT_DETACH | MntFlags::UMOUNT_NOFOLLOW) {
        Ok(()) | Err(Errno::EINVAL | Errno::ENOENT) => {}
        Err(e) => return Err(anyhow!("unmounting {}: {e}", path.display())),
    }
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(anyhow!("removing {}: {e}", path.display())),
    }
    // An empty /run/netns holds nothing (`ip netns add` makes it again);
    // one holding other namespaces stays.
    let _ = std::fs::remove_dir(NETNS_DIR);
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_names_cannot_leave_run_netns() {
        for bad in ["", ".", "..", "a/b", "../etc", "a b", "x\n"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        check_name("irqlab-123-0-rx").unwrap();
        assert_eq!(netns_path("n"), PathBuf::from("/run/netns/n"));
    }

    #[test]
    fn created_namespace_is_removed_and_leaves_no_mount() {
        if !nix::unistd::geteuid().is_root() || !crate::guard::host_changes_allowed("netns") {
            return;
        }
        let name = format!("irqlab-test-{}", std::process::id());
        create_netns(&name).unwrap();
        assert!(netns_path(&name).exists());
        assert!(
            create_netns(&name).is_err(),
            "an existing namespace is refused"
        );
        assert_eq!(remove_netns(&name).unwrap(), None);
        assert!(!netns_path(&name).exists());
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        assert!(!mounts.contains(&name), "{mounts}");
    }

    #[test]
    fn removing_a_missing_namespace_says_it_was_gone() {
        let why = remove_netns("irqlab-test-never-created").unwrap();
        assert!(why.unwrap().contains("does not exist"));
    }
}
