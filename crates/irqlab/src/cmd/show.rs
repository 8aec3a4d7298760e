//! `irqlab show`: one snapshot of interrupts, softirqs and CPU time, or
//! rates over `--interval`. Reads through the sampler (HostFs), so
//! `--root` works on any captured or synthesized tree.

use crate::export::{self, Format};
use crate::host::HostFs;
use crate::report::{self, Filter};
use crate::sampler::strategy::Choice;
use crate::sampler::{LivePlan, LiveSampler, Sampler, Source, Ticker};
use irqlab_core::Snapshot;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags of `irqlab show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read a captured tree (sosreport, `irqlab synth` output) instead of `/`.
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Show rates over this interval (e.g. `1s`, `250ms`) instead of counts.
    #[arg(long, short = 'i', value_parser = crate::cmd::parse_duration)]
    pub interval: Option<Duration>,
    /// Keep only rows whose label, chip, actions or description match.
    #[arg(long)]
    pub irq: Option<String>,
    /// Keep only these CPUs (e.g. `0-3,8`).
    #[arg(long)]
    pub cpus: Option<String>,
}

/// One snapshot (counts since boot).
fn snapshot_report(root: &std::path::Path, filter: &Filter) -> anyhow::Result<report::Report> {
    let mut sampler = Sampler::new(HostFs::new(root), &Source::ALL);
    let mut first = Snapshot::default();
    sampler.sample(&mut first)?;
    for (src, why) in &sampler.missing {
        eprintln!(
            "irqlab: note: {} not shown: {why}",
            sampler.fs().path(src.rel()).display()
        );
    }
    drop(sampler); // frees the read buffers before the report is built
    let mut report = report::from_snapshot(first, filter);
    annotate_affinity(&mut report, &HostFs::new(root));
    Ok(report)
}

/// Rates over `iv`: one frame of the live sampler (the kernel's own rows:
/// the full `/proc/interrupts`), with affinity from its metadata.
fn interval_report(
    root: &std::path::Path,
    filter: Filter,
    iv: Duration,
) -> anyhow::Result<report::Report> {
    let plan = LivePlan {
        root: root.to_path_buf(),
        filter,
        strategy: Choice::ProcInterrupts,
    };
    let mut live = LiveSampler::open(&plan)?;
    for m in live.missing() {
        eprintln!("irqlab: note: not shown: {m}");
    }
    let mut ticker = Ticker::new(iv);
    ticker.wait();
    let mut frame = live.next_frame()?;
    let mut report = report::from_delta(frame.prev, frame.cur, frame.filter());
    report::annotate_affinity(&mut report, &mut frame);
    Ok(report)
}

/// Effective (else configured) affinity of every numbered row, from
/// `/proc/irq/N/` when the tree has it.
fn annotate_affinity(report: &mut report::Report, fs: &HostFs) {
    let Some(sec) = report.interrupts.as_mut() else {
        return;
    };
    for row in &mut sec.rows {
        if let Some(irq) = row.irq {
            row.affinity = crate::sampler::targeted::read_affinity(fs, irq);
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let filter = Filter::from_flags(args.irq.as_deref(), args.cpus.as_deref())?;
    let report = match args.interval {
        None => snapshot_report(&args.root, &filter)?,
        Some(iv) => interval_report(&args.root, filter, iv)?,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Table => export::table::write(&report, &mut out)?,
        Format::Json => export::json::write(&report, &mut out)?,
        Format::Csv => export::csv::write(&report, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
