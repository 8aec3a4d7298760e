//! The recording loop: live samples -> changed cells -> journal line
//! (flushed every sample) -> a Parquet segment every `segment` interval (or
//! sooner, once it holds `segment_changes` changed counters) and at exit,
//! after which the journal starts afresh (with only the changes: the
//! segment's first sample takes every cell from the differ's rows).
//! A journal left by a crash is turned into a segment first
//! (`layout::recover_boot_dir`).
//!
//! Small segments are merged: while the file of the open window spans less
//! than `merge` and holds at most [`MERGE_ROWS`] rows, a closing segment
//! rewrites that file with the window's samples so far (one file, every
//! cell once in its first sample) and removes the file it replaces,
//! instead of starting a new file that would repeat every counter, the
//! key dictionary and a footer (docs/recording-schema.md, "Small segments
//! are merged").
//!
//! Errors (disk full, unwritable directory) stop recording and name the
//! file; what was written stays.

use super::cells::{Change, Differ};
use super::identity;
use super::journal::{LineCells, LineOut, RecordJournal};
use super::layout;
use super::reader;
use super::schema::{recorded_wall_ns, RunStart, SampleTime, Shape, ShapeAt, JOURNAL, SCHEMA};
use super::segment::{self, SegmentBuf};
use crate::filter::Filter;
use crate::sampler::counters::{CounterSampler, SampleCountersView};
use crate::sampler::{clock, End, PacedRun, Stop, Tick};
use crate::trace::live_trace::TraceSession;
use crate::trace::sample::Sample as TraceSample;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A record run.
#[derive(Debug, Clone)]
pub struct RecordConfig {
    pub root: PathBuf,
    pub out: PathBuf,
    pub interval: Duration,
    pub duration: Option<Duration>,
    pub segment: Duration,
    /// Also close a segment once it holds this many changed counters
    /// after its first sample (bounds the buffered segment on big
    /// machines, where the first sample alone holds every counter).
    pub segment_changes: u64,
    /// Merge closing segments into the open window's file while it spans
    /// less than this (zero: every segment its own file) …
    pub merge: Duration,
    /// … and holds at most this many rows ([`MERGE_ROWS`]).
    pub merge_rows: usize,
    pub filter: Filter,
    /// The row filter flags as given, stored at the run's start
    /// (`schema::RunStart`).
    pub filter_flags: String,
    /// Partition host name instead of the tree's hostname.
    pub host: Option<String>,
    /// Record synthetic times instead of the clocks (benchmarks and tests
    /// of fleet datasets: an hour of a moving synthetic tree in seconds).
    pub clock: Option<SynthClock>,
    /// On SIGINT or SIGTERM, a last sample ends the interval the signal
    /// cut short when at least this long (real time) passed since the
    /// sample before; a shorter one is dropped, but for a traced run,
    /// which waits out the rest (its last read must be closing).
    pub final_after: Duration,
}

/// A synthetic clock: the recorded wall clock starts at `start_wall_ns`
/// and both recorded clocks run `scale` times faster than the real
/// CLOCK_MONOTONIC from the first sample (rates stay what the tree's
/// counters did per real second, times `1/scale`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthClock {
    pub start_wall_ns: u64,
    pub scale: u32,
}

/// What a run wrote.
#[derive(Debug, Clone, Default)]
pub struct RecordSummary {
    pub dir: PathBuf,
    pub samples: u64,
    pub cells: u64,
    pub segments: u64,
    pub segment_bytes: u64,
    /// CPU time of sampling + diffing + journaling (not segment writes), ns.
    pub sample_cpu_ns: u64,
    pub segment_cpu_ns: u64,
    /// Ticks dropped because sampling fell more than an interval behind
    /// (the loop of `run` drops them).
    pub skipped: u64,
}

/// A window's file is rewritten by a closing segment only while it holds
/// at most this many rows (~6 MB buffered, ~0.1 s to rewrite): merging
/// pays on small machines, whose segments are mostly fixed cost, and
/// would only add rewrites on big ones, whose segments are large anyway.
pub const MERGE_ROWS: usize = 1 << 18;

/// [`Run::row_keys`] of a row whose key was not looked up yet.
const NO_KEY: u32 = u32::MAX;

struct Run {
    dir: PathBuf,
    journal: RecordJournal,
    data: SegmentBuf,
    differ: Differ,
    /// The changed cells of the latest sample (reused between samples).
    changed: Vec<Change>,
    /// The segment key id of each of the differ's rows ([`NO_KEY`]: not
    /// looked up yet), valid while the rows and the segment's keys are.
    row_keys: Vec<u32>,
    next_seq: u64,
    /// First sample of the open segment (the `segment` timer).
    started: Option<Instant>,
    /// First sample of the open window (the file segments merge into).
    window_started: Option<Instant>,
    /// The window's file as last written, and its size: replaced by the
    /// next segment of the window.
    window_file: Option<(PathBuf, u64)>,
    /// The window's IRQ identity file as last written (`identity`).
    window_ids: Option<PathBuf>,
    /// The shape in effect before the open window's first sample.
    shape_base: Option<Shape>,
    /// `RecordConfig::clock`, and the real CLOCK_MONOTONIC of its start.
    clock: Option<SynthClock>,
    mono0: Option<u64>,
    /// Changed counters of the open segment after its window's first sample.
    changes: u64,
    /// Marks the run's first sample's shape (taken there).
    run_start: Option<RunStart>,
    /// `RecordConfig::segment_changes`.
    max_changes: u64,
    /// The samples' clocks as replay holds them ([`reader::ClockCheck`]),
    /// the latest sample's, and the samples whose clocks were wrong (a
    /// wall clock set back during the run): the sample before, the sample
    /// and what is wrong.
    clocks: reader::ClockCheck,
    last_time: Option<SampleTime>,
    clock_faults: Vec<(SampleTime, SampleTime, reader::ClockFault)>,
    /// The run's segment files as they stand: first and last sample, path
    /// (the window's file replaced as the window grows).
    files: Vec<(u64, u64, PathBuf)>,
    sum: RecordSummary,
}

impl Run {
    /// A run writing to boot directory `dir` (its journal created there),
    /// numbering from `next_seq`; `environment` goes into its first file.
    fn new(
        dir: &std::path::Path,
        environment: String,
        next_seq: u64,
        cfg: &RecordConfig,
    ) -> anyhow::Result<Run> {
        Ok(Run {
            journal: RecordJournal::create(&dir.join(JOURNAL))?,
            dir: dir.to_path_buf(),
            data: SegmentBuf {
                environment,
                ..SegmentBuf::default()
            },
            differ: Differ::default(),
            changed: Vec::new(),
            row_keys: Vec::new(),
            next_seq,
            started: None,
            window_started: None,
            window_file: None,
            window_ids: None,
            shape_base: None,
            clock: cfg.clock,
            mono0: None,
            changes: 0,
            run_start: Some(RunStart {
                filter: cfg.filter_flags.clone(),
                cpus: cfg.filter.cpus.clone(),
            }),
            max_changes: cfg.segment_changes,
            clocks: reader::ClockCheck::default(),
            last_time: None,
            clock_faults: Vec::new(),
            files: Vec::new(),
            sum: RecordSummary {
                dir: dir.to_path_buf(),
                ..RecordSummary::default()
            },
        })
    }

    fn add(
        &mut self,
        s: SampleCountersView,
        filter: &Filter,
        affinity: &mut dyn FnMut(u32) -> Option<String>,
    ) -> anyhow::Result<()> {
        // A segment's first sample holds every cell; the journal only what
        // changed since the sample before (recovery takes the rest from the
        // last segment), so that a big machine's journal does not repeat
        // every counter each time a segment closes.
        let mut cells = std::mem::take(&mut self.changed);
        let mut sampled = self.differ.sample(s, filter, affinity, &mut cells);
        // the run's first sample always has a shape (the differ is new)
        if let Some(shape) = sampled.shape.as_mut() {
            if let Some(r) = self.run_start.take() {
                shape.run = Some(r);
            }
        }
        let first = self.data.samples.is_empty();
        let time = match self.clock {
            None => SampleTime {
                seq: self.next_seq,
                wall_ns: recorded_wall_ns(s.snap.wall_ns),
                mono_ns: s.snap.mono_ns,
            },
            Some(c) => {
                let mono0 = *self.mono0.get_or_insert(s.snap.mono_ns);
                let run = s.snap.mono_ns.saturating_sub(mono0) * u64::from(c.scale);
                SampleTime {
                    seq: self.next_seq,
                    wall_ns: recorded_wall_ns(c.start_wall_ns.saturating_add(run)),
                    mono_ns: mono0.saturating_add(run),
                }
            }
        };
        self.journal.append(&LineOut {
            schema: SCHEMA,
            time,
            shape: sampled.shape.as_ref(),
            cells: if sampled.every {
                LineCells::Rows(self.differ.rows())
            } else {
                LineCells::Changes(self.differ.rows(), &cells)
            },
        })?;
        self.next_seq += 1;
        self.sum.samples += 1;
        let starts_run = sampled.shape.as_ref().is_some_and(|s| s.run.is_some());
        let before = self.last_time.replace(time);
        if let (Some(fault), Some(before)) = (self.clocks.check_at(time, starts_run), before) {
            self.clock_faults.push((before, time, fault));
        }
        let reshaped = sampled.shape.is_some();
        if let Some(shape) = sampled.shape {
            self.data.shapes.push(ShapeAt {
                seq: time.seq,
                shape,
            });
        }
        self.data.samples.push(time);
        let seq = time.seq;
        if first {
            // room for every counter and the changes the segment may take
            // (no reallocation: a doubling Vec would copy ~50 MB at 1152 CPUs)
            self.data
                .rows
                .reserve(self.differ.cells() + self.max_changes.min(1 << 24) as usize);
            self.window_started = Some(Instant::now());
        }
        if self.started.is_none() {
            self.started = Some(Instant::now());
            self.changes = 0;
        }
        if first || sampled.every || reshaped {
            // new rows or a new segment's keys
            self.row_keys.clear();
            self.row_keys.resize(self.differ.rows().len(), NO_KEY);
        }
        if first || sampled.every {
            let before = self.data.rows.len();
            for (r, id) in self.differ.rows().iter().zip(&mut self.row_keys) {
                let key = self.data.rows.key(r.source, &r.key);
                *id = key;
                for (&cpu, &v) in r.cpus.iter().zip(&r.values) {
                    self.data.rows.push(seq, key, cpu, v);
                }
            }
            let n = (self.data.rows.len() - before) as u64;
            self.sum.cells += n;
            if !first {
                self.changes += n;
            }
        } else {
            self.sum.cells += cells.len() as u64;
            self.changes += cells.len() as u64;
            let rows = self.differ.rows();
            for c in &cells {
                let (Some(r), Some(id)) = (
                    rows.get(c.row as usize),
                    self.row_keys.get_mut(c.row as usize),
                ) else {
                    continue;
                };
                if *id == NO_KEY {
                    *id = self.data.rows.key(r.source, &r.key);
                }
                self.data.rows.push(seq, *id, r.cpu(c.col), c.value);
            }
        }
        self.changed = cells;
        Ok(())
    }

    /// Whether the window takes the next segment too: it would still span
    /// less than `merge` (half a segment of slack) and is small.
    fn merges_on(&self, cfg: &RecordConfig) -> bool {
        let span = self.window_started.map_or(Duration::MAX, |t| t.elapsed());
        !cfg.merge.is_zero()
            && span.saturating_add(cfg.segment) <= cfg.merge.saturating_add(cfg.segment / 2)
            && self.data.rows.len() <= cfg.merge_rows
    }

    /// Write the buffered samples as a segment (the window's file, which
    /// replaces the one written at the segment before when they merge) and
    /// restart the journal. `last`: the run ends (the journal is not
    /// restarted: [`run`] removes it).
    fn close_segment(&mut self, cfg: &RecordConfig, last: bool) -> anyhow::Result<()> {
        let (Some(a), Some(b)) = (self.data.samples.first(), self.data.samples.last()) else {
            return Ok(());
        };
        let meter = clock::CostMeter::start();
        let path = self.dir.join(layout::segment_name(a.seq, b.seq));
        let keep = !last && self.merges_on(cfg);
        let ids = identity::rows(
            self.shape_base.as_ref(),
            &self.data.shapes,
            &self.data.samples,
        );
        let (first, last_seq) = (a.seq, b.seq);
        let ids_path = self.dir.join(identity::file_name(a.seq, b.seq));
        if !keep {
            if let Some(s) = self.data.shapes.iter().max_by_key(|s| s.seq) {
                self.shape_base = Some(s.shape.clone());
            }
        }
        // the environment goes into the run's first window only
        let bytes = if keep {
            segment::write(&path, &mut self.data.clone())?
        } else {
            segment::write(&path, &mut std::mem::take(&mut self.data))?
        };
        // the new file is in place before the one it replaces goes (a
        // crash between the two leaves a superseded file that readers and
        // the next run skip: `layout::segments`)
        let replaced = self.window_file.as_ref().map(|w| w.0.clone());
        self.files
            .retain(|f| f.2 != path && Some(&f.2) != replaced.as_ref());
        self.files.push((first, last_seq, path.clone()));
        if let Some((old, old_bytes)) = self.window_file.take() {
            if old != path {
                match std::fs::remove_file(&old) {
                    // already gone (by hand): nothing to replace
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(e).with_context(|| format!("cannot remove {}", old.display()));
                    }
                    _ => {}
                }
            }
            self.sum.segment_bytes -= old_bytes.min(self.sum.segment_bytes);
            self.sum.segments = self.sum.segments.saturating_sub(1);
        }
        // the identity file follows its segment (a crash between the two
        // leaves a segment without one: `identity::sync` writes it)
        identity::write(&ids_path, first, &ids)?;
        if let Some(old) = self.window_ids.take() {
            if old != ids_path {
                match std::fs::remove_file(&old) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(e).with_context(|| format!("cannot remove {}", old.display()));
                    }
                    _ => {}
                }
            }
        }
        self.window_ids = keep.then_some(ids_path);
        self.sum.segment_bytes += bytes;
        self.sum.segments += 1;
        self.window_file = keep.then_some((path, bytes));
        if !keep {
            self.window_started = None;
        }
        self.started = None;
        // the run's last segment: the journal is removed next (its lines,
        // if it stays, are in the segment, which recovery skips)
        if !last {
            self.journal.restart()?;
        }
        self.sum.segment_cpu_ns += meter.stop().cpu_ns;
        Ok(())
    }
}

/// Record until `duration` (cut into intervals by [`PacedRun`]: `-d 10s -i
/// 1s` is the baseline and 10 samples) or a signal caught by `stop`
/// (SIGINT, SIGTERM: the caller installs it before anything else, so a
/// signal during start-up is not lost; one caught before the baseline
/// records nothing); with `trace`, each sample
/// also carries the tracing maps (source `trace`). The caller has refused
/// a `cfg.out` whose parent is missing ([`check_out_dir`]) before it
/// attached anything; one removed since is refused when the directory is
/// made, after the baseline sample.
pub fn run(
    cfg: &RecordConfig,
    mut trace: Option<&mut dyn TraceSession>,
    stop: &Stop,
    announce: impl FnOnce(&std::path::Path),
) -> anyhow::Result<RecordSummary> {
    let mut src = CounterSampler::open(&cfg.root)?;
    // a recording of no CPU could not be read back: refused before
    // anything is written
    if let Some(e) = no_cpu_selected(&cfg.filter, src.latest_view().snap) {
        return Err(e.into());
    }
    let fs = crate::host::HostFs::new(&cfg.root);
    let dir = layout::boot_dir(&cfg.out, &fs, cfg.host.as_deref());
    create_dirs(&cfg.out, &dir)?;
    let (next_seq, recovered) = layout::prepare_boot_dir(&dir)?;
    for l in recovered.iter().flat_map(|m| m.lines()) {
        eprintln!("irqlab: {l}");
    }
    let env = crate::env::collect(&fs, clock::rfc3339_utc(clock::now()?.wall_ns));
    let mut traced = TraceSample::default();
    let mut run = Run::new(&dir, serde_json::to_string(&env)?, next_seq, cfg)?;
    announce(&dir);
    // a statistics file that cannot be read is tried again at every
    // sample, and recorded from the first that reads it: said once
    for m in src.missing() {
        eprintln!("irqlab: note: not recorded until a sample can read it: {m}");
    }
    // the baseline, then one sample per tick of the run's pace (a signal
    // caught in the run's last sample adds none after it)
    let mut pace = PacedRun::new(cfg.interval, End::of(None, cfg.duration));
    let mut baseline = true;
    loop {
        let mut last = false;
        if baseline {
            if stop.caught().is_some() {
                break;
            }
            baseline = false;
        } else {
            // a synthetic clock's run takes every tick (its times are
            // scaled from the ticks' count, not read)
            if cfg.clock.is_none() {
                run.sum.skipped += skip_late(&mut pace, cfg.interval, Instant::now());
            }
            match pace.wait(stop) {
                Tick::Due => {}
                Tick::End => break,
                // the interval a signal cut short is recorded too
                Tick::Signal(_) if pace.since_tick() >= cfg.final_after => last = true,
                // a traced run's last read must be closing
                Tick::Signal(_) if trace.is_some() => {
                    pace.wait_out(cfg.final_after);
                    last = true;
                }
                Tick::Signal(_) => break,
            }
        }
        let mut s = match src.next_sample() {
            Ok(s) => s,
            Err(e) => return Err(end_on_error(run, cfg, e)),
        };
        // started with the sample (at the previous sample's stop: the
        // sampler's meters are chained), stopped after the journal line
        let meter = s.frame.meter;
        let mut view = s.view();
        if let Some(t) = trace.as_deref_mut() {
            // the run's last sample holds every run no program saw; one a
            // signal ends before `final_after` ends at the sample before
            t.read_closing_if(&mut traced, last || pace.was_last())?;
            view.trace = Some(&traced);
        }
        if run.sum.samples == 0 {
            for w in filter_warnings_of(&cfg.filter, view.snap) {
                eprintln!("{w}");
            }
        }
        // affinity from the live sampler's metadata cache (read again
        // when the set of IRQs changes, when an IRQ's counts rise outside
        // it or go back, and about every 2 min)
        run.add(view, &cfg.filter, &mut |irq| s.frame.affinity(irq))?;
        run.sum.sample_cpu_ns += meter.stop().cpu_ns;
        if last {
            break;
        }
        if run.started.is_some_and(|t| t.elapsed() >= cfg.segment)
            || run.changes >= cfg.segment_changes
        {
            run.close_segment(cfg, false)?;
        }
    }
    run.close_segment(cfg, true)?;
    let _ = std::fs::remove_file(run.journal.path());
    for l in clocks_said(&run) {
        eprintln!("irqlab: {l}");
    }
    Ok(run.sum)
}

/// What `replay` says of each sample of the run whose clock it holds
/// wrong (the wall clock set back during the run: those intervals replay
/// as gaps), in its words ([`reader::clock_fault_line`]), naming the run's
/// file that holds it: from what the run recorded, nothing read back (a
/// run's first sample starts the clock rule afresh, so no sample before
/// the run bears on them).
fn clocks_said(run: &Run) -> Vec<String> {
    run.clock_faults
        .iter()
        .map(|(before, now, fault)| {
            let file = run
                .files
                .iter()
                .find(|f| (f.0..=f.1).contains(&now.seq))
                .map_or_else(
                    || run.dir.display().to_string(),
                    |f| f.2.display().to_string(),
                );
            reader::clock_fault_line(&file, before, now, *fault)
        })
        .collect()
}

/// Refuse an output directory whose parent does not exist, before
/// anything is sampled: `record` creates DIR itself (and the boot
/// directory inside it), never a missing tree above it — a mistyped `-o`
/// must not make directories anywhere, as `perf record -o`, `tar` and
/// `fio` expect the parent to exist too.
pub fn check_out_dir(out: &Path) -> anyhow::Result<()> {
    refuse_partition(out)?;
    if out.is_dir() {
        return Ok(());
    }
    match parent_problem(out) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Refuse an output directory named as a recording's own `host=…` or
/// `boot=…` directory (`-o rec/host=web1`, completed from a recording
/// there), or that is one under another name (`-o .` inside one, a
/// symlink to one): the recording would go to `host=…/boot=…` inside it, where
/// `replay` and `recover` of the dataset, and engines' globs of
/// `DIR/*/*/part-*.parquet`, never find it. The error names the dataset
/// directory above it.
fn refuse_partition(out: &Path) -> anyhow::Result<()> {
    let partition = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy())
            .is_some_and(|n| n.starts_with("host=") || n.starts_with("boot="))
    };
    // `.`, `..` or a symlink whose own name says nothing: the directory
    // it is, named in the message
    let Some(named) =
        layout::partition_dir(out, "host=").or_else(|| layout::partition_dir(out, "boot="))
    else {
        return Ok(());
    };
    let shown = match named == out {
        true => format!("{}: named as", out.display()),
        false => format!("{} ({}): is", out.display(), named.display()),
    };
    let dataset = named
        .ancestors()
        .skip(1)
        .find(|p| !partition(p))
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    anyhow::bail!(
        "{} a recording's own host=…/boot=… directory: the recording would go to host=…/boot=… inside it, where `replay` and `recover` of the dataset never look; give the dataset directory (-o {})",
        shown,
        dataset.display()
    )
}

/// Why the parent of `out` cannot take it: missing, or there but not to
/// be looked at (no permission to reach it, a symlink loop), said as it
/// is (`None` for a parent that is there, or a name in the current
/// directory, whose parent is the working directory).
fn parent_problem(out: &Path) -> Option<anyhow::Error> {
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty())?;
    match std::fs::metadata(parent) {
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(anyhow::anyhow!(
            "cannot create {}: parent directory {} does not exist",
            out.display(),
            parent.display()
        )),
        Err(e) => Some(anyhow::anyhow!(
            "cannot create {}: parent directory {}: {e}",
            out.display(),
            parent.display()
        )),
    }
}

/// Create `out` (its last component only: its parent must exist) unless
/// it exists, then the boot directory `dir` inside it; a failure names
/// what stands where a directory belongs ([`not_a_directory`]).
fn create_dirs(out: &Path, dir: &Path) -> anyhow::Result<()> {
    match std::fs::create_dir(out) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            // the parent removed since `check_out_dir` looked
            if let Some(e) = parent_problem(out) {
                return Err(e);
            }
            return Err(e).with_context(|| format!("cannot create {}", out.display()));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| match not_a_directory(out, dir) {
        Some(why) => anyhow::anyhow!("cannot create {}: {why}", dir.display()),
        None => anyhow::Error::new(e).context(format!("cannot create {}", dir.display())),
    })
}

/// What stands where a directory of the way from `out` down to `dir`
/// (the dataset, its `host=…` and `boot=…`) belongs: a dangling symbolic
/// link or a file of another type, named with what it is (`None` when
/// each one there is a directory).
fn not_a_directory(out: &Path, dir: &Path) -> Option<String> {
    let mut on_the_way: Vec<&Path> = dir.ancestors().take_while(|a| a.starts_with(out)).collect();
    on_the_way.reverse();
    on_the_way.into_iter().find_map(|p| {
        let own = p.symlink_metadata().ok()?;
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => None,
            Ok(m) => Some(format!(
                "{} is a {}, expected a directory",
                p.display(),
                crate::host::type_name(m.file_type())
            )),
            Err(e) if own.file_type().is_symlink() && e.kind() == std::io::ErrorKind::NotFound => {
                Some(format!(
                    "{} is a dangling symbolic link (to {}), expected a directory",
                    p.display(),
                    std::fs::read_link(p)
                        .map_or_else(|e| e.to_string(), |t| t.display().to_string())
                ))
            }
            Err(e) => Some(format!("{}: {e}, expected a directory", p.display())),
        }
    })
}

/// A sample that could not be taken ends the run: the samples recorded
/// before it are closed into their segment as at the run's end (or, when
/// that fails too, left in the journal for `irqlab recover`), and the
/// error says where they are.
fn end_on_error(mut run: Run, cfg: &RecordConfig, e: anyhow::Error) -> anyhow::Error {
    let kept = run.sum.samples;
    if kept == 0 {
        return e;
    }
    let journal = run.journal.path().to_path_buf();
    match run.close_segment(cfg, true) {
        Ok(()) => {
            let _ = std::fs::remove_file(&journal);
            e.context(format!(
                "recording stopped; its {kept} sample(s) before this one are in {}",
                run.dir.display()
            ))
        }
        Err(c) => e.context(format!(
            "recording stopped; its {kept} sample(s) before this one are in the journal {} \
             (not closed into a segment: {c:#}; `irqlab recover {}` makes one)",
            journal.display(),
            cfg.out.display()
        )),
    }
}

/// Drop the ticks of `pace` due more than `interval` before `now` (a
/// sample took longer than the interval): a late tick is still taken at
/// once, but a backlog is not sampled back to back, so that a run by
/// `--duration` ends on time. The tick at the run's end is never dropped.
/// Returns how many were dropped.
fn skip_late(pace: &mut PacedRun, interval: Duration, now: Instant) -> u64 {
    let mut n = 0;
    while let Some(due) = pace.due_after(None) {
        let at_end = pace.deadline().is_some_and(|end| due >= end);
        if at_end || due.checked_add(interval).is_none_or(|t| t >= now) {
            break;
        }
        pace.take_after(None);
        n += 1;
    }
    n
}

/// A `--cpus` that keeps no CPU the machine's files list: a usage error
/// of `record` (exit 2), found before anything is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoCpuSelected {
    /// The list as selected.
    pub list: String,
    /// The CPUs the sampled files list (online CPUs).
    pub present: String,
    /// The selected CPUs only `/proc/softirqs` lists (offline ones; empty
    /// when none).
    pub offline: String,
}

impl std::fmt::Display for NoCpuSelected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.offline.is_empty() {
            return write!(
                f,
                "--cpus {} selects no CPU of this machine (the sampled files list CPUs {}): nothing recorded",
                self.list, self.present
            );
        }
        write!(
            f,
            "--cpus {} selects no online CPU (online: CPUs {}; only /proc/softirqs lists {}: offline?): nothing recorded",
            self.list, self.present, self.offline
        )
    }
}

impl std::error::Error for NoCpuSelected {}

/// [`NoCpuSelected`] when `f`'s CPUs keep none of those `snap`'s files list.
fn no_cpu_selected(f: &Filter, snap: &irqlab_core::Snapshot) -> Option<NoCpuSelected> {
    let cpus = f.cpus.as_ref()?;
    let mut listed = crate::filter::warnings::ListedCpus::default();
    crate::filter::warnings::listed_of(snap, &mut listed);
    if cpus.iter().any(|c| listed.online.contains(c)) {
        return None;
    }
    let offline = cpus.iter().copied().filter(|&c| listed.softirqs_only(c));
    Some(NoCpuSelected {
        list: irqlab_core::CpuList::from_cpus(cpus.iter().copied()).to_string(),
        present: irqlab_core::CpuList::from_cpus(listed.online.iter().copied()).to_string(),
        // an empty list is written as an empty string
        offline: irqlab_core::CpuList::from_cpus(offline).to_string(),
    })
}

/// What `show` says of filters that select nothing or less than asked
/// (`crate::filter::warnings`), for the first sample of a recording.
fn filter_warnings_of(f: &Filter, snap: &irqlab_core::Snapshot) -> Vec<String> {
    let cpus = f
        .cpus
        .as_ref()
        .map(|c| irqlab_core::CpuList::from_cpus(c.iter().copied()).to_string());
    let irq = f.irq.as_ref().map(|r| r.as_str());
    crate::filter::warnings::snapshot_warnings(cpus.as_deref(), irq, snap, f)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::record::reader::{self, Replayer};
    use crate::record::trace_cells::tests::sample;

    /// A parent that is there but cannot be looked at (a symlink loop
    /// here; no permission alike) is not said to be missing: its error
    /// is named as it is.
    #[test]
    fn a_parent_that_cannot_be_looked_at_is_not_called_missing() {
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("typo/x");
        let e = check_out_dir(&missing).unwrap_err().to_string();
        assert!(e.ends_with("typo does not exist"), "{e}");
        let parent = d.path().join("loop");
        std::os::unix::fs::symlink(&parent, &parent).unwrap();
        let e = check_out_dir(&parent.join("x")).unwrap_err().to_string();
        assert!(!e.contains("does not exist"), "{e}");
        assert!(
            e.starts_with(&format!(
                "cannot create {}: parent directory {}: ",
                parent.join("x").display(),
                parent.display()
            )) && e.contains("symbolic links"),
            "{e}"
        );
        assert!(check_out_dir(&d.path().join("new")).is_ok());
    }

    /// `-o` naming a recording's own `host=` or `boot=` directory is
    /// refused, naming the dataset above it: a recording inside it would
    /// be a partition that `replay` and `recover` of the dataset miss.
    #[test]
    fn an_output_named_as_a_partition_is_refused_naming_the_dataset() {
        for (out, dataset) in [
            ("rec/host=vm", "rec"),
            ("rec/host=vm/", "rec"),
            ("rec/host=vm/boot=b1", "rec"),
            ("host=vm", "."),
        ] {
            let e = check_out_dir(Path::new(out)).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "{}: named as a recording's own host=…/boot=… directory",
                    Path::new(out).display()
                )) && e.ends_with(&format!("(-o {dataset})")),
                "{e}"
            );
        }
        for ok in ["rec", "data/host=vm/rec", "hostname"] {
            assert!(refuse_partition(Path::new(ok)).is_ok(), "{ok}");
        }
    }

    /// A path to a `host=`/`boot=` directory whose own name says nothing
    /// (`..` from inside one, a symlink to one) is refused as that
    /// directory, naming it and the dataset above it.
    #[test]
    fn an_output_that_resolves_to_a_partition_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let host = d.path().join("rec/host=vm");
        std::fs::create_dir_all(host.join("boot=b1")).unwrap();
        std::os::unix::fs::symlink(&host, d.path().join("latest")).unwrap();
        let real = std::fs::canonicalize(&host).unwrap();
        for out in [host.join("boot=b1/.."), d.path().join("latest")] {
            let e = check_out_dir(&out).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "{} ({}): is a recording's own host=…/boot=… directory",
                    out.display(),
                    real.display()
                )) && e.ends_with(&format!("(-o {})", real.parent().unwrap().display())),
                "{e}"
            );
        }
        assert!(check_out_dir(&d.path().join("rec/host=vm/..")).is_ok());
    }

    /// Tracing maps that grow by one `sample` scale per read.
    struct Fake(u64);

    impl TraceSession for Fake {
        fn read(&mut self, out: &mut TraceSample) -> anyhow::Result<()> {
            self.0 += 1;
            *out = sample(self.0);
            Ok(())
        }
    }

    /// A run 3 intervals behind drops the 2 ticks more than an interval
    /// late, takes the late one at once, and never drops the tick at the
    /// end of a run by duration.
    #[test]
    fn late_ticks_are_dropped_but_never_the_last() {
        let ms = Duration::from_millis;
        let t0 = Instant::now();
        let mut p = PacedRun::starting_at(t0, ms(10), End::After(ms(100)));
        assert_eq!(skip_late(&mut p, ms(10), t0 + ms(5)), 0, "on time");
        assert_eq!(skip_late(&mut p, ms(10), t0 + ms(35)), 2);
        assert_eq!(p.next_due(), Some(t0 + ms(30)), "late: at once");
        assert_eq!(skip_late(&mut p, ms(10), t0 + ms(500)), 6);
        assert_eq!(p.next_due(), Some(t0 + ms(100)), "the end");
        assert_eq!(p.next_due(), None);
    }

    fn tree() -> tempfile::TempDir {
        let spec = irqlab_core::synth::SynthSpec {
            cpus: 2,
            irqs: 6,
            nr_irqs: 64,
            arch: irqlab_core::render::Arch::X86,
            era: irqlab_core::render::Era::E3,
            offline: vec![],
            seed: 3,
        };
        let d = tempfile::tempdir().unwrap();
        crate::host::write_tree(d.path(), &spec.build().unwrap().files()).unwrap();
        d
    }

    fn config(root: &std::path::Path, out: &std::path::Path) -> RecordConfig {
        RecordConfig {
            root: root.to_path_buf(),
            out: out.to_path_buf(),
            interval: Duration::from_millis(20),
            // long enough for two segments on a loaded machine (a debug
            // segment and identity write take tens of ms there)
            duration: Some(Duration::from_millis(300)),
            segment: Duration::from_millis(50),
            segment_changes: 1_000_000,
            merge: Duration::ZERO,
            merge_rows: MERGE_ROWS,
            filter: Filter::default(),
            filter_flags: String::new(),
            host: Some("t".into()),
            clock: None,
            final_after: Duration::from_millis(1),
        }
    }

    #[test]
    fn traced_maps_are_recorded_with_each_sample_and_read_back() {
        let root = tree();
        let out = tempfile::tempdir().unwrap();
        let cfg = config(root.path(), out.path());
        let mut fake = Fake(0);
        let sum = run(&cfg, Some(&mut fake), &Stop::unhooked(), |_| {}).unwrap();
        // how many ticks and segments fit in the run depends on the load;
        // every sample there is must carry its maps
        assert!(sum.samples >= 2 && sum.segments >= 1, "{sum:?}");
        let rec = reader::open(&layout::one_boot_dir(out.path()).unwrap()).unwrap();
        assert_eq!(rec.steps.len() as u64, sum.samples);
        assert!(Replayer::traced(&rec.steps));
        let mut rp = Replayer::default();
        for (i, step) in rec.steps.iter().enumerate() {
            let s = rp.apply(step).unwrap();
            assert_eq!(
                rp.trace(step).unwrap(),
                Some(sample(i as u64 + 1)),
                "sample {i}"
            );
            assert!(s.snap.interrupts.is_some(), "the files are recorded too");
        }
    }

    /// Only the read of the run's last sample is closing.
    #[test]
    fn the_last_samples_trace_read_is_closing() {
        let root = tree();
        let out = tempfile::tempdir().unwrap();
        let mut cfg = config(root.path(), out.path());
        cfg.duration = Some(Duration::from_millis(100));
        let mut log = crate::trace::live_trace::tests::Closing::default();
        let sum = run(&cfg, Some(&mut log), &Stop::unhooked(), |_| {}).unwrap();
        let reads = log.reads();
        assert_eq!(reads.len() as u64, sum.samples, "one read per sample");
        // the baseline and at least one tick (late ones may be dropped)
        assert!(reads.len() >= 2, "{reads:?}");
        assert_eq!(reads.iter().filter(|&&c| c).count(), 1, "{reads:?}");
        assert_eq!(reads.last(), Some(&true), "{reads:?}");
    }

    /// A traced run ended by `session`'s signal, with `final_after`: how
    /// many samples it recorded, and the span from the first to the last.
    fn signalled(
        final_after: Duration,
        duration: Option<Duration>,
        session: &mut dyn TraceSession,
        stop: &Stop,
    ) -> (u64, u64) {
        let root = tree();
        let out = tempfile::tempdir().unwrap();
        let mut cfg = config(root.path(), out.path());
        cfg.final_after = final_after;
        cfg.duration = duration;
        let sum = run(&cfg, Some(session), stop, |_| {}).unwrap();
        let dir = layout::one_boot_dir(out.path()).unwrap();
        (sum.samples, samples_span_ns(&dir))
    }

    /// A signal caught in the sample that ends a run by duration adds no
    /// sample after it: the run keeps its count and its one closing read.
    #[test]
    fn a_signal_in_the_last_sample_adds_none() {
        use crate::trace::live_trace::tests::{Closing, SignalAfter};
        let stop = Stop::unhooked();
        let log = Closing::default();
        let mut session = SignalAfter {
            log: log.clone(),
            stop: stop.clone(),
            when: |r| r.last() == Some(&true),
        };
        let (samples, _) = signalled(
            Duration::ZERO,
            Some(Duration::from_millis(60)),
            &mut session,
            &stop,
        );
        let reads = log.reads();
        assert_eq!(reads.len() as u64, samples);
        assert_eq!(reads.iter().filter(|&&c| c).count(), 1, "{reads:?}");
        assert_eq!(reads.last(), Some(&true), "{reads:?}");
    }

    /// A signal sooner than `final_after` after a traced run's sample
    /// waits out the rest, then takes the last sample with a closing read
    /// (an untraced run ends at the sample before).
    #[test]
    fn a_signal_right_after_a_traced_sample_waits_for_a_closing_one() {
        use crate::trace::live_trace::tests::{Closing, SignalAfter};
        let stop = Stop::unhooked();
        let log = Closing::default();
        // caught right after the baseline
        let mut session = SignalAfter {
            log: log.clone(),
            stop: stop.clone(),
            when: |r| r.len() == 1,
        };
        let after = Duration::from_millis(200);
        let (samples, span) = signalled(after, None, &mut session, &stop);
        assert_eq!(log.reads(), [false, true]);
        assert_eq!(samples, 2);
        // `final_after` counts from when the baseline began
        assert!(span >= after.as_nanos() as u64 / 2, "{span} ns");
    }

    /// Recorded time from the first sample in `dir` to the last.
    fn samples_span_ns(dir: &std::path::Path) -> u64 {
        let steps = reader::open(dir).unwrap().steps;
        steps.last().unwrap().time.mono_ns - steps[0].time.mono_ns
    }

    #[test]
    fn a_merged_window_rolls_over_after_merge_and_the_summary_counts_files() {
        let root = tree();
        let out = tempfile::tempdir().unwrap();
        let cfg = RecordConfig {
            interval: Duration::from_millis(10),
            duration: Some(Duration::from_millis(400)),
            segment: Duration::from_millis(30),
            merge: Duration::from_millis(100),
            ..config(root.path(), out.path())
        };
        let sum = run(&cfg, None, &Stop::unhooked(), |_| {}).unwrap();
        let dir = layout::one_boot_dir(out.path()).unwrap();
        let segs = layout::segments(&dir).unwrap();
        // a window closes once its samples span the merge time: a machine
        // too busy to spread its samples over two windows makes one file
        let span = samples_span_ns(&dir);
        let two_windows = 2 * (cfg.merge + cfg.segment).as_nanos() as u64;
        assert!(
            segs.len() >= 2 || span < two_windows,
            "windows of 100 ms in {span} ns of samples: {segs:?}"
        );
        assert_eq!(segs.len() as u64, sum.segments);
        let bytes: u64 = segs
            .iter()
            .map(|s| std::fs::metadata(&s.2).unwrap().len())
            .sum();
        assert_eq!(bytes, sum.segment_bytes);
        // each segment and its IRQ identity file, nothing replaced left
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut want: Vec<String> = segs
            .iter()
            .flat_map(|s| {
                [
                    layout::segment_name(s.0, s.1),
                    identity::file_name(s.0, s.1),
                ]
            })
            .collect();
        want.sort();
        assert_eq!(names, want);
        let rec = reader::open(&dir).unwrap();
        assert_eq!(rec.steps.len() as u64, sum.samples);
        assert!(rec
            .steps
            .windows(2)
            .all(|w| w[1].time.seq == w[0].time.seq + 1));
    }

    #[test]
    fn a_window_past_its_row_bound_is_not_rewritten() {
        let root = tree();
        let out = tempfile::tempdir().unwrap();
        let cfg = RecordConfig {
            interval: Duration::from_millis(10),
            duration: Some(Duration::from_millis(300)),
            segment: Duration::from_millis(30),
            merge: Duration::from_secs(600),
            merge_rows: 10, // below one sample's cells
            ..config(root.path(), out.path())
        };
        let sum = run(&cfg, None, &Stop::unhooked(), |_| {}).unwrap();
        let dir = layout::one_boot_dir(out.path()).unwrap();
        let segs = layout::segments(&dir).unwrap();
        // how many segments the time rule closes depends on how this
        // machine spread its samples; every one of them must be its own file
        let span = samples_span_ns(&dir);
        let two_segments = 2 * (cfg.segment + cfg.interval).as_nanos() as u64;
        assert!(
            segs.len() >= 2 || span < two_segments,
            "a file per segment over {span} ns of samples: {segs:?}"
        );
        assert_eq!(segs.len() as u64, sum.segments);
        // and with room, the same run is one file
        let out = tempfile::tempdir().unwrap();
        let cfg = RecordConfig {
            merge_rows: MERGE_ROWS,
            out: out.path().to_path_buf(),
            ..cfg
        };
        run(&cfg, None, &Stop::unhooked(), |_| {}).unwrap();
        let dir = layout::one_boot_dir(out.path()).unwrap();
        assert_eq!(layout::segments(&dir).unwrap().len(), 1);
    }

    /// A wall clock set back during a run (by more than replay's slack)
    /// makes replay show that sample's intervals as gaps: the run says so
    /// at its end, in replay's words, naming the file replay reads it
    /// from (the window's file that replaced the one before); from what
    /// it recorded, so not what replay says of the files before it (an
    /// unreadable one here). A run with right clocks says nothing.
    #[test]
    fn a_wall_clock_set_back_during_a_run_is_said_at_its_end_as_replay_says_it() {
        let root = tree();
        let out = tempfile::tempdir().unwrap();
        let cfg = RecordConfig {
            merge: Duration::from_secs(3600),
            ..config(root.path(), out.path())
        };
        let dir = out.path().join("boot=x");
        std::fs::create_dir_all(&dir).unwrap();
        let old = dir.join(layout::segment_name(0, 0));
        std::fs::write(&old, b"not parquet").unwrap();
        let mut src = CounterSampler::open(&cfg.root).unwrap();
        let mut run = Run::new(&dir, String::new(), 1, &cfg).unwrap();
        for i in 0..4 {
            if i == 2 {
                // a window's file, replaced by the next segment's
                run.close_segment(&cfg, false).unwrap();
                assert!(dir.join(layout::segment_name(1, 2)).exists());
            }
            let s = src.next_sample().unwrap();
            let mut snap = s.snap().clone();
            if i == 1 {
                snap.wall_ns -= 10_000_000_000;
            }
            let view = SampleCountersView {
                snap: &snap,
                ..s.view()
            };
            run.add(view, &cfg.filter, &mut |_| None).unwrap();
            if i == 0 {
                assert!(clocks_said(&run).is_empty());
            }
        }
        run.close_segment(&cfg, true).unwrap();
        assert!(!dir.join(layout::segment_name(1, 2)).exists());
        let said = clocks_said(&run);
        let replay = reader::check(&dir);
        let old = old.display().to_string();
        assert!(replay.iter().any(|l| l.contains(&old)), "{replay:?}");
        let mine: Vec<String> = replay.into_iter().filter(|l| !l.contains(&old)).collect();
        assert_eq!(said, mine);
        assert_eq!(said.len(), 1, "{said:?}");
        let file = dir.join(layout::segment_name(1, 4)).display().to_string();
        let want = format!("{file}: sample 2's monotonic clock");
        assert!(said[0].starts_with(&want), "{said:?}");
    }

    /// The run's last segment does not truncate the journal it removes
    /// next: should the removal fail, the journal's lines are all in the
    /// segment, and recovery adds nothing from them and removes it.
    #[test]
    fn a_journal_left_by_the_last_segment_is_recovered_into_nothing() {
        let root = tree();
        let out = tempfile::tempdir().unwrap();
        let cfg = config(root.path(), out.path());
        let dir = out.path().join("boot=x");
        std::fs::create_dir_all(&dir).unwrap();
        let mut src = CounterSampler::open(&cfg.root).unwrap();
        let mut run = Run::new(&dir, String::new(), 0, &cfg).unwrap();
        for _ in 0..3 {
            let mut s = src.next_sample().unwrap();
            let view = s.view();
            run.add(view, &cfg.filter, &mut |irq| s.frame.affinity(irq))
                .unwrap();
        }
        run.close_segment(&cfg, true).unwrap();
        let journal = dir.join(JOURNAL);
        assert!(
            std::fs::metadata(&journal).unwrap().len() > 0,
            "not truncated"
        );
        drop(run);
        let msg = layout::recover_boot_dir(&dir)
            .unwrap()
            .message
            .unwrap_or_default();
        assert!(msg.contains("its 3 sample(s) 0–2 are already in"), "{msg}");
        assert!(msg.contains("(the same values)\nremoved"), "{msg}");
        assert!(!journal.exists());
        assert_eq!(layout::segments(&dir).unwrap().len(), 1);
        let steps = reader::open(&dir).unwrap().steps;
        let seqs: Vec<u64> = steps.iter().map(|s| s.time.seq).collect();
        assert_eq!(seqs, vec![0, 1, 2]);
    }

    /// A `--cpus` of an offline CPU, which only /proc/softirqs lists, is
    /// refused saying so, not as a CPU the machine does not have.
    #[test]
    fn cpus_of_an_offline_cpu_only_are_refused_naming_it_offline() {
        let snap = crate::filter::warnings::fixtures::cpu3_offline();
        let f = Filter::from_flags(None, Some("3,9")).unwrap();
        let e = no_cpu_selected(&f, &snap).unwrap();
        assert_eq!(
            e.to_string(),
            "--cpus 3,9 selects no online CPU (online: CPUs 0-2; \
             only /proc/softirqs lists 3: offline?): nothing recorded"
        );
        let f = Filter::from_flags(None, Some("2,3")).unwrap();
        assert!(no_cpu_selected(&f, &snap).is_none());
    }

    /// A `--cpus` that keeps no CPU of the tree is refused before the
    /// output directory is made; one that keeps some is recorded.
    #[test]
    fn cpus_that_select_no_cpu_are_refused_before_anything_is_written() {
        let root = tree();
        let out = tempfile::tempdir().unwrap();
        let cfg = RecordConfig {
            filter: Filter::from_flags(None, Some("5,7-9")).unwrap(),
            ..config(root.path(), &out.path().join("rec"))
        };
        let e = run(&cfg, None, &Stop::unhooked(), |_| {}).unwrap_err();
        assert_eq!(
            e.downcast_ref::<NoCpuSelected>(),
            Some(&NoCpuSelected {
                list: "5,7-9".into(),
                present: "0-1".into(),
                offline: String::new(),
            })
        );
        assert!(!out.path().join("rec").exists());
        let cfg = RecordConfig {
            filter: Filter::from_flags(None, Some("1,5")).unwrap(),
            duration: Some(Duration::from_millis(40)),
            ..cfg
        };
        assert!(run(&cfg, None, &Stop::unhooked(), |_| {}).unwrap().samples >= 2);
    }

    /// Each run marks its first sample's shape, with its filter flags; a
    /// second run in the boot directory is a run of its own.
    #[test]
    fn each_run_marks_its_first_sample() {
        let root = tree();
        let out = tempfile::tempdir().unwrap();
        let cfg = RecordConfig {
            duration: Some(Duration::from_millis(60)),
            ..config(root.path(), out.path())
        };
        run(&cfg, None, &Stop::unhooked(), |_| {}).unwrap();
        let second = RecordConfig {
            filter: Filter::from_flags(Some("LOC"), None).unwrap(),
            filter_flags: "--irq LOC".into(),
            ..cfg
        };
        run(&second, None, &Stop::unhooked(), |_| {}).unwrap();
        let rec = reader::open(&layout::one_boot_dir(out.path()).unwrap()).unwrap();
        let runs = reader::runs(&rec.steps);
        assert_eq!(runs.len(), 2, "{runs:?}");
        let marks: Vec<Option<String>> = rec
            .steps
            .iter()
            .map(|s| {
                s.shape
                    .as_ref()
                    .and_then(|sh| sh.run.clone())
                    .map(|r| r.filter)
            })
            .collect();
        let mut want = vec![None; rec.steps.len()];
        want[0] = Some(String::new());
        want[runs[1].start] = Some("--irq LOC".into());
        assert_eq!(marks, want);
    }

    #[test]
    fn irq_filter_keeps_the_traced_rows_of_the_recorded_irq_rows() {
        let root = tree();
        let out = tempfile::tempdir().unwrap();
        let cfg = RecordConfig {
            filter: Filter::from_flags(Some("^LOC$"), Some("0")).unwrap(),
            ..config(root.path(), out.path())
        };
        run(&cfg, Some(&mut Fake(0)), &Stop::unhooked(), |_| {}).unwrap();
        let rec = reader::open(&layout::one_boot_dir(out.path()).unwrap()).unwrap();
        let shape = rec.steps[0].shape.clone().unwrap();
        assert_eq!(shape.trace_cpus, Some(vec![0]));
        assert!(shape.trace_rows.iter().all(|k| !k.starts_with("hardirq:")));
        assert!(shape
            .trace_rows
            .contains(&"vector:LOC:local_timer/ns".to_string()));
        assert!(shape.trace_rows.contains(&"softirq:NET_RX/ns".to_string()));
        let mut rp = Replayer::default();
        rp.advance(&rec.steps[0]);
        let t = rp.trace(&rec.steps[1]).unwrap().unwrap();
        assert_eq!(t.irqs.len(), 1);
        assert_eq!(t.irqs[0].1[0], sample(2).irqs[1].1[0], "LOC on CPU 0");
    }
}
