//! CPU affinity of threads: the one place that calls `sched_getaffinity` /
//! `sched_setaffinity` (through `nix`'s safe wrappers).
//!
//! Owns pinning the calling thread to one CPU ([`pin_current`], or
//! [`Pinned`] which restores the previous affinity on drop), checking that
//! a pinning held ([`still_pinned`]), and reading/setting the affinity of
//! any thread as a [`CpuList`] ([`thread_affinity`], [`set_thread_affinity`];
//! host changes to *other* threads go through the guard, which journals
//! them and then calls these). Must not touch `/proc` or `/sys`.

use irqlab_core::CpuList;
use nix::errno::Errno;
use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// The calling thread, as a `tid` for the functions below.
pub const CURRENT: i32 = 0;

/// The CPU affinity of thread `tid` ([`CURRENT`] for the caller).
pub fn thread_affinity(tid: i32) -> Result<CpuList, Errno> {
    let set = sched_getaffinity(Pid::from_raw(tid))?;
    Ok(from_set(&set))
}

/// Set the CPU affinity of thread `tid` to `cpus` (EINVAL for an empty set
/// or a CPU beyond what the kernel's `cpu_set_t` holds).
pub fn set_thread_affinity(tid: i32, cpus: &CpuList) -> Result<(), Errno> {
    if cpus.is_empty() {
        return Err(Errno::EINVAL);
    }
    let mut set = CpuSet::new();
    for c in cpus.iter() {
        set.set(usize::try_from(c).map_err(|_| Errno::EINVAL)?)?;
    }
    sched_setaffinity(Pid::from_raw(tid), &set)
}

/// CPUs the calling thread may run on, ascending.
pub fn allowed_cpus() -> Result<Vec<u32>, Errno> {
    Ok(thread_affinity(CURRENT)?.iter().collect())
}

fn from_set(set: &CpuSet) -> CpuList {
    CpuList::from_cpus(
        (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .filter_map(|c| u32::try_from(c).ok()),
    )
}

/// A thread could not be pinned to, or did not stay on, its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinError {
    pub cpu: u32,
    /// True when the pinning held at first but was lost later.
    pub lost: bool,
    /// The kernel's answer when pinning failed.
    pub errno: Option<Errno>,
}

impl std::fmt::Display for PinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cpu = self.cpu;
        match (self.lost, self.errno) {
            (true, _) => write!(f, "a thread lost its pinning to CPU {cpu} (CPU hotplug?)"),
            (false, Some(e)) => write!(f, "cannot pin a thread to CPU {cpu} (offline?): {e}"),
            (false, None) => write!(f, "cannot pin a thread to CPU {cpu}"),
        }
    }
}

impl std::error::Error for PinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.errno.as_ref().map(|e| e as _)
    }
}

/// Pin the calling thread to `cpu`.
pub fn pin_current(cpu: u32) -> Result<(), PinError> {
    set_thread_affinity(CURRENT, &CpuList::from_cpus([cpu])).map_err(|e| PinError {
        cpu,
        lost: false,
        errno: Some(e),
    })
}

/// Check that the calling thread is still pinned to exactly `cpu` (call at
/// the end of a timed section: CPU hotplug resets the affinity of threads
/// on a CPU going offline).
pub fn still_pinned(cpu: u32) -> Result<(), PinError> {
    let lost = PinError {
        cpu,
        lost: true,
        errno: None,
    };
    match thread_affinity(CURRENT) {
        Ok(now) if now.iter().eq([cpu]) => Ok(()),
        Ok(_) => Err(lost),
        Err(e) => Err(PinError {
            errno: Some(e),
            ..lost
        }),
    }
}

/// The calling thread pinned to one CPU; the previous affinity comes back
/// on drop (same thread: do not send it elsewhere).
#[derive(Debug)]
pub struct Pinned {
    previous: CpuList,
    cpu: u32,
}

impl Pinned {
    /// Pin the calling thread to `cpu`, remembering its affinity.
    pub fn to(cpu: u32) -> Result<Self, PinError> {
        let previous = thread_affinity(CURRENT).map_err(|e| PinError {
            cpu,
            lost: false,
            errno: Some(e),
        })?;
        pin_current(cpu)?;
        Ok(Pinned { previous, cpu })
    }

    /// The CPU pinned to.
    pub fn cpu(&self) -> u32 {
        self.cpu
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if let Err(e) = set_thread_affinity(CURRENT, &self.previous) {
            eprintln!("irqlab: warning: could not restore the CPU affinity: {e}");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Run `f` on a fresh thread so the test runner's threads keep their
    /// affinity whatever happens.
    fn on_thread(f: impl FnOnce() + Send) {
        std::thread::scope(|s| {
            s.spawn(f);
        });
    }

    #[test]
    fn pins_and_restores() {
        on_thread(|| {
            let before = thread_affinity(CURRENT).unwrap();
            let last = before.iter().last().unwrap();
            {
                let p = Pinned::to(last).unwrap();
                assert_eq!(p.cpu(), last);
                assert_eq!(allowed_cpus().unwrap(), vec![last]);
                still_pinned(last).unwrap();
            }
            assert_eq!(thread_affinity(CURRENT).unwrap(), before);
            if before.len() > 1 {
                let err = still_pinned(last).unwrap_err();
                assert!(err.lost, "{err}");
            }
        });
    }

    #[test]
    fn errors_are_typed() {
        on_thread(|| {
            let before = thread_affinity(CURRENT).unwrap();
            let err = pin_current(100_000).unwrap_err();
            assert!(
                !err.lost && err.cpu == 100_000 && err.errno.is_some(),
                "{err}"
            );
            assert!(Pinned::to(100_000).is_err());
            assert_eq!(thread_affinity(CURRENT).unwrap(), before);
            assert_eq!(
                set_thread_affinity(CURRENT, &CpuList::default()),
                Err(Errno::EINVAL)
            );
        });
    }
}
