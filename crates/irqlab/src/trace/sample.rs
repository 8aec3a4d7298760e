//! What `irqlab trace` reads from the kernel maps at one instant, in the
//! map layouts of `irqlab_bpf::maps` (built without its loader when the
//! `trace` feature is off, so the domain and its tests need no clang): cumulative per-CPU counters since attach, keyed like
//! the rows of /proc/interrupts and /proc/softirqs. Plain data, no I/O.

use serde::Serialize;

use irqlab_bpf::maps::{merge_split_keys, IrqKey};
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
        /// Not serialized: the one place a key is, a traced row, has its
        /// own `label` beside it (two would be a duplicate JSON key).
        #[serde(skip_serializing)]
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
    /// Hard IRQ runs the programs could not count, per CPU: the
    /// (IRQ, action) map was full (empty: none recorded).
    pub drops: Vec<u64>,
    /// Program runs the kernel skipped, cumulative since attach, per
    /// group of rows ([`super::missed`]; empty: none read).
    pub missed: super::missed::Missed,
}

impl Sample {
    /// CPUs of the per-CPU vectors (`per_cpu[i]` is CPU `i`): the longest.
    pub fn ncpu(&self) -> usize {
        self.irqs
            .iter()
            .map(|(_, v)| v.len())
            .chain(self.softirqs.iter().map(|(_, v)| v.len()))
            .chain(std::iter::once(self.drops.len()))
            .max()
            .unwrap_or(0)
    }
}

/// Whether any counter of `cur` is below the same counter of `prev`.
fn stats_back(cur: &Stats, prev: &Stats) -> bool {
    cur.count < prev.count
        || cur.total_ns < prev.total_ns
        || cur.hist.iter().zip(&prev.hist).any(|(c, p)| c < p)
}

/// [`stats_back`] for a softirq vector's counters.
fn soft_back(cur: &SoftirqStats, prev: &SoftirqStats) -> bool {
    stats_back(&cur.run, &prev.run)
        || stats_back(&cur.latency, &prev.latency)
        || cur.nested_irq_ns < prev.nested_irq_ns
        || cur.ksoftirqd_count < prev.ksoftirqd_count
        || cur.ksoftirqd_ns < prev.ksoftirqd_ns
}

/// Hold `cur`'s per-CPU values of each row at least at `prev`'s: a value
/// that went back (or a row that vanished) keeps `prev`'s, so what is
/// built from successive samples never sees a negative increment.
/// Returns the rows (`24 virtio0-input.0`, `NET_RX`) that went back.
fn hold<K: PartialEq + Clone, V: Clone + Default>(
    cur: &mut Vec<(K, Vec<V>)>,
    prev: &[(K, Vec<V>)],
    back: fn(&V, &V) -> bool,
    name: impl Fn(&K) -> String,
    out: &mut Vec<String>,
) {
    for (k, pv) in prev {
        let i = match cur.iter().position(|(ck, _)| ck == k) {
            Some(i) => i,
            None => {
                cur.push((k.clone(), Vec::new()));
                cur.len() - 1
            }
        };
        let Some((_, cv)) = cur.get_mut(i) else {
            continue;
        };
        if cv.len() < pv.len() {
            cv.resize(pv.len(), V::default());
        }
        let mut went_back = false;
        for (c, p) in cv.iter_mut().zip(pv) {
            if back(c, p) {
                *c = p.clone();
                went_back = true;
            }
        }
        if went_back {
            out.push(name(k));
        }
    }
}

impl Sample {
    /// Keep every cumulative counter at least where it was in `prev` (a
    /// sample of the same attach): the kernel's counters only grow, so a
    /// value below is a fault; it is held, and the rows are returned for a
    /// warning. Successive samples then never give a negative increment.
    pub fn hold_monotonic(&mut self, prev: &Sample) -> Vec<String> {
        let mut out = Vec::new();
        hold(
            &mut self.irqs,
            &prev.irqs,
            stats_back,
            |k| format!("{} {}", k.label(), k.name()),
            &mut out,
        );
        hold(
            &mut self.softirqs,
            &prev.softirqs,
            soft_back,
            |v| softirq_name(*v),
            &mut out,
        );
        if self.drops.len() < prev.drops.len() {
            self.drops.resize(prev.drops.len(), 0);
        }
        for (c, p) in self.drops.iter_mut().zip(&prev.drops) {
            *c = (*c).max(*p);
        }
        super::missed::hold(&mut self.missed, &prev.missed);
        out
    }
}

/// The hard IRQ map's entries as rows, one per (IRQ, action): keys that
/// are one action (bytes after the name's NUL differ) are folded first
/// (`irqlab_bpf::maps::merge_split_keys`), so no action is split over
/// rows that [`crate::trace::interval::between`] could pair wrongly.
pub fn hardirq_rows(entries: &[(IrqKey, Vec<Stats>)]) -> Vec<(TraceKey, Vec<Stats>)> {
    let mut merged = entries.to_vec();
    merge_split_keys(&mut merged);
    merged
        .into_iter()
        .map(|(k, v)| {
            (
                TraceKey::Hardirq {
                    irq: k.irq,
                    name: k.name(),
                },
                v,
            )
        })
        .collect()
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
    fn a_counter_that_went_back_is_held_and_named() {
        let key = TraceKey::Hardirq {
            irq: 36,
            name: "virtio1-req.0".into(),
        };
        let s = |c: u64| Stats {
            count: c,
            total_ns: c * 10,
            ..Stats::default()
        };
        let prev = Sample {
            at_ns: 1,
            irqs: vec![(key.clone(), vec![s(5), s(7)])],
            softirqs: vec![(3, vec![SoftirqStats::default(); 2])],
            drops: vec![1, 0],
            missed: Default::default(),
        };
        let mut cur = Sample {
            at_ns: 2,
            irqs: vec![(key.clone(), vec![s(4), s(9)])],
            softirqs: vec![],
            drops: vec![0, 0],
            missed: Default::default(),
        };
        let back = cur.hold_monotonic(&prev);
        assert_eq!(back, ["36 virtio1-req.0"]);
        assert_eq!(cur.irqs[0].1[0], s(5), "held");
        assert_eq!(cur.irqs[0].1[1], s(9), "the other CPU moved on");
        assert_eq!(cur.softirqs.len(), 1, "a vanished row is kept");
        assert_eq!(cur.drops, [1, 0]);
        let mut again = cur.clone();
        assert!(again.hold_monotonic(&cur).is_empty());
    }

    #[test]
    fn softirq_names_match_the_kernel_order() {
        assert_eq!(softirq_name(3), "NET_RX");
        assert_eq!(softirq_name(9), "RCU");
        assert_eq!(softirq_name(12), "SOFTIRQ12");
    }
}
