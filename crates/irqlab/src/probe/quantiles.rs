//! Per-row statistics of `probe`: wall and thread-CPU time quantiles per
//! read, read calls and bytes per read, and the batch's `ru_stime` per
//! read. Pure: samples in, numbers out; quantiles are the numpy-linear
//! ones of `stats::describe`, rounded to whole nanoseconds (the clocks'
//! resolution: digits below it are interpolation noise).
//!
//! One system-time source per run, stated: per read, the thread CPU clock
//! (CLOCK_THREAD_CPUTIME_ID, ns resolution) measured inside the wall
//! window — a read is a system call, so that is its kernel time plus the
//! few ns of the syscall wrappers; it is never above the wall time.
//! `ru_stime` is tick-sampled (the kernel splits CPU time into user and
//! system by ticks) and cannot time one read: it is reported only as the
//! batch total divided by the reads, never per read.

use super::measure::Batch;
use crate::stats::describe::describe;

/// The clock behind the per-read CPU time, as the outputs name it.
pub const CPU_CLOCK: &str = "CLOCK_THREAD_CPUTIME_ID";

/// What one timed read (of every file of a target) cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadSample {
    /// CLOCK_MONOTONIC around the read.
    pub wall_ns: u64,
    /// Thread CPU clock around the read (inside the wall window, ≤ wall).
    pub cpu_ns: u64,
    /// `read` system calls (including the final 0-byte read).
    pub calls: u32,
    /// Bytes returned.
    pub bytes: u64,
}

/// min, p50, p90, p99, max of a distribution (ns).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Quantiles {
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Quantiles {
    /// Quantiles of `values` rounded to whole units; all zero when empty.
    pub fn of(values: &[f64]) -> Self {
        describe(values).map_or_else(Quantiles::default, |d| Quantiles {
            min: d.min.round(),
            p50: d.p50.round(),
            p90: d.p90.round(),
            p99: d.p99.round(),
            max: d.max.round(),
        })
    }
}

/// Everything the outputs print for one target × method × buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadSummary {
    pub reads: usize,
    pub wall_values: Vec<f64>,
    pub wall: Quantiles,
    pub cpu_values: Vec<f64>,
    pub cpu: Quantiles,
    /// `ru_stime` over the batch divided by the reads (≤ the batch's CPU
    /// time per read).
    pub rusage_sys_per_read_ns: f64,
    pub calls_per_read: f64,
    pub bytes_per_read: f64,
}

/// `v` rounded to 3 decimals (means of small integers: no float noise).
fn milli(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Summarize one batch; `None` when it has no samples.
pub fn summarize(batch: &Batch) -> Option<ReadSummary> {
    let samples = &batch.samples;
    if samples.is_empty() {
        return None;
    }
    let n = samples.len() as f64;
    let wall_values: Vec<f64> = samples.iter().map(|s| s.wall_ns as f64).collect();
    let cpu_values: Vec<f64> = samples
        .iter()
        .map(|s| s.cpu_ns.min(s.wall_ns) as f64)
        .collect();
    let rusage = batch.rusage_sys_ns.min(batch.cpu_ns) as f64 / n;
    Some(ReadSummary {
        reads: samples.len(),
        wall: Quantiles::of(&wall_values),
        wall_values,
        cpu: Quantiles::of(&cpu_values),
        cpu_values,
        rusage_sys_per_read_ns: milli(rusage),
        calls_per_read: milli(samples.iter().map(|s| f64::from(s.calls)).sum::<f64>() / n),
        bytes_per_read: milli(samples.iter().map(|s| s.bytes as f64).sum::<f64>() / n),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn batch(samples: Vec<ReadSample>, rusage_sys_ns: u64, cpu_ns: u64) -> Batch {
        Batch {
            samples,
            rusage_sys_ns,
            cpu_ns,
            ..Batch::default()
        }
    }

    fn sample(wall_ns: u64, cpu_ns: u64) -> ReadSample {
        ReadSample {
            wall_ns,
            cpu_ns,
            calls: 2,
            bytes: 2252,
        }
    }

    #[test]
    fn quantiles_are_numpy_linear_in_whole_ns() {
        let v: Vec<f64> = (1..=101).map(f64::from).collect();
        let q = Quantiles::of(&v);
        assert_eq!(
            (q.min, q.p50, q.p90, q.p99, q.max),
            (1.0, 51.0, 91.0, 100.0, 101.0)
        );
        let q = Quantiles::of(&[68_000.0, 68_104.0, 68_200.0, 69_000.0]);
        assert_eq!(q.p90, q.p90.round(), "no interpolation noise");
        assert_eq!(Quantiles::of(&[]), Quantiles::default());
    }

    #[test]
    fn per_read_cpu_time_never_exceeds_wall_time() {
        let samples = vec![sample(54_500, 1_444_500), sample(80_000, 79_000)];
        let s = summarize(&batch(samples, 10_000_000, 1_500_000)).unwrap();
        assert!(s.cpu.max <= s.wall.max && s.cpu.min <= s.wall.min);
        assert_eq!(s.cpu_values, [54_500.0, 79_000.0]);
        // ru_stime over the batch is bounded by the batch's CPU time.
        assert_eq!(s.rusage_sys_per_read_ns, 750_000.0);
    }

    #[test]
    fn summary_counts_calls_bytes_and_reads() {
        let samples: Vec<ReadSample> = (0..100).map(|i| sample(80_000 + i, 78_000 + i)).collect();
        let s = summarize(&batch(samples, 4_000_000, 7_900_000)).unwrap();
        assert_eq!(s.reads, 100);
        assert_eq!(s.calls_per_read, 2.0);
        assert_eq!(s.bytes_per_read, 2252.0);
        assert_eq!((s.wall.min, s.wall.max), (80_000.0, 80_099.0));
        assert_eq!((s.cpu.min, s.cpu.max), (78_000.0, 78_099.0));
        assert_eq!(s.rusage_sys_per_read_ns, 40_000.0);
        assert_eq!(s.wall_values.len(), 100);
        assert!(summarize(&Batch::default()).is_none());
    }

    #[test]
    fn means_carry_no_float_noise() {
        let samples = vec![
            ReadSample {
                calls: 1,
                ..sample(1, 1)
            },
            ReadSample {
                calls: 2,
                ..sample(1, 1)
            },
            ReadSample {
                calls: 2,
                ..sample(1, 1)
            },
        ];
        let s = summarize(&batch(samples, 1, 1)).unwrap();
        assert_eq!(s.calls_per_read, 1.667);
    }
}
