//! `/proc/interrupts`: model and parser.
//!
//! Owns [`Interrupts`] (the parsed file) and [`IrqRow`] (one line), the
//! tokenizer that turns bytes into rows for every era (E1–E4) and
//! architecture described in docs/formats/, and [`Interrupts::parse_into`],
//! which re-parses into an existing model without allocating once the
//! buffers have grown. Columns are mapped to CPU ids by the header, never by
//! byte offset. No I/O, no panics: malformed input yields a [`ParseError`].

use crate::desc::{put, split_description, DescParts};
use crate::error::{ErrorKind, ParseError};
pub use crate::scan::counts::CountSink;
use crate::scan::{
    check_line, find_byte, is_blank, lossy_token, range_of, same_bytes, scan_u64, skip_blanks,
    trim, Scan,
};
pub use compact_str::CompactString;
use serde::Serialize;

/// Name used in errors for this file.
pub const FILE: &str = crate::paths::shown::PROC_INTERRUPTS;

/// Longest line accepted (1 MiB ≈ 95 000 CPUs); longer lines are an error.
pub const MAX_LINE: usize = 1 << 20;

/// Longest line whose text a refill keeps to recognise it unchanged at the
/// next refill (a row of ~370 CPUs); longer lines are parsed every time.
pub const KEEP_LINE_MAX: usize = 4096;

/// Counts a row holds without a heap block of its own (a host of up to
/// this many CPUs: the row's counts are in its own cache lines).
pub const INLINE_COUNTS: usize = 4;

/// A row's counts: a vector whose first [`INLINE_COUNTS`] live inline.
pub type Counts = smallvec::SmallVec<[u64; INLINE_COUNTS]>;

/// How the counts of a row relate to the header's CPU columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// One count per header CPU, aligned with [`Interrupts::cpus`].
    #[default]
    PerCpu,
    /// A single global value (x86 `ERR`/`MIS`, arm `Err`).
    Single,
    /// No counts at all (arm `FIQ:` owner line).
    NoCounts,
    /// Some other number of counts (old vendor kernels print IPI rows for
    /// possible CPUs under a header of online CPUs). Kept, not aligned.
    Irregular,
}

/// The kernel's type of a row's counts, which decides how a difference of
/// two of them is read (docs/limits.md): per-CPU counts are `unsigned int`
/// in every kernel; of the single global values only arm64's `Err`
/// (`unsigned long`) is wider. Decided from the label by [`Width::of_label`]
/// when the parser first reads a label into a row, not per sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Width {
    /// `unsigned int` or `atomic_t` (`%10u`): modulo 2^32, a value above
    /// `u32::MAX` is not a kernel value.
    #[default]
    U32,
    /// `unsigned long` of a 64-bit kernel (`%10lu`): arm64's `Err`.
    U64,
}

impl Width {
    /// The width of the counts of a row labelled `label`: 64 bits for
    /// `Err` (arm64 prints it from an `unsigned long`; arm's, 32-bit
    /// there, looks the same and is read alike), 32 for every other
    /// label: per-CPU counts, x86's `ERR` and `MIS` (`atomic_t`),
    /// LoongArch's and MIPS's `ERR` (`atomic_t`) — docs/formats/arch-rows.md.
    pub fn of_label(label: &[u8]) -> Width {
        match label {
            b"Err" => Width::U64,
            _ => Width::U32,
        }
    }
}

/// One line of `/proc/interrupts`.
///
/// String fields are kept (and reused by `parse_into`) even when empty;
/// use the accessor methods for `Option`-style access. They are
/// [`CompactString`]s (24 bytes, text up to 24 bytes inline) and the fields
/// every sample reads come first (`repr(C)`): a row of short label and
/// description and its counts sit in two or three cache lines, without a
/// heap line per string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct IrqRow {
    /// Text before the first `:`, trimmed (`"24"`, `"LOC"`, `"IPI0"`, `"I/O"`).
    pub label: CompactString,
    /// Everything after the counts, trimmed (chip, hwirq, actions or the
    /// architecture description), as printed.
    pub description: CompactString,
    /// The IRQ number when the label is a decimal number.
    pub irq: Option<u32>,
    /// How `counts` relates to the header CPUs.
    pub shape: Shape,
    /// The kernel's type of the counts ([`Width::of_label`] of `label`).
    pub width: Width,
    /// The counts in file order (per header CPU for [`Shape::PerCpu`]);
    /// up to [`INLINE_COUNTS`] held in the row itself.
    pub counts: Counts,
    /// Best-effort split of `description` for numbered rows.
    pub parts: DescParts,
}

impl IrqRow {
    /// Sum of all counts of this row.
    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &c| a.wrapping_add(c))
    }

    /// Per-CPU counts aligned with the header, or `None` for single-value,
    /// count-less and irregular rows.
    pub fn per_cpu(&self) -> Option<&[u64]> {
        (self.shape == Shape::PerCpu).then_some(self.counts.as_slice())
    }

    /// The class row an s390 sub-class row's counts are already included
    /// in (`CLK`, `[EXT] Clock Comparator`: `EXT`); see [`class_of`].
    pub fn class(&self) -> Option<&str> {
        class_of(self.irq, &self.description)
    }
}

/// The s390 class (`EXT`, `I/O`, `AIO`) an arch row with this
/// `description` is a sub-class of: the label in brackets that begins the
/// description (`"[EXT] Clock Comparator"`: `EXT`). Numbered rows and
/// other arch rows have none. A sub-class row's counts are already in its
/// class row's, so a total over both counts them twice
/// (docs/formats/arch-rows.md).
pub fn class_of(irq: Option<u32>, description: &str) -> Option<&str> {
    if irq.is_some() {
        return None;
    }
    let rest = description.strip_prefix('[')?;
    let end = rest.find(']')?;
    let class = rest.get(..end)?;
    (!class.is_empty() && !class.contains(char::is_whitespace)).then_some(class)
}

/// A parsed `/proc/interrupts`. Equality compares the header and the
/// valid rows only, not the spare rows `parse_into` keeps for reuse.
#[derive(Debug, Clone, Default)]
pub struct Interrupts {
    /// Real CPU ids of the count columns, from the header (gaps = offline).
    pub cpus: Vec<u32>,
    /// Rows in file order: a pool whose first `len` entries are valid, the
    /// rest spare rows kept for reuse by `parse_into`. Private so that no
    /// caller can shrink it under `len` or see the spare rows: use
    /// [`Interrupts::rows`], [`Interrupts::rows_mut`], [`Interrupts::push_row`]
    /// and [`Interrupts::truncate_rows`].
    rows: Vec<IrqRow>,
    /// Rows currently valid in `rows` pool (see `parse_into`).
    len: usize,
    /// The first count of a 32-bit row out of the kernel's range, if any.
    note: Option<ParseError>,
    /// The lines the valid rows were refilled from ([`Seen`]).
    seen: Seen,
}

/// The text of the last refill: its header line and each row's line, so
/// that the next refill takes a row whose line is byte for byte the same
/// under the same header as it stands instead of parsing it again (on an
/// idle host most rows do not change between samples). Valid only for
/// the rows of a refill that finished, until the rows are changed any
/// other way. The lines sit back to back in one buffer, each in a slot
/// that a changed line of the same length (the kernel pads its counts to
/// a fixed width) overwrites in place.
#[derive(Debug, Clone, Default)]
struct Seen {
    /// Rows `0..valid` were parsed from their slots' lines under `header`.
    valid: usize,
    header: Vec<u8>,
    text: Vec<u8>,
    /// Per row slot: where its line is in `text`.
    slots: Vec<Slot>,
    /// Bytes of `text` in use by the slots (the rest are holes).
    used: usize,
}

/// Where a row's kept line is: `len == 0`, none is kept (a line over
/// [`KEEP_LINE_MAX`]; a row's line is never empty).
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    start: usize,
    len: u32,
    cap: u32,
}

impl Slot {
    fn range(self) -> std::ops::Range<usize> {
        self.start..self.start + self.len as usize
    }
}

impl Seen {
    /// Row slot `i`'s kept line is `line` (whether that row is valid is
    /// the caller's to know).
    #[inline]
    fn same(&self, i: usize, line: &[u8]) -> bool {
        match self.slots.get(i) {
            Some(&s) if s.len != 0 && s.len as usize == line.len() => {
                self.text.get(s.range()) == Some(line)
            }
            _ => false,
        }
    }

    /// Keep `line` as row `i`'s line (none when it is too long to keep).
    #[inline]
    fn keep(&mut self, i: usize, line: &[u8]) {
        if i == self.slots.len() {
            self.slots.push(Slot::default());
        }
        let Some(slot) = self.slots.get_mut(i) else {
            return;
        };
        let len = if line.len() <= KEEP_LINE_MAX {
            line.len()
        } else {
            0
        };
        self.used -= slot.len as usize;
        if len > slot.cap as usize {
            // a new slot at the end: the old one becomes a hole
            *slot = Slot {
                start: self.text.len(),
                len: 0,
                cap: len as u32,
            };
            self.text.resize(self.text.len() + len, 0);
        }
        slot.len = len as u32;
        self.used += len;
        let range = slot.range();
        if let Some(kept) = self.text.get_mut(range) {
            kept.copy_from_slice(&line[..len]);
        }
        if self.text.len() > 2 * self.used + 4096 {
            self.compact();
        }
    }

    /// Close the holes: every kept line moved to the front, in row order.
    #[cold]
    fn compact(&mut self) {
        let mut text = Vec::with_capacity(self.used);
        for slot in &mut self.slots {
            let line = self.text.get(slot.range()).unwrap_or_default();
            *slot = Slot {
                start: text.len(),
                len: line.len() as u32,
                cap: line.len() as u32,
            };
            text.extend_from_slice(line);
        }
        self.text = text;
    }

    /// Whether `line` is the kept header (then kept as the header).
    fn header_is(&mut self, line: &[u8]) -> bool {
        let same = self.header == line;
        if !same {
            self.header.clear();
            self.header.extend_from_slice(line);
        }
        same
    }
}

impl PartialEq for Interrupts {
    fn eq(&self, other: &Self) -> bool {
        self.cpus == other.cpus && self.rows() == other.rows()
    }
}

impl Eq for Interrupts {}

impl Interrupts {
    /// Parse a complete `/proc/interrupts` text.
    ///
    /// ```
    /// let text = b"           CPU0       CPU1       \n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\nERR:          0\n";
    /// let irqs = irqlab_core::interrupts::Interrupts::parse(text).unwrap();
    /// assert_eq!(irqs.cpus, vec![0, 1]);
    /// assert_eq!(irqs.rows()[0].irq, Some(24));
    /// assert_eq!(irqs.rows()[0].parts.chip, "IO-APIC");
    /// assert_eq!(irqs.rows()[1].counts[..], [0]);
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        let mut out = Interrupts::default();
        out.parse_into(bytes)?;
        Ok(out)
    }

    /// A note on the last parse: the first count of a [`Width::U32`] row
    /// (every per-CPU count, x86's `ERR` and `MIS`) above the kernel's
    /// 32-bit range (file, line and value), if any. Such a count is kept,
    /// and every delta of it is a gap.
    pub fn note(&self) -> Option<&ParseError> {
        self.note.as_ref()
    }

    /// The valid rows of the last parse.
    pub fn rows(&self) -> &[IrqRow] {
        self.rows.get(..self.len).unwrap_or_default()
    }

    /// The valid rows of the last parse, mutably (e.g. to move counts out).
    pub fn rows_mut(&mut self) -> &mut [IrqRow] {
        self.seen.valid = 0;
        let len = self.len.min(self.rows.len());
        &mut self.rows[..len]
    }

    /// Append a valid row (after the current valid rows; spare rows beyond
    /// them are dropped first).
    pub fn push_row(&mut self, row: IrqRow) {
        self.seen.valid = 0;
        self.rows.truncate(self.len);
        self.rows.push(row);
        self.len = self.rows.len();
    }

    /// Keep only the first `n` valid rows (the rest become spare rows).
    pub fn truncate_rows(&mut self, n: usize) {
        self.seen.valid = 0;
        self.len = self.len.min(n);
    }

    /// Keep only the valid rows for which `keep` is true, in order.
    pub fn retain_rows(&mut self, mut keep: impl FnMut(&IrqRow) -> bool) {
        self.seen.valid = 0;
        self.rows.truncate(self.len);
        self.rows.retain(|r| keep(r));
        self.len = self.rows.len();
    }

    /// Move the whole row pool out (valid rows first, then spare rows),
    /// leaving the model without rows: for a caller that refills the rows in
    /// place and hands them back with [`Interrupts::from_parts`].
    pub fn take_rows(&mut self) -> Vec<IrqRow> {
        self.seen.valid = 0;
        self.len = 0;
        std::mem::take(&mut self.rows)
    }

    /// Build from parts (used by renderers, tests and synth).
    pub fn from_parts(cpus: Vec<u32>, rows: Vec<IrqRow>) -> Self {
        let len = rows.len();
        Interrupts {
            cpus,
            rows,
            len,
            note: None,
            seen: Seen::default(),
        }
    }

    /// Re-parse `bytes` into `self`, reusing every buffer. In the steady
    /// state (same shape of file) this performs no allocation. On error the
    /// model is left empty (no rows), never half-updated garbage.
    pub fn parse_into(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        self.len = 0;
        self.note = None;
        self.cpus.clear();
        let res = self.parse_inner(bytes);
        if res.is_err() {
            self.len = 0;
        }
        res
    }

    fn parse_inner(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        let mut refill = self.refill();
        // the whole-text parse keeps no lines
        refill.keep = false;
        let mut pos = 0;
        while let Some(text) = bytes.get(pos..).filter(|t| !t.is_empty()) {
            pos += refill.line_from(text)? + 1;
        }
        refill.finish()
    }

    /// Re-parse into `self` line by line (a reader streaming the file
    /// through a small buffer): feed every line to [`Refill::line`], then
    /// call [`Refill::finish`]. The same parse as [`Interrupts::parse_into`]
    /// (which is this over the whole text), reusing every buffer; until
    /// `finish` succeeds, and after any error or an abandoned refill, the
    /// model has no rows. A line that is byte for byte the line its row
    /// was refilled from last time, under the same header, is not parsed
    /// again: the row already holds what parsing it gives.
    pub fn refill(&mut self) -> Refill<'_> {
        self.len = 0;
        self.note = None;
        let was_valid = std::mem::take(&mut self.seen.valid);
        let lp = LineParser::with_cpus(std::mem::take(&mut self.cpus));
        Refill {
            m: self,
            lp,
            rows: 0,
            done: false,
            keep: true,
            was_valid,
            same_header: false,
        }
    }
}

/// A line-by-line re-parse of an [`Interrupts`] (see
/// [`Interrupts::refill`]).
pub struct Refill<'a> {
    m: &'a mut Interrupts,
    lp: LineParser,
    /// Rows parsed so far (valid once finished).
    rows: usize,
    done: bool,
    /// Whether the lines are kept for the next refill ([`Seen`]).
    keep: bool,
    /// Rows of the last refill whose kept lines may be compared.
    was_valid: usize,
    /// This refill's header is the kept one (and `was_valid` rows were
    /// parsed under it).
    same_header: bool,
}

impl Refill<'_> {
    /// Feed the next line (without its `\n`).
    #[inline]
    pub fn line(&mut self, line: &[u8]) -> Result<(), ParseError> {
        let i = self.rows;
        if self.same_header && i < self.was_valid && self.m.seen.same(i, line) {
            self.unchanged(i);
            return Ok(());
        }
        let had_header = self.lp.header;
        let row = slot(self.m, i);
        match self.lp.line_boxed(line, row) {
            Ok(true) => {
                self.rows += 1;
                self.m.seen.keep(i, line);
                Ok(())
            }
            Ok(false) => {
                if !had_header && self.lp.header {
                    self.same_header = self.m.seen.header_is(line);
                }
                Ok(())
            }
            Err(e) => Err(*e),
        }
    }

    /// Row `i`'s line is the one it was refilled from, under the same
    /// header: the row stands; counted and noted as a parsed row is.
    #[inline]
    fn unchanged(&mut self, i: usize) {
        self.lp.n += 1;
        if let Some(row) = self.m.rows.get(i) {
            self.lp.note_range(self.lp.n, row.width, &row.counts);
        }
        self.rows += 1;
    }

    /// Feed the line at the start of `text` (which runs on to the end of
    /// the input); returns the line's length without its `\n`.
    fn line_from(&mut self, text: &[u8]) -> Result<usize, ParseError> {
        let row = slot(self.m, self.rows);
        let (data, len) = self.lp.line_from(text, row)?;
        if data {
            self.rows += 1;
        }
        Ok(len)
    }

    /// End of input: the rows become valid (an error for an empty file).
    pub fn finish(mut self) -> Result<(), ParseError> {
        let res = self.lp.finish();
        self.done = res.is_ok();
        res
    }
}

/// Row `i` of `m`'s reused rows, added when the file grew.
#[inline]
fn slot(m: &mut Interrupts, i: usize) -> &mut IrqRow {
    if i == m.rows.len() {
        m.rows.push(IrqRow::default());
    }
    &mut m.rows[i]
}

impl Drop for Refill<'_> {
    fn drop(&mut self) {
        self.m.cpus = std::mem::take(&mut self.lp.cpus);
        self.m.note = self.lp.note.take();
        self.m.len = if self.done { self.rows } else { 0 };
        self.m.seen.valid = if self.done && self.keep { self.rows } else { 0 };
    }
}

/// The parser of `/proc/interrupts` one line at a time, for readers that
/// stream the file through a small buffer and keep only some rows (`show`
/// on a huge tree). [`Interrupts::parse_into`] is this parser over the
/// whole text, so both accept and reject exactly the same input.
///
/// Feed every line in order without its `\n` (a last line without a
/// newline too), then call [`LineParser::finish`].
#[derive(Debug, Default)]
pub struct LineParser {
    cpus: Vec<u32>,
    /// Line number of the last line fed (1-based).
    n: usize,
    header: bool,
    note: Option<ParseError>,
}

impl LineParser {
    /// A parser expecting the header line first.
    pub fn new() -> Self {
        LineParser::default()
    }

    /// Like [`LineParser::new`], reusing `cpus`' buffer for the header.
    fn with_cpus(mut cpus: Vec<u32>) -> Self {
        cpus.clear();
        LineParser {
            cpus,
            ..LineParser::default()
        }
    }

    /// Feed the next line. Returns true when it was a data row, parsed
    /// into `row` (its buffers reused); false for the header and blank
    /// lines (`row` then holds whatever it held).
    pub fn line(&mut self, line: &[u8], row: &mut IrqRow) -> Result<bool, ParseError> {
        self.line_boxed(line, row).map_err(|e| *e)
    }

    /// [`LineParser::line`] with the (rare) error boxed: the result of
    /// every line fits in two registers, not a `ParseError`'s bytes.
    fn line_boxed(&mut self, line: &[u8], row: &mut IrqRow) -> Result<bool, Box<ParseError>> {
        let counts = std::mem::take(&mut row.counts);
        if counts.spilled() {
            // on the heap: read into it as a `Vec` (no copy either way)
            let mut v = counts.into_vec();
            let res = self.line_into_boxed(line, row, &mut v);
            row.counts = Counts::from_vec(v);
            return res;
        }
        let mut counts = counts;
        let res = self.line_into_boxed(line, row, &mut counts);
        row.counts = counts;
        res
    }

    /// [`LineParser::line`] with the row's counts put into `counts`
    /// instead of `row.counts` (left empty): the same parse, the same
    /// errors, the same note, for a caller that turns counts into output
    /// as they are read.
    pub fn line_into<S: CountSink + ?Sized>(
        &mut self,
        line: &[u8],
        row: &mut IrqRow,
        counts: &mut S,
    ) -> Result<bool, ParseError> {
        self.line_into_boxed(line, row, counts).map_err(|e| *e)
    }

    /// [`LineParser::line_into`] with the error boxed (see
    /// [`LineParser::line_boxed`]).
    #[inline]
    fn line_into_boxed<S: CountSink + ?Sized>(
        &mut self,
        line: &[u8],
        row: &mut IrqRow,
        counts: &mut S,
    ) -> Result<bool, Box<ParseError>> {
        self.n += 1;
        let n = self.n;
        check_line(FILE, MAX_LINE, n, line).map_err(Box::new)?;
        if is_blank(line) {
            return Ok(false);
        }
        if !self.header {
            return self.header_line(line).map(|()| false);
        }
        row.counts.clear();
        parse_row(line, &self.cpus, row, counts).map_err(|k| at_line(n, k))?;
        self.note_range(n, row.width, counts);
        Ok(true)
    }

    /// The header line, once per file: out of the rows' way.
    #[inline(never)]
    fn header_line(&mut self, line: &[u8]) -> Result<(), Box<ParseError>> {
        parse_cpu_header(line, &mut self.cpus).map_err(|k| at_line(self.n, k))?;
        self.header = true;
        Ok(())
    }

    /// [`LineParser::line`] for the line at the start of `text`, which
    /// runs on to the end of the input (the whole-text parse): a data row
    /// is parsed without looking for its end first — the counts stop at
    /// the newline like at any other text — so the text is scanned once.
    /// Returns what `line` returns and the line's length without `\n`.
    fn line_from(&mut self, text: &[u8], row: &mut IrqRow) -> Result<(bool, usize), ParseError> {
        let colon = match crate::scan::find_either(b':', b'\n', text) {
            Some(c) if self.header && text[c] == b':' => c,
            _ => {
                let len = crate::scan::find_byte(b'\n', text).unwrap_or(text.len());
                return Ok((self.line(&text[..len], row)?, len));
            }
        };
        self.n += 1;
        let n = self.n;
        let counts = std::mem::take(&mut row.counts);
        let cpus = self.cpus.as_slice();
        let parsed = if counts.spilled() {
            // as in `line_boxed`: a heap buffer read into as a `Vec`
            let mut v = counts.into_vec();
            let parsed = parse_row_at(text, colon, cpus, row, &mut v);
            row.counts = Counts::from_vec(v);
            parsed
        } else {
            let mut counts = counts;
            let parsed = parse_row_at(text, colon, cpus, row, &mut counts);
            row.counts = counts;
            parsed
        };
        // a line over the limit is that error, whatever else is wrong in it
        let len = parsed
            .clone()
            .unwrap_or_else(|_| crate::scan::find_byte(b'\n', text).unwrap_or(text.len()));
        check_line(FILE, MAX_LINE, n, &text[..len])?;
        parsed.map_err(|k| ParseError::new(FILE, n, k))?;
        self.note_range(n, row.width, &row.counts);
        Ok((true, len))
    }

    /// Whether the header line has been read (rows come next).
    pub fn has_header(&self) -> bool {
        self.header
    }

    /// Feed a line the caller drops without reading it (a row its filter
    /// cannot keep): counted, so that later errors name the right line,
    /// held to the line length limit like any line, and refused as a
    /// parse would refuse it when it is not blank and has no `label:`, or
    /// is a numbered row whose shape cannot hold its counts (see
    /// `numbered_row_fits`). Counts are not read.
    pub fn skip_line(&mut self, line: &[u8]) -> Result<(), ParseError> {
        self.n += 1;
        check_line(FILE, MAX_LINE, self.n, line)?;
        match find_byte(b':', line) {
            None if !is_blank(line) => Err(ParseError::new(FILE, self.n, ErrorKind::MissingColon)),
            Some(colon) if self.header && !numbered_row_fits(line, colon, self.cpus.len()) => {
                self.refuse_row(line)
            }
            _ => Ok(()),
        }
    }

    /// The error a parse gives for `line`, a row [`LineParser::skip_line`]
    /// found misshapen (none if the parse takes it after all).
    #[cold]
    #[inline(never)]
    fn refuse_row(&self, line: &[u8]) -> Result<(), ParseError> {
        let mut row = IrqRow::default();
        let mut counts = Counts::new();
        parse_row(line, &self.cpus, &mut row, &mut counts)
            .map_err(|k| ParseError::new(FILE, self.n, k))
    }

    /// Keep the first count of a 32-bit row ([`Width::U32`]) above the
    /// kernel's range as the note.
    #[inline]
    fn note_range<S: CountSink + ?Sized>(&mut self, n: usize, width: Width, counts: &S) {
        if self.note.is_none() && width == Width::U32 {
            self.note = counts.first_above_u32().map(|v| range_of(FILE, n, v));
        }
    }

    /// End of input: an error when no header was seen (an empty file).
    pub fn finish(&self) -> Result<(), ParseError> {
        if self.header {
            Ok(())
        } else {
            Err(ParseError::new(FILE, 0, ErrorKind::Empty))
        }
    }

    /// CPU ids of the header (empty before it).
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// The first count of a 32-bit row above the kernel's range so far
    /// (see [`Interrupts::note`]).
    pub fn note(&self) -> Option<&ParseError> {
        self.note.as_ref()
    }
}

/// Whether `line`, whose label ends at `colon`, may be a row a parse
/// under a header of `ncols` CPUs takes, judged from its shape alone (no
/// count read): false for a numbered row whose text after the colon is
/// too short to hold `ncols` counts (a digit and a blank each, the last
/// without) or does not begin with a digit (nothing, or a description
/// with the counts cut away). Other rows (`LOC:`, `ERR:`, `FIQ:`) may
/// hold any number of counts.
#[inline]
fn numbered_row_fits(line: &[u8], colon: usize, ncols: usize) -> bool {
    let rest = line.get(colon + 1..).unwrap_or_default();
    // the shape first: a row of counts passes without its label read
    let shaped = rest.len() >= (2 * ncols).saturating_sub(1)
        && rest
            .get(skip_blanks(rest, 0))
            .is_some_and(u8::is_ascii_digit);
    shaped || parse_irq_label(trim(&line[..colon])).is_none()
}

/// The error `kind` at line `n`, boxed (made only when a parse fails).
#[cold]
#[inline(never)]
fn at_line(n: usize, kind: ErrorKind) -> Box<ParseError> {
    Box::new(ParseError::new(FILE, n, kind))
}

/// One header cell, `CPUn`, as its id.
fn header_cell(tok: &[u8]) -> Result<u32, ErrorKind> {
    tok.strip_prefix(b"CPU")
        .and_then(|d| match scan_u64(d, 0) {
            Scan::Num(v, end) if end == d.len() && v <= u64::from(u32::MAX) => Some(v as u32),
            _ => None,
        })
        .ok_or_else(|| ErrorKind::BadHeaderCell(String::from_utf8_lossy(tok).into_owned()))
}

/// Parse a `CPU0 CPU1 …` header into CPU ids (each once). Shared with
/// `/proc/softirqs`.
pub(crate) fn parse_cpu_header(line: &[u8], cpus: &mut Vec<u32>) -> Result<(), ErrorKind> {
    cpus.clear();
    // the tokens between runs of ASCII whitespace; the padding (most of a
    // 1152-CPU header's 12 KB) skipped eight spaces at a time
    let mut pos = 0;
    // ids rise in a kernel header: only one that falls calls for the
    // duplicate check, made once at the end (sorted: no quadratic search)
    let mut fell = false;
    loop {
        pos = skip_blanks(line, pos);
        let Some(rest) = line.get(pos..).filter(|r| !r.is_empty()) else {
            break;
        };
        let len = rest
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(rest.len());
        pos += len;
        if len == 0 {
            // whitespace `skip_blanks` leaves (`\n`, `\r`, form feed)
            pos += 1;
            continue;
        }
        let tok = rest.get(..len).unwrap_or_default();
        let id = match header_cell(tok) {
            Ok(id) => id,
            // the earlier cells' error first
            Err(e) => return Err(fell.then(|| first_repeat(cpus)).flatten().unwrap_or(e)),
        };
        fell |= cpus.last().is_some_and(|&prev| id <= prev);
        cpus.push(id);
    }
    if cpus.is_empty() {
        return Err(ErrorKind::NoCpuHeader);
    }
    match fell.then(|| first_repeat(cpus)).flatten() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The error of the first id in `ids` that an earlier one repeats, if
/// any ([`crate::scan::first_repeat_at`]).
fn first_repeat(ids: &[u32]) -> Option<ErrorKind> {
    let second = crate::scan::first_repeat_at(ids.iter())?;
    ids.get(second).map(|&cpu| ErrorKind::DuplicateCpu {
        cpu,
        in_header: true,
    })
}

/// Parse one non-empty data line into `row`, reusing its buffers; `cpus`:
/// the header's CPU ids. A row that fails is left with an empty
/// description, so that the next parse into it cannot take its stale
/// `parts` for valid.
fn parse_row<S: CountSink + ?Sized>(
    line: &[u8],
    cpus: &[u32],
    row: &mut IrqRow,
    counts: &mut S,
) -> Result<(), ErrorKind> {
    let colon = find_byte(b':', line).ok_or(ErrorKind::MissingColon)?;
    parse_row_at(line, colon, cpus, row, counts).map(|_| ())
}

/// Parse the row at the start of `text` whose label ends at `colon`, up to
/// the first `\n` (or the end of `text`); returns the row's length.
fn parse_row_at<S: CountSink + ?Sized>(
    text: &[u8],
    colon: usize,
    cpus: &[u32],
    row: &mut IrqRow,
    counts: &mut S,
) -> Result<usize, ErrorKind> {
    let res = parse_row_fields(text, colon, cpus, row, counts);
    if res.is_err() {
        row.description.clear();
        row.parts.clear();
    }
    res
}

fn parse_row_fields<S: CountSink + ?Sized>(
    line: &[u8],
    colon: usize,
    cpus: &[u32],
    row: &mut IrqRow,
    counts: &mut S,
) -> Result<usize, ErrorKind> {
    let ncols = cpus.len();
    let label = trim(&line[..colon]);
    if !same_bytes(row.label.as_bytes(), label) {
        row.label.clear();
        push_lossy(&mut row.label, label);
        row.width = Width::of_label(label);
    }
    let was_numbered = row.irq.is_some();
    row.irq = parse_irq_label(label);
    let numbered = row.irq.is_some();
    // a numbered row holds a count per CPU or is an error that ends the
    // parse: room for them all at once. Other rows (few, often fewer
    // counts) grow as read, so that a header of many CPUs over many short
    // lines cannot reserve a buffer per line far beyond the input's size.
    counts.start(if numbered { ncols } else { 0 });
    let limit = if numbered { ncols } else { usize::MAX };
    let rest = read_counts(line, colon + 1, limit, ncols <= SHORT_ROW, counts).map_err(|e| {
        if numbered {
            in_column(e, cpus, counts.held())
        } else {
            e
        }
    })?;
    let found = counts.held();
    row.shape = match found {
        n if n == ncols => Shape::PerCpu,
        0 => Shape::NoCounts,
        1 => Shape::Single,
        _ => Shape::Irregular,
    };
    if numbered && found != ncols {
        return Err(short_row(line, rest, cpus, found));
    }
    let tail = line.get(rest..).unwrap_or_default();
    let len = rest + find_byte(b'\n', tail).unwrap_or(tail.len());
    let desc = trim(line.get(rest..len).unwrap_or_default());
    // the kernel prints the chip right after the counts, never a bare
    // number: one look at the description's first byte, work only on a digit
    if numbered && desc.first().is_some_and(u8::is_ascii_digit) {
        extra_counts(desc, ncols)?;
    }
    // Same text as last time in this row (the usual case between samples):
    // the split parts are still right. So are a row without a number's
    // (cleared) when its description is empty; a numbered row's empty
    // description may be a failed parse's, whose parts were cleared.
    if was_numbered == numbered
        && same_bytes(row.description.as_bytes(), desc)
        && (!desc.is_empty() || !numbered)
    {
        return Ok(len);
    }
    row.description.clear();
    push_lossy(&mut row.description, desc);
    if numbered {
        split_description(&row.description, &mut row.parts);
    } else {
        row.parts.clear();
    }
    Ok(len)
}

/// The error of a numbered row whose counts end after `found` of the
/// header's `cpus`, at `at`: a token there that begins like a number (a
/// digit, or a sign and a digit: `14x453`, `-5`) is a bad count, named
/// with its CPU; anything else (a description, the line's end: a CPU
/// hotplugged during the read, a cut line) is too few counts.
#[cold]
#[inline(never)]
fn short_row(line: &[u8], at: usize, cpus: &[u32], found: usize) -> ErrorKind {
    let tail = line.get(at..).unwrap_or_default();
    let end = tail
        .iter()
        .position(u8::is_ascii_whitespace)
        .unwrap_or(tail.len());
    let tok = tail.get(..end).unwrap_or_default();
    let numeric = match tok {
        [d, ..] if d.is_ascii_digit() => true,
        [b'-' | b'+', d, ..] => d.is_ascii_digit(),
        _ => false,
    };
    let mismatch = ErrorKind::CountMismatch {
        expected: cpus.len(),
        found,
    };
    if !numeric {
        return mismatch;
    }
    in_column(
        ErrorKind::ExpectedNumber {
            what: "a count",
            found: lossy_token(tok),
        },
        cpus,
        found,
    )
}

/// Refuse a numbered row whose `desc` (what follows its `ncols` counts)
/// begins with a bare decimal number (digits, then whitespace or the end):
/// more counts than the header has CPUs (a CPU hotplugged during the
/// read), not a chip name. A number glued to text (`1900GIC-0`, 6.13-rc1's
/// chip after the last count) is the description, as is any other text.
#[cold]
#[inline(never)]
fn extra_counts(desc: &[u8], ncols: usize) -> Result<(), ErrorKind> {
    let bare = |tok: &[u8]| !tok.is_empty() && tok.iter().all(u8::is_ascii_digit);
    let extra = desc
        .split(u8::is_ascii_whitespace)
        .filter(|tok| !tok.is_empty())
        .take_while(|tok| bare(tok))
        .count();
    if extra == 0 {
        return Ok(());
    }
    Err(ErrorKind::CountMismatch {
        expected: ncols,
        found: ncols.saturating_add(extra),
    })
}

/// `e`, a bad number at 0-based count `column` of a row under the header's
/// `cpus`, as the error naming that column's CPU (unchanged past the
/// header's CPUs, or for another kind of error).
#[cold]
#[inline(never)]
pub(crate) fn in_column(e: ErrorKind, cpus: &[u32], column: usize) -> ErrorKind {
    match (e, cpus.get(column)) {
        (ErrorKind::ExpectedNumber { what, found }, Some(&cpu)) => ErrorKind::BadCount {
            cpu,
            column: column + 1,
            what,
            found,
        },
        (ErrorKind::TooLarge { what, found, .. }, Some(&cpu)) => ErrorKind::CountTooLarge {
            cpu,
            column: column + 1,
            what,
            found,
        },
        (e, _) => e,
    }
}

impl CountSink for Counts {
    #[inline]
    fn start(&mut self, room: usize) {
        self.clear();
        self.reserve(room);
    }

    #[inline]
    fn held(&self) -> usize {
        self.len()
    }

    #[inline]
    fn push(&mut self, v: u64, _digits: &[u8]) {
        smallvec::SmallVec::push(self, v);
    }

    #[inline]
    fn zeros(&mut self, n: usize) {
        // copied from a block of zeros (a memcpy): SmallVec's `resize`
        // stores one element at a time
        const ZEROS: [u64; 64] = [0; 64];
        let mut left = n;
        self.reserve(n);
        while left > 0 {
            let k = left.min(ZEROS.len());
            self.extend_from_slice(&ZEROS[..k]);
            left -= k;
        }
    }

    #[inline]
    fn first_above_u32(&self) -> Option<u64> {
        crate::scan::counts::first_above_u32(self)
    }
}

/// Append `bytes` to `s`, invalid UTF-8 replaced (U+FFFD) as
/// `String::from_utf8_lossy` does.
fn push_lossy(s: &mut CompactString, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(t) => put(s, t),
        Err(_) => put(s, &String::from_utf8_lossy(bytes)),
    }
}

/// Rows of at most this many CPU columns have their counts read one
/// kernel column at a time, then by the byte loop: for a few columns
/// that costs less than the zero-run and block machinery of
/// `scan::counts::read_spaced`, which pays off on wide rows.
const SHORT_ROW: usize = 8;

fn parse_irq_label(label: &[u8]) -> Option<u32> {
    match scan_u64(label, 0) {
        Scan::Num(v, end) if end == label.len() && v <= u64::from(u32::MAX) => Some(v as u32),
        _ => None,
    }
}

/// Read up to `limit` decimal counts starting at `pos`; returns the offset
/// where the description starts. A count glued to text (`1900GIC-0`, seen
/// in 6.13-rc1) is split when more counts are still expected. `short`:
/// the header has few columns, so only columns of the kernel's width are
/// read ahead of the byte loop (no zero runs, no 64-byte blocks).
fn read_counts<S: CountSink + ?Sized>(
    line: &[u8],
    mut pos: usize,
    limit: usize,
    short: bool,
    out: &mut S,
) -> Result<usize, ErrorKind> {
    pos = if short {
        crate::scan::counts::read_columns(line, pos, limit, out)
    } else {
        crate::scan::counts::read_spaced(line, pos, limit, out)
    };
    while out.held() < limit {
        let start = skip_blanks(line, pos);
        match scan_u64(line, start) {
            Scan::Num(v, end) => {
                let glued = end < line.len() && !line[end].is_ascii_whitespace();
                if glued && (limit == usize::MAX || out.held() + 1 != limit) {
                    // Text such as `4020KEY` or `3-edge`: not a count.
                    return Ok(start);
                }
                out.push(v, line.get(start..end).unwrap_or_default());
                pos = end;
                if glued {
                    return Ok(end);
                }
            }
            Scan::Overflow(end) => {
                return Err(ErrorKind::TooLarge {
                    what: "a count",
                    found: String::from_utf8_lossy(&line[start..end.min(start + 64)]).into_owned(),
                    bits: 64,
                })
            }
            Scan::NotNum => return Ok(start),
        }
    }
    Ok(pos)
}

#[cfg(test)]
mod tests;
