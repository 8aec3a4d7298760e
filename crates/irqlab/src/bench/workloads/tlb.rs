//! `tlb`: TLB shootdowns. Spinner threads of this process keep its mm live
//! on the other selected CPUs while one thread maps, touches and unmaps a
//! small anonymous region in a loop; every `munmap` of a touched page must
//! flush the other CPUs' TLBs by IPI (`TLB` on x86).
//!
//! The only unsafe code of the CLI crate (which denies `unsafe_code`) is
//! here, in [`map_touch_unmap`] under one documented `allow`: the
//! mmap/munmap pair and the page writes, each with a SAFETY note. The page
//! size comes from `sysconf(_SC_PAGESIZE)`. All threads are scoped to
//! `run` and joined.

use super::{placement, spawn_scoped};
use crate::bench::metric_value::{Direction, Metric};
use crate::bench::workload::{running, Workload};
use crate::sampler::Stop;
use anyhow::{anyhow, Context};
use nix::sys::mman::{mmap_anonymous, munmap, MapFlags, ProtFlags};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Pages mapped per iteration.
const PAGES: usize = 4;

/// The page size (`sysconf(_SC_PAGESIZE)`; 4096 if the call fails).
fn page_size() -> usize {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|p| usize::try_from(p).ok())
        .filter(|p| *p > 0)
        .unwrap_or(4096)
}

/// The shootdown workload.
pub struct Tlb {
    cpus: Vec<u32>,
    spinners: usize,
}

impl Tlb {
    /// Mapper on `cpus[0]`; `spinners` (default: one per other CPU) on the
    /// rest, round-robin. `build` refuses fewer than 2 CPUs.
    pub fn new(cpus: Vec<u32>, spinners: Option<usize>) -> Self {
        let others = cpus.len().saturating_sub(1).max(1);
        Tlb {
            spinners: spinners.unwrap_or(others),
            cpus,
        }
    }
}

/// Map, touch every page, unmap: one iteration.
///
/// Unsafe because the shootdown needs a real mapping that this process
/// writes and then removes: nix exposes mmap/munmap as unsafe, and the
/// writes go through a raw pointer into the fresh mapping. Nothing else in
/// the crate needs unsafe code.
#[allow(unsafe_code)]
fn map_touch_unmap(len: NonZeroUsize, page: usize) -> anyhow::Result<()> {
    // SAFETY: an anonymous private mapping at an address the kernel picks
    // cannot alias any existing Rust object.
    let ptr = unsafe {
        mmap_anonymous(
            None,
            len,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_PRIVATE | MapFlags::MAP_ANONYMOUS,
        )
    }
    .context("mmap")?;
    let base = ptr.as_ptr().cast::<u8>();
    for i in 0..len.get() / page {
        // SAFETY: `i * page < len`, so the write stays inside the fresh
        // read-write mapping, which nothing else references.
        unsafe { base.add(i * page).write_volatile(1) };
    }
    // SAFETY: `ptr`/`len` are exactly the mapping created above; no
    // reference into it outlives this call.
    unsafe { munmap(ptr, len.get()) }.context("munmap")
}

fn mapper(cpu: Option<u32>, dur: Duration, stop: &Stop) -> anyhow::Result<(u64, Duration)> {
    placement::pin_opt(cpu)?;
    let page = page_size();
    let len = NonZeroUsize::new(PAGES * page).ok_or_else(|| anyhow!("zero length"))?;
    let start = Instant::now();
    let mut n = 0u64;
    while running(start, dur, stop) {
        for _ in 0..64 {
            map_touch_unmap(len, page)?;
            n += 1;
        }
    }
    let elapsed = start.elapsed();
    placement::still_pinned(cpu)?;
    Ok((n, elapsed))
}

fn spinner(cpu: Option<u32>, mapper_done: &AtomicBool) -> anyhow::Result<()> {
    let pinned = placement::pin_opt(cpu);
    while !mapper_done.load(Ordering::Relaxed) {
        std::hint::spin_loop();
    }
    pinned?;
    placement::still_pinned(cpu)
}

impl Workload for Tlb {
    fn name(&self) -> &str {
        "tlb"
    }

    fn run(&mut self, duration: Duration, stop: &Stop) -> anyhow::Result<Vec<Metric>> {
        let mapper_done = AtomicBool::new(false);
        let cpus = &self.cpus;
        let (n, elapsed) = std::thread::scope(|s| {
            let wanted = self.spinners + 1;
            let mut spin = Vec::with_capacity(self.spinners);
            for i in 0..self.spinners {
                let mapper_done = &mapper_done;
                // Spinners take the CPUs after the mapper's, round-robin.
                let cpu = cpus.get(1..).and_then(|rest| placement::cpu_for(rest, i));
                match spawn_scoped(s, i, wanted, move || spinner(cpu, mapper_done)) {
                    Ok(h) => spin.push(h),
                    Err(e) => {
                        mapper_done.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                }
            }
            let m = spawn_scoped(s, self.spinners, wanted, || {
                mapper(placement::cpu_for(cpus, 0), duration, stop)
            })
            .inspect_err(|_| mapper_done.store(true, Ordering::Relaxed))?;
            let res = m.join().map_err(|_| anyhow!("mapper thread panicked"));
            mapper_done.store(true, Ordering::Relaxed);
            for h in spin {
                h.join().map_err(|_| anyhow!("spinner thread panicked"))??;
            }
            res?
        })
        .context("tlb workload")?;
        let rate = n as f64 / elapsed.as_secs_f64().max(1e-9);
        Ok(vec![Metric::new(
            "unmaps_per_sec",
            rate,
            "1/s",
            Direction::Higher,
        )])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_size_comes_from_sysconf() {
        let p = page_size();
        assert!(p.is_power_of_two() && p >= 4096, "{p}");
    }

    #[test]
    fn threads_are_the_spinners_asked_for_else_one_per_other_cpu() {
        assert_eq!(Tlb::new(vec![0, 1], Some(3)).spinners, 3);
        assert_eq!(Tlb::new(vec![0, 1, 2], None).spinners, 2);
    }
}
