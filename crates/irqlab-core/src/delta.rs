//! Deltas between two snapshots: the only place counts become rates.
//!
//! Owns the counter arithmetic (each row's [`Width`](crate::Width): modulo
//! 2^32 for the kernel's `unsigned int` and `atomic_t` counters, 64-bit for
//! arm64's `Err`; with explicit [`Gap`]s for CPU hotplug, IRQ identity
//! change and counters that went backwards; [`Gap::MissingSamples`] for the
//! counters a replayed recording does not know) and row matching by
//! identity, never by position: numbered rows by IRQ number plus (chip,
//! hwirq, actions), arch rows by (label, description, occurrence). Pure:
//! callers pass elapsed time, which bounds every cell: a difference implying
//! a rate no interrupt source can reach is a [`Gap::ImpossibleRate`]
//! (`delta/counter.rs`, docs/limits.md), never a rate.

mod counter;
mod cputime;

pub use counter::{
    bound_rate, counter_delta, unknown_count, wide_counter_delta, width_delta, MAX_CPUS,
    MAX_RATE_PER_CPU,
};
pub use cputime::{
    cpu_pct, cpu_pct_over, max_ticks, stat_aggregate_pct, stat_aggregate_pct_over, CpuPct,
};

use crate::desc::DescParts;
use crate::interrupts::{Interrupts, IrqRow, Shape};
use crate::softirqs::{SoftirqRow, Softirqs};
use serde::Serialize;
use std::collections::HashMap;

/// Why a cell has no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gap {
    /// The CPU was not in the earlier snapshot (came online).
    CpuOnline,
    /// The CPU is not in the later snapshot (went offline).
    CpuOffline,
    /// The row did not exist before (new IRQ or new arch line).
    NewRow,
    /// Same IRQ number, different chip/hwirq/actions: the descriptor was
    /// reused, so its counters restarted.
    IdentityChanged,
    /// The counter went backwards by more than a wrap can explain.
    Reset,
    /// The row's count layout differs between the snapshots.
    ShapeChanged,
    /// A count above the kernel's 32-bit range (`%10u`): not a kernel value.
    OutOfRange,
    /// The difference implies a rate beyond [`MAX_RATE_PER_CPU`] (per CPU;
    /// × [`MAX_CPUS`] for a single global value): not a measurement.
    ImpossibleRate,
    /// Samples between the two are missing (a replayed recording that
    /// lacks them) and the counter may have changed in them: its value is
    /// not known at one of the two samples ([`unknown_count`]).
    MissingSamples,
}

impl Gap {
    /// Every gap, in the enum's order (a test holds it to the enum's
    /// variants, so that a list made from it names a new one too).
    pub const ALL: [Gap; 9] = [
        Gap::CpuOnline,
        Gap::CpuOffline,
        Gap::NewRow,
        Gap::IdentityChanged,
        Gap::Reset,
        Gap::ShapeChanged,
        Gap::OutOfRange,
        Gap::ImpossibleRate,
        Gap::MissingSamples,
    ];
}

/// One cell of a delta: a count difference or an explicit gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cell {
    Count(u64),
    Gap(Gap),
}

impl Cell {
    /// The count, if this cell has one.
    pub fn count(self) -> Option<u64> {
        match self {
            Cell::Count(c) => Some(c),
            Cell::Gap(_) => None,
        }
    }

    /// Rate per second over `elapsed_s`, if this cell has a count.
    pub fn rate(self, elapsed_s: f64) -> Option<f64> {
        (elapsed_s > 0.0).then_some(())?;
        self.count().map(|c| c as f64 / elapsed_s)
    }
}

/// Status of a row in a delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowStatus {
    /// Matched a row of the earlier snapshot with the same identity.
    Same,
    /// No row with this key before.
    New,
    /// Same IRQ number, different identity.
    Changed,
}

/// One row of an interrupts delta.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowDelta {
    pub label: String,
    pub irq: Option<u32>,
    pub description: String,
    pub parts: DescParts,
    pub shape: Shape,
    pub status: RowStatus,
    /// Aligned with [`IrqDelta::cpus`] for per-CPU rows; one cell for
    /// single-value rows; empty for rows without counts.
    pub cells: Vec<Cell>,
}

impl RowDelta {
    /// Sum of the known cells.
    pub fn total(&self) -> u64 {
        self.cells.iter().filter_map(|c| c.count()).sum()
    }

    /// True when every cell has a value.
    pub fn complete(&self) -> bool {
        self.cells.iter().all(|c| c.count().is_some())
    }
}

/// A row present in the earlier snapshot only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowGone {
    pub label: String,
    pub irq: Option<u32>,
    pub description: String,
}

/// Delta of two `/proc/interrupts` snapshots.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IrqDelta {
    /// Union of both snapshots' CPU ids, ascending.
    pub cpus: Vec<u32>,
    /// Rows of the later snapshot, in its file order.
    pub rows: Vec<RowDelta>,
    /// Rows that disappeared.
    pub gone: Vec<RowGone>,
}

/// Key identifying a row across snapshots.
#[derive(Hash, PartialEq, Eq)]
enum Key<'a> {
    Irq(u32),
    Arch(&'a str, &'a str, usize),
}

fn keys(m: &Interrupts) -> Vec<Key<'_>> {
    // Occurrence of each (label, description) among the arch rows. They are
    // a few dozen at most, so a linear scan beats hashing every sample.
    let mut arch: Vec<(&str, &str)> = Vec::new();
    m.rows()
        .iter()
        .map(|r| match r.irq {
            Some(n) => Key::Irq(n),
            None => {
                let id = (r.label.as_str(), r.description.as_str());
                let occ = arch.iter().filter(|&&x| x == id).count();
                arch.push(id);
                Key::Arch(id.0, id.1, occ)
            }
        })
        .collect()
}

fn same_identity(a: &IrqRow, b: &IrqRow) -> bool {
    // a numbered row's parts are split from its description alone: the
    // same description (the usual case, one compare) is the same parts
    a.irq.is_none()
        || a.description == b.description
        || (a.parts.chip == b.parts.chip
            && a.parts.hwirq == b.parts.hwirq
            && a.parts.actions == b.parts.actions)
}

/// The CPU ids of two snapshots' headers, merged and ascending: the
/// columns of every delta between them.
pub fn union_cpus(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut v: Vec<u32> = a.iter().chain(b).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Where one CPU of the union sits in the old and in the new snapshot.
type Col = (Option<usize>, Option<usize>);

/// Column positions of every CPU of `cpus` (the union) in each snapshot's
/// own CPU list: computed once per delta, not per row.
fn columns<'a>(cpus: &'a [u32], old: &'a [u32], new: &'a [u32]) -> impl Iterator<Item = Col> + 'a {
    let pos = |ids: &[u32], c: u32| {
        ids.binary_search(&c)
            .ok()
            .or_else(|| ids.iter().position(|&x| x == c))
    };
    cpus.iter().map(move |&c| (pos(old, c), pos(new, c)))
}

/// Per-CPU cells of one row over the union columns `cols`, from counts
/// aligned with each snapshot's own CPU list.
fn cpu_cells(cols: &[Col], old: &[u64], new: &[u64], out: &mut Vec<Cell>) {
    out.extend(cols.iter().map(|&col| match col {
        (_, None) => Cell::Gap(Gap::CpuOffline),
        (None, Some(_)) => Cell::Gap(Gap::CpuOnline),
        (Some(i), Some(j)) => match (old.get(i), new.get(j)) {
            (Some(&o), Some(&n)) => counter_delta(o, n),
            _ => Cell::Gap(Gap::ShapeChanged),
        },
    }));
}

/// The most a cell may count over one delta's interval: per CPU, and for
/// a single global value (which may count events of every CPU).
#[derive(Clone, Copy)]
struct Bounds {
    per_cpu: Most,
    single: Most,
}

/// [`bound_rate`]'s test `count as f64 > max_rate × elapsed_s`, decided
/// once per delta instead of per cell.
#[derive(Clone, Copy)]
enum Most {
    /// No bound: the interval is not positive and finite.
    None,
    /// Below 2^53 the float test is `count > this` on integers: a count
    /// up to 2^53 converts exactly, a larger one exceeds any such bound.
    Int(u64),
    /// The float test itself.
    Float(f64),
}

impl Most {
    fn of(max_rate: f64, elapsed_s: f64) -> Most {
        if !(elapsed_s > 0.0 && elapsed_s.is_finite()) {
            return Most::None;
        }
        let most = max_rate * elapsed_s;
        if most < EXACT {
            // `most` ≥ 0, so the cast is its floor
            Most::Int(most as u64)
        } else {
            Most::Float(most)
        }
    }

    fn exceeded(self, count: u64) -> bool {
        match self {
            Most::None => false,
            Most::Int(m) => count > m,
            Most::Float(m) => count as f64 > m,
        }
    }
}

/// 2^53: integers up to it are exact as `f64`.
const EXACT: f64 = 9_007_199_254_740_992.0;

impl Bounds {
    fn new(elapsed_s: f64) -> Bounds {
        Bounds {
            per_cpu: Most::of(MAX_RATE_PER_CPU, elapsed_s),
            single: Most::of(MAX_RATE_PER_CPU * MAX_CPUS, elapsed_s),
        }
    }
}

/// Turn every cell whose count implies an impossible rate
/// into [`Gap::ImpossibleRate`] ([`bound_rate`]'s rule); a single global
/// value may count events of every CPU.
fn bound_cells(out: &mut [Cell], shape: Shape, bounds: Bounds) {
    let most = match shape {
        Shape::Single => bounds.single,
        _ => bounds.per_cpu,
    };
    if let Most::None = most {
        return;
    }
    for c in out {
        if let Cell::Count(v) = *c {
            if most.exceeded(v) {
                *c = Cell::Gap(Gap::ImpossibleRate);
            }
        }
    }
}

/// The one value of a single-value row. With one online CPU the parser
/// cannot tell `ERR:` (one global value, no description) from a per-CPU
/// row, and calls it per-CPU: such an arch row counts as single too, so
/// that a change in the number of online CPUs is no shape change. Its
/// difference is read at the row's [`Width`](crate::Width) either way.
pub fn single_value(r: &IrqRow) -> Option<u64> {
    let one = match r.shape {
        Shape::Single => true,
        Shape::PerCpu => r.irq.is_none() && r.description.is_empty(),
        _ => false,
    };
    match r.counts.as_slice() {
        [v] if one => Some(*v),
        _ => None,
    }
}

fn gap_cells(shape: Shape, ncpus: usize, n: usize, gap: Gap, out: &mut Vec<Cell>) {
    let len = if shape == Shape::PerCpu { ncpus } else { n };
    out.extend(std::iter::repeat_n(Cell::Gap(gap), len));
}

/// True when every CPU sits at the same column in both snapshots (no
/// hotplug between them): per-CPU cells are then a plain zip.
fn aligned(cols: &[Col]) -> bool {
    cols.iter()
        .enumerate()
        .all(|(k, &c)| c == (Some(k), Some(k)))
}

fn row_cells(cols: &[Col], aligned: bool, o: &IrqRow, n: &IrqRow, out: &mut Vec<Cell>) {
    if let (Some(a), Some(b)) = (single_value(o), single_value(n)) {
        let d = width_delta(n.width, a, b);
        match n.shape {
            Shape::Single => out.push(d),
            // one online CPU now: the value sits in its column, every other
            // CPU of the union is offline
            _ => out.extend(cols.iter().map(|&(_, j)| match j {
                Some(_) => d,
                None => Cell::Gap(Gap::CpuOffline),
            })),
        }
        return;
    }
    match (o.shape, n.shape) {
        (Shape::PerCpu, Shape::PerCpu) if !aligned => cpu_cells(cols, &o.counts, &n.counts, out),
        (a, b) if a == b && o.counts.len() == n.counts.len() => out.extend(
            o.counts
                .iter()
                .zip(&n.counts)
                .map(|(&x, &y)| counter_delta(x, y)),
        ),
        _ => gap_cells(n.shape, cols.len(), n.counts.len(), Gap::ShapeChanged, out),
    }
}

/// Compute the delta from `old` to `new`, `elapsed_s` seconds apart (a
/// non-positive or non-finite `elapsed_s` bounds no rate).
pub fn interrupts_delta(old: &Interrupts, new: &Interrupts, elapsed_s: f64) -> IrqDelta {
    let mut rows = Vec::with_capacity(new.rows().len());
    let (cpus, gone) = interrupts_delta_each(old, new, elapsed_s, |n, status, cells| {
        rows.push(RowDelta {
            label: n.label.as_str().into(),
            irq: n.irq,
            description: n.description.as_str().into(),
            parts: n.parts.clone(),
            shape: n.shape,
            status,
            cells: cells.to_vec(),
        });
    });
    IrqDelta { cpus, rows, gone }
}

/// The same delta as [`interrupts_delta`], streamed: `row` is called for
/// every row of `new` (file order) with its status and its cells, which
/// live in one scratch buffer reused from row to row — nothing per cell is
/// allocated. Returns the union CPU ids and the rows that disappeared.
pub fn interrupts_delta_each<F>(
    old: &Interrupts,
    new: &Interrupts,
    elapsed_s: f64,
    mut row: F,
) -> (Vec<u32>, Vec<RowGone>)
where
    F: FnMut(&IrqRow, RowStatus, &[Cell]),
{
    let mut scratch = DeltaScratch::default();
    let gone = interrupts_delta_each_in(&mut scratch, old, new, elapsed_s, |r, m, cells| {
        row(r, m.status, cells)
    });
    (scratch.cpus, gone)
}

/// The buffers of [`interrupts_delta_each_in`], kept by a caller that
/// computes a delta every sample: in the steady state (the same rows and
/// CPUs as the sample before) such a delta allocates nothing.
#[derive(Debug, Default)]
pub struct DeltaScratch {
    /// The union CPU ids of the latest delta.
    cpus: Vec<u32>,
    cols: Vec<Col>,
    used: Vec<bool>,
    cells: Vec<Cell>,
}

impl DeltaScratch {
    /// The union CPU ids (ascending) of the latest delta computed in it.
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }
}

/// How a row of the later snapshot relates to the earlier one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowMatch {
    pub status: RowStatus,
    /// The earlier snapshot's row at the same position has this row's
    /// label and description, byte for byte (`false` when that is not
    /// known: it may still have them).
    pub same_text: bool,
}

/// [`interrupts_delta_each`] in the caller's `scratch` (the union CPU ids
/// are left in it: [`DeltaScratch::cpus`]), also telling each row whether
/// the row at its position in `old` has its label and description
/// ([`RowMatch::same_text`]: known from the compares that match rows by
/// position, without reading them again); returns the rows that
/// disappeared (no allocation when none did). Rows are matched by
/// position while each position holds the same row in both snapshots
/// (the usual case: no key is built); from the first position that does
/// not, by key as [`interrupts_delta_each`] always did.
pub fn interrupts_delta_each_in<F>(
    scratch: &mut DeltaScratch,
    old: &Interrupts,
    new: &Interrupts,
    elapsed_s: f64,
    mut row: F,
) -> Vec<RowGone>
where
    F: FnMut(&IrqRow, RowMatch, &[Cell]),
{
    let DeltaScratch {
        cpus,
        cols,
        used,
        cells,
    } = scratch;
    union_into(&old.cpus, &new.cpus, cpus);
    cols.clear();
    cols.extend(columns(cpus, &old.cpus, &new.cpus));
    let aligned = aligned(cols);
    let bounds = Bounds::new(elapsed_s);
    used.clear();
    used.resize(old.rows().len(), false);
    // `same_text`: the matched row is the one at the same position and
    // has the same label and description (then it has the same identity)
    let mut emit = |n: &IrqRow, matched: Option<usize>, same_text: bool| {
        cells.clear();
        let status = match matched.and_then(|i| old.rows().get(i).map(|o| (i, o))) {
            None => {
                gap_cells(n.shape, cpus.len(), n.counts.len(), Gap::NewRow, cells);
                RowStatus::New
            }
            Some((i, o)) => {
                if let Some(u) = used.get_mut(i) {
                    *u = true;
                }
                if same_text || same_identity(o, n) {
                    row_cells(cols, aligned, o, n, cells);
                    bound_cells(cells, n.shape, bounds);
                    RowStatus::Same
                } else {
                    let g = Gap::IdentityChanged;
                    gap_cells(n.shape, cpus.len(), n.counts.len(), g, cells);
                    RowStatus::Changed
                }
            }
        };
        row(n, RowMatch { status, same_text }, cells);
    };
    // While every earlier position held the same key in both snapshots,
    // an arch row's occurrence count is the same in both too: the key of
    // a position is the same when its number, or its label and
    // description, are.
    let rows = new.rows();
    let mut pos = 0;
    while let (Some(n), Some(o)) = (rows.get(pos), old.rows().get(pos)) {
        let Some(same_text) = same_key(o, n) else {
            break;
        };
        emit(n, Some(pos), same_text);
        pos += 1;
    }
    if pos == rows.len() && pos == old.rows().len() {
        // every row where it was: none is gone
        return Vec::new();
    }
    if pos < rows.len() {
        let old_keys = keys(old);
        // Rows usually keep their positions between samples: match by
        // position when the keys agree, and hash only when they do not.
        let mut index: Option<HashMap<&Key, usize>> = None;
        let new_keys = keys(new);
        for (p, (k, n)) in new_keys.iter().zip(rows).enumerate().skip(pos) {
            let matched = if old_keys.get(p) == Some(k) {
                Some(p)
            } else {
                let idx = index.get_or_insert_with(|| {
                    old_keys.iter().enumerate().map(|(i, k)| (k, i)).collect()
                });
                idx.get(k).copied()
            };
            emit(n, matched, false);
        }
    }
    old.rows()
        .iter()
        .zip(used.iter())
        .filter(|(_, &u)| !u)
        .map(|(r, _)| RowGone {
            label: r.label.as_str().into(),
            irq: r.irq,
            description: r.description.as_str().into(),
        })
        .collect()
}

/// Whether the key of two rows is the same, given that every earlier row
/// had the same key in both snapshots (see [`interrupts_delta_each_in`]):
/// `None` when it is not, else whether their labels and descriptions are
/// the same too (an arch row's key holds both; a numbered row's
/// description is compared first, as [`same_identity`] would).
fn same_key(o: &IrqRow, n: &IrqRow) -> Option<bool> {
    match (o.irq, n.irq) {
        (Some(a), Some(b)) if a == b => Some(o.description == n.description && o.label == n.label),
        (None, None) if o.label == n.label && o.description == n.description => Some(true),
        _ => None,
    }
}

/// [`union_cpus`] into a reused vector.
fn union_into(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    out.clear();
    if a == b && a.is_sorted_by(|x, y| x < y) {
        // the usual case: the same CPUs, ascending
        out.extend_from_slice(a);
        return;
    }
    out.extend(a.iter().chain(b));
    out.sort_unstable();
    out.dedup();
}

/// One softirq vector's delta.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoftirqDelta {
    pub name: String,
    /// Aligned with [`SoftirqsDelta::cpus`].
    pub cells: Vec<Cell>,
}

/// Delta of two `/proc/softirqs` snapshots.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoftirqsDelta {
    pub cpus: Vec<u32>,
    pub rows: Vec<SoftirqDelta>,
}

/// Compute the softirq delta, `elapsed_s` seconds apart (as for
/// [`interrupts_delta`]); rows are matched by name.
pub fn softirqs_delta(old: &Softirqs, new: &Softirqs, elapsed_s: f64) -> SoftirqsDelta {
    let mut rows = Vec::with_capacity(new.rows.len());
    let cpus = softirqs_delta_each(old, new, elapsed_s, |n, cells| {
        rows.push(SoftirqDelta {
            name: n.name.clone(),
            cells: cells.to_vec(),
        })
    });
    SoftirqsDelta { cpus, rows }
}

/// The same delta as [`softirqs_delta`], streamed: `row` is called for
/// every vector of `new` with its cells, from one scratch buffer reused
/// from row to row. Returns the union CPU ids.
pub fn softirqs_delta_each<F>(old: &Softirqs, new: &Softirqs, elapsed_s: f64, row: F) -> Vec<u32>
where
    F: FnMut(&SoftirqRow, &[Cell]),
{
    let mut scratch = DeltaScratch::default();
    softirqs_delta_each_in(&mut scratch, old, new, elapsed_s, row);
    scratch.cpus
}

/// [`softirqs_delta_each`] in the caller's `scratch` (the union CPU ids
/// are left in it): no allocation in the steady state.
pub fn softirqs_delta_each_in<F>(
    scratch: &mut DeltaScratch,
    old: &Softirqs,
    new: &Softirqs,
    elapsed_s: f64,
    mut row: F,
) where
    F: FnMut(&SoftirqRow, &[Cell]),
{
    let DeltaScratch {
        cpus, cols, cells, ..
    } = scratch;
    union_into(&old.cpus, &new.cpus, cpus);
    cols.clear();
    cols.extend(columns(cpus, &old.cpus, &new.cpus));
    let aligned = aligned(cols);
    let bounds = Bounds::new(elapsed_s);
    for (i, n) in new.rows.iter().enumerate() {
        cells.clear();
        // vectors keep their order: look at the same position first
        let same = old.rows.get(i).filter(|o| o.name == n.name);
        match same.or_else(|| old.rows.iter().find(|o| o.name == n.name)) {
            Some(o) if aligned && o.counts.len() == cols.len() && n.counts.len() == cols.len() => {
                // no hotplug between them: a plain zip
                let pairs = o.counts.iter().zip(&n.counts);
                cells.extend(pairs.map(|(&x, &y)| counter_delta(x, y)));
                bound_cells(cells, Shape::PerCpu, bounds);
            }
            Some(o) => {
                cpu_cells(cols, &o.counts, &n.counts, cells);
                bound_cells(cells, Shape::PerCpu, bounds);
            }
            None => cells.resize(cpus.len(), Cell::Gap(Gap::NewRow)),
        }
        row(n, cells);
    }
}

#[cfg(test)]
mod tests;
