//! Where things are in a recording: `DIR/host=H/boot=B/` (Hive
//! partitions), segments `part-FIRST-LAST.parquet` (sample sequence
//! numbers), the journal; finding the boot directories of a dataset, and
//! recovering a journal left by a crash into a segment.

use super::journal;
use super::schema::{CellValue, JournalLine, SampleTime, ShapeAt, SourceKind, JOURNAL};
use super::segment::{self, SegmentData};
use crate::host::HostFs;
use anyhow::{bail, Context};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// A partition value: characters other than `A-Za-z0-9._-` become `_`.
pub fn partition_value(s: &str) -> String {
    let v: String = s
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if v.is_empty() {
        "unknown".into()
    } else {
        v
    }
}

/// `out/host=H/boot=B` for the tree of `fs`.
pub fn boot_dir(out: &Path, fs: &HostFs, host: Option<&str>) -> PathBuf {
    let host = host
        .map(str::to_string)
        .or_else(|| fs.read_attr("proc/sys/kernel/hostname"))
        .unwrap_or_else(|| "unknown".into());
    let boot = crate::env::boot_id(fs);
    out.join(format!("host={}", partition_value(&host)))
        .join(format!("boot={}", partition_value(&boot)))
}

pub fn segment_name(first: u64, last: u64) -> String {
    format!("part-{first:010}-{last:010}.parquet")
}

/// (first, last) sequence of a segment file name.
pub fn parse_segment_name(name: &str) -> Option<(u64, u64)> {
    let mid = name.strip_prefix("part-")?.strip_suffix(".parquet")?;
    let (a, b) = mid.split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Segments of a boot directory, by first sequence, without superseded
/// ones ([`superseded`]).
pub fn segments(dir: &Path) -> anyhow::Result<Vec<(u64, u64, PathBuf)>> {
    let mut v = segment_files(dir)?;
    let gone = superseded(&v);
    v.retain(|s| !gone.contains(&s.2));
    Ok(v)
}

/// Every `part-FIRST-LAST.parquet` of a boot directory, sorted.
fn segment_files(dir: &Path) -> anyhow::Result<Vec<(u64, u64, PathBuf)>> {
    let rd = std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut v: Vec<(u64, u64, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            parse_segment_name(&name).map(|(a, b)| (a, b, e.path()))
        })
        .collect();
    v.sort();
    Ok(v)
}

/// Files whose samples another file of the list holds too: a merged
/// window's file left beside the file that replaced it (`record` writes
/// the new one before it removes the old one; a crash can fall between).
/// One pass in (first, last descending) order: a file is covered when a
/// file before it (starting no later) reaches as far (names are unique, so
/// no two files have the same range).
pub fn superseded(v: &[(u64, u64, PathBuf)]) -> Vec<PathBuf> {
    let mut order: Vec<&(u64, u64, PathBuf)> = v.iter().collect();
    order.sort_by(|x, y| x.0.cmp(&y.0).then(y.1.cmp(&x.1)));
    let mut gone = Vec::new();
    let mut reach: Option<u64> = None;
    for (_, b, p) in order {
        if reach.is_some_and(|r| r >= *b) {
            gone.push(p.clone());
        }
        reach = Some(reach.map_or(*b, |r| r.max(*b)));
    }
    gone
}

/// The sequence number after the last segment's.
pub fn next_seq(dir: &Path) -> anyhow::Result<u64> {
    Ok(segments(dir)?.last().map_or(0, |s| s.1 + 1))
}

/// Boot directories under `dir` (itself, `host=*/boot=*` or `boot=*`).
pub fn boot_dirs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        bail!("{}: no such recording directory", dir.display());
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with("boot=") {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut out = Vec::new();
    let children = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    let named = |p: &Path, pre: &str| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(pre))
    };
    for c in children(dir) {
        if named(&c, "boot=") {
            out.push(c);
        } else if named(&c, "host=") {
            out.extend(children(&c).into_iter().filter(|b| named(b, "boot=")));
        }
    }
    Ok(out)
}

/// The one boot directory of `dir`, or an error listing the choices.
pub fn one_boot_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    let mut v = boot_dirs(dir)?;
    match v.len() {
        0 => bail!(
            "{}: no recording here (expected host=…/boot=…/ directories)",
            dir.display()
        ),
        1 => Ok(v.remove(0)),
        _ => {
            let list: Vec<String> = v.iter().map(|p| p.display().to_string()).collect();
            bail!(
                "{} holds {} recordings; name one of:\n  {}",
                dir.display(),
                v.len(),
                list.join("\n  ")
            )
        }
    }
}

/// Journal lines after the last segment, with a message about a torn tail.
pub fn journal_lines(dir: &Path) -> anyhow::Result<(Vec<JournalLine>, Option<String>)> {
    let path = dir.join(JOURNAL);
    if !path.exists() {
        return Ok((Vec::new(), None));
    }
    let after = next_seq(dir)?;
    let (lines, torn) = journal::read(&path)?;
    let lines: Vec<JournalLine> = lines.into_iter().filter(|l| l.time.seq >= after).collect();
    let msg = torn.map(|t| {
        format!(
            "{}: {} at offset {}; kept the {} complete sample(s) before it",
            path.display(),
            t.why,
            t.offset,
            lines.len()
        )
    });
    Ok((lines, msg))
}

/// Every cell's value at the last sample of the last segment of `dir`
/// (empty without segments): what a journal written after that segment
/// does not repeat.
pub fn last_state(dir: &Path) -> anyhow::Result<Vec<CellValue>> {
    let Some((_, _, path)) = segments(dir)?.pop() else {
        return Ok(Vec::new());
    };
    let mut cells = segment::read(&path)?.cells;
    cells.sort_by_key(|c| c.0);
    let mut state: BTreeMap<(SourceKind, String, Option<u32>), u64> = BTreeMap::new();
    for (_, c) in cells {
        state.insert((c.source, c.key, c.cpu), c.value);
    }
    Ok(state
        .into_iter()
        .map(|((source, key, cpu), value)| CellValue {
            source,
            key,
            cpu,
            value,
        })
        .collect())
}

/// Lines of a journal as segment data. A segment's first sample holds
/// every cell: the journal's first line has those that changed (all of
/// them when the journal began a recording), `base` the rest (the state
/// of the segment before: [`last_state`]).
pub fn lines_to_segment(lines: Vec<JournalLine>, base: Vec<CellValue>) -> SegmentData {
    let mut d = SegmentData::default();
    if let Some(first) = lines.first() {
        let seen: HashSet<(SourceKind, &str, Option<u32>)> = first
            .cells
            .iter()
            .map(|c| (c.source, c.key.as_str(), c.cpu))
            .collect();
        let seq = first.time.seq;
        let rest: Vec<(u64, CellValue)> = base
            .into_iter()
            .filter(|c| !seen.contains(&(c.source, c.key.as_str(), c.cpu)))
            .map(|c| (seq, c))
            .collect();
        d.cells = rest;
    }
    for l in lines {
        let t: SampleTime = l.time;
        d.samples.push(t);
        if let Some(shape) = l.shape {
            d.shapes.push(ShapeAt { seq: t.seq, shape });
        }
        d.cells.extend(l.cells.into_iter().map(|c| (t.seq, c)));
    }
    d
}

/// Remove `*.parquet.tmp` files (a segment whose write was interrupted:
/// its samples are still in the journal); one message per file.
fn remove_partial_segments(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".parquet.tmp"))
        .map(|p| match std::fs::remove_file(&p) {
            Ok(()) => format!(
                "removed {} (a segment whose write was interrupted)",
                p.display()
            ),
            Err(e) => format!("cannot remove {}: {e}", p.display()),
        })
        .collect()
}

/// Remove the files [`superseded`] by a merged window's newer file.
fn remove_superseded(dir: &Path) -> anyhow::Result<Vec<String>> {
    let gone = superseded(&segment_files(dir)?);
    Ok(gone
        .iter()
        .map(|p| match std::fs::remove_file(p) {
            Ok(()) => format!(
                "removed {} (its samples are in a newer, merged segment)",
                p.display()
            ),
            Err(e) => format!("cannot remove {}: {e}", p.display()),
        })
        .collect())
}

/// Turn a journal left behind into a segment and remove interrupted
/// segment writes and superseded segments; `Some(message)` when there was
/// something to say.
pub fn recover_boot_dir(dir: &Path) -> anyhow::Result<Option<String>> {
    let path = dir.join(JOURNAL);
    // not a directory that a running `record` still writes (its journal is
    // locked): its segment being written and the merged file it is about
    // to replace are not leftovers
    let lock = match path.exists() {
        true => Some(journal::lock(&path, false)?),
        false => None,
    };
    let mut msg = remove_partial_segments(dir);
    msg.extend(remove_superseded(dir)?);
    if lock.is_none() {
        return Ok((!msg.is_empty()).then(|| msg.join("\n")));
    }
    let (lines, torn) = journal_lines(dir)?;
    let n = lines.len();
    let base = if lines.is_empty() {
        Vec::new()
    } else {
        last_state(dir).unwrap_or_else(|e| {
            msg.push(format!(
                "the last segment of {} is unreadable ({e:#}): the recovered segment's first sample holds only the counters the journal has",
                dir.display()
            ));
            Vec::new()
        })
    };
    if let Some(t) = torn {
        msg.push(t);
    }
    let seg = lines_to_segment(lines, base);
    if let (Some(a), Some(b)) = (seg.samples.first(), seg.samples.last()) {
        let out = dir.join(segment_name(a.seq, b.seq));
        segment::write(&out, &mut seg.into())?;
        msg.push(format!(
            "recovered {n} sample(s) from {} into {}",
            path.display(),
            out.display()
        ));
    }
    std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
    Ok((!msg.is_empty()).then(|| msg.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_whose_samples_a_newer_file_holds_is_superseded() {
        let p = |s: &str| PathBuf::from(s);
        let v = vec![
            (0, 59, p("a")),
            (0, 119, p("b")),
            (120, 179, p("c")),
            (180, 180, p("d")),
            (180, 239, p("e")),
        ];
        assert_eq!(superseded(&v), vec![p("a"), p("d")]);
        let mut shuffled = v.clone();
        shuffled.reverse();
        assert_eq!(superseded(&shuffled), vec![p("a"), p("d")], "any order");
        assert!(superseded(&v[1..3]).is_empty());
        assert!(superseded(&[]).is_empty());
    }
}
