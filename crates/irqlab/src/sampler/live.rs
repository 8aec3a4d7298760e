//! The live sampler: the way to sample a machine repeatedly. One per run;
//! `top --batch` (text and JSON Lines), the interactive `top`, `show
//! --interval`, bench trials, `record` and `serve` (through
//! `sampler::counters`) and `replay` take [`Frame`]s from a
//! [`LiveSampler`]. (`trace` reads its eBPF maps, paced by the same
//! `sampler::pace`.)
//!
//! It owns the previous and current [`Snapshot`], the snapshot source (the
//! host through [`HostSource`]: strategy decision, kept-open files,
//! re-resolution, thread CPU — or, behind the same [`SnapshotSource`]
//! trait, a recording), the metadata cache (`sampler::metadata`), the
//! self-cost meter and the clocks. It writes no output, builds no report
//! and does not pace: callers tick (`Ticker`) and turn a Frame into what
//! they show.

use super::host_source::HostSource;
use super::metadata::Metadata;
use super::strategy::Choice;
use super::{clock::CostMeter, SelfCost, Strategy};
use crate::filter::Filter;
use crate::threads::ThreadCpu;
use irqlab_core::Snapshot;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where snapshots come from: the live host ([`HostSource`]) or a
/// recording (`record::playback::RecordingSource`). Everything source-specific (how counts are read, thread CPU,
/// affinity) sits behind this trait; the [`LiveSampler`] owns the rest.
pub trait SnapshotSource {
    /// Read the next snapshot into `snap`, reusing its models, with both
    /// timestamps set.
    fn read(&mut self, snap: &mut Snapshot) -> anyhow::Result<()>;
    /// CPU use of the interrupt threads since the previous call, as of
    /// CLOCK_MONOTONIC `mono_ns`, into `out` (replaced).
    fn threads(&mut self, mono_ns: u64, out: &mut Vec<ThreadCpu>);
    /// The cumulative CPU time of every interrupt thread read at the
    /// last [`SnapshotSource::threads`] (those read for the first time
    /// too; `cpu_pct` 0), into `out` (replaced).
    fn thread_totals(&self, out: &mut Vec<ThreadCpu>) {
        out.clear();
    }
    /// Affinity CPU list of a numbered IRQ, as the kernel prints it
    /// (`None`: unknown).
    fn affinity(&mut self, irq: u32) -> Option<String>;
    /// Whether the sample just read brought other IRQ metadata than the
    /// one before (a recording's new layout): the sampler then drops its
    /// cache. The live host says no: its affinities are read again
    /// periodically instead.
    fn metadata_changed(&mut self) -> bool {
        false
    }
    /// Notes made since the last call (an affinity file that is not a
    /// CPU list, once each), for the consumer to say.
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// How interrupt counts are read now.
    fn strategy(&self) -> Strategy;
    /// After a frame: check whether the IRQs read must be chosen again
    /// (`latest` is the newest snapshot). True when the set of IRQs read
    /// changed (the sampler then drops its metadata).
    fn refresh(&mut self, latest: &Snapshot, filter: &Filter) -> anyhow::Result<bool>;
    /// Why the source reads the way it does (for `-v` and the TUI).
    fn why(&self) -> &str;
    /// Files that could not be read at all, with the reason.
    fn missing(&self) -> Vec<String> {
        Vec::new()
    }
    /// Number of interrupt threads followed.
    fn thread_count(&self) -> usize {
        0
    }
}

/// What a live sampler of the host needs (plain values: no clap types).
#[derive(Debug, Clone)]
pub struct LivePlan {
    /// Root of the tree to read (`/` for the running machine).
    pub root: PathBuf,
    /// Rows and CPUs wanted (`--irq`, `--cpus`).
    pub filter: Filter,
    /// How interrupt counts are read.
    pub strategy: Choice,
}

/// One interval: the previous and current snapshot and everything measured
/// with them. Borrowed from the [`LiveSampler`] until the next call.
pub struct Frame<'a> {
    pub prev: &'a Snapshot,
    pub cur: &'a Snapshot,
    /// Interrupt threads' CPU over the interval.
    pub threads: &'a [ThreadCpu],
    pub strategy: Strategy,
    /// Started when this frame's sample began: [`Frame::self_cost`] stopped
    /// after the consumer's own work gives irqlab's whole per-sample cost.
    pub meter: CostMeter,
    /// Bumped whenever the set of IRQs (and so their metadata) changed:
    /// consumers that cache per-row metadata drop it when it moves.
    pub meta_epoch: u64,
    /// The numbers of the samples `prev` and `cur` hold: each sample any
    /// sampler of the process reads gets a number of its own
    /// (`first_number`), and no snapshot changes while it holds it (a
    /// frame's `prev` is the last frame's `cur` when their numbers are the
    /// same).
    pub samples: (u64, u64),
    filter: &'a Filter,
    meta: &'a mut Metadata,
    source: &'a mut dyn SnapshotSource,
}

impl<'a> Frame<'a> {
    /// The filter for the rows as read: with `per_cpu_count` the rows were
    /// selected when the IRQs were resolved, so only the CPU part remains.
    pub fn filter(&self) -> &'a Filter {
        self.filter
    }

    /// Seconds between the two snapshots.
    pub fn interval_s(&self) -> f64 {
        self.cur.elapsed_since(self.prev)
    }

    /// Affinity of a numbered IRQ: read when first asked for, then
    /// cached; read again when its counts move to a CPU outside it or go
    /// back, about every 2 min otherwise (`metadata::AFFINITY_EVERY_NS`),
    /// and when the set of IRQs changes.
    pub fn affinity(&mut self, irq: u32) -> Option<String> {
        self.meta.affinity(&mut *self.source, irq)
    }

    /// irqlab's cost since this frame's sample began.
    pub fn self_cost(&self) -> SelfCost {
        self.meter.stop()
    }

    /// The interrupt threads' cumulative CPU time at this frame's sample
    /// ([`SnapshotSource::thread_totals`]; the baseline's too), into `out`.
    pub fn thread_totals(&self, out: &mut Vec<ThreadCpu>) {
        self.source.thread_totals(out);
    }
}

/// The first of the numbers ([`Frame::samples`]) of a new sampler's
/// samples: each sampler numbers its samples on from its own, 2^40 apart
/// (a sample a microsecond for 12 days), none 0.
fn first_number() -> u64 {
    static SAMPLERS: AtomicU64 = AtomicU64::new(0);
    (SAMPLERS.fetch_add(1, Ordering::Relaxed) << 40) | 1
}

/// The live sampling state of one run.
pub struct LiveSampler<S: SnapshotSource = HostSource> {
    source: S,
    filter: Filter,
    cpu_filter: Filter,
    /// Boxed: advancing swaps two pointers, not two snapshots' fields
    /// (hundreds of bytes, and their code, every sample).
    prev: Box<Snapshot>,
    cur: Box<Snapshot>,
    /// The numbers of the samples `prev` and `cur` hold ([`Frame::samples`];
    /// 0: none, while a read fills it), and the last number given.
    prev_no: u64,
    cur_no: u64,
    last_no: u64,
    /// `cur` holds a frame's sample (advance before the next one).
    fresh: bool,
    threads: Vec<ThreadCpu>,
    meta: Metadata,
    /// Frames' meters start at the thread's latest meter stop
    /// ([`LiveSampler::chain_meters`]).
    chained: bool,
}

impl LiveSampler<HostSource> {
    /// Open the host under `plan.root`: decide the strategy, find the
    /// interrupt threads, take the baseline sample.
    pub fn open(plan: &LivePlan) -> anyhow::Result<Self> {
        let source = HostSource::open(plan)?;
        LiveSampler::with_source(source, plan.filter.clone())
    }

    /// [`LiveSampler::open`] with the reader `--strategy per-cpu-count`
    /// resolved at start ([`HostSource::open_resolved`]).
    pub fn open_resolved(
        plan: &LivePlan,
        resolved: Option<super::host_source::Resolved>,
    ) -> anyhow::Result<Self> {
        let source = HostSource::open_resolved(plan, resolved)?;
        LiveSampler::with_source(source, plan.filter.clone())
    }

    /// Like [`LiveSampler::open`] without interrupt-thread CPU (frames
    /// have no threads): for consumers that do not show them.
    pub fn open_without_threads(plan: &LivePlan) -> anyhow::Result<Self> {
        let source = HostSource::open_without_threads(plan)?;
        LiveSampler::with_source(source, plan.filter.clone())
    }
}

impl<S: SnapshotSource> LiveSampler<S> {
    /// A sampler over any source; takes the baseline sample.
    pub fn with_source(mut source: S, filter: Filter) -> anyhow::Result<Self> {
        let mut prev = Box::<Snapshot>::default();
        source.read(&mut prev)?;
        let mut threads = Vec::new();
        source.threads(prev.mono_ns, &mut threads);
        let mut meta = Metadata::default();
        meta.check(&prev);
        let first = first_number();
        Ok(LiveSampler {
            source,
            cpu_filter: filter.cpus_only(),
            filter,
            prev,
            cur: Box::default(),
            prev_no: first,
            cur_no: 0,
            last_no: first,
            fresh: false,
            threads,
            meta,
            chained: false,
        })
    }

    /// Start each frame's meter at the latest meter stop on this thread
    /// ([`CostMeter::since_last_stop`]): one read of the thread's CPU
    /// clock per sample instead of two, and a frame's self cost is the
    /// thread's whole CPU since the previous frame's (its write and sleep
    /// included). Only for a thread that samples, writes and sleeps
    /// (`top --batch`, `record`, `serve`): a thread doing other work
    /// between frames (a bench trial) would charge it to the next frame.
    pub fn chain_meters(&mut self) {
        self.chained = true;
    }

    /// Sample now; the frame covers the time since the previous sample.
    pub fn next_frame(&mut self) -> anyhow::Result<Frame<'_>> {
        if self.fresh {
            std::mem::swap(&mut self.prev, &mut self.cur);
            std::mem::swap(&mut self.prev_no, &mut self.cur_no);
            self.fresh = false;
            if self.source.refresh(&self.prev, &self.filter)? {
                self.meta.invalidate();
            }
        }
        let meter = if self.chained {
            CostMeter::since_last_stop()
        } else {
            CostMeter::start()
        };
        self.cur_no = 0;
        self.source.read(&mut self.cur)?;
        self.last_no += 1;
        self.cur_no = self.last_no;
        self.source.threads(self.cur.mono_ns, &mut self.threads);
        if self.source.metadata_changed() {
            self.meta.invalidate();
        }
        self.meta.check(&self.cur);
        self.meta
            .refresh_affinity(&mut self.source, &self.prev, &self.cur);
        self.fresh = true;
        Ok(self.frame(meter, false))
    }

    /// The latest sample as a frame of zero length (`prev` and `cur` are
    /// the same snapshot; before the first [`LiveSampler::next_frame`] it is
    /// the baseline taken at open): for consumers that publish or store the
    /// first sample at once (`serve`, `record`). Affinity comes from the same
    /// metadata cache as every frame's.
    pub fn latest_frame(&mut self) -> Frame<'_> {
        self.frame(CostMeter::start(), true)
    }

    /// The frame over `prev` and `cur` (both the latest snapshot when
    /// `latest_only`), with the row filter of the source's strategy.
    fn frame(&mut self, meter: CostMeter, latest_only: bool) -> Frame<'_> {
        let strategy = self.source.strategy();
        let filter = match strategy {
            Strategy::PerCpuCount => &self.cpu_filter,
            Strategy::ProcInterrupts => &self.filter,
        };
        let latest = if self.fresh { &self.cur } else { &self.prev };
        let prev = if latest_only { latest } else { &self.prev };
        let latest_no = if self.fresh {
            self.cur_no
        } else {
            self.prev_no
        };
        let prev_no = if latest_only { latest_no } else { self.prev_no };
        Frame {
            prev,
            cur: latest,
            threads: &self.threads,
            strategy,
            meter,
            meta_epoch: self.meta.epoch,
            samples: (prev_no, latest_no),
            filter,
            meta: &mut self.meta,
            source: &mut self.source,
        }
    }

    /// Change the rows wanted (the TUI's `/` and `c`): the source chooses
    /// its IRQs again before the next sample.
    pub fn set_filter(&mut self, filter: Filter) -> anyhow::Result<()> {
        self.cpu_filter = filter.cpus_only();
        self.filter = filter;
        let latest = if self.fresh { &self.cur } else { &self.prev };
        if self.source.refresh(latest, &self.filter)? {
            self.meta.invalidate();
        }
        Ok(())
    }

    /// The rows wanted.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// The filter for the rows as read now (see [`Frame::filter`]).
    pub fn rows_filter(&self) -> &Filter {
        match self.source.strategy() {
            Strategy::PerCpuCount => &self.cpu_filter,
            Strategy::ProcInterrupts => &self.filter,
        }
    }

    /// How interrupt counts are read now.
    pub fn strategy(&self) -> Strategy {
        self.source.strategy()
    }

    /// Why (for `-v` and the TUI's status).
    pub fn why(&self) -> &str {
        self.source.why()
    }

    /// Files that could not be read at all (report once).
    pub fn missing(&self) -> Vec<String> {
        self.source.missing()
    }

    /// Notes the source made since the last call (say each on stderr):
    /// an affinity file that is not a CPU list (its IRQ's affinity is
    /// unknown), once per file and text. Nothing to take on most calls.
    pub fn take_notes(&mut self) -> Vec<String> {
        self.source.take_notes()
    }

    /// Number of interrupt threads followed.
    pub fn thread_count(&self) -> usize {
        self.source.thread_count()
    }

    /// The latest snapshot (the baseline before the first frame).
    pub fn latest(&self) -> &Snapshot {
        if self.fresh {
            &self.cur
        } else {
            &self.prev
        }
    }

    /// The interrupt threads' cumulative CPU time at the latest sample
    /// (the baseline's before the first frame), into `out`.
    pub fn thread_totals(&self, out: &mut Vec<ThreadCpu>) {
        self.source.thread_totals(out);
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
