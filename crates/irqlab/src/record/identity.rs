//! The IRQ identity table (docs/recording-schema.md "IRQ identity"): one
//! plain Parquet file `irqs-FIRST-LAST.parquet` beside each segment
//! `part-FIRST-LAST.parquet`, one row per interrupt row (and description)
//! seen in the segment's samples: label, IRQ number, chip, hwirq,
//! trigger, flow, actions, description, affinity, first and last sample
//! and time seen. Built from the shapes (the layout in the footer), so
//! engines join counters to devices in SQL without decoding the footer.
//! [`sync`] writes the files a boot directory lacks and removes those
//! whose segment is gone (`recover`, and `record` at start); [`check`]
//! tells an identity file from another file of its name.

use super::schema::{RowKind, RowMeta, SampleTime, Shape, ShapeAt, WALL_NS_STEP};
use super::segment;
use anyhow::{anyhow, bail, Context};
use irqlab_core::desc::{split_description, DescParts};
use parquet::basic::Compression;
use parquet::column::writer::{get_typed_column_writer_mut as typed, ColumnWriter};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The Parquet schema of the identity table.
pub const MESSAGE: &str = "message irqlab_irqs {
  required int64 segment;
  required binary key (STRING);
  required binary label (STRING);
  optional int32 irq;
  required binary kind (STRING);
  optional binary chip (STRING);
  optional int64 hwirq;
  optional binary trigger (STRING);
  optional binary flow (STRING);
  optional binary actions (STRING);
  optional binary device (STRING);
  required binary description (STRING);
  optional binary affinity (STRING);
  required int64 first_seq;
  required int64 last_seq;
  required int64 first_seen (TIMESTAMP(MILLIS,true));
  required int64 last_seen (TIMESTAMP(MILLIS,true));
}";

/// `irqs-FIRST-LAST.parquet`: the identity file of segment FIRST..LAST.
pub fn file_name(first: u64, last: u64) -> String {
    format!("irqs-{first:010}-{last:010}.parquet")
}

/// (first, last) of an identity file name.
pub fn parse_name(name: &str) -> Option<(u64, u64)> {
    let mid = name.strip_prefix("irqs-")?.strip_suffix(".parquet")?;
    let (a, b) = mid.split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdRow {
    pub key: String,
    pub label: String,
    pub irq: Option<i32>,
    pub kind: &'static str,
    pub chip: Option<String>,
    pub hwirq: Option<i64>,
    pub trigger: Option<String>,
    pub flow: Option<String>,
    pub actions: Option<String>,
    /// The first action (the device name of a driver's IRQ).
    pub device: Option<String>,
    pub description: String,
    pub affinity: Option<String>,
    pub first_seq: u64,
    pub last_seq: u64,
    pub first_wall_ns: u64,
    pub last_wall_ns: u64,
}

fn kind_name(k: RowKind) -> &'static str {
    match k {
        RowKind::PerCpu => "per_cpu",
        RowKind::Single => "single",
        RowKind::NoCounts => "no_counts",
        RowKind::Irregular { .. } => "irregular",
    }
}

fn some(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

fn row_of(m: &RowMeta, t: &SampleTime, parts: &mut DescParts) -> IdRow {
    let irq = m.label.parse::<i32>().ok();
    // only numbered rows have chip/hwirq/actions; the arch rows (LOC …)
    // keep their text as the description
    let (chip, hwirq, trigger, flow, actions) = match irq {
        Some(_) => {
            split_description(m.description.trim(), parts);
            (
                some(&parts.chip),
                parts.hwirq,
                some(&parts.trigger),
                some(&parts.flow),
                some(&parts.actions),
            )
        }
        None => (None, None, None, None, None),
    };
    let device = actions
        .as_deref()
        .and_then(|a| a.split(", ").next())
        .and_then(some);
    IdRow {
        key: m.key.clone(),
        label: m.label.clone(),
        irq,
        kind: kind_name(m.kind),
        chip,
        hwirq,
        trigger,
        flow,
        actions,
        device,
        description: m.description.trim().to_string(),
        affinity: m.affinity.clone(),
        first_seq: t.seq,
        last_seq: t.seq,
        first_wall_ns: t.wall_ns,
        last_wall_ns: t.wall_ns,
    }
}

/// The identity rows of a segment's `samples`: `base` is the shape in
/// effect before its first sample (`None` when the segment starts with
/// its own), `shapes` those taking effect inside it. One row per
/// interrupt row and description (a row whose description or affinity
/// changes gets a second row), with the first and last sample it was in.
pub fn rows(base: Option<&Shape>, shapes: &[ShapeAt], samples: &[SampleTime]) -> Vec<IdRow> {
    let mut shapes: Vec<&ShapeAt> = shapes.iter().collect();
    shapes.sort_by_key(|s| s.seq);
    let mut next = shapes.into_iter().peekable();
    let mut cur = base;
    let mut out: BTreeMap<(String, String, Option<String>), IdRow> = BTreeMap::new();
    let mut parts = DescParts::default();
    let mut samples: Vec<&SampleTime> = samples.iter().collect();
    samples.sort_by_key(|s| s.seq);
    let mut visit = |shape: &Shape, t: &SampleTime| {
        for m in &shape.irq_rows {
            let id = (
                m.key.clone(),
                m.description.trim().to_string(),
                m.affinity.clone(),
            );
            match out.get_mut(&id) {
                Some(r) => {
                    r.last_seq = t.seq;
                    r.last_wall_ns = t.wall_ns;
                }
                None => {
                    out.insert(id, row_of(m, t, &mut parts));
                }
            }
        }
    };
    // a run of samples under one shape has the same rows: its first
    // sample starts them, its last one ends them (a segment's samples
    // times its rows would be visited otherwise: 600 x 1056 at 1152 CPUs)
    let mut at = 0;
    while let Some(&t) = samples.get(at) {
        while let Some(s) = next.next_if(|s| s.seq <= t.seq) {
            cur = Some(&s.shape);
        }
        let mut end = at;
        while let Some(&u) = samples.get(end + 1) {
            if next.peek().is_some_and(|s| s.seq <= u.seq) {
                break;
            }
            end += 1;
        }
        if let Some(shape) = cur {
            visit(shape, t);
            if let Some(&u) = samples.get(end).filter(|_| end > at) {
                visit(shape, u);
            }
        }
        at = end + 1;
    }
    let mut v: Vec<IdRow> = out.into_values().collect();
    v.sort_by(|a, b| (&a.key, a.first_seq).cmp(&(&b.key, b.first_seq)));
    v
}

fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn strings(col: &mut ColumnWriter<'_>, v: &[Option<&str>]) -> parquet::errors::Result<()> {
    let def: Vec<i16> = v.iter().map(|s| i16::from(s.is_some())).collect();
    let vals: Vec<ByteArray> = v.iter().flatten().map(|s| ByteArray::from(*s)).collect();
    typed::<ByteArrayType>(col)
        .write_batch(&vals, Some(&def), None)
        .map(|_| ())
}

fn write_column(
    i: usize,
    col: &mut ColumnWriter<'_>,
    segment: u64,
    rows: &[IdRow],
) -> parquet::errors::Result<()> {
    {
        let longs = |f: &dyn Fn(&IdRow) -> i64| -> Vec<i64> { rows.iter().map(f).collect() };
        let text = |f: &dyn Fn(&IdRow) -> Option<&str>| -> Vec<Option<&str>> {
            rows.iter().map(f).collect()
        };
        match i {
            0 | 13 | 14 | 15 | 16 => {
                let v = match i {
                    0 => longs(&|_| i64_of(segment)),
                    13 => longs(&|r| i64_of(r.first_seq)),
                    14 => longs(&|r| i64_of(r.last_seq)),
                    15 => longs(&|r| i64_of(r.first_wall_ns / WALL_NS_STEP)),
                    _ => longs(&|r| i64_of(r.last_wall_ns / WALL_NS_STEP)),
                };
                typed::<Int64Type>(col).write_batch(&v, None, None)?;
            }
            3 => {
                let def: Vec<i16> = rows.iter().map(|r| i16::from(r.irq.is_some())).collect();
                let v: Vec<i32> = rows.iter().filter_map(|r| r.irq).collect();
                typed::<Int32Type>(col).write_batch(&v, Some(&def), None)?;
            }
            6 => {
                let def: Vec<i16> = rows.iter().map(|r| i16::from(r.hwirq.is_some())).collect();
                let v: Vec<i64> = rows.iter().filter_map(|r| r.hwirq).collect();
                typed::<Int64Type>(col).write_batch(&v, Some(&def), None)?;
            }
            _ => {
                let v = match i {
                    1 => text(&|r| Some(r.key.as_str())),
                    2 => text(&|r| Some(r.label.as_str())),
                    4 => text(&|r| Some(r.kind)),
                    5 => text(&|r| r.chip.as_deref()),
                    7 => text(&|r| r.trigger.as_deref()),
                    8 => text(&|r| r.flow.as_deref()),
                    9 => text(&|r| r.actions.as_deref()),
                    10 => text(&|r| r.device.as_deref()),
                    11 => text(&|r| Some(r.description.as_str())),
                    _ => text(&|r| r.affinity.as_deref()),
                };
                if matches!(i, 1 | 2 | 4 | 11) {
                    let vals: Vec<ByteArray> =
                        v.iter().flatten().map(|s| ByteArray::from(*s)).collect();
                    typed::<ByteArrayType>(col).write_batch(&vals, None, None)?;
                } else {
                    strings(col, &v)?;
                }
            }
        }
    }
    Ok(())
}

/// Write the identity file of the segment whose first sample is `segment`
/// to `path` (a temporary file renamed into place). Returns its size.
pub fn write(path: &Path, segment: u64, rows: &[IdRow]) -> anyhow::Result<u64> {
    let tmp = path.with_extension("parquet.tmp");
    let schema = Arc::new(parquet::schema::parser::parse_message_type(MESSAGE)?);
    // a few dozen rows: no statistics, no dictionaries, no page index
    // (each would cost more than the data; measured in
    // docs/recording-schema.md "IRQ identity")
    let props = WriterProperties::builder()
        // GZIP level 9 where it makes a column chunk smaller
        // (`gzip::write_row_group`)
        .set_compression(Compression::UNCOMPRESSED)
        .set_statistics_enabled(EnabledStatistics::None)
        .set_dictionary_enabled(false)
        .set_offset_index_disabled(true)
        .set_created_by(format!("irqlab {}", env!("CARGO_PKG_VERSION")))
        .build();
    // made in memory and written in one call, as a segment
    let res: anyhow::Result<Vec<u8>> = (|| {
        let mut w = SerializedFileWriter::new(Vec::new(), schema, Arc::new(props))?;
        super::gzip::write_row_group(&mut w, |i, col| write_column(i, col, segment, rows))?;
        Ok(w.into_inner()?)
    })();
    let bytes = res.map_err(|e| anyhow!("{}: {e}", tmp.display()))?;
    super::segment::write_whole(&tmp, path, &bytes)
}

/// Write the identity file of a segment just written: samples
/// `samples`, shapes `shapes` taking effect in it, `base` the shape before.
pub fn write_for(
    dir: &Path,
    base: Option<&Shape>,
    shapes: &[ShapeAt],
    samples: &[SampleTime],
) -> anyhow::Result<Option<(PathBuf, u64)>> {
    let (Some(a), Some(b)) = (samples.first(), samples.last()) else {
        return Ok(None);
    };
    let path = dir.join(file_name(a.seq, b.seq));
    let bytes = write(&path, a.seq, &rows(base, shapes, samples))?;
    Ok(Some((path, bytes)))
}

/// Whether the file at `path` reads as an identity file: a regular file
/// (a symbolic link is not followed) whose Parquet footer has the table's
/// columns ([`MESSAGE`]). Why not, otherwise (without the path).
pub fn check(path: &Path) -> anyhow::Result<()> {
    let meta = path.symlink_metadata()?;
    if !meta.is_file() {
        bail!("not a regular file");
    }
    let p = path.to_path_buf();
    match std::panic::catch_unwind(move || check_footer(&p)) {
        Ok(r) => r,
        Err(_) => bail!("corrupt Parquet file (the decoder gave up)"),
    }
}

/// [`check`]'s read: the footer alone, opened as every input is
/// (`crate::host::open_regular`) and no larger than
/// [`MAX_READ`](crate::host::MAX_READ).
fn check_footer(path: &Path) -> anyhow::Result<()> {
    let file = crate::host::open_regular(path)?;
    let len = file.metadata()?.len();
    if usize::try_from(len).map_or(true, |n| n > crate::host::MAX_READ) {
        bail!(
            "{len} bytes, more than {} (docs/limits.md)",
            crate::host::MAX_READ
        );
    }
    let reader = SerializedFileReader::new(file)
        .map_err(|e| anyhow!("{e}"))
        .context("not a Parquet file")?;
    let want = parquet::schema::parser::parse_message_type(MESSAGE)?;
    if *reader.metadata().file_metadata().schema() != want {
        bail!("a Parquet file without the identity table's columns");
    }
    Ok(())
}

/// Remove the identity file `p` named after a segment that is not there,
/// if it reads as one ([`check`]); else keep it: a warning says why. One
/// that could not be removed is added to `left`.
fn remove_orphan(p: &Path, left: &mut Vec<PathBuf>) -> String {
    if let Err(e) = check(p) {
        return format!(
            "warning: {}: kept: named as the IRQ identity of a segment that is not there, but not an irqlab IRQ identity file ({e:#})",
            p.display()
        );
    }
    super::layout::remove_said(p, "IRQ identity of a segment that is no longer there", left)
}

/// Make the identity files of boot directory `dir` match its segments:
/// write those missing (a crash between a segment and its identity file,
/// a recovered journal, a recording of an irqlab before the table) and
/// remove those whose segment is gone (superseded, merged) once read as
/// identity files ([`check`]); a file of such a name that does not read
/// as one is kept, and so is one beside a segment, each with a warning.
/// Never fails: one message per file written, removed, kept or not
/// writable; each file it meant to remove but could not is added to
/// `left`. A missing file is made from its segment's sample times and
/// shapes ([`segment::times`], or `known`'s when they are that
/// segment's), not its counters.
pub fn sync(dir: &Path, known: segment::Known<'_>, left: &mut Vec<PathBuf>) -> Vec<String> {
    let mut msg = Vec::new();
    let Ok(segs) = super::layout::segments(dir) else {
        return msg;
    };
    let names: std::collections::HashSet<(u64, u64)> =
        segs.iter().map(|(a, b, _)| (*a, *b)).collect();
    // identity files named after a segment that is not there: removed
    // after the segments are read, unless a segment holds their samples
    // under another name
    let mut orphans: Vec<(PathBuf, (u64, u64))> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for p in rd.filter_map(|e| e.ok()).map(|e| e.path()) {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            match parse_name(&name) {
                Some(r) if !names.contains(&r) => orphans.push((p, r)),
                Some(_) => msg.extend(check(&p).err().map(|e| {
                    format!(
                        "warning: {}: not an irqlab IRQ identity file ({e:#}); kept as it is: its segment's IRQ identity is not there for SQL queries until it is moved away and `irqlab recover` writes it again",
                        p.display()
                    )
                })),
                // an identity file whose write was interrupted
                None if name.starts_with("irqs-") && name.ends_with(".parquet.tmp") => {
                    msg.push(super::layout::remove_said(
                        &p,
                        "an IRQ identity file whose write was interrupted",
                        left,
                    ))
                }
                None => {}
            }
        }
    }
    let missing = |a: u64, b: u64| dir.join(file_name(a, b)).symlink_metadata().is_err();
    // segments that hold samples other than their name's: (first, last,
    // segment)
    let mut renamed: Vec<(u64, u64, &Path)> = Vec::new();
    if segs.iter().any(|(a, b, _)| missing(*a, *b)) {
        write_missing(dir, &segs, known, &mut renamed, &mut msg);
    }
    for (p, (a, b)) in orphans {
        match renamed.iter().find(|(f, l, _)| *f <= b && a <= *l) {
            Some((f, l, seg)) => msg.push(held_elsewhere(&p, seg, (*f, *l))),
            None => msg.push(remove_orphan(&p, left)),
        }
    }
    msg
}

/// Why the identity file `p`, whose segment's name is not there, is
/// kept: `seg` holds samples `held` of it under another name (renamed by
/// hand, or copied in): removing it would lose the IRQ identity of those
/// samples, which is written only under a segment's own name.
fn held_elsewhere(p: &Path, seg: &Path, (first, last): (u64, u64)) -> String {
    format!(
        "warning: {}: kept: its segment's name is not there, but {} holds samples {} of it under another name; rename that segment back to the name its samples have ({}) and this file is its IRQ identity again",
        p.display(),
        seg.display(),
        super::schema::span(first, last),
        super::layout::segment_name(first, last)
    )
}

/// The identity files of `segs` that are not there, written from each
/// segment's times and shapes ([`sync`]); a segment whose samples are not
/// those of its name gets none and is added to `renamed`.
fn write_missing<'a>(
    dir: &Path,
    segs: &'a [(u64, u64, PathBuf)],
    known: segment::Known<'_>,
    renamed: &mut Vec<(u64, u64, &'a Path)>,
    msg: &mut Vec<String>,
) {
    let missing = |a: u64, b: u64| dir.join(file_name(a, b)).symlink_metadata().is_err();
    // the shape in effect before each segment: the last one of the
    // segments before it (footers only)
    let mut base: Option<Shape> = None;
    for (a, b, p) in segs {
        let shapes = match missing(*a, *b) {
            true => match segment::times_or(p, known) {
                Ok(d) if !holds_its_name(&d.samples, *a, *b) => {
                    msg.push(not_its_name(p, &d.samples));
                    if let (Some(f), Some(l)) = (d.samples.first(), d.samples.last()) {
                        renamed.push((f.seq, l.seq, p.as_path()));
                    }
                    d.shapes
                }
                Ok(d) => {
                    match write_for(dir, base.as_ref(), &d.shapes, &d.samples) {
                        Ok(Some((path, _))) => msg.push(format!(
                            "wrote {} (IRQ identity of {})",
                            path.display(),
                            p.display()
                        )),
                        Ok(None) => {}
                        Err(e) => msg.push(format!("{e:#} (IRQ identity not written)")),
                    }
                    d.shapes
                }
                Err(e) => {
                    msg.push(format!("{e:#} (IRQ identity not written)"));
                    Vec::new()
                }
            },
            false => segment::footer_shapes(p).unwrap_or_default(),
        };
        if let Some(s) = shapes.into_iter().max_by_key(|s| s.seq) {
            base = Some(s.shape);
        }
    }
}

/// Whether `samples` (in order) begin at `first` and end at `last`, as a
/// segment named `part-FIRST-LAST.parquet` does (none: nothing to write).
fn holds_its_name(samples: &[SampleTime], first: u64, last: u64) -> bool {
    match (samples.first(), samples.last()) {
        (Some(a), Some(b)) => (a.seq, b.seq) == (first, last),
        _ => true,
    }
}

/// Why no identity file is written for the segment at `p`, whose
/// `samples` are not those of its name (a file renamed or copied in):
/// the file would be named after its samples, beside no segment of that
/// name (removed by the next `sync`, and two such segments would write
/// one file).
fn not_its_name(p: &Path, samples: &[SampleTime]) -> String {
    let (a, b) = match (samples.first(), samples.last()) {
        (Some(a), Some(b)) => (a.seq, b.seq),
        _ => (0, 0),
    };
    format!(
        "{}: holds samples {}, not those of its name: IRQ identity not written (an identity file is named as its segment)",
        p.display(),
        super::schema::span(a, b)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn meta(label: &str, desc: &str) -> RowMeta {
        RowMeta {
            key: label.into(),
            label: label.into(),
            kind: RowKind::PerCpu,
            description: desc.into(),
            affinity: Some("0-1".into()),
        }
    }

    fn t(seq: u64) -> SampleTime {
        SampleTime {
            seq,
            wall_ns: 1_700_000_000_000_000_000 + seq * 1_000_000_000,
            mono_ns: seq,
        }
    }

    #[test]
    fn identity_rows_split_the_description_and_span_the_samples_each_row_was_in() {
        let a = Shape {
            irq_rows: vec![
                meta(
                    "27",
                    "IR-PCI-MSIX-0000:57:00.0   0-edge      mlx5_async0@pci:0000:57:00.0",
                ),
                meta("LOC", "Local timer interrupts"),
            ],
            ..Shape::default()
        };
        let mut b = a.clone();
        b.irq_rows.remove(0);
        let shapes = vec![ShapeAt { seq: 7, shape: b }];
        let samples: Vec<SampleTime> = (5..10).map(t).collect();
        let r = rows(Some(&a), &shapes, &samples);
        assert_eq!(r.len(), 2);
        let irq = &r[0];
        assert_eq!(irq.label, "27");
        assert_eq!(irq.irq, Some(27));
        assert_eq!(irq.chip.as_deref(), Some("IR-PCI-MSIX-0000:57:00.0"));
        assert_eq!(irq.hwirq, Some(0));
        assert_eq!(irq.flow.as_deref(), Some("edge"));
        assert_eq!(irq.device.as_deref(), Some("mlx5_async0@pci:0000:57:00.0"));
        assert_eq!((irq.first_seq, irq.last_seq), (5, 6), "freed at 7");
        let loc = &r[1];
        assert_eq!((loc.first_seq, loc.last_seq), (5, 9));
        assert_eq!(loc.irq, None);
        assert_eq!(loc.chip, None);
        assert_eq!(loc.description, "Local timer interrupts");
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(file_name(5, 9));
        assert!(write(&p, 5, &r).unwrap() > 0);
        assert_eq!(parse_name(&file_name(5, 9)), Some((5, 9)));
    }

    /// An identity file reads as one; junk, another Parquet file (a
    /// segment) and a directory of such a name do not.
    #[test]
    fn check_tells_an_identity_file_from_other_files_of_its_name() {
        let d = tempfile::tempdir().unwrap();
        let ok = d.path().join(file_name(1, 2));
        write(&ok, 1, &rows(None, &[], &[t(1), t(2)])).unwrap();
        check(&ok).unwrap();
        let junk = d.path().join(file_name(3, 4));
        std::fs::write(&junk, "junk\n").unwrap();
        let e = format!("{:#}", check(&junk).unwrap_err());
        assert!(e.contains("not a Parquet file"), "{e}");
        let seg = d.path().join(file_name(5, 6));
        let data = segment::SegmentData {
            samples: vec![t(5), t(6)],
            ..segment::SegmentData::default()
        };
        segment::write(&seg, &mut data.into()).unwrap();
        let e = format!("{:#}", check(&seg).unwrap_err());
        assert!(e.contains("without the identity table's columns"), "{e}");
        let dir = d.path().join(file_name(7, 8));
        std::fs::create_dir(&dir).unwrap();
        assert!(check(&dir).is_err());
    }

    /// `sync` removes an orphan identity file only when it reads as one;
    /// a junk one, orphan or beside its segment, is kept with a warning.
    #[test]
    fn sync_removes_only_orphans_that_read_as_identity_files() {
        let d = tempfile::tempdir().unwrap();
        let data = segment::SegmentData {
            samples: vec![t(1), t(2)],
            ..segment::SegmentData::default()
        };
        let seg_path = d.path().join(super::super::layout::segment_name(1, 2));
        segment::write(&seg_path, &mut data.into()).unwrap();
        let live = d.path().join(file_name(1, 2));
        assert!(sync(d.path(), None, &mut Vec::new())
            .iter()
            .any(|m| m.starts_with("wrote ")));
        check(&live).unwrap();
        let orphan = d.path().join(file_name(5, 6));
        std::fs::copy(&live, &orphan).unwrap();
        let junk = d.path().join(file_name(99, 100));
        std::fs::write(&junk, "junk\n").unwrap();
        std::fs::write(&live, "junk\n").unwrap();
        let msg = sync(d.path(), None, &mut Vec::new());
        assert!(!orphan.exists(), "{msg:?}");
        assert!(junk.exists() && live.exists(), "{msg:?}");
        let warns: Vec<&String> = msg.iter().filter(|m| m.starts_with("warning: ")).collect();
        assert_eq!(warns.len(), 2, "{msg:?}");
        assert!(
            warns.iter().any(|m| m.contains(&*junk.to_string_lossy())),
            "{msg:?}"
        );
        assert!(
            warns.iter().any(|m| m.contains(&*live.to_string_lossy())),
            "{msg:?}"
        );
    }

    /// A segment whose samples are not those of its name (a file renamed
    /// or copied in) gets no identity file, with a word: one named after
    /// its samples would be removed as an orphan by the next `sync` and
    /// written again, and two such segments would write one file.
    #[test]
    fn a_segment_not_holding_the_samples_of_its_name_gets_no_identity_file() {
        let d = tempfile::tempdir().unwrap();
        let data = segment::SegmentData {
            samples: vec![t(1), t(2)],
            ..segment::SegmentData::default()
        };
        let seg_path = d.path().join(super::super::layout::segment_name(11, 12));
        segment::write(&seg_path, &mut data.into()).unwrap();
        for _ in 0..2 {
            let msg = sync(d.path(), None, &mut Vec::new());
            assert_eq!(
                msg,
                [format!(
                    "{}: holds samples 1–2, not those of its name: IRQ identity not written (an identity file is named as its segment)",
                    seg_path.display()
                )]
            );
            let names: Vec<_> = std::fs::read_dir(d.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(names.len(), 1, "{names:?}");
        }
    }

    /// The identity file of a segment renamed by hand is kept (its
    /// samples are in that segment) and said; one of samples no segment
    /// holds is removed as an orphan.
    #[test]
    fn an_identity_file_whose_samples_a_renamed_segment_holds_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let data = segment::SegmentData {
            samples: vec![t(1), t(2)],
            ..segment::SegmentData::default()
        };
        let seg_path = d.path().join(super::super::layout::segment_name(1, 2));
        segment::write(&seg_path, &mut data.into()).unwrap();
        sync(d.path(), None, &mut Vec::new());
        let id = d.path().join(file_name(1, 2));
        let orphan = d.path().join(file_name(5, 6));
        std::fs::copy(&id, &orphan).unwrap();
        let renamed = d.path().join(super::super::layout::segment_name(1, 9));
        std::fs::rename(&seg_path, &renamed).unwrap();
        let msg = sync(d.path(), None, &mut Vec::new());
        assert!(id.exists() && !orphan.exists(), "{msg:?}");
        assert!(
            msg.iter().any(|m| m.starts_with(&format!(
                "warning: {}: kept: its segment's name is not there, but {} holds samples 1–2 of it",
                id.display(),
                renamed.display()
            ))),
            "{msg:?}"
        );
    }

    /// `sync` takes a segment's times and shapes from `known` when they
    /// are that segment's, without reading the file (here junk).
    #[test]
    fn sync_takes_known_times_without_reading_the_segment() {
        let d = tempfile::tempdir().unwrap();
        let seg_path = d.path().join(super::super::layout::segment_name(1, 2));
        std::fs::write(&seg_path, "junk\n").unwrap();
        let known = (
            seg_path.clone(),
            segment::SegmentData {
                samples: vec![t(1), t(2)],
                ..segment::SegmentData::default()
            },
        );
        let msg = sync(d.path(), Some(&known), &mut Vec::new());
        assert!(msg.iter().any(|m| m.starts_with("wrote ")), "{msg:?}");
        check(&d.path().join(file_name(1, 2))).unwrap();
        // not known: read, and named as unreadable
        std::fs::remove_file(d.path().join(file_name(1, 2))).unwrap();
        let msg = sync(d.path(), None, &mut Vec::new());
        assert!(
            msg.iter()
                .any(|m| m.contains("not a readable irqlab segment")),
            "{msg:?}"
        );
    }

    /// A row as compared: key, description, first seq and wall clock,
    /// last seq and wall clock.
    type Span = (String, String, u64, u64, u64, u64);

    /// Every sample visited: the rows `rows` must give from the first
    /// and last sample of each run under one shape.
    fn rows_sample_by_sample(
        base: Option<&Shape>,
        shapes: &[ShapeAt],
        samples: &[SampleTime],
    ) -> Vec<Span> {
        type Id = (String, String, Option<String>);
        let mut out: BTreeMap<Id, (u64, u64, u64, u64)> = BTreeMap::new();
        let mut shapes: Vec<&ShapeAt> = shapes.iter().collect();
        shapes.sort_by_key(|s| s.seq);
        let mut samples = samples.to_vec();
        samples.sort_by_key(|s| s.seq);
        for t in &samples {
            let cur = shapes
                .iter()
                .rev()
                .find(|s| s.seq <= t.seq)
                .map(|s| &s.shape)
                .or(base);
            for m in cur.map_or(&[][..], |s| &s.irq_rows[..]) {
                let id = (m.key.clone(), m.description.clone(), m.affinity.clone());
                let e = out.entry(id).or_insert((t.seq, t.wall_ns, 0, 0));
                (e.2, e.3) = (t.seq, t.wall_ns);
            }
        }
        let mut v: Vec<_> = out
            .into_iter()
            .map(|((k, d, _), (a, aw, b, bw))| (k, d, a, aw, b, bw))
            .collect();
        v.sort_by(|a, b| (&a.0, a.2).cmp(&(&b.0, b.2)));
        v
    }

    #[test]
    fn identity_rows_from_the_ends_of_each_shape_run_are_those_of_every_sample() {
        let shape = |rows: &[(&str, &str)]| Shape {
            irq_rows: rows.iter().map(|(k, d)| meta(k, d)).collect(),
            ..Shape::default()
        };
        let a = shape(&[
            ("24", "IO-APIC 2-edge timer"),
            ("LOC", "Local timer interrupts"),
        ]);
        let b = shape(&[
            ("24", "IO-APIC 2-edge rtc0"),
            ("LOC", "Local timer interrupts"),
        ]);
        let c = shape(&[
            ("LOC", "Local timer interrupts"),
            ("NMI", "Non-maskable interrupts"),
        ]);
        // samples with gaps (recover skipped lines), shapes at a sample,
        // between samples, before the first and after the last
        let seqs = [3u64, 4, 5, 8, 9, 10, 11, 15, 16, 20];
        let samples: Vec<SampleTime> = seqs.iter().map(|&q| t(q)).collect();
        for (base, shapes) in [
            (None, vec![]),
            (Some(&a), vec![]),
            (
                None,
                vec![ShapeAt {
                    seq: 5,
                    shape: b.clone(),
                }],
            ),
            (
                Some(&a),
                vec![
                    ShapeAt {
                        seq: 4,
                        shape: b.clone(),
                    },
                    ShapeAt {
                        seq: 7,
                        shape: a.clone(),
                    },
                    ShapeAt {
                        seq: 9,
                        shape: c.clone(),
                    },
                    ShapeAt {
                        seq: 10,
                        shape: b.clone(),
                    },
                    ShapeAt {
                        seq: 16,
                        shape: c.clone(),
                    },
                    ShapeAt {
                        seq: 30,
                        shape: a.clone(),
                    },
                ],
            ),
            (
                None,
                vec![
                    ShapeAt {
                        seq: 1,
                        shape: c.clone(),
                    },
                    ShapeAt {
                        seq: 2,
                        shape: a.clone(),
                    },
                    ShapeAt {
                        seq: 20,
                        shape: b.clone(),
                    },
                ],
            ),
        ] {
            let got: Vec<_> = rows(base, &shapes, &samples)
                .into_iter()
                .map(|r| {
                    let d = r.description.clone();
                    (
                        r.key,
                        d,
                        r.first_seq,
                        r.first_wall_ns,
                        r.last_seq,
                        r.last_wall_ns,
                    )
                })
                .collect();
            assert_eq!(got, rows_sample_by_sample(base, &shapes, &samples));
        }
    }
}
