//! THE report builder: [`counts`](fn@counts) from one snapshot,
//! [`rates`](fn@rates) from two
//! (with [`RateOpts`] saying what the interrupt rows hold), and the pieces
//! every section shares (a row's metadata, kept columns, the busiest
//! CPU). Sections are made in `counts`, `rates` and `stat`; nothing here
//! formats output or reads a file.

use super::counts::{irq_counts, softirq_counts};
use super::rates::{irq_rates, softirq_rates};
use super::stat::stat_section;
use super::{IrqLine, Report};
use crate::filter::Filter;
use irqlab_core::stat::Stat;
use irqlab_core::{IrqRow, Snapshot};

/// Snapshot (counts) report. Takes the snapshot so that count vectors are
/// moved, not copied, when no CPU filter applies (a 1152-CPU file holds
/// ~10 MB of counts).
pub fn counts(mut s: Snapshot, f: &Filter) -> Report {
    Report {
        interval_s: None,
        interrupts: s.interrupts.as_mut().map(|m| irq_counts(m, f)),
        softirqs: s.softirqs.as_ref().map(|m| softirq_counts(m, f)),
        stat: s
            .stat
            .as_ref()
            .map(|m| stat_section(&Stat::default(), m, f, None)),
    }
}

/// What the interrupt rows of a rates report hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IrqRows {
    /// Per kept CPU rates (and deltas with [`RateOpts::deltas`]).
    #[default]
    PerCpu,
    /// Each per-CPU row's rates reduced to its busiest CPU
    /// ([`IrqLine::busiest`], `rates` `None`) as the row is built: what a
    /// table too wide for per-CPU columns prints, without holding a rate
    /// per cell of a 1152-CPU machine.
    Busiest,
    /// No interrupts section (`show`'s streamed JSON writes it itself,
    /// see [`RateRows`](super::RateRows)).
    Omitted,
}

/// Options of [`rates`](fn@rates). The default is what `top` shows: per-CPU rates,
/// totals and gaps, no per-CPU deltas (on a 1152-CPU machine those are a
/// million more numbers per sample to build and print).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateOpts {
    /// Per-CPU count differences in each interrupt row (`show`).
    pub deltas: bool,
    pub irqs: IrqRows,
}

/// Rates report from two snapshots of the same root.
pub fn rates(old: &Snapshot, new: &Snapshot, f: &Filter, opts: RateOpts) -> Report {
    let secs = new.elapsed_since(old);
    Report {
        interval_s: Some(secs),
        interrupts: match (&old.interrupts, &new.interrupts, opts.irqs) {
            (_, _, IrqRows::Omitted) => None,
            (Some(o), Some(n), rows) => Some(irq_rates(o, n, secs, f, opts.deltas, rows)),
            _ => None,
        },
        softirqs: match (&old.softirqs, &new.softirqs) {
            (Some(o), Some(n)) => Some(softirq_rates(o, n, secs, f)),
            _ => None,
        },
        stat: match (&old.stat, &new.stat) {
            (Some(o), Some(n)) => Some(stat_section(o, n, f, Some(secs))),
            _ => None,
        },
    }
}

/// The first CPU with the highest positive value of `values` (per CPU id),
/// if any value is positive: a row reduced to its busiest CPU, counts or
/// rates.
pub(super) fn busiest_cpu<T: Copy + PartialOrd + Default>(
    values: impl Iterator<Item = (u32, T)>,
) -> Option<(u32, T)> {
    let mut best: Option<(u32, T)> = None;
    for (c, v) in values {
        if v > T::default() && best.is_none_or(|(_, b)| v > b) {
            best = Some((c, v));
        }
    }
    best
}

fn opt(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

pub(super) fn line_meta(row: &IrqRow) -> IrqLine {
    IrqLine {
        label: row.label.to_string(),
        irq: row.irq,
        shape: row.shape,
        counts: None,
        total: 0,
        deltas: None,
        rates: None,
        total_rate: None,
        gaps: None,
        chip: opt(&row.parts.chip),
        hwirq: row.parts.hwirq,
        trigger: opt(&row.parts.trigger),
        flow: opt(&row.parts.flow),
        actions: row.parts.actions().map(str::to_string).collect(),
        description: row.description.to_string(),
        affinity: None,
        since_boot: None,
        busiest: None,
        busiest_count: None,
    }
}

pub(super) fn pick<T: Copy>(v: &[T], cols: &[usize]) -> Vec<T> {
    cols.iter().filter_map(|&i| v.get(i).copied()).collect()
}
