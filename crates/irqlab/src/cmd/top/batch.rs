//! `irqlab top --batch`: one block of text lines or one JSON object per
//! interval on stdout, flushed at once, for scripts and logs. Never reads
//! stdin and needs no terminal; a closed stdout ends the run quietly
//! (main treats a broken pipe as success). Filters that select nothing
//! are said on stderr at start (`crate::filter::warnings`), as in `show`.
//!
//! Frames come from the [`LiveSampler`]; text blocks go through
//! `report::rates` (no affinity: text does not print it) and
//! `text.rs`, JSON lines (README "JSON Lines")
//! stream from the frame through `export::jsonl` (no Report per sample).
//! Text ends with an `Average:` block over the whole run, also when
//! SIGINT/SIGTERM ends it (exit 130/143, as `bench`). `--trace` (see
//! `trace.rs`) reads the eBPF maps right after each frame and adds a
//! `trace` object to JSON lines and `TRACE` lines to text blocks (the
//! `Average:` ones over the whole run); with it off the loop does nothing
//! more.

use super::text::{self, Block, TextOpts};
use super::trace_text;
use super::{Args, BatchFormat};
use crate::export::jsonl::JsonlWriter;
use crate::filter::Filter;
use crate::report::{self, RateOpts};
use crate::sampler::{clock, LiveSampler, SelfCost, Stop, Strategy, Ticker};
use crate::trace::top as top_trace;
use crate::trace::top::TopTrace;
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
}

impl Summary {
    fn write(
        &self,
        latest: &Snapshot,
        opts: &TextOpts,
        traced: Option<&TopTrace>,
        out: &mut impl Write,
    ) -> anyhow::Result<()> {
        if self.samples == 0 {
            return Ok(());
        }
        let report = report::rates(&self.first, latest, &self.filter, RateOpts::default());
        let n = self.samples;
        let c = &self.cost;
        let mean = SelfCost {
            user_ns: c.user_ns / n,
            system_ns: c.system_ns / n,
            cpu_ns: c.cpu_ns / n,
            wall_ns: c.wall_ns / n,
        };
        let b = Block {
            stamp: "Average:",
            report: &report,
            threads: &[],
            self_cost: mean,
            strategy: self.strategy,
        };
        text::write_block(&b, opts, out)?;
        if let Some(tt) = traced {
            trace_text::write_trace(b.stamp, &report, opts, tt, out)?;
        }
        Ok(())
    }
}

/// Run the batch loop: baseline sample, then `--count` intervals.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let plan = args.plan()?;
    // --trace: attach first, then take both baselines back to back
    let mut tracing = match args.trace {
        true => Some(tracing_start(&plan)?),
        false => None,
    };
    let mut live = LiveSampler::open(&plan)?;
    if let Some(t) = tracing.as_mut() {
        t.tick()?;
    }
    if args.verbose {
        eprintln!("irqlab: {}", live.why());
        eprintln!("irqlab: {} interrupt threads tracked", live.thread_count());
    }
    for m in live.missing() {
        eprintln!("irqlab: note: not shown: {m}");
    }
    let warnings = crate::filter::warnings::snapshot_warnings(
        args.cpus.as_deref(),
        args.irq.as_deref(),
        live.latest(),
        live.rows_filter(),
    );
    for w in warnings {
        eprintln!("{w}");
    }
    let stop = Stop::install()?;
    if tracing.is_some() {
        // the loop ends on a signal and prints Average: before the
        // session detaches and unmounts
        crate::guard::defer_signals(top_trace::SIGNAL_GRACE);
    }
    let opts = TextOpts {
        sort: args.sort.into(),
        threshold: args.threshold,
        verbose: args.verbose,
    };
    let mut summary = (args.format == BatchFormat::Text).then(|| Summary {
        first: live.latest().clone(),
        filter: live.filter().clone(),
        cost: SelfCost::default(),
        samples: 0,
        strategy: live.strategy(),
    });
    // Real write errors: a closed stdout (EPIPE) fails the first write
    // and `?` ends the loop; /dev/null is a sink (see `export::stdout`).
    let mut out = crate::export::stdout::stdout();
    let mut ticker = Ticker::new(args.interval);
    let mut jsonl = JsonlWriter::default();
    let mut buf = Vec::new();
    let mut signal = None;
    let mut done = 0u64;
    while args.count.is_none_or(|c| done < c) {
        if let Some(s) = ticker.wait_stop(&stop) {
            signal = Some(s);
            break;
        }
        let mut frame = live.next_frame()?;
        let traced = match tracing.as_mut() {
            Some(t) => Some(top_trace::tick(t, frame.cur, frame.filter())?),
            None => None,
        };
        match summary.as_mut() {
            None => {
                jsonl.write_frame(&mut frame, traced.as_ref(), &mut buf);
            }
            Some(sum) => {
                // text prints no affinity: no affinity reads (~1 file per
                // IRQ at the first frame) and no String per row per sample
                let report =
                    report::rates(frame.prev, frame.cur, frame.filter(), RateOpts::default());
                let stamp = clock::rfc3339_utc(frame.cur.wall_ns);
                let b = Block {
                    stamp: stamp.get(11..23).unwrap_or(&stamp),
                    report: &report,
                    threads: frame.threads,
                    self_cost: frame.self_cost(),
                    strategy: frame.strategy,
                };
                buf.clear();
                text::write_block(&b, &opts, &mut buf)?;
                if let Some(tt) = &traced {
                    trace_text::write_trace(b.stamp, &report, &opts, tt, &mut buf)?;
                }
                sum.cost += b.self_cost;
                sum.samples += 1;
            }
        }
        out.write_all(&buf)?;
        out.flush()?;
        done += 1;
    }
    if let Some(sum) = summary.as_mut() {
        sum.filter = live.rows_filter().clone();
        sum.strategy = live.strategy();
        let traced = tracing
            .as_ref()
            .map(|t| top_trace::whole_run(t, live.latest(), &sum.filter));
        buf.clear();
        sum.write(live.latest(), &opts, traced.as_ref(), &mut buf)?;
        out.write_all(&buf)?;
        out.flush()?;
    }
    drop(tracing); // detach, unmount (if mounted), before the exit code
    Ok(signal.map_or(ExitCode::SUCCESS, super::signal_exit))
}

/// `--trace`: attach, notes on stderr.
fn tracing_start(plan: &crate::sampler::LivePlan) -> anyhow::Result<top_trace::Tracing> {
    let (t, notes) = top_trace::start(&plan.root, &plan.filter)?;
    for n in notes {
        eprintln!("irqlab: note: trace: {n}");
    }
    Ok(t)
}
