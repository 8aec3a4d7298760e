//! The `top --batch --format json` line (README "JSON Lines"), written
//! straight from two snapshots.
//!
//! The numbers are those of the rates [`Report`](crate::report::Report)
//! (`show --interval`), field for field (a proptest ties the two), but an
//! interrupt row keeps only what a stream needs: `label`, `irq`, `total`,
//! `rates`, `total_rate`, `gaps`, `actions`, `description`, `affinity`.
//! The best-effort split of the description (chip, hwirq, trigger, flow)
//! and the row shape are in `show --format json`; repeating them every
//! second doubled the line and what writing it costs.
//!
//! Nothing is built per sample: interrupt rows stream out of
//! [`delta::interrupts_delta_each`] into one reused byte buffer, the JSON of
//! each row's metadata is cached across samples and re-escaped only when
//! the row changes (a row whose label and description the delta found
//! at its position in the earlier snapshot, the last line's later one,
//! keeps it without its cached key being read: [`LineInput::samples`]),
//! an idle row (every count unchanged: most rows, most
//! samples) is one copy of its whole cached JSON, as is an idle softirq
//! vector's part after its name, and
//! per-CPU rates are formatted by hand (integers, or 3 decimals): the row's
//! parts are [`irq_row_json`]'s, the one encoding of a row. On a
//! 1152-CPU machine that is 1.2 million rates per line; on a small one it
//! removes the per-row allocations that made irqlab cost more than `mpstat`
//! (BENCHMARKS.md).
//!
//! With `top --trace` (and `replay` of a traced recording) the line ends
//! with a `trace` object: the [`TopTrace`] of the same tick, written as
//! part of the line.
//!
//! With `--threshold` ([`JsonlWriter::with_threshold`]) an interrupt row
//! is left out by the rule of text's rows, `report::above_threshold`.
//!
//! Owns the line around the rows: rates come from `delta`, filtering from
//! [`Filter`], affinity and traced figures from the caller.

use super::irq_row_json::{self, json, json_str, push_u64 as int, write_rate, CellRates};
use super::row_key::RowCache;
use crate::filter::Filter;
use crate::report;
use crate::report::CpuPctLine;
use crate::sampler::clock::{CostMeter, MillisStamp};
use crate::sampler::SelfCost;
use crate::sampler::{Frame, Strategy};
use crate::threads::{ThreadCpu, ThreadKind};
use crate::trace::top::TopTrace;
use irqlab_core::delta::{self, Cell};
use irqlab_core::{Interrupts, IrqRow, Snapshot, Softirqs};

/// Everything one line is made of.
pub struct LineInput<'a> {
    pub old: &'a Snapshot,
    pub new: &'a Snapshot,
    pub filter: &'a Filter,
    pub threads: &'a [ThreadCpu],
    /// Started when the sample began; stopped just before `self_cost` is
    /// written, so the cost includes this line's formatting.
    pub meter: &'a CostMeter,
    pub strategy: Strategy,
    /// The traced figures of this tick (`top --trace`): the line's last
    /// field, `trace`.
    pub trace: Option<&'a TopTrace>,
    /// The numbers of the samples `old` and `new` hold
    /// ([`Frame::samples`]), if they come from one sampler: when `old` is
    /// the last line's `new`, a row whose label and description the delta
    /// found to be those of `old`'s row at its position keeps its cached
    /// JSON without its key being read again.
    pub samples: Option<(u64, u64)>,
}

/// Affinity list of a numbered IRQ (asked only when a row's cached
/// metadata is rebuilt).
pub type AffinityFn<'a> = dyn FnMut(u32) -> Option<String> + 'a;

/// Reusable state of the writer: buffers and the metadata cache.
#[derive(Default)]
pub struct JsonlWriter {
    /// Rendered row objects, back to back, before sorting.
    rows: Vec<u8>,
    spans: Vec<Span>,
    /// Per row position in the later snapshot: the row's cached JSON.
    meta: RowCache<Meta>,
    /// The order rows are written in (indices into `spans`).
    order: Vec<usize>,
    picked: Vec<Cell>,
    /// The rows' numbers (and softirqs' rates), shared across a line.
    rates: CellRates,
    /// The live sampler's metadata epoch the cache was built in.
    epoch: u64,
    /// The sample ([`LineInput::samples`]) of the last line's `new`: every
    /// valid entry of `meta` at a position of its rows was checked or
    /// built for the row there (`None`: not known).
    checked: Option<u64>,
    /// A section's CPU ids (both snapshots' headers merged) and the
    /// columns the filter keeps: reused, rebuilt per section.
    union: Vec<u32>,
    cols: Vec<usize>,
    /// The delta's own buffers (no allocation per sample).
    delta: delta::DeltaScratch,
    /// The `/proc/stat` section, rebuilt in place per line.
    stat: report::StatSection,
    /// What an idle row's cached line is built with.
    idle: Scratch,
    /// The last line (see [`JsonlWriter::line`]), which ends the buffer
    /// (with an interrupt section it starts in the slack in front of its
    /// idle rows, see [`IdleRun`]): the next line is written over it, its
    /// idle rows kept in place when they are the same.
    line: Vec<u8>,
    /// The line up to its first interrupt row, then the busy rows: built
    /// before the line is assembled (over the last one), then written
    /// into the slack so that it ends where the idle rows start.
    pre: Vec<u8>,
    /// The idle rows of the last line and of the line being written.
    run: IdleRun,
    /// `--threshold`: the least rate of an interrupt row written.
    threshold: Option<f64>,
}

/// The idle rows at the end of the interrupt row list (each the cached
/// output of its row, `,` then the row's JSON, see [`Meta`]), written in
/// the line buffer over the last line, always from the same position
/// (`at`), with slack in front of them. As long as the rows are those of
/// the last line, in the same order, with the same cached outputs, their
/// bytes are already there and stay: neither they nor their cached
/// outputs are read or moved (on an idle sample of a quiet machine,
/// neither is). The rows from the first difference on are copied from
/// the cache after the ones kept.
///
/// The start of the line (timestamp, interval, the section's head, the
/// busy rows: its length changes every sample) is written last, into the
/// slack, ending where the idle rows start, and the line is returned from
/// there; the bytes in front of it are not part of it. Only when it is
/// longer than the slack are the idle rows moved, to leave twice its
/// length (at least [`MIN_SLACK`]) in front of them, so that the start
/// rarely outgrows it again.
struct IdleRun {
    /// Positions of the last line's idle rows, in order.
    rows: Vec<u32>,
    /// Where the idle rows start in the buffer (the first row without its
    /// comma): the length of the slack, at least [`MIN_SLACK`].
    at: usize,
    /// Where the last line's idle rows end (`None`: the last line had no
    /// list, or a row of it was not a cached output).
    end: Option<usize>,
    /// Rows of this line found equal to `rows` so far (while `same`).
    k: usize,
    same: bool,
    /// Once this line's rows differ: its rows.
    new_rows: Vec<u32>,
    /// A row of this line's list was written, not copied from the cache.
    fresh: bool,
}

/// The least slack in front of the idle rows: room for the start of a
/// line with a few busy rows on a small machine.
const MIN_SLACK: usize = 512;

impl Default for IdleRun {
    fn default() -> Self {
        IdleRun {
            rows: Vec::new(),
            at: MIN_SLACK,
            end: None,
            k: 0,
            same: false,
            new_rows: Vec::new(),
            fresh: false,
        }
    }
}

impl IdleRun {
    /// Where this line's list starts in the buffer: the first row's
    /// comma, which the start of the line is written over.
    #[inline]
    fn base(&self) -> usize {
        self.at.saturating_sub(1)
    }

    /// A new list in `out` (the last line); `changed`: a cached output
    /// was built or dropped since the last line.
    fn start(&mut self, out: &mut Vec<u8>, changed: bool) {
        self.k = 0;
        self.new_rows.clear();
        self.fresh = false;
        self.same = self.end.is_some() && !changed;
        if !self.same {
            // the slack keeps whatever the last line left in it
            out.resize(self.base(), 0);
        }
    }

    /// The next row of the list is the cached output of `pos`
    /// (`changed`: built for this line).
    #[inline]
    fn cached(&mut self, out: &mut Vec<u8>, cache: &RowCache<Meta>, pos: usize, changed: bool) {
        let p = u32::try_from(pos).unwrap_or(u32::MAX);
        if self.same {
            if !changed && self.rows.get(self.k) == Some(&p) {
                self.k += 1;
                return;
            }
            self.differ(out, cache);
        }
        self.new_rows.push(p);
        out.extend_from_slice(cache.output(pos));
    }

    /// The next row of the list is written (after its comma) at the end
    /// of `out`.
    #[inline]
    fn written(&mut self, out: &mut Vec<u8>, cache: &RowCache<Meta>) {
        if self.same {
            self.differ(out, cache);
        }
        self.fresh = true;
    }

    /// The list differs from the last line's from the current row on:
    /// the rows found equal so far are kept, the rest of the last line
    /// dropped.
    #[cold]
    #[inline(never)]
    fn differ(&mut self, out: &mut Vec<u8>, cache: &RowCache<Meta>) {
        self.same = false;
        let kept = self.rows.get(..self.k).unwrap_or_default();
        let len: usize = kept.iter().map(|&p| cache.output(p as usize).len()).sum();
        self.new_rows.extend_from_slice(kept);
        out.truncate(self.base() + len);
    }

    /// The end of the list in `out`: its bytes are `base()..` the end
    /// returned (its rows, `at..` it).
    fn finish(&mut self, out: &mut Vec<u8>, cache: &RowCache<Meta>) -> usize {
        if self.same && self.k < self.rows.len() {
            self.differ(out, cache);
        }
        match (self.same, self.end) {
            (true, Some(end)) => end,
            _ => out.len(),
        }
    }

    /// `pre` written in front of the rows (`at..end` in `out`), ending
    /// where they start, and `out` cut after them: where the line starts.
    fn place(&mut self, out: &mut Vec<u8>, pre: &[u8], end: usize) -> usize {
        let len = end.saturating_sub(self.at);
        if pre.len() > self.at {
            self.make_room(out, pre.len(), end);
        }
        let end = self.at + len;
        out.resize(end, 0);
        let start = self.at - pre.len();
        if let Some(dst) = out.get_mut(start..self.at) {
            dst.copy_from_slice(pre);
        }
        self.end = (!self.fresh).then_some(end);
        if !self.same {
            std::mem::swap(&mut self.rows, &mut self.new_rows);
        }
        start
    }

    /// The rows (`at..end` in `out`) moved to leave twice `need` bytes
    /// (at least [`MIN_SLACK`]) in front of them.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, out: &mut Vec<u8>, need: usize, end: usize) {
        let at = need.saturating_mul(2).max(MIN_SLACK);
        let len = end.saturating_sub(self.at);
        if out.len() < at + len {
            out.resize(at + len, 0);
        }
        if len > 0 {
            out.copy_within(self.at..end, at);
        }
        self.at = at;
    }
}

/// Where one rendered row sits in `rows`, and its sort key.
struct Span {
    start: usize,
    end: usize,
    rate: f64,
}

/// What [`RowCache`] keeps beside a row's cached JSON: the cache holds,
/// after the row's key (label and description), its
/// [`irq_row_json::head`] (`{"label":…,"irq":…`) then its
/// [`irq_row_json::tail`] (`,"actions":[…],"description":…[,"affinity":…]}`).
///
/// Once the row was idle (every cell a count of 0 over a positive
/// interval) the output becomes its whole idle part of the line,
/// `,` head numbers tail, as [`CellRates::numbers`] writes the numbers
/// for that many cells: an idle row (most rows, most samples) is then one
/// copy, and a busy row's head and tail are the same bytes (no second
/// copy of them to keep warm).
#[derive(Debug, Clone, Copy)]
struct Meta {
    /// Where the head starts in the output (0, or 1 after the idle
    /// line's comma), and its length.
    head_at: u32,
    head_len: u32,
    /// Length of the tail, which ends the output.
    tail_len: u32,
    /// The number of cells the output is the idle row of ([`NO_IDLE`]:
    /// it is head and tail only).
    idle_cells: u32,
}

/// [`Meta::idle_cells`] of a row whose idle line is not built.
const NO_IDLE: u32 = u32::MAX;

impl Default for Meta {
    fn default() -> Self {
        Meta {
            head_at: 0,
            head_len: 0,
            tail_len: 0,
            idle_cells: NO_IDLE,
        }
    }
}

/// The cached head of the row at `pos`.
#[inline]
fn head(cache: &RowCache<Meta>, pos: usize) -> &[u8] {
    let m = cache.ext(pos);
    let at = m.head_at as usize;
    cache
        .output(pos)
        .get(at..at + m.head_len as usize)
        .unwrap_or_default()
}

/// The cached tail of the row at `pos`.
#[inline]
fn tail(cache: &RowCache<Meta>, pos: usize) -> &[u8] {
    let out = cache.output(pos);
    let len = cache.ext(pos).tail_len as usize;
    out.get(out.len().saturating_sub(len)..).unwrap_or_default()
}

/// `,` head numbers tail of the row at `pos` idle over `cells` cells (a
/// positive interval), built in place of head and tail on first use
/// (again when the number of cells changed), through `tmp`.
#[cold]
#[inline(never)]
fn build_idle(
    cache: &mut RowCache<Meta>,
    pos: usize,
    cells: usize,
    rates: &mut CellRates,
    tmp: &mut Scratch,
) {
    tmp.bytes.clear();
    tmp.bytes.push(b',');
    tmp.bytes.extend_from_slice(head(cache, pos));
    tmp.zero.clear();
    tmp.zero.resize(cells, Cell::Count(0));
    rates.numbers(&mut tmp.bytes, &tmp.zero);
    tmp.bytes.extend_from_slice(tail(cache, pos));
    let m = cache.ext(pos);
    let ext = Meta {
        head_at: 1,
        idle_cells: u32::try_from(cells).unwrap_or(NO_IDLE),
        ..m
    };
    cache.rewrite(pos, &tmp.bytes, ext);
}

/// What an idle row's cached line is built with, and the fields after
/// the name of an idle softirq row.
struct Scratch {
    bytes: Vec<u8>,
    zero: Vec<Cell>,
    /// `,"counts":[0,…],"total":0,"rates":[0,…],"total_rate":0}` as
    /// [`softirq_row`] writes it for `softirq_cells` cells.
    softirq: Vec<u8>,
    softirq_cells: usize,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            bytes: Vec::new(),
            zero: Vec::new(),
            softirq: Vec::new(),
            softirq_cells: usize::MAX,
        }
    }
}

impl Scratch {
    /// The fields after the name of a softirq row idle over `cells`
    /// cells (a positive interval), built on first use.
    #[inline]
    fn softirq(&mut self, cells: usize, rates: &mut CellRates) -> &[u8] {
        if self.softirq_cells != cells {
            self.build_softirq(cells, rates);
        }
        &self.softirq
    }

    #[cold]
    #[inline(never)]
    fn build_softirq(&mut self, cells: usize, rates: &mut CellRates) {
        {
            const NAME: &[u8] = b"{\"name\":\"\"";
            self.zero.clear();
            self.zero.resize(cells, Cell::Count(0));
            self.softirq.clear();
            softirq_row(&mut self.softirq, "", &self.zero, rates);
            self.softirq.drain(..NAME.len().min(self.softirq.len()));
            self.softirq_cells = cells;
        }
    }
}

impl JsonlWriter {
    /// A writer that leaves out the interrupt rows `--threshold MIN` hides
    /// in text (`report::above_threshold`: a row with a gap is always
    /// written, else one of a positive rate of at least `min`).
    pub fn with_threshold(min: Option<f64>) -> JsonlWriter {
        JsonlWriter {
            threshold: min,
            ..JsonlWriter::default()
        }
    }

    /// Forget cached metadata (the filter or the affinity source changed).
    pub fn invalidate(&mut self) {
        self.meta.invalidate();
    }

    /// The line of one live frame (with the traced figures of the same
    /// tick, if any); cached metadata is dropped when the frame's IRQ set
    /// changed. Numbered rows carry `affinity` only when `with_affinity`
    /// (`--affinity`): without it no affinity file is read.
    pub fn frame_line(
        &mut self,
        frame: &mut Frame,
        trace: Option<&TopTrace>,
        with_affinity: bool,
    ) -> &[u8] {
        if frame.meta_epoch != self.epoch {
            self.invalidate();
            self.epoch = frame.meta_epoch;
        }
        let meter = frame.meter;
        let inp = LineInput {
            old: frame.prev,
            new: frame.cur,
            filter: frame.filter(),
            threads: frame.threads,
            meter: &meter,
            strategy: frame.strategy,
            trace,
            samples: Some(frame.samples),
        };
        let mut affinity = |irq: u32| with_affinity.then(|| frame.affinity(irq)).flatten();
        self.line(&inp, &mut affinity)
    }

    /// Write one line (with its newline) into `out`, replacing its content:
    /// [`JsonlWriter::line`] copied.
    pub fn write_line(&mut self, inp: &LineInput, affinity: &mut AffinityFn, out: &mut Vec<u8>) {
        let line = self.line(inp, affinity);
        out.clear();
        out.extend_from_slice(line);
    }

    /// One line (with its newline), written over the last one in the
    /// writer's buffer.
    pub fn line(&mut self, inp: &LineInput, affinity: &mut AffinityFn) -> &[u8] {
        let mut line = std::mem::take(&mut self.line);
        let mut pre = std::mem::take(&mut self.pre);
        let start = self.write_into(inp, affinity, &mut pre, &mut line);
        self.pre = pre;
        self.line = line;
        self.line.get(start..).unwrap_or_default()
    }

    /// The line into `out`, which holds the last line: its start in
    /// `pre` first, then the interrupt rows assembled in `out`, then the
    /// rest. Returns where the line starts in `out`.
    fn write_into(
        &mut self,
        inp: &LineInput,
        affinity: &mut AffinityFn,
        pre: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> usize {
        let (old, new) = (inp.old, inp.new);
        let secs = new.elapsed_since(old);
        self.rates.start(secs);
        pre.clear();
        pre.extend_from_slice(b"{\"timestamp\":\"");
        pre.extend_from_slice(MillisStamp::of(new.wall_ns).as_bytes());
        pre.extend_from_slice(b"\",\"mono_ns\":");
        int(pre, new.mono_ns);
        pre.extend_from_slice(b",\"interval_s\":");
        json(pre, &secs);
        pre.extend_from_slice(b",\"interrupts\":");
        // whether `meta` was checked for `old`'s rows, and for which rows
        // it will have been at the end of this line
        let (was, now) = inp.samples.unzip();
        let known = was.is_some() && was == self.checked;
        self.checked = None;
        let start = match (&old.interrupts, &new.interrupts) {
            (Some(o), Some(n)) => {
                let start = self.irq_section(o, n, inp.filter, affinity, known, pre, out);
                self.checked = now;
                start
            }
            _ => {
                pre.extend_from_slice(b"null");
                out.clear();
                out.extend_from_slice(pre);
                self.run.end = None;
                0
            }
        };
        out.extend_from_slice(b",\"softirqs\":");
        match (&old.softirqs, &new.softirqs) {
            (Some(o), Some(n)) => self.softirq_section(o, n, inp.filter, out),
            _ => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"cpu_pct\":");
        match (&old.stat, &new.stat) {
            (Some(o), Some(n)) => {
                let st = &mut self.stat;
                report::stat_section_into(o, n, inp.filter, Some(secs), st);
                cpu_pct(out, &st.cpu_pct);
                // with --cpus: which CPUs the `cpu: null` line sums
                if let Some(cpus) = &st.aggregate_cpus {
                    out.extend_from_slice(b",\"aggregate_cpus\":");
                    json(out, cpus);
                }
            }
            _ => out.extend_from_slice(b"[]"),
        }
        out.extend_from_slice(b",\"threads\":");
        threads(out, inp.threads);
        out.extend_from_slice(b",\"self_cost\":");
        self_cost(out, &inp.meter.stop());
        out.extend_from_slice(b",\"strategy\":");
        out.extend_from_slice(strategy_json(inp.strategy));
        if let Some(t) = inp.trace {
            trace(out, t);
        }
        out.extend_from_slice(b"}\n");
        start
    }

    /// The interrupt section: its start after `pre` (the line so far),
    /// then the line assembled in `out` (which holds the last line) from
    /// `pre`, the busy rows and the idle rows, and the section's end.
    /// Returns where the line starts in `out`. `known`: every valid
    /// cached entry is for the row of `o` at its position (their labels
    /// and descriptions), so a row with that row's label and description
    /// ([`delta::RowMatch::same_text`]) needs no check of its key.
    #[allow(clippy::too_many_arguments)]
    fn irq_section(
        &mut self,
        o: &Interrupts,
        n: &Interrupts,
        f: &Filter,
        affinity: &mut AffinityFn,
        known: bool,
        pre: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> usize {
        let JsonlWriter {
            rows,
            spans,
            meta,
            order,
            picked,
            rates,
            union,
            cols,
            delta: scratch,
            idle,
            run,
            threshold,
            ..
        } = self;
        let threshold = *threshold;
        section_cpus(&o.cpus, &n.cpus, f, union, cols);
        let (union, cols) = (&*union, &*cols);
        let all = cols.len() == union.len();
        rates.reserve_idle(cols.len());
        rows.clear();
        spans.clear();
        let mut pos = 0;
        let secs = rates.secs();
        section_head(pre, union, cols);
        // Idle rows (rate 0) end the list in file order, each after a
        // comma: the last line's bytes when they are the same rows
        // (`IdleRun`). Busy rows are staged in `rows` and put in front of
        // them, highest rate first, at the end.
        meta.compact();
        run.start(out, meta.take_changed());
        let gone = delta::interrupts_delta_each_in(scratch, o, n, secs, |r, m, cells| {
            let p = pos;
            pos += 1;
            let kept = known && m.same_text && meta.holds(p);
            if !kept && !meta.is_for(p, &r.label, &r.description) {
                rebuild(meta, p, r, f, affinity);
            }
            if !meta.slot(p).is_some_and(|s| s.keep()) {
                return;
            }
            let cells = report::pick_cells(r, cells, all, cols, picked);
            if threshold.is_some_and(|min| !above_threshold(cells, secs, min)) {
                return;
            }
            if secs > 0.0 && cells.iter().all(|c| *c == Cell::Count(0)) {
                if meta.ext(p).idle_cells as usize != cells.len() {
                    build_idle(meta, p, cells.len(), rates, idle);
                }
                let changed = meta.take_changed();
                run.cached(out, meta, p, changed);
                return;
            }
            // the rate `numbers` returns, known before the row is written
            let total: u64 = cells.iter().filter_map(|c| c.count()).sum();
            if secs > 0.0 && total as f64 / secs > 0.0 {
                let start = rows.len();
                rows.extend_from_slice(head(meta, p));
                let rate = rates.numbers(rows, cells);
                rows.extend_from_slice(tail(meta, p));
                spans.push(Span {
                    start,
                    end: rows.len(),
                    rate,
                });
            } else {
                run.written(out, meta);
                out.push(b',');
                out.extend_from_slice(head(meta, p));
                rates.numbers(out, cells);
                out.extend_from_slice(tail(meta, p));
            }
        });
        let end = run.finish(out, meta);
        order_by_rate(spans, order);
        // the busy rows, joined by commas, after the section's start
        for (k, s) in order.iter().filter_map(|&i| spans.get(i)).enumerate() {
            if k > 0 {
                pre.push(b',');
            }
            pre.extend_from_slice(rows.get(s.start..s.end).unwrap_or_default());
        }
        if !order.is_empty() && end > run.at {
            pre.push(b',');
        }
        // the start and the busy rows written in front of the idle rows
        // (without the first one's comma), which stay where they are
        let start = run.place(out, pre, end);
        out.push(b']');
        if !gone.is_empty() {
            gone_labels(out, &gone);
        }
        out.push(b'}');
        start
    }

    /// `{"cpus":[…],"rows":[{"name","counts","total","rates","total_rate"}]}`
    /// as `report::softirq_rates` serializes it, without building it.
    fn softirq_section(&mut self, o: &Softirqs, n: &Softirqs, f: &Filter, out: &mut Vec<u8>) {
        let (union, cols) = (&mut self.union, &mut self.cols);
        section_cpus(&o.cpus, &n.cpus, f, union, cols);
        section_head(out, union, cols);
        let (picked, rates) = (&mut self.picked, &mut self.rates);
        let idle = &mut self.idle;
        let mut first = true;
        let secs = rates.secs();
        delta::softirqs_delta_each_in(&mut self.delta, o, n, secs, |r, cells| {
            if !first {
                out.push(b',');
            }
            first = false;
            picked.clear();
            picked.extend(cols.iter().filter_map(|&i| cells.get(i).copied()));
            if secs > 0.0 && picked.iter().all(|c| *c == Cell::Count(0)) {
                out.extend_from_slice(b"{\"name\":");
                json_str(out, &r.name);
                out.extend_from_slice(idle.softirq(picked.len(), rates));
            } else {
                softirq_row(out, &r.name, picked, rates);
            }
        });
        out.push(b']');
        // as `show`'s section: the vectors of `o` that `n` has not
        if report::softirq_vectors_changed(o, n) {
            softirqs_gone(o, n, out);
        }
        out.push(b'}');
    }
}

/// Whether a row of `cells` over `secs` is written under `--threshold
/// min`: [`report::above_threshold`]'s rule on the row's numbers (a gap:
/// always; else a positive rate over the kept CPUs of at least `min`).
fn above_threshold(cells: &[Cell], secs: f64, min: f64) -> bool {
    if cells.iter().any(|c| matches!(c, Cell::Gap(_))) {
        return true;
    }
    let total: u64 = cells.iter().filter_map(|c| c.count()).sum();
    let rate = total as f64 / secs;
    secs > 0.0 && rate > 0.0 && rate >= min
}

/// The CPU ids of two headers merged ([`delta::union_cpus`]) into
/// `union`, and the columns of it `f` keeps ([`Filter::columns`]) into
/// `cols`, both reused.
fn section_cpus(a: &[u32], b: &[u32], f: &Filter, union: &mut Vec<u32>, cols: &mut Vec<usize>) {
    union.clear();
    if a == b {
        // the usual case: the same CPUs, already ascending
        union.extend_from_slice(a);
    }
    if a != b || !union.is_sorted_by(|x, y| x < y) {
        merge_cpus(a, b, union);
    }
    cols.clear();
    if f.cpus.is_some() {
        cols.extend((0..union.len()).filter(|&i| union.get(i).is_some_and(|&c| f.keep_cpu(c))));
    } else {
        cols.extend(0..union.len());
    }
}

/// The CPU ids of two different (or unsorted) headers, merged.
#[cold]
#[inline(never)]
fn merge_cpus(a: &[u32], b: &[u32], union: &mut Vec<u32>) {
    union.clear();
    union.extend(a.iter().chain(b));
    union.sort_unstable();
    union.dedup();
}

/// `{"cpus":[…],"rows":[`: the CPU ids of `union` kept by the filter.
fn section_head(out: &mut Vec<u8>, union: &[u32], cols: &[usize]) {
    out.extend_from_slice(b"{\"cpus\":[");
    let ids = cols.iter().filter_map(|&i| union.get(i).copied());
    for (k, id) in ids.enumerate() {
        if k > 0 {
            out.push(b',');
        }
        int(out, u64::from(id));
    }
    out.extend_from_slice(b"],\"rows\":[");
}

/// Most busy rows sorted by insertion (a handful on most machines); more
/// go through the library's sort.
const INSERTION_MAX: usize = 32;

/// The busy rows' order in the line (`spans` holds only rows with a
/// positive rate, never NaN): by rate, highest first, equal rates in file
/// order (a stable sort), without the general sort's code and buffers on
/// every sample when they are few.
fn order_by_rate(spans: &[Span], order: &mut Vec<usize>) {
    order.clear();
    order.extend(0..spans.len());
    let rate = |i: usize| spans.get(i).map_or(0.0, |s| s.rate);
    if order.len() <= INSERTION_MAX {
        for k in 1..order.len() {
            let mut j = k;
            while j > 0 && rate(order[j - 1]) < rate(order[j]) {
                order.swap(j - 1, j);
                j -= 1;
            }
        }
    } else {
        sort_by_rate(spans, order);
    }
}

/// [`order_by_rate`] for many busy rows: the library's stable sort.
#[cold]
#[inline(never)]
fn sort_by_rate(spans: &[Span], order: &mut [usize]) {
    let rate = |i: usize| spans.get(i).map_or(0.0, |s| s.rate);
    order.sort_by(|&a, &b| {
        rate(b)
            .partial_cmp(&rate(a))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
}

/// `,"gone":[…]`: the labels of the rows gone since the earlier snapshot.
#[cold]
#[inline(never)]
fn gone_labels(out: &mut Vec<u8>, gone: &[delta::RowGone]) {
    out.extend_from_slice(b",\"gone\":");
    let labels: Vec<&str> = gone.iter().map(|g| g.label.as_str()).collect();
    json(out, &labels);
}

/// `,"gone":[…]` of the softirq section when vectors of `o` are not in
/// `n` ([`report::softirqs_gone`]).
#[cold]
#[inline(never)]
fn softirqs_gone(o: &Softirqs, n: &Softirqs, out: &mut Vec<u8>) {
    let gone = report::softirqs_gone(o, n);
    if !gone.is_empty() {
        out.extend_from_slice(b",\"gone\":");
        json(out, &gone);
    }
}

/// The cached JSON of the row at `pos` built again for row `r` (that
/// position now holds a different row).
#[cold]
#[inline(never)]
fn rebuild(
    cache: &mut RowCache<Meta>,
    pos: usize,
    r: &IrqRow,
    f: &Filter,
    affinity: &mut AffinityFn,
) {
    let keep = f.keep_irq_row(r);
    let affinity = if keep {
        r.irq.and_then(&mut *affinity)
    } else {
        None
    };
    cache.set(pos, &r.label, &r.description, keep, |b| {
        let start = b.len();
        if keep {
            irq_row_json::head(b, &r.label, r.irq, None);
        }
        let head_len = b.len() - start;
        if keep {
            let actions = r.parts.actions();
            irq_row_json::tail(b, None, actions, &r.description, affinity.as_deref());
        }
        let tail_len = b.len() - start - head_len;
        Meta {
            head_at: 0,
            head_len: u32::try_from(head_len).unwrap_or(0),
            tail_len: u32::try_from(tail_len).unwrap_or(0),
            idle_cells: NO_IDLE,
        }
    });
}

/// `,"trace":{…}`: the traced figures of the tick.
#[cold]
#[inline(never)]
fn trace(out: &mut Vec<u8>, t: &TopTrace) {
    out.extend_from_slice(b",\"trace\":");
    json(out, t);
}

/// `[{"cpu":…,"user_pct":…,…}]`: the `cpu_pct` lines as serde writes
/// them (a gap line is `{"cpu":…}` alone), without its map machinery.
fn cpu_pct(out: &mut Vec<u8>, lines: &[CpuPctLine]) {
    out.push(b'[');
    for (k, l) in lines.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        super::report_json::cpu_pct_line(out, l);
    }
    out.push(b']');
}

/// `[{"pid":…,"name":…,"kind":{…},"cpu_pct":…,"last_cpu":…}]`: the
/// interrupt threads as serde writes [`ThreadCpu`].
fn threads(out: &mut Vec<u8>, threads: &[ThreadCpu]) {
    out.push(b'[');
    for (k, t) in threads.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"pid\":");
        opt_int(out, t.pid);
        out.extend_from_slice(b",\"name\":");
        json_str(out, &t.name);
        let (kind, key, n): (&[u8], &[u8], u32) = match t.kind {
            ThreadKind::Ksoftirqd { cpu } => (b"ksoftirqd", b"cpu", cpu),
            ThreadKind::IrqThread { irq } => (b"irq_thread", b"irq", irq),
        };
        out.extend_from_slice(b",\"kind\":{\"type\":\"");
        out.extend_from_slice(kind);
        out.extend_from_slice(b"\",\"");
        out.extend_from_slice(key);
        out.extend_from_slice(b"\":");
        int(out, u64::from(n));
        out.extend_from_slice(b"},\"cpu_pct\":");
        json(out, &t.cpu_pct);
        out.extend_from_slice(b",\"last_cpu\":");
        opt_int(out, t.last_cpu);
        out.push(b'}');
    }
    out.push(b']');
}

/// `{"user_ns":…,"system_ns":…,"cpu_ns":…,"wall_ns":…}`.
fn self_cost(out: &mut Vec<u8>, c: &SelfCost) {
    out.extend_from_slice(b"{\"user_ns\":");
    int(out, c.user_ns);
    out.extend_from_slice(b",\"system_ns\":");
    int(out, c.system_ns);
    out.extend_from_slice(b",\"cpu_ns\":");
    int(out, c.cpu_ns);
    out.extend_from_slice(b",\"wall_ns\":");
    int(out, c.wall_ns);
    out.push(b'}');
}

/// The strategy's JSON string, as serde writes it.
fn strategy_json(s: Strategy) -> &'static [u8] {
    match s {
        Strategy::ProcInterrupts => b"\"proc_interrupts\"",
        Strategy::PerCpuCount => b"\"per_cpu_count\"",
    }
}

fn opt_int(out: &mut Vec<u8>, v: Option<u32>) {
    match v {
        Some(v) => int(out, u64::from(v)),
        None => out.extend_from_slice(b"null"),
    }
}

/// One softirq vector: deltas (`null` = gap), total, rates, total rate
/// (`total` and `total_rate` `null` when every cell is a gap).
fn softirq_row(out: &mut Vec<u8>, name: &str, cells: &[Cell], rates: &mut CellRates) {
    let secs = rates.secs();
    out.extend_from_slice(b"{\"name\":");
    json_str(out, name);
    out.extend_from_slice(b",\"counts\":[");
    for (k, c) in cells.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        match c.count() {
            Some(v) => int(out, v),
            None => out.extend_from_slice(b"null"),
        }
    }
    let total: u64 = cells.iter().filter_map(|c| c.count()).sum();
    let no_value = total == 0 && irq_row_json::no_value(cells);
    out.extend_from_slice(b"],\"total\":");
    if no_value {
        out.extend_from_slice(b"null");
    } else {
        int(out, total);
    }
    out.extend_from_slice(b",\"rates\":[");
    rates.rates(out, cells);
    out.push(b']');
    if no_value {
        out.extend_from_slice(b",\"total_rate\":null");
    } else if secs > 0.0 {
        out.extend_from_slice(b",\"total_rate\":");
        write_rate(out, total as f64 / secs);
    }
    out.push(b'}');
}

#[cfg(test)]
#[path = "jsonl_tests.rs"]
mod tests;
