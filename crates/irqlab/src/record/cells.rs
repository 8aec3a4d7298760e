//! A [`SampleView`] flattened into rows of cells ([`Flat`]) with its
//! [`Shape`], and [`Differ`], which keeps the previous sample to emit only
//! the cells that changed. `--irq`/`--cpus` apply here. Pure: no I/O.

use super::schema::{CellValue, RowKind, RowMeta, Shape, SourceKind};
use crate::record::source::SampleView;
use crate::report::Filter;
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

/// A sample as rows of cells plus its layout.
#[derive(Debug, Clone, Default)]
pub struct Flat {
    pub shape: Shape,
    pub rows: Vec<FlatRow>,
}

fn row(source: SourceKind, key: String, cpus: Vec<Option<u32>>, values: Vec<u64>) -> FlatRow {
    FlatRow {
        source,
        key,
        cpus,
        values,
    }
}

/// Name of `/proc/stat` cpu-line field `i`.
pub fn stat_field(i: usize) -> String {
    CPU_FIELDS
        .get(i)
        .map_or_else(|| format!("field{i}"), |s| (*s).to_string())
}

/// Flatten `s`; `affinity` gives `/proc/irq/N/smp_affinity_list`.
pub fn flatten(
    s: SampleView,
    filter: &Filter,
    affinity: &mut dyn FnMut(u32) -> Option<String>,
) -> Flat {
    let mut f = Flat::default();
    if let Some(m) = s.snap.interrupts.as_ref() {
        let cols = filter.columns(&m.cpus);
        let cpus: Vec<u32> = cols
            .iter()
            .filter_map(|&i| m.cpus.get(i).copied())
            .collect();
        f.shape.irq_cpus = Some(cpus.clone());
        let mut seen: HashMap<&str, u32> = HashMap::new();
        for r in m.rows() {
            if !filter.keep_irq_row(r) {
                continue;
            }
            let n = seen.entry(r.label.as_str()).or_insert(0);
            let key = if *n == 0 {
                r.label.clone()
            } else {
                format!("{}#{n}", r.label)
            };
            *n += 1;
            let (kind, rc, rv) = match r.shape {
                IrqShape::PerCpu => (
                    RowKind::PerCpu,
                    cpus.iter().map(|&c| Some(c)).collect(),
                    cols.iter()
                        .filter_map(|&i| r.counts.get(i).copied())
                        .collect(),
                ),
                IrqShape::Single => (RowKind::Single, vec![None], r.counts.clone()),
                IrqShape::NoCounts => (RowKind::NoCounts, vec![], vec![]),
                IrqShape::Irregular => (
                    RowKind::Irregular { n: r.counts.len() },
                    (0..r.counts.len() as u32).map(Some).collect(),
                    r.counts.clone(),
                ),
            };
            f.shape.irq_rows.push(RowMeta {
                key: key.clone(),
                label: r.label.clone(),
                kind,
                description: r.description.clone(),
                affinity: r.irq.and_then(&mut *affinity),
            });
            f.rows.push(row(SourceKind::Interrupts, key, rc, rv));
        }
    }
    if let Some(m) = s.snap.softirqs.as_ref() {
        let cols = filter.columns(&m.cpus);
        let cpus: Vec<u32> = cols
            .iter()
            .filter_map(|&i| m.cpus.get(i).copied())
            .collect();
        f.shape.soft_cpus = Some(cpus.clone());
        for r in &m.rows {
            f.shape.soft_rows.push(r.name.clone());
            let v = cols
                .iter()
                .filter_map(|&i| r.counts.get(i).copied())
                .collect();
            f.rows.push(row(
                SourceKind::Softirqs,
                r.name.clone(),
                cpus.iter().map(|&c| Some(c)).collect(),
                v,
            ));
        }
    }
    if let Some(st) = s.snap.stat.as_ref() {
        stat_rows(st, filter, &mut f);
    }
    for t in s.threads {
        f.shape.threads.push(t.name.clone());
        let cpu = match t.kind {
            crate::threads::ThreadKind::Ksoftirqd { cpu } => Some(cpu),
            crate::threads::ThreadKind::IrqThread { .. } => None,
        };
        f.rows.push(row(
            SourceKind::Threads,
            t.name.clone(),
            vec![cpu],
            vec![t.cpu_ns],
        ));
    }
    f
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

/// `/proc/stat`: one row per cpu-line field (CPU `None` = the total line),
/// then the `intr`, `ctxt` and `softirq` lines' totals.
fn stat_rows(st: &irqlab_core::Stat, filter: &Filter, f: &mut Flat) {
    let ids: Vec<u32> = st.cpus.iter().filter_map(|c| c.cpu).collect();
    let keep: Vec<usize> = filter.columns(&ids);
    let kept: Vec<&irqlab_core::stat::CpuTimes> =
        keep.iter().filter_map(|&i| st.cpus.get(i)).collect();
    f.shape.stat_cpus = Some(kept.iter().filter_map(|c| c.cpu).collect());
    f.shape.stat_fields = st.total.fields.len();
    for i in 0..st.total.fields.len() {
        let mut cpus = vec![None];
        let mut values = vec![st.total.fields.get(i).copied().unwrap_or(0)];
        for c in &kept {
            cpus.push(c.cpu);
            values.push(c.fields.get(i).copied().unwrap_or(0));
        }
        f.rows
            .push(row(SourceKind::Stat, stat_field(i), cpus, values));
    }
    let others = [
        ("intr", Some(st.intr_total)),
        ("ctxt", st.ctxt),
        ("softirq", st.softirq_total),
    ];
    for (name, v) in others {
        if let Some(v) = v {
            f.shape.stat_other.push(name.to_string());
            f.rows.push(row(
                SourceKind::Stat,
                stat_other_key(name),
                vec![None],
                vec![v],
            ));
        }
    }
}

/// Every cell of `f` (a segment's first sample).
pub fn all_cells(f: &Flat) -> Vec<CellValue> {
    let mut out = Vec::with_capacity(f.rows.iter().map(|r| r.values.len()).sum());
    for r in &f.rows {
        for (&cpu, &value) in r.cpus.iter().zip(&r.values) {
            out.push(CellValue {
                source: r.source,
                key: r.key.clone(),
                cpu,
                value,
            });
        }
    }
    out
}

/// Keeps the previous sample's rows to emit only changed cells.
#[derive(Debug, Default)]
pub struct Differ {
    prev: HashMap<(SourceKind, String), FlatRow>,
    shape: Option<Shape>,
}

impl Differ {
    /// Forget everything: the next [`Differ::cells`] emits every cell and
    /// the shape.
    pub fn reset(&mut self) {
        self.prev.clear();
        self.shape = None;
    }

    /// Forget the cells but keep the shape: the next [`Differ::cells`]
    /// emits every cell (a segment's first sample) and the shape only if it
    /// changed (a segment keeps the shape of the one before it).
    pub fn restart(&mut self) {
        self.prev.clear();
    }

    /// The cells of `f` that differ from the previous sample, and its shape
    /// when that changed (always after a reset).
    pub fn cells(&mut self, f: Flat) -> (Option<Shape>, Vec<CellValue>) {
        let mut out = Vec::new();
        let mut next = HashMap::with_capacity(f.rows.len());
        for r in f.rows {
            let k = (r.source, r.key);
            let old = self.prev.remove(&k);
            let same_cpus = old.as_ref().is_some_and(|o| o.cpus == r.cpus);
            for (i, (&cpu, &v)) in r.cpus.iter().zip(&r.values).enumerate() {
                let changed = !same_cpus || old.as_ref().and_then(|o| o.values.get(i)) != Some(&v);
                if changed {
                    out.push(CellValue {
                        source: k.0,
                        key: k.1.clone(),
                        cpu,
                        value: v,
                    });
                }
            }
            let r = FlatRow {
                source: k.0,
                key: k.1.clone(),
                cpus: r.cpus,
                values: r.values,
            };
            next.insert(k, r);
        }
        self.prev = next;
        let shape = (self.shape.as_ref() != Some(&f.shape)).then(|| f.shape.clone());
        self.shape = Some(f.shape);
        (shape, out)
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

    fn view(snap: &irqlab_core::Snapshot) -> SampleView<'_> {
        SampleView { snap, threads: &[] }
    }

    #[test]
    fn every_cell_key_is_unique_so_an_unchanged_stat_emits_nothing() {
        let snap = snap();
        let f = flatten(view(&snap), &Filter::default(), &mut |_| None);
        let mut keys: Vec<(SourceKind, &str)> =
            f.rows.iter().map(|r| (r.source, r.key.as_str())).collect();
        keys.sort();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "two rows share a key: {keys:?}");
        let mut d = Differ::default();
        let (_, first) = d.cells(f);
        let total = first
            .iter()
            .find(|c| c.key == "softirq_total")
            .map(|c| c.value);
        assert_eq!(total, Some(5000));
        let field = first.iter().find(|c| c.key == "softirq" && c.cpu.is_none());
        assert_eq!(field.map(|c| c.value), Some(66), "the cpu line's field");
        let f = flatten(view(&snap), &Filter::default(), &mut |_| None);
        let (shape, again) = d.cells(f);
        assert!(shape.is_none());
        assert!(again.is_empty(), "nothing changed, yet {again:?}");
    }
}
