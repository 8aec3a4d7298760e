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
//! the row changes, idle rows are one copy of a ready-made `0,0,…` run, and
//! per-CPU rates are formatted by hand (integers, or 3 decimals). On a
//! 1152-CPU machine that is 1.2 million rates per line; on a small one it
//! removes the per-row allocations that made irqlab cost more than `mpstat`
//! (BENCHMARKS.md).
//!
//! With `top --trace` (and `replay` of a traced recording) the line ends
//! with a `trace` object: the [`TopTrace`] of the same tick, written as
//! part of the line.
//!
//! Owns nothing but formatting: rates come from `delta`, filtering from
//! [`Filter`], affinity and traced figures from the caller.

use crate::filter::Filter;
use crate::report;
use crate::sampler::clock::{rfc3339_utc, CostMeter};
use crate::sampler::{Frame, Strategy};
use crate::threads::ThreadCpu;
use crate::trace::top::TopTrace;
use irqlab_core::delta::{self, Cell, Gap};
use irqlab_core::{Interrupts, IrqRow, Shape, Snapshot, Softirqs};
use serde::Serialize;

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
    /// Per row position in the later snapshot.
    meta: Vec<Meta>,
    /// `0,0,0,…`: the rates of an idle row, copied in one go.
    zeros: Vec<u8>,
    picked: Vec<Cell>,
    memo: RateMemo,
    /// The live sampler's metadata epoch the cache was built in.
    epoch: u64,
}

/// Where one rendered row sits in `rows`, and its sort key.
struct Span {
    start: usize,
    end: usize,
    rate: f64,
}

/// Cached JSON of one row's fixed fields.
#[derive(Default)]
struct Meta {
    valid: bool,
    label: String,
    description: String,
    keep: bool,
    /// `{"label":…,"irq":…,"total":`
    head: Vec<u8>,
    /// `,"actions":[…],"description":…[,"affinity":…]}`
    tail: Vec<u8>,
}

impl JsonlWriter {
    /// Forget cached metadata (the filter or the affinity source changed).
    pub fn invalidate(&mut self) {
        self.meta.iter_mut().for_each(|m| m.valid = false);
    }

    /// Write the line of one live frame (with the traced figures of the
    /// same tick, if any) into `out`, replacing its content; cached
    /// metadata is dropped when the frame's IRQ set changed.
    pub fn write_frame(&mut self, frame: &mut Frame, trace: Option<&TopTrace>, out: &mut Vec<u8>) {
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
        };
        let mut affinity = |irq: u32| frame.affinity(irq);
        self.write_line(&inp, &mut affinity, out);
    }

    /// Write one line (with its newline) into `out`, replacing its content.
    pub fn write_line(&mut self, inp: &LineInput, affinity: &mut AffinityFn, out: &mut Vec<u8>) {
        let (old, new) = (inp.old, inp.new);
        let secs = new.elapsed_since(old);
        self.memo.start(secs);
        out.clear();
        out.extend_from_slice(b"{\"timestamp\":");
        json(out, &rfc3339_utc(new.wall_ns));
        out.extend_from_slice(b",\"mono_ns\":");
        int(out, new.mono_ns);
        out.extend_from_slice(b",\"interval_s\":");
        json(out, &secs);
        out.extend_from_slice(b",\"interrupts\":");
        match (&old.interrupts, &new.interrupts) {
            (Some(o), Some(n)) => self.irq_section(o, n, inp.filter, affinity, out),
            _ => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"softirqs\":");
        match (&old.softirqs, &new.softirqs) {
            (Some(o), Some(n)) => self.softirq_section(o, n, inp.filter, out),
            _ => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"cpu_pct\":");
        match (&old.stat, &new.stat) {
            (Some(o), Some(n)) => {
                let st = report::stat_section(o, n, inp.filter, Some(secs));
                json(out, &st.cpu_pct);
                // with --cpus: which CPUs the `cpu: null` line sums
                if let Some(cpus) = &st.aggregate_cpus {
                    out.extend_from_slice(b",\"aggregate_cpus\":");
                    json(out, cpus);
                }
            }
            _ => out.extend_from_slice(b"[]"),
        }
        out.extend_from_slice(b",\"threads\":");
        json(out, &inp.threads);
        out.extend_from_slice(b",\"self_cost\":");
        json(out, &inp.meter.stop());
        out.extend_from_slice(b",\"strategy\":");
        json(out, &inp.strategy);
        if let Some(t) = inp.trace {
            out.extend_from_slice(b",\"trace\":");
            json(out, t);
        }
        out.extend_from_slice(b"}\n");
    }

    fn irq_section(
        &mut self,
        o: &Interrupts,
        n: &Interrupts,
        f: &Filter,
        affinity: &mut AffinityFn,
        out: &mut Vec<u8>,
    ) {
        let union = delta::union_cpus(&o.cpus, &n.cpus);
        let cols = f.columns(&union);
        let all = cols.len() == union.len();
        self.ensure_zeros(cols.len());
        let JsonlWriter {
            rows,
            spans,
            meta,
            zeros,
            picked,
            memo,
            ..
        } = self;
        rows.clear();
        spans.clear();
        let mut pos = 0;
        let (_, gone) = delta::interrupts_delta_each(o, n, memo.secs, |r, _status, cells| {
            let m = meta_for(meta, pos, r, f, affinity);
            pos += 1;
            if !m.keep {
                return;
            }
            let cells: &[Cell] = if r.shape == Shape::PerCpu && !all {
                picked.clear();
                picked.extend(cols.iter().filter_map(|&i| cells.get(i).copied()));
                picked
            } else {
                cells
            };
            let start = rows.len();
            let rate = write_row(rows, m, cells, zeros, memo);
            spans.push(Span {
                start,
                end: rows.len(),
                rate,
            });
        });
        spans.sort_by(|a, b| {
            b.rate
                .partial_cmp(&a.rate)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        section_head(out, &union, &cols);
        for (k, s) in spans.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            out.extend_from_slice(rows.get(s.start..s.end).unwrap_or_default());
        }
        out.push(b']');
        if !gone.is_empty() {
            out.extend_from_slice(b",\"gone\":");
            let labels: Vec<&str> = gone.iter().map(|g| g.label.as_str()).collect();
            json(out, &labels);
        }
        out.push(b'}');
    }

    /// `{"cpus":[…],"rows":[{"name","counts","total","rates","total_rate"}]}`
    /// as `report::softirq_rates` serializes it, without building it.
    fn softirq_section(&mut self, o: &Softirqs, n: &Softirqs, f: &Filter, out: &mut Vec<u8>) {
        let union = delta::union_cpus(&o.cpus, &n.cpus);
        let cols = f.columns(&union);
        section_head(out, &union, &cols);
        let (picked, memo) = (&mut self.picked, &mut self.memo);
        let mut first = true;
        delta::softirqs_delta_each(o, n, memo.secs, |r, cells| {
            if !first {
                out.push(b',');
            }
            first = false;
            picked.clear();
            picked.extend(cols.iter().filter_map(|&i| cells.get(i).copied()));
            softirq_row(out, &r.name, picked, memo);
        });
        out.extend_from_slice(b"]}");
    }

    /// `zeros` holds at least `n` comma-separated zeros.
    fn ensure_zeros(&mut self, n: usize) {
        let have = self.zeros.len().div_ceil(2);
        if n > have {
            self.zeros.clear();
            self.zeros.extend(std::iter::repeat_n(*b"0,", n).flatten());
            self.zeros.pop();
        }
    }
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

/// The cached metadata of the row at `pos`, rebuilt when that position now
/// holds a different row.
fn meta_for<'m>(
    meta: &'m mut Vec<Meta>,
    pos: usize,
    r: &IrqRow,
    f: &Filter,
    affinity: &mut AffinityFn,
) -> &'m Meta {
    if meta.len() <= pos {
        meta.resize_with(pos + 1, Meta::default);
    }
    let m = &mut meta[pos];
    let same = m.valid && m.label == r.label && m.description == r.description;
    if !same {
        rebuild(m, r, f, affinity);
    }
    m
}

fn rebuild(m: &mut Meta, r: &IrqRow, f: &Filter, affinity: &mut AffinityFn) {
    m.valid = true;
    m.label.clone_from(&r.label);
    m.description.clone_from(&r.description);
    m.keep = f.keep_irq_row(r);
    m.head.clear();
    m.tail.clear();
    if !m.keep {
        return;
    }
    let h = &mut m.head;
    h.extend_from_slice(b"{\"label\":");
    json(h, &r.label);
    h.extend_from_slice(b",\"irq\":");
    json(h, &r.irq);
    h.extend_from_slice(b",\"total\":");
    let t = &mut m.tail;
    t.extend_from_slice(b",\"actions\":");
    json(t, &r.parts.actions().collect::<Vec<_>>());
    t.extend_from_slice(b",\"description\":");
    json(t, &r.description);
    if let Some(a) = r.irq.and_then(&mut *affinity) {
        t.extend_from_slice(b",\"affinity\":");
        json(t, &a);
    }
    t.push(b'}');
}

/// One softirq vector: deltas (`null` = gap), total, rates, total rate.
fn softirq_row(out: &mut Vec<u8>, name: &str, cells: &[Cell], memo: &mut RateMemo) {
    let secs = memo.secs;
    out.extend_from_slice(b"{\"name\":");
    json(out, name);
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
    out.extend_from_slice(b"],\"total\":");
    int(out, total);
    out.extend_from_slice(b",\"rates\":[");
    rates(out, cells, memo);
    out.push(b']');
    if secs > 0.0 {
        out.extend_from_slice(b",\"total_rate\":");
        write_rate(out, total as f64 / secs);
    }
    out.push(b'}');
}

/// One row object into `rows`; returns its total rate (the sort key).
fn write_row(
    rows: &mut Vec<u8>,
    m: &Meta,
    cells: &[Cell],
    zeros: &[u8],
    memo: &mut RateMemo,
) -> f64 {
    let secs = memo.secs;
    rows.extend_from_slice(&m.head);
    let total: u64 = cells.iter().filter_map(|c| c.count()).sum();
    int(rows, total);
    rows.extend_from_slice(b",\"rates\":[");
    let idle = secs > 0.0 && total == 0 && cells.iter().all(|c| *c == Cell::Count(0));
    match zeros.get(..(2 * cells.len()).saturating_sub(1)) {
        Some(run) if idle => rows.extend_from_slice(run),
        _ => rates(rows, cells, memo),
    }
    rows.push(b']');
    let total_rate = (secs > 0.0).then(|| total as f64 / secs);
    if let Some(tr) = total_rate {
        rows.extend_from_slice(b",\"total_rate\":");
        write_rate(rows, tr);
    }
    if cells.iter().any(|c| matches!(c, Cell::Gap(_))) {
        rows.extend_from_slice(b",\"gaps\":[");
        for (k, c) in cells.iter().enumerate() {
            if k > 0 {
                rows.push(b',');
            }
            match c {
                Cell::Gap(g) => json::<Gap>(rows, g),
                Cell::Count(_) => rows.extend_from_slice(b"null"),
            }
        }
        rows.push(b']');
    }
    rows.extend_from_slice(&m.tail);
    total_rate.unwrap_or(0.0)
}

/// The per-CPU rates of one row, formatted through a stack buffer with
/// digits written in place (no call per cell): 1.2 million cells per line
/// on a 1152-CPU machine.
fn rates(rows: &mut Vec<u8>, cells: &[Cell], memo: &mut RateMemo) {
    let secs = memo.secs;
    const ROOM: usize = 40; // one cell: 16 digits, a comma and slack
    let mut buf = [0u8; 4096];
    let mut n = 0;
    for (k, c) in cells.iter().enumerate() {
        if n + ROOM > buf.len() {
            rows.extend_from_slice(&buf[..n]);
            n = 0;
        }
        if k > 0 {
            buf[n] = b',';
            n += 1;
        }
        let written = match *c {
            Cell::Count(0) if secs > 0.0 => {
                buf[n] = b'0';
                Some(1)
            }
            Cell::Count(v) if secs > 0.0 => memo.put(&mut buf[n..], v),
            c => match c.rate(secs) {
                Some(v) => put_rate(&mut buf[n..], v),
                None => put_null(&mut buf[n..]),
            },
        };
        match written {
            Some(len) => n += len,
            None => {
                rows.extend_from_slice(&buf[..n]);
                n = 0;
                if let Some(v) = c.rate(secs) {
                    json(rows, &((v * 1000.0).round() / 1000.0));
                }
            }
        }
    }
    rows.extend_from_slice(&buf[..n]);
}

/// A rate exactly as `report`'s serde form prints it: integral values
/// below 2^53 as integers, others rounded to 0.001 and printed shortest
/// (`12.5`, `0.125`, `3.0`), non-finite as `null`.
pub fn write_rate(out: &mut Vec<u8>, v: f64) {
    let mut buf = [0u8; 32];
    match put_rate(&mut buf, v) {
        Some(n) => out.extend_from_slice(&buf[..n]),
        None => json(out, &((v * 1000.0).round() / 1000.0)),
    }
}

/// [`write_rate`] into the start of `dst` (≥ 24 bytes); `None` when the
/// value needs float formatting (non-integral and ≥ 10^9: serde's).
/// Below 10^9, m = round(v × 1000) is exact and its decimal is the
/// shortest round-trip form of m / 1000, so no float printing is needed.
fn put_rate(dst: &mut [u8], v: f64) -> Option<usize> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if !v.is_finite() {
        return put_null(dst);
    }
    // i64 conversions are single instructions; the range makes them exact
    if (0.0..EXACT).contains(&v) && (v as i64) as f64 == v {
        return Some(put_u64(dst, v as u64));
    }
    if !(0.0..1e9).contains(&v) {
        return None;
    }
    let x = v * 1000.0;
    let t = x as i64;
    // round half away from zero without libm: x - t is exact here
    let m = t + i64::from(x - t as f64 >= 0.5);
    Some(put_milli(dst, m.unsigned_abs()))
}

/// The formatted rates of the counts already seen in this line, in a
/// direct-mapped table keyed by the count: a line repeats the same counts
/// many times (timer ticks on every CPU, small counts on busy ones), and
/// formatting is the per-cell cost (~30 ns). Same bytes as [`put_rate`].
struct RateMemo {
    /// The interval of the current line.
    secs: f64,
    /// Number of the current interval: a slot filled under another one is
    /// stale. Bumped instead of clearing the table on every line (the
    /// interval changes by a few ns every line).
    epoch: u64,
    slots: Vec<Slot>,
}

#[derive(Clone, Copy)]
struct Slot {
    count: u64,
    /// The [`RateMemo::epoch`] the slot was filled in (0: never).
    epoch: u64,
    len: usize,
    text: [u8; 24],
}

const SLOTS: usize = 1024;
const EMPTY: Slot = Slot {
    count: 0,
    epoch: 0,
    len: 0,
    text: [0; 24],
};

impl Default for RateMemo {
    fn default() -> Self {
        RateMemo {
            secs: 0.0,
            epoch: 1,
            slots: vec![EMPTY; SLOTS],
        }
    }
}

impl RateMemo {
    /// A new line over `secs`: rates of another interval become stale.
    fn start(&mut self, secs: f64) {
        if self.secs.to_bits() != secs.to_bits() {
            self.secs = secs;
            self.epoch += 1;
        }
    }

    /// The rate of `count` over `secs` at the start of `dst` (≥ 24 bytes);
    /// `None` when it needs float formatting (see [`put_rate`]).
    fn put(&mut self, dst: &mut [u8], count: u64) -> Option<usize> {
        let slot = self.slots.get_mut((count % SLOTS as u64) as usize)?;
        if slot.epoch != self.epoch || slot.count != count {
            let mut text = [0u8; 24];
            let len = put_rate(&mut text, Cell::Count(count).rate(self.secs)?)?;
            *slot = Slot {
                count,
                epoch: self.epoch,
                len,
                text,
            };
        }
        dst.get_mut(..24)?.copy_from_slice(&slot.text);
        Some(slot.len)
    }
}

fn put_null(dst: &mut [u8]) -> Option<usize> {
    dst.get_mut(..4)?.copy_from_slice(b"null");
    Some(4)
}

/// "00" … "99".
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Fill all of `dst` with the low decimal digits of `v` (zero-padded).
fn fill_digits(dst: &mut [u8], mut v: u64) {
    let mut i = dst.len();
    while i >= 2 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        dst[i..i + 2].copy_from_slice(&PAIRS[d..d + 2]);
    }
    if i == 1 {
        dst[0] = b'0' + (v % 10) as u8;
    }
}

fn digits(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// `v` in decimal at the start of `dst`; returns the length.
fn put_u64(dst: &mut [u8], v: u64) -> usize {
    let len = digits(v);
    fill_digits(&mut dst[..len], v);
    len
}

/// `m / 1000` with 1–3 decimals, trailing zeros dropped (`12.5`, `0.005`,
/// `3.0`), at the start of `dst`; returns the length.
fn put_milli(dst: &mut [u8], m: u64) -> usize {
    let int_len = digits(m).max(4) - 3;
    fill_digits(&mut dst[..int_len], m / 1000);
    dst[int_len] = b'.';
    let frac = m % 1000;
    fill_digits(&mut dst[int_len + 1..int_len + 4], frac);
    let keep = match frac {
        f if f % 100 == 0 => 1,
        f if f % 10 == 0 => 2,
        _ => 3,
    };
    int_len + 1 + keep
}

fn int(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// serde_json into a byte buffer; these values cannot fail to serialize,
/// but a failure would still leave valid JSON (`null`).
fn json<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    let mark = out.len();
    if serde_json::to_writer(&mut *out, v).is_err() {
        out.truncate(mark);
        out.extend_from_slice(b"null");
    }
}

#[cfg(test)]
#[path = "jsonl_tests.rs"]
mod tests;
