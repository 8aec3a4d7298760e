//! THE JSON encoding of one interrupts row (README, "JSON output" and
//! "JSON Lines"), written into a byte buffer with no allocation: every
//! row `show` (snapshot and `--interval`), `top --batch` and
//! `replay --batch` print goes through here.
//!
//! A row is three parts, in this order:
//! - [`head`]: `{"label":…,"irq":…` and, in `show`, `"shape"`;
//! - the numbers: [`counts_numbers`] (snapshot), [`line_rates`] (a built
//!   rates [`IrqLine`]) or [`CellRates::numbers`] (streamed from `delta`'s
//!   cells, `top`): `total`, and in rates mode `deltas` (`show`),
//!   `rates`, `total_rate`, `gaps`;
//! - [`tail`]: in `show` the description's split (`chip`, `hwirq`,
//!   `trigger`, `flow`), then `actions`, `description`, `affinity`, `}`.
//!
//! `top`'s row leaves out `shape`, `counts`, `deltas` and the split: an
//! in-order subsequence of `show`'s. [`line`](fn@line) is the whole `show` row.
//! Rates are integral values as integers, others rounded to 0.001
//! ([`write_rate`]); integers are formatted by hand (one `memcpy` per number
//! through `serde_json` was the largest share of `show --format json`).
//! Owns only formatting: numbers come from `report` and `delta`.

use crate::report::IrqLine;
use irqlab_core::delta::{Cell, Gap};
use irqlab_core::Shape;
use serde::Serialize;

/// The description's best-effort split, as `show` prints it.
#[derive(Clone, Copy)]
pub struct Split<'a> {
    pub chip: Option<&'a str>,
    pub hwirq: Option<i64>,
    pub trigger: Option<&'a str>,
    pub flow: Option<&'a str>,
}

/// `{"label":…,"irq":…` and `,"shape":…` when given.
pub fn head(out: &mut Vec<u8>, label: &str, irq: Option<u32>, shape: Option<Shape>) {
    out.extend_from_slice(b"{\"label\":");
    json_str(out, label);
    out.extend_from_slice(b",\"irq\":");
    match irq {
        Some(v) => push_u64(out, u64::from(v)),
        None => out.extend_from_slice(b"null"),
    }
    if let Some(shape) = shape {
        out.extend_from_slice(b",\"shape\":");
        json(out, &shape);
    }
}

/// `,"chip":…,"hwirq":…,"trigger":…,"flow":…` when `split` is given,
/// then `,"actions":[…],"description":…`, `,"affinity":…` when known, `}`.
pub fn tail<'s>(
    out: &mut Vec<u8>,
    split: Option<Split>,
    actions: impl IntoIterator<Item = &'s str>,
    description: &str,
    affinity: Option<&str>,
) {
    if let Some(s) = split {
        out.extend_from_slice(b",\"chip\":");
        opt_str(out, s.chip);
        out.extend_from_slice(b",\"hwirq\":");
        match s.hwirq {
            Some(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"trigger\":");
        opt_str(out, s.trigger);
        out.extend_from_slice(b",\"flow\":");
        opt_str(out, s.flow);
    }
    out.extend_from_slice(b",\"actions\":[");
    for (k, a) in actions.into_iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        json_str(out, a);
    }
    out.extend_from_slice(b"],\"description\":");
    json_str(out, description);
    if let Some(a) = affinity {
        out.extend_from_slice(b",\"affinity\":");
        json_str(out, a);
    }
    out.push(b'}');
}

/// `show`'s whole row: snapshot mode (`counts`, `total`) or rates mode
/// (`counts`, `total`, then `deltas`, `rates`, `total_rate`, `gaps` where
/// the line has them).
pub fn line(out: &mut Vec<u8>, l: &IrqLine) {
    head(out, &l.label, l.irq, Some(l.shape));
    counts_numbers(out, l.counts.as_deref(), (!l.no_value()).then_some(l.total));
    line_rates(out, l);
    let split = Split {
        chip: l.chip.as_deref(),
        hwirq: l.hwirq,
        trigger: l.trigger.as_deref(),
        flow: l.flow.as_deref(),
    };
    let actions = l.actions.iter().map(String::as_str);
    tail(
        out,
        Some(split),
        actions,
        &l.description,
        l.affinity.as_deref(),
    );
}

/// `head` (a key and its opening bracket), then `items` written by
/// `put` (a missing one as `null`), comma-separated, and the closing `]`.
fn opt_array<T: Copy>(
    out: &mut Vec<u8>,
    head: &[u8],
    items: &[Option<T>],
    put: fn(&mut Vec<u8>, T),
) {
    out.extend_from_slice(head);
    for (k, v) in items.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        match v {
            Some(v) => put(out, *v),
            None => out.extend_from_slice(b"null"),
        }
    }
    out.push(b']');
}

/// `,"counts":[…]` (or `null`) and `,"total":…` (`null`: a row with no
/// value over the interval).
pub fn counts_numbers(out: &mut Vec<u8>, counts: Option<&[u64]>, total: Option<u64>) {
    out.extend_from_slice(b",\"counts\":");
    match counts {
        Some(c) => counts_array(out, c),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"total\":");
    match total {
        Some(t) => push_u64(out, t),
        None => out.extend_from_slice(b"null"),
    }
}

/// The rates-mode fields a built line has, each only when present:
/// `,"deltas":[…],"rates":[…],"total_rate":…,"gaps":[…]`.
pub fn line_rates(out: &mut Vec<u8>, l: &IrqLine) {
    if let Some(d) = &l.deltas {
        opt_array(out, b",\"deltas\":[", d, push_u64);
    }
    if let Some(r) = &l.rates {
        opt_array(out, b",\"rates\":[", r, write_rate);
    }
    match l.total_rate {
        Some(tr) => {
            out.extend_from_slice(b",\"total_rate\":");
            write_rate(out, tr);
        }
        None if l.no_value() => out.extend_from_slice(b",\"total_rate\":null"),
        None => {}
    }
    if let Some(g) = &l.gaps {
        gaps(out, g.iter().copied());
    }
}

/// `,"gaps":[…]`: one `null` or gap per cell.
fn gaps(out: &mut Vec<u8>, cells: impl Iterator<Item = Option<Gap>>) {
    out.extend_from_slice(b",\"gaps\":[");
    for (k, g) in cells.enumerate() {
        if k > 0 {
            out.push(b',');
        }
        match g {
            Some(g) => json(out, &g),
            None => out.extend_from_slice(b"null"),
        }
    }
    out.push(b']');
}

/// The numbers of `top`'s rows streamed from `delta`'s cells, with what
/// one line's rows share: the formatted rates of counts already seen, and
/// a ready-made `0,0,…` run for idle rows.
#[derive(Default)]
pub struct CellRates {
    memo: RateMemo,
    /// `0,0,0,…`: the rates of an idle row, copied in one go.
    zeros: Vec<u8>,
    /// Where [`cell_rates`] formats a run of cells before one copy into
    /// the line: kept across rows, so no row pays for zeroing it.
    scratch: Scratch,
}

/// [`cell_rates`]' staging buffer (allocated once per writer).
struct Scratch(Box<[u8; SCRATCH]>);

/// Bytes of [`Scratch`].
const SCRATCH: usize = 4096;

impl Default for Scratch {
    fn default() -> Self {
        Scratch(Box::new([0; SCRATCH]))
    }
}

impl CellRates {
    /// A new line over `secs` seconds.
    pub fn start(&mut self, secs: f64) {
        self.memo.start(secs);
    }

    /// Idle rows of up to `cells` cells are one copy.
    pub fn reserve_idle(&mut self, cells: usize) {
        let have = self.zeros.len().div_ceil(2);
        if cells > have {
            self.zeros.clear();
            self.zeros
                .extend(std::iter::repeat_n(*b"0,", cells).flatten());
            self.zeros.pop();
        }
    }

    /// The interval of the current line.
    pub fn secs(&self) -> f64 {
        self.memo.secs
    }

    /// `,"total":…,"rates":[…]`, `,"total_rate":…` when the interval is
    /// positive, `,"gaps":[…]` when a cell is a gap; `total` and
    /// `total_rate` are `null` when every cell is a gap (whatever the
    /// interval). Returns the total rate (0 without one): `top`'s sort key.
    pub fn numbers(&mut self, out: &mut Vec<u8>, cells: &[Cell]) -> f64 {
        let secs = self.memo.secs;
        let total: u64 = cells.iter().filter_map(|c| c.count()).sum();
        let no_value = total == 0 && no_value(cells);
        out.extend_from_slice(b",\"total\":");
        if no_value {
            out.extend_from_slice(b"null");
        } else {
            push_u64(out, total);
        }
        out.extend_from_slice(b",\"rates\":[");
        let idle = secs > 0.0 && total == 0 && cells.iter().all(|c| *c == Cell::Count(0));
        match self.zeros.get(..(2 * cells.len()).saturating_sub(1)) {
            Some(run) if idle => out.extend_from_slice(run),
            _ => cell_rates(out, cells, &mut self.memo, &mut self.scratch.0),
        }
        out.push(b']');
        let total_rate = (secs > 0.0 && !no_value).then(|| total as f64 / secs);
        if let Some(tr) = total_rate {
            out.extend_from_slice(b",\"total_rate\":");
            write_rate(out, tr);
        } else if no_value {
            out.extend_from_slice(b",\"total_rate\":null");
        }
        if cells.iter().any(|c| matches!(c, Cell::Gap(_))) {
            gaps(
                out,
                cells.iter().map(|c| match c {
                    Cell::Gap(g) => Some(*g),
                    Cell::Count(_) => None,
                }),
            );
        }
        total_rate.unwrap_or(0.0)
    }

    /// The per-CPU rates of a softirq row (`top`'s line writes softirqs
    /// with the same formatter).
    pub fn rates(&mut self, out: &mut Vec<u8>, cells: &[Cell]) {
        cell_rates(out, cells, &mut self.memo, &mut self.scratch.0);
    }
}

/// Whether no cell has a value (all are gaps; an empty row has values:
/// [`report::has_value`](crate::report::has_value)).
pub fn no_value(cells: &[Cell]) -> bool {
    !crate::report::has_value(cells.iter().map(|c| matches!(c, Cell::Count(_))))
}

/// The per-CPU rates of one row, formatted through the reused staging
/// buffer `buf` with digits written in place (no call per cell): 1.2
/// million cells per line on a 1152-CPU machine.
fn cell_rates(rows: &mut Vec<u8>, cells: &[Cell], memo: &mut RateMemo, buf: &mut [u8; SCRATCH]) {
    let secs = memo.secs;
    const ROOM: usize = 40; // one cell: 16 digits, a comma and slack
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

/// A rate exactly as the JSON contract prints it: integral values below
/// 2^53 as integers, others rounded to 0.001 and printed shortest
/// (`12.5`, `0.125`, `3.0`), non-finite as `null`.
pub fn write_rate(out: &mut Vec<u8>, v: f64) {
    // the whole block appended, then cut to length: a copy of constant
    // size made in place, not a `memcpy` call per value
    let mut buf = [0u8; 24];
    match put_rate(&mut buf, v) {
        Some(n) => {
            let at = out.len();
            out.extend_from_slice(&buf);
            out.truncate(at + n);
        }
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
    /// Cells formatted through the table in the current line.
    puts: usize,
}

#[derive(Clone, Copy)]
struct Slot {
    count: u64,
    /// The [`RateMemo::epoch`] the slot was filled in (0: never).
    epoch: u64,
    len: usize,
    text: [u8; 24],
}

/// Most slots of the table (48 KiB). The table starts empty and grows
/// while a line formats more cells than it has slots (a power of two at
/// or above that count, from [`FEW_SLOTS`]): a short run on a small
/// machine does not fill 48 KiB it never looks at, and once a line of the
/// largest size was written the table no longer changes.
const SLOTS: usize = 1024;
/// The table's first size.
const FEW_SLOTS: usize = 16;
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
            slots: Vec::new(),
            puts: 0,
        }
    }
}

impl RateMemo {
    /// A new line over `secs`: rates of another interval become stale.
    fn start(&mut self, secs: f64) {
        self.puts = 0;
        if self.secs.to_bits() != secs.to_bits() {
            self.secs = secs;
            self.epoch += 1;
        }
    }

    /// The rate of `count` over `secs` at the start of `dst` (≥ 24 bytes);
    /// `None` when it needs float formatting (see [`put_rate`]).
    fn put(&mut self, dst: &mut [u8], count: u64) -> Option<usize> {
        self.puts += 1;
        if self.puts > self.slots.len() && self.slots.len() < SLOTS {
            // a cleared table: the old slots sit under other indexes now
            let want = self.puts.max(FEW_SLOTS).next_power_of_two().min(SLOTS);
            self.slots.clear();
            self.slots.resize(want, EMPTY);
        }
        // the length is a power of two
        let mask = (self.slots.len() as u64).wrapping_sub(1);
        let slot = self.slots.get_mut((count & mask) as usize)?;
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

/// `[c0,c1,…]`, reserving the worst case once. Runs of zeros (most cells
/// of a big machine's rows) are copied from [`ZEROS`] a block at a time.
fn counts_array(out: &mut Vec<u8>, c: &[u64]) {
    out.reserve(c.len() * (MAX_DIGITS + 1) + 2);
    out.push(b'[');
    let mut i = 0;
    while let Some(&v) = c.get(i) {
        if v != 0 {
            if i > 0 {
                out.push(b',');
            }
            push_u64(out, v);
            i += 1;
            continue;
        }
        let run = c[i..].iter().take_while(|&&v| v == 0).count();
        // ",0" per zero; the row's first value has no comma
        let mut bytes = 2 * run;
        let mut from = 0;
        if i == 0 {
            (bytes, from) = (bytes - 1, 1);
        }
        while bytes > 0 {
            let k = bytes.min(ZEROS.len() - from);
            out.extend_from_slice(&ZEROS[from..from + k]);
            (bytes, from) = (bytes - k, 0);
        }
        i += run;
    }
    out.push(b']');
}

/// 64 zeros, each with its comma.
const ZEROS: &[u8; 128] = b",0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\
,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0";

const MAX_DIGITS: usize = 20;

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

/// Appends the decimal digits of `v`: written into a fixed 20-byte block
/// (a copy of constant size, no `memcpy` call), then cut to length.
#[inline]
pub fn push_u64(out: &mut Vec<u8>, v: u64) {
    if v < 10 {
        out.push(b'0' + v as u8);
        return;
    }
    let mut buf = [0u8; MAX_DIGITS];
    let len = put_u64(&mut buf, v);
    let at = out.len();
    out.extend_from_slice(&buf);
    out.truncate(at + len);
}

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

fn opt_str(out: &mut Vec<u8>, v: Option<&str>) {
    match v {
        Some(s) => json_str(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// A string as JSON: in quotes as it is when every byte is printable
/// ASCII other than `"` and `\\` (labels, chips, device names: what
/// serde_json writes for them too), else by serde_json.
pub(crate) fn json_str(out: &mut Vec<u8>, s: &str) {
    // every byte looked at (no early exit): sixteen at a time in vector
    // registers, not one compare-and-branch per byte
    if s.bytes().fold(true, |ok, c| {
        ok & (0x20..0x7f).contains(&c) & (c != b'"') & (c != b'\\')
    }) {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        json(out, s);
    }
}

/// serde_json into a byte buffer (strings, shapes, gaps, floats); these
/// values cannot fail to serialize, but a failure would still leave valid
/// JSON (`null`).
pub(crate) fn json<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    let mark = out.len();
    if serde_json::to_writer(&mut *out, v).is_err() {
        out.truncate(mark);
        out.extend_from_slice(b"null");
    }
}

/// The reference the encoder is tested against: the model's rows and
/// section rendered by serde_json (field order, omissions and the rate
/// rule of the JSON contract).
#[cfg(test)]
pub(crate) mod reference {
    use crate::report::{ser_rates, ser_total_rate, IrqLine, IrqSection};
    use crate::report::{Report, SoftirqSection, StatSection};
    use irqlab_core::delta;
    use irqlab_core::Shape;
    use serde::Serialize;

    /// `show`'s whole document.
    #[derive(Serialize)]
    pub struct Doc<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub interval_s: Option<f64>,
        pub interrupts: Option<Section<'a>>,
        pub softirqs: &'a Option<SoftirqSection>,
        pub stat: &'a Option<StatSection>,
    }

    impl<'a> Doc<'a> {
        pub fn of(r: &'a Report) -> Self {
            Doc {
                interval_s: r.interval_s,
                interrupts: r.interrupts.as_ref().map(Section::of),
                softirqs: &r.softirqs,
                stat: &r.stat,
            }
        }
    }

    #[derive(Serialize)]
    pub struct Section<'a> {
        pub cpus: &'a [u32],
        pub rows: Vec<Line<'a>>,
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        pub gone: &'a [String],
    }

    impl<'a> Section<'a> {
        pub fn of(s: &'a IrqSection) -> Self {
            Section {
                cpus: &s.cpus,
                rows: s.rows.iter().map(Line::of).collect(),
                gone: &s.gone,
            }
        }
    }

    #[derive(Serialize)]
    pub struct Line<'a> {
        pub label: &'a str,
        pub irq: Option<u32>,
        pub shape: Shape,
        pub counts: &'a Option<Vec<u64>>,
        pub total: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub deltas: &'a Option<Vec<Option<u64>>>,
        #[serde(skip_serializing_if = "Option::is_none", serialize_with = "rates")]
        pub rates: &'a Option<Vec<Option<f64>>>,
        /// `Some(None)`: null (a row with no value), `None`: absent.
        #[serde(skip_serializing_if = "Option::is_none", serialize_with = "total")]
        pub total_rate: Option<Option<f64>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub gaps: &'a Option<Vec<Option<delta::Gap>>>,
        pub chip: &'a Option<String>,
        pub hwirq: Option<i64>,
        pub trigger: &'a Option<String>,
        pub flow: &'a Option<String>,
        pub actions: &'a [String],
        pub description: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub affinity: &'a Option<String>,
    }

    fn rates<S: serde::Serializer>(v: &&Option<Vec<Option<f64>>>, s: S) -> Result<S::Ok, S::Error> {
        ser_rates(v, s)
    }

    fn total<S: serde::Serializer>(v: &Option<Option<f64>>, s: S) -> Result<S::Ok, S::Error> {
        ser_total_rate(&v.flatten(), s)
    }

    impl<'a> Line<'a> {
        pub fn of(l: &'a IrqLine) -> Self {
            Line {
                label: &l.label,
                irq: l.irq,
                shape: l.shape,
                counts: &l.counts,
                total: (!l.no_value()).then_some(l.total),
                deltas: &l.deltas,
                rates: &l.rates,
                total_rate: match l.total_rate {
                    Some(r) => Some(Some(r)),
                    None => l.no_value().then_some(None),
                },
                gaps: &l.gaps,
                chip: &l.chip,
                hwirq: l.hwirq,
                trigger: &l.trigger,
                flow: &l.flow,
                actions: &l.actions,
                description: &l.description,
                affinity: &l.affinity,
            }
        }
    }
}

#[cfg(test)]
#[path = "irq_row_json_tests.rs"]
mod tests;
