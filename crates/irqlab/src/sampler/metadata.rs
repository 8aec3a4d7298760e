//! The live sampler's metadata cache: each numbered IRQ's affinity, read
//! from the source when a consumer first asks for it, dropped when the
//! set of IRQs changes, and read again when its counts move to a CPU
//! outside it (the next sample after irqbalance or a write to
//! `smp_affinity_list` moves an IRQ that fires) or start again (its number
//! given to another device), and otherwise, round robin, about every
//! [`AFFINITY_EVERY_NS`] (an IRQ moved while it does not fire). Owns
//! nothing else: chip and actions come with the rows.

use super::live::SnapshotSource;
use irqlab_core::{CpuList, Interrupts, IrqRow, Snapshot};
use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// How often (ns) the sampler reads each cached IRQ affinity again when
/// its counts give no reason to. A re-read is one `pread` of a kept
/// descriptor, yet dear on a cold kernel: 5–7 µs here, so at 10 s the 19
/// IRQs of the project VM cost ~12 µs a sample, 5 % of `top --batch`'s
/// (BENCHMARKS.md, sessions 47 and 48). An IRQ that fires shows a move at
/// the next sample through its counts, so this period only bounds how
/// stale the affinity of an IRQ that does not fire can be.
pub const AFFINITY_EVERY_NS: u64 = 120_000_000_000;

/// How many count cells (rows × CPUs) the sampler compares each sample
/// for IRQs counted outside their affinity: every row of a machine up to
/// this size, else a window of rows that moves on each sample (a 1152-CPU
/// × 1056-IRQ tree: 56 rows a sample, all in 19). Comparing them all there
/// streams both snapshots' 19 MB of counts again, 2–5 ms a sample.
const CHECK_CELLS: usize = 65_536;

/// Affinity of the IRQs asked for, and what says when to read it again.
#[derive(Debug)]
pub(super) struct Metadata {
    pub(super) affinity: HashMap<u32, Option<String>>,
    /// The IRQs of `affinity` in the order first asked for: read again
    /// round robin from `next`.
    pub(super) asked: Vec<u32>,
    next: usize,
    /// Re-reads owed, in ns of sample time times IRQs (one re-read pays
    /// `every_ns`), and the sample time they were counted to (0: none).
    owed: u64,
    counted_ns: u64,
    pub(super) every_ns: u64,
    /// Numbered IRQs of the latest snapshot, in order.
    irqs: Vec<u32>,
    /// Per entry of `irqs`: what its counts are checked against.
    watch: Vec<Watch>,
    /// The position of each IRQ in `irqs`.
    index: HashMap<u32, usize>,
    /// The snapshot checked before the latest had the same numbered IRQs
    /// in the same order: their rows pair up by position.
    comparable: bool,
    /// The first entry of `irqs` whose counts the next sample compares,
    /// and how many cells a sample compares ([`CHECK_CELLS`]).
    window: usize,
    check_cells: usize,
    pub(super) epoch: u64,
}

/// What one IRQ's counts are checked against.
#[derive(Debug, Default, Clone)]
struct Watch {
    /// The CPUs of the cached affinity (empty: not asked for or not a CPU
    /// list, not watched).
    cpus: CpuList,
    /// Sample time before which its counts do not make it read again:
    /// set after such a read found the same affinity (an IRQ that fires
    /// outside the CPUs its file lists is read once per period).
    quiet_until: u64,
}

impl Watch {
    /// Watch the CPUs of `affinity` (none when it is not a CPU list).
    fn set(&mut self, affinity: Option<&str>) {
        let text = affinity.unwrap_or_default().as_bytes();
        if self.cpus.parse_list_into(text, "affinity").is_err() {
            self.cpus = CpuList::default();
        }
    }
}

impl Default for Metadata {
    fn default() -> Self {
        Metadata {
            affinity: HashMap::new(),
            asked: Vec::new(),
            next: 0,
            owed: 0,
            counted_ns: 0,
            every_ns: AFFINITY_EVERY_NS,
            irqs: Vec::new(),
            watch: Vec::new(),
            index: HashMap::new(),
            comparable: false,
            window: 0,
            check_cells: CHECK_CELLS,
            epoch: 0,
        }
    }
}

impl Metadata {
    /// The affinity of `irq`: cached, or read from `source` now and
    /// cached.
    pub(super) fn affinity<S: SnapshotSource + ?Sized>(
        &mut self,
        source: &mut S,
        irq: u32,
    ) -> Option<String> {
        let read = match self.affinity.entry(irq) {
            Entry::Occupied(e) => return e.get().clone(),
            Entry::Vacant(e) => e.insert(source.affinity(irq)).clone(),
        };
        self.asked.push(irq);
        self.watch_as(irq, read.as_deref());
        read
    }

    /// Check `irq`'s counts against `affinity` from now on.
    fn watch_as(&mut self, irq: u32, affinity: Option<&str>) {
        if let Some(w) = self.index.get(&irq).and_then(|&i| self.watch.get_mut(i)) {
            w.set(affinity);
        }
    }

    /// Note the numbered IRQs of `snap` (the sample just read); drop what
    /// was read when they differ from the last snapshot's.
    pub(super) fn check(&mut self, snap: &Snapshot) {
        let Some(m) = &snap.interrupts else {
            self.comparable = false;
            return;
        };
        let numbered = m.rows().iter().filter_map(|r| r.irq);
        if self.irqs.iter().copied().eq(numbered) {
            self.comparable = true;
            return;
        }
        self.irqs.clear();
        self.irqs.extend(m.rows().iter().filter_map(|r| r.irq));
        self.invalidate();
    }

    /// Drop every affinity read (the IRQs changed, or the source's
    /// metadata did).
    pub(super) fn invalidate(&mut self) {
        self.affinity.clear();
        self.asked.clear();
        self.next = 0;
        self.owed = 0;
        self.watch.clear();
        self.watch.resize(self.irqs.len(), Watch::default());
        self.index.clear();
        self.index
            .extend(self.irqs.iter().enumerate().map(|(i, &irq)| (irq, i)));
        self.comparable = false;
        self.window = 0;
        self.epoch = self.epoch.wrapping_add(1);
    }

    /// At the sample `cur` (`prev` the one before it): read again the
    /// affinity of each IRQ counted on a CPU outside it since `prev`, and
    /// the affinities owed since the last sample (the time since, times
    /// the IRQs asked for, over `every_ns`), round robin. One that changed
    /// replaces the cached and moves the epoch, so that consumers rebuild
    /// what they made of it.
    pub(super) fn refresh_affinity<S: SnapshotSource + ?Sized>(
        &mut self,
        source: &mut S,
        prev: &Snapshot,
        cur: &Snapshot,
    ) {
        let moved = match (&prev.interrupts, &cur.interrupts) {
            (Some(o), Some(n)) if self.comparable => self.read_moved(source, o, n, cur.mono_ns),
            _ => false,
        };
        let owed = self.read_owed(source, cur.mono_ns);
        if moved || owed {
            self.epoch = self.epoch.wrapping_add(1);
        }
    }

    /// Read again each watched IRQ whose counts rose on a CPU outside its
    /// affinity, or went back, between `o` and `n` (of this sample's
    /// window of rows, all of them up to [`CHECK_CELLS`] cells); whether
    /// one changed.
    fn read_moved<S: SnapshotSource + ?Sized>(
        &mut self,
        source: &mut S,
        o: &Interrupts,
        n: &Interrupts,
        now: u64,
    ) -> bool {
        if self.asked.is_empty() || o.cpus != n.cpus {
            return false;
        }
        let every = self.every_ns;
        let rows = self.watch.len();
        let (from, len) = (self.window, (self.check_cells / n.cpus.len().max(1)).max(1));
        self.window = if len >= rows { 0 } else { (from + len) % rows };
        let olds = o.rows().iter().filter(|r| r.irq.is_some());
        let news = n.rows().iter().filter(|r| r.irq.is_some());
        let mut changed = false;
        for (j, ((w, or), nr)) in self.watch.iter_mut().zip(olds).zip(news).enumerate() {
            let due = (j + rows - from) % rows < len;
            if !due || w.cpus.is_empty() || now < w.quiet_until {
                continue;
            }
            if !moved_or_reset(&n.cpus, or, nr, &w.cpus) {
                continue;
            }
            let Some(irq) = nr.irq else {
                continue;
            };
            if replace(&mut self.affinity, Some(&mut *w), irq, source.affinity(irq)) {
                changed = true;
            } else {
                w.quiet_until = now.saturating_add(every);
            }
        }
        changed
    }

    /// Read again the affinities owed at `mono_ns`, round robin; whether
    /// one changed.
    fn read_owed<S: SnapshotSource + ?Sized>(&mut self, source: &mut S, mono_ns: u64) -> bool {
        let n = self.asked.len() as u64;
        let since = mono_ns.saturating_sub(self.counted_ns);
        let first = self.counted_ns == 0;
        self.counted_ns = mono_ns;
        if n == 0 || first {
            return false;
        }
        let every = self.every_ns.max(1);
        let cap = n.saturating_mul(every);
        self.owed = self.owed.saturating_add(since.saturating_mul(n)).min(cap);
        let mut changed = false;
        while self.owed >= every {
            self.owed -= every;
            let Some(&irq) = self.asked.get(self.next) else {
                break;
            };
            self.next = (self.next + 1) % self.asked.len();
            let w = self.index.get(&irq).and_then(|&i| self.watch.get_mut(i));
            changed |= replace(&mut self.affinity, w, irq, source.affinity(irq));
        }
        changed
    }
}

/// Put `read` in `cached` as `irq`'s affinity, and its CPUs in `w`, when
/// it differs from the cached one; whether it did.
fn replace(
    cached: &mut HashMap<u32, Option<String>>,
    w: Option<&mut Watch>,
    irq: u32,
    read: Option<String>,
) -> bool {
    if cached.get(&irq) == Some(&read) {
        return false;
    }
    if let Some(w) = w {
        w.set(read.as_deref());
    }
    cached.insert(irq, read);
    true
}

/// Whether row `n`, since row `o`, counted on a CPU of `cpus` (the
/// columns of both, ascending) that `set` does not hold, or has a count
/// that went back on any CPU (an IRQ number given to another device,
/// whose counts start again; a 32-bit wrap). Only rows with a count per
/// CPU are checked.
fn moved_or_reset(cpus: &[u32], o: &IrqRow, n: &IrqRow, set: &CpuList) -> bool {
    let (Some(a), Some(b)) = (o.per_cpu(), n.per_cpu()) else {
        return false;
    };
    if a.len() != cpus.len() || b.len() != cpus.len() {
        return false;
    }
    let mut ranges = set.ranges().iter().peekable();
    for ((&cpu, &x), &y) in cpus.iter().zip(a).zip(b) {
        if x == y {
            continue;
        }
        if y < x {
            return true;
        }
        while ranges.next_if(|&&(_, hi)| hi < cpu).is_some() {}
        if ranges.peek().is_none_or(|&&(lo, _)| lo > cpu) {
            return true;
        }
    }
    false
}

#[cfg(test)]
#[path = "metadata_tests.rs"]
mod tests;
