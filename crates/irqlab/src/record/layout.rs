//! Where things are in a recording: `DIR/host=H/boot=B/` (Hive
//! partitions), segments `part-FIRST-LAST.parquet` (sample sequence
//! numbers), the journal; finding the boot directories of a dataset, and
//! recovering a journal left by a crash into a segment.

use super::journal;
use super::schema::{span, CellValue, JournalLine, SampleTime, Seqs, ShapeAt, SourceKind, JOURNAL};
use super::segment::{self, SegmentData};
use crate::host::HostFs;
use anyhow::{bail, Context};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Whether a partition value keeps `c` as it is: `A-Za-z0-9._-`.
pub fn partition_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// A partition value: characters other than `A-Za-z0-9._-` become `_`.
pub fn partition_value(s: &str) -> String {
    let v: String = s
        .trim()
        .chars()
        .map(|c| if partition_char(c) { c } else { '_' })
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
        .or_else(|| fs.read_attr(irqlab_core::paths::HOSTNAME))
        .unwrap_or_else(|| "unknown".into());
    let boot = boot_id(fs);
    out.join(format!("host={}", partition_value(&host)))
        .join(format!("boot={}", partition_value(&boot)))
}

/// The boot partition of the tree of `fs`: its
/// `proc/sys/kernel/random/boot_id` when it has one; else (a synthetic or
/// copied `--root` tree) `tree-` and 16 hex digits of the FNV-1a hash of
/// the `btime` line of its `proc/stat` and the tree's absolute path: the
/// same tree gives the same id at every run, two trees different ids.
pub fn boot_id(fs: &HostFs) -> String {
    if let Some(id) = fs
        .read_attr(irqlab_core::paths::BOOT_ID)
        .filter(|s| !s.is_empty())
    {
        return id;
    }
    let mut btime = String::new();
    let mut buf = Vec::new();
    let _ = fs.for_each_line(irqlab_core::paths::PROC_STAT, &mut buf, |l| {
        if l.starts_with(b"btime ") {
            btime = String::from_utf8_lossy(l).trim().to_string();
        }
        Ok::<(), std::io::Error>(())
    });
    let root = std::fs::canonicalize(fs.root()).unwrap_or_else(|_| fs.root().to_path_buf());
    let text = format!("{btime}\n{}", root.display());
    // FNV-1a 64: stable across irqlab versions and platforms
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("tree-{h:016x}")
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
/// ones ([`list`]).
pub fn segments(dir: &Path) -> anyhow::Result<Vec<(u64, u64, PathBuf)>> {
    Ok(list(dir)?.segments)
}

/// The segment files of a boot directory, sorted out.
#[derive(Debug, Default)]
pub struct Listing {
    /// The files to read: (first, last, path) as named, by first sequence.
    pub segments: Vec<(u64, u64, PathBuf)>,
    /// Files another file is checked to hold every sample of: (file, why).
    pub superseded: Vec<(PathBuf, String)>,
    /// Files named inside another's range that were kept, and why.
    pub notes: Vec<String>,
    /// Files of two recordings: a file named inside another's range that
    /// holds a sample of the other's numbers with other clock readings
    /// ([`SampleTime::same_clock`]), one message naming both per pair.
    /// Neither supersedes the other, and nothing may be removed.
    pub mixed: Vec<String>,
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

/// Files whose name's range lies inside another file's: candidates for
/// [`list`]'s check. A merged window's file left beside the file that
/// replaced it looks so (`record` writes the new one before it removes
/// the old one; a crash can fall between), and so does a file copied
/// under another name. One pass in (first, last descending) order: a file
/// is inside when a file before it (starting no later) reaches as far
/// (names are unique, so no two files have the same range).
pub fn named_inside(v: &[(u64, u64, PathBuf)]) -> Vec<PathBuf> {
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

/// The file name of `p` for messages.
fn name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Sort out the segment files of `dir`. A file is **superseded** only
/// when another file is checked to hold every one of its samples: that
/// file's own footer (`irqlab.seqs`, `segment::seqs`) must list exactly
/// the range of its name, with the row count the file has, and hold the
/// samples the first file's footer lists; and both files read whole, every
/// sample of the first must be in the other with the same clock readings
/// ([`SampleTime::same_clock`]). A name alone never makes a file
/// superseded, nor do footers alone: a file named inside another's range
/// that is not so held is read (the reader drops samples it already has,
/// and says so; a note says why it was not superseded, unless it only
/// fills holes of the files around it), one whose footer or rows cannot
/// be read is kept, and one
/// whose samples the other holds with other readings is a file of another
/// recording ([`Listing::mixed`]).
pub fn list(dir: &Path) -> anyhow::Result<Listing> {
    let files = segment_files(dir)?;
    let inside = named_inside(&files);
    let mut out = Listing::default();
    if inside.is_empty() {
        out.segments = files;
        return Ok(out);
    }
    let mut read = Checked::default();
    let mut gone: HashSet<PathBuf> = HashSet::new();
    for y in &inside {
        let Some(&(ya, yb, _)) = files.iter().find(|f| &f.2 == y) else {
            continue;
        };
        // what must be held: the samples it has (a file whose footer does
        // not check out is never removed: what it holds is not known)
        let want: Vec<[u64; 2]> = match read.seqs(y) {
            Ok(s) => s.runs,
            Err(e) => {
                out.notes.push(format!(
                    "{}: named inside another segment's range but not superseded ({e}); read as it is",
                    y.display()
                ));
                continue;
            }
        };
        let mut why_not = Vec::new();
        for (xa, xb, x) in files.iter().filter(|f| &f.2 != y && f.0 <= ya && f.1 >= yb) {
            match held_by(y, &want, (*xa, *xb, x), &mut read) {
                Ok(why) => {
                    out.superseded.push((y.clone(), why));
                    gone.insert(y.clone());
                    break;
                }
                Err(NotHeld::Mixed(m)) => {
                    why_not.push(format!(
                        "{} holds its samples with other clock readings",
                        name(x)
                    ));
                    out.mixed.push(m);
                }
                Err(NotHeld::Why(e)) => why_not.push(e),
                Err(NotHeld::Fills) => {}
            }
        }
        // a file filling holes of the others (recover's) is no news
        if !gone.contains(y) && !why_not.is_empty() {
            out.notes.push(format!(
                "{}: named inside another segment's range but not superseded ({}); read as it is",
                y.display(),
                why_not.join("; ")
            ));
        }
    }
    out.segments = files.into_iter().filter(|f| !gone.contains(&f.2)).collect();
    Ok(out)
}

/// What [`list`] read of each file, read once: its checked samples
/// (`segment::seqs`) and its clock readings (`segment::read`).
#[derive(Default)]
struct Checked {
    seqs: HashMap<PathBuf, Result<Seqs, String>>,
    times: HashMap<PathBuf, Result<HashMap<u64, SampleTime>, String>>,
}

impl Checked {
    fn seqs(&mut self, p: &Path) -> Result<Seqs, String> {
        self.seqs
            .entry(p.to_path_buf())
            .or_insert_with(|| segment::seqs(p).map_err(|e| format!("{e:#}")))
            .clone()
    }

    /// Read the clock readings of `p`'s samples unless read before: why
    /// they could not be.
    fn load_times(&mut self, p: &Path) -> Result<(), NotHeld> {
        self.times
            .entry(p.to_path_buf())
            .or_insert_with(|| {
                segment::read(p)
                    .map(|d| d.samples.into_iter().map(|t| (t.seq, t)).collect())
                    .map_err(|e| format!("{e:#}"))
            })
            .as_ref()
            .map(|_| ())
            .map_err(|e| NotHeld::Why(e.clone()))
    }

    /// The clock readings of `p`'s samples by number, once
    /// [`Checked::load_times`] has read them.
    fn loaded_times(&self, p: &Path) -> Option<&HashMap<u64, SampleTime>> {
        self.times.get(p).and_then(|t| t.as_ref().ok())
    }
}

/// Why a file is not superseded by another.
enum NotHeld {
    /// The other file lacks some of its samples, or could not be checked.
    Why(String),
    /// The other file holds a sample of its numbers with other clock
    /// readings: the message naming both (files of two recordings).
    Mixed(String),
    /// The other file holds none of its samples: it fills a hole of the
    /// other (`recover` writes such files for skipped journal lines).
    Fills,
}

/// Whether the file `x` (named `xa`–`xb`) holds every sample of the file
/// `y` (`want`, from its footer), checked as [`list`] says: the reason
/// for superseding `y`, or why not.
fn held_by(
    y: &Path,
    want: &[[u64; 2]],
    (xa, xb, x): (u64, u64, &Path),
    read: &mut Checked,
) -> Result<String, NotHeld> {
    let s = match read.seqs(x) {
        Ok(s) if s.range() != Some((xa, xb)) => {
            return Err(NotHeld::Why(format!(
                "{} holds samples {} (its footer), not those of its name",
                name(x),
                s.range().map_or_else(String::new, |(a, b)| span(a, b))
            )))
        }
        Ok(s) if want.iter().all(|r| s.holds(r[0], r[1])) => s,
        Ok(s) if !want.iter().any(|r| s.overlaps(r[0], r[1])) => return Err(NotHeld::Fills),
        Ok(_) => {
            return Err(NotHeld::Why(format!(
                "{} lacks some of its samples",
                name(x)
            )))
        }
        Err(e) => return Err(NotHeld::Why(e)),
    };
    let n = same_clocks(y, x, read)?;
    Ok(format!(
        "its samples are in {} (checked: its footer lists samples {xa}–{xb}{} and {} rows, as the file has, and holds this file's {n} sample(s) with the same clock readings)",
        name(x),
        if s.runs.len() > 1 { " with gaps" } else { "" },
        s.rows
    ))
}

/// Whether every sample of the file `y` is in the file `x` with the same
/// clock readings (both read whole): how many there are, or why not.
fn same_clocks(y: &Path, x: &Path, read: &mut Checked) -> Result<usize, NotHeld> {
    // both read first (`x` only when `y` could be), then compared through
    // shared borrows; the `else` is not reached after two loads
    read.load_times(y)?;
    read.load_times(x)?;
    let (Some(ys), Some(xs)) = (read.loaded_times(y), read.loaded_times(x)) else {
        return Err(NotHeld::Why(format!("{} or {} not read", name(y), name(x))));
    };
    let mut seqs: Vec<&u64> = ys.keys().collect();
    seqs.sort();
    for seq in seqs {
        let (Some(t), Some(u)) = (ys.get(seq), xs.get(seq)) else {
            return Err(NotHeld::Why(format!("{} lacks its sample {seq}", name(x))));
        };
        if !t.same_clock(u) {
            return Err(NotHeld::Mixed(mixed(y, x, t, u)));
        }
    }
    Ok(ys.len())
}

/// The message for the files `y` and `x` whose sample `t` (of `y`) and
/// `u` (of `x`) share a number but not their clock readings.
fn mixed(y: &Path, x: &Path, t: &SampleTime, u: &SampleTime) -> String {
    format!(
        "{} and {} look like files of two recordings in one boot directory: the first is named inside the second's range, but its sample {} was taken at {}, the second's sample {} at {}; neither supersedes the other and neither was removed: move one recording's files out of {} (then run `irqlab recover` again)",
        y.display(),
        x.display(),
        t.seq,
        t.readings(),
        u.seq,
        u.readings(),
        y.parent().map_or_else(String::new, |d| d.display().to_string())
    )
}

/// The sequence number after every segment's (as named: no file is ever
/// written under a name inside another's range by a run that continues).
pub fn next_seq(dir: &Path) -> anyhow::Result<u64> {
    Ok(segment_files(dir)?
        .iter()
        .map(|s| s.1.saturating_add(1))
        .max()
        .unwrap_or(0))
}

/// Ready boot directory `dir` for a run: recover what an earlier run left
/// ([`recover_boot_dir`], whose message is returned: `record` only clears
/// the way, and goes on even when nothing was recovered) and number the run's
/// first sample after every segment ([`next_seq`]). A new (empty)
/// directory holds nothing to recover and no segment to number after: one
/// listing instead of recovery's and numbering's five. Without a journal
/// (no run was killed) the recording is not read back: of what `replay`
/// would say ([`super::reader::check_samples_except`]), only the files named like
/// segments that are not read are said ([`Recovery::checks`]).
pub fn prepare_boot_dir(dir: &Path) -> anyhow::Result<(u64, Option<String>)> {
    let empty = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .next()
        .is_none();
    if empty {
        return Ok((0, None));
    }
    let msg = recover_boot_dir(dir)?.said();
    Ok((next_seq(dir)?, msg))
}

/// `msg` with `lines` after it, one a line (`None` when there is none).
fn with_lines(msg: Option<String>, lines: Vec<String>) -> Option<String> {
    match (msg, lines.is_empty()) {
        (m, true) => m,
        (None, false) => Some(lines.join("\n")),
        (Some(m), false) => Some(format!("{m}\n{}", lines.join("\n"))),
    }
}

/// The boot directories under a recording directory ([`partitions`]),
/// and the `host=`/`boot=` entries on the way that could not be read.
#[derive(Debug, Default)]
pub struct Partitions {
    /// The boot directories found, sorted.
    pub boot_dirs: Vec<PathBuf>,
    /// One error per `host=`/`boot=` entry that could not be looked at
    /// or listed (no permission, a symlink loop, a dangling symlink),
    /// naming it and the OS error: the recordings in it are not known.
    pub unreadable: Vec<String>,
}

/// Boot directories under `dir` (itself, `host=*/boot=*` or `boot=*`),
/// each `host=`/`boot=` entry that could not be read named in
/// [`Partitions::unreadable`] (the others are still found). An error
/// only when `dir` itself is not a directory or cannot be listed.
pub fn partitions(dir: &Path) -> anyhow::Result<Partitions> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            bail!(
                "{}: cannot read the recording directory: {e}",
                dir.display()
            )
        }
        _ => bail!("{}: no such recording directory", dir.display()),
    }
    let mut out = Partitions::default();
    if partition_dir(dir, "boot=").is_some() {
        out.boot_dirs.push(dir.to_path_buf());
        return Ok(out);
    }
    for c in partition_dirs(dir, &mut out.unreadable)? {
        if partition_named(&c, "boot=") {
            out.boot_dirs.push(c);
        } else if partition_named(&c, "host=") {
            match partition_dirs(&c, &mut out.unreadable) {
                Ok(boots) => out
                    .boot_dirs
                    .extend(boots.into_iter().filter(|b| partition_named(b, "boot="))),
                Err(e) => out.unreadable.push(format!("{e:#}")),
            }
        }
    }
    out.unreadable.sort();
    Ok(out)
}

/// Boot directories under `dir` ([`partitions`]). A `host=`/`boot=`
/// entry on the way that cannot be read is an error naming it (each
/// one): never a recording left out unsaid.
pub fn boot_dirs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let p = partitions(dir)?;
    if !p.unreadable.is_empty() {
        bail!(
            "{}
not every recording under {} is known: name the one to read (its host=…/boot=… directory)",
            p.unreadable.join("\n"),
            dir.display()
        );
    }
    Ok(p.boot_dirs)
}

/// Whether the file name of `p` starts with `pre` (`host=`, `boot=`).
fn partition_named(p: &Path, pre: &str) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(pre))
}

/// `dir` as a `pre` (`host=`, `boot=`) partition directory: `dir` itself
/// when so named, else the directory it resolves to when that one is
/// (`.` or `..` inside a recording, a symlink such as `latest` to one,
/// whose own names say nothing); `None` when neither is.
pub fn partition_dir(dir: &Path, pre: &str) -> Option<PathBuf> {
    if partition_named(dir, pre) {
        return Some(dir.to_path_buf());
    }
    std::fs::canonicalize(dir)
        .ok()
        .filter(|c| partition_named(c, pre))
}

/// The `host=`/`boot=` directories in `d`, sorted: an error when `d`
/// cannot be listed; such an entry that cannot be looked at is named in
/// `unreadable` (another kind of file is not a partition).
fn partition_dirs(d: &Path, unreadable: &mut Vec<String>) -> anyhow::Result<Vec<PathBuf>> {
    let unlisted = |e: std::io::Error| {
        anyhow::anyhow!("{}: cannot list the recording directory: {e}", d.display())
    };
    let mut v = Vec::new();
    for e in std::fs::read_dir(d).map_err(unlisted)? {
        let p = e.map_err(unlisted)?.path();
        if !partition_named(&p, "host=") && !partition_named(&p, "boot=") {
            continue;
        }
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => v.push(p),
            Ok(_) => {}
            Err(e) => unreadable.push(format!(
                "{}: cannot read the recording directory: {e}",
                p.display()
            )),
        }
    }
    v.sort();
    Ok(v)
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

/// The journal's lines that no segment of `segs` holds (`seqs`: the
/// samples of each segment, those read), and what reading it did not
/// take. No journal: nothing.
pub fn journal_lines(
    dir: &Path,
    held: &[Seqs],
) -> anyhow::Result<(Vec<JournalLine>, journal::Problems)> {
    let path = dir.join(JOURNAL);
    if path.symlink_metadata().is_err() {
        return Ok((Vec::new(), journal::Problems::default()));
    }
    let (lines, pr) = journal::read(&path)?;
    let lines = lines
        .into_iter()
        .filter(|l| !held.iter().any(|s| s.has(l.time.seq)))
        .collect();
    Ok((lines, pr))
}

/// Every cell's value at sample `seq` of the segment at `path` (its last
/// change at or before `seq`; the segment may hold later samples): what
/// a journal line of the sample after `seq` does not repeat.
pub fn state_at(path: &Path, seq: u64) -> anyhow::Result<Vec<CellValue>> {
    let mut cells = segment::read(path)?.cells;
    cells.retain(|c| c.0 <= seq);
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
/// at the sample before, from the segment holding it: [`state_at`]).
/// Without its first line (lost, samples missing before the journal's
/// first read line) `base` is empty: the segment's first sample holds
/// only the cells listed, and replay takes every other cell as unknown
/// until it is listed again.
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
/// its samples are still in the journal); one message per file, each one
/// that could not be removed added to `left`.
fn remove_partial_segments(dir: &Path, left: &mut Vec<PathBuf>) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".parquet.tmp"))
        .map(|p| remove_said(&p, "a segment whose write was interrupted", left))
        .collect()
}

/// Remove the files [`list`] found superseded, each with its reason
/// (those that could not be removed added to `left`).
fn remove_superseded(listing: &Listing, left: &mut Vec<PathBuf>) -> Vec<String> {
    listing
        .superseded
        .iter()
        .map(|(p, why)| remove_said(p, why, left))
        .collect()
}

/// Remove the file `p` recovery found no longer needed (`why`), and say
/// so; or say that it could not and is still there, and add it to `left`
/// ([`Recovery::not_removed`]).
pub(super) fn remove_said(p: &Path, why: &str, left: &mut Vec<PathBuf>) -> String {
    match std::fs::remove_file(p) {
        Ok(()) => format!("removed {} ({why})", p.display()),
        Err(e) => {
            left.push(p.to_path_buf());
            format!(
                "cannot remove {} ({why}): {e}: it is still there; remove it by hand",
                p.display()
            )
        }
    }
}

/// What [`recover_boot_dir`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// What recovery did or found, one line per finding (`None`: there
    /// was nothing to recover).
    pub message: Option<String>,
    /// What `replay` would say about the recording's data, one line per
    /// finding: with a journal recovered, what the segments' sample times
    /// and shapes show ([`super::reader::check_samples_except`]: all of it
    /// but an old segment whose counters alone are damaged); without one
    /// (nothing recovered, the recording not read back), the files named
    /// like segments that are not read
    /// ([`super::reader::stray_part_warnings`]).
    pub checks: Vec<String>,
    /// A journal was there but none of its lines could be read (bad
    /// lines only, or a torn first record: a journal cut inside its first
    /// line, NUL bytes) and no segment holds its samples: it was kept
    /// aside byte for byte, and the message says "nothing recovered".
    /// `irqlab recover` fails then, while `record`, which only clears the
    /// way, goes on.
    pub nothing_recovered: bool,
    /// The files recovery meant to remove (interrupted writes, superseded
    /// segments, orphaned IRQ identity files) but could not, each named
    /// in the message: the directory is not as recovery leaves it, and
    /// `irqlab recover` fails.
    pub not_removed: Vec<PathBuf>,
}

/// Turn a journal left behind into a segment and remove interrupted
/// segment writes and superseded segments; the [`Recovery`]'s message
/// when there was something to say.
///
/// Never removes input it did not fully convert: the journal is read
/// whole first (bad lines skipped and named, every readable line kept); a
/// journal of a newer schema leaves the whole directory untouched (an
/// error); the new segment is read back and its samples and rows counted
/// before the journal goes; a journal with lines that were not converted
/// is kept, renamed `journal.jsonl.partial-<unix seconds>`. A journal
/// whose samples have no layout (its first line lost, no segment before
/// it) is left as it is (an error): no segment replay cannot read. A
/// directory holding files of two recordings ([`Listing::mixed`]: a file
/// named inside another's range whose samples are numbered alike but
/// taken at other times) is left as it is (an error naming both files):
/// neither is a copy of the other.
///
/// Then, when a journal was recovered, what `replay` would say about the
/// recording's data is said too ([`Recovery::checks`]: files named like
/// segments that are not read, samples no file holds, clocks that are
/// wrong), from the sample times and shapes of each segment
/// ([`super::reader::check_samples_except`]: footers and first rows, not
/// the counters of the segments there before): reading only, nothing is
/// removed for it. Recovery checks what it recovered (the segment it
/// wrote is read back whole) and what joins it to the segments before
/// (samples no file holds, clocks across the junction); `replay` reads
/// every segment whole, so only it names an old segment whose counters
/// alone are damaged. A segment recovery could not read is named once,
/// by recovery. Without a journal the recording is not read back: only
/// its listing is, for files named like segments that are not read.
pub fn recover_boot_dir(dir: &Path) -> anyhow::Result<Recovery> {
    let (mut r, journal) = recover_journal(dir)?;
    // the segment written, its times and shapes as read back: not read again
    let known = journal.as_ref().and_then(|j| j.written.as_ref());
    // the IRQ identity files follow the segments there now
    let synced = super::identity::sync(dir, known, &mut r.not_removed);
    r.message = with_lines(r.message, synced);
    r.checks = match &journal {
        Some(j) => super::reader::check_samples_except(dir, &j.unreadable, known),
        None => super::reader::stray_part_warnings(dir),
    };
    Ok(r)
}

/// What [`recover_journal`] read of a boot directory with a journal.
struct JournalRead {
    /// The segments whose samples could not be read (named in the
    /// message).
    unreadable: Vec<PathBuf>,
    /// The segment written and its sample times and shapes as
    /// [`verify`] read them back (no counters).
    written: Option<(PathBuf, SegmentData)>,
}

impl Recovery {
    /// [`Recovery::message`] then [`Recovery::checks`], one a line
    /// (`None`: nothing to say).
    pub fn said(&self) -> Option<String> {
        with_lines(self.message.clone(), self.checks.clone())
    }
}

/// How the line of [`recover_boot_dir`]'s message ends that says
/// [`Recovery::nothing_recovered`].
const NOTHING_RECOVERED: &str = ": nothing recovered: none of its lines could be read";

/// [`recover_boot_dir`] without the IRQ identity files and the checks;
/// with a journal there, also what was read ([`JournalRead`]), `None`
/// without one.
fn recover_journal(dir: &Path) -> anyhow::Result<(Recovery, Option<JournalRead>)> {
    let path = dir.join(JOURNAL);
    // not a directory that a running `record` still writes (its journal is
    // locked): its segment being written and the merged file it is about
    // to replace are not leftovers
    let lock = match path.symlink_metadata().is_ok() {
        true => Some(journal::lock(&path, false)?),
        false => None,
    };
    let read = match lock {
        Some(_) => Some(journal::read(&path)?),
        None => None,
    };
    if let Some((line, schema)) = read.as_ref().and_then(|r| r.1.newer) {
        bail!(
            "{}:{line}: {}: left {} as it is (a newer irqlab recovers it)",
            path.display(),
            super::schema::unreadable(schema),
            dir.display()
        );
    }
    if let Some((lines, problems)) = &read {
        refuse_unstorable(&path, lines, &problems.bad)?;
    }
    let listing = list(dir)?;
    // files of two recordings: nothing here is known to be a copy
    if !listing.mixed.is_empty() {
        bail!(
            "{}\nleft {} as it is: nothing removed, nothing recovered",
            listing.mixed.join("\n"),
            dir.display()
        );
    }
    // a journal of another recording: its later samples are not this one's
    if let Some(m) = read
        .as_ref()
        .and_then(|(lines, _)| other_recordings_journal(&path, lines, &listing.segments))
    {
        bail!(
            "{m}\nleft {} as it is: nothing removed, nothing recovered",
            dir.display()
        );
    }
    let mut not_removed = Vec::new();
    let mut msg = remove_partial_segments(dir, &mut not_removed);
    msg.extend(remove_superseded(&listing, &mut not_removed));
    let Some((lines, problems)) = read else {
        let r = Recovery {
            message: (!msg.is_empty()).then(|| msg.join("\n")),
            not_removed,
            ..Recovery::default()
        };
        return Ok((r, None));
    };
    // the samples of the segments there are (a journal left between a
    // segment's write and its own restart holds some of them)
    let mut held: Vec<(Seqs, PathBuf)> = Vec::new();
    let mut unreadable = Vec::new();
    for (_, _, p) in &listing.segments {
        match segment::seqs(p) {
            Ok(s) => held.push((s, p.clone())),
            Err(e) => {
                msg.push(unreadable_segment(&e));
                unreadable.push(p.clone());
            }
        }
    }
    let seqs: Vec<Seqs> = held.iter().map(|h| h.0.clone()).collect();
    let (dup, lines): (Vec<JournalLine>, Vec<JournalLine>) = lines
        .into_iter()
        .partition(|l| seqs.iter().any(|s| s.has(l.time.seq)));
    msg.extend(problems.messages(&path));
    let differ = match dup.is_empty() {
        true => false,
        false => {
            let (m, differ) = compare_held(&path, &dup, &held);
            msg.extend(m);
            differ
        }
    };
    let lines_left = lines.len();
    let mut written = None;
    if let Some(first) = lines.first().map(|l| l.time.seq) {
        let n = lines.len();
        // the sample before the journal's first and the segment holding
        // it (with a hole there, that segment holds later samples too)
        let before = sample_before(&held, first);
        // a journal that begins a run (its first line marks it) holds
        // every cell of that run: nothing comes from the run before
        let starts_run = lines
            .first()
            .is_some_and(|l| l.shape.as_ref().is_some_and(|s| s.run.is_some()));
        // samples missing between the segment and the journal (its
        // first line lost: a run's first sample, or the changes since
        // the segment): the segment's values are not the journal's
        let gap = match before {
            Some((last, p)) if !starts_run && last.checked_add(1) != Some(first) => {
                Some(missing_before(&path, p, last, first))
            }
            _ => None,
        };
        let base = match before {
            _ if starts_run || gap.is_some() => Vec::new(),
            None => Vec::new(),
            Some((last, p)) => state_at(p, last).unwrap_or_else(|e| {
                msg.push(format!(
                    "{e:#}: the recovered segment's first sample holds only the counters the journal has"
                ));
                Vec::new()
            }),
        };
        if lines.first().is_some_and(|l| l.shape.is_none()) && before.is_none() {
            msg.push(no_layout(&path, dir, &lines));
            bail!("{}", msg.join("\n"));
        }
        msg.extend(gap);
        if !problems.bad.is_empty() {
            msg.push(format!(
                "{}: the recovered segment lacks the skipped lines' samples: replay shows a counter not recorded again right after them as a `missing_samples` gap across them and at its next recorded change (unchanged in between)",
                path.display()
            ));
        }
        let seg = lines_to_segment(lines, base);
        let (Some(a), Some(b)) = (seg.samples.first(), seg.samples.last()) else {
            bail!("{}: no sample to recover", path.display());
        };
        let out = dir.join(segment_name(a.seq, b.seq));
        if out.symlink_metadata().is_ok() {
            bail!(
                "cannot recover {} into {}: a file of that name is there and does not hold these samples; move it away and run `irqlab recover` again",
                path.display(),
                out.display()
            );
        }
        let want = Written::of(
            seg.samples.iter().map(|t| t.seq),
            seg.cells.iter().map(|c| c.0),
        );
        segment::write(&out, &mut seg.into())?;
        match verify(&out, &want) {
            Ok(times) => written = Some((out.clone(), times)),
            Err(e) => {
                let _ = std::fs::remove_file(&out);
                return Err(e.context(format!(
                    "the segment recovered from {} did not read back; removed it and left the journal as it is",
                    path.display()
                )));
            }
        }
        msg.push(format!(
            "recovered {n} sample(s) from {} into {} (read back: {} samples, {} counters)",
            path.display(),
            out.display(),
            want.samples.len(),
            want.cell_count()
        ));
    }
    let mut nothing_recovered = false;
    if problems.is_clean() && !differ {
        std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        if lines_left == 0 {
            msg.push(format!("removed {}", path.display()));
        }
    } else {
        let why = match differ {
            true => "some of its lines differ from the segments that hold their samples (above)",
            false => "not every line of it was converted (above)",
        };
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let kept = (0..)
            .map(|i| match i {
                0 => dir.join(format!("{JOURNAL}.partial-{secs}")),
                _ => dir.join(format!("{JOURNAL}.partial-{secs}-{i}")),
            })
            .find(|p| p.symlink_metadata().is_err())
            .unwrap_or_else(|| dir.join(format!("{JOURNAL}.partial")));
        std::fs::rename(&path, &kept)
            .with_context(|| format!("cannot rename {} to {}", path.display(), kept.display()))?;
        msg.push(format!(
            "kept {} as {}: {why}; remove it once it is no longer needed",
            path.display(),
            kept.display()
        ));
        // no sample of it converted nor already held: a journal of only
        // bad lines, or of one torn record (cut inside its first line,
        // NUL bytes after a power loss)
        if lines_left == 0 && dup.is_empty() {
            msg.push(format!("{}{NOTHING_RECOVERED}", path.display()));
            nothing_recovered = true;
        }
    }
    let r = Recovery {
        message: (!msg.is_empty()).then(|| msg.join("\n")),
        checks: Vec::new(),
        nothing_recovered,
        not_removed,
    };
    Ok((
        r,
        Some(JournalRead {
            unreadable,
            written,
        }),
    ))
}

/// Whether the journal at `path` (its `lines`) is another recording's:
/// a line whose sample a segment of `segs` (named as [`list`] gives
/// them) holds with other clock readings ([`SampleTime::same_clock`]),
/// which `replay` refuses as files of two recordings. The message naming
/// the journal, the segment and both readings, or `None`. Only segments
/// whose name's range holds a line's sample are read (their sample
/// times): none when the journal follows the segments, as a killed
/// run's does. A segment that cannot be read is left to the checks
/// after (its samples are not known).
fn other_recordings_journal(
    path: &Path,
    lines: &[JournalLine],
    segs: &[(u64, u64, PathBuf)],
) -> Option<String> {
    for (a, b, seg) in segs {
        let mine: Vec<&JournalLine> = lines
            .iter()
            .filter(|l| (*a..=*b).contains(&l.time.seq))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let Ok(d) = segment::times(seg) else {
            continue;
        };
        let times: HashMap<u64, SampleTime> = d.samples.iter().map(|t| (t.seq, *t)).collect();
        let other = mine.iter().find_map(|l| {
            let t = times.get(&l.time.seq)?;
            (!t.same_clock(&l.time)).then_some((l.time, *t))
        });
        if let Some((j, t)) = other {
            return Some(format!(
                "{}: sample {} was taken at {}, but {} holds a sample {} taken at {}: the journal is another recording's, and its later samples would be taken as this one's: files of two recordings are in one boot directory (move one recording's files out, then run `irqlab recover` again)",
                path.display(),
                j.seq,
                j.readings(),
                seg.display(),
                t.seq,
                t.readings()
            ));
        }
    }
    None
}

/// What [`recover_journal`] says of a segment whose samples it cannot
/// read (`e`, naming it): the one line naming it, so it says what
/// `replay` does with it too, in replay's words
/// ([`super::reader::replay_skips_segment`];
/// [`super::reader::check_samples_except`] leaves replay's own line out).
fn unreadable_segment(e: &anyhow::Error) -> String {
    super::reader::replay_skips_segment(&format!(
        "{e:#}: left as it is; its samples are not recovered here, and replay skips it"
    ))
}

/// The last sample a segment of `held` holds before `first`, and that
/// segment: the one whose state the journal's line of `first` follows
/// when it is `first - 1`. A segment with a hole (a journal line recover
/// skipped) holds samples after it too.
fn sample_before(held: &[(Seqs, PathBuf)], first: u64) -> Option<(u64, &Path)> {
    held.iter()
        .filter_map(|(s, p)| Some((s.last_before(first)?, p.as_path())))
        .max_by_key(|(last, _)| *last)
}

/// What [`recover_journal`] says when the first sample it recovers from
/// the journal at `path` (`first`) does not follow the last sample
/// before it (`last`, of the segment `seg`): that a counter the
/// journal's line of `first` does not list is unknown from `first` until
/// a later line lists it (the recovered segment takes nothing from
/// `seg`). Which samples are missing is said as `replay` says it
/// ([`super::reader::check_samples_except`], after the recovery).
fn missing_before(path: &Path, seg: &Path, last: u64, first: u64) -> String {
    format!(
        "{}: the journal's first sample to recover is {first}, the last sample before it is {last}, in {}; the recovered segment takes no counter from it, and a counter the line of sample {first} does not list is unknown from sample {first} until a later line lists it (replay shows a `missing_samples` gap; the samples between are named below, as replay names them)",
        path.display(),
        seg.display()
    )
}

/// Compare the journal lines `dup` (of the journal at `path`) with the
/// segments of `held` that hold their samples: each line's clock and
/// every cell it lists must be the segment's at that sample (its state
/// rebuilt from its first sample on). One message per segment (its
/// samples already there, or the first difference and how many lines
/// differ) and whether any differs (or could not be checked: a segment
/// unreadable here).
fn compare_held(path: &Path, dup: &[JournalLine], held: &[(Seqs, PathBuf)]) -> (Vec<String>, bool) {
    let mut msg = Vec::new();
    let mut differ = false;
    for (seqs, seg) in held {
        let mine: Vec<&JournalLine> = dup.iter().filter(|l| seqs.has(l.time.seq)).collect();
        if mine.is_empty() {
            continue;
        }
        let what = format!(
            "{}: its {} sample(s) {} are already in {}",
            path.display(),
            mine.len(),
            Seqs::of(mine.iter().map(|l| l.time.seq), 0).listed(),
            seg.display()
        );
        match differences(&mine, seg) {
            Ok(d) if d.is_empty() => msg.push(format!("{what} (the same values)")),
            Ok(d) => {
                differ = true;
                msg.push(format!(
                    "{what}, but {} line(s) differ from it: {}",
                    d.len(),
                    d.first().map_or("", String::as_str)
                ));
            }
            Err(e) => {
                differ = true;
                msg.push(format!("{what}, not compared: {e:#}"));
            }
        }
    }
    (msg, differ)
}

/// How each of `lines` (sorted by sample) differs from the segment at
/// `seg`: one description per line that does.
fn differences(lines: &[&JournalLine], seg: &Path) -> anyhow::Result<Vec<String>> {
    let mut d = segment::read(seg)?;
    d.cells.sort_by_key(|c| c.0);
    let times: HashMap<u64, SampleTime> = d.samples.iter().map(|t| (t.seq, *t)).collect();
    let mut state: HashMap<(SourceKind, String, Option<u32>), u64> = HashMap::new();
    let mut cells = d.cells.into_iter().peekable();
    let mut out = Vec::new();
    for l in lines {
        let seq = l.time.seq;
        while let Some((_, c)) = cells.next_if(|c| c.0 <= seq) {
            state.insert((c.source, c.key, c.cpu), c.value);
        }
        let t = times.get(&seq);
        if t.map(|t| t.mono_ns) != Some(l.time.mono_ns) {
            out.push(format!(
                "sample {seq}: mono_ns {} in the journal, {} in the segment",
                l.time.mono_ns,
                t.map_or_else(|| "none".into(), |t| t.mono_ns.to_string())
            ));
            continue;
        }
        let bad = l.cells.iter().find_map(|c| {
            let got = state.get(&(c.source, c.key.clone(), c.cpu));
            (got != Some(&c.value)).then(|| {
                format!(
                    "sample {seq}: {} {:?} CPU {} is {} in the journal, {} in the segment",
                    c.source.name(),
                    c.key,
                    c.cpu.map_or_else(|| "-".into(), |n| n.to_string()),
                    c.value,
                    got.map_or_else(|| "not listed".into(), u64::to_string)
                )
            })
        });
        out.extend(bad);
    }
    Ok(out)
}

/// Why the journal at `path`, whose `lines` lack a layout (its first
/// line lost) with no segment before them, is left as it is: no sample
/// of it can be rebuilt (replay cannot read it), and a segment made of it
/// would read as good.
fn no_layout(path: &Path, dir: &Path, lines: &[JournalLine]) -> String {
    let (a, b) = match (lines.first(), lines.last()) {
        (Some(a), Some(b)) => (a.time.seq, b.time.seq),
        _ => (0, 0),
    };
    format!(
        "{}: samples {} have no layout: the journal's first line (the run's first sample: its layout and every counter) was not read (above) and no segment before them has one; left the journal as it is, not turned into a segment (replay cannot rebuild these samples). Move it away to record in {} again",
        path.display(),
        span(a, b),
        dir.display()
    )
}

/// The largest sample number a segment stores: its `seq` column is a
/// signed 64-bit Parquet integer.
const MAX_SEQ: u64 = i64::MAX.unsigned_abs();

/// Refuse a journal (at `path`, whose read took `lines` and skipped
/// `bad`) holding a sample numbered above [`MAX_SEQ`]: no segment can
/// hold it, so nothing of the journal is converted and it stays as it is.
/// The error names the first such line (file:line).
fn refuse_unstorable(
    path: &Path,
    lines: &[JournalLine],
    bad: &[journal::BadLine],
) -> anyhow::Result<()> {
    let skipped: HashSet<u64> = bad.iter().map(|b| b.line).collect();
    // the lines taken are every line not skipped, in order (a journal with
    // lines of a newer schema is refused before)
    let numbers = (1u64..).filter(|n| !skipped.contains(n));
    let mut over = lines
        .iter()
        .zip(numbers)
        .filter(|(l, _)| l.time.seq > MAX_SEQ);
    let Some((l, n)) = over.next() else {
        return Ok(());
    };
    let more = over.count();
    bail!(
        "{}:{n}: sample number {} is above {MAX_SEQ}, the largest a segment stores (a signed 64-bit Parquet column){}; left the journal as it is: nothing recovered",
        path.display(),
        l.time.seq,
        match more {
            0 => String::new(),
            m => format!(" ({m} more line(s) like it)"),
        }
    )
}

/// What a recovered segment was written with, for [`verify`]: its
/// samples' numbers (sorted) and how many counter rows each sample has.
#[derive(Debug, PartialEq, Eq)]
struct Written {
    samples: Vec<u64>,
    cells: BTreeMap<u64, usize>,
}

impl Written {
    fn of(samples: impl Iterator<Item = u64>, cells: impl Iterator<Item = u64>) -> Written {
        let mut samples: Vec<u64> = samples.collect();
        samples.sort_unstable();
        let mut per_sample = BTreeMap::new();
        for seq in cells {
            *per_sample.entry(seq).or_insert(0) += 1;
        }
        Written {
            samples,
            cells: per_sample,
        }
    }

    fn cell_count(&self) -> usize {
        self.cells.values().sum()
    }
}

/// Read the segment at `path` back: the samples of `want`, numbered as
/// written, each with as many counter rows as written, and a footer that
/// adds up (`segment::seqs`) and lists those samples. Its sample times
/// and shapes as read (the counters dropped).
fn verify(path: &Path, want: &Written) -> anyhow::Result<SegmentData> {
    let mut d = segment::read(path)?;
    let got = Written::of(d.samples.iter().map(|t| t.seq), d.cells.iter().map(|c| c.0));
    let (n, m) = (got.samples.len(), got.cell_count());
    if (n, m) != (want.samples.len(), want.cell_count()) {
        bail!(
            "{}: read back {n} samples and {m} counters, wrote {} and {}",
            path.display(),
            want.samples.len(),
            want.cell_count()
        );
    }
    if let Some((w, g)) = want.samples.iter().zip(&got.samples).find(|(w, g)| w != g) {
        bail!(
            "{}: read back sample {g} where sample {w} was written",
            path.display()
        );
    }
    if got.cells != want.cells {
        let seq = want
            .cells
            .keys()
            .chain(got.cells.keys())
            .find(|q| want.cells.get(q) != got.cells.get(q))
            .copied()
            .unwrap_or_default();
        bail!(
            "{}: sample {seq}: read back {} counter(s), wrote {}",
            path.display(),
            got.cells.get(&seq).copied().unwrap_or(0),
            want.cells.get(&seq).copied().unwrap_or(0)
        );
    }
    let footer = segment::seqs(path)?;
    let listed = Seqs::of(want.samples.iter().copied(), 0);
    if footer.runs != listed.runs {
        bail!(
            "{}: its footer lists samples {}, wrote {}",
            path.display(),
            footer.listed(),
            listed.listed()
        );
    }
    d.cells = Vec::new();
    Ok(d)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A `host=` entry that cannot be looked at (here a symlink loop; no
    /// permission alike) is named, not left out: replay would take the
    /// other host as the only recording, recover say nothing to recover.
    #[test]
    fn a_partition_that_cannot_be_read_is_named_not_left_out() {
        let d = tempfile::tempdir().unwrap();
        let boot = d.path().join("host=a/boot=b");
        std::fs::create_dir_all(&boot).unwrap();
        assert_eq!(boot_dirs(d.path()).unwrap(), std::slice::from_ref(&boot));
        let bad = d.path().join("host=z");
        std::os::unix::fs::symlink(&bad, &bad).unwrap();
        for e in [
            boot_dirs(d.path()).map(drop),
            one_boot_dir(d.path()).map(drop),
        ] {
            let e = format!("{:#}", e.unwrap_err());
            assert!(
                e.starts_with(&format!("{}: cannot read", bad.display())),
                "{e}"
            );
        }
        // a loop that names no partition is not a recording's
        std::fs::remove_file(&bad).unwrap();
        let other = d.path().join("notes");
        std::os::unix::fs::symlink(&other, &other).unwrap();
        assert_eq!(one_boot_dir(d.path()).unwrap(), boot);
    }

    /// [`partitions`] finds every boot directory it can read and names
    /// each `host=` or `boot=` entry it cannot (here symlink loops and a
    /// dangling symlink, which root cannot read either), with the OS
    /// error: `recover` recovers the others and fails naming these.
    #[test]
    fn partitions_names_each_unreadable_entry_and_keeps_the_rest() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("host=a/boot=b");
        let y = d.path().join("host=y/boot=d");
        for b in [&a, &y] {
            std::fs::create_dir_all(b).unwrap();
        }
        let host_loop = d.path().join("host=z");
        let boot_loop = d.path().join("host=y/boot=c");
        for bad in [&host_loop, &boot_loop] {
            std::os::unix::fs::symlink(bad, bad).unwrap();
        }
        let dangling = d.path().join("boot=gone");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        let p = partitions(d.path()).unwrap();
        assert_eq!(p.boot_dirs, [a, y]);
        assert_eq!(p.unreadable.len(), 3, "{:?}", p.unreadable);
        for (u, bad, os) in [
            (&p.unreadable[0], &dangling, "(os error 2)"),
            (&p.unreadable[1], &boot_loop, "(os error 40)"),
            (&p.unreadable[2], &host_loop, "(os error 40)"),
        ] {
            assert!(
                u.starts_with(&format!(
                    "{}: cannot read the recording directory: ",
                    bad.display()
                )) && u.ends_with(os),
                "{u}"
            );
        }
        // replay's read of the set names each of them
        let e = format!("{:#}", boot_dirs(d.path()).unwrap_err());
        for u in &p.unreadable {
            assert!(e.contains(u.as_str()), "{e}");
        }
    }

    /// `recover` and `replay` name a segment replay cannot read each with
    /// its own lead, and say what replay reads past it in the same words.
    #[test]
    fn recover_and_replay_say_alike_what_replay_reads_past_an_unreadable_segment() {
        let why = "reading /r/part-0000000001-0000000002.parquet: not parquet";
        let recover = unreadable_segment(&anyhow::anyhow!(why));
        let replay = super::super::reader::skipped_segment(why);
        assert!(
            recover.starts_with(&format!("{why}: left as it is;")),
            "{recover}"
        );
        assert!(replay.starts_with(&format!("skipping {why}")), "{replay}");
        let shared = |l: &str| l.find("the other segments").map(|i| l[i..].to_string());
        assert!(shared(&replay).is_some(), "{replay}");
        assert_eq!(shared(&recover), shared(&replay));
    }

    /// Record's start-up: a new directory numbers from 0 after one
    /// listing; one with a segment numbers after it (recovery ran, and
    /// wrote the segment's missing identity file).
    /// A file recovery removes that cannot be removed (here a directory
    /// named as an interrupted segment write) is named as still there and
    /// listed in [`Recovery::not_removed`]; it is left as it is.
    #[test]
    fn a_file_recovery_cannot_remove_is_named_and_listed() {
        let d = tempfile::tempdir().unwrap();
        let stuck = d.path().join(format!("{}.tmp", segment_name(0, 3)));
        std::fs::create_dir(&stuck).unwrap();
        let r = recover_boot_dir(d.path()).unwrap();
        assert_eq!(r.not_removed, std::slice::from_ref(&stuck));
        let msg = r.message.unwrap_or_default();
        assert!(
            msg.starts_with(&format!(
                "cannot remove {} (a segment whose write was interrupted): ",
                stuck.display()
            )) && msg.ends_with(": it is still there; remove it by hand"),
            "{msg}"
        );
        assert!(stuck.is_dir());
    }

    #[test]
    fn prepare_boot_dir_numbers_a_new_directory_from_0_and_an_old_one_after_its_segments() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(prepare_boot_dir(d.path()).unwrap(), (0, None));
        let data = SegmentData {
            samples: (3..5)
                .map(|seq| SampleTime {
                    seq,
                    wall_ns: seq * 1_000_000,
                    mono_ns: seq,
                })
                .collect(),
            ..SegmentData::default()
        };
        let seg = d.path().join(segment_name(3, 4));
        segment::write(&seg, &mut data.into()).unwrap();
        let (next, msg) = prepare_boot_dir(d.path()).unwrap();
        assert_eq!(next, 5);
        let ids = d.path().join(super::super::identity::file_name(3, 4));
        assert!(ids.exists(), "{msg:?}");
        assert!(prepare_boot_dir(&d.path().join("absent")).is_err());
        // without a journal, a junk part file is named as replay names it
        let junk = d.path().join("part-foo.parquet");
        std::fs::write(&junk, b"not parquet").unwrap();
        let (next, msg) = prepare_boot_dir(d.path()).unwrap();
        assert_eq!(next, 5);
        let msg = msg.unwrap_or_default();
        assert_eq!(
            msg,
            super::super::reader::stray_part_warnings(d.path()).join("\n")
        );
        assert!(msg.contains(&junk.display().to_string()), "{msg}");
        assert!(junk.exists());
    }

    /// A segment of samples `seqs` at `dir`, each taken at monotonic
    /// `seq + at` ns.
    fn segment_at(dir: &Path, seqs: std::ops::RangeInclusive<u64>, at: u64) -> PathBuf {
        segment_of(dir, (*seqs.start(), *seqs.end()), seqs, at)
    }

    /// A segment named `first`–`last` at `dir` holding samples `seqs`,
    /// each taken at monotonic `seq + at` ns.
    fn segment_of(
        dir: &Path,
        (first, last): (u64, u64),
        seqs: impl IntoIterator<Item = u64>,
        at: u64,
    ) -> PathBuf {
        let data = SegmentData {
            samples: seqs
                .into_iter()
                .map(|seq| SampleTime {
                    seq,
                    wall_ns: (seq + at) * 1_000_000,
                    mono_ns: seq + at,
                })
                .collect(),
            ..SegmentData::default()
        };
        let p = dir.join(segment_name(first, last));
        segment::write(&p, &mut data.into()).unwrap();
        p
    }

    /// A file inside another's range whose samples the other holds is
    /// superseded only when they are the same samples (clock readings);
    /// numbered alike but taken at other times, they are files of two
    /// recordings: nothing superseded, both named, and recovery leaves
    /// the directory as it is.
    #[test]
    fn a_file_is_superseded_only_by_one_holding_its_samples_with_the_same_clocks() {
        let d = tempfile::tempdir().unwrap();
        let ours = segment_at(d.path(), 0..=2, 0);
        let copy = segment_at(d.path(), 0..=4, 0);
        let l = list(d.path()).unwrap();
        assert_eq!(l.superseded.len(), 1, "{l:?}");
        assert_eq!(l.superseded[0].0, ours);
        assert!(l.mixed.is_empty(), "{l:?}");
        std::fs::remove_file(&copy).unwrap();
        let theirs = segment_at(d.path(), 0..=4, 1000);
        let l = list(d.path()).unwrap();
        assert!(l.superseded.is_empty(), "{l:?}");
        assert_eq!(l.segments.len(), 2, "{l:?}");
        assert_eq!(l.mixed.len(), 1, "{l:?}");
        let m = &l.mixed[0];
        assert!(m.contains(&ours.display().to_string()), "{m}");
        assert!(m.contains(&theirs.display().to_string()), "{m}");
        let bytes = std::fs::read(&ours).unwrap();
        let e = format!("{:#}", recover_boot_dir(d.path()).unwrap_err());
        assert!(e.contains("files of two recordings"), "{e}");
        assert_eq!(std::fs::read(&ours).unwrap(), bytes);
        assert!(theirs.exists());
    }

    /// A file holding only samples a holed segment around it lacks fills
    /// the hole: read, without a note; one holding some of the segment's
    /// samples too is noted.
    #[test]
    fn a_file_filling_a_hole_is_read_without_a_note() {
        let d = tempfile::tempdir().unwrap();
        segment_of(d.path(), (10, 12), [10, 12], 0);
        let fill = segment_at(d.path(), 11..=11, 0);
        let l = list(d.path()).unwrap();
        assert_eq!(l.segments.len(), 2, "{l:?}");
        assert!(l.superseded.is_empty() && l.mixed.is_empty(), "{l:?}");
        assert!(l.notes.is_empty(), "{l:?}");
        std::fs::remove_file(fill).unwrap();
        segment_at(d.path(), 11..=12, 0);
        let l = list(d.path()).unwrap();
        assert_eq!(l.segments.len(), 2, "{l:?}");
        assert_eq!(l.notes.len(), 1, "{l:?}");
        assert!(l.notes[0].contains("lacks some of its samples"), "{l:?}");
    }

    /// A journal line numbered above what a segment stores is refused by
    /// file:line (counting the skipped lines before it).
    #[test]
    fn a_sample_number_above_i64_max_is_refused_by_its_line() {
        let line = |seq: u64| {
            format!(
                "{{\"schema\":3,\"seq\":{seq},\"wall_ns\":1000000,\"mono_ns\":1,\"cells\":[]}}\n"
            )
        };
        let text = format!("garbage\n{}{}", line(5), line(MAX_SEQ + 1));
        let (lines, pr) = journal::parse(text.as_bytes());
        assert_eq!((lines.len(), pr.bad.len()), (2, 1), "{pr:?}");
        let path = Path::new("d/journal.jsonl");
        let e = format!(
            "{:#}",
            refuse_unstorable(path, &lines, &pr.bad).unwrap_err()
        );
        assert!(
            e.starts_with("d/journal.jsonl:3: sample number 9223372036854775808 "),
            "{e}"
        );
        assert!(refuse_unstorable(path, &lines[..1], &pr.bad).is_ok());
    }

    /// The read-back check compares the samples' numbers, not only how
    /// many there are: numbers a segment cannot hold read back otherwise.
    #[test]
    fn verify_compares_the_sample_numbers_read_back() {
        let d = tempfile::tempdir().unwrap();
        let ok = segment_at(d.path(), 3..=4, 0);
        let want = |seqs: &[u64]| Written::of(seqs.iter().copied(), std::iter::empty());
        verify(&ok, &want(&[3, 4])).unwrap();
        let e = format!("{:#}", verify(&ok, &want(&[3, 5])).unwrap_err());
        assert!(
            e.contains("read back sample 4 where sample 5 was written"),
            "{e}"
        );
        let data = SegmentData {
            samples: (MAX_SEQ + 1..=MAX_SEQ + 2)
                .map(|seq| SampleTime {
                    seq,
                    wall_ns: 1_000_000,
                    mono_ns: 1,
                })
                .collect(),
            ..SegmentData::default()
        };
        let big = d.path().join(segment_name(MAX_SEQ + 1, MAX_SEQ + 2));
        segment::write(&big, &mut data.into()).unwrap();
        // refused either by the reader (a negative seq) or by the compare
        let e = format!(
            "{:#}",
            verify(&big, &want(&[MAX_SEQ + 1, MAX_SEQ + 2])).unwrap_err()
        );
        assert!(
            e.contains("where sample 9223372036854775808 was written")
                || e.contains("seq is -9223372036854775808, expected 0 or more"),
            "{e}"
        );
    }

    #[test]
    fn files_named_inside_another_range_are_found_in_one_pass() {
        let p = |s: &str| PathBuf::from(s);
        let v = vec![
            (0, 59, p("a")),
            (0, 119, p("b")),
            (120, 179, p("c")),
            (180, 180, p("d")),
            (180, 239, p("e")),
        ];
        assert_eq!(named_inside(&v), vec![p("a"), p("d")]);
        let mut shuffled = v.clone();
        shuffled.reverse();
        assert_eq!(named_inside(&shuffled), vec![p("a"), p("d")], "any order");
        assert!(named_inside(&v[1..3]).is_empty());
        assert!(named_inside(&[]).is_empty());
    }

    /// Recovery says what replay says of the recording's data from the
    /// segments' sample times and shapes: an old segment whose counters
    /// alone are damaged (a counter listed twice in one sample: only a
    /// whole read notices) is not named by recovery, while replay names
    /// it; the samples no file holds before the recovered segment and a
    /// clock that stood still in it are said as replay says them.
    #[test]
    fn recovery_checks_old_segments_by_their_sample_times_not_their_counters() {
        use super::super::playback::fixtures::{shape, step};
        use super::super::reader;
        use super::super::schema::{RunStart, Shape, SCHEMA};
        let d = tempfile::tempdir().unwrap();
        let started = || Shape {
            run: Some(RunStart::default()),
            ..shape()
        };
        let s = |seq: u64| step(seq, 100 + seq, 0, None);
        let segment = |steps: &[super::super::reader::RecordedSample], shape: Shape| {
            let data = SegmentData {
                samples: steps.iter().map(|s| s.time).collect(),
                shapes: vec![ShapeAt {
                    seq: steps[0].time.seq,
                    shape,
                }],
                cells: steps
                    .iter()
                    .flat_map(|s| s.cells.iter().map(|c| (s.time.seq, c.clone())))
                    .collect(),
                environment: String::new(),
            };
            let (a, b) = (data.samples[0].seq, data.samples[steps.len() - 1].seq);
            let p = d.path().join(segment_name(a, b));
            segment::write(&p, &mut data.into()).unwrap();
            p
        };
        let mut twice = s(1);
        twice.cells.push(twice.cells[0].clone());
        let damaged = segment(&[s(0), twice], started());
        segment(&[s(2), s(3)], shape());
        // their IRQ identity files, as a finished run leaves them
        super::super::identity::sync(d.path(), None, &mut Vec::new());
        // the journal of a run killed after sample 5 (4 lost), whose
        // sample 6's clock stood still
        let mut lines = vec![s(5), s(6), s(7)];
        lines[0].shape = Some(started());
        lines[1].time.mono_ns = lines[0].time.mono_ns;
        let text: String = lines
            .into_iter()
            .map(|l| {
                let l = JournalLine {
                    schema: SCHEMA,
                    time: l.time,
                    shape: l.shape,
                    cells: l.cells,
                };
                serde_json::to_string(&l).unwrap() + "\n"
            })
            .collect();
        std::fs::write(d.path().join(JOURNAL), text).unwrap();
        let r = recover_boot_dir(d.path()).unwrap();
        let replay = reader::check(d.path());
        let name = damaged.display().to_string();
        let naming = |v: &[String]| v.iter().filter(|l| l.contains(&name)).count();
        assert_eq!(naming(&replay), 1, "{replay:?}");
        assert_eq!(naming(&r.checks), 0, "{:?}", r.checks);
        let msg = r.message.clone().unwrap_or_default();
        assert!(!msg.contains(&name), "{msg}");
        let others: Vec<String> = replay.into_iter().filter(|l| !l.contains(&name)).collect();
        assert_eq!(r.checks, others);
        let recovered = d.path().join(segment_name(5, 7)).display().to_string();
        assert!(
            others[0].starts_with(&format!("{recovered}: sample 4 is missing")),
            "{others:?}"
        );
        assert!(
            others[1].starts_with(&format!("{recovered}: sample 6's monotonic clock")),
            "{others:?}"
        );
        assert_eq!(others.len(), 2, "{others:?}");
    }
}
