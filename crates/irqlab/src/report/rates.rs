//! Rates sections from two snapshots: interrupt rows (per CPU, or
//! reduced to the busiest CPU as they are built) and softirqs, and
//! (rates/text.rs) [`ReusedRates`], what `top --batch`'s text prints,
//! rebuilt in place per sample in a compact state. Every
//! count difference and rate comes from `irqlab_core::delta`; this only
//! picks the kept columns and shapes lines.

use super::{
    busiest_cpu, has_value, line_meta, pick, IrqLine, IrqRows, IrqSection, SoftirqLine,
    SoftirqSection,
};
use crate::filter::Filter;
use irqlab_core::delta::{self, Cell};
use irqlab_core::softirqs::Softirqs;
use irqlab_core::{Interrupts, IrqRow, Shape};

/// Deltas, rates and (only if any) gaps of a row's cells.
type CellsOut = (
    Option<Vec<Option<u64>>>,
    Vec<Option<f64>>,
    Option<Vec<Option<delta::Gap>>>,
);

fn cells_out(cells: &[Cell], secs: f64, with_deltas: bool) -> CellsOut {
    let counts = with_deltas.then(|| cells.iter().map(|c| c.count()).collect());
    let rates = cells.iter().map(|c| c.rate(secs)).collect();
    let any = cells.iter().any(|c| matches!(c, Cell::Gap(_)));
    let gaps = any.then(|| {
        cells
            .iter()
            .map(|c| match c {
                Cell::Gap(g) => Some(*g),
                Cell::Count(_) => None,
            })
            .collect()
    });
    (counts, rates, gaps)
}

/// The kept CPU columns of a rates section and what a row needs to pick
/// them.
pub(super) struct RateCols {
    pub(super) union: Vec<u32>,
    pub(super) cols: Vec<usize>,
    all: bool,
}

impl RateCols {
    pub(super) fn new(o: &Interrupts, n: &Interrupts, f: &Filter) -> Self {
        let union = delta::union_cpus(&o.cpus, &n.cpus);
        let cols = f.columns(&union);
        RateCols {
            all: cols.len() == union.len(),
            union,
            cols,
        }
    }

    /// The report line of one row of [`delta::interrupts_delta_each`];
    /// `picked` is scratch space for the kept cells.
    pub(super) fn line(
        &self,
        r: &IrqRow,
        cells: &[Cell],
        secs: f64,
        with_deltas: bool,
        picked: &mut Vec<Cell>,
    ) -> IrqLine {
        let cells = pick_cells(r, cells, self.all, &self.cols, picked);
        let (counts, rates, gaps) = cells_out(cells, secs, with_deltas);
        let total: u64 = cells.iter().filter_map(|c| c.count()).sum();
        let mut line = line_meta(r);
        line.deltas = counts;
        line.rates = Some(rates);
        line.total = total;
        line.gaps = gaps;
        line.total_rate = (secs > 0.0 && !line.no_value()).then(|| total as f64 / secs);
        line.since_boot = Some(r.total());
        line
    }
}

pub(super) fn irq_rates(
    o: &Interrupts,
    n: &Interrupts,
    secs: f64,
    f: &Filter,
    with_deltas: bool,
    rows_of: IrqRows,
) -> IrqSection {
    let rc = RateCols::new(o, n, f);
    let cpus = pick(&rc.union, &rc.cols);
    let mut rows = Vec::new();
    let mut picked = Vec::new();
    let (_, gone) = delta::interrupts_delta_each(o, n, secs, |r, _status, cells| {
        if f.keep_irq_row(r) {
            let mut l = rc.line(r, cells, secs, with_deltas, &mut picked);
            if rows_of == IrqRows::Busiest && l.shape == Shape::PerCpu {
                if let Some(rates) = l.rates.take() {
                    let each = rates.iter().map(|r| r.unwrap_or(0.0));
                    l.busiest = busiest_cpu(cpus.iter().copied().zip(each));
                }
            }
            rows.push(l);
        }
    });
    IrqSection {
        cpus,
        rows,
        gone: gone.into_iter().map(|g| g.label).collect(),
    }
}

/// The total of a row's cells (`None` = gap): the sum of those that have
/// a value, `None` when none has one ([`has_value`]; an empty row totals 0).
fn valued_total(cells: &[Option<u64>]) -> Option<u64> {
    let total: u64 = cells.iter().flatten().sum();
    (total > 0 || has_value(cells.iter().map(Option::is_some))).then_some(total)
}

pub(super) fn softirq_rates(o: &Softirqs, n: &Softirqs, secs: f64, f: &Filter) -> SoftirqSection {
    let d = delta::softirqs_delta(o, n, secs);
    let cols = f.columns(&d.cpus);
    let rows = d
        .rows
        .iter()
        .map(|r| {
            let cells = pick(&r.cells, &cols);
            let (counts, rates, _) = cells_out(&cells, secs, true);
            let counts = counts.unwrap_or_default();
            let total = valued_total(&counts);
            SoftirqLine {
                name: r.name.clone(),
                counts,
                total,
                rates: Some(rates),
                total_rate: total.filter(|_| secs > 0.0).map(|t| t as f64 / secs),
            }
        })
        .collect();
    SoftirqSection {
        cpus: pick(&d.cpus, &cols),
        rows,
        gone: softirqs_gone(o, n),
    }
}

/// Whether `n` has other softirq vectors than `o`, or in another order:
/// only then can one be gone ([`softirqs_gone`]). The usual sample has
/// the same ones, and this is its only per-sample check for them.
#[inline]
pub fn softirq_vectors_changed(o: &Softirqs, n: &Softirqs) -> bool {
    o.rows.len() != n.rows.len() || o.rows.iter().zip(&n.rows).any(|(a, b)| a.name != b.name)
}

/// The names of the vectors of `o` that `n` has not (rows are matched by
/// name, as [`delta::softirqs_delta`] matches them), in `o`'s order.
pub fn softirqs_gone(o: &Softirqs, n: &Softirqs) -> Vec<String> {
    o.rows
        .iter()
        .filter(|r| !n.rows.iter().any(|m| m.name == r.name))
        .map(|r| r.name.clone())
        .collect()
}

mod text;
pub use text::{IrqRates, ReusedRates, RowRates, SoftirqRates};

/// The CPU ids of two headers, merged and ascending, into `union`: what
/// [`delta::union_cpus`] returns.
fn union_into(a: &[u32], b: &[u32], union: &mut Vec<u32>) {
    union.clear();
    union.extend_from_slice(a);
    if a != b || !union.is_sorted_by(|x, y| x < y) {
        union.extend_from_slice(b);
        union.sort_unstable();
        union.dedup();
    }
}

/// [`Filter::columns`] of `union`, into `cols`.
fn kept_cols(union: &[u32], f: &Filter, cols: &mut Vec<usize>) {
    cols.clear();
    cols.extend((0..union.len()).filter(|&i| union.get(i).is_some_and(|&c| f.keep_cpu(c))));
}

/// A row's delta cells at the selected CPU columns `cols` of the
/// section's union (`all`: every column selected, the cells as they
/// are); only per-CPU rows have columns, other shapes keep their cells.
/// `picked` is the reused buffer the selection is copied into.
pub fn pick_cells<'a>(
    r: &IrqRow,
    cells: &'a [Cell],
    all: bool,
    cols: &[usize],
    picked: &'a mut Vec<Cell>,
) -> &'a [Cell] {
    if r.shape != Shape::PerCpu || all {
        return cells;
    }
    picked.clear();
    picked.extend(cols.iter().filter_map(|&i| cells.get(i).copied()));
    picked
}
