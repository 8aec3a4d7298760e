//! What a segment read back must be before any of it is used: its columns
//! (names, order, physical and logical types, checked once when the file
//! is opened), each row's values (no negative sample number or CPU, no
//! NULL where the table has none) and its rows against its footer (the
//! samples and row count of `irqlab.seqs`, no sample or cell listed
//! twice, no cell of a sample without its clock). A file that is not so
//! is refused with what was found and what was expected: a reader never
//! turns a value it cannot use into NULL or 0.

use super::super::schema::{CellValue, SampleTime, Seqs, SourceKind};
use anyhow::{anyhow, bail};
use parquet::basic::{ConvertedType, LogicalType, Repetition, TimeUnit, Type as Physical};
use parquet::record::{Field, Row};
use parquet::schema::types::{ColumnDescriptor, SchemaDescriptor};

/// The logical type a column must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A plain (signed) integer of the physical type's width.
    Int,
    /// UTF-8 text.
    Text,
    /// A UTC timestamp in milliseconds (schema 3) or nanoseconds (1, 2).
    Millis,
    Nanos,
}

/// One column of the long table as the reader expects it.
struct Want {
    name: &'static str,
    physical: Physical,
    kind: Kind,
    optional: bool,
}

impl Want {
    const fn new(name: &'static str, physical: Physical, kind: Kind, optional: bool) -> Want {
        Want {
            name,
            physical,
            kind,
            optional,
        }
    }

    /// The column as the schema declares it (docs/recording-schema.md).
    fn describe(&self) -> String {
        let rep = if self.optional {
            "optional"
        } else {
            "required"
        };
        let kind = match self.kind {
            Kind::Int => "",
            Kind::Text => " (STRING)",
            Kind::Millis => " (TIMESTAMP(MILLIS,true))",
            Kind::Nanos => " (TIMESTAMP(NANOS,true))",
        };
        format!("{} {rep} {}{kind}", self.name, self.physical)
    }

    fn fits(&self, c: &ColumnDescriptor) -> bool {
        let rep = c.self_type().get_basic_info().repetition();
        let want_rep = match self.optional {
            true => Repetition::OPTIONAL,
            false => Repetition::REQUIRED,
        };
        c.name() == self.name
            && c.path().parts().len() == 1
            && c.physical_type() == self.physical
            && rep == want_rep
            && kind_of(c) == Some(self.kind)
    }
}

/// The [`Kind`] of a column's logical (or older converted) type, `None`
/// for any other.
fn kind_of(c: &ColumnDescriptor) -> Option<Kind> {
    let width = match c.physical_type() {
        Physical::INT32 => 32,
        Physical::INT64 => 64,
        _ => 0,
    };
    match (c.logical_type_ref(), c.converted_type()) {
        (None, ConvertedType::NONE) if width > 0 => Some(Kind::Int),
        (None, ConvertedType::INT_32 | ConvertedType::INT_64) => Some(Kind::Int),
        (Some(LogicalType::Integer(t)), _) if t.is_signed && i32::from(t.bit_width) == width => {
            Some(Kind::Int)
        }
        (Some(LogicalType::String), _) | (None, ConvertedType::UTF8) => Some(Kind::Text),
        (Some(LogicalType::Timestamp(t)), _) if t.is_adjusted_to_u_t_c => match t.unit {
            TimeUnit::MILLIS => Some(Kind::Millis),
            TimeUnit::NANOS => Some(Kind::Nanos),
            TimeUnit::MICROS => None,
        },
        _ => None,
    }
}

/// A column as the file declares it, for messages.
fn found(c: &ColumnDescriptor) -> String {
    let info = c.self_type().get_basic_info();
    let rep = format!("{}", info.repetition()).to_lowercase();
    let path = c.path().string();
    let logical = match (c.logical_type_ref(), c.converted_type()) {
        (Some(l), _) => format!(" ({l:?})"),
        (None, ConvertedType::NONE) => String::new(),
        (None, conv) => format!(" ({conv})"),
    };
    format!("{path} {rep} {}{logical}", c.physical_type())
}

/// The columns of the long table of `schema`, in order; the last one
/// (`segment`) is absent from schema-3 files of irqlab before it.
fn wanted(schema: u32) -> Vec<Want> {
    let time = match schema {
        1 | 2 => Kind::Nanos,
        _ => Kind::Millis,
    };
    let mut v = vec![
        Want::new("time", Physical::INT64, time, false),
        Want::new("seq", Physical::INT64, Kind::Int, false),
        Want::new("source", Physical::BYTE_ARRAY, Kind::Text, false),
        Want::new("key", Physical::BYTE_ARRAY, Kind::Text, false),
        Want::new("cpu", Physical::INT32, Kind::Int, true),
        Want::new("value", Physical::INT64, Kind::Int, false),
    ];
    if schema >= 3 {
        v.push(Want::new("segment", Physical::INT64, Kind::Int, false));
    }
    v
}

/// Check the columns of a segment of `schema` (`irqlab.schema`): names,
/// order, physical and logical types, NULLs allowed only in `cpu`.
/// Returns whether the file has the `segment` column.
pub fn columns(descr: &SchemaDescriptor, schema: u32) -> anyhow::Result<bool> {
    let want = wanted(schema);
    let have = descr.columns();
    let names = || {
        let v: Vec<&str> = want.iter().map(|w| w.name).collect();
        v.join(", ")
    };
    for (i, w) in want.iter().enumerate() {
        let Some(c) = have.get(i) else {
            // `segment` may be absent: files of irqlab before it
            if i + 1 == want.len() && w.name == "segment" && i == have.len() {
                return Ok(false);
            }
            bail!(
                "{} column(s), expected {} ({}); column {} should be {}",
                have.len(),
                want.len(),
                names(),
                i + 1,
                w.describe()
            );
        };
        if !w.fits(c) {
            bail!(
                "column {} is {}, expected {} (columns: {})",
                i + 1,
                found(c),
                w.describe(),
                names()
            );
        }
    }
    if let Some(c) = have.get(want.len()) {
        bail!(
            "column {} is {}, expected no column after {} (columns: {})",
            want.len() + 1,
            found(c),
            want.last().map_or("", |w| w.name),
            names()
        );
    }
    // every column wanted is here: `segment` too where wanted
    Ok(schema >= 3)
}

/// One row as read: (source, key, cpu, seq, time, value).
pub type ReadRow = (String, String, Option<u32>, u64, i64, i64);

/// Where a row is in its file, for messages.
#[derive(Debug, Clone, Copy)]
pub struct At {
    pub group: usize,
    /// Row within its row group, from 0.
    pub row: usize,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "row group {}, row {}", self.group, self.row)
    }
}

/// What a field holds, for messages.
fn shown(f: Option<&Field>) -> String {
    match f {
        None => "absent".into(),
        Some(Field::Null) => "NULL".into(),
        Some(f) => format!("{f}"),
    }
}

/// An i64 field of a row (`Long`, or the millisecond timestamp).
fn long(f: Option<&Field>, name: &str, at: At) -> anyhow::Result<i64> {
    match f {
        Some(Field::Long(v) | Field::TimestampMillis(v)) => Ok(*v),
        other => bail!(
            "{at}: {name} is {}, expected a 64-bit integer",
            shown(other)
        ),
    }
}

/// A non-negative i64 field (`seq`, `segment`, `time`).
fn count(f: Option<&Field>, name: &str, at: At) -> anyhow::Result<u64> {
    let v = long(f, name, at)?;
    u64::try_from(v).map_err(|_| anyhow!("{at}: {name} is {v}, expected 0 or more"))
}

fn text(f: Option<&Field>, name: &str, at: At) -> anyhow::Result<String> {
    match f {
        Some(Field::Str(s)) => Ok(s.clone()),
        other => bail!("{at}: {name} is {}, expected text", shown(other)),
    }
}

/// The `cpu` field: a CPU id (0 or more) or NULL.
fn cpu(f: Option<&Field>, at: At) -> anyhow::Result<Option<u32>> {
    match f {
        Some(Field::Null) => Ok(None),
        Some(Field::Int(c)) => match u32::try_from(*c) {
            Ok(c) => Ok(Some(c)),
            Err(_) => bail!("{at}: cpu is {c}, expected a CPU id (0 or more) or NULL"),
        },
        other => bail!(
            "{at}: cpu is {}, expected a CPU id (0 or more) or NULL",
            shown(other)
        ),
    }
}

/// One row of a file whose columns [`columns`] checked, and its `segment`
/// (when the file has the column).
pub fn row(r: &Row, at: At) -> anyhow::Result<(ReadRow, Option<u64>)> {
    let mut it = r.get_column_iter().map(|(_, f)| f);
    let time = long(it.next(), "time", at)?;
    if time < 0 {
        bail!("{at}: time is {time}, expected 0 or more (since 1970)");
    }
    let seq = count(it.next(), "seq", at)?;
    let source = text(it.next(), "source", at)?;
    let key = text(it.next(), "key", at)?;
    let cpu = cpu(it.next(), at)?;
    let value = long(it.next(), "value", at)?;
    let segment = match it.next() {
        Some(f) => Some(count(Some(f), "segment", at)?),
        None => None,
    };
    Ok(((source, key, cpu, seq, time, value), segment))
}

/// The footer's `irqlab.seqs` checked against the file's row count.
pub fn footer_seqs(json: &str, rows: u64) -> anyhow::Result<Seqs> {
    let seqs: Seqs =
        serde_json::from_str(json).map_err(|e| anyhow!("footer irqlab.seqs: {e}: {json}"))?;
    if !seqs.well_formed() || seqs.runs.is_empty() {
        bail!("footer irqlab.seqs lists no samples in order: {json}");
    }
    if seqs.rows != rows {
        bail!(
            "footer irqlab.seqs counts {} rows, the file holds {rows} (rows added or lost)",
            seqs.rows
        );
    }
    Ok(seqs)
}

/// Check the samples and cells read from a file: each sample once
/// (`samples` sorted by `seq`), each cell once per sample, no cell of a
/// sample the file does not list, and, with its footer's `irqlab.seqs`
/// (`footer`), exactly the samples it lists.
pub fn rows(
    samples: &[SampleTime],
    cells: &[(u64, CellValue)],
    footer: Option<&Seqs>,
) -> anyhow::Result<()> {
    if let Some(w) = samples.windows(2).find(|w| w[0].seq == w[1].seq) {
        bail!(
            "sample {} is listed twice (two clock rows: rows repeated)",
            w[0].seq
        );
    }
    if let Some(f) = footer {
        let got = Seqs::of(samples.iter().map(|s| s.seq), f.rows);
        if got.runs != f.runs {
            bail!(
                "its rows hold samples {}, its footer irqlab.seqs lists {}",
                or_none(&got),
                f.listed()
            );
        }
    }
    let mut keys: Vec<(u64, SourceKind, &str, Option<u32>)> = cells
        .iter()
        .map(|(q, c)| (*q, c.source, c.key.as_str(), c.cpu))
        .collect();
    keys.sort_unstable();
    if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
        let (q, s, k, c) = w[0];
        bail!(
            "{} at sample {q} is listed twice (rows repeated)",
            cell_name(s, k, c)
        );
    }
    let listed = |q: u64| samples.binary_search_by_key(&q, |s| s.seq).is_ok();
    if let Some((q, s, k, c)) = keys.iter().find(|k| !listed(k.0)) {
        bail!(
            "{} has a row at sample {q}, a sample the file does not list (no clock row)",
            cell_name(*s, k, *c)
        );
    }
    Ok(())
}

fn or_none(s: &Seqs) -> String {
    match s.runs.is_empty() {
        true => "none".into(),
        false => s.listed(),
    }
}

/// `interrupts "LOC" CPU 0`, as recover names cells.
fn cell_name(source: SourceKind, key: &str, cpu: Option<u32>) -> String {
    match cpu {
        Some(c) => format!("{} {key:?} CPU {c}", source.name()),
        None => format!("{} {key:?}", source.name()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Arc;

    fn descr(message: &str) -> SchemaDescriptor {
        let t = parquet::schema::parser::parse_message_type(message).unwrap();
        SchemaDescriptor::new(Arc::new(t))
    }

    #[test]
    fn the_written_schema_and_the_older_ones_pass() {
        assert!(columns(&descr(super::super::MESSAGE), 3).unwrap());
        let no_segment = super::super::MESSAGE.replace("  required int64 segment;\n", "");
        assert!(!columns(&descr(&no_segment), 3).unwrap());
        let nanos = no_segment.replace("MILLIS", "NANOS");
        assert!(!columns(&descr(&nanos), 2).unwrap());
        assert!(!columns(&descr(&nanos), 1).unwrap());
    }

    /// A column of another type, name or place is named with what was
    /// expected there.
    #[test]
    fn a_column_of_another_type_or_place_is_named() {
        let m = super::super::MESSAGE;
        let err = |m: &str, schema| format!("{:#}", columns(&descr(m), schema).unwrap_err());
        let e = err(&m.replace("optional int32 cpu", "optional int64 cpu"), 3);
        assert!(
            e.starts_with("column 5 is cpu optional INT64, expected cpu optional INT32"),
            "{e}"
        );
        let e = err(&m.replace("  optional int32 cpu;\n", ""), 3);
        assert!(
            e.starts_with("column 5 is value required INT64, expected cpu optional INT32"),
            "{e}"
        );
        let e = err(&m.replace("optional int32 cpu", "required int32 cpu"), 3);
        assert!(e.contains("expected cpu optional INT32"), "{e}");
        let e = err(m, 2);
        assert!(
            e.contains("expected time required INT64 (TIMESTAMP(NANOS,true))"),
            "{e}"
        );
        let e = err(&m.replace("binary key (STRING)", "binary key"), 3);
        assert!(e.starts_with("column 4 is key required BYTE_ARRAY,"), "{e}");
        let e = err(
            &m.replace("int64 seq", "int64 seq (TIMESTAMP(MILLIS,true))"),
            3,
        );
        assert!(e.starts_with("column 2 is seq"), "{e}");
        let extra = m.replace("segment;", "segment;\n  required int64 extra;");
        let e = err(&extra, 3);
        assert!(
            e.starts_with("column 8 is extra required INT64, expected no column after segment"),
            "{e}"
        );
        let e = err(
            "message m { required int64 time (TIMESTAMP(MILLIS,true)); }",
            3,
        );
        assert!(e.starts_with("1 column(s), expected 7"), "{e}");
    }

    /// A column of a table written by [`table`].
    enum Col {
        I64(Vec<i64>),
        I32(Vec<Option<i32>>),
        I64Opt(Vec<Option<i64>>),
        Text(Vec<&'static str>),
    }

    /// A Parquet file of `message` holding `cols` (one row group per
    /// entry of `groups`, each the same rows) with footer `irqlab.schema`
    /// 3 and, when given, `irqlab.seqs`.
    fn table(
        dir: &std::path::Path,
        message: &str,
        cols: &[Col],
        groups: usize,
        seqs: Option<&str>,
    ) -> std::path::PathBuf {
        use parquet::column::writer::ColumnWriter as W;
        use parquet::data_type::ByteArray;
        use parquet::file::metadata::KeyValue;
        let path = dir.join("part-0000000000-0000000001.parquet");
        let mut kv = vec![KeyValue::new("irqlab.schema".into(), "3".to_string())];
        if let Some(s) = seqs {
            kv.push(KeyValue::new("irqlab.seqs".into(), s.to_string()));
        }
        let props = parquet::file::properties::WriterProperties::builder()
            .set_key_value_metadata(Some(kv))
            .build();
        let schema = Arc::new(parquet::schema::parser::parse_message_type(message).unwrap());
        let file = std::fs::File::create(&path).unwrap();
        let mut w = parquet::file::writer::SerializedFileWriter::new(file, schema, Arc::new(props))
            .unwrap();
        for _ in 0..groups {
            let mut rg = w.next_row_group().unwrap();
            for c in cols {
                let mut col = rg.next_column().unwrap().unwrap();
                let def = |v: &[Option<i64>]| {
                    v.iter().map(|x| i16::from(x.is_some())).collect::<Vec<_>>()
                };
                match (col.untyped(), c) {
                    (W::Int64ColumnWriter(w), Col::I64(v)) => {
                        w.write_batch(v, None, None).unwrap();
                    }
                    (W::Int32ColumnWriter(w), Col::I32(v)) => {
                        let wide: Vec<Option<i64>> = v.iter().map(|x| x.map(i64::from)).collect();
                        let vals: Vec<i32> = v.iter().flatten().copied().collect();
                        w.write_batch(&vals, Some(&def(&wide)), None).unwrap();
                    }
                    (W::Int64ColumnWriter(w), Col::I64Opt(v)) => {
                        let vals: Vec<i64> = v.iter().flatten().copied().collect();
                        w.write_batch(&vals, Some(&def(v)), None).unwrap();
                    }
                    (W::ByteArrayColumnWriter(w), Col::Text(v)) => {
                        let vals: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(*s)).collect();
                        w.write_batch(&vals, None, None).unwrap();
                    }
                    _ => panic!("a column of another type"),
                }
                col.close().unwrap();
            }
            rg.close().unwrap();
        }
        w.close().unwrap();
        path
    }

    /// Two samples (clock rows) and LOC on CPU 0 at both: 100, then +50.
    fn good() -> Vec<Col> {
        vec![
            Col::I64(vec![1_000, 2_000, 1_000, 2_000]),
            Col::I64(vec![0, 1, 0, 1]),
            Col::Text(vec!["clock", "clock", "interrupts", "interrupts"]),
            Col::Text(vec!["mono_ns", "mono_ns", "LOC", "LOC"]),
            Col::I32(vec![None, None, Some(0), Some(0)]),
            Col::I64(vec![5_000_000, 1_000_000_000, 100, 50]),
            Col::I64(vec![0; 4]),
        ]
    }

    const SEQS: &str = r#"{"runs":[[0,1]],"rows":4}"#;

    /// The error reading a table of `message` and `cols`.
    fn refused(message: &str, cols: &[Col], groups: usize, seqs: Option<&str>) -> String {
        let d = tempfile::tempdir().unwrap();
        let p = table(d.path(), message, cols, groups, seqs);
        let e = format!("{:#}", super::super::read(&p).unwrap_err());
        let named = format!("{}: not a readable irqlab segment: ", p.display());
        assert!(e.starts_with(&named), "{e}");
        e[named.len()..].to_string()
    }

    #[test]
    fn a_well_formed_table_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let p = table(d.path(), super::super::MESSAGE, &good(), 1, Some(SEQS));
        let data = super::super::read(&p).unwrap();
        let seqs: Vec<u64> = data.samples.iter().map(|s| s.seq).collect();
        assert_eq!(seqs, [0, 1]);
        let loc: Vec<(u64, Option<u32>, u64)> = data
            .cells
            .iter()
            .map(|(q, c)| (*q, c.cpu, c.value))
            .collect();
        assert_eq!(loc, [(0, Some(0), 100), (1, Some(0), 150)]);
    }

    /// A `cpu` of another type, or a column dropped (every column after
    /// it one place earlier), is refused when the file is opened, naming
    /// the column and what was expected: never NULL CPUs or values taken
    /// from the wrong column.
    #[test]
    fn a_table_of_other_columns_is_refused_naming_the_column() {
        let m = super::super::MESSAGE;
        let mut cols = good();
        cols[4] = Col::I64Opt(vec![None, None, Some(0), Some(0)]);
        let e = refused(
            &m.replace("optional int32 cpu", "optional int64 cpu"),
            &cols,
            1,
            Some(SEQS),
        );
        assert!(
            e.starts_with("column 5 is cpu optional INT64, expected cpu optional INT32"),
            "{e}"
        );
        let mut cols = good();
        cols.remove(4);
        let e = refused(
            &m.replace("  optional int32 cpu;\n", ""),
            &cols,
            1,
            Some(SEQS),
        );
        assert!(
            e.starts_with("column 5 is value required INT64, expected cpu optional INT32"),
            "{e}"
        );
    }

    /// A negative CPU or sample number is an error naming its row, never a
    /// NULL CPU or sample 0.
    #[test]
    fn a_negative_cpu_or_seq_is_refused_naming_the_row() {
        let m = super::super::MESSAGE;
        let mut cols = good();
        cols[4] = Col::I32(vec![None, None, Some(0), Some(-3)]);
        let e = refused(m, &cols, 1, Some(SEQS));
        assert_eq!(
            e,
            "row group 0, row 3: cpu is -3, expected a CPU id (0 or more) or NULL"
        );
        let mut cols = good();
        cols[1] = Col::I64(vec![0, -1, 0, 1]);
        let e = refused(m, &cols, 1, Some(SEQS));
        assert_eq!(e, "row group 0, row 1: seq is -1, expected 0 or more");
    }

    /// Rows repeated (the table twice) are refused, by the footer's row
    /// count or, when it was made to match, as samples listed twice:
    /// never summed into doubled counts.
    #[test]
    fn repeated_rows_are_refused_not_summed() {
        let m = super::super::MESSAGE;
        let e = refused(m, &good(), 2, Some(SEQS));
        assert!(
            e.starts_with("footer irqlab.seqs counts 4 rows, the file holds 8"),
            "{e}"
        );
        let e = refused(m, &good(), 2, Some(r#"{"runs":[[0,1]],"rows":8}"#));
        assert!(e.starts_with("sample 0 is listed twice"), "{e}");
        let e = refused(m, &good(), 2, None);
        assert!(e.starts_with("sample 0 is listed twice"), "{e}");
        // a cell repeated alone
        let mut cols = good();
        cols[1] = Col::I64(vec![0, 1, 1, 1]);
        let e = refused(m, &cols, 1, Some(SEQS));
        assert!(
            e.starts_with(r#"interrupts "LOC" CPU 0 at sample 1 is listed twice"#),
            "{e}"
        );
    }

    /// Rows that do not agree with the footer or with each other: other
    /// samples than the footer lists, a cell of a sample without a clock
    /// row, a `segment` column of another file.
    #[test]
    fn rows_that_disagree_with_the_footer_or_each_other_are_refused() {
        let m = super::super::MESSAGE;
        let e = refused(m, &good(), 1, Some(r#"{"runs":[[0,2]],"rows":4}"#));
        assert_eq!(
            e,
            "its rows hold samples 0–1, its footer irqlab.seqs lists 0–2"
        );
        let mut cols = good();
        cols[1] = Col::I64(vec![0, 1, 0, 2]);
        let e = refused(m, &cols, 1, None);
        assert!(
            e.contains(
                r#"interrupts "LOC" CPU 0 has a row at sample 2, a sample the file does not list"#
            ),
            "{e}"
        );
        let mut cols = good();
        cols[6] = Col::I64(vec![0, 0, 7, 0]);
        let e = refused(m, &cols, 1, Some(SEQS));
        assert!(
            e.starts_with("row group 0, row 2: segment is 7, the first row says 0"),
            "{e}"
        );
    }
}
