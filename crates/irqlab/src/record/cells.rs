//! A [`SampleCountersView`] as rows of cells with its [`Shape`], and [`Differ`],
//! which keeps the previous sample's counters to emit only the cells that
//! changed. While the shape stays the same (the usual case) each parsed
//! counter is compared with the previous sample's in place and overwrites
//! it: one pass, no allocation per sample; a changed cell is a 16-byte
//! [`Change`] (row, cell, value) in a reused buffer, its key and CPU read
//! from the row when written. A new shape rebuilds the rows and diffs them
//! by key. `--irq`/`--cpus` apply here. Pure: no I/O.
//!
//! Sources are listed in [`SourceKind`] (record/schema.rs); a new source
//! adds a `*_rows` walker here and its arm in `walk`.

use super::same_shape::{same_shape, Packed};
use super::schema::{CellValue, RowKind, RowMeta, Shape, SourceKind};
use super::trace_cells;
use crate::filter::Filter;
use crate::sampler::counters::SampleCountersView;
use crate::trace::sample::TraceKey;
use irqlab_core::interrupts::Shape as IrqShape;
use irqlab_core::stat::CPU_FIELDS;
use std::collections::HashMap;

/// One row of cells: `cpus[i]` ↔ `values[i]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlatRow {
    pub source: SourceKind,
    pub key: String,
    pub cpus: Vec<Option<u32>>,
    pub values: Vec<u64>,
}

/// A changed cell: value `value` of cell `col` of the differ's row `row`
/// (see [`Differ::rows`]); 16 bytes, its key and CPU read from the row
/// when written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    pub row: u32,
    pub col: u32,
    pub value: u64,
}

impl FlatRow {
    /// The CPU of cell `col`.
    pub fn cpu(&self, col: u32) -> Option<u32> {
        self.cpus.get(col as usize).copied().flatten()
    }
}

/// Name of `/proc/stat` cpu-line field `i`.
pub fn stat_field(i: usize) -> String {
    CPU_FIELDS
        .get(i)
        .map_or_else(|| format!("field{i}"), |s| (*s).to_string())
}

/// Cell key of `/proc/stat` line `line` (`intr`, `ctxt`, `softirq`): the
/// `softirq` line's total is `softirq_total`, so that it never shares a key
/// with the cpu-line field `softirq` (one key, one counter).
pub fn stat_other_key(line: &str) -> String {
    match line {
        "softirq" => "softirq_total".to_string(),
        other => other.to_string(),
    }
}

/// The layout of `s` under `filter`; `affinity` gives
/// `/proc/irq/N/smp_affinity_list`.
pub fn shape_of(
    s: SampleCountersView,
    filter: &Filter,
    affinity: &mut dyn FnMut(u32) -> Option<String>,
) -> Shape {
    let mut sh = Shape::default();
    if let Some(m) = s.snap.interrupts.as_ref() {
        let cols = filter.columns(&m.cpus);
        sh.irq_cpus = Some(
            cols.iter()
                .filter_map(|&i| m.cpus.get(i).copied())
                .collect(),
        );
        let mut seen: HashMap<&str, u32> = HashMap::new();
        for r in m.rows().iter().filter(|r| filter.keep_irq_row(r)) {
            let n = seen.entry(r.label.as_str()).or_insert(0);
            let key = if *n == 0 {
                r.label.to_string()
            } else {
                format!("{}#{n}", r.label)
            };
            *n += 1;
            let kind = match r.shape {
                IrqShape::PerCpu => RowKind::PerCpu,
                IrqShape::Single => RowKind::Single,
                IrqShape::NoCounts => RowKind::NoCounts,
                IrqShape::Irregular => RowKind::Irregular { n: r.counts.len() },
            };
            sh.irq_rows.push(RowMeta {
                key,
                label: r.label.to_string(),
                kind,
                description: r.description.to_string(),
                affinity: r.irq.and_then(&mut *affinity),
            });
        }
    }
    if let Some(m) = s.snap.softirqs.as_ref() {
        let cols = filter.columns(&m.cpus);
        sh.soft_cpus = Some(
            cols.iter()
                .filter_map(|&i| m.cpus.get(i).copied())
                .collect(),
        );
        sh.soft_rows = m.rows.iter().map(|r| r.name.clone()).collect();
    }
    if let Some(st) = s.snap.stat.as_ref() {
        let ids: Vec<u32> = st.cpus.iter().filter_map(|c| c.cpu).collect();
        let kept = filter.columns(&ids);
        sh.stat_cpus = Some(
            kept.iter()
                .filter_map(|&i| st.cpus.get(i).and_then(|c| c.cpu))
                .collect(),
        );
        sh.stat_fields = st.total.fields.len();
        for (name, v) in stat_others(st) {
            if v.is_some() {
                sh.stat_other.push(name.to_string());
            }
        }
    }
    sh.threads = s.threads.iter().map(|t| t.name.clone()).collect();
    sh.thread_pids = s.threads.iter().map(|t| t.pid).collect();
    if let Some(t) = s.trace {
        let ids = trace_cells::cpu_ids(t);
        let cols = filter.columns(&ids);
        sh.trace_cpus = Some(cols.iter().filter_map(|&i| ids.get(i).copied()).collect());
        sh.trace_rows = trace_cells::row_keys(t, &cols, &keep_traced(s, filter));
    }
    sh
}

/// Which traced hard IRQs / vectors to record: with `--irq`, those whose
/// /proc/interrupts row is recorded (by label); all without it.
pub(super) fn keep_traced<'a>(
    s: SampleCountersView<'a>,
    filter: &'a Filter,
) -> impl Fn(&TraceKey) -> bool + 'a {
    // the labels of the kept rows, matched once (not once per traced item)
    let kept: Option<std::collections::HashSet<&'a str>> = filter.irq.as_ref().map(|_| {
        s.snap
            .interrupts
            .as_ref()
            .map(|m| {
                m.rows()
                    .iter()
                    .filter(|r| filter.keep_irq_row(r))
                    .map(|r| r.label.as_str())
                    .collect()
            })
            .unwrap_or_default()
    });
    move |k: &TraceKey| {
        kept.as_ref()
            .is_none_or(|set| set.contains(k.label().as_str()))
    }
}

pub(super) fn stat_others(st: &irqlab_core::Stat) -> [(&'static str, Option<u64>); 3] {
    [
        ("intr", Some(st.intr_total)),
        ("ctxt", st.ctxt),
        ("softirq", st.softirq_total),
    ]
}

/// Where [`walk`] puts the counters of row `i` of the layout (in the order
/// of [`rows_of`]). Generic, so that the values are not a dynamic call each.
trait RowSink {
    fn row(&mut self, i: usize, values: impl Iterator<Item = u64>);
}

/// Visit the rows of `s` in layout order, handing each row's counters to
/// `sink` (which owns the buffers). The rows are those of `shape_of(s)`.
fn walk(s: SampleCountersView, filter: &Filter, sink: &mut impl RowSink) {
    let mut i = 0usize;
    if let Some(m) = s.snap.interrupts.as_ref() {
        let cols = filter.columns(&m.cpus);
        for r in m.rows().iter().filter(|r| filter.keep_irq_row(r)) {
            match r.shape {
                IrqShape::PerCpu => {
                    sink.row(i, cols.iter().filter_map(|&c| r.counts.get(c).copied()))
                }
                IrqShape::NoCounts => sink.row(i, std::iter::empty()),
                IrqShape::Single | IrqShape::Irregular => sink.row(i, r.counts.iter().copied()),
            }
            i += 1;
        }
    }
    if let Some(m) = s.snap.softirqs.as_ref() {
        let cols = filter.columns(&m.cpus);
        for r in &m.rows {
            sink.row(i, cols.iter().filter_map(|&c| r.counts.get(c).copied()));
            i += 1;
        }
    }
    if let Some(st) = s.snap.stat.as_ref() {
        let ids: Vec<u32> = st.cpus.iter().filter_map(|c| c.cpu).collect();
        let kept: Vec<&irqlab_core::stat::CpuTimes> = filter
            .columns(&ids)
            .iter()
            .filter_map(|&i| st.cpus.get(i))
            .collect();
        for f in 0..st.total.fields.len() {
            let total = st.total.fields.get(f).copied().unwrap_or(0);
            let cpus = kept.iter().map(|c| c.fields.get(f).copied().unwrap_or(0));
            sink.row(i, std::iter::once(total).chain(cpus));
            i += 1;
        }
        for (_, x) in stat_others(st) {
            if let Some(x) = x {
                sink.row(i, std::iter::once(x));
                i += 1;
            }
        }
    }
    for t in s.threads {
        sink.row(i, std::iter::once(t.cpu_ns));
        i += 1;
    }
    if let Some(t) = s.trace {
        let cols = filter.columns(&trace_cells::cpu_ids(t));
        trace_cells::row_values(t, &cols, &keep_traced(s, filter), &mut |j, vals| {
            sink.row(i + j, vals.iter().copied())
        });
    }
}

/// [`RowSink`] filling freshly laid out rows.
struct Fill<'a>(&'a mut [FlatRow]);

impl RowSink for Fill<'_> {
    fn row(&mut self, i: usize, values: impl Iterator<Item = u64>) {
        if let Some(r) = self.0.get_mut(i) {
            r.values.extend(values);
        }
    }
}

/// [`RowSink`] comparing each counter with the previous sample's in place,
/// overwriting it and emitting the cells that changed.
struct Update<'a> {
    rows: &'a mut [FlatRow],
    out: &'a mut Vec<Change>,
}

impl RowSink for Update<'_> {
    fn row(&mut self, i: usize, values: impl Iterator<Item = u64>) {
        let Some(r) = self.rows.get_mut(i) else {
            return;
        };
        let (start, before) = (self.out.len(), r.values.len());
        let mut n = 0;
        for (j, v) in values.enumerate() {
            match r.values.get_mut(j) {
                Some(old) if *old == v => {}
                Some(old) => {
                    *old = v;
                    push(self.out, i, j, v);
                }
                None => r.values.push(v),
            }
            n = j + 1;
        }
        if n != before {
            // as many values as CPUs no more: every cell again
            r.values.truncate(n);
            self.out.truncate(start);
            diff_row(None, r, i, self.out);
        }
    }
}

/// The rows (source, key, CPUs; no values) that `shape` lays out, in the
/// order [`walk`] visits them.
pub(super) fn rows_of(shape: &Shape) -> Vec<FlatRow> {
    let mut out = Vec::new();
    each_row(shape, |source, key, cpus| {
        out.push(FlatRow {
            source,
            key: key.to_string(),
            cpus: cpus.to_vec(),
            values: Vec::with_capacity(cpus.len()),
        });
    });
    out
}

/// Hand `row` each row `shape` lays out (source, key, CPUs), in the order
/// of [`rows_of`]; the rows of one CPU list get the same slice.
pub(super) fn each_row(shape: &Shape, mut row: impl FnMut(SourceKind, &str, &[Option<u32>])) {
    let ids = |c: &Option<Vec<u32>>| -> Vec<Option<u32>> {
        c.iter().flatten().map(|&c| Some(c)).collect()
    };
    let irq_cpus = ids(&shape.irq_cpus);
    for r in &shape.irq_rows {
        match r.kind {
            RowKind::PerCpu => row(SourceKind::Interrupts, &r.key, &irq_cpus),
            RowKind::Single => row(SourceKind::Interrupts, &r.key, &[None]),
            RowKind::NoCounts => row(SourceKind::Interrupts, &r.key, &[]),
            RowKind::Irregular { n } => {
                let cpus: Vec<Option<u32>> = (0..n as u32).map(Some).collect();
                row(SourceKind::Interrupts, &r.key, &cpus)
            }
        }
    }
    let soft_cpus = ids(&shape.soft_cpus);
    for name in &shape.soft_rows {
        row(SourceKind::Softirqs, name, &soft_cpus);
    }
    if shape.stat_cpus.is_some() {
        let mut cpus = vec![None];
        cpus.extend(ids(&shape.stat_cpus));
        for f in 0..shape.stat_fields {
            row(SourceKind::Stat, &stat_field(f), &cpus);
        }
        for name in &shape.stat_other {
            row(SourceKind::Stat, &stat_other_key(name), &[None]);
        }
    }
    for name in &shape.threads {
        let cpu = name
            .strip_prefix("ksoftirqd/")
            .and_then(|n| n.parse::<u32>().ok());
        row(SourceKind::Threads, name, &[cpu]);
    }
    if shape.trace_cpus.is_some() {
        let cpus = ids(&shape.trace_cpus);
        for key in &shape.trace_rows {
            match trace_cells::cpuless(key) {
                true => row(SourceKind::Trace, key, &[None]),
                false => row(SourceKind::Trace, key, &cpus),
            }
        }
    }
}

/// The cells a [`Shape`] lays out (what [`Differ`] writes under it):
/// per source, per row key, the row's CPUs (sorted).
#[derive(Debug, Default)]
pub struct LayoutCells(HashMap<SourceKind, HashMap<String, Vec<Option<u32>>>>);

impl LayoutCells {
    pub fn of(shape: &Shape) -> LayoutCells {
        let mut m: HashMap<SourceKind, HashMap<String, Vec<Option<u32>>>> = HashMap::new();
        for mut r in rows_of(shape) {
            r.cpus.sort_unstable();
            m.entry(r.source).or_default().insert(r.key, r.cpus);
        }
        LayoutCells(m)
    }

    /// Why `c` is not a cell of the layout (its row or its CPU is not in
    /// it), naming what the layout has; `None` when it is one.
    pub fn stray(&self, c: &CellValue) -> Option<String> {
        let src = c.source.name();
        let Some(cpus) = self.0.get(&c.source).and_then(|rows| rows.get(&c.key)) else {
            return Some(format!(
                "cell {src} {:?}: the layout has no {src} row {:?} (a line lists only cells of the layout it follows)",
                c.key, c.key
            ));
        };
        if cpus.binary_search(&c.cpu).is_ok() {
            return None;
        }
        let cpu = c
            .cpu
            .map_or_else(|| "without a CPU".into(), |n| format!("CPU {n}"));
        let want: Vec<String> = cpus
            .iter()
            .map(|c| c.map_or_else(|| "none".into(), |n| n.to_string()))
            .collect();
        Some(format!(
            "cell {src} {:?} {cpu}: not a cell of the layout (its CPUs there: {})",
            c.key,
            match want.len() {
                0 => "none, a row without counts".into(),
                1..=8 => want.join(" "),
                n => format!("{} … {} ({n})", want[0], want[n - 1]),
            }
        ))
    }
}

/// Push cell `j` of row `i` with value `v`.
fn push(out: &mut Vec<Change>, i: usize, j: usize, v: u64) {
    out.push(Change {
        row: i as u32,
        col: j as u32,
        value: v,
    });
}

/// The cells of `new` (row `i`) that differ from `old` (every cell when
/// the CPUs or the number of values differ).
fn diff_row(old: Option<&FlatRow>, new: &FlatRow, i: usize, out: &mut Vec<Change>) {
    let n = new.cpus.len().min(new.values.len());
    match old {
        Some(o) if o.cpus == new.cpus && o.values.len() == new.values.len() => {
            for (j, (a, b)) in o.values.iter().zip(&new.values).enumerate().take(n) {
                if a != b {
                    push(out, i, j, *b);
                }
            }
        }
        _ => {
            for (j, &v) in new.values.iter().enumerate().take(n) {
                push(out, i, j, v);
            }
        }
    }
}

/// What [`Differ::sample`] found besides the changed cells.
#[derive(Debug, Default)]
pub struct Sampled {
    /// The shape, when it changed (always the first time).
    pub shape: Option<Shape>,
    /// Every cell is new (the first sample): they were not put in `out`,
    /// read them from [`Differ::rows`] (a big machine's first sample is
    /// ~1.2 M cells, too many to hand out one owned value each).
    pub every: bool,
}

/// Keeps the previous sample's counters to emit only changed cells.
#[derive(Debug, Default)]
pub struct Differ {
    /// The latest sample's rows, in layout order.
    rows: Vec<FlatRow>,
    shape: Option<Shape>,
    /// The strings of `shape`, packed for [`same_shape`].
    packed: Packed,
}

impl Differ {
    /// Diff `s` against the previous sample: `out` (cleared) gets the cells
    /// that changed, except the first time (see [`Sampled::every`]).
    pub fn sample(
        &mut self,
        s: SampleCountersView,
        filter: &Filter,
        affinity: &mut dyn FnMut(u32) -> Option<String>,
        out: &mut Vec<Change>,
    ) -> Sampled {
        out.clear();
        if let Some(old) = &self.shape {
            if same_shape(old, &self.packed, s, filter, affinity) {
                debug_assert!(
                    shape_of(s, filter, affinity) == *old,
                    "same_shape and shape_of disagree"
                );
                // the usual case: counters compared and overwritten in place
                let rows = &mut self.rows;
                walk(s, filter, &mut Update { rows, out });
                return Sampled::default();
            }
        }
        let shape = shape_of(s, filter, affinity);
        debug_assert!(
            self.shape.as_ref() != Some(&shape),
            "same_shape missed an unchanged layout"
        );
        let every = self.shape.is_none();
        if every {
            self.rows = rows_of(&shape);
            walk(s, filter, &mut Fill(&mut self.rows));
        } else {
            self.new_shape(s, filter, &shape, out);
        }
        self.packed = Packed::of(&shape);
        self.shape = Some(shape.clone());
        Sampled {
            shape: Some(shape),
            every,
        }
    }

    /// The latest sample's rows, in layout order.
    pub fn rows(&self) -> &[FlatRow] {
        &self.rows
    }

    /// Rows rebuilt from `shape`, diffed by key against the rows before.
    fn new_shape(
        &mut self,
        s: SampleCountersView,
        filter: &Filter,
        shape: &Shape,
        out: &mut Vec<Change>,
    ) {
        let mut rows = rows_of(shape);
        walk(s, filter, &mut Fill(&mut rows));
        let old: HashMap<(SourceKind, &str), &FlatRow> = self
            .rows
            .iter()
            .map(|r| ((r.source, r.key.as_str()), r))
            .collect();
        for (i, r) in rows.iter().enumerate() {
            diff_row(old.get(&(r.source, r.key.as_str())).copied(), r, i, out);
        }
        self.rows = rows;
    }

    /// The rows of the latest sample (a segment's first sample holds
    /// every cell), in layout order.
    pub fn each_row(&self, mut f: impl FnMut(&FlatRow)) {
        self.rows.iter().for_each(&mut f);
    }

    /// Cells of the latest sample.
    pub fn cells(&self) -> usize {
        self.rows.iter().map(|r| r.values.len()).sum()
    }

    /// Every cell of the latest sample.
    pub fn all_cells(&self) -> Vec<CellValue> {
        let mut out = Vec::with_capacity(self.rows.iter().map(|r| r.values.len()).sum());
        for (i, r) in self.rows.iter().enumerate() {
            diff_row(None, r, i, &mut out);
        }
        self.cells_of(&out)
    }

    /// `changes` (of the latest sample) as owned cells.
    pub fn cells_of(&self, changes: &[Change]) -> Vec<CellValue> {
        changes
            .iter()
            .filter_map(|c| {
                let r = self.rows.get(c.row as usize)?;
                Some(CellValue {
                    source: r.source,
                    key: r.key.clone(),
                    cpu: r.cpu(c.col),
                    value: c.value,
                })
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use irqlab_core::Stat;

    const STAT: &[u8] = b"cpu  10 0 20 300 4 5 66 0 0 0\ncpu0 10 0 20 300 4 5 66 0 0 0\nintr 900 1 2\nctxt 77\nsoftirq 5000 1 2 3\n";

    fn snap() -> irqlab_core::Snapshot {
        irqlab_core::Snapshot {
            stat: Some(Stat::parse(STAT).unwrap()),
            ..Default::default()
        }
    }

    fn view(snap: &irqlab_core::Snapshot) -> SampleCountersView<'_> {
        SampleCountersView {
            snap,
            threads: &[],
            trace: None,
        }
    }

    #[test]
    fn every_cell_key_is_unique_so_an_unchanged_stat_emits_nothing() {
        let snap = snap();
        let mut d = Differ::default();
        let mut first = Vec::new();
        let s = d.sample(view(&snap), &Filter::default(), &mut |_| None, &mut first);
        assert!(s.every && first.is_empty());
        let first = d.all_cells();
        let mut keys: Vec<(SourceKind, &str)> =
            d.rows.iter().map(|r| (r.source, r.key.as_str())).collect();
        keys.sort();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "two rows share a key: {keys:?}");
        let total = first
            .iter()
            .find(|c| c.key == "softirq_total")
            .map(|c| c.value);
        assert_eq!(total, Some(5000));
        let field = first.iter().find(|c| c.key == "softirq" && c.cpu.is_none());
        assert_eq!(field.map(|c| c.value), Some(66), "the cpu line's field");
        let mut again = Vec::new();
        let s = d.sample(view(&snap), &Filter::default(), &mut |_| None, &mut again);
        assert!(s.shape.is_none() && !s.every);
        assert!(again.is_empty(), "nothing changed, yet {again:?}");
    }

    fn irq_snap(text: &str) -> irqlab_core::Snapshot {
        irqlab_core::Snapshot {
            interrupts: Some(irqlab_core::Interrupts::parse(text.as_bytes()).unwrap()),
            ..snap()
        }
    }

    fn cells(
        d: &mut Differ,
        snap: &irqlab_core::Snapshot,
    ) -> (bool, Vec<(String, Option<u32>, u64)>) {
        let mut out = Vec::new();
        let s = d.sample(view(snap), &Filter::default(), &mut |_| None, &mut out);
        let out = match s.every {
            true => d.all_cells(),
            false => d.cells_of(&out),
        };
        let mut v: Vec<_> = out
            .into_iter()
            .filter(|c| c.source == SourceKind::Interrupts)
            .map(|c| (c.key, c.cpu, c.value))
            .collect();
        v.sort();
        (s.shape.is_some(), v)
    }

    #[test]
    fn only_changed_cells_in_place_and_by_key_when_rows_come_and_go() {
        let mut d = Differ::default();
        let a = irq_snap("  CPU0 CPU1\n 24: 1 2 PCI-MSI a\nLOC: 5 6 Local timer\n");
        let (shaped, first) = cells(&mut d, &a);
        assert!(shaped);
        assert_eq!(first.len(), 4, "{first:?}");
        let b = irq_snap("  CPU0 CPU1\n 24: 1 3 PCI-MSI a\nLOC: 5 6 Local timer\n");
        assert_eq!(cells(&mut d, &b), (false, vec![("24".into(), Some(1), 3)]));
        // overwritten in place: the next diff is against b, not a
        assert_eq!(cells(&mut d, &b), (false, vec![]));
        assert_eq!(cells(&mut d, &a), (false, vec![("24".into(), Some(1), 2)]));
        // a new row: the shape changes, only the new row's cells and what
        // moved are emitted
        let c =
            irq_snap("  CPU0 CPU1\n 24: 1 2 PCI-MSI a\n 25: 0 9 PCI-MSI b\nLOC: 5 7 Local timer\n");
        let (shaped, got) = cells(&mut d, &c);
        assert!(shaped);
        let want: Vec<(String, Option<u32>, u64)> = vec![
            ("25".into(), Some(0), 0),
            ("25".into(), Some(1), 9),
            ("LOC".into(), Some(1), 7),
        ];
        assert_eq!(got, want);
        assert_eq!(cells(&mut d, &c), (false, vec![]));
        let every: Vec<_> = d
            .all_cells()
            .into_iter()
            .filter(|c| c.source == SourceKind::Interrupts)
            .map(|c| c.value)
            .collect();
        assert_eq!(every, vec![1, 2, 0, 9, 5, 7]);
        // a CPU goes away: the rows' CPUs differ, every cell again
        let e = irq_snap("  CPU0\n 24: 1 PCI-MSI a\n 25: 0 PCI-MSI b\nLOC: 5 Local timer\n");
        let (shaped, got) = cells(&mut d, &e);
        assert!(shaped);
        assert_eq!(got.len(), 3, "{got:?}");
    }
}
