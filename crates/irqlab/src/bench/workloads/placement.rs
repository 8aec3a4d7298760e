//! CPU placement for workload threads: which CPUs a workload may use and
//! pinning the calling thread to one of them (`sched_setaffinity`).
//!
//! Owns no threads itself; it must not touch `/proc` or `/sys` (the allowed
//! set comes from the scheduler, not from a file). A pinning that fails or
//! is broken during a trial (CPU hotplug resets the affinity of threads on
//! a CPU going offline) is a `PinError`, so a runner can tell a disturbed
//! trial from a broken workload and retry it.

use anyhow::{bail, Context};
use irqlab_core::CpuList;
use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// CPUs this process may run on, ascending.
pub fn allowed_cpus() -> anyhow::Result<Vec<u32>> {
    let set = sched_getaffinity(Pid::from_raw(0)).context("sched_getaffinity")?;
    let cpus = (0..CpuSet::count())
        .filter(|&i| set.is_set(i).unwrap_or(false))
        .filter_map(|i| u32::try_from(i).ok())
        .collect();
    Ok(cpus)
}

/// The CPUs a workload uses: the requested list (every CPU must be one this
/// process may run on), or all allowed CPUs when none was requested.
pub fn select(requested: Option<&CpuList>) -> anyhow::Result<Vec<u32>> {
    let allowed = allowed_cpus()?;
    let Some(list) = requested else {
        if allowed.is_empty() {
            bail!("no CPU is allowed for this process");
        }
        return Ok(allowed);
    };
    if list.is_empty() {
        bail!("the CPU list is empty");
    }
    let picked: Vec<u32> = list.iter().collect();
    if let Some(bad) = picked.iter().find(|c| !allowed.contains(c)) {
        bail!(
            "CPU {bad} is not available to this process (allowed: {})",
            CpuList::from_cpus(allowed.iter().copied())
        );
    }
    Ok(picked)
}

/// CPU of thread `index`: the selected CPUs round-robin.
pub fn cpu_for(cpus: &[u32], index: usize) -> Option<u32> {
    if cpus.is_empty() {
        return None;
    }
    cpus.get(index % cpus.len()).copied()
}

/// A thread could not be pinned to, or did not stay on, its CPU.
#[derive(Debug)]
pub struct PinError {
    pub cpu: u32,
    /// True when the pinning held at first but was lost during the trial.
    pub lost: bool,
    source: Option<nix::Error>,
}

impl std::fmt::Display for PinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cpu = self.cpu;
        match (self.lost, self.source) {
            (true, _) => write!(f, "a thread lost its pinning to CPU {cpu} (CPU hotplug?)"),
            (false, Some(e)) => write!(f, "cannot pin a thread to CPU {cpu} (offline?): {e}"),
            (false, None) => write!(f, "cannot pin a thread to CPU {cpu}"),
        }
    }
}

impl std::error::Error for PinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}

/// Pin the calling thread to `cpu`.
pub fn pin_current(cpu: u32) -> anyhow::Result<()> {
    let mut set = CpuSet::new();
    let idx = usize::try_from(cpu).context("CPU id out of range")?;
    set.set(idx)
        .with_context(|| format!("CPU {cpu} out of range"))?;
    sched_setaffinity(Pid::from_raw(0), &set).map_err(|e| {
        anyhow::Error::new(PinError {
            cpu,
            lost: false,
            source: Some(e),
        })
    })
}

/// Check that the calling thread, pinned to `cpu` by [`pin_opt`], is still
/// pinned there (call at the end of a trial).
pub fn still_pinned(cpu: Option<u32>) -> anyhow::Result<()> {
    let Some(cpu) = cpu else { return Ok(()) };
    let set = sched_getaffinity(Pid::from_raw(0)).context("sched_getaffinity")?;
    let only = (0..CpuSet::count())
        .filter(|&i| set.is_set(i).unwrap_or(false))
        .eq(usize::try_from(cpu).ok());
    if only {
        return Ok(());
    }
    Err(anyhow::Error::new(PinError {
        cpu,
        lost: true,
        source: None,
    }))
}

/// Pin the calling thread to `cpu` when there is one.
pub fn pin_opt(cpu: Option<u32>) -> anyhow::Result<()> {
    match cpu {
        Some(c) => pin_current(c),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin() {
        assert_eq!(cpu_for(&[2, 5], 0), Some(2));
        assert_eq!(cpu_for(&[2, 5], 3), Some(5));
        assert_eq!(cpu_for(&[], 0), None);
    }

    #[test]
    fn default_is_allowed_set() {
        let all = select(None).unwrap();
        assert!(!all.is_empty());
        assert_eq!(all, allowed_cpus().unwrap());
    }

    #[test]
    fn pin_error_is_typed() {
        std::thread::scope(|s| {
            s.spawn(|| {
                let err = pin_current(1000).unwrap_err();
                let pin = err.downcast_ref::<PinError>().unwrap();
                assert!(!pin.lost && pin.cpu == 1000, "{err}");
            });
        });
    }

    #[test]
    fn rejects_unknown_cpu() {
        let list = CpuList::from_cpus([100_000]);
        let err = select(Some(&list)).unwrap_err().to_string();
        assert!(err.contains("CPU 100000"), "{err}");
    }

    #[test]
    fn pin_in_scoped_thread() {
        let cpus = allowed_cpus().unwrap();
        let last = *cpus.last().unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                pin_current(last).unwrap();
                let now = allowed_cpus().unwrap();
                assert_eq!(now, vec![last]);
                still_pinned(Some(last)).unwrap();
                let mut all = CpuSet::new();
                cpus.iter().for_each(|&c| all.set(c as usize).unwrap());
                sched_setaffinity(Pid::from_raw(0), &all).unwrap();
                if cpus.len() > 1 {
                    let err = still_pinned(Some(last)).unwrap_err();
                    assert!(err.downcast_ref::<PinError>().unwrap().lost);
                }
            });
        });
    }
}
