//! Removing a network namespace irqlab created (`ip netns add NAME`, a
//! bind mount of the namespace on `/run/netns/NAME`): detach the mount and
//! unlink the file, as `ip netns delete` does, without needing `ip`, so
//! `irqlab restore` works on a host where it is gone. The kernel frees the
//! namespace, and with it its veth ends, nftables tables and qdiscs, once
//! no process or socket holds it any more.

use anyhow::{anyhow, bail, Result};
use nix::errno::Errno;
use nix::mount::{umount2, MntFlags};
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
        Ok(()) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow!("removing {}: {e}", path.display())),
    }
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
    fn removing_a_missing_namespace_says_it_was_gone() {
        let why = remove_netns("irqlab-test-never-created").unwrap();
        assert!(why.unwrap().contains("does not exist"));
    }
}
