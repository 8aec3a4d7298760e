//! Thread CPU affinity for the guard, as [`CpuList`]s: thin names over
//! [`crate::pin`] (the one module calling `sched_setaffinity`).
//!
//! The guard calls these after journaling: every affinity change made to
//! another thread must go through `SystemGuard::set_thread_affinity`.

use irqlab_core::CpuList;
use nix::errno::Errno;

/// The CPU affinity of thread `tid`.
pub fn get(tid: i32) -> Result<CpuList, Errno> {
    crate::pin::thread_affinity(tid)
}

/// Set the CPU affinity of thread `tid` to `cpus` (EINVAL for an empty set
/// or a CPU beyond what the kernel's cpu_set_t holds).
pub fn set(tid: i32, cpus: &CpuList) -> Result<(), Errno> {
    crate::pin::set_thread_affinity(tid, cpus)
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
