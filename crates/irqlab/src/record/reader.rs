//! A recording read back as [`SampleCounters`]s: the second snapshot source. The
//! segments of one boot directory, then its journal (salvaging a crash),
//! replayed cell by cell; each sample's files are re-rendered as kernel
//! text from the stored shape and parsed by the same core parsers as live
//! samples, so replayed snapshots equal the recorded ones.

use super::cells::stat_field;
use super::layout;
use super::schema::{CellValue, RowKind, SampleTime, Seqs, Shape, SourceKind};
use super::segment;
use crate::sampler::counters::SampleCounters;
use crate::sampler::located;
use crate::threads::ThreadCpu;
use crate::trace::sample::Sample as TraceSample;
use irqlab_core::delta::unknown_count;
use irqlab_core::interrupts::Shape as IrqShape;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub(super) mod laid_out;
mod values;

use values::{CellKey, Values};

/// One stored sample: its time, a new shape if any, its cells.
#[derive(Debug, Clone)]
pub struct RecordedSample {
    pub time: SampleTime,
    pub shape: Option<Shape>,
    pub cells: Vec<CellValue>,
}

/// The steps of one boot directory, plus messages about salvaged data.
#[derive(Debug, Default)]
pub struct Recording {
    pub dir: PathBuf,
    pub steps: Vec<RecordedSample>,
    pub warnings: Vec<String>,
    /// Of `warnings`, what is said about the recording's data itself
    /// (replay's own): files named like segments that were not read, samples
    /// no file holds, clocks that are wrong. `recover` says these as
    /// `replay` does ([`check_samples_except`]); `record` the clock lines
    /// of its own samples ([`clock_fault_line`]).
    pub checks: Vec<String>,
    /// Where the steps came from, and the segments that were not read.
    pub files: Files,
}

/// The files a [`Recording`] was read from, and those skipped.
#[derive(Debug, Default)]
pub struct Files {
    /// Each segment read (and the journal), in the order read: the
    /// samples taken from it. A segment with a hole may be read before a
    /// file holding the samples of that hole.
    pub read: Vec<(Seqs, PathBuf)>,
    /// Each segment that could not be read: the samples its name gives,
    /// and why.
    pub unreadable: Vec<(Part, String)>,
}

/// A segment's samples `first`–`last` (those its name gives).
#[derive(Debug, Clone)]
pub struct Part {
    pub first: u64,
    pub last: u64,
    pub path: PathBuf,
}

impl Files {
    /// The files read that samples `first`–`last` (some of them) were
    /// taken from.
    pub fn holding(&self, first: u64, last: u64) -> Vec<&Path> {
        self.read
            .iter()
            .filter(|(s, _)| s.overlaps(first, last))
            .map(|(_, p)| p.as_path())
            .collect()
    }
}

/// Read every segment and the journal of boot directory `dir`. A segment
/// that vanishes while it is read (a running `record` replaced it by a
/// merged one) makes the read start again, a few times. A segment that
/// cannot be read is skipped with a warning naming it (the others are
/// read); so are superseded segments (`layout::list`), samples a segment
/// or the journal repeats, and the journal's unreadable lines. Each
/// sample some file holds is taken once, in sample order, also one in
/// the range of another segment that lacks it (a hole where `recover`
/// skipped a journal line): segments are read by first sample, and a
/// sample an earlier one holds is skipped. Files of
/// two recordings in one boot directory (`layout::Listing::mixed`, or a
/// sample read twice with other clock readings) are refused, naming both.
pub fn open(dir: &Path) -> anyhow::Result<Recording> {
    open_with(dir, &segment::read)
}

/// How [`open_with`] reads a segment: whole ([`segment::read`]) or its
/// sample times and shapes only ([`segment::times`]).
type Load<'a> = &'a dyn Fn(&Path) -> anyhow::Result<segment::SegmentData>;

/// [`open`], each segment read by `load`.
fn open_with(dir: &Path, load: Load<'_>) -> anyhow::Result<Recording> {
    for _ in 0..5 {
        if let Some(r) = open_once(dir, load)? {
            return Ok(r);
        }
    }
    open_once(dir, load)?.ok_or_else(|| {
        anyhow::anyhow!(
            "{}: its segments kept changing while they were read (a running `record` replaced them faster than they were read)",
            dir.display()
        )
    })
}

/// Whether `path` is gone (not: unreadable, a symlink loop, a FIFO).
fn vanished(path: &Path) -> bool {
    matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}

/// Refuse a sample of `path` that the recording read already under the
/// same number but with other clock readings: `path` and the file read
/// are files of two recordings (copied into one boot directory), and
/// taking either's samples as the other's would make intervals, rates and
/// averages across two recordings.
fn same_sample(rec: &Recording, t: SampleTime, path: &Path) -> anyhow::Result<()> {
    let Ok(i) = rec.steps.binary_search_by_key(&t.seq, |s| s.time.seq) else {
        return Ok(());
    };
    let read = rec.steps[i].time;
    if read.same_clock(&t) {
        return Ok(());
    }
    let other = rec
        .files
        .holding(t.seq, t.seq)
        .first()
        .map_or_else(|| "another segment".to_owned(), |p| p.display().to_string());
    anyhow::bail!(
        "{}: sample {} was taken at {}, but {other} holds a sample {} taken at {}: files of two recordings are in one boot directory (move one recording's files out); the recording was not read",
        path.display(),
        t.seq,
        t.readings(),
        t.seq,
        read.readings()
    )
}

/// What `replay` says about the data of boot directory `dir` (read as
/// [`open`] reads it; [`Recording::checks`]). A directory that cannot be
/// read back is one line saying why. The tests hold what `recover` and
/// `record` say to it.
#[cfg(test)]
pub fn check(dir: &Path) -> Vec<String> {
    checks_of(dir, &[], open(dir))
}

/// What `replay` says about the data of boot directory `dir`, from each
/// segment's sample times and shapes alone ([`segment::times`]: its
/// footer and first rows), not its counters, and without the lines
/// naming the segments of `named` that could not be read (`recover`
/// names those itself, once): replay's lines, but for a segment whose
/// counters only cannot be read, which replay names and this does not. Its cost follows the number of
/// segments and samples, not the counters (what `recover` says after it
/// checked the segment it wrote whole, whose times and shapes it read
/// back are `known`: not read again).
pub fn check_samples_except(
    dir: &Path,
    named: &[PathBuf],
    known: segment::Known<'_>,
) -> Vec<String> {
    checks_of(dir, named, open_with(dir, &|p| segment::times_or(p, known)))
}

/// [`Recording::checks`] of `opened` (the recording of `dir`) without
/// the lines naming the segments of `named` that could not be read; a
/// recording that could not be read is one line saying why.
fn checks_of(dir: &Path, named: &[PathBuf], opened: anyhow::Result<Recording>) -> Vec<String> {
    let rec = match opened {
        Ok(rec) => rec,
        Err(e) => {
            return vec![format!(
                "{}: not read back as `replay` reads it: {e:#}",
                dir.display()
            )]
        }
    };
    let skip: Vec<String> = rec
        .files
        .unreadable
        .iter()
        .filter(|(part, _)| named.contains(&part.path))
        .map(|(_, why)| skipped_segment(why))
        .collect();
    rec.checks
        .into_iter()
        .filter(|l| !skip.contains(l))
        .collect()
}

/// What `replay` says of a segment it cannot read (`why`, naming it).
pub(super) fn skipped_segment(why: &str) -> String {
    replay_skips_segment(&format!("skipping {why}"))
}

/// A line naming a segment `replay` cannot read: `lead` (the segment,
/// and what the command saying it does with it), then what replay reads
/// past it, in the words `replay` and `recover` share.
pub(super) fn replay_skips_segment(lead: &str) -> String {
    format!(
        "{lead} (the other segments are read; a segment after it that keeps its layout is read with the layout before it)"
    )
}

/// [`Recording::warnings`] and [`Recording::checks`] both get `said`.
fn say_check(rec: &mut Recording, said: Vec<String>) {
    rec.checks.extend(said.iter().cloned());
    rec.warnings.extend(said);
}

/// What `replay` says about each file of `dir` named `part-*.parquet`
/// that is not a segment's name: it is not read.
pub fn stray_part_warnings(dir: &Path) -> Vec<String> {
    stray_parts(dir)
        .iter()
        .map(|p| {
            format!(
                "skipping {}: not a segment's name (part-FIRST-LAST.parquet, the numbers of its first and last sample), so not read; a glob of part-*.parquet (docs/recording-schema.md) would read it: move it out of the recording",
                p.display()
            )
        })
        .collect()
}

/// The files of `dir` named `part-*.parquet` that are not segments'
/// names (`layout::parse_segment_name`): not read, but other engines'
/// glob of the segments takes them. Sorted.
fn stray_parts(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("part-")
                && name.ends_with(".parquet")
                && layout::parse_segment_name(&name).is_none()
        })
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// [`open_with`], or `None` when a listed segment was gone when read.
fn open_once(dir: &Path, load: Load<'_>) -> anyhow::Result<Option<Recording>> {
    let mut rec = Recording {
        dir: dir.to_path_buf(),
        ..Recording::default()
    };
    let listing = layout::list(dir)?;
    if !listing.mixed.is_empty() {
        anyhow::bail!("{}\nthe recording was not read", listing.mixed.join("\n"));
    }
    for (p, why) in &listing.superseded {
        rec.warnings
            .push(format!("skipping {}: {why}", p.display()));
    }
    rec.warnings.extend(listing.notes.iter().cloned());
    say_check(&mut rec, stray_part_warnings(dir));
    // each readable segment's steps, by first sample
    let mut parts: Vec<(PathBuf, Vec<RecordedSample>)> = Vec::new();
    for (first, last, path) in listing.segments {
        let seg = match load(&path) {
            Ok(s) => s,
            Err(_) if vanished(&path) => return Ok(None),
            Err(e) => {
                let part = Part {
                    first,
                    last,
                    path: path.clone(),
                };
                let why = format!("{e:#}");
                let said = skipped_segment(&why);
                rec.files.unreadable.push((part, why));
                say_check(&mut rec, vec![said]);
                continue;
            }
        };
        let mut by_seq: HashMap<u64, Vec<CellValue>> = HashMap::new();
        for (seq, c) in seg.cells {
            by_seq.entry(seq).or_default().push(c);
        }
        let mut shapes: HashMap<u64, Shape> =
            seg.shapes.into_iter().map(|s| (s.seq, s.shape)).collect();
        let steps = seg
            .samples
            .into_iter()
            .map(|t| RecordedSample {
                time: t,
                shape: shapes.remove(&t.seq),
                cells: by_seq.remove(&t.seq).unwrap_or_default(),
            })
            .collect();
        parts.push((path, steps));
    }
    parts.sort_by_key(|p| p.1.first().map(|s| s.time.seq));
    let mut held: Vec<(Seqs, PathBuf)> = Vec::new();
    for (path, steps) in parts {
        held.push((Seqs::of(steps.iter().map(|s| s.time.seq), 0), path.clone()));
        take_segment(&mut rec, path, steps)?;
    }
    take_journal(&mut rec, dir, &held)?;
    let said = missing_in_holes(&rec, &held);
    say_check(&mut rec, said);
    let said = missing_between(&rec, &held);
    say_check(&mut rec, said);
    let said = clock_faults(&rec);
    say_check(&mut rec, said);
    Ok(Some(rec))
}

/// Take the samples of the segment at `path` (`steps`, in sample order)
/// that no file read before holds, into `rec.steps` in sample order.
/// Each sample one holds is checked to be the same sample
/// ([`same_sample`]) and skipped, naming the file it was taken from.
fn take_segment(
    rec: &mut Recording,
    path: PathBuf,
    steps: Vec<RecordedSample>,
) -> anyhow::Result<()> {
    let (old, new): (Vec<RecordedSample>, Vec<RecordedSample>) =
        steps.into_iter().partition(|s| has(&rec.steps, s.time.seq));
    for s in &old {
        same_sample(rec, s.time, &path)?;
    }
    if !old.is_empty() {
        skipped(rec, &old, &path);
    }
    merge(rec, new, path);
    Ok(())
}

/// A warning per file read before that gave some of `old` (samples the
/// file at `path` holds too): which ones were skipped.
fn skipped(rec: &mut Recording, old: &[RecordedSample], path: &Path) {
    for (taken, from) in &rec.files.read {
        let dup = Seqs::of(old.iter().map(|s| s.time.seq).filter(|&q| taken.has(q)), 0);
        if !dup.runs.is_empty() {
            rec.warnings.push(format!(
                "{}: samples {} were already read from {}: skipped",
                path.display(),
                dup.listed(),
                from.display()
            ));
        }
    }
}

/// Whether `steps` (in sample order) hold sample `seq`.
fn has(steps: &[RecordedSample], seq: u64) -> bool {
    steps.binary_search_by_key(&seq, |s| s.time.seq).is_ok()
}

/// Add `new` (samples `rec.steps` lacks, in sample order), taken from
/// the file at `path`, keeping `rec.steps` in sample order.
fn merge(rec: &mut Recording, new: Vec<RecordedSample>, path: PathBuf) {
    if new.is_empty() {
        return;
    }
    rec.files
        .read
        .push((Seqs::of(new.iter().map(|s| s.time.seq), 0), path));
    let after = match (rec.steps.last(), new.first()) {
        (Some(a), Some(b)) => a.time.seq < b.time.seq,
        _ => true,
    };
    rec.steps.extend(new);
    if !after {
        // into a hole: the stable sort merges the two sorted runs
        rec.steps.sort_by_key(|s| s.time.seq);
    }
}

/// Take the journal's lines of `dir` that no segment of `held` holds (a
/// journal left between a segment's write and its own restart repeats
/// its samples: checked, then skipped), with messages about it.
fn take_journal(rec: &mut Recording, dir: &Path, held: &[(Seqs, PathBuf)]) -> anyhow::Result<()> {
    let journal = dir.join(super::schema::JOURNAL);
    // every line, to check those a segment holds too
    let (lines, problems) = match layout::journal_lines(dir, &[]) {
        Ok(r) => r,
        Err(e) => {
            rec.warnings.push(format!("skipping the journal: {e:#}"));
            return Ok(());
        }
    };
    let (in_segments, lines): (Vec<_>, Vec<_>) = lines
        .into_iter()
        .partition(|l| held.iter().any(|(s, _)| s.has(l.time.seq)));
    for l in &in_segments {
        same_sample(rec, l.time, &journal)?;
    }
    if !lines.is_empty() {
        rec.warnings.push(format!(
            "{} sample(s) read from the journal {} (not yet in a segment: a running `record` writes one at its end, `irqlab recover` after a crash)",
            lines.len(),
            journal.display()
        ));
    }
    rec.warnings.extend(problems.messages(&journal));
    if !problems.bad.is_empty() {
        rec.warnings.push(format!(
            "{}: a counter not recorded again right after a skipped line is a `missing_samples` gap across it and at its next recorded change (unchanged in between)",
            journal.display()
        ));
    }
    let steps = lines
        .into_iter()
        .map(|l| RecordedSample {
            time: l.time,
            shape: l.shape,
            cells: l.cells,
        })
        .collect();
    merge(rec, steps, journal);
    Ok(())
}

/// Say which samples of each segment's holes (`held`) no file holds: a
/// sample of a hole another file holds is read from it.
fn missing_in_holes(rec: &Recording, held: &[(Seqs, PathBuf)]) -> Vec<String> {
    let taken = Seqs::of(rec.steps.iter().map(|s| s.time.seq), 0);
    let mut out = Vec::new();
    for (seqs, path) in held {
        let runs: Vec<[u64; 2]> = seqs
            .gaps()
            .iter()
            .flat_map(|g| taken.lacks(g[0], g[1]))
            .collect();
        if runs.is_empty() {
            continue;
        }
        out.push(format!("{}: {}", path.display(), missing_text(runs, true)));
    }
    out
}

/// Say which samples between two files, or between two journal lines,
/// no file holds (a segment or journal line removed, a `seq` that jumps):
/// those in a segment's range are said by [`missing_in_holes`], those of
/// an unreadable segment where it is skipped. Named by the file read
/// right after them, as `recover` names them.
fn missing_between(rec: &Recording, held: &[(Seqs, PathBuf)]) -> Vec<String> {
    let mut said: Vec<[u64; 2]> = held
        .iter()
        .filter_map(|(s, _)| s.range())
        .map(|(a, b)| [a, b])
        .chain(rec.files.unreadable.iter().map(|(p, _)| [p.first, p.last]))
        .collect();
    said.sort_unstable();
    let mut merged: Vec<[u64; 2]> = Vec::new();
    for r in said {
        match merged.last_mut() {
            Some(m) if r[0] <= m[1].saturating_add(1) => m[1] = m[1].max(r[1]),
            _ => merged.push(r),
        }
    }
    let said = Seqs {
        runs: merged,
        rows: 0,
    };
    let taken = Seqs::of(rec.steps.iter().map(|s| s.time.seq), 0);
    let mut out = Vec::new();
    for g in taken.gaps() {
        let runs = said.lacks(g[0], g[1]);
        if runs.is_empty() {
            continue;
        }
        let next = g[1].saturating_add(1);
        let file = rec.files.holding(next, next).first().map_or_else(
            || rec.dir.display().to_string(),
            |p| p.display().to_string(),
        );
        out.push(format!("{file}: {}", missing_text(runs, false)));
    }
    out
}

/// What is said of the samples `runs` that no file holds, `in_range` of
/// the file named (a segment's holes) or between files: `samples 9–11
/// are missing (no file holds them …`, or for one sample `sample 7 is
/// missing (no file holds it …`.
fn missing_text(runs: Vec<[u64; 2]>, in_range: bool) -> String {
    let n: u64 = runs
        .iter()
        .map(|r| r[1].saturating_sub(r[0]).saturating_add(1))
        .fold(0, u64::saturating_add);
    let listed = Seqs { runs, rows: 0 }.listed();
    let (what, it, are) = match n {
        1 => ("sample", "it", "is"),
        _ => ("samples", "them", "are"),
    };
    let why = match (in_range, n) {
        (false, _) => String::new(),
        (true, 1) => ", though it is in its range: a journal line `recover` could not read, or a line lost before it".to_string(),
        (true, _) => ", though they are in its range: journal lines `recover` could not read, or lines lost before it".to_string(),
    };
    format!(
        "{what} {listed} {are} missing (no file holds {it}{why}): a counter not recorded again right after {it} is a `missing_samples` gap across {it} and at its next recorded change (unchanged in between)"
    )
}

/// How far the monotonic clock may run ahead of the wall clock over one
/// interval before the interval counts as a [`ClockFault::Jump`]: 1 s,
/// plus 1/1000 of the interval (twice the 500 ppm NTP may slew a clock).
/// The wall clock is stored to the millisecond; NTP steps it back by
/// less than a second when it corrects it at all.
pub const CLOCK_JUMP_SLACK_NS: u64 = 1_000_000_000;

/// The shortest interval between two samples of a run that `record` can
/// take: 10 µs. A sample's clock is read before its statistics files,
/// and the next sample's only after those reads, their parse, the diff
/// and the journal line's write: on this project's 2-CPU VM a sample
/// costs ~0.2 ms of CPU (BENCHMARKS.md), the shortest interval a debug
/// build records on a 4-CPU `--root` tree (`-d 0.300001 -i 100ms`'s last
/// one) is 0.6 ms. Over a shorter span the counts are not a measurement
/// (a hand-made or edited reading): a rate over it would be a number
/// from no interval, and one the rate bound lets pass
/// ([`irqlab_core::delta::MAX_RATE_PER_CPU`]: 100 counts per CPU in 1 µs),
/// so it is a [`ClockFault::TooShort`].
pub const MIN_INTERVAL_NS: u64 = 10_000;

/// What is wrong with a sample's clock readings against the sample
/// before it ([`clock_fault`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockFault {
    /// The monotonic clock did not advance (went back or stood still).
    Back,
    /// The monotonic clock advanced `mono_ns` while the wall clock
    /// advanced `wall_ns` (negative: went back), more than
    /// [`CLOCK_JUMP_SLACK_NS`] less.
    Jump { mono_ns: u64, wall_ns: i128 },
    /// The monotonic clock advanced only `mono_ns`, less than
    /// [`MIN_INTERVAL_NS`]: shorter than one sample takes.
    TooShort { mono_ns: u64 },
}

/// What is wrong with `step`'s clock against `prev` (the step before it;
/// none: the first), if anything: then neither interval around `step`
/// has a duration to divide by, and [`Replayer`] makes both gaps. A
/// run's first sample starts afresh (no interval across runs).
///
/// [`ClockFault::Back`]: the monotonic clock is not after `prev`'s.
/// [`ClockFault::Jump`]: it is ahead of the wall clock's advance by more
/// than [`CLOCK_JUMP_SLACK_NS`]. [`ClockFault::TooShort`]: it is less
/// than [`MIN_INTERVAL_NS`] after `prev`'s. CLOCK_MONOTONIC cannot run ahead of
/// CLOCK_REALTIME: it stops while the machine is suspended, which the
/// wall clock does not, and both advance alike through a stall (a
/// stopped `record`, an overloaded machine). So a long interval of both
/// clocks is real and a rate over it is right, and one whose wall clock
/// ran ahead (a suspend, the wall clock set forward) is too (rates divide
/// by the monotonic clock); a monotonic clock ahead means a damaged or
/// edited reading, or a wall clock set back by more than the slack
/// during the interval: two readings cannot tell which, and a rate over
/// a wrong span would be wrong without a word.
pub fn clock_fault(prev: Option<&SampleTime>, step: &RecordedSample) -> Option<ClockFault> {
    let starts_run = step.shape.as_ref().is_some_and(|s| s.run.is_some());
    clock_fault_at(prev, step.time, starts_run)
}

/// [`clock_fault`] of a sample taken at `now`, which starts a run or not.
fn clock_fault_at(
    prev: Option<&SampleTime>,
    now: SampleTime,
    starts_run: bool,
) -> Option<ClockFault> {
    let prev = prev.filter(|_| !starts_run)?;
    if now.mono_ns <= prev.mono_ns {
        return Some(ClockFault::Back);
    }
    let mono_ns = now.mono_ns - prev.mono_ns;
    if mono_ns < MIN_INTERVAL_NS {
        return Some(ClockFault::TooShort { mono_ns });
    }
    let wall_ns = i128::from(now.wall_ns) - i128::from(prev.wall_ns);
    let slack = i128::from(CLOCK_JUMP_SLACK_NS) + i128::from(mono_ns / 1000);
    (i128::from(mono_ns) - wall_ns > slack).then_some(ClockFault::Jump { mono_ns, wall_ns })
}

/// Each sample's clocks held to the sample before ([`clock_fault`]), in
/// sample order. A sample right after a faulty one is faulty only when
/// it is so against the last sample that was not, too: one damaged
/// reading (a clock back, or far ahead, and the next one right again)
/// makes that sample faulty, not the one after it, while clocks that
/// stay shifted from a sample on make that sample faulty only.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClockCheck {
    prev: Option<SampleTime>,
    good: Option<SampleTime>,
    prev_faulty: bool,
}

impl ClockCheck {
    /// What is wrong with `step`'s clocks, the next sample in order.
    pub fn check(&mut self, step: &RecordedSample) -> Option<ClockFault> {
        let starts_run = step.shape.as_ref().is_some_and(|s| s.run.is_some());
        self.check_at(step.time, starts_run)
    }

    /// [`ClockCheck::check`] of a sample taken at `now`, which starts a
    /// run or not (`record`, as it takes each sample).
    pub fn check_at(&mut self, now: SampleTime, starts_run: bool) -> Option<ClockFault> {
        let fault = clock_fault_at(self.prev.as_ref(), now, starts_run).filter(|_| {
            !self.prev_faulty || clock_fault_at(self.good.as_ref(), now, starts_run).is_some()
        });
        self.prev = Some(now);
        self.prev_faulty = fault.is_some();
        if fault.is_none() {
            self.good = Some(now);
        }
        fault
    }
}

/// `ns` as seconds for messages (`1000000.000 s`).
fn secs(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let ms = ns.unsigned_abs() / 1_000_000;
    format!("{sign}{}.{:03} s", ms / 1000, ms % 1000)
}

/// Say which samples' clocks are wrong ([`ClockCheck`]), naming the
/// file each was read from.
fn clock_faults(rec: &Recording) -> Vec<String> {
    let mut out = Vec::new();
    let mut clocks = ClockCheck::default();
    if let Some(first) = rec.steps.first() {
        clocks.check(first);
    }
    for w in rec.steps.windows(2) {
        let [a, b] = w else { continue };
        let Some(fault) = clocks.check(b) else {
            continue;
        };
        let q = b.time.seq;
        let file = rec.files.holding(q, q).first().map_or_else(
            || rec.dir.display().to_string(),
            |p| p.display().to_string(),
        );
        out.push(clock_fault_line(&file, &a.time, &b.time, fault));
    }
    out
}

/// What `replay` says of sample `now` (read from `file`) whose clocks are
/// wrong (`fault`) against `before`, the sample before it.
pub fn clock_fault_line(
    file: &str,
    before: &SampleTime,
    now: &SampleTime,
    fault: ClockFault,
) -> String {
    let q = now.seq;
    let what = match fault {
        ClockFault::Back => format!(
            "sample {q}'s monotonic clock ({} ns) is not after sample {}'s ({} ns)",
            now.mono_ns, before.seq, before.mono_ns
        ),
        ClockFault::Jump { mono_ns, wall_ns } => format!(
            "sample {q}'s monotonic clock ({} ns) is {} after sample {}'s ({} ns), but its wall clock only {} (the monotonic clock runs no faster than the wall clock: expected at most {})",
            now.mono_ns,
            secs(i128::from(mono_ns)),
            before.seq,
            before.mono_ns,
            secs(wall_ns),
            secs(wall_ns + i128::from(CLOCK_JUMP_SLACK_NS + mono_ns / 1000)),
        ),
        ClockFault::TooShort { mono_ns } => format!(
            "sample {q}'s monotonic clock ({} ns) is only {mono_ns} ns after sample {}'s ({} ns): shorter than `record` takes one sample in (expected at least {} ns)",
            now.mono_ns, before.seq, before.mono_ns, MIN_INTERVAL_NS
        ),
    };
    format!(
        "{file}: {what}: both intervals around sample {q} are `missing_samples` gaps, never rates"
    )
}

/// The `record` runs of `steps`: a new one at each step whose shape marks
/// a run's start ([`Shape::run`]; a run's first sample holds every cell
/// and its layout, so each run replays on its own). A recording made
/// before runs were marked is one run. No step: none.
pub fn runs(steps: &[RecordedSample]) -> Vec<std::ops::Range<usize>> {
    let mut starts: Vec<usize> = steps
        .iter()
        .enumerate()
        .filter(|(i, s)| *i == 0 || s.shape.as_ref().is_some_and(|sh| sh.run.is_some()))
        .map(|(i, _)| i)
        .collect();
    starts.push(steps.len());
    starts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// Rebuilds samples step by step.
///
/// A step lists only the cells that changed since the sample before it.
/// After missing samples (journal lines `recover` could not read, a
/// skipped segment) a cell the step does not list may have changed in
/// them: its value is unknown until it is listed again. Until then it is
/// rebuilt as the [`unknown_count`] of that run of missing samples, whose
/// delta is a `missing_samples` gap to or from any other count, and 0 to
/// the same count (not listed and no sample missing in between: the cell
/// did not change). A CPU-time line has no share over an interval that
/// ends right after missing samples with a field of it unknown, or at
/// the sample that lists such a field again, nor over the interval after
/// ([`UNKNOWN_CPU_TIME`]); in between, its unknown fields did not change.
/// An interrupt thread or traced counter of unknown value is left out.
/// A step whose clock is wrong ([`ClockCheck`]) has every cell
/// unknown (a run of missing samples of its own): both intervals around
/// it are gaps, never a rate over no time or over a wrong one.
#[derive(Debug, Default)]
pub struct Replayer {
    values: Values,
    shape: Option<Shape>,
    /// The sequence number of the last step taken in.
    last_seq: Option<u64>,
    /// Cells whose value is unknown, with the run of missing samples
    /// (numbered from 1 in `missing`) since which.
    unknown: HashMap<CellKey, u64>,
    /// Runs of missing samples seen since the last run's start.
    missing: u64,
    /// The run of missing samples since which a cell never listed (not
    /// in `values`) is unknown: it may have been listed in them.
    unseen: Option<u64>,
    /// The last step taken in follows missing samples.
    after_missing: bool,
    /// Cells of unknown value the last step taken in listed.
    relisted: Vec<CellKey>,
    /// The clocks of the steps taken in ([`ClockCheck`]).
    clocks: ClockCheck,
    /// The last step taken in has a clock that did not advance
    /// ([`ClockCheck`]): every cell of it is unknown, as of this run of
    /// missing samples, so both intervals around it are gaps.
    bad_clock: Option<u64>,
    /// The parser would read some interrupts row of `shape` as another
    /// kind than the one recorded ([`misread_kinds`]).
    misread: bool,
    /// The interrupts, softirqs and stat cells `shape` lays out: each one
    /// listed by the step that brings it (a run's first sample lists
    /// every cell, a new row all of its own), and none other listed.
    layout_cells: laid_out::LaidOut,
    /// How the steps taken in break that rule (a damaged segment or
    /// journal line): their rates would be read from a 0 never recorded,
    /// or lose a counter listed under another source or key.
    damage: Option<String>,
}

/// A count column as the kernel prints it (`" %10u"`): a space, then
/// the digits right-aligned in 10, without the formatting machinery (a
/// million columns a sample on 1152 CPUs × 1056 IRQs).
fn push_count(t: &mut String, v: u64) {
    let mut b = itoa::Buffer::new();
    let digits = b.format(v);
    let pad = 11usize.saturating_sub(digits.len()).max(1);
    t.extend(std::iter::repeat_n(' ', pad));
    t.push_str(digits);
}

/// A cell for messages: `source key` and its CPU.
fn cell_name((source, key, cpu): (SourceKind, &str, Option<u32>)) -> String {
    match cpu {
        Some(c) => format!("{} {key:?} CPU {c}", source.name()),
        None => format!("{} {key:?}", source.name()),
    }
}

/// The fields of a CPU-time line that has no share over the intervals
/// on either side of its sample (see [`Replayer`]), less the sample's
/// sequence number: below the sample before's (a step back: no share,
/// and no all-CPU share) and so far above a real line's that a step to
/// it is more ticks than a CPU can take (no share either). The shares of
/// a line are made of all its fields: one field's
/// [`unknown_count`] would not stop the others making wrong shares.
pub const UNKNOWN_CPU_TIME: u64 = u64::MAX / 2;

/// Give each of `rows` (parsed from [`Replayer::interrupts_text`] of
/// `shape`) the kind `shape` recorded for it.
fn recorded_kinds(rows: &mut [irqlab_core::IrqRow], shape: &Shape) {
    for (row, meta) in rows.iter_mut().zip(&shape.irq_rows) {
        row.shape = match meta.kind {
            RowKind::PerCpu => IrqShape::PerCpu,
            RowKind::Single => IrqShape::Single,
            RowKind::NoCounts => IrqShape::NoCounts,
            RowKind::Irregular { .. } => IrqShape::Irregular,
        };
    }
}

/// Whether the parser would read some interrupts row of `shape`, as
/// [`Replayer::interrupts_text`] writes it, as another kind than the one
/// recorded: a kind is read from the number of counts (as many as
/// columns: per-CPU; none; one: single; else irregular), and a row of one
/// value, or of an irregular number, may have as many as the layout has
/// columns. Decided once per layout, not per sample.
fn misread_kinds(shape: &Shape) -> bool {
    let Some(cpus) = &shape.irq_cpus else {
        return false;
    };
    let ncols = cpus.len();
    shape.irq_rows.iter().any(|r| {
        let found = match r.kind {
            RowKind::PerCpu => ncols,
            RowKind::Single => 1,
            RowKind::NoCounts => 0,
            RowKind::Irregular { n } => n,
        };
        let read = match found {
            f if f == ncols => RowKind::PerCpu,
            0 => RowKind::NoCounts,
            1 => RowKind::Single,
            n => RowKind::Irregular { n },
        };
        read != r.kind
    })
}

impl Replayer {
    /// Take in `step`'s layout and changed cells without building its
    /// sample (fast-forward when seeking).
    pub fn advance(&mut self, step: &RecordedSample) {
        let seq = step.time.seq;
        self.after_missing = false;
        self.relisted.clear();
        // the same step again (`apply`, then `trace`) keeps its clock's verdict
        if self.last_seq != Some(seq) {
            self.bad_clock = None;
            if self.clocks.check(step).is_some() {
                self.missing += 1;
                self.bad_clock = Some(self.missing);
            }
        }
        match &step.shape {
            // a run's first sample holds every cell
            Some(s) if s.run.is_some() => {
                self.unknown.clear();
                self.unseen = None;
            }
            _ if self.last_seq.is_some_and(|l| seq > l.saturating_add(1)) => {
                self.missing += 1;
                let n = self.missing;
                self.unknown.extend(self.values.keys().map(|k| (k, n)));
                self.unseen = Some(n);
                self.after_missing = true;
            }
            _ => {}
        }
        self.last_seq = Some(seq);
        if let Some(s) = &step.shape {
            self.misread = misread_kinds(s);
            self.shape = Some(s.clone());
            self.layout_cells.lay_out(s);
        }
        for c in &step.cells {
            if !self.layout_cells.list(c) && self.damage.is_none() {
                self.damage = Some(format!(
                    "sample {seq} lists {}, which its layout has not",
                    cell_name((c.source, &c.key, c.cpu))
                ));
            }
            if self.any_unknown() {
                let key = (c.source, c.key.clone(), c.cpu);
                if self.unknown_key(&key).is_some() {
                    self.unknown.remove(&key);
                    self.relisted.push(key);
                }
            }
            self.values.insert(c.source, &c.key, c.cpu, c.value);
        }
        if step.shape.is_some() && self.damage.is_none() {
            if let Some(k) = self.layout_cells.unlisted() {
                self.damage = Some(format!(
                    "sample {seq} lays out {} but no sample lists its value",
                    cell_name(k)
                ));
            }
        }
    }

    /// Refuse a step taken in after [`Replayer::damage`] was found.
    fn undamaged(&self) -> anyhow::Result<()> {
        match &self.damage {
            Some(d) => {
                anyhow::bail!("{d} (a damaged segment or journal line: its rates would be wrong)")
            }
            None => Ok(()),
        }
    }

    /// The run of missing samples since which the cell's value is unknown
    /// (see [`Replayer`]), if it is.
    fn unknown_key(&self, key: &CellKey) -> Option<u64> {
        if !self.any_unknown() {
            return None;
        }
        match self.unknown.get(key) {
            Some(&n) => Some(n),
            None if self.values.get(key.0, &key.1, key.2).is_some() => None,
            None => self.unseen,
        }
    }

    /// Whether some cell's value may be unknown (after missing samples):
    /// when not, [`Replayer::unknown_key`] is `None` for every cell.
    fn any_unknown(&self) -> bool {
        !self.unknown.is_empty() || self.unseen.is_some()
    }

    /// [`Replayer::unknown_key`] of a cell.
    fn unknown_since(&self, source: SourceKind, key: &str, cpu: Option<u32>) -> Option<u64> {
        if self.bad_clock.is_some() {
            return self.bad_clock;
        }
        if !self.any_unknown() {
            return None;
        }
        self.unknown_key(&(source, key.to_string(), cpu))
    }

    /// Whether the cell's value is unknown (see [`Replayer`]).
    fn is_unknown(&self, source: SourceKind, key: &str, cpu: Option<u32>) -> bool {
        self.unknown_since(source, key, cpu).is_some()
    }

    /// Apply `step` and return the sample it describes.
    pub fn apply(&mut self, step: &RecordedSample) -> anyhow::Result<SampleCounters> {
        self.advance(step);
        self.undamaged()?;
        let shape = self.layout(step)?;
        if let Some(r) = shape.irq_rows.iter().find(
            |r| matches!(r.kind, RowKind::Irregular { n } if n > super::trace_cells::MAX_CPUS),
        ) {
            anyhow::bail!(
                "sample {}: interrupts row {:?} has more counts than CPUs can exist (corrupt layout)",
                step.time.seq,
                r.key
            );
        }
        let mut s = SampleCounters::default();
        s.snap.mono_ns = step.time.mono_ns;
        s.snap.wall_ns = step.time.wall_ns;
        let file = |name: &str| PathBuf::from(format!("sample {} {name}", step.time.seq));
        if let Some(cpus) = &shape.irq_cpus {
            s.snap.interrupts = Some(
                self.interrupts(cpus, shape)
                    .map_err(|e| located(&file("interrupts"), &e))?,
            );
        }
        if let Some(cpus) = &shape.soft_cpus {
            let text = self.softirqs_text(cpus, shape);
            s.snap.softirqs = Some(
                irqlab_core::Softirqs::parse(text.as_bytes())
                    .map_err(|e| located(&file("softirqs"), &e))?,
            );
        }
        if let Some(cpus) = &shape.stat_cpus {
            let text = self.stat_text(step.time.seq, cpus, shape);
            s.snap.stat = Some(
                irqlab_core::Stat::parse(text.as_bytes())
                    .map_err(|e| located(&file("stat"), &e))?,
            );
        }
        for (i, name) in shape.threads.iter().enumerate() {
            let Some(kind) = crate::threads::classify(name) else {
                continue;
            };
            let cpu = match kind {
                crate::threads::ThreadKind::Ksoftirqd { cpu } => Some(cpu),
                crate::threads::ThreadKind::IrqThread { .. } => None,
            };
            if self.is_unknown(SourceKind::Threads, name, cpu) {
                continue;
            }
            if let Some(cpu_ns) = self.values.get(SourceKind::Threads, name, cpu) {
                s.threads.push(ThreadCpu {
                    pid: shape.thread_pid(i),
                    name: name.clone(),
                    kind,
                    cpu_pct: 0.0,
                    last_cpu: None,
                    cpu_ns,
                });
            }
        }
        Ok(s)
    }

    /// The layout `step` is read with (the last one stored up to it).
    fn layout(&self, step: &RecordedSample) -> anyhow::Result<&Shape> {
        self.shape.as_ref().ok_or_else(|| {
            anyhow::anyhow!(
                "sample {} has no layout (the recording lacks its first sample)",
                step.time.seq
            )
        })
    }

    /// Whether any sample of `steps` was traced (`record --trace`).
    pub fn traced(steps: &[RecordedSample]) -> bool {
        steps
            .iter()
            .any(|s| s.shape.as_ref().is_some_and(|sh| sh.trace_cpus.is_some()))
    }

    /// Apply `step` and rebuild only its traced counters (`record
    /// --trace`): `None` when the sample was not traced.
    /// [`Replayer::apply`] rebuilds the files only: replay needs the maps
    /// beside them, from its own pass (`record::trace_replay`).
    pub fn trace(&mut self, step: &RecordedSample) -> anyhow::Result<Option<TraceSample>> {
        self.advance(step);
        self.undamaged()?;
        let shape = self.layout(step)?;
        let Some(cpus) = &shape.trace_cpus else {
            return Ok(None);
        };
        // a traced counter of unknown value: no traced interval on either side
        let unknown = std::cell::Cell::new(false);
        let get = |key: &str, cpu| match self.unknown_since(SourceKind::Trace, key, cpu) {
            Some(_) => {
                unknown.set(true);
                0
            }
            None => self.get(SourceKind::Trace, key, cpu),
        };
        let sample = super::trace_cells::rebuild(&shape.trace_rows, cpus, &get)
            .map_err(|e| anyhow::anyhow!("sample {}: {e}", step.time.seq))?;
        Ok((!unknown.get()).then_some(sample))
    }

    /// The cell's value: its [`unknown_count`] when unknown, 0 when never
    /// listed.
    fn get(&self, source: SourceKind, key: &str, cpu: Option<u32>) -> u64 {
        match self.unknown_since(source, key, cpu) {
            Some(n) => unknown_count(n),
            None => self.value(source, key, cpu),
        }
    }

    /// The cell's value as last listed (0 when never listed), known or not.
    fn value(&self, source: SourceKind, key: &str, cpu: Option<u32>) -> u64 {
        self.values.get(source, key, cpu).unwrap_or(0)
    }

    /// [`Replayer::get`] of the cells of one key: the key looked up once
    /// when no cell's value is unknown (the common case: then `get` is
    /// the value as last listed), else cell by cell.
    fn row_get<'a>(&'a self, source: SourceKind, key: &'a str) -> impl Fn(Option<u32>) -> u64 + 'a {
        let known = self.bad_clock.is_none() && !self.any_unknown();
        let row = known.then(|| self.values.row(source, key));
        move |cpu| match row {
            Some(row) => row.and_then(|r| r.get(&cpu)).copied().unwrap_or(0),
            None => self.get(source, key, cpu),
        }
    }

    /// The sample's `/proc/interrupts` under `cpus`, each row of the kind
    /// recorded, which the live run read from the whole file: under the
    /// columns `record --cpus` kept, the parser, which tells a kind by
    /// the number of counts, reads one value under one column, or an
    /// irregular row of as many counts as columns, as per-CPU
    /// ([`misread_kinds`]). A layout of no CPU (`record --cpus` while
    /// each of its CPUs was offline) has rows but no column, which no
    /// kernel prints and the parser refuses: its rows are parsed under one
    /// placeholder column, then the column is taken away.
    fn interrupts(
        &self,
        cpus: &[u32],
        shape: &Shape,
    ) -> Result<irqlab_core::Interrupts, irqlab_core::ParseError> {
        if cpus.is_empty() {
            let text = self.interrupts_text(&[0], shape);
            let mut rows = irqlab_core::Interrupts::parse(text.as_bytes())?.take_rows();
            recorded_kinds(&mut rows, shape);
            for row in rows.iter_mut().filter(|r| r.shape == IrqShape::PerCpu) {
                row.counts.clear();
            }
            return Ok(irqlab_core::Interrupts::from_parts(Vec::new(), rows));
        }
        let text = self.interrupts_text(cpus, shape);
        let mut m = irqlab_core::Interrupts::parse(text.as_bytes())?;
        if self.misread {
            recorded_kinds(m.rows_mut(), shape);
        }
        Ok(m)
    }

    fn interrupts_text(&self, cpus: &[u32], shape: &Shape) -> String {
        let mut t = String::from("    ");
        for c in cpus {
            let _ = write!(t, " {:>10}", format!("CPU{c}"));
        }
        t.push('\n');
        for r in &shape.irq_rows {
            let _ = write!(t, "{:>4}:", r.label);
            let get = self.row_get(SourceKind::Interrupts, &r.key);
            match r.kind {
                RowKind::PerCpu => {
                    for &c in cpus {
                        push_count(&mut t, get(Some(c)));
                    }
                }
                RowKind::Single => push_count(&mut t, get(None)),
                RowKind::NoCounts => {}
                RowKind::Irregular { n } => {
                    for i in 0..n as u32 {
                        push_count(&mut t, get(Some(i)));
                    }
                }
            }
            if !r.description.is_empty() {
                let _ = write!(t, "  {}", r.description);
            }
            t.push('\n');
        }
        t
    }

    fn softirqs_text(&self, cpus: &[u32], shape: &Shape) -> String {
        let mut t = String::from("           ");
        for c in cpus {
            let _ = write!(t, " {:>10}", format!("CPU{c}"));
        }
        t.push('\n');
        for name in &shape.soft_rows {
            let _ = write!(t, "{:>12}:", name);
            let get = self.row_get(SourceKind::Softirqs, name);
            for &c in cpus {
                push_count(&mut t, get(Some(c)));
            }
            t.push('\n');
        }
        t
    }

    fn stat_text(&self, seq: u64, cpus: &[u32], shape: &Shape) -> String {
        let fields: Vec<String> = (0..shape.stat_fields).map(stat_field).collect();
        let line = |t: &mut String, head: &str, cpu: Option<u32>| {
            t.push_str(head);
            let keys = || fields.iter().map(|f| (SourceKind::Stat, f.clone(), cpu));
            let around_missing = self.bad_clock.is_some()
                || (self.after_missing && keys().any(|k| self.unknown_key(&k).is_some()))
                || (!self.relisted.is_empty() && keys().any(|k| self.relisted.contains(&k)));
            for f in &fields {
                // a field of unknown value is as it was last listed: it did
                // not change since the samples after the missing ones
                let v = match around_missing {
                    true => UNKNOWN_CPU_TIME.saturating_sub(seq),
                    false => self.value(SourceKind::Stat, f, cpu),
                };
                let _ = write!(t, " {v}");
            }
            t.push('\n');
        };
        let mut t = String::new();
        line(&mut t, "cpu ", None);
        for &c in cpus {
            line(&mut t, &format!("cpu{c}"), Some(c));
        }
        for k in &shape.stat_other {
            let key = super::cells::stat_other_key(k);
            let _ = writeln!(t, "{k} {}", self.get(SourceKind::Stat, &key, None));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::record::playback::fixtures::{shape, step};
    use crate::record::schema::{RunStart, ShapeAt};

    /// A shape marking a run's start.
    fn started() -> Shape {
        Shape {
            run: Some(RunStart {
                filter: "--irq LOC".into(),
                ..RunStart::default()
            }),
            ..shape()
        }
    }

    /// `record --cpus 3` while CPU 3 was offline lays out rows without a
    /// column: the sample reads back as such, each row of its kind, and
    /// the next sample, with the CPU back, reads on.
    #[test]
    fn a_layout_of_no_cpu_reads_back_as_rows_without_a_column() {
        use irqlab_core::interrupts::Shape as IrqShape;
        let mut meta = shape();
        meta.irq_rows.push(crate::record::schema::RowMeta {
            key: "ERR".into(),
            label: "ERR".into(),
            kind: RowKind::Single,
            description: String::new(),
            affinity: None,
        });
        let none = Shape {
            irq_cpus: Some(Vec::new()),
            ..meta.clone()
        };
        let mut rp = Replayer::default();
        rp.apply(&step(0, 5, 0, Some(meta.clone()))).unwrap();
        let mut err = step(1, 5, 0, Some(none));
        err.cells.push(CellValue {
            source: SourceKind::Interrupts,
            key: "ERR".into(),
            cpu: None,
            value: 7,
        });
        let m = rp.apply(&err).unwrap().snap.interrupts.unwrap();
        assert!(m.cpus.is_empty());
        let rows: Vec<_> = m
            .rows()
            .iter()
            .map(|r| (r.label.as_str(), r.shape, r.counts.to_vec()))
            .collect();
        assert_eq!(
            rows,
            [
                ("24", IrqShape::PerCpu, vec![]),
                ("LOC", IrqShape::PerCpu, vec![]),
                ("ERR", IrqShape::Single, vec![7]),
            ]
        );
        let back = rp.apply(&step(2, 9, 0, Some(meta))).unwrap();
        assert_eq!(back.snap.interrupts.unwrap().cpus, [0]);
    }

    /// A row a layout drops keeps its last value: a later layout that
    /// brings it back without listing it again (its counters did not
    /// change) replays it from that value, never refused as unlisted.
    #[test]
    fn a_row_a_layout_drops_and_brings_back_unlisted_keeps_its_value() {
        let mut rp = Replayer::default();
        let mut first = step(0, 5, 0, Some(shape()));
        for c in first.cells.iter_mut().filter(|c| c.key == "24") {
            c.value = 7;
        }
        rp.apply(&first).unwrap();
        let mut without = shape();
        without.irq_rows.retain(|r| r.key != "24");
        rp.apply(&step(1, 6, 0, Some(without))).unwrap();
        let mut back = step(2, 9, 0, Some(shape()));
        back.cells.retain(|c| c.key != "24");
        let m = rp.apply(&back).unwrap().snap.interrupts.unwrap();
        let counts: Vec<_> = m.rows().iter().map(|r| r.counts.to_vec()).collect();
        assert_eq!(counts, [vec![7], vec![9]]);
    }

    /// A first sample that lacks laid-out cells is refused naming the
    /// first of them in layout order (rows, then CPUs ascending); one
    /// that lists a cell its layout has not, naming that cell.
    #[test]
    fn cells_a_sample_lacks_or_adds_are_named_in_layout_order() {
        let three = Shape {
            irq_cpus: Some(vec![2, 0, 1]),
            ..shape()
        };
        let mut lacking = step(0, 5, 0, Some(three.clone()));
        lacking
            .cells
            .retain(|c| !matches!((c.key.as_str(), c.cpu), ("24", Some(1)) | ("LOC", Some(0))));
        let err = Replayer::default().apply(&lacking).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "sample 0 lays out interrupts \"24\" CPU 1 but no sample lists its value"
            ),
            "{err}"
        );
        let mut adding = step(0, 5, 0, Some(three));
        adding.cells.push(CellValue {
            source: SourceKind::Softirqs,
            key: "LOC".into(),
            cpu: Some(3),
            value: 1,
        });
        let err = Replayer::default().apply(&adding).unwrap_err().to_string();
        assert!(
            err.starts_with("sample 0 lists softirqs \"LOC\" CPU 3, which its layout has not"),
            "{err}"
        );
    }

    /// Rows are given their recorded kinds only under a layout where the
    /// parser would read one as another: a single value under one
    /// column, an irregular row of as many counts as columns. The
    /// usual layout (per-CPU rows, `ERR` under two columns) is parsed
    /// as it stands.
    #[test]
    fn only_a_layout_the_parser_would_misread_gets_recorded_kinds() {
        let with = |cpus: Vec<u32>, kind| {
            let mut s = shape();
            s.irq_cpus = Some(cpus);
            s.irq_rows.push(crate::record::schema::RowMeta {
                key: "X".into(),
                label: "X".into(),
                kind,
                description: String::new(),
                affinity: None,
            });
            misread_kinds(&s)
        };
        assert!(!misread_kinds(&shape()));
        assert!(!with(vec![0, 1], RowKind::Single));
        assert!(with(vec![1], RowKind::Single));
        assert!(!with(vec![0, 1, 2], RowKind::Irregular { n: 4 }));
        assert!(with(vec![0, 1], RowKind::Irregular { n: 2 }));
        assert!(!with(vec![0], RowKind::NoCounts));
    }

    #[test]
    fn runs_start_at_each_marked_shape_and_an_unmarked_recording_is_one_run() {
        let steps = vec![
            step(0, 1, 0, Some(started())),
            step(1, 2, 0, None),
            step(2, 3, 0, Some(shape())), // a layout change: the same run
            step(3, 4, 0, Some(started())),
            step(4, 5, 0, None),
            step(5, 6, 0, Some(started())),
        ];
        assert_eq!(runs(&steps), vec![0..3, 3..5, 5..6]);
        let old: Vec<RecordedSample> = (0..3).map(|i| step(i, i, 0, Some(shape()))).collect();
        assert_eq!(runs(&old), vec![0..3]);
        assert!(runs(&[]).is_empty());
    }

    /// A segment of `steps` (in sample order) in `dir`, named by its
    /// first and last sample.
    /// The warnings about clocks of the recording in `dir`.
    fn clock_warnings(dir: &Path) -> Vec<String> {
        let rec = open(dir).unwrap();
        rec.warnings
            .into_iter()
            .filter(|w| w.contains("clock"))
            .collect()
    }

    fn segment(dir: &Path, steps: &[RecordedSample]) -> PathBuf {
        let (a, b) = (steps[0].time.seq, steps[steps.len() - 1].time.seq);
        let p = dir.join(layout::segment_name(a, b));
        let data = segment::SegmentData {
            samples: steps.iter().map(|s| s.time).collect(),
            shapes: steps
                .iter()
                .filter_map(|s| {
                    let shape = s.shape.clone()?;
                    Some(ShapeAt {
                        seq: s.time.seq,
                        shape,
                    })
                })
                .collect(),
            cells: steps
                .iter()
                .flat_map(|s| s.cells.iter().map(|c| (s.time.seq, c.clone())))
                .collect(),
            environment: String::new(),
        };
        segment::write(&p, &mut segment::SegmentBuf::from(data)).unwrap();
        p
    }

    /// A sample whose monotonic clock is not after the sample before's is
    /// named with the file it was read from; a run's first sample is held
    /// to no clock of the run before (no interval spans two runs).
    #[test]
    fn a_sample_whose_clock_did_not_advance_is_named_with_its_file() {
        let d = tempfile::tempdir().unwrap();
        // milliseconds: an interval shorter than a sample takes is a
        // fault of its own
        let at = |seq: u64, mono_ms: u64, shape: Option<Shape>| {
            let mut s = step(seq, 100 + seq, 0, shape);
            s.time.mono_ns = mono_ms * 1_000_000;
            s
        };
        let seg = segment(
            d.path(),
            &[
                at(0, 10, Some(started())),
                at(1, 20, None),
                at(2, 20, None),
                at(3, 30, None),
                at(4, 5, Some(started())),
                at(5, 1, None),
                at(6, 9, None),
            ],
        );
        let clocks = clock_warnings(d.path());
        let p = seg.display();
        assert_eq!(
            clocks,
            [
                format!("{p}: sample 2's monotonic clock (20000000 ns) is not after sample 1's (20000000 ns): both intervals around sample 2 are `missing_samples` gaps, never rates"),
                format!("{p}: sample 5's monotonic clock (1000000 ns) is not after sample 4's (5000000 ns): both intervals around sample 5 are `missing_samples` gaps, never rates"),
            ]
        );
    }

    /// A sample whose monotonic clock ran far ahead of its wall clock is
    /// named with its file and what was expected; an interval as long on
    /// both clocks (a stall) or longer on the wall clock (a suspend) is
    /// not.
    #[test]
    fn a_monotonic_clock_far_ahead_of_the_wall_clock_is_named() {
        let d = tempfile::tempdir().unwrap();
        const S: u64 = 1_000_000_000;
        let at = |seq: u64, mono_s: u64, wall_s: u64| {
            let mut s = step(seq, 100 + seq, 0, (seq == 0).then(started));
            s.time.mono_ns = mono_s * S;
            s.time.wall_ns = wall_s * S;
            s
        };
        let seg = segment(
            d.path(),
            &[
                at(0, 1, 1),
                at(1, 2, 2),
                at(2, 1_000_002, 3), // jumped ahead
                at(3, 1_000_003, 4),
                at(4, 2_000_003, 1_000_004), // a stall: both clocks
                at(5, 2_000_004, 3_000_004), // a suspend: the wall clock only
                at(6, 2_000_006, 3_000_005), // 2 s against 1 s: within the slack
                at(7, 9_000_000, 3_000_006), // one damaged reading …
                at(8, 2_000_008, 3_000_007), // … and the next one right again
            ],
        );
        let clocks = clock_warnings(d.path());
        let p = seg.display();
        assert_eq!(
            clocks,
            [
                format!("{p}: sample 2's monotonic clock (1000002000000000 ns) is 1000000.000 s after sample 1's (2000000000 ns), but its wall clock only 1.000 s (the monotonic clock runs no faster than the wall clock: expected at most 1002.000 s): both intervals around sample 2 are `missing_samples` gaps, never rates"),
                format!("{p}: sample 7's monotonic clock (9000000000000000 ns) is 6999994.000 s after sample 6's (2000006000000000 ns), but its wall clock only 1.000 s (the monotonic clock runs no faster than the wall clock: expected at most 7001.994 s): both intervals around sample 7 are `missing_samples` gaps, never rates"),
            ]
        );
    }

    /// [`clock_fault`]: a wall clock set back by more than the slack makes
    /// a jump too (two readings cannot tell which clock moved); within a
    /// run only.
    #[test]
    fn clock_fault_compares_the_two_clocks_within_a_run() {
        let t = |mono_ns: u64, wall_ns: u64| SampleTime {
            seq: 0,
            wall_ns,
            mono_ns,
        };
        let s = |mono_ns: u64, wall_ns: u64, run: bool| {
            let mut s = step(1, 1, 0, run.then(started));
            s.time = SampleTime {
                seq: 1,
                wall_ns,
                mono_ns,
            };
            s
        };
        const S: u64 = 1_000_000_000;
        let prev = t(10 * S, 100 * S);
        assert_eq!(clock_fault(Some(&prev), &s(11 * S, 101 * S, false)), None);
        assert_eq!(clock_fault(None, &s(11 * S, 101 * S, false)), None);
        assert_eq!(
            clock_fault(Some(&prev), &s(10 * S, 101 * S, false)),
            Some(ClockFault::Back)
        );
        assert_eq!(
            clock_fault(Some(&prev), &s(12 * S + 1, 100 * S, false)),
            Some(ClockFault::Jump {
                mono_ns: 2 * S + 1,
                wall_ns: 0
            })
        );
        // the slack: 1 s plus 1/1000 of the interval
        assert_eq!(clock_fault(Some(&prev), &s(12 * S, 101 * S, false)), None);
        // shorter than a sample takes: 1 µs is no interval, 10 µs is one
        assert_eq!(
            clock_fault(Some(&prev), &s(10 * S + 1000, 100 * S, false)),
            Some(ClockFault::TooShort { mono_ns: 1000 })
        );
        assert_eq!(
            clock_fault(Some(&prev), &s(10 * S + MIN_INTERVAL_NS, 100 * S, false)),
            None
        );
        let long = t(0, 0);
        assert_eq!(
            clock_fault(Some(&long), &s(2000 * S, 1998 * S, false)),
            None
        );
        assert!(clock_fault(Some(&long), &s(2000 * S, 1996 * S, false)).is_some());
        // the wall clock set back: a jump
        assert!(clock_fault(Some(&prev), &s(12 * S, 90 * S, false)).is_some());
        // a run's first sample is held to no clock before it
        assert_eq!(clock_fault(Some(&prev), &s(9 * S, 1, true)), None);
        assert_eq!(clock_fault(Some(&prev), &s(1_000_000 * S, 1, true)), None);
    }

    /// One missing sample is said in the singular, more in the plural.
    #[test]
    fn missing_samples_are_counted_in_their_number() {
        let one = missing_text(vec![[3, 3]], false);
        assert!(
            one.starts_with("sample 3 is missing (no file holds it): a counter not recorded again right after it is a `missing_samples` gap across it "),
            "{one}"
        );
        let in_range = missing_text(vec![[3, 3]], true);
        assert!(
            in_range.starts_with(
                "sample 3 is missing (no file holds it, though it is in its range: a journal line"
            ),
            "{in_range}"
        );
        for runs in [vec![[3, 4]], vec![[3, 3], [7, 7]]] {
            let many = missing_text(runs, false);
            assert!(many.starts_with("samples 3"), "{many}");
            assert!(many.contains(" are missing (no file holds them): a counter not recorded again right after them is a `missing_samples` gap across them "), "{many}");
        }
    }

    /// Samples no file holds between two journal lines (a line removed,
    /// a `seq` that jumps) or between two segments are said to be
    /// missing, naming the file read after them, as `recover` says them.
    #[test]
    fn samples_missing_between_files_or_journal_lines_are_named() {
        let d = tempfile::tempdir().unwrap();
        let s = |seq: u64| step(seq, 100 + seq, 0, (seq == 0).then(shape));
        segment(d.path(), &[s(0), s(1)]);
        let later = segment(d.path(), &[s(3), s(4)]);
        let journal = d.path().join(crate::record::schema::JOURNAL);
        let mut text = String::new();
        for q in [5, 6, 8, 12] {
            let l = crate::record::schema::JournalLine {
                schema: crate::record::schema::SCHEMA,
                time: s(q).time,
                shape: None,
                cells: s(q).cells,
            };
            text.push_str(&serde_json::to_string(&l).unwrap());
            text.push('\n');
        }
        std::fs::write(&journal, text).unwrap();
        let rec = open(d.path()).unwrap();
        let w = rec.warnings.join("\n");
        let seqs: Vec<u64> = rec.steps.iter().map(|s| s.time.seq).collect();
        assert_eq!(seqs, [0, 1, 3, 4, 5, 6, 8, 12], "{w}");
        let between = format!(
            "{}: sample 2 is missing (no file holds it)",
            later.display()
        );
        assert!(w.contains(&between), "{w}");
        let j = journal.display();
        assert!(
            w.contains(&format!("{j}: sample 7 is missing (no file holds it)")),
            "{w}"
        );
        assert!(
            w.contains(&format!(
                "{j}: samples 9–11 are missing (no file holds them)"
            )),
            "{w}"
        );
        assert_eq!(w.matches(" missing (no file").count(), 3, "{w}");
    }

    /// A file named like a segment that is not one (`part-foo.parquet`)
    /// is not read, and said so: a glob of `part-*.parquet` would read it.
    #[test]
    fn a_part_file_without_a_segment_s_name_is_named() {
        let d = tempfile::tempdir().unwrap();
        let s = |seq: u64| step(seq, 100 + seq, 0, (seq == 0).then(shape));
        segment(d.path(), &[s(0), s(1)]);
        let junk = d.path().join("part-foo.parquet");
        std::fs::write(&junk, b"not parquet").unwrap();
        std::fs::write(d.path().join("notes.txt"), b"not a part").unwrap();
        let rec = open(d.path()).unwrap();
        let w = rec.warnings.join("\n");
        let said = format!("skipping {}: not a segment's name", junk.display());
        assert!(w.contains(&said), "{w}");
        assert_eq!(rec.warnings.len(), 1, "{w}");
        let seqs: Vec<u64> = rec.steps.iter().map(|s| s.time.seq).collect();
        assert_eq!(seqs, [0, 1]);
    }

    /// A sample in a segment's hole is read from the file that holds it,
    /// in sample order; a sample two files hold is read once and the
    /// other file's copy is skipped, naming the file it was read from;
    /// only a sample no file holds is said to be missing.
    #[test]
    fn a_sample_in_a_segment_s_hole_is_read_from_the_file_that_holds_it() {
        let d = tempfile::tempdir().unwrap();
        let s = |seq: u64| step(seq, 100 + seq, 0, (seq == 0).then(shape));
        let holed = segment(d.path(), &[s(0), s(1), s(2), s(3), s(6)]);
        let four = segment(d.path(), &[s(4)]);
        let later = segment(d.path(), &[s(6), s(7)]);
        let rec = open(d.path()).unwrap();
        let w = rec.warnings.join("\n");
        let seqs: Vec<u64> = rec.steps.iter().map(|s| s.time.seq).collect();
        assert_eq!(seqs, [0, 1, 2, 3, 4, 6, 7], "{w}");
        let skipped = format!(
            "{}: samples 6 were already read from {}: skipped",
            later.display(),
            holed.display()
        );
        assert!(w.contains(&skipped), "{w}");
        assert_eq!(w.matches("already read").count(), 1, "{w}");
        let missing = format!("{}: sample 5 is missing", holed.display());
        assert!(w.contains(&missing), "{w}");
        assert_eq!(w.matches(" missing (no file").count(), 1, "{w}");
        let holding = |q| rec.files.holding(q, q);
        assert_eq!(holding(4), [four.as_path()]);
        assert_eq!(holding(6), [holed.as_path()]);
        assert!(holding(5).is_empty());
        assert_eq!(holding(7), [later.as_path()]);
    }
}
