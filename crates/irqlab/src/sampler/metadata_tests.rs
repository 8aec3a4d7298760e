//! Unit tests of the metadata cache (`metadata.rs`): the round-robin
//! re-read, the re-read of an IRQ counted outside its affinity, and what
//! does not trigger one.

use super::*;
use crate::filter::Filter;
use crate::sampler::Strategy;
use crate::threads::ThreadCpu;

const S: u64 = 1_000_000_000;

/// A source whose affinities are handed in by the test, counting reads.
#[derive(Default)]
struct Counting {
    reads: HashMap<u32, u32>,
    /// The affinity each IRQ reads as (default: the number of reads).
    fixed: HashMap<u32, String>,
}

impl SnapshotSource for Counting {
    fn read(&mut self, _: &mut Snapshot) -> anyhow::Result<()> {
        Ok(())
    }
    fn threads(&mut self, _: u64, out: &mut Vec<ThreadCpu>) {
        out.clear();
    }
    fn affinity(&mut self, irq: u32) -> Option<String> {
        let n = self.reads.entry(irq).or_default();
        *n += 1;
        Some(
            self.fixed
                .get(&irq)
                .cloned()
                .unwrap_or_else(|| n.to_string()),
        )
    }
    fn strategy(&self) -> Strategy {
        Strategy::ProcInterrupts
    }
    fn refresh(&mut self, _: &Snapshot, _: &Filter) -> anyhow::Result<bool> {
        Ok(false)
    }
    fn why(&self) -> &str {
        "counting"
    }
}

fn reads(src: &Counting) -> u32 {
    src.reads.values().sum()
}

/// A snapshot at `mono_ns` whose `/proc/interrupts` is `text`.
fn snap(mono_ns: u64, text: &str) -> Snapshot {
    Snapshot {
        mono_ns,
        interrupts: Some(Interrupts::parse(text.as_bytes()).unwrap()),
        ..Snapshot::default()
    }
}

/// Two CPUs, IRQs 24 and 25 with the given per-CPU counts.
fn two(a: [u64; 2], b: [u64; 2]) -> String {
    format!(
        "           CPU0       CPU1       \n 24: {} {}  IO-APIC 5-edge ACPI:Ged\n 25: {} {}  IO-APIC 6-edge ttyS0\nLOC: 100 200  Local timer interrupts\n",
        a[0], a[1], b[0], b[1]
    )
}

#[test]
fn affinities_are_read_again_a_share_each_sample_round_robin() {
    let mut src = Counting::default();
    let mut meta = Metadata {
        every_ns: 10 * S,
        ..Metadata::default()
    };
    let empty = Snapshot::default();
    let at = |ns: u64| Snapshot {
        mono_ns: ns,
        ..Snapshot::default()
    };
    meta.refresh_affinity(&mut src, &empty, &at(S));
    for irq in 0..20 {
        meta.affinity(&mut src, irq);
    }
    // 20 IRQs, one sample a second: two read again each sample
    for k in 2..=11 {
        meta.refresh_affinity(&mut src, &empty, &at(k * S));
        assert_eq!(reads(&src), 20 + 2 * (k as u32 - 1), "sample {k}");
    }
    assert!(src.reads.values().all(|&n| n == 2), "each once in 10 s");
    assert_eq!(meta.affinity.get(&0), Some(&Some("2".into())));
    // a minute without a sample: each once, not six times
    meta.refresh_affinity(&mut src, &empty, &at(71 * S));
    assert!(src.reads.values().all(|&n| n == 3), "{:?}", src.reads);
    // every re-read changed a value: one epoch step per sample, not per IRQ
    let e = meta.epoch;
    meta.refresh_affinity(&mut src, &empty, &at(72 * S));
    assert_eq!(meta.epoch, e + 1);
}

/// A cache that checked `first` and was asked for IRQs 24 and 25, which
/// read as `24 -> a24`, `25 -> a25`.
fn asked(src: &mut Counting, first: &Snapshot, a24: &str, a25: &str) -> Metadata {
    src.fixed.insert(24, a24.into());
    src.fixed.insert(25, a25.into());
    let mut meta = Metadata::default();
    meta.check(first);
    meta.refresh_affinity(src, first, first);
    assert_eq!(meta.affinity(src, 24).as_deref(), Some(a24));
    assert_eq!(meta.affinity(src, 25).as_deref(), Some(a25));
    meta
}

/// The next sample: checked, then refreshed against `prev`.
fn sample(meta: &mut Metadata, src: &mut Counting, prev: &Snapshot, cur: &Snapshot) {
    meta.check(cur);
    meta.refresh_affinity(src, prev, cur);
}

#[test]
fn an_irq_counted_outside_its_affinity_is_read_again_at_that_sample() {
    let mut src = Counting::default();
    let s1 = snap(S, &two([5, 0], [0, 7]));
    let mut meta = asked(&mut src, &s1, "0", "1");
    // counted where their affinity says: nothing read again
    let s2 = snap(2 * S, &two([9, 0], [0, 8]));
    sample(&mut meta, &mut src, &s1, &s2);
    assert_eq!(reads(&src), 2);
    let e = meta.epoch;
    // IRQ 24 moved to CPU 1 (irqbalance): read again at once, new value
    src.fixed.insert(24, "1".into());
    let s3 = snap(3 * S, &two([9, 4], [0, 9]));
    sample(&mut meta, &mut src, &s2, &s3);
    assert_eq!(src.reads.get(&24), Some(&2));
    assert_eq!(src.reads.get(&25), Some(&1));
    assert_eq!(meta.affinity.get(&24), Some(&Some("1".into())));
    assert_eq!(meta.epoch, e + 1, "a changed affinity moves the epoch");
    // counted on CPU 1 again: that is its affinity now
    let s4 = snap(4 * S, &two([9, 8], [0, 9]));
    sample(&mut meta, &mut src, &s3, &s4);
    assert_eq!(src.reads.get(&24), Some(&2));
    assert_eq!(meta.epoch, e + 1);
}

#[test]
fn an_irq_whose_counts_start_again_is_read_again() {
    let mut src = Counting::default();
    let s1 = snap(S, &two([5, 90], [0, 7]));
    let mut meta = asked(&mut src, &s1, "0-1", "1");
    // the number given to another device: its counts start from 0
    src.fixed.insert(24, "0".into());
    let s2 = snap(2 * S, &two([0, 3], [0, 8]));
    sample(&mut meta, &mut src, &s1, &s2);
    assert_eq!(meta.affinity.get(&24), Some(&Some("0".into())));
    assert_eq!(src.reads.get(&25), Some(&1));
}

#[test]
fn an_irq_that_fires_outside_the_cpus_its_file_lists_is_read_once_a_period() {
    let mut src = Counting::default();
    let s1 = snap(S, &two([5, 5], [0, 0]));
    let mut meta = asked(&mut src, &s1, "0", "1");
    let mut prev = s1;
    for k in 2..=5 {
        let cur = snap(k * S, &two([5 * k, 5 * k], [0, 0]));
        sample(&mut meta, &mut src, &prev, &cur);
        prev = cur;
    }
    assert_eq!(src.reads.get(&24), Some(&2), "read again once, then quiet");
    assert_eq!(meta.affinity.get(&24), Some(&Some("0".into())));
}

#[test]
fn counts_are_not_compared_across_other_cpus_or_other_irqs() {
    let mut src = Counting::default();
    let s1 = snap(S, &two([5, 0], [0, 7]));
    let mut meta = asked(&mut src, &s1, "0", "1");
    // CPU 1 went offline: the columns differ, nothing is compared
    let one = "           CPU0       \n 24: 9  IO-APIC 5-edge ACPI:Ged\n 25: 3  IO-APIC 6-edge ttyS0\nLOC: 100  Local timer interrupts\n";
    let s2 = snap(2 * S, one);
    sample(&mut meta, &mut src, &s1, &s2);
    assert_eq!(reads(&src), 2);
    // another IRQ set: everything is dropped, nothing asked is read
    let other = "           CPU0       \n 26: 9  IO-APIC 4-edge ttyS1\n";
    let s3 = snap(3 * S, other);
    sample(&mut meta, &mut src, &s2, &s3);
    assert_eq!(reads(&src), 2);
    assert!(meta.affinity.is_empty());
}

#[test]
fn an_affinity_that_is_not_a_cpu_list_is_not_watched() {
    let mut src = Counting::default();
    let s1 = snap(S, &two([5, 0], [0, 7]));
    let mut meta = asked(&mut src, &s1, "garbage", "1");
    let s2 = snap(2 * S, &two([9, 9], [0, 8]));
    sample(&mut meta, &mut src, &s1, &s2);
    assert_eq!(reads(&src), 2);
}

fn row(counts: &[u64]) -> IrqRow {
    let text: String = counts.iter().map(|c| format!(" {c}")).collect();
    let cpus: String = (0..counts.len()).map(|c| format!(" CPU{c}")).collect();
    let file = format!("{cpus}\n 24:{text}  chip 1-edge dev\n");
    let m = Interrupts::parse(file.as_bytes()).unwrap();
    m.rows()[0].clone()
}

#[test]
fn moved_or_reset_looks_only_at_cpus_that_counted() {
    let cpus = [0, 1, 2, 3, 8, 9];
    let o = row(&[1, 1, 1, 1, 1, 1]);
    let set = |t: &str| CpuList::parse_list(t.as_bytes(), "t").unwrap();
    let n = row(&[1, 2, 2, 1, 1, 5]);
    assert!(!moved_or_reset(&cpus, &o, &n, &set("1-2,9")));
    assert!(!moved_or_reset(&cpus, &o, &n, &set("0-9")));
    assert!(moved_or_reset(&cpus, &o, &n, &set("1-2")));
    assert!(moved_or_reset(&cpus, &o, &n, &set("2,9")));
    assert!(moved_or_reset(&cpus, &o, &n, &set("5")));
    assert!(!moved_or_reset(&cpus, &o, &o, &set("5")), "nothing counted");
    // a count that went back (a new device on the number, a wrap) is a
    // change too, on a CPU of the set as well
    let wrapped = row(&[0, 1, 1, 1, 1, 1]);
    assert!(moved_or_reset(&cpus, &o, &wrapped, &set("1-9")));
    assert!(moved_or_reset(&cpus, &o, &wrapped, &set("0-9")));
    // columns that do not match the counts: not compared
    assert!(!moved_or_reset(&cpus[..5], &o, &n, &set("5")));
}

#[test]
fn a_big_machine_compares_a_window_of_rows_each_sample() {
    let mut src = Counting::default();
    let s1 = snap(S, &two([5, 0], [0, 7]));
    let mut meta = asked(&mut src, &s1, "0", "0");
    // two cells a sample on two CPUs: one row a sample, IRQ 24 first
    meta.check_cells = 2;
    let mut prev = s1;
    let mut seen = Vec::new();
    for k in 2..=5 {
        // both IRQs fire on CPU 1, outside their affinity, every sample
        let cur = snap(k * S, &two([5, k], [0, 7 + k]));
        sample(&mut meta, &mut src, &prev, &cur);
        seen.push((src.reads[&24], src.reads[&25]));
        prev = cur;
    }
    // each read again at its own turn, then quiet for the period
    assert_eq!(seen, [(2, 1), (2, 2), (2, 2), (2, 2)]);
}
