//! What `irqlab trace` reads from the kernel maps at one instant, in the
//! map layouts of `irqlab_bpf::maps` (built without its loader when the
//! `trace` feature is off, so the domain and its tests need no clang): cumulative per-CPU counters since attach, keyed like
//! the rows of /proc/interrupts and /proc/softirqs. Plain data, no I/O.

use serde::Serialize;

/// The map layouts, defined once in `crates/irqlab-bpf/src/maps.rs` (with
/// the C header): log2 histogram slots, count/total/histogram per CPU and
/// row, one softirq vector on one CPU, and the softirq names.
pub use irqlab_bpf::maps::{SoftirqStats, Stats, HIST_SLOTS, SOFTIRQ_NAMES};

/// Which kind of interrupt work a row is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceKey {
    /// A device IRQ's action (`irq:irq_handler_*`).
    Hardirq {
        /// Linux IRQ number (the /proc/interrupts label).
        irq: i32,
        /// Action name (truncated to 27 bytes by the BPF key).
        name: String,
    },
    /// An x86 system vector (`irq_vectors:<tracepoint>_*`).
    Vector {
        /// The /proc/interrupts row it counts into (`LOC`, `RES`, `CAL` …).
        label: String,
        /// Tracepoint stem (`call_function_single`).
        tracepoint: String,
    },
}

impl TraceKey {
    /// The /proc/interrupts label: `24`, `LOC`.
    pub fn label(&self) -> String {
        match self {
            TraceKey::Hardirq { irq, .. } => irq.to_string(),
            TraceKey::Vector { label, .. } => label.clone(),
        }
    }

    /// The name shown beside the label.
    pub fn name(&self) -> &str {
        match self {
            TraceKey::Hardirq { name, .. } => name,
            TraceKey::Vector { tracepoint, .. } => tracepoint,
        }
    }
}

/// The maps at one instant: cumulative since attach, `per_cpu[i]` is CPU `i`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// CLOCK_MONOTONIC at the read, ns.
    pub at_ns: u64,
    /// Hard IRQ actions and vectors.
    pub irqs: Vec<(TraceKey, Vec<Stats>)>,
    /// Softirq vectors by number (0 = HI … 9 = RCU).
    pub softirqs: Vec<(u32, Vec<SoftirqStats>)>,
}

impl Sample {
    /// CPUs of the per-CPU vectors (`per_cpu[i]` is CPU `i`): the longest.
    pub fn ncpu(&self) -> usize {
        self.irqs
            .iter()
            .map(|(_, v)| v.len())
            .chain(self.softirqs.iter().map(|(_, v)| v.len()))
            .max()
            .unwrap_or(0)
    }
}

/// The name of softirq vector `vec` (`NET_RX`), or `SOFTIRQ<n>`.
pub fn softirq_name(vec: u32) -> String {
    usize::try_from(vec)
        .ok()
        .and_then(|i| SOFTIRQ_NAMES.get(i))
        .map_or_else(|| format!("SOFTIRQ{vec}"), |s| (*s).to_string())
}

/// Interpolated quantile `q` (0..=1) of a log2 histogram, in ns: the value
/// lies in the slot where the cumulative count crosses `q`, placed
/// linearly inside `[2^(k-1), 2^k)`. `None` for an empty histogram.
pub fn quantile_ns(hist: &[u64; HIST_SLOTS], q: f64) -> Option<f64> {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return None;
    }
    let target = q.clamp(0.0, 1.0) * total as f64;
    let mut seen = 0u64;
    for (k, &n) in hist.iter().enumerate() {
        if n == 0 {
            continue;
        }
        if (seen + n) as f64 >= target {
            if k == 0 {
                return Some(0.0);
            }
            let lo = (1u64 << (k - 1)) as f64;
            let frac = (target - seen as f64) / n as f64;
            return Some(lo + frac.clamp(0.0, 1.0) * lo);
        }
        seen += n;
    }
    Some((1u64 << (HIST_SLOTS - 1)) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_fall_in_the_right_slot() {
        let mut h = [0; HIST_SLOTS];
        assert_eq!(quantile_ns(&h, 0.5), None);
        h[10] = 100; // [512, 1024)
        let p50 = quantile_ns(&h, 0.5).unwrap();
        assert!((512.0..1024.0).contains(&p50), "{p50}");
        h[20] = 1; // one outlier in [2^19, 2^20)
        let p99 = quantile_ns(&h, 0.99).unwrap();
        assert!(p99 < 1024.0, "{p99}");
        let p100 = quantile_ns(&h, 1.0).unwrap();
        assert!(p100 >= (1u64 << 19) as f64, "{p100}");
        h = [0; HIST_SLOTS];
        h[0] = 3;
        assert_eq!(quantile_ns(&h, 0.9), Some(0.0));
    }

    #[test]
    fn minus_saturates_and_add_sums() {
        let mut a = Stats {
            count: 5,
            total_ns: 50,
            ..Stats::default()
        };
        a.hist[3] = 5;
        let b = Stats {
            count: 7,
            ..Stats::default()
        };
        let d = a.minus(&b);
        assert_eq!((d.count, d.total_ns, d.hist[3]), (0, 50, 5));
        let mut s = Stats::default();
        s.add(&a);
        s.add(&a);
        assert_eq!((s.count, s.total_ns, s.hist[3]), (10, 100, 10));
    }

    #[test]
    fn softirq_names_match_the_kernel_order() {
        assert_eq!(softirq_name(3), "NET_RX");
        assert_eq!(softirq_name(9), "RCU");
        assert_eq!(softirq_name(12), "SOFTIRQ12");
    }
}
