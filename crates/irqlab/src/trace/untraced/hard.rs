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
use irqlab_core::{Interrupts, Shape};
use std::collections::{BTreeMap, BTreeSet};

/// The group of every hard IRQ row's runs (as in [`crate::trace::missed`]).
pub const HARDIRQ: &str = "hardirq";

/// The kernel prints these counts as 32-bit values.
const WRAP: u64 = 1 << 32;

/// Per CPU id: a count.
type PerCpu = BTreeMap<u32, u64>;

/// A numbered row of the baseline.
#[derive(Debug)]
struct Row {
    /// Its description at the baseline (chip, hwirq, actions).
    description: String,
    /// Its action names at the baseline, as the programs' keys hold them
    /// (the first `NAME_LEN - 1` bytes), each once.
    actions: BTreeSet<Vec<u8>>,
    /// The kernel's last counts as read, per CPU of the baseline.
    last: PerCpu,
    /// The kernel's runs since the baseline, per CPU of the baseline.
    runs: PerCpu,
    /// Whether later reads still add runs.
    held: bool,
}

/// The numbered rows' counts since a baseline.
#[derive(Debug, Default)]
pub struct HardIrqs {
    /// By IRQ number.
    rows: BTreeMap<u32, Row>,
    /// Traced runs of each IRQ at the baseline, every action summed.
    traced_base: BTreeMap<u32, PerCpu>,
    /// The map-full drops at the baseline, per CPU id.
    drops_base: Vec<u64>,
}

/// An action name as a program's key holds it: its first 27 bytes.
fn key_name(name: &str) -> Vec<u8> {
    let b = name.as_bytes();
    b.get(..NAME_LEN - 1).unwrap_or(b).to_vec()
}

/// Per IRQ: traced runs per CPU (every action summed) and the action
/// names with a row in `s`.
fn traced(s: &Sample) -> BTreeMap<u32, (PerCpu, BTreeSet<Vec<u8>>)> {
    let mut out: BTreeMap<u32, (PerCpu, BTreeSet<Vec<u8>>)> = BTreeMap::new();
    for (k, v) in &s.irqs {
        let TraceKey::Hardirq { irq, name } = k else {
            continue;
        };
        let Ok(irq) = u32::try_from(*irq) else {
            continue;
        };
        let (runs, names) = out.entry(irq).or_default();
        names.insert(name.as_bytes().to_vec());
        for (cpu, x) in v.iter().enumerate() {
            if let Ok(cpu) = u32::try_from(cpu) {
                *runs.entry(cpu).or_default() += x.count;
            }
        }
    }
    out
}

/// The per-CPU counts of `irqs`' row `irq` (mod 2^32), with the row's
/// description; `None` when absent or not per CPU.
fn counts_of(irqs: &Interrupts, irq: u32) -> Option<(&str, PerCpu)> {
    let row = irqs
        .rows()
        .iter()
        .find(|r| r.irq == Some(irq) && r.shape == Shape::PerCpu)?;
    let per_cpu = irqs
        .cpus
        .iter()
        .zip(row.counts.iter())
        .map(|(&cpu, &n)| (cpu, n % WRAP))
        .collect();
    Some((row.description.as_str(), per_cpu))
}

impl HardIrqs {
    /// The first read of /proc/interrupts (`irqs`), just after the maps
    /// that gave `traced`: every per-CPU numbered row with an action.
    pub fn baseline(irqs: &Interrupts, traced_now: &Sample) -> HardIrqs {
        let rows = irqs
            .rows()
            .iter()
            .filter(|r| r.shape == Shape::PerCpu && r.parts.actions().next().is_some())
            .filter_map(|r| {
                let irq = r.irq?;
                let (description, last) = counts_of(irqs, irq)?;
                let row = Row {
                    description: description.to_string(),
                    actions: r.parts.actions().map(key_name).collect(),
                    runs: last.keys().map(|&cpu| (cpu, 0)).collect(),
                    last,
                    held: true,
                };
                Some((irq, row))
            })
            .collect();
        HardIrqs {
            rows,
            traced_base: traced(traced_now)
                .into_iter()
                .map(|(irq, (runs, _))| (irq, runs))
                .collect(),
            drops_base: traced_now.drops.clone(),
        }
    }

    /// A later read of /proc/interrupts: each held row adds, per CPU of
    /// the baseline, its runs since the last read; a row that is gone,
    /// whose description changed or one of whose counts went back is no
    /// longer held (it keeps the runs it had).
    pub fn kernel(&mut self, irqs: &Interrupts) {
        for (&irq, row) in self.rows.iter_mut().filter(|(_, r)| r.held) {
            let now = counts_of(irqs, irq).filter(|(d, _)| *d == row.description);
            let Some((_, now)) = now else {
                row.held = false;
                continue;
            };
            let back = now
                .iter()
                .any(|(cpu, &n)| row.last.get(cpu).is_some_and(|&l| n < l));
            if back {
                row.held = false;
                continue;
            }
            for (cpu, n) in now {
                let (Some(l), Some(r)) = (row.last.get_mut(&cpu), row.runs.get_mut(&cpu)) else {
                    continue;
                };
                *r += n - *l;
                *l = n;
            }
        }
    }

    /// The runs of the rows that `traced_now`'s maps (read after the last
    /// [`HardIrqs::kernel`]) lack: per row and CPU, its actions a program
    /// has seen times the kernel's runs less one, less the traced runs
    /// since the baseline; per CPU less the runs the programs saw but
    /// could not count (the map was full: said on their own).
    pub fn shortfall(&self, traced_now: &Sample) -> u64 {
        let now = traced(traced_now);
        let mut per_cpu = PerCpu::new();
        for (irq, row) in &self.rows {
            let Some((cur, names)) = now.get(irq) else {
                continue;
            };
            let k = row.actions.intersection(names).count() as u64;
            let base = self.traced_base.get(irq);
            for (cpu, &runs) in &row.runs {
                let t = cur.get(cpu).copied().unwrap_or(0);
                let t0 = base.and_then(|b| b.get(cpu)).copied().unwrap_or(0);
                let want = k.saturating_mul(runs.saturating_sub(1));
                *per_cpu.entry(*cpu).or_default() += want.saturating_sub(t.saturating_sub(t0));
            }
        }
        per_cpu
            .into_iter()
            .map(|(cpu, short)| {
                let at = |v: &[u64]| {
                    usize::try_from(cpu)
                        .ok()
                        .and_then(|i| v.get(i))
                        .copied()
                        .unwrap_or(0)
                };
                let dropped = at(&traced_now.drops).saturating_sub(at(&self.drops_base));
                short.saturating_sub(dropped)
            })
            .sum()
    }
}
