//! [`ReusedRates`]: what `top --batch --format text` prints of a sample
//! (and of the whole run, `Average:`), rebuilt in place per sample in a
//! compact state: per row position of the later snapshot one fixed-size
//! record (its figures, and where its label, device name and key sit in
//! one shared text buffer), every rate of the section in one flat vector,
//! and the block's aggregates (SUM line, column widths, the shown rows in
//! order) computed as the rows stream out of `delta`. A row's text is
//! copied only when its position holds a new row; a steady-state sample
//! touches a few contiguous arrays and allocates nothing. The numbers are
//! those of [`rates`](fn@crate::report::rates) with the default options
//! (tested against it, and against the text written from it).

use super::{kept_cols, pick_cells, union_into};
use crate::filter::Filter;
use crate::natural::natural_cmp_nocase;
use crate::report::{stat_section_into, SortKey, StatSection, SumRows, Valued, ValuedSum};
use irqlab_core::delta::{self, Cell};
use irqlab_core::{IrqRow, Shape, Snapshot, Softirqs};

/// A rate cell as stored: `NaN` for none (a gap, or no interval); a rate
/// is a count over a positive interval, never `NaN` itself.
const NONE: f64 = f64::NAN;

fn opt(v: f64) -> Option<f64> {
    (!v.is_nan()).then_some(v)
}

/// Width of `s` as `std::fmt` counts it for padding (chars).
fn width(s: &str) -> usize {
    crate::export::grid::visible_width(s)
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The text report's state: see the module doc. Built with the row
/// order of the block (`--sort`, `--threshold`), which
/// [`update`](Self::update) applies to the shown rows.
#[derive(Debug, Default)]
pub struct ReusedRates {
    sort: SortKey,
    threshold: Option<f64>,
    irq: IrqRates,
    soft: SoftirqRates,
    stat: StatSection,
    has_stat: bool,
    delta: delta::DeltaScratch,
    union: Vec<u32>,
    cols: Vec<usize>,
    picked: Vec<Cell>,
    /// The `--irq` and `--exclude` patterns rows were kept by.
    row_filter: (Option<String>, Option<String>),
}

impl ReusedRates {
    /// Empty state for blocks showing rows by `sort`, above `threshold`
    /// (default: active rows only).
    pub fn new(sort: SortKey, threshold: Option<f64>) -> ReusedRates {
        ReusedRates {
            sort,
            threshold,
            ..ReusedRates::default()
        }
    }

    /// The rates over `old` → `new`, in place of the last ones.
    pub fn update(&mut self, old: &Snapshot, new: &Snapshot, f: &Filter) -> &ReusedRates {
        let secs = new.elapsed_since(old);
        let pats = (
            f.irq.as_ref().map(regex::Regex::as_str),
            f.exclude.as_ref().map(regex::Regex::as_str),
        );
        if (self.row_filter.0.as_deref(), self.row_filter.1.as_deref()) != pats {
            // which rows are kept was decided with another filter
            self.row_filter = (pats.0.map(str::to_string), pats.1.map(str::to_string));
            self.irq.invalidate();
        }
        self.irq.present = false;
        if let (Some(o), Some(n)) = (&old.interrupts, &new.interrupts) {
            union_into(&o.cpus, &n.cpus, &mut self.union);
            kept_cols(&self.union, f, &mut self.cols);
            let s = &mut self.irq;
            s.begin(&self.union, &self.cols);
            let all = self.cols.len() == self.union.len();
            let (cols, picked) = (&self.cols, &mut self.picked);
            // the count since boot orders rows under `--sort total` only
            let totals = self.sort == SortKey::Total;
            let mut pos = 0;
            // no allocation when no row is gone (the usual sample)
            let gone =
                delta::interrupts_delta_each_in(&mut self.delta, o, n, secs, |r, _, cells| {
                    let k = s.row_at(pos, r, f);
                    pos += 1;
                    if s.rows.get(k).is_some_and(|x| x.keep) {
                        let cells = pick_cells(r, cells, all, cols, picked);
                        s.figures(k, cells, secs, if totals { r.total() } else { 0 });
                    }
                });
            s.finish(pos, self.sort, self.threshold);
            if !gone.is_empty() {
                s.keep_gone(&gone);
            }
        }
        self.soft.present = false;
        if let (Some(o), Some(n)) = (&old.softirqs, &new.softirqs) {
            union_into(&o.cpus, &n.cpus, &mut self.union);
            kept_cols(&self.union, f, &mut self.cols);
            let s = &mut self.soft;
            s.begin(&self.union, &self.cols);
            let cols = &self.cols;
            let mut k = 0;
            delta::softirqs_delta_each_in(&mut self.delta, o, n, secs, |r, cells| {
                s.row(k, &r.name, cols, cells, secs);
                k += 1;
            });
            s.finish(k);
            if super::softirq_vectors_changed(o, n) {
                s.keep_gone(o, n);
            }
        }
        self.has_stat = false;
        if let (Some(o), Some(n)) = (&old.stat, &new.stat) {
            stat_section_into(o, n, f, Some(secs), &mut self.stat);
            self.has_stat = true;
        }
        self
    }

    /// The interrupts section (`None` when a snapshot had none).
    pub fn interrupts(&self) -> Option<&IrqRates> {
        self.irq.present.then_some(&self.irq)
    }

    /// The softirqs section.
    pub fn softirqs(&self) -> Option<&SoftirqRates> {
        self.soft.present.then_some(&self.soft)
    }

    /// The `/proc/stat` section (CPU time shares).
    pub fn stat(&self) -> Option<&StatSection> {
        self.has_stat.then_some(&self.stat)
    }
}

/// One row position of the later snapshot: the row's identity and text
/// (in [`IrqRates::text`]: label, description, device name, back to
/// back; kept while the position holds the same row) and its figures of
/// the latest sample.
#[derive(Debug, Clone, Copy, Default)]
struct Row {
    at: u32,
    label_len: u32,
    desc_len: u32,
    name_len: u32,
    /// Printed widths (chars) of the label and the device name.
    label_w: u32,
    name_w: u32,
    /// This sample's rates: `rates[cells..cells + ncells]`.
    cells: u32,
    ncells: u32,
    irq: Option<u32>,
    /// `NaN`: none (no interval).
    total_rate: f64,
    /// Under `--sort total` only (else 0).
    since_boot: u64,
    /// The text is the row's (false: to be written).
    valid: bool,
    /// The row filter keeps the row.
    keep: bool,
    /// Some cell is a gap.
    gap: bool,
    shape: Shape,
}

/// The interrupts section of [`ReusedRates`].
#[derive(Debug, Default)]
pub struct IrqRates {
    present: bool,
    /// Some row of the earlier snapshot is not in the later one; the
    /// last `gone_len` bytes of `text` are their labels, joined by `, `
    /// (text no row refers to: dropped as any such text is). Both sit in
    /// the padding after `present`: the usual sample, with no row gone,
    /// touches no other line for them.
    has_gone: bool,
    gone_len: u32,
    cpus: Vec<u32>,
    rows: Vec<Row>,
    rates: Vec<f64>,
    text: String,
    /// Bytes of `text` that rows refer to (the rest is left by rows that
    /// changed, dropped when it outgrows them).
    live: usize,
    /// Kept rows shown, in order (indices into `rows`).
    shown: Vec<u32>,
    /// The SUM line: per kept CPU (the per-CPU rows added), and in all
    /// (every row added); which rows it adds.
    per: Vec<ValuedSum>,
    total: ValuedSum,
    adds: SumRows,
    /// Largest total rate and cell (SUM line included); widest label and
    /// device name of the kept rows.
    top_total: f64,
    top_cell: f64,
    label_w: usize,
    name_w: usize,
}

/// The rows compared by insertion sort; more go through the library's.
const INSERTION_MAX: usize = 32;

impl IrqRates {
    fn begin(&mut self, union: &[u32], cols: &[usize]) {
        self.present = true;
        self.has_gone = false;
        self.gone_len = 0;
        self.cpus.clear();
        self.cpus
            .extend(cols.iter().filter_map(|&i| union.get(i).copied()));
        self.rates.clear();
        self.per.clear();
        self.per.resize(cols.len(), ValuedSum::default());
        self.total = ValuedSum::default();
        self.adds.clear();
        self.top_total = 0.0;
        self.top_cell = 0.0;
        self.label_w = 0;
        self.name_w = 0;
    }

    /// Every record to be rebuilt (the text is all dropped).
    fn invalidate(&mut self) {
        self.rows.iter_mut().for_each(|r| r.valid = false);
        self.live = 0;
    }

    /// The record of position `pos`, rebuilt when it now holds another row.
    fn row_at(&mut self, pos: usize, r: &IrqRow, f: &Filter) -> usize {
        if self.rows.len() <= pos {
            self.rows.resize(pos + 1, Row::default());
        }
        let same = self.rows.get(pos).is_some_and(|x| {
            let at = x.at as usize;
            let l = at + x.label_len as usize;
            let d = l + x.desc_len as usize;
            x.valid
                && self.text.get(at..l) == Some(&*r.label)
                && self.text.get(l..d) == Some(&*r.description)
        });
        if !same {
            let keep = f.keep_irq_row(r);
            let mut actions = r.parts.actions();
            let first = actions.next();
            self.set_text(pos, &r.label, &r.description, |t| match first {
                Some(a) => {
                    t.push_str(a);
                    for a in actions {
                        t.push(',');
                        t.push_str(a);
                    }
                }
                None if !r.description.is_empty() => t.push_str(&r.description),
                None => t.push_str(&r.label),
            });
            if let Some(x) = self.rows.get_mut(pos) {
                x.keep = keep;
                x.irq = r.irq;
            }
        }
        // the shape follows the counts, not the text
        if let Some(x) = self.rows.get_mut(pos) {
            x.shape = r.shape;
        }
        pos
    }

    /// Write the label, description and (by `name`) device name of the
    /// row at `pos` at the end of `text`.
    fn set_text(&mut self, pos: usize, label: &str, desc: &str, name: impl FnOnce(&mut String)) {
        let Some(x) = self.rows.get_mut(pos) else {
            return;
        };
        if x.valid {
            self.live -= (x.label_len + x.desc_len + x.name_len) as usize;
        }
        let at = self.text.len();
        self.text.push_str(label);
        self.text.push_str(desc);
        let n = self.text.len();
        name(&mut self.text);
        let name_text = self.text.get(n..).unwrap_or_default();
        x.at = u32_of(at);
        x.label_len = u32_of(label.len());
        x.desc_len = u32_of(desc.len());
        x.name_len = u32_of(name_text.len());
        x.label_w = u32_of(width(label));
        x.name_w = u32_of(width(name_text));
        x.valid = true;
        self.live += self.text.len() - at;
    }

    /// This sample's figures of the kept row `k` from its kept `cells`,
    /// added to the block's.
    fn figures(&mut self, k: usize, cells: &[Cell], secs: f64, since_boot: u64) {
        let Some(x) = self.rows.get_mut(k) else {
            return;
        };
        let (at, l) = (x.at as usize, x.label_len as usize);
        let label = self.text.get(at..at + l).unwrap_or_default();
        let desc = self
            .text
            .get(at + l..at + l + x.desc_len as usize)
            .unwrap_or_default();
        let adds = self.adds.adds(label, x.irq, desc);
        let start = self.rates.len();
        let mut total: u64 = 0;
        let mut gap = false;
        // a row none of whose cells has a value has no total rate
        let mut valued = Valued::default();
        for c in cells {
            valued.add(matches!(c, Cell::Count(_)));
            let v = match *c {
                Cell::Count(n) => {
                    total += n;
                    if secs > 0.0 {
                        n as f64 / secs
                    } else {
                        NONE
                    }
                }
                Cell::Gap(_) => {
                    gap = true;
                    NONE
                }
            };
            // the largest cell: `max` passes over NaN
            self.top_cell = self.top_cell.max(v);
            self.rates.push(v);
        }
        let rate = if secs > 0.0 && valued.has_value() {
            total as f64 / secs
        } else {
            NONE
        };
        x.cells = u32_of(start);
        x.ncells = u32_of(cells.len());
        x.gap = gap;
        x.total_rate = rate;
        x.since_boot = since_boot;
        self.label_w = self.label_w.max(x.label_w as usize);
        self.name_w = self.name_w.max(x.name_w as usize);
        // the largest total: `max` passes over NaN
        self.top_total = self.top_total.max(rate);
        if !adds {
            return;
        }
        self.total.add(opt(rate));
        if x.shape == Shape::PerCpu {
            let mut mine = self.rates.get(start..).unwrap_or_default().iter();
            for acc in &mut self.per {
                acc.add(mine.next().and_then(|v| opt(*v)));
            }
        }
    }

    /// End of a sample of `n` rows: drop the records past them, the text
    /// no row refers to, and order the shown rows.
    fn finish(&mut self, n: usize, sort: SortKey, threshold: Option<f64>) {
        for x in self.rows.get(n..).unwrap_or_default() {
            if x.valid {
                self.live -= (x.label_len + x.desc_len + x.name_len) as usize;
            }
        }
        self.rows.truncate(n);
        if self.text.len() > 2 * self.live + 4096 {
            self.compact();
        }
        let value = |s: &ValuedSum| s.value().unwrap_or(NONE);
        self.top_total = self.top_total.max(value(&self.total));
        self.top_cell = self.per.iter().fold(self.top_cell, |m, v| m.max(value(v)));
        let min = threshold.unwrap_or(0.0);
        self.shown.clear();
        for (i, x) in self.rows.iter().enumerate() {
            let r = x.total_rate;
            if x.keep && (x.gap || (r > 0.0 && r >= min)) {
                self.shown.push(u32_of(i));
            }
        }
        let mut shown = std::mem::take(&mut self.shown);
        let before = |a: u32, b: u32| self.before(sort, a, b);
        if shown.len() <= INSERTION_MAX {
            for k in 1..shown.len() {
                let mut j = k;
                while j > 0 && before(shown[j], shown[j - 1]) {
                    shown.swap(j - 1, j);
                    j -= 1;
                }
            }
        } else {
            shown.sort_by(|&a, &b| match (before(a, b), before(b, a)) {
                (true, _) => std::cmp::Ordering::Less,
                (_, true) => std::cmp::Ordering::Greater,
                _ => std::cmp::Ordering::Equal,
            });
        }
        self.shown = shown;
    }

    /// Row `a` goes strictly before row `b` under `sort` (equal rows keep
    /// file order: both sorts are stable).
    fn before(&self, sort: SortKey, a: u32, b: u32) -> bool {
        let (Some(x), Some(y)) = (self.rows.get(a as usize), self.rows.get(b as usize)) else {
            return false;
        };
        match sort {
            SortKey::Rate => {
                let key = |r: &Row| opt(r.total_rate).unwrap_or(-1.0);
                key(x).total_cmp(&key(y)).is_gt()
            }
            SortKey::Total => x.since_boot > y.since_boot,
            SortKey::Irq => {
                let (i, j) = (x.irq.unwrap_or(u32::MAX), y.irq.unwrap_or(u32::MAX));
                i < j || (i == j && self.label(x) < self.label(y))
            }
            SortKey::Name => natural_cmp_nocase(self.name(x), self.name(y)).is_lt(),
        }
    }

    /// Copy the text rows refer to into a new buffer, dropping the rest.
    fn compact(&mut self) {
        let mut text = String::with_capacity(self.live);
        for x in self.rows.iter_mut().filter(|x| x.valid) {
            let at = x.at as usize;
            let len = (x.label_len + x.desc_len + x.name_len) as usize;
            x.at = u32_of(text.len());
            text.push_str(self.text.get(at..at + len).unwrap_or_default());
        }
        self.live = text.len();
        self.text = text;
    }

    fn label(&self, x: &Row) -> &str {
        let at = x.at as usize;
        self.text
            .get(at..at + x.label_len as usize)
            .unwrap_or_default()
    }

    fn name(&self, x: &Row) -> &str {
        let at = (x.at + x.label_len + x.desc_len) as usize;
        self.text
            .get(at..at + x.name_len as usize)
            .unwrap_or_default()
    }

    /// The kept CPU ids (column heads).
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// Widest label and device name (chars) of the kept rows (shown or
    /// not: columns do not move when a row crosses the threshold).
    pub fn label_width(&self) -> usize {
        self.label_w
    }

    pub fn name_width(&self) -> usize {
        self.name_w
    }

    /// Largest total rate and per-CPU rate of the kept rows and the SUM
    /// line.
    pub fn top_total(&self) -> f64 {
        self.top_total
    }

    pub fn top_cell(&self) -> f64 {
        self.top_cell
    }

    /// The SUM line: per kept CPU column (the per-CPU rows' rates there)
    /// and the sum of the kept rows' total rates, without the s390
    /// sub-class rows their class row already counts, as
    /// [`report::rate_sum`](crate::report::rate_sum). Gaps add nothing; a
    /// column (or total) where no added row has a value has none.
    pub fn sum(&self) -> (impl ExactSizeIterator<Item = Option<f64>> + '_, Option<f64>) {
        (self.per.iter().map(|v| v.value()), self.total.value())
    }

    /// The labels of the rows of the earlier snapshot the later one has
    /// not, in its order, joined by `, `, whatever the row filter (the
    /// labels JSON's `gone` lists and `show`'s gone line names); `None`
    /// when no row is gone.
    pub fn gone(&self) -> Option<&str> {
        kept_tail(&self.text, self.has_gone, self.gone_len)
    }

    /// Keep the labels of the `gone` rows (see [`IrqRates::gone`]) at the
    /// end of `text`, after the sample's rows.
    #[cold]
    #[inline(never)]
    fn keep_gone(&mut self, gone: &[delta::RowGone]) {
        self.gone_len = push_joined(&mut self.text, gone.iter().map(|g| g.label.as_str()));
        self.has_gone = true;
    }

    /// The rows shown (`--threshold`, default: active rows; rows with a
    /// gap always), in `--sort` order.
    pub fn shown(&self) -> impl Iterator<Item = RowRates<'_>> {
        self.shown.iter().filter_map(|&i| {
            self.rows
                .get(i as usize)
                .map(|row| RowRates { s: self, row })
        })
    }
}

/// One shown interrupt row.
#[derive(Clone, Copy)]
pub struct RowRates<'a> {
    s: &'a IrqRates,
    row: &'a Row,
}

impl<'a> RowRates<'a> {
    pub fn label(&self) -> &'a str {
        self.s.label(self.row)
    }

    /// The device: actions joined by `,`, else the description, else
    /// the label ([`report::name_of`](crate::report::name_of)).
    pub fn name(&self) -> &'a str {
        self.s.name(self.row)
    }

    pub fn name_width(&self) -> usize {
        self.row.name_w as usize
    }

    pub fn total_rate(&self) -> Option<f64> {
        opt(self.row.total_rate)
    }

    /// Per kept CPU (one value for a single-value row); `None`: a gap.
    pub fn rates(&self) -> impl Iterator<Item = Option<f64>> + 'a {
        let at = self.row.cells as usize;
        let cells = self.s.rates.get(at..at + self.row.ncells as usize);
        cells.unwrap_or_default().iter().map(|v| opt(*v))
    }
}

/// One softirq vector's name (in [`SoftirqRates::names`]) and total rate.
#[derive(Debug, Clone, Copy)]
struct SoftRow {
    at: u32,
    len: u32,
    total_rate: f64,
}

/// The softirqs section of [`ReusedRates`]: every vector, each with a
/// rate per kept CPU (`ncols` cells per row in `rates`).
#[derive(Debug, Default)]
pub struct SoftirqRates {
    present: bool,
    /// Some vector of the earlier snapshot is not in the later one; the
    /// last `gone_len` bytes of `names` are their names, joined by `, `
    /// (as [`IrqRates`] keeps its gone labels).
    has_gone: bool,
    gone_len: u32,
    cpus: Vec<u32>,
    rows: Vec<SoftRow>,
    rates: Vec<f64>,
    names: String,
    /// Widest name; largest total and per-CPU rate.
    name_w: usize,
    top_total: f64,
    top_cell: f64,
}

impl SoftirqRates {
    fn begin(&mut self, union: &[u32], cols: &[usize]) {
        self.present = true;
        self.has_gone = false;
        self.gone_len = 0;
        self.cpus.clear();
        self.cpus
            .extend(cols.iter().filter_map(|&i| union.get(i).copied()));
        self.rates.clear();
        self.name_w = 0;
        self.top_total = 0.0;
        self.top_cell = 0.0;
    }

    fn row(&mut self, k: usize, name: &str, cols: &[usize], cells: &[Cell], secs: f64) {
        let same = self.rows.get(k).is_some_and(|x| {
            let at = x.at as usize;
            self.names.get(at..at + x.len as usize) == Some(name)
        });
        if !same {
            let at = u32_of(self.names.len());
            self.names.push_str(name);
            let row = SoftRow {
                at,
                len: u32_of(name.len()),
                total_rate: NONE,
            };
            match self.rows.get_mut(k) {
                Some(x) => *x = row,
                None => self.rows.push(row),
            }
        }
        let mut total: u64 = 0;
        // a row none of whose cells has a value has no total rate
        let mut valued = Valued::default();
        for c in cols.iter().filter_map(|&i| cells.get(i)) {
            valued.add(matches!(c, Cell::Count(_)));
            let v = match *c {
                Cell::Count(n) => {
                    total += n;
                    if secs > 0.0 {
                        n as f64 / secs
                    } else {
                        NONE
                    }
                }
                Cell::Gap(_) => NONE,
            };
            self.top_cell = self.top_cell.max(v);
            self.rates.push(v);
        }
        let rate = if secs > 0.0 && valued.has_value() {
            total as f64 / secs
        } else {
            NONE
        };
        self.top_total = self.top_total.max(rate);
        self.name_w = self.name_w.max(width(name));
        if let Some(x) = self.rows.get_mut(k) {
            x.total_rate = rate;
        }
    }

    /// End of a sample of `n` vectors: drop the rows past them and, when
    /// vectors changed often, the names no row refers to.
    fn finish(&mut self, n: usize) {
        self.rows.truncate(n);
        if self.names.len() > 4096 {
            let live: usize = self.rows.iter().map(|x| x.len as usize).sum();
            if self.names.len() > 2 * live + 4096 {
                let mut names = String::with_capacity(live);
                for x in &mut self.rows {
                    let at = x.at as usize;
                    x.at = u32_of(names.len());
                    names.push_str(self.names.get(at..at + x.len as usize).unwrap_or_default());
                }
                self.names = names;
            }
        }
    }

    /// The names of the vectors of the earlier snapshot the later one
    /// has not, in its order, joined by `, ` (what JSON's
    /// `softirqs.gone` lists); `None` when none is gone.
    pub fn gone(&self) -> Option<&str> {
        kept_tail(&self.names, self.has_gone, self.gone_len)
    }

    /// Keep the names of the vectors of `o` that `n` has not (see
    /// [`SoftirqRates::gone`]) at the end of `names`, after the rows'.
    #[cold]
    #[inline(never)]
    fn keep_gone(&mut self, o: &Softirqs, n: &Softirqs) {
        let gone = super::softirqs_gone(o, n);
        if gone.is_empty() {
            return;
        }
        self.gone_len = push_joined(&mut self.names, gone.iter().map(String::as_str));
        self.has_gone = true;
    }

    /// The kept CPU ids (column heads).
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// Widest vector name (chars).
    pub fn name_width(&self) -> usize {
        self.name_w
    }

    /// Largest total rate and per-CPU rate of the vectors.
    pub fn top_total(&self) -> f64 {
        self.top_total
    }

    pub fn top_cell(&self) -> f64 {
        self.top_cell
    }

    /// Each vector: name, total rate, a rate per kept CPU (`None`: a
    /// gap, or no interval).
    pub fn rows(
        &self,
    ) -> impl Iterator<Item = (&str, Option<f64>, impl Iterator<Item = Option<f64>> + '_)> {
        let n = self.cpus.len();
        self.rows.iter().enumerate().map(move |(k, x)| {
            let at = x.at as usize;
            let name = self.names.get(at..at + x.len as usize).unwrap_or_default();
            let cells = self.rates.get(k * n..k * n + n).unwrap_or_default();
            (name, opt(x.total_rate), cells.iter().map(|v| opt(*v)))
        })
    }
}

/// The last `len` bytes of `text` when `has` (the gone names a section
/// keeps after its rows' text), else `None`.
fn kept_tail(text: &str, has: bool, len: u32) -> Option<&str> {
    if !has {
        return None;
    }
    let end = text.len();
    text.get(end.saturating_sub(len as usize)..end)
}

/// Append `names` to `text` joined by `, `; returns the bytes appended.
fn push_joined<'a>(text: &mut String, names: impl Iterator<Item = &'a str>) -> u32 {
    let start = text.len();
    for (i, name) in names.enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(name);
    }
    u32_of(text.len() - start)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::text_block::{write_block, Block, TextOpts};
    use crate::report::{self, rates, IrqLine, RateOpts, Report};
    use crate::sampler::{SelfCost, Strategy};
    use irqlab_core::stat::Stat;
    use irqlab_core::{Interrupts, Softirqs};

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
    /// back (a gap), a softirq vector goes back on every CPU (no value), a
    /// section disappears and comes back.
    fn samples() -> Vec<Snapshot> {
        let two = "           CPU0       CPU1\n";
        let three = "           CPU0       CPU1       CPU2\n";
        let soft2 = "          CPU0  CPU1\n  HI:  1  2\n  TIMER:  10  20\n";
        let soft3 = "          CPU0  CPU1  CPU2\n  TIMER:  30  40  5\n";
        let soft2_back = "          CPU0  CPU1\n  HI:  0  1\n  TIMER:  11  20\n";
        let st = |u: u64| {
            format!("cpu  {} 0 5 100 0 0 1 0 0 0\ncpu0 {u} 0 2 50 0 0 1 0 0 0\ncpu1 {u} 0 3 50 0 0 0 0 0 0\nintr {} 1 2\nctxt {}\nsoftirq 9 1 8\n", 2 * u, 100 * u, 7 * u)
        };
        let (s1, s2, s3) = (st(10), st(20), st(30));
        vec![
            snap(1, &format!("{two} 24:  1  2  IO-APIC   5-edge      ACPI:Ged\n 36:  7  0  PCI-MSI-0000:00:04.0   0-edge      virtio1-req.0, virtio1-x\nLOC:  100  99   Local timer interrupts\nERR:  0\n"), soft2, Some(&s1)),
            snap(2, &format!("{two} 24:  5  2  IO-APIC   5-edge      ACPI:Ged\n 36:  9  3  PCI-MSI-0000:00:04.0   0-edge      virtio1-req.0, virtio1-x\nLOC:  200  199   Local timer interrupts\nERR:  0\n"), soft2, Some(&s2)),
            // a row gone, a row new, one with fewer actions, a counter back
            snap(3, &format!("{two} 36:  8  4  PCI-MSI-0000:00:04.0   0-edge      virtio1-req.0\n 40:  1  1  PCI-MSI-0000:00:05.0   0-edge      eth0\nLOC:  300  299   Local timer interrupts\nERR:  0\n"), soft2_back, Some(&s3)),
            // a CPU online, rows moved, no /proc/stat
            snap(4, &format!("{three}LOC:  400  399  1   Local timer interrupts\n 40:  2  1  0  PCI-MSI-0000:00:05.0   0-edge      eth0\nERR:  1\n"), soft3, None),
            snap(5, &format!("{three}LOC:  500  499  9   Local timer interrupts\n 40:  3  1  0  PCI-MSI-0000:00:05.0   0-edge      eth0\nERR:  1\n"), soft3, Some(&s3)),
            snap(6, &format!("{three}LOC:  600  599  19   Local timer interrupts\n 40:  3  1  0  PCI-MSI-0000:00:05.0   0-edge      eth0\nERR:  1\n"), soft3, Some(&st(40))),
        ]
    }

    /// Samples of a synth machine whose counts grow by skewed amounts
    /// (idle rows, equal rates, one huge rate), then with long, non-ASCII
    /// and changed device names, a row gone and a row new.
    fn synth_samples(cpus: u32, irqs: u32) -> Vec<Snapshot> {
        let mut s = Snapshot {
            mono_ns: 5_000_000_000,
            wall_ns: 1_795_462_201_000_000_000,
            ..crate::tui::fixtures::synth_snapshot(cpus, irqs)
        };
        let mut out = vec![s.clone()];
        for k in 1..7u64 {
            s.mono_ns += 1_000_000_000 + k * 1_234_567;
            s.wall_ns += 1_000_000_000;
            if let Some(i) = s.interrupts.as_mut() {
                for (r, row) in i.rows_mut().iter_mut().enumerate() {
                    let r = r as u64;
                    for (c, v) in row.counts.iter_mut().enumerate() {
                        let c = c as u64;
                        *v += ((r * 37 + c * 11 + k) % 23) * (r % 5) * 97 * ((r + k) % 3);
                        if r == 3 && k == 4 {
                            *v += 123_456_789_012_345;
                        }
                    }
                }
                if k >= 3 {
                    if let Some(row) = i.rows_mut().iter_mut().find(|r| r.irq.is_some()) {
                        let a = "virtio0-input.qqqqqqqqqqqqqqq, ünï-東";
                        let d = format!("{} {a}", &*row.description);
                        row.parts.actions = a.into();
                        row.description = d.as_str().into();
                    }
                }
                if k == 5 {
                    let n = i.rows().len();
                    i.truncate_rows(n - 1);
                }
            }
            if let Some(x) = s.softirqs.as_mut() {
                for (r, row) in x.rows.iter_mut().enumerate() {
                    for (c, v) in row.counts.iter_mut().enumerate() {
                        *v += ((r * 13 + c * 7 + k as usize) % 17) as u64 * 31 * k;
                    }
                }
            }
            if let Some(st) = s.stat.as_mut() {
                for t in st.cpus.iter_mut().chain([&mut st.total]) {
                    for (j, v) in t.fields.iter_mut().enumerate().take(8) {
                        *v += (j as u64 * 7 + k) % 11;
                    }
                }
            }
            out.push(s.clone());
        }
        out
    }

    /// s390 samples: class rows `EXT` and `I/O`, a numbered row, and the
    /// sub-class rows whose counts the class rows include; `EXT` and its
    /// `CLK` rise by 100 between the first two.
    fn s390_samples() -> Vec<Snapshot> {
        let two = "           CPU0       CPU1       \n";
        let at = |ext: u64, clk: u64, io: u64| {
            format!("{two}EXT:  {ext}  0 \nI/O:  {io}  0 \n 64:  7  0   PCI-MSI  mlx5_async0@pci:0001:00:00.0\nCLK:  {clk}  0   [EXT] Clock Comparator\nEXC:  5  0   [EXT] External Call\nDAS:  {io}  0   [I/O] DASD\n")
        };
        let soft = "          CPU0  CPU1\n  HI:  1  2\n";
        vec![
            snap(1, &at(1005, 1000, 3), soft, None),
            snap(2, &at(1105, 1100, 3), soft, None),
            snap(3, &at(1205, 1150, 9), soft, None),
        ]
    }

    /// A CPU column where every added row has a gap (the CPU went
    /// offline) has no SUM: `-`, not 0; the other columns add up.
    #[test]
    fn a_sum_column_of_gaps_only_prints_a_dash() {
        let three = "           CPU0       CPU1       CPU2\n";
        let two = "           CPU0       CPU1\n";
        let soft = "          CPU0  CPU1\n  HI:  1  2\n";
        let old = snap(1, &format!("{three}  1:  1  2  3  IO-APIC   1-edge      i8042\nLOC:  10  20  30   Local timer interrupts\n"), soft, None);
        let new = snap(2, &format!("{two}  1:  2  4  IO-APIC   1-edge      i8042\nLOC:  20  30   Local timer interrupts\n"), soft, None);
        let mut reused = ReusedRates::default();
        let r = reused.update(&old, &new, &Filter::default());
        let (per, total) = r.interrupts().unwrap().sum();
        let per: Vec<_> = per.collect();
        assert_eq!(per[2], None, "{per:?}");
        assert_eq!(per[0], Some(11.0 / 1.001));
        assert_eq!(total, Some(23.0 / 1.001));
        let text = block("12:00:00.000", r, &TextOpts::default());
        let sum = text.lines().find(|l| l.contains("SUM")).unwrap();
        assert_eq!(sum.split_whitespace().last(), Some("-"), "{text}");
    }

    /// A row of the earlier snapshot that the later one has not (IRQ 24
    /// freed) is named after the SUM line, whatever the row filter; a
    /// block with no row gone has no such line.
    #[test]
    fn rows_gone_since_the_earlier_sample_are_named_after_sum() {
        let seq = samples();
        let mut reused = ReusedRates::default();
        for f in [
            Filter::default(),
            Filter::from_flags(Some("^LOC$"), None).unwrap(),
        ] {
            let r = reused.update(&seq[1], &seq[2], &f);
            let text = block("12:00:00.000", r, &TextOpts::default());
            let lines: Vec<&str> = text.lines().collect();
            let sum = lines.iter().position(|l| l.contains("  SUM  ")).unwrap();
            assert_eq!(
                lines[sum + 1],
                "12:00:00.000  gone since the previous sample: 24",
                "{text}"
            );
            let text = block(
                "Average:",
                reused.update(&seq[0], &seq[2], &f),
                &TextOpts::default(),
            );
            assert!(
                text.contains("\nAverage:  gone since the first sample: 24\n"),
                "{text}"
            );
            let text = block(
                "12:00:00.000",
                reused.update(&seq[0], &seq[1], &f),
                &TextOpts::default(),
            );
            assert!(!text.contains("gone"), "{text}");
        }
    }

    /// A softirq vector of the earlier snapshot that the later one has not
    /// (HI) is named after the softirq lines, as JSON's `softirqs.gone`
    /// lists it; a block with the same vectors has no such line.
    #[test]
    fn softirq_vectors_gone_since_the_earlier_sample_are_named() {
        let seq = samples();
        let mut reused = ReusedRates::default();
        let r = reused.update(&seq[2], &seq[3], &Filter::default());
        let text = block("12:00:00.000", r, &TextOpts::default());
        let lines: Vec<&str> = text.lines().collect();
        let last_soft = lines.iter().rposition(|l| l.contains("  TIMER ")).unwrap();
        assert_eq!(
            lines[last_soft + 1],
            "12:00:00.000  gone since the previous sample: HI",
            "{text}"
        );
        let r = reused.update(&seq[0], &seq[3], &Filter::default());
        let text = block("Average:", r, &TextOpts::default());
        assert!(
            text.contains("\nAverage:  gone since the first sample: HI\n"),
            "{text}"
        );
        let r = reused.update(&seq[3], &seq[4], &Filter::default());
        let text = block("12:00:00.000", r, &TextOpts::default());
        assert!(!text.contains("gone"), "{text}");
    }

    /// A softirq vector whose count went back on every CPU has no total
    /// rate: `-`, not 0; a vector still counting somewhere has its rate.
    #[test]
    fn a_softirq_row_with_no_value_prints_dashes() {
        let seq = samples();
        let mut reused = ReusedRates::default();
        let r = reused.update(&seq[1], &seq[2], &Filter::default());
        let text = block("12:00:00.000", r, &TextOpts::default());
        let fields = |name: &str| -> Vec<String> {
            let l = text
                .lines()
                .find(|l| l.split_whitespace().nth(1) == Some(name));
            l.unwrap()
                .split_whitespace()
                .skip(2)
                .map(String::from)
                .collect()
        };
        assert_eq!(fields("HI"), ["-", "-", "-"], "{text}");
        assert_eq!(fields("TIMER"), ["1.0", "1.0", "0.0"], "{text}");
    }

    /// The SUM line adds an s390 class row, not its sub-class rows too
    /// (they count the same interrupts); a sub-class row kept without its
    /// class row is added.
    #[test]
    fn s390_sub_class_rows_are_not_summed_twice() {
        let seq = s390_samples();
        let mut reused = ReusedRates::default();
        let r = reused.update(&seq[0], &seq[1], &Filter::default());
        let s = r.interrupts().unwrap();
        let ext = 100.0 / 1.001;
        let (per, total) = s.sum();
        assert_eq!(
            (per.collect::<Vec<_>>(), total),
            (vec![Some(ext), Some(0.0)], Some(ext))
        );
        let text = block("12:00:00.000", r, &TextOpts::default());
        let sum = text.lines().find(|l| l.contains("SUM")).unwrap();
        assert_eq!(sum.split_whitespace().nth(4), Some("99.9"), "{text}");
        assert!(text.contains("[EXT] Clock Comparator"), "{text}");
        let io = 6.0 / 1.001;
        let r = reused.update(&seq[1], &seq[2], &Filter::default());
        assert_eq!(r.interrupts().unwrap().sum().1, Some(ext + io));
        let clk = Filter::from_flags(Some("^CLK$"), None).unwrap();
        let r = reused.update(&seq[0], &seq[1], &clk);
        assert_eq!(r.interrupts().unwrap().sum().1, Some(ext));
        let sub = Filter::from_flags(Some("^(CLK|DAS|EXT)$"), None).unwrap();
        let r = reused.update(&seq[1], &seq[2], &sub);
        assert_eq!(r.interrupts().unwrap().sum().1, Some(ext + io));
    }

    fn filters() -> Vec<Filter> {
        vec![
            Filter::default(),
            Filter {
                cpus: Some(vec![1, 2]),
                ..Filter::default()
            },
            Filter::from_flags(Some("virtio|eth|LOC|ü"), Some("0")).unwrap(),
            Filter {
                exclude: Some(regex::Regex::new("^(NMI|LOC)$").unwrap()),
                ..Filter::default()
            },
        ]
    }

    fn all_opts() -> Vec<TextOpts> {
        let mut v = Vec::new();
        for sort in [SortKey::Rate, SortKey::Total, SortKey::Irq, SortKey::Name] {
            for threshold in [None, Some(0.0), Some(150.0), Some(5000.0)] {
                v.push(TextOpts {
                    sort,
                    threshold,
                    verbose: false,
                });
            }
        }
        v
    }

    /// A rate as `{:.1}`, `-` for none.
    fn r1(v: Option<f64>) -> String {
        v.map_or_else(|| "-".to_string(), |r| format!("{r:.1}"))
    }

    /// The IRQ and softirq tables of a block as the text writer printed
    /// them from the rates [`Report`], with `std::fmt` only: the
    /// reference the compact state's text must equal byte for byte.
    fn reference(t: &str, r: &Report, opts: &TextOpts) -> String {
        let mut out = String::new();
        if let Some(s) = &r.interrupts {
            let (per, total) = report::rate_sum(s.cpus.len(), s.rows.iter());
            let mut lw = 12;
            let mut dw = 20;
            let (mut tw, mut cw) = (12, 10);
            for l in &s.rows {
                lw = lw.max(l.label.chars().count());
                dw = dw.max(report::name_of(l).chars().count());
                tw = tw.max(r1(Some(l.total_rate.unwrap_or(0.0))).len());
                for v in l.rates.iter().flatten().flatten() {
                    cw = cw.max(r1(Some(*v)).len());
                }
            }
            tw = tw.max(r1(total).len());
            for v in &per {
                cw = cw.max(r1(*v).len());
            }
            for c in &s.cpus {
                cw = cw.max(format!("CPU{c}").len());
            }
            out += &format!("{t}  {:<lw$} {:<dw$} {:>tw$}", "IRQ", "DEVICE", "total/s");
            for c in &s.cpus {
                out += &format!(" {:>cw$}", format!("CPU{c}"));
            }
            out += "\n";
            let min = opts.threshold.unwrap_or(0.0);
            let mut shown: Vec<&IrqLine> = s
                .rows
                .iter()
                .filter(|l| report::above_threshold(l, min))
                .collect();
            report::sort_rows(&mut shown, opts.sort, |l| l, |l| l.total_rate);
            for l in shown {
                out += &format!(
                    "{t}  {:<lw$} {:<dw$} {:>tw$}",
                    l.label,
                    report::name_of(l),
                    r1(l.total_rate)
                );
                for v in l.rates.iter().flatten() {
                    out += &format!(" {:>cw$}", r1(*v));
                }
                out += "\n";
            }
            out += &format!("{t}  {:<lw$} {:<dw$} {:>tw$}", "SUM", "all rows", r1(total));
            for v in &per {
                out += &format!(" {:>cw$}", r1(*v));
            }
            out += "\n";
            if !s.gone.is_empty() {
                let since = if t == "Average:" { "first" } else { "previous" };
                out += &format!(
                    "{t}  gone since the {since} sample: {}\n",
                    s.gone.join(", ")
                );
            }
        }
        if let Some(s) = &r.softirqs {
            let (mut lw, dw, mut tw, mut cw) = (12, 20, 12, 10);
            for l in &s.rows {
                lw = lw.max(l.name.chars().count());
                tw = tw.max(r1(l.total_rate).len());
                for v in l.rates.iter().flatten() {
                    cw = cw.max(r1(*v).len());
                }
            }
            for c in &s.cpus {
                cw = cw.max(format!("CPU{c}").len());
            }
            out += &format!("{t}  {:<lw$} {:<dw$} {:>tw$}", "SOFTIRQ", "", "total/s");
            for c in &s.cpus {
                out += &format!(" {:>cw$}", format!("CPU{c}"));
            }
            out += "\n";
            for l in &s.rows {
                out += &format!("{t}  {:<lw$} {:<dw$} {:>tw$}", l.name, "", r1(l.total_rate));
                for v in l.rates.iter().flatten() {
                    out += &format!(" {:>cw$}", r1(*v));
                }
                out += "\n";
            }
            if !s.gone.is_empty() {
                let since = if t == "Average:" { "first" } else { "previous" };
                out += &format!(
                    "{t}  gone since the {since} sample: {}\n",
                    s.gone.join(", ")
                );
            }
        }
        out
    }

    fn block(t: &str, rates: &ReusedRates, opts: &TextOpts) -> String {
        let b = Block {
            stamp: t,
            rates,
            threads: &[],
            self_cost: SelfCost::default(),
            strategy: Strategy::ProcInterrupts,
        };
        let mut out = Vec::new();
        write_block(&b, opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The IRQ and softirq tables of a block's text (up to its CPU table).
    fn tables(text: &str) -> String {
        let end = text
            .find("  CPU              %usr")
            .map_or(text.len(), |i| text[..i].rfind('\n').map_or(0, |j| j + 1));
        text[..end].to_string()
    }

    /// Every sample of every sequence, under every filter, sort and
    /// threshold: the text of the compact state reused across samples is
    /// the reference text of the rates report, byte for byte, and so is
    /// the run's `Average:` from the same state.
    #[test]
    fn text_from_the_reused_state_is_the_reference_text_of_the_rates_report() {
        let seqs = [samples(), synth_samples(4, 30), synth_samples(3, 40)];
        let mut blocks = 0;
        for seq in &seqs {
            for f in &filters() {
                for opts in all_opts() {
                    let mut reused = ReusedRates::new(opts.sort, opts.threshold);
                    for pair in seq.windows(2) {
                        let want = rates(&pair[0], &pair[1], f, RateOpts::default());
                        let got =
                            block("12:00:00.000", reused.update(&pair[0], &pair[1], f), &opts);
                        assert_eq!(
                            tables(&got),
                            reference("12:00:00.000", &want, &opts),
                            "{opts:?} {f:?}"
                        );
                        blocks += 1;
                    }
                    let (first, last) = (&seq[0], &seq[seq.len() - 1]);
                    let want = rates(first, last, f, RateOpts::default());
                    let got = block("Average:", reused.update(first, last, f), &opts);
                    assert_eq!(tables(&got), reference("Average:", &want, &opts));
                }
            }
        }
        assert!(blocks > 500, "{blocks}");
    }

    /// The per-row figures kept are the rates report's, row for row
    /// (shown or not), and a row's text is rewritten only when its
    /// position holds another row.
    #[test]
    fn kept_rows_are_the_rates_report_rows() {
        for seq in [samples(), synth_samples(4, 30), s390_samples()] {
            for f in &filters() {
                let mut reused = ReusedRates::new(SortKey::Total, None);
                for pair in seq.windows(2) {
                    let text_before = reused.irq.text.len();
                    let want = rates(&pair[0], &pair[1], f, RateOpts::default());
                    reused.update(&pair[0], &pair[1], f);
                    let (Some(w), Some(s)) = (&want.interrupts, reused.interrupts()) else {
                        assert!(want.interrupts.is_none() && reused.interrupts().is_none());
                        continue;
                    };
                    let kept: Vec<&Row> = s.rows.iter().filter(|x| x.keep).collect();
                    assert_eq!(kept.len(), w.rows.len());
                    assert_eq!(s.cpus(), &w.cpus[..]);
                    for (x, l) in kept.iter().zip(&w.rows) {
                        let r = RowRates { s, row: x };
                        assert_eq!(r.label(), l.label);
                        assert_eq!(r.name(), report::name_of(l));
                        assert_eq!(r.name_width(), report::name_of(l).chars().count());
                        assert_eq!(x.irq, l.irq);
                        assert_eq!(x.shape, l.shape);
                        assert_eq!(r.total_rate(), l.total_rate);
                        assert_eq!(x.gap, l.gaps.is_some());
                        assert_eq!(Some(x.since_boot), l.since_boot);
                        let got: Vec<Option<f64>> = r.rates().collect();
                        assert_eq!(Some(&got), l.rates.as_ref());
                    }
                    let (per, total) = report::rate_sum(w.cpus.len(), w.rows.iter());
                    let (got, got_total) = s.sum();
                    assert_eq!((got.collect::<Vec<_>>(), got_total), (per, total));
                    if pair[1].interrupts == seq[1].interrupts && text_before > 0 {
                        assert_eq!(s.text.len(), text_before, "no text copied");
                    }
                }
            }
        }
    }

    /// End column (in chars) of every whitespace-separated field of `l`.
    fn field_ends(l: &str) -> Vec<usize> {
        let chars: Vec<char> = l.chars().collect();
        (0..chars.len())
            .filter(|&i| {
                !chars[i].is_whitespace() && chars.get(i + 1).is_none_or(|c| c.is_whitespace())
            })
            .map(|i| i + 1)
            .collect()
    }

    /// Long and non-ASCII device names and a huge rate widen their
    /// columns for the whole table: every row's numbers end where the
    /// header's columns end.
    #[test]
    fn long_device_names_and_big_rates_keep_the_columns_aligned() {
        let seq = synth_samples(4, 30);
        let mut reused = ReusedRates::default();
        let mut wide = 0;
        for pair in seq.windows(2) {
            let rates = reused.update(&pair[0], &pair[1], &Filter::default());
            let text = block("12:00:00.000", rates, &TextOpts::default());
            let lines: Vec<&str> = text
                .lines()
                .take_while(|l| !l.contains("SOFTIRQ"))
                // the line naming gone rows has no columns
                .filter(|l| !l.contains("  gone since the "))
                .collect();
            assert!(lines.len() > 5, "{text}");
            wide += usize::from(text.contains("virtio0-input.qqqqqqqqqqqqqqq,ünï-東"));
            let head = field_ends(lines[0]);
            let h = head.len();
            for l in &lines[1..] {
                // the device may hold spaces: compare from the right; a
                // single-value row has its total and one value
                let ends = field_ends(l);
                let per_cpu = ends.len() >= 5 && ends[ends.len() - 5..] == head[h - 5..];
                let single = ends[ends.len() - 2..] == head[h - 5..h - 3];
                assert!(per_cpu || single, "columns moved:\n{}\n{l}", lines[0]);
            }
        }
        assert!(wide > 0, "a long name was shown");
    }

    /// Rows that keep changing leave old text behind; it is dropped once
    /// it outgrows the rows' own.
    #[test]
    fn text_left_by_changed_rows_is_dropped() {
        let seq = synth_samples(2, 8);
        let mut s = seq[1].clone();
        let mut reused = ReusedRates::default();
        for k in 0..2000 {
            let old = s.clone();
            s.mono_ns += 1_000_000_000;
            if let Some(i) = s.interrupts.as_mut() {
                for row in i.rows_mut() {
                    let d = format!("dev{k}-{}", "x".repeat(k % 40));
                    row.description = d.as_str().into();
                    row.parts.actions = d.as_str().into();
                }
            }
            reused.update(&old, &s, &Filter::default());
            let i = reused.interrupts().unwrap();
            assert!(
                i.text.len() <= 2 * i.live + 4096 + i.live,
                "{k}: {}",
                i.text.len()
            );
            for r in i.rows.iter() {
                let r = RowRates { s: i, row: r };
                assert_eq!(r.name(), format!("dev{k}-{}", "x".repeat(k % 40)));
            }
        }
    }
}
