//! A recording's journal of samples (`journal.jsonl` in the recording
//! directory), append-only: one JSON line per sample not yet in a closed
//! segment, written and flushed to the kernel at every sample (so a
//! SIGKILL loses nothing that was flushed). Reading stops at a torn or
//! unreadable tail and reports its byte offset; everything before it is
//! kept.

use super::cells::{Change, FlatRow, LayoutCells};
use super::schema::{
    readable, unreadable, CellValue, JournalLine, SampleTime, Shape, SourceKind, READS, SCHEMA,
};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

/// An open journal.
pub struct RecordJournal {
    path: PathBuf,
    file: Locked,
    /// Bytes written so far.
    pub len: u64,
    /// The staging buffer of [`RecordJournal::append`], kept across samples.
    buf: Vec<u8>,
}

/// Bytes staged per write of [`RecordJournal::append`].
const STAGE: usize = 1 << 16;

/// A line's bytes to the journal file through the kept staging buffer (a
/// write call per [`STAGE`] bytes), counted: the journal's length follows
/// from what was written, without asking the file's offset per sample.
struct Staged<'a> {
    file: &'a std::fs::File,
    buf: &'a mut Vec<u8>,
    written: u64,
}

impl Staged<'_> {
    fn drain(&mut self) -> std::io::Result<()> {
        let mut f = self.file;
        f.write_all(self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
}

impl Write for Staged<'_> {
    #[inline]
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.write_all(b)?;
        Ok(b.len())
    }

    /// What the serializer calls per fragment: a copy into the buffer
    /// (the default would loop over [`Write::write`]).
    #[inline]
    fn write_all(&mut self, b: &[u8]) -> std::io::Result<()> {
        if self.buf.len() + b.len() > STAGE {
            self.drain()?;
        }
        self.buf.extend_from_slice(b);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.drain()
    }
}

impl RecordJournal {
    /// Create (truncate) the journal at `path`, locked for this process:
    /// a second `record` or a `recover` of the same boot directory fails
    /// instead of taking a journal that is still being written. A new
    /// (empty) file is not truncated: on ext4 a truncation to 0 marks the
    /// file for writeback at close (`auto_da_alloc`), a disk write at the
    /// end of every run for a journal that is removed then.
    pub fn create(path: &Path) -> anyhow::Result<RecordJournal> {
        let file = lock(path, true)?;
        if file.metadata().map_or(true, |m| m.len() != 0) {
            file.set_len(0)
                .with_context(|| format!("cannot truncate {}", path.display()))?;
        }
        Ok(RecordJournal {
            path: path.to_path_buf(),
            file,
            len: 0,
            buf: Vec::new(),
        })
    }

    /// Empty the journal (a segment took its samples), keeping the lock.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.rewind())
            .with_context(|| format!("cannot truncate {}", self.path.display()))?;
        self.len = 0;
        Ok(())
    }

    /// Append one sample and flush it to the kernel. Streamed through a
    /// 64-KB buffer: a big machine's first line (every counter, ~60 MB of
    /// JSON at 1152 CPUs) is never held whole in memory.
    pub fn append(&mut self, line: &LineOut) -> anyhow::Result<()> {
        self.buf.clear();
        let mut w = Staged {
            file: &self.file,
            buf: &mut self.buf,
            written: 0,
        };
        let written = serde_json::to_writer(&mut w, line)
            .map_err(std::io::Error::from)
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush());
        let n = w.written;
        written.with_context(|| {
            format!(
                "cannot write {} at offset {}",
                self.path.display(),
                self.len
            )
        })?;
        // the file is written from offset 0 after create or restart, by
        // this journal only (flock'd): its offset is the bytes written
        self.len += n;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A journal file with its lock.
pub type Locked = nix::fcntl::Flock<std::fs::File>;

/// Open the journal at `path` for writing (created when `create`), with
/// an exclusive lock (`flock`); held until the file is closed. Opened
/// through `crate::host::open_regular_rw`: without blocking and only when
/// a regular file (a FIFO or a device in its place is refused by its
/// type, as every input: docs/limits.md).
pub fn lock(path: &Path, create: bool) -> anyhow::Result<Locked> {
    let file = crate::host::open_regular_rw(path, create)
        .with_context(|| format!("cannot open {}", path.display()))?;
    use nix::fcntl::{Flock, FlockArg};
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(locked) => Ok(locked),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => anyhow::bail!(
            "{} is being written by a running `irqlab record`: stop it first (`irqlab replay` reads a running recording as is)",
            path.display()
        ),
        Err((_, e)) => Err(e).with_context(|| format!("cannot lock {}", path.display())),
    }
}

/// A journal line as written: the JSON of [`JournalLine`], with the cells
/// borrowed (a list of changed cells, or every cell of the differ's rows).
#[derive(Debug, Serialize)]
pub struct LineOut<'a> {
    pub schema: u32,
    #[serde(flatten)]
    pub time: SampleTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<&'a Shape>,
    pub cells: LineCells<'a>,
}

/// The cells of a [`LineOut`].
#[derive(Debug)]
pub enum LineCells<'a> {
    List(&'a [CellValue]),
    /// Every cell of these rows.
    Rows(&'a [FlatRow]),
    /// These changed cells of these rows (the differ's).
    Changes(&'a [FlatRow], &'a [Change]),
}

/// One cell as [`CellValue`] serialises it.
#[derive(Serialize)]
struct CellRef<'a> {
    source: SourceKind,
    key: &'a str,
    cpu: Option<u32>,
    value: u64,
}

impl Serialize for LineCells<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        match self {
            LineCells::List(cells) => cells.serialize(s),
            LineCells::Rows(rows) => {
                let mut seq = s.serialize_seq(None)?;
                for r in rows.iter() {
                    for (&cpu, &value) in r.cpus.iter().zip(&r.values) {
                        seq.serialize_element(&CellRef {
                            source: r.source,
                            key: &r.key,
                            cpu,
                            value,
                        })?;
                    }
                }
                seq.end()
            }
            LineCells::Changes(rows, changes) => {
                let mut seq = s.serialize_seq(None)?;
                for c in changes.iter() {
                    let Some(r) = rows.get(c.row as usize) else {
                        continue;
                    };
                    seq.serialize_element(&CellRef {
                        source: r.source,
                        key: &r.key,
                        cpu: r.cpu(c.col),
                        value: c.value,
                    })?;
                }
                seq.end()
            }
        }
    }
}

/// Where and why reading a journal stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Torn {
    /// Its line number (from 1).
    pub line: u64,
    pub offset: u64,
    pub why: String,
}

/// A journal line that was skipped: its number (from 1), byte offset and
/// why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub line: u64,
    pub offset: u64,
    pub why: String,
}

/// What reading a journal did not take: bad lines (skipped, the lines
/// after them kept), lines of a newer schema, a torn last record, a read
/// stopped at [`MAX_READ`](crate::host::MAX_READ).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Problems {
    pub bad: Vec<BadLine>,
    /// Lines of a schema newer than this irqlab reads: the first one
    /// (line number, schema) and how many.
    pub newer: Option<(u64, u32)>,
    pub newer_lines: u64,
    /// Bytes at the end without a newline (an interrupted write).
    pub torn: Option<Torn>,
    /// The read stopped before the end (a bound of docs/limits.md).
    pub stopped: Option<Torn>,
}

impl Problems {
    /// Every line was read and taken.
    pub fn is_clean(&self) -> bool {
        self.bad.is_empty() && self.newer.is_none() && self.torn.is_none() && self.stopped.is_none()
    }

    /// One message per problem, naming `path` (file:line or offset).
    pub fn messages(&self, path: &Path) -> Vec<String> {
        let p = path.display();
        let mut out: Vec<String> = self
            .bad
            .iter()
            .take(MAX_MESSAGES)
            .map(|b| {
                format!(
                    "{p}:{}: {} (byte {}); line skipped",
                    b.line, b.why, b.offset
                )
            })
            .collect();
        if self.bad.len() > MAX_MESSAGES {
            out.push(format!(
                "{p}: {} more unreadable line(s) skipped",
                self.bad.len() - MAX_MESSAGES
            ));
        }
        if let Some((line, schema)) = self.newer {
            out.push(format!(
                "{p}:{line}: {} ({} line(s) of it); a newer irqlab reads them",
                unreadable(schema),
                self.newer_lines
            ));
        }
        if let Some(t) = &self.stopped {
            out.push(format!(
                "{p}:{}: {} at byte {}; the rest is not read",
                t.line, t.why, t.offset
            ));
        }
        if let Some(t) = &self.torn {
            out.push(format!("{p}:{}: {} at offset {}", t.line, t.why, t.offset));
        }
        out
    }
}

/// Bad lines named one by one; more are counted.
const MAX_MESSAGES: usize = 20;

/// Longest journal line read: 1 GiB. The longest line `record` writes is a
/// sample with every counter (a recording's first, ~60 bytes a counter:
/// ~75 MB at 1152 CPUs); 1 GiB is ~17 M counters. A longer line is skipped
/// as unreadable without being held in memory (lines are parsed as they
/// are read: a 2 GiB sparse journal costs one read buffer).
pub const MAX_LINE: u64 = 1 << 30;

/// The complete lines of a journal and what was not taken. The file is
/// opened as every input is (`crate::host::open_regular`: never blocks on
/// a FIFO, refuses anything but a regular file by name) and read as a
/// stream of at most [`MAX_READ`](crate::host::MAX_READ) bytes, lines of
/// at most [`MAX_LINE`] (docs/limits.md).
pub fn read(path: &Path) -> anyhow::Result<(Vec<JournalLine>, Problems)> {
    let file = crate::host::open_regular(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    read_from(file).with_context(|| format!("cannot read {}", path.display()))
}

/// [`read`] on bytes.
pub fn parse(bytes: &[u8]) -> (Vec<JournalLine>, Problems) {
    read_from(bytes).unwrap_or_default()
}

/// Whether a journal of `schema` was written by a newer irqlab (refused
/// whole by `recover` rather than skipped line by line).
fn newer(schema: u32) -> bool {
    schema > READS.iter().copied().max().unwrap_or(0)
}

fn read_from(src: impl std::io::Read) -> std::io::Result<(Vec<JournalLine>, Problems)> {
    read_within(src, crate::host::MAX_READ as u64)
}

/// [`read_from`] stopping after `limit` bytes.
fn read_within(
    src: impl std::io::Read,
    limit: u64,
) -> std::io::Result<(Vec<JournalLine>, Problems)> {
    let mut s = LineSource::new(src, limit);
    let mut out: Vec<JournalLine> = Vec::new();
    let mut pr = Problems::default();
    let mut n = 0u64;
    // line number of the last line taken
    let mut last_line = 0u64;
    // the cells of the layout the next line follows (none known: not
    // checked)
    let mut layout: Option<LayoutCells> = None;
    loop {
        let offset = s.offset;
        let before = (out.len(), pr.bad.len());
        match next_line(&mut s, n + 1, &mut out, &mut last_line, &mut pr) {
            Ok(Some(())) => {
                n += 1;
                if pr.bad.len() > before.1 {
                    // a skipped line may have changed the layout
                    layout = None;
                } else if out.len() > before.0 {
                    check_cells(&mut out, &mut layout, &mut pr, n, offset);
                }
            }
            Ok(None) => break,
            // the bound on bytes in all
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                pr.stopped = Some(Torn {
                    line: n + 1,
                    offset,
                    why: e.to_string(),
                });
                break;
            }
            Err(e) => return Err(e),
        }
        if pr.torn.is_some() {
            break;
        }
    }
    Ok((out, pr))
}

/// Skip the last line of `out` (line `n` at byte `offset`), named in
/// `pr`, when a cell of it is not one of its layout's (`layout`: the
/// last shape listed, updated from the line's own): a CPU or row the
/// layout lacks would be dropped unseen by replay. Lines of older
/// schemas are not checked.
fn check_cells(
    out: &mut Vec<JournalLine>,
    layout: &mut Option<LayoutCells>,
    pr: &mut Problems,
    n: u64,
    offset: u64,
) {
    let Some(l) = out.last() else {
        return;
    };
    if l.schema != SCHEMA {
        *layout = None;
        return;
    }
    if let Some(s) = &l.shape {
        *layout = Some(LayoutCells::of(s));
    }
    let Some(cells) = layout.as_ref() else {
        return;
    };
    if let Some(why) = l.cells.iter().find_map(|c| cells.stray(c)) {
        out.pop();
        *layout = None;
        pr.bad.push(BadLine {
            line: n,
            offset,
            why,
        });
    }
}

/// Read line `n` into `out` or `pr`; `None` at the end of the file.
fn next_line<R: std::io::Read>(
    s: &mut LineSource<R>,
    n: u64,
    out: &mut Vec<JournalLine>,
    last_line: &mut u64,
    pr: &mut Problems,
) -> std::io::Result<Option<()>> {
    let offset = s.offset;
    if !s.at_line_start()? {
        return Ok(None);
    }
    let bad = |why: String| BadLine {
        line: n,
        offset,
        why,
    };
    if let Some(v) = schema_prefix(s.peek()).filter(|v| !readable(*v)) {
        if s.skip_line()? == End::Eof {
            pr.torn = Some(torn(n, offset, s));
        } else if newer(v) {
            pr.newer.get_or_insert((n, v));
            pr.newer_lines += 1;
        } else {
            pr.bad.push(bad(unreadable(v)));
        }
        return Ok(Some(()));
    }
    let mut line = LineRead {
        s,
        len: 0,
        end: None,
    };
    let parsed = {
        // the parser reads a byte at a time: through a buffer
        let buffered = std::io::BufReader::with_capacity(1 << 16, &mut line);
        let mut de = serde_json::Deserializer::from_reader(buffered);
        JournalLine::deserialize(&mut de).and_then(|l| de.end().map(|()| l))
    };
    let (len, end) = (line.len, line.end);
    if let Err(e) = &parsed {
        // the byte bound (InvalidData) ends the read; a line over
        // MAX_LINE is skipped below
        if e.io_error_kind() == Some(std::io::ErrorKind::InvalidData) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                e.to_string(),
            ));
        }
    }
    let end = match end {
        Some(e) => e,
        None => s.skip_line()?,
    };
    if end == End::Eof {
        pr.torn = Some(torn(n, offset, s));
        return Ok(Some(()));
    }
    let why = match parsed {
        _ if len > MAX_LINE => format!("a line longer than {MAX_LINE} bytes"),
        Err(e) => format!("unreadable record: {}", crate::json_line::error(&e)),
        Ok(l) if newer(l.schema) => {
            pr.newer.get_or_insert((n, l.schema));
            pr.newer_lines += 1;
            return Ok(Some(()));
        }
        Ok(l) if !readable(l.schema) => unreadable(l.schema),
        Ok(l) => match out.last() {
            Some(p) if l.time.seq <= p.time.seq => format!(
                "sample {} does not follow sample {} of line {last_line} (a duplicated or backward sequence number)",
                l.time.seq, p.time.seq
            ),
            _ => {
                out.push(l);
                *last_line = n;
                return Ok(Some(()));
            }
        },
    };
    pr.bad.push(bad(why));
    Ok(Some(()))
}

/// The torn record of line `n` at byte `offset`, whose bytes end at
/// `s`'s offset.
fn torn<R>(n: u64, offset: u64, s: &LineSource<R>) -> Torn {
    Torn {
        line: n,
        offset,
        why: format!(
            "torn last record ({} bytes without a newline)",
            s.offset - offset
        ),
    }
}

/// `N` of a line that starts `{"schema":N` (how `record` writes every
/// line), so that a line of another schema is known before it is parsed
/// (a newer schema may have other fields).
fn schema_prefix(b: &[u8]) -> Option<u32> {
    let t = |b: &[u8]| -> usize { b.iter().take_while(|c| c.is_ascii_whitespace()).count() };
    let b = b.get(t(b)..)?.strip_prefix(b"{")?;
    let b = b.get(t(b)..)?.strip_prefix(b"\"schema\"")?;
    let b = b.get(t(b)..)?.strip_prefix(b":")?;
    let b = b.get(t(b)..)?;
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits == b.len() {
        return None;
    }
    std::str::from_utf8(b.get(..digits)?).ok()?.parse().ok()
}

/// How a line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Newline,
    /// The end of the file without a newline.
    Eof,
}

/// A journal read as a stream through one 64-KiB buffer, with a bound on
/// the bytes read in all.
struct LineSource<R> {
    src: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// File offset of `buf[pos]`.
    offset: u64,
    /// Bytes from `pos` known to hold no newline …
    run: usize,
    /// … and whether `buf[pos + run]` is one.
    run_nl: bool,
    eof: bool,
    limit: u64,
    /// More than `limit` bytes were read.
    over: bool,
}

/// Bytes of a line looked at before it is parsed ([`schema_prefix`]).
const PEEK: usize = 64;

impl<R: std::io::Read> LineSource<R> {
    fn new(src: R, limit: u64) -> Self {
        LineSource {
            src,
            buf: vec![0; 1 << 16],
            pos: 0,
            end: 0,
            offset: 0,
            run: 0,
            run_nl: false,
            eof: false,
            limit,
            over: false,
        }
    }

    /// Move the unread bytes to the front and read more (once). Bytes past
    /// `limit` in all are not kept: asking for more once they are reached
    /// is an error, as is a read that brings no byte under it (the file
    /// goes on past the bound: not its end).
    fn fill(&mut self) -> std::io::Result<()> {
        if self.over {
            return Err(self.past_limit());
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.eof || self.end == self.buf.len() {
            return Ok(());
        }
        let had = self.end;
        loop {
            match self
                .src
                .read(self.buf.get_mut(self.end..).unwrap_or_default())
            {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            break;
        }
        let total = self.offset + self.end as u64;
        if total > self.limit {
            self.over = true;
            self.end -= usize::try_from(total - self.limit)
                .unwrap_or(self.end)
                .min(self.end);
            if self.end <= had {
                return Err(self.past_limit());
            }
        }
        Ok(())
    }

    /// The error of a read past `limit`.
    fn past_limit(&self) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "more than {} bytes, stopped reading (docs/limits.md)",
                self.limit
            ),
        )
    }

    /// Buffer the start of the next line; false at the end of the file.
    fn at_line_start(&mut self) -> std::io::Result<bool> {
        while self.end - self.pos < PEEK && !self.eof && !self.over {
            let before = self.end - self.pos;
            self.fill()?;
            if self.end - self.pos == before && !self.eof {
                break;
            }
        }
        // every byte under the bound read, the file going on past it
        if self.over && self.end == self.pos {
            return Err(self.past_limit());
        }
        Ok(self.end > self.pos)
    }

    fn peek(&self) -> &[u8] {
        self.buf.get(self.pos..self.end).unwrap_or_default()
    }

    fn advance(&mut self, n: usize) {
        self.pos += n;
        self.offset += n as u64;
    }

    /// Bytes of the line available now without a newline (scanning the
    /// buffer once); `None` when the line ends here (its newline taken).
    fn line_bytes(&mut self) -> std::io::Result<Option<usize>> {
        loop {
            if self.run == 0 && self.run_nl {
                self.run_nl = false;
                self.advance(1);
                return Ok(None);
            }
            if self.run > 0 {
                return Ok(Some(self.run));
            }
            if self.pos == self.end {
                self.fill()?;
                if self.pos == self.end {
                    return Ok(Some(0));
                }
            }
            let avail = self.buf.get(self.pos..self.end).unwrap_or_default();
            match irqlab_core::scan::find_byte(b'\n', avail) {
                Some(i) => {
                    self.run = i;
                    self.run_nl = true;
                }
                None => self.run = avail.len(),
            }
        }
    }

    /// Skip the rest of the line.
    fn skip_line(&mut self) -> std::io::Result<End> {
        loop {
            match self.line_bytes()? {
                None => return Ok(End::Newline),
                Some(0) => return Ok(End::Eof),
                Some(n) => {
                    self.run -= n;
                    self.advance(n);
                }
            }
        }
    }
}

/// One line of a [`LineSource`] as a reader (for the JSON parser); at
/// most [`MAX_LINE`] bytes.
struct LineRead<'a, R> {
    s: &'a mut LineSource<R>,
    len: u64,
    /// Set once the line's end was reached.
    end: Option<End>,
}

impl<R: std::io::Read> std::io::Read for LineRead<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.end.is_some() || out.is_empty() {
            return Ok(0);
        }
        match self.s.line_bytes()? {
            None => {
                self.end = Some(End::Newline);
                Ok(0)
            }
            Some(0) => {
                self.end = Some(End::Eof);
                Ok(0)
            }
            Some(n) => {
                let k = n.min(out.len());
                let from = self
                    .s
                    .buf
                    .get(self.s.pos..self.s.pos + k)
                    .unwrap_or_default();
                out.get_mut(..k).unwrap_or_default().copy_from_slice(from);
                self.s.run -= k;
                self.s.advance(k);
                self.len += k as u64;
                if self.len > MAX_LINE {
                    return Err(std::io::Error::other(format!(
                        "a line longer than {MAX_LINE} bytes"
                    )));
                }
                Ok(k)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(l: &JournalLine) -> LineOut<'_> {
        LineOut {
            schema: l.schema,
            time: l.time,
            shape: l.shape.as_ref(),
            cells: LineCells::List(&l.cells),
        }
    }

    #[test]
    fn every_cell_of_rows_or_changes_is_written_as_the_same_json_as_a_list() {
        let rows = vec![FlatRow {
            source: SourceKind::Interrupts,
            key: "LOC".into(),
            cpus: vec![Some(0), Some(1)],
            values: vec![5, 6],
        }];
        let mut l = line(3);
        l.shape = Some(Shape::default());
        l.cells = vec![
            CellValue {
                source: SourceKind::Interrupts,
                key: "LOC".into(),
                cpu: Some(0),
                value: 5,
            },
            CellValue {
                source: SourceKind::Interrupts,
                key: "LOC".into(),
                cpu: Some(1),
                value: 6,
            },
        ];
        let from_rows = LineOut {
            cells: LineCells::Rows(&rows),
            ..out(&l)
        };
        let a = serde_json::to_string(&from_rows).unwrap();
        assert_eq!(a, serde_json::to_string(&l).unwrap());
        assert_eq!(a, serde_json::to_string(&out(&l)).unwrap());
        let changes = [0, 1].map(|col| Change {
            row: 0,
            col,
            value: rows[0].values[col as usize],
        });
        let from_changes = LineOut {
            cells: LineCells::Changes(&rows, &changes),
            ..out(&l)
        };
        assert_eq!(a, serde_json::to_string(&from_changes).unwrap());
        let back: JournalLine = serde_json::from_str(&a).unwrap();
        assert_eq!(back.cells, l.cells);
    }

    fn line(seq: u64) -> JournalLine {
        JournalLine {
            schema: SCHEMA,
            time: SampleTime {
                seq,
                wall_ns: seq * 10,
                mono_ns: seq,
            },
            shape: None,
            cells: vec![CellValue {
                source: SourceKind::Softirqs,
                key: "HI".into(),
                cpu: Some(1),
                value: seq,
            }],
        }
    }

    #[test]
    fn torn_tail_is_reported_with_its_offset() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j");
        let mut j = RecordJournal::create(&p).unwrap();
        j.append(&out(&line(0))).unwrap();
        j.append(&out(&line(1))).unwrap();
        let good = j.len;
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.extend_from_slice(b"{\"schema\":1,\"seq\":2,\"wal");
        let (lines, pr) = parse(&bytes);
        assert_eq!(lines.len(), 2);
        assert_eq!(pr.torn.as_ref().unwrap().offset, good);
        // named by its line, as a bad line is
        assert_eq!(
            pr.messages(Path::new("j")),
            [format!(
                "j:3: torn last record (24 bytes without a newline) at offset {good}"
            )]
        );
        assert!(pr.bad.is_empty());
        let other = br#"{"schema":9,"seq":0,"wall_ns":0,"mono_ns":0,"cells":[]}
"#;
        let (_, pr) = parse(other);
        assert_eq!(pr.newer, Some((1, 9)));
    }

    /// The journal's length follows from the bytes written (no offset
    /// asked per sample): it is the file's size after appends, a restart
    /// and a line longer than the staging buffer.
    #[test]
    fn journal_length_is_the_bytes_written_without_asking_the_offset() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("j");
        let mut j = RecordJournal::create(&p).unwrap();
        let size = |p: &Path| std::fs::metadata(p).unwrap().len();
        for i in 0..3 {
            j.append(&out(&line(i))).unwrap();
            assert_eq!(j.len, size(&p));
        }
        j.restart().unwrap();
        assert_eq!((j.len, size(&p)), (0, 0));
        let mut long = line(7);
        long.cells = (0..20_000)
            .map(|k| CellValue {
                source: SourceKind::Interrupts,
                key: format!("{k}"),
                cpu: Some(k),
                value: u64::from(k) * 1_000_003,
            })
            .collect();
        j.append(&out(&long)).unwrap();
        j.append(&out(&line(8))).unwrap();
        assert!(j.len > STAGE as u64);
        assert_eq!(j.len, size(&p));
        let (lines, pr) = parse(&std::fs::read(&p).unwrap());
        assert!(pr.is_clean());
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].cells, long.cells);
    }

    /// The lines of `n` samples 0.. as a journal.
    fn journal_of(n: u64) -> Vec<String> {
        (0..n)
            .map(|i| serde_json::to_string(&line(i)).unwrap())
            .collect()
    }

    fn joined(lines: &[String]) -> Vec<u8> {
        (lines.join("\n") + "\n").into_bytes()
    }

    #[test]
    fn a_bad_line_is_skipped_and_every_line_after_it_kept() {
        let good = journal_of(24);
        let nest = "[".repeat(100_000);
        for (what, bad) in [
            ("garbage", "not json at all".to_string()),
            ("truncated", good[5][..good[5].len() / 2].to_string()),
            ("negative", good[5].replace("\"value\":5", "\"value\":-5")),
            ("unknown source", good[5].replace("softirqs", "gpu")),
            (
                "deep nesting",
                format!("{{\"schema\":3,\"seq\":5,\"cells\":{nest}"),
            ),
            ("empty", String::new()),
            (
                "old schema 0",
                good[5].replace("\"schema\":3", "\"schema\":0"),
            ),
        ] {
            let mut v = good.clone();
            v[5] = bad;
            let (lines, pr) = parse(&joined(&v));
            assert_eq!(lines.len(), 23, "{what}");
            assert!(lines.iter().all(|l| l.time.seq != 5), "{what}");
            assert_eq!(pr.bad.len(), 1, "{what}: {pr:?}");
            assert_eq!(pr.bad[0].line, 6, "{what}");
            let offset: usize = good[..5].iter().map(|l| l.len() + 1).sum();
            assert_eq!(pr.bad[0].offset, offset as u64, "{what}");
            let msg = pr.messages(Path::new("j")).join("\n");
            assert!(msg.starts_with("j:6: "), "{what}: {msg}");
            assert!(pr.torn.is_none() && pr.newer.is_none(), "{what}");
        }
        // a garbage first line
        let mut v = good.clone();
        v[0] = "\u{0}\u{0}garbage".into();
        let (lines, pr) = parse(&joined(&v));
        assert_eq!((lines.len(), pr.bad[0].line), (23, 1));
    }

    /// A cell whose CPU or row the layout lacks makes its line a bad
    /// line, named with what the layout has; the lines after it are
    /// kept (not checked until a line lists a layout again).
    /// A line the JSON parser refuses is named file:line, then the
    /// column in the line: not serde's "line 1 column N" after it.
    #[test]
    fn a_bad_lines_column_is_said_after_its_line_without_serdes_line_1() {
        let mut v = journal_of(3);
        let offset = v[0].len() + 1;
        v[1] = v[1].replacen(',', ";", 1);
        let (lines, pr) = parse(&joined(&v));
        assert_eq!(lines.len(), 2);
        let col = v[1].find(';').unwrap() + 1;
        assert_eq!(
            pr.messages(Path::new("j")),
            [format!(
                "j:2: unreadable record: column {col}: expected `,` or `}}` (byte {offset}); line skipped"
            )]
        );
    }

    #[test]
    fn a_cell_of_an_unknown_cpu_or_row_is_a_bad_line_named() {
        let mut v = journal_of(8);
        let mut first = line(0);
        first.shape = Some(Shape {
            soft_cpus: Some(vec![0, 1]),
            soft_rows: vec!["HI".into()],
            ..Shape::default()
        });
        v[0] = serde_json::to_string(&first).unwrap();
        let mut again = line(3);
        again.shape = first.shape.clone();
        v[3] = serde_json::to_string(&again).unwrap();
        v[2] = v[2].replace("\"cpu\":1", "\"cpu\":999");
        v[5] = v[5].replace("\"HI\"", "\"NOPE\"");
        let (lines, pr) = parse(&joined(&v));
        let seqs: Vec<u64> = lines.iter().map(|l| l.time.seq).collect();
        assert_eq!(seqs, [0, 1, 3, 4, 6, 7]);
        let bad: Vec<(u64, &str)> = pr.bad.iter().map(|b| (b.line, b.why.as_str())).collect();
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert_eq!(bad[0].0, 3);
        assert!(
            bad[0].1.contains(
                "softirqs \"HI\" CPU 999: not a cell of the layout (its CPUs there: 0 1)"
            ),
            "{bad:?}"
        );
        // checked again from the next line that lists a layout
        assert_eq!(bad[1].0, 6);
        assert!(bad[1].1.contains("no softirqs row \"NOPE\""), "{bad:?}");
    }

    #[test]
    fn a_duplicated_or_backward_sequence_number_is_a_bad_line() {
        let mut v = journal_of(6);
        v[3] = v[2].clone();
        v[4] = serde_json::to_string(&line(1)).unwrap();
        let (lines, pr) = parse(&joined(&v));
        let seqs: Vec<u64> = lines.iter().map(|l| l.time.seq).collect();
        assert_eq!(seqs, [0, 1, 2, 5]);
        assert_eq!(pr.bad.len(), 2);
        assert!(pr.bad[0]
            .why
            .contains("sample 2 does not follow sample 2 of line 3"));
        assert!(pr.bad[1]
            .why
            .contains("sample 1 does not follow sample 2 of line 3"));
    }

    #[test]
    fn a_newer_schema_is_counted_not_parsed() {
        let v: Vec<String> = journal_of(4)
            .iter()
            .map(|l| l.replace("\"schema\":3", "\"schema\":99"))
            .collect();
        let (lines, pr) = parse(&joined(&v));
        assert!(lines.is_empty());
        assert_eq!((pr.newer, pr.newer_lines), (Some((1, 99)), 4));
        assert!(pr.bad.is_empty());
        // a newer line of another form is not parsed as this schema's
        let (_, pr) = parse(b"{\"schema\":99,\"whatever\":[1]}\n");
        assert_eq!(pr.newer, Some((1, 99)));
    }

    #[test]
    fn a_sparse_journal_is_read_as_one_bad_line_in_bounded_memory() {
        // zero bytes without a newline: a torn tail, never one buffer
        // of the whole file (parsing stops at the first byte)
        let zeros = vec![0u8; 3 << 20];
        let (lines, pr) = parse(&zeros);
        assert!(lines.is_empty());
        assert_eq!(pr.torn.unwrap().offset, 0);
        let mut v = joined(&journal_of(3));
        v.extend_from_slice(&zeros);
        v.push(b'\n');
        v.extend_from_slice(&joined(&journal_of(5)[3..]));
        let (lines, pr) = parse(&v);
        assert_eq!(lines.len(), 5);
        assert_eq!(pr.bad[0].line, 4);
    }

    /// A journal going on past the byte bound stops there wherever the
    /// bound falls: at a line's end, or after the last byte of a full
    /// buffer (a file without a newline, read a buffer at a time), as
    /// inside a line; never read as if the file ended there (whole, or
    /// with a torn last record). A file of exactly the bound is whole.
    #[test]
    fn a_journal_past_the_byte_bound_is_stopped_wherever_the_bound_falls() {
        let bytes = joined(&journal_of(20));
        let ends: Vec<u64> = (1..=bytes.len() as u64)
            .filter(|&i| bytes[i as usize - 1] == b'\n')
            .collect();
        for bound in [ends[9], ends[9] + 1] {
            let (lines, pr) = read_within(&bytes[..], bound).unwrap();
            assert_eq!(lines.len(), 10, "bound {bound}");
            let stopped = pr.stopped.as_ref().map(|t| (t.line, t.offset));
            assert_eq!(stopped, Some((11, ends[9])), "bound {bound}: {pr:?}");
            assert!(pr.torn.is_none(), "{pr:?}");
        }
        let zeros = vec![0u8; (2 << 16) + 10];
        let (lines, pr) = read_within(&zeros[..], 2 << 16).unwrap();
        assert!(lines.is_empty());
        let stopped = pr.stopped.as_ref().map(|t| (t.line, t.offset));
        assert_eq!(stopped, Some((1, 0)), "{pr:?}");
        assert!(pr.torn.is_none(), "{pr:?}");
        let (lines, pr) = read_within(&bytes[..], bytes.len() as u64).unwrap();
        assert_eq!(lines.len(), 20);
        assert!(pr.is_clean(), "{pr:?}");
    }

    #[test]
    fn reading_stops_at_the_byte_bound() {
        let bytes = joined(&journal_of(50));
        let mut s = LineSource::new(&bytes[..], 1000);
        let mut out = Vec::new();
        let (mut pr, mut last) = (Problems::default(), 0);
        let mut n = 0;
        let err = loop {
            match next_line(&mut s, n + 1, &mut out, &mut last, &mut pr) {
                Ok(Some(())) => n += 1,
                Ok(None) => panic!("read past the bound"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        assert!(!out.is_empty() && (out.len() as u64) < 50);
    }
}
