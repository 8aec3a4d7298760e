//! Strategy decision: read the whole `/proc/interrupts`, or only the
//! selected IRQs' `/sys/kernel/irq/N/per_cpu_count` files?
//!
//! Decided once at start from a short measurement on this machine: a few
//! timed rounds of each (read + parse into a reused model), interleaved
//! after a warm-up, compared by median. Owns the measurement and the
//! explanation printed with `-v`; does not sample anything afterwards.

use super::targeted::Targeted;
use crate::host::HostFs;
use irqlab_core::Interrupts;
use serde::Serialize;
use std::time::Instant;

/// Rounds of each strategy timed at start.
pub const ROUNDS: usize = 20;

/// How the interrupt counts are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// The whole `/proc/interrupts`.
    ProcInterrupts,
    /// Only `/sys/kernel/irq/N/per_cpu_count` of the selected IRQs.
    PerCpuCount,
}

impl Strategy {
    /// The name used in JSON and `-v` output.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::ProcInterrupts => "proc_interrupts",
            Strategy::PerCpuCount => "per_cpu_count",
        }
    }
}

/// What the user asked for (`--strategy`); the sampler decides the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Choice {
    /// Measure both at start when the filter selects only numbered IRQs;
    /// take the cheaper.
    #[default]
    Auto,
    /// Always the whole `/proc/interrupts`.
    ProcInterrupts,
    /// `per_cpu_count` of the selected IRQs whenever possible.
    PerCpuCount,
}

/// The outcome of the start-up measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub strategy: Strategy,
    /// Median ns of one full-file read + parse.
    pub full_ns: u64,
    /// Median ns of one targeted read (all selected IRQs).
    pub targeted_ns: u64,
    pub rounds: usize,
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "strategy {}: median of {} reads: proc/interrupts {:.1} µs, per_cpu_count {:.1} µs",
            self.strategy.name(),
            self.rounds,
            self.full_ns as f64 / 1e3,
            self.targeted_ns as f64 / 1e3
        )
    }
}

/// Median of `v` (sorts it); 0 when empty.
pub fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

fn timed(f: &mut impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<u64> {
    let t = Instant::now();
    f()?;
    Ok(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX))
}

/// Medians (ns) of `rounds` runs of `a` and `b`, after one untimed warm-up
/// of each, interleaved so a change in background load hits both alike.
fn paired_medians(
    rounds: usize,
    mut a: impl FnMut() -> anyhow::Result<()>,
    mut b: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<(u64, u64)> {
    a()?;
    b()?;
    let (mut ta, mut tb) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for _ in 0..rounds {
        ta.push(timed(&mut a)?);
        tb.push(timed(&mut b)?);
    }
    Ok((median(&mut ta), median(&mut tb)))
}

/// Measure both strategies (read + parse into a reused model) and pick the
/// cheaper (ties go to the full file, which also sees new IRQs without
/// re-resolving).
pub fn decide(fs: &mut HostFs, targeted: &mut Targeted, rounds: usize) -> anyhow::Result<Decision> {
    let mut full_model = Interrupts::default();
    let mut small_model = Interrupts::default();
    let rel = super::StatFile::Interrupts.rel();
    let path = fs.path(rel);
    let fs = std::cell::RefCell::new(fs);
    let (full_ns, targeted_ns) = paired_medians(
        rounds,
        || {
            let mut fs = fs.borrow_mut();
            let bytes = fs.read_text(rel)?;
            full_model
                .parse_into(bytes)
                .map_err(|e| super::located(&path, &e))
        },
        || targeted.read_into(&mut fs.borrow_mut(), &mut small_model),
    )?;
    let strategy = if targeted_ns < full_ns {
        Strategy::PerCpuCount
    } else {
        Strategy::ProcInterrupts
    };
    Ok(Decision {
        strategy,
        full_ns,
        targeted_ns,
        rounds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_and_empty() {
        assert_eq!(median(&mut [5, 1, 3]), 3);
        assert_eq!(median(&mut [4, 1, 3, 2]), 3);
        assert_eq!(median(&mut []), 0);
    }

    #[test]
    fn decision_text_names_both_numbers() {
        let d = Decision {
            strategy: Strategy::PerCpuCount,
            full_ns: 80_000,
            targeted_ns: 3_000,
            rounds: 20,
        };
        let s = d.to_string();
        assert!(s.contains("per_cpu_count") && s.contains("80.0 µs") && s.contains("3.0 µs"));
    }
}
