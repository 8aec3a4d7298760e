//! The seam between the live sampler and the consumers `serve` and
//! `record`: [`LiveSource`] yields one [`Sample`] (a [`Snapshot`] of raw
//! counters plus the interrupt threads' cumulative CPU time and what the
//! sample cost) per call.
//!
//! This is the one place that knows how live samples are taken: when the
//! live sampler yields Frames, only this file changes. A recording read
//! back (`record::reader`) is the second source of the same [`Sample`]s.
//!
//! Does not pace (callers tick) and writes nothing.

use crate::host::HostFs;
use crate::sampler::clock::CostMeter;
use crate::sampler::{Sampler, SelfCost, Source};
use crate::threads::{ThreadKind, Threads};
use irqlab_core::Snapshot;

/// Cumulative CPU time of one interrupt-related kernel thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadTotal {
    /// `ksoftirqd/N` or `irq/N-name` as in `/proc/PID/comm`.
    pub name: String,
    pub kind: ThreadKind,
    /// CPU time since the thread started, ns.
    pub cpu_ns: u64,
}

/// One sample: raw counters at one instant.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub snap: Snapshot,
    /// Threads whose CPU time was read at this sample (sorted by name).
    pub threads: Vec<ThreadTotal>,
    /// What taking this sample cost irqlab (zero when read back).
    pub cost: SelfCost,
}

/// Live samples of one root (`/` or a fake tree).
pub struct LiveSource {
    sampler: Sampler,
    threads: Threads,
}

impl LiveSource {
    /// A source reading every statistics file under `root`.
    pub fn open(root: &std::path::Path) -> LiveSource {
        let fs = HostFs::new(root);
        let threads = Threads::new(&fs);
        LiveSource {
            sampler: Sampler::new(fs, &Source::ALL),
            threads,
        }
    }

    /// The gateway (metadata reads such as affinity by callers).
    pub fn fs(&self) -> &HostFs {
        self.sampler.fs()
    }

    /// Files that could not be read at all, with the reason.
    pub fn missing(&self) -> Vec<String> {
        let fs = self.sampler.fs();
        self.sampler
            .missing
            .iter()
            .map(|(s, why)| format!("{}: {why}", fs.path(s.rel()).display()))
            .collect()
    }

    /// Take one sample into `out`, reusing its buffers.
    pub fn next_into(&mut self, out: &mut Sample) -> anyhow::Result<()> {
        let meter = CostMeter::start();
        self.sampler.sample(&mut out.snap)?;
        let cpus = self.threads.sample(self.sampler.fs_mut(), out.snap.mono_ns);
        out.threads.clear();
        out.threads.extend(cpus.into_iter().map(|t| ThreadTotal {
            name: t.name,
            kind: t.kind,
            cpu_ns: t.cpu_ns,
        }));
        out.threads.sort_by(|a, b| a.name.cmp(&b.name));
        out.cost = meter.stop();
        Ok(())
    }
}
