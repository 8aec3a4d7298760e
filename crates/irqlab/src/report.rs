//! Report: the view model of `show` and `top --batch` text, built from
//! one snapshot (counts) or two (deltas and rates via `irqlab_core::delta`).
//!
//! Owns the JSON contract documented in README; rows are kept by
//! `crate::filter::Filter`. Knows nothing about terminals or files; the
//! exporters in `export/` write a Report to any `io::Write`.

use crate::filter::Filter;
use crate::sampler::Frame;
use irqlab_core::delta::{self, Cell, CpuPct};
use irqlab_core::softirqs::Softirqs;
use irqlab_core::stat::{CpuTimes, Stat};
use irqlab_core::{Interrupts, IrqRow, Shape, Snapshot};
use serde::Serialize;

/// The whole report.
#[derive(Debug, Serialize, Default)]
pub struct Report {
    /// Seconds between the two snapshots (rates mode only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<f64>,
    pub interrupts: Option<IrqSection>,
    pub softirqs: Option<SoftirqSection>,
    pub stat: Option<StatSection>,
}

#[derive(Debug, Serialize)]
pub struct IrqSection {
    pub cpus: Vec<u32>,
    pub rows: Vec<IrqLine>,
    /// Rows present only in the first snapshot (rates mode).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gone: Vec<String>,
}

/// One interrupts row. Snapshot mode fills `counts`/`total`; rates mode
/// fills `deltas`, `rates`, `total`, `total_rate` and `gaps`.
#[derive(Debug, Serialize)]
pub struct IrqLine {
    pub label: String,
    pub irq: Option<u32>,
    /// `per_cpu`, `single`, `no_counts` or `irregular`.
    pub shape: Shape,
    pub counts: Option<Vec<u64>>,
    pub total: u64,
    /// Per-CPU (or single) count differences; null = gap (rates mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deltas: Option<Vec<Option<u64>>>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "ser_rates")]
    pub rates: Option<Vec<Option<f64>>>,
    /// Rounded as `rates` are (integral values as integers, else to 0.001).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_total_rate"
    )]
    pub total_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gaps: Option<Vec<Option<delta::Gap>>>,
    pub chip: Option<String>,
    pub hwirq: Option<i64>,
    pub trigger: Option<String>,
    pub flow: Option<String>,
    pub actions: Vec<String>,
    pub description: String,
    /// Effective (else configured) affinity CPU list, when it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affinity: Option<String>,
    /// Count since boot over all CPUs (rates mode; for `--sort total`).
    #[serde(skip)]
    pub since_boot: Option<u64>,
    /// The busiest CPU's id and rate, when `rates` was reduced to it
    /// ([`from_delta_busiest`]; `None` also when no CPU had a positive rate).
    #[serde(skip)]
    pub busiest: Option<(u32, f64)>,
    /// The busiest CPU's id and count, when `counts` was reduced to it
    /// ([`IrqCounts::reduce_to_busiest`]; `None` also when all were 0).
    #[serde(skip)]
    pub busiest_count: Option<(u32, u64)>,
}

impl IrqLine {
    /// True when this line passes `f`'s `--irq` test (the same test as
    /// [`Filter::keep_irq_row`] on the row it came from).
    pub fn passes(&self, f: &Filter) -> bool {
        f.keep_fields(
            &self.label,
            &self.description,
            self.chip.as_deref().unwrap_or(""),
            self.actions.iter().map(String::as_str),
        )
    }
}

#[derive(Debug, Serialize)]
pub struct SoftirqSection {
    pub cpus: Vec<u32>,
    pub rows: Vec<SoftirqLine>,
}

#[derive(Debug, Serialize)]
pub struct SoftirqLine {
    pub name: String,
    /// Counts (snapshot) or per-interval deltas (rates mode); null = gap.
    pub counts: Vec<Option<u64>>,
    pub total: u64,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "ser_rates")]
    pub rates: Option<Vec<Option<f64>>>,
    /// Rounded as `rates` are (integral values as integers, else to 0.001).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_total_rate"
    )]
    pub total_rate: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct StatSection {
    /// Per-CPU time shares (the aggregate line first, none when `--cpus`
    /// selects no CPU): since boot, or over the interval.
    pub cpu_pct: Vec<CpuPctLine>,
    /// With `--cpus`: the CPUs the first (`cpu: null`) line sums; absent
    /// when that line is the kernel's all-CPU line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate_cpus: Option<Vec<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctxt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub btime: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub procs_running: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub procs_blocked: Option<u64>,
    pub intr_total: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub softirq_total: Option<u64>,
}

impl StatSection {
    /// Label of the aggregate (`cpu: null`) line: `all` for the kernel's
    /// all-CPU line, `sel` for the `--cpus` CPUs summed together (then
    /// [`StatSection::aggregate_note`] says which).
    pub fn aggregate_label(&self) -> &'static str {
        match self.aggregate_cpus {
            None => "all",
            Some(_) => "sel",
        }
    }

    /// `sel = CPUs 0-3 together (--cpus)`: what the `sel` line sums; none
    /// for the kernel's all-CPU line or an empty selection.
    pub fn aggregate_note(&self) -> Option<String> {
        let cpus = self.aggregate_cpus.as_ref().filter(|c| !c.is_empty())?;
        let list = irqlab_core::CpuList::from_cpus(cpus.iter().copied());
        let noun = if cpus.len() == 1 { "CPU" } else { "CPUs" };
        Some(format!("sel = {noun} {list} together (--cpus)"))
    }
}

#[derive(Debug, Serialize)]
pub struct CpuPctLine {
    /// CPU id, or null for the all-CPU line.
    pub cpu: Option<u32>,
    #[serde(flatten)]
    pub pct: Option<CpuPct>,
}

fn opt(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

fn line_meta(row: &IrqRow) -> IrqLine {
    IrqLine {
        label: row.label.clone(),
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
        description: row.description.clone(),
        affinity: None,
        since_boot: None,
        busiest: None,
        busiest_count: None,
    }
}

fn pick<T: Copy>(v: &[T], cols: &[usize]) -> Vec<T> {
    cols.iter().filter_map(|&i| v.get(i).copied()).collect()
}

/// Snapshot (counts) report. Takes the snapshot so that count vectors are
/// moved, not copied, when no CPU filter applies (a 1152-CPU file holds
/// ~10 MB of counts).
pub fn from_snapshot(mut s: Snapshot, f: &Filter) -> Report {
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

fn irq_counts(m: &mut Interrupts, f: &Filter) -> IrqSection {
    let mut b = IrqCounts::new(&m.cpus, f);
    for r in m.rows_mut() {
        b.push(r);
    }
    b.finish()
}

/// The interrupts section of a counts report, built one row at a time:
/// [`from_snapshot`] over a parsed file, and `show`, which streams
/// `/proc/interrupts` through one scratch row so that rows the filter
/// drops are never copied anywhere.
pub struct IrqCounts<'f> {
    f: &'f Filter,
    cols: Vec<usize>,
    all: bool,
    sec: IrqSection,
}

impl<'f> IrqCounts<'f> {
    /// A section over the header's CPU ids `cpus`.
    pub fn new(cpus: &[u32], f: &'f Filter) -> Self {
        let cols = f.columns(cpus);
        IrqCounts {
            f,
            all: cols.len() == cpus.len(),
            sec: IrqSection {
                cpus: pick(cpus, &cols),
                rows: Vec::new(),
                gone: Vec::new(),
            },
            cols,
        }
    }

    /// Add `r` if the filter keeps it (its counts are moved out when no
    /// CPU filter applies); true when kept.
    pub fn push(&mut self, r: &mut IrqRow) -> bool {
        match self.line(r) {
            Some(l) => {
                self.sec.rows.push(l);
                true
            }
            None => false,
        }
    }

    /// The CPU ids of the kept columns.
    pub fn cpus(&self) -> &[u32] {
        &self.sec.cpus
    }

    /// Give `counts` back to the scratch row `r` when [`IrqCounts::line`]
    /// moved `r`'s buffer out (no CPU column dropped), so that the next
    /// parse into `r` reuses it.
    pub fn give_back(&self, counts: Vec<u64>, r: &mut IrqRow) {
        if self.all {
            r.counts = counts;
        }
    }

    /// Replace a per-CPU line's counts by its busiest CPU (the first of
    /// the highest positive counts) and give the count buffer back to
    /// `r`: what a table too wide for CPU columns prints.
    pub fn reduce_to_busiest(&self, l: &mut IrqLine, r: &mut IrqRow) {
        if l.shape != Shape::PerCpu {
            return;
        }
        let Some(counts) = l.counts.take() else {
            return;
        };
        let mut best: Option<(u32, u64)> = None;
        for (&c, &v) in self.sec.cpus.iter().zip(&counts) {
            if v > 0 && best.is_none_or(|(_, b)| v > b) {
                best = Some((c, v));
            }
        }
        l.busiest_count = best;
        self.give_back(counts, r);
    }

    /// The line of `r` if the filter keeps it, without adding it (its
    /// counts are moved out when no CPU filter applies).
    pub fn line(&self, r: &mut IrqRow) -> Option<IrqLine> {
        if !self.f.keep_irq_row(r) {
            return None;
        }
        let mut l = line_meta(r);
        match r.shape {
            Shape::PerCpu => {
                let c = if self.all {
                    std::mem::take(&mut r.counts)
                } else {
                    pick(&r.counts, &self.cols)
                };
                l.total = c.iter().sum();
                l.counts = Some(c);
            }
            _ => l.total = r.total(),
        }
        Some(l)
    }

    /// The section.
    pub fn finish(self) -> IrqSection {
        self.sec
    }
}

fn softirq_counts(m: &Softirqs, f: &Filter) -> SoftirqSection {
    let cols = f.columns(&m.cpus);
    let rows = m
        .rows
        .iter()
        .map(|r| {
            let c = pick(&r.counts, &cols);
            SoftirqLine {
                name: r.name.clone(),
                total: c.iter().sum(),
                counts: c.into_iter().map(Some).collect(),
                rates: None,
                total_rate: None,
            }
        })
        .collect();
    SoftirqSection {
        cpus: pick(&m.cpus, &cols),
        rows,
    }
}

/// Time shares from `old` to `new`, `elapsed_s` apart (`None`: since
/// boot). A CPU absent from a non-empty `old` (it came online) has no
/// share (a gap), never one since boot; nor has a line that advanced by
/// more ticks than its CPUs can account in `elapsed_s`.
pub fn stat_section(old: &Stat, new: &Stat, f: &Filter, elapsed_s: Option<f64>) -> StatSection {
    let since_boot = old == &Stat::default();
    let since = |cpu: Option<u32>| -> Option<CpuTimes> {
        let found = match cpu {
            None => Some(&old.total),
            Some(c) => old.cpus.iter().find(|t| t.cpu == Some(c)),
        };
        match found {
            Some(t) => Some(t.clone()),
            None if since_boot => Some(CpuTimes::default()),
            None => None,
        }
    };
    let pct = |o: &CpuTimes, n: &CpuTimes, ncpus: usize| match elapsed_s {
        Some(secs) => delta::cpu_pct_over(o, n, secs, ncpus),
        None => delta::cpu_pct(o, n),
    };
    let share = |cpu: Option<u32>, t: &CpuTimes| since(cpu).and_then(|o| pct(&o, t, 1));
    let (aggregate, aggregate_cpus) = match (&f.cpus, elapsed_s) {
        (None, Some(secs)) => (delta::stat_aggregate_pct_over(old, new, secs), None),
        (None, None) => (delta::stat_aggregate_pct(old, new), None),
        (Some(_), _) => {
            let (o, n, cpus) = selected_times(old, new, f, since_boot);
            let share = (!cpus.is_empty())
                .then(|| pct(&o, &n, cpus.len()))
                .flatten();
            (share, Some(cpus))
        }
    };
    // an empty selection sums nothing: no aggregate line at all
    let mut cpu_pct = Vec::new();
    if aggregate_cpus.as_ref().is_none_or(|c| !c.is_empty()) {
        cpu_pct.push(CpuPctLine {
            cpu: None,
            pct: aggregate,
        });
    }
    cpu_pct.extend(
        new.cpus
            .iter()
            .filter(|t| t.cpu.is_some_and(|c| f.keep_cpu(c)))
            .map(|t| CpuPctLine {
                cpu: t.cpu,
                pct: share(t.cpu, t),
            }),
    );
    let diff = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(o), Some(n)) if old != &Stat::default() => Some(n.saturating_sub(o)),
        (_, n) => n,
    };
    StatSection {
        cpu_pct,
        aggregate_cpus,
        ctxt: diff(old.ctxt, new.ctxt),
        btime: new.btime,
        processes: diff(old.processes, new.processes),
        procs_running: new.procs_running,
        procs_blocked: new.procs_blocked,
        intr_total: diff(Some(old.intr_total), Some(new.intr_total)).unwrap_or(0),
        softirq_total: diff(old.softirq_total, new.softirq_total),
    }
}

/// The rates report of one live frame (what `top` shows: no per-CPU
/// deltas), each numbered row with its affinity (cached by the sampler).
pub fn from_frame(frame: &mut Frame) -> Report {
    let mut r = from_delta_rates(frame.prev, frame.cur, frame.filter());
    annotate_affinity(&mut r, frame);
    r
}

/// Each numbered row's affinity, from the frame's metadata cache.
pub fn annotate_affinity(r: &mut Report, frame: &mut Frame) {
    if let Some(sec) = r.interrupts.as_mut() {
        for row in &mut sec.rows {
            if let Some(irq) = row.irq {
                row.affinity = frame.affinity(irq);
            }
        }
    }
}

/// Row order of interrupt tables (`top --sort`, the TUI's `s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// Rate over the interval, highest first.
    #[default]
    Rate,
    /// Count since boot, highest first.
    Total,
    /// IRQ number (arch rows after, by label).
    Irq,
    /// Device name (actions, else description, else label).
    Name,
}

impl SortKey {
    pub fn label(self) -> &'static str {
        match self {
            SortKey::Rate => "rate",
            SortKey::Total => "total",
            SortKey::Irq => "irq",
            SortKey::Name => "name",
        }
    }

    /// The next key in the TUI's `s` cycle.
    pub fn next(self) -> Self {
        match self {
            SortKey::Rate => SortKey::Total,
            SortKey::Total => SortKey::Irq,
            SortKey::Irq => SortKey::Name,
            SortKey::Name => SortKey::Rate,
        }
    }
}

/// Device name of a row: its actions, else its description, else label.
pub fn name_of(l: &IrqLine) -> String {
    if !l.actions.is_empty() {
        l.actions.join(",")
    } else if !l.description.is_empty() {
        l.description.clone()
    } else {
        l.label.clone()
    }
}

/// Sort `rows` by `key`; `rate` gives a row's rate (the TUI's is over its
/// selected CPUs). Stable: equal rows keep file order.
pub fn sort_rows<T>(
    rows: &mut Vec<T>,
    key: SortKey,
    line: impl Fn(&T) -> &IrqLine,
    rate: impl Fn(&T) -> Option<f64>,
) {
    match key {
        SortKey::Rate => {
            let mut keyed: Vec<(f64, T)> = rows
                .drain(..)
                .map(|r| (rate(&r).unwrap_or(-1.0), r))
                .collect();
            keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
            rows.extend(keyed.into_iter().map(|k| k.1));
        }
        SortKey::Total => rows.sort_by_key(|r| std::cmp::Reverse(line(r).since_boot)),
        SortKey::Irq => rows.sort_by(|a, b| {
            let key = |l: &IrqLine| (l.irq.unwrap_or(u32::MAX), l.label.clone());
            key(line(a)).cmp(&key(line(b)))
        }),
        SortKey::Name => {
            let mut keyed: Vec<(String, T)> =
                rows.drain(..).map(|r| (name_of(line(&r)), r)).collect();
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            rows.extend(keyed.into_iter().map(|k| k.1));
        }
    }
}

/// Whether a row is shown under `--threshold MIN` (rate per second over
/// all kept CPUs): rows with a gap are always shown (something happened).
pub fn above_threshold(l: &IrqLine, min: f64) -> bool {
    l.gaps.is_some() || l.total_rate.is_some_and(|r| r > 0.0 && r >= min)
}

/// Per-CPU sum of the interrupt rates of `rows` (the `mpstat -I SUM`
/// line): per kept CPU column, and the total. Single-value rows add to the
/// total only; gaps count as 0.
pub fn rate_sum<'a>(ncpus: usize, rows: impl Iterator<Item = &'a IrqLine>) -> (Vec<f64>, f64) {
    let mut per = vec![0.0; ncpus];
    let mut total = 0.0;
    for l in rows {
        total += l.total_rate.unwrap_or(0.0);
        if l.shape != Shape::PerCpu {
            continue;
        }
        for (acc, v) in per.iter_mut().zip(l.rates.iter().flatten()) {
            *acc += v.unwrap_or(0.0);
        }
    }
    (per, total)
}

/// The summed lines of the `--cpus` CPUs in `old` and `new` (in rates
/// mode only CPUs present in both samples), and which CPUs.
fn selected_times(
    old: &Stat,
    new: &Stat,
    f: &Filter,
    since_boot: bool,
) -> (CpuTimes, CpuTimes, Vec<u32>) {
    let mut o = CpuTimes::default();
    let mut n = CpuTimes::default();
    let mut cpus = Vec::new();
    for t in &new.cpus {
        let Some(c) = t.cpu.filter(|&c| f.keep_cpu(c)) else {
            continue;
        };
        let before = old.cpus.iter().find(|x| x.cpu == Some(c));
        if before.is_none() && !since_boot {
            continue;
        }
        add_times(&mut n, t);
        if let Some(b) = before {
            add_times(&mut o, b);
        }
        cpus.push(c);
    }
    (o, n, cpus)
}

fn add_times(sum: &mut CpuTimes, t: &CpuTimes) {
    if sum.fields.len() < t.fields.len() {
        sum.fields.resize(t.fields.len(), 0);
    }
    for (s, v) in sum.fields.iter_mut().zip(&t.fields) {
        *s = s.saturating_add(*v);
    }
}

/// Rates report from two snapshots of the same root.
pub fn from_delta(old: &Snapshot, new: &Snapshot, f: &Filter) -> Report {
    delta_report(old, new, f, true)
}

/// Like [`from_delta`] without the per-CPU `deltas` of interrupt rows
/// (rates, totals and gaps only): what `top` shows. On a 1152-CPU machine
/// the deltas are a million more numbers per sample to build and print.
pub fn from_delta_rates(old: &Snapshot, new: &Snapshot, f: &Filter) -> Report {
    delta_report(old, new, f, false)
}

/// Like [`from_delta_rates`], each interrupt row's per-CPU rates reduced
/// to the busiest CPU ([`IrqLine::busiest`], `rates` `None`) as the row
/// is built: what a table too wide for per-CPU columns prints, without
/// holding a rate per cell of a 1152-CPU machine.
pub fn from_delta_busiest(old: &Snapshot, new: &Snapshot, f: &Filter) -> Report {
    delta_report_with(old, new, f, false, true)
}

fn delta_report(old: &Snapshot, new: &Snapshot, f: &Filter, deltas: bool) -> Report {
    delta_report_with(old, new, f, deltas, false)
}

fn delta_report_with(
    old: &Snapshot,
    new: &Snapshot,
    f: &Filter,
    deltas: bool,
    busiest: bool,
) -> Report {
    let secs = new.elapsed_since(old);
    Report {
        interval_s: Some(secs),
        interrupts: match (&old.interrupts, &new.interrupts) {
            (Some(o), Some(n)) => Some(irq_rates(o, n, secs, f, deltas, busiest)),
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

/// A rate as JSON: integral values (most cells of a big machine are 0)
/// as integers, others rounded to 1e-3. Shortest-round-trip float
/// formatting of a million cells per sample would dominate `top --batch`.
fn ser_rate<S: serde::Serializer>(v: f64, s: S) -> Result<S::Ok, S::Error> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
                                                // `as` casts instead of `fract()`: that is a libm call per cell.
    if (0.0..EXACT).contains(&v) && (v as u64) as f64 == v {
        s.serialize_u64(v as u64)
    } else {
        s.serialize_f64((v * 1000.0).round() / 1000.0)
    }
}

fn ser_total_rate<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match *v {
        Some(v) if v.is_finite() => ser_rate(v, s),
        _ => s.serialize_none(),
    }
}

fn ser_rates<S: serde::Serializer>(v: &Option<Vec<Option<f64>>>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    struct One(Option<f64>);
    impl Serialize for One {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self.0 {
                Some(v) if v.is_finite() => ser_rate(v, s),
                _ => s.serialize_none(),
            }
        }
    }
    let Some(v) = v else {
        return s.serialize_none();
    };
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for x in v {
        seq.serialize_element(&One(*x))?;
    }
    seq.end()
}

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
struct RateCols {
    union: Vec<u32>,
    cols: Vec<usize>,
    all: bool,
}

impl RateCols {
    fn new(o: &Interrupts, n: &Interrupts, f: &Filter) -> Self {
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
    fn line(
        &self,
        r: &IrqRow,
        cells: &[Cell],
        secs: f64,
        with_deltas: bool,
        picked: &mut Vec<Cell>,
    ) -> IrqLine {
        let cells: &[Cell] = if r.shape == Shape::PerCpu && !self.all {
            picked.clear();
            picked.extend(self.cols.iter().filter_map(|&i| cells.get(i).copied()));
            picked
        } else {
            cells
        };
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

fn irq_rates(
    o: &Interrupts,
    n: &Interrupts,
    secs: f64,
    f: &Filter,
    with_deltas: bool,
    busiest: bool,
) -> IrqSection {
    let rc = RateCols::new(o, n, f);
    let cpus = pick(&rc.union, &rc.cols);
    let mut rows = Vec::new();
    let mut picked = Vec::new();
    let (_, gone) = delta::interrupts_delta_each(o, n, secs, |r, _status, cells| {
        if f.keep_irq_row(r) {
            let mut l = rc.line(r, cells, secs, with_deltas, &mut picked);
            if busiest {
                reduce_to_busiest(&mut l, &cpus);
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

/// Replace a per-CPU row's rates by its busiest CPU (the first of the
/// highest positive rates).
fn reduce_to_busiest(l: &mut IrqLine, cpus: &[u32]) {
    if l.shape != Shape::PerCpu {
        return;
    }
    let Some(rates) = l.rates.take() else {
        return;
    };
    let mut best: Option<(u32, f64)> = None;
    for (&c, r) in cpus.iter().zip(&rates) {
        if let Some(v) = *r {
            if v > 0.0 && best.is_none_or(|(_, b)| v > b) {
                best = Some((c, v));
            }
        }
    }
    l.busiest = best;
}

/// The rates report of `show --interval` as JSON, written straight from
/// the two snapshots: each interrupt row is built, serialized and dropped
/// in turn, so a 1152-CPU machine never holds a million deltas and rates
/// at once. The same document as serializing the [`Report`] of
/// [`from_delta`] (tested). `rest` holds the other sections (its
/// `interrupts` is ignored); `show` decides whether a row is written
/// (`--threshold`) and gives each numbered row's affinity.
pub struct RatesJson<'a> {
    pub rest: &'a Report,
    pub old: &'a Snapshot,
    pub new: &'a Snapshot,
    pub filter: &'a Filter,
    pub show: &'a dyn Fn(&IrqLine) -> bool,
    pub affinity: &'a dyn Fn(u32) -> Option<String>,
}

impl Serialize for RatesJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let secs = self.new.elapsed_since(self.old);
        let irqs = match (&self.old.interrupts, &self.new.interrupts) {
            (Some(o), Some(n)) => Some(LazyIrqs {
                doc: self,
                o,
                n,
                secs,
            }),
            _ => None,
        };
        let mut st = s.serialize_struct("Report", 4)?;
        st.serialize_field("interval_s", &secs)?;
        st.serialize_field("interrupts", &irqs)?;
        st.serialize_field("softirqs", &self.rest.softirqs)?;
        st.serialize_field("stat", &self.rest.stat)?;
        st.end()
    }
}

/// The interrupts section of [`RatesJson`].
struct LazyIrqs<'a> {
    doc: &'a RatesJson<'a>,
    o: &'a Interrupts,
    n: &'a Interrupts,
    secs: f64,
}

impl Serialize for LazyIrqs<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let rc = RateCols::new(self.o, self.n, self.doc.filter);
        let gone = std::cell::RefCell::new(Vec::new());
        let mut st = s.serialize_struct("IrqSection", 3)?;
        st.serialize_field("cpus", &pick(&rc.union, &rc.cols))?;
        st.serialize_field(
            "rows",
            &LazyRows {
                irqs: self,
                rc: &rc,
                gone: &gone,
            },
        )?;
        let gone = gone.into_inner();
        if !gone.is_empty() {
            st.serialize_field("gone", &gone)?;
        }
        st.end()
    }
}

/// The rows of [`LazyIrqs`]; leaves the labels of the rows that went
/// away in `gone`.
struct LazyRows<'a> {
    irqs: &'a LazyIrqs<'a>,
    rc: &'a RateCols,
    gone: &'a std::cell::RefCell<Vec<String>>,
}

impl Serialize for LazyRows<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let LazyIrqs { doc, o, n, secs } = *self.irqs;
        let mut seq = s.serialize_seq(None)?;
        let mut failed = None;
        let mut picked = Vec::new();
        let (_, gone) = delta::interrupts_delta_each(o, n, secs, |r, _status, cells| {
            if failed.is_some() || !doc.filter.keep_irq_row(r) {
                return;
            }
            let mut line = self.rc.line(r, cells, secs, true, &mut picked);
            if !(doc.show)(&line) {
                return;
            }
            line.affinity = r.irq.and_then(doc.affinity);
            if let Err(e) = seq.serialize_element(&line) {
                failed = Some(e);
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        *self.gone.borrow_mut() = gone.into_iter().map(|g| g.label).collect();
        seq.end()
    }
}

/// A rates report without its interrupts section (see [`RatesJson`]).
pub fn from_delta_without_irqs(old: &Snapshot, new: &Snapshot, f: &Filter) -> Report {
    let secs = new.elapsed_since(old);
    Report {
        interval_s: Some(secs),
        interrupts: None,
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

pub fn softirq_rates(o: &Softirqs, n: &Softirqs, secs: f64, f: &Filter) -> SoftirqSection {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn snap(ms: u64, text: &str) -> Snapshot {
        Snapshot {
            mono_ns: ms * 1_000_000,
            interrupts: Some(Interrupts::parse(text.as_bytes()).unwrap()),
            softirqs: Some(
                Softirqs::parse(b"       CPU0  CPU1\n  TIMER:  1  2\n NET_RX:  3  4\n").unwrap(),
            ),
            ..Snapshot::default()
        }
    }

    #[test]
    fn a_cpu_time_jump_no_cpu_could_take_is_a_gap_not_100_pct_user() {
        let stat = |user1: u64| {
            let text = format!(
                "cpu  20 0 20 200 0 0 0 0 0 0\ncpu0 10 0 10 100 0 0 0 0 0 0\ncpu1 {user1} 0 10 100 0 0 0 0 0 0\n"
            );
            Stat::parse(text.as_bytes()).unwrap()
        };
        let (old, new) = (stat(10), stat(10 + (1 << 50)));
        let all = Filter::default();
        let st = stat_section(&old, &new, &all, Some(1.0));
        let line = |cpu| st.cpu_pct.iter().find(|l| l.cpu == cpu).unwrap().pct;
        assert_eq!(line(None), None, "the aggregate sums the impossible line");
        assert_eq!(line(Some(1)), None);
        assert_eq!(line(Some(0)), None, "no tick elapsed on CPU 0");
        let sel = Filter {
            cpus: Some([1].into()),
            ..Filter::default()
        };
        let st = stat_section(&old, &new, &sel, Some(1.0));
        assert_eq!(st.cpu_pct[0].pct, None);
        // the same step over a plausible interval is a share
        let (old, new) = (stat(10), stat(60));
        let st = stat_section(&old, &new, &all, Some(1.0));
        assert!(st
            .cpu_pct
            .iter()
            .find(|l| l.cpu == Some(1))
            .unwrap()
            .pct
            .is_some());
    }

    fn json(v: &impl Serialize, pretty: bool) -> String {
        let mut out = Vec::new();
        crate::export::json::write(v, &mut out, pretty).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A 20-CPU `/proc/interrupts`: six IO-APIC rows whose counts scale
    /// with `k`, a LOC row of 5s, a row of zeros and ERR.
    fn wide_text(k: u64) -> String {
        let mut t: String = (0..20).map(|c| format!(" CPU{c}")).collect();
        t.push('\n');
        for irq in 0..6u64 {
            let counts: String = (0..20u64)
                .map(|c| format!(" {}", k * ((irq * 7 + c * 3) % 5 + irq % 2) * (c % 4)))
                .collect();
            t.push_str(&format!("{irq}:{counts} IO-APIC {irq}-edge dev{irq}\n"));
        }
        let (fives, zeros) = (" 5".repeat(20), " 0".repeat(20));
        t.push_str(&format!(
            "LOC:{fives} Local timer\n 9:{zeros} x\nERR: {k}\n"
        ));
        t
    }

    fn table_of(r: &Report) -> String {
        let mut out = Vec::new();
        crate::export::table::write(r, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A table too wide for CPU columns prints the same from rows reduced
    /// to their busiest CPU (ties: the first), including rows with no
    /// positive rate, gaps and arch rows.
    #[test]
    fn busiest_rows_print_the_same_wide_table() {
        let (old, new) = (snap(0, &wide_text(1)), snap(1000, &wide_text(3)));
        for cpus in [None, Some("1-19")] {
            let f = Filter::from_flags(None, cpus).unwrap();
            let narrow = from_delta_busiest(&old, &new, &f);
            let rows = &narrow.interrupts.as_ref().unwrap().rows;
            assert!(rows
                .iter()
                .all(|l| l.rates.is_none() || l.shape != Shape::PerCpu));
            let full = table_of(&from_delta_rates(&old, &new, &f));
            assert_eq!(table_of(&narrow), full);
            assert!(full.contains("cpu"), "{full}");
        }
    }

    /// The same for counts: a wide snapshot table from lines reduced to
    /// their busiest CPU as they are kept prints what the full report does.
    #[test]
    fn busiest_counts_print_the_same_wide_table() {
        let t = wide_text(1);
        for cpus in [None, Some("1-19")] {
            let f = Filter::from_flags(None, cpus).unwrap();
            let full = from_snapshot(snap(0, &t), &f);
            let mut m = Interrupts::parse(t.as_bytes()).unwrap();
            let b = IrqCounts::new(&m.cpus.clone(), &f);
            let mut rows = Vec::new();
            for r in m.rows_mut() {
                let mut l = b.line(r).unwrap();
                b.reduce_to_busiest(&mut l, r);
                rows.push(l);
            }
            let reduced = Report {
                interrupts: Some(IrqSection {
                    cpus: b.cpus().to_vec(),
                    rows,
                    gone: Vec::new(),
                }),
                ..from_snapshot(snap(0, &t), &f)
            };
            assert_eq!(table_of(&reduced), table_of(&full));
            assert!(table_of(&full).contains("cpu"));
        }
    }

    /// The streamed rates document is byte for byte the Report's, with
    /// gaps (a CPU came online, a new row), a row gone, filters, the
    /// threshold and affinity.
    #[test]
    fn rates_json_is_the_reports_document() {
        let old = snap(
            0,
            "   CPU0  CPU1\n  1:  10  20  IO-APIC 1-edge  i8042\n  7:  5  5  IO-APIC 7-edge  gone\nLOC:  100  200  Local timer interrupts\nERR:  1\n",
        );
        let new = snap(
            500,
            "   CPU0  CPU1  CPU2\n  1:  15  20  4  IO-APIC 1-edge  i8042\n  9:  1  0  0  PCI-MSI 9-edge  eth0\nLOC:  150  260  9  Local timer interrupts\nERR:  3\n",
        );
        let aff = |irq: u32| (irq == 1).then(|| "0-1".to_string());
        for (irq, cpus, min) in [
            (None, None, None),
            (Some("i8042|LOC"), None, None),
            (None, Some("0,2"), None),
            (None, None, Some(50.0)),
        ] {
            let f = Filter::from_flags(irq, cpus).unwrap();
            let mut want = from_delta(&old, &new, &f);
            let sec = want.interrupts.as_mut().unwrap();
            if let Some(min) = min {
                sec.rows.retain(|l| above_threshold(l, min));
            }
            for l in &mut sec.rows {
                l.affinity = l.irq.and_then(aff);
            }
            let rest = from_delta_without_irqs(&old, &new, &f);
            let show = |l: &IrqLine| min.is_none_or(|m| above_threshold(l, m));
            let doc = RatesJson {
                rest: &rest,
                old: &old,
                new: &new,
                filter: &f,
                show: &show,
                affinity: &aff,
            };
            for pretty in [false, true] {
                assert_eq!(
                    json(&doc, pretty),
                    json(&want, pretty),
                    "{irq:?} {cpus:?} {min:?}"
                );
            }
        }
        let s = json(&from_delta(&old, &new, &Filter::default()), false);
        assert!(s.contains(r#""gone":["7"]"#), "{s}");
    }
}
