//! Parquet segments: the long table (time, seq, source, key, cpu, value)
//! written with the `parquet` crate (no arrow), rows sorted by cell then
//! sequence so that delta and dictionary encodings make a changed counter
//! cost about a byte or two; the footer holds the schema version, the
//! sample times, the shapes and the environment. And the reader back,
//! which turns any failure (including a panic inside the decoder) into an
//! error naming the file.

use super::schema::{
    CellValue, SampleTime, ShapeAt, SourceKind, KEY_ENV, KEY_SAMPLES, KEY_SCHEMA, KEY_SHAPES,
    SCHEMA,
};
use anyhow::{anyhow, bail, Context};
use parquet::basic::{Compression, Encoding};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
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
    pub shapes: Vec<ShapeAt>,
    /// (seq, cell) in any order.
    pub cells: Vec<(u64, CellValue)>,
    /// The environment as JSON (same collector as bench).
    pub environment: String,
}

fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn props(data: &SegmentData) -> anyhow::Result<WriterProperties> {
    let kv = vec![
        KeyValue::new(KEY_SCHEMA.into(), SCHEMA.to_string()),
        KeyValue::new(KEY_SAMPLES.into(), serde_json::to_string(&data.samples)?),
        KeyValue::new(KEY_SHAPES.into(), serde_json::to_string(&data.shapes)?),
        KeyValue::new(KEY_ENV.into(), data.environment.clone()),
    ];
    let mut b = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(kv));
    for col in ["seq", "value"] {
        b = b
            .set_column_dictionary_enabled(ColumnPath::from(col), false)
            .set_column_encoding(ColumnPath::from(col), Encoding::DELTA_BINARY_PACKED);
    }
    Ok(b.build())
}

/// Write `data` to `path` (through a temporary file renamed into place, so
/// a segment is either whole or absent). Returns the file size.
pub fn write(path: &Path, data: &SegmentData) -> anyhow::Result<u64> {
    let mut order: Vec<usize> = (0..data.cells.len()).collect();
    let cell = |i: usize| data.cells.get(i);
    order.sort_by(|&a, &b| {
        let (Some((sa, ca)), Some((sb, cb))) = (cell(a), cell(b)) else {
            return std::cmp::Ordering::Equal;
        };
        (ca.source, &ca.key, ca.cpu, sa).cmp(&(cb.source, &cb.key, cb.cpu, sb))
    });
    let wall = |seq: u64| {
        data.samples
            .binary_search_by_key(&seq, |s| s.seq)
            .ok()
            .and_then(|i| data.samples.get(i))
            .map_or(0, |s| s.wall_ns)
    };
    let rows: Vec<&(u64, CellValue)> = order.iter().filter_map(|&i| cell(i)).collect();
    let time: Vec<i64> = rows.iter().map(|(s, _)| i64_of(wall(*s))).collect();
    let seq: Vec<i64> = rows.iter().map(|(s, _)| i64_of(*s)).collect();
    let source: Vec<ByteArray> = rows
        .iter()
        .map(|(_, c)| ByteArray::from(c.source.name()))
        .collect();
    let key: Vec<ByteArray> = rows
        .iter()
        .map(|(_, c)| ByteArray::from(c.key.as_str()))
        .collect();
    let cpu_def: Vec<i16> = rows
        .iter()
        .map(|(_, c)| i16::from(c.cpu.is_some()))
        .collect();
    let cpu: Vec<i32> = rows
        .iter()
        .filter_map(|(_, c)| c.cpu.map(|v| i32::try_from(v).unwrap_or(i32::MAX)))
        .collect();
    let value: Vec<i64> = rows.iter().map(|(_, c)| i64_of(c.value)).collect();

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
    res.and_then(|()| w.close().map(|_| ()))
        .map_err(|e| anyhow!("{}: {e}", tmp.display()))?;
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
    if schema != SCHEMA {
        bail!("recording schema {schema}, this irqlab reads schema {SCHEMA}");
    }
    let mut data = SegmentData {
        samples: serde_json::from_str(&footer(&kv, KEY_SAMPLES)?)?,
        shapes: serde_json::from_str(&footer(&kv, KEY_SHAPES)?)?,
        environment: footer(&kv, KEY_ENV).unwrap_or_default(),
        cells: Vec::new(),
    };
    for row in reader.get_row_iter(None).map_err(|e| anyhow!("{e}"))? {
        let row = row.map_err(|e| anyhow!("{e}"))?;
        let seq = u64::try_from(row.get_long(1).map_err(|e| anyhow!("{e}"))?).unwrap_or(0);
        let src = row.get_string(2).map_err(|e| anyhow!("{e}"))?;
        let source = SourceKind::from_name(src).ok_or_else(|| anyhow!("unknown source {src:?}"))?;
        let key = row.get_string(3).map_err(|e| anyhow!("{e}"))?.clone();
        let cpu = match row.get_column_iter().nth(4).map(|(_, f)| f) {
            Some(Field::Int(c)) => u32::try_from(*c).ok(),
            _ => None,
        };
        let value = u64::try_from(row.get_long(5).map_err(|e| anyhow!("{e}"))?).unwrap_or(0);
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
    Ok(data)
}
