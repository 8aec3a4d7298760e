//! Latency histogram with bounded memory (log-linear buckets, ~1.6 %
//! relative precision) so long trials at high rates need no sample vectors.
//! Per-thread histograms merge into one; percentiles come out in ns.
//!
//! Pure arithmetic: no clock, no threads.

use crate::bench::metric_value::{Direction, Metric};

/// Sub-buckets per power of two (precision 1/64).
const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;
/// Powers of two covered (values up to 2^48 ns ≈ 3 days saturate).
const GROUPS: usize = 48;

/// A histogram of nanosecond values.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; (GROUPS + 1) * SUB],
            total: 0,
        }
    }
}

/// Bucket of a value: values below `SUB` map linearly, above that by
/// (power of two, top `SUB_BITS` bits below the leading one).
fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let lead = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = lead - SUB_BITS;
    let group = (shift + 1) as usize;
    let sub = ((v >> shift) as usize) & (SUB - 1);
    (group.min(GROUPS) * SUB) + sub
}

/// Representative value (midpoint) of a bucket.
fn value_of(b: usize) -> u64 {
    let group = b / SUB;
    let sub = (b % SUB) as u64;
    if group == 0 {
        return sub;
    }
    let shift = (group - 1) as u32;
    let low = (SUB as u64 + sub) << shift;
    low + ((1u64 << shift) >> 1)
}

impl Histogram {
    /// Count one value.
    pub fn record(&mut self, ns: u64) {
        if let Some(c) = self.counts.get_mut(bucket(ns)) {
            *c += 1;
            self.total += 1;
        }
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// Add another histogram's counts.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }

    /// The `q`-quantile (0..=1) in ns, `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(value_of(b));
            }
        }
        None
    }

    /// Metrics `<prefix>_p50_ns` etc. for the given percentiles (lower is
    /// better); NaN values when nothing was recorded.
    pub fn metrics(&self, prefix: &str, percentiles: &[u32]) -> Vec<Metric> {
        percentiles
            .iter()
            .map(|&p| {
                let v = self
                    .quantile(f64::from(p) / 100.0)
                    .map_or(f64::NAN, |v| v as f64);
                Metric::new(format!("{prefix}_p{p}_ns"), v, "ns", Direction::Lower)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_exact() {
        let mut h = Histogram::default();
        for v in 0..10 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(4));
        assert_eq!(h.quantile(1.0), Some(9));
        assert_eq!(h.len(), 10);
    }

    #[test]
    fn relative_precision() {
        for v in [100u64, 1_000, 12_345, 999_999, 5_000_000_000] {
            let mut h = Histogram::default();
            h.record(v);
            let got = h.quantile(0.5).unwrap() as f64;
            let err = (got - v as f64).abs() / v as f64;
            assert!(err < 0.02, "{v} -> {got}");
        }
    }

    #[test]
    fn percentiles_of_uniform() {
        let mut a = Histogram::default();
        let mut b = Histogram::default();
        for v in 1..=5_000u64 {
            a.record(v * 10);
            b.record((v + 5_000) * 10);
        }
        a.merge(&b);
        let p50 = a.quantile(0.5).unwrap() as f64;
        let p99 = a.quantile(0.99).unwrap() as f64;
        assert!((p50 - 50_000.0).abs() / 50_000.0 < 0.02, "{p50}");
        assert!((p99 - 99_000.0).abs() / 99_000.0 < 0.02, "{p99}");
    }

    #[test]
    fn huge_values_saturate_and_empty_is_none() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.5), None);
        h.record(u64::MAX);
        assert!(h.quantile(0.5).is_some());
        let m = Histogram::default().metrics("rtt", &[50]);
        assert_eq!(m[0].name, "rtt_p50_ns");
        assert!(m[0].value.is_nan());
    }
}
