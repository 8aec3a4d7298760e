//! Rates sections from two snapshots: interrupt rows (per CPU, or
//! reduced to the busiest CPU as they are built) and softirqs, and
//! [`ReusedRates`], `top`'s text report rebuilt in place per sample. Every
//! count difference and rate comes from `irqlab_core::delta`; this only
//! picks the kept columns and shapes lines.

use super::stat::stat_section_into;
use super::{
    busiest_cpu, line_meta, pick, IrqLine, IrqRows, IrqSection, Report, SoftirqLine, SoftirqSection,
};
use crate::filter::Filter;
use irqlab_core::delta::{self, Cell};
use irqlab_core::softirqs::Softirqs;
use irqlab_core::{Interrupts, IrqRow, Shape, Snapshot};

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
        line.total_rate = (secs > 0.0).then(|| total as f64 / secs);
        line.gaps = gaps;
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
            let total: u64 = counts.iter().flatten().sum();
            SoftirqLine {
                name: r.name.clone(),
                counts,
                total,
                rates: Some(rates),
                total_rate: (secs > 0.0).then(|| total as f64 / secs),
            }
        })
        .collect();
    SoftirqSection {
        cpus: pick(&d.cpus, &cols),
        rows,
    }
}

/// The rates report `top --batch --format text` prints every sample
/// ([`rates`](fn@super::rates) with the default [`RateOpts`](super::RateOpts)),
/// rebuilt in place: lines, names and vectors of the sample before are
/// overwritten, so a steady-state sample (the same rows and CPUs) builds
/// its report without allocating. The same report as `rates`, field for
/// field (tested).
#[derive(Debug, Default)]
pub struct ReusedRates {
    report: Report,
    delta: delta::DeltaScratch,
    union: Vec<u32>,
    cols: Vec<usize>,
    picked: Vec<Cell>,
}

impl ReusedRates {
    /// The report the last [`update`](Self::update) made (empty before
    /// the first).
    pub fn last(&self) -> &Report {
        &self.report
    }

    /// The rates report over `old` → `new`, in place of the last one.
    pub fn update(&mut self, old: &Snapshot, new: &Snapshot, f: &Filter) -> &Report {
        let secs = new.elapsed_since(old);
        let ReusedRates {
            report,
            delta: scratch,
            union,
            cols,
            picked,
        } = self;
        report.interval_s = Some(secs);
        match (&old.interrupts, &new.interrupts) {
            (Some(o), Some(n)) => {
                let s = report.interrupts.get_or_insert_with(|| IrqSection {
                    cpus: Vec::new(),
                    rows: Vec::new(),
                    gone: Vec::new(),
                });
                union_into(&o.cpus, &n.cpus, union);
                kept_cols(union, f, cols);
                let all = cols.len() == union.len();
                s.cpus.clear();
                s.cpus
                    .extend(cols.iter().filter_map(|&i| union.get(i).copied()));
                let rows = &mut s.rows;
                let mut k = 0;
                let gone = delta::interrupts_delta_each_in(scratch, o, n, secs, |r, _, cells| {
                    if !f.keep_irq_row(r) {
                        return;
                    }
                    let cells = pick_cells(r, cells, all, cols, picked);
                    if k == rows.len() {
                        rows.push(line_meta(r));
                    } else if let Some(l) = rows.get_mut(k) {
                        line_meta_into(r, l);
                    }
                    if let Some(l) = rows.get_mut(k) {
                        rates_into(l, r, cells, secs);
                    }
                    k += 1;
                });
                rows.truncate(k);
                s.gone.clear();
                s.gone.extend(gone.into_iter().map(|g| g.label));
            }
            _ => report.interrupts = None,
        }
        match (&old.softirqs, &new.softirqs) {
            (Some(o), Some(n)) => {
                let s = report.softirqs.get_or_insert_with(|| SoftirqSection {
                    cpus: Vec::new(),
                    rows: Vec::new(),
                });
                union_into(&o.cpus, &n.cpus, union);
                kept_cols(union, f, cols);
                s.cpus.clear();
                s.cpus
                    .extend(cols.iter().filter_map(|&i| union.get(i).copied()));
                let rows = &mut s.rows;
                let mut k = 0;
                delta::softirqs_delta_each_in(scratch, o, n, secs, |r, cells| {
                    if k == rows.len() {
                        rows.push(SoftirqLine {
                            name: String::new(),
                            counts: Vec::new(),
                            total: 0,
                            rates: None,
                            total_rate: None,
                        });
                    }
                    if let Some(l) = rows.get_mut(k) {
                        picked.clear();
                        picked.extend(cols.iter().filter_map(|&i| cells.get(i).copied()));
                        l.name.clone_from(&r.name);
                        l.counts.clear();
                        l.counts.extend(picked.iter().map(|c| c.count()));
                        l.total = l.counts.iter().flatten().sum();
                        let rates = l.rates.get_or_insert_with(Vec::new);
                        rates.clear();
                        rates.extend(picked.iter().map(|c| c.rate(secs)));
                        l.total_rate = (secs > 0.0).then(|| l.total as f64 / secs);
                    }
                    k += 1;
                });
                rows.truncate(k);
            }
            _ => report.softirqs = None,
        }
        match (&old.stat, &new.stat) {
            (Some(o), Some(n)) => {
                let s = report.stat.get_or_insert_with(Default::default);
                stat_section_into(o, n, f, Some(secs), s);
            }
            _ => report.stat = None,
        }
        report
    }
}

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

/// [`line_meta`] of `row` into `l`, reusing its strings and vectors.
fn line_meta_into(row: &IrqRow, l: &mut IrqLine) {
    l.label.clear();
    l.label.push_str(&row.label);
    l.irq = row.irq;
    l.shape = row.shape;
    l.counts = None;
    l.deltas = None;
    set_opt(&mut l.chip, &row.parts.chip);
    l.hwirq = row.parts.hwirq;
    set_opt(&mut l.trigger, &row.parts.trigger);
    set_opt(&mut l.flow, &row.parts.flow);
    let mut k = 0;
    each_action(&row.parts.actions, |a| {
        match l.actions.get_mut(k) {
            Some(s) => {
                s.clear();
                s.push_str(a);
            }
            None => l.actions.push(a.to_string()),
        }
        k += 1;
    });
    l.actions.truncate(k);
    l.description.clear();
    l.description.push_str(&row.description);
    l.affinity = None;
    l.busiest = None;
    l.busiest_count = None;
}

/// Each action of `DescParts::actions`' list (`, `-separated, empty
/// pieces dropped), found without building a `&str` pattern searcher per
/// row per sample (what `str::split` with a `&str` does: most of the
/// metadata's cost).
fn each_action(list: &str, mut each: impl FnMut(&str)) {
    let mut rest = list;
    while let Some(i) = rest.as_bytes().windows(2).position(|w| w == b", ") {
        // `i` is at a `,` (ASCII): both halves are on char boundaries
        let piece = rest.get(..i).unwrap_or_default();
        if !piece.is_empty() {
            each(piece);
        }
        rest = rest.get(i + 2..).unwrap_or_default();
    }
    if !rest.is_empty() {
        each(rest);
    }
}

/// `Some(s)` unless `s` is empty, reusing `dst`'s string.
fn set_opt(dst: &mut Option<String>, s: &str) {
    match dst {
        _ if s.is_empty() => *dst = None,
        Some(d) => {
            d.clear();
            d.push_str(s);
        }
        None => *dst = Some(s.to_string()),
    }
}

/// What [`RateCols::line`] sets of a line without deltas, in place.
fn rates_into(l: &mut IrqLine, r: &IrqRow, cells: &[Cell], secs: f64) {
    let rates = l.rates.get_or_insert_with(Vec::new);
    rates.clear();
    rates.extend(cells.iter().map(|c| c.rate(secs)));
    if cells.iter().any(|c| matches!(c, Cell::Gap(_))) {
        let gaps = l.gaps.get_or_insert_with(Vec::new);
        gaps.clear();
        gaps.extend(cells.iter().map(|c| match c {
            Cell::Gap(g) => Some(*g),
            Cell::Count(_) => None,
        }));
    } else {
        l.gaps = None;
    }
    let total: u64 = cells.iter().filter_map(|c| c.count()).sum();
    l.deltas = None;
    l.total = total;
    l.total_rate = (secs > 0.0).then(|| total as f64 / secs);
    l.since_boot = Some(r.total());
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::{rates, RateOpts};
    use irqlab_core::stat::Stat;

    fn snap(k: u64, irqs: &str, soft: &str, stat: Option<&str>) -> Snapshot {
        Snapshot {
            mono_ns: k * 1_001_000_000,
            wall_ns: 1_795_462_201_000_000_000 + k * 1_001_000_000,
            interrupts: Some(Interrupts::parse(irqs.as_bytes()).unwrap()),
            softirqs: Some(Softirqs::parse(soft.as_bytes()).unwrap()),
            stat: stat.map(|s| Stat::parse(s.as_bytes()).unwrap()),
        }
    }

    /// Samples whose rows, names, CPUs and shapes change from one to the
    /// next: rows come, go and move, a CPU comes online, a counter goes
    /// back (a gap), a section disappears and comes back.
    fn samples() -> Vec<Snapshot> {
        let two = "           CPU0       CPU1\n";
        let three = "           CPU0       CPU1       CPU2\n";
        let soft2 = "          CPU0  CPU1\n  HI:  1  2\n  TIMER:  10  20\n";
        let soft3 = "          CPU0  CPU1  CPU2\n  TIMER:  30  40  5\n";
        let st = |u: u64| {
            format!("cpu  {} 0 5 100 0 0 1 0 0 0\ncpu0 {u} 0 2 50 0 0 1 0 0 0\ncpu1 {u} 0 3 50 0 0 0 0 0 0\nintr {} 1 2\nctxt {}\nsoftirq 9 1 8\n", 2 * u, 100 * u, 7 * u)
        };
        let (s1, s2, s3) = (st(10), st(20), st(30));
        vec![
            snap(1, &format!("{two} 24:  1  2  IO-APIC   5-edge      ACPI:Ged\n 36:  7  0  PCI-MSI-0000:00:04.0   0-edge      virtio1-req.0, virtio1-x\nLOC:  100  99   Local timer interrupts\nERR:  0\n"), soft2, Some(&s1)),
            snap(2, &format!("{two} 24:  5  2  IO-APIC   5-edge      ACPI:Ged\n 36:  9  3  PCI-MSI-0000:00:04.0   0-edge      virtio1-req.0, virtio1-x\nLOC:  200  199   Local timer interrupts\nERR:  0\n"), soft2, Some(&s2)),
            // a row gone, a row new, one with fewer actions, a counter back
            snap(3, &format!("{two} 36:  8  4  PCI-MSI-0000:00:04.0   0-edge      virtio1-req.0\n 40:  1  1  PCI-MSI-0000:00:05.0   0-edge      eth0\nLOC:  300  299   Local timer interrupts\nERR:  0\n"), soft2, Some(&s3)),
            // a CPU online, rows moved, no /proc/stat
            snap(4, &format!("{three}LOC:  400  399  1   Local timer interrupts\n 40:  2  1  0  PCI-MSI-0000:00:05.0   0-edge      eth0\nERR:  1\n"), soft3, None),
            snap(5, &format!("{three}LOC:  500  499  9   Local timer interrupts\n 40:  3  1  0  PCI-MSI-0000:00:05.0   0-edge      eth0\nERR:  1\n"), soft3, Some(&s3)),
            snap(6, &format!("{three}LOC:  600  599  19   Local timer interrupts\n 40:  3  1  0  PCI-MSI-0000:00:05.0   0-edge      eth0\nERR:  1\n"), soft3, Some(&st(40))),
        ]
    }

    #[test]
    fn actions_are_split_as_the_parsed_row_splits_them() {
        for list in [
            "",
            "a",
            "virtio1-req.0, virtio1-x",
            ", a",
            "a, ",
            "a, , b",
            "a,, b",
            "a ,b",
            ", , ,",
            ",,  ,",
            "eth0-tx, eth0-rx, ü, 東, x",
            "a,",
            ",",
            " , ",
        ] {
            let parts = irqlab_core::desc::DescParts {
                actions: list.into(),
                ..Default::default()
            };
            let mut got = Vec::new();
            each_action(list, |a| got.push(a.to_string()));
            let want: Vec<&str> = parts.actions().collect();
            assert_eq!(got, want, "{list:?}");
        }
    }

    #[test]
    fn the_reused_text_report_is_the_rates_report_of_every_sample() {
        let filters = [
            Filter::default(),
            Filter {
                cpus: Some(vec![1, 2]),
                ..Filter::default()
            },
            Filter::from_flags(Some("virtio|eth|LOC"), Some("0")).unwrap(),
        ];
        let s = samples();
        for f in &filters {
            let mut reused = ReusedRates::default();
            for pair in s.windows(2) {
                let want = rates(&pair[0], &pair[1], f, RateOpts::default());
                let got = reused.update(&pair[0], &pair[1], f);
                assert_eq!(format!("{got:?}"), format!("{want:?}"));
            }
        }
    }
}
