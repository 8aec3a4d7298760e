//! `irqlab top --batch`: one block of text lines or one JSON object per
//! interval on stdout, flushed at once, for scripts and logs. Never reads
//! stdin and needs no terminal; a closed stdout ends the run quietly
//! (main treats a broken pipe as success).
//!
//! Owns the JSON Lines contract (README "top --batch"); numbers come from
//! [`Frame`](super::live::Frame) (rates via `report::from_delta`).

use super::live::{Frame, Live};
use super::{Args, BatchFormat};
use crate::report::{CpuPctLine, Filter, IrqSection, SoftirqSection};
use crate::sampler::clock::rfc3339_utc;
use crate::sampler::{SelfCost, Strategy, Ticker};
use crate::threads::ThreadCpu;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// One JSON Lines record.
#[derive(Serialize)]
struct JsonLine<'a> {
    /// RFC 3339 UTC wall time of the later sample.
    timestamp: String,
    /// CLOCK_MONOTONIC ns of the later sample.
    mono_ns: u64,
    /// Measured seconds between the two samples.
    interval_s: f64,
    interrupts: Option<&'a IrqSection>,
    softirqs: Option<&'a SoftirqSection>,
    cpu_pct: &'a [CpuPctLine],
    threads: &'a [ThreadCpu],
    self_cost: SelfCost,
    strategy: Strategy,
}

/// Write `frame` as one JSON object and a newline, serialized into `buf`
/// first so the line goes out in one write (and a closed pipe surfaces as
/// an `io::Error`, which main treats as a quiet end).
pub fn write_json(frame: &Frame, buf: &mut Vec<u8>, out: &mut impl Write) -> anyhow::Result<()> {
    let r = &frame.report;
    let line = JsonLine {
        timestamp: rfc3339_utc(frame.wall_ns),
        mono_ns: frame.mono_ns,
        interval_s: r.interval_s.unwrap_or(0.0),
        interrupts: r.interrupts.as_ref(),
        softirqs: r.softirqs.as_ref(),
        cpu_pct: r.stat.as_ref().map_or(&[], |s| s.cpu_pct.as_slice()),
        threads: &frame.threads,
        self_cost: frame.self_cost,
        strategy: frame.strategy,
    };
    buf.clear();
    serde_json::to_writer(&mut *buf, &line)?;
    buf.push(b'\n');
    out.write_all(buf)?;
    Ok(())
}

/// Run the batch loop: baseline sample, then `--count` intervals.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let filter = Filter::from_flags(args.irq.as_deref(), args.cpus.as_deref())?;
    let mut live = Live::start(&args.root, filter, args.strategy)?;
    if args.verbose {
        eprintln!("irqlab: {}", live.why);
        eprintln!("irqlab: {} interrupt threads tracked", live.thread_count());
    }
    for m in live.missing() {
        eprintln!("irqlab: note: not shown: {m}");
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut ticker = Ticker::new(args.interval);
    let mut done = 0u64;
    let mut buf = Vec::new();
    while args.count.is_none_or(|c| done < c) {
        ticker.wait();
        let frame = live.next()?;
        match args.format {
            BatchFormat::Json => write_json(&frame, &mut buf, &mut out)?,
            BatchFormat::Text => super::text::write_frame(&frame, args.verbose, &mut out)?,
        }
        out.flush()?;
        done += 1;
    }
    Ok(ExitCode::SUCCESS)
}
