//! Descendants of a tracked process group that left the group (`setsid`,
//! `setpgid`, a double fork): a killpg never reaches them, so the guard
//! tracks them two ways and stops them with the group.
//!
//! - A cgroup v2 of its own for the group, where the cgroup v2 hierarchy
//!   is writable (root): `irqlab-PGID-N` under this process's own cgroup.
//!   The group's leader is moved in before the command starts (it waits
//!   at its gate, `bench/workloads/child.rs`), so everything it starts is
//!   a member whatever session or group it makes. Stopped with SIGTERM,
//!   a grace period, then `cgroup.kill`; the directory is removed.
//! - Otherwise (no cgroup v2, not writable, or [`disable_cgroups`]): the
//!   child's environment carries `IRQLAB_TRACK=<token>` (from
//!   [`super::Tracker::child_env`]), inherited by every descendant that
//!   does not clear its environment, and this process is a child
//!   subreaper (`PR_SET_CHILD_SUBREAPER`), so orphans come back here to
//!   be reaped. Stopped the same way, found by the token in
//!   `/proc/PID/environ`.
//!
//! Both survive a SIGKILL of irqlab: the journal names the cgroup and the
//! token, and `irqlab restore` stops what is left. Reads `/proc` through
//! HostFs on the live `/` (except `/proc/PID/environ`, see `token_of`); writes only the files of its own `irqlab-*`
//! cgroup directories (absolute paths, as journaled), which it alone
//! creates and removes.

use crate::host::HostFs;
use anyhow::{anyhow, bail, Context, Result};
use irqlab_core::paths;
use nix::errno::Errno;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The environment variable that marks a tracked group's descendants.
pub const TRACK_ENV: &str = "IRQLAB_TRACK";

static NO_CGROUPS: AtomicBool = AtomicBool::new(false);
static COUNTER: AtomicU64 = AtomicU64::new(0);

const POLL: Duration = Duration::from_millis(20);
const AFTER_KILL: Duration = Duration::from_secs(3);

/// Track descendants by the environment token only, never by a cgroup
/// (tests of the fallback: `guard-selftest --no-cgroup`, unit tests).
pub fn disable_cgroups() {
    NO_CGROUPS.store(true, Ordering::SeqCst);
}

fn live() -> HostFs {
    HostFs::new("/")
}

/// A token unique on this boot: pid, a counter, the wall clock in ns.
pub(super) fn new_token() -> String {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{}-{n}-{ns}", std::process::id())
}

/// The token in the environment of process `pid`: `Ok(None)` without
/// one, `Err(())` when the environment is unreadable or empty (a process
/// in the middle of an exec shows none). Read directly, not through
/// HostFs: an environment is one NUL-separated record that HostFs's line
/// limits would refuse; it is bounded by the kernel's argument limit, and
/// at most 4 MiB is read.
fn environ_token(pid: i32) -> Result<Option<String>, ()> {
    use std::io::Read as _;
    let mut buf = Vec::new();
    std::fs::File::open(paths::absolute(&paths::pid_file(pid, "environ")))
        .map_err(|_| ())?
        .take(4 << 20)
        .read_to_end(&mut buf)
        .map_err(|_| ())?;
    if buf.is_empty() {
        return Err(());
    }
    let key = format!("{TRACK_ENV}=");
    Ok(buf
        .split(|&b| b == 0)
        .find_map(|kv| kv.strip_prefix(key.as_bytes()))
        .map(|v| String::from_utf8_lossy(v).into_owned()))
}

/// The token in the environment of process `pid`, if any.
pub(super) fn token_of(pid: i32) -> Option<String> {
    environ_token(pid).ok().flatten()
}

/// The parent of `pid`.
fn ppid(pid: i32) -> Option<u32> {
    let stat = live().read_attr(&paths::pid_file(pid, "stat"))?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The directory of a new cgroup v2 for group `pgid`, beside nothing else
/// of ours: under this process's own cgroup of the unified hierarchy.
/// `None` without a cgroup v2 hierarchy (or when disabled).
pub(super) fn new_cgroup(pgid: i32) -> Option<PathBuf> {
    if NO_CGROUPS.load(Ordering::SeqCst) {
        return None;
    }
    let fs = live();
    let mountinfo = fs.read_attr(&paths::pid_file("self", "mountinfo"))?;
    // fields: id parent major:minor root mountpoint options... - fstype ...
    let mount = mountinfo.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        (post.split_whitespace().next()? == "cgroup2").then(|| pre.split_whitespace().nth(4))?
    })?;
    let cgroups = fs.read_attr(&paths::pid_file("self", "cgroup"))?;
    let own = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let dir = Path::new(mount)
        .join(own.trim_start_matches('/'))
        .join(format!("irqlab-{pgid}-{n}"));
    Some(dir)
}

/// Create cgroup `dir` and move process `pid` into it.
pub(super) fn join(dir: &Path, pid: i32) -> Result<()> {
    std::fs::create_dir(dir).with_context(|| format!("creating cgroup {}", dir.display()))?;
    let procs = dir.join(paths::CGROUP_PROCS);
    let res = std::fs::write(&procs, pid.to_string())
        .with_context(|| format!("moving process {pid} into {}", procs.display()));
    if res.is_err() {
        let _ = std::fs::remove_dir(dir);
    }
    res
}

/// Processes in cgroup `dir` (none when it does not exist).
fn members(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join(paths::CGROUP_PROCS))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Live processes whose environment carries `token`, and our children
/// (orphans come to this subreaper) whose environment cannot be read
/// yet because they are in the middle of an exec.
fn marked(token: &str) -> Vec<i32> {
    let me = std::process::id();
    live()
        .list_dir(paths::PROC)
        .iter()
        .filter_map(|p| p.parse::<i32>().ok())
        .filter(|&pid| u32::try_from(pid).is_ok_and(|p| p != me))
        .filter(|&pid| match environ_token(pid) {
            Ok(t) => t.as_deref() == Some(token),
            Err(()) => ppid(pid) == Some(me),
        })
        .collect()
}

fn remaining(cgroup: Option<&Path>, token: Option<&str>) -> Vec<i32> {
    let mut all = cgroup.map(members).unwrap_or_default();
    if let Some(t) = token {
        all.extend(marked(t));
    }
    all.sort_unstable();
    all.dedup();
    // reap the ones that are our children (orphans of the group come to us)
    for &pid in &all {
        let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
    }
    all.retain(|&pid| is_running(pid));
    all
}

/// Running (not a zombie someone else must reap).
fn is_running(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None) == Err(Errno::ESRCH) {
        return false;
    }
    let stat = live().read_attr(&paths::pid_file(pid, "stat"));
    let state = stat
        .as_deref()
        .and_then(|s| s.rsplit_once(')'))
        .and_then(|(_, r)| r.split_whitespace().next());
    !matches!(state, Some("Z" | "X") | None)
}

fn wait_empty(cgroup: Option<&Path>, token: Option<&str>, until: Instant) -> Vec<i32> {
    loop {
        let left = remaining(cgroup, token);
        if left.is_empty() || Instant::now() >= until {
            return left;
        }
        std::thread::sleep(POLL);
    }
}

/// Stop every process left in `cgroup` or carrying `token`: SIGTERM,
/// `grace`, then SIGKILL (`cgroup.kill`); reap our children among them
/// and remove the cgroup. Returns how many processes had to be stopped.
pub(super) fn stop_rest(
    cgroup: Option<&str>,
    token: Option<&str>,
    grace: Duration,
) -> Result<usize> {
    let cgroup = cgroup.map(Path::new);
    let mut found = remaining(cgroup, token);
    for _ in 0..2 {
        if !found.is_empty() || token.is_none() {
            break;
        }
        // a process in the middle of an exec shows no environment (and,
        // after a SIGKILL of irqlab, is nobody's child here): look again
        std::thread::sleep(POLL * 5);
        found = remaining(cgroup, token);
    }
    let n = found.len();
    if n > 0 {
        for &pid in &found {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
        let left = wait_empty(cgroup, token, Instant::now() + grace);
        if !left.is_empty() {
            if let Some(dir) = cgroup {
                let _ = std::fs::write(dir.join(paths::CGROUP_KILL), "1");
            }
            for &pid in &left {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            let left = wait_empty(cgroup, token, Instant::now() + AFTER_KILL);
            if !left.is_empty() {
                bail!("processes {left:?} started by the command still run after SIGKILL");
            }
        }
    }
    // the last ones may have died after their last waitpid
    for &pid in &found {
        let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
    }
    if let Some(dir) = cgroup {
        remove_cgroup(dir)?;
    }
    Ok(n)
}

/// Remove an emptied cgroup directory (absent is fine; a just-emptied one
/// may be busy for a moment).
fn remove_cgroup(dir: &Path) -> Result<()> {
    let until = Instant::now() + AFTER_KILL;
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if Instant::now() >= until => {
                return Err(anyhow!("removing cgroup {}: {e}", dir.display()))
            }
            Err(_) => std::thread::sleep(POLL),
        }
    }
}
