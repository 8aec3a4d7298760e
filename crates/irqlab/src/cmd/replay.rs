//! `irqlab replay DIR`: the interactive `top` screen over a recording with
//! time navigation (`tui::replay`), or with `--batch` `top --batch` lines.
//! The
//! recording is a snapshot source (`record::playback`) behind the same
//! `LiveSampler` as live `top`; `--batch` output comes from the same
//! writer and loop as live `top --batch` (`top::batch::BatchWriter`: text
//! blocks with `Average:` at the end, or JSON lines). A recording made with `record --trace` adds each
//! frame's traced time as `top --trace` does (`record::trace_replay`).
//! A boot directory that several `record` runs wrote is replayed run by
//! run (`reader::runs`): no interval, and no `Average:`, spans two runs.
//! Each run is replayed with the CPUs it recorded (`filter.rs`), and
//! stderr says which row filter it was recorded with.

mod filter;

use super::top::batch::{BatchWriter, FrameTrace};
use super::top::BatchFormat;
use crate::filter::Filter;
use crate::record::playback::RecordingSource;
use crate::record::trace_replay::TraceReplay;
use crate::record::{layout, reader};
use crate::report::text_block::TextOpts;
use crate::sampler::strategy::Choice;
use crate::sampler::{End, Frame, LiveSampler, PacedRun, Stop};
use crate::trace::top as top_trace;
use crate::trace::top::TopTrace;
use crate::tui::app::SortKey;
use crate::tui::replay::Player;
use crate::tui::TuiConfig;
use irqlab_core::CpuList;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `irqlab replay`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    irqlab replay rec                          # interactive: space plays, . and , step\n  \
    irqlab replay rec --batch --format json    # JSON lines, rates per interval\n  \
    irqlab replay rec/host=web1/boot=…         # one recording of a dataset")]
pub struct Args {
    /// A recording directory with one host and boot (or a boot=… directory).
    #[arg(value_parser = super::args::path())]
    pub dir: PathBuf,
    /// Print `top --batch` lines instead of the interactive view.
    #[arg(long)]
    pub batch: bool,
    /// Output format of --batch (the interactive view has one).
    #[arg(long, value_enum, default_value = "text", requires = "batch")]
    pub format: BatchFormat,
    /// Replay only this `record` run of the directory (1 is the first;
    /// the interactive view needs it when there are several).
    #[arg(long, value_name = "N", allow_hyphen_values = true,
          value_parser = |s: &str| super::args::whole_number::<u64>(s, 1, u64::MAX))]
    pub run: Option<u64>,
    #[command(flatten)]
    pub filter: super::args::FilterArgs,
    /// Hide IRQ rows below this rate (per second, all kept CPUs), in text
    /// and JSON as `top --threshold`; rows with no interrupt are hidden
    /// at any threshold, rows with a gap never.
    #[arg(long, value_name = "RATE", value_parser = super::top::parse_threshold,
          allow_hyphen_values = true)]
    pub threshold: Option<f64>,
    /// Add each numbered IRQ's recorded affinity to JSON lines
    /// (`affinity`), as `top --affinity` (the interactive view always
    /// shows it; text lines have none).
    #[arg(long)]
    pub affinity: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(why) = super::top::affinity_refusal(args.affinity, args.batch, args.format) {
        eprintln!("irqlab: error: replay {why}");
        return Ok(ExitCode::from(super::top::EXIT_USAGE));
    }
    // Batch: SIGINT/SIGTERM caught before the recording is read (a signal
    // while a large one is read, or its warnings wait on a full stderr,
    // ends the run at its first frame with 128 + signal, not lost in a
    // background job that ignores SIGINT, nor a kill without exit code).
    let stop = args.batch.then(Stop::install).transpose()?;
    let filter = args.filter.filter()?;
    refuse_non_directory(&args.dir)?;
    let dir = layout::one_boot_dir(&args.dir)?;
    let rec = reader::open(&dir)?;
    for w in &rec.warnings {
        eprintln!("irqlab: {w}");
    }
    let mut runs = numbered_runs(rec.steps, &rec.files);
    let n = runs.len();
    if n == 0 {
        anyhow::bail!("{}: the recording holds no sample", dir.display());
    }
    if let Some(k) = args.run {
        let Some(i) = usize::try_from(k)
            .ok()
            .and_then(|k| k.checked_sub(1))
            .filter(|&i| i < n)
        else {
            eprintln!(
                "irqlab: error: --run {k}: {} holds {n} record run(s)",
                dir.display()
            );
            return Ok(ExitCode::from(super::top::EXIT_USAGE));
        };
        runs = vec![runs.swap_remove(i)];
    } else if n > 1 && !args.batch {
        eprintln!(
            "irqlab: error: {} holds {n} record runs, replayed one at a time: name one with --run N (or replay them all with --batch)",
            dir.display()
        );
        for (i, r) in runs.iter().enumerate() {
            eprintln!("irqlab:   --run {}: {}", i + 1, r.describe());
        }
        return Ok(ExitCode::from(super::top::EXIT_USAGE));
    }
    if let [one] = runs.as_slice() {
        match one {
            Run::Skipped { what, why } => {
                anyhow::bail!("{}: {what}: cannot be replayed: {why}", dir.display())
            }
            Run::Steps(s) if s.len() < 2 => {
                anyhow::bail!("{}: one sample only; rates need two", dir.display())
            }
            Run::Steps(_) => {}
        }
    }
    let Some(stop) = stop else {
        let steps = match runs.pop() {
            Some(Run::Steps(s)) => s,
            _ => Vec::new(),
        };
        let files = run_files(&steps, &rec.files);
        return interactive(&args, rec.dir, steps, files);
    };
    let mut out = crate::export::stdout::stdout();
    let mut replayed = 0;
    for (i, r) in runs.into_iter().enumerate() {
        let k = args.run.map_or(i as u64 + 1, |k| k);
        let steps = match r {
            Run::Skipped { what, why } => {
                eprintln!("irqlab: run {k} of {n}: {what}: skipped: {why}");
                continue;
            }
            Run::Steps(s) => s,
        };
        if steps.len() < 2 {
            eprintln!(
                "irqlab: run {k} of {n}: {}; one sample only (rates need two): nothing to replay",
                describe(&steps)
            );
            continue;
        }
        if n > 1 {
            eprintln!(
                "irqlab: run {k} of {n}: {}; replayed on its own (no interval across runs)",
                describe(&steps)
            );
        } else {
            eprintln!("irqlab: {}", filter::recorded_line(&steps));
        }
        let files = run_files(&steps, &rec.files);
        match batch(&args, &dir, steps, &filter, &stop, &mut out) {
            Ok(Some(signal)) => return Ok(super::top::signal_exit(signal)),
            Ok(None) => replayed += 1,
            // a run that cannot be rebuilt, among others: named, the others replayed
            Err(e) if n > 1 && !e.chain().any(|c| c.is::<std::io::Error>()) => {
                eprintln!("irqlab: run {k} of {n} ({files}): the rest of it skipped: {e:#}")
            }
            // the files of a run that cannot be rebuilt
            Err(e) if !e.chain().any(|c| c.is::<std::io::Error>()) && !files.is_empty() => {
                return Err(e.context(files))
            }
            Err(e) => return Err(e),
        }
    }
    if replayed == 0 {
        anyhow::bail!(
            "{}: none of its {n} record runs could be replayed (above)",
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A numbered `record` run: its steps, or why it cannot be replayed.
enum Run {
    Steps(Vec<reader::RecordedSample>),
    Skipped { what: String, why: String },
}

impl Run {
    /// The run for messages.
    fn describe(&self) -> String {
        match self {
            Run::Steps(s) => describe(s),
            Run::Skipped { what, why } => format!("{what}: cannot be replayed: {why}"),
        }
    }
}

/// The runs of a recording, numbered in sample order (`--run N`). A run
/// whose first sample (its layout and every counter) is missing is
/// skipped, and keeps its number. An unreadable segment that no readable
/// sample continues (the next one starts a run, or none follows) is
/// counted as a run of its own, skipped: the runs after it keep their
/// numbers. One that a readable sample continues is part of that run.
fn numbered_runs(steps: Vec<reader::RecordedSample>, files: &reader::Files) -> Vec<Run> {
    let own: Vec<(u64, Run)> = files
        .unreadable
        .iter()
        .filter(|(p, _)| match steps.iter().find(|s| s.time.seq > p.last) {
            None => true,
            Some(s) => s.shape.as_ref().is_some_and(|sh| sh.run.is_some()),
        })
        .map(|(p, why)| {
            let what = format!("samples {}", span(p.first, p.last));
            let why = format!("its segment cannot be read: {why}");
            (p.first, Run::Skipped { what, why })
        })
        .collect();
    let mut all: Vec<(u64, Run)> = split_runs(steps)
        .into_iter()
        .map(|r| (r.first().map_or(0, |s| s.time.seq), with_layout(r, files)))
        .collect();
    all.extend(own);
    all.sort_by_key(|(first, _)| *first);
    all.into_iter().map(|(_, r)| r).collect()
}

/// `steps` as a run, or skipped when its first sample has no layout.
fn with_layout(steps: Vec<reader::RecordedSample>, files: &reader::Files) -> Run {
    match steps.first() {
        Some(a) if a.shape.is_none() => Run::Skipped {
            what: format!("{} ({})", describe(&steps), run_files(&steps, files)),
            why: format!(
                "sample {} has no layout (the run's first sample, which holds its layout and every counter, is not in the recording)",
                a.time.seq
            ),
        },
        _ => Run::Steps(steps),
    }
}

/// The files that hold `steps`, for messages.
fn run_files(steps: &[reader::RecordedSample], files: &reader::Files) -> String {
    let (Some(a), Some(b)) = (steps.first(), steps.last()) else {
        return String::new();
    };
    let names: Vec<String> = files
        .holding(a.time.seq, b.time.seq)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    names.join(", ")
}

/// `a–b` (one number when equal).
fn span(a: u64, b: u64) -> String {
    match a == b {
        true => a.to_string(),
        false => format!("{a}–{b}"),
    }
}

/// An error when `path` exists but is not a directory (a file given
/// where a recording is expected): `replay` and `recover` take the
/// directory `record` wrote.
pub fn refuse_non_directory(path: &std::path::Path) -> anyhow::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_dir() => anyhow::bail!(
            "{}: not a directory (a recording is a directory written by `irqlab record`)",
            path.display()
        ),
        _ => Ok(()),
    }
}

/// The steps of each `record` run (`reader::runs`), in order.
fn split_runs(mut steps: Vec<reader::RecordedSample>) -> Vec<Vec<reader::RecordedSample>> {
    let mut out: Vec<Vec<reader::RecordedSample>> = reader::runs(&steps)
        .into_iter()
        .rev()
        .map(|r| steps.split_off(r.start))
        .collect();
    out.reverse();
    out
}

/// A run for messages: its samples, start time and row filter.
fn describe(steps: &[reader::RecordedSample]) -> String {
    let (Some(a), Some(b)) = (steps.first(), steps.last()) else {
        return "no sample".into();
    };
    let filter = match filter::run_start(steps) {
        Some(r) => format!(", {}", r.describe()),
        None => String::new(),
    };
    let samples = match a.time.seq == b.time.seq {
        true => format!("sample {} (one sample: no interval)", a.time.seq),
        false => format!("samples {}–{}", a.time.seq, b.time.seq),
    };
    format!(
        "{samples} from {}{filter}",
        crate::sampler::clock::rfc3339_utc(a.time.wall_ns)
    )
}

/// `replay --batch` of one run's steps with the flags' row filter
/// `flags`: `signal` when one ended it.
fn batch(
    args: &Args,
    dir: &std::path::Path,
    steps: Vec<reader::RecordedSample>,
    flags: &Filter,
    stop: &Stop,
    out: &mut impl std::io::Write,
) -> anyhow::Result<Option<i32>> {
    let filter = &filter::replay_filter(flags, &steps);
    // the first step is the baseline; one frame per later step
    let frames = steps.len().saturating_sub(1);
    let traced = reader::Replayer::traced(&steps);
    let source = RecordingSource::at(steps.into(), 0, format!("replaying {}", dir.display()));
    // a recording made with `record --trace`: each frame's traced interval
    let mut traces = match traced {
        true => Some(TraceReplay::new(source.steps(), filter.cpus.clone())?),
        false => None,
    };
    let mut live = LiveSampler::with_source(source, filter.clone())?;
    for w in filter::warnings(&args.filter, live.latest(), live.rows_filter()) {
        eprintln!("{w}");
    }
    // the same writer and loop as `top --batch`, unpaced: every frame of
    // the run at once (flushed at the end), then `Average:`
    let opts = TextOpts {
        threshold: args.threshold,
        ..TextOpts::default()
    };
    let writer = BatchWriter::new(args.format, opts, &live, false).with_affinity(args.affinity);
    let mut pace = PacedRun::new(Duration::ZERO, End::Count(frames as u64));
    writer.run(
        &mut live,
        &mut pace,
        stop,
        &mut Traces(traces.as_mut()),
        out,
    )
}

/// A `record --trace` recording's traced interval per frame (none for
/// `Average:`: the recording keeps per-interval figures only).
struct Traces<'a>(Option<&'a mut TraceReplay>);

impl FrameTrace for Traces<'_> {
    fn frame(&mut self, frame: &Frame<'_>, _: bool) -> anyhow::Result<Option<TopTrace>> {
        let Some(t) = self.0.as_deref_mut() else {
            return Ok(None);
        };
        Ok(t.next_interval()?
            .map(|iv| top_trace::shown(&iv, frame.cur, frame.filter())))
    }
    fn whole_run(&self, _: &irqlab_core::Snapshot, _: &Filter) -> Option<TopTrace> {
        None
    }
}

/// The replay screen: the App of live `top` (its flags checked before the
/// screen is taken) fed by a [`Player`].
fn interactive(
    args: &Args,
    dir: PathBuf,
    steps: Vec<reader::RecordedSample>,
    files: String,
) -> anyhow::Result<ExitCode> {
    if steps.len() < 2 {
        anyhow::bail!("{}: one sample only; rates need two", dir.display());
    }
    // the CPUs the run recorded, unless the flags name CPUs
    let recorded = filter::recorded_cpus(&steps).map(|c| CpuList::from_cpus(c).to_string());
    let cfg = TuiConfig {
        root: dir.clone(),
        interval: median_interval(&steps),
        irq: args.filter.irq.clone(),
        exclude: args.filter.exclude.clone(),
        cpus: args.filter.cpus.clone().or(recorded),
        strategy: Choice::Auto,
        sort: SortKey::Rate,
        threshold: args.threshold,
        verbose: true,
    };
    let app = crate::tui::initial_app(&cfg, crate::tui::color_enabled())?;
    let name = dir.display().to_string();
    let filter = Filter {
        cpus: None,
        ..app.filter.clone()
    };
    let recorded_line = format!("irqlab: {}", filter::recorded_line(&steps));
    // a run that cannot be rebuilt: named by its files
    let player = Player::new(steps.into(), name, filter).map_err(|e| match files.is_empty() {
        true => e,
        false => e.context(files),
    })?;
    let warnings = |snap: &irqlab_core::Snapshot, rows: &Filter| {
        let mut w = vec![recorded_line.clone()];
        w.extend(filter::warnings(&args.filter, snap, rows));
        w
    };
    let signal = crate::tui::replay::run(app, player, &warnings)?;
    Ok(signal.map_or(ExitCode::SUCCESS, super::top::signal_exit))
}

/// The recording's typical interval (the status line's "every").
fn median_interval(steps: &[reader::RecordedSample]) -> Duration {
    let mut d: Vec<u64> = steps
        .windows(2)
        .filter_map(|w| match w {
            [a, b] => Some(b.time.mono_ns.saturating_sub(a.time.mono_ns)),
            _ => None,
        })
        .collect();
    d.sort_unstable();
    let ns = d.get(d.len() / 2).copied().unwrap_or(1_000_000_000);
    Duration::from_nanos(ns).max(Duration::from_millis(10))
}
