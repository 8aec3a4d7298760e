//! CPU placement for workload threads: which CPUs a workload may use and
//! pinning the calling thread to one of them (`sched_setaffinity`).
//!
//! Owns no threads itself; it must not touch `/proc` or `/sys` (the allowed
//! set comes from the scheduler, not from a file).

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

/// Pin the calling thread to `cpu`.
pub fn pin_current(cpu: u32) -> anyhow::Result<()> {
    let mut set = CpuSet::new();
    let idx = usize::try_from(cpu).context("CPU id out of range")?;
    set.set(idx)
        .with_context(|| format!("CPU {cpu} out of range"))?;
    sched_setaffinity(Pid::from_raw(0), &set)
        .with_context(|| format!("pinning thread to CPU {cpu}"))
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
            });
        });
    }
}
