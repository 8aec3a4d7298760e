//! Sampler layer. [`LiveSampler`] (`live.rs`) is THE repeated sampler
//! every consumer uses (top, the TUI, show --interval; later serve,
//! record, trace): it yields [`Frame`]s from a [`SnapshotSource`], the
//! host being [`HostSource`] (`host_source.rs`).
//!
//! This file: [`Ticker`], drift-free pacing of repeated samples (deadline
//! = start + n × interval, so sleep jitter never adds up), and
//! [`located`]. `files.rs`: `StatFiles`, the low-level reader of the
//! statistics files into a reused `Snapshot` — a private detail of
//! [`HostSource`], not a sampler of its own — and `read_once`, the same
//! files read once, streamed, for `show`.
//!
//! Timestamps come from CLOCK_MONOTONIC and CLOCK_REALTIME; callers measure
//! what a whole sample costs them with `clock::CostMeter` ([`SelfCost`]:
//! thread CPU time and wall time). Interrupt counts come from the whole `/proc/interrupts`
//! or, when a [`Targeted`] reader is installed, from a few IRQs'
//! `per_cpu_count` files (see `strategy.rs` for the choice, `strategy_cache.rs` for its
//! per-boot cache).
//!
//! Knows nothing about output; parse errors become errors naming the real
//! path (under `--root`), the line and what was expected.

pub mod clock;
mod files;
pub mod host_source;
pub mod live;
pub mod strategy;
pub mod strategy_cache;
pub mod targeted;

use anyhow::anyhow;
pub use clock::SelfCost;
pub(crate) use files::{read_once, OnceRead, Source, StatFiles};
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

/// SIGINT and SIGTERM caught by a flag (signal-hook's handler: no thread
/// and no pipe, unlike an iterator), for [`Ticker::wait_stop`].
pub struct Stop {
    sig: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Stop {
    /// Catch SIGINT and SIGTERM from now on.
    pub fn install() -> anyhow::Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let sig = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        for s in [SIGINT, SIGTERM] {
            let n = usize::try_from(s).unwrap_or(0);
            signal_hook::flag::register_usize(s, std::sync::Arc::clone(&sig), n)
                .map_err(|e| anyhow!("cannot handle SIGINT/SIGTERM: {e}"))?;
        }
        Ok(Stop { sig })
    }

    /// The signal caught, if any.
    pub fn caught(&self) -> Option<i32> {
        let n = self.sig.load(std::sync::atomic::Ordering::SeqCst);
        (n != 0).then(|| i32::try_from(n).unwrap_or(0))
    }

    /// Sleep until `due`, or return early with the signal number once one
    /// is caught. Sleeps in `clock_nanosleep` until the absolute deadline
    /// (CLOCK_MONOTONIC, which `Instant` reads): a caught signal
    /// interrupts it (EINTR) and is seen at once, with no thread, pipe or
    /// wake-up between samples. A signal caught in the instant between
    /// the check and the call is seen at the deadline.
    pub fn sleep_until(&self, due: Instant) -> Option<i32> {
        use nix::time::{clock_nanosleep, ClockId, ClockNanosleepFlags};
        loop {
            if let Some(sig) = self.caught() {
                return Some(sig);
            }
            let now = Instant::now();
            if due <= now {
                return None;
            }
            let left = nix::sys::time::TimeSpec::from_duration(due - now);
            match clock_nanosleep(
                ClockId::CLOCK_MONOTONIC,
                ClockNanosleepFlags::empty(),
                &left,
            ) {
                Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                Err(_) => std::thread::sleep(due.saturating_duration_since(Instant::now())),
            }
        }
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
    /// once `stop` has caught one (see [`Stop::sleep_until`]).
    pub fn wait_stop(&mut self, stop: &Stop) -> Option<i32> {
        self.n = self.n.saturating_add(1);
        stop.sleep_until(self.start + self.interval.saturating_mul(self.n))
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
