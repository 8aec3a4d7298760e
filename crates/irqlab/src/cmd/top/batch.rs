//! `irqlab top --batch`: one block of text lines or one JSON object per
//! interval on stdout, flushed at once, for scripts and logs. Never reads
//! stdin and needs no terminal; a closed stdout ends the run quietly
//! (main treats a broken pipe as success).
//!
//! Text lines come from [`Frame`](super::live::Frame) (rates via
//! `report::from_delta_rates`); JSON lines (README "JSON Lines") from
//! `Live::next_json`, which streams them with `export::jsonl`.

use super::live::Live;
use super::{Args, BatchFormat};
use crate::report::Filter;
use crate::sampler::Ticker;
use std::io::Write;
use std::process::ExitCode;

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
    // Real write errors: a closed stdout (`>&-`, EPIPE) fails the first
    // write and `?` ends the loop (see `export::stdout`).
    let mut out = crate::export::stdout::stdout();
    let mut ticker = Ticker::new(args.interval);
    let mut done = 0u64;
    let mut buf = Vec::new();
    while args.count.is_none_or(|c| done < c) {
        ticker.wait();
        match args.format {
            BatchFormat::Json => {
                live.next_json(&mut buf)?;
                out.write_all(&buf)?;
            }
            BatchFormat::Text => {
                let frame = live.next_frame()?;
                super::text::write_frame(&frame, args.verbose, &mut out)?;
            }
        }
        out.flush()?;
        done += 1;
    }
    Ok(ExitCode::SUCCESS)
}
