//! Thread CPU affinity through `nix` (safe `sched_getaffinity` /
//! `sched_setaffinity`), converted to and from [`CpuList`].
//!
//! Only the guard calls this: every affinity change must be journaled.

use irqlab_core::CpuList;
use nix::errno::Errno;
use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// The CPU affinity of thread `tid`.
pub fn get(tid: i32) -> Result<CpuList, Errno> {
    let set = sched_getaffinity(Pid::from_raw(tid))?;
    let cpus = (0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false));
    Ok(CpuList::from_cpus(
        cpus.filter_map(|c| u32::try_from(c).ok()),
    ))
}

/// Set the CPU affinity of thread `tid` to `cpus` (EINVAL for an empty set
/// or a CPU beyond what the kernel's cpu_set_t holds).
pub fn set(tid: i32, cpus: &CpuList) -> Result<(), Errno> {
    if cpus.is_empty() {
        return Err(Errno::EINVAL);
    }
    let mut set = CpuSet::new();
    for c in cpus.iter() {
        set.set(usize::try_from(c).map_err(|_| Errno::EINVAL)?)?;
    }
    sched_setaffinity(Pid::from_raw(tid), &set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_thread_round_trip() {
        let tid = nix::unistd::gettid().as_raw();
        let before = get(tid).unwrap();
        assert!(!before.is_empty());
        let first = CpuList::from_cpus(before.iter().take(1));
        set(tid, &first).unwrap();
        assert_eq!(get(tid).unwrap(), first);
        set(tid, &before).unwrap();
        assert_eq!(get(tid).unwrap(), before);
        assert_eq!(set(tid, &CpuList::default()), Err(Errno::EINVAL));
    }
}
