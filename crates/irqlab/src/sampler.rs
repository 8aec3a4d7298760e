//! Sampler layer. [`LiveSampler`] (`live.rs`) is THE repeated sampler
//! every consumer uses (top, the TUI, show --interval; later serve,
//! record, trace): it yields [`Frame`]s from a [`SnapshotSource`], the
//! host being [`HostSource`] (`host_source.rs`).
//!
//! This file: [`Sampler`], the low-level reader of the statistics files
//! through [`HostFs`] into a reused [`Snapshot`], with timestamps, and
//! [`Ticker`], drift-free pacing of repeated samples (deadline = start +
//! n × interval, so sleep jitter never adds up).
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
pub mod host_source;
pub mod live;
pub mod strategy;
pub mod targeted;

use crate::host::HostFs;
use anyhow::anyhow;
pub use clock::SelfCost;
pub use host_source::HostSource;
use irqlab_core::{Interrupts, ParseError, Snapshot};
pub use live::{Frame, LivePlan, LiveSampler, SnapshotSource};
use std::time::{Duration, Instant};
pub use strategy::Strategy;
pub use targeted::Targeted;

/// A statistics file the sampler can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Interrupts,
    Softirqs,
    Stat,
}

impl Source {
    /// Root-relative path.
    pub fn rel(self) -> &'static str {
        match self {
            Source::Interrupts => "proc/interrupts",
            Source::Softirqs => "proc/softirqs",
            Source::Stat => "proc/stat",
        }
    }

    pub const ALL: [Source; 3] = [Source::Interrupts, Source::Softirqs, Source::Stat];
}

/// Reads snapshots from one root.
pub struct Sampler {
    fs: HostFs,
    sources: Vec<Source>,
    /// Reads the interrupt counts instead of `/proc/interrupts` when set.
    targeted: Option<Targeted>,
    /// Files that could not be opened, with the reason (reported once).
    pub missing: Vec<(Source, String)>,
}

impl Sampler {
    /// A sampler for `sources` under `fs`'s root.
    pub fn new(fs: HostFs, sources: &[Source]) -> Self {
        Sampler {
            fs,
            sources: sources.to_vec(),
            targeted: None,
            missing: Vec::new(),
        }
    }

    /// Read interrupt counts through `t` (`Some`) or the full file (`None`).
    pub fn set_targeted(&mut self, t: Option<Targeted>) {
        self.targeted = t;
    }

    /// The targeted reader, if installed.
    pub fn targeted(&self) -> Option<&Targeted> {
        self.targeted.as_ref()
    }

    /// The strategy [`Sampler::sample`] uses for interrupt counts.
    pub fn strategy(&self) -> Strategy {
        match self.targeted {
            Some(_) => Strategy::PerCpuCount,
            None => Strategy::ProcInterrupts,
        }
    }

    /// Mutable access to the gateway (kept-descriptor reads by callers).
    pub fn fs_mut(&mut self) -> &mut HostFs {
        &mut self.fs
    }

    /// The gateway (for metadata reads by callers).
    pub fn fs(&self) -> &HostFs {
        &self.fs
    }

    /// Read every source into `snap`, reusing its models. A file that cannot
    /// be opened is recorded in `missing` and left `None`; a file that does
    /// not parse is an error. Fails when no source at all is readable.
    pub fn sample(&mut self, snap: &mut Snapshot) -> anyhow::Result<()> {
        let stamp = clock::now()?;
        snap.mono_ns = stamp.mono_ns;
        snap.wall_ns = stamp.wall_ns;
        self.read_all(snap)
    }

    fn read_all(&mut self, snap: &mut Snapshot) -> anyhow::Result<()> {
        let mut any = false;
        for i in 0..self.sources.len() {
            let Some(&src) = self.sources.get(i) else {
                break;
            };
            if let (Source::Interrupts, Some(t)) = (src, self.targeted.as_mut()) {
                let model = snap.interrupts.get_or_insert_with(Interrupts::default);
                t.read_into(&mut self.fs, model)?;
                any = true;
                continue;
            }
            let path = self.fs.path(src.rel());
            if src == Source::Interrupts {
                // streamed: a 1152-CPU file never needs a 13 MB buffer
                let model = snap.interrupts.get_or_insert_with(Interrupts::default);
                match read_interrupts(&mut self.fs, model) {
                    Ok(()) => any = true,
                    Err(Streamed::Parse(e)) => return Err(located(&path, &e)),
                    Err(Streamed::Io(e)) if crate::host::is_refusal(&e) => return Err(e.into()),
                    Err(Streamed::Io(e)) => {
                        if !self.missing.iter().any(|(s, _)| *s == src) {
                            self.missing.push((src, e.to_string()));
                        }
                        clear(snap, src);
                    }
                }
                continue;
            }
            let bytes = match self.fs.read(src.rel()) {
                Ok(b) => b,
                // a special file or an endless one is a broken tree, not an
                // absent source
                Err(e) if crate::host::is_refusal(&e) => return Err(e.into()),
                Err(e) => {
                    if !self.missing.iter().any(|(s, _)| *s == src) {
                        self.missing.push((src, e.to_string()));
                    }
                    clear(snap, src);
                    continue;
                }
            };
            parse_source(src, bytes, snap).map_err(|e| located(&path, &e))?;
            any = true;
        }
        if any {
            Ok(())
        } else {
            Err(anyhow!(
                "nothing readable under {}: no proc/interrupts, proc/softirqs or proc/stat",
                self.fs.root().display()
            ))
        }
    }
}

/// Why a streamed read of `/proc/interrupts` stopped.
enum Streamed {
    Io(std::io::Error),
    Parse(ParseError),
}

impl From<std::io::Error> for Streamed {
    fn from(e: std::io::Error) -> Self {
        Streamed::Io(e)
    }
}

/// Re-parse `/proc/interrupts` into `model` line by line as it is read
/// (kept descriptor, buffer of about `host::STREAM_CHUNK`).
fn read_interrupts(fs: &mut HostFs, model: &mut Interrupts) -> Result<(), Streamed> {
    let mut refill = model.refill();
    fs.read_lines(Source::Interrupts.rel(), |line| {
        refill.line(line).map_err(Streamed::Parse)
    })?;
    refill.finish().map_err(Streamed::Parse)
}

fn clear(snap: &mut Snapshot, src: Source) {
    match src {
        Source::Interrupts => snap.interrupts = None,
        Source::Softirqs => snap.softirqs = None,
        Source::Stat => snap.stat = None,
    }
}

fn parse_source(src: Source, bytes: &[u8], snap: &mut Snapshot) -> Result<(), ParseError> {
    match src {
        Source::Interrupts => snap
            .interrupts
            .get_or_insert_with(Interrupts::default)
            .parse_into(bytes),
        Source::Softirqs => snap
            .softirqs
            .get_or_insert_with(Default::default)
            .parse_into(bytes),
        Source::Stat => snap
            .stat
            .get_or_insert_with(Default::default)
            .parse_into(bytes),
    }
}

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
