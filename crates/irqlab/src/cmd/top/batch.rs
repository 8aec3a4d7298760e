//! `irqlab top --batch`: one block of text lines or one JSON object per
//! interval on stdout, flushed at once, for scripts and logs. Never reads
//! stdin and needs no terminal; a closed stdout ends the run quietly
//! (main treats a broken pipe as success). Filters that select nothing
//! are said on stderr at start (`crate::filter::warnings`), as in `show`.
//!
//! [`BatchWriter`] is the frame-to-output writer of both `top --batch`
//! and `replay --batch` (`cmd/replay.rs`), and runs their loop on a
//! [`PacedRun`]. Frames come from the [`LiveSampler`]; text blocks go through
//! `report::ReusedRates` (the rates text prints, rebuilt in place; no
//! affinity: text does not print it) and
//! `report::text_block`, JSON lines (README "JSON Lines")
//! stream from the frame through `export::jsonl` (no Report per sample).
//! Text ends with an `Average:` block over the whole run, also when
//! SIGINT/SIGTERM ends it (exit 130/143, as `bench`; also when caught
//! after the last frame, while `--trace` detaches). `--trace` (see
//! `trace.rs`) reads the eBPF maps right after each frame and adds a
//! `trace` object to JSON lines and `TRACE` lines to text blocks (the
//! `Average:` ones over the whole run); with it off the loop does nothing
//! more. With it, a signal between frames first takes one more frame, the
//! interval it cut short, whose maps read is closing (every kernel file
//! read, docs/trace.md): its figures and `Average:` hold every run no
//! program saw.

use super::trace_text;
use super::{Args, BatchFormat};
use crate::cmd::args::MIN_INTERVAL;
use crate::export::jsonl::JsonlWriter;
use crate::filter::Filter;
use crate::report;
use crate::report::text_block::{self, Block, TextOpts};
use crate::sampler::host_source::Resolved;
use crate::sampler::{
    clock, End, Frame, LiveSampler, PacedRun, SelfCost, SnapshotSource, Stop, Strategy, Tick,
};
use crate::threads::{self, ThreadCpu};
use crate::trace::top::{self as top_trace, TopTrace};
use irqlab_core::Snapshot;
use std::io::Write;
use std::process::ExitCode;

/// What the `Average:` block needs: the baseline, the filter of the rows
/// read, self-cost over all samples.
struct Summary {
    first: Snapshot,
    /// The rows filter of the latest frame (set at the end).
    filter: Filter,
    cost: SelfCost,
    samples: u64,
    strategy: Strategy,
    /// Each frame's rates, rebuilt in place (then the whole run's).
    report: report::ReusedRates,
    /// After exactly one frame: that frame's strategy. The run's
    /// `Average:` is then over the same two snapshots with the same rows
    /// filter (the filter follows the strategy), so the frame's rates
    /// (still in `report`) are not computed again.
    single: Option<Strategy>,
    /// The interrupt threads' cumulative CPU time at the baseline: their
    /// `Average:` lines are their shares from there to the last sample.
    first_threads: Vec<ThreadCpu>,
}

impl Summary {
    fn write(
        &mut self,
        latest: &Snapshot,
        latest_threads: &[ThreadCpu],
        opts: &TextOpts,
        traced: Option<&TopTrace>,
        out: &mut Vec<u8>,
    ) -> anyhow::Result<()> {
        if self.samples == 0 {
            return Ok(());
        }
        let threads = self.threads_over_the_run(latest.mono_ns, latest_threads);
        let report = match &self.single {
            Some(strategy) if self.samples == 1 && *strategy == self.strategy => &self.report,
            _ => self.report.update(&self.first, latest, &self.filter),
        };
        let n = self.samples;
        let c = &self.cost;
        let mean = SelfCost {
            user_ns: c.user_ns / n,
            system_ns: c.system_ns / n,
            cpu_ns: c.cpu_ns / n,
            wall_ns: c.wall_ns / n,
        };
        let b = Block {
            stamp: text_block::AVERAGE,
            rates: report,
            threads: &threads,
            self_cost: mean,
            strategy: self.strategy,
        };
        text_block::write_block(&b, opts, out)?;
        if let Some(tt) = traced {
            trace_text::write_trace(b.stamp, report, tt, out)?;
        }
        Ok(())
    }

    /// Each interrupt thread read at the baseline and at the last sample
    /// (`latest`, at `mono_ns`) with its share of one CPU between them,
    /// as pidstat's `Average:`; no last CPU (a run has none). A thread
    /// that started or ended during the run has none (a gap).
    fn threads_over_the_run(&self, mono_ns: u64, latest: &[ThreadCpu]) -> Vec<ThreadCpu> {
        let first = (&self.first_threads[..], self.first.mono_ns);
        let mut out = threads::shares_between(first, (latest, mono_ns));
        for t in &mut out {
            t.last_cpu = None;
        }
        out
    }
}

/// The traced time a batch run adds to each frame and to `Average:`:
/// live eBPF maps (`top --batch --trace`) or a recording's `trace` rows
/// (`replay --batch`).
pub trait FrameTrace {
    /// The frame's traced interval, read right after the frame; `last`:
    /// the run's last frame (its interval, and so `Average:`'s, must hold
    /// every run no program saw).
    fn frame(&mut self, frame: &Frame<'_>, last: bool) -> anyhow::Result<Option<TopTrace>>;
    /// The whole run's, for `Average:` (`None`: not known).
    fn whole_run(&self, latest: &Snapshot, filter: &Filter) -> Option<TopTrace>;
    /// Whether a signal between frames ends the run with one more frame,
    /// the interval it cut short, so that the run's last read is closing
    /// (a live session; a recording's frames are what was recorded).
    fn frame_on_signal(&self) -> bool {
        false
    }
}

/// No tracing.
impl FrameTrace for () {
    fn frame(&mut self, _: &Frame<'_>, _: bool) -> anyhow::Result<Option<TopTrace>> {
        Ok(None)
    }
    fn whole_run(&self, _: &Snapshot, _: &Filter) -> Option<TopTrace> {
        None
    }
}

impl FrameTrace for top_trace::Tracing {
    fn frame(&mut self, frame: &Frame<'_>, last: bool) -> anyhow::Result<Option<TopTrace>> {
        top_trace::tick(self, frame.cur, frame.filter(), last).map(Some)
    }
    fn whole_run(&self, latest: &Snapshot, filter: &Filter) -> Option<TopTrace> {
        Some(top_trace::whole_run(self, latest, filter))
    }
    fn frame_on_signal(&self) -> bool {
        true
    }
}

/// THE frame-to-output writer of `top --batch` and `replay --batch`: a
/// text block (the Report and `report::text_block`) or a JSON line
/// (`export::jsonl`) per frame, and for text the `Average:` block over
/// the whole run at the end.
pub struct BatchWriter {
    opts: TextOpts,
    /// Text: what `Average:` needs; `None` for JSON Lines.
    summary: Option<Summary>,
    jsonl: JsonlWriter,
    /// JSON: numbered rows carry `affinity` (`--affinity`).
    affinity: bool,
    buf: Vec<u8>,
    /// Flush after every frame (live runs: each interval shows at once).
    flush_each: bool,
    /// Frames written so far.
    frames: u64,
}

impl BatchWriter {
    /// A writer whose `Average:` starts at `live`'s baseline.
    pub fn new<S: SnapshotSource>(
        format: BatchFormat,
        opts: TextOpts,
        live: &LiveSampler<S>,
        flush_each: bool,
    ) -> BatchWriter {
        BatchWriter {
            opts,
            summary: (format == BatchFormat::Text).then(|| Summary {
                first_threads: {
                    let mut t = Vec::new();
                    live.thread_totals(&mut t);
                    t
                },
                first: live.latest().clone(),
                filter: live.filter().clone(),
                cost: SelfCost::default(),
                samples: 0,
                strategy: live.strategy(),
                report: report::ReusedRates::new(opts.sort, opts.threshold),
                single: None,
            }),
            jsonl: JsonlWriter::with_threshold(opts.threshold),
            affinity: false,
            buf: Vec::new(),
            flush_each,
            frames: 0,
        }
    }

    /// JSON lines whose numbered rows carry `affinity` (`--affinity`);
    /// without it no affinity is asked of the frame, so none is read.
    pub fn with_affinity(mut self, affinity: bool) -> BatchWriter {
        self.affinity = affinity;
        self
    }

    /// How many frames (intervals) were written.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Write one frame (and its traced interval) to `out`.
    fn frame(
        &mut self,
        frame: &mut Frame<'_>,
        traced: Option<&TopTrace>,
        out: &mut impl Write,
    ) -> anyhow::Result<()> {
        let buf = &mut self.buf;
        let line: &[u8] = match self.summary.as_mut() {
            // JSON: the writer's own line (written over the last one)
            None => self.jsonl.frame_line(frame, traced, self.affinity),
            Some(sum) => {
                // text prints no affinity: no affinity reads (~1 file per
                // IRQ at the first frame) and no String per row per sample
                let report = sum.report.update(frame.prev, frame.cur, frame.filter());
                let stamp = clock::MillisStamp::of(frame.cur.wall_ns);
                let stamp = stamp.as_str();
                let b = Block {
                    stamp: stamp.get(11..23).unwrap_or(stamp),
                    rates: report,
                    threads: frame.threads,
                    self_cost: frame.self_cost(),
                    strategy: frame.strategy,
                };
                buf.clear();
                text_block::write_block(&b, &self.opts, buf)?;
                if let Some(tt) = traced {
                    trace_text::write_trace(b.stamp, report, tt, buf)?;
                }
                sum.cost += b.self_cost;
                sum.samples += 1;
                let strategy = b.strategy;
                sum.single = (sum.samples == 1).then_some(strategy);
                buf
            }
        };
        out.write_all(line)?;
        self.frames += 1;
        if self.flush_each {
            out.flush()?;
        }
        Ok(())
    }

    /// Text: the `Average:` block over the run (nothing for JSON Lines,
    /// or when no frame was written); then flush.
    fn finish<S: SnapshotSource>(
        &mut self,
        live: &LiveSampler<S>,
        trace: &impl FrameTrace,
        out: &mut impl Write,
    ) -> anyhow::Result<()> {
        if let Some(sum) = self.summary.as_mut() {
            sum.filter = live.rows_filter().clone();
            sum.strategy = live.strategy();
            let traced = trace.whole_run(live.latest(), &sum.filter);
            let mut latest_threads = Vec::new();
            live.thread_totals(&mut latest_threads);
            self.buf.clear();
            let latest = live.latest();
            sum.write(
                latest,
                &latest_threads,
                &self.opts,
                traced.as_ref(),
                &mut self.buf,
            )?;
            out.write_all(&self.buf)?;
        }
        out.flush()?;
        Ok(())
    }

    /// The batch run of `top --batch` and `replay --batch`: a frame per
    /// tick of `pace` until it ends or `stop` catches a signal (returned),
    /// each written through this writer, then `Average:`. The run's last
    /// frame reads its trace closing: the last by count, or with live
    /// tracing ([`FrameTrace::frame_on_signal`]) one more frame that ends
    /// the interval a signal cut short, at least [`MIN_INTERVAL`] after
    /// the frame before (the shortest `-i`: it waits out the rest).
    pub fn run<S: SnapshotSource>(
        mut self,
        live: &mut LiveSampler<S>,
        pace: &mut PacedRun,
        stop: &Stop,
        trace: &mut impl FrameTrace,
        out: &mut impl Write,
    ) -> anyhow::Result<Option<i32>> {
        self.run_in_place(live, pace, stop, trace, out)
    }

    /// [`BatchWriter::run`] leaving the writer to the caller.
    fn run_in_place<S: SnapshotSource>(
        &mut self,
        live: &mut LiveSampler<S>,
        pace: &mut PacedRun,
        stop: &Stop,
        trace: &mut impl FrameTrace,
        out: &mut impl Write,
    ) -> anyhow::Result<Option<i32>> {
        // this thread only samples, writes and sleeps: one thread-clock
        // read per sample
        live.chain_meters();
        let signal = loop {
            let (closing, signal) = match pace.wait(stop) {
                Tick::Due => (pace.was_last(), None),
                // a signal caught in the last frame by count adds none
                Tick::End => break stop.caught(),
                Tick::Signal(s) if trace.frame_on_signal() => {
                    pace.wait_out(MIN_INTERVAL);
                    (true, Some(s))
                }
                Tick::Signal(s) => break Some(s),
            };
            let mut frame = live.next_frame()?;
            let traced = trace.frame(&frame, closing)?;
            self.frame(&mut frame, traced.as_ref(), out)?;
            // an affinity file that is not a CPU list (read once per IRQ)
            for n in live.take_notes() {
                eprintln!("irqlab: note: {n}");
            }
            if signal.is_some() {
                break signal;
            }
        };
        self.finish(live, trace, out)?;
        Ok(signal)
    }
}

/// Run the batch loop: baseline sample, then `--count` intervals;
/// `resolved`: the reader `--strategy per-cpu-count` resolved at start.
/// `stop` is installed before anything else: a background job of a
/// non-interactive shell starts with SIGINT ignored, and a signal while
/// the run starts (attaching, the baseline, notes on a full stderr) would
/// be lost, or kill the run (SIGTERM) without its exit code; caught, it
/// ends the run at the first tick (exit 128 + signal, `Average:` when a
/// frame was written, else a note on stderr that nothing was measured).
pub fn run(args: &Args, resolved: Option<Resolved>, stop: &Stop) -> anyhow::Result<ExitCode> {
    let plan = args.plan()?;
    if args.trace {
        // the loop ends on a signal (also one while attaching) and prints
        // Average: before the session detaches and unmounts
        crate::guard::defer_signals(top_trace::SIGNAL_GRACE);
    }
    // --trace: attach first, then take both baselines back to back
    let mut tracing = match args.trace {
        true => Some(tracing_start(&plan)?),
        false => None,
    };
    let mut live = LiveSampler::open_resolved(&plan, resolved)?;
    if let Some(t) = tracing.as_mut() {
        t.tick()?;
    }
    if args.verbose {
        eprintln!("irqlab: {}", live.why());
        eprintln!("irqlab: {} interrupt threads tracked", live.thread_count());
    }
    for m in live.missing() {
        eprintln!(
            "irqlab: note: {}",
            crate::sampler::not_read_yet("shown", &m)
        );
    }
    args.filter.warn_about(live.latest(), live.rows_filter());
    if let Some(note) = crate::filter::warnings::snapshot_disagreement(&plan.root, live.latest()) {
        eprintln!("{note}");
    }
    let opts = TextOpts {
        sort: args.sort.into(),
        threshold: args.threshold,
        verbose: args.verbose,
    };
    let mut writer = BatchWriter::new(args.format, opts, &live, true).with_affinity(args.affinity);
    // Real write errors: a closed stdout (EPIPE) fails the first write
    // and `?` ends the loop; /dev/null is a sink (see `export::stdout`).
    // Unbuffered: each frame (and `Average:`) is one block, written whole.
    let mut out = crate::export::stdout::unbuffered();
    let mut pace = PacedRun::new(args.interval, End::of(args.count, None));
    let signal = match tracing.as_mut() {
        Some(t) => writer.run_in_place(&mut live, &mut pace, stop, t, &mut out)?,
        None => writer.run_in_place(&mut live, &mut pace, stop, &mut (), &mut out)?,
    };
    // detach, unmount (if mounted), before the exit code: a signal caught
    // meanwhile still ends the run as a signal does
    drop(tracing);
    let signal = signal.or_else(|| stop.caught());
    if let (Some(sig), 0) = (signal, writer.frames()) {
        eprintln!("{}", nothing_measured(sig, args.interval));
    }
    // All is written and the process ends next: the sampler's snapshots,
    // kept descriptors and buffers and the writer's row caches go with it.
    // Freeing them row by row and closing each kept file was ~5 % of a
    // 1-sample run's instructions and a syscall per file; nothing in them
    // acts on drop.
    std::mem::forget((live, writer));
    Ok(signal.map_or(ExitCode::SUCCESS, super::signal_exit))
}

/// What a signal that ended the run before its first interval did says
/// on stderr (stdout stays empty: no interval was measured, so no line
/// and no `Average:`).
fn nothing_measured(sig: i32, interval: std::time::Duration) -> String {
    format!(
        "irqlab: {} before the first interval (-i {}) ended: nothing measured",
        crate::bench::runner::signal_name(sig),
        humantime::format_duration(interval)
    )
}

/// `--trace`: attach, notes on stderr.
fn tracing_start(plan: &crate::sampler::LivePlan) -> anyhow::Result<top_trace::Tracing> {
    let (t, notes) = top_trace::start(&plan.root, &plan.filter)?;
    for n in notes {
        eprintln!("irqlab: note: trace: {n}");
    }
    Ok(t)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::trace::interval::IntervalView;
    use crate::trace::live_trace::tests::{Closing, SignalAfter};
    use crate::trace::live_trace::{LiveTrace, TraceSession};

    /// [`batch_run`] traced by `session`.
    fn traced_run(
        end: End,
        stop: &Stop,
        session: impl TraceSession + 'static,
    ) -> (Option<i32>, String) {
        let mut t = LiveTrace::new(Box::new(session), IntervalView::default()).unwrap();
        batch_run(end, stop, &mut t)
    }

    /// A text run of the small test tree, unpaced, ending at `end` or a
    /// signal on `stop`, with `trace`: the signal returned and the text
    /// written.
    fn batch_run(end: End, stop: &Stop, trace: &mut impl FrameTrace) -> (Option<i32>, String) {
        let d = crate::host::small_test_tree();
        let mut live = LiveSampler::open(&crate::sampler::LivePlan {
            root: d.path().to_path_buf(),
            filter: Filter::default(),
            strategy: Default::default(),
        })
        .unwrap();
        let writer = BatchWriter::new(BatchFormat::Text, TextOpts::default(), &live, false);
        let mut pace = PacedRun::new(std::time::Duration::ZERO, end);
        let mut out = Vec::new();
        let signal = writer.run(&mut live, &mut pace, stop, trace, &mut out);
        (signal.unwrap(), String::from_utf8(out).unwrap())
    }

    /// The trace read of the run's last frame is closing, the others not.
    #[test]
    fn the_last_frames_trace_read_is_closing() {
        let log = Closing::default();
        let (signal, text) = traced_run(End::Count(3), &Stop::unhooked(), log.clone());
        assert_eq!(signal, None);
        assert_eq!(
            log.reads(),
            [false, false, false, true],
            "baseline, 3 frames"
        );
        assert!(text.contains("Average:"), "{text}");
    }

    /// A signal between two frames of a live traced run ends it with one
    /// more frame, the interval it cut short, read closing (so `Average:`
    /// holds every run no program saw); caught before the first frame, it
    /// is the only frame. A signal caught after the last frame by count
    /// adds none.
    #[test]
    fn a_signal_between_frames_ends_with_a_closing_frame() {
        let sigint = signal_hook::consts::SIGINT;
        // (end, the reads after which the signal is caught, the reads)
        type When = fn(&[bool]) -> bool;
        let runs: [(End, When, &[bool]); 3] = [
            (End::Never, |r| r.len() == 3, &[false, false, false, true]),
            (End::Never, |r| r.len() == 1, &[false, true]),
            (
                End::Count(2),
                |r| r.last() == Some(&true),
                &[false, false, true],
            ),
        ];
        for (end, when, reads) in runs {
            let stop = Stop::unhooked();
            let log = Closing::default();
            let session = SignalAfter {
                log: log.clone(),
                stop: stop.clone(),
                when,
            };
            let (signal, text) = traced_run(end, &stop, session);
            assert_eq!(signal, Some(sigint));
            assert_eq!(log.reads(), reads, "{end:?}");
            let frames = reads.len() - 1;
            assert_eq!(
                text.matches(" SUM ").count(),
                frames + 1,
                "and Average: {text}"
            );
            assert!(text.contains("Average:  TRACE CPU"), "{text}");
        }
    }

    /// Without live tracing a signal adds no frame (as mpstat): `Average:`
    /// ends at the frame before.
    #[test]
    fn an_untraced_run_ends_at_the_frame_before_a_signal() {
        let stop = Stop::unhooked();
        stop.catch(signal_hook::consts::SIGINT);
        let (signal, text) = batch_run(End::Never, &stop, &mut ());
        assert_eq!(signal, Some(signal_hook::consts::SIGINT));
        assert!(text.is_empty(), "no frame, so no Average: {text}");
    }
}
