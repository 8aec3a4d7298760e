//! [`Tracker`]: the handle through which a workload puts what it owns —
//! a temporary file, a child process group, a network namespace — under the guard: journaled
//! (and fsync'd) like a host change, undone (file removed, group stopped)
//! on drop, error, panic and SIGINT/SIGTERM, and by `irqlab restore`
//! after a SIGKILL. When the owner cleans up itself it calls
//! [`Tracked::release`] and the entry leaves the journal.
//!
//! A tracker holds only a weak reference: it never keeps a guard alive,
//! and [`Tracker::none`] (tests, checks) tracks nothing.

use super::hooks;
use super::journal::Change;
use super::state::State;
use super::SystemGuard;
use anyhow::{bail, Result};
use std::path::Path;
use std::sync::{Mutex, Weak};

/// Puts temporary files and process groups under a guard; see the module docs.
#[derive(Clone, Default)]
pub struct Tracker {
    shared: Option<Weak<Mutex<State>>>,
}

impl std::fmt::Debug for Tracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.shared.is_some() {
            "Tracker(guard)"
        } else {
            "Tracker(none)"
        })
    }
}

/// One tracked file or group; see [`Tracked::release`].
#[derive(Debug)]
#[must_use = "release it once the owner cleaned up, or leave it to the guard"]
pub struct Tracked {
    change: Option<Change>,
    tracker: Tracker,
}

impl SystemGuard {
    /// A tracker journaling into this guard.
    pub fn tracker(&self) -> Tracker {
        Tracker {
            shared: Some(std::sync::Arc::downgrade(&self.shared)),
        }
    }
}

impl Tracker {
    /// A tracker that tracks nothing.
    pub fn none() -> Self {
        Tracker { shared: None }
    }

    fn add(&self, change: Change) -> Result<Tracked> {
        let Some(state) = self.shared.as_ref().and_then(Weak::upgrade) else {
            return Ok(Tracked {
                change: None,
                tracker: self.clone(),
            });
        };
        hooks::lock(&state).track(&change)?;
        Ok(Tracked {
            change: Some(change),
            tracker: self.clone(),
        })
    }

    /// Journal `path` BEFORE the caller creates it (absolute path).
    pub fn temp_file(&self, path: &Path) -> Result<Tracked> {
        if !path.is_absolute() {
            bail!("temporary file {} must be an absolute path", path.display());
        }
        let Some(text) = path.to_str() else {
            bail!("temporary file {}: not a UTF-8 path", path.display());
        };
        super::journal::temp_file_path(text)?;
        self.add(Change::TempFile {
            path: text.to_string(),
        })
    }

    /// Journal the network namespace `name` BEFORE the caller creates it
    /// (`guard::create_netns`); undone by removing `/run/netns/NAME`.
    pub fn net_namespace(&self, name: &str) -> Result<Tracked> {
        super::netns::check_name(name)?;
        self.add(Change::NetNamespace {
            name: name.to_string(),
        })
    }

    /// Environment for a child whose group will be tracked: the token
    /// that marks its descendants (`guard/descend.rs`); nothing for
    /// [`Tracker::none`].
    pub fn child_env(&self) -> Vec<(String, String)> {
        let Some(state) = self.shared.as_ref().and_then(Weak::upgrade) else {
            return Vec::new();
        };
        let token = super::descend::new_token();
        hooks::lock(&state).pending_token = Some(token.clone());
        vec![(super::descend::TRACK_ENV.to_string(), token)]
    }

    /// Journal the process group `pgid` just started (its leader alive,
    /// not yet running the command), with what finds its descendants that
    /// leave the group: a cgroup v2 of its own the leader is moved into,
    /// else the token of [`Tracker::child_env`] in its environment (this
    /// process then becomes a child subreaper).
    pub fn process_group(&self, pgid: i32) -> Result<Tracked> {
        let Some(state) = self.shared.as_ref().and_then(Weak::upgrade) else {
            return Ok(Tracked {
                change: None,
                tracker: self.clone(),
            });
        };
        let (boot_id, start_time) = super::pgroup::identity(pgid)?;
        let pending = hooks::lock(&state).pending_token.take();
        let token = pending.or_else(|| super::descend::token_of(pgid));
        let cgroup = super::descend::new_cgroup(pgid);
        let mut change = Change::ProcessGroup {
            pgid,
            boot_id,
            start_time,
            cgroup: cgroup.as_ref().map(|d| d.display().to_string()),
            token,
        };
        let mut st = hooks::lock(&state);
        st.track(&change)?; // journaled before the cgroup exists
        if let Some(dir) = &cgroup {
            if super::descend::join(dir, pgid).is_err() {
                st.forget(&change)?;
                if let Change::ProcessGroup { cgroup, .. } = &mut change {
                    *cgroup = None;
                }
                st.track(&change)?;
            }
        }
        if matches!(&change, Change::ProcessGroup { cgroup: None, .. }) {
            nix::sys::prctl::set_child_subreaper(true)
                .map_err(|e| anyhow::anyhow!("PR_SET_CHILD_SUBREAPER: {e}"))?;
        }
        Ok(Tracked {
            change: Some(change),
            tracker: self.clone(),
        })
    }
}

impl Tracked {
    /// The owner removed the file / stopped the group: forget it. For a
    /// group, whatever it started that left the group (`setsid`) is
    /// stopped first and its cgroup removed (`guard/descend.rs`).
    pub fn release(mut self) -> Result<()> {
        let (Some(change), Some(state)) = (
            self.change.take(),
            self.tracker.shared.as_ref().and_then(Weak::upgrade),
        ) else {
            return Ok(());
        };
        if let Change::ProcessGroup { cgroup, token, .. } = &change {
            super::descend::stop_rest(cgroup.as_deref(), token.as_deref(), super::pgroup::GRACE)?;
        }
        let mut st = hooks::lock(&state);
        st.forget(&change)
    }
}

impl State {
    /// Journal a tracked resource (refused once a signal closed the guard).
    fn track(&mut self, change: &Change) -> Result<()> {
        if let Some(why) = self.closed {
            bail!("irqlab is stopping after {why}: not starting anything new");
        }
        self.journal.append(change)?;
        self.entries.push(change.clone());
        Ok(())
    }

    /// Drop the newest entry equal to `change` (already undone by its owner).
    fn forget(&mut self, change: &Change) -> Result<()> {
        let Some(i) = self.entries.iter().rposition(|c| c == change) else {
            return Ok(()); // restored meanwhile (signal, drop)
        };
        self.entries.remove(i);
        if self.entries.is_empty() {
            self.journal.remove()
        } else {
            self.journal.rewrite(&self.entries)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostFs;

    #[test]
    fn tracked_file_is_journaled_removed_on_restore_or_released() {
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("j.jsonl");
        let mut g = SystemGuard::new(&HostFs::new(dir.path()), journal.clone()).unwrap();
        let t = g.tracker();
        let kept = dir.path().join("irqlab-kept.dat");
        let left = dir.path().join("irqlab-left.dat");
        let a = t.temp_file(&kept).unwrap();
        std::fs::write(&kept, b"x").unwrap();
        let _b = t.temp_file(&left).unwrap();
        std::fs::write(&left, b"x").unwrap();
        assert!(std::fs::read_to_string(&journal)
            .unwrap()
            .contains("temp_file"));
        std::fs::remove_file(&kept).unwrap();
        a.release().unwrap();
        assert_eq!(g.pending(), 1);
        let report = g.restore().unwrap();
        assert_eq!(report.restored.len(), 1);
        assert!(!left.exists(), "the guard removed the file left behind");
        assert!(!journal.exists());
        assert!(Tracker::none().temp_file(&kept).unwrap().release().is_ok());
        assert!(t.temp_file(Path::new("relative")).is_err());
    }
}
