//! Sampler layer. [`LiveSampler`] (`live.rs`) is THE repeated sampler
//! every consumer uses (top, the TUI, show --interval; later serve,
//! record, trace): it yields [`Frame`]s from a [`SnapshotSource`], the
//! host being [`HostSource`] (`host_source.rs`).
//!
//! This file: [`Ticker`], drift-free pacing of repeated samples (deadline
//! = start + n × interval, so sleep jitter never adds up), and
//! [`located`]. `files.rs`: `StatFiles`, the low-level reader of the
//! statistics files into a reused `Snapshot` — a private detail of
//! [`HostSource`], not a sampler of its own.
//!
//! Timestamps come from CLOCK_MONOTONIC and CLOCK_REALTIME; callers measure
//! what a whole sample costs them with `clock::CostMeter` ([`SelfCost`]:
//! thread CPU time and wall time). Interrupt counts come from the whole `/proc/interrupts`
//! or, when a [`Targeted`] reader is installed, from a few IRQs'
//! `per_cpu_count` files (see `strategy.rs` for the choice).
//!
//! Knows nothing about output; parse errors become errors naming the real
//! path (under `--root`), the line and what was expected.

pub mod clock;
mod files;
pub mod host_source;
pub mod live;
pub mod strategy;
pub mod targeted;

use anyhow::anyhow;
pub use clock::SelfCost;
pub(crate) use files::{Source, StatFiles};
pub use host_source::HostSource;
use irqlab_core::ParseError;
pub use live::{Frame, LivePlan, LiveSampler, SnapshotSource};
use std::time::{Duration, Instant};
pub use strategy::Strategy;
pub use targeted::Targeted;

/// A parse error re-labelled with the real path that was read.
pub fn located(path: &std::path::Path, e: &ParseError) -> anyhow::Error {
    if e.line == 0 {
        anyhow!("{}: {}", path.display(), e.kind)
    } else {
        anyhow!("{}:{}: {}", path.display(), e.line, e.kind)
    }
}

/// Drift-free pacing: the n-th tick is due at `start + n × interval`.
pub struct Ticker {
    start: Instant,
    interval: Duration,
    n: u32,
}

impl Ticker {
    pub fn new(interval: Duration) -> Self {
        Ticker {
            start: Instant::now(),
            interval,
            n: 0,
        }
    }

    /// Like [`Ticker::wait`], but returns early with the signal number
    /// when one arrives on `stop` (blocks on the channel: no polling).
    pub fn wait_or(&mut self, stop: &std::sync::mpsc::Receiver<i32>) -> Option<i32> {
        use std::sync::mpsc::RecvTimeoutError;
        self.n = self.n.saturating_add(1);
        let due = self.start + self.interval.saturating_mul(self.n);
        let now = Instant::now();
        if due <= now {
            return stop.try_recv().ok();
        }
        match stop.recv_timeout(due - now) {
            Ok(sig) => Some(sig),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                self.n = self.n.saturating_sub(1);
                self.wait();
                None
            }
        }
    }

    /// Sleep until the next tick is due (returns at once if it is late).
    pub fn wait(&mut self) {
        self.n = self.n.saturating_add(1);
        let due = self.start + self.interval.saturating_mul(self.n);
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }
}
