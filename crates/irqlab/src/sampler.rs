//! Sampler layer. [`LiveSampler`] (`live.rs`) is the repeated sampler of
//! top, the TUI, show --interval, bench, record, serve and replay: it
//! yields [`Frame`]s from a [`SnapshotSource`], the host being
//! [`HostSource`] (`host_source.rs`).
//!
//! This file: [`Ticker`], drift-free pacing of repeated samples (deadline
//! = start + n × interval, so sleep jitter never adds up), and
//! [`located`]. `pace.rs`: [`PacedRun`], the paced run (interval, count or
//! duration, stop flag, the one end-of-run rule) every sampling loop runs. `files.rs`: `StatFiles`, the low-level reader of the
//! statistics files into a reused `Snapshot` — a private detail of
//! [`HostSource`], not a sampler of its own — and `read_once`, the same
//! files read once, streamed, for `show`.
//!
//! Timestamps come from CLOCK_MONOTONIC and CLOCK_REALTIME; callers measure
//! what a whole sample costs them with `clock::CostMeter` ([`SelfCost`]:
//! thread CPU time and wall time). Interrupt counts come from the whole `/proc/interrupts`
//! or, when a [`Targeted`] reader is installed, from a few IRQs'
//! `per_cpu_count` files (see `strategy.rs` for the choice, `strategy_cache.rs` for its
//! per-boot cache). `counters.rs`: [`CounterSampler`], the live sampler's
//! samples as raw counters (the baseline first) for `record` and `serve`.
//!
//! Knows nothing about output; parse errors become errors naming the real
//! path (under `--root`), the line and what was expected.

pub mod clock;
pub mod counters;
mod files;
pub mod host_source;
pub mod live;
mod metadata;
pub mod pace;
pub mod strategy;
pub mod strategy_cache;
pub mod targeted;

use anyhow::anyhow;
pub use clock::SelfCost;
pub use counters::CounterSampler;
pub use files::not_read_yet;
pub(crate) use files::{read_again_if_torn, read_once, OnceRead, StatFile, StatFiles};
pub use host_source::HostSource;
use irqlab_core::ParseError;
pub use live::{Frame, LivePlan, LiveSampler, SnapshotSource};
pub use pace::{End, PacedRun, Tick};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
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

/// THE stop flag of every run: SIGINT and SIGTERM caught by a flag
/// (signal-hook's handler: no thread and no pipe, unlike an iterator), for
/// [`Ticker::wait_stop`]; or a stop asked for without a signal
/// ([`Stop::request`]: the interactive UI quitting). Clones share it (the
/// UI's input loop and its sampler thread).
#[derive(Debug, Clone)]
pub struct Stop {
    /// The signal caught (0: none).
    sig: Arc<AtomicUsize>,
    /// A stop was asked for: a signal caught or [`Stop::request`].
    asked: Arc<AtomicBool>,
}

impl Stop {
    /// The signals a stop catches.
    pub const SIGNALS: [i32; 2] = [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM];

    /// [`Stop::SIGNALS`] and SIGHUP ([`Stop::install_with_hangup`]).
    pub const SIGNALS_AND_HANGUP: [i32; 3] = [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ];

    /// A flag no signal sets: only [`Stop::request`] stops its holders
    /// (tests; a run driven without a terminal's signals).
    pub fn unhooked() -> Self {
        Stop {
            sig: Arc::new(AtomicUsize::new(0)),
            asked: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Catch SIGINT and SIGTERM from now on.
    pub fn install() -> anyhow::Result<Self> {
        Self::hook(&Self::SIGNALS, false)
    }

    /// [`Stop::install`] that catches SIGHUP too, for a run whose output
    /// outlives its terminal (`record`): started in a terminal that is
    /// then closed, it ends as on SIGTERM, keeping what it measured,
    /// instead of dying by SIGHUP's default action. A SIGHUP ignored
    /// when the run starts (`nohup`) stays ignored: the run goes on.
    pub fn install_with_hangup() -> anyhow::Result<Self> {
        match hangup_ignored() {
            true => Self::install(),
            false => Self::hook(&Self::SIGNALS_AND_HANGUP, false),
        }
    }

    /// [`Stop::install`] for an interactive run, whose terminal must be
    /// restored by the run's own loop: a second SIGINT or SIGTERM once a
    /// stop was asked for exits at once (128 + signal), in case that loop
    /// is stuck. SIGHUP keeps its default action (the terminal is gone).
    pub fn install_interactive() -> anyhow::Result<Self> {
        Self::hook(&Self::SIGNALS, true)
    }

    fn hook(signals: &[i32], exit_on_second: bool) -> anyhow::Result<Self> {
        let stop = Stop::unhooked();
        let names = match signals.len() > Self::SIGNALS.len() {
            true => "SIGINT/SIGTERM/SIGHUP",
            false => "SIGINT/SIGTERM",
        };
        let failed = |e: std::io::Error| anyhow!("cannot handle {names}: {e}");
        for &s in signals {
            if exit_on_second {
                // before the flags below: it sees the flag as the earlier
                // signals (or the request) left it
                signal_hook::flag::register_conditional_shutdown(
                    s,
                    128 + s,
                    Arc::clone(&stop.asked),
                )
                .map_err(failed)?;
            }
            let n = usize::try_from(s).unwrap_or(0);
            signal_hook::flag::register_usize(s, Arc::clone(&stop.sig), n).map_err(failed)?;
            signal_hook::flag::register(s, Arc::clone(&stop.asked)).map_err(failed)?;
        }
        Ok(stop)
    }

    /// The signal caught, if any.
    pub fn caught(&self) -> Option<i32> {
        let n = self.sig.load(Ordering::SeqCst);
        (n != 0).then(|| i32::try_from(n).unwrap_or(0))
    }

    /// Catch `sig` as the handler would (tests: a signal at a chosen
    /// point of a run, without one sent to the test process).
    #[cfg(test)]
    pub(crate) fn catch(&self, sig: i32) {
        self.sig
            .store(usize::try_from(sig).unwrap_or(0), Ordering::SeqCst);
        self.asked.store(true, Ordering::SeqCst);
    }

    /// Ask every holder of this flag to stop (no signal).
    pub fn request(&self) {
        self.asked.store(true, Ordering::SeqCst);
    }

    /// True once a stop was asked for: a signal caught or [`Stop::request`].
    pub fn requested(&self) -> bool {
        self.asked.load(Ordering::SeqCst) || self.caught().is_some()
    }

    /// Sleep until `due`, or return early with the signal number once one
    /// is caught. Sleeps in `clock_nanosleep` until the absolute deadline
    /// (CLOCK_MONOTONIC, which `Instant` reads): a caught signal
    /// interrupts it (EINTR) and is seen at once, with no thread, pipe or
    /// wake-up between samples. A signal caught in the instant between
    /// the check and the call is seen at the deadline.
    pub fn sleep_until(&self, due: Instant) -> Option<i32> {
        self.sleep_to(due).err()
    }

    /// [`Stop::sleep_until`], saying when it woke: `Ok` with the clock
    /// read that saw `due` pass, `Err` with the signal caught.
    pub fn sleep_to(&self, due: Instant) -> Result<Instant, i32> {
        use nix::time::{clock_nanosleep, ClockId, ClockNanosleepFlags};
        loop {
            if let Some(sig) = self.caught() {
                return Err(sig);
            }
            let now = Instant::now();
            if due <= now {
                return Ok(now);
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

/// Whether this process ignores SIGHUP (`nohup`): its disposition, as
/// `sigaction` reports it without changing it. Not known: not ignored.
#[allow(unsafe_code)]
fn hangup_ignored() -> bool {
    use nix::libc;
    // SAFETY: a zeroed sigaction is a valid value of the C struct, and a
    // null new action only reads the current one into `old`
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Drift-free pacing: the n-th tick is due at `start + n × interval`.
/// [`PacedRun`] adds the end of a run and the stop flag.
pub struct Ticker {
    start: Instant,
    interval: Duration,
    n: u32,
}

impl Ticker {
    pub fn new(interval: Duration) -> Self {
        Ticker::starting_at(Instant::now(), interval)
    }

    /// A ticker whose tick 0 is `start`.
    pub fn starting_at(start: Instant, interval: Duration) -> Self {
        Ticker {
            start,
            interval,
            n: 0,
        }
    }

    /// Tick 0.
    pub fn start(&self) -> Instant {
        self.start
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// The due time of the next tick (no sleep).
    pub fn next_due(&mut self) -> Instant {
        self.n = self.n.saturating_add(1);
        self.start + self.interval.saturating_mul(self.n)
    }

    /// Like [`Ticker::wait`], but returns early with the signal number
    /// once `stop` has caught one (see [`Stop::sleep_until`]).
    pub fn wait_stop(&mut self, stop: &Stop) -> Option<i32> {
        let due = self.next_due();
        stop.sleep_until(due)
    }

    /// Sleep until the next tick is due (returns at once if it is late).
    pub fn wait(&mut self) {
        let due = self.next_due();
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_request_stops_every_clone_of_the_flag_without_a_signal() {
        let stop = Stop::install().unwrap();
        let ui = stop.clone();
        assert!(!ui.requested() && ui.caught().is_none());
        stop.request();
        assert!(ui.requested(), "clones share the flag");
        assert_eq!(ui.caught(), None, "no signal was caught");
        let due = Instant::now() + Duration::from_millis(5);
        assert_eq!(ui.sleep_until(due), None, "sleeps until a signal only");
    }
}
