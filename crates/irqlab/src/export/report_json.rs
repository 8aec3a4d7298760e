//! `show --format json`: the report as one JSON document (README, "JSON
//! output"), compact (scripts, pipes: a fifth of the bytes on a big
//! machine) or indented for people (`show` on a terminal, `--pretty`).
//! Interrupt rows are written by [`irq_row_json`],
//! the other sections by serde; the indented form is the compact one
//! re-indented as it is written (`Pretty`: `serde_json`'s pretty layout).

use super::irq_row_json;
use crate::report::{
    CpuPctLine, IrqLine, IrqSection, RateRows, Report, SoftirqSection, StatSection,
};
use irqlab_core::CountSink;
use std::io::Write;

/// Write `report` as one JSON document and a newline, indented when
/// `pretty`. Write errors stay `io::Error`s (a closed stdout is recognised
/// by `main`).
pub fn write(report: &Report, out: &mut impl Write, pretty: bool) -> anyhow::Result<()> {
    document(out, pretty, report, |w, row| match &report.interrupts {
        Some(s) => section(w, row, s),
        None => w.write_all(b"null"),
    })
}

/// The rates document of `show --interval`, the same bytes as [`write()`]
/// of the [`rates`](fn@crate::report::rates) report with per-CPU deltas,
/// but with the interrupt rows built and written one at a time from
/// `rows`: `rest` gives the other sections and the interval, `keep`
/// decides whether a row is written (`--threshold`), `affinity` gives each
/// numbered row's affinity.
pub fn write_rate_rows(
    rest: &Report,
    rows: Option<&RateRows>,
    keep: &dyn Fn(&IrqLine) -> bool,
    affinity: &dyn Fn(u32) -> Option<String>,
    out: &mut impl Write,
    pretty: bool,
) -> anyhow::Result<()> {
    document(out, pretty, rest, |w, row| {
        let Some(rows) = rows else {
            return w.write_all(b"null");
        };
        w.write_all(b"{\"cpus\":")?;
        serde_json::to_writer(&mut *w, &rows.cpus())?;
        w.write_all(b",\"rows\":[")?;
        let mut first = true;
        let gone = rows.for_each(|mut l| {
            if !keep(&l) {
                return Ok(());
            }
            l.affinity = l.irq.and_then(affinity);
            one_row(w, row, &l, first)?;
            first = false;
            Ok::<_, std::io::Error>(())
        })?;
        section_end(w, &gone)
    })
}

/// `{"interval_s":…,"interrupts":…,"softirqs":…,"stat":…}` and a newline,
/// the interrupts section written by `interrupts` (given the output and a
/// reusable row buffer).
fn document(
    out: &mut impl Write,
    pretty: bool,
    r: &Report,
    interrupts: impl FnOnce(&mut dyn Write, &mut Vec<u8>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let mut pretty_out;
    let w: &mut dyn Write = if pretty {
        pretty_out = Pretty::new(&mut *out);
        &mut pretty_out
    } else {
        &mut *out
    };
    let mut row = Vec::new();
    w.write_all(b"{")?;
    if let Some(s) = r.interval_s {
        w.write_all(b"\"interval_s\":")?;
        serde_json::to_writer(&mut *w, &s).map_err(std::io::Error::from)?;
        w.write_all(b",")?;
    }
    w.write_all(b"\"interrupts\":")?;
    interrupts(&mut *w, &mut row)?;
    w.write_all(b",\"softirqs\":")?;
    softirqs(&mut *w, r.softirqs.as_ref())?;
    w.write_all(b",\"stat\":")?;
    stat(&mut *w, r.stat.as_ref())?;
    w.write_all(b"}")?;
    w.flush()?;
    writeln!(out)?;
    Ok(())
}

/// One `cpu_pct` line as serde writes `CpuPctLine`: `{"cpu":…,
/// "user_pct":…,…}`, a gap line `{"cpu":…}` alone; shares as rates are
/// written ([`irq_row_json::write_rate`]: integral values as integers,
/// others rounded to 0.001, `null` when not finite). `show`'s document and
/// `top --batch`'s lines both write it here.
pub(crate) fn cpu_pct_line(out: &mut Vec<u8>, l: &CpuPctLine) {
    out.extend_from_slice(b"{\"cpu\":");
    match l.cpu {
        Some(c) => irq_row_json::push_u64(out, u64::from(c)),
        None => out.extend_from_slice(b"null"),
    }
    if let Some(p) = &l.pct {
        // one statement per key: each copy is of a constant length, made
        // in place (in a loop over the keys each was a `memcpy` call: ten
        // thousand of them on 1152 CPUs)
        out.extend_from_slice(b",\"user_pct\":");
        irq_row_json::write_rate(out, p.user_pct);
        out.extend_from_slice(b",\"nice_pct\":");
        irq_row_json::write_rate(out, p.nice_pct);
        out.extend_from_slice(b",\"system_pct\":");
        irq_row_json::write_rate(out, p.system_pct);
        out.extend_from_slice(b",\"idle_pct\":");
        irq_row_json::write_rate(out, p.idle_pct);
        out.extend_from_slice(b",\"iowait_pct\":");
        irq_row_json::write_rate(out, p.iowait_pct);
        out.extend_from_slice(b",\"irq_pct\":");
        irq_row_json::write_rate(out, p.irq_pct);
        out.extend_from_slice(b",\"softirq_pct\":");
        irq_row_json::write_rate(out, p.softirq_pct);
        out.extend_from_slice(b",\"steal_pct\":");
        irq_row_json::write_rate(out, p.steal_pct);
    }
    out.push(b'}');
}

/// The softirqs section (`null` when absent), the bytes of
/// `SoftirqSection`'s serde form (tested equal), each count written by
/// `irq_row_json::push_u64` into one reused row buffer instead of serde's
/// several small writes per count to `w` (11 520 counts on 1152 CPUs). A
/// row with rates (`show --interval`) is serde's.
pub fn softirqs(w: &mut dyn Write, s: Option<&SoftirqSection>) -> std::io::Result<()> {
    let Some(s) = s else {
        return w.write_all(b"null");
    };
    let mut line = Vec::with_capacity(16 * 1024);
    line.extend_from_slice(b"{\"cpus\":[");
    for (k, &c) in s.cpus.iter().enumerate() {
        if k > 0 {
            line.push(b',');
        }
        irq_row_json::push_u64(&mut line, u64::from(c));
    }
    line.extend_from_slice(b"],\"rows\":[");
    for (k, r) in s.rows.iter().enumerate() {
        if k > 0 {
            line.push(b',');
        }
        if r.rates.is_some() || r.total_rate.is_some() || r.total.is_none() {
            serde_json::to_writer(&mut line, r)?;
        } else {
            line.extend_from_slice(b"{\"name\":");
            irq_row_json::json_str(&mut line, &r.name);
            line.extend_from_slice(b",\"counts\":[");
            for (i, v) in r.counts.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                match v {
                    Some(v) => irq_row_json::push_u64(&mut line, *v),
                    None => line.extend_from_slice(b"null"),
                }
            }
            line.extend_from_slice(b"],\"total\":");
            irq_row_json::push_u64(&mut line, r.total.unwrap_or_default());
            line.push(b'}');
        }
        w.write_all(&line)?;
        line.clear();
    }
    w.write_all(&line)?;
    section_end(w, &s.gone)
}

/// The stat section (`null` when absent), the bytes of `StatSection`'s
/// serde form (tested equal) without serde's flattening and per-key
/// escaping: a 1152-CPU machine has ten thousand keys and shares in it.
/// Shares are written as `cpu_pct_line` writes them, one CPU line at a
/// time through a reused buffer.
pub fn stat(w: &mut dyn Write, s: Option<&StatSection>) -> std::io::Result<()> {
    let Some(s) = s else {
        return w.write_all(b"null");
    };
    let mut line = Vec::with_capacity(512);
    w.write_all(b"{\"cpu_pct\":[")?;
    for (k, l) in s.cpu_pct.iter().enumerate() {
        line.clear();
        if k > 0 {
            line.push(b',');
        }
        cpu_pct_line(&mut line, l);
        w.write_all(&line)?;
    }
    line.clear();
    line.push(b']');
    if let Some(cpus) = &s.aggregate_cpus {
        line.extend_from_slice(b",\"aggregate_cpus\":");
        serde_json::to_writer(&mut line, cpus)?;
    }
    let counters = [
        ("ctxt", s.ctxt),
        ("btime", s.btime),
        ("processes", s.processes),
        ("procs_running", s.procs_running),
        ("procs_blocked", s.procs_blocked),
        ("intr_total", Some(s.intr_total)),
        ("softirq_total", s.softirq_total),
    ];
    for (key, v) in counters {
        if let Some(v) = v {
            line.extend_from_slice(b",\"");
            line.extend_from_slice(key.as_bytes());
            line.extend_from_slice(b"\":");
            line.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        }
    }
    line.push(b'}');
    w.write_all(&line)
}

/// Marks a run in [`HeldRows`]: never a byte of UTF-8 text.
const RUN: u8 = 0xff;
/// The run held as a count: eight `0,` (shorter ones stay text).
const ZEROS: &[u8; 16] = b"0,0,0,0,0,0,0,0,";
/// A run whose count has this bit is a row's affinity slot (its low bits),
/// not zeros.
const SLOT: u64 = 1 << 63;
/// Size of one held chunk.
const HELD_CHUNK: usize = 256 << 10;

/// JSON rows held until the document is complete (so that an error found
/// later prints nothing), written out as the same bytes. A run of eight
/// or more `0,` — most per-CPU counts of a big machine's device rows, each
/// of which fires on a few CPUs — is held as its length: a 1152-CPU
/// document of 3 MB is held in a few hundred KB of fresh pages.
///
/// Held form: the text, except that `RUN` and a little-endian u64 `n`
/// stand for `n` times `0,`, or for one `RUN` byte when `n` is 0, or,
/// with the `SLOT` bit, for a row's affinity slot.
#[derive(Debug, Default)]
pub struct HeldRows {
    done: Vec<Vec<u8>>,
    cur: Vec<u8>,
    /// The held form of the last text, before it is copied into `cur`.
    scratch: Vec<u8>,
    /// Finds [`ZEROS`] in a text held by [`HeldRows::push`]: built once,
    /// on the first such text (building is dearer than a search, and it
    /// makes `memchr` probe the CPU's features, which the rows held by
    /// [`HeldRows::push_counted`] never need).
    runs: Option<memchr::memmem::Finder<'static>>,
}

impl HeldRows {
    /// Nothing held yet.
    pub fn is_empty(&self) -> bool {
        self.done.is_empty() && self.cur.is_empty()
    }

    /// Hold `text` (after what is held).
    pub fn push(&mut self, text: &[u8]) {
        self.push_slotted(text, None);
    }

    /// Hold `text`, a row that ends in `}`, with a slot before that `}`:
    /// [`HeldRows::write_to`] writes `,"affinity":…` there when its
    /// `affinity` has a value at `slot` (so that rows can be held before
    /// their affinity is read, all of it in one batch).
    pub fn push_with_affinity(&mut self, text: &[u8], slot: usize) {
        self.push_slotted(text, Some(slot));
    }

    /// Hold a row made of the text `before`, `counts` (already in held
    /// form: [`HeldCounts::array`]) and the text `after`, which ends in
    /// `}`; with a slot for its affinity before that `}` when `slot` is
    /// given (see [`HeldRows::push_with_affinity`]).
    pub fn push_parts(&mut self, before: &[u8], counts: &[u8], after: &[u8], slot: Option<usize>) {
        let (after, close) = slotted(after, slot);
        let mut enc = std::mem::take(&mut self.scratch);
        enc.clear();
        held_text(&mut enc, before);
        enc.extend_from_slice(counts);
        held_text(&mut enc, after);
        if let Some(k) = close {
            run(&mut enc, SLOT | k as u64);
            enc.push(b'}');
        }
        self.hold(&enc);
        self.scratch = enc;
    }

    /// [`HeldRows::push_parts`] with the counts array taken from `counts`
    /// (`null` when `None`), the row written straight into the held
    /// chunk: no copy of it made first.
    pub fn push_counted(
        &mut self,
        before: &[u8],
        counts: Option<&HeldCounts>,
        after: &[u8],
        slot: Option<usize>,
    ) {
        if has_run_byte(before) || has_run_byte(after) {
            let mut array = Vec::new();
            match counts {
                Some(c) => c.array(&mut array),
                None => array.extend_from_slice(b"null"),
            }
            return self.push_parts(before, &array, after, slot);
        }
        let (after, close) = slotted(after, slot);
        let counts_len = counts.map_or(4, HeldCounts::array_len_bound);
        self.room(before.len() + counts_len + after.len() + 10);
        let cur = &mut self.cur;
        cur.extend_from_slice(before);
        match counts {
            Some(c) => c.push_array(cur),
            None => cur.extend_from_slice(b"null"),
        }
        cur.extend_from_slice(after);
        if let Some(k) = close {
            run(cur, SLOT | k as u64);
            cur.push(b'}');
        }
    }

    fn push_slotted(&mut self, text: &[u8], slot: Option<usize>) {
        let (text, close) = slotted(text, slot);
        let mut enc = std::mem::take(&mut self.scratch);
        enc.clear();
        let runs = self
            .runs
            .get_or_insert_with(|| memchr::memmem::Finder::new(ZEROS));
        let mut lit = 0;
        while let Some(i) = text.get(lit..).and_then(|t| runs.find(t)).map(|i| lit + i) {
            let mut end = i + ZEROS.len();
            while text.get(end..end + 8) == Some(&ZEROS[..8]) {
                end += 8;
            }
            while text.get(end..end + 2) == Some(&ZEROS[..2]) {
                end += 2;
            }
            held_text(&mut enc, text.get(lit..i).unwrap_or_default());
            run(&mut enc, (end - i) as u64 / 2);
            lit = end;
        }
        held_text(&mut enc, text.get(lit..).unwrap_or_default());
        if let Some(k) = close {
            run(&mut enc, SLOT | k as u64);
            enc.push(b'}');
        }
        self.hold(&enc);
        self.scratch = enc;
    }

    /// Append `enc` (held form) to what is held.
    fn hold(&mut self, enc: &[u8]) {
        self.room(enc.len());
        self.cur.extend_from_slice(enc);
    }

    /// Room for `len` more bytes in the current chunk, a new chunk begun
    /// if needed: a held text is never split across chunks.
    fn room(&mut self, len: usize) {
        if self.cur.capacity() - self.cur.len() < len {
            let next = Vec::with_capacity(HELD_CHUNK.max(len));
            let full = std::mem::replace(&mut self.cur, next);
            if !full.is_empty() {
                self.done.push(full);
            }
        }
    }

    /// Write the held text, in order, to `out`, each row's slot (see
    /// [`HeldRows::push_with_affinity`]) as `,"affinity":…` when
    /// `affinity` has a value there.
    pub fn write_to(
        &self,
        out: &mut impl Write,
        affinity: &[Option<String>],
    ) -> std::io::Result<()> {
        // `0,` repeated, the source of every run
        let zeros = ZEROS.repeat(256);
        let mut field = Vec::new();
        for chunk in self.done.iter().chain(std::iter::once(&self.cur)) {
            let mut rest = chunk.as_slice();
            while let Some(at) = irqlab_core::scan::find_byte_sse2(RUN, rest) {
                out.write_all(rest.get(..at).unwrap_or_default())?;
                let n = rest
                    .get(at + 1..at + 9)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map(u64::from_le_bytes)
                    .ok_or_else(|| std::io::Error::other("held JSON rows cut short"))?;
                if n & SLOT != 0 {
                    let k = usize::try_from(n & !SLOT).unwrap_or(usize::MAX);
                    if let Some(Some(a)) = affinity.get(k) {
                        field.clear();
                        field.extend_from_slice(b",\"affinity\":");
                        irq_row_json::json_str(&mut field, a.as_str());
                        out.write_all(&field)?;
                    }
                    rest = rest.get(at + 9..).unwrap_or_default();
                    continue;
                }
                if n == 0 {
                    out.write_all(&[RUN])?;
                }
                let mut bytes = usize::try_from(n)
                    .ok()
                    .and_then(|n| n.checked_mul(2))
                    .ok_or_else(|| std::io::Error::other("held JSON run too long"))?;
                while bytes > 0 {
                    let k = bytes.min(zeros.len());
                    out.write_all(zeros.get(..k).unwrap_or_default())?;
                    bytes -= k;
                }
                rest = rest.get(at + 9..).unwrap_or_default();
            }
            out.write_all(rest)?;
        }
        Ok(())
    }
}

/// The `counts` array of one interrupts row in [`HeldRows`]' held form,
/// made as the parser reads the counts (a [`CountSink`]): a count's
/// digits are copied as the file has them (the bytes `irq_row_json`
/// writes for its value, unless the token has leading zeros: then its
/// value is formatted), zeros are counted and held as runs. With the
/// row's total and the first count above 32 bits, so that the counts are
/// never stored as numbers.
#[derive(Debug, Default)]
pub struct HeldCounts {
    /// `c0,c1,…,` in held form, without the zeros not yet held.
    held: Vec<u8>,
    /// Counts read.
    n: usize,
    /// Zeros read after the last count held.
    zeros: usize,
    /// Their sum (wrapping, as `IrqRow::total`).
    total: u64,
    big: Option<u64>,
}

impl HeldCounts {
    /// The sum of the counts (wrapping).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// `[c0,c1,…]` in held form, into `out` (cleared first).
    pub fn array(&self, out: &mut Vec<u8>) {
        out.clear();
        self.push_array(out);
    }

    /// `[c0,c1,…]` in held form, after what `out` holds.
    fn push_array(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        out.extend_from_slice(&self.held);
        match self.zeros {
            0 => {
                // the last count's comma
                if self.n > 0 {
                    out.pop();
                }
            }
            z => {
                zeros(out, z - 1);
                out.push(b'0');
            }
        }
        out.push(b']');
    }

    /// Most bytes [`HeldCounts::push_array`] appends.
    fn array_len_bound(&self) -> usize {
        // brackets, the zeros not yet held (a run, or up to seven `0,`),
        // the last `0`
        self.held.len() + 2 + 16 + 1
    }

    #[inline]
    fn hold_zeros(&mut self) {
        zeros(&mut self.held, self.zeros);
        self.zeros = 0;
    }

    /// Count `v` (not 0) held: the zeros before it first.
    #[inline]
    fn counted(&mut self, v: u64) {
        self.n += 1;
        self.total = self.total.wrapping_add(v);
        if v > u64::from(u32::MAX) && self.big.is_none() {
            self.big = Some(v);
        }
    }
}

/// `n` times `0,` in held form: as a run from eight on.
#[inline]
fn zeros(out: &mut Vec<u8>, n: usize) {
    if n >= 8 {
        run(out, n as u64);
    } else {
        // a copy of constant size (no `memcpy` call), then cut to length
        let at = out.len();
        out.extend_from_slice(ZEROS);
        out.truncate(at + 2 * n);
    }
}

impl CountSink for HeldCounts {
    fn start(&mut self, _room: usize) {
        self.held.clear();
        self.n = 0;
        self.zeros = 0;
        self.total = 0;
        self.big = None;
    }

    #[inline]
    fn held(&self) -> usize {
        self.n
    }

    #[inline]
    fn push(&mut self, v: u64, digits: &[u8]) {
        if v == 0 {
            self.zeros(1);
            return;
        }
        if self.zeros > 0 {
            self.hold_zeros();
        }
        match digits.first() {
            Some(b'1'..=b'9') => self.held.extend_from_slice(digits),
            _ => irq_row_json::push_u64(&mut self.held, v),
        }
        self.held.push(b',');
        self.counted(v);
    }

    /// The digits copied as one 16-byte word, then cut to length, a comma
    /// after them: no `memcpy` call per count.
    #[inline(always)]
    fn push_run(&mut self, v: u64, run: &[u8; 16], len: usize) {
        if v == 0 || len > 15 || run[0] == b'0' {
            // zero, or leading zeros: as `push` has them
            return self.push(v, run.get(..len).unwrap_or_default());
        }
        if self.zeros > 0 {
            self.hold_zeros();
        }
        let at = self.held.len();
        self.held.extend_from_slice(run);
        if let Some(c) = self.held.get_mut(at + len) {
            *c = b',';
        }
        self.held.truncate(at + len + 1);
        self.counted(v);
    }

    #[inline]
    fn zeros(&mut self, n: usize) {
        self.zeros += n;
        self.n += n;
    }

    fn first_above_u32(&self) -> Option<u64> {
        self.big
    }
}

/// `text` without its last byte when it ends in `}` and a slot is given,
/// and the slot then (a row whose affinity goes before that `}`).
fn slotted(text: &[u8], slot: Option<usize>) -> (&[u8], Option<usize>) {
    match (slot, text.split_last()) {
        (Some(k), Some((b'}', body))) => (body, Some(k)),
        _ => (text, None),
    }
}

/// Whether `text` holds a `RUN` byte (never in UTF-8: not in a row's
/// text).
fn has_run_byte(text: &[u8]) -> bool {
    irqlab_core::scan::find_byte_sse2(RUN, text).is_some()
}

/// `text` in held form: as it is, but for a `RUN` byte (never in the
/// UTF-8 a row writer writes, held exactly all the same).
fn held_text(enc: &mut Vec<u8>, mut text: &[u8]) {
    while let Some(at) = irqlab_core::scan::find_byte_sse2(RUN, text) {
        enc.extend_from_slice(text.get(..at).unwrap_or_default());
        run(enc, 0);
        text = text.get(at + 1..).unwrap_or_default();
    }
    enc.extend_from_slice(text);
}

/// The held form of a run of `n` (see [`HeldRows`]): `RUN`, then `n`.
#[inline]
fn run(enc: &mut Vec<u8>, n: u64) {
    let mut m = [RUN; 9];
    m[1..].copy_from_slice(&n.to_le_bytes());
    enc.extend_from_slice(&m);
}

/// A built interrupts section.
fn section(w: &mut dyn Write, row: &mut Vec<u8>, s: &IrqSection) -> std::io::Result<()> {
    w.write_all(b"{\"cpus\":")?;
    serde_json::to_writer(&mut *w, &s.cpus)?;
    w.write_all(b",\"rows\":[")?;
    for (k, l) in s.rows.iter().enumerate() {
        one_row(w, row, l, k == 0)?;
    }
    section_end(w, &s.gone)
}

/// One row (after a comma unless `first`), through the reused `row`.
fn one_row(w: &mut dyn Write, row: &mut Vec<u8>, l: &IrqLine, first: bool) -> std::io::Result<()> {
    row.clear();
    if !first {
        row.push(b',');
    }
    irq_row_json::line(row, l);
    w.write_all(row)
}

/// `]`, `,"gone":[…]` when rows went away, `}`.
fn section_end(w: &mut dyn Write, gone: &[String]) -> std::io::Result<()> {
    w.write_all(b"]")?;
    if !gone.is_empty() {
        w.write_all(b",\"gone\":")?;
        serde_json::to_writer(&mut *w, gone)?;
    }
    w.write_all(b"}")
}

/// Compact JSON re-indented on its way to `inner`, byte for byte the
/// layout of `serde_json::to_writer_pretty` (two spaces, `": "`, empty
/// `{}`/`[]` kept on one line). Its input must be compact JSON (no
/// whitespace outside strings), as serde and the row encoder write it.
struct Pretty<W: Write> {
    inner: W,
    buf: Vec<u8>,
    depth: usize,
    in_str: bool,
    escape: bool,
    /// Just after `{` or `[`: a newline comes unless the container is empty.
    open: bool,
}

impl<W: Write> Pretty<W> {
    fn new(inner: W) -> Self {
        Pretty {
            inner,
            buf: Vec::new(),
            depth: 0,
            in_str: false,
            escape: false,
            open: false,
        }
    }

    fn newline(&mut self) {
        self.buf.push(b'\n');
        for _ in 0..self.depth {
            self.buf.extend_from_slice(b"  ");
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_str {
            self.buf.push(b);
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_str = false;
            }
            return;
        }
        if self.open {
            self.open = false;
            if b == b'}' || b == b']' {
                self.depth = self.depth.saturating_sub(1);
                self.buf.push(b);
                return;
            }
            self.newline();
        }
        match b {
            b'"' => {
                self.in_str = true;
                self.buf.push(b);
            }
            b'{' | b'[' => {
                self.buf.push(b);
                self.depth += 1;
                self.open = true;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                self.newline();
                self.buf.push(b);
            }
            b',' => {
                self.buf.push(b);
                self.newline();
            }
            b':' => self.buf.extend_from_slice(b": "),
            _ => self.buf.push(b),
        }
    }
}

impl<W: Write> Write for Pretty<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for &b in bytes {
            self.byte(b);
        }
        if self.buf.len() >= 1 << 16 {
            self.inner.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.write_all(&self.buf)?;
        self.buf.clear();
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn compact_and_pretty_are_the_same_document() {
        let r = Report {
            interval_s: Some(1.5),
            ..Report::default()
        };
        let (mut c, mut p) = (Vec::new(), Vec::new());
        write(&r, &mut c, false).unwrap();
        write(&r, &mut p, true).unwrap();
        let c = String::from_utf8(c).unwrap();
        let p = String::from_utf8(p).unwrap();
        assert_eq!(c.lines().count(), 1, "{c}");
        assert!(p.lines().count() > 1, "{p}");
        let cv: serde_json::Value = serde_json::from_str(&c).unwrap();
        let pv: serde_json::Value = serde_json::from_str(&p).unwrap();
        assert_eq!(cv, pv);
    }

    #[test]
    fn cpu_shares_are_rounded_as_rates() {
        use crate::report::CpuPctLine;
        use irqlab_core::delta::CpuPct;
        let line = CpuPctLine {
            cpu: Some(3),
            pct: Some(CpuPct {
                user_pct: 8.830300885365535,
                nice_pct: 0.0,
                system_pct: 1.0 / 3.0,
                idle_pct: 99.99999999999999,
                iowait_pct: 0.0005,
                irq_pct: f64::NAN,
                softirq_pct: 12.5,
                steal_pct: 0.0,
            }),
        };
        let want = "{\"cpu\":3,\"user_pct\":8.83,\"nice_pct\":0,\"system_pct\":0.333,\
                    \"idle_pct\":100.0,\"iowait_pct\":0.001,\"irq_pct\":null,\
                    \"softirq_pct\":12.5,\"steal_pct\":0}";
        let mut fast = Vec::new();
        cpu_pct_line(&mut fast, &line);
        assert_eq!(String::from_utf8(fast).unwrap(), want);
        assert_eq!(serde_json::to_string(&line).unwrap(), want);
    }

    #[test]
    fn stat_section_is_serdes_form() {
        use crate::report::CpuPctLine;
        use irqlab_core::delta::CpuPct;
        let pct = |x: f64| CpuPct {
            user_pct: x,
            nice_pct: 0.0,
            system_pct: 1.0 / 3.0,
            idle_pct: 100.0 - x,
            iowait_pct: f64::NAN,
            irq_pct: f64::INFINITY,
            softirq_pct: 1e-300,
            steal_pct: -0.0,
        };
        let full = StatSection {
            cpu_pct: vec![
                CpuPctLine {
                    cpu: None,
                    pct: Some(pct(12.5)),
                },
                CpuPctLine {
                    cpu: Some(0),
                    pct: None,
                },
                CpuPctLine {
                    cpu: Some(4_294_967_295),
                    pct: Some(pct(99.99999999999999)),
                },
            ],
            aggregate_cpus: Some(vec![0, 7]),
            ctxt: Some(1),
            btime: Some(u64::MAX),
            processes: Some(0),
            procs_running: Some(3),
            procs_blocked: Some(4),
            intr_total: 5,
            softirq_total: Some(6),
        };
        let bare = StatSection {
            cpu_pct: Vec::new(),
            aggregate_cpus: None,
            ctxt: None,
            btime: None,
            processes: None,
            procs_running: None,
            procs_blocked: None,
            intr_total: 0,
            softirq_total: None,
        };
        for s in [Some(&full), Some(&bare), None] {
            let mut got = Vec::new();
            stat(&mut got, s).unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                serde_json::to_string(&s).unwrap()
            );
        }
    }

    #[test]
    fn softirqs_section_is_serdes_form() {
        use crate::report::SoftirqLine;
        let line = |name: &str, counts: Vec<Option<u64>>| SoftirqLine {
            name: name.to_string(),
            total: Some(
                counts
                    .iter()
                    .flatten()
                    .fold(0u64, |a, v| a.wrapping_add(*v)),
            ),
            counts,
            rates: None,
            total_rate: None,
        };
        let mut rated = line("NET_RX", vec![Some(3), None]);
        rated.rates = Some(vec![Some(1.5), None]);
        rated.total_rate = Some(2.0 / 3.0);
        let mut rate_only = line("TIMER", vec![Some(0)]);
        rate_only.total_rate = Some(7.0);
        let mut no_value = line("NET_TX", vec![None, None]);
        no_value.total = None;
        no_value.rates = Some(vec![None, None]);
        let mut no_value_bare = line("BLOCK", vec![None]);
        no_value_bare.total = None;
        let full = SoftirqSection {
            gone: vec!["BLOCK_IOPOLL".into(), "odd \"gone\"".into()],
            cpus: vec![0, 1, 4_294_967_295],
            rows: vec![
                line("HI", vec![Some(0), Some(9), Some(u64::MAX)]),
                line("odd \"name\"\\ é\u{1}", vec![None, Some(10), Some(100)]),
                rated,
                rate_only,
                no_value,
                no_value_bare,
                line("", Vec::new()),
            ],
        };
        let bare = SoftirqSection {
            cpus: Vec::new(),
            rows: Vec::new(),
            gone: Vec::new(),
        };
        for s in [Some(&full), Some(&bare), None] {
            let mut got = Vec::new();
            softirqs(&mut got, s).unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                serde_json::to_string(&s).unwrap()
            );
        }
        let mut got = Vec::new();
        softirqs(&mut got, Some(&full)).unwrap();
        let got = String::from_utf8(got).unwrap();
        for row in [
            r#"{"name":"NET_TX","counts":[null,null],"total":null,"rates":[null,null],"total_rate":null}"#,
            r#"{"name":"BLOCK","counts":[null],"total":null,"total_rate":null}"#,
        ] {
            assert!(got.contains(row), "{got}");
        }
    }

    fn held(pieces: &[&[u8]]) -> (Vec<u8>, usize) {
        let mut h = HeldRows::default();
        assert!(h.is_empty());
        for p in pieces {
            h.push(p);
        }
        let mut out = Vec::new();
        h.write_to(&mut out, &[]).unwrap();
        let size = h.done.iter().map(Vec::len).sum::<usize>() + h.cur.len();
        (out, size)
    }

    /// Rows held before their affinity is read get it in their slot, the
    /// rest of the bytes unchanged (runs, RUN bytes, rows without a slot).
    #[test]
    fn held_rows_take_each_rows_affinity_in_its_slot() {
        let zeros = "0,".repeat(40);
        let row = |a: &str| format!("{{\"counts\":[{zeros}1],\"x\":\"é\"{a}}}");
        let mut h = HeldRows::default();
        h.push_with_affinity(row("").as_bytes(), 1);
        h.push(b",");
        h.push(row("").as_bytes());
        h.push(b",");
        h.push_with_affinity(row("").as_bytes(), 0);
        h.push(b",");
        h.push_with_affinity(row("").as_bytes(), 2);
        let affinity = [Some("0-3".to_string()), Some("a\"b".to_string()), None];
        let mut out = Vec::new();
        h.write_to(&mut out, &affinity).unwrap();
        let want = format!(
            "{},{},{},{}",
            row(",\"affinity\":\"a\\\"b\""),
            row(""),
            row(",\"affinity\":\"0-3\""),
            row("")
        );
        assert_eq!(String::from_utf8(out).unwrap(), want);
        // no affinity given: the rows as pushed
        let mut out = Vec::new();
        h.write_to(&mut out, &[]).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), vec![row(""); 4].join(","));
    }

    #[test]
    fn held_rows_write_back_the_same_bytes() {
        let zeros = "0,".repeat(1151);
        let row = format!("{{\"counts\":[{zeros}0],\"x\":\"10,0,0,0,0,0,0,0,0,0,\"}}");
        let (out, size) = held(&[row.as_bytes(), b",", row.as_bytes()]);
        assert_eq!(out, format!("{row},{row}").as_bytes());
        assert!(size < 200, "{size}");
        // runs at the edges, short runs, RUN bytes and the marker's own
        // bytes in the text, odd offsets
        let mut rng = irqlab_core::rng::Rng::new(9);
        let alphabet = [b'0', b',', b'0', b',', b'1', RUN, 0, b'"'];
        for _ in 0..2000 {
            let pieces: Vec<Vec<u8>> = (0..rng.next_u64() % 4)
                .map(|_| {
                    let mut p = Vec::new();
                    for _ in 0..rng.next_u64() % 60 {
                        match rng.next_u64() % 5 {
                            0 => p.extend_from_slice(&ZEROS.repeat(rng.next_u64() as usize % 5)),
                            _ => p.push(alphabet[rng.next_u64() as usize % alphabet.len()]),
                        }
                    }
                    p
                })
                .collect();
            let refs: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
            assert_eq!(held(&refs).0, pieces.concat(), "{pieces:?}");
        }
    }

    #[test]
    fn held_rows_span_chunks() {
        let big = vec![b'x'; HELD_CHUNK + 5];
        let pieces: Vec<&[u8]> = vec![b"a", &big, b"0,0,0,0,0,0,0,0,0,0", &big, b"z"];
        assert_eq!(held(&pieces).0, pieces.concat());
    }

    fn reindented(v: &serde_json::Value) -> String {
        let mut p = Pretty::new(Vec::new());
        // in odd pieces: state carries across writes
        let compact = serde_json::to_vec(v).unwrap();
        for piece in compact.chunks(3) {
            p.write_all(piece).unwrap();
        }
        p.flush().unwrap();
        String::from_utf8(p.inner).unwrap()
    }

    #[test]
    fn pretty_is_serdes_layout() {
        let v = serde_json::json!({
            "a": [], "b": {}, "c": [1, [2, {}], {"d": "x\\\"{[,:]}\" y"}],
            "e": null, "f": -1.5e300, "g": [[]], "h": "é\n"
        });
        assert_eq!(reindented(&v), serde_json::to_string_pretty(&v).unwrap());
    }

    fn any_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::Value;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec((".{0,4}", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn any_document_reindents_as_serde_pretty_prints(v in any_value()) {
            proptest::prop_assert_eq!(reindented(&v), serde_json::to_string_pretty(&v).unwrap());
        }
    }
}
