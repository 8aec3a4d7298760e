//! Hard IRQ rows held against /proc/interrupts: the numbered rows' runs
//! the kernel counted that no `irq_handler_entry`/`irq_handler_exit` pair
//! counted, as the [`HARDIRQ`] group's shortfall.
//!
//! Why the counts are a lower bound on handler runs (kernel/irq/chip.c,
//! handle.c): every flow handler that counts (`handle_edge_irq`,
//! `handle_fasteoi_irq`, `handle_level_irq`, `handle_simple_irq` …) calls
//! `kstat_incr_irqs_this_cpu` only after `irq_can_handle` found an action
//! and the IRQ enabled (an interrupt that arrives disabled, without an
//! action or while in progress is marked pending and not counted), then
//! `handle_irq_event` under the same lock hold runs every action on that
//! CPU, each between one `irq_handler_entry` and one `irq_handler_exit`
//! (`__handle_irq_event_percpu`). Runs the kernel does not count
//! (`handle_edge_irq`'s pending loop, a replay, irqpoll) only raise the
//! traced runs. So for a row whose `k` actions stay the same, each CPU
//! traced at least `k × (counted − 1)` runs of it: the one less is the
//! run in flight at the read (counted, its exits after the maps were
//! read).
//!
//! Not held, so never a miss that did not happen: a row without actions
//! at the baseline, an action no program has seen run since attach
//! (`handle_nested_irq` counts an IRQ whose thread function runs with no
//! tracepoint; a chained or misread action name), a row absent from the
//! baseline. A row whose description (actions included) differs at a
//! read, or that is gone, or one of whose counts went back (a descriptor
//! freed and allocated again, or a 32-bit count that wrapped: the two look
//! the same) adds no runs from that read on. What one read cannot see: an
//! action of a shared IRQ freed and requested again between two reads of
//! /proc/interrupts, while the IRQ fired for the others.

use crate::trace::sample::{Sample, TraceKey};
use irqlab_bpf::maps::NAME_LEN;
use irqlab_core::{Interrupts, IrqRow, Shape};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The group of every hard IRQ row's runs (as in [`crate::trace::missed`]).
pub const HARDIRQ: &str = "hardirq";

/// The kernel prints these counts as 32-bit values.
const WRAP: u64 = 1 << 32;

/// [`Row::last`] of a CPU the row had no count for at the baseline: not
/// held there.
const NOT_HELD: u64 = u64::MAX;

/// A numbered row of the baseline. Its counts are per CPU of the
/// baseline ([`HardIrqs::cpus`], by position).
#[derive(Debug)]
struct Row {
    /// Its description at the baseline (chip, hwirq, actions).
    description: String,
    /// Its action names at the baseline, as the programs' keys hold them
    /// (the first `NAME_LEN - 1` bytes), each once.
    actions: BTreeSet<Vec<u8>>,
    /// The kernel's last counts as read ([`NOT_HELD`]: none).
    last: Vec<u64>,
    /// The kernel's runs since the baseline.
    runs: Vec<u64>,
    /// Whether later reads still add runs.
    held: bool,
    /// The read ([`HardIrqs::reads`]) that last found the row.
    seen: u64,
}

/// The numbered rows' counts since a baseline. Each read costs one pass
/// over the file's rows and, per held row, one over its CPUs: no row is
/// looked for in the file, and no CPU in a map (a 1152-CPU, 1056-IRQ
/// file is 1.2 M counts a read).
#[derive(Debug, Default)]
pub struct HardIrqs {
    /// The CPU ids of the baseline's header.
    cpus: Vec<u32>,
    /// By IRQ number.
    rows: BTreeMap<u32, Row>,
    /// Traced runs of each IRQ at the baseline, every action summed, per
    /// CPU id.
    traced_base: BTreeMap<u32, Vec<u64>>,
    /// The map-full drops at the baseline, per CPU id.
    drops_base: Vec<u64>,
    /// Reads of /proc/interrupts since the baseline.
    reads: u64,
    /// Per CPU of the baseline, its column in the last file read.
    cols: Vec<Option<usize>>,
}

/// An action name as a program's key holds it: its first 27 bytes.
fn key_name(name: &str) -> Vec<u8> {
    let b = name.as_bytes();
    b.get(..NAME_LEN - 1).unwrap_or(b).to_vec()
}

/// Per IRQ: traced runs per CPU id (every action summed) and the action
/// names with a row in `s`.
fn traced(s: &Sample) -> BTreeMap<u32, (Vec<u64>, BTreeSet<&[u8]>)> {
    let mut out: BTreeMap<u32, (Vec<u64>, BTreeSet<&[u8]>)> = BTreeMap::new();
    for (k, v) in &s.irqs {
        let TraceKey::Hardirq { irq, name } = k else {
            continue;
        };
        let Ok(irq) = u32::try_from(*irq) else {
            continue;
        };
        let (runs, names) = out.entry(irq).or_default();
        names.insert(name.as_bytes());
        if runs.len() < v.len() {
            runs.resize(v.len(), 0);
        }
        for (r, x) in runs.iter_mut().zip(v) {
            *r += x.count;
        }
    }
    out
}

/// The value of CPU id `cpu` in a per-CPU-id vector (0 past its end).
fn at(v: &[u64], cpu: u32) -> u64 {
    usize::try_from(cpu)
        .ok()
        .and_then(|i| v.get(i))
        .copied()
        .unwrap_or(0)
}

/// The rows a read holds: per-CPU numbered rows, each IRQ once (its first
/// row).
fn numbered(irqs: &Interrupts) -> impl Iterator<Item = (u32, &IrqRow)> {
    irqs.rows()
        .iter()
        .filter(|r| r.shape == Shape::PerCpu)
        .filter_map(|r| Some((r.irq?, r)))
}

/// `cols[i]`: the column of `base[i]` in `now` (`None`: not there).
fn columns(base: &[u32], now: &[u32], cols: &mut Vec<Option<usize>>) {
    cols.clear();
    if base == now {
        cols.extend((0..base.len()).map(Some));
        return;
    }
    let at: HashMap<u32, usize> = now.iter().enumerate().map(|(j, &c)| (c, j)).collect();
    cols.extend(base.iter().map(|c| at.get(c).copied()));
}

impl Row {
    /// The row `r` at the baseline, whose header has `ncpu` CPUs.
    fn new(r: &IrqRow, ncpu: usize) -> Row {
        let last: Vec<u64> = (0..ncpu)
            .map(|i| r.counts.get(i).map_or(NOT_HELD, |&n| n % WRAP))
            .collect();
        Row {
            description: r.description.to_string(),
            actions: r.parts.actions().map(key_name).collect(),
            runs: vec![0; last.len()],
            last,
            held: true,
            seen: 0,
        }
    }

    /// Add the runs since the last read of `counts` (the file's, at the
    /// columns `cols`); `false`, adding none, when a count went back.
    fn advance(&mut self, cols: &[Option<usize>], counts: &[u64]) -> bool {
        let now = |i: usize| {
            let c = cols.get(i).copied().flatten()?;
            counts.get(c).map(|&n| n % WRAP)
        };
        let back = self
            .last
            .iter()
            .enumerate()
            .any(|(i, &l)| l != NOT_HELD && now(i).is_some_and(|n| n < l));
        if back {
            return false;
        }
        for (i, (l, r)) in self.last.iter_mut().zip(self.runs.iter_mut()).enumerate() {
            if let (false, Some(n)) = (*l == NOT_HELD, now(i)) {
                *r += n - *l;
                *l = n;
            }
        }
        true
    }
}

impl HardIrqs {
    /// The first read of /proc/interrupts (`irqs`), just after the maps
    /// that gave `traced`: every per-CPU numbered row with an action.
    pub fn baseline(irqs: &Interrupts, traced_now: &Sample) -> HardIrqs {
        let ncpu = irqs.cpus.len();
        let mut rows = BTreeMap::new();
        for (irq, r) in numbered(irqs) {
            if r.parts.actions().next().is_some() {
                rows.entry(irq).or_insert_with(|| Row::new(r, ncpu));
            }
        }
        HardIrqs {
            cpus: irqs.cpus.clone(),
            rows,
            traced_base: traced(traced_now)
                .into_iter()
                .map(|(irq, (runs, _))| (irq, runs))
                .collect(),
            drops_base: traced_now.drops.clone(),
            reads: 0,
            cols: Vec::new(),
        }
    }

    /// A later read of /proc/interrupts: each held row adds, per CPU of
    /// the baseline, its runs since the last read; a row that is gone,
    /// whose description changed or one of whose counts went back is no
    /// longer held (it keeps the runs it had).
    pub fn kernel(&mut self, irqs: &Interrupts) {
        self.reads += 1;
        let read = self.reads;
        columns(&self.cpus, &irqs.cpus, &mut self.cols);
        for (irq, r) in numbered(irqs) {
            let Some(row) = self.rows.get_mut(&irq) else {
                continue;
            };
            if !row.held || row.seen == read {
                continue;
            }
            row.seen = read;
            if *r.description != *row.description || !row.advance(&self.cols, &r.counts) {
                row.held = false;
            }
        }
        for row in self.rows.values_mut().filter(|r| r.seen != read) {
            row.held = false;
        }
    }

    /// The runs of the rows that `traced_now`'s maps (read after the last
    /// [`HardIrqs::kernel`]) lack: per row and CPU, its actions a program
    /// has seen times the kernel's runs less one, less the traced runs
    /// since the baseline; per CPU less the runs the programs saw but
    /// could not count (the map was full: said on their own).
    pub fn shortfall(&self, traced_now: &Sample) -> u64 {
        let now = traced(traced_now);
        let mut short = vec![0u64; self.cpus.len()];
        for (irq, row) in &self.rows {
            let Some((cur, names)) = now.get(irq) else {
                continue;
            };
            let k = row
                .actions
                .iter()
                .filter(|a| names.contains(a.as_slice()))
                .count() as u64;
            let base = self.traced_base.get(irq).map_or(&[][..], Vec::as_slice);
            let per_cpu = self.cpus.iter().zip(&row.runs).zip(short.iter_mut());
            for ((&cpu, &runs), s) in per_cpu {
                let t = at(cur, cpu).saturating_sub(at(base, cpu));
                let want = k.saturating_mul(runs.saturating_sub(1));
                *s += want.saturating_sub(t);
            }
        }
        self.cpus
            .iter()
            .zip(short)
            .map(|(&cpu, s)| {
                let dropped = at(&traced_now.drops, cpu).saturating_sub(at(&self.drops_base, cpu));
                s.saturating_sub(dropped)
            })
            .sum()
    }
}
