//! The map value layouts shared with `src/bpf/irqlab.h` (`#[repr(C)]`,
//! sizes asserted on both sides) and the vector ids of `VECTOR()` in
//! `src/bpf/irqlab.bpf.c`. Plain data: no kernel access here. The one
//! definition of these layouts: irqlab's `trace::sample` re-exports them
//! (and serializes them), so the C header, this file and the trace domain
//! cannot drift apart.

use serde::Serialize;

/// Slots of a log2 histogram: slot `k` counts values in `[2^(k-1), 2^k)`
/// ns, slot 0 counts 0 ns, the last slot everything above.
pub const HIST_SLOTS: usize = 32;
/// Bytes of an IRQ action name kept in a hard IRQ key.
pub const NAME_LEN: usize = 28;
/// Softirq vectors the map holds (the kernel has 10).
pub const SOFTIRQ_SLOTS: u32 = 16;

/// Count, total and log2 histogram of durations (`struct stats`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Completed runs (counted at exit).
    pub count: u64,
    /// Sum of their durations in ns.
    pub total_ns: u64,
    /// log2 histogram of the durations.
    pub hist: [u64; HIST_SLOTS],
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            count: 0,
            total_ns: 0,
            hist: [0; HIST_SLOTS],
        }
    }
}

impl Stats {
    /// `self - before`, saturating (the kernel's u64 counters never wrap
    /// in practice; a reset would show as a huge value, so it saturates).
    pub fn minus(&self, before: &Stats) -> Stats {
        let mut hist = [0; HIST_SLOTS];
        for (h, (a, b)) in hist.iter_mut().zip(self.hist.iter().zip(&before.hist)) {
            *h = a.saturating_sub(*b);
        }
        Stats {
            count: self.count.saturating_sub(before.count),
            total_ns: self.total_ns.saturating_sub(before.total_ns),
            hist,
        }
    }

    /// Add `other` into `self`.
    pub fn add(&mut self, other: &Stats) {
        self.count += other.count;
        self.total_ns += other.total_ns;
        for (h, o) in self.hist.iter_mut().zip(&other.hist) {
            *h += o;
        }
    }
}

/// Key of the hard IRQ map (`struct irq_key`): IRQ number and action name.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IrqKey {
    /// Linux IRQ number.
    pub irq: i32,
    /// Action name, NUL-padded (truncated to 27 bytes).
    pub name: [u8; NAME_LEN],
}

impl IrqKey {
    /// The action name as text (up to the first NUL).
    pub fn name(&self) -> String {
        let end = self.name.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
        String::from_utf8_lossy(self.name.get(..end).unwrap_or_default()).into_owned()
    }

    /// The key with every byte after the name's first NUL zeroed: the one
    /// key of an action whatever a scratch buffer held before it.
    pub fn canonical(&self) -> IrqKey {
        let mut k = *self;
        if let Some(end) = k.name.iter().position(|&b| b == 0) {
            for b in k.name.iter_mut().skip(end) {
                *b = 0;
            }
        }
        k
    }
}

/// Fold entries whose keys are one action (equal once
/// [`IrqKey::canonical`]) into one, summing their per-CPU stats, and make
/// every key canonical. The programs zero the key before filling it
/// (src/bpf/irqlab.bpf.c), so this finds nothing to fold; it keeps a key
/// written otherwise (an older object, a kernel quirk) from becoming
/// several rows of one action. Order: first occurrence.
pub fn merge_split_keys(entries: &mut Vec<(IrqKey, Vec<Stats>)>) {
    let mut out: Vec<(IrqKey, Vec<Stats>)> = Vec::with_capacity(entries.len());
    for (key, values) in entries.drain(..) {
        let key = key.canonical();
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, sum)) => {
                if sum.len() < values.len() {
                    sum.resize(values.len(), Stats::default());
                }
                for (s, v) in sum.iter_mut().zip(&values) {
                    s.add(v);
                }
            }
            None => out.push((key, values)),
        }
    }
    *entries = out;
}

/// One softirq vector on one CPU (`struct softirq_stats`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SoftirqStats {
    /// Entry -> exit, nested hard IRQs included (as bcc's softirqs).
    pub run: Stats,
    /// Hard IRQ and vector time spent inside those runs.
    pub nested_irq_ns: u64,
    /// Runs in `ksoftirqd/N`; the others ran at irq exit or `local_bh_enable`.
    pub ksoftirqd_count: u64,
    /// Their inclusive duration in ns.
    pub ksoftirqd_ns: u64,
    /// Latency from the first raise on this CPU to the entry.
    pub latency: Stats,
}

impl SoftirqStats {
    /// `self - before`.
    pub fn minus(&self, before: &SoftirqStats) -> SoftirqStats {
        SoftirqStats {
            run: self.run.minus(&before.run),
            nested_irq_ns: self.nested_irq_ns.saturating_sub(before.nested_irq_ns),
            ksoftirqd_count: self.ksoftirqd_count.saturating_sub(before.ksoftirqd_count),
            ksoftirqd_ns: self.ksoftirqd_ns.saturating_sub(before.ksoftirqd_ns),
            latency: self.latency.minus(&before.latency),
        }
    }

    /// Add `other` into `self`.
    pub fn add(&mut self, o: &SoftirqStats) {
        self.run.add(&o.run);
        self.nested_irq_ns += o.nested_irq_ns;
        self.ksoftirqd_count += o.ksoftirqd_count;
        self.ksoftirqd_ns += o.ksoftirqd_ns;
        self.latency.add(&o.latency);
    }
}

const _: () = assert!(std::mem::size_of::<Stats>() == 272);
const _: () = assert!(std::mem::size_of::<IrqKey>() == 32);
const _: () = assert!(std::mem::size_of::<SoftirqStats>() == 568);

// SAFETY: plain `#[repr(C)]` integers and arrays with no padding (sizes
// asserted above equal the sums of their fields): every bit pattern is valid.
#[cfg(feature = "loader")]
unsafe impl aya::Pod for Stats {}
// SAFETY: as above (i32 + 28 bytes, no padding).
#[cfg(feature = "loader")]
unsafe impl aya::Pod for IrqKey {}
// SAFETY: as above.
#[cfg(feature = "loader")]
unsafe impl aya::Pod for SoftirqStats {}

/// An x86 system vector traced through `irq_vectors:<name>_entry/exit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vector {
    /// Slot in the VECTORS map (the id in `VECTOR()`).
    pub id: u32,
    /// Tracepoint stem: `local_timer` for `local_timer_entry`.
    pub tracepoint: &'static str,
    /// The /proc/interrupts row it counts into (`CAL` takes two vectors).
    pub label: &'static str,
}

/// Every vector the BPF object has programs for, in id order.
pub const VECTORS: &[Vector] = &[
    Vector {
        id: 0,
        tracepoint: "local_timer",
        label: "LOC",
    },
    Vector {
        id: 1,
        tracepoint: "reschedule",
        label: "RES",
    },
    Vector {
        id: 2,
        tracepoint: "call_function",
        label: "CAL",
    },
    Vector {
        id: 3,
        tracepoint: "call_function_single",
        label: "CAL",
    },
    Vector {
        id: 4,
        tracepoint: "irq_work",
        label: "IWI",
    },
    Vector {
        id: 5,
        tracepoint: "x86_platform_ipi",
        label: "PLT",
    },
    Vector {
        id: 6,
        tracepoint: "thermal_apic",
        label: "TRM",
    },
    Vector {
        id: 7,
        tracepoint: "threshold_apic",
        label: "THR",
    },
    Vector {
        id: 8,
        tracepoint: "deferred_error_apic",
        label: "DFR",
    },
    Vector {
        id: 9,
        tracepoint: "error_apic",
        label: "ERR",
    },
    Vector {
        id: 10,
        tracepoint: "spurious_apic",
        label: "SPU",
    },
];

/// Softirq vector names in kernel order (`softirq_to_name`).
pub const SOFTIRQ_NAMES: &[&str] = &[
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_rust_agree_on_constants() {
        let h = include_str!("bpf/irqlab.h");
        assert!(h.contains(&format!("#define HIST_SLOTS {HIST_SLOTS}")));
        assert!(h.contains(&format!("#define NAME_LEN {NAME_LEN}")));
        assert!(h.contains(&format!("#define SOFTIRQ_SLOTS {SOFTIRQ_SLOTS}")));
    }

    #[test]
    fn every_vector_has_its_program_pair_in_the_c_source() {
        let c = include_str!("bpf/irqlab.bpf.c");
        for v in VECTORS {
            assert!(
                c.contains(&format!("VECTOR({}, {})", v.tracepoint, v.id)),
                "{v:?}"
            );
        }
    }

    fn key(irq: i32, bytes: &[u8]) -> IrqKey {
        let mut name = [0u8; NAME_LEN];
        name[..bytes.len()].copy_from_slice(bytes);
        IrqKey { irq, name }
    }

    fn stats(count: u64) -> Stats {
        Stats {
            count,
            total_ns: count * 100,
            ..Stats::default()
        }
    }

    #[test]
    fn two_keys_differing_only_after_the_nul_are_one_action() {
        // `virtio3-tx` written over `virtio1-req.0` without zeroing
        let clean = key(42, b"virtio3-tx");
        let split = key(42, b"virtio3-tx\0.0");
        assert_ne!(clean, split, "the raw keys differ (two map entries)");
        assert_eq!(split.canonical(), clean);
        assert_eq!(split.name(), "virtio3-tx");
        let mut entries = vec![
            (split, vec![stats(3), stats(0)]),
            (key(36, b"virtio1-req.0"), vec![stats(7), stats(1)]),
            (clean, vec![stats(1), stats(2)]),
            (key(42, b"virtio3-tx\0q"), vec![stats(0), stats(5)]),
        ];
        merge_split_keys(&mut entries);
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert_eq!(entries[0].0, clean);
        let counts: Vec<u64> = entries[0].1.iter().map(|s| s.count).collect();
        assert_eq!(counts, [4, 7]);
        assert_eq!(entries[0].1[1].total_ns, 700);
        assert_eq!(entries[1].0.name(), "virtio1-req.0");
    }

    #[test]
    fn the_programs_zero_the_whole_key_before_filling_it() {
        let c = include_str!("bpf/irqlab.bpf.c");
        let key_for = c
            .split("struct cpu_state *key_for(int irq)")
            .nth(1)
            .and_then(|s| s.split("\n}\n").next())
            .unwrap_or_default();
        let zero = key_for
            .find("__builtin_memset(&st->irq_key, 0, sizeof(st->irq_key))")
            .unwrap_or(usize::MAX);
        let set = key_for.find("st->irq_key.irq = irq;").unwrap_or(0);
        assert!(zero < set, "{key_for}");
        // both forms of the entry program take their key from it, before
        // the name is read into the key
        for head in ["int irq_handler_entry(", "int irq_handler_entry_btf("] {
            let entry = c
                .split(head)
                .nth(1)
                .and_then(|s| s.split("bpf_probe_read_kernel_str").next())
                .unwrap_or_default();
            assert!(entry.contains("= key_for("), "{head}: {entry}");
        }
    }

    /// Each program's own work must fall outside the durations it
    /// measures (docs/trace.md, "Where the timestamps are taken"): entry
    /// programs stamp the start last, exit programs stamp the end first.
    #[test]
    fn entries_stamp_last_and_exits_stamp_first() {
        let c = include_str!("bpf/irqlab.bpf.c");
        let body = |head: &str| {
            c.split(head)
                .nth(1)
                .and_then(|s| s.split("\n}\n").next())
                .unwrap_or_default()
                .to_string()
        };
        for exit in [
            "int irq_handler_exit(",
            "int irq_handler_exit_btf(",
            "int vec_exit(",
            "int softirq_exit(",
        ] {
            let b = body(exit);
            let first = b.lines().nth(2).unwrap_or_default();
            assert!(
                first.contains("u64 now = bpf_ktime_get_ns()"),
                "{exit}: {b}"
            );
        }
        for (entry, field) in [
            ("int irq_handler_entry(", "irq_start"),
            ("int irq_handler_entry_btf(", "irq_start"),
            ("int vec_entry(", "vec_start"),
            ("int softirq_entry(", "sirq_start"),
        ] {
            let b = body(entry);
            let tail: Vec<&str> = b.lines().rev().take(2).collect();
            assert_eq!(tail[0].trim(), "return 0;", "{entry}: {b}");
            assert_eq!(
                tail[1].trim(),
                format!("st->{field} = bpf_ktime_get_ns();"),
                "{entry}: {b}"
            );
        }
    }

    #[test]
    fn key_name_stops_at_nul() {
        let mut name = [0u8; NAME_LEN];
        name[..10].copy_from_slice(b"virtio0-re");
        assert_eq!(IrqKey { irq: 24, name }.name(), "virtio0-re");
    }
}
