//! [`Snapshot`]: one parse of the statistics files at one instant.
//!
//! Counters, not rates. Each file is optional (a capture may lack some).
//! Timestamps are supplied by the caller (this crate has no clock).

use crate::interrupts::Interrupts;
use crate::softirqs::Softirqs;
use crate::stat::Stat;

/// The statistics files read at one instant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// CLOCK_MONOTONIC nanoseconds at the start of the read.
    pub mono_ns: u64,
    /// Wall-clock nanoseconds since the Unix epoch at the start of the read.
    pub wall_ns: u64,
    pub interrupts: Option<Interrupts>,
    pub softirqs: Option<Softirqs>,
    pub stat: Option<Stat>,
}

impl Snapshot {
    /// Seconds elapsed from `earlier` to `self` (0 if the clock went back).
    pub fn elapsed_since(&self, earlier: &Snapshot) -> f64 {
        self.mono_ns.saturating_sub(earlier.mono_ns) as f64 / 1e9
    }
}
