//! Per-row statistics of `probe`: wall-time quantiles per read, system
//! time per read (or per batch of reads when `ru_stime` is too coarse to
//! resolve one read), read calls and bytes per read. Pure: samples in,
//! numbers out; quantiles are the numpy-linear ones of `stats::describe`.

use crate::stats::describe::describe;

/// What one timed read (of every file of a target) cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadSample {
    /// CLOCK_MONOTONIC around the read.
    pub wall_ns: u64,
    /// `ru_stime` (RUSAGE_THREAD) delta around the read.
    pub sys_ns: u64,
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
    /// Quantiles of `values`; all zero when empty.
    pub fn of(values: &[f64]) -> Self {
        describe(values).map_or_else(Quantiles::default, |d| Quantiles {
            min: d.min,
            p50: d.p50,
            p90: d.p90,
            p99: d.p99,
            max: d.max,
        })
    }
}

/// System time per read.
#[derive(Debug, Clone, PartialEq)]
pub struct SysTime {
    /// Reads per value: 1 when single reads are resolved, else the batch size.
    pub batch: usize,
    /// Smallest non-zero per-read delta seen (the clock's granularity), 0 if none.
    pub quantum_ns: u64,
    /// Per-read deltas, or per-read means of consecutive batches.
    pub values: Vec<f64>,
    pub q: Quantiles,
}

/// Everything the outputs print for one target × method × buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub reads: usize,
    pub wall_values: Vec<f64>,
    pub wall: Quantiles,
    pub sys: SysTime,
    pub calls_per_read: f64,
    pub bytes_per_read: f64,
}

/// A batch must hold at least this many clock quanta of system time.
const QUANTA_PER_BATCH: u64 = 10;
/// More zero deltas than this share means single reads are not resolved.
const MAX_ZERO_SHARE: f64 = 0.1;

/// Summarize the samples of one row; `None` when there are none.
pub fn summarize(samples: &[ReadSample]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let n = samples.len() as f64;
    let wall_values: Vec<f64> = samples.iter().map(|s| s.wall_ns as f64).collect();
    let wall = Quantiles::of(&wall_values);
    let sys_deltas: Vec<u64> = samples.iter().map(|s| s.sys_ns).collect();
    let sys = sys_time(&sys_deltas, wall.p50);
    Some(Summary {
        reads: samples.len(),
        wall_values,
        wall,
        sys,
        calls_per_read: samples.iter().map(|s| f64::from(s.calls)).sum::<f64>() / n,
        bytes_per_read: samples.iter().map(|s| s.bytes as f64).sum::<f64>() / n,
    })
}

/// Per-read system time, batched when the deltas are quantised: a single
/// read is resolved when the clock quantum is at most a tenth of the
/// median wall time and few deltas are zero.
pub fn sys_time(deltas: &[u64], wall_p50: f64) -> SysTime {
    let quantum_ns = deltas.iter().copied().filter(|&d| d > 0).min().unwrap_or(0);
    let batch = batch_size(deltas, quantum_ns, wall_p50);
    let values: Vec<f64> = if batch == 1 {
        deltas.iter().map(|&d| d as f64).collect()
    } else {
        deltas
            .chunks_exact(batch)
            .map(|c| c.iter().sum::<u64>() as f64 / c.len() as f64)
            .collect()
    };
    let q = Quantiles::of(&values);
    SysTime {
        batch,
        quantum_ns,
        values,
        q,
    }
}

fn batch_size(deltas: &[u64], quantum_ns: u64, wall_p50: f64) -> usize {
    let n = deltas.len().max(1);
    if quantum_ns == 0 {
        return n;
    }
    let zeros = deltas.iter().filter(|&&d| d == 0).count() as f64;
    let resolved = (quantum_ns * QUANTA_PER_BATCH) as f64 <= wall_p50
        && zeros / n as f64 <= MAX_ZERO_SHARE;
    if resolved {
        return 1;
    }
    let mean = deltas.iter().sum::<u64>() as f64 / n as f64;
    let want = (quantum_ns * QUANTA_PER_BATCH) as f64 / mean.max(1.0);
    (want.ceil() as usize).clamp(2, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(wall_ns: u64, sys_ns: u64) -> ReadSample {
        ReadSample {
            wall_ns,
            sys_ns,
            calls: 2,
            bytes: 2252,
        }
    }

    #[test]
    fn quantiles_are_numpy_linear() {
        let v: Vec<f64> = (1..=101).map(f64::from).collect();
        let q = Quantiles::of(&v);
        assert_eq!((q.min, q.p50, q.p90, q.p99, q.max), (1.0, 51.0, 91.0, 100.0, 101.0));
        let q = Quantiles::of(&[10.0, 20.0]);
        assert!((q.p90 - 19.0).abs() < 1e-9);
        assert_eq!(Quantiles::of(&[]), Quantiles::default());
    }

    #[test]
    fn resolved_sys_time_is_per_read() {
        let samples: Vec<ReadSample> = (0..100).map(|i| sample(80_000 + i, 75_000)).collect();
        let s = summarize(&samples).unwrap();
        assert_eq!(s.reads, 100);
        assert_eq!(s.sys.batch, 1);
        assert_eq!(s.sys.quantum_ns, 75_000);
        assert_eq!(s.sys.values.len(), 100);
        assert_eq!(s.calls_per_read, 2.0);
        assert_eq!(s.bytes_per_read, 2252.0);
        assert_eq!(s.wall.min, 80_000.0);
        assert_eq!(s.wall.max, 80_099.0);
        assert_eq!(s.wall_values.len(), 100);
    }

    #[test]
    fn tick_quantised_sys_time_is_batched() {
        // 4 ms ticks: one read in 50 sees a tick, the others see nothing.
        let deltas: Vec<u64> = (0..1000)
            .map(|i| if i % 50 == 0 { 4_000_000 } else { 0 })
            .collect();
        let s = sys_time(&deltas, 80_000.0);
        assert_eq!(s.quantum_ns, 4_000_000);
        // mean 80 µs per read, 10 quanta = 40 ms -> 500 reads per batch.
        assert_eq!(s.batch, 500);
        assert_eq!(s.values, vec![80_000.0, 80_000.0]);
    }

    #[test]
    fn microsecond_clock_batches_short_reads() {
        // 5 µs reads with a 1 µs clock: quantum too big for one read.
        let deltas: Vec<u64> = (0..100).map(|i| [1_000, 5_000, 9_000][i % 3]).collect();
        let s = sys_time(&deltas, 5_000.0);
        assert_eq!((s.batch, s.quantum_ns), (2, 1_000));
        assert_eq!(s.values.len(), 50);
    }

    #[test]
    fn no_sys_time_at_all_is_one_batch() {
        let s = sys_time(&[0, 0, 0, 0], 1_000.0);
        assert_eq!((s.batch, s.quantum_ns), (4, 0));
        assert_eq!(s.values, vec![0.0]);
        assert!(summarize(&[]).is_none());
    }
}
