//! Parquet segments: the long table (time, seq, source, key, cpu, value,
//! segment: the file's first sample, the window sum's partition)
//! written with the `parquet` crate (no arrow). Schema 3
//! (docs/recording-schema.md): one `clock` row per sample (its times),
//! rows sorted by cell then sequence, each cell's first row in the segment
//! holding its raw counter and later rows the increment since the row
//! before (a window sum restores the counter), `time` in milliseconds and
//! plain, `seq` and `value` byte-stream-split, `cpu` delta-encoded and
//! each column chunk GZIP-compressed where that makes it smaller; the footer holds the schema version, the
//! shapes when they change (gzip + base64) and the environment of a run's
//! first segment. The open segment is buffered as [`SegmentRows`]
//! (interned keys, 24 bytes a row) and written in chunks. And the reader
//! back (schemas 1 to 3), which checks what it reads (`check`: columns,
//! values, rows against the footer) and turns any failure (including a
//! panic inside the decoder) into an error naming the file.

mod check;

use super::pack;
use super::schema::{
    readable, unreadable, CellValue, SampleTime, Seqs, ShapeAt, SourceKind, CLOCK_KEY,
    CLOCK_SOURCE, KEY_ENV, KEY_SAMPLES, KEY_SCHEMA, KEY_SEQS, KEY_SHAPES, SCHEMA, WALL_NS_STEP,
};
use anyhow::{anyhow, bail, Context};
use check::ReadRow;
use parquet::basic::{Compression, Encoding};
use parquet::column::writer::{get_typed_column_writer_mut as typed, ColumnWriter};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The Parquet schema of the long table (docs/recording-schema.md).
pub const MESSAGE: &str = "message irqlab_cells {
  required int64 time (TIMESTAMP(MILLIS,true));
  required int64 seq;
  required binary source (STRING);
  required binary key (STRING);
  optional int32 cpu;
  required int64 value;
  required int64 segment;
}";

/// The samples of one segment: times, shapes and changed cells per sample.
#[derive(Debug, Clone, Default)]
pub struct SegmentData {
    pub samples: Vec<SampleTime>,
    /// Shapes taking effect in this segment; empty when the segment keeps
    /// the shape of the segment before it.
    pub shapes: Vec<ShapeAt>,
    /// (seq, cell) in any order; raw counters.
    pub cells: Vec<(u64, CellValue)>,
    /// The environment as JSON (same collector as bench); empty except in
    /// the first segment of a run.
    pub environment: String,
}

/// A counter in the INT64 `value` column: its 64 bits as two's complement
/// (a counter at or above 2^63 reads negative; add 2^64), and increments
/// wrap the same way, so that every u64 reads back exactly
/// (docs/recording-schema.md). `seq` and `time` never come near 2^63.
fn i64_of(v: u64) -> i64 {
    v as i64
}

fn props(data: &SegmentBuf, rows: u64) -> anyhow::Result<WriterProperties> {
    let seqs = Seqs::of(data.samples.iter().map(|s| s.seq), rows);
    let mut kv = vec![
        KeyValue::new(KEY_SCHEMA.into(), SCHEMA.to_string()),
        KeyValue::new(KEY_SEQS.into(), serde_json::to_string(&seqs)?),
    ];
    if !data.shapes.is_empty() {
        let json = serde_json::to_string(&data.shapes)?;
        kv.push(KeyValue::new(KEY_SHAPES.into(), pack::pack(&json)?));
    }
    if !data.environment.is_empty() {
        kv.push(KeyValue::new(KEY_ENV.into(), data.environment.clone()));
    }
    let mut b = WriterProperties::builder()
        // GZIP level 9 where it makes a column chunk smaller, applied by
        // `gzip::write_row_group` (one kept deflate state)
        .set_compression(Compression::UNCOMPRESSED)
        .set_statistics_enabled(EnabledStatistics::None)
        .set_offset_index_disabled(true)
        .set_created_by(format!("irqlab {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(kv));
    // min/max of time let engines skip segments outside a window;
    // byte-stream-split + GZIP measured smallest for seq and the
    // increments, delta for cpu (ascending within a cell run: a third off
    // at 1152 CPUs), plain for the millisecond times (a cell changing every
    // sample repeats the run of times before it, which GZIP finds; their
    // dictionary cost 5 % more) (BENCHMARKS.md "Recording size")
    b = b.set_column_statistics_enabled(ColumnPath::from("time"), EnabledStatistics::Chunk);
    for (col, enc) in [
        ("time", Encoding::PLAIN),
        ("seq", Encoding::BYTE_STREAM_SPLIT),
        ("cpu", Encoding::DELTA_BINARY_PACKED),
        ("value", Encoding::BYTE_STREAM_SPLIT),
    ] {
        b = b
            .set_column_dictionary_enabled(ColumnPath::from(col), false)
            .set_column_encoding(ColumnPath::from(col), enc);
    }
    Ok(b.build())
}

/// Placeholder of [`CellRow::cpu`] for a cell without a CPU (NULL).
const NO_CPU: u32 = u32::MAX;

/// One buffered row: 24 bytes, its (source, key) interned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CellRow {
    seq: u64,
    /// Raw counter; becomes the increment when written.
    value: u64,
    key: u32,
    /// [`NO_CPU`] for NULL.
    cpu: u32,
}

/// The cells of a segment being written: (source, key) interned, one
/// `CellRow` per changed cell, so that a big machine's first sample
/// (every cell) costs 24 bytes a cell and sorting compares integers.
#[derive(Debug, Clone, Default)]
pub struct SegmentRows {
    keys: Vec<(SourceKind, String)>,
    ids: HashMap<SourceKind, HashMap<String, u32>>,
    rows: Vec<CellRow>,
}

impl SegmentRows {
    /// The id of (source, key), interned on first use.
    pub fn key(&mut self, source: SourceKind, key: &str) -> u32 {
        let ids = self.ids.entry(source).or_default();
        if let Some(&id) = ids.get(key) {
            return id;
        }
        let id = u32::try_from(self.keys.len()).unwrap_or(u32::MAX);
        ids.insert(key.to_string(), id);
        self.keys.push((source, key.to_string()));
        id
    }

    /// A row of key `key` (from [`SegmentRows::key`]).
    pub fn push(&mut self, seq: u64, key: u32, cpu: Option<u32>, value: u64) {
        self.rows.push(CellRow {
            seq,
            value,
            key,
            cpu: cpu.unwrap_or(NO_CPU),
        });
    }

    /// A changed cell at sample `seq`.
    pub fn push_cell(&mut self, seq: u64, c: &CellValue) {
        let key = self.key(c.source, &c.key);
        self.push(seq, key, c.cpu, c.value);
    }

    /// Rows buffered.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Make room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.rows.reserve(n);
    }
}

/// A segment being written: the samples, shapes and cells of
/// [`SegmentData`] with the cells in the compact [`SegmentRows`].
#[derive(Debug, Clone, Default)]
pub struct SegmentBuf {
    pub samples: Vec<SampleTime>,
    pub shapes: Vec<ShapeAt>,
    pub rows: SegmentRows,
    pub environment: String,
}

impl From<SegmentData> for SegmentBuf {
    fn from(d: SegmentData) -> SegmentBuf {
        let mut rows = SegmentRows::default();
        rows.reserve(d.cells.len());
        for (seq, c) in &d.cells {
            rows.push_cell(*seq, c);
        }
        SegmentBuf {
            samples: d.samples,
            shapes: d.shapes,
            rows,
            environment: d.environment,
        }
    }
}

/// Rows written per `write_batch` call (bounds the column buffers).
const CHUNK: usize = 1 << 16;

/// The table in write order: clock rows and cells sorted by (source, key,
/// cpu, seq) as strings compare, through integer ranks of the keys.
struct Sorted {
    /// (source, key) by rank.
    names: Vec<(ByteArray, ByteArray)>,
    /// Rows with `key` replaced by its rank.
    rows: Vec<CellRow>,
}

fn sorted(buf: &mut SegmentBuf) -> Sorted {
    let mut names: Vec<(&str, &str)> = buf
        .rows
        .keys
        .iter()
        .map(|(s, k)| (s.name(), k.as_str()))
        .collect();
    let clock = names.len();
    names.push((CLOCK_SOURCE, CLOCK_KEY));
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| names.get(i).copied());
    let mut rank = vec![0u32; names.len()];
    for (r, &i) in order.iter().enumerate() {
        if let Some(x) = rank.get_mut(i) {
            *x = u32::try_from(r).unwrap_or(u32::MAX);
        }
    }
    let rank_of = |i: usize| rank.get(i).copied().unwrap_or(u32::MAX);
    let mut rows = std::mem::take(&mut buf.rows.rows);
    rows.reserve(buf.samples.len());
    for r in &mut rows {
        r.key = rank_of(r.key as usize);
    }
    let clock = rank_of(clock);
    rows.extend(buf.samples.iter().map(|s| CellRow {
        seq: s.seq,
        value: s.mono_ns,
        key: clock,
        cpu: NO_CPU,
    }));
    // NULL (no CPU) sorts first, as `Option` does
    rows.sort_unstable_by_key(|r| (r.key, r.cpu.wrapping_add(1), r.seq));
    let names = order
        .iter()
        .filter_map(|&i| names.get(i))
        .map(|&(s, k)| (ByteArray::from(s), ByteArray::from(k)))
        .collect();
    Sorted { names, rows }
}

/// The `value` column of `rows[at..]` (chunk): a cell's first row raw,
/// later rows the increment since its row before (negative when a counter
/// went back).
fn increment(rows: &[CellRow], i: usize) -> i64 {
    let (Some(r), prev) = (rows.get(i), i.checked_sub(1).and_then(|j| rows.get(j))) else {
        return 0;
    };
    match prev {
        Some(p) if (p.key, p.cpu) == (r.key, r.cpu) => {
            i64_of(r.value).wrapping_sub(i64_of(p.value))
        }
        _ => i64_of(r.value),
    }
}

/// Write column `i` of `t`, chunk by chunk.
fn write_column(
    i: usize,
    col: &mut ColumnWriter<'_>,
    t: &Sorted,
    wall: &dyn Fn(u64) -> u64,
    segment: u64,
) -> parquet::errors::Result<()> {
    let name = |r: &CellRow| t.names.get(r.key as usize);
    {
        let mut at = 0;
        for chunk in t.rows.chunks(CHUNK) {
            match i {
                0 | 1 | 5 | 6 => {
                    let v: Vec<i64> = match i {
                        0 => chunk
                            .iter()
                            .map(|r| i64_of(wall(r.seq) / WALL_NS_STEP))
                            .collect(),
                        1 => chunk.iter().map(|r| i64_of(r.seq)).collect(),
                        // the file's first sample: one dictionary entry
                        6 => vec![i64_of(segment); chunk.len()],
                        _ => (at..at + chunk.len())
                            .map(|j| increment(&t.rows, j))
                            .collect(),
                    };
                    typed::<Int64Type>(col).write_batch(&v, None, None)?;
                }
                2 | 3 => {
                    let v: Vec<ByteArray> = chunk
                        .iter()
                        .map(|r| {
                            name(r)
                                .map(|n| if i == 2 { n.0.clone() } else { n.1.clone() })
                                .unwrap_or_default()
                        })
                        .collect();
                    typed::<ByteArrayType>(col).write_batch(&v, None, None)?;
                }
                _ => {
                    let def: Vec<i16> = chunk.iter().map(|r| i16::from(r.cpu != NO_CPU)).collect();
                    let v: Vec<i32> = chunk
                        .iter()
                        .filter(|r| r.cpu != NO_CPU)
                        .map(|r| i32::try_from(r.cpu).unwrap_or(i32::MAX))
                        .collect();
                    typed::<Int32Type>(col).write_batch(&v, Some(&def), None)?;
                }
            }
            at += chunk.len();
        }
    }
    Ok(())
}

/// Write `data` to `path` (through a temporary file renamed into place, so
/// a segment is either whole or absent). Returns the file size. The cells
/// of `data` are consumed (its samples, shapes and environment stay).
pub fn write(path: &Path, data: &mut SegmentBuf) -> anyhow::Result<u64> {
    let t = sorted(data);
    let samples = &data.samples;
    let wall = |seq: u64| {
        samples
            .binary_search_by_key(&seq, |s| s.seq)
            .ok()
            .and_then(|i| samples.get(i))
            .map_or(0, |s| s.wall_ns)
    };
    let first = samples.first().map_or(0, |s| s.seq);
    let tmp = path.with_extension("parquet.tmp");
    let schema = Arc::new(parquet::schema::parser::parse_message_type(MESSAGE)?);
    // made in memory, then written in one call (the writer flushes after
    // every column chunk: a file would take one write per column)
    let mut w = SerializedFileWriter::new(
        Vec::new(),
        schema,
        Arc::new(props(data, t.rows.len() as u64)?),
    )
    .with_context(|| format!("writing {}", tmp.display()))?;
    let res = super::gzip::write_row_group(&mut w, |i, col| write_column(i, col, &t, &wall, first));
    let bytes = res
        .and_then(|()| w.into_inner())
        .map_err(|e| anyhow!("{}: {e}", tmp.display()))?;
    write_whole(&tmp, path, &bytes)
}

/// Write `bytes` to `tmp`, then rename it to `path` (a file is whole or
/// absent; a `tmp` left by a crash is removed by recovery). Returns the
/// size written. A failed write removes `tmp`.
///
/// Durable when it returns: the data is synced before the rename and the
/// directory after it, because what callers do next (truncate the
/// journal, remove the file a merged one replaces, remove a recovered
/// journal) must not reach the disk first: after a power loss or a kernel
/// panic the file could be empty and its samples in no other file.
pub(super) fn write_whole(tmp: &Path, path: &Path, bytes: &[u8]) -> anyhow::Result<u64> {
    let written = std::fs::File::create(tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_data()))
        .with_context(|| format!("cannot write {}", tmp.display()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(tmp);
        return Err(e);
    }
    std::fs::rename(tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
    sync_dir(path)?;
    Ok(bytes.len() as u64)
}

/// Sync the directory holding `path` (the rename into it made durable);
/// a file system that cannot sync a directory (EINVAL) is left as it is.
fn sync_dir(path: &Path) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match std::fs::File::open(dir).and_then(|d| d.sync_all()) {
        Err(e) if e.kind() != std::io::ErrorKind::InvalidInput => {
            Err(e).with_context(|| format!("cannot sync directory {}", dir.display()))
        }
        _ => Ok(()),
    }
}

/// Read a segment back; any failure names the file.
pub fn read(path: &Path) -> anyhow::Result<SegmentData> {
    named(path, read_inner)
}

fn footer(kv: &[KeyValue], key: &str) -> anyhow::Result<String> {
    kv.iter()
        .find(|k| k.key == key)
        .and_then(|k| k.value.clone())
        .ok_or_else(|| anyhow!("footer has no {key}"))
}

/// Every row of `reader` (a file whose columns [`check::columns`]
/// checked; `segment`: whether it has that column), each row's values
/// checked: the `segment` column is the same in every row.
fn read_rows(
    reader: &SerializedFileReader<std::fs::File>,
    segment: bool,
) -> anyhow::Result<(Vec<ReadRow>, Option<u64>)> {
    let mut out = Vec::new();
    let mut first: Option<u64> = None;
    for group in 0..reader.num_row_groups() {
        let rg = reader.get_row_group(group).map_err(|e| anyhow!("{e}"))?;
        for (row, r) in rg
            .get_row_iter(None)
            .map_err(|e| anyhow!("{e}"))?
            .enumerate()
        {
            let r = r.map_err(|e| anyhow!("{e}"))?;
            let at = check::At { group, row };
            let (read, seg) = check::row(&r, at)?;
            if segment && seg.is_none() {
                bail!("{at}: segment is absent, expected the file's first sample");
            }
            if let (Some(a), Some(b)) = (first, seg) {
                if a != b {
                    bail!("{at}: segment is {b}, the first row says {a} (rows of two files)");
                }
            }
            first = first.or(seg);
            out.push(read);
        }
    }
    Ok((out, first))
}

/// A segment opened: its Parquet reader, footer key-values, schema
/// version and whether it has the `segment` column.
struct Opened {
    reader: SerializedFileReader<std::fs::File>,
    kv: Vec<KeyValue>,
    schema: u32,
    segment: bool,
}

impl Opened {
    /// The rows the file's metadata counts.
    fn num_rows(&self) -> u64 {
        u64::try_from(self.reader.metadata().file_metadata().num_rows()).unwrap_or(0)
    }

    /// The footer's `irqlab.seqs`, checked against the file's row count
    /// (`None`: a file written before that key).
    fn seqs(&self) -> anyhow::Result<Option<Seqs>> {
        match footer(&self.kv, KEY_SEQS) {
            Ok(json) => check::footer_seqs(&json, self.num_rows()).map(Some),
            Err(_) => Ok(None),
        }
    }
}

/// The Parquet reader of a segment, opened as every input is
/// (`crate::host::open_regular`: never blocks, regular files only) and no
/// larger than [`MAX_READ`](crate::host::MAX_READ); its footer key-values,
/// schema version, and its columns checked ([`check::columns`]).
fn open(path: &Path) -> anyhow::Result<Opened> {
    let file = crate::host::open_regular(path)?;
    let len = file.metadata()?.len();
    if len > crate::host::MAX_READ as u64 {
        bail!(
            "{len} bytes, more than {} (docs/limits.md)",
            crate::host::MAX_READ
        );
    }
    let reader = SerializedFileReader::new(file).map_err(|e| anyhow!("{e}"))?;
    let kv = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned()
        .unwrap_or_default();
    let schema: u32 = footer(&kv, KEY_SCHEMA)?
        .trim()
        .parse()
        .context("bad schema version")?;
    if !readable(schema) {
        bail!("{}", unreadable(schema));
    }
    let segment = check::columns(reader.metadata().file_metadata().schema_descr(), schema)?;
    Ok(Opened {
        reader,
        kv,
        schema,
        segment,
    })
}

/// `f` on `path`, with any failure (a panic inside the decoder too) an
/// error naming the file.
fn named<T>(path: &Path, f: impl FnOnce(&Path) -> anyhow::Result<T>) -> anyhow::Result<T> {
    let p = path.to_path_buf();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || f(&p))) {
        Ok(r) => r.with_context(|| format!("{}: not a readable irqlab segment", path.display())),
        Err(_) => bail!(
            "{}: corrupt Parquet file (the decoder gave up)",
            path.display()
        ),
    }
}

/// The shapes of the segment at `path`, from its footer alone (empty
/// when it keeps the shape of the segment before it).
pub fn footer_shapes(path: &Path) -> anyhow::Result<Vec<ShapeAt>> {
    named(path, |p| {
        let o = open(p)?;
        let Ok(text) = footer(&o.kv, KEY_SHAPES) else {
            return Ok(Vec::new());
        };
        let json = match o.schema {
            1 => text,
            _ => pack::unpack(&text).context("footer irqlab.shapes")?,
        };
        serde_json::from_str(&json).context("footer irqlab.shapes")
    })
}

/// The samples and row count of the segment at `path`, checked: from its
/// footer (`irqlab.seqs`, whose row count must be the file's), or, for a
/// segment written before that key, from its rows. A file that is not
/// whole, or whose footer does not add up, is an error naming it.
pub fn seqs(path: &Path) -> anyhow::Result<Seqs> {
    named(path, |p| {
        let o = open(p)?;
        match o.seqs()? {
            Some(s) => Ok(s),
            None => {
                let rows = o.num_rows();
                let d = read_opened(o)?;
                Ok(Seqs::of(d.samples.iter().map(|s| s.seq), rows))
            }
        }
    })
}

/// The sample times and shapes of the segment at `path`, without its
/// counters (`cells` empty): what is said of a recording's samples (holes,
/// clocks) needs no more. Its footer, then its `clock` rows, which the
/// writer's order puts first (`clock` sorts before every source), so only
/// the file's first rows are read. A file whose first rows are not
/// exactly the samples its footer lists (another order, no
/// `irqlab.seqs`, schema 1) is read whole ([`read`]). Its counters are not
/// read: a file damaged only there reads here, and [`read`] names it.
pub fn times(path: &Path) -> anyhow::Result<SegmentData> {
    named(path, times_inner)
}

/// A segment's sample times and shapes already read: its path and
/// [`times`]' data (no counters), which [`times_or`] gives for that path
/// instead of reading the file again.
pub type Known<'a> = Option<&'a (PathBuf, SegmentData)>;

/// [`times`] of the segment at `path`, or a copy of `known`'s data when
/// it is that segment's.
pub fn times_or(path: &Path, known: Known<'_>) -> anyhow::Result<SegmentData> {
    match known {
        Some((p, d)) if p == path => Ok(d.clone()),
        _ => times(path),
    }
}

fn times_inner(path: &Path) -> anyhow::Result<SegmentData> {
    let o = open(path)?;
    let Some(want) = o.seqs()?.filter(|_| o.schema >= 2) else {
        return read_opened(o);
    };
    let Some(samples) = leading_clock_rows(&o, &want)? else {
        return read_opened(o);
    };
    let mut data = SegmentData {
        samples,
        environment: footer(&o.kv, KEY_ENV).unwrap_or_default(),
        ..SegmentData::default()
    };
    if let Ok(packed) = footer(&o.kv, KEY_SHAPES) {
        let json = pack::unpack(&packed).context("footer irqlab.shapes")?;
        data.shapes = serde_json::from_str(&json).context("footer irqlab.shapes")?;
    }
    Ok(data)
}

/// The samples of the `clock` rows at the start of an opened segment
/// (schema 2 on), when they are exactly those of `want` (its footer's) in
/// order; `None` otherwise (read the file whole). Reads up to the first
/// row of another source.
fn leading_clock_rows(o: &Opened, want: &Seqs) -> anyhow::Result<Option<Vec<SampleTime>>> {
    let mut out: Vec<SampleTime> = Vec::new();
    let mut mono = 0i64;
    'groups: for group in 0..o.reader.num_row_groups() {
        let rg = o.reader.get_row_group(group).map_err(|e| anyhow!("{e}"))?;
        let rows = rg.get_row_iter(None).map_err(|e| anyhow!("{e}"))?;
        for (row, r) in rows.enumerate() {
            let r = r.map_err(|e| anyhow!("{e}"))?;
            let ((src, key, cpu, seq, time, value), _) = check::row(&r, check::At { group, row })?;
            if src != CLOCK_SOURCE {
                break 'groups;
            }
            if out.last().is_some_and(|l| l.seq >= seq) || !want.has(seq) {
                return Ok(None);
            }
            // the first row raw, later rows increments (`sum_increments`)
            mono = match out.is_empty() {
                true => value,
                false => mono.wrapping_add(value),
            };
            out.push(clock_row(o.schema, &key, cpu, seq, time, mono as u64)?);
        }
    }
    let got = Seqs::of(out.iter().map(|s| s.seq), want.rows);
    Ok((got.runs == want.runs).then_some(out))
}

fn read_inner(path: &Path) -> anyhow::Result<SegmentData> {
    read_opened(open(path)?)
}

/// The samples, shapes and cells of an opened segment, checked against
/// its footer ([`check::rows`]).
fn read_opened(o: Opened) -> anyhow::Result<SegmentData> {
    let footer_seqs = o.seqs()?;
    let (mut rows, segment) = read_rows(&o.reader, o.segment)?;
    let (schema, kv) = (o.schema, &o.kv);
    let mut data = SegmentData {
        environment: footer(kv, KEY_ENV).unwrap_or_default(),
        ..SegmentData::default()
    };
    if schema == 1 {
        data.samples = serde_json::from_str(&footer(kv, KEY_SAMPLES)?)?;
        data.shapes = serde_json::from_str(&footer(kv, KEY_SHAPES)?)?;
    } else {
        if let Ok(packed) = footer(kv, KEY_SHAPES) {
            let json = pack::unpack(&packed).context("footer irqlab.shapes")?;
            data.shapes = serde_json::from_str(&json).context("footer irqlab.shapes")?;
        }
        sum_increments(&mut rows);
    }
    for (src, key, cpu, seq, time, value) in rows {
        // the counter's 64 bits (`i64_of`)
        let value = value as u64;
        if schema >= 2 && src == CLOCK_SOURCE {
            data.samples
                .push(clock_row(schema, &key, cpu, seq, time, value)?);
            continue;
        }
        let source =
            SourceKind::from_name(&src).ok_or_else(|| anyhow!("unknown source {src:?}"))?;
        data.cells.push((
            seq,
            CellValue {
                source,
                key,
                cpu,
                value,
            },
        ));
    }
    data.samples.sort_by_key(|s| s.seq);
    check::rows(&data.samples, &data.cells, footer_seqs.as_ref())?;
    if let (Some(seg), Some(first)) = (segment, data.samples.first()) {
        if seg != first.seq {
            bail!(
                "its segment column says {seg}, its first sample is {} (rows of another file)",
                first.seq
            );
        }
    }
    Ok(data)
}

/// Schemas 2 and 3: a cell's first row is raw, later rows increments:
/// sum them (rows sorted by cell, then sample).
fn sum_increments(rows: &mut [ReadRow]) {
    rows.sort_by(|a, b| (&a.0, &a.1, a.2, a.3).cmp(&(&b.0, &b.1, b.2, b.3)));
    let mut sum = 0i64;
    let mut prev: Option<(&str, &str, Option<u32>)> = None;
    for r in rows.iter_mut() {
        let same = prev == Some((r.0.as_str(), r.1.as_str(), r.2));
        // wrapping: the value column is a counter's 64 bits (`i64_of`)
        sum = if same { sum.wrapping_add(r.5) } else { r.5 };
        r.5 = sum;
        prev = Some((r.0.as_str(), r.1.as_str(), r.2));
    }
}

/// A sample's clocks from its `clock` row (schemas 2 and 3): `time` in
/// nanoseconds (schema 2) or milliseconds (3), `value` CLOCK_MONOTONIC.
fn clock_row(
    schema: u32,
    key: &str,
    cpu: Option<u32>,
    seq: u64,
    time: i64,
    mono_ns: u64,
) -> anyhow::Result<SampleTime> {
    if key != CLOCK_KEY || cpu.is_some() {
        bail!(
            "sample {seq}: a clock row of key {key:?} and CPU {cpu:?}, expected key {CLOCK_KEY:?} and no CPU"
        );
    }
    let step = if schema >= 3 { WALL_NS_STEP } else { 1 };
    let wall_ns = u64::try_from(time)
        .ok()
        .and_then(|t| t.checked_mul(step))
        .ok_or_else(|| anyhow!("sample {seq}: time {time} is out of range"))?;
    Ok(SampleTime {
        seq,
        wall_ns,
        mono_ns,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::record::schema::Shape;

    /// A segment file is whole or absent: written to the temporary name
    /// and renamed, no temporary left; a write that fails leaves neither.
    #[test]
    fn write_whole_leaves_the_whole_file_or_nothing() {
        let d = tempfile::tempdir().unwrap();
        let (tmp, path) = (d.path().join("a.parquet.tmp"), d.path().join("a.parquet"));
        assert_eq!(write_whole(&tmp, &path, b"PAR1 data PAR1").unwrap(), 14);
        assert_eq!(std::fs::read(&path).unwrap(), b"PAR1 data PAR1");
        assert!(!tmp.exists());
        let gone = d.path().join("absent/b.parquet");
        let err = write_whole(&gone.with_extension("parquet.tmp"), &gone, b"x").unwrap_err();
        assert!(format!("{err:#}").contains("cannot write"), "{err:#}");
        assert!(!gone.exists() && !gone.with_extension("parquet.tmp").exists());
    }

    /// Samples 5 to 8, about a second apart (wall clock in whole
    /// milliseconds, as schema 3 keeps it).
    fn samples_5_to_8() -> Vec<SampleTime> {
        (5..9)
            .map(|seq| SampleTime {
                seq,
                wall_ns: 1_700_000_000_000_000_000 + seq * 1_000_007_000_000,
                mono_ns: 42 + seq * 999_999_937,
            })
            .collect()
    }

    /// One shape from sample 5 on: the softirq row `HI`.
    fn hi_from_5() -> Vec<ShapeAt> {
        vec![ShapeAt {
            seq: 5,
            shape: Shape {
                soft_rows: vec!["HI".into()],
                ..Shape::default()
            },
        }]
    }

    fn cell(source: SourceKind, key: &str, cpu: Option<u32>, value: u64) -> CellValue {
        CellValue {
            source,
            key: key.into(),
            cpu,
            value,
        }
    }

    /// [`times`] gives the samples and shapes [`read`] gives, without the
    /// counters, from the clock rows alone: a file whose counters are
    /// damaged (a counter listed twice in a sample) reads there.
    #[test]
    fn times_reads_the_samples_and_shapes_without_the_counters() {
        let samples = samples_5_to_8();
        let loc = |v| cell(SourceKind::Interrupts, "LOC", Some(0), v);
        let data = SegmentData {
            samples: samples.clone(),
            shapes: hi_from_5(),
            cells: vec![(5, loc(1)), (7, loc(3))],
            environment: "{}".into(),
        };
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("part-0000000005-0000000008.parquet");
        write(&p, &mut SegmentBuf::from(data.clone())).unwrap();
        let t = times(&p).unwrap();
        assert_eq!(t.samples, samples);
        assert_eq!(t.shapes, data.shapes);
        assert!(t.cells.is_empty());
        assert_eq!(read(&p).unwrap().samples, samples);
        let mut twice = data.clone();
        twice.cells.push((7, loc(3)));
        write(&p, &mut SegmentBuf::from(twice)).unwrap();
        let e = format!("{:#}", read(&p).unwrap_err());
        assert!(e.contains("listed twice"), "{e}");
        assert_eq!(times(&p).unwrap().samples, samples);
    }

    #[test]
    fn raw_counters_survive_increments_clock_rows_and_packed_shapes() {
        let samples = samples_5_to_8();
        let cells = vec![
            (5, cell(SourceKind::Interrupts, "LOC", Some(0), 1_000)),
            (5, cell(SourceKind::Interrupts, "LOC", Some(1), 7)),
            (5, cell(SourceKind::Stat, "ctxt", None, u64::MAX)),
            (6, cell(SourceKind::Interrupts, "LOC", Some(0), 1_300)),
            // a counter that went back (an IRQ number reused)
            (7, cell(SourceKind::Interrupts, "LOC", Some(1), 2)),
            (8, cell(SourceKind::Interrupts, "LOC", Some(0), 1_301)),
        ];
        let data = SegmentData {
            samples: samples.clone(),
            shapes: hi_from_5(),
            cells: cells.clone(),
            environment: String::new(),
        };
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("part-0000000005-0000000008.parquet");
        write(&p, &mut SegmentBuf::from(data.clone())).unwrap();
        let back = read(&p).unwrap();
        assert_eq!(back.samples, samples);
        assert_eq!(back.shapes, data.shapes);
        let mut want: Vec<(u64, CellValue)> = cells.into_iter().collect();
        let mut got = back.cells;
        let key = |x: &(u64, CellValue)| (x.1.source, x.1.key.clone(), x.1.cpu, x.0);
        want.sort_by_key(key);
        got.sort_by_key(key);
        assert_eq!(got, want);
        assert!(back.environment.is_empty());
        assert!(!d
            .path()
            .join("part-0000000005-0000000008.parquet.tmp")
            .exists());
    }

    #[test]
    fn counters_at_or_above_2_pow_63_are_stored_as_their_64_bits_and_read_back_exactly() {
        let samples: Vec<SampleTime> = (0..4)
            .map(|seq| SampleTime {
                seq,
                wall_ns: seq * 1_000_000,
                mono_ns: seq,
            })
            .collect();
        let big = 1u64 << 63;
        let cells = vec![
            (0, cell(SourceKind::Stat, "ctxt", None, big - 1)),
            (1, cell(SourceKind::Stat, "ctxt", None, big + 5)),
            (2, cell(SourceKind::Stat, "ctxt", None, u64::MAX)),
            (3, cell(SourceKind::Stat, "ctxt", None, 3)),
            (
                0,
                cell(SourceKind::Threads, "ksoftirqd/0", Some(0), u64::MAX),
            ),
        ];
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("part-0000000000-0000000003.parquet");
        let data = SegmentData {
            samples,
            cells: cells.clone(),
            ..SegmentData::default()
        };
        write(&p, &mut SegmentBuf::from(data)).unwrap();
        let mut got = read(&p).unwrap().cells;
        got.sort_by_key(|c| (c.1.source, c.0));
        let mut want = cells;
        want.sort_by_key(|c| (c.1.source, c.0));
        assert_eq!(got, want, "no clamp at i64::MAX");
        let s = seqs(&p).unwrap();
        assert_eq!((s.runs.clone(), s.rows), (vec![[0, 3]], 9));
    }

    /// The same segment with the parquet crate's GZIP codec on every
    /// column chunk (the writer before `gzip::write_row_group`).
    fn gzip_everywhere(data: &mut SegmentBuf) -> Vec<u8> {
        let t = sorted(data);
        let samples = data.samples.clone();
        let wall = |seq: u64| {
            samples
                .iter()
                .find(|s| s.seq == seq)
                .map_or(0, |s| s.wall_ns)
        };
        let first = samples[0].seq;
        // the writer's own properties, GZIP on every chunk
        let b = props(data, t.rows.len() as u64)
            .unwrap()
            .into_builder()
            .set_compression(Compression::GZIP(
                parquet::basic::GzipLevel::try_new(9).unwrap(),
            ));
        let schema = Arc::new(parquet::schema::parser::parse_message_type(MESSAGE).unwrap());
        let mut w = SerializedFileWriter::new(Vec::new(), schema, Arc::new(b.build())).unwrap();
        let mut rg = w.next_row_group().unwrap();
        let mut i = 0;
        while let Some(mut col) = rg.next_column().unwrap() {
            write_column(i, col.untyped(), &t, &wall, first).unwrap();
            col.close().unwrap();
            i += 1;
        }
        rg.close().unwrap();
        w.into_inner().unwrap()
    }

    /// Record's fixed cost: its Parquet pages are compressed by one kept
    /// deflate state, each column chunk GZIP only where that is smaller,
    /// so a segment (a one-sample run's, and a bigger one) is never larger
    /// than with GZIP on every chunk, and reads back the same.
    #[test]
    fn gzip_only_where_smaller_keeps_segments_no_larger_and_readable() {
        for (samples_n, keys) in [(2u64, 40usize), (60, 300)] {
            let samples: Vec<SampleTime> = (0..samples_n)
                .map(|seq| SampleTime {
                    seq,
                    wall_ns: 1_700_000_000_000_000_000 + seq * 1_000_000_000,
                    mono_ns: 5 + seq * 1_000_000_123,
                })
                .collect();
            let mut cells = Vec::new();
            for k in 0..keys {
                for seq in 0..samples_n {
                    // every cell in the first sample, a few changing later
                    if seq == 0 || k % 7 == (seq as usize) % 7 {
                        let key = format!("IRQ{}", k / 2);
                        let v = 1_000 * k as u64 + seq * (k as u64 % 5);
                        cells.push((
                            seq,
                            cell(SourceKind::Interrupts, &key, Some(k as u32 % 2), v),
                        ));
                    }
                }
            }
            let data = SegmentData {
                samples,
                cells,
                environment: "{\"kernel\":\"6.18\"}".into(),
                ..SegmentData::default()
            };
            let d = tempfile::tempdir().unwrap();
            let p = d.path().join("part.parquet");
            let n = write(&p, &mut SegmentBuf::from(data.clone())).unwrap();
            let before = gzip_everywhere(&mut SegmentBuf::from(data.clone()));
            assert!(n <= before.len() as u64, "{n} > {} bytes", before.len());
            let meta = SerializedFileReader::new(std::fs::File::open(&p).unwrap())
                .unwrap()
                .metadata()
                .clone();
            let codec = |name: &str| {
                let rg = meta.row_group(0);
                let c = rg
                    .columns()
                    .iter()
                    .find(|c| c.column_path().string() == name)
                    .unwrap();
                c.compression()
            };
            // a constant column stays as encoded; the times compress
            assert_eq!(codec("segment"), Compression::UNCOMPRESSED);
            assert!(matches!(codec("time"), Compression::GZIP(_)));
            let back = read(&p).unwrap();
            assert_eq!(back.samples, data.samples);
            assert_eq!(back.cells.len(), data.cells.len());
        }
    }
}
