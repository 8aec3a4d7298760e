//! Parquet segments: the long table (time, seq, source, key, cpu, value)
//! written with the `parquet` crate (no arrow). Schema 2
//! (docs/recording-schema.md): one `clock` row per sample (its times),
//! rows sorted by cell then sequence, each cell's first row in the segment
//! holding its raw counter and later rows the increment since the row
//! before (a window sum restores the counter), `seq` and `value`
//! byte-stream-split and everything GZIP-compressed; the footer holds the schema version, the
//! shapes when they change (gzip + base64) and the environment of a run's
//! first segment. And the reader back (schemas 1 and 2), which turns any
//! failure (including a panic inside the decoder) into an error naming the
//! file.

use super::pack;
use super::schema::{
    readable, unreadable, CellValue, SampleTime, ShapeAt, SourceKind, CLOCK_KEY, CLOCK_SOURCE,
    KEY_ENV, KEY_SAMPLES, KEY_SCHEMA, KEY_SHAPES, SCHEMA,
};
use anyhow::{anyhow, bail, Context};
use parquet::basic::{Compression, Encoding, GzipLevel};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::{Field, RowAccessor};
use parquet::schema::types::ColumnPath;
use std::path::Path;
use std::sync::Arc;

/// The Parquet schema of the long table (docs/recording-schema.md).
pub const MESSAGE: &str = "message irqlab_cells {
  required int64 time (TIMESTAMP(NANOS,true));
  required int64 seq;
  required binary source (STRING);
  required binary key (STRING);
  optional int32 cpu;
  required int64 value;
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

fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn props(data: &SegmentData) -> anyhow::Result<WriterProperties> {
    let mut kv = vec![KeyValue::new(KEY_SCHEMA.into(), SCHEMA.to_string())];
    if !data.shapes.is_empty() {
        let json = serde_json::to_string(&data.shapes)?;
        kv.push(KeyValue::new(KEY_SHAPES.into(), pack::pack(&json)?));
    }
    if !data.environment.is_empty() {
        kv.push(KeyValue::new(KEY_ENV.into(), data.environment.clone()));
    }
    let mut b = WriterProperties::builder()
        .set_compression(Compression::GZIP(GzipLevel::try_new(9)?))
        .set_statistics_enabled(EnabledStatistics::None)
        .set_offset_index_disabled(true)
        .set_created_by(format!("irqlab {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(kv));
    // min/max of time and seq let engines skip segments outside a window;
    // byte-stream-split + GZIP measured smallest for seq and the
    // increments (BENCHMARKS.md "Recording size")
    for col in ["time", "seq"] {
        b = b.set_column_statistics_enabled(ColumnPath::from(col), EnabledStatistics::Chunk);
    }
    for (col, enc) in [
        ("seq", Encoding::BYTE_STREAM_SPLIT),
        ("value", Encoding::BYTE_STREAM_SPLIT),
    ] {
        b = b
            .set_column_dictionary_enabled(ColumnPath::from(col), false)
            .set_column_encoding(ColumnPath::from(col), enc);
    }
    Ok(b.build())
}

/// One row of the table before encoding.
struct Row<'a> {
    seq: u64,
    source: &'a str,
    key: &'a str,
    cpu: Option<u32>,
    /// Raw counter; becomes the increment when written.
    value: u64,
}

/// Clock rows and cells, sorted by cell then sequence.
fn sorted_rows(data: &SegmentData) -> Vec<Row<'_>> {
    let mut rows: Vec<Row> = data
        .samples
        .iter()
        .map(|s| Row {
            seq: s.seq,
            source: CLOCK_SOURCE,
            key: CLOCK_KEY,
            cpu: None,
            value: s.mono_ns,
        })
        .chain(data.cells.iter().map(|(seq, c)| Row {
            seq: *seq,
            source: c.source.name(),
            key: &c.key,
            cpu: c.cpu,
            value: c.value,
        }))
        .collect();
    rows.sort_by(|a, b| (a.source, a.key, a.cpu, a.seq).cmp(&(b.source, b.key, b.cpu, b.seq)));
    rows
}

/// The `value` column: a cell's first row raw, later rows the increment
/// since its row before (negative when a counter went back).
fn increments(rows: &[Row]) -> Vec<i64> {
    let mut prev: Option<&Row> = None;
    rows.iter()
        .map(|r| {
            let same = prev.is_some_and(|p| (p.source, p.key, p.cpu) == (r.source, r.key, r.cpu));
            let v = match prev {
                Some(p) if same => i64_of(r.value).wrapping_sub(i64_of(p.value)),
                _ => i64_of(r.value),
            };
            prev = Some(r);
            v
        })
        .collect()
}

/// Write `data` to `path` (through a temporary file renamed into place, so
/// a segment is either whole or absent). Returns the file size.
pub fn write(path: &Path, data: &SegmentData) -> anyhow::Result<u64> {
    let rows = sorted_rows(data);
    let wall = |seq: u64| {
        data.samples
            .binary_search_by_key(&seq, |s| s.seq)
            .ok()
            .and_then(|i| data.samples.get(i))
            .map_or(0, |s| s.wall_ns)
    };
    let time: Vec<i64> = rows.iter().map(|r| i64_of(wall(r.seq))).collect();
    let seq: Vec<i64> = rows.iter().map(|r| i64_of(r.seq)).collect();
    let source: Vec<ByteArray> = rows.iter().map(|r| ByteArray::from(r.source)).collect();
    let key: Vec<ByteArray> = rows.iter().map(|r| ByteArray::from(r.key)).collect();
    let cpu_def: Vec<i16> = rows.iter().map(|r| i16::from(r.cpu.is_some())).collect();
    let cpu: Vec<i32> = rows
        .iter()
        .filter_map(|r| r.cpu.map(|v| i32::try_from(v).unwrap_or(i32::MAX)))
        .collect();
    let value = increments(&rows);

    let tmp = path.with_extension("parquet.tmp");
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let schema = Arc::new(parquet::schema::parser::parse_message_type(MESSAGE)?);
    let mut w = SerializedFileWriter::new(file, schema, Arc::new(props(data)?))
        .with_context(|| format!("writing {}", tmp.display()))?;
    let res: parquet::errors::Result<()> = (|| {
        let mut rg = w.next_row_group()?;
        let mut i = 0;
        while let Some(mut col) = rg.next_column()? {
            match i {
                0 => col.typed::<Int64Type>().write_batch(&time, None, None)?,
                1 => col.typed::<Int64Type>().write_batch(&seq, None, None)?,
                2 => col
                    .typed::<ByteArrayType>()
                    .write_batch(&source, None, None)?,
                3 => col.typed::<ByteArrayType>().write_batch(&key, None, None)?,
                4 => col
                    .typed::<Int32Type>()
                    .write_batch(&cpu, Some(&cpu_def), None)?,
                _ => col.typed::<Int64Type>().write_batch(&value, None, None)?,
            };
            col.close()?;
            i += 1;
        }
        rg.close()?;
        Ok(())
    })();
    let written = res
        .and_then(|()| w.close().map(|_| ()))
        .map_err(|e| anyhow!("{}: {e}", tmp.display()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
    Ok(std::fs::metadata(path).map(|m| m.len()).unwrap_or(0))
}

/// Read a segment back; any failure names the file.
pub fn read(path: &Path) -> anyhow::Result<SegmentData> {
    let p = path.to_path_buf();
    match std::panic::catch_unwind(move || read_inner(&p)) {
        Ok(r) => r.with_context(|| format!("{}: not a readable irqlab segment", path.display())),
        Err(_) => bail!(
            "{}: corrupt Parquet file (the decoder gave up)",
            path.display()
        ),
    }
}

fn footer(kv: &[KeyValue], key: &str) -> anyhow::Result<String> {
    kv.iter()
        .find(|k| k.key == key)
        .and_then(|k| k.value.clone())
        .ok_or_else(|| anyhow!("footer has no {key}"))
}

/// One row as read: (source, key, cpu, seq, time, value).
type ReadRow = (String, String, Option<u32>, u64, i64, i64);

fn read_rows(reader: &SerializedFileReader<std::fs::File>) -> anyhow::Result<Vec<ReadRow>> {
    let mut out = Vec::new();
    for row in reader.get_row_iter(None).map_err(|e| anyhow!("{e}"))? {
        let row = row.map_err(|e| anyhow!("{e}"))?;
        let e = |e: parquet::errors::ParquetError| anyhow!("{e}");
        let time = row.get_long(0).map_err(e)?;
        let seq = u64::try_from(row.get_long(1).map_err(e)?).unwrap_or(0);
        let source = row.get_string(2).map_err(e)?.clone();
        let key = row.get_string(3).map_err(e)?.clone();
        let cpu = match row.get_column_iter().nth(4).map(|(_, f)| f) {
            Some(Field::Int(c)) => u32::try_from(*c).ok(),
            _ => None,
        };
        let value = row.get_long(5).map_err(e)?;
        out.push((source, key, cpu, seq, time, value));
    }
    Ok(out)
}

fn read_inner(path: &Path) -> anyhow::Result<SegmentData> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
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
    let mut data = SegmentData {
        environment: footer(&kv, KEY_ENV).unwrap_or_default(),
        ..SegmentData::default()
    };
    let mut rows = read_rows(&reader)?;
    if schema == 1 {
        data.samples = serde_json::from_str(&footer(&kv, KEY_SAMPLES)?)?;
        data.shapes = serde_json::from_str(&footer(&kv, KEY_SHAPES)?)?;
    } else {
        if let Ok(packed) = footer(&kv, KEY_SHAPES) {
            let json = pack::unpack(&packed).context("footer irqlab.shapes")?;
            data.shapes = serde_json::from_str(&json).context("footer irqlab.shapes")?;
        }
        // a cell's first row is raw, later rows increments: sum them
        rows.sort_by(|a, b| (&a.0, &a.1, a.2, a.3).cmp(&(&b.0, &b.1, b.2, b.3)));
        let mut sum = 0i64;
        let mut prev: Option<(String, String, Option<u32>)> = None;
        for r in &mut rows {
            let cell = (r.0.clone(), r.1.clone(), r.2);
            sum = if prev.as_ref() == Some(&cell) {
                sum.wrapping_add(r.5)
            } else {
                r.5
            };
            r.5 = sum;
            prev = Some(cell);
        }
    }
    for (src, key, cpu, seq, time, value) in rows {
        let value = u64::try_from(value).unwrap_or(0);
        if schema >= 2 && src == CLOCK_SOURCE {
            let wall_ns = u64::try_from(time).unwrap_or(0);
            data.samples.push(SampleTime {
                seq,
                wall_ns,
                mono_ns: value,
            });
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
    Ok(data)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::record::schema::Shape;

    fn cell(source: SourceKind, key: &str, cpu: Option<u32>, value: u64) -> CellValue {
        CellValue {
            source,
            key: key.into(),
            cpu,
            value,
        }
    }

    #[test]
    fn raw_counters_survive_increments_clock_rows_and_packed_shapes() {
        let samples: Vec<SampleTime> = (5..9)
            .map(|seq| SampleTime {
                seq,
                wall_ns: 1_700_000_000_000_000_000 + seq * 1_000_000_007,
                mono_ns: 42 + seq * 999_999_937,
            })
            .collect();
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
            shapes: vec![ShapeAt {
                seq: 5,
                shape: Shape {
                    soft_rows: vec!["HI".into()],
                    ..Shape::default()
                },
            }],
            cells: cells.clone(),
            environment: String::new(),
        };
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("part-0000000005-0000000008.parquet");
        write(&p, &data).unwrap();
        let back = read(&p).unwrap();
        assert_eq!(back.samples, samples);
        assert_eq!(back.shapes, data.shapes);
        let mut want: Vec<(u64, CellValue)> = cells
            .into_iter()
            .map(|(s, mut c)| {
                c.value = c.value.min(i64::MAX as u64);
                (s, c)
            })
            .collect();
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
}
