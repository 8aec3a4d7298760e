//! Per-row statistics of `probe`: wall, thread-CPU and system time
//! quantiles per read, read calls and bytes per read. System time is the
//! `ru_stime` delta when that clock resolves one read, else the thread CPU
//! clock around the read; the `ru_stime` mean over all reads is kept as the
//! batch cross-check. Pure: samples in,
//! numbers out; quantiles are the numpy-linear ones of `stats::describe`.

use crate::stats::describe::describe;

/// What one timed read (of every file of a target) cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadSample {
    /// CLOCK_MONOTONIC around the read.
    pub wall_ns: u64,
    /// Thread CPU clock (CLOCK_THREAD_CPUTIME_ID) delta around the read.
    pub cpu_ns: u64,
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

/// Where the per-read system time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SysSource {
    /// `ru_stime` deltas around each read (the clock resolves one read).
    Rusage,
    /// `ru_stime` is quantised (tick-based accounting, 1 µs timeval): the
    /// thread CPU clock around the read instead. Inside that window the
    /// only user-mode code is the syscall wrappers, so it is system time
    /// to within tens of nanoseconds.
    CpuClock,
}

/// System time per read.
#[derive(Debug, Clone, PartialEq)]
pub struct SysTime {
    pub source: SysSource,
    /// Apparent `ru_stime` granularity (smallest positive delta or gap
    /// between deltas), 0 if every delta was 0.
    pub quantum_ns: u64,
    /// Share of reads whose `ru_stime` delta was zero.
    pub zero_share: f64,
    /// Sum of the `ru_stime` deltas divided by the reads (the batch mean).
    pub rusage_mean_ns: f64,
    pub values: Vec<f64>,
    pub q: Quantiles,
}

/// Everything the outputs print for one target × method × buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub reads: usize,
    pub wall_values: Vec<f64>,
    pub wall: Quantiles,
    pub cpu_values: Vec<f64>,
    pub cpu: Quantiles,
    pub sys: SysTime,
    pub calls_per_read: f64,
    pub bytes_per_read: f64,
}

/// One read is resolved when the quantum is at most this share of its wall time …
const MAX_QUANTUM_SHARE: f64 = 0.1;
/// … and at most this share of the per-read deltas is zero.
const MAX_ZERO_SHARE: f64 = 0.1;

/// Summarize the samples of one row; `None` when there are none.
pub fn summarize(samples: &[ReadSample]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let n = samples.len() as f64;
    let wall_values: Vec<f64> = samples.iter().map(|s| s.wall_ns as f64).collect();
    let wall = Quantiles::of(&wall_values);
    let cpu_values: Vec<f64> = samples.iter().map(|s| s.cpu_ns as f64).collect();
    let cpu = Quantiles::of(&cpu_values);
    let sys = sys_time(samples, wall.p50);
    Some(Summary {
        reads: samples.len(),
        wall_values,
        wall,
        cpu_values,
        cpu,
        sys,
        calls_per_read: samples.iter().map(|s| f64::from(s.calls)).sum::<f64>() / n,
        bytes_per_read: samples.iter().map(|s| s.bytes as f64).sum::<f64>() / n,
    })
}

/// The clock's apparent granularity: the smallest positive delta or gap
/// between distinct deltas; 0 when every delta is 0.
fn quantum(deltas: impl Iterator<Item = u64>) -> u64 {
    let mut v: Vec<u64> = deltas.filter(|&d| d > 0).collect();
    v.sort_unstable();
    v.dedup();
    let first = v.first().copied().unwrap_or(0);
    v.windows(2)
        .filter_map(|w| match w {
            [a, b] => Some(b - a),
            _ => None,
        })
        .fold(first, u64::min)
}

/// Per-read system time: the `ru_stime` deltas when they resolve one read,
/// else the thread CPU clock around the read.
pub fn sys_time(samples: &[ReadSample], wall_p50: f64) -> SysTime {
    let n = samples.len().max(1) as f64;
    let quantum_ns = quantum(samples.iter().map(|s| s.sys_ns));
    let zero_share = samples.iter().filter(|s| s.sys_ns == 0).count() as f64 / n;
    let rusage_mean_ns = samples.iter().map(|s| s.sys_ns as f64).sum::<f64>() / n;
    let resolved = quantum_ns > 0
        && quantum_ns as f64 <= MAX_QUANTUM_SHARE * wall_p50
        && zero_share <= MAX_ZERO_SHARE;
    let (source, values): (SysSource, Vec<f64>) = if resolved {
        let v = samples.iter().map(|s| s.sys_ns as f64).collect();
        (SysSource::Rusage, v)
    } else {
        let v = samples.iter().map(|s| s.cpu_ns as f64).collect();
        (SysSource::CpuClock, v)
    };
    let q = Quantiles::of(&values);
    SysTime {
        source,
        quantum_ns,
        zero_share,
        rusage_mean_ns,
        values,
        q,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(wall_ns: u64, sys_ns: u64) -> ReadSample {
        ReadSample {
            wall_ns,
            cpu_ns: wall_ns - 2_000,
            sys_ns,
            calls: 2,
            bytes: 2252,
        }
    }

    #[test]
    fn quantiles_are_numpy_linear() {
        let v: Vec<f64> = (1..=101).map(f64::from).collect();
        let q = Quantiles::of(&v);
        assert_eq!(
            (q.min, q.p50, q.p90, q.p99, q.max),
            (1.0, 51.0, 91.0, 100.0, 101.0)
        );
        let q = Quantiles::of(&[10.0, 20.0]);
        assert!((q.p90 - 19.0).abs() < 1e-9);
        assert_eq!(Quantiles::of(&[]), Quantiles::default());
    }

    #[test]
    fn resolved_sys_time_is_per_read() {
        let samples: Vec<ReadSample> = (0..100)
            .map(|i| sample(80_000 + i, 75_000 + (i % 2) * 1000))
            .collect();
        let s = summarize(&samples).unwrap();
        assert_eq!(s.reads, 100);
        assert_eq!(s.sys.source, SysSource::Rusage);
        assert_eq!(s.sys.quantum_ns, 1_000);
        assert_eq!(s.sys.q.p50, 75_500.0);
        assert_eq!(s.sys.values.len(), 100);
        assert_eq!(s.calls_per_read, 2.0);
        assert_eq!(s.bytes_per_read, 2252.0);
        assert_eq!((s.wall.min, s.wall.max), (80_000.0, 80_099.0));
        assert_eq!((s.cpu.min, s.cpu.max), (78_000.0, 78_099.0));
        assert_eq!(s.wall_values.len(), 100);
    }

    #[test]
    fn quantum_is_smallest_value_or_gap() {
        assert_eq!(quantum([0, 0].into_iter()), 0);
        assert_eq!(quantum([70_000, 70_000].into_iter()), 70_000);
        assert_eq!(quantum([0, 75_000, 76_000, 78_000].into_iter()), 1_000);
        assert_eq!(quantum([0, 4_000_000, 8_000_000].into_iter()), 4_000_000);
    }

    #[test]
    fn tick_quantised_sys_time_is_split() {
        // 4 ms ticks: one read in 50 sees a tick, the others see nothing.
        let samples: Vec<ReadSample> = (0..1000)
            .map(|i| sample(80_000, if i % 50 == 0 { 4_000_000 } else { 0 }))
            .collect();
        let s = summarize(&samples).unwrap();
        assert_eq!(s.sys.quantum_ns, 4_000_000);
        assert_eq!(s.sys.source, SysSource::CpuClock);
        assert_eq!(s.sys.q.p50, 78_000.0);
        assert_eq!(s.sys.zero_share, 0.98);
        assert_eq!(s.sys.rusage_mean_ns, 80_000.0);
        assert_eq!(s.sys.values.len(), 1000);
    }

    #[test]
    fn microsecond_clock_is_too_coarse_for_short_reads() {
        let samples: Vec<ReadSample> = (0..100)
            .map(|i| sample(5_000, [1_000, 5_000, 9_000][i % 3]))
            .collect();
        let s = sys_time(&samples, 5_000.0);
        assert_eq!((s.source, s.quantum_ns), (SysSource::CpuClock, 1_000));
        let s = sys_time(&samples, 50_000.0);
        assert_eq!(s.source, SysSource::Rusage);
    }

    #[test]
    fn no_sys_time_at_all_uses_the_cpu_clock() {
        let samples = [sample(3_000, 0), sample(3_000, 0)];
        let s = sys_time(&samples, 3_000.0);
        assert_eq!((s.source, s.quantum_ns), (SysSource::CpuClock, 0));
        assert_eq!((s.q.p50, s.zero_share), (1_000.0, 1.0));
        assert!(summarize(&[]).is_none());
    }
}
