//! The run lock: one run that changes the host (bench, trace's tracefs
//! mount, guard-selftest) at a time per root, and `irqlab restore` never
//! under a live run.
//!
//! Owns the lock file ([`lock_path`]: `run.lock` in [`state_dir`] for the
//! live root — `/var/lib/irqlab` for root, `/tmp/irqlab-UID` for any other
//! user — and `<root>/.irqlab-run.lock` for a fake tree) and its protocol.
//! On the live root every run also reads the other users' locks (the
//! system one and every `/tmp/irqlab-*/run.lock`), so a root run and an
//! unprivileged run see each other; user directories are mode 0755 so
//! that their locks are readable by all.
//! The file is created with its whole content at once (written to a
//! temporary file, then `link`ed into place, which fails if it exists), so
//! it is never seen half-written. It names its holder: pid, boot id,
//! process start time, start date, command and output directory. A holder
//! is live when the boot id is this boot's and a process with that pid and
//! start time exists; otherwise the lock is stale (its run was SIGKILLed or
//! the machine rebooted) and may be taken over: by a new run when the
//! journal is empty, by `irqlab restore` always (it then replays the
//! journal). Check-and-take is serialized by an `flock` on the lock's
//! directory (and on `/var/lib/irqlab` when it exists, which every user
//! can open), held only for the few syscalls of [`RunLock::acquire`]. A
//! held lock is also released when SIGINT/SIGTERM end the run
//! ([`release_held`], called by the guard's signal thread).
//! Must not touch the journal's content (the guard does).

use crate::host::HostFs;
use anyhow::{bail, Context, Result};
use irqlab_core::paths;
use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The state directory of root runs on the live host.
pub const SYSTEM_DIR: &str = paths::STATE_DIR;

/// Where this process keeps the live host's lock and journal:
/// [`SYSTEM_DIR`] for root, `/tmp/irqlab-UID` for any other user (who
/// cannot write `/var/lib`).
pub fn state_dir() -> PathBuf {
    let uid = nix::unistd::geteuid();
    if uid.is_root() {
        PathBuf::from(SYSTEM_DIR)
    } else {
        PathBuf::from(paths::user_state_dir(uid.as_raw()))
    }
}

/// Where the run lock of `root` lives.
pub fn lock_path(root: &Path) -> PathBuf {
    if root == Path::new("/") {
        state_dir().join(paths::RUN_LOCK)
    } else {
        root.join(paths::TREE_RUN_LOCK)
    }
}

/// Every other lock of the live host this process can see: the system
/// one and each user's `/tmp/irqlab-*/run.lock`, except `mine`.
fn other_locks(mine: &Path) -> Vec<PathBuf> {
    let mut all = vec![Path::new(SYSTEM_DIR).join(paths::RUN_LOCK)];
    if let Ok(dir) = std::fs::read_dir(paths::USER_STATE_PARENT) {
        for e in dir.flatten() {
            if e.file_name()
                .to_string_lossy()
                .starts_with(paths::USER_STATE_PREFIX)
            {
                all.push(e.path().join(paths::RUN_LOCK));
            }
        }
    }
    all.retain(|p| p != mine);
    all
}

/// Every lock a run on the live host checks: this user's ([`lock_path`]
/// of `/`) first, then the system one and every other user's
/// (`/tmp/irqlab-*/run.lock`). Tests use it to name another run that
/// holds the host.
pub fn live_host_locks() -> Vec<PathBuf> {
    let mine = lock_path(Path::new("/"));
    let mut all = other_locks(&mine);
    all.insert(0, mine);
    all
}

/// Create the directory of a user's lock (mode 0755: others read the
/// lock) and check that it is this user's own, not a symlink or a
/// directory someone else planted in `/tmp`.
fn ensure_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let uid = nix::unistd::geteuid();
    if uid.is_root() || dir != state_dir() {
        return std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the lock directory {}", dir.display()));
    }
    match std::fs::DirBuilder::new().mode(0o755).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(e).with_context(|| format!("creating the lock directory {}", dir.display()))
        }
    }
    let m = std::fs::symlink_metadata(dir)
        .with_context(|| format!("checking the lock directory {}", dir.display()))?;
    if !m.is_dir() || m.uid() != uid.as_raw() || m.mode() & 0o022 != 0 {
        bail!(
            "{} is not a directory owned by uid {} and writable only by it; \
             irqlab keeps this user's run lock and journal there: remove it",
            dir.display(),
            uid.as_raw()
        );
    }
    Ok(())
}

/// Locks this process holds, released by [`release_held`].
static HELD: std::sync::Mutex<Vec<(PathBuf, Holder)>> = std::sync::Mutex::new(Vec::new());

/// Remove every lock this process still holds (the guard's signal thread
/// calls it once the host is restored, just before the process exits).
pub(super) fn release_held() {
    let held = std::mem::take(&mut *super::hooks::lock(&HELD));
    for (path, me) in held {
        remove_if_mine(&path, &me);
    }
}

fn remove_if_mine(path: &Path, me: &Holder) {
    // only our own lock: never one a `restore` took over from us
    if let Ok(Some(h)) = read_holder(path) {
        if h == *me {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Who holds (or held) a lock: the content of the lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    /// `/proc/sys/kernel/random/boot_id` of the boot it ran on.
    pub boot_id: Option<String>,
    /// Field 22 of `/proc/PID/stat` (tells a reused pid apart).
    pub starttime: Option<u64>,
    /// RFC 3339 start date.
    pub started: String,
    /// `bench`, `restore`, `guard-selftest`.
    pub command: String,
    /// The run's output directory, if it has one.
    pub out_dir: Option<PathBuf>,
    /// Effective user id of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`irqlab {}` (pid {}, started {}",
            self.command, self.pid, self.started
        )?;
        if let Some(uid) = self.uid.filter(|&u| u != 0) {
            write!(f, ", uid {uid}")?;
        }
        if let Some(d) = &self.out_dir {
            write!(f, ", output {}", d.display())?;
        }
        write!(f, ")")
    }
}

/// The live host (never `--root`): boot id and processes are this
/// machine's whatever tree the run changes.
fn live() -> HostFs {
    HostFs::new("/")
}

fn boot_id() -> Option<String> {
    live().read_attr(paths::BOOT_ID)
}

fn starttime(pid: u32) -> Option<u64> {
    let text = live().read_attr(&paths::pid_file(pid, "stat"))?;
    irqlab_core::PidStat::parse(text.as_bytes()).ok()?.starttime
}

impl Holder {
    /// This process, now.
    pub fn me(command: &str, out_dir: Option<&Path>) -> Self {
        let pid = std::process::id();
        Holder {
            pid,
            boot_id: boot_id(),
            starttime: starttime(pid),
            started: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            command: command.to_string(),
            out_dir: out_dir.map(Path::to_path_buf),
            uid: Some(nix::unistd::geteuid().as_raw()),
        }
    }

    /// True when the holder still runs: same boot, same pid, same start
    /// time (what could not be read is not held against it).
    pub fn is_live(&self) -> bool {
        if let (Some(a), Some(b)) = (&self.boot_id, boot_id()) {
            if *a != b {
                return false;
            }
        }
        match (self.starttime, starttime(self.pid)) {
            (_, None) => false,
            (Some(a), Some(b)) => a == b,
            (None, Some(_)) => true,
        }
    }
}

/// What [`RunLock::acquire`] should do with a stale lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stale {
    /// Take it over only if the journal at this path is empty or absent.
    TakeIfJournalEmpty,
    /// Take it over (restore, which then replays the journal).
    Take,
}

/// A held run lock; released (file removed) on drop.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    me: Holder,
    /// The stale holder this lock replaced, if any.
    pub took_over: Option<Holder>,
}

impl RunLock {
    /// Take the lock of `root` for `me`, or fail naming the live holder.
    /// A stale lock is taken over as `stale` says; `journal` is the
    /// guard's journal (checked for unrestored entries).
    pub fn acquire(root: &Path, me: Holder, journal: &Path, stale: Stale) -> Result<Self> {
        super::hooks::install_once()?;
        let path = lock_path(root);
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        ensure_dir(&dir)?;
        let live_host = root == Path::new("/");
        // every user can open /var/lib/irqlab (0755) and flock it: root and
        // unprivileged runs serialize their check-and-take on it
        let system = Path::new(SYSTEM_DIR);
        let _system_serial = match File::open(system) {
            Ok(f) if live_host && dir != system => Some(
                Flock::lock(f, FlockArg::LockExclusive)
                    .map_err(|(_, e)| anyhow::anyhow!("locking {}: {e}", system.display()))?,
            ),
            _ => None,
        };
        let dir_file = File::open(&dir).with_context(|| format!("opening {}", dir.display()))?;
        let _serial = Flock::lock(dir_file, FlockArg::LockExclusive)
            .map_err(|(_, e)| anyhow::anyhow!("locking {}: {e}", dir.display()))?;
        if live_host {
            for other in other_locks(&path) {
                // another user's lock we cannot read is not ours to judge
                if let Ok(Some(h)) = read_holder(&other) {
                    if h.is_live() && h.pid != me.pid {
                        bail!(
                            "another run is changing this host: {h}; wait for it to end \
                             (lock {})",
                            other.display()
                        );
                    }
                }
            }
        }
        let mut took_over = None;
        if let Some(h) = read_holder(&path)? {
            if h.is_live() && h.pid != me.pid {
                bail!(
                    "another run is changing this host: {h}; wait for it to end \
                     (lock {})",
                    path.display()
                );
            }
            let variant = super::variant_journal(journal);
            let left = [&variant, journal]
                .into_iter()
                .find(|j| journal_has_entries(j));
            if let (Stale::TakeIfJournalEmpty, Some(left)) = (stale, left) {
                bail!(
                    "a killed run {h} left unrestored host changes in {}; undo them with \
                     `{}` first (lock {})",
                    left.display(),
                    super::restore_command(root, journal),
                    path.display()
                );
            }
            std::fs::remove_file(&path)
                .with_context(|| format!("removing the stale lock {}", path.display()))?;
            took_over = Some(h);
        }
        create_with(&path, &me)?;
        super::hooks::lock(&HELD).push((path.clone(), me.clone()));
        Ok(RunLock {
            path,
            me,
            took_over,
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        super::hooks::lock(&HELD).retain(|(p, h)| !(*p == self.path && *h == self.me));
        remove_if_mine(&self.path, &self.me);
    }
}

/// The holder in the lock file at `path`; `None` if there is none. An
/// unreadable or malformed file is an error naming it (never ignored:
/// it might be a live run's).
pub fn read_holder(path: &Path) -> Result<Option<Holder>> {
    let not_lock = || format!("{} is not an irqlab lock; remove it", path.display());
    match super::journal::read_regular(path, "the lock", MAX_LOCK)? {
        Some(t) => serde_json::from_slice(&t).map(Some).with_context(not_lock),
        None => Ok(None),
    }
}

/// The largest lock file read (a holder is a few hundred bytes).
const MAX_LOCK: u64 = 64 << 10;

fn journal_has_entries(journal: &Path) -> bool {
    std::fs::metadata(journal).is_ok_and(|m| m.len() > 0)
}

/// Create `path` with `h` as its whole content, atomically: write a
/// temporary file beside it, then hard-link it into place (fails if the
/// lock exists).
fn create_with(path: &Path, h: &Holder) -> Result<()> {
    let tmp = path.with_extension(format!("lock.{}.tmp", std::process::id()));
    let text = serde_json::to_string(h).context("encoding the lock")? + "\n";
    let ctx = || format!("creating the lock {}", path.display());
    let mut f = File::create(&tmp).with_context(ctx)?;
    let res = f
        .write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    res.with_context(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(pid: u32, starttime: Option<u64>) -> Holder {
        Holder {
            pid,
            starttime,
            ..Holder::me("bench", Some(Path::new("out")))
        }
    }

    #[test]
    fn second_acquire_is_refused_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let j = dir.path().join("j");
        let me = Holder::me("bench", Some(Path::new("out-A")));
        let lock = RunLock::acquire(dir.path(), me, &j, Stale::TakeIfJournalEmpty).unwrap();
        assert!(lock.path().exists());
        // a live holder with another pid: our parent process
        let parent = nix::unistd::getppid().as_raw() as u32;
        let other = Holder {
            pid: parent,
            starttime: starttime(parent),
            ..Holder::me("bench", Some(Path::new("out-B")))
        };
        drop(lock);
        assert!(!lock_path(dir.path()).exists(), "released on drop");
        create_with(&lock_path(dir.path()), &other).unwrap();
        let e = RunLock::acquire(dir.path(), holder(1, None), &j, Stale::Take)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("pid {parent}")) && e.contains("out-B"),
            "{e}"
        );
    }

    #[test]
    fn stale_lock_is_taken_over_unless_the_journal_holds_changes() {
        let dir = tempfile::tempdir().unwrap();
        let j = dir.path().join("j");
        // a pid that cannot exist (above pid_max) is a dead holder
        let dead = holder(u32::MAX - 1, Some(1));
        assert!(!dead.is_live());
        create_with(&lock_path(dir.path()), &dead).unwrap();
        std::fs::write(&j, "{}\n").unwrap();
        let me = Holder::me("bench", None);
        let e = RunLock::acquire(dir.path(), me.clone(), &j, Stale::TakeIfJournalEmpty)
            .unwrap_err()
            .to_string();
        let hint = format!(
            "undo them with `irqlab restore --root {} --journal {}` first",
            dir.path().display(),
            j.display()
        );
        assert!(e.contains(&hint), "{e}");
        let lock = RunLock::acquire(dir.path(), me.clone(), &j, Stale::Take).unwrap();
        assert_eq!(lock.took_over.as_ref().map(|h| h.pid), Some(dead.pid));
        assert_eq!(read_holder(lock.path()).unwrap(), Some(me));
    }

    #[test]
    fn live_host_locks_are_mine_first_then_every_other_once() {
        let all = live_host_locks();
        assert_eq!(all[0], lock_path(Path::new("/")));
        let system = Path::new(SYSTEM_DIR).join(paths::RUN_LOCK);
        assert_eq!(all.iter().filter(|p| **p == system).count(), 1, "{all:?}");
        let distinct: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(distinct.len(), all.len(), "{all:?}");
    }

    #[test]
    fn another_boot_or_start_time_is_stale() {
        let me = Holder::me("bench", None);
        assert!(me.is_live());
        let rebooted = Holder {
            boot_id: Some("not-this-boot".into()),
            ..me.clone()
        };
        assert_eq!(rebooted.is_live(), me.boot_id.is_none());
        let reused = Holder {
            starttime: me.starttime.map(|t| t + 1),
            ..me.clone()
        };
        assert_eq!(reused.is_live(), me.starttime.is_none());
    }
}
