//! Child process groups: how the guard recognises one (pgid, boot id and
//! the leader's start time, read through HostFs on the live `/`) and how
//! it stops one — SIGTERM to the group, a grace period, SIGKILL, and
//! reaping the members that are this process's children (irqlab is their
//! subreaper). Used on every exit path (drop, error, panic, SIGINT/SIGTERM)
//! and by `irqlab restore` after a SIGKILL.
//!
//! A group whose boot or leader start time differs is not ours any more
//! and is left alone.

use crate::host::HostFs;
use anyhow::{bail, Result};
use irqlab_core::paths;
use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::time::{Duration, Instant};

/// Time between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(1);
/// How long to wait for the group to vanish after SIGKILL.
const AFTER_KILL: Duration = Duration::from_secs(3);
const POLL: Duration = Duration::from_millis(10);

/// Boot id and start time of process `pid` on the live system.
pub(super) fn identity(pid: i32) -> Result<(String, u64)> {
    let fs = HostFs::new("/");
    let boot = crate::env::boot_id(&fs);
    let Some(start) = start_time(&fs, pid) else {
        bail!(
            "process {pid} has no readable {}",
            paths::absolute(&paths::pid_file(pid, "stat"))
        );
    };
    Ok((boot, start))
}

/// Field 22 of `/proc/PID/stat` (clock ticks after boot).
fn start_time(fs: &HostFs, pid: i32) -> Option<u64> {
    let stat = fs.read_attr(&paths::pid_file(pid, "stat"))?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// True while a running (not zombie) process is in group `pgid`. Zombies
/// left to another parent (after irqlab was killed) cannot be reaped here
/// and run nothing.
pub fn alive(pgid: i32) -> bool {
    if killpg(Pid::from_raw(pgid), None) == Err(Errno::ESRCH) {
        return false;
    }
    let fs = HostFs::new("/");
    let pids = fs.list_dir(paths::PROC);
    let numeric = pids
        .iter()
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()));
    numeric
        .filter_map(|p| fs.read_attr(&paths::pid_file(p, "stat")))
        .any(|stat| {
            let mut f = stat
                .rsplit_once(')')
                .map(|(_, r)| r)
                .unwrap_or_default()
                .split_whitespace();
            let state = f.next().unwrap_or("Z");
            let pgrp = f.nth(1).and_then(|g| g.parse::<i32>().ok());
            pgrp == Some(pgid) && !matches!(state, "Z" | "X")
        })
}

/// Reap every exited member of `pgid` that is our child.
fn reap(pgid: i32) {
    while let Ok(ws) = waitpid(Pid::from_raw(-pgid), Some(WaitPidFlag::WNOHANG)) {
        if ws == WaitStatus::StillAlive {
            break;
        }
    }
}

/// Wait until the group is gone or `until`; true when gone.
fn wait_gone(pgid: i32, until: Instant) -> bool {
    loop {
        reap(pgid);
        if !alive(pgid) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// Stop group `pgid` (SIGTERM, [`GRACE`], SIGKILL) and reap it.
/// `Some(why)` when it was already gone or is not ours any more.
pub(super) fn stop(pgid: i32, boot_id: &str, start: u64) -> Result<Option<String>> {
    if pgid <= 1 {
        bail!("{pgid} is not a process group irqlab could have started");
    }
    let fs = HostFs::new("/");
    if crate::env::boot_id(&fs) != boot_id {
        return Ok(Some(format!(
            "process group {pgid} belonged to another boot"
        )));
    }
    reap(pgid);
    if !alive(pgid) {
        return Ok(Some(format!("process group {pgid} has exited")));
    }
    if start_time(&fs, pgid).is_some_and(|s| s != start) {
        return Ok(Some(format!("pid {pgid} now belongs to another process")));
    }
    terminate(pgid, GRACE)
}

/// SIGTERM, then SIGKILL after `grace`, reaping; error if it survives.
pub fn terminate(pgid: i32, grace: Duration) -> Result<Option<String>> {
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGTERM);
    if wait_gone(pgid, Instant::now() + grace) {
        return Ok(None);
    }
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    if wait_gone(pgid, Instant::now() + AFTER_KILL) {
        return Ok(None);
    }
    bail!("process group {pgid} still has members after SIGKILL")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn stops_a_term_ignoring_group_and_leaves_a_foreign_pid_alone() {
        // Orphaned members are reparented to (and reaped by) this process.
        nix::sys::prctl::set_child_subreaper(true).unwrap();
        let mut child = std::process::Command::new("sh")
            .args(["-c", "trap '' TERM; sleep 30 & sleep 30"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id() as i32;
        let (boot, start) = identity(pgid).unwrap();
        let other = stop(pgid, &boot, start + 1).unwrap();
        assert!(other.unwrap().contains("another process"));
        assert!(alive(pgid));
        assert_eq!(stop(pgid, &boot, start).unwrap(), None);
        assert!(!alive(pgid), "a process of group {pgid} remains");
        let _ = child.try_wait();
        assert!(stop(pgid, &boot, start)
            .unwrap()
            .unwrap()
            .contains("exited"));
        assert!(stop(pgid, "another-boot", start)
            .unwrap()
            .unwrap()
            .contains("another boot"));
    }
}
