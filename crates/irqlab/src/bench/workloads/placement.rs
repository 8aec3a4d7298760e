//! CPU placement for workload threads: which CPUs a workload may use and
//! the round-robin CPU of each thread. Pinning itself is the one pinning
//! helper's (`crate::pin`); this file only adapts it to optional CPUs and
//! `anyhow` errors that still carry the typed [`PinError`] (so a runner can
//! tell a trial disturbed by CPU hotplug from a broken workload).
//!
//! Owns no threads itself; it must not touch `/proc` or `/sys` (the allowed
//! set comes from the scheduler, not from a file).

pub use crate::pin::PinError;
use anyhow::{bail, Context};
use irqlab_core::CpuList;

/// CPUs this process may run on, ascending.
pub fn allowed_cpus() -> anyhow::Result<Vec<u32>> {
    crate::pin::allowed_cpus().context("sched_getaffinity")
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

/// Pin the calling thread to `cpu` (the error holds a [`PinError`]).
pub fn pin_current(cpu: u32) -> anyhow::Result<()> {
    crate::pin::pin_current(cpu).map_err(anyhow::Error::new)
}

/// Check that the calling thread, pinned to `cpu` by [`pin_opt`], is still
/// pinned there (call at the end of a trial).
pub fn still_pinned(cpu: Option<u32>) -> anyhow::Result<()> {
    match cpu {
        Some(c) => crate::pin::still_pinned(c).map_err(anyhow::Error::new),
        None => Ok(()),
    }
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
                let all = CpuList::from_cpus(cpus.iter().copied());
                crate::pin::set_thread_affinity(crate::pin::CURRENT, &all).unwrap();
                if cpus.len() > 1 {
                    let err = still_pinned(Some(last)).unwrap_err();
                    assert!(err.downcast_ref::<PinError>().unwrap().lost);
                }
            });
        });
    }
}
